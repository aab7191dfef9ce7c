/*
 * test_fio_import.c - fio JSON and text output into a result record.
 *
 * The expected figures were read from the fixture files themselves
 * (tests/fixtures/fio, real fio-3.33 runs; see its README.md) and checked
 * with python3; summed ones (two jobs) were computed there from the
 * per-job figures.  Regenerating the fixtures means updating them here.
 */
#include "testhelp.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fio_import.h"
#include "core/inventory.h"
#include "core/result.h"
#include "core/tier.h"
#include "core/verdict.h"

/* ---- helpers ---- */

#define near(got, want) near_at((got), (want), #got, __LINE__)

/* Equal to 1e-9 relative: the figures are copied, not estimated. */
static void near_at(double got, double want, const char *what, int line)
{
    double tol = fabs(want) * 1e-9 + 1e-9;
    if (!(fabs(got - want) <= tol))
        fail_msg("line %d: %s is %.9g, want %.9g", line, what, got, want);
}

static double pct(const struct tw_lat *lat, double p)
{
    for (size_t i = 0; i < lat->n_pct; i++)
        if (fabs(lat->pct[i].pct - p) < 1e-9)
            return lat->pct[i].ns;
    fail_msg("no p%g among %zu percentiles", p, lat->n_pct);
    return -1;
}

/* Imports fixture REL with the auto-detecting entry point; must succeed. */
static void import_ok(const char *rel, struct tw_result *r)
{
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_error err = {0};
    enum tw_err rc = tw_fio_import(buf, len, r, &err);
    if (rc != TW_OK)
        fail_msg("%s: %s (line %ld)", rel, err.msg, err.line);
    free(buf);
}

/* Imports LEN bytes at BUF; must fail with TW_EPARSE and a message. */
static void import_bad(const char *buf, size_t len, struct tw_error *err)
{
    struct tw_result r;
    memset(err, 0, sizeof(*err));
    enum tw_err rc = tw_fio_import(buf, len, &r, err);
    if (rc != TW_EPARSE)
        fail_msg("import gave %d, want TW_EPARSE (%s)", rc, err->msg);
    assert_int_equal(err->code, TW_EPARSE);
    assert_true(strlen(err->msg) > 20);
}

/* As import_bad, on an exact-size copy of S so ASan sees a read past it. */
static void import_bad_copy(const char *s)
{
    struct tw_error err;
    size_t n = strlen(s);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n); /* NOLINT(bugprone-not-null-terminated-result): on purpose */
    import_bad(copy, n, &err);
    free(copy);
}

/* Replaces the first FROM in S (NUL-terminated, heap) by TO; new string. */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    assert_non_null(p);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
    return out;
}

static void assert_plain_vda(const struct tw_result *r)
{
    assert_string_equal(r->target.device, "vda");
    assert_int_equal(r->target.n_members, 1);
    assert_string_equal(r->target.members[0], "vda");
}

/* ---- JSON, real runs ---- */

static void json_randread_qd32(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-8k-qd32.json", &r);
    assert_int_equal(r.source, TW_SRC_FIO_JSON);
    assert_string_equal(r.tool_version, "fio-3.33");
    assert_string_equal(r.id, "");
    assert_string_equal(r.profile, "");
    /* timestamp_ms 1795992192794 minus 3001 ms of runtime */
    assert_string_equal(r.started_at, "2026-11-29T22:43:09Z");
    assert_string_equal(r.method.engine, "libaio");
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
    assert_int_equal(r.method.block_size_bytes, 8192);
    assert_int_equal(r.method.queue_depth, 32);
    assert_int_equal(r.method.effective_queue_depth, 32);
    assert_int_equal(r.method.jobs, 1);
    assert_int_equal(r.method.read_pct, 100);
    assert_int_equal(r.method.runtime_ms, 3001);
    assert_int_equal(r.method.ramp_ms, 0);
    assert_true(strncmp(r.target.path, "/var/tmp/tw-fio-fixtures-", 25) == 0);
    assert_int_equal(r.target.kind, TW_TARGET_FILE);
    assert_int_equal(r.target.size_bytes, 64 << 20);
    assert_plain_vda(&r);

    assert_true(r.read.present);
    assert_false(r.write.present);
    assert_int_equal(r.read.ios, 264403);
    assert_int_equal(r.read.bytes, 2165989376);
    near(r.read.iops, 88104.965012);
    near(r.read.bw_bytes_per_s, 721755873);
    near(r.read.mbps, 721.755873);
    near(r.read.lat.min_ns, 112293);
    near(r.read.lat.max_ns, 4781660);
    near(r.read.lat.mean_ns, 362778.518704);
    near(r.read.lat.stdev_ns, 225416.028311);
    assert_int_equal(r.read.lat.n_pct, 17);
    near(pct(&r.read.lat, 50), 313344);
    near(pct(&r.read.lat, 99.9), 4177920);
    assert_true(r.read.iops_per_s.present);
    near(r.read.iops_per_s.min, 82688);
    near(r.read.iops_per_s.max, 90296);
    near(r.read.iops_per_s.mean, 86853.2);
    near(r.read.iops_per_s.stdev, 2779.708114);
    assert_int_equal(r.read.iops_per_s.samples, 5);
    /* usr_cpu 5.433333 % and sys_cpu 22.366667 % of job_runtime 3000 ms */
    near(r.cpu.usr_s, 5.433333 / 100 * 3.0);
    near(r.cpu.sys_s, 22.366667 / 100 * 3.0);
    assert_int_equal(r.errors.count, 0);
    assert_string_equal(r.errors.first, "");
}

static void json_two_jobs_add_up(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-2jobs.json", &r);
    assert_int_equal(r.method.jobs, 2);
    assert_int_equal(r.method.queue_depth, 16);
    assert_int_equal(r.method.runtime_ms, 3001);
    /* the jobs' figures: iops 41089.97001 + 40966.677774 */
    near(r.read.iops, 41089.97001 + 40966.677774);
    assert_int_equal(r.read.ios, 123311 + 122941);
    assert_int_equal(r.read.bytes, (123311 + 122941) * 8192LL);
    near(r.read.bw_bytes_per_s, 336609034.0 + 335599024.0);
    near(r.read.lat.min_ns, 65837);
    near(r.read.lat.max_ns, 2507802);
    /* count-weighted mean and pooled standard deviation */
    near(r.read.lat.mean_ns, 389448.84403397737);
    near(r.read.lat.stdev_ns, 134371.82585962844);
    /* percentiles of the job with most I/Os (the first, 123311) */
    near(pct(&r.read.lat, 99.9), 1351680);
    near(pct(&r.read.lat, 50), 354304);
    /* per-second IOPS: sums of the jobs' means, mins and maxes */
    near(r.read.iops_per_s.mean, 78992.0);
    near(r.read.iops_per_s.min, 67762);
    near(r.read.iops_per_s.max, 97248);
    near(r.read.iops_per_s.stdev, 8239.236493915683);
    near(r.cpu.usr_s, (3.533333 + 2.8) / 100 * 3.0);
}

static void json_mixed_has_both_directions(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randrw-75.json", &r);
    assert_int_equal(r.method.pattern, TW_PAT_RANDRW);
    assert_int_equal(r.method.read_pct, 75);
    assert_true(r.read.present);
    assert_true(r.write.present);
    assert_int_equal(r.read.ios, 181953);
    assert_int_equal(r.write.ios, 60754);
    near(r.read.iops, 60630.789737);
    near(r.write.iops, 20244.585138);
    near(r.write.bw_bytes_per_s, 165843641);
    near(r.read.lat.mean_ns, 190268.96382);
    near(r.write.lat.mean_ns, 218532.796244);
    near(r.write.lat.max_ns, 1026651);
    near(pct(&r.write.lat, 99.9), 782336);
    near(pct(&r.read.lat, 50), 173056);
}

static void json_psync_runs_at_qd1(void **state)
{
    (void)state;
    struct tw_result r;
    /* The file starts with fio's "note: ..." line before the '{'. */
    import_ok("fio/psync-read-16k-qd8.json", &r);
    assert_int_equal(r.source, TW_SRC_FIO_JSON);
    assert_string_equal(r.method.engine, "psync");
    assert_int_equal(r.method.pattern, TW_PAT_READ);
    assert_int_equal(r.method.block_size_bytes, 16384);
    assert_int_equal(r.method.queue_depth, 8);
    assert_int_equal(r.method.effective_queue_depth, 1);
    assert_int_equal(r.read.ios, 71633);
    near(r.read.iops, 23869.710097);
    near(r.read.lat.mean_ns, 41512.414432);
    near(pct(&r.read.lat, 99.9), 284672);
}

