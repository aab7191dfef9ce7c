/*
 * store_pg_copy.c - the PostgreSQL store's table reads and writes for
 * `tierwise store copy` (store_copy.h).
 *
 * Statements are made from the copy's table list (fixed identifiers,
 * never values; a value travels as a parameter or as COPY data).  A table
 * is read through a cursor in binary form, a batch at a time, so that an
 * integer, a real and a blob come as they are kept (no decimal text to
 * parse back) and a column whose type is not the list's is seen; it is
 * written with COPY ... FROM STDIN in text form, one COPY per batch.
 */
#include "store/store_copy.h"
#include "store/store_pg.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PostgreSQL's type oids (pg_type.dat) of the four kinds of columns. */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_TEXT 25
#define OID_FLOAT8 701

#define FETCH_ROWS 1000

static const Oid want_oid[] = {
    [TW_COPY_INT] = OID_INT8,
    [TW_COPY_REAL] = OID_FLOAT8,
    [TW_COPY_TEXT] = OID_TEXT,
    [TW_COPY_BLOB] = OID_BYTEA,
};

static const char *kind_name(enum tw_copy_type t)
{
    switch (t) {
    case TW_COPY_INT: return "bigint";
    case TW_COPY_REAL: return "double precision";
    case TW_COPY_TEXT: return "text";
    default: return "bytea";
    }
}

/* Appends to the SQL in OUT (LEN bytes, N used); false when it is full. */
static bool put(char *out, size_t len, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool put(char *out, size_t len, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *n, len - *n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *n)
        return false;
    *n += (size_t)w;
    return true;
}

/* "c1", "c2", ... of T. */
static bool put_cols(char *out, size_t len, size_t *n, const struct tw_copy_table *t)
{
    bool ok = true;
    for (size_t c = 0; ok && c < t->n_cols; c++)
        ok = put(out, len, n, "%s\"%s\"", c ? ", " : "", t->cols[c].name);
    return ok;
}

/* Runs SQL (fixed text, NP text parameters P) for one result, binary
 * when BINARY; *RES holds it (PQclear it) unless NULL. */
static enum tw_err run_sql(struct tw_pg *pg, const char *sql, int np, const char *const *p,
                           bool binary, PGresult **res, const char *what, struct tw_error *err)
{
    PGresult *r = PQexecParams(pg->conn, sql, np, NULL, p, NULL, NULL, binary ? 1 : 0);
    ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        enum tw_err rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        return rc;
    }
    if (res)
        *res = r;
    else
        PQclear(r);
    return TW_OK;
}

static enum tw_err pgc_identity(struct tw_store *st, char *out, size_t len, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    /* One server instance is its address, port and start (to the
     * microsecond); one database in it, its name. */
    TW_PG_STMT(q_ident, "SELECT coalesce(host(inet_server_addr()), 'local') || ':' || "
                        "coalesce(inet_server_port()::text, '') || ':' || "
                        "pg_postmaster_start_time()::text || ':' || current_database()");
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(pg, &q_ident, NULL, &r, "naming the database", err);
    if (rc != TW_OK)
        return rc;
    snprintf(out, len, "postgresql:%s", PQntuples(r) == 1 ? tw_pg_text(r, 0, 0) : "?");
    PQclear(r);
    return TW_OK;
}

static enum tw_err pgc_begin(struct tw_store *st, bool write, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    if (pg->tx_depth != 0)
        return tw_error_set(err, TW_EINVAL, "%s: the copy's transaction is already open",
                            pg->label);
    enum tw_err rc = tw_pg_begin(pg,
                                 write ? "starting the copy's write transaction"
                                       : "starting the copy's read of the database",
                                 err);
    if (rc != TW_OK)
        return rc;
    if (!write) {
        rc = tw_pg_exec(pg, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                        "starting the copy's read in one snapshot", err);
    } else {
        /* Backends writing to the target meanwhile would make its
         * emptiness, seen first, untrue at the commit: EXCLUSIVE lets
         * others read, never write, until the copy ends. */
        char sql[1024];
        size_t n = 0;
        bool ok = put(sql, sizeof(sql), &n, "LOCK TABLE ");
        for (size_t i = 0; ok && i < tw_copy_n_tables; i++)
            ok = put(sql, sizeof(sql), &n, "%s\"%s\"", i ? ", " : "", tw_copy_tables[i].name);
        ok = ok && put(sql, sizeof(sql), &n, " IN EXCLUSIVE MODE");
        rc = ok ? tw_pg_exec(pg, sql, "locking the target's tables for the copy", err)
                : tw_error_set(err, TW_ENOMEM, "the copy's LOCK statement is too long");
    }
    if (rc != TW_OK)
        tw_pg_rollback(pg);
    return rc;
}

