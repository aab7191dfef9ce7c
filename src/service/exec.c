/*
 * exec.c - the executor's state machine (exec.h): one action at a time per
 * VM, VMs on threads of their own.
 */
#define _POSIX_C_SOURCE 200809L

#include "service/exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/time.h"

#define EXEC_REASON_MAX 512
/*
 * A claim's default lease.  One ARM call of the client may take its whole
 * retry budget (90 s of 429/5xx retries and Retry-After waits) and a poll
 * loop sleeps at most 60 s between polls, so the claim is checked (and
 * renewed when less than half of it is left) at least every 150 s while
 * an operation is waited on; before a send it is renewed too, and the
 * checks before it (disk, VM, at most 2 x 90 s) come right after the
 * claim.  10 minutes leaves 300 s at every check: no executor's lease
 * runs out inside a call of its own.
 */
#define EXEC_LEASE_MS (600LL * 1000)
#define TW_EXEC_QUOTA_CHANGES 2                 /* ARM: type changes per disk ... */
#define TW_EXEC_QUOTA_MS (24LL * 3600 * 1000)    /* ... in any 24 hours */
/* ARM counts a change when it takes it, by its clock; ours saw it a little
 * later (when verified) and may be off by a skew: a change is counted this
 * much longer. */
#define TW_EXEC_QUOTA_MARGIN_MS (5LL * 60 * 1000)

/* ---- the clock and small helpers ---- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The system clock's now, to the millisecond (the quota's check compares
 * the SKU history's instants with now: a second's rounding would lose a
 * change made 24 hours ago less a fraction). */
static void now_text(char *out, size_t cap)
{
    int64_t ms = now_ms();
    if (!tw_rfc3339_format_ns(ms * 1000000, 0, 3, out, cap) && cap)
        out[0] = '\0';
}

static void ms_text(int64_t ms, char *out, size_t cap)
{
    if (!tw_rfc3339_format(ms / 1000, out, cap) && cap)
        out[0] = '\0';
}

static bool stopped(const struct tw_exec_opts *o)
{
    return o->stop && *o->stop;
}

/* Sleeps MS in slices, waking early when O->stop is set. */
static void nap(const struct tw_exec_opts *o, long ms)
{
    while (ms > 0 && !stopped(o)) {
        long slice = ms > 100 ? 100 : ms;
        struct timespec ts = {slice / 1000, (slice % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        ms -= slice;
    }
}

/* A tag of this process, drawn once: backends in containers may share a
 * host name and a PID (1), and claims must still tell them apart. */
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;
static unsigned owner_tag;

static void owner_tag_draw(void)
{
    unsigned t = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&t, sizeof t, 1, f) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        t = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec * 2654435761u ^ (unsigned)getpid();
    }
    if (f)
        fclose(f);
    owner_tag = t;
}

void tw_exec_owner_default(char *out, size_t cap)
{
    char host[33]; /* with ":PID:TAG", ":sched" and a run's ":N" it fits an owner of 64 */
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    pthread_once(&owner_once, owner_tag_draw);
    snprintf(out, cap, "%s:%ld:%08x", host, (long)getpid(), owner_tag);
}

static bool is_disk_kind(const char *kind)
{
    return !strcmp(kind, "downgrade") || !strcmp(kind, "upgrade");
}

static bool is_premium(const char *sku)
{
    return !strncasecmp(sku, "Premium", 7);
}

/* ---- one run's shared state ---- */

struct run {
    const struct tw_exec_opts *o;
    const struct tw_store_action_row *rows;
    size_t n;
    size_t *order;        /* rows by group, then given order */
    size_t *group_start;  /* n_groups + 1 offsets into ORDER */
    size_t n_groups;
    size_t next_group;    /* under LOCK */
    pthread_mutex_t lock; /* the sink, the summary, NEXT_GROUP */
    struct tw_exec_summary sum;
    char owner[96];
    enum tw_err fatal;
    struct tw_error fatal_err;
};

/* What one worker thread holds. */
struct worker {
    struct run *run;
    struct tw_store *st;  /* NULL in a dry run without a database */
    void *arm;
    char owner[128];
};

static void report(struct worker *w, const struct tw_store_action_row *a, const char *state,
                   const char *outcome, const char *reason, const char *method, const char *url,
                   const char *body, bool already)
{
    struct run *r = w->run;
    struct tw_exec_result res = {a, state, outcome, reason ? reason : "", method, url, body,
                                 already};
    pthread_mutex_lock(&r->lock);
    if (!strcmp(outcome, "done"))
        r->sum.done++;
    else if (!strcmp(outcome, "skipped"))
        r->sum.skipped++;
    else if (!strcmp(outcome, "failed"))
        r->sum.failed++;
    else if (!strcmp(outcome, "waiting"))
        r->sum.waiting++;
    else if (!strcmp(outcome, "retry"))
        r->sum.retry++;
    else if (!strcmp(outcome, "held"))
        r->sum.held++;
    else if (!strcmp(outcome, "would_send"))
        r->sum.would_send++;
    else if (!strcmp(outcome, "nothing_to_send"))
        r->sum.nothing_to_send++;
    if (r->o->sink && r->o->sink->result)
        r->o->sink->result(r->o->sink->arg, &res);
    pthread_mutex_unlock(&r->lock);
}

/* What is sent for action A, for the results and dry runs. */
struct sendinfo {
    const char *method;
    char url[TW_ARM_URL_MAX + 64];
    char body[96];
};

static void send_info(const struct tw_exec_opts *o, const struct tw_store_action_row *a,
                      struct sendinfo *si)
{
    const char *base = o->arm_url && o->arm_url[0] ? o->arm_url : "https://management.azure.com";
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    if (is_disk_kind(a->kind)) {
        si->method = "PATCH";
        snprintf(si->url, sizeof si->url, "%.*s%s?api-version=%s", (int)bl, base,
                 a->disk_resource_id, TW_ARM_DISK_API);
        snprintf(si->body, sizeof si->body, "{\"sku\":{\"name\":\"%s\"}}", a->to_sku);
    } else {
        si->method = "POST";
        snprintf(si->url, sizeof si->url, "%.*s%s/%s?api-version=%s", (int)bl, base,
                 a->vm_resource_id, !strcmp(a->kind, "start") ? "start" : "deallocate",
                 TW_ARM_COMPUTE_API);
        si->body[0] = '\0';
    }
}

/* ARM's last error in one sentence: "CODE: MESSAGE (HTTP S)". */
static void arm_why(struct worker *w, const struct tw_error *e, char *out, size_t cap)
{
    const struct tw_arm_error *ae =
        w->run->o->arm->last_error ? w->run->o->arm->last_error(w->arm) : NULL;
    if (ae && (ae->code[0] || ae->message[0]))
        snprintf(out, cap, "%s: %.400s (HTTP %ld)", ae->code[0] ? ae->code : "error", ae->message,
                 ae->status);
    else
        snprintf(out, cap, "%s", e && e->msg[0] ? e->msg : "ARM did not answer");
}

