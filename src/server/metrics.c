/*
 * metrics.c - counters and the Prometheus text exposition.
 */
#include "server/metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double tw_metrics_buckets[TW_METRICS_N_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

/* The statuses the server answers with; anything else counts as "other". */
static const unsigned statuses[] = {200, 201, 204, 304, 400, 401, 403, 404,
                                    405, 409, 413, 415, 500, 502, 503};
#define N_STATUS (sizeof(statuses) / sizeof(statuses[0]) + 1)

struct route_counters {
    char label[96];
    atomic_uint_fast64_t by_status[N_STATUS];
    atomic_uint_fast64_t buckets[TW_METRICS_N_BUCKETS + 1]; /* not cumulative; last is +Inf */
    atomic_uint_fast64_t sum_us;                            /* total latency, microseconds */
};

struct tw_metrics {
    size_t n_routes;
    struct route_counters routes[TW_METRICS_MAX_ROUTES];
    atomic_uint_fast64_t batches, batch_reports, stored, repeat, failed;
    atomic_uint_fast64_t batch_hist[8]; /* batch sizes: 1, 2-3, 4-7, ..., 64-127, 128+ */
};

struct tw_metrics *tw_metrics_new(const char *const *labels, size_t n_routes)
{
    if (n_routes > TW_METRICS_MAX_ROUTES)
        return NULL;
    struct tw_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->n_routes = n_routes;
    for (size_t i = 0; i < n_routes; i++)
        snprintf(m->routes[i].label, sizeof(m->routes[i].label), "%s", labels[i]);
    return m;
}

void tw_metrics_free(struct tw_metrics *m)
{
    free(m);
}

static size_t status_index(unsigned status)
{
    for (size_t i = 0; i + 1 < N_STATUS; i++)
        if (statuses[i] == status)
            return i;
    return N_STATUS - 1;
}

