/*
 * report_build.h - what `tierwise-agent run` puts in a report: who made
 * it, and the configured profiles run on each of the VM's data disks.
 *
 * Each data disk is measured on its block device, read-only, unless a
 * file on its filesystem is configured for it (--file-target LUN=PATH):
 * then on that file, which also allows the write profiles.  A disk with
 * no Linux device and no file is left out with a note; so is a write
 * profile on a block device.  A run that fails is said on the log and
 * counted; the others go on.
 */
#ifndef TW_AGENT_REPORT_BUILD_H
#define TW_AGENT_REPORT_BUILD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/profile.h"
#include "core/err.h"
#include "core/report.h"

#define TW_AGENT_MAX_PROFILES 32
#define TW_AGENT_MAX_FILE_TARGETS 64

struct tw_agent_file_target {
    int lun;
    const char *path;
};

struct tw_agent_bench_plan {
    const struct tw_profile *profiles[TW_AGENT_MAX_PROFILES];
    size_t n_profiles;        /* 0: inventory only */
    bool runtime_set, ramp_set;
    uint64_t runtime_ms, ramp_ms; /* when set, instead of each profile's */
    const char *engine;       /* NULL: each profile's */
    bool buffered;            /* no O_DIRECT */
    uint64_t file_size;       /* bytes of a file target; 0: TW_TARGET_DEFAULT_SIZE */
    struct tw_agent_file_target files[TW_AGENT_MAX_FILE_TARGETS];
    size_t n_files;
    const char *sysfs_root;   /* NULL: $TW_SYSFS_ROOT, then /sys */
    const char *mounts_path;  /* NULL: $TW_MOUNTS_FILE, then /proc/self/mounts */
    volatile sig_atomic_t *interrupt; /* set to stop a run early */
    bool progress;            /* draw a progress line on stderr (a terminal) */
    uint64_t max_ms_per_disk; /* --max-seconds-per-disk; 0: no bound */
    /* data disks not to measure (device uncertain), by their index in the
     * inventory (a LUN may be missing or past 63), and why, for the log */
    bool skip_disk[TW_INV_MAX_DISKS];
    const char *skip_why[TW_INV_MAX_DISKS];
};

/*
 * Parses a comma-separated list of profile names into PLAN ("none" for no
 * profile at all).  TW_EINVAL with the names that exist.
 */
enum tw_err tw_agent_plan_profiles(struct tw_agent_bench_plan *plan, const char *list,
                                   struct tw_error *err);

/* Parses "LUN=PATH" (PATH stays a pointer into S) into PLAN. */
enum tw_err tw_agent_plan_file(struct tw_agent_bench_plan *plan, const char *s,
                               struct tw_error *err);

/* Checks that every file target names a data disk of INV. */
enum tw_err tw_agent_plan_check(const struct tw_agent_bench_plan *plan,
                                const struct tw_inventory *inv, struct tw_error *err);

/* Gives R a fresh id, the time, this agent's version and host name, and
 * the power state "running" (the agent runs, so the VM does). */
void tw_agent_report_identity(struct tw_report *r);

/*
 * Runs PLAN on every data disk of R->inv and appends the results to R.
 * One line per run, skip or failure goes to LOG.  *FAILED gets the number
 * of runs that failed.
 * Returns TW_OK, TW_ENOMEM, or TW_EINVAL "interrupted" when PLAN->interrupt
 * was set (R then holds what finished before).
 */
enum tw_err tw_agent_bench_disks(const struct tw_agent_bench_plan *plan, struct tw_report *r,
                                 FILE *log, int *failed, struct tw_error *err);

#endif
