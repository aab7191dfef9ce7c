/* test_plan.c - the planner over a store built here row by row: the
 * switches of Europe/London's DST weekends at the right UTC instants, a
 * window the margins leave nothing of, the quota's edge (a change 24 h
 * before the upgrade back fits, 23 h 59 min does not), the min_saving
 * edge, a disk tierwise downgraded planned by its original SKU, a window
 * crossing the period's start, the JSON document read back, the record
 * (a repeated key is no error), and the calendar's folding and escaping. */
#include "testhelp.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/policy.h"
#include "core/time.h"
#include "service/plan.h"

#include "plan_fixture.h"

/* A policy of NAME over Premium_LRS disks to StandardSSD_LRS with WINDOWS
 * in Europe/London, margins AFTER and BEFORE, MIN_SAVING. */
static void policy(struct tw_policy *p, const char *name, const char *windows, int after,
                   int before, const char *min_saving)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"%s\","
             "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
             "\"windows\":%s,\"timezone\":\"Europe/London\",\"margins\":"
             "{\"after_deallocate_minutes\":%d,\"before_start_minutes\":%d},"
             "\"min_saving\":\"%s\",\"quota\":{\"changes\":2,\"hours\":24}}",
             name, windows, after, before, min_saving);
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void plan(struct fx *f, const struct tw_plan_opts *o, struct acts *s,
                 struct tw_plan_summary *sum)
{
    memset(s, 0, sizeof(*s));
    struct tw_error err = {0};
    struct tw_plan_sink sink = {on_action, s};
    if (tw_svc_plan_run(f->st, o, &sink, sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

/* Europe/London's last weekends of March and October: "Fri 20:00-Mon
 * 06:00" local, 10 min after and 30 min before, at the right UTC instants
 * (March: opens in GMT, closes in BST; October the other way). */
static void test_dst_weekends(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-03-24T00:00:00Z", "2026-04-01T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.a[0].kind, TW_PLAN_DOWNGRADE);
    assert_string_equal(s.a[0].at, "2026-03-27T20:10:00Z");
    assert_string_equal(s.a[0].local, "2026-03-27T20:10:00+00:00");
    assert_string_equal(s.a[0].from, "Premium_LRS");
    assert_string_equal(s.a[0].to, "StandardSSD_LRS");
    assert_int_equal(s.a[1].kind, TW_PLAN_UPGRADE);
    assert_string_equal(s.a[1].at, "2026-03-30T04:30:00Z");
    assert_string_equal(s.a[1].local, "2026-03-30T05:30:00+01:00");
    assert_string_equal(s.a[1].from, "StandardSSD_LRS");
    assert_string_equal(s.a[1].to, "Premium_LRS");
    assert_int_equal(s.a[0].pair_ns, s.a[1].due_ns);
    assert_int_equal(s.a[1].pair_ns, s.a[0].due_ns);
    assert_non_null(strstr(s.a[0].reason, "window Fri 20:00-Mon 06:00 (Europe/London"));
    assert_non_null(strstr(s.a[0].reason, "of dev-weekends"));
    /* 56 h 20 min downgraded (an hour fewer than the wall clock's 57 h 20
     * min: the clocks went forward), 9.00 a 730 h: 0.694521... */
    assert_string_equal(s.a[0].saving, "0.694521");
    assert_string_equal(s.a[1].saving, "0.000000");
    char key[160];
    snprintf(key, sizeof(key), "dev-weekends/11/downgrade/%lld",
             (long long)(at("2026-03-27T20:10:00Z") / 1000000));
    assert_string_equal(s.a[0].key, key);
    assert_int_equal(sum.actions, 2);
    assert_int_equal(sum.downgrades, 1);
    assert_int_equal(sum.upgrades, 1);
    assert_int_equal(sum.disks, 1);
    assert_string_equal(sum.currency, "GBP");

    opts(f, &o, &p, "2026-10-20T00:00:00Z", "2026-10-28T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.a[0].at, "2026-10-23T19:10:00Z");
    assert_string_equal(s.a[0].local, "2026-10-23T20:10:00+01:00");
    assert_string_equal(s.a[1].at, "2026-10-26T05:30:00Z");
    assert_string_equal(s.a[1].local, "2026-10-26T05:30:00+00:00");
    tw_policy_cleanup(&p);
}

/* A window shorter than its margins plans nothing and is counted. */
static void test_margins(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "short", "[\"Sat 10:00-Sat 10:40\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 0);
    assert_int_equal(sum.actions, 0);
    assert_int_equal(sum.windows_skipped, 2);
    tw_policy_cleanup(&p);
    /* Ten minutes more leaves a minute: planned. */
    policy(&p, "short", "[\"Sat 10:00-Sat 10:41\"]", 10, 30, "0");
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 4);
    assert_int_equal(sum.windows_skipped, 0);
    assert_string_equal(s.a[0].at, "2026-12-05T10:10:00Z");
    assert_string_equal(s.a[1].at, "2026-12-05T10:11:00Z");
    tw_policy_cleanup(&p);
}

/* The quota: 2 changes in any 24 h.  A change by anyone (the SKU history)
 * 24 h before the upgrade back leaves room for the window's two; 23 h
 * 59 min before does not, and the window is skipped whole. */
static void test_quota_edges(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "fits", "Premium_LRS", "P10", 128);
    disk(f, 12, 1, "refused", "Premium_LRS", "P10", 128);
    /* Someone moved both back to Premium (the window's up is Sat 13:30Z). */
    history(f, 11, "2026-11-01T00:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 11, "2026-12-04T13:30:00Z", "Premium_LRS", "P10");
    history(f, 12, "2026-11-01T00:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 12, "2026-12-04T13:31:00Z", "Premium_LRS", "P10");
    struct tw_policy p;
    policy(&p, "sat", "[\"Sat 10:00-Sat 14:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-03T00:00:00Z", "2026-12-07T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.a[0].disk_id, 11);
    assert_int_equal(s.a[1].disk_id, 11);
    assert_string_equal(s.a[0].at, "2026-12-05T10:10:00Z");
    assert_string_equal(s.a[1].at, "2026-12-05T13:30:00Z");
    assert_int_equal(sum.windows_skipped, 1);
    assert_int_equal(sum.disks, 1);
    tw_policy_cleanup(&p);
}

/* min_saving: a window saving exactly the minimum is taken, one a
 * millionth short of it is skipped. */
static void test_min_saving_edge(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    /* 73 h downgraded at 9.00 a 730 h: 0.90 exactly. */
    struct tw_policy p;
    policy(&p, "edge", "[\"Fri 10:00-Mon 11:40\"]", 10, 30, "0.90");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-08T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.a[0].saving, "0.900000");
    assert_int_equal(sum.windows_skipped, 0);
    char total[64];
    assert_true(tw_amount_decimal(sum.saving, 6, total, sizeof(total)));
    assert_string_equal(total, "0.900000");
    tw_policy_cleanup(&p);
    policy(&p, "edge", "[\"Fri 10:00-Mon 11:40\"]", 10, 30, "0.900001");
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-08T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 0);
    assert_int_equal(sum.windows_skipped, 1);
    tw_policy_cleanup(&p);
}

/* A disk tierwise downgraded (now StandardSSD_LRS, its original
 * Premium_LRS recorded) is matched by its original ("skus": Premium_LRS),
 * priced by it, and its upgrade goes back to it; a Standard disk without
 * an original is not matched.  A window open at the period's start gives
 * its upgrade alone. */
static void test_original_sku(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "was-premium", "StandardSSD_LRS", "E10", 128);
    disk(f, 12, 1, "always-standard", "StandardSSD_LRS", "E10", 128);
    disk(f, 13, 1, "was-p30", "StandardSSD_LRS", "E30", 1024);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    /* Saturday: the window is open, its downgrade is behind. */
    opts(f, &o, &p, "2026-12-05T12:00:00Z", "2026-12-12T12:00:00Z");
    /* Without the originals nothing is matched. */
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 0);
    sql(f, "INSERT INTO disk_originals(disk_id, sku, tier, set_at) VALUES "
           "(11, 'Premium_LRS', '', '2026-12-04T20:10:00Z'), "
           "(13, 'Premium_LRS', '', '2026-12-04T20:10:00Z')");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 4);
    /* Disk 11: the upgrade of the open window, then next week's downgrade
     * (its upgrade falls after the period). */
    assert_int_equal(s.a[0].disk_id, 11);
    assert_int_equal(s.a[0].kind, TW_PLAN_UPGRADE);
    assert_string_equal(s.a[0].at, "2026-12-07T05:30:00Z");
    assert_string_equal(s.a[0].from, "StandardSSD_LRS");
    assert_string_equal(s.a[0].to, "Premium_LRS");
    assert_int_equal(s.a[1].kind, TW_PLAN_DOWNGRADE);
    assert_string_equal(s.a[1].at, "2026-12-11T20:10:00Z");
    assert_string_equal(s.a[1].from, "Premium_LRS");
    assert_string_equal(s.a[1].to, "StandardSSD_LRS");
    assert_true(s.a[0].due_ns < s.a[1].due_ns);
    /* Priced by P10 (9.00 a 730 h for 57 h 20 min). */
    assert_string_equal(s.a[1].saving, "0.706849");
    /* Disk 13 (a P30 of 1 TiB: 60 a month saved) by its original too. */
    assert_int_equal(s.a[2].disk_id, 13);
    assert_int_equal(s.a[2].kind, TW_PLAN_UPGRADE);
    assert_string_equal(s.a[2].to, "Premium_LRS");
    assert_string_equal(s.a[3].from, "Premium_LRS");
    assert_string_equal(s.a[3].saving, "4.712329");
    assert_int_equal(sum.upgrades, 2);
    assert_int_equal(sum.disks, 2);
    tw_policy_cleanup(&p);
}

