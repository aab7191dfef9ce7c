/*
 * test_engine.c - the engine table, and libaio/psync on a real file.
 *
 * ctest-parts: direct
 *   (no part)  the engine table: always runs
 *   direct     real I/O with O_DIRECT on a file under $TMPDIR (or /var/tmp):
 *              exits 77 (skipped) where its filesystem lacks O_DIRECT
 */
#include "testhelp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/job.h"

static char *scratch_dir;
static char scratch[4200];

static void test_find_and_check(void **state)
{
    (void)state;
    struct tw_error err;
    assert_ptr_equal(tw_engine_find("libaio", &err), &tw_engine_libaio);
    assert_ptr_equal(tw_engine_find("psync", &err), &tw_engine_psync);
    assert_ptr_equal(tw_engine_find("null", &err), &tw_engine_null);
    assert_null(tw_engine_find("io_uring", &err));
    assert_non_null(strstr(err.msg, "libaio, psync, null"));
    /* An async engine without getevents is refused when looked at. */
    struct tw_engine_ops bad = tw_engine_null;
    bad.getevents = NULL;
    assert_int_equal(tw_engine_check(&bad, &err), TW_EINVAL);
    bad = tw_engine_null;
    bad.version = 99;
    assert_int_equal(tw_engine_check(&bad, &err), TW_EINVAL);
    assert_int_equal(tw_engine_check(&tw_engine_psync, &err), TW_OK);
}

static void run_real(const struct tw_engine_ops *eng, enum tw_pattern pat, unsigned qd)
{
    int fd = open(scratch, O_RDWR | O_DIRECT);
    assert_true(fd >= 0);
    struct tw_job_params p = {0};
    p.engine = eng;
    p.fd = fd;
    p.direct = true;
    p.region_size = 4 << 20;
    p.align = 512;
    p.pattern = pat;
    p.block_size = 4096;
    p.queue_depth = qd;
    p.jobs = 2;
    p.read_pct = 50;
    p.seed = 3;
    p.io_limit_bytes = 4096 * 500;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    if (tw_job_run(&p, &r, &err) != TW_OK)
        fail_msg("%s", err.msg);
    close(fd);
    assert_int_equal(r.errors.count, 0);
    assert_int_equal(r.read.ios + r.write.ios, 1000);
    assert_int_equal(r.method.queue_depth, (int)qd);
    assert_int_equal(r.method.effective_queue_depth, eng->flags & TW_ENG_SYNC ? 1 : (int)qd);
    if (r.read.present)
        assert_true(r.read.lat.min_ns > 0 && r.read.iops > 0);
}

static void test_libaio_randrw(void **state)
{
    (void)state;
    run_real(&tw_engine_libaio, TW_PAT_RANDRW, 16);
}

static void test_libaio_seq_read(void **state)
{
    (void)state;
    run_real(&tw_engine_libaio, TW_PAT_READ, 4);
}

static void test_psync_qd_is_one(void **state)
{
    (void)state;
    run_real(&tw_engine_psync, TW_PAT_READ, 8);
}

static void test_libaio_misaligned_counts_errors(void **state)
{
    (void)state;
    /* A 4 KiB I/O at a 512-byte alignment the file system can take is
     * fine; a block size the device can't do fails each I/O with EINVAL,
     * which must be counted as errors, not crash or hang. */
    int fd = open(scratch, O_RDONLY | O_DIRECT);
    assert_true(fd >= 0);
    struct tw_job_params p = {0};
    p.engine = &tw_engine_libaio;
    p.fd = fd;
    p.region_size = 4 << 20;
    p.align = 0; /* skip the runner's own check to reach the kernel's */
    p.pattern = TW_PAT_RANDREAD;
    p.block_size = 100;
    p.queue_depth = 4;
    p.jobs = 1;
    p.read_pct = 100;
    p.seed = 1;
    p.io_limit_bytes = 100 * 50;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    close(fd);
    assert_int_equal(r.errors.count, 50);
    assert_non_null(strstr(r.errors.first, "Invalid argument"));
}

static void test_libaio_refused_large_writes(void **state)
{
    (void)state;
    /* Writes on a read-only descriptor are refused by io_submit itself
     * (EBADF).  With 256 KiB I/Os every unit is submitted on its own, so
     * refused units are refilled and refused again within one batch: each
     * must be counted once, with no overflow and no hang. */
    int fd = open(scratch, O_RDONLY | O_DIRECT);
    assert_true(fd >= 0);
    struct tw_job_params p = {0};
    p.engine = &tw_engine_libaio;
    p.fd = fd;
    p.region_size = 4 << 20;
    p.align = 512;
    p.pattern = TW_PAT_WRITE;
    p.block_size = 256 << 10;
    p.queue_depth = 4;
    p.jobs = 1;
    p.read_pct = 0;
    p.seed = 1;
    p.io_limit_bytes = (uint64_t)(256 << 10) * 40;
    struct tw_result r;
    struct tw_error err = {0};
    tw_result_init(&r);
    assert_int_equal(tw_job_run(&p, &r, &err), TW_OK);
    close(fd);
    assert_int_equal(r.errors.count, 40);
    assert_int_equal(r.write.ios, 0);
    assert_non_null(strstr(r.errors.first, "Bad file descriptor"));
}

/* The real-I/O part on a 4 MiB file written in a fresh folder; 77 without
 * O_DIRECT there. */
static int run_direct(void)
{
    scratch_dir = th_tmpdir();
    snprintf(scratch, sizeof(scratch), "%s/f", scratch_dir);
    int fd = open(scratch, O_RDWR | O_CREAT | O_DIRECT, 0600);
    if (fd < 0) {
        fprintf(stderr, "O_DIRECT is not supported in %s: skipped\n", scratch_dir);
        th_rmtree(scratch_dir);
        free(scratch_dir);
        return 77;
    }
    close(fd);
    char *buf = malloc(4 << 20);
    fd = open(scratch, O_WRONLY);
    if (buf)
        memset(buf, 0x5a, 4 << 20);
    if (!buf || fd < 0 || write(fd, buf, 4 << 20) != 4 << 20) {
        fprintf(stderr, "can't write %s\n", scratch);
        return 1;
    }
    fsync(fd);
    close(fd);
    free(buf);
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libaio_randrw),
        cmocka_unit_test(test_libaio_seq_read),
        cmocka_unit_test(test_psync_qd_is_one),
        cmocka_unit_test(test_libaio_misaligned_counts_errors),
        cmocka_unit_test(test_libaio_refused_large_writes),
    };
    int failed = cmocka_run_group_tests_name("engine/direct", tests, NULL, NULL);
    th_rmtree(scratch_dir);
    free(scratch_dir);
    return failed;
}

/* argv[1] names the part (see the top). */
int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "";
    if (strcmp(part, "direct") == 0)
        return run_direct();
    if (part[0]) {
        fprintf(stderr, "unknown part \"%s\"\n", part);
        return 2;
    }
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_and_check),
    };
    return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
