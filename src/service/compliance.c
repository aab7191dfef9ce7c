/*
 * compliance.c - verdicts of stored results (compliance.h).
 */
#include "service/compliance.h"

#include "core/fnv.h"

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
    /* ARM's caps for the VM's region, else the bundled table's, else the
     * verdict says why there are none. */
    struct tw_vmcap capbuf;
    char capwhy[512];
    const struct tw_vmcap *cap = tw_svc_vmcap_pick(ctx->arm, ctx->caps, inv->vm.location,
                                                   inv->vm.vm_size, &capbuf, capwhy,
                                                   sizeof(capwhy));
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        struct tw_error e = {0};
        if (tw_verdict_check(&results[i], inv, ctx->cat, cap, v, &e) == TW_OK) {
            if (!cap)
                tw_verdict_set_vm_unknown(v, inv->vm.vm_size, capwhy);
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

/* A sink that passes on only what belongs to one VM's results on a page:
 * their verdicts and errors, and the VM's own errors when the page holds
 * its first result. */
struct page_filter {
    const struct tw_svc_compliance_sink *sink;
    const struct tw_store_latest_ref *refs; /* the VM's rows of the page */
    size_t n;
    bool first;
};

static bool on_page(const struct page_filter *f, const char *result_id)
{
    for (size_t i = 0; result_id && i < f->n; i++)
        if (strcmp(f->refs[i].result_id, result_id) == 0)
            return true;
    return false;
}

static enum tw_err page_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                const struct tw_result *r, const struct tw_verdict *v)
{
    struct page_filter *f = arg;
    return on_page(f, r->id) ? f->sink->verdict(f->sink->arg, vm_id, inv, r, v) : TW_OK;
}

static enum tw_err page_error(void *arg, const struct tw_svc_compliance_error *e)
{
    struct page_filter *f = arg;
    bool mine = e->result_id ? on_page(f, e->result_id) : f->first;
    return mine ? f->sink->error(f->sink->arg, e) : TW_OK;
}

enum tw_err tw_svc_compliance_page(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                   const struct tw_store_page *pg,
                                   const struct tw_svc_compliance_sink *sink, size_t *n_vms,
                                   bool *more, struct tw_error *err)
{
    struct tw_store_latest_ref *refs = NULL;
    size_t n = 0, vms = 0;
    enum tw_err rc = tw_store_latest_page(st, pg, &refs, &n, more, err);
    /* The page's rows come by VM: each VM is judged once, and only its
     * rows on the page are passed on. */
    for (size_t i = 0; rc == TW_OK && i < n;) {
        size_t j = i;
        bool first = false;
        while (j < n && refs[j].vm_id == refs[i].vm_id)
            first |= refs[j++].first;
        struct page_filter f = {sink, &refs[i], j - i, first};
        struct tw_svc_compliance_sink fs = {page_verdict, page_error, &f};
        rc = tw_svc_compliance_vm(st, ctx, refs[i].vm_id, &fs, err);
        if (rc == TW_ENOENT) { /* gone since the page was read */
            tw_error_clear(err);
            rc = TW_OK;
        }
        vms++;
        i = j;
    }
    free(refs);
    if (n_vms)
        *n_vms = vms;
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

/* The SKU of disk NAME in INV, "unknown" when it is not there. */
static const char *disk_sku(const struct tw_inventory *inv, const char *name)
{
    const char *sku = "unknown";
    for (size_t d = 0; d < inv->n_disks; d++)
        if (strcmp(inv->disks[d].name, name) == 0)
            sku = inv->disks[d].sku;
    return sku;
}

static enum tw_err count_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                 const struct tw_result *r, const struct tw_verdict *v)
{
    struct tw_svc_compliance_summary *sum = arg;
    (void)vm_id;
    (void)r;
    sum->verdicts++;
    for (size_t k = 0; k < v->n_disks; k++)
        tw_svc_compliance_summary_add(sum, disk_sku(inv, v->disks[k].name), v->kind);
    return TW_OK;
}

static enum tw_err count_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)e;
    ((struct tw_svc_compliance_summary *)arg)->errors++;
    return TW_OK;
}

