/* skus.c - Resource SKUs pages into VM uncached disk caps. */
#include "azure/arm.h"
#include "azure/skus.h"
#include "core/jsonx.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#define MAX_IOPS 100000000LL /* per VM; the largest today are near 400,000 */

/* A capability value: a decimal string (or, leniently, a JSON integer). */
static bool whole(const json_t *v, int64_t *out)
{
    return tw_json_decimal(v, out);
}

/* The capabilities kept, and where they go.  ARM's "combined temp disk
 * and cached" limits are what the older size pages call the cached limits
 * (their column is "max cached and temp storage throughput"). */
static const struct {
    const char *name;
    size_t offset;
    bool bytes; /* a bytes-per-second figure in ARM's two encodings */
} figures[] = {
    {"UncachedDiskIOPS", offsetof(struct tw_vmcap, iops), false},
    {"UncachedDiskBytesPerSecond", offsetof(struct tw_vmcap, bytes_per_s), true},
    {"CombinedTempDiskAndCachedIOPS", offsetof(struct tw_vmcap, cached_iops), false},
    {"CombinedTempDiskAndCachedReadBytesPerSecond", offsetof(struct tw_vmcap, cached_bytes_per_s),
     true},
};

static enum tw_err entry(const json_t *e, size_t idx, struct tw_vmcap *c, bool *keep,
                         struct tw_error *err)
{
    *keep = false;
    memset(c, 0, sizeof(*c));
    if (!json_is_object(e))
        return tw_error_set(err, TW_EPARSE, "Resource SKUs: value[%zu] must be an object", idx);
    const json_t *type = json_object_get(e, "resourceType");
    if (type && !json_is_null(type) && !json_is_string(type))
        return tw_error_set(err, TW_EPARSE,
                            "Resource SKUs: value[%zu].resourceType must be a "
                            "string",
                            idx);
    if (!json_is_string(type) || strcasecmp(json_string_value(type), "virtualMachines") != 0)
        return TW_OK; /* disks, snapshots, availabilitySets, ... */
    const json_t *name = json_object_get(e, "name");
    if (!json_is_string(name) || json_string_length(name) == 0 ||
        json_string_length(name) >= sizeof(c->vm_size) ||
        strlen(json_string_value(name)) != json_string_length(name))
        return tw_error_set(err, TW_EPARSE,
                            "Resource SKUs: value[%zu].name must be a VM size "
                            "name of 1 to %zu bytes",
                            idx, sizeof(c->vm_size) - 1);
    memcpy(c->vm_size, json_string_value(name), json_string_length(name) + 1);
    const json_t *caps = json_object_get(e, "capabilities");
    if (caps && !json_is_null(caps) && !json_is_array(caps))
        return tw_error_set(err, TW_EPARSE,
                            "Resource SKUs: %s (value[%zu]): capabilities must "
                            "be an array",
                            c->vm_size, idx);
    size_t i;
    const json_t *cap;
    json_array_foreach(caps, i, cap)
    {
        const json_t *cn = json_is_object(cap) ? json_object_get(cap, "name") : NULL;
        if (!json_is_string(cn))
            return tw_error_set(err, TW_EPARSE,
                                "Resource SKUs: %s: capabilities[%zu] must be "
                                "{\"name\": ..., \"value\": ...}",
                                c->vm_size, i);
        const char *what = json_string_value(cn);
        if (strcmp(what, "PremiumIO") == 0) {
            const json_t *pv = json_object_get(cap, "value");
            const char *p = json_is_string(pv) ? json_string_value(pv) : "";
            if (strcasecmp(p, "True") == 0)
                c->premium = TW_VMCAP_PREMIUM_YES;
            else if (strcasecmp(p, "False") == 0)
                c->premium = TW_VMCAP_PREMIUM_NO;
            else
                return tw_error_set(err, TW_EPARSE,
                                    "Resource SKUs: %s: capability PremiumIO must be "
                                    "\"True\" or \"False\"",
                                    c->vm_size);
            continue;
        }
        size_t k = 0;
        while (k < sizeof(figures) / sizeof(figures[0]) && strcmp(what, figures[k].name) != 0)
            k++;
        if (k == sizeof(figures) / sizeof(figures[0]))
            continue;
        int64_t n;
        if (!whole(json_object_get(cap, "value"), &n) || (!figures[k].bytes && n > MAX_IOPS))
            return tw_error_set(err, TW_EPARSE,
                                "Resource SKUs: %s: capability %s must be a "
                                "whole number as a string",
                                c->vm_size, what);
        int64_t *slot = (int64_t *)((char *)c + figures[k].offset);
        *slot = figures[k].bytes ? tw_vmcap_arm_bytes_per_s(n) : n;
    }
    snprintf(c->source, sizeof(c->source), "arm");
    /* An entry without a figure or the Premium storage flag would only
     * hide the bundled table's. */
    *keep = c->iops > 0 || c->bytes_per_s > 0 || c->cached_iops > 0 ||
            c->cached_bytes_per_s > 0 || c->premium != TW_VMCAP_PREMIUM_UNKNOWN;
    return TW_OK;
}

