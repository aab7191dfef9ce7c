/* test_store.c - the store's own handling of its database (create,
 * reopen, refuse newer, foreign and broken ones: files for SQLite,
 * databases for PostgreSQL), tokens, price books, counters, the integrity
 * check, and two handles at once. */
#include "testhelp.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
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
    th_store_location(f->dir, "tierwise.db", f->path, sizeof(f->path));
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

static struct tw_store *open_ok(const char *path)
{
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(path, &st, &err) != TW_OK)
        fail_msg("open %s: %s", path, err.msg);
    return st;
}

/* One integer a statement answers, read under the store. */
static long long sql_int(const char *path, const char *sql)
{
    return th_sql_int(path, sql);
}

static void sql_exec(const char *path, const char *sql)
{
    th_sql_exec(path, sql);
}

/* The schema version the database records. */
static long long stored_version(const char *path)
{
    return th_store_version(path);
}

static void test_fresh_and_reopen(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    assert_int_equal(tw_store_schema_version(), 5);
    uint8_t h[32] = {1};
    struct tw_error err = {0};
    int64_t id;
    assert_int_equal(tw_store_token_add(st, "ops", TW_ROLE_ADMIN, h, &id, &err), TW_OK);
    tw_store_close(st);
    assert_int_equal(stored_version(f->path), 5);
#define TABLES "('tokens', 'vms', 'disks', 'disk_sku_history', 'reports', 'results', " \
               "'result_disks', 'power_states', 'price_books', 'plans', 'actions')"
    if (th_store_pg()) {
        assert_int_equal(sql_int(f->path, "SELECT count(*) FROM tierwise_meta WHERE key = "
                                          "'application' AND value = 'tierwise'"),
                         1);
        assert_int_equal(sql_int(f->path, "SELECT count(*) FROM information_schema.tables WHERE "
                                          "table_schema = current_schema() AND table_name IN "
                                          TABLES),
                         11);
    } else {
        assert_int_equal(sql_int(f->path, "PRAGMA application_id"), 0x54575344);
        assert_int_equal(sql_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = "
                                          "'table' AND name IN " TABLES),
                         11);
        assert_int_equal(sql_int(f->path, "SELECT journal_mode = 'wal' FROM "
                                          "pragma_journal_mode()"),
                         1);
    }
#undef TABLES

    /* Reopened: same data, nothing migrated twice. */
    st = open_ok(f->path);
    enum tw_role role;
    char name[32];
    assert_int_equal(tw_store_token_lookup(st, h, &role, name, sizeof(name), &err), TW_OK);
    assert_int_equal(role, TW_ROLE_ADMIN);
    assert_string_equal(name, "ops");
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    tw_store_close(st);
    tw_store_close(NULL);
}

/* A new database, and its write-ahead log, are readable by their owner
 * only, whatever the umask. */
static void test_new_file_mode(void **state)
{
    struct fx *f = *state;
    if (th_store_pg())
        skip(); /* files are SQLite's */
    mode_t old = umask(022);
    struct tw_store *st = open_ok(f->path);
    uint8_t h[32] = {7};
    struct tw_error err = {0};
    assert_int_equal(tw_store_token_add(st, "x", TW_ROLE_READER, h, NULL, &err), TW_OK);
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    char wal[4200];
    snprintf(wal, sizeof(wal), "%s-wal", f->path);
    assert_int_equal(stat(wal, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    tw_store_close(st);
    umask(old);
}

static void test_newer_refused(void **state)
{
    struct fx *f = *state;
    tw_store_close(open_ok(f->path));
    sql_exec(f->path, th_store_pg() ? "UPDATE tierwise_meta SET value = '7' WHERE key = "
                                      "'schema_version'"
                                    : "PRAGMA user_version = 7");
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &st, &err), TW_EUNSUPPORTED);
    assert_null(st);
    assert_non_null(strstr(err.msg, th_store_name(f->path)));
    assert_non_null(strstr(err.msg, "schema version 7"));
    assert_non_null(strstr(err.msg, "up to 5"));
    assert_int_equal(stored_version(f->path), 7);
}

/* A PostgreSQL database that is another application's is refused and
 * left as it was: tables of its own, or a tierwise_meta naming another. */
