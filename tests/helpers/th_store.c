/*
 * th_store.c - a store test's database, SQLite or PostgreSQL (th_store.h).
 */
#include "th_store.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool th_store_pg(void)
{
    const char *s = getenv("TW_TEST_STORE");
    return s && strcmp(s, "pg") == 0;
}

static PGconn *connect_or_skip(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "skipped: TW_TEST_STORE=pg, but the PostgreSQL server does not "
                        "answer: %s", c ? PQerrorMessage(c) : "out of memory\n");
        PQfinish(c);
        exit(77);
    }
    return c;
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
    static unsigned counter;
    char db[64], ci[1024];
    snprintf(db, sizeof(db), "tw_t%ld_%u_", (long)getpid(), counter++);
    /* NAME's letters, for whoever looks at the server */
    size_t n = strlen(db);
    for (const char *p = name; *p && n + 1 < 40; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            db[n++] = *p;
    db[n] = '\0';
    snprintf(ci, sizeof(ci), "%s dbname=postgres", base);
    PGconn *c = connect_or_skip(ci);
    char sql[128];
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template0", db);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        fprintf(stderr, "th_store_location: %s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        exit(1);
    }
    PQclear(r);
    PQfinish(c);
    snprintf(out, len, "%s dbname=%s", base, db);
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
        fprintf(stderr, "th_pg_int: %s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        exit(1);
    }
    long long v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}
