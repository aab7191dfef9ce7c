/*
 * devmap.h - which Linux block device is which Azure disk.
 *
 * Kernel names (sda, sdc, nvme0n3) are not stable across boots; the LUN
 * is.  For each disk of an inventory the map looks, in order, at:
 *
 *  1. udev's Azure links: data disks /dev/disk/azure/data/by-lun/N
 *     (azure-vm-utils, SCSI and NVMe), /dev/disk/azure/scsi1/lunN
 *     (WALinuxAgent), /dev/disk/azure/datadisks/lunN (very old agents);
 *     the OS disk /dev/disk/azure/os, then /dev/disk/azure/root;
 *  2. sysfs, when there are no links: a SCSI disk (vendor Msft) whose
 *     VMBus controller's device_id is {f8b3781b-1e82-4818-a1c3-63d806ec15bb}
 *     (the data-disk controller) has the LUN of its H:C:T:L address; one
 *     whose device_id starts {00000000-0000- is the OS disk (Gen1), as is
 *     LUN 0 of the {f8b3781a-...} controller (Gen2); an NVMe namespace of a
 *     "MSFT NVMe Accelerator v1.0" controller is the OS disk at nsid 1 and
 *     LUN nsid - 2 from nsid 2 on (azure-api/azure-linux-devices.md).
 *
 * A device-mapper or MD device (an LVM stripe, a RAID 0) is resolved
 * through sysfs slaves/ to the member disks (bench/target's
 * tw_target_devinfo) and each member to its inventory disk.
 *
 * Both roots are options so the tests run on fixture trees; a device is
 * always reported by its kernel name under /dev ("/dev/sdc").
 */
#ifndef TW_AGENT_DEVMAP_H
#define TW_AGENT_DEVMAP_H

#include <stddef.h>

#include "core/err.h"
#include "core/inventory.h"
#include "core/result.h"

struct tw_devmap_opts {
    const char *sysfs_root; /* NULL: $TW_SYSFS_ROOT, else "/sys" */
    const char *dev_root;   /* NULL: $TW_DEV_ROOT, else "/dev" */
};

/* How a disk was found, for the human table and debugging. */
enum tw_devmap_how {
    TW_DEVMAP_NONE,  /* not found: device stays "" */
    TW_DEVMAP_GIVEN, /* the inventory already named it */
    TW_DEVMAP_LINK,  /* a /dev/disk/azure link */
    TW_DEVMAP_SCSI,  /* sysfs SCSI address */
    TW_DEVMAP_NVME   /* sysfs NVMe namespace */
};

/*
 * Fills the device of each disk of INV that has none ("" stays "" when the
 * disk is not found: off Azure, or a disk attached since boot without a
 * udev rescan).  HOW (INV->n_disks entries, may be NULL) gets how each was
 * found.  Only fails for a root path that is too long (TW_EINVAL).
 */
enum tw_err tw_devmap_apply(struct tw_inventory *inv, const struct tw_devmap_opts *o,
                            enum tw_devmap_how *how, struct tw_error *err);

/* A stacked device and the inventory disks under it. */
struct tw_devmap_stack {
    char device[64]; /* kernel name: dm-3, md0 */
    char label[128]; /* dm name (vg-lv) or md name; "" when none */
    size_t n_members;
    char members[TW_RESULT_MAX_MEMBERS][32]; /* physical disks: sdc, nvme0n3 */
    int disk[TW_RESULT_MAX_MEMBERS];         /* index into inv->disks, -1 when not in it */
};

/*
 * Resolves DEVICE ("/dev/mapper/vg-lv", "/dev/dm-3", "dm-3", "/dev/md0",
 * or a plain disk, which is its own single member) to its physical member
 * disks and their inventory disks.  TW_ENOENT when sysfs does not know the
 * device.
 */
enum tw_err tw_devmap_resolve(const struct tw_inventory *inv, const char *device,
                              const struct tw_devmap_opts *o, struct tw_devmap_stack *out,
                              struct tw_error *err);

/*
 * Lists the stacked devices (dm-*, md*) of this machine whose members
 * include at least one disk of INV, in name order, at most MAX of them;
 * *N gets how many.  Nothing to list is not an error.
 */
enum tw_err tw_devmap_stacks(const struct tw_inventory *inv, const struct tw_devmap_opts *o,
                             struct tw_devmap_stack *out, size_t max, size_t *n,
                             struct tw_error *err);

#endif