static enum tw_arm_fault arm_fault(struct worker *w)
{
    const struct tw_arm_error *ae =
        w->run->o->arm->last_error ? w->run->o->arm->last_error(w->arm) : NULL;
    return ae ? ae->fault : TW_ARM_FAULT_OTHER;
}

/* A failed operation's error in one sentence: "operation failed: CODE:
 * MESSAGE" (the poll's HTTP status, 200, says nothing of the failure). */
static void op_why(struct worker *w, const struct tw_error *e, char *out, size_t cap)
{
    const struct tw_arm_error *ae =
        w->run->o->arm->last_error ? w->run->o->arm->last_error(w->arm) : NULL;
    if (ae && (ae->code[0] || ae->message[0]))
        snprintf(out, cap, "operation failed: %s: %.400s", ae->code[0] ? ae->code : "error",
                 ae->message[0] ? ae->message : "(no message)");
    else
        snprintf(out, cap, "operation failed: %.400s",
                 e && e->msg[0] ? e->msg : "ARM gave no reason");
}

/* Whether a fault is worth another try next tick. */
static bool fault_transient(enum tw_arm_fault f)
{
    return f == TW_ARM_FAULT_THROTTLED || f == TW_ARM_FAULT_BUSY || f == TW_ARM_FAULT_SERVER ||
           f == TW_ARM_FAULT_NETWORK;
}

/* ---- the checks before a send ---- */

enum verdict { V_OK, V_ALREADY, V_SKIP, V_WAIT, V_QUOTA_WAIT, V_RETRY, V_FAIL };

/* The due time (ms) of the next upgrade of A's disk after A's own due,
 * from the store; 0 when none is known. */
static int64_t pair_due(struct worker *w, const struct tw_store_action_row *a)
{
    if (!w->st || !a->disk_id)
        return 0;
    struct tw_store_action_filter f = {0};
    f.disk_id = a->disk_id;
    f.due_from_ms = a->due_ms + 1;
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    int64_t best = 0;
    struct tw_error e = {0};
    if (tw_store_actions_list(w->st, &f, &rows, &n, NULL, &e) != TW_OK)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].kind, "upgrade") && rows[i].due_ms > a->due_ms &&
            (!best || rows[i].due_ms < best))
            best = rows[i].due_ms;
    tw_store_action_rows_free(rows, n);
    return best;
}

/* ARM's quota of type changes: at most TW_EXEC_QUOTA_CHANGES in any
 * TW_EXEC_QUOTA_MS, counting everyone's changes.  The store's SKU history
 * (tierwise's own, recorded when verified, and others' seen by sync) gives
 * the instants of the disk's changes; *N_IN how many fall in (AT - span -
 * margin, AT], *OLDEST_IN the oldest of them. */
static enum tw_err changes_before(struct worker *w, int64_t disk_id, int64_t at_ms, int *n_in,
                                  int64_t *oldest_in, struct tw_error *err)
{
    struct tw_store_sku_hist_row *h = NULL;
    size_t n = 0;
    *n_in = 0;
    *oldest_in = 0;
    enum tw_err rc = tw_store_disk_history(w->st, disk_id, &h, &n, err);
    if (rc != TW_OK)
        return rc;
    for (size_t i = 1; i < n; i++) {
        if (!strcasecmp(h[i].sku, h[i - 1].sku))
            continue; /* a tier or size change alone is no type change */
        int64_t t = 0;
        if (!tw_rfc3339_ms(h[i].observed_at, &t))
            continue;
        if (t > at_ms - TW_EXEC_QUOTA_MS - TW_EXEC_QUOTA_MARGIN_MS && t <= at_ms) {
            if (!*n_in || t < *oldest_in)
                *oldest_in = t;
            (*n_in)++;
        }
    }
    free(h);
    return TW_OK;
}

/* Whether A's change now keeps the quota: a downgrade also needs room for
 * its upgrade back (at its due time); else a downgrade is skipped and an
 * upgrade waits for the quota to free (re-checked each tick: the disk must
 * get back). */
static enum verdict check_quota(struct worker *w, const struct tw_store_action_row *a, char *why,
                                size_t cap)
{
    if (!w->st || !a->disk_id)
        return V_OK;
    struct tw_error e = {0};
    int64_t t = now_ms();
    int n = 0;
    int64_t oldest = 0;
    if (changes_before(w, a->disk_id, t, &n, &oldest, &e) != TW_OK)
        return V_OK; /* no history to go by: ARM's refusal will say */
    if (n >= TW_EXEC_QUOTA_CHANGES) {
        char next[40];
        ms_text(oldest + TW_EXEC_QUOTA_MS + TW_EXEC_QUOTA_MARGIN_MS + 1000, next, sizeof next);
        if (!strcmp(a->kind, "downgrade")) {
            snprintf(why, cap, "quota: the disk's type changed %d times in the last 24 hours "
                     "(at most %d)", n, TW_EXEC_QUOTA_CHANGES);
            return V_SKIP;
        }
        snprintf(why, cap, "quota: the disk's type changed %d times in the last 24 hours (at "
                 "most %d); the next change is allowed after %s", n, TW_EXEC_QUOTA_CHANGES, next);
        return V_QUOTA_WAIT;
    }
    if (!strcmp(a->kind, "downgrade")) {
        int64_t back = pair_due(w, a);
        if (back > t) {
            int m = 0;
            int64_t o2 = 0;
            if (changes_before(w, a->disk_id, back, &m, &o2, &e) == TW_OK &&
                m + 2 > TW_EXEC_QUOTA_CHANGES) {
                snprintf(why, cap, "quota: the upgrade back would be the disk's change %d in 24 "
                         "hours (at most %d)", m + 2, TW_EXEC_QUOTA_CHANGES);
                return V_SKIP;
            }
        }
    }
    return V_OK;
}

/* VM VM_ID's power state STATE as ARM read it just now, into the store
 * (the last sync's row would make drift judge a VM "running" that is
 * not); nothing in a dry run, nothing for an unknown state. */
static void observe_power(struct worker *w, int64_t vm_id, const char *state)
{
    if (w->run->o->dry_run || !vm_id || !state || !state[0])
        return;
    char at[40];
    now_text(at, sizeof at);
    struct tw_error e = {0};
    tw_store_power_observe(w->st, vm_id, state, at, TW_OBS_ARM, &e);
}

/* A disk Reserved by its VM says the VM is deallocated. */
static void observe_disk_power(struct worker *w, const struct tw_store_action_row *a,
                               const struct tw_arm_disk *d)
{
    if (d && !strcasecmp(d->disk_state, "Reserved"))
        observe_power(w, a->vm_id, "deallocated");
}

