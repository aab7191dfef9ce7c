/*
 * vmcap.c - VM sizes' uncached disk limits, from the bundled table
 * (tierwise.vm-disk-caps/1) or a Resource SKUs response.
 *
 * The table gives MB/s as the VM size pages do (MBps = 10^6 bytes/s); ARM
 * gives bytes/s in one of two encodings (see tw_vmcap_arm_bytes_per_s).
 * Both end up as bytes per second in 10^6 units, the unit of the disks'
 * ratings, so the verdict compares like with like.
 */
#include "core/vmcap.h"
#include "core/jsonx.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TW_VMCAP_SCHEMA "tierwise.vm-disk-caps/1"
#define MAX_SIZES 4096            /* Azure offers about a thousand VM sizes */
#define MAX_IOPS 100000000LL      /* per VM; the largest today are near 400,000 */
#define MAX_MBPS 1000000.0        /* per VM, MB/s */

void tw_vmcap_table_cleanup(struct tw_vmcap_table *t)
{
    free(t->caps);
    t->caps = NULL;
    t->n = 0;
}

const struct tw_vmcap *tw_vmcap_find(const struct tw_vmcap_table *t, const char *vm_size)
{
    for (size_t i = 0; vm_size && i < t->n; i++)
        if (strcasecmp(t->caps[i].vm_size, vm_size) == 0)
            return &t->caps[i];
    return NULL;
}

static void set_source(struct tw_vmcap *c, const char *s)
{
    snprintf(c->source, sizeof(c->source), "%s", s);
}

static enum tw_err cap_from_value(const json_t *o, size_t idx, struct tw_vmcap *c,
                                  struct tw_error *err)
{
    memset(c, 0, sizeof(*c));
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "vms[%zu] must be an object", idx);
    const json_t *name = json_object_get(o, "vm_size");
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        json_string_length(name) >= sizeof(c->vm_size) ||
        strlen(json_string_value(name)) != json_string_length(name))
        return tw_error_set(err, TW_EPARSE, "vms[%zu].vm_size must be a string of 1 to %zu bytes",
                            idx, sizeof(c->vm_size) - 1);
    memcpy(c->vm_size, json_string_value(name), json_string_length(name) + 1);
    const json_t *iops = json_object_get(o, "uncached_disk_iops");
    if (iops && !json_is_null(iops)) {
        if (!json_is_integer(iops) || json_integer_value(iops) < 0 ||
            json_integer_value(iops) > MAX_IOPS)
            return tw_error_set(err, TW_EPARSE,
                                "vms[%zu].uncached_disk_iops (%s) must be an integer 0..%lld or "
                                "null", idx, c->vm_size, MAX_IOPS);
        c->iops = json_integer_value(iops);
    }
    const json_t *mbps = json_object_get(o, "uncached_disk_mbps");
    if (mbps && !json_is_null(mbps)) {
        double d = json_is_number(mbps) ? json_number_value(mbps) : NAN;
        if (!isfinite(d) || d < 0 || d > MAX_MBPS)
            return tw_error_set(err, TW_EPARSE,
                                "vms[%zu].uncached_disk_mbps (%s) must be a number 0..%g or null",
                                idx, c->vm_size, MAX_MBPS);
        c->bytes_per_s = llround(d * 1e6);
    }
    set_source(c, "bundled table");
    return TW_OK;
}

static enum tw_err table_from_root(const json_t *root, struct tw_vmcap_table *t,
                                   struct tw_error *err)
{
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE, "the VM caps table must be a JSON object");
    /* The research copy has no schema_version; a different one is foreign. */
    const json_t *sv = json_object_get(root, "schema_version");
    if (sv && (!json_is_string(sv) || strcmp(json_string_value(sv), TW_VMCAP_SCHEMA) != 0))
        return tw_error_set(err, TW_EPARSE, "not a VM caps table: schema_version must be \"%s\"",
                            TW_VMCAP_SCHEMA);
    const json_t *vms = json_object_get(root, "vms");
    if (!json_is_array(vms))
        return tw_error_set(err, TW_EPARSE, "vms is %s (an array of VM sizes)",
                            vms ? "not an array" : "missing");
    if (json_array_size(vms) > MAX_SIZES)
        return tw_error_set(err, TW_EPARSE, "vms has %zu entries, at most %d",
                            json_array_size(vms), MAX_SIZES);
    if (json_array_size(vms) == 0)
        return TW_OK;
    t->caps = calloc(json_array_size(vms), sizeof(*t->caps));
    if (!t->caps)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the VM caps table");
    size_t i;
    const json_t *v;
    json_array_foreach(vms, i, v) {
        enum tw_err rc = cap_from_value(v, i, &t->caps[i], err);
        if (rc != TW_OK)
            return rc;
        if (tw_vmcap_find(t, t->caps[i].vm_size))
            return tw_error_set(err, TW_EPARSE, "vms[%zu]: %s is listed twice", i,
                                t->caps[i].vm_size);
        t->n++;
    }
    return TW_OK;
}

