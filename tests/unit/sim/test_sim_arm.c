/* test_sim_arm.c - the simulated Resource Manager: disks, the rules of a
 * SKU switch, long-running operations, VM power, Resource SKUs, errors. */
#include "simtest.h"

#define V "?api-version=2024-03-02"  /* DiskRP's */
#define VC "?api-version=2024-07-01" /* ComputeRP's (VMs) */
#define DATA0 ST_DISKS "advisor-vm-01-data0" V
#define VM1 ST_VMS "advisor-vm-01"
#define VM2 ST_VMS "advisor-vm-02"
#define FAST "{\"operation_delay_ms\": 300}"

static const char *err_code(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static const char *err_msg(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "message"));
}

static const char *prop(const struct st_resp *r, const char *key)
{
    return json_string_value(json_object_get(json_object_get(r->json, "properties"), key));
}

static const char *sku(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "sku"), "name"));
}

/* Polls an Azure-AsyncOperation URL until Succeeded; returns the polls. */
static int wait_op(struct tw_sim *sim, const char *tok, const char *url)
{
    char u[2048];
    snprintf(u, sizeof(u), "%s", url);
    for (int polls = 1; polls < 100; polls++) {
        struct st_resp r;
        st_arm(sim, &r, tok, "GET", u, NULL);
        assert_int_equal(r.status, 200);
        const char *status = json_string_value(json_object_get(r.json, "status"));
        assert_non_null(json_object_get(r.json, "startTime"));
        if (strcmp(status, "Succeeded") == 0) {
            assert_non_null(json_object_get(r.json, "endTime"));
            st_free(&r);
            return polls;
        }
        assert_string_equal(status, "InProgress");
        assert_null(json_object_get(r.json, "endTime"));
        st_free(&r);
        st_sleep_ms(50);
    }
    fail_msg("operation %s never finished", url);
    return 0;
}

static const char *power(struct tw_sim *sim, const char *tok, const char *vm)
{
    static char code[64];
    char path[512];
    snprintf(path, sizeof(path), "%s/instanceView" VC, vm);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", path, NULL);
    assert_int_equal(r.status, 200);
    json_t *st = json_object_get(r.json, "statuses");
    assert_int_equal(json_array_size(st), 2);
    assert_int_equal(strncmp(json_string_value(json_object_get(json_array_get(st, 0), "code")),
                             "ProvisioningState/", 18),
                     0);
    snprintf(code, sizeof(code), "%s",
             json_string_value(json_object_get(json_array_get(st, 1), "code")));
    st_free(&r);
    return code;
}

/* POST a VM action; returns its Azure-AsyncOperation URL (caller frees). */
static char *vm_action(struct tw_sim *sim, const char *tok, const char *vm, const char *action)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s" VC, vm, action);
    struct st_resp r;
    st_arm(sim, &r, tok, "POST", path, NULL);
    assert_int_equal(r.status, 202);
    assert_int_equal(r.len, 0);
    const char *op = st_hdr(&r, "Azure-AsyncOperation");
    assert_non_null(op);
    assert_non_null(strstr(op, "/providers/Microsoft.Compute/locations/eastus/operations/"));
    char *u = strdup(op); /* before st_hdr's buffer is reused */
    assert_non_null(st_hdr(&r, "Location"));
    st_free(&r);
    return u;
}

static char *patch(struct tw_sim *sim, const char *tok, const char *path, const char *body,
                   long want)
{
    struct st_resp r;
    st_arm(sim, &r, tok, "PATCH", path, body);
    if (r.status != want)
        fail_msg("PATCH %s %s: %ld %s", path, body, r.status, r.body);
    char *u = NULL;
    if (want == 202) {
        /* arm-disk-samples.json patch_change_sku_constructed: 202, the old
         * SKU with provisioningState Updating, and the polling headers. */
        assert_string_equal(prop(&r, "provisioningState"), "Updating");
        const char *op = st_hdr(&r, "Azure-AsyncOperation");
        assert_non_null(op);
        assert_int_equal(strncmp(op, tw_sim_url(sim), strlen(tw_sim_url(sim))), 0);
        assert_non_null(strstr(op, "/DiskOperations/"));
        assert_non_null(strstr(op, "api-version=2024-03-02"));
        u = strdup(op); /* before st_hdr's buffer is reused */
        assert_non_null(strstr(st_hdr(&r, "Location"), "monitor=true"));
        assert_non_null(st_hdr(&r, "Retry-After"));
        assert_non_null(strstr(u, st_hdr(&r, "x-ms-request-id")));
    }
    st_free(&r);
    return u;
}

