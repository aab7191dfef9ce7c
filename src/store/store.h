/*
 * store.h - where the backend keeps everything: agents' tokens, VMs, disks
 * (with their SKU history), reports, results, power-state observations,
 * price books, and (for the planner) plans and actions.
 *
 * The functions below are the whole interface.  They dispatch through a
 * neutral table of operations (struct tw_store_ops, store_ops.h) so that a
 * second implementation (PostgreSQL, for several stateless backends behind
 * a load balancer) can stand beside the SQLite one without its callers
 * changing: what is SQLite's own (statements, the write-ahead log and its
 * checkpoints, the integrity check, page counts) stays inside
 * store_sqlite*.c.  This module knows nothing of HTTP or Azure.
 *
 * A handle is used by one thread at a time; open one per thread that needs
 * one (WAL mode lets readers run beside the one writer).  Every function
 * returns TW_OK or an error code with one sentence in ERR.
 */
#ifndef TW_STORE_STORE_H
#define TW_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/inventory.h"
#include "core/report.h"
#include "core/result.h"

struct tw_store;

enum tw_role { TW_ROLE_AGENT, TW_ROLE_READER, TW_ROLE_ADMIN };
const char *tw_role_name(enum tw_role r);
/* "agent", "reader", "admin"; TW_EINVAL otherwise. */
enum tw_err tw_role_parse(const char *s, enum tw_role *out);

/*
 * Opens the store at PATH: a PostgreSQL database when PATH is a libpq
 * connection string (tw_store_location_is_pg; the PostgreSQL store
 * refuses one that carries a password: it belongs in PGPASSFILE or
 * ~/.pgpass, never on a command line or in a log), else a SQLite file.
 *
 * SQLite: opens (creating if needed) the database at PATH: WAL mode,
 * foreign keys on, a busy timeout, and the schema migrated to this
 * binary's version (PRAGMA user_version) in one transaction.  A database
 * written by a newer tierwise (user_version above ours) is refused with
 * TW_EUNSUPPORTED and a message naming both versions.  A file that is not
 * a database fails with TW_EINVAL naming the path.
 */
enum tw_err tw_store_open(const char *path, struct tw_store **out, struct tw_error *err);

/* How a handle will be used, for tw_store_open_with. */
struct tw_store_open_opts {
    /* The one handle through which a long-running process (the server's
     * writer) does all its writing.  The implementation may then keep its
     * housekeeping out of the commits: the SQLite store runs a thread of
     * its own that copies the write-ahead log into the database beside
     * the writer, so that no commit waits for a checkpoint.  Stopped and
     * joined by tw_store_close. */
    bool writer;
};
/* As tw_store_open, with OPTS (NULL: the defaults, as tw_store_open). */
enum tw_err tw_store_open_with(const char *path, const struct tw_store_open_opts *opts,
                               struct tw_store **out, struct tw_error *err);
void tw_store_close(struct tw_store *st);   /* NULL allowed */

/* The schema version this binary writes (the same for every
 * implementation). */
int tw_store_schema_version(void);

/*
 * Whether LOCATION (LEN bytes, not necessarily NUL-terminated) names a
 * PostgreSQL database rather than a SQLite file: a "postgresql://" or
 * "postgres://" URI, or a libpq keyword/value string whose first word is
 * one of libpq's keywords ("host=/run/postgresql dbname=tierwise",
 * "service=tierwise").  Anything else is a file path; a file whose name
 * looks like "dbname=x" is given as "./dbname=x".
 */
bool tw_store_location_is_pg(const char *location, size_t len);

/* ---- running beside others ------------------------------------------- */

/*
 * Whether the store takes writes now, for /healthz: TW_OK, or an error
 * whose sentence says what is wrong (SQLite: a page written and synced
 * beside the database failed; PostgreSQL: the server does not answer,
 * or answers as a read-only standby).  A PostgreSQL handle whose
 * connection was lost tries once to connect again first.
 */
enum tw_err tw_store_probe(struct tw_store *st, struct tw_error *err);

/*
 * The right to run the periodic work KIND ("sync", "prices", "vmsizes",
 * "drift", "scheduler", "rejudge": a short lower-case word) on this
 * handle: *HELD true when this handle holds it now (taken now, or held
 * since an earlier call), false when another process does.  It is held
 * for as long as the handle's connection lives and dropped when the
 * handle is closed or its process dies, so another backend's next call
 * takes it over.  SQLite: always held (one process serves a database
 * file).  PostgreSQL: a session-level advisory lock per kind; a lost
 * connection is connected again and the lock asked for again (it may be
 * another's by then).
 */
enum tw_err tw_store_work_lock(struct tw_store *st, const char *kind, bool *held,
                               struct tw_error *err);

/* ---- tokens ---------------------------------------------------------- */

/* Stores a token by the SHA-256 of its secret (the secret itself is never
 * stored).  NAME may be "".  A repeated hash fails with TW_EINVAL. */
enum tw_err tw_store_token_add(struct tw_store *st, const char *name, enum tw_role role,
                               const uint8_t sha256[32], int64_t *id_out,
                               struct tw_error *err);
/* The role and name of the token whose secret hashes to SHA256; TW_ENOENT
 * when there is none or it was revoked.  NAME_OUT may be NULL. */
enum tw_err tw_store_token_lookup(struct tw_store *st, const uint8_t sha256[32],
                                  enum tw_role *role_out, char *name_out, size_t name_len,
                                  struct tw_error *err);
/* A stored token, never its hash. */
struct tw_store_token_row {
    int64_t id;
    char name[256];
    enum tw_role role;
    char created_at[40]; /* RFC 3339 UTC */
    char revoked_at[40]; /* "" while it is good */
};
/* All tokens by id; *ROWS malloc'd (free()), *N of them. */
enum tw_err tw_store_token_list(struct tw_store *st, struct tw_store_token_row **rows, size_t *n,
                                struct tw_error *err);