static void json_group_reporting(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-group.json", &r);
    assert_int_equal(r.method.jobs, 2);          /* numjobs of the group */
    assert_int_equal(r.method.runtime_ms, 3001); /* not job_runtime 6000 */
    assert_int_equal(r.read.ios, 250241);
    near(r.read.iops, 83385.871376);
    near(r.read.lat.mean_ns, 191377.069277);
    assert_int_equal(r.read.iops_per_s.samples, 10);
    /* job_runtime 6000 ms is both jobs' time: usr_cpu 4.583333 % of it */
    near(r.cpu.usr_s, 4.583333 / 100 * 6.0);
}

static void json_group_reporting_on_command_line(void **state)
{
    (void)state;
    /* fio 3.33 leaves --group_reporting out of "job options": one entry
     * with numjobs 4 still stands for four processes. */
    struct tw_result r;
    import_ok("fio/libaio-randread-group-cmdline.json", &r);
    assert_int_equal(r.method.jobs, 4);
    assert_int_equal(r.method.queue_depth, 256);
    assert_int_equal(r.method.ramp_ms, 1000);
    assert_int_equal(r.method.runtime_ms, 5005);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
}

/* ---- text, real runs ---- */

static void text_randread_qd32(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-8k-qd32.txt", &r);
    assert_int_equal(r.source, TW_SRC_FIO_TEXT);
    assert_string_equal(r.tool_version, "fio-3.33");
    /* "Sun Nov 29 22:43:29 2026" (taken as UTC) minus 3001 ms */
    assert_string_equal(r.started_at, "2026-11-29T22:43:25Z");
    assert_string_equal(r.method.engine, "libaio");
    /* The text doesn't show direct=, but vda's disk statistics do: 241,275
     * reads (of fio's 251,294) with 76,213 ms of read ticks over 3,001 ms,
     * 25 reads in flight, which buffered libaio (one per job) can't keep. */
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_DISK_DEPTH);
    assert_int_equal(r.read.lat.kind, TW_LAT_TOTAL);
    assert_int_equal(r.read.lat.pct_kind, TW_LAT_COMPLETION);
    assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
    assert_int_equal(r.method.block_size_bytes, 8192);
    assert_int_equal(r.method.queue_depth, 32);
    assert_int_equal(r.method.effective_queue_depth, 32);
    assert_int_equal(r.method.jobs, 1);
    assert_int_equal(r.method.runtime_ms, 3001);
    assert_string_equal(r.target.path, "");
    assert_int_equal(r.target.kind, TW_TARGET_UNKNOWN);
    assert_int_equal(r.target.size_bytes, -1);
    assert_plain_vda(&r);
    assert_false(r.write.present);
    /* "issued rwts: total=251294": exact, unlike "IOPS=83.7k" */
    assert_int_equal(r.read.ios, 251294);
    assert_int_equal(r.read.bytes, 251294LL * 8192);
    near(r.read.iops, 251294 * 1000.0 / 3001);
    near(r.read.bw_bytes_per_s, 251294 * 8192 * 1000.0 / 3001);
    /* "lat (usec): min=87, max=4010, avg=381.65, stdev=132.65" */
    near(r.read.lat.min_ns, 87000);
    near(r.read.lat.max_ns, 4010000);
    near(r.read.lat.mean_ns, 381650);
    near(r.read.lat.stdev_ns, 132650);
    assert_int_equal(r.read.lat.n_pct, 17);
    near(pct(&r.read.lat, 50), 334000);
    near(pct(&r.read.lat, 99.9), 1663000);
    near(r.read.iops_per_s.min, 73750);
    near(r.read.iops_per_s.max, 94262);
    near(r.read.iops_per_s.mean, 84045.20);
    near(r.read.iops_per_s.stdev, 7836.18);
    assert_int_equal(r.read.iops_per_s.samples, 5);
    /* "cpu : usr=7.67%, sys=24.70%" of 3001 ms */
    near(r.cpu.usr_s, 0.0767 * 3.001);
    near(r.cpu.sys_s, 0.2470 * 3.001);
}

static void text_two_jobs_add_up(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-2jobs.txt", &r);
    assert_int_equal(r.method.jobs, 2);
    assert_int_equal(r.read.ios, 134904 + 132808);
    near(r.read.iops, (134904 + 132808) * 1000.0 / 3001);
    near(r.read.lat.min_ns, 64000);
    near(r.read.lat.max_ns, 5017000);
    near(r.read.lat.mean_ns, (134904 * 355370.0 + 132808 * 361050.0) / (134904 + 132808));
    near(pct(&r.read.lat, 99.9), 4228000); /* the first job has more */
    near(r.read.iops_per_s.mean, 45249.20 + 44738.00);
    near(r.read.iops_per_s.min, 41354 + 41296);
    near(r.cpu.usr_s, (0.0480 + 0.0490) * 3.001);
}

static void text_mixed_has_both_directions(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randrw-75.txt", &r);
    assert_int_equal(r.method.pattern, TW_PAT_RANDRW);
    /* no rwmixread in the text: the measured 174840 / 233162 reads */
    assert_int_equal(r.method.read_pct, 75);
    assert_int_equal(r.read.ios, 174840);
    assert_int_equal(r.write.ios, 58322);
    near(r.write.lat.mean_ns, 226360);
    near(r.write.lat.max_ns, 5297000);
    near(pct(&r.write.lat, 99.9), 4146000);
    near(pct(&r.read.lat, 99.9), 2245000);
    near(r.write.iops_per_s.mean, 19229.60);
}

static void text_psync_runs_at_qd1(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/psync-read-16k-qd8.txt", &r);
    assert_string_equal(r.method.engine, "psync");
    assert_int_equal(r.method.pattern, TW_PAT_READ);
    assert_int_equal(r.method.block_size_bytes, 16384); /* "16.0KiB" */
    assert_int_equal(r.method.queue_depth, 8);
    assert_int_equal(r.method.effective_queue_depth, 1);
    assert_int_equal(r.read.ios, 50392);
    assert_int_equal(r.read.bytes, 50392LL * 16384);
    near(r.read.lat.mean_ns, 59190);
    near(pct(&r.read.lat, 99.9), 644000);
}

static void text_group_reporting(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-group.txt", &r);
    assert_int_equal(r.method.jobs, 2); /* "jobs=2" */
    assert_int_equal(r.method.queue_depth, 8);
    assert_int_equal(r.read.ios, 257180);
    near(r.read.lat.mean_ns, 186290);
    assert_int_equal(r.read.iops_per_s.samples, 10);
    /* usr=3.50% of both jobs' time, 2 x 3001 ms */
    near(r.cpu.usr_s, 0.0350 * 3.001 * 2);
}

/* Text and JSON of the same kind of run give records of the same shape. */
static void text_and_json_agree_in_structure(void **state)
{
    (void)state;
    static const char *const names[] = {"libaio-randread-8k-qd32", "libaio-randread-2jobs",
                                        "libaio-randrw-75", "psync-read-16k-qd8",
                                        "libaio-randread-group"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char rel[128];
        struct tw_result j, t;
        snprintf(rel, sizeof(rel), "fio/%s.json", names[i]);
        import_ok(rel, &j);
        snprintf(rel, sizeof(rel), "fio/%s.txt", names[i]);
        import_ok(rel, &t);
        assert_string_equal(j.tool_version, t.tool_version);
        assert_string_equal(j.method.engine, t.method.engine);
        assert_int_equal(j.method.pattern, t.method.pattern);
        assert_int_equal(j.method.block_size_bytes, t.method.block_size_bytes);
        assert_int_equal(j.method.queue_depth, t.method.queue_depth);
        assert_int_equal(j.method.effective_queue_depth, t.method.effective_queue_depth);
        assert_int_equal(j.method.jobs, t.method.jobs);
        assert_int_equal(j.method.read_pct, t.method.read_pct);
        assert_int_equal(j.method.runtime_ms, t.method.runtime_ms);
        assert_int_equal(j.read.present, t.read.present);
        assert_int_equal(j.write.present, t.write.present);
        assert_int_equal(j.read.lat.n_pct, t.read.lat.n_pct);
        assert_int_equal(j.read.iops_per_s.samples, t.read.iops_per_s.samples);
        assert_string_equal(j.target.device, t.target.device);
        assert_int_equal(j.target.n_members, t.target.n_members);
        assert_true(j.started_at[0] && t.started_at[0]);
        /* separate runs, but the same machine: within a factor of 3 */
        assert_true(t.read.iops > j.read.iops / 3 && t.read.iops < j.read.iops * 3);
    }
}

/* ---- constructed text ---- */

static void text_stripe_device_and_members(void **state)
{
    (void)state;
    struct tw_result r, plain;
    import_ok("fio/constructed-lvm-stripe.txt", &r);
    assert_string_equal(r.target.device, "dm-8");
    assert_int_equal(r.target.n_members, 3);
    assert_string_equal(r.target.members[0], "sdg");
    assert_string_equal(r.target.members[1], "sdh");
    assert_string_equal(r.target.members[2], "sdi");
    import_ok("fio/libaio-randread-8k-qd32.txt", &plain);
    assert_int_equal(r.read.ios, plain.read.ios);
    near(r.read.lat.mean_ns, plain.read.lat.mean_ns);

    /* The same without indentation: the aggr fields mark the head. */
    size_t len;
    char *buf = th_fixture("fio/constructed-lvm-stripe.txt", &len);
    char *flat = replace(buf, "    dm-8:", "dm-8:");
    char *flat2 = replace(flat, "  sdg:", "sdg:");
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import_text(flat2, strlen(flat2), &r, &err), TW_OK);
    assert_string_equal(r.target.device, "dm-8");
    assert_int_equal(r.target.n_members, 3);
    assert_string_equal(r.target.members[0], "sdg");
    free(buf);
    free(flat);
    free(flat2);
}

