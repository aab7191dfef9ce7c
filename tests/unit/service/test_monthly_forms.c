/* test_monthly_forms.c - the monthly report's JSON and CSV forms
 * (monthly_json.c, monthly_csv.c) over a model built here by hand: every
 * member of the JSON document and every column of the CSV, an unpriced
 * disk's amounts null / empty (never 0), RFC 4180 quoting of commas,
 * quotes and newlines in names, CRLF record ends, amounts as plain
 * decimals (measured and expected figures too, never an exponent),
 * invalid UTF-8 from the store written as U+FFFD in both forms, and a
 * write that fails stopping the writer with its error. */
#include "testhelp.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/time.h"
#include "service/monthly.h"

struct fx {
    struct tw_mr_model m;
    struct tw_mr_disk d[3];
    struct tw_mr_sku_time sk[2];
    struct tw_mr_group g[2];
    struct tw_mr_book books[1];
    struct tw_mr_missing missing[1];
    char *notes[2];
    char pols[1][TW_POLICY_NAME_MAX];
    struct tw_mr_week_vm week[1];
    struct tw_mr_span spans[2];
    struct tw_mr_mark marks[1];
};

static struct tw_amount amt(int64_t micros)
{
    return tw_amount_of(tw_money_micros(micros));
}

/* MICROS / 3: an amount that does not end. */
static struct tw_amount third(int64_t micros)
{
    struct tw_amount a;
    struct tw_error e = {0};
    assert_int_equal(tw_money_ratio(tw_money_micros(micros), 1, 3, &a, &e), TW_OK);
    return a;
}

static int64_t at(const char *s)
{
    int64_t ns = 0;
    struct tw_error e = {0};
    assert_int_equal(tw_rfc3339_parse(s, strlen(s), &ns, &e), TW_OK);
    return ns;
}