/* Revokes token ID; TW_ENOENT when there is no such token. */
enum tw_err tw_store_token_revoke(struct tw_store *st, int64_t id, struct tw_error *err);

/* ---- reports --------------------------------------------------------- */

enum tw_put_status {
    TW_PUT_STORED,    /* new: stored with its VM, disks, results, power state */
    TW_PUT_REPEAT,    /* this id was stored before; nothing changed */
    TW_PUT_FAILED     /* not stored; see the error of that report */
};

/*
 * Stores N reports in one transaction, each inside its own savepoint: a
 * report that fails (STATUS[i] = TW_PUT_FAILED, ERRS[i] set) is rolled
 * back alone and the others are kept.  RAW[i]/RAW_LEN[i] is the body as
 * received (kept for audit); RECEIVED_AT is RFC 3339 UTC.  The function
 * returns an error only when the transaction as a whole could not be
 * committed; then no report of the batch is stored.
 */
enum tw_err tw_store_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                                 const char *const *raw, const size_t *raw_len, size_t n,
                                 const char *received_at, enum tw_put_status *status,
                                 struct tw_error *errs, struct tw_error *err);

/* The verdicts of one report's results, judged when it is stored (by the
 * service room, against the report's own inventory), so that the fleet's
 * summary need not judge every result again per request. */
struct tw_store_verdict {
    const char *kind;   /* tw_verdict_name; NULL: the result could not be judged */
    const char *skus;   /* the SKUs of the disks it covered, comma-separated, one per disk */
};
struct tw_store_judged {
    const char *basis;  /* what it was judged under (rules, catalog, caps); see result_latest */
    size_t n;           /* == the report's n_results */
    const struct tw_store_verdict *v;
};
/* The allowance for an agent's clock: a report's created_at (and a
 * result's started_at) counts as at most this far past the moment the
 * server received it when the store decides which report is a VM's newest
 * and which result is the latest.  A later time is kept as sent, flagged
 * (reports.ahead_ms), and ordered at the bound, so that a clock set in 2099
 * cannot pin a VM's state for good. */
#define TW_STORE_CLOCK_AHEAD_MS (5 * 60 * 1000)

/* As tw_store_put_reports, with JUDGED[i] (JUDGED or an element may be
 * NULL: not judged) kept beside report i's results. */
enum tw_err tw_store_put_reports_judged(struct tw_store *st, const struct tw_report *const *reps,
                                        const char *const *raw, const size_t *raw_len,
                                        const struct tw_store_judged *const *judged, size_t n,
                                        const char *received_at, enum tw_put_status *status,
                                        struct tw_error *errs, struct tw_error *err);

/* ---- queries (domain rows; numeric ids are the store's own) ---------- */

/* A VM as its newest report shows it.  Text fields are "" when unknown. */
struct tw_store_vm_row {
    int64_t id;
    char name[128];
    char resource_id[512];     /* "" when the agent did not know it */
    char subscription_id[64];
    char resource_group[128];
    char location[64];
    char vm_size[64];
    size_t n_tags;
    struct tw_tag *tags;       /* malloc'd, in key order; tw_store_vm_rows_free */
    char power_state[32];      /* "" never observed */
    char power_state_at[40];   /* when it was observed, RFC 3339; "" never */
    char last_report_at[40];   /* created_at of the newest report */
    int64_t n_disks;           /* disks attached now */
};
void tw_store_vm_rows_free(struct tw_store_vm_row *rows, size_t n); /* NULL allowed */

/* A managed disk.  DISK holds its fields as the inventory names them
 * (lun -1, tier and device "" when unknown). */
struct tw_store_disk_row {
    int64_t id;
    int64_t vm_id;
    char vm_name[128];
    struct tw_disk disk;
    char last_seen_at[40];     /* the newest report that listed it */
    char detached_at[40];      /* "" while attached */
};

/* One change of a disk's (SKU, tier, size). */
struct tw_store_sku_hist_row {
    char observed_at[40];
    char sku[32];
    char tier[16];             /* "" unknown */
    int64_t size_gib;
};

/* A stored benchmark result: its key and its tierwise.bench-result/1
 * record as text (the domain document, as the agent sent it). */
struct tw_store_result_rec {
    int64_t id;
    char profile[64];
    char *record;              /* malloc'd, NUL-terminated; tw_store_result_recs_free */
    size_t record_len;
};
void tw_store_result_recs_free(struct tw_store_result_rec *recs, size_t n); /* NULL allowed */

/* All VMs ordered by name (then id); *ROWS malloc'd, free with
 * tw_store_vm_rows_free. */
enum tw_err tw_store_vms(struct tw_store *st, struct tw_store_vm_row **rows, size_t *n,
                         struct tw_error *err);
/* VM ID into *ROW (the caller frees ROW->tags with free(); the row itself
 * is the caller's);
 * TW_ENOENT if none. */
enum tw_err tw_store_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                        struct tw_error *err);
/* The disks attached to VM VM_ID now, by LUN then name; *ROWS malloc'd
 * (free()). */
enum tw_err tw_store_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **rows,
                              size_t *n, struct tw_error *err);
/* All attached disks, by VM name, VM id, LUN, name; *ROWS malloc'd (free()). */
enum tw_err tw_store_disks(struct tw_store *st, struct tw_store_disk_row **rows, size_t *n,
                           struct tw_error *err);
/* Disk ID, attached or not; TW_ENOENT if none. */
enum tw_err tw_store_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                          struct tw_error *err);
/* Disk ID's SKU history, oldest first; *ROWS malloc'd (free()). */
enum tw_err tw_store_disk_history(struct tw_store *st, int64_t disk_id,
                                  struct tw_store_sku_hist_row **rows, size_t *n,
                                  struct tw_error *err);
/* The latest result per profile that covered disk DISK_ID, by profile;
 * free with tw_store_result_recs_free. */
enum tw_err tw_store_disk_results(struct tw_store *st, int64_t disk_id,
                                  struct tw_store_result_rec **recs, size_t *n,
                                  struct tw_error *err);

