/*
 * gate.c - the server's front door: one thread accepts every connection,
 * counts it against a limit per client address and one in all, and holds
 * it until its request head (request line and headers) is in, for at most
 * the header deadline.  The head is read with MSG_PEEK, so nothing is
 * consumed: a head that passes the checks below is handed, bytes intact,
 * to one of the libmicrohttpd daemons (MHD_add_connection, round robin);
 * one that does not is answered here with the API's JSON error and the
 * connection closed.  libmicrohttpd's own refusals are HTML pages, and it
 * hangs on a query with a few hundred parameters; the gate's limits are
 * stricter than its, so a head it would refuse never reaches it.
 *
 * A POST with a body is relayed rather than handed over: the gate reads
 * the body through a small buffer into one end of a local socket pair
 * whose other end the daemon serves (the head gets "Connection: close"
 * first), and copies the answer back.  libmicrohttpd ends a connection
 * whose client half-closes (shutdown after sending) while the request is
 * under way, and the answer of a stored report was lost; relayed, the
 * daemon never sees the client's end, and the gate delivers the answer
 * whatever the client closed after its body.  Nothing is held but the
 * two buffers: the body is kept only by the daemon, behind the token
 * check and the bound of bodies in flight.
 *
 * Over TLS the head is encrypted: the gate counts and hands over at once,
 * and the header deadline is libmicrohttpd's per-connection timeout
 * (request.c restores the idle timeout once the head is in).
 */
#include "server/gate.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <pthread.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_BUCKETS 1024
#define DRAIN_MS 1000 /* a refused connection is read and dropped this long before the close */
#define RELAY_BUF 8192
#define ACCEPT_PAUSE_MS 100 /* out of descriptors: the listening socket rests this long */
#define RELAY_FDS 2 /* a relay's descriptors besides the client's: the pair's two ends */

enum gate_state { G_HEAD, G_DRAIN, G_RELAY, G_DEAD };

/* A relayed POST: the client's body up to the daemon, its answer down. */
struct relay {
    int sp;                    /* the gate's end of the pair */
    unsigned long long body_left;
    size_t up_off, up_len, down_off, down_len;
    bool down_eof;
    bool chunked;              /* BODY_LEFT is then "not ended yet", checked by CK */
    struct tw_gate_chunks ck;
    uint32_t ev_fd, ev_sp;     /* the interests registered ... */
    bool reg_fd, reg_sp;       /* ... when registered at all (a hang-up is always reported) */
    char up[RELAY_BUF], down[RELAY_BUF];
};

struct gate_conn {
    int fd;
    enum gate_state state;
    struct sockaddr_storage addr;
    socklen_t alen;
    uint8_t key[TW_GATE_KEY_LEN];
    int64_t deadline_ms;
    size_t scanned; /* bytes of the head already searched for its end */
    struct relay *rl; /* G_RELAY */
    struct gate_conn *prev, *next; /* the list of its state, oldest first */
};

struct gate_list {
    struct gate_conn *head, *tail;
};

struct client {
    uint8_t key[TW_GATE_KEY_LEN];
    unsigned n;
    struct client *next;
};

struct tw_gate {
    struct tw_gate_opts o;
    int lfd, epfd, wake;
    pthread_t thread;
    bool started;
    char *buf; /* head_max + 1 bytes, the gate thread's */
    struct gate_list heads, drains, relays;
    struct gate_conn *dead; /* closed in this round of events, freed after it */
    atomic_bool quiesce, exit; /* what the wake-up asks: stop accepting, end the thread */
    atomic_bool quiesced;
    size_t next_daemon;
    int64_t accept_paused_until; /* > 0: the listening socket is out of epoll till then */

