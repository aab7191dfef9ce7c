/*
 * sync.c - the fleet from ARM into the store (sync.h).
 */
#include "service/sync.h"

#include "azure/imds.h"
#include "core/time.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- the real client's table ---- */

static enum tw_err real_disks(void *ctx, const char *sub, const char *rg,
                              enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                              void *arg, struct tw_error *err)
{
    return tw_arm_disks_list(ctx, sub, rg, fn, arg, err);
}

static enum tw_err real_vms(void *ctx, const char *sub, const char *rg,
                            enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm), void *arg,
                            struct tw_error *err)
{
    return tw_arm_vms_list(ctx, sub, rg, fn, arg, err);
}

static const struct tw_arm_error *real_last(void *ctx)
{
    return tw_arm_last_error(ctx);
}

static enum tw_err real_disk_get(void *ctx, const char *id, struct tw_arm_disk *d,
                                 struct tw_error *err)
{
    return tw_arm_disk_get(ctx, id, d, err);
}

struct tw_sync_arm tw_sync_arm_real(struct tw_arm *a)
{
    return (struct tw_sync_arm){.disks_list = real_disks, .vms_list = real_vms,
                                .last_error = real_last, .disk_get = real_disk_get, .ctx = a};
}

/* ---- checks ---- */

bool tw_sync_subscription_valid(const char *s)
{
    static const int dash[] = {8, 13, 18, 23};
    if (!s || strlen(s) != 36)
        return false;
    for (int i = 0, k = 0; i < 36; i++) {
        if (k < 4 && i == dash[k]) {
            if (s[i] != '-')
                return false;
            k++;
        } else if (!isxdigit((unsigned char)s[i])) {
            return false;
        }
    }
    return true;
}

/* Azure's rule for a resource group's name: 1 to 90 letters, digits,
 * underscores, hyphens, periods and parentheses, not ending in a period. */
bool tw_sync_resource_group_valid(const char *g)
{
    size_t n = g ? strlen(g) : 0;
    if (n < 1 || n > 90 || g[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)g[i];
        if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != '(' && c != ')')
            return false;
    }
    return true;
}

void tw_sync_summary_free(struct tw_sync_summary *s)
{
    if (!s)
        return;
    free(s->changes);
    s->changes = NULL;
    s->n_changes = 0;
}

/* ---- one scope (a subscription or one of its groups) ---- */

/* A disk as listed, slim: what the store keeps and how it is grouped. */
struct disk {
    char *id, *managed_by;     /* malloc'd; managed_by "" unattached */
    char name[128];
    char sku[32], tier[16];
    int64_t size_gib;
    int64_t max_shares;
    int bursting;              /* -1 unknown */
    char disk_state[32];
    char lou[40];
    bool used;                 /* put with a VM */
};

struct scope {
    const struct tw_sync_opts *o;
    struct tw_sync_summary *out;
    const char *sub, *rg;
    struct disk *disks;
    size_t n, cap;
    size_t *by_owner;          /* indices of DISKS by lower(managed_by), then id */
    size_t *by_id;             /* indices by lower(id) */
    const char *at;
    enum tw_err put_failed;    /* a store error inside a callback */
    struct tw_error put_err;   /* its words */
    size_t *cap_changes;       /* room in OUT->changes, kept across scopes by the run */
};

