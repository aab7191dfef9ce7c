/*
 * store_query.c - reading the SQLite store back: VMs, disks with their SKU
 * history and latest results, and what compliance needs of a VM, as the
 * rows store.h declares (the REST API's JSON is shaped in src/server/).
 */
#include "store/store_sqlite.h"
#include "store/store_shared.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STMT(q, s, id, err)                                  \
    sqlite3_stmt *q = tw_sq_stmt((s), (id), (err));          \
    if (!q)                                                  \
        return (err) && (err)->code ? (err)->code : TW_EIO

static enum tw_err oom(struct tw_error *err, const char *what)
{
    return tw_error_set(err, TW_ENOMEM, "out of memory reading %s", what);
}

void tw_sq_copy(sqlite3_stmt *st, int col, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

/* Grows *ARR (of *CAP elements of SIZE bytes) to hold one more than N. */
static bool grow(void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, ncap * size);
    if (!p)
        return false;
    memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
    *arr = p;
    *cap = ncap;
    return true;
}

/* Every row of Q (bound already) through ROW into a new array of SIZE-byte
 * elements; ROW returns false when out of memory.  FREE_ROWS (may be NULL)
 * releases what ROW allocated when the read fails. */
static enum tw_err rows(struct tw_sqlite *s, sqlite3_stmt *q, size_t size,
                        bool (*row)(sqlite3_stmt *, void *), void (*free_rows)(void *, size_t),
                        const char *what, void **out, size_t *n_out, struct tw_error *err)
{
    void *arr = NULL;
    size_t n = 0, cap = 0;
    int rc;
    enum tw_err e = TW_OK;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (!grow(&arr, &cap, n, size) || !row(q, (char *)arr + n * size)) {
            e = oom(err, what); /* a row that failed holds nothing to free */
            break;
        }
        n++;
    }
    if (e == TW_OK && rc != SQLITE_DONE)
        e = tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    if (e != TW_OK) {
        if (free_rows)
            free_rows(arr, n);
        else
            free(arr);
        return e;
    }
    *out = arr;
    *n_out = n;
    return TW_OK;
}

/* ---- VMs ---- */

static bool vm_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_vm_row *r = out;
    r->id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, r->name, sizeof(r->name));
    tw_sq_copy(q, 2, r->resource_id, sizeof(r->resource_id));
    tw_sq_copy(q, 3, r->subscription_id, sizeof(r->subscription_id));
    tw_sq_copy(q, 4, r->resource_group, sizeof(r->resource_group));
    tw_sq_copy(q, 5, r->location, sizeof(r->location));
    tw_sq_copy(q, 6, r->vm_size, sizeof(r->vm_size));
    tw_sq_copy(q, 8, r->power_state, sizeof(r->power_state));
    tw_sq_copy(q, 9, r->power_state_at, sizeof(r->power_state_at));
    tw_sq_copy(q, 10, r->last_report_at, sizeof(r->last_report_at));
    r->n_disks = sqlite3_column_int64(q, 11);
    return tw_sh_tags_row((const char *)sqlite3_column_text(q, 7), r);
}

static void vm_rows_free(void *rows, size_t n)
{
    tw_store_vm_rows_free(rows, n);
}

enum tw_err tw_sq_vms(struct tw_store *st, struct tw_store_vm_row **out, size_t *n,
                      struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VMS, err);
    sqlite3_bind_null(q, 1);
    return rows(s, q, sizeof(**out), vm_row, vm_rows_free, "the VMs", (void **)out, n, err);
}

enum tw_err tw_sq_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                     struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VMS, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no VM %lld", (long long)id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading a VM");
    bool ok = vm_row(q, row);
    sqlite3_reset(q);
    return ok ? TW_OK : oom(err, "a VM");
}

/* ---- disks ---- */

