/*
 * compliance.c - verdicts of stored results (compliance.h).
 */
#include "service/compliance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Judges VM VM_ID's RESULTS against INV into SINK; WHY (results NULL) when
 * the VM could not be read: one error for the VM, and the others go on. */
static enum tw_err judge_vm(const struct tw_svc_compliance_ctx *ctx, int64_t vm_id,
                            const struct tw_inventory *inv, const struct tw_result *results,
                            size_t n, const char *why, const struct tw_svc_compliance_sink *sink,
                            struct tw_verdict *v, struct tw_error *err)
{
    enum tw_err rc = TW_OK;
    if (why) {
        struct tw_svc_compliance_error e = {.vm_id = vm_id, .message = why};
        rc = sink->error(sink->arg, &e);
        if (rc != TW_OK && !err->code)
            tw_error_set(err, rc, "out of memory");
        return rc;
    }
    const struct tw_vmcap *cap = tw_vmcap_find(ctx->caps, inv->vm.vm_size);
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        struct tw_error e = {0};
        if (tw_verdict_check(&results[i], inv, ctx->cat, cap, v, &e) == TW_OK) {
            rc = sink->verdict(sink->arg, vm_id, inv, &results[i], v);
        } else {
            struct tw_svc_compliance_error ce = {.vm_id = vm_id,
                                                 .vm_name = inv->vm.name,
                                                 .result_id = results[i].id,
                                                 .profile = results[i].profile,
                                                 .message = e.msg};
            rc = sink->error(sink->arg, &ce);
        }
        if (rc != TW_OK && !err->code)
            tw_error_set(err, rc, "out of memory");
    }
    return rc;
}

enum tw_err tw_svc_compliance_vm(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                 int64_t vm_id, const struct tw_svc_compliance_sink *sink,
                                 struct tw_error *err)
{
    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_verdict *v = malloc(sizeof(*v));
    struct tw_result *results = NULL;
    size_t n = 0;
    enum tw_err rc;
    if (!inv || !v) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        goto out;
    }
    rc = tw_store_vm_latest(st, vm_id, inv, &results, &n, err);
    if (rc == TW_EPARSE) {
        /* A stored result this build no longer reads: that VM can't be
         * judged, and says so; the other VMs still are. */
        struct tw_error why = *err;
        tw_error_clear(err);
        rc = judge_vm(ctx, vm_id, inv, NULL, 0, why.msg, sink, v, err);
        goto out;
    }
    if (rc == TW_OK)
        rc = judge_vm(ctx, vm_id, inv, results, n, NULL, sink, v, err);
out:
    free(results);
    free(inv);
    free(v);
    return rc;
}

struct fleet_walk {
    const struct tw_svc_compliance_ctx *ctx;
    const struct tw_svc_compliance_sink *sink;
    struct tw_verdict *v;
    struct tw_error *err;
    size_t n_vms;
};

static enum tw_err fleet_vm(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                            const struct tw_result *results, size_t n, const char *why)
{
    struct fleet_walk *w = arg;
    w->n_vms++;
    return judge_vm(w->ctx, vm_id, inv, results, n, why, w->sink, w->v, w->err);
}

enum tw_err tw_svc_compliance_fleet(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                    const struct tw_svc_compliance_sink *sink, size_t *n_vms,
                                    struct tw_error *err)
{
    /* One pass over the store's rows, not three queries per VM. */
    struct fleet_walk w = {ctx, sink, malloc(sizeof(struct tw_verdict)), err, 0};
    if (!w.v)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    enum tw_err rc = tw_store_fleet_latest(st, fleet_vm, &w, err);
    free(w.v);
    if (n_vms)
        *n_vms = w.n_vms;
    return rc;
}

enum tw_err tw_svc_compliance_page(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                   const struct tw_store_page *pg,
                                   const struct tw_svc_compliance_sink *sink, size_t *n_vms,
                                   bool *more, struct tw_error *err)
{
    int64_t *ids = NULL;
    size_t n = 0;
    enum tw_err rc = tw_store_vm_ids_page(st, pg, &ids, &n, more, err);
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        rc = tw_svc_compliance_vm(st, ctx, ids[i], sink, err);
        if (rc == TW_ENOENT) { /* gone since the page was read */
            tw_error_clear(err);
            rc = TW_OK;
        }
    }
    free(ids);
    if (n_vms)
        *n_vms = n;
    return rc;
}

void tw_svc_compliance_summary_add(struct tw_svc_compliance_summary *sum, const char *sku,
                                   enum tw_verdict_kind kind)
{
    /* Compared as the row will hold it (a longer name cut short). */
    char name[sizeof(sum->skus[0].sku)];
    snprintf(name, sizeof(name), "%s", sku);
    size_t i = 0;
    while (i < sum->n_skus && strcmp(sum->skus[i].sku, name) != 0)
        i++;
    if (i == sum->n_skus) {
        /* Named rows take all but the last; the last, once needed,
         * gathers every SKU past them as "other" and is never
         * renamed, so no named row's counts move. */
        if (sum->n_skus < TW_SVC_SUMMARY_SKUS - 1) {
            memcpy(sum->skus[i].sku, name, sizeof(name));
            sum->n_skus++;
        } else {
            i = TW_SVC_SUMMARY_SKUS - 1;
            if (sum->n_skus == TW_SVC_SUMMARY_SKUS - 1) {
                memset(&sum->skus[i], 0, sizeof(sum->skus[i]));
                snprintf(sum->skus[i].sku, sizeof(sum->skus[0].sku), "other");
                sum->n_skus++;
            }
        }
    }
if ((unsigned)kind <= TW_VERDICT_INCONCLUSIVE)
        sum->skus[i].count[kind]++;
}

static enum tw_err count_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                 const struct tw_result *r, const struct tw_verdict *v)
{
    struct tw_svc_compliance_summary *sum = arg;
    (void)vm_id;
    (void)r;
    sum->verdicts++;
    for (size_t k = 0; k < v->n_disks; k++) {
        const char *sku = "unknown";
        for (size_t d = 0; d < inv->n_disks; d++)
            if (strcmp(inv->disks[d].name, v->disks[k].name) == 0)
                sku = inv->disks[d].sku;
        tw_svc_compliance_summary_add(sum, sku, v->kind);
    }
    return TW_OK;
}

static enum tw_err count_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)e;
    ((struct tw_svc_compliance_summary *)arg)->errors++;
    return TW_OK;
}

enum tw_err tw_svc_compliance_summary(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                      struct tw_svc_compliance_summary *out,
                                      struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    struct tw_svc_compliance_sink sink = {count_verdict, count_error, out};
    return tw_svc_compliance_fleet(st, ctx, &sink, &out->vms, err);
}
