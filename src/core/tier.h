/*
 * tier.h - the rated catalog: what Azure promises each managed disk.
 *
 * A Premium SSD, Standard SSD or Standard HDD is billed and rated by its
 * tier (P30, E15, S10 ...), found by rounding the disk's size up to the next
 * offered size; a Premium disk's performance tier, when set, raises it.
 * Premium SSD v2 and Ultra have no tiers: IOPS and MB/s are provisioned per
 * disk within rules that depend on the size.  The figures come from
 * pricing/azure-disk-tiers.json (tierwise.disk-tiers/1, sources in the
 * file), compiled into the binary and also readable from a file.
 */
#ifndef TW_CORE_TIER_H
#define TW_CORE_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/sku.h"

#define TW_TIER_MAX 128      /* tiers a catalog may hold (39 today) */
#define TW_TIER_MAX_SKUS 16  /* SKU names a catalog may map to a table */

enum tw_burst_kind {
    TW_BURST_NONE,
    TW_BURST_CREDIT,    /* free, on by default, a 30-minute bucket */
    TW_BURST_ON_DEMAND  /* opt-in and billed (Premium P30 and up) */
};

struct tw_tier {
    char name[8];             /* "P30"; its letter names the table */
    char sku[32];             /* the SKU the table lists it under */
    int64_t size_gib;         /* offered size, GiB */
    int64_t iops;             /* rated (baseline) IOPS */
    double mbps;              /* rated MB/s, 10^6 bytes per second */
    bool upper_bound;         /* rated "up to" (Standard), not guaranteed */
    enum tw_burst_kind burst;
    int64_t burst_iops;       /* burst ceiling; 0 without bursting */
    double burst_mbps;        /* burst ceiling, MB/s; 0 without bursting */
    int64_t plus_iops;        /* performance plus (set at creation); 0 if none */
    double plus_mbps;         /* performance plus MB/s; 0 if none */
};

/* How a provisioned disk type's limits follow from its size. */
struct tw_prov_rules {
    char sku[32];             /* PremiumV2_LRS, UltraSSD_LRS; "" if absent */
    int64_t min_gib, max_gib; /* offered sizes, GiB */
    int64_t min_iops;         /* baseline (v2, free) or minimum (Ultra) IOPS */
    double min_mbps;          /* baseline or minimum MB/s */
    int64_t iops_per_gib;     /* how far provisioned IOPS may rise per GiB */
    int64_t iops_above_gib;   /* v2: the rise starts above this size; 0 for Ultra */
    int64_t max_iops;         /* per-disk maximum IOPS */
    double mbps_per_iops;     /* MB/s allowed per provisioned IOPS */
    double max_mbps;          /* per-disk maximum MB/s */
};

struct tw_tier_catalog {
    size_t n_tiers;
    struct tw_tier *tiers;    /* heap, ascending size within each letter */
    size_t n_skus;
    struct {
        char sku[32];         /* e.g. Premium_ZRS */
        char letter;          /* the table it uses: 'P', 'E' or 'S' */
    } skus[TW_TIER_MAX_SKUS];
    struct tw_prov_rules premium_v2, ultra;
};

/*
 * Parses LEN bytes of tierwise.disk-tiers/1 JSON into CAT (fully replaced;
 * free with tw_tier_catalog_cleanup even on failure).  The catalog may come
 * from outside (--catalog): every figure is checked, a tier table must be
 * ascending in size, and each SKU must be a tiered SKU of the vocabulary
 * (core/sku.h) mapped to its own letter's table, which must exist.
 * TW_EPARSE naming the field on bad input.
 */
enum tw_err tw_tier_catalog_parse(const char *buf, size_t len, struct tw_tier_catalog *cat,
                                  struct tw_error *err);

/* Parses the copy of pricing/azure-disk-tiers.json built into the binary. */
enum tw_err tw_tier_catalog_builtin(struct tw_tier_catalog *cat, struct tw_error *err);

/* Frees CAT's tiers and empties it (a zeroed or cleaned catalog is fine). */
void tw_tier_catalog_cleanup(struct tw_tier_catalog *cat);

