/* test_sim_odata.c - the Retail Prices $filter subset: what parses, what
 * matches, what is refused. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_odata.h"

/* An item as key/value pairs. */
struct item {
    const char *kv[24];
};

static const char *get(const void *p, const char *key)
{
    const struct item *it = p;
    for (size_t i = 0; it->kv[i]; i += 2) {
        if (strcmp(it->kv[i], key) == 0)
            return it->kv[i + 1];
    }
    return NULL;
}

static const struct item p10 = {{"serviceName", "Storage", "armRegionName", "westeurope",
                                 "meterName", "P10 LRS Disk", "skuName", "P10 LRS", "productName",
                                 "Premium SSD Managed Disks", "type", "Consumption", "currencyCode",
                                 "USD", "location", "EU West", NULL}};

static bool match(const char *filter, bool cs, const struct item *it)
{
    struct tw_odata_filter *f = malloc(sizeof(*f));
    struct tw_error err = {0};
    assert_non_null(f);
    if (tw_odata_parse(filter, strlen(filter), cs, f, &err) != TW_OK)
        fail_msg("\"%s\" did not parse: %s", filter, err.msg);
    bool m = tw_odata_match(f, it, get);
    free(f);
    return m;
}

static void test_matches(void **state)
{
    (void)state;
    static const struct {
        const char *filter;
        bool cs;
        bool want;
    } cases[] = {
        {"", false, true},
        {"serviceName eq 'Storage'", false, true},
        {"serviceName eq 'Compute'", false, false},
        {"serviceName eq 'storage'", false, true}, /* before 2023-01-01-preview: no case */
        {"serviceName eq 'storage'", true, false}, /* from it: values are case-sensitive */
        {"SERVICENAME eq 'Storage'", true, true},  /* field names never are */
        {"serviceName eq 'Storage' and armRegionName eq 'westeurope' and skuName eq 'P10 LRS'",
         true, true},
        {"serviceName eq 'Storage' and armRegionName eq 'eastus'", true, false},
        {"armRegionName eq 'eastus' or armRegionName eq 'westeurope'", true, true},
        {"(priceType eq 'Consumption' or priceType eq 'Reservation') and skuName eq 'P10 LRS'",
         true, true},
        {"priceType eq 'Reservation'", true, false},
        {"priceType eq 'SavingsPlan'", true, false},
        {"contains(meterName, 'LRS')", true, true},
        {"contains(meterName, 'Mount')", true, false},
        {"contains(meterName,'lrs')", false, true},
        {"startswith(productName, 'Premium SSD')", true, true},
        {"endswith(meterName, 'Disk')", true, true},
        {"endswith(meterName, 'Disk Mount')", true, false},
        {"Location eq 'EU West'", true, true},
        {"currencyCode eq 'USD'", true, true},
        {"meterId eq 'x'", true, false}, /* the item has no meterId */
        {"skuName eq 'it''s'", true, false},
        {"  serviceName   eq   'Storage'  ", true, true},
        {"((serviceName eq 'Storage'))", true, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (match(cases[i].filter, cases[i].cs, &p10) != cases[i].want)
            fail_msg("\"%s\" (case-sensitive %d) should %smatch", cases[i].filter, cases[i].cs,
                     cases[i].want ? "" : "not ");
    }
    /* An escaped quote reaches the value. */
    static const struct item q = {{"skuName", "it's", NULL}};
    assert_true(match("skuName eq 'it''s'", true, &q));
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "serviceName ne 'Storage'",               /* only eq */
        "serviceName eq Storage",                 /* unquoted */
        "serviceName eq 'Storage",                /* unterminated */
        "serviceName eq 'Storage' and",           /* dangling */
        "type eq 'Consumption'",                  /* the filter name is priceType */
        "priceType eq 'OnDemand'",                /* captured 400 */
        "priceType eq 'consumption'",             /* case-sensitive version */
        "savingsPlan/any(t: t/term eq '1 Year')", /* captured 400 */
        "not serviceName eq 'Storage'",
        "retailPrice eq 21.68",
        "contains(meterName 'x')",
        "(serviceName eq 'Storage'",
        "serviceName eq 'Storage')",
        "unitPrice gt 0",
        "serviceName eq 'a' nand serviceName eq 'b'",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_odata_filter *f = malloc(sizeof(*f));
        struct tw_error err = {0};
        assert_non_null(f);
        if (tw_odata_parse(bad[i], strlen(bad[i]), true, f, &err) == TW_OK)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_non_null(strstr(err.msg, "$filter"));
        assert_true(err.column >= 1);
        free(f);
    }
}

static void test_limits(void **state)
{
    (void)state;
    struct tw_odata_filter *f = malloc(sizeof(*f));
    struct tw_error err = {0};
    assert_non_null(f);
    /* Deep parentheses stop at the limit instead of the stack. */
    char deep[512];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        deep[n++] = '(';
    n += (size_t)snprintf(deep + n, sizeof(deep) - n, "serviceName eq 'x'");
    for (int i = 0; i < 40; i++)
        deep[n++] = ')';
    deep[n] = '\0';
    assert_int_equal(tw_odata_parse(deep, n, true, f, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "too deep"));
    /* Too many conditions. */
    char *many = malloc(200 * 30);
    assert_non_null(many);
    n = 0;
    for (int i = 0; i < 200; i++)
        n += (size_t)sprintf(many + n, "%sskuName eq 'x'", i ? " or " : "");
    assert_int_equal(tw_odata_parse(many, n, true, f, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "too many conditions"));
    free(many);
    /* A value longer than the limit. */
    char big[400];
    memset(big, 'a', sizeof(big));
    memcpy(big, "skuName eq '", 12);
    big[sizeof(big) - 2] = '\'';
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(tw_odata_parse(big, strlen(big), true, f, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "too long"));
    /* The length given is what is read: no terminator needed. */
    const char exact[] = {'s', 'k', 'u', 'N', 'a', 'm', 'e'};
    assert_int_equal(tw_odata_parse(exact, sizeof(exact), true, f, &err), TW_EPARSE);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