static bool disk_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_disk_row *r = out;
    struct tw_disk *d = &r->disk;
    r->id = sqlite3_column_int64(q, 0);
    r->vm_id = sqlite3_column_int64(q, 1);
    tw_sq_copy(q, 2, r->vm_name, sizeof(r->vm_name));
    tw_sq_copy(q, 3, d->name, sizeof(d->name));
    const unsigned char *role = sqlite3_column_text(q, 4);
    d->role = role && strcmp((const char *)role, "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = sqlite3_column_type(q, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 5);
    tw_sq_copy(q, 6, d->sku, sizeof(d->sku));
    d->size_gib = sqlite3_column_int64(q, 7);
    tw_sq_copy(q, 8, d->tier, sizeof(d->tier));
    const unsigned char *cache = sqlite3_column_text(q, 9);
    if (!cache || tw_caching_parse((const char *)cache, &d->caching) != TW_OK)
        d->caching = TW_CACHE_NONE;
    tw_sq_copy(q, 10, d->managed_disk_id, sizeof(d->managed_disk_id));
    d->write_accelerator = sqlite3_column_int(q, 11) != 0;
    tw_sq_copy(q, 12, d->device, sizeof(d->device));
    tw_sq_copy(q, 13, r->last_seen_at, sizeof(r->last_seen_at));
    tw_sq_copy(q, 14, r->detached_at, sizeof(r->detached_at));
    return true;
}

enum tw_err tw_sq_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **out,
                           size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VM_DISKS, err);
    sqlite3_bind_int64(q, 1, vm_id);
    return rows(s, q, sizeof(**out), disk_row, NULL, "a VM's disks", (void **)out, n, err);
}

enum tw_err tw_sq_disks(struct tw_store *st, struct tw_store_disk_row **out, size_t *n,
                        struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISKS, err);
    sqlite3_bind_null(q, 1);
    return rows(s, q, sizeof(**out), disk_row, NULL, "the disks", (void **)out, n, err);
}

enum tw_err tw_sq_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                       struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISKS, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no disk %lld", (long long)id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading a disk");
    disk_row(q, row);
    sqlite3_reset(q);
    return TW_OK;
}

static bool history_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_sku_hist_row *r = out;
    tw_sq_copy(q, 0, r->observed_at, sizeof(r->observed_at));
    tw_sq_copy(q, 1, r->sku, sizeof(r->sku));
    tw_sq_copy(q, 2, r->tier, sizeof(r->tier));
    r->size_gib = sqlite3_column_int64(q, 3);
    return true;
}

enum tw_err tw_sq_disk_history(struct tw_store *st, int64_t disk_id,
                               struct tw_store_sku_hist_row **out, size_t *n,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISK_HISTORY, err);
    sqlite3_bind_int64(q, 1, disk_id);
    return rows(s, q, sizeof(**out), history_row, NULL, "a disk's SKU history", (void **)out, n,
                err);
}

static bool record_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_result_rec *r = out;
    r->id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, r->profile, sizeof(r->profile));
    const char *t = (const char *)sqlite3_column_text(q, 2);
    size_t len = t ? (size_t)sqlite3_column_bytes(q, 2) : 0;
    if (!(r->record = malloc(len + 1)))
        return false;
    memcpy(r->record, t ? t : "", len);
    r->record[len] = '\0';
    r->record_len = len;
    return true;
}

static void recs_free(void *recs, size_t n)
{
    tw_store_result_recs_free(recs, n);
}

enum tw_err tw_sq_disk_results(struct tw_store *st, int64_t disk_id,
                               struct tw_store_result_rec **out, size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISK_RESULTS, err);
    sqlite3_bind_int64(q, 1, disk_id);
    return rows(s, q, sizeof(**out), record_row, recs_free, "a disk's results", (void **)out, n,
                err);
}

/* ---- for compliance ---- */

/* The VM's inventory from its rows: the VM's fields and the disks attached
 * now (those of its newest report), in the order that report listed them. */
static enum tw_err inventory_rows(struct tw_sqlite *s, int64_t vm_id, struct tw_inventory *inv,
                                  struct tw_error *err)
{
    struct tw_store_vm_row vm;
    memset(&vm, 0, sizeof(vm));
    STMT(vq, s, SQ_VM_INV, err);
    sqlite3_bind_int64(vq, 1, vm_id);
    int rc = sqlite3_step(vq);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(vq);
        return tw_error_set(err, TW_ENOENT, "there is no VM %lld", (long long)vm_id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, vq, err, "reading a VM");
    bool ok = vm_row(vq, &vm);
    sqlite3_reset(vq);
    if (!ok)
        return oom(err, "a VM");
    tw_sh_vm_into(&vm, &inv->vm);
    free(vm.tags);

    STMT(q, s, SQ_VM_INV_DISKS, err);
    sqlite3_bind_int64(q, 1, vm_id);
    struct tw_store_disk_row row;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (inv->n_disks == TW_INV_MAX_DISKS)
            continue; /* a report never holds more */
        memset(&row, 0, sizeof(row));
        disk_row(q, &row);
        inv->disks[inv->n_disks++] = row.disk;
    }
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "reading a VM's disks");
    sqlite3_reset(q);
    return TW_OK;
}