static void build(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    struct tw_mr_model *m = &f->m;
    snprintf(m->month, sizeof(m->month), "2026-11");
    snprintf(m->currency, sizeof(m->currency), "EUR");
    m->decimals = 2;
    m->from_ns = at("2026-11-01T00:00:00Z");
    m->to_ns = at("2026-11-20T12:00:00Z");
    m->month_end_ns = at("2026-12-01T00:00:00Z");
    m->partial = true;
    snprintf(m->generated_at, sizeof(m->generated_at), "2026-11-20T12:00:00Z");
    m->group_by = TW_MR_BY_TAG;
    snprintf(m->group_tag, sizeof(m->group_tag), "team");

    /* disk 0: priced, downgraded part of the month, verdict under */
    struct tw_mr_disk *d = &f->d[0];
    d->vm_id = 7; d->disk_id = 70;
    d->vm = "vm, \"one\""; d->disk = "data\ndisk";
    d->subscription_id = "sub-1"; d->resource_group = "rg-a"; d->location = "westeurope";
    d->vm_size = "Standard_D4s_v5";
    d->resource_id = "/subscriptions/sub-1/resourceGroups/rg-a/providers/Microsoft.Compute/disks/d1";
    d->group = "payments";
    d->role = TW_DISK_DATA;
    snprintf(d->original_sku, sizeof(d->original_sku), "Premium_LRS");
    snprintf(d->original_tier, sizeof(d->original_tier), "P30");
    snprintf(d->sku, sizeof(d->sku), "Premium_LRS");
    snprintf(d->tier, sizeof(d->tier), "P30");
    snprintf(f->sk[0].sku, sizeof(f->sk[0].sku), "Premium_LRS");
    snprintf(f->sk[0].tier, sizeof(f->sk[0].tier), "P30");
    f->sk[0].seconds = 1800000;
    f->sk[0].cost = amt(60500000);
    f->sk[0].cost_r = tw_money_micros(60500000);
    snprintf(f->sk[1].sku, sizeof(f->sk[1].sku), "Standard_LRS");
    snprintf(f->sk[1].tier, sizeof(f->sk[1].tier), "S30");
    f->sk[1].seconds = 5400; /* 1.5 h */
    f->sk[1].cost = third(1000000);
    f->sk[1].cost_r = tw_money_micros(330000); /* the row's split */
    d->n_skus = 2; d->skus = f->sk;
    d->downgraded_seconds = 5400;
    d->switches = 2;
    d->drift_seconds = 600;
    d->running_metered_seconds = 30;
    d->cost = amt(60833333); d->cost_r = tw_money_micros(60830000);
    d->baseline = third(200000000); d->baseline_r = tw_money_micros(66670000);
    d->realised = amt(5833333); d->realised_r = tw_money_micros(5830000);
    d->transactions = amt(0); d->transactions_r = tw_money_micros(0);
    d->possible = amt(12345678); d->possible_r = tw_money_micros(12350000);
    d->priced = true;
    snprintf(d->policy, sizeof(d->policy), "nights");
    d->possible_known = true;
    snprintf(d->verdict, sizeof(d->verdict), "under");
    snprintf(d->verdict_reason, sizeof(d->verdict_reason), "IOPS 3000 of 5000, \"throttled\"");
    d->measured_iops = 3000; d->measured_mbps = 120.5;
    d->expected_iops = 5000; d->expected_mbps = NAN;
    snprintf(d->judged_at, sizeof(d->judged_at), "2026-11-10T08:00:00Z");

    /* disk 1: not priced (no book), excluded, no verdict */
    d = &f->d[1];
    d->vm_id = 8; d->disk_id = 80;
    d->vm = "vm2"; d->disk = "os";
    d->subscription_id = "sub-2"; d->resource_group = "rg-b"; d->location = "nowhere";
    d->vm_size = "Standard_B2s"; d->resource_id = ""; d->group = "(no tag)";
    d->role = TW_DISK_OS;
    snprintf(d->original_sku, sizeof(d->original_sku), "StandardSSD_LRS");
    snprintf(d->sku, sizeof(d->sku), "StandardSSD_LRS");
    d->priced = false;
    d->unpriced = "no_book";
    snprintf(d->unpriced_why, sizeof(d->unpriced_why), "no EUR price book for nowhere");
    d->excluded = "os_disk";
    snprintf(d->excluded_why, sizeof(d->excluded_why), "an OS disk, left alone");
    d->measured_iops = d->measured_mbps = d->expected_iops = d->expected_mbps = NAN;

    /* disk 2: priced, no policy covers it: possible unknown */
    d = &f->d[2];
    d->vm_id = 8; d->disk_id = 81;
    d->vm = "vm2"; d->disk = "data"; d->subscription_id = "sub-2"; d->resource_group = "rg-b";
    d->location = "westeurope"; d->vm_size = "Standard_B2s"; d->resource_id = "/x/d3";
    d->group = "(no tag)"; d->role = TW_DISK_DATA;
    snprintf(d->sku, sizeof(d->sku), "Premium_LRS");
    snprintf(d->original_sku, sizeof(d->original_sku), "Premium_LRS");
    d->cost = amt(1000000); d->cost_r = tw_money_micros(1000000);
    d->baseline = amt(1000000); d->baseline_r = tw_money_micros(1000000);
    d->priced = true;
    d->measured_iops = d->measured_mbps = d->expected_iops = d->expected_mbps = NAN;

    m->disks = f->d; m->n_disks = 3;
    f->g[0].key = "(no tag)"; f->g[0].first = 1; f->g[0].n = 2;
    f->g[0].t.vms = 1; f->g[0].t.disks = 2; f->g[0].t.unpriced = 1;
    f->g[0].t.cost = amt(1000000); f->g[0].t.cost_r = tw_money_micros(1000000);
    f->g[1].key = "payments"; f->g[1].first = 0; f->g[1].n = 1;
    f->g[1].t.vms = 1; f->g[1].t.disks = 1; f->g[1].t.under = 1; f->g[1].t.switches = 2;
    f->g[1].t.downgraded_seconds = 5400;
    m->groups = f->g; m->n_groups = 2;
    m->fleet.vms = 2; m->fleet.disks = 3; m->fleet.unpriced = 1; m->fleet.under = 1;
    m->fleet.switches = 2; m->fleet.downgraded_seconds = 5400; m->fleet.drift_seconds = 600;
    m->fleet.cost = amt(61833333); m->fleet.cost_r = tw_money_micros(61830000);
    m->fleet.baseline = third(203000000); m->fleet.baseline_r = tw_money_micros(67670000);
    m->fleet.realised = amt(5833333); m->fleet.realised_r = tw_money_micros(5830000);
    m->fleet.possible = amt(12345678); m->fleet.possible_r = tw_money_micros(12350000);

    snprintf(f->books[0].region, sizeof(f->books[0].region), "westeurope");
    snprintf(f->books[0].source, sizeof(f->books[0].source), "https://prices.example/api");
    snprintf(f->books[0].fetched_at, sizeof(f->books[0].fetched_at), "2026-10-30T00:00:00Z");
    f->books[0].from_ns = m->from_ns; f->books[0].to_ns = m->to_ns;
    f->books[0].disks = 2;
    m->books = f->books; m->n_books = 1;
    snprintf(f->missing[0].region, sizeof(f->missing[0].region), "nowhere");
    snprintf(f->missing[0].why, sizeof(f->missing[0].why), "no EUR book");
    f->missing[0].disks = 1;
    m->missing = f->missing; m->n_missing = 1;
    f->notes[0] = "the month still runs";
    f->notes[1] = "30 s on a metered SKU while running: transactions not counted";
    m->notes = f->notes; m->n_notes = 2;
    snprintf(f->pols[0], sizeof(f->pols[0]), "nights");
    m->policies = f->pols; m->n_policies = 1;
    m->week_from_ns = at("2026-11-09T00:00:00Z");
    m->week_to_ns = at("2026-11-16T00:00:00Z");
    f->spans[0].from_ns = m->week_from_ns; f->spans[0].to_ns = at("2026-11-09T20:00:00Z");
    snprintf(f->spans[0].state, sizeof(f->spans[0].state), "running");
    f->spans[1].from_ns = f->spans[0].to_ns; f->spans[1].to_ns = m->week_to_ns;
    snprintf(f->spans[1].state, sizeof(f->spans[1].state), "deallocated");
    f->marks[0].at_ns = at("2026-11-09T20:05:00Z");
    snprintf(f->marks[0].kind, sizeof(f->marks[0].kind), "downgrade");
    snprintf(f->marks[0].disk, sizeof(f->marks[0].disk), "data\ndisk");
    snprintf(f->marks[0].to_sku, sizeof(f->marks[0].to_sku), "Standard_LRS");
    snprintf(f->marks[0].state, sizeof(f->marks[0].state), "done");
    f->week[0].vm = "vm, \"one\""; f->week[0].vm_id = 7;
    f->week[0].spans = f->spans; f->week[0].n_spans = 2;
    f->week[0].marks = f->marks; f->week[0].n_marks = 1;
    m->week = f->week; m->n_week = 1;
}

