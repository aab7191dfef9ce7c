/*
 * store_pg.c - the PostgreSQL store: opening a database (the schema and
 * its migrations), its table of operations, and the operations of its
 * own small tables (tokens, price books, VM sizes, counts).
 */
#include "store/store_pg.h"

#include "store/store_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tw_err tw_pg_migrate(struct tw_pg *pg, struct tw_error *err)
{
    (void)pg;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store has no schema yet");
}

void tw_pg_close(struct tw_store *st)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    tw_pg_disconnect(pg);
    free(pg->prepared);
    free(pg);
}

enum tw_err tw_pg_token_add(struct tw_store *st, const char *name, enum tw_role role,
                            const uint8_t sha256[32], int64_t *id_out, struct tw_error *err)
{
    (void)st;
    (void)name;
    (void)role;
    (void)sha256;
    (void)id_out;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do token_add yet");
}

enum tw_err tw_pg_token_lookup(struct tw_store *st, const uint8_t sha256[32],
                               enum tw_role *role_out, char *name_out, size_t name_len,
                               struct tw_error *err)
{
    (void)st;
    (void)sha256;
    (void)role_out;
    (void)name_out;
    (void)name_len;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do token_lookup yet");
}

enum tw_err tw_pg_token_list(struct tw_store *st, struct tw_store_token_row **rows, size_t *n,
                             struct tw_error *err)
{
    (void)st;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do token_list yet");
}

enum tw_err tw_pg_token_revoke(struct tw_store *st, int64_t id, struct tw_error *err)
{
    (void)st;
    (void)id;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do token_revoke yet");
}

enum tw_err tw_pg_stats(struct tw_store *st, struct tw_store_stats *out, struct tw_error *err)
{
    (void)st;
    (void)out;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do stats yet");
}

enum tw_err tw_pg_pricebook_put(struct tw_store *st, const char *region, const char *currency,
                                const char *source, const char *fetched_at, const char *items,
                                size_t items_len, struct tw_error *err)
{
    (void)st;
    (void)region;
    (void)currency;
    (void)source;
    (void)fetched_at;
    (void)items;
    (void)items_len;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do pricebook_put yet");
}

enum tw_err tw_pg_pricebook_get(struct tw_store *st, const char *region, const char *currency,
                                char **items, size_t *items_len, char *source, size_t source_len,
                                char *fetched_at, size_t fetched_len, struct tw_error *err)
{
    (void)st;
    (void)region;
    (void)currency;
    (void)items;
    (void)items_len;
    (void)source;
    (void)source_len;
    (void)fetched_at;
    (void)fetched_len;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do pricebook_get yet");
}

enum tw_err tw_pg_pricebook_get_at(struct tw_store *st, const char *region, const char *currency,
                                   const char *at, char **items, size_t *items_len, char *source,
                                   size_t source_len, char *fetched_at, size_t fetched_len,
                                   struct tw_error *err)
{
    (void)st;
    (void)region;
    (void)currency;
    (void)at;
    (void)items;
    (void)items_len;
    (void)source;
    (void)source_len;
    (void)fetched_at;
    (void)fetched_len;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do pricebook_get_at yet");
}

enum tw_err tw_pg_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                               const char *fetched_at, const struct tw_store_vm_size *rows,
                               size_t n, struct tw_error *err)
{
    (void)st;
    (void)region;
    (void)source;
    (void)fetched_at;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_sizes_put yet");
}

enum tw_err tw_pg_vm_sizes_get(struct tw_store *st, const char *region,
                               struct tw_store_vm_size **rows, size_t *n, char *source,
                               size_t source_len, char *fetched_at, size_t fetched_len,
                               struct tw_error *err)
{
    (void)st;
    (void)region;
    (void)rows;
    (void)n;
    (void)source;
    (void)source_len;
    (void)fetched_at;
    (void)fetched_len;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_sizes_get yet");
}

enum tw_err tw_pg_check(struct tw_store *st, struct tw_error *err)
{
    (void)st;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do check yet");
}

enum tw_err tw_pg_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                               struct tw_store_fleet_counts *out, struct tw_error *err)
{
    (void)st;
    (void)silent_before_ms;
    (void)out;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do fleet_counts yet");
}

enum tw_err tw_pg_probe(struct tw_store *st, struct tw_error *err)
{
    (void)st;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do probe yet");
}

enum tw_err tw_pg_work_lock(struct tw_store *st, const char *kind, bool *held, struct tw_error *err)
{
    (void)st;
    (void)kind;
    (void)held;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do work_lock yet");
}

