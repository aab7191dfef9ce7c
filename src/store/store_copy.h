/*
 * store_copy.h - `tierwise store copy`: every table of one store copied
 * into another, empty one (SQLite to PostgreSQL, back, or SQLite to
 * SQLite), and proved copied by a row count and a checksum per table.
 *
 * Two parts.  The first is the command's (tw_store_copy, which the CLI
 * calls): store_copy.c does the copying without knowing either database,
 * over the table list below (the one list of what a schema-5 store holds)
 * and the table-level operations each implementation fills (the second
 * part: store_sqlite_copy.c, store_pg_copy.c), reached through the
 * `copy` slot of the store's ops table.
 *
 * The checksum of a table is FNV-1a (64 bits, core/fnv.h) over the
 * canonical encoding of its rows in key order, where every value is typed
 * and self-delimiting, so that the same rows give the same figure in
 * either database and a change of type, a NULL for an empty text or a
 * byte moved between columns changes it:
 *     NULL     "N"
 *     integer  "I" decimal digits (a leading '-' when negative) ";"
 *     real     "R" the 16 hex digits of its IEEE 754 binary64 bits ";"
 *     text     "T" its length in bytes, in decimal ":" its bytes
 *     blob     "B" its length in bytes, in decimal ":" its bytes
 * and each row ends with "\n".  It detects a copy that lost, added,
 * reordered or changed rows; it is no defence against someone forging
 * rows on purpose (the copy is between two databases of one operator).
 */
#ifndef TW_STORE_STORE_COPY_H
#define TW_STORE_STORE_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* ---- the command ------------------------------------------------------ */

/* One table's outcome. */
struct tw_store_copy_table {
    const char *name;         /* the table (static) */
    int64_t rows;             /* rows read from the source */
    int64_t target_rows;      /* rows read back from the target */
    uint64_t checksum;        /* the source's rows' checksum */
    uint64_t target_checksum; /* the target's rows' checksum, read back */
    bool match;               /* the counts and the checksums agree */
};

/* The whole copy's outcome (tw_store_copy fills it; fixed size). */
struct tw_store_copy_result {
    struct tw_store_copy_table tables[32]; /* in copy order */
    size_t n_tables;
    int64_t rows;       /* the source's rows, all tables */
    bool verified;      /* every table matched and was committed */
    int64_t elapsed_ms; /* the whole copy, wall clock */
};

/*
 * Copies every table of the store at FROM into the store at TO, both
 * opened with tw_store_open (so both are first brought to this binary's
 * schema version; a SQLite TO that is not there is created).  Refused
 * before any write, with TW_EINVAL: FROM and TO the same location (the
 * same string, the same SQLite file, or the same PostgreSQL database), or
 * a TO holding any row in any table (the message names the first such
 * table).  The source is read in one consistent snapshot, in key order;
 * the target is written in batches in one transaction, read back in that
 * transaction and compared table by table, and committed only when every
 * count and checksum agrees: on any failure or mismatch it is rolled
 * back, so the target is left as empty as it was.  A mismatch returns
 * TW_EIO with OUT filled (each table's `match`), so the caller can show
 * which tables differ.  OUT is filled as far as the copy went.
 *
 * PROGRESS, when not NULL, is called after each table is copied (the
 * table's entry of OUT, with the source's figures).
 */
enum tw_err tw_store_copy(const char *from, const char *to, struct tw_store_copy_result *out,
                          void (*progress)(void *arg, const struct tw_store_copy_table *t),
                          void *arg, struct tw_error *err);

/* ---- what each store fills ------------------------------------------- */

/* The type of a column, as both databases keep it: SQLite's INTEGER,
 * REAL, TEXT and BLOB; PostgreSQL's bigint, double precision, text and
 * bytea. */
enum tw_copy_type { TW_COPY_INT, TW_COPY_REAL, TW_COPY_TEXT, TW_COPY_BLOB };

struct tw_copy_column {
    const char *name;
    enum tw_copy_type type;
};

