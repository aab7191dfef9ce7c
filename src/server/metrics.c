/*
 * metrics.c - counters and the Prometheus text exposition, the fleet's
 * gauges (taken from the store at most once a minute) and the process_*
 * metrics (from /proc).
 */
#include "server/metrics.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

    /* The fleet's figures: REFRESH_LOCK lets one refresh run at a time
     * (held while the store is read), FLEET_LOCK guards what follows (held
     * only to copy in or render). */
    pthread_mutex_t refresh_lock, fleet_lock;
    bool fleet_have;                        /* figures were taken once */
    int64_t fleet_at_mono;                  /* last tried (CLOCK_MONOTONIC s); -1 never */
    int64_t fleet_ok_mono;                  /* last taken */
    struct tw_svc_compliance_summary fleet; /* verdicts by disk SKU */
    struct tw_store_fleet_counts counts;    /* VMs by size, disks by SKU, silent VMs */
    atomic_uint_fast64_t fleet_failures;    /* refreshes that failed */

    /* The process's start (seconds since 1970), read at tw_metrics_new; -1 unknown. */
    double start_time;
};

static double process_start(void);

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
    m->fleet_at_mono = -1;
    m->start_time = process_start();
    if (pthread_mutex_init(&m->refresh_lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    if (pthread_mutex_init(&m->fleet_lock, NULL) != 0) {
        pthread_mutex_destroy(&m->refresh_lock);
        free(m);
        return NULL;
    }
    return m;
}

void tw_metrics_free(struct tw_metrics *m)
{
    if (!m)
        return;
    tw_store_fleet_counts_free(&m->counts);
    pthread_mutex_destroy(&m->refresh_lock);
    pthread_mutex_destroy(&m->fleet_lock);
    free(m);
}

/* ---- the fleet's figures ---- */

static bool fleet_due_locked(const struct tw_metrics *m, int64_t now_mono_s)
{
    return m->fleet_at_mono < 0 || now_mono_s - m->fleet_at_mono >= TW_METRICS_FLEET_TTL_S ||
           now_mono_s < m->fleet_at_mono;
}

bool tw_metrics_fleet_due(struct tw_metrics *m, int64_t now_mono_s)
{
    pthread_mutex_lock(&m->fleet_lock);
    bool due = fleet_due_locked(m, now_mono_s);
    pthread_mutex_unlock(&m->fleet_lock);
    return due;
}

enum tw_err tw_metrics_fleet_refresh(struct tw_metrics *m, struct tw_store *st,
                                     const struct tw_svc_compliance_ctx *ctx,
                                     int64_t now_mono_s, int64_t now_ms, struct tw_error *err)
{
    pthread_mutex_lock(&m->refresh_lock);
    if (!tw_metrics_fleet_due(m, now_mono_s)) {
        pthread_mutex_unlock(&m->refresh_lock);
        return TW_OK;
    }
    enum tw_err rc;
    struct tw_svc_compliance_summary *sum = malloc(sizeof(*sum));
    struct tw_store_fleet_counts counts = {0};
    if (!sum)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory taking the fleet's figures");
    else if (!st)
        rc = tw_error_set(err, TW_EIO, "no store handle for the fleet's figures");
    else
        rc = tw_svc_compliance_summary(st, ctx, sum, err);
    if (rc == TW_OK)
        rc = tw_store_fleet_counts(st, now_ms - (int64_t)TW_METRICS_SILENT_S * 1000, &counts,
                                   err);
    pthread_mutex_lock(&m->fleet_lock);
    /* A failure is tried again at the next scrape's TTL, not at every
     * scrape: a store that fails is not asked to judge the fleet on each. */
    m->fleet_at_mono = now_mono_s;
    if (rc == TW_OK) {
        m->fleet = *sum;
        tw_store_fleet_counts_free(&m->counts);
        m->counts = counts;
        m->fleet_have = true;
        m->fleet_ok_mono = now_mono_s;
    }
    pthread_mutex_unlock(&m->fleet_lock);
    if (rc != TW_OK) {
        tw_store_fleet_counts_free(&counts);
        atomic_fetch_add_explicit(&m->fleet_failures, 1, memory_order_relaxed);
    }
    free(sum);
    pthread_mutex_unlock(&m->refresh_lock);
    return rc;
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

/* ---- the process ---- */

/* The next space-separated field of [*P, END) as an unsigned number. */
static bool next_u64(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end || !isdigit((unsigned char)*s))
        return false;
    uint64_t x = 0;
    for (; s < end && isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    if (s < end && *s != ' ' && *s != '\n')
        return false;
    *p = s;
    *v = x;
    return true;
}

/* Skips one space-separated field (any text, e.g. a negative number). */
static bool skip_field(const char **p, const char *end)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end || *s == '\n')
        return false;
    while (s < end && *s != ' ' && *s != '\n')
        s++;
    *p = s;
    return true;
}

