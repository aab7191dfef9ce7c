/* test_skus.c - Resource SKUs pages into VM caps: the samples, the two byte
 * units, bad pages, and paging against a loopback server. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure/skus.h"
#include "fakesrv.h"

static void test_samples(void **state)
{
    (void)state;
    struct tw_vmcap_table t = {0};
    struct tw_error err = {0};
    char next[TW_AZ_NEXTLINK_MAX];
    size_t len;
    /* The REST spec page: its only VM (Standard_A0) has no disk figures,
     * but says it can't attach Premium storage (PremiumIO "False"), which
     * the savings model needs: kept, with no cap.  nextLink is null. */
    char *doc = th_fixture("arm/real-spec-skus-page.json", &len);
    assert_int_equal(tw_az_skus_parse_page(doc, len, &t, next, sizeof(next), &err), TW_OK);
    free(doc);
    assert_int_equal(t.n, 1);
    assert_string_equal(next, "");
    const struct tw_vmcap *c = tw_vmcap_find(&t, "Standard_A0");
    assert_non_null(c);
    assert_false(tw_vmcap_has_cap(c));
    assert_int_equal(c->premium, TW_VMCAP_PREMIUM_NO);

    /* az's bare array: two VM sizes (and a snapshot entry, skipped). */
    doc = th_fixture("arm/real-az-cli-skus-westus.json", &len);
    assert_int_equal(tw_az_skus_parse_page(doc, len, &t, next, sizeof(next), &err), TW_OK);
    free(doc);
    assert_int_equal(t.n, 3);
    c = tw_vmcap_find(&t, "standard_b2s");
    assert_non_null(c);
    assert_string_equal(c->vm_size, "Standard_B2s");
    assert_int_equal(c->iops, 1280);
    /* 15,728,640 = 15 x 2^20: the size page's 15 MB/s. */
    assert_int_equal(c->bytes_per_s, 15000000);
    assert_string_equal(c->source, "arm");
    assert_int_equal(c->premium, TW_VMCAP_PREMIUM_YES);
    /* CombinedTempDiskAndCachedIOPS 1600, ...ReadBytesPerSecond 15 x 2^20. */
    assert_int_equal(c->cached_iops, 1600);
    assert_int_equal(c->cached_bytes_per_s, 15000000);
    assert_int_equal(c->burst_iops, 0);
    c = tw_vmcap_find(&t, "Standard_B2ms");
    assert_non_null(c);
    assert_int_equal(c->iops, 1920);
    assert_int_equal(c->bytes_per_s, 22500000); /* 22.5 x 2^20 */
    tw_vmcap_table_cleanup(&t);
}

static void test_units(void **state)
{
    (void)state;
    /* The catalog's two encodings of UncachedDiskBytesPerSecond: the docs'
     * E64s_v3 sample (1,200 MB/s as 1200 x 2^20) and a newer size given in
     * 10^6 units (B2as_v2 85 MB/s). */
    const char *page =
        "{\"value\": ["
        "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_E64s_v3\", "
        " \"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"80000\"},"
        "  {\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"1258291200\"}]},"
        "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_B2as_v2\", "
        " \"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"3750\"},"
        "  {\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"85000000\"}]},"
        "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_Odd\", "
        " \"capabilities\": [{\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"123457\"}]},"
        "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_None\", "
        " \"capabilities\": [{\"name\": \"vCPUs\", \"value\": \"2\"}]},"
        "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_E64s_v3\", "
        " \"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"1\"}]},"
        "{\"resourceType\": \"disks\", \"name\": \"Premium_LRS\", \"size\": \"P50\","
        " \"capabilities\": [{\"name\": \"MaxIOps\", \"value\": \"7500\"}]}"
        "], \"nextLink\": null}";
    struct tw_vmcap_table t = {0};
    struct tw_error err = {0};
    char next[256];
    assert_int_equal(tw_az_skus_parse_page(page, strlen(page), &t, next, sizeof(next), &err),
                     TW_OK);
    /* The repeated E64s_v3 (another region's) and the size without disk
     * caps add nothing. */
    assert_int_equal(t.n, 3);
    assert_int_equal(tw_vmcap_find(&t, "Standard_E64s_v3")->iops, 80000);
    assert_int_equal(tw_vmcap_find(&t, "Standard_E64s_v3")->bytes_per_s, 1200000000);
    assert_int_equal(tw_vmcap_find(&t, "Standard_B2as_v2")->bytes_per_s, 85000000);
    assert_int_equal(tw_vmcap_find(&t, "Standard_Odd")->bytes_per_s, 123457);
    assert_int_equal(tw_vmcap_find(&t, "Standard_Odd")->iops, 0);
    assert_null(tw_vmcap_find(&t, "Standard_None"));
    assert_null(tw_vmcap_find(&t, "Premium_LRS"));
    tw_vmcap_table_cleanup(&t);
}