static enum tw_err to_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append(arg, buf, len);
}

static json_t *json_of(const struct tw_mr_model *m)
{
    struct tw_buf b;
    tw_buf_init(&b, (size_t)1 << 28);
    struct tw_error err = {0};
    if (tw_mr_write_json(m, to_buf, &b, &err) != TW_OK)
        fail_msg("tw_mr_write_json: %s", err.msg);
    json_error_t je;
    json_t *doc = json_loadb(b.data, b.len, 0, &je);
    if (!doc)
        fail_msg("not JSON: %s at %d: %.200s", je.text, je.position, b.data);
    tw_buf_cleanup(&b);
    return doc;
}

static void keys_are(const json_t *o, const char *const *want, size_t n)
{
    assert_true(json_is_object(o));
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(o, want[i]))
            fail_msg("member \"%s\" missing", want[i]);
    if (json_object_size(o) != n) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)o, k, v) {
            bool known = false;
            for (size_t i = 0; i < n; i++)
                known |= !strcmp(k, want[i]);
            if (!known)
                fail_msg("member \"%s\" not in the contract", k);
        }
    }
}

static const char *s_of(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (!json_is_string(v))
        fail_msg("\"%s\" is not a string", k);
    return json_string_value(v);
}

static const char *const total_keys[] = {
    "vms", "disks", "unpriced", "possible_unknown", "under", "switches", "downgraded_hours",
    "drift_hours", "cost",
    "cost_unrounded", "baseline", "baseline_unrounded", "realised", "realised_unrounded",
    "transactions", "transactions_unrounded", "possible", "possible_unrounded"};