enum tw_err tw_sq_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results,
                            struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    /* The inventory from the vms and disks rows (no report is read), the
     * latest results from their records' own text. */
    tw_inventory_init(inv);
    enum tw_err e = inventory_rows(s, vm_id, inv, err);
    if (e != TW_OK)
        return e;
    struct tw_error perr = {0};
    int rc;

    STMT(r, s, SQ_VM_LATEST_RESULTS, err);
    sqlite3_bind_int64(r, 1, vm_id);
    struct tw_result *arr = NULL;
    size_t n = 0, cap = 0;
    while ((rc = sqlite3_step(r)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct tw_result *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                sqlite3_reset(r);
                free(arr);
                return oom(err, "a VM's results");
            }
            arr = p;
            cap = ncap;
        }
        e = tw_result_from_json((const char *)sqlite3_column_text(r, 0),
                                (size_t)sqlite3_column_bytes(r, 0), &arr[n], &perr);
        if (e != TW_OK) {
            sqlite3_reset(r);
            free(arr);
            return tw_error_set(err, TW_EPARSE,
                                "%s: a stored result of VM %lld no longer reads: %s",
                                s->path, (long long)vm_id, perr.msg);
        }
        n++;
    }
    if (rc != SQLITE_DONE) {
        free(arr);
        return tw_sq_fail(s, r, err, "reading a VM's results");
    }
    sqlite3_reset(r);
    *results = arr;
    *n_results = n;
    return TW_OK;
}

enum tw_err tw_sq_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *vq = tw_sq_stmt(s, SQ_FLEET_VMS, err);
    sqlite3_stmt *dq = vq ? tw_sq_stmt(s, SQ_FLEET_DISKS, err) : NULL;
    sqlite3_stmt *rq = dq ? tw_sq_stmt(s, SQ_FLEET_RESULTS, err) : NULL;
    if (!rq)
        return err && err->code ? err->code : TW_EIO;
    struct tw_inventory *inv = malloc(sizeof(*inv));
    if (!inv)
        return oom(err, "the fleet's inventories");
    struct tw_result *res = NULL;
    size_t cap = 0;
    enum tw_err e = TW_OK;
    /* The three cursors walk by VM id side by side; all three are open
     * before the first VM is handed over, so they read one snapshot. */
    int vrc = sqlite3_step(vq), drc = sqlite3_step(dq), rrc = sqlite3_step(rq);
    while (e == TW_OK && vrc == SQLITE_ROW) {
        int64_t vm_id = sqlite3_column_int64(vq, 0);
        struct tw_store_vm_row vm;
        memset(&vm, 0, sizeof(vm));
        if (!vm_row(vq, &vm)) {
            e = oom(err, "a VM");
            break;
        }
        tw_inventory_init(inv);
        tw_sh_vm_into(&vm, &inv->vm);
        free(vm.tags);
        while (drc == SQLITE_ROW && sqlite3_column_int64(dq, 1) < vm_id)
            drc = sqlite3_step(dq);
        struct tw_store_disk_row row;
        while (drc == SQLITE_ROW && sqlite3_column_int64(dq, 1) == vm_id) {
            if (inv->n_disks < TW_INV_MAX_DISKS) {
                memset(&row, 0, sizeof(row));
                disk_row(dq, &row);
                inv->disks[inv->n_disks++] = row.disk;
            }
            drc = sqlite3_step(dq);
        }
        while (rrc == SQLITE_ROW && sqlite3_column_int64(rq, 0) < vm_id)
            rrc = sqlite3_step(rq);
        size_t n = 0;
        struct tw_error why = {0};
        while (rrc == SQLITE_ROW && sqlite3_column_int64(rq, 0) == vm_id) {
            if (!why.code && e == TW_OK) {
                if (n == cap) {
                    size_t ncap = cap ? cap * 2 : 16;
                    struct tw_result *p = realloc(res, ncap * sizeof(*p));
                    if (!p) {
                        e = oom(err, "a VM's results");
                        break;
                    }
                    res = p;
                    cap = ncap;
                }
                struct tw_error perr = {0};
                if (tw_result_from_json((const char *)sqlite3_column_text(rq, 1),
                                        (size_t)sqlite3_column_bytes(rq, 1), &res[n],
                                        &perr) == TW_OK)
                    n++;
                else
                    tw_error_set(&why, TW_EPARSE,
                                 "%s: a stored result of VM %lld no longer reads: %s", s->path,
                                 (long long)vm_id, perr.msg);
            }
            rrc = sqlite3_step(rq);
        }
        if (e != TW_OK)
            break;
        e = fn(arg, vm_id, inv, why.code ? NULL : res, why.code ? 0 : n,
               why.code ? why.msg : NULL);
        if (e != TW_OK && err && !err->code)
            tw_error_set(err, e, "the walk of the fleet stopped");
        vrc = sqlite3_step(vq);
    }
    if (e == TW_OK && vrc != SQLITE_DONE)
        e = tw_sq_fail(s, vq, err, "reading the VMs");
    else if (e == TW_OK && drc != SQLITE_ROW && drc != SQLITE_DONE)
        e = tw_sq_fail(s, dq, err, "reading the disks");
    else if (e == TW_OK && rrc != SQLITE_ROW && rrc != SQLITE_DONE)
        e = tw_sq_fail(s, rq, err, "reading the results");
    sqlite3_reset(vq);
    sqlite3_reset(dq);
    sqlite3_reset(rq);
    free(res);
    free(inv);
    return e;
}

