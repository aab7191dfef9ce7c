/*
 * test_savings_target.c - the savings model's target SKU (every family and
 * size edge) and transaction rules (Standard SSD's 256 KiB units, Standard
 * HDD by size and region, the two meters, a missing price), on the bundled
 * snapshot and on books made up for the test (their numbers are not
 * prices).
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/savings.h"

#define NOW "2026-11-30T00:00:00Z"
#define HOUR_NS (INT64_C(3600) * 1000000000)

static struct tw_pricebook *book_text(const char *page)
{
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    if (tw_price_page_parse(page, strlen(page), &items, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    struct tw_pricebook *b;
    if (tw_pricebook_build(&items, NULL, NULL, "test", NOW, NOW, &b, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return b;
}

static struct tw_pricebook *snapshot(void)
{
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_price_page_parse((const char *)tw_builtin_disk_prices_json,
                                         tw_builtin_disk_prices_json_len, &items, NULL, &err),
                     TW_OK);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, "USD", "snapshot", NOW, NOW, &b, &err),
                     TW_OK);
    return b;
}

static struct tw_pricebook *gbp(void)
{
    size_t len;
    char *buf = th_fixture("prices/constructed-westeurope-gbp.json", &len);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_price_page_parse(buf, len, &items, NULL, &err), TW_OK);
    free(buf);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, NULL, "constructed", NOW, NOW, &b, &err),
                     TW_OK);
    return b;
}

#define ITEM(price, region, product, meter, unit)                                                \
    "{\"currencyCode\":\"USD\",\"retailPrice\":" price ",\"armRegionName\":\"" region           \
    "\",\"meterName\":\"" meter "\",\"productName\":\"" product "\",\"unitOfMeasure\":\"" unit  \
    "\",\"type\":\"Consumption\"}"

static struct tw_tier_catalog cat;

static int setup(void **state)
{
    (void)state;
    return tw_tier_catalog_builtin(&cat, NULL) == TW_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tw_tier_catalog_cleanup(&cat);
    return 0;
}

static enum tw_err choose(const struct tw_tier_catalog *c, const struct tw_pricebook *b,
                          const char *sku, const char *tier, int64_t gib, const char *target,
                          struct tw_target *t, struct tw_error *err)
{
    const char *allowed[] = {target};
    return tw_target_choose(c, b, "westeurope", "USD", sku, tier, gib,
                            allowed, 1, false, t, err);
}

static void expect(const struct tw_pricebook *b, const char *sku, const char *tier, int64_t gib,
                   const char *target, const char *want_sku, const char *want_tier,
                   int64_t from_micros, int64_t to_micros)
{
    struct tw_target t;
    struct tw_error err = {0};
    if (choose(&cat, b, sku, tier, gib, target, &t, &err) != TW_OK)
        fail_msg("%s %s %lld GiB -> %s: %s", sku, tier, (long long)gib, target, err.msg);
    assert_string_equal(t.sku, want_sku);
    assert_string_equal(t.tier, want_tier);
    assert_int_equal(t.from_per_month.micros, from_micros);
    assert_int_equal(t.to_per_month.micros, to_micros);
    assert_non_null(strstr(t.why, "same size step"));
}

/* Every family and size edge, westeurope USD of the bundled snapshot. */
static void test_same_step(void **state)
{
    (void)state;
    struct tw_pricebook *b = snapshot();
    /* S starts at S4 (32 GiB): a 4 GiB P1 goes to S4; to E1 on SSD. */
    expect(b, "Premium_LRS", "P1", 4, "Standard_LRS", "Standard_LRS", "S4", 780000, 1536000);
    /* P10 (128 GiB) to E10 or S10; the exact edge stays in the step. */
    expect(b, "Premium_LRS", "P10", 128, "StandardSSD_LRS", "StandardSSD_LRS", "E10", 21680000,
           9600000);
    expect(b, "Premium_LRS", "P10", 128, "Standard_LRS", "Standard_LRS", "S10", 21680000, 5888000);
    /* One GiB more is the next step: P15 and E15. */
    expect(b, "Premium_LRS", "P15", 129, "StandardSSD_LRS", "StandardSSD_LRS", "E15", 41811428,
           19200000);
    /* The tier is read from the size when it is not given. */
    expect(b, "Premium_LRS", "", 129, "StandardSSD_LRS", "StandardSSD_LRS", "E15", 41811428,
           19200000);
    /* A P10-sized disk with performance tier P30 is billed at P30; its
     * target is still the size's step, E10. */
    expect(b, "Premium_LRS", "P30", 128, "StandardSSD_LRS", "StandardSSD_LRS", "E10", 148680000,
           9600000);
    /* Redundancy kept: ZRS stays ZRS. */
    expect(b, "Premium_ZRS", "P10", 128, "StandardSSD_LRS", "StandardSSD_ZRS", "E10", 32519000,
           14400000);
    /* A Standard SSD may go down to Standard HDD. */
    expect(b, "StandardSSD_LRS", "E10", 100, "Standard_LRS", "Standard_LRS", "S10", 9600000,
           5888000);

    struct tw_target t;
    struct tw_error err = {0};
    /* Standard HDD has no ZRS. */
    assert_int_equal(choose(&cat, b, "Premium_ZRS", "P10", 128, "Standard_LRS", &t, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "Standard_ZRS is not offered"));
    /* Beyond the largest step of the disk's own table. */
    assert_int_equal(choose(&cat, b, "Premium_LRS", "", 40000, "StandardSSD_LRS", &t, &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "beyond the largest tier"));
    /* v2 and Ultra are never moved, nor moved to. */
    assert_int_equal(choose(&cat, b, "PremiumV2_LRS", "", 128, "StandardSSD_LRS", &t, &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "no direct way back"));
    assert_int_equal(choose(&cat, b, "UltraSSD_LRS", "", 128, "StandardSSD_LRS", &t, &err),
                     TW_EINVAL);
    assert_int_equal(choose(&cat, b, "Premium_LRS", "P10", 128, "PremiumV2_LRS", &t, &err),
                     TW_EINVAL);
    assert_int_equal(choose(&cat, b, "Premium_LRS", "P10", 128, "UltraSSD_LRS", &t, &err),
                     TW_EINVAL);
    /* Unknown names. */
    assert_int_equal(choose(&cat, b, "Premium_GRS", "P10", 128, "StandardSSD_LRS", &t, &err),
                     TW_EINVAL);
    assert_int_equal(choose(&cat, b, "Premium_LRS", "P10", 128, "Cheap_LRS", &t, &err),
                     TW_EINVAL);
    /* The disk's own type is no target. */
    assert_int_equal(choose(&cat, b, "Premium_LRS", "P10", 128, "Premium_LRS", &t, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "own type"));
    /* Two targets without cheapest, or none. */
    const char *two[] = {"StandardSSD_LRS", "Standard_LRS"};
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      two, 2, false, &t, &err),
                     TW_EINVAL);
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      two, 0, true, &t, &err),
                     TW_EINVAL);
    /* No price for the disk's own tier: an error naming it, never a zero. */
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "GBP", "Premium_LRS", "P10", 128,
                                      two, 1, false, &t, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10"));
    tw_pricebook_free(b);
}

