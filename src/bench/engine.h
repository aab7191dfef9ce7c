/*
 * engine.h - the I/O engine interface.
 *
 * The job runner (job.c) drives an engine through a small ops table, so the
 * figures and the method come out the same whichever engine moved the
 * bytes.  The model is a queue of I/O units: queue() hands one over (a sync
 * engine does it there and then and answers COMPLETED; an async one answers
 * QUEUED), commit() submits what was queued, getevents() waits for
 * completions and event() returns them one by one.  Capability flags, not
 * engine names, tell the runner what it is dealing with.
 *
 * Engines are listed in a static table in engine.c and checked once when
 * looked up (a missing mandatory hook is a programming error reported by
 * tw_engine_find, not a crash later).
 */
#ifndef TW_BENCH_ENGINE_H
#define TW_BENCH_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"

#define TW_ENGINE_VERSION 1

/* Capability flags. */
#define TW_ENG_SYNC 0x1u  /* one I/O in flight: queue() completes it */
#define TW_ENG_NOIO 0x2u  /* moves no data (tests, overhead measurement) */

/* One I/O unit; the runner owns it, the engine borrows it while in flight. */
struct tw_io {
    void *buf;          /* aligned to the target's logical block size */
    uint64_t offset;    /* bytes from the start of the target */
    uint32_t len;       /* bytes */
    bool write;
    unsigned idx;       /* position in the job's unit array, 0..depth-1 */
    uint64_t start_ns;  /* submission time (monotonic) */
    int64_t res;        /* after completion: bytes moved, or -errno */
};

enum tw_q { TW_Q_COMPLETED, TW_Q_QUEUED, TW_Q_BUSY };

struct tw_engine_ctx;

struct tw_engine_ops {
    const char *name;
    int version;        /* TW_ENGINE_VERSION it was written against */
    unsigned flags;     /* TW_ENG_* */
    /* Prepares private state for DEPTH units on FD; optional. */
    enum tw_err (*init)(struct tw_engine_ctx *c, struct tw_error *err);
    /* Mandatory. */
    enum tw_q (*queue)(struct tw_engine_ctx *c, struct tw_io *io);
    /* Submits queued units; 0 or -errno.  Async engines only. */
    int (*commit)(struct tw_engine_ctx *c);
    /* Waits for at least MIN and takes at most MAX completions, up to
     * TIMEOUT_MS; returns how many, or -errno.  Async engines only. */
    int (*getevents)(struct tw_engine_ctx *c, unsigned min, unsigned max,
                     unsigned timeout_ms);
    /* The I-th completion of the last getevents.  Async engines only. */
    struct tw_io *(*event)(struct tw_engine_ctx *c, unsigned i);
    /* Frees private state; copes with a partial init.  Optional. */
    void (*cleanup)(struct tw_engine_ctx *c);
};

struct tw_engine_ctx {
    const struct tw_engine_ops *ops;
    int fd;             /* the target, opened by the runner */
    unsigned depth;     /* most units in flight at once */
    unsigned fail_every;/* null engine only: fail every Nth I/O (tests) */
    void *priv;         /* engine state */
};

/* Looks an engine up by name; NULL (and a message) if unknown or invalid. */
const struct tw_engine_ops *tw_engine_find(const char *name,
                                           struct tw_error *err);

/* Checks an ops table: mandatory hooks present, version known. */
enum tw_err tw_engine_check(const struct tw_engine_ops *ops,
                            struct tw_error *err);

/* Comma-separated names of the engines built in, for --help. */
const char *tw_engine_names(void);

extern const struct tw_engine_ops tw_engine_libaio;
extern const struct tw_engine_ops tw_engine_psync;
extern const struct tw_engine_ops tw_engine_null;

#endif
