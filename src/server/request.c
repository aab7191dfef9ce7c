/*
 * request.c - libmicrohttpd's request lifecycle.
 *
 * Lifecycle of a request (as libmicrohttpd's post_example.c): the first
 * call creates its context and decides everything that needs no body
 * (route, 404/405, token, 401/403, content type, a Content-Length over
 * the cap); an early error is queued at once and the body is never read.
 * Later calls append the body to a capped buffer (httpd/reqctx.h's step,
 * shared with the simulator); the last call runs the handler.  POST
 * /reports suspends the connection until the writer has committed its
 * batch, and is answered when libmicrohttpd calls again after the resume.
 * The completion callback counts, logs and frees.
 */
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "httpd/reqctx.h"
#include "server/gate.h"

/* ---- request lifecycle ---- */

/* Whether content type CT is application/json (parameters allowed). */
static bool is_json_type(const char *ct)
{
    if (!ct)
        return false;
    while (*ct == ' ')
        ct++;
    size_t n = strlen("application/json");
    return strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* The framing headers of a request, counted (libmicrohttpd takes the
 * first Content-Length and would read what follows the body as a second
 * request). */
struct framing {
    unsigned n_cl, n_te;
    bool cl_differ;
    const char *cl;
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct framing *f = cls;
    (void)kind;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (f->n_cl++ && strcmp(f->cl, value ? value : "") != 0)
            f->cl_differ = true;
        f->cl = value ? value : "";
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->n_te++;
    }
    return MHD_YES;
}

/* Reserves N more bytes of the bodies in flight for RQ; false (nothing
 * reserved) past --body-memory-max. */
static bool body_reserve(struct tw_req *rq, size_t n)
{
    struct tw_server *srv = rq->srv;
    size_t now = atomic_fetch_add(&srv->body_mem, n) + n;
    if (now > srv->limits.body_memory_max) {
        atomic_fetch_sub(&srv->body_mem, n);
        return false;
    }
    rq->body_reserved += n;
    return true;
}

static void body_busy(struct tw_req *rq)
{
    tw_req_error(rq, 503, "busy",
                 "the request bodies being received fill the memory kept for them (%zu bytes, "
                 "serve --body-memory-max); send it again shortly",
                 rq->srv->limits.body_memory_max);
}

/* Everything decided before the body: false when an answer was set. */
static bool begin(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    /* The gate checked the first head of a plain connection; a later one
     * on a keep-alive connection, or one over TLS, is checked here. */
    struct framing fr = {0};
    MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, count_framing, &fr);
    if (fr.cl_differ || (fr.n_cl && fr.n_te) || fr.n_te > 1) {
        tw_req_error(rq, 400, "bad_request",
                     fr.cl_differ ? "the request has two different Content-Length headers: send one"
                                  : "the request's body is framed twice (Content-Length and "
                                    "Transfer-Encoding, or two Transfer-Encodings): send one");
        if (rq->resp)
            MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_CONNECTION, "close");
        return false;
    }
    if (atomic_load(&srv->stopping)) {
        tw_req_error(rq, 503, "shutting_down", "the server is stopping; try again shortly");
        return false;
    }
    struct tw_route_lookup lk;
    tw_route_find(srv->routes, srv->n_routes, rq->method, rq->path, &lk);
    if (!lk.route) {
        rq->metric_row = srv->route_unmatched;
        if (lk.path_known) {
            tw_req_error(rq, 405, "method_not_allowed", "%s is not allowed on %s; use %s",
                         rq->method, rq->path, lk.allow);
            if (rq->resp)
                MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_ALLOW, lk.allow);
            return false;
        }
        bool api = strncmp(rq->path, "/api/", 5) == 0 || strcmp(rq->path, "/api") == 0;
        bool get = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
        if (!api && get && srv->have_web) {
            rq->metric_row = srv->route_static;
            return true; /* a dashboard file, answered in dispatch */
        }
        if (!api && !get && srv->have_web) {
            tw_req_error(rq, 405, "method_not_allowed",
                         "%s is not allowed on %s; the dashboard's files answer GET, HEAD",
                         rq->method, rq->path);
            if (rq->resp)
                MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
            return false;
        }
        tw_req_error(rq, 404, "not_found", "no such route: %s %s (README lists the API)",
                     rq->method, rq->path);
        return false;
    }
    rq->route = lk.route;
    rq->metric_row = lk.index;
    rq->id = lk.id;
    memcpy(rq->name, lk.name, sizeof(rq->name));
    if (!tw_srv_authenticate(rq))
        return false;
    if (!lk.route->body) {
        /* A body announced on a route that takes none is refused before a
         * byte of it is read. */
        const char *cl =
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const char *te = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_TRANSFER_ENCODING);
        if ((cl && strspn(cl, "0") != strlen(cl)) || te) {
            tw_req_error(rq, 400, "unexpected_body", "%s %s takes no request body", rq->method,
                         rq->path);
            return false;
        }
    }
    if (lk.route->body) {
        const char *ct =
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (!is_json_type(ct)) {
            if (ct)
                tw_req_error(rq, 415, "unsupported_media_type",
                             "%s %s takes a JSON body: send \"Content-Type: application/json\" "
                             "(got \"%.100s\")",
                             rq->method, rq->path, ct);
            else
                tw_req_error(rq, 415, "unsupported_media_type",
                             "%s %s takes a JSON body: send \"Content-Type: application/json\"",
                             rq->method, rq->path);
            return false;
        }
        const char *cl =
            MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno == ERANGE || n > srv->body_max) {
                tw_req_error(rq, 413, "body_too_large",
                             "the request body (%s bytes) is over the limit of %zu bytes "
                             "(serve --body-max)",
                             cl, srv->body_max);
                return false;
            }
            if (!body_reserve(rq, (size_t)n)) {
                body_busy(rq);
                return false;
            }
        }
    }
    return true;
}

