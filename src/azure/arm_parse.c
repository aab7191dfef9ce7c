/*
 * arm_parse.c - the ARM answers tierwise reads: a disk, a VM, an instance
 * view, list pages, error bodies, operation status bodies, the Entra ID
 * login answer and Retry-After.  Each takes a buffer and a length (fuzzed:
 * tests/fuzz/fuzz_arm_*.c) and says what is wrong with its path.
 */
#include "azure/arm.h"
#include "core/jsonx.h"
#include "core/time.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

/* ---- helpers ---- */

/* Member KEY of O, exact first, else any case (ARM writes
 * "LastOwnershipUpdateTime" where its other members are camelCase). */
static const json_t *get(const json_t *o, const char *key)
{
    if (!json_is_object(o))
        return NULL;
    const json_t *v = json_object_get(o, key);
    if (v)
        return v;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)o, k, x)
    {
        if (strcasecmp(k, key) == 0)
            return x;
    }
    return NULL;
}

/* Puts "WHAT: " before ERR's message (the getters name the field only). */
static enum tw_err prefixed(struct tw_error *err, const char *what)
{
    if (!err)
        return TW_EPARSE;
    char m[sizeof(err->msg)];
    snprintf(m, sizeof(m), "%.60s: %.440s", what, err->msg);
    memcpy(err->msg, m, sizeof(m));
    err->code = TW_EPARSE;
    return TW_EPARSE;
}

/* A string member into DST (copied whole, or an error). */
static bool str(const json_t *o, const char *path, const char *key, unsigned opt, char *dst,
                size_t cap, struct tw_error *err)
{
    return tw_jx_str(get(o, key), path, key, opt | TW_JX_NULLABLE, dst, cap, err);
}

/* Text fit for a message: printable bytes of S, at most CAP-1. */
static void safe_copy(char *dst, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++)
        dst[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    dst[o] = '\0';
}

static bool segment(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 0 || n >= cap)
        return false;
    if (out) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    *p = e ? e + 1 : s + n;
    return e != NULL || s[n] == '\0';
}

static bool literal(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncasecmp(*p, word, n) != 0 || ((*p)[n] != '/' && (*p)[n] != '\0'))
        return false;
    *p += n + ((*p)[n] == '/');
    return true;
}

bool tw_arm_id_split(const char *id, char *sub, size_t sub_cap, char *rg, size_t rg_cap,
                     char *name, size_t name_cap)
{
    if (!id || id[0] != '/')
        return false;
    for (const char *c = id; *c; c++)
        if ((unsigned char)*c < 0x21 || *c == 0x7f || *c == '?' || *c == '#' || *c == '%' ||
            *c == '\\' || *c == '&')
            return false;
    char s[128], g[128], n[256];
    const char *p = id + 1;
    if (!literal(&p, "subscriptions") || !segment(&p, s, sizeof(s)) ||
        !literal(&p, "resourceGroups") || !segment(&p, g, sizeof(g)) ||
        !literal(&p, "providers") || !literal(&p, "Microsoft.Compute"))
        return false;
    if (!literal(&p, "disks") && !literal(&p, "virtualMachines"))
        return false;
    const char *last = p;
    if (!segment(&p, n, sizeof(n)) || *p != '\0' || strchr(last, '/'))
        return false;
    /* "." and ".." would be resolved away in the URL the id becomes: the
     * call would reach another resource than the id names. */
    const char *parts[] = {s, g, n};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(parts[i], ".") == 0 || strcmp(parts[i], "..") == 0)
            return false;
    if ((sub && strlen(s) >= sub_cap) || (rg && strlen(g) >= rg_cap) ||
        (name && strlen(n) >= name_cap))
        return false;
    if (sub)
        memcpy(sub, s, strlen(s) + 1);
    if (rg)
        memcpy(rg, g, strlen(g) + 1);
    if (name)
        memcpy(name, n, strlen(n) + 1);
    return true;
}

bool tw_arm_id_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    size_t na = strlen(a), nb = strlen(b);
    while (na && a[na - 1] == '/')
        na--;
    while (nb && b[nb - 1] == '/')
        nb--;
    return na == nb && strncasecmp(a, b, na) == 0;
}

/* ---- tags ---- */

static bool tags(const json_t *o, const char *path, struct tw_tag *out, size_t *n,
                 struct tw_error *err)
{
    *n = 0;
    const json_t *t = get(o, "tags");
    if (!t || json_is_null(t))
        return true;
    if (!json_is_object(t)) {
        tw_error_set(err, TW_EPARSE, "%stags must be an object of strings", path);
        return false;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)t, k, v)
    {
        if (*n >= TW_INV_MAX_TAGS) {
            tw_error_set(err, TW_EPARSE, "%stags: more than %d tags", path, TW_INV_MAX_TAGS);
            return false;
        }
        if (!json_is_string(v) || strlen(k) >= sizeof(out->key) ||
            json_string_length(v) >= sizeof(out->value) ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            char kk[64];
            safe_copy(kk, sizeof(kk), k, strlen(k));
            tw_error_set(err, TW_EPARSE,
                         "%stags.%s must be a string under %zu bytes (keys under %zu)", path, kk,
                         sizeof(out->value), sizeof(out->key));
            return false;
        }
        memcpy(out[*n].key, k, strlen(k) + 1);
        memcpy(out[*n].value, json_string_value(v), json_string_length(v) + 1);
        (*n)++;
    }
    return true;
}