/* The summary's walk of the kept verdicts: a VM's rows come together; they
 * are counted when every one stands, else the VM is noted to be judged
 * again. */
struct kept_walk {
    struct tw_svc_compliance_summary *sum;
    int64_t vm_id;              /* the VM whose rows are held; 0 none */
    bool stands;
    size_t n, cap;              /* its rows held */
    struct kept_row {
        enum tw_verdict_kind kind;
        char *skus;
    } *rows;
    int64_t *again;             /* VMs to judge again */
    size_t n_again, cap_again;
};

static bool kind_of(const char *name, enum tw_verdict_kind *out)
{
    for (int k = TW_VERDICT_DELIVERS; name && k <= TW_VERDICT_INCONCLUSIVE; k++)
        if (strcmp(name, tw_verdict_name((enum tw_verdict_kind)k)) == 0) {
            *out = (enum tw_verdict_kind)k;
            return true;
        }
    return false;
}

static void kept_drop(struct kept_walk *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->rows[i].skus);
    w->n = 0;
}

/* Counts the held VM's rows, or notes it to be judged again. */
static enum tw_err kept_flush(struct kept_walk *w)
{
    if (!w->vm_id)
        return TW_OK;
    if (!w->stands) {
        if (w->n_again == w->cap_again) {
            size_t ncap = w->cap_again ? w->cap_again * 2 : 64;
            int64_t *p = realloc(w->again, ncap * sizeof(*p));
            if (!p)
                return TW_ENOMEM;
            w->again = p;
            w->cap_again = ncap;
        }
        w->again[w->n_again++] = w->vm_id;
    } else {
        for (size_t i = 0; i < w->n; i++) {
            w->sum->verdicts++;
            /* One count per disk covered, under its SKU. */
            for (char *p = w->rows[i].skus, *end; p && *p; p = *end ? end + 1 : end) {
                end = strchr(p, ',');
                if (!end)
                    end = p + strlen(p);
                char sku[64];
                snprintf(sku, sizeof(sku), "%.*s", (int)(end - p), p);
                tw_svc_compliance_summary_add(w->sum, sku, w->rows[i].kind);
            }
        }
    }
    kept_drop(w);
    w->vm_id = 0;
    return TW_OK;
}

static enum tw_err kept_row(void *arg, int64_t vm_id, const char *kind, const char *skus,
                            bool current)
{
    struct kept_walk *w = arg;
    if (vm_id != w->vm_id) {
        enum tw_err rc = kept_flush(w);
        if (rc != TW_OK)
            return rc;
        w->vm_id = vm_id;
        w->stands = true;
    }
    enum tw_verdict_kind k;
    if (!current || !kind_of(kind, &k))
        w->stands = false;
    if (!w->stands)
        return TW_OK;
    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 16;
        struct kept_row *p = realloc(w->rows, ncap * sizeof(*p));
        if (!p)
            return TW_ENOMEM;
        w->rows = p;
        w->cap = ncap;
    }
    w->rows[w->n].kind = k;
    w->rows[w->n].skus = strdup(skus ? skus : "");
    if (!w->rows[w->n].skus)
        return TW_ENOMEM;
    w->n++;
    return TW_OK;
}

/* Rows by SKU name, "other" last. */
static int sku_row_cmp(const void *a, const void *b)
{
    const char *x = a, *y = b; /* each row starts with its name */
    bool xo = strcmp(x, "other") == 0, yo = strcmp(y, "other") == 0;
    if (xo != yo)
        return xo ? 1 : -1;
    return strcmp(x, y);
}

