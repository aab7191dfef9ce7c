/*
 * store_pg_query.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_vms(struct tw_store *st, struct tw_store_vm_row **rows, size_t *n,
                      struct tw_error *err)
{
    (void)st;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vms yet");
}

enum tw_err tw_pg_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                     struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)row;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm yet");
}

enum tw_err tw_pg_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **rows,
                           size_t *n, struct tw_error *err)
{
    (void)st;
    (void)vm_id;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_disks yet");
}

enum tw_err tw_pg_disks(struct tw_store *st, struct tw_store_disk_row **rows, size_t *n,
                        struct tw_error *err)
{
    (void)st;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do disks yet");
}

enum tw_err tw_pg_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                       struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)row;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do disk yet");
}

enum tw_err tw_pg_disk_history(struct tw_store *st, int64_t disk_id,
                               struct tw_store_sku_hist_row **rows, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do disk_history yet");
}

enum tw_err tw_pg_disk_results(struct tw_store *st, int64_t disk_id,
                               struct tw_store_result_rec **recs, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)recs;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do disk_results yet");
}

enum tw_err tw_pg_vms_page(struct tw_store *st, const struct tw_store_page *pg,
                           struct tw_store_vm_row **rows, size_t *n, bool *more,
                           struct tw_error *err)
{
    (void)st;
    (void)pg;
    (void)rows;
    (void)n;
    (void)more;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vms_page yet");
}

enum tw_err tw_pg_disks_page(struct tw_store *st, const struct tw_store_page *pg,
                             struct tw_store_disk_row **rows, size_t *n, bool *more,
                             struct tw_error *err)
{
    (void)st;
    (void)pg;
    (void)rows;
    (void)n;
    (void)more;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do disks_page yet");
}

enum tw_err tw_pg_vm_ids_page(struct tw_store *st, const struct tw_store_page *pg, int64_t **ids,
                              size_t *n, bool *more, struct tw_error *err)
{
    (void)st;
    (void)pg;
    (void)ids;
    (void)n;
    (void)more;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_ids_page yet");
}

enum tw_err tw_pg_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results, struct tw_error *err)
{
    (void)st;
    (void)vm_id;
    (void)inv;
    (void)results;
    (void)n_results;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_latest yet");
}

enum tw_err tw_pg_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)ids;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_ids yet");
}

enum tw_err tw_pg_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                               struct tw_error *err)
{
    (void)st;
    (void)fn;
    (void)arg;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do fleet_latest yet");
}

enum tw_err tw_pg_fleet_verdicts(struct tw_store *st, const char *basis, tw_store_verdict_fn fn,
                                 void *arg, size_t *n_vms, struct tw_error *err)
{
    (void)st;
    (void)basis;
    (void)fn;
    (void)arg;
    (void)n_vms;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do fleet_verdicts yet");
}

enum tw_err tw_pg_verdicts_stale(struct tw_store *st, const char *basis, int64_t after, size_t max,
                                 struct tw_store_stale **rows, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)basis;
    (void)after;
    (void)max;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do verdicts_stale yet");
}

enum tw_err tw_pg_verdicts_keep(struct tw_store *st, const char *basis,
                                const struct tw_store_kept *rows, size_t n, struct tw_error *err)
{
    (void)st;
    (void)basis;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do verdicts_keep yet");
}

enum tw_err tw_pg_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_latest_ref **rows, size_t *n, bool *more,
                              struct tw_error *err)
{
    (void)st;
    (void)pg;
    (void)rows;
    (void)n;
    (void)more;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do latest_page yet");
}
