/*
 * store_pg_actions.c - actions in the PostgreSQL store (store.h
 * "actions"), the port of store_actions.c: added planned with the first
 * line of the audit log, moved by compare-and-set on their state in one
 * transaction with the move logged, claimed with leases, and the
 * observations, policies, plans and disk originals that file also keeps.
 *
 * Several backends write at once, each on its own connections (READ
 * COMMITTED).  What keeps two of them from running the same action is
 * that every write to an action is one UPDATE whose WHERE clause holds
 * what the writer expects (the state, the claim's owner, the lease's
 * end), judged by the number of rows it changed: PostgreSQL takes the
 * row's lock for the UPDATE and, when another transaction changed the
 * row meanwhile, evaluates the WHERE clause again on the row as that one
 * committed it, so of two writers expecting the same row exactly one
 * matches.  A move's line in the audit log is written in the same
 * transaction as the move, so the log is complete whatever dies when.
 *
 * Every instant is this process's (tw_pg_now_text, tw_pg_now_ms, or the
 * caller's now_ms): never the database server's clock.
 */
#include "store/store_pg.h"

#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG(st) ((struct tw_pg *)(st))

/* An action as the audit log shows it (struct tw_store_action_row, in its
 * members' order; action_from_row reads it). */
#define ACTION_ROW                                                                                 \
    "SELECT a.id, a.plan_id, a.vm_id, a.disk_id, v.name, d.name, v.resource_id, "                  \
    "d.managed_disk_id, a.kind, a.from_sku, a.to_sku, a.due_at, a.due_ms, a.state, a.policy, "     \
    "a.reason, a.saving, a.currency, a.attempts, a.updated_at, a.requested_at, a.dry_run, "        \
    "a.arm_operation_url, a.last_error, a.claim_owner, a.claim_until_ms FROM actions a "           \
    "LEFT JOIN vms v ON v.id = a.vm_id LEFT JOIN disks d ON d.id = a.disk_id"

/* How many times a whole write transaction runs when PostgreSQL ends it
 * for a deadlock or a serialization failure. */
#define TRIES 3

static void p_id(struct tw_pg_params *p, int64_t v)
{
    if (v > 0)
        tw_pg_p_int(p, v);
    else
        tw_pg_p_null(p);
}

/* TEXT's instant in milliseconds into *MS, *NUL when TEXT is NULL or
 * empty; TW_EPARSE naming WHAT when it is no RFC 3339 time (as the SQLite
 * store's tw_sq_bind_instant says it). */
static enum tw_err instant(const char *text, const char *what, int64_t *ms, bool *nul,
                           struct tw_error *err)
{
    *ms = 0;
    *nul = !text || !text[0];
    if (*nul)
        return TW_OK;
    if (!tw_rfc3339_ms(text, ms))
        return tw_error_set(err, TW_EPARSE,
                            "%s \"%.60s\" is not an RFC 3339 time (e.g. 2026-11-14T09:30:00Z)",
                            what, text);
    return TW_OK;
}

/*
 * Runs FN(PG, ARG, ERR) in a transaction of its own (a savepoint of the
 * caller's when one is open): committed when it returns TW_OK, rolled
 * back otherwise.  A whole transaction that PostgreSQL ended for a
 * deadlock or a serialization failure runs again (TRIES in all); FN
 * writes its outputs only once it has nothing left to fail, or writes
 * them again on each run.
 */
typedef enum tw_err (*tx_fn)(struct tw_pg *pg, void *arg, struct tw_error *err);

static enum tw_err in_tx(struct tw_pg *pg, tx_fn fn, void *arg, const char *what,
                         struct tw_error *err)
{
    for (int attempt = 1;; attempt++) {
        bool outer = pg->tx_depth == 0;
        enum tw_err rc = tw_pg_begin(pg, what, err);
        if (rc != TW_OK)
            return rc;
        rc = fn(pg, arg, err);
        if (rc == TW_OK)
            rc = tw_pg_commit(pg, what, err); /* undoes the transaction when it fails */
        else
            tw_pg_rollback(pg);
        if (rc == TW_OK || !outer || attempt >= TRIES || !tw_pg_retryable(pg))
            return rc;
        tw_error_clear(err);
    }
}

/* ---- adding an action ---- */

TW_PG_STMT(q_action_add,
           "INSERT INTO actions(plan_id, disk_id, kind, from_sku, to_sku, due_at, due_ms, "
           "requested_at, dry_run, idempotency_key, vm_id, policy, reason, saving, currency, "
           "updated_at) VALUES ($1::bigint, $2::bigint, $3::text, $4::text, $5::text, "
           "$6::text, $9::bigint, $15::text, $7::bigint, $8::text, coalesce($10::bigint, "
           "(SELECT vm_id FROM disks WHERE id = $2::bigint)), $11::text, $12::text, $13::text, "
           "$14::text, $15::text) RETURNING id");
TW_PG_STMT(q_action_log_add,
           "INSERT INTO action_transitions(action_id, from_state, to_state, at, owner, detail) "
           "VALUES ($1::bigint, NULL, 'planned', $4::text, $2::text, $3::text)");

struct add_arg {
    const struct tw_store_action_new *a;
    int64_t due_ms;
    bool due_null;
    int64_t id;
};

