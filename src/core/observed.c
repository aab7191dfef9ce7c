/*
 * observed.c - power states by name, and the weekly windows learned from a
 * VM's power-state history (observed.h has the rule).
 *
 * Each of the 672 quarter-hours of each looked-back week becomes an
 * interval of instants, its start and its end each through
 * tw_tz_local_to_ns on its own, and counts when the state in force at its
 * start is "deallocated" and every observation inside it says the same.
 * A quarter-hour whose local start the spring change skips (a gap) is 0
 * long and never counts: tw_tz_local_to_ns would move it forward onto the
 * instants of the quarter-hours after the gap, which are their own.  The
 * quarter-hour over the autumn change is 75 minutes long (its end is the
 * first time after the overlap).  Where a zone's gap is not a whole number
 * of quarter-hours the instants of one quarter-hour may start before the
 * end of the one ahead of it; the state is then looked up again.
 */
#include "core/observed.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/time.h"

#define SLOTS (TW_WEEK_MIN / TW_OBSERVED_SLOT_MIN) /* 672 */

static const char *const power_names[] = {
    [TW_POWER_UNKNOWN] = "unknown",         [TW_POWER_RUNNING] = "running",
    [TW_POWER_STARTING] = "starting",       [TW_POWER_STOPPING] = "stopping",
    [TW_POWER_STOPPED] = "stopped",         [TW_POWER_DEALLOCATING] = "deallocating",
    [TW_POWER_DEALLOCATED] = "deallocated", [TW_POWER_HIBERNATED] = "hibernated",
};

enum tw_power tw_power_parse(const char *name)
{
    if (!name)
        return TW_POWER_UNKNOWN;
    /* ARM's instance view codes: "PowerState/deallocated",
     * "HibernationState/Hibernated". */
    if (strncasecmp(name, "PowerState/", 11) == 0)
        name += 11;
    else if (strncasecmp(name, "HibernationState/", 17) == 0)
        name += 17;
    for (size_t i = 1; i < sizeof(power_names) / sizeof(power_names[0]); i++)
        if (strcasecmp(name, power_names[i]) == 0)
            return (enum tw_power)i;
    /* On its way to hibernation: its disks can't change either. */
    if (strcasecmp(name, "hibernating") == 0)
        return TW_POWER_HIBERNATED;
    return TW_POWER_UNKNOWN;
}

const char *tw_power_name(enum tw_power p)
{
    if ((unsigned)p >= sizeof(power_names) / sizeof(power_names[0]))
        return "unknown";
    return power_names[p];
}

