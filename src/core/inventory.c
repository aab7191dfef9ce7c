/* inventory.c - the VM + disks model and its JSON form. */
#include "core/inventory.h"
#include "core/jsonread.h"
#include "core/jsonx.h"

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

/* ---- reading ---- */

static bool get_str(const json_t *o, const char *path, const char *key, bool required,
                    bool nullable, char *dst, size_t dstlen, struct tw_error *err)
{
    const json_t *v = json_object_get(o, key);
    dst[0] = '\0';
    if (!v || (nullable && json_is_null(v))) {
        if (required && !v) {
            tw_error_set(err, TW_EPARSE, "%s%s is missing", path, key);
            return false;
        }
        return true;
    }
    if (!json_is_string(v)) {
        tw_error_set(err, TW_EPARSE, "%s%s must be a string", path, key);
        return false;
    }
    size_t n = json_string_length(v);
    if (n >= dstlen || strlen(json_string_value(v)) != n) {
        tw_error_set(err, TW_EPARSE, "%s%s is too long (%zu bytes, at most %zu) or holds NUL",
                     path, key, n, dstlen - 1);
        return false;
    }
    memcpy(dst, json_string_value(v), n + 1);
    return true;
}

static enum tw_err disk_from_value(const json_t *o, size_t idx, struct tw_disk *d,
                                   struct tw_error *err)
{
    char path[48], buf[32];
    snprintf(path, sizeof(path), "disks[%zu].", idx);
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "disks[%zu] must be an object", idx);
    if (!get_str(o, path, "name", true, false, d->name, sizeof(d->name), err) ||
        !get_str(o, path, "role", true, false, buf, sizeof(buf), err))
        return TW_EPARSE;
    if (strcmp(buf, "os") == 0)
        d->role = TW_DISK_OS;
    else if (strcmp(buf, "data") == 0)
        d->role = TW_DISK_DATA;
    else
        return tw_error_set(err, TW_EPARSE, "%srole \"%s\" is neither os nor data", path, buf);
    const json_t *lun = json_object_get(o, "lun");
    d->lun = -1;
    if (lun && !json_is_null(lun)) {
        if (!json_is_integer(lun) || json_integer_value(lun) < 0 ||
            json_integer_value(lun) > 255)
            return tw_error_set(err, TW_EPARSE, "%slun must be an integer 0..255 or null", path);
        d->lun = (int)json_integer_value(lun);
    }
    if (!get_str(o, path, "sku", true, false, d->sku, sizeof(d->sku), err))
        return TW_EPARSE;
    const json_t *size = json_object_get(o, "size_gib");
    if (!size)
        return tw_error_set(err, TW_EPARSE, "%ssize_gib is missing", path);
    if (!json_is_integer(size) || json_integer_value(size) < 0 ||
        json_integer_value(size) > 1048576)
        return tw_error_set(err, TW_EPARSE, "%ssize_gib must be an integer 0..1048576", path);
    d->size_gib = json_integer_value(size);
    if (!get_str(o, path, "tier", false, true, d->tier, sizeof(d->tier), err) ||
        !get_str(o, path, "caching", false, false, buf, sizeof(buf), err) ||
        !get_str(o, path, "managed_disk_id", false, false, d->managed_disk_id,
                 sizeof(d->managed_disk_id), err) ||
        !get_str(o, path, "device", false, true, d->device, sizeof(d->device), err))
        return TW_EPARSE;
    d->caching = TW_CACHE_NONE;
    if (buf[0] && tw_caching_parse(buf, &d->caching) != TW_OK)
        return tw_error_set(err, TW_EPARSE, "%scaching \"%s\" is not None, ReadOnly or ReadWrite",
                            path, buf);
    const json_t *wa = json_object_get(o, "write_accelerator");
    if (wa && !json_is_boolean(wa))
        return tw_error_set(err, TW_EPARSE, "%swrite_accelerator must be a boolean", path);
    d->write_accelerator = wa && json_is_true(wa);
    return TW_OK;
}

