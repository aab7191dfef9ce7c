/* test_migrate.c - migrations 2 and 3 in place on copies of real version-1
 * and version-2 databases (tests/fixtures/store/v1.db and v2.db, each made
 * by the build before its migration), the
 * price history it brings, and actions moved by compare-and-set: two
 * handles can never both move the same action to "sent".
 *
 * Under PostgreSQL (TW_TEST_STORE=pg) each fixture is migrated by SQLite
 * and its rows loaded into a PostgreSQL store (th_store_fixture): what
 * the migrations did to the file is SQLite's and skipped; what the store
 * reads and writes afterwards is checked on PostgreSQL. */
#include "testhelp.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_fixture(f->dir, "store/v1.db", "v1.db", f->path, sizeof(f->path));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static long long count(const struct fx *f, const char *sql)
{
    return th_sql_int(f->path, sql);
}

/* VM VM_ID's last report's body as stored (malloc'd): read from the
 * SQLite file (under PostgreSQL, the fixture's migrated copy, whose rows
 * PostgreSQL holds). */
static char *last_body(const struct fx *f, int64_t vm_id, size_t *len)
{
    char path[4200];
    if (th_store_pg())
        snprintf(path, sizeof(path), "%s/v1.db.sqlite", f->dir);
    else
        snprintf(path, sizeof(path), "%s", f->path);
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT p.body FROM vms v JOIN reports p ON p.id = "
                                            "v.last_report_id WHERE v.id = ?1",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(q, 1, vm_id);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    *len = (size_t)sqlite3_column_bytes(q, 0);
    char *b = malloc(*len + 1);
    assert_non_null(b);
    memcpy(b, sqlite3_column_text(q, 0), *len);
    b[*len] = '\0';
    sqlite3_finalize(q);
    sqlite3_close(db);
    return b;
}

