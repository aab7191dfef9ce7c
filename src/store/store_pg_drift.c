/*
 * store_pg_drift.c - the PostgreSQL store's drift rows (store.h "drift"),
 * as store_drift.c keeps them in SQLite: a drift opened when first seen,
 * kept with its first since while it lasts, ended when gone; the stored
 * policies' names; and a VM's power states newest first, a page at a time.
 *
 * Several backends may write drifts at once (SQLite had one writer).
 * What keeps the table right without it:
 *   - one open drift per disk is the partial unique index drift_open
 *     (disk_id WHERE ended_at IS NULL).  An open is an UPDATE of the open
 *     row, else an INSERT ... ON CONFLICT DO NOTHING on that index: when
 *     another backend opened it between the two, the insert does nothing
 *     and the UPDATE runs again, so two never open two rows, and *STARTED
 *     is true for the one whose insert made the row.
 *   - an end is a compare-and-set (UPDATE ... WHERE ended_at IS NULL): a
 *     drift ends once, and a sync reports as ended only the rows its own
 *     UPDATE ended (RETURNING), never one another backend ended first.
 *   - a whole transaction of ours (depth 0) that meets a deadlock or a
 *     serialization failure is run again, up to three times.
 */
#include "store/store_pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIES 3

/* This process's clock to the second, as SQLite's strftime('%Y-%m-%dT%H:%M:%SZ',
 * 'now') writes a drift's seen_at. */
static void now_seconds(char out[40])
{
    char ms[40];
    tw_pg_now_text(ms);
    snprintf(out, 40, "%.19sZ", ms);
}

/* Copies the text of column COL into DST (LEN bytes, cut to fit byte for
 * byte, as the SQLite store's copies cut). */
static void col_copy(char *dst, size_t len, const PGresult *r, int row, int col)
{
    snprintf(dst, len, "%s", tw_pg_text(r, row, col));
}

/* Runs WORK in a transaction of its own (or a savepoint in the caller's),
 * committed when it succeeds; a transaction of its own is run again when
 * it fails on a collision with another backend's. */
static enum tw_err in_tx(struct tw_pg *pg, const char *what,
                         enum tw_err (*work)(struct tw_pg *pg, void *arg, struct tw_error *err),
                         void *arg, struct tw_error *err)
{
    bool own = pg->tx_depth == 0;
    for (int attempt = 1;; attempt++) {
        enum tw_err rc = tw_pg_begin(pg, what, err);
        if (rc != TW_OK)
            return rc;
        rc = work(pg, arg, err);
        if (rc == TW_OK)
            rc = tw_pg_commit(pg, what, err);
        else
            tw_pg_rollback(pg);
        if (rc == TW_OK || !own || attempt == TRIES || !tw_pg_retryable(pg))
            return rc;
        tw_error_clear(err);
    }
}

/* ---- open, close ---- */

TW_PG_STMT(q_open_update, "UPDATE drift SET vm_id = $2, sku = $3, required_sku = $4, policy = $5, "
                          "seen_at = $6 WHERE disk_id = $1 AND ended_at IS NULL");
TW_PG_STMT(q_open_insert,
           "INSERT INTO drift(disk_id, vm_id, sku, required_sku, policy, since, since_ms, "
           "seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
           "ON CONFLICT (disk_id) WHERE ended_at IS NULL DO NOTHING");

/* A failed write's error: a missing disk or VM (a foreign key) as the
 * SQLite store says it, anything else as it came. */
static enum tw_err open_failed(struct tw_pg *pg, const struct tw_store_drift_row *d, enum tw_err rc,
                               struct tw_error *err)
{
    if (strcmp(pg->sqlstate, "23503") != 0)
        return rc;
    tw_error_clear(err);
    return tw_error_set(err, TW_ENOENT, "there is no disk %lld or no VM %lld to record a drift of",
                        (long long)d->disk_id, (long long)d->vm_id);
}

