/* test_savings.c - schema 4 on a copy of a real version-3 database
 * (tests/fixtures/store/v3.db, made by the build before it): the disk
 * attributes it adds, unknown for every disk, and the store's answers as
 * that build gave them (v3-answers/); the attributes an ARM sync records;
 * the savings walk over the fleet VM by VM with its power states and SKU
 * changes in a span. */
#include "testhelp.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
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
    th_store_fixture(f->dir, "store/v3.db", "v3.db", f->path, sizeof(f->path));
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

static long long count(const struct fx *f, const char *sql)
{
    return th_sql_int(f->path, sql);
}

static void open_ok(struct fx *f)
{
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static json_t *answer(const char *name)
{
    size_t len;
    char rel[128];
    snprintf(rel, sizeof(rel), "store/v3-answers/%s", name);
    char *buf = th_fixture(rel, &len);
    json_t *j = json_loadb(buf, len, 0, NULL);
    free(buf);
    assert_non_null(j);
    return j;
}

static void test_from_version_3(void **state)
{
    struct fx *f = *state;
    /* (PostgreSQL: the fixture's rows, migrated by SQLite, loaded) */
    if (!th_store_pg())
        assert_int_equal(th_store_version(f->path), 3);
    open_ok(f);
    struct tw_error err = {0};
    assert_int_equal(tw_store_schema_version(), 5);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
    /* Every disk's attributes unknown: no ARM sync has recorded them. */
    assert_int_equal(count(f, "SELECT count(*) FROM disks"), 16);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE max_shares IS NULL AND "
                              "bursting IS NULL AND disk_state IS NULL AND "
                              "attrs_observed_ms IS NULL"),
                     16);

    /* The VMs and disks as that build answered them. */
    json_t *vms = answer("vms.json");
    struct tw_store_vm_row *rows;
    size_t n;
    assert_int_equal(tw_store_vms(f->st, &rows, &n, &err), TW_OK);
    assert_int_equal(n, json_array_size(json_object_get(vms, "vms")));
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(json_object_get(vms, "vms"), i);
        assert_int_equal(rows[i].id, json_integer_value(json_object_get(v, "id")));
        assert_string_equal(rows[i].name, json_string_value(json_object_get(v, "name")));
        assert_string_equal(rows[i].vm_size, json_string_value(json_object_get(v, "vm_size")));
        assert_string_equal(rows[i].location,
                            json_string_value(json_object_get(v, "location")));
        json_t *ps = json_object_get(v, "power_state");
        assert_string_equal(rows[i].power_state, json_is_string(ps) ? json_string_value(ps) : "");
    }
    tw_store_vm_rows_free(rows, n);
    json_decref(vms);
    json_t *disks = answer("disks.json");
    struct tw_store_disk_row *d;
    assert_int_equal(tw_store_disks(f->st, &d, &n, &err), TW_OK);
    assert_int_equal(n, json_array_size(json_object_get(disks, "disks")));
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(json_object_get(disks, "disks"), i);
        assert_int_equal(d[i].id, json_integer_value(json_object_get(v, "id")));
        assert_string_equal(d[i].disk.name, json_string_value(json_object_get(v, "name")));
        assert_string_equal(d[i].disk.sku, json_string_value(json_object_get(v, "sku")));
        assert_int_equal(d[i].disk.size_gib, json_integer_value(json_object_get(v, "size_gib")));
        json_t *t = json_object_get(v, "tier");
        assert_string_equal(d[i].disk.tier, json_is_string(t) ? json_string_value(t) : "");
        assert_string_equal(d[i].last_seen_at,
                            json_string_value(json_object_get(v, "last_seen_at")));
    }
    free(d);
    json_decref(disks);
    /* VM 1 and disk 3 (its SKU history, its results) as that build answered. */
    json_t *v1 = answer("vms-1.json");
    struct tw_store_vm_row vr;
    assert_int_equal(tw_store_vm(f->st, 1, &vr, &err), TW_OK);
    assert_string_equal(vr.resource_id, json_string_value(json_object_get(v1, "resource_id")));
    assert_string_equal(vr.power_state_at,
                        json_string_value(json_object_get(v1, "power_state_at")));
    assert_string_equal(vr.last_report_at,
                        json_string_value(json_object_get(v1, "last_report_at")));
    assert_int_equal(vr.n_tags, json_object_size(json_object_get(v1, "tags")));
    free(vr.tags);
    json_decref(v1);
    json_t *d3 = answer("disks-3.json");
    struct tw_store_sku_hist_row *h;
    assert_int_equal(tw_store_disk_history(f->st, 3, &h, &n, &err), TW_OK);
    json_t *hist = json_object_get(d3, "sku_history");
    assert_int_equal(n, json_array_size(hist));
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(hist, i);
        assert_string_equal(h[i].observed_at, json_string_value(json_object_get(e, "observed_at")));
        assert_string_equal(h[i].sku, json_string_value(json_object_get(e, "sku")));
        assert_string_equal(h[i].tier, json_string_value(json_object_get(e, "tier")));
        assert_int_equal(h[i].size_gib, json_integer_value(json_object_get(e, "size_gib")));
    }
    free(h);
    struct tw_store_result_rec *recs;
    assert_int_equal(tw_store_disk_results(f->st, 3, &recs, &n, &err), TW_OK);
    assert_int_equal(n, json_array_size(json_object_get(d3, "results")));
    tw_store_result_recs_free(recs, n);
    json_decref(d3);
    /* A second open changes nothing. */
    tw_store_close(f->st);
    f->st = NULL;
    open_ok(f);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE max_shares IS NULL"), 16);
}

