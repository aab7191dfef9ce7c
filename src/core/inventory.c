/* inventory.c - the VM + disks model and its JSON form. */
#include "core/inventory.h"
#include "core/jsonread.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void tw_inventory_init(struct tw_inventory *inv)
{
    memset(inv, 0, sizeof(*inv));
}

static const char *const caching_names[] = {"None", "ReadOnly", "ReadWrite"};

const char *tw_caching_name(enum tw_caching c)
{
    return (unsigned)c < 3 ? caching_names[c] : "None";
}

enum tw_err tw_caching_parse(const char *s, enum tw_caching *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, caching_names[i]) == 0) {
            *out = (enum tw_caching)i;
            return TW_OK;
        }
    }
    return TW_EINVAL;
}

static const char *base(const char *dev)
{
    const char *s = strrchr(dev, '/');
    return s ? s + 1 : dev;
}

const struct tw_disk *tw_inventory_disk_by_device(const struct tw_inventory *inv,
                                                   const char *dev)
{
    if (!dev || !*dev)
        return NULL;
    for (size_t i = 0; i < inv->n_disks; i++) {
        const char *d = inv->disks[i].device;
        if (d[0] && strcmp(base(d), base(dev)) == 0)
            return &inv->disks[i];
    }
    return NULL;
}

/* ---- rating ---- */

void tw_inventory_rate(struct tw_inventory *inv, const struct tw_tier_catalog *cat)
{
    for (size_t i = 0; i < inv->n_disks; i++) {
        struct tw_disk *d = &inv->disks[i];
        /* Unrated, `tier` is what the source said: Azure's own field,
         * which names a performance tier; kept before it is replaced. */
        if (d->rating == TW_RATING_UNSET && !d->perf_tier[0])
            memcpy(d->perf_tier, d->tier, sizeof(d->perf_tier));
        struct tw_disk_rating r;
        tw_tier_rate(cat, d->sku, d->size_gib, d->perf_tier, &r);
        d->rating = r.kind;
        memset(d->tier, 0, sizeof(d->tier));
        memset(d->size_tier, 0, sizeof(d->size_tier));
        if (r.size_tier)
            snprintf(d->size_tier, sizeof(d->size_tier), "%s", r.size_tier->name);
        d->rated_iops = 0;
        d->rated_mbps = 0;
        if (r.tier) {
            snprintf(d->tier, sizeof(d->tier), "%s", r.tier->name);
            d->rated_iops = r.tier->iops;
            d->rated_mbps = r.tier->mbps;
        }
        snprintf(d->rated_why, sizeof(d->rated_why), "%s", r.why);
    }
}

/* ---- writing ---- */

static json_t *str_or_null(const char *s)
{
    return s[0] ? json_string(s) : json_null();
}

