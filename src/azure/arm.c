/*
 * arm.c - the ARM calls of the tier switches: disks (list, GET, PATCH
 * sku.name), VMs (list, GET with the instance view, instance view,
 * deallocate, start) and their long-running operations.
 *
 * Every call goes through call(): the bearer token from the credential,
 * the api-version of its provider, the pacer's token per attempt (the
 * HTTP client's before_attempt hook, so a retried 429 is paced like a new
 * call) from the bucket of the call's region (region_for: the URL's
 * locations/{region}, else the resource's location as this client read it,
 * else the caller's region; a list: ""), a 429's Retry-After handed to the
 * pacer as a hold of that region, and the error classified into a->last.  URLs the answers hand
 * back (nextLink, Azure-AsyncOperation, Location) are followed only when
 * they are on the ARM base URL's origin: the token never leaves for
 * another host.
 */
#include "azure/arm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define TOKEN_MAX 16384
#define MAX_PAGES 100000 /* 100 items a page: ten million resources */

/* What the client knows of where resources are: id -> location, filled
 * by every disk and VM it reads (GET or list), so a call on a resource
 * is paced in the resource's region.  Open addressing, ids compared
 * without case; at most LOC_MAX ids (beyond, a call falls back to the
 * caller's region). */
#define LOC_MAX (1u << 20)
struct loc_entry {
    char *id;
    char loc[64];
};

struct tw_arm {
    struct tw_az_http *h;
    struct loc_entry *locs;
    size_t nlocs, caplocs;
    char cur_region[64];             /* the bucket of the call under way */
    struct tw_az_http_resp *cur_resp; /* its response, between attempts */
    long real_slept;                 /* ms slept for real by arm_sleep this call */
    struct tw_az_http_opts http; /* as given (sleep_ms for the waits here) */
    char *base, *region, *disk_api, *compute_api;
    long poll_ms, op_timeout_ms;
    struct tw_arm_cred *cred;
    struct tw_arm_pacer *pacer;
    struct tw_arm_error last;
    const char *cur_vm; /* the VM whose action budget this call takes, or NULL */
    char auth[TOKEN_MAX + 32];
};

static void sleep_for(struct tw_arm *a, long ms)
{
    if (ms <= 0)
        return;
    if (a->http.sleep_ms) {
        a->http.sleep_ms(ms, a->http.sleep_arg);
        return;
    }
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The http client's hook: one pacer token per attempt, from the bucket
 * of the call's region. */
static void before_attempt(const char *method, int attempt, void *arg)
{
    struct tw_arm *a = arg;
    (void)attempt;
    if (!a->pacer)
        return;
    long w = tw_arm_pacer_take(a->pacer, a->cur_region, strcmp(method, "GET") != 0, a->cur_vm);
    sleep_for(a, w);
}

/* A 429 in RESP puts the call's region on hold in the pacer until its
 * Retry-After (else FALLBACK_MS, 0: none), so every thread sharing the
 * pacer pauses, not only the one the server told. */
static void hold_on_429(struct tw_arm *a, const struct tw_az_http_resp *resp, long fallback_ms)
{
    if (!a->pacer || !resp || resp->status != 429)
        return;
    char ra[64];
    long ms = 0;
    if (!tw_az_http_resp_header(resp, "Retry-After", ra, sizeof(ra)) ||
        !tw_arm_retry_after_parse(ra, (int64_t)time(NULL), &ms) || ms <= 0)
        ms = fallback_ms;
    if (ms > 0)
        tw_arm_pacer_hold(a->pacer, a->cur_region, tw_arm_pacer_now_ms(a->pacer) + ms);
}

/* The http client's wait between attempts: the last attempt's 429 (its
 * response is still in cur_resp) sets the region's hold before the wait,
 * so the other threads hold with this one.  The wait itself is the
 * caller's sleep, or a real one: the http client adds its waits to the
 * real time spent when the sleep is injected, so a real sleep here is
 * taken back out of resp->waited_ms until the call returns (call() puts
 * it back), or the budget would count it twice. */
static void arm_sleep(long ms, void *arg)
{
    struct tw_arm *a = arg;
    hold_on_429(a, a->cur_resp, ms);
    if (a->http.sleep_ms) {
        a->http.sleep_ms(ms, a->http.sleep_arg);
        return;
    }
    sleep_for(a, ms);
    if (a->cur_resp) {
        a->cur_resp->waited_ms -= ms;
        a->real_slept += ms;
    }
}

static uint64_t id_hash(const char *id)
{
    uint64_t h = 1469598103934665603ull;
    for (; *id; id++) {
        unsigned char c = (unsigned char)*id;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + 32);
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

static struct loc_entry *loc_slot(const struct tw_arm *a, const char *id)
{
    if (!a->caplocs)
        return NULL;
    size_t i = (size_t)(id_hash(id) & (a->caplocs - 1));
    while (a->locs[i].id && strcasecmp(a->locs[i].id, id) != 0)
        i = (i + 1) & (a->caplocs - 1);
    return &a->locs[i];
}

/* Remembers that ID is in LOCATION (best effort: out of memory or a full
 * table only loses the hint). */
static void remember(struct tw_arm *a, const char *id, const char *location)
{
    if (!id || !*id || !location || !*location || strlen(location) >= sizeof(a->locs[0].loc))
        return;
    if ((a->nlocs + 1) * 4 > a->caplocs * 3) {
        size_t cap = a->caplocs ? a->caplocs * 2 : 256;
        if (cap > LOC_MAX * 2)
            goto update_only;
        struct loc_entry *old = a->locs;
        size_t oldcap = a->caplocs;
        struct loc_entry *nl = calloc(cap, sizeof(*nl));
        if (!nl)
            goto update_only;
        a->locs = nl;
        a->caplocs = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].id)
                *loc_slot(a, old[i].id) = old[i];
        free(old);
    }
    struct loc_entry *e = loc_slot(a, id);
    if (!e->id) {
        if (!(e->id = strdup(id)))
            return;
        a->nlocs++;
    }
    snprintf(e->loc, sizeof(e->loc), "%s", location);
    return;
update_only:;
    struct loc_entry *u = loc_slot(a, id);
    if (u && u->id)
        snprintf(u->loc, sizeof(u->loc), "%s", location);
}

