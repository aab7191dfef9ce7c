/* test_stat.c - running mean/variance and their merge. */
#include "testhelp.h"

#include <math.h>

#include "bench/stat.h"

static void test_known_values(void **state)
{
    (void)state;
    struct tw_stat s;
    tw_stat_init(&s);
    double xs[] = {2, 4, 4, 4, 5, 5, 7, 9};
    for (size_t i = 0; i < 8; i++)
        tw_stat_add(&s, xs[i]);
    assert_int_equal(s.n, 8);
    assert_float_equal(s.mean, 5.0, 1e-12);
    /* Sample variance 32/7. */
    assert_float_equal(tw_stat_stdev(&s), sqrt(32.0 / 7.0), 1e-12);
    assert_float_equal(s.min, 2, 0);
    assert_float_equal(s.max, 9, 0);
}

static void test_merge_matches_single_pass(void **state)
{
    (void)state;
    struct tw_stat a, b, c, all;
    tw_stat_init(&a);
    tw_stat_init(&b);
    tw_stat_init(&c);
    tw_stat_init(&all);
    for (int i = 0; i < 1000; i++) {
        double x = 1e6 + (i * 7919 % 1000) * 13.5;
        tw_stat_add(i < 100 ? &a : i < 700 ? &b : &c, x);
        tw_stat_add(&all, x);
    }
    struct tw_stat m;
    tw_stat_init(&m);
    tw_stat_merge(&m, &a);
    tw_stat_merge(&m, &b);
    tw_stat_merge(&m, &c);
    assert_int_equal(m.n, all.n);
    assert_float_equal(m.mean, all.mean, 1e-6);
    assert_float_equal(tw_stat_stdev(&m), tw_stat_stdev(&all), 1e-6);
    assert_float_equal(m.min, all.min, 0);
    assert_float_equal(m.max, all.max, 0);
}

static void test_few_samples(void **state)
{
    (void)state;
    struct tw_stat s, e;
    tw_stat_init(&s);
    tw_stat_init(&e);
    assert_float_equal(tw_stat_stdev(&s), 0, 0);
    tw_stat_add(&s, 3);
    assert_float_equal(tw_stat_stdev(&s), 0, 0);
    tw_stat_merge(&s, &e); /* merging nothing changes nothing */
    assert_int_equal(s.n, 1);
    tw_stat_merge(&e, &s);
    assert_float_equal(e.mean, 3, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_merge_matches_single_pass),
        cmocka_unit_test(test_few_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
