/* test_hist.c - the latency histogram against exact percentiles. */
#include "testhelp.h"

#include <math.h>
#include <stdlib.h>

#include "bench/hist.h"
#include "bench/job.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples: the definition hist.h promises. */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, double pct)
{
    double r = ceil(pct / 100.0 * (double)n - 1e-9);
    size_t rank = r < 1 ? 1 : (size_t)r;
    return sorted[rank - 1];
}

static void check_against_exact(uint64_t *v, size_t n)
{
    struct tw_hist *h = malloc(sizeof(*h));
    assert_non_null(h);
    tw_hist_init(h);
    for (size_t i = 0; i < n; i++)
        tw_hist_add(h, v[i]);
    qsort(v, n, sizeof(*v), cmp_u64);
    assert_int_equal(h->count, n);
    assert_int_equal(h->min_ns, v[0]);
    assert_int_equal(h->max_ns, v[n - 1]);
    static const double pcts[] = {1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100};
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
        double want = (double)exact_pct(v, n, pcts[i]);
        double got = (double)tw_hist_percentile(h, pcts[i]);
        double rel = want ? fabs(got - want) / want : fabs(got);
        if (rel > 0.01)
            fail_msg("p%g: histogram %g, exact %g (relative error %.4f > 1 %%)", pcts[i], got,
                     want, rel);
        /* The documented bound is tighter than the 1 % promise. */
        assert_true(rel <= 1.0 / 256 + 1e-12);
    }
    free(h);
}

static void test_uniform_random(void **state)
{
    (void)state;
    struct tw_rng g;
    tw_rng_seed(&g, 42);
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = 50000 + tw_rng_below(&g, 5000000); /* 50 us .. 5 ms */
    check_against_exact(v, n);
    free(v);
}

static void test_lognormal_like(void **state)
{
    (void)state;
    /* Heavy tail: most samples around 200 us, a few near a second. */
    struct tw_rng g;
    tw_rng_seed(&g, 7);
    size_t n = 50000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(tw_rng_next(&g) >> 11) / 9007199254740992.0;
        v[i] = (uint64_t)(200000.0 * exp(3.0 * (u - 0.5) * (u > 0.999 ? 4 : 1)));
    }
    check_against_exact(v, n);
    free(v);
}

static void test_small_values_exact(void **state)
{
    (void)state;
    uint64_t v[200];
    for (int i = 0; i < 200; i++)
        v[i] = (uint64_t)(i % 128);
    check_against_exact(v, 200);
    for (uint64_t x = 0; x < TW_HIST_SUB; x++)
        assert_int_equal(tw_hist_value(tw_hist_index(x)), x);
}

static void test_index_bounds(void **state)
{
    (void)state;
    /* Every value maps into the table and back within the error bound. */
    uint64_t probes[] = {128, 129, 255, 256, 1000, 123456789, 1ULL << 40, UINT64_MAX / 3,
                         UINT64_MAX};
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        size_t idx = tw_hist_index(probes[i]);
        assert_true(idx < TW_HIST_BUCKETS);
        double back = (double)tw_hist_value(idx);
        assert_true(fabs(back - (double)probes[i]) / (double)probes[i] <= 1.0 / 256 + 1e-12);
    }
    /* Indexes grow with values. */
    size_t prev = 0;
    for (uint64_t x = 1; x < (1ULL << 62); x = x * 3 / 2 + 1) {
        size_t idx = tw_hist_index(x);
        assert_true(idx >= prev);
        prev = idx;
    }
}

static void test_merge_equals_single(void **state)
{
    (void)state;
    struct tw_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(all);
    tw_hist_init(a);
    tw_hist_init(b);
    tw_hist_init(all);
    struct tw_rng g;
    tw_rng_seed(&g, 1);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = 1000 + tw_rng_below(&g, 1000000);
        tw_hist_add(i % 3 ? a : b, x);
        tw_hist_add(all, x);
    }
    tw_hist_merge(a, b);
    assert_memory_equal(a, all, sizeof(*a));
    free(a);
    free(b);
    free(all);
}

static void test_empty(void **state)
{
    (void)state;
    struct tw_hist *h = malloc(sizeof(*h));
    assert_non_null(h);
    tw_hist_init(h);
    assert_int_equal(tw_hist_percentile(h, 50), 0);
    tw_hist_add(h, 777);
    assert_int_equal(tw_hist_percentile(h, 0.001), 777);
    assert_int_equal(tw_hist_percentile(h, 100), 777);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_random),   cmocka_unit_test(test_lognormal_like),
        cmocka_unit_test(test_small_values_exact), cmocka_unit_test(test_index_bounds),
        cmocka_unit_test(test_merge_equals_single), cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
