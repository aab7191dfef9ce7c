/* test_hardening.c - the server against hostile clients, in process on
 * 127.0.0.1 port 0 over raw sockets: request heads libmicrohttpd would
 * answer with HTML or not at all (JSON errors, at once), two Content-Length
 * headers, the header deadline, the connection limits per client address
 * and in all with /healthz answering through them, the bound of request
 * bodies in flight, the open-files limit raised at start, a client that
 * half-closes after its POST, and /healthz and /metrics on a disk that
 * takes no more data (RLIMIT_FSIZE: no root needed), and clients that
 * reset their POST mid-body, and the server out of descriptors.
 * ctest-parts: heads framing deadline limits flood bodies fdlimit halfclose fulldisk abort
 * ctest-parts: fdcap probe */
#include "testhelp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/buf.h"
#include "server/auth.h"
#include "server/server.h"
#include "store/store.h"

static void buf_printf(struct tw_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void buf_printf(struct tw_buf *b, const char *fmt, ...)
{
    char s[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof(s), fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(s));
    assert_int_equal(tw_buf_append(b, s, (size_t)n), TW_OK);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct fixture {
    char *dir;
    char db[4200];
    char agent[TW_TOKEN_LEN + 1];
    struct tw_server *srv;
    unsigned port;
};

static void add_token(struct fixture *f)
{
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->db, &st, &err), TW_OK);
    assert_int_equal(tw_auth_token_new(f->agent, &err), TW_OK);
    uint8_t h[32];
    assert_int_equal(tw_auth_hash(f->agent, strlen(f->agent), h, &err), TW_OK);
    int64_t id;
    assert_int_equal(tw_store_token_add(st, "agent", TW_ROLE_AGENT, h, &id, &err), TW_OK);
    tw_store_close(st);
}

static void start(struct fixture *f, struct tw_server_options *o)
{
    memset(f, 0, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
    add_token(f);
    o->db_path = f->db;
    o->listen = "127.0.0.1:0";
    if (!o->threads)
        o->threads = 2;
    struct tw_error err = {0};
    if (tw_server_start(o, &f->srv, &err) != TW_OK)
        fail_msg("the server did not start: %s", err.msg);
    f->port = tw_server_port(f->srv);
}

static void stop(struct fixture *f)
{
    tw_server_stop(f->srv, 2000);
    th_rmtree(f->dir);
    free(f->dir);
}

/* A connection to the server from SRC (NULL: 127.0.0.1), or -1 when SRC
 * can't be bound. */
static int dial(const struct fixture *f, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    if (src) {
        inet_pton(AF_INET, src, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            close(fd);
            return -1;
        }
    }
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    a.sin_port = htons((uint16_t)f->port);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* the server closed: what it answered is read next */
        p += w;
        n -= (size_t)w;
    }
}

/* Reads what FD answers until the server closes it, or WAIT_MS pass
 * (NUL-terminated in OUT; the length returned). */
static size_t read_answer(int fd, char *out, size_t cap, int wait_ms)
{
    size_t n = 0;
    int64_t end = now_ms() + wait_ms;
    while (n + 1 < cap) {
        int left = (int)(end - now_ms());
        if (left <= 0)
            break;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, left) <= 0)
            break;
        ssize_t r = recv(fd, out + n, cap - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    out[n] = '\0';
    return n;
}

/* Sends REQ (LEN bytes) on a new connection and reads the answer. */
static size_t ask(const struct fixture *f, const char *req, size_t len, char *out, size_t cap,
                  int wait_ms)
{
    int fd = dial(f, NULL);
    send_all(fd, req, len);
    size_t n = read_answer(fd, out, cap, wait_ms);
    close(fd);
    return n;
}

/* The status of the first answer in A, and its body's error code. */
static unsigned status_of(const char *a)
{
    unsigned st = 0;
    if (sscanf(a, "HTTP/1.%*c %u", &st) != 1)
        return 0;
    return st;
}

