/* test_http.c - the libcurl wrapper against a scripted server on 127.0.0.1. */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure/http.h"
#include "fakesrv.h"

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Test options: loopback only, waits recorded instead of slept. */
static void opts(struct tw_az_http_opts *o, struct fs_sleeps *z)
{
    tw_az_http_opts_default(o);
    o->loopback_only = true;
    o->connect_timeout_ms = 1000;
    o->attempt_timeout_ms = 3000;
    o->budget_ms = 20000;
    o->max_attempts = 4;
    o->backoff_base_ms = 100;
    o->backoff_max_ms = 1000;
    o->sleep_ms = fs_sleep;
    o->sleep_arg = z;
}

static enum tw_err get(const struct tw_az_http_opts *o, const char *url,
                       struct tw_az_http_resp *resp, struct tw_error *err)
{
    struct tw_az_http *h = tw_az_http_new(o, err);
    assert_non_null(h);
    static const char *const hdrs[] = {"Metadata: true", NULL};
    enum tw_err rc = tw_az_http_request(h, "GET", url, hdrs, NULL, 0, resp, err);
    tw_az_http_free(h);
    return rc;
}

static void test_get_ok(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "{\"ok\": true}", NULL, 0}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    char url[128], v[32];
    snprintf(url, sizeof(url), "%s/metadata/instance?api-version=2021-02-01", s->base);
    assert_int_equal(get(&o, url, &r, &err), TW_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.attempts, 1);
    assert_string_equal(r.body.data, "{\"ok\": true}");
    assert_true(tw_az_http_resp_header(&r, "x-test", v, sizeof(v)));
    assert_string_equal(v, "fakesrv");
    assert_false(tw_az_http_resp_header(&r, "Retry-After", v, sizeof(v)));
    assert_string_equal(s->path, "/metadata/instance");
    assert_string_equal(s->api_version, "2021-02-01");
    assert_string_equal(s->metadata, "true");
    assert_string_equal(s->forwarded, "");
    assert_int_equal(z.n, 0);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_post_patch(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{202, "{}", NULL, 0}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    struct tw_error err = {0};
    struct tw_az_http *h = tw_az_http_new(&o, &err);
    assert_non_null(h);
    struct tw_az_http_resp r;
    const char *hdrs[] = {"Content-Type: application/json", NULL};
    const char *body = "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}";
    char url[128];
    snprintf(url, sizeof(url), "%s/disk", s->base);
    assert_int_equal(tw_az_http_request(h, "PATCH", url, hdrs, body, strlen(body), &r, &err),
                     TW_OK);
    assert_int_equal(r.status, 202);
    assert_string_equal(s->method, "PATCH");
    assert_string_equal(s->body, body);
    tw_az_http_resp_cleanup(&r);
    /* The same handle, reset between requests: a POST, then a GET. */
    assert_int_equal(tw_az_http_request(h, "POST", url, NULL, "a=1", 3, &r, &err), TW_OK);
    assert_string_equal(s->method, "POST");
    assert_string_equal(s->body, "a=1");
    tw_az_http_resp_cleanup(&r);
    assert_int_equal(tw_az_http_request(h, "GET", url, NULL, NULL, 0, &r, &err), TW_OK);
    assert_string_equal(s->method, "GET");
    assert_string_equal(s->body, "");
    tw_az_http_resp_cleanup(&r);
    assert_int_equal(tw_az_http_request(h, "TRACE", url, NULL, NULL, 0, &r, &err), TW_EINVAL);
    tw_az_http_resp_cleanup(&r);
    tw_az_http_free(h);
    fs_stop(s);
}

