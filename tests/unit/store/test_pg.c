/* test_pg.c - the PostgreSQL store's own behaviour (store_pg.c): which
 * locations are PostgreSQL's, a password refused, an unreachable server,
 * backends migrating a fresh database together, a newer or foreign
 * database refused, the periodic-work locks (held, taken over when the
 * holder closes or its backend is ended), the transparent reconnection,
 * the probe, and its small tables (tokens, price books, VM sizes, counts,
 * the check).  Needs a server: TW_TEST_PG (a base connection string), or
 * the program exits 77. */
#include "testhelp.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "th_store.h"

struct fx {
    char *dir;
    char loc[4096];
    struct tw_store *st;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "pg", f->loc, sizeof(f->loc));
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

static struct tw_store *open_ok(const char *loc)
{
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(loc, &st, &err) != TW_OK)
        fail_msg("opening %s: %s", loc, err.msg);
    return st;
}

static bool is_pg(const char *s)
{
    return tw_store_location_is_pg(s, strlen(s));
}

static void test_location_is_pg(void **state)
{
    (void)state;
    assert_true(is_pg("postgresql://tierwise@db.example/tierwise"));
    assert_true(is_pg("postgres://db.example"));
    assert_true(is_pg("host=/run/postgresql dbname=tierwise"));
    assert_true(is_pg("service=tierwise"));
    assert_true(is_pg("dbname = tierwise"));
    assert_true(is_pg("  host=/run/postgresql"));
    assert_true(is_pg("\tsslmode=require host=db"));
    assert_false(is_pg("/var/lib/tierwise/tierwise.db"));
    assert_false(is_pg("tierwise.db"));
    assert_false(is_pg("./dbname=x"));
    assert_false(is_pg("colour=red"));
    assert_false(is_pg("HOST=db"));
    assert_false(is_pg("host"));
    assert_false(is_pg("=host"));
    assert_false(is_pg(""));
    assert_false(is_pg("postgresql:/db"));
    assert_false(is_pg(" postgresql://db"));
    assert_false(tw_store_location_is_pg(NULL, 0));
    /* Only LEN bytes count. */
    assert_false(tw_store_location_is_pg("postgresql://db", 10));
    assert_false(tw_store_location_is_pg("host=db", 4));
    assert_true(tw_store_location_is_pg("host=db", 5));
}

static void test_password_refused(void **state)
{
    (void)state;
    const char *base = getenv("TW_TEST_PG");
    char loc[1024];
    const char *const forms[] = {
        "%s password=h1-sekrit-42 dbname=postgres",
        "postgresql://tierwise:h1-sekrit-42@localhost/postgres",
        "%s sslpassword=h1-sekrit-42 dbname=postgres",
        "%s dbname='postgresql://tierwise:h1-sekrit-42@localhost/nosuch'",
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        snprintf(loc, sizeof(loc), forms[i], base);
        struct tw_store *st = NULL;
        struct tw_error err = {0};
        assert_int_equal(tw_store_open(loc, &st, &err), TW_EINVAL);
        assert_null(st);
        assert_non_null(strstr(err.msg, "pgpass"));
        assert_null(strstr(err.msg, "h1-sekrit-42"));
    }
    /* A string that does not parse: libpq's reason quotes the words it
     * tripped on, which may be a secret's; neither is repeated. */
    const char *const bad[] = {
        "%s password=h1 sekrit-42 dbname",
        "postgresql://tierwise:h1-sek%%zzrit-42@/postgres",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(loc, sizeof(loc), bad[i], base);
        struct tw_store *st = NULL;
        struct tw_error err = {0};
        assert_int_equal(tw_store_open(loc, &st, &err), TW_EINVAL);
        assert_non_null(strstr(err.msg, "does not parse"));
        assert_null(strstr(err.msg, "sekrit"));
        assert_null(strstr(err.msg, "zzrit"));
    }
}