static enum tw_err from_value(const json_t *v, struct tw_inventory *inv, struct tw_error *err)
{
    if (!json_is_object(v))
        return tw_error_set(err, TW_EPARSE, "the inventory must be a JSON object");
    const json_t *vm = json_object_get(v, "vm");
    if (!vm || !json_is_object(vm))
        return tw_error_set(err, TW_EPARSE, "inventory.vm is %s", vm ? "not an object" : "missing");
    struct tw_vm *m = &inv->vm;
    if (!get_str(vm, "vm.", "name", true, false, m->name, sizeof(m->name), err) ||
        !get_str(vm, "vm.", "resource_id", false, false, m->resource_id, sizeof(m->resource_id),
                 err) ||
        !get_str(vm, "vm.", "subscription_id", false, false, m->subscription_id,
                 sizeof(m->subscription_id), err) ||
        !get_str(vm, "vm.", "resource_group", false, false, m->resource_group,
                 sizeof(m->resource_group), err) ||
        !get_str(vm, "vm.", "location", true, false, m->location, sizeof(m->location), err) ||
        !get_str(vm, "vm.", "vm_size", true, false, m->vm_size, sizeof(m->vm_size), err))
        return TW_EPARSE;
    const json_t *tags = json_object_get(vm, "tags");
    if (tags && !json_is_null(tags)) {
        if (!json_is_object(tags))
            return tw_error_set(err, TW_EPARSE, "vm.tags must be an object of strings");
        if (json_object_size(tags) > TW_INV_MAX_TAGS)
            return tw_error_set(err, TW_EPARSE, "vm.tags has %zu tags, at most %d",
                                json_object_size(tags), TW_INV_MAX_TAGS);
        const char *k;
        const json_t *tv;
        json_object_foreach((json_t *)tags, k, tv) {
            struct tw_tag *t = &m->tags[m->n_tags];
            if (strlen(k) >= sizeof(t->key))
                return tw_error_set(err, TW_EPARSE, "a vm.tags key is longer than %zu bytes",
                                    sizeof(t->key) - 1);
            memcpy(t->key, k, strlen(k) + 1);
            if (!get_str(tags, "vm.tags.", k, true, false, t->value, sizeof(t->value), err))
                return TW_EPARSE;
            m->n_tags++;
        }
    }
    const json_t *disks = json_object_get(v, "disks");
    if (!disks || !json_is_array(disks))
        return tw_error_set(err, TW_EPARSE, "inventory.disks is %s",
                            disks ? "not an array" : "missing");
    if (json_array_size(disks) > TW_INV_MAX_DISKS)
        return tw_error_set(err, TW_EPARSE, "inventory.disks has %zu disks, at most %d",
                            json_array_size(disks), TW_INV_MAX_DISKS);
    size_t i;
    const json_t *d;
    json_array_foreach(disks, i, d) {
        enum tw_err rc = disk_from_value(d, i, &inv->disks[i], err);
        if (rc != TW_OK)
            return rc;
        inv->n_disks++;
    }
    return TW_OK;
}

enum tw_err tw_inventory_from_value(const json_t *v, struct tw_inventory *inv,
                                    struct tw_error *err)
{
    tw_inventory_init(inv);
    enum tw_err rc = from_value(v, inv, err);
    /* Nothing half-read survives a failure: a caller that ignores the code
     * must not find the first disks of a rejected file. */
    if (rc != TW_OK)
        tw_inventory_init(inv);
    return rc;
}

enum tw_err tw_inventory_from_json(const char *buf, size_t len, struct tw_inventory *inv,
                                   struct tw_error *err)
{
    json_t *root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, NULL, err);
    if (!root) {
        tw_inventory_init(inv);
        return TW_EPARSE;
    }
    const json_t *v = root;
    const json_t *inner = json_object_get(root, "inventory");
    enum tw_err rc;
    /* A report whose "inventory" is not an object is a broken report, not
     * an inventory at the top level: say so rather than "vm is missing". */
    if (inner && !json_is_object(inner)) {
        tw_inventory_init(inv);
        rc = tw_error_set(err, TW_EPARSE, "inventory must be an object");
        json_decref(root);
        return rc;
    }
    if (inner)
        v = inner;
    rc = tw_inventory_from_value(v, inv, err);
    json_decref(root);
    return rc;
}

/* ---- reading in one pass (the report reader's fast path) ----
 *
 * The same rules as from_value above, checked as the members come: a
 * value of the wrong type is refused where it stands, a missing required
 * member once its object has ended.  Messages name the field from the
 * report's root. */

/* Reads a string member into DST (CAP bytes); null gives "" if NULLABLE. */
static bool rd_str(struct tw_jr *r, const char *path, const char *key, bool nullable, char *dst,
                   size_t cap)
{
    if (nullable && tw_jr_null(r)) {
        dst[0] = '\0';
        return true;
    }
    if (tw_jr_peek(r) != '"')
        return tw_jr_fail(r, TW_EPARSE, "%s.%s must be a string", path, key);
    size_t n;
    bool over;
    if (!tw_jr_string(r, dst, cap, &n, &over))
        return false;
    if (over)
        return tw_jr_fail(r, TW_EPARSE, "%s.%s is too long (%zu bytes, at most %zu) or holds NUL",
                          path, key, n, cap - 1);
    return true;
}

