/*
 * vmsizes.c - ARM's VM sizes per region: refresh into the store, the
 * in-memory copy verdicts read, and the choice of caps (vmsizes.h).
 */
#include "service/vmsizes.h"
#include "service/fleet.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "azure/imds.h"
#include "azure/skus.h"
#include "core/fnv.h"
#include "core/time.h"

#define ARM_RESOURCE "https://management.azure.com/"

struct region {
    char name[64];        /* "westeurope" */
    char fetched_at[40];  /* of the rows held; "" when none held */
    char note[256];       /* the last refresh's failure, "" when none */
    struct tw_vmcap_table t; /* sorted; empty when not held */
};

struct tw_svc_vmsizes {
    pthread_mutex_t lock;
    atomic_int refs;
    size_t n, cap;
    struct region *r; /* by name (case-insensitive), so the stamp is stable */
    uint64_t stamp;   /* tw_svc_vmsizes_stamp, kept while STAMP_OK (every report asks) */
    bool stamp_ok;
};

struct tw_svc_vmsizes *tw_svc_vmsizes_new(void)
{
    struct tw_svc_vmsizes *vs = calloc(1, sizeof(*vs));
    if (!vs)
        return NULL;
    pthread_mutex_init(&vs->lock, NULL);
    atomic_init(&vs->refs, 1);
    return vs;
}

struct tw_svc_vmsizes *tw_svc_vmsizes_ref(struct tw_svc_vmsizes *vs)
{
    if (vs)
        atomic_fetch_add(&vs->refs, 1);
    return vs;
}

void tw_svc_vmsizes_unref(struct tw_svc_vmsizes *vs)
{
    if (!vs || atomic_fetch_sub(&vs->refs, 1) != 1)
        return;
    for (size_t i = 0; i < vs->n; i++)
        tw_vmcap_table_cleanup(&vs->r[i].t);
    free(vs->r);
    pthread_mutex_destroy(&vs->lock);
    free(vs);
}

/* REGION's slot (lock held), made when MAKE; NULL when none or no memory. */
static struct region *slot(struct tw_svc_vmsizes *vs, const char *region, bool make)
{
    size_t i = 0;
    int c = 1;
    while (i < vs->n && (c = strcasecmp(vs->r[i].name, region)) < 0)
        i++;
    if (i < vs->n && c == 0)
        return &vs->r[i];
    if (!make || strlen(region) >= sizeof(vs->r[0].name))
        return NULL;
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 8;
        struct region *r = realloc(vs->r, cap * sizeof(*r));
        if (!r)
            return NULL;
        vs->r = r;
        vs->cap = cap;
    }
    memmove(&vs->r[i + 1], &vs->r[i], (vs->n - i) * sizeof(*vs->r));
    memset(&vs->r[i], 0, sizeof(*vs->r));
    snprintf(vs->r[i].name, sizeof(vs->r[i].name), "%s", region);
    vs->n++;
    return &vs->r[i];
}

enum tw_err tw_svc_vmsizes_load(struct tw_svc_vmsizes *vs, struct tw_store *st,
                                const char *region, struct tw_error *err)
{
    struct tw_store_vm_size *rows = NULL;
    size_t n = 0;
    char source[128], fetched_at[40];
    enum tw_err rc = tw_store_vm_sizes_get(st, region, &rows, &n, source, sizeof(source),
                                           fetched_at, sizeof(fetched_at), err);
    if (rc != TW_OK)
        return rc;
    struct tw_vmcap_table t = {0};
    if (n && !(t.caps = calloc(n, sizeof(*t.caps)))) {
        tw_store_vm_sizes_free(rows, n);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading %zu VM sizes", n);
    }
    for (size_t i = 0; i < n; i++) {
        struct tw_error e = {0};
        const char *text = rows[i].caps ? rows[i].caps : "";
        if (tw_vmcap_from_json(text, strlen(text), &t.caps[t.n], &e) != TW_OK) {
            rc = tw_error_set(err, TW_EPARSE, "the stored VM size %s of %s no longer reads: %s",
                              rows[i].name, region, e.msg);
            break;
        }
        t.n++;
    }
    tw_store_vm_sizes_free(rows, n);
    if (rc != TW_OK) {
        tw_vmcap_table_cleanup(&t);
        return rc;
    }
    tw_vmcap_table_sort(&t);
    pthread_mutex_lock(&vs->lock);
    struct region *r = slot(vs, region, true);
    if (r) {
        tw_vmcap_table_cleanup(&r->t);
        r->t = t;
        snprintf(r->fetched_at, sizeof(r->fetched_at), "%s", fetched_at);
        vs->stamp_ok = false;
        r->note[0] = '\0';
    }
    pthread_mutex_unlock(&vs->lock);
    if (!r) {
        tw_vmcap_table_cleanup(&t);
        return tw_error_set(err, TW_ENOMEM, "out of memory holding the VM sizes of %s", region);
    }
    return TW_OK;
}