static void test_unreachable(void **state)
{
    (void)state;
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open("host=/nonexistent/h1-socket-dir dbname=tierwise "
                                   "connect_timeout=2",
                                   &st, &err),
                     TW_EIO);
    assert_null(st);
    assert_non_null(strstr(err.msg, "can't connect"));
    assert_non_null(strstr(err.msg, "/nonexistent/h1-socket-dir"));
    assert_non_null(strstr(err.msg, "check that the server runs"));
}

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

static void test_concurrent_migrate(void **state)
{
    struct fx *f = *state;
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, open_close, f->loc), 0);
    for (int i = 0; i < 8; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        assert_int_equal((intptr_t)rc, TW_OK);
    }
    assert_int_equal(th_pg_int(f->loc, "SELECT value::int FROM tierwise_meta "
                                       "WHERE key = 'schema_version'"),
                     5);
    assert_int_equal(th_pg_int(f->loc, "SELECT count(*) FROM tierwise_meta"), 2);
    assert_int_equal(th_pg_int(f->loc, "SELECT count(*) FROM pg_tables "
                                       "WHERE schemaname = current_schema()"),
                     18);
    /* Opened again: nothing to do, still 5. */
    f->st = open_ok(f->loc);
    struct tw_error err = {0};
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
}

static void test_newer_refused(void **state)
{
    struct fx *f = *state;
    tw_store_close(open_ok(f->loc));
    assert_true(th_pg_exec(f->loc, "UPDATE tierwise_meta SET value = '6' "
                                   "WHERE key = 'schema_version'"));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->loc, &f->st, &err), TW_EUNSUPPORTED);
    assert_null(f->st);
    assert_non_null(strstr(err.msg, "schema version 6"));
    assert_non_null(strstr(err.msg, "up to 5"));
    assert_non_null(strstr(err.msg, th_store_name(f->loc)));
    /* Left as it was. */
    assert_int_equal(th_pg_int(f->loc, "SELECT value::int FROM tierwise_meta "
                                       "WHERE key = 'schema_version'"),
                     6);
}

static void test_foreign_refused(void **state)
{
    struct fx *f = *state;
    assert_true(th_pg_exec(f->loc, "CREATE TABLE orders(id int PRIMARY KEY)"));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->loc, &f->st, &err), TW_EINVAL);
    assert_null(f->st);
    assert_non_null(strstr(err.msg, "not a tierwise database"));
    /* Untouched: no table of ours was made beside it. */
    assert_int_equal(th_pg_int(f->loc, "SELECT count(*) FROM pg_tables "
                                       "WHERE schemaname = current_schema()"),
                     1);
    /* Another application's tierwise_meta (a name clash) is refused too. */
    assert_true(th_pg_exec(f->loc, "DROP TABLE orders; CREATE TABLE tierwise_meta(key text "
                                   "PRIMARY KEY, value text); INSERT INTO tierwise_meta "
                                   "VALUES ('application', 'other')"));
    tw_error_clear(&err);
    assert_int_equal(tw_store_open(f->loc, &f->st, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not a tierwise database"));
}

/* pg_locks is the whole server's: only this test's database counts (the
 * server may be shared). */
#define THIS_DB "(SELECT oid FROM pg_database WHERE datname = current_database())"

/* Ends, from another connection, the backend that holds the work lock
 * with KEY, and waits until the server let it go. */
static void end_holder(const char *loc, int key)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = "
             "'advisory' AND classid = %d AND objid = %d AND objsubid = 2 AND granted "
             "AND database = " THIS_DB,
             0x5457, key);
    assert_int_equal(th_pg_int(loc, sql), 1);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %d "
             "AND objid = %d AND objsubid = 2 AND database = " THIS_DB,
             0x5457, key);
    for (int i = 0; i < 500 && th_pg_int(loc, sql) > 0; i++)
        usleep(10000);
    assert_int_equal(th_pg_int(loc, sql), 0);
}

static bool lock(struct tw_store *st, const char *kind)
{
    bool held = false;
    struct tw_error err = {0};
    if (tw_store_work_lock(st, kind, &held, &err) != TW_OK)
        fail_msg("work_lock %s: %s", kind, err.msg);
    return held;
}