static void test_disk_get(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(st_hdr(&r, "x-ms-request-id"));
    assert_string_equal(st_hdr(&r, "x-ms-ratelimit-remaining-subscription-reads"), "11999");
    assert_string_equal(json_string_value(json_object_get(r.json, "name")), "advisor-vm-01-data0");
    assert_string_equal(json_string_value(json_object_get(r.json, "type")),
                        "Microsoft.Compute/disks");
    assert_string_equal(json_string_value(json_object_get(r.json, "id")),
                        ST_DISKS "advisor-vm-01-data0");
    assert_string_equal(json_string_value(json_object_get(r.json, "managedBy")), VM1);
    assert_string_equal(sku(&r), "Premium_LRS");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "sku"), "tier")),
                        "Premium");
    assert_string_equal(prop(&r, "tier"), "P10");
    assert_string_equal(prop(&r, "diskState"), "Attached");
    assert_string_equal(prop(&r, "provisioningState"), "Succeeded");
    json_t *p = json_object_get(r.json, "properties");
    assert_int_equal(json_integer_value(json_object_get(p, "diskSizeGB")), 128);
    assert_int_equal(json_integer_value(json_object_get(p, "diskSizeBytes")), 137438953472LL);
    st_free(&r);
    /* ARM paths are not case-sensitive. */
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/resourcegroups/RG-ADVISOR-TEST/providers/"
           "microsoft.compute/disks/advisor-vm-01-data0" V,
           NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    /* A deallocated VM's disk is Reserved; an unattached one Unattached. */
    st_arm(sim, &r, tok, "GET", ST_DISKS "advisor-vm-02-data0" V, NULL);
    assert_string_equal(prop(&r, "diskState"), "Reserved");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", ST_DISKS "spare-disk" V, NULL);
    assert_string_equal(prop(&r, "diskState"), "Unattached");
    assert_null(json_object_get(r.json, "managedBy"));
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_errors(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", ST_DISKS "advisor-vm-01-data0", NULL);
    assert_int_equal(r.status, 400);
    json_t *want =
        json_pack("{s:{s:s, s:s}}", "error", "code", "MissingApiVersionParameter", "message",
                  "The api-version query parameter (?api-version=) is "
                  "required for all requests.");
    assert_true(json_equal(r.json, want));
    json_decref(want);
    st_free(&r);
    st_arm(sim, &r, tok, "GET", ST_DISKS "nope" V, NULL);
    assert_int_equal(r.status, 404);
    assert_string_equal(err_code(&r), "ResourceNotFound");
    assert_string_equal(err_msg(&r), "The Resource 'Microsoft.Compute/disks/nope' under resource "
                                     "group 'rg-advisor-test' was not found. For more details "
                                     "please go to https://aka.ms/ARMResourceNotFoundFix");
    st_free(&r);
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/resourceGroups/rg-x/providers/"
           "Microsoft.Compute/disks/d" V,
           NULL);
    assert_string_equal(err_code(&r), "ResourceGroupNotFound");
    assert_string_equal(err_msg(&r), "Resource group 'rg-x' could not be found.");
    st_free(&r);
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/0000/resourceGroups/rg/providers/"
           "Microsoft.Compute/disks/d" V,
           NULL);
    assert_string_equal(err_code(&r), "SubscriptionNotFound");
    st_free(&r);
    /* Bodies it can't use. */
    static const struct {
        const char *body;
        long status;
        const char *code;
    } bad[] = {
        {"not json", 400, "InvalidRequestContent"},
        {"[1]", 400, "InvalidRequestContent"},
        {"{\"sku\": \"Premium_LRS\"}", 400, "InvalidRequestContent"},
        {"{\"properties\": {\"diskSizeGB\": \"big\"}}", 400, "InvalidRequestContent"},
        {"{\"sku\": {\"name\": \"Premium\"}}", 400, "InvalidParameter"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        st_arm(sim, &r, tok, "PATCH", DATA0, bad[i].body);
        if (r.status != bad[i].status || !err_code(&r) || strcmp(err_code(&r), bad[i].code))
            fail_msg("%s: %ld %s", bad[i].body, r.status, r.body);
        st_free(&r);
    }
    free(tok);
    tw_sim_stop(sim);
}