static void test_bad_pages(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *words;
    } cases[] = {
        {"{", "not valid JSON"},
        {"{\"value\": {}}", "expected {\"value\": [...]"},
        {"{\"value\": [5]}", "value[0] must be an object"},
        {"{\"value\": [{\"resourceType\": 5}]}", "value[0].resourceType must be a string"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\"}]}", "value[0].name must be"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": {}}]}",
         "S (value[0]): capabilities must be an array"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": [3]}]}",
         "S: capabilities[0] must be"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"lots\"}]}]}",
         "S: capability UncachedDiskIOPS must be a whole number"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": [{\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"-1\"}]}]}",
         "UncachedDiskBytesPerSecond must be a whole number"},
        {"{\"value\": [], \"nextLink\": 5}", "nextLink must be a URL"},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": [{\"name\": \"PremiumIO\", \"value\": \"maybe\"}]}]}",
         "S: capability PremiumIO must be \"True\" or \"False\""},
        {"{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"S\", "
         "\"capabilities\": [{\"name\": \"CombinedTempDiskAndCachedIOPS\", \"value\": 1.5}]}]}",
         "S: capability CombinedTempDiskAndCachedIOPS must be a whole number"},
    };
    struct tw_vmcap_table t = {0};
    struct tw_error err = {0};
    char next[256];
    /* One good entry first: a bad page must leave it as it was. */
    const char *good =
        "[{\"resourceType\": \"virtualMachines\", \"name\": \"G\", \"capabilities\": "
        "[{\"name\": \"UncachedDiskIOPS\", \"value\": \"5\"}]}]";
    assert_int_equal(tw_az_skus_parse_page(good, strlen(good), &t, next, sizeof(next), &err),
                     TW_OK);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *doc = cases[i].doc;
        enum tw_err rc = tw_az_skus_parse_page(doc, strlen(doc), &t, next, sizeof(next), &err);
        if (rc != TW_EPARSE || !strstr(err.msg, cases[i].words))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, cases[i].words);
        assert_int_equal(t.n, 1);
        assert_string_equal(next, "");
    }
    /* A page that fails after adding an entry takes it back. */
    const char *half =
        "{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"H\", "
        "\"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"5\"}]}, 7]}";
    assert_int_equal(tw_az_skus_parse_page(half, strlen(half), &t, next, sizeof(next), &err),
                     TW_EPARSE);
    assert_int_equal(t.n, 1);
    assert_null(tw_vmcap_find(&t, "H"));
    tw_vmcap_table_cleanup(&t);
}

static char *page(const char *name, int iops, const char *next)
{
    char *s = malloc(1024);
    assert_non_null(s);
    snprintf(s, 1024,
             "{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": \"%s\", "
             "\"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": \"%d\"}, "
             "{\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"%d\"}]}], "
             "\"nextLink\": %s%s%s}",
             name, iops, iops * 10000, next ? "\"" : "", next ? next : "null", next ? "\"" : "");
    return s;
}