/* ---- disks ---- */

static enum tw_err disk_from(const json_t *o, const char *path, struct tw_arm_disk *d,
                             struct tw_error *err)
{
    memset(d, 0, sizeof(*d));
    d->bursting = -1;
    char pp[96];
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "%.*s%sa disk must be a JSON object",
                            path[0] ? (int)strlen(path) - 1 : 0, path, path[0] ? ": " : "");
    snprintf(pp, sizeof(pp), "%sproperties", path);
    const json_t *sku = get(o, "sku"), *pr = get(o, "properties");
    char skp[96];
    snprintf(skp, sizeof(skp), "%ssku", path);
    bool ok = true;
    if (!json_is_object(sku) || !json_is_object(pr))
        return tw_error_set(err, TW_EPARSE, "%s%s is missing or not an object", path,
                            !json_is_object(sku) ? "sku" : "properties");
    ok = str(o, path, "id", 0, d->id, sizeof(d->id), err) &&
         str(o, path, "name", TW_JX_REQUIRED | TW_JX_NONEMPTY, d->name, sizeof(d->name), err) &&
         str(o, path, "location", 0, d->location, sizeof(d->location), err) &&
         str(o, path, "managedBy", 0, d->managed_by, sizeof(d->managed_by), err) &&
         str(sku, skp, "name", TW_JX_REQUIRED | TW_JX_NONEMPTY, d->sku, sizeof(d->sku), err) &&
         str(pr, pp, "tier", 0, d->tier, sizeof(d->tier), err) &&
         str(pr, pp, "diskState", 0, d->disk_state, sizeof(d->disk_state), err) &&
         str(pr, pp, "provisioningState", 0, d->provisioning_state,
             sizeof(d->provisioning_state), err) &&
         str(pr, pp, "LastOwnershipUpdateTime", 0, d->last_ownership_update,
             sizeof(d->last_ownership_update), err) &&
         tw_jx_int(get(pr, "diskSizeGB"), pp, "diskSizeGB", 0, 1 << 20,
                   TW_JX_NULLABLE | TW_JX_DECIMAL, &d->size_gib, err) &&
         tw_jx_int(get(pr, "diskIOPSReadWrite"), pp, "diskIOPSReadWrite", 0, 100000000,
                   TW_JX_NULLABLE | TW_JX_DECIMAL, &d->iops, err) &&
         tw_jx_int(get(pr, "diskMBpsReadWrite"), pp, "diskMBpsReadWrite", 0, 100000000,
                   TW_JX_NULLABLE | TW_JX_DECIMAL, &d->mbps, err) &&
         tw_jx_int(get(pr, "maxShares"), pp, "maxShares", 0, 1000,
                   TW_JX_NULLABLE | TW_JX_DECIMAL, &d->max_shares, err) &&
         tags(o, path, d->tags, &d->n_tags, err);
    if (!ok)
        return TW_EPARSE;
    const json_t *b = get(pr, "burstingEnabled");
    if (b && !json_is_null(b)) {
        bool v;
        if (!tw_jx_bool(b, pp, "burstingEnabled", 0, &v, err))
            return TW_EPARSE;
        d->bursting = v ? 1 : 0;
    }
    const json_t *up = get(pr, "propertyUpdatesInProgress");
    if (up && !json_is_null(up)) {
        char upp[128];
        snprintf(upp, sizeof(upp), "%s.propertyUpdatesInProgress", pp);
        if (!json_is_object(up))
            return tw_error_set(err, TW_EPARSE, "%s must be an object", upp);
        d->update_in_progress = true;
        if (!str(up, upp, "targetTier", 0, d->target_tier, sizeof(d->target_tier), err))
            return TW_EPARSE;
    }
    if (d->id[0] && !tw_arm_id_split(d->id, d->subscription_id, sizeof(d->subscription_id),
                                     d->resource_group, sizeof(d->resource_group), NULL, 0)) {
        char idt[96];
        safe_copy(idt, sizeof(idt), d->id, strlen(d->id));
        return tw_error_set(err, TW_EPARSE, "%sid \"%s\" is not a disk's resource id", path, idt);
    }
    return TW_OK;
}

