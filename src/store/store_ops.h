/*
 * store_ops.h - the neutral table of operations every store implementation
 * fills (src/store only; callers see store.h).
 *
 * A store is a struct whose first member is a struct tw_store, which
 * points at the implementation's table.  store.c holds the public
 * functions; each checks its arguments, clears the error and calls the
 * operation.  An implementation fills every slot of its table, keeps
 * whatever is its own (a database library's handles, statements,
 * background threads) in its own files behind its own header, and is
 * reachable only through its open function below: store.c picks it by the
 * location given to tw_store_open.  Adding one (PostgreSQL) is a new set
 * of files, one open function here and one line in store.c; no caller of
 * store.h changes.
 */
#ifndef TW_STORE_STORE_OPS_H
#define TW_STORE_STORE_OPS_H

#include "store/store.h"

struct tw_store_copy_ops; /* store_copy.h */

struct tw_store_ops {
    const char *name;   /* "sqlite", "postgresql" */
    void (*close)(struct tw_store *st);

    enum tw_err (*token_add)(struct tw_store *st, const char *name, enum tw_role role,
                             const uint8_t sha256[32], int64_t *id_out, struct tw_error *err);
    enum tw_err (*token_lookup)(struct tw_store *st, const uint8_t sha256[32],
                                enum tw_role *role_out, char *name_out, size_t name_len,
                                struct tw_error *err);
    enum tw_err (*token_list)(struct tw_store *st, struct tw_store_token_row **rows, size_t *n,
                              struct tw_error *err);
    enum tw_err (*token_revoke)(struct tw_store *st, int64_t id, struct tw_error *err);

    enum tw_err (*put_reports)(struct tw_store *st, const struct tw_report *const *reps,
                               const char *const *raw, const size_t *raw_len,
                               const struct tw_store_judged *const *judged, size_t n,
                               const char *received_at, enum tw_put_status *status,
                               struct tw_error *errs, struct tw_error *err);

    enum tw_err (*vms)(struct tw_store *st, struct tw_store_vm_row **rows, size_t *n,
                       struct tw_error *err);
    enum tw_err (*vm)(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                      struct tw_error *err);
    enum tw_err (*vm_disks)(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **rows,
                            size_t *n, struct tw_error *err);
    enum tw_err (*disks)(struct tw_store *st, struct tw_store_disk_row **rows, size_t *n,
                         struct tw_error *err);
    enum tw_err (*disk)(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                        struct tw_error *err);
    enum tw_err (*disk_history)(struct tw_store *st, int64_t disk_id,
                                struct tw_store_sku_hist_row **rows, size_t *n,
                                struct tw_error *err);
    enum tw_err (*disk_results)(struct tw_store *st, int64_t disk_id,
                                struct tw_store_result_rec **recs, size_t *n,
                                struct tw_error *err);
    enum tw_err (*vms_page)(struct tw_store *st, const struct tw_store_page *pg,
                            struct tw_store_vm_row **rows, size_t *n, bool *more,
                            struct tw_error *err);
    enum tw_err (*disks_page)(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_disk_row **rows, size_t *n, bool *more,
                              struct tw_error *err);
    enum tw_err (*vm_ids_page)(struct tw_store *st, const struct tw_store_page *pg,
                               int64_t **ids, size_t *n, bool *more, struct tw_error *err);
    enum tw_err (*vm_latest)(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                             struct tw_result **results, size_t *n_results,
                             struct tw_error *err);
    enum tw_err (*vm_ids)(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err);
    enum tw_err (*fleet_latest)(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                                struct tw_error *err);
    enum tw_err (*stats)(struct tw_store *st, struct tw_store_stats *out, struct tw_error *err);

    enum tw_err (*pricebook_put)(struct tw_store *st, const char *region, const char *currency,
                                 const char *source, const char *fetched_at, const char *items,
                                 size_t items_len, struct tw_error *err);
    enum tw_err (*pricebook_get)(struct tw_store *st, const char *region, const char *currency,
                                 char **items, size_t *items_len, char *source,
                                 size_t source_len, char *fetched_at, size_t fetched_len,
                                 struct tw_error *err);

    enum tw_err (*pricebook_get_at)(struct tw_store *st, const char *region,
                                    const char *currency, const char *at, char **items,
                                    size_t *items_len, char *source, size_t source_len,
                                    char *fetched_at, size_t fetched_len, struct tw_error *err);

