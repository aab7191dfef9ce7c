/*
 * store_actions.c - actions in the SQLite store: added planned, moved by
 * compare-and-set on their state in one write transaction with the move
 * logged in action_transitions (store.h "actions").
 */
#include "store/store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STMT(q, s, id, err)                                  \
    sqlite3_stmt *q = tw_sq_stmt((s), (id), (err));          \
    if (!q)                                                  \
        return (err) && (err)->code ? (err)->code : TW_EIO

static void bind_id(sqlite3_stmt *q, int i, int64_t v)
{
    if (v > 0)
        sqlite3_bind_int64(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

static enum tw_err exec_stmt(struct tw_sqlite *s, enum tw_sq_id id, const char *what,
                             struct tw_error *err)
{
    STMT(q, s, id, err);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

/* Ends the transaction begun by SQ_BEGIN: commits when RC is TW_OK, and
 * rolls back when RC is an error or the COMMIT failed (busy, I/O, a full
 * disk) and left the transaction open, so no handle keeps the write lock.
 * Returns RC, or the COMMIT's error. */
static enum tw_err end_tx(struct tw_sqlite *s, enum tw_err rc, const char *what,
                          struct tw_error *err)
{
    if (rc == TW_OK)
        rc = exec_stmt(s, SQ_COMMIT, what, err);
    if (rc != TW_OK && !sqlite3_get_autocommit(s->db))
        exec_stmt(s, SQ_ROLLBACK, "rolling back", NULL);
    return rc;
}

/* Adds the action and its first line in the audit log ("" -> planned,
 * with why it was planned), in one transaction. */
enum tw_err tw_sq_action_add(struct tw_store *st, const struct tw_store_action_new *a,
                             int64_t *id, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    /* Inside a transaction the caller holds on this handle (a plan's
     * actions recorded during its read), a savepoint of it. */
    bool nested = !sqlite3_get_autocommit(s->db);
    enum tw_err rc = exec_stmt(s, nested ? SQ_SAVEPOINT_OP : SQ_BEGIN,
                               "starting to store an action", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_ACTION_ADD, err);
    if (!q) {
        rc = err && err->code ? err->code : TW_EIO;
        goto out;
    }
    bind_id(q, 1, a->plan_id);
    bind_id(q, 2, a->disk_id);
    tw_sq_text(q, 3, a->kind, false);
    tw_sq_text(q, 4, a->from_sku, true);
    tw_sq_text(q, 5, a->to_sku, true);
    tw_sq_text(q, 6, a->due_at, true);
    sqlite3_bind_int(q, 7, a->dry_run);
    tw_sq_text(q, 8, a->idempotency_key, true);
    if ((rc = tw_sq_bind_instant(q, 9, a->due_at, "the action's due time", err)) != TW_OK)
        goto out;
    bind_id(q, 10, a->vm_id);
    tw_sq_text(q, 11, a->policy, true);
    tw_sq_text(q, 12, a->reason ? a->reason : "", false);
    tw_sq_text(q, 13, a->saving, true);
    tw_sq_text(q, 14, a->currency, true);
    if (sqlite3_step(q) != SQLITE_DONE) {
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE) {
            sqlite3_reset(q);
            rc = tw_error_set(err, TW_EINVAL, "an action with idempotency key %s exists already",
                              a->idempotency_key);
        } else if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY) {
            sqlite3_reset(q);
            rc = tw_error_set(err, TW_ENOENT, "an action names a plan, disk or VM that is not "
                                              "stored (plan %lld, disk %lld, VM %lld)",
                              (long long)a->plan_id, (long long)a->disk_id,
                              (long long)a->vm_id);
        } else {
            rc = tw_sq_fail(s, q, err, "storing an action");
        }
        goto out;
    }
    sqlite3_reset(q);
    int64_t new_id = sqlite3_last_insert_rowid(s->db);
    sqlite3_stmt *log = tw_sq_stmt(s, SQ_ACTION_LOG_ADD, err);
    if (!log) {
        rc = err && err->code ? err->code : TW_EIO;
        goto out;
    }
    sqlite3_bind_int64(log, 1, new_id);
    tw_sq_text(log, 2, a->policy ? a->policy : "", false);
    tw_sq_text(log, 3, a->reason ? a->reason : "", false);
    if (sqlite3_step(log) != SQLITE_DONE) {
        rc = tw_sq_fail(s, log, err, "logging a new action");
        goto out;
    }
    sqlite3_reset(log);
    if (id)
        *id = new_id;
out:
    if (!nested)
        return end_tx(s, rc, "committing a new action", err);
    if (rc != TW_OK)
        exec_stmt(s, SQ_ROLLBACK_TO_OP, "undoing a new action", NULL);
    enum tw_err rel = exec_stmt(s, SQ_RELEASE_OP, "keeping a new action", rc == TW_OK ? err : NULL);
    return rc != TW_OK ? rc : rel;
}

/* Runs STMT (the compare-and-set, or its line in the audit log) with the
 * move's five parameters: id, from, to, owner, detail (NULL when empty
 * and DETAIL_NULL). */
static enum tw_err move_step(struct tw_sqlite *s, enum tw_sq_id stmt, int64_t id,
                             enum tw_action_state from, enum tw_action_state to,
                             const char *owner, const char *detail, bool detail_null,
                             const char *what, struct tw_error *err)
{
    sqlite3_stmt *q = tw_sq_stmt(s, stmt, err);
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    sqlite3_bind_int64(q, 1, id);
    tw_sq_text(q, 2, tw_action_state_name(from), false);
    tw_sq_text(q, 3, tw_action_state_name(to), false);
    tw_sq_text(q, 4, owner, false);
    tw_sq_text(q, 5, detail, detail_null);
    if (stmt == SQ_ACTION_CAS) {
        /* A claim held by another owner blocks the move until its lease
         * ends (the system clock, as the claimers' own). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        sqlite3_bind_int64(q, 6, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    }
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

/* A move refused while the action is still in FROM: another owner's live
 * claim holds it (the message names the holder and the lease's end). */
static enum tw_err move_refused_claim(struct tw_sqlite *s, int64_t id, enum tw_action_state from,
                                      enum tw_action_state to, const char *owner,
                                      struct tw_error *err)
{
    STMT(q, s, SQ_ACTION_CLAIMED, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "reading an action's claim");
    char holder[256] = "";
    long long until = 0;
    if (rc == SQLITE_ROW) {
        tw_sq_copy(q, 1, holder, sizeof(holder));
        until = (long long)sqlite3_column_int64(q, 2);
    }
    sqlite3_reset(q);
    return tw_error_set(err, TW_EPERM,
                        "action %lld is claimed by %s until %lld ms (epoch): %s may not move it "
                        "from %s to %s without holding the claim (claim it once that lease "
                        "has expired)",
                        (long long)id, holder[0] ? holder : "another owner", until,
                        owner && owner[0] ? owner : "a mover without a name",
                        tw_action_state_name(from), tw_action_state_name(to));
}

enum tw_err tw_sq_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                              enum tw_action_state to, const char *owner, const char *detail,
                              struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    /* BEGIN IMMEDIATE: the write lock first, so of two handles moving the
     * same action the second waits, then finds the state moved on. */
    enum tw_err rc = exec_stmt(s, SQ_BEGIN, "starting an action's move", err);
    if (rc != TW_OK)
        return rc;
    rc = move_step(s, SQ_ACTION_CAS, id, from, to, owner, detail, true, "moving an action", err);
    if (rc != TW_OK)
        goto fail;
    if (sqlite3_changes(s->db) == 0) {
        enum tw_action_state now;
        int attempts;
        rc = tw_sq_action_state(st, id, &now, &attempts, err);
        if (rc == TW_OK && now == from)
            rc = move_refused_claim(s, id, from, to, owner, err);
        else if (rc == TW_OK)
            rc = tw_error_set(err, TW_EPERM,
                              "action %lld is %s, not %s: another worker moved it; it was "
                              "not moved to %s",
                              (long long)id, tw_action_state_name(now),
                              tw_action_state_name(from), tw_action_state_name(to));
        goto fail;
    }
    rc = move_step(s, SQ_TRANSITION_ADD, id, from, to, owner, detail, false,
                   "logging an action's move", err);
    if (rc != TW_OK)
        goto fail;
fail:
    return end_tx(s, rc, "committing an action's move", err);
}

/* Why a claim or a release on action ID changed nothing, inside the
 * transaction that tried: no such action, finished, or another's claim. */
static enum tw_err claim_refused(struct tw_sqlite *s, int64_t id, const char *owner,
                                 bool release, struct tw_error *err)
{
    STMT(q, s, SQ_ACTION_CLAIMED, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading an action's claim");
    char state[16], holder[256];
    tw_sq_copy(q, 0, state, sizeof(state));
    tw_sq_copy(q, 1, holder, sizeof(holder));
    bool leased = sqlite3_column_type(q, 2) != SQLITE_NULL;
    long long until = (long long)sqlite3_column_int64(q, 2);
    sqlite3_reset(q);
    if (release)
        return tw_error_set(err, TW_EPERM, "action %lld is not claimed by %s%s%s", (long long)id,
                            owner, leased && holder[0] ? ": it is claimed by " : "",
                            leased ? holder : "");
    if (strcmp(state, "done") == 0 || strcmp(state, "skipped") == 0 ||
        strcmp(state, "failed") == 0)
        return tw_error_set(err, TW_EPERM, "action %lld is %s: there is nothing to claim",
                            (long long)id, state);
    return tw_error_set(err, TW_EPERM,
                        "action %lld is claimed by %s until %lld ms (epoch); %s may take it "
                        "once that lease has expired",
                        (long long)id, holder, until, owner);
}

/* One compare-and-set (SQ_ACTION_CLAIM or SQ_ACTION_RELEASE) in a
 * BEGIN IMMEDIATE transaction, so that the refusal's reason is read in the
 * same snapshot as the attempt. */
static enum tw_err claim_cas(struct tw_sqlite *s, enum tw_sq_id stmt, int64_t id,
                             const char *owner, int64_t now_ms, int64_t lease_ms,
                             struct tw_error *err)
{
    enum tw_err rc = exec_stmt(s, SQ_BEGIN, "starting an action's claim", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_stmt *q = tw_sq_stmt(s, stmt, err);
    if (!q) {
        rc = err && err->code ? err->code : TW_EIO;
        goto fail;
    }
    sqlite3_bind_int64(q, 1, id);
    tw_sq_text(q, 2, owner, false);
    if (stmt == SQ_ACTION_CLAIM) {
        sqlite3_bind_int64(q, 3, now_ms);
        sqlite3_bind_int64(q, 4, lease_ms);
    }
    if (sqlite3_step(q) != SQLITE_DONE) {
        rc = tw_sq_fail(s, q, err, "claiming an action");
        goto fail;
    }
    sqlite3_reset(q);
    if (sqlite3_changes(s->db) == 0) {
        rc = claim_refused(s, id, owner, stmt == SQ_ACTION_RELEASE, err);
        goto fail;
    }
fail:
    return end_tx(s, rc, "committing an action's claim", err);
}

enum tw_err tw_sq_action_claim(struct tw_store *st, int64_t id, const char *owner, int64_t now_ms,
                               int64_t lease_ms, int64_t *until_ms, struct tw_error *err)
{
    enum tw_err rc = claim_cas((struct tw_sqlite *)st, SQ_ACTION_CLAIM, id, owner, now_ms,
                               lease_ms, err);
    if (rc == TW_OK && until_ms)
        *until_ms = now_ms + lease_ms;
    return rc;
}

enum tw_err tw_sq_action_release(struct tw_store *st, int64_t id, const char *owner,
                                 struct tw_error *err)
{
    return claim_cas((struct tw_sqlite *)st, SQ_ACTION_RELEASE, id, owner, 0, 0, err);
}

enum tw_err tw_sq_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                               int *attempts, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ACTION_GET, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading an action");
    const char *name = (const char *)sqlite3_column_text(q, 0);
    enum tw_err e = tw_error_set(err, TW_EIO, "%s: action %lld has an unknown state", s->path,
                                 (long long)id);
    for (int k = TW_ACT_PLANNED; k <= TW_ACT_FAILED; k++) {
        if (name && strcmp(name, tw_action_state_name((enum tw_action_state)k)) == 0) {
            if (state)
                *state = (enum tw_action_state)k;
            tw_error_clear(err);
            e = TW_OK;
        }
    }
    if (attempts)
        *attempts = sqlite3_column_int(q, 1);
    sqlite3_reset(q);
    return e;
}

enum tw_err tw_sq_action_log_count(struct tw_store *st, int64_t id, size_t *n,
                                   struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_TRANSITION_COUNT, err);
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "counting an action's moves");
    *n = (size_t)sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    return TW_OK;
}

/* ---- observations from ARM, policies, plans ---- */

static const char *source_name(enum tw_obs_source s)
{
    return s == TW_OBS_ARM ? "arm" : "agent";
}

/* TW_OK when row ID exists according to Q (bound by us), else TW_ENOENT. */
static enum tw_err exists(struct tw_sqlite *s, enum tw_sq_id qid, int64_t id, const char *what,
                          struct tw_error *err)
{
    STMT(q, s, qid, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc == SQLITE_ROW)
        return TW_OK;
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, NULL, err, what);
    return tw_error_set(err, TW_ENOENT, "there is no %s %lld", what, (long long)id);
}