static void test_patch_running(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(st_hdr(&r, "x-ms-ratelimit-remaining-subscription-writes"), "1199");
    /* The body of arm-errors-samples.json's attached-disk entry. */
    size_t len;
    char *text = th_fixture("sim/arm-errors-samples.json", &len);
    json_t *samples = json_loadb(text, len, 0, NULL);
    free(text);
    json_t *want = NULL;
    for (size_t i = 0; i < json_array_size(samples); i++) {
        json_t *s = json_array_get(samples, i);
        if (strcmp(json_string_value(json_object_get(s, "label")),
                   "sku_change_on_disk_attached_to_running_vm_CONSTRUCTED") == 0)
            want = json_object_get(s, "body");
    }
    assert_non_null(want);
    assert_true(json_equal(r.json, want));
    json_decref(samples);
    st_free(&r);
    /* Nothing changed. */
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(sku(&r), "Premium_LRS");
    st_free(&r);
    /* A resize while running: ARM's real Conflict. */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"properties\": {\"diskSizeGB\": 256}}");
    assert_int_equal(r.status, 409);
    want = json_pack("{s:{s:s, s:s, s:s}}", "error", "code", "Conflict", "message",
                     "Disk resizing is allowed only when creating a VM or when the VM is "
                     "deallocated.",
                     "target", "disk.diskSizeGB");
    assert_true(json_equal(r.json, want));
    json_decref(want);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_switch_cycle(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;

    /* Deallocate: running -> deallocating -> deallocated. */
    char *op = vm_action(sim, tok, VM1, "deallocate");
    assert_string_equal(power(sim, tok, VM1), "PowerState/deallocating");
    assert_true(wait_op(sim, tok, op) > 1);
    free(op);
    assert_string_equal(power(sim, tok, VM1), "PowerState/deallocated");
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(prop(&r, "diskState"), "Reserved");
    st_free(&r);

    /* Downgrade: 202, InProgress, then Succeeded and the new SKU. */
    op = patch(sim, tok, DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}", 202);
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(sku(&r), "Premium_LRS");
    assert_string_equal(prop(&r, "provisioningState"), "Updating");
    st_free(&r);
    /* Location polling: 202 while running. */
    char loc[2048];
    snprintf(loc, sizeof(loc), "%s", op);
    *strstr(loc, "?") = '\0';
    strcat(loc, "?monitor=true&api-version=2024-03-02");
    st_arm(sim, &r, tok, "GET", loc, NULL);
    assert_int_equal(r.status, 202);
    assert_non_null(st_hdr(&r, "Location"));
    st_free(&r);
    /* Another change meanwhile: 409 Conflict, "being used by another
     * operation", with a Retry-After. */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"Standard_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "Conflict");
    assert_non_null(strstr(err_msg(&r), "is being used by another operation"));
    assert_non_null(st_hdr(&r, "Retry-After"));
    st_free(&r);
    wait_op(sim, tok, op);
    free(op);
    st_arm(sim, &r, tok, "GET", loc, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(sku(&r), "StandardSSD_LRS");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(sku(&r), "StandardSSD_LRS");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.json, "sku"), "tier")),
                        "Standard");
    assert_string_equal(prop(&r, "tier"), "E10");
    assert_string_equal(prop(&r, "provisioningState"), "Succeeded");
    assert_null(
        json_object_get(json_object_get(r.json, "properties"), "propertyUpdatesInProgress"));
    st_free(&r);
    /* IMDS shows the disk's new type too. */
    st_imds(sim, &r,
            "/metadata/instance/compute/storageProfile/dataDisks/0/managedDisk/"
            "storageAccountType?api-version=2021-02-01&format=text");
    assert_string_equal(r.body, "StandardSSD_LRS");
    st_free(&r);

    /* Back up: the second change of the day; the tier follows the size. */
    op = patch(sim, tok, DATA0, "{\"sku\": {\"name\": \"Premium_LRS\"}}", 202);
    wait_op(sim, tok, op);
    free(op);
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(sku(&r), "Premium_LRS");
    assert_string_equal(prop(&r, "tier"), "P10");
    st_free(&r);

    /* A third change the same day is refused. */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "OperationNotAllowed");
    assert_non_null(strstr(err_msg(&r), "at most 2 times per day"));
    st_free(&r);
    st_request(sim, &r, "GET", "/_sim/state", NULL, NULL);
    json_t *disks = json_object_get(r.json, "disks");
    for (size_t i = 0; i < json_array_size(disks); i++) {
        json_t *d = json_array_get(disks, i);
        if (strcmp(json_string_value(json_object_get(d, "name")), "advisor-vm-01-data0") == 0)
            assert_int_equal(json_integer_value(json_object_get(d, "sku_changes_24h")), 2);
    }
    st_free(&r);
    /* A day later it is allowed again (with a fresh token: the old one
     * expired with the day). */
    st_request(sim, &r, "POST", "/_sim/clock", NULL, "{\"advance_s\": 86400}");
    st_free(&r);
    free(tok);
    tok = st_token(sim);
    op = patch(sim, tok, DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}", 202);
    wait_op(sim, tok, op);
    free(op);

    /* Start: deallocated -> starting -> running; then no more changes. */
    op = vm_action(sim, tok, VM1, "start");
    assert_string_equal(power(sim, tok, VM1), "PowerState/starting");
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"Premium_LRS\"}}");
    assert_int_equal(r.status, 409);
    st_free(&r);
    /* A second action while one runs. */
    st_arm(sim, &r, tok, "POST", VM1 "/deallocate" VC, NULL);
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "Conflict");
    st_free(&r);
    wait_op(sim, tok, op);
    free(op);
    assert_string_equal(power(sim, tok, VM1), "PowerState/running");
    free(tok);
    tw_sim_stop(sim);
}

