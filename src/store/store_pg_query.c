/*
 * store_pg_query.c - reading the PostgreSQL store back, as store_query.c
 * reads SQLite: VMs, disks with their SKU history and latest results, what
 * compliance needs of a VM and of the fleet, kept verdicts, and pages.
 *
 * The same rows in the same order: text columns compare byte by byte
 * (COLLATE "C"), NULLs sort first as in SQLite (NULLS FIRST where a
 * column may be NULL), and a name "without regard to case" is compared by
 * lower() under "C" (ASCII folding, as NOCASE).  The fleet's walk reads
 * its three cursors in one snapshot, a batch at a time.
 */
#include "store/store_pg.h"
#include "store/store_shared.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A VM's name and resource group filters: $1 the name, $3 the group. */
#define PG_VM_FILTER                                                                      \
    "($1::text IS NULL OR lower(v.name) = lower($1::text COLLATE \"C\")) AND ($3::text IS " \
    "NULL OR lower(v.resource_group) = lower($3::text COLLATE \"C\"))"
/* A disk's SKU or tier ($2), without regard to case. */
#define PG_SKU_IS(d)                                                                  \
    "(lower(" d ".sku) = lower($2::text COLLATE \"C\") OR lower(" d ".tier) = lower($2::text " \
    "COLLATE \"C\"))"
#define PG_LAST_SEEN                                                                       \
    "CASE WHEN d.detached_ms IS NOT NULL THEN d.last_seen_at WHEN v.last_report_id <> '' " \
    "THEN v.last_report_at ELSE coalesce(v.arm_seen_at, d.last_seen_at) END"
#define PG_VM_SEL                                                                           \
    "SELECT v.id, v.name, v.resource_id, v.subscription_id, v.resource_group, v.location, " \
    "v.vm_size, v.tags, v.power_state, v.power_state_at, v.last_report_at, (SELECT count(*) " \
    "FROM disks d WHERE d.vm_id = v.id AND d.detached_ms IS NULL) "
#define PG_VM_COLS PG_VM_SEL "FROM vms v "
#define PG_DISK_COLS                                                                        \
    "SELECT d.id, d.vm_id, v.name, d.name, d.role, d.lun, d.sku, d.size_gib, d.tier, "      \
    "d.caching, d.managed_disk_id, d.write_accelerator, d.device, " PG_LAST_SEEN ", "        \
    "d.detached_at FROM disks d JOIN vms v ON v.id = d.vm_id "
#define PG_DISK_ORDER " ORDER BY v.name, v.id, d.lun NULLS FIRST, d.name"

TW_PG_STMT(q_vms, PG_VM_COLS "ORDER BY v.name, v.id");
TW_PG_STMT(q_vm, PG_VM_COLS "WHERE v.id = $1");
TW_PG_STMT(q_disks, PG_DISK_COLS "WHERE d.detached_ms IS NULL" PG_DISK_ORDER);
TW_PG_STMT(q_disk, PG_DISK_COLS "WHERE d.id = $1");
TW_PG_STMT(q_vm_disks, PG_DISK_COLS "WHERE d.vm_id = $1 AND d.detached_ms IS NULL ORDER BY "
                                    "d.lun NULLS FIRST, d.name");
TW_PG_STMT(q_disk_history, "SELECT observed_at, sku, tier, size_gib FROM disk_sku_history "
                           "WHERE disk_id = $1 ORDER BY observed_ms, id");
TW_PG_STMT(q_disk_results,
           "SELECT r.id, r.profile, r.record FROM (SELECT r.id, r.profile, row_number() OVER "
           "(PARTITION BY r.profile ORDER BY r.started_ms DESC, r.id DESC) AS n FROM "
           "result_disks rd JOIN results r ON r.id = rd.result_id WHERE rd.disk_id = $1) x "
           "JOIN results r ON r.id = x.id WHERE x.n = 1 ORDER BY x.profile");
TW_PG_STMT(q_vm_inv, "SELECT id, name, resource_id, subscription_id, resource_group, location, "
                     "vm_size, tags, NULL, NULL, NULL, NULL FROM vms WHERE id = $1");
/* The disks attached now, in the order the VM's newest report listed them. */
#define PG_INV_DISKS                                                                        \
    "SELECT d.id, d.vm_id, NULL, d.name, d.role, d.lun, d.sku, d.size_gib, d.tier, "        \
    "d.caching, d.managed_disk_id, d.write_accelerator, d.device, NULL, NULL FROM disks d " \
    "WHERE d.detached_ms IS NULL "
