/*
 * prices_job.c - serve --prices-refresh: the price books of the fleet's
 * regions kept no older than the given age, on the operations worker
 * (service/prices.h, tw_svc_prices_refresh_fleet), on one backend of a
 * database at a time (the periodic work "prices", leader.c).
 *
 * The job looks every hour (every MAX_AGE when that is shorter) and
 * fetches only the books fetched longer ago than MAX_AGE, or never, or
 * imported from a file: so a restart, or a backend taking the work over
 * from one that died, fetches nothing the database already has fresh,
 * and no book is ever older than MAX_AGE plus one look.  Like the VM
 * sizes' job it owns copies of what it needs and opens a store handle of
 * its own for each run; a stopping worker refuses its next turn and the
 * job is freed.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "service/prices.h"

#define LOOK_S 3600 /* how often the books' ages are looked at, at most */

struct prices_job {
    struct tw_worker_job job;
    struct tw_worker *worker;
    struct tw_srv_leader *leader; /* a reference of the job's own */
    long max_age_s;
    bool said; /* the first run's line, even when every book was fresh */
    char db_path[PATH_MAX];
    char prices_url[256];
};

static void job_free(struct prices_job *j)
{
    tw_srv_leader_unref(j->leader);
    free(j);
}

static void job_cancel(struct tw_worker_job *job)
{
    job_free(job->arg);
}

static void again(struct prices_job *j)
{
    long look_s = j->max_age_s < LOOK_S ? j->max_age_s : LOOK_S;
    int64_t due_ns = tw_worker_now_ns() + (int64_t)look_s * 1000000000LL;
    if (tw_worker_stopping(j->worker) || tw_worker_again_at(j->worker, &j->job, due_ns) != TW_OK)
        job_free(j);
}

static void job_run(struct tw_worker_job *job)
{
    struct prices_job *j = job->arg;
    /* Another backend keeps the books fresh; this one reads them from the
     * database like every request does. */
    if (!tw_srv_leader_mine(j->leader, "prices")) {
        again(j);
        return;
    }
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    struct tw_svc_prices_fleet_report rep = {0};
    enum tw_err rc = tw_store_open(j->db_path, &st, &err);
    if (rc == TW_OK) {
        struct tw_svc_refresh rq = {.prices_url = j->prices_url};
        rc = tw_svc_prices_refresh_fleet(st, &rq, j->max_age_s, tw_worker_stopping_cb, j->worker,
                                         &rep, &err);
        tw_store_close(st);
    }
    if (rep.stopped && rc == TW_OK) {
        again(j); /* refused now: the job is freed */
        return;
    }
    char not_tried[48] = "";
    if (rep.not_tried)
        snprintf(not_tried, sizeof(not_tried), ", %zu not tried", rep.not_tried);
    if (rc != TW_OK && rep.books == 0)
        fprintf(stderr,
                "tierwise serve: price books: the fleet's regions and currencies could not be "
                "read (nothing was fetched; tried again at the next look): %s\n",
                err.msg[0] ? err.msg : tw_strerror(rc));
    else if (rc != TW_OK)
        fprintf(stderr,
                "tierwise serve: price books: the look ended after %zu of %zu refreshed, the "
                "%s failing (what is stored is kept; tried again at the next look): %s\n",
                rep.refreshed, rep.books, rc == TW_ENOMEM ? "memory" : "store",
                err.msg[0] ? err.msg : tw_strerror(rc));
    else if (rep.failed)
        fprintf(stderr,
                "tierwise serve: price books from %s: %zu of %zu refreshed, %zu fresh, %zu "
                "failed%s (nothing stored is changed for them; tried again at the next look): "
                "%s\n",
                j->prices_url, rep.refreshed, rep.books, rep.fresh, rep.failed, not_tried,
                rep.first_error);
    else if (rep.refreshed || !j->said)
        fprintf(stderr,
                "tierwise serve: price books from %s: %zu of %zu refreshed, %zu fresh (fetched "
                "within %lds)\n",
                j->prices_url, rep.refreshed, rep.books, rep.fresh, j->max_age_s);
    j->said = true;
    again(j);
}

enum tw_err tw_srv_prices_start(struct tw_server *srv, long max_age_s, struct tw_error *err)
{
    if (max_age_s <= 0)
        return TW_OK;
    if (!srv->prices_url[0])
        return tw_error_set(err, TW_EINVAL,
                            "the price books' refresh needs the Retail Prices API's URL");
    struct prices_job *j = calloc(1, sizeof(*j));
    if (!j)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    j->worker = srv->worker;
    j->leader = tw_srv_leader_ref(srv->leader);
    j->max_age_s = max_age_s;
    snprintf(j->db_path, sizeof(j->db_path), "%s", srv->db_path);
    snprintf(j->prices_url, sizeof(j->prices_url), "%s", srv->prices_url);
    j->job = (struct tw_worker_job){.run = job_run, .cancel = job_cancel, .arg = j};
    if (tw_worker_submit(srv->worker, &j->job) != TW_OK) {
        job_free(j);
        return tw_error_set(err, TW_EIO, "the worker refused the price books' refresh");
    }
    return TW_OK;
}