/* Opens D's drift, or keeps its open one going (its since unchanged). */
static enum tw_err open_one(struct tw_pg *pg, const struct tw_store_drift_row *d, int64_t since_ms,
                            bool *started, struct tw_error *err)
{
    char seen[40];
    now_seconds(seen);
    for (int attempt = 0; attempt < TRIES; attempt++) {
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, d->disk_id);
        tw_pg_p_int(&p, d->vm_id);
        tw_pg_p_text(&p, d->sku);
        tw_pg_p_text(&p, d->required_sku);
        tw_pg_p_text(&p, d->policy);
        tw_pg_p_text(&p, seen);
        int64_t n = 0;
        enum tw_err rc = tw_pg_run_n(pg, &q_open_update, &p, &n, "recording a drift", err);
        if (rc != TW_OK)
            return open_failed(pg, d, rc, err);
        if (n > 0) {
            if (started)
                *started = false;
            return TW_OK;
        }
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, d->disk_id);
        tw_pg_p_int(&p, d->vm_id);
        tw_pg_p_text(&p, d->sku);
        tw_pg_p_text(&p, d->required_sku);
        tw_pg_p_text(&p, d->policy);
        tw_pg_p_text(&p, d->since);
        tw_pg_p_int(&p, since_ms);
        tw_pg_p_text(&p, seen);
        rc = tw_pg_run_n(pg, &q_open_insert, &p, &n, "recording a drift", err);
        if (rc != TW_OK)
            return open_failed(pg, d, rc, err);
        if (n > 0) {
            if (started)
                *started = true;
            return TW_OK;
        }
        /* Another backend opened it since the UPDATE: go on with its row. */
    }
    return tw_error_set(err, TW_EIO,
                        "%s: recording a drift of disk %lld: other backends kept opening and "
                        "ending it at the same time; try again",
                        pg->label, (long long)d->disk_id);
}

struct open_arg {
    const struct tw_store_drift_row *d;
    int64_t since_ms;
    bool *started;
};

static enum tw_err open_work(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct open_arg *a = arg;
    return open_one(pg, a->d, a->since_ms, a->started, err);
}

enum tw_err tw_pg_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                             int64_t since_ms, bool *started, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct open_arg a = {d, since_ms, started};
    enum tw_err rc = in_tx(pg, "starting to record a drift", open_work, &a, err);
    if (rc != TW_OK && started)
        *started = false;
    return rc;
}

TW_PG_STMT(q_close, "UPDATE drift SET ended_at = $2, ended_ms = $3 "
                    "WHERE disk_id = $1 AND ended_at IS NULL");

enum tw_err tw_pg_drift_close(struct tw_store *st, int64_t disk_id, const char *at, int64_t at_ms,
                              bool *ended, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    tw_pg_p_text(&p, at);
    tw_pg_p_int(&p, at_ms);
    int64_t n = 0;
    /* One statement: the end is a compare-and-set on ended_at. */
    enum tw_err rc = tw_pg_run_n(pg, &q_close, &p, &n, "ending a drift", err);
    if (rc == TW_OK && ended)
        *ended = n > 0;
    return rc;
}

/* ---- lists ---- */

#define DRIFT_COLS                                                                                 \
    "r.disk_id, r.vm_id, coalesce(v.name, ''), coalesce(k.name, ''), r.sku, "                      \
    "r.required_sku, r.policy, r.since, coalesce(r.ended_at, '')"

TW_PG_STMT(q_list, "SELECT " DRIFT_COLS " FROM drift r LEFT JOIN vms v ON v.id = r.vm_id "
                   "LEFT JOIN disks k ON k.id = r.disk_id "
                   "WHERE $1::bigint = 0 OR r.ended_at IS NULL ORDER BY r.since_ms, r.id");