enum tw_err tw_sq_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VM_IDS, err);
    int64_t *arr = NULL;
    size_t k = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (k == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            int64_t *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                sqlite3_reset(q);
                free(arr);
                return oom(err, "the VM ids");
            }
            arr = p;
            cap = ncap;
        }
        arr[k++] = sqlite3_column_int64(q, 0);
    }
    if (rc != SQLITE_DONE) {
        free(arr);
        return tw_sq_fail(s, q, err, "listing VM ids");
    }
    sqlite3_reset(q);
    *ids = arr;
    *n = k;
    return TW_OK;
}

/* ---- pages ---- */

/* Binds a page's filters and bounds (one row more than the page, to know
 * whether another follows). */
static void bind_page(sqlite3_stmt *q, const struct tw_store_page *pg)
{
    tw_sq_text(q, 2, pg->vm, true);
    tw_sq_text(q, 3, pg->sku, true);
    tw_sq_text(q, 4, pg->resource_group, true);
    sqlite3_bind_int64(q, 5, (sqlite3_int64)pg->limit + 1);
    sqlite3_bind_int64(q, 6, (sqlite3_int64)pg->offset);
}

enum tw_err tw_sq_vms_page(struct tw_store *st, const struct tw_store_page *pg,
                           struct tw_store_vm_row **out, size_t *n, bool *more,
                           struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VMS_PAGE, err);
    bind_page(q, pg);
    enum tw_err rc =
        rows(s, q, sizeof(**out), vm_row, vm_rows_free, "the VMs", (void **)out, n, err);
    if (rc == TW_OK && *n > pg->limit) {
        *more = true;
        free((*out)[pg->limit].tags);
        *n = pg->limit;
    }
    return rc;
}

enum tw_err tw_sq_disks_page(struct tw_store *st, const struct tw_store_page *pg,
                             struct tw_store_disk_row **out, size_t *n, bool *more,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISKS_PAGE, err);
    bind_page(q, pg);
    enum tw_err rc = rows(s, q, sizeof(**out), disk_row, NULL, "the disks", (void **)out, n, err);
    if (rc == TW_OK && *n > pg->limit) {
        *more = true;
        *n = pg->limit;
    }
    return rc;
}

static bool id_row(sqlite3_stmt *q, void *out)
{
    *(int64_t *)out = sqlite3_column_int64(q, 0);
    return true;
}

enum tw_err tw_sq_vm_ids_page(struct tw_store *st, const struct tw_store_page *pg, int64_t **out,
                              size_t *n, bool *more, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VM_IDS_PAGE, err);
    bind_page(q, pg);
    enum tw_err rc = rows(s, q, sizeof(**out), id_row, NULL, "the VM ids", (void **)out, n, err);
    if (rc == TW_OK && *n > pg->limit) {
        *more = true;
        *n = pg->limit;
    }
    return rc;
}

/* ---- kept verdicts ---- */

