/* http.c - libcurl wrapper: timeouts, retries, capped bodies, errors. */
#include "azure/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#define HEADERS_MAX (64u << 10) /* response header lines kept per response */

struct tw_az_http {
    CURL *curl;
    struct tw_az_http_opts o;
    uint64_t rng; /* jitter state (xorshift64) */
};

/* ---- options ---- */

static bool env_loopback_only(void)
{
    const char *v = getenv("TIERWISE_LOOPBACK_ONLY");
    return v && *v && strcmp(v, "0") != 0;
}

void tw_az_http_opts_default(struct tw_az_http_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->connect_timeout_ms = 5000;
    o->attempt_timeout_ms = 30000;
    o->budget_ms = 90000;
    o->max_attempts = 4;
    o->backoff_base_ms = 500;
    o->backoff_max_ms = 20000;
    o->max_body = 8u << 20;
    o->loopback_only = env_loopback_only();
}

void tw_az_http_opts_imds(struct tw_az_http_opts *o)
{
    /* IMDS is on the host and answers in milliseconds; a machine that is
     * not on Azure has nothing at 169.254.169.254 (often not even a route),
     * and the agent must say so in about two seconds, not hang. */
    tw_az_http_opts_default(o);
    o->connect_timeout_ms = 500;
    o->attempt_timeout_ms = 1500;
    o->budget_ms = 2000;
    o->max_attempts = 3;
    o->backoff_base_ms = 100;
    o->backoff_max_ms = 1000;
    o->max_body = 1u << 20;
    o->no_proxy = true;
}

/* ---- response ---- */

bool tw_az_http_unreachable(const struct tw_az_http_resp *r)
{
    return r->status == 0 && (r->net == TW_AZ_NET_REFUSED || r->net == TW_AZ_NET_TIMEOUT ||
                              r->net == TW_AZ_NET_RESOLVE);
}

bool tw_az_http_resp_header(const struct tw_az_http_resp *r, const char *name, char *out,
                            size_t outlen)
{
    size_t nl = strlen(name);
    const char *p = r->headers.data;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1, *end = p + len;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && isspace((unsigned char)end[-1]))
                end--;
            if ((size_t)(end - v) >= outlen)
                return false;
            memcpy(out, v, (size_t)(end - v));
            out[end - v] = '\0';
            return true;
        }
        p = eol ? eol + 1 : NULL;
    }
    return false;
}

void tw_az_http_resp_cleanup(struct tw_az_http_resp *r)
{
    tw_buf_cleanup(&r->body);
    tw_buf_cleanup(&r->headers);
}

/* ---- client ---- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct tw_az_http *tw_az_http_new(const struct tw_az_http_opts *o, struct tw_error *err)
{
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        tw_error_set(err, TW_EIO, "libcurl failed to initialise: %s",
                     curl_easy_strerror(global_rc));
        return NULL;
    }
    struct tw_az_http *h = calloc(1, sizeof(*h));
    if (!h) {
        tw_error_set(err, TW_ENOMEM, "out of memory for an HTTP client");
        return NULL;
    }
    if (o)
        h->o = *o;
    else
        tw_az_http_opts_default(&h->o);
    if (h->o.max_attempts < 1)
        h->o.max_attempts = 1;
    h->curl = curl_easy_init();
    if (!h->curl) {
        free(h);
        tw_error_set(err, TW_ENOMEM, "libcurl could not create a handle");
        return NULL;
    }
    /* Jitter only needs to differ between agents hitting the same server;
     * address, pid and time are enough. */
    h->rng = now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)h;
    if (!h->rng)
        h->rng = 0x9e3779b97f4a7c15ULL;
    return h;
}

void tw_az_http_free(struct tw_az_http *h)
{
    if (!h)
        return;
    curl_easy_cleanup(h->curl);
    free(h);
}

/* ---- URL helpers ---- */

/* Copies URL's host (without brackets or port) into OUT; false if none. */
static bool url_host(const char *url, char *out, size_t outlen)
{
    const char *p = strstr(url, "://");
    if (!p)
        return false;
    p += 3;
    const char *at = strpbrk(p, "@/?#");
    if (at && *at == '@')
        p = at + 1;
    const char *end;
    if (*p == '[') {
        p++;
        end = strchr(p, ']');
        if (!end)
            return false;
    } else {
        end = p + strcspn(p, ":/?#");
    }
    if (end == p || (size_t)(end - p) >= outlen)
        return false;
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return true;
}

bool tw_az_url_is_loopback(const char *url)
{
    char host[256];
    if (!url_host(url, host, sizeof(host)))
        return false;
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0)
        return true;
    struct in_addr a4;
    return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

static bool addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)(const void *)sa;
        return (ntohl(s->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)(const void *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&s->sin6_addr))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&s->sin6_addr) && s->sin6_addr.s6_addr[12] == 127;
    }
    return false;
}

