/*
 * test_observed.c - power state names, and the weekly windows learned from
 * a power-state history: the threshold, quarter-hours cut by a start, an
 * interruption, the unknown start, a run over Sunday midnight, a zone over
 * its October change, and refused arguments.
 */
#include "testhelp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/observed.h"
#include "core/time.h"

static int64_t utc(int y, int mo, int d, int h, int mi)
{
    struct tw_civil c = {y, mo, d, h, mi, 0, 0};
    int64_t ns;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    return ns;
}

static struct tw_tz *zone(const char *posix)
{
    struct tw_tz *z;
    assert_int_equal(tw_tz_from_posix(posix, strlen(posix), &z, NULL), TW_OK);
    return z;
}

static struct tw_tz *london(void)
{
    size_t len;
    char *buf = th_fixture("../fuzz/corpus/tz/Europe_London", &len);
    struct tw_tz *z;
    assert_int_equal(tw_tz_parse("Europe/London", buf, len, &z, NULL), TW_OK);
    free(buf);
    return z;
}

struct hist {
    size_t n;
    struct tw_power_obs v[512];
};

static void obs(struct hist *h, int64_t at, enum tw_power s)
{
    assert_true(h->n < 512);
    h->v[h->n].at_ns = at;
    h->v[h->n].state = s;
    h->n++;
}

static void text_of(const struct tw_windows *w, char *buf, size_t cap)
{
    assert_true(tw_windows_format(w, buf, cap));
}

static void learn(const struct hist *h, int64_t until, int weeks, int min_weeks,
                  const struct tw_tz *z, const char *want)
{
    struct tw_windows w;
    struct tw_error err = {0};
    if (tw_observed_windows(h->v, h->n, until, weeks, min_weeks, z, &w, &err) != TW_OK)
        fail_msg("%s", err.msg);
    char t[1024];
    text_of(&w, t, sizeof(t));
    assert_string_equal(t, want);
    assert_string_equal(w.tz, tw_tz_name(z));
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(tw_power_parse("running"), TW_POWER_RUNNING);
    assert_int_equal(tw_power_parse("PowerState/deallocated"), TW_POWER_DEALLOCATED);
    assert_int_equal(tw_power_parse("powerstate/DEALLOCATING"), TW_POWER_DEALLOCATING);
    assert_int_equal(tw_power_parse("stopped"), TW_POWER_STOPPED);
    assert_int_equal(tw_power_parse("starting"), TW_POWER_STARTING);
    assert_int_equal(tw_power_parse("stopping"), TW_POWER_STOPPING);
    assert_int_equal(tw_power_parse("hibernated"), TW_POWER_HIBERNATED);
    assert_int_equal(tw_power_parse("HibernationState/Hibernated"), TW_POWER_HIBERNATED);
    assert_int_equal(tw_power_parse("HibernationState/Hibernating"), TW_POWER_HIBERNATED);
    assert_int_equal(tw_power_parse("deallocated "), TW_POWER_UNKNOWN);
    assert_int_equal(tw_power_parse("PowerState/"), TW_POWER_UNKNOWN);
    assert_int_equal(tw_power_parse(""), TW_POWER_UNKNOWN);
    assert_int_equal(tw_power_parse(NULL), TW_POWER_UNKNOWN);
    assert_string_equal(tw_power_name(TW_POWER_DEALLOCATED), "deallocated");
    assert_string_equal(tw_power_name((enum tw_power)99), "unknown");
}

/* Four weekends deallocated Sat 00:00 to Mon 06:00 (UTC), and a weekday
 * night in only two of the weeks. */