json_t *tw_inventory_to_value(const struct tw_inventory *inv)
{
    const struct tw_vm *vm = &inv->vm;
    json_t *root = json_object(), *jvm = json_object(), *tags = json_object(),
           *disks = json_array();
    if (!root || !jvm || !tags || !disks) {
        json_decref(root);
        json_decref(jvm);
        json_decref(tags);
        json_decref(disks);
        return NULL;
    }
    json_object_set_new(jvm, "name", json_string(vm->name));
    if (vm->resource_id[0])
        json_object_set_new(jvm, "resource_id", json_string(vm->resource_id));
    if (vm->subscription_id[0])
        json_object_set_new(jvm, "subscription_id", json_string(vm->subscription_id));
    if (vm->resource_group[0])
        json_object_set_new(jvm, "resource_group", json_string(vm->resource_group));
    json_object_set_new(jvm, "location", json_string(vm->location));
    json_object_set_new(jvm, "vm_size", json_string(vm->vm_size));
    for (size_t i = 0; i < vm->n_tags; i++)
        json_object_set_new(tags, vm->tags[i].key, json_string(vm->tags[i].value));
    json_object_set_new(jvm, "tags", tags);
    json_object_set_new(root, "vm", jvm);
    for (size_t i = 0; i < inv->n_disks; i++) {
        const struct tw_disk *d = &inv->disks[i];
        json_t *o = json_object();
        if (!o)
            break;
        json_object_set_new(o, "name", json_string(d->name));
        json_object_set_new(o, "role", json_string(d->role == TW_DISK_OS ? "os" : "data"));
        json_object_set_new(o, "lun", d->lun >= 0 ? json_integer(d->lun) : json_null());
        json_object_set_new(o, "sku", json_string(d->sku));
        json_object_set_new(o, "size_gib", json_integer(d->size_gib));
        json_object_set_new(o, "tier", str_or_null(d->tier));
        if (d->rating != TW_RATING_UNSET || d->perf_tier[0])
            json_object_set_new(o, "performance_tier", str_or_null(d->perf_tier));
        if (d->rating != TW_RATING_UNSET) {
            json_object_set_new(o, "size_tier", str_or_null(d->size_tier));
            json_object_set_new(o, "rating", json_string(tw_rating_kind_name(d->rating)));
            json_object_set_new(o, "rated_iops",
                                d->rated_iops > 0 ? json_integer(d->rated_iops) : json_null());
            json_object_set_new(o, "rated_mbps",
                                d->rated_mbps > 0 ? json_real(d->rated_mbps) : json_null());
            json_object_set_new(o, "rated_why", str_or_null(d->rated_why));
        }
        json_object_set_new(o, "caching", json_string(tw_caching_name(d->caching)));
        if (d->managed_disk_id[0])
            json_object_set_new(o, "managed_disk_id", json_string(d->managed_disk_id));
        json_object_set_new(o, "write_accelerator", json_boolean(d->write_accelerator));
        json_object_set_new(o, "device", str_or_null(d->device));
        json_array_append_new(disks, o);
    }
    json_object_set_new(root, "disks", disks);
    if (json_array_size(disks) != inv->n_disks || json_object_size(root) != 2) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* ---- reading: one pass over the document (core/jsonread) ----
 *
 * Each member is checked as it comes: a value of the wrong type is refused
 * where it stands, a missing required member once its object has ended.
 * Messages name the field from the document's root. */

enum { D_NAME = 1, D_ROLE = 2, D_SKU = 4, D_SIZE = 8 };

static bool disk_read(struct tw_jr *r, const char *root, size_t idx, struct tw_disk *d)
{
    char path[64], role[32] = "", caching[32] = "", key[32];
    tw_jr_path_at(path, sizeof(path), root, ".disks", idx);
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s must be an object", path);
    memset(d, 0, sizeof(*d));
    d->lun = -1;
    char rating[16] = "";
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok = true;
        int64_t v = -1;
        if (strcmp(key, "name") == 0) {
            seen |= D_NAME;
            ok = tw_jr_get_str(r, path, key, 0, d->name, sizeof(d->name));
        } else if (strcmp(key, "role") == 0) {
            seen |= D_ROLE;
            ok = tw_jr_get_str(r, path, key, 0, role, sizeof(role));
        } else if (strcmp(key, "lun") == 0) {
            ok = tw_jr_get_int(r, path, key, 0, 255, TW_JR_NULLABLE, &v);
            d->lun = (int)v;
        } else if (strcmp(key, "sku") == 0) {
            seen |= D_SKU;
            ok = tw_jr_get_str(r, path, key, 0, d->sku, sizeof(d->sku));
        } else if (strcmp(key, "size_gib") == 0) {
            seen |= D_SIZE;
            ok = tw_jr_get_int(r, path, key, 0, 1048576, 0, &d->size_gib);
        } else if (strcmp(key, "tier") == 0) {
            ok = tw_jr_get_str(r, path, key, TW_JR_NULLABLE, d->tier, sizeof(d->tier));
        } else if (strcmp(key, "performance_tier") == 0) {
            ok = tw_jr_get_str(r, path, key, TW_JR_NULLABLE, d->perf_tier, sizeof(d->perf_tier));
        } else if (strcmp(key, "size_tier") == 0) {
            ok = tw_jr_get_str(r, path, key, TW_JR_NULLABLE, d->size_tier, sizeof(d->size_tier));
        } else if (strcmp(key, "rating") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, rating, sizeof(rating));
        } else if (strcmp(key, "rated_iops") == 0) {
            ok = tw_jr_get_int(r, path, key, 1, 100000000, TW_JR_NULLABLE, &d->rated_iops);
        } else if (strcmp(key, "rated_mbps") == 0) {
            ok = tw_jr_null(r) || tw_jr_get_num(r, path, key, 1, 1000000, &d->rated_mbps);
        } else if (strcmp(key, "rated_why") == 0) {
            ok = tw_jr_get_str(r, path, key, TW_JR_NULLABLE, d->rated_why, sizeof(d->rated_why));
        } else if (strcmp(key, "caching") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, caching, sizeof(caching));
        } else if (strcmp(key, "managed_disk_id") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, d->managed_disk_id, sizeof(d->managed_disk_id));
        } else if (strcmp(key, "device") == 0) {
            ok = tw_jr_get_str(r, path, key, TW_JR_NULLABLE, d->device, sizeof(d->device));
        } else if (strcmp(key, "write_accelerator") == 0) {
            ok = tw_jr_get_bool(r, path, key, &d->write_accelerator);
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    static const char *const names[] = {"name", "role", "sku", "size_gib"};
    if (!tw_jr_need_all(r, path, seen, names, 4))
        return false;
    if (strcmp(role, "os") == 0)
        d->role = TW_DISK_OS;
    else if (strcmp(role, "data") == 0)
        d->role = TW_DISK_DATA;
    else
        return tw_jr_fail(r, TW_EPARSE, "%s.role \"%s\" is neither os nor data", path, role);
    if (rating[0] && !tw_rating_kind_parse(rating, &d->rating))
        return tw_jr_fail(r, TW_EPARSE, "%s.rating \"%s\" is not tier, provisioned or none",
                          path, rating);
    d->caching = TW_CACHE_NONE;
    if (caching[0] && tw_caching_parse(caching, &d->caching) != TW_OK)
        return tw_jr_fail(r, TW_EPARSE, "%s.caching \"%s\" is not None, ReadOnly or ReadWrite",
                          path, caching);
    return true;
}