static enum tw_err pgc_commit(struct tw_store *st, struct tw_error *err)
{
    return tw_pg_commit((struct tw_pg *)st, "committing the copied tables", err);
}

static void pgc_rollback(struct tw_store *st)
{
    tw_pg_rollback((struct tw_pg *)st);
}

static enum tw_err count_sql(struct tw_pg *pg, const struct tw_copy_table *t, bool any, int64_t *n,
                             struct tw_error *err)
{
    char sql[256], what[128];
    snprintf(sql, sizeof(sql),
             any ? "SELECT EXISTS (SELECT 1 FROM \"%s\")::int" : "SELECT count(*) FROM \"%s\"",
             t->name);
    snprintf(what, sizeof(what), "counting the rows of table %s", t->name);
    PGresult *r = NULL;
    enum tw_err rc = run_sql(pg, sql, 0, NULL, false, &r, what, err);
    if (rc != TW_OK)
        return rc;
    *n = PQntuples(r) == 1 ? tw_pg_int(r, 0, 0) : 0;
    PQclear(r);
    return TW_OK;
}

static enum tw_err pgc_empty(struct tw_store *st, const struct tw_copy_table *t, bool *empty,
                             struct tw_error *err)
{
    int64_t any = 0;
    enum tw_err rc = count_sql((struct tw_pg *)st, t, true, &any, err);
    *empty = any == 0;
    return rc;
}

static enum tw_err pgc_count(struct tw_store *st, const struct tw_copy_table *t, int64_t *n,
                             struct tw_error *err)
{
    return count_sql((struct tw_pg *)st, t, false, n, err);
}

/* A binary field's 8 bytes, most significant first. */
static uint64_t be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (unsigned char)p[i];
    return v;
}

/* Hands the rows of a binary batch R to FN. */
static enum tw_err feed_batch(struct tw_pg *pg, const struct tw_copy_table *t, PGresult *r,
                              struct tw_copy_value *row, tw_copy_row_fn fn, void *arg,
                              struct tw_error *err)
{
    if ((size_t)PQnfields(r) != t->n_cols)
        return tw_error_set(err, TW_EINVAL, "%s: table %s has %d columns where %zu are copied",
                            pg->label, t->name, PQnfields(r), t->n_cols);
    for (size_t c = 0; c < t->n_cols; c++)
        if (PQftype(r, (int)c) != want_oid[t->cols[c].type])
            return tw_error_set(err, TW_EINVAL,
                                "%s: table %s, column %s is not %s (type oid %u); the copy "
                                "needs tierwise's own schema",
                                pg->label, t->name, t->cols[c].name, kind_name(t->cols[c].type),
                                (unsigned)PQftype(r, (int)c));
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        for (size_t c = 0; c < t->n_cols; c++) {
            struct tw_copy_value *v = &row[c];
            memset(v, 0, sizeof(*v));
            if (PQgetisnull(r, i, (int)c)) {
                v->null = true;
                continue;
            }
            const char *p = PQgetvalue(r, i, (int)c);
            int len = PQgetlength(r, i, (int)c);
            switch (t->cols[c].type) {
            case TW_COPY_INT:
            case TW_COPY_REAL:
                if (len != 8)
                    return tw_error_set(err, TW_EIO,
                                        "%s: table %s, column %s: a value of "
                                        "%d bytes where 8 were expected",
                                        pg->label, t->name, t->cols[c].name, len);
                if (t->cols[c].type == TW_COPY_INT) {
                    v->i = (int64_t)be64(p);
                } else {
                    uint64_t bits = be64(p);
                    memcpy(&v->r, &bits, sizeof(v->r));
                }
                break;
            case TW_COPY_TEXT:
            case TW_COPY_BLOB:
                v->p = p;
                v->len = (size_t)len;
                break;
            }
        }
        enum tw_err rc = fn(arg, row, err);
        if (rc != TW_OK)
            return rc;
    }
    return TW_OK;
}