static void test_retry_503_then_ok(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){
        {503, "busy", NULL, 0}, {503, "busy", NULL, 0}, {200, "done", NULL, 0}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_OK);
    assert_int_equal(r.attempts, 3);
    assert_int_equal(fs_requests(s), 3);
    assert_string_equal(r.body.data, "done");
    /* Exponential backoff with jitter: step 100 then 200, each in [step/2, step]. */
    assert_int_equal(z.n, 2);
    assert_in_range(z.ms[0], 50, 100);
    assert_in_range(z.ms[1], 100, 200);
    assert_int_equal(r.waited_ms, z.ms[0] + z.ms[1]);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_429_retry_after(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){
        {429, "{\"error\": {\"code\": \"TooManyRequests\", \"message\": \"slow down\"}}", "2", 0},
        {200, "ok", NULL, 0},
        {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_OK);
    assert_int_equal(r.attempts, 2);
    /* Retry-After: 2 outweighs the 100 ms backoff. */
    assert_int_equal(z.n, 1);
    assert_int_equal(z.ms[0], 2000);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_retry_after_beyond_budget(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{429, "", "120", 0}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.budget_ms = 5000;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_EIO);
    assert_int_equal(r.attempts, 1);
    assert_int_equal(r.status, 429);
    assert_int_equal(z.n, 0);
    assert_non_null(strstr(err.msg, "HTTP 429 Too Many Requests"));
    assert_non_null(strstr(err.msg, "retry after 120 s"));
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_give_up_after_n(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){
        {503, "{\"error\": {\"code\": \"ServerBusy\", \"message\": \"try later\"}}", NULL, 0},
        {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_EIO);
    assert_int_equal(r.attempts, 4);
    assert_int_equal(fs_requests(s), 4);
    assert_int_equal(z.n, 3);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(err.msg, "HTTP 503 Service Unavailable (4 attempts): "
                                    "ServerBusy: try later"));
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_status_codes(void **state)
{
    (void)state;
    static const struct {
        unsigned status;
        const char *body;
        enum tw_err want;
        const char *words;
    } cases[] = {
        {400,
         "{\"error\": \"bad_request_102\", \"error_description\": \"Required metadata "
         "header not specified\"}",
         TW_EINVAL, "HTTP 400 Bad Request: bad_request_102: Required metadata header"},
        {401, "", TW_EPERM, "HTTP 401 Unauthorized"},
        {403, "{\"error\": {\"code\": \"AuthorizationFailed\", \"message\": \"no\"}}", TW_EPERM,
         "AuthorizationFailed: no"},
        {404, "not here", TW_ENOENT, "HTTP 404 Not Found: not here"},
        {409,
         "{\"error\":{\"code\":\"Conflict\",\"message\":\"Disk resizing is allowed only "
         "when creating a VM or when the VM is deallocated.\"}}",
         TW_EINVAL, "Conflict: Disk resizing"},
        {501, "", TW_EIO, "HTTP 501"},
        {302, "", TW_EIO, "HTTP 302"},
    };
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fakesrv *s =
            fs_start((struct fs_reply[]){{cases[i].status, cases[i].body, NULL, 0}, {0}});
        assert_non_null(s);
        struct tw_az_http_resp r;
        struct tw_error err = {0};
        assert_int_equal(get(&o, s->base, &r, &err), cases[i].want);
        /* None of these is worth a retry. */
        assert_int_equal(r.attempts, 1);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("status %u: \"%s\" lacks \"%s\"", cases[i].status, err.msg, cases[i].words);
        tw_az_http_resp_cleanup(&r);
        fs_stop(s);
    }
    assert_int_equal(z.n, 0);
}

static void test_retry_not_found(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start(
        (struct fs_reply[]){{404, "", NULL, 0}, {410, "", NULL, 0}, {200, "t", NULL, 0}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.retry_not_found = true;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_OK);
    assert_int_equal(r.attempts, 3);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_body_cap(void **state)
{
    (void)state;
    char *big = malloc(100001);
    assert_non_null(big);
    memset(big, 'x', 100000);
    big[100000] = '\0';
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, big, NULL, 0}, {0}});
    free(big);
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.max_body = 1024;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, s->base, &r, &err), TW_ENOMEM);
    assert_int_equal(r.attempts, 1);
    assert_true(r.body.len <= 1024);
    assert_non_null(strstr(err.msg, "larger than 1024 bytes"));
    tw_az_http_resp_cleanup(&r);
    /* At exactly the ceiling it fits. */
    fs_script(s, (struct fs_reply[]){{200, "0123456789", NULL, 0}, {0}});
    o.max_body = 10;
    assert_int_equal(get(&o, s->base, &r, &err), TW_OK);
    assert_int_equal(r.body.len, 10);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_timeout(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "late", NULL, 3000}, {0}});
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.attempt_timeout_ms = 200;
    o.max_attempts = 2;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(get(&o, s->base, &r, &err), TW_EIO);
    long ms = elapsed_ms(&t0);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.net, TW_AZ_NET_TIMEOUT);
    assert_true(tw_az_http_unreachable(&r));
    assert_non_null(strstr(err.msg, "timed out (2 attempts)"));
    assert_in_range(ms, 350, 2500);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_budget_bounds_total_time(void **state)
{
    (void)state;
    /* Real sleeps this time: a 600 ms budget holds however many attempts
     * are allowed, against a server that never answers in time. */
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "late", NULL, 5000}, {0}});
    assert_non_null(s);
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    o.loopback_only = true;
    o.attempt_timeout_ms = 250;
    o.budget_ms = 600;
    o.max_attempts = 100;
    o.backoff_base_ms = 50;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(get(&o, s->base, &r, &err), TW_EIO);
    long ms = elapsed_ms(&t0);
    assert_in_range(ms, 250, 1200);
    assert_in_range(r.attempts, 2, 4);
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_refused(void **state)
{
    (void)state;
    unsigned short port = fs_closed_port();
    assert_true(port > 0);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.max_attempts = 3;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)port);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, url, &r, &err), TW_EIO);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.net, TW_AZ_NET_REFUSED);
    assert_true(tw_az_http_unreachable(&r));
    assert_int_equal(r.attempts, 3);
    assert_int_equal(z.n, 2);
    assert_non_null(strstr(err.msg, "connection refused"));
    assert_non_null(strstr(err.msg, url));
    tw_az_http_resp_cleanup(&r);
}