static void test_json_members(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    json_t *doc = json_of(&f.m);
    static const char *const top[] = {"schema_version", "month", "currency", "period",
                                      "partial", "generated_at", "group_by", "totals",
                                      "groups", "disks", "books", "missing", "policies",
                                      "notes", "week"};
    keys_are(doc, top, sizeof(top) / sizeof(top[0]));
    assert_string_equal(s_of(doc, "schema_version"), "tierwise.monthly-report/1");
    assert_string_equal(s_of(doc, "month"), "2026-11");
    assert_string_equal(s_of(doc, "currency"), "EUR");
    assert_string_equal(s_of(doc, "group_by"), "tag:team");
    assert_string_equal(s_of(doc, "generated_at"), "2026-11-20T12:00:00Z");
    assert_true(json_is_true(json_object_get(doc, "partial")));
    json_t *p = json_object_get(doc, "period");
    static const char *const pk[] = {"from", "to", "month_end"};
    keys_are(p, pk, 3);
    assert_string_equal(s_of(p, "from"), "2026-11-01T00:00:00Z");
    assert_string_equal(s_of(p, "to"), "2026-11-20T12:00:00Z");
    assert_string_equal(s_of(p, "month_end"), "2026-12-01T00:00:00Z");

    json_t *t = json_object_get(doc, "totals");
    keys_are(t, total_keys, sizeof(total_keys) / sizeof(total_keys[0]));
    assert_int_equal(json_integer_value(json_object_get(t, "vms")), 2);
    assert_int_equal(json_integer_value(json_object_get(t, "disks")), 3);
    assert_int_equal(json_integer_value(json_object_get(t, "unpriced")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "under")), 1);
    assert_int_equal(json_integer_value(json_object_get(t, "switches")), 2);
    assert_string_equal(s_of(t, "downgraded_hours"), "1.5");
    assert_string_equal(s_of(t, "drift_hours"), "0.166667");
    assert_string_equal(s_of(t, "cost"), "61.83");
    assert_string_equal(s_of(t, "cost_unrounded"), "61.833333000000");
    assert_string_equal(s_of(t, "baseline"), "67.67");
    assert_string_equal(s_of(t, "baseline_unrounded"), "67.666666666667");
    assert_string_equal(s_of(t, "transactions"), "0.00");
    assert_string_equal(s_of(t, "possible"), "12.35");

    json_t *g = json_object_get(doc, "groups");
    assert_int_equal(json_array_size(g), 2);
    static const char *const gk[] = {"key", "totals"};
    keys_are(json_array_get(g, 0), gk, 2);
    assert_string_equal(s_of(json_array_get(g, 0), "key"), "(no tag)");
    assert_string_equal(s_of(json_object_get(json_array_get(g, 1), "totals"), "downgraded_hours"),
                        "1.5");

    json_t *ds = json_object_get(doc, "disks");
    assert_int_equal(json_array_size(ds), 3);
    static const char *const dk[] = {
        "vm", "vm_id", "disk", "disk_id", "subscription_id", "resource_group", "location",
        "vm_size", "resource_id", "group", "role", "original_sku", "original_tier", "sku",
        "tier", "hours_by_sku", "downgraded_seconds", "downgraded_hours", "switches",
        "drift_seconds", "drift_hours", "running_metered_seconds", "cost", "cost_unrounded",
        "baseline", "baseline_unrounded", "realised", "realised_unrounded", "transactions",
        "transactions_unrounded", "possible", "possible_unrounded", "priced", "unpriced",
        "unpriced_why", "policy", "possible_known", "excluded", "excluded_why", "verdict"};
    json_t *d = json_array_get(ds, 0);
    keys_are(d, dk, sizeof(dk) / sizeof(dk[0]));
    assert_string_equal(s_of(d, "vm"), "vm, \"one\"");
    assert_string_equal(s_of(d, "disk"), "data\ndisk");
    assert_int_equal(json_integer_value(json_object_get(d, "vm_id")), 7);
    assert_int_equal(json_integer_value(json_object_get(d, "disk_id")), 70);
    assert_string_equal(s_of(d, "subscription_id"), "sub-1");
    assert_string_equal(s_of(d, "resource_group"), "rg-a");
    assert_string_equal(s_of(d, "location"), "westeurope");
    assert_string_equal(s_of(d, "vm_size"), "Standard_D4s_v5");
    assert_non_null(strstr(s_of(d, "resource_id"), "/disks/d1"));
    assert_string_equal(s_of(d, "group"), "payments");
    assert_string_equal(s_of(d, "role"), "data");
    assert_string_equal(s_of(d, "original_sku"), "Premium_LRS");
    assert_string_equal(s_of(d, "original_tier"), "P30");
    assert_string_equal(s_of(d, "sku"), "Premium_LRS");
    assert_string_equal(s_of(d, "tier"), "P30");
    json_t *hs = json_object_get(d, "hours_by_sku");
    assert_int_equal(json_array_size(hs), 2);
    static const char *const hk[] = {"sku", "tier", "seconds", "hours", "cost",
                                     "cost_unrounded"};
    json_t *h1 = json_array_get(hs, 1);
    keys_are(h1, hk, 6);
    assert_string_equal(s_of(h1, "sku"), "Standard_LRS");
    assert_string_equal(s_of(h1, "tier"), "S30");
    assert_int_equal(json_integer_value(json_object_get(h1, "seconds")), 5400);
    assert_string_equal(s_of(h1, "hours"), "1.5");
    assert_string_equal(s_of(h1, "cost"), "0.33");
    assert_string_equal(s_of(h1, "cost_unrounded"), "0.333333333333");
    assert_string_equal(s_of(json_array_get(hs, 0), "hours"), "500");
    assert_int_equal(json_integer_value(json_object_get(d, "downgraded_seconds")), 5400);
    assert_string_equal(s_of(d, "downgraded_hours"), "1.5");
    assert_int_equal(json_integer_value(json_object_get(d, "switches")), 2);
    assert_int_equal(json_integer_value(json_object_get(d, "drift_seconds")), 600);
    assert_string_equal(s_of(d, "drift_hours"), "0.166667");
    assert_int_equal(json_integer_value(json_object_get(d, "running_metered_seconds")), 30);
    assert_string_equal(s_of(d, "cost"), "60.83");
    assert_string_equal(s_of(d, "cost_unrounded"), "60.833333000000");
    assert_string_equal(s_of(d, "baseline"), "66.67");
    assert_string_equal(s_of(d, "baseline_unrounded"), "66.666666666667");
    assert_string_equal(s_of(d, "realised"), "5.83");
    assert_string_equal(s_of(d, "transactions"), "0.00");
    assert_string_equal(s_of(d, "transactions_unrounded"), "0.000000000000");
    assert_string_equal(s_of(d, "possible"), "12.35");
    assert_string_equal(s_of(d, "possible_unrounded"), "12.345678000000");
    assert_true(json_is_true(json_object_get(d, "priced")));
    assert_true(json_is_null(json_object_get(d, "unpriced")));
    assert_string_equal(s_of(d, "unpriced_why"), "");
    assert_string_equal(s_of(d, "policy"), "nights");
    assert_true(json_is_true(json_object_get(d, "possible_known")));
    assert_true(json_is_null(json_object_get(d, "excluded")));
    assert_string_equal(s_of(d, "excluded_why"), "");
    json_t *v = json_object_get(d, "verdict");
    static const char *const vk[] = {"kind", "reason", "measured", "expected", "judged_at"};
    keys_are(v, vk, 5);
    assert_string_equal(s_of(v, "kind"), "under");
    assert_string_equal(s_of(v, "reason"), "IOPS 3000 of 5000, \"throttled\"");
    assert_string_equal(s_of(v, "judged_at"), "2026-11-10T08:00:00Z");
    json_t *me = json_object_get(v, "measured"), *ex = json_object_get(v, "expected");
    static const char *const nk[] = {"iops", "mbps"};
    keys_are(me, nk, 2);
    keys_are(ex, nk, 2);
    assert_true(json_number_value(json_object_get(me, "iops")) == 3000);
    assert_true(json_number_value(json_object_get(me, "mbps")) == 120.5);
    assert_true(json_number_value(json_object_get(ex, "iops")) == 5000);
    assert_true(json_is_null(json_object_get(ex, "mbps")));

    /* the unpriced disk: its amounts null, never "0"; excluded named */
    d = json_array_get(ds, 1);
    keys_are(d, dk, sizeof(dk) / sizeof(dk[0]));
    assert_string_equal(s_of(d, "role"), "os");
    static const char *const am[] = {"cost", "baseline", "realised", "transactions", "possible"};
    for (size_t i = 0; i < 5; i++) {
        char k[40];
        snprintf(k, sizeof(k), "%s_unrounded", am[i]);
        assert_true(json_is_null(json_object_get(d, am[i])));
        assert_true(json_is_null(json_object_get(d, k)));
    }
    assert_true(json_is_false(json_object_get(d, "priced")));
    assert_string_equal(s_of(d, "unpriced"), "no_book");
    assert_string_equal(s_of(d, "unpriced_why"), "no EUR price book for nowhere");
    assert_string_equal(s_of(d, "excluded"), "os_disk");
    assert_string_equal(s_of(d, "excluded_why"), "an OS disk, left alone");
    assert_true(json_is_null(json_object_get(d, "verdict")));
    assert_int_equal(json_array_size(json_object_get(d, "hours_by_sku")), 0);
    /* possible not known: null, the other amounts strings */
    d = json_array_get(ds, 2);
    assert_true(json_is_null(json_object_get(d, "possible")));
    assert_true(json_is_null(json_object_get(d, "possible_unrounded")));
    assert_string_equal(s_of(d, "cost"), "1.00");
    assert_true(json_is_false(json_object_get(d, "possible_known")));

    json_t *b = json_array_get(json_object_get(doc, "books"), 0);
    static const char *const bk[] = {"region", "source", "fetched_at", "from", "to", "after",
                                     "disks"};
    keys_are(b, bk, 7);
    assert_string_equal(s_of(b, "source"), "https://prices.example/api");
    assert_string_equal(s_of(b, "fetched_at"), "2026-10-30T00:00:00Z");
    assert_string_equal(s_of(b, "to"), "2026-11-20T12:00:00Z");
    assert_true(json_is_false(json_object_get(b, "after")));
    assert_int_equal(json_integer_value(json_object_get(b, "disks")), 2);
    json_t *x = json_array_get(json_object_get(doc, "missing"), 0);
    static const char *const xk[] = {"region", "why", "disks"};
    keys_are(x, xk, 3);
    assert_string_equal(s_of(x, "region"), "nowhere");
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "policies"), 0)),
                        "nights");
    assert_int_equal(json_array_size(json_object_get(doc, "notes")), 2);
    json_t *w = json_object_get(doc, "week");
    static const char *const wk[] = {"from", "to", "vms"};
    keys_are(w, wk, 3);
    assert_string_equal(s_of(w, "from"), "2026-11-09T00:00:00Z");
    json_t *wv = json_array_get(json_object_get(w, "vms"), 0);
    static const char *const wvk[] = {"vm", "vm_id", "spans", "marks"};
    keys_are(wv, wvk, 4);
    json_t *sp = json_array_get(json_object_get(wv, "spans"), 1);
    static const char *const spk[] = {"from", "to", "state"};
    keys_are(sp, spk, 3);
    assert_string_equal(s_of(sp, "state"), "deallocated");
    assert_string_equal(s_of(sp, "from"), "2026-11-09T20:00:00Z");
    json_t *mk = json_array_get(json_object_get(wv, "marks"), 0);
    static const char *const mkk[] = {"at", "kind", "disk", "to_sku", "state"};
    keys_are(mk, mkk, 5);
    assert_string_equal(s_of(mk, "at"), "2026-11-09T20:05:00Z");
    assert_string_equal(s_of(mk, "disk"), "data\ndisk");
    json_decref(doc);
}