/* The index of the last observation at or before T, or -1 when none. */
static ptrdiff_t state_at(const struct tw_power_obs *obs, size_t n, int64_t t)
{
    size_t lo = 0, hi = n; /* first index with at_ns > t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (obs[mid].at_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

/* Deallocated throughout [A, B)?  *AT is the index of the last
 * observation at or before an earlier A (-1: none), moved forward here:
 * the quarter-hours of a week are asked about in order, so a week costs
 * one pass over its observations.  When A is before that observation (the
 * instants went backwards) it is searched again from A. */
static bool deallocated_throughout(const struct tw_power_obs *obs, size_t n, int64_t a, int64_t b,
                                   ptrdiff_t *at)
{
    if (*at >= 0 && obs[*at].at_ns > a)
        *at = state_at(obs, n, a);
    while ((size_t)(*at + 1) < n && obs[*at + 1].at_ns <= a)
        ++*at;
    if (b <= a)
        return false;
    ptrdiff_t i = *at;
    if (i < 0 || obs[i].state != TW_POWER_DEALLOCATED)
        return false;
    for (size_t k = (size_t)i + 1; k < n && obs[k].at_ns < b; k++)
        if (obs[k].state != TW_POWER_DEALLOCATED)
            return false;
    return true;
}

/* Adds 1 to COUNTS[s] for each quarter-hour s of a week without a change
 * of offset (its quarter-hours are SLOT_NS each from WS) that lies wholly
 * inside [A, B). */
static void mark_run(int64_t ws, int64_t slot_ns, int64_t a, int64_t b, int counts[])
{
    int64_t k0 = (a - ws + slot_ns - 1) / slot_ns, k1 = (b - ws) / slot_ns;
    if (k1 > SLOTS)
        k1 = SLOTS;
    for (int64_t k = k0; k < k1; k++)
        counts[k]++;
}

/*
 * The same answer as asking deallocated_throughout of each quarter-hour of
 * a steady week starting at WS, in one pass over the week's observations:
 * the spans over which the VM stays deallocated (observations that keep it
 * deallocated do not end one; one of another state, even for no time at
 * all, does) each mark the quarter-hours they hold wholly.  AT is the last
 * observation at or before WS (-1: none).  A fleet's learned windows are a
 * few weeks of this per VM, so it is what their cost is.
 */
static void count_steady_week(const struct tw_power_obs *obs, size_t n, ptrdiff_t at, int64_t ws,
                              int64_t slot_ns, int counts[])
{
    const int64_t we = ws + (int64_t)SLOTS * slot_ns;
    bool in_run = false;
    int64_t run_from = ws;
    for (ptrdiff_t i = at;; i++) {
        int64_t seg_from = i < 0 || obs[i].at_ns < ws ? ws : obs[i].at_ns;
        int64_t seg_to = (size_t)(i + 1) < n && obs[i + 1].at_ns < we ? obs[i + 1].at_ns : we;
        bool dealloc = i >= 0 && obs[i].state == TW_POWER_DEALLOCATED;
        if (dealloc && !in_run) {
            run_from = seg_from;
            in_run = true;
        } else if (!dealloc && in_run) {
            mark_run(ws, slot_ns, run_from, seg_from, counts);
            in_run = false;
        }
        if (seg_to >= we)
            break;
    }
    if (in_run)
        mark_run(ws, slot_ns, run_from, we, counts);
}

enum tw_err tw_observed_windows(const struct tw_power_obs *obs, size_t n, int64_t until_ns,
                                int weeks, int min_weeks, const struct tw_tz *z,
                                struct tw_windows *out, struct tw_error *err)
{
    if (!out || !z || (n > 0 && !obs))
        return tw_error_set(err, TW_EINVAL, "observed windows: no zone, history or output");
    out->n = 0;
    out->tz[0] = '\0';
    if (weeks < 1 || weeks > TW_OBSERVED_WEEKS_MAX)
        return tw_error_set(err, TW_EINVAL, "observed windows: weeks must be 1 to %d, got %d",
                            TW_OBSERVED_WEEKS_MAX, weeks);
    if (min_weeks < 1 || min_weeks > weeks)
        return tw_error_set(err, TW_EINVAL,
                            "observed windows: min_weeks must be 1 to weeks (%d), got %d", weeks,
                            min_weeks);
    for (size_t i = 1; i < n; i++)
        if (obs[i].at_ns < obs[i - 1].at_ns)
            return tw_error_set(err, TW_EINVAL,
                                "observed windows: the power states are not sorted by time "
                                "(observation %zu is before the one ahead of it)",
                                i);
    /* The local Monday 00:00 at or before UNTIL. */
    struct tw_civil c;
    tw_tz_ns_to_civil(z, until_ns, &c, NULL);
    int64_t day = tw_days_from_civil(c.year, c.month, c.day);
    int64_t monday = day - tw_weekday_from_days(day);
    int64_t end_ns;
    if (tw_tz_local_to_ns(z, monday * TW_NS_PER_DAY, &end_ns, NULL) != TW_OK)
        return tw_error_set(err, TW_ERANGE, "observed windows: the week is out of range");
    if (end_ns > until_ns)
        monday -= 7; /* that Monday's midnight moved past UNTIL by a gap */
    if (monday - 7 * (int64_t)weeks < -106000 || monday > 106000)
        return tw_error_set(err, TW_ERANGE, "observed windows: the weeks are out of range");

    int counts[SLOTS] = {0};
    for (int w = 1; w <= weeks; w++) {
        int64_t base = (monday - 7 * (int64_t)w) * TW_NS_PER_DAY; /* local ns */
        int64_t prev, week_end, change;
        if (tw_tz_local_to_ns(z, base, &prev, NULL) != TW_OK ||
            tw_tz_local_to_ns(z, base + TW_NS_PER_WEEK, &week_end, NULL) != TW_OK)
            return tw_error_set(err, TW_ERANGE, "observed windows: the weeks are out of range");
        /* A week without a change of offset: its quarter-hours are 15
         * minutes each from its start (most weeks; the rule applies in
         * full to the others). */
        bool steady = week_end - prev == TW_NS_PER_WEEK &&
                      (!tw_tz_next_transition(z, prev, &change) || change >= week_end);
        const int64_t slot_ns = TW_OBSERVED_SLOT_MIN * TW_NS_PER_MIN;
        ptrdiff_t at = state_at(obs, n, prev);
        if (steady) {
            count_steady_week(obs, n, at, prev, slot_ns, counts);
            continue;
        }
        /* A week with a change: each quarter-hour's start and end on its
         * own; one that starts in a gap does not occur. */
        for (int s = 0; s < SLOTS; s++) {
            int64_t a, b;
            enum tw_tz_local kind;
            if (tw_tz_local_to_ns(z, base + (int64_t)s * slot_ns, &a, &kind) != TW_OK ||
                tw_tz_local_to_ns(z, base + (int64_t)(s + 1) * slot_ns, &b, NULL) != TW_OK)
                return tw_error_set(err, TW_ERANGE,
                                    "observed windows: the weeks are out of range");
            if (kind == TW_TZ_LOCAL_GAP)
                continue;
            if (deallocated_throughout(obs, n, a, b, &at))
                counts[s]++;
        }
    }
    bool on[SLOTS];
    int n_on = 0, first_off = -1;
    for (int s = 0; s < SLOTS; s++) {
        on[s] = counts[s] >= min_weeks;
        n_on += on[s];
        if (!on[s] && first_off < 0)
            first_off = s;
    }
    snprintf(out->tz, sizeof(out->tz), "%s", tw_tz_name(z) ? tw_tz_name(z) : "");
    if (n_on == SLOTS) {
        out->n = 1;
        out->w[0].start_min = 0;
        out->w[0].len_min = TW_WEEK_MIN;
        return TW_OK;
    }
    /* Runs, starting after a quarter-hour that is off so a run over
     * Sunday midnight is one. */
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
                                "observed windows: the deallocated spans that recur make more "
                                "than %d windows a week; raise min_weeks or use a list",
                                TW_WINDOWS_MAX);
        }
        out->w[out->n].start_min = (uint16_t)(s * TW_OBSERVED_SLOT_MIN);
        out->w[out->n].len_min = (uint16_t)(len * TW_OBSERVED_SLOT_MIN);
        out->n++;
        k += len - 1;
    }
    /* Sorted by start (the runs are disjoint and apart: nothing to unite). */
    for (size_t i = 1; i < out->n; i++) {
        struct tw_window x = out->w[i];
        size_t j = i;
        for (; j > 0 && out->w[j - 1].start_min > x.start_min; j--)
            out->w[j] = out->w[j - 1];
        out->w[j] = x;
    }
    return TW_OK;
}

bool tw_power_hibernated_in(const struct tw_power_obs *obs, size_t n, int64_t from_ns,
                            int64_t to_ns)
{
    if (!obs || to_ns <= from_ns)
        return false;
    ptrdiff_t i = state_at(obs, n, from_ns);
    if (i >= 0 && obs[i].state == TW_POWER_HIBERNATED)
        return true;
    for (size_t k = (size_t)(i + 1); k < n && obs[k].at_ns < to_ns; k++)
        if (obs[k].state == TW_POWER_HIBERNATED)
            return true;
    return false;
}