static const struct tw_store_ops pg_ops = {
    .name = "postgresql",
    .close = tw_pg_close,
    .token_add = tw_pg_token_add,
    .token_lookup = tw_pg_token_lookup,
    .token_list = tw_pg_token_list,
    .token_revoke = tw_pg_token_revoke,
    .stats = tw_pg_stats,
    .pricebook_put = tw_pg_pricebook_put,
    .pricebook_get = tw_pg_pricebook_get,
    .pricebook_get_at = tw_pg_pricebook_get_at,
    .vm_sizes_put = tw_pg_vm_sizes_put,
    .vm_sizes_get = tw_pg_vm_sizes_get,
    .check = tw_pg_check,
    .fleet_counts = tw_pg_fleet_counts,
    .probe = tw_pg_probe,
    .work_lock = tw_pg_work_lock,
    .put_reports = tw_pg_put_reports,
    .vms = tw_pg_vms,
    .vm = tw_pg_vm,
    .vm_disks = tw_pg_vm_disks,
    .disks = tw_pg_disks,
    .disk = tw_pg_disk,
    .disk_history = tw_pg_disk_history,
    .disk_results = tw_pg_disk_results,
    .vms_page = tw_pg_vms_page,
    .disks_page = tw_pg_disks_page,
    .vm_ids_page = tw_pg_vm_ids_page,
    .vm_latest = tw_pg_vm_latest,
    .vm_ids = tw_pg_vm_ids,
    .fleet_latest = tw_pg_fleet_latest,
    .fleet_verdicts = tw_pg_fleet_verdicts,
    .verdicts_stale = tw_pg_verdicts_stale,
    .verdicts_keep = tw_pg_verdicts_keep,
    .latest_page = tw_pg_latest_page,
    .action_add = tw_pg_action_add,
    .action_move = tw_pg_action_move,
    .action_claim = tw_pg_action_claim,
    .action_release = tw_pg_action_release,
    .action_state = tw_pg_action_state,
    .action_log_count = tw_pg_action_log_count,
    .power_observe = tw_pg_power_observe,
    .sku_observe = tw_pg_sku_observe,
    .policy_put = tw_pg_policy_put,
    .policy_get = tw_pg_policy_get,
    .plan_add = tw_pg_plan_add,
    .actions_list = tw_pg_actions_list,
    .action_get = tw_pg_action_get,
    .action_moves = tw_pg_action_moves,
    .actions_due = tw_pg_actions_due,
    .action_set_operation = tw_pg_action_set_operation,
    .action_count_attempt = tw_pg_action_count_attempt,
    .action_set_due = tw_pg_action_set_due,
    .disk_original_set = tw_pg_disk_original_set,
    .disk_original_get = tw_pg_disk_original_get,
    .disk_original_clear = tw_pg_disk_original_clear,
    .arm_vm_put = tw_pg_arm_vm_put,
    .vm_by_resource_id = tw_pg_vm_by_resource_id,
    .vm_by_name = tw_pg_vm_by_name,
    .drift_open = tw_pg_drift_open,
    .drift_close = tw_pg_drift_close,
    .drift_list = tw_pg_drift_list,
    .vm_power_before = tw_pg_vm_power_before,
    .policy_names = tw_pg_policy_names,
    .drift_sync = tw_pg_drift_sync,
    .disk_attrs_observe = tw_pg_disk_attrs_observe,
    .savings_open = tw_pg_savings_open,
    .savings_next = tw_pg_savings_next,
    .savings_close = tw_pg_savings_close,
    .pricebook_currencies = tw_pg_pricebook_currencies,
    .report_read = tw_pg_report_read,
    .report_book_items = tw_pg_report_book_items,
    .report_begin = tw_pg_report_begin,
    .report_end = tw_pg_report_end,
    .report_fleet_open = tw_pg_report_fleet_open,
    .report_fleet_next = tw_pg_report_fleet_next,
    .report_fleet_close = tw_pg_report_fleet_close,
    .report_attached = tw_pg_report_attached,
    .copy = &tw_pg_copy_ops,
};

enum tw_err tw_store_pg_open(const char *conninfo, const struct tw_store_open_opts *opts,
                             struct tw_store **out, struct tw_error *err)
{
    *out = NULL;
    struct tw_pg *pg = calloc(1, sizeof(*pg));
    if (!pg)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the PostgreSQL store");
    pg->base.ops = &pg_ops;
    pg->writer = opts && opts->writer;
    enum tw_err rc = tw_pg_connect(pg, conninfo, err);
    if (rc == TW_OK)
        rc = tw_pg_migrate(pg, err);
    if (rc != TW_OK) {
        tw_pg_close(&pg->base);
        return rc;
    }
    *out = &pg->base;
    return TW_OK;
}
