/* test_ingest.c - storing reports (batches, repeats, a failing report,
 * late reports, SKU history, detached disks) and reading them back in the
 * JSON shapes store.h documents. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "rows_json.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tierwise.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static struct tw_report *load(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "reports/%s", name);
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_report *r = tw_report_new();
    struct tw_error err = {0};
    if (tw_report_from_json(buf, len, r, &err) != TW_OK)
        fail_msg("%s: %s", name, err.msg);
    free(buf);
    return r;
}

/* Stores R alone: with its JSON text as the raw body when RAW, else none
 * (the store renders it).  Returns the status; ERR gets the report's error. */
static enum tw_put_status put1(struct tw_store *st, const struct tw_report *r, bool raw,
                               struct tw_error *err)
{
    char *body = raw ? tw_report_to_json(r, JSON_INDENT(1)) : NULL;
    const char *bodies[1] = {body};
    size_t lens[1] = {body ? strlen(body) : 0};
    enum tw_put_status status;
    struct tw_error batch = {0};
    if (tw_store_put_reports(st, &r, raw ? bodies : NULL, raw ? lens : NULL, 1,
                             "2026-11-30T00:00:00Z", &status, err, &batch) != TW_OK)
        fail_msg("batch: %s", batch.msg);
    free(body);
    return status;
}

static void put_ok(struct tw_store *st, const struct tw_report *r, bool raw)
{
    struct tw_error err = {0};
    if (put1(st, r, raw, &err) != TW_PUT_STORED)
        fail_msg("report %s not stored: %s", r->id, err.msg);
}

static long long count(const struct fx *f, const char *sql)
{
    return th_sql_int(f->path, sql);
}

static void set_id(struct tw_report *r, int n)
{
    snprintf(r->id, sizeof(r->id), "11111111-2222-4333-8444-%012d", n);
}

static const struct tw_disk *inv_disk(const struct tw_report *r, const char *name)
{
    for (size_t i = 0; i < r->inv.n_disks; i++) {
        if (strcmp(r->inv.disks[i].name, name) == 0)
            return &r->inv.disks[i];
    }
    /* fail_msg leaves the test (cmocka longjmps out of it), so there is no
     * disk to return: never NULL, which every caller would write through. */
    fail_msg("no disk %s", name);
    abort();
}

static int tag_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tw_tag *)a)->key, ((const struct tw_tag *)b)->key);
}

/* Whether the inventory compliance reads from the rows is the report's:
 * every field, the disks in the report's order, the tags in key order
 * (the vms row keeps them as a JSON object sorted by key). */
static void assert_inventory_is(const struct tw_inventory *got, const struct tw_inventory *want)
{
    struct tw_inventory *w = malloc(sizeof(*w));
    assert_non_null(w);
    memcpy(w, want, sizeof(*w));
    qsort(w->vm.tags, w->vm.n_tags, sizeof(w->vm.tags[0]), tag_cmp);
    assert_memory_equal(got, w, sizeof(*w));
    free(w);
}

static struct tw_disk *disk_of(struct tw_report *r, const char *name)
{
    return (struct tw_disk *)inv_disk(r, name);
}

/* The store's id of the disk named NAME (from tw_store_disks). */
static int64_t disk_id(struct tw_store *st, const char *name)
{
    json_t *disks;
    struct tw_error err = {0};
    assert_int_equal(rj_disks(st, &disks, &err), TW_OK);
    size_t i;
    json_t *d;
    int64_t id = 0;
    json_array_foreach(disks, i, d) {
        if (strcmp(json_string_value(json_object_get(d, "name")), name) == 0)
            id = json_integer_value(json_object_get(d, "id"));
    }
    json_decref(disks);
    if (!id)
        fail_msg("disk %s is not listed", name);
    return id;
}

static json_t *get_disk(struct tw_store *st, int64_t id)
{
    json_t *d;
    struct tw_error err = {0};
    if (rj_disk(st, id, &d, &err) != TW_OK)
        fail_msg("disk %lld: %s", (long long)id, err.msg);
    return d;
}

static const char *str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        fail_msg("%s is not a string", key);
    return json_string_value(v);
}

/* Everything the store holds, as text, to see that nothing changed. */
static char *snapshot(struct tw_store *st)
{
    json_t *a, *b;
    struct tw_error err = {0};
    struct tw_store_stats s;
    assert_int_equal(rj_vms(st, &a, &err), TW_OK);
    assert_int_equal(rj_disks(st, &b, &err), TW_OK);
    assert_int_equal(tw_store_stats(st, &s, &err), TW_OK);
    json_t *all = json_pack("{s:o,s:o,s:I,s:I,s:I,s:I}", "vms", a, "disks", b, "reports",
                            (json_int_t)s.reports, "vmcount", (json_int_t)s.vms, "diskcount",
                            (json_int_t)s.disks, "results", (json_int_t)s.results);
    char *text = json_dumps(all, JSON_SORT_KEYS);
    json_decref(all);
    return text;
}