/* A target table that ends before the disk's size: never a step that
 * can't hold it. */
static void test_no_step_large_enough(void **state)
{
    (void)state;
    /* The built-in catalog with the E table cut after E30 (1 TiB). */
    json_error_t je;
    json_t *j = json_loadb((const char *)tw_builtin_disk_tiers_json,
                           tw_builtin_disk_tiers_json_len, 0, &je);
    assert_non_null(j);
    json_t *tiers = json_object_get(j, "tiers");
    for (size_t i = json_array_size(tiers); i-- > 0;) {
        const char *name = json_string_value(json_object_get(json_array_get(tiers, i), "tier"));
        if (name && name[0] == 'E' && atoi(name + 1) > 30)
            json_array_remove(tiers, i);
    }
    char *text = json_dumps(j, 0);
    json_decref(j);
    struct tw_tier_catalog small = {0};
    struct tw_error err = {0};
    if (tw_tier_catalog_parse(text, strlen(text), &small, &err) != TW_OK)
        fail_msg("%s", err.msg);
    free(text);
    struct tw_pricebook *b = snapshot();
    struct tw_target t;
    assert_int_equal(choose(&small, b, "Premium_LRS", "P30", 1024, "StandardSSD_LRS", &t, &err),
                     TW_OK);
    assert_string_equal(t.tier, "E30");
    assert_int_equal(choose(&small, b, "Premium_LRS", "P40", 1025, "StandardSSD_LRS", &t, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "no size step of StandardSSD_LRS holds the disk"));
    /* Under cheapest the other family still serves. */
    const char *both[] = {"StandardSSD_LRS", "Standard_LRS"};
    assert_int_equal(tw_target_choose(&small, b, "westeurope", "USD", "Premium_LRS", "P40", 1025,
                                      both, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.tier, "S40");
    tw_pricebook_free(b);
    tw_tier_catalog_cleanup(&small);
}

/* cheapest: the lowest price among the allowed targets the book prices;
 * one without a price is skipped (and said), an error when it is the only
 * one. */
static void test_cheapest(void **state)
{
    (void)state;
    struct tw_pricebook *b = snapshot();
    struct tw_target t;
    struct tw_error err = {0};
    const char *both[] = {"StandardSSD_LRS", "Standard_LRS"};
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      both, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "Standard_LRS"); /* S10 5.888 < E10 9.6 */
    assert_string_equal(t.tier, "S10");
    assert_int_equal(t.to_per_month.micros, 5888000);
    assert_non_null(strstr(t.why, "cheapest of"));
    assert_non_null(strstr(t.why, "E10 StandardSSD_LRS 9.6"));
    /* The order does not matter when the prices differ. */
    const char *rev[] = {"Standard_LRS", "StandardSSD_LRS"};
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      rev, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "Standard_LRS");
    /* ZRS: Standard HDD has none, so Standard SSD ZRS. */
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_ZRS", "P10", 128,
                                      both, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "StandardSSD_ZRS");
    assert_non_null(strstr(t.why, "Standard_ZRS is not offered"));
    tw_pricebook_free(b);

    /* Equal prices: the earlier in the list wins. */
    b = book_text("{\"Items\":[" ITEM("10", "westeurope", "Premium SSD Managed Disks",
                                      "P10 LRS Disk", "1/Month") "," ITEM("4", "westeurope",
                                                                          "Standard SSD Managed "
                                                                          "Disks",
                                                                          "E10 LRS Disk",
                                                                          "1/Month") "," ITEM("4",
                                                                                              "westeurope",
                                                                                              "Standard HDD Managed Disks",
                                                                                              "S10 LRS Disk",
                                                                                              "1/Month") "]}");
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      rev, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "Standard_LRS");
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "USD", "Premium_LRS", "P10", 128,
                                      both, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "StandardSSD_LRS");
    tw_pricebook_free(b);

    /* The field example's book has no Standard HDD price: skipped under
     * cheapest, an error when it is the only target. */
    b = gbp();
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "GBP", "Premium_LRS", "P10", 128,
                                      rev, 2, true, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "StandardSSD_LRS");
    assert_int_equal(t.to_per_month.micros, 7160000);
    assert_non_null(strstr(t.why, "no price per month for S10"));
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "GBP", "Premium_LRS", "P10", 128,
                                      rev, 1, true, &t, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "no price per month for S10 (Standard_LRS) in westeurope GBP"));
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "GBP", "Premium_LRS", "P10", 128,
                                      rev, 1, false, &t, &err),
                     TW_ENOENT);
    tw_pricebook_free(b);
}