/* Checks a disk switch against ARM: *D the disk as read. */
static enum verdict check_disk(struct worker *w, const struct tw_store_action_row *a,
                               struct tw_arm_disk *d, char *why, size_t cap)
{
    const struct tw_exec_opts *o = w->run->o;
    struct tw_error e = {0};
    why[0] = '\0';
    if (!a->disk_resource_id[0]) {
        snprintf(why, cap, "no_resource_id: the store has no ARM id for disk %s; run "
                 "`tierwise sync` first", a->disk);
        return V_SKIP;
    }
    enum tw_err rc = o->arm->disk_get(w->arm, a->disk_resource_id, d, &e);
    if (rc == TW_ENOENT) {
        snprintf(why, cap, "disk_not_found: ARM has no disk %.400s", a->disk_resource_id);
        return V_FAIL;
    }
    if (rc != TW_OK) {
        arm_why(w, &e, why, cap);
        return fault_transient(arm_fault(w)) ? V_RETRY : V_FAIL;
    }
    observe_disk_power(w, a, d);
    if (!strcasecmp(d->sku, a->to_sku) && !d->update_in_progress &&
        (!d->provisioning_state[0] || !strcmp(d->provisioning_state, "Succeeded"))) {
        /* an upgrade with no original recorded: its window's downgrade
         * never ran (refused, failed, skipped), so there is nothing to undo.
         * A dry run records no original, so it keeps "already on the target". */
        if (!strcmp(a->kind, "upgrade") && !o->dry_run && a->disk_id && w->st) {
            char osku[32] = "", otier[16] = "";
            bool found = false;
            if (tw_store_disk_original_get(w->st, a->disk_id, osku, otier, &found, &e) == TW_OK &&
                !found) {
                snprintf(why, cap, "nothing_to_restore: the disk is on %s and no downgrade of "
                         "it was recorded (the downgrade of this window did not happen)", d->sku);
                return V_SKIP;
            }
        }
        snprintf(why, cap, "already on the target: the disk is on %s", d->sku);
        return V_ALREADY;
    }
    if (d->update_in_progress) {
        snprintf(why, cap, "update_in_progress: ARM shows an update in progress on the disk%s%s",
                 d->target_tier[0] ? " towards tier " : "", d->target_tier);
        return V_SKIP;
    }
    if (strcasecmp(d->sku, a->from_sku)) {
        snprintf(why, cap, "sku_changed: the disk is on %s, the action expects %s", d->sku,
                 a->from_sku);
        return V_SKIP;
    }
    if (d->max_shares > 1) {
        snprintf(why, cap, "shared_disk: the disk is shared (maxShares %lld)",
                 (long long)d->max_shares);
        return V_SKIP;
    }
    if (!strcasecmp(d->disk_state, "Frozen")) {
        snprintf(why, cap, "hibernated: the disk is Frozen (its VM is hibernated)");
        return V_SKIP;
    }
    if (d->bursting == 1) {
        snprintf(why, cap, "bursting: the disk has on-demand bursting enabled");
        return V_SKIP;
    }
    bool free_to_change =
        !strcasecmp(d->disk_state, "Reserved") || !strcasecmp(d->disk_state, "Unattached") ||
        (o->dry_run && o->dry_after_deallocate && !strcmp(a->kind, "downgrade"));
    if (free_to_change && strcasecmp(d->disk_state, "Reserved") &&
        strcasecmp(d->disk_state, "Unattached"))
        snprintf(why, cap, "after the deallocation that comes first; the disk is %s now",
                 d->disk_state[0] ? d->disk_state : "in an unknown state");
    if (!free_to_change) {
        if (!strcmp(a->kind, "downgrade")) {
            snprintf(why, cap, "vm_not_deallocated: the disk is %s, its VM is not deallocated",
                     d->disk_state[0] ? d->disk_state : "in an unknown state");
            return V_WAIT;
        }
        snprintf(why, cap, "vm_running: the disk is %s (its VM was started out of band)",
                 d->disk_state[0] ? d->disk_state : "in an unknown state");
        return V_SKIP;
    }
    /* an upgrade to Premium: the VM size must take Premium storage; and a
     * downgrade from Premium only when that way back exists (checked
     * before the PATCH, or the disk could not be restored) */
    bool up_premium = is_premium(a->to_sku) && !is_premium(a->from_sku);
    bool down_premium = !strcmp(a->kind, "downgrade") && is_premium(a->from_sku) &&
                        !is_premium(a->to_sku);
    if (up_premium || down_premium) {
        const char *vm_id = d->managed_by[0] ? d->managed_by : a->vm_resource_id;
        if (vm_id[0]) {
            struct tw_arm_vm *vm = calloc(1, sizeof *vm);
            if (!vm) {
                snprintf(why, cap, "out of memory");
                return V_RETRY;
            }
            rc = o->arm->vm_get(w->arm, vm_id, vm, &e);
            if (rc == TW_OK && !strcasecmp(vm_id, a->vm_resource_id))
                observe_power(w, a->vm_id, vm->power_state);
            if (rc == TW_OK) {
                struct tw_vmcap buf;
                char cwhy[256] = "";
                const struct tw_vmcap *c =
                    tw_svc_vmcap_pick(o->arm_sizes, o->caps, vm->vm.location, vm->vm.vm_size,
                                      &buf, cwhy, sizeof cwhy);
                if (c && c->premium == TW_VMCAP_PREMIUM_NO) {
                    if (down_premium)
                        snprintf(why, cap, "no_premium: VM size %s does not take Premium "
                                 "storage, so the disk could not be moved back to %s",
                                 vm->vm.vm_size, a->from_sku);
                    else
                        snprintf(why, cap, "no_premium: VM size %s does not take Premium "
                                 "storage", vm->vm.vm_size);
                    free(vm);
                    return V_SKIP;
                }
                if (!c || c->premium == TW_VMCAP_PREMIUM_UNKNOWN)
                    snprintf(why, cap, "VM size %s: Premium support unknown, going on",
                             vm->vm.vm_size[0] ? vm->vm.vm_size : "(none)");
            } else if (rc != TW_ENOENT) {
                arm_why(w, &e, why, cap);
                free(vm);
                return fault_transient(arm_fault(w)) ? V_RETRY : V_FAIL;
            }
            free(vm);
        }
    }
    char qwhy[EXEC_REASON_MAX];
    enum verdict q = check_quota(w, a, qwhy, sizeof qwhy);
    if (q != V_OK) {
        snprintf(why, cap, "%s", qwhy);
        return q;
    }
    return V_OK;
}

/* Checks a VM action (deallocate, start) against ARM. */
static enum verdict check_vm(struct worker *w, const struct tw_store_action_row *a, char *why,
                             size_t cap, char *power, size_t pcap)
{
    const struct tw_exec_opts *o = w->run->o;
    struct tw_error e = {0};
    if (!a->vm_resource_id[0]) {
        snprintf(why, cap, "no_resource_id: the store has no ARM id for VM %s; run "
                 "`tierwise sync` first", a->vm);
        return V_SKIP;
    }
    struct tw_arm_vm *vm = calloc(1, sizeof *vm);
    if (!vm) {
        snprintf(why, cap, "out of memory");
        return V_RETRY;
    }
    enum tw_err rc = o->arm->vm_get(w->arm, a->vm_resource_id, vm, &e);
    enum verdict v = V_OK;
    if (rc == TW_ENOENT) {
        snprintf(why, cap, "vm_not_found: ARM has no VM %.400s", a->vm_resource_id);
        v = V_FAIL;
    } else if (rc != TW_OK) {
        arm_why(w, &e, why, cap);
        v = fault_transient(arm_fault(w)) ? V_RETRY : V_FAIL;
    } else {
        const char *want = !strcmp(a->kind, "start") ? "running" : "deallocated";
        observe_power(w, a->vm_id, vm->power_state);
        if (power && pcap)
            snprintf(power, pcap, "%s", vm->power_state);
        if (!strcasecmp(vm->power_state, want)) {
            snprintf(why, cap, "already on the target: the VM is %s", vm->power_state);
            v = V_ALREADY;
        } else {
            snprintf(why, cap, "the VM is %s", vm->power_state[0] ? vm->power_state : "unknown");
        }
    }
    free(vm);
    return v;
}

