/*
 * v1_actions.c - the audit log of the executor and its runs:
 *
 *   GET /api/v1/actions[?vm=NAME&state=S&limit=N&cursor=C] (reader): one
 *   object per action as `tierwise actions --json` prints it (id, vm, disk,
 *   kind, from_sku, to_sku, due_at, state, reason, attempts, updated_at,
 *   transitions [...]) by id, {"actions": [...], "next_cursor"}.
 *
 *   GET /api/v1/actions/{id} (reader): that action alone, the same object
 *   (404 not_found for an id not stored).
 *
 *   POST /api/v1/actions (admin): {"policy": NAME} (one of the server's
 *   policies) or {"plan": <a tierwise.plan/1 document>}, with "execute":
 *   true to run it and "currency" for the policy's savings when the store's
 *   books are in several.  Without it a dry run answered at once (200): what would
 *   be sent, the checks' outcome, nothing written to ARM or the store.  An
 *   executing run goes on the operations worker: 202 with the operation
 *   (GET /api/v1/operations/{id} follows it; its result is the run's).
 *
 * Statuses: 400 bad_request (a body that is not one of those, an unknown
 * ?state=), 400 invalid_json, 404 unknown_policy, 503 no_arm (an executing
 * run on a server without ARM credentials), 503 busy (the operations queue
 * is full), 500 otherwise.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fnv.h"
#include "core/jsonx.h"
#include "service/exec.h"

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

static bool state_ok(const char *s)
{
    for (int i = TW_ACT_PLANNED; i <= TW_ACT_FAILED; i++)
        if (!strcmp(s, tw_action_state_name((enum tw_action_state)i)))
            return true;
    return false;
}

void tw_v1_actions(struct tw_req *rq)
{
    struct tw_store_page pg;
    if (!tw_req_page(rq, &pg, NULL))
        return;
    const char *state = arg(rq, "state");
    if (state && !state_ok(state)) {
        char clean[64];
        tw_srv_clean_text(state, clean, sizeof clean);
        tw_req_error(rq, 400, "bad_request", "state \"%s\" is not one: give planned, checked, "
                     "sent, verified, done, skipped or failed", clean);
        return;
    }
    struct tw_store_action_filter f = {0};
    f.vm = pg.vm;
    f.state = state;
    f.after_id = (int64_t)pg.offset; /* the cursor holds the last id of the page before */
    f.limit = pg.limit;
    WITH_STORE(rq, st, err);
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    bool more = false;
    enum tw_err rc = tw_store_actions_list(st, &f, &rows, &n, &more, &err);
    json_t *arr = rc == TW_OK ? json_array() : NULL;
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        struct tw_store_action_move_row *mv = NULL;
        size_t nm = 0;
        rc = tw_store_action_moves(st, rows[i].id, &mv, &nm, &err);
        if (rc == TW_OK) {
            json_t *o = tw_exec_action_json(&rows[i], mv, nm);
            if (!o || json_array_append_new(arr, o))
                rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
        }
        free(mv);
    }
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK || !arr) {
        json_decref(arr);
        tw_store_action_rows_free(rows, n);
        tw_req_store_error(rq, rc != TW_OK ? rc : TW_ENOMEM, &err);
        return;
    }
    json_t *next = json_null();
    if (more && n) {
        char cur[32];
        snprintf(cur, sizeof cur, "o%lld", (long long)rows[n - 1].id);
        next = json_string(cur);
    }
    tw_store_action_rows_free(rows, n);
    tw_req_json(rq, 200, json_pack("{s:o, s:o}", "actions", arr, "next_cursor", next));
}

/* GET /api/v1/actions/{id} (reader): one action as the list has it, with
 * its "transitions" (the store's moves, in order); 404 not_found for an id
 * the store does not hold. */
void tw_v1_action(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    struct tw_store_action_row row;
    memset(&row, 0, sizeof(row));
    struct tw_store_action_move_row *mv = NULL;
    size_t nm = 0;
    enum tw_err rc = tw_store_action_get(st, rq->id, &row, &err);
    if (rc == TW_OK)
        rc = tw_store_action_moves(st, rq->id, &mv, &nm, &err);
    tw_srv_store_put(rq->srv, st);
    json_t *o = rc == TW_OK ? tw_exec_action_json(&row, mv, nm) : NULL;
    free(mv);
    free(row.operation_url);
    if (rc == TW_ENOENT) {
        tw_req_error(rq, 404, "not_found", "no action %lld (GET /api/v1/actions lists them)",
                     (long long)rq->id);
        return;
    }
    if (rc != TW_OK || !o) {
        tw_req_store_error(rq, rc != TW_OK ? rc : TW_ENOMEM, &err);
        return;
    }
    tw_req_json(rq, 200, o);
}