static void expect_json_error(const char *a, unsigned status, const char *code)
{
    if (status_of(a) != status)
        fail_msg("want %u %s, got: %.300s", status, code, a);
    const char *hdr_end = strstr(a, "\r\n\r\n");
    assert_non_null(hdr_end);
    assert_non_null(strstr(a, "Content-Type: application/json"));
    json_error_t je;
    json_t *v = json_loadb(hdr_end + 4, strlen(hdr_end + 4), JSON_DISABLE_EOF_CHECK, &je);
    if (!v)
        fail_msg("the body of the %u is not JSON (%s): %.300s", status, je.text, hdr_end + 4);
    const char *c = json_string_value(json_object_get(json_object_get(v, "error"), "code"));
    const char *m = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
    if (!c || strcmp(c, code) != 0 || !m || !*m)
        fail_msg("want code %s with a message, got: %.300s", code, hdr_end + 4);
    json_decref(v);
}

/* How many answers (status lines) A holds. */
static int answers_in(const char *a)
{
    int n = 0;
    for (const char *p = a; (p = strstr(p, "HTTP/1.1 ")) != NULL; p++)
        n++;
    return n;
}

static unsigned healthz(const struct fixture *f, const char *src)
{
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    int fd = dial(f, src);
    if (fd < 0)
        return 0;
    send_all(fd, req, sizeof(req) - 1);
    char a[4096];
    read_answer(fd, a, sizeof(a), 3000);
    close(fd);
    return status_of(a);
}

/* ---- heads libmicrohttpd answers with HTML, or not at all ---- */

