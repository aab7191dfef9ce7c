/* test_sim_rules.c - what a disk shows (its rated performance, sharing,
 * bursting, ownership time), hibernation (Frozen disks), the rolling quota
 * of type changes and concurrent-write conflicts. */
#include "simtest.h"

#define VD "?api-version=2024-03-02"
#define VC "?api-version=2024-07-01"
#define VM1 ST_VMS "advisor-vm-01"
#define VM2 ST_VMS "advisor-vm-02"
#define DATA0 ST_DISKS "advisor-vm-01-data0" VD
#define DATA1 ST_DISKS "advisor-vm-01-data1" VD
#define V2DATA ST_DISKS "advisor-vm-02-data0" VD
#define SPARE ST_DISKS "spare-disk" VD
#define FAST "{\"operation_delay_ms\": 200, \"retry_after_s\": 0}"

static const char *err_code(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static const char *err_msg(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "message"));
}

static json_t *props(const struct st_resp *r)
{
    return json_object_get(r->json, "properties");
}

static json_int_t iprop(const struct st_resp *r, const char *k)
{
    const json_t *v = json_object_get(props(r), k);
    if (!json_is_integer(v))
        fail_msg("properties.%s is not an integer in %s", k, r->body);
    return json_integer_value(v);
}

static const char *sprop(const struct st_resp *r, const char *k)
{
    return json_string_value(json_object_get(props(r), k));
}

/* GET PATH; the answer stays in *R. */
static void get(struct tw_sim *sim, const char *tok, const char *path, struct st_resp *r)
{
    st_arm(sim, r, tok, "GET", path, NULL);
    if (r->status != 200)
        fail_msg("GET %s: %ld %s", path, r->status, r->body);
}

static void wait_idle(struct tw_sim *sim)
{
    /* Until /_sim/state shows no pending operation. */
    for (int i = 0; i < 200; i++) {
        struct st_resp r;
        st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
        bool busy = false;
        json_t *ops = json_object_get(r.json, "operations");
        for (size_t k = 0; k < json_array_size(ops); k++)
            busy =
                busy || strcmp(json_string_value(json_object_get(json_array_get(ops, k), "status")),
                               "InProgress") == 0;
        st_free(&r);
        if (!busy)
            return;
        st_sleep_ms(50);
    }
    fail_msg("operations never finished");
}

static void post(struct tw_sim *sim, const char *tok, const char *path, long want)
{
    struct st_resp r;
    st_arm(sim, &r, tok, "POST", path, NULL);
    if (r.status != want)
        fail_msg("POST %s: %ld (wanted %ld) %s", path, r.status, want, r.body);
    st_free(&r);
}

static void patch(struct tw_sim *sim, const char *tok, const char *path, const char *sku, long want,
                  const char *code)
{
    char body[128];
    snprintf(body, sizeof(body), "{\"sku\": {\"name\": \"%s\"}}", sku);
    struct st_resp r;
    st_arm(sim, &r, tok, "PATCH", path, body);
    if (r.status != want)
        fail_msg("PATCH %s %s: %ld (wanted %ld) %s", path, sku, r.status, want, r.body);
    if (code)
        assert_string_equal(err_code(&r), code);
    st_free(&r);
}

static void admin(struct tw_sim *sim, const char *path, const char *body, long want)
{
    struct st_resp r;
    st_request(sim, &r, "POST", path, NULL, body);
    if (r.status != want)
        fail_msg("POST %s %s: %ld %s", path, body, r.status, r.body);
    st_free(&r);
}

static void edit_disks(json_t *root)
{
    json_t *d0 = json_array_get(
        json_object_get(json_array_get(json_object_get(root, "vms"), 0), "disks"), 1);
    json_object_set_new(d0, "max_shares", json_integer(2));
    json_object_set_new(d0, "bursting", json_true());
    json_t *free_disks = json_object_get(root, "disks");
    json_array_append_new(free_disks,
                          json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i}", "subscription_id",
                                    ST_SUB, "resource_group", "rg-advisor-test", "name", "ultra",
                                    "location", "eastus", "sku", "UltraSSD_LRS", "size_gib", 1024,
                                    "iops", 20000, "mbps", 500));
    json_array_append_new(
        free_disks, json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b}", "subscription_id", ST_SUB,
                              "resource_group", "rg-advisor-test", "name", "v2", "location",
                              "eastus", "sku", "PremiumV2_LRS", "size_gib", 100, "bursting", 0));
}