static struct tw_amount tx(const struct tw_tx_rule *r, int64_t ios, int64_t bytes, int64_t ns)
{
    struct tw_io_rate io = {ios, bytes};
    struct tw_amount a;
    struct tw_error err = {0};
    if (tw_tx_cost(r, &io, ns, &a, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return a;
}

static void dec8(struct tw_amount a, const char *want)
{
    char buf[64];
    assert_true(tw_amount_decimal(a, 8, buf, sizeof(buf)));
    assert_string_equal(buf, want);
}

/* Standard SSD: 256 KiB units, three meters in the snapshot (the tier's
 * and E4's 0.002, the tier-less 0.0026 in westeurope): the highest, said. */
static void test_tx_standard_ssd(void **state)
{
    (void)state;
    struct tw_pricebook *b = snapshot();
    struct tw_tx_rule r;
    struct tw_error err = {0};
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_SSD, "E10", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_UNITS);
    assert_int_equal(r.unit_bytes, 262144);
    assert_int_equal(r.hourly_cap, 0);
    assert_true(r.cap_unknown);
    assert_int_equal(r.per_10k.micros, 2600);
    /* Three meters: E10's own, E4's (the family's 4-tier one) and the
     * tier-less one, the highest first. */
    assert_string_equal(r.meter, "\"Disk Transactions LRS Disk Operations\" (the highest), "
                                 "\"E10 LRS Disk Operations\" and \"E4 LRS Disk Operations\"");
    assert_non_null(strstr(r.note, "meters in the book: E10's 0.002, E4's 0.002 and the "
                                   "tier-less 0.0026 per 10,000; the highest, the tier-less, is "
                                   "used (the worse case)"));
    assert_non_null(strstr(r.note, "not documented (its billing example bills an E30 on E4's)"));
    assert_non_null(strstr(r.note, "not published: none applied"));
    /* 1 MiB is 4 units, 256 KiB one, a byte more two, 4 KiB one. */
    dec8(tx(&r, 10000, 1048576, HOUR_NS), "0.01040000"); /* 40,000 units */
    dec8(tx(&r, 10000, 262144, HOUR_NS), "0.00260000");
    dec8(tx(&r, 10000, 262145, HOUR_NS), "0.00520000");
    dec8(tx(&r, 10000, 4096, HOUR_NS), "0.00260000");
    dec8(tx(&r, 10000, 0, HOUR_NS), "0.00260000");
    /* Time counted exactly: half an hour is half. */
    dec8(tx(&r, 10000, 4096, HOUR_NS / 2), "0.00130000");
    /* No I/O (deallocated), no charge. */
    dec8(tx(&r, 0, 1048576, HOUR_NS), "0.00000000");
    /* ZRS: the three again, the ZRS ones. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_SSD, "E10", TW_SKU_ZRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.per_10k.micros, 3900);
    assert_non_null(strstr(r.meter, "ZRS"));
    tw_pricebook_free(b);

    /* Only the tier's meter: that one, the cap still unknown. */
    b = gbp();
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "E10", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.per_10k.micros, 1000);
    assert_string_equal(r.meter, "\"E10 LRS Disk Operations\"");
    assert_null(strstr(r.note, "meters in the book"));
    assert_non_null(strstr(r.note, "not published"));
    tw_pricebook_free(b);
    /* Only the tier-less one, and higher or lower either way. */
    b = book_text("{\"Items\":[" ITEM("0.003", "r1", "Standard SSD Managed Disks",
                                      "Disk Transactions LRS Disk Operations", "10K") "]}");
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E30", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.per_10k.micros, 3000);
    assert_string_equal(r.meter, "\"Disk Transactions LRS Disk Operations\"");
    tw_pricebook_free(b);
    b = book_text("{\"Items\":[" ITEM("0.001", "r1", "Standard SSD Managed Disks",
                                      "Disk Transactions LRS Disk Operations",
                                      "10K") "," ITEM("0.005", "r1", "Standard SSD Managed Disks",
                                                      "E30 LRS Disk Operations", "10K") "]}");
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E30", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.per_10k.micros, 5000);
    assert_non_null(strstr(r.meter, "\"E30 LRS Disk Operations\" (the higher)"));
    assert_non_null(strstr(r.note, "meters in the book: E30's 0.005 and the tier-less 0.001 per "
                                   "10,000; the higher, E30's, is used"));
    assert_null(strstr(r.note, "E4's")); /* not in the book: not named */
    tw_pricebook_free(b);
}

