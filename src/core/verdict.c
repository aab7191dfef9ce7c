/*
 * verdict.c - measured against expected, and why.
 *
 * The order of the checks is the order in which a naive comparison lies:
 * first what can't be known (provisioned disks), then a method that can't
 * reach the rating (buffered, short, too little in flight), then results
 * above the rating (cache, burst, a VM burst), and only then delivers,
 * vm-capped or under.
 */
#include "core/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size.h"

#define AZURE_IO_UNIT 262144.0  /* Azure counts an I/O above 256 KiB as several */

static const char *const verdict_names[] = {
    [TW_VERDICT_DELIVERS] = "delivers", [TW_VERDICT_UNDER] = "under",
    [TW_VERDICT_VM_CAPPED] = "vm-capped", [TW_VERDICT_BURST] = "burst",
    [TW_VERDICT_CACHED] = "cached",       [TW_VERDICT_INCONCLUSIVE] = "inconclusive",
};

const char *tw_verdict_name(enum tw_verdict_kind k)
{
    return (unsigned)k < sizeof(verdict_names) / sizeof(verdict_names[0]) ? verdict_names[k]
                                                                         : "unknown";
}

const char *tw_metric_name(enum tw_metric m)
{
    return m == TW_METRIC_MBPS ? "mbps" : "iops";
}

const char *tw_bound_name(enum tw_bound b)
{
    return b == TW_BOUND_VM ? "vm" : "disks";
}

/* ---- matching a result to the inventory ---- */

/* "sdc, sdd" of the inventory's mapped devices, for messages. */
static void inventory_devices(const struct tw_inventory *inv, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < inv->n_disks; i++) {
        const char *d = inv->disks[i].device;
        if (!d[0])
            continue;
        const char *base = strrchr(d, '/');
        int n = snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", base ? base + 1 : d);
        if (n < 0 || (size_t)n >= outlen - used) {
            out[used] = '\0';
            break;
        }
        used += (size_t)n;
    }
    if (!used)
        snprintf(out, outlen, "none: no disk has a device; run tierwise-agent inventory on the VM");
}

static void add_unique(const struct tw_disk **out, size_t *n, const struct tw_disk *d)
{
    for (size_t i = 0; i < *n; i++)
        if (out[i] == d)
            return;
    if (*n < TW_VERDICT_MAX_DISKS)
        out[(*n)++] = d;
}

enum tw_err tw_verdict_disks(const struct tw_result *r, const struct tw_inventory *inv,
                             const struct tw_disk **out, size_t *n, struct tw_error *err)
{
    char devs[256];
    const char *missing = NULL;
    size_t n_missing = 0;
    *n = 0;
    for (size_t i = 0; i < r->target.n_members && i < TW_RESULT_MAX_MEMBERS; i++) {
        const struct tw_disk *d = tw_inventory_disk_by_device(inv, r->target.members[i]);
        if (d) {
            add_unique(out, n, d);
        } else {
            n_missing++;
            if (!missing)
                missing = r->target.members[i];
        }
    }
    if (*n && !n_missing)
        return TW_OK;
    /* No member matched: the device itself may be the disk (a fio import
     * without disk statistics, an NVMe namespace). */
    const struct tw_disk *dev = tw_inventory_disk_by_device(inv, r->target.device);
    if (!*n && dev) {
        out[(*n)++] = dev;
        return TW_OK;
    }
    inventory_devices(inv, devs, sizeof(devs));
    if (*n) {
        *n = 0;
        return tw_error_set(err, TW_EINVAL,
                            "result %s: member %s of %s matches no disk of the inventory "
                            "(%zu of %zu members unmatched; inventory devices: %s)",
                            r->id, missing, r->target.device[0] ? r->target.device : "the target",
                            n_missing, r->target.n_members, devs);
    }
    if (!r->target.device[0] && !r->target.n_members)
        return tw_error_set(err, TW_EINVAL,
                            "result %s names no device (target.device and target.members are "
                            "empty), so it can't be matched to a disk",
                            r->id);
    char members[160];
    size_t used = 0;
    members[0] = '\0';
    for (size_t i = 0; i < r->target.n_members && used + 1 < sizeof(members); i++) {
        int k = snprintf(members + used, sizeof(members) - used, "%s%s", i ? ", " : "",
                         r->target.members[i]);
        if (k < 0)
            break;
        used += (size_t)k < sizeof(members) - used ? (size_t)k : sizeof(members) - used - 1;
    }
    if (!r->target.n_members)
        return tw_error_set(err, TW_EINVAL,
                            "result %s: its device %s is no disk of the inventory (inventory "
                            "devices: %s)", r->id, r->target.device, devs);
    /* "dm-3 over sdx, sdy"; a plain disk is its own member: "sdz". */
    bool over = r->target.device[0] &&
                !(r->target.n_members == 1 && strcmp(r->target.members[0], r->target.device) == 0);
    return tw_error_set(err, TW_EINVAL,
                        "result %s: none of the target's disks (%s%s%s) is in the inventory "
                        "(inventory devices: %s)",
                        r->id, over ? r->target.device : "", over ? " over " : "", members, devs);
}