static enum tw_err to_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append(arg, buf, len);
}

struct back {
    size_t n;
    struct acts *want;
    int bad;
};

static enum tw_err on_back(void *arg, const struct tw_plan_action *a)
{
    struct back *b = arg;
    assert_true(b->n < b->want->n);
    const size_t i = b->n++;
    assert_int_equal(a->kind, b->want->a[i].kind);
    assert_int_equal(a->due_ns, b->want->a[i].due_ns);
    assert_int_equal(a->disk_id, b->want->a[i].disk_id);
    assert_int_equal(a->vm_id, b->want->a[i].vm_id);
    assert_string_equal(a->vm, b->want->a[i].vm);
    assert_string_equal(a->disk, b->want->a[i].disk);
    assert_string_equal(a->from_sku, b->want->a[i].from);
    assert_string_equal(a->to_sku, b->want->a[i].to);
    assert_string_equal(a->idempotency_key, b->want->a[i].key);
    assert_string_equal(a->reason, b->want->a[i].reason);
    assert_string_equal(a->due_local, b->want->a[i].local);
    return TW_OK;
}

/* The JSON document: its fields, totals, and read back into the same
 * actions; bad documents are refused saying where. */
static void test_json_and_parse(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 4);
    struct tw_buf b;
    tw_buf_init(&b, 1 << 20);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_plan_json(f->st, &o, to_buf, &b, &err), TW_OK);
    json_error_t je;
    json_t *doc = json_loadb(b.data, b.len, 0, &je);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema_version")),
                        "tierwise.plan/1");
    assert_string_equal(json_string_value(json_object_get(doc, "from")), "2026-12-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(doc, "timezone")), "Europe/London");
    json_t *acts = json_object_get(doc, "actions");
    assert_int_equal(json_array_size(acts), 4);
    json_t *a0 = json_array_get(acts, 0);
    static const char *const fields[] = {
        "vm", "disk", "kind", "from_sku", "to_sku", "due_at", "due_local", "saving",
        "currency", "reason", "policy", "resource_group", "subscription_id",
        "idempotency_key", "vm_id", "disk_id"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (!json_object_get(a0, fields[i]))
            fail_msg("no %s in an action", fields[i]);
    assert_string_equal(json_string_value(json_object_get(a0, "saving")), "0.71");
    assert_string_equal(json_string_value(json_object_get(a0, "due_at")), "2026-12-04T20:10:00Z");
    assert_string_equal(json_string_value(json_object_get(a0, "resource_group")), "rg-a");
    assert_int_equal(json_integer_value(json_object_get(a0, "disk_id")), 11);
    json_t *tot = json_object_get(doc, "totals");
    assert_int_equal(json_integer_value(json_object_get(tot, "actions")), 4);
    assert_string_equal(json_string_value(json_object_get(tot, "saving")), "1.41");
    json_decref(doc);

    struct back bk = {0, &s, 0};
    struct tw_plan_sink sink = {on_back, &bk};
    assert_int_equal(tw_svc_plan_parse(b.data, b.len, &sink, &err), TW_OK);
    assert_int_equal(bk.n, 4);

    static const struct {
        const char *doc, *says;
    } bad[] = {
        {"[]", "not a JSON object"},
        {"{\"schema_version\":\"tierwise.plan/2\",\"policy\":\"p\",\"actions\":[]}",
         "tierwise.plan/1"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\"}", "actions"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"sideways\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"2026-12-04T20:10:00Z\",\"idempotency_key\":\"k\"}]}",
         "actions[0].kind"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"Friday\",\"idempotency_key\":\"k\"}]}",
         "actions[0].due_at"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"2026-12-04T20:10:00Z\"}]}",
         "idempotency_key"},
        {"{\"schema_version\":", "not valid JSON"},
        /* A negative saving, a due_at before 1970 or past 2199. */
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"downgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"2026-12-04T20:10:00Z\",\"idempotency_key\":\"k\",\"saving\":\"-0.71\"}]}",
         "actions[0].saving: \"-0.71\" is negative"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"1900-01-01T00:00:00Z\",\"idempotency_key\":\"k\"}]}",
         "actions[0].due_at: \"1900-01-01T00:00:00Z\" is outside the years 1970..2199"},
        {"{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
         "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
         "\"due_at\":\"2200-01-01T00:00:00Z\",\"idempotency_key\":\"k\"}]}",
         "is outside the years 1970..2199"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = (struct tw_error){0};
        assert_int_equal(tw_svc_plan_parse(bad[i].doc, strlen(bad[i].doc), NULL, &err),
                         TW_EPARSE);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("%zu: \"%s\" does not say %s", i, err.msg, bad[i].says);
    }
    /* A due_at with an offset is kept as UTC (from its instant). */
    static const char off[] =
        "{\"schema_version\":\"tierwise.plan/1\",\"policy\":\"p\",\"actions\":[{\"kind\":"
        "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
        "\"due_at\":\"2026-12-04T21:10:00+01:00\",\"idempotency_key\":\"k\"},{\"kind\":"
        "\"upgrade\",\"vm\":\"v\",\"disk\":\"d\",\"from_sku\":\"a\",\"to_sku\":\"b\","
        "\"due_at\":\"2026-12-04T20:10:00.250-00:30\",\"idempotency_key\":\"k2\"}]}";
    struct acts got;
    memset(&got, 0, sizeof(got));
    struct tw_plan_sink keep = {on_action, &got};
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_parse(off, strlen(off), &keep, &err), TW_OK);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.a[0].at, "2026-12-04T20:10:00Z");
    assert_string_equal(got.a[1].at, "2026-12-04T20:40:00.250Z");
    tw_buf_cleanup(&b);
    tw_policy_cleanup(&p);
}