static enum tw_err add_tx(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct add_arg *x = arg;
    const struct tw_store_action_new *a = x->a;
    char now[40];
    tw_pg_now_text(now);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    p_id(&p, a->plan_id);
    p_id(&p, a->disk_id);
    tw_pg_p_text(&p, a->kind);
    tw_pg_p_text0(&p, a->from_sku);
    tw_pg_p_text0(&p, a->to_sku);
    tw_pg_p_text0(&p, a->due_at);
    tw_pg_p_int(&p, a->dry_run ? 1 : 0);
    tw_pg_p_text0(&p, a->idempotency_key);
    if (x->due_null)
        tw_pg_p_null(&p);
    else
        tw_pg_p_int(&p, x->due_ms);
    p_id(&p, a->vm_id);
    tw_pg_p_text0(&p, a->policy);
    tw_pg_p_text(&p, a->reason ? a->reason : "");
    tw_pg_p_text0(&p, a->saving);
    tw_pg_p_text0(&p, a->currency);
    tw_pg_p_text(&p, now);
    PGresult *r = NULL;
    struct tw_error e2 = {0};
    enum tw_err rc = tw_pg_run(pg, &q_action_add, &p, &r, "storing an action", &e2);
    if (rc != TW_OK) {
        /* The idempotency key's unique index refuses a second action
         * with the key, whichever backend added the first. */
        if (strcmp(pg->sqlstate, "23505") == 0)
            return tw_error_set(err, TW_EINVAL, "an action with idempotency key %s exists already",
                                a->idempotency_key);
        if (strcmp(pg->sqlstate, "23503") == 0)
            return tw_error_set(err, TW_ENOENT,
                                "an action names a plan, disk or VM that is not "
                                "stored (plan %lld, disk %lld, VM %lld)",
                                (long long)a->plan_id, (long long)a->disk_id, (long long)a->vm_id);
        if (err)
            *err = e2;
        return rc;
    }
    x->id = PQntuples(r) == 1 ? tw_pg_int(r, 0, 0) : 0;
    PQclear(r);
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->id);
    tw_pg_p_text(&p, a->policy ? a->policy : "");
    tw_pg_p_text(&p, a->reason ? a->reason : "");
    tw_pg_p_text(&p, now);
    return tw_pg_run(pg, &q_action_log_add, &p, NULL, "logging a new action", err);
}

/* Adds the action and its first line in the audit log ("" -> planned,
 * with why it was planned), in one transaction: a savepoint of the
 * caller's when it holds one on this handle (a plan's actions recorded
 * during its read). */
enum tw_err tw_pg_action_add(struct tw_store *st, const struct tw_store_action_new *a, int64_t *id,
                             struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    struct add_arg x = {.a = a};
    enum tw_err rc = instant(a->due_at, "the action's due time", &x.due_ms, &x.due_null, err);
    if (rc != TW_OK)
        return rc;
    rc = in_tx(pg, add_tx, &x, "storing an action", err);
    if (rc == TW_OK && id)
        *id = x.id;
    return rc;
}

/* ---- reading an action's state ---- */

TW_PG_STMT(q_action_get, "SELECT state, attempts, claim_owner, version FROM actions "
                         "WHERE id = $1::bigint");

enum tw_err tw_pg_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                               int *attempts, struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(pg, &q_action_get, &p, &r, "reading an action", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    }
    const char *name = tw_pg_text(r, 0, 0);
    enum tw_err e =
        tw_error_set(err, TW_EIO, "%s: action %lld has an unknown state", pg->label, (long long)id);
    for (int k = TW_ACT_PLANNED; k <= TW_ACT_FAILED; k++) {
        if (strcmp(name, tw_action_state_name((enum tw_action_state)k)) == 0) {
            if (state)
                *state = (enum tw_action_state)k;
            tw_error_clear(err);
            e = TW_OK;
        }
    }
    if (attempts)
        *attempts = (int)tw_pg_int(r, 0, 1);
    PQclear(r);
    return e;
}

/* ---- moves ---- */

/* The compare-and-set of a move: the action moves only from FROM, and
 * only for the mover ($4) or when no live claim holds it (the lease's end
 * against this process's clock, $6, as the claimers' own). */
TW_PG_STMT(q_action_cas,
           "UPDATE actions SET state = $3::text, version = version + 1, "
           "claim_owner = nullif($4::text, ''), "
           "attempts = attempts + CASE WHEN $3::text = 'sent' THEN 1 ELSE 0 END, "
           "last_error = CASE WHEN $3::text = 'failed' THEN $5::text ELSE last_error END, "
           "detail = coalesce($5::text, detail), "
           "reason = CASE WHEN $3::text IN ('skipped', 'failed') AND $5::text IS NOT NULL "
           "THEN $5::text ELSE reason END, "
           "updated_at = $7::text, "
           "finished_at = CASE WHEN $3::text IN ('done', 'skipped', 'failed') THEN $7::text "
           "ELSE finished_at END "
           "WHERE id = $1::bigint AND state = $2::text AND (claim_owner IS NULL OR "
           "claim_owner = $4::text OR claim_until_ms IS NULL OR claim_until_ms <= $6::bigint)");
TW_PG_STMT(q_transition_add,
           "INSERT INTO action_transitions(action_id, from_state, to_state, at, owner, detail) "
           "VALUES ($1::bigint, $2::text, $3::text, $6::text, $4::text, $5::text)");