/* Runs WORK inside one write transaction. */
#define IN_TX(s, err, rc, work)                                                      \
    do {                                                                             \
        (rc) = exec_stmt((s), SQ_BEGIN, "starting a transaction", (err));            \
        if ((rc) == TW_OK) {                                                         \
            work;                                                                    \
            (rc) = end_tx((s), (rc), "committing", (err));                           \
        }                                                                            \
    } while (0)

enum tw_err tw_sq_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                const char *observed_at, int64_t ms, enum tw_obs_source source,
                                struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    enum tw_err rc;
    IN_TX(s, err, rc, {
        rc = exists(s, SQ_VM_EXISTS, vm_id, "VM", err);
        sqlite3_stmt *q = rc == TW_OK ? tw_sq_stmt(s, SQ_POWER_OBS, err) : NULL;
        if (rc == TW_OK && !q)
            rc = err && err->code ? err->code : TW_EIO;
        if (q) {
            sqlite3_bind_int64(q, 1, vm_id);
            tw_sq_text(q, 2, observed_at, false);
            sqlite3_bind_int64(q, 3, ms);
            tw_sq_text(q, 4, state, false);
            tw_sq_text(q, 5, source_name(source), false);
            if (sqlite3_step(q) != SQLITE_DONE)
                rc = tw_sq_fail(s, q, err, "storing a power state");
            else
                sqlite3_reset(q);
        }
        /* The VM's current state only when this is its newest observation. */
        sqlite3_stmt *v = rc == TW_OK ? tw_sq_stmt(s, SQ_VM_POWER, err) : NULL;
        if (rc == TW_OK && !v)
            rc = err && err->code ? err->code : TW_EIO;
        if (v) {
            sqlite3_bind_int64(v, 1, vm_id);
            tw_sq_text(v, 2, state, false);
            tw_sq_text(v, 3, observed_at, false);
            sqlite3_bind_int64(v, 4, ms);
            if (sqlite3_step(v) != SQLITE_DONE)
                rc = tw_sq_fail(s, v, err, "updating a VM's power state");
            else
                sqlite3_reset(v);
        }
    });
    return rc;
}

