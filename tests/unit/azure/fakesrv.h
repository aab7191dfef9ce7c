/*
 * fakesrv.h - a scripted HTTP server for the azure client tests.
 *
 * libmicrohttpd in this process, bound to 127.0.0.1 on a port the kernel
 * picks (port 0, read back), so no test ever talks to anything but
 * loopback.  Request N gets reply N of the script (the last one repeats);
 * each reply can be delayed to make the client time out.  What the client
 * sent (method, path, a few query arguments and headers, body) is recorded
 * for the test to check.  Header-only: each test program includes it once.
 */
#ifndef TW_TEST_FAKESRV_H
#define TW_TEST_FAKESRV_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#define FS_MAX_REPLIES 16

struct fs_reply {
    unsigned status;         /* 0 ends the script (use the previous one) */
    const char *body;        /* copied when sent; NULL = "" */
    const char *retry_after; /* Retry-After header value, or NULL */
    long delay_ms;           /* wait before answering */
};

struct fakesrv {
    struct MHD_Daemon *d;
    unsigned short port;
    char base[64]; /* "http://127.0.0.1:PORT" */
    pthread_mutex_t mu;
    struct fs_reply script[FS_MAX_REPLIES];
    /* More headers of reply N, "Name: value" lines ("\n" between), or
     * NULL (fs_script_headers; the caller keeps the strings alive). */
    const char *headers[FS_MAX_REPLIES];
    char *bodies[FS_MAX_REPLIES]; /* owned copies of script bodies */
    size_t n_script;
    volatile int stopping;
    int requests; /* requests answered so far */
    /* The last request, as received. */
    char method[16];
    char path[1024];
    char api_version[64];
    char filter[256];   /* $filter, decoded */
    char resource[256]; /* resource, decoded */
    char metadata[32];  /* Metadata header, "" when absent */
    char authorization[512];
    char forwarded[64]; /* X-Forwarded-For (must never be sent) */
    char expand[64];    /* $expand, decoded */
    char content_type[128];
    char body[4096];
};

static inline void fs_copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

struct fs_req {
    char body[4096];
    size_t len;
};

static inline enum MHD_Result fs_handler(void *cls, struct MHD_Connection *c, const char *url,
                                         const char *method, const char *version,
                                         const char *upload, size_t *upload_size, void **con_cls)
{
    struct fakesrv *s = cls;
    (void)version;
    struct fs_req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        *con_cls = rq;
        return rq ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        size_t take = *upload_size;
        if (take > sizeof(rq->body) - 1 - rq->len)
            take = sizeof(rq->body) - 1 - rq->len;
        memcpy(rq->body + rq->len, upload, take);
        rq->len += take;
        *upload_size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&s->mu);
    size_t i = (size_t)s->requests < s->n_script ? (size_t)s->requests : s->n_script - 1;
    struct fs_reply r = s->script[i];
    const char *extra = s->headers[i];
    s->requests++;
    fs_copy(s->method, sizeof(s->method), method);
    fs_copy(s->path, sizeof(s->path), url);
    fs_copy(s->api_version, sizeof(s->api_version),
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "api-version"));
    fs_copy(s->filter, sizeof(s->filter),
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "$filter"));
    fs_copy(s->resource, sizeof(s->resource),
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resource"));
    fs_copy(s->metadata, sizeof(s->metadata),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Metadata"));
    fs_copy(s->authorization, sizeof(s->authorization),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"));
    fs_copy(s->forwarded, sizeof(s->forwarded),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For"));
    fs_copy(s->expand, sizeof(s->expand),
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "$expand"));
    fs_copy(s->content_type, sizeof(s->content_type),
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"));
    rq->body[rq->len] = '\0';
    fs_copy(s->body, sizeof(s->body), rq->body);
    pthread_mutex_unlock(&s->mu);
    /* Sleep in slices so stopping the server does not wait out the delay. */
    for (long waited = 0; waited < r.delay_ms && !s->stopping; waited += 20) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    const char *b = r.body ? r.body : "";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(b), (void *)b, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "X-Test", "fakesrv");
    if (r.retry_after)
        MHD_add_response_header(resp, "Retry-After", r.retry_after);
    for (const char *h = extra; h && *h;) {
        const char *eol = strchr(h, '\n'), *colon = strchr(h, ':');
        size_t n = eol ? (size_t)(eol - h) : strlen(h);
        if (colon && (size_t)(colon - h) < n && n < 4096) {
            char line[4096];
            memcpy(line, h, n);
            line[n] = '\0';
            line[colon - h] = '\0';
            const char *v = line + (colon - h) + 1;
            while (*v == ' ')
                v++;
            MHD_add_response_header(resp, line, v);
        }
        h = eol ? eol + 1 : h + n;
    }
    enum MHD_Result ret = MHD_queue_response(c, r.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static inline void fs_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                                enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
}

/* Replaces the script (copies the bodies).  End the list with status 0. */
static inline void fs_script(struct fakesrv *s, const struct fs_reply *replies)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < FS_MAX_REPLIES; i++) {
        free(s->bodies[i]);
        s->bodies[i] = NULL;
    }
    s->n_script = 0;
    for (size_t i = 0; i < FS_MAX_REPLIES && replies[i].status; i++) {
        s->script[i] = replies[i];
        if (replies[i].body) {
            s->bodies[i] = strdup(replies[i].body);
            s->script[i].body = s->bodies[i];
        }
        s->n_script++;
    }
    for (size_t i = 0; i < FS_MAX_REPLIES; i++)
        s->headers[i] = NULL;
    s->requests = 0;
    pthread_mutex_unlock(&s->mu);
}

/* fs_script, and HEADERS[N] (NULL-padded to the script's length; the
 * strings are not copied) as more headers of reply N. */
static inline void fs_script_headers(struct fakesrv *s, const struct fs_reply *replies,
                                     const char *const *headers)
{
    fs_script(s, replies);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_script; i++)
        s->headers[i] = headers[i];
    pthread_mutex_unlock(&s->mu);
}

/* Starts a server on 127.0.0.1, port 0; NULL when MHD can't. */
static inline struct fakesrv *fs_start(const struct fs_reply *replies)
{
    struct fakesrv *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    pthread_mutex_init(&s->mu, NULL);
    fs_script(s, replies);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = 0;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                            NULL, NULL, fs_handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_NOTIFY_COMPLETED, fs_completed, NULL, MHD_OPTION_END);
    if (!s->d) {
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%u", (unsigned)s->port);
    return s;
}

static inline int fs_requests(struct fakesrv *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->requests;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static inline void fs_stop(struct fakesrv *s)
{
    if (!s)
        return;
    s->stopping = 1;
    MHD_stop_daemon(s->d);
    for (size_t i = 0; i < FS_MAX_REPLIES; i++)
        free(s->bodies[i]);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* A 127.0.0.1 port that nothing listens on: bound, read, closed. */
static inline unsigned short fs_closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned short port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Waits recorded by an injected sleep. */
struct fs_sleeps {
    int n;
    long ms[32];
};

static inline void fs_sleep(long ms, void *arg)
{
    struct fs_sleeps *z = arg;
    if (z->n < 32)
        z->ms[z->n] = ms;
    z->n++;
}

#endif