enum tw_err tw_proc_stat_parse(const char *buf, size_t len, struct tw_proc_stat *out,
                               struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    const char *end = buf + len;
    const char *close = NULL;
    for (const char *s = buf; s < end; s++)
        if (*s == ')')
            close = s;
    if (!close || !memchr(buf, '(', (size_t)(close - buf)))
        return tw_error_set(err, TW_EPARSE, "/proc/self/stat: no \"(command)\" field");
    /* Fields from 3 (state) on; 14 utime, 15 stime, 22 starttime, 23
     * vsize, 24 rss (proc(5)). */
    const char *p = close + 1;
    uint64_t v = 0;
    for (int field = 3; field <= 24; field++) {
        bool ok;
        switch (field) {
        case 14: ok = next_u64(&p, end, &out->utime_ticks); break;
        case 15: ok = next_u64(&p, end, &out->stime_ticks); break;
        case 22: ok = next_u64(&p, end, &out->start_ticks); break;
        case 23: ok = next_u64(&p, end, &out->vsize_bytes); break;
        case 24:
            ok = next_u64(&p, end, &v) && v <= INT64_MAX;
            out->rss_pages = (int64_t)v;
            break;
        default: ok = skip_field(&p, end); break;
        }
        if (!ok)
            return tw_error_set(err, TW_EPARSE,
                                "/proc/self/stat: field %d is missing or not a number", field);
    }
    return TW_OK;
}

enum tw_err tw_proc_btime_parse(const char *buf, size_t len, int64_t *btime,
                                struct tw_error *err)
{
    *btime = 0;
    const char *end = buf + len;
    for (const char *line = buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *eol = nl ? nl : end;
        if (eol - line > 6 && memcmp(line, "btime ", 6) == 0) {
            const char *p = line + 5;
            uint64_t v;
            if (!next_u64(&p, eol, &v) || p != eol || v > INT64_MAX)
                return tw_error_set(err, TW_EPARSE, "/proc/stat: btime is not a number");
            *btime = (int64_t)v;
            return TW_OK;
        }
        line = eol + 1;
    }
    return tw_error_set(err, TW_EPARSE, "/proc/stat: no btime line");
}

/* Reads at most CAP - 1 bytes of PATH into BUF; the length, -1 on failure. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The process's start, seconds since 1970 (boot time + its start after
 * boot); -1 when /proc does not say. */
static double process_start(void)
{
    char stat[1024];
    long ticks = sysconf(_SC_CLK_TCK);
    ssize_t n = read_small("/proc/self/stat", stat, sizeof(stat));
    struct tw_proc_stat ps;
    if (n <= 0 || ticks <= 0 || tw_proc_stat_parse(stat, (size_t)n, &ps, NULL) != TW_OK)
        return -1;
    /* /proc/stat's first lines are one per CPU and "intr" (thousands of
     * numbers); btime comes after them. */
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    n = read_small("/proc/stat", buf, cap);
    int64_t btime;
    double t = -1;
    if (n > 0 && tw_proc_btime_parse(buf, (size_t)n, &btime, NULL) == TW_OK)
        t = (double)btime + (double)ps.start_ticks / (double)ticks;
    free(buf);
    return t;
}

/* Open file descriptors: the entries of /proc/self/fd but the one reading it. */
static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    char self[16];
    snprintf(self, sizeof(self), "%d", dirfd(d));
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, self) != 0)
            n++;
    closedir(d);
    return n;
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
        if (tw_buf_printf(out, __VA_ARGS__) != TW_OK)                                              \
            return TW_ENOMEM;                                                                      \
    } while (0)

