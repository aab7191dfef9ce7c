/* test_sim_limits.c - ARM's request limits (token buckets per region, the
 * per-VM budget of power actions: 429 with Retry-After) and the counters
 * of /_sim/counters. */
#include "simtest.h"

#define VD "?api-version=2024-03-02"
#define VC "?api-version=2024-07-01"
#define VM1 ST_VMS "advisor-vm-01"
#define VM2 ST_VMS "advisor-vm-02"
#define DATA0 ST_DISKS "advisor-vm-01-data0" VD
#define SPARE ST_DISKS "spare-disk" VD
#define READS "x-ms-ratelimit-remaining-subscription-reads"
#define WRITES "x-ms-ratelimit-remaining-subscription-writes"

static const char *err_code(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static long call(struct tw_sim *sim, const char *tok, const char *method, const char *path,
                 const char *body, char *hdr, size_t cap, const char *name)
{
    struct st_resp r;
    st_arm(sim, &r, tok, method, path, body);
    long status = r.status;
    if (hdr) {
        const char *v = st_hdr(&r, name);
        if (!v)
            v = "(none)";
        size_t n = strnlen(v, cap - 1);
        memcpy(hdr, v, n);
        hdr[n] = '\0';
    }
    st_free(&r);
    return status;
}

static void test_buckets(void **state)
{
    (void)state;
    /* Slow rates, so a loaded machine doesn't refill a bucket mid-test:
     * 2 reads and 1 write deep. */
    struct tw_sim *sim = st_start("{\"operation_delay_ms\": 100, \"arm_limits\": {\"reads_per_s\": "
                                  "0.5, \"writes_per_s\": 0.25, \"burst\": 4}}",
                                  NULL);
    char *tok = st_token(sim);
    char h[64];
    /* Two go, the third is throttled until a token is back (2 s). */
    assert_int_equal(call(sim, tok, "GET", DATA0, NULL, h, sizeof(h), READS), 200);
    assert_string_equal(h, "1");
    assert_int_equal(call(sim, tok, "GET", DATA0, NULL, h, sizeof(h), READS), 200);
    assert_string_equal(h, "0");
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_int_equal(r.status, 429);
    assert_string_equal(err_code(&r), "TooManyRequests");
    assert_string_equal(st_hdr(&r, READS), "0");
    assert_string_equal(st_hdr(&r, "Retry-After"), "2");
    st_free(&r);
    /* Another region has its own bucket (an operation path names one). */
    assert_int_equal(call(sim, tok, "GET",
                          "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/locations/westus/"
                          "operations/x" VC,
                          NULL, NULL, 0, NULL),
                     404);
    /* Writes have their own: one goes, the next is throttled. */
    assert_int_equal(call(sim, tok, "PATCH", SPARE, "{\"sku\": {\"name\": \"Standard_LRS\"}}", h,
                          sizeof(h), WRITES),
                     202);
    assert_string_equal(h, "0");
    assert_int_equal(
        call(sim, tok, "PATCH", SPARE, "{\"sku\": {\"name\": \"Standard_LRS\"}}", NULL, 0, NULL),
        429);
    /* Two seconds later a read token is back. */
    st_sleep_ms(2100);
    assert_int_equal(call(sim, tok, "GET", DATA0, NULL, NULL, 0, NULL), 200);

    /* The counters: every ARM request, the 429s, PATCHes that reached
     * the disk (the throttled one did not). */
    st_request(sim, &r, "GET", "/_sim/counters", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(json_object_get(r.json, "requests")), 7);
    assert_int_equal(json_integer_value(json_object_get(r.json, "throttled")), 2);
    assert_int_equal(json_integer_value(json_object_get(r.json, "conflicts")), 0);
    json_t *want = json_pack("{s:i}",
                             "/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups/"
                             "rg-advisor-test/providers/microsoft.compute/disks/spare-disk",
                             1);
    assert_true(json_equal(json_object_get(r.json, "patches"), want));
    json_decref(want);
    assert_int_equal(json_object_size(json_object_get(r.json, "vm_actions")), 0);
    st_free(&r);
    st_request(sim, &r, "DELETE", "/_sim/counters", NULL, NULL);
    assert_int_equal(json_integer_value(json_object_get(r.json, "requests")), 0);
    assert_int_equal(json_integer_value(json_object_get(r.json, "throttled")), 0);
    assert_int_equal(json_object_size(json_object_get(r.json, "patches")), 0);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void wait_idle(struct tw_sim *sim)
{
    for (int i = 0; i < 200; i++) {
        struct st_resp r;
        st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
        bool busy = false;
        json_t *vms = json_object_get(r.json, "vms");
        for (size_t k = 0; k < json_array_size(vms); k++)
            busy =
                busy || !json_is_null(json_object_get(json_array_get(vms, k), "pending_operation"));
        st_free(&r);
        if (!busy)
            return;
        st_sleep_ms(50);
    }
    fail_msg("operations never finished");
}

static void test_vm_actions(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"operation_delay_ms\": 50, \"retry_after_s\": 0, "
                                  "\"arm_limits\": {\"vm_actions_per_min\": 2}}",
                                  NULL);
    char *tok = st_token(sim);
    char h[64];
    /* Two actions on VM1 within a minute go; the third is throttled for
     * about the rest of the minute.  VM2 has its own budget. */
    assert_int_equal(call(sim, tok, "POST", VM1 "/deallocate" VC, NULL, NULL, 0, NULL), 202);
    wait_idle(sim);
    assert_int_equal(call(sim, tok, "POST", VM1 "/start" VC, NULL, NULL, 0, NULL), 202);
    wait_idle(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "POST", VM1 "/deallocate" VC, NULL);
    assert_int_equal(r.status, 429);
    assert_string_equal(err_code(&r), "OperationNotAllowed");
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(r.json, "error"), "details"), 0),
            "code")),
        "TooManyRequests");
    long retry = atol(st_hdr(&r, "Retry-After"));
    assert_true(retry >= 55 && retry <= 60);
    st_free(&r);
    /* Reads have no limit here. */
    assert_int_equal(call(sim, tok, "GET", DATA0, NULL, h, sizeof(h), READS), 200);
    assert_string_equal(h, "11999");
    assert_int_equal(call(sim, tok, "POST", VM2 "/start" VC, NULL, NULL, 0, NULL), 202);
    wait_idle(sim);
    /* A minute on (the sim clock), VM1 may act again. */
    st_request(sim, &r, "POST", "/_sim/clock", NULL, "{\"advance_s\": 61}");
    st_free(&r);
    assert_int_equal(call(sim, tok, "POST", VM1 "/deallocate" VC, NULL, NULL, 0, NULL), 202);
    st_request(sim, &r, "GET", "/_sim/counters", NULL, NULL);
    json_t *want = json_pack(
        "{s:i, s:i}",
        "/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups/rg-advisor-test/"
        "providers/microsoft.compute/virtualmachines/advisor-vm-01",
        3,
        "/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups/rg-advisor-test/"
        "providers/microsoft.compute/virtualmachines/advisor-vm-02",
        1);
    assert_true(json_equal(json_object_get(r.json, "vm_actions"), want));
    json_decref(want);
    assert_int_equal(json_integer_value(json_object_get(r.json, "throttled")), 1);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_limits_parse(void **state)
{
    (void)state;
    struct tw_sim_arm_limits l;
    struct tw_error err = {0};
    assert_int_equal(tw_sim_arm_limits_parse("25,10", &l, &err), TW_OK);
    assert_true(l.reads_per_s == 25 && l.writes_per_s == 10 && l.burst == 1 &&
                l.vm_actions_per_min == 0);
    assert_int_equal(tw_sim_arm_limits_parse("25,10,2,4", &l, &err), TW_OK);
    assert_true(l.burst == 2 && l.vm_actions_per_min == 4);
    assert_int_equal(tw_sim_arm_limits_parse("off", &l, &err), TW_OK);
    assert_true(l.reads_per_s == 0 && l.writes_per_s == 0);
    static const char *const bad[] = {
        "25", "25,", "a,b", "25,10,0", "25,10,1,2.5", "25,10,1,4,5", "-1,10", "25,10,1,65", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tw_sim_arm_limits_parse(bad[i], &l, &err) != TW_EPARSE)
            fail_msg("--arm-limits \"%s\" was taken", bad[i]);
        assert_non_null(strstr(err.msg, "READS,WRITES"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_vm_actions),
        cmocka_unit_test(test_limits_parse),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
