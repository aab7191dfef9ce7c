/*
 * sim.c - the simulator's daemon: the loopback listener, libmicrohttpd's
 * request lifecycle, the route table, fault injection and the request log.
 *
 * Lifecycle: httpd/reqctx.h's, shared with the server (the first call for
 * a request allocates its context, later calls append body chunks to a
 * capped buffer, the last call (no more data) dispatches, and the
 * completion callback frees the context).  Each connection has its own thread
 * (MHD_USE_THREAD_PER_CONNECTION) because a latency fault sleeps in the
 * handler and must not hold up other clients.
 */
#include "sim/sim_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/uuid.h"
#include "httpd/reqctx.h"

/* ---- clock, ids, responses ---- */

static int64_t real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sim_now_ms(const struct tw_sim *sim)
{
    return real_ms() + sim->clock_offset_ms;
}

void sim_iso_time(int64_t ms, char out[40])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    /* Azure writes 7 fractional digits (100 ns ticks). */
    /* (The modulos only bound the widths for the compiler.) */
    snprintf(out, 40, "%04u-%02u-%02uT%02u:%02u:%02u.%07u+00:00",
             (unsigned)(tm.tm_year + 1900) % 10000u, (unsigned)(tm.tm_mon + 1) % 100u,
             (unsigned)tm.tm_mday % 100u, (unsigned)tm.tm_hour % 100u, (unsigned)tm.tm_min % 100u,
             (unsigned)tm.tm_sec % 100u, (unsigned)((ms % 1000 + 1000) % 1000) * 10000u);
}

void sim_uuid(char out[37])
{
    uint8_t r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        /* No kernel randomness: time and a counter are unique enough for
         * request and operation ids. */
        static atomic_uint_fast64_t n;
        uint64_t a = (uint64_t)real_ms(), b = atomic_fetch_add(&n, 1) + 1;
        for (int i = 0; i < 8; i++) {
            r[i] = (uint8_t)(a >> (i * 8));
            r[8 + i] = (uint8_t)(b >> (i * 8));
        }
    }
    tw_uuid_format(r, out);
}

void sim_url_encode(const char *in, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 <= outlen; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (outlen)
        out[o] = '\0';
}

