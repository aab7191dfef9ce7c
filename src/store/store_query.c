/*
 * store_query.c - reading the SQLite store back: VMs, disks with their SKU
 * history and latest results, and what compliance needs of a VM.  The JSON
 * shapes are the ones store.h documents (and the REST API serves).
 */
#include "store/store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STMT(q, s, id, err)                                  \
    sqlite3_stmt *q = tw_sq_stmt((s), (id), (err));          \
    if (!q)                                                  \
        return (err) && (err)->code ? (err)->code : TW_EIO

/* Sets KEY of O to V (stolen); clears *OK when V or the set failed. */
static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

/* Text where "" means unknown: null in JSON. */
static json_t *text_or_null(sqlite3_stmt *q, int col)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    return t && t[0] ? tw_sq_json_text(q, col) : json_null();
}

static enum tw_err oom(struct tw_error *err, const char *what)
{
    return tw_error_set(err, TW_ENOMEM, "out of memory reading %s", what);
}

/* ---- VMs ---- */

static json_t *vm_row(sqlite3_stmt *q)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = true;
    put(o, "id", json_integer(sqlite3_column_int64(q, 0)), &ok);
    put(o, "name", tw_sq_json_text(q, 1), &ok);
    put(o, "resource_id", text_or_null(q, 2), &ok);
    put(o, "subscription_id", text_or_null(q, 3), &ok);
    put(o, "resource_group", text_or_null(q, 4), &ok);
    put(o, "location", tw_sq_json_text(q, 5), &ok);
    put(o, "vm_size", tw_sq_json_text(q, 6), &ok);
    const char *tags = (const char *)sqlite3_column_text(q, 7);
    json_t *t = tags ? json_loads(tags, 0, NULL) : NULL;
    put(o, "tags", t ? t : json_object(), &ok);
    put(o, "power_state", tw_sq_json_text(q, 8), &ok);
    put(o, "power_state_at", tw_sq_json_text(q, 9), &ok);
    put(o, "last_report_at", tw_sq_json_text(q, 10), &ok);
    put(o, "disks", json_integer(sqlite3_column_int64(q, 11)), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *disk_row(sqlite3_stmt *q, bool detached_field)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = true;
    put(o, "id", json_integer(sqlite3_column_int64(q, 0)), &ok);
    put(o, "vm_id", json_integer(sqlite3_column_int64(q, 1)), &ok);
    put(o, "vm_name", tw_sq_json_text(q, 2), &ok);
    put(o, "name", tw_sq_json_text(q, 3), &ok);
    put(o, "role", tw_sq_json_text(q, 4), &ok);
    put(o, "lun", tw_sq_json_int(q, 5), &ok);
    put(o, "sku", tw_sq_json_text(q, 6), &ok);
    put(o, "size_gib", json_integer(sqlite3_column_int64(q, 7)), &ok);
    put(o, "tier", tw_sq_json_text(q, 8), &ok);
    put(o, "caching", tw_sq_json_text(q, 9), &ok);
    put(o, "managed_disk_id", text_or_null(q, 10), &ok);
    put(o, "write_accelerator", json_boolean(sqlite3_column_int(q, 11)), &ok);
    put(o, "device", tw_sq_json_text(q, 12), &ok);
    put(o, "last_seen_at", tw_sq_json_text(q, 13), &ok);
    if (detached_field)
        put(o, "detached_at", tw_sq_json_text(q, 14), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Every row of Q (bound already) as ROW makes it, into a new array. */
static enum tw_err rows(struct tw_sqlite *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
                        const char *what, json_t **out, struct tw_error *err)
{
    json_t *arr = json_array();
    if (!arr) {
        sqlite3_reset(q);
        return oom(err, what);
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (json_array_append_new(arr, row(q)) != 0) {
            sqlite3_reset(q);
            json_decref(arr);
            return oom(err, what);
        }
    }
    if (rc != SQLITE_DONE) {
        json_decref(arr);
        return tw_sq_fail(s, q, err, what);
    }
    sqlite3_reset(q);
    *out = arr;
    return TW_OK;
}

static json_t *disk_list_row(sqlite3_stmt *q)
{
    return disk_row(q, false);
}

enum tw_err tw_sq_vms(struct tw_store *st, json_t **out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VMS, err);
    sqlite3_bind_null(q, 1);
    return rows(s, q, vm_row, "the VMs", out, err);
}

enum tw_err tw_sq_vm(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
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
    json_t *vm = vm_row(q);
    sqlite3_reset(q);
    if (!vm)
        return oom(err, "a VM");
    sqlite3_stmt *d = tw_sq_stmt(s, SQ_VM_DISKS, err);
    if (!d) {
        json_decref(vm);
        return err && err->code ? err->code : TW_EIO;
    }
    sqlite3_bind_int64(d, 1, id);
    json_t *disks = NULL;
    enum tw_err e = rows(s, d, disk_list_row, "a VM's disks", &disks, err);
    if (e == TW_OK && json_object_set_new(vm, "disks", disks) != 0)
        e = oom(err, "a VM");
    if (e != TW_OK) {
        json_decref(vm);
        return e;
    }
    *out = vm;
    return TW_OK;
}

/* ---- disks ---- */

enum tw_err tw_sq_disks(struct tw_store *st, json_t **out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_DISKS, err);
    sqlite3_bind_null(q, 1);
    return rows(s, q, disk_list_row, "the disks", out, err);
}

