/* test_sim.c - the simulator's daemon: loopback-only listening on port 0,
 * routing, the body ceiling, every fault kind, and the admin surface
 * (faults, request log, clock, power). */
#include "simtest.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void post_fault(struct tw_sim *sim, const char *json)
{
    struct st_resp r;
    st_request(sim, &r, "POST", "/_sim/faults", NULL, json);
    if (r.status != 200)
        fail_msg("POST /_sim/faults %s: %ld %s", json, r.status, r.body);
    st_free(&r);
}

static void test_listen(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        enum tw_err rc;
        const char *host;
        unsigned port;
    } cases[] = {
        {"127.0.0.1:0", TW_OK, "127.0.0.1", 0},
        {"127.0.0.1:8080", TW_OK, "127.0.0.1", 8080},
        {"localhost:9000", TW_OK, "127.0.0.1", 9000},
        {"127.1.2.3", TW_OK, "127.1.2.3", 0},
        {"0.0.0.0:8080", TW_EPERM, "", 0},
        {"10.0.0.4:80", TW_EPERM, "", 0},
        {"169.254.169.254:80", TW_EPERM, "", 0},
        {"example.com:80", TW_EPERM, "", 0},
        {"[::1]:80", TW_EPERM, "", 0},
        {"127.0.0.1:99999", TW_EINVAL, "", 0},
        {"127.0.0.1:", TW_EINVAL, "", 0},
        {":80", TW_EINVAL, "", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char host[64] = "";
        unsigned port = 1;
        struct tw_error err = {0};
        enum tw_err rc = tw_sim_parse_listen(cases[i].spec, host, sizeof(host), &port, &err);
        if (rc != cases[i].rc)
            fail_msg("%s: %d (%s), want %d", cases[i].spec, rc, err.msg, cases[i].rc);
        if (rc == TW_OK) {
            assert_string_equal(host, cases[i].host);
            assert_int_equal(port, cases[i].port);
        } else {
            assert_non_null(strstr(err.msg, cases[i].spec));
        }
    }
    /* tw_sim_start refuses too, and frees the scenario it was given. */
    struct tw_sim *sim = (void *)1;
    struct tw_error err = {0};
    struct tw_sim_options opt = {.host = "0.0.0.0", .port = 0};
    assert_int_equal(tw_sim_start(st_scenario(NULL, NULL), &opt, &sim, &err), TW_EPERM);
    assert_null(sim);
    assert_non_null(strstr(err.msg, "loopback"));
}