    pthread_mutex_t lock; /* the counts: the gate thread and the daemons' close callbacks */
    unsigned total;
    /* Descriptors of relays held besides their clients' (the gate's end of
     * a pair until it ends, the daemon's until the daemon closes it): a
     * relayed POST takes three descriptors, and the limit in all counts
     * descriptors, not connections. */
    unsigned relay_fds;
    struct client *clients[CLIENT_BUCKETS];
    atomic_uint_fast64_t refused;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- counts ---- */

void tw_gate_key(const struct sockaddr *sa, uint8_t key[TW_GATE_KEY_LEN])
{
    memset(key, 0, TW_GATE_KEY_LEN);
    if (sa && sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        key[0] = 6;
        memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

static unsigned bucket_of(const uint8_t key[TW_GATE_KEY_LEN])
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < TW_GATE_KEY_LEN; i++)
        h = (h ^ key[i]) * 16777619u;
    return h % CLIENT_BUCKETS;
}

/* Counts a new connection of KEY: 0 taken, 1 over the client's limit, 2
 * over the limit in all, -1 out of memory. */
static int count_take(struct tw_gate *g, const uint8_t key[TW_GATE_KEY_LEN])
{
    int rc = 0;
    pthread_mutex_lock(&g->lock);
    struct client **slot = &g->clients[bucket_of(key)], *c = *slot;
    while (c && memcmp(c->key, key, TW_GATE_KEY_LEN) != 0)
        c = c->next;
    if (g->total + g->relay_fds >= g->o.max_conns) {
        rc = 2;
    } else if (c && c->n >= g->o.max_per_client) {
        rc = 1;
    } else {
        if (!c) {
            c = calloc(1, sizeof(*c));
            if (!c) {
                pthread_mutex_unlock(&g->lock);
                return -1;
            }
            memcpy(c->key, key, TW_GATE_KEY_LEN);
            c->next = *slot;
            *slot = c;
        }
        c->n++;
        g->total++;
    }
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static void count_drop(struct tw_gate *g, const uint8_t key[TW_GATE_KEY_LEN])
{
    pthread_mutex_lock(&g->lock);
    struct client **p = &g->clients[bucket_of(key)];
    while (*p && memcmp((*p)->key, key, TW_GATE_KEY_LEN) != 0)
        p = &(*p)->next;
    if (*p) {
        if (g->total)
            g->total--;
        if (--(*p)->n == 0) {
            struct client *dead = *p;
            *p = dead->next;
            free(dead);
        }
    }
    pthread_mutex_unlock(&g->lock);
}

void tw_gate_closed(struct tw_gate *g, const uint8_t key[TW_GATE_KEY_LEN])
{
    if (g)
        count_drop(g, key);
}

static void relay_fds_drop(struct tw_gate *g)
{
    pthread_mutex_lock(&g->lock);
    if (g->relay_fds)
        g->relay_fds--;
    pthread_mutex_unlock(&g->lock);
}

void tw_gate_relay_closed(struct tw_gate *g)
{
    if (g)
        relay_fds_drop(g);
}

/* Takes the two descriptors of a new relay, unless they would go past the
 * limit in all. */
static bool relay_fds_take(struct tw_gate *g)
{
    pthread_mutex_lock(&g->lock);
    bool ok = g->total + g->relay_fds + RELAY_FDS <= g->o.max_conns;
    if (ok)
        g->relay_fds += RELAY_FDS;
    pthread_mutex_unlock(&g->lock);
    return ok;
}

unsigned tw_gate_open_connections(struct tw_gate *g)
{
    pthread_mutex_lock(&g->lock);
    unsigned n = g->total;
    pthread_mutex_unlock(&g->lock);
    return n;
}

uint64_t tw_gate_refused(struct tw_gate *g)
{
    return atomic_load(&g->refused);
}

/* ---- lists ---- */

static void list_add(struct gate_list *l, struct gate_conn *c)
{
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_del(struct gate_list *l, struct gate_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
}

static struct gate_list *list_of(struct tw_gate *g, struct gate_conn *c)
{
    return c->state == G_HEAD ? &g->heads : c->state == G_RELAY ? &g->relays : &g->drains;
}

/* C is done with: freed once the round of events that may still name it
 * is over. */
static void bury(struct tw_gate *g, struct gate_conn *c)
{
    c->state = G_DEAD;
    c->next = g->dead;
    g->dead = c;
}

static void free_dead(struct tw_gate *g)
{
    while (g->dead) {
        struct gate_conn *c = g->dead;
        g->dead = c->next;
        free(c->rl);
        free(c);
    }
}

static void relay_end(struct tw_gate *g, struct gate_conn *c)
{
    if (!c->rl)
        return;
    epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->rl->sp, NULL);
    close(c->rl->sp);
    relay_fds_drop(g);
    free(c->rl);
    c->rl = NULL;
}

/* Closes C, forgets it and its count.  A connection already closed (a
 * relay has two descriptors in epoll, and both may report in the same
 * round) is left alone: closing it twice would free it twice and close a
 * descriptor a new connection may have been given. */
static void conn_close(struct tw_gate *g, struct gate_conn *c)
{
    if (c->state == G_DEAD)
        return;
    list_del(list_of(g, c), c);
    relay_end(g, c);
    epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    count_drop(g, c->key);
    bury(g, c);
}

/* ---- answers ---- */

/* Writes the JSON error answer (best effort: the socket's buffer takes a
 * few hundred bytes at once) with "Connection: close". */
static void send_error(int fd, unsigned status, const char *reason, const char *code,
                       const char *msg)
{
    char esc[512], body[768], out[1280];
    size_t e = 0;
    for (const char *p = msg; *p && e + 2 < sizeof(esc); p++) {
        if (*p == '"' || *p == '\\')
            esc[e++] = '\\';
        esc[e++] = (unsigned char)*p < 0x20 ? ' ' : *p;
    }
    esc[e] = '\0';
    int bl = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
                      code, esc);
    if (bl < 0 || (size_t)bl >= sizeof(body))
        return;
    int n = snprintf(out, sizeof(out),
                     "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
                     "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
                     "%sConnection: close\r\nContent-Length: %d\r\n\r\n%s",
                     status, reason, status == 503 ? "Retry-After: 5\r\n" : "", bl, body);
    if (n > 0 && (size_t)n < sizeof(out)) {
        ssize_t w = send(fd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w;
    }
}

/* Reads and drops what the client still sends, for DRAIN_MS at most
 * (closing with unread data would reset the connection, and could lose
 * the answer just sent). */
static void to_drain(struct tw_gate *g, struct gate_conn *c)
{
    if (c->state == G_DEAD)
        return;
    list_del(list_of(g, c), c);
    relay_end(g, c);
    c->state = G_DRAIN;
    c->deadline_ms = mono_ms() + DRAIN_MS;
    list_add(&g->drains, c);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
    if (epoll_ctl(g->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
        epoll_ctl(g->epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Answers C's head with an error, then reads and drops what the client
 * still sends for DRAIN_MS (closing at once would reset the connection
 * and could lose the answer). */
static void refuse(struct tw_gate *g, struct gate_conn *c, unsigned status, const char *reason,
                   const char *code, const char *msg)
{
    atomic_fetch_add(&g->refused, 1);
    send_error(c->fd, status, reason, code, msg);
    shutdown(c->fd, SHUT_WR);
    to_drain(g, c);
}

/* ---- the head ---- */

static bool is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

size_t tw_gate_head_end(const char *b, size_t n, size_t from)
{
    for (size_t i = from; i < n; i++) {
        if (b[i] != '\n')
            continue;
        if (i >= 1 && b[i - 1] == '\n')
            return i + 1;
        if (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n')
            return i + 1;
    }
    return 0;
}

static void verdict(struct tw_gate_verdict *v, unsigned status, const char *reason, const char *code,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void verdict(struct tw_gate_verdict *v, unsigned status, const char *reason, const char *code,
                    const char *fmt, ...)
{
    v->status = status;
    v->reason = reason;
    v->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
    va_end(ap);
}

/* Whether V (LEN bytes, blanks around it trimmed) is a decimal length. */
static bool read_length(const char *v, size_t len, unsigned long long *out)
{
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    if (len == 0 || len > 18)
        return false;
    unsigned long long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        n = n * 10 + (unsigned)(v[i] - '0');
    }
    *out = n;
    return true;
}

void tw_gate_check_head(const char *b, size_t n, const struct tw_gate_opts *o,
                        struct tw_gate_verdict *v)
{
    memset(v, 0, sizeof(*v));
    /* The request line: METHOD SP TARGET SP HTTP/1.x */
    const char *eol = memchr(b, '\n', n);
    if (!eol) {
        verdict(v, 400, "Bad Request", "bad_request", "the request line has no end");
        return;
    }
    size_t ll = (size_t)(eol - b);
    if (ll && b[ll - 1] == '\r')
        ll--;
    const char *sp1 = memchr(b, ' ', ll);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', ll - (size_t)(sp1 + 1 - b)) : NULL;
    if (!sp1 || !sp2 || sp1 == b || sp2 == sp1 + 1) {
        verdict(v, 400, "Bad Request", "bad_request",
                "the request line is not \"METHOD TARGET HTTP/1.1\"");
        return;
    }
    for (const char *p = b; p < sp1; p++)
        if (!is_tchar((unsigned char)*p)) {
            verdict(v, 400, "Bad Request", "bad_request",
                    "the request line's method holds a character a method can't hold");
            return;
        }
    const char *ver = sp2 + 1;
    size_t vl = ll - (size_t)(ver - b);
    if (!(vl == 8 && (memcmp(ver, "HTTP/1.1", 8) == 0 || memcmp(ver, "HTTP/1.0", 8) == 0))) {
        if (vl >= 5 && memcmp(ver, "HTTP/", 5) == 0)
            verdict(v, 505, "HTTP Version Not Supported", "http_version_not_supported",
                    "the server speaks HTTP/1.1 (and 1.0); send the request as HTTP/1.1");
        else
            verdict(v, 400, "Bad Request", "bad_request",
                    "the request line is not \"METHOD TARGET HTTP/1.1\"");
        return;
    }
    const char *target = sp1 + 1;
    size_t tl = (size_t)(sp2 - target);
    for (size_t i = 0; i < tl; i++)
        if ((unsigned char)target[i] <= 0x20 || target[i] == 0x7f) {
            verdict(v, 400, "Bad Request", "bad_request",
                    "the request target holds a control character or a blank; percent-encode it");
            return;
        }
    if (tl > o->target_max) {
        verdict(v, 414, "URI Too Long", "uri_too_long",
                "the request target is %zu bytes; at most %zu are read", tl, o->target_max);
        return;
    }
    const char *q = memchr(target, '?', tl);
    if (q) {
        size_t params = 1;
        for (const char *p = q + 1; p < target + tl; p++)
            params += *p == '&';
        if (params > o->params_max) {
            verdict(v, 414, "URI Too Long", "uri_too_long",
                    "the query has %zu parameters; at most %zu are read (the API's routes take "
                    "a handful)",
                    params, o->params_max);
            return;
        }
    }
    /* The header lines. */
    const char *p = eol + 1, *end = b + n;
    size_t headers = 0, n_cl = 0, n_te = 0;
    unsigned long long cl = 0;
    bool chunked = false;
    while (p < end) {
        const char *le = memchr(p, '\n', (size_t)(end - p));
        if (!le)
            le = end;
        size_t len = (size_t)(le - p);
        if (len && p[len - 1] == '\r')
            len--;
        if (len == 0)
            break; /* the empty line */
        if (++headers > o->headers_max) {
            verdict(v, 431, "Request Header Fields Too Large", "headers_too_large",
                    "the request has more than %zu header lines", o->headers_max);
            return;
        }
        if (*p == ' ' || *p == '\t') {
            verdict(v, 400, "Bad Request", "bad_request",
                    "header line %zu is folded onto the one before (obsolete): send each header "
                    "on one line",
                    headers);
            return;
        }
        const char *colon = memchr(p, ':', len);
        bool good = colon && colon > p;
        for (const char *k = p; good && k < colon; k++)
            good = is_tchar((unsigned char)*k);
        for (const char *k = colon ? colon + 1 : p; good && k < p + len; k++)
            good = (unsigned char)*k >= 0x20 || *k == '\t';
        if (!good) {
            verdict(v, 400, "Bad Request", "bad_request",
                    "header line %zu is not \"Name: value\"", headers);
            return;
        }
        size_t nl = (size_t)(colon - p);
        const char *val = colon + 1;
        size_t vlen = len - nl - 1;
        if (nl == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
            unsigned long long x;
            if (!read_length(val, vlen, &x)) {
                verdict(v, 400, "Bad Request", "bad_request",
                        "Content-Length must be one decimal number of bytes");
                return;
            }
            if (n_cl++ && x != cl) {
                verdict(v, 400, "Bad Request", "bad_request",
                        "the request has two different Content-Length headers (%llu and %llu): "
                        "send one",
                        cl, x);
                return;
            }
            cl = x;
            v->has_length = true;
            v->content_length = x;
        } else if (nl == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0) {
            while (vlen && (*val == ' ' || *val == '\t'))
                val++, vlen--;
            while (vlen && (val[vlen - 1] == ' ' || val[vlen - 1] == '\t'))
                vlen--;
            n_te++;
            chunked = vlen == 7 && strncasecmp(val, "chunked", 7) == 0;
            v->chunked = chunked;
            if (!chunked || n_te > 1) {
                verdict(v, 400, "Bad Request", "bad_request",
                        "Transfer-Encoding must be \"chunked\", once");
                return;
            }
        }
        p = le + 1;
    }
    if (n_cl && n_te) {
        verdict(v, 400, "Bad Request", "bad_request",
                "the request has both Content-Length and Transfer-Encoding: send one");
        return;
    }
}

/* Hands C to a daemon; its count stays until the daemon closes it. */
static void hand_over(struct tw_gate *g, struct gate_conn *c)
{
    list_del(&g->heads, c);
    epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    struct MHD_Daemon *d = g->o.daemons[g->next_daemon++ % g->o.n_daemons];
    if (MHD_add_connection(d, c->fd, (const struct sockaddr *)&c->addr, c->alen) != MHD_YES)
        count_drop(g, c->key); /* the daemon closed the socket */
    bury(g, c);
}

/* ---- chunked bodies ---- */

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_TRAILER, CK_TRAILER_LF,
       CK_END_LF, CK_DONE };

#define CK_LINE_MAX 4096     /* a size line with its extensions */
#define CK_TRAILERS_MAX 16384

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

size_t tw_gate_chunks_feed(struct tw_gate_chunks *ck, const char *b, size_t n, uint64_t max,
                           bool *done, unsigned *status, char msg[256])
{
    *done = ck->state == CK_DONE;
    *status = 0;
    size_t i = 0;
#define CK_BAD(st, ...)                                                                            \
    do {                                                                                           \
        *status = (st);                                                                            \
        snprintf(msg, 256, __VA_ARGS__);                                                           \
        return i;                                                                                  \
    } while (0)
    while (i < n && ck->state != CK_DONE) {
        char ch = b[i];
        switch (ck->state) {
        case CK_SIZE: {
            /* The size's hex digits (leading zeros not counted), then at
             * once ';' and an extension, or the line's end, as
             * libmicrohttpd takes them. */
            int h = hexval(ch);
            if (h >= 0) {
                if (++ck->line > CK_LINE_MAX)
                    CK_BAD(400, "the chunked body is malformed: a chunk's size line is over %d "
                                "bytes",
                           CK_LINE_MAX);
                if ((uint64_t)h > max || ck->left > (max - (uint64_t)h) / 16)
                    CK_BAD(413, "a chunk's size is over the limit of %llu bytes (serve "
                                "--body-max)",
                           (unsigned long long)max);
                ck->left = ck->left * 16 + (uint64_t)h;
            } else if (ck->line && ch == ';') {
                ck->state = CK_EXT;
            } else if (ck->line && ch == '\r') {
                ck->state = CK_SIZE_LF;
            } else if (ck->line && ch == '\n') {
                ck->state = ck->left ? CK_DATA : CK_TRAILER;
                ck->line = 0;
            } else {
                CK_BAD(400, "the chunked body is malformed: a chunk's size is not a hex number");
            }
            break;
        }
        case CK_EXT:
            if (++ck->line > CK_LINE_MAX)
                CK_BAD(400, "the chunked body is malformed: a chunk's size line is over %d bytes",
                       CK_LINE_MAX);
            if (ch == '\r') {
                ck->state = CK_SIZE_LF;
            } else if (ch == '\n') {
                ck->state = ck->left ? CK_DATA : CK_TRAILER;
                ck->line = 0;
            } else if ((unsigned char)ch < 0x20 && ch != '\t') {
                CK_BAD(400, "the chunked body is malformed: a control character in a chunk's "
                            "size line");
            }
            break;
        case CK_SIZE_LF:
            if (ch != '\n')
                CK_BAD(400, "the chunked body is malformed: a chunk's size line does not end "
                            "with CRLF");
            ck->state = ck->left ? CK_DATA : CK_TRAILER;
            ck->line = 0;
            break;
        case CK_DATA: {
            size_t take = n - i < ck->left ? n - i : (size_t)ck->left;
            ck->left -= take;
            i += take;
            if (!ck->left)
                ck->state = CK_DATA_CR;
            continue;
        }
        case CK_DATA_CR:
            if (ch == '\r') {
                ck->state = CK_DATA_LF;
            } else if (ch == '\n') {
                ck->state = CK_SIZE;
            } else {
                CK_BAD(400, "the chunked body is malformed: a chunk is longer than its size");
            }
            break;
        case CK_DATA_LF:
            if (ch != '\n')
                CK_BAD(400, "the chunked body is malformed: a chunk is longer than its size");
            ck->state = CK_SIZE;
            break;
        case CK_TRAILER:
            /* At the start of a trailer line, or of the empty line ending
             * the body. */
            if (++ck->trailers > CK_TRAILERS_MAX)
                CK_BAD(400, "the chunked body's trailers are over %d bytes", CK_TRAILERS_MAX);
            /* A trailer line is a header line: a name of token
             * characters, ':', a value without control characters. */
            if (ch == '\r' && ck->line == 0) {
                ck->state = CK_END_LF;
            } else if (ch == '\n' && ck->line == 0) {
                ck->state = CK_DONE;
            } else if ((ch == '\n' || ch == '\r') && !ck->colon) {
                CK_BAD(400, "the chunked body is malformed: a trailer line is not \"Name: "
                            "value\"");
            } else if (ch == '\n') {
                ck->line = 0;
                ck->colon = false;
            } else if (ch == '\r') {
                ck->state = CK_TRAILER_LF;
            } else if (!ck->colon && ch == ':' && ck->line > 0) {
                ck->colon = true;
                ck->line++;
            } else if (!ck->colon && !is_tchar((unsigned char)ch)) {
                CK_BAD(400, "the chunked body is malformed: a trailer line is not \"Name: "
                            "value\" (its name is empty or has a character no header name "
                            "has)");
            } else if ((unsigned char)ch < 0x20 && ch != '\t') {
                CK_BAD(400, "the chunked body is malformed: a control character in a trailer");
            } else {
                ck->line++;
            }
            break;
        case CK_TRAILER_LF:
            if (ch != '\n')
                CK_BAD(400, "the chunked body is malformed: a trailer does not end with CRLF");
            ck->line = 0;
            ck->colon = false;
            ck->state = CK_TRAILER;
            break;
        case CK_END_LF:
            if (ch != '\n')
                CK_BAD(400, "the chunked body is malformed: it does not end with CRLF");
            ck->state = CK_DONE;
            break;
        }
        i++;
    }
#undef CK_BAD
    *done = ck->state == CK_DONE;
    return i;
}

/* Registers what the relay of C waits for (level-triggered). */
static void relay_interest(struct tw_gate *g, struct gate_conn *c)
{
    struct relay *r = c->rl;
    uint32_t efd = 0, esp = 0;
    if (r->body_left && !r->up_len)
        efd |= EPOLLIN;
    if (r->down_len)
        efd |= EPOLLOUT;
    if (r->up_len)
        esp |= EPOLLOUT;
    if (!r->down_len && !r->down_eof)
        esp |= EPOLLIN;
    /* A socket waited on for nothing is out of the set: its hang-up would
     * be reported again and again. */
    if (efd != r->ev_fd || !efd != !r->reg_fd) {
        struct epoll_event ev = {.events = efd, .data.ptr = c};
        if (!efd)
            epoll_ctl(g->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        else
            epoll_ctl(g->epfd, r->reg_fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
        r->reg_fd = efd != 0;
        r->ev_fd = efd;
    }
    if (esp != r->ev_sp || !esp != !r->reg_sp) {
        struct epoll_event ev = {.events = esp, .data.ptr = (char *)c + 1};
        if (!esp)
            epoll_ctl(g->epfd, EPOLL_CTL_DEL, r->sp, NULL);
        else
            epoll_ctl(g->epfd, r->reg_sp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, r->sp, &ev);
        r->reg_sp = esp != 0;
        r->ev_sp = esp;
    }
}

/* Moves what can move without waiting, both ways.  The client's end
 * after its body is not looked at: a half-close changes nothing. */
static void relay_pump(struct tw_gate *g, struct gate_conn *c, uint32_t events, bool from_client)
{
    struct relay *r = c->rl;
    if (from_client && (events & (EPOLLERR | EPOLLHUP))) {
        conn_close(g, c); /* the client is gone; the daemon sees its end */
        return;
    }
    for (bool moved = true; moved;) {
        moved = false;
        if (r->body_left && !r->up_len) {
            size_t want = r->body_left < sizeof(r->up) ? (size_t)r->body_left : sizeof(r->up);
            ssize_t n = recv(c->fd, r->up, want, MSG_DONTWAIT);
            if (n > 0 && r->chunked) {
                bool done;
                unsigned st;
                char msg[256];
                size_t body = tw_gate_chunks_feed(&r->ck, r->up, (size_t)n, g->o.body_max, &done,
                                                  &st, msg);
                if (st) {
                    /* The daemon sees the end of its side and drops the
                     * request; the client gets the JSON error. */
                    atomic_fetch_add(&g->refused, 1);
                    send_error(c->fd, st, st == 413 ? "Content Too Large" : "Bad Request",
                               st == 413 ? "body_too_large" : "bad_request", msg);
                    shutdown(c->fd, SHUT_WR);
                    to_drain(g, c);
                    return;
                }
                r->up_off = 0;
                r->up_len = body;
                if (done)
                    r->body_left = 0;
                moved = true;
            } else if (n > 0) {
                r->up_off = 0;
                r->up_len = (size_t)n;
                r->body_left -= (unsigned long long)n;
                moved = true;
            } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                conn_close(g, c); /* ended before its body: the daemon sees the end */
                return;
            }
        }
        if (r->up_len) {
            ssize_t n = send(r->sp, r->up + r->up_off, r->up_len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                r->up_off += (size_t)n;
                r->up_len -= (size_t)n;
                moved = true;
            } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                /* The daemon answered early (401, 413, ...) and closed: the
                 * rest of the body is dropped by the drain. */
                r->up_len = 0;
                r->body_left = 0;
                moved = true;
            }
        }
        if (!r->down_len && !r->down_eof) {
            ssize_t n = recv(r->sp, r->down, sizeof(r->down), MSG_DONTWAIT);
            if (n > 0) {
                r->down_off = 0;
                r->down_len = (size_t)n;
                moved = true;
            } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                r->down_eof = true;
                moved = true;
            }
        }
        if (r->down_len) {
            ssize_t n =
                send(c->fd, r->down + r->down_off, r->down_len, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                r->down_off += (size_t)n;
                r->down_len -= (size_t)n;
                moved = true;
            } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                conn_close(g, c);
                return;
            }
        }
        if (r->down_eof && !r->down_len) {
            /* The whole answer is out (the daemon closes after it). */
            shutdown(c->fd, SHUT_WR);
            to_drain(g, c);
            return;
        }
    }
    relay_interest(g, c);
}

/* Relays C (its head of END bytes is in, with a body of LEN bytes, or a
 * chunked one when LEN is 0). */
static void relay_start(struct tw_gate *g, struct gate_conn *c, size_t end, unsigned long long len)
{
    int sp[2];
    if (!relay_fds_take(g)) {
        refuse(g, c, 503, "Service Unavailable", "busy",
               "the server holds as many connections as it takes (a request with a body "
               "counts three descriptors); try again shortly (serve --max-connections)");
        return;
    }
    struct relay *r = calloc(1, sizeof(*r));
    if (!r || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0) {
        free(r);
        relay_fds_drop(g);
        relay_fds_drop(g);
        refuse(g, c, 503, "Service Unavailable", "busy",
               "the server can't take the request now (out of memory or descriptors); try "
               "again shortly");
        return;
    }
    /* The head, taken off the client's socket, goes to the daemon with
     * "Connection: close" after its request line. */
    char *head = g->buf;
    ssize_t got = recv(c->fd, head, end, MSG_DONTWAIT);
    const char *eol = got == (ssize_t)end ? memchr(head, '\n', end) : NULL;
    static const char close_hdr[] = "Connection: close\r\n";
    size_t first = eol ? (size_t)(eol - head) + 1 : 0;
    if (!eol || send(sp[0], head, first, MSG_NOSIGNAL) != (ssize_t)first ||
        send(sp[0], close_hdr, sizeof(close_hdr) - 1, MSG_NOSIGNAL) !=
            (ssize_t)(sizeof(close_hdr) - 1) ||
        send(sp[0], head + first, end - first, MSG_NOSIGNAL) != (ssize_t)(end - first)) {
        close(sp[0]);
        close(sp[1]);
        free(r);
        relay_fds_drop(g);
        relay_fds_drop(g);
        conn_close(g, c);
        return;
    }
    r->sp = sp[0];
    r->body_left = len;
    r->chunked = len == 0;
    if (r->chunked)
        r->body_left = UINT64_MAX;
    r->ev_fd = EPOLLIN | EPOLLRDHUP | EPOLLET; /* as registered for the head */
    r->reg_fd = true;
    list_del(&g->heads, c);
    c->state = G_RELAY;
    c->rl = r;
    list_add(&g->relays, c);
    struct MHD_Daemon *d = g->o.daemons[g->next_daemon++ % g->o.n_daemons];
    if (MHD_add_connection(d, sp[1], (const struct sockaddr *)&c->addr, c->alen) != MHD_YES) {
        relay_fds_drop(g); /* the daemon closed its end without a notification */
        conn_close(g, c);
        return;
    }
    relay_pump(g, c, 0, false);
}

/* New bytes (or the end) on a connection whose head is not in. */
static void on_head(struct tw_gate *g, struct gate_conn *c, uint32_t events)
{
    ssize_t n = recv(c->fd, g->buf, g->o.head_max + 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        conn_close(g, c); /* closed or reset before a whole head */
        return;
    }
    size_t len = (size_t)n;
    size_t from = c->scanned > 3 ? c->scanned - 3 : 0;
    size_t end = tw_gate_head_end(g->buf, len, from);
    c->scanned = len;
    if (!end) {
        if (len > g->o.head_max) {
            bool line = memchr(g->buf, '\n', len) != NULL;
            char msg[160];
            snprintf(msg, sizeof(msg),
                     "the request %s is over %zu bytes; at most %zu are read",
                     line ? "head (request line and headers)" : "line", g->o.head_max,
                     g->o.head_max);
            refuse(g, c, line ? 431 : 414,
                   line ? "Request Header Fields Too Large" : "URI Too Long",
                   line ? "headers_too_large" : "uri_too_long", msg);
        } else if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            conn_close(g, c); /* the client stopped sending mid-head */
        }
        return;
    }
    struct tw_gate_verdict v;
    tw_gate_check_head(g->buf, end, &g->o, &v);
    if (v.status)
        refuse(g, c, v.status, v.reason, v.code, v.msg);
    else if (v.has_length && v.content_length > 0 && len >= 5 && memcmp(g->buf, "POST ", 5) == 0)
        relay_start(g, c, end, v.content_length);
    else if (v.chunked && len >= 5 && memcmp(g->buf, "POST ", 5) == 0)
        relay_start(g, c, end, 0);
    else
        hand_over(g, c);
}

/* Reads and drops what C sent, DRAIN_READS buffers at most a wake-up (the
 * drain is level-triggered: what is left wakes the gate again, after the
 * other connections had their turn, so a client sending as fast as the
 * gate reads can't hold it here). */
#define DRAIN_READS 16
static void on_drain(struct tw_gate *g, struct gate_conn *c)
{
    for (int reads = 0; reads < DRAIN_READS; reads++) {
        ssize_t n = recv(c->fd, g->buf, g->o.head_max + 1, MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        conn_close(g, c);
        return;
    }
}
#undef DRAIN_READS

static void on_accept(struct tw_gate *g)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(g->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* EAGAIN: none left.  Out of descriptors (or memory): the
             * waiting connection stays in the backlog, and the listening
             * socket, level-triggered, would wake the gate at once again
             * and again; it rests a while instead, as closes free
             * descriptors. */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                epoll_ctl(g->epfd, EPOLL_CTL_DEL, g->lfd, NULL);
                g->accept_paused_until = mono_ms() + ACCEPT_PAUSE_MS;
            }
            return;
        }
        uint8_t key[TW_GATE_KEY_LEN];
        tw_gate_key((struct sockaddr *)&ss, key);
        int taken = count_take(g, key);
        if (taken != 0) {
            atomic_fetch_add(&g->refused, 1);
            if (taken == 1)
                send_error(fd, 503, "Service Unavailable", "busy",
                           "too many connections from this address; close some, or try again "
                           "shortly (serve --max-connections-per-client)");
            else if (taken == 2)
                send_error(fd, 503, "Service Unavailable", "busy",
                           "the server holds as many connections as it takes; try again "
                           "shortly (serve --max-connections)");
            close(fd);
            continue;
        }
        struct gate_conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            count_drop(g, key);
            continue;
        }
        c->fd = fd;
        c->addr = ss;
        c->alen = sl;
        memcpy(c->key, key, sizeof(key));
        c->state = G_HEAD;
        c->deadline_ms = mono_ms() + (int64_t)g->o.head_timeout_ms;
        list_add(&g->heads, c);
        if (g->o.tls) {
            hand_over(g, c);
            continue;
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
        if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            conn_close(g, c);
            continue;
        }
        on_head(g, c, 0); /* the head may be there already */
    }
}