enum tw_err tw_sq_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                              const char *tier, int64_t size_gib, const char *observed_at,
                              int64_t ms, enum tw_obs_source source, bool *added,
                              struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    enum tw_err rc;
    IN_TX(s, err, rc, {
        rc = exists(s, SQ_DISK_EXISTS, disk_id, "disk", err);
        bool same = false;
        sqlite3_stmt *p = rc == TW_OK ? tw_sq_stmt(s, SQ_HIST_PREV, err) : NULL;
        if (rc == TW_OK && !p)
            rc = err && err->code ? err->code : TW_EIO;
        if (p) {
            sqlite3_bind_int64(p, 1, disk_id);
            sqlite3_bind_int64(p, 2, ms);
            int step = sqlite3_step(p);
            if (step == SQLITE_ROW) {
                const char *ps = (const char *)sqlite3_column_text(p, 0);
                const char *pt = (const char *)sqlite3_column_text(p, 1);
                same = ps && strcmp(ps, sku) == 0 && strcmp(pt ? pt : "", tier) == 0 &&
                       sqlite3_column_int64(p, 2) == size_gib;
            } else if (step != SQLITE_DONE) {
                rc = tw_sq_fail(s, p, err, "reading a disk's SKU history");
            }
            sqlite3_reset(p);
        }
        sqlite3_stmt *q = rc == TW_OK && !same ? tw_sq_stmt(s, SQ_HIST_OBS, err) : NULL;
        if (rc == TW_OK && !same && !q)
            rc = err && err->code ? err->code : TW_EIO;
        if (q) {
            sqlite3_bind_int64(q, 1, disk_id);
            tw_sq_text(q, 2, observed_at, false);
            sqlite3_bind_int64(q, 3, ms);
            tw_sq_text(q, 4, sku, false);
            tw_sq_text(q, 5, tier, true);
            sqlite3_bind_int64(q, 6, size_gib);
            tw_sq_text(q, 7, source_name(source), false);
            if (sqlite3_step(q) != SQLITE_DONE) {
                rc = tw_sq_fail(s, q, err, "storing a SKU observation");
            } else {
                sqlite3_reset(q);
                if (added)
                    *added = true;
            }
        }
    });
    return rc;
}