static void text_without_leading_spaces_is_the_same(void **state)
{
    (void)state;
    struct tw_result a, b;
    import_ok("fio/libaio-randread-8k-qd32.txt", &a);
    import_ok("fio/constructed-stripped-randread.txt", &b);
    char *ja = tw_result_to_json(&a, 0);
    char *jb = tw_result_to_json(&b, 0);
    assert_non_null(ja);
    assert_non_null(jb);
    assert_string_equal(ja, jb);
    assert_int_equal(b.read.ios, 251294);
    near(pct(&b.read.lat, 99.9), 1663000);

    /* ... and with Windows line ends, as some editors save a paste */
    size_t len;
    char *buf = th_fixture("fio/constructed-stripped-randread.txt", &len);
    char *crlf = malloc(2 * len + 1);
    assert_non_null(crlf);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\n')
            crlf[n++] = '\r';
        crlf[n++] = buf[i];
    }
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(crlf, n, &b, &err), TW_OK);
    char *jc = tw_result_to_json(&b, 0);
    assert_non_null(jc);
    assert_string_equal(ja, jc);
    free(jc);
    free(crlf);
    free(buf);
    free(ja);
    free(jb);
}

/* Units other than usec, num2str's "k" suffix, a write-only job. */
static void text_units_and_suffixes(void **state)
{
    (void)state;
    static const char text[] =
        "w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, "
        "(T) 4096B-4096B, ioengine=io_uring, iodepth=4\n"
        "fio-3.36\n"
        "w: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  5 10:00:10 2026\n"
        "  write: IOPS=1000, BW=3906KiB/s (4000kB/s)(39.1MiB/10000msec); "
        "0 zone resets\n"
        "    clat (msec): min=1, max=12, avg= 3.50, stdev= 1.25\n"
        "     lat (msec): min=1, max=1.2k, avg= 3.51, stdev= 1.26\n"
        "    clat percentiles (msec):\n"
        "     |  1.00th=[    2],  5.00th=[    2], 50.00th=[    3],\n"
        "     | 99.00th=[   11], 99.90th=[ 1.2k]\n"
        "  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1\n"
        "     issued rwts: total=0,10000,0,0 short=0,0,0,0 dropped=0,0,0,0\n"
        "Run status group 0 (all jobs):\n";
    struct tw_result r;
    struct tw_error err = {0};
    /* exact length, no terminator read */
    char *copy = malloc(sizeof(text) - 1);
    assert_non_null(copy);
    memcpy(copy, text, sizeof(text) - 1);
    assert_int_equal(tw_fio_import(copy, sizeof(text) - 1, &r, &err), TW_OK);
    free(copy);
    assert_string_equal(r.tool_version, "fio-3.36");
    assert_string_equal(r.started_at, "2026-01-05T10:00:00Z");
    assert_string_equal(r.method.engine, "io_uring");
    assert_int_equal(r.method.effective_queue_depth, 4);
    assert_int_equal(r.method.pattern, TW_PAT_RANDWRITE);
    assert_int_equal(r.method.read_pct, 0);
    assert_int_equal(r.method.block_size_bytes, 4096);
    assert_false(r.read.present);
    assert_true(r.write.present);
    assert_int_equal(r.write.ios, 10000);
    assert_int_equal(r.write.bytes, 10000 * 4096);
    near(r.write.iops, 1000);
    near(r.write.lat.min_ns, 1e6);
    near(r.write.lat.max_ns, 1.2e9);
    near(r.write.lat.mean_ns, 3.51e6);
    near(pct(&r.write.lat, 1), 2e6);
    near(pct(&r.write.lat, 99.9), 1.2e9);
    assert_false(r.write.iops_per_s.present);
    assert_string_equal(r.target.device, "");
    assert_int_equal(r.target.n_members, 0);
}

static void text_job_error(void **state)
{
    (void)state;
    size_t len;
    char *buf = th_fixture("fio/libaio-randread-8k-qd32.txt", &len);
    char *bad = replace(buf, "err= 0:",
                        "err= 5 (file:io_u.c:1889, func=io_u error, "
                        "error=Input/output error):");
    struct tw_result r;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(bad, strlen(bad), &r, &err), TW_OK);
    assert_int_equal(r.errors.count, 1);
    assert_non_null(strstr(r.errors.first, "fio job randread8k: error 5"));
    assert_non_null(strstr(r.errors.first, "Input/output error"));
    free(buf);
    free(bad);
}

/* A terminal capture: fio's progress line redrawn with '\r' before the
 * result, and a job name in another script. */
static void text_terminal_capture(void **state)
{
    (void)state;
    size_t len;
    char *buf = th_fixture("fio/libaio-randread-8k-qd32.txt", &len);
    char *a = replace(buf, "randread8k: (groupid=",
                      "Jobs: 1 (f=1): [r(1)][100.0%][r=654MiB/s][r=83.7k IOPS]"
                      "[eta 00m:00s]\rrandread8k: (groupid=");
    char *b = replace(a, "randread8k: (g=0)",
                      "r\xc3\xa9"
                      "ad: (g=0)");
    struct tw_result r;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(a, strlen(a), &r, &err), TW_OK);
    assert_int_equal(r.read.ios, 251294);
    assert_string_equal(r.started_at, "2026-11-29T22:43:25Z");
    /* the header is no longer named like the result: the first is used */
    assert_int_equal(tw_fio_import(b, strlen(b), &r, &err), TW_OK);
    assert_int_equal(r.method.queue_depth, 32);
    char *json = tw_result_to_json(&r, 0);
    assert_non_null(json);
    free(json);
    free(buf);
    free(a);
    free(b);
}

/* Names cut to fit a field stay valid UTF-8, so the record can be written. */
static void json_long_names_stay_valid_utf8(void **state)
{
    (void)state;
    char name[601];
    for (size_t i = 0; i < 300; i++)
        memcpy(name + 2 * i, "\xc3\xa9", 2); /* é */
    name[600] = '\0';
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "{\"jobs\": [{\"jobname\": \"xy%s\", \"error\": 5,"
             " \"job options\": {\"ioengine\": \"%s\"},"
             " \"read\": {\"total_ios\": 0}}],"
             " \"disk_util\": [{\"name\": \"%s\"}]}",
             name, name, name);
    struct tw_result r;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(doc, strlen(doc), &r, &err), TW_OK);
    assert_int_equal(r.errors.count, 1);
    assert_true(strncmp(r.errors.first, "fio job xy\xc3\xa9", 12) == 0);
    assert_true(strlen(r.method.engine) > 0);
    assert_true(strlen(r.target.device) > 0);
    char *json = tw_result_to_json(&r, 0);
    assert_non_null(json);
    struct tw_result back;
    if (tw_result_from_json(json, strlen(json), &back, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(back.method.engine, r.method.engine);
    assert_string_equal(back.errors.first, r.errors.first);
    free(json);
}

/* ---- JSON variants fio can produce ---- */

static void json_job_error(void **state)
{
    (void)state;
    size_t len;
    char *buf = th_fixture("fio/libaio-randread-8k-qd32.json", &len);
    char *bad = replace(buf, "\"error\" : 0", "\"error\" : 5");
    struct tw_result r;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(bad, strlen(bad), &r, &err), TW_OK);
    assert_int_equal(r.errors.count, 1);
    assert_string_equal(r.errors.first, "fio job randread8k: error 5");
    free(buf);
    free(bad);
}