/* The last call of a request with its whole body in. */
static void dispatch(struct tw_req *rq)
{
    if (rq->body_refused) {
        body_busy(rq);
        return;
    }
    if (rq->too_big) {
        tw_req_error(rq, 413, "body_too_large",
                     "the request body is over the limit of %zu bytes (serve --body-max)",
                     rq->srv->body_max);
        return;
    }
    if (!rq->route) {
        tw_api_static(rq);
        return;
    }
    if (!rq->route->body && (rq->body.len || rq->stray_body)) {
        tw_req_error(rq, 400, "unexpected_body", "%s %s takes no request body", rq->method,
                     rq->path);
        return;
    }
    rq->route->handler(rq);
}

static enum MHD_Result answer(struct tw_req *rq)
{
    rq->phase = REQ_ANSWERED;
    if (!rq->resp) {
        rq->status = 500;
        return MHD_NO; /* out of memory building it: drop the connection */
    }
    enum MHD_Result ret = MHD_queue_response(rq->conn, rq->status, rq->resp);
    MHD_destroy_response(rq->resp);
    rq->resp = NULL;
    return ret;
}

enum MHD_Result tw_srv_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    struct tw_server *srv = cls;
    (void)version;
    struct tw_req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        if (!rq)
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &rq->start);
        rq->srv = srv;
        rq->conn = conn;
        rq->method = method;
        rq->path = url;
        rq->metric_row = srv->route_unmatched;
        tw_buf_init(&rq->body, srv->body_max);
        *con_cls = rq;
        atomic_fetch_add(&srv->active, 1);
        /* The head is in: the body may take the idle timeout (the
         * completion shortens it again for the next head). */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)60);
        if (!begin(rq))
            return answer(rq);
        rq->phase = REQ_BODY;
        return MHD_YES;
    }
    /* The body, by httpd's shared step.  Only a route that takes a body
     * (and so a token) gets it kept: a body sent to a dashboard file or to
     * a route that takes none is counted and dropped, so that requests
     * without a token can't make the server hold --body-max bytes per
     * connection. */
    bool keep = rq->phase == REQ_BODY && rq->route && rq->route->body;
    /* A body without a Content-Length (chunked) reserves as it grows. */
    if (keep && *upload_data_size && !rq->too_big && !rq->body_refused &&
        rq->body.len + *upload_data_size > rq->body_reserved &&
        !body_reserve(rq, rq->body.len + *upload_data_size - rq->body_reserved)) {
        rq->body_refused = true;
        tw_buf_cleanup(&rq->body);
    }
    keep = keep && !rq->body_refused;
    if (*upload_data_size && rq->phase == REQ_BODY && !keep)
        rq->stray_body = true;
    if (tw_httpd_take(keep ? &rq->body : NULL, &rq->too_big, upload_data, upload_data_size) ==
        TW_HTTPD_MORE)
        return MHD_YES;
    switch (rq->phase) {
    case REQ_BODY:
        dispatch(rq);
        if (rq->phase == REQ_SUSPENDED)
            return MHD_YES;
        return answer(rq);
    case REQ_SUSPENDED: /* called again after the writer resumed us */
        rq->phase = REQ_RESUMED;
        tw_api_report_done(rq);
        return answer(rq);
    default: return MHD_YES;
    }
}