enum tw_err tw_sq_policy_put(struct tw_store *st, const char *name, const char *body,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_POLICY_PUT, err);
    tw_sq_text(q, 1, name, false);
    tw_sq_text(q, 2, body, false);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "storing a policy");
    sqlite3_reset(q);
    return TW_OK;
}

enum tw_err tw_sq_policy_get(struct tw_store *st, const char *name, char **body,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_POLICY_GET, err);
    tw_sq_text(q, 1, name, false);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no policy named %.128s", name);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading a policy");
    const char *t = (const char *)sqlite3_column_text(q, 0);
    size_t n = t ? (size_t)sqlite3_column_bytes(q, 0) : 0;
    char *copy = malloc(n + 1);
    if (copy) {
        memcpy(copy, t ? t : "", n);
        copy[n] = '\0';
    }
    sqlite3_reset(q);
    if (!copy)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading a policy");
    *body = copy;
    return TW_OK;
}

enum tw_err tw_sq_plan_add(struct tw_store *st, const char *policy, const char *from,
                           const char *to, const char *body, int64_t *id, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_PLAN_ADD, err);
    tw_sq_text(q, 1, policy, false);
    tw_sq_text(q, 2, body, false);
    tw_sq_text(q, 3, from, true);
    tw_sq_text(q, 4, to, true);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "storing a plan");
    sqlite3_reset(q);
    if (id)
        *id = sqlite3_last_insert_rowid(s->db);
    return TW_OK;
}

