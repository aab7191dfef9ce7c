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

#endif
