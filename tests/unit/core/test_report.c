/* test_report.c - the agent's report (tierwise.report/1): the sample
 * fixtures, round trips, and each kind of bad input named by its field. */
#include "testhelp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report.h"

static const char *const samples[] = {"reports/sap-db-01.json", "reports/sap-app-02.json",
                                      "reports/web-03.json"};

static void test_fixtures_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        char *buf = th_fixture(samples[i], &len);
        struct tw_report *r = tw_report_new();
        struct tw_error err = {0};
        if (tw_report_from_json(buf, len, r, &err) != TW_OK)
            fail_msg("%s: %s", samples[i], err.msg);
        assert_true(tw_uuid_valid(r->id));
        assert_true(r->inv.n_disks >= 4 && r->inv.n_disks <= 8);
        assert_true(r->n_results >= 1 && r->n_results <= 3);
        assert_true(len >= 4096 && len <= 8192);
        assert_string_equal(r->power_state, "running");
        assert_string_equal(r->agent_version, "0.1.0");
        tw_report_free(r);
        free(buf);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    size_t len;
    char *buf = th_fixture("reports/sap-app-02.json", &len);
    struct tw_report *a = tw_report_new(), *b = tw_report_new();
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(buf, len, a, &err), TW_OK);
    char *s = tw_report_to_json(a, JSON_COMPACT);
    assert_non_null(s);
    if (tw_report_from_json(s, strlen(s), b, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(a->id, b->id);
    assert_string_equal(a->created_at, b->created_at);
    assert_string_equal(a->agent_hostname, b->agent_hostname);
    assert_memory_equal(&a->inv, &b->inv, sizeof(a->inv));
    assert_int_equal(a->n_results, b->n_results);
    assert_memory_equal(a->results, b->results, a->n_results * sizeof(*a->results));
    /* The same text again: writing is deterministic. */
    char *s2 = tw_report_to_json(b, JSON_COMPACT);
    assert_string_equal(s, s2);
    assert_non_null(strstr(s, "\"schema_version\":\"tierwise.report/1\""));
    free(s);
    free(s2);

    /* A built report: no power state writes null, results can be added
     * to a parsed report past its first allocation. */
    a->power_state[0] = '\0';
    struct tw_result extra = a->results[0];
    for (int i = 0; i < 9; i++)
        assert_int_equal(tw_report_add_result(a, &extra), TW_OK);
    assert_int_equal(a->n_results, 12);
    s = tw_report_to_json(a, 0);
    assert_non_null(strstr(s, "\"power_state\": null"));
    assert_int_equal(tw_report_from_json(s, strlen(s), b, &err), TW_OK);
    assert_int_equal(b->n_results, 12);
    assert_string_equal(b->power_state, "");
    free(s);
    tw_report_free(a);
    tw_report_free(b);
    free(buf);
}

static void test_add_result_limit(void **state)
{
    (void)state;
    struct tw_report *r = tw_report_new();
    struct tw_result x;
    tw_result_init(&x);
    for (int i = 0; i < TW_REPORT_MAX_RESULTS; i++)
        assert_int_equal(tw_report_add_result(r, &x), TW_OK);
    assert_int_equal(tw_report_add_result(r, &x), TW_ERANGE);
    assert_int_equal(r->n_results, TW_REPORT_MAX_RESULTS);
    tw_report_free(r);
    tw_report_free(NULL);
}

/* Replaces the first FROM in GOOD by TO (new string). */
static char *edit(const char *good, const char *from, const char *to)
{
    const char *at = strstr(good, from);
    if (!at)
        fail_msg("\"%s\" is not in the sample", from);
    size_t pre = (size_t)(at - good);
    char *bad = malloc(strlen(good) + strlen(to) + 1);
    memcpy(bad, good, pre);
    strcpy(bad + pre, to);
    strcat(bad, at + strlen(from));
    return bad;
}

static void test_bad_reports(void **state)
{
    (void)state;
    size_t len;
    char *pretty = th_fixture("reports/sap-app-02.json", &len);
    struct tw_report *r = tw_report_new();
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(pretty, len, r, &err), TW_OK);
    char *good = tw_report_to_json(r, JSON_COMPACT);
    struct {
        const char *from, *to, *words;
    } cases[] = {
        {"\"schema_version\":\"tierwise.report/1\"", "\"schema_version\":\"tierwise.report/2\"",
         "schema_version is \"tierwise.report/2\""},
        {"\"id\":\"9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02\"", "\"id\":\"3f1c\"",
         "id \"3f1c\" is not a UUID"},
        {"\"id\":\"9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02\"",
         "\"id\":\"9b2d4e61x0c3a-4f7e-8d15-6a7b8c9d0e02\"", "not a UUID"},
        {"\"id\":\"9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02\"", "\"id\":7", "id must be a string"},
        {"\"id\":\"9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02\"", "\"idx\":\"a\"", "id is missing"},
        {"\"created_at\":\"2026-11-29T11:10:00.000Z\"", "\"created_at\":\"yesterday\"",
         "created_at \"yesterday\" is not an RFC 3339 time"},
        {"\"created_at\":\"2026-11-29T11:10:00.000Z\"",
         "\"created_at\":\"2026-02-30T11:10:00Z\"", "created_at"},
        {"\"agent\":{", "\"agent\":7,\"x\":{", "agent is not an object"},
        {"\"hostname\":\"sap-app-02\"", "\"hostname\":false", "agent.hostname must be a string"},
        {"\"power_state\":\"running\"", "\"power_state\":1", "power_state must be a string"},
        {"\"results\":[", "\"results\":\"x\",\"y\":[", "results is not an array"},
        {"\"queue_depth\":256", "\"queue_depth\":\"256\"",
         "results[0].method.queue_depth must be an integer"},
        {"\"queue_depth\":64", "\"queue_depth\":0", "results[1].method.queue_depth must be an integer from 1 to 1048576, got 0"},
        {"\"id\":\"7d2a1b3c-4e5f-4a6b-8c7d-9e0f1a2b3c03\"", "\"id\":\"r3\"",
         "results[2].id \"r3\" is not a UUID"},
        {"\"started_at\":\"2026-11-29T11:00:00.000Z\"", "\"started_at\":\"11:00\"",
         "results[0].started_at"},
        {"\"lun\":1", "\"lun\":-1", "inventory.disks[2].lun"},
        {"\"vm_size\":\"Standard_E8ds_v5\"", "\"vm_sizes\":\"x\"", "inventory.vm.vm_size is missing"},
        {"\"role\":\"os\"", "\"role\":\"boot\"", "inventory.disks[0].role"},
        {"\"inventory\":{", "\"inventory\":[],\"x\":{", "inventory is not an object"},
        {"\"iops\":", "\"iops\":1e999,\"x\":", "not valid JSON"},
        {"\"size_gib\":128", "\"size_gib\":99999999999999999999999", "not valid JSON"},
        {"\"hostname\":\"sap-app-02\"", "\"hostname\":\"a\",\"hostname\":\"b\"", "duplicate"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *bad = edit(good, cases[i].from, cases[i].to);
        memset(&err, 0, sizeof(err));
        assert_int_equal(tw_report_from_json(bad, strlen(bad), r, &err), TW_EPARSE);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].words);
        /* Nothing half-read is left behind. */
        assert_int_equal(r->n_results, 0);
        assert_null(r->results);
        assert_int_equal(r->inv.n_disks, 0);
        assert_string_equal(r->id, "");
        free(bad);
    }

    /* Upper-case UUIDs are UUIDs, kept in lower case. */
    char *upper = edit(good, "9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02",
                       "9B2D4E61-0C3A-4F7E-8D15-6A7B8C9D0E02");
    assert_int_equal(tw_report_from_json(upper, strlen(upper), r, &err), TW_OK);
    assert_string_equal(r->id, "9b2d4e61-0c3a-4f7e-8d15-6a7b8c9d0e02");
    free(upper);

    /* Cut short: the position is given. */
    memset(&err, 0, sizeof(err));
    assert_int_equal(tw_report_from_json(pretty, len / 2, r, &err), TW_EPARSE);
    assert_true(err.line > 1);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_int_equal(tw_report_from_json("", 0, r, &err), TW_EPARSE);
    assert_int_equal(tw_report_from_json("[]", 2, r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "must be a JSON object"));
    free(good);
    free(pretty);
    tw_report_free(r);
}