static enum tw_err last_due(void *arg, const struct tw_plan_action *a)
{
    int64_t *last = arg;
    if (a->due_ns > *last)
        *last = a->due_ns;
    return TW_OK;
}

/* Dates a plan takes: the years 1970..2199, instants from 1970 (a day's
 * midnight too), and a period at most TW_PLAN_MAX_DAYS long (the run
 * refuses it up front, naming `to`); nothing overflows far out. */
static void test_date_range(void **state)
{
    struct fx *f = *state;
    struct tw_tz *lon = NULL, *utc = NULL;
    struct tw_error err = {0};
    /* Central Europe (+01:00 in January), as Europe/London was in 1970. */
    static const char cet[] = "CET-1CEST,M3.5.0,M10.5.0/3";
    assert_int_equal(tw_tz_from_posix(cet, strlen(cet), &lon, &err), TW_OK);
    assert_int_equal(zone(NULL, "UTC", &utc, &err), TW_OK);
    static const struct {
        const char *date;
        int utc;
        enum tw_err want;
        const char *says;
    } cases[] = {
        {"1970-01-01", 0, TW_ERANGE, "midnight outside"}, /* 1969-12-31T23:00Z */
        {"1970-01-01", 1, TW_OK, ""},
        {"1969-12-31", 1, TW_ERANGE, "1970..2199"},
        {"2199-12-31", 0, TW_OK, ""},
        {"2200-01-01", 1, TW_ERANGE, "1970..2199"},
        {"2262-04-10", 0, TW_ERANGE, "1970..2199"},
        {"9999-12-31", 1, TW_ERANGE, "1970..2199"},
        {"2262-04-11T23:47:16Z", 1, TW_ERANGE, "outside 1970"},
        {"2200-01-01T00:00:00Z", 1, TW_ERANGE, "outside 1970"},
        {"2199-12-31T23:59:59Z", 1, TW_OK, ""},
        {"1969-12-31T23:59:59Z", 1, TW_ERANGE, "outside 1970"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ns = 0;
        err = (struct tw_error){0};
        enum tw_err rc = tw_svc_plan_date(cases[i].date, strlen(cases[i].date),
                                          cases[i].utc ? utc : lon, &ns, &err);
        if (rc != cases[i].want || !strstr(err.msg, cases[i].says))
            fail_msg("%s: rc %d (%s)", cases[i].date, rc, err.msg);
    }
    tw_tz_free(lon);
    tw_tz_free(utc);
    /* The period's checks, and the run's. */
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_period(0, TW_PLAN_END_NS, 0, &err), TW_OK);
    assert_int_equal(tw_svc_plan_period(-1, TW_NS_PER_DAY, 0, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "from:"));
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_period(0, INT64_MAX, 0, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "to:"));
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_period(0, 367 * TW_NS_PER_DAY, TW_PLAN_ROUTE_MAX_DAYS, &err),
                     TW_ERANGE);
    assert_non_null(strstr(err.msg, "to: the period is longer than 366 days"));
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_period(0, 366 * TW_NS_PER_DAY, TW_PLAN_ROUTE_MAX_DAYS, &err),
                     TW_OK);
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-01-01T00:00:00Z", "2040-01-01T00:00:00Z");
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "to: the period is longer than 3631 days"));
    /* The longest period plans to its end (the windows' instants reach it). */
    opts(f, &o, &p, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
    o.to_ns = o.from_ns + (int64_t)TW_PLAN_MAX_DAYS * TW_NS_PER_DAY;
    err = (struct tw_error){0};
    int64_t last = 0, n = 0;
    struct tw_plan_sink lsink = {last_due, &last};
    assert_int_equal(tw_svc_plan_run(f->st, &o, &lsink, &sum, &err), TW_OK);
    n = sum.actions;
    assert_true(n > 1000);
    assert_true(last > o.to_ns - 8 * TW_NS_PER_DAY);
    o.to_ns += TW_NS_PER_DAY;
    assert_int_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_ERANGE);
    /* Up to the last instant a plan takes: no overflow (UBSan watches). */
    opts(f, &o, &p, "2199-12-01T00:00:00Z", "2199-12-31T23:59:59Z");
    o.to_ns = TW_PLAN_END_NS;
    err = (struct tw_error){0};
    assert_int_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_OK);
    assert_true(sum.actions >= 8);
    o.to_ns = TW_PLAN_END_NS + 1;
    assert_int_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_ERANGE);
    tw_policy_cleanup(&p);
}

