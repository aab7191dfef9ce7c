/* plan_fixture.h - the store the planner's tests build row by row (a
 * temporary database with a price book, VMs, disks and their SKU history)
 * the zone loader the plans take and a sink that keeps their actions;
 * shared by test_plan.c and test_plan_many.c. */
#ifndef TW_TEST_PLAN_FIXTURE_H
#define TW_TEST_PLAN_FIXTURE_H

#include "testhelp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/money.h"
#include "core/policy.h"
#include "core/time.h"
#include "service/plan.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_tier_catalog cat;
};

static inline void item(char *buf, size_t cap, const char *meter, const char *product, const char *price)
{
    size_t l = strlen(buf);
    char sku[64];
    snprintf(sku, sizeof(sku), "%.*s", (int)(strstr(meter, " Disk") - meter), meter);
    snprintf(buf + l, cap - l,
             "%s{\"currencyCode\":\"GBP\",\"tierMinimumUnits\":0,\"retailPrice\":%s,"
             "\"unitPrice\":%s,\"armRegionName\":\"westeurope\",\"location\":\"EU West\","
             "\"effectiveStartDate\":\"2020-01-01T00:00:00Z\",\"meterName\":\"%s\","
             "\"productName\":\"%s\",\"skuName\":\"%s\",\"serviceName\":\"Storage\","
             "\"unitOfMeasure\":\"1/Month\",\"type\":\"Consumption\"}",
             l > 1 ? "," : "", price, price, meter, product, sku);
}

/* P10 16.16 and E10 7.16 a month: 9.00 saved per 730 h. */
static inline void book(struct fx *f)
{
    char items[4096] = "[";
    item(items, sizeof(items), "P10 LRS Disk", "Premium SSD Managed Disks", "16.16");
    item(items, sizeof(items), "P30 LRS Disk", "Premium SSD Managed Disks", "100");
    item(items, sizeof(items), "E10 LRS Disk", "Standard SSD Managed Disks", "7.16");
    item(items, sizeof(items), "E30 LRS Disk", "Standard SSD Managed Disks", "40");
    strcat(items, "]");
    struct tw_error err = {0};
    if (tw_store_pricebook_put(f->st, "westeurope", "GBP", "test", "2020-01-01T00:00:00Z", items,
                               strlen(items), &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static inline void sql(struct fx *f, const char *text)
{
    sqlite3 *db;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", text, msg);
    sqlite3_close(db);
}

static inline void vm(struct fx *f, int id, const char *name)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
             "vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (%d, "
             "'vm:%d', '%s', 'sub-a', 'rg-a', 'westeurope', 'Standard_D2s_v3', '{}', 'r%d', "
             "'2026-01-01T00:00:00Z', 1767225600000)",
             id, id, name, id);
    sql(f, q);
}

static inline void disk(struct fx *f, int id, int vm_id, const char *name, const char *sku,
                 const char *tier, int size)
{
    char q[1024];
    snprintf(q, sizeof(q),
             "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, "
             "caching, last_seen_at, last_seen_ms, position, max_shares, bursting) VALUES (%d, "
             "'d%d', %d, '%s', 'data', 0, '%s', %d, '%s', 'None', '2026-01-01T00:00:00Z', "
             "1767225600000, %d, 1, 0)",
             id, id, vm_id, name, sku, size, tier, id);
    sql(f, q);
}

static inline void history(struct fx *f, int disk_id, const char *at, const char *sku, const char *tier)
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

static inline int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->path, sizeof(f->path), "%s/tw.db", f->dir);
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &f->st, &err), TW_OK);
    assert_int_equal(tw_tier_catalog_builtin(&f->cat, &err), TW_OK);
    book(f);
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_tier_catalog_cleanup(&f->cat);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static inline enum tw_err zone(void *arg, const char *name, struct tw_tz **out, struct tw_error *err)
{
    (void)arg;
    const char *posix = strcmp(name, "UTC") == 0             ? "UTC0"
                        : strcmp(name, "Europe/London") == 0 ? "GMT0BST,M3.5.0/1,M10.5.0"
                                                             : NULL;
    if (!posix)
        return tw_error_set(err, TW_ENOENT, "no zone %s here", name);
    return tw_tz_from_posix(posix, strlen(posix), out, err);
}

/* The actions of a plan as its sink got them (on_action), an instant from
 * RFC 3339 (at), and a plan's options over the fixture (opts). */
#define ACTS_MAX 64
struct acts {
    size_t n;
    struct {
        enum tw_plan_kind kind;
        int64_t disk_id, vm_id, due_ns, pair_ns;
        char vm[128], disk[128], from[32], to[32], at[40], local[48], reason[256], key[160];
        char saving[64];
    } a[ACTS_MAX];
};

static inline enum tw_err on_action(void *arg, const struct tw_plan_action *a)
{
    struct acts *s = arg;
    assert_true(s->n < ACTS_MAX);
    s->a[s->n].kind = a->kind;
    s->a[s->n].disk_id = a->disk_id;
    s->a[s->n].vm_id = a->vm_id;
    s->a[s->n].due_ns = a->due_ns;
    s->a[s->n].pair_ns = a->pair_due_ns;
    snprintf(s->a[s->n].vm, sizeof(s->a[0].vm), "%s", a->vm);
    snprintf(s->a[s->n].disk, sizeof(s->a[0].disk), "%s", a->disk);
    snprintf(s->a[s->n].from, sizeof(s->a[0].from), "%s", a->from_sku);
    snprintf(s->a[s->n].to, sizeof(s->a[0].to), "%s", a->to_sku);
    snprintf(s->a[s->n].at, sizeof(s->a[0].at), "%s", a->due_at);
    snprintf(s->a[s->n].local, sizeof(s->a[0].local), "%s", a->due_local);
    snprintf(s->a[s->n].reason, sizeof(s->a[0].reason), "%s", a->reason);
    snprintf(s->a[s->n].key, sizeof(s->a[0].key), "%s", a->idempotency_key);
    assert_true(tw_amount_decimal(a->saving, 6, s->a[s->n].saving, sizeof(s->a[0].saving)));
    s->n++;
    return TW_OK;
}

static inline int64_t at(const char *s)
{
    int64_t ns;
    struct tw_error err = {0};
    if (tw_rfc3339_parse(s, strlen(s), &ns, &err) != TW_OK)
        fail_msg("%s: %s", s, err.msg);
    return ns;
}

static inline void opts(struct fx *f, struct tw_plan_opts *o, const struct tw_policy *p, const char *from,
                 const char *to)
{
    memset(o, 0, sizeof(*o));
    o->policy = p;
    o->from_ns = at(from);
    o->to_ns = at(to);
    o->cat = &f->cat;
    o->zone = zone;
}

#endif
