/*
 * store_pg_core.c - the PostgreSQL store's connection and the helpers
 * every store_pg*.c file runs its statements through (store_pg.h).
 */
#include "store/store_pg.h"

#include "core/time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Statement slots are numbered across the process, on first use. */
static atomic_int next_slot;

/* ---- parameters ---- */

void tw_pg_p_init(struct tw_pg_params *p)
{
    p->n = 0;
}

static int p_next(struct tw_pg_params *p)
{
    /* A statement with more parameters than this is a programming error:
     * the extra ones are dropped and PostgreSQL refuses the statement
     * ("bind message supplies N parameters"), so it fails, never binds
     * the wrong value. */
    if (p->n >= TW_PG_MAX_PARAMS)
        return TW_PG_MAX_PARAMS - 1;
    return p->n++;
}

void tw_pg_p_text(struct tw_pg_params *p, const char *s)
{
    int i = p_next(p);
    p->v[i] = s;
    p->len[i] = 0;
    p->fmt[i] = 0;
}

void tw_pg_p_text0(struct tw_pg_params *p, const char *s)
{
    tw_pg_p_text(p, s && s[0] ? s : NULL);
}

void tw_pg_p_textn(struct tw_pg_params *p, const char *s, size_t len)
{
    /* Text parameters are read up to their NUL: a length-bounded one goes
     * in binary form, which for text is its bytes. */
    int i = p_next(p);
    p->v[i] = s;
    p->len[i] = (int)(len > INT32_MAX ? INT32_MAX : len);
    p->fmt[i] = 1;
}

void tw_pg_p_int(struct tw_pg_params *p, int64_t v)
{
    int i = p_next(p);
    snprintf(p->num[i], sizeof(p->num[i]), "%" PRId64, v);
    p->v[i] = p->num[i];
    p->len[i] = 0;
    p->fmt[i] = 0;
}

void tw_pg_p_real(struct tw_pg_params *p, double v)
{
    int i = p_next(p);
    snprintf(p->num[i], sizeof(p->num[i]), "%.17g", v);
    p->v[i] = p->num[i];
    p->len[i] = 0;
    p->fmt[i] = 0;
}

void tw_pg_p_bool(struct tw_pg_params *p, bool v)
{
    tw_pg_p_int(p, v ? 1 : 0);
}

void tw_pg_p_null(struct tw_pg_params *p)
{
    tw_pg_p_text(p, NULL);
}

void tw_pg_p_bytes(struct tw_pg_params *p, const void *b, size_t len)
{
    int i = p_next(p);
    p->v[i] = b;
    p->len[i] = (int)(len > INT32_MAX ? INT32_MAX : len);
    p->fmt[i] = 1;
}

/* ---- errors ---- */

enum tw_err tw_pg_fail(struct tw_pg *pg, const PGresult *res, const char *what,
                       struct tw_error *err)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!msg || !*msg)
        msg = pg->conn ? PQerrorMessage(pg->conn) : "not connected";
    char m[384];
    snprintf(m, sizeof(m), "%s", msg && *msg ? msg : "unknown error");
    size_t ml = strlen(m);
    while (ml && (m[ml - 1] == '\n' || m[ml - 1] == ' '))
        m[--ml] = '\0';
    snprintf(pg->sqlstate, sizeof(pg->sqlstate), "%s", state ? state : "");
    enum tw_err code = TW_EIO;
    const char *hint = "";
    bool lost = !pg->conn || PQstatus(pg->conn) != CONNECTION_OK;
    if (lost) {
        hint = "; the database server can't be reached: check that it runs and that "
               "PGHOST/host and the port are right";
    } else if (state && strncmp(state, "23", 2) == 0) {
        code = TW_EINVAL;
    } else if (state && strcmp(state, "42501") == 0) {
        code = TW_EPERM;
        hint = "; the database user lacks a privilege: grant it the tierwise role's "
               "privileges (README, \"Roles and grants\")";
    } else if (state && strcmp(state, "53200") == 0) {
        code = TW_ENOMEM;
    } else if (state && strcmp(state, "53100") == 0) {
        hint = "; the database server's disk is full";
    } else if (state && strcmp(state, "25006") == 0) {
        /* A standby, or a write inside one of the store's read-only
         * snapshots (tw_pg_begin_read: a report or a walk open). */
        const char *hs = PQparameterStatus(pg->conn, "in_hot_standby");
        if (hs && strcmp(hs, "on") == 0)
            hint = "; the server is a read-only standby: point tierwise at the primary";
        else
            hint = "; a write inside a read-only read of the store (a monthly report or a "
                   "fleet walk still open on this handle)";
    } else if (state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)) {
        hint = "; another backend's transaction collided with this one: retry";
    } else if (state && strncmp(state, "57P0", 4) == 0) {
        hint = "; the database server is shutting down or restarting";
    }
    char st[24] = "";
    if (state)
        snprintf(st, sizeof(st), " (SQLSTATE %.5s)", state);
    return tw_error_set(err, code, "%s: %s: %s%s%s", pg->label, what, m, st, hint);
}