/* ---- moves ---- */

/* Moves A from *STATE to TO; false when another worker moved it first
 * (WHY says so). */
static bool move(struct worker *w, const struct tw_store_action_row *a, enum tw_action_state *state,
                 enum tw_action_state to, const char *detail, char *why, size_t cap)
{
    struct tw_error e = {0};
    if (tw_store_action_move(w->st, a->id, *state, to, w->owner, detail, &e) != TW_OK) {
        snprintf(why, cap, "could not move %s -> %s: %.400s", tw_action_state_name(*state),
                 tw_action_state_name(to), e.msg);
        return false;
    }
    *state = to;
    return true;
}

/* Renews the claim when half the lease has gone; false when it could not
 * be (another executor took the action over): the caller stops at once. */
static bool renew(struct worker *w, const struct tw_store_action_row *a, int64_t *until)
{
    int64_t lease = w->run->o->lease_ms > 0 ? w->run->o->lease_ms : EXEC_LEASE_MS;
    int64_t t = now_ms();
    if (*until - t < lease / 2) {
        struct tw_error e = {0};
        if (tw_store_action_claim(w->st, a->id, w->owner, t, lease, until, &e) != TW_OK) {
            *until = 0;
            return false;
        }
    }
    return true;
}

#define LOST_CLAIM "the claim could not be renewed (another executor holds the action now)"


/* The operation of a send, polled until done or the run's deadline:
 * V_OK done, V_RETRY still running (or a transient answer), V_FAIL failed. */
static enum verdict wait_op(struct worker *w, const struct tw_store_action_row *a,
                            struct tw_arm_op *op, int64_t *until, char *why, size_t cap)
{
    const struct tw_exec_opts *o = w->run->o;
    long poll = o->poll_ms > 0 ? o->poll_ms : 2000;
    int64_t deadline = now_ms() + (o->op_timeout_ms > 0 ? o->op_timeout_ms : 600000);
    if (!op->url[0])
        return V_OK;
    for (;;) {
        bool done = false;
        struct tw_error e = {0};
        enum tw_err rc = o->arm->op_poll(w->arm, op, &done, &e);
        if (rc != TW_OK && done) {
            op_why(w, &e, why, cap);
            return V_FAIL;
        }
        if (rc != TW_OK && !fault_transient(arm_fault(w)) && arm_fault(w) != TW_ARM_FAULT_NONE &&
            arm_fault(w) != TW_ARM_FAULT_NOT_FOUND) {
            arm_why(w, &e, why, cap);
            return V_FAIL;
        }
        if (rc != TW_OK && arm_fault(w) == TW_ARM_FAULT_NOT_FOUND)
            return V_OK; /* the operation is gone: the disk read back decides */
        if (rc == TW_OK && done)
            return V_OK;
        if (stopped(o) || now_ms() >= deadline) {
            snprintf(why, cap, "the operation is still running (%.300s); resumed next run", op->url);
            return V_RETRY;
        }
        long sleep_ms = op->retry_after_ms > 0 ? op->retry_after_ms : poll;
        if (sleep_ms > 60000)
            sleep_ms = 60000;
        nap(o, sleep_ms);
        if (!renew(w, a, until)) {
            snprintf(why, cap, LOST_CLAIM);
            return V_RETRY;
        }
    }
}

/* Reads the disk back until it verifies on TO_SKU or the deadline. */
static enum verdict verify_disk(struct worker *w, const struct tw_store_action_row *a,
                                struct tw_arm_disk *d, char *why, size_t cap, int64_t *until)
{
    const struct tw_exec_opts *o = w->run->o;
    long poll = o->poll_ms > 0 ? o->poll_ms : 2000;
    int64_t deadline = now_ms() + (o->op_timeout_ms > 0 ? o->op_timeout_ms : 600000);
    for (;;) {
        bool ok = false;
        struct tw_error e = {0};
        enum tw_err rc = o->arm->disk_verify(w->arm, a->disk_resource_id, a->to_sku, &ok, d, &e);
        if (rc == TW_OK && ok)
            return V_OK;
        if (rc != TW_OK && !fault_transient(arm_fault(w))) {
            arm_why(w, &e, why, cap);
            return V_FAIL;
        }
        if (rc == TW_OK && !d->update_in_progress && !strcasecmp(d->sku, a->from_sku) &&
            (!d->provisioning_state[0] || !strcmp(d->provisioning_state, "Succeeded"))) {
            snprintf(why, cap, "not_switched: the operation ended but the disk reads back on %s",
                     d->sku);
            return V_FAIL;
        }
        if (stopped(o) || now_ms() >= deadline) {
            snprintf(why, cap, "the disk does not read back on %s yet; resumed next run",
                     a->to_sku);
            return V_RETRY;
        }
        nap(o, poll);
        if (!renew(w, a, until)) {
            snprintf(why, cap, LOST_CLAIM);
            return V_RETRY;
        }
    }
}

/* The VM reads back in the power state of A's kind. */
static enum verdict verify_vm(struct worker *w, const struct tw_store_action_row *a, char *why,
                              size_t cap, int64_t *until)
{
    const struct tw_exec_opts *o = w->run->o;
    long poll = o->poll_ms > 0 ? o->poll_ms : 2000;
    int64_t deadline = now_ms() + (o->op_timeout_ms > 0 ? o->op_timeout_ms : 600000);
    const char *want = !strcmp(a->kind, "start") ? "running" : "deallocated";
    struct tw_arm_vm *vm = calloc(1, sizeof *vm);
    if (!vm) {
        snprintf(why, cap, "out of memory");
        return V_RETRY;
    }
    enum verdict v;
    for (;;) {
        struct tw_error e = {0};
        enum tw_err rc = o->arm->vm_get(w->arm, a->vm_resource_id, vm, &e);
        if (rc == TW_OK && !strcasecmp(vm->power_state, want)) {
            v = V_OK;
            break;
        }
        if (rc != TW_OK && !fault_transient(arm_fault(w))) {
            arm_why(w, &e, why, cap);
            v = V_FAIL;
            break;
        }
        if (stopped(o) || now_ms() >= deadline) {
            snprintf(why, cap, "the VM is %s, not %s yet; resumed next run",
                     rc == TW_OK ? vm->power_state : "unread", want);
            v = V_RETRY;
            break;
        }
        nap(o, poll);
        if (!renew(w, a, until)) {
            snprintf(why, cap, LOST_CLAIM);
            v = V_RETRY;
            break;
        }
    }
    free(vm);
    return v;
}