TW_PG_STMT(q_action_claimed, "SELECT state, claim_owner, claim_until_ms FROM actions "
                             "WHERE id = $1::bigint");

/* What an action's claim is now: whether it exists, its state, holder
 * and lease (LEASED: the lease is set). */
struct claim_now {
    bool found, leased;
    char state[16], holder[256];
    long long until;
};

static enum tw_err claim_read(struct tw_pg *pg, int64_t id, struct claim_now *c,
                              struct tw_error *err)
{
    memset(c, 0, sizeof(*c));
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(pg, &q_action_claimed, &p, &r, "reading an action's claim", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 1) {
        c->found = true;
        tw_pg_copy(c->state, sizeof(c->state), r, 0, 0);
        tw_pg_copy(c->holder, sizeof(c->holder), r, 0, 1);
        c->leased = !tw_pg_null(r, 0, 2);
        c->until = (long long)tw_pg_int(r, 0, 2);
    }
    PQclear(r);
    return TW_OK;
}

/* Whether a claim C read now would let OWNER write at NOW_MS (none, its
 * own, or a lease ended): the test of the compare-and-sets' WHERE. */
static bool claim_open(const struct claim_now *c, const char *owner, int64_t now_ms)
{
    return !c->holder[0] || strcmp(c->holder, owner) == 0 || !c->leased || c->until <= now_ms;
}

struct move_arg {
    int64_t id;
    enum tw_action_state from, to;
    const char *owner, *detail;
};

static enum tw_err move_tx(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct move_arg *m = arg;
    const char *from = tw_action_state_name(m->from), *to = tw_action_state_name(m->to);
    /* The refusal's reason is read after the compare-and-set changed
     * nothing; should it show the action movable after all (a claim
     * released in between), the compare-and-set is tried again, so what
     * is said is what was true. */
    for (int tries = 0;; tries++) {
        char now[40];
        tw_pg_now_text(now);
        int64_t now_ms = tw_pg_now_ms();
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, m->id);
        tw_pg_p_text(&p, from);
        tw_pg_p_text(&p, to);
        tw_pg_p_text(&p, m->owner);
        tw_pg_p_text0(&p, m->detail);
        tw_pg_p_int(&p, now_ms);
        tw_pg_p_text(&p, now);
        int64_t n = 0;
        enum tw_err rc = tw_pg_run_n(pg, &q_action_cas, &p, &n, "moving an action", err);
        if (rc != TW_OK)
            return rc;
        if (n == 1) {
            tw_pg_p_init(&p);
            tw_pg_p_int(&p, m->id);
            tw_pg_p_text(&p, from);
            tw_pg_p_text(&p, to);
            tw_pg_p_text(&p, m->owner);
            tw_pg_p_text(&p, m->detail ? m->detail : "");
            tw_pg_p_text(&p, now);
            return tw_pg_run(pg, &q_transition_add, &p, NULL, "logging an action's move", err);
        }
        struct claim_now c;
        if ((rc = claim_read(pg, m->id, &c, err)) != TW_OK)
            return rc;
        if (!c.found)
            return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)m->id);
        if (strcmp(c.state, from) != 0) {
            enum tw_action_state now_state;
            rc = tw_pg_action_state(&pg->base, m->id, &now_state, NULL, err);
            if (rc != TW_OK)
                return rc;
            return tw_error_set(err, TW_EPERM,
                                "action %lld is %s, not %s: another worker moved it; it was "
                                "not moved to %s",
                                (long long)m->id, tw_action_state_name(now_state), from, to);
        }
        if (claim_open(&c, m->owner, tw_pg_now_ms()) && tries < TRIES)
            continue;
        return tw_error_set(err, TW_EPERM,
                            "action %lld is claimed by %s until %lld ms (epoch): %s may not move "
                            "it from %s to %s without holding the claim (claim it once that "
                            "lease has expired)",
                            (long long)m->id, c.holder[0] ? c.holder : "another owner", c.until,
                            m->owner && m->owner[0] ? m->owner : "a mover without a name", from,
                            to);
    }
}

enum tw_err tw_pg_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                              enum tw_action_state to, const char *owner, const char *detail,
                              struct tw_error *err)
{
    struct move_arg m = {
        .id = id, .from = from, .to = to, .owner = owner ? owner : "", .detail = detail};
    return in_tx(PG(st), move_tx, &m, "moving an action", err);
}

/* ---- claims ---- */

/* A claim: the action not finished, and no live claim of another's (the
 * lease's end against the claimer's NOW, $3). */
TW_PG_STMT(q_action_claim,
           "UPDATE actions SET claim_owner = $2::text, claim_until_ms = $3::bigint + $4::bigint, "
           "version = version + 1 WHERE id = $1::bigint AND state NOT IN ('done', 'skipped', "
           "'failed') AND (claim_owner IS NULL OR claim_owner = $2::text OR claim_until_ms IS "
           "NULL OR claim_until_ms <= $3::bigint)");
TW_PG_STMT(q_action_release,
           "UPDATE actions SET claim_owner = NULL, claim_until_ms = NULL, version = version + 1 "
           "WHERE id = $1::bigint AND claim_owner = $2::text AND claim_until_ms IS NOT NULL");