TW_PG_STMT(q_vm_inv_disks, PG_INV_DISKS "AND d.vm_id = $1 ORDER BY d.position NULLS FIRST, "
                                        "d.lun NULLS FIRST, d.name, d.id");
TW_PG_STMT(q_vm_latest_results, "SELECT r.record FROM result_latest l JOIN results r ON r.id = "
                                "l.result_id WHERE l.vm_id = $1 ORDER BY l.target, l.profile");
TW_PG_STMT(q_vm_ids, "SELECT id FROM vms ORDER BY id");

/* The fleet's walk: three cursors side by side by VM id. */
TW_PG_STMT(q_fleet_vms_open,
           "DECLARE tw_q_fleet_vms NO SCROLL CURSOR FOR SELECT id, name, resource_id, "
           "subscription_id, resource_group, location, vm_size, tags, NULL, NULL, NULL, NULL "
           "FROM vms ORDER BY id");
TW_PG_STMT(q_fleet_disks_open,
           "DECLARE tw_q_fleet_disks NO SCROLL CURSOR FOR " PG_INV_DISKS
           "ORDER BY d.vm_id, d.position NULLS FIRST, d.lun NULLS FIRST, d.name, d.id");
TW_PG_STMT(q_fleet_results_open,
           "DECLARE tw_q_fleet_results NO SCROLL CURSOR FOR SELECT l.vm_id, r.record FROM "
           "result_latest l JOIN results r ON r.id = l.result_id ORDER BY l.vm_id, l.target, "
           "l.profile");
#define FLEET_BATCH 500
TW_PG_STMT(q_fleet_vms_fetch, "FETCH 500 FROM tw_q_fleet_vms");
TW_PG_STMT(q_fleet_disks_fetch, "FETCH 500 FROM tw_q_fleet_disks");
TW_PG_STMT(q_fleet_results_fetch, "FETCH 500 FROM tw_q_fleet_results");

/* Pages: $1 the VM's name, $2 a disk's SKU or tier, $3 the resource group,
 * $4 the rows (one more than the page), $5 the rows before the page. */
/* (A page of VMs ignores the SKU, $2, as SQLite's does.) */
/* The pages choose their rows first and compute the per-row subqueries
 * for those alone: PostgreSQL evaluates a select list for the rows an
 * OFFSET skips too, which made the last pages of a large fleet's walk
 * ten times slower than its first. */
TW_PG_STMT(q_vms_page, PG_VM_SEL "FROM (SELECT * FROM vms v WHERE " PG_VM_FILTER
                       " AND ($2::text IS NULL OR true) ORDER BY v.name, v.id LIMIT $4 OFFSET "
                       "$5) v ORDER BY v.name, v.id");
TW_PG_STMT(q_disks_page, PG_DISK_COLS "WHERE d.detached_ms IS NULL AND " PG_VM_FILTER
                         " AND ($2::text IS NULL OR " PG_SKU_IS("d") ")" PG_DISK_ORDER
                         " LIMIT $4 OFFSET $5");
TW_PG_STMT(q_vm_ids_page,
           "SELECT v.id FROM vms v WHERE " PG_VM_FILTER " AND ($2::text IS NULL OR EXISTS "
           "(SELECT 1 FROM disks d WHERE d.vm_id = v.id AND d.detached_ms IS NULL AND "
           PG_SKU_IS("d") ")) ORDER BY v.id LIMIT $4 OFFSET $5");
/* The rows from result_latest's key; the record's id and whether the row
 * is its VM's first only for the rows kept. */
TW_PG_STMT(q_latest_page,
           "SELECT l.vm_id, (SELECT r.result_uuid FROM results r WHERE r.id = l.result_id), "
           "NOT EXISTS (SELECT 1 FROM result_latest f WHERE f.vm_id = l.vm_id AND (f.target < "
           "l.target OR (f.target = l.target AND f.profile < l.profile))) FROM (SELECT l.vm_id, "
           "l.target, l.profile, l.result_id FROM result_latest l "
           "WHERE (($1::text IS NULL AND $3::text IS NULL) OR EXISTS (SELECT 1 FROM vms v "
           "WHERE v.id = l.vm_id AND " PG_VM_FILTER ")) AND ($2::text IS NULL OR EXISTS "
           "(SELECT 1 FROM disks d WHERE d.vm_id = l.vm_id AND d.detached_ms IS NULL AND "
           PG_SKU_IS("d") ")) ORDER BY l.vm_id, l.target, l.profile LIMIT $4 OFFSET $5) l "
           "ORDER BY l.vm_id, l.target, l.profile");