enum tw_err tw_arm_disk_parse(const char *buf, size_t len, struct tw_arm_disk *d,
                              struct tw_error *err)
{
    json_t *root = tw_json_load(buf, len, 0, "ARM disk answer", err);
    if (!root) {
        memset(d, 0, sizeof(*d));
        return TW_EPARSE;
    }
    enum tw_err rc = disk_from(root, "", d, err);
    json_decref(root);
    if (rc != TW_OK) {
        prefixed(err, "ARM disk answer");
        memset(d, 0, sizeof(*d));
    }
    return rc;
}

/* ---- VMs ---- */

static void statuses(const json_t *iv, char *power, size_t cap, bool *hib, char *prov,
                     size_t prov_cap, bool *ok)
{
    const json_t *st = get(iv, "statuses");
    *ok = st == NULL || json_is_null(st) || json_is_array(st);
    size_t i;
    const json_t *s;
    json_array_foreach(st, i, s)
    {
        const json_t *c = get(s, "code");
        if (!json_is_string(c)) {
            *ok = false;
            return;
        }
        const char *code = json_string_value(c);
        if (strncasecmp(code, "PowerState/", 11) == 0 && power) {
            if (strlen(code + 11) < cap)
                snprintf(power, cap, "%s", code + 11);
            else
                *ok = false;
        } else if (strncasecmp(code, "ProvisioningState/", 18) == 0 && prov) {
            if (strlen(code + 18) < prov_cap)
                snprintf(prov, prov_cap, "%s", code + 18);
            else
                *ok = false;
        } else if (strcasecmp(code, "HibernationState/Hibernated") == 0 && hib) {
            *hib = true;
        }
    }
}

static enum tw_err vm_disk(const json_t *dk, const char *path, char *id, char *name,
                           size_t name_cap, char *caching, size_t caching_cap,
                           struct tw_error *err)
{
    if (!json_is_object(dk))
        return tw_error_set(err, TW_EPARSE, "%s must be an object", path);
    char mp[128];
    snprintf(mp, sizeof(mp), "%s.managedDisk", path);
    const json_t *md = get(dk, "managedDisk");
    if (md && !json_is_null(md) && !json_is_object(md))
        return tw_error_set(err, TW_EPARSE, "%s must be an object", mp);
    char p2[128];
    snprintf(p2, sizeof(p2), "%s.", path);
    char m2[140];
    snprintf(m2, sizeof(m2), "%s.", mp);
    if (!str(dk, p2, "name", 0, name, name_cap, err) ||
        !str(dk, p2, "caching", 0, caching, caching_cap, err) ||
        (json_is_object(md) && !str(md, m2, "id", 0, id, TW_ARM_ID_MAX, err)))
        return TW_EPARSE;
    return TW_OK;
}

