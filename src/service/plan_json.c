/*
 * plan_json.c - the plan as the tierwise.plan/1 document (written as the
 * run goes: one action at a time), the same document read back into its
 * actions (`tierwise apply --plan FILE`), and an action recorded in the
 * store (plan.h).
 */
#include "service/plan.h"

#include "core/buf.h"
#include "core/jsonx.h"
#include "core/time.h"

#include <jansson.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_SCHEMA "tierwise.plan/1"
#define FLUSH_AT (64 * 1024)

/* ---- writing ---- */

struct jw {
    tw_opp_write_fn write;
    void *arg;
    struct tw_buf b;
    struct tw_plan_summary sum;  /* the run's (header fields set before the first action) */
    bool head;                   /* written */
    size_t n;                    /* actions written */
    char zero[16];               /* an upgrade's saving in the currency */
};

static enum tw_err put(struct tw_buf *b, const char *s)
{
    return tw_buf_append(b, s, strlen(s));
}

/* S as a JSON string. */
static enum tw_err put_str(struct tw_buf *b, const char *s)
{
    enum tw_err rc = tw_buf_append(b, "\"", 1);
    const char *run = s;
    for (const unsigned char *p = (const unsigned char *)s; rc == TW_OK && *p; p++) {
        if (*p >= 0x20 && *p != '"' && *p != '\\')
            continue;
        if ((const char *)p > run)
            rc = tw_buf_append(b, run, (size_t)((const char *)p - run));
        char tmp[8];
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

static enum tw_err put_kv(struct tw_buf *b, const char *k, const char *v)
{
    enum tw_err rc = tw_buf_printf(b, ",\"%s\":", k);
    return rc == TW_OK ? put_str(b, v ? v : "") : rc;
}

static enum tw_err flush(struct jw *w, bool all)
{
    if (!all && w->b.len < FLUSH_AT)
        return TW_OK;
    enum tw_err rc = w->b.len ? w->write(w->arg, w->b.data, w->b.len) : TW_OK;
    w->b.len = 0;
    return rc;
}

static enum tw_err head(struct jw *w)
{
    char from[40], to[40];
    if (!tw_rfc3339_format_ns(w->sum.from_ns, 0, 0, from, sizeof(from)) ||
        !tw_rfc3339_format_ns(w->sum.to_ns, 0, 0, to, sizeof(to)))
        return TW_ERANGE;
    enum tw_err rc = put(&w->b, "{\"schema_version\":\"" PLAN_SCHEMA "\"");
    if (rc == TW_OK)
        rc = put_kv(&w->b, "policy", w->sum.policy);
    if (rc == TW_OK)
        rc = put_kv(&w->b, "from", from);
    if (rc == TW_OK)
        rc = put_kv(&w->b, "to", to);
    if (rc == TW_OK)
        rc = put_kv(&w->b, "currency", w->sum.currency);
    if (rc == TW_OK)
        rc = put_kv(&w->b, "timezone", w->sum.timezone);
    if (rc == TW_OK)
        rc = put(&w->b, ",\"actions\":[");
    w->head = true;
    struct tw_error e = {0};
    if (tw_amount_format(tw_amount_of(tw_money_micros(0)), w->sum.currency, w->zero,
                         sizeof(w->zero), &e) != TW_OK)
        snprintf(w->zero, sizeof(w->zero), "0");
    return rc;
}

/* One action as the document's object (the audit log's field names). */
static enum tw_err action_json(struct tw_buf *b, const struct tw_plan_action *a,
                       const char *policy, const char *currency)
{
    char saving[64];
    struct tw_error e = {0};
    if (tw_amount_format(a->saving, currency, saving, sizeof(saving), &e) != TW_OK)
        return e.code ? e.code : TW_EINVAL;
    enum tw_err rc = put(b, "{\"vm\":");
    if (rc == TW_OK)
        rc = put_str(b, a->vm ? a->vm : "");
    if (rc == TW_OK)
        rc = put_kv(b, "disk", a->disk);
    if (rc == TW_OK)
        rc = put_kv(b, "kind", tw_plan_kind_name(a->kind));
    if (rc == TW_OK)
        rc = put_kv(b, "from_sku", a->from_sku);
    if (rc == TW_OK)
        rc = put_kv(b, "to_sku", a->to_sku);
    if (rc == TW_OK)
        rc = put_kv(b, "due_at", a->due_at);
    if (rc == TW_OK)
        rc = put_kv(b, "due_local", a->due_local);
    if (rc == TW_OK)
        rc = put_kv(b, "saving", saving);
    if (rc == TW_OK)
        rc = put_kv(b, "currency", currency);
    if (rc == TW_OK)
        rc = put_kv(b, "reason", a->reason);
    if (rc == TW_OK)
        rc = put_kv(b, "policy", policy);
    if (rc == TW_OK)
        rc = put_kv(b, "resource_group", a->resource_group);
    if (rc == TW_OK)
        rc = put_kv(b, "subscription_id", a->subscription_id);
    if (rc == TW_OK)
        rc = put_kv(b, "idempotency_key", a->idempotency_key);
    if (rc == TW_OK)
        rc = tw_buf_printf(b, ",\"vm_id\":%lld,\"disk_id\":%lld}", (long long)a->vm_id,
                           (long long)a->disk_id);
    return rc;
}

static enum tw_err on_action(void *arg, const struct tw_plan_action *a)
{
    struct jw *w = arg;
    enum tw_err rc = TW_OK;
    if (!w->head && (rc = head(w)) != TW_OK)
        return rc;
    if (w->n++ && (rc = put(&w->b, ",")) != TW_OK)
        return rc;
    if ((rc = action_json(&w->b, a, w->sum.policy, w->sum.currency)) != TW_OK)
        return rc;
    return flush(w, false);
}

/* The writer and the run's live summary: its header fields (policy,
 * currency, zone, period) are set before the first action (plan.c). */
struct hdr_sink {
    struct jw *w;
    const struct tw_plan_summary *live;
};

static enum tw_err on_action_hdr(void *arg, const struct tw_plan_action *a)
{
    struct hdr_sink *h = arg;
    if (!h->w->head)
        h->w->sum = *h->live;
    return on_action(h->w, a);
}

/* "westeurope (2 disks), eastus (1 disk)" as ["westeurope","eastus"]
 * (a region name is [a-z0-9]: nothing to escape, but only those bytes
 * are written). */
static enum tw_err regions_json(struct tw_buf *b, const char *list)
{
    enum tw_err rc = TW_OK;
    bool first = true;
    for (const char *p = list; rc == TW_OK && *p;) {
        while (*p == ',' || *p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ' && *e != ',')
            e++;
        if (e == p)
            break;
        rc = tw_buf_append(b, first ? "\"" : ",\"", first ? 1 : 2);
        for (const char *q = p; rc == TW_OK && q < e; q++)
            if (isalnum((unsigned char)*q) || *q == '-' || *q == '_')
                rc = tw_buf_append(b, q, 1);
        if (rc == TW_OK)
            rc = tw_buf_append(b, "\"", 1);
        first = false;
        p = e;
        while (*p && *p != ',') /* " (2 disks)" */
            p++;
    }
    return rc;
}

enum tw_err tw_svc_plan_json(struct tw_store *st, const struct tw_plan_opts *o,
                             tw_opp_write_fn write, void *arg, struct tw_error *err)
{
    struct tw_plan_summary sum;
    return tw_svc_plan_json_sum(st, o, write, arg, &sum, err);
}

enum tw_err tw_svc_plan_json_sum(struct tw_store *st, const struct tw_plan_opts *o,
                                 tw_opp_write_fn write, void *arg, struct tw_plan_summary *out,
                                 struct tw_error *err)
{
    struct jw w = {.write = write, .arg = arg};
    tw_buf_init(&w.b, (size_t)1 << 30);
    struct tw_plan_summary sum;
    struct hdr_sink h = {&w, &sum};
    struct tw_plan_sink sink = {on_action_hdr, &h};
    enum tw_err rc = tw_svc_plan_run(st, o, &sink, &sum, err);
    if (rc == TW_OK) {
        if (!w.head) {
            w.sum = sum;
            rc = head(&w);
        }
        char saving[64], su[64];
        struct tw_error e = {0};
        if (rc == TW_OK && (tw_amount_format(sum.saving, sum.currency, saving, sizeof(saving),
                                             &e) != TW_OK ||
                            !tw_amount_decimal(sum.saving, 12, su, sizeof(su))))
            rc = tw_error_set(err, TW_ERANGE, "the plan's saving can't be written: %s", e.msg);
        if (rc == TW_OK)
            rc = tw_buf_printf(&w.b,
                               "],\"totals\":{\"actions\":%lld,\"downgrades\":%lld,"
                               "\"upgrades\":%lld,\"disks\":%lld,\"windows_skipped\":%lld,"
                               "\"saving\":\"%s\",\"saving_unrounded\":\"%s\","
                               "\"disks_without_price\":%lld,\"missing_regions\":[",
                               (long long)sum.actions, (long long)sum.downgrades,
                               (long long)sum.upgrades, (long long)sum.disks,
                               (long long)sum.windows_skipped, saving, su,
                               (long long)sum.disks_without_price);
        if (rc == TW_OK)
            rc = regions_json(&w.b, sum.missing_regions);
        if (rc == TW_OK)
            rc = tw_buf_append(&w.b, "]}}\n", 4);
        if (rc == TW_OK && (rc = flush(&w, true)) != TW_OK)
            tw_error_set(err, rc, "writing the plan failed");
    }
    tw_buf_cleanup(&w.b);
    *out = sum;
    return rc;
}

/* ---- reading a saved plan ---- */

static bool str_of(const json_t *o, const char *path, const char *key, unsigned opt, char *dst,
                   size_t cap, struct tw_error *err)
{
    return tw_jx_str(json_object_get(o, key), path, key, opt, dst, cap, err);
}

enum tw_err tw_svc_plan_parse(const char *buf, size_t len, const struct tw_plan_sink *sink,
                              struct tw_error *err)
{
    tw_error_clear(err);
    json_t *root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, "the plan", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    char schema[32] = "", policy[TW_POLICY_NAME_MAX] = "", currency[4] = "";
    if (!json_is_object(root)) {
        rc = tw_error_set(err, TW_EPARSE, "the plan is not a JSON object (a tierwise.plan/1 "
                                          "document: tierwise plan --json)");
        goto out;
    }
    if (!str_of(root, "", "schema_version", TW_JX_REQUIRED, schema, sizeof(schema), err)) {
        rc = TW_EPARSE;
        goto out;
    }
    if (strcmp(schema, PLAN_SCHEMA) != 0) {
        rc = tw_error_set(err, TW_EPARSE,
                          "schema_version: \"%.31s\" is not " PLAN_SCHEMA
                          " (write the plan with tierwise plan --json)",
                          schema);
        goto out;
    }
    if (!str_of(root, "", "policy", TW_JX_REQUIRED | TW_JX_NONEMPTY, policy, sizeof(policy),
                err) ||
        !str_of(root, "", "currency", 0, currency, sizeof(currency), err)) {
        rc = TW_EPARSE;
        goto out;
    }
    bool ok = true;
    const json_t *acts = tw_jx_want(json_object_get(root, "actions"), "", "actions", JSON_ARRAY,
                                    TW_JX_REQUIRED, &ok, err);
    if (!acts) {
        rc = TW_EPARSE;
        goto out;
    }
    size_t i;
    const json_t *v;
    json_array_foreach(acts, i, v)
    {
        char path[48];
        snprintf(path, sizeof(path), "actions[%zu]", i);
        if (!json_is_object(v)) {
            rc = tw_error_set(err, TW_EPARSE, "%s: must be an object (an action)", path);
            goto out;
        }
        struct tw_plan_action a;
        memset(&a, 0, sizeof(a));
        char kind[16] = "", vm[128] = "", disk[128] = "", rg[128] = "", sub[64] = "";
        char saving[64] = "", cur[8] = "", pol[TW_POLICY_NAME_MAX] = "";
        int64_t vm_id = 0, disk_id = 0;
        if (!str_of(v, path, "kind", TW_JX_REQUIRED, kind, sizeof(kind), err) ||
            !str_of(v, path, "vm", TW_JX_REQUIRED | TW_JX_NONEMPTY, vm, sizeof(vm), err) ||
            !str_of(v, path, "disk", TW_JX_REQUIRED | TW_JX_NONEMPTY, disk, sizeof(disk), err) ||
            !str_of(v, path, "from_sku", TW_JX_REQUIRED | TW_JX_NONEMPTY, a.from_sku,
                    sizeof(a.from_sku), err) ||
            !str_of(v, path, "to_sku", TW_JX_REQUIRED | TW_JX_NONEMPTY, a.to_sku,
                    sizeof(a.to_sku), err) ||
            !str_of(v, path, "due_at", TW_JX_REQUIRED | TW_JX_NONEMPTY, a.due_at,
                    sizeof(a.due_at), err) ||
            !str_of(v, path, "due_local", 0, a.due_local, sizeof(a.due_local), err) ||
            !str_of(v, path, "idempotency_key", TW_JX_REQUIRED | TW_JX_NONEMPTY,
                    a.idempotency_key, sizeof(a.idempotency_key), err) ||
            !str_of(v, path, "reason", 0, a.reason, sizeof(a.reason), err) ||
            !str_of(v, path, "saving", 0, saving, sizeof(saving), err) ||
            !str_of(v, path, "currency", 0, cur, sizeof(cur), err) ||
            !str_of(v, path, "policy", 0, pol, sizeof(pol), err) ||
            !str_of(v, path, "resource_group", 0, rg, sizeof(rg), err) ||
            !str_of(v, path, "subscription_id", 0, sub, sizeof(sub), err) ||
            !tw_jx_int(json_object_get(v, "vm_id"), path, "vm_id", 0, INT64_MAX, 0, &vm_id,
                       err) ||
            !tw_jx_int(json_object_get(v, "disk_id"), path, "disk_id", 0, INT64_MAX, 0,
                       &disk_id, err)) {
            rc = TW_EPARSE;
            goto out;
        }
        if (strcmp(kind, "downgrade") == 0) {
            a.kind = TW_PLAN_DOWNGRADE;
        } else if (strcmp(kind, "upgrade") == 0) {
            a.kind = TW_PLAN_UPGRADE;
        } else {
            rc = tw_error_set(err, TW_EPARSE,
                              "%s.kind: \"%.15s\" is neither \"downgrade\" nor \"upgrade\"",
                              path, kind);
            goto out;
        }
        struct tw_error terr = {0};
        if (tw_rfc3339_parse(a.due_at, strlen(a.due_at), &a.due_ns, &terr) != TW_OK) {
            rc = tw_error_set(err, TW_EPARSE, "%s.due_at: %s", path, terr.msg);
            goto out;
        }
        /* The dates a plan takes, and due_at as UTC whatever offset it was
         * written with (the audit log and the keys compare it as text). */
        if (a.due_ns < 0 || a.due_ns >= TW_PLAN_END_NS) {
            rc = tw_error_set(err, TW_EPARSE,
                              "%s.due_at: \"%.40s\" is outside the years 1970..2199", path,
                              a.due_at);
            goto out;
        }
        int fd = a.due_ns % TW_NS_PER_S == 0 ? 0 : a.due_ns % TW_NS_PER_MS == 0 ? 3 : 9;
        if (!tw_rfc3339_format_ns(a.due_ns, 0, fd, a.due_at, sizeof(a.due_at))) {
            rc = tw_error_set(err, TW_EPARSE, "%s.due_at: can't be written in UTC", path);
            goto out;
        }
        if (pol[0] && strcmp(pol, policy) != 0) {
            rc = tw_error_set(err, TW_EPARSE,
                              "%s.policy: \"%s\" is not the plan's policy \"%s\"", path, pol,
                              policy);
            goto out;
        }
        if (cur[0] && currency[0] && strcmp(cur, currency) != 0) {
            rc = tw_error_set(err, TW_EPARSE,
                              "%s.currency: \"%s\" is not the plan's currency \"%s\"", path,
                              cur, currency);
            goto out;
        }
        a.saving = tw_amount_of(tw_money_micros(0));
        if (saving[0]) {
            struct tw_money m;
            struct tw_error merr = {0};
            if (tw_money_parse(saving, strlen(saving), &m, &merr) != TW_OK) {
                rc = tw_error_set(err, TW_EPARSE, "%s.saving: %s", path, merr.msg);
                goto out;
            }
            if (m.micros < 0) {
                rc = tw_error_set(err, TW_EPARSE,
                                  "%s.saving: \"%.40s\" is negative (a plan's saving is 0 or "
                                  "more: write the plan with tierwise plan --json)",
                                  path, saving);
                goto out;
            }
            a.saving = tw_amount_of(m);
        }
        a.vm = vm;
        a.disk = disk;
        a.resource_group = rg;
        a.subscription_id = sub;
        a.vm_id = vm_id;
        a.disk_id = disk_id;
        if (sink && sink->action && (rc = sink->action(sink->arg, &a)) != TW_OK) {
            if (!err->msg[0])
                tw_error_set(err, rc, "%s: taking the action failed (%s)", path,
                             tw_strerror(rc));
            goto out;
        }
    }
out:
    json_decref(root);
    return rc;
}

/* ---- recording ---- */

enum tw_err tw_svc_plan_record(struct tw_store *st, const char *policy,
                               const struct tw_plan_action *a, const char *currency,
                               bool dry_run, bool *added, int64_t *id, struct tw_error *err)
{
    *added = false;
    if (id)
        *id = 0;
    char saving[64] = "";
    bool has_saving = a->kind == TW_PLAN_DOWNGRADE && currency && currency[0];
    struct tw_error e = {0};
    if (has_saving && tw_amount_format(a->saving, currency, saving, sizeof(saving), &e) != TW_OK)
        return tw_error_set(err, e.code ? e.code : TW_EINVAL, "the saving of %s: %s",
                            a->idempotency_key, e.msg);
    struct tw_store_action_new n = {
        .disk_id = a->disk_id,
        .kind = tw_plan_kind_name(a->kind),
        .from_sku = a->from_sku,
        .to_sku = a->to_sku,
        .due_at = a->due_at,
        .idempotency_key = a->idempotency_key,
        .dry_run = dry_run,
        .vm_id = a->vm_id,
        .policy = policy,
        .reason = a->reason,
        .saving = has_saving ? saving : NULL,
        .currency = has_saving ? currency : NULL,
    };
    int64_t got = 0;
    struct tw_error aerr = {0};
    enum tw_err rc = tw_store_action_add(st, &n, &got, &aerr);
    if (rc == TW_OK) {
        *added = true;
        if (id)
            *id = got;
        return TW_OK;
    }
    /* A key recorded before is the same switch planned again: nothing new. */
    if (rc == TW_EINVAL && strstr(aerr.msg, "idempotency key"))
        return TW_OK;
    *err = aerr;
    return rc;
}