static void test_json_group_by_names(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    f.m.group_by = TW_MR_BY_RESOURCE_GROUP;
    json_t *doc = json_of(&f.m);
    assert_string_equal(s_of(doc, "group_by"), "resource-group");
    json_decref(doc);
    f.m.group_by = TW_MR_BY_SUBSCRIPTION;
    doc = json_of(&f.m);
    assert_string_equal(s_of(doc, "group_by"), "subscription");
    json_decref(doc);
    /* a JPY report: no minor unit */
    f.m.group_by = TW_MR_BY_TAG;
    snprintf(f.m.currency, sizeof(f.m.currency), "JPY");
    f.m.fleet.cost_r = tw_money_micros(62000000);
    doc = json_of(&f.m);
    assert_string_equal(s_of(json_object_get(doc, "totals"), "cost"), "62");
    json_decref(doc);
}

/* RFC 4180 records of TEXT (CRLF ends required; a lone LF only inside
 * quotes): *N records of up to 64 fields each. */
static char ***csv_parse(const char *text, size_t *n)
{
    char ***rows = NULL;
    *n = 0;
    const char *p = text;
    while (*p) {
        char **f = calloc(65, sizeof(char *));
        size_t nf = 0;
        for (;;) {
            struct tw_buf b;
            tw_buf_init(&b, 1 << 20);
            assert_int_equal(tw_buf_append(&b, "", 0), TW_OK);
            if (*p == '"') {
                p++;
                for (;;) {
                    assert_true(*p != '\0');
                    if (*p == '"' && p[1] == '"') {
                        tw_buf_append(&b, "\"", 1);
                        p += 2;
                    } else if (*p == '"') {
                        p++;
                        break;
                    } else {
                        tw_buf_append(&b, p++, 1);
                    }
                }
            } else {
                while (*p && *p != ',' && *p != '\r') {
                    assert_true(*p != '\n' && *p != '"');
                    tw_buf_append(&b, p++, 1);
                }
            }
            assert_true(nf < 64);
            f[nf++] = b.data;
            if (*p == ',') {
                p++;
                continue;
            }
            assert_true(p[0] == '\r' && p[1] == '\n');
            p += 2;
            break;
        }
        rows = realloc(rows, (*n + 1) * sizeof(*rows));
        rows[(*n)++] = f;
    }
    return rows;
}

