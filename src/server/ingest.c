/*
 * ingest.c - the writer thread and its queue.
 */
#include "server/ingest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/metrics.h"

struct tw_ingest {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct tw_ingest_job *head, *tail;
    size_t depth;
    bool stopping;
    bool joined;
    pthread_t thread;
    bool writer_running;
    struct tw_store *st;
    struct tw_metrics *metrics;
    atomic_uint_fast64_t commits; /* batches committed with a new report */
};

/* Stores one batch and tells every job. */
static void commit(struct tw_ingest *in, struct tw_ingest_job **jobs, size_t n)
{
    const struct tw_report *reps[TW_INGEST_BATCH];
    const char *raw[TW_INGEST_BATCH];
    size_t raw_len[TW_INGEST_BATCH];
    enum tw_put_status status[TW_INGEST_BATCH];
    struct tw_error errs[TW_INGEST_BATCH];
    for (size_t i = 0; i < n; i++) {
        reps[i] = jobs[i]->rep;
        raw[i] = jobs[i]->raw;
        raw_len[i] = jobs[i]->raw_len;
        status[i] = TW_PUT_FAILED;
        tw_error_clear(&errs[i]);
    }
    char received[32];
    tw_rfc3339_format(time(NULL), received, sizeof(received));
    struct tw_error err = {0};
    enum tw_err rc =
        tw_store_put_reports(in->st, reps, raw, raw_len, n, received, status, errs, &err);
    size_t stored = 0, repeat = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct tw_ingest_job *j = jobs[i];
        j->committed = rc == TW_OK;
        if (rc != TW_OK) {
            j->status = TW_PUT_FAILED;
            j->err = err;
            if (!j->err.code)
                j->err.code = rc;
            failed++;
        } else {
            j->status = status[i];
            j->err = errs[i];
            if (status[i] == TW_PUT_STORED)
                stored++;
            else if (status[i] == TW_PUT_REPEAT)
                repeat++;
            else
                failed++;
        }
    }
    if (rc != TW_OK)
        fprintf(stderr, "tierwise serve: a batch of %zu reports was not stored: %s\n", n,
                err.msg[0] ? err.msg : tw_strerror(rc));
    tw_metrics_batch(in->metrics, n, stored, repeat, failed);
    if (stored)
        atomic_fetch_add(&in->commits, 1);
    for (size_t i = 0; i < n; i++)
        jobs[i]->done(jobs[i]); /* the job may be gone after this */
}

static void *writer(void *arg)
{
    struct tw_ingest *in = arg;
    struct tw_ingest_job *batch[TW_INGEST_BATCH];
    for (;;) {
        pthread_mutex_lock(&in->lock);
        while (!in->head && !in->stopping)
            pthread_cond_wait(&in->wake, &in->lock);
        if (!in->head && in->stopping) {
            pthread_mutex_unlock(&in->lock);
            break;
        }
        size_t n = 0;
        while (in->head && n < TW_INGEST_BATCH) {
            batch[n++] = in->head;
            in->head = in->head->next;
        }
        if (!in->head)
            in->tail = NULL;
        in->depth -= n;
        pthread_mutex_unlock(&in->lock);
        commit(in, batch, n);
    }
    return NULL;
}

enum tw_err tw_ingest_start(const char *db_path, struct tw_metrics *metrics, struct tw_ingest **out,
                            struct tw_error *err)
{
    *out = NULL;
    struct tw_ingest *in = calloc(1, sizeof(*in));
    if (!in)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    /* The writer's handle: the store keeps its housekeeping (the SQLite
     * store's checkpoints) out of this handle's commits. */
    const struct tw_store_open_opts wopts = {.writer = true};
    enum tw_err rc = tw_store_open_with(db_path, &wopts, &in->st, err);
    if (rc != TW_OK) {
        free(in);
        return rc;
    }
    in->metrics = metrics;
    pthread_mutex_init(&in->lock, NULL);
    pthread_cond_init(&in->wake, NULL);
    if (pthread_create(&in->thread, NULL, writer, in) != 0) {
        tw_ingest_stop(in);
        tw_ingest_free(in);
        return tw_error_set(err, TW_EIO, "can't start the writer thread");
    }
    in->writer_running = true;
    *out = in;
    return TW_OK;
}

enum tw_err tw_ingest_submit(struct tw_ingest *in, struct tw_ingest_job *job)
{
    job->next = NULL;
    job->committed = false;
    tw_error_clear(&job->err);
    pthread_mutex_lock(&in->lock);
    if (in->stopping) {
        pthread_mutex_unlock(&in->lock);
        return TW_EINVAL;
    }
    if (in->tail)
        in->tail->next = job;
    else
        in->head = job;
    in->tail = job;
    in->depth++;
    pthread_cond_signal(&in->wake);
    pthread_mutex_unlock(&in->lock);
    return TW_OK;
}

size_t tw_ingest_depth(struct tw_ingest *in)
{
    pthread_mutex_lock(&in->lock);
    size_t d = in->depth;
    pthread_mutex_unlock(&in->lock);
    return d;
}

void tw_ingest_stop(struct tw_ingest *in)
{
    if (!in || in->joined)
        return;
    pthread_mutex_lock(&in->lock);
    in->stopping = true;
    pthread_cond_signal(&in->wake);
    pthread_mutex_unlock(&in->lock);
    if (in->writer_running)
        pthread_join(in->thread, NULL);
    in->joined = true;
    /* The last handle to close copies the rest of the log. */
    tw_store_close(in->st);
    in->st = NULL;
}

void tw_ingest_free(struct tw_ingest *in)
{
    if (!in)
        return;
    tw_ingest_stop(in);
    pthread_mutex_destroy(&in->lock);
    pthread_cond_destroy(&in->wake);
    free(in);
}

uint64_t tw_ingest_commits(struct tw_ingest *in)
{
    return atomic_load(&in->commits);
}