enum tw_err tw_az_skus_parse_page(const char *buf, size_t len, struct tw_vmcap_table *t, char *next,
                                  size_t nextlen, struct tw_error *err)
{
    if (next && nextlen)
        next[0] = '\0';
    json_t *root = tw_json_load(buf, len, 0, "Resource SKUs answer", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    size_t had = t->n;
    const json_t *items = json_is_array(root) ? root : json_object_get(root, "value");
    if (!json_is_array(items)) {
        rc = tw_error_set(err, TW_EPARSE,
                          "Resource SKUs: expected {\"value\": [...], \"nextLink\": ...}");
        goto out;
    }
    const json_t *nl = json_is_object(root) ? json_object_get(root, "nextLink") : NULL;
    if (nl && !json_is_null(nl)) {
        if (!json_is_string(nl) || json_string_length(nl) >= nextlen ||
            strlen(json_string_value(nl)) != json_string_length(nl)) {
            rc = tw_error_set(err, TW_EPARSE,
                              "Resource SKUs: nextLink must be a URL under %zu bytes", nextlen);
            goto out;
        }
        memcpy(next, json_string_value(nl), json_string_length(nl) + 1);
    }
    size_t room = json_array_size(items);
    if (room) {
        struct tw_vmcap *caps = realloc(t->caps, (t->n + room) * sizeof(*caps));
        if (!caps) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory for %zu VM sizes", t->n + room);
            goto out;
        }
        t->caps = caps;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(items, i, e)
    {
        bool keep;
        struct tw_vmcap c;
        if ((rc = entry(e, i, &c, &keep, err)) != TW_OK)
            break;
        /* A listing without a location filter repeats a size per region. */
        if (keep && !tw_vmcap_find(t, c.vm_size)) {
            t->caps[t->n++] = c;
            t->sorted = false;
        }
    }
out:
    if (rc != TW_OK) {
        t->n = had;
        if (next && nextlen)
            next[0] = '\0';
    }
    json_decref(root);
    return rc;
}

/* Subscription ids are GUIDs and locations like "westeurope": anything
 * else would need escaping and is more likely a mistake. */
static bool token_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
            return false;
    return true;
}

enum tw_err tw_az_skus_fetch(const struct tw_az_http_opts *o, const char *arm_base,
                             const char *subscription, const char *location, const char *bearer,
                             const char *vm_size, struct tw_vmcap_table *t, struct tw_error *err)
{
    if (!token_ok(subscription, 64))
        return tw_error_set(err, TW_EINVAL, "subscription id \"%.80s\" is not an id", subscription);
    if (!token_ok(location, 63))
        return tw_error_set(err, TW_EINVAL, "location \"%.80s\" is not an Azure region name",
                            location);
    if (!bearer || !*bearer || strpbrk(bearer, "\r\n"))
        return tw_error_set(err, TW_EINVAL, "no usable access token for ARM");
    size_t alen = strlen("Authorization: Bearer ") + strlen(bearer) + 1;
    char *auth = malloc(alen);
    char *url = malloc(TW_AZ_NEXTLINK_MAX);
    char *next = malloc(TW_AZ_NEXTLINK_MAX);
    struct tw_az_http *h = NULL;
    enum tw_err rc = TW_OK;
    if (!auth || !url || !next) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(auth, alen, "Authorization: Bearer %s", bearer);
    if ((size_t)snprintf(url, TW_AZ_NEXTLINK_MAX,
                         "%s/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=%s"
                         "&$filter=location%%20eq%%20%%27%s%%27",
                         arm_base, subscription, TW_AZ_SKUS_API_VERSION,
                         location) >= TW_AZ_NEXTLINK_MAX) {
        rc = tw_error_set(err, TW_EINVAL, "the ARM URL %s is too long", arm_base);
        goto out;
    }
    if (!(h = tw_az_http_new(o, err))) {
        rc = TW_ENOMEM;
        goto out;
    }
    const char *hdrs[] = {auth, "Accept: application/json", NULL};
    for (int page = 1;; page++) {
        struct tw_az_http_resp resp;
        rc = tw_az_http_request(h, "GET", url, hdrs, NULL, 0, &resp, err);
        if (rc == TW_OK)
            rc = tw_az_skus_parse_page(resp.body.data ? resp.body.data : "", resp.body.len, t, next,
                                       TW_AZ_NEXTLINK_MAX, err);
        tw_az_http_resp_cleanup(&resp);
        if (rc != TW_OK || !next[0] || (vm_size && tw_vmcap_find(t, vm_size)))
            break;
        if (!tw_arm_url_same_origin(next, arm_base)) {
            rc = tw_error_set(err, TW_EPERM,
                              "Resource SKUs page %d links to %.200s, outside "
                              "%s: not following it with the token",
                              page, next, arm_base);
            break;
        }
        if (strcmp(next, url) == 0 || page >= TW_AZ_SKUS_MAX_PAGES) {
            rc = tw_error_set(err, TW_EIO, "Resource SKUs: %s after %d pages; giving up",
                              strcmp(next, url) == 0 ? "nextLink repeats itself" : "still more",
                              page);
            break;
        }
        memcpy(url, next, strlen(next) + 1);
    }
out:
    /* Whole regions are looked up size by size: bisect them. */
    tw_vmcap_table_sort(t);
    tw_az_http_free(h);
    free(auth);
    free(url);
    free(next);
    return rc;
}
