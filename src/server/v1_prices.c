/*
 * v1_prices.c - GET /api/v1/prices and POST /api/v1/prices/refresh.
 *
 * Both call the same functions as `tierwise prices show` and `prices
 * refresh` (service/prices.h), so the API and the command line never
 * disagree.  GET answers the stored book of a region and currency, else
 * the bundled snapshot, and says which in "source".  A refresh (admin)
 * fetches every page from the configured Retail Prices endpoint before it
 * replaces the stored book in one transaction; it runs in the request's
 * thread, which is acceptable for an operation admins start by hand.
 */
#include "server/server_int.h"

#include <stdio.h>
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
    struct tw_store *st = tw_srv_store_get(rq->srv, &err);
    if (!st) {
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    struct tw_svc_refresh req = {.prices_url = rq->srv->prices_url, .region = reg,
                                 .currency = cur};
    struct tw_svc_refresh_result res;
    memset(&res, 0, sizeof(res));
    rc = tw_svc_prices_refresh(st, &req, &res, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        prices_error(rq, rc, &err, res.store_failed);
        return;
    }
    tw_req_json(rq, 200,
                json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i}", "region", reg, "currency",
                          cur, "source", res.source, "fetched_at", res.fetched_at, "items",
                          (json_int_t)res.items, "prices", (json_int_t)res.prices, "pages",
                          res.fetch.pages, "attempts", res.fetch.attempts));
}