static void test_work_lock(void **state)
{
    struct fx *f = *state;
    struct tw_store *a = open_ok(f->loc);
    struct tw_store *b = open_ok(f->loc);
    assert_true(lock(a, "sync"));
    assert_true(lock(a, "sync")); /* held still, not stacked */
    assert_false(lock(b, "sync"));
    assert_true(lock(b, "prices")); /* another kind is free */
    assert_false(lock(a, "prices"));
    /* A kind without a fixed key has a hashed one, the same in both. */
    assert_true(lock(a, "power"));
    assert_false(lock(b, "power"));
    /* One session holds each lock once: asked twice, one row, and one
     * unlock frees it. */
    assert_int_equal(th_pg_int(f->loc, "SELECT count(*) FROM pg_locks WHERE locktype = "
                                       "'advisory' AND classid = 21591 AND objid = 1 "
                                       "AND database = " THIS_DB),
                     1);
    bool held = true;
    struct tw_error err = {0};
    assert_int_equal(tw_store_work_lock(a, "Sync now", &held, &err), TW_EINVAL);
    assert_false(held);
    /* The holder closes: the other takes it over. */
    tw_store_close(a);
    assert_true(lock(b, "sync"));
    assert_true(lock(b, "power"));
    tw_store_close(b);
}

static void test_work_lock_holder_ended(void **state)
{
    struct fx *f = *state;
    struct tw_store *a = open_ok(f->loc);
    struct tw_store *b = open_ok(f->loc);
    assert_true(lock(a, "drift"));
    assert_false(lock(b, "drift"));
    end_holder(f->loc, 4);
    assert_true(lock(b, "drift"));
    /* A's session is gone, and its lock with it: A connects again and
     * finds the work another's. */
    assert_false(lock(a, "drift"));
    /* A statement on A after the server ended its connection works. */
    struct tw_store_stats s;
    struct tw_error err = {0};
    assert_int_equal(tw_store_stats(a, &s, &err), TW_OK);
    /* B holds sync too; ended again, then a plain statement first. */
    assert_true(lock(b, "scheduler"));
    end_holder(f->loc, 5);
    struct tw_store_token_row *rows = NULL;
    size_t n = 9;
    assert_int_equal(tw_store_token_list(b, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    free(rows);
    assert_true(lock(a, "scheduler"));
    assert_false(lock(b, "scheduler"));
    assert_int_equal(tw_store_probe(a, &err), TW_OK);
    assert_int_equal(tw_store_probe(b, &err), TW_OK);
    tw_store_close(a);
    tw_store_close(b);
}

static void test_probe(void **state)
{
    struct fx *f = *state;
    f->st = open_ok(f->loc);
    struct tw_error err = {0};
    assert_int_equal(tw_store_probe(f->st, &err), TW_OK);
    /* A database that takes no writes fails the probe of a new session
     * (the setting is read at connect), saying what to change. */
    char sql[256];
    snprintf(sql, sizeof(sql), "ALTER DATABASE \"%s\" SET default_transaction_read_only = on",
             th_store_name(f->loc));
    assert_true(th_pg_exec(f->loc, sql));
    struct tw_store *ro = open_ok(f->loc);
    assert_int_equal(tw_store_probe(ro, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "takes no writes"));
    tw_store_close(ro);
    assert_int_equal(tw_store_probe(f->st, &err), TW_OK);
}

static void test_tokens(void **state)
{
    struct fx *f = *state;
    f->st = open_ok(f->loc);
    uint8_t h1[32], h2[32];
    memset(h1, 0x11, sizeof(h1));
    memset(h2, 0x22, sizeof(h2));
    h2[0] = 0; /* a NUL byte in the hash is kept */
    int64_t id1 = 0, id2 = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_token_add(f->st, "nightly", TW_ROLE_AGENT, h1, &id1, &err), TW_OK);
    assert_int_equal(tw_store_token_add(f->st, "", TW_ROLE_ADMIN, h2, &id2, &err), TW_OK);
    assert_true(id2 > id1 && id1 > 0);
    assert_int_equal(tw_store_token_add(f->st, "again", TW_ROLE_READER, h1, NULL, &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "already stored"));
    enum tw_role role;
    char name[64];
    assert_int_equal(tw_store_token_lookup(f->st, h2, &role, name, sizeof(name), &err), TW_OK);
    assert_int_equal(role, TW_ROLE_ADMIN);
    assert_string_equal(name, "");
    assert_int_equal(tw_store_token_revoke(f->st, id1, &err), TW_OK);
    assert_int_equal(tw_store_token_revoke(f->st, id1, &err), TW_OK);
    assert_int_equal(tw_store_token_revoke(f->st, 9999, &err), TW_ENOENT);
    assert_int_equal(tw_store_token_lookup(f->st, h1, &role, name, sizeof(name), &err),
                     TW_ENOENT);
    struct tw_store_token_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(tw_store_token_list(f->st, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, id1);
    assert_string_equal(rows[0].name, "nightly");
    assert_int_equal(rows[0].role, TW_ROLE_AGENT);
    assert_true(rows[0].revoked_at[0] != '\0');
    assert_true(rows[1].revoked_at[0] == '\0');
    assert_int_equal(strlen(rows[1].created_at), 24); /* 2026-12-02T01:02:03.456Z */
    free(rows);
}

static void test_pricebook(void **state)
{
    struct fx *f = *state;
    f->st = open_ok(f->loc);
    struct tw_error err = {0};
    char *items = NULL;
    size_t len = 0;
    char src[64], at[40];
    assert_int_equal(tw_store_pricebook_get(f->st, "westeurope", "EUR", &items, &len, NULL, 0,
                                            NULL, 0, &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_pricebook_put(f->st, "westeurope", "EUR", "snapshot a",
                                            "2026-11-01T00:00:00Z", "[1]", 3, &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_put(f->st, "westeurope", "EUR", "snapshot b",
                                            "2026-10-01T00:00:00Z", "[2]xx", 3, &err),
                     TW_OK);
    assert_int_equal(tw_store_pricebook_put(f->st, "westeurope", "EUR", "bad", "yesterday",
                                            "[3]", 3, &err),
                     TW_EPARSE);
    /* The latest stored is the default. */
    assert_int_equal(tw_store_pricebook_get(f->st, "westeurope", "EUR", &items, &len, src,
                                            sizeof(src), at, sizeof(at), &err),
                     TW_OK);
    assert_string_equal(items, "[2]");
    assert_int_equal(len, 3);
    assert_string_equal(src, "snapshot b");
    assert_string_equal(at, "2026-10-01T00:00:00Z");
    free(items);
    /* As of an instant: the last fetched by then. */
    assert_int_equal(tw_store_pricebook_get_at(f->st, "westeurope", "EUR",
                                               "2026-11-15T00:00:00Z", &items, &len, src,
                                               sizeof(src), NULL, 0, &err),
                     TW_OK);
    assert_string_equal(items, "[1]");
    free(items);
    assert_int_equal(tw_store_pricebook_get_at(f->st, "westeurope", "EUR",
                                               "2026-09-15T00:00:00Z", &items, &len, NULL, 0,
                                               NULL, 0, &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_pricebook_get_at(f->st, "westeurope", "EUR", "", &items, &len,
                                               NULL, 0, NULL, 0, &err),
                     TW_EINVAL);
}

static void test_vm_sizes(void **state)
{
    struct fx *f = *state;
    f->st = open_ok(f->loc);
    struct tw_error err = {0};
    struct tw_store_vm_size in[3] = {
        {.name = "Standard_E4s_v5", .caps = "{\"e\":1}"},
        {.name = "standard_d2s_v3", .caps = "{\"d\":1}"},
        {.name = "Standard_D2s_v3", .caps = "{\"d\":2}"}, /* the same name: replaces */
    };
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm test",
                                           "2026-11-01T00:00:00Z", in, 3, &err),
                     TW_OK);
    struct tw_store_vm_size *rows = NULL;
    size_t n = 0;
    char src[64], at[40];
    assert_int_equal(tw_store_vm_sizes_get(f->st, "westeurope", &rows, &n, src, sizeof(src),
                                           at, sizeof(at), &err),
                     TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].name, "Standard_D2s_v3");
    assert_string_equal(rows[0].caps, "{\"d\":2}");
    assert_string_equal(rows[1].name, "Standard_E4s_v5");
    assert_string_equal(src, "arm test");
    assert_string_equal(at, "2026-11-01T00:00:00Z");
    tw_store_vm_sizes_free(rows, n);
    /* Replaced as a whole; a bad time leaves the old set. */
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm", "soon", in, 1, &err),
                     TW_EPARSE);
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm", "2026-11-02T00:00:00Z",
                                           in, 1, &err),
                     TW_OK);
    assert_int_equal(tw_store_vm_sizes_get(f->st, "westeurope", &rows, &n, NULL, 0, NULL, 0,
                                           &err),
                     TW_OK);
    assert_int_equal(n, 1);
    tw_store_vm_sizes_free(rows, n);
    assert_int_equal(tw_store_vm_sizes_get(f->st, "eastus", &rows, &n, NULL, 0, NULL, 0, &err),
                     TW_ENOENT);
}