/* The quota counts every real change before the period (the SKU
 * history's, by anyone), at its real time: a toggle after the first open
 * window began is not dropped, and a downgrade made late counts where it
 * was made, not where it was planned. */
static void test_quota_real_changes(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "clean", "Premium_LRS", "P10", 128);
    disk(f, 12, 1, "toggled", "Premium_LRS", "P10", 128);
    disk(f, 13, 1, "late", "Premium_LRS", "P10", 128);
    history(f, 11, "2026-11-01T00:00:00Z", "Premium_LRS", "P10");
    history(f, 12, "2026-11-01T00:00:00Z", "Premium_LRS", "P10");
    history(f, 13, "2026-11-01T00:00:00Z", "Premium_LRS", "P10");
    /* Someone toggled disk 12 twice on Monday evening (2026-12-07), after
     * the night's window opened at 20:00; disk 13's downgrade (due 20:10)
     * was made at 23:00. */
    history(f, 12, "2026-12-07T21:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 12, "2026-12-07T21:30:00Z", "Premium_LRS", "P10");
    history(f, 13, "2026-12-07T23:00:00Z", "StandardSSD_LRS", "E10");
    struct tw_policy p;
    policy(&p, "nights", "[\"Mon 20:00-Tue 06:00\",\"Tue 20:00-Wed 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-08T00:00:00Z", "2026-12-09T12:00:00Z");
    plan(f, &o, &s, &sum);
    size_t n11 = 0, n12 = 0, n13 = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.a[i].disk_id == 11)
            n11++;
        if (s.a[i].disk_id == 12)
            n12++;
        if (s.a[i].disk_id == 13) {
            n13++;
            /* only the upgrade back of Monday's window */
            assert_int_equal(s.a[i].kind, TW_PLAN_UPGRADE);
            assert_string_equal(s.a[i].at, "2026-12-08T05:30:00Z");
        }
    }
    /* Disk 11: Monday's upgrade, Tuesday's downgrade and upgrade. */
    assert_int_equal(n11, 3);
    /* Disk 12: two changes at 21:00 and 21:30 leave no room in 24 h. */
    assert_int_equal(n12, 0);
    /* Disk 13: 23:00, 05:30 and Tuesday's 20:10 would be 3 in 24 h. */
    assert_int_equal(n13, 1);
    tw_policy_cleanup(&p);
}