static void test_imds_defaults_fail_fast(void **state)
{
    (void)state;
    /* The IMDS defaults against a port where nothing listens: the whole
     * call, retries and real backoff included, stays well under 2 s. */
    unsigned short port = fs_closed_port();
    struct tw_az_http_opts o;
    tw_az_http_opts_imds(&o);
    o.loopback_only = true;
    assert_true(o.no_proxy);
    assert_true(o.budget_ms <= 2000);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)port);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(get(&o, url, &r, &err), TW_EIO);
    assert_true(elapsed_ms(&t0) < 2000);
    assert_true(tw_az_http_unreachable(&r));
    tw_az_http_resp_cleanup(&r);
}

/* A listener that accepts each connection and closes it at once. */
struct dropper {
    int fd;
    unsigned short port;
    pthread_t th;
    volatile int stop;
    int accepted;
};

static void *drop_loop(void *arg)
{
    struct dropper *d = arg;
    while (!d->stop) {
        int c = accept(d->fd, NULL, NULL);
        if (c < 0)
            break;
        d->accepted++;
        close(c);
    }
    return NULL;
}

static void test_dropped_connection(void **state)
{
    (void)state;
    struct dropper d = {0};
    d.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    assert_int_equal(bind(d.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(d.fd, 8), 0);
    assert_int_equal(getsockname(d.fd, (struct sockaddr *)&sa, &sl), 0);
    d.port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&d.th, NULL, drop_loop, &d), 0);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.max_attempts = 2;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)d.port);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, url, &r, &err), TW_EIO);
    assert_int_equal(r.net, TW_AZ_NET_DROPPED);
    assert_false(tw_az_http_unreachable(&r));
    assert_int_equal(r.attempts, 2);
    assert_non_null(strstr(err.msg, "dropped"));
    tw_az_http_resp_cleanup(&r);
    d.stop = 1;
    shutdown(d.fd, SHUT_RDWR);
    close(d.fd);
    pthread_join(d.th, NULL);
}

static void test_loopback_only(void **state)
{
    (void)state;
    /* 0.0.0.0 is outside 127.0.0.0/8 yet, were the guard to fail, Linux
     * would connect it to this machine: the test itself can't leak. */
    unsigned short port = fs_closed_port();
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    char url[64];
    snprintf(url, sizeof(url), "http://0.0.0.0:%u/x", (unsigned)port);
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    assert_int_equal(get(&o, url, &r, &err), TW_EPERM);
    assert_int_equal(r.net, TW_AZ_NET_BLOCKED);
    assert_int_equal(r.attempts, 0); /* refused before anything was sent */
    assert_non_null(strstr(err.msg, "loopback-only"));
    tw_az_http_resp_cleanup(&r);
    /* The environment switch turns it on in the defaults. */
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    tw_az_http_opts_default(&o);
    assert_true(o.loopback_only);
    setenv("TIERWISE_LOOPBACK_ONLY", "0", 1);
    tw_az_http_opts_default(&o);
    assert_false(o.loopback_only);
    unsetenv("TIERWISE_LOOPBACK_ONLY");
}

static void test_proxy_not_used_for_loopback(void **state)
{
    (void)state;
    /* An inherited proxy (here a dead one, on loopback too) must not carry
     * a request for a loopback server. */
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "direct", NULL, 0}, {0}});
    assert_non_null(s);
    char proxy[64];
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", (unsigned)fs_closed_port());
    setenv("http_proxy", proxy, 1);
    setenv("HTTP_PROXY", proxy, 1);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    opts(&o, &z);
    o.max_attempts = 1;
    struct tw_az_http_resp r;
    struct tw_error err = {0};
    enum tw_err rc = get(&o, s->base, &r, &err);
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    assert_int_equal(rc, TW_OK);
    assert_string_equal(r.body.data, "direct");
    tw_az_http_resp_cleanup(&r);
    fs_stop(s);
}

static void test_url_is_loopback(void **state)
{
    (void)state;
    assert_true(tw_az_url_is_loopback("http://127.0.0.1:8080"));
    assert_true(tw_az_url_is_loopback("http://127.9.8.7/x"));
    assert_true(tw_az_url_is_loopback("http://localhost"));
    assert_true(tw_az_url_is_loopback("http://[::1]:99/"));
    assert_false(tw_az_url_is_loopback("http://169.254.169.254"));
    assert_false(tw_az_url_is_loopback("https://management.azure.com"));
    assert_false(tw_az_url_is_loopback("http://128.0.0.1"));
    assert_false(tw_az_url_is_loopback("http://localhost.example.com"));
    assert_false(tw_az_url_is_loopback("127.0.0.1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_ok),
        cmocka_unit_test(test_post_patch),
        cmocka_unit_test(test_retry_503_then_ok),
        cmocka_unit_test(test_429_retry_after),
        cmocka_unit_test(test_retry_after_beyond_budget),
        cmocka_unit_test(test_give_up_after_n),
        cmocka_unit_test(test_status_codes),
        cmocka_unit_test(test_retry_not_found),
        cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_budget_bounds_total_time),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_imds_defaults_fail_fast),
        cmocka_unit_test(test_dropped_connection),
        cmocka_unit_test(test_loopback_only),
        cmocka_unit_test(test_proxy_not_used_for_loopback),
        cmocka_unit_test(test_url_is_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
