/*
 * opportunities_json.c - the JSON document of the fleet's savings
 * opportunities (opportunities.h, tw_opp_json), written as the run goes:
 * the covered disks streamed, the excluded ones and each VM's total held
 * as text until the end (the header is written at the first disk, when
 * the run has fixed the month's instants and the currency).
 */
#include "service/opportunities.h"

#include "core/buf.h"
#include "core/time.h"

#include <stdio.h>
#include <string.h>

#define TEXT_MAX ((size_t)1 << 30)

struct jw {
    tw_opp_write_fn write;
    void *arg;
    struct tw_opp_result *res;
    bool head_done;
    bool write_failed;           /* WRITE returned an error (not the run, not an amount) */
    size_t n_disks, n_excluded, n_vms;
    struct tw_buf line, excluded, vms;
};

static enum tw_err put(struct tw_buf *b, const char *s)
{
    return tw_buf_puts(b, s);
}

/* S as a JSON string (quotes included). */
static enum tw_err put_str(struct tw_buf *b, const char *s)
{
    char tmp[8];
    enum tw_err rc = tw_buf_append(b, "\"", 1);
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; rc == TW_OK && *p; p++) {
        if (*p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        if ((const char *)p > run)
            rc = tw_buf_append(b, run, (size_t)((const char *)p - run));
        if (rc != TW_OK)
            break;
        switch (*p) {
        case '"': rc = put(b, "\\\""); break;
        case '\\': rc = put(b, "\\\\"); break;
        case '\n': rc = put(b, "\\n"); break;
        case '\t': rc = put(b, "\\t"); break;
        case '\r': rc = put(b, "\\r"); break;
        default:
            snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
            rc = put(b, tmp);
        }
        run = (const char *)p + 1;
    }
    if (rc == TW_OK && *run)
        rc = put(b, run);
    return rc == TW_OK ? tw_buf_append(b, "\"", 1) : rc;
}

static enum tw_err put_kv(struct tw_buf *b, const char *k, const char *v, bool comma)
{
    enum tw_err rc = comma ? put(b, ",") : TW_OK;
    if (rc == TW_OK)
        rc = put_str(b, k);
    if (rc == TW_OK)
        rc = put(b, ":");
    return rc == TW_OK ? put_str(b, v) : rc;
}

/* ,"K":V, or "K":V without COMMA (K a plain name: no escape needed). */
static enum tw_err put_ki_c(struct tw_buf *b, const char *k, long long v, bool comma)
{
    return tw_buf_printf(b, "%s\"%s\":%lld", comma ? "," : "", k, v);
}

static enum tw_err put_ki(struct tw_buf *b, const char *k, long long v)
{
    return put_ki_c(b, k, v, true);
}

static enum tw_err put_amounts(struct tw_buf *b, const char *name, struct tw_amount a,
                               const char *currency)
{
    char r[64], u[64], key[64];
    struct tw_error e = {0};
    enum tw_err rc = tw_amount_format(a, currency, r, sizeof(r), &e);
    if (rc != TW_OK)
        return rc;
    if (!tw_amount_decimal(a, 12, u, sizeof(u)))
        return TW_ERANGE;
    size_t ln = strlen(name);
    if (ln + sizeof("_unrounded") > sizeof(key))
        return TW_EINVAL;
    memcpy(key, name, ln);
    memcpy(key + ln, "_unrounded", sizeof("_unrounded"));
    rc = put_kv(b, name, r, true);
    return rc == TW_OK ? put_kv(b, key, u, true) : rc;
}

static enum tw_err put_hours(struct tw_buf *b, const char *k, tw_opp_ns ns)
{
    char h[48];
    if (!tw_opp_hours_text(ns, h, sizeof(h)))
        return TW_ERANGE;
    return put_kv(b, k, h, true);
}

static enum tw_err flush(struct jw *w, struct tw_buf *b)
{
    enum tw_err rc = b->len ? w->write(w->arg, b->data, b->len) : TW_OK;
    if (rc != TW_OK)
        w->write_failed = true;
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
    return rc;
}

