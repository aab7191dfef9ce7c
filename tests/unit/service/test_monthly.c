/* test_monthly.c - the monthly report's model (service/monthly.c): a store
 * built row by row in a temporary database, the model built for November
 * 2026 and its figures checked to the second and the exact amount. */
#include "testhelp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/policy.h"
#include "core/time.h"
#include "service/compliance.h"
#include "service/monthly.h"
#include "service/whatif.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
    struct tw_mr_model m;
};

static void sql(struct fx *f, const char *text)
{
    th_sql_exec(f->path, text);
}

static int64_t at(const char *s)
{
    int64_t ns;
    struct tw_error err = {0};
    if (tw_rfc3339_parse(s, strlen(s), &ns, &err) != TW_OK)
        fail_msg("%s: %s", s, err.msg);
    return ns;
}

static void item(char *buf, size_t cap, const char *region, const char *meter,
                 const char *product, const char *price, const char *start)
{
    size_t l = strlen(buf);
    char sku[64];
    snprintf(sku, sizeof(sku), "%.*s", (int)(strstr(meter, " Disk") - meter), meter);
    snprintf(buf + l, cap - l,
             "%s{\"currencyCode\":\"GBP\",\"tierMinimumUnits\":0,\"retailPrice\":%s,"
             "\"unitPrice\":%s,\"armRegionName\":\"%s\",\"location\":\"EU West\","
             "\"effectiveStartDate\":\"%s\",\"meterName\":\"%s\","
             "\"productName\":\"%s\",\"skuName\":\"%s\",\"serviceName\":\"Storage\","
             "\"unitOfMeasure\":\"1/Month\",\"type\":\"Consumption\"}",
             l > 1 ? "," : "", price, price, region, start, meter, product, sku);
}

#define PREM "Premium SSD Managed Disks"
#define STD "Standard SSD Managed Disks"
#define EARLY "2020-01-01T00:00:00Z"

/* P10 16.16, P20 26.28 and E10 E10_PRICE a month in REGION, GBP. */
static void region_book(char *items, size_t cap, const char *region, const char *e10_price)
{
    snprintf(items, cap, "[");
    item(items, cap, region, "P10 LRS Disk", PREM, "16.16", EARLY);
    item(items, cap, region, "P20 LRS Disk", PREM, "26.28", EARLY);
    item(items, cap, region, "E10 LRS Disk", STD, e10_price, EARLY);
    strcat(items, "]");
}

static void book_text(char *items, size_t cap, const char *e10_price)
{
    region_book(items, cap, "westeurope", e10_price);
}

static void book_put(struct fx *f, const char *fetched_at, const char *items)
{
    struct tw_error err = {0};
    if (tw_store_pricebook_put(f->st, "westeurope", "GBP", "test book", fetched_at, items,
                               strlen(items), &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void vm(struct fx *f, int id, const char *name, const char *rg, const char *loc,
               const char *tags)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
             "vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (%d, "
             "'vm:%d', '%s', 'sub-a', '%s', '%s', 'Standard_D2s_v3', '%s', 'r%d', "
             "'2026-01-01T00:00:00Z', 1767225600000)",
             id, id, name, rg, loc, tags, id);
    sql(f, q);
}

static void disk(struct fx *f, int id, int vm_id, const char *name, const char *sku,
                 const char *tier, int size, int pos)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, "
             "caching, last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES (%d, "
             "'d%d', %d, '%s', 'data', %d, '%s', %d, '%s', 'None', '2026-01-01T00:00:00Z', "
             "1767225600000, %d, 1, 0)",
             id, id, vm_id, name, pos, sku, size, tier, pos);
    sql(f, q);
}

static void hist(struct fx *f, int disk_id, const char *when, const char *sku, const char *tier)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms(when, &ms));
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, tier, "
             "size_gib, source) VALUES (%d, '%s', %lld, '%s', '%s', 128, 'arm')",
             disk_id, when, (long long)ms, sku, tier);
    sql(f, q);
}

static void power(struct fx *f, int vm_id, const char *when, const char *state)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms(when, &ms));
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) VALUES "
             "(%d, '%s', %lld, '%s', 'arm')",
             vm_id, when, (long long)ms, state);
    sql(f, q);
}

/* A done disk action verified at VERIFIED ("...T20:00:00.000Z"). */
static void action(struct fx *f, int id, int disk_id, int vm_id, const char *kind,
                   const char *from, const char *to, const char *verified, const char *policy)
{
    char q[2048];
    snprintf(q, sizeof(q),
             "INSERT INTO actions(id, disk_id, vm_id, kind, from_sku, to_sku, state, "
             "requested_at, dry_run, policy, due_ms) VALUES (%d, %d, %d, '%s', '%s', '%s', "
             "'done', '%s', 0, %s%s%s, NULL);"
             "INSERT INTO action_transitions(action_id, from_state, to_state, at) VALUES "
             "(%d, NULL, 'planned', '%s'), (%d, 'planned', 'checked', '%s'), "
             "(%d, 'checked', 'sent', '%s'), (%d, 'sent', 'verified', '%s'), "
             "(%d, 'verified', 'done', '%s');",
             id, disk_id, vm_id, kind, from, to, verified, policy ? "'" : "",
             policy ? policy : "NULL", policy ? "'" : "", id, verified, id, verified, id,
             verified, id, verified, id, verified);
    sql(f, q);
}

static enum tw_err zone(void *arg, const char *name, struct tw_tz **out, struct tw_error *err)
{
    (void)arg;
    if (strcmp(name, "UTC") != 0)
        return tw_error_set(err, TW_ENOENT, "no zone %s here", name);
    return tw_tz_from_posix("UTC0", 4, out, err);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tw.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &f->st, &err), TW_OK);
    assert_int_equal(tw_tier_catalog_builtin(&f->cat, &err), TW_OK);
    assert_int_equal(tw_vmcap_table_builtin(&f->caps, &err), TW_OK);
    char items[8192];
    book_text(items, sizeof(items), "7.16");
    book_put(f, "2020-01-01T00:00:00Z", items);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_mr_model_cleanup(&f->m);
    tw_store_close(f->st);
    tw_tier_catalog_cleanup(&f->cat);
    tw_vmcap_table_cleanup(&f->caps);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void opts(struct fx *f, struct tw_mr_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->year = 2026;
    o->month = 11;
    o->cat = &f->cat;
    o->caps = &f->caps;
    o->zone = zone;
    o->now_ns = at("2026-12-01T10:00:00Z");
}

