/*
 * http.h - the one HTTP client of tierwise, a thin wrapper over a libcurl
 * easy handle.
 *
 * Every Azure call (IMDS, managed-identity token, ARM, Retail Prices) goes
 * through tw_az_http_request, which is also the only place that calls
 * curl_easy_perform, so tests have one seam.  What it adds to libcurl:
 *
 *  - short connect and per-attempt timeouts, and a budget for the whole
 *    call (attempts plus the waits between them): an agent on a machine
 *    that is not on Azure must find out in about two seconds;
 *  - retries on 429, 408 and 5xx answers and on connection failures, with
 *    exponential backoff and jitter, waiting at least as long as a
 *    Retry-After header asks (and giving up when that is beyond the budget);
 *  - the response body in a capped tw_buf: a server can't make us allocate
 *    without bound;
 *  - the outcome as an enum tw_err with a message naming the method, the
 *    URL, the HTTP status and the server's own error text;
 *  - no redirects and only http/https, so a server can't send us elsewhere;
 *    no proxy for IMDS (Azure says IMDS must never be reached through one)
 *    nor for loopback hosts;
 *  - a loopback-only mode (option, or TIERWISE_LOOPBACK_ONLY=1 in the
 *    environment) that refuses to open a socket to any address outside
 *    127.0.0.0/8 and ::1: tests and the demo turn it on so nothing they do
 *    can reach a real endpoint, even through a mistaken default.
 *
 * A struct tw_az_http is not thread-safe; use one per thread.
 */
#ifndef TW_AZURE_HTTP_H
#define TW_AZURE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"

struct tw_az_http_opts {
    long connect_timeout_ms; /* TCP (+TLS) connect, per attempt */
    long attempt_timeout_ms; /* one whole request, per attempt */
    long budget_ms;          /* all attempts and waits together */
    int max_attempts;        /* 1 = no retry */
    long backoff_base_ms;    /* wait before the 2nd attempt, doubled after */
    long backoff_max_ms;     /* ceiling of one backoff wait (Retry-After may exceed it) */
    size_t max_body;         /* response body ceiling, bytes */
    bool no_proxy;           /* never use a proxy (IMDS); loopback hosts never do */
    bool loopback_only;      /* refuse sockets to anything but 127.0.0.0/8 and ::1 */
    bool retry_not_found;    /* also retry 404 and 410 (IMDS while it is updating) */
    /* Waits MS milliseconds between attempts; NULL: nanosleep.  Tests inject
     * one that records the waits and returns at once. */
    void (*sleep_ms)(long ms, void *arg);
    void *sleep_arg;
    /* Called before each attempt (1, 2, ...) of a request is sent; NULL:
     * none.  The ARM client's pacer takes its token here, so a retry is
     * paced like a first call. */
    void (*before_attempt)(const char *method, int attempt, void *arg);
    void *attempt_arg;
};

/* Defaults for ARM, login and Retail Prices: 5 s connect, 30 s per attempt,
 * 4 attempts within 90 s, backoff from 500 ms, 8 MiB bodies.  Loopback-only
 * when TIERWISE_LOOPBACK_ONLY=1. */
void tw_az_http_opts_default(struct tw_az_http_opts *o);

/* Defaults for IMDS: no proxy, 500 ms connect, 1.5 s per attempt, 3
 * attempts within 2 s, backoff from 100 ms, 1 MiB bodies. */
void tw_az_http_opts_imds(struct tw_az_http_opts *o);

/* Why no HTTP status arrived. */
enum tw_az_net {
    TW_AZ_NET_OK,      /* a status arrived (whatever it was) */
    TW_AZ_NET_REFUSED, /* connection refused or no route */
    TW_AZ_NET_TIMEOUT, /* connect or request timed out */
    TW_AZ_NET_RESOLVE, /* host name did not resolve */
    TW_AZ_NET_DROPPED, /* the connection broke mid-request */
    TW_AZ_NET_BLOCKED, /* loopback-only mode refused the address */
    TW_AZ_NET_OTHER    /* TLS, URL or another libcurl failure */
};

struct tw_az_http_resp {
    long status;           /* HTTP status of the last attempt; 0 when none arrived */
    enum tw_az_net net;    /* of the last attempt */
    int attempts;          /* requests sent */
    long waited_ms;        /* total backoff waits */
    struct tw_buf body;    /* last response body (capped, NUL-terminated) */
    struct tw_buf headers; /* last response's header lines, raw */
};

/* Words for N, e.g. "connection refused (nothing listens there, or no route)". */
const char *tw_az_net_words(enum tw_az_net n);

/* True when the last attempt got no HTTP answer at all because nothing
 * listened or answered in time: what IMDS looks like off Azure. */
bool tw_az_http_unreachable(const struct tw_az_http_resp *r);

/* The value of response header NAME (case-insensitive) in OUT, trimmed;
 * false when absent or longer than OUTLEN-1. */
bool tw_az_http_resp_header(const struct tw_az_http_resp *r, const char *name, char *out,
                            size_t outlen);

void tw_az_http_resp_cleanup(struct tw_az_http_resp *r);

struct tw_az_http;

/* A client with options O (copied).  NULL with ERR filled when libcurl
 * can't be initialised.  curl_global_init runs once per process. */
struct tw_az_http *tw_az_http_new(const struct tw_az_http_opts *o, struct tw_error *err);
void tw_az_http_free(struct tw_az_http *h);

/*
 * Sends METHOD ("GET", "POST", "PATCH", "PUT", "DELETE") to URL with the
 * NULL-terminated list of "Name: value" HEADERS (may be NULL) and BODY of
 * BODY_LEN bytes (may be NULL), retrying as the options say.  RESP
 * (uninitialised on entry) gets the last response; the caller cleans it up
 * whatever the outcome.
 *
 * TW_OK only for a 2xx status.  Otherwise: no answer TW_EIO (see
 * tw_az_http_unreachable); 400/405/409/412/422 TW_EINVAL; 401/403 TW_EPERM;
 * 404/410 TW_ENOENT; 429, 408 and 5xx left after the retries TW_EIO; any
 * other status TW_EIO; a body over the ceiling TW_ENOMEM; a refused
 * loopback-only address TW_EPERM.  ERR says what, with the server's text.
 */
enum tw_err tw_az_http_request(struct tw_az_http *h, const char *method, const char *url,
                               const char *const *headers, const char *body, size_t body_len,
                               struct tw_az_http_resp *resp, struct tw_error *err);

/* Whether URL's host is 127.0.0.0/8, ::1 or localhost (no proxy for them). */
bool tw_az_url_is_loopback(const char *url);

#endif
