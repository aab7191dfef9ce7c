/*
 * store_pg.h - the PostgreSQL store's private header (store_pg*.c and
 * nothing else): its handle, its statements, and the helpers its files
 * share.  Nothing outside these files sees libpq-fe.h; the rest of the
 * program reaches the PostgreSQL store only through the neutral table of
 * store_ops.h.
 *
 * One handle is one connection (the server's pool of store handles is
 * the backend's pool of connections, sized by --threads).  Every data
 * statement is a prepared statement, prepared on a connection the first
 * time it runs there.  Text is compared byte by byte (every text column
 * is COLLATE "C", as SQLite compares), and a name compared "without
 * regard to case" is compared by lower(), which folds ASCII only under
 * "C", as SQLite's NOCASE does.  No statement reads the database
 * server's clock: every instant comes from this process's clock (the one
 * clock), so that faketime moves the whole program.
 */
#ifndef TW_STORE_STORE_PG_H
#define TW_STORE_STORE_PG_H

#include "store/store_ops.h"

#include <libpq-fe.h>
#include <stdatomic.h>

/* The key space of tierwise's advisory locks ('TW'); the second key is
 * TW_PG_LOCK_MIGRATE for migrations, else a kind of periodic work. */
#define TW_PG_LOCK_SPACE 0x5457
#define TW_PG_LOCK_MIGRATE 0

/* The key space of the locks on a VM's place (tw_pg_lock_place). */
#define TW_PG_LOCK_PLACE 0x5450

/* The most parameters a statement binds. */
#define TW_PG_MAX_PARAMS 48

struct tw_pg {
    struct tw_store base;
    PGconn *conn;
    char conninfo[2048];   /* as given (it holds no password: refused at open) */
    char label[320];       /* what messages call the database: no secret in it */
    bool writer;
    int tx_depth;          /* tw_pg_begin's nesting: 0 outside a transaction */
    unsigned char *prepared; /* per statement slot: prepared on this connection */
    size_t n_prepared;
    char sqlstate[6];      /* of the last failure, "" none */
    int report_tx;         /* tw_pg_report_begin's depth once begun, 0 none */
    /* periodic work held by this connection (tw_store_work_lock) */
    char held[16][16];
    size_t n_held;
};

/*
 * A statement: SQL with $1.. parameters, prepared once per connection.
 * Declare one per use site:
 *     TW_PG_STMT(q_vm_find, "SELECT id FROM vms WHERE identity = $1");
 * Give a parameter a type by a cast where PostgreSQL could not infer it
 * ("$2::text IS NULL OR v.name = $2"), and bigint for every integer.
 */
struct tw_pg_stmt {
    const char *sql;
    atomic_int slot;   /* 0 until first used, then its index + 1 */
};
#define TW_PG_STMT(var, text) static struct tw_pg_stmt var = {.sql = (text)}

/* Parameters, in text form (bytea in binary form). */
struct tw_pg_params {
    int n;
    const char *v[TW_PG_MAX_PARAMS];
    int len[TW_PG_MAX_PARAMS];
    int fmt[TW_PG_MAX_PARAMS];
    char num[TW_PG_MAX_PARAMS][32];
};
void tw_pg_p_init(struct tw_pg_params *p);
/* S as text; NULL is SQL NULL. */
void tw_pg_p_text(struct tw_pg_params *p, const char *s);
/* S as text, "" and NULL as SQL NULL (tw_sq_text's EMPTY_NULL). */
void tw_pg_p_text0(struct tw_pg_params *p, const char *s);
/* LEN bytes of S as text (they must hold no NUL byte). */
void tw_pg_p_textn(struct tw_pg_params *p, const char *s, size_t len);
void tw_pg_p_int(struct tw_pg_params *p, int64_t v);
void tw_pg_p_real(struct tw_pg_params *p, double v);   /* %.17g: exact round trip */
void tw_pg_p_bool(struct tw_pg_params *p, bool v);     /* as an integer 0/1 */
void tw_pg_p_null(struct tw_pg_params *p);
/* LEN bytes for a bytea parameter (binary form). */
void tw_pg_p_bytes(struct tw_pg_params *p, const void *b, size_t len);