static struct tw_store *open_ok(const char *path)
{
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(path, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return st;
}

static void test_from_version_1(void **state)
{
    struct fx *f = *state;
    const bool pg = th_store_pg();
    if (!pg)
        assert_int_equal(th_store_version(f->path), 1);
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    assert_int_equal(tw_store_schema_version(), 5);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(tw_store_check(st, &err), TW_OK);

    /* Everything of version 1 is there. */
    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(st, &s, &err), TW_OK);
    assert_int_equal(s.reports, 4);
    assert_int_equal(s.vms, 3);
    assert_int_equal(s.disks, 16);
    assert_int_equal(s.results, 7);
    struct tw_store_token_row *tokens;
    size_t n;
    assert_int_equal(tw_store_token_list(st, &tokens, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(tokens[1].name, "fixture-reader");
    free(tokens);

    /* Histories carry their source; records are their own text now. */
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history WHERE source = 'agent' "
                              "AND report_id IS NOT NULL"),
                     17);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states WHERE source = 'agent'"), 4);
    if (!pg) /* (json_valid is SQLite's; PostgreSQL has the rows SQLite migrated) */
        assert_int_equal(count(f, "SELECT count(*) FROM results WHERE record IS NULL OR "
                                  "record_at IS NOT NULL OR json_valid(record) = 0"),
                         0);
    /* Each attached disk has its place in its VM's last inventory, so the
     * inventory compliance reads from the rows is the one the last report
     * holds: every disk, in its order, every field. */
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE detached_ms IS NULL AND "
                              "position IS NULL"),
                     0);
    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_report *rep = tw_report_new();
    assert_non_null(inv);
    assert_non_null(rep);
    for (int64_t vm = 1; vm <= 3; vm++) {
        size_t blen;
        char *body = last_body(f, vm, &blen);
        assert_int_equal(tw_report_from_json(body, blen, rep, &err), TW_OK);
        free(body);
        struct tw_result *res;
        size_t nres;
        assert_int_equal(tw_store_vm_latest(st, vm, inv, &res, &nres, &err), TW_OK);
        free(res);
        assert_string_equal(inv->vm.name, rep->inv.vm.name);
        assert_string_equal(inv->vm.resource_id, rep->inv.vm.resource_id);
        assert_string_equal(inv->vm.vm_size, rep->inv.vm.vm_size);
        assert_string_equal(inv->vm.location, rep->inv.vm.location);
        assert_int_equal(inv->vm.n_tags, rep->inv.vm.n_tags);
        assert_int_equal(inv->n_disks, rep->inv.n_disks);
        assert_memory_equal(inv->disks, rep->inv.disks, inv->n_disks * sizeof(inv->disks[0]));
    }
    tw_report_free(rep);
    free(inv);
    struct tw_store_result_rec *recs;
    assert_int_equal(tw_store_disk_results(st, 3, &recs, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_non_null(strstr(recs[0].record, "\"6c1f0f5e-2d7b-4c47-9a51-3e0c8d2f7a01\""));
    assert_string_equal(recs[0].profile, "rated-iops");
    tw_store_result_recs_free(recs, n);
    struct tw_store_sku_hist_row *h;
    assert_int_equal(tw_store_disk_history(st, 3, &h, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(h[0].sku, "Premium_LRS");
    assert_string_equal(h[1].tier, "E40");
    free(h);

    /* The version-1 price book is the latest one, and new ones add to it. */
    char *items = NULL, source[256], fetched[40];
    size_t len;
    assert_int_equal(tw_store_pricebook_get(st, "uksouth", "GBP", &items, &len, source,
                                            sizeof(source), fetched, sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(source, "import real-p10-uksouth-gbp.json");
    free(items);
    assert_int_equal(tw_store_pricebook_put(st, "uksouth", "GBP", "api a", "2026-11-10T00:00:00Z",
                                            "[1]", 3, &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_put(st, "uksouth", "GBP", "api b",
                                            "2026-11-20T12:00:00.5Z", "[2]", 3, &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_get(st, "uksouth", "GBP", &items, &len, source,
                                            sizeof(source), fetched, sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(items, "[2]");
    assert_string_equal(fetched, "2026-11-20T12:00:00.5Z");
    free(items);
    /* "What did it cost on 2026-11-14?" The book fetched by then. */
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "2026-11-14T00:00:00Z",
                                               &items, &len, source, sizeof(source), fetched,
                                               sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(items, "[1]");
    assert_string_equal(source, "api a");
    free(items);
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "2026-11-20T12:00:00.5Z",
                                               &items, &len, source, sizeof(source), fetched,
                                               sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(items, "[2]");
    free(items);
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "2026-11-01T00:00:00Z",
                                               &items, &len, source, sizeof(source), fetched,
                                               sizeof(fetched), &err),
                     TW_ENOENT);
    /* To the millisecond: a book fetched at .365 is not yet there at .364
     * (SQL's julianday made .365 into .364 about half the time). */
    assert_int_equal(tw_store_pricebook_put(st, "uksouth", "GBP", "api c",
                                            "2028-06-20T11:08:21.365Z", "[3]", 3, &err),
                     TW_OK);
    assert_int_equal(count(f, "SELECT fetched_ms FROM price_books WHERE source = 'api c'"),
                     1845112101365);
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "2028-06-20T11:08:21.364Z",
                                               &items, &len, source, sizeof(source), fetched,
                                               sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(items, "[2]");
    free(items);
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "2028-06-20T11:08:21.365Z",
                                               &items, &len, source, sizeof(source), fetched,
                                               sizeof(fetched), &err),
                     TW_OK);
    assert_string_equal(items, "[3]");
    free(items);
    /* Text that is no time is an error, never "no book" or a NULL instant. */
    assert_int_equal(tw_store_pricebook_get_at(st, "uksouth", "GBP", "yesterday", &items, &len,
                                               source, sizeof(source), fetched, sizeof(fetched),
                                               &err),
                     TW_EPARSE);
    assert_non_null(strstr(err.msg, "yesterday"));
    assert_int_equal(tw_store_pricebook_put(st, "uksouth", "GBP", "api d", "last tuesday", "[4]",
                                            3, &err),
                     TW_EPARSE);
    assert_int_equal(count(f, "SELECT count(*) FROM price_books"), 4);
    tw_store_close(st);

    /* Opened again: nothing to migrate, nothing changed. */
    st = open_ok(f->path);
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(count(f, "SELECT count(*) FROM price_books"), 4);
    tw_store_close(st);
}

struct racer {
    const char *path;
    int64_t *ids;
    size_t n;
    int won;
    int lost;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(r->path, &st, &err) != TW_OK)
        return NULL;
    for (size_t i = 0; i < r->n; i++) {
        enum tw_err rc = tw_store_action_move(st, r->ids[i], TW_ACT_CHECKED, TW_ACT_SENT,
                                              "racer", NULL, &err);
        if (rc == TW_OK)
            r->won++;
        else if (rc == TW_EPERM)
            r->lost++;
    }
    tw_store_close(st);
    return NULL;
}

/* Two handles claim the same actions at once for their own owners: each
 * action goes to exactly one of them. */
struct claimer {
    const char *path;
    const char *owner;
    const int64_t *ids;
    size_t n;
    int64_t now_ms;
    int won, lost;
};

static void *claim_race(void *arg)
{
    struct claimer *c = arg;
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(c->path, &st, &err) != TW_OK)
        return NULL;
    for (size_t i = 0; i < c->n; i++) {
        enum tw_err rc = tw_store_action_claim(st, c->ids[i], c->owner, c->now_ms, 30000, NULL,
                                               &err);
        if (rc == TW_OK)
            c->won++;
        else if (rc == TW_EPERM)
            c->lost++;
    }
    tw_store_close(st);
    return NULL;
}

static long long claim_until(const struct fx *f, int64_t id, char *owner, size_t len)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT claim_owner FROM actions WHERE id = %lld",
             (long long)id);
    th_sql_text(f->path, sql, owner, len);
    snprintf(sql, sizeof(sql), "SELECT coalesce(claim_until_ms, -1) FROM actions WHERE id = %lld",
             (long long)id);
    return th_sql_int(f->path, sql);
}

/* Migration 3 on a copy of a real version-2 database (v2.db, made by the
 * build before it): every VM's latest result per target and profile in
 * result_latest (no verdict kept yet: judged when read), the tables and
 * columns it adds, and the reads unchanged. */
static void test_from_version_2(void **state)
{
    struct fx *f = *state;
    th_store_fixture(f->dir, "store/v2.db", "v2.db", f->path, sizeof(f->path));
    if (!th_store_pg())
        assert_int_equal(th_store_version(f->path), 2);
    long long results = count(f, "SELECT count(*) FROM results");
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    assert_int_equal(th_store_version(f->path), 5);
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest"), 7);
    assert_int_equal(results, 7);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict IS NULL"), 7);
    /* The row of each is its latest result (here the only one). */
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest l JOIN results r ON "
                              "r.id = l.result_id AND r.vm_id = l.vm_id AND r.profile = "
                              "l.profile AND r.report_id = l.report_id"),
                     7);
    assert_int_equal(count(f, "SELECT count(*) FROM vm_sizes"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE ahead_ms IS NULL"), 4);
    /* sap-db-01's latest results are read through the new table. */
    struct tw_inventory inv;
    struct tw_result *res = NULL;
    size_t n = 0;
    assert_int_equal(tw_store_vm_latest(st, 1, &inv, &res, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    free(res);
    tw_store_close(st);
}

/* Migration 3 applies the clock allowance to what is stored already: a
 * version-2 store whose web-03 report and results were stamped in 2099
 * comes out ordered at five minutes past their receipt, and flagged. */
static void test_version_2_clock_ahead(void **state)
{
    struct fx *f = *state;
    if (th_store_pg())
        skip(); /* a SQLite file's migration */
    snprintf(f->path, sizeof(f->path), "%s/v2.db", f->dir);
    th_fixture_copy("store/v2.db", f->path);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    const long long y2099 = 4099766400000LL; /* 2099-12-01T00:00:00Z */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "UPDATE reports SET created_ms = %lld WHERE vm_id = 3;"
             "UPDATE results SET started_ms = %lld WHERE vm_id = 3;"
             "UPDATE vms SET last_report_ms = %lld WHERE id = 3",
             y2099, y2099, y2099);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct tw_store *st = open_ok(f->path);
    tw_store_close(st);
    const char *bound = "(SELECT CAST(round((julianday(p.received_at) - 2440587.5) * "
                        "86400000) AS INTEGER) + 300000 FROM reports p WHERE p.vm_id = 3)";
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM vms WHERE id = 3 AND last_report_ms = %s",
             bound);
    assert_int_equal(count(f, sql), 1);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM result_latest WHERE vm_id = 3 AND "
             "order_ms = %s", bound);
    assert_int_equal(count(f, sql), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE vm_id = 3 AND ahead_ms > "
                              "70 * 365 * 86400000"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE ahead_ms IS NOT NULL"), 1);
}

static void test_action_claim(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    enum { N = 40 };
    int64_t ids[N];
    for (int i = 0; i < N; i++) {
        char key[64];
        snprintf(key, sizeof(key), "plan-1/disk-3/claim/%d", i);
        struct tw_store_action_new a = {.disk_id = 3, .kind = "downgrade",
                                        .from_sku = "Premium_LRS", .to_sku = "StandardSSD_LRS",
                                        .idempotency_key = key, .dry_run = true};
        assert_int_equal(tw_store_action_add(st, &a, &ids[i], &err), TW_OK);
    }
    const int64_t t0 = 1764547200000; /* 2025-12-01T00:00:00Z */

    /* Two handles race for every action: exactly one claim each. */
    struct claimer a = {f->path, "backend-a", ids, N, t0, 0, 0};
    struct claimer b = {f->path, "backend-b", ids, N, t0, 0, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, claim_race, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, claim_race, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.won + b.won, N);
    assert_int_equal(a.lost + b.lost, N);
    char owner[64];
    int a_held = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(claim_until(f, ids[i], owner, sizeof(owner)), t0 + 30000);
        a_held += strcmp(owner, "backend-a") == 0;
        assert_true(strcmp(owner, "backend-a") == 0 || strcmp(owner, "backend-b") == 0);
    }
    assert_int_equal(a_held, a.won);

    /* Action 0's holder, and the other one. */
    claim_until(f, ids[0], owner, sizeof(owner));
    const char *other = strcmp(owner, "backend-a") == 0 ? "backend-b" : "backend-a";
    char holder[64];
    snprintf(holder, sizeof(holder), "%s", owner);

    /* Within the lease another owner is refused, and told by whom. */
    assert_int_equal(tw_store_action_claim(st, ids[0], other, t0 + 29999, 30000, NULL, &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, holder));
    tw_error_clear(&err);
    /* The holder renews it: a new end, still its own. */
    int64_t until = 0;
    assert_int_equal(tw_store_action_claim(st, ids[0], holder, t0 + 20000, 30000, &until, &err),
                     TW_OK);
    assert_int_equal(until, t0 + 50000);
    assert_int_equal(claim_until(f, ids[0], owner, sizeof(owner)), t0 + 50000);
    assert_string_equal(owner, holder);
    /* The old end no longer frees it... */
    assert_int_equal(tw_store_action_claim(st, ids[0], other, t0 + 30000, 30000, NULL, &err),
                     TW_EPERM);
    tw_error_clear(&err);
    /* ... the renewed one does: another owner takes the expired lease over. */
    assert_int_equal(tw_store_action_claim(st, ids[0], other, t0 + 50000, 10000, &until, &err),
                     TW_OK);
    assert_int_equal(until, t0 + 60000);
    assert_int_equal(claim_until(f, ids[0], owner, sizeof(owner)), t0 + 60000);
    assert_string_equal(owner, other);
    /* The one who lost it can't release it; the holder can, and then
     * anyone may claim it at once. */
    assert_int_equal(tw_store_action_release(st, ids[0], holder, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, other));
    tw_error_clear(&err);
    assert_int_equal(tw_store_action_release(st, ids[0], other, &err), TW_OK);
    assert_int_equal(claim_until(f, ids[0], owner, sizeof(owner)), -1);
    assert_string_equal(owner, "");
    assert_int_equal(tw_store_action_claim(st, ids[0], holder, t0 + 50001, 1000, NULL, &err),
                     TW_OK);

    /* A finished action is not claimed; an unknown one is not found; a
     * claim needs an owner and a lease. */
    assert_int_equal(tw_store_action_move(st, ids[1], TW_ACT_PLANNED, TW_ACT_SKIPPED, "planner",
                                          NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_claim(st, ids[1], "backend-a", t0 + 999999, 1000, NULL,
                                           &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, "skipped"));
    tw_error_clear(&err);
    assert_int_equal(tw_store_action_claim(st, 99999, "backend-a", t0, 1000, NULL, &err),
                     TW_ENOENT);
    tw_error_clear(&err);
    assert_int_equal(tw_store_action_release(st, 99999, "backend-a", &err), TW_ENOENT);
    tw_error_clear(&err);
    assert_int_equal(tw_store_action_claim(st, ids[2], "", t0, 1000, NULL, &err), TW_EINVAL);
    tw_error_clear(&err);
    assert_int_equal(tw_store_action_claim(st, ids[2], "backend-a", t0, 0, NULL, &err),
                     TW_EINVAL);
    tw_store_close(st);
}

static void test_action_compare_and_set(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    enum { N = 40 };
    int64_t ids[N];
    for (int i = 0; i < N; i++) {
        char key[64];
        snprintf(key, sizeof(key), "plan-1/disk-3/downgrade/%d", i);
        struct tw_store_action_new a = {.disk_id = 3, .kind = "downgrade",
                                        .from_sku = "Premium_LRS", .to_sku = "StandardSSD_LRS",
                                        .due_at = "2026-12-05T19:05:00Z",
                                        .idempotency_key = key, .dry_run = false};
        assert_int_equal(tw_store_action_add(st, &a, &ids[i], &err), TW_OK);
        assert_int_equal(tw_store_action_move(st, ids[i], TW_ACT_PLANNED, TW_ACT_CHECKED, "planner",
                                              "VM deallocated", &err),
                         TW_OK);
    }
    struct tw_store_action_new again = {.kind = "downgrade",
                                        .idempotency_key = "plan-1/disk-3/downgrade/0"};
    assert_int_equal(tw_store_action_add(st, &again, NULL, &err), TW_EINVAL);

    /* Two workers, each on its own handle, send every action at once. */
    struct racer a = {f->path, ids, N, 0, 0}, b = {f->path, ids, N, 0, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, race, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, race, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.won + b.won, N);
    assert_int_equal(a.lost + b.lost, N);
    for (int i = 0; i < N; i++) {
        enum tw_action_state s;
        int attempts;
        size_t moves;
        assert_int_equal(tw_store_action_state(st, ids[i], &s, &attempts, &err), TW_OK);
        assert_int_equal(s, TW_ACT_SENT);
        assert_int_equal(attempts, 1);
        assert_int_equal(tw_store_action_log_count(st, ids[i], &moves, &err), TW_OK);
        assert_int_equal(moves, 3); /* planned (its first line), checked, sent */
    }
    /* The machine's rules: no skipping verification, final states stay. */
    assert_int_equal(tw_store_action_move(st, ids[0], TW_ACT_SENT, TW_ACT_DONE, "x", NULL, &err),
                     TW_EPERM);
    assert_int_equal(tw_store_action_move(st, ids[0], TW_ACT_SENT, TW_ACT_FAILED, "x",
                                          "ARM answered 409", &err),
                     TW_OK);
    assert_int_equal(tw_store_action_move(st, ids[0], TW_ACT_FAILED, TW_ACT_SENT, "x", NULL, &err),
                     TW_EPERM);
    assert_int_equal(count(f, "SELECT count(*) FROM actions WHERE id = 1 AND last_error = "
                              "'ARM answered 409' AND finished_at IS NOT NULL"),
                     1);
    assert_int_equal(tw_store_action_move(st, 9999, TW_ACT_PLANNED, TW_ACT_CHECKED, "x", NULL,
                                          &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    tw_store_close(st);
}

static void test_arm_observations_policies_plans(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    /* Disk 3 (sap-db-01-data1) is StandardSSD_LRS E40 since the late
     * report of 2026-12-01T09:00Z; ARM sees it switched back while the VM
     * is deallocated, then the same again (no new row). */
    bool added = false;
    assert_int_equal(tw_store_sku_observe(st, 3, "Premium_LRS", "P40", 2048,
                                          "2026-12-01T10:00:00Z", TW_OBS_ARM, &added, &err),
                     TW_OK);
    assert_true(added);
    assert_int_equal(tw_store_sku_observe(st, 3, "Premium_LRS", "P40", 2048,
                                          "2026-12-01T10:30:00Z", TW_OBS_ARM, &added, &err),
                     TW_OK);
    assert_false(added);
    struct tw_store_sku_hist_row *h;
    size_t n;
    assert_int_equal(tw_store_disk_history(st, 3, &h, &n, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_string_equal(h[2].sku, "Premium_LRS");
    assert_string_equal(h[2].observed_at, "2026-12-01T10:00:00Z");
    free(h);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history WHERE source = 'arm' AND "
                              "report_id IS NULL"),
                     1);
    assert_int_equal(tw_store_sku_observe(st, 9999, "Premium_LRS", "P40", 1, "2026-12-01T10:00:00Z",
                                          TW_OBS_ARM, NULL, &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_sku_observe(st, 3, "Premium_LRS", "P40", 1, "yesterday", TW_OBS_ARM,
                                          NULL, &err),
                     TW_EPARSE);

    /* Power states from ARM: the newest becomes the VM's; an older one is
     * history only. */
    assert_int_equal(tw_store_power_observe(st, 1, "running", "2026-12-01T11:00:00Z", TW_OBS_ARM,
                                            &err),
                     TW_OK);
    assert_int_equal(tw_store_power_observe(st, 1, "stopped", "2026-12-01T08:00:00Z", TW_OBS_ARM,
                                            &err),
                     TW_OK);
    struct tw_store_vm_row vm;
    assert_int_equal(tw_store_vm(st, 1, &vm, &err), TW_OK);
    assert_string_equal(vm.power_state, "running");
    assert_string_equal(vm.power_state_at, "2026-12-01T11:00:00Z");
    free(vm.tags);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states WHERE vm_id = 1 AND source = "
                              "'arm' AND report_id IS NULL"),
                     2);
    assert_int_equal(tw_store_power_observe(st, 77, "running", "2026-12-01T11:00:00Z", TW_OBS_ARM,
                                            &err),
                     TW_ENOENT);

    /* Policies by name (a second put replaces), plans, their actions. */
    char *body;
    assert_int_equal(tw_store_policy_put(st, "sap-weekend", "{\"v\":1}", &err), TW_OK);
    assert_int_equal(tw_store_policy_put(st, "sap-weekend", "{\"v\":2}", &err), TW_OK);
    assert_int_equal(tw_store_policy_get(st, "sap-weekend", &body, &err), TW_OK);
    assert_string_equal(body, "{\"v\":2}");
    free(body);
    assert_int_equal(tw_store_policy_get(st, "nothing", &body, &err), TW_ENOENT);
    int64_t plan;
    assert_int_equal(tw_store_plan_add(st, "sap-weekend", "2026-12-05T00:00:00Z",
                                       "2026-12-07T00:00:00Z", "{}", &plan, &err),
                     TW_OK);
    struct tw_store_action_new a = {.plan_id = plan, .disk_id = 3, .kind = "downgrade"};
    int64_t id;
    assert_int_equal(tw_store_action_add(st, &a, &id, &err), TW_OK);
    assert_int_equal(count(f, "SELECT count(*) FROM actions a JOIN plans p ON p.id = a.plan_id "
                              "WHERE p.policy = 'sap-weekend' AND a.state = 'planned'"),
                     1);
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    tw_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_from_version_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_version_2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_2_clock_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_action_compare_and_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_action_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arm_observations_policies_plans, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