/* One page of a list, and its filters (NULL: any). */
#define TW_STORE_PAGE_MAX 5000
struct tw_store_page {
    size_t limit;               /* rows per page, 1 .. TW_STORE_PAGE_MAX */
    size_t offset;              /* rows before the page */
    const char *vm;             /* the VM's name (any case) */
    const char *sku;            /* a disk's SKU (Premium_LRS) or tier (P10), any case */
    const char *resource_group; /* the VM's resource group (any case) */
};
/* A page of tw_store_vms (ordered the same; SKU ignored); *MORE says
 * whether rows follow it.  Free as tw_store_vms. */
enum tw_err tw_store_vms_page(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_vm_row **rows, size_t *n, bool *more,
                              struct tw_error *err);
/* A page of tw_store_disks (ordered the same). */
enum tw_err tw_store_disks_page(struct tw_store *st, const struct tw_store_page *pg,
                                struct tw_store_disk_row **rows, size_t *n, bool *more,
                                struct tw_error *err);
/* A page of VM ids, ascending; with SKU, the VMs with such a disk. */
enum tw_err tw_store_vm_ids_page(struct tw_store *st, const struct tw_store_page *pg,
                                 int64_t **ids, size_t *n, bool *more, struct tw_error *err);

/* For compliance: the VM's inventory as last reported, read from its rows
 * (the VM's fields and its attached disks, in the order its newest report
 * listed them; no report body is read), and the latest result per (target,
 * profile) from that VM, each read from its record's own text (*RESULTS
 * malloc'd, caller frees).  TW_ENOENT if there is no such VM; TW_EPARSE
 * when a stored result record no longer reads (a damaged row): the caller
 * reports that VM as not judged and goes on with the others. */
enum tw_err tw_store_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                               struct tw_result **results, size_t *n_results,
                               struct tw_error *err);
/* What tw_store_fleet_latest hands over for each VM: its inventory and its
 * latest results as tw_store_vm_latest reads them, or, when one of its
 * records no longer reads, RESULTS NULL, N 0 and WHY saying so (else WHY is
 * NULL).  The pointers are valid during the call; an error returned stops
 * the walk with it. */
typedef enum tw_err (*tw_store_latest_fn)(void *arg, int64_t vm_id,
                                          const struct tw_inventory *inv,
                                          const struct tw_result *results, size_t n,
                                          const char *why);
/* Every VM (ascending id) through FN, in one pass over the rows (three
 * queries in one read transaction, not three per VM): for the fleet's
 * compliance. */
enum tw_err tw_store_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                                  struct tw_error *err);
/* The ids of all VMs, ascending (*IDS malloc'd). */
enum tw_err tw_store_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err);

/* Counters for /metrics. */
struct tw_store_stats {
    int64_t reports, vms, disks, results;
    int64_t db_bytes;     /* the space the store takes, in bytes */
};
enum tw_err tw_store_stats(struct tw_store *st, struct tw_store_stats *out,
                           struct tw_error *err);

/* ---- price books ----------------------------------------------------- */

/* Replaces the price book of (REGION, CURRENCY) in one transaction: ITEMS
 * is a JSON array of Retail Prices API items as text, SOURCE says where it
 * came from ("api https://prices.azure.com", "snapshot FILE"), FETCHED_AT
 * is RFC 3339 UTC. */
enum tw_err tw_store_pricebook_put(struct tw_store *st, const char *region, const char *currency,
                                   const char *source, const char *fetched_at,
                                   const char *items, size_t items_len, struct tw_error *err);
/* The stored book of (REGION, CURRENCY): ITEMS malloc'd NUL-terminated
 * text (caller frees), SOURCE and FETCHED_AT copied; TW_ENOENT if none. */
enum tw_err tw_store_pricebook_get(struct tw_store *st, const char *region, const char *currency,
                                   char **items, size_t *items_len, char *source,
                                   size_t source_len, char *fetched_at, size_t fetched_len,
                                   struct tw_error *err);

/* The book of (REGION, CURRENCY) as it stood at instant AT (RFC 3339):
 * the last one fetched by then (every refresh and import is kept, schema
 * 2); as tw_store_pricebook_get otherwise.  TW_ENOENT if none was. */
enum tw_err tw_store_pricebook_get_at(struct tw_store *st, const char *region,
                                      const char *currency, const char *at, char **items,
                                      size_t *items_len, char *source, size_t source_len,
                                      char *fetched_at, size_t fetched_len,
                                      struct tw_error *err);

/* ---- actions: a state machine with an audit log -------------------- */

/*
 * planned -> checked -> sent -> verified -> done; planned and checked may
 * also end skipped, and any state before done may end failed.  A move is
 * a compare-and-set in one transaction: it happens only if the action is
 * still in the state the mover saw, so two workers can never both send
 * the same action; each move is written to the transitions (audit) log.
 */
enum tw_action_state {
    TW_ACT_PLANNED, TW_ACT_CHECKED, TW_ACT_SENT, TW_ACT_VERIFIED,
    TW_ACT_DONE, TW_ACT_SKIPPED, TW_ACT_FAILED
};
const char *tw_action_state_name(enum tw_action_state s);
/* Whether the machine allows FROM -> TO. */
bool tw_action_move_allowed(enum tw_action_state from, enum tw_action_state to);

struct tw_store_action_new {
    int64_t plan_id;             /* 0: none */
    int64_t disk_id;             /* 0: none */
    const char *kind;            /* "downgrade", "upgrade", ... */
    const char *from_sku, *to_sku;
    const char *due_at;          /* RFC 3339; NULL: none */
    const char *idempotency_key; /* unique; NULL: none */
    bool dry_run;
    /* schema 5 (the planner and the executor): */
    int64_t vm_id;               /* 0: the disk's VM (or none) */
    const char *policy;          /* the policy that planned it; NULL: none (vm stop/start) */
    const char *reason;          /* why, one sentence ("window Fri 20:00-Mon 06:00 of
                                  * dev-weekends"); NULL: "" */
    const char *saving;          /* expected saving, decimal text in CURRENCY; NULL: none */
    const char *currency;        /* NULL: none */
};
/* Adds a planned action; *ID its id.  TW_EINVAL for a repeated key. */
enum tw_err tw_store_action_add(struct tw_store *st, const struct tw_store_action_new *a,
                                int64_t *id, struct tw_error *err);
