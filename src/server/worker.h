/*
 * worker.h - a background thread with a job queue and a clock: what the
 * server runs long operations on (a prices refresh, the scheduler of the
 * plans), and what the ingest writer's group commit is built on.
 *
 * Jobs are due now (tw_worker_submit: a FIFO, in submission order) or at
 * an instant (tw_worker_submit_at: int64 nanoseconds since 1970, core/
 * time.h), which join the FIFO's tail when the instant comes.  The clock
 * is the system clock, CLOCK_REALTIME, and nothing else: the thread
 * waits on a condition variable with a timed wait to the earliest
 * instant (the condition's default clock is CLOCK_REALTIME too), so a job
 * "at 02:00Z" runs when the wall clock says 02:00Z, also after the clock
 * was set.
 *
 * The thread takes the due jobs one at a time and calls each one's RUN,
 * or, with a BATCH function in the options, hands it up to BATCH_MAX due
 * jobs at once (the ingest writer: whatever is queued, up to 64 reports,
 * in one transaction).  The queue is bounded (QUEUE_MAX queued jobs, the
 * running ones not counted): a submission to a full queue is refused with
 * TW_ENOMEM and the caller answers 503 with Retry-After.
 *
 * Ownership: a job belongs to the caller until submitted, then to the
 * worker until it calls the job's RUN (or BATCH) or CANCEL, which get it
 * back; the worker never touches a job after that call.
 *
 * Stopping (tw_worker_stop): submissions are refused from then on.
 * TW_WORKER_DRAIN runs every job already due and cancels those due later;
 * TW_WORKER_CANCEL cancels every job not started.  The running job is
 * waited for up to a timeout; a job still running then is left to finish
 * on its own (the thread is detached and frees the worker and its context
 * when it ends), which is what a process that is about to exit wants from
 * a refresh that blocks in the network.
 */
#ifndef TW_SERVER_WORKER_H
#define TW_SERVER_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct tw_worker;
struct tw_worker_job;

typedef void (*tw_worker_fn)(struct tw_worker_job *job);

struct tw_worker_job {
    tw_worker_fn run;    /* on the worker thread (unless the worker has a BATCH function) */
    tw_worker_fn cancel; /* instead of RUN when stopped before it ran; NULL: nothing */
    void *arg;           /* the caller's */
    /* the worker's */
    int64_t due_ns;             /* CLOCK_REALTIME instant; 0: due at submission */
    uint64_t seq;               /* submission order */
    struct tw_worker_job *next; /* in its list */
};

struct tw_worker_opts {
    const char *name; /* for messages ("the writer"); NULL: "the worker" */
    size_t queue_max; /* queued jobs at most (due now and later); 0: no bound */
    size_t batch_max; /* jobs handed to BATCH at once; 0: 1 */
    /* Runs N (1..BATCH_MAX) due jobs, in order; NULL: each job's RUN. */
    void (*batch)(void *ctx, struct tw_worker_job **jobs, size_t n);
    void *ctx;                   /* for BATCH, tw_worker_ctx() */
    void (*ctx_free)(void *ctx); /* with the worker (may be NULL) */
};

enum tw_worker_stop_mode {
    TW_WORKER_DRAIN,  /* run what is due, cancel what is due later */
    TW_WORKER_CANCEL, /* cancel every job not started */
};

/* The system clock (CLOCK_REALTIME) in nanoseconds since 1970. */
int64_t tw_worker_now_ns(void);

/* Starts the thread.  TW_ENOMEM, or TW_EIO when no thread can be made. */
enum tw_err tw_worker_start(const struct tw_worker_opts *opts, struct tw_worker **out,
                            struct tw_error *err);

/* Queues JOB, due now.  TW_ENOMEM when the queue is full, TW_EINVAL when
 * the worker is stopping (JOB is then not queued and still the caller's). */
enum tw_err tw_worker_submit(struct tw_worker *w, struct tw_worker_job *job);
/* Queues JOB due at DUE_NS (CLOCK_REALTIME); an instant past is due now. */
enum tw_err tw_worker_submit_at(struct tw_worker *w, struct tw_worker_job *job, int64_t due_ns);

/* A periodic job queuing itself again at DUE_NS from its own run: as
 * tw_worker_submit_at, but never refused for a full queue (the slot it ran
 * in was its own, and a burst of operations must not end a periodic job
 * for good); TW_EINVAL when the worker is stopping. */
enum tw_err tw_worker_again_at(struct tw_worker *w, struct tw_worker_job *job, int64_t due_ns);

/* Jobs queued and not yet started (due now and later). */
size_t tw_worker_depth(struct tw_worker *w);
/* Whether a stop was asked: long jobs may look and end early. */
bool tw_worker_stopping(struct tw_worker *w);
/* tw_worker_stopping for a callback's (void *) argument, as the services'
 * walks ask it between their steps (stop(stop_arg) with the worker). */
bool tw_worker_stopping_cb(void *w);
/* The options' CTX. */
void *tw_worker_ctx(struct tw_worker *w);

/*
 * Stops: refuses submissions, drains or cancels (MODE), then waits for the
 * thread up to TIMEOUT_MS (0: as long as it takes).  True when the thread
 * ended; false when a job was still running at the timeout (the thread is
 * then detached and ends on its own).  Repeating it does nothing; NULL
 * allowed.
 */
bool tw_worker_stop(struct tw_worker *w, enum tw_worker_stop_mode mode, long timeout_ms);
/* Stops (draining, no timeout) if needed and frees W, or leaves it to the
 * detached thread; NULL allowed. */
void tw_worker_free(struct tw_worker *w);

#endif