/* What follows a verified switch: the SKU in the history, the original
 * cleared when the disk is back on it. */
static void after_verified(struct worker *w, const struct tw_store_action_row *a,
                           const struct tw_arm_disk *d)
{
    struct tw_error e = {0};
    char at[40];
    now_text(at, sizeof at);
    if (!is_disk_kind(a->kind)) {
        /* the VM's power state as ARM read it back: the store's (from the
         * last sync) would make drift see a VM "running" that is not */
        if (a->vm_id)
            tw_store_power_observe(w->st, a->vm_id,
                                   !strcmp(a->kind, "start") ? "running" : "deallocated", at,
                                   TW_OBS_ARM, &e);
        return;
    }
    observe_disk_power(w, a, d);
    if (!a->disk_id)
        return;
    tw_store_sku_observe(w->st, a->disk_id, a->to_sku, d ? d->tier : "", d ? d->size_gib : 0, at,
                         TW_OBS_ARM, NULL, &e);
    if (d && d->sku[0]) {
        struct tw_store_disk_attrs at_arm;
        memset(&at_arm, 0, sizeof at_arm);
        at_arm.max_shares = d->max_shares > 0 ? d->max_shares : 0;
        at_arm.bursting = d->bursting == 1 ? TW_TRI_YES : d->bursting == 0 ? TW_TRI_NO
                                                                           : TW_TRI_UNKNOWN;
        snprintf(at_arm.disk_state, sizeof at_arm.disk_state, "%s", d->disk_state);
        tw_store_disk_attrs_observe(w->st, a->disk_id, &at_arm, at, TW_OBS_ARM, NULL, &e);
    }
    if (!strcmp(a->kind, "upgrade")) {
        char sku[32] = "", tier[16] = "";
        bool found = false;
        if (tw_store_disk_original_get(w->st, a->disk_id, sku, tier, &found, &e) == TW_OK &&
            found && !strcasecmp(sku, a->to_sku))
            tw_store_disk_original_clear(w->st, a->disk_id, &e);
    }
}

/* Sends A's request (its attempt counted by the caller). */
static enum tw_err send_req(struct worker *w, const struct tw_store_action_row *a,
                            struct tw_arm_op *op, struct tw_error *e)
{
    const struct tw_exec_opts *o = w->run->o;
    memset(op, 0, sizeof *op);
    if (is_disk_kind(a->kind))
        return o->arm->disk_set_sku(w->arm, a->disk_resource_id, a->to_sku, op, e);
    if (!strcmp(a->kind, "start"))
        return o->arm->vm_start(w->arm, a->vm_resource_id, op, e);
    return o->arm->vm_deallocate(w->arm, a->vm_resource_id, op, e);
}

static bool url_is_async(const char *url)
{
    for (const char *p = url; *p; p++)
        if (!strncasecmp(p, "asyncoperation", 14) || !strncasecmp(p, "azureasyncoperation", 19))
            return true;
    return false;
}

/* A send refused as busy or throttled (or cut by a crash) leaves the action
 * sent without an operation: the next attempt waits a tick after the first,
 * two after the second, ... (at most 16 ticks) from the last update. */
static int64_t backoff_left(const struct tw_exec_opts *o, const struct tw_store_action_row *a)
{
    int64_t tick = o->tick_ms > 0 ? o->tick_ms : 60000;
    int64_t last = 0;
    if (a->attempts < 1 || !tw_rfc3339_ms(a->updated_at, &last))
        return 0;
    int shift = a->attempts - 1 > 4 ? 4 : a->attempts - 1;
    int64_t wait = tick * ((int64_t)1 << shift) - tick / 2; /* half a tick of slack */
    int64_t left = last + wait - now_ms();
    return left > 0 ? left : 0;
}

/* A downgrade that failed before its PATCH took effect: the original SKU
 * recorded at its move to sent is forgotten when the disk reads back on
 * it (nothing to restore).  Recorded before the send and cleared here, not
 * recorded after ARM accepted the PATCH: a crash between the accepted
 * PATCH and that record would lose the way back; one between the record
 * and a refusal leaves an original equal to the disk's SKU, which an
 * upgrade finds "already on the target" and clears. */
static void forget_unmoved(struct worker *w, const struct tw_store_action_row *a)
{
    if (strcmp(a->kind, "downgrade") || !a->disk_id || !w->st)
        return;
    struct tw_error e = {0};
    char sku[32] = "", tier[16] = "";
    bool found = false;
    if (tw_store_disk_original_get(w->st, a->disk_id, sku, tier, &found, &e) != TW_OK || !found ||
        strcasecmp(sku, a->from_sku))
        return;
    struct tw_arm_disk d;
    memset(&d, 0, sizeof d);
    if (w->run->o->arm->disk_get(w->arm, a->disk_resource_id, &d, &e) != TW_OK)
        return;
    if (!strcasecmp(d.sku, a->from_sku) && !d.update_in_progress)
        tw_store_disk_original_clear(w->st, a->disk_id, &e);
}

/* An upgrade goes back to the disk's recorded original SKU, whatever the
 * plan said (a saved plan's SKU may be stale): A->to_sku is replaced and
 * NOTE says so; "" when nothing changed. */
static void upgrade_to_original(struct worker *w, struct tw_store_action_row *a, char *note,
                                size_t cap)
{
    note[0] = '\0';
    if (strcmp(a->kind, "upgrade") || !a->disk_id || !w->st)
        return;
    struct tw_error e = {0};
    char sku[32] = "", tier[16] = "";
    bool found = false;
    if (tw_store_disk_original_get(w->st, a->disk_id, sku, tier, &found, &e) != TW_OK || !found ||
        !sku[0] || !strcasecmp(sku, a->to_sku))
        return;
    snprintf(note, cap, "to the original SKU %s recorded at the downgrade, not the plan's %s",
             sku, a->to_sku[0] ? a->to_sku : "(none)");
    snprintf(a->to_sku, sizeof a->to_sku, "%s", sku);
}

/* Whether the VM is on its way to A's power state (a resumed send). */
static bool vm_moving(const char *kind, const char *power)
{
    if (!strcmp(kind, "start"))
        return !strcasecmp(power, "starting");
    return !strcasecmp(power, "deallocating") || !strcasecmp(power, "stopping");
}

/* ---- one action, executing ---- */