static enum tw_err head(struct jw *w)
{
    if (w->head_done)
        return TW_OK;
    w->head_done = true;
    struct tw_opp_result *r = w->res;
    char from[40], to[40];
    if (!tw_rfc3339_format_ns(r->from_ns, 0, 0, from, sizeof(from)) ||
        !tw_rfc3339_format_ns(r->to_ns, 0, 0, to, sizeof(to)))
        return TW_ERANGE;
    struct tw_buf *b = &w->line;
    enum tw_err rc = put(b, "{");
    if (rc == TW_OK)
        rc = put_kv(b, "schema_version", "tierwise.savings-opportunities/1", false);
    if (rc == TW_OK)
        rc = put_kv(b, "policy", r->policy, true);
    if (rc == TW_OK)
        rc = put_kv(b, "month", r->month, true);
    if (rc == TW_OK)
        rc = put_kv(b, "timezone", r->timezone, true);
    if (rc == TW_OK)
        rc = put(b, ",\"period\":{");
    if (rc == TW_OK)
        rc = put_kv(b, "from", from, false);
    if (rc == TW_OK)
        rc = put_kv(b, "to", to, true);
    if (rc == TW_OK)
        rc = put(b, "}");
    if (rc == TW_OK)
        rc = put_kv(b, "currency", r->currency, true);
    if (rc == TW_OK)
        rc = put(b, ",\"disks\":[");
    return rc == TW_OK ? flush(w, b) : rc;
}

static enum tw_err disk_common(struct tw_buf *b, const struct tw_opp_vm *vm,
                               const struct tw_opp_disk *d)
{
    enum tw_err rc = put(b, "{");
    if (rc == TW_OK)
        rc = put_kv(b, "vm", vm->name, false);
    if (rc == TW_OK)
        rc = put_ki(b, "vm_id", vm->id);
    if (rc == TW_OK)
        rc = put_kv(b, "resource_group", vm->resource_group, true);
    if (rc == TW_OK)
        rc = put_kv(b, "subscription_id", vm->subscription_id, true);
    if (rc == TW_OK)
        rc = put_kv(b, "location", vm->location, true);
    if (rc == TW_OK)
        rc = put_kv(b, "vm_size", vm->vm_size, true);
    if (rc == TW_OK)
        rc = put_kv(b, "disk", d->name, true);
    if (rc == TW_OK)
        rc = put_ki(b, "disk_id", d->id);
    if (rc == TW_OK)
        rc = put_kv(b, "role", d->role == TW_DISK_OS ? "os" : "data", true);
    if (rc == TW_OK)
        rc = put_kv(b, "sku", d->sku, true);
    if (rc == TW_OK)
        rc = put_kv(b, "tier", d->tier, true);
    if (rc == TW_OK)
        rc = put_ki(b, "size_gib", d->size_gib);
    return rc;
}

static enum tw_err on_disk(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *d)
{
    struct jw *w = arg;
    enum tw_err rc = head(w);
    if (rc != TW_OK)
        return rc;
    const char *cur = w->res->currency;
    if (d->reason != TW_OPP_COVERED) {
        struct tw_buf *b = &w->excluded;
        rc = w->n_excluded++ ? put(b, ",") : TW_OK;
        if (rc == TW_OK)
            rc = disk_common(b, vm, d);
        if (rc == TW_OK)
            rc = put_kv(b, "reason", tw_opp_reason_name(d->reason), true);
        if (rc == TW_OK)
            rc = put_kv(b, "why", d->why, true);
        return rc == TW_OK ? put(b, "}") : rc;
    }
    struct tw_buf *b = &w->line;
    char m1[TW_MONEY_TEXT_MAX], m2[TW_MONEY_TEXT_MAX];
    rc = w->n_disks++ ? put(b, ",") : TW_OK;
    if (rc == TW_OK)
        rc = disk_common(b, vm, d);
    if (rc == TW_OK)
        rc = put_kv(b, "target_sku", d->target.sku, true);
    if (rc == TW_OK)
        rc = put_kv(b, "target_tier", d->target.tier, true);
    if (rc == TW_OK)
        rc = put_kv(b, "target_why", d->target.why, true);
    if (rc == TW_OK)
        rc = put_kv(b, "per_month", tw_money_text(d->target.from_per_month, m1, sizeof(m1)),
                    true);
    if (rc == TW_OK)
        rc = put_kv(b, "target_per_month",
                    tw_money_text(d->target.to_per_month, m2, sizeof(m2)), true);
    if (rc == TW_OK)
        rc = put_kv(b, "windows_source", d->windows_source, true);
    if (rc == TW_OK)
        rc = put_kv(b, "windows", d->windows, true);
    if (rc == TW_OK)
        rc = put_kv(b, "windows_tz", d->windows_tz, true);
    if (rc == TW_OK)
        rc = put_ki(b, "windows_taken", (long long)d->saving.n_taken);
    if (rc == TW_OK)
        rc = put_ki(b, "windows_skipped", (long long)d->saving.n_skipped);
    if (rc == TW_OK)
        rc = put_hours(b, "hours", d->saving.downgraded_ns);
    if (rc == TW_OK)
        rc = put_amounts(b, "baseline", d->saving.baseline, cur);
    if (rc == TW_OK)
        rc = put_amounts(b, "transactions", d->saving.tx_cost, cur);
    if (rc == TW_OK)
        rc = put_amounts(b, "saving", d->saving.saving, cur);
    if (rc == TW_OK)
        rc = put(b, ",\"caveats\":[");
    for (size_t i = 0; rc == TW_OK && i < d->n_caveats; i++) {
        if (i)
            rc = put(b, ",");
        if (rc == TW_OK)
            rc = put_str(b, d->caveats[i]);
    }
    if (rc == TW_OK)
        rc = put(b, "]}");
    if (rc == TW_OK && b->len >= 64 * 1024)
        rc = flush(w, b);
    return rc;
}