/* The family's 4-tier meter: the billing page's example bill prices an
 * E30 disk's transactions on "E4 LRS Disk Operations" (an S20's on S4's),
 * and no E1, E2 or E3 operations meter exists, so E4's is a candidate for
 * every tier, the highest of those in the book is used and all are named. */
static void test_tx_four_tier_meter(void **state)
{
    (void)state;
    struct tw_tx_rule r;
    struct tw_error err = {0};
    /* Only E4's in the book (a region without the tier-less meter): E1,
     * E2, E3 are priced on it, not refused. */
    struct tw_pricebook *b = book_text(
        "{\"Items\":[" ITEM("0.002", "r1", "Standard SSD Managed Disks", "E4 LRS Disk Operations",
                            "10K") "," ITEM("0.002", "r1", "Standard SSD Managed Disks",
                                            "E10 LRS Disk Operations", "10K") "]}");
    const char *small[] = {"E1", "E2", "E3", "E4"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, small[i], TW_SKU_LRS,
                                        &r, &err),
                         TW_OK);
        assert_int_equal(r.per_10k.micros, 2000);
        assert_string_equal(r.meter, "\"E4 LRS Disk Operations\"");
        assert_null(strstr(r.note, "meters in the book")); /* one meter, nothing to choose */
    }
    /* Equal prices: the tier's own is named first (ties keep it). */
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E10", TW_SKU_LRS, &r, &err), TW_OK);
    assert_string_equal(r.meter,
                        "\"E10 LRS Disk Operations\" (the higher) and \"E4 LRS Disk Operations\"");
    assert_non_null(strstr(r.note, "the higher, E10's, is used"));
    /* Another redundancy's E4 does not count. */
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E1", TW_SKU_ZRS, &r, &err),
        TW_ENOENT);
    assert_non_null(strstr(err.msg, "neither \"E1 ZRS Disk Operations\", \"E4 ZRS Disk "
                                    "Operations\" nor \"Disk Transactions ZRS Disk Operations\""));
    tw_pricebook_free(b);

    /* E4's the highest of three: used, named first, said why. */
    b = book_text("{\"Items\":[" ITEM("0.002", "r1", "Standard SSD Managed Disks",
                                      "E30 LRS Disk Operations",
                                      "10K") "," ITEM("0.004", "r1", "Standard SSD Managed Disks",
                                                      "E4 LRS Disk Operations",
                                                      "10K") "," ITEM("0.003", "r1",
                                                                      "Standard SSD Managed Disks",
                                                                      "Disk Transactions LRS Disk "
                                                                      "Operations",
                                                                      "10K") "]}");
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E30", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.per_10k.micros, 4000);
    assert_string_equal(r.meter, "\"E4 LRS Disk Operations\" (the highest), \"E30 LRS Disk "
                                 "Operations\" and \"Disk Transactions LRS Disk Operations\"");
    assert_string_equal(r.note, "meters in the book: E30's 0.002, E4's 0.004 and the tier-less "
                                "0.003 per 10,000; the highest, E4's, is used (the worse case): "
                                "which one Azure bills is not documented (its billing example "
                                "bills an E30 on E4's); Standard SSD's hourly cap is not "
                                "published: none applied (the worse case)");
    /* The E4 disk itself: two meters, E4's not named twice. */
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E4", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.per_10k.micros, 4000);
    assert_string_equal(r.meter, "\"E4 LRS Disk Operations\" (the higher) and \"Disk "
                                 "Transactions LRS Disk Operations\"");
    assert_null(strstr(r.note, "billing example")); /* its own meter */
    tw_pricebook_free(b);

    /* Standard HDD: S4's for an S20. */
    b = book_text("{\"Items\":[" ITEM("0.0005", "r1", "Standard HDD Managed Disks",
                                      "S20 LRS Disk Operations",
                                      "10K") "," ITEM("0.0007", "r1", "Standard HDD Managed Disks",
                                                      "S4 LRS Disk Operations", "10K") "]}");
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_HDD, "S20", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    assert_int_equal(r.per_10k.micros, 700);
    assert_string_equal(r.meter,
                        "\"S4 LRS Disk Operations\" (the higher) and \"S20 LRS Disk Operations\"");
    assert_string_equal(r.note, "meters in the book: S20's 0.0005 and S4's 0.0007 per 10,000; "
                                "the higher, S4's, is used (the worse case): which one Azure "
                                "bills is not documented (its billing example bills an S20 on "
                                "S4's)");
    tw_pricebook_free(b);

    /* The snapshot: westeurope E1 (no E1 meter) on E4's and the tier-less;
     * the longest note (ZRS, three meters, the cap) is not cut. */
    b = snapshot();
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_SSD, "E1", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.per_10k.micros, 2600);
    assert_string_equal(r.meter, "\"Disk Transactions LRS Disk Operations\" (the higher) and "
                                 "\"E4 LRS Disk Operations\"");
    assert_int_equal(tw_tx_rule_for(b, "francecentral", "USD", TW_SKU_STANDARD_SSD, "E80",
                                    TW_SKU_ZRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.per_10k.micros, 3750);
    assert_true(strlen(r.note) + 1 < sizeof(r.note));
    assert_non_null(strstr(r.note, "0.00375 per 10,000"));
    assert_non_null(strstr(r.note, "none applied (the worse case)"));
    assert_true(strlen(r.meter) + 1 < sizeof(r.meter));
    assert_non_null(strstr(r.meter, "\"E4 ZRS Disk Operations\""));
    tw_pricebook_free(b);
}

