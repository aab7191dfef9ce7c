/* test_migrate5.c - migration 5 in place on a copy of a real version-4
 * database (tests/fixtures/store/v4.db, made by the build before it): the
 * columns and tables it adds, exactly, with every VM keeping its report and
 * the reads answering what that build answered (v4-answers/).
 *
 * Under PostgreSQL (TW_TEST_STORE=pg) the fixture is migrated by SQLite
 * and its rows loaded into a PostgreSQL store (th_store_fixture): the
 * columns migration 5 added to the file are SQLite's and skipped; what the
 * store reads afterwards is checked on PostgreSQL. */
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
    th_store_fixture(f->dir, "store/v4.db", "v4.db", f->path, sizeof(f->path));
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
        fail_msg("open: %s", err.msg);
}

/* The columns of TABLE, in order, comma-separated, as "name type notnull". */
static void columns(const struct fx *f, const char *table, char *out, size_t len)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT name, type, \"notnull\" FROM pragma_table_info('%s')",
             table);
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    out[0] = '\0';
    size_t k = 0;
    while (sqlite3_step(q) == SQLITE_ROW)
        k += (size_t)snprintf(out + k, len - k, "%s%s %s %d", k ? "," : "",
                              (const char *)sqlite3_column_text(q, 0),
                              (const char *)sqlite3_column_text(q, 1), sqlite3_column_int(q, 2));
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static void test_from_version_4(void **state)
{
    struct fx *f = *state;
    const bool pg = th_store_pg();
    if (!pg)
        assert_int_equal(th_store_version(f->path), 4);
    open_ok(f);
    struct tw_error err = {0};
    assert_int_equal(tw_store_schema_version(), 5);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
    if (pg) {
        /* The one open drift per disk, as PostgreSQL spells the index. */
        assert_int_equal(count(f, "SELECT count(*) FROM pg_indexes WHERE indexname = "
                                  "'drift_open' AND indexdef LIKE 'CREATE UNIQUE INDEX%' AND "
                                  "indexdef LIKE '%WHERE (ended_at IS NULL)'"),
                         1);
        goto rows;
    }

    char cols[2048];
    columns(f, "disk_originals", cols, sizeof(cols));
    assert_string_equal(cols, "disk_id INTEGER 0,sku TEXT 1,tier TEXT 1,action_id INTEGER 0,"
                              "set_at TEXT 1");
    columns(f, "drift", cols, sizeof(cols));
    assert_string_equal(cols, "id INTEGER 0,disk_id INTEGER 1,vm_id INTEGER 1,sku TEXT 1,"
                              "required_sku TEXT 1,policy TEXT 1,since TEXT 1,since_ms INTEGER 1,"
                              "seen_at TEXT 1,ended_at TEXT 0,ended_ms INTEGER 0");
    assert_int_equal(count(f, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                              "name = 'drift_open' AND sql LIKE '%WHERE ended_at IS NULL'"),
                     1);
    /* The new columns, at the end of their tables. */
    columns(f, "actions", cols, sizeof(cols));
    assert_non_null(strstr(cols, ",vm_id INTEGER 0,policy TEXT 0,reason TEXT 0,saving TEXT 0,"
                                 "currency TEXT 0,updated_at TEXT 0"));
    columns(f, "vms", cols, sizeof(cols));
    assert_non_null(strstr(cols, ",arm_seen_at TEXT 0,arm_seen_ms INTEGER 0"));
    columns(f, "disks", cols, sizeof(cols));
    assert_non_null(strstr(cols, ",last_ownership_update TEXT 0"));

rows:;

    /* Everything that was there is there: every VM keeps its report, no
     * VM was seen by ARM, nothing was planned. */
    assert_int_equal(count(f, "SELECT count(*) FROM vms WHERE last_report_id <> '' AND "
                              "arm_seen_at IS NULL"),
                     3);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE last_ownership_update IS NULL"),
                     16);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history"), 17);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states"), 4);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_originals"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM drift"), 0);

    /* The VMs read as that build answered them. */
    size_t len;
    char *body = th_fixture("store/v4-answers/vms.json", &len);
    json_t *want = json_loadb(body, len, 0, NULL);
    free(body);
    assert_non_null(want);
    json_t *arr = json_object_get(want, "vms");
    struct tw_store_vm_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(tw_store_vms(f->st, &rows, &n, &err), TW_OK);
    assert_int_equal(n, json_array_size(arr));
    for (size_t i = 0; i < n; i++) {
        json_t *w = json_array_get(arr, i);
        assert_int_equal(rows[i].id, json_integer_value(json_object_get(w, "id")));
        assert_string_equal(rows[i].name, json_string_value(json_object_get(w, "name")));
        assert_string_equal(rows[i].vm_size, json_string_value(json_object_get(w, "vm_size")));
        assert_string_equal(rows[i].last_report_at,
                            json_string_value(json_object_get(w, "last_report_at")));
        assert_int_equal(rows[i].n_disks, json_integer_value(json_object_get(w, "disks")));
        json_t *ps = json_object_get(w, "power_state");
        assert_string_equal(rows[i].power_state, json_is_string(ps) ? json_string_value(ps) : "");
    }
    tw_store_vm_rows_free(rows, n);
    json_decref(want);

    /* The disks too: 16 attached, each last seen where that build said. */
    body = th_fixture("store/v4-answers/disks.json", &len);
    want = json_loadb(body, len, 0, NULL);
    free(body);
    assert_non_null(want);
    arr = json_object_get(want, "disks");
    struct tw_store_disk_row *disks = NULL;
    assert_int_equal(tw_store_disks(f->st, &disks, &n, &err), TW_OK);
    assert_int_equal(n, 16);
    assert_int_equal(n, json_array_size(arr));
    for (size_t i = 0; i < n; i++) {
        json_t *w = json_array_get(arr, i);
        assert_int_equal(disks[i].id, json_integer_value(json_object_get(w, "id")));
        assert_string_equal(disks[i].disk.sku, json_string_value(json_object_get(w, "sku")));
        assert_string_equal(disks[i].last_seen_at,
                            json_string_value(json_object_get(w, "last_seen_at")));
    }
    free(disks);
    json_decref(want);

    /* The savings walk still sees every attached disk, none with an
     * original SKU. */
    struct tw_store_sv_cursor *c = NULL;
    assert_int_equal(tw_store_savings_open(f->st, 0, INT64_MAX, &c, &err), TW_OK);
    size_t seen = 0;
    for (;;) {
        struct tw_store_sv_vm vm;
        bool done = false;
        assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
        if (done)
            break;
        for (size_t k = 0; k < vm.n_disks; k++)
            assert_string_equal(vm.disks[k].original_sku, "");
        seen += vm.n_disks;
    }
    tw_store_savings_close(c);
    assert_int_equal(seen, 16);

    /* A second open changes nothing. */
    tw_store_close(f->st);
    f->st = NULL;
    open_ok(f);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 3);
}