static void test_attrs_observe(void **state)
{
    struct fx *f = *state;
    open_ok(f);
    struct tw_error err = {0};
    struct tw_store_disk_attrs a = {.max_shares = 2, .bursting = TW_TRI_YES};
    snprintf(a.disk_state, sizeof(a.disk_state), "Attached");
    bool applied = false;
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &a, "2026-12-01T10:00:00Z",
                                                 TW_OBS_ARM, &applied, &err),
                     TW_OK);
    assert_true(applied);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE id = 6 AND max_shares = 2 AND "
                              "bursting = 1 AND disk_state = 'Attached' AND "
                              "attrs_source = 'arm'"),
                     1);
    /* An older observation arriving late changes nothing. */
    struct tw_store_disk_attrs old = {.max_shares = 1, .bursting = TW_TRI_NO};
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &old, "2026-12-01T09:00:00Z",
                                                 TW_OBS_ARM, &applied, &err),
                     TW_OK);
    assert_false(applied);
    assert_int_equal(count(f, "SELECT max_shares FROM disks WHERE id = 6"), 2);
    /* A newer one with nothing known makes them unknown again. */
    struct tw_store_disk_attrs none = {0};
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &none, "2026-12-01T11:00:00Z",
                                                 TW_OBS_ARM, &applied, &err),
                     TW_OK);
    assert_true(applied);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE id = 6 AND max_shares IS NULL "
                              "AND bursting IS NULL AND disk_state IS NULL"),
                     1);
    /* Refusals. */
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 999, &a, "2026-12-01T10:00:00Z",
                                                 TW_OBS_ARM, &applied, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "999"));
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &a, "yesterday", TW_OBS_ARM,
                                                 &applied, &err),
                     TW_EPARSE);
    assert_non_null(strstr(err.msg, "yesterday"));
    struct tw_store_disk_attrs neg = {.max_shares = -1};
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &neg, "2026-12-01T10:00:00Z",
                                                 TW_OBS_ARM, &applied, &err),
                     TW_EINVAL);
    assert_false(applied);
}

static const struct tw_store_sv_disk *disk_named(const struct tw_store_sv_vm *vm,
                                                 const char *name)
{
    for (size_t i = 0; i < vm->n_disks; i++)
        if (strcmp(vm->disks[i].name, name) == 0)
            return &vm->disks[i];
    fail_msg("no disk %s on %s", name, vm->name);
    return NULL;
}