/* A one-job document with the given options, read figures and disks. */
static void import_doc(const char *opts, const char *read, const char *disks, struct tw_result *r)
{
    char doc[8192];
    snprintf(doc, sizeof(doc),
             "fio: some diagnostic\n"
             "{\"fio version\": \"fio-3.35\", \"timestamp\": 1767607210,"
             " \"jobs\": [{\"jobname\": \"j\", \"error\": 0,"
             " \"job options\": {%s}, \"read\": {%s},"
             " \"job_runtime\": 10000, \"usr_cpu\": 1.0, \"sys_cpu\": 2.0}],"
             " \"disk_util\": [%s]}\n"
             "fio: trailing text after the document\n",
             opts, read, disks);
    struct tw_error err = {0};
    if (tw_fio_import(doc, strlen(doc), r, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

#define READ_FIGS                                                                                  \
    "\"total_ios\": 1000, \"io_bytes\": 8192000, \"iops\": 100,"                                   \
    " \"bw_bytes\": 819200, \"runtime\": 10000"

static void json_option_quirks(void **state)
{
    (void)state;
    struct tw_result r;
    /* fio's kb_base=1024 default: "8KiB" is 8000 bytes; no ioengine means
     * psync; ramp_time in seconds; a block device */
    import_doc("\"rw\": \"randread:4\", \"bs\": \"8KiB\", \"iodepth\": \"16\","
               " \"ramp_time\": \"5\", \"filename\": \"/dev/sdc\","
               " \"size\": \"10G\"",
               READ_FIGS, "", &r);
    assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
    assert_int_equal(r.method.block_size_bytes, 8000);
    assert_string_equal(r.method.engine, "psync");
    assert_int_equal(r.method.queue_depth, 16);
    assert_int_equal(r.method.effective_queue_depth, 1);
    assert_int_equal(r.method.ramp_ms, 5000);
    assert_int_equal(r.method.direct, TW_DIRECT_NO);
    assert_int_equal(r.target.kind, TW_TARGET_BLOCK);
    assert_int_equal(r.target.size_bytes, -1);
    assert_string_equal(r.target.device, "");
    assert_string_equal(r.started_at, "2026-01-05T10:00:00Z");
    assert_false(r.read.iops_per_s.present);

    /* kb_base=1000 reverses it; bs=read,write; readwrite is rw */
    import_doc("\"rw\": \"readwrite\", \"bs\": \"8KiB,64k\","
               " \"kb_base\": \"1000\", \"rwmixwrite\": \"30\","
               " \"ioengine\": \"io_uring\", \"buffered\": \"0\"",
               READ_FIGS, "", &r);
    assert_int_equal(r.method.pattern, TW_PAT_RW);
    assert_int_equal(r.method.block_size_bytes, 8192);
    assert_int_equal(r.method.read_pct, 70);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);

    /* a write-only job takes the write block size */
    import_doc("\"rw\": \"write\", \"bs\": \"4k,64k\"", READ_FIGS, "", &r);
    assert_int_equal(r.method.block_size_bytes, 65536);
    assert_int_equal(r.method.read_pct, 0);

    /* a mixed job without rwmixread: fio's 50 */
    import_doc("\"rw\": \"randrw\", \"ramp_time\": \"1500ms\"", READ_FIGS, "", &r);
    assert_int_equal(r.method.read_pct, 50);
    assert_int_equal(r.method.ramp_ms, 1500);
}

static void json_percentile_choice(void **state)
{
    (void)state;
    struct tw_result r;
    /* lat_percentiles=1: total-latency percentiles win over clat ones */
    import_doc("\"rw\": \"randread\"",
               READ_FIGS ", \"clat_ns\": {\"min\": 1, \"max\": 9, \"mean\": 5,"
                         " \"stddev\": 1, \"N\": 1000, \"percentile\":"
                         " {\"50.000000\": 111}},"
                         " \"lat_ns\": {\"min\": 2, \"max\": 10, \"mean\": 6,"
                         " \"stddev\": 1, \"N\": 1000, \"percentile\":"
                         " {\"50.000000\": 222, \"99.000000\": 333}}",
               "", &r);
    assert_int_equal(r.read.lat.n_pct, 2);
    near(pct(&r.read.lat, 50), 222);
    near(r.read.lat.mean_ns, 6);

    /* N = 0 and a list of zeros (older fio; since issue #1478 fio leaves
     * the list out): no percentiles */
    import_doc("\"rw\": \"randread\"",
               READ_FIGS ", \"lat_ns\": {\"min\": 0, \"max\": 0, \"mean\": 0,"
                         " \"stddev\": 0, \"N\": 0},"
                         " \"clat_ns\": {\"min\": 0, \"max\": 0, \"mean\": 0,"
                         " \"stddev\": 0, \"N\": 0, \"percentile\":"
                         " {\"50.000000\": 0, \"99.000000\": 0}}",
               "", &r);
    assert_true(r.read.present);
    assert_int_equal(r.read.lat.n_pct, 0);
}

static void json_stripes(void **state)
{
    (void)state;
    struct tw_result r;
    /* fio's layout: the dm head with aggr_* fields, then its slaves */
    import_doc("\"rw\": \"read\"", READ_FIGS,
               "{\"name\": \"dm-8\", \"read_ios\": 5, \"aggr_read_ios\": 2,"
               " \"aggr_util\": 90.0}, {\"name\": \"sdg\"}, {\"name\": \"sdh\"},"
               " {\"name\": \"sdi\"}",
               &r);
    assert_string_equal(r.target.device, "dm-8");
    assert_int_equal(r.target.n_members, 3);
    assert_string_equal(r.target.members[2], "sdi");

    /* dm-crypt over LVM: the middle dm layer is not a member disk */
    import_doc("\"rw\": \"read\"", READ_FIGS,
               "{\"name\": \"dm-1\", \"aggr_util\": 1.0},"
               " {\"name\": \"dm-0\", \"aggr_util\": 1.0},"
               " {\"name\": \"nvme0n1\"}",
               &r);
    assert_string_equal(r.target.device, "dm-1");
    assert_int_equal(r.target.n_members, 1);
    assert_string_equal(r.target.members[0], "nvme0n1");

    /* a "slaves" list, should fio nest them */
    import_doc("\"rw\": \"read\"", READ_FIGS,
               "{\"name\": \"md0\", \"slaves\": [\"sdb\", {\"name\": \"sdc\"}]}", &r);
    assert_string_equal(r.target.device, "md0");
    assert_int_equal(r.target.n_members, 2);
    assert_string_equal(r.target.members[1], "sdc");

    /* several devices and no stripe head: jobs on several disks, refused
     * rather than taken for the first one's */
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "{\"global options\": {}, \"jobs\": [{\"jobname\": \"j\", \"job options\": "
             "{\"rw\": \"read\"}, \"read\": {%s}}], \"disk_util\": [{\"name\": \"sdc\", "
             "\"read_ios\": 500}, {\"name\": \"sdd\", \"read_ios\": 500}]}",
             READ_FIGS);
    struct tw_error err;
    import_bad(doc, strlen(doc), &err);
    assert_non_null(strstr(err.msg, "2 devices (sdc, sdd)"));
}

/* Sections of one method on different files (filename=, directory=) ran
 * on different disks: not one disk's result. */
static void sections_on_two_disks(void **state)
{
    (void)state;
    static const char fmt[] =
        "{\"global options\": {\"rw\": \"randread\", \"bs\": \"8k\"}, \"jobs\": ["
        "{\"jobname\": \"a\", \"job options\": {\"%s\": \"/data1/f\"}, \"read\": {%s}},"
        "{\"jobname\": \"b\", \"job options\": {\"%s\": \"%s\"}, \"read\": {%s}}]}";
    static const char *const keys[] = {"filename", "directory"};
    char doc[2048];
    struct tw_error err;
    struct tw_result r;
    for (int k = 0; k < 2; k++) {
        snprintf(doc, sizeof(doc), fmt, keys[k], READ_FIGS, keys[k], "/data2/f", READ_FIGS);
        import_bad(doc, strlen(doc), &err);
        assert_non_null(strstr(err.msg, "ran differently"));
        assert_non_null(strstr(err.msg, "/data2/f"));
        /* the same file: one method, both jobs */
        snprintf(doc, sizeof(doc), fmt, keys[k], READ_FIGS, keys[k], "/data1/f", READ_FIGS);
        assert_int_equal(tw_fio_import(doc, strlen(doc), &r, &err), TW_OK);
        assert_int_equal(r.method.jobs, 2);
    }
}

/* ---- bad input ---- */

static void bad_fixtures(void **state)
{
    (void)state;
    struct tw_error err;
    size_t len;
    char *buf = th_fixture("fio/constructed-truncated.json", &len);
    import_bad(buf, len, &err);
    assert_non_null(strstr(err.msg, "cut short"));
    assert_true(err.line > 100);
    free(buf);

    buf = th_fixture("fio/constructed-foreign.csv", &len);
    import_bad(buf, len, &err);
    assert_non_null(strstr(err.msg, "not fio's output"));
    free(buf);
}

static void bad_inline(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "",
        "   \n\n\t\n",
        "{",
        "{\"a\": 1}",
        "[1, 2, 3]\n",
        "{\"jobs\": 5}",
        "{\"jobs\": []}",
        "{\"jobs\": [7]}",
        "{\"jobs\": [{\"job options\": {\"rw\": \"trim\"}}]}",
        "{\"jobs\": [{\"job options\": {\"rw\": \"sideways\"}}]}",
        "{\"jobs\": [{\"job options\": {\"bs\": \"0\"}}]}",
        "{\"jobs\": [{\"job options\": {\"iodepth\": \"-3\"}}]}",
        "{\"jobs\": [{\"read\": {\"total_ios\": -5}}]}",
        "{\"jobs\": [{\"read\": {\"total_ios\": \"many\"}}]}",
        "{\"jobs\": [{\"read\": {\"total_ios\": 1e300}}]}",
        "{\"jobs\": [{\"read\": {\"total_ios\": 1, \"lat_ns\": {\"N\": 1, \"min\": -1}}}]}",
        "fio: only diagnostics\nfio: and nothing else\n",
        "3;fio-3.33;t;0;0;2364;788;100824;3001;0;0;0.000000;0.000000\n",
        /* a job that moved nothing */
        "{\"jobs\": [{\"jobname\": \"x\", \"read\": {\"total_ios\": 0}}]}",
    };
    /* Text cases, each written over several lines. */
    static const char *const texts[] = {
        /* a header but no job result */
        "t: (g=0): rw=randread, bs=(R) 8192B-8192B, ioengine=libaio, "
        "iodepth=32\nfio-3.33\nStarting 1 process\n",
        /* a job result without its header line */
        "t: (groupid=0, jobs=1): err= 0: pid=1: Sun Nov 29 22:36:23 2026\n"
        "  read: IOPS=10, BW=80KiB/s (82kB/s)(240KiB/3000msec)\n",
        /* a trim job in text */
        "t: (g=0): rw=randtrim, bs=(R) 8192B-8192B, ioengine=libaio, "
        "iodepth=1\nt: (groupid=0, jobs=1): err= 0: pid=1: Sun Nov 29 "
        "22:36:23 2026\n  trim: IOPS=10, BW=80KiB/s (82kB/s)(240KiB/3000msec)\n",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        import_bad_copy(cases[i]);
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        import_bad_copy(texts[i]);
    struct tw_error err;
    import_bad(NULL, 0, &err);
    struct tw_result r;
    assert_int_equal(tw_fio_import_json("", 0, &r, &err), TW_EPARSE);
    assert_int_equal(tw_fio_import_text("", 0, &r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "empty"));
}

/* ---- the record survives its JSON form ---- */

static void round_trip(void **state)
{
    (void)state;
    static const char *const files[] = {
        "fio/libaio-randrw-75.json", "fio/libaio-randread-2jobs.txt",
        "fio/constructed-lvm-stripe.txt", "fio/psync-read-16k-qd8.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct tw_result a, b;
        struct tw_error err = {0};
        import_ok(files[i], &a);
        snprintf(a.id, sizeof(a.id), "0b6f3a52-7c1e-4c1a-9a53-6f0d2f6f7e10");
        char *s = tw_result_to_json(&a, 0);
        assert_non_null(s);
        if (tw_result_from_json(s, strlen(s), &b, &err) != TW_OK)
            fail_msg("%s: %s", files[i], err.msg);
        free(s);
        assert_string_equal(a.id, b.id);
        assert_int_equal(a.source, b.source);
        assert_string_equal(a.started_at, b.started_at);
        assert_string_equal(a.tool_version, b.tool_version);
        assert_string_equal(a.method.engine, b.method.engine);
        assert_int_equal(a.method.pattern, b.method.pattern);
        assert_int_equal(a.method.block_size_bytes, b.method.block_size_bytes);
        assert_int_equal(a.method.effective_queue_depth, b.method.effective_queue_depth);
        assert_int_equal(a.method.jobs, b.method.jobs);
        assert_int_equal(a.method.read_pct, b.method.read_pct);
        assert_string_equal(a.target.device, b.target.device);
        assert_int_equal(a.target.n_members, b.target.n_members);
        assert_int_equal(a.read.present, b.read.present);
        assert_int_equal(a.write.present, b.write.present);
        assert_int_equal(a.read.ios, b.read.ios);
        near(b.read.iops, a.read.iops);
        near(b.read.lat.mean_ns, a.read.lat.mean_ns);
        near(b.read.lat.stdev_ns, a.read.lat.stdev_ns);
        assert_int_equal(a.read.lat.n_pct, b.read.lat.n_pct);
        near(pct(&b.read.lat, 99.9), pct(&a.read.lat, 99.9));
        near(b.cpu.usr_s, a.cpu.usr_s);
        assert_int_equal(a.errors.count, b.errors.count);
    }
}

/* ---- what the output leaves out: direct, the job file, the command line ---- */

/* Imports fixture REL with hints: the job file fixture FILE (or NULL), fio
 * arguments ARGS (or NULL), section SEC (or NULL).  Returns the code; R and
 * ERR are filled. */
static enum tw_err import_hinted(const char *rel, const char *file, const char *args,
                                 const char *sec, struct tw_result *r, struct tw_error *err)
{
    size_t len, flen = 0;
    char *buf = th_fixture(rel, &len);
    char *fbuf = file ? th_fixture(file, &flen) : NULL;
    struct tw_fio_hints h = {.job_file = fbuf,
                             .job_file_len = flen,
                             .fio_args = args,
                             .fio_args_len = args ? strlen(args) : 0,
                             .section = sec};
    memset(err, 0, sizeof(*err));
    enum tw_err rc = tw_fio_import_with(buf, len, &h, r, err);
    free(buf);
    free(fbuf);
    return rc;
}

static void hinted_ok(const char *rel, const char *file, const char *args, const char *sec,
                      struct tw_result *r)
{
    struct tw_error err;
    if (import_hinted(rel, file, args, sec, r, &err) != TW_OK)
        fail_msg("%s: %s", rel, err.msg);
}

/* The fixture REL without the line CUT, imported with fio arguments ARGS:
 * refused with WORDS in the message; without ARGS it imports. */
static void hint_json_bad(const char *rel, const char *cut, const char *args, const char *words)
{
    size_t len;
    char *buf = th_fixture(rel, &len);
    char *doc = replace(buf, cut, "");
    free(buf);
    struct tw_result r;
    struct tw_error err = {0};
    struct tw_fio_hints h = {.fio_args = args, .fio_args_len = strlen(args)};
    if (tw_fio_import_with(doc, strlen(doc), &h, &r, &err) != TW_EPARSE)
        fail_msg("%s without %s: import with %s did not fail with TW_EPARSE", rel, cut, args);
    if (!strstr(err.msg, words))
        fail_msg("%s: message \"%s\" lacks \"%s\"", rel, err.msg, words);
    assert_int_equal(tw_fio_import(doc, strlen(doc), &r, &err), TW_OK);
    free(doc);
}

static void hinted_bad(const char *rel, const char *file, const char *args, const char *sec,
                       const char *words)
{
    struct tw_result r;
    struct tw_error err;
    if (import_hinted(rel, file, args, sec, &r, &err) != TW_EPARSE)
        fail_msg("%s: import did not fail with TW_EPARSE", rel);
    if (!strstr(err.msg, words))
        fail_msg("%s: message \"%s\" lacks \"%s\"", rel, err.msg, words);
}

/* Three P30s (5,000 IOPS, 200 MB/s each) on DEVS (three names, or one). */
static void judge_on(const struct tw_result *r, const char *const devs[], size_t n,
                     struct tw_verdict *v)
{
    struct tw_tier_catalog cat;
    struct tw_error err = {0};
    if (tw_tier_catalog_builtin(&cat, &err) != TW_OK)
        fail_msg("catalog: %s", err.msg);
    struct tw_inventory *inv = calloc(1, sizeof(*inv));
    assert_non_null(inv);
    tw_inventory_init(inv);
    snprintf(inv->vm.name, sizeof(inv->vm.name), "sql-01");
    for (size_t i = 0; i < n; i++) {
        struct tw_disk *d = &inv->disks[inv->n_disks++];
        memset(d, 0, sizeof(*d));
        snprintf(d->name, sizeof(d->name), "sql-01-data%zu", i);
        d->role = TW_DISK_DATA;
        d->lun = (int)i;
        snprintf(d->sku, sizeof(d->sku), "Premium_LRS");
        d->size_gib = 1024;
        snprintf(d->tier, sizeof(d->tier), "P30");
        d->caching = TW_CACHE_NONE;
        snprintf(d->device, sizeof(d->device), "/dev/%s", devs[i]);
    }
    if (tw_verdict_check(r, inv, &cat, NULL, v, &err) != TW_OK)
        fail_msg("verdict: %s", err.msg);
    free(inv);
    tw_tier_catalog_cleanup(&cat);
}

/*
 * Microsoft's fioread.ini method pasted as text (randread, 4 KiB,
 * iodepth=256, 4 jobs, direct=1 in the job file, not in the text) over a
 * stripe of three P30s that delivers 72 % of their 15,000 IOPS.  The
 * stripe's disk statistics show about 1,000 reads in flight, which buffered
 * libaio can't keep (one per job): the run was direct, and it is judged.
 */
static void text_fioread_stripe_is_judged(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/constructed-fioread-stripe.txt", &r);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_DISK_DEPTH);
    assert_int_equal(r.method.jobs, 4);
    assert_int_equal(r.method.queue_depth, 256);
    assert_int_equal(r.method.block_size_bytes, 4096);
    assert_int_equal(r.read.ios, 4 * 32400);
    assert_string_equal(r.target.device, "dm-0");
    assert_int_equal(r.target.n_members, 3);
    char *json = tw_result_to_json(&r, 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"direct\": true"));
    assert_non_null(strstr(json, "\"direct_basis\": \"libaio depth at the disk in the text\""));
    assert_non_null(strstr(json, "\"percentiles_kind\": \"completion\""));
    free(json);

    static const char *const stripe[] = {"sdc", "sdd", "sde"};
    struct tw_verdict v;
    judge_on(&r, stripe, 3, &v);
    if (v.kind != TW_VERDICT_UNDER)
        fail_msg("verdict %s: %s", tw_verdict_name(v.kind), v.reason);
    near(v.expected_iops, 15000);
    assert_true(v.ratio_iops > 0.71 && v.ratio_iops < 0.73);

    /* The same run on this machine's own disk: too few reads in flight at
     * vda to tell (fio held each job to 2,700 IOPS), so direct is unknown
     * and the verdict says what to give. */
    import_ok("fio/fioread-4jobs.txt", &r);
    assert_int_equal(r.method.direct, TW_DIRECT_UNKNOWN);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_NONE);
    json = tw_result_to_json(&r, 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"direct\": null"));
    assert_non_null(strstr(json, "\"direct_basis\": \"unknown\""));
    free(json);
    static const char *const one[] = {"vda"};
    judge_on(&r, one, 1, &v);
    assert_int_equal(v.kind, TW_VERDICT_INCONCLUSIVE);
    if (!strstr(v.reason, "--job-file") || !strstr(v.reason, "unknown"))
        fail_msg("reason \"%s\" does not say what to give", v.reason);
}