TW_PG_STMT(q_vm_count, "SELECT count(*) FROM vms");
TW_PG_STMT(q_fleet_verdicts,
           "SELECT l.vm_id, l.verdict, l.verdict_skus, coalesce(l.verdict IS NOT NULL AND "
           "l.verdict_basis = $1 AND l.verdict_report = v.last_report_id, false) FROM "
           "result_latest l JOIN vms v ON v.id = l.vm_id ORDER BY l.vm_id, l.target, "
           "l.profile");
TW_PG_STMT(q_verdicts_stale,
           "SELECT l.vm_id, v.last_report_id FROM result_latest l JOIN vms v ON v.id = "
           "l.vm_id WHERE l.vm_id > $3 AND (l.verdict_basis IS DISTINCT FROM $1::text OR "
           "l.verdict_report IS DISTINCT FROM v.last_report_id) GROUP BY l.vm_id, "
           "v.last_report_id ORDER BY l.vm_id LIMIT $2");
/* A verdict kept only while the VM's newest report is the one judged: the
 * VM's row is share-locked first, so an ingest of a newer report (which
 * locks it for update) either finished before (then the row no longer
 * matches $2 and nothing is kept) or waits until this transaction ends. */
TW_PG_STMT(q_verdict_keep,
           "WITH v AS (SELECT id FROM vms WHERE id = $1 AND last_report_id = $2 FOR SHARE) "
           "UPDATE result_latest SET verdict = $5, verdict_skus = $6, verdict_basis = $7, "
           "verdict_report = $2 WHERE vm_id = (SELECT id FROM v) AND ($3::text IS NULL OR "
           "(($3 = '' OR target = $3) AND profile = $4 AND result_id IN (SELECT id FROM "
           "results WHERE vm_id = $1 AND result_uuid = $8)))");

static enum tw_err oom(struct tw_error *err, const char *what)
{
    return tw_error_set(err, TW_ENOMEM, "out of memory reading %s", what);
}

/* Every row of RES through ROW into a new array of SIZE-byte elements
 * (zeroed); ROW returns false when out of memory.  FREE_ROWS (may be NULL)
 * releases what ROW allocated when the read fails.  RES is cleared. */
static enum tw_err rows(PGresult *res, size_t size, bool (*row)(const PGresult *, int, void *),
                        void (*free_rows)(void *, size_t), const char *what, void **out,
                        size_t *n_out, struct tw_error *err)
{
    int n = PQntuples(res);
    void *arr = n ? calloc((size_t)n, size) : NULL;
    if (n && !arr) {
        PQclear(res);
        return oom(err, what);
    }
    for (int i = 0; i < n; i++) {
        if (!row(res, i, (char *)arr + (size_t)i * size)) {
            PQclear(res);
            if (free_rows)
                free_rows(arr, (size_t)i);
            else
                free(arr);
            return oom(err, what);
        }
    }
    PQclear(res);
    *out = arr;
    *n_out = (size_t)n;
    return TW_OK;
}

/* ---- VMs ---- */

static bool vm_row(const PGresult *q, int i, void *out)
{
    struct tw_store_vm_row *r = out;
    r->id = tw_pg_int(q, i, 0);
    tw_pg_copy(r->name, sizeof(r->name), q, i, 1);
    tw_pg_copy(r->resource_id, sizeof(r->resource_id), q, i, 2);
    tw_pg_copy(r->subscription_id, sizeof(r->subscription_id), q, i, 3);
    tw_pg_copy(r->resource_group, sizeof(r->resource_group), q, i, 4);
    tw_pg_copy(r->location, sizeof(r->location), q, i, 5);
    tw_pg_copy(r->vm_size, sizeof(r->vm_size), q, i, 6);
    tw_pg_copy(r->power_state, sizeof(r->power_state), q, i, 8);
    tw_pg_copy(r->power_state_at, sizeof(r->power_state_at), q, i, 9);
    tw_pg_copy(r->last_report_at, sizeof(r->last_report_at), q, i, 10);
    r->n_disks = tw_pg_int(q, i, 11);
    return tw_sh_tags_row(tw_pg_null(q, i, 7) ? NULL : tw_pg_text(q, i, 7), r);
}

