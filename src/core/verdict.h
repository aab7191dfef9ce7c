/*
 * verdict.h - does a disk (or a stripe of disks) deliver its rated tier?
 *
 * A result is judged against what its target could deliver: expected =
 * min(sum of the member disks' rated figures, the VM size's uncached cap),
 * for IOPS and for MB/s, both brought to the run's block size (a disk rated
 * 250 MB/s can't do 7,500 IOPS of 64 KiB; Azure counts an I/O above 256 KiB
 * as several).  IOPS are judged on random-I/O results, MB/s on sequential
 * ones.  The naive comparison lies in known ways, so before saying `under`
 * the verdict rules out a method that can't reach the rating (buffered I/O,
 * a short run, too few I/Os in flight by Little's law), a VM that caps the
 * disks, bursting and host caching.  Each verdict carries its numbers and a
 * one-line reason a person can act on.  The CLI (`tierwise compliance`)
 * and the backend call the same functions.
 */
#ifndef TW_CORE_VERDICT_H
#define TW_CORE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/err.h"
#include "core/inventory.h"
#include "core/result.h"
#include "core/tier.h"
#include "core/vmcap.h"

#define TW_VERDICT_MAX_DISKS TW_RESULT_MAX_MEMBERS

/* The version of the rules below.  The backend keeps each result's verdict
 * beside it when the report is stored (judged once, not per request) and
 * trusts a kept verdict only while this version, the tier catalog and the
 * VM caps it was judged with are those in use: a change to how a verdict
 * is made bumps it, and every kept verdict is then judged again. */
#define TW_VERDICT_RULES_VERSION 3

/* Measured at or above this share of expected delivers. */
#define TW_VERDICT_DELIVERS_RATIO 0.90
/* Up to this share of expected is still the rating (measurement noise);
 * above it needs an explanation: bursting, a cache. */
#define TW_VERDICT_ABOVE_RATIO 1.05
/* Runs shorter than this prove nothing (a burst bucket, a cold cache). */
#define TW_VERDICT_MIN_RUNTIME_MS 10000
/*
 * The slowest latency granted to an I/O that did not queue: Premium SSD is
 * designed for single-digit milliseconds.  Little's law bounds a run at
 * (I/Os in flight) / latency; mean latency above this is queueing behind a
 * limit (the disk's or the VM's), which is what the run is meant to find,
 * so the bound uses the smaller of the two.
 */
#define TW_VERDICT_SERVICE_LATENCY_NS 10000000.0

enum tw_verdict_kind {
    TW_VERDICT_DELIVERS,     /* measured >= 90 % of expected */
    TW_VERDICT_UNDER,        /* below; bound_by says whose limit was missed */
    TW_VERDICT_VM_CAPPED,    /* the VM's cap binds and measured reaches it */
    TW_VERDICT_BURST,        /* above the rating, within burst figures */
    TW_VERDICT_CACHED,       /* above the rating with host caching on */
    TW_VERDICT_INCONCLUSIVE  /* the method or the data can't decide */
};

enum tw_metric { TW_METRIC_IOPS, TW_METRIC_MBPS };
enum tw_bound { TW_BOUND_DISKS, TW_BOUND_VM };

