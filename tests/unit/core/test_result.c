/* test_result.c - the result record's JSON form: round trip and bad input. */
#include "testhelp.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/result_text.h"

static void sample(struct tw_result *r)
{
    tw_result_init(r);
    strcpy(r->id, "0b7e8a4e-54a4-4e0c-9f37-2f8a6f1b2c3d");
    strcpy(r->started_at, "2026-11-29T10:00:00.000Z");
    r->source = TW_SRC_TIERWISE;
    strcpy(r->tool_version, "tierwise 0.1.0");
    strcpy(r->profile, "rated-iops");
    strcpy(r->target.path, "/data/tw.bench");
    r->target.kind = TW_TARGET_FILE;
    r->target.size_bytes = 1 << 30;
    strcpy(r->target.device, "dm-8");
    r->target.n_members = 3;
    strcpy(r->target.members[0], "sdg");
    strcpy(r->target.members[1], "sdh");
    strcpy(r->target.members[2], "sdi");
    strcpy(r->method.engine, "libaio");
    r->method.direct = true;
    r->method.pattern = TW_PAT_RANDREAD;
    r->method.block_size_bytes = 8192;
    r->method.queue_depth = 256;
    r->method.effective_queue_depth = 256;
    r->method.jobs = 4;
    r->method.read_pct = 100;
    r->method.runtime_ms = 30000;
    r->method.ramp_ms = 5000;
    r->read.present = true;
    r->read.ios = 489000;
    r->read.bytes = 489000LL * 8192;
    r->read.iops = 16300.5;
    r->read.bw_bytes_per_s = 16300.5 * 8192;
    r->read.mbps = r->read.bw_bytes_per_s / 1e6;
    r->read.lat.min_ns = 120000;
    r->read.lat.max_ns = 95000000;
    r->read.lat.mean_ns = 62800000.25;
    r->read.lat.stdev_ns = 1234.5;
    for (size_t i = 0; i < tw_result_std_pct_count; i++)
        tw_lat_add_pct(&r->read.lat, tw_result_std_pct[i], 1000.0 * (double)(i + 1));
    r->read.iops_per_s.present = true;
    r->read.iops_per_s.min = 15000;
    r->read.iops_per_s.mean = 16300;
    r->read.iops_per_s.max = 17000;
    r->read.iops_per_s.stdev = 300;
    r->read.iops_per_s.samples = 30;
    r->cpu.usr_s = 0.5;
    r->cpu.sys_s = 3.25;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct tw_result *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    sample(a);
    char *s = tw_result_to_json(a, JSON_COMPACT);
    assert_non_null(s);
    struct tw_error err = {0};
    if (tw_result_from_json(s, strlen(s), b, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_memory_equal(a, b, sizeof(*a));
    /* Units in keys and nulls where the schema wants them. */
    assert_non_null(strstr(s, "\"schema_version\":\"tierwise.bench-result/1\""));
    assert_non_null(strstr(s, "\"write\":null"));
    assert_non_null(strstr(s, "\"p99.99\":"));
    assert_non_null(strstr(s, "\"lat_ns\":"));
    assert_non_null(strstr(s, "\"first\":null"));
    free(s);
    free(a);
    free(b);
}

static void test_text_summary(void **state)
{
    (void)state;
    struct tw_result r;
    sample(&r);
    struct tw_buf b;
    tw_buf_init(&b, 1 << 16);
    assert_int_equal(tw_result_format_text(&r, &b), TW_OK);
    assert_non_null(strstr(b.data, "rated-iops on /data/tw.bench"));
    assert_non_null(strstr(b.data, "device dm-8 over sdg sdh sdi"));
    assert_non_null(strstr(b.data, "QD 256 x 4 jobs"));
    assert_non_null(strstr(b.data, "16300 IOPS"));
    assert_non_null(strstr(b.data, "p99.9"));
    tw_buf_cleanup(&b);
}

static void test_pct_keys(void **state)
{
    (void)state;
    char k[32];
    assert_string_equal(tw_pct_key(1, k, sizeof(k)), "p1");
    assert_string_equal(tw_pct_key(99.9, k, sizeof(k)), "p99.9");
    assert_string_equal(tw_pct_key(99.95, k, sizeof(k)), "p99.95");
    assert_string_equal(tw_pct_key(50, k, sizeof(k)), "p50");
}

/* Each case: a change to the valid sample's JSON, and words the error must
 * contain. */
static void test_bad_documents(void **state)
{
    (void)state;
    struct tw_result r;
    sample(&r);
    char *good = tw_result_to_json(&r, JSON_COMPACT);
    struct {
        const char *from, *to, *words;
    } cases[] = {
        {"\"schema_version\":\"tierwise.bench-result/1\"", "\"schema_version\":\"x/2\"",
         "schema_version"},
        {"\"queue_depth\":256", "\"queue_depth\":\"256\"", "method.queue_depth must be an integer"},
        {"\"queue_depth\":256", "\"queue_depth\":0", "method.queue_depth must be an integer from 1 to 1048576, got 0"},
        {"\"read_pct\":100", "\"read_pct\":101", "method.read_pct"},
        {"\"pattern\":\"randread\"", "\"pattern\":\"trim\"", "method.pattern"},
        {"\"direct\":true", "\"direct\":1", "method.direct must be a boolean"},
        {"\"kind\":\"file\"", "\"kind\":\"pipe\"", "target.kind"},
        {"\"source\":\"tierwise\"", "\"source\":\"dd\"", "source"},
        {"\"ios\":489000", "\"ios\":-1", "read.ios"},
        {"\"p50\":", "\"median\":", "percentiles.median"},
        {"\"usr_s\":0.5", "\"usr_s\":null", "cpu.usr_s"},
        {"\"id\":", "\"idx\":", "id is missing"},
        {"\"members\":[\"sdg\"", "\"members\":[7", "target.members[0]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *at = strstr(good, cases[i].from);
        assert_non_null(at);
        size_t n = strlen(good) - strlen(cases[i].from) + strlen(cases[i].to) + 1;
        char *bad = malloc(n);
        size_t pre = (size_t)(at - good);
        memcpy(bad, good, pre);
        strcpy(bad + pre, cases[i].to);
        strcat(bad, at + strlen(cases[i].from));
        struct tw_error err = {0};
        struct tw_result out;
        assert_int_equal(tw_result_from_json(bad, strlen(bad), &out, &err), TW_EPARSE);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].words);
        free(bad);
    }
    /* Not JSON at all, and cut short: the position is given. */
    struct tw_error err = {0};
    struct tw_result out;
    assert_int_equal(tw_result_from_json(good, strlen(good) / 2, &out, &err), TW_EPARSE);
    assert_true(err.line >= 1);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_int_equal(tw_result_from_json("[1,2]", 5, &out, &err), TW_EPARSE);
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_text_summary),
        cmocka_unit_test(test_pct_keys),
        cmocka_unit_test(test_bad_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