static void csv_free(char ***rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; rows[i][j]; j++)
            free(rows[i][j]);
        free(rows[i]);
    }
    free(rows);
}

static const char *col(char ***rows, size_t r, const char *name)
{
    for (size_t j = 0; rows[0][j]; j++)
        if (!strcmp(rows[0][j], name))
            return rows[r][j];
    fail_msg("no column %s", name);
    return NULL;
}

static void test_csv_columns(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    struct tw_buf b;
    tw_buf_init(&b, 1 << 24);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_write_csv(&f.m, to_buf, &b, &err), TW_OK);
    /* quoting as RFC 4180 writes it, byte for byte */
    assert_non_null(strstr(b.data, ",\"data\ndisk\","));
    assert_non_null(strstr(b.data, ",\"vm, \"\"one\"\"\","));
    assert_non_null(strstr(b.data, ",\"IOPS 3000 of 5000, \"\"throttled\"\"\","));
    /* every record ends with CRLF, no bare LF outside the quoted name */
    assert_true(b.len > 2 && b.data[b.len - 2] == '\r' && b.data[b.len - 1] == '\n');
    size_t n;
    char ***rows = csv_parse(b.data, &n);
    assert_int_equal(n, 4);
    static const char *const want[] = {
        "BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd", "ResourceId",
        "ResourceName", "RegionId", "SubAccountId", "SkuMeter", "ListCost", "EffectiveCost",
        "x_VmName", "x_VmId", "x_DiskId", "x_ResourceGroup", "x_Group", "x_Role",
        "x_OriginalSku", "x_OriginalTier", "x_Sku", "x_Tier", "x_HoursBySku",
        "x_DowngradedHours", "x_Switches", "x_CostBaseline", "x_SavingsRealised",
        "x_Transactions", "x_SavingsPossible", "x_Policy", "x_Priced", "x_Unpriced",
        "x_UnpricedWhy", "x_Excluded", "x_ExcludedWhy", "x_Verdict", "x_VerdictReason",
        "x_MeasuredIops", "x_ExpectedIops", "x_MeasuredMBps", "x_ExpectedMBps",
        "x_DriftHours"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(rows[0][i], want[i]);
    size_t ncol = 0;
    while (rows[0][ncol])
        ncol++;
    for (size_t r = 1; r < n; r++) {
        size_t k = 0;
        while (rows[r][k])
            k++;
        assert_int_equal(k, ncol);
    }
    assert_string_equal(col(rows, 1, "BillingCurrency"), "EUR");
    assert_string_equal(col(rows, 1, "ChargePeriodStart"), "2026-11-01T00:00:00Z");
    assert_string_equal(col(rows, 1, "ChargePeriodEnd"), "2026-11-20T12:00:00Z");
    assert_non_null(strstr(col(rows, 1, "ResourceId"), "/disks/d1"));
    assert_string_equal(col(rows, 1, "ResourceName"), "data\ndisk");
    assert_string_equal(col(rows, 1, "RegionId"), "westeurope");
    assert_string_equal(col(rows, 1, "SubAccountId"), "sub-1");
    assert_string_equal(col(rows, 1, "SkuMeter"), "Premium_LRS P30");
    assert_string_equal(col(rows, 1, "ListCost"), "60.83");
    assert_string_equal(col(rows, 1, "EffectiveCost"), "60.83");
    assert_string_equal(col(rows, 1, "x_VmName"), "vm, \"one\"");
    assert_string_equal(col(rows, 1, "x_VmId"), "7");
    assert_string_equal(col(rows, 1, "x_DiskId"), "70");
    assert_string_equal(col(rows, 1, "x_ResourceGroup"), "rg-a");
    assert_string_equal(col(rows, 1, "x_Group"), "payments");
    assert_string_equal(col(rows, 1, "x_Role"), "data");
    assert_string_equal(col(rows, 1, "x_OriginalSku"), "Premium_LRS");
    assert_string_equal(col(rows, 1, "x_OriginalTier"), "P30");
    assert_string_equal(col(rows, 1, "x_Sku"), "Premium_LRS");
    assert_string_equal(col(rows, 1, "x_Tier"), "P30");
    assert_string_equal(col(rows, 1, "x_HoursBySku"), "Premium_LRS=500;Standard_LRS=1.5");
    assert_string_equal(col(rows, 1, "x_DowngradedHours"), "1.5");
    assert_string_equal(col(rows, 1, "x_Switches"), "2");
    assert_string_equal(col(rows, 1, "x_CostBaseline"), "66.67");
    assert_string_equal(col(rows, 1, "x_SavingsRealised"), "5.83");
    assert_string_equal(col(rows, 1, "x_Transactions"), "0.00");
    assert_string_equal(col(rows, 1, "x_SavingsPossible"), "12.35");
    assert_string_equal(col(rows, 1, "x_Policy"), "nights");
    assert_string_equal(col(rows, 1, "x_Priced"), "true");
    assert_string_equal(col(rows, 1, "x_Unpriced"), "");
    assert_string_equal(col(rows, 1, "x_UnpricedWhy"), "");
    assert_string_equal(col(rows, 1, "x_Excluded"), "");
    assert_string_equal(col(rows, 1, "x_ExcludedWhy"), "");
    assert_string_equal(col(rows, 1, "x_Verdict"), "under");
    assert_string_equal(col(rows, 1, "x_VerdictReason"), "IOPS 3000 of 5000, \"throttled\"");
    assert_string_equal(col(rows, 1, "x_MeasuredIops"), "3000");
    assert_string_equal(col(rows, 1, "x_ExpectedIops"), "5000");
    assert_string_equal(col(rows, 1, "x_MeasuredMBps"), "120.5");
    assert_string_equal(col(rows, 1, "x_ExpectedMBps"), "");
    assert_string_equal(col(rows, 1, "x_DriftHours"), "0.166667");
    assert_string_equal(col(rows, 1, "x_VmSize"), "Standard_D4s_v5");
    assert_string_equal(col(rows, 1, "x_MeteredRunningHours"), "0.008333");
    assert_string_equal(col(rows, 1, "x_JudgedAt"), "2026-11-10T08:00:00Z");
    /* the unpriced disk: amounts empty, never 0; the reason named */
    static const char *const am[] = {"ListCost", "EffectiveCost", "x_CostBaseline",
                                     "x_SavingsRealised", "x_Transactions",
                                     "x_SavingsPossible"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(col(rows, 2, am[i]), "");
    assert_string_equal(col(rows, 2, "x_Priced"), "false");
    assert_string_equal(col(rows, 2, "x_Unpriced"), "no_book");
    assert_string_equal(col(rows, 2, "x_UnpricedWhy"), "no EUR price book for nowhere");
    assert_string_equal(col(rows, 2, "x_Excluded"), "os_disk");
    assert_string_equal(col(rows, 2, "x_Role"), "os");
    assert_string_equal(col(rows, 2, "SkuMeter"), "StandardSSD_LRS");
    assert_string_equal(col(rows, 2, "x_Verdict"), "");
    assert_string_equal(col(rows, 2, "x_MeasuredIops"), "");
    assert_string_equal(col(rows, 2, "x_HoursBySku"), "");
    /* possible not known: empty, the cost there */
    assert_string_equal(col(rows, 3, "x_SavingsPossible"), "");
    assert_string_equal(col(rows, 3, "ListCost"), "1.00");
    csv_free(rows, n);
    tw_buf_cleanup(&b);
}

/* A write that fails: the writer stops at once and says so. */
struct failing {
    int calls, fail_at;
    size_t bytes;
};

static enum tw_err failing_write(void *arg, const char *buf, size_t len)
{
    (void)buf;
    struct failing *f = arg;
    if (++f->calls >= f->fail_at)
        return TW_EIO;
    f->bytes += len;
    return TW_OK;
}

static void test_write_failure(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    /* many rows, so that the writers flush more than once */
    size_t n = 4000;
    struct tw_mr_disk *many = calloc(n, sizeof(*many));
    for (size_t i = 0; i < n; i++) {
        many[i] = f.d[i % 3];
        many[i].disk_id = (int64_t)i + 1;
    }
    f.m.disks = many;
    f.m.n_disks = n;
    for (int form = 0; form < 2; form++) {
        struct failing w = {.fail_at = 1000000};
        struct tw_error err = {0};
        enum tw_err rc = form ? tw_mr_write_csv(&f.m, failing_write, &w, &err)
                              : tw_mr_write_json(&f.m, failing_write, &w, &err);
        if (rc != TW_OK) {
            free(many);
            fail_msg("form %d: %s", form, err.msg);
        }
        int all = w.calls;
        assert_true(all > 2);
        w = (struct failing){.fail_at = 2};
        memset(&err, 0, sizeof(err));
        rc = form ? tw_mr_write_csv(&f.m, failing_write, &w, &err)
                  : tw_mr_write_json(&f.m, failing_write, &w, &err);
        assert_int_equal(rc, TW_EIO);
        assert_int_equal(w.calls, 2); /* nothing written past the failure */
        assert_int_equal(err.code, TW_EIO);
        assert_non_null(strstr(err.msg, "writing"));
    }
    free(many);
    /* a zeroed amount (a total the builder never added to) is 0 */
    build(&f);
    f.m.fleet.transactions = (struct tw_amount){0, 0};
    json_t *doc = json_of(&f.m);
    assert_string_equal(s_of(json_object_get(doc, "totals"), "transactions_unrounded"),
                        "0.000000000000");
    json_decref(doc);
}

/* An amount past what the currency can show stops the writer with the
 * error, never a half-formatted figure. */
static void test_bad_currency(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    snprintf(f.m.currency, sizeof(f.m.currency), "XXX");
    struct tw_buf b;
    tw_buf_init(&b, 1 << 24);
    struct tw_error err = {0};
    assert_int_not_equal(tw_mr_write_json(&f.m, to_buf, &b, &err), TW_OK);
    assert_true(err.msg[0] != '\0');
    memset(&err, 0, sizeof(err));
    assert_int_not_equal(tw_mr_write_csv(&f.m, to_buf, &b, &err), TW_OK);
    assert_true(err.msg[0] != '\0');
    tw_buf_cleanup(&b);
}

/* Invalid UTF-8 from the store (a name with 0xFF, a cut sequence, an
 * overlong form, a surrogate) is written as U+FFFD in both forms; valid
 * multi-byte text is kept as it is. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    f.d[0].disk = "a\xff" "b\xc3" "\xe9t\xc0\xaf\xed\xa0\x80\xe2\x82";
    f.d[0].vm = "caf\xc3\xa9 \xf0\x9f\x92\xbe";
    /* each byte that starts no sequence is one U+FFFD: \xc3 before \xe9,
     * \xe9 before 't', the overlong \xc0\xaf, the surrogate \xed\xa0\x80,
     * the cut \xe2\x82 */
#define R "\xef\xbf\xbd"
    const char *want = "a" R "b" R R "t" R R R R R R R;
#undef R
    json_t *doc = json_of(&f.m); /* jansson refuses invalid UTF-8 */
    const json_t *d0 = json_array_get(json_object_get(doc, "disks"), 0);
    assert_string_equal(s_of(d0, "disk"), want);
    assert_string_equal(s_of(d0, "vm"), "caf\xc3\xa9 \xf0\x9f\x92\xbe");
    json_decref(doc);
    struct tw_buf b;
    tw_buf_init(&b, 1 << 24);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_write_csv(&f.m, to_buf, &b, &err), TW_OK);
    json_error_t je;
    /* the whole CSV is valid UTF-8: jansson dumps a string of it (it
     * refuses to encode invalid UTF-8) */
    json_t *s = json_stringn_nocheck(b.data, b.len);
    assert_non_null(s);
    char *dumped = json_dumps(s, JSON_ENCODE_ANY);
    json_decref(s);
    assert_non_null(dumped);
    json_t *back = json_loads(dumped, JSON_DECODE_ANY, &je);
    free(dumped);
    if (!back)
        fail_msg("the CSV is not valid UTF-8: %s", je.text);
    json_decref(back);
    size_t n = 0;
    char ***rows = csv_parse(b.data, &n);
    assert_string_equal(col(rows, 1, "ResourceName"), want);
    assert_string_equal(col(rows, 1, "x_VmName"), "caf\xc3\xa9 \xf0\x9f\x92\xbe");
    csv_free(rows, n);
    tw_buf_cleanup(&b);
}