/* Disks left out for want of a price are counted, with the books
 * missing, in the summary and the JSON's totals. */
static void test_no_price(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    vm(f, 2, "far-1");
    sql(f, "UPDATE vms SET location = 'eastus' WHERE id = 2");
    disk(f, 21, 2, "far-d", "Premium_LRS", "P10", 128);
    disk(f, 22, 2, "far-e", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-08T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 2);
    assert_int_equal(sum.disks_without_price, 2);
    assert_int_equal(sum.missing_books, 1);
    assert_int_equal(sum.needed_books, 2);
    assert_string_equal(sum.missing_regions, "eastus (2 disks)");
    struct tw_buf b;
    tw_buf_init(&b, 1 << 20);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_plan_json(f->st, &o, to_buf, &b, &err), TW_OK);
    json_error_t je;
    json_t *doc = json_loadb(b.data, b.len, 0, &je);
    assert_non_null(doc);
    json_t *tot = json_object_get(doc, "totals");
    assert_int_equal(json_integer_value(json_object_get(tot, "disks_without_price")), 2);
    json_t *mr = json_object_get(tot, "missing_regions");
    assert_int_equal(json_array_size(mr), 1);
    assert_string_equal(json_string_value(json_array_get(mr, 0)), "eastus");
    json_decref(doc);
    tw_buf_cleanup(&b);
    tw_policy_cleanup(&p);
}

/* Actions kept with their names (a sink's are valid during its call). */
struct kept {
    size_t n;
    struct {
        struct tw_plan_action a;
        char vm[128], disk[128];
    } v[ACTS_MAX];
};

static enum tw_err on_keep(void *arg, const struct tw_plan_action *a)
{
    struct kept *k = arg;
    assert_true(k->n < ACTS_MAX);
    k->v[k->n].a = *a;
    snprintf(k->v[k->n].vm, sizeof(k->v[0].vm), "%s", a->vm);
    snprintf(k->v[k->n].disk, sizeof(k->v[0].disk), "%s", a->disk);
    k->v[k->n].a.vm = k->v[k->n].vm;
    k->v[k->n].a.disk = k->v[k->n].disk;
    k->v[k->n].a.resource_group = k->v[k->n].a.subscription_id = "";
    k->n++;
    return TW_OK;
}

/* Records K's actions: how many were new and how many known. */
static void record(struct fx *f, const struct kept *k, size_t *added_n, size_t *again_n)
{
    *added_n = *again_n = 0;
    for (size_t i = 0; i < k->n; i++) {
        bool added = false;
        int64_t id = 0;
        struct tw_error err = {0};
        if (tw_svc_plan_record(f->st, "dev-weekends", &k->v[i].a, "GBP", false, &added, &id,
                               &err) != TW_OK)
            fail_msg("%s", err.msg);
        if (added) {
            assert_true(id > 0);
            (*added_n)++;
        } else {
            (*again_n)++;
        }
    }
}