static void test_put_and_repeat(void **state)
{
    struct fx *f = *state;
    struct tw_report *r = load("sap-db-01.json");
    put_ok(f->st, r, true);
    struct tw_store_stats s;
    struct tw_error err = {0};
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.reports, 1);
    assert_int_equal(s.vms, 1);
    assert_int_equal(s.disks, 7);
    assert_int_equal(s.results, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history"), 7);
    /* The stripe result covers three disks, the log result one. */
    assert_int_equal(count(f, "SELECT count(*) FROM result_disks"), 4);
    char *before = snapshot(f->st);
    long long rows = count(f, "SELECT (SELECT count(*) FROM reports) + (SELECT count(*) FROM "
                              "results) + (SELECT count(*) FROM power_states) + (SELECT "
                              "count(*) FROM disk_sku_history) + (SELECT count(*) FROM "
                              "result_disks)");

    /* The same id again, even with other contents: answered as a repeat,
     * nothing changes. */
    strcpy(r->inv.vm.vm_size, "Standard_M128s");
    strcpy(r->created_at, "2027-01-01T00:00:00Z");
    assert_int_equal(put1(f->st, r, false, &err), TW_PUT_REPEAT);
    assert_int_equal(put1(f->st, r, true, &err), TW_PUT_REPEAT);
    char *after = snapshot(f->st);
    assert_string_equal(before, after);
    assert_int_equal(rows, count(f, "SELECT (SELECT count(*) FROM reports) + (SELECT count(*) "
                                    "FROM results) + (SELECT count(*) FROM power_states) + "
                                    "(SELECT count(*) FROM disk_sku_history) + (SELECT count(*) "
                                    "FROM result_disks)"));
    /* Twice in one batch: the second is the repeat. */
    set_id(r, 77);
    const struct tw_report *two[2] = {r, r};
    enum tw_put_status st2[2];
    struct tw_error errs[2];
    assert_int_equal(tw_store_put_reports(f->st, two, NULL, NULL, 2, "2027-01-01T00:00:01Z", st2,
                                          errs, &err),
                     TW_OK);
    assert_int_equal(st2[0], TW_PUT_STORED);
    assert_int_equal(st2[1], TW_PUT_REPEAT);
    free(before);
    free(after);
    tw_report_free(r);
}

static void test_batch_with_failure(void **state)
{
    struct fx *f = *state;
    /* A trigger makes one report fail half way, after its VM, report and
     * disk rows were written: all of that must go, and only that. */
    if (th_store_pg())
        th_sql_exec(f->path, "CREATE FUNCTION explode() RETURNS trigger LANGUAGE plpgsql AS "
                             "$$BEGIN RAISE EXCEPTION 'refused by the test trigger' USING "
                             "ERRCODE = 'check_violation'; END$$; "
                             "CREATE TRIGGER explode BEFORE INSERT ON results FOR EACH ROW "
                             "WHEN (NEW.profile = 'explode') EXECUTE FUNCTION explode()");
    else
        th_sql_exec(f->path, "CREATE TRIGGER explode BEFORE INSERT ON results "
                             "WHEN NEW.profile = 'explode' BEGIN "
                             "SELECT RAISE(ABORT, 'refused by the test trigger'); END");

    struct tw_report *a = load("web-03.json"), *bad = load("sap-db-01.json"),
                     *c = load("sap-app-02.json"), *late = load("web-03.json");
    strcpy(bad->results[1].profile, "explode");
    set_id(late, 5);
    strcpy(late->created_at, "not a time");
    const struct tw_report *batch[5] = {a, bad, NULL, c, late};
    enum tw_put_status status[5];
    struct tw_error errs[5], err = {0};
    assert_int_equal(tw_store_put_reports(f->st, batch, NULL, NULL, 5, "2026-11-30T00:00:00Z",
                                          status, errs, &err),
                     TW_OK);
    assert_int_equal(status[0], TW_PUT_STORED);
    assert_int_equal(status[1], TW_PUT_FAILED);
    assert_non_null(strstr(errs[1].msg, "refused by the test trigger"));
    assert_non_null(strstr(errs[1].msg, th_store_name(f->path)));
    assert_int_equal(status[2], TW_PUT_FAILED);
    assert_int_equal(errs[2].code, TW_EINVAL);
    assert_int_equal(status[3], TW_PUT_STORED);
    assert_int_equal(status[4], TW_PUT_FAILED);
    assert_non_null(strstr(errs[4].msg, "created_at"));

    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.reports, 2);
    assert_int_equal(s.vms, 2);
    assert_int_equal(s.disks, 4 + 5);
    assert_int_equal(s.results, 2 + 3);
    assert_int_equal(count(f, "SELECT count(*) FROM vms WHERE name = 'sap-db-01'"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name LIKE 'sap-db-01%'"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states"), 2);
    /* Fixed, the same report goes in. */
    strcpy(bad->results[1].profile, "rated-iops");
    put_ok(f->st, bad, false);
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
    tw_report_free(a);
    tw_report_free(bad);
    tw_report_free(c);
    tw_report_free(late);
}

