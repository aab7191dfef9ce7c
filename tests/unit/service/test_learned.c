/* test_learned.c - the fleet's learned windows (service/learned.h) against
 * core's tw_observed_windows: random power-state histories (seeded), in UTC
 * and in London, looked back from instants around both clock changes and
 * others, over 1 to 6 weeks with every threshold: the same windows every
 * time; and the refusals. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "service/learned.h"

static struct tw_tz *posix(const char *s)
{
    struct tw_tz *z = NULL;
    struct tw_error err = {0};
    if (tw_tz_from_posix(s, strlen(s), &z, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return z;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void same(const struct tw_windows *a, const struct tw_windows *b, const char *what)
{
    if (a->n != b->n)
        fail_msg("%s: %zu windows, core says %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (a->w[i].start_min != b->w[i].start_min || a->w[i].len_min != b->w[i].len_min)
            fail_msg("%s: window %zu is %u+%u, core says %u+%u", what, i, a->w[i].start_min,
                     a->w[i].len_min, b->w[i].start_min, b->w[i].len_min);
    assert_string_equal(a->tz, b->tz);
}

static void test_against_core(void **state)
{
    (void)state;
    struct tw_tz *zones[2] = {posix("UTC0"), posix("GMT0BST,M3.5.0/1,M10.5.0")};
    /* Around the March and October changes of 2026, a December 1st, a
     * Monday midnight exactly. */
    const int64_t untils[] = {INT64_C(1774832400), INT64_C(1774746000), INT64_C(1777000000),
                              INT64_C(1792972800), INT64_C(1793059200), INT64_C(1796083200),
                              INT64_C(1796342400)};
    static struct tw_power_obs obs[4000];
    size_t cases = 0, nonempty = 0;
    for (int zi = 0; zi < 2; zi++)
        for (size_t ui = 0; ui < sizeof(untils) / sizeof(untils[0]); ui++)
            for (int weeks = 1; weeks <= 6; weeks++)
                for (int rep = 0; rep < 12; rep++) {
                    int64_t until = untils[ui] * TW_NS_PER_S;
                    /* A history over the weeks before: nightly or weekend
                     * deallocations with jitter, or noise. */
                    size_t n = 0;
                    int64_t t = until - (int64_t)(weeks + 2) * TW_NS_PER_WEEK;
                    int kind = (int)(next() % 3);
                    while (t < until && n < 4000) {
                        int64_t step;
                        if (kind == 0)
                            step = (int64_t)(next() % 720) * TW_NS_PER_MIN;
                        else if (kind == 1)
                            step = 12 * TW_NS_PER_HOUR + (int64_t)(next() % 31) * TW_NS_PER_MIN;
                        else
                            step = (int64_t)(next() % 4000) * TW_NS_PER_MIN;
                        t += step + 1;
                        obs[n].at_ns = t;
                        obs[n].state = kind == 0 ? (enum tw_power)(next() % 8)
                                                 : (n % 2 ? TW_POWER_RUNNING
                                                          : TW_POWER_DEALLOCATED);
                        n++;
                    }
                    for (int minw = 1; minw <= weeks; minw++) {
                        struct tw_learn_plan *p = NULL;
                        struct tw_error err = {0};
                        assert_int_equal(tw_learn_plan_make(zones[zi], until, weeks, minw, &p,
                                                            &err),
                                         TW_OK);
                        struct tw_windows a, b;
                        enum tw_err ra = tw_learn_windows(p, obs, n, &a, &err);
                        enum tw_err rb = tw_observed_windows(obs, n, until, weeks, minw,
                                                             zones[zi], &b, &err);
                        assert_int_equal(ra, rb);
                        char what[128];
                        snprintf(what, sizeof(what), "zone %d until %lld weeks %d min %d kind %d",
                                 zi, (long long)untils[ui], weeks, minw, kind);
                        if (ra == TW_OK)
                            same(&a, &b, what);
                        nonempty += ra == TW_OK && a.n > 0;
                        cases++;
                        tw_learn_plan_free(p);
                    }
                }
    assert_true(cases > 3000);
    assert_true(nonempty > cases / 4); /* not a comparison of empty answers */
    tw_tz_free(zones[0]);
    tw_tz_free(zones[1]);
}

static void test_refusals(void **state)
{
    (void)state;
    struct tw_tz *z = posix("UTC0");
    struct tw_learn_plan *p = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_learn_plan_make(z, 0, 0, 1, &p, &err), TW_EINVAL);
    assert_int_equal(tw_learn_plan_make(z, 0, 53, 1, &p, &err), TW_EINVAL);
    assert_int_equal(tw_learn_plan_make(z, 0, 4, 5, &p, &err), TW_EINVAL);
    assert_int_equal(tw_learn_plan_make(NULL, 0, 4, 3, &p, &err), TW_EINVAL);
    assert_null(p);
    assert_int_equal(tw_learn_plan_make(z, INT64_C(1796083200) * TW_NS_PER_S, 4, 3, &p, &err),
                     TW_OK);
    struct tw_power_obs obs[2] = {{10, TW_POWER_DEALLOCATED}, {5, TW_POWER_RUNNING}};
    struct tw_windows w;
    assert_int_equal(tw_learn_windows(p, obs, 2, &w, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not sorted"));
    /* Deallocated throughout: the whole week. */
    struct tw_power_obs all = {0, TW_POWER_DEALLOCATED};
    assert_int_equal(tw_learn_windows(p, &all, 1, &w, &err), TW_OK);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.w[0].len_min, TW_WEEK_MIN);
    tw_learn_plan_free(p);
    tw_tz_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_core),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