const char *sim_arg(const struct sim_req *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *sim_hdr(const struct sim_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

void sim_json(struct sim_resp *rs, unsigned status, json_t *body)
{
    free(rs->body);
    rs->body = NULL;
    rs->len = 0;
    /* 15 significant digits print every price as it was written (21.68,
     * not 21.679999999999999716) and read back to the same double. */
    char *s = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(body);
    if (!s) {
        static const char oom[] = "{\"error\":{\"code\":\"InternalServerError\",\"message\":"
                                  "\"The simulator ran out of memory.\"}}";
        rs->status = 500;
        rs->body = strdup(oom);
        rs->len = rs->body ? strlen(rs->body) : 0;
        return;
    }
    rs->status = status;
    rs->body = s;
    rs->len = strlen(s);
}

void sim_header(struct sim_resp *rs, const char *name, const char *fmt, ...)
{
    struct sim_header *h = NULL;
    for (size_t i = 0; i < rs->n_headers; i++) {
        if (strcasecmp(rs->headers[i].name, name) == 0)
            h = &rs->headers[i];
    }
    if (!h) {
        if (rs->n_headers >= SIM_MAX_HEADERS)
            return;
        h = &rs->headers[rs->n_headers++];
        snprintf(h->name, sizeof(h->name), "%s", name);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->value, sizeof(h->value), fmt, ap);
    va_end(ap);
}

static bool has_header(const struct sim_resp *rs, const char *name)
{
    for (size_t i = 0; i < rs->n_headers; i++) {
        if (strcasecmp(rs->headers[i].name, name) == 0)
            return true;
    }
    return false;
}

void sim_arm_error(struct sim_resp *rs, unsigned status, const char *code, const char *target,
                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *e = json_pack("{s:s, s:s}", "code", code, "message", msg);
    if (e && target)
        json_object_set_new(e, "target", json_string(target));
    sim_json(rs, status, e ? json_pack("{s:o}", "error", e) : NULL);
}

enum sim_surface sim_surface_of(const char *path)
{
    if (strncmp(path, "/metadata/", 10) == 0)
        return SIM_IMDS;
    if (strncasecmp(path, "/subscriptions", 14) == 0)
        return SIM_ARM;
    if (strncmp(path, "/api/retail/", 12) == 0)
        return SIM_PRICES;
    if (strncmp(path, "/_sim/", 6) == 0)
        return SIM_ADMIN;
    return SIM_LOGIN;
}

void sim_surface_error(struct sim_resp *rs, enum sim_surface s, unsigned status, const char *code,
                       const char *message)
{
    switch (s) {
    case SIM_IMDS:
        /* IMDS errors are {"error": "text"} (imds.md 1). */
        sim_json(rs, status, json_pack("{s:s}", "error", message));
        return;
    case SIM_PRICES:
        /* Not ARM-shaped: PascalCase keys (retail-prices.md 5). */
        sim_json(rs, status,
                 json_pack("{s:{s:s, s:s}}", "Error", "Code", code, "Message", message));
        return;
    case SIM_LOGIN:
        sim_json(rs, status, json_pack("{s:s, s:s}", "error", code, "error_description", message));
        return;
    case SIM_ARM:
    case SIM_ADMIN: sim_arm_error(rs, status, code, NULL, "%s", message); return;
    }
}

/* ---- routes ---- */

/* "{x}" matches one path segment and captures it; a final "*" matches the
 * rest of the path (at least one segment).  Literal segments compare
 * without case, as ARM's do ("resourcegroups" works). */
static const struct route {
    const char *method;
    const char *pattern;
    sim_handler handler;
} routes[] = {
    {"GET", "/metadata/instance", sim_imds_instance},
    {"GET", "/metadata/instance/*", sim_imds_instance},
    {"GET", "/metadata/versions", sim_imds_versions},
    {"GET", "/metadata/identity/oauth2/token", sim_token_msi},
    {"POST", "/{tenant}/oauth2/v2.0/token", sim_token_login},
    {"GET", "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/disks/{disk}",
     sim_arm_disk_get},
    {"PATCH", "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/disks/{disk}",
     sim_arm_disk_patch},
    {"GET", "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/disks",
     sim_arm_disk_list},
    {"GET", "/subscriptions/{sub}/providers/Microsoft.Compute/disks", sim_arm_disk_list},
    {"GET",
     "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
     "virtualMachines/{vm}/instanceView",
     sim_arm_vm_instance_view},
    {"GET",
     "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines/{vm}",
     sim_arm_vm_get},
    {"GET", "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines",
     sim_arm_vm_list},
    {"GET", "/subscriptions/{sub}/providers/Microsoft.Compute/virtualMachines", sim_arm_vm_list},
    {"POST",
     "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
     "virtualMachines/{vm}/start",
     sim_arm_vm_start},
    {"POST",
     "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
     "virtualMachines/{vm}/deallocate",
     sim_arm_vm_deallocate},
    {"POST",
     "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
     "virtualMachines/{vm}/powerOff",
     sim_arm_vm_power_off},
    {"GET", "/subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}/DiskOperations/{op}",
     sim_arm_operation},
    {"GET", "/subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}/operations/{op}",
     sim_arm_operation},
    {"GET", "/subscriptions/{sub}/providers/Microsoft.Compute/skus", sim_arm_skus},
    {"GET", "/api/retail/prices", sim_prices},
    {"GET", "/_sim/state", sim_admin_state},
    {"POST", "/_sim/clock", sim_admin_clock},
    {"GET", "/_sim/faults", sim_admin_faults_get},
    {"POST", "/_sim/faults", sim_admin_faults_post},
    {"DELETE", "/_sim/faults", sim_admin_faults_delete},
    {"POST", "/_sim/power", sim_admin_power},
    {"GET", "/_sim/requests", sim_admin_requests_get},
    {"GET", "/_sim/counters", sim_admin_counters_get},
    {"DELETE", "/_sim/counters", sim_admin_counters_delete},
    {"DELETE", "/_sim/requests", sim_admin_requests_delete},
};

/* Whether PATH fits PATTERN; fills RQ's params. */
static bool route_match(const char *pattern, const char *path, struct sim_req *rq)
{
    const char *p = pattern, *s = path;
    rq->n_params = 0;
    while (*p && *s) {
        if (*p != '/' || *s != '/')
            return false;
        p++;
        s++;
        size_t pl = strcspn(p, "/"), sl = strcspn(s, "/");
        if (pl == 1 && *p == '*')
            return sl > 0;
        if (sl == 0)
            return false;
        if (*p == '{') {
            if (rq->n_params >= SIM_MAX_PARAMS || sl >= sizeof(rq->params[0]))
                return false;
            memcpy(rq->params[rq->n_params], s, sl);
            rq->params[rq->n_params++][sl] = '\0';
        } else if (pl != sl || strncasecmp(p, s, pl) != 0) {
            return false;
        }
        p += pl;
        s += sl;
    }
    /* A trailing slash on the request is forgiven, as ARM does. */
    return *p == '\0' && (*s == '\0' || strcmp(s, "/") == 0);
}

static void dispatch(struct tw_sim *sim, struct sim_req *rq, struct sim_resp *rs)
{
    bool path_known = false;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (!route_match(routes[i].pattern, rq->path, rq))
            continue;
        path_known = true;
        if (strcmp(routes[i].method, rq->method) == 0) {
            routes[i].handler(sim, rq, rs);
            return;
        }
    }
    enum sim_surface s = sim_surface_of(rq->path);
    char msg[512];
    if (path_known) {
        /* IMDS documents 405 for anything but GET. */
        snprintf(msg, sizeof(msg), "The requested resource does not support http method '%s'.",
                 rq->method);
        sim_surface_error(rs, s, 405, s == SIM_PRICES ? "BadRequest" : "MethodNotAllowed", msg);
        return;
    }
    snprintf(msg, sizeof(msg),
             "No route for %s %.300s on the simulator; see README "
             "\"tierwise-azsim\" for what it serves.",
             rq->method, rq->path);
    sim_surface_error(rs, s, 404, s == SIM_ARM ? "InvalidResourceType" : "NotFound", msg);
}

/* ---- faults ---- */

struct fault_plan {
    long latency_ms;
    const struct tw_sim_fault *action; /* throttle, error, truncate or drop; NULL when none */
    struct tw_sim_fault action_copy;
    bool no_next_link;
    bool fail_op;
};

static double draw(struct tw_sim_fault *f)
{
    uint64_t x = f->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f->rng = x;
    return (double)(x >> 11) / 9007199254740992.0;
}

/* Decides, under the lock, which faults fire for this request; each
 * matching fault counts the request whether or not it fires. */
static void plan_faults(struct tw_sim *sim, const char *method, const char *path,
                        struct fault_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    for (size_t i = 0; i < sim->n_faults; i++) {
        struct tw_sim_fault *f = &sim->faults[i];
        if (strncmp(path, f->path, strlen(f->path)) != 0 ||
            (f->method[0] && strcmp(f->method, method) != 0))
            continue;
        f->matched++;
        if (f->matched <= f->skip || (f->count >= 0 && f->fired >= f->count))
            continue;
        if (f->probability < 1.0 && draw(f) >= f->probability)
            continue;
        if (f->kind == TW_SIM_FAULT_LATENCY) {
            f->fired++;
            plan->latency_ms += f->ms;
        } else if (f->kind == TW_SIM_FAULT_NO_NEXT_LINK) {
            f->fired++;
            plan->no_next_link = true;
        } else if (f->kind == TW_SIM_FAULT_FAIL_OPERATION) {
            f->fired++;
            plan->fail_op = true;
        } else if (!plan->action) {
            /* The first fault that shapes the answer wins; later ones are
             * left for the next request. */
            f->fired++;
            plan->action_copy = *f;
            plan->action = &plan->action_copy;
        }
    }
}

static void sleep_ms(struct tw_sim *sim, long ms)
{
    /* In slices, so stopping the simulator is not held up by a long one. */
    while (ms > 0 && !atomic_load(&sim->stopping)) {
        long step = ms > 50 ? 50 : ms;
        struct timespec ts = {step / 1000, (step % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

/* The surface's own answer to an injected 429 or 5xx. */
static void fault_answer(const struct tw_sim_fault *f, const char *path, struct sim_resp *rs)
{
    enum sim_surface s = sim_surface_of(path);
    if (f->kind == TW_SIM_FAULT_THROTTLE) {
        sim_header(rs, "Retry-After", "%ld", f->retry_after_s);
        if (s == SIM_ARM) {
            /* arm-errors-samples.json "compute_throttled_429_wrapped_constructed":
             * the documented Compute throttling body in ARM's envelope. */
            sim_header(rs, "x-ms-ratelimit-remaining-resource",
                       "Microsoft.Compute/HighCostGet3Min;46,Microsoft.Compute/HighCostGet30Min;0");
            sim_json(
                rs, 429,
                json_pack(
                    "{s:{s:s, s:s, s:[{s:s, s:s, s:s}]}}", "error", "code", "OperationNotAllowed",
                    "message",
                    "The server rejected the request because too many requests have been "
                    "received for this subscription.",
                    "details", "code", "TooManyRequests", "target", "HighCostGet30Min", "message",
                    "{\"operationGroup\":\"HighCostGet30Min\",\"startTime\":\"2018-06-29T19:54:21."
                    "0914017+00:00\",\"endTime\":\"2018-06-29T20:14:21.0914017+00:00\","
                    "\"allowedRequestCount\":800,\"measuredRequestCount\":1238}"));
            return;
        }
        /* Constructed: no captured 429 body exists for IMDS, login or the
         * Retail Prices API; each uses its surface's error shape. */
        sim_surface_error(rs, s, 429,
                          s == SIM_LOGIN ? "temporarily_unavailable" : "TooManyRequests",
                          "Too many requests. Retry after the time in the Retry-After header.");
        return;
    }
    const char *code = f->status == 500   ? "InternalServerError"
                       : f->status == 502 ? "BadGateway"
                       : f->status == 503 ? "ServiceUnavailable"
                       : f->status == 504 ? "GatewayTimeout"
                       : f->status < 500  ? "BadRequest"
                                          : "ServerError";
    /* Constructed bodies in each surface's shape; the status is what a
     * client must act on. */
    char msg[160];
    snprintf(msg, sizeof(msg),
             "The simulator injected HTTP %d for this request (a configured "
             "fault).",
             f->status);
    sim_surface_error(rs, s, (unsigned)f->status, s == SIM_LOGIN ? "temporarily_unavailable" : code,
                      msg);
}

/* ---- the request log ---- */

static void log_request(struct tw_sim *sim, const char *method, const char *path, unsigned status,
                        const char *fault)
{
    if (sim->log_requests)
        fprintf(stderr, "tierwise-azsim: %s %s -> %u%s%s\n", method, path, status,
                fault[0] ? " fault " : "", fault);
    if (strncmp(path, "/_sim/", 6) == 0)
        return; /* the log shows what clients asked, not the test's own probes */
    struct sim_log *l = &sim->log[sim->log_next];
    snprintf(l->method, sizeof(l->method), "%s", method);
    snprintf(l->path, sizeof(l->path), "%s", path);
    l->status = status;
    snprintf(l->fault, sizeof(l->fault), "%s", fault);
    l->at_ms = sim_now_ms(sim);
    sim->log_next = (sim->log_next + 1) % SIM_LOG_SIZE;
    sim->log_total++;
}

/* ---- libmicrohttpd callbacks ---- */

static enum MHD_Result queue(struct MHD_Connection *conn, struct sim_resp *rs, enum sim_surface s)
{
    struct MHD_Response *r;
    if (rs->len)
        r = MHD_create_response_from_buffer(rs->len, rs->body, MHD_RESPMEM_MUST_FREE);
    else
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    if (rs->len)
        rs->body = NULL; /* now MHD's */
    for (size_t i = 0; i < rs->n_headers; i++)
        MHD_add_response_header(r, rs->headers[i].name, rs->headers[i].value);
    if (!has_header(rs, "Content-Type") && (rs->len || s != SIM_ARM))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    enum MHD_Result ret = MHD_queue_response(conn, rs->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct tw_sim *sim = cls;
    (void)version;
    struct tw_httpd_req *ctx = *con_cls;
    if (!ctx) {
        if (!(ctx = tw_httpd_req_new(SIM_MAX_BODY)))
            return MHD_NO;
        *con_cls = ctx;
        return MHD_YES;
    }
    enum tw_httpd_step step = tw_httpd_req_step(ctx, upload_data, upload_data_size);
    if (step == TW_HTTPD_MORE)
        return MHD_YES;

    /* The whole request is in: decide faults, then answer. */
    struct sim_req rq = {.conn = conn,
                         .method = method,
                         .path = url,
                         .body = ctx->body.data ? ctx->body.data : "",
                         .body_len = ctx->body.len};
    struct sim_resp rs = {.status = 500};
    struct fault_plan plan;
    enum sim_surface surface = sim_surface_of(url);

    pthread_mutex_lock(&sim->lock);
    bool admin = surface == SIM_ADMIN;
    if (!admin) /* the admin surface is never faulted: tests must reach it */
        plan_faults(sim, method, url, &plan);
    else
        memset(&plan, 0, sizeof(plan));
    pthread_mutex_unlock(&sim->lock);

    if (plan.latency_ms > 0)
        sleep_ms(sim, plan.latency_ms);

    pthread_mutex_lock(&sim->lock);
    if (plan.action && plan.action->kind == TW_SIM_FAULT_DROP) {
        log_request(sim, method, url, 0, "drop");
        pthread_mutex_unlock(&sim->lock);
        return MHD_NO; /* libmicrohttpd closes the connection without an answer */
    }
    sim_settle(sim);
    rq.no_next_link = plan.no_next_link;
    rq.fail_op = plan.fail_op;
    const char *fault = "";
    if (step == TW_HTTPD_TOO_BIG) {
        char msg[96];
        snprintf(msg, sizeof(msg), "The request body is larger than %u bytes.", SIM_MAX_BODY);
        sim_surface_error(&rs, surface, 413, "RequestEntityTooLarge", msg);
    } else if (plan.action && (plan.action->kind == TW_SIM_FAULT_THROTTLE ||
                               plan.action->kind == TW_SIM_FAULT_ERROR)) {
        fault_answer(plan.action, url, &rs);
        fault = tw_sim_fault_kind_name(plan.action->kind);
    } else if (surface != SIM_ARM || sim_limits_take(sim, &rq, &rs)) {
        dispatch(sim, &rq, &rs);
    } else {
        fault = "arm-limit";
    }
    if (surface == SIM_ARM) {
        char id[37];
        sim_uuid(id);
        if (!has_header(&rs, "x-ms-request-id"))
            sim_header(&rs, "x-ms-request-id", "%s", id);
        sim_header(&rs, "x-ms-correlation-request-id", "%s", id);
        /* (ARM's default hourly figures when no limits are set) */
        if (strcmp(method, "GET") == 0 &&
            !has_header(&rs, "x-ms-ratelimit-remaining-subscription-reads"))
            sim_header(&rs, "x-ms-ratelimit-remaining-subscription-reads", "11999");
        else if (strcmp(method, "GET") != 0 &&
                 !has_header(&rs, "x-ms-ratelimit-remaining-subscription-writes"))
            sim_header(&rs, "x-ms-ratelimit-remaining-subscription-writes", "1199");
        sim->n_requests++;
        if (rs.status == 429)
            sim->n_throttled++;
    }
    if (plan.action && plan.action->kind == TW_SIM_FAULT_TRUNCATE) {
        size_t keep = plan.action->bytes < 0 ? rs.len / 2 : (size_t)plan.action->bytes;
        if (keep < rs.len)
            rs.len = keep;
        fault = "truncate";
    }
    if (plan.no_next_link && !fault[0])
        fault = "no-next-link";
    if (plan.fail_op && !fault[0])
        fault = "fail-operation";
    log_request(sim, method, url, rs.status, fault);
    pthread_mutex_unlock(&sim->lock);

    enum MHD_Result ret = queue(conn, &rs, surface);
    free(rs.body);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    tw_httpd_req_completed(con_cls);
}

/* ---- start and stop ---- */

enum tw_err tw_sim_parse_listen(const char *spec, char *host, size_t hostlen, unsigned *port,
                                struct tw_error *err)
{
    *port = 0;
    const char *colon = strrchr(spec, ':');
    size_t hl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (hl == 0 || hl >= hostlen)
        return tw_error_set(err, TW_EINVAL,
                            "--listen \"%s\" is not HOST[:PORT], e.g. "
                            "127.0.0.1:0",
                            spec);
    memcpy(host, spec, hl);
    host[hl] = '\0';
    if (colon) {
        char *end;
        errno = 0;
        long p = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || errno || p < 0 || p > 65535)
            return tw_error_set(err, TW_EINVAL,
                                "--listen \"%s\": the port must be 0..65535 "
                                "(0 picks a free one)",
                                spec);
        *port = (unsigned)p;
    }
    if (strcmp(host, "localhost") == 0)
        snprintf(host, hostlen, "127.0.0.1");
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) != 1)
        return tw_error_set(err, TW_EPERM,
                            "--listen \"%s\": %s is not an IPv4 loopback address; "
                            "the simulator only listens on 127.0.0.0/8",
                            spec, host);
    if ((ntohl(a.s_addr) >> 24) != 127)
        return tw_error_set(err, TW_EPERM,
                            "--listen \"%s\": %s is outside 127.0.0.0/8; the "
                            "simulator refuses to listen anywhere but loopback",
                            spec, host);
    return TW_OK;
}

static void sim_free(struct tw_sim *sim)
{
    if (!sim)
        return;
    tw_sim_scenario_free(sim->sc);
    free(sim->disk_rt);
    free(sim->vm_rt);
    free(sim->ops);
    free(sim->tokens);
    free(sim->buckets);
    pthread_mutex_destroy(&sim->lock);
    free(sim);
}

enum tw_err tw_sim_start(struct tw_sim_scenario *sc, const struct tw_sim_options *opt,
                         struct tw_sim **out, struct tw_error *err)
{
    *out = NULL;
    char host[64] = "127.0.0.1";
    unsigned port = opt ? opt->port : 0, dummy;
    enum tw_err rc;
    if (opt && opt->host &&
        (rc = tw_sim_parse_listen(opt->host, host, sizeof(host), &dummy, err)) != TW_OK) {
        tw_sim_scenario_free(sc);
        return rc;
    }
    struct tw_sim *sim = calloc(1, sizeof(*sim));
    if (!sim) {
        tw_sim_scenario_free(sc);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&sim->lock, NULL);
    sim->sc = sc;
    sim->log_requests = opt && opt->log_requests;
    sim->disk_rt = calloc(sc->n_disks + 1, sizeof(*sim->disk_rt));
    sim->vm_rt = calloc(sc->n_vms + 1, sizeof(*sim->vm_rt));
    sim->tokens = calloc(SIM_MAX_TOKENS, sizeof(*sim->tokens));
    if (!sim->disk_rt || !sim->vm_rt || !sim->tokens) {
        sim_free(sim);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    if (sc->settings.clock_start_ms)
        sim->clock_offset_ms = sc->settings.clock_start_ms - real_ms();
    sim->started_ms = sim_now_ms(sim);
    for (size_t i = 0; i < sc->n_disks; i++)
        sim->disk_rt[i].op = -1;
    for (size_t i = 0; i < sc->n_vms; i++)
        sim->vm_rt[i].op = -1;
    for (size_t i = 0; i < sc->n_disks; i++) {
        /* uniqueId: stable per disk id (FNV-1a, two seeds), like the VM ids. */
        const struct tw_sim_disk *d = &sc->disks[i];
        char id[300];
        snprintf(id, sizeof(id), "%s/%s/%s", d->subscription_id, d->resource_group, d->name);
        uint64_t h[2] = {1469598103934665603ull, 0x84222325cbf29ce4ull};
        uint8_t r[16];
        for (int k = 0; k < 2; k++) {
            for (const char *s = id; *s; s++)
                h[k] = (h[k] ^ (uint8_t)*s) * 1099511628211ull;
            for (int j = 0; j < 8; j++)
                r[k * 8 + j] = (uint8_t)(h[k] >> (j * 8));
        }
        tw_uuid_format(r, sim->disk_rt[i].unique_id);
    }
    sim->n_faults = sc->n_faults;
    memcpy(sim->faults, sc->faults, sizeof(sc->faults[0]) * sc->n_faults);

    int fd = -1;
    if ((rc = tw_httpd_listen(host, port, 64, &fd, &sim->port, NULL, err)) != TW_OK) {
        sim_free(sim);
        return rc;
    }
    snprintf(sim->url, sizeof(sim->url), "http://%s:%u", host, sim->port);
    sim->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                       MHD_USE_POLL,
                                   0, NULL, NULL, on_request, sim, MHD_OPTION_LISTEN_SOCKET,
                                   (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, sim,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!sim->daemon) {
        close(fd);
        sim_free(sim);
        return tw_error_set(err, TW_EIO, "libmicrohttpd could not start on %s:%u", host, port);
    }
    *out = sim;
    return TW_OK;
}

unsigned tw_sim_port(const struct tw_sim *sim)
{
    return sim->port;
}

const char *tw_sim_url(const struct tw_sim *sim)
{
    return sim->url;
}

enum tw_err tw_sim_add_fault(struct tw_sim *sim, const struct tw_sim_fault *f, struct tw_error *err)
{
    enum tw_err rc = TW_OK;
    pthread_mutex_lock(&sim->lock);
    if (sim->n_faults >= TW_SIM_MAX_FAULTS)
        rc = tw_error_set(err, TW_ERANGE, "%d faults are active already; clear some first",
                          TW_SIM_MAX_FAULTS);
    else
        sim->faults[sim->n_faults++] = *f;
    pthread_mutex_unlock(&sim->lock);
    return rc;
}

void tw_sim_stop(struct tw_sim *sim)
{
    if (!sim)
        return;
    atomic_store(&sim->stopping, true);
    if (sim->daemon)
        MHD_stop_daemon(sim->daemon); /* closes the listening socket and joins */
    sim_free(sim);
}