/* Reads an integer member in LO..HI; false with no message when it is
 * something else (the caller words it). */
static bool rd_int(struct tw_jr *r, int64_t lo, int64_t hi, int64_t *out, bool *ok)
{
    char c = tw_jr_peek(r);
    *ok = false;
    if (c != '-' && (c < '0' || c > '9'))
        return true;
    struct tw_jr_num n;
    if (!tw_jr_number(r, &n))
        return false;
    *ok = n.is_int && n.i >= lo && n.i <= hi;
    *out = n.i;
    return true;
}

enum { D_NAME = 1, D_ROLE = 2, D_SKU = 4, D_SIZE = 8 };

static bool disk_read(struct tw_jr *r, const char *where, size_t idx, struct tw_disk *d)
{
    char path[64], role[32] = "", caching[32] = "", key[32];
    tw_jr_path_at(path, sizeof(path), where, ".disks", idx);
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s must be an object", path);
    memset(d, 0, sizeof(*d));
    d->lun = -1;
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok = true;
        int64_t v = 0;
        if (strcmp(key, "name") == 0) {
            seen |= D_NAME;
            ok = rd_str(r, path, key, false, d->name, sizeof(d->name));
        } else if (strcmp(key, "role") == 0) {
            seen |= D_ROLE;
            ok = rd_str(r, path, key, false, role, sizeof(role));
        } else if (strcmp(key, "lun") == 0) {
            if (tw_jr_null(r))
                continue;
            bool good;
            ok = rd_int(r, 0, 255, &v, &good);
            if (ok && !good)
                ok = tw_jr_fail(r, TW_EPARSE, "%s.lun must be an integer 0..255 or null", path);
            d->lun = (int)v;
        } else if (strcmp(key, "sku") == 0) {
            seen |= D_SKU;
            ok = rd_str(r, path, key, false, d->sku, sizeof(d->sku));
        } else if (strcmp(key, "size_gib") == 0) {
            seen |= D_SIZE;
            bool good;
            ok = rd_int(r, 0, 1048576, &d->size_gib, &good);
            if (ok && !good)
                ok = tw_jr_fail(r, TW_EPARSE, "%s.size_gib must be an integer 0..1048576", path);
        } else if (strcmp(key, "tier") == 0) {
            ok = rd_str(r, path, key, true, d->tier, sizeof(d->tier));
        } else if (strcmp(key, "caching") == 0) {
            ok = rd_str(r, path, key, false, caching, sizeof(caching));
        } else if (strcmp(key, "managed_disk_id") == 0) {
            ok = rd_str(r, path, key, false, d->managed_disk_id, sizeof(d->managed_disk_id));
        } else if (strcmp(key, "device") == 0) {
            ok = rd_str(r, path, key, true, d->device, sizeof(d->device));
        } else if (strcmp(key, "write_accelerator") == 0) {
            char c = tw_jr_peek(r);
            if (c != 't' && c != 'f')
                ok = tw_jr_fail(r, TW_EPARSE, "%s.write_accelerator must be a boolean", path);
            else
                ok = tw_jr_bool(r, &d->write_accelerator);
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    if (r->rc != TW_OK)
        return false;
    static const char *const names[] = {"name", "role", "sku", "size_gib"};
    for (int i = 0; i < 4; i++)
        if (!(seen & (1u << i)))
            return tw_jr_fail(r, TW_EPARSE, "%s.%s is missing", path, names[i]);
    if (strcmp(role, "os") == 0)
        d->role = TW_DISK_OS;
    else if (strcmp(role, "data") == 0)
        d->role = TW_DISK_DATA;
    else
        return tw_jr_fail(r, TW_EPARSE, "%s.role \"%s\" is neither os nor data", path, role);
    d->caching = TW_CACHE_NONE;
    if (caching[0] && tw_caching_parse(caching, &d->caching) != TW_OK)
        return tw_jr_fail(r, TW_EPARSE, "%s.caching \"%s\" is not None, ReadOnly or ReadWrite",
                          path, caching);
    return true;
}

static bool tags_read(struct tw_jr *r, const char *where, struct tw_vm *m)
{
    if (tw_jr_null(r))
        return true;
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s.vm.tags must be an object of strings", where);
    struct tw_jr_obj o = {0};
    char path[64], key[sizeof(m->tags[0].key)];
    tw_jr_path(path, sizeof(path), where, ".vm.tags");
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        if (m->n_tags >= TW_INV_MAX_TAGS)
            return tw_jr_fail(r, TW_EPARSE, "%s.vm.tags has more than %d tags", where,
                              TW_INV_MAX_TAGS);
        if (o.key_over)
            return tw_jr_fail(r, TW_EPARSE, "%s: a vm.tags key is longer than %zu bytes", where,
                              sizeof(key) - 1);
        struct tw_tag *t = &m->tags[m->n_tags];
        memset(t, 0, sizeof(*t));
        memcpy(t->key, key, strlen(key) + 1);
        if (!rd_str(r, path, t->key, false, t->value, sizeof(t->value)))
            return false;
        m->n_tags++;
    }
    return r->rc == TW_OK;
}