/* Why a claim or a release (or a write under the claim) of action ID
 * changed nothing, from the claim as it is now: no such action, finished,
 * or another's claim. */
static enum tw_err claim_refused(const struct claim_now *c, int64_t id, const char *owner,
                                 bool release, struct tw_error *err)
{
    if (!c->found)
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    if (release)
        return tw_error_set(err, TW_EPERM, "action %lld is not claimed by %s%s%s", (long long)id,
                            owner, c->leased && c->holder[0] ? ": it is claimed by " : "",
                            c->leased ? c->holder : "");
    if (strcmp(c->state, "done") == 0 || strcmp(c->state, "skipped") == 0 ||
        strcmp(c->state, "failed") == 0)
        return tw_error_set(err, TW_EPERM, "action %lld is %s: there is nothing to claim",
                            (long long)id, c->state);
    return tw_error_set(err, TW_EPERM,
                        "action %lld is claimed by %s until %lld ms (epoch); %s may take it "
                        "once that lease has expired",
                        (long long)id, c->holder, c->until, owner);
}

/* One statement, its own transaction: of two backends claiming at once,
 * the second's UPDATE waits for the first's row lock and then finds the
 * claim taken (its WHERE read again on the committed row). */
enum tw_err tw_pg_action_claim(struct tw_store *st, int64_t id, const char *owner, int64_t now_ms,
                               int64_t lease_ms, int64_t *until_ms, struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    for (int tries = 0;; tries++) {
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, id);
        tw_pg_p_text(&p, owner);
        tw_pg_p_int(&p, now_ms);
        tw_pg_p_int(&p, lease_ms);
        int64_t n = 0;
        enum tw_err rc = tw_pg_run_n(pg, &q_action_claim, &p, &n, "claiming an action", err);
        if (rc != TW_OK)
            return rc;
        if (n == 1) {
            if (until_ms)
                *until_ms = now_ms + lease_ms;
            return TW_OK;
        }
        struct claim_now c;
        if ((rc = claim_read(pg, id, &c, err)) != TW_OK)
            return rc;
        /* Released between the two statements: the claim is tried again
         * rather than refused with a reason that no longer holds. */
        bool finished = strcmp(c.state, "done") == 0 || strcmp(c.state, "skipped") == 0 ||
                        strcmp(c.state, "failed") == 0;
        if (c.found && !finished && claim_open(&c, owner, now_ms) && tries < TRIES)
            continue;
        return claim_refused(&c, id, owner, false, err);
    }
}

enum tw_err tw_pg_action_release(struct tw_store *st, int64_t id, const char *owner,
                                 struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    tw_pg_p_text(&p, owner);
    int64_t n = 0;
    enum tw_err rc = tw_pg_run_n(pg, &q_action_release, &p, &n, "claiming an action", err);
    if (rc != TW_OK || n == 1)
        return rc;
    struct claim_now c;
    if ((rc = claim_read(pg, id, &c, err)) != TW_OK)
        return rc;
    return claim_refused(&c, id, owner, true, err);
}

/* ---- the audit log ---- */

TW_PG_STMT(q_transition_count,
           "SELECT count(*) FROM action_transitions WHERE action_id = $1::bigint");
TW_PG_STMT(q_transitions, "SELECT from_state, to_state, at, owner, detail FROM "
                          "action_transitions WHERE action_id = $1::bigint ORDER BY id");

enum tw_err tw_pg_action_log_count(struct tw_store *st, int64_t id, size_t *n, struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(pg, &q_transition_count, &p, &r, "counting an action's moves", err);
    if (rc != TW_OK)
        return rc;
    *n = PQntuples(r) == 1 ? (size_t)tw_pg_int(r, 0, 0) : 0;
    PQclear(r);
    return TW_OK;
}

/* ---- observations from ARM, policies, plans ---- */

static const char *source_name(enum tw_obs_source s)
{
    return s == TW_OBS_ARM ? "arm" : "agent";
}

/* TW_OK when row ID exists according to Q (bound: the id), else
 * TW_ENOENT "there is no WHAT ID". */
static enum tw_err exists(struct tw_pg *pg, struct tw_pg_stmt *q, int64_t id, const char *what,
                          struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(pg, q, &p, &r, what, err);
    if (rc != TW_OK)
        return rc;
    int rows = PQntuples(r);
    PQclear(r);
    if (rows > 0)
        return TW_OK;
    return tw_error_set(err, TW_ENOENT, "there is no %s %lld", what, (long long)id);
}

TW_PG_STMT(q_vm_exists, "SELECT 1 FROM vms WHERE id = $1::bigint");
TW_PG_STMT(q_disk_exists, "SELECT 1 FROM disks WHERE id = $1::bigint");
/* The disk's row locked for the observation's transaction: observations
 * of one disk (this one, ingest's, ARM's) are made one after another, so
 * two never both find the history without the row they then add.  NO KEY:
 * rows that only reference the disk are not held up. */
TW_PG_STMT(q_disk_lock, "SELECT 1 FROM disks WHERE id = $1::bigint FOR NO KEY UPDATE");
TW_PG_STMT(q_power_obs, "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) "
                        "VALUES ($1::bigint, $2::text, $3::bigint, $4::text, $5::text)");