/* The pacer's bucket of a call on URL: the URL's .../locations/{region}/
 * segment, else the location of RES_ID as last read, else the caller's
 * region; LIST (a list of a subscription or group, its pages): "". */
static void region_for(struct tw_arm *a, const char *url, const char *res_id, bool is_list)
{
    a->cur_region[0] = '\0';
    if (is_list)
        return;
    const char *p = url ? strstr(url, "://") : NULL;
    p = p ? strchr(p + 3, '/') : NULL;
    size_t plen = p ? strcspn(p, "?#") : 0;
    for (const char *q = p; q && (size_t)(q - p) < plen; q++) {
        if (strncasecmp(q, "/locations/", 11) == 0) {
            const char *r = q + 11;
            size_t n = strcspn(r, "/?#");
            if (n > 0 && n < sizeof(a->cur_region) && r + n <= p + plen) {
                memcpy(a->cur_region, r, n);
                a->cur_region[n] = '\0';
                return;
            }
        }
    }
    struct loc_entry *e = res_id && *res_id ? loc_slot(a, res_id) : NULL;
    if (e && e->id) {
        snprintf(a->cur_region, sizeof(a->cur_region), "%s", e->loc);
        return;
    }
    snprintf(a->cur_region, sizeof(a->cur_region), "%s", a->region);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An api-version: digits, dashes and a "-preview" at most. */
static bool api_ok(const char *v)
{
    size_t n = strlen(v);
    if (n < 10 || n > 32)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] >= '0' && v[i] <= '9') && v[i] != '-' && !(v[i] >= 'a' && v[i] <= 'z'))
            return false;
    return true;
}

void tw_arm_free(struct tw_arm *a)
{
    if (!a)
        return;
    tw_az_http_free(a->h);
    for (size_t i = 0; i < a->caplocs; i++)
        free(a->locs[i].id);
    free(a->locs);
    free(a->base);
    free(a->region);
    free(a->disk_api);
    free(a->compute_api);
    memset(a->auth, 0, sizeof(a->auth));
    free(a);
}