static void test_disk_properties(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, edit_disks);
    char *tok = st_token(sim);
    struct st_resp r;
    /* The tier's rating (azure-disk-tiers.json): P10 500/100, E15 500/60,
     * P40 7500/250; Ultra and v2 as provisioned. */
    static const struct {
        const char *path;
        json_int_t iops, mbps;
    } want[] = {{DATA0, 500, 100},
                {DATA1, 500, 60},
                {V2DATA, 7500, 250},
                {ST_DISKS "ultra" VD, 20000, 500},
                {ST_DISKS "v2" VD, 3000, 125}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        get(sim, tok, want[i].path, &r);
        assert_int_equal(iprop(&r, "diskIOPSReadWrite"), want[i].iops);
        assert_int_equal(iprop(&r, "diskMBpsReadWrite"), want[i].mbps);
        st_free(&r);
    }
    get(sim, tok, DATA0, &r);
    assert_int_equal(iprop(&r, "maxShares"), 2);
    assert_true(json_is_true(json_object_get(props(&r), "burstingEnabled")));
    assert_null(json_object_get(props(&r), "LastOwnershipUpdateTime"));
    st_free(&r);
    get(sim, tok, DATA1, &r);
    assert_null(json_object_get(props(&r), "maxShares"));
    assert_null(json_object_get(props(&r), "burstingEnabled"));
    st_free(&r);
    get(sim, tok, ST_DISKS "v2" VD, &r);
    assert_true(json_is_false(json_object_get(props(&r), "burstingEnabled")));
    st_free(&r);

    /* A performance tier's rating once it is set (P30: 5000/200). */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"properties\": {\"tier\": \"P30\"}}");
    assert_int_equal(r.status, 202);
    st_free(&r);
    wait_idle(sim);
    get(sim, tok, DATA0, &r);
    assert_int_equal(iprop(&r, "diskIOPSReadWrite"), 5000);
    assert_int_equal(iprop(&r, "diskMBpsReadWrite"), 200);
    st_free(&r);

    /* LastOwnershipUpdateTime: stamped on the VM's disks when it is
     * deallocated, again when it starts; never on an unattached disk. */
    post(sim, tok, VM1 "/deallocate" VC, 202);
    wait_idle(sim);
    get(sim, tok, DATA0, &r);
    char first[64];
    const char *t = sprop(&r, "LastOwnershipUpdateTime");
    assert_non_null(t);
    snprintf(first, sizeof(first), "%s", t);
    st_free(&r);
    get(sim, tok, DATA1, &r);
    assert_string_equal(sprop(&r, "LastOwnershipUpdateTime"), first);
    st_free(&r);
    get(sim, tok, SPARE, &r);
    assert_null(json_object_get(props(&r), "LastOwnershipUpdateTime"));
    st_free(&r);
    admin(sim, "/_sim/clock", "{\"advance_s\": 60}", 200);
    post(sim, tok, VM1 "/start" VC, 202);
    wait_idle(sim);
    get(sim, tok, DATA0, &r);
    assert_non_null(sprop(&r, "LastOwnershipUpdateTime"));
    assert_true(strcmp(sprop(&r, "LastOwnershipUpdateTime"), first) > 0);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void edit_hibernated(json_t *root)
{
    json_t *vm2 = json_array_get(json_object_get(root, "vms"), 1);
    json_object_set_new(vm2, "hibernated", json_true());
}

static const char *hibernation(struct tw_sim *sim, const char *tok, const char *vm)
{
    static char code[64];
    char path[512];
    snprintf(path, sizeof(path), "%s/instanceView" VC, vm);
    struct st_resp r;
    get(sim, tok, path, &r);
    code[0] = '\0';
    json_t *st = json_object_get(r.json, "statuses");
    for (size_t i = 0; i < json_array_size(st); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(st, i), "code"));
        if (strncmp(c, "HibernationState/", 17) == 0)
            snprintf(code, sizeof(code), "%s", c);
    }
    st_free(&r);
    return code;
}

static const char *disk_state(struct tw_sim *sim, const char *tok, const char *path)
{
    static char s[32];
    struct st_resp r;
    get(sim, tok, path, &r);
    snprintf(s, sizeof(s), "%s", sprop(&r, "diskState"));
    st_free(&r);
    return s;
}