    enum tw_err (*action_add)(struct tw_store *st, const struct tw_store_action_new *a,
                              int64_t *id, struct tw_error *err);
    enum tw_err (*action_move)(struct tw_store *st, int64_t id, enum tw_action_state from,
                               enum tw_action_state to, const char *owner, const char *detail,
                               struct tw_error *err);
    enum tw_err (*action_claim)(struct tw_store *st, int64_t id, const char *owner,
                                int64_t now_ms, int64_t lease_ms, int64_t *until_ms,
                                struct tw_error *err);
    enum tw_err (*action_release)(struct tw_store *st, int64_t id, const char *owner,
                                  struct tw_error *err);
    enum tw_err (*action_state)(struct tw_store *st, int64_t id, enum tw_action_state *state,
                                int *attempts, struct tw_error *err);
    enum tw_err (*action_log_count)(struct tw_store *st, int64_t id, size_t *n,
                                    struct tw_error *err);

    enum tw_err (*power_observe)(struct tw_store *st, int64_t vm_id, const char *state,
                                 const char *observed_at, int64_t observed_ms,
                                 enum tw_obs_source source, struct tw_error *err);
    enum tw_err (*sku_observe)(struct tw_store *st, int64_t disk_id, const char *sku,
                               const char *tier, int64_t size_gib, const char *observed_at,
                               int64_t observed_ms, enum tw_obs_source source, bool *added,
                               struct tw_error *err);
    enum tw_err (*policy_put)(struct tw_store *st, const char *name, const char *body,
                              struct tw_error *err);
    enum tw_err (*policy_get)(struct tw_store *st, const char *name, char **body,
                              struct tw_error *err);
    enum tw_err (*plan_add)(struct tw_store *st, const char *policy, const char *from,
                            const char *to, const char *body, int64_t *id,
                            struct tw_error *err);

    enum tw_err (*fleet_verdicts)(struct tw_store *st, const char *basis,
                                  tw_store_verdict_fn fn, void *arg, size_t *n_vms,
                                  struct tw_error *err);
    enum tw_err (*verdicts_stale)(struct tw_store *st, const char *basis, int64_t after,
                                  size_t max,
                                  struct tw_store_stale **rows, size_t *n,
                                  struct tw_error *err);
    enum tw_err (*verdicts_keep)(struct tw_store *st, const char *basis,
                                 const struct tw_store_kept *rows, size_t n,
                                 struct tw_error *err);
    enum tw_err (*latest_page)(struct tw_store *st, const struct tw_store_page *pg,
                               struct tw_store_latest_ref **rows, size_t *n, bool *more,
                               struct tw_error *err);
    enum tw_err (*vm_sizes_put)(struct tw_store *st, const char *region, const char *source,
                                const char *fetched_at, const struct tw_store_vm_size *rows,
                                size_t n, struct tw_error *err);
    enum tw_err (*vm_sizes_get)(struct tw_store *st, const char *region,
                                struct tw_store_vm_size **rows, size_t *n, char *source,
                                size_t source_len, char *fetched_at, size_t fetched_len,
                                struct tw_error *err);

    enum tw_err (*check)(struct tw_store *st, struct tw_error *err);

    enum tw_err (*fleet_counts)(struct tw_store *st, int64_t silent_before_ms,
                                struct tw_store_fleet_counts *out, struct tw_error *err);

    /* store_savings.c */
    enum tw_err (*disk_attrs_observe)(struct tw_store *st, int64_t disk_id,
                                      const struct tw_store_disk_attrs *a,
                                      const char *observed_at, int64_t observed_ms,
                                      enum tw_obs_source source, bool *applied,
                                      struct tw_error *err);
    enum tw_err (*savings_open)(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                struct tw_store_sv_cursor **out, struct tw_error *err);
    enum tw_err (*savings_next)(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm,
                                bool *done, struct tw_error *err);
    void (*savings_close)(struct tw_store_sv_cursor *c);
    enum tw_err (*pricebook_currencies)(struct tw_store *st, char (*out)[4], size_t max,
                                        size_t *n, struct tw_error *err);

