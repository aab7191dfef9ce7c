/*
 * leader.c - periodic work on one backend at a time.  Several backends
 * may serve one PostgreSQL database; the ARM sync, the VM sizes' refresh,
 * drift, the scheduler and the judging of kept verdicts must each run on
 * one of them only.  Before each run a job asks tw_srv_leader_mine for
 * its kind of work: the store's work lock (tw_store_work_lock) on one
 * handle kept here for that purpose, so every lock this backend holds
 * lives as long as that handle's connection and dies with the process
 * (another backend's next ask takes it over).
 *
 * The handle is opened at the start; a failed ask closes it (a lost
 * connection took every lock with it) and the next ask opens a new one.
 * A line is logged when this backend takes a kind over or loses it, and
 * once when the store can't be asked; a SQLite store always holds every
 * kind (one process serves a file) and logs nothing, and a SQLite handle
 * that fails to open leaves the work this backend's (the job's own open
 * says what is wrong).
 *
 * The leader is counted: the server and every job hold it, because a job
 * still running after a stop (left to a detached worker) must not touch
 * what the stop freed.
 */
#include "server/server_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEADER_KINDS TW_METRICS_WORK_KINDS

struct leader_kind {
    char kind[16];
    int held; /* -1 not asked yet, 0 another's, 1 this backend's */
};

struct tw_srv_leader {
    atomic_int refs;
    pthread_mutex_t lock; /* everything below */
    char db_path[PATH_MAX];
    bool quiet;            /* SQLite: always held, nothing to log */
    struct tw_store *st;   /* NULL: not open (its last open or ask failed) */
    bool failing;          /* the last open or ask failed (logged once) */
    size_t n;
    struct leader_kind k[LEADER_KINDS];
};

static void say(const struct tw_srv_leader *ld, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct tw_srv_leader *ld, const char *fmt, ...)
{
    if (ld->quiet)
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "tierwise serve: %s\n", line);
}

static struct leader_kind *kind_of(struct tw_srv_leader *ld, const char *kind)
{
    for (size_t i = 0; i < ld->n; i++)
        if (!strcmp(ld->k[i].kind, kind))
            return &ld->k[i];
    if (ld->n == LEADER_KINDS || strlen(kind) >= sizeof(ld->k[0].kind))
        return NULL;
    struct leader_kind *k = &ld->k[ld->n++];
    snprintf(k->kind, sizeof(k->kind), "%s", kind);
    k->held = -1;
    return k;
}

/* The handle is gone (or never came): every kind it held is lost. */
static void lose_all(struct tw_srv_leader *ld, const char *why)
{
    for (size_t i = 0; i < ld->n; i++) {
        if (ld->k[i].held == 1)
            say(ld, "periodic %s: this backend no longer runs it (%s); another backend "
                    "takes it over, or this one when the store answers again",
                ld->k[i].kind, why);
        ld->k[i].held = 0;
    }
}

static void fail(struct tw_srv_leader *ld, const struct tw_error *err, enum tw_err rc)
{
    const char *why = err->msg[0] ? err->msg : tw_strerror(rc);
    if (!ld->failing)
        say(ld, "periodic work waits: the store can't say which backend runs it: %s", why);
    ld->failing = true;
    lose_all(ld, why);
    tw_store_close(ld->st);
    ld->st = NULL;
}

bool tw_srv_leader_mine(struct tw_srv_leader *ld, const char *kind)
{
    if (!ld)
        return true; /* a server without one (none started): alone */
    struct tw_error err = {0};
    bool held = false;
    pthread_mutex_lock(&ld->lock);
    enum tw_err rc = TW_OK;
    if (!ld->st)
        rc = tw_store_open(ld->db_path, &ld->st, &err);
    if (rc == TW_OK)
        rc = tw_store_work_lock(ld->st, kind, &held, &err);
    if (rc != TW_OK) {
        fail(ld, &err, rc);
        pthread_mutex_unlock(&ld->lock);
        /* SQLite: this process is the file's only one all the same; the
         * job runs, opens its own handle and says what fails. */
        return ld->quiet;
    }
    if (ld->failing)
        say(ld, "periodic work: the store answers again");
    ld->failing = false;
    struct leader_kind *k = kind_of(ld, kind);
    if (k && k->held != (held ? 1 : 0)) {
        if (held)
            say(ld, "periodic %s: this backend runs it now%s", kind,
                k->held == 0 ? " (taken over from another backend)" : "");
        else
            say(ld, "periodic %s: another backend runs it%s", kind,
                k->held == 1 ? " now (this one lost it)" : "; this one takes it over if "
                                                            "that one stops");
        k->held = held ? 1 : 0;
    }
    pthread_mutex_unlock(&ld->lock);
    return held;
}

void tw_srv_leader_held(struct tw_srv_leader *ld, struct tw_metrics_store *ms)
{
    ms->n_work = 0;
    if (!ld)
        return;
    pthread_mutex_lock(&ld->lock);
    for (size_t i = 0; i < ld->n && ms->n_work < TW_METRICS_WORK_KINDS; i++) {
        if (ld->k[i].held < 0)
            continue;
        snprintf(ms->work[ms->n_work].kind, sizeof(ms->work[0].kind), "%s", ld->k[i].kind);
        ms->work[ms->n_work++].held = ld->k[i].held == 1;
    }
    pthread_mutex_unlock(&ld->lock);
}

bool tw_srv_work_mine(struct tw_server *srv, const char *kind)
{
    return tw_srv_leader_mine(srv->leader, kind);
}

enum tw_err tw_srv_leader_start(struct tw_server *srv, struct tw_error *err)
{
    struct tw_srv_leader *ld = calloc(1, sizeof(*ld));
    if (!ld)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    atomic_init(&ld->refs, 1);
    pthread_mutex_init(&ld->lock, NULL);
    snprintf(ld->db_path, sizeof(ld->db_path), "%s", srv->db_path);
    ld->quiet = !tw_store_location_is_pg(srv->db_path, strlen(srv->db_path));
    /* Opened now, so that a backend starting beside a running one says
     * at once which work is whose; a failure here is tried again at the
     * first ask (the server's own first handle opened already). */
    struct tw_error oerr = {0};
    enum tw_err rc = tw_store_open(ld->db_path, &ld->st, &oerr);
    if (rc != TW_OK)
        fail(ld, &oerr, rc);
    srv->leader = ld;
    return TW_OK;
}

struct tw_srv_leader *tw_srv_leader_ref(struct tw_srv_leader *ld)
{
    if (ld)
        atomic_fetch_add(&ld->refs, 1);
    return ld;
}

void tw_srv_leader_unref(struct tw_srv_leader *ld)
{
    if (!ld || atomic_fetch_sub(&ld->refs, 1) != 1)
        return;
    tw_store_close(ld->st); /* every lock of this backend released */
    pthread_mutex_destroy(&ld->lock);
    free(ld);
}