static void test_heads(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    static char a[65536];
    struct {
        const char *req;
        unsigned status;
        const char *code;
    } cases[] = {
        {"GET /healthz HTTP/2.0\r\nHost: t\r\n\r\n", 505, "http_version_not_supported"},
        {"GET /healthz HTTP/1.7\r\nHost: t\r\n\r\n", 505, "http_version_not_supported"},
        {"GARBAGE\r\n\r\n", 400, "bad_request"},
        {"GET /healthz HTTP/1.1\r\nHost: t\r\nno colon here\r\n\r\n", 400, "bad_request"},
        {"GET /healthz HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n folded\r\n\r\n", 400, "bad_request"},
        {"POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n", 400,
         "bad_request"},
        {"POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
         "Transfer-Encoding: chunked\r\n\r\n",
         400, "bad_request"},
        {"POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 400,
         "bad_request"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ask(&f, cases[i].req, strlen(cases[i].req), a, sizeof(a), 3000);
        expect_json_error(a, cases[i].status, cases[i].code);
    }

    /* 500 query parameters: libmicrohttpd runs out of memory and answers
     * nothing until the idle timeout; 414 at once. */
    struct tw_buf b;
    tw_buf_init(&b, 1 << 20);
    buf_printf(&b, "GET /api/v1/vms?");
    for (int i = 0; i < 500; i++)
        buf_printf(&b, "%sa%d=1", i ? "&" : "", i);
    buf_printf(&b, " HTTP/1.1\r\nHost: t\r\n\r\n");
    int64_t t0 = now_ms();
    ask(&f, b.data, b.len, a, sizeof(a), 5000);
    assert_true(now_ms() - t0 < 2000);
    expect_json_error(a, 414, "uri_too_long");
    tw_buf_cleanup(&b);

    /* A target of 40 KB (414) and a header of 40 KB (431). */
    tw_buf_init(&b, 1 << 20);
    buf_printf(&b, "GET /");
    for (int i = 0; i < 40000; i++)
        tw_buf_append(&b, "a", 1);
    buf_printf(&b, " HTTP/1.1\r\nHost: t\r\n\r\n");
    ask(&f, b.data, b.len, a, sizeof(a), 3000);
    expect_json_error(a, 414, "uri_too_long");
    tw_buf_cleanup(&b);
    tw_buf_init(&b, 1 << 20);
    buf_printf(&b, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ");
    for (int i = 0; i < 40000; i++)
        tw_buf_append(&b, "a", 1);
    buf_printf(&b, "\r\n\r\n");
    ask(&f, b.data, b.len, a, sizeof(a), 3000);
    expect_json_error(a, 431, "headers_too_large");
    tw_buf_cleanup(&b);
    /* 3,000 short header lines. */
    tw_buf_init(&b, 1 << 20);
    buf_printf(&b, "GET /healthz HTTP/1.1\r\nHost: t\r\n");
    for (int i = 0; i < 3000; i++)
        buf_printf(&b, "X%d: y\r\n", i);
    buf_printf(&b, "\r\n");
    ask(&f, b.data, b.len, a, sizeof(a), 3000);
    expect_json_error(a, 431, "headers_too_large");
    tw_buf_cleanup(&b);

    /* A chunked body whose framing is wrong: JSON, not libmicrohttpd's
     * HTML 400 and 413; a good one reaches the handler. */
    struct {
        const char *body;
        unsigned status;
        const char *code;
    } chunks[] = {
        {"zz\r\nabc\r\n0\r\n\r\n", 400, "bad_request"},
        {"ffffffffffffffffffffffff\r\nabc", 413, "body_too_large"},
        {"3\r\nabcXX\r\n0\r\n\r\n", 400, "bad_request"},
        {"2\r\n{}\r\n0\r\n\r\n", 400, "invalid_report"},
        {"1;ext=1\r\n[\r\n1\r\n]\r\n0\r\nX-Trailer: 1\r\n\r\n", 400, "invalid_report"},
        /* a blank between the size and its extension; a trailer line
         * that is no "Name: value"; a size of leading zeros past 16
         * digits is no big chunk */
        {"2 ;x\r\n{}\r\n0\r\n\r\n", 400, "bad_request"},
        {"2\r\n{}\r\n0\r\nno colon here\r\n\r\n", 400, "bad_request"},
        {"2\r\n{}\r\n0\r\n: no name\r\n\r\n", 400, "bad_request"},
        {"000000000000000000002\r\n{}\r\n0\r\n\r\n", 400, "invalid_report"},
    };
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        char req[1024];
        int n = snprintf(req, sizeof(req),
                         "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                         "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n%s",
                         f.agent, chunks[i].body);
        ask(&f, req, (size_t)n, a, sizeof(a), 3000);
        expect_json_error(a, chunks[i].status, chunks[i].code);
    }

    /* A good head still passes, with LF or CRLF line ends. */
    static const char lf[] = "GET /healthz HTTP/1.0\nHost: t\n\n";
    ask(&f, lf, sizeof(lf) - 1, a, sizeof(a), 3000);
    assert_int_equal(status_of(a), 200);
    assert_int_equal(healthz(&f, NULL), 200);
    stop(&f);
}

/* ---- two Content-Length headers: refused, the rest is no request ---- */

static void test_framing(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    static char a[65536];
    const char inner[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                     "Content-Length: 0\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(inner), inner);
    /* As the first request of a connection ... */
    ask(&f, req, (size_t)n, a, sizeof(a), 2000);
    expect_json_error(a, 400, "bad_request");
    assert_int_equal(answers_in(a), 1);
    /* ... and as the second of a keep-alive one. */
    int fd = dial(&f, NULL);
    send_all(fd, inner, strlen(inner));
    char first[4096] = "";
    size_t got = 0;
    int64_t end = now_ms() + 3000;
    while (!strstr(first, "{\"status\":\"ok\"}") && now_ms() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            ssize_t r = recv(fd, first + got, sizeof(first) - 1 - got, 0);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        first[got] = '\0';
    }
    assert_int_equal(status_of(first), 200);
    send_all(fd, req, (size_t)n);
    read_answer(fd, a, sizeof(a), 2000);
    close(fd);
    expect_json_error(a, 400, "bad_request");
    assert_int_equal(answers_in(a), 1);
    stop(&f);
}

/* ---- the header deadline ---- */

static void test_deadline(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {.header_timeout_ms = 400};
    start(&f, &o);
    static char a[65536];
    /* Half a head, then nothing: 408 at the deadline, and closed. */
    int fd = dial(&f, NULL);
    send_all(fd, "GET /healthz HTTP/1.1\r\nHo", 25);
    int64_t t0 = now_ms();
    read_answer(fd, a, sizeof(a), 3000);
    int64_t took = now_ms() - t0;
    close(fd);
    expect_json_error(a, 408, "request_timeout");
    assert_true(took >= 300 && took < 2000);
    /* A byte every 100 ms keeps an idle timeout from firing, not the
     * deadline. */
    fd = dial(&f, NULL);
    const char *slow = "GET /healthz HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    t0 = now_ms();
    bool cut = false;
    for (size_t i = 0; slow[i] && !cut; i++) {
        if (send(fd, slow + i, 1, MSG_NOSIGNAL) != 1)
            cut = true;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) > 0)
            cut = true;
    }
    read_answer(fd, a, sizeof(a), 2000);
    close(fd);
    assert_true(cut);
    expect_json_error(a, 408, "request_timeout");
    assert_true(now_ms() - t0 < 2500);
    assert_int_equal(healthz(&f, NULL), 200);
    stop(&f);
}