/* Standard HDD S15 is in neither of the billing page's size lists (16 KiB
 * units: S4, S6, S70, S80; one an I/O: S10, S20 ... S60): the worse rule,
 * 16 KiB units with no cap, said in the note; in eastus and northeurope
 * every size is one an I/O. */
static void test_tx_s15(void **state)
{
    (void)state;
    struct tw_pricebook *b = snapshot();
    struct tw_tx_rule r;
    struct tw_error err = {0};
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S15",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_UNITS);
    assert_int_equal(r.unit_bytes, 16384);
    assert_int_equal(r.hourly_cap, 0);
    assert_int_equal(r.max_units_per_io, 0);
    assert_int_equal(r.per_10k.micros, 650);
    assert_non_null(strstr(r.note, "; S15 is in neither size list of the billing page: the "
                                   "worse rule, 16 KiB units, no cap"));
    assert_true(strlen(r.note) + 1 < sizeof(r.note));
    /* 10,000 I/Os of 64 KiB: 40,000 units, uncapped: 4 * 0.00065. */
    dec8(tx(&r, 10000, 65536, HOUR_NS), "0.00260000");
    dec8(tx(&r, 10000000, 65536, HOUR_NS), "2.60000000");
    /* The listed neighbours keep their rules. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S20",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    assert_null(strstr(r.note, "neither size list"));
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S60",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    /* northeurope: one an I/O, nothing assumed about S15. */
    assert_int_equal(tw_tx_rule_for(b, "northeurope", "USD", TW_SKU_STANDARD_HDD, "S15",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    assert_null(strstr(r.note, "neither size list"));
    tw_pricebook_free(b);
}

/* Standard HDD by size and region. */
static void test_tx_standard_hdd(void **state)
{
    (void)state;
    struct tw_pricebook *b = snapshot();
    struct tw_tx_rule r;
    struct tw_error err = {0};
    /* S4 in westeurope: 16 KiB units, at most 450,000 billable an hour;
     * the snapshot has S4's 0.0005 and the tier-less 0.00065. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S4", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_UNITS);
    assert_int_equal(r.unit_bytes, 16384);
    assert_int_equal(r.hourly_cap, 450000);
    assert_int_equal(r.max_units_per_io, 0);
    assert_false(r.cap_unknown);
    assert_int_equal(r.per_10k.micros, 650);
    assert_string_equal(r.note, "meters in the book: S4's 0.0005 and the tier-less 0.00065 per "
                                "10,000; the higher, the tier-less, is used (the worse case): "
                                "which one Azure bills is not documented");
    dec8(tx(&r, 100000, 65536, HOUR_NS), "0.02600000");  /* 400,000 units: 40 * 0.00065 */
    dec8(tx(&r, 200000, 65536, HOUR_NS), "0.02925000");  /* 800,000, capped at 450,000 */
    dec8(tx(&r, 200000, 65536, 2 * HOUR_NS), "0.05850000");
    dec8(tx(&r, 100000, 16384, HOUR_NS), "0.00650000");  /* one unit an I/O */
    /* S6: 858,000. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S6", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.hourly_cap, 858000);
    /* S70 and S80: at most 16 units an I/O, caps 93 and 110 million. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S70",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.hourly_cap, 93000000);
    assert_int_equal(r.max_units_per_io, 16);
    dec8(tx(&r, 10000, 1048576, HOUR_NS), "0.01040000"); /* 64 units cut to 16: 160,000 */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S80",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.hourly_cap, 110000000);
    assert_int_equal(r.max_units_per_io, 16);
    /* S10: one transaction an I/O whatever its size, no cap. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "USD", TW_SKU_STANDARD_HDD, "S10",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    assert_int_equal(r.hourly_cap, 0);
    dec8(tx(&r, 10000, 1048576, HOUR_NS), "0.00065000");
    /* northeurope: per I/O for S4 too. */
    assert_int_equal(tw_tx_rule_for(b, "northeurope", "USD", TW_SKU_STANDARD_HDD, "S4",
                                    TW_SKU_LRS, &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    assert_int_equal(r.hourly_cap, 0);
    tw_pricebook_free(b);
    /* eastus likewise (a book made up for it). */
    b = book_text("{\"Items\":[" ITEM("0.0005", "eastus", "Standard HDD Managed Disks",
                                      "S4 LRS Disk Operations", "10K") "," ITEM("0.0005", "r1",
                                                                                "Standard HDD "
                                                                                "Managed Disks",
                                                                                "S4 LRS Disk "
                                                                                "Operations",
                                                                                "10K") "]}");
    assert_int_equal(
        tw_tx_rule_for(b, "eastus", "USD", TW_SKU_STANDARD_HDD, "S4", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.kind, TW_TX_PER_IO);
    /* One meter of the two: said, since the missing one may be dearer. */
    assert_string_equal(r.note, "\"S4 LRS Disk Operations\" is the only transaction meter of the "
                                "two in the book (\"Disk Transactions LRS Disk Operations\" is "
                                "missing): the price may not be the worse case");
    assert_string_equal(r.used, "S4 LRS Disk Operations");
    assert_int_equal(r.n_meters, 1);
    dec8(tx(&r, 1000000, 1048576, HOUR_NS), "0.05000000"); /* no cap: 100 * 0.0005 */
    assert_int_equal(
        tw_tx_rule_for(b, "r1", "USD", TW_SKU_STANDARD_HDD, "S4", TW_SKU_LRS, &r, &err), TW_OK);
    assert_int_equal(r.kind, TW_TX_UNITS);
    tw_pricebook_free(b);
}

/* Premium SSD, v2 and Ultra; a missing price; bad tiers. */
static void test_tx_other(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp();
    struct tw_tx_rule r;
    struct tw_error err = {0};
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_NONE);
    dec8(tx(&r, 1000000, 1048576, HOUR_NS), "0.00000000");
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_PREMIUM_V2, "", TW_SKU_LRS, &r,
                                    &err),
                     TW_OK);
    assert_int_equal(r.kind, TW_TX_NONE);
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_ULTRA, "P10", TW_SKU_LRS, &r,
                                    &err),
                     TW_EINVAL);
    /* No operations price: an error naming the three meters, never a zero. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_HDD, "S10", TW_SKU_LRS,
                                    &r, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "neither \"S10 LRS Disk Operations\", \"S4 LRS Disk "
                                    "Operations\" nor \"Disk Transactions LRS Disk Operations\" "
                                    "is there"));
    assert_non_null(strstr(err.msg, "westeurope GBP"));
    assert_int_equal(r.per_10k.micros, 0);
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "E10", TW_SKU_ZRS,
                                    &r, &err),
                     TW_ENOENT);
    /* A Standard tier is needed, of the family's letter. */
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "", TW_SKU_LRS,
                                    &r, &err),
                     TW_EINVAL);
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "S10",
                                    TW_SKU_LRS, &r, &err),
                     TW_EINVAL);
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, NULL, TW_SKU_LRS,
                                    &r, &err),
                     TW_EINVAL);
    /* Bad durations and rates. */
    struct tw_tx_rule u = {.kind = TW_TX_UNITS, .unit_bytes = 262144, .per_10k = {2000}};
    struct tw_io_rate io = {-1, 4096};
    struct tw_amount a;
    assert_int_equal(tw_tx_cost(&u, &io, HOUR_NS, &a, &err), TW_EINVAL);
    io.ios_per_hour = 1;
    assert_int_equal(tw_tx_cost(&u, &io, -1, &a, &err), TW_EINVAL);
    assert_int_equal(tw_tx_cost(NULL, &io, HOUR_NS, &a, &err), TW_EINVAL);
    tw_pricebook_free(b);
}