/*
 * Runs Q with P (NULL: none).  RES (may be NULL: cleared here) receives
 * the result of a statement that returns rows; PQclear it.  A connection
 * found lost outside a transaction is connected again once and the
 * statement retried; inside one, the transaction is lost and the call
 * fails.  Errors name WHAT (tw_pg_fail).
 */
enum tw_err tw_pg_run(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                      PGresult **res, const char *what, struct tw_error *err);
/* As tw_pg_run, and the number of rows the statement changed in *N. */
enum tw_err tw_pg_run_n(struct tw_pg *pg, struct tw_pg_stmt *q, const struct tw_pg_params *p,
                        int64_t *n, const char *what, struct tw_error *err);
/* A statement without parameters or rows (SET, SAVEPOINT, DDL). */
enum tw_err tw_pg_exec(struct tw_pg *pg, const char *sql, const char *what,
                       struct tw_error *err);

/* Transactions: BEGIN at depth 0, else a savepoint; COMMIT or RELEASE;
 * ROLLBACK or ROLLBACK TO (never fails: a lost connection has lost the
 * transaction anyway). */
enum tw_err tw_pg_begin(struct tw_pg *pg, const char *what, struct tw_error *err);
enum tw_err tw_pg_commit(struct tw_pg *pg, const char *what, struct tw_error *err);
void tw_pg_rollback(struct tw_pg *pg);
/* Whether the last failure is one a whole transaction retried may pass
 * (a serialization failure or a deadlock: SQLSTATE 40001, 40P01). */
bool tw_pg_retryable(const struct tw_pg *pg);

/*
 * The error of a failed statement or connection: "LABEL: WHAT: message
 * (SQLSTATE x)" and a hint.  Codes: an integrity violation (class 23)
 * TW_EINVAL; a missing privilege TW_EPERM (with the grant to ask for);
 * out of memory TW_ENOMEM; anything else (a lost connection, a full
 * disk, a read-only standby) TW_EIO.  RES may be NULL (the connection's
 * message is used).
 */
enum tw_err tw_pg_fail(struct tw_pg *pg, const PGresult *res, const char *what,
                       struct tw_error *err);

/* Reading a row (text-format results).  NULL reads as 0, 0.0, "". */
bool tw_pg_null(const PGresult *r, int row, int col);
int64_t tw_pg_int(const PGresult *r, int row, int col);
double tw_pg_real(const PGresult *r, int row, int col);
const char *tw_pg_text(const PGresult *r, int row, int col);
/* Copies the value into DST (LEN bytes, truncated at a UTF-8 boundary). */
void tw_pg_copy(char *dst, size_t len, const PGresult *r, int row, int col);
/* A malloc'd NUL-terminated copy, its length in *LEN (may be NULL);
 * NULL when out of memory. */
char *tw_pg_dup(const PGresult *r, int row, int col, size_t *len);
/* A bytea value decoded into DST (up to CAP bytes); its length, or -1
 * when it does not decode or does not fit. */
ssize_t tw_pg_bytes(const PGresult *r, int row, int col, void *dst, size_t cap);

/* This process's clock (the one clock): RFC 3339 UTC with milliseconds,
 * as SQLite's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes, and in ms. */
void tw_pg_now_text(char out[40]);
int64_t tw_pg_now_ms(void);

/*
 * Locks, until the transaction ends, a VM's place (NAME, GROUP and
 * SUBSCRIPTION without regard to case): an ingest and an ARM put that
 * look a VM up by its place take this first, so that the one that finds
 * nothing and inserts commits before the other looks (their identities
 * differ, so no unique index makes them meet).  Inside a transaction
 * only.
 */
enum tw_err tw_pg_lock_place(struct tw_pg *pg, const char *name, const char *group,
                             const char *subscription, struct tw_error *err);

/* ---- the connection (store_pg_core.c) ---- */