static void test_start_stop(void **state)
{
    (void)state;
    struct tw_sim *a = st_start(NULL, NULL), *b = st_start(NULL, NULL);
    assert_int_not_equal(tw_sim_port(a), tw_sim_port(b));
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", tw_sim_port(a));
    assert_string_equal(tw_sim_url(a), url);
    /* A port in use is refused with the reason. */
    struct tw_sim *c = NULL;
    struct tw_error err = {0};
    struct tw_sim_options opt = {.host = "127.0.0.1", .port = tw_sim_port(a)};
    assert_int_equal(tw_sim_start(st_scenario(NULL, NULL), &opt, &c, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "in use"));
    struct st_resp r;
    st_request(a, &r, "GET", "/_sim/state", NULL, NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    tw_sim_stop(a);
    /* Stopped: nothing answers there any more. */
    st_request(b, &r, "GET", url, NULL, NULL);
    assert_int_equal(r.rc, CURLE_COULDNT_CONNECT);
    st_free(&r);
    tw_sim_stop(b);
    tw_sim_stop(NULL);
}

static void test_routes(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    static const char *const md[] = {"Metadata: true", NULL};
    /* Each surface answers unknown paths and methods in its own shape. */
    st_request(sim, &r, "POST", "/metadata/instance?api-version=2021-02-01", md, "{}");
    assert_int_equal(r.status, 405);
    assert_true(json_is_string(json_object_get(r.json, "error")));
    st_free(&r);
    st_request(sim, &r, "GET", "/metadata/nothing", md, NULL);
    assert_int_equal(r.status, 404);
    assert_true(json_is_string(json_object_get(r.json, "error")));
    st_free(&r);
    st_request(sim, &r, "GET", "/subscriptions/" ST_SUB "/providers/Microsoft.Storage/x", NULL,
               NULL);
    assert_int_equal(r.status, 404);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r.json, "error"), "code")),
        "InvalidResourceType");
    st_free(&r);
    st_request(sim, &r, "DELETE", "/api/retail/prices", NULL, NULL);
    assert_int_equal(r.status, 405);
    assert_non_null(json_object_get(json_object_get(r.json, "Error"), "Code"));
    st_free(&r);
    st_request(sim, &r, "GET", "/_sim/nothing", NULL, NULL);
    assert_int_equal(r.status, 404);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_body_cap(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    size_t n = (1u << 20) + 10;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    struct st_resp r;
    st_request(sim, &r, "POST", "/_sim/faults", NULL, big);
    assert_int_equal(r.status, 413);
    st_free(&r);
    free(big);
    /* The simulator goes on serving. */
    st_request(sim, &r, "GET", "/_sim/faults", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "faults")), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_fault_error_count(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    post_fault(sim, "{\"kind\": \"error\", \"path\": \"/metadata/instance\", \"status\": 503, "
                    "\"count\": 2}");
    struct st_resp r;
    for (int i = 0; i < 3; i++) {
        st_imds(sim, &r, "/metadata/instance?api-version=2021-02-01");
        assert_int_equal(r.status, i < 2 ? 503 : 200);
        if (i < 2) /* IMDS's own error shape */
            assert_true(json_is_string(json_object_get(r.json, "error")));
        st_free(&r);
    }
    /* Other paths were never affected. */
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.status, 200);
    st_free(&r);
    st_request(sim, &r, "GET", "/_sim/faults", NULL, NULL);
    json_t *f = json_array_get(json_object_get(r.json, "faults"), 0);
    assert_int_equal(json_integer_value(json_object_get(f, "fired")), 2);
    assert_int_equal(json_integer_value(json_object_get(f, "matched")), 3);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_fault_throttle(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct tw_sim_fault f;
    struct tw_error err = {0};
    assert_int_equal(
        tw_sim_fault_parse("kind=throttle,path=/subscriptions/,retry_after=3,count=1", &f, &err),
        TW_OK);
    assert_int_equal(tw_sim_add_fault(sim, &f, &err), TW_OK);
    assert_int_equal(tw_sim_fault_parse("kind=throttle,path=/api/retail/prices,count=1", &f, &err),
                     TW_OK);
    assert_int_equal(tw_sim_add_fault(sim, &f, &err), TW_OK);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", ST_DISKS "advisor-vm-01-data0?api-version=2024-03-02", NULL);
    assert_int_equal(r.status, 429);
    assert_string_equal(st_hdr(&r, "Retry-After"), "3");
    assert_non_null(st_hdr(&r, "x-ms-ratelimit-remaining-resource"));
    /* The documented Compute throttling body in ARM's envelope. */
    json_t *e = json_object_get(r.json, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "OperationNotAllowed");
    json_t *d = json_array_get(json_object_get(e, "details"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "code")), "TooManyRequests");
    assert_string_equal(json_string_value(json_object_get(d, "target")), "HighCostGet30Min");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", ST_DISKS "advisor-vm-01-data0?api-version=2024-03-02", NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    st_request(sim, &r, "GET", "/api/retail/prices", NULL, NULL);
    assert_int_equal(r.status, 429);
    assert_string_equal(st_hdr(&r, "Retry-After"), "1");
    assert_non_null(json_object_get(json_object_get(r.json, "Error"), "Code"));
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_fault_latency(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    post_fault(sim, "{\"kind\": \"latency\", \"path\": \"/api/retail/prices\", \"ms\": 400, "
                    "\"count\": 1}");
    struct st_resp r;
    double t0 = now_s();
    st_request(sim, &r, "GET", "/api/retail/prices", NULL, NULL);
    double slow = now_s() - t0;
    assert_int_equal(r.status, 200);
    st_free(&r);
    t0 = now_s();
    st_request(sim, &r, "GET", "/api/retail/prices", NULL, NULL);
    double fast = now_s() - t0;
    st_free(&r);
    if (slow < 0.39 || fast > 0.3)
        fail_msg("latency fault: %.3f s then %.3f s", slow, fast);
    /* Latency combines with a fault that shapes the answer. */
    post_fault(sim, "[{\"kind\": \"latency\", \"path\": \"/_x\", \"ms\": 200, \"count\": 1},"
                    " {\"kind\": \"error\", \"path\": \"/_x\", \"status\": 502, \"count\": 1}]");
    t0 = now_s();
    st_request(sim, &r, "GET", "/_x", NULL, NULL);
    assert_int_equal(r.status, 502);
    assert_true(now_s() - t0 >= 0.19);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_fault_truncate(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp whole, r;
    st_imds(sim, &whole, "/metadata/instance?api-version=2021-02-01");
    assert_non_null(whole.json);
    post_fault(sim, "{\"kind\": \"truncate\", \"path\": \"/metadata/instance\", \"count\": 1}");
    st_imds(sim, &r, "/metadata/instance?api-version=2021-02-01");
    /* A complete HTTP answer whose JSON is cut in half. */
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, whole.len / 2);
    assert_memory_equal(r.body, whole.body, r.len);
    assert_null(r.json);
    st_free(&r);
    post_fault(sim, "{\"kind\": \"truncate\", \"path\": \"/metadata/\", \"bytes\": 10, "
                    "\"count\": 1}");
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.len, 10);
    st_free(&r);
    st_free(&whole);
    tw_sim_stop(sim);
}

