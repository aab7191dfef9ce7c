/*
 * drift_job.c - drift raised by the server itself: a job on the operations
 * worker that brings the store's drift rows up to date
 * (tw_svc_drift_update) at the start and every --drift-interval (default
 * 1 min) when the server has policies, logs a line when a drift starts or
 * ends, and keeps the number of disks drifting for /metrics
 * (tierwise_drift_disks).  Whatever wrote the observations it judges, an
 * agent's report or ARM's sync (source arm), is the same to it.
 *
 * After each sync from ARM that succeeded (serve --sync), the sync job's
 * hook queues one more run on the worker at once (srv->sync_hook), so a
 * change ARM shows is judged without waiting for the next interval; the
 * hook only queues a job, it touches no drift state on the sync's behalf.
 * /metrics also shows when the last run succeeded and how many failed
 * (tierwise_drift_last_success_timestamp_seconds, tierwise_drift_errors_total):
 * a failed run keeps the gauge at its last count.
 *
 * The runs own what they read, in one counted context: the database's
 * path, its own parse of each policy's text, and a reference to the gauge
 * it writes, which the server holds too (whichever lets go last frees
 * it), so a run still going when the server stops touches nothing the
 * stop frees.
 */
#include "server/server_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/drift.h"

struct tw_srv_drift_gauge {
    atomic_int refs;
    atomic_llong disks; /* -1: not judged yet (a failed run keeps the last count) */
    atomic_llong last_success_s; /* Unix seconds of the last run that succeeded; 0 none */
    atomic_llong errors;         /* runs that failed */
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

bool tw_srv_drift_stats(const struct tw_server *srv, int64_t *last_success_s, int64_t *errors)
{
    if (!srv->drift)
        return false;
    *last_success_s = (int64_t)atomic_load(&srv->drift->last_success_s);
    *errors = (int64_t)atomic_load(&srv->drift->errors);
    return true;
}

/* What every run judges by, shared (counted) by the periodic job, the runs
 * a sync queues, the sync job that queues them and the server: whichever
 * lets go last frees it, so nothing a stop frees is touched by a run. */
struct drift_ctx {
    atomic_int refs;
    atomic_bool queued;         /* a run after a sync is queued and not yet started */
    struct tw_worker *worker;
    struct tw_srv_drift_gauge *gauge;
    struct tw_srv_leader *leader; /* a reference of the context's own */
    char db_path[PATH_MAX];
    size_t n;
    struct tw_policy *pols;
    const struct tw_policy **ptrs;
};

static struct drift_ctx *ctx_ref(struct drift_ctx *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

static void ctx_unref(struct drift_ctx *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (size_t i = 0; i < c->n; i++)
        tw_policy_cleanup(&c->pols[i]);
    free(c->pols);
    free(c->ptrs);
    gauge_unref(c->gauge);
    tw_srv_leader_unref(c->leader);
    free(c);
}

void tw_srv_drift_release(struct tw_server *srv)
{
    gauge_unref(srv->drift);
    srv->drift = NULL;
    if (srv->sync_hook_hold) {
        /* The server's hold on the hook's argument (tw_srv_drift_start). */
        srv->sync_hook_hold(srv->sync_hook_arg, false);
        srv->sync_hook = NULL;
        srv->sync_hook_arg = NULL;
        srv->sync_hook_hold = NULL;
    }
}

/* One run: periodic (EVERY_NS > 0, queued again after it) or once, after
 * a sync. */
struct drift_job {
    struct tw_worker_job job;
    struct drift_ctx *ctx;
    int64_t every_ns;
};

static void job_free(struct drift_job *j)
{
    ctx_unref(j->ctx);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    struct drift_job *j = job->arg;
    if (!j->every_ns)
        atomic_store(&j->ctx->queued, false);
    job_free(j);
}

static void log_line(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "tierwise serve: %s\n", line);
}

static void job_run(struct tw_worker_job *job)
{
    struct drift_job *j = job->arg;
    struct drift_ctx *c = j->ctx;
    if (!j->every_ns)
        atomic_store(&c->queued, false); /* a sync after this start queues another */
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    struct tw_drift_update u = {0};
    /* Another backend on this database judges drift (and logs its
     * starts and ends): this run is skipped, and the next asks again. */
    if (!tw_srv_leader_mine(c->leader, "drift"))
        goto next;
    enum tw_err rc = tw_store_open(c->db_path, &st, &err);
    if (rc == TW_OK)
        rc = tw_svc_drift_update(st, c->ptrs, c->n, tw_worker_now_ns() / 1000000, log_line,
                                 NULL, &u, &err);
    tw_store_close(st);
    if (rc == TW_OK) {
        atomic_store(&c->gauge->disks, (long long)u.open);
        atomic_store(&c->gauge->last_success_s, (long long)(tw_worker_now_ns() / 1000000000LL));
    } else {
        atomic_fetch_add(&c->gauge->errors, 1);
        fprintf(stderr, "tierwise serve: judging drift failed (tried again in a minute or at "
                        "the next --drift-interval): %s\n",
                err.msg[0] ? err.msg : tw_strerror(rc));
    }
next:
    if (!j->every_ns) {
        job_free(j);
        return;
    }
    int64_t due_ns = tw_worker_now_ns() + j->every_ns;
    if (tw_worker_stopping(c->worker) || tw_worker_again_at(c->worker, job, due_ns) != TW_OK)
        job_free(j);
}

/* The sync's hook (server_int.h): drift judged at once after a sync that
 * succeeded, as a run of its own queued on the worker (one at a time). */
static void after_sync(void *arg, const struct tw_sync_summary *s)
{
    (void)s;
    struct drift_ctx *c = arg;
    if (atomic_exchange(&c->queued, true))
        return;
    struct drift_job *j = calloc(1, sizeof(*j));
    if (!j) {
        atomic_store(&c->queued, false);
        return;
    }
    j->ctx = ctx_ref(c);
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_stopping(c->worker) || tw_worker_submit(c->worker, &j->job) != TW_OK) {
        atomic_store(&c->queued, false);
        job_free(j);
    }
}