static void test_limits(void **state)
{
    (void)state;
    struct tw_report *r = tw_report_new();
    struct tw_error err = {0};

    /* Deep nesting is refused before parsing, with its position, also
     * inside a field nobody reads; brackets inside strings don't count. */
    char deep[4096];
    int n = snprintf(deep, sizeof(deep), "{\"x\":\"[[[[[[[[[[[[[[[[[[[[\",\"y\":");
    for (int i = 0; i < 40; i++)
        deep[n++] = '[';
    for (int i = 0; i < 40; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    assert_int_equal(tw_report_from_json(deep, (size_t)n, r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "nests deeper than"));
    assert_int_equal(err.line, 1);
    assert_true(err.column > 30);

    /* Too many results. */
    size_t len;
    char *buf = th_fixture("reports/web-03.json", &len);
    assert_int_equal(tw_report_from_json(buf, len, r, &err), TW_OK);
    struct tw_result one = r->results[0];
    while (r->n_results < TW_REPORT_MAX_RESULTS)
        assert_int_equal(tw_report_add_result(r, &one), TW_OK);
    char *s = tw_report_to_json(r, JSON_COMPACT);
    assert_int_equal(tw_report_from_json(s, strlen(s), r, &err), TW_OK);
    assert_int_equal(r->n_results, TW_REPORT_MAX_RESULTS);
    char *more = edit(s, "\"results\":[", "\"results\":[{},");
    assert_int_equal(tw_report_from_json(more, strlen(more), r, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "results has 257 entries, at most 256"));
    free(more);
    free(s);
    free(buf);
    tw_report_free(r);
}

static void test_uuid_and_time(void **state)
{
    (void)state;
    assert_true(tw_uuid_valid("00000000-0000-4000-8000-000000000001"));
    assert_true(tw_uuid_valid("ABCDEF00-0000-4000-8000-000000000001"));
    assert_false(tw_uuid_valid("00000000-0000-4000-8000-00000000000"));
    assert_false(tw_uuid_valid("00000000-0000-4000-8000-0000000000011"));
    assert_false(tw_uuid_valid("000000000000-4000-8000-0000000000011"));
    assert_false(tw_uuid_valid("g0000000-0000-4000-8000-000000000001"));
    assert_false(tw_uuid_valid(""));
    assert_false(tw_uuid_valid(NULL));

    int64_t ms;
    assert_true(tw_rfc3339_ms("1970-01-01T00:00:00Z", &ms));
    assert_int_equal(ms, 0);
    assert_true(tw_rfc3339_ms("2026-11-29T10:00:00.5Z", &ms));
    int64_t a = ms;
    assert_true(tw_rfc3339_ms("2026-11-29T10:00:00Z", &ms));
    assert_int_equal(a - ms, 500);
    assert_int_equal(ms, 1795946400000LL);
    assert_true(tw_rfc3339_ms("2026-11-29T11:00:00+01:00", &ms));
    assert_int_equal(ms, 1795946400000LL);
    assert_true(tw_rfc3339_ms("2026-11-29T09:30:00.123456789-00:30", &ms));
    assert_int_equal(ms, 1795946400123LL);
    assert_true(tw_rfc3339_ms("2024-02-29T00:00:00Z", &ms));
    assert_false(tw_rfc3339_ms("2026-02-29T00:00:00Z", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29 10:00:00Z", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29T10:00:00", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29T10:00:00+01", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29T10:00:00.Z", &ms));
    assert_false(tw_rfc3339_ms("2026-13-29T10:00:00Z", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29T24:00:00Z", &ms));
    assert_false(tw_rfc3339_ms("2026-11-29T10:00:00Zjunk", &ms));
    assert_false(tw_rfc3339_ms("", &ms));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_parse), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_add_result_limit), cmocka_unit_test(test_bad_reports),
        cmocka_unit_test(test_limits), cmocka_unit_test(test_uuid_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
