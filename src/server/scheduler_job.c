/*
 * scheduler_job.c - the executor in the server: `serve --scheduler` (a
 * tick of every policy of --policies every --scheduler-interval, on a
 * worker of its own so that a long tier switch never holds a prices
 * refresh), and the executing runs of POST /api/v1/actions (on the
 * operations worker, followed through GET /api/v1/operations/{id}).
 *
 * Each tick is service/exec.h's tw_exec_tick_run: the actions due now
 * planned, recorded (idempotently) and run, with store handles and ARM
 * clients of its own.  The credential and the pacer are the server's
 * (borrowed from the caller of tw_server_start).
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "service/exec.h"

#define NS_PER_S 1000000000LL

bool tw_srv_exec_enter(struct tw_server *srv)
{
    atomic_fetch_add(&srv->exec_running, 1);
    atomic_thread_fence(memory_order_seq_cst); /* the count, then the flag: drain's mirror */
    if (srv->exec_stop) {
        atomic_fetch_sub(&srv->exec_running, 1);
        return false;
    }
    return true;
}

void tw_srv_exec_leave(struct tw_server *srv)
{
    atomic_fetch_sub(&srv->exec_running, 1);
}

bool tw_srv_exec_drain(struct tw_server *srv)
{
    atomic_thread_fence(memory_order_seq_cst); /* the flag (set before), then the count */
    for (int i = 0; atomic_load(&srv->exec_running) > 0; i++) {
        if (i == 100)
            fprintf(stderr, "tierwise serve: stopping: waiting for a tier-switch run to reach "
                            "its next step (its actions are resumed from their state later)\n");
        if (i == 100 * TW_SRV_EXEC_DRAIN_S) {
            fprintf(stderr, "tierwise serve: stopping: a tier-switch run is still inside an ARM "
                            "call after %d s; leaving it to the process's exit (its actions "
                            "are resumed from their state by the next run)\n",
                    TW_SRV_EXEC_DRAIN_S);
            return false;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return true;
}

void tw_srv_exec_opts(struct tw_server *srv, struct tw_exec_opts *o, bool dry_run)
{
    memset(o, 0, sizeof *o);
    o->db_path = srv->db_path;
    o->arm = &tw_exec_arm_real_ops;
    o->arm_arg = &srv->exec_arm;
    o->arm_url = srv->exec_arm_url;
    o->parallel = 4;
    o->dry_run = dry_run;
    o->caps = &srv->caps;
    o->arm_sizes = srv->vmsizes;
    o->tick_ms = (int64_t)(srv->scheduler_interval_s ? srv->scheduler_interval_s : 60) * 1000;
    o->stop = &srv->exec_stop;
}

void tw_srv_exec_arm_init(struct tw_server *srv, const char *arm_url, struct tw_arm_cred *cred,
                          struct tw_arm_pacer *pacer)
{
    snprintf(srv->exec_arm_url, sizeof srv->exec_arm_url, "%s", arm_url ? arm_url : "");
    memset(&srv->exec_arm, 0, sizeof srv->exec_arm);
    srv->exec_arm.opts.arm_url = srv->exec_arm_url;
    tw_az_http_opts_default(&srv->exec_arm.opts.http);
    srv->exec_arm.cred = cred;
    srv->exec_arm.pacer = pacer;
}

void tw_srv_exec_tick(struct tw_server *srv, struct tw_exec_tick *t, const struct tw_policy *p,
                      const struct tw_exec_opts *o)
{
    memset(t, 0, sizeof *t);
    t->exec = o;
    t->plan.policy = p;
    t->plan.cat = &srv->cat;
    t->plan.caps = &srv->caps;
    t->plan.arm_sizes = srv->vmsizes;
    t->plan.zone = tw_srv_zone;
    t->plan.zone_arg = srv;
}

/* ---- serve --scheduler ---- */

struct sched_job {
    struct tw_worker_job job;
    struct tw_server *srv;   /* read only between tw_srv_exec_enter and _leave */
    struct tw_worker *worker; /* the scheduler's (outlives a detached stop) */
    int64_t every_ns;
};

static void sched_tick(struct tw_server *srv);

static void sched_run(struct tw_worker_job *job)
{
    struct sched_job *j = job->arg;
    if (tw_srv_exec_enter(j->srv)) {
        sched_tick(j->srv);
        tw_srv_exec_leave(j->srv);
    }
    int64_t due = tw_worker_now_ns() + j->every_ns;
    if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, due) != TW_OK)
        free(j);
}

