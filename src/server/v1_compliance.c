/*
 * v1_compliance.c - GET /api/v1/compliance, and the verdicts of a VM or
 * of the fleet as the API shows them (JSON arrays filled from the service
 * room's sink, service/compliance.h), which /vms/{id}, /disks and
 * /disks/{id} use too.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verdict.h"
#include "service/compliance.h"

/* ---- verdicts ---- */

/* Verdicts as the API shows them: into two JSON arrays. */
struct verdict_json {
    json_t *verdicts, *errors;
    int only; /* an enum tw_verdict_kind to keep, -1: all */
};

static enum tw_err on_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                              const struct tw_result *r, const struct tw_verdict *v)
{
    const char *vm_name = inv->vm.name;
    struct verdict_json *vj = arg;
    if (vj->only >= 0 && (int)v->kind != vj->only)
        return TW_OK;
    json_t *o = tw_verdict_to_value(v);
    if (!o)
        return TW_ENOMEM;
    json_object_set_new(o, "profile", json_string(r->profile));
    json_object_set_new(o, "started_at", json_string(r->started_at));
    json_object_set_new(o, "vm_id", json_integer(vm_id));
    json_object_set_new(o, "vm_name", json_string(vm_name));
    return json_array_append_new(vj->verdicts, o) == 0 ? TW_OK : TW_ENOMEM;
}

static enum tw_err on_verdict_error(void *arg, const struct tw_svc_compliance_error *e)
{
    struct verdict_json *vj = arg;
    json_t *o;
    if (!e->vm_name) /* the VM itself did not read */
        o = json_pack("{s:I, s:n, s:n, s:n, s:s}", "vm_id", (json_int_t)e->vm_id, "vm_name",
                      "result_id", "profile", "message", e->message);
    else
        o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "result_id", e->result_id, "profile",
                      e->profile, "message", e->message, "vm_id", (json_int_t)e->vm_id,
                      "vm_name", e->vm_name);
    return o && json_array_append_new(vj->errors, o) == 0 ? TW_OK : TW_ENOMEM;
}

static void compliance_ctx(const struct tw_server *srv, struct tw_svc_compliance_ctx *ctx)
{
    ctx->cat = &srv->cat;
    ctx->caps = &srv->caps;
    ctx->arm = srv->vmsizes;
    ctx->fixed = &srv->basis_fixed;
}

void tw_srv_compliance_ctx(const struct tw_server *srv, struct tw_svc_compliance_ctx *ctx)
{
    compliance_ctx(srv, ctx);
}

/*
 * Appends a verdict for each latest result of VM VM_ID to VERDICTS (with
 * "vm_id" and "vm_name"), and {"vm_id", "vm_name", "result_id", "message"}
 * for each result that can't be judged to ERRORS.  TW_ENOENT when there is
 * no such VM; other store errors in ERR.
 */
enum tw_err tw_v1_vm_verdicts(struct tw_server *srv, struct tw_store *st, int64_t vm_id,
                               json_t *verdicts, json_t *errors, struct tw_error *err)
{
    struct verdict_json vj = {verdicts, errors, -1};
    struct tw_svc_compliance_sink sink = {on_verdict, on_verdict_error, &vj};
    struct tw_svc_compliance_ctx ctx;
    compliance_ctx(srv, &ctx);
    if (!verdicts || !errors)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    return tw_svc_compliance_vm(st, &ctx, vm_id, &sink, err);
}

/* Whether verdict V covers disk NAME of VM VM_ID. */
static bool verdict_covers(const json_t *v, int64_t vm_id, const char *name)
{
    if (json_integer_value(json_object_get(v, "vm_id")) != vm_id)
        return false;
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(v, "disks"), i, d)
    {
        const char *s = json_is_string(d) ? json_string_value(d)
                                          : json_string_value(json_object_get(d, "name"));
        if (s && name && strcmp(s, name) == 0)
            return true;
    }
    return false;
}