static void test_walk(void **state)
{
    struct fx *f = *state;
    open_ok(f);
    struct tw_error err = {0};
    /* sap-db-01 (VM 1): running from 11-29 10:05, deallocated at 12-01 09:00
     * (the fixture); more states through ARM. */
    assert_int_equal(tw_store_power_observe(f->st, 1, "running", "2026-12-01T18:00:00Z",
                                            TW_OBS_ARM, &err),
                     TW_OK);
    assert_int_equal(tw_store_power_observe(f->st, 1, "deallocated", "2026-12-05T20:00:00Z",
                                            TW_OBS_ARM, &err),
                     TW_OK);
    /* Disk 3 went Premium_LRS P40 -> StandardSSD_LRS E40 at 12-01 09:00 (the
     * late report); back to Premium through ARM at 12-01 18:00; a resize
     * alone is no change. */
    bool added;
    assert_int_equal(tw_store_sku_observe(f->st, 3, "Premium_LRS", "P40", 2048,
                                          "2026-12-01T18:00:00Z", TW_OBS_ARM, &added, &err),
                     TW_OK);
    assert_true(added);
    assert_int_equal(tw_store_sku_observe(f->st, 3, "Premium_LRS", "P40", 4096,
                                          "2026-12-02T18:00:00Z", TW_OBS_ARM, &added, &err),
                     TW_OK);
    assert_true(added);
    struct tw_store_disk_attrs a = {.max_shares = 3, .bursting = TW_TRI_NO};
    assert_int_equal(tw_store_disk_attrs_observe(f->st, 6, &a, "2026-12-01T10:00:00Z",
                                                 TW_OBS_ARM, NULL, &err),
                     TW_OK);

    /* Span [12-01 00:00, 12-03 00:00). */
    struct tw_store_sv_cursor *c;
    assert_int_equal(tw_store_savings_open(f->st, 1796083200000LL, 1796256000000LL, &c, &err),
                     TW_OK);
    struct tw_store_sv_vm vm;
    bool done;
    int64_t ids[8];
    size_t nvm = 0, ndisks = 0;
    for (;;) {
        assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
        if (done)
            break;
        assert_true(nvm < 8);
        ids[nvm++] = vm.id;
        ndisks += vm.n_disks;
        if (vm.id == 1) {
            assert_string_equal(vm.name, "sap-db-01");
            assert_string_equal(vm.location, "westeurope");
            assert_int_equal(vm.n_tags, 1);
            assert_string_equal(vm.tags[0].key, "env");
            assert_string_equal(vm.tags[0].value, "prod");
            assert_string_equal(vm.power_state, "deallocated");
            /* In force at the start (running since 11-29), then the two in
             * the span; 12-05 is past it. */
            assert_int_equal(vm.n_power, 3);
            assert_int_equal(vm.power[0].at_ms, 1795946700000LL);
            assert_string_equal(vm.power[0].state, "running");
            assert_string_equal(vm.power[1].state, "deallocated");
            assert_int_equal(vm.power[1].at_ms, 1796115600000LL);
            assert_string_equal(vm.power[2].state, "running");
            /* Disk 3's two SKU changes, not its first observation nor the
             * resize. */
            assert_int_equal(vm.n_changes, 2);
            assert_int_equal(vm.changes[0].disk_id, 3);
            assert_int_equal(vm.changes[0].at_ms, 1796115600000LL);
            assert_string_equal(vm.changes[0].sku, "StandardSSD_LRS");
            assert_string_equal(vm.changes[1].sku, "Premium_LRS");
            assert_int_equal(vm.changes[1].at_ms, 1796148000000LL);
            /* By position: the OS disk first. */
            assert_int_equal(vm.n_disks, 7);
            assert_string_equal(vm.disks[0].name, "sap-db-01-os");
            assert_int_equal(vm.disks[0].role, TW_DISK_OS);
            assert_int_equal(vm.disks[0].lun, -1);
            const struct tw_store_sv_disk *sh = disk_named(&vm, "sap-db-01-shared");
            assert_int_equal(sh->attrs.max_shares, 3);
            assert_int_equal(sh->attrs.bursting, TW_TRI_NO);
            const struct tw_store_sv_disk *v2 = disk_named(&vm, "sap-db-01-v2");
            assert_string_equal(v2->sku, "PremiumV2_LRS");
            assert_string_equal(v2->tier, "");
            assert_int_equal(v2->attrs.max_shares, 0);
            assert_int_equal(v2->attrs.bursting, TW_TRI_UNKNOWN);
        } else {
            assert_int_equal(vm.n_changes, 0);
            /* Running since 11-29: the state in force at the start only. */
            assert_int_equal(vm.n_power, 1);
        }
    }
    tw_store_savings_close(c);
    assert_int_equal(nvm, 3);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], 2);
    assert_int_equal(ids[2], 3);
    assert_int_equal(ndisks, 16);

    /* A span starting after the changes sees none of them, and the state in
     * force then (running since 12-01 18:00). */
    assert_int_equal(tw_store_savings_open(f->st, 1796256000000LL, 1796342400000LL, &c, &err),
                     TW_OK);
    assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
    assert_false(done);
    assert_int_equal(vm.id, 1);
    assert_int_equal(vm.n_changes, 0);
    assert_int_equal(vm.n_power, 1);
    assert_string_equal(vm.power[0].state, "running");
    tw_store_savings_close(c);
    /* A span that ends before it starts is refused. */
    assert_int_equal(tw_store_savings_open(f->st, 10, 5, &c, &err), TW_EINVAL);
    assert_null(c);
}