struct tw_verdict {
    char result_id[40];
    char target[64];             /* the result's device (dm-8, sdc), or "" */
    enum tw_verdict_kind kind;
    enum tw_metric judged;       /* IOPS for random patterns, MB/s for sequential */
    size_t n_disks;
    struct {
        char name[128];          /* Azure disk name */
        char tier[8];            /* rated tier, "" for provisioned disks */
    } disks[TW_VERDICT_MAX_DISKS];
    double measured_iops;        /* reads + writes */
    double measured_mbps;        /* reads + writes, 10^6 bytes/s */
    bool expected_known;         /* false for provisioned disks (v2, Ultra) */
    double expected_iops;        /* min(disks, VM) at the run's block size */
    double expected_mbps;        /* the same in MB/s */
    enum tw_bound bound_by;      /* whose limit expected is */
    double ratio_iops;           /* measured / expected; 0 when not known */
    double ratio_mbps;
    double rated_iops;           /* sum of the members' rated IOPS */
    double rated_mbps;           /* sum of the members' rated MB/s */
    char vm_size[64];            /* whose cap was applied, or the VM's size; "" when not known */
    double vm_iops;              /* the VM's uncached cap; 0 when unknown */
    double vm_mbps;
    char vm_source[64];          /* where the cap came from ("bundled table", "arm"); "" none */
    char vm_why[256];            /* when no cap applies: why, in one line */
    char reason[768];            /* one line: the numbers and why */
};

const char *tw_verdict_name(enum tw_verdict_kind k);
const char *tw_metric_name(enum tw_metric m);
const char *tw_bound_name(enum tw_bound b);

/*
 * The inventory disks behind R's target, matched by the result's member
 * devices (sdg, sdh, sdi of a stripe) or else its device, against the
 * inventory's `device` fields.  OUT has room for TW_VERDICT_MAX_DISKS; *N
 * gets the count, each disk once.  TW_EINVAL with a message naming the
 * devices when a member (or the device) matches no disk: a partly matched
 * stripe would give a wrong expected figure.
 */
enum tw_err tw_verdict_disks(const struct tw_result *r, const struct tw_inventory *inv,
                             const struct tw_disk **out, size_t *n, struct tw_error *err);

/*
 * Judges R against DISKS (N >= 1, each rated from CAT) and the VM's uncached
 * cap CAP (NULL when not known).  Fills V and returns TW_OK whatever the
 * verdict; TW_EINVAL with a message when a disk can't be rated (unknown
 * SKU, a size beyond the largest tier, a bad performance tier) or N is 0.
 */
enum tw_err tw_verdict_judge(const struct tw_result *r, const struct tw_disk *const *disks,
                             size_t n, const struct tw_tier_catalog *cat,
                             const struct tw_vmcap *cap, struct tw_verdict *v,
                             struct tw_error *err);

/* tw_verdict_disks then tw_verdict_judge: one result against an inventory. */
enum tw_err tw_verdict_check(const struct tw_result *r, const struct tw_inventory *inv,
                             const struct tw_tier_catalog *cat, const struct tw_vmcap *cap,
                             struct tw_verdict *v, struct tw_error *err);

/*
 * Says on V (after tw_verdict_judge or tw_verdict_check, which start it
 * afresh) that no cap of the VM applies, and WHY (one line the caller
 * knows best: "not in the bundled table (1,112 sizes) and ARM's sizes of
 * westeurope are not read: ..."); SIZE is the VM's size (NULL or "": not
 * known).  Nothing changes when a cap was applied.  Without this call a
 * verdict without a cap still says why in general words.
 */
void tw_verdict_set_vm_unknown(struct tw_verdict *v, const char *size, const char *why);

/*
 * One verdict as a JSON object (new reference; NULL when out of memory):
 * result_id, target, disks, tiers, verdict, judged, measured {iops, mbps},
 * expected {iops, mbps, bound_by} (nulls when not known), ratio {iops,
 * mbps}, rated {iops, mbps} or null, vm, reason.  vm is always an object:
 * {size, cap: {iops, mbps, source}, iops, mbps, why: null} when the VM's
 * cap was applied, {size (null when not known), cap: null, iops: null,
 * mbps: null, why} when not.
 */
json_t *tw_verdict_to_value(const struct tw_verdict *v);

/* {"verdicts": [...]} as a new string (free()), NULL when out of memory.
 * FLAGS are json_dumps flags; without a JSON_REAL_PRECISION figures are
 * printed with 12 significant digits. */
char *tw_verdicts_to_json(const struct tw_verdict *v, size_t n, size_t flags);

#endif