/* Real buffered libaio runs (direct=0, iodepth=32): fio's IO depths line
 * shows 32=99.9 % as a direct run's does, but the disk saw under one read
 * in flight (1 job: 2,222 ms of ticks in 3,001 ms; 4 jobs: 7,169 ms), not
 * more than two per job: never taken for direct. */
static void buffered_text_is_not_direct(void **state)
{
    (void)state;
    struct tw_result r;
    import_ok("fio/libaio-randread-buffered.txt", &r);
    assert_int_equal(r.method.queue_depth, 32);
    assert_int_equal(r.read.ios, 50633);
    assert_int_equal(r.method.direct, TW_DIRECT_UNKNOWN);
    import_ok("fio/libaio-randread-buffered-4jobs.txt", &r);
    assert_int_equal(r.method.jobs, 4);
    assert_int_equal(r.method.direct, TW_DIRECT_UNKNOWN);
    /* With a 12 s ramp_time before 2 s measured, vda's 9,834 ms of read
     * ticks cover the ramp too: 254,604 reads, of which fio's measured
     * 37,664 are 15 %, so 0.7 reads in flight, not 4.9. */
    import_ok("fio/libaio-randread-buffered-ramp.txt", &r);
    assert_int_equal(r.read.ios, 37664);
    assert_int_equal(r.method.direct, TW_DIRECT_UNKNOWN);
}