/* Deadlines: a head not in by its deadline gets 408; a drain ends. */
static int sweep(struct tw_gate *g)
{
    int64_t now = mono_ms();
    if (g->accept_paused_until > 0 && g->accept_paused_until <= now && g->lfd >= 0) {
        struct epoll_event el = {.events = EPOLLIN, .data.ptr = &g->lfd};
        epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->lfd, &el);
        g->accept_paused_until = 0;
    }
    while (g->heads.head && g->heads.head->deadline_ms <= now) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "the request head did not arrive within %u ms (serve --header-timeout)",
                 g->o.head_timeout_ms);
        refuse(g, g->heads.head, 408, "Request Timeout", "request_timeout", msg);
    }
    while (g->drains.head && g->drains.head->deadline_ms <= now)
        conn_close(g, g->drains.head);
    int64_t next = -1;
    if (g->heads.head)
        next = g->heads.head->deadline_ms;
    if (g->drains.head && (next < 0 || g->drains.head->deadline_ms < next))
        next = g->drains.head->deadline_ms;
    if (g->accept_paused_until > 0 && (next < 0 || g->accept_paused_until < next))
        next = g->accept_paused_until;
    if (next < 0)
        return -1;
    return next - now > 0 ? (int)(next - now) + 1 : 1;
}