/* ---- one attempt ---- */

struct attempt {
    struct tw_az_http_resp *resp;
    bool overflow; /* the body passed the ceiling */
    bool blocked;  /* loopback-only refused an address */
    bool loopback_only;
    char blocked_addr[64];
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct attempt *a = arg;
    if (tw_buf_append(&a->resp->body, p, size * n) != TW_OK) {
        a->overflow = true;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct attempt *a = arg;
    /* A new status line (after 100 Continue, say) starts a new header set. */
    if (size * n >= 5 && memcmp(p, "HTTP/", 5) == 0)
        tw_buf_cleanup(&a->resp->headers);
    /* Headers past the ceiling are dropped: they are for diagnostics and a
     * few lookups, never worth failing a request over. */
    (void)tw_buf_append(&a->resp->headers, p, size * n);
    return n * size;
}

static curl_socket_t on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
    struct attempt *a = arg;
    (void)purpose;
    if (a->loopback_only && !addr_is_loopback(&addr->addr)) {
        a->blocked = true;
        char host[INET6_ADDRSTRLEN] = "?";
        if (addr->family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)&addr->addr)->sin_addr, host,
                      sizeof(host));
        else if (addr->family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)&addr->addr)->sin6_addr, host,
                      sizeof(host));
        snprintf(a->blocked_addr, sizeof(a->blocked_addr), "%s", host);
        return CURL_SOCKET_BAD;
    }
    return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

/* Sets everything for one attempt; false when libcurl refuses an option. */
static bool setup(struct tw_az_http *h, const char *method, const char *url,
                  struct curl_slist *hdrs, const char *body, size_t body_len, long timeout_ms,
                  struct attempt *a, char *errbuf)
{
    CURL *c = h->curl;
    long connect_ms = h->o.connect_timeout_ms < timeout_ms ? h->o.connect_timeout_ms : timeout_ms;
    if (connect_ms < 1)
        connect_ms = 1;
    if (timeout_ms < 1)
        timeout_ms = 1;
    curl_easy_reset(c); /* keeps the connection cache, drops earlier options */
    bool ok = curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
    ok = ok && curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
#else
    ok = ok && curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) ==
                   CURLE_OK;
#endif
    ok = ok && curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_USERAGENT, "tierwise/" TW_VERSION) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_WRITEDATA, a) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_HEADERDATA, a) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_open_socket) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, a) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK;
    /* IMDS must not go through a proxy (Azure's rule), and a loopback test
     * server must not either: an inherited http_proxy would otherwise carry
     * the request off this machine. */
    if (h->o.no_proxy || h->o.loopback_only || tw_az_url_is_loopback(url))
        ok = ok && curl_easy_setopt(c, CURLOPT_NOPROXY, "*") == CURLE_OK;
    if (strcmp(method, "GET") == 0) {
        ok = ok && curl_easy_setopt(c, CURLOPT_HTTPGET, 1L) == CURLE_OK;
    } else {
        ok = ok &&
             curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len) == CURLE_OK &&
             curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "") == CURLE_OK;
        if (strcmp(method, "POST") != 0)
            ok = ok && curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method) == CURLE_OK;
    }
    return ok;
}

static enum tw_az_net classify(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK: return TW_AZ_NET_OK;
    case CURLE_COULDNT_CONNECT: return TW_AZ_NET_REFUSED;
    case CURLE_OPERATION_TIMEDOUT: return TW_AZ_NET_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return TW_AZ_NET_RESOLVE;
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE: return TW_AZ_NET_DROPPED;
    default: return TW_AZ_NET_OTHER;
    }
}

const char *tw_az_net_words(enum tw_az_net n)
{
    switch (n) {
    case TW_AZ_NET_OK: return "answered";
    case TW_AZ_NET_REFUSED: return "connection refused (nothing listens there, or no route)";
    case TW_AZ_NET_TIMEOUT: return "timed out";
    case TW_AZ_NET_RESOLVE: return "host name did not resolve";
    case TW_AZ_NET_DROPPED: return "connection dropped before a complete answer";
    case TW_AZ_NET_BLOCKED: return "refused by loopback-only mode";
    case TW_AZ_NET_OTHER: return "failed";
    }
    return "failed";
}

static const char *reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 412: return "Precondition Failed";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

static bool status_retryable(const struct tw_az_http_opts *o, long s)
{
    if (s == 429 || s == 408)
        return true;
    if (s >= 500 && s <= 599 && s != 501 && s != 505)
        return true;
    return o->retry_not_found && (s == 404 || s == 410);
}