/* Recording: each action once; a second plan of the same switches records
 * nothing new and is no error. */
static void test_record(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    struct kept *k = calloc(1, sizeof(*k));
    struct tw_plan_sink sink = {on_keep, k};
    struct tw_plan_summary sum;
    struct tw_error err = {0};
    assert_int_equal(tw_svc_plan_run(f->st, &o, &sink, &sum, &err), TW_OK);
    assert_int_equal(k->n, 4);
    size_t added, again;
    record(f, k, &added, &again);
    assert_int_equal(added, 4);
    assert_int_equal(again, 0);
    k->n = 0;
    assert_int_equal(tw_svc_plan_run(f->st, &o, &sink, &sum, &err), TW_OK);
    record(f, k, &added, &again);
    assert_int_equal(added, 0);
    assert_int_equal(again, 4);
    free(k);
    tw_policy_cleanup(&p);
}

/* The calendar's lines: CRLF, at most 75 octets, each valid UTF-8 (no
 * fold inside a sequence); unfolded and unescaped, the SUMMARY is the
 * names as stored. */
static void test_ics_folding(void **state)
{
    struct fx *f = *state;
    /* Names with every TEXT special and multi-byte characters, long enough
     * to fold several times. */
    vm(f, 1, "vm-\xc3\xa9t\xc3\xa9,prod;eu\\west-\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac-"
             "\xf0\x9f\x92\xbe\xf0\x9f\x92\xbe-a-rather-long-name-of-a-machine");
    disk(f, 11, 1,
         "disk-\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc-data,1;2",
         "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-08T00:00:00Z");
    o.now_ns = at("2026-11-30T08:00:00Z");
    struct tw_buf b;
    tw_buf_init(&b, 1 << 20);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_plan_ics(f->st, &o, to_buf, &b, &err), TW_OK);
    assert_true(b.len > 2);
    assert_memory_equal(b.data + b.len - 2, "\r\n", 2);
    /* Every line: CRLF-ended, <= 75 octets, whole UTF-8 sequences. */
    size_t lines = 0, folds = 0;
    char unfolded[16384] = "";
    size_t ul = 0;
    for (const char *l = b.data; l < b.data + b.len;) {
        const char *e = strstr(l, "\r\n");
        assert_non_null(e);
        size_t n = (size_t)(e - l);
        for (size_t i = 0; i < n; i++)
            assert_true(l[i] != '\n' && l[i] != '\r');
        if (n > 75)
            fail_msg("line %zu has %zu octets: %.*s", lines, n, (int)n, l);
        /* A physical line starts and ends on whole sequences. */
        assert_true(((unsigned char)l[0] & 0xc0) != 0x80);
        if (l[0] == ' ') {
            folds++;
            assert_true(n < 2 || ((unsigned char)l[1] & 0xc0) != 0x80);
            memcpy(unfolded + ul, l + 1, n - 1);
            ul += n - 1;
        } else {
            if (ul)
                unfolded[ul++] = '\n';
            memcpy(unfolded + ul, l, n);
            ul += n;
        }
        unfolded[ul] = '\0';
        assert_true(ul < sizeof(unfolded) - 200);
        if (n && ((unsigned char)l[n - 1] & 0x80)) {
            /* The last octet completes its sequence. */
            size_t k = n - 1, cont = 0;
            while (k > 0 && ((unsigned char)l[k] & 0xc0) == 0x80) {
                k--;
                cont++;
            }
            unsigned char lead = (unsigned char)l[k];
            size_t want = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
            assert_int_equal(cont, want);
        }
        lines++;
        l = e + 2;
    }
    assert_true(folds >= 4);
    assert_non_null(strstr(unfolded, "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:"));
    assert_non_null(strstr(unfolded, "\nEND:VCALENDAR"));
    assert_non_null(strstr(unfolded, "\nDTSTAMP:20261130T080000Z\n"));
    assert_non_null(strstr(unfolded, "\nDTSTART:20261204T201000Z\nDTEND:20261204T202500Z\n"));
    char uid[200];
    snprintf(uid, sizeof(uid), "\nUID:dev-weekends/11/downgrade/%lld@tierwise\n",
             (long long)(at("2026-12-04T20:10:00Z") / 1000000));
    assert_non_null(strstr(unfolded, uid));
    const char *want =
        "\nSUMMARY:Downgrade disk disk-\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc"
        "\xc3\xbc\xc3\xbc-data\\,1\\;2 of VM vm-\xc3\xa9t\xc3\xa9\\,prod\\;eu\\\\west-\xe2\x82\xac"
        "\xe2\x82\xac\xe2\x82\xac-\xf0\x9f\x92\xbe\xf0\x9f\x92\xbe-a-rather-long-name-of-a-"
        "machine to StandardSSD_LRS\n";
    if (!strstr(unfolded, want))
        fail_msg("no escaped SUMMARY in:\n%s", unfolded);
    /* The description's line ends are \n escapes, not line ends. */
    const char *d = strstr(unfolded, "\nDESCRIPTION:");
    assert_non_null(d);
    const char *dend = strchr(d + 1, '\n');
    assert_non_null(dend);
    assert_non_null(strstr(d, "\\nExpected saving: 0.71 GBP"));
    assert_true(strstr(d, "\\nExpected saving") < dend);
    size_t events = 0;
    for (const char *q = unfolded; (q = strstr(q, "BEGIN:VEVENT")); q++)
        events++;
    assert_int_equal(events, 2);
    tw_buf_cleanup(&b);
    tw_policy_cleanup(&p);
}

