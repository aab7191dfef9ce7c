/*
 * vmcap.h - a VM size's uncached disk limits.
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

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct tw_vmcap {
    char vm_size[64];        /* e.g. Standard_D8s_v3 (case as Azure writes it) */
    int64_t iops;            /* uncached disk IOPS; 0 when unknown */
    int64_t bytes_per_s;     /* uncached disk bytes per second; 0 when unknown */
    char source[64];         /* where the figures came from: "bundled table", "arm" */
};

struct tw_vmcap_table {
    size_t n;
    struct tw_vmcap *caps;   /* heap array, freed by tw_vmcap_table_cleanup */
};

/* Parses the bundled caps file (LEN bytes of JSON) into T. */
enum tw_err tw_vmcap_table_parse(const char *buf, size_t len, struct tw_vmcap_table *t,
                                 struct tw_error *err);

/* The caps of VM_SIZE (case-insensitive), or NULL. */
const struct tw_vmcap *tw_vmcap_find(const struct tw_vmcap_table *t, const char *vm_size);

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