/* The VM's current state only when this is its newest observation: the
 * condition is read again on the committed row when another backend
 * wrote it meanwhile, so the newest stands whatever the order. */
TW_PG_STMT(q_vm_power, "UPDATE vms SET power_state = $2::text, power_state_at = $3::text, "
                       "power_state_ms = $4::bigint WHERE id = $1::bigint AND "
                       "(power_state_ms IS NULL OR power_state_ms <= $4::bigint)");

struct power_arg {
    int64_t vm_id;
    const char *state, *at;
    int64_t ms;
    enum tw_obs_source source;
};

static enum tw_err power_tx(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct power_arg *x = arg;
    enum tw_err rc = exists(pg, &q_vm_exists, x->vm_id, "VM", err);
    if (rc != TW_OK)
        return rc;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->vm_id);
    tw_pg_p_text(&p, x->at);
    tw_pg_p_int(&p, x->ms);
    tw_pg_p_text(&p, x->state);
    tw_pg_p_text(&p, source_name(x->source));
    if ((rc = tw_pg_run(pg, &q_power_obs, &p, NULL, "storing a power state", err)) != TW_OK)
        return rc;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->vm_id);
    tw_pg_p_text(&p, x->state);
    tw_pg_p_text(&p, x->at);
    tw_pg_p_int(&p, x->ms);
    return tw_pg_run(pg, &q_vm_power, &p, NULL, "updating a VM's power state", err);
}

enum tw_err tw_pg_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                const char *observed_at, int64_t observed_ms,
                                enum tw_obs_source source, struct tw_error *err)
{
    struct power_arg x = {
        .vm_id = vm_id, .state = state, .at = observed_at, .ms = observed_ms, .source = source};
    return in_tx(PG(st), power_tx, &x, "storing a power state", err);
}

TW_PG_STMT(q_hist_prev, "SELECT sku, tier, size_gib FROM disk_sku_history WHERE disk_id = "
                        "$1::bigint AND observed_ms <= $2::bigint ORDER BY observed_ms DESC, id "
                        "DESC LIMIT 1");
TW_PG_STMT(q_hist_obs, "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, "
                       "tier, size_gib, source) VALUES ($1::bigint, $2::text, $3::bigint, "
                       "$4::text, $5::text, $6::bigint, $7::text)");

struct sku_arg {
    int64_t disk_id;
    const char *sku, *tier, *at;
    int64_t size_gib, ms;
    enum tw_obs_source source;
    bool added;
};

static enum tw_err sku_tx(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct sku_arg *x = arg;
    x->added = false;
    enum tw_err rc = exists(pg, &q_disk_lock, x->disk_id, "disk", err);
    if (rc != TW_OK)
        return rc;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->disk_id);
    tw_pg_p_int(&p, x->ms);
    PGresult *r = NULL;
    if ((rc = tw_pg_run(pg, &q_hist_prev, &p, &r, "reading a disk's SKU history", err)) != TW_OK)
        return rc;
    bool same = PQntuples(r) == 1 && !tw_pg_null(r, 0, 0) &&
                strcmp(tw_pg_text(r, 0, 0), x->sku) == 0 &&
                strcmp(tw_pg_text(r, 0, 1), x->tier) == 0 && tw_pg_int(r, 0, 2) == x->size_gib;
    PQclear(r);
    if (same)
        return TW_OK;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->disk_id);
    tw_pg_p_text(&p, x->at);
    tw_pg_p_int(&p, x->ms);
    tw_pg_p_text(&p, x->sku);
    tw_pg_p_text0(&p, x->tier);
    tw_pg_p_int(&p, x->size_gib);
    tw_pg_p_text(&p, source_name(x->source));
    if ((rc = tw_pg_run(pg, &q_hist_obs, &p, NULL, "storing a SKU observation", err)) != TW_OK)
        return rc;
    x->added = true;
    return TW_OK;
}

enum tw_err tw_pg_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                              const char *tier, int64_t size_gib, const char *observed_at,
                              int64_t observed_ms, enum tw_obs_source source, bool *added,
                              struct tw_error *err)
{
    struct sku_arg x = {.disk_id = disk_id,
                        .sku = sku,
                        .tier = tier ? tier : "",
                        .at = observed_at,
                        .size_gib = size_gib,
                        .ms = observed_ms,
                        .source = source};
    enum tw_err rc = in_tx(PG(st), sku_tx, &x, "storing a SKU observation", err);
    if (rc == TW_OK && x.added && added)
        *added = true;
    return rc;
}

/* One statement: the name's unique index makes two backends storing one
 * policy at once an insert and an update, never two rows. */
TW_PG_STMT(q_policy_put, "INSERT INTO policies(name, body, created_at, updated_at) VALUES "
                         "($1::text, $2::text, $3::text, $3::text) ON CONFLICT (name) DO UPDATE "
                         "SET body = excluded.body, updated_at = excluded.updated_at");
TW_PG_STMT(q_policy_get, "SELECT body FROM policies WHERE name = $1::text");
TW_PG_STMT(q_plan_add, "INSERT INTO plans(policy, created_at, body, period_from, period_to) "
                       "VALUES ($1::text, $5::text, $2::text, $3::text, $4::text) RETURNING id");

