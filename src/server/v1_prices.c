/*
 * v1_prices.c - GET /api/v1/prices and POST /api/v1/prices/refresh.
 *
 * Both call the same functions as `tierwise prices show` and `prices
 * refresh` (service/prices.h), so the API and the command line never
 * disagree.  GET answers the stored book of a region and currency, else
 * the bundled snapshot, and says which in "source".  A refresh (admin)
 * fetches every page from the configured Retail Prices endpoint before it
 * replaces the stored book in one transaction.  It runs on the server's
 * operations worker (worker.h), not in the request: the POST answers 202
 * with an operation (operations.h) whose result is what the refresh did.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "server/prices_status.h"
#include "service/prices.h"

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

static void prices_error(struct tw_req *rq, enum tw_err rc, const struct tw_error *err,
                         bool store_failed)
{
    const char *code = "internal";
    unsigned status = tw_srv_prices_status(rc, &code);
    if (store_failed) {
        status = 500;
        code = "store_failed";
    }
    tw_req_error(rq, status, code, "%s", err->msg[0] ? err->msg : tw_strerror(rc));
}

void tw_v1_prices(struct tw_req *rq)
{
    const char *region = arg(rq, "region");
    const char *currency = arg(rq, "currency");
    if (!region) {
        tw_req_error(rq, 400, "bad_request",
                     "which region? add ?region=westeurope (and &currency=USD, the default)");
        return;
    }
    WITH_STORE(rq, st, err);
    json_t *out = NULL;
    enum tw_err rc =
        tw_svc_prices_show(st, region, currency ? currency : "USD", arg(rq, "sku"), &out, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        prices_error(rq, rc, &err, false);
        return;
    }
    tw_req_json(rq, 200, out);
}

/* A required string member of the refresh body. */
static const char *member(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

/* A refresh on the operations worker: the request's copy of what it needs,
 * since it may outlive the request and (at a stop) the server. */
struct refresh_job {
    struct tw_worker_job wj;
    struct tw_ops *ops; /* the worker's context: lives as long as the worker */
    char id[TW_UUID_STRLEN + 1];
    char db_path[PATH_MAX];
    char prices_url[256];
    char reg[48], cur[4];
};

static void refresh_run(struct tw_worker_job *wj)
{
    struct refresh_job *j = wj->arg;
    tw_ops_start(j->ops, j->id);
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    /* A handle of its own, not the request pool's: the server may be gone
     * before a refresh left running at a stop ends. */
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    if (rc != TW_OK) {
        tw_ops_fail(j->ops, j->id, "store_failed", err.msg[0] ? err.msg : tw_strerror(rc));
        free(j);
        return;
    }
    struct tw_svc_refresh req = {.prices_url = j->prices_url, .region = j->reg, .currency = j->cur};
    struct tw_svc_refresh_result res;
    memset(&res, 0, sizeof(res));
    rc = tw_svc_prices_refresh(st, &req, &res, &err);
    tw_store_close(st);
    if (rc != TW_OK) {
        const char *code = "internal";
        tw_srv_prices_status(rc, &code);
        if (res.store_failed)
            code = "store_failed";
        tw_ops_fail(j->ops, j->id, code, err.msg[0] ? err.msg : tw_strerror(rc));
    } else {
        tw_ops_succeed(j->ops, j->id,
                       json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i}", "region", j->reg,
                                 "currency", j->cur, "source", res.source, "fetched_at",
                                 res.fetched_at, "items", (json_int_t)res.items, "prices",
                                 (json_int_t)res.prices, "pages", res.fetch.pages, "attempts",
                                 res.fetch.attempts));
    }
    free(j);
}

static void refresh_cancel(struct tw_worker_job *wj)
{
    struct refresh_job *j = wj->arg;
    tw_ops_fail(j->ops, j->id, "shutting_down",
                "the server stopped before the refresh ran; the stored book is as it was");
    free(j);
}

/* 202 with Location and the operation. */
static void answer_operation(struct tw_req *rq, const char *id)
{
    json_t *op = tw_ops_get(rq->srv->ops, id, 0, NULL);
    if (!op) {
        tw_req_error(rq, 500, "internal", "the operation %s is gone", id);
        return;
    }
    tw_req_json(rq, 202, op);
    char loc[80];
    snprintf(loc, sizeof(loc), "/api/v1/operations/%s", id);
    if (rq->resp)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_LOCATION, loc);
}

/*
 * POST /api/v1/prices/refresh: queues the refresh on the operations
 * worker and answers 202 at once; GET /api/v1/operations/{id} follows it.
 * A refresh of the same region and currency already queued or running is
 * joined: the answer is that operation.
 */
void tw_v1_prices_refresh(struct tw_req *rq)
{
    struct tw_error err = {0};
    json_t *body = tw_json_load(rq->body.data ? rq->body.data : "", rq->body.len, 0,
                                "the refresh request", &err);
    if (!body) {
        tw_req_error_at(rq, 400, "invalid_json", err.line, err.column, err.msg);
        return;
    }
    const char *region = json_is_object(body) ? member(body, "region") : NULL;
    const char *currency = json_is_object(body) ? member(body, "currency") : NULL;
    if (!region || !currency) {
        json_decref(body);
        tw_req_error(rq, 400, "bad_request",
                     "the body must be {\"region\": \"westeurope\", \"currency\": \"USD\"}");
        return;
    }
    char reg[48], cur[4];
    enum tw_err rc = tw_svc_prices_key(region, currency, reg, cur, &err);
    json_decref(body);
    if (rc != TW_OK) {
        prices_error(rq, rc, &err, false);
        return;
    }
    struct tw_server *srv = rq->srv;
    char key[64], id[TW_UUID_STRLEN + 1];
    snprintf(key, sizeof(key), "%s %s", reg, cur);
    bool joined = false;
    rc = tw_ops_create(srv->ops, "prices.refresh", key,
                       json_pack("{s:s, s:s}", "region", reg, "currency", cur), id, &joined, &err);
    if (rc == TW_ENOMEM) {
        tw_req_error(rq, 503, "busy", "%s", err.msg);
        return;
    }
    if (rc != TW_OK) {
        tw_req_error(rq, 500, "internal", "%s", err.msg);
        return;
    }
    if (joined) {
        answer_operation(rq, id);
        return;
    }
    struct refresh_job *j = calloc(1, sizeof(*j));
    if (!j) {
        tw_ops_fail(srv->ops, id, "internal", "out of memory");
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    j->wj.run = refresh_run;
    j->wj.cancel = refresh_cancel;
    j->wj.arg = j;
    j->ops = srv->ops;
    memcpy(j->id, id, sizeof(j->id));
    snprintf(j->db_path, sizeof(j->db_path), "%s", srv->db_path);
    snprintf(j->prices_url, sizeof(j->prices_url), "%s", srv->prices_url);
    memcpy(j->reg, reg, sizeof(reg));
    memcpy(j->cur, cur, sizeof(cur));
    rc = tw_worker_submit(srv->worker, &j->wj);
    if (rc != TW_OK) {
        free(j);
        if (rc == TW_ENOMEM) {
            tw_ops_fail(srv->ops, id, "busy", "the operations queue was full");
            tw_req_error(rq, 503, "busy",
                         "%d operations are queued already; try again when one has finished",
                         TW_OPS_QUEUE_MAX);
        } else {
            tw_ops_fail(srv->ops, id, "shutting_down", "the server is stopping");
            tw_req_error(rq, 503, "shutting_down", "the server is stopping; try again shortly");
        }
        return;
    }
    answer_operation(rq, id);
}
