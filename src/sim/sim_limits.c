/*
 * sim_limits.c - ARM's request limits and the simulator's counters.
 *
 * Limits (settings.arm_limits or --arm-limits; none by default): a token
 * bucket of reads and one of writes per region, refilled continuously at
 * reads_per_s and writes_per_s up to burst seconds' worth, and at most
 * vm_actions_per_min start/deallocate/powerOff calls per VM in any 60 s
 * (a sliding window: the strict reading of "4 a minute").  The region is
 * the resource's location when the path names a disk or VM, the path's own
 * when it names one (.../locations/{region}/...), else the subscription's
 * default (its first VM's or disk's location in the scenario).  ARM
 * documents throttling by token buckets per region; the rates are the
 * scenario's.
 *
 * Over a limit: 429 with Retry-After (whole seconds until a token is back)
 * and x-ms-ratelimit-remaining-subscription-reads|writes 0.  The body of a
 * bucket refusal is CONSTRUCTED after ARM's subscription throttling
 * ("TooManyRequests"); the per-VM refusal uses Compute's documented
 * throttling shape (arm.md 4) with a CONSTRUCTED policy name.
 *
 * Counters (GET/DELETE /_sim/counters): ARM requests, 429 answers,
 * concurrent-write conflicts, type changes refused by the daily quota, and
 * per disk the PATCH requests and per VM
 * the power actions that reached the resource (a request refused by a
 * limit never reached it).
 */
#include "sim/sim_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIN_MS (60LL * 1000)

/* The path's segments (at most N, each at most 127 bytes, cut). */
static size_t segments(const char *path, char seg[][128], size_t n)
{
    size_t k = 0;
    for (const char *p = path; *p && k < n;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t l = strcspn(p, "/");
        snprintf(seg[k++], 128, "%.*s", (int)(l < 127 ? l : 127), p);
        p += l;
    }
    return k;
}

long sim_vm_action_target(const struct tw_sim *sim, const char *path)
{
    char seg[10][128];
    size_t n = segments(path, seg, 10);
    /* subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/virtualMachines/V/ACTION */
    if (n != 9 || strcasecmp(seg[0], "subscriptions") != 0 ||
        strcasecmp(seg[2], "resourceGroups") != 0 || strcasecmp(seg[6], "virtualMachines") != 0 ||
        (strcasecmp(seg[8], "start") != 0 && strcasecmp(seg[8], "deallocate") != 0 &&
         strcasecmp(seg[8], "powerOff") != 0))
        return -1;
    return sim_find_vm(sim, seg[1], seg[3], seg[7]);
}

/* The region a request is counted in (see the top of the file). */
static void region_of(const struct tw_sim *sim, const char *path, char *out, size_t cap)
{
    char seg[8][128];
    size_t n = segments(path, seg, 8);
    snprintf(out, cap, "global");
    if (n < 2 || strcasecmp(seg[0], "subscriptions") != 0)
        return;
    const char *sub = seg[1];
    if (n >= 8 && strcasecmp(seg[2], "resourceGroups") == 0) {
        long i = strcasecmp(seg[6], "disks") == 0 ? sim_find_disk(sim, sub, seg[3], seg[7])
                 : strcasecmp(seg[6], "virtualMachines") == 0
                     ? sim_find_vm(sim, sub, seg[3], seg[7])
                     : -1;
        if (i >= 0) {
            snprintf(out, cap, "%s",
                     strcasecmp(seg[6], "disks") == 0 ? sim->sc->disks[i].location
                                                      : sim->sc->vms[i].location);
            return;
        }
    }
    if (n >= 6 && strcasecmp(seg[2], "providers") == 0 && strcasecmp(seg[4], "locations") == 0) {
        snprintf(out, cap, "%s", seg[5]);
        for (char *c = out; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        return;
    }
    for (size_t i = 0; i < sim->sc->n_vms; i++) {
        if (strcasecmp(sim->sc->vms[i].subscription_id, sub) == 0) {
            snprintf(out, cap, "%s", sim->sc->vms[i].location);
            return;
        }
    }
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        if (strcasecmp(sim->sc->disks[i].subscription_id, sub) == 0) {
            snprintf(out, cap, "%s", sim->sc->disks[i].location);
            return;
        }
    }
}