/* Reports of web-03 at different times, data0 at different SKUs. */
static struct tw_report *web_at(int id, const char *created, const char *sku, const char *tier,
                                int64_t size, const char *vm_size, const char *power)
{
    struct tw_report *r = load("web-03.json");
    set_id(r, id);
    strcpy(r->created_at, created);
    struct tw_disk *d = disk_of(r, "web-03-data0");
    strcpy(d->sku, sku);
    strcpy(d->tier, tier);
    d->size_gib = size;
    strcpy(r->inv.vm.vm_size, vm_size);
    strcpy(r->power_state, power);
    return r;
}

/* "P10,E10,..." of the disk's SKU history, in time order. */
static void history(struct tw_store *st, int64_t id, char *out, size_t len)
{
    json_t *d = get_disk(st, id);
    json_t *h = json_object_get(d, "sku_history");
    assert_true(json_is_array(h));
    out[0] = '\0';
    size_t i;
    json_t *e;
    json_array_foreach(h, i, e) {
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s@%.16s", i ? "," : "", str(e, "tier"),
                 str(e, "observed_at"));
        assert_true(json_is_integer(json_object_get(e, "size_gib")));
        assert_true(json_is_string(json_object_get(e, "sku")));
    }
    json_decref(d);
}

static void test_late_report(void **state)
{
    struct fx *f = *state;
    struct tw_report *a = web_at(1, "2026-11-29T10:00:00Z", "Premium_LRS", "P10", 128,
                                 "Standard_D4ds_v5", "running");
    struct tw_report *b = web_at(2, "2026-11-29T12:00:00Z", "StandardSSD_LRS", "E10", 128,
                                 "Standard_D8ds_v5", "deallocated");
    struct tw_report *c = web_at(3, "2026-11-29T11:00:00Z", "Premium_LRS", "P20", 512,
                                 "Standard_D2ds_v5", "running");
    put_ok(f->st, a, true);
    put_ok(f->st, b, false);
    put_ok(f->st, c, true);

    /* The VM and disk rows say what the newest report (b) said. */
    json_t *vms;
    struct tw_error err = {0};
    assert_int_equal(rj_vms(f->st, &vms, &err), TW_OK);
    assert_int_equal(json_array_size(vms), 1);
    json_t *vm = json_array_get(vms, 0);
    assert_string_equal(str(vm, "vm_size"), "Standard_D8ds_v5");
    assert_string_equal(str(vm, "power_state"), "deallocated");
    assert_string_equal(str(vm, "power_state_at"), "2026-11-29T12:00:00Z");
    assert_string_equal(str(vm, "last_report_at"), "2026-11-29T12:00:00Z");
    int64_t vm_id = json_integer_value(json_object_get(vm, "id"));
    json_decref(vms);
    int64_t d0 = disk_id(f->st, "web-03-data0");
    json_t *d = get_disk(f->st, d0);
    assert_string_equal(str(d, "sku"), "StandardSSD_LRS");
    assert_string_equal(str(d, "tier"), "E10");
    assert_int_equal(json_integer_value(json_object_get(d, "size_gib")), 128);
    assert_string_equal(str(d, "last_seen_at"), "2026-11-29T12:00:00Z");
    json_decref(d);

    /* ... but the late one's results, power state and SKU are kept. */
    char h[512];
    history(f->st, d0, h, sizeof(h));
    assert_string_equal(h, "P10@2026-11-29T10:00,P20@2026-11-29T11:00,E10@2026-11-29T12:00");
    assert_int_equal(count(f, "SELECT count(*) FROM power_states"), 3);
    assert_int_equal(count(f, "SELECT count(*) FROM results"), 6);

    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_result *res;
    size_t n;
    assert_int_equal(tw_store_vm_latest(f->st, vm_id, inv, &res, &n, &err), TW_OK);
    assert_string_equal(inv->vm.vm_size, "Standard_D8ds_v5");
    assert_string_equal(inv_disk(b, "web-03-data0")->sku,
                        inv->disks[inv_disk(b, "web-03-data0") - b->inv.disks].sku);
    free(res);

    /* A late report saying what the one before it said adds nothing; one
     * saying what the next says moves that change earlier. */
    struct tw_report *d2 = web_at(4, "2026-11-29T11:30:00Z", "Premium_LRS", "P20", 512,
                                  "Standard_D2ds_v5", "running");
    struct tw_report *e = web_at(5, "2026-11-29T11:45:00Z", "StandardSSD_LRS", "E10", 128,
                                 "Standard_D2ds_v5", "");
    put_ok(f->st, d2, false);
    history(f->st, d0, h, sizeof(h));
    assert_string_equal(h, "P10@2026-11-29T10:00,P20@2026-11-29T11:00,E10@2026-11-29T12:00");
    put_ok(f->st, e, false);
    history(f->st, d0, h, sizeof(h));
    assert_string_equal(h, "P10@2026-11-29T10:00,P20@2026-11-29T11:00,E10@2026-11-29T11:45");
    /* A late report older than everything goes first. */
    struct tw_report *g = web_at(6, "2026-11-28T10:00:00Z", "Standard_LRS", "S10", 128,
                                 "Standard_D2ds_v5", "stopped");
    put_ok(f->st, g, false);
    history(f->st, d0, h, sizeof(h));
    assert_string_equal(h, "S10@2026-11-28T10:00,P10@2026-11-29T10:00,P20@2026-11-29T11:00,"
                           "E10@2026-11-29T11:45");
    assert_int_equal(rj_vms(f->st, &vms, &err), TW_OK);
    assert_string_equal(str(json_array_get(vms, 0), "power_state"), "deallocated");
    assert_string_equal(str(json_array_get(vms, 0), "vm_size"), "Standard_D8ds_v5");
    json_decref(vms);

    /* A newer report with no power state keeps the last known one. */
    struct tw_report *k = web_at(7, "2026-11-29T13:00:00Z", "StandardSSD_LRS", "E10", 128,
                                 "Standard_D8ds_v5", "");
    put_ok(f->st, k, false);
    assert_int_equal(rj_vms(f->st, &vms, &err), TW_OK);
    assert_string_equal(str(json_array_get(vms, 0), "power_state"), "deallocated");
    assert_string_equal(str(json_array_get(vms, 0), "last_report_at"), "2026-11-29T13:00:00Z");
    json_decref(vms);

    free(inv);
    tw_report_free(a);
    tw_report_free(b);
    tw_report_free(c);
    tw_report_free(d2);
    tw_report_free(e);
    tw_report_free(g);
    tw_report_free(k);
}

