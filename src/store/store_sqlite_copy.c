/*
 * store_sqlite_copy.c - the SQLite store's table reads and writes for
 * `tierwise store copy` (store_copy.h).  Statements are made from the
 * copy's table list (fixed identifiers, never values) and prepared for
 * one call; values are bound.
 */
#include "store/store_copy.h"
#include "store/store_sqlite.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The SQL of a table's read ("SELECT cols FROM t ORDER BY key", text
 * keys by bytes, whatever collation the column has: vm_sizes.name is
 * NOCASE) or insert, into OUT. */
static enum tw_err table_sql(const struct tw_copy_table *t, bool insert, char *out, size_t len,
                             struct tw_error *err)
{
    size_t n = 0;
    int w;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        w = snprintf(out + n, len - n, __VA_ARGS__);                                               \
        if (w < 0 || (size_t)w >= len - n)                                                         \
            return tw_error_set(err, TW_ENOMEM, "the statement for table %s is too long",          \
                                t->name);                                                          \
        n += (size_t)w;                                                                            \
    } while (0)
    if (insert)
        PUT("INSERT INTO \"%s\" (", t->name);
    else
        PUT("SELECT ");
    for (size_t c = 0; c < t->n_cols; c++)
        PUT("%s\"%s\"", c ? ", " : "", t->cols[c].name);
    if (insert) {
        PUT(") VALUES (");
        for (size_t c = 0; c < t->n_cols; c++)
            PUT("%s?%zu", c ? ", " : "", c + 1);
        PUT(")");
        return TW_OK;
    }
    PUT(" FROM \"%s\" ORDER BY ", t->name);
    for (size_t k = 0; k < t->n_key; k++) {
        bool text = false;
        for (size_t c = 0; c < t->n_cols; c++)
            if (strcmp(t->cols[c].name, t->key[k]) == 0)
                text = t->cols[c].type == TW_COPY_TEXT;
        PUT("%s\"%s\"%s", k ? ", " : "", t->key[k], text ? " COLLATE BINARY" : "");
    }
#undef PUT
    return TW_OK;
}

static enum tw_err prepare(struct tw_sqlite *s, const char *sql, sqlite3_stmt **q, const char *what,
                           struct tw_error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    return TW_OK;
}

static enum tw_err exec(struct tw_sqlite *s, const char *sql, const char *what,
                        struct tw_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    return TW_OK;
}

static enum tw_err sqc_identity(struct tw_store *st, char *out, size_t len, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    const char *file = sqlite3_db_filename(s->db, "main");
    struct stat sb;
    if (!file || !file[0]) {
        snprintf(out, len, "sqlite:memory:%p", (void *)s);
        return TW_OK;
    }
    if (stat(file, &sb) != 0)
        return tw_error_set(err, TW_EIO, "%s: can't see the database file", s->path);
    snprintf(out, len, "sqlite:%ju:%ju", (uintmax_t)sb.st_dev, (uintmax_t)sb.st_ino);
    return TW_OK;
}

static enum tw_err sqc_begin(struct tw_store *st, bool write, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    if (write)
        return exec(s, "BEGIN IMMEDIATE", "starting the copy's write transaction", err);
    /* A read transaction's snapshot starts at its first read: read once
     * now, so that every table is read as of this moment. */
    return exec(s, "BEGIN; SELECT count(*) FROM sqlite_schema",
                "starting the copy's read of the database", err);
}

static void sqc_rollback(struct tw_store *st)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static enum tw_err sqc_commit(struct tw_store *st, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    enum tw_err rc = exec(s, "COMMIT", "committing the copied tables", err);
    if (rc != TW_OK)
        sqc_rollback(st);
    return rc;
}

static enum tw_err count_sql(struct tw_sqlite *s, const struct tw_copy_table *t, bool any,
                             int64_t *n, struct tw_error *err)
{
    char sql[256], what[128];
    snprintf(sql, sizeof(sql),
             any ? "SELECT EXISTS (SELECT 1 FROM \"%s\")" : "SELECT count(*) FROM \"%s\"", t->name);
    snprintf(what, sizeof(what), "counting the rows of table %s", t->name);
    sqlite3_stmt *q = NULL;
    enum tw_err rc = prepare(s, sql, &q, what, err);
    if (rc != TW_OK)
        return rc;
    if (sqlite3_step(q) == SQLITE_ROW)
        *n = sqlite3_column_int64(q, 0);
    else
        rc = tw_sq_fail(s, NULL, err, what);
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err sqc_empty(struct tw_store *st, const struct tw_copy_table *t, bool *empty,
                             struct tw_error *err)
{
    int64_t any = 0;
    enum tw_err rc = count_sql((struct tw_sqlite *)st, t, true, &any, err);
    *empty = any == 0;
    return rc;
}

static enum tw_err sqc_count(struct tw_store *st, const struct tw_copy_table *t, int64_t *n,
                             struct tw_error *err)
{
    return count_sql((struct tw_sqlite *)st, t, false, n, err);
}

static const char *type_name(int t)
{
    switch (t) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real";
    case SQLITE_TEXT: return "a text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
    }
}