static void test_threshold(void **state)
{
    (void)state;
    struct tw_tz *z = zone("UTC0");
    struct hist h = {0};
    /* Mondays 2026-10-05, 12, 19, 26; the weeks end at 2026-11-02. */
    for (int k = 0; k < 4; k++) {
        int d = 5 + 7 * k;
        obs(&h, utc(2026, 10, d, 6, 0), TW_POWER_RUNNING);
        if (k < 2) {
            obs(&h, utc(2026, 10, d + 2, 20, 5), TW_POWER_DEALLOCATED); /* Wed 20:05 */
            obs(&h, utc(2026, 10, d + 2, 23, 0), TW_POWER_DEALLOCATED); /* said again */
            obs(&h, utc(2026, 10, d + 3, 6, 0), TW_POWER_STARTING);
        }
        obs(&h, utc(2026, 10, d + 5, 0, 0), TW_POWER_DEALLOCATED);
    }
    obs(&h, utc(2026, 11, 2, 6, 0), TW_POWER_RUNNING);
    int64_t until = utc(2026, 11, 4, 12, 0); /* a Wednesday: the Monday before counts */
    learn(&h, until, 4, 3, z, "Sat 00:00-Mon 06:00");
    /* The first Monday morning came before the first observation: 3 of
     * 4 weeks. */
    learn(&h, until, 4, 4, z, "Sat 00:00-Mon 00:00");
    /* Two weeks are enough at 2; the 20:00 quarter-hour is cut by the
     * 20:05 start, so the night starts 20:15. */
    learn(&h, until, 4, 2, z, "Wed 20:15-Thu 06:00, Sat 00:00-Mon 06:00");
    /* Looking back two weeks only: the nights were in the first two. */
    learn(&h, until, 2, 1, z, "Sat 00:00-Mon 06:00");
    /* Five weeks back: the first had no observation yet (unknown, not
     * deallocated), so 4 of 5 weekends. */
    learn(&h, until, 5, 4, z, "Sat 00:00-Mon 00:00");
    learn(&h, until, 5, 3, z, "Sat 00:00-Mon 06:00");
    struct tw_windows w;
    assert_int_equal(tw_observed_windows(h.v, h.n, until, 5, 5, z, &w, NULL), TW_OK);
    assert_int_equal(w.n, 0);
    tw_tz_free(z);
}

static void test_interrupted_and_wrap(void **state)
{
    (void)state;
    struct tw_tz *z = zone("UTC0");
    struct hist h = {0};
    for (int k = 0; k < 3; k++) {
        int d = 5 + 7 * k;
        obs(&h, utc(2026, 10, d + 6, 22, 0), TW_POWER_DEALLOCATED); /* Sun 22:00 */
        obs(&h, utc(2026, 10, d + 7, 2, 0), TW_POWER_RUNNING);      /* Mon 02:00 */
        obs(&h, utc(2026, 10, d + 1, 1, 0), TW_POWER_DEALLOCATED);  /* Tue 01:00 */
        if (k == 1)
            obs(&h, utc(2026, 10, d + 1, 2, 10), TW_POWER_RUNNING); /* a blip */
        if (k == 1)
            obs(&h, utc(2026, 10, d + 1, 2, 20), TW_POWER_DEALLOCATED);
        obs(&h, utc(2026, 10, d + 1, 4, 0), TW_POWER_RUNNING);
    }
    /* Sorted by time for the reader. */
    for (size_t i = 1; i < h.n; i++)
        for (size_t j = i; j > 0 && h.v[j].at_ns < h.v[j - 1].at_ns; j--) {
            struct tw_power_obs t = h.v[j];
            h.v[j] = h.v[j - 1];
            h.v[j - 1] = t;
        }
    int64_t until = utc(2026, 10, 26, 0, 0); /* a Monday midnight: three weeks before */
    /* The first Monday's 00:00-02:00 had nothing before it: 2 of 3; the
     * blip breaks two quarter-hours of one Tuesday. */
    learn(&h, until, 3, 3, z, "Tue 01:00-Tue 02:00, Tue 02:30-Tue 04:00, Sun 22:00-Mon 00:00");
    /* At 2 the Sunday night and the Monday morning are one window. */
    learn(&h, until, 3, 2, z, "Tue 01:00-Tue 04:00, Sun 22:00-Mon 02:00");
    learn(&h, utc(2026, 11, 2, 0, 0), 3, 2, z,
          "Tue 01:00-Tue 02:00, Tue 02:30-Tue 04:00, Sun 22:00-Mon 02:00");
    tw_tz_free(z);
}