static void exec_action(struct worker *w, const struct tw_store_action_row *given)
{
    const struct tw_exec_opts *o = w->run->o;
    struct sendinfo si;
    char why[EXEC_REASON_MAX] = "";
    struct tw_error e = {0};
    int64_t lease = o->lease_ms > 0 ? o->lease_ms : EXEC_LEASE_MS;
    int64_t until = 0;
    const struct tw_store_action_row *shown = given;

    if (tw_store_action_claim(w->st, given->id, w->owner, now_ms(), lease, &until, &e) != TW_OK) {
        report(w, given, given->state, "held", e.msg, NULL, NULL, NULL, false);
        return;
    }
    struct tw_store_action_row a;
    memset(&a, 0, sizeof a);
    if (tw_store_action_get(w->st, given->id, &a, &e) != TW_OK) {
        report(w, given, given->state, "retry", e.msg, NULL, NULL, NULL, false);
        tw_store_action_release(w->st, given->id, w->owner, &e);
        return;
    }
    shown = &a;
    char back[200];
    upgrade_to_original(w, &a, back, sizeof back);
    send_info(o, &a, &si);
    enum tw_action_state state;
    int attempts = 0;
    if (tw_store_action_state(w->st, a.id, &state, &attempts, &e) != TW_OK) {
        report(w, shown, a.state, "retry", e.msg, NULL, NULL, NULL, false);
        goto out;
    }
    bool disk = is_disk_kind(a.kind);
    struct tw_arm_disk d;
    memset(&d, 0, sizeof d);
    struct tw_arm_op op;
    memset(&op, 0, sizeof op);
    bool already = false;
    char note[EXEC_REASON_MAX] = "";

    if (state == TW_ACT_PLANNED || state == TW_ACT_CHECKED) {
        enum verdict v = disk ? check_disk(w, &a, &d, why, sizeof why) : check_vm(w, &a, why, sizeof why, NULL, 0);
        switch (v) {
        case V_SKIP:
            move(w, &a, &state, TW_ACT_SKIPPED, why, note, sizeof note);
            report(w, shown, tw_action_state_name(state), "skipped", why, NULL, NULL, NULL, false);
            goto out;
        case V_FAIL:
            move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
            report(w, shown, tw_action_state_name(state), "failed", why, NULL, NULL, NULL, false);
            goto out;
        case V_RETRY:
            report(w, shown, tw_action_state_name(state), "retry", why, NULL, NULL, NULL, false);
            goto out;
        case V_QUOTA_WAIT:
            report(w, shown, tw_action_state_name(state), "waiting", why, NULL, NULL, NULL, false);
            goto out;
        case V_WAIT: {
            int64_t t = now_ms();
            int64_t pair = pair_due(w, &a);
            int64_t tick = o->tick_ms > 0 ? o->tick_ms : 60000;
            if (pair && t + tick >= pair) {
                move(w, &a, &state, TW_ACT_SKIPPED, why, note, sizeof note);
                report(w, shown, tw_action_state_name(state), "skipped", why, NULL, NULL, NULL,
                       false);
                goto out;
            }
            char due[40];
            ms_text(t + tick, due, sizeof due);
            if (tw_store_action_set_due(w->st, a.id, due, &e) != TW_OK)
                snprintf(note, sizeof note, "; its due could not be moved: %.400s", e.msg);
            char msg[EXEC_REASON_MAX + sizeof note + 64];
            snprintf(msg, sizeof msg, "%s; re-checked at %s%s", why, due, note);
            report(w, shown, tw_action_state_name(state), "waiting", msg, NULL, NULL, NULL, false);
            goto out;
        }
        case V_ALREADY:
            already = true;
            break;
        case V_OK:
            break;
        }
        if (back[0]) {
            char tmp[EXEC_REASON_MAX];
            snprintf(tmp, sizeof tmp, "%.200s%s%.280s", back, why[0] ? "; " : "", why);
            snprintf(why, sizeof why, "%s", tmp);
        }
        if (state == TW_ACT_PLANNED &&
            !move(w, &a, &state, TW_ACT_CHECKED, why[0] ? why : "checks passed", note, sizeof note)) {
            report(w, shown, a.state, "held", note, NULL, NULL, NULL, false);
            goto out;
        }
        if (stopped(o))
            goto out;
        if (!strcmp(a.kind, "downgrade") && a.disk_id && !already) {
            char at[40];
            bool kept = false;
            now_text(at, sizeof at);
            if (tw_store_disk_original_set(w->st, a.disk_id, a.from_sku, d.tier, a.id, at, &kept,
                                           &e) != TW_OK) {
                report(w, shown, tw_action_state_name(state), "retry", e.msg, NULL, NULL, NULL,
                       false);
                goto out;
            }
        }
        char detail[EXEC_REASON_MAX + 64];
        if (already)
            snprintf(detail, sizeof detail, "%s; nothing sent", why);
        else
            snprintf(detail, sizeof detail, "%s %.400s%s%s", si.method, si.url,
                     si.body[0] ? " " : "", si.body);
        if (!move(w, &a, &state, TW_ACT_SENT, detail, note, sizeof note)) {
            report(w, shown, a.state, "held", note, NULL, NULL, NULL, false);
            goto out;
        }
        if (!already) {
            if (!renew(w, &a, &until)) {
                report(w, shown, "sent", "retry", LOST_CLAIM, NULL, NULL, NULL, false);
                goto out;
            }
            enum tw_err rc = send_req(w, &a, &op, &e);
            if (rc != TW_OK) {
                arm_why(w, &e, why, sizeof why);
                if (fault_transient(arm_fault(w))) {
                    report(w, shown, "sent", "retry", why, si.method, si.url, si.body, false);
                } else {
                    move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
                    forget_unmoved(w, &a);
                    report(w, shown, tw_action_state_name(state), "failed", why, si.method,
                           si.url, si.body, false);
                }
                goto out;
            }
            if (op.url[0])
                tw_store_action_set_operation(w->st, a.id, w->owner, op.url, &e);
        }
    } else if (state == TW_ACT_SENT) {
        /* resumed: never send again unless the resource shows it never went */
        int64_t wait_ms = backoff_left(o, &a);
        char when[40];
        ms_text(now_ms() + wait_ms, when, sizeof when);
        if (a.operation_url && a.operation_url[0]) {
            snprintf(op.url, sizeof op.url, "%s", a.operation_url);
            op.async_operation = url_is_async(op.url);
        } else if (disk) {
            enum tw_err rc = o->arm->disk_get(w->arm, a.disk_resource_id, &d, &e);
            if (rc != TW_OK) {
                arm_why(w, &e, why, sizeof why);
                report(w, shown, "sent", "retry", why, NULL, NULL, NULL, false);
                goto out;
            }
            if (!strcasecmp(d.sku, a.from_sku) && !d.update_in_progress) {
                if (wait_ms > 0) { /* it never went: sent again, after the backoff */
                    snprintf(why, sizeof why,
                             "backing off after %d attempts: the next one after %s", a.attempts,
                             when);
                    report(w, shown, "sent", "retry", why, NULL, NULL, NULL, false);
                    goto out;
                }
                if (tw_store_action_count_attempt(w->st, a.id, w->owner, &e) != TW_OK) {
                    report(w, shown, "sent", "retry", e.msg, NULL, NULL, NULL, false);
                    goto out;
                }
                rc = send_req(w, &a, &op, &e);
                if (rc != TW_OK) {
                    arm_why(w, &e, why, sizeof why);
                    if (fault_transient(arm_fault(w))) {
                        report(w, shown, "sent", "retry", why, si.method, si.url, si.body, false);
                    } else {
                        move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
                        forget_unmoved(w, &a);
                        report(w, shown, "failed", "failed", why, si.method, si.url, si.body,
                               false);
                    }
                    goto out;
                }
                if (op.url[0])
                    tw_store_action_set_operation(w->st, a.id, w->owner, op.url, &e);
            } else if (strcasecmp(d.sku, a.to_sku) && !d.update_in_progress) {
                snprintf(why, sizeof why,
                         "sku_changed: the disk is on %s, neither %s nor %s, after the send",
                         d.sku, a.from_sku, a.to_sku);
                move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
                report(w, shown, "failed", "failed", why, NULL, NULL, NULL, false);
                goto out;
            }
        } else {
            /* a VM action without an operation: the power state decides; a
             * VM on its way (starting, deallocating, stopping) took the
             * first send: verified without another */
            char vwhy[EXEC_REASON_MAX];
            char power[32] = "";
            enum verdict v = check_vm(w, &a, vwhy, sizeof vwhy, power, sizeof power);
            if (v == V_FAIL || v == V_SKIP) {
                move(w, &a, &state, TW_ACT_FAILED, vwhy, note, sizeof note);
                report(w, shown, "failed", "failed", vwhy, NULL, NULL, NULL, false);
                goto out;
            }
            if (v == V_RETRY) {
                report(w, shown, "sent", "retry", vwhy, NULL, NULL, NULL, false);
                goto out;
            }
            if (v == V_OK && vm_moving(a.kind, power))
                v = V_ALREADY; /* moving to the target: on to verify */
            if (v == V_OK && wait_ms > 0) {
                snprintf(why, sizeof why, "backing off after %d attempts: the next one after %s",
                         a.attempts, when);
                report(w, shown, "sent", "retry", why, NULL, NULL, NULL, false);
                goto out;
            }
            if (v == V_OK) {
                if (tw_store_action_count_attempt(w->st, a.id, w->owner, &e) != TW_OK) {
                    report(w, shown, "sent", "retry", e.msg, NULL, NULL, NULL, false);
                    goto out;
                }
                if (send_req(w, &a, &op, &e) != TW_OK) {
                    arm_why(w, &e, why, sizeof why);
                    if (fault_transient(arm_fault(w))) {
                        report(w, shown, "sent", "retry", why, si.method, si.url, si.body, false);
                    } else {
                        move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
                        report(w, shown, "failed", "failed", why, si.method, si.url, si.body,
                               false);
                    }
                    goto out;
                }
                if (op.url[0])
                    tw_store_action_set_operation(w->st, a.id, w->owner, op.url, &e);
            }
        }
    }

    if (state == TW_ACT_SENT) {
        enum verdict v = already ? V_OK : wait_op(w, &a, &op, &until, why, sizeof why);
        if (v == V_OK)
            v = disk ? verify_disk(w, &a, &d, why, sizeof why, &until)
                     : verify_vm(w, &a, why, sizeof why, &until);
        if (v == V_RETRY) {
            report(w, shown, "sent", "retry", why, si.method, si.url, si.body, false);
            goto out;
        }
        if (v == V_FAIL) {
            move(w, &a, &state, TW_ACT_FAILED, why, note, sizeof note);
            forget_unmoved(w, &a);
            report(w, shown, tw_action_state_name(state), "failed", why, si.method, si.url,
                   si.body, false);
            goto out;
        }
        char detail[128];
        snprintf(detail, sizeof detail, "reads back %s", disk ? a.to_sku :
                 (!strcmp(a.kind, "start") ? "running" : "deallocated"));
        if (!move(w, &a, &state, TW_ACT_VERIFIED, detail, note, sizeof note)) {
            report(w, shown, "sent", "held", note, NULL, NULL, NULL, false);
            goto out;
        }
    }
    if (state == TW_ACT_VERIFIED) {
        if (disk && !d.sku[0]) {
            bool ok = false;
            o->arm->disk_verify(w->arm, a.disk_resource_id, a.to_sku, &ok, &d, &e);
        }
        after_verified(w, &a, disk ? &d : NULL);
        const char *det = already ? why : "switched and verified";
        if (!move(w, &a, &state, TW_ACT_DONE, det, note, sizeof note)) {
            report(w, shown, "verified", "held", note, NULL, NULL, NULL, false);
            goto out;
        }
        report(w, shown, "done", "done", already ? why : "", already ? NULL : si.method,
               already ? NULL : si.url, already ? NULL : si.body, already);
        goto out;
    }
    if (state == TW_ACT_DONE || state == TW_ACT_SKIPPED || state == TW_ACT_FAILED)
        report(w, shown, tw_action_state_name(state), "held", "finished already", NULL, NULL,
               NULL, false);
out:
    tw_store_action_release(w->st, a.id ? a.id : given->id, w->owner, &e);
    free(a.operation_url);
}