bool tw_pg_retryable(const struct tw_pg *pg)
{
    return strcmp(pg->sqlstate, "40001") == 0 || strcmp(pg->sqlstate, "40P01") == 0;
}

/* ---- running statements ---- */

static int stmt_slot(struct tw_pg_stmt *q)
{
    int s = atomic_load(&q->slot);
    if (s)
        return s - 1;
    int mine = atomic_fetch_add(&next_slot, 1) + 1;
    int expect = 0;
    if (atomic_compare_exchange_strong(&q->slot, &expect, mine))
        return mine - 1;
    return expect - 1; /* another thread numbered it first: a slot is wasted */
}

static enum tw_err ensure_prepared(struct tw_pg *pg, struct tw_pg_stmt *q, int slot,
                                   const char *what, struct tw_error *err)
{
    if ((size_t)slot < pg->n_prepared && pg->prepared[slot])
        return TW_OK;
    if ((size_t)slot >= pg->n_prepared) {
        size_t n = pg->n_prepared ? pg->n_prepared : 64;
        while (n <= (size_t)slot)
            n *= 2;
        unsigned char *p = realloc(pg->prepared, n);
        if (!p)
            return tw_error_set(err, TW_ENOMEM, "out of memory preparing a statement");
        memset(p + pg->n_prepared, 0, n - pg->n_prepared);
        pg->prepared = p;
        pg->n_prepared = n;
    }
    char name[24];
    snprintf(name, sizeof(name), "tw%d", slot);
    PGresult *r = PQprepare(pg->conn, name, q->sql, 0, NULL);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
        enum tw_err rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        return rc;
    }
    PQclear(r);
    pg->prepared[slot] = 1;
    return TW_OK;
}

static bool conn_lost(const struct tw_pg *pg)
{
    return !pg->conn || PQstatus(pg->conn) != CONNECTION_OK;
}

/* Whether the last failure ended the session: the connection is down, or
 * the server said it was ending it (an administrator's command, a
 * shutdown, a crash of another backend: SQLSTATE 57P01-57P03; a
 * connection failure: class 08), which libpq may read as the answer to
 * the next statement while it still counts the connection good. */
static bool session_gone(const struct tw_pg *pg)
{
    return conn_lost(pg) || strncmp(pg->sqlstate, "57P0", 4) == 0 ||
           strncmp(pg->sqlstate, "08", 2) == 0;
}

static enum tw_err run_once(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                            PGresult **res, int64_t *n, const char *what, struct tw_error *err)
{
    int slot = stmt_slot(q);
    enum tw_err rc = ensure_prepared(pg, q, slot, what, err);
    if (rc != TW_OK)
        return rc;
    char name[24];
    snprintf(name, sizeof(name), "tw%d", slot);
    PGresult *r = PQexecPrepared(pg->conn, name, p ? p->n : 0, p ? p->v : NULL,
                                 p ? p->len : NULL, p ? p->fmt : NULL, 0);
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
        rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        return rc;
    }
    pg->sqlstate[0] = '\0';
    if (n) {
        const char *t = PQcmdTuples(r);
        *n = t && *t ? strtoll(t, NULL, 10) : 0;
    }
    if (res)
        *res = r;
    else
        PQclear(r);
    return TW_OK;
}