/* Moves action ID from FROM to TO if it is still in FROM (OWNER, who
 * moves it, and DETAIL, e.g. the error of a failure, go to the log).
 * Only OWNER's claim, or none (unclaimed, or its lease ended by the system
 * clock), lets it move.  TW_EPERM when it is no longer in FROM (another
 * worker moved it), another owner's live claim holds it (the message names
 * the holder) or the machine forbids the move; TW_ENOENT when there is no
 * such action. */
enum tw_err tw_store_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                                 enum tw_action_state to, const char *owner, const char *detail,
                                 struct tw_error *err);
/*
 * Claims action ID for OWNER (a worker's or backend's name, not "") until
 * NOW_MS + LEASE_MS (milliseconds since the epoch, the caller's clock; LEASE_MS
 * > 0), compare-and-set in one transaction: taken only when the action is
 * unclaimed or its lease has expired (its end <= NOW_MS), renewed when OWNER
 * holds it already.  *UNTIL_MS (may be NULL) gets the lease's end.  TW_EPERM
 * when another owner's lease runs past NOW_MS (the message names it and
 * when it ends) or the action is finished (done, skipped, failed);
 * TW_ENOENT when there is no such action.
 */
enum tw_err tw_store_action_claim(struct tw_store *st, int64_t id, const char *owner,
                                  int64_t now_ms, int64_t lease_ms, int64_t *until_ms,
                                  struct tw_error *err);
/* Releases OWNER's claim on action ID (the lease ended or not); TW_EPERM
 * when OWNER does not hold it (another took it over), TW_ENOENT when there
 * is no such action. */
enum tw_err tw_store_action_release(struct tw_store *st, int64_t id, const char *owner,
                                    struct tw_error *err);
/* The action's state and how many times it was sent. */
enum tw_err tw_store_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                                  int *attempts, struct tw_error *err);
/* The number of moves logged for action ID. */
enum tw_err tw_store_action_log_count(struct tw_store *st, int64_t id, size_t *n,
                                      struct tw_error *err);

/* ---- actions: the audit log and the executor's queries (schema 5) ---- */

/* One action as the audit log shows it (GET /api/v1/actions, `tierwise
 * actions`): the field names of the API are these members' names. */
struct tw_store_action_row {
    int64_t id;
    int64_t plan_id;               /* 0 none */
    int64_t vm_id, disk_id;        /* 0 none */
    char vm[128], disk[128];       /* names; "" unknown */
    char vm_resource_id[512], disk_resource_id[512]; /* ARM ids; "" unknown */
    char kind[16];                 /* "downgrade", "upgrade", "deallocate", "start" */
    char from_sku[32], to_sku[32];
    char due_at[40];               /* RFC 3339 UTC; "" none */
    int64_t due_ms;                /* 0 none */
    char state[16];                /* tw_action_state_name */
    char policy[65];
    char reason[512];              /* why planned, or why skipped/failed (the last detail) */
    char saving[48], currency[4];  /* "" none */
    int attempts;                  /* times sent */
    char updated_at[40];           /* the last move's time */
    char requested_at[40];
    bool dry_run;
    char *operation_url;           /* malloc'd, "" none; tw_store_action_rows_free */
    char last_error[512];
    char claim_owner[64];
    int64_t claim_until_ms;
};
void tw_store_action_rows_free(struct tw_store_action_row *rows, size_t n); /* NULL allowed */

/* One move of an action (the transitions log). */
struct tw_store_action_move_row {
    char from_state[16];           /* "" for the first (planned) */
    char to_state[16];
    char at[40];
    char owner[64];
    char detail[512];
};

struct tw_store_action_filter {
    const char *vm;                /* VM name (case-insensitive); NULL: any */
    int64_t disk_id;               /* 0: any */
    const char *state;             /* NULL: any */
    int64_t due_from_ms, due_to_ms;/* [from, to); 0: unbounded */
    int64_t after_id;              /* a page: ids above this */
    size_t limit;                  /* 0: all */
};

/* Actions matching F by id into *ROWS (tw_store_action_rows_free); *MORE
 * (may be NULL) whether more follow past LIMIT. */
enum tw_err tw_store_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                                  struct tw_store_action_row **rows, size_t *n, bool *more,
                                  struct tw_error *err);
/* Action ID into *ROW (free ROW->operation_url); TW_ENOENT if none. */
enum tw_err tw_store_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                                struct tw_error *err);
/* Action ID's moves in order into *ROWS (malloc'd, free()). */
enum tw_err tw_store_action_moves(struct tw_store *st, int64_t id,
                                  struct tw_store_action_move_row **rows, size_t *n,
                                  struct tw_error *err);
/* The ids of actions to work on at NOW_MS, by due time then id (at most
 * MAX; 0: all): planned or checked ones due by then (dry runs excluded
 * unless DRY_RUN), and every sent or verified one whatever its due time
 * (a crash left it in flight: it is resumed, never forgotten). */
enum tw_err tw_store_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                                 int64_t **ids, size_t *n, struct tw_error *err);
/* Keeps the operation URL of action ID (sent by OWNER, who must hold its
 * claim: TW_EPERM otherwise) so that a resumed executor polls it. */
enum tw_err tw_store_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                          const char *url, struct tw_error *err);
/* Counts a send of action ID (attempts + 1) with its claim held by OWNER;
 * done in the same transaction as the move to sent by
 * tw_store_action_move(..., TW_ACT_SENT, ...). Here for the retries of a
 * send refused as busy (state stays sent). */
enum tw_err tw_store_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                          struct tw_error *err);
/* Sets action ID's due time (a downgrade waiting for its VM to be
 * deallocated is moved later); only while planned or checked. */
