/*
 * policy_args.c - what the routes over the server's policies (--policies
 * DIR) share: the zone loader their runs are given, one policy found by
 * name or the 404 that says which there are, and the 409 of a policy whose
 * timezone does not load on this server (server_int.h).
 */
#include "server/server_int.h"

#include <string.h>

enum tw_err tw_srv_zone(void *arg, const char *name, struct tw_tz **out, struct tw_error *err)
{
    struct tw_server *srv = arg;
    if (srv->tz_load)
        return srv->tz_load(name, out, err);
    if (strcmp(name, "UTC") == 0)
        return tw_tz_from_posix("UTC0", 4, out, err);
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "this server was started without zone files, so it knows UTC only, "
                        "not %s", name);
}

const struct tw_svc_policy *tw_srv_policy_find(struct tw_req *rq, const char *name)
{
    const struct tw_svc_policy *p = tw_svc_policies_find(&rq->srv->policies, name);
    if (p)
        return p;
    char clean[160];
    tw_srv_clean_text(name, clean, sizeof(clean));
    if (rq->srv->policies.n == 0)
        tw_req_error(rq, 404, "unknown_policy",
                     "no policy \"%s\": this server holds no policies (start it with "
                     "--policies DIR)", clean);
    else
        tw_req_error(rq, 404, "unknown_policy",
                     "no policy \"%s\" among the server's %zu (GET /api/v1/policies lists "
                     "them)", clean, rq->srv->policies.n);
    return NULL;
}

bool tw_srv_policy_zone_ok(struct tw_req *rq, const struct tw_policy *p)
{
    const char *zone_name = p->timezone[0] ? p->timezone : "UTC";
    struct tw_tz *z = NULL;
    struct tw_error err = {0};
    if (tw_srv_zone(rq->srv, zone_name, &z, &err) == TW_OK) {
        tw_tz_free(z);
        return true;
    }
    char clean[600];
    tw_srv_clean_text(err.msg, clean, sizeof(clean));
    tw_req_error(rq, 409, "policy_zone",
                 "the policy %s's timezone \"%s\" does not load on this server: %s", p->name,
                 zone_name, clean);
    return false;
}