/* ---- connection limits; /healthz answers through them ---- */

static bool metric_is(const struct fixture *f, const char *line);

/* Waits (5 s at most) until the server holds N connections open: those
 * dialled accepted, those closed counted out. */
static void wait_open(const struct fixture *f, unsigned n)
{
    for (int i = 0; i < 500 && tw_server_open_connections(f->srv) != n; i++)
        usleep(10 * 1000);
    assert_int_equal(tw_server_open_connections(f->srv), n);
}

static void test_limits(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {.max_connections = 12, .max_connections_per_client = 8};
    start(&f, &o);
    int probe = dial(&f, "127.0.0.2");
    if (probe < 0) {
        stop(&f);
        skip(); /* no 127.0.0.2 on this loopback */
    }
    close(probe);
    usleep(100 * 1000);
    static char a[65536];
    /* A slow client: 8 connections that send nothing. */
    int slow[16];
    for (int i = 0; i < 8; i++)
        slow[i] = dial(&f, "127.0.0.2");
    wait_open(&f, 8);
    /* Its ninth is refused with JSON at once ... */
    int extra = dial(&f, "127.0.0.2");
    read_answer(extra, a, sizeof(a), 2000);
    close(extra);
    expect_json_error(a, 503, "busy");
    assert_non_null(strstr(a, "Retry-After: 5"));
    /* ... while another address is answered. */
    assert_int_equal(healthz(&f, NULL), 200);
    wait_open(&f, 8); /* the healthz connection gone */
    /* (the scrape is a ninth connection, and counts itself) */
    assert_true(metric_is(&f, "\ntierwise_connections_open 9\n"));
    wait_open(&f, 8);
    /* A third address fills the limit in all (8 + 4 = 12) ... */
    for (int i = 8; i < 12; i++)
        slow[i] = dial(&f, "127.0.0.3");
    wait_open(&f, 12);
    int over = dial(&f, NULL);
    read_answer(over, a, sizeof(a), 2000);
    close(over);
    expect_json_error(a, 503, "busy");
    /* ... and a connection closed gives its place back. */
    for (int i = 0; i < 12; i++)
        close(slow[i]);
    unsigned st = 0;
    for (int i = 0; i < 50 && st != 200; i++) {
        usleep(50 * 1000);
        st = healthz(&f, NULL);
    }
    assert_int_equal(st, 200);
    stop(&f);
}

/* The flood: hundreds of connections from one address that send
 * nothing hold their address's places (64 here; 1,024 by default), the
 * rest are refused, and /healthz from another address answers at once. */