static void not_ours_pg(struct fx *f)
{
    char other[1200];
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    th_store_location(f->dir, "other", other, sizeof(other));
    sql_exec(other, "CREATE TABLE notes(x bigint); INSERT INTO notes VALUES (1)");
    assert_int_equal(tw_store_open(other, &st, &err), TW_EINVAL);
    assert_null(st);
    assert_non_null(strstr(err.msg, th_store_name(other)));
    assert_non_null(strstr(err.msg, "not a tierwise database"));
    assert_int_equal(sql_int(other, "SELECT count(*) FROM information_schema.tables WHERE "
                                    "table_schema = current_schema()"),
                     1);
    th_store_location(f->dir, "othermeta", other, sizeof(other));
    sql_exec(other, "CREATE TABLE tierwise_meta(key text PRIMARY KEY, value text); "
                    "INSERT INTO tierwise_meta VALUES ('application', 'someone-else'), "
                    "('schema_version', '5')");
    assert_int_equal(tw_store_open(other, &st, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not a tierwise database"));
    assert_non_null(strstr(err.msg, "someone-else"));
    assert_int_equal(sql_int(other, "SELECT count(*) FROM information_schema.tables WHERE "
                                    "table_schema = current_schema()"),
                     1);
}

static void test_not_a_database(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (th_store_pg()) {
        not_ours_pg(f);
        goto locations;
    }
    FILE *fp = fopen(f->path, "w");
    for (int i = 0; i < 200; i++)
        fputs("this is a text file, not a database of any kind\n", fp);
    fclose(fp);
    assert_int_equal(tw_store_open(f->path, &st, &err), TW_EINVAL);
    assert_null(st);
    assert_non_null(strstr(err.msg, f->path));
    assert_non_null(strstr(err.msg, "not a tierwise database"));

    /* Another program's SQLite file is left as it was. */
    char other[4200];
    snprintf(other, sizeof(other), "%s/other.db", f->dir);
    sql_exec(other, "CREATE TABLE notes(x); INSERT INTO notes VALUES (1)");
    assert_int_equal(tw_store_open(other, &st, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not a tierwise one"));
    assert_int_equal(sql_int(other, "SELECT journal_mode = 'delete' FROM pragma_journal_mode()"),
                     1);
    sql_exec(other, "PRAGMA application_id = 42");
    assert_int_equal(tw_store_open(other, &st, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "another application"));

    /* A folder that doesn't exist. */
    char missing[4200];
    snprintf(missing, sizeof(missing), "%s/no/such/dir/t.db", f->dir);
    assert_int_equal(tw_store_open(missing, &st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, missing));

locations:
    /* No location; a PostgreSQL URL. */
    assert_int_equal(tw_store_open("", &st, &err), TW_EINVAL);
    /* A PostgreSQL location goes to the PostgreSQL store (a socket folder
     * that does not exist: nothing leaves the machine). */
    assert_int_equal(tw_store_open("postgresql:///tierwise?host=/nonexistent/tw", &st, &err),
                     TW_EIO);
    assert_non_null(strstr(err.msg, "can't connect"));
    assert_int_equal(tw_store_open("postgresql://tw:hunter2pw@/tierwise?host=/nonexistent/tw", &st,
                                   &err),
                     TW_EINVAL);
    assert_null(strstr(err.msg, "hunter2pw"));
    assert_non_null(strstr(err.msg, "PostgreSQL"));
}

static void test_tokens(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    uint8_t a[32], b[32], c[32];
    memset(a, 0xaa, 32);
    memset(b, 0xbb, 32);
    memset(c, 0xcc, 32);
    int64_t ida, idb;
    assert_int_equal(tw_store_token_add(st, "vm-agents", TW_ROLE_AGENT, a, &ida, &err), TW_OK);
    assert_int_equal(tw_store_token_add(st, "", TW_ROLE_READER, b, &idb, &err), TW_OK);
    assert_true(idb > ida);
    /* The same secret twice is refused. */
    assert_int_equal(tw_store_token_add(st, "again", TW_ROLE_ADMIN, a, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "already stored"));

    enum tw_role role;
    char name[64];
    assert_int_equal(tw_store_token_lookup(st, a, &role, name, sizeof(name), &err), TW_OK);
    assert_int_equal(role, TW_ROLE_AGENT);
    assert_string_equal(name, "vm-agents");
    assert_int_equal(tw_store_token_lookup(st, b, &role, NULL, 0, &err), TW_OK);
    assert_int_equal(role, TW_ROLE_READER);
    assert_int_equal(tw_store_token_lookup(st, c, &role, name, sizeof(name), &err), TW_ENOENT);

    struct tw_store_token_row *list;
    size_t nl;
    assert_int_equal(tw_store_token_list(st, &list, &nl, &err), TW_OK);
    assert_int_equal(nl, 2);
    assert_int_equal(list[0].id, ida);
    assert_string_equal(list[0].name, "vm-agents");
    assert_int_equal(list[0].role, TW_ROLE_AGENT);
    assert_int_equal(strlen(list[0].created_at), 24);
    assert_string_equal(list[0].revoked_at, "");
    free(list);

    /* Revoked: no longer found, listed as revoked; twice is fine. */
    assert_int_equal(tw_store_token_revoke(st, ida, &err), TW_OK);
    assert_int_equal(tw_store_token_lookup(st, a, &role, name, sizeof(name), &err), TW_ENOENT);
    assert_int_equal(tw_store_token_revoke(st, ida, &err), TW_OK);
    assert_int_equal(tw_store_token_revoke(st, 9999, &err), TW_ENOENT);
    assert_int_equal(tw_store_token_list(st, &list, &nl, &err), TW_OK);
    assert_true(list[0].revoked_at[0] != '\0');
    assert_string_equal(list[1].revoked_at, "");
    free(list);

    assert_string_equal(tw_role_name(TW_ROLE_ADMIN), "admin");
    assert_int_equal(tw_role_parse("reader", &role), TW_OK);
    assert_int_equal(role, TW_ROLE_READER);
    assert_int_equal(tw_role_parse("root", &role), TW_EINVAL);
    tw_store_close(st);
}

static void test_pricebook(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    char *items;
    size_t n;
    char src[128], at[32];
    assert_int_equal(tw_store_pricebook_get(st, "westeurope", "EUR", &items, &n, src, sizeof(src),
                                            at, sizeof(at), &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "westeurope"));
    assert_null(items);
    const char *v1 = "[{\"meterName\":\"P10 LRS Disk\",\"retailPrice\":17.92}]";
    assert_int_equal(tw_store_pricebook_put(st, "westeurope", "EUR", "snapshot pricing/x.json",
                                            "2026-11-01T00:00:00Z", v1, strlen(v1), &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_get(st, "westeurope", "EUR", &items, &n, src, sizeof(src),
                                            at, sizeof(at), &err),
                     TW_OK);
    assert_string_equal(items, v1);
    assert_int_equal(n, strlen(v1));
    assert_string_equal(src, "snapshot pricing/x.json");
    assert_string_equal(at, "2026-11-01T00:00:00Z");
    free(items);

    /* A new book of the same key becomes the one read (the old one is kept
     * as history, schema 2); another currency is another book. */
    const char *v2 = "[]";
    assert_int_equal(tw_store_pricebook_put(st, "westeurope", "EUR", "api http://127.0.0.1:1",
                                            "2026-11-29T00:00:00Z", v2, 2, &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_put(st, "westeurope", "USD", "api", "2026-11-29T00:00:00Z",
                                            v1, strlen(v1), &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_get(st, "westeurope", "EUR", &items, &n, src, sizeof(src),
                                            at, sizeof(at), &err),
                     TW_OK);
    assert_string_equal(items, "[]");
    assert_string_equal(src, "api http://127.0.0.1:1");
    free(items);
    assert_int_equal(sql_int(f->path, "SELECT count(DISTINCT region || currency) FROM price_books"),
                     2);
    /* Source and time are optional to read back. */
    assert_int_equal(tw_store_pricebook_get(st, "westeurope", "USD", &items, NULL, NULL, 0, NULL,
                                            0, &err),
                     TW_OK);
    free(items);
    tw_store_close(st);
}

static void test_stats_and_check(void **state)
{
    struct fx *f = *state;
    struct tw_store *st = open_ok(f->path);
    struct tw_error err = {0};
    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(st, &s, &err), TW_OK);
    assert_int_equal(s.reports, 0);
    assert_int_equal(s.vms, 0);
    assert_true(s.db_bytes > 0);
    if (!th_store_pg())
        assert_int_equal(s.db_bytes % 4096, 0); /* SQLite's whole pages */
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    tw_store_close(st);
}

/* ---- two handles: one writes batches, the other reads meanwhile ---- */

struct writer {
    const char *path;
    struct tw_report *tpl;
    int batches, per_batch;
    enum tw_err rc;
    char msg[600];
};

static void *write_batches(void *arg)
{
    struct writer *w = arg;
    struct tw_store *st;
    struct tw_error err = {0};
    w->rc = tw_store_open(w->path, &st, &err);
    if (w->rc != TW_OK) {
        snprintf(w->msg, sizeof(w->msg), "%s", err.msg);
        return NULL;
    }
    struct tw_report **reps = calloc((size_t)w->per_batch, sizeof(*reps));
    enum tw_put_status *status = calloc((size_t)w->per_batch, sizeof(*status));
    for (int i = 0; i < w->per_batch; i++) {
        reps[i] = tw_report_new();
        *reps[i] = *w->tpl;
        reps[i]->results = NULL;
        reps[i]->n_results = 0;
        for (size_t k = 0; k < w->tpl->n_results; k++)
            tw_report_add_result(reps[i], &w->tpl->results[k]);
    }
    for (int b = 0; b < w->batches && w->rc == TW_OK; b++) {
        for (int i = 0; i < w->per_batch; i++) {
            int k = b * w->per_batch + i;
            snprintf(reps[i]->id, sizeof(reps[i]->id), "00000000-0000-4000-8000-%012d", k);
            snprintf(reps[i]->created_at, sizeof(reps[i]->created_at),
                     "2026-11-29T%02d:%02d:%02dZ", k / 3600, k / 60 % 60, k % 60);
            snprintf(reps[i]->inv.vm.name, sizeof(reps[i]->inv.vm.name), "vm-%d", k % 7);
            reps[i]->inv.vm.resource_id[0] = '\0';
            for (size_t d = 0; d < reps[i]->inv.n_disks; d++)
                reps[i]->inv.disks[d].managed_disk_id[0] = '\0';
        }
        w->rc = tw_store_put_reports(st, (const struct tw_report *const *)reps, NULL, NULL,
                                     (size_t)w->per_batch, "2026-11-30T00:00:00Z", status, NULL,
                                     &err);
        for (int i = 0; i < w->per_batch && w->rc == TW_OK; i++) {
            if (status[i] != TW_PUT_STORED)
                w->rc = TW_EIO;
        }
        if (w->rc != TW_OK)
            snprintf(w->msg, sizeof(w->msg), "batch %d: %s", b, err.msg);
    }
    for (int i = 0; i < w->per_batch; i++)
        tw_report_free(reps[i]);
    free(reps);
    free(status);
    tw_store_close(st);
    return NULL;
}

static void test_two_handles(void **state)
{
    struct fx *f = *state;
    size_t len;
    char *buf = th_fixture("reports/sap-app-02.json", &len);
    struct tw_report *tpl = tw_report_new();
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(buf, len, tpl, &err), TW_OK);
    free(buf);

    struct tw_store *reader = open_ok(f->path);
    struct writer w = {.path = f->path, .tpl = tpl, .batches = 30, .per_batch = 20};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, write_batches, &w), 0);
    /* Reads go on while the writer commits; each sees a whole number of
     * batches, never half of one. */
    int reads = 0;
    int64_t last = 0;
    for (;;) {
        struct tw_store_stats s;
        if (tw_store_stats(reader, &s, &err) != TW_OK)
            fail_msg("read during writes: %s", err.msg);
        assert_int_equal(s.reports % 20, 0);
        assert_true(s.reports >= last);
        last = s.reports;
        struct tw_store_vm_row *vms;
        size_t nv;
        if (tw_store_vms(reader, &vms, &nv, &err) != TW_OK)
            fail_msg("read during writes: %s", err.msg);
        tw_store_vm_rows_free(vms, nv);
        reads++;
        if (s.reports == 600)
            break;
        if (w.rc != TW_OK)
            break;
    }
    pthread_join(t, NULL);
    if (w.rc != TW_OK)
        fail_msg("writer: %s", w.msg);
    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(reader, &s, &err), TW_OK);
    assert_int_equal(s.reports, 600);
    assert_int_equal(s.vms, 7);
    assert_true(reads > 1);
    assert_int_equal(tw_store_check(reader, &err), TW_OK);
    tw_store_close(reader);
    tw_report_free(tpl);
}

/* Several handles opening a new file at once: one migrates, the others
 * wait and find the schema there. */
static void *open_close(void *arg)
{
    struct tw_store *st;
    struct tw_error err = {0};
    intptr_t rc = tw_store_open(arg, &st, &err);
    if (rc == TW_OK)
        tw_store_close(st);
    else
        fprintf(stderr, "open_close: %s\n", err.msg);
    return (void *)rc;
}

static void test_concurrent_open(void **state)
{
    struct fx *f = *state;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, open_close, f->path), 0);
    for (int i = 0; i < 4; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        assert_int_equal((intptr_t)rc, TW_OK);
    }
    assert_int_equal(stored_version(f->path), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_file_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pricebook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_and_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_open, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