enum tw_err tw_arm_new(const struct tw_arm_opts *o, struct tw_arm_cred *cred,
                       struct tw_arm_pacer *pacer, struct tw_arm **out, struct tw_error *err)
{
    *out = NULL;
    if (!o || !o->arm_url || !*o->arm_url)
        return tw_error_set(err, TW_EINVAL, "the ARM client needs the ARM base URL");
    if (!cred)
        return tw_error_set(err, TW_EINVAL, "the ARM client needs a credential");
    const char *dapi = o->disk_api ? o->disk_api : TW_ARM_DISK_API;
    const char *capi = o->compute_api ? o->compute_api : TW_ARM_COMPUTE_API;
    if (!api_ok(dapi) || !api_ok(capi))
        return tw_error_set(err, TW_EINVAL, "api-version \"%.40s\" is not one",
                            api_ok(dapi) ? capi : dapi);
    if (o->poll_ms < 0 || o->op_timeout_ms < 0)
        return tw_error_set(err, TW_EINVAL, "poll_ms and op_timeout_ms must not be negative");
    struct tw_arm *a = calloc(1, sizeof(*a));
    if (!a)
        return tw_error_set(err, TW_ENOMEM, "out of memory for an ARM client");
    size_t n = strlen(o->arm_url);
    while (n && o->arm_url[n - 1] == '/')
        n--;
    a->base = strndup(o->arm_url, n);
    a->region = strdup(o->region ? o->region : "");
    a->disk_api = strdup(dapi);
    a->compute_api = strdup(capi);
    a->http = o->http;
    a->poll_ms = o->poll_ms ? o->poll_ms : 2000;
    a->op_timeout_ms = o->op_timeout_ms ? o->op_timeout_ms : 10 * 60 * 1000;
    a->cred = cred;
    a->pacer = pacer;
    if (!a->base || !a->region || !a->disk_api || !a->compute_api) {
        tw_arm_free(a);
        return tw_error_set(err, TW_ENOMEM, "out of memory for an ARM client");
    }
    struct tw_az_http_opts h = o->http;
    if (h.max_attempts == 0 && h.budget_ms == 0)
        tw_az_http_opts_default(&h); /* a zeroed struct: the defaults */
    a->http = h;
    h.before_attempt = before_attempt;
    h.attempt_arg = a;
    h.sleep_ms = arm_sleep;
    h.sleep_arg = a;
    if (!(a->h = tw_az_http_new(&h, err))) {
        tw_arm_free(a);
        return TW_ENOMEM;
    }
    *out = a;
    return TW_OK;
}

const struct tw_arm_error *tw_arm_last_error(const struct tw_arm *a)
{
    return &a->last;
}

/* URL's scheme, host and port (the scheme's default when none); the rest
 * in *REST.  False when it is not an http(s) URL with a host. */
static bool origin_of(const char *url, char *scheme, size_t scap, char *host, size_t hcap,
                      long *port, const char **rest)
{
    const char *p = strstr(url, "://");
    if (!p || (size_t)(p - url) >= scap)
        return false;
    memcpy(scheme, url, (size_t)(p - url));
    scheme[p - url] = '\0';
    bool https = strcasecmp(scheme, "https") == 0;
    if (!https && strcasecmp(scheme, "http") != 0)
        return false;
    p += 3;
    const char *h = p, *e;
    if (*p == '[') {
        e = strchr(p, ']');
        if (!e)
            return false;
        e++;
    } else {
        e = p + strcspn(p, ":/?#@");
    }
    if (*e == '@' || e == h || (size_t)(e - h) >= hcap)
        return false; /* no user names in a followed link */
    memcpy(host, h, (size_t)(e - h));
    host[e - h] = '\0';
    *port = https ? 443 : 80;
    if (*e == ':') {
        char *end;
        long v = strtol(e + 1, &end, 10);
        if (end == e + 1 || v < 1 || v > 65535)
            return false;
        *port = v;
        e = end;
    }
    if (*e && *e != '/' && *e != '?')
        return false;
    *rest = e;
    return true;
}

/* Whether LINK is on BASE's origin: the same scheme, host and port, an
 * explicit default port the same as none (ARM's nextLinks often say
 * "https://management.azure.com:443/..."). */