static void test_sku_history_in_order(void **state)
{
    struct fx *f = *state;
    const char *tiers[] = {"P10", "P10", "E10", "E10", "P10"};
    for (int i = 0; i < 5; i++) {
        char at[32];
        snprintf(at, sizeof(at), "2026-11-2%dT10:00:00Z", i + 1);
        struct tw_report *r =
            web_at(10 + i, at, tiers[i][0] == 'P' ? "Premium_LRS" : "StandardSSD_LRS", tiers[i],
                   128, "Standard_D4ds_v5", "running");
        put_ok(f->st, r, i % 2 == 0);
        tw_report_free(r);
    }
    char h[512];
    history(f->st, disk_id(f->st, "web-03-data0"), h, sizeof(h));
    assert_string_equal(h, "P10@2026-11-21T10:00,E10@2026-11-23T10:00,P10@2026-11-25T10:00");
    /* The other disks never changed: one row each. */
    history(f->st, disk_id(f->st, "web-03-data1"), h, sizeof(h));
    assert_string_equal(h, "P10@2026-11-21T10:00");
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history"), 3 + 3);
    /* Unchanged disks are not rewritten. */
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE last_seen_at = "
                              "'2026-11-21T10:00:00Z'"),
                     3);
}

/* A tier filled in where the history had none (an agent from before the
 * tier in use was reported, then an upgraded one) is no change; a change
 * of tier after that is one. */