static enum tw_err status_code(long s)
{
    switch (s) {
    case 400:
    case 405:
    case 409:
    case 412:
    case 422: return TW_EINVAL;
    case 401:
    case 403: return TW_EPERM;
    case 404:
    case 410: return TW_ENOENT;
    default: return TW_EIO;
    }
}

/* Appends printable characters of S (N bytes) to OUT, at most OUTLEN-1. */
static void put_text(char *out, size_t outlen, const char *s, size_t n)
{
    size_t o = strlen(out);
    for (size_t i = 0; i < n && o + 1 < outlen; i++)
        out[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    out[o] = '\0';
}

static const json_t *get_ci(const json_t *o, const char *key)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (strcasecmp(k, key) == 0)
            return v;
    }
    return NULL;
}

/* The server's own words from an error body: ARM's {"error": {"code",
 * "message"}}, IMDS's {"error": "...", "error_description": "..."}, or the
 * start of whatever text it sent. */
static void server_text(const struct tw_buf *b, char *out, size_t outlen)
{
    out[0] = '\0';
    if (!b->data || !b->len)
        return;
    json_t *root = b->data[0] == '{' || isspace((unsigned char)b->data[0])
                       ? json_loadb(b->data, b->len, 0, NULL)
                       : NULL;
    if (json_is_object(root)) {
        const json_t *e = get_ci(root, "error");
        const json_t *code = NULL, *msg = NULL;
        if (json_is_object(e)) {
            code = get_ci(e, "code");
            msg = get_ci(e, "message");
        } else if (json_is_string(e)) {
            code = e;
            msg = get_ci(root, "error_description");
        } else {
            msg = get_ci(root, "message");
        }
        if (json_is_string(code))
            put_text(out, outlen, json_string_value(code), json_string_length(code));
        if (json_is_string(code) && json_is_string(msg))
            put_text(out, outlen, ": ", 2);
        if (json_is_string(msg))
            put_text(out, outlen, json_string_value(msg), json_string_length(msg));
    }
    json_decref(root);
    if (!out[0])
        put_text(out, outlen < 161 ? outlen : 161, b->data, b->len);
}

/* Exponential backoff with "equal jitter": half the step is fixed, half
 * random, so agents that failed together don't come back together. */
static long backoff(struct tw_az_http *h, int attempt)
{
    long step = h->o.backoff_base_ms;
    for (int i = 1; i < attempt && step < h->o.backoff_max_ms; i++)
        step *= 2;
    if (step > h->o.backoff_max_ms)
        step = h->o.backoff_max_ms;
    if (step <= 1)
        return step < 0 ? 0 : step;
    h->rng ^= h->rng << 13;
    h->rng ^= h->rng >> 7;
    h->rng ^= h->rng << 17;
    return step / 2 + (long)(h->rng % (uint64_t)(step / 2 + 1));
}

static void default_sleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool method_ok(const char *m)
{
    static const char *const ok[] = {"GET", "POST", "PATCH", "PUT", "DELETE"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(m, ok[i]) == 0)
            return true;
    return false;
}

enum tw_err tw_az_http_request(struct tw_az_http *h, const char *method, const char *url,
                               const char *const *headers, const char *body, size_t body_len,
                               struct tw_az_http_resp *resp, struct tw_error *err)
{
    memset(resp, 0, sizeof(*resp));
    tw_buf_init(&resp->body, h->o.max_body);
    tw_buf_init(&resp->headers, HEADERS_MAX);
    if (!method_ok(method))
        return tw_error_set(err, TW_EINVAL, "HTTP method \"%s\" is not supported", method);

    struct curl_slist *hdrs = NULL;
    /* No "Expect: 100-continue" round trip before a body. */
    const char *fixed[] = {"Expect:", NULL};
    for (const char *const *list[] = {fixed, headers}, *const **l = list; l < list + 2; l++) {
        for (const char *const *p = *l; p && *p; p++) {
            struct curl_slist *n = curl_slist_append(hdrs, *p);
            if (!n) {
                curl_slist_free_all(hdrs);
                return tw_error_set(err, TW_ENOMEM, "out of memory for request headers");
            }
            hdrs = n;
        }
    }

    /* Loopback-only mode refuses a URL whose host is not a loopback
     * address before anything is sent: checking only the socket would let
     * a host name be resolved (a DNS query off the machine) first. */
    if (h->o.loopback_only && !tw_az_url_is_loopback(url)) {
        curl_slist_free_all(hdrs);
        resp->net = TW_AZ_NET_BLOCKED;
        return tw_error_set(err, TW_EPERM,
                            "%s %s: refusing a host outside 127.0.0.0/8 and ::1: loopback-only "
                            "mode (TIERWISE_LOOPBACK_ONLY)",
                            method, url);
    }

