/*
 * server.c - the daemon: listening, libmicrohttpd's request lifecycle,
 * authentication, the store pool, suspending posts for the writer, and
 * the graceful stop.
 *
 * Lifecycle of a request (as libmicrohttpd's post_example.c): the first
 * call creates its context and decides everything that needs no body
 * (route, 404/405, token, 401/403, content type, a Content-Length over
 * the cap); an early error is queued at once and the body is never read.
 * Later calls append the body to a capped buffer (httpd/reqctx.h's step,
 * shared with the simulator); the last call runs the handler.  POST
 * /reports suspends the connection until the writer has committed its
 * batch, and is answered when libmicrohttpd calls again after the resume.  The completion callback counts, logs and frees.
 */
#include "server/server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd/reqctx.h"
#include "server/static.h"

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- answers ---- */

static void set_response(struct tw_req *rq, unsigned status, struct MHD_Response *r)
{
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    rq->resp = r;
    rq->status = status;
}

void tw_req_body(struct tw_req *rq, unsigned status, const char *type, char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        set_response(rq, 500, NULL);
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    set_response(rq, status, r);
}

void tw_req_json(struct tw_req *rq, unsigned status, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    json_decref(v);
    if (!s) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
        s = strdup(oom);
        status = 500;
        if (!s) {
            set_response(rq, 500, NULL);
            return;
        }
    }
    /* A final newline keeps curl's output readable. */
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (t) {
        t[n++] = '\n';
        t[n] = '\0';
        s = t;
    }
    tw_req_body(rq, status, "application/json", s, n);
}

/* Copies MSG into OUT with every byte that is not part of valid UTF-8
 * (or is a control character) replaced by '?': messages quote request
 * paths, headers and query values, and JSON strings must be UTF-8. */
static void clean_text(const char *msg, char *out, size_t outlen)
{
    const unsigned char *s = (const unsigned char *)msg;
    size_t o = 0;
    while (*s && o + 5 < outlen) {
        size_t n = 0;
        if (*s >= 0x20 && *s < 0x7f)
            n = 1;
        else if (*s >= 0xc2 && *s <= 0xdf)
            n = 2;
        else if (*s >= 0xe0 && *s <= 0xef)
            n = 3;
        else if (*s >= 0xf0 && *s <= 0xf4)
            n = 4;
        bool good = n > 0;
        for (size_t k = 1; good && k < n; k++)
            good = (s[k] & 0xc0) == 0x80;
        /* No overlong forms, surrogates or code points past U+10FFFF. */
        if (good && n == 3)
            good = !(s[0] == 0xe0 && s[1] < 0xa0) && !(s[0] == 0xed && s[1] >= 0xa0);
        if (good && n == 4)
            good = !(s[0] == 0xf0 && s[1] < 0x90) && !(s[0] == 0xf4 && s[1] >= 0x90);
        if (!good) {
            out[o++] = '?';
            s++;
            continue;
        }
        memcpy(out + o, s, n);
        o += n;
        s += n;
    }
    out[o] = '\0';
}

void tw_req_error_at(struct tw_req *rq, unsigned status, const char *code, long line, long column,
                     const char *msg)
{
    char clean[1024];
    clean_text(msg ? msg : "", clean, sizeof(clean));
    json_t *e = json_pack("{s:s, s:s}", "code", code, "message", clean);
    if (e && line > 0)
        json_object_set_new(e, "line", json_integer(line));
    if (e && column > 0)
        json_object_set_new(e, "column", json_integer(column));
    json_t *v = e ? json_pack("{s:o}", "error", e) : NULL;
    tw_req_json(rq, status, v);
    if (rq->resp && status == 401)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                strcmp(code, "invalid_token") == 0
                                    ? "Bearer realm=\"tierwise\", error=\"invalid_token\""
                                    : "Bearer realm=\"tierwise\"");
    if (rq->resp && status == 503)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
}

void tw_req_error(struct tw_req *rq, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tw_req_error_at(rq, status, code, 0, 0, msg);
}

void tw_req_store_error(struct tw_req *rq, enum tw_err rc, const struct tw_error *err)
{
    const char *msg = err && err->msg[0] ? err->msg : tw_strerror(rc);
    if (rc == TW_ENOENT)
        tw_req_error(rq, 404, "not_found", "%s", msg);
    else
        tw_req_error(rq, 500, "store_failed", "%s", msg);
}

/* ---- the store pool ---- */

struct tw_store *tw_srv_store_get(struct tw_server *srv, struct tw_error *err)
{
    pthread_mutex_lock(&srv->pool_lock);
    for (;;) {
        if (srv->pool_free) {
            struct tw_store *st = srv->pool[--srv->pool_free];
            pthread_mutex_unlock(&srv->pool_lock);
            return st;
        }
        if (srv->pool_open < srv->pool_max)
            break;
        pthread_cond_wait(&srv->pool_cond, &srv->pool_lock);
    }
    srv->pool_open++;
    pthread_mutex_unlock(&srv->pool_lock);
    struct tw_store *st = NULL;
    if (tw_store_open(srv->db_path, &st, err) != TW_OK) {
        pthread_mutex_lock(&srv->pool_lock);
        srv->pool_open--;
        pthread_cond_signal(&srv->pool_cond);
        pthread_mutex_unlock(&srv->pool_lock);
        return NULL;
    }
    return st;
}