enum tw_err tw_store_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                    struct tw_error *err);

/* ---- a disk's original SKU (what every upgrade restores) -------------- */

/* Records SKU (and TIER, may be "") as disk DISK_ID's original, by action
 * ACTION_ID, unless one is recorded already (the first downgrade's stays:
 * *KEPT true then). */
enum tw_err tw_store_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                       const char *tier, int64_t action_id, const char *at,
                                       bool *kept, struct tw_error *err);
/* Disk DISK_ID's original SKU into SKU (32 bytes) and TIER (16); *FOUND
 * false when tierwise never downgraded it (or restored it since). */
enum tw_err tw_store_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku,
                                       char *tier, bool *found, struct tw_error *err);
/* Forgets it: the disk is back on its original SKU, verified. */
enum tw_err tw_store_disk_original_clear(struct tw_store *st, int64_t disk_id,
                                         struct tw_error *err);

/* ---- observations from elsewhere than a report (ARM) ---------------- */

enum tw_obs_source { TW_OBS_AGENT, TW_OBS_ARM };

/* A power state of VM VM_ID seen at OBSERVED_AT (RFC 3339) by SOURCE
 * (ARM's instance view while the agent can't report: the VM is
 * deallocated): kept in the history, and the VM's current state when it
 * is the newest observation.  TW_ENOENT for no such VM, TW_EPARSE for a
 * bad time. */
enum tw_err tw_store_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                   const char *observed_at, enum tw_obs_source source,
                                   struct tw_error *err);
/* A disk's (SKU, tier, size) seen at OBSERVED_AT by SOURCE: a history row
 * (without a report) when it differs from the observation before it, so
 * drift is seen while the VM is deallocated.  *ADDED (may be NULL) says
 * whether a row was added.  The disk's current fields follow reports. */
enum tw_err tw_store_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                                 const char *tier, int64_t size_gib, const char *observed_at,
                                 enum tw_obs_source source, bool *added, struct tw_error *err);

/* ---- policies and plans ---------------------------------------------- */

/* Stores policy NAME's BODY (JSON text), replacing one of that name. */
enum tw_err tw_store_policy_put(struct tw_store *st, const char *name, const char *body,
                                struct tw_error *err);
/* Policy NAME's body (*BODY malloc'd, free()); TW_ENOENT if none. */
enum tw_err tw_store_policy_get(struct tw_store *st, const char *name, char **body,
                                struct tw_error *err);
/* A plan of policy POLICY over [FROM, TO) (RFC 3339) with BODY; *ID its
 * id, for tw_store_action_new.plan_id. */
enum tw_err tw_store_plan_add(struct tw_store *st, const char *policy, const char *from,
                              const char *to, const char *body, int64_t *id,
                              struct tw_error *err);

/* ---- kept verdicts and the latest results ---------------------------- */

/* One latest result (per VM, target and profile) with its kept verdict.
 * CURRENT: the verdict was judged under BASIS against the VM's newest
 * report, so it stands as it is; otherwise (judged under other rules or
 * data, against an older inventory, or not at all) it must be judged
 * again.  KIND and SKUS are NULL when there is no kept verdict. */
typedef enum tw_err (*tw_store_verdict_fn)(void *arg, int64_t vm_id, const char *kind,
                                           const char *skus, bool current);
/* Every VM's latest results through FN, by VM id, in one read snapshot;
 * *N_VMS gets the number of VMs in that snapshot (those without results
 * included).  An error returned by FN stops the walk with it. */
enum tw_err tw_store_fleet_verdicts(struct tw_store *st, const char *basis,
                                    tw_store_verdict_fn fn, void *arg, size_t *n_vms,
                                    struct tw_error *err);

/* A VM with latest results whose kept verdicts don't stand under a basis
 * (or were never kept), and its newest report when that was read. */
struct tw_store_stale {
    int64_t vm_id;
    char last_report_id[64];
};
/* Up to MAX such VMs under BASIS with ids above AFTER, by id; *ROWS
 * malloc'd (free()).  A result judged under BASIS against the VM's newest
 * report that could not be judged is not listed again (it is shown as an
 * error when read). */
enum tw_err tw_store_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                    size_t max,
                                    struct tw_store_stale **rows, size_t *n,
                                    struct tw_error *err);
/* A verdict judged again, to be kept beside its latest result. */
struct tw_store_kept {
    int64_t vm_id;
    const char *last_report_id; /* the VM's newest report: the inventory judged against */
    const char *target;         /* the latest row's key ("": any target); NULL: every
                                 * row of the VM */
    const char *profile;
    const char *result_id;      /* the record judged (a newer one since is left alone) */
    const char *kind;           /* NULL: could not be judged */
    const char *skus;           /* as tw_store_verdict.skus */
};
/* Keeps ROWS[0..N) under BASIS in one transaction.  A row whose VM has
 * reported again since (its newest report is no longer LAST_REPORT_ID) or
 * whose latest result is no longer RESULT_ID is left as it is. */
enum tw_err tw_store_verdicts_keep(struct tw_store *st, const char *basis,
                                   const struct tw_store_kept *rows, size_t n,
                                   struct tw_error *err);

/* A latest result on a page of them: its VM and its record's id. */
struct tw_store_latest_ref {
    int64_t vm_id;
    char result_id[64];  /* the record's UUID */
    bool first;          /* the VM's first latest result (where its VM-level errors go) */
};
/* A page of the fleet's latest results ordered by VM id, target and
 * profile (PG's filters as tw_store_vm_ids_page: the VM's name and resource
 * group, SKU: VMs with such a disk); *ROWS malloc'd (free()), *MORE whether
 * rows follow. */
enum tw_err tw_store_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                                 struct tw_store_latest_ref **rows, size_t *n, bool *more,
                                 struct tw_error *err);

/* ---- VM sizes (ARM's Resource SKUs, cached) --------------------------- */

