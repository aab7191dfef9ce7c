/* test_sim_imds.c - the simulated Instance Metadata Service against the
 * documented shape (tests/fixtures/sim/imds-instance-constructed.json, a
 * copy of ../shared/azure-api/), its header rules and its errors. */
#include "simtest.h"

#define INSTANCE "/metadata/instance?api-version=2021-02-01"

/* Every key of the sample is in ours with a value of the same JSON type;
 * arrays are compared by their first element when both have one. */
static void same_shape(const json_t *sample, const json_t *ours, const char *path)
{
    if (json_typeof(sample) != json_typeof(ours))
        fail_msg("%s: type %d in the sample, %d here", path, json_typeof(sample),
                 json_typeof(ours));
    char sub[512];
    if (json_is_object(sample)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)sample, k, v)
        {
            snprintf(sub, sizeof(sub), "%s.%s", path, k);
            const json_t *o = json_object_get(ours, k);
            if (!o)
                fail_msg("%s is missing", sub);
            same_shape(v, o, sub);
        }
    } else if (json_is_array(sample) && json_array_size(sample) && json_array_size(ours)) {
        snprintf(sub, sizeof(sub), "%s[0]", path);
        same_shape(json_array_get(sample, 0), json_array_get(ours, 0), sub);
    }
}

/* IMDS sends every primitive as a string. */
static void all_strings(const json_t *v, const char *path)
{
    char sub[512];
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c)
        {
            snprintf(sub, sizeof(sub), "%s.%s", path, k);
            all_strings(c, sub);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            all_strings(json_array_get(v, i), sub);
        }
    } else if (!json_is_string(v)) {
        fail_msg("%s is not a string", path);
    }
}

static void test_instance(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_imds(sim, &r, INSTANCE);
    assert_int_equal(r.status, 200);
    assert_string_equal(st_hdr(&r, "Content-Type"), "application/json; charset=utf-8");
    assert_non_null(r.json);
    size_t len;
    char *text = th_fixture("sim/imds-instance-constructed.json", &len);
    json_t *sample = json_loadb(text, len, 0, NULL);
    free(text);
    assert_non_null(sample);
    same_shape(sample, r.json, "");
    all_strings(r.json, "");
    /* The example scenario describes the documented VM: its storage
     * profile, tags, ids and network come out as in the sample. */
    json_t *c = json_object_get(r.json, "compute"), *sc = json_object_get(sample, "compute");
    json_t *sp = json_object_get(c, "storageProfile"), *ssp = json_object_get(sc, "storageProfile");
    assert_true(json_equal(json_object_get(sp, "dataDisks"), json_object_get(ssp, "dataDisks")));
    assert_true(json_equal(json_object_get(sp, "osDisk"), json_object_get(ssp, "osDisk")));
    assert_true(
        json_equal(json_object_get(sp, "imageReference"), json_object_get(ssp, "imageReference")));
    static const char *const keys[] = {"location",       "name",           "resourceGroupName",
                                       "resourceId",     "subscriptionId", "tags",
                                       "tagsList",       "vmId",           "vmSize",
                                       "zone",           "osType",         "osProfile",
                                       "securityProfile"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (!json_equal(json_object_get(c, keys[i]), json_object_get(sc, keys[i])))
            fail_msg("compute.%s differs from the sample", keys[i]);
    }
    assert_true(json_equal(json_object_get(r.json, "network"), json_object_get(sample, "network")));
    json_decref(sample);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_headers(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    /* No Metadata header: 400, {"error": ...} (imds.md 1, 4). */
    st_request(sim, &r, "GET", INSTANCE, NULL, NULL);
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "error")),
                        "Bad request. Required metadata header not specified");
    st_free(&r);
    static const char *const wrong[] = {"Metadata: false", NULL};
    st_request(sim, &r, "GET", INSTANCE, wrong, NULL);
    assert_int_equal(r.status, 400);
    st_free(&r);
    /* Anything that came through a proxy is refused. */
    static const char *const proxied[] = {"Metadata: true", "X-Forwarded-For: 10.1.1.1", NULL};
    st_request(sim, &r, "GET", INSTANCE, proxied, NULL);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(json_string_value(json_object_get(r.json, "error")), "X-Forwarded-For"));
    st_free(&r);
    /* The documented body for a missing api-version, verbatim. */
    st_imds(sim, &r, "/metadata/instance");
    assert_int_equal(r.status, 400);
    json_t *want = json_pack("{s:s, s:[s, s, s]}", "error",
                             "Bad request. api-version was not specified in the request. For more "
                             "information refer to aka.ms/azureimds",
                             "newest-versions", "2020-10-01", "2020-09-01", "2020-07-15");
    assert_true(json_equal(r.json, want));
    json_decref(want);
    st_free(&r);
    /* Duplicate query parameters are refused. */
    st_imds(sim, &r, INSTANCE "&api-version=2021-05-01");
    assert_int_equal(r.status, 400);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_paths(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_imds(sim, &r, "/metadata/instance/compute?api-version=2021-02-01");
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "vmSize")), "Standard_D2s_v3");
    st_free(&r);
    /* A leaf needs format=text and comes as text. */
    st_imds(sim, &r, "/metadata/instance/compute/vmSize?api-version=2021-02-01&format=text");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "Standard_D2s_v3");
    assert_non_null(strstr(st_hdr(&r, "Content-Type"), "text/plain"));
    st_free(&r);
    st_imds(sim, &r,
            "/metadata/instance/compute/storageProfile/dataDisks/1/managedDisk/"
            "storageAccountType?api-version=2021-02-01&format=text");
    assert_string_equal(r.body, "StandardSSD_LRS");
    st_free(&r);
    st_imds(sim, &r, "/metadata/instance/compute/vmSize?api-version=2021-02-01");
    assert_int_equal(r.status, 400);
    st_free(&r);
    st_imds(sim, &r, "/metadata/instance/compute/nothing?api-version=2021-02-01");
    assert_int_equal(r.status, 404);
    st_free(&r);
    st_imds(sim, &r,
            "/metadata/instance/compute/storageProfile/dataDisks/9?api-version=2021-02-01");
    assert_int_equal(r.status, 404);
    st_free(&r);
    st_imds(sim, &r, "/metadata/versions");
    assert_int_equal(r.status, 200);
    assert_true(json_array_size(json_object_get(r.json, "apiVersions")) > 10);
    st_free(&r);
    tw_sim_stop(sim);
}

