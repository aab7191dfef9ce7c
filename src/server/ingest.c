/*
 * ingest.c - the writer: a tw_worker whose batch function commits the
 * reports queued (up to TW_INGEST_BATCH) in one transaction.
 */
#include "server/ingest.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/metrics.h"

struct tw_ingest {
    struct tw_worker *w;
    bool stopped;
    struct tw_store *st;
    struct tw_metrics *metrics;
    atomic_uint_fast64_t commits; /* batches committed with a new report */
};

static struct tw_ingest_job *job_of(struct tw_worker_job *wj)
{
    return (struct tw_ingest_job *)(void *)((char *)wj - offsetof(struct tw_ingest_job, wj));
}

/* Stores one batch and tells every job (the worker's batch function). */
static void commit(void *ctx, struct tw_worker_job **wjobs, size_t n)
{
    struct tw_ingest *in = ctx;
    struct tw_ingest_job *jobs[TW_INGEST_BATCH];
    const struct tw_report *reps[TW_INGEST_BATCH];
    const struct tw_store_judged *judged[TW_INGEST_BATCH];
    const char *raw[TW_INGEST_BATCH];
    size_t raw_len[TW_INGEST_BATCH];
    enum tw_put_status status[TW_INGEST_BATCH];
    struct tw_error errs[TW_INGEST_BATCH];
    for (size_t i = 0; i < n; i++) {
        jobs[i] = job_of(wjobs[i]);
        reps[i] = jobs[i]->rep;
        judged[i] = jobs[i]->judged.basis[0] ? &jobs[i]->judged.judged : NULL;
        raw[i] = jobs[i]->raw;
        raw_len[i] = jobs[i]->raw_len;
        status[i] = TW_PUT_FAILED;
        tw_error_clear(&errs[i]);
    }
    char received[32];
    tw_rfc3339_format(time(NULL), received, sizeof(received));
    struct tw_error err = {0};
    enum tw_err rc =
        tw_store_put_reports_judged(in->st, reps, raw, raw_len, judged, n, received, status,
                                    errs, &err);
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
    const struct tw_worker_opts wo = {
        .name = "the writer", .batch_max = TW_INGEST_BATCH, .batch = commit, .ctx = in};
    if ((rc = tw_worker_start(&wo, &in->w, err)) != TW_OK) {
        tw_store_close(in->st);
        free(in);
        return tw_error_set(err, rc, "can't start the writer thread");
    }
    *out = in;
    return TW_OK;
}

enum tw_err tw_ingest_submit(struct tw_ingest *in, struct tw_ingest_job *job)
{
    job->committed = false;
    tw_error_clear(&job->err);
    memset(&job->wj, 0, sizeof(job->wj));
    job->wj.arg = job;
    /* TW_EINVAL once stopping (the queue has no bound, so never full). */
    return tw_worker_submit(in->w, &job->wj) == TW_OK ? TW_OK : TW_EINVAL;
}

size_t tw_ingest_depth(struct tw_ingest *in)
{
    return tw_worker_depth(in->w);
}

void tw_ingest_stop(struct tw_ingest *in)
{
    if (!in || in->stopped)
        return;
    /* Commits everything queued, however long it takes: each job is a
     * request waiting for its answer. */
    tw_worker_stop(in->w, TW_WORKER_DRAIN, 0);
    in->stopped = true;
    /* The last handle to close copies the rest of the log. */
    tw_store_close(in->st);
    in->st = NULL;
}

void tw_ingest_free(struct tw_ingest *in)
{
    if (!in)
        return;
    tw_ingest_stop(in);
    tw_worker_free(in->w);
    free(in);
}

uint64_t tw_ingest_commits(struct tw_ingest *in)
{
    return atomic_load(&in->commits);
}
