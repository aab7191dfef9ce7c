/*
 * job.h - the benchmark runner: jobs, queue depth, ramp, measurement.
 *
 * A run is JOBS threads, each with its own engine context and QD I/O units
 * over one shared file descriptor.  Every thread keeps its own latency
 * histogram and counters (no sharing on the hot path); the runner merges
 * them when the run ends.  The main thread keeps the time: it switches all
 * jobs from ramp to measurement, samples the I/O counters once a second
 * for the per-second IOPS figures and the progress line, and tells the jobs
 * to stop.  I/Os that complete during the ramp, or after the stop, are not
 * counted.
 *
 * Offsets are aligned to the block size.  Random offsets are uniform over
 * the whole region (every job covers all of it, with its own generator);
 * sequential jobs each get an equal slice of the region and wrap around
 * inside it, so two jobs never read the same blocks.
 */
#ifndef TW_BENCH_JOB_H
#define TW_BENCH_JOB_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/engine.h"
#include "core/err.h"
#include "core/result.h"

struct tw_progress {
    double elapsed_s;      /* since the start, ramp included */
    double total_s;        /* planned ramp + runtime; 0 when size-based */
    bool ramping;          /* still in the ramp */
    double iops;           /* over the last second */
    double mbps;           /* over the last second, 10^6 B/s */
};

struct tw_job_params {
    const struct tw_engine_ops *engine;
    int fd;                    /* the target, opened by the caller */
    bool direct;               /* fd was opened with O_DIRECT (recorded) */
    uint64_t region_offset;    /* first byte of the target used */
    uint64_t region_size;      /* bytes used, >= block_size */
    uint32_t align;            /* buffer alignment (logical block size) */
    enum tw_pattern pattern;
    uint32_t block_size;       /* bytes per I/O */
    unsigned queue_depth;      /* per job; forced to 1 for sync engines */
    unsigned jobs;
    unsigned read_pct;         /* share of reads in mixed patterns, 0..100 */
    uint64_t runtime_ms;       /* measured phase; 0 = until io_limit is done */
    uint64_t ramp_ms;          /* excluded warm-up */
    uint64_t io_limit_bytes;   /* per job; 0 = no limit (time-based) */
    uint64_t seed;             /* 0 = random */
    unsigned fail_every;       /* null engine: fail every Nth I/O (tests) */
    /* Called about once a second from the runner's thread; optional. */
    void (*progress)(const struct tw_progress *p, void *arg);
    void *progress_arg;
    /* Set (e.g. by a SIGINT handler) to stop the run early; optional. */
    volatile sig_atomic_t *interrupt;
};

/*
 * Runs the benchmark described by P and fills R's method, started_at,
 * figures, cpu and errors (target and identity are the caller's).  I/O
 * errors are counted and the first described; the run goes on.  Returns
 * TW_EINVAL for impossible parameters, TW_EIO/TW_EUNSUPPORTED when an
 * engine can't start, TW_EINVAL with "interrupted" when P->interrupt was
 * set.  ERR says which.
 */
enum tw_err tw_job_run(const struct tw_job_params *p, struct tw_result *r,
                       struct tw_error *err);

/* Checks P without running it (block size vs alignment and region, QD,
 * jobs, read_pct, an end condition). */
enum tw_err tw_job_check(const struct tw_job_params *p, struct tw_error *err);

/* The PRNG jobs use for offsets (xoshiro256**), exposed for tests. */
struct tw_rng {
    uint64_t s[4];
};
void tw_rng_seed(struct tw_rng *g, uint64_t seed);
uint64_t tw_rng_next(struct tw_rng *g);
/* Uniform in [0, n) by multiply-shift (no modulo bias worth the name). */
static inline uint64_t tw_rng_below(struct tw_rng *g, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)tw_rng_next(g) * n) >> 64);
}

/* The offset generator of one job, exposed for tests. */
struct tw_offsets {
    struct tw_rng rng;
    bool random;
    uint64_t base;      /* first byte of this job's region */
    uint64_t nblocks;   /* blocks in it */
    uint64_t next;      /* sequential: next block */
    uint32_t bs;
};
/* Job JOB of NJOBS over P's region. */
void tw_offsets_init(struct tw_offsets *o, const struct tw_job_params *p,
                     unsigned job, uint64_t seed);
static inline uint64_t tw_offsets_next(struct tw_offsets *o)
{
    uint64_t b;
    if (o->random) {
        b = tw_rng_below(&o->rng, o->nblocks);
    } else {
        b = o->next++;
        if (o->next == o->nblocks)
            o->next = 0;
    }
    return o->base + b * o->bs;
}

#endif
