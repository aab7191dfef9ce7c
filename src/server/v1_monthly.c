/*
 * v1_monthly.c - GET /api/v1/reports/monthly?month=YYYY-MM[&format=json|
 * csv|html][&currency=C][&group_by=G][&policy=NAME]...[&disk=ID] (reader):
 * the monthly cost-saving report, built by tw_mr_build and written by the
 * form's writer (service/monthly.h), the document `tierwise report monthly
 * --format F` writes for the same database and policies.
 *
 *   format    json (default, application/json), csv (text/csv; charset=
 *             utf-8, as the attachment tierwise-YYYY-MM.csv) or html
 *             (text/html; charset=utf-8)
 *   group_by  resource-group (default), subscription or tag:NAME
 *   policy    repeatable: policies of the server's --policies DIR the
 *             saving still possible is judged by; none: every one of them
 *   disk      that disk's row alone, its totals its own (the dashboard's
 *             disk page: cost by month)
 *
 * Statuses: 200 with the report, also when some disks have no price (the
 * report counts them in "unpriced" and names the regions in "missing");
 * 400 bad_request for a missing or bad month, format, group_by or disk, one
 * of month, format, currency, group_by, disk given empty (not the default)
 * or twice with different values, a currency to choose or that is no code,
 * more policies than TW_MR_ROUTE_MAX_POLICIES named or (none named) held by
 * the server, as the command refuses; 404 unknown_policy for a policy the server
 * does not hold, not_found for a disk the store does not hold or that is
 * attached to no VM (a report's rows are attached disks); 409 policy_zone
 * when a policy's timezone does not load on this server; 422
 * no_price_book when the store has no price book at all, or none in the
 * ?currency= asked while it has books in others ("no price book in EUR:
 * the database's books are in GBP, USD"; the command's exit 2); 503 busy when
 * TW_MR_ROUTE_MAX_BUILDS reports are being built already (the build runs
 * on the request's thread and holds the month's rows: the bound keeps a
 * burst of requests from holding a daemon thread each and their memory);
 * 500 otherwise.
 */
#include "server/server_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/monthly.h"
#include "service/monthly_forms.h"
#include "service/opportunities.h"

#define TW_MR_ROUTE_MAX_BUILDS 2
#define TW_MR_ROUTE_MAX_POLICIES 64

static atomic_int building;

/* The single-valued arguments, gathered in one pass: each NULL when not
 * given, "" when given empty (?format= is a 400, not the default), and the
 * first of them named twice with different values. */
static const char *const single_names[] = {"month", "format", "currency", "group_by", "disk"};
#define N_SINGLE (sizeof(single_names) / sizeof(single_names[0]))

struct singles {
    const char *v[N_SINGLE];
    const char *twice; /* the name given twice with different values */
};

static enum MHD_Result gather(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    (void)kind;
    struct singles *a = cls;
    if (!key)
        return MHD_YES;
    if (!value)
        value = "";
    for (size_t i = 0; i < N_SINGLE; i++) {
        if (strcmp(key, single_names[i]) != 0)
            continue;
        if (!a->v[i])
            a->v[i] = value;
        else if (strcmp(a->v[i], value) != 0 && !a->twice)
            a->twice = single_names[i];
    }
    return MHD_YES;
}

static enum tw_err to_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append(arg, buf, len);
}

/* The ?policy= values, in the order given. */
struct picked {
    struct tw_req *rq;
    const struct tw_policy *v[TW_MR_ROUTE_MAX_POLICIES];
    size_t n;
    bool too_many, unknown;
};

static enum MHD_Result pick(void *cls, enum MHD_ValueKind kind, const char *key,
                            const char *value)
{
    (void)kind;
    struct picked *p = cls;
    if (!key || strcmp(key, "policy") != 0 || p->too_many || p->unknown)
        return MHD_YES;
    const struct tw_svc_policy *sp = tw_srv_policy_find(p->rq, value ? value : "");
    if (!sp) {
        p->unknown = true; /* answered */
        return MHD_NO;
    }
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] == &sp->policy)
            return MHD_YES; /* named twice: once is enough */
    if (p->n == TW_MR_ROUTE_MAX_POLICIES) {
        p->too_many = true;
        return MHD_NO;
    }
    p->v[p->n++] = &sp->policy;
    return MHD_YES;
}