static void no_vms(json_t *root)
{
    json_object_set_new(root, "vms", json_array());
    json_object_del(root, "self");
}

static void test_no_self(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, no_vms);
    struct st_resp r;
    st_imds(sim, &r, INSTANCE);
    assert_int_equal(r.status, 404);
    st_free(&r);
    tw_sim_stop(sim);
}

static void ultra_and_tags(json_t *root)
{
    json_t *vm = json_array_get(json_object_get(root, "vms"), 0);
    json_array_append_new(json_object_get(vm, "disks"),
                          json_pack("{s:s, s:s, s:i, s:s, s:i, s:b}", "name", "ultra", "role",
                                    "data", "lun", 5, "sku", "UltraSSD_LRS", "size_gib", 1024,
                                    "write_accelerator", 1));
    json_object_set_new(vm, "tags", json_object());
}

static void test_variants(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, ultra_and_tags);
    struct st_resp r;
    st_imds(sim, &r, INSTANCE);
    json_t *c = json_object_get(r.json, "compute");
    json_t *dd = json_object_get(json_object_get(c, "storageProfile"), "dataDisks");
    /* Ordered by LUN; the Ultra disk says so. */
    assert_int_equal(json_array_size(dd), 3);
    json_t *u = json_array_get(dd, 2);
    assert_string_equal(json_string_value(json_object_get(u, "lun")), "5");
    assert_string_equal(json_string_value(json_object_get(u, "isUltraDisk")), "true");
    assert_string_equal(json_string_value(json_object_get(u, "writeAcceleratorEnabled")), "true");
    assert_string_equal(json_string_value(json_object_get(c, "tags")), "");
    assert_int_equal(json_array_size(json_object_get(c, "tagsList")), 0);
    st_free(&r);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instance), cmocka_unit_test(test_headers),
        cmocka_unit_test(test_paths),    cmocka_unit_test(test_no_self),
        cmocka_unit_test(test_variants),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