static enum tw_err vm_from(const json_t *o, const char *path, struct tw_arm_vm *vm,
                           struct tw_error *err)
{
    memset(vm, 0, sizeof(*vm));
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "%.*s%sa VM must be a JSON object",
                            path[0] ? (int)strlen(path) - 1 : 0, path, path[0] ? ": " : "");
    struct tw_vm *v = &vm->vm;
    const json_t *pr = get(o, "properties");
    if (pr && !json_is_null(pr) && !json_is_object(pr))
        return tw_error_set(err, TW_EPARSE, "%sproperties must be an object", path);
    char pp[96];
    snprintf(pp, sizeof(pp), "%sproperties.", path);
    if (!str(o, path, "id", TW_JX_REQUIRED | TW_JX_NONEMPTY, v->resource_id,
             sizeof(v->resource_id), err) ||
        !str(o, path, "name", TW_JX_REQUIRED | TW_JX_NONEMPTY, v->name, sizeof(v->name), err) ||
        !str(o, path, "location", 0, v->location, sizeof(v->location), err) ||
        !str(pr, pp, "provisioningState", 0, vm->provisioning_state,
             sizeof(vm->provisioning_state), err) ||
        !tags(o, path, v->tags, &v->n_tags, err))
        return TW_EPARSE;
    if (!tw_arm_id_split(v->resource_id, v->subscription_id, sizeof(v->subscription_id),
                         v->resource_group, sizeof(v->resource_group), NULL, 0)) {
        char idt[96];
        safe_copy(idt, sizeof(idt), v->resource_id, strlen(v->resource_id));
        return tw_error_set(err, TW_EPARSE, "%sid \"%s\" is not a VM's resource id", path, idt);
    }
    const json_t *hw = get(pr, "hardwareProfile");
    if (hw && !json_is_null(hw)) {
        char hp[128];
        snprintf(hp, sizeof(hp), "%shardwareProfile.", pp);
        if (!json_is_object(hw))
            return tw_error_set(err, TW_EPARSE, "%shardwareProfile must be an object", pp);
        if (!str(hw, hp, "vmSize", 0, v->vm_size, sizeof(v->vm_size), err))
            return TW_EPARSE;
    }
    const json_t *sp = get(pr, "storageProfile");
    if (sp && !json_is_null(sp)) {
        if (!json_is_object(sp))
            return tw_error_set(err, TW_EPARSE, "%sstorageProfile must be an object", pp);
        char dp[160];
        const json_t *os = get(sp, "osDisk");
        if (os && !json_is_null(os)) {
            snprintf(dp, sizeof(dp), "%sstorageProfile.osDisk", pp);
            if (vm_disk(os, dp, vm->os_disk_id, vm->os_disk_name, sizeof(vm->os_disk_name),
                        vm->os_disk_caching, sizeof(vm->os_disk_caching), err) != TW_OK)
                return TW_EPARSE;
        }
        const json_t *dd = get(sp, "dataDisks");
        if (dd && !json_is_null(dd) && !json_is_array(dd))
            return tw_error_set(err, TW_EPARSE, "%sstorageProfile.dataDisks must be an array",
                                pp);
        size_t max = sizeof(vm->data) / sizeof(vm->data[0]);
        if (json_array_size(dd) > max)
            return tw_error_set(err, TW_EPARSE,
                                "%sstorageProfile.dataDisks has %zu disks, more than %zu", pp,
                                json_array_size(dd), max);
        size_t i;
        const json_t *x;
        json_array_foreach(dd, i, x)
        {
            snprintf(dp, sizeof(dp), "%sstorageProfile.dataDisks[%zu]", pp, i);
            if (vm_disk(x, dp, vm->data[i].id, vm->data[i].name, sizeof(vm->data[i].name),
                        vm->data[i].caching, sizeof(vm->data[i].caching), err) != TW_OK)
                return TW_EPARSE;
            int64_t lun = 0;
            char dp2[170];
            snprintf(dp2, sizeof(dp2), "%s.", dp);
            if (!tw_jx_int(get(x, "lun"), dp2, "lun", 0, 255, TW_JX_REQUIRED | TW_JX_DECIMAL,
                           &lun, err))
                return TW_EPARSE;
            vm->data[i].lun = (int)lun;
            vm->n_data = i + 1;
        }
    }
    const json_t *iv = get(pr, "instanceView");
    if (iv && !json_is_null(iv)) {
        bool ok;
        if (!json_is_object(iv))
            return tw_error_set(err, TW_EPARSE, "%sinstanceView must be an object", pp);
        statuses(iv, vm->power_state, sizeof(vm->power_state), &vm->hibernated, NULL, 0, &ok);
        if (!ok)
            return tw_error_set(err, TW_EPARSE,
                                "%sinstanceView.statuses must be an array of "
                                "{\"code\": \"Kind/value\"} (short values)",
                                pp);
    }
    return TW_OK;
}

enum tw_err tw_arm_vm_parse(const char *buf, size_t len, struct tw_arm_vm *vm,
                            struct tw_error *err)
{
    json_t *root = tw_json_load(buf, len, 0, "ARM VM answer", err);
    if (!root) {
        memset(vm, 0, sizeof(*vm));
        return TW_EPARSE;
    }
    enum tw_err rc = vm_from(root, "", vm, err);
    json_decref(root);
    if (rc != TW_OK) {
        prefixed(err, "ARM VM answer");
        memset(vm, 0, sizeof(*vm));
    }
    return rc;
}

