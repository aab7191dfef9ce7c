/*
 * store_drift.c - the SQLite store's drift rows (store.h "drift"): a disk
 * running below the SKU its policy requires while its VM runs, opened when
 * first seen, kept (with its first since) while it lasts, ended when it is
 * gone; the stored policies' names; and a VM's power states newest first,
 * read back page by page to find when a running VM last started.
 *
 * The statements are this file's own, prepared per call: drift is judged
 * once a minute at most and touches a handful of rows, so they need no
 * slot in the handle's statement cache.  The table (schema 5):
 *   drift(id, disk_id, vm_id, sku, required_sku, policy, since, since_ms,
 *         seen_at, ended_at, ended_ms), one open row per disk at most
 *   (the partial unique index drift_open).
 */
#include "store/store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum tw_err prep(struct tw_sqlite *s, const char *sql, sqlite3_stmt **q, const char *what,
                        struct tw_error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK) {
        *q = NULL;
        return tw_sq_fail(s, NULL, err, what);
    }
    return TW_OK;
}

static enum tw_err step_done(struct tw_sqlite *s, sqlite3_stmt *q, const char *what,
                             struct tw_error *err)
{
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

/* ---- open, close ---- */

static const char *const open_find_sql =
    "SELECT id FROM drift WHERE disk_id = ?1 AND ended_at IS NULL";
static const char *const open_insert_sql =
    "INSERT INTO drift(disk_id, vm_id, sku, required_sku, policy, since, since_ms, seen_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))";
/* The open drift goes on: its since stays the first one seen. */
static const char *const open_update_sql =
    "UPDATE drift SET vm_id = ?2, sku = ?3, required_sku = ?4, policy = ?5, "
    "seen_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?1";

/* The statements of an open, prepared once for a batch. */
struct open_stmts {
    sqlite3_stmt *find, *ins, *upd;
};

static void open_stmts_free(struct open_stmts *o)
{
    sqlite3_finalize(o->find);
    sqlite3_finalize(o->ins);
    sqlite3_finalize(o->upd);
    memset(o, 0, sizeof(*o));
}

static enum tw_err open_stmts_prep(struct tw_sqlite *s, struct open_stmts *o,
                                   struct tw_error *err)
{
    memset(o, 0, sizeof(*o));
    enum tw_err rc = prep(s, open_find_sql, &o->find, "preparing to record a drift", err);
    if (rc == TW_OK)
        rc = prep(s, open_insert_sql, &o->ins, "preparing to record a drift", err);
    if (rc == TW_OK)
        rc = prep(s, open_update_sql, &o->upd, "preparing to record a drift", err);
    if (rc != TW_OK)
        open_stmts_free(o);
    return rc;
}

static enum tw_err open_one(struct tw_sqlite *s, struct open_stmts *o,
                            const struct tw_store_drift_row *d, int64_t since_ms, bool *started,
                            struct tw_error *err)
{
    enum tw_err rc = TW_OK;
    sqlite3_bind_int64(o->find, 1, d->disk_id);
    int step = sqlite3_step(o->find);
    int64_t id = step == SQLITE_ROW ? sqlite3_column_int64(o->find, 0) : 0;
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "looking up a disk's open drift");
    sqlite3_reset(o->find);
    sqlite3_clear_bindings(o->find);
    if (rc != TW_OK)
        return rc;
    sqlite3_stmt *w = id ? o->upd : o->ins;
    if (id) {
        sqlite3_bind_int64(w, 1, id);
    } else {
        sqlite3_bind_int64(w, 1, d->disk_id);
        tw_sq_text(w, 6, d->since, false);
        sqlite3_bind_int64(w, 7, since_ms);
    }
    sqlite3_bind_int64(w, 2, d->vm_id);
    tw_sq_text(w, 3, d->sku, false);
    tw_sq_text(w, 4, d->required_sku, false);
    tw_sq_text(w, 5, d->policy, false);
    if (sqlite3_step(w) != SQLITE_DONE) {
        int ext = sqlite3_extended_errcode(s->db);
        if (ext == SQLITE_CONSTRAINT_FOREIGNKEY)
            rc = tw_error_set(err, TW_ENOENT, "there is no disk %lld or no VM %lld to record a "
                              "drift of", (long long)d->disk_id, (long long)d->vm_id);
        else
            rc = tw_sq_fail(s, NULL, err, "recording a drift");
    }
    sqlite3_reset(w);
    sqlite3_clear_bindings(w);
    if (rc == TW_OK && started)
        *started = id == 0;
    return rc;
}

static enum tw_err open_in_tx(struct tw_sqlite *s, const struct tw_store_drift_row *d,
                              int64_t since_ms, bool *started, struct tw_error *err)
{
    struct open_stmts o;
    enum tw_err rc = open_stmts_prep(s, &o, err);
    if (rc != TW_OK)
        return rc;
    rc = open_one(s, &o, d, since_ms, started, err);
    open_stmts_free(&o);
    return rc;
}

