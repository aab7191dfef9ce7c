/*
 * v1_opportunities.c - GET /api/v1/savings/opportunities?policy=NAME&
 * month=YYYY-MM[&currency=C] (reader): the fleet's savings opportunities
 * under one of the server's policies (--policies DIR) for a month, the
 * document `tierwise savings --db F --policy FILE --month M --json` prints
 * (service/opportunities.h, tw_opp_json), so the two never disagree.
 *
 * Statuses: 200 with the document, also when some disks have no price (a
 * tier a book lacks, a VM whose region is not known, a region without a
 * book): the document counts them (disks_without_price in every total)
 * and names the regions (regions_without_book), as the command prints
 * everything else and exits 1.  400 bad_request for a missing or bad
 * ?policy= or ?month=, or a ?currency= to choose (the store's books are in
 * several) or that is no currency code; 404 unknown_policy for a policy
 * the server does not hold; 409 policy_zone when the policy's timezone
 * does not load on this server (the message names it: the policy and the
 * server's zone files disagree); 422 no_price_book when nothing can be
 * priced for lack of books: the store has no book at all, or none of the
 * regions the matched disks need prices in has a book in the currency;
 * 500 otherwise.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/opportunities.h"

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

static enum tw_err to_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append(arg, buf, len);
}

void tw_v1_savings_opportunities(struct tw_req *rq)
{
    const char *name = arg(rq, "policy"), *month = arg(rq, "month");
    const char *currency = arg(rq, "currency");
    if (!name || !month) {
        tw_req_error(rq, 400, "bad_request",
                     "which policy and month? add ?policy=NAME&month=YYYY-MM (GET "
                     "/api/v1/policies lists the policies)");
        return;
    }
    struct tw_error err = {0};
    struct tw_opp_opts o = {.currency = currency, .cat = &rq->srv->cat, .caps = &rq->srv->caps,
                            .arm_sizes = rq->srv->vmsizes, .zone = tw_srv_zone, .zone_arg = rq->srv};
    if (tw_opp_month_parse(month, strlen(month), &o.year, &o.month, &err) != TW_OK) {
        char clean[512];
        tw_srv_clean_text(err.msg, clean, sizeof(clean));
        tw_req_error(rq, 400, "bad_request", "month: %s", clean);
        return;
    }
    const struct tw_svc_policy *p = tw_srv_policy_find(rq, name);
    if (!p)
        return;
    o.policy = &p->policy;
    struct tw_store *st = tw_srv_store_get(rq->srv, &err);
    if (!st) {
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    struct tw_buf out;
    tw_buf_init(&out, (size_t)1 << 31);
    struct tw_opp_result res;
    enum tw_err rc = tw_opp_json(st, &o, to_buf, &out, &res, &err);
    tw_srv_store_put(rq->srv, st);
    char clean[1024];
    tw_srv_clean_text(err.msg[0] ? err.msg : tw_strerror(rc), clean, sizeof(clean));
    /* Nothing priced for lack of books: every region looked up lacks one. */
    bool all_missing = res.n_books > 0;
    for (size_t i = 0; all_missing && i < res.n_books; i++)
        all_missing = res.books[i].missing;
    if (rc != TW_OK && res.fail == TW_OPP_FAIL_NO_BOOK) {
        tw_req_error(rq, 422, "no_price_book", "%s", clean);
    } else if (rc != TW_OK && res.fail == TW_OPP_FAIL_CURRENCY) {
        tw_req_error(rq, 400, "bad_request", "%s", clean);
    } else if (rc != TW_OK && res.fail == TW_OPP_FAIL_POLICY_ZONE) {
        tw_req_error(rq, 409, "policy_zone", "%s", clean);
    } else if (rc != TW_OK) {
        tw_req_error(rq, 500, "internal", "%s", clean);
    } else if (all_missing) {
        char regions[600];
        size_t n_missing = tw_opp_missing_regions(&res, regions, sizeof(regions));
        tw_req_error(rq, 422, "no_price_book",
                     "no disk the policy matches can be priced: no %s price book for %s; "
                     "refresh %s (POST /api/v1/prices/refresh)",
                     res.currency, regions, n_missing > 1 ? "them" : "it");
    } else {
        tw_req_body(rq, 200, "application/json", out.data, out.len);
        out.data = NULL;
    }
    tw_opp_result_cleanup(&res);
    tw_buf_cleanup(&out);
}
