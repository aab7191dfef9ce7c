/* test_opportunities.c - the fleet's savings opportunities over a store
 * built here row by row: every exclusion with its reason, the totals per
 * VM, resource group, subscription and fleet, a region without a book, the
 * quota with a SKU change already made, windows from a tag and learned from
 * the power history, the currency's choice, the month's grammar, and the
 * JSON document. */
#include "testhelp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "core/time.h"
#include "service/opportunities.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
};

/* A Retail Prices item of westeurope GBP (the figures are the test's). */
static void item(char *buf, size_t cap, const char *meter, const char *product, const char *price,
                 const char *unit)
{
    size_t l = strlen(buf);
    char sku[64];
    snprintf(sku, sizeof(sku), "%.*s", (int)(strstr(meter, " Disk") - meter), meter);
    snprintf(buf + l, cap - l,
             "%s{\"currencyCode\":\"GBP\",\"tierMinimumUnits\":0,\"retailPrice\":%s,"
             "\"unitPrice\":%s,\"armRegionName\":\"westeurope\",\"location\":\"EU West\","
             "\"effectiveStartDate\":\"2020-01-01T00:00:00Z\",\"meterName\":\"%s\","
             "\"productName\":\"%s\",\"skuName\":\"%s\",\"serviceName\":\"Storage\","
             "\"unitOfMeasure\":\"%s\",\"type\":\"Consumption\"}",
             l > 1 ? "," : "", price, price, meter, product, sku, unit);
}

static void book_at(struct fx *f, const char *currency, const char *fetched_at,
                    const char *p10)
{
    char items[8192] = "[";
    item(items, sizeof(items), "P10 LRS Disk", "Premium SSD Managed Disks", p10, "1/Month");
    item(items, sizeof(items), "P30 LRS Disk", "Premium SSD Managed Disks", "100", "1/Month");
    item(items, sizeof(items), "E10 LRS Disk", "Standard SSD Managed Disks", "7.16", "1/Month");
    item(items, sizeof(items), "E30 LRS Disk", "Standard SSD Managed Disks", "40", "1/Month");
    item(items, sizeof(items), "E10 LRS Disk Operations", "Standard SSD Managed Disks", "0.001",
         "10K");
    item(items, sizeof(items), "S10 LRS Disk", "Standard HDD Managed Disks", "3", "1/Month");
    strcat(items, "]");
    if (strcmp(currency, "GBP") != 0) {
        char *p;
        while ((p = strstr(items, "\"GBP\"")))
            memcpy(p + 1, currency, 3);
    }
    struct tw_error err = {0};
    if (tw_store_pricebook_put(f->st, "westeurope", currency, "test", fetched_at, items,
                               strlen(items), &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void book(struct fx *f, const char *currency)
{
    book_at(f, currency, "2026-11-01T00:00:00Z", "16.16");
}

static void sql(struct fx *f, const char *text)
{
    th_sql_exec(f->path, text);
}

/* VM ID called NAME in RG, SUB, REGION, SIZE with TAGS (JSON). */
static void vm(struct fx *f, int id, const char *name, const char *rg, const char *sub,
               const char *region, const char *size, const char *tags)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
             "vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (%d, "
             "'vm:%s', '%s', '%s', '%s', '%s', '%s', '%s', 'r%d', '2026-11-20T00:00:00Z', "
             "1795132800000)",
             id, name, name, sub, rg, region, size, tags, id);
    sql(f, q);
}

/* Disk ID of VM; SHARES and BURST "NULL" or a number. */
static void disk(struct fx *f, int id, int vm_id, const char *role, const char *sku,
                 const char *tier, int size, const char *shares, const char *burst)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, "
             "caching, last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES (%d, "
             "'d%d', %d, 'disk-%d', '%s', %s, '%s', %d, %s%s%s, 'None', "
             "'2026-11-20T00:00:00Z', 1795132800000, %d, %s, %s)",
             id, id, vm_id, id, role, strcmp(role, "os") ? "0" : "NULL", sku, size,
             tier ? "'" : "", tier ? tier : "NULL", tier ? "'" : "", id, shares, burst);
    sql(f, q);
}

static void power(struct fx *f, int vm_id, const char *at, const char *state)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms(at, &ms));
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) VALUES "
             "(%d, '%s', %lld, '%s', 'arm'); UPDATE vms SET power_state = '%s', "
             "power_state_at = '%s', power_state_ms = %lld WHERE id = %d AND "
             "(power_state_ms IS NULL OR power_state_ms <= %lld)",
             vm_id, at, (long long)ms, state, state, at, (long long)ms, vm_id, (long long)ms);
    sql(f, q);
}

