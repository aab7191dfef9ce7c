/*
 * v1_health.c - GET /healthz and GET /metrics (no token: they carry no
 * figures of the fleet).
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long /metrics may reuse the store's counts when no report came. */
#define METRICS_STATS_TTL_S 5

void tw_v1_healthz(struct tw_req *rq)
{
    tw_req_json(rq, 200, json_pack("{s:s}", "status", "ok"));
}

void tw_v1_metrics(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    struct tw_metrics_store ms = {-1, -1, -1, -1, -1, -1};
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
    /* The fleet's gauges (verdicts, SKUs, silent agents) are taken at most
     * every TW_METRICS_FLEET_TTL_S (metrics.h) and kept between scrapes. */
    if (tw_metrics_fleet_due(srv->metrics, now.tv_sec)) {
        struct tw_svc_compliance_ctx cx = {&srv->cat, &srv->caps};
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