static json_t *history_row(sqlite3_stmt *q)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = true;
    put(o, "observed_at", tw_sq_json_text(q, 0), &ok);
    put(o, "sku", tw_sq_json_text(q, 1), &ok);
    put(o, "tier", tw_sq_json_text(q, 2), &ok);
    put(o, "size_gib", json_integer(sqlite3_column_int64(q, 3)), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A stored result record back as JSON; NULL if it no longer parses. */
static json_t *record_row(sqlite3_stmt *q)
{
    const char *t = (const char *)sqlite3_column_text(q, 0);
    return t ? json_loadb(t, (size_t)sqlite3_column_bytes(q, 0), 0, NULL) : NULL;
}

enum tw_err tw_sq_disk(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
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
    json_t *disk = disk_row(q, true);
    sqlite3_reset(q);
    if (!disk)
        return oom(err, "a disk");

    json_t *hist = NULL, *results = NULL;
    STMT(h, s, SQ_DISK_HISTORY, err);
    sqlite3_bind_int64(h, 1, id);
    enum tw_err e = rows(s, h, history_row, "a disk's SKU history", &hist, err);
    if (e == TW_OK) {
        sqlite3_stmt *r = tw_sq_stmt(s, SQ_DISK_RESULTS, err);
        if (!r) {
            e = err && err->code ? err->code : TW_EIO;
        } else {
            sqlite3_bind_int64(r, 1, id);
            e = rows(s, r, record_row, "a disk's results", &results, err);
        }
    }
    if (e == TW_OK && (json_object_set_new(disk, "sku_history", hist) != 0 ||
                       json_object_set_new(disk, "results", results) != 0))
        e = oom(err, "a disk");
    else if (e != TW_OK) {
        json_decref(hist);
        json_decref(results);
    }
    if (e != TW_OK) {
        json_decref(disk);
        return e;
    }
    *out = disk;
    return TW_OK;
}

/* ---- for compliance ---- */

enum tw_err tw_sq_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results,
                            struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VM_LAST_BODY, err);
    sqlite3_bind_int64(q, 1, vm_id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no VM %lld", (long long)vm_id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading a VM's last report");
    /* The inventory as last reported is in that report's body. */
    struct tw_report *rep = tw_report_new();
    if (!rep) {
        sqlite3_reset(q);
        return oom(err, "a VM's last report");
    }
    struct tw_error perr = {0};
    enum tw_err e = tw_report_from_json((const char *)sqlite3_column_text(q, 0),
                                        (size_t)sqlite3_column_bytes(q, 0), rep, &perr);
    sqlite3_reset(q);
    if (e != TW_OK) {
        tw_report_free(rep);
        return tw_error_set(err, TW_EPARSE, "%s: the last report of VM %lld no longer reads: %s",
                            s->path, (long long)vm_id, perr.msg);
    }
    *inv = rep->inv;
    tw_report_free(rep);

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
