/*
 * vmsizes_job.c - ARM's VM sizes for the verdicts: loaded from the store
 * at start, then refreshed on the operations worker now and every day
 * (service/vmsizes.h), when the server was given an ARM endpoint.
 *
 * The job owns copies of what it needs (the database's path, the
 * endpoints) and a reference to the in-memory sizes, and opens a store
 * handle of its own for each run: a refresh still waiting on ARM when the
 * server stops is left to the detached worker and touches nothing the
 * stop frees.  After each run it queues itself again, a day later (an
 * hour after a run where a region failed); a stopping worker refuses
 * that, and the job is freed.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/time.h"
#include "service/vmsizes.h"

#define RETRY_S 3600 /* after a run where a region failed */

struct vmsizes_job {
    struct tw_worker_job job;
    struct tw_worker *worker;
    struct tw_svc_vmsizes *vs;    /* a reference of the job's own */
    struct tw_srv_leader *leader; /* a reference of the job's own */
    char db_path[PATH_MAX];
    char arm_url[256];
    char imds_url[256];
};

static void job_free(struct vmsizes_job *j)
{
    tw_svc_vmsizes_unref(j->vs);
    tw_srv_leader_unref(j->leader);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    job_free(job->arg);
}

/* Another backend on this database refreshes the sizes: this one loads
 * what that one stored, and asks again, every RETRY_S (so its verdicts
 * follow the refresh within an hour, and it takes the refresh over
 * within an hour of the other's end). */
static void follow(struct vmsizes_job *j)
{
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    if (rc == TW_OK)
        rc = tw_svc_vmsizes_load_fleet(j->vs, st, &err);
    tw_store_close(st);
    if (rc != TW_OK)
        fprintf(stderr,
                "tierwise serve: VM sizes: reading those another backend stored "
                "failed (the sizes in memory are kept; tried again in an hour): %s\n",
                err.msg[0] ? err.msg : tw_strerror(rc));
}

static void job_run(struct tw_worker_job *job)
{
    struct vmsizes_job *j = job->arg;
    if (!tw_srv_leader_mine(j->leader, "vmsizes")) {
        follow(j);
        int64_t later = tw_worker_now_ns() + (int64_t)RETRY_S * 1000000000LL;
        if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, later) != TW_OK)
            job_free(j);
        return;
    }
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    struct tw_svc_vmsizes_report rep = {0};
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    if (rc == TW_OK) {
        struct tw_svc_arm arm = {.arm_url = j->arm_url, .imds_url = j->imds_url};
        rc = tw_svc_vmsizes_refresh_fleet(st, &arm, j->vs, tw_worker_stopping_cb, j->worker, &rep,
                                          &err);
        tw_store_close(st);
    }
    long next_s = rc == TW_OK && !rep.failed ? TW_SVC_VMSIZES_EVERY_S : RETRY_S;
    int64_t due_ns = tw_worker_now_ns() + (int64_t)next_s * 1000000000LL;
    char next[40];
    if (!tw_rfc3339_format(due_ns / 1000000000LL, next, sizeof(next)))
        snprintf(next, sizeof(next), "?");
    if (rc == TW_OK && !rep.failed)
        fprintf(stderr,
                "tierwise serve: VM sizes from ARM: %zu region(s), %zu size(s) stored; next "
                "refresh at %s\n",
                rep.refreshed, rep.sizes, next);
    else
        fprintf(stderr,
                "tierwise serve: VM sizes from ARM: %zu of %zu region(s) refreshed, %zu "
                "failed (their cached sizes are kept): %s; next try at %s\n",
                rep.refreshed, rep.regions, rep.failed,
                rep.first_error[0] ? rep.first_error : err.msg, next);
    if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, due_ns) != TW_OK)
        job_free(j);
}

enum tw_err tw_srv_vmsizes_start(struct tw_server *srv, const char *arm_url, const char *imds_url,
                                 struct tw_error *err)
{
    if (!arm_url || !*arm_url)
        return TW_OK;
    if (strlen(arm_url) >= sizeof(((struct vmsizes_job *)0)->arm_url) ||
        (imds_url && strlen(imds_url) >= sizeof(((struct vmsizes_job *)0)->imds_url)))
        return tw_error_set(err, TW_EINVAL, "the ARM or IMDS URL is too long");
    srv->vmsizes = tw_svc_vmsizes_new();
    struct vmsizes_job *j = calloc(1, sizeof(*j));
    if (!srv->vmsizes || !j) {
        free(j);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    /* What the store has cached serves verdicts from the first request. */
    struct tw_store *st = tw_srv_store_get(srv, err);
    if (!st) {
        free(j);
        return err->code ? err->code : TW_EIO;
    }
    enum tw_err rc = tw_svc_vmsizes_load_fleet(srv->vmsizes, st, err);
    tw_srv_store_put(srv, st);
    if (rc != TW_OK) {
        free(j);
        return rc;
    }
    j->worker = srv->worker;
    j->vs = tw_svc_vmsizes_ref(srv->vmsizes);
    j->leader = tw_srv_leader_ref(srv->leader);
    snprintf(j->db_path, sizeof(j->db_path), "%s", srv->db_path);
    snprintf(j->arm_url, sizeof(j->arm_url), "%s", arm_url);
    snprintf(j->imds_url, sizeof(j->imds_url), "%s", imds_url ? imds_url : "");
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the VM sizes refresh");
    }
    return TW_OK;
}