/* (the oracle runs on SQLite: on the store's own file, or under
 * PostgreSQL on the fixture's migrated copy, given the same rows) */
static void exec_ok(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
}

/* The walk's changes as the correlated subquery it replaced gave them: a
 * row of the span whose row before it (by observed_ms, then id) has
 * another SKU (COLLATE NOCASE) or tier. */
static const char *const changes_oracle_sql =
    "SELECT h.disk_id, h.observed_ms, h.sku, coalesce(h.tier, '') FROM disk_sku_history h "
    "JOIN disks d ON d.id = h.disk_id WHERE d.vm_id = ?1 AND d.detached_ms IS NULL AND "
    "h.observed_ms >= ?2 AND h.observed_ms < ?3 AND EXISTS (SELECT 1 FROM (SELECT p.sku, p.tier "
    "FROM disk_sku_history p WHERE p.disk_id = h.disk_id AND (p.observed_ms < h.observed_ms OR "
    "(p.observed_ms = h.observed_ms AND p.id < h.id)) ORDER BY p.observed_ms DESC, p.id DESC "
    "LIMIT 1) x WHERE x.sku <> h.sku COLLATE NOCASE OR coalesce(x.tier, '') <> "
    "coalesce(h.tier, '')) ORDER BY h.disk_id, h.observed_ms, h.id";

static void change_is(const struct tw_store_sv_change *c, int64_t disk, int64_t at,
                      const char *sku, const char *tier)
{
    assert_int_equal(c->disk_id, disk);
    assert_int_equal(c->at_ms, at);
    assert_string_equal(c->sku, sku);
    assert_string_equal(c->tier, tier);
}

/* Each span row against the right predecessor: the row before it by
 * observed_ms then id (two rows at one instant by id, whatever the order
 * they came in; a later id observed earlier before it), else the disk's
 * last row before the span (of two at one instant, the later id); a
 * disk's first row ever is no change; a case-only SKU difference is none,
 * a tier-only one is; a NULL tier is "".  And the walk's changes are the
 * old correlated subquery's, row for row, for every VM and several spans. */
