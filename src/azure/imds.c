/* imds.c - the IMDS instance document: fetch and parse into an inventory. */
#include "azure/imds.h"
#include "core/jsonread.h"
#include "core/jsonx.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#define PATHLEN 96

/*
 * KEY of object O.  The documentation's own samples misspell the case of
 * some keys ("Priority"), so an exact miss falls back to a case-insensitive
 * search rather than treating the field as absent.
 */
static const json_t *member(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (v)
        return v;
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)o, k, val)
    {
        if (strcasecmp(k, key) == 0)
            return val;
    }
    return NULL;
}

/* The getters of core/jsonx on member(), their messages after "IMDS
 * answer: ". */
static enum tw_err answer(bool ok, struct tw_error *err)
{
    if (ok)
        return TW_OK;
    if (err) {
        static const char pre[] = "IMDS answer: ";
        char msg[sizeof(err->msg)];
        size_t n = strnlen(err->msg, sizeof(msg) - sizeof(pre));
        memcpy(msg, pre, sizeof(pre) - 1);
        memcpy(msg + sizeof(pre) - 1, err->msg, n);
        msg[sizeof(pre) - 1 + n] = '\0';
        memcpy(err->msg, msg, sizeof(msg));
    }
    return TW_EPARSE;
}

/* A string field into DST.  Absent or null: "" (an error when REQUIRED);
 * "" is accepted only when ALLOW_EMPTY.  Never truncates. */
static enum tw_err get_str(const json_t *o, const char *path, const char *key, bool required,
                           bool allow_empty, char *dst, size_t dstlen, struct tw_error *err)
{
    unsigned opt = TW_JX_NULLABLE | (required ? TW_JX_REQUIRED : 0) |
                   (required && !allow_empty ? TW_JX_NONEMPTY : 0);
    dst[0] = '\0';
    return answer(tw_jx_str(member(o, key), path, key, opt, dst, dstlen, err), err);
}

/* An integer sent as a decimal string (IMDS) or a number.  *SET is false
 * when absent, null or "" (unknown); REQUIRED makes those errors. */
static enum tw_err get_int(const json_t *o, const char *path, const char *key, bool required,
                           int64_t min, int64_t max, int64_t *out, bool *set, struct tw_error *err)
{
    const json_t *v = member(o, key);
    unsigned opt = TW_JX_NULLABLE | TW_JX_DECIMAL | (required ? TW_JX_REQUIRED : 0);
    *out = 0;
    *set = !tw_jx_absent(v, opt);
    if (required && json_is_string(v) && json_string_length(v) == 0) {
        char f[128];
        tw_error_set(err, TW_EPARSE, "%s must not be empty", tw_jr_field(f, sizeof(f), path, key));
        return answer(false, err);
    }
    return answer(tw_jx_int(v, path, key, min, max, opt, out, err), err);
}

/* "true"/"false" in any case, a JSON boolean, or absent/"" (false). */
static enum tw_err get_bool(const json_t *o, const char *path, const char *key, bool *out,
                            struct tw_error *err)
{
    *out = false;
    return answer(tw_jx_bool(member(o, key), path, key, TW_JX_NULLABLE | TW_JX_TEXT_BOOL, out,
                             err),
                  err);
}

static enum tw_err get_obj(const json_t *o, const char *path, const char *key, bool required,
                           const json_t **out, struct tw_error *err)
{
    bool ok;
    *out = tw_jx_want(member(o, key), path, key, JSON_OBJECT,
                      TW_JX_NULLABLE | (required ? TW_JX_REQUIRED : 0), &ok, err);
    return answer(ok, err);
}

static enum tw_err disk_parse(const json_t *o, const char *path, enum tw_disk_role role,
                              struct tw_disk *d, struct tw_error *err)
{
    memset(d, 0, sizeof(*d));
    d->role = role;
    d->lun = -1;
    if (!json_is_object(o)) /* PATH ends in '.': leave it out */
        return tw_error_set(err, TW_EPARSE, "IMDS answer: %.*s must be an object",
                            (int)(strlen(path) ? strlen(path) - 1 : 0), path);
    char sub[PATHLEN + 16], buf[32];
    int64_t n;
    bool set;
    const json_t *md;
    enum tw_err rc;
    if ((rc = get_str(o, path, "name", true, false, d->name, sizeof(d->name), err)))
        return rc;
    if (role == TW_DISK_DATA) {
        /* Azure's LUNs run 0..63; the inventory allows what SCSI can say. */
        if ((rc = get_int(o, path, "lun", true, 0, 255, &n, &set, err)))
            return rc;
        d->lun = (int)n;
    }
    /* "" for an unmanaged (VHD) or ephemeral disk that has no size field. */
    if ((rc = get_int(o, path, "diskSizeGB", false, 0, 1048576, &n, &set, err)))
        return rc;
    d->size_gib = n;
    if ((rc = get_str(o, path, "caching", false, true, buf, sizeof(buf), err)))
        return rc;
    d->caching = TW_CACHE_NONE;
    if (buf[0] && tw_caching_parse(buf, &d->caching) != TW_OK)
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: %scaching \"%s\" is not None, ReadOnly or ReadWrite",
                            path, buf);
    if ((rc = get_bool(o, path, "writeAcceleratorEnabled", &d->write_accelerator, err)))
        return rc;
    /* IMDS does not document a tier; take one when a newer version (or a
     * simulator) sends it, else the verdict derives it from the size. */
    if ((rc = get_str(o, path, "tier", false, true, d->tier, sizeof(d->tier), err)))
        return rc;
    if ((rc = get_obj(o, path, "managedDisk", false, &md, err)))
        return rc;
    if (md) {
        snprintf(sub, sizeof(sub), "%smanagedDisk.", path);
        if ((rc = get_str(md, sub, "id", false, true, d->managed_disk_id,
                          sizeof(d->managed_disk_id), err)) ||
            (rc = get_str(md, sub, "storageAccountType", false, true, d->sku, sizeof(d->sku), err)))
            return rc;
    }
    return TW_OK;
}