/* Sets "verdicts" on each disk object of DISKS: those of ALL covering it. */
void tw_v1_attach_disk_verdicts(json_t *disks, const json_t *all)
{
    size_t i, k;
    json_t *disk;
    const json_t *v;
    json_array_foreach(disks, i, disk)
    {
        json_t *mine = json_array();
        int64_t vm_id = json_integer_value(json_object_get(disk, "vm_id"));
        const char *name = json_string_value(json_object_get(disk, "name"));
        json_array_foreach(all, k, v)
        {
            if (verdict_covers(v, vm_id, name))
                json_array_append(mine, (json_t *)v);
        }
        json_object_set_new(disk, "verdicts", mine);
    }
}

enum tw_err tw_v1_page_verdicts(struct tw_server *srv, struct tw_store *st,
                                const struct tw_store_page *pg, int verdict, json_t *verdicts,
                                json_t *errors, size_t *n_vms, bool *more, struct tw_error *err)
{
    struct verdict_json vj = {verdicts, errors, verdict};
    struct tw_svc_compliance_sink sink = {on_verdict, on_verdict_error, &vj};
    struct tw_svc_compliance_ctx ctx;
    compliance_ctx(srv, &ctx);
    if (!verdicts || !errors)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    return tw_svc_compliance_page(st, &ctx, pg, &sink, n_vms, more, err);
}

void tw_v1_compliance(struct tw_req *rq)
{
    struct tw_store_page pg;
    int verdict;
    if (!tw_req_page(rq, &pg, &verdict))
        return;
    WITH_STORE(rq, st, err);
    json_t *verdicts = json_array(), *errors = json_array();
    size_t n_vms = 0;
    bool more = false;
    enum tw_err rc = tw_v1_page_verdicts(rq->srv, st, &pg, verdict, verdicts, errors, &n_vms,
                                         &more, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc == TW_ENOENT ? TW_EIO : rc, &err);
        return;
    }
    tw_req_json(rq, 200,
                json_pack("{s:I, s:o, s:o, s:o}", "vms", (json_int_t)n_vms, "verdicts", verdicts,
                          "errors", errors, "next_cursor", tw_page_next_cursor(&pg, more)));
}

/* GET /api/v1/compliance/summary: {"vms", "verdicts", "errors", "by_sku":
 * [{"sku", "delivers", "under", "vm-capped", "burst", "cached",
 * "inconclusive"}]}, each verdict counted for every disk it covers. */
void tw_v1_compliance_summary(struct tw_req *rq)
{
    struct tw_svc_compliance_summary *sum = malloc(sizeof(*sum));
    if (!sum) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    struct tw_error err = {0};
    struct tw_store *st = tw_srv_store_get(rq->srv, &err);
    if (!st) {
        free(sum);
        tw_req_store_error(rq, err.code ? err.code : TW_EIO, &err);
        return;
    }
    struct tw_svc_compliance_ctx ctx;
    compliance_ctx(rq->srv, &ctx);
    enum tw_err rc = tw_svc_compliance_summary(st, &ctx, sum, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        free(sum);
        tw_req_store_error(rq, rc == TW_ENOENT ? TW_EIO : rc, &err);
        return;
    }
    json_t *by = json_array();
    for (size_t i = 0; by && i < sum->n_skus; i++) {
        json_t *o = json_pack("{s:s}", "sku", sum->skus[i].sku);
        for (int k = TW_VERDICT_DELIVERS; o && k <= TW_VERDICT_INCONCLUSIVE; k++)
            json_object_set_new(o, tw_verdict_name((enum tw_verdict_kind)k),
                                json_integer((json_int_t)sum->skus[i].count[k]));
        if (json_array_append_new(by, o) != 0) {
            json_decref(by);
            by = NULL;
        }
    }
    json_t *out = by ? json_pack("{s:I, s:I, s:I, s:o}", "vms", (json_int_t)sum->vms, "verdicts",
                                 (json_int_t)sum->verdicts, "errors", (json_int_t)sum->errors,
                                 "by_sku", by)
                     : NULL;
    free(sum);
    tw_req_json(rq, 200, out);
}
