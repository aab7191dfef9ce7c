/*
 * drift.c - a VM running on the wrong disk (drift.h): the candidates from
 * one savings walk at NOW, judged by the pure rules below against each
 * candidate's SKU history and its VM's power states, and the store's drift
 * rows brought up to date with a line logged when one starts or ends.
 */
#include "service/drift.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "core/observed.h"
#include "core/sku.h"
#include "core/time.h"

#define START_PAGE 256  /* power states read back at a time */

/* ---- the judgement ---- */

static int sku_rank(const char *name)
{
    struct tw_sku s;
    if (!tw_sku_parse(name, &s))
        return 0;
    switch (s.family) {
    case TW_SKU_STANDARD_HDD: return 1;
    case TW_SKU_STANDARD_SSD: return 2;
    case TW_SKU_PREMIUM_SSD: return 3;
    case TW_SKU_PREMIUM_V2: return 4;
    case TW_SKU_ULTRA: return 5;
    default: return 0;
    }
}

bool tw_drift_sku_below(const char *sku, const char *required)
{
    if (!sku || !required || !required[0] || strcasecmp(sku, required) == 0)
        return false;
    int have = sku_rank(sku), want = sku_rank(required);
    return have == 0 || want == 0 || have < want;
}

const struct tw_policy *tw_drift_policy_for(const struct tw_policy *const *policies, size_t n,
                                            const struct tw_store_sv_vm *vm,
                                            const struct tw_store_sv_disk *d)
{
    if (!d->original_sku[0])
        return NULL;
    /* The policy whose action recorded the original, when it is one of
     * these: the one vm start judges the disk by too. */
    for (size_t i = 0; d->original_policy[0] && i < n; i++)
        if (strcmp(policies[i]->name, d->original_policy) == 0)
            return policies[i]->require_original_before_start ? policies[i] : NULL;
    struct tw_policy_subject subj = {
        .vm_name = vm->name,
        .resource_group = vm->resource_group,
        .subscription_id = vm->subscription_id,
        .tags = vm->tags,
        .n_tags = vm->n_tags,
        .sku = d->original_sku,
        .role = d->role,
    };
    for (size_t i = 0; i < n; i++) {
        char why[256];
        if (policies[i]->require_original_before_start &&
            tw_policy_covers(policies[i], &subj, why, sizeof(why)) == TW_COVER_YES)
            return policies[i];
    }
    return NULL;
}

bool tw_drift_running(const char *state)
{
    enum tw_power p = tw_power_parse(state);
    return p == TW_POWER_RUNNING || p == TW_POWER_STARTING;
}

bool tw_drift_start_feed(struct tw_drift_start *s, const struct tw_store_sv_power *p, size_t n,
                         bool last_page)
{
    for (size_t i = 0; i < n && !s->found; i++) {
        bool run = tw_drift_running(p[i].state);
        if (!s->seen) {
            s->seen = true;
            s->running = run;
            if (!run) {
                s->found = true; /* not running: no start to find */
                return false;
            }
        }
        if (run)
            s->start_ms = p[i].at_ms;
        else
            s->found = true;
    }
    if (!s->found && last_page && s->seen)
        s->found = true; /* the VM's first observation was a running one */
    return !s->found && !last_page;
}

bool tw_drift_sku_since(const struct tw_store_sku_hist_row *rows, size_t n, char *sku,
                        int64_t *since_ms)
{
    if (n == 0)
        return false;
    const char *now = rows[n - 1].sku;
    size_t first = n - 1;
    while (first > 0 && strcasecmp(rows[first - 1].sku, now) == 0)
        first--;
    if (!tw_rfc3339_ms(rows[first].observed_at, since_ms))
        return false;
    snprintf(sku, 32, "%s", now);
    return true;
}

/* ---- the store's policies ---- */

struct pols {
    size_t n;
    const struct tw_policy *const *v;  /* what is judged by */
    struct tw_policy *own;             /* the store's, parsed */
    const struct tw_policy **ptrs;
    size_t n_own;
};

