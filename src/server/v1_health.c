/*
 * v1_health.c - GET /healthz and GET /metrics (no token: they carry no
 * figures of the fleet).
 */
#include "server/server_int.h"

#include "server/gate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long /metrics may reuse the store's counts when no report came. */
#define METRICS_STATS_TTL_S 5
/* How often the probe thread asks the store whether it takes writes
 * (tw_store_probe: SQLite writes and syncs a page beside the database,
 * PostgreSQL asks its server). */
#define HEALTH_PROBE_EVERY_MS 2000
/* A probe that has not ended for this long is a store that does not
 * answer (a database server that stopped answering keeps the probe
 * waiting inside libpq): /healthz says so rather than the last outcome. */
#define HEALTH_SILENT_MS (3 * HEALTH_PROBE_EVERY_MS)

/* One probe on the probe thread's own handle, its outcome kept (the
 * store's work is done without the lock: the writer's report of a failed
 * commit takes it too).  The handle is opened here when there is none (the
 * open at the start failed, or the last open did); a PostgreSQL handle
 * whose connection was lost connects again inside the probe.  A probe that
 * succeeds clears the writer's failed batch when no batch failed since the
 * probe began: the store takes writes again, and a backend whose /healthz
 * stayed 503 would get no report from haproxy to say so. */
static void probe_once(struct tw_server *srv)
{
    struct tw_error err = {0};
    enum tw_err rc = TW_OK;
    pthread_mutex_lock(&srv->health_lock);
    unsigned fail_seq = srv->commit_fail_seq;
    pthread_mutex_unlock(&srv->health_lock);
    if (!srv->health_st)
        rc = tw_store_open(srv->db_path, &srv->health_st, &err);
    if (rc == TW_OK)
        rc = tw_store_probe(srv->health_st, &err);
    char why[sizeof(srv->health_why)] = "";
    if (rc != TW_OK)
        snprintf(why, sizeof(why), "%s", err.msg[0] ? err.msg : tw_strerror(rc));
    pthread_mutex_lock(&srv->health_lock);
    srv->health_ok = rc == TW_OK;
    memcpy(srv->health_why, why, sizeof(why));
    srv->health_probed_ms = tw_srv_mono_ms(); /* when it ended */
    if (rc == TW_OK && srv->commit_fail_seq == fail_seq)
        atomic_store(&srv->commit_failed, false);
    pthread_mutex_unlock(&srv->health_lock);
}

static void *probe_main(void *arg)
{
    struct tw_server *srv = arg;
    pthread_mutex_lock(&srv->health_lock);
    while (!srv->health_stop) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_sec += HEALTH_PROBE_EVERY_MS / 1000;
        t.tv_nsec += (long)(HEALTH_PROBE_EVERY_MS % 1000) * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        while (!srv->health_stop &&
               pthread_cond_timedwait(&srv->health_cond, &srv->health_lock, &t) != ETIMEDOUT) {
        }
        if (srv->health_stop)
            break;
        /* While the writer commits, its commits are the probe: a write
         * and a sync of its own beside them every 2 s competed with the
         * writer's syncs for the disk (the ingest's p99 went from 33 to
         * 50 ms).  The probe writes only when the writer has been idle. */
        long long ok_ms = atomic_load(&srv->commit_ok_ms);
        if (ok_ms && !atomic_load(&srv->commit_failed) &&
            tw_srv_mono_ms() - ok_ms < HEALTH_PROBE_EVERY_MS) {
            srv->health_ok = true;
            srv->health_why[0] = '\0';
            srv->health_probed_ms = tw_srv_mono_ms();
            continue;
        }
        pthread_mutex_unlock(&srv->health_lock);
        probe_once(srv);
        pthread_mutex_lock(&srv->health_lock);
    }
    pthread_mutex_unlock(&srv->health_lock);
    return NULL;
}

enum tw_err tw_srv_health_start(struct tw_server *srv, struct tw_error *err)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int e = pthread_cond_init(&srv->health_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (e != 0)
        return tw_error_set(err, TW_ENOMEM, "can't start the store's write probe: %s",
                            strerror(e));
    /* The probe's handle, kept for the server's life (a failed open is
     * tried again at each probe, and /healthz says why meanwhile). */
    probe_once(srv);
    if ((e = pthread_create(&srv->health_thread, NULL, probe_main, srv)) != 0) {
        pthread_cond_destroy(&srv->health_cond);
        tw_store_close(srv->health_st);
        srv->health_st = NULL;
        return tw_error_set(err, TW_EIO, "can't start the store's write probe: %s",
                            strerror(e));
    }
    srv->health_running = true;
    return TW_OK;
}

void tw_srv_health_stop(struct tw_server *srv)
{
    if (!srv || !srv->health_running)
        return;
    pthread_mutex_lock(&srv->health_lock);
    srv->health_stop = true;
    pthread_cond_signal(&srv->health_cond);
    pthread_mutex_unlock(&srv->health_lock);
    pthread_join(srv->health_thread, NULL);
    pthread_cond_destroy(&srv->health_cond);
    srv->health_running = false;
    tw_store_close(srv->health_st);
    srv->health_st = NULL;
}