void tw_svc_vmsizes_note(struct tw_svc_vmsizes *vs, const char *region, const char *why)
{
    if (!vs || !region || !*region)
        return;
    pthread_mutex_lock(&vs->lock);
    struct region *r = slot(vs, region, why != NULL);
    if (r)
        snprintf(r->note, sizeof(r->note), "%.*s", (int)sizeof(r->note) - 1, why ? why : "");
    pthread_mutex_unlock(&vs->lock);
}

size_t tw_svc_vmsizes_regions(struct tw_svc_vmsizes *vs)
{
    size_t n = 0;
    pthread_mutex_lock(&vs->lock);
    for (size_t i = 0; i < vs->n; i++)
        n += vs->r[i].fetched_at[0] != '\0';
    pthread_mutex_unlock(&vs->lock);
    return n;
}

size_t tw_svc_vmsizes_count(struct tw_svc_vmsizes *vs, const char *region)
{
    pthread_mutex_lock(&vs->lock);
    const struct region *r = slot(vs, region, false);
    size_t n = r ? r->t.n : 0;
    pthread_mutex_unlock(&vs->lock);
    return n;
}

uint64_t tw_svc_vmsizes_stamp(struct tw_svc_vmsizes *vs)
{
    uint64_t h = TW_FNV_START;
    bool any = false;
    pthread_mutex_lock(&vs->lock);
    if (vs->stamp_ok) {
        uint64_t kept = vs->stamp;
        pthread_mutex_unlock(&vs->lock);
        return kept;
    }
    /* The figures a verdict reads, not when they were fetched: a daily
     * refresh that brings the same sizes leaves every kept verdict
     * standing. */
    for (size_t i = 0; i < vs->n; i++) {
        if (!vs->r[i].fetched_at[0])
            continue;
        any = true;
        h = tw_fnv_text(h, vs->r[i].name);
        for (size_t k = 0; k < vs->r[i].t.n; k++) {
            const struct tw_vmcap *c = &vs->r[i].t.caps[k];
            h = tw_fnv_text(h, c->vm_size);
            const int64_t figs[] = {c->iops, c->bytes_per_s, c->burst_iops,
                                    c->burst_bytes_per_s, (int64_t)c->premium};
            for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++)
                h = tw_fnv_i64(h, figs[f]);
        }
    }
    vs->stamp = any ? h : 0;
    vs->stamp_ok = true;
    pthread_mutex_unlock(&vs->lock);
    return any ? h : 0;
}

