/*
 * exec_tick.c - one tick of the scheduler (exec.h): plan what is due now,
 * record it, run the due actions.
 */
#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/time.h"
#include "service/exec.h"

#define NS_PER_MS 1000000LL
#define DAY_NS (86400LL * 1000000000LL)

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

enum tw_err tw_exec_row_from_plan(struct tw_store *st, const char *policy,
                                  const struct tw_plan_action *a, struct tw_store_action_row *row,
                                  struct tw_error *err)
{
    memset(row, 0, sizeof *row);
    row->vm_id = a->vm_id;
    row->disk_id = a->disk_id;
    snprintf(row->vm, sizeof row->vm, "%s", a->vm ? a->vm : "");
    snprintf(row->disk, sizeof row->disk, "%s", a->disk ? a->disk : "");
    snprintf(row->kind, sizeof row->kind, "%s", tw_plan_kind_name(a->kind));
    snprintf(row->from_sku, sizeof row->from_sku, "%s", a->from_sku);
    snprintf(row->to_sku, sizeof row->to_sku, "%s", a->to_sku);
    snprintf(row->due_at, sizeof row->due_at, "%s", a->due_at);
    row->due_ms = a->due_ns / NS_PER_MS;
    snprintf(row->state, sizeof row->state, "planned");
    snprintf(row->policy, sizeof row->policy, "%s", policy ? policy : "");
    snprintf(row->reason, sizeof row->reason, "%s", a->reason);
    row->dry_run = true;
    if (a->disk_id) {
        struct tw_store_disk_row d;
        enum tw_err rc = tw_store_disk(st, a->disk_id, &d, err);
        if (rc != TW_OK)
            return rc;
        snprintf(row->disk_resource_id, sizeof row->disk_resource_id, "%s",
                 d.disk.managed_disk_id);
        if (!row->vm_id)
            row->vm_id = d.vm_id;
    }
    if (row->vm_id) {
        struct tw_store_vm_row v;
        memset(&v, 0, sizeof v);
        enum tw_err rc = tw_store_vm(st, row->vm_id, &v, err);
        if (rc != TW_OK)
            return rc;
        snprintf(row->vm_resource_id, sizeof row->vm_resource_id, "%s", v.resource_id);
        if (!row->vm[0])
            snprintf(row->vm, sizeof row->vm, "%s", v.name);
        free(v.tags);
    }
    return TW_OK;
}

struct kept;

/* What the plan's sink collects. */
struct collect {
    struct tw_store *st;
    const struct tw_exec_tick *t;
    const char *policy;
    const char *currency;
    int64_t due_by_ns;
    int64_t due_from_ns;              /* a saved plan's actions due before: expired */
    int64_t planned, recorded, expired;
    struct tw_store_action_row *rows; /* dry run: the due actions as rows */
    size_t n, cap;
    int64_t *ids;                     /* executing: the ids recorded or found */
    size_t n_ids, cap_ids;
    struct kept *kept;                /* what the plan handed, due by then */
    size_t n_kept, cap_kept;
    bool saved;                       /* a saved plan: names to resolve */
    struct tw_error err;              /* the sink's own failure */
};

/* A saved plan names its VM and disk: their ids from the store, by those
 * names (a plan's own ids may be another database's; they are used only
 * when it gives no names). */
static enum tw_err resolve(struct tw_store *st, struct tw_plan_action *a, struct tw_error *err)
{
    if (a->vm && a->vm[0])
        a->vm_id = 0;
    if (a->disk && a->disk[0])
        a->disk_id = 0;
    if (!a->vm_id) {
        if (!a->vm || !a->vm[0])
            return tw_error_set(err, TW_EINVAL, "an action of the plan names no VM");
        enum tw_err rc = tw_store_vm_by_name(st, a->vm, &a->vm_id, err);
        if (rc != TW_OK)
            return rc;
    }
    if (!a->disk_id && a->disk && a->disk[0]) {
        struct tw_store_disk_row *d = NULL;
        size_t n = 0;
        enum tw_err rc = tw_store_vm_disks(st, a->vm_id, &d, &n, err);
        if (rc != TW_OK)
            return rc;
        for (size_t i = 0; i < n; i++)
            if (!strcasecmp(d[i].disk.name, a->disk)) {
                a->disk_id = d[i].id;
                break;
            }
        free(d);
        if (!a->disk_id)
            return tw_error_set(err, TW_ENOENT, "the plan's disk %s is not attached to VM %s in "
                                "the store; run `tierwise sync` first", a->disk, a->vm);
    }
    return TW_OK;
}

