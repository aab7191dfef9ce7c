/*
 * api.c - the route table of the server, and the dashboard's files.
 *
 * Handlers live one file per resource (v1_reports.c, v1_vms.c,
 * v1_disks.c, v1_compliance.c, v1_prices.c, v1_health.c) and answer
 * through tw_req_json / tw_req_error (server_int.h).  Reads take a store
 * handle from the pool for the length of the request.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/static.h"

void tw_api_static(struct tw_req *rq)
{
    int fd;
    size_t size;
    const char *type;
    struct tw_error err = {0};
    enum tw_err rc = tw_static_open(rq->srv->web_root, rq->path, &fd, &size, &type, &err);
    if (rc == TW_ENOENT) {
        tw_req_error(rq, 404, "not_found", "no such file: %s", rq->path);
        return;
    }
    if (rc != TW_OK) {
        tw_req_error(rq, 500, "internal", "%s", err.msg);
        return;
    }
    struct MHD_Response *r = MHD_create_response_from_fd(size, fd);
    if (!r) {
        close(fd);
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                            "frame-ancestors 'none'");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    rq->resp = r;
    rq->status = 200;
}

/*
 * The routes.  Roles: agents post reports, readers read, admins may do
 * everything (tw_auth_role_allowed); PUBLIC answers without a token.
 * Dashboard files (GET outside /api/) are not in the table: they carry
 * no data and answer without a token.
 */
const struct tw_route tw_api_routes[] = {
    {"GET", "/healthz", TW_AUTH_PUBLIC, tw_v1_healthz, false},
    {"GET", "/metrics", TW_AUTH_PUBLIC, tw_v1_metrics, false},
    {"POST", "/api/v1/reports", TW_AUTH_AGENT, tw_v1_post_report, true},
    {"GET", "/api/v1/vms", TW_AUTH_READER, tw_v1_vms, false},
    {"GET", "/api/v1/vms/{id}", TW_AUTH_READER, tw_v1_vm, false},
    {"GET", "/api/v1/disks", TW_AUTH_READER, tw_v1_disks, false},
    {"GET", "/api/v1/disks/{id}", TW_AUTH_READER, tw_v1_disk, false},
    {"GET", "/api/v1/compliance", TW_AUTH_READER, tw_v1_compliance, false},
    {"GET", "/api/v1/compliance/summary", TW_AUTH_READER, tw_v1_compliance_summary, false},
    {"GET", "/api/v1/prices", TW_AUTH_READER, tw_v1_prices, false},
    {"POST", "/api/v1/prices/refresh", TW_AUTH_ADMIN, tw_v1_prices_refresh, true},
    {"POST", "/api/v1/savings/whatif", TW_AUTH_READER, tw_v1_savings_whatif, true},
    {"GET", "/api/v1/operations/{name}", TW_AUTH_READER, tw_v1_operation, false},
    {"GET", "/api/v1/policies", TW_AUTH_READER, tw_v1_policies, false},
    {"GET", "/api/v1/policies/{name}", TW_AUTH_READER, tw_v1_policy, false},
    {"GET", "/api/v1/savings/opportunities", TW_AUTH_READER, tw_v1_savings_opportunities, false},
    {"GET", "/api/v1/drift", TW_AUTH_READER, tw_v1_drift, false},
    {"GET", "/api/v1/plan", TW_AUTH_READER, tw_v1_plan, false},
    {"GET", "/api/v1/plan.ics", TW_AUTH_READER, tw_v1_plan_ics, false},
    {"GET", "/api/v1/actions", TW_AUTH_READER, tw_v1_actions, false},
    {"POST", "/api/v1/actions", TW_AUTH_ADMIN, tw_v1_actions_post, true},
    {"GET", "/api/v1/actions/{id}", TW_AUTH_READER, tw_v1_action, false},
    {"GET", "/api/v1/reports/monthly", TW_AUTH_READER, tw_v1_reports_monthly, false},
    {"GET", "/api/v1/openapi.json", TW_AUTH_PUBLIC, tw_v1_openapi, false},
};
const size_t tw_api_n_routes = sizeof(tw_api_routes) / sizeof(tw_api_routes[0]);

