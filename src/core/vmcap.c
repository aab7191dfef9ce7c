/*
 * vmcap.c - VM sizes' disk limits, from the bundled table
 * (tierwise.vm-disk-caps/1), a Resource SKUs response or the store's text.
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
    t->sorted = false;
}

static int by_name(const void *a, const void *b)
{
    return strcasecmp(((const struct tw_vmcap *)a)->vm_size, ((const struct tw_vmcap *)b)->vm_size);
}

void tw_vmcap_table_sort(struct tw_vmcap_table *t)
{
    if (t->n > 1)
        qsort(t->caps, t->n, sizeof(*t->caps), by_name);
    t->sorted = true;
}

const struct tw_vmcap *tw_vmcap_find(const struct tw_vmcap_table *t, const char *vm_size)
{
    if (!vm_size || !t->n)
        return NULL;
    if (t->sorted) {
        /* A fleet's verdicts look a size up per VM: 1,112 sizes bisect in
         * 11 steps where a scan compares 500 names on average. */
        size_t lo = 0, hi = t->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = strcasecmp(t->caps[mid].vm_size, vm_size);
            if (c == 0)
                return &t->caps[mid];
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++)
        if (strcasecmp(t->caps[i].vm_size, vm_size) == 0)
            return &t->caps[i];
    return NULL;
}

bool tw_vmcap_has_cap(const struct tw_vmcap *c)
{
    return c && (c->iops > 0 || c->bytes_per_s > 0);
}

const char *tw_vmcap_premium_name(enum tw_vmcap_premium p)
{
    return p == TW_VMCAP_PREMIUM_YES ? "yes" : p == TW_VMCAP_PREMIUM_NO ? "no" : "unknown";
}

static void set_source(struct tw_vmcap *c, const char *s)
{
    snprintf(c->source, sizeof(c->source), "%s", s);
}

/* An optional whole figure KEY of row IDX (null or absent: 0, unknown). */
static enum tw_err row_int(const json_t *o, size_t idx, const struct tw_vmcap *c,
                           const char *key, int64_t *out, struct tw_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return TW_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > MAX_IOPS)
        return tw_error_set(err, TW_EPARSE, "vms[%zu].%s (%s) must be an integer 0..%lld or null",
                            idx, key, c->vm_size, MAX_IOPS);
    *out = json_integer_value(v);
    return TW_OK;
}

/* An optional MB/s figure KEY of row IDX, as bytes per second. */
static enum tw_err row_mbps(const json_t *o, size_t idx, const struct tw_vmcap *c,
                            const char *key, int64_t *out, struct tw_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return TW_OK;
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(d) || d < 0 || d > MAX_MBPS)
        return tw_error_set(err, TW_EPARSE, "vms[%zu].%s (%s) must be a number 0..%g or null",
                            idx, key, c->vm_size, MAX_MBPS);
    *out = llround(d * 1e6);
    return TW_OK;
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
    enum tw_err rc;
    if ((rc = row_int(o, idx, c, "uncached_disk_iops", &c->iops, err)) != TW_OK ||
        (rc = row_mbps(o, idx, c, "uncached_disk_mbps", &c->bytes_per_s, err)) != TW_OK ||
        (rc = row_int(o, idx, c, "uncached_burst_iops", &c->burst_iops, err)) != TW_OK ||
        (rc = row_mbps(o, idx, c, "uncached_burst_mbps", &c->burst_bytes_per_s, err)) != TW_OK ||
        (rc = row_int(o, idx, c, "cached_iops", &c->cached_iops, err)) != TW_OK ||
        (rc = row_mbps(o, idx, c, "cached_mbps", &c->cached_bytes_per_s, err)) != TW_OK)
        return rc;
    const json_t *prem = json_object_get(o, "premium_storage");
    if (prem && !json_is_null(prem) && !json_is_boolean(prem))
        return tw_error_set(err, TW_EPARSE, "vms[%zu].premium_storage (%s) must be true, false "
                            "or null", idx, c->vm_size);
    c->premium = json_is_true(prem)    ? TW_VMCAP_PREMIUM_YES
                 : json_is_false(prem) ? TW_VMCAP_PREMIUM_NO
                                       : TW_VMCAP_PREMIUM_UNKNOWN;
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
        t->n++;
    }
    /* Sorted, a name listed twice (in any case) sits next to itself. */
    tw_vmcap_table_sort(t);
    for (i = 1; i < t->n; i++)
        if (strcasecmp(t->caps[i - 1].vm_size, t->caps[i].vm_size) == 0)
            return tw_error_set(err, TW_EPARSE, "vms: %s is listed twice (as %s and %s; names "
                                "are compared without case)", t->caps[i].vm_size,
                                t->caps[i - 1].vm_size, t->caps[i].vm_size);
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

