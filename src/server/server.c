/*
 * server.c - the daemon: options, listening, start and the graceful stop.
 * The rest of the server is in answer.c (answers), pool.c (store
 * handles), authn.c (tokens), request.c (the request lifecycle), api.c
 * (routes) and the v1_*.c handlers.
 */
#include "server/server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd/reqctx.h"
#include "server/gate.h"
#include "server/static.h"

/* Descriptors kept for what is not a connection: the store's handles
 * (database, WAL, shared memory each), the daemons' epoll and wake-up
 * descriptors, the dashboard's files being sent, the worker's fetches. */
#define FD_RESERVE(srv) (128u + 4u * (unsigned)(srv)->pool_max + 4u * (srv)->threads)

int64_t tw_srv_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- start and stop ---- */

enum tw_err tw_server_parse_listen(const char *spec, char *host, size_t hostlen, unsigned *port,
                                   struct tw_error *err)
{
    *port = 8080;
    if (!spec || !*spec)
        return tw_error_set(err, TW_EINVAL,
                            "--listen is empty; give HOST:PORT, e.g. "
                            "127.0.0.1:8080");
    const char *h = spec, *colon;
    size_t hl;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || (close[1] && close[1] != ':'))
            return tw_error_set(err, TW_EINVAL,
                                "--listen \"%s\": an IPv6 address goes in brackets, e.g. "
                                "[::1]:8080",
                                spec);
        h = spec + 1;
        hl = (size_t)(close - h);
        colon = close[1] ? close + 1 : NULL;
    } else {
        colon = strrchr(spec, ':');
        if (colon && strchr(spec, ':') != colon)
            return tw_error_set(err, TW_EINVAL,
                                "--listen \"%s\": an IPv6 address goes in brackets, e.g. "
                                "[::1]:8080",
                                spec);
        hl = colon ? (size_t)(colon - spec) : strlen(spec);
    }
    if (hl == 0 || hl >= hostlen)
        return tw_error_set(err, TW_EINVAL,
                            "--listen \"%s\" is not HOST:PORT, e.g. "
                            "127.0.0.1:8080",
                            spec);
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (colon) {
        char *end;
        errno = 0;
        long p = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || errno || p < 0 || p > 65535)
            return tw_error_set(err, TW_EINVAL,
                                "--listen \"%s\": the port must be 0..65535 (0 picks a free one)",
                                spec);
        *port = (unsigned)p;
    }
    if (strcmp(host, "localhost") == 0)
        snprintf(host, hostlen, "127.0.0.1");
    unsigned char a[16];
    if (inet_pton(AF_INET, host, a) != 1 && inet_pton(AF_INET6, host, a) != 1)
        return tw_error_set(err, TW_EINVAL,
                            "--listen \"%s\": %s is not a numeric IPv4 or IPv6 address", spec,
                            host);
    return TW_OK;
}

static void server_free(struct tw_server *srv)
{
    if (!srv)
        return;
    tw_gate_free(srv->gate);
    tw_srv_health_stop(srv);
    tw_ingest_stop(srv->ingest);
    tw_ingest_free(srv->ingest);
    tw_srv_scheduler_stop(srv, 10000); /* nothing when it was never started */
    tw_worker_free(srv->worker); /* with the operations table, or left to its thread */
    /* A run the timeouts left still reads the server: wait for it; one
     * that does not end (ARM's pacing, a long Retry-After) keeps all of
     * it, kept reachable, until the process exits. */
    if (!tw_srv_exec_drain(srv)) {
        static struct tw_server *kept;
        kept = srv;
        (void)kept;
        return;
    }
    for (size_t i = 0; i < srv->pool_free; i++)
        tw_store_close(srv->pool[i]);
    free(srv->pool);
    free(srv->daemons);
    tw_metrics_free(srv->metrics);
    tw_tier_catalog_cleanup(&srv->cat);
    tw_vmcap_table_cleanup(&srv->caps);
    tw_svc_vmsizes_unref(srv->vmsizes);
    tw_srv_drift_release(srv);
    tw_srv_sync_release(srv);
    tw_srv_leader_unref(srv->leader);
    tw_svc_policies_cleanup(&srv->policies);
    pthread_mutex_destroy(&srv->pool_lock);
    pthread_cond_destroy(&srv->pool_cond);
    pthread_mutex_destroy(&srv->auth_lock);
    pthread_mutex_destroy(&srv->log_lock);
    pthread_mutex_destroy(&srv->stats_lock);
    pthread_mutex_destroy(&srv->health_lock);
    free(srv);
}