/* ---- one action, dry run: only reads ---- */

static void dry_action(struct worker *w, const struct tw_store_action_row *a)
{
    const struct tw_exec_opts *o = w->run->o;
    struct sendinfo si;
    char why[EXEC_REASON_MAX] = "";
    struct tw_store_action_row copy = *a; /* an upgrade's to_sku may go to the original */
    char back[200];
    upgrade_to_original(w, &copy, back, sizeof back);
    a = &copy;
    send_info(o, a, &si);
    if (!strcmp(a->state, "done") || !strcmp(a->state, "skipped") || !strcmp(a->state, "failed")) {
        report(w, a, a->state, "held", "finished already", NULL, NULL, NULL, false);
        return;
    }
    if (!strcmp(a->state, "sent") || !strcmp(a->state, "verified")) {
        report(w, a, a->state, "would_send", "in flight: would be resumed (polled and verified, "
               "not sent again)", NULL, NULL, NULL, false);
        return;
    }
    struct tw_arm_disk d;
    memset(&d, 0, sizeof d);
    enum verdict v = is_disk_kind(a->kind) ? check_disk(w, a, &d, why, sizeof why)
                                           : check_vm(w, a, why, sizeof why, NULL, 0);
    if (back[0] && (v == V_OK || v == V_ALREADY)) {
        char tmp[EXEC_REASON_MAX];
        snprintf(tmp, sizeof tmp, "%.200s%s%.280s", back, why[0] ? "; " : "", why);
        snprintf(why, sizeof why, "%s", tmp);
    }
    switch (v) {
    case V_OK:
        report(w, a, "sent", "would_send", why, si.method, si.url, si.body, false);
        break;
    case V_ALREADY:
        report(w, a, "done", "nothing_to_send", why, NULL, NULL, NULL, true);
        break;
    case V_SKIP:
        report(w, a, "skipped", "skipped", why, NULL, NULL, NULL, false);
        break;
    case V_WAIT:
    case V_QUOTA_WAIT:
        report(w, a, a->state, "waiting", why, NULL, NULL, NULL, false);
        break;
    case V_RETRY:
        report(w, a, a->state, "retry", why, NULL, NULL, NULL, false);
        break;
    case V_FAIL:
        report(w, a, "failed", "failed", why, NULL, NULL, NULL, false);
        break;
    }
}