/* A VM size of a region and its limits as a JSON text of core/vmcap's
 * making (the store keeps the text as it is). */
struct tw_store_vm_size {
    char name[64];   /* Standard_D8s_v3 */
    char *caps;      /* NUL-terminated; malloc'd by tw_store_vm_sizes_get */
};
/* Replaces REGION's sizes with ROWS[0..N) in one transaction, fetched at
 * FETCHED_AT (RFC 3339) from SOURCE ("arm ..."). */
enum tw_err tw_store_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                                  const char *fetched_at, const struct tw_store_vm_size *rows,
                                  size_t n, struct tw_error *err);
/* REGION's cached sizes by name; *ROWS malloc'd (tw_store_vm_sizes_free),
 * SOURCE and FETCHED_AT (may be NULL) what they came from and when.
 * TW_ENOENT when none are cached for REGION. */
enum tw_err tw_store_vm_sizes_get(struct tw_store *st, const char *region,
                                  struct tw_store_vm_size **rows, size_t *n, char *source,
                                  size_t source_len, char *fetched_at, size_t fetched_len,
                                  struct tw_error *err);
void tw_store_vm_sizes_free(struct tw_store_vm_size *rows, size_t n); /* NULL allowed */

/* Checks the store's own consistency (SQLite: PRAGMA integrity_check);
 * TW_EIO with the first problem found. */
enum tw_err tw_store_check(struct tw_store *st, struct tw_error *err);

/* ---- the fleet's counts for /metrics (store_stats.c) ----------------- */

/* One group of a count: a VM size (TIER ""), or a disk SKU and its tier
 * (TIER "" when not known). */
#define TW_STORE_COUNTS_MAX 256 /* groups kept; the last one is "other" past that */
struct tw_store_count {
    char key[64];
    char tier[16];
    int64_t n;
};
struct tw_store_fleet_counts {
    struct tw_store_count *vm_sizes;  /* by size, ascending; malloc'd */
    size_t n_vm_sizes;
    struct tw_store_count *disk_skus; /* attached disks by SKU then tier; malloc'd */
    size_t n_disk_skus;
    int64_t vms;                      /* all VMs (the sum of vm_sizes) */
    int64_t vms_silent;               /* VMs whose newest report was received before the instant */
};
/* The counts, in one read transaction; free with tw_store_fleet_counts_free
 * (also on an error).  SILENT_BEFORE_MS: milliseconds since 1970. */
enum tw_err tw_store_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                                  struct tw_store_fleet_counts *out, struct tw_error *err);
void tw_store_fleet_counts_free(struct tw_store_fleet_counts *c); /* NULL allowed */

/* ---- savings: disk attributes and the fleet's streams (store_savings.c) -- */

/* What ARM says of a disk that a report can't: whether it is shared, has
 * on-demand bursting, and its state.  Unknown until an ARM sync records it
 * (the columns are NULL in the store then). */
enum tw_tri { TW_TRI_UNKNOWN = 0, TW_TRI_NO, TW_TRI_YES };
struct tw_store_disk_attrs {
    int64_t max_shares;     /* ARM's maxShares; 0 unknown; > 1: a shared disk */
    enum tw_tri bursting;   /* on-demand bursting (burstingEnabled) */
    char disk_state[32];    /* ARM's diskState ("Attached", "Reserved", ...); "" unknown */
};

/*
 * Records disk DISK_ID's attributes A as SOURCE saw them at OBSERVED_AT
 * (RFC 3339): they replace the stored ones unless those were observed
 * later (an older observation arriving late changes nothing; *APPLIED,
 * may be NULL, says which).  Unknown fields of A are stored as unknown.
 * TW_ENOENT for no such disk, TW_EPARSE for a bad time, TW_EINVAL for a
 * negative max_shares.
 */
enum tw_err tw_store_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                        const struct tw_store_disk_attrs *a,
                                        const char *observed_at, enum tw_obs_source source,
                                        bool *applied, struct tw_error *err);

/* One attached disk, slim (no struct tw_disk: a fleet's worth must fit). */
struct tw_store_sv_disk {
    int64_t id;
    char name[128];
    enum tw_disk_role role;
    int lun;                       /* -1 OS disk or unknown */
    char sku[32];
    char tier[16];                 /* "" unknown */
    int64_t size_gib;
    struct tw_store_disk_attrs attrs;
    char original_sku[32];         /* the SKU tierwise's first downgrade found on it, which
                                    * an upgrade restores (disk_originals); "" none */
    char original_policy[65];      /* the policy of the action that recorded it; "" none */
};

/* One power-state observation (the state's text as stored). */
struct tw_store_sv_power {
    int64_t at_ms;                 /* milliseconds since 1970 */
    char state[32];
};

/* One change of a disk's SKU or tier (the first observation of a disk is
 * none: there was nothing before it). */
struct tw_store_sv_change {
    int64_t disk_id;
    int64_t at_ms;
    char sku[32];
    char tier[16];
};

/* A VM with attached disks and what savings needs of it.  The arrays are
 * the cursor's and valid until the next tw_store_savings_next. */
struct tw_store_sv_vm {
    int64_t id;
    char name[128];
    char resource_group[128];
    char subscription_id[64];
    char location[64];
    char vm_size[64];
    size_t n_tags;
    const struct tw_tag *tags;     /* in key order */
    char power_state[32];          /* current, "" never observed */
    int64_t power_state_ms;        /* when; 0 never */
    size_t n_disks;
    const struct tw_store_sv_disk *disks;    /* by position, LUN, name */
    size_t n_power;
    const struct tw_store_sv_power *power;   /* the span's observations by time, the one
                                              * in force at its start first */
    size_t n_changes;
    const struct tw_store_sv_change *changes; /* the span's SKU changes by disk, time */
};

struct tw_store_sv_cursor;

/*
 * Opens a read-only walk, in one read snapshot, over every VM with
 * attached disks by VM id, with each VM's power states and its disks' SKU
 * changes in [FROM_MS, TO_MS) (the power state in force at FROM_MS
 * included).  Memory is one VM's worth at a time.  Close with
 * tw_store_savings_close (also after an error).
 */
