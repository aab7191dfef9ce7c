/*
 * drift_job.c - drift raised by the server itself: a job on the operations
 * worker that brings the store's drift rows up to date
 * (tw_svc_drift_update) at the start and every --drift-interval (default
 * 1 min) when the server has policies, logs a line when a drift starts or
 * ends, and keeps the number of disks drifting for /metrics
 * (tierwise_drift_disks).  Whatever wrote the observations it judges, an
 * agent's report or ARM's sync (source arm), is the same to it.
 *
 * The job owns what it reads: the database's path, its own parse of each
 * policy's text, and a reference to the gauge it writes, which the server
 * holds too (whichever lets go last frees it), so a run still going when
 * the server stops touches nothing the stop frees.
 */
#include "server/server_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/drift.h"

struct tw_srv_drift_gauge {
    atomic_int refs;
    atomic_llong disks; /* -1: not judged yet (or the last run failed before any) */
};

static void gauge_unref(struct tw_srv_drift_gauge *g)
{
    if (g && atomic_fetch_sub(&g->refs, 1) == 1)
        free(g);
}

int64_t tw_srv_drift_disks(const struct tw_server *srv)
{
    return srv->drift ? (int64_t)atomic_load(&srv->drift->disks) : -1;
}

void tw_srv_drift_release(struct tw_server *srv)
{
    gauge_unref(srv->drift);
    srv->drift = NULL;
}

struct drift_job {
    struct tw_worker_job job;
    struct tw_worker *worker;
    struct tw_srv_drift_gauge *gauge;
    char db_path[PATH_MAX];
    int64_t every_ns;
    size_t n;
    struct tw_policy *pols;
    const struct tw_policy **ptrs;
};

static void job_free(struct drift_job *j)
{
    for (size_t i = 0; i < j->n; i++)
        tw_policy_cleanup(&j->pols[i]);
    free(j->pols);
    free(j->ptrs);
    gauge_unref(j->gauge);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    job_free(job->arg);
}

static void log_line(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "tierwise serve: %s\n", line);
}

static void job_run(struct tw_worker_job *job)
{
    struct drift_job *j = job->arg;
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    struct tw_drift_update u = {0};
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    if (rc == TW_OK)
        rc = tw_svc_drift_update(st, j->ptrs, j->n, tw_worker_now_ns() / 1000000, log_line,
                                 NULL, &u, &err);
    tw_store_close(st);
    if (rc == TW_OK)
        atomic_store(&j->gauge->disks, (long long)u.open);
    else
        fprintf(stderr, "tierwise serve: judging drift failed (tried again in a minute or at "
                        "the next --drift-interval): %s\n",
                err.msg[0] ? err.msg : tw_strerror(rc));
    int64_t due_ns = tw_worker_now_ns() + j->every_ns;
    if (tw_worker_stopping(j->worker) || tw_worker_submit_at(j->worker, job, due_ns) != TW_OK)
        job_free(j);
}

enum tw_err tw_srv_drift_start(struct tw_server *srv, unsigned every_s, struct tw_error *err)
{
    if (srv->policies.n == 0)
        return TW_OK;
    struct drift_job *j = calloc(1, sizeof(*j));
    struct tw_srv_drift_gauge *g = calloc(1, sizeof(*g));
    if (!j || !g) {
        free(j);
        free(g);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    atomic_init(&g->refs, 2); /* the server's and the job's */
    atomic_init(&g->disks, -1);
    j->gauge = g;
    srv->drift = g;
    j->pols = calloc(srv->policies.n, sizeof(*j->pols));
    j->ptrs = calloc(srv->policies.n, sizeof(*j->ptrs));
    if (!j->pols || !j->ptrs) {
        job_free(j);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < srv->policies.n; i++) {
        const struct tw_svc_policy *sp = &srv->policies.v[i];
        enum tw_err rc = tw_policy_parse(sp->text, sp->len, &j->pols[i], NULL, err);
        j->n = i + 1;
        j->ptrs[i] = &j->pols[i];
        if (rc != TW_OK) {
            job_free(j);
            return rc;
        }
    }
    j->worker = srv->worker;
    j->every_ns = (int64_t)(every_s ? every_s : TW_SRV_DRIFT_EVERY_S) * 1000000000LL;
    snprintf(j->db_path, sizeof(j->db_path), "%s", srv->db_path);
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the drift job");
    }
    return TW_OK;
}