static void stop_daemons(struct tw_server *srv)
{
    for (size_t i = 0; i < srv->n_daemons; i++)
        if (srv->daemons[i])
            MHD_stop_daemon(srv->daemons[i]);
    srv->n_daemons = 0;
}

/* Raises the soft limit of open files to the hard one (a connection is a
 * descriptor) and fills in the connection limits: a limit asked for that
 * the descriptors can't hold is refused, the default is cut to fit. */
static enum tw_err set_limits(struct tw_server *srv, const struct tw_server_options *opt,
                              struct tw_error *err)
{
    struct rlimit rl;
    unsigned long fds = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            struct rlimit up = {rl.rlim_max, rl.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &up) == 0)
                rl.rlim_cur = rl.rlim_max;
        }
        fds = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1ul << 30)
                  ? (1ul << 30)
                  : (unsigned long)rl.rlim_cur;
    }
    struct tw_server_limits *l = &srv->limits;
    l->fd_limit = fds;
    unsigned long reserve = FD_RESERVE(srv);
    unsigned long room = fds > reserve + 16 ? fds - reserve : 16;
    if (opt->max_connections) {
        if (opt->max_connections > room)
            return tw_error_set(err, TW_EINVAL,
                                "--max-connections %u does not fit in the limit of %lu open "
                                "files (%lu are kept for the database and the threads): give "
                                "at most %lu, or raise the limit (ulimit -n, or LimitNOFILE= "
                                "in the systemd unit)",
                                opt->max_connections, fds, reserve, room);
        l->max_connections = opt->max_connections;
    } else {
        l->max_connections = room < TW_SERVER_DEFAULT_MAX_CONNECTIONS
                                 ? (unsigned)room
                                 : TW_SERVER_DEFAULT_MAX_CONNECTIONS;
    }
    l->max_connections_per_client = opt->max_connections_per_client
                                        ? opt->max_connections_per_client
                                        : TW_SERVER_DEFAULT_PER_CLIENT;
    if (l->max_connections_per_client > l->max_connections)
        l->max_connections_per_client = l->max_connections;
    l->header_timeout_ms =
        opt->header_timeout_ms ? opt->header_timeout_ms : TW_SERVER_DEFAULT_HEADER_TIMEOUT_MS;
    l->body_memory_max =
        opt->body_memory_max ? opt->body_memory_max : TW_SERVER_DEFAULT_BODY_MEMORY;
    if (l->body_memory_max < srv->body_max)
        return tw_error_set(err, TW_EINVAL,
                            "--body-memory-max (%zu bytes) is below --body-max (%zu bytes): "
                            "one largest body must fit",
                            l->body_memory_max, srv->body_max);
    return TW_OK;
}

void tw_server_limits(const struct tw_server *srv, struct tw_server_limits *out)
{
    *out = srv->limits;
}

unsigned tw_server_open_connections(const struct tw_server *srv)
{
    return tw_gate_open_connections(srv->gate);
}

/* libmicrohttpd's messages on stderr, but one: a relayed connection is a
 * local socket, on which its TCP tuning fails harmlessly every time. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    /* The option's name comes as an argument: the message is looked at,
     * not its format. */
    if (strstr(msg, "Failed to push the data") || strstr(msg, "TCP_NODELAY") ||
        strstr(msg, "TCP_CORK") || strstr(msg, "TCP_NOPUSH"))
        return;
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    fprintf(stderr, "tierwise serve: libmicrohttpd: %s\n", msg);
}


