/*
 * worker.c - the background thread, its queue and its clock (worker.h).
 *
 * Two lists under one lock: the FIFO of due jobs, and the jobs due later
 * sorted by (instant, submission), which move to the FIFO's tail when
 * their instant has come.  The thread sleeps on WAKE, with a timed wait to
 * the earliest instant when there is one.  The worker is freed by the last
 * of its owner and its thread (a thread detached at a stop's timeout
 * outlives the owner).
 */
#include "server/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/time.h"

struct tw_worker {
    pthread_mutex_t lock;
    pthread_cond_t wake;               /* a submission or the stop */
    pthread_cond_t ended;              /* the thread ended */
    struct tw_worker_job *head, *tail; /* due, in order */
    struct tw_worker_job *later;       /* due later, by (due_ns, seq) */
    size_t depth;                      /* jobs in both lists */
    uint64_t seq;
    bool stopping;     /* tw_worker_stop was called */
    bool thread_ended; /* the thread left its loop */
    bool joined;       /* joined or detached */
    bool have_thread;
    int refs; /* the owner, and the thread while it runs */
    pthread_t thread;
    struct tw_worker_opts o;
    struct tw_worker_job **batch; /* batch_max slots */
};

int64_t tw_worker_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * TW_NS_PER_S + ts.tv_nsec;
}

static struct timespec to_timespec(int64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / TW_NS_PER_S),
                          .tv_nsec = (long)(ns % TW_NS_PER_S)};
    return ts;
}

static void destroy(struct tw_worker *w)
{
    if (w->o.ctx_free)
        w->o.ctx_free(w->o.ctx);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->ended);
    free(w->batch);
    free(w);
}

/* Drops one reference (the lock held); true when it was the last. */
static bool unref_locked(struct tw_worker *w)
{
    return --w->refs == 0;
}

static void append_due(struct tw_worker *w, struct tw_worker_job *j)
{
    j->next = NULL;
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
}

/* Moves the jobs whose instant has come to the FIFO; the lock held. */
static void promote(struct tw_worker *w, int64_t now)
{
    while (w->later && w->later->due_ns <= now) {
        struct tw_worker_job *j = w->later;
        w->later = j->next;
        append_due(w, j);
    }
}

static void *loop(void *arg)
{
    struct tw_worker *w = arg;
    size_t max = w->o.batch_max ? w->o.batch_max : 1;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        promote(w, tw_worker_now_ns());
        if (w->head) {
            size_t n = 0;
            while (w->head && n < max) {
                w->batch[n++] = w->head;
                w->head = w->head->next;
            }
            if (!w->head)
                w->tail = NULL;
            w->depth -= n;
            pthread_mutex_unlock(&w->lock);
            if (w->o.batch)
                w->o.batch(w->o.ctx, w->batch, n);
            else
                for (size_t i = 0; i < n; i++)
                    w->batch[i]->run(w->batch[i]); /* the job may be gone after this */
            pthread_mutex_lock(&w->lock);
            continue;
        }
        if (w->stopping)
            break;
        if (w->later) {
            struct timespec until = to_timespec(w->later->due_ns);
            pthread_cond_timedwait(&w->wake, &w->lock, &until);
        } else {
            pthread_cond_wait(&w->wake, &w->lock);
        }
    }
    w->thread_ended = true;
    pthread_cond_broadcast(&w->ended);
    bool last = unref_locked(w);
    pthread_mutex_unlock(&w->lock);
    if (last)
        destroy(w);
    return NULL;
}

enum tw_err tw_worker_start(const struct tw_worker_opts *opts, struct tw_worker **out,
                            struct tw_error *err)
{
    *out = NULL;
    struct tw_worker *w = calloc(1, sizeof(*w));
    if (!w)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    w->o = *opts;
    if (!w->o.name)
        w->o.name = "the worker";
    w->batch = calloc(w->o.batch_max ? w->o.batch_max : 1, sizeof(*w->batch));
    if (!w->batch) {
        free(w);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL); /* CLOCK_REALTIME, the default */
    pthread_cond_init(&w->ended, NULL);
    w->refs = 2;
    if (pthread_create(&w->thread, NULL, loop, w) != 0) {
        w->refs = 1;
        w->stopping = w->thread_ended = w->joined = true;
        w->o.ctx_free = NULL; /* the caller keeps its context on failure */
        destroy(w);
        return tw_error_set(err, TW_EIO, "can't start %s's thread",
                            opts->name ? opts->name : "the worker");
    }
    w->have_thread = true;
    *out = w;
    return TW_OK;
}