enum tw_err tw_pg_policy_put(struct tw_store *st, const char *name, const char *body,
                             struct tw_error *err)
{
    char now[40];
    tw_pg_now_text(now);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, name);
    tw_pg_p_text(&p, body);
    tw_pg_p_text(&p, now);
    return tw_pg_run(PG(st), &q_policy_put, &p, NULL, "storing a policy", err);
}

enum tw_err tw_pg_policy_get(struct tw_store *st, const char *name, char **body,
                             struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, name);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_policy_get, &p, &r, "reading a policy", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return tw_error_set(err, TW_ENOENT, "there is no policy named %.128s", name);
    }
    char *copy = tw_pg_dup(r, 0, 0, NULL);
    PQclear(r);
    if (!copy)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading a policy");
    *body = copy;
    return TW_OK;
}

enum tw_err tw_pg_plan_add(struct tw_store *st, const char *policy, const char *from,
                           const char *to, const char *body, int64_t *id, struct tw_error *err)
{
    char now[40];
    tw_pg_now_text(now);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, policy);
    tw_pg_p_text(&p, body);
    tw_pg_p_text0(&p, from);
    tw_pg_p_text0(&p, to);
    tw_pg_p_text(&p, now);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_plan_add, &p, &r, "storing a plan", err);
    if (rc != TW_OK)
        return rc;
    if (id)
        *id = PQntuples(r) == 1 ? tw_pg_int(r, 0, 0) : 0;
    PQclear(r);
    return TW_OK;
}

/* ---- schema 5: the audit log, the executor's queue, originals ---- */

/* Row K of R (ACTION_ROW's columns) into *O; false when out of memory. */
static bool action_from_row(const PGresult *r, int k, struct tw_store_action_row *o)
{
    memset(o, 0, sizeof(*o));
    o->id = tw_pg_int(r, k, 0);
    o->plan_id = tw_pg_int(r, k, 1);
    o->vm_id = tw_pg_int(r, k, 2);
    o->disk_id = tw_pg_int(r, k, 3);
    tw_pg_copy(o->vm, sizeof(o->vm), r, k, 4);
    tw_pg_copy(o->disk, sizeof(o->disk), r, k, 5);
    tw_pg_copy(o->vm_resource_id, sizeof(o->vm_resource_id), r, k, 6);
    tw_pg_copy(o->disk_resource_id, sizeof(o->disk_resource_id), r, k, 7);
    tw_pg_copy(o->kind, sizeof(o->kind), r, k, 8);
    tw_pg_copy(o->from_sku, sizeof(o->from_sku), r, k, 9);
    tw_pg_copy(o->to_sku, sizeof(o->to_sku), r, k, 10);
    tw_pg_copy(o->due_at, sizeof(o->due_at), r, k, 11);
    o->due_ms = tw_pg_int(r, k, 12);
    tw_pg_copy(o->state, sizeof(o->state), r, k, 13);
    tw_pg_copy(o->policy, sizeof(o->policy), r, k, 14);
    tw_pg_copy(o->reason, sizeof(o->reason), r, k, 15);
    tw_pg_copy(o->saving, sizeof(o->saving), r, k, 16);
    tw_pg_copy(o->currency, sizeof(o->currency), r, k, 17);
    o->attempts = (int)tw_pg_int(r, k, 18);
    tw_pg_copy(o->updated_at, sizeof(o->updated_at), r, k, 19);
    tw_pg_copy(o->requested_at, sizeof(o->requested_at), r, k, 20);
    o->dry_run = tw_pg_int(r, k, 21) != 0;
    o->operation_url = tw_pg_dup(r, k, 22, NULL);
    if (!o->operation_url)
        return false;
    tw_pg_copy(o->last_error, sizeof(o->last_error), r, k, 23);
    tw_pg_copy(o->claim_owner, sizeof(o->claim_owner), r, k, 24);
    o->claim_until_ms = tw_pg_int(r, k, 25);
    return true;
}

static void p_ms_or_null(struct tw_pg_params *p, int64_t v)
{
    if (v > 0)
        tw_pg_p_int(p, v);
    else
        tw_pg_p_null(p);
}

/* A VM's name without regard to case, as SQLite's NOCASE (lower() folds
 * ASCII only under the "C" collation). */
TW_PG_STMT(q_actions_list,
           ACTION_ROW " WHERE ($1::text IS NULL OR lower(v.name) = lower($1::text COLLATE \"C\")) "
                      "AND ($2::bigint IS NULL OR a.disk_id = $2::bigint) AND ($3::text IS NULL OR "
                      "a.state = $3::text) AND ($4::bigint IS NULL OR a.due_ms >= $4::bigint) AND "
                      "($5::bigint IS NULL OR a.due_ms < $5::bigint) AND a.id > $6::bigint "
                      "ORDER BY a.id LIMIT $7::bigint");
TW_PG_STMT(q_action_row_get, ACTION_ROW " WHERE a.id = $1::bigint");

