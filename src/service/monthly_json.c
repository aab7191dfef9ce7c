/*
 * monthly_json.c - the monthly report's JSON document (monthly.h,
 * tw_mr_write_json), schema "tierwise.monthly-report/1":
 *
 *   {"schema_version", "month", "currency",
 *    "period": {"from", "to" (now when partial), "month_end"}, "partial",
 *    "generated_at", "group_by" ("resource-group", "subscription",
 *    "tag:NAME"), "totals": TOTAL, "groups": [{"key", "totals": TOTAL}],
 *    "disks": [ROW], "books": [{"region", "source", "fetched_at", "from",
 *    "to", "after", "disks"}], "missing": [{"region", "why", "disks"}],
 *    "policies": [NAME], "notes": [TEXT], "week": {"from", "to",
 *    "vms": [{"vm", "vm_id", "spans": [{"from", "to", "state"}],
 *    "marks": [{"at", "kind", "disk", "to_sku", "state"}]}]}}
 *
 * ROW is a disk's: vm, vm_id, disk, disk_id, subscription_id,
 * resource_group, location, vm_size, resource_id, group, role ("os",
 * "data"), original_sku, original_tier, sku, tier, hours_by_sku [{sku,
 * tier, seconds, hours, cost, cost_unrounded}], downgraded_seconds,
 * downgraded_hours, switches, drift_seconds, drift_hours,
 * running_metered_seconds, cost, baseline, realised, transactions,
 * possible (each with its "_unrounded"), priced, unpriced (null or the
 * reason's name), unpriced_why, policy, possible_known, excluded (null or
 * the reason's name), excluded_why, verdict (null or {kind, reason,
 * measured: {iops, mbps}, expected: {iops, mbps}, judged_at}).
 *
 * Amounts are decimal strings: rounded to the currency's minor unit, and
 * "_unrounded" with 12 decimals.  A disk not priced has null amounts (its
 * hours_by_sku costs too), never "0"; "possible" is null as well when no
 * policy given covers the disk (possible_known false).  A row's
 * hours_by_sku costs are its rounded cost split by largest remainder (they
 * add up to it; cost_unrounded exact).  Totals are always strings (the
 * rows they sum are counted in "unpriced"); "possible_unknown" counts the
 * disks no policy given covers, whose possible is not known (not 0).  Hours are
 * decimal strings with up to 6 decimals, seconds integers; measured and
 * expected figures are numbers, null when not known.
 *
 * The document is streamed: each row is formatted into a buffer written
 * through WRITE when it passes FLUSH_AT bytes, so the memory held is a
 * row's and not the document's.
 */
#include "service/monthly.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/time.h"
#include "service/monthly_forms.h"

#define FLUSH_AT ((size_t)64 << 10)
#define ROW_MAX ((size_t)64 << 20)

struct jw {
    tw_opp_write_fn write;
    void *arg;
    const struct tw_mr_model *m;
    struct tw_buf b;
    struct tw_error *err;
};

static const char *nz(const char *s)
{
    return s ? s : "";
}

static enum tw_err put(struct jw *w, const char *s)
{
    return tw_buf_puts(&w->b, s);
}

/* S as a JSON string, quotes included; bytes below 0x20 escaped, a byte
 * that starts no valid UTF-8 sequence written as U+FFFD (monthly_forms.h). */