enum tw_err tw_sq_fleet_verdicts(struct tw_store *st, const char *basis, tw_store_verdict_fn fn,
                                 void *arg, size_t *n_vms, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *cq = tw_sq_stmt(s, SQ_VM_COUNT, err);
    sqlite3_stmt *q = cq ? tw_sq_stmt(s, SQ_FLEET_VERDICTS, err) : NULL;
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    /* The count's statement stays open while the verdicts are read, so
     * both read one snapshot. */
    if (sqlite3_step(cq) != SQLITE_ROW)
        return tw_sq_fail(s, cq, err, "counting the VMs");
    if (n_vms)
        *n_vms = (size_t)sqlite3_column_int64(cq, 0);
    sqlite3_bind_text(q, 1, basis, -1, SQLITE_STATIC);
    enum tw_err e = TW_OK;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        e = fn(arg, sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1),
               (const char *)sqlite3_column_text(q, 2), sqlite3_column_int(q, 3) != 0);
        if (e != TW_OK) {
            if (err && !err->code)
                tw_error_set(err, e, "the walk of the fleet's verdicts stopped");
            break;
        }
    }
    if (e == TW_OK && rc != SQLITE_DONE)
        e = tw_sq_fail(s, q, err, "reading the fleet's verdicts");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    sqlite3_reset(cq);
    return e;
}

static bool latest_ref_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_latest_ref *r = out;
    r->vm_id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, r->result_id, sizeof(r->result_id));
    r->first = sqlite3_column_int(q, 2) != 0;
    return true;
}

enum tw_err tw_sq_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_latest_ref **out, size_t *n, bool *more,
                              struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_LATEST_PAGE, err);
    bind_page(q, pg);
    enum tw_err rc = rows(s, q, sizeof(**out), latest_ref_row, NULL, "the latest results",
                          (void **)out, n, err);
    if (rc == TW_OK && *n > pg->limit) {
        *more = true;
        *n = pg->limit;
    }
    return rc;
}

static bool stale_row(sqlite3_stmt *q, void *out)
{
    struct tw_store_stale *r = out;
    r->vm_id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, r->last_report_id, sizeof(r->last_report_id));
    return true;
}

enum tw_err tw_sq_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                 size_t max,
                                 struct tw_store_stale **out, size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VERDICTS_STALE, err);
    sqlite3_bind_text(q, 1, basis, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, (sqlite3_int64)max);
    sqlite3_bind_int64(q, 3, after);
    enum tw_err rc = rows(s, q, sizeof(**out), stale_row, NULL, "the VMs to judge again",
                          (void **)out, n, err);
    sqlite3_clear_bindings(q);
    return rc;
}

enum tw_err tw_sq_verdicts_keep(struct tw_store *st, const char *basis,
                                const struct tw_store_kept *kept, size_t n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *sp = tw_sq_stmt(s, SQ_SAVEPOINT_OP, err);
    sqlite3_stmt *rel = sp ? tw_sq_stmt(s, SQ_RELEASE_OP, err) : NULL;
    sqlite3_stmt *back = rel ? tw_sq_stmt(s, SQ_ROLLBACK_TO_OP, err) : NULL;
    sqlite3_stmt *q = back ? tw_sq_stmt(s, SQ_VERDICT_KEEP, err) : NULL;
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    if (sqlite3_step(sp) != SQLITE_DONE)
        return tw_sq_fail(s, sp, err, "starting to keep verdicts");
    sqlite3_reset(sp);
    enum tw_err e = TW_OK;
    for (size_t i = 0; e == TW_OK && i < n; i++) {
        const struct tw_store_kept *k = &kept[i];
        sqlite3_bind_int64(q, 1, k->vm_id);
        tw_sq_text(q, 2, k->last_report_id, false);
        tw_sq_text(q, 3, k->target, false); /* "": any target */
        tw_sq_text(q, 4, k->profile, true);
        tw_sq_text(q, 5, k->kind, true);
        tw_sq_text(q, 6, k->kind ? (k->skus ? k->skus : "") : NULL, true);
        tw_sq_text(q, 7, basis, false);
        tw_sq_text(q, 8, k->result_id, true);
        if (sqlite3_step(q) != SQLITE_DONE)
            e = tw_sq_fail(s, q, err, "keeping a verdict");
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
    }
    if (e == TW_OK) {
        if (sqlite3_step(rel) == SQLITE_DONE) {
            sqlite3_reset(rel);
            return TW_OK;
        }
        /* The RELEASE that would commit failed (busy, a full disk): undone
         * below, so the handle holds no transaction. */
        e = tw_sq_fail(s, rel, err, "finishing the kept verdicts");
    }
    if (!sqlite3_get_autocommit(s->db)) {
        sqlite3_step(back);
        sqlite3_reset(back);
        sqlite3_step(rel);
        sqlite3_reset(rel);
    }
    return e;
}