/* ---- schema 5: the audit log, the executor's queue, originals ---- */

/* Row Q (TW_SQ_ACTION_ROW's columns) into *R; false when out of memory. */
static bool action_from_row(sqlite3_stmt *q, struct tw_store_action_row *r)
{
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(q, 0);
    r->plan_id = sqlite3_column_int64(q, 1);
    r->vm_id = sqlite3_column_int64(q, 2);
    r->disk_id = sqlite3_column_int64(q, 3);
    tw_sq_copy(q, 4, r->vm, sizeof(r->vm));
    tw_sq_copy(q, 5, r->disk, sizeof(r->disk));
    tw_sq_copy(q, 6, r->vm_resource_id, sizeof(r->vm_resource_id));
    tw_sq_copy(q, 7, r->disk_resource_id, sizeof(r->disk_resource_id));
    tw_sq_copy(q, 8, r->kind, sizeof(r->kind));
    tw_sq_copy(q, 9, r->from_sku, sizeof(r->from_sku));
    tw_sq_copy(q, 10, r->to_sku, sizeof(r->to_sku));
    tw_sq_copy(q, 11, r->due_at, sizeof(r->due_at));
    r->due_ms = sqlite3_column_int64(q, 12);
    tw_sq_copy(q, 13, r->state, sizeof(r->state));
    tw_sq_copy(q, 14, r->policy, sizeof(r->policy));
    tw_sq_copy(q, 15, r->reason, sizeof(r->reason));
    tw_sq_copy(q, 16, r->saving, sizeof(r->saving));
    tw_sq_copy(q, 17, r->currency, sizeof(r->currency));
    r->attempts = sqlite3_column_int(q, 18);
    tw_sq_copy(q, 19, r->updated_at, sizeof(r->updated_at));
    tw_sq_copy(q, 20, r->requested_at, sizeof(r->requested_at));
    r->dry_run = sqlite3_column_int(q, 21) != 0;
    const char *url = (const char *)sqlite3_column_text(q, 22);
    size_t n = url ? (size_t)sqlite3_column_bytes(q, 22) : 0;
    r->operation_url = malloc(n + 1);
    if (!r->operation_url)
        return false;
    memcpy(r->operation_url, url ? url : "", n);
    r->operation_url[n] = '\0';
    tw_sq_copy(q, 23, r->last_error, sizeof(r->last_error));
    tw_sq_copy(q, 24, r->claim_owner, sizeof(r->claim_owner));
    r->claim_until_ms = sqlite3_column_int64(q, 25);
    return true;
}