/* One action handed by the plan, kept with its names: the plan's run holds
 * the store in a read transaction, so nothing is written or looked up
 * until it has ended. */
struct kept {
    struct tw_plan_action a;
    char vm[128], disk[128], rg[128], sub[64];
};

static enum tw_err on_action(void *arg, const struct tw_plan_action *given)
{
    struct collect *c = arg;
    if (given->due_ns > c->due_by_ns)
        return TW_OK;
    /* a saved plan's action more than a day past its due: expired, not
     * run (the policy's path plans from now - 1 day too) */
    if (c->saved && given->due_ns < c->due_from_ns) {
        c->expired++;
        return TW_OK;
    }
    if (c->n_kept == c->cap_kept) {
        size_t nc = c->cap_kept ? c->cap_kept * 2 : 16;
        void *p = realloc(c->kept, nc * sizeof *c->kept);
        if (!p)
            return tw_error_set(&c->err, TW_ENOMEM, "out of memory keeping the due actions");
        c->kept = p;
        c->cap_kept = nc;
    }
    struct kept *k = &c->kept[c->n_kept++];
    k->a = *given;
    snprintf(k->vm, sizeof k->vm, "%s", given->vm ? given->vm : "");
    snprintf(k->disk, sizeof k->disk, "%s", given->disk ? given->disk : "");
    snprintf(k->rg, sizeof k->rg, "%s", given->resource_group ? given->resource_group : "");
    snprintf(k->sub, sizeof k->sub, "%s", given->subscription_id ? given->subscription_id : "");
    return TW_OK;
}

/* The kept actions, after the plan's run: resolved (a saved plan), then
 * recorded (executing) or made rows (dry run). */
static enum tw_err take(struct collect *c)
{
    struct tw_error *e = &c->err;
    for (size_t i = 0; i < c->n_kept; i++) {
        struct kept *k = &c->kept[i];
        struct tw_plan_action a = k->a;
        a.vm = k->vm;
        a.disk = k->disk;
        a.resource_group = k->rg;
        a.subscription_id = k->sub;
        if (c->saved) {
            enum tw_err rc = resolve(c->st, &a, e);
            if (rc != TW_OK)
                return rc;
        }
        c->planned++;
        if (c->t->exec->dry_run) {
            if (c->n == c->cap) {
                size_t nc = c->cap ? c->cap * 2 : 16;
                void *p = realloc(c->rows, nc * sizeof *c->rows);
                if (!p)
                    return tw_error_set(e, TW_ENOMEM, "out of memory keeping the due actions");
                c->rows = p;
                c->cap = nc;
            }
            enum tw_err rc = tw_exec_row_from_plan(c->st, c->policy, &a, &c->rows[c->n], e);
            if (rc != TW_OK)
                return rc;
            c->n++;
            continue;
        }
        bool added = false;
        int64_t id = 0;
        enum tw_err rc =
            tw_svc_plan_record(c->st, c->policy, &a, c->currency, false, &added, &id, e);
        if (rc != TW_OK)
            return rc;
        if (added)
            c->recorded++;
        if (c->n_ids == c->cap_ids) {
            size_t nc = c->cap_ids ? c->cap_ids * 2 : 16;
            void *p = realloc(c->ids, nc * sizeof *c->ids);
            if (!p)
                return tw_error_set(e, TW_ENOMEM, "out of memory keeping the due actions");
            c->ids = p;
            c->cap_ids = nc;
        }
        c->ids[c->n_ids++] = id;
    }
    return TW_OK;
}

/* The saved plan's policy name (its "policy" member). */
static void plan_policy(const char *buf, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    json_t *root = json_loadb(buf, len, 0, NULL);
    const char *p = json_string_value(json_object_get(root, "policy"));
    if (p)
        snprintf(out, cap, "%s", p);
    json_decref(root);
}