/* A transaction of its own (BEGIN IMMEDIATE: the write lock first, so a
 * read that comes before a write can't find its snapshot stale), or a
 * savepoint in the caller's. */
static enum tw_err tx_begin(struct tw_sqlite *s, bool *own, const char *what,
                            struct tw_error *err)
{
    *own = sqlite3_get_autocommit(s->db) != 0;
    sqlite3_stmt *q = tw_sq_stmt(s, *own ? SQ_BEGIN : SQ_SAVEPOINT_OP, err);
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    return step_done(s, q, what, err);
}

/* Commits (RC TW_OK) or undoes the whole of it. */
static enum tw_err tx_end(struct tw_sqlite *s, bool own, enum tw_err rc, struct tw_error *err)
{
    if (rc == TW_OK) {
        sqlite3_stmt *q = tw_sq_stmt(s, own ? SQ_COMMIT : SQ_RELEASE_OP, err);
        rc = q ? step_done(s, q, "committing the drifts", err)
               : (err && err->code ? err->code : TW_EIO);
        if (rc == TW_OK)
            return TW_OK;
    }
    if (!sqlite3_get_autocommit(s->db)) {
        sqlite3_stmt *back = tw_sq_stmt(s, own ? SQ_ROLLBACK : SQ_ROLLBACK_TO_OP, NULL);
        if (back) {
            sqlite3_step(back);
            sqlite3_reset(back);
        }
        sqlite3_stmt *rel = own ? NULL : tw_sq_stmt(s, SQ_RELEASE_OP, NULL);
        if (rel) {
            sqlite3_step(rel);
            sqlite3_reset(rel);
        }
    }
    return rc;
}

enum tw_err tw_sq_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                             int64_t since_ms, bool *started, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    bool own;
    enum tw_err rc = tx_begin(s, &own, "starting to record a drift", err);
    if (rc != TW_OK)
        return rc;
    rc = tx_end(s, own, open_in_tx(s, d, since_ms, started, err), err);
    if (rc != TW_OK && started)
        *started = false;
    return rc;
}

static const char *const close_sql =
    "UPDATE drift SET ended_at = ?2, ended_ms = ?3 WHERE disk_id = ?1 AND ended_at IS NULL";

enum tw_err tw_sq_drift_close(struct tw_store *st, int64_t disk_id, const char *at, int64_t at_ms,
                              bool *ended, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, close_sql, &q, "preparing to end a drift", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, disk_id);
    tw_sq_text(q, 2, at, false);
    sqlite3_bind_int64(q, 3, at_ms);
    if (sqlite3_step(q) != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "ending a drift");
    else if (ended)
        *ended = sqlite3_changes(s->db) > 0;
    sqlite3_finalize(q);
    return rc;
}

/* ---- lists ---- */

static const char *const list_sql =
    "SELECT r.disk_id, r.vm_id, coalesce(v.name, ''), coalesce(k.name, ''), r.sku, "
    "r.required_sku, r.policy, r.since, coalesce(r.ended_at, '') FROM drift r "
    "LEFT JOIN vms v ON v.id = r.vm_id LEFT JOIN disks k ON k.id = r.disk_id "
    "WHERE ?1 = 0 OR r.ended_at IS NULL ORDER BY r.since_ms, r.id";

enum tw_err tw_sq_drift_list(struct tw_store *st, bool open_only,
                             struct tw_store_drift_row **out, size_t *n_out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, list_sql, &q, "preparing to read the drifts", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int(q, 1, open_only);
    struct tw_store_drift_row *arr = NULL;
    size_t n = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct tw_store_drift_row *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the drifts");
                break;
            }
            arr = p;
            cap = ncap;
        }
        struct tw_store_drift_row *r = &arr[n++];
        memset(r, 0, sizeof(*r));
        r->disk_id = sqlite3_column_int64(q, 0);
        r->vm_id = sqlite3_column_int64(q, 1);
        tw_sq_copy(q, 2, r->vm, sizeof(r->vm));
        tw_sq_copy(q, 3, r->disk, sizeof(r->disk));
        tw_sq_copy(q, 4, r->sku, sizeof(r->sku));
        tw_sq_copy(q, 5, r->required_sku, sizeof(r->required_sku));
        tw_sq_copy(q, 6, r->policy, sizeof(r->policy));
        tw_sq_copy(q, 7, r->since, sizeof(r->since));
        tw_sq_copy(q, 8, r->ended_at, sizeof(r->ended_at));
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the drifts");
    sqlite3_finalize(q);
    if (rc != TW_OK) {
        free(arr);
        return rc;
    }
    *out = arr;
    *n_out = n;
    return TW_OK;
}

static const char *const names_sql = "SELECT name FROM policies ORDER BY name";

static void names_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