enum tw_err tw_svc_compliance_summary(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                      struct tw_svc_compliance_summary *out,
                                      struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    char basis[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(ctx, basis);
    struct kept_walk w = {.sum = out};
    enum tw_err rc = tw_store_fleet_verdicts(st, basis, kept_row, &w, &out->vms, err);
    if (rc == TW_OK && kept_flush(&w) != TW_OK)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory counting the fleet's verdicts");
    if (rc == TW_ENOMEM && !err->code)
        tw_error_set(err, rc, "out of memory counting the fleet's verdicts");
    /* The VMs whose verdicts don't stand, judged now. */
    struct tw_svc_compliance_sink sink = {count_verdict, count_error, out};
    for (size_t i = 0; rc == TW_OK && i < w.n_again; i++) {
        rc = tw_svc_compliance_vm(st, ctx, w.again[i], &sink, err);
        if (rc == TW_ENOENT) { /* gone since the walk */
            tw_error_clear(err);
            rc = TW_OK;
        }
    }
    kept_drop(&w);
    free(w.rows);
    free(w.again);
    /* In one order whichever VMs were counted as kept and which judged
     * again. */
    qsort(out->skus, out->n_skus, sizeof(out->skus[0]), sku_row_cmp);
    return rc;
}

/* ---- verdicts kept when a report is stored ---- */

#define FNV_INT(h, v) ((h) = tw_fnv_i64((h), (int64_t)(v)))
#define FNV_STR(h, s) ((h) = tw_fnv_text((h), (s)))

/* Doubles by their value to a millionth, so that equal figures hash alike
 * whatever their bits' history. */
static uint64_t fnv_real(uint64_t h, double v)
{
    return tw_fnv_i64(h, (int64_t)(v * 1e6 + (v < 0 ? -0.5 : 0.5)));
}

static uint64_t fnv_prov(uint64_t h, const struct tw_prov_rules *p)
{
    FNV_STR(h, p->sku);
    FNV_INT(h, p->min_gib);
    FNV_INT(h, p->max_gib);
    FNV_INT(h, p->min_iops);
    h = fnv_real(h, p->min_mbps);
    FNV_INT(h, p->iops_per_gib);
    FNV_INT(h, p->iops_above_gib);
    FNV_INT(h, p->max_iops);
    h = fnv_real(h, p->mbps_per_iops);
    return fnv_real(h, p->max_mbps);
}

uint64_t tw_svc_compliance_fixed_hash(const struct tw_tier_catalog *cat,
                                      const struct tw_vmcap_table *caps)
{
    uint64_t h = TW_FNV_START;
    FNV_INT(h, TW_VERDICT_RULES_VERSION);
    if (cat) {
        FNV_INT(h, cat->n_tiers);
        for (size_t i = 0; i < cat->n_tiers; i++) {
            const struct tw_tier *t = &cat->tiers[i];
            FNV_STR(h, t->name);
            FNV_STR(h, t->sku);
            FNV_INT(h, t->size_gib);
            FNV_INT(h, t->iops);
            h = fnv_real(h, t->mbps);
            FNV_INT(h, t->upper_bound);
            FNV_INT(h, t->burst);
            FNV_INT(h, t->burst_iops);
            h = fnv_real(h, t->burst_mbps);
            FNV_INT(h, t->plus_iops);
            h = fnv_real(h, t->plus_mbps);
        }
        FNV_INT(h, cat->n_skus);
        for (size_t i = 0; i < cat->n_skus; i++) {
            FNV_STR(h, cat->skus[i].sku);
            FNV_INT(h, cat->skus[i].letter);
        }
        h = fnv_prov(h, &cat->premium_v2);
        h = fnv_prov(h, &cat->ultra);
    }
    if (caps) {
        FNV_INT(h, caps->n);
        for (size_t i = 0; i < caps->n; i++) {
            FNV_STR(h, caps->caps[i].vm_size);
            FNV_INT(h, caps->caps[i].iops);
            FNV_INT(h, caps->caps[i].bytes_per_s);
            FNV_INT(h, caps->caps[i].burst_iops);
            FNV_INT(h, caps->caps[i].burst_bytes_per_s);
        }
    }
    return h;
}

void tw_svc_compliance_basis(const struct tw_svc_compliance_ctx *ctx, char out[TW_SVC_BASIS_LEN])
{
    uint64_t h = ctx->fixed ? *ctx->fixed : tw_svc_compliance_fixed_hash(ctx->cat, ctx->caps);
    /* ARM's sizes: the figures of the regions held. */
    uint64_t arm = ctx->arm ? tw_svc_vmsizes_stamp(ctx->arm) : 0;
    if (arm)
        FNV_INT(h, arm);
    snprintf(out, TW_SVC_BASIS_LEN, "v%d-%016llx", TW_VERDICT_RULES_VERSION,
             (unsigned long long)h);
}

enum tw_err tw_svc_compliance_judge_report(const struct tw_svc_compliance_ctx *ctx,
                                           const struct tw_report *rep,
                                           struct tw_svc_judged *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_svc_compliance_basis(ctx, out->basis);
    out->judged.basis = out->basis;
    out->judged.n = rep->n_results;
    if (!rep->n_results)
        return TW_OK;
    struct tw_verdict *v = malloc(sizeof(*v));
    out->v = calloc(rep->n_results, sizeof(*out->v));
    /* Room for every verdict's SKUs: a verdict covers disks of the
     * inventory, so one SKU and a comma for each (and one more); a verdict
     * that would not fit is left unjudged, to be judged when read. */
    size_t per = (rep->inv.n_disks + 1) * (sizeof(rep->inv.disks[0].sku) + 1) + 1;
    size_t room = rep->n_results * per;
    out->skus = malloc(room);
    if (!v || !out->v || !out->skus) {
        free(v);
        tw_svc_judged_cleanup(out);
        return tw_error_set(err, TW_ENOMEM, "out of memory judging report %s", rep->id);
    }
    struct tw_vmcap capbuf;
    const struct tw_vmcap *cap = tw_svc_vmcap_pick(ctx->arm, ctx->caps, rep->inv.vm.location,
                                                   rep->inv.vm.vm_size, &capbuf, NULL, 0);
    char *p = out->skus;
    for (size_t i = 0; i < rep->n_results; i++) {
        struct tw_error e = {0};
        if (tw_verdict_check(&rep->results[i], &rep->inv, ctx->cat, cap, v, &e) != TW_OK)
            continue; /* no kind: judged again, and its error shown, when read */
        char *start = p, *end = out->skus + room;
        bool fits = true;
        for (size_t k = 0; fits && k < v->n_disks; k++) {
            const char *sku = disk_sku(&rep->inv, v->disks[k].name);
            size_t len = strlen(sku);
            fits = (size_t)(end - p) > len + 2;
            if (fits) {
                if (k)
                    *p++ = ',';
                memcpy(p, sku, len);
                p += len;
            }
        }
        if (!fits || p >= end) {
            p = start;
            continue;
        }
        *p++ = '\0';
        out->v[i].kind = tw_verdict_name(v->kind);
        out->v[i].skus = start;
    }
    out->judged.v = out->v;
    free(v);
    return TW_OK;
}

void tw_svc_judged_cleanup(struct tw_svc_judged *j)
{
    if (!j)
        return;
    free(j->v);
    free(j->skus);
    memset(j, 0, sizeof(*j));
}

/* ---- judging kept verdicts again ---- */

/* What the walk of one VM gathers to keep: a row per latest result. */
struct rejudge_walk {
    struct tw_store_kept *rows;
    size_t n, cap;
    char **owned;               /* the strings the rows point at */
    size_t n_owned, cap_owned;
    int64_t vm_id;
    const char *last_report_id;
    bool failed;                /* out of memory */
};

static const char *own(struct rejudge_walk *w, const char *s)
{
    if (!s)
        return NULL;
    if (w->n_owned == w->cap_owned) {
        size_t ncap = w->cap_owned ? w->cap_owned * 2 : 64;
        char **p = realloc(w->owned, ncap * sizeof(*p));
        if (!p)
            return NULL;
        w->owned = p;
        w->cap_owned = ncap;
    }
    char *c = strdup(s);
    if (c)
        w->owned[w->n_owned++] = c;
    return c;
}

static struct tw_store_kept *rejudge_row(struct rejudge_walk *w)
{
    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 64;
        struct tw_store_kept *p = realloc(w->rows, ncap * sizeof(*p));
        if (!p)
            return NULL;
        w->rows = p;
        w->cap = ncap;
    }
    struct tw_store_kept *k = &w->rows[w->n++];
    memset(k, 0, sizeof(*k));
    k->vm_id = w->vm_id;
    k->last_report_id = w->last_report_id;
    return k;
}