static enum tw_err pgc_read(struct tw_store *st, const struct tw_copy_table *t, tw_copy_row_fn fn,
                            void *arg, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    if (pg->tx_depth == 0)
        return tw_error_set(err, TW_EINVAL,
                            "%s: a table is read for a copy inside its "
                            "transaction only",
                            pg->label);
    char sql[2048], what[128];
    size_t n = 0;
    bool ok = put(sql, sizeof(sql), &n, "DECLARE tw_copy_rows NO SCROLL CURSOR FOR SELECT ") &&
              put_cols(sql, sizeof(sql), &n, t) &&
              put(sql, sizeof(sql), &n, " FROM \"%s\" ORDER BY ", t->name);
    for (size_t k = 0; ok && k < t->n_key; k++) {
        bool text = false;
        for (size_t c = 0; c < t->n_cols; c++)
            if (strcmp(t->cols[c].name, t->key[k]) == 0)
                text = t->cols[c].type == TW_COPY_TEXT;
        ok = put(sql, sizeof(sql), &n, "%s\"%s\"%s", k ? ", " : "", t->key[k],
                 text ? " COLLATE \"C\"" : "");
    }
    if (!ok)
        return tw_error_set(err, TW_ENOMEM, "the statement reading table %s is too long", t->name);
    snprintf(what, sizeof(what), "reading table %s", t->name);
    enum tw_err rc = run_sql(pg, sql, 0, NULL, false, NULL, what, err);
    if (rc != TW_OK)
        return rc;
    struct tw_copy_value *row = calloc(t->n_cols, sizeof(*row));
    if (!row)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading table %s", t->name);
    for (bool more = true; rc == TW_OK && more;) {
        PGresult *r = NULL;
        char fetch[64];
        snprintf(fetch, sizeof(fetch), "FETCH %d FROM tw_copy_rows", FETCH_ROWS);
        rc = run_sql(pg, fetch, 0, NULL, true, &r, what, err);
        if (rc != TW_OK)
            break;
        more = PQntuples(r) == FETCH_ROWS;
        rc = feed_batch(pg, t, r, row, fn, arg, err);
        PQclear(r);
    }
    free(row);
    if (rc == TW_OK)
        rc = run_sql(pg, "CLOSE tw_copy_rows", 0, NULL, false, NULL, what, err);
    return rc;
}

/* ---- COPY's text form ---- */

struct line {
    char *b;
    size_t n, cap;
};

static bool grow(struct line *l, size_t more)
{
    if (l->n + more <= l->cap)
        return true;
    size_t cap = l->cap ? l->cap : 65536;
    while (cap < l->n + more)
        cap *= 2;
    char *b = realloc(l->b, cap);
    if (!b)
        return false;
    l->b = b;
    l->cap = cap;
    return true;
}

/* V of type TYPE in COPY's text form: \N for NULL; a backslash, a tab
 * and a line end escaped in a text; a bytea as \\x and its hex. */
static bool put_value(struct line *l, enum tw_copy_type type, const struct tw_copy_value *v)
{
    static const char hex[] = "0123456789abcdef";
    char num[40];
    int w;
    if (v->null) {
        if (!grow(l, 2))
            return false;
        memcpy(l->b + l->n, "\\N", 2);
        l->n += 2;
        return true;
    }
    switch (type) {
    case TW_COPY_INT:
    case TW_COPY_REAL:
        if (type == TW_COPY_INT)
            w = snprintf(num, sizeof(num), "%" PRId64, v->i);
        else if (isnan(v->r))
            w = snprintf(num, sizeof(num), "NaN");
        else if (isinf(v->r))
            w = snprintf(num, sizeof(num), "%sInfinity", v->r < 0 ? "-" : "");
        else
            w = snprintf(num, sizeof(num), "%.17g", v->r); /* exact round trip */
        if (w < 0 || !grow(l, (size_t)w))
            return false;
        memcpy(l->b + l->n, num, (size_t)w);
        l->n += (size_t)w;
        return true;
    case TW_COPY_TEXT: {
        if (!grow(l, 2 * v->len))
            return false;
        const unsigned char *p = v->p;
        for (size_t i = 0; i < v->len; i++) {
            char e = 0;
            switch (p[i]) {
            case '\\': e = '\\'; break;
            case '\t': e = 't'; break;
            case '\n': e = 'n'; break;
            case '\r': e = 'r'; break;
            default: break;
            }
            if (e) {
                l->b[l->n++] = '\\';
                l->b[l->n++] = e;
            } else {
                l->b[l->n++] = (char)p[i];
            }
        }
        return true;
    }
    case TW_COPY_BLOB: {
        if (!grow(l, 3 + 2 * v->len))
            return false;
        memcpy(l->b + l->n, "\\\\x", 3);
        l->n += 3;
        const unsigned char *p = v->p;
        for (size_t i = 0; i < v->len; i++) {
            l->b[l->n++] = hex[p[i] >> 4];
            l->b[l->n++] = hex[p[i] & 15];
        }
        return true;
    }
    }
    return false;
}

