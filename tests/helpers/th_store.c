/*
 * th_store.c - a store test's database, SQLite or PostgreSQL (th_store.h).
 */
#include "th_store.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "testhelp.h"

bool th_store_pg(void)
{
    const char *s = getenv("TW_TEST_STORE");
    return s && strcmp(s, "pg") == 0;
}

static bool is_pg(const char *location)
{
    return tw_store_location_is_pg(location, strlen(location));
}

/*
 * A connection to CONNINFO.  The program's very first connection failing
 * means there is no server to test on: skipped (77).  Once the server has
 * answered in this program, a failure is the test's: a store that leaks
 * connections (max_connections reached) or a server that crashed must
 * never pass for a machine without PostgreSQL.
 */
static bool server_answered;

static PGconn *connect_or_skip(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    if (c && PQstatus(c) == CONNECTION_OK) {
        server_answered = true;
        return c;
    }
    char why[1024];
    snprintf(why, sizeof(why), "%s", c ? PQerrorMessage(c) : "out of memory\n");
    PQfinish(c);
    if (!server_answered) {
        fprintf(stderr,
                "skipped: TW_TEST_STORE=pg, but the PostgreSQL server does not "
                "answer: %s",
                why);
        exit(77);
    }
    fail_msg("th_store: the PostgreSQL server answered this program before, but a new "
             "connection to it failed (connections leaked, or the server stopped): %s",
             why);
    exit(1); /* fail_msg outside a test returns */
}

/* ---- the databases this program made, dropped when it exits ---------- */

/*
 * A location is a fresh database; or with TW_TEST_PG_SCHEMAS=1 (the
 * PostgreSQL variants tests/CMakeLists.txt registers) a fresh schema,
 * the connection's search_path (the store keeps its tables in
 * current_schema() and reads only its own there), in one of up to
 * SCHEMA_DBS databases the program makes as it first needs them: a
 * schema costs milliseconds where a database costs a copy of template0.
 * Schema locations take those databases in turn, so that up to SCHEMA_DBS
 * of them made one after another are in different databases (a copy from
 * one store to another).  Advisory locks and a database's settings are
 * shared by its schemas: a program's cases run one after another, and a
 * test that changes a database's defaults (ALTER DATABASE) wants
 * databases.
 */
#define MAX_DBS 256
#define SCHEMA_DBS 4
static char made[MAX_DBS][64];
static size_t n_made;
static char made_base[1024];
/* The databases schema locations go to, by turn (indexes into made). */
static int schema_db[SCHEMA_DBS] = {-1, -1, -1, -1};

static void drop_made(void)
{
    const char *keep = getenv("TW_TEST_PG_KEEP");
    if (n_made == 0 || (keep && strcmp(keep, "1") == 0))
        return;
    char ci[1100];
    snprintf(ci, sizeof(ci), "%s dbname=postgres", made_base);
    PGconn *c = PQconnectdb(ci);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        PQfinish(c);
        return; /* the server went away: nothing left to drop */
    }
    for (size_t i = 0; i < n_made; i++) {
        char sql[128];
        /* FORCE: a handle a failed test left open must not keep it */
        snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", made[i]);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            fprintf(stderr, "th_store: %s: %s", sql, PQerrorMessage(c));
        PQclear(r);
    }
    PQfinish(c);
    n_made = 0;
}

/* Runs SQL on CONNINFO (a database or schema being made); exits 1 saying
 * why when it fails. */
static void make_or_exit(const char *conninfo, const char *sql)
{
    PGconn *c = connect_or_skip(conninfo);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        fprintf(stderr, "th_store_location: %s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        exit(1);
    }
    PQclear(r);
    PQfinish(c);
}

/* This program's random part of its databases' names, 8 hex digits: a
 * crashed run leaves its databases behind, and a later program given the
 * same pid must not collide with them. */