static void *gate_main(void *arg)
{
    struct tw_gate *g = arg;
    struct epoll_event evs[64];
    for (;;) {
        int timeout = sweep(g);
        int n = epoll_wait(g->epfd, evs, 64, timeout);
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &g->lfd) {
                on_accept(g);
            } else if (p == &g->wake) {
                uint64_t x;
                ssize_t r = read(g->wake, &x, sizeof(x));
                (void)r;
            } else if ((uintptr_t)p & 1) {
                struct gate_conn *c = (struct gate_conn *)((char *)p - 1);
                if (c->state == G_RELAY)
                    relay_pump(g, c, evs[i].events, false);
            } else {
                struct gate_conn *c = p;
                if (c->state == G_HEAD)
                    on_head(g, c, evs[i].events);
                else if (c->state == G_RELAY)
                    relay_pump(g, c, evs[i].events, true);
                else if (c->state == G_DRAIN)
                    on_drain(g, c);
                /* G_DEAD: closed (or handed over) earlier in this round */
            }
        }
        free_dead(g);
        if (atomic_load(&g->quiesce) && g->lfd >= 0) {
            epoll_ctl(g->epfd, EPOLL_CTL_DEL, g->lfd, NULL);
            close(g->lfd);
            g->lfd = -1;
            while (g->heads.head)
                conn_close(g, g->heads.head);
            atomic_store(&g->quiesced, true);
        }
        if (atomic_load(&g->exit))
            break;
    }
    if (g->lfd >= 0)
        close(g->lfd);
    g->lfd = -1;
    while (g->heads.head)
        conn_close(g, g->heads.head);
    while (g->relays.head)
        conn_close(g, g->relays.head);
    while (g->drains.head)
        conn_close(g, g->drains.head);
    free_dead(g);
    atomic_store(&g->quiesced, true);
    return NULL;
}

