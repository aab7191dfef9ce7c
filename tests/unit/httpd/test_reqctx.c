/* test_reqctx.c - the shared libmicrohttpd request skeleton: the "append
 * until done" step on its own, and a real daemon on 127.0.0.1 port 0 with a
 * capped body: a small body is dispatched whole (announced or chunked), an
 * over-cap one is answered 413 by the caller with nothing of it held, and
 * every context is freed by the completion callback (ASan finds a leak). */
#include "testhelp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd/reqctx.h"

#define CAP 64

static void test_take(void **state)
{
    (void)state;
    struct tw_buf b;
    tw_buf_init(&b, 8);
    bool too_big = false;
    size_t n = 5;
    assert_int_equal(tw_httpd_take(&b, &too_big, "hello", &n), TW_HTTPD_MORE);
    assert_int_equal(n, 0);
    n = 3;
    assert_int_equal(tw_httpd_take(&b, &too_big, "abc", &n), TW_HTTPD_MORE);
    assert_int_equal(b.len, 8);
    assert_string_equal(b.data, "helloabc");
    n = 0;
    assert_int_equal(tw_httpd_take(&b, &too_big, NULL, &n), TW_HTTPD_DISPATCH);
    /* One byte over: the body is dropped, not kept in part. */
    n = 1;
    assert_int_equal(tw_httpd_take(&b, &too_big, "x", &n), TW_HTTPD_MORE);
    assert_true(too_big);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    n = 2;
    assert_int_equal(tw_httpd_take(&b, &too_big, "yz", &n), TW_HTTPD_MORE);
    assert_null(b.data);
    n = 0;
    assert_int_equal(tw_httpd_take(&b, &too_big, NULL, &n), TW_HTTPD_TOO_BIG);
    /* A body the caller does not keep is read and dropped. */
    bool tb = false;
    n = 4;
    assert_int_equal(tw_httpd_take(NULL, &tb, "drop", &n), TW_HTTPD_MORE);
    assert_int_equal(n, 0);
    assert_false(tb);
    n = 0;
    assert_int_equal(tw_httpd_take(NULL, &tb, NULL, &n), TW_HTTPD_DISPATCH);
    tw_buf_cleanup(&b);
}

/* ---- a daemon built on the skeleton ---- */

static atomic_int opened, completed;

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version;
    struct tw_httpd_req *rq = *con_cls;
    if (!rq) {
        if (!(rq = tw_httpd_req_new(CAP)))
            return MHD_NO;
        *con_cls = rq;
        atomic_fetch_add(&opened, 1);
        return MHD_YES;
    }
    switch (tw_httpd_req_step(rq, upload_data, upload_data_size)) {
    case TW_HTTPD_MORE: return MHD_YES;
    case TW_HTTPD_TOO_BIG:
        if (rq->body.data || rq->body.len)
            return answer(conn, 500, "an over-cap body was kept");
        return answer(conn, 413, "too big");
    case TW_HTTPD_DISPATCH: break;
    }
    char text[CAP + 16];
    snprintf(text, sizeof(text), "got %zu:%s", rq->body.len, rq->body.data ? rq->body.data : "");
    return answer(conn, 200, text);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)conn, (void)toe;
    if (*con_cls)
        atomic_fetch_add(&completed, 1);
    tw_httpd_req_completed(con_cls);
    assert_null(*con_cls);
}

struct daemon {
    struct MHD_Daemon *d;
    unsigned port;
};