static void test_flood(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {.max_connections_per_client = 64};
    start(&f, &o);
    int probe = dial(&f, "127.0.0.2");
    if (probe < 0) {
        stop(&f);
        skip();
    }
    close(probe);
    wait_open(&f, 0);
    enum { N = 400 };
    int fds[N], refused = 0;
    static char a[4096];
    for (int i = 0; i < N; i++) {
        fds[i] = dial(&f, "127.0.0.2");
        if (i >= 64) {
            /* each one past the 64th is answered and closed at once */
            read_answer(fds[i], a, sizeof(a), 2000);
            refused += status_of(a) == 503;
            close(fds[i]);
            fds[i] = -1;
        }
    }
    assert_int_equal(refused, N - 64);
    wait_open(&f, 64);
    char line[64];
    snprintf(line, sizeof(line), "\ntierwise_connections_refused_total %d\n", N - 64);
    assert_true(metric_is(&f, line));
    int64_t t0 = now_ms();
    assert_int_equal(healthz(&f, NULL), 200);
    assert_true(now_ms() - t0 < 1000);
    for (int i = 0; i < 64; i++)
        close(fds[i]);
    wait_open(&f, 0);
    stop(&f);
}

/* ---- the bound of request bodies in flight ---- */

static void test_bodies(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {.body_max = 3000, .body_memory_max = 4000};
    start(&f, &o);
    static char a[65536];
    char head[512];
    int hn = snprintf(head, sizeof(head),
                      "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      "Content-Type: application/json\r\nConnection: close\r\nContent-Length: 2500\r\n\r\n",
                      f.agent);
    /* A holds 2,500 announced bytes and sends them slowly. */
    int held = dial(&f, NULL);
    send_all(held, head, (size_t)hn);
    send_all(held, "{\"a\":", 5);
    usleep(300 * 1000);
    /* B's 2,500 would pass the 4,000: 503 busy with Retry-After. */
    ask(&f, head, (size_t)hn, a, sizeof(a), 2000);
    expect_json_error(a, 503, "busy");
    assert_non_null(strstr(a, "Retry-After: 5"));
    /* A chunked body grows past it too. */
    char chead[512];
    int cn = snprintf(chead, sizeof(chead),
                      "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "7d0\r\n",
                      f.agent);
    int ch = dial(&f, NULL);
    send_all(ch, chead, (size_t)cn);
    char filler[2000];
    memset(filler, ' ', sizeof(filler));
    send_all(ch, filler, sizeof(filler));
    send_all(ch, "\r\n0\r\n\r\n", 7);
    read_answer(ch, a, sizeof(a), 3000);
    close(ch);
    expect_json_error(a, 503, "busy");
    /* A finishes (not a report: 400), and gives its bytes back. */
    char rest[2495];
    memset(rest, ' ', sizeof(rest));
    send_all(held, rest, sizeof(rest));
    read_answer(held, a, sizeof(a), 3000);
    close(held);
    expect_json_error(a, 400, "invalid_report");
    int again = dial(&f, NULL);
    send_all(again, head, (size_t)hn);
    send_all(again, "[", 1);
    send_all(again, rest, sizeof(rest) - 1);
    send_all(again, filler, 5);
    read_answer(again, a, sizeof(a), 3000);
    close(again);
    expect_json_error(a, 400, "invalid_report");
    stop(&f);
}

/* ---- the open-files limit ---- */

static void test_fdlimit(void **state)
{
    (void)state;
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max <= 512)
        skip(); /* no room above the soft limit to raise it to */
    struct rlimit low = {256, was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    struct rlimit now;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
    assert_true(now.rlim_cur == was.rlim_max);
    struct tw_server_limits l;
    tw_server_limits(f.srv, &l);
    assert_true(l.max_connections >= 1 && l.max_connections <= 4096);
    assert_true(l.max_connections < l.fd_limit);
    assert_int_equal(l.max_connections_per_client,
                     l.max_connections < 1024 ? l.max_connections : 1024);
    assert_int_equal(l.header_timeout_ms, 10000);
    stop(&f);
    /* A limit that the descriptors can't hold is refused at start. */
    struct rlimit cap = {256, 256};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* in a child: lowering the hard limit can't be undone */
        setrlimit(RLIMIT_NOFILE, &cap);
        char *dir = th_tmpdir();
        char db[4200];
        snprintf(db, sizeof(db), "%s/t.db", dir);
        struct tw_server_options big = {
            .db_path = db, .listen = "127.0.0.1:0", .threads = 2, .max_connections = 4000};
        struct tw_server *srv = NULL;
        struct tw_error err = {0};
        enum tw_err rc = tw_server_start(&big, &srv, &err);
        bool said = strstr(err.msg, "--max-connections 4000") && strstr(err.msg, "ulimit -n");
        th_rmtree(dir);
        free(dir);
        _exit(rc == TW_EINVAL && said && !srv ? 0 : 1);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    setrlimit(RLIMIT_NOFILE, &was);
}