/* ---- POST ---- */

/* A dry run's results, collected. */
static void collect(void *arg, const struct tw_exec_result *r)
{
    json_t *j = tw_exec_result_json(r);
    if (j)
        json_array_append_new(arg, j);
}

static json_t *tick_doc(const struct tw_exec_tick_summary *s, bool dry_run, json_t *results)
{
    return json_pack("{s:b, s:s, s:I, s:I, s:I, s:o, s:o}", "dry_run", dry_run, "policy",
                     s->policy, "planned", (json_int_t)s->planned, "recorded",
                     (json_int_t)s->recorded, "expired", (json_int_t)s->expired,
                     "results", results ? results : json_array(), "summary",
                     tw_exec_summary_json(&s->run));
}

struct run_job {
    struct tw_worker_job wj;
    struct tw_server *srv;
    struct tw_ops *ops;
    char id[TW_UUID_STRLEN + 1];
    const struct tw_policy *policy; /* the server's, read-only; NULL: PLAN */
    char *plan;                     /* the plan's text (malloc'd) */
    size_t plan_len;
    char currency[4];               /* "" none */
};

static void run_free(struct run_job *j)
{
    free(j->plan);
    free(j);
}

static void run_run(struct tw_worker_job *wj)
{
    struct run_job *j = wj->arg;
    if (!tw_srv_exec_enter(j->srv)) {
        tw_ops_fail(j->ops, j->id, "shutting_down",
                    "the server stopped before the run started; no action was touched");
        run_free(j);
        return;
    }
    tw_ops_start(j->ops, j->id);
    struct tw_exec_opts o;
    tw_srv_exec_opts(j->srv, &o, false);
    char owner[96];
    tw_exec_owner_default(owner, sizeof owner);
    snprintf(owner + strlen(owner), sizeof owner - strlen(owner), ":api");
    o.owner = owner; /* the scheduler's runs are ":sched" (and each run numbered) */
    json_t *results = json_array();
    struct tw_exec_sink sink = {collect, results};
    o.sink = &sink;
    struct tw_exec_tick t;
    tw_srv_exec_tick(j->srv, &t, j->policy, &o);
    t.plan.currency = j->currency[0] ? j->currency : NULL;
    if (!j->policy) {
        t.plan_json = j->plan;
        t.plan_len = j->plan_len;
    }
    struct tw_exec_tick_summary s;
    struct tw_error err = {0};
    enum tw_err rc = tw_exec_tick_run(&t, &s, &err);
    tw_srv_exec_leave(j->srv);
    if (rc != TW_OK) {
        json_decref(results);
        tw_ops_fail(j->ops, j->id, rc == TW_EPARSE || rc == TW_EINVAL ? "bad_request" : "failed",
                    err.msg[0] ? err.msg : tw_strerror(rc));
    } else {
        tw_ops_succeed(j->ops, j->id, tick_doc(&s, false, results));
    }
    run_free(j);
}

static void run_cancel(struct tw_worker_job *wj)
{
    struct run_job *j = wj->arg;
    tw_ops_fail(j->ops, j->id, "shutting_down", "the server stopped before the run started");
    run_free(j);
}