/* Deallocated 19:00 to 07:00 London time every night of October: the
 * learned windows are in local time, the week of the change included. */
static void test_zone(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct hist h = {0};
    for (int d = 1; d <= 32; d++) {      /* 1 October to 1 November */
        int off = d <= 24 ? 1 : 0;          /* BST until the 25th 01:00 UTC */
        int64_t day = utc(2026, 10, 1, 0, 0) + (d - 1) * TW_NS_PER_DAY;
        obs(&h, day + (7 - off) * TW_NS_PER_HOUR, TW_POWER_RUNNING);
        obs(&h, day + (19 - off) * TW_NS_PER_HOUR, TW_POWER_DEALLOCATED);
    }
    learn(&h, utc(2026, 11, 2, 9, 0), 4, 4, z,
          "Mon 19:00-Tue 07:00, Tue 19:00-Wed 07:00, Wed 19:00-Thu 07:00, Thu 19:00-Fri 07:00, "
          "Fri 19:00-Sat 07:00, Sat 19:00-Sun 07:00, Sun 19:00-Mon 07:00");
    tw_tz_free(z);
}

/* The week of London's spring change (Sunday 2026-03-29: 01:00 GMT is
 * 02:00 BST): the quarter-hours 01:00-01:45 do not occur and count in no
 * week, and 02:00-02:45 BST are the instants 01:00Z-01:45Z. */
static void test_london_march(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    int64_t until = utc(2026, 3, 30, 0, 0); /* Mon 00:00 BST is Sun 23:00Z: the week before */
    struct hist h = {0};
    obs(&h, utc(2026, 3, 20, 0, 0), TW_POWER_RUNNING);
    obs(&h, utc(2026, 3, 29, 1, 0), TW_POWER_DEALLOCATED);
    obs(&h, utc(2026, 3, 29, 1, 45), TW_POWER_RUNNING);
    learn(&h, until, 1, 1, z, "Sun 02:00-Sun 02:45");
    /* The hour before the change, 00:00Z-01:00Z, is Sun 00:00-01:00 GMT. */
    struct hist g = {0};
    obs(&g, utc(2026, 3, 20, 0, 0), TW_POWER_RUNNING);
    obs(&g, utc(2026, 3, 29, 0, 0), TW_POWER_DEALLOCATED);
    obs(&g, utc(2026, 3, 29, 1, 15), TW_POWER_RUNNING);
    learn(&g, until, 1, 1, z, "Sun 00:00-Sun 01:00, Sun 02:00-Sun 02:15");
    /* Deallocated the whole week: everything but the skipped hour. */
    struct hist a = {0};
    obs(&a, utc(2026, 3, 1, 0, 0), TW_POWER_DEALLOCATED);
    learn(&a, until, 1, 1, z, "Sun 02:00-Sun 01:00");
    /* With the week before (no change) at 2 of 2 the same; at 1 of 2 the
     * other week fills the hour in. */
    learn(&a, until, 2, 2, z, "Sun 02:00-Sun 01:00");
    learn(&a, until, 2, 1, z, "Mon 00:00-Mon 00:00");
    /* A state change inside the instants after the gap is seen by every
     * quarter-hour it falls in, even though the skipped ones were asked
     * about first. */
    struct hist b = {0};
    obs(&b, utc(2026, 3, 28, 0, 0), TW_POWER_DEALLOCATED);
    obs(&b, utc(2026, 3, 29, 1, 20), TW_POWER_RUNNING);
    obs(&b, utc(2026, 3, 29, 1, 30), TW_POWER_DEALLOCATED);
    obs(&b, utc(2026, 3, 29, 3, 0), TW_POWER_RUNNING);
    learn(&b, until, 1, 1, z, "Sat 00:00-Sun 01:00, Sun 02:00-Sun 02:15, Sun 02:30-Sun 04:00");
    tw_tz_free(z);
}