/* ---- out of descriptors ---- */

static void put(int fd, const void *p, size_t n)
{
    assert_true(write(fd, p, n) == (ssize_t)n);
}

static void get(int fd, void *p, size_t n)
{
    assert_true(read(fd, p, n) == (ssize_t)n);
}

/* The server in a child under a low hard limit of open files (256): a
 * relayed POST holds three descriptors, so as many as the limit in all of
 * them held by the clients (in this process) must not run the server out
 * of descriptors.  Without that, accept fails with EMFILE while the
 * listening socket keeps waking the gate: it spins and answers nothing.
 * Now the requests past what the descriptors hold are answered 503 at
 * once, the gate sleeps, and /healthz answers once the clients leave. */
static void test_fdcap(void **state)
{
    (void)state;
    int down[2], up[2];
    assert_int_equal(pipe(down), 0);
    assert_int_equal(pipe(up), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        struct rlimit cap = {256, 256};
        if (setrlimit(RLIMIT_NOFILE, &cap) != 0)
            _exit(3);
        struct fixture f;
        struct tw_server_options o = {0};
        start(&f, &o);
        struct tw_server_limits l;
        tw_server_limits(f.srv, &l);
        put(up[1], &f.port, sizeof(f.port));
        put(up[1], &l.max_connections, sizeof(l.max_connections));
        put(up[1], f.agent, sizeof(f.agent));
        char cmd = 0;
        struct timespec t0 = {0}, t1 = {0};
        while (read(down[0], &cmd, 1) == 1 && cmd != 'q') {
            if (cmd == 'a')
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
            if (cmd == 'b') {
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
                int64_t ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
                put(up[1], &ms, sizeof(ms));
            }
        }
        stop(&f);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    struct fixture f = {0};
    unsigned maxc = 0;
    get(up[0], &f.port, sizeof(f.port));
    get(up[0], &maxc, sizeof(maxc));
    get(up[0], f.agent, sizeof(f.agent));
    assert_true(maxc >= 16 && maxc < 256);
    char head[512];
    int hn = snprintf(head, sizeof(head),
                      "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"a\":",
                      f.agent);
    int *held = calloc(maxc, sizeof(int));
    assert_non_null(held);
    for (unsigned i = 0; i < maxc; i++) {
        held[i] = dial(&f, NULL);
        send_all(held[i], head, (size_t)hn);
    }
    usleep(300 * 1000);
    put(down[1], "a", 1);
    /* More clients: each is answered (busy) rather than left waiting. */
    static char a[65536];
    unsigned answered = 0;
    for (int i = 0; i < 6; i++) {
        static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        ask(&f, req, sizeof(req) - 1, a, sizeof(a), 1000);
        answered += status_of(a) != 0;
        usleep(100 * 1000);
    }
    put(down[1], "b", 1);
    int64_t cpu_ms = 0;
    get(up[0], &cpu_ms, sizeof(cpu_ms));
    for (unsigned i = 0; i < maxc; i++)
        close(held[i]);
    free(held);
    unsigned st = 0;
    for (int i = 0; i < 50 && st != 200; i++) {
        usleep(100 * 1000);
        st = healthz(&f, NULL);
    }
    put(down[1], "q", 1);
    close(down[1]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    close(up[0]);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(answered, 6);
    /* A spinning gate burns the whole ~1.5 s; a sleeping one next to nothing. */
    if (cpu_ms > 400)
        fail_msg("the server used %lld ms of CPU in 1.5 s while out of descriptors",
                 (long long)cpu_ms);
    assert_int_equal(st, 200);
}

/* ---- a client that half-closes after its POST is answered ---- */

static void test_halfclose(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {.threads = 2};
    start(&f, &o);
    size_t len = 0;
    char *tmpl = th_fixture("reports/web-03.json", &len);
    json_error_t je;
    json_t *rep = json_loadb(tmpl, len, 0, &je);
    assert_non_null(rep);
    free(tmpl);
    static char a[65536];
    /* Many at once, so that the writer's batches are under way while the
     * ends arrive. */
    enum { N = 48, ROUNDS = 4 };
    int answered = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int fds[N];
        for (int i = 0; i < N; i++) {
            char id[64];
            snprintf(id, sizeof(id), "6a1f3c55-0000-4000-8000-%012d", round * N + i);
            json_object_set_new(rep, "id", json_string(id));
            char *body = json_dumps(rep, JSON_COMPACT);
            char head[512];
            int hn = snprintf(head, sizeof(head),
                              "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "
                              "%s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                              f.agent, strlen(body));
            fds[i] = dial(&f, NULL);
            send_all(fds[i], head, (size_t)hn);
            send_all(fds[i], body, strlen(body));
            shutdown(fds[i], SHUT_WR);
            free(body);
        }
        for (int i = 0; i < N; i++) {
            read_answer(fds[i], a, sizeof(a), 5000);
            close(fds[i]);
            answered += status_of(a) == 201;
        }
    }
    int n = N * ROUNDS;
    json_decref(rep);
    assert_int_equal(answered, n);
    stop(&f);
}

/* The write probe leaves a file of the user's beside the database alone
 * (it was the probe's fixed name, truncated and removed), and leaves no
 * file of its own behind. */
static void test_probe(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    char mine[4300];
    snprintf(mine, sizeof(mine), "%s-healthz", f.db);
    FILE *fp = fopen(mine, "w");
    assert_non_null(fp);
    fputs("the user's\n", fp);
    fclose(fp);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(healthz(&f, NULL), 200);
        assert_true(metric_is(&f, "\ntierwise_store_writable 1\n"));
    }
    usleep(2300 * 1000); /* a probe of the thread's ran */
    assert_int_equal(healthz(&f, NULL), 200);
    char back[64] = "";
    fp = fopen(mine, "r");
    assert_non_null(fp);
    assert_non_null(fgets(back, sizeof(back), fp));
    fclose(fp);
    assert_string_equal(back, "the user's\n");
    unlink(mine);
    char *dir = strdup(f.dir);
    assert_non_null(dir);
    tw_server_stop(f.srv, 2000);
    f.srv = NULL;
    char cmd[4400];
    snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q healthz", dir);
    assert_int_not_equal(system(cmd), 0);
    th_rmtree(dir);
    free(dir);
    free(f.dir);
}

/* ---- clients that abort their POST ---- */

struct blaster {
    const struct fixture *f;
    atomic_bool stop;
};

/* Keeps the gate busy draining: connections with a bad head that go on
 * sending. */
static void *blast(void *arg)
{
    struct blaster *b = arg;
    static char junk[65536];
    memset(junk, 'x', sizeof(junk));
    while (!atomic_load(&b->stop)) {
        int fd = dial(b->f, NULL);
        send_all(fd, "BAD\r\n\r\n", 7);
        for (int i = 0; i < 64 && !atomic_load(&b->stop); i++)
            if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL) <= 0)
                break;
        close(fd);
    }
    return NULL;
}