enum { V_NAME = 1, V_LOCATION = 2, V_SIZE = 4 };

static bool vm_read(struct tw_jr *r, const char *where, struct tw_vm *m)
{
    char path[48], key[32];
    tw_jr_path(path, sizeof(path), where, ".vm");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "name") == 0) {
            seen |= V_NAME;
            ok = rd_str(r, path, key, false, m->name, sizeof(m->name));
        } else if (strcmp(key, "resource_id") == 0) {
            ok = rd_str(r, path, key, false, m->resource_id, sizeof(m->resource_id));
        } else if (strcmp(key, "subscription_id") == 0) {
            ok = rd_str(r, path, key, false, m->subscription_id, sizeof(m->subscription_id));
        } else if (strcmp(key, "resource_group") == 0) {
            ok = rd_str(r, path, key, false, m->resource_group, sizeof(m->resource_group));
        } else if (strcmp(key, "location") == 0) {
            seen |= V_LOCATION;
            ok = rd_str(r, path, key, false, m->location, sizeof(m->location));
        } else if (strcmp(key, "vm_size") == 0) {
            seen |= V_SIZE;
            ok = rd_str(r, path, key, false, m->vm_size, sizeof(m->vm_size));
        } else if (strcmp(key, "tags") == 0) {
            ok = tags_read(r, where, m);
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    if (r->rc != TW_OK)
        return false;
    static const char *const names[] = {"name", "location", "vm_size"};
    for (int i = 0; i < 3; i++)
        if (!(seen & (1u << i)))
            return tw_jr_fail(r, TW_EPARSE, "%s.%s is missing", path, names[i]);
    return true;
}

bool tw_inventory_read(struct tw_jr *r, struct tw_inventory *inv, const char *where)
{
    /* Only what is used is cleared: the disk and tag arrays are most of
     * the 100 KiB and most reports fill a few entries. */
    memset(&inv->vm, 0, offsetof(struct tw_vm, tags));
    inv->n_disks = 0;
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s must be a JSON object", where);
    bool have_vm = false, have_disks = false;
    char key[16];
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "vm") == 0) {
            have_vm = true;
            ok = tw_jr_peek(r) == '{'
                     ? vm_read(r, where, &inv->vm)
                     : tw_jr_fail(r, TW_EPARSE, "%s.vm is not an object", where);
        } else if (strcmp(key, "disks") == 0) {
            have_disks = true;
            if (tw_jr_peek(r) != '[') {
                ok = tw_jr_fail(r, TW_EPARSE, "%s.disks is not an array", where);
            } else {
                struct tw_jr_arr a = {0};
                ok = true;
                inv->n_disks = 0;
                while (ok && tw_jr_element(r, &a)) {
                    if (inv->n_disks >= TW_INV_MAX_DISKS)
                        ok = tw_jr_fail(r, TW_EPARSE, "%s.disks has more than %d disks", where,
                                        TW_INV_MAX_DISKS);
                    else if ((ok = disk_read(r, where, inv->n_disks,
                                             &inv->disks[inv->n_disks])))
                        inv->n_disks++;
                }
                ok = ok && r->rc == TW_OK;
            }
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    if (r->rc != TW_OK)
        return false;
    if (!have_vm)
        return tw_jr_fail(r, TW_EPARSE, "%s.vm is missing", where);
    if (!have_disks)
        return tw_jr_fail(r, TW_EPARSE, "%s.disks is missing", where);
    return true;
}