void tw_srv_store_put(struct tw_server *srv, struct tw_store *st)
{
    if (!st)
        return;
    pthread_mutex_lock(&srv->pool_lock);
    srv->pool[srv->pool_free++] = st;
    pthread_cond_signal(&srv->pool_cond);
    pthread_mutex_unlock(&srv->pool_lock);
}

/* ---- authentication ---- */

/* The role of the token hashing to HASH: from the cache, or the store.
 * TW_ENOENT when there is no such token (or it was revoked). */
static enum tw_err token_role(struct tw_server *srv, const uint8_t hash[32], enum tw_role *role,
                              struct tw_error *err)
{
    int64_t now = mono_ms();
    bool found = false;
    pthread_mutex_lock(&srv->auth_lock);
    /* Every live entry is compared, in constant time each. */
    for (size_t i = 0; i < TW_AUTH_CACHE; i++) {
        const struct auth_entry *e = &srv->auth[i];
        bool live = e->expires_ms > now;
        if (tw_auth_hash_equal(e->hash, hash) && live && !found) {
            *role = e->role;
            found = true;
        }
    }
    pthread_mutex_unlock(&srv->auth_lock);
    if (found)
        return TW_OK;
    struct tw_store *st = tw_srv_store_get(srv, err);
    if (!st)
        return err->code ? err->code : TW_EIO;
    enum tw_err rc = tw_store_token_lookup(st, hash, role, NULL, 0, err);
    tw_srv_store_put(srv, st);
    if (rc != TW_OK)
        return rc;
    pthread_mutex_lock(&srv->auth_lock);
    size_t slot = 0;
    for (size_t i = 0; i < TW_AUTH_CACHE; i++)
        if (srv->auth[i].expires_ms < srv->auth[slot].expires_ms)
            slot = i; /* the oldest (or an empty) entry */
    memcpy(srv->auth[slot].hash, hash, 32);
    srv->auth[slot].role = *role;
    srv->auth[slot].expires_ms = now + TW_AUTH_CACHE_TTL_MS;
    pthread_mutex_unlock(&srv->auth_lock);
    return TW_OK;
}

/* Checks the request's token against the route's roles; false when an
 * error answer was set. */
static bool authenticate(struct tw_req *rq)
{
    const struct tw_route *r = rq->route;
    if (r->roles == TW_AUTH_PUBLIC)
        return true;
    const char *h =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h) {
        tw_req_error(rq, 401, "unauthorized",
                     "%s %s needs an API token: send \"Authorization: Bearer TOKEN\" "
                     "(tierwise token create makes one)",
                     r->method, r->pattern);
        return false;
    }
    const char *tok;
    size_t tok_len;
    if (!tw_auth_parse_bearer(h, strlen(h), &tok, &tok_len)) {
        tw_req_error(rq, 401, "invalid_token",
                     "the Authorization header is not \"Bearer TOKEN\" with a tierwise token");
        return false;
    }
    uint8_t hash[32];
    struct tw_error err = {0};
    enum tw_role role = TW_ROLE_READER;
    enum tw_err rc = tw_auth_hash(tok, tok_len, hash, &err);
    if (rc == TW_OK)
        rc = token_role(rq->srv, hash, &role, &err);
    if (rc == TW_ENOENT) {
        tw_req_error(rq, 401, "invalid_token",
                     "this token is not known or was revoked (tierwise token list shows them)");
        return false;
    }
    if (rc != TW_OK) {
        tw_req_error(rq, 500, "store_failed", "can't check the token: %s",
                     err.msg[0] ? err.msg : tw_strerror(rc));
        return false;
    }
    if (!tw_auth_role_allowed(role, r->roles)) {
        char allowed[64] = "";
        for (int k = TW_ROLE_AGENT; k <= TW_ROLE_ADMIN; k++)
            if (r->roles & (1u << k) || k == TW_ROLE_ADMIN)
                snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
                         allowed[0] ? " or " : "", tw_role_name((enum tw_role)k));
        tw_req_error(rq, 403, "forbidden", "%s %s is for %s tokens; this one is %s %s token",
                     r->method, r->pattern, allowed, role == TW_ROLE_READER ? "a" : "an",
                     tw_role_name(role));
        return false;
    }
    rq->role = role;
    return true;
}

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

/* Everything decided before the body: false when an answer was set. */
static bool begin(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
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
    if (!authenticate(rq))
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
        }
    }
    return true;
}

