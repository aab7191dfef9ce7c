/*
 * v1_drift.c - GET /api/v1/drift (reader): the disks drifting now, a VM
 * running on a disk below the SKU its policy requires while running
 * (service/drift.h), as {"drift": [{"vm", "disk", "sku", "required_sku",
 * "since", "policy", "vm_id", "disk_id"}], "count": N}: the document
 * `tierwise drift --json` prints.  Judged when asked, at the system
 * clock's now, by the server's policies (--policies DIR), else by those
 * its database holds.  500 when the store fails (or a stored policy no
 * longer reads), with the message.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/drift.h"

void tw_v1_drift(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    const struct tw_policy **pols = NULL;
    size_t n = srv->policies.n;
    if (n && !(pols = calloc(n, sizeof(*pols)))) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        pols[i] = &srv->policies.v[i].policy;
    struct tw_error err = {0};
    struct tw_store *st = tw_srv_store_get(srv, &err);
    if (!st) {
        free(pols);
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    char *doc = NULL;
    enum tw_err rc = tw_svc_drift_json(st, pols, n, now_ms, JSON_COMPACT, &doc, NULL, &err);
    tw_srv_store_put(srv, st);
    free(pols);
    if (rc != TW_OK) {
        char clean[1024];
        tw_srv_clean_text(err.msg[0] ? err.msg : tw_strerror(rc), clean, sizeof(clean));
        tw_req_error(rq, 500, "internal", "%s", clean);
        return;
    }
    tw_req_body(rq, 200, "application/json", doc, strlen(doc));
}