static void build_ok(struct fx *f, const struct tw_mr_opts *o)
{
    struct tw_error err = {0};
    tw_mr_model_cleanup(&f->m);
    if (tw_mr_build(f->st, o, &f->m, &err) != TW_OK)
        fail_msg("tw_mr_build: %s", err.msg);
    /* every row adds up on paper: its rounded realised saving is its rounded
     * baseline less its rounded cost and transactions, and the fleet's
     * rounded figures are the sums of the rows' */
    int64_t cost = 0, base = 0, real = 0;
    for (size_t i = 0; i < f->m.n_disks; i++) {
        const struct tw_mr_disk *d = &f->m.disks[i];
        assert_int_equal(d->realised_r.micros,
                         d->baseline_r.micros - d->cost_r.micros - d->transactions_r.micros);
        cost += d->cost_r.micros;
        base += d->baseline_r.micros;
        real += d->realised_r.micros;
    }
    assert_int_equal(f->m.fleet.cost_r.micros, cost);
    assert_int_equal(f->m.fleet.baseline_r.micros, base);
    assert_int_equal(f->m.fleet.realised_r.micros, real);
}

static const struct tw_mr_disk *row(const struct fx *f, int64_t disk_id)
{
    for (size_t i = 0; i < f->m.n_disks; i++)
        if (f->m.disks[i].disk_id == disk_id)
            return &f->m.disks[i];
    fail_msg("no row for disk %lld", (long long)disk_id);
    return NULL;
}

static void amount_is(struct tw_amount a, const char *want)
{
    char buf[64];
    assert_true(tw_amount_decimal(a, 12, buf, sizeof(buf)));
    assert_string_equal(buf, want);
}

static void money_is(struct tw_money m, const char *want)
{
    char buf[64];
    struct tw_error err = {0};
    assert_int_equal(tw_money_format(m, "GBP", buf, sizeof(buf), &err), TW_OK);
    assert_string_equal(buf, want);
}

static bool same(struct tw_amount a, struct tw_amount b)
{
    struct tw_amount d;
    assert_int_equal(tw_amount_sub(a, b, &d, NULL), TW_OK);
    return d.num == 0;
}

static int64_t sku_seconds(const struct tw_mr_disk *d, const char *sku)
{
    for (size_t i = 0; i < d->n_skus; i++)
        if (strcmp(d->skus[i].sku, sku) == 0)
            return d->skus[i].seconds;
    return 0;
}

static bool has_note(const struct fx *f, const char *part)
{
    for (size_t i = 0; i < f->m.n_notes; i++)
        if (strstr(f->m.notes[i], part))
            return true;
    return false;
}

/* Every weekend of November 2026 (and the one running into it, from Fri
 * 30 Oct) on E10 by done actions at Fri 20:00:00 and Mon 06:00:00 UTC, the
 * VM deallocated then; ARM's history sees each change seconds later. */
static void weekends(struct fx *f, int vm_id, int disk_id, const char *name, int first_action)
{
    vm(f, vm_id, name, "rg-a", "westeurope", "{\"env\":\"dev\"}");
    disk(f, disk_id, vm_id, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, disk_id, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    static const char *const fri[] = {"2026-10-30", "2026-11-06", "2026-11-13", "2026-11-20",
                                      "2026-11-27"};
    static const char *const mon[] = {"2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23",
                                      "2026-11-30"};
    int id = first_action;
    for (int w = 0; w < 5; w++) {
        char a[40], b[40], c[40];
        snprintf(a, sizeof(a), "%sT19:50:00Z", fri[w]);
        power(f, vm_id, a, "deallocated");
        snprintf(a, sizeof(a), "%sT20:00:00.000Z", fri[w]);
        snprintf(c, sizeof(c), "%sT20:00:04Z", fri[w]);
        action(f, id++, disk_id, vm_id, "downgrade", "Premium_LRS", "StandardSSD_LRS", a,
               "weekends");
        hist(f, disk_id, c, "StandardSSD_LRS", "E10");
        snprintf(b, sizeof(b), "%sT06:00:00.000Z", mon[w]);
        snprintf(c, sizeof(c), "%sT06:00:03Z", mon[w]);
        action(f, id++, disk_id, vm_id, "upgrade", "StandardSSD_LRS", "Premium_LRS", b,
               "weekends");
        hist(f, disk_id, c, "Premium_LRS", "P10");
        snprintf(a, sizeof(a), "%sT06:10:00Z", mon[w]);
        power(f, vm_id, a, "running");
    }
}

static void test_weekends_match_savings(void **state)
{
    struct fx *f = *state;
    weekends(f, 1, 11, "vm-a", 100);
    weekends(f, 2, 12, "vm-b", 200);
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    assert_int_equal(f->m.n_disks, 2);
    assert_false(f->m.partial);
    assert_string_equal(f->m.currency, "GBP");
    const struct tw_mr_disk *d = row(f, 11);
    /* 30 h of the weekend begun on 30 Oct, then 4 x 58 h: 262 h on E10 */
    assert_int_equal(sku_seconds(d, "StandardSSD_LRS"), 262 * 3600);
    assert_int_equal(sku_seconds(d, "Premium_LRS"), (720 - 262) * 3600);
    assert_int_equal(d->downgraded_seconds, 262 * 3600);
    assert_int_equal(d->switches, 9);
    assert_int_equal(d->running_metered_seconds, 0);
    assert_string_equal(d->original_sku, "Premium_LRS");
    assert_string_equal(d->original_tier, "P10");
    assert_string_equal(d->sku, "Premium_LRS");
    assert_true(d->priced);
    /* baseline 16.16 x 720 / 730; cost 16.16 x 458 / 730 + 7.16 x 262 / 730 */
    amount_is(d->baseline, "15.938630136986");
    amount_is(d->cost, "12.708493150685");
    amount_is(d->realised, "3.230136986301");
    money_is(d->realised_r, "3.23");
    amount_is(d->transactions, "0.000000000000");
    /* THE check: what `tierwise savings` computes for the same hours and
     * prices (the what-if over the same book, the windows "Fri 20:00-Mon
     * 06:00" UTC, 2026-11-01..2026-12-01). */
    char items[8192];
    book_text(items, sizeof(items), "7.16");
    struct tw_pricebook *pb = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_whatif_book(items, strlen(items), "book.json", "westeurope", "GBP", NULL,
                                    "2026-11-01T00:00:00Z", &pb, &err),
                     TW_OK);
    struct tw_whatif_req *rq = calloc(1, sizeof(*rq));
    struct tw_whatif_result *wr = calloc(1, sizeof(*wr));
    tw_whatif_req_init(rq);
    snprintf(rq->region, sizeof(rq->region), "westeurope");
    snprintf(rq->currency, sizeof(rq->currency), "GBP");
    snprintf(rq->from_tier, sizeof(rq->from_tier), "P10");
    snprintf(rq->to_tier, sizeof(rq->to_tier), "E10");
    rq->n_windows = 1;
    snprintf(rq->window[0], sizeof(rq->window[0]), "Fri 20:00-Mon 06:00");
    const char *period = "2026-11-01..2026-12-01";
    assert_int_equal(tw_whatif_period_parse(period, strlen(period), rq, &err), TW_OK);
    rq->count = 2;
    char field[TW_WHATIF_FIELD_MAX] = "";
    if (tw_whatif_run(rq, &f->cat, pb, NULL, wr, field, &err) != TW_OK)
        fail_msg("whatif: %s (%s)", err.msg, field);
    assert_int_equal(wr->downgraded_ns, d->downgraded_seconds * TW_NS_PER_S);
    assert_true(same(wr->saving, d->realised));
    assert_true(same(wr->baseline, d->baseline));
    assert_true(same(wr->saving, row(f, 12)->realised));
    assert_true(same(wr->total_saving, f->m.fleet.realised));
    assert_true(same(wr->total_baseline, f->m.fleet.baseline));
    money_is(f->m.fleet.realised_r, "6.46");
    assert_int_equal(f->m.fleet.vms, 2);
    assert_int_equal(f->m.fleet.disks, 2);
    assert_int_equal(f->m.fleet.switches, 18);
    free(rq);
    free(wr);
    tw_pricebook_free(pb);
    /* the book that priced it, for the whole month */
    assert_int_equal(f->m.n_books, 1);
    assert_string_equal(f->m.books[0].region, "westeurope");
    assert_int_equal(f->m.books[0].from_ns, at("2026-11-01T00:00:00Z"));
    assert_int_equal(f->m.books[0].to_ns, at("2026-12-01T00:00:00Z"));
    assert_false(f->m.books[0].after);
    assert_int_equal(f->m.books[0].disks, 2);
    /* the week: Mon 23 to Mon 30 Nov, the Friday downgrades marked */
    assert_int_equal(f->m.week_from_ns, at("2026-11-23T00:00:00Z"));
    assert_int_equal(f->m.week_to_ns, at("2026-11-30T00:00:00Z"));
    assert_int_equal(f->m.n_week, 2);
    assert_string_equal(f->m.week[0].vm, "vm-a");
    assert_int_equal(f->m.week[0].n_marks, 2); /* Mon 23 06:00 up, Fri 27 20:00 down */
    assert_string_equal(f->m.week[0].marks[1].kind, "downgrade");
    assert_int_equal(f->m.week[0].marks[1].at_ns, at("2026-11-27T20:00:00Z"));
    assert_string_equal(f->m.week[0].marks[1].disk, "data0");
    assert_string_equal(f->m.week[0].marks[1].to_sku, "StandardSSD_LRS");
    assert_string_equal(f->m.week[0].marks[1].state, "done");
    assert_string_equal(f->m.week[0].marks[0].kind, "upgrade");
    assert_true(f->m.week[0].n_spans >= 3);
    assert_string_equal(f->m.week[0].spans[0].state, "deallocated"); /* since Fri 20 */
    assert_int_equal(f->m.week[0].spans[1].from_ns, at("2026-11-23T06:10:00Z"));
}