/* The row of result R (the key result_latest keeps it under). */
static bool rejudge_result(struct rejudge_walk *w, const struct tw_result *r,
                           const char *kind, const char *skus)
{
    struct tw_store_kept *k = rejudge_row(w);
    if (!k)
        return false;
    k->target = own(w, r->target.device[0] ? r->target.device : r->target.path);
    k->profile = own(w, r->profile);
    k->result_id = own(w, r->id);
    k->kind = kind;
    k->skus = skus ? own(w, skus) : NULL;
    return k->target && k->profile && k->result_id && (!skus || k->skus);
}

static enum tw_err rejudge_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                   const struct tw_result *r, const struct tw_verdict *v)
{
    struct rejudge_walk *w = arg;
    (void)vm_id;
    char skus[TW_VERDICT_MAX_DISKS * 33 + 1];
    size_t at = 0;
    skus[0] = '\0';
    for (size_t k = 0; k < v->n_disks; k++) {
        int m = snprintf(skus + at, sizeof(skus) - at, "%s%s", k ? "," : "",
                         disk_sku(inv, v->disks[k].name));
        if (m < 0 || (size_t)m >= sizeof(skus) - at)
            return rejudge_result(w, r, NULL, NULL) ? TW_OK : TW_ENOMEM; /* judged when read */
        at += (size_t)m;
    }
    return rejudge_result(w, r, tw_verdict_name(v->kind), skus) ? TW_OK : TW_ENOMEM;
}