static void test_paging(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{500, "", NULL, 0}, {0}});
    assert_non_null(s);
    char link2[256], link3[256];
    snprintf(link2, sizeof(link2),
             "%s/subscriptions/sub-1/providers/Microsoft.Compute/skus?"
             "api-version=2021-07-01&%%24skiptoken=p2",
             s->base);
    snprintf(link3, sizeof(link3),
             "%s/subscriptions/sub-1/providers/Microsoft.Compute/skus?"
             "api-version=2021-07-01&%%24skiptoken=p3",
             s->base);
    char *p1 = page("Standard_A", 100, link2), *p2 = page("Standard_B", 200, link3),
         *p3 = page("Standard_C", 300, NULL);
    fs_script(
        s,
        (struct fs_reply[]){
            {200, p1, NULL, 0}, {503, "", NULL, 0}, {200, p2, NULL, 0}, {200, p3, NULL, 0}, {0}});
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    o.loopback_only = true;
    o.sleep_ms = fs_sleep;
    o.sleep_arg = &z;
    struct tw_vmcap_table t = {0};
    struct tw_error err = {0};
    if (tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "tok-123", NULL, &t, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(fs_requests(s), 4); /* three pages, one retried */
    assert_int_equal(t.n, 3);
    assert_int_equal(tw_vmcap_find(&t, "Standard_C")->iops, 300);
    /* A region's sizes come back sorted, for lookups by bisection. */
    assert_true(t.sorted);
    assert_string_equal(t.caps[0].vm_size, "Standard_A");
    assert_string_equal(t.caps[2].vm_size, "Standard_C");
    assert_string_equal(s->authorization, "Bearer tok-123");
    assert_string_equal(s->api_version, "2021-07-01");
    assert_string_equal(s->path, "/subscriptions/sub-1/providers/Microsoft.Compute/skus");
    tw_vmcap_table_cleanup(&t);

    /* The first request carries the location filter. */
    fs_script(s, (struct fs_reply[]){{200, p3, NULL, 0}, {0}});
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "t", NULL, &t, &err),
                     TW_OK);
    assert_string_equal(s->filter, "location eq 'westeurope'");
    tw_vmcap_table_cleanup(&t);

    /* Looking for one size stops at the page that has it. */
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {0}});
    assert_int_equal(
        tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "t", "standard_a", &t, &err), TW_OK);
    assert_int_equal(fs_requests(s), 1);
    tw_vmcap_table_cleanup(&t);

    /* A nextLink elsewhere would take the token with it: refused. */
    char *away = page("Standard_A", 1, "http://127.0.0.2:1/steal");
    fs_script(s, (struct fs_reply[]){{200, away, NULL, 0}, {0}});
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "t", NULL, &t, &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, "not following it with the token"));
    assert_int_equal(fs_requests(s), 1);
    tw_vmcap_table_cleanup(&t);

    /* A nextLink that points at itself ends. */
    char self[256];
    snprintf(self, sizeof(self), "%s/loop", s->base);
    char *loop = page("Standard_A", 1, self);
    fs_script(s, (struct fs_reply[]){{200, loop, NULL, 0}, {0}});
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "t", NULL, &t, &err),
                     TW_EIO);
    assert_non_null(strstr(err.msg, "repeats itself"));
    assert_int_equal(fs_requests(s), 2);
    tw_vmcap_table_cleanup(&t);

    /* ARM refuses the token. */
    fs_script(
        s, (struct fs_reply[]){
               {401,
                "{\"error\": {\"code\": \"InvalidAuthenticationToken\", \"message\": \"The access "
                "token is invalid.\"}}",
                NULL, 0},
               {0}});
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "t", NULL, &t, &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, "InvalidAuthenticationToken"));
    tw_vmcap_table_cleanup(&t);

    /* Arguments that would need escaping are refused before any request. */
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub/../x", "westeurope", "t", NULL, &t, &err),
                     TW_EINVAL);
    assert_int_equal(tw_az_skus_fetch(&o, s->base, "sub-1", "west europe", "t", NULL, &t, &err),
                     TW_EINVAL);
    assert_int_equal(
        tw_az_skus_fetch(&o, s->base, "sub-1", "westeurope", "a\r\nX: y", NULL, &t, &err),
        TW_EINVAL);
    free(p1);
    free(p2);
    free(p3);
    free(away);
    free(loop);
    fs_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_bad_pages),
        cmocka_unit_test(test_paging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
