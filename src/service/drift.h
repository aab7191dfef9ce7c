/*
 * drift.h - a VM running on the wrong disk.
 *
 * A disk drifts when its VM runs (its newest power state at NOW, from an
 * agent's report or ARM's instance view, is running or starting) while the
 * disk is on a SKU below the one its policy requires while running: the
 * disk's original SKU, recorded by tierwise's first downgrade
 * (tw_store_disk_original_set), when a policy covering the disk (matched
 * by that original SKU) has require_original_before_start.  A failed or
 * skipped upgrade, or a VM started in the portal mid-window.
 *
 * Its since is the later of the VM's start (the first running observation
 * after its last observation in any other state) and the disk's change to
 * the SKU it is on (the first row of the last run of its SKU history on
 * that SKU).
 *
 * One pass over the fleet: the savings walk (tw_store_savings_open over
 * [NOW, NOW + 1 ms): each VM's disks with their original SKU and the power
 * state in force at NOW) finds the candidates, a running VM's disk with an
 * original SKU; only for those are the disk's SKU history (whose newest row
 * is its SKU now, whichever source saw it) and the VM's power states read
 * back.  The judgement itself is the pure functions below.
 *
 * `tierwise drift`, GET /api/v1/drift and the server's drift job run this.
 */
#ifndef TW_SERVICE_DRIFT_H
#define TW_SERVICE_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/policy.h"
#include "store/store.h"

/* One drifting disk; the names are the API's field names. */
struct tw_drift {
    int64_t vm_id, disk_id;
    char vm[128], disk[128];
    char sku[32];                  /* the SKU it is on */
    char required_sku[32];         /* the SKU its policy requires while the VM runs */
    char policy[TW_POLICY_NAME_MAX];
    int64_t since_ms;              /* milliseconds since 1970, to the second */
    char since[40];                /* RFC 3339 UTC, "2026-12-05T08:02:11Z" */
};

struct tw_drift_sink {
    enum tw_err (*drift)(void *arg, const struct tw_drift *d); /* an error stops the run */
    void *arg;
};

/* Every disk drifting at NOW_MS (milliseconds since 1970) to SINK, by VM
 * id then the disk's position; *N_OUT (may be NULL) how many.  The
 * policies judged by are POLICIES[0..N) (the caller's), or, when N is 0,
 * every policy the store holds (tw_store_policy_names), parsed: a stored
 * policy that no longer parses is an error naming it. */
enum tw_err tw_svc_drift_list(struct tw_store *st, const struct tw_policy *const *policies,
                              size_t n, int64_t now_ms, const struct tw_drift_sink *sink,
                              size_t *n_out, struct tw_error *err);

/* A line to log (no newline), "drift started: ..." or "drift ended: ...". */
typedef void (*tw_drift_log_fn)(void *arg, const char *line);

struct tw_drift_update {
    size_t open;                   /* disks drifting now */
    size_t started, ended;         /* drifts opened and ended by this update */
};

/*
 * Brings the store's drift rows to what is drifting at NOW_MS: a new drift
 * is opened (LOG gets "drift started: VM v disk d runs on StandardSSD_LRS,
 * its policy dev-weekends requires Premium_LRS (since
 * 2026-12-05T08:02:11Z)"), an open one goes on with its first since, and
 * an open one no longer drifting is ended at NOW_MS (LOG gets "drift
 * ended: VM v disk d is no longer below Premium_LRS while running (drift
 * since ..., ended ...)").  LOG may be NULL; *OUT (may be NULL) the counts.
 */
enum tw_err tw_svc_drift_update(struct tw_store *st, const struct tw_policy *const *policies,
                                size_t n, int64_t now_ms, tw_drift_log_fn log, void *log_arg,
                                struct tw_drift_update *out, struct tw_error *err);

/* D as the API's object: {"vm", "disk", "sku", "required_sku", "since",
 * "policy", "vm_id", "disk_id"}; a new reference, NULL out of memory. */
struct json_t *tw_drift_to_json(const struct tw_drift *d);

/* tw_svc_drift_list as the document GET /api/v1/drift answers and
 * `tierwise drift --json` prints, {"drift": [...], "count": N}: a new
 * NUL-terminated text (free()) dumped with jansson's FLAGS; *COUNT (may
 * be NULL) the drifts. */
enum tw_err tw_svc_drift_json(struct tw_store *st, const struct tw_policy *const *policies,
                              size_t n, int64_t now_ms, size_t flags, char **out,
                              size_t *count, struct tw_error *err);

/* ---- the judgement (pure) ---- */

/* Whether SKU is below REQUIRED: not the same SKU (any case) and not known
 * to be at or above it (Standard HDD < Standard SSD < Premium SSD <
 * Premium SSD v2 < Ultra; a SKU tierwise does not know is below, so that
 * an unknown disk under a running VM is said, not passed over). */
bool tw_drift_sku_below(const char *sku, const char *required);

/* Disk D's policy among POLICIES[0..N): the policy of the action that
 * recorded D's original (D->original_policy) when it is one of them (as
 * vm start judges the disk), else the first that covers D by its original
 * SKU; returned when it requires the original before start, else NULL
 * (also when D has no original). */
const struct tw_policy *tw_drift_policy_for(const struct tw_policy *const *policies, size_t n,
                                            const struct tw_store_sv_vm *vm,
                                            const struct tw_store_sv_disk *d);

/* Whether a state counts as running (running, starting). */
bool tw_drift_running(const char *state);

/* Finding a running VM's start over its power states read newest first,
 * one page at a time: tw_drift_start_feed each page in turn while it says
 * true (more is needed and LAST_PAGE was false). */
struct tw_drift_start {
    bool found;                    /* the start is known: START_MS */
    bool running;                  /* the newest state is running */
    bool seen;                     /* a state was fed */
    int64_t start_ms;              /* the oldest running state so far */
};
bool tw_drift_start_feed(struct tw_drift_start *s, const struct tw_store_sv_power *newest_first,
                         size_t n, bool last_page);

/* From a disk's SKU history ROWS[0..N) (oldest first): its SKU now (the
 * newest row's) into SKU (32 bytes) and the time of its change to that SKU
 * (the first row of the newest run on it, any case) into *SINCE_MS.  False
 * when N is 0 or a row's time does not read. */
bool tw_drift_sku_since(const struct tw_store_sku_hist_row *rows, size_t n, char *sku,
                        int64_t *since_ms);

#endif