/* A result that can't be judged is kept as such (not judged again until
 * the basis or the VM's report changes; its error is shown when read); a
 * VM that can't be read, every row of it. */
static enum tw_err rejudge_error(void *arg, const struct tw_svc_compliance_error *e)
{
    struct rejudge_walk *w = arg;
    struct tw_store_kept *k = rejudge_row(w);
    if (!k)
        return TW_ENOMEM;
    if (e->result_id) {
        /* Its key: the walk gives its id and profile, not its target, so
         * the row is the VM's latest of that profile with that record. */
        k->target = own(w, "");
        k->profile = own(w, e->profile);
        k->result_id = own(w, e->result_id);
        if (!k->target || !k->profile || !k->result_id)
            return TW_ENOMEM;
    }
    return TW_OK;
}

enum tw_err tw_svc_compliance_rejudge(struct tw_store *st, const struct tw_svc_compliance_ctx *ctx,
                                      int64_t *after, size_t max_vms, size_t *n_vms, bool *more,
                                      struct tw_error *err)
{
    *n_vms = 0;
    *more = false;
    if (max_vms < 1 || max_vms >= TW_STORE_PAGE_MAX)
        return tw_error_set(err, TW_EINVAL, "VMs are judged again 1 to %d at a time",
                            TW_STORE_PAGE_MAX - 1);
    char basis[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(ctx, basis);
    struct tw_store_stale *stale = NULL;
    size_t n = 0;
    enum tw_err rc = tw_store_verdicts_stale(st, basis, *after, max_vms + 1, &stale, &n, err);
    if (rc != TW_OK)
        return rc;
    if (n > max_vms) {
        *more = true;
        n = max_vms;
    }
    struct rejudge_walk w = {0};
    struct tw_svc_compliance_sink sink = {rejudge_verdict, rejudge_error, &w};
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        w.vm_id = stale[i].vm_id;
        w.last_report_id = stale[i].last_report_id;
        rc = tw_svc_compliance_vm(st, ctx, stale[i].vm_id, &sink, err);
        if (rc == TW_ENOENT) { /* gone since it was listed */
            tw_error_clear(err);
            rc = TW_OK;
        }
    }
    if (rc == TW_OK)
        rc = tw_store_verdicts_keep(st, basis, w.rows, w.n, err);
    if (rc == TW_OK) {
        *n_vms = n;
        if (n)
            *after = stale[n - 1].vm_id; /* the next call goes on past them */
    }
    for (size_t i = 0; i < w.n_owned; i++)
        free(w.owned[i]);
    free(w.owned);
    free(w.rows);
    free(stale);
    return rc;
}
