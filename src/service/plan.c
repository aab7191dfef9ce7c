/*
 * plan.c - the planner (plan.h): the opportunities' run over the period
 * (service/opportunities.c, with each covered disk's windows as planned),
 * turned into the switches due in it.  A taken window gives a downgrade at
 * its down_ns and an upgrade at its up_ns, each emitted when its due time
 * lies in [from, to); skipped windows (margins, min_saving, quota) give
 * nothing and are counted.  The arithmetic and the choice of windows are
 * the opportunities' (so `tierwise savings` and the plan never disagree on
 * which windows are taken); this file names, times and keys the actions.
 */
#include "service/plan.h"

#include "core/time.h"
#include "core/tz.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/window.h"
_Static_assert(TW_PLAN_MAX_DAYS + 29 <= TW_WINDOW_PERIOD_MAX_DAYS,
               "a plan's longest period fits the windows' instants with the walk's weeks");

const char *tw_plan_kind_name(enum tw_plan_kind k)
{
    return k == TW_PLAN_UPGRADE ? "upgrade" : "downgrade";
}

struct zslot {
    char name[TW_TZ_NAME_MAX];
    struct tw_tz *z;             /* NULL: does not load (UTC used, said in the reason) */
};

/* Formatted instants: disks alike switch at the same instants, and the
 * texts cost more than the plan. */
#define TCACHE_SLOTS 16384 /* a power of two */
struct tslot {
    bool used;
    int64_t ns;
    char at[40], local[48];
};

/* Reasons: a window's text, the same for every disk of a schedule. */
#define RCACHE_SLOTS 8192 /* a power of two */
#define NAMES_MAX 64      /* zones and sources a reason is kept for */
struct rslot {
    bool used;
    int64_t open_ns, close_ns;
    int tz, source;              /* in the run's NAMES */
    char text[256];
};

/* The downgrades' savings by value, summed once each at the end: a
 * fleet's windows save a few distinct amounts many times, and the exact
 * sum of fractions costs a gcd an add. */
#define BAG_SLOTS 4096 /* a power of two */
struct bag_slot {
    bool used;
    tw_i128 num;
    int64_t den;
    int64_t count;
};

/* The texts of shared windows (tw_opp_disk.windows_key: the same instants
 * whatever the disk's prices): per window its switches' times and its
 * reason, made at the second disk that has them, read by every disk alike
 * after; at most FMT_BUDGET bytes in all (past it, the texts are made per
 * action). */
#define FMT_SLOTS 8192 /* a power of two */
#define FMT_BUDGET ((size_t)160 << 20)
struct wtxt {
    char down_at[24], down_local[32], up_at[24], up_local[32];
    char down_key[40], up_key[40]; /* the keys' ends: "/downgrade/<due ms>" */
    uint32_t reason;             /* offset in the entry's arena */
};
struct fmt_entry {
    const void *wins;            /* the windows' key; NULL: empty slot */
    size_t n;
    struct wtxt *t;              /* NULL: seen once (made at the second disk: windows
                                  * no other disk shares are not worth it) */
    char *arena;
};

struct prun {
    const struct tw_plan_opts *o;
    const struct tw_plan_sink *sink;
    struct tw_plan_summary *sum;
    struct tw_opp_result *res;
    struct tw_tz *pz;            /* the policy's zone (owned by ZONES) */
    struct zslot *zones;
    size_t n_zones;
    struct tslot *tc;
    struct rslot *rc;
    struct bag_slot *bag;
    size_t n_bag;
    struct fmt_entry *fmt;       /* FMT_SLOTS */
    size_t fmt_bytes, n_fmt;
    char *names[NAMES_MAX];      /* the windows' zones and sources seen */
    size_t n_names;
    char key_prefix[TW_POLICY_NAME_MAX + 2]; /* "policy/" */
    size_t key_prefix_len;
    char key_head[TW_POLICY_NAME_MAX + 24];  /* "policy/<disk id>", the disk's */
    size_t key_head_len;
    struct tw_error err;         /* what a sink's error was (the opportunities' sink has
                                  * no error of its own) */
};