static void sql(const struct fx *f, const char *text)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", text, msg);
    sqlite3_close(db);
}

/* An action a version-4 store holds comes out with its disk's VM and the
 * time of its last logged move (or its request, never moved). */
static void test_actions_of_version_4(void **state)
{
    struct fx *f = *state;
    if (th_store_pg())
        skip(); /* a SQLite file's migration */
    sql(f, "INSERT INTO actions(id, disk_id, kind, from_sku, to_sku, state, requested_at, "
           "dry_run) VALUES (1, 3, 'downgrade', 'Premium_LRS', 'StandardSSD_LRS', 'checked', "
           "'2026-12-05T19:00:00.000Z', 0), (2, NULL, 'deallocate', NULL, NULL, 'planned', "
           "'2026-12-05T19:01:00.000Z', 1);"
           "INSERT INTO action_transitions(action_id, from_state, to_state, at, owner) VALUES "
           "(1, 'planned', 'checked', '2026-12-05T19:05:00.000Z', 'exec');");
    open_ok(f);
    struct tw_error err = {0};
    struct tw_store_action_row r;
    assert_int_equal(tw_store_action_get(f->st, 1, &r, &err), TW_OK);
    assert_int_equal(r.vm_id, 1); /* disk 3 is sap-db-01's */
    assert_string_equal(r.vm, "sap-db-01");
    assert_string_equal(r.updated_at, "2026-12-05T19:05:00.000Z");
    assert_string_equal(r.state, "checked");
    free(r.operation_url);
    assert_int_equal(tw_store_action_get(f->st, 2, &r, &err), TW_OK);
    assert_int_equal(r.vm_id, 0);
    assert_string_equal(r.updated_at, "2026-12-05T19:01:00.000Z");
    free(r.operation_url);
    struct tw_store_action_move_row *m;
    size_t n;
    assert_int_equal(tw_store_action_moves(f->st, 1, &m, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    free(m);
    assert_int_equal(tw_store_action_moves(f->st, 2, &m, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_from_version_4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions_of_version_4, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