/* Disks alike (the same windows and prices) share their windows' texts:
 * each still gets its own key, and the same times and reason. */
static void test_disks_alike(void **state)
{
    struct fx *f = *state;
    for (int v = 1; v <= 4; v++) {
        char name[16];
        snprintf(name, sizeof(name), "dev-%d", v);
        vm(f, v, name);
        disk(f, 10 * v + 1, v, "data-1", "Premium_LRS", "P10", 128);
    }
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 16);
    for (size_t i = 0; i < s.n; i++) {
        size_t k = i % 4;
        assert_int_equal(s.a[i].disk_id, 10 * (int64_t)(i / 4 + 1) + 1);
        assert_string_equal(s.a[i].at, s.a[k].at);
        assert_string_equal(s.a[i].local, s.a[k].local);
        assert_string_equal(s.a[i].reason, s.a[k].reason);
        assert_int_equal(s.a[i].kind, s.a[k].kind);
        char key[160];
        snprintf(key, sizeof(key), "dev-weekends/%lld/%s/%lld", (long long)s.a[i].disk_id,
                 s.a[i].kind == TW_PLAN_DOWNGRADE ? "downgrade" : "upgrade",
                 (long long)(s.a[i].due_ns / 1000000));
        assert_string_equal(s.a[i].key, key);
    }
    assert_string_equal(s.a[0].at, "2026-12-04T20:10:00Z");
    assert_string_equal(s.a[3].at, "2026-12-14T05:30:00Z");
    assert_non_null(strstr(s.a[2].reason, "window Fri 20:00-Mon 06:00 (Europe/London, list)"));
    assert_int_equal(sum.disks, 4);
    char total[64];
    assert_true(tw_amount_decimal(sum.saving, 6, total, sizeof(total)));
    assert_string_equal(total, "5.654795"); /* 8 x 9.00 x 57 h 20 min / 730 h */
    tw_policy_cleanup(&p);
}

/* Disks of other prices share the windows' instants: a P10 whose windows
 * save under min_saving plans nothing, the P30s of the same windows plan
 * theirs with the right times and reason (the texts made for every window
 * at the second disk, read by the third). */
static void test_disks_alike_prices(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "small", "Premium_LRS", "P10", 128);
    vm(f, 2, "dev-2");
    disk(f, 21, 2, "big", "Premium_LRS", "P30", 1024);
    vm(f, 3, "dev-3");
    disk(f, 31, 3, "big", "Premium_LRS", "P30", 1024);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "1.00");
    struct tw_plan_opts o;
    struct acts s;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-15T00:00:00Z");
    plan(f, &o, &s, &sum);
    assert_int_equal(s.n, 8);
    assert_int_equal(sum.windows_skipped, 2);
    for (size_t i = 0; i < s.n; i++) {
        assert_int_equal(s.a[i].disk_id, i < 4 ? 21 : 31);
        assert_string_equal(s.a[i].at, s.a[i % 4].at);
        assert_string_equal(s.a[i].local, s.a[i % 4].local);
        assert_string_equal(s.a[i].reason, "window Fri 20:00-Mon 06:00 (Europe/London, list) of "
                                           "dev-weekends");
    }
    assert_string_equal(s.a[4].at, "2026-12-04T20:10:00Z");
    assert_string_equal(s.a[5].at, "2026-12-07T05:30:00Z");
    assert_string_equal(s.a[6].at, "2026-12-11T20:10:00Z");
    assert_string_equal(s.a[7].local, "2026-12-14T05:30:00+00:00");
    char key[160];
    snprintf(key, sizeof(key), "dev-weekends/31/upgrade/%lld",
             (long long)(at("2026-12-14T05:30:00Z") / 1000000));
    assert_string_equal(s.a[7].key, key);
    tw_policy_cleanup(&p);
}

/* Consecutive periods split at a switch's due time (an upgrade's, a
 * downgrade's, or inside a window) plan together exactly what the whole
 * period plans: nothing lost at the seam, nothing twice. */