enum tw_err tw_store_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                  struct tw_store_sv_cursor **out, struct tw_error *err);
/* The next VM into *VM (*DONE true, VM untouched, past the last). */
enum tw_err tw_store_savings_next(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm,
                                  bool *done, struct tw_error *err);
void tw_store_savings_close(struct tw_store_sv_cursor *c); /* NULL allowed */

/* The currencies the stored price books are in, sorted (up to MAX into
 * OUT; *N gets how many there are, which may be more than MAX). */
enum tw_err tw_store_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max,
                                          size_t *n, struct tw_error *err);

/* ---- power states of one VM ------------------------------------------ */

/* VM VM_ID's power states in [FROM_MS, TO_MS), by time, the one in force
 * at FROM_MS first, into *OUT (malloc'd, free(); NULL and *N 0 when none,
 * also for a VM with no attached disk).  Read through the savings walk
 * (store_power.c): for one VM, not the fleet. */
enum tw_err tw_store_vm_power_states(struct tw_store *st, int64_t vm_id, int64_t from_ms,
                                     int64_t to_ms, struct tw_store_sv_power **out, size_t *n,
                                     struct tw_error *err);

/* ---- the fleet from ARM (schema 5) ----------------------------------- */

/* One disk as ARM lists it, attached to the VM it is put with. */
struct tw_store_arm_disk {
    struct tw_disk disk;           /* name, role, lun, sku, size_gib, tier, caching,
                                    * managed_disk_id = the ARM id (required) */
    struct tw_store_disk_attrs attrs;
    const char *last_ownership_update; /* RFC 3339; NULL or "" unknown */
};

/* One VM as ARM shows it. */
struct tw_store_arm_vm {
    const struct tw_vm *vm;        /* resource_id, subscription, group and name required */
    const char *power_state;       /* "running", "deallocated", ...; NULL or "" unknown */
    size_t n_disks;
    const struct tw_store_arm_disk *disks;
    /* Disks the VM's storage profile names that this look did not read
     * (outside the listed scope, their GET failed): a stored disk of the
     * VM with one of these ARM ids (any case) is left as it is, not
     * detached.  NULL/0: none. */
    const char *const *keep_ids;
    size_t n_keep;
};

/* What a put changed, one item at a time (for `tierwise sync --json`). */
enum tw_store_arm_what {
    TW_ARM_CH_VM_NEW, TW_ARM_CH_DISK_NEW, TW_ARM_CH_SKU, TW_ARM_CH_POWER, TW_ARM_CH_ATTRS,
    TW_ARM_CH_DETACHED, TW_ARM_CH_VM_FIELDS,
    TW_ARM_CH_SKIPPED              /* a disk not stored: its row would take another's
                                    * identity (TO says why); the VM's other disks are */
};
const char *tw_store_arm_what_name(enum tw_store_arm_what w); /* "vm_new", "disk_new", "sku", ... */
struct tw_store_arm_change {
    enum tw_store_arm_what what;
    int64_t vm_id, disk_id;        /* disk_id 0 for VM changes */
    const char *vm, *disk;         /* names */
    const char *from, *to;         /* SKU or power state before and after; "" none */
};

/*
 * Records VM V as ARM saw it at OBSERVED_AT (RFC 3339) in one transaction:
 * the VM is matched to the store's by its resource id (case-insensitive),
 * else by subscription, group and name (an agent's report without an id),
 * whichever came first; a VM no agent ever reported is created (no report:
 * last_report_at ""), and its name, size, location and tags follow ARM's.
 * Each disk is matched by its managed disk id, else by name on the VM, and
 * created when new; a SKU, tier or size that differs from the newest
 * history row goes to the SKU history with source arm; the attributes are
 * observed (tw_store_disk_attrs_observe's rule); the power state is
 * observed with source arm when given; disks the store has attached to the
 * VM that ARM no longer lists are detached.  Each change goes to FN (may
 * be NULL).  *VM_ID (may be NULL) gets the VM's id.
 */
enum tw_err tw_store_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                                const char *observed_at,
                                void (*fn)(void *arg, const struct tw_store_arm_change *c),
                                void *arg, int64_t *vm_id, struct tw_error *err);

/* The VM whose ARM resource id is ID (any case), or TW_ENOENT. */
enum tw_err tw_store_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                       struct tw_error *err);
/* VM NAME (any case) into *VM_ID; TW_ENOENT none, TW_EINVAL when several
 * VMs have that name (the message lists their resource groups). */
enum tw_err tw_store_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                                struct tw_error *err);

/* ---- drift (schema 5) ------------------------------------------------- */

/* A disk running below the SKU its policy requires while its VM runs. */
struct tw_store_drift_row {
    int64_t disk_id, vm_id;
    char vm[128], disk[128];
    char sku[32], required_sku[32];
    char policy[65];
    char since[40];                /* RFC 3339 UTC */
    char ended_at[40];             /* "" while open */
};
/* Opens a drift of DISK_ID (or keeps the open one, updating SKU): *STARTED
 * (may be NULL) true when it is new (the caller logs a line then). */
enum tw_err tw_store_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                                bool *started, struct tw_error *err);
/* Ends the open drift of DISK_ID at AT (nothing when none is open;
 * *ENDED, may be NULL, says). */
enum tw_err tw_store_drift_close(struct tw_store *st, int64_t disk_id, const char *at,
                                 bool *ended, struct tw_error *err);
/* The drifts (OPEN_ONLY: those not ended) by since, into *ROWS (free()). */
enum tw_err tw_store_drift_list(struct tw_store *st, bool open_only,
                                struct tw_store_drift_row **rows, size_t *n,
                                struct tw_error *err);
/* Brings the open drifts to ROWS[0..N) in one transaction: each is opened
 * or goes on (its first since kept; STARTED[i], may be NULL, true when it
 * is new), and every other open drift ends at AT, into *ENDED (malloc'd,
 * free(); the rows as they were, ENDED_AT set) and *N_ENDED.  Nothing is
 * written when it fails (STARTED all false then). */