static void hook_hold(void *arg, bool hold)
{
    if (hold)
        ctx_ref(arg);
    else
        ctx_unref(arg);
}

enum tw_err tw_srv_drift_start(struct tw_server *srv, unsigned every_s, struct tw_error *err)
{
    if (srv->policies.n == 0)
        return TW_OK;
    struct drift_job *j = calloc(1, sizeof(*j));
    struct drift_ctx *c = calloc(1, sizeof(*c));
    struct tw_srv_drift_gauge *g = calloc(1, sizeof(*g));
    if (!j || !c || !g) {
        free(j);
        free(c);
        free(g);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    atomic_init(&g->refs, 2); /* the server's and the context's */
    atomic_init(&g->disks, -1);
    atomic_init(&g->last_success_s, 0);
    atomic_init(&g->errors, 0);
    srv->drift = g;
    atomic_init(&c->refs, 1); /* the periodic job's */
    atomic_init(&c->queued, false);
    c->gauge = g;
    c->leader = tw_srv_leader_ref(srv->leader);
    j->ctx = c;
    c->pols = calloc(srv->policies.n, sizeof(*c->pols));
    c->ptrs = calloc(srv->policies.n, sizeof(*c->ptrs));
    if (!c->pols || !c->ptrs) {
        job_free(j);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < srv->policies.n; i++) {
        const struct tw_svc_policy *sp = &srv->policies.v[i];
        enum tw_err rc = tw_policy_parse(sp->text, sp->len, &c->pols[i], NULL, err);
        c->n = i + 1;
        c->ptrs[i] = &c->pols[i];
        if (rc != TW_OK) {
            job_free(j);
            return rc;
        }
    }
    c->worker = srv->worker;
    j->every_ns = (int64_t)(every_s ? every_s : TW_SRV_DRIFT_EVERY_S) * 1000000000LL;
    snprintf(c->db_path, sizeof(c->db_path), "%s", srv->db_path);
    /* After each sync that succeeded, drift at once (the server holds the
     * context for the hook until tw_srv_drift_release; the sync job takes
     * its own hold when it copies the hook). */
    srv->sync_hook = after_sync;
    srv->sync_hook_arg = ctx_ref(c);
    srv->sync_hook_hold = hook_hold;
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the drift job");
    }
    return TW_OK;
}