static const char *run_tag(void)
{
    static char tag[9];
    if (tag[0])
        return tag;
    unsigned char b[4] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    bool got = f && fread(b, 1, sizeof(b), f) == sizeof(b);
    if (f)
        fclose(f);
    if (!got) {
        fprintf(stderr, "th_store_location: /dev/urandom can't be read: a database name "
                        "needs its random part\n");
        exit(1);
    }
    snprintf(tag, sizeof(tag), "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
    return tag;
}

/* A new database named "tw_t<pid>_<random>_<N>_<NAME's letters>": its
 * index. */
static size_t make_db(const char *base, const char *name, unsigned n)
{
    if (n_made == MAX_DBS) {
        fprintf(stderr, "th_store_location: more than %d databases in one test program\n", MAX_DBS);
        exit(1);
    }
    char db[64], ci[1100], sql[128];
    snprintf(db, sizeof(db), "tw_t%ld_%s_%u_", (long)getpid(), run_tag(), n);
    /* NAME's letters, for whoever looks at the server (63 bytes at most) */
    size_t k = strlen(db);
    for (const char *p = name; *p && k + 1 < 56; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            db[k++] = *p;
    db[k] = '\0';
    snprintf(ci, sizeof(ci), "%s dbname=postgres", base);
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template0", db);
    make_or_exit(ci, sql);
    if (n_made == 0) {
        snprintf(made_base, sizeof(made_base), "%s", base);
        atexit(drop_made);
    }
    snprintf(made[n_made], sizeof(made[0]), "%s", db);
    return n_made++;
}

void th_store_location(const char *dir, const char *name, char *out, size_t len)
{
    if (!th_store_pg()) {
        snprintf(out, len, "%s/%s", dir, name);
        return;
    }
    const char *base = getenv("TW_TEST_PG");
    if (!base || !*base) {
        fprintf(stderr, "skipped: TW_TEST_STORE=pg, but TW_TEST_PG names no PostgreSQL "
                        "server (tests/run.sh starts one)\n");
        exit(77);
    }
    if (strlen(base) >= sizeof(made_base) - 16) {
        fprintf(stderr, "th_store_location: TW_TEST_PG is too long\n");
        exit(1);
    }
    static unsigned counter;
    const unsigned n = counter++;
    const char *mode = getenv("TW_TEST_PG_SCHEMAS");
    if (!mode || strcmp(mode, "1") != 0) {
        snprintf(out, len, "%s dbname=%s", base, made[make_db(base, name, n)]);
        return;
    }
    int *slot = &schema_db[n % SCHEMA_DBS];
    if (*slot < 0)
        *slot = (int)make_db(base, "schemas", n % SCHEMA_DBS);
    const char *db = made[*slot];
    char schema[64], ci[1200], sql[128];
    snprintf(schema, sizeof(schema), "s%u_", n);
    size_t k = strlen(schema);
    for (const char *p = name; *p && k + 1 < 40; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            schema[k++] = *p;
    schema[k] = '\0';
    snprintf(ci, sizeof(ci), "%s dbname=%s", base, db);
    snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
    make_or_exit(ci, sql);
    snprintf(out, len, "%s dbname=%s options='-csearch_path=%s'", base, db, schema);
}

const char *th_store_name(const char *location)
{
    const char *db = strstr(location, "dbname=");
    if (!is_pg(location) || !db)
        return location;
    /* the database's name alone, as the store's messages give it */
    static char names[4][64];
    static unsigned next;
    char *out = names[next++ % 4];
    db += strlen("dbname=");
    size_t n = strcspn(db, " ");
    snprintf(out, sizeof(names[0]), "%.*s", (int)(n < 63 ? n : 63), db);
    return out;
}

/* ---- fixtures: a SQLite database's rows in a PostgreSQL store -------- */

/* Every identity column of the database goes on past its table's highest
 * id, as SQLite's integer keys do after rows written with ids of their
 * own (a test's INSERT with ids, a fixture's rows). */
static const char *const identities_past_rows =
    "DO $$DECLARE r record; BEGIN "
    "FOR r IN SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND is_identity = 'YES' LOOP "
    "EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), "
    "coalesce((SELECT max(%I) FROM %I), 0) + 1, false)', "
    "r.table_name, r.column_name, r.column_name, r.table_name); "
    "END LOOP; END$$";

static PGresult *pg_ok(PGconn *c, PGresult *r, const char *what)
{
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        fail_msg("th_store_fixture: %s: %s", what, msg);
    }
    return r;
}

/* Whether SQLite's TABLE has the column COL. */
static bool sqlite_has(sqlite3 *db, const char *table, const char *col)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &q,
                           NULL) != SQLITE_OK)
        fail_msg("th_store_fixture: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, col, -1, SQLITE_STATIC);
    bool has = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return has;
}

