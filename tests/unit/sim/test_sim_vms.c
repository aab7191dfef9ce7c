/* test_sim_vms.c - the simulated Resource Manager's VMs (GET, lists with
 * nextLink, $expand=instanceView), list paging of disks, and the
 * api-versions each route answers. */
#include "simtest.h"

#define VD "?api-version=2024-03-02" /* DiskRP's */
#define VC "?api-version=2024-07-01" /* ComputeRP's */
#define VM1 ST_VMS "advisor-vm-01"
#define VM2 ST_VMS "advisor-vm-02"
#define SUBVMS "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/virtualMachines"
#define RGVMS ST_RG "/providers/Microsoft.Compute/virtualMachines"

static const char *err_code(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static const char *err_msg(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "message"));
}

static const char *str_at(const json_t *o, const char *path)
{
    /* "a.b.c": members only */
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    const json_t *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    return json_string_value(v);
}

static const char *power_of(const json_t *vm)
{
    json_t *st = json_object_get(json_object_get(json_object_get(vm, "properties"), "instanceView"),
                                 "statuses");
    for (size_t i = 0; i < json_array_size(st); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(st, i), "code"));
        if (c && strncmp(c, "PowerState/", 11) == 0)
            return c;
    }
    return NULL;
}

static void test_vm_get(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET", VM1 VC, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(str_at(r.json, "id"), VM1);
    assert_string_equal(str_at(r.json, "name"), "advisor-vm-01");
    assert_string_equal(str_at(r.json, "type"), "Microsoft.Compute/virtualMachines");
    assert_string_equal(str_at(r.json, "location"), "eastus");
    assert_string_equal(str_at(r.json, "tags.env"), "test");
    assert_string_equal(str_at(r.json, "tags.owner"), "advisor");
    assert_string_equal(str_at(r.json, "properties.vmId"), "6f5b1c2e-8a3d-4c7e-9b10-2d4f6a8c0e12");
    assert_string_equal(str_at(r.json, "properties.hardwareProfile.vmSize"), "Standard_D2s_v3");
    assert_string_equal(str_at(r.json, "properties.provisioningState"), "Succeeded");
    assert_string_equal(str_at(r.json, "properties.storageProfile.osDisk.name"),
                        "advisor-vm-01_OsDisk_1_0123456789abcdef0123456789abcdef");
    assert_string_equal(str_at(r.json, "properties.storageProfile.osDisk.caching"), "ReadWrite");
    assert_string_equal(str_at(r.json, "properties.storageProfile.osDisk.managedDisk.id"),
                        ST_DISKS "advisor-vm-01_OsDisk_1_0123456789abcdef0123456789abcdef");
    assert_string_equal(
        str_at(r.json, "properties.storageProfile.osDisk.managedDisk.storageAccountType"),
        "Premium_LRS");
    json_t *data = json_object_get(
        json_object_get(json_object_get(r.json, "properties"), "storageProfile"), "dataDisks");
    assert_int_equal(json_array_size(data), 2);
    json_t *d0 = json_array_get(data, 0), *d1 = json_array_get(data, 1);
    assert_int_equal(json_integer_value(json_object_get(d0, "lun")), 0);
    assert_string_equal(str_at(d0, "name"), "advisor-vm-01-data0");
    assert_string_equal(str_at(d0, "caching"), "ReadOnly");
    assert_string_equal(str_at(d0, "managedDisk.id"), ST_DISKS "advisor-vm-01-data0");
    assert_string_equal(str_at(d0, "managedDisk.storageAccountType"), "Premium_LRS");
    assert_int_equal(json_integer_value(json_object_get(d1, "lun")), 1);
    assert_string_equal(str_at(d1, "managedDisk.storageAccountType"), "StandardSSD_LRS");
    assert_null(json_object_get(json_object_get(r.json, "properties"), "instanceView"));
    st_free(&r);

    /* $expand=instanceView: the instance view inline. */
    st_arm(sim, &r, tok, "GET", VM1 VC "&$expand=instanceView", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(power_of(r.json), "PowerState/running");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", VM2 VC "&$expand=instanceView", NULL);
    assert_string_equal(power_of(r.json), "PowerState/deallocated");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", VM1 VC "&$expand=userData", NULL);
    assert_int_equal(r.status, 400);
    assert_string_equal(err_code(&r), "InvalidParameter");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", ST_VMS "nope" VC, NULL);
    assert_int_equal(r.status, 404);
    assert_string_equal(err_code(&r), "ResourceNotFound");
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

/* Follows a list from URL; returns the items (a new array) and the pages. */
static json_t *walk(struct tw_sim *sim, const char *tok, const char *url, int *pages,
                    const char *must_keep)
{
    json_t *all = json_array();
    char next[2048];
    snprintf(next, sizeof(next), "%s", url);
    *pages = 0;
    while (next[0]) {
        struct st_resp r;
        st_arm(sim, &r, tok, "GET", next, NULL);
        if (r.status != 200)
            fail_msg("GET %s: %ld %s", next, r.status, r.body);
        (*pages)++;
        json_array_extend(all, json_object_get(r.json, "value"));
        const char *nl = json_string_value(json_object_get(r.json, "nextLink"));
        next[0] = '\0';
        if (nl) {
            /* Back to the simulator itself, with the api-version. */
            assert_int_equal(strncmp(nl, tw_sim_url(sim), strlen(tw_sim_url(sim))), 0);
            assert_non_null(strstr(nl, "$skiptoken="));
            if (must_keep)
                assert_non_null(strstr(nl, must_keep));
            snprintf(next, sizeof(next), "%s", nl);
        }
        st_free(&r);
        assert_true(*pages < 50);
    }
    return all;
}

static void test_vm_lists(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    int pages;
    json_t *all = walk(sim, tok, SUBVMS VC, &pages, NULL);
    assert_int_equal(pages, 1);
    assert_int_equal(json_array_size(all), 2);
    assert_string_equal(str_at(json_array_get(all, 0), "name"), "advisor-vm-01");
    assert_null(power_of(json_array_get(all, 0)));
    json_decref(all);
    all = walk(sim, tok, RGVMS VC "&$expand=instanceView", &pages, NULL);
    assert_int_equal(json_array_size(all), 2);
    assert_string_equal(power_of(json_array_get(all, 0)), "PowerState/running");
    assert_string_equal(power_of(json_array_get(all, 1)), "PowerState/deallocated");
    json_decref(all);
    struct st_resp r;
    st_arm(sim, &r, tok, "GET",
           "/subscriptions/" ST_SUB "/resourceGroups/rg-x/providers/Microsoft.Compute/"
           "virtualMachines" VC,
           NULL);
    assert_int_equal(r.status, 404);
    assert_string_equal(err_code(&r), "ResourceGroupNotFound");
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);

    /* One VM a page: two pages, the link keeps api-version and $expand. */
    sim = st_start("{\"arm_page_size\": 1}", NULL);
    tok = st_token(sim);
    all = walk(sim, tok, SUBVMS VC "&$expand=instanceView", &pages, "$expand=instanceView");
    assert_int_equal(pages, 2);
    assert_int_equal(json_array_size(all), 2);
    assert_string_equal(str_at(json_array_get(all, 1), "name"), "advisor-vm-02");
    assert_string_equal(power_of(json_array_get(all, 1)), "PowerState/deallocated");
    json_decref(all);
    all = walk(sim, tok, RGVMS VC, &pages, "api-version=2024-07-01");
    assert_int_equal(pages, 2);
    json_decref(all);
    /* Disks page the same way: 6 disks, 1 a page. */
    all = walk(sim, tok, "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/disks" VD, &pages,
               "api-version=2024-03-02");
    assert_int_equal(pages, 6);
    assert_int_equal(json_array_size(all), 6);
    json_decref(all);
    st_arm(sim, &r, tok, "GET", SUBVMS VC "&$skiptoken=abc", NULL);
    assert_int_equal(r.status, 400);
    assert_string_equal(err_code(&r), "InvalidParameter");
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

static void test_api_versions(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    char *tok = st_token(sim);
    struct st_resp r;
    static const char *const missing[] = {
        VM1,
        VM1 "/instanceView",
        SUBVMS,
        ST_DISKS "spare-disk",
        "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus",
        "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/locations/eastus/operations/x"};
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
        st_arm(sim, &r, tok, "GET", missing[i], NULL);
        assert_int_equal(r.status, 400);
        assert_string_equal(err_code(&r), "MissingApiVersionParameter");
        st_free(&r);
    }
    st_arm(sim, &r, tok, "POST", VM1 "/deallocate", NULL);
    assert_string_equal(err_code(&r), "MissingApiVersionParameter");
    st_free(&r);
    /* A version of the wrong provider, or none that exists. */
    static const struct {
        const char *method, *path, *names;
    } wrong[] = {
        {"GET", VM1 VD, "2024-07-01"},
        {"POST", VM1 "/start" VD, "2024-07-01"},
        {"GET", ST_DISKS "spare-disk" VC, "2024-03-02"},
        {"PATCH", ST_DISKS "spare-disk?api-version=2099-01-01", "2024-03-02"},
        {"GET", "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus" VC, "2021-07-01"},
        {"GET", "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/disks?api-version=", ""},
    };
    for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
        st_arm(sim, &r, tok, wrong[i].method, wrong[i].path,
               strcmp(wrong[i].method, "PATCH") == 0 ? "{}" : NULL);
        if (r.status != 400)
            fail_msg("%s %s: %ld", wrong[i].method, wrong[i].path, r.status);
        assert_string_equal(err_code(&r), "InvalidApiVersionParameter");
        assert_non_null(strstr(err_msg(&r), "The supported versions are"));
        assert_non_null(strstr(err_msg(&r), wrong[i].names));
        st_free(&r);
    }
    /* Older real versions are answered. */
    static const char *const older[] = {
        VM1 "?api-version=2023-03-01", ST_DISKS "spare-disk?api-version=2023-04-02",
        "/subscriptions/" ST_SUB "/providers/Microsoft.Compute/skus?api-version=2019-04-01"};
    for (size_t i = 0; i < 3; i++) {
        st_arm(sim, &r, tok, "GET", older[i], NULL);
        assert_int_equal(r.status, 200);
        st_free(&r);
    }
    free(tok);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vm_get),
        cmocka_unit_test(test_vm_lists),
        cmocka_unit_test(test_api_versions),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