/* A plan's transactions are charged in the hours it is on the cheaper SKU
 * (a running VM's disk, a policy's choice): the saving is net of them. */
static void test_net_of_transactions(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp();
    struct tw_tx_rule r;
    struct tw_error err = {0};
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "E10", TW_SKU_LRS,
                                    &r, &err),
                     TW_OK);
    struct tw_interval w = {0, 730 * HOUR_NS};
    /* 1,000,000 I/Os of 1 MiB an hour: 400 * 0.001 = 0.40 an hour, 292 in
     * 730 h; the saving is 9.00 - 292. */
    struct tw_switch_opts o = {.io = {1000000, 1048576}};
    struct tw_window_saving ws;
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(&w, 1, 0, 730 * HOUR_NS, tw_money_micros(16160000),
                                        tw_money_micros(7160000), &r, &o, &ws, &d, &err),
                     TW_OK);
    dec8(d.tx_cost, "292.00000000");
    dec8(d.saving, "-283.00000000");
    /* ... so min_saving skips it. */
    o.min_saving.micros = 1;
    assert_int_equal(tw_savings_windows(&w, 1, 0, 730 * HOUR_NS, tw_money_micros(16160000),
                                        tw_money_micros(7160000), &r, &o, &ws, &d, &err),
                     TW_OK);
    assert_int_equal(ws.skip, TW_WINDOW_MIN_SAVING);
    tw_pricebook_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_step),       cmocka_unit_test(test_no_step_large_enough),
        cmocka_unit_test(test_cheapest),        cmocka_unit_test(test_tx_standard_ssd),
        cmocka_unit_test(test_tx_standard_hdd), cmocka_unit_test(test_tx_other),
        cmocka_unit_test(test_net_of_transactions), cmocka_unit_test(test_tx_four_tier_meter),
        cmocka_unit_test(test_tx_s15),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
