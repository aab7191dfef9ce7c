/*
 * vmcap.h - a VM size's disk limits (uncached, burst, cached) and Premium storage.
 *
 * Whatever its disks are rated, a VM can't move more uncached IOPS or bytes
 * per second to them than its size allows; the verdict's expected figure is
 * the smaller of the two.  The limits come from a bundled table
 * (pricing/azure-vm-disk-caps.json) or, when ARM is reachable, from the
 * Resource SKUs API (capabilities UncachedDiskIOPS and
 * UncachedDiskBytesPerSecond).
 */
#ifndef TW_CORE_VMCAP_H
#define TW_CORE_VMCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Whether a VM size can attach Premium SSD (Premium storage); the savings
 * model needs it before it proposes a Premium tier. */
enum tw_vmcap_premium {
    TW_VMCAP_PREMIUM_UNKNOWN = 0, /* not stated by the source */
    TW_VMCAP_PREMIUM_NO,
    TW_VMCAP_PREMIUM_YES,
};

struct tw_vmcap {
    char vm_size[64];            /* e.g. Standard_D8s_v3 (case as Azure writes it) */
    int64_t iops;                /* uncached disk IOPS; 0 when unknown */
    int64_t bytes_per_s;         /* uncached disk bytes per second; 0 when unknown */
    int64_t burst_iops;          /* VM-level burst of the uncached IOPS; 0: none or unknown */
    int64_t burst_bytes_per_s;   /* the same for bytes per second */
    int64_t cached_iops;         /* cached (and temp disk) IOPS; 0 when unknown */
    int64_t cached_bytes_per_s;  /* cached (and temp disk) read bytes per second */
    enum tw_vmcap_premium premium;
    char source[64];             /* where the figures came from: "bundled table", "arm" */
};

struct tw_vmcap_table {
    size_t n;
    struct tw_vmcap *caps;   /* heap array, freed by tw_vmcap_table_cleanup */
    bool sorted;             /* by name (case-insensitive): lookups bisect */
};

/*
 * Parses a caps table (LEN bytes of JSON, tierwise.vm-disk-caps/1 or the
 * research copy without schema_version) into T, sorted by name.  Of each
 * row: vm_size, uncached_disk_iops, uncached_disk_mbps, uncached_burst_iops,
 * uncached_burst_mbps, cached_iops, cached_mbps (MB/s = 10^6 bytes/s; null
 * is unknown) and premium_storage (true, false or null); other keys (the
 * row's source, notes, vCPUs) are the table's documentation.  Source
 * "bundled table".  TW_EPARSE naming the row for anything malformed, a name
 * listed twice (in any case) or more than 4,096 rows.
 */
enum tw_err tw_vmcap_table_parse(const char *buf, size_t len, struct tw_vmcap_table *t,
                                 struct tw_error *err);

/* The caps of VM_SIZE (case-insensitive), or NULL: by bisection in a
 * sorted table, else by a scan. */
const struct tw_vmcap *tw_vmcap_find(const struct tw_vmcap_table *t, const char *vm_size);

/* Sorts T by name (case-insensitive) and marks it sorted. */
void tw_vmcap_table_sort(struct tw_vmcap_table *t);

/* Whether C carries an uncached figure (a cap the verdict can apply). */
bool tw_vmcap_has_cap(const struct tw_vmcap *c);

/* "yes", "no", "unknown". */
const char *tw_vmcap_premium_name(enum tw_vmcap_premium p);

/*
 * One cap as JSON text (a new string, free(); NULL when out of memory),
 * the form the store keeps ARM's sizes in:
 * {"vm_size", "iops", "bytes_per_s", "burst_iops", "burst_bytes_per_s",
 *  "cached_iops", "cached_bytes_per_s", "premium_storage", "source"},
 * figures as integers (0 unknown), premium_storage true, false or null.
 */
char *tw_vmcap_to_json(const struct tw_vmcap *c);

/* Reads what tw_vmcap_to_json wrote (LEN bytes) into OUT.  TW_EPARSE with
 * the field for anything else; every key is required. */
enum tw_err tw_vmcap_from_json(const char *buf, size_t len, struct tw_vmcap *out,
                               struct tw_error *err);

void tw_vmcap_table_cleanup(struct tw_vmcap_table *t);

/* Parses the caps table built into the binary (pricing/azure-vm-disk-caps.json). */
enum tw_err tw_vmcap_table_builtin(struct tw_vmcap_table *t, struct tw_error *err);

/*
 * A Resource SKUs UncachedDiskBytesPerSecond value in bytes per second
 * (10^6 bytes = 1 MB, as the VM size pages count).  The API is not
 * consistent: older sizes encode MB x 2^20 (Standard_E64s_v3's 1,200 MBps is
 * 1,258,291,200), newer ones MB x 10^6 (Standard_B2as_v2 85,000,000).  A
 * whole number of 10^6 is taken as it is; otherwise a multiple of 2^18 (a
 * quarter MiB/s) is read as MB x 2^20 and converted; anything else is taken
 * as it is.  (MB x 2^20 is a whole number of 10^6 only from 15,625 MB/s
 * on.)  Negative values give 0.
 */
int64_t tw_vmcap_arm_bytes_per_s(int64_t raw);

/*
 * The caps of VM_SIZE from a Resource SKUs response (LEN bytes of JSON: the
 * REST page {"value": [...]} or az's bare array): the virtualMachines entry
 * of that name, capabilities UncachedDiskIOPS and UncachedDiskBytesPerSecond
 * (decimal strings), source "arm".  A capability that is absent is 0
 * (unknown).  TW_ENOENT when no entry has that name, TW_EPARSE on a
 * malformed document or value.
 */
enum tw_err tw_vmcap_from_resource_skus(const char *buf, size_t len, const char *vm_size,
                                        struct tw_vmcap *out, struct tw_error *err);

/* The bytes of pricing/azure-vm-disk-caps.json, generated at build time. */
extern const unsigned char tw_builtin_vm_caps_json[];
extern const size_t tw_builtin_vm_caps_json_len;

#endif