static enum tw_err put_str(struct jw *w, const char *s)
{
    struct tw_buf *b = &w->b;
    char tmp[8];
    enum tw_err rc = tw_buf_append(b, "\"", 1);
    const char *run = nz(s);
    const unsigned char *end = (const unsigned char *)run + strlen(run);
    for (const unsigned char *p = (const unsigned char *)run; rc == TW_OK && *p; p++) {
        if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            continue;
        size_t n = *p >= 0x80 ? tw_mr_utf8_seq(p, (size_t)(end - p)) : 0;
        if (n > 0) {
            p += n - 1; /* valid: kept as it is */
            continue;
        }
        if ((const char *)p > run)
            rc = tw_buf_append(b, run, (size_t)((const char *)p - run));
        if (rc != TW_OK)
            break;
        switch (*p >= 0x80 ? 0x80 : *p) {
        case 0x80: rc = tw_buf_puts(b, TW_MR_FFFD); break;
        case '"': rc = tw_buf_puts(b, "\\\""); break;
        case '\\': rc = tw_buf_puts(b, "\\\\"); break;
        case '\n': rc = tw_buf_puts(b, "\\n"); break;
        case '\t': rc = tw_buf_puts(b, "\\t"); break;
        case '\r': rc = tw_buf_puts(b, "\\r"); break;
        default:
            snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
            rc = tw_buf_puts(b, tmp);
        }
        run = (const char *)p + 1;
    }
    if (rc == TW_OK && *run)
        rc = tw_buf_puts(b, run);
    return rc == TW_OK ? tw_buf_append(b, "\"", 1) : rc;
}

/* ,"K": (K a plain name) or "K": when FIRST.  Written by hand, as the
 * integers below: printf's machinery was a third of the writer's time. */
static enum tw_err key(struct jw *w, const char *k, bool first)
{
    char tmp[80];
    size_t n = strlen(k), at = 0;
    if (n + 4 > sizeof(tmp))
        return TW_EINVAL;
    if (!first)
        tmp[at++] = ',';
    tmp[at++] = '"';
    memcpy(tmp + at, k, n);
    at += n;
    tmp[at++] = '"';
    tmp[at++] = ':';
    return tw_buf_append(&w->b, tmp, at);
}

/* V in decimal. */
static enum tw_err put_int(struct jw *w, int64_t v)
{
    char tmp[24];
    size_t at = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--at] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--at] = '-';
    return tw_buf_append(&w->b, tmp + at, sizeof(tmp) - at);
}

static enum tw_err kv(struct jw *w, const char *k, const char *v, bool first)
{
    enum tw_err rc = key(w, k, first);
    return rc == TW_OK ? put_str(w, v) : rc;
}

/* V, or null when V is NULL. */
static enum tw_err kv_or_null(struct jw *w, const char *k, const char *v)
{
    enum tw_err rc = key(w, k, false);
    if (rc != TW_OK)
        return rc;
    return v ? put_str(w, v) : put(w, "null");
}

static enum tw_err ki(struct jw *w, const char *k, int64_t v, bool first)
{
    enum tw_err rc = key(w, k, first);
    return rc == TW_OK ? put_int(w, v) : rc;
}

static enum tw_err kb(struct jw *w, const char *k, bool v)
{
    enum tw_err rc = key(w, k, false);
    return rc == TW_OK ? put(w, v ? "true" : "false") : rc;
}

static enum tw_err knum(struct jw *w, const char *k, double v, bool first)
{
    if (!isfinite(v))
        return tw_buf_printf(&w->b, "%s\"%s\":null", first ? "" : ",", k);
    return tw_buf_printf(&w->b, "%s\"%s\":%.15g", first ? "" : ",", k, v);
}

static enum tw_err kt(struct jw *w, const char *k, int64_t ns, bool first)
{
    char t[40];
    if (!tw_rfc3339_format_ns(ns, 0, 0, t, sizeof(t)))
        return tw_error_set(w->err, TW_ERANGE, "monthly report: the instant %lld ns of \"%s\" "
                            "can't be written as RFC 3339", (long long)ns, k);
    return kv(w, k, t, first);
}

/* Hours of SECONDS (a sum may be past an int64_t of ns). */
static enum tw_err khours(struct jw *w, const char *k, int64_t seconds)
{
    char h[64];
    if (!tw_hours_decimal_wide((tw_i128)seconds * 1000000000, h, sizeof(h)))
        return tw_error_set(w->err, TW_ERANGE, "monthly report: %lld s of \"%s\" can't be "
                            "written as hours", (long long)seconds, k);
    return kv(w, k, h, false);
}

/* A zeroed struct tw_amount (denominator 0) is zero. */
static struct tw_amount zero_ok(struct tw_amount a)
{
    if (a.den == 0 && a.num == 0)
        a.den = 1;
    return a;
}