/* REGION's buckets, refilled to NOW; NULL when out of memory. */
static struct sim_bucket *bucket(struct tw_sim *sim, const char *region, int64_t now)
{
    const struct tw_sim_arm_limits *l = &sim->sc->settings.arm_limits;
    struct sim_bucket *b = NULL;
    for (size_t i = 0; i < sim->n_buckets && !b; i++) {
        if (strcasecmp(sim->buckets[i].region, region) == 0)
            b = &sim->buckets[i];
    }
    if (!b) {
        if (sim->n_buckets == sim->cap_buckets) {
            size_t cap = sim->cap_buckets ? sim->cap_buckets * 2 : 8;
            struct sim_bucket *nb = realloc(sim->buckets, cap * sizeof(*nb));
            if (!nb)
                return NULL;
            sim->buckets = nb;
            sim->cap_buckets = cap;
        }
        b = &sim->buckets[sim->n_buckets++];
        snprintf(b->region, sizeof(b->region), "%s", region);
        /* A bucket starts full. */
        b->reads = l->reads_per_s * l->burst;
        b->writes = l->writes_per_s * l->burst;
        b->at_ms = now;
        return b;
    }
    double dt = now > b->at_ms ? (double)(now - b->at_ms) / 1000.0 : 0;
    b->reads = fmin(l->reads_per_s * l->burst, b->reads + dt * l->reads_per_s);
    b->writes = fmin(l->writes_per_s * l->burst, b->writes + dt * l->writes_per_s);
    b->at_ms = now;
    return b;
}

/* Whole seconds until a bucket at LEFT tokens refilling at RATE has one. */
static long wait_s(double left, double rate)
{
    double s = (1.0 - left) / rate;
    long w = (long)ceil(s);
    return w < 1 ? 1 : w;
}

/* The VM's accepted actions in the 60 s before NOW, and the oldest. */
static int recent_actions(const struct sim_vm_rt *rt, int64_t now, int64_t *oldest)
{
    int n = 0;
    *oldest = 0;
    for (int i = 0; i < rt->n_recent && i < SIM_MAX_VM_ACTIONS; i++) {
        int64_t t = rt->recent_ms[i];
        if (t > now - MIN_MS) {
            n++;
            if (!*oldest || t < *oldest)
                *oldest = t;
        }
    }
    return n;
}