static bool tags_read(struct tw_jr *r, const char *vmpath, struct tw_vm *m)
{
    if (tw_jr_null(r))
        return true;
    char path[64], key[sizeof(m->tags[0].key)];
    tw_jr_path(path, sizeof(path), vmpath, ".tags");
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s must be an object of strings", path);
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        if (m->n_tags >= TW_INV_MAX_TAGS)
            return tw_jr_fail(r, TW_EPARSE, "%s has more than %d tags", path, TW_INV_MAX_TAGS);
        if (o.key_over)
            return tw_jr_fail(r, TW_EPARSE, "%s has a key longer than %zu bytes", path,
                              sizeof(key) - 1);
        struct tw_tag *t = &m->tags[m->n_tags];
        memset(t, 0, sizeof(*t));
        memcpy(t->key, key, strlen(key) + 1);
        if (!tw_jr_get_str(r, path, t->key, 0, t->value, sizeof(t->value)))
            return false;
        m->n_tags++;
    }
    return r->rc == TW_OK;
}

enum { V_NAME = 1, V_LOCATION = 2, V_SIZE = 4 };

static bool vm_read(struct tw_jr *r, const char *root, struct tw_vm *m)
{
    char path[48], key[32];
    tw_jr_path(path, sizeof(path), root, ".vm");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "name") == 0) {
            seen |= V_NAME;
            ok = tw_jr_get_str(r, path, key, 0, m->name, sizeof(m->name));
        } else if (strcmp(key, "resource_id") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, m->resource_id, sizeof(m->resource_id));
        } else if (strcmp(key, "subscription_id") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, m->subscription_id, sizeof(m->subscription_id));
        } else if (strcmp(key, "resource_group") == 0) {
            ok = tw_jr_get_str(r, path, key, 0, m->resource_group, sizeof(m->resource_group));
        } else if (strcmp(key, "location") == 0) {
            seen |= V_LOCATION;
            ok = tw_jr_get_str(r, path, key, 0, m->location, sizeof(m->location));
        } else if (strcmp(key, "vm_size") == 0) {
            seen |= V_SIZE;
            ok = tw_jr_get_str(r, path, key, 0, m->vm_size, sizeof(m->vm_size));
        } else if (strcmp(key, "tags") == 0) {
            ok = tags_read(r, path, m);
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    static const char *const names[] = {"name", "location", "vm_size"};
    return tw_jr_need_all(r, path, seen, names, 3);
}