/* The store's health: false with WHY when it does not take writes (the
 * last probe failed, or the writer's last batch did), or when the probe
 * under way has not ended for HEALTH_SILENT_MS. */
static bool store_healthy(struct tw_server *srv, char *why, size_t whylen)
{
    pthread_mutex_lock(&srv->health_lock);
    bool ok = srv->health_ok;
    int64_t silent_ms = srv->health_probed_ms ? tw_srv_mono_ms() - srv->health_probed_ms : 0;
    if (silent_ms > HEALTH_SILENT_MS) {
        ok = false;
        snprintf(why, whylen,
                 "the store has not answered for %lld s (its probe, every %d s, is still "
                 "waiting): check that the database server is up and reachable",
                 (long long)(silent_ms / 1000), HEALTH_PROBE_EVERY_MS / 1000);
    } else if (!ok)
        snprintf(why, whylen, "%s", srv->health_why);
    else if (atomic_load(&srv->commit_failed)) {
        ok = false;
        snprintf(why, whylen, "the last commit of reports failed: %s", srv->commit_why);
    }
    pthread_mutex_unlock(&srv->health_lock);
    return ok;
}

void tw_v1_healthz(struct tw_req *rq)
{
    char why[600];
    if (store_healthy(rq->srv, why, sizeof(why))) {
        tw_req_json(rq, 200, json_pack("{s:s}", "status", "ok"));
        return;
    }
    char clean[600];
    tw_srv_clean_text(why, clean, sizeof(clean));
    char msg[700];
    snprintf(msg, sizeof(msg), "the store does not take writes: %s", clean);
    tw_req_json(rq, 503,
                json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:s}}", "status", "degraded", "store",
                          "state", "degraded", "reason", clean, "error", "code",
                          "store_degraded", "message", msg));
    if (rq->resp)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
}

void tw_v1_metrics(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    struct tw_metrics_store ms = {-1, -1, -1, -1, -1, -1, -1, -1, -1, false, -1, false, 0, 0,
                                  false, 0, 0, 0, {{"", false}}};
    struct tw_error err = {0};
    /* The counts are whole-table scans: they are taken again only after
     * the writer stored a new report, or after METRICS_STATS_TTL_S (the
     * database size also moves with other writers), so a scraper polling
     * without a token can't make the server count a large table on every
     * request. */
    struct tw_store_stats ss;
    bool have = false;
    uint64_t commits = tw_ingest_commits(srv->ingest);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&srv->stats_lock);
    if (srv->stats_valid && srv->stats_commits == commits &&
        now.tv_sec - srv->stats_at < METRICS_STATS_TTL_S) {
        ss = srv->stats;
        have = true;
    }
    pthread_mutex_unlock(&srv->stats_lock);
    if (!have) {
        struct tw_store *st = tw_srv_store_get(srv, &err);
        if (st && tw_store_stats(st, &ss, &err) == TW_OK) {
            have = true;
            pthread_mutex_lock(&srv->stats_lock);
            srv->stats = ss;
            srv->stats_commits = commits;
            srv->stats_at = now.tv_sec;
            srv->stats_valid = true;
            pthread_mutex_unlock(&srv->stats_lock);
        }
        tw_srv_store_put(srv, st);
    }
    if (have) {
        ms.reports = ss.reports;
        ms.vms = ss.vms;
        ms.disks = ss.disks;
        ms.results = ss.results;
        ms.db_bytes = ss.db_bytes;
    }
    ms.queue_depth = (int64_t)tw_ingest_depth(srv->ingest);
    char why[600];
    ms.store_writable = store_healthy(srv, why, sizeof(why)) ? 1 : 0;
    ms.connections_open = (int64_t)tw_gate_open_connections(srv->gate);
    ms.connections_refused = (int64_t)tw_gate_refused(srv->gate);
    ms.drift_disks = tw_srv_drift_disks(srv);
    ms.drift_known = ms.drift_disks >= 0;
    ms.drift_job = tw_srv_drift_stats(srv, &ms.drift_last_success_s, &ms.drift_errors);
    ms.sync_known = tw_srv_sync_stats(srv, &ms.sync_last_success_s, &ms.sync_errors);
    tw_srv_leader_held(srv->leader, &ms);
    /* The fleet's gauges (verdicts, SKUs, silent agents) are taken at most
     * every TW_METRICS_FLEET_TTL_S (metrics.h) and kept between scrapes. */
    if (tw_metrics_fleet_due(srv->metrics, now.tv_sec)) {
        struct tw_svc_compliance_ctx cx;
        tw_srv_compliance_ctx(srv, &cx);
        struct tw_error ferr = {0};
        struct tw_store *fst = tw_srv_store_get(srv, &ferr);
        tw_metrics_fleet_refresh(srv->metrics, fst, &cx, now.tv_sec, (int64_t)time(NULL) * 1000,
                                 &ferr);
        tw_srv_store_put(srv, fst);
    }
    struct tw_buf out;
    tw_buf_init(&out, 4u << 20);
    if (tw_metrics_render(srv->metrics, &ms, &out) != TW_OK || !out.data) {
        tw_buf_cleanup(&out);
        tw_req_error(rq, 500, "internal", "out of memory rendering the metrics");
        return;
    }
    tw_req_body(rq, 200, "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
}

