/*
 * sync_job.c - serve --sync: the fleet from ARM (service/sync.h) on the
 * operations worker at the start and every --sync-interval (default 5
 * min), of the --subscription given (else the one IMDS names, asked at
 * each run until it answers).  A failure is logged and tried again at the
 * next interval; /metrics shows when the last sync succeeded and how many
 * failed (tierwise_sync_last_success_timestamp_seconds,
 * tierwise_sync_errors_total).  After each sync that succeeded the
 * server's hook runs (srv->sync_hook with its argument, as they were when
 * the job started, the argument held while the job keeps it: drift_job.c's
 * queues a drift run at once rather than at the drift job's next run).
 *
 * The job owns copies of what it reads (the database's path, the URLs,
 * the subscriptions, the resource groups) and a reference to the counters
 * it writes, which the server holds too (whichever lets go last frees
 * them).  The credential and the pacer are the server's caller's
 * (borrowed until after tw_server_stop); a run asks the worker whether it
 * is stopping before each VM, so a stop does not wait for a whole sync.
 */
#include "server/server_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "service/sync.h"

#define SYNC_SUBS_MAX 64

struct tw_srv_sync_counts {
    atomic_int refs;
    atomic_llong last_success_s; /* 0: none yet */
    atomic_llong errors;
};

static void counts_unref(struct tw_srv_sync_counts *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1)
        free(c);
}

bool tw_srv_sync_stats(const struct tw_server *srv, int64_t *last_success_s, int64_t *errors)
{
    if (!srv->sync)
        return false;
    *last_success_s = (int64_t)atomic_load(&srv->sync->last_success_s);
    *errors = (int64_t)atomic_load(&srv->sync->errors);
    return true;
}

void tw_srv_sync_release(struct tw_server *srv)
{
    counts_unref(srv->sync);
    srv->sync = NULL;
}

struct sync_job {
    struct tw_worker_job job;
    struct tw_worker *worker;
    void (*hook)(void *arg, const struct tw_sync_summary *s); /* the server's, at start */
    void *hook_arg;
    void (*hook_hold)(void *arg, bool hold); /* held while the job keeps the hook */
    struct tw_srv_sync_counts *counts;
    struct tw_srv_leader *leader; /* a reference of the job's own */
    struct tw_arm_cred *cred;
    struct tw_arm_pacer *pacer;
    char db_path[PATH_MAX];
    char arm_url[256], imds_url[256];
    int64_t every_ns;
    size_t n_subs, n_groups;
    char subs[SYNC_SUBS_MAX][64];
    char groups[SYNC_SUBS_MAX][91];
};

static void job_free(struct sync_job *j)
{
    if (j->hook_hold)
        j->hook_hold(j->hook_arg, false);
    counts_unref(j->counts);
    tw_srv_leader_unref(j->leader);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    job_free(job->arg);
}

/* One sync; TW_OK or the error, said in ERR. */
static enum tw_err sync_once(struct sync_job *j, struct tw_sync_summary *sum,
                             struct tw_error *err)
{
    const char *subs[SYNC_SUBS_MAX], *groups[SYNC_SUBS_MAX];
    char imds_sub[64];
    size_t n_subs = j->n_subs;
    for (size_t i = 0; i < n_subs; i++)
        subs[i] = j->subs[i];
    for (size_t i = 0; i < j->n_groups; i++)
        groups[i] = j->groups[i];
    struct tw_az_http_opts http;
    tw_az_http_opts_default(&http);
    enum tw_err rc;
    if (n_subs == 0) {
        rc = tw_sync_default_subscription(&http, j->imds_url, imds_sub, sizeof imds_sub, err);
        if (rc != TW_OK)
            return rc;
        subs[n_subs++] = imds_sub;
    }
    struct tw_arm_opts ao = {.arm_url = j->arm_url, .http = http};
    struct tw_arm *arm = NULL;
    if ((rc = tw_arm_new(&ao, j->cred, j->pacer, &arm, err)) != TW_OK)
        return rc;
    struct tw_store *st = NULL;
    if ((rc = tw_store_open(j->db_path, &st, err)) == TW_OK) {
        struct tw_sync_opts o = {.st = st, .arm = tw_sync_arm_real(arm), .subscriptions = subs,
                                 .n_subscriptions = n_subs, .resource_groups = groups,
                                 .n_resource_groups = j->n_groups,
                                 .stopping = tw_worker_stopping_cb, .stop_arg = j->worker};
        rc = tw_sync_run(&o, sum, err);
    }
    tw_store_close(st);
    tw_arm_free(arm);
    return rc;
}