static void vm_rows_free(void *r, size_t n)
{
    tw_store_vm_rows_free(r, n);
}

enum tw_err tw_pg_vms(struct tw_store *st, struct tw_store_vm_row **out, size_t *n,
                      struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vms, NULL, &res, "reading the VMs", err);
    if (e != TW_OK)
        return e;
    return rows(res, sizeof(**out), vm_row, vm_rows_free, "the VMs", (void **)out, n, err);
}

enum tw_err tw_pg_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                     struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vm, &p, &res, "reading a VM", err);
    if (e != TW_OK)
        return e;
    if (PQntuples(res) == 0) {
        PQclear(res);
        return tw_error_set(err, TW_ENOENT, "there is no VM %lld", (long long)id);
    }
    bool ok = vm_row(res, 0, row);
    PQclear(res);
    return ok ? TW_OK : oom(err, "a VM");
}

/* ---- disks ---- */

static bool disk_row(const PGresult *q, int i, void *out)
{
    struct tw_store_disk_row *r = out;
    struct tw_disk *d = &r->disk;
    r->id = tw_pg_int(q, i, 0);
    r->vm_id = tw_pg_int(q, i, 1);
    tw_pg_copy(r->vm_name, sizeof(r->vm_name), q, i, 2);
    tw_pg_copy(d->name, sizeof(d->name), q, i, 3);
    d->role = strcmp(tw_pg_text(q, i, 4), "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = tw_pg_null(q, i, 5) ? -1 : (int)tw_pg_int(q, i, 5);
    tw_pg_copy(d->sku, sizeof(d->sku), q, i, 6);
    d->size_gib = tw_pg_int(q, i, 7);
    tw_pg_copy(d->tier, sizeof(d->tier), q, i, 8);
    if (tw_pg_null(q, i, 9) || tw_caching_parse(tw_pg_text(q, i, 9), &d->caching) != TW_OK)
        d->caching = TW_CACHE_NONE;
    tw_pg_copy(d->managed_disk_id, sizeof(d->managed_disk_id), q, i, 10);
    d->write_accelerator = tw_pg_int(q, i, 11) != 0;
    tw_pg_copy(d->device, sizeof(d->device), q, i, 12);
    tw_pg_copy(r->last_seen_at, sizeof(r->last_seen_at), q, i, 13);
    tw_pg_copy(r->detached_at, sizeof(r->detached_at), q, i, 14);
    return true;
}

/* Runs Q (with an id in $1 when ID_SET) into disk rows. */
static enum tw_err disk_rows(struct tw_pg *pg, struct tw_pg_stmt *q, bool id_set, int64_t id,
                             const char *what, struct tw_store_disk_row **out, size_t *n,
                             struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    if (id_set)
        tw_pg_p_int(&p, id);
    PGresult *res = NULL;
    char doing[64];
    snprintf(doing, sizeof(doing), "reading %s", what);
    enum tw_err e = tw_pg_run(pg, q, &p, &res, doing, err);
    if (e != TW_OK)
        return e;
    return rows(res, sizeof(**out), disk_row, NULL, what, (void **)out, n, err);
}

enum tw_err tw_pg_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **out,
                           size_t *n, struct tw_error *err)
{
    return disk_rows((struct tw_pg *)st, &q_vm_disks, true, vm_id, "a VM's disks", out, n, err);
}

enum tw_err tw_pg_disks(struct tw_store *st, struct tw_store_disk_row **out, size_t *n,
                        struct tw_error *err)
{
    return disk_rows((struct tw_pg *)st, &q_disks, false, 0, "the disks", out, n, err);
}

enum tw_err tw_pg_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                       struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_disk, &p, &res, "reading a disk", err);
    if (e != TW_OK)
        return e;
    if (PQntuples(res) == 0) {
        PQclear(res);
        return tw_error_set(err, TW_ENOENT, "there is no disk %lld", (long long)id);
    }
    disk_row(res, 0, row);
    PQclear(res);
    return TW_OK;
}

static bool history_row(const PGresult *q, int i, void *out)
{
    struct tw_store_sku_hist_row *r = out;
    tw_pg_copy(r->observed_at, sizeof(r->observed_at), q, i, 0);
    tw_pg_copy(r->sku, sizeof(r->sku), q, i, 1);
    tw_pg_copy(r->tier, sizeof(r->tier), q, i, 2);
    r->size_gib = tw_pg_int(q, i, 3);
    return true;
}

