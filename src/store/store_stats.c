/*
 * store_stats.c - the fleet's counts for /metrics: VMs by size, attached
 * disks by SKU and tier, and the VMs whose agents have not been heard from
 * since an instant (tw_store_fleet_counts), with the SQLite store's
 * implementation of it.
 *
 * The three queries read small tables (vms, disks) and, for the silence,
 * one reports row per VM by its primary key; they run in one read
 * transaction so the counts agree with each other.  Their statements are
 * prepared per call: /metrics takes the counts at most once a minute.
 */
#include "store/store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"

/* ---- the public function (dispatch, as store.c does for the others) ---- */

void tw_store_fleet_counts_free(struct tw_store_fleet_counts *c)
{
    if (!c)
        return;
    free(c->vm_sizes);
    free(c->disk_skus);
    memset(c, 0, sizeof(*c));
}

enum tw_err tw_store_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                                  struct tw_store_fleet_counts *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    enum tw_err rc = st->ops->fleet_counts(st, silent_before_ms, out, err);
    if (rc != TW_OK)
        tw_store_fleet_counts_free(out);
    return rc;
}

/* ---- SQLite ---- */

/* Appends a row (KEY, TIER, N) to *ROWS; past TW_STORE_COUNTS_MAX - 1
 * rows, the last row is "other" and counts the rest. */
static enum tw_err add_row(struct tw_store_count **rows, size_t *n, size_t *cap, const char *key,
                           const char *tier, int64_t count)
{
    if (*n == TW_STORE_COUNTS_MAX) {
        struct tw_store_count *last = &(*rows)[*n - 1];
        if (strcmp(last->key, "other") != 0 || last->tier[0]) {
            snprintf(last->key, sizeof(last->key), "other");
            last->tier[0] = '\0';
        }
        last->n += count;
        return TW_OK;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct tw_store_count *r = realloc(*rows, nc * sizeof(*r));
        if (!r)
            return TW_ENOMEM;
        *rows = r;
        *cap = nc;
    }
    struct tw_store_count *r = &(*rows)[(*n)++];
    snprintf(r->key, sizeof(r->key), "%s", key ? key : "");
    snprintf(r->tier, sizeof(r->tier), "%s", tier ? tier : "");
    r->n = count;
    return TW_OK;
}

/* Runs SQL (columns: key, tier or NULL, count) into *ROWS. */
static enum tw_err count_rows(struct tw_sqlite *s, const char *sql, const char *what,
                              struct tw_store_count **rows, size_t *n, struct tw_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (add_row(rows, n, &cap, (const char *)sqlite3_column_text(q, 0),
                    (const char *)sqlite3_column_text(q, 1),
                    sqlite3_column_int64(q, 2)) != TW_OK) {
            sqlite3_finalize(q);
            return tw_error_set(err, TW_ENOMEM, "%s: out of memory %s", s->path, what);
        }
    }
    enum tw_err e = TW_OK;
    if (rc != SQLITE_DONE)
        e = tw_sq_fail(s, NULL, err, what);
    sqlite3_finalize(q);
    return e;
}

/* Counts the VMs whose newest report came in before BEFORE_MS.  The
 * received time is the server's own clock, so an agent's clock that is
 * wrong neither hides nor invents a silence. */
static enum tw_err count_silent(struct tw_sqlite *s, int64_t before_ms, int64_t *n,
                                struct tw_error *err)
{
    static const char sql[] = "SELECT p.received_at FROM vms v "
                              "JOIN reports p ON p.id = v.last_report_id";
    const char *what = "counting the VMs not heard from";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    int rc;
    *n = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *at = (const char *)sqlite3_column_text(q, 0);
        int64_t ms;
        /* A received time that does not read can't have been written by
         * this server: counted as silent, since nothing says it is not. */
        if (!at || !tw_rfc3339_ms(at, &ms) || ms < before_ms)
            (*n)++;
    }
    enum tw_err e = TW_OK;
    if (rc != SQLITE_DONE)
        e = tw_sq_fail(s, NULL, err, what);
    sqlite3_finalize(q);
    return e;
}

enum tw_err tw_sq_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                               struct tw_store_fleet_counts *out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "starting to count the fleet");
    enum tw_err rc = count_rows(s,
                                "SELECT vm_size, NULL, count(*) FROM vms "
                                "GROUP BY vm_size ORDER BY vm_size",
                                "counting the VMs by size", &out->vm_sizes, &out->n_vm_sizes, err);
    if (rc == TW_OK)
        rc = count_rows(s,
                        "SELECT sku, coalesce(tier, ''), count(*) FROM disks "
                        "WHERE detached_ms IS NULL GROUP BY sku, coalesce(tier, '') "
                        "ORDER BY sku, coalesce(tier, '')",
                        "counting the disks by SKU", &out->disk_skus, &out->n_disk_skus, err);
    if (rc == TW_OK)
        rc = count_silent(s, silent_before_ms, &out->vms_silent, err);
    for (size_t i = 0; i < out->n_vm_sizes; i++)
        out->vms += out->vm_sizes[i].n;
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        if (rc == TW_OK)
            rc = tw_sq_fail(s, NULL, err, "ending the count of the fleet");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}