static void sched_tick(struct tw_server *srv)
{
    /* Another backend on this database ticks the policies: asked again
     * at the next interval.  (Actions are claimed with a lease besides,
     * so a run of POST /api/v1/actions on any backend never sends one
     * twice.) */
    if (!tw_srv_work_mine(srv, "scheduler"))
        return;
    struct tw_exec_opts o;
    tw_srv_exec_opts(srv, &o, false);
    char owner[96];
    tw_exec_owner_default(owner, sizeof owner);
    snprintf(owner + strlen(owner), sizeof owner - strlen(owner), ":sched");
    o.owner = owner; /* POST /api/v1/actions's runs are ":api" (and each run numbered) */
    for (size_t i = 0; i < srv->policies.n && !srv->exec_stop; i++) {
        const struct tw_policy *p = &srv->policies.v[i].policy;
        if (!p->switches)
            continue;
        struct tw_exec_tick t;
        tw_srv_exec_tick(srv, &t, p, &o);
        t.plan.currency = srv->scheduler_currency[0] ? srv->scheduler_currency : NULL;
        struct tw_exec_tick_summary sum;
        struct tw_error err = {0};
        enum tw_err rc = tw_exec_tick_run(&t, &sum, &err);
        if (rc != TW_OK)
            fprintf(stderr, "tierwise serve: scheduler: policy %s: %s\n", p->name,
                    err.msg[0] ? err.msg : tw_strerror(rc));
        else if (sum.run.actions)
            fprintf(stderr,
                    "tierwise serve: scheduler: policy %s: %lld due, %lld recorded; %lld done, "
                    "%lld skipped, %lld failed, %lld waiting, %lld to retry\n",
                    p->name, (long long)sum.planned, (long long)sum.recorded,
                    (long long)sum.run.done, (long long)sum.run.skipped,
                    (long long)sum.run.failed, (long long)sum.run.waiting,
                    (long long)sum.run.retry);
    }
}

static void sched_cancel(struct tw_worker_job *job)
{
    free(job->arg);
}

enum tw_err tw_srv_scheduler_start(struct tw_server *srv, struct tw_error *err)
{
    if (!srv->scheduler)
        return TW_OK;
    if (!srv->exec_arm.cred)
        return tw_error_set(err, TW_EINVAL, "--scheduler needs ARM credentials (the ARM options)");
    const struct tw_worker_opts wo = {.name = "the scheduler", .queue_max = 4};
    enum tw_err rc = tw_worker_start(&wo, &srv->sched_worker, err);
    if (rc != TW_OK)
        return rc;
    struct sched_job *j = calloc(1, sizeof *j);
    if (!j)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    j->srv = srv;
    j->worker = srv->sched_worker;
    j->every_ns = (int64_t)(srv->scheduler_interval_s ? srv->scheduler_interval_s : 60) * NS_PER_S;
    j->job = (struct tw_worker_job){.run = sched_run, .cancel = sched_cancel, .arg = j};
    if (tw_worker_submit(srv->sched_worker, &j->job) != TW_OK) {
        free(j);
        return tw_error_set(err, TW_EIO, "the scheduler's worker refused its first tick");
    }
    return TW_OK;
}

void tw_srv_scheduler_stop(struct tw_server *srv, long timeout_ms)
{
    srv->exec_stop = 1;
    if (!srv->sched_worker)
        return;
    tw_worker_stop(srv->sched_worker, TW_WORKER_CANCEL, timeout_ms);
    tw_worker_free(srv->sched_worker);
    srv->sched_worker = NULL;
}