enum tw_err tw_arm_instance_view_parse2(const char *buf, size_t len, char *power, size_t cap,
                                        bool *hibernated, char *prov, size_t prov_cap,
                                        struct tw_error *err)
{
    if (power && cap)
        power[0] = '\0';
    if (prov && prov_cap)
        prov[0] = '\0';
    if (hibernated)
        *hibernated = false;
    json_t *root = tw_json_load(buf, len, 0, "ARM instance view", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    bool ok = false, hib = false;
    if (json_is_object(root))
        statuses(root, power, cap, &hib, prov, prov_cap, &ok);
    if (!ok) {
        rc = tw_error_set(err, TW_EPARSE,
                          "ARM instance view: expected {\"statuses\": [{\"code\": "
                          "\"PowerState/...\"}, ...]} with short codes");
        if (power && cap)
            power[0] = '\0';
        if (prov && prov_cap)
            prov[0] = '\0';
    } else if (hibernated) {
        *hibernated = hib;
    }
    json_decref(root);
    return rc;
}

enum tw_err tw_arm_instance_view_parse(const char *buf, size_t len, char *power, size_t cap,
                                       struct tw_error *err)
{
    return tw_arm_instance_view_parse2(buf, len, power, cap, NULL, NULL, 0, err);
}

/* ---- pages ---- */

/* The page's value array and nextLink. */
static enum tw_err page_open(const char *buf, size_t len, const char *what, json_t **root,
                             const json_t **items, char *next, size_t next_cap,
                             struct tw_error *err)
{
    if (next && next_cap)
        next[0] = '\0';
    *root = tw_json_load(buf, len, 0, what, err);
    if (!*root)
        return TW_EPARSE;
    *items = get(*root, "value");
    if (!json_is_array(*items))
        return tw_error_set(err, TW_EPARSE, "%s: expected {\"value\": [...], \"nextLink\": ...}",
                            what);
    const json_t *nl = get(*root, "nextLink");
    if (nl && !json_is_null(nl)) {
        if (!json_is_string(nl) || json_string_length(nl) >= next_cap ||
            strlen(json_string_value(nl)) != json_string_length(nl))
            return tw_error_set(err, TW_EPARSE, "%s: nextLink must be a URL under %zu bytes",
                                what, next_cap);
        memcpy(next, json_string_value(nl), json_string_length(nl) + 1);
    }
    return TW_OK;
}

enum tw_err tw_arm_disk_page_parse(const char *buf, size_t len,
                                   enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                                   void *arg, char *next, size_t next_cap,
                                   struct tw_error *err)
{
    json_t *root = NULL;
    const json_t *items = NULL;
    enum tw_err rc = page_open(buf, len, "ARM disks page", &root, &items, next, next_cap, err);
    struct tw_arm_disk *d = rc == TW_OK ? malloc(sizeof(*d)) : NULL;
    if (rc == TW_OK && !d)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory for a disk");
    size_t i;
    const json_t *x;
    if (rc == TW_OK) {
        json_array_foreach(items, i, x)
        {
            char path[40];
            snprintf(path, sizeof(path), "value[%zu].", i);
            if ((rc = disk_from(x, path, d, err)) != TW_OK) {
                prefixed(err, "ARM disks page");
                break;
            }
            if (fn && (rc = fn(arg, d)) != TW_OK)
                break;
        }
    }
    free(d);
    json_decref(root);
    if (rc != TW_OK && next && next_cap)
        next[0] = '\0';
    return rc;
}

enum tw_err tw_arm_vm_page_parse(const char *buf, size_t len,
                                 enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm),
                                 void *arg, char *next, size_t next_cap,
                                 struct tw_error *err)
{
    json_t *root = NULL;
    const json_t *items = NULL;
    enum tw_err rc = page_open(buf, len, "ARM VMs page", &root, &items, next, next_cap, err);
    struct tw_arm_vm *vm = rc == TW_OK ? malloc(sizeof(*vm)) : NULL;
    if (rc == TW_OK && !vm)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory for a VM");
    size_t i;
    const json_t *x;
    if (rc == TW_OK) {
        json_array_foreach(items, i, x)
        {
            char path[40];
            snprintf(path, sizeof(path), "value[%zu].", i);
            if ((rc = vm_from(x, path, vm, err)) != TW_OK) {
                prefixed(err, "ARM VMs page");
                break;
            }
            if (fn && (rc = fn(arg, vm)) != TW_OK)
                break;
        }
    }
    free(vm);
    json_decref(root);
    if (rc != TW_OK && next && next_cap)
        next[0] = '\0';
    return rc;
}

/* ---- errors ---- */

const char *tw_arm_fault_name(enum tw_arm_fault f)
{
    switch (f) {
    case TW_ARM_FAULT_NONE: return "none";
    case TW_ARM_FAULT_THROTTLED: return "throttled";
    case TW_ARM_FAULT_BUSY: return "busy";
    case TW_ARM_FAULT_CONFLICT: return "conflict";
    case TW_ARM_FAULT_NOT_ALLOWED: return "not_allowed";
    case TW_ARM_FAULT_TYPE_REFUSED: return "type_refused";
    case TW_ARM_FAULT_NOT_FOUND: return "not_found";
    case TW_ARM_FAULT_AUTH: return "auth";
    case TW_ARM_FAULT_SERVER: return "server";
    case TW_ARM_FAULT_NETWORK: return "network";
    case TW_ARM_FAULT_OTHER: return "other";
    }
    return "other";
}

static bool has(const char *hay, const char *needle)
{
    return strcasestr(hay, needle) != NULL;
}

/* M with every '...' or "..." span (a resource's name, as ARM quotes
 * them) blanked to spaces, into OUT of CAP bytes. */
static void unquoted(const char *m, char *out, size_t cap)
{
    size_t n = 0;
    char open = 0;
    const char *start = m;
    for (; *m && n + 1 < cap; m++) {
        char ch = *m;
        /* An opening quote follows no letter or digit: "disk's" has none. */
        bool after_word = m > start && isalnum((unsigned char)m[-1]);
        if (open) {
            if (ch == open)
                open = 0;
            out[n++] = ' ';
        } else if ((ch == '\'' || ch == '"') && !after_word && strchr(m + 1, ch)) {
            open = ch;
            out[n++] = ' ';
        } else {
            out[n++] = ch;
        }
    }
    out[n] = '\0';
}