/* ---- one cap as the store keeps it ---- */

static const char *const json_figures[] = {"iops",        "bytes_per_s",       "burst_iops",
                                           "burst_bytes_per_s", "cached_iops",
                                           "cached_bytes_per_s"};

static int64_t *figure_slot(struct tw_vmcap *c, size_t k)
{
    int64_t *slots[] = {&c->iops,        &c->bytes_per_s,       &c->burst_iops,
                        &c->burst_bytes_per_s, &c->cached_iops, &c->cached_bytes_per_s};
    return slots[k];
}

char *tw_vmcap_to_json(const struct tw_vmcap *c)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const int64_t vals[] = {c->iops,        c->bytes_per_s,       c->burst_iops,
                            c->burst_bytes_per_s, c->cached_iops, c->cached_bytes_per_s};
    int bad = json_object_set_new(o, "vm_size", json_string(c->vm_size));
    for (size_t k = 0; k < sizeof(json_figures) / sizeof(json_figures[0]); k++)
        bad |= json_object_set_new(o, json_figures[k], json_integer(vals[k]));
    bad |= json_object_set_new(o, "premium_storage",
                               c->premium == TW_VMCAP_PREMIUM_UNKNOWN
                                   ? json_null()
                                   : json_boolean(c->premium == TW_VMCAP_PREMIUM_YES));
    bad |= json_object_set_new(o, "source", json_string(c->source));
    char *s = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

enum tw_err tw_vmcap_from_json(const char *buf, size_t len, struct tw_vmcap *out,
                               struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    json_t *o = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, "VM size caps", err);
    if (!o)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    const json_t *v;
    if (!json_is_object(o)) {
        rc = tw_error_set(err, TW_EPARSE, "VM size caps: must be a JSON object");
        goto out;
    }
    const char *strs[] = {"vm_size", "source"};
    char *dst[] = {out->vm_size, out->source};
    size_t cap[] = {sizeof(out->vm_size), sizeof(out->source)};
    for (size_t k = 0; k < 2; k++) {
        v = json_object_get(o, strs[k]);
        if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap[k] ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            rc = tw_error_set(err, TW_EPARSE, "VM size caps: %s must be a string of 1 to %zu "
                              "bytes", strs[k], cap[k] - 1);
            goto out;
        }
        memcpy(dst[k], json_string_value(v), json_string_length(v) + 1);
    }
    for (size_t k = 0; k < sizeof(json_figures) / sizeof(json_figures[0]); k++) {
        v = json_object_get(o, json_figures[k]);
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            rc = tw_error_set(err, TW_EPARSE, "VM size caps of %s: %s must be a whole number "
                              "from 0", out->vm_size, json_figures[k]);
            goto out;
        }
        *figure_slot(out, k) = json_integer_value(v);
    }
    v = json_object_get(o, "premium_storage");
    if (!v || (!json_is_null(v) && !json_is_boolean(v))) {
        rc = tw_error_set(err, TW_EPARSE, "VM size caps of %s: premium_storage must be true, "
                          "false or null", out->vm_size);
        goto out;
    }
    out->premium = json_is_true(v)    ? TW_VMCAP_PREMIUM_YES
                   : json_is_false(v) ? TW_VMCAP_PREMIUM_NO
                                      : TW_VMCAP_PREMIUM_UNKNOWN;
out:
    if (rc != TW_OK)
        memset(out, 0, sizeof(*out));
    json_decref(o);
    return rc;
}