/* "NAME": the rounded R, "NAME_unrounded": A with 12 decimals; both null
 * when NUL. */
static enum tw_err kamount(struct jw *w, const char *name, struct tw_money r, struct tw_amount a,
                           bool nul)
{
    char rs[64], us[64], uk[64];
    size_t n = strlen(name);
    if (n + sizeof("_unrounded") > sizeof(uk))
        return TW_EINVAL;
    memcpy(uk, name, n);
    memcpy(uk + n, "_unrounded", sizeof("_unrounded"));
    enum tw_err rc = key(w, name, false);
    if (rc == TW_OK && nul && (rc = put(w, "null")) == TW_OK && (rc = key(w, uk, false)) == TW_OK)
        rc = put(w, "null");
    if (rc != TW_OK || nul)
        return rc;
    if ((rc = tw_money_format(r, w->m->currency, rs, sizeof(rs), w->err)) != TW_OK)
        return rc;
    if (!tw_amount_decimal(zero_ok(a), 12, us, sizeof(us)))
        return tw_error_set(w->err, TW_ERANGE, "monthly report: the amount \"%s\" is out of "
                            "range", name);
    /* Decimal digits, a sign and a point: nothing to escape. */
    if ((rc = put(w, "\"")) == TW_OK && (rc = put(w, rs)) == TW_OK && (rc = put(w, "\"")) == TW_OK &&
        (rc = key(w, uk, false)) == TW_OK && (rc = put(w, "\"")) == TW_OK && (rc = put(w, us)) == TW_OK)
        rc = put(w, "\"");
    return rc;
}

static enum tw_err flush(struct jw *w, bool always)
{
    if (!w->b.len || (!always && w->b.len < FLUSH_AT))
        return TW_OK;
    enum tw_err rc = w->write(w->arg, w->b.data, w->b.len);
    w->b.len = 0;
    w->b.data[0] = '\0';
    if (rc != TW_OK)
        tw_error_set(w->err, rc, "monthly report: writing the JSON document failed (%s)",
                     tw_strerror(rc));
    return rc;
}

static enum tw_err total(struct jw *w, const struct tw_mr_total *t)
{
    enum tw_err rc = put(w, "{");
    if (rc == TW_OK) rc = ki(w, "vms", t->vms, true);
    if (rc == TW_OK) rc = ki(w, "disks", t->disks, false);
    if (rc == TW_OK) rc = ki(w, "unpriced", t->unpriced, false);
    if (rc == TW_OK) rc = ki(w, "possible_unknown", t->possible_unknown, false);
    if (rc == TW_OK) rc = ki(w, "under", t->under, false);
    if (rc == TW_OK) rc = ki(w, "switches", t->switches, false);
    if (rc == TW_OK) rc = khours(w, "downgraded_hours", t->downgraded_seconds);
    if (rc == TW_OK) rc = khours(w, "drift_hours", t->drift_seconds);
    if (rc == TW_OK) rc = kamount(w, "cost", t->cost_r, t->cost, false);
    if (rc == TW_OK) rc = kamount(w, "baseline", t->baseline_r, t->baseline, false);
    if (rc == TW_OK) rc = kamount(w, "realised", t->realised_r, t->realised, false);
    if (rc == TW_OK) rc = kamount(w, "transactions", t->transactions_r, t->transactions, false);
    if (rc == TW_OK) rc = kamount(w, "possible", t->possible_r, t->possible, false);
    return rc == TW_OK ? put(w, "}") : rc;
}

