/*
 * v1_plan.c - GET /api/v1/plan?policy=NAME[&from=DATE][&to=DATE]
 * [&currency=C] and GET /api/v1/plan.ics (same query), readers: the tier
 * switches one of the server's policies (--policies DIR) calls for over
 * [from, to), as the tierwise.plan/1 document `tierwise plan --json`
 * prints, or as the iCalendar file of `tierwise plan --ics`
 * (service/plan.h), so the two never disagree.  FROM defaults to now and
 * TO to seven days after FROM; a DATE is RFC 3339 or YYYY-MM-DD (that
 * day's midnight in the policy's timezone).
 *
 * Statuses as the opportunities' route: 400 bad_request for a missing
 * ?policy=, a date that does not read or is outside the years 1970..2199,
 * a TO not after FROM or a period longer than TW_PLAN_ROUTE_MAX_DAYS (366
 * days: the document is buffered whole; the message says which parameter
 * and what is expected), a ?currency= to choose or not a code; 404
 * unknown_policy; 409 policy_zone; 422 no_price_book when the store has
 * no price book at all or none for any region the policy's disks are in;
 * 500 otherwise.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/time.h"
#include "service/plan.h"

#define PLAN_DEFAULT_NS (7 * TW_NS_PER_DAY)

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

static enum tw_err to_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append(arg, buf, len);
}

static bool date_arg(struct tw_req *rq, const char *name, const char *v, const struct tw_tz *z,
                     int64_t *ns)
{
    struct tw_error err = {0};
    if (tw_svc_plan_date(v, strlen(v), z, ns, &err) == TW_OK)
        return true;
    char clean[512];
    tw_srv_clean_text(err.msg, clean, sizeof(clean));
    tw_req_error(rq, 400, "bad_request", "%s: %s", name, clean);
    return false;
}

static void plan_route(struct tw_req *rq, bool ics)
{
    const char *name = arg(rq, "policy"), *from = arg(rq, "from"), *to = arg(rq, "to");
    if (!name) {
        tw_req_error(rq, 400, "bad_request",
                     "which policy? add ?policy=NAME (GET /api/v1/policies lists them), and "
                     "&from=DATE&to=DATE if not the next seven days");
        return;
    }
    const struct tw_svc_policy *p = tw_srv_policy_find(rq, name);
    if (!p)
        return;
    const char *zone_name = p->policy.timezone[0] ? p->policy.timezone : "UTC";
    struct tw_tz *z = NULL;
    struct tw_error err = {0};
    if (tw_srv_zone(rq->srv, zone_name, &z, &err) != TW_OK) {
        char clean[600];
        tw_srv_clean_text(err.msg, clean, sizeof(clean));
        tw_req_error(rq, 409, "policy_zone",
                     "the policy %s's timezone \"%s\" does not load on this server: %s",
                     p->policy.name, zone_name, clean);
        return;
    }
    struct tw_plan_opts o = {.policy = &p->policy, .currency = arg(rq, "currency"),
                             .cat = &rq->srv->cat, .caps = &rq->srv->caps,
                             .arm_sizes = rq->srv->vmsizes, .zone = tw_srv_zone, .zone_arg = rq->srv};
    /* The calendar's UIDs name this installation: the database and the
     * host (as `tierwise plan --ics` on the same database says them). */
    char inst[PATH_MAX + 300], real[PATH_MAX], host[256] = "";
    if (!realpath(rq->srv->db_path, real))
        snprintf(real, sizeof(real), "%s", rq->srv->db_path);
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    snprintf(inst, sizeof(inst), "%s@%s", real, host);
    o.installation = inst;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    o.now_ns = (int64_t)ts.tv_sec * TW_NS_PER_S + ts.tv_nsec;
    o.from_ns = o.now_ns;
    bool ok = !from || date_arg(rq, "from", from, z, &o.from_ns);
    if (ok && to)
        ok = date_arg(rq, "to", to, z, &o.to_ns);
    else if (ok && !tw_time_add(o.from_ns, PLAN_DEFAULT_NS, &o.to_ns))
        o.to_ns = INT64_MAX; /* refused just below, never wrapped */
    tw_tz_free(z);
    if (!ok)
        return;
    /* The period checked up front: in the years a plan takes, TO after
     * FROM, at most TW_PLAN_ROUTE_MAX_DAYS (the document is buffered). */
    if (tw_svc_plan_period(o.from_ns, o.to_ns, TW_PLAN_ROUTE_MAX_DAYS, &err) != TW_OK) {
        char clean[512];
        tw_srv_clean_text(err.msg, clean, sizeof(clean));
        tw_req_error(rq, 400, "bad_request", "%s", clean);
        return;
    }
    struct tw_store *st = tw_srv_store_get(rq->srv, &err);
    if (!st) {
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    /* The currency first: its errors are the caller's (400) or the
     * store's lack of books (422). */
    char cur[4];
    enum tw_err rc = tw_opp_currency(st, o.currency, cur, &err);
    struct tw_buf out;
    struct tw_plan_summary pl;
    memset(&pl, 0, sizeof(pl));
    tw_buf_init(&out, (size_t)1 << 31);
    if (rc == TW_OK)
        rc = ics ? tw_svc_plan_ics_sum(st, &o, to_buf, &out, &pl, &err)
                 : tw_svc_plan_json_sum(st, &o, to_buf, &out, &pl, &err);
    tw_srv_store_put(rq->srv, st);
    /* No region the plan needed has a book: nothing could be priced. */
    if (rc == TW_OK && pl.missing_books > 0 && pl.missing_books == pl.needed_books) {
        rc = TW_ENOENT;
        tw_error_set(&err, TW_ENOENT,
                     "no price book for any region the policy's disks are in: %s (tierwise "
                     "prices refresh --region R)",
                     pl.missing_regions);
    }
    char clean[1024];
    tw_srv_clean_text(err.msg[0] ? err.msg : tw_strerror(rc), clean, sizeof(clean));
    if (rc == TW_ENOENT && strstr(err.msg, "price book"))
        tw_req_error(rq, 422, "no_price_book", "%s", clean);
    else if (rc == TW_EINVAL && strstr(err.msg, "currenc"))
        tw_req_error(rq, 400, "bad_request", "currency: %s", clean);
    else if (rc != TW_OK)
        tw_req_error(rq, 500, "internal", "%s", clean);
    else {
        tw_req_body(rq, 200, ics ? "text/calendar; charset=utf-8" : "application/json",
                    out.data, out.len);
        out.data = NULL;
    }
    tw_buf_cleanup(&out);
}

void tw_v1_plan(struct tw_req *rq)
{
    plan_route(rq, false);
}

void tw_v1_plan_ics(struct tw_req *rq)
{
    plan_route(rq, true);
}
