/*
 * target.h - what a benchmark runs against: a file or a block device.
 *
 * A file is laid out before the run: allocated, then filled with random
 * (incompressible) data, because reading a sparse or merely fallocated file
 * returns zeros without touching the disk and measures nothing.  A file
 * that is already fully written is reused as it is.
 *
 * A block device is opened read-only unless the caller allows destructive
 * writes, and even then writing is refused while the device, one of its
 * partitions, or a device built on it (LVM, MD) is mounted or in use.
 *
 * The kernel name of the device under the target and the physical disks
 * behind it (through device-mapper and MD slaves) are recorded, so results
 * can be matched to the Azure disks they ran on.  The sysfs and mounts
 * locations are options so tests can use fixture trees.
 */
#ifndef TW_BENCH_TARGET_H
#define TW_BENCH_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/result.h"

#define TW_TARGET_DEFAULT_SIZE (1ULL << 30) /* a new file without --size */

struct tw_target_opts {
    uint64_t size;            /* file: bytes to use (0: the file's size, or the
                                 default for a new file); device: 0 = all */
    bool write;               /* the run writes */
    bool allow_destructive;   /* writing to a block device is allowed */
    bool buffered;            /* open without O_DIRECT */
    const char *sysfs_root;   /* NULL: "/sys" */
    const char *mounts_path;  /* NULL: "/proc/self/mounts" */
    /* Called during a file layout with bytes written so far; optional. */
    void (*layout_progress)(uint64_t done, uint64_t total, void *arg);
    void *layout_arg;
};

struct tw_target {
    char path[4096];
    enum tw_target_kind kind;
    int fd;                   /* open for the run, -1 when closed */
    bool direct;              /* opened with O_DIRECT */
    uint64_t size;            /* bytes the run may use, from offset 0 */
    uint32_t lbs;             /* logical block size: I/O sizes are multiples */
    bool laid_out;            /* this call wrote the file's data */
    char device[64];          /* kernel name, "" when unknown */
    size_t n_members;
    char members[TW_RESULT_MAX_MEMBERS][32];
};

/*
 * Opens PATH for a run as O says, laying out a file first when needed.
 * Errors: TW_ENOENT (no such path and nothing to create it from),
 * TW_EUNSUPPORTED (no O_DIRECT, or a memory filesystem), TW_EPERM (a write
 * to a device without permission, or to a mounted one), TW_EIO, TW_EINVAL.
 */
enum tw_err tw_target_open(const char *path, const struct tw_target_opts *o,
                           struct tw_target *t, struct tw_error *err);

void tw_target_close(struct tw_target *t);

/* Fills device and members of T for the block device DEV (major:minor),
 * from SYSFS_ROOT; exposed for tests on fixture trees. */
void tw_target_devinfo(const char *sysfs_root, unsigned major, unsigned minor,
                       struct tw_target *t);

/* Copies T's identity (path, kind, size, device, members) into R. */
void tw_target_to_result(const struct tw_target *t, struct tw_result *r);

#endif