/* ?disk=ID: a decimal id above 0. */
static bool disk_arg(const char *s, int64_t *id)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v <= 0)
        return false;
    *id = v;
    return true;
}

static void build_and_answer(struct tw_req *rq, struct tw_mr_opts *o, const char *format,
                             const char *month)
{
    struct tw_error err = {0};
    struct tw_store *st = tw_srv_store_get(rq->srv, &err);
    if (!st) {
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    enum tw_err crc = tw_mr_currency_ok(st, o->currency, &err);
    if (crc != TW_OK) {
        tw_srv_store_put(rq->srv, st);
        char cclean[600];
        tw_srv_clean_text(err.msg, cclean, sizeof(cclean));
        if (crc == TW_ENOENT)
            tw_req_error(rq, 422, "no_price_book", "currency: %s", cclean);
        else
            tw_req_store_error(rq, crc, &err);
        return;
    }
    if (o->disk_id > 0) {
        struct tw_store_disk_row row;
        enum tw_err drc = tw_store_disk(st, o->disk_id, &row, &err);
        if (drc != TW_OK) {
            tw_srv_store_put(rq->srv, st);
            if (drc == TW_ENOENT)
                tw_req_error(rq, 404, "not_found", "no disk %lld (GET /api/v1/disks lists "
                             "them)", (long long)o->disk_id);
            else
                tw_req_store_error(rq, drc, &err);
            return;
        }
    }
    struct tw_mr_model m;
    memset(&m, 0, sizeof(m));
    enum tw_err rc = tw_mr_build(st, o, &m, &err);
    tw_srv_store_put(rq->srv, st);
    struct tw_buf out;
    tw_buf_init(&out, (size_t)1 << 31);
    if (rc == TW_OK)
        rc = !strcmp(format, "csv")    ? tw_mr_write_csv(&m, to_buf, &out, &err)
             : !strcmp(format, "html") ? tw_mr_write_html(&m, to_buf, &out, &err)
                                       : tw_mr_write_json(&m, to_buf, &out, &err);
    tw_mr_model_cleanup(&m);
    char clean[1024];
    tw_srv_clean_text(err.msg[0] ? err.msg : tw_strerror(rc), clean, sizeof(clean));
    if (rc == TW_ENOENT && o->disk_id > 0 && !strstr(err.msg, "price book")) {
        /* No such disk (removed since the check above).  A disk stored but
         * not in the fleet that month is a report without rows (200). */
        tw_req_error(rq, 404, "not_found", "%s", clean);
    } else if (rc == TW_ENOENT) {
        tw_req_error(rq, 422, "no_price_book", "%s", clean);
    } else if (rc == TW_EINVAL || rc == TW_EPARSE) {
        tw_req_error(rq, 400, "bad_request", "%s", clean);
    } else if (rc != TW_OK) {
        tw_req_error(rq, 500, "internal", "%s", clean);
    } else {
        const char *type = !strcmp(format, "csv")    ? "text/csv; charset=utf-8"
                           : !strcmp(format, "html") ? "text/html; charset=utf-8"
                                                     : "application/json";
        if (!out.data && tw_buf_append(&out, "", 0) != TW_OK) {
            tw_req_error(rq, 500, "internal", "out of memory");
            return;
        }
        tw_req_body(rq, 200, type, out.data, out.len);
        out.data = NULL;
        if (rq->resp && !strcmp(format, "csv")) {
            char cd[96];
            snprintf(cd, sizeof(cd), "attachment; filename=\"tierwise-%s.csv\"", month);
            MHD_add_response_header(rq->resp, "Content-Disposition", cd);
        }
    }
    tw_buf_cleanup(&out);
}

void tw_v1_reports_monthly(struct tw_req *rq)
{
    struct singles a = {0};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, gather, &a);
    if (a.twice) {
        tw_req_error(rq, 400, "bad_request", "%s is given twice with different values: give "
                     "it once", a.twice);
        return;
    }
    for (size_t i = 0; i < N_SINGLE; i++)
        if (a.v[i] && !a.v[i][0]) {
            tw_req_error(rq, 400, "bad_request", "%s is empty: give a value or leave it out",
                         single_names[i]);
            return;
        }
    const char *month = a.v[0], *format = a.v[1], *currency = a.v[2];
    const char *group_by = a.v[3], *disk = a.v[4];
    if (!month) {
        tw_req_error(rq, 400, "bad_request",
                     "which month? add ?month=YYYY-MM (e.g. ?month=2026-11), and &format=csv "
                     "or &format=html if not JSON");
        return;
    }
    struct tw_error err = {0};
    struct tw_mr_opts o = {.currency = currency, .cat = &rq->srv->cat,
                           .caps = &rq->srv->caps, .arm_sizes = rq->srv->vmsizes,
                           .zone = tw_srv_zone, .zone_arg = rq->srv,
                           .db_path = rq->srv->db_path};
    char clean[600];
    if (tw_opp_month_parse(month, strlen(month), &o.year, &o.month, &err) != TW_OK) {
        tw_srv_clean_text(err.msg, clean, sizeof(clean));
        tw_req_error(rq, 400, "bad_request", "month: %s", clean);
        return;
    }
    if (!format)
        format = "json";
    if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0 &&
        strcmp(format, "html") != 0) {
        tw_srv_clean_text(format, clean, 160);
        tw_req_error(rq, 400, "bad_request", "format \"%s\" is not one: give json, csv or "
                     "html", clean);
        return;
    }
    /* The parser points o.group_tag into what it is given, read by the
     * build as a C string: a NUL-terminated copy of its LEN bytes. */
    char group_buf[1024];
    size_t glen = group_by ? strnlen(group_by, sizeof(group_buf)) : 0;
    if (glen == sizeof(group_buf)) {
        tw_req_error(rq, 400, "bad_request", "group_by: too long (tag:NAME, a tag's name 1 to "
                     "512 bytes)");
        return;
    }
    if (group_by) {
        memcpy(group_buf, group_by, glen);
        group_buf[glen] = '\0';
    }
    if (group_by && tw_mr_group_by_parse(group_buf, glen, &o, &err) != TW_OK) {
        /* The parser speaks of the command's option; this is the query's. */
        const char *msg = err.msg;
        if (strncmp(msg, "--group-by: ", 12) == 0)
            msg += 12;
        tw_srv_clean_text(msg, clean, sizeof(clean));
        tw_req_error(rq, 400, "bad_request", "group_by: %s", clean);
        return;
    }
    if (disk && !disk_arg(disk, &o.disk_id)) {
        tw_srv_clean_text(disk, clean, 160);
        tw_req_error(rq, 400, "bad_request", "disk \"%s\" is not a disk id (a whole number "
                     "above 0, as GET /api/v1/disks gives)", clean);
        return;
    }
    struct picked p = {.rq = rq};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, pick, &p);
    if (p.unknown)
        return;
    if (p.too_many) {
        tw_req_error(rq, 400, "bad_request", "at most %d policies in one report",
                     TW_MR_ROUTE_MAX_POLICIES);
        return;
    }
    if (p.n == 0) {
        /* None named: every policy of the server, refused past the bound
         * as the command refuses the database's (never some dropped). */
        if (rq->srv->policies.n > TW_MR_ROUTE_MAX_POLICIES) {
            tw_req_error(rq, 400, "bad_request", "the server holds %zu policies, more than the "
                         "%d a report judges by; name them with ?policy=NAME",
                         rq->srv->policies.n, TW_MR_ROUTE_MAX_POLICIES);
            return;
        }
        for (size_t i = 0; i < rq->srv->policies.n; i++)
            p.v[p.n++] = &rq->srv->policies.v[i].policy;
    }
    for (size_t i = 0; i < p.n; i++)
        if (!tw_srv_policy_zone_ok(rq, p.v[i]))
            return;
    o.policies = p.v;
    o.n_policies = p.n;
    if (atomic_fetch_add(&building, 1) >= TW_MR_ROUTE_MAX_BUILDS) {
        atomic_fetch_sub(&building, 1);
        tw_req_error(rq, 503, "busy", "%d monthly reports are being built already; try again "
                     "in a few seconds", TW_MR_ROUTE_MAX_BUILDS);
        return;
    }
    build_and_answer(rq, &o, format, month);
    atomic_fetch_sub(&building, 1);
}