static void bind_ms_or_null(sqlite3_stmt *q, int i, int64_t v)
{
    if (v > 0)
        sqlite3_bind_int64(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

enum tw_err tw_sq_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                               struct tw_store_action_row **rows, size_t *n, bool *more,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ACTIONS_LIST, err);
    tw_sq_text(q, 1, f->vm, true);
    bind_id(q, 2, f->disk_id);
    tw_sq_text(q, 3, f->state, true);
    bind_ms_or_null(q, 4, f->due_from_ms);
    bind_ms_or_null(q, 5, f->due_to_ms);
    sqlite3_bind_int64(q, 6, f->after_id);
    /* One more than the page: whether more follow. */
    sqlite3_bind_int64(q, 7, f->limit ? (int64_t)f->limit + 1 : -1);
    struct tw_store_action_row *arr = NULL;
    size_t k = 0, cap = 0;
    int rc;
    enum tw_err e = TW_OK;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (f->limit && k == f->limit) {
            if (more)
                *more = true;
            break;
        }
        if (k == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct tw_store_action_row *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                e = tw_error_set(err, TW_ENOMEM, "out of memory listing actions");
                break;
            }
            arr = p;
            cap = ncap;
        }
        if (!action_from_row(q, &arr[k])) {
            free(arr[k].operation_url);
            e = tw_error_set(err, TW_ENOMEM, "out of memory listing actions");
            break;
        }
        k++;
    }
    if (e == TW_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        e = tw_sq_fail(s, NULL, err, "listing actions");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (e != TW_OK) {
        tw_store_action_rows_free(arr, k);
        if (more)
            *more = false;
        return e;
    }
    *rows = arr;
    *n = k;
    return TW_OK;
}