enum tw_err tw_pg_disk_history(struct tw_store *st, int64_t disk_id,
                               struct tw_store_sku_hist_row **out, size_t *n,
                               struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_disk_history, &p, &res, "reading a disk's SKU history",
                              err);
    if (e != TW_OK)
        return e;
    return rows(res, sizeof(**out), history_row, NULL, "a disk's SKU history", (void **)out, n,
                err);
}

static bool record_row(const PGresult *q, int i, void *out)
{
    struct tw_store_result_rec *r = out;
    r->id = tw_pg_int(q, i, 0);
    tw_pg_copy(r->profile, sizeof(r->profile), q, i, 1);
    r->record = tw_pg_dup(q, i, 2, &r->record_len);
    return r->record != NULL;
}

static void recs_free(void *recs, size_t n)
{
    tw_store_result_recs_free(recs, n);
}

enum tw_err tw_pg_disk_results(struct tw_store *st, int64_t disk_id,
                               struct tw_store_result_rec **out, size_t *n, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_disk_results, &p, &res, "reading a disk's results", err);
    if (e != TW_OK)
        return e;
    return rows(res, sizeof(**out), record_row, recs_free, "a disk's results", (void **)out, n,
                err);
}

/* ---- for compliance ---- */

/* Row I of a VM query (q_vm_inv's columns) as the inventory's VM. */
static bool inv_vm(const PGresult *q, int i, struct tw_inventory *inv)
{
    struct tw_store_vm_row vm;
    memset(&vm, 0, sizeof(vm));
    if (!vm_row(q, i, &vm))
        return false;
    tw_sh_vm_into(&vm, &inv->vm);
    free(vm.tags);
    return true;
}

/* Row I of a disk query as the inventory's next disk (past the most a
 * report holds, none). */
static void inv_disk(const PGresult *q, int i, struct tw_inventory *inv)
{
    if (inv->n_disks == TW_INV_MAX_DISKS)
        return;
    struct tw_store_disk_row row;
    memset(&row, 0, sizeof(row));
    disk_row(q, i, &row);
    inv->disks[inv->n_disks++] = row.disk;
}

/* One snapshot for the reads that follow (a savepoint in the caller's). */
static enum tw_err read_begin(struct tw_pg *pg, const char *what, struct tw_error *err)
{
    return tw_pg_begin_read(pg, what, err);
}

static enum tw_err read_end(struct tw_pg *pg, enum tw_err rc, const char *what,
                            struct tw_error *err)
{
    if (rc != TW_OK) {
        tw_pg_rollback(pg);
        return rc;
    }
    return tw_pg_commit(pg, what, err);
}

static enum tw_err vm_latest(struct tw_pg *pg, int64_t vm_id, struct tw_inventory *inv,
                             struct tw_result **results, size_t *n_results,
                             struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, vm_id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vm_inv, &p, &res, "reading a VM", err);
    if (e != TW_OK)
        return e;
    if (PQntuples(res) == 0) {
        PQclear(res);
        return tw_error_set(err, TW_ENOENT, "there is no VM %lld", (long long)vm_id);
    }
    bool ok = inv_vm(res, 0, inv);
    PQclear(res);
    if (!ok)
        return oom(err, "a VM");
    if ((e = tw_pg_run(pg, &q_vm_inv_disks, &p, &res, "reading a VM's disks", err)) != TW_OK)
        return e;
    for (int i = 0; i < PQntuples(res); i++)
        inv_disk(res, i, inv);
    PQclear(res);

    if ((e = tw_pg_run(pg, &q_vm_latest_results, &p, &res, "reading a VM's results", err)) !=
        TW_OK)
        return e;
    int n = PQntuples(res);
    struct tw_result *arr = n ? malloc((size_t)n * sizeof(*arr)) : NULL;
    if (n && !arr) {
        PQclear(res);
        return oom(err, "a VM's results");
    }
    for (int i = 0; i < n; i++) {
        struct tw_error perr = {0};
        if (tw_result_from_json(tw_pg_text(res, i, 0), (size_t)PQgetlength(res, i, 0), &arr[i],
                                &perr) != TW_OK) {
            PQclear(res);
            free(arr);
            return tw_error_set(err, TW_EPARSE,
                                "%s: a stored result of VM %lld no longer reads: %s", pg->label,
                                (long long)vm_id, perr.msg);
        }
    }
    PQclear(res);
    *results = arr;
    *n_results = (size_t)n;
    return TW_OK;
}