/* The fleet's gauges, when they were taken (under FLEET_LOCK). */
static enum tw_err render_fleet_locked(const struct tw_metrics *m, struct tw_buf *out)
{
    PUT("# HELP tierwise_fleet_figures_refresh_failures_total Refreshes of the fleet's "
        "figures that failed (the figures before are kept).\n"
        "# TYPE tierwise_fleet_figures_refresh_failures_total counter\n"
        "tierwise_fleet_figures_refresh_failures_total %llu\n",
        (unsigned long long)atomic_load(&m->fleet_failures));
    if (!m->fleet_have)
        return TW_OK;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t age = (int64_t)now.tv_sec - m->fleet_ok_mono;
    PUT("# HELP tierwise_fleet_figures_age_seconds How old the fleet's figures below are "
        "(taken at most every %d s).\n"
        "# TYPE tierwise_fleet_figures_age_seconds gauge\n"
        "tierwise_fleet_figures_age_seconds %lld\n",
        TW_METRICS_FLEET_TTL_S, (long long)(age < 0 ? 0 : age));
    const struct tw_svc_compliance_summary *f = &m->fleet;
    PUT("# HELP tierwise_disk_verdicts Verdicts of the fleet's latest results, by verdict and "
        "disk SKU, each counted once for every disk it covers.\n"
        "# TYPE tierwise_disk_verdicts gauge\n");
    for (size_t i = 0; i < f->n_skus; i++) {
        char sku[80];
        escape_label(f->skus[i].sku, sku, sizeof(sku));
        for (int k = TW_VERDICT_DELIVERS; k <= TW_VERDICT_INCONCLUSIVE; k++)
            PUT("tierwise_disk_verdicts{verdict=\"%s\",sku=\"%s\"} %zu\n",
                tw_verdict_name((enum tw_verdict_kind)k), sku, f->skus[i].count[k]);
    }
    PUT("# HELP tierwise_vms_judged VMs whose latest results were judged.\n"
        "# TYPE tierwise_vms_judged gauge\ntierwise_vms_judged %zu\n"
        "# HELP tierwise_verdict_errors Results or VMs that could not be judged.\n"
        "# TYPE tierwise_verdict_errors gauge\ntierwise_verdict_errors %zu\n",
        f->vms, f->errors);
    const struct tw_store_fleet_counts *c = &m->counts;
    PUT("# HELP tierwise_vms_by_size VMs by VM size.\n# TYPE tierwise_vms_by_size gauge\n");
    for (size_t i = 0; i < c->n_vm_sizes; i++) {
        char size[160];
        escape_label(c->vm_sizes[i].key[0] ? c->vm_sizes[i].key : "unknown", size, sizeof(size));
        PUT("tierwise_vms_by_size{size=\"%s\"} %lld\n", size, (long long)c->vm_sizes[i].n);
    }
    PUT("# HELP tierwise_disks_by_sku Attached disks by SKU and tier.\n"
        "# TYPE tierwise_disks_by_sku gauge\n");
    for (size_t i = 0; i < c->n_disk_skus; i++) {
        char sku[160], tier[48];
        escape_label(c->disk_skus[i].key[0] ? c->disk_skus[i].key : "unknown", sku, sizeof(sku));
        escape_label(c->disk_skus[i].tier[0] ? c->disk_skus[i].tier : "unknown", tier,
                     sizeof(tier));
        PUT("tierwise_disks_by_sku{sku=\"%s\",tier=\"%s\"} %lld\n", sku, tier,
            (long long)c->disk_skus[i].n);
    }
    PUT("# HELP tierwise_agents_not_heard_from VMs whose newest report was received more "
        "than 2 days ago.\n"
        "# TYPE tierwise_agents_not_heard_from gauge\ntierwise_agents_not_heard_from %lld\n",
        (long long)c->vms_silent);
    return TW_OK;
}

/* The standard process_* metrics, from /proc (left out where it does not
 * answer). */