/* The daily quota of type changes, in the wordings Azure and the
 * simulator use ("changed 2 times in the last 24 hours", "at most 2 times
 * per day", "only change disk type twice per day"). */
static bool quota_words(const char *w)
{
    return (has(w, "has been changed") && has(w, "times in the last 24 hours")) ||
           has(w, "times per day") || has(w, "twice per day") || has(w, "twice a day") ||
           has(w, "change disk type twice") || has(w, "type change limit") ||
           has(w, "quota of type changes");
}

/* A running VM's state refusing the change. */
static bool running_words(const char *w)
{
    return has(w, "attached to running vm") || has(w, "attached to a running vm") ||
           has(w, "attached to a running virtual machine") || has(w, "vm is running") ||
           has(w, "virtual machine is running") || has(w, "deallocate the vm") ||
           has(w, "deallocate the virtual machine") || has(w, "vm must be deallocated") ||
           has(w, "vm to be deallocated") || has(w, "while the vm is running");
}

/* The fault of an error object's words (STATUS 0: a failed operation's
 * body, no HTTP status of its own). */
static enum tw_arm_fault fault_of(long status, const struct tw_arm_error *e, const char *target,
                                  bool any_too_many)
{
    const char *c = e->code, *m = e->message;
    bool busy = strcasecmp(c, "RetryableErrorDueToAnotherOperation") == 0 ||
                has(m, "being used by another operation") ||
                has(m, "another operation is in progress") ||
                strcasecmp(c, "OperationPreempted") == 0;
    bool sku_target = has(target, "sku") || has(target, "storageAccountType");
    if (busy)
        return TW_ARM_FAULT_BUSY;
    if (status == 429 || strcasecmp(c, "TooManyRequests") == 0 ||
        (strcasecmp(c, "OperationNotAllowed") == 0 && any_too_many))
        return TW_ARM_FAULT_THROTTLED;
    if (strcasecmp(c, "OperationNotAllowed") == 0) {
        /* Phrases only, matched in the message with its quoted names
         * blanked: a disk called 'sap-running-data0' must not make a
         * refusal a conflict.  The quota's wording first: it names the
         * limit, and a later "deallocate" in it would mislead. */
        char words[sizeof(e->message)];
        unquoted(m, words, sizeof(words));
        if (quota_words(words) || has(e->detail_code, "Quota"))
            return TW_ARM_FAULT_NOT_ALLOWED;
        /* The VM's state forbids it: "attached to running VM ...
         * Deallocate the VM or detach the disk". */
        if (running_words(words) || has(e->detail_code, "VMRunning") ||
            has(e->detail_code, "VirtualMachineRunning"))
            return TW_ARM_FAULT_CONFLICT;
        if (sku_target && (has(m, "not supported") || has(m, "can't be converted") ||
                           has(m, "cannot be converted") || has(m, "migrate")))
            return TW_ARM_FAULT_TYPE_REFUSED;
        return TW_ARM_FAULT_NOT_ALLOWED;
    }
    if (strcasecmp(c, "Conflict") == 0)
        return TW_ARM_FAULT_CONFLICT;
    if ((strcasecmp(c, "InvalidParameter") == 0 || strcasecmp(c, "PropertyChangeNotAllowed") == 0 ||
         strcasecmp(c, "BadRequest") == 0) &&
        (sku_target || has(m, "sku") || has(m, "storage account type")))
        return TW_ARM_FAULT_TYPE_REFUSED;
    if (status == 409)
        return TW_ARM_FAULT_CONFLICT;
    if (status == 404 || status == 410 || strcasecmp(c, "ResourceNotFound") == 0 ||
        strcasecmp(c, "NotFound") == 0)
        return TW_ARM_FAULT_NOT_FOUND;
    if (status == 401 || status == 403 || strcasecmp(c, "AuthorizationFailed") == 0 ||
        strcasecmp(c, "LinkedAuthorizationFailed") == 0 ||
        strcasecmp(c, "InvalidAuthenticationToken") == 0)
        return TW_ARM_FAULT_AUTH;
    if (status >= 500 && status <= 599)
        return TW_ARM_FAULT_SERVER;
    if (strcasecmp(c, "InternalServerError") == 0 || strcasecmp(c, "InternalExecutionError") == 0)
        return TW_ARM_FAULT_SERVER;
    return TW_ARM_FAULT_OTHER;
}