/* Parses CONNINFO, refuses a password in it, connects (UTC, a name for
 * pg_stat_activity), and fills PG's conn, conninfo and label. */
enum tw_err tw_pg_connect(struct tw_pg *pg, const char *conninfo, struct tw_error *err);
/* Connects again after a loss (every statement is prepared anew). */
enum tw_err tw_pg_reconnect(struct tw_pg *pg, struct tw_error *err);
void tw_pg_disconnect(struct tw_pg *pg);

/* ---- the schema (store_pg.c) ---- */

/* Brings the database to this binary's schema version in one transaction
 * under the migration advisory lock; a newer schema is refused
 * (TW_EUNSUPPORTED naming both versions). */
enum tw_err tw_pg_migrate(struct tw_pg *pg, struct tw_error *err);

/* ---- the operations, by file (each fills its part of the table) ---- */

/* store_pg.c */
void tw_pg_close(struct tw_store *st);
enum tw_err tw_pg_token_add(struct tw_store *st, const char *name, enum tw_role role,
                            const uint8_t sha256[32], int64_t *id_out, struct tw_error *err);
enum tw_err tw_pg_token_lookup(struct tw_store *st, const uint8_t sha256[32],
                               enum tw_role *role_out, char *name_out, size_t name_len,
                               struct tw_error *err);
enum tw_err tw_pg_token_list(struct tw_store *st, struct tw_store_token_row **rows, size_t *n,
                             struct tw_error *err);
enum tw_err tw_pg_token_revoke(struct tw_store *st, int64_t id, struct tw_error *err);
enum tw_err tw_pg_stats(struct tw_store *st, struct tw_store_stats *out, struct tw_error *err);
enum tw_err tw_pg_pricebook_put(struct tw_store *st, const char *region, const char *currency,
                                const char *source, const char *fetched_at, const char *items,
                                size_t items_len, struct tw_error *err);
enum tw_err tw_pg_pricebook_get(struct tw_store *st, const char *region, const char *currency,
                                char **items, size_t *items_len, char *source, size_t source_len,
                                char *fetched_at, size_t fetched_len, struct tw_error *err);
enum tw_err tw_pg_pricebook_get_at(struct tw_store *st, const char *region,
                                   const char *currency, const char *at, char **items,
                                   size_t *items_len, char *source, size_t source_len,
                                   char *fetched_at, size_t fetched_len, struct tw_error *err);
enum tw_err tw_pg_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                               const char *fetched_at, const struct tw_store_vm_size *rows,
                               size_t n, struct tw_error *err);
enum tw_err tw_pg_vm_sizes_get(struct tw_store *st, const char *region,
                               struct tw_store_vm_size **rows, size_t *n, char *source,
                               size_t source_len, char *fetched_at, size_t fetched_len,
                               struct tw_error *err);
enum tw_err tw_pg_check(struct tw_store *st, struct tw_error *err);
enum tw_err tw_pg_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                               struct tw_store_fleet_counts *out, struct tw_error *err);
enum tw_err tw_pg_probe(struct tw_store *st, struct tw_error *err);
enum tw_err tw_pg_work_lock(struct tw_store *st, const char *kind, bool *held,
                            struct tw_error *err);

/* store_pg_ingest.c */
enum tw_err tw_pg_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                              const char *const *raw, const size_t *raw_len,
                              const struct tw_store_judged *const *judged, size_t n,
                              const char *received_at, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err);

/* store_pg_query.c */
enum tw_err tw_pg_vms(struct tw_store *st, struct tw_store_vm_row **rows, size_t *n,
                      struct tw_error *err);
enum tw_err tw_pg_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                     struct tw_error *err);
enum tw_err tw_pg_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **rows,
                           size_t *n, struct tw_error *err);
enum tw_err tw_pg_disks(struct tw_store *st, struct tw_store_disk_row **rows, size_t *n,
                        struct tw_error *err);
enum tw_err tw_pg_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                       struct tw_error *err);
enum tw_err tw_pg_disk_history(struct tw_store *st, int64_t disk_id,
                               struct tw_store_sku_hist_row **rows, size_t *n,
                               struct tw_error *err);
