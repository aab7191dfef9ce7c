/* test_job.c - the runner with the null engine, and offsets. */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>

#include "bench/job.h"

static struct tw_job_params base(void)
{
    struct tw_job_params p = {0};
    p.engine = &tw_engine_null;
    p.fd = -1;
    p.region_size = 1 << 20;
    p.align = 512;
    p.pattern = TW_PAT_RANDREAD;
    p.block_size = 4096;
    p.queue_depth = 8;
    p.jobs = 2;
    p.read_pct = 100;
    p.seed = 1234;
    return p;
}

static void test_offsets_random_aligned_in_range(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.region_offset = 65536;
    p.region_size = 100 * 4096;
    struct tw_offsets o;
    tw_offsets_init(&o, &p, 0, 99);
    unsigned hits[100] = {0};
    for (int i = 0; i < 100000; i++) {
        uint64_t off = tw_offsets_next(&o);
        assert_true(off >= p.region_offset);
        assert_true(off + p.block_size <= p.region_offset + p.region_size);
        assert_int_equal((off - p.region_offset) % p.block_size, 0);
        hits[(off - p.region_offset) / p.block_size]++;
    }
    /* Uniform: each of 100 blocks near 1,000 hits (binomial sd ~31). */
    for (int b = 0; b < 100; b++)
        assert_in_range(hits[b], 850, 1150);
}

static void test_offsets_sequential_slices(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.pattern = TW_PAT_READ;
    p.region_size = 40 * 4096;
    p.jobs = 4;
    for (unsigned j = 0; j < 4; j++) {
        struct tw_offsets o;
        tw_offsets_init(&o, &p, j, 1);
        /* Job j reads blocks 10j .. 10j+9 in order, then wraps. */
        for (int i = 0; i < 25; i++)
            assert_int_equal(tw_offsets_next(&o), ((uint64_t)j * 10 + (uint64_t)(i % 10)) * 4096);
    }
}

static void test_rng_below_bounds(void **state)
{
    (void)state;
    struct tw_rng g;
    tw_rng_seed(&g, 5);
    for (int i = 0; i < 10000; i++)
        assert_true(tw_rng_below(&g, 7) < 7);
    assert_int_equal(tw_rng_below(&g, 1), 0);
}

static void test_null_size_based_counts(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.io_limit_bytes = 4096 * 1000; /* 1,000 I/Os per job */
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    assert_true(r.read.present);
    assert_false(r.write.present);
    assert_int_equal(r.read.ios, 2000);
    assert_int_equal(r.read.bytes, 2000 * 4096);
    assert_int_equal(r.errors.count, 0);
    assert_string_equal(r.method.engine, "null");
    assert_int_equal(r.method.effective_queue_depth, 8);
    assert_int_equal(r.method.jobs, 2);
    assert_true(r.read.lat.n_pct >= 17);
    assert_true(r.read.lat.min_ns <= r.read.lat.mean_ns);
    assert_true(r.read.lat.mean_ns <= r.read.lat.max_ns);
    assert_true(r.started_at[0] != '\0');
}

static void test_null_mixed_ratio(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.pattern = TW_PAT_RANDRW;
    p.read_pct = 75;
    p.jobs = 1;
    p.io_limit_bytes = 4096ULL * 40000;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    assert_true(r.read.present && r.write.present);
    assert_int_equal(r.read.ios + r.write.ios, 40000);
    double share = (double)r.read.ios / 40000.0;
    assert_true(share > 0.74 && share < 0.76);
    assert_int_equal(r.method.read_pct, 75);
}

static void test_null_errors_counted_run_goes_on(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.jobs = 1;
    p.fail_every = 10;
    p.io_limit_bytes = 4096 * 1000;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    assert_int_equal(r.errors.count, 100);
    assert_int_equal(r.read.ios, 900);
    assert_non_null(strstr(r.errors.first, "Input/output error"));
    assert_non_null(strstr(r.errors.first, "read of 4096 bytes at offset"));
}

static void test_time_based_with_ramp(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.runtime_ms = 1200;
    p.ramp_ms = 300;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    /* Measured time is the runtime, not runtime + ramp. */
    assert_in_range(r.method.runtime_ms, 1150, 1400);
    assert_int_equal(r.method.ramp_ms, 300);
    assert_true(r.read.ios > 1000);
    assert_true(r.read.iops > 0);
    assert_true(r.read.iops_per_s.present);
    assert_int_equal(r.read.iops_per_s.samples, 1);
    /* iops is ios over the measured time */
    double expect = (double)r.read.ios / ((double)r.method.runtime_ms / 1000.0);
    assert_true(r.read.iops > expect * 0.98 && r.read.iops < expect * 1.02);
}

static void test_interrupt(void **state)
{
    (void)state;
    struct tw_job_params p = base();
    p.runtime_ms = 60000;
    volatile sig_atomic_t flag = 1;
    p.interrupt = &flag;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "interrupted"));
}

static void test_bad_params(void **state)
{
    (void)state;
    struct tw_error err;
    struct tw_job_params p = base();
    p.io_limit_bytes = 4096;
    p.queue_depth = 0;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "queue depth 0"));
    p = base();
    p.io_limit_bytes = 4096;
    p.block_size = 4000;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not a multiple of the target's logical block size 512"));
    p = base();
    p.io_limit_bytes = 4096;
    p.region_size = 2048;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "smaller than one block"));
    p = base();
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "no end"));
    p = base();
    p.io_limit_bytes = 4096;
    p.read_pct = 101;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    p = base();
    p.io_limit_bytes = 4096;
    p.jobs = 0;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    /* A runtime or ramp whose deadline in nanoseconds would wrap round. */
    p = base();
    p.runtime_ms = UINT64_MAX / 1000000 + 1;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "at most 86400 s"));
    p = base();
    p.runtime_ms = 1000;
    p.ramp_ms = 86400ull * 1000 + 1;
    assert_int_equal(tw_job_check(&p, &err), TW_EINVAL);
    p = base();
    p.runtime_ms = 86400ull * 1000;
    p.ramp_ms = 86400ull * 1000;
    assert_int_equal(tw_job_check(&p, &err), TW_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_random_aligned_in_range),
        cmocka_unit_test(test_offsets_sequential_slices),
        cmocka_unit_test(test_rng_below_bounds),
        cmocka_unit_test(test_null_size_based_counts),
        cmocka_unit_test(test_null_mixed_ratio),
        cmocka_unit_test(test_null_errors_counted_run_goes_on),
        cmocka_unit_test(test_time_based_with_ramp),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