/* Appends S to BUF (capacity CAP), failing the test past it. */
static void cat(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    int w = snprintf(buf + n, cap - n, "%s", s);
    if (w < 0 || (size_t)w >= cap - n)
        fail_msg("th_store_fixture: a statement longer than %zu bytes", cap);
}

#define MAX_COLS 64

/* Copies every row of TABLE from DB into C, in the columns both have. */
static void copy_table(sqlite3 *db, PGconn *c, const char *table)
{
    const char *cols_sql = "SELECT column_name, data_type FROM information_schema.columns "
                           "WHERE table_schema = current_schema() AND table_name = $1 AND "
                           "is_generated = 'NEVER' ORDER BY ordinal_position";
    const char *p[1] = {table};
    PGresult *cols = pg_ok(c, PQexecParams(c, cols_sql, 1, NULL, p, NULL, NULL, 0), cols_sql);
    char names[MAX_COLS][64];
    bool bytea[MAX_COLS];
    int n = 0;
    for (int i = 0; i < PQntuples(cols); i++) {
        const char *name = PQgetvalue(cols, i, 0);
        if (!sqlite_has(db, table, name))
            continue; /* PostgreSQL's own (its default fills it) */
        if (n == MAX_COLS)
            fail_msg("th_store_fixture: %s has more than %d columns", table, MAX_COLS);
        snprintf(names[n], sizeof(names[n]), "%s", name);
        bytea[n] = strcmp(PQgetvalue(cols, i, 1), "bytea") == 0;
        n++;
    }
    PQclear(cols);
    if (n == 0)
        return;
    /* The names come from the catalogues of both, never from a value. */
    char sel[4096] = "SELECT ", ins[4096] = "", del[160];
    snprintf(ins, sizeof(ins), "INSERT INTO %s (", table);
    for (int i = 0; i < n; i++) {
        cat(sel, sizeof(sel), i ? ", \"" : "\"");
        cat(sel, sizeof(sel), names[i]);
        cat(sel, sizeof(sel), "\"");
        cat(ins, sizeof(ins), i ? ", \"" : "\"");
        cat(ins, sizeof(ins), names[i]);
        cat(ins, sizeof(ins), "\"");
    }
    cat(sel, sizeof(sel), " FROM \"");
    cat(sel, sizeof(sel), table);
    cat(sel, sizeof(sel), "\"");
    cat(ins, sizeof(ins), ") VALUES (");
    for (int i = 0; i < n; i++) {
        char ph[16];
        snprintf(ph, sizeof(ph), "%s$%d", i ? ", " : "", i + 1);
        cat(ins, sizeof(ins), ph);
    }
    cat(ins, sizeof(ins), ")");
    /* What the schema seeded is replaced by the fixture's rows. */
    snprintf(del, sizeof(del), "DELETE FROM %s", table);
    PQclear(pg_ok(c, PQexec(c, del), del));
    PQclear(pg_ok(c, PQprepare(c, "th_ins", ins, n, NULL), ins));

    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sel, -1, &q, NULL) != SQLITE_OK)
        fail_msg("th_store_fixture: %s: %s", sel, sqlite3_errmsg(db));
    const char *vals[MAX_COLS];
    char *hex[MAX_COLS];
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (int i = 0; i < n; i++) {
            hex[i] = NULL;
            if (sqlite3_column_type(q, i) == SQLITE_NULL) {
                vals[i] = NULL;
            } else if (bytea[i]) {
                /* bytea in its text form: \x and two hex digits a byte */
                const unsigned char *b = sqlite3_column_blob(q, i);
                int len = sqlite3_column_bytes(q, i);
                hex[i] = malloc((size_t)len * 2 + 3);
                assert_non_null(hex[i]);
                strcpy(hex[i], "\\x");
                for (int k = 0; k < len; k++)
                    snprintf(hex[i] + 2 + 2 * k, 3, "%02x", b[k]);
                vals[i] = hex[i];
            } else {
                vals[i] = (const char *)sqlite3_column_text(q, i);
            }
        }
        PGresult *r = PQexecPrepared(c, "th_ins", n, vals, NULL, NULL, 0);
        for (int i = 0; i < n; i++)
            free(hex[i]);
        pg_ok(c, r, ins);
        PQclear(r);
    }
    if (rc != SQLITE_DONE)
        fail_msg("th_store_fixture: %s: %s", sel, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    PQclear(pg_ok(c, PQexec(c, "DEALLOCATE th_ins"), "DEALLOCATE th_ins"));
}