enum tw_err tw_gate_start(const struct tw_gate_opts *o, int lfd, struct tw_gate **out,
                          struct tw_error *err)
{
    *out = NULL;
    struct tw_gate *g = calloc(1, sizeof(*g));
    if (!g)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    g->o = *o;
    g->lfd = lfd;
    g->epfd = g->wake = -1;
    pthread_mutex_init(&g->lock, NULL);
    g->buf = malloc(o->head_max + 1);
    int fl = fcntl(lfd, F_GETFL);
    if (!g->buf || fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK) != 0 ||
        (g->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (g->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        int e = errno;
        g->lfd = -1; /* the caller closes it */
        tw_gate_free(g);
        return tw_error_set(err, TW_EIO, "can't set up the listening socket: %s", strerror(e));
    }
    struct epoll_event el = {.events = EPOLLIN, .data.ptr = &g->lfd};
    struct epoll_event ew = {.events = EPOLLIN, .data.ptr = &g->wake};
    if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, lfd, &el) != 0 ||
        epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->wake, &ew) != 0 ||
        pthread_create(&g->thread, NULL, gate_main, g) != 0) {
        int e = errno;
        g->lfd = -1;
        tw_gate_free(g);
        return tw_error_set(err, TW_EIO, "can't start the accepting thread: %s", strerror(e));
    }
    g->started = true;
    *out = g;
    return TW_OK;
}