static void test_out_of_band_saves_nothing(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    hist(f, 11, "2026-11-10T12:00:00Z", "StandardSSD_LRS", "E10");
    hist(f, 11, "2026-11-12T12:00:00Z", "Premium_LRS", "P10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_int_equal(sku_seconds(d, "StandardSSD_LRS"), 48 * 3600);
    assert_int_equal(d->downgraded_seconds, 0);
    assert_int_equal(d->switches, 0);
    assert_true(same(d->cost, d->baseline));
    amount_is(d->realised, "0.000000000000");
    assert_false(same(d->cost, (struct tw_amount){0, 1}));
}

static void test_fraction_floored(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    power(f, 1, "2026-11-06T19:00:00Z", "deallocated");
    action(f, 1, 11, 1, "downgrade", "Premium_LRS", "StandardSSD_LRS",
           "2026-11-06T20:00:00.999Z", NULL);
    action(f, 2, 11, 1, "upgrade", "StandardSSD_LRS", "Premium_LRS", "2026-11-06T22:00:00.001Z",
           NULL);
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_int_equal(d->downgraded_seconds, 2 * 3600);
    assert_int_equal(sku_seconds(d, "StandardSSD_LRS"), 2 * 3600);
    /* 9.00 x 2 h / 730 h */
    amount_is(d->realised, "0.024657534247");
}

static void test_book_refreshed_mid_month(void **state)
{
    struct fx *f = *state;
    char items[8192];
    book_text(items, sizeof(items), "8.16");
    book_put(f, "2026-11-16T00:00:00Z", items);
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "StandardSSD_LRS", "E10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "StandardSSD_LRS", "E10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    /* 15 days at 7.16, 15 at 8.16: 360 h x 15.32 / 730 */
    amount_is(d->cost, "7.555068493151");
    assert_int_equal(f->m.n_books, 2);
    assert_string_equal(f->m.books[0].fetched_at, "2020-01-01T00:00:00Z");
    assert_int_equal(f->m.books[0].to_ns, at("2026-11-16T00:00:00Z"));
    assert_string_equal(f->m.books[1].fetched_at, "2026-11-16T00:00:00Z");
    assert_int_equal(f->m.books[1].from_ns, at("2026-11-16T00:00:00Z"));
    assert_int_equal(f->m.books[0].disks, 1);
    assert_int_equal(f->m.books[1].disks, 1);
    assert_true(has_note(f, "may change within the month"));
}

static void test_item_effective_mid_month(void **state)
{
    struct fx *f = *state;
    /* the book fetched before the month lists E10's next price from the 16th */
    char items[8192];
    book_text(items, sizeof(items), "7.16");
    items[strlen(items) - 1] = '\0';
    item(items, sizeof(items), "westeurope", "E10 LRS Disk", STD, "8.16", "2026-11-16");
    strcat(items, "]");
    book_put(f, "2026-10-01T00:00:00Z", items);
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "StandardSSD_LRS", "E10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "StandardSSD_LRS", "E10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    amount_is(row(f, 11)->cost, "7.555068493151");
    assert_int_equal(f->m.n_books, 1);
    assert_string_equal(f->m.books[0].fetched_at, "2026-10-01T00:00:00Z");
}

static void test_book_after(void **state)
{
    struct fx *f = *state;
    /* only a book fetched mid-month in northeurope: it prices the first half too */
    char items[8192];
    region_book(items, sizeof(items), "northeurope", "7.16");
    struct tw_error err = {0};
    assert_int_equal(tw_store_pricebook_put(f->st, "northeurope", "GBP", "test book",
                                            "2026-11-16T00:00:00Z", items, strlen(items), &err),
                     TW_OK);
    vm(f, 1, "vm-n", "rg-a", "northeurope", "{}");
    disk(f, 11, 1, "data0", "StandardSSD_LRS", "E10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "StandardSSD_LRS", "E10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    assert_true(row(f, 11)->priced);
    assert_int_equal(f->m.n_books, 1);
    assert_true(f->m.books[0].after);
    assert_int_equal(f->m.books[0].from_ns, at("2026-11-01T00:00:00Z"));
    assert_true(has_note(f, "fetched after"));
}

static void test_region_without_book(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    vm(f, 2, "vm-u", "rg-a", "uksouth", "{}");
    disk(f, 21, 2, "data0", "Premium_LRS", "P10", 128, 0);
    disk(f, 22, 2, "data1", "Premium_LRS", "P10", 128, 1);
    hist(f, 21, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    hist(f, 22, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 21);
    assert_false(d->priced);
    assert_string_equal(d->unpriced, "no_book");
    assert_non_null(strstr(d->unpriced_why, "uksouth"));
    assert_non_null(strstr(d->unpriced_why, "tierwise prices refresh"));
    assert_int_equal(sku_seconds(d, "Premium_LRS"), 720 * 3600);
    assert_int_equal(f->m.fleet.unpriced, 2);
    assert_int_equal(f->m.fleet.disks, 3);
    assert_int_equal(f->m.n_missing, 1);
    assert_string_equal(f->m.missing[0].region, "uksouth");
    assert_int_equal(f->m.missing[0].disks, 2);
    /* the priced disk alone makes the totals */
    assert_true(same(f->m.fleet.cost, row(f, 11)->cost));
    assert_true(has_note(f, "could not be priced"));
}

static void test_tier_the_book_lacks(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P30", 1024, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P30");
    disk(f, 12, 1, "data1", "Mystery_LRS", "", 128, 1);
    hist(f, 12, "2026-01-01T00:00:00Z", "Mystery_LRS", "");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_false(d->priced);
    assert_string_equal(d->unpriced, "no_price");
    assert_non_null(strstr(d->unpriced_why, "P30"));
    assert_string_equal(row(f, 12)->unpriced, "unknown_sku");
    assert_int_equal(f->m.fleet.unpriced, 2);
    assert_int_equal(f->m.n_missing, 0);
}

static void test_partial_month(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    struct tw_mr_opts o;
    opts(f, &o);
    o.now_ns = at("2026-11-10T12:00:00.5Z");
    build_ok(f, &o);
    assert_true(f->m.partial);
    assert_int_equal(f->m.to_ns, at("2026-11-10T12:00:00Z"));
    assert_int_equal(f->m.month_end_ns, at("2026-12-01T00:00:00Z"));
    assert_string_equal(f->m.generated_at, "2026-11-10T12:00:00Z");
    assert_int_equal(row(f, 11)->skus[0].seconds, (9 * 24 + 12) * 3600);
    assert_true(has_note(f, "not over"));
    /* the last whole week inside: Mon 2 to Mon 9 */
    assert_int_equal(f->m.week_from_ns, at("2026-11-02T00:00:00Z"));
}

static void test_future_month_refused(void **state)
{
    struct fx *f = *state;
    struct tw_mr_opts o;
    opts(f, &o);
    o.now_ns = at("2026-10-15T00:00:00Z");
    struct tw_error err = {0};
    assert_int_equal(tw_mr_build(f->st, &o, &f->m, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "has not started"));
    tw_mr_model_cleanup(&f->m);
    o.month = 13;
    assert_int_equal(tw_mr_build(f->st, &o, &f->m, &err), TW_EINVAL);
}

static void test_no_book_at_all(void **state)
{
    struct fx *f = *state;
    sql(f, "DELETE FROM price_books");
    struct tw_mr_opts o;
    opts(f, &o);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_build(f->st, &o, &f->m, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "no price book"));
}

static void test_totals_sum_rounded_rows(void **state)
{
    struct fx *f = *state;
    /* 1,500 s of P20 (26.28 a month) is 0.015 exactly: each row rounds up */
    for (int i = 0; i < 3; i++) {
        vm(f, i + 1, i == 0 ? "vm-a" : i == 1 ? "vm-b" : "vm-c", "rg-a", "westeurope", "{}");
        disk(f, 11 + i, i + 1, "data0", "Premium_LRS", "P20", 512, 0);
        hist(f, 11 + i, "2026-01-01T00:00:00Z", "Premium_LRS", "P20");
    }
    struct tw_mr_opts o;
    opts(f, &o);
    o.now_ns = at("2026-11-01T00:25:00Z");
    build_ok(f, &o);
    for (int i = 0; i < 3; i++) {
        amount_is(row(f, 11 + i)->cost, "0.015000000000");
        money_is(row(f, 11 + i)->cost_r, "0.02");
    }
    money_is(f->m.fleet.cost_r, "0.06");
    amount_is(f->m.fleet.cost, "0.045000000000");
    assert_int_equal(f->m.n_groups, 1);
    money_is(f->m.groups[0].t.cost_r, "0.06");
    assert_int_equal(f->m.groups[0].t.vms, 3);
    assert_true(has_note(f, "sum of its rows' rounded"));
}

static void policy_text(struct tw_policy *p, const char *text)
{
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void test_possible_two_policies(void **state)
{
    struct fx *f = *state;
    /* vm-a: no actions; vm-b: switched by the weekends policy; vm-x: excluded by both */
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    vm(f, 2, "vm-b", "rg-a", "westeurope", "{}");
    disk(f, 21, 2, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 21, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    action(f, 1, 21, 2, "downgrade", "Premium_LRS", "StandardSSD_LRS", "2026-11-06T20:00:00.000Z",
           "weekends");
    action(f, 2, 21, 2, "upgrade", "StandardSSD_LRS", "Premium_LRS", "2026-11-09T06:00:00.000Z",
           "weekends");
    vm(f, 3, "vm-x", "rg-x", "westeurope", "{}");
    disk(f, 31, 3, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 31, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    struct tw_policy p[2];
    memset(p, 0, sizeof(p));
    policy_text(&p[0], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"weekends\","
                       "\"match\":{\"skus\":[\"Premium_LRS\"],\"exclude\":{\"resource_groups\":"
                       "[\"rg-x\"]}},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":[\"Fri 20:00-Mon 06:00\"],"
                       "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    policy_text(&p[1], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"long\","
                       "\"match\":{\"skus\":[\"Premium_LRS\"],\"exclude\":{\"resource_groups\":"
                       "[\"rg-x\"]}},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":[\"Thu 20:00-Mon 06:00\"],"
                       "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    const struct tw_policy *pp[2] = {&p[0], &p[1]};
    struct tw_mr_opts o;
    opts(f, &o);
    o.policies = pp;
    o.n_policies = 2;
    build_ok(f, &o);
    const struct tw_mr_disk *a = row(f, 11), *b = row(f, 21), *x = row(f, 31);
    /* vm-a: the larger saving, the long weekends' */
    assert_true(a->possible_known);
    assert_string_equal(a->policy, "long");
    assert_null(a->excluded);
    assert_true(a->possible.num > 0);
    /* vm-b: its actions' policy, less what it realised */
    assert_true(b->possible_known);
    assert_string_equal(b->policy, "weekends");
    assert_true(b->realised.num > 0);
    /* weekends saves 262 h x 9 / 730; vm-b realised 58 h of it */
    amount_is(b->possible, "2.515068493151");
    /* vm-x: left alone by both */
    assert_false(x->possible_known);
    assert_non_null(x->excluded);
    assert_string_equal(x->excluded, "excluded_by_policy");
    assert_true(x->excluded_why[0]);
    amount_is(x->possible, "0.000000000000");
    assert_int_equal(f->m.n_policies, 2);
    /* by name, as the header says */
    assert_string_equal(f->m.policies[0], "long");
    assert_string_equal(f->m.policies[1], "weekends");
    /* vm-x's possible is not known: counted, not read as nothing more possible */
    assert_int_equal(f->m.fleet.possible_unknown, 1);
    /* the policies' run on a second thread with its own handle: the same figures */
    struct tw_amount pa = a->possible, pb = b->possible, fp = f->m.fleet.possible;
    o.db_path = f->path;
    build_ok(f, &o);
    assert_true(same(row(f, 11)->possible, pa));
    assert_true(same(row(f, 21)->possible, pb));
    assert_true(same(f->m.fleet.possible, fp));
    assert_string_equal(row(f, 11)->policy, "long");
    assert_string_equal(row(f, 31)->excluded, "excluded_by_policy");
    assert_int_equal(f->m.fleet.possible_unknown, 1);
    tw_policy_cleanup(&p[0]);
    tw_policy_cleanup(&p[1]);
}

static enum tw_err zone_ams(void *arg, const char *name, struct tw_tz **out, struct tw_error *err)
{
    (void)arg;
    if (strcmp(name, "UTC") == 0)
        return tw_tz_from_posix("UTC0", 4, out, err);
    if (strcmp(name, "Europe/Amsterdam") == 0) {
        const char *p = "CET-1CEST,M3.5.0,M10.5.0/3";
        return tw_tz_from_posix(p, strlen(p), out, err);
    }
    return tw_error_set(err, TW_ENOENT, "no zone %s here", name);
}

/* Every Amsterdam window Fri 20:00-Mon 06:00 (19:00Z-05:00Z in November)
 * taken: possible is modelled over the report's own (UTC) period, so
 * nothing more is possible (the month in Amsterdam would have started an
 * hour earlier and counted a window's hour the report does not). */
static void test_possible_policy_zone(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    static const char *const fri[] = {"2026-10-30", "2026-11-06", "2026-11-13", "2026-11-20",
                                      "2026-11-27"};
    static const char *const mon[] = {"2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23",
                                      "2026-11-30"};
    int id = 1;
    for (int w = 0; w < 5; w++) {
        char a[40], c[40];
        snprintf(a, sizeof(a), "%sT18:50:00Z", fri[w]);
        power(f, 1, a, "deallocated");
        snprintf(a, sizeof(a), "%sT19:00:00.000Z", fri[w]);
        snprintf(c, sizeof(c), "%sT19:00:04Z", fri[w]);
        action(f, id++, 11, 1, "downgrade", "Premium_LRS", "StandardSSD_LRS", a, "ams");
        hist(f, 11, c, "StandardSSD_LRS", "E10");
        snprintf(a, sizeof(a), "%sT05:00:00.000Z", mon[w]);
        snprintf(c, sizeof(c), "%sT05:00:03Z", mon[w]);
        action(f, id++, 11, 1, "upgrade", "StandardSSD_LRS", "Premium_LRS", a, "ams");
        hist(f, 11, c, "Premium_LRS", "P10");
        snprintf(a, sizeof(a), "%sT05:10:00Z", mon[w]);
        power(f, 1, a, "running");
    }
    struct tw_policy p;
    memset(&p, 0, sizeof(p));
    policy_text(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"ams\","
                    "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
                    "\"timezone\":\"Europe/Amsterdam\",\"windows\":[\"Fri 20:00-Mon 06:00\"],"
                    "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    const struct tw_policy *pp[1] = {&p};
    struct tw_mr_opts o;
    opts(f, &o);
    o.zone = zone_ams;
    o.policies = pp;
    o.n_policies = 1;
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_true(d->possible_known);
    assert_string_equal(d->policy, "ams");
    /* 29 h of the weekend begun on 30 Oct, then 4 x 58 h */
    assert_int_equal(d->downgraded_seconds, 261 * 3600);
    assert_true(d->realised.num > 0);
    amount_is(d->possible, "0.000000000000");
    assert_int_equal(f->m.fleet.possible_unknown, 0);
    tw_policy_cleanup(&p);
}

/* hours_by_sku's costs are the row's rounded cost split by largest
 * remainder: 0.015 + 0.015 = 0.03, each part rounded alone 0.02 + 0.02. */
static void test_sku_costs_add_up(void **state)
{
    struct fx *f = *state;
    sql(f, "DELETE FROM price_books");
    char items[8192];
    snprintf(items, sizeof(items), "[");
    item(items, sizeof(items), "westeurope", "P10 LRS Disk", PREM, "26.28", EARLY);
    item(items, sizeof(items), "westeurope", "E10 LRS Disk", STD, "26.28", EARLY);
    strcat(items, "]");
    book_put(f, "2020-01-01T00:00:00Z", items);
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    hist(f, 11, "2026-11-01T00:25:00Z", "StandardSSD_LRS", "E10");
    struct tw_mr_opts o;
    opts(f, &o);
    o.now_ns = at("2026-11-01T00:50:00Z");
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    money_is(d->cost_r, "0.03");
    assert_int_equal(d->n_skus, 2);
    struct tw_money sum = {0};
    for (size_t i = 0; i < d->n_skus; i++) {
        amount_is(d->skus[i].cost, "0.015000000000");
        assert_int_equal(tw_money_add(sum, d->skus[i].cost_r, &sum, NULL), TW_OK);
    }
    assert_int_equal(sum.micros, d->cost_r.micros);
    /* ties go to the earlier part */
    money_is(d->skus[0].cost_r, "0.02");
    money_is(d->skus[1].cost_r, "0.01");
}

/* Premium -> StandardSSD -> Standard_LRS by two downgrades: the baseline
 * stays Premium until the upgrade. */
static void test_downgrade_chain(void **state)
{
    struct fx *f = *state;
    sql(f, "DELETE FROM price_books");
    char items[8192];
    book_text(items, sizeof(items), "7.16");
    items[strlen(items) - 1] = '\0';
    item(items, sizeof(items), "westeurope", "S10 LRS Disk", "Standard HDD Managed Disks", "3.00",
         EARLY);
    strcat(items, "]");
    book_put(f, "2020-01-01T00:00:00Z", items);
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    power(f, 1, "2026-10-01T00:00:00Z", "deallocated");
    action(f, 1, 11, 1, "downgrade", "Premium_LRS", "StandardSSD_LRS", "2026-11-10T00:00:00.000Z",
           NULL);
    action(f, 2, 11, 1, "downgrade", "StandardSSD_LRS", "Standard_LRS", "2026-11-11T00:00:00.000Z",
           NULL);
    action(f, 3, 11, 1, "upgrade", "Standard_LRS", "Premium_LRS", "2026-11-12T00:00:00.000Z",
           NULL);
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_true(d->priced);
    assert_int_equal(d->downgraded_seconds, 48 * 3600);
    assert_int_equal(sku_seconds(d, "Standard_LRS"), 24 * 3600);
    /* baseline P10 all month: 16.16 x 720 / 730 */
    amount_is(d->baseline, "15.938630136986");
    /* realised (16.16 - 7.16) x 24 / 730 + (16.16 - 3.00) x 24 / 730 */
    amount_is(d->realised, "0.728547945205");
    assert_string_equal(d->original_sku, "Premium_LRS");
}

/* An upgrade the executor sent to the disk's recorded original: the
 * stored action keeps the plan's to_sku, the SKU history has what ARM read
 * back in the same second, and the history wins. */
static void test_history_wins_same_second(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_ZRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_ZRS", "P10");
    power(f, 1, "2026-10-01T00:00:00Z", "deallocated");
    action(f, 1, 11, 1, "downgrade", "Premium_ZRS", "StandardSSD_LRS", "2026-11-06T20:00:00.000Z",
           NULL);
    hist(f, 11, "2026-11-06T20:00:04Z", "StandardSSD_LRS", "E10");
    action(f, 2, 11, 1, "upgrade", "StandardSSD_LRS", "Premium_LRS", "2026-11-09T06:00:00.200Z",
           NULL);
    hist(f, 11, "2026-11-09T06:00:00.900Z", "Premium_ZRS", "P10");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_int_equal(sku_seconds(d, "Premium_LRS"), 0);
    assert_int_equal(sku_seconds(d, "StandardSSD_LRS"), 58 * 3600);
    assert_int_equal(sku_seconds(d, "Premium_ZRS"), (720 - 58) * 3600);
    assert_string_equal(d->sku, "Premium_ZRS");
    assert_string_equal(d->original_sku, "Premium_ZRS");
    assert_int_equal(d->downgraded_seconds, 58 * 3600);
    assert_int_equal(d->switches, 2);
}

struct opp_one {
    int64_t disk_id;
    struct tw_amount saving;
    int64_t downgraded_ns;
    bool seen;
};

static enum tw_err opp_one_disk(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *d)
{
    (void)vm;
    struct opp_one *o = arg;
    if (d->id == o->disk_id && d->reason == TW_OPP_COVERED) {
        o->seen = true;
        o->saving = d->saving.saving;
        o->downgraded_ns = d->saving.downgraded_ns;
    }
    return TW_OK;
}

/* A month of done actions at the exact window edges (margins 0, UTC): the
 * realised saving is tw_opp_run's saving for that policy and month, to
 * the exact amount, as it is the what-if's (test_weekends_match_savings). */
static void test_realised_matches_opportunities(void **state)
{
    struct fx *f = *state;
    weekends(f, 1, 11, "vm-a", 100);
    struct tw_policy p;
    memset(&p, 0, sizeof(p));
    policy_text(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"weekends\","
                    "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
                    "\"windows\":[\"Fri 20:00-Mon 06:00\"],"
                    "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    struct tw_opp_opts oo;
    memset(&oo, 0, sizeof(oo));
    oo.policy = &p;
    oo.year = 2026;
    oo.month = 11;
    oo.cat = &f->cat;
    oo.caps = &f->caps;
    oo.zone = zone;
    struct opp_one one = {.disk_id = 11};
    struct tw_opp_sink sink = {.disk = opp_one_disk, .arg = &one};
    struct tw_opp_result res;
    memset(&res, 0, sizeof(res));
    struct tw_error err = {0};
    if (tw_opp_run(f->st, &oo, &sink, &res, &err) != TW_OK)
        fail_msg("tw_opp_run: %s", err.msg);
    assert_true(one.seen);
    assert_int_equal(one.downgraded_ns, d->downgraded_seconds * TW_NS_PER_S);
    amount_is(one.saving, "3.230136986301");
    assert_true(same(one.saving, d->realised));
    assert_true(same(res.fleet.saving, f->m.fleet.realised));
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

static void test_drift_clipped(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "StandardSSD_LRS", "E10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "StandardSSD_LRS", "E10");
    sql(f, "INSERT INTO drift(disk_id, vm_id, sku, required_sku, policy, since, since_ms, "
           "seen_at, ended_at, ended_ms) VALUES (11, 1, 'StandardSSD_LRS', 'Premium_LRS', 'p', "
           "'2026-10-25T00:00:00Z', 0, '2026-10-25T00:00:00Z', '2026-11-03T12:00:00Z', 0);"
           "INSERT INTO drift(disk_id, vm_id, sku, required_sku, policy, since, since_ms, "
           "seen_at) VALUES (11, 1, 'StandardSSD_LRS', 'Premium_LRS', 'p', "
           "'2026-11-29T00:00:00Z', 0, '2026-11-29T00:00:00Z')");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    assert_int_equal(row(f, 11)->drift_seconds, (2 * 24 + 12) * 3600 + 2 * 24 * 3600);
    assert_int_equal(f->m.fleet.drift_seconds, (2 * 24 + 12) * 3600 + 2 * 24 * 3600);
}

static void test_running_metered(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    hist(f, 11, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    power(f, 1, "2026-10-01T00:00:00Z", "running");
    /* on E10 from 10:00 to 14:00, deallocated only from 13:00 */
    power(f, 1, "2026-11-10T13:00:00Z", "deallocated");
    power(f, 1, "2026-11-10T15:00:00Z", "running");
    action(f, 1, 11, 1, "downgrade", "Premium_LRS", "StandardSSD_LRS", "2026-11-10T10:00:00.000Z",
           NULL);
    action(f, 2, 11, 1, "upgrade", "StandardSSD_LRS", "Premium_LRS", "2026-11-10T14:00:00.000Z",
           NULL);
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    const struct tw_mr_disk *d = row(f, 11);
    assert_int_equal(d->downgraded_seconds, 4 * 3600);
    assert_int_equal(d->running_metered_seconds, 3 * 3600);
    amount_is(d->transactions, "0.000000000000");
    assert_true(has_note(f, "not known and not counted"));
}

static void test_group_by_tag(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-b", "rg-a", "westeurope", "{\"env\":\"dev\"}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    disk(f, 12, 1, "data1", "Premium_LRS", "P10", 128, 1);
    vm(f, 2, "vm-a", "rg-b", "westeurope", "{\"env\":\"dev\"}");
    disk(f, 21, 2, "data0", "Premium_LRS", "P10", 128, 0);
    vm(f, 3, "vm-c", "rg-a", "westeurope", "{\"owner\":\"x\"}");
    disk(f, 31, 3, "data0", "Premium_LRS", "P10", 128, 0);
    struct tw_mr_opts o;
    opts(f, &o);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_group_by_parse("tag:env", 7, &o, &err), TW_OK);
    build_ok(f, &o);
    assert_int_equal(f->m.group_by, TW_MR_BY_TAG);
    assert_string_equal(f->m.group_tag, "env");
    assert_int_equal(f->m.n_groups, 2);
    assert_string_equal(f->m.groups[0].key, "(no tag)");
    assert_int_equal(f->m.groups[0].n, 1);
    assert_string_equal(f->m.groups[1].key, "dev");
    assert_int_equal(f->m.groups[1].n, 3);
    assert_int_equal(f->m.groups[1].t.vms, 2);
    /* rows by group, VM name, position */
    assert_int_equal(f->m.disks[0].disk_id, 31);
    assert_int_equal(f->m.disks[1].disk_id, 21);
    assert_int_equal(f->m.disks[2].disk_id, 11);
    assert_int_equal(f->m.disks[3].disk_id, 12);
    assert_int_equal(f->m.fleet.vms, 3);
    /* the longest tag name a VM may have */
    static char longtag[4 + 512 + 1] = "tag:";
    memset(longtag + 4, 'k', 512);
    assert_int_equal(tw_mr_group_by_parse(longtag, 516, &o, &err), TW_OK);
    build_ok(f, &o);
    assert_int_equal(strlen(f->m.group_tag), 512);
    assert_string_equal(f->m.groups[0].key, "(no tag)");
    /* a disk first seen after the month is not in it */
    disk(f, 13, 1, "data2", "Premium_LRS", "P10", 128, 2);
    hist(f, 13, "2026-12-01T00:00:00Z", "Premium_LRS", "P10");
    build_ok(f, &o);
    assert_int_equal(f->m.fleet.disks, 4);
    for (size_t i = 0; i < f->m.n_disks; i++)
        assert_true(f->m.disks[i].disk_id != 13);
    /* resource groups */
    assert_int_equal(tw_mr_group_by_parse("resource-group", 14, &o, &err), TW_OK);
    build_ok(f, &o);
    assert_int_equal(f->m.n_groups, 2);
    assert_string_equal(f->m.groups[0].key, "sub-a/rg-a");
    assert_string_equal(f->m.disks[0].group, "sub-a/rg-a");
}

static void test_disk_filter(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    disk(f, 12, 1, "data1", "Premium_LRS", "P20", 512, 1);
    vm(f, 2, "vm-b", "rg-a", "westeurope", "{}");
    disk(f, 21, 2, "data0", "Premium_LRS", "P10", 128, 0);
    struct tw_mr_opts o;
    opts(f, &o);
    o.disk_id = 12;
    build_ok(f, &o);
    assert_int_equal(f->m.n_disks, 1);
    assert_int_equal(f->m.disks[0].disk_id, 12);
    assert_int_equal(f->m.fleet.disks, 1);
    assert_int_equal(f->m.fleet.vms, 1);
    assert_true(same(f->m.fleet.cost, f->m.disks[0].cost));
    /* 26.28 x 720 / 730 */
    amount_is(f->m.fleet.cost, "25.920000000000");
    o.disk_id = 99;
    tw_mr_model_cleanup(&f->m);
    struct tw_error err = {0};
    assert_int_equal(tw_mr_build(f->st, &o, &f->m, &err), TW_ENOENT);
}

static void test_detached_disks(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "vm-a", "rg-a", "westeurope", "{}");
    disk(f, 11, 1, "data0", "Premium_LRS", "P10", 128, 0);
    disk(f, 12, 1, "data1", "Premium_LRS", "P10", 128, 1);
    disk(f, 13, 1, "data2", "Premium_LRS", "P10", 128, 2);
    for (int i = 11; i <= 13; i++)
        hist(f, i, "2026-01-01T00:00:00Z", "Premium_LRS", "P10");
    /* data1 detached on the 16th at 00:00:00.700, data2 in October */
    sql(f, "UPDATE disks SET detached_at = '2026-11-16T00:00:00.700Z', detached_ms = "
           "1794787200700 WHERE id = 12;"
           "UPDATE disks SET detached_at = '2026-10-20T00:00:00Z', detached_ms = 1792454400000 "
           "WHERE id = 13");
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    assert_int_equal(f->m.n_disks, 2);
    assert_int_equal(sku_seconds(row(f, 11), "Premium_LRS"), 720 * 3600);
    assert_int_equal(sku_seconds(row(f, 12), "Premium_LRS"), 15 * 24 * 3600);
    /* 16.16 x 360 / 730 */
    amount_is(row(f, 12)->cost, "7.969315068493");
    for (size_t i = 0; i < f->m.n_disks; i++)
        assert_true(f->m.disks[i].disk_id != 13);
    assert_true(has_note(f, "detached from its VM during the month counts until then"));
    o.disk_id = 12;
    build_ok(f, &o);
    assert_int_equal(f->m.n_disks, 1);
    /* stored, not in the fleet that month: no rows and a note, not "no such disk" */
    o.disk_id = 13;
    build_ok(f, &o);
    assert_int_equal(f->m.n_disks, 0);
    assert_int_equal(f->m.fleet.disks, 0);
    assert_true(has_note(f, "disk 13 was not in the fleet in 2026-11"));
}

static void test_group_by_parse(void **state)
{
    (void)state;
    struct tw_mr_opts o;
    memset(&o, 0, sizeof(o));
    struct tw_error err = {0};
    assert_int_equal(tw_mr_group_by_parse("subscription", 12, &o, &err), TW_OK);
    assert_int_equal(o.group_by, TW_MR_BY_SUBSCRIPTION);
    assert_int_equal(tw_mr_group_by_parse("tag:cost center", 15, &o, &err), TW_OK);
    assert_int_equal(o.group_by, TW_MR_BY_TAG);
    assert_memory_equal(o.group_tag, "cost center", 11);
    static const char *const bad[] = {"", "tag:", "vm", "Resource-Group", "subscriptions",
                                      "tag:a\tb"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = (struct tw_error){0};
        assert_int_equal(tw_mr_group_by_parse(bad[i], strlen(bad[i]), &o, &err), TW_EPARSE);
        assert_non_null(strstr(err.msg, "--group-by: expected resource-group, subscription or "
                                        "tag:NAME, got"));
    }
    char longtag[600] = "tag:";
    memset(longtag + 4, 'x', 513);
    assert_int_equal(tw_mr_group_by_parse(longtag, 517, &o, &err), TW_EPARSE);
    assert_int_equal(tw_mr_group_by_parse("tag:a\0b", 7, &o, &err), TW_EPARSE);
    assert_int_equal(tw_mr_group_by_parse(NULL, 0, &o, &err), TW_EPARSE);
}

/* The verdicts of a real store (tests/fixtures/store/v4.db): each row's
 * is its disk's latest, as the compliance service judges it. */
struct latest {
    size_t n;
    struct {
        int64_t vm_id;
        char disk[128], kind[16], started[40];
        double iops;
    } v[256];
};

static enum tw_err latest_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                  const struct tw_result *r, const struct tw_verdict *v)
{
    (void)inv;
    struct latest *l = arg;
    for (size_t k = 0; k < v->n_disks; k++) {
        size_t i;
        for (i = 0; i < l->n; i++)
            if (l->v[i].vm_id == vm_id && strcasecmp(l->v[i].disk, v->disks[k].name) == 0)
                break;
        if (i == l->n) {
            assert_true(l->n < 256);
            l->n++;
            l->v[i].vm_id = vm_id;
            snprintf(l->v[i].disk, sizeof(l->v[i].disk), "%s", v->disks[k].name);
        } else if (at(l->v[i].started) > at(r->started_at)) {
            continue;
        }
        snprintf(l->v[i].kind, sizeof(l->v[i].kind), "%s", tw_verdict_name(v->kind));
        snprintf(l->v[i].started, sizeof(l->v[i].started), "%s", r->started_at);
        l->v[i].iops = v->measured_iops;
    }
    return TW_OK;
}

static enum tw_err no_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)arg;
    (void)e;
    return TW_OK;
}

static void test_verdicts(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    th_store_fixture(f->dir, "store/v4.db", "v4.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &f->st, &err), TW_OK);
    char items[8192];
    book_text(items, sizeof(items), "7.16");
    book_put(f, "2020-01-01T00:00:00Z", items);
    static struct latest l;
    memset(&l, 0, sizeof(l));
    struct tw_svc_compliance_ctx cc = {.cat = &f->cat, .caps = &f->caps};
    struct tw_svc_compliance_sink sk = {latest_verdict, no_error, &l};
    assert_int_equal(tw_svc_compliance_fleet(f->st, &cc, &sk, NULL, &err), TW_OK);
    assert_true(l.n > 0);
    struct tw_mr_opts o;
    opts(f, &o);
    build_ok(f, &o);
    size_t matched = 0;
    int64_t under = 0;
    for (size_t i = 0; i < f->m.n_disks; i++) {
        const struct tw_mr_disk *d = &f->m.disks[i];
        size_t k;
        for (k = 0; k < l.n; k++)
            if (l.v[k].vm_id == d->vm_id && strcasecmp(l.v[k].disk, d->disk) == 0)
                break;
        if (k == l.n) {
            assert_string_equal(d->verdict, "");
            assert_true(isnan(d->measured_iops));
            continue;
        }
        matched++;
        assert_string_equal(d->verdict, l.v[k].kind);
        assert_string_equal(d->judged_at, l.v[k].started);
        assert_true(d->measured_iops == l.v[k].iops);
        assert_true(d->verdict_reason[0]);
        if (strcmp(d->verdict, "under") == 0)
            under++;
    }
    assert_true(matched > 0);
    assert_int_equal(f->m.fleet.under, under);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_weekends_match_savings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_band_saves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fraction_floored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_refreshed_mid_month, setup, teardown),
        cmocka_unit_test_setup_teardown(test_item_effective_mid_month, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_region_without_book, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tier_the_book_lacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_month, setup, teardown),
        cmocka_unit_test_setup_teardown(test_future_month_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_book_at_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_totals_sum_rounded_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_possible_two_policies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_possible_policy_zone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sku_costs_add_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_downgrade_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_history_wins_same_second, setup, teardown),
        cmocka_unit_test_setup_teardown(test_realised_matches_opportunities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drift_clipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_metered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_by_tag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detached_disks, setup, teardown),
        cmocka_unit_test(test_group_by_parse),
        cmocka_unit_test_setup_teardown(test_verdicts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
