/*
 * profile.h - named benchmark profiles.
 *
 * A profile is a method that reaches a specific figure of a disk's rating
 * (see README "Profiles"): `rated-iops` is what Azure's IOPS ratings are
 * measured with (small random reads at a deep queue over several jobs),
 * `rated-throughput` what the MB/s ratings need (large sequential reads).
 * The others show how common database access patterns meet the disk.
 * Write variants exist for file targets; on a block device they need
 * --allow-destructive.
 */
#ifndef TW_BENCH_PROFILE_H
#define TW_BENCH_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "core/result.h"

struct tw_profile {
    const char *name;
    const char *summary;        /* one line for --list-profiles */
    const char *engine;         /* libaio or psync */
    enum tw_pattern pattern;
    uint32_t block_size;        /* bytes */
    unsigned queue_depth;       /* per job */
    unsigned jobs;
    unsigned read_pct;
    uint64_t runtime_ms;        /* default measured time */
    uint64_t ramp_ms;           /* default ramp */
};

/* The profile named NAME, or NULL with a message listing the names. */
const struct tw_profile *tw_profile_find(const char *name, struct tw_error *err);

/* The I-th profile (NULL past the end), for listing. */
const struct tw_profile *tw_profile_at(unsigned i);

/* Whether the profile writes (so needs a file or --allow-destructive). */
bool tw_profile_writes(const struct tw_profile *p);

#endif