static void test_stats_counts_check(void **state)
{
    struct fx *f = *state;
    f->st = open_ok(f->loc);
    struct tw_error err = {0};
    struct tw_store_stats s;
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.vms, 0);
    assert_int_equal(s.reports, 0);
    assert_true(s.db_bytes > 1000000);
    assert_true(th_pg_exec(f->loc,
                           "INSERT INTO vms(id, identity, name, location, vm_size, "
                           "last_report_id, last_report_at, last_report_ms) VALUES "
                           "(1, 'a', 'a', 'x', 'Standard_D2s_v3', 'r1', "
                           "'2026-11-01T00:00:00Z', 1), (2, 'b', 'b', 'x', "
                           "'Standard_B2s', 'r2', '2026-11-02T00:00:00Z', 2), (3, 'c', 'c', "
                           "'x', 'Standard_D2s_v3', '', '', 0);"
                           "INSERT INTO reports(id, created_at, created_ms, received_at, "
                           "vm_id, agent_version, agent_hostname, body) VALUES ('r1', '', 0, "
                           "'2026-11-01T00:00:00Z', 1, '1', 'h', '{}'), ('r2', '', 0, "
                           "'2026-11-03T00:00:00Z', 2, '1', 'h', '{}')"));
    struct tw_store_fleet_counts c;
    assert_int_equal(tw_store_fleet_counts(f->st, 1793577600000 /* 2026-11-02 */, &c, &err),
                     TW_OK);
    assert_int_equal(c.vms, 3);
    assert_int_equal(c.n_vm_sizes, 2);
    assert_string_equal(c.vm_sizes[0].key, "Standard_B2s");
    assert_int_equal(c.vm_sizes[1].n, 2);
    assert_int_equal(c.n_disk_skus, 0);
    assert_int_equal(c.vms_silent, 1);
    tw_store_fleet_counts_free(&c);
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.vms, 3);
    assert_int_equal(s.reports, 2);
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
    /* A column's type changed, an index dropped, a constraint dropped: each
     * named; an index added by hand is no fault. */
    assert_true(th_pg_exec(f->loc, "CREATE INDEX dba_extra ON vms(location)"));
    assert_int_equal(tw_store_check(f->st, &err), TW_OK);
    assert_true(th_pg_exec(f->loc, "ALTER TABLE plans ALTER COLUMN body TYPE varchar(100)"));
    assert_int_equal(tw_store_check(f->st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "column plans.body text COLLATE C NOT NULL"));
    assert_true(th_pg_exec(f->loc, "ALTER TABLE plans ALTER COLUMN body TYPE text "
                                   "COLLATE \"C\"; DROP INDEX vms_place"));
    assert_int_equal(tw_store_check(f->st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "index vms_place on vms (lower(name)"));
    assert_true(th_pg_exec(f->loc, "CREATE INDEX vms_place ON vms(lower(name), "
                                   "lower(resource_group), lower(subscription_id));"
                                   "ALTER TABLE tokens DROP CONSTRAINT tokens_role_check"));
    assert_int_equal(tw_store_check(f->st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "constraint tokens_role_check"));
    /* The store still works after a check (its search path is back). */
    assert_int_equal(tw_store_stats(f->st, &s, &err), TW_OK);
    assert_int_equal(s.vms, 3);
    assert_true(th_pg_exec(f->loc, "DROP TABLE drift"));
    assert_int_equal(tw_store_check(f->st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "table drift is missing"));
    assert_true(th_pg_exec(f->loc, "UPDATE tierwise_meta SET value = '4' "
                                   "WHERE key = 'schema_version'"));
    assert_int_equal(tw_store_check(f->st, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "schema version"));
}

