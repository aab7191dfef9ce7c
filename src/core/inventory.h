/*
 * inventory.h - a VM and the managed disks attached to it.
 *
 * Filled by the agent from the Instance Metadata Service and the Linux
 * device map, read back from a file for `tierwise compliance`, and sent to
 * the backend inside a report.  Its JSON form is the `inventory` object of
 * tierwise.report/1 (README "The inventory").
 */
#ifndef TW_CORE_INVENTORY_H
#define TW_CORE_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#include "core/err.h"
#include "core/tier.h"

/* jansson's json_t, declared so this header needs no jansson include. */
struct json_t;

#define TW_INV_MAX_DISKS 72   /* OS disk + the largest VM's 64 data disks, with room */
#define TW_INV_MAX_TAGS 64    /* Azure allows 50 per resource */

enum tw_disk_role { TW_DISK_OS, TW_DISK_DATA };
enum tw_caching { TW_CACHE_NONE, TW_CACHE_READONLY, TW_CACHE_READWRITE };

struct tw_tag {
    char key[512];
    char value[256];
};

struct tw_disk {
    char name[128];
    enum tw_disk_role role;
    int lun;                    /* -1 for the OS disk or when unknown */
    char sku[32];               /* Premium_LRS, StandardSSD_LRS, Standard_LRS, ... */
    int64_t size_gib;
    /* The tier in use (P10, E15, S30 ...) once rated (tw_inventory_rate):
     * the size tier or a higher performance tier; "" when there is none
     * (JSON null).  Before rating, what the source said: Azure's `tier`,
     * a performance tier. */
    char tier[16];
    char perf_tier[16];         /* the performance tier Azure reports, "" unset */
    char size_tier[16];         /* the smallest tier holding the size, "" none */
    enum tw_rating_kind rating; /* TW_RATING_UNSET until rated */
    int64_t rated_iops;         /* of the tier in use; 0 unknown (JSON null) */
    double rated_mbps;          /* MB/s of the tier in use; 0 unknown */
    char rated_why[240];        /* why there is no tier, or what was left aside; "" */
    enum tw_caching caching;
    char managed_disk_id[512];  /* ARM resource id, "" when unknown */
    bool write_accelerator;
    char device[64];            /* Linux device, e.g. /dev/sdc; "" when unmapped */
};

struct tw_vm {
    char name[128];
    char resource_id[512];
    char subscription_id[64];
    char resource_group[128];
    char location[64];
    char vm_size[64];
    size_t n_tags;
    struct tw_tag tags[TW_INV_MAX_TAGS];
};

struct tw_inventory {
    struct tw_vm vm;
    size_t n_disks;
    struct tw_disk disks[TW_INV_MAX_DISKS];
};

/* Empties INV. */
void tw_inventory_init(struct tw_inventory *inv);

const char *tw_caching_name(enum tw_caching c);

/* The first of the N TAGS whose key is KEY ignoring case (Azure tag names
 * ignore case, so a VM may carry "Schedule" and "schedule" both: the first
 * in TAGS' order is the one read, by every reader), or NULL. */
const struct tw_tag *tw_tag_find(const struct tw_tag *tags, size_t n, const char *key);
/* "None", "ReadOnly", "ReadWrite" (case-insensitive); TW_EINVAL otherwise. */
enum tw_err tw_caching_parse(const char *s, enum tw_caching *out);

/* The disk whose device is DEV: "/dev/sdc" or just "sdc" match either
 * form; NULL when none. */
const struct tw_disk *tw_inventory_disk_by_device(const struct tw_inventory *inv,
                                                   const char *dev);

/*
 * Rates every disk of INV from CAT (tw_tier_rate): size tier, the tier in
 * use (into `tier`), rated IOPS and MB/s or why there are none.  A disk
 * not rated before has its `tier` (what IMDS or a file said: Azure's
 * performance tier) kept as its perf_tier first; rating again gives the
 * same.
 */
void tw_inventory_rate(struct tw_inventory *inv, const struct tw_tier_catalog *cat);

/* The inventory as a JSON value (new reference), NULL when out of memory.
 * A rated disk also has `size_tier`, `performance_tier`, `rating`,
 * `rated_iops`, `rated_mbps` and `rated_why`. */
struct json_t *tw_inventory_to_value(const struct tw_inventory *inv);

/*
 * Reads LEN bytes of JSON: either the inventory object itself or a whole
 * report with an "inventory" member (`--inventory-file` takes both).
 * Broken JSON, missing required keys, wrong types and over-long strings
 * fail with TW_EPARSE naming the field from the root ("disks[0].lun ..."
 * in an inventory, "inventory.disks[0].lun ..." in a report); INV is then
 * empty.  Read by tw_inventory_read (core/jsonread.h), the reader the
 * report uses too.
 */
enum tw_err tw_inventory_from_json(const char *buf, size_t len, struct tw_inventory *inv,
                                   struct tw_error *err);

#endif