/* ---- formatting numbers for reasons ---- */

/* 16300.4 -> "16,300"; 62.5 -> "62.5"; 250 -> "250". */
static char *fmt_num(double v, char *out, size_t len)
{
    double a = fabs(v);
    if (!isfinite(v) || a >= 1e15) {
        snprintf(out, len, "%.3g", v);
        return out;
    }
    if (a < 100 && fabs(a - round(a)) >= 0.05) {
        snprintf(out, len, "%.1f", v);
        return out;
    }
    char digits[24];
    snprintf(digits, sizeof(digits), "%lld", (long long)llround(a));
    size_t nd = strlen(digits), used = 0;
    if (v <= -0.5 && used + 1 < len)
        out[used++] = '-';
    for (size_t i = 0; i < nd && used + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0)
            out[used++] = ',';
        out[used++] = digits[i];
    }
    out[used] = '\0';
    return out;
}

/* The whole percent below RATIO, as text: 0.8999 is "89", never a
 * rounded-up 90; 18.0 is "1,800". */
static const char *pct(double ratio, char *out, size_t len)
{
    double p = floor(ratio * 100.0 + 1e-9);
    return fmt_num(p < 0 ? 0 : p, out, len);
}

struct sb {
    char *p;
    size_t cap, len;
};

/* Drops a UTF-8 character that truncation cut in two ("×" is two bytes),
 * so a full reason is still valid JSON text. */