/* The rows of R (DRIFT_COLS) into a new array *OUT. */
static enum tw_err drift_rows(const PGresult *r, struct tw_store_drift_row **out, size_t *n_out,
                              const char *what, struct tw_error *err)
{
    int n = PQntuples(r);
    struct tw_store_drift_row *arr = NULL;
    if (n > 0 && !(arr = calloc((size_t)n, sizeof(*arr))))
        return tw_error_set(err, TW_ENOMEM, "out of memory %s", what);
    for (int i = 0; i < n; i++) {
        struct tw_store_drift_row *d = &arr[i];
        d->disk_id = tw_pg_int(r, i, 0);
        d->vm_id = tw_pg_int(r, i, 1);
        col_copy(d->vm, sizeof(d->vm), r, i, 2);
        col_copy(d->disk, sizeof(d->disk), r, i, 3);
        col_copy(d->sku, sizeof(d->sku), r, i, 4);
        col_copy(d->required_sku, sizeof(d->required_sku), r, i, 5);
        col_copy(d->policy, sizeof(d->policy), r, i, 6);
        col_copy(d->since, sizeof(d->since), r, i, 7);
        col_copy(d->ended_at, sizeof(d->ended_at), r, i, 8);
    }
    *out = arr;
    *n_out = (size_t)n;
    return TW_OK;
}

enum tw_err tw_pg_drift_list(struct tw_store *st, bool open_only, struct tw_store_drift_row **rows,
                             size_t *n, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_bool(&p, open_only);
    PGresult *r;
    enum tw_err rc = tw_pg_run(pg, &q_list, &p, &r, "reading the drifts", err);
    if (rc != TW_OK)
        return rc;
    rc = drift_rows(r, rows, n, "reading the drifts", err);
    PQclear(r);
    return rc;
}

TW_PG_STMT(q_names, "SELECT name FROM policies ORDER BY name");

enum tw_err tw_pg_policy_names(struct tw_store *st, char ***names, size_t *n_out,
                               struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *r;
    enum tw_err rc = tw_pg_run(pg, &q_names, NULL, &r, "reading the policies' names", err);
    if (rc != TW_OK)
        return rc;
    int n = PQntuples(r);
    char **v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;
    if (n > 0 && !v)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the policies' names");
    for (int i = 0; rc == TW_OK && i < n; i++)
        if (!(v[i] = tw_pg_dup(r, i, 0, NULL)))
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the policies' names");
    PQclear(r);
    if (rc != TW_OK) {
        for (int i = 0; v && i < n; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    *names = v;
    *n_out = (size_t)n;
    return TW_OK;
}

/* ---- a VM's power states, newest first ---- */

TW_PG_STMT(q_power_before,
           "SELECT observed_ms, state FROM power_states WHERE vm_id = $1 AND observed_ms <= $2 "
           "ORDER BY observed_ms DESC, id DESC LIMIT $3");

enum tw_err tw_pg_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms, size_t max,
                                  struct tw_store_sv_power **out, size_t *n_out,
                                  struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, vm_id);
    tw_pg_p_int(&p, before_ms);
    tw_pg_p_int(&p, (int64_t)max);
    PGresult *r;
    enum tw_err rc = tw_pg_run(pg, &q_power_before, &p, &r, "reading a VM's power states", err);
    if (rc != TW_OK)
        return rc;
    size_t n = (size_t)PQntuples(r);
    if (n > max)
        n = max;
    struct tw_store_sv_power *arr = NULL;
    if (n > 0 && !(arr = malloc(n * sizeof(*arr)))) {
        PQclear(r);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading a VM's power states");
    }
    for (size_t i = 0; i < n; i++) {
        arr[i].at_ms = tw_pg_int(r, (int)i, 0);
        col_copy(arr[i].state, sizeof(arr[i].state), r, (int)i, 1);
    }
    PQclear(r);
    *out = arr;
    *n_out = n;
    return TW_OK;
}

/* ---- a whole update in one transaction ---- */

