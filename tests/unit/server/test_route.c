/* test_route.c - path patterns and the route table lookup (404 vs 405). */
#include "testhelp.h"

#include <stdio.h>
#include <string.h>

#include "server/route.h"

static void h(struct tw_req *rq)
{
    (void)rq;
}

static const struct tw_route routes[] = {
    {"GET", "/healthz", 0, h, false},
    {"POST", "/api/v1/reports", 1, h, true},
    {"GET", "/api/v1/vms", 2, h, false},
    {"GET", "/api/v1/vms/{id}", 2, h, false},
    {"DELETE", "/api/v1/vms/{id}", 4, h, false},
};
#define N (sizeof(routes) / sizeof(routes[0]))

static void test_match(void **state)
{
    (void)state;
    int64_t id = -1;
    assert_true(tw_route_match("/api/v1/vms", "/api/v1/vms", &id));
    assert_int_equal(id, 0);
    assert_true(tw_route_match("/api/v1/vms/{id}", "/api/v1/vms/42", &id));
    assert_int_equal(id, 42);
    assert_true(tw_route_match("/api/v1/vms/{id}", "/api/v1/vms/999999999999999999", &id));
    assert_int_equal(id, 999999999999999999LL);
    assert_true(tw_route_match("/", "/", NULL));
    /* Not ids: zero, a leading zero, signs, letters, too many digits, empty. */
    static const char *const bad_ids[] = {
        "0", "007", "-1", "+1", "1a", "abc", "", "1000000000000000000", "1 ", "%31"};
    for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/api/v1/vms/%s", bad_ids[i]);
        assert_false(tw_route_match("/api/v1/vms/{id}", path, &id));
    }
    /* Exact segments: no trailing slash, no extra or missing segment, case. */
    assert_false(tw_route_match("/api/v1/vms", "/api/v1/vms/", NULL));
    assert_false(tw_route_match("/api/v1/vms", "/api/v1/vmsx", NULL));
    assert_false(tw_route_match("/api/v1/vms", "/api/v1/VMS", NULL));
    assert_false(tw_route_match("/api/v1/vms", "/api/v1", NULL));
    assert_false(tw_route_match("/api/v1/vms", "/api/v1/vms/1", NULL));
    assert_false(tw_route_match("/api/v1/vms/{id}", "/api/v1/vms/1/x", NULL));
    assert_false(tw_route_match("/api/v1/vms", "//api/v1/vms", NULL));
    assert_false(tw_route_match("/api/v1/vms", "api/v1/vms", NULL));
    assert_false(tw_route_match("/api/v1/vms", "", NULL));
    assert_false(tw_route_match("/api/v1/vms", NULL, NULL));
}

static void test_find(void **state)
{
    (void)state;
    struct tw_route_lookup lk;
    tw_route_find(routes, N, "GET", "/api/v1/vms/7", &lk);
    assert_non_null(lk.route);
    assert_int_equal(lk.index, 3);
    assert_int_equal(lk.id, 7);
    /* HEAD is answered by GET routes. */
    tw_route_find(routes, N, "HEAD", "/healthz", &lk);
    assert_non_null(lk.route);
    assert_int_equal(lk.index, 0);
    /* A known path with another method: 405 and the Allow list. */
    tw_route_find(routes, N, "PUT", "/api/v1/vms/7", &lk);
    assert_null(lk.route);
    assert_true(lk.path_known);
    assert_string_equal(lk.allow, "GET, HEAD, DELETE");
    tw_route_find(routes, N, "GET", "/api/v1/reports", &lk);
    assert_null(lk.route);
    assert_true(lk.path_known);
    assert_string_equal(lk.allow, "POST");
    /* Unknown path: 404. */
    tw_route_find(routes, N, "GET", "/api/v1/nothing", &lk);
    assert_null(lk.route);
    assert_false(lk.path_known);
    assert_string_equal(lk.allow, "");
    tw_route_find(routes, N, "GET", "/api/v1/vms/x", &lk);
    assert_null(lk.route);
    assert_false(lk.path_known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