static char *dup(const char *s)
{
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

static bool disk_fill(struct disk *x, const struct tw_arm_disk *d);

static enum tw_err take_disk(void *arg, const struct tw_arm_disk *d)
{
    struct scope *sc = arg;
    /* A stop is asked about every 256 disks too: a subscription's list
     * may be long. */
    if (sc->n % 256 == 255 && sc->o->stopping && sc->o->stopping(sc->o->stop_arg))
        return TW_EIO;
    if (sc->n == sc->cap) {
        size_t ncap = sc->cap ? sc->cap * 2 : 256;
        struct disk *p = realloc(sc->disks, ncap * sizeof(*p));
        if (!p)
            return TW_ENOMEM;
        sc->disks = p;
        sc->cap = ncap;
    }
    if (!disk_fill(&sc->disks[sc->n], d))
        return TW_ENOMEM;
    sc->n++;
    return TW_OK;
}

/* X as ARM's disk D (its id and managedBy malloc'd); false out of memory. */
static bool disk_fill(struct disk *x, const struct tw_arm_disk *d)
{
    memset(x, 0, sizeof(*x));
    x->id = dup(d->id);
    x->managed_by = dup(d->managed_by);
    if (!x->id || !x->managed_by) {
        free(x->id);
        free(x->managed_by);
        return false;
    }
    snprintf(x->name, sizeof(x->name), "%s", d->name);
    snprintf(x->sku, sizeof(x->sku), "%s", d->sku);
    snprintf(x->tier, sizeof(x->tier), "%s", d->tier);
    x->size_gib = d->size_gib;
    x->max_shares = d->max_shares;
    x->bursting = d->bursting;
    snprintf(x->disk_state, sizeof(x->disk_state), "%s", d->disk_state);
    snprintf(x->lou, sizeof(x->lou), "%s", d->last_ownership_update);
    return true;
}

/* qsort has no argument: the scope being sorted, per thread. */
static _Thread_local const struct scope *sort_scope;

static int by_owner_cmp(const void *a, const void *b)
{
    const struct disk *x = &sort_scope->disks[*(const size_t *)a];
    const struct disk *y = &sort_scope->disks[*(const size_t *)b];
    return strcasecmp(x->managed_by, y->managed_by);
}

static int by_id_cmp(const void *a, const void *b)
{
    const struct disk *x = &sort_scope->disks[*(const size_t *)a];
    const struct disk *y = &sort_scope->disks[*(const size_t *)b];
    return strcasecmp(x->id, y->id);
}

/* The first index in IDX (sorted by KEY) whose key is K, or N. */
static size_t lower_bound(const struct scope *sc, const size_t *idx, bool owner, const char *k)
{
    size_t lo = 0, hi = sc->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct disk *d = &sc->disks[idx[mid]];
        if (strcasecmp(owner ? d->managed_by : d->id, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void count_change(void *arg, const struct tw_store_arm_change *c)
{
    struct scope *sc = arg;
    struct tw_sync_summary *s = sc->out;
    switch (c->what) {
    case TW_ARM_CH_VM_NEW: s->vms_new++; break;
    case TW_ARM_CH_DISK_NEW: s->disks_new++; break;
    case TW_ARM_CH_SKU: s->sku_changes++; break;
    case TW_ARM_CH_POWER: s->power_changes++; break;
    case TW_ARM_CH_DETACHED: s->detached++; break;
    default: break;
    }
    if (s->n_changes == *sc->cap_changes) {
        size_t ncap = *sc->cap_changes ? *sc->cap_changes * 2 : 64;
        struct tw_sync_change *p = realloc(s->changes, ncap * sizeof(*p));
        if (!p) {
            sc->put_failed = TW_ENOMEM;
            return;
        }
        s->changes = p;
        *sc->cap_changes = ncap;
    }
    struct tw_sync_change *x = &s->changes[s->n_changes++];
    snprintf(x->what, sizeof(x->what), "%s", tw_store_arm_what_name(c->what));
    snprintf(x->vm, sizeof(x->vm), "%s", c->vm ? c->vm : "");
    snprintf(x->disk, sizeof(x->disk), "%s", c->disk ? c->disk : "");
    snprintf(x->from, sizeof(x->from), "%s", c->from ? c->from : "");
    snprintf(x->to, sizeof(x->to), "%s", c->to ? c->to : "");
    if (sc->o->on_change)
        sc->o->on_change(sc->o->arg, x);
}

static enum tw_caching caching_of(const char *s)
{
    enum tw_caching c = TW_CACHE_NONE;
    if (s && s[0] && tw_caching_parse(s, &c) != TW_OK)
        c = TW_CACHE_NONE;
    return c;
}

/* Disk X as the store takes it, in the role the VM's profile gives it. */
static void to_store(const struct disk *x, const struct tw_arm_vm *vm,
                     struct tw_store_arm_disk *out)
{
    memset(out, 0, sizeof(*out));
    struct tw_disk *d = &out->disk;
    snprintf(d->name, sizeof(d->name), "%s", x->name);
    snprintf(d->sku, sizeof(d->sku), "%s", x->sku);
    snprintf(d->tier, sizeof(d->tier), "%s", x->tier);
    snprintf(d->managed_disk_id, sizeof(d->managed_disk_id), "%s", x->id);
    d->size_gib = x->size_gib;
    d->lun = -1;
    d->role = TW_DISK_DATA;
    if (tw_arm_id_equal(x->id, vm->os_disk_id)) {
        d->role = TW_DISK_OS;
        d->caching = caching_of(vm->os_disk_caching);
    }
    for (size_t k = 0; d->role == TW_DISK_DATA && k < vm->n_data && k < 64; k++) {
        if (tw_arm_id_equal(x->id, vm->data[k].id) ||
            (!vm->data[k].id[0] && strcasecmp(x->name, vm->data[k].name) == 0)) {
            d->lun = vm->data[k].lun;
            d->caching = caching_of(vm->data[k].caching);
        }
    }
    out->attrs.max_shares = x->max_shares > 0 ? x->max_shares : 0;
    out->attrs.bursting = x->bursting < 0 ? TW_TRI_UNKNOWN
                          : x->bursting ? TW_TRI_YES : TW_TRI_NO;
    snprintf(out->attrs.disk_state, sizeof(out->attrs.disk_state), "%s", x->disk_state);
    out->last_ownership_update = x->lou[0] ? x->lou : NULL;
}

static enum tw_err take_vm(void *arg, const struct tw_arm_vm *vm)
{
    struct scope *sc = arg;
    if (sc->o->stopping && sc->o->stopping(sc->o->stop_arg)) {
        sc->put_failed = TW_EIO;
        tw_error_set(&sc->put_err, TW_EIO, "the sync was stopped before VM %s", vm->vm.name);
        return TW_EIO;
    }
    struct tw_store_arm_disk *ds = malloc(TW_INV_MAX_DISKS * sizeof(*ds));
    if (!ds)
        return TW_ENOMEM;
    size_t n = 0;
    /* Its disks by managedBy ... */
    for (size_t i = lower_bound(sc, sc->by_owner, true, vm->vm.resource_id);
         i < sc->n && n < TW_INV_MAX_DISKS; i++) {
        struct disk *x = &sc->disks[sc->by_owner[i]];
        if (strcasecmp(x->managed_by, vm->vm.resource_id) != 0)
            break;
        if (!x->used) {
            x->used = true;
            to_store(x, vm, &ds[n++]);
        }
    }
    /* ... and those its profile names that the list shows unattached (a
     * list read while the attachment was being made). */
    size_t n_data = vm->n_data < 64 ? vm->n_data : 64;
    const char *keep[TW_INV_MAX_DISKS];
    size_t n_keep = 0;
    struct disk got[TW_INV_MAX_DISKS]; /* read by id, freed after the put */
    size_t n_got = 0;
    struct tw_arm_disk *one = NULL;
    enum tw_err rc = TW_OK;
    for (size_t k = 0; k <= n_data && n < TW_INV_MAX_DISKS; k++) {
        const char *id = k == n_data ? vm->os_disk_id : vm->data[k].id;
        if (!id[0])
            continue;
        size_t i = lower_bound(sc, sc->by_id, false, id);
        struct disk *x = i < sc->n ? &sc->disks[sc->by_id[i]] : NULL;
        if (x && strcasecmp(x->id, id) == 0) {
            if (!x->used && !x->managed_by[0]) {
                x->used = true;
                to_store(x, vm, &ds[n++]);
            }
            continue;
        }
        /* Not in the scope's list: in a resource group sync, a disk of
         * another group.  Read it, so the store has the truth; never
         * detach it for the list's lack. */
        if (!sc->rg)
            continue;
        bool read = false;
        if (sc->o->arm.disk_get && n_got < TW_INV_MAX_DISKS) {
            if (!one && !(one = malloc(sizeof(*one)))) {
                rc = TW_ENOMEM;
                break;
            }
            struct tw_error ge = {0};
            enum tw_err g = sc->o->arm.disk_get(sc->o->arm.ctx, id, one, &ge);
            if (g == TW_ENOENT)
                continue; /* gone: the store detaches it */
            if (g == TW_OK && (!one->managed_by[0] ||
                               tw_arm_id_equal(one->managed_by, vm->vm.resource_id))) {
                if (!disk_fill(&got[n_got], one)) {
                    rc = TW_ENOMEM;
                    break;
                }
                to_store(&got[n_got++], vm, &ds[n++]);
                read = true;
            } else if (g == TW_OK) {
                continue; /* attached elsewhere now: the profile was read before the move */
            }
        }
        if (!read && n_keep < TW_INV_MAX_DISKS)
            keep[n_keep++] = id;
    }
    free(one);
    struct tw_store_arm_vm v = {.vm = &vm->vm, .power_state = vm->power_state, .n_disks = n,
                                .disks = ds, .keep_ids = keep, .n_keep = n_keep};
    struct tw_error e = {0};
    if (rc == TW_OK)
        rc = tw_store_arm_vm_put(sc->o->st, &v, sc->at, count_change, sc, NULL, &e);
    else
        tw_error_set(&e, rc, "out of memory reading the disks of VM %s", vm->vm.name);
    for (size_t i = 0; i < n_got; i++) {
        free(got[i].id);
        free(got[i].managed_by);
    }
    free(ds);
    if (rc == TW_OK && sc->put_failed)
        rc = tw_error_set(&e, sc->put_failed, "out of memory noting what changed");
    if (rc != TW_OK) {
        /* Kept for the caller: the store's own words, with the VM. */
        sc->put_failed = rc;
        tw_error_set(&sc->put_err, rc, "storing VM %s from ARM failed: %s", vm->vm.name, e.msg);
        return rc;
    }
    sc->out->vms++;
    sc->out->disks += n;
    return TW_OK;
}

/* An ARM failure of WHAT in words, with the error class: refused
 * (EPERM, naming the role), unknown (ENOENT), unreachable (EIO). */
static enum tw_err arm_failed(const struct scope *sc, enum tw_err rc, const char *what,
                              struct tw_error *err)
{
    const struct tw_arm_error *a = sc->o->arm.last_error ? sc->o->arm.last_error(sc->o->arm.ctx)
                                                        : NULL;
    char where[256];
    if (sc->rg)
        snprintf(where, sizeof(where), "resource group %s of subscription %s", sc->rg, sc->sub);
    else
        snprintf(where, sizeof(where), "subscription %s", sc->sub);
    char said[768] = "";
    if (err && err->msg[0])
        snprintf(said, sizeof(said), ": %s", err->msg);
    struct tw_error tmp = {0};
    if (a && a->fault == TW_ARM_FAULT_AUTH)
        rc = tw_error_set(&tmp, TW_EPERM,
                          "ARM refused to list the %s of %s (%ld %s)%s; give the identity "
                          "tierwise runs as the role of deploy/azure-role.json on that scope "
                          "(README \"ARM access for tier switches\")",
                          what, where, a->status, a->code[0] ? a->code : "refused", said);
    else if (a && a->fault == TW_ARM_FAULT_NOT_FOUND)
        rc = tw_error_set(&tmp, TW_ENOENT, "ARM does not know %s (%ld %s)%s; check the id",
                          where, a->status, a->code[0] ? a->code : "not found", said);
    else if (rc == TW_ENOMEM)
        rc = tw_error_set(&tmp, TW_ENOMEM, "out of memory listing the %s of %s", what, where);
    else if (a && (a->fault == TW_ARM_FAULT_NETWORK || a->fault == TW_ARM_FAULT_SERVER ||
                   a->fault == TW_ARM_FAULT_THROTTLED))
        rc = tw_error_set(&tmp, TW_EIO, "listing the %s of %s failed (%s)%s; tierwise tries "
                          "again at the next sync", what, where, tw_arm_fault_name(a->fault),
                          said);
    else
        rc = tw_error_set(&tmp, rc == TW_OK ? TW_EIO : rc, "listing the %s of %s failed%s",
                          what, where, said);
    if (err)
        *err = tmp;
    return rc;
}

static enum tw_err sync_scope(const struct tw_sync_opts *o, const char *sub, const char *rg,
                              const char *at, struct tw_sync_summary *out, size_t *cap_changes,
                              struct tw_error *err)
{
    struct scope sc = {.o = o, .out = out, .sub = sub, .rg = rg, .at = at,
                       .cap_changes = cap_changes};
    enum tw_err rc = o->arm.disks_list(o->arm.ctx, sub, rg, take_disk, &sc, err);
    if (rc != TW_OK)
        rc = arm_failed(&sc, rc, "disks", err);
    if (rc == TW_OK) {
        sc.by_owner = malloc((sc.n ? sc.n : 1) * sizeof(size_t));
        sc.by_id = malloc((sc.n ? sc.n : 1) * sizeof(size_t));
        if (!sc.by_owner || !sc.by_id)
            rc = tw_error_set(err, TW_ENOMEM, "out of memory grouping %zu disks", sc.n);
    }
    if (rc == TW_OK) {
        for (size_t i = 0; i < sc.n; i++)
            sc.by_owner[i] = sc.by_id[i] = i;
        sort_scope = &sc;
        qsort(sc.by_owner, sc.n, sizeof(size_t), by_owner_cmp);
        qsort(sc.by_id, sc.n, sizeof(size_t), by_id_cmp);
        sort_scope = NULL;
        tw_error_clear(err);
        rc = o->arm.vms_list(o->arm.ctx, sub, rg, take_vm, &sc, err);
        if (rc != TW_OK && sc.put_failed)
            rc = tw_error_set(err, sc.put_failed, "%s (the VMs before it are stored)",
                              sc.put_err.msg);
        else if (rc != TW_OK)
            rc = arm_failed(&sc, rc, "VMs", err);
    }
    for (size_t i = 0; i < sc.n; i++) {
        if (rc == TW_OK && !sc.disks[i].used && !sc.disks[i].managed_by[0])
            out->unattached_disks++;
        free(sc.disks[i].id);
        free(sc.disks[i].managed_by);
    }
    free(sc.disks);
    free(sc.by_owner);
    free(sc.by_id);
    return rc;
}

enum tw_err tw_sync_run(const struct tw_sync_opts *o, struct tw_sync_summary *out,
                        struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    if (!o || !o->st || !o->arm.disks_list || !o->arm.vms_list)
        return tw_error_set(err, TW_EINVAL, "a sync needs a store and an ARM client");
    if (o->n_subscriptions == 0)
        return tw_error_set(err, TW_EINVAL, "a sync needs at least one subscription");
    for (size_t i = 0; i < o->n_subscriptions; i++)
        if (!tw_sync_subscription_valid(o->subscriptions[i]))
            return tw_error_set(err, TW_EINVAL,
                                "\"%.64s\" is not a subscription id (a GUID such as "
                                "3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f)",
                                o->subscriptions[i] ? o->subscriptions[i] : "");
    for (size_t i = 0; i < o->n_resource_groups; i++)
        if (!tw_sync_resource_group_valid(o->resource_groups[i]))
            return tw_error_set(err, TW_EINVAL,
                                "\"%.100s\" is not a resource group name (1 to 90 letters, "
                                "digits, _ - . ( ), not ending in .)",
                                o->resource_groups[i] ? o->resource_groups[i] : "");
    char now[40];
    const char *at = o->observed_at;
    if (!at) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (!tw_rfc3339_format_ns((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec / 1000000 * 1000000,
                                  0, 3, now, sizeof(now)))
            return tw_error_set(err, TW_ERANGE, "the system clock reads no time");
        at = now;
    }
    size_t cap_changes = 0;
    for (size_t i = 0; i < o->n_subscriptions; i++) {
        size_t groups = o->n_resource_groups ? o->n_resource_groups : 1;
        for (size_t g = 0; g < groups; g++) {
            enum tw_err rc = sync_scope(o, o->subscriptions[i],
                                        o->n_resource_groups ? o->resource_groups[g] : NULL, at,
                                        out, &cap_changes, err);
            if (rc != TW_OK)
                return rc;
        }
    }
    return TW_OK;
}

enum tw_err tw_sync_default_subscription(const struct tw_az_http_opts *h, const char *imds_url,
                                         char *out, size_t cap, struct tw_error *err)
{
    struct tw_inventory *inv = malloc(sizeof(*inv));
    if (!inv)
        return tw_error_set(err, TW_ENOMEM, "out of memory asking IMDS");
    bool unreachable = false;
    struct tw_error e = {0};
    enum tw_err rc = tw_az_imds_fetch(h, imds_url, inv, &unreachable, &e);
    if (rc != TW_OK) {
        free(inv);
        return tw_error_set(err, unreachable ? TW_EIO : rc,
                            "no --subscription given and IMDS (%s) could not say this VM's: "
                            "%s; give --subscription ID (not on Azure, there is no IMDS)",
                            imds_url, e.msg);
    }
    if (!tw_sync_subscription_valid(inv->vm.subscription_id)) {
        free(inv);
        return tw_error_set(err, TW_EINVAL, "IMDS (%s) names no subscription for this VM; give "
                            "--subscription ID", imds_url);
    }
    snprintf(out, cap, "%s", inv->vm.subscription_id);
    free(inv);
    return TW_OK;
}

json_t *tw_sync_summary_json(const struct tw_sync_summary *s)
{
    json_t *ch = json_array();
    json_t *o = ch ? json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "vms",
                               (json_int_t)s->vms, "vms_new", (json_int_t)s->vms_new, "disks",
                               (json_int_t)s->disks, "disks_new", (json_int_t)s->disks_new,
                               "sku_changes", (json_int_t)s->sku_changes, "power_changes",
                               (json_int_t)s->power_changes, "detached",
                               (json_int_t)s->detached, "unattached_disks",
                               (json_int_t)s->unattached_disks)
                   : NULL;
    if (!o) {
        json_decref(ch);
        return NULL;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < s->n_changes; i++) {
        const struct tw_sync_change *c = &s->changes[i];
        json_t *x = json_pack("{s:s, s:s, s:o, s:o, s:o}", "what", c->what, "vm", c->vm, "disk",
                              c->disk[0] ? json_string(c->disk) : json_null(), "from",
                              c->from[0] ? json_string(c->from) : json_null(), "to",
                              c->to[0] ? json_string(c->to) : json_null());
        ok = x && json_array_append_new(ch, x) == 0;
    }
    if (!ok) {
        json_decref(ch);
        json_decref(o);
        return NULL;
    }
    if (json_object_set_new(o, "changes", ch) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