enum tw_err tw_pg_disk_results(struct tw_store *st, int64_t disk_id,
                               struct tw_store_result_rec **recs, size_t *n,
                               struct tw_error *err);
enum tw_err tw_pg_vms_page(struct tw_store *st, const struct tw_store_page *pg,
                           struct tw_store_vm_row **rows, size_t *n, bool *more,
                           struct tw_error *err);
enum tw_err tw_pg_disks_page(struct tw_store *st, const struct tw_store_page *pg,
                             struct tw_store_disk_row **rows, size_t *n, bool *more,
                             struct tw_error *err);
enum tw_err tw_pg_vm_ids_page(struct tw_store *st, const struct tw_store_page *pg,
                              int64_t **ids, size_t *n, bool *more, struct tw_error *err);
enum tw_err tw_pg_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results,
                            struct tw_error *err);
enum tw_err tw_pg_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err);
enum tw_err tw_pg_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                               struct tw_error *err);
enum tw_err tw_pg_fleet_verdicts(struct tw_store *st, const char *basis,
                                 tw_store_verdict_fn fn, void *arg, size_t *n_vms,
                                 struct tw_error *err);
enum tw_err tw_pg_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                 size_t max, struct tw_store_stale **rows, size_t *n,
                                 struct tw_error *err);
enum tw_err tw_pg_verdicts_keep(struct tw_store *st, const char *basis,
                                const struct tw_store_kept *rows, size_t n,
                                struct tw_error *err);
enum tw_err tw_pg_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_latest_ref **rows, size_t *n, bool *more,
                              struct tw_error *err);

/* store_pg_actions.c */
enum tw_err tw_pg_action_add(struct tw_store *st, const struct tw_store_action_new *a,
                             int64_t *id, struct tw_error *err);
enum tw_err tw_pg_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                              enum tw_action_state to, const char *owner, const char *detail,
                              struct tw_error *err);
enum tw_err tw_pg_action_claim(struct tw_store *st, int64_t id, const char *owner,
                               int64_t now_ms, int64_t lease_ms, int64_t *until_ms,
                               struct tw_error *err);
enum tw_err tw_pg_action_release(struct tw_store *st, int64_t id, const char *owner,
                                 struct tw_error *err);
enum tw_err tw_pg_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                               int *attempts, struct tw_error *err);
enum tw_err tw_pg_action_log_count(struct tw_store *st, int64_t id, size_t *n,
                                   struct tw_error *err);
enum tw_err tw_pg_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                const char *observed_at, int64_t observed_ms,
                                enum tw_obs_source source, struct tw_error *err);
enum tw_err tw_pg_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                              const char *tier, int64_t size_gib, const char *observed_at,
                              int64_t observed_ms, enum tw_obs_source source, bool *added,
                              struct tw_error *err);
enum tw_err tw_pg_policy_put(struct tw_store *st, const char *name, const char *body,
                             struct tw_error *err);
enum tw_err tw_pg_policy_get(struct tw_store *st, const char *name, char **body,
                             struct tw_error *err);
enum tw_err tw_pg_plan_add(struct tw_store *st, const char *policy, const char *from,
                           const char *to, const char *body, int64_t *id, struct tw_error *err);
enum tw_err tw_pg_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                               struct tw_store_action_row **rows, size_t *n, bool *more,
                               struct tw_error *err);
enum tw_err tw_pg_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                             struct tw_error *err);
enum tw_err tw_pg_action_moves(struct tw_store *st, int64_t id,
                               struct tw_store_action_move_row **rows, size_t *n,
                               struct tw_error *err);
enum tw_err tw_pg_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                              int64_t **ids, size_t *n, struct tw_error *err);
enum tw_err tw_pg_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                       const char *url, struct tw_error *err);
enum tw_err tw_pg_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                       struct tw_error *err);
enum tw_err tw_pg_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                 struct tw_error *err);
enum tw_err tw_pg_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                    const char *tier, int64_t action_id, const char *at,
                                    bool *kept, struct tw_error *err);