static void daemon_start(struct daemon *dm)
{
    int fd = -1;
    struct tw_error err = {0};
    bool v6 = true;
    if (tw_httpd_listen("127.0.0.1", 0, 16, &fd, &dm->port, &v6, &err) != TW_OK)
        fail_msg("tw_httpd_listen: %s", err.msg);
    assert_false(v6);
    assert_true(dm->port > 0);
    dm->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                 MHD_USE_POLL,
                             0, NULL, NULL, on_request, NULL, MHD_OPTION_LISTEN_SOCKET,
                             (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                             MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    assert_non_null(dm->d);
}

/* Sends REQ on a new connection and reads the whole answer (the request
 * says Connection: close); returns its status, the body in BODY. */
static int roundtrip(const struct daemon *dm, const char *req, size_t req_len, char *body,
                     size_t body_size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)dm->port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    for (size_t off = 0; off < req_len;) {
        ssize_t w = write(fd, req + off, req_len - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
    static char in[16384];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(in) - 1 && (r = read(fd, in + got, sizeof(in) - 1 - got)) > 0)
        got += (size_t)r;
    close(fd);
    in[got] = '\0';
    int status = 0;
    if (sscanf(in, "HTTP/1.%*d %d", &status) != 1)
        fail_msg("no status line in \"%s\"", in);
    const char *b = strstr(in, "\r\n\r\n");
    snprintf(body, body_size, "%s", b ? b + 4 : "");
    return status;
}

static int post(const struct daemon *dm, const char *data, size_t len, char *body, size_t size)
{
    size_t cap = len + 256;
    char *req = malloc(cap);
    assert_non_null(req);
    int n = snprintf(req, cap,
                     "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     len);
    memcpy(req + n, data, len);
    int st = roundtrip(dm, req, (size_t)n + len, body, size);
    free(req);
    return st;
}

static void test_daemon(void **state)
{
    (void)state;
    atomic_store(&opened, 0);
    atomic_store(&completed, 0);
    struct daemon dm;
    daemon_start(&dm);
    char body[256];

    /* No body, a small one, one exactly at the cap. */
    assert_int_equal(roundtrip(&dm, "GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                               strlen("GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"),
                               body, sizeof(body)),
                     200);
    assert_string_equal(body, "got 0:");
    assert_int_equal(post(&dm, "{\"a\":1}", 7, body, sizeof(body)), 200);
    assert_string_equal(body, "got 7:{\"a\":1}");
    char full[CAP + 1];
    memset(full, 'k', CAP);
    full[CAP] = '\0';
    assert_int_equal(post(&dm, full, CAP, body, sizeof(body)), 200);
    char want[CAP + 16];
    snprintf(want, sizeof(want), "got %d:%s", CAP, full);
    assert_string_equal(body, want);

    /* One byte over the cap, and far over it. */
    char over[CAP + 1];
    memset(over, 'o', sizeof(over));
    assert_int_equal(post(&dm, over, sizeof(over), body, sizeof(body)), 413);
    assert_string_equal(body, "too big");
    size_t big_len = 100000;
    char *big = malloc(big_len);
    assert_non_null(big);
    memset(big, 'b', big_len);
    assert_int_equal(post(&dm, big, big_len, body, sizeof(body)), 413);
    free(big);

    /* Chunked: the body comes in pieces, small then over the cap. */
    const char *chunked_small = "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n"
                                "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
    assert_int_equal(roundtrip(&dm, chunked_small, strlen(chunked_small), body, sizeof(body)), 200);
    assert_string_equal(body, "got 7:abcdefg");
    char chunked_big[1024];
    size_t off = (size_t)snprintf(chunked_big, sizeof(chunked_big),
                                  "POST /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 5; i++) {
        off += (size_t)snprintf(chunked_big + off, sizeof(chunked_big) - off, "20\r\n");
        memset(chunked_big + off, 'c', 32);
        off += 32;
        off += (size_t)snprintf(chunked_big + off, sizeof(chunked_big) - off, "\r\n");
    }
    off += (size_t)snprintf(chunked_big + off, sizeof(chunked_big) - off, "0\r\n\r\n");
    assert_int_equal(roundtrip(&dm, chunked_big, off, body, sizeof(body)), 413);

    /* Stopping joins every connection's thread; each context that was
     * opened has been freed by the completion callback. */
    MHD_stop_daemon(dm.d);
    assert_int_equal(atomic_load(&opened), 7);
    assert_int_equal(atomic_load(&completed), 7);
}

static void test_listen(void **state)
{
    (void)state;
    struct tw_error err = {0};
    int fd = -1;
    unsigned port = 0;
    bool v6 = false;
    assert_int_equal(tw_httpd_listen("example.com", 0, 4, &fd, &port, &v6, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "example.com"));
    /* A port in use is refused with the reason. */
    unsigned p1;
    int fd1;
    assert_int_equal(tw_httpd_listen("127.0.0.1", 0, 4, &fd1, &p1, NULL, &err), TW_OK);
    assert_int_equal(tw_httpd_listen("127.0.0.1", p1, 4, &fd, &port, NULL, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "give another port"));
    close(fd1);
    /* IPv6 loopback, where the machine has it. */
    if (tw_httpd_listen("::1", 0, 4, &fd, &port, &v6, &err) == TW_OK) {
        assert_true(v6);
        assert_true(port > 0);
        close(fd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_daemon),
        cmocka_unit_test(test_listen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
