/*
 * learned.c - learned windows with the week's quarter-hours worked out
 * once (learned.h).  The rule is core/observed.h's: a quarter-hour of a
 * week counts when the state in force at its start is "deallocated" and
 * every observation inside it says the same; one whose end does not come
 * after its start (a clock change's gap) never counts; a quarter-hour is
 * learned when it counts in at least MIN_WEEKS of the weeks; the windows
 * are the runs of learned quarter-hours, a run over Sunday midnight one.
 */
#include "service/learned.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"

#define SLOTS (TW_WEEK_MIN / TW_OBSERVED_SLOT_MIN) /* 672 */

struct tw_learn_plan {
    int weeks, min_weeks;
    char tz[TW_TZ_NAME_MAX];
    int64_t *bound;              /* WEEKS x (SLOTS + 1) instants: week w's slot s is
                                  * [bound[w][s], bound[w][s + 1]) */
};

void tw_learn_plan_free(struct tw_learn_plan *p)
{
    if (p) {
        free(p->bound);
        free(p);
    }
}

enum tw_err tw_learn_plan_make(const struct tw_tz *z, int64_t until_ns, int weeks,
                               int min_weeks, struct tw_learn_plan **out, struct tw_error *err)
{
    *out = NULL;
    if (!z)
        return tw_error_set(err, TW_EINVAL, "learned windows: no zone");
    if (weeks < 1 || weeks > TW_OBSERVED_WEEKS_MAX)
        return tw_error_set(err, TW_EINVAL, "learned windows: weeks must be 1 to %d, got %d",
                            TW_OBSERVED_WEEKS_MAX, weeks);
    if (min_weeks < 1 || min_weeks > weeks)
        return tw_error_set(err, TW_EINVAL,
                            "learned windows: min_weeks must be 1 to weeks (%d), got %d", weeks,
                            min_weeks);
    /* The local Monday 00:00 at or before UNTIL (one a gap moved past it
     * is a week earlier). */
    struct tw_civil c;
    tw_tz_ns_to_civil(z, until_ns, &c, NULL);
    int64_t day = tw_days_from_civil(c.year, c.month, c.day);
    int64_t monday = day - tw_weekday_from_days(day);
    int64_t end_ns;
    if (tw_tz_local_to_ns(z, monday * TW_NS_PER_DAY, &end_ns, NULL) != TW_OK)
        return tw_error_set(err, TW_ERANGE, "learned windows: the week is out of range");
    if (end_ns > until_ns)
        monday -= 7;
    if (monday - 7 * (int64_t)weeks < -106000 || monday > 106000)
        return tw_error_set(err, TW_ERANGE, "learned windows: the weeks are out of range");
    struct tw_learn_plan *p = calloc(1, sizeof(*p));
    if (p)
        p->bound = malloc((size_t)weeks * (SLOTS + 1) * sizeof(int64_t));
    if (!p || !p->bound) {
        tw_learn_plan_free(p);
        return tw_error_set(err, TW_ENOMEM, "out of memory planning learned windows");
    }
    p->weeks = weeks;
    p->min_weeks = min_weeks;
    snprintf(p->tz, sizeof(p->tz), "%s", tw_tz_name(z) ? tw_tz_name(z) : "");
    const int64_t slot_ns = TW_OBSERVED_SLOT_MIN * TW_NS_PER_MIN;
    for (int w = 1; w <= weeks; w++) {
        int64_t *b = p->bound + (size_t)(w - 1) * (SLOTS + 1);
        int64_t base = (monday - 7 * (int64_t)w) * TW_NS_PER_DAY; /* local ns */
        int64_t week_end, change;
        if (tw_tz_local_to_ns(z, base, &b[0], NULL) != TW_OK ||
            tw_tz_local_to_ns(z, base + TW_NS_PER_WEEK, &week_end, NULL) != TW_OK) {
            tw_learn_plan_free(p);
            return tw_error_set(err, TW_ERANGE, "learned windows: the weeks are out of range");
        }
        /* A week without a change of offset: 15 minutes a quarter-hour. */
        bool steady = week_end - b[0] == TW_NS_PER_WEEK &&
                      (!tw_tz_next_transition(z, b[0], &change) || change >= week_end);
        for (int s = 0; s < SLOTS; s++) {
            if (steady) {
                b[s + 1] = b[s] + slot_ns;
            } else if (tw_tz_local_to_ns(z, base + (int64_t)(s + 1) * slot_ns, &b[s + 1],
                                         NULL) != TW_OK) {
                tw_learn_plan_free(p);
                return tw_error_set(err, TW_ERANGE,
                                    "learned windows: the weeks are out of range");
            }
        }
    }
    *out = p;
    return TW_OK;
}