static void test_seams(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts whole, a, b;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-22T00:00:00Z");
    plan(f, &o, &whole, &sum);
    assert_int_equal(whole.n, 6);
    static const char *const seams[] = {"2026-12-07T05:30:00Z", "2026-12-11T20:10:00Z",
                                        "2026-12-12T00:00:00Z", "2026-12-07T05:30:00.000000001Z",
                                        "2026-12-11T20:09:59.999999999Z"};
    for (size_t k = 0; k < sizeof(seams) / sizeof(seams[0]); k++) {
        opts(f, &o, &p, "2026-12-01T00:00:00Z", seams[k]);
        plan(f, &o, &a, &sum);
        opts(f, &o, &p, seams[k], "2026-12-22T00:00:00Z");
        plan(f, &o, &b, &sum);
        if (a.n + b.n != whole.n)
            fail_msg("split at %s: %zu + %zu actions, the whole %zu", seams[k], a.n, b.n,
                     whole.n);
        for (size_t i = 0; i < whole.n; i++) {
            const char *got = i < a.n ? a.a[i].key : b.a[i - a.n].key;
            if (strcmp(got, whole.a[i].key) != 0)
                fail_msg("split at %s: action %zu is %s, not %s", seams[k], i, got,
                         whole.a[i].key);
        }
    }
    tw_policy_cleanup(&p);
}

/* Seams where the quota decides: two nights' windows whose second
 * downgrade would make three changes in 24 h.  A plan split anywhere
 * models the windows from the same anchor (the local Monday of the week
 * holding its start less the quota's span), so the part after the seam
 * sees the first night's switches and skips the second night too. */
static void test_seams_quota(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "d", "Premium_LRS", "P10", 128);
    struct tw_policy p;
    policy(&p, "nights", "[\"Mon 20:00-Tue 06:00\",\"Tue 19:00-Wed 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    struct acts whole, a, b;
    struct tw_plan_summary sum;
    opts(f, &o, &p, "2026-12-07T00:00:00Z", "2026-12-10T00:00:00Z");
    plan(f, &o, &whole, &sum);
    assert_int_equal(whole.n, 2);
    assert_string_equal(whole.a[0].at, "2026-12-07T20:10:00Z");
    assert_string_equal(whole.a[1].at, "2026-12-08T05:30:00Z");
    assert_int_equal(sum.windows_skipped, 1);
    static const char *const seams[] = {"2026-12-08T12:00:00Z", "2026-12-08T05:30:00Z",
                                        "2026-12-08T05:30:00.000000001Z",
                                        "2026-12-08T19:10:00Z", "2026-12-07T20:10:00Z",
                                        "2026-12-09T00:00:00Z"};
    for (size_t k = 0; k < sizeof(seams) / sizeof(seams[0]); k++) {
        opts(f, &o, &p, "2026-12-07T00:00:00Z", seams[k]);
        plan(f, &o, &a, &sum);
        opts(f, &o, &p, seams[k], "2026-12-10T00:00:00Z");
        plan(f, &o, &b, &sum);
        if (a.n + b.n != whole.n)
            fail_msg("split at %s: %zu + %zu actions, the whole %zu", seams[k], a.n, b.n,
                     whole.n);
        for (size_t i = 0; i < whole.n; i++) {
            const char *got = i < a.n ? a.a[i].key : b.a[i - a.n].key;
            if (strcmp(got, whole.a[i].key) != 0)
                fail_msg("split at %s: action %zu is %s, not %s", seams[k], i, got,
                         whole.a[i].key);
        }
    }
    /* Overlapping plans agree on what they share. */
    opts(f, &o, &p, "2026-12-08T00:00:00Z", "2026-12-09T12:00:00Z");
    plan(f, &o, &b, &sum);
    assert_int_equal(b.n, 1);
    assert_string_equal(b.a[0].key, whole.a[1].key);
    tw_policy_cleanup(&p);
}

static enum tw_err no_zone(void *arg, const char *name, struct tw_tz **out,
                           struct tw_error *err)
{
    (void)arg;
    (void)out;
    return tw_error_set(err, TW_ENOENT, "no zone %s on this machine", name);
}

/* Bad options and a zone that does not load are errors, said. */
static void test_errors(void **state)
{
    struct fx *f = *state;
    struct tw_policy p;
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    struct tw_plan_opts o;
    opts(f, &o, &p, "2026-12-08T00:00:00Z", "2026-12-01T00:00:00Z");
    struct tw_plan_summary sum;
    struct tw_error err = {0};
    assert_int_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "period"));
    tw_policy_cleanup(&p);
    /* A machine without Europe/London. */
    policy(&p, "dev-weekends", "[\"Fri 20:00-Mon 06:00\"]", 10, 30, "0");
    opts(f, &o, &p, "2026-12-01T00:00:00Z", "2026-12-08T00:00:00Z");
    o.zone = no_zone;
    err = (struct tw_error){0};
    assert_int_not_equal(tw_svc_plan_run(f->st, &o, NULL, &sum, &err), TW_OK);
    assert_int_equal(sum.fail, TW_OPP_FAIL_POLICY_ZONE);
    assert_non_null(strstr(err.msg, "Europe/London"));
    tw_policy_cleanup(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dst_weekends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_margins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_min_saving_edge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_original_sku, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_and_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ics_folding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disks_alike, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disks_alike_prices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_date_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_price, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_real_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seams_quota, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