static void job_file_and_fio_args(void **state)
{
    (void)state;
    struct tw_result r;
    /* the job file of the run says direct=1 and directory=/datadrive */
    hinted_ok("fio/fioread-4jobs.txt", "fio/fioread.ini", NULL, NULL, &r);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_JOB_FILE);
    assert_string_equal(r.target.path, "/datadrive");
    assert_int_equal(r.target.kind, TW_TARGET_FILE);
    /* the command line wins over the job file, as it does for fio */
    hinted_ok("fio/fioread-4jobs.txt", "fio/fioread.ini", "fio --direct=0 fioread.ini", NULL, &r);
    assert_int_equal(r.method.direct, TW_DIRECT_NO);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_FIO_ARGS);
    hinted_ok("fio/fioread-4jobs.txt", NULL, "-direct 1 --filename='/dev/sdc' --name=reader1",
              NULL, &r);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_FIO_ARGS);
    assert_string_equal(r.target.path, "/dev/sdc");
    assert_int_equal(r.target.kind, TW_TARGET_BLOCK);
    hinted_ok("fio/fioread-4jobs.txt", NULL, "--buffered=1", NULL, &r);
    assert_int_equal(r.method.direct, TW_DIRECT_NO);
    /* a text's measured share (75 %) wins over a hinted rwmixread; one
     * more than a few points from it is another run's */
    hinted_ok("fio/libaio-randrw-75.txt", NULL, "--rwmixread=73", NULL, &r);
    assert_int_equal(r.method.read_pct, 75);
    hinted_bad("fio/libaio-randrw-75.txt", NULL, "--rwmixread=70", NULL, "measured 75 %");
    hinted_bad("fio/libaio-randrw-75.txt", NULL, "--rwmixwrite=50", NULL, "50 % reads");
    import_ok("fio/libaio-randrw-75.txt", &r);
    assert_int_equal(r.method.read_pct, 75);
    /* ... and so does the JSON's rwmixread= */
    hinted_ok("fio/libaio-randrw-75.json", NULL, "--rwmixread=75", NULL, &r);
    assert_int_equal(r.method.read_pct, 75);
    hinted_bad("fio/libaio-randrw-75.json", NULL, "--rwmixread=70", NULL, "rwmixread=75");
    /* a JSON with no rwmixread= ran fio's 50 % */
    hint_json_bad("fio/libaio-randrw-75.json", "        \"rwmixread\" : \"75\",\n",
                  "--rwmixread=75", "fio's default");
    /* a JSON with no direct= ran buffered, fio's default: a hint can't make
     * it direct */
    hint_json_bad("fio/libaio-randread-8k-qd32.json", "    \"direct\" : \"1\",\n", "--direct=1",
                  "fio's default");
    hint_json_bad("fio/libaio-randread-8k-qd32.json", "    \"direct\" : \"1\",\n", "--buffered=0",
                  "buffered=0");
    /* a buffered hint on a text whose disk depth proves direct I/O */
    hinted_bad("fio/constructed-fioread-stripe.txt", NULL, "--direct=0", NULL, "reads in flight");
    hinted_bad("fio/constructed-fioread-stripe.txt", NULL, "--buffered=1", NULL, "buffered=1");
    /* fio's JSON says what ran: hints only fill what it leaves out */
    hinted_ok("fio/libaio-randread-8k-qd32.json", NULL, "--filename=/dev/sdz --direct=1", NULL,
              &r);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_FIO_JSON);
    assert_string_equal(r.target.path, "/var/tmp/tw-fio-fixtures-m5QFvm/scratch.dat");
    /* ... and a hint that contradicts its direct= is another run's */
    hinted_bad("fio/libaio-randread-8k-qd32.json", NULL, "--direct=0", NULL, "direct=0");
    hinted_bad("fio/libaio-randread-8k-qd32.json", NULL, "--buffered=1", NULL, "buffered=1");

    /* hints that are another run's are refused, naming the mismatch */
    hinted_bad("fio/fioread-4jobs.txt", "fio/two-sections.fio", NULL, NULL,
               "no section [reader1]");
    hinted_bad("fio/fioread-4jobs.txt", NULL, "--name=reader1 --rw=randwrite", NULL,
               "rw=randwrite");
    hinted_bad("fio/fioread-4jobs.txt", NULL, "--direct=1 --filename='/dev/sdc", NULL,
               "quote open");
    hinted_bad("fio/fioread-4jobs.txt", "fio/constructed-foreign.csv", NULL, NULL,
               "before any [section]");
    /* a bad job file's message names its own line, with no line of the
     * output (which the caller would print as the output's) */
    struct tw_error err;
    assert_int_equal(
        import_hinted("fio/fioread-4jobs.txt", "fio/constructed-foreign.csv", NULL, NULL, &r, &err),
        TW_EPARSE);
    assert_int_equal(err.line, 0);
    assert_non_null(strstr(err.msg, "line 1 of the job file"));
    assert_int_equal(import_hinted("fio/libaio-randread-8k-qd32.json",
                                   "fio/constructed-foreign.csv", NULL, NULL, &r, &err),
                     TW_EPARSE);
    assert_int_equal(err.line, 0);
}