/* Reads an error object (the inside of {"error": ...}, or a bare one). */
static void error_words(const json_t *e, struct tw_arm_error *out, char *target, size_t tcap,
                        bool *too_many)
{
    *too_many = false;
    target[0] = '\0';
    if (!json_is_object(e))
        return;
    const json_t *c = get(e, "code"), *m = get(e, "message"), *t = get(e, "target");
    if (json_is_string(c))
        safe_copy(out->code, sizeof(out->code), json_string_value(c), json_string_length(c));
    if (json_is_string(m))
        safe_copy(out->message, sizeof(out->message), json_string_value(m),
                  json_string_length(m));
    if (json_is_string(t))
        safe_copy(target, tcap, json_string_value(t), json_string_length(t));
    const json_t *det = get(e, "details");
    size_t i;
    const json_t *d;
    json_array_foreach(det, i, d)
    {
        const json_t *dc = get(d, "code");
        if (!json_is_string(dc))
            continue;
        if (!out->detail_code[0])
            safe_copy(out->detail_code, sizeof(out->detail_code), json_string_value(dc),
                      json_string_length(dc));
        if (strcasecmp(json_string_value(dc), "TooManyRequests") == 0)
            *too_many = true;
    }
}

void tw_arm_error_classify(long status, const char *buf, size_t len, struct tw_arm_error *out)
{
    memset(out, 0, sizeof(*out));
    out->status = status;
    if (status >= 200 && status <= 299) {
        out->fault = TW_ARM_FAULT_NONE;
        return;
    }
    if (status == 0) {
        out->fault = TW_ARM_FAULT_NETWORK;
        return;
    }
    char target[128] = "";
    bool too_many = false;
    json_t *root = buf && len ? json_loadb(buf, len, 0, NULL) : NULL;
    if (json_is_object(root)) {
        const json_t *e = get(root, "error");
        /* The compute throttling doc shows the object without the
         * wrapper; ARM's contract wraps it: take both. */
        error_words(json_is_object(e) ? e : root, out, target, sizeof(target), &too_many);
    }
    json_decref(root);
    out->fault = fault_of(status, out, target, too_many);
}

/* ---- operations ---- */

