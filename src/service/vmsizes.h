/*
 * vmsizes.h - the VM sizes of the fleet's regions from ARM's Resource
 * SKUs: fetched through azure/skus, cached in the store (one row per
 * region and size, tw_store_vm_sizes_put), held in memory for verdicts,
 * and the choice of the caps a verdict applies.
 *
 * Caps a verdict uses, in this order (tw_svc_vmcap_pick):
 *   1. ARM's figures for the VM's size in the VM's region, when that
 *      region's sizes are cached and the size has an uncached limit;
 *   2. the bundled table (pricing/azure-vm-disk-caps.json);
 *   3. none: the verdict's "vm" says so, with why ("not in the bundled
 *      table (1,112 sizes), and ARM's sizes of westeurope are not read:
 *      ...").
 *
 * A refresh fetches every page of a region first and replaces the stored
 * sizes in one transaction afterwards: a failure (network, a bad page,
 * the token) leaves the cached sizes as they were, and an answer with no
 * VM size at all stores nothing (TW_ENOENT).
 *
 * Threads: a struct tw_svc_vmsizes is shared by the request threads (which
 * pick caps) and the worker (which refreshes it); it has a lock of its own
 * and a reference count, so a refresh left running at a stop keeps it
 * alive on its own.
 */
#ifndef TW_SERVICE_VMSIZES_H
#define TW_SERVICE_VMSIZES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/http.h"
#include "core/err.h"
#include "core/vmcap.h"
#include "store/store.h"

/* A day: how often the server reads the fleet's regions again. */
#define TW_SVC_VMSIZES_EVERY_S (24 * 3600)
/* What the store's rows say they came from. */
#define TW_SVC_VMSIZES_SOURCE "arm Resource SKUs"

/* Where ARM is and where its token comes from. */
struct tw_svc_arm {
    const char *arm_url;                /* ARM's base URL (azure/endpoints.h) */
    const char *imds_url;               /* IMDS: a managed-identity token for ARM */
    const char *bearer;                 /* a token to use instead of IMDS's; NULL: IMDS */
    const struct tw_az_http_opts *http; /* for ARM and IMDS; NULL: the defaults */
};

/* ---- the in-memory copy ---- */

struct tw_svc_vmsizes;

/* An empty copy (one reference); NULL when out of memory. */
struct tw_svc_vmsizes *tw_svc_vmsizes_new(void);
/* Another reference / drops one (the last frees it; NULL allowed). */
struct tw_svc_vmsizes *tw_svc_vmsizes_ref(struct tw_svc_vmsizes *vs);
void tw_svc_vmsizes_unref(struct tw_svc_vmsizes *vs);

/* Reads REGION's cached sizes from the store into VS (replacing what VS
 * had of it).  TW_ENOENT when the store has none for REGION (VS keeps
 * what it had); TW_EPARSE naming the size when a stored text no longer
 * reads. */
enum tw_err tw_svc_vmsizes_load(struct tw_svc_vmsizes *vs, struct tw_store *st,
                                const char *region, struct tw_error *err);

/* Records that REGION's last refresh failed with WHY (shown in the "why"
 * of verdicts that find no cap there); NULL clears it. */
void tw_svc_vmsizes_note(struct tw_svc_vmsizes *vs, const char *region, const char *why);

/* Regions held, and the sizes of REGION (0 when not held). */
size_t tw_svc_vmsizes_regions(struct tw_svc_vmsizes *vs);
size_t tw_svc_vmsizes_count(struct tw_svc_vmsizes *vs, const char *region);

/* A hash of the regions held and the figures of their sizes that a verdict
 * reads (0 when none), for what a kept verdict was judged under: a refresh
 * that brings other figures changes it, one that brings the same does not. */
uint64_t tw_svc_vmsizes_stamp(struct tw_svc_vmsizes *vs);

/*
 * The caps a verdict applies to a VM of SIZE in REGION: ARM's (from ARM,
 * NULL allowed: none read), else BUNDLED's (NULL allowed), copied into
 * BUF, which is returned.  NULL when neither gives an uncached limit; WHY
 * (WHYLEN bytes) then says why in one line.
 */
const struct tw_vmcap *tw_svc_vmcap_pick(struct tw_svc_vmsizes *arm,
                                         const struct tw_vmcap_table *bundled,
                                         const char *region, const char *size,
                                         struct tw_vmcap *buf, char *why, size_t whylen);

/* ---- refreshing from ARM ---- */

/*
 * Fetches REGION's VM sizes from ARM (through SUBSCRIPTION, with BEARER)
 * and replaces the store's rows of REGION in one transaction; *N (may be
 * NULL) gets the sizes stored.  Errors as tw_az_skus_fetch and the store;
 * TW_ENOENT when ARM lists no VM size there (nothing stored).
 */
enum tw_err tw_svc_vmsizes_refresh(struct tw_store *st, const struct tw_svc_arm *arm,
                                   const char *subscription, const char *region,
                                   const char *bearer, size_t *n, struct tw_error *err);

/* What a refresh of the fleet did. */
struct tw_svc_vmsizes_report {
    size_t regions;     /* distinct regions of the fleet's VMs */
    size_t refreshed;   /* regions fetched and stored */
    size_t sizes;       /* sizes stored in all */
    size_t failed;      /* regions whose refresh failed (kept as they were) */
    char first_error[512]; /* the first failure, "" when none */
};

/*
 * Refreshes every region the store's VMs are in (each through the first
 * subscription seen there), with one token (ARM->bearer, else IMDS's
 * managed identity), and loads each stored region into VS (may be NULL).
 * A region that fails is noted on VS and the others go on.  TW_OK when
 * every region was refreshed (or there is none); otherwise the first
 * error, with REP saying how many failed.  STOP (may be NULL) is asked
 * between regions: true ends the walk early (a server stopping).
 */
enum tw_err tw_svc_vmsizes_refresh_fleet(struct tw_store *st, const struct tw_svc_arm *arm,
                                         struct tw_svc_vmsizes *vs,
                                         bool (*stop)(void *arg), void *stop_arg,
                                         struct tw_svc_vmsizes_report *rep,
                                         struct tw_error *err);

/* Loads into VS every region of the store's VMs that has cached sizes
 * (at start, before the first refresh); regions without are skipped. */
enum tw_err tw_svc_vmsizes_load_fleet(struct tw_svc_vmsizes *vs, struct tw_store *st,
                                      struct tw_error *err);

#endif