static void job_file_parser(void **state)
{
    (void)state;
    static const char jf[] = "; comment\n# another\n[global]\n  Direct = 1\nfilename=/dev/sdb\n"
                             "time_based\n[a]\nrw=randread\n[b]\nrw=write\ndirect=0\n"
                             "include other.fio\n";
    json_t *secs = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_jobfile_parse(jf, sizeof(jf) - 1, &secs, &err), TW_OK);
    assert_int_equal(json_array_size(secs), 3);
    char names[64];
    json_t *a = tw_fio_hint_options(secs, "a", names, sizeof(names));
    assert_non_null(a);
    assert_string_equal(json_string_value(json_object_get(a, "direct")), "1");
    assert_string_equal(json_string_value(json_object_get(a, "time_based")), "1");
    assert_string_equal(json_string_value(json_object_get(a, "rw")), "randread");
    json_decref(a);
    json_t *b = tw_fio_hint_options(secs, "b", names, sizeof(names));
    assert_string_equal(json_string_value(json_object_get(b, "direct")), "0");
    json_decref(b);
    assert_null(tw_fio_hint_options(secs, "c", names, sizeof(names)));
    assert_string_equal(names, "[a], [b]");
    json_decref(secs);
    /* bytes that are not UTF-8 in a section name or a key are kept as '?',
     * never taken for running out of memory */
    static const char odd[] = "[caf\xc3\xa9]\ndirect=1\nk\xffy=2\n[\xff]\nrw=read\n";
    assert_int_equal(tw_fio_jobfile_parse(odd, sizeof(odd) - 1, &secs, &err), TW_OK);
    json_t *cafe = tw_fio_hint_options(secs, "caf\xc3\xa9", names, sizeof(names));
    assert_non_null(cafe);
    assert_string_equal(json_string_value(json_object_get(cafe, "direct")), "1");
    assert_string_equal(json_string_value(json_object_get(cafe, "k?y")), "2");
    json_decref(cafe);
    json_decref(secs);
    static const char odd_args[] = "--name=\xfe\xff --direct=1 --\xe9t\xe9=1";
    assert_int_equal(tw_fio_args_parse(odd_args, sizeof(odd_args) - 1, &secs, &err), TW_OK);
    json_t *odd_job = tw_fio_hint_options(secs, "\xfe\xff", names, sizeof(names));
    assert_non_null(odd_job);
    assert_string_equal(json_string_value(json_object_get(odd_job, "direct")), "1");
    json_decref(odd_job);
    json_decref(secs);
    static const char *const bad[] = {"", "direct=1\n[a]\n", "[a\nrw=read\n", "; only\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(tw_fio_jobfile_parse(bad[i], strlen(bad[i]), &secs, &err), TW_EPARSE);
        assert_null(secs);
        assert_true(strlen(err.msg) > 20);
    }
    static const char args[] = "fio --direct=1 \"--filename=/dev/sd c\" --name x --rw=read "
                               "--name=y --bs 8k job.fio";
    assert_int_equal(tw_fio_args_parse(args, sizeof(args) - 1, &secs, &err), TW_OK);
    json_t *x = tw_fio_hint_options(secs, "x", names, sizeof(names));
    assert_string_equal(json_string_value(json_object_get(x, "filename")), "/dev/sd c");
    assert_string_equal(json_string_value(json_object_get(x, "rw")), "read");
    assert_null(json_object_get(x, "bs"));
    json_decref(x);
    json_t *y = tw_fio_hint_options(secs, "y", names, sizeof(names));
    assert_string_equal(json_string_value(json_object_get(y, "bs")), "8k");
    assert_string_equal(json_string_value(json_object_get(y, "direct")), "1");
    json_decref(y);
    json_decref(secs);
}

/* ---- several sections ---- */

static void two_sections_are_not_one_method(void **state)
{
    (void)state;
    static const char *const files[] = {"fio/two-sections.txt", "fio/two-sections.json"};
    for (size_t i = 0; i < 2; i++) {
        struct tw_result r;
        hinted_bad(files[i], NULL, NULL, NULL, "--section");
        hinted_bad(files[i], NULL, NULL, "nope", "reads, writes");
        hinted_ok(files[i], NULL, NULL, "reads", &r);
        assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
        assert_int_equal(r.method.block_size_bytes, 8192);
        assert_int_equal(r.method.queue_depth, 16);
        assert_true(r.read.present);
        assert_false(r.write.present);
        assert_int_equal(r.read.ios, i == 0 ? 141539 : 133384);
        hinted_ok(files[i], NULL, NULL, "writes", &r);
        assert_int_equal(r.method.pattern, TW_PAT_WRITE);
        assert_int_equal(r.method.block_size_bytes, 65536);
        assert_int_equal(r.method.queue_depth, 8);
        assert_false(r.read.present);
        assert_true(r.write.present);
    }
    struct tw_error err;
    char *buf = NULL;
    size_t len;
    buf = th_fixture("fio/two-sections.txt", &len);
    struct tw_result r;
    memset(&err, 0, sizeof(err));
    assert_int_equal(tw_fio_import(buf, len, &r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "rw=randread"));
    assert_non_null(strstr(err.msg, "rw=write"));
    free(buf);
}

/* ---- --status-interval, json,normal, cut short, wide stripes, fio 2.x ---- */

/* More documents than tierwise reads: refused, never an interim report
 * kept as the run. */
static void too_many_documents(void **state)
{
    (void)state;
    static const char doc[] = "{\"global options\": {}, \"jobs\": [{\"jobname\": \"x\", "
                              "\"read\": {\"total_ios\": 1, "
                              "\"runtime\": 1000}}]}\n";
    size_t one = sizeof(doc) - 1, n = 100001;
    char *buf = malloc(one * n + 1);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++)
        memcpy(buf + i * one, doc, one);
    struct tw_result r;
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import(buf, one * (n - 1), &r, &err), TW_OK);
    assert_int_equal(tw_fio_import(buf, one * n, &r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "more than 100000 JSON documents"));
    assert_int_equal(err.line, 100001);
    free(buf);
}

static void status_interval_final_report_only(void **state)
{
    (void)state;
    struct tw_result r;
    /* four reports, the last fio's final one: 209,271 reads in 3,001 ms */
    import_ok("fio/libaio-randread-status-interval.txt", &r);
    assert_int_equal(r.method.jobs, 1);
    assert_int_equal(r.read.ios, 209271);
    near(r.read.iops, 209271 * 1000.0 / 3001);
    assert_int_equal(r.method.runtime_ms, 3001);
    assert_string_equal(r.target.device, "vda");
    import_ok("fio/libaio-randread-status-interval.json", &r);
    assert_int_equal(r.source, TW_SRC_FIO_JSON);
    assert_int_equal(r.method.jobs, 1);
    assert_int_equal(r.read.ios, 175623);
    assert_int_equal(r.method.runtime_ms, 3001);
}

static void json_after_job_header_lines(void **state)
{
    (void)state;
    struct tw_result r;
    /* --output-format=json,normal: header, version, JSON, then the text */
    import_ok("fio/libaio-randread-json-normal.txt", &r);
    assert_int_equal(r.source, TW_SRC_FIO_JSON);
    assert_int_equal(r.read.ios, 168950);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_FIO_JSON);
}

/* The 1-based number of the line of BUF where S first starts. */
static long line_of(const char *buf, const char *s)
{
    const char *p = strstr(buf, s);
    long n = 1;
    for (const char *q = buf; q < p; q++)
        n += *q == '\n';
    return n;
}

static void text_cut_short(void **state)
{
    (void)state;
    struct tw_error err;
    size_t len;
    char *buf = th_fixture("fio/constructed-truncated.txt", &len);
    import_bad(buf, len, &err);
    assert_non_null(strstr(err.msg, "cut short"));
    assert_int_equal(err.line, 5);
    free(buf);
    /* cut inside the disk statistics */
    buf = th_fixture("fio/constructed-lvm-stripe.txt", &len);
    char *p = strstr(buf, "  sdi: ios=15169/0, merge=0/0, ");
    assert_non_null(p);
    p += strlen("  sdi: ios=15169/0, merge=0/0, ");
    import_bad(buf, (size_t)(p - buf), &err);
    assert_non_null(strstr(err.msg, "cut short"));
    p = strstr(buf, "  sdi:");
    import_bad(buf, (size_t)(p - buf) + 4, &err);
    assert_non_null(strstr(err.msg, "cut short"));
    /* cut at a line end: before sdi (two members of three: 30,341 ios of
     * the head's 45,512), before any member, inside the head's aggr
     * figures, right after "Disk stats" */
    import_bad(buf, (size_t)(p - buf), &err);
    assert_non_null(strstr(err.msg, "30341 ios, far fewer than its 45512"));
    assert_int_equal(err.line, line_of(buf, "    dm-8:"));
    p = strstr(buf, "  sdg:");
    import_bad(buf, (size_t)(p - buf), &err);
    assert_non_null(strstr(err.msg, "no member disk lines"));
    char *head = replace(buf, ", aggrticks=31720/0, aggrin_queue=31720, aggrutil=96.61%", "");
    import_bad(head, strlen(head), &err);
    assert_non_null(strstr(err.msg, "aggrutil="));
    free(head);
    p = strstr(buf, "    dm-8:");
    import_bad(buf, (size_t)(p - buf), &err);
    assert_non_null(strstr(err.msg, "no disk line after it"));
    free(buf);
    /* the whole list still imports */
    struct tw_result r;
    import_ok("fio/constructed-lvm-stripe.txt", &r);
    assert_int_equal(r.target.n_members, 3);
}