static void pols_cleanup(struct pols *p)
{
    for (size_t i = 0; i < p->n_own; i++)
        tw_policy_cleanup(&p->own[i]);
    free(p->own);
    free(p->ptrs);
    memset(p, 0, sizeof(*p));
}

static enum tw_err pols_load(struct tw_store *st, const struct tw_policy *const *given, size_t n,
                             struct pols *p, struct tw_error *err)
{
    memset(p, 0, sizeof(*p));
    if (n) {
        p->n = n;
        p->v = given;
        return TW_OK;
    }
    char **names;
    size_t nn;
    enum tw_err rc = tw_store_policy_names(st, &names, &nn, err);
    if (rc != TW_OK)
        return rc;
    if (nn) {
        p->own = calloc(nn, sizeof(*p->own));
        p->ptrs = calloc(nn, sizeof(*p->ptrs));
        if (!p->own || !p->ptrs)
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the stored policies");
    }
    for (size_t i = 0; rc == TW_OK && i < nn; i++) {
        char *body;
        rc = tw_store_policy_get(st, names[i], &body, err);
        if (rc != TW_OK)
            break;
        struct tw_error perr = {0};
        rc = tw_policy_parse(body, strlen(body), &p->own[i], NULL, &perr);
        free(body);
        p->n_own = i + 1;
        if (rc != TW_OK)
            rc = tw_error_set(err, rc, "the stored policy %s no longer reads: %s (store it "
                              "again with serve --policies, or name the policies with "
                              "--policy)", names[i], perr.msg);
        p->ptrs[i] = &p->own[i];
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (rc != TW_OK) {
        pols_cleanup(p);
        return rc;
    }
    p->n = nn;
    p->v = p->ptrs;
    return TW_OK;
}

/* ---- the run ---- */

/* A running VM's disk with an original SKU a policy requires. */
struct cand {
    int64_t vm_id, disk_id;
    char vm[128], disk[128];
    char walk_sku[32];
    char required[32];
    char policy[TW_POLICY_NAME_MAX];
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

/* The state in force at NOW_MS among the walk's (by time, the one in
 * force at its start first); NULL when none was observed by then. */
static const char *state_at(const struct tw_store_sv_vm *vm, int64_t now_ms)
{
    const char *s = NULL;
    for (size_t i = 0; i < vm->n_power && vm->power[i].at_ms <= now_ms; i++)
        s = vm->power[i].state;
    return s;
}

static enum tw_err gather(struct tw_store *st, const struct pols *p, int64_t now_ms,
                          struct cands *c, struct tw_error *err)
{
    struct tw_store_sv_cursor *cur;
    enum tw_err rc = tw_store_savings_open(st, now_ms, now_ms + 1, &cur, err);
    for (bool done = false; rc == TW_OK;) {
        struct tw_store_sv_vm vm;
        rc = tw_store_savings_next(cur, &vm, &done, err);
        if (rc != TW_OK || done)
            break;
        const char *state = state_at(&vm, now_ms);
        if (!state || !tw_drift_running(state))
            continue;
        for (size_t i = 0; i < vm.n_disks; i++) {
            const struct tw_store_sv_disk *d = &vm.disks[i];
            const struct tw_policy *pol = tw_drift_policy_for(p->v, p->n, &vm, d);
            if (!pol)
                continue;
            if (c->n == c->cap) {
                size_t ncap = c->cap ? c->cap * 2 : 16;
                struct cand *nv = realloc(c->v, ncap * sizeof(*nv));
                if (!nv) {
                    rc = tw_error_set(err, TW_ENOMEM, "out of memory judging drift");
                    break;
                }
                c->v = nv;
                c->cap = ncap;
            }
            struct cand *k = &c->v[c->n++];
            memset(k, 0, sizeof(*k));
            k->vm_id = vm.id;
            k->disk_id = d->id;
            snprintf(k->vm, sizeof(k->vm), "%s", vm.name);
            snprintf(k->disk, sizeof(k->disk), "%s", d->name);
            snprintf(k->walk_sku, sizeof(k->walk_sku), "%s", d->sku);
            snprintf(k->required, sizeof(k->required), "%s", d->original_sku);
            snprintf(k->policy, sizeof(k->policy), "%s", pol->name);
        }
    }
    tw_store_savings_close(cur);
    return rc;
}

/* When VM VM_ID last started, as of NOW_MS; *KNOWN false when its newest
 * state then is not a running one. */
static enum tw_err vm_start(struct tw_store *st, int64_t vm_id, int64_t now_ms, int64_t *start_ms,
                            bool *known, struct tw_error *err)
{
    struct tw_drift_start s = {0};
    int64_t before = now_ms;
    for (;;) {
        struct tw_store_sv_power *p;
        size_t n;
        enum tw_err rc = tw_store_vm_power_before(st, vm_id, before, START_PAGE, &p, &n, err);
        if (rc != TW_OK)
            return rc;
        bool more = tw_drift_start_feed(&s, p, n, n < START_PAGE);
        if (n)
            before = p[n - 1].at_ms - 1;
        free(p);
        if (!more)
            break;
    }
    *known = s.seen && s.running;
    *start_ms = s.start_ms;
    return TW_OK;
}

/* Judges candidate K at NOW_MS: *D filled and *DRIFTS true when it drifts. */
static enum tw_err judge(struct tw_store *st, const struct cand *k, int64_t now_ms,
                         int64_t start_ms, struct tw_drift *d, bool *drifts,
                         struct tw_error *err)
{
    *drifts = false;
    struct tw_store_sku_hist_row *h;
    size_t nh;
    enum tw_err rc = tw_store_disk_history(st, k->disk_id, &h, &nh, err);
    if (rc != TW_OK)
        return rc;
    /* What was seen by NOW (oldest first: a prefix). */
    size_t upto = 0;
    for (; upto < nh; upto++) {
        int64_t ms;
        if (!tw_rfc3339_ms(h[upto].observed_at, &ms) || ms > now_ms)
            break;
    }
    char sku[32];
    int64_t sku_ms = 0;
    if (!tw_drift_sku_since(h, upto, sku, &sku_ms)) {
        snprintf(sku, sizeof(sku), "%s", k->walk_sku); /* no history by then: the disk's row */
        sku_ms = start_ms;
    }
    free(h);
    if (!tw_drift_sku_below(sku, k->required))
        return TW_OK;
    memset(d, 0, sizeof(*d));
    d->vm_id = k->vm_id;
    d->disk_id = k->disk_id;
    snprintf(d->vm, sizeof(d->vm), "%s", k->vm);
    snprintf(d->disk, sizeof(d->disk), "%s", k->disk);
    snprintf(d->sku, sizeof(d->sku), "%s", sku);
    snprintf(d->required_sku, sizeof(d->required_sku), "%s", k->required);
    snprintf(d->policy, sizeof(d->policy), "%s", k->policy);
    int64_t since = start_ms > sku_ms ? start_ms : sku_ms;
    int64_t s = tw_floor_div(since, 1000);
    d->since_ms = s * 1000;
    if (!tw_rfc3339_format(s, d->since, sizeof(d->since)))
        return tw_error_set(err, TW_ERANGE, "disk %s of VM %s drifts since an instant that can't "
                            "be written (%lld ms)", k->disk, k->vm, (long long)since);
    *drifts = true;
    return TW_OK;
}

static enum tw_err run(struct tw_store *st, const struct tw_policy *const *policies, size_t n,
                       int64_t now_ms, const struct tw_drift_sink *sink, size_t *n_out,
                       struct tw_error *err)
{
    if (n_out)
        *n_out = 0;
    tw_error_clear(err);
    if (!st || (n && !policies) || !sink || !sink->drift)
        return tw_error_set(err, TW_EINVAL, "drift is judged over a store, by policies, into "
                                            "a sink");
    struct pols p;
    enum tw_err rc = pols_load(st, policies, n, &p, err);
    if (rc != TW_OK)
        return rc;
    struct cands c = {0};
    rc = gather(st, &p, now_ms, &c, err);
    int64_t vm_seen = 0, start_ms = 0;
    bool known = false;
    size_t found = 0;
    for (size_t i = 0; rc == TW_OK && i < c.n; i++) {
        const struct cand *k = &c.v[i];
        if (k->vm_id != vm_seen) {
            if ((rc = vm_start(st, k->vm_id, now_ms, &start_ms, &known, err)) != TW_OK)
                break;
            vm_seen = k->vm_id;
        }
        if (!known)
            continue; /* its newest state changed since the walk read it */
        struct tw_drift d;
        bool drifts;
        rc = judge(st, k, now_ms, start_ms, &d, &drifts, err);
        if (rc == TW_OK && drifts) {
            found++;
            rc = sink->drift(sink->arg, &d);
        }
    }
    free(c.v);
    pols_cleanup(&p);
    if (rc == TW_OK && n_out)
        *n_out = found;
    return rc;
}

enum tw_err tw_svc_drift_list(struct tw_store *st, const struct tw_policy *const *policies,
                              size_t n, int64_t now_ms, const struct tw_drift_sink *sink,
                              size_t *n_out, struct tw_error *err)
{
    return run(st, policies, n, now_ms, sink, n_out, err);
}

/* ---- the store's rows ---- */

struct now_set {
    struct tw_drift *v;
    size_t n, cap;
};

static enum tw_err keep(void *arg, const struct tw_drift *d)
{
    struct now_set *s = arg;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 16;
        struct tw_drift *nv = realloc(s->v, ncap * sizeof(*nv));
        if (!nv)
            return TW_ENOMEM;
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = *d;
    return TW_OK;
}

static void say(tw_drift_log_fn log, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(tw_drift_log_fn log, void *arg, const char *fmt, ...)
{
    if (!log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    log(arg, line);
}

enum tw_err tw_svc_drift_update(struct tw_store *st, const struct tw_policy *const *policies,
                                size_t n, int64_t now_ms, tw_drift_log_fn log, void *log_arg,
                                struct tw_drift_update *out, struct tw_error *err)
{
    if (out)
        memset(out, 0, sizeof(*out));
    struct now_set cur = {0};
    struct tw_drift_sink sink = {keep, &cur};
    enum tw_err rc = run(st, policies, n, now_ms, &sink, NULL, err);
    if (rc == TW_ENOMEM && err && !err->code)
        tw_error_set(err, rc, "out of memory judging drift");
    struct tw_drift_update u = {0};
    struct tw_store_drift_row *rows = NULL, *ended = NULL;
    bool *started = NULL;
    size_t n_ended = 0;
    char at[40] = "";
    if (rc == TW_OK && !tw_rfc3339_format(tw_floor_div(now_ms, 1000), at, sizeof(at)))
        rc = tw_error_set(err, TW_ERANGE, "the time %lld ms can't be written", (long long)now_ms);
    if (rc == TW_OK && cur.n &&
        (!(rows = calloc(cur.n, sizeof(*rows))) || !(started = calloc(cur.n, sizeof(*started)))))
        rc = tw_error_set(err, TW_ENOMEM, "out of memory recording drift");
    for (size_t i = 0; rc == TW_OK && i < cur.n; i++) {
        const struct tw_drift *d = &cur.v[i];
        struct tw_store_drift_row *r = &rows[i];
        r->disk_id = d->disk_id;
        r->vm_id = d->vm_id;
        snprintf(r->vm, sizeof(r->vm), "%s", d->vm);
        snprintf(r->disk, sizeof(r->disk), "%s", d->disk);
        snprintf(r->sku, sizeof(r->sku), "%s", d->sku);
        snprintf(r->required_sku, sizeof(r->required_sku), "%s", d->required_sku);
        snprintf(r->policy, sizeof(r->policy), "%s", d->policy);
        snprintf(r->since, sizeof(r->since), "%s", d->since);
    }
    /* One transaction for the whole update; the lines once it holds. */
    if (rc == TW_OK)
        rc = tw_store_drift_sync(st, rows, cur.n, at, started, &ended, &n_ended, err);
    for (size_t i = 0; rc == TW_OK && i < cur.n; i++) {
        const struct tw_drift *d = &cur.v[i];
        u.open++;
        if (started[i]) {
            u.started++;
            say(log, log_arg, "drift started: VM %s disk %s runs on %s, its policy %s requires "
                "%s (since %s)", d->vm, d->disk, d->sku, d->policy, d->required_sku, d->since);
        }
    }
    for (size_t i = 0; rc == TW_OK && i < n_ended; i++) {
        u.ended++;
        /* why it ended: the VM's newest power state says whether it still runs */
        struct tw_store_sv_power *p = NULL;
        size_t np = 0;
        struct tw_error pe = {0};
        char state[40] = "";
        if (ended[i].vm_id && tw_store_vm_power_before(st, ended[i].vm_id, now_ms, 1, &p, &np,
                                                       &pe) == TW_OK && np)
            snprintf(state, sizeof(state), "%s", p[0].state);
        free(p);
        if (state[0] && !tw_drift_running(state))
            say(log, log_arg, "drift ended: VM %s is no longer running (it is %s), so disk %s "
                "need not be on %s (drift since %s, ended %s)", ended[i].vm, state,
                ended[i].disk, ended[i].required_sku, ended[i].since, at);
        else
            say(log, log_arg, "drift ended: VM %s disk %s is back on the required SKU %s "
                "(drift since %s, ended %s)", ended[i].vm, ended[i].disk, ended[i].required_sku,
                ended[i].since, at);
    }
    free(ended);
    free(started);
    free(rows);
    free(cur.v);
    if (rc == TW_OK && out)
        *out = u;
    return rc;
}

/* ---- JSON ---- */

json_t *tw_drift_to_json(const struct tw_drift *d)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (json_object_set_new(o, "vm", json_string(d->vm)) ||
        json_object_set_new(o, "disk", json_string(d->disk)) ||
        json_object_set_new(o, "sku", json_string(d->sku)) ||
        json_object_set_new(o, "required_sku", json_string(d->required_sku)) ||
        json_object_set_new(o, "since", json_string(d->since)) ||
        json_object_set_new(o, "policy", json_string(d->policy)) ||
        json_object_set_new(o, "vm_id", json_integer(d->vm_id)) ||
        json_object_set_new(o, "disk_id", json_integer(d->disk_id))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static enum tw_err to_array(void *arg, const struct tw_drift *d)
{
    json_t *o = tw_drift_to_json(d);
    return o && json_array_append_new(arg, o) == 0 ? TW_OK : TW_ENOMEM;
}

enum tw_err tw_svc_drift_json(struct tw_store *st, const struct tw_policy *const *policies,
                              size_t n, int64_t now_ms, size_t flags, char **out,
                              size_t *count, struct tw_error *err)
{
    *out = NULL;
    if (count)
        *count = 0;
    json_t *arr = json_array();
    if (!arr)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    struct tw_drift_sink sink = {to_array, arr};
    size_t k = 0;
    enum tw_err rc = run(st, policies, n, now_ms, &sink, &k, err);
    if (rc == TW_ENOMEM && err && !err->code)
        tw_error_set(err, rc, "out of memory writing the drift");
    if (rc != TW_OK) {
        json_decref(arr);
        return rc;
    }
    json_t *doc = json_object();
    if (!doc) {
        json_decref(arr);
        return tw_error_set(err, TW_ENOMEM, "out of memory writing the drift");
    }
    if (json_object_set_new(doc, "drift", arr) ||
        json_object_set_new(doc, "count", json_integer((json_int_t)k)) ||
        !(*out = json_dumps(doc, flags))) {
        json_decref(doc);
        return tw_error_set(err, TW_ENOMEM, "out of memory writing the drift");
    }
    json_decref(doc);
    if (count)
        *count = k;
    return TW_OK;
}
