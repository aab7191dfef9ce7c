/*
 * exec.h - the executor: carries out the store's actions (tier switches
 * of disks, deallocations and starts of VMs) against ARM, crash-safe.
 *
 * Each action moves through the store's state machine, planned -> checked
 * -> sent -> verified -> done | skipped | failed, under a claim
 * (tw_store_action_claim, renewed while an operation is waited on), so a
 * crash at any point resumes where it was and nothing is sent twice:
 *
 *  - planned: the disk and its VM are read from ARM and checked (the VM
 *    deallocated, disk state Reserved, or the disk Unattached; the disk on
 *    the action's from_sku; no update in progress; not shared; not Frozen;
 *    no on-demand bursting; for an upgrade to Premium, and for a downgrade
 *    from Premium (its way back), a VM size that takes Premium).  A failed check skips the action with the reason; a disk
 *    already on to_sku is done without a PATCH.  A downgrade whose VM is
 *    still running waits (its due moved one tick later) until its
 *    upgrade's due time, then is skipped "vm_not_deallocated".
 *  - checked: the original SKU is recorded (first downgrade; forgotten
 *    when the downgrade fails with the disk still on it), the action moves
 *    to sent (counting the attempt) and only then is the PATCH sent; the
 *    operation URL is kept.  An upgrade goes to the recorded original
 *    whatever its to_sku says.
 *  - sent: with an operation URL it is polled; without one the disk is
 *    read: on (or moving to) to_sku, go on to verify; on from_sku with
 *    nothing in progress, the PATCH is sent again (the one case).  A VM
 *    action without one reads the VM: on its way (starting, deallocating,
 *    stopping) it is verified, not sent again.
 *  - verified: tw_arm_disk_verify said so; then done (the SKU and the
 *    disk's attributes observed in the store with source arm, a VM's power
 *    state likewise; an upgrade back to the original clears it).
 *
 * ARM refusals: throttled or busy leave the action where it is (retried
 * next tick); a conflict, a refusal or a refused type change fail it with
 * ARM's code and message.
 *
 * Disks of one VM are worked one at a time; VMs in parallel, one thread
 * per VM, each with its own store handle (opened by path) and ARM client.
 *
 * No HTTP here beyond the ARM client: the CLI (apply, vm stop|start) and
 * the server (POST /api/v1/actions, serve --scheduler) both call this.
 */
#ifndef TW_SERVICE_EXEC_H
#define TW_SERVICE_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/arm.h"
#include "core/err.h"
#include "core/vmcap.h"
#include "service/plan.h"
#include "service/vmsizes.h"
#include "store/store.h"

/* ---- the ARM calls, as a table (a test stands a fake in) ------------- */

/*
 * One client per thread: OPEN makes one (*CTX), CLOSE frees it; the other
 * members are the calls of azure/arm.h of the same names on that client.
 * tw_exec_arm_real gives the table over the real client.
 */
struct tw_exec_arm_ops {
    enum tw_err (*open)(void *arg, void **ctx, struct tw_error *err);
    void (*close)(void *ctx);
    enum tw_err (*disk_get)(void *ctx, const char *id, struct tw_arm_disk *d,
                            struct tw_error *err);
    enum tw_err (*vm_get)(void *ctx, const char *id, struct tw_arm_vm *vm,
                          struct tw_error *err);
    enum tw_err (*disk_set_sku)(void *ctx, const char *id, const char *sku,
                                struct tw_arm_op *op, struct tw_error *err);
    enum tw_err (*vm_deallocate)(void *ctx, const char *id, struct tw_arm_op *op,
                                 struct tw_error *err);
    enum tw_err (*vm_start)(void *ctx, const char *id, struct tw_arm_op *op,
                            struct tw_error *err);
    enum tw_err (*op_poll)(void *ctx, struct tw_arm_op *op, bool *done, struct tw_error *err);
    enum tw_err (*disk_verify)(void *ctx, const char *id, const char *sku, bool *ok,
                               struct tw_arm_disk *d, struct tw_error *err);
    const struct tw_arm_error *(*last_error)(void *ctx);
};

/* What the real table's OPEN needs: each thread's tw_arm_new(OPTS, CRED,
 * PACER); CRED and PACER are shared (thread-safe) and outlive the run. */
struct tw_exec_arm_real {
    struct tw_arm_opts opts;
    struct tw_arm_cred *cred;
    struct tw_arm_pacer *pacer;    /* NULL: no pacing */
};
extern const struct tw_exec_arm_ops tw_exec_arm_real_ops; /* arg: struct tw_exec_arm_real * */

/* ---- one run ---------------------------------------------------------- */