/* Many clients send a POST head announcing a big body, a few bytes of it,
 * and reset the connection (once the daemon may have answered), while
 * others are being drained: each connection is closed and counted out once
 * (a second close would free it twice or close a descriptor another
 * connection reuses). */
static void test_abort(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    static const char head[] = "POST /api/v1/reports HTTP/1.1\r\nHost: t\r\nContent-Type: "
                               "application/json\r\nContent-Length: 5000000\r\n\r\n{\"a\":1";
    enum { BLASTERS = 2, BATCH = 16 };
    struct blaster b = {.f = &f};
    pthread_t th[BLASTERS];
    for (int i = 0; i < BLASTERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, blast, &b), 0);
    int64_t end = now_ms() + 2500;
    unsigned aborted = 0;
    for (unsigned round = 0; now_ms() < end; round++) {
        int fds[BATCH];
        for (int i = 0; i < BATCH; i++) {
            fds[i] = dial(&f, NULL);
            send_all(fds[i], head, sizeof(head) - 1);
        }
        usleep(round % 3 * 500);
        for (int i = 0; i < BATCH; i++) {
            struct linger lg = {1, 0};
            setsockopt(fds[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
            close(fds[i]);
            aborted++;
        }
    }
    atomic_store(&b.stop, true);
    for (int i = 0; i < BLASTERS; i++)
        pthread_join(th[i], NULL);
    assert_true(aborted > 100);
    assert_int_equal(healthz(&f, NULL), 200);
    wait_open(&f, 0);
    stop(&f);
}

/* ---- a disk that takes no more data ---- */

static bool metric_is(const struct fixture *f, const char *line)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    static char a[1 << 20];
    ask(f, req, sizeof(req) - 1, a, sizeof(a), 3000);
    return strstr(a, line) != NULL;
}