static void test_tier_filled_in(void **state)
{
    struct fx *f = *state;
    const char *tiers[] = {"", "P10", "P10", "P15"};
    for (int i = 0; i < 4; i++) {
        char at[32];
        snprintf(at, sizeof(at), "2026-11-2%dT10:00:00Z", i + 1);
        struct tw_report *r =
            web_at(20 + i, at, "Premium_LRS", tiers[i], 128, "Standard_D4ds_v5", "running");
        put_ok(f->st, r, true);
        tw_report_free(r);
    }
    int64_t id = disk_id(f->st, "web-03-data0");
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM disk_sku_history WHERE disk_id = %lld",
             (long long)id);
    assert_int_equal(count(f, q), 2);
    snprintf(q, sizeof(q), "SELECT count(*) FROM disk_sku_history WHERE disk_id = %lld AND "
             "((tier IS NULL AND observed_at = '2026-11-21T10:00:00Z') OR (tier = 'P15' AND "
             "observed_at = '2026-11-24T10:00:00Z'))", (long long)id);
    assert_int_equal(count(f, q), 2);
    json_t *d = get_disk(f->st, id);
    assert_string_equal(str(d, "tier"), "P15");
    json_decref(d);
}

static void test_detach_and_identity(void **state)
{
    struct fx *f = *state;
    struct tw_report *a = load("web-03.json");
    set_id(a, 1);
    strcpy(a->created_at, "2026-11-29T10:00:00Z");
    put_ok(f->st, a, false);
    /* b: the last data disk is gone. */
    struct tw_report *b = load("web-03.json");
    set_id(b, 2);
    strcpy(b->created_at, "2026-11-29T12:00:00Z");
    b->inv.n_disks--;
    put_ok(f->st, b, true);
    struct tw_error err = {0};
    json_t *vms;
    assert_int_equal(rj_vms(f->st, &vms, &err), TW_OK);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(vms, 0), "disks")), 3);
    int64_t vm_id = json_integer_value(json_object_get(json_array_get(vms, 0), "id"));
    json_decref(vms);
    json_t *vm;
    assert_int_equal(rj_vm(f->st, vm_id, &vm, &err), TW_OK);
    assert_int_equal(json_array_size(json_object_get(vm, "disks")), 3);
    json_decref(vm);
    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.disks, 3);
    int64_t gone = count(f, "SELECT id FROM disks WHERE name = 'web-03-data2'");
    json_t *d = get_disk(f->st, gone);
    assert_string_equal(str(d, "detached_at"), "2026-11-29T12:00:00Z");
    assert_string_equal(str(d, "last_seen_at"), "2026-11-29T10:00:00Z");
    json_decref(d);

    /* A late report that still had it doesn't attach it again. */
    struct tw_report *c = load("web-03.json");
    set_id(c, 3);
    strcpy(c->created_at, "2026-11-29T11:00:00Z");
    put_ok(f->st, c, false);
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.disks, 3);

    /* A newer one does; the VM's id in other case is the same VM. */
    struct tw_report *e = load("web-03.json");
    set_id(e, 4);
    strcpy(e->created_at, "2026-11-29T13:00:00Z");
    strcpy(e->inv.vm.name, "WEB-03");
    strcpy(e->inv.vm.resource_group, "RG-Web");
    put_ok(f->st, e, false);
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.disks, 4);
    assert_int_equal(s.vms, 1);
    d = get_disk(f->st, gone);
    assert_true(json_is_null(json_object_get(d, "detached_at")));
    assert_string_equal(str(d, "last_seen_at"), "2026-11-29T13:00:00Z");
    json_decref(d);

    /* With an ARM id the VM is that id, in any case. */
    struct tw_report *x = load("sap-db-01.json");
    put_ok(f->st, x, false);
    set_id(x, 9);
    strcpy(x->created_at, "2026-11-30T10:00:00Z");
    for (char *p = x->inv.vm.resource_id; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    strcpy(x->inv.vm.name, "renamed");
    put_ok(f->st, x, false);
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.vms, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM vms WHERE name = 'renamed'"), 1);
    tw_report_free(a);
    tw_report_free(b);
    tw_report_free(c);
    tw_report_free(e);
    tw_report_free(x);
}

/* The results of disk ID as "profile:iops" in the store's order. */
static void disk_results(struct tw_store *st, int64_t id, char *out, size_t len)
{
    json_t *d = get_disk(st, id);
    json_t *rs = json_object_get(d, "results");
    assert_true(json_is_array(rs));
    out[0] = '\0';
    size_t i;
    json_t *r;
    json_array_foreach(rs, i, r) {
        assert_string_equal(str(r, "schema_version"), "tierwise.bench-result/1");
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s:%.0f", i ? "," : "", str(r, "profile"),
                 json_number_value(json_object_get(json_object_get(r, "read"), "iops")));
    }
    json_decref(d);
}