bool tw_arm_url_same_origin(const char *link, const char *base)
{
    char s1[8], s2[8], h1[256], h2[256];
    long p1, p2;
    const char *r1, *r2;
    return origin_of(link, s1, sizeof(s1), h1, sizeof(h1), &p1, &r1) &&
           origin_of(base, s2, sizeof(s2), h2, sizeof(h2), &p2, &r2) &&
           strcasecmp(s1, s2) == 0 && strcasecmp(h1, h2) == 0 && p1 == p2 &&
           (*r1 == '/' || *r1 == '?');
}

/*
 * One ARM request: METHOD on URL (absolute) with BODY (JSON, may be NULL).
 * RESP is the caller's to clean up.  VM: the VM whose start/deallocate
 * budget it takes (NULL: none).  RES_ID: the resource it acts on, for its
 * region (NULL: none); LIST: a list's page (the bucket "").
 */
static enum tw_err call(struct tw_arm *a, const char *method, const char *url, const char *body,
                        const char *vm, const char *res_id, bool is_list,
                        struct tw_az_http_resp *resp, struct tw_error *err)
{
    memset(&a->last, 0, sizeof(a->last));
    memset(resp, 0, sizeof(*resp));
    char *tok = malloc(TOKEN_MAX);
    if (!tok)
        return tw_error_set(err, TW_ENOMEM, "out of memory for a token");
    enum tw_err rc = tw_arm_cred_token(a->cred, tok, TOKEN_MAX, err);
    if (rc != TW_OK) {
        free(tok);
        /* The credential says TW_EPERM for any refusal (a 4xx of the
         * login, IMDS's refusal), TW_EIO for no answer or a 5xx. */
        a->last.fault = rc == TW_EPERM ? TW_ARM_FAULT_AUTH
                        : rc == TW_EIO ? TW_ARM_FAULT_NETWORK
                                       : TW_ARM_FAULT_OTHER;
        return rc;
    }
    snprintf(a->auth, sizeof(a->auth), "Authorization: Bearer %s", tok);
    memset(tok, 0, TOKEN_MAX);
    free(tok);
    const char *hdrs[] = {a->auth, "Accept: application/json",
                          body ? "Content-Type: application/json" : NULL, NULL};
    a->cur_vm = vm;
    region_for(a, url, res_id, is_list);
    a->cur_resp = resp;
    a->real_slept = 0;
    rc = tw_az_http_request(a->h, method, url, hdrs, body, body ? strlen(body) : 0, resp, err);
    resp->waited_ms += a->real_slept;
    a->cur_resp = NULL;
    a->cur_vm = NULL;
    /* A 429 left at the end (retries spent, or a Retry-After beyond the
     * call's budget): the call gives up, and the hold makes the next calls
     * of the region wait it out instead of hammering. */
    hold_on_429(a, resp, 0);
    memset(a->auth, 0, sizeof(a->auth));
    tw_arm_error_classify(resp->status, resp->body.data, resp->body.len, &a->last);
    if (rc == TW_OK)
        a->last.fault = TW_ARM_FAULT_NONE;
    else if (resp->status == 0 && a->last.fault == TW_ARM_FAULT_NETWORK &&
             resp->net == TW_AZ_NET_OK)
        a->last.fault = TW_ARM_FAULT_OTHER; /* refused before sending, or too big */
    return rc;
}

/* BASE + PATH + "?api-version=" + API + EXTRA into a new string. */
static char *url_of(const struct tw_arm *a, const char *path, const char *api, const char *extra)
{
    size_t n = strlen(a->base) + strlen(path) + strlen(api) + strlen(extra) + 16;
    if (n > TW_ARM_URL_MAX)
        return NULL;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s%s?api-version=%s%s", a->base, path, api, extra);
    return u;
}

static enum tw_err check_id(const char *id, const char *kind, struct tw_error *err)
{
    char s[64], g[128], n[128];
    if (!id || !tw_arm_id_split(id, s, sizeof(s), g, sizeof(g), n, sizeof(n)) ||
        !strcasestr(id, kind))
        return tw_error_set(err, TW_EINVAL,
                            "\"%.200s\" is not the resource id of a %s "
                            "(/subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/%s/N)",
                            id ? id : "", strcmp(kind, "/disks/") == 0 ? "disk" : "VM",
                            strcmp(kind, "/disks/") == 0 ? "disks" : "virtualMachines");
    return TW_OK;
}