    /* schema 5: the audit log, the executor's queue, originals */
    enum tw_err (*actions_list)(struct tw_store *st, const struct tw_store_action_filter *f,
                                struct tw_store_action_row **rows, size_t *n, bool *more,
                                struct tw_error *err);
    enum tw_err (*action_get)(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                              struct tw_error *err);
    enum tw_err (*action_moves)(struct tw_store *st, int64_t id,
                                struct tw_store_action_move_row **rows, size_t *n,
                                struct tw_error *err);
    enum tw_err (*actions_due)(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                               int64_t **ids, size_t *n, struct tw_error *err);
    enum tw_err (*action_set_operation)(struct tw_store *st, int64_t id, const char *owner,
                                        const char *url, struct tw_error *err);
    enum tw_err (*action_count_attempt)(struct tw_store *st, int64_t id, const char *owner,
                                        struct tw_error *err);
    enum tw_err (*action_set_due)(struct tw_store *st, int64_t id, const char *due_at,
                                  struct tw_error *err);
    enum tw_err (*disk_original_set)(struct tw_store *st, int64_t disk_id, const char *sku,
                                     const char *tier, int64_t action_id, const char *at,
                                     bool *kept, struct tw_error *err);
    enum tw_err (*disk_original_get)(struct tw_store *st, int64_t disk_id, char *sku,
                                     char *tier, bool *found, struct tw_error *err);
    enum tw_err (*disk_original_clear)(struct tw_store *st, int64_t disk_id,
                                       struct tw_error *err);
    /* schema 5: the fleet from ARM */
    enum tw_err (*arm_vm_put)(struct tw_store *st, const struct tw_store_arm_vm *v,
                              const char *observed_at, int64_t observed_ms,
                              void (*fn)(void *arg, const struct tw_store_arm_change *c),
                              void *arg, int64_t *vm_id, struct tw_error *err);
    enum tw_err (*vm_by_resource_id)(struct tw_store *st, const char *id, int64_t *vm_id,
                                     struct tw_error *err);
    enum tw_err (*vm_by_name)(struct tw_store *st, const char *name, int64_t *vm_id,
                              struct tw_error *err);

    /* store_drift.c */
    enum tw_err (*drift_open)(struct tw_store *st, const struct tw_store_drift_row *d,
                              int64_t since_ms, bool *started, struct tw_error *err);
    enum tw_err (*drift_close)(struct tw_store *st, int64_t disk_id, const char *at,
                               int64_t at_ms, bool *ended, struct tw_error *err);
    enum tw_err (*drift_list)(struct tw_store *st, bool open_only,
                              struct tw_store_drift_row **rows, size_t *n, struct tw_error *err);
    enum tw_err (*vm_power_before)(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                   size_t max, struct tw_store_sv_power **out, size_t *n,
                                   struct tw_error *err);
    enum tw_err (*policy_names)(struct tw_store *st, char ***names, size_t *n,
                                struct tw_error *err);
    enum tw_err (*drift_sync)(struct tw_store *st, const struct tw_store_drift_row *rows,
                              const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                              bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                              struct tw_error *err);

    /* the monthly report's reads (store.h, "the monthly report's reads") */
    enum tw_err (*report_read)(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                               int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                               struct tw_store_report *out, struct tw_error *err);
    enum tw_err (*report_book_items)(struct tw_store *st, int64_t id, char **items, size_t *len,
                                     struct tw_error *err);
    enum tw_err (*report_begin)(struct tw_store *st, struct tw_error *err);
    void (*report_end)(struct tw_store *st);
    enum tw_err (*report_fleet_open)(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                     int64_t vm_id, struct tw_store_rp_cursor **out,
                                     struct tw_error *err);
    enum tw_err (*report_fleet_next)(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                     bool *done, struct tw_error *err);
    void (*report_fleet_close)(struct tw_store_rp_cursor *c);
    enum tw_err (*report_attached)(struct tw_store *st, int64_t from_ms, int64_t *n,
                                   struct tw_error *err);

    /* several backends on one database (store.h, "running beside others") */
    enum tw_err (*probe)(struct tw_store *st, struct tw_error *err);
    enum tw_err (*work_lock)(struct tw_store *st, const char *kind, bool *held,
                             struct tw_error *err);

    /* tierwise store copy: the table-level reads and writes (store_copy.h) */
    const struct tw_store_copy_ops *copy;
};

struct tw_store {
    const struct tw_store_ops *ops;
};

/* The monthly report's fleet walk: an implementation's cursor starts with
 * this (as the savings walk's). */
struct tw_store_rp_cursor {
    struct tw_store *st;
};

/* A savings walk: an implementation's cursor starts with this. */
struct tw_store_sv_cursor {
    struct tw_store *st;
};

/* ---- the implementations' open functions ---- */

/* The SQLite store (store_sqlite.c): PATH is a file. */
enum tw_err tw_store_sqlite_open(const char *path, const struct tw_store_open_opts *opts,
                                 struct tw_store **out, struct tw_error *err);

/* The PostgreSQL store (store_pg.c): CONNINFO is a postgresql:// URI or a
 * libpq keyword/value string (tw_store_location_is_pg). */
enum tw_err tw_store_pg_open(const char *conninfo, const struct tw_store_open_opts *opts,
                             struct tw_store **out, struct tw_error *err);

#endif
