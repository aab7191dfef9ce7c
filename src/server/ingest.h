/*
 * ingest.h - the one writer: reports parsed by the request threads are
 * queued here and committed in batches (group commit), so that many
 * concurrent POSTs share one transaction and one fsync.
 *
 * The writer takes whatever is queued (up to TW_INGEST_BATCH reports),
 * stores it with tw_store_put_reports on its own store handle, records
 * each report's outcome in its job and calls the job's DONE callback (the
 * server resumes the suspended request there).  A request is answered
 * only after its report is committed, so a 2xx means stored.
 *
 * The writer is a tw_worker (worker.h) with a batch function: the worker's
 * queue and thread, and commit() as the batch of up to TW_INGEST_BATCH
 * due jobs; its queue has no bound of its own (the connection limit bounds
 * it) and its stop drains.
 */
#ifndef TW_SERVER_INGEST_H
#define TW_SERVER_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/report.h"
#include "server/worker.h"
#include "service/compliance.h"
#include "store/store.h"

#define TW_INGEST_BATCH 64

struct tw_ingest_job;
typedef void (*tw_ingest_done_fn)(struct tw_ingest_job *job);

struct tw_ingest_job {
    /* filled by the caller */
    struct tw_report *rep; /* parsed and validated */
    struct tw_svc_judged judged; /* its results' verdicts, kept beside them (zeroed: none) */
    const char *raw;       /* the body as received */
    size_t raw_len;
    tw_ingest_done_fn done; /* called by the writer thread after the commit */
    void *arg;              /* for DONE */
    /* filled by the writer */
    bool committed;            /* false: the batch's transaction failed (see err) */
    enum tw_put_status status; /* when committed */
    struct tw_error err;       /* the report's or the transaction's error */
    struct tw_worker_job wj;   /* its place in the writer's queue */
};

struct tw_ingest;
struct tw_metrics;

/* Starts the writer thread on its own handle of the database at DB_PATH.
 * METRICS (may be NULL) counts the batches. */
enum tw_err tw_ingest_start(const char *db_path, struct tw_metrics *metrics, struct tw_ingest **out,
                            struct tw_error *err);

/* Queues JOB; DONE is called later from the writer thread.  TW_EINVAL
 * when the writer is stopping (JOB is then not queued). */
enum tw_err tw_ingest_submit(struct tw_ingest *in, struct tw_ingest_job *job);

/* Reports queued and not yet committed. */
size_t tw_ingest_depth(struct tw_ingest *in);

/* How many committed batches stored at least one new report: the store's
 * counts change only when this does (for caching them in /metrics). */
uint64_t tw_ingest_commits(struct tw_ingest *in);

/* Commits what is queued, stops the thread and closes its handle; later
 * submissions fail with TW_EINVAL.  Repeating it does nothing; NULL
 * allowed. */
void tw_ingest_stop(struct tw_ingest *in);
/* Frees IN after tw_ingest_stop (which it calls if needed); NULL allowed. */
void tw_ingest_free(struct tw_ingest *in);

#endif