static void report_committed(struct tw_ingest_job *job)
{
    struct tw_req *rq = job->arg;
    struct tw_server *srv = rq->srv;
    /* /healthz says the store is degraded while the writer's last batch
     * failed (a full disk fails every commit), until a later batch holds
     * or a probe begun after this failure succeeds (v1_health.c: haproxy
     * sends a backend that says 503 no report that could clear it). */
    if (!job->committed) {
        pthread_mutex_lock(&srv->health_lock);
        snprintf(srv->commit_why, sizeof(srv->commit_why), "%s",
                 job->err.msg[0] ? job->err.msg : tw_strerror(job->err.code));
        srv->commit_fail_seq++;
        atomic_store(&srv->commit_failed, true);
        pthread_mutex_unlock(&srv->health_lock);
    } else {
        atomic_store(&srv->commit_failed, false);
        atomic_store(&srv->commit_ok_ms, (long long)tw_srv_mono_ms());
    }
    MHD_resume_connection(rq->conn);
}

void tw_req_submit_report(struct tw_req *rq)
{
    rq->job.done = report_committed;
    rq->job.arg = rq;
    rq->job.raw = rq->body.data;
    rq->job.raw_len = rq->body.len;
    rq->phase = REQ_SUSPENDED;
    MHD_suspend_connection(rq->conn);
    if (tw_ingest_submit(rq->srv->ingest, &rq->job) != TW_OK) {
        /* Stopping: answer 503 when resumed. */
        rq->job.committed = false;
        tw_error_set(&rq->job.err, TW_EUNSUPPORTED, "the server is stopping");
        MHD_resume_connection(rq->conn);
    }
}

void tw_srv_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct tw_server *srv = cls;
    struct tw_req *rq = *con_cls;
    if (!rq)
        return;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double secs =
        (double)(end.tv_sec - rq->start.tv_sec) + (double)(end.tv_nsec - rq->start.tv_nsec) / 1e9;
    if (rq->status)
        tw_metrics_observe(srv->metrics, rq->metric_row, rq->status, secs);
    if (rq->status >= 500)
        atomic_fetch_add(&srv->errors5xx, 1);
    if (srv->log_requests) {
        /* The path as decoded may hold a newline: never a forged log line. */
        char path[512];
        tw_srv_clean_text(rq->path, path, sizeof(path));
        pthread_mutex_lock(&srv->log_lock);
        fprintf(stderr, "tierwise serve: %s %s %u %.1f ms%s\n", rq->method, path, rq->status,
                secs * 1e3,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection ended early)");
        pthread_mutex_unlock(&srv->log_lock);
    }
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    if (rq->body_reserved)
        atomic_fetch_sub(&srv->body_mem, rq->body_reserved);
    /* The next head on this connection has the header deadline, as an
     * idle timeout (the gate saw only the first). */
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                  (unsigned)((srv->limits.header_timeout_ms + 999) / 1000));
    tw_report_free(rq->job.rep);
    tw_svc_judged_cleanup(&rq->job.judged);
    tw_buf_cleanup(&rq->body);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->active, 1);
}


void tw_srv_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct tw_server *srv = cls;
    (void)socket_context;
    if (toe != MHD_CONNECTION_NOTIFY_CLOSED)
        return;
    /* A relayed connection (a local socket pair) is the gate's to count. */
    const union MHD_ConnectionInfo *fi =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int domain = 0;
    socklen_t dl = sizeof(domain);
    if (fi && getsockopt(fi->connect_fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) == 0 &&
        domain == AF_UNIX) {
        tw_gate_relay_closed(srv->gate);
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    uint8_t key[TW_GATE_KEY_LEN];
    tw_gate_key(ci ? ci->client_addr : NULL, key);
    tw_gate_closed(srv->gate, key);
}