/* The week of London's autumn change (Sunday 2026-10-25: 02:00 BST is
 * 01:00 GMT): local 01:00-02:00 occurs twice, its quarter-hours are read
 * as the first pass (BST), and 01:45 runs on to 02:00 GMT, 75 minutes. */
static void test_london_october(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    int64_t until = utc(2026, 10, 26, 0, 0);
    /* The first pass of 01:00-02:00, 00:00Z-01:00Z: the 75-minute
     * quarter-hour is not deallocated throughout. */
    struct hist f = {0};
    obs(&f, utc(2026, 10, 1, 0, 0), TW_POWER_RUNNING);
    obs(&f, utc(2026, 10, 25, 0, 0), TW_POWER_DEALLOCATED);
    obs(&f, utc(2026, 10, 25, 1, 0), TW_POWER_RUNNING);
    learn(&f, until, 1, 1, z, "Sun 01:00-Sun 01:45");
    /* The second pass alone (01:00Z-02:00Z, 01:00-02:00 GMT): nothing. */
    struct hist s2 = {0};
    obs(&s2, utc(2026, 10, 1, 0, 0), TW_POWER_RUNNING);
    obs(&s2, utc(2026, 10, 25, 1, 0), TW_POWER_DEALLOCATED);
    obs(&s2, utc(2026, 10, 25, 2, 0), TW_POWER_RUNNING);
    struct tw_windows w;
    assert_int_equal(tw_observed_windows(s2.v, s2.n, until, 1, 1, z, &w, NULL), TW_OK);
    assert_int_equal(w.n, 0);
    /* Both passes: 01:00-02:00 whole, and the quarter-hour after it. */
    struct hist both = {0};
    obs(&both, utc(2026, 10, 1, 0, 0), TW_POWER_RUNNING);
    obs(&both, utc(2026, 10, 25, 0, 0), TW_POWER_DEALLOCATED);
    obs(&both, utc(2026, 10, 25, 2, 15), TW_POWER_RUNNING);
    learn(&both, until, 1, 1, z, "Sun 01:00-Sun 02:15");
    /* Always deallocated: the whole week. */
    struct hist a = {0};
    obs(&a, utc(2026, 10, 1, 0, 0), TW_POWER_DEALLOCATED);
    learn(&a, until, 1, 1, z, "Mon 00:00-Mon 00:00");
    tw_tz_free(z);
}

static void test_all_week_and_refusals(void **state)
{
    (void)state;
    struct tw_tz *z = zone("UTC0");
    struct hist h = {0};
    obs(&h, utc(2026, 1, 1, 0, 0), TW_POWER_DEALLOCATED);
    learn(&h, utc(2026, 3, 2, 0, 0), 4, 4, z, "Mon 00:00-Mon 00:00");
    struct tw_windows w;
    struct tw_error err = {0};
    assert_int_equal(tw_observed_windows(h.v, h.n, 0, 0, 1, z, &w, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "weeks"));
    assert_int_equal(tw_observed_windows(h.v, h.n, 0, 53, 1, z, &w, &err), TW_EINVAL);
    assert_int_equal(tw_observed_windows(h.v, h.n, 0, 4, 5, z, &w, &err), TW_EINVAL);
    assert_int_equal(tw_observed_windows(h.v, h.n, 0, 4, 0, z, &w, &err), TW_EINVAL);
    assert_int_equal(tw_observed_windows(h.v, h.n, 0, 4, 3, NULL, &w, &err), TW_EINVAL);
    obs(&h, utc(2025, 1, 1, 0, 0), TW_POWER_RUNNING);
    assert_int_equal(tw_observed_windows(h.v, h.n, utc(2026, 3, 2, 0, 0), 4, 3, z, &w, &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "sorted"));
    /* Nothing observed: nothing learned. */
    assert_int_equal(tw_observed_windows(NULL, 0, utc(2026, 3, 2, 0, 0), 4, 3, z, &w, NULL),
                     TW_OK);
    assert_int_equal(w.n, 0);
    /* More than 64 runs a week: refused, not cut. */
    struct hist m = {0};
    for (int k = 0; k < 80; k++) {
        obs(&m, utc(2026, 2, 23, 0, 0) + k * 2 * TW_NS_PER_HOUR, TW_POWER_DEALLOCATED);
        obs(&m, utc(2026, 2, 23, 1, 0) + k * 2 * TW_NS_PER_HOUR, TW_POWER_RUNNING);
    }
    assert_int_equal(tw_observed_windows(m.v, m.n, utc(2026, 3, 2, 0, 0), 1, 1, z, &w, &err),
                     TW_ERANGE);
    assert_int_equal(w.n, 0);
    tw_tz_free(z);
}

