/*
 * v1_policies.c - GET /api/v1/policies (every policy of --policies DIR,
 * with its file and a summary of its windows) and GET
 * /api/v1/policies/{name} (one policy's canonical JSON, every default
 * filled in).  The set is read at start and never changes, so the
 * handlers read it without a lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "server/server_int.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* {"source": "list"|"tag"|"observed"|"none", "summary": ..., "timezone": ...} */
static json_t *windows_summary(const struct tw_policy *p)
{
    char text[TW_WINDOWS_MAX * 24 + 64];
    const char *source;
    if (!p->switches) {
        source = "none";
        snprintf(text, sizeof(text), "never switches");
    } else if (p->windows_kind == TW_PW_LIST) {
        source = "list";
        if (!tw_windows_format(&p->windows, text, sizeof(text)))
            text[0] = '\0';
    } else if (p->windows_kind == TW_PW_TAG) {
        source = "tag";
        snprintf(text, sizeof(text), "each VM's tag %.500s (Cloud Custodian's form)",
                 p->windows_tag);
    } else {
        source = "observed";
        snprintf(text, sizeof(text),
                 "learned: deallocated in at least %d of the last %d weeks, by quarter-hour",
                 p->observed_min_weeks, p->observed_weeks);
    }
    return json_pack("{s:s, s:s, s:s}", "source", source, "summary", text, "timezone",
                     p->timezone);
}

static const char *target_text(const struct tw_policy *p)
{
    if (!p->switches)
        return "none";
    if (p->cheapest)
        return "cheapest";
    return p->n_targets ? p->targets[0] : "";
}

void tw_v1_policies(struct tw_req *rq)
{
    const struct tw_svc_policies *ps = &rq->srv->policies;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < ps->n; i++) {
        const struct tw_policy *p = &ps->v[i].policy;
        json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", p->name, "description",
                              p->description, "file", base_name(ps->v[i].path), "target",
                              target_text(p), "windows", windows_summary(p));
        if (!e || json_array_append_new(arr, e) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    /* tw_req_json answers 500 when out of memory (V NULL). */
    tw_req_json(rq, 200, arr ? json_pack("{s:o}", "policies", arr) : NULL);
}

void tw_v1_policy(struct tw_req *rq)
{
    const struct tw_svc_policy *sp = tw_svc_policies_find(&rq->srv->policies, rq->name);
    if (!sp) {
        tw_req_error(rq, 404, "not_found",
                     "no policy \"%s\": the policies are the files of the server's --policies "
                     "folder, read at start (GET /api/v1/policies lists them)",
                     rq->name);
        return;
    }
    char *body = tw_policy_to_json(&sp->policy);
    if (!body) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    size_t n = strlen(body);
    char *t = realloc(body, n + 2);
    if (t) {
        t[n++] = '\n';
        t[n] = '\0';
        body = t;
    }
    tw_req_body(rq, 200, "application/json", body, n);
}