static enum tw_err verdict(struct jw *w, const struct tw_mr_disk *d)
{
    enum tw_err rc = key(w, "verdict", false);
    if (rc != TW_OK || !d->verdict[0])
        return rc == TW_OK ? put(w, "null") : rc;
    if ((rc = put(w, "{")) == TW_OK) rc = kv(w, "kind", d->verdict, true);
    if (rc == TW_OK) rc = kv(w, "reason", d->verdict_reason, false);
    if (rc == TW_OK) rc = put(w, ",\"measured\":{");
    if (rc == TW_OK) rc = knum(w, "iops", d->measured_iops, true);
    if (rc == TW_OK) rc = knum(w, "mbps", d->measured_mbps, false);
    if (rc == TW_OK) rc = put(w, "},\"expected\":{");
    if (rc == TW_OK) rc = knum(w, "iops", d->expected_iops, true);
    if (rc == TW_OK) rc = knum(w, "mbps", d->expected_mbps, false);
    if (rc == TW_OK) rc = put(w, "}");
    if (rc == TW_OK) rc = d->judged_at[0] ? kv(w, "judged_at", d->judged_at, false)
                                          : kv_or_null(w, "judged_at", NULL);
    return rc == TW_OK ? put(w, "}") : rc;
}

static enum tw_err disk(struct jw *w, const struct tw_mr_disk *d, bool first)
{
    bool unp = !d->priced;
    enum tw_err rc = put(w, first ? "\n{" : ",\n{");
    if (rc == TW_OK) rc = kv(w, "vm", d->vm, true);
    if (rc == TW_OK) rc = ki(w, "vm_id", d->vm_id, false);
    if (rc == TW_OK) rc = kv(w, "disk", d->disk, false);
    if (rc == TW_OK) rc = ki(w, "disk_id", d->disk_id, false);
    if (rc == TW_OK) rc = kv(w, "subscription_id", d->subscription_id, false);
    if (rc == TW_OK) rc = kv(w, "resource_group", d->resource_group, false);
    if (rc == TW_OK) rc = kv(w, "location", d->location, false);
    if (rc == TW_OK) rc = kv(w, "vm_size", d->vm_size, false);
    if (rc == TW_OK) rc = kv(w, "resource_id", d->resource_id, false);
    if (rc == TW_OK) rc = kv(w, "group", d->group, false);
    if (rc == TW_OK) rc = kv(w, "role", d->role == TW_DISK_OS ? "os" : "data", false);
    if (rc == TW_OK) rc = kv(w, "original_sku", d->original_sku, false);
    if (rc == TW_OK) rc = kv(w, "original_tier", d->original_tier, false);
    if (rc == TW_OK) rc = kv(w, "sku", d->sku, false);
    if (rc == TW_OK) rc = kv(w, "tier", d->tier, false);
    if (rc == TW_OK) rc = put(w, ",\"hours_by_sku\":[");
    for (size_t i = 0; rc == TW_OK && i < d->n_skus; i++) {
        const struct tw_mr_sku_time *s = &d->skus[i];
        if ((rc = put(w, i ? ",{" : "{")) == TW_OK) rc = kv(w, "sku", s->sku, true);
        if (rc == TW_OK) rc = kv(w, "tier", s->tier, false);
        if (rc == TW_OK) rc = ki(w, "seconds", s->seconds, false);
        if (rc == TW_OK) rc = khours(w, "hours", s->seconds);
        if (rc == TW_OK) rc = kamount(w, "cost", s->cost_r, s->cost, unp);
        if (rc == TW_OK) rc = put(w, "}");
    }
    if (rc == TW_OK) rc = put(w, "]");
    if (rc == TW_OK) rc = ki(w, "downgraded_seconds", d->downgraded_seconds, false);
    if (rc == TW_OK) rc = khours(w, "downgraded_hours", d->downgraded_seconds);
    if (rc == TW_OK) rc = ki(w, "switches", d->switches, false);
    if (rc == TW_OK) rc = ki(w, "drift_seconds", d->drift_seconds, false);
    if (rc == TW_OK) rc = khours(w, "drift_hours", d->drift_seconds);
    if (rc == TW_OK) rc = ki(w, "running_metered_seconds", d->running_metered_seconds, false);
    if (rc == TW_OK) rc = kamount(w, "cost", d->cost_r, d->cost, unp);
    if (rc == TW_OK) rc = kamount(w, "baseline", d->baseline_r, d->baseline, unp);
    if (rc == TW_OK) rc = kamount(w, "realised", d->realised_r, d->realised, unp);
    if (rc == TW_OK) rc = kamount(w, "transactions", d->transactions_r, d->transactions, unp);
    if (rc == TW_OK)
        rc = kamount(w, "possible", d->possible_r, d->possible, unp || !d->possible_known);
    if (rc == TW_OK) rc = kb(w, "priced", d->priced);
    if (rc == TW_OK) rc = kv_or_null(w, "unpriced", d->priced ? NULL : nz(d->unpriced));
    if (rc == TW_OK) rc = kv(w, "unpriced_why", d->priced ? "" : d->unpriced_why, false);
    if (rc == TW_OK) rc = kv(w, "policy", d->policy, false);
    if (rc == TW_OK) rc = kb(w, "possible_known", d->possible_known);
    if (rc == TW_OK) rc = kv_or_null(w, "excluded", d->excluded);
    if (rc == TW_OK) rc = kv(w, "excluded_why", d->excluded ? d->excluded_why : "", false);
    if (rc == TW_OK) rc = verdict(w, d);
    return rc == TW_OK ? put(w, "}") : rc;
}

