/* test_server.c - the listen address parser, and a server started in
 * process on 127.0.0.1 port 0, asked with libcurl, and stopped. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "server/server.h"

static void test_listen(void **state)
{
    (void)state;
    char host[64];
    unsigned port;
    struct tw_error err = {0};
    assert_int_equal(tw_server_parse_listen("127.0.0.1:8080", host, sizeof(host), &port, &err),
                     TW_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(tw_server_parse_listen("localhost:0", host, sizeof(host), &port, &err), TW_OK);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 0);
    assert_int_equal(tw_server_parse_listen("10.1.2.3", host, sizeof(host), &port, &err), TW_OK);
    assert_int_equal(port, 8080);
    assert_int_equal(tw_server_parse_listen("[::1]:9000", host, sizeof(host), &port, &err), TW_OK);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9000);
    static const char *const bad[] = {
        "",       ":80",  "127.0.0.1:", "127.0.0.1:x",    "127.0.0.1:65536",
        "::1:80", "[::1", "[::1]x",     "example.com:80", "127.0.0.1:-1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        assert_int_equal(tw_server_parse_listen(bad[i], host, sizeof(host), &port, &err),
                         TW_EINVAL);
        assert_true(err.msg[0] != '\0');
    }
}

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
    struct tw_buf *b = arg;
    return tw_buf_append(b, p, size * n) == TW_OK ? size * n : 0;
}

static long get(const char *url, struct tw_buf *body)
{
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    return status;
}

static void test_start_stop(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char db[4200], url[256];
    snprintf(db, sizeof(db), "%s/t.db", dir);
    struct tw_server_options o = {.db_path = db, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    assert_true(tw_server_port(srv) > 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", tw_server_port(srv));
    assert_string_equal(tw_server_url(srv), url);

    struct tw_buf body;
    tw_buf_init(&body, 1 << 20);
    snprintf(url, sizeof(url), "%s/healthz", tw_server_url(srv));
    assert_int_equal(get(url, &body), 200);
    assert_string_equal(body.data, "{\"status\":\"ok\"}\n");
    tw_buf_cleanup(&body);
    snprintf(url, sizeof(url), "%s/api/v1/vms", tw_server_url(srv));
    assert_int_equal(get(url, &body), 401);
    tw_buf_cleanup(&body);
    /* No web directory: a file path is a 404, not a crash. */
    snprintf(url, sizeof(url), "%s/index.html", tw_server_url(srv));
    assert_int_equal(get(url, &body), 404);
    tw_buf_cleanup(&body);
    snprintf(url, sizeof(url), "%s/metrics", tw_server_url(srv));
    assert_int_equal(get(url, &body), 200);
    assert_non_null(strstr(body.data, "tierwise_reports_stored 0\n"));
    tw_buf_cleanup(&body);

    /* A request counts once its answer is sent, which may be after curl
     * has it: wait (at most 5 s) for the four. */
    struct tw_server_counts n;
    for (int i = 0; i < 500; i++) {
        tw_server_counts(srv, &n);
        if (n.requests == 4)
            break;
        usleep(10000);
    }
    assert_int_equal(n.requests, 4);
    tw_server_stop(srv, 2000);
    /* Stopped: nothing answers. */
    assert_int_equal(get(url, &body), 0);
    tw_buf_cleanup(&body);

    /* Refusals before anything listens. */
    struct tw_server_options half = {.db_path = db, .listen = "127.0.0.1:0", .tls_cert_pem = "x"};
    assert_int_equal(tw_server_start(&half, &srv, &err), TW_EINVAL);
    struct tw_server_options nodb = {.listen = "127.0.0.1:0"};
    assert_int_equal(tw_server_start(&nodb, &srv, &err), TW_EINVAL);
    struct tw_server_options noweb = {.db_path = db, .web_dir = "/nonexistent/web"};
    assert_int_equal(tw_server_start(&noweb, &srv, &err), TW_ENOENT);
    assert_null(srv);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_start_stop),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