static enum tw_err render_process(const struct tw_metrics *m, struct tw_buf *out)
{
    char buf[1024];
    long ticks = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    ssize_t n = read_small("/proc/self/stat", buf, sizeof(buf));
    struct tw_proc_stat ps;
    if (n > 0 && ticks > 0 && page > 0 && tw_proc_stat_parse(buf, (size_t)n, &ps, NULL) == TW_OK) {
        PUT("# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
            "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
            (double)(ps.utime_ticks + ps.stime_ticks) / (double)ticks);
        PUT("# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %lld\n",
            (long long)ps.rss_pages * page);
        PUT("# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
            "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n",
            (unsigned long long)ps.vsize_bytes);
        if (m->start_time > 0)
            PUT("# HELP process_start_time_seconds Start time of the process since unix epoch "
                "in seconds.\n"
                "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
                m->start_time);
    }
    long fds = open_fds();
    if (fds >= 0)
        PUT("# HELP process_open_fds Number of open file descriptors.\n"
            "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n", fds);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        PUT("# HELP process_max_fds Maximum number of open file descriptors.\n"
            "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n",
            (unsigned long long)rl.rlim_cur);
    return TW_OK;
}

enum tw_err tw_metrics_render(struct tw_metrics *m, const struct tw_metrics_store *st,
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
        if (st->store_writable >= 0)
            PUT("# HELP tierwise_store_writable Whether the store takes writes (0: degraded, "
                "see /healthz).\n"
                "# TYPE tierwise_store_writable gauge\ntierwise_store_writable %lld\n",
                (long long)st->store_writable);
        if (st->connections_open >= 0)
            PUT("# HELP tierwise_connections_open Connections open (waiting for their head, "
                "relayed or served).\n"
                "# TYPE tierwise_connections_open gauge\ntierwise_connections_open %lld\n",
                (long long)st->connections_open);
        if (st->connections_refused >= 0)
            PUT("# HELP tierwise_connections_refused_total Connections answered by the gate "
                "and closed: over a connection limit, a head late or refused.\n"
                "# TYPE tierwise_connections_refused_total counter\n"
                "tierwise_connections_refused_total %lld\n",
                (long long)st->connections_refused);
        if (st->drift_known)
            PUT("# HELP tierwise_drift_disks Disks below the SKU their policy requires while "
                "their VM runs, at the drift job's last run.\n"
                "# TYPE tierwise_drift_disks gauge\ntierwise_drift_disks %lld\n",
                (long long)st->drift_disks);
        if (st->drift_job)
            PUT("# HELP tierwise_drift_last_success_timestamp_seconds When the drift job's last "
                "run succeeded (Unix seconds; 0: none yet).\n"
                "# TYPE tierwise_drift_last_success_timestamp_seconds gauge\n"
                "tierwise_drift_last_success_timestamp_seconds %lld\n"
                "# HELP tierwise_drift_errors_total Drift runs that failed (tierwise_drift_disks "
                "keeps the last run's count; each is tried again at the next --drift-interval).\n"
                "# TYPE tierwise_drift_errors_total counter\ntierwise_drift_errors_total %lld\n",
                (long long)st->drift_last_success_s, (long long)st->drift_errors);
        if (st->sync_known)
            PUT("# HELP tierwise_sync_last_success_timestamp_seconds When the last sync from ARM "
                "succeeded (Unix seconds; 0: none yet).\n"
                "# TYPE tierwise_sync_last_success_timestamp_seconds gauge\n"
                "tierwise_sync_last_success_timestamp_seconds %lld\n"
                "# HELP tierwise_sync_errors_total Syncs from ARM that failed (each is tried "
                "again at the next --sync-interval).\n"
                "# TYPE tierwise_sync_errors_total counter\ntierwise_sync_errors_total %lld\n",
                (long long)st->sync_last_success_s, (long long)st->sync_errors);
        if (st->n_work)
            PUT("# HELP tierwise_periodic_work_held Whether this backend runs the periodic "
                "work of a kind now (1), or another backend on its database does (0).\n"
                "# TYPE tierwise_periodic_work_held gauge\n");
        for (size_t i = 0; i < st->n_work && i < TW_METRICS_WORK_KINDS; i++)
            PUT("tierwise_periodic_work_held{kind=\"%s\"} %d\n", st->work[i].kind,
                st->work[i].held ? 1 : 0);
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
    pthread_mutex_lock(&m->fleet_lock);
    enum tw_err rc = render_fleet_locked(m, out);
    pthread_mutex_unlock(&m->fleet_lock);
    if (rc != TW_OK)
        return rc;
    return render_process(m, out);
}