void th_store_fixture(const char *dir, const char *rel, const char *name, char *out, size_t len)
{
    if (!th_store_pg()) {
        snprintf(out, len, "%s/%s", dir, name);
        th_fixture_copy(rel, out);
        return;
    }
    /* The fixture at this binary's schema, as SQLite migrates it. */
    char src[4200];
    snprintf(src, sizeof(src), "%s/%s.sqlite", dir, name);
    th_fixture_copy(rel, src);
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    if (tw_store_open(src, &st, &err) != TW_OK)
        fail_msg("th_store_fixture: %s: %s", rel, err.msg);
    tw_store_close(st);
    /* A PostgreSQL store with its schema, then the rows. */
    th_store_location(dir, name, out, len);
    if (tw_store_open(out, &st, &err) != TW_OK)
        fail_msg("th_store_fixture: the PostgreSQL store: %s", err.msg);
    tw_store_close(st);

    sqlite3 *db;
    if (sqlite3_open_v2(src, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fail_msg("th_store_fixture: %s: %s", src, sqlite3_errmsg(db));
    PGconn *c = connect_or_skip(out);
    /* Foreign keys (triggers) wait: the tables are loaded in any order. */
    PQclear(pg_ok(c, PQexec(c, "BEGIN"), "BEGIN"));
    PQclear(pg_ok(c, PQexec(c, "SET LOCAL session_replication_role = replica"),
                  "session_replication_role"));
    const char *tables_sql = "SELECT table_name FROM information_schema.tables WHERE "
                             "table_schema = current_schema() AND table_type = 'BASE TABLE' "
                             "ORDER BY table_name";
    PGresult *tables = pg_ok(c, PQexec(c, tables_sql), tables_sql);
    for (int i = 0; i < PQntuples(tables); i++) {
        const char *t = PQgetvalue(tables, i, 0);
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db,
                               "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                               "name = ?1",
                               -1, &q, NULL) != SQLITE_OK)
            fail_msg("th_store_fixture: %s", sqlite3_errmsg(db));
        sqlite3_bind_text(q, 1, t, -1, SQLITE_STATIC);
        bool shared = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
        if (shared)
            copy_table(db, c, t);
    }
    PQclear(tables);
    PQclear(pg_ok(c, PQexec(c, identities_past_rows), "moving the identities past the rows"));
    PQclear(pg_ok(c, PQexec(c, "COMMIT"), "COMMIT"));
    PQfinish(c);
    sqlite3_close(db);
}

/* ---- SQL under the store --------------------------------------------- */

static sqlite3 *sqlite_or_fail(const char *path)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
        sqlite3_close(db);
        fail_msg("th_sql: %s: %s", path, msg);
    }
    sqlite3_busy_timeout(db, 5000);
    return db;
}

long long th_sql_int(const char *location, const char *sql)
{
    if (is_pg(location))
        return th_pg_int(location, sql);
    sqlite3 *db = sqlite_or_fail(location);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
        sqlite3_close(db);
        fail_msg("%s: %s", sql, msg);
    }
    if (sqlite3_step(q) != SQLITE_ROW) {
        sqlite3_finalize(q);
        sqlite3_close(db);
        fail_msg("%s: no row", sql);
    }
    long long v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