/* The last call of a request with its whole body in. */
static void dispatch(struct tw_req *rq)
{
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
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

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct tw_server *srv = cls;
    (void)conn;
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
        clean_text(rq->path, path, sizeof(path));
        pthread_mutex_lock(&srv->log_lock);
        fprintf(stderr, "tierwise serve: %s %s %u %.1f ms%s\n", rq->method, path, rq->status,
                secs * 1e3,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection ended early)");
        pthread_mutex_unlock(&srv->log_lock);
    }
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    tw_report_free(rq->job.rep);
    tw_buf_cleanup(&rq->body);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->active, 1);
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

static enum tw_err listen_socket(const char *host, unsigned port, int *fd_out, unsigned *bound,
                                 bool *v6, struct tw_error *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t sl;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        sl = sizeof(*s4);
        *v6 = false;
    } else {
        inet_pton(AF_INET6, host, &s6->sin6_addr);
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        sl = sizeof(*s6);
        *v6 = true;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return tw_error_set(err, TW_EIO, "can't create a socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (*v6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        close(fd);
        return tw_error_set(err, TW_EIO, "can't listen on %s port %u: %s%s", host, port,
                            strerror(e),
                            e == EADDRINUSE ? " (give another port, or 0 for a free one)" : "");
    }
    sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *bound = ntohs(*v6 ? s6->sin6_port : s4->sin_port);
    *fd_out = fd;
    return TW_OK;
}

static void server_free(struct tw_server *srv)
{
    if (!srv)
        return;
    tw_ingest_stop(srv->ingest);
    tw_ingest_free(srv->ingest);
    for (size_t i = 0; i < srv->pool_free; i++)
        tw_store_close(srv->pool[i]);
    free(srv->pool);
    tw_metrics_free(srv->metrics);
    tw_tier_catalog_cleanup(&srv->cat);
    tw_vmcap_table_cleanup(&srv->caps);
    pthread_mutex_destroy(&srv->pool_lock);
    pthread_cond_destroy(&srv->pool_cond);
    pthread_mutex_destroy(&srv->auth_lock);
    pthread_mutex_destroy(&srv->log_lock);
    pthread_mutex_destroy(&srv->stats_lock);
    free(srv);
}

enum tw_err tw_server_start(const struct tw_server_options *opt, struct tw_server **out,
                            struct tw_error *err)
{
    *out = NULL;
    enum tw_err rc;
    if (!opt || !opt->db_path || !opt->db_path[0])
        return tw_error_set(err, TW_EINVAL, "the server needs a database (--db FILE)");
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
    snprintf(srv->db_path, sizeof(srv->db_path), "%s", opt->db_path);
    srv->body_max = opt->body_max ? opt->body_max : TW_SERVER_DEFAULT_BODY_MAX;
    srv->log_requests = opt->log_requests;
    if (opt->prices_url)
        snprintf(srv->prices_url, sizeof(srv->prices_url), "%s", opt->prices_url);
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
    srv->pool_max = srv->threads + 2;
    srv->pool = calloc(srv->pool_max, sizeof(*srv->pool));
    if (!srv->metrics || !srv->pool) {
        server_free(srv);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    if ((rc = tw_tier_catalog_builtin(&srv->cat, err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&srv->caps, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
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
    tw_srv_store_put(srv, first);
    if ((rc = tw_ingest_start(srv->db_path, srv->metrics, &srv->ingest, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }

    int fd = -1;
    bool v6 = false;
    if ((rc = listen_socket(host, port, &fd, &srv->port, &v6, err)) != TW_OK) {
        server_free(srv);
        return rc;
    }
    bool tls = opt->tls_cert_pem != NULL;
    snprintf(srv->url, sizeof(srv->url), "%s://%s%s%s:%u", tls ? "https" : "http", v6 ? "[" : "",
             host, v6 ? "]" : "", srv->port);

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (tls)
        flags |= MHD_USE_TLS;
    if (v6)
        flags |= MHD_USE_IPv6;
    /* Optional settings: TLS, and the pool (one thread means none). */
    struct MHD_OptionItem extra[4];
    size_t ne = 0;
    if (tls) {
        extra[ne++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)opt->tls_cert_pem};
        extra[ne++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)opt->tls_key_pem};
    }
    if (srv->threads > 1)
        extra[ne++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, srv->threads, NULL};
    extra[ne] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)4096, MHD_OPTION_ARRAY, extra, MHD_OPTION_END);
    if (!srv->daemon) {
        close(fd);
        server_free(srv);
        return tw_error_set(err, TW_EIO, "libmicrohttpd could not start on %s port %u%s", host,
                            srv->port,
                            tls ? " (is the certificate and key PEM, and do they match?)" : "");
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
    /* No new connections: libmicrohttpd hands back the listening socket. */
    MHD_socket lfd = MHD_quiesce_daemon(srv->daemon);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    /* Requests in flight (posts waiting for the writer among them) finish. */
    int64_t deadline = mono_ms() + (grace_ms ? grace_ms : 10000);
    while (atomic_load(&srv->active) > 0 && mono_ms() < deadline) {
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
    while (atomic_load(&srv->active) > 0 && mono_ms() < deadline + 2000) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    server_free(srv);
}