/* A database whose default collation folds more than ASCII (C.utf8, as
 * many initdb runs give): names are still compared as SQLite's NOCASE
 * does, ASCII letters alone without regard to case. */
static void test_names_beyond_ascii(void **state)
{
    (void)state;
    const char *base = getenv("TW_TEST_PG");
    char admin[1024], loc[1024], db[64], sql[256];
    snprintf(db, sizeof(db), "tw_coll_%ld", (long)getpid());
    snprintf(admin, sizeof(admin), "%s dbname=postgres", base);
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", db);
    th_pg_exec(admin, sql);
    snprintf(sql, sizeof(sql),
             "CREATE DATABASE %s TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C.utf8' "
             "LC_CTYPE 'C.utf8'",
             db);
    if (!th_pg_exec(admin, sql))
        skip(); /* no C.utf8 locale on this server */
    snprintf(loc, sizeof(loc), "%s dbname=%s", base, db);
    struct tw_store *st = open_ok(loc);
    struct tw_vm vm = {0};
    snprintf(vm.name, sizeof(vm.name), "VM\u00c9-01");
    snprintf(vm.resource_id, sizeof(vm.resource_id),
             "/subscriptions/s1/resourceGroups/RG-\u00c9QUIPE/providers/Microsoft.Compute/"
             "virtualMachines/VM\u00c9-01");
    snprintf(vm.subscription_id, sizeof(vm.subscription_id), "s1");
    snprintf(vm.resource_group, sizeof(vm.resource_group), "RG-\u00c9QUIPE");
    snprintf(vm.location, sizeof(vm.location), "westeurope");
    struct tw_store_arm_vm v = {.vm = &vm, .power_state = "running"};
    struct tw_error err = {0};
    int64_t id = 0, got = 0;
    assert_int_equal(tw_store_arm_vm_put(st, &v, "2026-11-01T00:00:00Z", NULL, NULL, &id, &err),
                     TW_OK);
    assert_int_equal(tw_store_vm_by_name(st, "vm\u00c9-01", &got, &err), TW_OK);
    assert_int_equal(got, id);
    /* The same VM again, its group in another ASCII case: one row. */
    snprintf(vm.resource_group, sizeof(vm.resource_group), "rg-\u00c9quipe");
    int64_t id2 = 0;
    assert_int_equal(tw_store_arm_vm_put(st, &v, "2026-11-01T01:00:00Z", NULL, NULL, &id2, &err),
                     TW_OK);
    assert_int_equal(id2, id);
    /* Beyond ASCII, no folding (as NOCASE): \u00e9 is not \u00c9. */
    assert_int_equal(tw_store_vm_by_name(st, "vm\u00e9-01", &got, &err), TW_ENOENT);
    tw_store_close(st);
    snprintf(sql, sizeof(sql), "DROP DATABASE %s", db);
    th_pg_exec(admin, sql);
}

int main(void)
{
    if (!getenv("TW_TEST_PG") || !getenv("TW_TEST_PG")[0]) {
        fprintf(stderr, "test_pg: TW_TEST_PG names no PostgreSQL server: skipped\n");
        return 77;
    }
    /* Every database of this program is PostgreSQL's. */
    setenv("TW_TEST_STORE", "pg", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_location_is_pg),
        cmocka_unit_test(test_password_refused),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test_setup_teardown(test_concurrent_migrate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_work_lock_holder_ended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pricebook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vm_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats_counts_check, setup, teardown),
        cmocka_unit_test(test_names_beyond_ascii),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