static void test_hibernation(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, edit_hibernated);
    char *tok = st_token(sim);
    struct st_resp r;
    /* A hibernated VM is deallocated; its disks are Frozen and refuse a
     * type change. */
    assert_string_equal(disk_state(sim, tok, V2DATA), "Frozen");
    assert_string_equal(hibernation(sim, tok, VM2), "HibernationState/Hibernated");
    st_arm(sim, &r, tok, "GET", VM2 VC "&$expand=instanceView", NULL);
    assert_true(json_is_true(json_object_get(json_object_get(props(&r), "additionalCapabilities"),
                                             "hibernationEnabled")));
    st_free(&r);
    patch(sim, tok, V2DATA, "StandardSSD_LRS", 409, "OperationNotAllowed");
    st_arm(sim, &r, tok, "PATCH", V2DATA, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_non_null(strstr(err_msg(&r), "hibernated"));
    st_free(&r);
    st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(r.json, "vms"), 1), "power_state")),
                        "hibernated");
    st_free(&r);

    /* Started, it is an ordinary running VM; deallocated with
     * hibernate=true it is hibernated again. */
    post(sim, tok, VM2 "/start" VC, 202);
    wait_idle(sim);
    assert_string_equal(disk_state(sim, tok, V2DATA), "Attached");
    assert_string_equal(hibernation(sim, tok, VM2), "");
    post(sim, tok, VM2 "/deallocate" VC "&hibernate=true", 202);
    wait_idle(sim);
    assert_string_equal(disk_state(sim, tok, V2DATA), "Frozen");
    post(sim, tok, VM2 "/deallocate" VC "&hibernate=maybe", 400);

    /* The admin surface: hibernated, then deallocated (Reserved: a switch
     * is allowed again). */
    admin(sim, "/_sim/power", "{\"vm\": \"advisor-vm-01\", \"state\": \"hibernated\"}", 200);
    assert_string_equal(disk_state(sim, tok, DATA0), "Frozen");
    assert_string_equal(hibernation(sim, tok, VM1), "HibernationState/Hibernated");
    admin(sim, "/_sim/power", "{\"vm\": \"advisor-vm-01\", \"state\": \"deallocated\"}", 200);
    assert_string_equal(disk_state(sim, tok, DATA0), "Reserved");
    patch(sim, tok, DATA0, "StandardSSD_LRS", 202, NULL);
    free(tok);
    tw_sim_stop(sim);
}