static enum tw_err pgc_write(struct tw_store *st, const struct tw_copy_table *t,
                             const struct tw_copy_value *rows, size_t n, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    char sql[2048], what[128];
    size_t sn = 0;
    if (!(put(sql, sizeof(sql), &sn, "COPY \"%s\" (", t->name) &&
          put_cols(sql, sizeof(sql), &sn, t) && put(sql, sizeof(sql), &sn, ") FROM STDIN")))
        return tw_error_set(err, TW_ENOMEM, "the statement writing table %s is too long", t->name);
    snprintf(what, sizeof(what), "writing table %s", t->name);
    struct line l = {0};
    bool ok = true;
    for (size_t r = 0; ok && r < n; r++) {
        const struct tw_copy_value *row = &rows[r * t->n_cols];
        for (size_t c = 0; ok && c < t->n_cols; c++) {
            ok = (c == 0 || grow(&l, 1)) && (c == 0 || (l.b[l.n++] = '\t', true)) &&
                 put_value(&l, t->cols[c].type, &row[c]);
        }
        ok = ok && grow(&l, 1);
        if (ok)
            l.b[l.n++] = '\n';
    }
    if (!ok) {
        free(l.b);
        return tw_error_set(err, TW_ENOMEM, "out of memory writing table %s", t->name);
    }
    PGresult *r = PQexec(pg->conn, sql);
    enum tw_err rc = TW_OK;
    if (!r || PQresultStatus(r) != PGRES_COPY_IN) {
        rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
        free(l.b);
        return rc;
    }
    PQclear(r);
    /* Sent in pieces of at most 1 MiB (PQputCopyData takes an int). */
    bool sent = true;
    for (size_t off = 0; sent && off < l.n; off += 1u << 20) {
        size_t piece = l.n - off < (1u << 20) ? l.n - off : (1u << 20);
        sent = PQputCopyData(pg->conn, l.b + off, (int)piece) == 1;
    }
    free(l.b);
    if (PQputCopyEnd(pg->conn, sent ? NULL : "the copy could not send its rows") != 1)
        sent = false;
    /* The COPY's outcome, then nothing more (the protocol's end). */
    while ((r = PQgetResult(pg->conn)) != NULL) {
        if (rc == TW_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
            rc = tw_pg_fail(pg, r, what, err);
        PQclear(r);
    }
    if (rc == TW_OK && !sent)
        rc = tw_pg_fail(pg, NULL, what, err);
    return rc;
}

static enum tw_err pgc_done(struct tw_store *st, const struct tw_copy_table *t,
                            struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    if (!t->serial)
        return TW_OK;
    /* The next id handed out follows the largest copied one (1 for an
     * empty table).  setval is not undone by a rollback: a copy that
     * fails later leaves the sequence ahead, which only skips ids. */
    char sql[512], what[128];
    snprintf(sql, sizeof(sql),
             "SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(\"%s\"), 0) + 1, "
             "false) FROM \"%s\"",
             t->serial, t->name);
    snprintf(what, sizeof(what), "setting table %s's next id past the copied ones", t->name);
    const char *p[2] = {t->name, t->serial};
    return run_sql(pg, sql, 2, p, false, NULL, what, err);
}

const struct tw_store_copy_ops tw_pg_copy_ops = {
    .identity = pgc_identity,
    .begin = pgc_begin,
    .commit = pgc_commit,
    .rollback = pgc_rollback,
    .empty = pgc_empty,
    .count = pgc_count,
    .read = pgc_read,
    .write = pgc_write,
    .done = pgc_done,
};