static void test_fault_drop(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    post_fault(sim, "{\"kind\": \"drop\", \"path\": \"/metadata/identity\", \"count\": 1}");
    struct st_resp r;
    st_imds(sim, &r, "/metadata/identity/oauth2/token?api-version=2018-02-01&resource=x");
    assert_int_equal(r.rc, CURLE_GOT_NOTHING);
    assert_int_equal(r.status, 0);
    st_free(&r);
    st_imds(sim, &r, "/metadata/identity/oauth2/token?api-version=2018-02-01&resource=x");
    assert_int_equal(r.status, 200);
    st_free(&r);
    /* The log shows the dropped request. */
    st_request(sim, &r, "GET", "/_sim/requests", NULL, NULL);
    json_t *first = json_array_get(json_object_get(r.json, "requests"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "fault")), "drop");
    assert_int_equal(json_integer_value(json_object_get(first, "status")), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_fault_scoping(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    /* skip=1, count=1: only the second matching request fails. */
    post_fault(sim, "{\"kind\": \"error\", \"path\": \"/metadata/versions\", \"status\": 500, "
                    "\"skip\": 1, \"count\": 1}");
    struct st_resp r;
    long want[] = {200, 500, 200};
    for (int i = 0; i < 3; i++) {
        st_imds(sim, &r, "/metadata/versions");
        assert_int_equal(r.status, want[i]);
        st_free(&r);
    }
    /* method: only that method. */
    post_fault(sim,
               "{\"kind\": \"error\", \"path\": \"/_y\", \"method\": \"POST\", \"status\": 503}");
    st_request(sim, &r, "GET", "/_y", NULL, NULL);
    assert_int_equal(r.status, 404);
    st_free(&r);
    st_request(sim, &r, "POST", "/_y", NULL, "{}");
    assert_int_equal(r.status, 503);
    st_free(&r);
    /* The admin surface is never faulted, whatever the path prefix. */
    post_fault(sim, "{\"kind\": \"error\", \"path\": \"/\", \"status\": 500}");
    st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    st_request(sim, &r, "DELETE", "/_sim/faults", NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "faults")), 0);
    st_free(&r);
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.status, 200);
    st_free(&r);
    tw_sim_stop(sim);
}

/* The pattern a probability fault makes over N requests. */
static void pattern(char *out, int n)
{
    struct tw_sim *sim = st_start(NULL, NULL);
    post_fault(sim, "{\"kind\": \"error\", \"path\": \"/metadata/versions\", \"status\": 503, "
                    "\"probability\": 0.5, \"seed\": 7}");
    for (int i = 0; i < n; i++) {
        struct st_resp r;
        st_imds(sim, &r, "/metadata/versions");
        out[i] = r.status == 503 ? 'x' : '.';
        st_free(&r);
    }
    out[n] = '\0';
    tw_sim_stop(sim);
}

static void test_fault_probability(void **state)
{
    (void)state;
    char a[81], b[81];
    pattern(a, 80);
    pattern(b, 80);
    /* Seeded: the same requests fail on every run. */
    assert_string_equal(a, b);
    int fired = 0;
    for (int i = 0; i < 80; i++)
        fired += a[i] == 'x';
    if (fired < 20 || fired > 60)
        fail_msg("probability 0.5 fired %d times in 80: %s", fired, a);
}