static void stripes_wider_than_a_record(void **state)
{
    (void)state;
    struct tw_error err;
    size_t len;
    char *buf = th_fixture("fio/constructed-stripe-65.txt", &len);
    import_bad(buf, len, &err);
    assert_non_null(strstr(err.msg, "65 member disks"));
    free(buf);
    char disks[8192] = "{\"name\": \"md0\", \"aggr_util\": 1.0}";
    for (int i = 0; i < 64; i++) {
        size_t u = strlen(disks);
        snprintf(disks + u, sizeof(disks) - u, ", {\"name\": \"nvme0n%d\"}", i + 1);
    }
    struct tw_result r;
    import_doc("\"rw\": \"read\"", READ_FIGS, disks, &r); /* 64: recorded */
    assert_int_equal(r.target.n_members, 64);
    strcat(disks, ", {\"name\": \"nvme0n65\"}");
    char doc[16384];
    snprintf(doc, sizeof(doc),
             "{\"jobs\": [{\"jobname\": \"j\", \"job options\": {\"rw\": \"read\"},"
             " \"read\": {" READ_FIGS "}}], \"disk_util\": [%s]}",
             disks);
    import_bad(doc, strlen(doc), &err);
    assert_non_null(strstr(err.msg, "65 member disks"));
}

static void fio2_json(void **state)
{
    (void)state;
    struct tw_result r, r3;
    /* fio 2.x wrote io_bytes in KiB: 2,115,224 KiB are 264,403 x 8 KiB */
    import_ok("fio/constructed-fio2.json", &r);
    import_ok("fio/libaio-randread-8k-qd32.json", &r3);
    assert_string_equal(r.tool_version, "fio-2.2.10");
    assert_int_equal(r.read.ios, 264403);
    assert_int_equal(r.read.bytes, 264403LL * 8192);
    assert_int_equal(r.read.bytes, r3.read.bytes);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.read.lat.kind, TW_LAT_TOTAL);
    assert_int_equal(r.read.lat.pct_kind, TW_LAT_COMPLETION);
    assert_true(fabs(r.read.lat.mean_ns - r3.read.lat.mean_ns) < 1000);
    /* fio-2.2.10 printed no job options for a job file's run */
    hinted_bad("fio/constructed-fio2-no-options.json", NULL, NULL, NULL, "--job-file");
    hinted_ok("fio/constructed-fio2-no-options.json", NULL,
              "--name=randread8k --rw=randread --bs=8k --iodepth=32 --ioengine=libaio "
              "--direct=1",
              NULL, &r);
    assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
    assert_int_equal(r.method.block_size_bytes, 8192);
    assert_int_equal(r.method.queue_depth, 32);
    assert_int_equal(r.method.direct, TW_DIRECT_YES);
    assert_int_equal(r.method.direct_basis, TW_DIRECT_BY_FIO_ARGS);
    assert_int_equal(r.read.bytes, 264403LL * 8192);

    /* an option-less output of a job file of two sections: each entry's
     * method is its own section's, so they are refused as one method */
    size_t flen;
    char *jf = th_fixture("fio/two-sections.fio", &flen);
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "{\"fio version\": \"fio-2.2.10\", \"jobs\": [{\"jobname\": \"reads\", "
             "\"read\": {%s}}, {\"jobname\": \"writes\", \"write\": {%s}}]}",
             READ_FIGS, READ_FIGS);
    struct tw_fio_hints h = {.job_file = jf, .job_file_len = flen};
    struct tw_error err = {0};
    assert_int_equal(tw_fio_import_with(doc, strlen(doc), &h, &r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "ran differently"));
    assert_non_null(strstr(err.msg, "rw=write"));
    h.section = "reads";
    assert_int_equal(tw_fio_import_with(doc, strlen(doc), &h, &r, &err), TW_OK);
    assert_int_equal(r.method.pattern, TW_PAT_RANDREAD);
    assert_int_equal(r.method.queue_depth, 16);
    /* hints are checked against every entry, not the first alone */
    static const char two[] = "[global]\nioengine=libaio\n[a]\nrw=randread\n[b]\nrw=write\n";
    snprintf(doc, sizeof(doc),
             "{\"global options\": {\"rw\": \"randread\", \"ioengine\": \"libaio\"}, "
             "\"jobs\": [{\"jobname\": \"a\", \"job options\": {}, \"read\": {%s}}, "
             "{\"jobname\": \"b\", \"job options\": {}, \"read\": {%s}}]}",
             READ_FIGS, READ_FIGS);
    struct tw_fio_hints h2 = {.job_file = two, .job_file_len = sizeof(two) - 1};
    assert_int_equal(tw_fio_import_with(doc, strlen(doc), &h2, &r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "rw=write for job b"));
    free(jf);
}

/* ---- records written before direct_basis and the latency kinds ---- */

static void old_records_still_read(void **state)
{
    (void)state;
    struct tw_result a, b;
    struct tw_error err = {0};
    import_ok("fio/libaio-randread-8k-qd32.txt", &a);
    snprintf(a.id, sizeof(a.id), "0b6f3a52-7c1e-4c1a-9a53-6f0d2f6f7e10");
    char *s = tw_result_to_json(&a, 0);
    assert_non_null(s);
    assert_int_equal(tw_result_from_json(s, strlen(s), &b, &err), TW_OK);
    assert_int_equal(b.method.direct, TW_DIRECT_YES);
    assert_int_equal(b.method.direct_basis, TW_DIRECT_BY_DISK_DEPTH);
    assert_int_equal(b.read.lat.pct_kind, TW_LAT_COMPLETION);
    /* as the old importer wrote a text import: direct false, no basis */
    char *t = replace(s, "\"direct\": true, \"direct_basis\": \"libaio depth at the disk in the "
                         "text\"",
                      "\"direct\": false");
    char *u = replace(t, ", \"kind\": \"total\", \"percentiles_kind\": \"completion\"", "");
    assert_int_equal(tw_result_from_json(u, strlen(u), &b, &err), TW_OK);
    assert_int_equal(b.method.direct, TW_DIRECT_UNKNOWN);
    assert_int_equal(b.method.direct_basis, TW_DIRECT_BY_NONE);
    assert_int_equal(b.read.lat.pct_kind, TW_LAT_UNKNOWN);
    /* ... and tierwise's own engine: direct true from the engine */
    char *v = replace(u, "\"source\": \"fio-text\"", "\"source\": \"tierwise\"");
    char *w = replace(v, "\"direct\": false", "\"direct\": true");
    assert_int_equal(tw_result_from_json(w, strlen(w), &b, &err), TW_OK);
    assert_int_equal(b.method.direct, TW_DIRECT_YES);
    assert_int_equal(b.method.direct_basis, TW_DIRECT_BY_ENGINE);
    assert_int_equal(b.read.lat.kind, TW_LAT_TOTAL);
    /* a basis outside the vocabulary is refused */
    char *x = replace(s, "\"libaio depth at the disk in the text\"", "\"a hunch\"");
    assert_int_equal(tw_result_from_json(x, strlen(x), &b, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "direct_basis"));
    free(s);
    free(t);
    free(u);
    free(v);
    free(w);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_randread_qd32),
        cmocka_unit_test(json_two_jobs_add_up),
        cmocka_unit_test(json_mixed_has_both_directions),
        cmocka_unit_test(json_psync_runs_at_qd1),
        cmocka_unit_test(json_group_reporting),
        cmocka_unit_test(json_group_reporting_on_command_line),
        cmocka_unit_test(text_randread_qd32),
        cmocka_unit_test(text_two_jobs_add_up),
        cmocka_unit_test(text_mixed_has_both_directions),
        cmocka_unit_test(text_psync_runs_at_qd1),
        cmocka_unit_test(text_group_reporting),
        cmocka_unit_test(text_and_json_agree_in_structure),
        cmocka_unit_test(text_stripe_device_and_members),
        cmocka_unit_test(text_without_leading_spaces_is_the_same),
        cmocka_unit_test(text_units_and_suffixes),
        cmocka_unit_test(text_job_error),
        cmocka_unit_test(text_terminal_capture),
        cmocka_unit_test(json_job_error),
        cmocka_unit_test(json_long_names_stay_valid_utf8),
        cmocka_unit_test(json_option_quirks),
        cmocka_unit_test(json_percentile_choice),
        cmocka_unit_test(json_stripes),
        cmocka_unit_test(sections_on_two_disks),
        cmocka_unit_test(bad_fixtures),
        cmocka_unit_test(bad_inline),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(text_fioread_stripe_is_judged),
        cmocka_unit_test(buffered_text_is_not_direct),
        cmocka_unit_test(job_file_and_fio_args),
        cmocka_unit_test(job_file_parser),
        cmocka_unit_test(two_sections_are_not_one_method),
        cmocka_unit_test(status_interval_final_report_only),
        cmocka_unit_test(too_many_documents),
        cmocka_unit_test(json_after_job_header_lines),
        cmocka_unit_test(text_cut_short),
        cmocka_unit_test(stripes_wider_than_a_record),
        cmocka_unit_test(fio2_json),
        cmocka_unit_test(old_records_still_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