/* One action's outcome in this run, to the sink. */
struct tw_exec_result {
    const struct tw_store_action_row *action; /* as it was read at the start */
    const char *state;             /* its state after this run (dry run: what it would be) */
    const char *outcome;           /* "done", "skipped", "failed", "waiting" (a downgrade whose
                                    * VM runs, due moved later), "retry" (ARM busy or
                                    * throttled, or an operation still running), "held"
                                    * (another executor's claim), "would_send" (dry run),
                                    * "nothing_to_send" (dry run: already on the target) */
    const char *reason;            /* one sentence; "" none */
    /* what is (or, in a dry run, would be) sent; NULL when nothing */
    const char *method;            /* "PATCH", "POST" */
    const char *url;               /* ARM_URL + resource id + api-version */
    const char *body;              /* "{\"sku\":{\"name\":\"Standard_LRS\"}}", "" for a POST */
    bool already;                  /* the disk was on the target already: no PATCH */
};

/* Called once per action, from the VM threads under one lock. */
struct tw_exec_sink {
    void (*result)(void *arg, const struct tw_exec_result *r);
    void *arg;
};

struct tw_exec_opts {
    const char *db_path;           /* each VM thread opens its own handle here */
    const struct tw_exec_arm_ops *arm;
    void *arm_arg;                 /* to ARM->open */
    const char *arm_url;           /* for the URLs shown (dry run and results) */
    const char *owner;             /* claim owner prefix; NULL or "": "HOST:PID:TAG"; each run
                                    * adds ":N" (a counter of the process's runs) so two
                                    * runs of one process never share a claim */
    int parallel;                  /* VMs at once; 0: 4 */
    int64_t lease_ms;              /* a claim's length (renewed while waiting); 0: 10 min
                                    * (outlives one ARM call's 90 s retry budget plus a
                                    * poll's wait, see exec.c) */
    int64_t tick_ms;               /* the scheduler's period: a waiting downgrade's due is
                                    * moved this much later; 0: 60 s */
    long poll_ms;                  /* between polls of an operation; 0: 2000 */
    long op_timeout_ms;            /* waiting on one operation in one run; 0: 10 min (the
                                    * action stays sent and is resumed next run) */
    bool dry_run;                  /* nothing written to ARM or the store */
    bool dry_after_deallocate;     /* dry run: a deallocation of the VM comes first in
                                    * this run, so a downgrade whose disk is still
                                    * attached would be sent (after it), not wait */
    const struct tw_vmcap_table *caps;  /* bundled VM caps (Premium support); NULL none */
    struct tw_svc_vmsizes *arm_sizes;   /* ARM's sizes; NULL none */
    const struct tw_exec_sink *sink;    /* NULL: none */
    volatile sig_atomic_t *stop;   /* non-zero: finish the current step, then stop; NULL */
};

struct tw_exec_summary {
    int64_t actions;               /* handed to the run */
    int64_t done, skipped, failed, waiting, retry, held, would_send;
    int64_t nothing_to_send;       /* dry run: already on the target */
};

/*
 * Runs ROWS[0..N) (the store's rows; in a dry run they may be rows that
 * are not stored, with id 0, disk_resource_id and vm_resource_id set):
 * grouped by VM, each VM's actions in the order given, VMs in parallel.
 * An executing run re-reads each action after claiming it (the row given
 * may be stale).  Errors of one action are its outcome (failed or retry),
 * never the run's: the return is TW_OK unless the run could not start (no
 * store, no ARM client: that error) or was stopped by O->stop (TW_EIO,
 * "stopped"; what was in flight stays where it was, resumed next run).
 */
enum tw_err tw_exec_run(const struct tw_exec_opts *o, const struct tw_store_action_row *rows,
                        size_t n, struct tw_exec_summary *out, struct tw_error *err);

/* The due actions of the store at the system clock's now (tw_store_actions_due,
 * max MAX, 0 all) read into rows and run.  *OUT as tw_exec_run. */
enum tw_err tw_exec_run_due(const struct tw_exec_opts *o, size_t max,
                            struct tw_exec_summary *out, struct tw_error *err);

/* ---- vm stop / vm start (exec_vm.c) ----------------------------------- */

/* A disk's target for vm stop: the SKU it moves to while deallocated. */
struct tw_exec_stop_disk {
    int64_t disk_id;
    const char *to_sku;            /* NULL: leave the disk as it is */
    const char *policy;            /* the policy that chose it (recorded on the actions;
                                    * disks[0]'s on the deallocation); NULL none */
};