enum tw_err tw_pg_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results,
                            struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    /* Three statements, as SQLite reads them (no snapshot of its own:
     * this runs for each VM judged; a verdict judged on a mixture is not
     * kept, tw_pg_verdicts_keep compares the VM's newest report). */
    tw_inventory_init(inv);
    return vm_latest(pg, vm_id, inv, results, n_results, err);
}

/* The three cursors of the fleet's walk. */
struct fleet {
    struct tw_pg_feed vms, disks, results;
};

static void feed_init(struct tw_pg_feed *f, struct tw_pg *pg, struct tw_pg_stmt *fetch,
                      const char *what)
{
    memset(f, 0, sizeof(*f));
    f->pg = pg;
    f->fetch = fetch;
    f->batch = FLEET_BATCH;
    f->what = what;
}

static enum tw_err fleet_walk(struct tw_pg *pg, struct fleet *fl, tw_store_latest_fn fn,
                              void *arg, struct tw_error *err)
{
    struct tw_inventory *inv = malloc(sizeof(*inv));
    if (!inv)
        return oom(err, "the fleet's inventories");
    struct tw_result *res = NULL;
    size_t cap = 0;
    enum tw_err e = TW_OK;
    for (;;) {
        bool have = false;
        if ((e = tw_pg_feed_peek(&fl->vms, &have, err)) != TW_OK || !have)
            break;
        const PGresult *vq = fl->vms.res;
        int vr = fl->vms.row++;
        int64_t vm_id = tw_pg_int(vq, vr, 0);
        tw_inventory_init(inv);
        if (!inv_vm(vq, vr, inv)) {
            e = oom(err, "a VM");
            break;
        }
        /* Its disks (the cursor's rows of VMs before it belong to none). */
        while ((e = tw_pg_feed_peek(&fl->disks, &have, err)) == TW_OK && have) {
            int64_t id = tw_pg_int(fl->disks.res, fl->disks.row, 1);
            if (id > vm_id)
                break;
            if (id == vm_id)
                inv_disk(fl->disks.res, fl->disks.row, inv);
            fl->disks.row++;
        }
        if (e != TW_OK)
            break;
        size_t n = 0;
        struct tw_error why = {0};
        while ((e = tw_pg_feed_peek(&fl->results, &have, err)) == TW_OK && have) {
            const PGresult *rq = fl->results.res;
            int rr = fl->results.row;
            int64_t id = tw_pg_int(rq, rr, 0);
            if (id > vm_id)
                break;
            fl->results.row++;
            if (id < vm_id || why.code)
                continue;
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
            if (tw_result_from_json(tw_pg_text(rq, rr, 1), (size_t)PQgetlength(rq, rr, 1),
                                    &res[n], &perr) == TW_OK)
                n++;
            else
                tw_error_set(&why, TW_EPARSE,
                             "%s: a stored result of VM %lld no longer reads: %s", pg->label,
                             (long long)vm_id, perr.msg);
        }
        if (e != TW_OK)
            break;
        e = fn(arg, vm_id, inv, why.code ? NULL : res, why.code ? 0 : n,
               why.code ? why.msg : NULL);
        if (e != TW_OK) {
            if (err && !err->code)
                tw_error_set(err, e, "the walk of the fleet stopped");
            break;
        }
    }
    free(res);
    free(inv);
    return e;
}

enum tw_err tw_pg_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                               struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    const char *what = "reading the fleet's latest results";
    enum tw_err e = read_begin(pg, what, err);
    if (e != TW_OK)
        return e;
    struct fleet fl;
    feed_init(&fl.vms, pg, &q_fleet_vms_fetch, "reading the VMs");
    feed_init(&fl.disks, pg, &q_fleet_disks_fetch, "reading the disks");
    feed_init(&fl.results, pg, &q_fleet_results_fetch, "reading the results");
    /* All three cursors read the snapshot of the read's transaction. */
    e = tw_pg_run(pg, &q_fleet_vms_open, NULL, NULL, what, err);
    if (e == TW_OK)
        e = tw_pg_run(pg, &q_fleet_disks_open, NULL, NULL, what, err);
    if (e == TW_OK)
        e = tw_pg_run(pg, &q_fleet_results_open, NULL, NULL, what, err);
    if (e == TW_OK)
        e = fleet_walk(pg, &fl, fn, arg, err);
    tw_pg_feed_clear(&fl.vms);
    tw_pg_feed_clear(&fl.disks);
    tw_pg_feed_clear(&fl.results);
    if (e == TW_OK)
        e = tw_pg_exec(pg, "CLOSE tw_q_fleet_vms; CLOSE tw_q_fleet_disks; CLOSE "
                           "tw_q_fleet_results", what, err);
    /* Undone on a failure, the cursors with it (a savepoint's cursors
     * close when it is rolled back). */
    return read_end(pg, e, what, err);
}