enum tw_err tw_sq_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ACTION_ROW_GET, err);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading an action");
    bool ok = action_from_row(q, row);
    sqlite3_reset(q);
    if (!ok) {
        free(row->operation_url);
        memset(row, 0, sizeof(*row));
        return tw_error_set(err, TW_ENOMEM, "out of memory reading an action");
    }
    return TW_OK;
}

enum tw_err tw_sq_action_moves(struct tw_store *st, int64_t id,
                               struct tw_store_action_move_row **rows, size_t *n,
                               struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_TRANSITIONS, err);
    sqlite3_bind_int64(q, 1, id);
    struct tw_store_action_move_row *arr = NULL;
    size_t k = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (k == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct tw_store_action_move_row *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                sqlite3_reset(q);
                free(arr);
                return tw_error_set(err, TW_ENOMEM, "out of memory reading an action's moves");
            }
            arr = p;
            cap = ncap;
        }
        struct tw_store_action_move_row *m = &arr[k++];
        tw_sq_copy(q, 0, m->from_state, sizeof(m->from_state));
        tw_sq_copy(q, 1, m->to_state, sizeof(m->to_state));
        tw_sq_copy(q, 2, m->at, sizeof(m->at));
        tw_sq_copy(q, 3, m->owner, sizeof(m->owner));
        tw_sq_copy(q, 4, m->detail, sizeof(m->detail));
    }
    if (rc != SQLITE_DONE) {
        free(arr);
        return tw_sq_fail(s, q, err, "reading an action's moves");
    }
    sqlite3_reset(q);
    if (k == 0) {
        /* No line at all: no such action (every action has its first). */
        enum tw_action_state state;
        enum tw_err e = tw_sq_action_state(st, id, &state, NULL, err);
        if (e != TW_OK)
            return e;
    }
    *rows = arr;
    *n = k;
    return TW_OK;
}

enum tw_err tw_sq_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                              int64_t **ids, size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ACTIONS_DUE, err);
    sqlite3_bind_int64(q, 1, now_ms);
    sqlite3_bind_int(q, 2, dry_run);
    sqlite3_bind_int64(q, 3, max ? (int64_t)max : -1);
    int64_t *arr = NULL;
    size_t k = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (k == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            int64_t *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                sqlite3_reset(q);
                free(arr);
                return tw_error_set(err, TW_ENOMEM, "out of memory listing due actions");
            }
            arr = p;
            cap = ncap;
        }
        arr[k++] = sqlite3_column_int64(q, 0);
    }
    if (rc != SQLITE_DONE) {
        free(arr);
        return tw_sq_fail(s, q, err, "listing due actions");
    }
    sqlite3_reset(q);
    *ids = arr;
    *n = k;
    return TW_OK;
}

/* One update of action ID under OWNER's claim (SQ_ACTION_SET_OP or
 * SQ_ACTION_ATTEMPT), with why it changed nothing when it didn't. */
static enum tw_err claimed_update(struct tw_sqlite *s, enum tw_sq_id stmt, int64_t id,
                                  const char *owner, const char *url, const char *what,
                                  struct tw_error *err)
{
    enum tw_err rc = exec_stmt(s, SQ_BEGIN, "starting to update an action", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_stmt *q = tw_sq_stmt(s, stmt, err);
    if (!q) {
        rc = err && err->code ? err->code : TW_EIO;
        goto out;
    }
    sqlite3_bind_int64(q, 1, id);
    tw_sq_text(q, 2, owner, false);
    if (url)
        tw_sq_text(q, 3, url, true);
    if (sqlite3_step(q) != SQLITE_DONE) {
        rc = tw_sq_fail(s, q, err, what);
        goto out;
    }
    sqlite3_reset(q);
    if (sqlite3_changes(s->db) == 0)
        rc = claim_refused(s, id, owner, true, err);
out:
    return end_tx(s, rc, "committing an action's update", err);
}

enum tw_err tw_sq_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                       const char *url, struct tw_error *err)
{
    return claimed_update((struct tw_sqlite *)st, SQ_ACTION_SET_OP, id, owner, url,
                          "keeping an action's operation", err);
}