/* A total's members, each after a comma, except "vms" (when VMS) when
 * FIRST: the object's first member. */
static enum tw_err total_fields(struct tw_buf *b, const struct tw_opp_total *t, const char *cur,
                                bool vms, bool first)
{
    enum tw_err rc = vms ? put_ki_c(b, "vms", t->vms, !first) : TW_OK;
    if (rc == TW_OK)
        rc = put_ki(b, "disks", t->disks);
    if (rc == TW_OK)
        rc = put_ki(b, "excluded", t->excluded);
    if (rc == TW_OK)
        rc = put_ki(b, "disks_without_price", t->no_price);
    if (rc == TW_OK)
        rc = put_hours(b, "hours", t->downgraded_ns);
    if (rc == TW_OK)
        rc = put_amounts(b, "saving", t->saving, cur);
    return rc;
}

static enum tw_err on_vm(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_total *t)
{
    struct jw *w = arg;
    struct tw_buf *b = &w->vms;
    enum tw_err rc = w->n_vms++ ? put(b, ",") : TW_OK;
    if (rc == TW_OK)
        rc = put(b, "{");
    if (rc == TW_OK)
        rc = put_kv(b, "vm", vm->name, false);
    if (rc == TW_OK)
        rc = put_ki(b, "vm_id", vm->id);
    if (rc == TW_OK)
        rc = put_kv(b, "resource_group", vm->resource_group, true);
    if (rc == TW_OK)
        rc = put_kv(b, "subscription_id", vm->subscription_id, true);
    if (rc == TW_OK)
        rc = total_fields(b, t, w->res->currency, false, false);
    return rc == TW_OK ? put(b, "}") : rc;
}