/* Every open drift whose disk is not in $1 ends, in one statement: the
 * rows its own UPDATE ended come back, by since, with their names.  Rows
 * are locked by disk, as the opens before it go (sync_work), so that two
 * syncs at once wait for each other rather than deadlock. */
TW_PG_STMT(q_sync_end,
           "WITH e AS (UPDATE drift SET ended_at = $2, ended_ms = $3 WHERE id IN (SELECT id "
           "FROM drift WHERE ended_at IS NULL AND NOT (disk_id = ANY ($1::bigint[])) "
           "ORDER BY disk_id FOR UPDATE) AND ended_at IS NULL RETURNING *) "
           "SELECT " DRIFT_COLS " FROM e r LEFT JOIN vms v ON v.id = r.vm_id "
           "LEFT JOIN disks k ON k.id = r.disk_id ORDER BY r.since_ms, r.id");

struct sync_arg {
    const struct tw_store_drift_row *rows;
    const int64_t *since_ms;
    size_t n;
    const char *at;
    int64_t at_ms;
    bool *started;
    struct tw_store_drift_row *ended;
    size_t n_ended;
};

/* The disk ids of the N ROWS as a PostgreSQL array literal (malloc'd). */
static char *id_array(const struct tw_store_drift_row *rows, size_t n)
{
    size_t cap = 3 + n * 21;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t k = 0;
    s[k++] = '{';
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s%lld", i ? "," : "", (long long)rows[i].disk_id);
    s[k++] = '}';
    s[k] = '\0';
    return s;
}

/* qsort's rows for by_disk (a sync runs on one thread of its handle;
 * thread-local, as several handles' syncs may run at once). */
static _Thread_local const struct tw_store_drift_row *sort_rows;

static int by_disk(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int64_t a = sort_rows[i].disk_id, b = sort_rows[j].disk_id;
    if (a != b)
        return a < b ? -1 : 1;
    return i < j ? -1 : i > j;
}

static enum tw_err sync_work(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct sync_arg *a = arg;
    free(a->ended);
    a->ended = NULL;
    a->n_ended = 0;
    if (a->started)
        memset(a->started, 0, a->n * sizeof(*a->started));
    /* The opens by disk id (each row's results in its own place). */
    size_t *order = malloc((a->n ? a->n : 1) * sizeof(*order));
    char *ids = id_array(a->rows, a->n);
    if (!order || !ids) {
        free(order);
        free(ids);
        return tw_error_set(err, TW_ENOMEM, "out of memory recording drifts");
    }
    for (size_t i = 0; i < a->n; i++)
        order[i] = i;
    sort_rows = a->rows;
    qsort(order, a->n, sizeof(*order), by_disk);
    enum tw_err rc = TW_OK;
    for (size_t k = 0; rc == TW_OK && k < a->n; k++) {
        size_t i = order[k];
        rc = open_one(pg, &a->rows[i], a->since_ms[i], a->started ? &a->started[i] : NULL, err);
    }
    free(order);
    if (rc != TW_OK) {
        free(ids);
        return rc;
    }
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, ids);
    tw_pg_p_text(&p, a->at);
    tw_pg_p_int(&p, a->at_ms);
    PGresult *r;
    rc = tw_pg_run(pg, &q_sync_end, &p, &r, "ending drifts", err);
    free(ids);
    if (rc != TW_OK)
        return rc;
    rc = drift_rows(r, &a->ended, &a->n_ended, "ending drifts", err);
    PQclear(r);
    return rc;
}

enum tw_err tw_pg_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                             const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                             bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                             struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct sync_arg a = {rows, since_ms, n, at, at_ms, started, NULL, 0};
    enum tw_err rc = in_tx(pg, "starting to record the drifts", sync_work, &a, err);
    if (rc != TW_OK) {
        free(a.ended);
        if (started)
            memset(started, 0, n * sizeof(*started));
        return rc;
    }
    *ended = a.ended;
    *n_ended = a.n_ended;
    return TW_OK;
}