static bool tag_known(const struct tw_vm *vm, const char *key)
{
    for (size_t i = 0; i < vm->n_tags; i++)
        if (strcmp(vm->tags[i].key, key) == 0)
            return true;
    return false;
}

static enum tw_err add_tag(struct tw_vm *vm, const char *k, size_t kn, const char *v, size_t vn,
                           const char *where, struct tw_error *err)
{
    struct tw_tag t;
    if (kn == 0)
        return TW_OK; /* "a;;b" and the like: nothing to keep */
    if (kn >= sizeof(t.key) || vn >= sizeof(t.value))
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: %s: tag \"%.40s\" has a name over %zu or a value over "
                            "%zu bytes",
                            where, k, sizeof(t.key) - 1, sizeof(t.value) - 1);
    memcpy(t.key, k, kn);
    t.key[kn] = '\0';
    memcpy(t.value, v, vn);
    t.value[vn] = '\0';
    /* Azure tag names are unique; a repeat adds nothing and would collapse
     * in the JSON object anyway. */
    if (tag_known(vm, t.key))
        return TW_OK;
    if (vm->n_tags >= TW_INV_MAX_TAGS)
        return tw_error_set(err, TW_EPARSE, "IMDS answer: %s has more than %d tags", where,
                            TW_INV_MAX_TAGS);
    vm->tags[vm->n_tags++] = t;
    return TW_OK;
}

/*
 * tagsList ([{"name","value"}], from 2019-06-04) is exact; the older tags
 * string "k:v;k2:v2" can't carry ';' in a value or ':' in a name, so it is
 * the fallback.
 */
static enum tw_err tags_parse(const json_t *c, struct tw_vm *vm, struct tw_error *err)
{
    const json_t *list = member(c, "tagsList");
    if (list && !json_is_null(list)) {
        if (!json_is_array(list))
            return tw_error_set(err, TW_EPARSE, "IMDS answer: compute.tagsList must be an array");
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e)
        {
            char path[PATHLEN];
            snprintf(path, sizeof(path), "compute.tagsList[%zu]", i);
            const json_t *k = json_is_object(e) ? member(e, "name") : NULL;
            const json_t *v = json_is_object(e) ? member(e, "value") : NULL;
            if (!json_is_string(k) || (v && !json_is_null(v) && !json_is_string(v)))
                return tw_error_set(err, TW_EPARSE,
                                    "IMDS answer: %s must be {\"name\": string, \"value\": "
                                    "string}",
                                    path);
            const char *vs = json_is_string(v) ? json_string_value(v) : "";
            size_t vn = json_is_string(v) ? json_string_length(v) : 0;
            if (strlen(json_string_value(k)) != json_string_length(k) || strlen(vs) != vn)
                return tw_error_set(err, TW_EPARSE, "IMDS answer: %s holds a NUL", path);
            enum tw_err rc =
                add_tag(vm, json_string_value(k), json_string_length(k), vs, vn, path, err);
            if (rc)
                return rc;
        }
        return TW_OK;
    }
    const json_t *tags = member(c, "tags");
    if (!tags || json_is_null(tags))
        return TW_OK;
    if (!json_is_string(tags))
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: compute.tags must be a string like \"k:v;k2:v2\"");
    const char *s = json_string_value(tags), *end = s + json_string_length(tags);
    while (s < end) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *e = semi ? semi : end;
        const char *colon = memchr(s, ':', (size_t)(e - s));
        const char *kend = colon ? colon : e;
        const char *v = colon ? colon + 1 : e;
        enum tw_err rc =
            add_tag(vm, s, (size_t)(kend - s), v, (size_t)(e - v), "compute.tags", err);
        if (rc)
            return rc;
        s = e + 1;
    }
    return TW_OK;
}