static void test_fulldisk(void **state)
{
    (void)state;
    struct fixture f;
    struct tw_server_options o = {0};
    start(&f, &o);
    static char a[65536];
    assert_int_equal(healthz(&f, NULL), 200);
    assert_true(metric_is(&f, "\ntierwise_store_writable 1\n"));
    /* No file of this process may grow: every write that needs new space
     * fails, as on a full disk. */
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    struct rlimit none = {0, was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
    unsigned st = 0;
    for (int i = 0; i < 60 && st != 503; i++) {
        static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        ask(&f, req, sizeof(req) - 1, a, sizeof(a), 3000);
        st = status_of(a);
        if (st != 503)
            usleep(100 * 1000);
    }
    assert_int_equal(st, 503);
    expect_json_error(a, 503, "store_degraded");
    const char *body = strstr(a, "\r\n\r\n") + 4;
    json_t *v = json_loads(body, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "status")), "degraded");
    const char *why =
        json_string_value(json_object_get(json_object_get(v, "store"), "reason"));
    assert_non_null(why);
    assert_non_null(strstr(why, "full"));
    json_decref(v);
    assert_non_null(strstr(a, "Retry-After: 5"));
    assert_true(metric_is(&f, "\ntierwise_store_writable 0\n"));
    /* Space again: ok once the next probe ran. */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    for (int i = 0; i < 60 && st != 200; i++) {
        usleep(100 * 1000);
        st = healthz(&f, NULL);
    }
    assert_int_equal(st, 200);
    assert_true(metric_is(&f, "\ntierwise_store_writable 1\n"));
    stop(&f);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest all[] = {
        cmocka_unit_test(test_heads),     cmocka_unit_test(test_framing),
        cmocka_unit_test(test_deadline),  cmocka_unit_test(test_limits),
        cmocka_unit_test(test_flood),
        cmocka_unit_test(test_bodies),    cmocka_unit_test(test_fdlimit),
        cmocka_unit_test(test_halfclose), cmocka_unit_test(test_fulldisk),
        cmocka_unit_test(test_abort),     cmocka_unit_test(test_fdcap),
        cmocka_unit_test(test_probe),
    };
    static const char *const names[] = {"heads",  "framing", "deadline",  "limits", "flood",
                                        "bodies", "fdlimit", "halfclose", "fulldisk",
                                        "abort",  "fdcap",    "probe"};
    if (argc > 1) {
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
            if (strcmp(argv[1], names[i]) == 0)
                return _cmocka_run_group_tests(names[i], &all[i], 1, NULL, NULL);
        fprintf(stderr, "no part %s\n", argv[1]);
        return 2;
    }
    return cmocka_run_group_tests(all, NULL, NULL);
}