/*
 * vm stop: records and runs a "deallocate" action of VM_ID (waits for the
 * operation and verifies the power state), then a "downgrade" of each of
 * DISKS[0..N) (only those with a to_sku differing from the disk's SKU),
 * one at a time, each verified.  In a dry run nothing is recorded: the
 * rows are made in memory and checked against ARM.
 */
enum tw_err tw_exec_vm_stop(const struct tw_exec_opts *o, int64_t vm_id,
                            const struct tw_exec_stop_disk *disks, size_t n,
                            struct tw_exec_summary *out, struct tw_error *err);
/*
 * vm start: an "upgrade" of every disk of VM_ID with an original SKU
 * recorded back to it, each verified, then a "start" of the VM.  For each
 * disk that could not be restored, the policy of the downgrade that
 * recorded its original (a stored policy's require_original_before_start;
 * REQUIRE_ORIGINAL when that action has none or it is not stored) decides:
 * when one requires it, the VM is not started: TW_EPERM with the disks and
 * why.  *INFO (may be NULL): whether the VM was started and why not (or
 * what it was started without).
 */
struct tw_exec_start_info {
    bool started;                  /* executing: the start was verified */
    char why[600];                 /* not started: why; started: the disks left, "" none */
};
enum tw_err tw_exec_vm_start(const struct tw_exec_opts *o, int64_t vm_id, bool require_original,
                             struct tw_exec_summary *out, struct tw_exec_start_info *info,
                             struct tw_error *err);

/* ---- one tick of the scheduler (exec_tick.c) -------------------------- */

/*
 * What `tierwise apply`, POST /api/v1/actions and `serve --scheduler` do:
 * the actions a policy needs now are planned (tw_svc_plan_run over [now -
 * 1 day, now + 1 day) by the system clock), those due by now + one tick
 * recorded (tw_svc_plan_record: idempotent, a second tick records nothing
 * new), then the policy's due actions run (tw_exec_run; in flight ones
 * resumed).  With PLAN_JSON a saved plan (tierwise.plan/1) stands for the
 * policy: its actions due in [now - 1 day, now + one tick] are resolved
 * by name in the store, recorded and run (older ones are counted expired,
 * as the policy's path plans from now - 1 day).  In a dry run nothing is recorded: the due actions
 * are rows in memory (not stored) checked against ARM.
 */
struct tw_exec_tick {
    const struct tw_exec_opts *exec;   /* db_path, ARM, dry_run, tick_ms, sink ... */
    struct tw_plan_opts plan;          /* policy, cat, caps, zone ...; the period is the tick's */
    const char *plan_json;             /* a saved plan instead of PLAN.policy; NULL none */
    size_t plan_len;
};
struct tw_exec_tick_summary {
    int64_t planned;                   /* actions of the plan due by now + one tick */
    int64_t recorded;                  /* of which new in the store (0 in a dry run) */
    int64_t expired;                   /* a saved plan's actions due more than a day ago:
                                        * not recorded, not run */
    struct tw_exec_summary run;
    char policy[TW_POLICY_NAME_MAX];
};
enum tw_err tw_exec_tick_run(const struct tw_exec_tick *t, struct tw_exec_tick_summary *out,
                             struct tw_error *err);

/* A plan's action as an audit-log row that is not stored (id 0, state
 * "planned"): names and ARM ids read from ST.  Free ROW->operation_url. */
enum tw_err tw_exec_row_from_plan(struct tw_store *st, const char *policy,
                                  const struct tw_plan_action *a, struct tw_store_action_row *row,
                                  struct tw_error *err);

/* ---- JSON (exec_json.c) ----------------------------------------------- */

struct json_t;
/* One action of the audit log as the API and `tierwise actions --json`
 * show it: id, vm, disk, kind, from_sku, to_sku, due_at, state, reason,
 * attempts, updated_at, policy, saving, currency, operation_url, dry_run,
 * and transitions [{from, to, at, owner, detail}] from MOVES[0..N).  NULL
 * when out of memory. */
struct json_t *tw_exec_action_json(const struct tw_store_action_row *row,
                                   const struct tw_store_action_move_row *moves, size_t n);
/* One result of a run: the action's fields (id 0 for a dry run's row that
 * is not stored) with outcome, state, reason and, when something is or
 * would be sent, "request": {method, url, body}. */
struct json_t *tw_exec_result_json(const struct tw_exec_result *r);
/* A run's counts: {"actions", "done", "skipped", ...}. */
struct json_t *tw_exec_summary_json(const struct tw_exec_summary *s);

/* The default owner of claims, "HOST:PID:TAG" (CAP bytes): TAG is 8 hex
 * digits drawn once per process, so that backends on several machines
 * (or containers) with one host name and PID never share a claim. */
void tw_exec_owner_default(char *out, size_t cap);

#endif
