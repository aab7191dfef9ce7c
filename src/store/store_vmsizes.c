/*
 * store_vmsizes.c - a region's VM sizes as ARM's Resource SKUs gave them,
 * cached in the SQLite store (store.h, "VM sizes").  The limits are kept as
 * the JSON text core/vmcap makes of them: the store does not read them.
 */
#include "store/store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum tw_err step_done(struct tw_sqlite *s, sqlite3_stmt *q, const char *what,
                             struct tw_error *err)
{
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

enum tw_err tw_sq_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                               const char *fetched_at, const struct tw_store_vm_size *rows,
                               size_t n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *sp = tw_sq_stmt(s, SQ_SAVEPOINT_OP, err);
    sqlite3_stmt *rel = sp ? tw_sq_stmt(s, SQ_RELEASE_OP, err) : NULL;
    sqlite3_stmt *back = rel ? tw_sq_stmt(s, SQ_ROLLBACK_TO_OP, err) : NULL;
    sqlite3_stmt *del = back ? tw_sq_stmt(s, SQ_VM_SIZES_DELETE, err) : NULL;
    sqlite3_stmt *ins = del ? tw_sq_stmt(s, SQ_VM_SIZES_INSERT, err) : NULL;
    if (!ins)
        return err && err->code ? err->code : TW_EIO;
    /* A savepoint: one transaction of its own, or a part of the caller's. */
    enum tw_err e = step_done(s, sp, "starting to store VM sizes", err);
    if (e != TW_OK)
        return e;
    sqlite3_bind_text(del, 1, region, -1, SQLITE_STATIC);
    e = step_done(s, del, "replacing a region's VM sizes", err);
    sqlite3_clear_bindings(del);
    for (size_t i = 0; e == TW_OK && i < n; i++) {
        e = tw_sq_bind_instant(ins, 6, fetched_at, "the VM sizes' fetch time", err);
        if (e != TW_OK)
            break;
        sqlite3_bind_text(ins, 1, region, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, rows[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 3, rows[i].caps, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 4, source, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 5, fetched_at, -1, SQLITE_STATIC);
        e = step_done(s, ins, "storing a VM size", err);
        sqlite3_clear_bindings(ins);
    }
    if (e == TW_OK && (e = step_done(s, rel, "finishing the VM sizes", err)) == TW_OK)
        return TW_OK;
    /* Undone as a whole (also when the RELEASE that would commit failed):
     * the region keeps the sizes it had, the handle holds no transaction. */
    if (!sqlite3_get_autocommit(s->db)) {
        sqlite3_step(back);
        sqlite3_reset(back);
        sqlite3_step(rel);
        sqlite3_reset(rel);
    }
    return e;
}

enum tw_err tw_sq_vm_sizes_get(struct tw_store *st, const char *region,
                               struct tw_store_vm_size **out, size_t *n_out, char *source,
                               size_t source_len, char *fetched_at, size_t fetched_len,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_VM_SIZES_GET, err);
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    sqlite3_bind_text(q, 1, region, -1, SQLITE_STATIC);
    struct tw_store_vm_size *arr = NULL;
    size_t n = 0, cap = 0;
    enum tw_err e = TW_OK;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct tw_store_vm_size *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                e = tw_error_set(err, TW_ENOMEM, "out of memory reading VM sizes");
                break;
            }
            arr = p;
            cap = ncap;
        }
        tw_sq_copy(q, 0, arr[n].name, sizeof(arr[n].name));
        const char *caps = (const char *)sqlite3_column_text(q, 1);
        arr[n].caps = strdup(caps ? caps : "");
        if (!arr[n].caps) {
            e = tw_error_set(err, TW_ENOMEM, "out of memory reading VM sizes");
            break;
        }
        if (n == 0) {
            if (source && source_len)
                tw_sq_copy(q, 2, source, source_len);
            if (fetched_at && fetched_len)
                tw_sq_copy(q, 3, fetched_at, fetched_len);
        }
        n++;
    }
    if (e == TW_OK && rc != SQLITE_DONE)
        e = tw_sq_fail(s, q, err, "reading VM sizes");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (e == TW_OK && n == 0)
        e = tw_error_set(err, TW_ENOENT, "no VM sizes are cached for region %s", region);
    if (e != TW_OK) {
        tw_store_vm_sizes_free(arr, n);
        return e;
    }
    *out = arr;
    *n_out = n;
    return TW_OK;
}