/* Whether Q may run again after a lost answer: a plain SELECT (no row
 * locks, no sequence; an advisory lock asked for again on a new session
 * is asked for anew, the old session's having died with it). */
static bool read_only(const struct tw_pg_stmt *q)
{
    const char *s = q->sql;
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    return strncasecmp(s, "SELECT", 6) == 0 && !strstr(q->sql, "FOR UPDATE") &&
           !strstr(q->sql, "FOR NO KEY UPDATE") && !strstr(q->sql, "FOR SHARE") &&
           !strstr(q->sql, "nextval");
}

static enum tw_err run(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                       PGresult **res, int64_t *n, const char *what, struct tw_error *err)
{
    if (res)
        *res = NULL;
    if (conn_lost(pg) && pg->tx_depth == 0) {
        enum tw_err rc = tw_pg_reconnect(pg, err);
        if (rc != TW_OK)
            return rc;
    }
    enum tw_err rc = run_once(pg, q, p, res, n, what, err);
    if (rc != TW_OK && pg->tx_depth == 0 && session_gone(pg) && read_only(q)) {
        /* Lost between statements (a server restart, a failover): a read
         * runs once more on a new connection.  A write does not: the
         * server may have committed it before the connection went, and
         * sending it again could apply it twice (an attempt counted
         * twice); its caller sees the error and its own retry (an agent
         * resending an idempotent report, the executor's next tick) is
         * the safe one. */
        struct tw_error e2;
        tw_error_clear(&e2);
        if (tw_pg_reconnect(pg, &e2) == TW_OK) {
            tw_error_clear(err);
            rc = run_once(pg, q, p, res, n, what, err);
        }
    }
    return rc;
}

enum tw_err tw_pg_run(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                      PGresult **res, const char *what, struct tw_error *err)
{
    return run(pg, q, p, res, NULL, what, err);
}

enum tw_err tw_pg_run_n(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                        int64_t *n, const char *what, struct tw_error *err)
{
    int64_t dummy;
    return run(pg, q, p, NULL, n ? n : &dummy, what, err);
}

enum tw_err tw_pg_exec(struct tw_pg *pg, const char *sql, const char *what,
                       struct tw_error *err)
{
    if (conn_lost(pg) && pg->tx_depth == 0) {
        enum tw_err rc = tw_pg_reconnect(pg, err);
        if (rc != TW_OK)
            return rc;
    }
    PGresult *r = PQexec(pg->conn, sql);
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        enum tw_err rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        return rc;
    }
    PQclear(r);
    pg->sqlstate[0] = '\0';
    return TW_OK;
}

/* ---- a VM's place ---- */

TW_PG_STMT(q_lock_place,
           "SELECT pg_advisory_xact_lock($1::int, hashtext(lower($2::text COLLATE \"C\") || "
           "'/' || lower($3::text COLLATE \"C\") || '/' || lower($4::text COLLATE \"C\")))");

enum tw_err tw_pg_lock_place(struct tw_pg *pg, const char *name, const char *group,
                             const char *subscription, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, TW_PG_LOCK_PLACE);
    tw_pg_p_text(&p, subscription ? subscription : "");
    tw_pg_p_text(&p, group ? group : "");
    tw_pg_p_text(&p, name ? name : "");
    return tw_pg_run(pg, &q_lock_place, &p, NULL, "waiting for the VM's place", err);
}

/* ---- transactions ---- */

enum tw_err tw_pg_begin(struct tw_pg *pg, const char *what, struct tw_error *err)
{
    char sql[48];
    if (pg->tx_depth == 0)
        snprintf(sql, sizeof(sql), "BEGIN");
    else
        snprintf(sql, sizeof(sql), "SAVEPOINT tw_sp%d", pg->tx_depth);
    enum tw_err rc = tw_pg_exec(pg, sql, what, err);
    if (rc != TW_OK && pg->tx_depth == 0 && session_gone(pg)) {
        /* The session was ended under us (a server restart, an idle
         * timeout, pg_terminate_backend): nothing has run yet, so the
         * transaction starts on a new connection. */
        struct tw_error e2;
        tw_error_clear(&e2);
        if (tw_pg_reconnect(pg, &e2) == TW_OK) {
            tw_error_clear(err);
            rc = tw_pg_exec(pg, sql, what, err);
        }
    }
    if (rc == TW_OK)
        pg->tx_depth++;
    return rc;
}