/* The CSV's measured and expected figures are plain decimals, never an
 * exponent (%.15g gave 1e+20 and 1.5e-05). */
static void test_csv_plain_numbers(void **state)
{
    (void)state;
    struct fx f;
    build(&f);
    f.d[0].measured_iops = 1e20;
    f.d[0].expected_iops = 0.000015;
    f.d[0].measured_mbps = -2.5e-7;
    f.d[0].expected_mbps = 123456.75;
    struct tw_buf b;
    tw_buf_init(&b, 1 << 24);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_write_csv(&f.m, to_buf, &b, &err), TW_OK);
    size_t n = 0;
    char ***rows = csv_parse(b.data, &n);
    assert_string_equal(col(rows, 1, "x_MeasuredIops"), "100000000000000000000");
    assert_string_equal(col(rows, 1, "x_ExpectedIops"), "0.000015");
    assert_string_equal(col(rows, 1, "x_MeasuredMBps"), "-0.00000025");
    assert_string_equal(col(rows, 1, "x_ExpectedMBps"), "123456.75");
    for (size_t r = 1; r < n; r++)
        for (size_t j = 0; rows[r][j]; j++)
            if (!strncmp(rows[0][j], "x_Measured", 10) || !strncmp(rows[0][j], "x_Expected", 10))
                assert_null(strpbrk(rows[r][j], "eE"));
    csv_free(rows, n);
    tw_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_members),
        cmocka_unit_test(test_json_group_by_names),
        cmocka_unit_test(test_csv_columns),
        cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_bad_currency),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_csv_plain_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