static enum tw_err sqc_read(struct tw_store *st, const struct tw_copy_table *t, tw_copy_row_fn fn,
                            void *arg, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    char sql[2048], what[128];
    enum tw_err rc = table_sql(t, false, sql, sizeof(sql), err);
    if (rc != TW_OK)
        return rc;
    snprintf(what, sizeof(what), "reading table %s", t->name);
    sqlite3_stmt *q = NULL;
    rc = prepare(s, sql, &q, what, err);
    if (rc != TW_OK)
        return rc;
    struct tw_copy_value *row = calloc(t->n_cols, sizeof(*row));
    if (!row) {
        sqlite3_finalize(q);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading table %s", t->name);
    }
    int step;
    int64_t nrow = 0;
    while (rc == TW_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
        nrow++;
        for (size_t c = 0; rc == TW_OK && c < t->n_cols; c++) {
            int ct = sqlite3_column_type(q, (int)c);
            enum tw_copy_type want = t->cols[c].type;
            struct tw_copy_value *v = &row[c];
            memset(v, 0, sizeof(*v));
            if (ct == SQLITE_NULL) {
                v->null = true;
                continue;
            }
            bool ok = (want == TW_COPY_INT && ct == SQLITE_INTEGER) ||
                      (want == TW_COPY_REAL && (ct == SQLITE_FLOAT || ct == SQLITE_INTEGER)) ||
                      (want == TW_COPY_TEXT && ct == SQLITE_TEXT) ||
                      (want == TW_COPY_BLOB && ct == SQLITE_BLOB);
            if (!ok) {
                rc = tw_error_set(err, TW_EINVAL,
                                  "%s: table %s, row %" PRId64 " in key order: column %s holds "
                                  "%s, which the other database can't keep there; correct "
                                  "the row before copying",
                                  s->path, t->name, nrow, t->cols[c].name, type_name(ct));
                break;
            }
            switch (want) {
            case TW_COPY_INT: v->i = sqlite3_column_int64(q, (int)c); break;
            case TW_COPY_REAL: v->r = sqlite3_column_double(q, (int)c); break;
            case TW_COPY_TEXT:
                v->p = sqlite3_column_text(q, (int)c);
                v->len = (size_t)sqlite3_column_bytes(q, (int)c);
                break;
            case TW_COPY_BLOB:
                v->p = sqlite3_column_blob(q, (int)c);
                v->len = (size_t)sqlite3_column_bytes(q, (int)c);
                break;
            }
            if (want >= TW_COPY_TEXT && !v->p && v->len == 0)
                v->p = "";
            else if (want >= TW_COPY_TEXT && !v->p) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory reading table %s", t->name);
                break;
            }
        }
        if (rc == TW_OK)
            rc = fn(arg, row, err);
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, what);
    free(row);
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err sqc_write(struct tw_store *st, const struct tw_copy_table *t,
                             const struct tw_copy_value *rows, size_t n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    char sql[2048], what[128];
    enum tw_err rc = table_sql(t, true, sql, sizeof(sql), err);
    if (rc != TW_OK)
        return rc;
    snprintf(what, sizeof(what), "writing table %s", t->name);
    sqlite3_stmt *q = NULL;
    rc = prepare(s, sql, &q, what, err);
    for (size_t r = 0; rc == TW_OK && r < n; r++) {
        const struct tw_copy_value *row = &rows[r * t->n_cols];
        sqlite3_reset(q);
        for (size_t c = 0; c < t->n_cols; c++) {
            int i = (int)c + 1;
            const struct tw_copy_value *v = &row[c];
            if (v->null) {
                sqlite3_bind_null(q, i);
                continue;
            }
            switch (t->cols[c].type) {
            case TW_COPY_INT: sqlite3_bind_int64(q, i, v->i); break;
            case TW_COPY_REAL: sqlite3_bind_double(q, i, v->r); break;
            case TW_COPY_TEXT: sqlite3_bind_text(q, i, v->p, (int)v->len, SQLITE_STATIC); break;
            case TW_COPY_BLOB:
                sqlite3_bind_blob(q, i, v->len ? v->p : "", (int)v->len, SQLITE_STATIC);
                break;
            }
        }
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = tw_sq_fail(s, NULL, err, what);
    }
    sqlite3_finalize(q);
    return rc;
}

const struct tw_store_copy_ops tw_sqlite_copy_ops = {
    .identity = sqc_identity,
    .begin = sqc_begin,
    .commit = sqc_commit,
    .rollback = sqc_rollback,
    .empty = sqc_empty,
    .count = sqc_count,
    .read = sqc_read,
    .write = sqc_write,
    .done = NULL, /* SQLite's next rowid follows the largest already */
};