enum tw_err tw_pg_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vm_ids, NULL, &res, "listing VM ids", err);
    if (e != TW_OK)
        return e;
    int k = PQntuples(res);
    int64_t *arr = k ? malloc((size_t)k * sizeof(*arr)) : NULL;
    if (k && !arr) {
        PQclear(res);
        return oom(err, "the VM ids");
    }
    for (int i = 0; i < k; i++)
        arr[i] = tw_pg_int(res, i, 0);
    PQclear(res);
    *ids = arr;
    *n = (size_t)k;
    return TW_OK;
}

/* ---- pages ---- */

/* A page's filters and bounds (one row more than the page, to know
 * whether another follows), then runs Q. */
static enum tw_err run_page(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_store_page *pg_,
                            PGresult **res, const char *what, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text0(&p, pg_->vm);
    tw_pg_p_text0(&p, pg_->sku);
    tw_pg_p_text0(&p, pg_->resource_group);
    tw_pg_p_int(&p, (int64_t)pg_->limit + 1);
    tw_pg_p_int(&p, (int64_t)pg_->offset);
    return tw_pg_run(pg, q, &p, res, what, err);
}

enum tw_err tw_pg_vms_page(struct tw_store *st, const struct tw_store_page *page,
                           struct tw_store_vm_row **out, size_t *n, bool *more,
                           struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err rc = run_page(pg, &q_vms_page, page, &res, "reading the VMs", err);
    if (rc == TW_OK)
        rc = rows(res, sizeof(**out), vm_row, vm_rows_free, "the VMs", (void **)out, n, err);
    if (rc == TW_OK && *n > page->limit) {
        *more = true;
        free((*out)[page->limit].tags);
        *n = page->limit;
    }
    return rc;
}

enum tw_err tw_pg_disks_page(struct tw_store *st, const struct tw_store_page *page,
                             struct tw_store_disk_row **out, size_t *n, bool *more,
                             struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err rc = run_page(pg, &q_disks_page, page, &res, "reading the disks", err);
    if (rc == TW_OK)
        rc = rows(res, sizeof(**out), disk_row, NULL, "the disks", (void **)out, n, err);
    if (rc == TW_OK && *n > page->limit) {
        *more = true;
        *n = page->limit;
    }
    return rc;
}

static bool id_row(const PGresult *q, int i, void *out)
{
    *(int64_t *)out = tw_pg_int(q, i, 0);
    return true;
}

enum tw_err tw_pg_vm_ids_page(struct tw_store *st, const struct tw_store_page *page,
                              int64_t **out, size_t *n, bool *more, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err rc = run_page(pg, &q_vm_ids_page, page, &res, "reading the VM ids", err);
    if (rc == TW_OK)
        rc = rows(res, sizeof(**out), id_row, NULL, "the VM ids", (void **)out, n, err);
    if (rc == TW_OK && *n > page->limit) {
        *more = true;
        *n = page->limit;
    }
    return rc;
}

/* ---- kept verdicts ---- */

