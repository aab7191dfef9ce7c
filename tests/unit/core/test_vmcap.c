/* test_vmcap.c - VM uncached disk caps: the built-in table, ARM's two byte
 * encodings, Resource SKUs responses and bad tables. */
#include "testhelp.h"

#include <string.h>

#include "core/vmcap.h"

static void test_builtin(void **state)
{
    (void)state;
    struct tw_vmcap_table t;
    struct tw_error err = {0};
    if (tw_vmcap_table_builtin(&t, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(t.n, 7);
    const struct tw_vmcap *c = tw_vmcap_find(&t, "Standard_D8s_v3");
    assert_non_null(c);
    assert_int_equal(c->iops, 12800);
    assert_int_equal(c->bytes_per_s, 192000000); /* 192 MBps, MBps = 10^6 B/s */
    assert_string_equal(c->source, "bundled table");
    c = tw_vmcap_find(&t, "standard_e64s_v3"); /* case-insensitive */
    assert_non_null(c);
    assert_string_equal(c->vm_size, "Standard_E64s_v3");
    assert_int_equal(c->iops, 80000);
    assert_int_equal(c->bytes_per_s, 1200000000);
    c = tw_vmcap_find(&t, "Standard_E16ds_v5");
    assert_int_equal(c->iops, 25600);
    assert_int_equal(c->bytes_per_s, 600000000);
    assert_null(tw_vmcap_find(&t, "Standard_L8s_v3"));
    assert_null(tw_vmcap_find(&t, NULL));
    tw_vmcap_table_cleanup(&t);
    tw_vmcap_table_cleanup(&t);
}

static void test_arm_units(void **state)
{
    (void)state;
    struct {
        int64_t raw, want;
    } rows[] = {
        {1258291200, 1200000000}, /* E64s_v3, official sample: 1,200 x 2^20 */
        {15728640, 15000000},     /* B2s: 15 x 2^20 */
        {23592960, 22500000},     /* B2ms: 22.5 x 2^20 */
        {85000000, 85000000},     /* B2as_v2: already 10^6-based */
        {145000000, 145000000},   /* B4as_v2 */
        {600000000, 600000000},
        {0, 0},
        {-1, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (tw_vmcap_arm_bytes_per_s(rows[i].raw) != rows[i].want)
            fail_msg("%lld -> %lld, want %lld", (long long)rows[i].raw,
                     (long long)tw_vmcap_arm_bytes_per_s(rows[i].raw), (long long)rows[i].want);
}

/* The REST page shape, values as the API sends them (strings). */
static const char skus_page[] =
    "{\"value\":[{\"resourceType\":\"disks\",\"name\":\"Standard_B2s\",\"capabilities\":[]},"
    "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_A0\",\"capabilities\":["
    "{\"name\":\"vCPUs\",\"value\":\"1\"}]},"
    "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_B2s\",\"tier\":\"Standard\","
    "\"capabilities\":[{\"name\":\"MaxDataDiskCount\",\"value\":\"4\"},"
    "{\"name\":\"UncachedDiskIOPS\",\"value\":\"1280\"},"
    "{\"name\":\"UncachedDiskBytesPerSecond\",\"value\":\"15728640\"}]}],\"nextLink\":null}";

static void test_resource_skus(void **state)
{
    (void)state;
    struct tw_vmcap c;
    struct tw_error err = {0};
    assert_int_equal(tw_vmcap_from_resource_skus(skus_page, strlen(skus_page), "standard_b2s", &c,
                                                 &err),
                     TW_OK);
    assert_string_equal(c.vm_size, "Standard_B2s");
    assert_int_equal(c.iops, 1280);
    assert_int_equal(c.bytes_per_s, 15000000);
    assert_string_equal(c.source, "arm");
    /* An entry without the capabilities: unknown, not an error. */
    assert_int_equal(tw_vmcap_from_resource_skus(skus_page, strlen(skus_page), "Standard_A0", &c,
                                                 &err),
                     TW_OK);
    assert_int_equal(c.iops, 0);
    assert_int_equal(c.bytes_per_s, 0);
    assert_int_equal(tw_vmcap_from_resource_skus(skus_page, strlen(skus_page), "Standard_D8s_v3",
                                                 &c, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "Standard_D8s_v3"));
    /* az vm list-skus prints a bare array; newer sizes use 10^6. */
    const char *az = "[{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_B2as_v2\","
                     "\"capabilities\":[{\"name\":\"UncachedDiskIOPS\",\"value\":\"3750\"},"
                     "{\"name\":\"UncachedDiskBytesPerSecond\",\"value\":\"85000000\"}]}]";
    assert_int_equal(tw_vmcap_from_resource_skus(az, strlen(az), "Standard_B2as_v2", &c, &err),
                     TW_OK);
    assert_int_equal(c.iops, 3750);
    assert_int_equal(c.bytes_per_s, 85000000);
    const char *bad[] = {
        "",
        "{\"value\":{}}",
        "[{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"capabilities\":"
        "[{\"name\":\"UncachedDiskIOPS\",\"value\":\"12x\"}]}]",
        "[{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"capabilities\":"
        "[{\"name\":\"UncachedDiskIOPS\",\"value\":\"-4\"}]}]",
        "[{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"capabilities\":"
        "[{\"name\":\"UncachedDiskBytesPerSecond\",\"value\":\"99999999999999999999999\"}]}]",
        "[{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"capabilities\":7}]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (tw_vmcap_from_resource_skus(bad[i], strlen(bad[i]), "X", &c, &err) != TW_EPARSE)
            fail_msg("bad[%zu] accepted", i);
    assert_int_equal(tw_vmcap_from_resource_skus(az, strlen(az), "", &c, &err), TW_EINVAL);
}

static void test_tables(void **state)
{
    (void)state;
    struct tw_vmcap_table t;
    struct tw_error err = {0};
    /* The research copy has no schema_version; null figures are unknown. */
    const char *ok = "{\"vms\":[{\"vm_size\":\"Standard_X1\",\"uncached_disk_iops\":500,"
                     "\"uncached_disk_mbps\":12.5},{\"vm_size\":\"Standard_X2\","
                     "\"uncached_disk_iops\":null}]}";
    assert_int_equal(tw_vmcap_table_parse(ok, strlen(ok), &t, &err), TW_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.caps[0].bytes_per_s, 12500000);
    assert_int_equal(t.caps[1].iops, 0);
    assert_int_equal(t.caps[1].bytes_per_s, 0);
    tw_vmcap_table_cleanup(&t);
    struct {
        const char *doc, *words;
    } bad[] = {
        {"", "not valid JSON"},
        {"[]", "JSON object"},
        {"{}", "vms is missing"},
        {"{\"schema_version\":\"other/1\",\"vms\":[]}", "schema_version"},
        {"{\"vms\":[3]}", "vms[0] must be an object"},
        {"{\"vms\":[{\"uncached_disk_iops\":5}]}", "vm_size"},
        {"{\"vms\":[{\"vm_size\":\"A\",\"uncached_disk_iops\":-5}]}", "uncached_disk_iops"},
        {"{\"vms\":[{\"vm_size\":\"A\",\"uncached_disk_mbps\":\"fast\"}]}", "uncached_disk_mbps"},
        {"{\"vms\":[{\"vm_size\":\"A\"},{\"vm_size\":\"a\"}]}", "listed twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        enum tw_err rc = tw_vmcap_table_parse(bad[i].doc, strlen(bad[i].doc), &t, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, bad[i].words))
            fail_msg("bad[%zu]: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, bad[i].words);
        assert_int_equal(t.n, 0);
        assert_null(t.caps);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin),
        cmocka_unit_test(test_arm_units),
        cmocka_unit_test(test_resource_skus),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