static const char *group_by_name(const struct tw_mr_model *m, char *buf, size_t cap)
{
    switch (m->group_by) {
    case TW_MR_BY_SUBSCRIPTION: return "subscription";
    case TW_MR_BY_TAG: snprintf(buf, cap, "tag:%s", m->group_tag); return buf;
    case TW_MR_BY_RESOURCE_GROUP: break;
    }
    return "resource-group";
}

static enum tw_err head(struct jw *w)
{
    const struct tw_mr_model *m = w->m;
    char gb[sizeof(m->group_tag) + 8];
    enum tw_err rc = put(w, "{");
    if (rc == TW_OK) rc = kv(w, "schema_version", TW_MR_SCHEMA, true);
    if (rc == TW_OK) rc = kv(w, "month", m->month, false);
    if (rc == TW_OK) rc = kv(w, "currency", m->currency, false);
    if (rc == TW_OK) rc = put(w, ",\"period\":{");
    if (rc == TW_OK) rc = kt(w, "from", m->from_ns, true);
    if (rc == TW_OK) rc = kt(w, "to", m->to_ns, false);
    if (rc == TW_OK) rc = kt(w, "month_end", m->month_end_ns, false);
    if (rc == TW_OK) rc = put(w, "}");
    if (rc == TW_OK) rc = kb(w, "partial", m->partial);
    if (rc == TW_OK) rc = kv(w, "generated_at", m->generated_at, false);
    if (rc == TW_OK) rc = kv(w, "group_by", group_by_name(m, gb, sizeof(gb)), false);
    if (rc == TW_OK) rc = put(w, ",\"totals\":");
    if (rc == TW_OK) rc = total(w, &m->fleet);
    if (rc == TW_OK) rc = put(w, ",\"groups\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_groups; i++) {
        if ((rc = put(w, i ? ",\n{" : "\n{")) == TW_OK) rc = kv(w, "key", m->groups[i].key, true);
        if (rc == TW_OK) rc = put(w, ",\"totals\":");
        if (rc == TW_OK) rc = total(w, &m->groups[i].t);
        if (rc == TW_OK) rc = put(w, "}");
        if (rc == TW_OK) rc = flush(w, false);
    }
    return rc == TW_OK ? put(w, "]") : rc;
}