const struct tw_vmcap *tw_svc_vmcap_pick(struct tw_svc_vmsizes *arm,
                                         const struct tw_vmcap_table *bundled,
                                         const char *region, const char *size,
                                         struct tw_vmcap *buf, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (!size || !*size) {
        if (why && whylen)
            snprintf(why, whylen, "the inventory names no VM size");
        return NULL;
    }
    char arm_why[400] = "";
    if (arm && region && *region) {
        pthread_mutex_lock(&arm->lock);
        const struct region *r = slot(arm, region, false);
        const struct tw_vmcap *c = r ? tw_vmcap_find(&r->t, size) : NULL;
        if (tw_vmcap_has_cap(c)) {
            *buf = *c;
            snprintf(buf->source, sizeof(buf->source), "arm %.20s %.24s", r->name, r->fetched_at);
            pthread_mutex_unlock(&arm->lock);
            return buf;
        }
        if (!r || !r->fetched_at[0])
            snprintf(arm_why, sizeof(arm_why), "ARM's sizes of %s are not cached yet%s%.250s",
                     region, r && r->note[0] ? ": " : "", r ? r->note : "");
        else if (c)
            snprintf(arm_why, sizeof(arm_why),
                     "ARM's Resource SKUs of %s (fetched %s) list it without uncached disk "
                     "limits", r->name, r->fetched_at);
        else
            snprintf(arm_why, sizeof(arm_why), "ARM's Resource SKUs of %s (fetched %s) do not "
                     "list it either", r->name, r->fetched_at);
        pthread_mutex_unlock(&arm->lock);
    } else if (arm) {
        snprintf(arm_why, sizeof(arm_why), "the inventory names no region to read ARM's sizes of");
    } else {
        snprintf(arm_why, sizeof(arm_why), "ARM's Resource SKUs are not read (no ARM access "
                 "configured)");
    }
    const struct tw_vmcap *b = bundled ? tw_vmcap_find(bundled, size) : NULL;
    if (tw_vmcap_has_cap(b)) {
        *buf = *b;
        return buf;
    }
    if (why && whylen) {
        if (b)
            snprintf(why, whylen, "the bundled caps table gives no uncached disk limits for %s; "
                     "%s", size, arm_why);
        else
            snprintf(why, whylen, "%s is not in the bundled caps table (%zu sizes); %s", size,
                     bundled ? bundled->n : 0, arm_why);
    }
    return NULL;
}

/* ---- refreshing ---- */

enum tw_err tw_svc_vmsizes_refresh(struct tw_store *st, const struct tw_svc_arm *arm,
                                   const char *subscription, const char *region,
                                   const char *bearer, size_t *n, struct tw_error *err)
{
    if (n)
        *n = 0;
    if (!arm || !arm->arm_url || !*arm->arm_url)
        return tw_error_set(err, TW_EINVAL, "no ARM endpoint to read VM sizes from");
    struct tw_vmcap_table t = {0};
    enum tw_err rc = tw_az_skus_fetch(arm->http, arm->arm_url, subscription, region, bearer, NULL,
                                      &t, err);
    if (rc != TW_OK) {
        tw_vmcap_table_cleanup(&t);
        return rc;
    }
    if (t.n == 0) {
        tw_vmcap_table_cleanup(&t);
        return tw_error_set(err, TW_ENOENT,
                            "ARM's Resource SKUs list no VM size in %s (subscription %s): the "
                            "cached sizes are kept", region, subscription);
    }
    struct tw_store_vm_size *rows = calloc(t.n, sizeof(*rows));
    if (!rows) {
        tw_vmcap_table_cleanup(&t);
        return tw_error_set(err, TW_ENOMEM, "out of memory for %zu VM sizes", t.n);
    }
    for (size_t i = 0; rc == TW_OK && i < t.n; i++) {
        snprintf(rows[i].name, sizeof(rows[i].name), "%s", t.caps[i].vm_size);
        if (!(rows[i].caps = tw_vmcap_to_json(&t.caps[i])))
            rc = tw_error_set(err, TW_ENOMEM, "out of memory for %zu VM sizes", t.n);
    }
    char fetched_at[40], source[160];
    if (rc == TW_OK && !tw_rfc3339_format((int64_t)time(NULL), fetched_at, sizeof(fetched_at)))
        rc = tw_error_set(err, TW_EINVAL, "the system clock can't be written as a date");
    snprintf(source, sizeof(source), "%s (subscription %.64s)", TW_SVC_VMSIZES_SOURCE,
             subscription);
    if (rc == TW_OK)
        rc = tw_store_vm_sizes_put(st, region, source, fetched_at, rows, t.n, err);
    if (rc == TW_OK && n)
        *n = t.n;
    for (size_t i = 0; i < t.n; i++)
        free(rows[i].caps);
    free(rows);
    tw_vmcap_table_cleanup(&t);
    return rc;
}