static void test_hibernated(void **state)
{
    (void)state;
    struct hist h = {0};
    obs(&h, utc(2026, 1, 1, 0, 0), TW_POWER_RUNNING);
    obs(&h, utc(2026, 1, 10, 0, 0), TW_POWER_HIBERNATED);
    obs(&h, utc(2026, 1, 11, 0, 0), TW_POWER_RUNNING);
    assert_false(tw_power_hibernated_in(h.v, h.n, utc(2026, 1, 2, 0, 0), utc(2026, 1, 10, 0, 0)));
    assert_true(tw_power_hibernated_in(h.v, h.n, utc(2026, 1, 2, 0, 0), utc(2026, 1, 10, 0, 1)));
    assert_true(tw_power_hibernated_in(h.v, h.n, utc(2026, 1, 10, 12, 0), utc(2026, 1, 10, 13, 0)));
    assert_false(tw_power_hibernated_in(h.v, h.n, utc(2026, 1, 11, 0, 0), utc(2026, 2, 1, 0, 0)));
    assert_false(tw_power_hibernated_in(h.v, h.n, utc(2026, 2, 1, 0, 0), utc(2026, 1, 1, 0, 0)));
    assert_false(tw_power_hibernated_in(NULL, 0, 0, 1));
}

/* ---- the rule, literally, as a reference ---- */

static struct tw_tz *corpus_zone(const char *file, const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "../fuzz/corpus/tz/%s", file);
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_tz *z;
    assert_int_equal(tw_tz_parse(name, buf, len, &z, NULL), TW_OK);
    free(buf);
    return z;
}

/* The state in force at T by a linear search: before the first
 * observation, unknown. */
static enum tw_power ref_state(const struct hist *h, int64_t t)
{
    enum tw_power s = TW_POWER_UNKNOWN;
    for (size_t i = 0; i < h->n && h->v[i].at_ns <= t; i++)
        s = h->v[i].state;
    return s;
}

/* Which quarter-hours the rule puts in the windows, each computed on its
 * own from local times. */
static void ref_slots(const struct hist *h, int64_t until, int weeks, int min_weeks,
                      const struct tw_tz *z, bool *on)
{
    struct tw_civil c;
    tw_tz_ns_to_civil(z, until, &c, NULL);
    int64_t day = tw_days_from_civil(c.year, c.month, c.day);
    int64_t monday = day - tw_weekday_from_days(day), end;
    assert_int_equal(tw_tz_local_to_ns(z, monday * TW_NS_PER_DAY, &end, NULL), TW_OK);
    if (end > until)
        monday -= 7;
    for (int s = 0; s < 672; s++) {
        int count = 0;
        for (int w = 1; w <= weeks; w++) {
            int64_t la = (monday - 7 * w) * TW_NS_PER_DAY + s * 15 * TW_NS_PER_MIN, a, b;
            enum tw_tz_local kind;
            assert_int_equal(tw_tz_local_to_ns(z, la, &a, &kind), TW_OK);
            assert_int_equal(tw_tz_local_to_ns(z, la + 15 * TW_NS_PER_MIN, &b, NULL), TW_OK);
            /* A quarter-hour whose start the spring change skips does not
             * occur that week. */
            bool all = kind != TW_TZ_LOCAL_GAP && b > a &&
                       ref_state(h, a) == TW_POWER_DEALLOCATED;
            for (size_t i = 0; all && i < h->n; i++)
                if (h->v[i].at_ns > a && h->v[i].at_ns < b && h->v[i].state != TW_POWER_DEALLOCATED)
                    all = false;
            count += all;
        }
        on[s] = count >= min_weeks;
    }
}

