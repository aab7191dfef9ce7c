/*
 * rejudge.c - keeping the kept verdicts standing: a job on the server's
 * worker that judges again the latest results whose verdicts, kept when
 * their reports were stored, no longer stand (this build's rules, catalog
 * or VM caps differ from those they were judged under, a VM reported
 * without results, a store migrated from version 2), so that the fleet's
 * summary counts kept verdicts rather than judging the fleet per request.
 *
 * It runs at the start and then every TW_SRV_REJUDGE_EVERY_S seconds, in
 * chunks of TW_SRV_REJUDGE_CHUNK VMs (one transaction each, so the writer
 * never waits long for the database's lock), and at most
 * TW_SRV_REJUDGE_RUN VMs a run before it lets the worker's other jobs
 * (a prices refresh) go first.  The job owns copies of the tier catalog
 * and the VM caps and a reference to ARM's sizes: it never reads the
 * server, which a stop may free while a chunk still runs.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/compliance.h"

#define TW_SRV_REJUDGE_EVERY_S 60
#define TW_SRV_REJUDGE_CHUNK 200
#define TW_SRV_REJUDGE_RUN 5000

struct rejudge_job {
    struct tw_worker_job job;
    struct tw_worker *worker;
    char db_path[PATH_MAX];
    struct tw_tier_catalog cat;   /* copies, the job's own */
    struct tw_vmcap_table caps;
    struct tw_svc_vmsizes *vs;    /* a reference of the job's own, or NULL */
    struct tw_srv_leader *leader; /* a reference of the job's own */
    uint64_t fixed;               /* the basis's share of CAT and CAPS */
    int64_t after;                /* the round goes on past this VM id */
};

static void job_free(struct rejudge_job *j)
{
    free(j->cat.tiers);
    free(j->caps.caps);
    if (j->vs)
        tw_svc_vmsizes_unref(j->vs);
    tw_srv_leader_unref(j->leader);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    job_free(job->arg);
}

static void job_run(struct tw_worker_job *job)
{
    struct rejudge_job *j = job->arg;
    /* Another backend on this database judges again: asked again at the
     * next minute.  (Backends of one database run one build, whose rules
     * the holder judges by.) */
    if (!tw_srv_leader_mine(j->leader, "rejudge")) {
        j->after = 0;
        int64_t later = tw_worker_now_ns() + (int64_t)TW_SRV_REJUDGE_EVERY_S * 1000000000LL;
        if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, later) != TW_OK)
            job_free(j);
        return;
    }
    struct tw_svc_compliance_ctx ctx = {
        .cat = &j->cat, .caps = &j->caps, .arm = j->vs, .fixed = &j->fixed};
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    size_t total = 0;
    bool more = false;
    int64_t after = j->after;
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    while (rc == TW_OK && !tw_worker_stopping(j->worker)) {
        size_t n = 0;
        rc = tw_svc_compliance_rejudge(st, &ctx, &after, TW_SRV_REJUDGE_CHUNK, &n, &more, &err);
        total += n;
        if (!more || total >= TW_SRV_REJUDGE_RUN)
            break;
    }
    tw_store_close(st);
    if (rc != TW_OK)
        fprintf(stderr, "tierwise serve: judging kept verdicts again failed (the summary "
                        "judges those VMs when asked instead): %s\n",
                err.msg[0] ? err.msg : tw_strerror(rc));
    else if (total)
        fprintf(stderr, "tierwise serve: %zu VM(s)' verdicts judged again and kept%s\n", total,
                more ? "; more follow" : "");
    /* Straight on while VMs are left (past those of this run), else a new
     * round from the first VM at the next minute. */
    j->after = rc == TW_OK && more ? after : 0;
    int64_t due_ns = tw_worker_now_ns() +
                     (rc == TW_OK && more ? 0 : (int64_t)TW_SRV_REJUDGE_EVERY_S * 1000000000LL);
    if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, due_ns) != TW_OK)
        job_free(j);
}

enum tw_err tw_srv_rejudge_start(struct tw_server *srv, struct tw_error *err)
{
    struct rejudge_job *j = calloc(1, sizeof(*j));
    if (!j)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    j->cat = srv->cat;
    j->cat.tiers = malloc((srv->cat.n_tiers ? srv->cat.n_tiers : 1) * sizeof(*j->cat.tiers));
    j->caps = srv->caps;
    j->caps.caps = malloc((srv->caps.n ? srv->caps.n : 1) * sizeof(*j->caps.caps));
    if (!j->cat.tiers || !j->caps.caps) {
        j->vs = NULL;
        job_free(j);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    if (srv->cat.n_tiers)
        memcpy(j->cat.tiers, srv->cat.tiers, srv->cat.n_tiers * sizeof(*j->cat.tiers));
    if (srv->caps.n)
        memcpy(j->caps.caps, srv->caps.caps, srv->caps.n * sizeof(*j->caps.caps));
    j->vs = srv->vmsizes ? tw_svc_vmsizes_ref(srv->vmsizes) : NULL;
    j->fixed = srv->basis_fixed;
    j->worker = srv->worker;
    j->leader = tw_srv_leader_ref(srv->leader);
    snprintf(j->db_path, sizeof(j->db_path), "%s", srv->db_path);
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the judging of kept verdicts");
    }
    return TW_OK;
}
