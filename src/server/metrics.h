/*
 * metrics.h - the backend's counters in the Prometheus text format
 * (version 0.0.4): requests by route and status, a latency histogram per
 * route, ingest batches, the store's gauges, the fleet's gauges (verdicts
 * by disk SKU, VMs by size, disks by SKU and tier, agents not heard from)
 * and the standard process_* metrics of the process.
 *
 * Counting is lock-free (relaxed atomics), so every request can count
 * itself; rendering reads the counters as they are at that moment.  The
 * fleet's figures are taken from the store at most once a minute
 * (tw_metrics_fleet_due / tw_metrics_fleet_refresh) and kept.
 */
#ifndef TW_SERVER_METRICS_H
#define TW_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "service/compliance.h"
#include "store/store.h"

#define TW_METRICS_MAX_ROUTES 40
#define TW_METRICS_N_BUCKETS 14

/* Upper bounds of the latency buckets, in seconds (+Inf follows). */
extern const double tw_metrics_buckets[TW_METRICS_N_BUCKETS];

struct tw_metrics;

/* Counters for N_ROUTES routes named by LABELS (copied; "GET /api/v1/vms",
 * at most TW_METRICS_MAX_ROUTES); NULL when out of memory. */
struct tw_metrics *tw_metrics_new(const char *const *labels, size_t n_routes);
void tw_metrics_free(struct tw_metrics *m);

/* Counts one answered request on ROUTE (an index below n_routes) with HTTP
 * STATUS that took SECONDS. */
void tw_metrics_observe(struct tw_metrics *m, size_t route, unsigned status, double seconds);

/* Counts one ingest batch of N reports, with how many were stored, were
 * repeats and failed. */
void tw_metrics_batch(struct tw_metrics *m, size_t n, size_t stored, size_t repeat, size_t failed);

/* Requests counted so far (all routes, all statuses). */
uint64_t tw_metrics_requests(const struct tw_metrics *m);

/* Reports the writer stored (new ids) and found repeated so far. */
void tw_metrics_ingest_counts(const struct tw_metrics *m, uint64_t *stored, uint64_t *repeat);

#define TW_METRICS_WORK_KINDS 12
/* Store figures for the gauges; negative when unknown (left out). */
struct tw_metrics_store {
    int64_t reports, vms, disks, results, db_bytes;
    int64_t queue_depth;
    int64_t store_writable; /* 1, 0 (the store is degraded), negative: unknown (left out) */
    int64_t connections_open, connections_refused; /* the gate's; negative: left out */
    bool drift_known;       /* the drift job has run: DRIFT_DISKS is its last count */
    int64_t drift_disks;
    bool sync_known;        /* serve --sync runs: the two below are its */
    int64_t sync_last_success_s; /* Unix seconds of the last sync that succeeded; 0 none yet */
    int64_t sync_errors;    /* syncs that failed since the start */
    bool drift_job;         /* a drift job runs: the two below are its */
    int64_t drift_last_success_s; /* Unix seconds of its last run that succeeded; 0 none yet */
    int64_t drift_errors;   /* its runs that failed since the start */
    /* the periodic work this backend has asked for (leader.c): whether it
     * runs each kind now; N_WORK 0: none asked yet (left out) */
    size_t n_work;
    struct {
        char kind[16];
        bool held;
    } work[TW_METRICS_WORK_KINDS];
};

/* Appends the whole exposition to OUT (the fleet's gauges once taken, and
 * the process_* metrics where /proc answers); TW_ENOMEM when it does not
 * fit. */
enum tw_err tw_metrics_render(struct tw_metrics *m, const struct tw_metrics_store *st,
                              struct tw_buf *out);

/* ---- the fleet's gauges ---- */

/* How long the fleet's figures are kept: judging the fleet costs about a
 * second on a large one, and a scraper polls every 15 to 60 s. */
#define TW_METRICS_FLEET_TTL_S 60
/* An agent not heard from for this long counts as silent. */
#define TW_METRICS_SILENT_S (2 * 86400)

/* Whether the fleet's figures were never taken, or were taken
 * TW_METRICS_FLEET_TTL_S or more before NOW_MONO_S (CLOCK_MONOTONIC). */
bool tw_metrics_fleet_due(struct tw_metrics *m, int64_t now_mono_s);
/* Takes the fleet's figures from ST (NULL: the store could not be had):
 * the compliance summary under CTX and the store's counts, with VMs silent
 * since NOW_MS - TW_METRICS_SILENT_S (NOW_MS: the system clock, ms since
 * 1970).  One refresh runs at a time; one that finds the figures fresh
 * (taken by another meanwhile) does nothing.  On an error the figures
 * taken before are kept (their age says how old), the failure is counted
 * and returned with ERR. */
enum tw_err tw_metrics_fleet_refresh(struct tw_metrics *m, struct tw_store *st,
                                     const struct tw_svc_compliance_ctx *ctx,
                                     int64_t now_mono_s, int64_t now_ms, struct tw_error *err);

/* ---- the process ---- */

/* What /proc/self/stat says of the process. */
struct tw_proc_stat {
    uint64_t utime_ticks, stime_ticks; /* CPU time in clock ticks */
    uint64_t start_ticks;              /* start, in ticks after boot */
    uint64_t vsize_bytes;              /* virtual memory */
    int64_t rss_pages;                 /* resident set, in pages */
};
/* Reads LEN bytes of /proc/PID/stat ("pid (comm) state ppid ..."; comm may
 * hold spaces and parentheses: fields are counted from its last ')').
 * TW_EPARSE with ERR naming the field when it is not such a line. */
enum tw_err tw_proc_stat_parse(const char *buf, size_t len, struct tw_proc_stat *out,
                               struct tw_error *err);
/* The "btime N" line of LEN bytes of /proc/stat: the boot time, seconds
 * since 1970.  TW_EPARSE when there is none or it is no number. */
enum tw_err tw_proc_btime_parse(const char *buf, size_t len, int64_t *btime,
                                struct tw_error *err);

#endif