enum tw_err tw_pg_commit(struct tw_pg *pg, const char *what, struct tw_error *err)
{
    if (pg->tx_depth <= 0)
        return tw_error_set(err, TW_EINVAL, "%s: %s: no transaction to commit", pg->label,
                            what);
    char sql[48];
    if (pg->tx_depth == 1)
        snprintf(sql, sizeof(sql), "COMMIT");
    else
        snprintf(sql, sizeof(sql), "RELEASE SAVEPOINT tw_sp%d", pg->tx_depth - 1);
    PGresult *r = PQexec(pg->conn, sql);
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    enum tw_err rc = TW_OK;
    if (s != PGRES_COMMAND_OK) {
        rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        if (pg->tx_depth > 1) {
            /* The savepoint is still open: undo it, as a rollback would. */
            tw_pg_rollback(pg);
        } else {
            /* A failed COMMIT ends the transaction (rolled back). */
            pg->tx_depth = 0;
            if (!conn_lost(pg)) {
                PGresult *rb = PQexec(pg->conn, "ROLLBACK");
                PQclear(rb);
            }
        }
        return rc;
    }
    /* COMMIT of a transaction that had failed answers ROLLBACK. */
    const char *tag = PQcmdStatus(r);
    if (pg->tx_depth == 1 && tag && strcmp(tag, "ROLLBACK") == 0)
        rc = tw_error_set(err, TW_EIO, "%s: %s: the transaction was rolled back", pg->label,
                          what);
    PQclear(r);
    pg->tx_depth--;
    return rc;
}

void tw_pg_rollback(struct tw_pg *pg)
{
    if (pg->tx_depth <= 0)
        return;
    if (conn_lost(pg)) {
        pg->tx_depth = 0;
        return;
    }
    char sql[96];
    if (pg->tx_depth == 1)
        snprintf(sql, sizeof(sql), "ROLLBACK");
    else
        snprintf(sql, sizeof(sql), "ROLLBACK TO SAVEPOINT tw_sp%d; RELEASE SAVEPOINT tw_sp%d",
                 pg->tx_depth - 1, pg->tx_depth - 1);
    PGresult *r = PQexec(pg->conn, sql);
    bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    pg->tx_depth--;
    if (!ok && pg->tx_depth > 0) {
        /* The savepoint could not be undone: the whole transaction goes. */
        PGresult *rb = PQexec(pg->conn, "ROLLBACK");
        PQclear(rb);
        pg->tx_depth = 0;
    }
}

/* ---- reading rows ---- */

bool tw_pg_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) != 0;
}

