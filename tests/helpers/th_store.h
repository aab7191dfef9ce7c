/*
 * th_store.h - where a store test keeps its database: a SQLite file in
 * the test's folder, or (TW_TEST_STORE=pg) a fresh PostgreSQL database on
 * the server TW_TEST_PG names ("host=/tmp/x user=tierwise": a base
 * connection string without dbname), so that one suite runs against both
 * implementations; and SQL under the store, on either.
 *
 * The PostgreSQL databases a test program makes are dropped when it exits
 * (TW_TEST_PG_KEEP=1 keeps them, to look at after a failure).
 *
 * What uses th_store_fixture links the store (tw_store).
 */
#ifndef TW_TEST_TH_STORE_H
#define TW_TEST_TH_STORE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this run is against PostgreSQL (TW_TEST_STORE=pg). */
bool th_store_pg(void);

/*
 * A new location for a store in DIR (SQLite: DIR/NAME; PostgreSQL: a
 * database created now, NAME only in its name; with TW_TEST_PG_SCHEMAS=1
 * a schema created now, in one of the program's four databases taken in
 * turn, as the connection's search_path), into OUT.  Asked for
 * PostgreSQL without a server (TW_TEST_PG unset, or the program's very
 * first connection fails), the program exits 77 (skipped) saying why; a
 * connection failing after the server has answered once fails the test
 * (a leak of connections, a crashed server).  The databases' names are
 * "tw_t<pid>_<8 random hex digits>_…", so that one a crashed program left
 * never collides with a later program's.
 */
void th_store_location(const char *dir, const char *name, char *out, size_t len);

/* What the store's messages call the store at LOCATION: SQLite's path,
 * or the PostgreSQL database's name (a pointer into LOCATION). */
const char *th_store_name(const char *location);

/*
 * A store holding what the SQLite database TW_FIXTURES/REL holds, into
 * OUT.  SQLite: the fixture copied to DIR/NAME as it is (opening it
 * migrates it, as an upgraded tierwise would).  PostgreSQL: the fixture
 * migrated to this binary's schema in a SQLite copy (DIR/NAME.sqlite),
 * then every row of every table the PostgreSQL schema shares with it
 * loaded into a new database (th_store_location) whose schema the store
 * made: the same rows, the same ids.  The migrated SQLite copy stays
 * (a test may compare with it, or change both alike).  Fails the test
 * when it can't.
 */
void th_store_fixture(const char *dir, const char *rel, const char *name, char *out,
                      size_t len);

/* ---- SQL under the store, on either kind (by LOCATION's) ------------- */

/* The first column of the first row SQL answers, as an integer (NULL is
 * 0, a PostgreSQL boolean 1 or 0); fails the test when SQL fails or
 * answers no row. */
long long th_sql_int(const char *location, const char *sql);

/* The first column of the first row SQL answers, as text (NULL is ""),
 * into OUT; fails the test when SQL fails or answers no row. */
void th_sql_text(const char *location, const char *sql, char *out, size_t len);

/* The schema version the database at LOCATION records (SQLite: its
 * user_version; PostgreSQL: tierwise_meta's schema_version). */
long long th_store_version(const char *location);

/* Runs SQL (one statement or several, no rows wanted); fails the test
 * when it fails, with the database's message. */
void th_sql_exec(const char *location, const char *sql);

/* How th_sql_try's SQL ended. */
enum th_sql_rc {
    TH_SQL_OK,
    TH_SQL_CONSTRAINT, /* a constraint refused it (unique, check, foreign key, not null) */
    TH_SQL_ERROR,      /* anything else (said on stderr) */
};
/* Runs SQL that may be refused: how it ended. */
enum th_sql_rc th_sql_try(const char *location, const char *sql);

/* Runs SQL (no rows wanted) on the PostgreSQL database at LOCATION;
 * false with a message on stderr when it fails. */
bool th_pg_exec(const char *location, const char *sql);
/* The first column of the first row SQL answers on the PostgreSQL
 * database at LOCATION, as an integer (a boolean as 1 or 0); fails the
 * test when there is none. */
long long th_pg_int(const char *location, const char *sql);

#endif