/* A subscription id or group name that needs no escaping. */
static bool name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
            c != '-' && c != '_' && c != '.' && c != '(' && c != ')')
            return false;
    }
    return true;
}

/* ---- lists ---- */

typedef enum tw_err (*page_fn)(const char *buf, size_t len, void *fn, void *arg, char *next,
                               size_t cap, struct tw_error *err);

static enum tw_err disk_page(const char *buf, size_t len, void *fn, void *arg, char *next,
                             size_t cap, struct tw_error *err)
{
    return tw_arm_disk_page_parse(buf, len, (enum tw_err (*)(void *, const struct tw_arm_disk *))fn,
                                  arg, next, cap, err);
}

static enum tw_err vm_page(const char *buf, size_t len, void *fn, void *arg, char *next,
                           size_t cap, struct tw_error *err)
{
    return tw_arm_vm_page_parse(buf, len, (enum tw_err (*)(void *, const struct tw_arm_vm *))fn,
                                arg, next, cap, err);
}

/* GETs FIRST and the pages it links to, each handed to PARSE. */
static enum tw_err list(struct tw_arm *a, char *first, const char *what, page_fn parse, void *fn,
                        void *arg, struct tw_error *err)
{
    char *next = malloc(TW_ARM_URL_MAX), *url = first;
    enum tw_err rc = TW_OK;
    if (!next) {
        free(first);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    for (int page = 1;; page++) {
        struct tw_az_http_resp resp;
        rc = call(a, "GET", url, NULL, NULL, NULL, true, &resp, err);
        if (rc == TW_OK)
            rc = parse(resp.body.data ? resp.body.data : "", resp.body.len, fn, arg, next,
                       TW_ARM_URL_MAX, err);
        tw_az_http_resp_cleanup(&resp);
        if (rc != TW_OK || !next[0])
            break;
        if (!tw_arm_url_same_origin(next, a->base)) {
            rc = tw_error_set(err, TW_EPERM,
                              "%s page %d links to %.200s, outside %s: not following it with "
                              "the token",
                              what, page, next, a->base);
            break;
        }
        if (strcmp(next, url) == 0 || page >= MAX_PAGES) {
            rc = tw_error_set(err, TW_EIO, "%s: %s after %d pages; giving up", what,
                              strcmp(next, url) == 0 ? "nextLink repeats itself" : "still more",
                              page);
            break;
        }
        memcpy(url, next, strlen(next) + 1);
    }
    free(next);
    free(url);
    return rc;
}

/* The first page's URL of a list of TYPE in SUB (and RG); NULL + ERR. */
static char *list_url(const struct tw_arm *a, const char *sub, const char *rg, const char *type,
                      const char *api, const char *extra, struct tw_error *err)
{
    if (!sub || !name_ok(sub, 64)) {
        tw_error_set(err, TW_EINVAL, "subscription id \"%.80s\" is not an id", sub ? sub : "");
        return NULL;
    }
    if (rg && !name_ok(rg, 90)) {
        tw_error_set(err, TW_EINVAL, "resource group \"%.100s\" is not a group name", rg);
        return NULL;
    }
    char path[512];
    snprintf(path, sizeof(path), "/subscriptions/%s%s%s/providers/Microsoft.Compute/%s", sub,
             rg ? "/resourceGroups/" : "", rg ? rg : "", type);
    char *u = malloc(TW_ARM_URL_MAX);
    char *v = url_of(a, path, api, extra);
    if (!u || !v) {
        free(u);
        free(v);
        tw_error_set(err, TW_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(u, v, strlen(v) + 1);
    free(v);
    return u;
}

struct disk_list_ctx {
    struct tw_arm *a;
    enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d);
    void *arg;
};

static enum tw_err disk_item(void *arg, const struct tw_arm_disk *d)
{
    struct disk_list_ctx *c = arg;
    remember(c->a, d->id, d->location);
    return c->fn ? c->fn(c->arg, d) : TW_OK;
}

enum tw_err tw_arm_disks_list(struct tw_arm *a, const char *sub, const char *rg,
                              enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                              void *arg, struct tw_error *err)
{
    char *u = list_url(a, sub, rg, "disks", a->disk_api, "", err);
    if (!u)
        return err ? err->code : TW_EINVAL;
    struct disk_list_ctx c = {.a = a, .fn = fn, .arg = arg};
    return list(a, u, "ARM disks list", disk_page, (void *)disk_item, &c, err);
}

struct vm_list_ctx {
    struct tw_arm *a;
    enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm);
    void *arg;
    struct tw_error *err;
    struct tw_arm_vm *copy;
    long per_vm; /* instance views fetched one by one */
};

static enum tw_err vm_item(void *arg, const struct tw_arm_vm *vm)
{
    struct vm_list_ctx *c = arg;
    remember(c->a, vm->vm.resource_id, vm->vm.location);
    if (vm->power_state[0])
        return c->fn ? c->fn(c->arg, vm) : TW_OK;
    /* The list gave no instance view: ask the VM's own. */
    *c->copy = *vm;
    enum tw_err rc = tw_arm_vm_instance_view(c->a, vm->vm.resource_id, c->copy->power_state,
                                             sizeof(c->copy->power_state), &c->copy->hibernated,
                                             c->err);
    c->per_vm++;
    return rc == TW_OK && c->fn ? c->fn(c->arg, c->copy) : rc;
}

enum tw_err tw_arm_vms_list(struct tw_arm *a, const char *sub, const char *rg,
                            enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm),
                            void *arg, struct tw_error *err)
{
    struct vm_list_ctx c = {.a = a, .fn = fn, .arg = arg, .err = err};
    if (!(c.copy = malloc(sizeof(*c.copy))))
        return tw_error_set(err, TW_ENOMEM, "out of memory for a VM");
    char *u = list_url(a, sub, rg, "virtualMachines", a->compute_api, "&$expand=instanceView",
                       err);
    enum tw_err rc = u ? list(a, u, "ARM VMs list", vm_page, (void *)vm_item, &c, err)
                       : (err ? err->code : TW_EINVAL);
    free(c.copy);
    return rc;
}