enum tw_err tw_sq_policy_names(struct tw_store *st, char ***out, size_t *n_out,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, names_sql, &q, "preparing to read the policies' names", err);
    if (rc != TW_OK)
        return rc;
    char **v = NULL;
    size_t n = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **p = realloc(v, ncap * sizeof(*p));
            if (!p) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the policies' names");
                break;
            }
            v = p;
            cap = ncap;
        }
        const char *t = (const char *)sqlite3_column_text(q, 0);
        if (!(v[n] = strdup(t ? t : ""))) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the policies' names");
            break;
        }
        n++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the policies' names");
    sqlite3_finalize(q);
    if (rc != TW_OK) {
        names_free(v, n);
        return rc;
    }
    *out = v;
    *n_out = n;
    return TW_OK;
}

/* ---- a VM's power states, newest first ---- */

static const char *const power_before_sql =
    "SELECT observed_ms, state FROM power_states WHERE vm_id = ?1 AND observed_ms <= ?2 "
    "ORDER BY observed_ms DESC, id DESC LIMIT ?3";

enum tw_err tw_sq_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                  size_t max, struct tw_store_sv_power **out, size_t *n_out,
                                  struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, power_before_sql, &q, "preparing to read a VM's power states", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, vm_id);
    sqlite3_bind_int64(q, 2, before_ms);
    sqlite3_bind_int64(q, 3, (sqlite3_int64)max);
    struct tw_store_sv_power *arr = malloc(max * sizeof(*arr));
    if (!arr) {
        sqlite3_finalize(q);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading a VM's power states");
    }
    size_t n = 0;
    int step = SQLITE_DONE;
    while (n < max && (step = sqlite3_step(q)) == SQLITE_ROW) {
        arr[n].at_ms = sqlite3_column_int64(q, 0);
        tw_sq_copy(q, 1, arr[n].state, sizeof(arr[n].state));
        n++;
    }
    if (n < max && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading a VM's power states");
    sqlite3_finalize(q);
    if (rc != TW_OK || n == 0) {
        free(arr);
        arr = NULL;
    }
    if (rc == TW_OK) {
        *out = arr;
        *n_out = n;
    }
    return rc;
}

/* ---- a whole update in one transaction ---- */

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static enum tw_err sync_in_tx(struct tw_sqlite *s, const struct tw_store_drift_row *rows,
                              const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                              bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                              struct tw_error *err)
{
    struct open_stmts o;
    enum tw_err rc = open_stmts_prep(s, &o, err);
    for (size_t i = 0; rc == TW_OK && i < n; i++)
        rc = open_one(s, &o, &rows[i], since_ms[i], started ? &started[i] : NULL, err);
    open_stmts_free(&o);
    if (rc != TW_OK)
        return rc;
    /* Every open drift not among ROWS ends now. */
    int64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
    if (!ids)
        return tw_error_set(err, TW_ENOMEM, "out of memory ending drifts");
    for (size_t i = 0; i < n; i++)
        ids[i] = rows[i].disk_id;
    qsort(ids, n, sizeof(*ids), cmp_id);
    struct tw_store_drift_row *open_rows = NULL;
    size_t n_open = 0, k = 0;
    rc = tw_sq_drift_list(&s->base, true, &open_rows, &n_open, err);
    sqlite3_stmt *q = NULL;
    if (rc == TW_OK)
        rc = prep(s, close_sql, &q, "preparing to end a drift", err);
    for (size_t i = 0; rc == TW_OK && i < n_open; i++) {
        if (bsearch(&open_rows[i].disk_id, ids, n, sizeof(*ids), cmp_id))
            continue;
        sqlite3_bind_int64(q, 1, open_rows[i].disk_id);
        tw_sq_text(q, 2, at, false);
        sqlite3_bind_int64(q, 3, at_ms);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = tw_sq_fail(s, NULL, err, "ending a drift");
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        open_rows[k] = open_rows[i];
        snprintf(open_rows[k].ended_at, sizeof(open_rows[k].ended_at), "%s", at);
        k++;
    }
    sqlite3_finalize(q);
    free(ids);
    if (rc != TW_OK) {
        free(open_rows);
        return rc;
    }
    *ended = open_rows;
    *n_ended = k;
    return TW_OK;
}

enum tw_err tw_sq_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                             const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                             bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    struct tw_store_drift_row *e = NULL;
    size_t ne = 0;
    bool own;
    enum tw_err rc = tx_begin(s, &own, "starting to record the drifts", err);
    if (rc != TW_OK)
        return rc;
    rc = tx_end(s, own, sync_in_tx(s, rows, since_ms, n, at, at_ms, started, &e, &ne, err), err);
    if (rc != TW_OK) {
        free(e);
        if (started)
            memset(started, 0, n * sizeof(*started));
        return rc;
    }
    *ended = e;
    *n_ended = ne;
    return TW_OK;
}