enum tw_err tw_store_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                                size_t n, const char *at, bool *started,
                                struct tw_store_drift_row **ended, size_t *n_ended,
                                struct tw_error *err);

/* VM VM_ID's power states observed at or before BEFORE_MS, newest first
 * (by time, then the later stored first), at most MAX (1 ..
 * TW_STORE_PAGE_MAX), into *OUT (malloc'd, free(); NULL and *N 0 when
 * none): how drift finds when a running VM last started, a page at a time
 * (the next page: BEFORE_MS the oldest one's time - 1). */
enum tw_err tw_store_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                     size_t max, struct tw_store_sv_power **out, size_t *n,
                                     struct tw_error *err);

/* The names of the stored policies, sorted (*NAMES malloc'd, each and
 * the array free()). */
enum tw_err tw_store_policy_names(struct tw_store *st, char ***names, size_t *n,
                                  struct tw_error *err);

/* ---- the monthly report's reads (store_report.c) ---------------------- */

/* A disk's SKU row: the one in force at an instant, or a change. */
struct tw_store_rp_sku {
    int64_t disk_id;
    int64_t at_ms;                 /* observed, ms since 1970 */
    int64_t size_gib;
    uint16_t sku, tier;            /* indexes into the read's strs; tier 0 ("") unknown */
};

/* A done disk action (downgrade or upgrade), slim: a month of a large
 * fleet's actions must fit.  SKUs and policies are indexes into the
 * read's string table (tw_store_report.strs). */
struct tw_store_rp_action {
    int64_t id, vm_id, disk_id;
    int64_t verified_ns;           /* when it moved to verified (the action log), exact */
    uint16_t from_sku, to_sku, policy; /* indexes into strs; 0 is "" */
    bool downgrade;                /* else an upgrade */
    bool before;                   /* the disk's last done one before the span */
};

/* Any action of a span (the report's week): what a timeline marks. */
struct tw_store_rp_mark {
    int64_t id, vm_id, disk_id;
    int64_t at_ns;                 /* verified instant when it has one, else its due time,
                                    * else when it was last moved */
    char kind[12];
    char state[12];
    uint16_t to_sku;               /* an index into strs */
};

/* A stored price book (every refresh and import is kept). */
struct tw_store_rp_book {
    int64_t id;
    char region[48];
    char source[256];
    char fetched_at[40];
    int64_t fetched_ns;            /* fetched_at as an instant; INT64_MIN when it does not read */
};

/* What the monthly report reads besides the fleet walk, in one read
 * snapshot.  Every array is malloc'd; free with tw_store_report_free. */
struct tw_store_report {
    struct tw_store_rp_sku *at_start;   /* per disk, the SKU in force at FROM (by disk) */
    size_t n_at_start;
    struct tw_store_rp_sku *changes;    /* history rows in [FROM, TO) by disk, time, id */
    size_t n_changes;
    struct tw_store_rp_action *actions; /* done disk actions verified in [FROM, TO), and each
                                         * disk's last done one before FROM (before true),
                                         * by disk, verified time, id */
    size_t n_actions;
    struct tw_store_rp_mark *marks;     /* every action of [MARK_FROM, MARK_TO) by VM, time */
    size_t n_marks;
    struct tw_store_rp_book *books;     /* CURRENCY's books by region, fetched time, id */
    size_t n_books;
    int64_t *later;                     /* disks first seen at or after TO (by id): not
                                         * there in the span */
    size_t n_later;
    char (*strs)[65];                   /* the SKU, tier and policy names the rows use;
                                         * strs[0] is "" */
    size_t n_strs;
};

/* Reads the month's rows for the monthly report (instants in ns since
 * 1970; [FROM_NS, TO_NS) the month, [MARK_FROM_NS, MARK_TO_NS) its week)
 * into *OUT (free with tw_store_report_free, also after an error). */
enum tw_err tw_store_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                                 int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                                 struct tw_store_report *out, struct tw_error *err);
void tw_store_report_free(struct tw_store_report *r); /* NULL allowed */

/* Stored book ID's items (a JSON array as text, *ITEMS malloc'd
 * NUL-terminated); TW_ENOENT if none. */
enum tw_err tw_store_report_book_items(struct tw_store *st, int64_t id, char **items,
                                       size_t *len, struct tw_error *err);

/* One read snapshot for everything between (the report's reads, its fleet
 * walk, the verdicts and the policies' walk: each nests in it); END
 * releases it.  END is safe after a failed BEGIN. */
enum tw_err tw_store_report_begin(struct tw_store *st, struct tw_error *err);
void tw_store_report_end(struct tw_store *st);

/* The report's fleet walk: as tw_store_savings_open/next (every VM with
 * attached disks by id, its disks by position, LUN, name, those detached
 * after FROM_MS among them; its power states
 * in [FROM_MS, TO_MS) with the one in force at FROM_MS first) without the
 * SKU changes (the report reads the month's history itself), and each
 * disk's ARM id.  VM's arrays are the cursor's, valid until the next call. */
struct tw_store_rp_vm {
    struct tw_store_sv_vm vm;      /* n_changes 0 */
    const char *const *resource_ids; /* per disk, "" unknown */
    const int64_t *detached_ms;    /* per disk, 0 while attached */
};
struct tw_store_rp_cursor;
enum tw_err tw_store_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                       int64_t vm_id, struct tw_store_rp_cursor **out,
                                       struct tw_error *err); /* VM_ID > 0: that VM alone */
enum tw_err tw_store_report_fleet_next(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                       bool *done, struct tw_error *err);
void tw_store_report_fleet_close(struct tw_store_rp_cursor *c); /* NULL allowed */
/* The disks attached now (to size the report's rows). */
enum tw_err tw_store_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                     struct tw_error *err); /* and those detached after FROM_MS */

#endif
