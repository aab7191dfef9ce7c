/*
 * th_store.h - where a store test keeps its database: a SQLite file in
 * the test's folder, or (TW_TEST_STORE=pg) a fresh PostgreSQL database on
 * the server TW_TEST_PG names ("host=/tmp/x user=tierwise": a base
 * connection string without dbname), so that one suite runs against both
 * implementations.
 */
#ifndef TW_TEST_TH_STORE_H
#define TW_TEST_TH_STORE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether this run is against PostgreSQL (TW_TEST_STORE=pg). */
bool th_store_pg(void);

/*
 * A new location for a store in DIR (SQLite: DIR/NAME; PostgreSQL: a
 * database created now, NAME only in its name), into OUT.  Asked for
 * PostgreSQL without a server (TW_TEST_PG unset, or it does not answer),
 * the program exits 77 (skipped) saying why.
 */
void th_store_location(const char *dir, const char *name, char *out, size_t len);

/* Runs SQL (no rows wanted) on the PostgreSQL database at LOCATION;
 * false with a message on stderr when it fails.  For tests that reach
 * under the store (as the SQLite tests do with sqlite3 directly). */
bool th_pg_exec(const char *location, const char *sql);
/* The first column of the first row SQL answers, as an integer; exits
 * the test (fail) when there is none. */
long long th_pg_int(const char *location, const char *sql);

#endif