enum tw_err tw_server_start(const struct tw_server_options *opt, struct tw_server **out,
                            struct tw_error *err)
{
    *out = NULL;
    enum tw_err rc;
    if (!opt || !opt->db_path || !opt->db_path[0])
        return tw_error_set(err, TW_EINVAL, "the server needs a database (--db FILE or "
                                            "--db postgresql://...)");
    if (!opt->tls_cert_pem != !opt->tls_key_pem)
        return tw_error_set(err, TW_EINVAL,
                            "TLS needs both a certificate and its key (--tls-cert and --tls-key)");
    char host[64];
    unsigned port;
    rc = tw_server_parse_listen(opt->listen ? opt->listen : TW_SERVER_DEFAULT_LISTEN, host,
                                sizeof(host), &port, err);
    if (rc != TW_OK)
        return rc;
    if (strlen(opt->db_path) >= PATH_MAX)
        return tw_error_set(err, TW_EINVAL, "the database path is too long");

    struct tw_server *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    pthread_mutex_init(&srv->pool_lock, NULL);
    pthread_cond_init(&srv->pool_cond, NULL);
    pthread_mutex_init(&srv->auth_lock, NULL);
    pthread_mutex_init(&srv->log_lock, NULL);
    pthread_mutex_init(&srv->stats_lock, NULL);
    pthread_mutex_init(&srv->health_lock, NULL);
    srv->health_ok = true;
    snprintf(srv->db_path, sizeof(srv->db_path), "%s", opt->db_path);
    srv->body_max = opt->body_max ? opt->body_max : TW_SERVER_DEFAULT_BODY_MAX;
    srv->log_requests = opt->log_requests;
    if (opt->prices_url)
        snprintf(srv->prices_url, sizeof(srv->prices_url), "%s", opt->prices_url);
    srv->tz_load = opt->tz_load;
    tw_srv_exec_arm_init(srv, opt->exec_arm_url ? opt->exec_arm_url : opt->arm_url, opt->arm_cred,
                         opt->arm_pacer);
    srv->scheduler = opt->scheduler;
    srv->scheduler_interval_s = opt->scheduler_interval_s;
    if (opt->scheduler_currency)
        snprintf(srv->scheduler_currency, sizeof(srv->scheduler_currency), "%s",
                 opt->scheduler_currency);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    srv->threads = opt->threads ? opt->threads : (unsigned)(ncpu > 2 ? ncpu : 2);
    if (srv->threads > TW_SERVER_MAX_THREADS)
        srv->threads = TW_SERVER_MAX_THREADS;
    srv->routes = tw_api_routes;
    srv->n_routes = tw_api_n_routes;
    srv->route_static = srv->n_routes;
    srv->route_unmatched = srv->n_routes + 1;