enum tw_err tw_pg_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                               struct tw_store_action_row **rows, size_t *n, bool *more,
                               struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text0(&p, f->vm);
    p_id(&p, f->disk_id);
    tw_pg_p_text0(&p, f->state);
    p_ms_or_null(&p, f->due_from_ms);
    p_ms_or_null(&p, f->due_to_ms);
    tw_pg_p_int(&p, f->after_id);
    /* One more than the page: whether more follow (LIMIT NULL: all). */
    if (f->limit)
        tw_pg_p_int(&p, (int64_t)f->limit + 1);
    else
        tw_pg_p_null(&p);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_actions_list, &p, &r, "listing actions", err);
    if (rc != TW_OK)
        return rc;
    size_t total = (size_t)PQntuples(r);
    size_t k = f->limit && total > f->limit ? f->limit : total;
    if (more && f->limit && total > f->limit)
        *more = true;
    struct tw_store_action_row *arr = k ? calloc(k, sizeof(*arr)) : NULL;
    if (k && !arr) {
        PQclear(r);
        if (more)
            *more = false;
        return tw_error_set(err, TW_ENOMEM, "out of memory listing actions");
    }
    for (size_t i = 0; i < k; i++) {
        if (!action_from_row(r, (int)i, &arr[i])) {
            PQclear(r);
            tw_store_action_rows_free(arr, i);
            if (more)
                *more = false;
            return tw_error_set(err, TW_ENOMEM, "out of memory listing actions");
        }
    }
    PQclear(r);
    *rows = arr;
    *n = k;
    return TW_OK;
}

enum tw_err tw_pg_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                             struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_action_row_get, &p, &r, "reading an action", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)id);
    }
    bool ok = action_from_row(r, 0, row);
    PQclear(r);
    if (!ok) {
        free(row->operation_url);
        memset(row, 0, sizeof(*row));
        return tw_error_set(err, TW_ENOMEM, "out of memory reading an action");
    }
    return TW_OK;
}

enum tw_err tw_pg_action_moves(struct tw_store *st, int64_t id,
                               struct tw_store_action_move_row **rows, size_t *n,
                               struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_transitions, &p, &r, "reading an action's moves", err);
    if (rc != TW_OK)
        return rc;
    size_t k = (size_t)PQntuples(r);
    if (k == 0) {
        PQclear(r);
        /* No line at all: no such action (every action has its first). */
        enum tw_action_state state;
        rc = tw_pg_action_state(st, id, &state, NULL, err);
        if (rc != TW_OK)
            return rc;
        *rows = NULL;
        *n = 0;
        return TW_OK;
    }
    struct tw_store_action_move_row *arr = calloc(k, sizeof(*arr));
    if (!arr) {
        PQclear(r);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading an action's moves");
    }
    for (size_t i = 0; i < k; i++) {
        struct tw_store_action_move_row *m = &arr[i];
        tw_pg_copy(m->from_state, sizeof(m->from_state), r, (int)i, 0);
        tw_pg_copy(m->to_state, sizeof(m->to_state), r, (int)i, 1);
        tw_pg_copy(m->at, sizeof(m->at), r, (int)i, 2);
        tw_pg_copy(m->owner, sizeof(m->owner), r, (int)i, 3);
        tw_pg_copy(m->detail, sizeof(m->detail), r, (int)i, 4);
    }
    PQclear(r);
    *rows = arr;
    *n = k;
    return TW_OK;
}

TW_PG_STMT(q_actions_due,
           "SELECT id FROM actions WHERE (state IN ('planned', 'checked') AND coalesce(due_ms, 0) "
           "<= $1::bigint AND ($2::bigint <> 0 OR dry_run = 0)) OR state IN ('sent', 'verified') "
           "ORDER BY coalesce(due_ms, 0), id LIMIT $3::bigint");

enum tw_err tw_pg_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                              int64_t **ids, size_t *n, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, now_ms);
    tw_pg_p_int(&p, dry_run ? 1 : 0);
    if (max)
        tw_pg_p_int(&p, (int64_t)max);
    else
        tw_pg_p_null(&p);
    PGresult *r = NULL;
    enum tw_err rc = tw_pg_run(PG(st), &q_actions_due, &p, &r, "listing due actions", err);
    if (rc != TW_OK)
        return rc;
    size_t k = (size_t)PQntuples(r);
    int64_t *arr = k ? malloc(k * sizeof(*arr)) : NULL;
    if (k && !arr) {
        PQclear(r);
        return tw_error_set(err, TW_ENOMEM, "out of memory listing due actions");
    }
    for (size_t i = 0; i < k; i++)
        arr[i] = tw_pg_int(r, (int)i, 0);
    PQclear(r);
    *ids = arr;
    *n = k;
    return TW_OK;
}

/* Writes under the claim: only while OWNER holds it (its lease set). */
TW_PG_STMT(q_action_set_op, "UPDATE actions SET arm_operation_url = $3::text, updated_at = "
                            "$4::text WHERE id = $1::bigint AND claim_owner = $2::text AND "
                            "claim_until_ms IS NOT NULL");
TW_PG_STMT(q_action_attempt, "UPDATE actions SET attempts = attempts + 1, updated_at = $3::text "
                             "WHERE id = $1::bigint AND claim_owner = $2::text AND "
                             "claim_until_ms IS NOT NULL");

/* One update of action ID under OWNER's claim (Q), with why it changed
 * nothing when it didn't.  One statement: the claim's test and the write
 * are one compare-and-set on the row. */