void th_sql_text(const char *location, const char *sql, char *out, size_t len)
{
    if (is_pg(location)) {
        PGconn *c = connect_or_skip(location);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1 || PQnfields(r) < 1) {
            char msg[1024];
            /* the status first: a failed statement has no rows either */
            snprintf(msg, sizeof(msg), "%s",
                     PQresultStatus(r) != PGRES_TUPLES_OK ? PQerrorMessage(c) : "no row\n");
            PQclear(r);
            PQfinish(c);
            fail_msg("th_sql_text: %s: %s", sql, msg);
        }
        snprintf(out, len, "%s", PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(c);
        return;
    }
    sqlite3 *db = sqlite_or_fail(location);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
        sqlite3_close(db);
        fail_msg("%s: %s", sql, msg);
    }
    if (sqlite3_step(q) != SQLITE_ROW) {
        sqlite3_finalize(q);
        sqlite3_close(db);
        fail_msg("%s: no row", sql);
    }
    const unsigned char *t = sqlite3_column_text(q, 0);
    snprintf(out, len, "%s", t ? (const char *)t : "");
    sqlite3_finalize(q);
    sqlite3_close(db);
}

long long th_store_version(const char *location)
{
    return th_sql_int(location, is_pg(location) ? "SELECT value::bigint FROM tierwise_meta "
                                                  "WHERE key = 'schema_version'"
                                                : "PRAGMA user_version");
}

enum th_sql_rc th_sql_try(const char *location, const char *sql)
{
    if (is_pg(location)) {
        PGconn *c = connect_or_skip(location);
        PGresult *r = PQexec(c, sql);
        ExecStatusType s = PQresultStatus(r);
        enum th_sql_rc rc = TH_SQL_OK;
        if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
            const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
            /* class 23: integrity constraint violation */
            rc = state && strncmp(state, "23", 2) == 0 ? TH_SQL_CONSTRAINT : TH_SQL_ERROR;
            fprintf(stderr, "th_sql: %s: %s", sql, PQerrorMessage(c));
        } else {
            PQclear(r);
            r = PQexec(c, identities_past_rows);
            if (PQresultStatus(r) != PGRES_COMMAND_OK) {
                fprintf(stderr, "th_sql: moving the identities past the rows: %s",
                        PQerrorMessage(c));
                rc = TH_SQL_ERROR;
            }
        }
        PQclear(r);
        PQfinish(c);
        return rc;
    }
    sqlite3 *db = sqlite_or_fail(location);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "th_sql: %s: %s\n", sql, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    sqlite3_close(db);
    if (rc == SQLITE_OK)
        return TH_SQL_OK;
    return (rc & 0xff) == SQLITE_CONSTRAINT ? TH_SQL_CONSTRAINT : TH_SQL_ERROR;
}

void th_sql_exec(const char *location, const char *sql)
{
    if (th_sql_try(location, sql) != TH_SQL_OK)
        fail_msg("th_sql_exec failed (the database's message is above): %s", sql);
}

bool th_pg_exec(const char *location, const char *sql)
{
    PGconn *c = connect_or_skip(location);
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "th_pg_exec: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return ok;
}

long long th_pg_int(const char *location, const char *sql)
{
    PGconn *c = connect_or_skip(location);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1 || PQnfields(r) < 1) {
        char msg[1024];
        /* the status first: a failed statement has no rows either */
        snprintf(msg, sizeof(msg), "%s",
                 PQresultStatus(r) != PGRES_TUPLES_OK ? PQerrorMessage(c) : "no row\n");
        PQclear(r);
        PQfinish(c);
        fail_msg("th_pg_int: %s: %s", sql, msg);
    }
    /* a boolean reads as 1 or 0, as SQLite's comparisons do */
    const char *v0 = PQgetvalue(r, 0, 0);
    long long v = strcmp(v0, "t") == 0 ? 1 : strtoll(v0, NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}