static void history(struct fx *f, int disk_id, const char *at, const char *sku, const char *tier)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms(at, &ms));
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, tier, "
             "size_gib, source) VALUES (%d, '%s', %lld, '%s', '%s', 128, 'arm')",
             disk_id, at, (long long)ms, sku, tier);
    sql(f, q);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tw.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &f->st, &err), TW_OK);
    assert_int_equal(tw_tier_catalog_builtin(&f->cat, &err), TW_OK);
    const char *caps = "{\"schema_version\":\"tierwise.vm-disk-caps/1\",\"vms\":["
                       "{\"vm_size\":\"Standard_A2_v2\",\"uncached_disk_iops\":2000,"
                       "\"uncached_disk_mbps\":40,\"premium_storage\":false},"
                       "{\"vm_size\":\"Standard_D2s_v3\",\"uncached_disk_iops\":3200,"
                       "\"uncached_disk_mbps\":48,\"premium_storage\":true}]}";
    if (tw_vmcap_table_parse(caps, strlen(caps), &f->caps, &err) != TW_OK)
        fail_msg("%s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_tier_catalog_cleanup(&f->cat);
    tw_vmcap_table_cleanup(&f->caps);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static enum tw_err zone(void *arg, const char *name, struct tw_tz **out, struct tw_error *err)
{
    int *calls = arg;
    if (calls)
        (*calls)++;
    const char *posix = strcmp(name, "UTC") == 0             ? "UTC0"
                        : strcmp(name, "Europe/London") == 0 ? "GMT0BST,M3.5.0/1,M10.5.0"
                                                             : NULL;
    if (!posix)
        return tw_error_set(err, TW_ENOENT, "no zone %s here", name);
    return tw_tz_from_posix(posix, strlen(posix), out, err);
}

static void policy(struct tw_policy *p, const char *text)
{
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

/* What a run handed over. */
#define SEEN_MAX 32
struct seen {
    size_t n;
    struct {
        int64_t vm_id, disk_id;
        enum tw_opp_reason reason;
        char why[512];
        char target[32];
        int64_t hours_ns;
        char saving[64];
        size_t taken, skipped, caveats;
        char windows[TW_OPP_WINDOWS_TEXT_MAX], source[600];
    } d[SEEN_MAX];
    size_t n_vms;
    struct {
        int64_t id;
        struct tw_opp_total t;
    } vm[SEEN_MAX];
};

static enum tw_err on_disk(void *arg, const struct tw_opp_vm *v, const struct tw_opp_disk *d)
{
    struct seen *s = arg;
    assert_true(s->n < SEEN_MAX);
    s->d[s->n].vm_id = v->id;
    s->d[s->n].disk_id = d->id;
    s->d[s->n].reason = d->reason;
    snprintf(s->d[s->n].why, sizeof(s->d[0].why), "%s", d->why);
    if (d->reason == TW_OPP_COVERED) {
        snprintf(s->d[s->n].target, sizeof(s->d[0].target), "%s", d->target.sku);
        s->d[s->n].hours_ns = d->saving.downgraded_ns;
        assert_true(tw_amount_decimal(d->saving.saving, 12, s->d[s->n].saving,
                                      sizeof(s->d[0].saving)));
        s->d[s->n].taken = d->saving.n_taken;
        s->d[s->n].skipped = d->saving.n_skipped;
        s->d[s->n].caveats = d->n_caveats;
        snprintf(s->d[s->n].windows, sizeof(s->d[0].windows), "%s", d->windows);
        snprintf(s->d[s->n].source, sizeof(s->d[0].source), "%s", d->windows_source);
    }
    s->n++;
    return TW_OK;
}

static enum tw_err on_vm(void *arg, const struct tw_opp_vm *v, const struct tw_opp_total *t)
{
    struct seen *s = arg;
    assert_true(s->n_vms < SEEN_MAX);
    s->vm[s->n_vms].id = v->id;
    s->vm[s->n_vms++].t = *t;
    return TW_OK;
}

static const void *find(const struct seen *s, int64_t disk_id, size_t *i)
{
    for (*i = 0; *i < s->n; (*i)++)
        if (s->d[*i].disk_id == disk_id)
            return s;
    fail_msg("disk %lld was not handed over", (long long)disk_id);
    return NULL;
}

static enum tw_opp_reason reason_of(const struct seen *s, int64_t disk_id)
{
    size_t i;
    find(s, disk_id, &i);
    return s->d[i].reason;
}

static const char *why_of(const struct seen *s, int64_t disk_id)
{
    size_t i;
    find(s, disk_id, &i);
    return s->d[i].why;
}

static enum tw_err run(struct fx *f, const struct tw_policy *p, const struct tw_reservations *r,
                       struct seen *s, struct tw_opp_result *res, struct tw_error *err)
{
    struct tw_opp_opts o = {.policy = p, .year = 2026, .month = 12, .reservations = r,
                            .cat = &f->cat, .caps = &f->caps, .zone = zone};
    struct tw_opp_sink sink = {on_disk, on_vm, s};
    memset(s, 0, sizeof(*s));
    return tw_opp_run(f->st, &o, &sink, res, err);
}

static void amount_is(struct tw_amount a, const char *want)
{
    char got[64];
    assert_true(tw_amount_decimal(a, 12, got, sizeof(got)));
    assert_string_equal(got, want);
}

static const char *const list_policy =
    "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"weekends\","
    "\"match\":{\"exclude\":{\"tags\":{\"tierwise\":\"off\"}}},"
    "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Sat 00:00-Mon 00:00\"],"
    "\"timezone\":\"UTC\",\"margins\":{\"after_deallocate_minutes\":0,"
    "\"before_start_minutes\":0}}";

/* The fleet of the exclusions. */
static void fleet(struct fx *f)
{
    vm(f, 1, "dev-1", "rg-dev", "sub-a", "westeurope", "Standard_D2s_v3", "{\"env\":\"dev\"}");
    disk(f, 11, 1, "os", "Premium_LRS", "P10", 128, "NULL", "NULL");
    disk(f, 12, 1, "data", "Premium_LRS", "P10", 128, "NULL", "NULL");
    disk(f, 13, 1, "data", "StandardSSD_LRS", "E10", 128, "NULL", "NULL");
    disk(f, 14, 1, "data", "PremiumV2_LRS", NULL, 512, "NULL", "NULL");
    disk(f, 15, 1, "data", "Premium_LRS", "P10", 128, "2", "NULL");
    disk(f, 16, 1, "data", "Premium_LRS", "P40", 2048, "1", "1");
    disk(f, 17, 1, "data", "Premium_LRS", NULL, 40000, "1", "0");
    vm(f, 2, "dev-2", "rg-dev", "sub-a", "westeurope", "Standard_D2s_v3",
       "{\"env\":\"dev\",\"tierwise\":\"off\"}");
    disk(f, 21, 2, "data", "Premium_LRS", "P10", 128, "NULL", "NULL");
    vm(f, 3, "dev-3", "rg-other", "sub-a", "northeurope", "Standard_D2s_v3", "{}");
    disk(f, 31, 3, "data", "Premium_LRS", "P10", 128, "NULL", "NULL");
    vm(f, 4, "dev-4", "rg-dev", "sub-b", "westeurope", "Standard_A2_v2", "{}");
    disk(f, 41, 4, "data", "Premium_LRS", "P10", 128, "NULL", "NULL");
    vm(f, 5, "dev-5", "rg-dev", "sub-b", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 51, 5, "data", "Premium_LRS", "P10", 128, "NULL", "NULL");
    power(f, 5, "2026-11-20T10:00:00Z", "running");
    power(f, 5, "2026-11-28T10:00:00Z", "hibernated");
    power(f, 5, "2026-11-29T10:00:00Z", "running");
    vm(f, 6, "dev-6", "rg-dev", "sub-b", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 61, 6, "data", "Premium_LRS", "P30", 1024, "1", "0");
    disk(f, 62, 6, "data", "Premium_LRS", "P30", 1024, "1", "0");
    vm(f, 7, "dev-7", "rg-dev", "sub-b", "", "Standard_D2s_v3", "{}");
    disk(f, 71, 7, "data", "Premium_LRS", "P10", 128, "1", "0");
    book(f, "GBP");
}

/* Stored power states as observations: the state in force before the
 * start placed at it, the rest at their instants (a millisecond is a
 * million nanoseconds), one past int64_t nanoseconds skipped. */
static void test_power_obs(void **state)
{
    (void)state;
    const int64_t from_ns = 1795132800000LL * 1000000 + 500000; /* half a ms in */
    struct tw_store_sv_power sp[] = {
        {.at_ms = -9999999999999LL, .state = "PowerState/deallocated"}, /* 1653 */
        {.at_ms = 1795132800000LL, .state = "running"},  /* the start's ms, before it */
        {.at_ms = 1795132860000LL, .state = "deallocated"},
        {.at_ms = INT64_MAX / 1000, .state = "running"},  /* past int64_t ns */
    };
    struct tw_power_obs ob[4];
    assert_int_equal(tw_opp_power_obs(sp, 4, from_ns, ob), 3);
    assert_int_equal(ob[0].at_ns, from_ns);
    assert_int_equal(ob[0].state, TW_POWER_DEALLOCATED);
    assert_int_equal(ob[1].at_ns, from_ns);
    assert_int_equal(ob[1].state, TW_POWER_RUNNING);
    assert_int_equal(ob[2].at_ns, 1795132860000LL * 1000000);
    assert_int_equal(ob[2].state, TW_POWER_DEALLOCATED);
    assert_int_equal(tw_opp_power_obs(sp, 0, from_ns, ob), 0);
}

/* The missing regions as said: only the missing books, one disk as one,
 * the count even when the text is cut. */
static void test_missing_regions(void **state)
{
    (void)state;
    struct tw_opp_book books[3] = {
        {.region = "westeurope", .missing = true, .disks = 2},
        {.region = "uksouth", .missing = false, .disks = 5},
        {.region = "eastus", .missing = true, .disks = 1},
    };
    struct tw_opp_result res = {.n_books = 3, .books = books};
    char buf[64];
    assert_int_equal(tw_opp_missing_regions(&res, buf, sizeof(buf)), 2);
    assert_string_equal(buf, "westeurope (2 disks), eastus (1 disk)");
    char small[16];
    assert_int_equal(tw_opp_missing_regions(&res, small, sizeof(small)), 2);
    assert_string_equal(small, "westeurope (2 d");
    books[0].missing = false;
    assert_int_equal(tw_opp_missing_regions(&res, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "eastus (1 disk)");
    books[2].missing = false;
    assert_int_equal(tw_opp_missing_regions(&res, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
}

static void test_exclusions_and_totals(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_policy p;
    policy(&p, list_policy);
    struct tw_reservations rs = {0};
    struct tw_error err = {0};
    const char *rtext = "{\"schema_version\":\"tierwise.reservations/1\",\"reservations\":["
                        "{\"region\":\"westeurope\",\"tier\":\"P30\",\"count\":1}]}";
    assert_int_equal(tw_reservations_parse(rtext, strlen(rtext), &rs, &err), TW_OK);
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, &rs, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(res.currency, "GBP");
    assert_string_equal(res.month, "2026-12");
    assert_int_equal(res.from_ns, INT64_C(1796083200) * TW_NS_PER_S); /* 2026-12-01T00:00Z */
    assert_int_equal(res.to_ns, INT64_C(1798761600) * TW_NS_PER_S);   /* 2027-01-01T00:00Z */

    /* Every disk the policy matches is handed over, in VM id order. */
    assert_int_equal(s.n, 14);
    assert_int_equal(reason_of(&s, 71), TW_OPP_NO_PRICE);
    assert_non_null(strstr(why_of(&s, 71), "region is not known"));
    assert_int_equal(reason_of(&s, 11), TW_OPP_OS_DISK);
    assert_int_equal(reason_of(&s, 12), TW_OPP_COVERED);
    assert_int_equal(reason_of(&s, 13), TW_OPP_ALREADY_TARGET);
    assert_int_equal(reason_of(&s, 14), TW_OPP_PROVISIONED);
    assert_int_equal(reason_of(&s, 15), TW_OPP_SHARED);
    assert_non_null(strstr(why_of(&s, 15), "maxShares 2"));
    assert_int_equal(reason_of(&s, 16), TW_OPP_BURSTING);
    assert_int_equal(reason_of(&s, 17), TW_OPP_NO_TARGET);
    assert_int_equal(reason_of(&s, 21), TW_OPP_EXCLUDED_BY_POLICY);
    assert_non_null(strstr(why_of(&s, 21), "tierwise"));
    assert_int_equal(reason_of(&s, 31), TW_OPP_NO_PRICE);
    assert_non_null(strstr(why_of(&s, 31), "northeurope"));
    assert_int_equal(reason_of(&s, 41), TW_OPP_NO_PREMIUM_VM);
    assert_non_null(strstr(why_of(&s, 41), "Standard_A2_v2"));
    assert_int_equal(reason_of(&s, 51), TW_OPP_HIBERNATED);
    /* The reservation holds the first P30 of westeurope the policy covers. */
    assert_int_equal(reason_of(&s, 61), TW_OPP_RESERVATION);
    assert_non_null(strstr(why_of(&s, 61), "1 P30 LRS disks in westeurope"));
    assert_int_equal(reason_of(&s, 62), TW_OPP_COVERED);

    /* Four weekends of 48 h in December 2026 (Sat 5, 12, 19, 26). */
    size_t i;
    find(&s, 12, &i);
    assert_string_equal(s.d[i].target, "StandardSSD_LRS");
    assert_int_equal(s.d[i].hours_ns, 192 * TW_NS_PER_HOUR);
    assert_int_equal(s.d[i].taken, 4);
    assert_string_equal(s.d[i].saving, "2.367123287671"); /* 9.00 x 192 / 730 */
    assert_string_equal(s.d[i].source, "list");
    assert_string_equal(s.d[i].windows, "Sat 00:00-Mon 00:00");
    /* Shared and bursting unknown: caveats, not exclusions. */
    assert_true(s.d[i].caveats >= 1);
    find(&s, 62, &i);
    assert_string_equal(s.d[i].saving, "15.780821917808"); /* 60 x 192 / 730 */

    /* Totals: per VM, resource group, subscription, fleet, exact. */
    assert_int_equal(s.n_vms, 7);
    assert_int_equal(s.vm[0].id, 1);
    assert_int_equal(s.vm[0].t.disks, 1);
    assert_int_equal(s.vm[0].t.excluded, 6);
    assert_int_equal(res.fleet.vms, 7);
    assert_int_equal(res.fleet.disks, 2);
    assert_int_equal(res.fleet.excluded, 12);
    assert_int_equal(res.fleet.no_price, 2);
    assert_true(res.fleet.downgraded_ns == 384 * TW_NS_PER_HOUR);
    amount_is(res.fleet.saving, "18.147945205479"); /* 13248 / 730 */
    char shown[32];
    assert_int_equal(tw_amount_format(res.fleet.saving, "GBP", shown, sizeof(shown), &err),
                     TW_OK);
    assert_string_equal(shown, "18.15");
    assert_int_equal(res.n_subs, 2);
    assert_string_equal(res.subs[0].subscription_id, "sub-a");
    assert_int_equal(res.subs[0].t.vms, 3);
    amount_is(res.subs[0].t.saving, "2.367123287671");
    assert_string_equal(res.subs[1].subscription_id, "sub-b");
    amount_is(res.subs[1].t.saving, "15.780821917808");
    assert_int_equal(res.n_rgs, 3);
    assert_string_equal(res.rgs[0].resource_group, "rg-dev");
    assert_int_equal(res.rgs[0].t.vms, 2);
    assert_string_equal(res.rgs[1].resource_group, "rg-other");
    assert_int_equal(res.rgs[1].t.no_price, 1);
    /* The book missing: named, counted, never a zero. */
    assert_int_equal(res.n_books, 2);
    assert_string_equal(res.books[0].region, "northeurope");
    assert_true(res.books[0].missing);
    assert_int_equal(res.books[0].disks, 1);
    assert_string_equal(res.books[1].region, "westeurope");
    assert_false(res.books[1].missing);
    tw_opp_result_cleanup(&res);

    /* Without the reservation both P30 disks move. */
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(reason_of(&s, 61), TW_OPP_COVERED);
    assert_int_equal(res.fleet.disks, 3);
    tw_opp_result_cleanup(&res);
    tw_reservations_cleanup(&rs);
    tw_policy_cleanup(&p);
}

static void test_other_policies(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    /* To Standard HDD with OS disks: an OS disk still never goes there. */
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"hdd\","
               "\"match\":{\"vms\":[\"dev-1\"]},\"target\":\"Standard_LRS\","
               "\"windows\":[\"Sat 00:00-Mon 00:00\"],\"os_disks\":true,"
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(reason_of(&s, 11), TW_OPP_OS_DISK_TO_HDD);
    assert_int_equal(reason_of(&s, 12), TW_OPP_COVERED);
    size_t i;
    find(&s, 12, &i);
    assert_string_equal(s.d[i].target, "Standard_LRS");
    assert_string_equal(s.d[i].saving, "3.461260273973"); /* 13.16 x 192 / 730 */
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
    /* A policy that never switches. */
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"sap\","
               "\"match\":{\"vms\":[\"dev-6\"]},\"target\":\"none\"}");
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.n, 2);
    assert_int_equal(reason_of(&s, 61), TW_OPP_NO_SWITCH);
    assert_int_equal(res.fleet.disks, 0);
    amount_is(res.fleet.saving, "0.000000000000");
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* Windows from each VM's tag: one in Custodian's form (its zone loaded
 * by name), one missing, one that does not parse. */
static void test_tag_windows(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3",
       "{\"schedule\":\"off=(S,0);on=(M,0);tz=Europe/London\"}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    vm(f, 2, "b", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 21, 2, "data", "Premium_LRS", "P10", 128, "1", "0");
    vm(f, 3, "c", "rg", "sub", "westeurope", "Standard_D2s_v3",
       "{\"Schedule\":\"off=(X,25)\"}");
    disk(f, 31, 3, "data", "Premium_LRS", "P10", 128, "1", "0");
    /* The same schedule as VM a's (worked out once), and c's bad one. */
    vm(f, 4, "d", "rg", "sub", "westeurope", "Standard_D2s_v3",
       "{\"schedule\":\"off=(S,0);on=(M,0);tz=Europe/London\"}");
    disk(f, 41, 4, "data", "Premium_LRS", "P10", 128, "1", "0");
    /* A disk alike with a SKU change days before: worked out, not taken
     * from the disks alike, and the same. */
    disk(f, 42, 4, "data", "Premium_LRS", "P10", 128, "1", "0");
    history(f, 42, "2026-11-24T22:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 42, "2026-11-24T23:00:00Z", "Premium_LRS", "P10");
    vm(f, 5, "e", "rg", "sub", "westeurope", "Standard_D2s_v3",
       "{\"Schedule\":\"off=(X,25)\"}");
    disk(f, 51, 5, "data", "Premium_LRS", "P10", 128, "1", "0");
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"tags\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":\"tag:schedule\","
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    int calls = 0;
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone, .zone_arg = &calls};
    struct tw_opp_sink sink = {on_disk, on_vm, &s};
    memset(&s, 0, sizeof(s));
    if (tw_opp_run(f->st, &o, &sink, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(calls, 2); /* the policy's UTC, the tag's Europe/London */
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].reason, TW_OPP_COVERED);
    assert_string_equal(s.d[i].source, "tag:schedule");
    assert_string_equal(s.d[i].windows, "Sat 00:00-Mon 00:00");
    assert_int_equal(s.d[i].hours_ns, 192 * TW_NS_PER_HOUR); /* London is on GMT in December */
    assert_int_equal(reason_of(&s, 21), TW_OPP_NO_WINDOW);
    assert_non_null(strstr(why_of(&s, 21), "no tag schedule"));
    assert_int_equal(reason_of(&s, 31), TW_OPP_NO_WINDOW);
    assert_non_null(strstr(why_of(&s, 31), "off=(X,25)"));
    assert_non_null(strstr(why_of(&s, 31), "does not parse"));
    find(&s, 41, &i);
    assert_int_equal(s.d[i].reason, TW_OPP_COVERED);
    assert_string_equal(s.d[i].windows, "Sat 00:00-Mon 00:00");
    assert_int_equal(s.d[i].hours_ns, 192 * TW_NS_PER_HOUR);
    assert_string_equal(why_of(&s, 51), why_of(&s, 31));
    size_t j;
    find(&s, 42, &j);
    assert_int_equal(s.d[j].hours_ns, s.d[i].hours_ns);
    assert_string_equal(s.d[j].saving, s.d[i].saving);
    assert_int_equal(s.d[j].taken, s.d[i].taken);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* Windows learned from four weekends deallocated before the month. */
static void test_observed_windows(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    vm(f, 2, "b", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 21, 2, "data", "Premium_LRS", "P10", 128, "1", "0");
    const char *sat[] = {"2026-11-07", "2026-11-14", "2026-11-21", "2026-11-28"};
    const char *mon[] = {"2026-11-09", "2026-11-16", "2026-11-23", "2026-11-30"};
    power(f, 1, "2026-11-01T00:00:00Z", "running");
    power(f, 2, "2026-11-01T00:00:00Z", "running");
    for (int k = 0; k < 4; k++) {
        char at[40];
        snprintf(at, sizeof(at), "%sT00:00:00Z", sat[k]);
        power(f, 1, at, "deallocated");
        snprintf(at, sizeof(at), "%sT00:00:00Z", mon[k]);
        power(f, 1, at, "running");
    }
    /* VM b: deallocated one weekend only: nothing recurs. */
    power(f, 2, "2026-11-28T00:00:00Z", "deallocated");
    power(f, 2, "2026-11-30T00:00:00Z", "running");
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"learned\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":\"observed\","
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].reason, TW_OPP_COVERED);
    assert_string_equal(s.d[i].source, "observed");
    assert_string_equal(s.d[i].windows, "Sat 00:00-Mon 00:00");
    assert_int_equal(s.d[i].hours_ns, 192 * TW_NS_PER_HOUR);
    assert_int_equal(reason_of(&s, 21), TW_OPP_NO_WINDOW);
    assert_non_null(strstr(why_of(&s, 21), "recurs"));
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* The quota counts a SKU change already made: Tuesday mornings 00:00 to
 * 06:00 (down and up, two changes), and a change back to Premium at
 * 23:00 the night before the first makes three in 24 h. */
static void test_quota_prior_change(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    disk(f, 12, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    history(f, 11, "2026-11-30T22:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 11, "2026-11-30T23:00:00Z", "Premium_LRS", "P10");
    history(f, 12, "2026-11-30T22:00:00Z", "Premium_LRS", "P10"); /* its first: no change */
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"mornings\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Tue 00:00-Tue 06:00\"],"
               "\"quota\":{\"changes\":2,\"hours\":24},"
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].taken, 4); /* Dec 8, 15, 22, 29 */
    assert_int_equal(s.d[i].skipped, 1);
    assert_int_equal(s.d[i].hours_ns, 24 * TW_NS_PER_HOUR);
    find(&s, 12, &i);
    assert_int_equal(s.d[i].taken, 5); /* Dec 1 too */
    assert_int_equal(s.d[i].hours_ns, 30 * TW_NS_PER_HOUR);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* A policy already carried out: the month's own switches are in the SKU
 * history.  They are the switches being modelled, not changes that use up
 * the quota, so every window is still taken; the change a week before the
 * month still counts as history. */
static void test_quota_history_of_own_switches(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    history(f, 11, "2026-11-20T12:00:00Z", "Premium_LRS", "P10");
    static const char *const days[] = {"2026-11-24", "2026-12-01", "2026-12-08", "2026-12-15"};
    for (size_t k = 0; k < sizeof(days) / sizeof(days[0]); k++) {
        char down[40], up[40];
        snprintf(down, sizeof(down), "%sT00:00:00Z", days[k]);
        snprintf(up, sizeof(up), "%sT06:00:00Z", days[k]);
        history(f, 11, down, "StandardSSD_LRS", "E10");
        history(f, 11, up, "Premium_LRS", "P10");
    }
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"mornings\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Tue 00:00-Tue 06:00\"],"
               "\"timezone\":\"UTC\",\"quota\":{\"changes\":2,\"hours\":24},"
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].taken, 5); /* Dec 1, 8, 15, 22, 29 */
    assert_int_equal(s.d[i].skipped, 0);
    assert_int_equal(s.d[i].hours_ns, 30 * TW_NS_PER_HOUR);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* The book as it stood at the month's start: December is priced by the
 * book of November, January by the later one; a month before any book
 * takes the latest. */
static void test_book_as_of_month(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    book_at(f, "GBP", "2026-11-01T00:00:00Z", "16.16");
    book_at(f, "GBP", "2026-12-15T00:00:00Z", "25.16");
    struct tw_policy p;
    policy(&p, list_policy);
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    const struct {
        int year, month;
        const char *saving, *fetched;
    } cases[] = {
        {2026, 12, "2.367123287671", "2026-11-01T00:00:00Z"}, /* 9.00 x 192 / 730 */
        {2027, 1, "5.917808219178", "2026-12-15T00:00:00Z"},  /* 18.00 x 240 / 730 */
        {2026, 6, "", "2026-12-15T00:00:00Z"},                /* before any: the latest */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct tw_opp_opts o = {.policy = &p, .year = cases[k].year, .month = cases[k].month,
                                .cat = &f->cat, .caps = &f->caps, .zone = zone};
        struct tw_opp_sink sink = {on_disk, on_vm, &s};
        memset(&s, 0, sizeof(s));
        if (tw_opp_run(f->st, &o, &sink, &res, &err) != TW_OK)
            fail_msg("%s", err.msg);
        assert_int_equal(res.n_books, 1);
        assert_string_equal(res.books[0].fetched_at, cases[k].fetched);
        size_t i;
        find(&s, 11, &i);
        if (cases[k].saving[0])
            assert_string_equal(s.d[i].saving, cases[k].saving);
        tw_opp_result_cleanup(&res);
    }
    tw_policy_cleanup(&p);
}

static void test_currency_and_month(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    char cur[4];
    assert_int_equal(tw_opp_currency(f->st, NULL, cur, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "no price book"));
    book(f, "GBP");
    assert_int_equal(tw_opp_currency(f->st, NULL, cur, &err), TW_OK);
    assert_string_equal(cur, "GBP");
    book(f, "USD");
    assert_int_equal(tw_opp_currency(f->st, NULL, cur, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "GBP, USD"));
    assert_non_null(strstr(err.msg, "--currency"));
    assert_int_equal(tw_opp_currency(f->st, "usd", cur, &err), TW_OK);
    assert_string_equal(cur, "USD");
    assert_int_equal(tw_opp_currency(f->st, "US", cur, &err), TW_EINVAL);

    int y, m;
    assert_int_equal(tw_opp_month_parse("2026-12", 7, &y, &m, &err), TW_OK);
    assert_int_equal(y, 2026);
    assert_int_equal(m, 12);
    assert_int_equal(tw_opp_month_parse("2026-13", 7, &y, &m, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "01..12"));
    assert_int_equal(tw_opp_month_parse("2026-1", 6, &y, &m, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "YYYY-MM"));
    assert_int_equal(tw_opp_month_parse("1969-12", 7, &y, &m, &err), TW_ERANGE);
    assert_int_equal(tw_opp_month_parse("2026-12x", 8, &y, &m, &err), TW_EPARSE);

    /* The month in the policy's zone: New York's December would start at
     * 05:00Z; London's is at midnight UTC in winter. */
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"x\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Sat 00:00-Mon 00:00\"],"
               "\"timezone\":\"Europe/London\"}");
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 6, .currency = "GBP",
                            .cat = &f->cat, .zone = zone};
    struct tw_opp_result res;
    assert_int_equal(tw_opp_run(f->st, &o, NULL, &res, &err), TW_OK);
    assert_int_equal(res.from_ns, INT64_C(1780268400) * TW_NS_PER_S); /* 2026-05-31T23:00Z */
    assert_int_equal(res.to_ns, INT64_C(1782860400) * TW_NS_PER_S);   /* 2026-06-30T23:00Z */
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

struct text {
    char *s;
    size_t n;
};

static enum tw_err collect(void *arg, const char *buf, size_t len)
{
    struct text *t = arg;
    t->s = realloc(t->s, t->n + len + 1);
    memcpy(t->s + t->n, buf, len);
    t->n += len;
    t->s[t->n] = '\0';
    return TW_OK;
}

static void test_json(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_policy p;
    policy(&p, list_policy);
    struct tw_error err = {0};
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone};
    struct text t = {0};
    struct tw_opp_result res;
    if (tw_opp_json(f->st, &o, collect, &t, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    json_error_t je;
    json_t *j = json_loadb(t.s, t.n, 0, &je);
    if (!j)
        fail_msg("not JSON (%s): %.300s", je.text, t.s);
    assert_string_equal(json_string_value(json_object_get(j, "currency")), "GBP");
    assert_string_equal(json_string_value(json_object_get(j, "month")), "2026-12");
    json_t *period = json_object_get(j, "period");
    assert_string_equal(json_string_value(json_object_get(period, "from")),
                        "2026-12-01T00:00:00Z");
    json_t *disks = json_object_get(j, "disks");
    assert_int_equal(json_array_size(disks), 3);
    json_t *d0 = json_array_get(disks, 0);
    assert_string_equal(json_string_value(json_object_get(d0, "disk")), "disk-12");
    assert_string_equal(json_string_value(json_object_get(d0, "saving")), "2.37");
    assert_string_equal(json_string_value(json_object_get(d0, "saving_unrounded")),
                        "2.367123287671");
    assert_string_equal(json_string_value(json_object_get(d0, "hours")), "192");
    assert_string_equal(json_string_value(json_object_get(d0, "per_month")), "16.16");
    assert_string_equal(json_string_value(json_object_get(d0, "target_per_month")), "7.16");
    json_t *ex = json_object_get(j, "excluded");
    assert_int_equal(json_array_size(ex), 11);
    size_t k;
    json_t *e;
    bool saw_no_price = false;
    json_array_foreach(ex, k, e)
    {
        assert_true(json_is_string(json_object_get(e, "reason")));
        assert_true(strlen(json_string_value(json_object_get(e, "why"))) > 10);
        if (strcmp(json_string_value(json_object_get(e, "reason")), "no_price") == 0)
            saw_no_price = true;
    }
    assert_true(saw_no_price);
    json_t *tot = json_object_get(j, "totals");
    json_t *fl = json_object_get(tot, "fleet");
    assert_string_equal(json_string_value(json_object_get(fl, "saving")), "33.93");
    assert_string_equal(json_string_value(json_object_get(fl, "saving_unrounded")),
                        "33.928767123288");
    assert_int_equal(json_integer_value(json_object_get(fl, "disks_without_price")), 2);
    assert_int_equal(json_array_size(json_object_get(tot, "vms")), 7);
    assert_int_equal(json_array_size(json_object_get(tot, "resource_groups")), 3);
    assert_int_equal(json_array_size(json_object_get(tot, "subscriptions")), 2);
    json_t *nb = json_object_get(j, "regions_without_book");
    assert_int_equal(json_array_size(nb), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nb, 0), "region")),
                        "northeurope");
    json_decref(j);
    free(t.s);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* Counts and adds up what a run hands over, for fleets too big to keep. */
struct tally {
    size_t covered, no_window, other;
    tw_opp_ns disk_ns, vm_ns;        /* the disks' hours, the VMs' totals' hours */
    char first_why[512];
};

static enum tw_err tally_disk(void *arg, const struct tw_opp_vm *v, const struct tw_opp_disk *d)
{
    (void)v;
    struct tally *t = arg;
    if (d->reason == TW_OPP_COVERED) {
        t->covered++;
        t->disk_ns += d->saving.downgraded_ns;
    } else {
        if (d->reason == TW_OPP_NO_WINDOW)
            t->no_window++;
        else
            t->other++;
        if (!t->first_why[0])
            snprintf(t->first_why, sizeof(t->first_why), "%s", d->why);
    }
    return TW_OK;
}

static enum tw_err tally_vm(void *arg, const struct tw_opp_vm *v, const struct tw_opp_total *t)
{
    (void)v;
    ((struct tally *)arg)->vm_ns += t->downgraded_ns;
    return TW_OK;
}

static void hours_are(tw_opp_ns ns, const char *want)
{
    char got[48];
    assert_true(tw_opp_hours_text(ns, got, sizeof(got)));
    assert_string_equal(got, want);
}

/* The fleet's hours are the sum of its disks' at scale: 4,000 disks on
 * the cheaper SKU all December (744 h each) are 2,976,000 hours, past the
 * 2.56 million hours of int64_t nanoseconds. */
static void test_fleet_hours_at_scale(void **state)
{
    struct fx *f = *state;
    sql(f, "BEGIN;"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
           "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
           "vm_size, tags, last_report_id, last_report_at, last_report_ms) SELECT i, 'vm:' || i, "
           "'vm-' || i, 'sub-' || (i % 3), 'rg-' || (i % 7), 'westeurope', 'Standard_D2s_v3', "
           "'{}', 'r' || i, '2026-11-20T00:00:00Z', 1795132800000 FROM n;"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500), "
           "k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 8) "
           "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching, "
           "last_seen_at, last_seen_ms, position, max_shares, bursting) SELECT i * 10 + j, "
           "'d' || (i * 10 + j), i, 'disk-' || j, 'data', j, 'Premium_LRS', 128, 'P10', 'None', "
           "'2026-11-20T00:00:00Z', 1795132800000, j, 1, 0 FROM n, k;"
           "COMMIT");
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"always\",\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Mon 00:00-Mon 00:00\"],"
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct tally t = {0};
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone};
    struct tw_opp_sink sink = {tally_disk, tally_vm, &t};
    struct tw_opp_result res;
    if (tw_opp_run(f->st, &o, &sink, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(t.covered, 4000);
    assert_int_equal(res.fleet.disks, 4000);
    assert_true(t.disk_ns == (tw_opp_ns)4000 * 744 * TW_NS_PER_HOUR);
    assert_true(t.vm_ns == t.disk_ns);
    assert_true(res.fleet.downgraded_ns == t.disk_ns);
    hours_are(res.fleet.downgraded_ns, "2976000");
    tw_opp_ns subs = 0, rgs = 0;
    for (size_t i = 0; i < res.n_subs; i++)
        subs += res.subs[i].t.downgraded_ns;
    for (size_t i = 0; i < res.n_rgs; i++)
        rgs += res.rgs[i].t.downgraded_ns;
    assert_true(subs == t.disk_ns);
    assert_true(rgs == t.disk_ns);
    amount_is(res.fleet.saving, "36690.410958904110"); /* 4000 x 9.00 x 744 / 730 */
    tw_opp_result_cleanup(&res);
    /* The document says the same. */
    struct text doc = {0};
    if (tw_opp_json(f->st, &o, collect, &doc, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    json_t *j = json_loadb(doc.s, doc.n, 0, NULL);
    assert_non_null(j);
    json_t *fl = json_object_get(json_object_get(j, "totals"), "fleet");
    assert_string_equal(json_string_value(json_object_get(fl, "hours")), "2976000");
    assert_null(json_object_get(fl, "scope"));
    json_decref(j);
    free(doc.s);
    /* The writer's edges: fractions, half away from zero, beyond int64_t. */
    hours_are(0, "0");
    hours_are(TW_NS_PER_HOUR / 2, "0.5");
    hours_are(1800000, "0.000001"); /* 1.8 ms: half a micro-hour, rounded up */
    hours_are(1799999, "0");
    hours_are(-(tw_opp_ns)TW_NS_PER_HOUR * 3, "-3");
    hours_are((tw_opp_ns)INT64_MAX * 1000, "2562047788.015216");
    tw_policy_cleanup(&p);
}

/* One VM whose history recurs in more than 64 windows a week: its disks
 * have no window (the VM named, and why), the rest of the fleet is
 * worked out as ever. */
static void test_observed_too_many_windows(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "busy", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    disk(f, 12, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    vm(f, 2, "calm", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 21, 2, "data", "Premium_LRS", "P10", 128, "1", "0");
    /* busy: deallocated 30 minutes every other hour, ten times a day, each
     * day of November (70 windows a week). */
    char q[1024];
    snprintf(q, sizeof(q),
             /* (bigint: PostgreSQL's integer is 32 bits, and i * 86400000 is more) */
             "WITH RECURSIVE d(i) AS (SELECT CAST(0 AS bigint) UNION ALL SELECT i + 1 FROM d "
             "WHERE i < 29), "
             "h(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM h WHERE j < 9), "
             "t(ms, state) AS (SELECT 1793491200000 + i * 86400000 + j * 7200000, "
             "'deallocated' FROM d, h UNION ALL SELECT 1793491200000 + i * 86400000 + "
             "j * 7200000 + 1800000, 'running' FROM d, h) "
             "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) SELECT "
             "1, %s, ms, state, 'arm' FROM t",
             /* the instant's text: SQLite's strftime, PostgreSQL's to_char */
             th_store_pg() ? "to_char(to_timestamp(ms / 1000) AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
                           : "strftime('%Y-%m-%dT%H:%M:%SZ', ms / 1000, 'unixepoch')");
    sql(f, q);
    const char *sat[] = {"2026-11-07", "2026-11-14", "2026-11-21", "2026-11-28"};
    const char *mon[] = {"2026-11-09", "2026-11-16", "2026-11-23", "2026-11-30"};
    power(f, 2, "2026-11-01T00:00:00Z", "running");
    for (int k = 0; k < 4; k++) {
        char at[40];
        snprintf(at, sizeof(at), "%sT00:00:00Z", sat[k]);
        power(f, 2, at, "deallocated");
        snprintf(at, sizeof(at), "%sT00:00:00Z", mon[k]);
        power(f, 2, at, "running");
    }
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"learned\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":\"observed\","
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(reason_of(&s, 11), TW_OPP_NO_WINDOW);
    assert_int_equal(reason_of(&s, 12), TW_OPP_NO_WINDOW);
    assert_non_null(strstr(why_of(&s, 11), "VM busy"));
    assert_non_null(strstr(why_of(&s, 11), "more than 64 windows a week"));
    assert_int_equal(reason_of(&s, 21), TW_OPP_COVERED);
    assert_int_equal(res.fleet.disks, 1);
    assert_int_equal(res.fleet.excluded, 2);
    tw_opp_result_cleanup(&res);
    /* The document too: whole, the VM's disks among the excluded. */
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone};
    struct text doc = {0};
    if (tw_opp_json(f->st, &o, collect, &doc, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    json_t *j = json_loadb(doc.s, doc.n, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "excluded")), 2);
    json_decref(j);
    free(doc.s);
    tw_policy_cleanup(&p);
}

/* Any zone a test names "Test/ZoneNN" loads (as UTC); what it loaded is
 * counted. */
static enum tw_err zone_any(void *arg, const char *name, struct tw_tz **out,
                            struct tw_error *err)
{
    if (strncmp(name, "Test/Zone", 9) != 0)
        return zone(NULL, name, out, err);
    (*(int *)arg)++;
    return tw_tz_from_posix("UTC0", 4, out, err);
}

/* Seventy VMs whose tags name seventy zones: every zone loads, each VM's
 * disk is covered (a table of 64 zones once made the last six "does not
 * load"). */
static void test_many_tag_zones(void **state)
{
    struct fx *f = *state;
    for (int i = 1; i <= 70; i++) {
        char name[16], tags[128];
        snprintf(name, sizeof(name), "vm-%d", i);
        snprintf(tags, sizeof(tags), "{\"schedule\":\"off=(S,0);on=(M,0);tz=Test/Zone%02d\"}", i);
        vm(f, i, name, "rg", "sub", "westeurope", "Standard_D2s_v3", tags);
        disk(f, i * 10 + 1, i, "data", "Premium_LRS", "P10", 128, "1", "0");
    }
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"tags\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":\"tag:schedule\","
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct tally t = {0};
    int loaded = 0;
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone_any, .zone_arg = &loaded};
    struct tw_opp_sink sink = {tally_disk, tally_vm, &t};
    struct tw_opp_result res;
    if (tw_opp_run(f->st, &o, &sink, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    if (t.no_window || t.other)
        fail_msg("%zu disks left alone: %s", t.no_window + t.other, t.first_why);
    assert_int_equal(t.covered, 70);
    assert_int_equal(loaded, 70);
    assert_true(t.disk_ns == (tw_opp_ns)70 * 192 * TW_NS_PER_HOUR);
    assert_int_equal(res.fleet.disks, 70);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* A power state observed in 1653 (an agent's report said so) is the state
 * in force at the walk's start: placed there, never multiplied out of
 * int64_t nanoseconds.  Deallocated since, the VM's learned window is the
 * whole week. */
static void test_ancient_power_state(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "old", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    sql(f, th_store_pg() ? "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, "
                           "source) VALUES (1, '1653-01-01T00:00:00Z', extract(epoch FROM "
                           "timestamp '1653-01-01')::bigint * 1000, 'deallocated', 'agent')"
                         : "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, "
                           "source) VALUES (1, '1653-01-01T00:00:00Z', strftime('%s', "
                           "'1653-01-01') * 1000, 'deallocated', 'agent')");
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"learned\","
               "\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":\"observed\","
               "\"margins\":{\"after_deallocate_minutes\":0,\"before_start_minutes\":0}}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].reason, TW_OPP_COVERED);
    assert_string_equal(s.d[i].windows, "Mon 00:00-Mon 00:00");
    assert_int_equal(s.d[i].hours_ns, 744 * TW_NS_PER_HOUR);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* Why a run stops, said apart: a policy zone that does not load, no book
 * at all, a currency to choose. */
static void test_run_failures(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"typo\",\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Sat 00:00-Mon 00:00\"],"
               "\"timezone\":\"Europe/Lndon\"}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    assert_int_equal(run(f, &p, NULL, &s, &res, &err), TW_ENOENT);
    assert_int_equal(res.fail, TW_OPP_FAIL_NO_BOOK);
    assert_non_null(strstr(err.msg, "no price book"));
    tw_opp_result_cleanup(&res);
    /* A currency asked for changes nothing: no book at all is that, not
     * a region of the fleet without a GBP book. */
    struct tw_opp_opts oc = {.policy = &p, .year = 2026, .month = 12, .currency = "GBP",
                             .cat = &f->cat, .caps = &f->caps, .zone = zone};
    struct tw_opp_sink sink = {on_disk, on_vm, &s};
    memset(&s, 0, sizeof(s));
    assert_int_equal(tw_opp_run(f->st, &oc, &sink, &res, &err), TW_ENOENT);
    assert_int_equal(res.fail, TW_OPP_FAIL_NO_BOOK);
    assert_non_null(strstr(err.msg, "the store has no price book"));
    assert_int_equal(s.n, 0);
    tw_opp_result_cleanup(&res);
    char cur[4] = "x";
    assert_int_equal(tw_opp_currency(f->st, "gbp", cur, &err), TW_ENOENT);
    assert_int_equal(tw_opp_currency(f->st, "GB", cur, &err), TW_EINVAL);
    book(f, "GBP");
    assert_int_not_equal(run(f, &p, NULL, &s, &res, &err), TW_OK);
    assert_int_equal(res.fail, TW_OPP_FAIL_POLICY_ZONE);
    assert_non_null(strstr(err.msg, "\"Europe/Lndon\" does not load"));
    assert_non_null(strstr(err.msg, "typo"));
    assert_int_equal(s.n, 0);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
    policy(&p, list_policy);
    book(f, "USD");
    assert_int_equal(run(f, &p, NULL, &s, &res, &err), TW_EINVAL);
    assert_int_equal(res.fail, TW_OPP_FAIL_CURRENCY);
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

/* What needs no price comes before the book: a disk already on the
 * target, and an OS disk whose only target is Standard HDD, in a region
 * without a book (or with no region) are said as such, not no_price, and
 * the region is not listed for them. */
static void test_checks_before_price(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "ne", "rg", "sub", "northeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "os", "Premium_LRS", "P10", 128, "1", "0");
    disk(f, 12, 1, "data", "StandardSSD_LRS", "E10", 128, "1", "0");
    vm(f, 2, "nowhere", "rg", "sub", "", "Standard_D2s_v3", "{}");
    disk(f, 21, 2, "data", "StandardSSD_LRS", "E10", 128, "1", "0");
    vm(f, 3, "ne2", "rg", "sub", "northeurope", "Standard_D2s_v3", "{}");
    disk(f, 31, 3, "data", "Premium_LRS", "P10", 128, "1", "0");
    book(f, "GBP");
    struct tw_policy p;
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"ssd\",\"match\":{},"
               "\"target\":\"StandardSSD_LRS\",\"windows\":[\"Sat 00:00-Mon 00:00\"],"
               "\"os_disks\":true}");
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(reason_of(&s, 12), TW_OPP_ALREADY_TARGET);
    assert_int_equal(reason_of(&s, 21), TW_OPP_ALREADY_TARGET);
    assert_int_equal(reason_of(&s, 11), TW_OPP_NO_PRICE);
    assert_int_equal(reason_of(&s, 31), TW_OPP_NO_PRICE);
    assert_int_equal(res.fleet.no_price, 2);
    assert_int_equal(res.n_books, 1);
    assert_true(res.books[0].missing);
    assert_int_equal(res.books[0].disks, 2); /* the two Premium disks, not the E10 */
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
    policy(&p, "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"hdd\",\"match\":{},"
               "\"target\":\"Standard_LRS\",\"windows\":[\"Sat 00:00-Mon 00:00\"],"
               "\"os_disks\":true}");
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(reason_of(&s, 11), TW_OPP_OS_DISK_TO_HDD);
    assert_int_equal(reason_of(&s, 31), TW_OPP_NO_PRICE);
    assert_int_equal(res.books[0].disks, 2); /* the E10 disk needs prices for HDD */
    tw_opp_result_cleanup(&res);
    tw_policy_cleanup(&p);
}

static enum tw_err write_fails(void *arg, const char *buf, size_t len)
{
    (void)arg;
    (void)buf;
    (void)len;
    return TW_EIO;
}

/* A write that fails is said as such (not as an amount out of range). */
static void test_write_failure(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_policy p;
    policy(&p, list_policy);
    struct tw_error err = {0};
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone};
    assert_int_equal(tw_opp_json(f->st, &o, write_fails, NULL, NULL, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "writing the savings opportunities failed"));
    assert_non_null(strstr(err.msg, tw_strerror(TW_EIO)));
    assert_null(strstr(err.msg, "amount"));
    tw_policy_cleanup(&p);
}

/* The longest windows text (TW_WINDOWS_MAX windows) is the grammar in
 * the disk's windows and the document, and reads back to the windows. */
static void test_windows_text_max(void **state)
{
    struct fx *f = *state;
    vm(f, 1, "a", "rg", "sub", "westeurope", "Standard_D2s_v3", "{}");
    disk(f, 11, 1, "data", "Premium_LRS", "P10", 128, "1", "0");
    book(f, "GBP");
    static const char *const days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    char list[4096] = "", text[4096] = "";
    for (int i = 0; i < TW_WINDOWS_MAX; i++) {
        int a = i * 150, b = a + 60; /* an hour every two and a half */
        size_t l = strlen(list), lt = strlen(text);
        snprintf(list + l, sizeof(list) - l, "%s\"%s %02d:%02d-%s %02d:%02d\"", i ? "," : "",
                 days[a / 1440], a % 1440 / 60, a % 60, days[b / 1440], b % 1440 / 60, b % 60);
        snprintf(text + lt, sizeof(text) - lt, "%s%s %02d:%02d-%s %02d:%02d", i ? ", " : "",
                 days[a / 1440], a % 1440 / 60, a % 60, days[b / 1440], b % 1440 / 60, b % 60);
    }
    char ptext[8192];
    snprintf(ptext, sizeof(ptext),
             "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"many\",\"match\":{},"
             "\"target\":\"StandardSSD_LRS\",\"windows\":[%s],\"quota\":{\"changes\":"
             "10,\"hours\":1},\"margins\":{\"after_deallocate_minutes\":0,"
             "\"before_start_minutes\":0}}",
             list);
    struct tw_policy p;
    policy(&p, ptext);
    assert_int_equal(p.windows.n, TW_WINDOWS_MAX);
    struct tw_error err = {0};
    struct seen s;
    struct tw_opp_result res;
    if (run(f, &p, NULL, &s, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    size_t i;
    find(&s, 11, &i);
    assert_int_equal(s.d[i].reason, TW_OPP_COVERED);
    assert_string_equal(s.d[i].windows, text);
    struct tw_windows back;
    assert_int_equal(tw_windows_parse(s.d[i].windows, strlen(s.d[i].windows), &back, &err),
                     TW_OK);
    assert_int_equal(back.n, TW_WINDOWS_MAX);
    tw_opp_result_cleanup(&res);
    struct tw_opp_opts o = {.policy = &p, .year = 2026, .month = 12, .cat = &f->cat,
                            .caps = &f->caps, .zone = zone};
    struct text doc = {0};
    if (tw_opp_json(f->st, &o, collect, &doc, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    json_t *j = json_loadb(doc.s, doc.n, 0, NULL);
    assert_non_null(j);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "disks"), 0),
                                          "windows")),
        text);
    json_decref(j);
    free(doc.s);
    tw_policy_cleanup(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_regions),
        cmocka_unit_test(test_power_obs),
        cmocka_unit_test_setup_teardown(test_exclusions_and_totals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_policies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tag_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observed_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_prior_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_history_of_own_switches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_as_of_month, setup, teardown),
        cmocka_unit_test_setup_teardown(test_currency_and_month, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fleet_hours_at_scale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observed_too_many_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ancient_power_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_tag_zones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checks_before_price, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_windows_text_max, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
