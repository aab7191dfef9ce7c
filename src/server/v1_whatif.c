/*
 * v1_whatif.c - POST /api/v1/savings/whatif (reader): the what-if
 * calculator of `tierwise savings`, on the server's stored price books.
 *
 * The body carries the command's inputs as JSON (service/whatif.h,
 * tw_whatif_req_parse) and the answer is the document `savings --json`
 * prints (tw_whatif_json), so the two never disagree.  The prices are
 * those `GET /api/v1/prices` shows: the stored book of the region and
 * currency, else the bundled snapshot's, and "source" says which.
 *
 * Statuses: 400 bad_request with "field" naming the input at fault (a
 * member of the wrong type, an unknown tier, a window that does not parse,
 * a bad period or zone, an amount too large to write: "count" or "io");
 * 404 no_price_book when nothing prices the region
 * in that currency, 404 price_missing when the book lacks a tier's price
 * (the message names it); 409 price_book_invalid when the stored book no
 * longer reads (refresh it); 500 otherwise.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/prices.h"
#include "service/whatif.h"

/* {"error": {"code", "message", "field", "column"?}} with STATUS. */
static void whatif_error(struct tw_req *rq, unsigned status, const char *code, const char *field,
                         const struct tw_error *err)
{
    char clean[1024];
    tw_srv_clean_text(err->msg[0] ? err->msg : tw_strerror(err->code), clean, sizeof(clean));
    json_t *e = json_pack("{s:s, s:s}", "code", code, "message", clean);
    if (e && field && field[0])
        json_object_set_new(e, "field", json_string(field));
    if (e && err->line > 0)
        json_object_set_new(e, "line", json_integer(err->line));
    if (e && err->column > 0)
        json_object_set_new(e, "column", json_integer(err->column));
    tw_req_json(rq, status, e ? json_pack("{s:o}", "error", e) : NULL);
}

void tw_v1_savings_whatif(struct tw_req *rq)
{
    struct tw_error err = {0};
    char field[TW_WHATIF_FIELD_MAX] = "";
    struct tw_whatif_req *in = malloc(sizeof(*in));
    struct tw_whatif_result *res = malloc(sizeof(*res));
    struct tw_tz *z = NULL;
    struct tw_pricebook *b = NULL;
    struct tw_store *st = NULL;
    if (!in || !res) {
        tw_req_error(rq, 500, "internal", "out of memory");
        goto out;
    }
    enum tw_err rc = tw_whatif_req_parse(rq->body.data ? rq->body.data : "", rq->body.len, in,
                                         field, &err);
    if (rc != TW_OK) {
        whatif_error(rq, 400, field[0] ? "bad_request" : "invalid_json", field, &err);
        goto out;
    }
    char reg[48], cur[4];
    if ((rc = tw_svc_prices_key(in->region, in->currency, reg, cur, &err)) != TW_OK) {
        whatif_error(rq, 400, "bad_request", strstr(err.msg, "currency") ? "currency" : "region",
                     &err);
        goto out;
    }
    if (in->tz[0]) {
        if (!rq->srv->tz_load) {
            tw_error_set(&err, TW_EUNSUPPORTED,
                         "this server was started without zone files: leave tz out (UTC)");
            whatif_error(rq, 400, "bad_request", "tz", &err);
            goto out;
        }
        rc = rq->srv->tz_load(in->tz, &z, &err);
        if (rc == TW_EIO || rc == TW_ENOMEM) {
            whatif_error(rq, 500, "internal", "tz", &err);
            goto out;
        }
        if (rc != TW_OK) {
            whatif_error(rq, 400, "bad_request", "tz", &err);
            goto out;
        }
    }
    if (!(st = tw_srv_store_get(rq->srv, &err))) {
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        goto out;
    }
    rc = tw_svc_prices_load(st, reg, cur, &b, &err);
    if (rc == TW_OK && !tw_whatif_book_has_prices(b)) {
        tw_error_clear(&err);
        tw_svc_prices_no_book(reg, cur, &err);
        whatif_error(rq, 404, "no_price_book", "region", &err);
        goto out;
    }
    if (rc == TW_EPARSE) {
        whatif_error(rq, 409, "price_book_invalid", "", &err);
        goto out;
    }
    if (rc != TW_OK) {
        whatif_error(rq, rc == TW_EINVAL ? 400 : 500, rc == TW_EINVAL ? "bad_request" : "internal",
                     "", &err);
        goto out;
    }
    rc = tw_whatif_run(in, &rq->srv->cat, b, z, res, field, &err);
    if (rc == TW_ENOENT) {
        whatif_error(rq, 404, "price_missing", field, &err);
        goto out;
    }
    if (rc == TW_ENOMEM || (rc != TW_OK && rc != TW_EINVAL && rc != TW_EPARSE && rc != TW_ERANGE)) {
        whatif_error(rq, 500, "internal", "", &err);
        goto out;
    }
    if (rc != TW_OK) {
        whatif_error(rq, 400, "bad_request", field, &err);
        goto out;
    }
    json_t *j = NULL;
    if ((rc = tw_whatif_json(res, &j, &err)) != TW_OK) {
        /* The run refuses amounts beyond what can be written, naming the
         * field; an amount still too large is the input's, not ours. */
        if (rc == TW_ERANGE)
            whatif_error(rq, 400, "bad_request", "count", &err);
        else
            whatif_error(rq, 500, "internal", "", &err);
        goto out;
    }
    tw_req_json(rq, 200, j);
out:
    if (st)
        tw_srv_store_put(rq->srv, st);
    tw_pricebook_free(b);
    tw_tz_free(z);
    free(in);
    free(res);
}