/* ---- one resource ---- */

static enum tw_err get_one(struct tw_arm *a, const char *id, const char *suffix, const char *api,
                           const char *extra, struct tw_az_http_resp *resp, struct tw_error *err)
{
    char path[TW_ARM_ID_MAX + 32];
    snprintf(path, sizeof(path), "%s%s", id, suffix);
    char *u = url_of(a, path, api, extra);
    if (!u)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    enum tw_err rc = call(a, "GET", u, NULL, NULL, id, false, resp, err);
    free(u);
    return rc;
}

enum tw_err tw_arm_disk_get(struct tw_arm *a, const char *disk_id, struct tw_arm_disk *d,
                            struct tw_error *err)
{
    memset(d, 0, sizeof(*d));
    enum tw_err rc = check_id(disk_id, "/disks/", err);
    if (rc != TW_OK)
        return rc;
    struct tw_az_http_resp resp;
    rc = get_one(a, disk_id, "", a->disk_api, "", &resp, err);
    if (rc == TW_OK)
        rc = tw_arm_disk_parse(resp.body.data ? resp.body.data : "", resp.body.len, d, err);
    if (rc == TW_OK)
        remember(a, disk_id, d->location);
    tw_az_http_resp_cleanup(&resp);
    return rc;
}

enum tw_err tw_arm_vm_get(struct tw_arm *a, const char *vm_id, struct tw_arm_vm *vm,
                          struct tw_error *err)
{
    memset(vm, 0, sizeof(*vm));
    enum tw_err rc = check_id(vm_id, "/virtualMachines/", err);
    if (rc != TW_OK)
        return rc;
    struct tw_az_http_resp resp;
    rc = get_one(a, vm_id, "", a->compute_api, "&$expand=instanceView", &resp, err);
    if (rc == TW_OK)
        rc = tw_arm_vm_parse(resp.body.data ? resp.body.data : "", resp.body.len, vm, err);
    if (rc == TW_OK)
        remember(a, vm_id, vm->vm.location);
    tw_az_http_resp_cleanup(&resp);
    return rc;
}

enum tw_err tw_arm_vm_power(struct tw_arm *a, const char *vm_id, char *power, size_t cap,
                            struct tw_error *err)
{
    return tw_arm_vm_instance_view(a, vm_id, power, cap, NULL, err);
}