static struct tw_tz *zone_of(struct prun *r, const char *name, struct tw_error *err,
                             enum tw_err *rc)
{
    *rc = TW_OK;
    for (size_t i = 0; i < r->n_zones; i++)
        if (strcmp(r->zones[i].name, name) == 0)
            return r->zones[i].z;
    struct zslot *nv = realloc(r->zones, (r->n_zones + 1) * sizeof(*nv));
    if (!nv) {
        *rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        return NULL;
    }
    r->zones = nv;
    struct zslot *s = &r->zones[r->n_zones++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    struct tw_error zerr = {0};
    if (r->o->zone && r->o->zone(r->o->zone_arg, name, &s->z, &zerr) != TW_OK) {
        s->z = NULL;
        if (zerr.code == TW_ENOMEM)
            *rc = tw_error_set(err, TW_ENOMEM, "%s", zerr.msg);
    }
    return s->z;
}

/* NS as RFC 3339 UTC and in the policy's zone with its offset. */
static enum tw_err times_of(struct prun *r, int64_t ns, const char **at, const char **local,
                            struct tw_error *err)
{
    uint64_t h = (uint64_t)(ns / TW_NS_PER_S) * 0x9e3779b97f4a7c15u;
    size_t j = (size_t)(h >> 50) & (TCACHE_SLOTS - 1);
    struct tslot *t = &r->tc[j];
    if (!t->used || t->ns != ns) {
        struct tw_tz_info info = {0};
        struct tw_civil c;
        tw_tz_ns_to_civil(r->pz, ns, &c, &info);
        if (!tw_rfc3339_format_ns(ns, 0, 0, t->at, sizeof(t->at)) ||
            !tw_rfc3339_format_ns(ns, info.utoff_s, 0, t->local, sizeof(t->local))) {
            t->used = false;
            return tw_error_set(err, TW_ERANGE, "a switch falls outside the years 0000..9999");
        }
        /* A local time says its offset, +00:00 too ("Z" is the UTC one's). */
        size_t l = strlen(t->local);
        if (info.utoff_s == 0 && l && t->local[l - 1] == 'Z' && l + 6 <= sizeof(t->local))
            memcpy(t->local + l - 1, "+00:00", 7);
        t->used = true;
        t->ns = ns;
    }
    *at = t->at;
    *local = t->local;
    return TW_OK;
}

static const char *const wdays[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

/* "Fri 20:00" of instant NS in zone Z. */
static void wday_time(const struct tw_tz *z, int64_t ns, char *buf, size_t cap)
{
    struct tw_civil c;
    tw_tz_ns_to_civil(z, ns, &c, NULL);
    int wd = tw_weekday_from_days(tw_days_from_civil(c.year, c.month, c.day));
    snprintf(buf, cap, "%s %02d:%02d", wdays[wd % 7], c.hour % 100, c.minute % 100);
}

/* V's decimal digits at P (room for 20); returns the end. */
static char *put_i64(char *p, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* The idempotency key "policy/disk id/kind/due ms" (the policy's name is
 * 1..64 of [A-Za-z0-9._-]: no separator in it). */
static void key_end(enum tw_plan_kind kind, int64_t due_ns, char *p)
{
    *p++ = '/';
    const char *k = tw_plan_kind_name(kind);
    size_t kl = strlen(k);
    memcpy(p, k, kl);
    p += kl;
    *p++ = '/';
    p = put_i64(p, tw_floor_div(due_ns, TW_NS_PER_MS));
    *p = '\0';
}

/* END: the key's end made already (key_end), NULL: made here. */
static void key_of(const struct prun *r, const struct tw_plan_action *a, const char *end,
                   char *out)
{
    char *p = out;
    if (end) {
        memcpy(p, r->key_head, r->key_head_len);
        memcpy(p + r->key_head_len, end, strlen(end) + 1);
        return;
    }
    memcpy(p, r->key_prefix, r->key_prefix_len);
    p += r->key_prefix_len;
    p = put_i64(p, a->disk_id);
    *p++ = '/';
    const char *k = tw_plan_kind_name(a->kind);
    size_t kl = strlen(k);
    memcpy(p, k, kl);
    p += kl;
    *p++ = '/';
    p = put_i64(p, tw_floor_div(a->due_ns, TW_NS_PER_MS));
    *p = '\0';
}

/* Adds COUNT times A to the summary's saving. */
static enum tw_err sum_add(struct prun *r, struct tw_amount a, int64_t count, struct tw_error *err)
{
    struct tw_amount t;
    enum tw_err rc = count == 1 ? (t = a, TW_OK) : tw_amount_scale(a, count, 1, &t, err);
    return rc == TW_OK ? tw_amount_add(r->sum->saving, t, &r->sum->saving, err) : rc;
}

/* A saving into the bag (summed at once when the bag is full). */
static enum tw_err bag_add(struct prun *r, struct tw_amount a, struct tw_error *err)
{
    uint64_t h = ((uint64_t)a.num ^ (uint64_t)(a.num >> 64) ^ (uint64_t)a.den * 0x9e3779b97f4a7c15u) *
                 0xff51afd7ed558ccdu;
    for (size_t k = 0, j = (size_t)(h >> 40) & (BAG_SLOTS - 1); k < BAG_SLOTS;
         k++, j = (j + 1) & (BAG_SLOTS - 1)) {
        struct bag_slot *b = &r->bag[j];
        if (!b->used) {
            if (r->n_bag * 2 >= BAG_SLOTS)
                break;
            *b = (struct bag_slot){true, a.num, a.den, 1};
            r->n_bag++;
            return TW_OK;
        }
        if (b->num == a.num && b->den == a.den) {
            b->count++;
            return TW_OK;
        }
    }
    return sum_add(r, a, 1, err);
}

static enum tw_err bag_flush(struct prun *r, struct tw_error *err)
{
    enum tw_err rc = TW_OK;
    for (size_t j = 0; rc == TW_OK && r->bag && j < BAG_SLOTS; j++)
        if (r->bag[j].used)
            rc = sum_add(r, (struct tw_amount){r->bag[j].num, r->bag[j].den}, r->bag[j].count,
                         err);
    return rc;
}

static void sku_copy(char dst[32], const char *src)
{
    size_t n = strlen(src);
    if (n > 31)
        n = 31;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* TEXT's index in the run's names (added when new); -1 when the table is
 * full or out of memory (the reason is then not kept). */
static int name_id(struct prun *r, const char *text)
{
    for (size_t i = 0; i < r->n_names; i++)
        if (strcmp(r->names[i], text) == 0)
            return (int)i;
    if (r->n_names == NAMES_MAX || !(r->names[r->n_names] = strdup(text)))
        return -1;
    return (int)r->n_names++;
}

/* The reason of a window of disk D: "window Fri 20:00-Mon 06:00
 * (Europe/London, list) of POLICY", in the windows' zone WZ. */
static void reason_of(struct prun *r, const struct tw_opp_disk *d, const struct tw_tz *wz,
                      int64_t open_ns, int64_t close_ns, char *out, size_t cap)
{
    uint64_t h = (uint64_t)open_ns * 0x9e3779b97f4a7c15u ^ (uint64_t)close_ns;
    h ^= h >> 29;
    struct rslot *s = &r->rc[(h >> 40) & (RCACHE_SLOTS - 1)];
    int tz = name_id(r, d->windows_tz), src = name_id(r, d->windows_source);
    if (s->used && s->open_ns == open_ns && s->close_ns == close_ns && s->tz == tz &&
        s->source == src) {
        memcpy(out, s->text, cap < sizeof(s->text) ? cap : sizeof(s->text));
        out[cap - 1] = '\0';
        return;
    }
    char o1[16], o2[16];
    wday_time(wz ? wz : r->pz, open_ns, o1, sizeof(o1));
    wday_time(wz ? wz : r->pz, close_ns, o2, sizeof(o2));
    snprintf(s->text, sizeof(s->text), "window %s-%s (%.60s%s, %.40s) of %s", o1, o2,
             d->windows_tz, wz ? "" : " not loaded: UTC", d->windows_source, r->sum->policy);
    s->used = tz >= 0 && src >= 0;
    s->tz = tz;
    s->source = src;
    s->open_ns = open_ns;
    s->close_ns = close_ns;
    memcpy(out, s->text, cap < sizeof(s->text) ? cap : sizeof(s->text));
    out[cap - 1] = '\0';
}

/* AT and LOCAL: the due time's texts when made already (NULL: made here). */
static enum tw_err emit(struct prun *r, struct tw_plan_action *a, enum tw_plan_kind kind,
                        int64_t due, int64_t pair, struct tw_amount saving, const char *at,
                        const char *local, const char *key_tail, struct tw_error *err)
{
    a->kind = kind;
    a->due_ns = due;
    a->pair_due_ns = pair;
    a->saving = saving;
    enum tw_err rc = TW_OK;
    if (!at && (rc = times_of(r, due, &at, &local, err)) != TW_OK)
        return rc;
    /* Both sources are arrays of at least 24 and 32 bytes (tslot, wtxt). */
    memcpy(a->due_at, at, 24);
    memcpy(a->due_local, local, 32);
    a->due_at[23] = a->due_local[31] = '\0';
    key_of(r, a, key_tail, a->idempotency_key);
    r->sum->actions++;
    if (kind == TW_PLAN_DOWNGRADE) {
        r->sum->downgrades++;
        if ((rc = bag_add(r, saving, err)) != TW_OK)
            return rc;
    } else {
        r->sum->upgrades++;
    }
    if (r->sink && r->sink->action && (rc = r->sink->action(r->sink->arg, a)) != TW_OK &&
        !err->msg[0])
        tw_error_set(err, rc, "taking the plan's actions failed (%s)", tw_strerror(rc));
    return rc;
}

/* The texts of D's shared windows (NULL when not shared, or past the
 * budget, or out of memory: the caller makes them per action). */
static const struct fmt_entry *fmt_of(struct prun *r, const struct tw_opp_disk *d,
                                      const struct tw_tz *wz, struct tw_error *err,
                                      enum tw_err *rc)
{
    *rc = TW_OK;
    if (!d->windows_key || !d->n_wins)
        return NULL;
    if (!r->fmt && !(r->fmt = calloc(FMT_SLOTS, sizeof(*r->fmt))))
        return NULL;
    uint64_t h = (uint64_t)(uintptr_t)d->windows_key * 0x9e3779b97f4a7c15u;
    size_t j = (size_t)(h >> 40) & (FMT_SLOTS - 1);
    for (size_t k = 0; k < FMT_SLOTS; k++, j = (j + 1) & (FMT_SLOTS - 1)) {
        struct fmt_entry *e = &r->fmt[j];
        if (e->wins == d->windows_key && e->n == d->n_wins && e->t)
            return e;
        if (e->wins && (e->wins != d->windows_key || e->n != d->n_wins))
            continue;
        if (!e->wins) {
            if (r->n_fmt * 2 >= FMT_SLOTS)
                return NULL;
            e->wins = d->windows_key;
            e->n = d->n_wins;
            r->n_fmt++;
            return NULL;
        }
        if (r->fmt_bytes + d->n_wins * sizeof(struct wtxt) > FMT_BUDGET)
            return NULL;
        struct wtxt *t = calloc(d->n_wins, sizeof(*t));
        char *arena = malloc(d->n_wins * 256);
        if (!t || !arena) {
            free(t);
            free(arena);
            return NULL;
        }
        size_t used = 0, n_distinct = 0;
        uint32_t distinct[32];
        for (size_t i = 0; i < d->n_wins; i++) {
            /* Every window: another disk may take one this one skips. */
            const struct tw_window_saving *w = &d->wins[i];
            const char *at = NULL, *local = NULL;
            if ((*rc = times_of(r, w->down_ns, &at, &local, err)) != TW_OK)
                break;
            snprintf(t[i].down_at, sizeof(t[i].down_at), "%s", at);
            snprintf(t[i].down_local, sizeof(t[i].down_local), "%s", local);
            if ((*rc = times_of(r, w->up_ns, &at, &local, err)) != TW_OK)
                break;
            snprintf(t[i].up_at, sizeof(t[i].up_at), "%s", at);
            snprintf(t[i].up_local, sizeof(t[i].up_local), "%s", local);
            key_end(TW_PLAN_DOWNGRADE, w->down_ns, t[i].down_key);
            key_end(TW_PLAN_UPGRADE, w->up_ns, t[i].up_key);
            /* The same text (a week's windows recur) at one offset, so
             * that a disk's walk copies a reason only when it changes. */
            reason_of(r, d, wz, w->open_ns, w->close_ns, arena + used, 256);
            t[i].reason = (uint32_t)used;
            for (size_t q = 0; q < n_distinct; q++)
                if (strcmp(arena + distinct[q], arena + used) == 0) {
                    t[i].reason = distinct[q];
                    break;
                }
            if (t[i].reason == used) {
                if (n_distinct < sizeof(distinct) / sizeof(distinct[0]))
                    distinct[n_distinct++] = (uint32_t)used;
                used += strlen(arena + used) + 1;
            }
        }
        if (*rc != TW_OK) {
            free(t);
            free(arena);
            return NULL;
        }
        char *small = realloc(arena, used ? used : 1); /* the reasons are few */
        e->t = t;
        e->arena = small ? small : arena;
        r->fmt_bytes += d->n_wins * sizeof(struct wtxt) + used;
        return e;
    }
    return NULL;
}

static enum tw_err on_disk(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *d)
{
    struct prun *r = arg;
    if (d->reason != TW_OPP_COVERED)
        return TW_OK;
    struct tw_error *err = &r->err;
    if (!r->sum->currency[0])
        memcpy(r->sum->currency, r->res->currency, sizeof(r->sum->currency));
    r->sum->windows_skipped += (int64_t)d->saving.n_skipped;
    int64_t from = r->o->from_ns, to = r->o->to_ns;
    const char *own = d->original_sku ? d->original_sku : d->sku;
    struct tw_plan_action a;
    memset(&a, 0, sizeof(a));
    a.vm_id = vm->id;
    a.disk_id = d->id;
    a.vm = vm->name;
    a.disk = d->name;
    a.resource_group = vm->resource_group;
    a.subscription_id = vm->subscription_id;
    enum tw_err rc = TW_OK;
    struct tw_tz *wz = zone_of(r, d->windows_tz, err, &rc);
    if (rc != TW_OK)
        return rc;
    const struct fmt_entry *fe = fmt_of(r, d, wz, err, &rc);
    if (rc != TW_OK)
        return rc;
    memcpy(r->key_head, r->key_prefix, r->key_prefix_len);
    r->key_head_len = (size_t)(put_i64(r->key_head + r->key_prefix_len, d->id) - r->key_head);
    char own_s[32], tgt_s[32];
    sku_copy(own_s, own);
    sku_copy(tgt_s, d->target.sku);
    const char *last_reason = NULL;
    bool any = false;
    struct tw_amount zero = tw_amount_of(tw_money_micros(0));
    for (size_t i = 0; i < d->n_wins; i++) {
        const struct tw_window_saving *w = &d->wins[i];
        if (w->skip != TW_WINDOW_TAKEN)
            continue;
        bool down = w->down_ns >= from && w->down_ns < to;
        bool up = w->up_ns >= from && w->up_ns < to;
        if (!down && !up)
            continue;
        a.window_open_ns = w->open_ns;
        a.window_close_ns = w->close_ns;
        const struct wtxt *t = fe ? &fe->t[i] : NULL;
        if (t) {
            const char *rs = fe->arena + t->reason;
            if (rs != last_reason) {
                size_t l = strlen(rs);
                memcpy(a.reason, rs, l + 1 < sizeof(a.reason) ? l + 1 : sizeof(a.reason));
                a.reason[sizeof(a.reason) - 1] = '\0';
                last_reason = rs;
            }
        } else {
            reason_of(r, d, wz, w->open_ns, w->close_ns, a.reason, sizeof(a.reason));
            last_reason = NULL;
        }
        any = true;
        if (down) {
            memcpy(a.from_sku, own_s, sizeof(a.from_sku));
            memcpy(a.to_sku, tgt_s, sizeof(a.to_sku));
            if ((rc = emit(r, &a, TW_PLAN_DOWNGRADE, w->down_ns, w->up_ns, w->whole_saving,
                           t ? t->down_at : NULL, t ? t->down_local : NULL,
                           t ? t->down_key : NULL, err)) != TW_OK)
                return rc;
        }
        if (up) {
            memcpy(a.from_sku, tgt_s, sizeof(a.from_sku));
            memcpy(a.to_sku, own_s, sizeof(a.to_sku));
            if ((rc = emit(r, &a, TW_PLAN_UPGRADE, w->up_ns, w->down_ns, zero,
                           t ? t->up_at : NULL, t ? t->up_local : NULL,
                           t ? t->up_key : NULL, err)) != TW_OK)
                return rc;
        }
    }
    if (any)
        r->sum->disks++;
    return TW_OK;
}

/* A run's setup: the options and period checked, the caches, the policy's
 * zone; the opportunities' options into *OO.  R->sum is set when the run
 * holds anything to free (plan_free). */
static enum tw_err plan_setup(struct prun *r, const struct tw_plan_opts *o,
                              const struct tw_plan_sink *sink, struct tw_plan_summary *out,
                              struct tw_opp_opts *oo, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    out->saving = tw_amount_of(tw_money_micros(0));
    enum tw_err rc0;
    if (!o || !o->policy || !o->cat || o->to_ns <= o->from_ns || o->from_ns == INT64_MIN) {
        out->fail = TW_OPP_FAIL_OTHER;
        return tw_error_set(err, TW_EINVAL, "a plan needs a store, a policy, the tier catalog "
                                            "and a period that ends after it starts");
    }
    if ((rc0 = tw_svc_plan_period(o->from_ns, o->to_ns, TW_PLAN_MAX_DAYS, err)) != TW_OK) {
        out->fail = TW_OPP_FAIL_OTHER;
        return rc0;
    }
    const struct tw_policy *p = o->policy;
    snprintf(out->policy, sizeof(out->policy), "%s", p->name);
    snprintf(out->timezone, sizeof(out->timezone), "%s", p->timezone[0] ? p->timezone : "UTC");
    out->from_ns = o->from_ns;
    out->to_ns = o->to_ns;
    *r = (struct prun){.o = o, .sink = sink, .sum = out};
    enum tw_err rc = TW_OK;
    if (!(r->tc = calloc(TCACHE_SLOTS, sizeof(*r->tc))) ||
        !(r->rc = calloc(RCACHE_SLOTS, sizeof(*r->rc))) ||
        !(r->bag = calloc(BAG_SLOTS, sizeof(*r->bag))))
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
    r->key_prefix_len = (size_t)snprintf(r->key_prefix, sizeof(r->key_prefix), "%s/", p->name);
    /* The policy's zone for the local times (the run checks that it loads
     * and says so when it does not). */
    struct tw_error zerr = {0};
    enum tw_err zrc = TW_OK;
    if (rc == TW_OK) {
        zrc = o->zone ? o->zone(o->zone_arg, out->timezone, &r->pz, &zerr)
                      : tw_error_set(&zerr, TW_EINVAL, "no way to load zones");
        if (zrc == TW_OK && !(r->zones = calloc(1, sizeof(*r->zones)))) {
            tw_tz_free(r->pz);
            r->pz = NULL;
            zrc = tw_error_set(&zerr, TW_ENOMEM, "out of memory");
        }
        if (zrc == TW_OK) {
            snprintf(r->zones[0].name, sizeof(r->zones[0].name), "%s", out->timezone);
            r->zones[0].z = r->pz;
            r->n_zones = 1;
        } else if (zrc == TW_ENOMEM) {
            rc = tw_error_set(err, zrc, "%s", zerr.msg);
        } else {
            out->fail = TW_OPP_FAIL_POLICY_ZONE;
            rc = tw_error_set(err, zrc,
                              "the policy %s's timezone \"%s\" does not load (%s): give an "
                              "IANA zone name this machine has, e.g. Europe/London (tierwise "
                              "policy check FILE)",
                              p->name, out->timezone, zerr.msg);
        }
    }
    *oo = (struct tw_opp_opts){
        .policy = p,
        .year = 0,
        .currency = o->currency,
        .reservations = o->reservations,
        .cat = o->cat,
        .caps = o->caps,
        .arm_sizes = o->arm_sizes,
        .zone = o->zone,
        .zone_arg = o->zone_arg,
        /* A nanosecond early: an upgrade due at FROM itself closes a span
         * [down, from) the period would not touch, so the window would
         * be "outside" and its upgrade in neither this plan nor the one
         * before it (which ends at FROM). */
        .from_ns = o->from_ns - 1,
        .to_ns = o->to_ns,
        .with_windows = true,
    };
    return rc;
}

/* After the opportunities' run RES (its error RC, ERR): the bag flushed,
 * a sink's error, the summary's fail and books. */
static enum tw_err plan_finish(struct prun *r, struct tw_opp_result *res, enum tw_err rc,
                               struct tw_error *err)
{
    struct tw_plan_summary *out = r->sum;
    if (rc == TW_OK)
        rc = bag_flush(r, err);
    /* A sink's error (the opportunities' run passes only its code). */
    if (rc != TW_OK && r->err.msg[0] && err)
        *err = r->err;
    memcpy(out->currency, res->currency, sizeof(out->currency));
    out->fail = res->fail;
    /* The disks left out for want of a price, and the books missing. */
    out->disks_without_price = res->fleet.no_price;
    out->missing_books =
        (int64_t)tw_opp_missing_regions(res, out->missing_regions, sizeof(out->missing_regions));
    out->needed_books = (int64_t)res->n_books;
    if (rc != TW_OK && out->fail == TW_OPP_FAIL_NONE)
        out->fail = TW_OPP_FAIL_OTHER;
    tw_opp_result_cleanup(res);
    return rc;
}

static void plan_free(struct prun *r)
{
    for (size_t i = 0; i < r->n_zones; i++)
        tw_tz_free(r->zones[i].z);
    free(r->zones);
    free(r->tc);
    free(r->rc);
    free(r->bag);
    for (size_t i = 0; r->fmt && i < FMT_SLOTS; i++) {
        free(r->fmt[i].t);
        free(r->fmt[i].arena);
    }
    free(r->fmt);
    for (size_t i = 0; i < r->n_names; i++)
        free(r->names[i]);
}

enum tw_err tw_svc_plan_run_many(struct tw_store *st, size_t n, const struct tw_plan_opts *opts,
                                 const struct tw_plan_sink *sinks,
                                 struct tw_plan_summary *outs, struct tw_error *errs)
{
    if (n == 0)
        return TW_OK;
    struct prun *runs = calloc(n, sizeof(*runs));
    enum tw_err *rcs = calloc(n, sizeof(*rcs));
    struct tw_opp_opts *oos = calloc(n, sizeof(*oos));
    struct tw_opp_sink *oss = calloc(n, sizeof(*oss));
    struct tw_opp_result *res = calloc(n, sizeof(*res));
    struct tw_error *oerrs = calloc(n, sizeof(*oerrs));
    size_t *idx = calloc(n, sizeof(*idx));
    if (!runs || !rcs || !oos || !oss || !res || !oerrs || !idx) {
        for (size_t i = 0; i < n; i++) {
            memset(&outs[i], 0, sizeof(outs[i]));
            outs[i].fail = TW_OPP_FAIL_OTHER;
            tw_error_set(errs ? &errs[i] : NULL, TW_ENOMEM, "out of memory");
        }
        free(runs);
        free(rcs);
        free(oos);
        free(oss);
        free(res);
        free(oerrs);
        free(idx);
        return TW_ENOMEM;
    }
    /* The runs set up go into one walk (the opportunities' run_many). */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        struct tw_opp_opts oo;
        rcs[i] = st ? plan_setup(&runs[i], opts ? &opts[i] : NULL, sinks ? &sinks[i] : NULL,
                                 &outs[i], &oo, errs ? &errs[i] : NULL)
                    : (outs[i] = (struct tw_plan_summary){.fail = TW_OPP_FAIL_OTHER},
                       tw_error_set(errs ? &errs[i] : NULL, TW_EINVAL,
                                    "a plan needs a store, a policy, the tier catalog and a "
                                    "period that ends after it starts"));
        if (rcs[i] != TW_OK)
            continue;
        oos[m] = oo;
        oss[m] = (struct tw_opp_sink){.disk = on_disk, .arg = &runs[i]};
        idx[m++] = i;
    }
    if (m) {
        for (size_t k = 0; k < m; k++)
            runs[idx[k]].res = &res[k];
        tw_opp_run_many(st, oos, m, oss, res, oerrs);
        for (size_t k = 0; k < m; k++) {
            size_t i = idx[k];
            struct tw_error *e = errs ? &errs[i] : NULL;
            /* A run failed has a fail; its code is its error's, else the
             * sink's (on_disk's, kept in the run). */
            enum tw_err orc = res[k].fail == TW_OPP_FAIL_NONE ? TW_OK
                              : oerrs[k].code                 ? oerrs[k].code
                              : runs[i].err.code              ? runs[i].err.code
                                                              : TW_EIO;
            if (orc != TW_OK && e)
                *e = oerrs[k];
            rcs[i] = plan_finish(&runs[i], &res[k], orc, e);
        }
    }
    enum tw_err rc = TW_OK;
    for (size_t i = 0; i < n; i++) {
        if (runs[i].sum)
            plan_free(&runs[i]);
        if (rc == TW_OK)
            rc = rcs[i];
    }
    free(runs);
    free(rcs);
    free(oos);
    free(oss);
    free(res);
    free(oerrs);
    free(idx);
    return rc;
}

enum tw_err tw_svc_plan_run(struct tw_store *st, const struct tw_plan_opts *o,
                            const struct tw_plan_sink *sink, struct tw_plan_summary *out,
                            struct tw_error *err)
{
    return tw_svc_plan_run_many(st, 1, o, sink, out, err);
}

enum tw_err tw_svc_plan_date(const char *buf, size_t len, const struct tw_tz *z, int64_t *ns,
                             struct tw_error *err)
{
    *ns = 0;
    int64_t t = 0; /* *NS only once it is good: 0 on every error */
    int shown = buf ? (int)(len > 40 ? 40 : len) : 0;
    bool day = buf && len == 10 && buf[4] == '-' && buf[7] == '-';
    for (size_t i = 0; day && i < 10; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)buf[i]))
            day = false;
    if (day) {
        struct tw_civil c = {
            .year = (buf[0] - '0') * 1000 + (buf[1] - '0') * 100 + (buf[2] - '0') * 10 +
                    (buf[3] - '0'),
            .month = (buf[5] - '0') * 10 + (buf[6] - '0'),
            .day = (buf[8] - '0') * 10 + (buf[9] - '0'),
        };
        if (!tw_civil_valid(&c))
            return tw_error_set(err, TW_EPARSE, "the date \"%.10s\" is no day of the calendar "
                                                "(YYYY-MM-DD, e.g. 2026-12-04)",
                                buf);
        if (c.year < TW_PLAN_YEAR_MIN || c.year > TW_PLAN_YEAR_MAX)
            return tw_error_set(err, TW_ERANGE,
                                "the date \"%.10s\" is outside the years 1970..2199", buf);
        enum tw_err rc = z ? tw_tz_civil_to_ns(z, &c, &t, NULL) : tw_civil_to_ns(&c, &t);
        if (rc != TW_OK)
            return tw_error_set(err, TW_ERANGE, "the date \"%.10s\" can't be placed in time",
                                buf);
        if (t < 0 || t >= TW_PLAN_END_NS)
            return tw_error_set(err, TW_ERANGE,
                                "the date \"%.10s\" is midnight outside 1970-01-01T00:00:00Z.."
                                "2199-12-31 in the policy's zone (give a later day or an RFC "
                                "3339 instant)",
                                buf);
        *ns = t;
        return TW_OK;
    }
    struct tw_error perr = {0};
    if (!buf || tw_rfc3339_parse(buf, len, &t, &perr) != TW_OK)
        return tw_error_set(err, perr.code == TW_ERANGE ? TW_ERANGE : TW_EPARSE,
                            "\"%.*s\" is neither YYYY-MM-DD nor RFC 3339 (e.g. 2026-12-04 or "
                            "2026-12-04T20:00:00Z)%s%s",
                            shown, buf ? buf : "", perr.msg[0] ? ": " : "", perr.msg);
    if (t < 0 || t >= TW_PLAN_END_NS)
        return tw_error_set(err, TW_ERANGE,
                            "\"%.*s\" is outside 1970-01-01T00:00:00Z..2199-12-31T23:59:59Z",
                            shown, buf);
    *ns = t;
    return TW_OK;
}

enum tw_err tw_svc_plan_period(int64_t from_ns, int64_t to_ns, int max_days,
                               struct tw_error *err)
{
    if (from_ns < 0 || from_ns >= TW_PLAN_END_NS || to_ns < 0 || to_ns > TW_PLAN_END_NS)
        return tw_error_set(err, TW_ERANGE,
                            "%s: the period must lie in 1970-01-01T00:00:00Z.."
                            "2200-01-01T00:00:00Z",
                            from_ns < 0 || from_ns >= TW_PLAN_END_NS ? "from" : "to");
    if (to_ns <= from_ns)
        return tw_error_set(err, TW_EINVAL,
                            "to: the period's end is not after its start (from): the period "
                            "is [from, to)");
    if (max_days > 0 && to_ns - from_ns > (int64_t)max_days * TW_NS_PER_DAY)
        return tw_error_set(err, TW_ERANGE,
                            "to: the period is longer than %d days, the longest a plan takes "
                            "here: plan it in parts (the parts' plans agree at their seams)",
                            max_days);
    return TW_OK;
}