static void test_walk_predecessor(void **state)
{
    struct fx *f = *state;
    open_ok(f);
    struct tw_error err = {0};
    const int64_t S = 1796083200000LL, E = 1796256000000LL, H = 3600000LL;
    char oracle_db[4200];
    if (th_store_pg())
        snprintf(oracle_db, sizeof(oracle_db), "%s/v3.db.sqlite", f->dir);
    else
        snprintf(oracle_db, sizeof(oracle_db), "%s", f->path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(oracle_db, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char sql[4096];
    snprintf(sql, sizeof(sql),
             "INSERT INTO disk_sku_history(id, disk_id, observed_at, observed_ms, sku, tier, "
             "size_gib, source) VALUES "
             /* disk 8 (Premium_LRS P10 before): case only, then tier only;
              * one at the span's end is past it. */
             "(100, 8, 'x', %lld, 'premium_lrs', 'P10', 128, 'arm'),"
             "(101, 8, 'x', %lld, 'Premium_LRS', 'P15', 256, 'arm'),"
             "(111, 8, 'x', %lld, 'StandardSSD_LRS', 'E15', 256, 'arm'),"
             /* disk 9 (Premium_LRS P30 before): two rows at one instant,
              * the later id first in: 102 (no change) then 103. */
             "(103, 9, 'x', %lld, 'StandardSSD_LRS', 'E30', 1024, 'arm'),"
             "(102, 9, 'x', %lld, 'Premium_LRS', 'P30', 1024, 'arm'),"
             /* disk 10 (Premium_LRS P30): changed before the span, the
              * same in it: no change. */
             "(104, 10, 'x', %lld, 'StandardSSD_LRS', 'E30', 1024, 'arm'),"
             "(105, 10, 'x', %lld, 'StandardSSD_LRS', 'E30', 1024, 'arm'),"
             /* disk 11 (Premium_LRS P10): its predecessor before the span. */
             "(106, 11, 'x', %lld, 'StandardSSD_LRS', 'E10', 128, 'arm'),"
             /* disk 12 (StandardSSD_LRS E15): by time before id. */
             "(99, 12, 'x', %lld, 'StandardSSD_LRS', 'E20', 512, 'arm'),"
             "(107, 12, 'x', %lld, 'standardssd_lrs', 'E15', 256, 'arm'),"
             /* disk 13 (StandardSSD_LRS E6): a change at the span's start. */
             "(112, 13, 'x', %lld, 'Premium_LRS', 'E6', 64, 'arm'),"
             /* disk 14 (Premium_LRS P10, id 14): a later id at that instant
              * is the last row before the span. */
             "(113, 14, 'x', 1795953900000, 'StandardSSD_LRS', 'E10', 128, 'arm'),"
             "(114, 14, 'x', %lld, 'Premium_LRS', 'P10', 128, 'arm'),"
             /* disk 16: no history but in the span: its first row is no
              * change, a NULL tier after P10 is, '' after NULL is not. */
             "(108, 16, 'x', %lld, 'Premium_LRS', 'P10', 128, 'arm'),"
             "(109, 16, 'x', %lld, 'Premium_LRS', NULL, 128, 'arm'),"
             "(110, 16, 'x', %lld, 'Premium_LRS', '', 128, 'arm');",
             (long long)(S + H), (long long)(S + 2 * H), (long long)E, (long long)(S + 3 * H),
             (long long)(S + 3 * H), (long long)(S - H), (long long)(S + H), (long long)(S + H),
             (long long)(S + 5 * H), (long long)(S + 4 * H), (long long)S, (long long)(S + H),
             (long long)(S + H), (long long)(S + 2 * H), (long long)(S + 3 * H));
    exec_ok(db, "DELETE FROM disk_sku_history WHERE disk_id = 16");
    exec_ok(db, sql);
    if (th_store_pg()) {
        th_sql_exec(f->path, "DELETE FROM disk_sku_history WHERE disk_id = 16");
        th_sql_exec(f->path, sql);
    }

    struct tw_store_sv_cursor *c;
    struct tw_store_sv_vm vm;
    bool done;
    assert_int_equal(tw_store_savings_open(f->st, S, E, &c, &err), TW_OK);
    size_t nvm = 0;
    for (;;) {
        assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
        if (done)
            break;
        nvm++;
        if (vm.id == 1) {
            assert_int_equal(vm.n_changes, 1);
            change_is(&vm.changes[0], 3, 1796115600000LL, "StandardSSD_LRS", "E40");
        } else if (vm.id == 2) {
            assert_int_equal(vm.n_changes, 4);
            change_is(&vm.changes[0], 8, S + 2 * H, "Premium_LRS", "P15");
            change_is(&vm.changes[1], 9, S + 3 * H, "StandardSSD_LRS", "E30");
            change_is(&vm.changes[2], 11, S + H, "StandardSSD_LRS", "E10");
            change_is(&vm.changes[3], 12, S + 5 * H, "StandardSSD_LRS", "E20");
        } else {
            assert_int_equal(vm.id, 3);
            assert_int_equal(vm.n_changes, 3);
            change_is(&vm.changes[0], 13, S, "Premium_LRS", "E6");
            change_is(&vm.changes[1], 14, S + H, "Premium_LRS", "P10");
            change_is(&vm.changes[2], 16, S + 2 * H, "Premium_LRS", "");
        }
    }
    tw_store_savings_close(c);
    assert_int_equal(nvm, 3);

    /* Against the old statement: spans starting before, at, inside and
     * after the rows; one ending inside them. */
    const int64_t spans[][2] = {{S, E},         {S + H, E},     {S + 3 * H, E},
                                {S - 2 * H, E}, {S, S + 3 * H}, {S + H + 1, S + 4 * H},
                                {0, E + H},     {E, E + H},     {E + H, E + 2 * H}};
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, changes_oracle_sql, -1, &q, NULL), SQLITE_OK);
    for (size_t k = 0; k < sizeof(spans) / sizeof(spans[0]); k++) {
        assert_int_equal(tw_store_savings_open(f->st, spans[k][0], spans[k][1], &c, &err),
                         TW_OK);
        for (;;) {
            assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
            if (done)
                break;
            sqlite3_bind_int64(q, 1, vm.id);
            sqlite3_bind_int64(q, 2, spans[k][0]);
            sqlite3_bind_int64(q, 3, spans[k][1]);
            size_t i = 0;
            while (sqlite3_step(q) == SQLITE_ROW) {
                assert_true(i < vm.n_changes);
                change_is(&vm.changes[i], sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                          (const char *)sqlite3_column_text(q, 2),
                          (const char *)sqlite3_column_text(q, 3));
                i++;
            }
            assert_int_equal(i, vm.n_changes);
            sqlite3_reset(q);
        }
        tw_store_savings_close(c);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_from_version_3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_attrs_observe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_predecessor, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