enum tw_err tw_pg_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku, char *tier,
                                    bool *found, struct tw_error *err);
enum tw_err tw_pg_disk_original_clear(struct tw_store *st, int64_t disk_id,
                                      struct tw_error *err);

/* store_pg_arm.c */
enum tw_err tw_pg_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                             const char *observed_at, int64_t observed_ms,
                             void (*fn)(void *arg, const struct tw_store_arm_change *c),
                             void *arg, int64_t *vm_id, struct tw_error *err);
enum tw_err tw_pg_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                    struct tw_error *err);
enum tw_err tw_pg_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                             struct tw_error *err);

/* store_pg_drift.c */
enum tw_err tw_pg_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                             int64_t since_ms, bool *started, struct tw_error *err);
enum tw_err tw_pg_drift_close(struct tw_store *st, int64_t disk_id, const char *at,
                              int64_t at_ms, bool *ended, struct tw_error *err);
enum tw_err tw_pg_drift_list(struct tw_store *st, bool open_only,
                             struct tw_store_drift_row **rows, size_t *n, struct tw_error *err);
enum tw_err tw_pg_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                  size_t max, struct tw_store_sv_power **out, size_t *n,
                                  struct tw_error *err);
enum tw_err tw_pg_policy_names(struct tw_store *st, char ***names, size_t *n,
                               struct tw_error *err);
enum tw_err tw_pg_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                             const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                             bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                             struct tw_error *err);

/* store_pg_savings.c */
enum tw_err tw_pg_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                     const struct tw_store_disk_attrs *a,
                                     const char *observed_at, int64_t observed_ms,
                                     enum tw_obs_source source, bool *applied,
                                     struct tw_error *err);
enum tw_err tw_pg_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                               struct tw_store_sv_cursor **out, struct tw_error *err);
enum tw_err tw_pg_savings_next(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm,
                               bool *done, struct tw_error *err);
void tw_pg_savings_close(struct tw_store_sv_cursor *c);
enum tw_err tw_pg_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max,
                                       size_t *n, struct tw_error *err);
/* A read in one snapshot (the walks, the report's reads): at depth 0 a
 * REPEATABLE READ, READ ONLY transaction; inside the caller's, a savepoint
 * (which sees the caller's snapshot).  End it with tw_pg_commit, or
 * tw_pg_rollback after a failure. */
enum tw_err tw_pg_begin_read(struct tw_pg *pg, const char *what, struct tw_error *err);
/* A server-side cursor's rows, a batch at a time: FETCH is "FETCH N FROM
 * cursor" (N = BATCH), prepared as any statement; RES holds the batch,
 * ROW the next row to read in it. */
struct tw_pg_feed {
    struct tw_pg *pg;
    struct tw_pg_stmt *fetch;
    int batch;
    const char *what;
    PGresult *res;
    int row, n;
    bool last;             /* the batch in RES is the cursor's last */
};
/* *HAVE: whether F has a row at F->row (fetching the next batch when the
 * one held is read). */
enum tw_err tw_pg_feed_peek(struct tw_pg_feed *f, bool *have, struct tw_error *err);
void tw_pg_feed_clear(struct tw_pg_feed *f);

/* store_pg_report.c */
enum tw_err tw_pg_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                              int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                              struct tw_store_report *out, struct tw_error *err);
enum tw_err tw_pg_report_book_items(struct tw_store *st, int64_t id, char **items, size_t *len,
                                    struct tw_error *err);
enum tw_err tw_pg_report_begin(struct tw_store *st, struct tw_error *err);
void tw_pg_report_end(struct tw_store *st);
enum tw_err tw_pg_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                    int64_t vm_id, struct tw_store_rp_cursor **out,
                                    struct tw_error *err);
enum tw_err tw_pg_report_fleet_next(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                    bool *done, struct tw_error *err);
void tw_pg_report_fleet_close(struct tw_store_rp_cursor *c);
enum tw_err tw_pg_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                  struct tw_error *err);

#endif