    uint64_t start = now_ms();
    enum tw_err rc = TW_EIO;
    bool said = false; /* ERR already holds the final message */
    char errbuf[CURL_ERROR_SIZE];
    char why[160] = ""; /* why the retries stopped early, for the message */
    for (int attempt = 1;; attempt++) {
        if (h->o.before_attempt)
            h->o.before_attempt(method, attempt, h->o.attempt_arg);
        long spent = (long)(now_ms() - start) + (h->o.sleep_ms ? resp->waited_ms : 0);
        long left = h->o.budget_ms - spent;
        long timeout = h->o.attempt_timeout_ms < left ? h->o.attempt_timeout_ms : left;
        struct attempt a = {.resp = resp, .loopback_only = h->o.loopback_only};
        tw_buf_cleanup(&resp->body);
        tw_buf_cleanup(&resp->headers);
        errbuf[0] = '\0';
        if (!setup(h, method, url, hdrs, body, body_len, timeout, &a, errbuf)) {
            rc = tw_error_set(err, TW_EINVAL, "%s %s: libcurl refused the request options", method,
                              url);
            said = true;
            break;
        }
        resp->attempts = attempt;
        CURLcode cc = curl_easy_perform(h->curl);
        long status = 0;
        if (cc == CURLE_OK || cc == CURLE_WRITE_ERROR)
            curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
        resp->status = cc == CURLE_OK ? status : 0;
        resp->net = classify(cc);
        if (a.overflow) {
            resp->status = status;
            resp->net = TW_AZ_NET_OK;
            rc = tw_error_set(err, TW_ENOMEM,
                              "%s %s: the response is larger than %zu bytes, more than any "
                              "answer of this API should be",
                              method, url, h->o.max_body);
            said = true;
            break;
        }
        if (a.blocked) {
            resp->net = TW_AZ_NET_BLOCKED;
            rc = tw_error_set(err, TW_EPERM,
                              "%s %s: refusing to connect to %s: loopback-only mode "
                              "(TIERWISE_LOOPBACK_ONLY) allows 127.0.0.0/8 and ::1 only",
                              method, url, a.blocked_addr);
            said = true;
            break;
        }
        if (cc == CURLE_OK && status >= 200 && status <= 299) {
            rc = TW_OK;
            break;
        }
        bool retry =
            cc == CURLE_OK ? status_retryable(&h->o, status) : resp->net != TW_AZ_NET_OTHER;
        /* A POST (start, deallocate) whose connection broke may have been
         * carried out: sending it again could act twice.  Only a failure
         * to connect is safe to retry for it. */
        if (cc != CURLE_OK && resp->net == TW_AZ_NET_DROPPED && strcmp(method, "POST") == 0)
            retry = false;
        if (!retry || attempt >= h->o.max_attempts)
            break;
        long wait = backoff(h, attempt);
        curl_off_t ra = -1;
        if (cc == CURLE_OK && curl_easy_getinfo(h->curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
            ra > 0) {
            if (ra > (curl_off_t)(h->o.budget_ms / 1000)) {
                snprintf(why, sizeof(why),
                         "; the server asks to retry after %lld s, beyond "
                         "the %ld ms this call may take",
                         (long long)ra, h->o.budget_ms);
                break;
            }
            if ((long)ra * 1000 > wait)
                wait = (long)ra * 1000;
        }
        spent = (long)(now_ms() - start) + (h->o.sleep_ms ? resp->waited_ms : 0);
        if (spent + wait >= h->o.budget_ms) {
            snprintf(why, sizeof(why), "; gave up with %ld of its %ld ms spent", spent,
                     h->o.budget_ms);
            break;
        }
        if (h->o.sleep_ms)
            h->o.sleep_ms(wait, h->o.sleep_arg);
        else
            default_sleep(wait);
        resp->waited_ms += wait;
    }
    /* The handle must not keep pointers to this call's header list, error
     * buffer or callback state; reset keeps the connection for the next. */
    curl_easy_reset(h->curl);
    curl_slist_free_all(hdrs);
    if (rc == TW_OK || said)
        return rc;

    /* The last attempt failed: say how. */
    char tries[32] = "";
    if (resp->attempts > 1)
        snprintf(tries, sizeof(tries), " (%d attempts)", resp->attempts);
    if (resp->status == 0) {
        const char *detail = resp->net == TW_AZ_NET_OTHER && errbuf[0] ? errbuf : "";
        return tw_error_set(err, TW_EIO, "%s %s: %s%s%s%s%s", method, url,
                            tw_az_net_words(resp->net), detail[0] ? ": " : "", detail, tries, why);
    }
    char text[256];
    server_text(&resp->body, text, sizeof(text));
    const char *rs = reason(resp->status);
    return tw_error_set(err, status_code(resp->status), "%s %s: HTTP %ld%s%s%s%s%s%s", method, url,
                        resp->status, rs[0] ? " " : "", rs, tries, text[0] ? ": " : "", text, why);
}