/*
 * A table as the copy sees it.  Rows are read and compared in the order
 * of KEY (its primary key's columns), with text compared byte by byte in
 * both databases (the reader adds the collation that makes it so).
 */
struct tw_copy_table {
    const char *name;
    const struct tw_copy_column *cols;
    size_t n_cols;
    const char *const *key; /* the primary key's columns, in order */
    size_t n_key;
    const char *serial; /* the column whose ids a database hands out
                         * (PostgreSQL: an identity sequence set past
                         * the copied ids); NULL: none */
};

/* Every table of the schema (version 5) the copy knows, in an order in
 * which each table comes after those it refers to. */
extern const struct tw_copy_table tw_copy_tables[];
extern const size_t tw_copy_n_tables;

/*
 * One value.  A text or a blob points at LEN bytes (a text holds no NUL
 * byte and is not NUL-terminated necessarily) that live as long as the
 * call they are handed to.  NULL is NULL whatever the type.
 */
struct tw_copy_value {
    bool null;
    int64_t i;     /* TW_COPY_INT */
    double r;      /* TW_COPY_REAL */
    const void *p; /* TW_COPY_TEXT, TW_COPY_BLOB */
    size_t len;    /* their length in bytes */
};

/* A row handed to a reader's caller: T->n_cols values in column order,
 * valid during the call; a non-TW_OK return ends the read with it. */
typedef enum tw_err (*tw_copy_row_fn)(void *arg, const struct tw_copy_value *row,
                                      struct tw_error *err);

/*
 * A store's table-level operations.  Each works on the one handle and
 * names the database in its messages.
 */
struct tw_store_copy_ops {
    /* A sentence-free name of the database the handle reached, the same
     * for two handles on one database and different otherwise (SQLite:
     * the file's device and inode; PostgreSQL: the server instance and
     * the database's name), into OUT (LEN bytes). */
    enum tw_err (*identity)(struct tw_store *st, char *out, size_t len, struct tw_error *err);
    /* Starts the copy's one transaction: WRITE for the target (SQLite:
     * BEGIN IMMEDIATE; PostgreSQL: BEGIN and every copied table locked
     * against other writers), else a read snapshot for the source
     * (PostgreSQL: REPEATABLE READ, READ ONLY). */
    enum tw_err (*begin)(struct tw_store *st, bool write, struct tw_error *err);
    enum tw_err (*commit)(struct tw_store *st, struct tw_error *err);
    void (*rollback)(struct tw_store *st); /* never fails; nothing started: nothing */
    /* Whether T holds no row, in *EMPTY. */
    enum tw_err (*empty)(struct tw_store *st, const struct tw_copy_table *t, bool *empty,
                         struct tw_error *err);
    /* T's rows, counted by the database. */
    enum tw_err (*count)(struct tw_store *st, const struct tw_copy_table *t, int64_t *n,
                         struct tw_error *err);
    /* Every row of T in key order, each to FN.  A value whose type is
     * not its column's (possible in SQLite) fails with TW_EINVAL naming
     * the table and the column. */
    enum tw_err (*read)(struct tw_store *st, const struct tw_copy_table *t, tw_copy_row_fn fn,
                        void *arg, struct tw_error *err);
    /* Writes N rows of T (N * T->n_cols values, row after row) as they
     * are, their ids included. */
    enum tw_err (*write)(struct tw_store *st, const struct tw_copy_table *t,
                         const struct tw_copy_value *rows, size_t n, struct tw_error *err);
    /* After T's last rows: what the database needs so that its next own
     * row follows the copied ones (PostgreSQL: T->serial's sequence set
     * to the largest copied id; SQLite: nothing).  NULL: nothing. */
    enum tw_err (*done)(struct tw_store *st, const struct tw_copy_table *t, struct tw_error *err);
};

extern const struct tw_store_copy_ops tw_sqlite_copy_ops; /* store_sqlite_copy.c */
extern const struct tw_store_copy_ops tw_pg_copy_ops;     /* store_pg_copy.c */

#endif