static void test_quota_rolling(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    /* Changes at 0 h and 12 h; a third at 12 h is refused, as ARM would:
     * 409 OperationNotAllowed. */
    patch(sim, tok, SPARE, "Standard_LRS", 202, NULL);
    wait_idle(sim);
    admin(sim, "/_sim/clock", "{\"advance_s\": 43200}", 200);
    free(tok);
    tok = st_token(sim);
    patch(sim, tok, SPARE, "StandardSSD_LRS", 202, NULL);
    wait_idle(sim);
    /* Whoever asks: a service principal's token is refused the same. */
    static const char *const form[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    st_request(sim, &r, "POST", "/99999999-8888-7777-6666-555555555555/oauth2/v2.0/token", form,
               "grant_type=client_credentials&client_id=11111111-2222-3333-4444-555555555555&"
               "client_secret=constructed-test-secret&"
               "scope=https%3A%2F%2Fmanagement.azure.com%2F.default");
    assert_int_equal(r.status, 200);
    char *other = strdup(json_string_value(json_object_get(r.json, "access_token")));
    st_free(&r);
    patch(sim, other, SPARE, "Premium_LRS", 409, "OperationNotAllowed");
    free(other);
    st_arm(sim, &r, tok, "PATCH", SPARE, "{\"sku\": {\"name\": \"Premium_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "OperationNotAllowed");
    assert_non_null(strstr(err_msg(&r), "changed 2 times in the last 24 hours"));
    st_free(&r);
    /* A refused change is not counted, nor one to the SKU it has. */
    patch(sim, tok, SPARE, "StandardSSD_LRS", 200, NULL);
    /* At 24 h + 1 s the first change is out of the window (a rolling day,
     * not a calendar one): one more is allowed, then none. */
    admin(sim, "/_sim/clock", "{\"advance_s\": 43201}", 200);
    free(tok);
    tok = st_token(sim);
    patch(sim, tok, SPARE, "Premium_LRS", 202, NULL);
    wait_idle(sim);
    patch(sim, tok, SPARE, "Standard_LRS", 409, "OperationNotAllowed");
    /* Every refusal is counted. */
    st_request(sim, &r, "GET", "/_sim/counters", NULL, NULL);
    assert_int_equal(json_integer_value(json_object_get(r.json, "quota_refusals")), 3);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_conflicts(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"operation_delay_ms\": 3000, \"retry_after_s\": 0}", NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    /* A disk PATCH while its VM is being deallocated: 409 Conflict (not
     * the running-VM refusal). */
    post(sim, tok, VM1 "/deallocate" VC, 202);
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "Conflict");
    assert_non_null(strstr(err_msg(&r), "being used by another operation"));
    assert_non_null(st_hdr(&r, "Retry-After"));
    st_free(&r);
    /* A start while a disk of the VM is updating: 409 Conflict. */
    patch(sim, tok, V2DATA, "StandardSSD_LRS", 202, NULL);
    st_arm(sim, &r, tok, "POST", VM2 "/start" VC, NULL);
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "Conflict");
    assert_non_null(strstr(err_msg(&r), "advisor-vm-02-data0"));
    st_free(&r);
    /* A second PATCH of the updating disk. */
    patch(sim, tok, V2DATA, "Standard_LRS", 409, "Conflict");
    st_request(sim, &r, "GET", "/_sim/counters", NULL, NULL);
    assert_int_equal(json_integer_value(json_object_get(r.json, "conflicts")), 3);
    st_free(&r);
    wait_idle(sim);
    /* Once done, both go through; a SKU PATCH on a running VM's disk is
     * the documented 409 OperationNotAllowed. */
    post(sim, tok, VM2 "/start" VC, 202);
    wait_idle(sim);
    patch(sim, tok, V2DATA, "Premium_LRS", 409, "OperationNotAllowed");
    free(tok);
    tw_sim_stop(sim);
}

/* Polls the operation URL until it is no longer InProgress; its body. */
static json_t *op_result(struct tw_sim *sim, const char *tok, const char *url)
{
    for (int i = 0; i < 200; i++) {
        struct st_resp r;
        st_arm(sim, &r, tok, "GET", url, NULL);
        assert_int_equal(r.status, 200);
        if (strcmp(json_string_value(json_object_get(r.json, "status")), "InProgress") != 0) {
            json_t *j = json_incref(r.json);
            st_free(&r);
            return j;
        }
        st_free(&r);
        st_sleep_ms(50);
    }
    fail_msg("operation %s never ended", url);
    return NULL;
}

/* A fail-operation fault: the operation the request starts ends Failed and
 * nothing is applied; the next one goes through. */
static void test_failed_operations(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    admin(sim, "/_sim/faults",
          "{\"kind\": \"fail-operation\", \"method\": \"PATCH\", \"path\": \"" ST_DISKS
          "advisor-vm-02-data0\", \"count\": 1}",
          200);
    st_arm(sim, &r, tok, "PATCH", V2DATA, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_int_equal(r.status, 202);
    char *url = strdup(st_hdr(&r, "Azure-AsyncOperation"));
    char *loc = strdup(st_hdr(&r, "Location"));
    st_free(&r);
    json_t *res = op_result(sim, tok, url);
    assert_string_equal(json_string_value(json_object_get(res, "status")), "Failed");
    assert_string_equal(json_string_value(json_object_get(json_object_get(res, "error"), "code")),
                        "InternalExecutionError");
    json_decref(res);
    st_arm(sim, &r, tok, "GET", loc, NULL);
    assert_int_equal(r.status, 500);
    assert_string_equal(err_code(&r), "InternalExecutionError");
    st_free(&r);
    free(url);
    free(loc);
    get(sim, tok, V2DATA, &r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "sku"), "name")),
                        "Premium_LRS");
    assert_string_equal(sprop(&r, "provisioningState"), "Succeeded");
    st_free(&r);
    patch(sim, tok, V2DATA, "StandardSSD_LRS", 202, NULL);
    wait_idle(sim);
    get(sim, tok, V2DATA, &r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "sku"), "name")),
                        "StandardSSD_LRS");
    st_free(&r);

    /* A start that fails leaves the VM deallocated. */
    admin(sim, "/_sim/faults",
          "{\"kind\": \"fail-operation\", \"path\": \"" VM2 "/start\", \"count\": 1}", 200);
    st_arm(sim, &r, tok, "POST", VM2 "/start" VC, NULL);
    assert_int_equal(r.status, 202);
    url = strdup(st_hdr(&r, "Azure-AsyncOperation"));
    st_free(&r);
    res = op_result(sim, tok, url);
    assert_string_equal(json_string_value(json_object_get(res, "status")), "Failed");
    json_decref(res);
    free(url);
    assert_string_equal(disk_state(sim, tok, V2DATA), "Reserved");
    st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(r.json, "vms"), 1), "power_state")),
                        "deallocated");
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_properties),   cmocka_unit_test(test_hibernation),
        cmocka_unit_test(test_quota_rolling),     cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_failed_operations),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