/* ---- threads ---- */

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->run;
    const struct tw_exec_opts *o = r->o;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t g = r->next_group < r->n_groups && r->fatal == TW_OK ? r->next_group++ : SIZE_MAX;
        pthread_mutex_unlock(&r->lock);
        if (g == SIZE_MAX || stopped(o))
            break;
        for (size_t k = r->group_start[g]; k < r->group_start[g + 1] && !stopped(o); k++) {
            const struct tw_store_action_row *a = &r->rows[r->order[k]];
            if (o->dry_run)
                dry_action(w, a);
            else
                exec_action(w, a);
        }
    }
    return NULL;
}

static bool same_vm(const struct tw_store_action_row *a, const struct tw_store_action_row *b)
{
    if (a->vm_id && b->vm_id)
        return a->vm_id == b->vm_id;
    if (a->vm_resource_id[0] && b->vm_resource_id[0])
        return tw_arm_id_equal(a->vm_resource_id, b->vm_resource_id);
    return !strcasecmp(a->vm, b->vm);
}

/* Groups the rows by VM (first appearance order), keeping the given order
 * within a group. */
static enum tw_err group_rows(struct run *r, struct tw_error *err)
{
    size_t n = r->n;
    size_t *gid = calloc(n ? n : 1, sizeof *gid);
    size_t *lead = calloc(n ? n : 1, sizeof *lead);
    r->order = calloc(n ? n : 1, sizeof *r->order);
    r->group_start = calloc(n + 1, sizeof *r->group_start);
    if (!gid || !lead || !r->order || !r->group_start) {
        free(gid);
        free(lead);
        return tw_error_set(err, TW_ENOMEM, "out of memory grouping %zu actions", n);
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = ng;
        for (size_t j = 0; j < ng; j++)
            if (same_vm(&r->rows[lead[j]], &r->rows[i])) {
                g = j;
                break;
            }
        if (g == ng)
            lead[ng++] = i;
        gid[i] = g;
    }
    size_t k = 0;
    for (size_t g = 0; g < ng; g++) {
        r->group_start[g] = k;
        for (size_t i = 0; i < n; i++)
            if (gid[i] == g)
                r->order[k++] = i;
    }
    r->group_start[ng] = k;
    r->n_groups = ng;
    free(gid);
    free(lead);
    return TW_OK;
}

static enum tw_err worker_open(struct run *r, struct worker *w, int idx, struct tw_error *err)
{
    const struct tw_exec_opts *o = r->o;
    w->run = r;
    snprintf(w->owner, sizeof w->owner, "%s/%d", r->owner, idx);
    if (o->db_path && o->db_path[0]) {
        enum tw_err rc = tw_store_open(o->db_path, &w->st, err);
        if (rc != TW_OK)
            return rc;
    } else if (!o->dry_run) {
        return tw_error_set(err, TW_EINVAL, "the executor needs a database (--db)");
    }
    if (o->arm->open) {
        enum tw_err rc = o->arm->open(o->arm_arg, &w->arm, err);
        if (rc != TW_OK) {
            tw_store_close(w->st);
            w->st = NULL;
            return rc;
        }
    } else {
        w->arm = o->arm_arg;
    }
    return TW_OK;
}

static void worker_close(const struct tw_exec_opts *o, struct worker *w)
{
    if (o->arm->open && o->arm->close)
        o->arm->close(w->arm);
    tw_store_close(w->st);
}

enum tw_err tw_exec_run(const struct tw_exec_opts *o, const struct tw_store_action_row *rows,
                        size_t n, struct tw_exec_summary *out, struct tw_error *err)
{
    if (!o || !o->arm || (!rows && n))
        return tw_error_set(err, TW_EINVAL, "the executor needs its options, ARM calls and rows");
    struct run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.rows = rows;
    r.n = n;
    r.sum.actions = (int64_t)n;
    /* every run its own owner: two runs of one process (the scheduler and
     * POST /api/v1/actions) must not share a claim, or both would take the
     * same action and both resend it */
    char prefix[64];
    if (o->owner && o->owner[0])
        snprintf(prefix, sizeof prefix, "%s", o->owner);
    else
        tw_exec_owner_default(prefix, sizeof prefix);
    static unsigned long run_counter;
    unsigned long run_no = __atomic_add_fetch(&run_counter, 1, __ATOMIC_RELAXED);
    snprintf(r.owner, sizeof r.owner, "%.60s:%lu", prefix, run_no);
    enum tw_err rc = group_rows(&r, err);
    if (rc != TW_OK) {
        free(r.order);
        free(r.group_start);
        return rc;
    }
    int par = o->parallel > 0 ? o->parallel : 4;
    if ((size_t)par > r.n_groups)
        par = r.n_groups ? (int)r.n_groups : 1;
    pthread_mutex_init(&r.lock, NULL);
    struct worker *ws = calloc((size_t)par, sizeof *ws);
    pthread_t *th = calloc((size_t)par, sizeof *th);
    bool *started = calloc((size_t)par, sizeof *started);
    if (!ws || !th || !started) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory starting %d executor threads", par);
        goto done;
    }
    int opened = 0;
    for (; opened < par; opened++) {
        rc = worker_open(&r, &ws[opened], opened, err);
        if (rc != TW_OK)
            break;
    }
    if (rc != TW_OK) {
        for (int i = 0; i < opened; i++)
            worker_close(o, &ws[i]);
        goto done;
    }
    if (r.n_groups > 0) {
        for (int i = 1; i < par; i++)
            started[i] = pthread_create(&th[i], NULL, worker_main, &ws[i]) == 0;
        worker_main(&ws[0]);
        for (int i = 1; i < par; i++)
            if (started[i])
                pthread_join(th[i], NULL);
    }
    for (int i = 0; i < par; i++)
        worker_close(o, &ws[i]);
    if (stopped(o))
        rc = tw_error_set(err, TW_EIO, "stopped: the actions in flight are resumed next run");
done:
    if (out)
        *out = r.sum;
    free(ws);
    free(th);
    free(started);
    free(r.order);
    free(r.group_start);
    pthread_mutex_destroy(&r.lock);
    return rc;
}

enum tw_err tw_exec_run_due(const struct tw_exec_opts *o, size_t max, struct tw_exec_summary *out,
                            struct tw_error *err)
{
    if (!o || !o->db_path)
        return tw_error_set(err, TW_EINVAL, "the executor needs a database (--db)");
    struct tw_store *st = NULL;
    enum tw_err rc = tw_store_open(o->db_path, &st, err);
    if (rc != TW_OK)
        return rc;
    int64_t *ids = NULL;
    size_t n = 0;
    rc = tw_store_actions_due(st, now_ms(), o->dry_run, max, &ids, &n, err);
    struct tw_store_action_row *rows = NULL;
    size_t got = 0;
    if (rc == TW_OK && n) {
        rows = calloc(n, sizeof *rows);
        if (!rows)
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading %zu actions", n);
    }
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        rc = tw_store_action_get(st, ids[i], &rows[got], err);
        if (rc == TW_OK)
            got++;
    }
    free(ids);
    tw_store_close(st);
    if (rc == TW_OK)
        rc = tw_exec_run(o, rows, got, out, err);
    tw_store_action_rows_free(rows, got);
    return rc;
}