    const char *labels[TW_METRICS_MAX_ROUTES];
    char label_buf[TW_METRICS_MAX_ROUTES][96];
    if (srv->n_routes + 2 > TW_METRICS_MAX_ROUTES) {
        server_free(srv);
        return tw_error_set(err, TW_EINVAL, "too many routes for the metrics table");
    }
    for (size_t i = 0; i < srv->n_routes; i++) {
        snprintf(label_buf[i], sizeof(label_buf[i]), "%s %s", srv->routes[i].method,
                 srv->routes[i].pattern);
        labels[i] = label_buf[i];
    }
    labels[srv->route_static] = "GET (dashboard files)";
    labels[srv->route_unmatched] = "(no route)";
    srv->metrics = tw_metrics_new(labels, srv->n_routes + 2);
    if (opt->db_connections > TW_SERVER_MAX_DB_CONNECTIONS) {
        server_free(srv);
        return tw_error_set(err, TW_EINVAL, "--db-connections %u is more than %d",
                            opt->db_connections, TW_SERVER_MAX_DB_CONNECTIONS);
    }
    srv->pool_max = opt->db_connections ? opt->db_connections : srv->threads + 2;
    srv->pool = calloc(srv->pool_max, sizeof(*srv->pool));
    srv->daemons = calloc(srv->threads, sizeof(*srv->daemons));
    if (!srv->metrics || !srv->pool || !srv->daemons) {
        server_free(srv);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    if ((rc = tw_tier_catalog_builtin(&srv->cat, err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&srv->caps, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    /* Every report is judged under these: their share of the basis once. */
    srv->basis_fixed = tw_svc_compliance_fixed_hash(&srv->cat, &srv->caps);
    if ((rc = set_limits(srv, opt, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    /* A file-size limit (ulimit -f) fails the write that passes it, as a
     * full disk does, instead of killing the server. */
    signal(SIGXFSZ, SIG_IGN);
    if (opt->web_dir) {
        if ((rc = tw_static_root(opt->web_dir, srv->web_root, sizeof(srv->web_root), err)) !=
            TW_OK) {
            server_free(srv);
            return rc;
        }
        srv->have_web = true;
    }

    /* The first handle opens (and migrates) the database, so a bad file
     * fails here, before anything listens. */
    struct tw_store *first = tw_srv_store_get(srv, err);
    if (!first) {
        rc = err->code ? err->code : TW_EIO;
        server_free(srv);
        return rc;
    }
    /* The policies, before anything listens: a bad file, or a policy whose
     * timezone this machine can't load, refuses the start. */
    if (opt->policies_dir &&
        (rc = tw_svc_policies_load_zones(opt->policies_dir, first, opt->tz_load, &srv->policies,
                                         NULL, err)) != TW_OK) {
        tw_srv_store_put(srv, first);
        server_free(srv);
        return rc;
    }
    tw_srv_store_put(srv, first);
    if ((rc = tw_ingest_start(srv->db_path, srv->metrics, &srv->ingest, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    /* Long operations: one at a time, a bounded queue; the operations
     * table goes with the worker. */
    srv->ops = tw_ops_new(0);
    if (!srv->ops) {
        server_free(srv);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    const struct tw_worker_opts wo = {.name = "the operations worker",
                                      .queue_max = TW_OPS_QUEUE_MAX,
                                      .ctx = srv->ops,
                                      .ctx_free = tw_ops_free};
    if ((rc = tw_worker_start(&wo, &srv->worker, err)) != TW_OK) {
        tw_ops_free(srv->ops);
        srv->ops = NULL;
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_health_start(srv, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    /* Before the periodic jobs: each asks it before each run. */
    if ((rc = tw_srv_leader_start(srv, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_vmsizes_start(srv, opt->arm_url, opt->imds_url, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_prices_start(srv, opt->prices_refresh_s, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_rejudge_start(srv, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_drift_start(srv, opt->drift_interval_s, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_scheduler_start(srv, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    if ((rc = tw_srv_sync_start(srv, opt, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }

    int fd = -1;
    bool v6 = false;
    if ((rc = tw_httpd_listen(host, port, 1024, &fd, &srv->port, &v6, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    bool tls = opt->tls_cert_pem != NULL;
    snprintf(srv->url, sizeof(srv->url), "%s://%s%s%s:%u", tls ? "https" : "http", v6 ? "[" : "",
             host, v6 ? "]" : "", srv->port);

    /* One daemon per request thread, without a listening socket of its
     * own: the gate accepts, and hands each connection to one of them. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
    if (tls)
        flags |= MHD_USE_TLS;
    if (v6)
        flags |= MHD_USE_IPv6;
    struct MHD_OptionItem extra[3];
    size_t ne = 0;
    if (tls) {
        extra[ne++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)opt->tls_cert_pem};
        extra[ne++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)opt->tls_key_pem};
    }
    extra[ne] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    /* The daemons' idle timeout is the header deadline: over TLS the gate
     * hands connections over before their head (it can't read it), so
     * this is what bounds a client that sends nothing; request.c raises it
     * once a head is in and lowers it again after each request.  Their
     * connection limit is far above the gate's (which counts every
     * descriptor of a relay): a connection the gate counted in is never
     * refused or dropped by a daemon without the close notification that
     * counts it out. */
    unsigned head_s = (srv->limits.header_timeout_ms + 999) / 1000;
    unsigned mhd_limit = srv->limits.max_connections > (UINT_MAX - 64u) / 2u
                             ? UINT_MAX
                             : 2u * srv->limits.max_connections + 64u;
    for (unsigned i = 0; i < srv->threads; i++) {
        srv->daemons[i] = MHD_start_daemon(
            flags, 0, NULL, NULL, tw_srv_on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
            NULL, MHD_OPTION_NOTIFY_COMPLETED, tw_srv_on_completed, srv,
            MHD_OPTION_NOTIFY_CONNECTION, tw_srv_on_connection, srv, MHD_OPTION_CONNECTION_TIMEOUT,
            head_s, MHD_OPTION_CONNECTION_LIMIT, mhd_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            (size_t)TW_SERVER_CONN_MEMORY, MHD_OPTION_ARRAY, extra, MHD_OPTION_END);
        if (!srv->daemons[i]) {
            close(fd);
            stop_daemons(srv);
            server_free(srv);
            return tw_error_set(err, TW_EIO, "libmicrohttpd could not start on %s port %u%s",
                                host, srv->port,
                                tls ? " (is the certificate and key PEM, and do they match?)"
                                    : "");
        }
        srv->n_daemons = i + 1;
    }
    const struct tw_gate_opts go = {
        .tls = tls,
        .max_conns = srv->limits.max_connections,
        .max_per_client = srv->limits.max_connections_per_client,
        .head_timeout_ms = srv->limits.header_timeout_ms,
        .head_max = TW_SERVER_HEAD_MAX,
        .body_max = srv->body_max,
        .target_max = TW_SERVER_TARGET_MAX,
        .params_max = TW_SERVER_PARAMS_MAX,
        .headers_max = TW_SERVER_HEADERS_MAX,
        .daemons = srv->daemons,
        .n_daemons = srv->n_daemons,
    };
    if ((rc = tw_gate_start(&go, fd, &srv->gate, err)) != TW_OK) {
        close(fd);
        stop_daemons(srv);
        server_free(srv);
        return rc;
    }
    *out = srv;
    return TW_OK;
}

unsigned tw_server_port(const struct tw_server *srv)
{
    return srv->port;
}

const char *tw_server_url(const struct tw_server *srv)
{
    return srv->url;
}

void tw_server_counts(const struct tw_server *srv, struct tw_server_counts *out)
{
    memset(out, 0, sizeof(*out));
    out->requests = tw_metrics_requests(srv->metrics);
    out->errors = atomic_load(&srv->errors5xx);
    tw_metrics_ingest_counts(srv->metrics, &out->reports_stored, &out->reports_repeat);
}

void tw_server_stop(struct tw_server *srv, unsigned grace_ms)
{
    if (!srv)
        return;
    atomic_store(&srv->stopping, true);
    /* No new connections: the gate closes the listening socket (and the
     * connections whose head it was still waiting for). */
    tw_gate_stop(srv->gate);
    /* Requests in flight (posts waiting for the writer among them) finish. */
    int64_t deadline = tw_srv_mono_ms() + (grace_ms ? grace_ms : 10000);
    while (atomic_load(&srv->active) > 0 && tw_srv_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    long left = atomic_load(&srv->active);
    if (left > 0)
        fprintf(stderr, "tierwise serve: %ld requests still open after %u ms; closing them\n", left,
                grace_ms ? grace_ms : 10000);
    /* The writer commits what is queued and resumes those requests before
     * the daemon goes (libmicrohttpd must not stop with suspended ones). */
    tw_ingest_stop(srv->ingest);
    /* Operations not started are cancelled; one running (a refresh waiting
     * on the network) gets what is left of the grace, at least 1 s, and is
     * then left to end on its own while the process exits. */
    int64_t left_ms = deadline - tw_srv_mono_ms();
    /* the executor's runs stop between two steps (what is in flight is
     * resumed by the next run); the scheduler's worker goes first */
    srv->exec_stop = 1;
    tw_srv_scheduler_stop(srv, left_ms > 1000 ? (long)left_ms : 1000);
    tw_worker_stop(srv->worker, TW_WORKER_CANCEL, left_ms > 1000 ? (long)left_ms : 1000);
    while (atomic_load(&srv->active) > 0 && tw_srv_mono_ms() < deadline + 2000) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    /* The gate's thread ends before the daemons: it must not hand one a
     * connection while (or after) it stops. */
    tw_gate_join(srv->gate);
    stop_daemons(srv);
    server_free(srv);
}