static enum tw_err tail(struct jw *w)
{
    const struct tw_mr_model *m = w->m;
    enum tw_err rc = put(w, ",\n\"books\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_books; i++) {
        const struct tw_mr_book *b = &m->books[i];
        if ((rc = put(w, i ? ",{" : "{")) == TW_OK) rc = kv(w, "region", b->region, true);
        if (rc == TW_OK) rc = kv(w, "source", b->source, false);
        if (rc == TW_OK) rc = kv(w, "fetched_at", b->fetched_at, false);
        if (rc == TW_OK) rc = kt(w, "from", b->from_ns, false);
        if (rc == TW_OK) rc = kt(w, "to", b->to_ns, false);
        if (rc == TW_OK) rc = kb(w, "after", b->after);
        if (rc == TW_OK) rc = ki(w, "disks", b->disks, false);
        if (rc == TW_OK) rc = put(w, "}");
    }
    if (rc == TW_OK) rc = put(w, "],\n\"missing\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_missing; i++) {
        const struct tw_mr_missing *x = &m->missing[i];
        if ((rc = put(w, i ? ",{" : "{")) == TW_OK) rc = kv(w, "region", x->region, true);
        if (rc == TW_OK) rc = kv(w, "why", x->why, false);
        if (rc == TW_OK) rc = ki(w, "disks", x->disks, false);
        if (rc == TW_OK) rc = put(w, "}");
    }
    if (rc == TW_OK) rc = put(w, "],\n\"policies\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_policies; i++) {
        if (i) rc = put(w, ",");
        if (rc == TW_OK) rc = put_str(w, m->policies[i]);
    }
    if (rc == TW_OK) rc = put(w, "],\n\"notes\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_notes; i++) {
        if (i) rc = put(w, ",");
        if (rc == TW_OK) rc = put_str(w, m->notes[i]);
    }
    if (rc == TW_OK) rc = put(w, "],\n\"week\":{");
    if (rc == TW_OK) rc = kt(w, "from", m->week_from_ns, true);
    if (rc == TW_OK) rc = kt(w, "to", m->week_to_ns, false);
    if (rc == TW_OK) rc = put(w, ",\"vms\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_week; i++) {
        const struct tw_mr_week_vm *v = &m->week[i];
        if ((rc = put(w, i ? ",\n{" : "\n{")) == TW_OK) rc = kv(w, "vm", v->vm, true);
        if (rc == TW_OK) rc = ki(w, "vm_id", v->vm_id, false);
        if (rc == TW_OK) rc = put(w, ",\"spans\":[");
        for (size_t j = 0; rc == TW_OK && j < v->n_spans; j++) {
            if ((rc = put(w, j ? ",{" : "{")) == TW_OK) rc = kt(w, "from", v->spans[j].from_ns, true);
            if (rc == TW_OK) rc = kt(w, "to", v->spans[j].to_ns, false);
            if (rc == TW_OK) rc = kv(w, "state", v->spans[j].state, false);
            if (rc == TW_OK) rc = put(w, "}");
        }
        if (rc == TW_OK) rc = put(w, "],\"marks\":[");
        for (size_t j = 0; rc == TW_OK && j < v->n_marks; j++) {
            const struct tw_mr_mark *k = &v->marks[j];
            if ((rc = put(w, j ? ",{" : "{")) == TW_OK) rc = kt(w, "at", k->at_ns, true);
            if (rc == TW_OK) rc = kv(w, "kind", k->kind, false);
            if (rc == TW_OK) rc = kv(w, "disk", k->disk, false);
            if (rc == TW_OK) rc = kv(w, "to_sku", k->to_sku, false);
            if (rc == TW_OK) rc = kv(w, "state", k->state, false);
            if (rc == TW_OK) rc = put(w, "}");
        }
        if (rc == TW_OK) rc = put(w, "]}");
        if (rc == TW_OK) rc = flush(w, false);
    }
    return rc == TW_OK ? put(w, "]}}\n") : rc;
}

enum tw_err tw_mr_write_json(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                             struct tw_error *err)
{
    struct tw_error local = {0};
    struct jw w = {.write = write, .arg = arg, .m = m, .err = err ? err : &local};
    tw_buf_init(&w.b, ROW_MAX);
    enum tw_err rc = head(&w);
    if (rc == TW_OK) rc = put(&w, ",\n\"disks\":[");
    for (size_t i = 0; rc == TW_OK && i < m->n_disks; i++) {
        rc = disk(&w, &m->disks[i], i == 0);
        if (rc == TW_OK)
            rc = flush(&w, false);
    }
    if (rc == TW_OK) rc = put(&w, "]");
    if (rc == TW_OK) rc = tail(&w);
    if (rc == TW_OK) rc = flush(&w, true);
    else if (!w.err->msg[0])
        tw_error_set(w.err, rc, "monthly report: the JSON document could not be formatted (%s)",
                     tw_strerror(rc));
    tw_buf_cleanup(&w.b);
    return rc;
}