enum tw_err tw_arm_vm_instance_view(struct tw_arm *a, const char *vm_id, char *power, size_t cap,
                                    bool *hibernated, struct tw_error *err)
{
    if (cap)
        power[0] = '\0';
    if (hibernated)
        *hibernated = false;
    enum tw_err rc = check_id(vm_id, "/virtualMachines/", err);
    if (rc != TW_OK)
        return rc;
    struct tw_az_http_resp resp;
    rc = get_one(a, vm_id, "/instanceView", a->compute_api, "", &resp, err);
    if (rc == TW_OK)
        rc = tw_arm_instance_view_parse2(resp.body.data ? resp.body.data : "", resp.body.len,
                                         power, cap, hibernated, NULL, 0, err);
    tw_az_http_resp_cleanup(&resp);
    return rc;
}

/* ---- operations ---- */

/* Where RESP (a 201/202) says to poll, into OP. */
static enum tw_err op_from(struct tw_arm *a, const char *what, const struct tw_az_http_resp *resp,
                           struct tw_arm_op *op, struct tw_error *err)
{
    memset(op, 0, sizeof(*op));
    char ra[64];
    if (tw_az_http_resp_header(resp, "Retry-After", ra, sizeof(ra)))
        (void)tw_arm_retry_after_parse(ra, (int64_t)time(NULL), &op->retry_after_ms);
    if (resp->status == 200 || resp->status == 204)
        return TW_OK; /* done at once */
    if (tw_az_http_resp_header(resp, "Azure-AsyncOperation", op->url, sizeof(op->url)) &&
        op->url[0])
        op->async_operation = true;
    else if (!tw_az_http_resp_header(resp, "Location", op->url, sizeof(op->url)))
        op->url[0] = '\0';
    if (!op->url[0])
        return tw_error_set(err, TW_EIO,
                            "%s: ARM answered HTTP %ld without an Azure-AsyncOperation or "
                            "Location header to follow",
                            what, resp->status);
    if (!tw_arm_url_same_origin(op->url, a->base)) {
        char u[200];
        snprintf(u, sizeof(u), "%.199s", op->url);
        op->url[0] = '\0';
        return tw_error_set(err, TW_EPERM,
                            "%s: the operation's URL %s is outside %s: not polling it with the "
                            "token",
                            what, u, a->base);
    }
    return TW_OK;
}

/* A SKU name as DiskStorageAccountTypes spells them. */
static bool sku_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= 32)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
            c != '_')
            return false;
    }
    return true;
}

enum tw_err tw_arm_disk_set_sku(struct tw_arm *a, const char *disk_id, const char *sku,
                                struct tw_arm_op *op, struct tw_error *err)
{
    memset(op, 0, sizeof(*op));
    enum tw_err rc = check_id(disk_id, "/disks/", err);
    if (rc != TW_OK)
        return rc;
    if (!sku || !sku_ok(sku))
        return tw_error_set(err, TW_EINVAL, "\"%.40s\" is not a disk SKU name (Premium_LRS, ...)",
                            sku ? sku : "");
    char body[96];
    snprintf(body, sizeof(body), "{\"sku\":{\"name\":\"%s\"}}", sku);
    char *u = url_of(a, disk_id, a->disk_api, "");
    if (!u)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    struct tw_az_http_resp resp;
    rc = call(a, "PATCH", u, body, NULL, disk_id, false, &resp, err);
    if (rc == TW_OK)
        rc = op_from(a, "PATCH of the disk's SKU", &resp, op, err);
    tw_az_http_resp_cleanup(&resp);
    free(u);
    return rc;
}

static enum tw_err vm_action(struct tw_arm *a, const char *vm_id, const char *action,
                             struct tw_arm_op *op, struct tw_error *err)
{
    memset(op, 0, sizeof(*op));
    enum tw_err rc = check_id(vm_id, "/virtualMachines/", err);
    if (rc != TW_OK)
        return rc;
    char path[TW_ARM_ID_MAX + 16];
    snprintf(path, sizeof(path), "%s/%s", vm_id, action);
    char *u = url_of(a, path, a->compute_api, "");
    if (!u)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    struct tw_az_http_resp resp;
    rc = call(a, "POST", u, NULL, vm_id, vm_id, false, &resp, err);
    if (rc == TW_OK)
        rc = op_from(a, action, &resp, op, err);
    tw_az_http_resp_cleanup(&resp);
    free(u);
    return rc;
}