static bool has_id(const int64_t *ids, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

enum tw_err tw_exec_tick_run(const struct tw_exec_tick *t, struct tw_exec_tick_summary *out,
                             struct tw_error *err)
{
    if (!t || !t->exec || !t->exec->db_path)
        return tw_error_set(err, TW_EINVAL, "a tick needs the executor's options and a database");
    if (!t->plan_json && !t->plan.policy)
        return tw_error_set(err, TW_EINVAL, "a tick needs a policy or a saved plan");
    struct tw_exec_tick_summary sum;
    memset(&sum, 0, sizeof sum);
    struct tw_store *st = NULL;
    enum tw_err rc = tw_store_open(t->exec->db_path, &st, err);
    if (rc != TW_OK)
        return rc;
    int64_t now = now_ns();
    int64_t tick_ms = t->exec->tick_ms > 0 ? t->exec->tick_ms : 60000;
    struct collect c;
    memset(&c, 0, sizeof c);
    c.st = st;
    c.t = t;
    c.due_by_ns = now + tick_ms * NS_PER_MS;
    c.due_from_ns = now - DAY_NS;
    char currency[4] = "";
    if (t->plan_json) {
        plan_policy(t->plan_json, t->plan_len, sum.policy, sizeof sum.policy);
        c.saved = true;
    } else {
        snprintf(sum.policy, sizeof sum.policy, "%s", t->plan.policy->name);
    }
    c.policy = sum.policy;
    struct tw_plan_sink sink = {on_action, &c};
    if (t->plan_json) {
        rc = tw_svc_plan_parse(t->plan_json, t->plan_len, &sink, err);
    } else {
        struct tw_error cerr = {0};
        if (tw_opp_currency(st, t->plan.currency, currency, &cerr) == TW_OK)
            c.currency = currency;
        struct tw_plan_opts po = t->plan;
        po.from_ns = now - DAY_NS;
        po.to_ns = now + DAY_NS;
        struct tw_plan_summary ps;
        memset(&ps, 0, sizeof ps);
        rc = tw_svc_plan_run(st, &po, &sink, &ps, err);
    }
    if (rc == TW_OK)
        rc = take(&c);
    sum.planned = c.planned;
    sum.recorded = c.recorded;
    sum.expired = c.expired;
    if (rc != TW_OK && c.err.code != TW_OK && err)
        *err = c.err;
    if (rc != TW_OK)
        goto out;
    if (t->exec->dry_run) {
        rc = tw_exec_run(t->exec, c.rows, c.n, &sum.run, err);
        goto out;
    }
    /* the due actions of this policy (or plan), and every one of them in
     * flight, by the store's due order */
    int64_t *ids = NULL;
    size_t n = 0;
    rc = tw_store_actions_due(st, now / NS_PER_MS, false, 0, &ids, &n, err);
    if (rc != TW_OK)
        goto out;
    struct tw_store_action_row *rows = calloc(n ? n : 1, sizeof *rows);
    size_t got = 0;
    if (!rows)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading %zu actions", n);
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        rc = tw_store_action_get(st, ids[i], &rows[got], err);
        if (rc != TW_OK)
            break;
        /* this policy's (or plan's), and any left in flight by a crash
         * (a vm stop's or another policy's: the claim keeps it single) */
        bool in_flight = !strcmp(rows[got].state, "sent") || !strcmp(rows[got].state, "verified");
        bool mine = in_flight || (c.saved ? has_id(c.ids, c.n_ids, rows[got].id)
                                          : !strcmp(rows[got].policy, sum.policy));
        if (mine)
            got++;
        else
            free(rows[got].operation_url), memset(&rows[got], 0, sizeof rows[got]);
    }
    free(ids);
    tw_store_close(st);
    st = NULL;
    if (rc == TW_OK)
        rc = tw_exec_run(t->exec, rows, got, &sum.run, err);
    tw_store_action_rows_free(rows, got);
out:
    tw_store_action_rows_free(c.rows, c.n);
    free(c.kept);
    free(c.ids);
    tw_store_close(st);
    if (out)
        *out = sum;
    return rc;
}