static enum tw_err parse_root(const json_t *root, struct tw_inventory *inv, struct tw_error *err)
{
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE, "IMDS answer: not a JSON object");
    const json_t *c, *sp, *os;
    enum tw_err rc;
    if ((rc = get_obj(root, "", "compute", true, &c, err)))
        return rc;
    struct tw_vm *vm = &inv->vm;
    if ((rc = get_str(c, "compute.", "name", true, false, vm->name, sizeof(vm->name), err)) ||
        (rc = get_str(c, "compute.", "vmSize", true, false, vm->vm_size, sizeof(vm->vm_size),
                      err)) ||
        (rc = get_str(c, "compute.", "location", true, false, vm->location, sizeof(vm->location),
                      err)) ||
        (rc = get_str(c, "compute.", "subscriptionId", false, true, vm->subscription_id,
                      sizeof(vm->subscription_id), err)) ||
        (rc = get_str(c, "compute.", "resourceGroupName", false, true, vm->resource_group,
                      sizeof(vm->resource_group), err)) ||
        (rc = get_str(c, "compute.", "resourceId", false, true, vm->resource_id,
                      sizeof(vm->resource_id), err)) ||
        (rc = tags_parse(c, vm, err)))
        return rc;
    if ((rc = get_obj(c, "compute.", "storageProfile", false, &sp, err)))
        return rc;
    if (!sp)
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: compute.storageProfile is missing (IMDS gives it from "
                            "api-version 2019-06-01; this client asks for %s)",
                            TW_AZ_IMDS_API_VERSION);
    if ((rc = get_obj(sp, "compute.storageProfile.", "osDisk", true, &os, err)) ||
        (rc = disk_parse(os, "compute.storageProfile.osDisk.", TW_DISK_OS, &inv->disks[0], err)))
        return rc;
    inv->n_disks = 1;
    const json_t *dd = member(sp, "dataDisks");
    if (!dd || json_is_null(dd))
        return TW_OK;
    if (!json_is_array(dd))
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: compute.storageProfile.dataDisks must be an array");
    if (json_array_size(dd) > TW_INV_MAX_DISKS - inv->n_disks)
        return tw_error_set(err, TW_EPARSE,
                            "IMDS answer: compute.storageProfile.dataDisks has %zu disks, at "
                            "most %zu fit",
                            json_array_size(dd), TW_INV_MAX_DISKS - inv->n_disks);
    size_t first = inv->n_disks, i;
    const json_t *e;
    json_array_foreach(dd, i, e)
    {
        char path[PATHLEN];
        snprintf(path, sizeof(path), "compute.storageProfile.dataDisks[%zu].", i);
        struct tw_disk *d = &inv->disks[inv->n_disks];
        if ((rc = disk_parse(e, path, TW_DISK_DATA, d, err)))
            return rc;
        /* Two disks on one LUN would both map to the same device. */
        for (size_t j = first; j < inv->n_disks; j++)
            if (inv->disks[j].lun == d->lun)
                return tw_error_set(err, TW_EPARSE,
                                    "IMDS answer: %slun %d is also dataDisks[%zu]'s", path, d->lun,
                                    j - first);
        inv->n_disks++;
    }
    return TW_OK;
}

enum tw_err tw_az_imds_parse(const char *buf, size_t len, struct tw_inventory *inv,
                             struct tw_error *err)
{
    tw_inventory_init(inv);
    json_t *root = tw_json_load(buf, len, 0, "IMDS answer", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = parse_root(root, inv, err);
    json_decref(root);
    if (rc != TW_OK)
        tw_inventory_init(inv);
    return rc;
}

enum tw_err tw_az_imds_fetch(const struct tw_az_http_opts *o, const char *imds_base,
                             struct tw_inventory *inv, bool *unreachable, struct tw_error *err)
{
    struct tw_az_http_opts def;
    if (!o) {
        tw_az_http_opts_imds(&def);
        o = &def;
    }
    if (unreachable)
        *unreachable = false;
    tw_inventory_init(inv);
    char url[512];
    if ((size_t)snprintf(url, sizeof(url), "%s/metadata/instance?api-version=%s", imds_base,
                         TW_AZ_IMDS_API_VERSION) >= sizeof(url))
        return tw_error_set(err, TW_EINVAL, "the IMDS URL %s is too long", imds_base);
    struct tw_az_http *h = tw_az_http_new(o, err);
    if (!h)
        return err ? err->code : TW_ENOMEM;
    static const char *const hdrs[] = {"Metadata: true", "Accept: application/json", NULL};
    struct tw_az_http_resp resp;
    enum tw_err rc = tw_az_http_request(h, "GET", url, hdrs, NULL, 0, &resp, err);
    if (rc != TW_OK && unreachable)
        *unreachable = tw_az_http_unreachable(&resp);
    if (rc == TW_OK)
        rc = tw_az_imds_parse(resp.body.data ? resp.body.data : "", resp.body.len, inv, err);
    tw_az_http_resp_cleanup(&resp);
    tw_az_http_free(h);
    return rc;
}