static uint64_t rng = 88172645463325252u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random histories (a VM deallocated for spans of hours, with blips and
 * repeats) in zones with clock changes, over weeks holding the changes:
 * the windows cover exactly the reference's quarter-hours. */
static void test_reference(void **state)
{
    (void)state;
    struct tw_tz *zones[] = {london(), corpus_zone("Pacific_Chatham", "Pacific/Chatham"),
                             corpus_zone("Africa_Casablanca", "Africa/Casablanca"),
                             corpus_zone("America_Nuuk", "America/Nuuk"), zone("UTC0")};
    const int64_t untils[] = {utc(2026, 11, 4, 12, 0), utc(2027, 4, 7, 3, 0),
                              utc(2026, 4, 8, 0, 0), utc(2026, 10, 26, 0, 30)};
    for (int round = 0; round < 60; round++) {
        const struct tw_tz *z = zones[round % 5];
        int64_t until = untils[(round / 5) % 4];
        int weeks = 1 + (int)(next_rand() % 6), min_weeks = 1 + (int)(next_rand() % weeks);
        struct hist h = {0};
        int64_t t = until - (weeks + 1) * TW_NS_PER_WEEK + (int64_t)(next_rand() % 86400) * TW_NS_PER_S;
        while (t < until && h.n < 500) {
            static const enum tw_power states[] = {TW_POWER_DEALLOCATED, TW_POWER_DEALLOCATED,
                                                   TW_POWER_RUNNING, TW_POWER_STOPPED,
                                                   TW_POWER_DEALLOCATING};
            obs(&h, t, states[next_rand() % 5]);
            t += (int64_t)(next_rand() % (30 * 3600)) * TW_NS_PER_S;
        }
        bool want[672];
        ref_slots(&h, until, weeks, min_weeks, z, want);
        struct tw_windows w;
        struct tw_error err = {0};
        if (tw_observed_windows(h.v, h.n, until, weeks, min_weeks, z, &w, &err) != TW_OK)
            fail_msg("round %d: %s", round, err.msg);
        bool got[672] = {false};
        for (size_t i = 0; i < w.n; i++) {
            assert_int_equal(w.w[i].start_min % 15, 0);
            assert_int_equal(w.w[i].len_min % 15, 0);
            for (int k = 0; k < w.w[i].len_min; k += 15)
                got[((w.w[i].start_min + k) % TW_WEEK_MIN) / 15] = true;
            if (i > 0)
                assert_true(w.w[i].start_min > w.w[i - 1].start_min);
        }
        for (int s = 0; s < 672; s++)
            if (got[s] != want[s])
                fail_msg("round %d (%s, %d of %d weeks): quarter-hour %d is %s, the rule says %s",
                         round, tw_tz_name(z), min_weeks, weeks, s, got[s] ? "in" : "out",
                         want[s] ? "in" : "out");
    }
    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
        tw_tz_free(zones[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_interrupted_and_wrap),
        cmocka_unit_test(test_zone),
        cmocka_unit_test(test_london_march),
        cmocka_unit_test(test_london_october),
        cmocka_unit_test(test_all_week_and_refusals),
        cmocka_unit_test(test_hibernated),
        cmocka_unit_test(test_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