static void test_latest_per_profile(void **state)
{
    struct fx *f = *state;
    struct tw_report *a = load("sap-app-02.json");
    put_ok(f->st, a, true);
    int64_t sdc = disk_id(f->st, "sap-app-02-data0");
    int64_t sde = disk_id(f->st, "sap-app-02-data2");
    char got[512];
    disk_results(f->st, sdc, got, sizeof(got));
    char want[512];
    snprintf(want, sizeof(want), "rated-iops:%.0f,rated-throughput:%.0f", a->results[0].read.iops,
             a->results[1].read.iops);
    assert_string_equal(got, want);

    /* A later run of one profile replaces it; a late older one doesn't. */
    struct tw_report *b = load("sap-app-02.json");
    set_id(b, 20);
    strcpy(b->created_at, "2026-11-29T12:10:00Z");
    b->n_results = 1;
    strcpy(b->results[0].started_at, "2026-11-29T12:00:00Z");
    strcpy(b->results[0].id, "22222222-2222-4333-8444-000000000001");
    b->results[0].read.iops = 22222;
    put_ok(f->st, b, true);
    struct tw_report *c = load("sap-app-02.json");
    set_id(c, 21);
    strcpy(c->created_at, "2026-11-29T09:00:00Z");
    c->n_results = 1;
    strcpy(c->results[0].started_at, "2026-11-29T08:55:00Z");
    c->results[0].read.iops = 1111;
    put_ok(f->st, c, false);
    disk_results(f->st, sdc, got, sizeof(got));
    snprintf(want, sizeof(want), "rated-iops:22222,rated-throughput:%.0f", a->results[1].read.iops);
    assert_string_equal(got, want);
    disk_results(f->st, sde, got, sizeof(got));
    snprintf(want, sizeof(want), "rated-iops:%.0f", a->results[2].read.iops);
    assert_string_equal(got, want);
    /* A disk no result covered has none. */
    disk_results(f->st, disk_id(f->st, "sap-app-02-os"), got, sizeof(got));
    assert_string_equal(got, "");

    /* For compliance: the newest per (target, profile). */
    int64_t *ids;
    size_t n_ids;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm_ids(f->st, &ids, &n_ids, &err), TW_OK);
    assert_int_equal(n_ids, 1);
    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_result *res;
    size_t n;
    assert_int_equal(tw_store_vm_latest(f->st, ids[0], inv, &res, &n, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_string_equal(res[0].target.device, "dm-2");
    assert_string_equal(res[0].profile, "rated-iops");
    assert_true(res[0].read.iops == 22222);
    assert_string_equal(res[1].target.device, "dm-2");
    assert_string_equal(res[1].profile, "rated-throughput");
    assert_memory_equal(&res[1], &a->results[1], sizeof(res[1]));
    assert_string_equal(res[2].target.device, "sde");
    assert_int_equal(inv->n_disks, a->inv.n_disks);
    assert_inventory_is(inv, &b->inv);
    free(res);
    assert_int_equal(tw_store_vm_latest(f->st, 999, inv, &res, &n, &err), TW_ENOENT);
    free(inv);
    free(ids);
    tw_report_free(a);
    tw_report_free(b);
    tw_report_free(c);
}

/* tw_store_fleet_latest hands over what tw_store_vm_latest reads, VM by
 * VM in id order; a VM whose record no longer reads gets WHY instead. */
struct fleet_seen {
    struct tw_store *st;
    size_t vms, bad;
    int64_t last_id;
};

static enum tw_err fleet_check(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                               const struct tw_result *results, size_t n, const char *why)
{
    struct fleet_seen *fs = arg;
    assert_true(vm_id > fs->last_id);
    fs->last_id = vm_id;
    fs->vms++;
    struct tw_inventory *one = malloc(sizeof(*one));
    struct tw_result *res = NULL;
    size_t n1 = 0;
    struct tw_error err = {0};
    enum tw_err rc = tw_store_vm_latest(fs->st, vm_id, one, &res, &n1, &err);
    if (why) {
        fs->bad++;
        assert_int_equal(rc, TW_EPARSE);
        assert_string_equal(why, err.msg);
        assert_null(results);
    } else {
        assert_int_equal(rc, TW_OK);
        assert_int_equal(n, n1);
        assert_memory_equal(inv, one, sizeof(*one));
        if (n)
            assert_memory_equal(results, res, n * sizeof(*res));
    }
    free(res);
    free(one);
    return TW_OK;
}

static void fleet_walk(struct fx *f, size_t want_vms, size_t want_bad)
{
    struct fleet_seen fs = {f->st, 0, 0, 0};
    struct tw_error err = {0};
    assert_int_equal(tw_store_fleet_latest(f->st, fleet_check, &fs, &err), TW_OK);
    assert_int_equal(fs.vms, want_vms);
    assert_int_equal(fs.bad, want_bad);
}

/* Each result's record is kept as its own text cut from the body as sent
 * (schema 2; version 1 kept its place in the body): strings
 * holding quotes, backslashes, brackets, multi-byte characters and a
 * "results" key elsewhere don't fool it, and a body whose results can't be
 * found gets them rendered. */
static void test_records_from_body(void **state)
{
    struct fx *f = *state;
    struct tw_report *r = load("sap-app-02.json");
    struct tw_tag *t = &r->inv.vm.tags[r->inv.vm.n_tags++];
    strcpy(t->key, "results");
    strcpy(t->value, "[{\"x\\\\\"}],\"results\":[");
    strcpy(r->agent_hostname, "h\\\"]}{[ Z\u00fcrich \u20ac");
    strcpy(r->results[1].errors.first, "read \"/dev/sdc\": \\ [EIO] }");
    char *body = tw_report_to_json(r, JSON_INDENT(3));
    const struct tw_report *reps[2] = {r, NULL};
    const char *bodies[2] = {body, NULL};
    size_t lens[2] = {strlen(body), 0};
    enum tw_put_status status[2];
    struct tw_error errs[2], err = {0};
    struct tw_report *other = load("web-03.json");
    reps[1] = other;
    /* The second body spells its "results" key with an escape: the records
     * can't be cut from it and are rendered. */
    char *body2 = tw_report_to_json(other, JSON_COMPACT);
    char *at = strstr(body2, "\"results\":");
    assert_non_null(at);
    char *escaped = malloc(strlen(body2) + 8);
    memcpy(escaped, body2, (size_t)(at - body2));
    strcpy(escaped + (at - body2), "\"res\\u0075lts\":");
    strcat(escaped, at + strlen("\"results\":"));
    free(body2);
    bodies[1] = escaped;
    lens[1] = strlen(escaped);
    assert_int_equal(tw_store_put_reports(f->st, reps, bodies, lens, 2, "2026-11-30T00:00:00Z",
                                          status, errs, &err),
                     TW_OK);
    assert_int_equal(status[0], TW_PUT_STORED);
    assert_int_equal(status[1], TW_PUT_STORED);
    int64_t *ids;
    size_t n_ids;
    assert_int_equal(tw_store_vm_ids(f->st, &ids, &n_ids, &err), TW_OK);
    assert_int_equal(n_ids, 2);
    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_result *res;
    size_t n;
    assert_int_equal(tw_store_vm_latest(f->st, ids[0], inv, &res, &n, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_inventory_is(inv, &r->inv);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < r->n_results && strcmp(r->results[k].id, res[i].id) != 0)
            k++;
        assert_true(k < r->n_results);
        assert_memory_equal(&res[i], &r->results[k], sizeof(res[i]));
    }
    free(res);
    assert_int_equal(count(f, "SELECT count(*) FROM results WHERE record IS NULL"), 0);
    /* (instr is SQLite's strpos) */
    assert_int_equal(count(f, th_store_pg()
                                  ? "SELECT count(*) FROM results r JOIN reports p ON p.id = "
                                    "r.report_id WHERE r.vm_id = (SELECT min(id) FROM vms) AND "
                                    "strpos(p.body, r.record) > 0 AND r.record LIKE '{%}'"
                                  : "SELECT count(*) FROM results r JOIN reports p ON p.id = "
                                    "r.report_id WHERE r.vm_id = (SELECT min(id) FROM vms) AND "
                                    "instr(p.body, r.record) > 0 AND r.record LIKE '{%}'"),
                     3);
    assert_int_equal(tw_store_vm_latest(f->st, ids[1], inv, &res, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    free(res);
    assert_int_equal(count(f, "SELECT count(*) FROM results WHERE record LIKE '{\"schema_version\"%'"),
                     2);
    fleet_walk(f, 2, 0);
    th_sql_exec(f->path, "UPDATE results SET record = '[1]' WHERE id = "
                         "(SELECT max(id) FROM results)");
    fleet_walk(f, 2, 1);
    free(inv);
    free(ids);
    free(body);
    free(escaped);
    tw_report_free(r);
    tw_report_free(other);
}

static void expect_keys(const json_t *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!json_object_get(o, keys[i]))
            fail_msg("key %s is missing", keys[i]);
    }
    if (json_object_size(o) != n)
        fail_msg("%zu keys, expected %zu", json_object_size(o), n);
}

static void test_query_shapes(void **state)
{
    struct fx *f = *state;
    const char *names[] = {"web-03.json", "sap-db-01.json", "sap-app-02.json"};
    for (int i = 0; i < 3; i++) {
        struct tw_report *r = load(names[i]);
        put_ok(f->st, r, i == 1);
        tw_report_free(r);
    }
    struct tw_error err = {0};
    json_t *vms;
    assert_int_equal(rj_vms(f->st, &vms, &err), TW_OK);
    assert_int_equal(json_array_size(vms), 3);
    static const char *const vm_keys[] = {
        "id", "name", "resource_id", "subscription_id", "resource_group", "location", "vm_size",
        "tags", "power_state", "power_state_at", "last_report_at", "disks"};
    const char *order[] = {"sap-app-02", "sap-db-01", "web-03"};
    for (size_t i = 0; i < 3; i++) {
        json_t *vm = json_array_get(vms, i);
        expect_keys(vm, vm_keys, 12);
        assert_string_equal(str(vm, "name"), order[i]);
        assert_true(json_is_object(json_object_get(vm, "tags")));
        assert_true(json_is_integer(json_object_get(vm, "disks")));
    }
    json_t *web = json_array_get(vms, 2);
    assert_true(json_is_null(json_object_get(web, "resource_id")));
    assert_string_equal(str(web, "resource_group"), "rg-web");
    assert_string_equal(str(json_object_get(web, "tags"), "env"), "test");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(vms, 1), "disks")), 7);
    int64_t db_vm = json_integer_value(json_object_get(json_array_get(vms, 1), "id"));
    json_decref(vms);

    json_t *vm;
    assert_int_equal(rj_vm(f->st, db_vm, &vm, &err), TW_OK);
    expect_keys(vm, vm_keys, 12);
    json_t *vd = json_object_get(vm, "disks");
    assert_int_equal(json_array_size(vd), 7);
    assert_string_equal(str(json_array_get(vd, 0), "name"), "sap-db-01-os");
    json_decref(vm);
    assert_int_equal(rj_vm(f->st, 9999, &vm, &err), TW_ENOENT);
    assert_null(vm);

    json_t *disks;
    assert_int_equal(rj_disks(f->st, &disks, &err), TW_OK);
    assert_int_equal(json_array_size(disks), 5 + 7 + 4);
    static const char *const disk_keys[] = {
        "id", "vm_id", "vm_name", "name", "role", "lun", "sku", "size_gib", "tier", "caching",
        "managed_disk_id", "write_accelerator", "device", "last_seen_at"};
    size_t i;
    json_t *d;
    const char *prev_vm = "";
    json_int_t prev_lun = -2;
    json_array_foreach(disks, i, d) {
        expect_keys(d, disk_keys, 14);
        const char *vmn = str(d, "vm_name");
        json_int_t lun = json_is_null(json_object_get(d, "lun"))
                             ? -1
                             : json_integer_value(json_object_get(d, "lun"));
        /* By VM name, then LUN (the OS disk, with none, first). */
        assert_true(strcmp(prev_vm, vmn) <= 0);
        if (strcmp(prev_vm, vmn) == 0)
            assert_true(lun > prev_lun);
        prev_vm = vmn;
        prev_lun = lun;
        assert_true(json_is_boolean(json_object_get(d, "write_accelerator")));
    }
    assert_string_equal(str(json_array_get(disks, 0), "role"), "os");
    assert_string_equal(str(json_array_get(disks, 0), "device"), "/dev/sda");
    assert_string_equal(str(json_array_get(disks, 0), "caching"), "ReadWrite");
    json_decref(disks);

    json_t *one = get_disk(f->st, disk_id(f->st, "sap-db-01-data1"));
    static const char *const one_keys[] = {
        "id", "vm_id", "vm_name", "name", "role", "lun", "sku", "size_gib", "tier", "caching",
        "managed_disk_id", "write_accelerator", "device", "last_seen_at", "detached_at",
        "sku_history", "results"};
    expect_keys(one, one_keys, 17);
    assert_int_equal(json_array_size(json_object_get(one, "sku_history")), 1);
    json_t *rs = json_object_get(one, "results");
    assert_int_equal(json_array_size(rs), 1);
    /* Stored from the body as sent: the record is the agent's text. */
    assert_string_equal(str(json_array_get(rs, 0), "id"), "6c1f0f5e-2d7b-4c47-9a51-3e0c8d2f7a01");
    json_decref(one);
    assert_int_equal(rj_disk(f->st, 9999, &one, &err), TW_ENOENT);

    int64_t *ids;
    size_t n;
    assert_int_equal(tw_store_vm_ids(f->st, &ids, &n, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_true(ids[0] < ids[1] && ids[1] < ids[2]);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_and_repeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_with_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sku_history_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tier_filled_in, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach_and_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latest_per_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_from_body, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
