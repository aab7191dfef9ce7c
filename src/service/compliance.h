/*
 * compliance.h - the verdicts of the fleet's stored results: for one VM
 * or every VM, each latest result (per target and profile) judged against
 * the VM's last inventory, the tier catalog and the VM caps
 * (core/verdict.h).  Plain C over a store handle; the REST handlers and
 * any command that reads the store call the same functions.
 *
 * Verdicts are handed to a sink as they are made rather than gathered
 * (a verdict is ~10 KiB, a fleet has tens of thousands): the caller shapes
 * or counts them.  A VM whose stored report or result no longer reads
 * gets one error and the others are still judged.
 */
#ifndef TW_SERVICE_COMPLIANCE_H
#define TW_SERVICE_COMPLIANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/result.h"
#include "core/tier.h"
#include "core/verdict.h"
#include "core/vmcap.h"
#include "service/vmsizes.h"
#include "store/store.h"

/* What verdicts are computed against (borrowed, read only). */
struct tw_svc_compliance_ctx {
    const struct tw_tier_catalog *cat;
    const struct tw_vmcap_table *caps;
    /* ARM's VM sizes per region, used before CAPS (service/vmsizes.h);
     * NULL: CAPS only. */
    struct tw_svc_vmsizes *arm;
    /* tw_svc_compliance_fixed_hash of CAT and CAPS when the caller keeps it
     * (a server judges every report under the same ones); NULL: hashed
     * per call. */
    const uint64_t *fixed;
};

/* A result that could not be judged, or a VM that could not be read. */
struct tw_svc_compliance_error {
    int64_t vm_id;
    const char *vm_name;   /* NULL when the VM's inventory did not read */
    const char *result_id; /* NULL for a VM-level error */
    const char *profile;   /* NULL for a VM-level error */
    const char *message;
};

/* Where verdicts go.  Each callback's pointers are valid during the call
 * only; a callback returning an error stops the walk with it. */
struct tw_svc_compliance_sink {
    enum tw_err (*verdict)(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                           const struct tw_result *r, const struct tw_verdict *v);
    enum tw_err (*error)(void *arg, const struct tw_svc_compliance_error *e);
    void *arg;
};

/* What a kept verdict was judged under: the rules' version
 * (TW_VERDICT_RULES_VERSION), the tier catalog and the VM caps, as one
 * short text ("v1-" and a 64-bit hash in hex).  A verdict kept under
 * another basis is judged again when read. */
#define TW_SVC_BASIS_LEN 32
/* The part of the basis that CAT and CAPS make (the rules' version with
 * them), for tw_svc_compliance_ctx.fixed. */
uint64_t tw_svc_compliance_fixed_hash(const struct tw_tier_catalog *cat,
                                      const struct tw_vmcap_table *caps);
void tw_svc_compliance_basis(const struct tw_svc_compliance_ctx *ctx,
                             char out[TW_SVC_BASIS_LEN]);

/* A report's verdicts, judged when it is stored (each result against the
 * report's own inventory), for tw_store_put_reports_judged: JUDGED points
 * into the rest.  A result that can't be judged has no kind (it is judged
 * again, and its error shown, when read). */
struct tw_svc_judged {
    struct tw_store_judged judged;
    struct tw_store_verdict *v;  /* malloc'd, one per result */
    char *skus;                  /* malloc'd: every verdict's SKU list, one after another */
    char basis[TW_SVC_BASIS_LEN];
};
enum tw_err tw_svc_compliance_judge_report(const struct tw_svc_compliance_ctx *ctx,
                                           const struct tw_report *rep,
                                           struct tw_svc_judged *out, struct tw_error *err);
void tw_svc_judged_cleanup(struct tw_svc_judged *j); /* NULL allowed; zeroes it */

/* Judges again, against each VM's newest report, the latest results whose
 * kept verdicts don't stand under CTX's basis (a new build's rules,
 * another catalog or VM caps, a VM that reported without results, a
 * migrated store), at most MAX_VMS VMs (1 to TW_STORE_PAGE_MAX - 1) with
 * ids above *AFTER, and keeps the verdicts, so that the fleet's summary
 * counts them as kept again.  *AFTER moves past the VMs judged (start a
 * round at 0: a VM whose verdicts could not be kept, say because it
 * reported meanwhile, is not judged again in the same round); *N_VMS the
 * VMs judged, *MORE whether others are left. */
enum tw_err tw_svc_compliance_rejudge(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                      int64_t *after, size_t max_vms, size_t *n_vms, bool *more,
                                      struct tw_error *err);

/* Judges VM VM_ID's latest results into SINK.  TW_ENOENT when there is
 * no such VM; other store errors in ERR. */
enum tw_err tw_svc_compliance_vm(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                 int64_t vm_id, const struct tw_svc_compliance_sink *sink,
                                 struct tw_error *err);

/* Judges every VM (by id) into SINK; *N_VMS (may be NULL) counts them. */
enum tw_err tw_svc_compliance_fleet(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                    const struct tw_svc_compliance_sink *sink, size_t *n_vms,
                                    struct tw_error *err);

/* One page of the fleet's latest results (PG->limit verdicts at most, by
 * VM id, target and profile; PG's filters: the VM's name and resource
 * group, SKU: VMs with such a disk) judged into SINK; a VM's errors come
 * with its first result.  *N_VMS the VMs on the page, *MORE whether
 * results follow. */
enum tw_err tw_svc_compliance_page(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                   const struct tw_store_page *pg,
                                   const struct tw_svc_compliance_sink *sink, size_t *n_vms,
                                   bool *more, struct tw_error *err);

/* The fleet's verdicts counted by disk SKU: each verdict counts once for
 * every disk it covers, under that disk's SKU (a stripe of three P40s is
 * three Premium_LRS verdicts).  The verdicts kept when their reports were
 * stored are counted as kept while they stand (judged under the basis in
 * use against the VM's newest report); the VMs with any other latest
 * result are judged again, so the counts are those of judging every
 * result now. */
#define TW_SVC_SUMMARY_SKUS 32
struct tw_svc_compliance_summary {
    size_t vms;                    /* VMs judged */
    size_t verdicts;               /* verdicts made */
    size_t errors;                 /* results or VMs that could not be judged */
    size_t n_skus;                 /* rows by SKU name (tw_svc_compliance_summary) */
    struct {
        char sku[32];              /* first: "Premium_LRS"; the last row "other" past 31 SKUs */
        size_t count[TW_VERDICT_INCONCLUSIVE + 1]; /* by enum tw_verdict_kind */
    } skus[TW_SVC_SUMMARY_SKUS];
};
enum tw_err tw_svc_compliance_summary(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                      struct tw_svc_compliance_summary *out,
                                      struct tw_error *err);
/* Counts one disk's verdict KIND under SKU in SUM (zeroed before the first
 * call): the first TW_SVC_SUMMARY_SKUS - 1 SKUs get a row each, in the
 * order they come; every SKU after them is counted in one last row named
 * "other", and no named row is ever renamed. */
void tw_svc_compliance_summary_add(struct tw_svc_compliance_summary *sum, const char *sku,
                                   enum tw_verdict_kind kind);

#endif