enum tw_err tw_svc_vmsizes_load_fleet(struct tw_svc_vmsizes *vs, struct tw_store *st,
                                      struct tw_error *err)
{
    struct tw_svc_place *pl;
    size_t n;
    enum tw_err rc = tw_svc_fleet_places(st, true, &pl, &n, err);
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        rc = tw_svc_vmsizes_load(vs, st, pl[i].region, err);
        if (rc == TW_ENOENT) {
            tw_error_clear(err);
            rc = TW_OK;
        }
    }
    free(pl);
    return rc;
}

enum tw_err tw_svc_vmsizes_refresh_fleet(struct tw_store *st, const struct tw_svc_arm *arm,
                                         struct tw_svc_vmsizes *vs,
                                         bool (*stop)(void *arg), void *stop_arg,
                                         struct tw_svc_vmsizes_report *rep,
                                         struct tw_error *err)
{
    memset(rep, 0, sizeof(*rep));
    struct tw_svc_place *pl;
    size_t n;
    enum tw_err rc = tw_svc_fleet_places(st, true, &pl, &n, err);
    if (rc != TW_OK)
        return rc;
    rep->regions = n;
    if (!n) {
        free(pl);
        return TW_OK;
    }
    struct tw_az_token *tok = NULL;
    const char *bearer = arm->bearer;
    if (!bearer) {
        tok = malloc(sizeof(*tok));
        if (!tok) {
            free(pl);
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        }
        struct tw_az_http_opts imds;
        if (arm->http)
            imds = *arm->http;
        else
            tw_az_http_opts_imds(&imds);
        rc = tw_az_token_fetch(&imds, arm->imds_url, ARM_RESOURCE, NULL, tok, err);
        if (rc != TW_OK) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            tw_error_set(err, rc, "no token for ARM from the managed identity (IMDS %s): %s",
                         arm->imds_url ? arm->imds_url : "?", msg);
            for (size_t i = 0; i < n; i++)
                tw_svc_vmsizes_note(vs, pl[i].region, err->msg);
            rep->failed = n;
            snprintf(rep->first_error, sizeof(rep->first_error), "%s", err->msg);
            free(tok);
            free(pl);
            return rc;
        }
        bearer = tok->access_token;
    }
    enum tw_err first = TW_OK;
    for (size_t i = 0; i < n; i++) {
        if (stop && stop(stop_arg))
            break;
        struct tw_error e = {0};
        size_t got = 0;
        rc = tw_svc_vmsizes_refresh(st, arm, pl[i].subscription, pl[i].region, bearer, &got, &e);
        if (rc == TW_OK && vs)
            rc = tw_svc_vmsizes_load(vs, st, pl[i].region, &e);
        if (rc == TW_OK) {
            rep->refreshed++;
            rep->sizes += got;
            continue;
        }
        char at[40], line[sizeof(e.msg) + 96];
        if (!tw_rfc3339_format((int64_t)time(NULL), at, sizeof(at)))
            snprintf(at, sizeof(at), "?");
        snprintf(line, sizeof(line), "the refresh at %s failed: %s", at, e.msg);
        tw_svc_vmsizes_note(vs, pl[i].region, line);
        rep->failed++;
        if (first == TW_OK) {
            first = rc;
            snprintf(rep->first_error, sizeof(rep->first_error), "%.63s: %.440s", pl[i].region,
                     e.msg);
            tw_error_set(err, rc, "VM sizes of %s: %s", pl[i].region, e.msg);
        }
    }
    if (tok) {
        memset(tok->access_token, 0, sizeof(tok->access_token));
        free(tok);
    }
    free(pl);
    return first;
}