/* Whether CAT rates SKU (parsed by core/sku, case-insensitive as Azure
 * compares names): a tier table for it, or its provisioned rules.  *OUT
 * (may be NULL) gets its family and redundancy. */
bool tw_tier_sku(const struct tw_tier_catalog *cat, const char *sku, struct tw_sku *out);

/* The tier called NAME ("P30", case-insensitive), or NULL. */
const struct tw_tier *tw_tier_by_name(const struct tw_tier_catalog *cat, const char *name);

/*
 * The tier a disk of SKU and SIZE_GIB is billed and rated at: the smallest
 * tier of the SKU's table at least that large.  TW_EINVAL with a message for
 * an unknown or untiered SKU, a size below 1 GiB, or a size beyond the
 * table's largest tier.
 */
enum tw_err tw_tier_for_size(const struct tw_tier_catalog *cat, const char *sku,
                             int64_t size_gib, const struct tw_tier **out,
                             struct tw_error *err);

/*
 * The tier a disk is rated at: its size tier, raised by PERF_TIER (the
 * inventory's `tier`, "" or NULL when unset) on a Premium SSD.  A
 * performance tier can't be set below the size's own tier, so a lower one
 * (a stale record) leaves the size tier.  Standard disks have no
 * performance tiers: their `tier` is the size tier and is not consulted.
 * TW_EINVAL when PERF_TIER names no tier of the SKU's table.
 */
enum tw_err tw_tier_for_disk(const struct tw_tier_catalog *cat, const char *sku,
                             int64_t size_gib, const char *perf_tier,
                             const struct tw_tier **out, struct tw_error *err);

/*
 * The range a provisioned disk (Premium SSD v2, Ultra) of SIZE_GIB may be
 * set to: the baseline or minimum, and the size's maximum.  TW_EINVAL when
 * SKU is not provisioned or the size is outside its range.
 */
enum tw_err tw_tier_prov_range(const struct tw_tier_catalog *cat, const char *sku,
                               int64_t size_gib, int64_t *min_iops, int64_t *max_iops,
                               double *min_mbps, double *max_mbps, struct tw_error *err);

/* What a disk is rated at, as the inventory shows it. */
enum tw_rating_kind {
    TW_RATING_UNSET,        /* not looked up (an inventory as read, before rating) */
    TW_RATING_TIER,         /* a tier's figures: the size tier or a performance tier above it */
    TW_RATING_PROVISIONED,  /* Premium SSD v2, Ultra: no tiers, IOPS and MB/s set per disk */
    TW_RATING_NONE          /* no rating: no size, an unknown SKU, beyond the largest tier,
                             * a performance tier the catalog does not know */
};

struct tw_disk_rating {
    enum tw_rating_kind kind;
    const struct tw_tier *size_tier; /* the smallest tier of the SKU's table holding the
                                      * size; NULL when there is none */
    const struct tw_tier *tier;      /* the tier in use (TW_RATING_TIER only, else NULL) */
    char why[240];                   /* "" or, in words, why there is no tier or what was
                                      * left aside (a stale or Standard performance tier) */
};

/*
 * Rates a disk of SKU and SIZE_GIB whose performance tier (as Azure reports
 * it; "" or NULL when unset) is PERF_TIER: its size tier, the tier in use
 * (tw_tier_for_disk's rules) or, for a provisioned SKU, no tier with the
 * range the size allows in OUT->why.  Never fails: a disk that can't be
 * rated is TW_RATING_NONE with the reason.
 */
void tw_tier_rate(const struct tw_tier_catalog *cat, const char *sku, int64_t size_gib,
                  const char *perf_tier, struct tw_disk_rating *out);

/* "tier", "provisioned", "none" ("" for TW_RATING_UNSET). */
const char *tw_rating_kind_name(enum tw_rating_kind k);
/* The kind called NAME (not "" or UNSET); false when none is. */
bool tw_rating_kind_parse(const char *name, enum tw_rating_kind *out);

const char *tw_burst_kind_name(enum tw_burst_kind k);

/* The bytes of pricing/azure-disk-tiers.json, generated at build time. */
extern const unsigned char tw_builtin_disk_tiers_json[];
extern const size_t tw_builtin_disk_tiers_json_len;

#endif