enum tw_err tw_pg_fleet_verdicts(struct tw_store *st, const char *basis, tw_store_verdict_fn fn,
                                 void *arg, size_t *n_vms, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    const char *what = "reading the fleet's verdicts";
    /* The count and the verdicts of one snapshot. */
    enum tw_err e = read_begin(pg, what, err);
    if (e != TW_OK)
        return e;
    PGresult *res = NULL;
    e = tw_pg_run(pg, &q_vm_count, NULL, &res, "counting the VMs", err);
    if (e == TW_OK && n_vms)
        *n_vms = (size_t)tw_pg_int(res, 0, 0);
    PQclear(res);
    res = NULL;
    if (e == TW_OK) {
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_text(&p, basis);
        e = tw_pg_run(pg, &q_fleet_verdicts, &p, &res, what, err);
    }
    e = read_end(pg, e, what, err);
    for (int i = 0; e == TW_OK && i < PQntuples(res); i++) {
        e = fn(arg, tw_pg_int(res, i, 0), tw_pg_null(res, i, 1) ? NULL : tw_pg_text(res, i, 1),
               tw_pg_null(res, i, 2) ? NULL : tw_pg_text(res, i, 2),
               strcmp(tw_pg_text(res, i, 3), "t") == 0);
        if (e != TW_OK && err && !err->code)
            tw_error_set(err, e, "the walk of the fleet's verdicts stopped");
    }
    PQclear(res);
    return e;
}

static bool latest_ref_row(const PGresult *q, int i, void *out)
{
    struct tw_store_latest_ref *r = out;
    r->vm_id = tw_pg_int(q, i, 0);
    tw_pg_copy(r->result_id, sizeof(r->result_id), q, i, 1);
    r->first = strcmp(tw_pg_text(q, i, 2), "t") == 0;
    return true;
}

enum tw_err tw_pg_latest_page(struct tw_store *st, const struct tw_store_page *page,
                              struct tw_store_latest_ref **out, size_t *n, bool *more,
                              struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *res = NULL;
    enum tw_err rc = run_page(pg, &q_latest_page, page, &res, "reading the latest results", err);
    if (rc == TW_OK)
        rc = rows(res, sizeof(**out), latest_ref_row, NULL, "the latest results", (void **)out,
                  n, err);
    if (rc == TW_OK && *n > page->limit) {
        *more = true;
        *n = page->limit;
    }
    return rc;
}

static bool stale_row(const PGresult *q, int i, void *out)
{
    struct tw_store_stale *r = out;
    r->vm_id = tw_pg_int(q, i, 0);
    tw_pg_copy(r->last_report_id, sizeof(r->last_report_id), q, i, 1);
    return true;
}

enum tw_err tw_pg_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                 size_t max, struct tw_store_stale **out, size_t *n,
                                 struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, basis);
    tw_pg_p_int(&p, (int64_t)(max > INT64_MAX ? INT64_MAX : max));
    tw_pg_p_int(&p, after);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_verdicts_stale, &p, &res, "finding the VMs to judge again",
                              err);
    if (e != TW_OK)
        return e;
    return rows(res, sizeof(**out), stale_row, NULL, "the VMs to judge again", (void **)out, n,
                err);
}

/* One run of tw_pg_verdicts_keep's transaction. */
static enum tw_err keep_once(struct tw_pg *pg, const char *basis,
                             const struct tw_store_kept *kept, size_t n, struct tw_error *err)
{
    enum tw_err e = tw_pg_begin(pg, "starting to keep verdicts", err);
    if (e != TW_OK)
        return e;
    for (size_t i = 0; e == TW_OK && i < n; i++) {
        const struct tw_store_kept *k = &kept[i];
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, k->vm_id);
        tw_pg_p_text(&p, k->last_report_id);
        tw_pg_p_text(&p, k->target); /* "": any target; NULL: every row */
        tw_pg_p_text0(&p, k->profile);
        tw_pg_p_text0(&p, k->kind);
        tw_pg_p_text0(&p, k->kind ? (k->skus ? k->skus : "") : NULL);
        tw_pg_p_text(&p, basis);
        tw_pg_p_text0(&p, k->result_id);
        e = tw_pg_run_n(pg, &q_verdict_keep, &p, NULL, "keeping a verdict", err);
    }
    if (e == TW_OK)
        return tw_pg_commit(pg, "finishing the kept verdicts", err);
    tw_pg_rollback(pg);
    return e;
}

enum tw_err tw_pg_verdicts_keep(struct tw_store *st, const char *basis,
                                const struct tw_store_kept *kept, size_t n, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    /* The VMs' rows are share-locked in the rows' order while ingests lock
     * them in theirs: a deadlock between the two runs the whole again. */
    enum tw_err e = TW_OK;
    for (int attempt = 0; attempt < 3; attempt++) {
        if (err)
            tw_error_clear(err);
        e = keep_once(pg, basis, kept, n, err);
        if (e == TW_OK || !tw_pg_retryable(pg))
            break;
    }
    return e;
}