enum tw_err tw_learn_windows(const struct tw_learn_plan *p, const struct tw_power_obs *obs,
                             size_t n, struct tw_windows *out, struct tw_error *err)
{
    out->n = 0;
    snprintf(out->tz, sizeof(out->tz), "%s", p->tz);
    for (size_t i = 1; i < n; i++)
        if (obs[i].at_ns < obs[i - 1].at_ns)
            return tw_error_set(err, TW_EINVAL,
                                "learned windows: the power states are not sorted by time "
                                "(observation %zu is before the one ahead of it)",
                                i);
    int counts[SLOTS] = {0};
    for (int w = 0; w < p->weeks; w++) {
        const int64_t *b = p->bound + (size_t)w * (SLOTS + 1);
        /* The last observation at or before the week's start. */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (obs[mid].at_ns <= b[0])
                lo = mid + 1;
            else
                hi = mid;
        }
        ptrdiff_t at = (ptrdiff_t)lo - 1;
        for (int s = 0; s < SLOTS; s++) {
            int64_t a = b[s], e = b[s + 1];
            while ((size_t)(at + 1) < n && obs[at + 1].at_ns <= a)
                at++;
            if (e <= a || at < 0 || obs[at].state != TW_POWER_DEALLOCATED)
                continue;
            bool all = true;
            for (size_t k = (size_t)at + 1; all && k < n && obs[k].at_ns < e; k++)
                all = obs[k].state == TW_POWER_DEALLOCATED;
            counts[s] += all;
        }
    }
    bool on[SLOTS];
    int n_on = 0, first_off = -1;
    for (int s = 0; s < SLOTS; s++) {
        on[s] = counts[s] >= p->min_weeks;
        n_on += on[s];
        if (!on[s] && first_off < 0)
            first_off = s;
    }
    if (n_on == SLOTS) {
        out->n = 1;
        out->w[0].start_min = 0;
        out->w[0].len_min = TW_WEEK_MIN;
        return TW_OK;
    }
    /* The runs, from the quarter-hour after one that is off. */
    for (int k = 1; k <= SLOTS; k++) {
        int s = (first_off + k) % SLOTS;
        if (!on[s])
            continue;
        int len = 0;
        while (len < SLOTS && on[(s + len) % SLOTS])
            len++;
        if (out->n >= TW_WINDOWS_MAX) {
            out->n = 0;
            return tw_error_set(err, TW_ERANGE,
                                "learned windows: the deallocated spans that recur make more "
                                "than %d windows a week; raise min_weeks or use a list",
                                TW_WINDOWS_MAX);
        }
        out->w[out->n].start_min = (uint16_t)(s * TW_OBSERVED_SLOT_MIN);
        out->w[out->n].len_min = (uint16_t)(len * TW_OBSERVED_SLOT_MIN);
        out->n++;
        k += len - 1;
    }
    /* By start. */
    for (size_t i = 1; i < out->n; i++) {
        struct tw_window x = out->w[i];
        size_t j = i;
        for (; j > 0 && out->w[j - 1].start_min > x.start_min; j--)
            out->w[j] = out->w[j - 1];
        out->w[j] = x;
    }
    return TW_OK;
}