enum tw_err tw_sq_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                       struct tw_error *err)
{
    return claimed_update((struct tw_sqlite *)st, SQ_ACTION_ATTEMPT, id, owner, NULL,
                          "counting an action's send", err);
}

enum tw_err tw_sq_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                 struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    enum tw_err rc = exec_stmt(s, SQ_BEGIN, "starting to move an action's due time", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_ACTION_SET_DUE, err);
    if (!q) {
        rc = err && err->code ? err->code : TW_EIO;
        goto out;
    }
    sqlite3_bind_int64(q, 1, id);
    tw_sq_text(q, 2, due_at, false);
    if ((rc = tw_sq_bind_instant(q, 3, due_at, "the action's due time", err)) != TW_OK)
        goto out;
    if (sqlite3_step(q) != SQLITE_DONE) {
        rc = tw_sq_fail(s, q, err, "moving an action's due time");
        goto out;
    }
    sqlite3_reset(q);
    if (sqlite3_changes(s->db) == 0) {
        enum tw_action_state state;
        rc = tw_sq_action_state(st, id, &state, NULL, err);
        if (rc == TW_OK)
            rc = tw_error_set(err, TW_EPERM, "action %lld is %s: only a planned or checked "
                              "action's due time can move", (long long)id,
                              tw_action_state_name(state));
    }
out:
    return end_tx(s, rc, "committing an action's due time", err);
}

enum tw_err tw_sq_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                    const char *tier, int64_t action_id, const char *at,
                                    bool *kept, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    enum tw_err rc;
    IN_TX(s, err, rc, {
        rc = exists(s, SQ_DISK_EXISTS, disk_id, "disk", err);
        sqlite3_stmt *q = rc == TW_OK ? tw_sq_stmt(s, SQ_ORIGINAL_SET, err) : NULL;
        if (rc == TW_OK && !q)
            rc = err && err->code ? err->code : TW_EIO;
        if (q) {
            sqlite3_bind_int64(q, 1, disk_id);
            tw_sq_text(q, 2, sku, false);
            tw_sq_text(q, 3, tier, false);
            bind_id(q, 4, action_id);
            tw_sq_text(q, 5, at, false);
            if (sqlite3_step(q) != SQLITE_DONE) {
                rc = sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY
                         ? tw_error_set(err, TW_ENOENT, "there is no action %lld",
                                        (long long)action_id)
                         : tw_sq_fail(s, q, err, "recording a disk's original SKU");
                sqlite3_reset(q);
            } else {
                sqlite3_reset(q);
                if (kept)
                    *kept = sqlite3_changes(s->db) == 0;
            }
        }
    });
    return rc;
}

enum tw_err tw_sq_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku, char *tier,
                                    bool *found, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ORIGINAL_GET, err);
    sqlite3_bind_int64(q, 1, disk_id);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        *found = true;
        if (sku)
            tw_sq_copy(q, 0, sku, 32);
        if (tier)
            tw_sq_copy(q, 1, tier, 16);
    } else if (rc != SQLITE_DONE) {
        return tw_sq_fail(s, q, err, "reading a disk's original SKU");
    }
    sqlite3_reset(q);
    return TW_OK;
}

enum tw_err tw_sq_disk_original_clear(struct tw_store *st, int64_t disk_id,
                                      struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_ORIGINAL_CLEAR, err);
    sqlite3_bind_int64(q, 1, disk_id);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "forgetting a disk's original SKU");
    sqlite3_reset(q);
    return TW_OK;
}