void tw_metrics_observe(struct tw_metrics *m, size_t route, unsigned status, double seconds)
{
    if (!m || route >= m->n_routes)
        return;
    struct route_counters *r = &m->routes[route];
    atomic_fetch_add_explicit(&r->by_status[status_index(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < TW_METRICS_N_BUCKETS && seconds > tw_metrics_buckets[b])
        b++;
    atomic_fetch_add_explicit(&r->buckets[b], 1, memory_order_relaxed);
    if (seconds < 0)
        seconds = 0;
    atomic_fetch_add_explicit(&r->sum_us, (uint_fast64_t)(seconds * 1e6 + 0.5),
                              memory_order_relaxed);
}

void tw_metrics_batch(struct tw_metrics *m, size_t n, size_t stored, size_t repeat, size_t failed)
{
    if (!m || n == 0)
        return;
    atomic_fetch_add_explicit(&m->batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->batch_reports, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->stored, stored, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->repeat, repeat, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->failed, failed, memory_order_relaxed);
    size_t b = 0;
    while (b < 7 && n >= ((size_t)2 << b))
        b++;
    atomic_fetch_add_explicit(&m->batch_hist[b], 1, memory_order_relaxed);
}

uint64_t tw_metrics_requests(const struct tw_metrics *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n_routes; i++)
        for (size_t s = 0; s < N_STATUS; s++)
            n += atomic_load_explicit(&m->routes[i].by_status[s], memory_order_relaxed);
    return n;
}

void tw_metrics_ingest_counts(const struct tw_metrics *m, uint64_t *stored, uint64_t *repeat)
{
    *stored = atomic_load_explicit(&m->stored, memory_order_relaxed);
    *repeat = atomic_load_explicit(&m->repeat, memory_order_relaxed);
}

static enum tw_err put(struct tw_buf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static enum tw_err put(struct tw_buf *out, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(line))
        return TW_ENOMEM;
    return tw_buf_append(out, line, (size_t)n);
}

/* A label value with \, " and newline escaped as the format asks. */
static void escape_label(const char *s, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *s && o + 3 < outlen; s++) {
        if (*s == '\\' || *s == '"') {
            out[o++] = '\\';
            out[o++] = *s;
        } else if (*s == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
}

#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (put(out, __VA_ARGS__) != TW_OK)                                                        \
            return TW_ENOMEM;                                                                      \
    } while (0)

enum tw_err tw_metrics_render(const struct tw_metrics *m, const struct tw_metrics_store *st,
                              struct tw_buf *out)
{
    PUT("# HELP tierwise_build_info The running tierwise version.\n"
        "# TYPE tierwise_build_info gauge\ntierwise_build_info{version=\"%s\"} 1\n",
        TW_VERSION);
    PUT("# HELP tierwise_http_requests_total HTTP requests answered, by route and status.\n"
        "# TYPE tierwise_http_requests_total counter\n");
    for (size_t i = 0; i < m->n_routes; i++) {
        char label[200];
        escape_label(m->routes[i].label, label, sizeof(label));
        for (size_t s = 0; s < N_STATUS; s++) {
            uint64_t v = atomic_load_explicit(&m->routes[i].by_status[s], memory_order_relaxed);
            if (!v)
                continue;
            if (s + 1 < N_STATUS)
                PUT("tierwise_http_requests_total{route=\"%s\",status=\"%u\"} %llu\n", label,
                    statuses[s], (unsigned long long)v);
            else
                PUT("tierwise_http_requests_total{route=\"%s\",status=\"other\"} %llu\n", label,
                    (unsigned long long)v);
        }
    }
    PUT("# HELP tierwise_http_request_duration_seconds Time from a request's first byte "
        "to its answer, by route.\n"
        "# TYPE tierwise_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i < m->n_routes; i++) {
        const struct route_counters *r = &m->routes[i];
        uint64_t counts[TW_METRICS_N_BUCKETS + 1], total = 0;
        for (size_t b = 0; b <= TW_METRICS_N_BUCKETS; b++) {
            counts[b] = atomic_load_explicit(&r->buckets[b], memory_order_relaxed);
            total += counts[b];
        }
        if (!total)
            continue;
        char label[200];
        escape_label(r->label, label, sizeof(label));
        uint64_t cum = 0;
        for (size_t b = 0; b < TW_METRICS_N_BUCKETS; b++) {
            cum += counts[b];
            PUT("tierwise_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                label, tw_metrics_buckets[b], (unsigned long long)cum);
        }
        PUT("tierwise_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n", label,
            (unsigned long long)total);
        PUT("tierwise_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", label,
            (double)atomic_load_explicit(&r->sum_us, memory_order_relaxed) / 1e6);
        PUT("tierwise_http_request_duration_seconds_count{route=\"%s\"} %llu\n", label,
            (unsigned long long)total);
    }
    PUT("# HELP tierwise_ingest_batches_total Commits of queued reports by the writer.\n"
        "# TYPE tierwise_ingest_batches_total counter\ntierwise_ingest_batches_total %llu\n",
        (unsigned long long)atomic_load(&m->batches));
    PUT("# HELP tierwise_ingest_reports_total Reports through the writer, by outcome.\n"
        "# TYPE tierwise_ingest_reports_total counter\n"
        "tierwise_ingest_reports_total{outcome=\"stored\"} %llu\n"
        "tierwise_ingest_reports_total{outcome=\"repeat\"} %llu\n"
        "tierwise_ingest_reports_total{outcome=\"failed\"} %llu\n",
        (unsigned long long)atomic_load(&m->stored), (unsigned long long)atomic_load(&m->repeat),
        (unsigned long long)atomic_load(&m->failed));
    PUT("# HELP tierwise_ingest_batch_size Reports per commit.\n"
        "# TYPE tierwise_ingest_batch_size histogram\n");
    uint64_t cum = 0;
    for (size_t b = 0; b < 7; b++) {
        cum += atomic_load(&m->batch_hist[b]);
        PUT("tierwise_ingest_batch_size_bucket{le=\"%zu\"} %llu\n", ((size_t)2 << b) - 1,
            (unsigned long long)cum);
    }
    cum += atomic_load(&m->batch_hist[7]);
    PUT("tierwise_ingest_batch_size_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    PUT("tierwise_ingest_batch_size_sum %llu\ntierwise_ingest_batch_size_count %llu\n",
        (unsigned long long)atomic_load(&m->batch_reports), (unsigned long long)cum);
    if (st) {
        if (st->queue_depth >= 0)
            PUT("# HELP tierwise_ingest_queue_depth Reports waiting for the writer.\n"
                "# TYPE tierwise_ingest_queue_depth gauge\ntierwise_ingest_queue_depth %lld\n",
                (long long)st->queue_depth);
        const struct {
            const char *name, *help;
            int64_t v;
        } g[] = {
            {"tierwise_reports_stored", "Reports in the database.", st->reports},
            {"tierwise_vms", "VMs in the database.", st->vms},
            {"tierwise_disks", "Disks in the database.", st->disks},
            {"tierwise_results", "Bench results in the database.", st->results},
            {"tierwise_database_size_bytes", "Size of the SQLite database (pages x page size).",
             st->db_bytes},
        };
        for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
            if (g[i].v >= 0)
                PUT("# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", g[i].name, g[i].help, g[i].name,
                    g[i].name, (long long)g[i].v);
    }
    return TW_OK;
}
