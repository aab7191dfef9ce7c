/* test_vmcap.c - VM uncached disk caps: the built-in table, ARM's two byte
 * encodings, Resource SKUs responses and bad tables. */
#include "testhelp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/vmcap.h"

static void test_builtin(void **state)
{
    (void)state;
    struct tw_vmcap_table t;
    struct tw_error err = {0};
    if (tw_vmcap_table_builtin(&t, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* The wide table of pricing/ (1,112 sizes from the size pages). */
    assert_int_equal(t.n, 1112);
    assert_true(t.sorted);
    for (size_t i = 1; i < t.n; i++)
        if (strcasecmp(t.caps[i - 1].vm_size, t.caps[i].vm_size) >= 0)
            fail_msg("not sorted at %zu: %s, %s", i, t.caps[i - 1].vm_size, t.caps[i].vm_size);
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
    /* Each row's figures beyond the uncached cap (dsv3-series.md). */
    c = tw_vmcap_find(&t, "Standard_D2s_v3");
    assert_non_null(c);
    assert_int_equal(c->iops, 3200);
    assert_int_equal(c->bytes_per_s, 48000000);
    assert_int_equal(c->burst_iops, 4000);
    assert_int_equal(c->burst_bytes_per_s, 200000000);
    assert_int_equal(c->cached_iops, 4000);
    assert_int_equal(c->cached_bytes_per_s, 32000000);
    assert_int_equal(c->premium, TW_VMCAP_PREMIUM_YES);
    /* Sizes the old 7-row table lacked, first and last by name. */
    c = tw_vmcap_find(&t, "Standard_B2als_v2"); /* basv2-series.md */
    assert_non_null(c);
    assert_int_equal(c->iops, 3750);
    assert_int_equal(c->bytes_per_s, 85000000);
    c = tw_vmcap_find(&t, "Standard_B2ms"); /* a fractional MB/s on its page */
    assert_non_null(c);
    assert_int_equal(c->bytes_per_s, 22500000);
    c = tw_vmcap_find(&t, "Standard_L8s_v3");
    assert_non_null(c);
    assert_true(tw_vmcap_has_cap(c));
    assert_string_equal(tw_vmcap_premium_name(c->premium), "yes");
    assert_null(tw_vmcap_find(&t, "Standard_A0")); /* no Premium storage: not in the table */
    assert_null(tw_vmcap_find(&t, "Standard_Nope_v9"));
    assert_null(tw_vmcap_find(&t, NULL));
    /* Bisection finds every row, in any case. */
    for (size_t i = 0; i < t.n; i++) {
        char up[64];
        size_t k = 0;
        for (; t.caps[i].vm_size[k]; k++)
            up[k] = (char)toupper((unsigned char)t.caps[i].vm_size[k]);
        up[k] = '\0';
        if (tw_vmcap_find(&t, up) != &t.caps[i])
            fail_msg("%s not found as %s", t.caps[i].vm_size, up);
    }
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
    assert_int_equal(t.caps[1].premium, TW_VMCAP_PREMIUM_UNKNOWN);
    tw_vmcap_table_cleanup(&t);
    /* Burst, cached and Premium storage; an unsorted table is still found
     * (by a scan), a sorted one by bisection. */
    const char *wide = "{\"vms\":[{\"vm_size\":\"Standard_Z2\",\"uncached_disk_iops\":10,"
                       "\"uncached_burst_iops\":40,\"uncached_burst_mbps\":2.5,"
                       "\"cached_iops\":7,\"cached_mbps\":1,\"premium_storage\":false},"
                       "{\"vm_size\":\"Standard_A1\",\"premium_storage\":true}]}";
    assert_int_equal(tw_vmcap_table_parse(wide, strlen(wide), &t, &err), TW_OK);
    assert_string_equal(t.caps[0].vm_size, "Standard_A1");
    const struct tw_vmcap *z = tw_vmcap_find(&t, "standard_z2");
    assert_non_null(z);
    assert_int_equal(z->burst_iops, 40);
    assert_int_equal(z->burst_bytes_per_s, 2500000);
    assert_int_equal(z->cached_iops, 7);
    assert_int_equal(z->cached_bytes_per_s, 1000000);
    assert_int_equal(z->premium, TW_VMCAP_PREMIUM_NO);
    assert_int_equal(tw_vmcap_find(&t, "Standard_A1")->premium, TW_VMCAP_PREMIUM_YES);
    assert_false(tw_vmcap_has_cap(tw_vmcap_find(&t, "Standard_A1")));
    t.sorted = false;
    assert_ptr_equal(tw_vmcap_find(&t, "STANDARD_Z2"), z);
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
        {"{\"vms\":[{\"vm_size\":\"B\"},{\"vm_size\":\"A\"},{\"vm_size\":\"b\"}]}",
         "listed twice (as "},
        {"{\"vms\":[{\"vm_size\":\"A\",\"uncached_burst_iops\":1.5}]}", "uncached_burst_iops"},
        {"{\"vms\":[{\"vm_size\":\"A\",\"cached_mbps\":-1}]}", "cached_mbps"},
        {"{\"vms\":[{\"vm_size\":\"A\",\"premium_storage\":\"yes\"}]}", "premium_storage"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        enum tw_err rc = tw_vmcap_table_parse(bad[i].doc, strlen(bad[i].doc), &t, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, bad[i].words))
            fail_msg("bad[%zu]: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, bad[i].words);
        assert_int_equal(t.n, 0);
        assert_null(t.caps);
    }
}

/* The text the store keeps ARM's sizes in: every field back as it was. */
static void test_json_text(void **state)
{
    (void)state;
    struct tw_vmcap c = {.vm_size = "Standard_E64s_v3",
                         .iops = 80000,
                         .bytes_per_s = 1200000000,
                         .burst_iops = 1,
                         .burst_bytes_per_s = 2,
                         .cached_iops = 128000,
                         .cached_bytes_per_s = 1000000000,
                         .premium = TW_VMCAP_PREMIUM_YES,
                         .source = "arm"},
                    back;
    struct tw_error err = {0};
    for (int p = TW_VMCAP_PREMIUM_UNKNOWN; p <= TW_VMCAP_PREMIUM_YES; p++) {
        c.premium = (enum tw_vmcap_premium)p;
        char *s = tw_vmcap_to_json(&c);
        assert_non_null(s);
        if (tw_vmcap_from_json(s, strlen(s), &back, &err) != TW_OK)
            fail_msg("%s: %s", s, err.msg);
        assert_string_equal(back.vm_size, c.vm_size);
        assert_string_equal(back.source, c.source);
        assert_int_equal(back.iops, c.iops);
        assert_int_equal(back.bytes_per_s, c.bytes_per_s);
        assert_int_equal(back.burst_iops, c.burst_iops);
        assert_int_equal(back.burst_bytes_per_s, c.burst_bytes_per_s);
        assert_int_equal(back.cached_iops, c.cached_iops);
        assert_int_equal(back.cached_bytes_per_s, c.cached_bytes_per_s);
        assert_int_equal(back.premium, c.premium);
        if (p == TW_VMCAP_PREMIUM_UNKNOWN)
            assert_non_null(strstr(s, "\"premium_storage\":null"));
        free(s);
    }
    struct {
        const char *doc, *words;
    } bad[] = {
        {"", "not valid JSON"},
        {"[]", "must be a JSON object"},
        {"{\"source\":\"arm\"}", "vm_size must be"},
        {"{\"vm_size\":\"S\"}", "source must be"},
        {"{\"vm_size\":\"S\",\"source\":\"arm\",\"iops\":1}", "bytes_per_s must be"},
        {"{\"vm_size\":\"S\",\"source\":\"arm\",\"iops\":-1}", "iops must be"},
        {"{\"vm_size\":\"S\",\"source\":\"arm\",\"iops\":1,\"bytes_per_s\":2,"
         "\"burst_iops\":0,\"burst_bytes_per_s\":0,\"cached_iops\":0,"
         "\"cached_bytes_per_s\":0}",
         "premium_storage must be"},
        {"{\"vm_size\":\"S\",\"vm_size\":\"T\"}", "duplicate"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        enum tw_err rc = tw_vmcap_from_json(bad[i].doc, strlen(bad[i].doc), &back, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, bad[i].words))
            fail_msg("bad[%zu]: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, bad[i].words);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin),
        cmocka_unit_test(test_arm_units),
        cmocka_unit_test(test_resource_skus),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_json_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