static enum tw_err submit(struct tw_worker *w, struct tw_worker_job *job, int64_t due_ns,
                          bool bounded)
{
    pthread_mutex_lock(&w->lock);
    if (w->stopping) {
        pthread_mutex_unlock(&w->lock);
        return TW_EINVAL;
    }
    if (bounded && w->o.queue_max && w->depth >= w->o.queue_max) {
        pthread_mutex_unlock(&w->lock);
        return TW_ENOMEM;
    }
    job->seq = ++w->seq;
    job->due_ns = due_ns;
    int64_t now = tw_worker_now_ns();
    if (due_ns == 0 || due_ns <= now) {
        promote(w, now); /* timed jobs already due go first, in their order */
        append_due(w, job);
    } else {
        struct tw_worker_job **p = &w->later;
        while (*p && (*p)->due_ns <= due_ns)
            p = &(*p)->next;
        job->next = *p;
        *p = job;
    }
    w->depth++;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return TW_OK;
}

enum tw_err tw_worker_submit(struct tw_worker *w, struct tw_worker_job *job)
{
    return submit(w, job, 0, true);
}

enum tw_err tw_worker_submit_at(struct tw_worker *w, struct tw_worker_job *job, int64_t due_ns)
{
    return submit(w, job, due_ns > 0 ? due_ns : 1, true);
}

enum tw_err tw_worker_again_at(struct tw_worker *w, struct tw_worker_job *job, int64_t due_ns)
{
    return submit(w, job, due_ns > 0 ? due_ns : 1, false);
}

size_t tw_worker_depth(struct tw_worker *w)
{
    pthread_mutex_lock(&w->lock);
    size_t d = w->depth;
    pthread_mutex_unlock(&w->lock);
    return d;
}

bool tw_worker_stopping(struct tw_worker *w)
{
    pthread_mutex_lock(&w->lock);
    bool s = w->stopping;
    pthread_mutex_unlock(&w->lock);
    return s;
}

bool tw_worker_stopping_cb(void *w)
{
    return tw_worker_stopping(w);
}

void *tw_worker_ctx(struct tw_worker *w)
{
    return w->o.ctx;
}

bool tw_worker_stop(struct tw_worker *w, enum tw_worker_stop_mode mode, long timeout_ms)
{
    if (!w)
        return true;
    pthread_mutex_lock(&w->lock);
    if (w->joined) {
        bool ended = w->thread_ended;
        pthread_mutex_unlock(&w->lock);
        return ended;
    }
    /* Jobs that will not run are handed back at once, before the wait. */
    struct tw_worker_job *cancelled = NULL;
    if (!w->stopping) {
        w->stopping = true;
        promote(w, tw_worker_now_ns());
        cancelled = w->later;
        w->later = NULL;
        if (mode == TW_WORKER_CANCEL) {
            struct tw_worker_job **end = &cancelled;
            while (*end)
                end = &(*end)->next;
            *end = w->head;
            w->head = w->tail = NULL;
        }
        w->depth = 0;
        for (struct tw_worker_job *j = w->head; j; j = j->next)
            w->depth++;
        pthread_cond_signal(&w->wake);
    }
    pthread_mutex_unlock(&w->lock);
    while (cancelled) {
        struct tw_worker_job *j = cancelled;
        cancelled = j->next;
        if (j->cancel)
            j->cancel(j);
    }
    pthread_mutex_lock(&w->lock);
    struct timespec until = to_timespec(tw_worker_now_ns() + (int64_t)timeout_ms * TW_NS_PER_MS);
    while (!w->thread_ended) {
        if (timeout_ms <= 0) {
            pthread_cond_wait(&w->ended, &w->lock);
        } else if (pthread_cond_timedwait(&w->ended, &w->lock, &until) == ETIMEDOUT) {
            break;
        }
    }
    bool ended = w->thread_ended;
    w->joined = true;
    pthread_mutex_unlock(&w->lock);
    if (ended)
        pthread_join(w->thread, NULL);
    else {
        fprintf(stderr,
                "tierwise serve: %s still runs a job after %ld ms; left to end on its own\n",
                w->o.name, timeout_ms);
        pthread_detach(w->thread);
    }
    return ended;
}

void tw_worker_free(struct tw_worker *w)
{
    if (!w)
        return;
    tw_worker_stop(w, TW_WORKER_DRAIN, 0);
    pthread_mutex_lock(&w->lock);
    bool last = unref_locked(w);
    pthread_mutex_unlock(&w->lock);
    if (last)
        destroy(w);
}
