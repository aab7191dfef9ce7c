/*
 * metrics.h - the backend's counters in the Prometheus text format
 * (version 0.0.4): requests by route and status, a latency histogram per
 * route, ingest batches, and the store's gauges.
 *
 * Counting is lock-free (relaxed atomics), so every request can count
 * itself; rendering reads the counters as they are at that moment.
 */
#ifndef TW_SERVER_METRICS_H
#define TW_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

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

/* Store figures for the gauges; negative when unknown (left out). */
struct tw_metrics_store {
    int64_t reports, vms, disks, results, db_bytes;
    int64_t queue_depth;
};

/* Appends the whole exposition to OUT; TW_ENOMEM when it does not fit. */
enum tw_err tw_metrics_render(const struct tw_metrics *m, const struct tw_metrics_store *st,
                              struct tw_buf *out);

#endif