static enum tw_err tail(struct jw *w)
{
    struct tw_opp_result *r = w->res;
    struct tw_buf *b = &w->line;
    enum tw_err rc = put(b, "],\"excluded\":[");
    if (rc == TW_OK && (rc = flush(w, b)) == TW_OK)
        rc = flush(w, &w->excluded);
    if (rc == TW_OK)
        rc = put(b, "],\"totals\":{\"vms\":[");
    if (rc == TW_OK && (rc = flush(w, b)) == TW_OK)
        rc = flush(w, &w->vms);
    if (rc == TW_OK)
        rc = put(b, "],\"resource_groups\":[");
    for (size_t i = 0; rc == TW_OK && i < r->n_rgs; i++) {
        rc = put(b, i ? ",{" : "{");
        if (rc == TW_OK)
            rc = put_kv(b, "subscription_id", r->rgs[i].subscription_id, false);
        if (rc == TW_OK)
            rc = put_kv(b, "resource_group", r->rgs[i].resource_group, true);
        if (rc == TW_OK)
            rc = total_fields(b, &r->rgs[i].t, r->currency, true, false);
        if (rc == TW_OK)
            rc = put(b, "}");
    }
    if (rc == TW_OK)
        rc = put(b, "],\"subscriptions\":[");
    for (size_t i = 0; rc == TW_OK && i < r->n_subs; i++) {
        rc = put(b, i ? ",{" : "{");
        if (rc == TW_OK)
            rc = put_kv(b, "subscription_id", r->subs[i].subscription_id, false);
        if (rc == TW_OK)
            rc = total_fields(b, &r->subs[i].t, r->currency, true, false);
        if (rc == TW_OK)
            rc = put(b, "}");
    }
    if (rc == TW_OK)
        rc = put(b, "],\"fleet\":{");
    if (rc == TW_OK)
        rc = total_fields(b, &r->fleet, r->currency, true, true);
    if (rc == TW_OK)
        rc = put(b, "}},\"prices\":[");
    size_t k = 0;
    for (size_t i = 0; rc == TW_OK && i < r->n_books; i++) {
        if (r->books[i].missing)
            continue;
        rc = put(b, k++ ? ",{" : "{");
        if (rc == TW_OK)
            rc = put_kv(b, "region", r->books[i].region, false);
        if (rc == TW_OK)
            rc = put_kv(b, "source", r->books[i].source, true);
        if (rc == TW_OK)
            rc = put_kv(b, "fetched_at", r->books[i].fetched_at, true);
        if (rc == TW_OK)
            rc = put_ki(b, "disks", r->books[i].disks);
        if (rc == TW_OK)
            rc = put(b, "}");
    }
    if (rc == TW_OK)
        rc = put(b, "],\"regions_without_book\":[");
    k = 0;
    for (size_t i = 0; rc == TW_OK && i < r->n_books; i++) {
        if (!r->books[i].missing)
            continue;
        rc = put(b, k++ ? ",{" : "{");
        if (rc == TW_OK)
            rc = put_kv(b, "region", r->books[i].region, false);
        if (rc == TW_OK)
            rc = put_ki(b, "disks", r->books[i].disks);
        if (rc == TW_OK)
            rc = put_kv(b, "why", r->books[i].why, true);
        if (rc == TW_OK)
            rc = put(b, "}");
    }
    if (rc == TW_OK)
        rc = put(b, "]}\n");
    return rc == TW_OK ? flush(w, b) : rc;
}

enum tw_err tw_opp_json(struct tw_store *st, const struct tw_opp_opts *o, tw_opp_write_fn write,
                        void *arg, struct tw_opp_result *res, struct tw_error *err)
{
    struct tw_opp_result own;
    struct jw w = {.write = write, .arg = arg, .res = res ? res : &own};
    tw_buf_init(&w.line, TEXT_MAX);
    tw_buf_init(&w.excluded, TEXT_MAX);
    tw_buf_init(&w.vms, TEXT_MAX);
    struct tw_opp_sink sink = {on_disk, on_vm, &w};
    enum tw_err rc = tw_opp_run(st, o, &sink, w.res, err);
    if (rc == TW_OK && (rc = head(&w)) == TW_OK)
        rc = tail(&w);
    if (rc != TW_OK && err && !err->code) {
        if (w.write_failed)
            tw_error_set(err, rc, "writing the savings opportunities failed: %s",
                         tw_strerror(rc));
        else if (rc == TW_ENOMEM)
            tw_error_set(err, rc, "making the savings opportunities' document failed: out of "
                                  "memory");
        else if (rc == TW_ERANGE)
            tw_error_set(err, rc, "making the savings opportunities' document failed: an "
                                  "amount or a time out of range");
        else
            tw_error_set(err, rc, "making the savings opportunities' document failed: %s",
                         tw_strerror(rc));
    }
    if (rc != TW_OK && w.res->fail == TW_OPP_FAIL_NONE)
        w.res->fail = TW_OPP_FAIL_OTHER;
    tw_buf_cleanup(&w.line);
    tw_buf_cleanup(&w.excluded);
    tw_buf_cleanup(&w.vms);
    if (!res)
        tw_opp_result_cleanup(&own);
    return rc;
}