void tw_v1_actions_post(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    struct tw_error err = {0};
    json_t *body = tw_json_load(rq->body.data ? rq->body.data : "", rq->body.len, 0,
                                "the actions request", &err);
    if (!body) {
        tw_req_error_at(rq, 400, "invalid_json", err.line, err.column, err.msg);
        return;
    }
    json_t *jp = json_object_get(body, "policy"), *jplan = json_object_get(body, "plan");
    json_t *jx = json_object_get(body, "execute");
    json_t *jc = json_object_get(body, "currency");
    if (!json_is_object(body) || (!jp == !jplan) || (jp && !json_is_string(jp)) ||
        (jplan && !json_is_object(jplan)) || (jx && !json_is_boolean(jx)) ||
        (jc && (!json_is_string(jc) || json_string_length(jc) != 3))) {
        json_decref(body);
        tw_req_error(rq, 400, "bad_request",
                     "the body must be {\"policy\": NAME} or {\"plan\": <a tierwise.plan/1 "
                     "document>}, with \"execute\": true to run it (else a dry run) and "
                     "\"currency\": \"USD\" (a code of 3 letters) to choose the books'");
        return;
    }
    bool execute = jx && json_is_true(jx);
    char currency[4] = "";
    if (jc)
        snprintf(currency, sizeof currency, "%s", json_string_value(jc));
    const struct tw_policy *pol = NULL;
    char *plan = NULL;
    size_t plan_len = 0;
    if (jp) {
        const struct tw_svc_policy *p = tw_svc_policies_find(&srv->policies, json_string_value(jp));
        if (!p) {
            char clean[160];
            tw_srv_clean_text(json_string_value(jp), clean, sizeof clean);
            json_decref(body);
            tw_req_error(rq, 404, "unknown_policy", "no policy \"%s\" among the server's %zu "
                         "(GET /api/v1/policies lists them)", clean, srv->policies.n);
            return;
        }
        pol = &p->policy;
    } else {
        plan = json_dumps(jplan, JSON_COMPACT);
        plan_len = plan ? strlen(plan) : 0;
    }
    json_decref(body);
    if ((!pol && !plan)) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    if (!srv->exec_arm.cred) {
        free(plan);
        tw_req_error(rq, 503, "no_arm", "this server has no ARM credentials, so it can't read or "
                     "change disks; start it with the ARM options (tierwise serve --help)");
        return;
    }
    if (!execute) {
        struct tw_exec_opts o;
        tw_srv_exec_opts(srv, &o, true);
        json_t *results = json_array();
        struct tw_exec_sink sink = {collect, results};
        o.sink = &sink;
        struct tw_exec_tick t;
        tw_srv_exec_tick(srv, &t, pol, &o);
        t.plan.currency = currency[0] ? currency : NULL;
        if (!pol) {
            t.plan_json = plan;
            t.plan_len = plan_len;
        }
        struct tw_exec_tick_summary s;
        enum tw_err rc = tw_exec_tick_run(&t, &s, &err);
        free(plan);
        char clean[600];
        tw_srv_clean_text(err.msg[0] ? err.msg : tw_strerror(rc), clean, sizeof clean);
        if (rc == TW_EPARSE || rc == TW_EINVAL || rc == TW_ENOENT) {
            json_decref(results);
            tw_req_error(rq, 400, "bad_request", "%s", clean);
        } else if (rc != TW_OK) {
            json_decref(results);
            tw_req_error(rq, 500, "internal", "%s", clean);
        } else {
            tw_req_json(rq, 200, tick_doc(&s, true, results));
        }
        return;
    }
    char key[200], id[TW_UUID_STRLEN + 1];
    /* a run joins one of the same policy (or of the same plan: its text's
     * fingerprint and length; a different plan is a run of its own) */
    if (pol)
        snprintf(key, sizeof key, "%s", pol->name);
    else
        snprintf(key, sizeof key, "plan:%016llx:%zu",
                 (unsigned long long)tw_fnv_bytes(TW_FNV_START, plan, plan_len), plan_len);
    bool joined = false;
    enum tw_err rc = tw_ops_create(srv->ops, "actions.run", key,
                                   json_pack("{s:s, s:b}", "policy", pol ? pol->name : "(plan)",
                                             "execute", true),
                                   id, &joined, &err);
    if (rc != TW_OK) {
        free(plan);
        tw_req_error(rq, rc == TW_ENOMEM ? 503 : 500, rc == TW_ENOMEM ? "busy" : "internal", "%s",
                     err.msg);
        return;
    }
    if (!joined) {
        struct run_job *j = calloc(1, sizeof *j);
        if (!j) {
            free(plan);
            tw_ops_fail(srv->ops, id, "internal", "out of memory");
            tw_req_error(rq, 500, "internal", "out of memory");
            return;
        }
        j->wj = (struct tw_worker_job){.run = run_run, .cancel = run_cancel, .arg = j};
        j->srv = srv;
        j->ops = srv->ops;
        memcpy(j->id, id, sizeof j->id);
        j->policy = pol;
        j->plan = plan;
        j->plan_len = plan_len;
        memcpy(j->currency, currency, sizeof j->currency);
        plan = NULL;
        rc = tw_worker_submit(srv->worker, &j->wj);
        if (rc != TW_OK) {
            run_free(j);
            tw_ops_fail(srv->ops, id, rc == TW_ENOMEM ? "busy" : "shutting_down",
                        rc == TW_ENOMEM ? "the operations queue was full" : "the server is stopping");
            tw_req_error(rq, 503, rc == TW_ENOMEM ? "busy" : "shutting_down",
                         rc == TW_ENOMEM ? "the operations queue is full; try again when one "
                                           "has finished"
                                         : "the server is stopping; try again shortly");
            return;
        }
    }
    free(plan);
    json_t *op = tw_ops_get(srv->ops, id, 0, NULL);
    if (!op) {
        tw_req_error(rq, 500, "internal", "the operation %s is gone", id);
        return;
    }
    tw_req_json(rq, 202, op);
    char loc[80];
    snprintf(loc, sizeof loc, "/api/v1/operations/%s", id);
    if (rq->resp)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_LOCATION, loc);
}
