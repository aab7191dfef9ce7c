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
    {"GET", "/api/v1/policies/{name}", 2, h, false},
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

static void test_name_segments(void **state)
{
    (void)state;
    struct tw_route_params p;
    const char *pat = "/api/v1/policies/{name}";
    assert_true(tw_route_match_params(pat, "/api/v1/policies/sap-weekend_v2.1", &p));
    assert_string_equal(p.name, "sap-weekend_v2.1");
    assert_int_equal(p.id, 0);
    assert_true(tw_route_match_params(pat, "/api/v1/policies/42", &p));
    assert_string_equal(p.name, "42");
    char longest[TW_ROUTE_NAME_MAX + 40];
    snprintf(longest, sizeof(longest), "/api/v1/policies/%0*d", TW_ROUTE_NAME_MAX - 1, 7);
    assert_true(tw_route_match_params(pat, longest, &p));
    assert_int_equal(strlen(p.name), TW_ROUTE_NAME_MAX - 1);
    static const char *const bad[] = {
        "/api/v1/policies/", "/api/v1/policies/.hidden", "/api/v1/policies/..",
        "/api/v1/policies/a b", "/api/v1/policies/a/b", "/api/v1/policies/caf\xc3\xa9",
        "/api/v1/policies/a%2fb", "/api/v1/policies"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tw_route_match_params(pat, bad[i], &p))
            fail_msg("%s matched", bad[i]);
        assert_string_equal(p.name, "");
    }
    snprintf(longest, sizeof(longest), "/api/v1/policies/%0*d", TW_ROUTE_NAME_MAX, 7);
    assert_false(tw_route_match_params(pat, longest, &p));
    /* Through the table: the name reaches the lookup. */
    struct tw_route_lookup lk;
    tw_route_find(routes, N, "GET", "/api/v1/policies/weekend", &lk);
    assert_non_null(lk.route);
    assert_int_equal(lk.index, 5);
    assert_string_equal(lk.name, "weekend");
    tw_route_find(routes, N, "POST", "/api/v1/policies/weekend", &lk);
    assert_null(lk.route);
    assert_true(lk.path_known);
    assert_string_equal(lk.allow, "GET, HEAD");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_name_segments),
        cmocka_unit_test(test_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