static void job_run(struct tw_worker_job *job)
{
    struct sync_job *j = job->arg;
    /* Another backend on this database syncs: asked again at the next
     * interval (taken over then when that one has stopped). */
    if (!tw_srv_leader_mine(j->leader, "sync")) {
        int64_t later = tw_worker_now_ns() + j->every_ns;
        if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, later) != TW_OK)
            job_free(j);
        return;
    }
    struct tw_error err = {0};
    struct tw_sync_summary sum;
    memset(&sum, 0, sizeof sum);
    enum tw_err rc = sync_once(j, &sum, &err);
    int64_t due_ns = tw_worker_now_ns() + j->every_ns;
    char next[40];
    if (!tw_rfc3339_format(due_ns / 1000000000LL, next, sizeof next))
        snprintf(next, sizeof next, "?");
    if (rc == TW_OK) {
        atomic_store(&j->counts->last_success_s, (long long)(tw_worker_now_ns() / 1000000000LL));
        fprintf(stderr,
                "tierwise serve: sync from ARM: %zu VMs (%zu new), %zu disks (%zu new), %zu SKU "
                "changes, %zu power changes, %zu detached, %zu unattached disks; next at %s\n",
                sum.vms, sum.vms_new, sum.disks, sum.disks_new, sum.sku_changes,
                sum.power_changes, sum.detached, sum.unattached_disks, next);
        if (j->hook && !tw_worker_stopping(j->worker))
            j->hook(j->hook_arg, &sum);
    } else if (!tw_worker_stopping(j->worker)) {
        atomic_fetch_add(&j->counts->errors, 1);
        fprintf(stderr, "tierwise serve: sync from ARM failed (%zu VMs stored before it); "
                        "tried again at %s: %s\n",
                sum.vms, next, err.msg[0] ? err.msg : tw_strerror(rc));
    }
    tw_sync_summary_free(&sum);
    if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, job, due_ns) != TW_OK)
        job_free(j);
}

enum tw_err tw_srv_sync_start(struct tw_server *srv, const struct tw_server_options *opt,
                              struct tw_error *err)
{
    if (!opt->sync)
        return TW_OK;
    const char *arm_url = opt->sync_arm_url ? opt->sync_arm_url
                          : opt->exec_arm_url ? opt->exec_arm_url : opt->arm_url;
    if (!arm_url || !arm_url[0] || !opt->arm_cred)
        return tw_error_set(err, TW_EINVAL, "--sync needs ARM's URL and a credential");
    if (opt->n_sync_subscriptions == 0 && (!opt->sync_imds_url || !opt->sync_imds_url[0]))
        return tw_error_set(err, TW_EINVAL, "--sync without --subscription needs IMDS's URL "
                                            "(the subscription IMDS names)");
    if (opt->n_sync_subscriptions > SYNC_SUBS_MAX || opt->n_sync_resource_groups > SYNC_SUBS_MAX)
        return tw_error_set(err, TW_EINVAL, "--sync reads at most %d subscriptions and %d "
                            "resource groups", SYNC_SUBS_MAX, SYNC_SUBS_MAX);
    struct sync_job *j = calloc(1, sizeof(*j));
    struct tw_srv_sync_counts *c = calloc(1, sizeof(*c));
    if (!j || !c) {
        free(j);
        free(c);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    atomic_init(&c->refs, 2); /* the server's and the job's */
    atomic_init(&c->last_success_s, 0);
    atomic_init(&c->errors, 0);
    j->counts = c;
    srv->sync = c;
    j->leader = tw_srv_leader_ref(srv->leader);
    if (strlen(arm_url) >= sizeof j->arm_url ||
        (opt->sync_imds_url && strlen(opt->sync_imds_url) >= sizeof j->imds_url)) {
        job_free(j);
        return tw_error_set(err, TW_EINVAL, "the ARM or IMDS URL is too long");
    }
    for (size_t i = 0; i < opt->n_sync_subscriptions; i++) {
        if (!tw_sync_subscription_valid(opt->sync_subscriptions[i])) {
            job_free(j);
            return tw_error_set(err, TW_EINVAL, "--subscription \"%.64s\" is not a "
                                "subscription id (a GUID)", opt->sync_subscriptions[i]);
        }
        snprintf(j->subs[i], sizeof j->subs[i], "%s", opt->sync_subscriptions[i]);
    }
    for (size_t i = 0; i < opt->n_sync_resource_groups; i++) {
        if (strlen(opt->sync_resource_groups[i]) >= sizeof j->groups[i] ||
            !tw_sync_resource_group_valid(opt->sync_resource_groups[i])) {
            job_free(j);
            return tw_error_set(err, TW_EINVAL, "--resource-group \"%.100s\" is not a "
                                "resource group name (1 to 90 letters, digits, _ - . ( ), not "
                                "ending in .)", opt->sync_resource_groups[i]);
        }
        snprintf(j->groups[i], sizeof j->groups[i], "%s", opt->sync_resource_groups[i]);
    }
    j->n_subs = opt->n_sync_subscriptions;
    j->n_groups = opt->n_sync_resource_groups;
    j->worker = srv->worker;
    j->hook = srv->sync_hook;
    j->hook_arg = srv->sync_hook_arg;
    if (j->hook && srv->sync_hook_hold) {
        srv->sync_hook_hold(j->hook_arg, true);
        j->hook_hold = srv->sync_hook_hold;
    }
    j->cred = opt->arm_cred;
    j->pacer = opt->arm_pacer;
    j->every_ns = (int64_t)(opt->sync_interval_s ? opt->sync_interval_s : TW_SRV_SYNC_EVERY_S) *
                  1000000000LL;
    snprintf(j->db_path, sizeof j->db_path, "%s", srv->db_path);
    snprintf(j->arm_url, sizeof j->arm_url, "%s", arm_url);
    snprintf(j->imds_url, sizeof j->imds_url, "%s", opt->sync_imds_url ? opt->sync_imds_url : "");
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the sync job");
    }
    return TW_OK;
}