enum tw_err tw_arm_op_status_parse(const char *buf, size_t len, char *status, size_t cap,
                                   struct tw_arm_error *fail, struct tw_error *err)
{
    if (status && cap)
        status[0] = '\0';
    if (fail)
        memset(fail, 0, sizeof(*fail));
    json_t *root = tw_json_load(buf, len, 0, "ARM operation status", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    char st[64];
    if (!json_is_object(root)) {
        rc = tw_error_set(err, TW_EPARSE, "ARM operation status: not a JSON object");
    } else if (!str(root, "", "status", TW_JX_REQUIRED | TW_JX_NONEMPTY, st, sizeof(st), err)) {
        rc = prefixed(err, "ARM operation status");
    } else if (strlen(st) >= cap) {
        rc = tw_error_set(err, TW_EPARSE, "ARM operation status: status is longer than %zu bytes",
                          cap - 1);
    } else {
        memcpy(status, st, strlen(st) + 1);
        if (fail && (strcasecmp(st, "Failed") == 0 || strcasecmp(st, "Canceled") == 0)) {
            char target[128];
            bool too_many;
            error_words(get(root, "error"), fail, target, sizeof(target), &too_many);
            fail->fault = fault_of(0, fail, target, too_many);
            if (!fail->code[0])
                snprintf(fail->code, sizeof(fail->code), "%s", st);
        }
    }
    json_decref(root);
    if (rc != TW_OK && status && cap)
        status[0] = '\0';
    return rc;
}

/* ---- Retry-After ---- */

static int month_of(const char *m)
{
    static const char *const names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++)
        if (strncmp(m, names[i], 3) == 0)
            return i + 1;
    return 0;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* "08:49:37" */
static bool clock_of(const char *s, int *h, int *mi, int *se)
{
    return digits(s, 2, h) && s[2] == ':' && digits(s + 3, 2, mi) && s[5] == ':' &&
           digits(s + 6, 2, se) && *h < 24 && *mi < 60 && *se <= 60;
}

static const char *const wkday[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const weekday[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                      "Friday", "Saturday", "Sunday"};

/* The three forms of RFC 9110 5.6.7 into seconds since 1970. */
static bool http_date(const char *s, int64_t *out)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    size_t n = strlen(s);
    bool ok = false;
    int w;
    for (w = 0; w < 7; w++) {
        size_t wl = strlen(weekday[w]);
        if (n > 3 && strncmp(s, wkday[w], 3) == 0 && s[3] == ',') {
            /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
            ok = n == 29 && s[4] == ' ' && digits(s + 5, 2, &d) && s[7] == ' ' &&
                 (mo = month_of(s + 8)) && s[11] == ' ' && digits(s + 12, 4, &y) &&
                 s[16] == ' ' && clock_of(s + 17, &h, &mi, &se) && strcmp(s + 25, " GMT") == 0;
            break;
        }
        if (n > wl && strncmp(s, weekday[w], wl) == 0 && s[wl] == ',') {
            /* obsolete RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
            const char *p = s + wl + 1;
            int yy = 0;
            ok = strlen(p) == 23 && p[0] == ' ' && digits(p + 1, 2, &d) && p[3] == '-' &&
                 (mo = month_of(p + 4)) && p[7] == '-' && digits(p + 8, 2, &yy) && p[10] == ' ' &&
                 clock_of(p + 11, &h, &mi, &se) && strcmp(p + 19, " GMT") == 0;
            /* RFC 9110: a two-digit year more than 50 years ahead is in the past century. */
            y = yy < 70 ? 2000 + yy : 1900 + yy;
            break;
        }
        if (n == 24 && strncmp(s, wkday[w], 3) == 0 && s[3] == ' ') {
            /* asctime: "Sun Nov  6 08:49:37 1994" */
            int d1 = 0;
            ok = (mo = month_of(s + 4)) && s[7] == ' ' &&
                 (s[8] == ' ' ? digits(s + 9, 1, &d1) : digits(s + 8, 2, &d1)) && s[10] == ' ' &&
                 clock_of(s + 11, &h, &mi, &se) && s[19] == ' ' && digits(s + 20, 4, &y);
            d = d1;
            break;
        }
    }
    if (!ok || d < 1 || d > tw_days_in_month(y, mo))
        return false;
    if (se == 60)
        se = 59;
    *out = tw_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    return true;
}

#define RETRY_AFTER_MAX_S 86400 /* a day: longer is a server's mistake */

bool tw_arm_retry_after_parse(const char *value, int64_t now_s, long *out)
{
    *out = 0;
    if (!value)
        return false;
    while (*value == ' ' || *value == '\t')
        value++;
    size_t n = strlen(value);
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t' || value[n - 1] == '\r'))
        n--;
    if (n == 0 || n > 40)
        return false;
    char v[48];
    memcpy(v, value, n);
    v[n] = '\0';
    int64_t secs = 0;
    if (isdigit((unsigned char)v[0])) {
        for (size_t i = 0; i < n; i++) {
            if (!isdigit((unsigned char)v[i]))
                return false;
            if (secs <= RETRY_AFTER_MAX_S)
                secs = secs * 10 + (v[i] - '0');
        }
    } else {
        int64_t at;
        if (!http_date(v, &at))
            return false;
        secs = at - now_s;
        if (secs < 0)
            secs = 0;
    }
    if (secs > RETRY_AFTER_MAX_S)
        secs = RETRY_AFTER_MAX_S;
    *out = (long)(secs * 1000);
    return true;
}

/* ---- login ---- */

enum tw_err tw_arm_login_parse(const char *buf, size_t len, char *token, size_t cap,
                               int64_t *expires_in, struct tw_error *err)
{
    if (token && cap)
        token[0] = '\0';
    *expires_in = 0;
    /* Not tw_json_load: jansson's words quote the text near the fault, and
     * a login answer that echoes the request would bring the secret. */
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    if (!root)
        return tw_error_set(err, TW_EPARSE,
                            "login answer is not valid JSON at line %d, column %d (%zu bytes, "
                            "not shown)",
                            je.line, je.column, len);
    enum tw_err rc = TW_OK;
    const json_t *e = get(root, "error"), *t = get(root, "access_token"),
                 *tt = get(root, "token_type");
    if (!json_is_object(root)) {
        rc = tw_error_set(err, TW_EPARSE, "login answer: not a JSON object");
    } else if (json_is_string(e)) {
        const json_t *d = get(root, "error_description");
        char code[96] = "", desc[300] = "";
        safe_copy(code, sizeof(code), json_string_value(e), json_string_length(e));
        if (json_is_string(d)) {
            /* Entra's descriptions go on with "\r\nTrace ID: ..." lines. */
            const char *s = json_string_value(d);
            safe_copy(desc, sizeof(desc), s, strcspn(s, "\r\n"));
        }
        rc = tw_error_set(err, TW_EPERM, "the login refused: %s%s%s", code, desc[0] ? ": " : "",
                          desc);
    } else if (!json_is_string(t) || json_string_length(t) == 0 ||
               json_string_length(t) >= cap ||
               strlen(json_string_value(t)) != json_string_length(t) ||
               strpbrk(json_string_value(t), "\r\n ")) {
        rc = tw_error_set(err, TW_EPARSE,
                          "login answer: access_token must be a string of 1 to %zu bytes "
                          "without spaces or line breaks",
                          cap - 1);
    } else if (tt && !json_is_null(tt) &&
               (!json_is_string(tt) || strcasecmp(json_string_value(tt), "Bearer") != 0)) {
        rc = tw_error_set(err, TW_EPARSE, "login answer: token_type must be \"Bearer\"");
    } else if (!tw_jx_int(get(root, "expires_in"), "", "expires_in", 0, 366 * 86400,
                          TW_JX_REQUIRED | TW_JX_DECIMAL, expires_in, err)) {
        rc = prefixed(err, "login answer");
        *expires_in = 0;
    } else {
        memcpy(token, json_string_value(t), json_string_length(t) + 1);
    }
    json_decref(root);
    return rc;
}