static void wake(struct tw_gate *g)
{
    uint64_t one = 1;
    ssize_t w = write(g->wake, &one, sizeof(one));
    (void)w;
}

void tw_gate_stop(struct tw_gate *g)
{
    if (!g || !g->started)
        return;
    atomic_store(&g->quiesce, true);
    wake(g);
    /* Back once the listening socket is closed (new connections refused). */
    for (int i = 0; i < 2000 && !atomic_load(&g->quiesced); i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Ends the thread: relays still under way are cut. */
static void gate_join(struct tw_gate *g)
{
    if (!g)
        return;
    if (!g->started)
        return;
    atomic_store(&g->exit, true);
    wake(g);
    pthread_join(g->thread, NULL);
    g->started = false;
}

void tw_gate_join(struct tw_gate *g)
{
    gate_join(g);
}

void tw_gate_free(struct tw_gate *g)
{
    if (!g)
        return;
    gate_join(g);
    if (g->lfd >= 0)
        close(g->lfd);
    if (g->epfd >= 0)
        close(g->epfd);
    if (g->wake >= 0)
        close(g->wake);
    for (size_t i = 0; i < CLIENT_BUCKETS; i++)
        while (g->clients[i]) {
            struct client *c = g->clients[i];
            g->clients[i] = c->next;
            free(c);
        }
    pthread_mutex_destroy(&g->lock);
    free(g->buf);
    free(g);
}