static void utf8_trim(struct sb *s)
{
    size_t i = s->len, cont = 0;
    while (i > 0 && cont < 4 && ((unsigned char)s->p[i - 1] & 0xC0) == 0x80) {
        i--;
        cont++;
    }
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s->p[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (need != cont + 1) {
        s->len = i - 1;
        s->p[s->len] = '\0';
    }
}

__attribute__((format(printf, 2, 3))) static void sb_add(struct sb *s, const char *fmt, ...)
{
    if (s->len + 1 >= s->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (s->len + (size_t)n < s->cap) {
        s->len += (size_t)n;
        return;
    }
    s->len = s->cap - 1;
    utf8_trim(s);
}

/* ---- judging ---- */

/* What the judge works with, derived once from the result and the disks. */
struct ctx {
    const struct tw_result *r;
    enum tw_metric m;
    const char *unit;               /* "IOPS" or "MB/s" */
    double bs;                      /* block size, bytes */
    double units;                   /* Azure I/O units per I/O */
    size_t n;
    const struct tw_tier *tiers[TW_VERDICT_MAX_DISKS];
    double sum_iops, sum_mbps;      /* rated */
    double burst_iops, burst_mbps;  /* with bursting where the tier has it */
    double plus_iops, plus_mbps;    /* with performance plus where offered */
    bool any_credit, any_on_demand, any_plus;
    const struct tw_disk *cached;   /* a member with host caching, or NULL */
    const struct tw_vmcap *cap;
};

/* IOPS the run can show at its block size under an IOPS and an MB/s limit
 * (0 means no limit of that kind). */
static double at_block(const struct ctx *c, double iops, double mbps, bool disk)
{
    double by_iops = iops > 0 ? iops / (disk ? c->units : 1.0) : INFINITY;
    double by_mbps = mbps > 0 ? mbps * 1e6 / c->bs : INFINITY;
    return fmin(by_iops, by_mbps);
}

/* An IOPS figure in the judged metric. */
static double in_metric(const struct ctx *c, double iops)
{
    return c->m == TW_METRIC_IOPS ? iops : iops * c->bs / 1e6;
}

static double measured(const struct ctx *c, const struct tw_verdict *v)
{
    return c->m == TW_METRIC_IOPS ? v->measured_iops : v->measured_mbps;
}

/* "3 × P40 at 7,500" (or "P10 at 500"), per judged metric, mixed tiers
 * joined with " + "; then what that allows at this block size when the
 * other limit or Azure's 256 KiB accounting decides. */
static void describe_disks(struct sb *s, const struct ctx *c, double tier_iops_sum,
                           double tier_mbps_sum, bool rated)
{
    bool by_iops;
    double allowed = at_block(c, tier_iops_sum, tier_mbps_sum, true);
    /* Name the figure that decides: the judged one unless the other binds. */
    if (c->m == TW_METRIC_IOPS)
        by_iops = tier_iops_sum / c->units <= tier_mbps_sum * 1e6 / c->bs;
    else
        by_iops = tier_iops_sum / c->units < tier_mbps_sum * 1e6 / c->bs;
    bool first = true;
    for (size_t i = 0; i < c->n; i++) {
        const struct tw_tier *t = c->tiers[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = c->tiers[j] == t;
        if (seen)
            continue;
        size_t count = 0;
        for (size_t j = i; j < c->n; j++)
            count += c->tiers[j] == t;
        char num[32];
        double fig;
        if (rated)
            fig = by_iops ? (double)t->iops : t->mbps;
        else
            fig = by_iops ? (double)(t->burst != TW_BURST_NONE ? t->burst_iops : t->iops)
                          : (t->burst != TW_BURST_NONE ? t->burst_mbps : t->mbps);
        fmt_num(fig, num, sizeof(num));
        if (c->n == 1)
            sb_add(s, "%s at %s", t->name, num);
        else
            sb_add(s, "%s%zu × %s at %s", first ? "" : " + ", count, t->name, num);
        if ((c->m == TW_METRIC_IOPS) != by_iops && first)
            sb_add(s, " %s", by_iops ? "IOPS" : "MB/s");
        first = false;
    }
    double raw = c->m == TW_METRIC_IOPS ? tier_iops_sum : tier_mbps_sum;
    if (fabs(in_metric(c, allowed) - raw) > 0.5) {
        char num[32], bsz[32];
        tw_size_format((uint64_t)c->bs, bsz, sizeof(bsz));
        sb_add(s, ", which allows %s %s of %s I/O", fmt_num(in_metric(c, allowed), num, 32),
               c->unit, bsz);
    }
}

static void describe_vm(struct sb *s, const struct ctx *c)
{
    char num[32];
    if (!c->cap)
        return;
    double allowed = at_block(c, (double)c->cap->iops, (double)c->cap->bytes_per_s / 1e6, false);
    sb_add(s, "the uncached cap of %s, %s %s", c->cap->vm_size,
           fmt_num(in_metric(c, allowed), num, sizeof(num)), c->unit);
}

/* Mean latency over both directions, weighted by I/Os; 0 when not recorded. */
static double mean_latency_ns(const struct tw_result *r)
{
    double ios = 0, sum = 0, plain = 0;
    int dirs = 0;
    const struct tw_dir *d[2] = {&r->read, &r->write};
    for (int i = 0; i < 2; i++) {
        if (!d[i]->present || d[i]->lat.mean_ns <= 0)
            continue;
        ios += (double)d[i]->ios;
        sum += (double)d[i]->ios * d[i]->lat.mean_ns;
        plain += d[i]->lat.mean_ns;
        dirs++;
    }
    if (!dirs)
        return 0;
    return ios > 0 ? sum / ios : plain / dirs;
}

/*
 * Method problems that make the run prove nothing about the rating, as a
 * "; "-joined list in S.  True when there is any.  X is the expected figure
 * in the judged metric.
 */
static bool method_problems(struct sb *s, const struct ctx *c, double x, double m)
{
    const struct tw_method *me = &c->r->method;
    size_t start = s->len;
    if (me->direct == TW_DIRECT_NO)
        sb_add(s, "buffered I/O (direct: false): the page cache serves and absorbs I/O, so the "
                  "figures are not the disk's");
    else if (me->direct != TW_DIRECT_YES)
        sb_add(s, "whether I/O was direct is unknown (fio's text output doesn't show direct=): "
                  "import the run again with import-fio --job-file FILE or --fio-args \"...\" "
                  "to say how it ran");
    if (me->runtime_ms < TW_VERDICT_MIN_RUNTIME_MS) {
        if (s->len > start)
            sb_add(s, "; ");
        if (me->runtime_ms <= 0)
            sb_add(s, "the record gives no measured time");
        else
            sb_add(s, "the measured phase lasted %.1f s, under the %d s a verdict needs: a short "
                      "run can ride a burst bucket or a cold cache (the rated method measures "
                      "30 s)", (double)me->runtime_ms / 1000.0, TW_VERDICT_MIN_RUNTIME_MS / 1000);
    }
    /* Little's law: in flight = throughput x latency.  A run that reached
     * 90 % needs no bound; one that did not is only evidence when it had
     * enough in flight to get there. */
    double lat = mean_latency_ns(c->r);
    if (m < TW_VERDICT_DELIVERS_RATIO * x && lat > 0) {
        int qd = me->effective_queue_depth > 0 ? me->effective_queue_depth : 1;
        int jobs = me->jobs > 0 ? me->jobs : 1;
        double inflight = (double)qd * jobs;
        double used = fmin(lat, TW_VERDICT_SERVICE_LATENCY_NS);
        double bound = in_metric(c, inflight / (used / 1e9));
        if (bound < TW_VERDICT_DELIVERS_RATIO * x) {
            char b[32], l[32];
            if (s->len > start)
                sb_add(s, "; ");
            sb_add(s, "%.0f I/O%s in flight (QD %d × %d job%s, %s)", inflight,
                   inflight == 1 ? "" : "s", qd, jobs, jobs == 1 ? "" : "s",
                   me->engine[0] ? me->engine : "engine unknown");
            snprintf(l, sizeof(l), "%.2f", lat / 1e6);
            if (used < lat)
                sb_add(s, " can't exceed %s %s even at %.0f ms per I/O (the %s ms mean includes "
                          "queueing)", fmt_num(bound, b, sizeof(b)), c->unit,
                       TW_VERDICT_SERVICE_LATENCY_NS / 1e6, l);
            else
                sb_add(s, " at %s ms mean latency can't exceed %s %s", l,
                       fmt_num(bound, b, sizeof(b)), c->unit);
            sb_add(s, " (Little's law), below 90 %% of expected");
        }
    }
    return s->len > start;
}

static void verdict_init(struct tw_verdict *v, const struct tw_result *r)
{
    memset(v, 0, sizeof(*v));
    snprintf(v->result_id, sizeof(v->result_id), "%s", r->id);
    snprintf(v->target, sizeof(v->target), "%s", r->target.device);
    v->judged = tw_pattern_is_random(r->method.pattern) ? TW_METRIC_IOPS : TW_METRIC_MBPS;
    if (r->read.present) {
        v->measured_iops += r->read.iops;
        v->measured_mbps += r->read.mbps;
    }
    if (r->write.present) {
        v->measured_iops += r->write.iops;
        v->measured_mbps += r->write.mbps;
    }
}

/* Rates each disk; a provisioned one is reported through *PROV. */
static enum tw_err rate_disks(struct ctx *c, const struct tw_disk *const *disks, size_t n,
                              const struct tw_tier_catalog *cat, struct tw_verdict *v,
                              const struct tw_disk **prov, struct tw_error *err)
{
    *prov = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct tw_disk *d = disks[i];
        snprintf(v->disks[i].name, sizeof(v->disks[i].name), "%s", d->name);
        v->n_disks = i + 1;
        if (d->caching != TW_CACHE_NONE && !c->cached)
            c->cached = d;
        struct tw_sku sk;
        if (tw_tier_sku(cat, d->sku, &sk) && tw_sku_provisioned(sk.family)) {
            if (!*prov)
                *prov = d;
            continue;
        }
        const struct tw_tier *t;
        struct tw_error e = {0};
        if (tw_tier_for_disk(cat, d->sku, d->size_gib, d->tier, &t, &e) != TW_OK)
            return tw_error_set(err, TW_EINVAL, "disk %s: %s", d->name, e.msg);
        snprintf(v->disks[i].tier, sizeof(v->disks[i].tier), "%s", t->name);
        c->tiers[c->n++] = t;
        c->sum_iops += (double)t->iops;
        c->sum_mbps += t->mbps;
        bool bursts = t->burst != TW_BURST_NONE;
        c->burst_iops += (double)(bursts ? t->burst_iops : t->iops);
        c->burst_mbps += bursts ? t->burst_mbps : t->mbps;
        c->any_credit |= t->burst == TW_BURST_CREDIT;
        c->any_on_demand |= t->burst == TW_BURST_ON_DEMAND;
        bool plus = t->plus_iops > t->iops || t->plus_mbps > t->mbps;
        c->plus_iops += (double)(t->plus_iops > t->iops ? t->plus_iops : t->iops);
        c->plus_mbps += t->plus_mbps > t->mbps ? t->plus_mbps : t->mbps;
        c->any_plus |= plus;
    }
    return TW_OK;
}

static void provisioned_reason(struct sb *s, const struct tw_disk *d,
                               const struct tw_tier_catalog *cat, const struct tw_verdict *v)
{
    int64_t lo, hi;
    double lo_m, hi_m;
    char a[32], b[32], e[32], f[32];
    sb_add(s, "disk %s is %s: its IOPS and MB/s are provisioned per disk", d->name, d->sku);
    if (tw_tier_prov_range(cat, d->sku, d->size_gib, &lo, &hi, &lo_m, &hi_m, NULL) == TW_OK)
        sb_add(s, " (%s to %s IOPS, %s to %s MB/s at %lld GiB)", fmt_num((double)lo, a, 32),
               fmt_num((double)hi, b, 32), fmt_num(lo_m, e, 32), fmt_num(hi_m, f, 32),
               (long long)d->size_gib);
    sb_add(s, " and the inventory doesn't carry them, so there is no expected figure; measured "
              "%s IOPS, %s MB/s", fmt_num(v->measured_iops, a, 32),
           fmt_num(v->measured_mbps, b, 32));
}

/* Above 105 % of expected: a cache, a burst, performance plus, or nothing
 * the disks can do. */
static void judge_above(struct sb *s, const struct ctx *c, struct tw_verdict *v, double m,
                        double x, double d_exp)
{
    char a[32], b[32], e[32], pc[32];
    bool reads = tw_pattern_reads(c->r->method.pattern);
    if (c->cached && (reads || c->cached->caching == TW_CACHE_READWRITE)) {
        v->kind = TW_VERDICT_CACHED;
        sb_add(s, "measured %s %s is %s %% of %s expected with host caching %s on disk %s: I/O "
                  "served by the host cache doesn't count against the disk's limits; set caching "
                  "None to measure the disk", fmt_num(m, a, 32), c->unit, pct(m / x, pc, sizeof(pc)),
               fmt_num(x, b, 32), tw_caching_name(c->cached->caching), c->cached->name);
        return;
    }
    double burst = in_metric(c, at_block(c, c->burst_iops, c->burst_mbps, true));
    double plus = in_metric(c, at_block(c, c->plus_iops, c->plus_mbps, true));
    /* The VM's own burst limit, when its caps give one (INFINITY: not known). */
    double vm_burst = INFINITY;
    if (c->cap && (c->cap->burst_iops > 0 || c->cap->burst_bytes_per_s > 0))
        vm_burst = in_metric(c, at_block(c, (double)c->cap->burst_iops,
                                         (double)c->cap->burst_bytes_per_s / 1e6, false));
    if (v->bound_by == TW_BOUND_VM && m <= TW_VERDICT_ABOVE_RATIO * d_exp &&
        m <= TW_VERDICT_ABOVE_RATIO * vm_burst) {
        v->kind = TW_VERDICT_BURST;
        sb_add(s, "measured %s %s is above ", fmt_num(m, a, 32), c->unit);
        describe_vm(s, c);
        if (isfinite(vm_burst))
            sb_add(s, " and within its burst limit of %s", fmt_num(vm_burst, e, 32));
        sb_add(s, ", but within the disks' %s (", fmt_num(d_exp, b, 32));
        describe_disks(s, c, c->sum_iops, c->sum_mbps, true);
        sb_add(s, "): VM-level bursting, not the VM's baseline");
        return;
    }
    if (v->bound_by == TW_BOUND_VM && m <= TW_VERDICT_ABOVE_RATIO * d_exp) {
        /* Above the VM's cap and its burst limit, within the disks. */
        v->kind = TW_VERDICT_INCONCLUSIVE;
        sb_add(s, "measured %s %s is above ", fmt_num(m, a, 32), c->unit);
        describe_vm(s, c);
        sb_add(s, " and above its burst limit of %s, though within the disks' %s: the VM size "
                  "(%s) or its caps (%s) don't describe the VM the run used",
               fmt_num(vm_burst, e, 32), fmt_num(d_exp, b, 32), c->cap->vm_size, c->cap->source);
        return;
    }
    if (burst > d_exp + 0.5 && m <= TW_VERDICT_ABOVE_RATIO * burst) {
        v->kind = TW_VERDICT_BURST;
        sb_add(s, "measured %s %s is above the rated %s (", fmt_num(m, a, 32), c->unit,
               fmt_num(d_exp, b, 32));
        describe_disks(s, c, c->sum_iops, c->sum_mbps, true);
        sb_add(s, ") but within the burst ceiling of %s (", fmt_num(burst, e, 32));
        describe_disks(s, c, c->burst_iops, c->burst_mbps, false);
        if (c->any_credit && !c->any_on_demand)
            sb_add(s, "): credit bursting, a bucket of up to 30 minutes, not the baseline");
        else if (c->any_on_demand && !c->any_credit)
            sb_add(s, "): on-demand bursting is enabled (opt-in and billed), not the baseline");
        else
            sb_add(s, "): credit and on-demand bursting, not the baseline");
        return;
    }
    if (c->any_plus && m <= TW_VERDICT_ABOVE_RATIO * plus) {
        v->kind = TW_VERDICT_DELIVERS;
        sb_add(s, "measured %s %s is above the rated %s (", fmt_num(m, a, 32), c->unit,
               fmt_num(d_exp, b, 32));
        describe_disks(s, c, c->sum_iops, c->sum_mbps, true);
        sb_add(s, ") but within %s with performance plus: the disk was likely created with it",
               fmt_num(plus, e, 32));
        return;
    }
    v->kind = TW_VERDICT_INCONCLUSIVE;
    sb_add(s, "measured %s %s is %s %% of %s expected, above anything ", fmt_num(m, a, 32),
           c->unit, pct(m / x, pc, sizeof(pc)), fmt_num(x, b, 32));
    describe_disks(s, c, c->sum_iops, c->sum_mbps, true);
    sb_add(s, " can deliver (%s with bursting): the I/O was served elsewhere (a cache, another "
              "device) or the inventory doesn't describe the disks the run used",
           fmt_num(fmax(burst, d_exp), e, 32));
}

enum tw_err tw_verdict_judge(const struct tw_result *r, const struct tw_disk *const *disks,
                             size_t n, const struct tw_tier_catalog *cat,
                             const struct tw_vmcap *cap, struct tw_verdict *v,
                             struct tw_error *err)
{
    verdict_init(v, r);
    if (n == 0)
        return tw_error_set(err, TW_EINVAL, "result %s: no disk to judge it against", r->id);
    if (n > TW_VERDICT_MAX_DISKS)
        return tw_error_set(err, TW_EINVAL, "result %s: %zu disks, at most %d", r->id, n,
                            TW_VERDICT_MAX_DISKS);
    struct ctx c = {.r = r};
    c.m = v->judged;
    c.unit = c.m == TW_METRIC_IOPS ? "IOPS" : "MB/s";
    c.bs = r->method.block_size_bytes > 0 ? (double)r->method.block_size_bytes : 4096.0;
    c.units = fmax(1.0, ceil(c.bs / AZURE_IO_UNIT));
    c.cap = cap && (cap->iops > 0 || cap->bytes_per_s > 0) ? cap : NULL;
    const struct tw_disk *prov;
    enum tw_err rc = rate_disks(&c, disks, n, cat, v, &prov, err);
    if (rc != TW_OK)
        return rc;
    struct sb s = {v->reason, sizeof(v->reason), 0};
    v->reason[0] = '\0';
    if (c.cap) {
        snprintf(v->vm_size, sizeof(v->vm_size), "%s", c.cap->vm_size);
        v->vm_iops = (double)c.cap->iops;
        v->vm_mbps = (double)c.cap->bytes_per_s / 1e6;
        snprintf(v->vm_source, sizeof(v->vm_source), "%s", c.cap->source);
    } else if (cap) {
        snprintf(v->vm_size, sizeof(v->vm_size), "%s", cap->vm_size);
        snprintf(v->vm_why, sizeof(v->vm_why), "%s gives no uncached disk limits for %s",
                 cap->source[0] ? cap->source : "its source", cap->vm_size);
    } else {
        snprintf(v->vm_why, sizeof(v->vm_why), "no VM size or caps were given to the verdict");
    }
    if (prov) {
        v->kind = TW_VERDICT_INCONCLUSIVE;
        provisioned_reason(&s, prov, cat, v);
        return TW_OK;
    }
    v->rated_iops = c.sum_iops;
    v->rated_mbps = c.sum_mbps;

    /* Expected, in IOPS at this block size, then in both metrics. */
    double d_iops = at_block(&c, c.sum_iops, c.sum_mbps, true);
    double vm_iops = c.cap ? at_block(&c, v->vm_iops, v->vm_mbps, false) : INFINITY;
    v->bound_by = vm_iops < d_iops ? TW_BOUND_VM : TW_BOUND_DISKS;
    v->expected_known = true;
    v->expected_iops = fmin(d_iops, vm_iops);
    v->expected_mbps = v->expected_iops * c.bs / 1e6;
    v->ratio_iops = v->measured_iops / v->expected_iops;
    v->ratio_mbps = v->measured_mbps / v->expected_mbps;
    double m = measured(&c, v), x = in_metric(&c, v->expected_iops);
    double d_exp = in_metric(&c, d_iops);
    char a[32], b[32], pc[32];

    if (method_problems(&s, &c, x, m)) {
        v->kind = TW_VERDICT_INCONCLUSIVE;
        sb_add(&s, "; measured %s %s against %s expected (", fmt_num(m, a, 32), c.unit,
               fmt_num(x, b, 32));
        if (v->bound_by == TW_BOUND_VM)
            describe_vm(&s, &c);
        else
            describe_disks(&s, &c, c.sum_iops, c.sum_mbps, true);
        sb_add(&s, ")");
    } else if (m > TW_VERDICT_ABOVE_RATIO * x) {
        judge_above(&s, &c, v, m, x, d_exp);
    } else if (v->bound_by == TW_BOUND_VM) {
        bool reached = m >= TW_VERDICT_DELIVERS_RATIO * x - 1e-9 * x;
        v->kind = reached ? TW_VERDICT_VM_CAPPED : TW_VERDICT_UNDER;
        sb_add(&s, "measured %s %s is %s %% of %s expected, ", fmt_num(m, a, 32), c.unit,
               pct(m / x, pc, sizeof(pc)), fmt_num(x, b, 32));
        describe_vm(&s, &c);
        sb_add(&s, ", below the disks' %s (", fmt_num(d_exp, a, 32));
        describe_disks(&s, &c, c.sum_iops, c.sum_mbps, true);
        sb_add(&s, reached ? "): the VM size limits this run, not the disks"
                           : "): even the VM's cap is not reached");
    } else {
        bool reached = m >= TW_VERDICT_DELIVERS_RATIO * x - 1e-9 * x;
        v->kind = reached ? TW_VERDICT_DELIVERS : TW_VERDICT_UNDER;
        sb_add(&s, "measured %s %s is %s %% of %s expected (", fmt_num(m, a, 32), c.unit,
               pct(m / x, pc, sizeof(pc)), fmt_num(x, b, 32));
        describe_disks(&s, &c, c.sum_iops, c.sum_mbps, true);
        sb_add(&s, ")");
        if (!reached && !c.cap)
            sb_add(&s, "; the VM's uncached cap is not known and may be lower");
    }
    if (c.cached && v->kind != TW_VERDICT_CACHED && tw_pattern_reads(r->method.pattern))
        sb_add(&s, "; host caching %s on disk %s", tw_caching_name(c.cached->caching),
               c.cached->name);
    if (r->errors.count > 0)
        sb_add(&s, "; %lld I/O error%s in the run", (long long)r->errors.count,
               r->errors.count == 1 ? "" : "s");
    return TW_OK;
}

enum tw_err tw_verdict_check(const struct tw_result *r, const struct tw_inventory *inv,
                             const struct tw_tier_catalog *cat, const struct tw_vmcap *cap,
                             struct tw_verdict *v, struct tw_error *err)
{
    const struct tw_disk *disks[TW_VERDICT_MAX_DISKS];
    size_t n;
    enum tw_err rc = tw_verdict_disks(r, inv, disks, &n, err);
    if (rc != TW_OK) {
        verdict_init(v, r);
        return rc;
    }
    rc = tw_verdict_judge(r, disks, n, cat, cap, v, err);
    if (rc == TW_OK && !cap)
        tw_verdict_set_vm_unknown(v, inv->vm.vm_size,
                                  inv->vm.vm_size[0]
                                      ? "the VM caps in use do not list this size"
                                      : "the inventory names no VM size");
    return rc;
}

void tw_verdict_set_vm_unknown(struct tw_verdict *v, const char *size, const char *why)
{
    if (v->vm_iops > 0 || v->vm_mbps > 0)
        return;
    snprintf(v->vm_size, sizeof(v->vm_size), "%s", size ? size : "");
    snprintf(v->vm_why, sizeof(v->vm_why), "%s",
             why && *why ? why : "the VM's uncached disk limits are not known");
    /* A cut reason stays valid UTF-8. */
    struct sb s = {v->vm_why, sizeof(v->vm_why), strlen(v->vm_why)};
    if (s.len + 1 >= s.cap)
        utf8_trim(&s);
}

/* ---- JSON ---- */

/* Figures rounded for people reading the JSON: 0.1 IOPS or MB/s. */
static json_t *fig(double x, double scale)
{
    return isfinite(x) ? json_real(round(x * scale) / scale) : json_null();
}

static json_t *pair(const char *k1, json_t *v1, const char *k2, json_t *v2)
{
    json_t *o = json_object();
    if (!o) {
        json_decref(v1);
        json_decref(v2);
        return NULL;
    }
    json_object_set_new(o, k1, v1);
    json_object_set_new(o, k2, v2);
    return o;
}

json_t *tw_verdict_to_value(const struct tw_verdict *v)
{
    json_t *o = json_object(), *disks = json_array(), *tiers = json_array();
    if (!o || !disks || !tiers) {
        json_decref(o);
        json_decref(disks);
        json_decref(tiers);
        return NULL;
    }
    for (size_t i = 0; i < v->n_disks; i++) {
        json_array_append_new(disks, json_string(v->disks[i].name));
        json_array_append_new(tiers, v->disks[i].tier[0] ? json_string(v->disks[i].tier)
                                                         : json_null());
    }
    json_object_set_new(o, "result_id", json_string(v->result_id));
    json_object_set_new(o, "target", v->target[0] ? json_string(v->target) : json_null());
    json_object_set_new(o, "disks", disks);
    json_object_set_new(o, "tiers", tiers);
    json_object_set_new(o, "verdict", json_string(tw_verdict_name(v->kind)));
    json_object_set_new(o, "judged", json_string(tw_metric_name(v->judged)));
    json_object_set_new(o, "measured", pair("iops", fig(v->measured_iops, 10), "mbps",
                                            fig(v->measured_mbps, 10)));
    json_t *exp = v->expected_known
                      ? pair("iops", fig(v->expected_iops, 10), "mbps", fig(v->expected_mbps, 10))
                      : pair("iops", json_null(), "mbps", json_null());
    if (exp)
        json_object_set_new(exp, "bound_by", v->expected_known
                                                 ? json_string(tw_bound_name(v->bound_by))
                                                 : json_null());
    json_object_set_new(o, "expected", exp);
    json_object_set_new(o, "ratio", v->expected_known
                                        ? pair("iops", fig(v->ratio_iops, 1000), "mbps",
                                               fig(v->ratio_mbps, 1000))
                                        : pair("iops", json_null(), "mbps", json_null()));
    json_object_set_new(o, "rated", v->expected_known
                                        ? pair("iops", fig(v->rated_iops, 10), "mbps",
                                               fig(v->rated_mbps, 10))
                                        : json_null());
    /* Always an object: a verdict without the VM's cap says so and why. */
    json_t *vm = json_object();
    bool capped = v->vm_iops > 0 || v->vm_mbps > 0;
    if (vm) {
        json_object_set_new(vm, "size", v->vm_size[0] ? json_string(v->vm_size) : json_null());
        json_t *cap = capped ? pair("iops", fig(v->vm_iops, 10), "mbps", fig(v->vm_mbps, 10))
                             : json_null();
        if (capped && cap)
            json_object_set_new(cap, "source", json_string(v->vm_source[0] ? v->vm_source
                                                                           : "unknown"));
        json_object_set_new(vm, "cap", cap);
        json_object_set_new(vm, "iops", capped ? fig(v->vm_iops, 10) : json_null());
        json_object_set_new(vm, "mbps", capped ? fig(v->vm_mbps, 10) : json_null());
        json_object_set_new(vm, "why",
                            capped ? json_null()
                                   : json_string(v->vm_why[0]
                                                     ? v->vm_why
                                                     : "the VM's uncached disk limits are not "
                                                       "known"));
        if (json_object_size(vm) != 5 || (capped && !cap)) {
            json_decref(vm);
            vm = NULL;
        }
    }
    json_object_set_new(o, "vm", vm);
    json_object_set_new(o, "reason", json_string(v->reason));
    /* A setter that failed (out of memory) leaves a key out. */
    if (json_object_size(o) != 12) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *tw_verdicts_to_json(const struct tw_verdict *v, size_t n, size_t flags)
{
    json_t *root = json_object(), *arr = json_array();
    char *s = NULL;
    if (!root || !arr) {
        json_decref(root);
        json_decref(arr);
        return NULL;
    }
    json_object_set_new(root, "verdicts", arr);
    for (size_t i = 0; i < n; i++) {
        json_t *o = tw_verdict_to_value(&v[i]);
        if (!o || json_array_append_new(arr, o) != 0)
            goto out;
    }
    /* Figures are rounded to 0.1 or 0.001: print them short, not as the
     * nearest binary double (184.30000000000001). */
    if (!(flags & JSON_REAL_PRECISION(31)))
        flags |= JSON_REAL_PRECISION(12);
    s = json_dumps(root, flags);
out:
    json_decref(root);
    return s;
}
