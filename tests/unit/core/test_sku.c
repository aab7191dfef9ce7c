/* test_sku.c - the one vocabulary of managed-disk SKU and tier names. */
#include "testhelp.h"

#include <string.h>

#include "core/sku.h"

static void test_names_round_trip(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum tw_sku_family f;
        enum tw_sku_redundancy r;
    } t[] = {
        {"Premium_LRS", TW_SKU_PREMIUM_SSD, TW_SKU_LRS},
        {"Premium_ZRS", TW_SKU_PREMIUM_SSD, TW_SKU_ZRS},
        {"StandardSSD_LRS", TW_SKU_STANDARD_SSD, TW_SKU_LRS},
        {"StandardSSD_ZRS", TW_SKU_STANDARD_SSD, TW_SKU_ZRS},
        {"Standard_LRS", TW_SKU_STANDARD_HDD, TW_SKU_LRS},
        {"PremiumV2_LRS", TW_SKU_PREMIUM_V2, TW_SKU_LRS},
        {"UltraSSD_LRS", TW_SKU_ULTRA, TW_SKU_LRS},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct tw_sku s;
        assert_true(tw_sku_parse(t[i].name, &s));
        assert_int_equal(s.family, t[i].f);
        assert_int_equal(s.redundancy, t[i].r);
        assert_string_equal(tw_sku_name(s.family, s.redundancy), t[i].name);
    }
    /* Case-insensitive, as Azure compares names. */
    struct tw_sku s;
    assert_true(tw_sku_parse("premium_lrs", &s));
    assert_int_equal(s.family, TW_SKU_PREMIUM_SSD);
    assert_true(tw_sku_parse("ULTRASSD_LRS", &s));
    assert_int_equal(s.family, TW_SKU_ULTRA);
    const char *bad[] = {"", "Premium", "Premium_GRS", "Premium_LRS ", "StandardSSD", "P10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(tw_sku_parse(bad[i], &s));
    assert_false(tw_sku_parse(NULL, &s));
    assert_string_equal(tw_sku_name(TW_SKU_FAMILY_COUNT, TW_SKU_LRS), "?");
}

static void test_families(void **state)
{
    (void)state;
    assert_string_equal(tw_sku_family_name(TW_SKU_PREMIUM_SSD), "Premium SSD");
    assert_string_equal(tw_sku_family_name(TW_SKU_STANDARD_HDD), "Standard HDD");
    assert_string_equal(tw_sku_family_name(TW_SKU_PREMIUM_V2), "Premium SSD v2");
    assert_string_equal(tw_sku_family_name(TW_SKU_ULTRA), "Ultra");
    assert_string_equal(tw_sku_redundancy_name(TW_SKU_ZRS), "ZRS");
    assert_int_equal(tw_sku_tier_letter(TW_SKU_PREMIUM_SSD), 'P');
    assert_int_equal(tw_sku_tier_letter(TW_SKU_STANDARD_SSD), 'E');
    assert_int_equal(tw_sku_tier_letter(TW_SKU_STANDARD_HDD), 'S');
    assert_int_equal(tw_sku_tier_letter(TW_SKU_ULTRA), 0);
    assert_true(tw_sku_provisioned(TW_SKU_PREMIUM_V2));
    assert_true(tw_sku_provisioned(TW_SKU_ULTRA));
    assert_false(tw_sku_provisioned(TW_SKU_STANDARD_SSD));
}

static void test_tiers(void **state)
{
    (void)state;
    enum tw_sku_family f;
    int n;
    assert_true(tw_sku_tier_parse("P10", 3, &f, &n));
    assert_int_equal(f, TW_SKU_PREMIUM_SSD);
    assert_int_equal(n, 10);
    assert_true(tw_sku_tier_parse("E1", 2, &f, &n));
    assert_int_equal(f, TW_SKU_STANDARD_SSD);
    assert_int_equal(n, 1);
    assert_true(tw_sku_tier_parse("S80 LRS Disk", 3, &f, &n));
    assert_int_equal(f, TW_SKU_STANDARD_HDD);
    assert_int_equal(n, 80);
    assert_true(tw_sku_tier_parse("P6", 2, NULL, NULL));
    const char *bad[] = {"P", "P0", "P01", "P100", "X10", "p10", "P1a", "10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(tw_sku_tier_parse(bad[i], strlen(bad[i]), &f, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_tiers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