enum tw_err tw_vmcap_table_parse(const char *buf, size_t len, struct tw_vmcap_table *t,
                                 struct tw_error *err)
{
    t->n = 0;
    t->caps = NULL;
    json_t *root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, NULL, err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = table_from_root(root, t, err);
    json_decref(root);
    if (rc != TW_OK)
        tw_vmcap_table_cleanup(t);
    return rc;
}

enum tw_err tw_vmcap_table_builtin(struct tw_vmcap_table *t, struct tw_error *err)
{
    return tw_vmcap_table_parse((const char *)tw_builtin_vm_caps_json,
                                tw_builtin_vm_caps_json_len, t, err);
}

int64_t tw_vmcap_arm_bytes_per_s(int64_t raw)
{
    if (raw <= 0)
        return 0;
    /* A whole number of 10^6 is the newer encoding: MB x 2^20 only divides
     * by 10^6 when MB is a multiple of 15,625, far above any VM's cap. */
    if (raw % 1000000 == 0)
        return raw;
    /* MB x 2^20 with MB a multiple of 1/4: exact in quarters of 10^6. */
    if (raw % (1LL << 18) == 0)
        return raw / (1LL << 18) * 250000;
    return raw;
}

/* A capability value: a decimal string (or, leniently, a JSON integer). */
static bool cap_number(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return *out >= 0;
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    if (!*s || *s == '-' || *s == '+' || strlen(s) != json_string_length(v))
        return false;
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = n;
    return true;
}

static enum tw_err caps_of_entry(const json_t *e, struct tw_vmcap *out, struct tw_error *err)
{
    const json_t *caps = json_object_get(e, "capabilities");
    if (caps && !json_is_array(caps))
        return tw_error_set(err, TW_EPARSE, "%s: capabilities must be an array", out->vm_size);
    size_t i;
    const json_t *c;
    json_array_foreach(caps, i, c) {
        const json_t *name = json_object_get(c, "name");
        if (!json_is_string(name))
            continue;
        bool is_iops = strcmp(json_string_value(name), "UncachedDiskIOPS") == 0;
        bool is_bytes = strcmp(json_string_value(name), "UncachedDiskBytesPerSecond") == 0;
        if (!is_iops && !is_bytes)
            continue;
        int64_t n;
        if (!cap_number(json_object_get(c, "value"), &n) || n > (is_iops ? MAX_IOPS : INT64_MAX))
            return tw_error_set(err, TW_EPARSE, "%s: capability %s must be a whole number",
                                out->vm_size, json_string_value(name));
        if (is_iops)
            out->iops = n;
        else
            out->bytes_per_s = tw_vmcap_arm_bytes_per_s(n);
    }
    return TW_OK;
}

enum tw_err tw_vmcap_from_resource_skus(const char *buf, size_t len, const char *vm_size,
                                        struct tw_vmcap *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    if (!vm_size || !*vm_size || strlen(vm_size) >= sizeof(out->vm_size))
        return tw_error_set(err, TW_EINVAL, "no VM size to look up in the Resource SKUs");
    json_t *root = tw_json_load(buf, len, 0, "Resource SKUs answer", err);
    if (!root)
        return TW_EPARSE;
    const json_t *items = json_is_array(root) ? root : json_object_get(root, "value");
    enum tw_err rc;
    if (!json_is_array(items)) {
        rc = tw_error_set(err, TW_EPARSE, "Resource SKUs: expected {\"value\": [...]} or an array");
        goto out;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(items, i, e) {
        const json_t *type = json_object_get(e, "resourceType");
        const json_t *name = json_object_get(e, "name");
        if (!json_is_string(type) || !json_is_string(name) ||
            strcasecmp(json_string_value(type), "virtualMachines") != 0 ||
            strcasecmp(json_string_value(name), vm_size) != 0)
            continue;
        snprintf(out->vm_size, sizeof(out->vm_size), "%s", json_string_value(name));
        set_source(out, "arm");
        rc = caps_of_entry(e, out, err);
        goto out;
    }
    rc = tw_error_set(err, TW_ENOENT, "VM size %s is not in the Resource SKUs response", vm_size);
out:
    json_decref(root);
    return rc;
}