bool sim_limits_take(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    const struct tw_sim_arm_limits *l = &sim->sc->settings.arm_limits;
    bool read = strcmp(rq->method, "GET") == 0;
    double rate = read ? l->reads_per_s : l->writes_per_s;
    const char *hdr = read ? "x-ms-ratelimit-remaining-subscription-reads"
                           : "x-ms-ratelimit-remaining-subscription-writes";
    long vi = l->vm_actions_per_min > 0 && strcmp(rq->method, "POST") == 0
                  ? sim_vm_action_target(sim, rq->path)
                  : -1;
    if (rate <= 0 && vi < 0)
        return true;
    int64_t now = sim_now_ms(sim);
    struct sim_bucket *b = NULL;
    if (rate > 0) {
        char region[128];
        region_of(sim, rq->path, region, sizeof(region));
        if (!(b = bucket(sim, region, now))) {
            sim_arm_error(rs, 500, "InternalServerError", NULL, "The simulator ran out of memory.");
            return false;
        }
        double *left = read ? &b->reads : &b->writes;
        if (*left < 1.0) {
            sim_header(rs, "Retry-After", "%ld", wait_s(*left, rate));
            sim_header(rs, hdr, "0");
            /* CONSTRUCTED after ARM's subscription throttling answer. */
            sim_arm_error(rs, 429, "TooManyRequests", NULL,
                          "The request is being throttled as the limit has been reached for "
                          "operation type - %s in region %s (%g a second). Retry after the "
                          "time in the Retry-After header.",
                          read ? "Read" : "Write", region, rate);
            return false;
        }
    }
    if (vi >= 0) {
        struct sim_vm_rt *rt = &sim->vm_rt[vi];
        int64_t oldest;
        int n = recent_actions(rt, now, &oldest);
        if (n >= l->vm_actions_per_min) {
            int64_t left = oldest + MIN_MS - now;
            sim_header(rs, "Retry-After", "%lld", (long long)(left > 0 ? (left + 999) / 1000 : 1));
            sim_header(rs, "x-ms-ratelimit-remaining-resource",
                       "Microsoft.Compute/VMActions1Min;0");
            if (b)
                sim_header(rs, hdr, "%ld", (long)floor(read ? b->reads : b->writes));
            char detail[256];
            snprintf(detail, sizeof(detail),
                     "{\"operationGroup\":\"VMActions1Min\",\"allowedRequestCount\":%d,"
                     "\"measuredRequestCount\":%d}",
                     l->vm_actions_per_min, n + 1);
            /* The shape of Compute's documented throttling body (arm.md 4);
             * the policy name and counts are CONSTRUCTED. */
            sim_json(rs, 429,
                     json_pack("{s:{s:s, s:s, s:[{s:s, s:s, s:s}]}}", "error", "code",
                               "OperationNotAllowed", "message",
                               "The server rejected the request because too many requests have "
                               "been received for this subscription.",
                               "details", "code", "TooManyRequests", "target", "VMActions1Min",
                               "message", detail));
            return false;
        }
        rt->recent_ms[rt->n_recent % SIM_MAX_VM_ACTIONS] = now;
        rt->n_recent++;
        if (rt->n_recent >= 2 * SIM_MAX_VM_ACTIONS)
            rt->n_recent -= SIM_MAX_VM_ACTIONS;
    }
    if (b) {
        double *left = read ? &b->reads : &b->writes;
        *left -= 1.0;
        sim_header(rs, hdr, "%ld", (long)floor(*left));
    }
    return true;
}

/* ---- counters ---- */

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

void sim_admin_counters_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    (void)rq;
    json_t *patches = json_object(), *actions = json_object();
    for (size_t i = 0; patches && i < sim->sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sim->sc->disks[i];
        if (!sim->disk_rt[i].patches)
            continue;
        char id[400];
        sim_resource_id(d->subscription_id, d->resource_group, "disks", d->name, id, sizeof(id));
        lower(id);
        json_object_set_new(patches, id, json_integer(sim->disk_rt[i].patches));
    }
    for (size_t i = 0; actions && i < sim->sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sim->sc->vms[i];
        if (!sim->vm_rt[i].actions)
            continue;
        char id[400];
        sim_resource_id(v->subscription_id, v->resource_group, "virtualMachines", v->name, id,
                        sizeof(id));
        lower(id);
        json_object_set_new(actions, id, json_integer(sim->vm_rt[i].actions));
    }
    if (!patches || !actions) {
        json_decref(patches);
        json_decref(actions);
        sim_json(rs, 200, NULL);
        return;
    }
    sim_json(rs, 200,
             json_pack("{s:I, s:I, s:o, s:o, s:I, s:I}", "requests", (json_int_t)sim->n_requests,
                       "throttled", (json_int_t)sim->n_throttled, "patches", patches, "vm_actions",
                       actions, "conflicts", (json_int_t)sim->n_conflicts, "quota_refusals",
                       (json_int_t)sim->n_quota));
}

void sim_admin_counters_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    sim->n_requests = sim->n_throttled = sim->n_conflicts = sim->n_quota = 0;
    for (size_t i = 0; i < sim->sc->n_disks; i++)
        sim->disk_rt[i].patches = 0;
    for (size_t i = 0; i < sim->sc->n_vms; i++)
        sim->vm_rt[i].actions = 0;
    sim_admin_counters_get(sim, rq, rs);
}