static void test_tier_change(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    /* A Premium performance tier changes on a running VM (spec
     * Disk_Update_ChangeTier): targetTier shows while it is applied. */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"properties\": {\"tier\": \"P30\"}}");
    assert_int_equal(r.status, 202);
    assert_string_equal(prop(&r, "tier"), "P10");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(r.json, "properties"), "propertyUpdatesInProgress"),
            "targetTier")),
        "P30");
    char *op = strdup(st_hdr(&r, "Azure-AsyncOperation"));
    st_free(&r);
    wait_op(sim, tok, op);
    free(op);
    st_arm(sim, &r, tok, "GET", DATA0, NULL);
    assert_string_equal(prop(&r, "tier"), "P30");
    st_free(&r);
    /* Not below the size's tier, not another family. */
    static const char *const bad[] = {"{\"properties\": {\"tier\": \"P6\"}}",
                                      "{\"properties\": {\"tier\": \"E30\"}}",
                                      "{\"properties\": {\"tier\": \"P31\"}}"};
    for (size_t i = 0; i < 3; i++) {
        st_arm(sim, &r, tok, "PATCH", DATA0, bad[i]);
        assert_int_equal(r.status, 400);
        assert_string_equal(err_code(&r), "InvalidParameter");
        st_free(&r);
    }
    /* Nothing to change: 200 at once. */
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"Premium_LRS\"}, \"tags\": {}}");
    assert_int_equal(r.status, 200);
    assert_string_equal(prop(&r, "provisioningState"), "Succeeded");
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_unattached_and_limits(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(FAST, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    /* An unattached disk switches whatever the VMs do. */
    char *op =
        patch(sim, tok, ST_DISKS "spare-disk" V, "{\"sku\": {\"name\": \"Standard_LRS\"}}", 202);
    wait_op(sim, tok, op);
    free(op);
    st_arm(sim, &r, tok, "GET", ST_DISKS "spare-disk" V, NULL);
    assert_string_equal(sku(&r), "Standard_LRS");
    assert_string_equal(prop(&r, "tier"), "S6");
    st_free(&r);
    /* Ultra and Premium v2 are never converted. */
    st_arm(sim, &r, tok, "PATCH", ST_DISKS "advisor-vm-02-data0" V,
           "{\"sku\": {\"name\": \"UltraSSD_LRS\"}}");
    assert_int_equal(r.status, 409);
    assert_string_equal(err_code(&r), "OperationNotAllowed");
    st_free(&r);
    /* Grow a deallocated VM's disk: the tier follows; shrinking is refused. */
    op = patch(sim, tok, ST_DISKS "advisor-vm-02-data0" V,
               "{\"properties\": {\"diskSizeGB\": 4096}}", 202);
    wait_op(sim, tok, op);
    free(op);
    st_arm(sim, &r, tok, "GET", ST_DISKS "advisor-vm-02-data0" V, NULL);
    assert_string_equal(prop(&r, "tier"), "P50");
    st_free(&r);
    st_arm(sim, &r, tok, "PATCH", ST_DISKS "advisor-vm-02-data0" V,
           "{\"properties\": {\"diskSizeGB\": 1024}}");
    assert_int_equal(r.status, 400);
    st_free(&r);
    /* A stopped (still allocated) VM's disks can't switch either. */
    op = vm_action(sim, tok, VM1, "powerOff");
    assert_string_equal(power(sim, tok, VM1), "PowerState/stopping");
    wait_op(sim, tok, op);
    free(op);
    assert_string_equal(power(sim, tok, VM1), "PowerState/stopped");
    st_arm(sim, &r, tok, "PATCH", DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}");
    assert_int_equal(r.status, 409);
    st_free(&r);
    /* A power change from outside takes effect at once. */
    st_request(sim, &r, "POST", "/_sim/power", NULL,
               "{\"vm\": \"advisor-vm-01\", \"state\": \"deallocated\"}");
    assert_int_equal(r.status, 200);
    st_free(&r);
    assert_string_equal(power(sim, tok, VM1), "PowerState/deallocated");
    op = patch(sim, tok, DATA0, "{\"sku\": {\"name\": \"StandardSSD_LRS\"}}", 202);
    free(op);
    free(tok);
    tw_sim_stop(sim);
}

static void test_lists_and_skus(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", ST_RG "/providers/Microsoft.Compute/disks" V, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "value")), 6);
    st_free(&r);
    st_arm(sim, &r, tok, "GET", "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/disks" V,
           NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "value")), 6);
    st_free(&r);

    const char *skus = "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus"
                       "?api-version=2021-07-01&$filter=location%20eq%20%27eastus%27";
    st_arm(sim, &r, tok, "GET", skus, NULL);
    assert_int_equal(r.status, 200);
    json_t *value = json_object_get(r.json, "value");
    assert_int_equal(json_array_size(value), 1);
    assert_true(json_is_null(json_object_get(r.json, "nextLink")));
    json_t *d2 = json_array_get(value, 0);
    assert_string_equal(json_string_value(json_object_get(d2, "name")), "Standard_D2s_v3");
    bool iops = false;
    json_t *caps = json_object_get(d2, "capabilities");
    for (size_t i = 0; i < json_array_size(caps); i++) {
        json_t *c = json_array_get(caps, i);
        assert_true(json_is_string(json_object_get(c, "value")));
        if (strcmp(json_string_value(json_object_get(c, "name")), "UncachedDiskIOPS") == 0) {
            assert_string_equal(json_string_value(json_object_get(c, "value")), "3200");
            iops = true;
        }
    }
    assert_true(iops);
    st_free(&r);
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus"
           "?api-version=2021-07-01&$filter=location+eq+%27westus%27",
           NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(r.json, "value"), 0), "name")),
                        "Standard_A0");
    st_free(&r);
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus"
           "?api-version=2021-07-01",
           NULL);
    assert_int_equal(json_array_size(json_object_get(r.json, "value")), 2);
    st_free(&r);
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus"
           "?api-version=2021-07-01&$filter=name%20eq%20%27x%27",
           NULL);
    assert_int_equal(r.status, 400);
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_get),       cmocka_unit_test(test_errors),
        cmocka_unit_test(test_patch_running),  cmocka_unit_test(test_switch_cycle),
        cmocka_unit_test(test_tier_change),    cmocka_unit_test(test_unattached_and_limits),
        cmocka_unit_test(test_lists_and_skus),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