static enum tw_err claimed_update(struct tw_pg *pg, struct tw_pg_stmt *q, int64_t id,
                                  const char *owner, const char *url, bool with_url,
                                  const char *what, struct tw_error *err)
{
    char now[40];
    tw_pg_now_text(now);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    tw_pg_p_text(&p, owner);
    if (with_url)
        tw_pg_p_text0(&p, url);
    tw_pg_p_text(&p, now);
    int64_t n = 0;
    enum tw_err rc = tw_pg_run_n(pg, q, &p, &n, what, err);
    if (rc != TW_OK || n == 1)
        return rc;
    struct claim_now c;
    if ((rc = claim_read(pg, id, &c, err)) != TW_OK)
        return rc;
    return claim_refused(&c, id, owner, true, err);
}

enum tw_err tw_pg_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                       const char *url, struct tw_error *err)
{
    return claimed_update(PG(st), &q_action_set_op, id, owner, url, true,
                          "keeping an action's operation", err);
}

enum tw_err tw_pg_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                       struct tw_error *err)
{
    return claimed_update(PG(st), &q_action_attempt, id, owner, NULL, false,
                          "counting an action's send", err);
}

/* A compare-and-set on the state: only a planned or checked action's due
 * time moves, whoever moved it on meanwhile. */
TW_PG_STMT(q_action_set_due, "UPDATE actions SET due_at = $2::text, due_ms = $3::bigint, "
                             "updated_at = $4::text WHERE id = $1::bigint AND state IN "
                             "('planned', 'checked')");

enum tw_err tw_pg_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                 struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    int64_t ms;
    bool nul;
    enum tw_err rc = instant(due_at, "the action's due time", &ms, &nul, err);
    if (rc != TW_OK)
        return rc;
    char now[40];
    tw_pg_now_text(now);
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    tw_pg_p_text(&p, due_at);
    if (nul)
        tw_pg_p_null(&p);
    else
        tw_pg_p_int(&p, ms);
    tw_pg_p_text(&p, now);
    int64_t n = 0;
    rc = tw_pg_run_n(pg, &q_action_set_due, &p, &n, "moving an action's due time", err);
    if (rc != TW_OK || n == 1)
        return rc;
    enum tw_action_state state;
    rc = tw_pg_action_state(st, id, &state, NULL, err);
    if (rc != TW_OK)
        return rc;
    return tw_error_set(err, TW_EPERM,
                        "action %lld is %s: only a planned or checked action's "
                        "due time can move",
                        (long long)id, tw_action_state_name(state));
}

/* The first original kept: the disk's key makes a second (or a
 * concurrent) one do nothing. */
TW_PG_STMT(q_original_set, "INSERT INTO disk_originals(disk_id, sku, tier, action_id, set_at) "
                           "VALUES ($1::bigint, $2::text, $3::text, $4::bigint, $5::text) "
                           "ON CONFLICT (disk_id) DO NOTHING");
TW_PG_STMT(q_original_get, "SELECT sku, tier FROM disk_originals WHERE disk_id = $1::bigint");
TW_PG_STMT(q_original_clear, "DELETE FROM disk_originals WHERE disk_id = $1::bigint");

struct original_arg {
    int64_t disk_id, action_id;
    const char *sku, *tier, *at;
    bool kept;
};

static enum tw_err original_tx(struct tw_pg *pg, void *arg, struct tw_error *err)
{
    struct original_arg *x = arg;
    enum tw_err rc = exists(pg, &q_disk_exists, x->disk_id, "disk", err);
    if (rc != TW_OK)
        return rc;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, x->disk_id);
    tw_pg_p_text(&p, x->sku);
    tw_pg_p_text(&p, x->tier);
    p_id(&p, x->action_id);
    tw_pg_p_text(&p, x->at);
    int64_t n = 0;
    struct tw_error e2 = {0};
    rc = tw_pg_run_n(pg, &q_original_set, &p, &n, "recording a disk's original SKU", &e2);
    if (rc != TW_OK) {
        if (strcmp(pg->sqlstate, "23503") == 0)
            return tw_error_set(err, TW_ENOENT, "there is no action %lld", (long long)x->action_id);
        if (err)
            *err = e2;
        return rc;
    }
    x->kept = n == 0;
    return TW_OK;
}

enum tw_err tw_pg_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                    const char *tier, int64_t action_id, const char *at, bool *kept,
                                    struct tw_error *err)
{
    struct original_arg x = {
        .disk_id = disk_id, .action_id = action_id, .sku = sku, .tier = tier, .at = at};
    enum tw_err rc = in_tx(PG(st), original_tx, &x, "recording a disk's original SKU", err);
    if (rc == TW_OK && kept)
        *kept = x.kept;
    return rc;
}

enum tw_err tw_pg_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku, char *tier,
                                    bool *found, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    PGresult *r = NULL;
    enum tw_err rc =
        tw_pg_run(PG(st), &q_original_get, &p, &r, "reading a disk's original SKU", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 1) {
        *found = true;
        if (sku)
            tw_pg_copy(sku, 32, r, 0, 0);
        if (tier)
            tw_pg_copy(tier, 16, r, 0, 1);
    }
    PQclear(r);
    return TW_OK;
}

enum tw_err tw_pg_disk_original_clear(struct tw_store *st, int64_t disk_id, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    return tw_pg_run(PG(st), &q_original_clear, &p, NULL, "forgetting a disk's original SKU", err);
}