int64_t tw_pg_int(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

double tw_pg_real(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0.0;
    return strtod(PQgetvalue(r, row, col), NULL);
}

const char *tw_pg_text(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return "";
    return PQgetvalue(r, row, col);
}

void tw_pg_copy(char *dst, size_t len, const PGresult *r, int row, int col)
{
    if (!len)
        return;
    const char *s = tw_pg_text(r, row, col);
    size_t n = (size_t)PQgetlength(r, row, col);
    if (PQgetisnull(r, row, col))
        n = 0;
    if (n >= len) {
        n = len - 1;
        /* not in the middle of a UTF-8 sequence */
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
}

char *tw_pg_dup(const PGresult *r, int row, int col, size_t *len)
{
    const char *s = tw_pg_text(r, row, col);
    size_t n = PQgetisnull(r, row, col) ? 0 : (size_t)PQgetlength(r, row, col);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    if (len)
        *len = n;
    return d;
}

ssize_t tw_pg_bytes(const PGresult *r, int row, int col, void *dst, size_t cap)
{
    if (PQgetisnull(r, row, col))
        return -1;
    size_t n = 0;
    unsigned char *b = PQunescapeBytea((const unsigned char *)PQgetvalue(r, row, col), &n);
    if (!b)
        return -1;
    ssize_t out = -1;
    if (n <= cap) {
        memcpy(dst, b, n);
        out = (ssize_t)n;
    }
    PQfreemem(b);
    return out;
}

/* ---- the one clock ---- */

void tw_pg_now_text(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    ns -= tw_floor_mod(ns, 1000000);
    if (!tw_rfc3339_format_ns(ns, 0, 3, out, 40))
        snprintf(out, 40, "1970-01-01T00:00:00.000Z");
}

int64_t tw_pg_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the connection ---- */

static void make_label(struct tw_pg *pg, PQconninfoOption *opts)
{
    const char *db = NULL, *host = NULL, *port = NULL, *service = NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (!o->val || !*o->val)
            continue;
        if (strcmp(o->keyword, "dbname") == 0)
            db = o->val;
        else if (strcmp(o->keyword, "host") == 0)
            host = o->val;
        else if (strcmp(o->keyword, "port") == 0)
            port = o->val;
        else if (strcmp(o->keyword, "service") == 0)
            service = o->val;
    }
    /* A dbname may itself be a connection string; then it is not shown. */
    if (db && (strchr(db, '=') || strstr(db, "://")))
        db = NULL;
    snprintf(pg->label, sizeof(pg->label), "PostgreSQL database %.64s%s%.96s%s%.16s%s%.64s",
             db ? db : "(default)", host ? " on " : "", host ? host : "", port ? ":" : "",
             port ? port : "", service ? " of service " : "", service ? service : "");
}

enum tw_err tw_pg_connect(struct tw_pg *pg, const char *conninfo, struct tw_error *err)
{
    snprintf(pg->label, sizeof(pg->label), "PostgreSQL database");
    if (strlen(conninfo) >= sizeof(pg->conninfo))
        return tw_error_set(err, TW_EINVAL, "the PostgreSQL connection string is longer than "
                                            "%zu bytes", sizeof(pg->conninfo) - 1);
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    if (!opts) {
        bool oom = !perr;
        PQfreemem(perr);
        /* Neither the string nor libpq's reason is repeated: the reason
         * quotes the words it tripped on, which may be a secret's. */
        if (oom)
            return tw_error_set(err, TW_ENOMEM, "out of memory reading the PostgreSQL "
                                                "connection string");
        return tw_error_set(err, TW_EINVAL,
                            "the PostgreSQL connection string does not parse (its words are "
                            "not repeated here); give a postgresql://user@host/dbname URI with "
                            "%%-escapes, or keyword=value pairs separated by spaces, a value "
                            "with spaces in single quotes");
    }
    enum tw_err rc = TW_OK;
    for (PQconninfoOption *o = opts; o->keyword && rc == TW_OK; o++) {
        if (!o->val || !*o->val)
            continue;
        const char *secret = NULL;
        if (strcmp(o->keyword, "password") == 0)
            secret = "password";
        else if (strcmp(o->keyword, "sslpassword") == 0)
            secret = "key passphrase (sslpassword)";
        else if (strcmp(o->keyword, "dbname") == 0 &&
                 (strchr(o->val, '=') || strstr(o->val, "://"))) {
            /* A dbname that is itself a connection string (libpq expands
             * one level): its password is refused as well, and one that
             * does not parse is refused unread. */
            char *e2 = NULL;
            PQconninfoOption *inner = PQconninfoParse(o->val, &e2);
            PQfreemem(e2);
            if (!inner) {
                rc = tw_error_set(err, TW_EINVAL, "the PostgreSQL connection string's dbname is "
                                                  "a connection string that does not parse; "
                                                  "give the pairs at the top level");
                break;
            }
            for (PQconninfoOption *i = inner; i->keyword; i++)
                if (i->val && *i->val &&
                    (strcmp(i->keyword, "password") == 0 || strcmp(i->keyword, "sslpassword") == 0))
                    secret = "password (in its dbname)";
            PQconninfoFree(inner);
        }
        if (secret)
            rc = tw_error_set(err, TW_EINVAL,
                              "the PostgreSQL connection string carries a %s; a secret never "
                              "goes on a command line or into a log: put a password in "
                              "~/.pgpass or the file PGPASSFILE names (a key's passphrase: an "
                              "unencrypted key file, readable by the service alone), or use a "
                              "service file (PGSERVICEFILE), and give the string without it",
                              secret);
    }
    if (rc != TW_OK) {
        PQconninfoFree(opts);
        return rc;
    }
    make_label(pg, opts);
    PQconninfoFree(opts);
    snprintf(pg->conninfo, sizeof(pg->conninfo), "%s", conninfo);
    return tw_pg_reconnect(pg, err);
}

enum tw_err tw_pg_reconnect(struct tw_pg *pg, struct tw_error *err)
{
    tw_pg_disconnect(pg);
    /* Defaults the location may override (it comes after them): a server
     * that does not answer fails a connect in 10 s rather than hanging
     * the probe of /healthz, and over TCP a peer that is gone (a network
     * cut, a machine lost) is noticed in about a minute. */
    const char *const keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval",
                                "keepalives_count", "tcp_user_timeout", "dbname",
                                "application_name", "fallback_application_name",
                                "client_encoding", NULL};
    /* After the location: text goes both ways as UTF-8, whatever
     * PGCLIENTENCODING says (else it would be stored converted twice). */
    const char *const vals[] = {"10", "30", "10", "3", "60000", pg->conninfo, NULL, "tierwise",
                                "UTF8", NULL};
    /* expand_dbname: the dbname value is the whole connection string. */
    pg->conn = PQconnectdbParams(keys, vals, 1);
    if (!pg->conn)
        return tw_error_set(err, TW_ENOMEM, "out of memory connecting to %s", pg->label);
    if (PQstatus(pg->conn) != CONNECTION_OK) {
        char m[384];
        snprintf(m, sizeof(m), "%s", PQerrorMessage(pg->conn));
        size_t ml = strlen(m);
        while (ml && (m[ml - 1] == '\n' || m[ml - 1] == ' '))
            m[--ml] = '\0';
        for (char *c = m; *c; c++)
            if (*c == '\n')
                *c = ' ';
        PQfinish(pg->conn);
        pg->conn = NULL;
        if (strstr(m, "database \"") && strstr(m, "does not exist"))
            return tw_error_set(err, TW_EIO,
                                "%s: can't connect: %s; create it first (createdb, README "
                                "\"Several backends on PostgreSQL\")",
                                pg->label, m);
        return tw_error_set(err, TW_EIO,
                            "%s: can't connect: %s; check that the server runs, that "
                            "host/port (or PGHOST, PGPORT) name it, and that the user may log "
                            "in (pg_hba.conf, ~/.pgpass)",
                            pg->label, m);
    }
    const char *enc = PQparameterStatus(pg->conn, "server_encoding");
    if (!enc || strcmp(enc, "UTF8") != 0) {
        char e[32];
        snprintf(e, sizeof(e), "%s", enc ? enc : "unknown");
        PQfinish(pg->conn);
        pg->conn = NULL;
        return tw_error_set(err, TW_EINVAL,
                            "%s: the database's encoding is %s; tierwise keeps its text in "
                            "UTF-8: create the database with ENCODING 'UTF8' (createdb -E UTF8 "
                            "-T template0)",
                            pg->label, e);
    }
    if (pg->prepared)
        memset(pg->prepared, 0, pg->n_prepared);
    pg->tx_depth = 0;
    pg->n_held = 0;
    /* UTC; and no JIT compilation: the store's statements are short, and
     * a generic plan's cost over a large table made PostgreSQL compile
     * one page's query for longer (175 ms) than it ran. */
    PGresult *r = PQexec(pg->conn, "SET TIME ZONE 'UTC'; SET jit = off");
    bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    enum tw_err rc = ok ? TW_OK : tw_pg_fail(pg, r, "setting the session's time zone", err);
    PQclear(r);
    return rc;
}

void tw_pg_disconnect(struct tw_pg *pg)
{
    if (pg->conn)
        PQfinish(pg->conn);
    pg->conn = NULL;
    pg->tx_depth = 0;
    pg->n_held = 0;
}