bool tw_inventory_read(struct tw_jr *r, struct tw_inventory *inv, const char *root)
{
    /* Only what is used is cleared: the disk and tag arrays are most of
     * the 100 KiB and most reports fill a few entries. */
    memset(&inv->vm, 0, offsetof(struct tw_vm, tags));
    inv->n_disks = 0;
    if (tw_jr_peek(r) != '{')
        return root[0] ? tw_jr_fail(r, TW_EPARSE, "%s must be a JSON object", root)
                       : tw_jr_fail(r, TW_EPARSE, "the inventory must be a JSON object");
    bool have_vm = false, have_disks = false;
    char key[16];
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "vm") == 0) {
            have_vm = true;
            ok = tw_jr_want(r, root, key, '{') && vm_read(r, root, &inv->vm);
        } else if (strcmp(key, "disks") == 0) {
            have_disks = true;
            ok = tw_jr_want(r, root, key, '[');
            struct tw_jr_arr a = {0};
            inv->n_disks = 0;
            while (ok && tw_jr_element(r, &a)) {
                if (inv->n_disks >= TW_INV_MAX_DISKS) {
                    char path[48];
                    ok = tw_jr_fail(r, TW_EPARSE, "%s has more than %d disks",
                                    tw_jr_path(path, sizeof(path), root, ".disks"),
                                    TW_INV_MAX_DISKS);
                } else if ((ok = disk_read(r, root, inv->n_disks, &inv->disks[inv->n_disks]))) {
                    inv->n_disks++;
                }
            }
            ok = ok && r->rc == TW_OK;
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    static const char *const names[] = {"vm", "disks"};
    return tw_jr_need_all(r, root, (have_vm ? 1u : 0u) | (have_disks ? 2u : 0u), names, 2);
}

/* Whether the document's root holds an "inventory" member (a report) and
 * whether that is an object; a skim of the root's members only. */
static bool find_inventory(struct tw_jr *r, void *arg)
{
    int *found = arg; /* 0 none, 1 an object, -1 something else */
    char c = tw_jr_peek(r);
    if (c != '{' && c != '[' && c) /* a bare value is no document, as to jansson */
        return tw_jr_syntax(r, "an inventory must be a JSON object");
    if (c != '{')
        return tw_jr_skip(r);
    struct tw_jr_obj o = {0};
    char key[16];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        if (strcmp(key, "inventory") == 0 && !o.key_over)
            *found = tw_jr_peek(r) == '{' ? 1 : -1;
        if (!tw_jr_skip(r))
            return false;
    }
    return r->rc == TW_OK;
}

struct doc {
    struct tw_inventory *inv;
    bool in_report;
};

static bool doc_read(struct tw_jr *r, void *arg)
{
    struct doc *d = arg;
    if (!d->in_report)
        return tw_inventory_read(r, d->inv, "");
    struct tw_jr_obj o = {0};
    char key[16];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok = strcmp(key, "inventory") == 0 && !o.key_over
                      ? tw_inventory_read(r, d->inv, "inventory")
                      : tw_jr_skip(r);
        if (!ok)
            return false;
    }
    return r->rc == TW_OK;
}

enum tw_err tw_inventory_from_json(const char *buf, size_t len, struct tw_inventory *inv,
                                   struct tw_error *err)
{
    tw_inventory_init(inv);
    /* A report (an "inventory" member at the root) or the inventory itself:
     * the root's keys are skimmed first, so a report's other members never
     * count as the inventory's and an inventory's never as a report's. */
    int found = 0;
    enum tw_err rc = tw_jr_read_doc(buf, len, NULL, TW_JR_MAX_DEPTH, find_inventory, &found, err);
    if (rc == TW_OK && found < 0)
        rc = tw_error_set(err, TW_EPARSE, "inventory must be an object");
    if (rc == TW_OK) {
        struct doc d = {.inv = inv, .in_report = found > 0};
        rc = tw_jr_read_doc(buf, len, NULL, TW_JR_MAX_DEPTH, doc_read, &d, err);
    }
    /* Nothing half-read survives a failure: a caller that ignores the code
     * must not find the first disks of a rejected file. */
    if (rc != TW_OK)
        tw_inventory_init(inv);
    return rc;
}

const struct tw_tag *tw_tag_find(const struct tw_tag *tags, size_t n, const char *key)
{
    for (size_t i = 0; key && i < n; i++)
        if (strcasecmp(tags[i].key, key) == 0)
            return &tags[i];
    return NULL;
}