static void with_fault(json_t *root)
{
    json_t *f = json_pack("[{s:s, s:s, s:i, s:i}]", "kind", "error", "path", "/metadata/versions",
                          "status", 504, "count", 1);
    json_object_set_new(root, "faults", f);
}

static void test_faults_from_scenario(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, with_fault);
    struct st_resp r;
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.status, 504);
    st_free(&r);
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.status, 200);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_request_log(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_imds(sim, &r, "/metadata/versions");
    st_free(&r);
    st_request(sim, &r, "GET", "/api/retail/prices", NULL, NULL);
    st_free(&r);
    st_request(sim, &r, "PATCH", ST_DISKS "x?api-version=1", NULL, "{}");
    st_free(&r);
    st_request(sim, &r, "GET", "/_sim/requests", NULL, NULL);
    json_t *reqs = json_object_get(r.json, "requests");
    assert_int_equal(json_integer_value(json_object_get(r.json, "total")), 3);
    assert_int_equal(json_array_size(reqs), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(reqs, 2), "method")),
                        "PATCH");
    assert_string_equal(json_string_value(json_object_get(json_array_get(reqs, 2), "path")),
                        ST_DISKS "x");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(reqs, 2), "status")), 401);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(reqs, 1), "status")), 200);
    st_free(&r);
    st_request(sim, &r, "DELETE", "/_sim/requests", NULL, NULL);
    assert_int_equal(json_integer_value(json_object_get(r.json, "total")), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_admin_errors(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    static const struct {
        const char *method, *path, *body;
        long status;
        const char *words;
    } cases[] = {
        {"POST", "/_sim/faults", "{nope", 400, "not valid JSON"},
        {"POST", "/_sim/faults", "{\"kind\": \"boom\"}", 400, "fault.kind \"boom\""},
        {"POST", "/_sim/faults", "[{\"kind\": \"drop\"}, {\"path\": \"/\"}]", 400,
         "faults[1].kind is missing"},
        {"POST", "/_sim/clock", "{\"advance_s\": -5}", 400, "advance_s"},
        {"POST", "/_sim/clock", "{}", 400, "advance_s"},
        {"POST", "/_sim/power", "{\"vm\": \"nope\", \"state\": \"running\"}", 404, "No VM"},
        {"POST", "/_sim/power", "{\"vm\": \"advisor-vm-01\", \"state\": \"asleep\"}", 400, "state"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct st_resp r;
        st_request(sim, &r, cases[i].method, cases[i].path, NULL, cases[i].body);
        const char *msg =
            json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
        if (r.status != cases[i].status || !msg || !strstr(msg, cases[i].words))
            fail_msg("%s %s %s: %ld %s", cases[i].method, cases[i].path, cases[i].body, r.status,
                     r.body);
        st_free(&r);
    }
    /* A rejected list adds nothing. */
    struct st_resp r;
    st_request(sim, &r, "GET", "/_sim/faults", NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "faults")), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_clock(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"clock\": \"2025-01-06T08:00:00Z\"}", NULL);
    struct st_resp r;
    st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
    assert_int_equal(
        strncmp(json_string_value(json_object_get(r.json, "now")), "2025-01-06T08:00:0", 18), 0);
    st_free(&r);
    st_request(sim, &r, "POST", "/_sim/clock", NULL, "{\"advance_s\": 86400}");
    assert_int_equal(r.status, 200);
    assert_int_equal(
        strncmp(json_string_value(json_object_get(r.json, "now")), "2025-01-07T08:00:0", 18), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen),
        cmocka_unit_test(test_start_stop),
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_fault_error_count),
        cmocka_unit_test(test_fault_throttle),
        cmocka_unit_test(test_fault_latency),
        cmocka_unit_test(test_fault_truncate),
        cmocka_unit_test(test_fault_drop),
        cmocka_unit_test(test_fault_scoping),
        cmocka_unit_test(test_fault_probability),
        cmocka_unit_test(test_faults_from_scenario),
        cmocka_unit_test(test_request_log),
        cmocka_unit_test(test_admin_errors),
        cmocka_unit_test(test_clock),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