enum tw_err tw_arm_vm_deallocate(struct tw_arm *a, const char *vm_id, struct tw_arm_op *op,
                                 struct tw_error *err)
{
    return vm_action(a, vm_id, "deallocate", op, err);
}

enum tw_err tw_arm_vm_start(struct tw_arm *a, const char *vm_id, struct tw_arm_op *op,
                            struct tw_error *err)
{
    return vm_action(a, vm_id, "start", op, err);
}

enum tw_err tw_arm_op_poll(struct tw_arm *a, struct tw_arm_op *op, bool *done,
                           struct tw_error *err)
{
    *done = false;
    if (!op->url[0]) {
        *done = true;
        memset(&a->last, 0, sizeof(a->last));
        return TW_OK;
    }
    if (!tw_arm_url_same_origin(op->url, a->base))
        return tw_error_set(err, TW_EPERM, "the operation's URL %.200s is outside %s", op->url,
                            a->base);
    struct tw_az_http_resp resp;
    enum tw_err rc = call(a, "GET", op->url, NULL, NULL, NULL, false, &resp, err);
    char ra[64];
    op->retry_after_ms = 0;
    if (tw_az_http_resp_header(&resp, "Retry-After", ra, sizeof(ra)))
        (void)tw_arm_retry_after_parse(ra, (int64_t)time(NULL), &op->retry_after_ms);
    if (rc == TW_OK && op->async_operation) {
        char st[64];
        struct tw_arm_error fail;
        rc = tw_arm_op_status_parse(resp.body.data ? resp.body.data : "", resp.body.len, st,
                                    sizeof(st), &fail, err);
        if (rc == TW_OK && strcasecmp(st, "Succeeded") == 0) {
            *done = true;
        } else if (rc == TW_OK &&
                   (strcasecmp(st, "Failed") == 0 || strcasecmp(st, "Canceled") == 0)) {
            *done = true;
            a->last = fail;
            a->last.status = resp.status;
            rc = tw_error_set(err, TW_EIO, "the operation %.200s %s: %s%s%s", op->url,
                              strcasecmp(st, "Failed") == 0 ? "failed" : "was canceled",
                              fail.code, fail.message[0] ? ": " : "", fail.message);
        }
    } else if (rc == TW_OK) {
        /* Location: 202 while running, 200/201/204 when done. */
        *done = resp.status != 202;
    } else {
        *done = true; /* an error answer ends the operation for the caller */
    }
    tw_az_http_resp_cleanup(&resp);
    return rc;
}

enum tw_err tw_arm_op_wait(struct tw_arm *a, struct tw_arm_op *op, struct tw_error *err)
{
    int64_t start = mono_ms(), slept = 0;
    bool done = false;
    for (int n = 0;; n++) {
        if (n > 0 || op->retry_after_ms > 0) {
            long w = op->retry_after_ms > 0 ? op->retry_after_ms : a->poll_ms;
            int64_t spent = mono_ms() - start + (a->http.sleep_ms ? slept : 0);
            if (spent + w > a->op_timeout_ms)
                return tw_error_set(err, TW_EIO,
                                    "the operation %.200s did not end within %ld ms; it may "
                                    "still be running: read the resource back",
                                    op->url, a->op_timeout_ms);
            sleep_for(a, w);
            slept += w;
        }
        enum tw_err rc = tw_arm_op_poll(a, op, &done, err);
        if (rc != TW_OK || done)
            return rc;
    }
}

enum tw_err tw_arm_disk_verify(struct tw_arm *a, const char *disk_id, const char *sku, bool *ok,
                               struct tw_arm_disk *d, struct tw_error *err)
{
    *ok = false;
    struct tw_arm_disk *mine = d ? d : malloc(sizeof(*mine));
    if (!mine)
        return tw_error_set(err, TW_ENOMEM, "out of memory for a disk");
    enum tw_err rc = tw_arm_disk_get(a, disk_id, mine, err);
    if (rc == TW_OK)
        *ok = strcasecmp(mine->sku, sku) == 0 &&
              strcasecmp(mine->provisioning_state, "Succeeded") == 0 &&
              !mine->update_in_progress;
    if (!d)
        free(mine);
    return rc;
}
