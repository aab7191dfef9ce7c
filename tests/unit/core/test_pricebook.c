/* test_pricebook.c - Retail Prices pages into a price book: the real
 * captured answers (P15 with its Mount meter, S10 with its Operations
 * meter, the GBP items, the 400 bodies), the bundled snapshot, the meter
 * rules, and bad pages. */
#include "testhelp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pricebook.h"

#define NOW "2026-11-30T00:00:00Z"

static struct tw_pricebook *book_of(const char *fixture, const char *region, const char *cur)
{
    size_t len;
    char *doc = th_fixture(fixture, &len);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    struct tw_price_page page;
    assert_int_equal(tw_price_page_parse(doc, len, &items, &page, &err), TW_OK);
    free(doc);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, region, cur, "test", NOW, NOW, &b, &err), TW_OK);
    assert_null(items.v);
    return b;
}

static void test_p15_mount(void **state)
{
    (void)state;
    struct tw_pricebook *b = book_of("prices/real-p15-eastus-usd.json", "eastus", "USD");
    double v;
    struct tw_error err = {0};
    /* The tier's price is the "Disk" meter, never the "Disk Mount" one
     * (1.825), which peers took for it. */
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 38.012142);
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_LRS,
                                        TW_PB_MOUNT, &v, &err),
                     TW_OK);
    assert_true(v == 1.825);
    /* Premium has no operations meter: missing, not zero. */
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_LRS,
                                        TW_PB_OPS_10K, &v, &err),
                     TW_ENOENT);
    assert_true(isnan(v));
    /* ZRS is not LRS. */
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_ZRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_ENOENT);
    assert_non_null(strstr(err.msg, "P15 ZRS"));
    assert_non_null(strstr(err.msg, "eastus USD"));
    assert_int_equal(b->n, 2);
    assert_int_equal(b->n_unused, 0);

    json_t *j;
    assert_int_equal(tw_pricebook_json(b, "eastus", "USD", NULL, &j, &err), TW_OK);
    json_t *p = json_array_get(json_object_get(j, "prices"), 0);
    assert_int_equal(json_array_size(json_object_get(j, "prices")), 1);
    assert_string_equal(json_string_value(json_object_get(p, "tier")), "P15");
    assert_string_equal(json_string_value(json_object_get(p, "sku")), "Premium_LRS");
    assert_string_equal(json_string_value(json_object_get(p, "redundancy")), "LRS");
    assert_true(json_real_value(json_object_get(p, "per_month")) == 38.012142);
    assert_true(json_is_null(json_object_get(p, "per_10k_transactions")));
    assert_true(json_real_value(json_object_get(p, "shared_mount_per_month")) == 1.825);
    assert_string_equal(json_string_value(json_object_get(j, "source")), "test");
    json_decref(j);
    tw_pricebook_free(b);
}

static void test_s10_operations(void **state)
{
    (void)state;
    struct tw_pricebook *b = book_of("prices/real-s10-eastus-usd.json", "eastus", "USD");
    double v;
    struct tw_error err = {0};
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_STANDARD_HDD, "S10", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 5.888);
    assert_int_equal(tw_pricebook_price(b, "eastus", "USD", TW_SKU_STANDARD_HDD, "S10", TW_SKU_LRS,
                                        TW_PB_OPS_10K, &v, &err),
                     TW_OK);
    assert_true(v == 0.0005);
    json_t *j;
    assert_int_equal(tw_pricebook_json(b, "eastus", "USD", "S10", &j, &err), TW_OK);
    json_t *p = json_array_get(json_object_get(j, "prices"), 0);
    assert_true(json_real_value(json_object_get(p, "per_10k_transactions")) == 0.0005);
    assert_string_equal(json_string_value(json_object_get(p, "sku")), "Standard_LRS");
    json_decref(j);
    /* A tier the book lacks is an error naming it. */
    assert_int_equal(tw_pricebook_json(b, "eastus", "USD", "S15", &j, &err), TW_ENOENT);
    assert_null(j);
    assert_non_null(strstr(err.msg, "S15"));
    tw_pricebook_free(b);
}

static void test_gbp(void **state)
{
    (void)state;
    struct tw_pricebook *b = book_of("prices/real-p6-uksouth-gbp.json", "uksouth", "GBP");
    double v;
    struct tw_error err = {0};
    assert_int_equal(tw_pricebook_price(b, "uksouth", "GBP", TW_SKU_PREMIUM_SSD, "P6", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 9.613436);
    /* The same region in USD is another book. */
    assert_null(
        tw_pricebook_find(b, "uksouth", "USD", TW_SKU_PREMIUM_SSD, "P6", TW_SKU_LRS, TW_PB_MONTH));
    tw_pricebook_free(b);
    b = book_of("prices/real-p10-uksouth-gbp.json", "uksouth", "GBP");
    assert_int_equal(tw_pricebook_price(b, "uksouth", "GBP", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 18.563811);
    assert_int_equal(tw_pricebook_price(b, "uksouth", "GBP", TW_SKU_STANDARD_SSD, "E15", TW_SKU_ZRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_ENOENT);
    assert_non_null(
        strstr(err.msg, "no price per month for E15 ZRS (StandardSSD_ZRS) in uksouth GBP"));
    tw_pricebook_free(b);
}

static void test_mixed_and_unknown(void **state)
{
    (void)state;
    /* westeurope P10, brazilsouth S4, eastus E80 operations, and a VM. */
    struct tw_pricebook *b = book_of("prices/real-items-mixed.json", NULL, NULL);
    assert_non_null(tw_pricebook_find(b, "westeurope", "USD", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS,
                                      TW_PB_MONTH));
    assert_non_null(tw_pricebook_find(b, "brazilsouth", "USD", TW_SKU_STANDARD_HDD, "S4", TW_SKU_LRS,
                                      TW_PB_MONTH));
    const struct tw_price_entry *e =
        tw_pricebook_find(b, "eastus", "USD", TW_SKU_STANDARD_SSD, "E80", TW_SKU_LRS, TW_PB_OPS_10K);
    assert_non_null(e);
    assert_int_equal(e->price.micros, 2000);
    /* The E80 operations meter is not the E80 tier's price. */
    assert_null(
        tw_pricebook_find(b, "eastus", "USD", TW_SKU_STANDARD_SSD, "E80", TW_SKU_LRS, TW_PB_MONTH));
    tw_pricebook_free(b);
}

static void test_errors_are_refused(void **state)
{
    (void)state;
    const char *files[] = {"prices/real-error-api-version.json", "prices/real-error-odata.json"};
    const char *words[] = {"Unsupported API version", "Invalid OData parameters supplied"};
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *doc = th_fixture(files[i], &len);
        struct tw_price_items items = {0};
        struct tw_error err = {0};
        assert_int_not_equal(tw_price_page_parse(doc, len, &items, NULL, &err), TW_OK);
        assert_non_null(strstr(err.msg, words[i]));
        assert_int_equal(items.n, 0);
        free(doc);
        tw_price_items_cleanup(&items);
    }
}

/* Items built here to exercise the rules.  Their numbers are made up
 * for the test and are not prices. */
#define ITEM(cur, price, region, meter, product, unit, type, extra)                                \
    "{\"currencyCode\":\"" cur "\",\"retailPrice\":" price ",\"armRegionName\":\"" region          \
    "\",\"meterName\":\"" meter "\",\"productName\":\"" product "\",\"unitOfMeasure\":\"" unit     \
    "\",\"type\":\"" type "\"" extra "}"

static void test_rules(void **state)
{
    (void)state;
    const char *page =
        "{\"BillingCurrency\":\"USD\",\"Items\":[" ITEM("USD", "1.5", "r1", "P10 LRS Disk",
                                                        "Premium SSD Managed Disks", "1/Month",
                                                        "Consumption", "") ","
        /* A meter name that merely contains the right words is not the meter. */
        ITEM("USD", "99", "r1", "P10 LRS Disk Something", "Premium SSD Managed Disks", "1/Month",
             "Consumption", "") ","
        /* The tier's letter must match the product. */
        ITEM("USD", "98", "r1", "E10 LRS Disk", "Premium SSD Managed Disks", "1/Month",
             "Consumption", "") ","
        /* Zero (Global) and expired items are not used. */
        ITEM("USD", "0", "r1", "P20 LRS Disk", "Premium SSD Managed Disks", "1/Month",
             "Consumption", "") "," ITEM("USD", "3", "r1", "P30 LRS Disk",
                                         "Premium SSD Managed Disks", "1/Month", "Consumption",
                                         ",\"effectiveEndDate\":\"2025-08-31T23:59:00Z\"") ","
        /* A newer item replaces an older one. */
        ITEM("USD", "4", "r1", "E10 ZRS Disk", "Standard SSD Managed Disks", "1/Month",
             "Consumption",
             ",\"effectiveStartDate\":\"2020-01-01T00:00:00Z\"") "," ITEM("USD", "5", "r1",
                                                                          "E10 ZRS Disk",
                                                                          "Standard SSD Managed "
                                                                          "Disks",
                                                                          "1/Month", "Consumption",
                                                                          ",\"effectiveStartDate\":"
                                                                          "\"2024-01-01T00:00:"
                                                                          "00Z\"") ","
        /* Reservations are apart from the monthly price. */
        ITEM("USD", "600", "r1", "P10 LRS Disk", "Premium SSD Managed Disks", "1/Month",
             "Reservation", ",\"reservationTerm\":\"1 Year\"") ","
        /* Premium SSD v2 and Ultra, per hour. */
        ITEM("USD", "0.25", "r1", "Premium LRS Provisioned Capacity", "Azure Premium SSD v2",
             "1 GiB/Hour", "Consumption",
             "") "," ITEM("USD", "0", "r1", "Premium LRS Provisioned IOPS", "Azure Premium SSD v2",
                          "1/Hour", "Consumption",
                          "") "," ITEM("USD", "0.5", "r1", "Premium LRS Provisioned IOPS",
                                       "Azure Premium SSD v2", "1/Hour", "Consumption",
                                       ",\"tierMinimumUnits\":3000") "," ITEM("USD", "0.75", "r1",
                                                                              "Ultra LRS "
                                                                              "Provisioned "
                                                                              "Throughput (MBps)",
                                                                              "Ultra Disks",
                                                                              "1/Hour",
                                                                              "Consumption", "") ","
        /* Snapshots are not a disk price: kept as unknown. */
        ITEM("USD", "7", "r1", "LRS Snapshots", "Standard HDD Managed Disks", "1 GB/Month",
             "Consumption", "") "],\"NextPageLink\":null,\"Count\":13}";
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    struct tw_price_page pg;
    assert_int_equal(tw_price_page_parse(page, strlen(page), &items, &pg, &err), TW_OK);
    assert_int_equal(items.n, 13);
    assert_string_equal(pg.currency, "USD");
    assert_string_equal(pg.next, "");
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, NULL, "t", NOW, NOW, &b, &err), TW_OK);
    double v;
    assert_int_equal(tw_pricebook_price(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 1.5);
    assert_null(
        tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "E10", TW_SKU_LRS, TW_PB_MONTH));
    assert_null(
        tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P20", TW_SKU_LRS, TW_PB_MONTH));
    assert_null(
        tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P30", TW_SKU_LRS, TW_PB_MONTH));
    const struct tw_price_entry *e =
        tw_pricebook_find(b, "r1", "USD", TW_SKU_STANDARD_SSD, "E10", TW_SKU_ZRS, TW_PB_MONTH);
    assert_non_null(e);
    assert_int_equal(e->price.micros, 5000000);
    e = tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS, TW_PB_RESERVED_1Y);
    assert_non_null(e);
    assert_int_equal(e->price.micros, 600000000);
    e = tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_V2, "", TW_SKU_LRS, TW_PB_IOPS_HOUR);
    assert_non_null(e);
    assert_int_equal(e->price.micros, 500000);
    assert_true(e->from_units == 3000);
    assert_non_null(
        tw_pricebook_find(b, "r1", "USD", TW_SKU_PREMIUM_V2, "", TW_SKU_LRS, TW_PB_GIB_HOUR));
    assert_non_null(tw_pricebook_find(b, "r1", "USD", TW_SKU_ULTRA, "", TW_SKU_LRS, TW_PB_MBPS_HOUR));
    assert_null(tw_pricebook_find(b, "r1", "USD", TW_SKU_ULTRA, "", TW_SKU_LRS, TW_PB_GIB_HOUR));
    json_t *j;
    assert_int_equal(tw_pricebook_json(b, "r1", "USD", NULL, &j, &err), TW_OK);
    json_t *u = json_object_get(j, "unused_items");
    assert_int_equal(json_integer_value(json_object_get(u, "unknown_meter")), 3);
    assert_int_equal(json_integer_value(json_object_get(u, "zero_price")), 2);
    assert_int_equal(json_integer_value(json_object_get(u, "expired")), 1);
    assert_int_equal(json_integer_value(json_object_get(u, "superseded")), 1);
    assert_int_equal(json_array_size(json_object_get(j, "unknown_meters")), 3);
    assert_int_equal(json_array_size(json_object_get(j, "provisioned")), 1);
    json_t *p = json_array_get(json_object_get(j, "prices"), 0);
    assert_true(json_real_value(json_object_get(p, "reserved_1y")) == 600);
    json_decref(j);

    /* Dump and parse back: the same book. */
    size_t len;
    char *s = tw_price_items_dump(b->items.v, b->items.n, &len);
    assert_non_null(s);
    struct tw_price_items again = {0};
    assert_int_equal(tw_price_page_parse(s, len, &again, NULL, &err), TW_OK);
    free(s);
    assert_int_equal(again.n, 13);
    struct tw_pricebook *b2;
    assert_int_equal(tw_pricebook_build(&again, "r1", "USD", "t", NOW, NOW, &b2, &err), TW_OK);
    assert_int_equal(b2->n, b->n);
    e = tw_pricebook_find(b2, "r1", "USD", TW_SKU_PREMIUM_V2, "", TW_SKU_LRS, TW_PB_IOPS_HOUR);
    assert_non_null(e);
    assert_true(e->from_units == 3000);
    tw_pricebook_free(b2);
    tw_pricebook_free(b);
}

/* Prices are exact: read from their digits, summed without drift,
 * refused rather than rounded, dumped as the text they were read from;
 * and a book stored by an earlier build (17 digits of a double) reads
 * back to the same prices. */
static void test_exact_prices(void **state)
{
    (void)state;
    const char *page = "[" ITEM("USD", "0.1", "r1", "E10 LRS Disk Operations",
                                "Standard SSD Managed Disks", "10K", "Consumption", "") ","
        ITEM("USD", "0.2", "r1", "E10 LRS Disk", "Standard SSD Managed Disks", "1/Month",
             "Consumption", "") ","
        ITEM("USD", "1.1e-05", "r1", "E10 ZRS Disk", "Standard SSD Managed Disks", "1/Month",
             "Consumption", "") ","
        ITEM("USD", "38.012142", "r1", "P15 LRS Disk", "Premium SSD Managed Disks", "1/Month",
             "Consumption", "") "]";
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_price_page_parse(page, strlen(page), &items, NULL, &err), TW_OK);
    assert_int_equal(items.n, 4);
    assert_int_equal(items.v[0].price.micros, 100000);
    assert_int_equal(items.v[2].price.micros, 11);
    assert_int_equal(items.v[3].price.micros, 38012142);
    struct tw_money sum;
    assert_int_equal(tw_money_add(items.v[0].price, items.v[1].price, &sum, &err), TW_OK);
    assert_int_equal(sum.micros, 300000); /* 0.3, not 0.30000000000000004 */
    size_t len;
    char *text = tw_price_items_dump(items.v, items.n, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"retailPrice\":0.1,"));
    assert_non_null(strstr(text, "\"retailPrice\":0.000011,"));
    assert_non_null(strstr(text, "\"retailPrice\":38.012142,"));
    assert_non_null(strstr(text, "\"tierMinimumUnits\":0.0,"));
    free(text);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, NULL, "test", NOW, NOW, &b, &err), TW_OK);
    struct tw_money m;
    assert_int_equal(tw_pricebook_money(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_LRS,
                                        TW_PB_MONTH, &m, &err),
                     TW_OK);
    assert_int_equal(m.micros, 38012142);
    assert_int_equal(tw_pricebook_money_sku(b, "r1", "USD", "StandardSSD_LRS", "E10",
                                            TW_PB_OPS_10K, &m, &err),
                     TW_OK);
    assert_int_equal(m.micros, 100000);
    m.micros = 5;
    assert_int_equal(tw_pricebook_money(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P20", TW_SKU_LRS,
                                        TW_PB_MONTH, &m, &err),
                     TW_ENOENT);
    assert_int_equal(m.micros, 0);
    double v;
    assert_int_equal(tw_pricebook_price(b, "r1", "USD", TW_SKU_PREMIUM_SSD, "P15", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_OK);
    assert_true(v == 38.012142);
    tw_pricebook_free(b);

    /* A seventh decimal is refused, naming the item; nothing is kept. */
    const char *seven = "[" ITEM("USD", "1", "r1", "P10 LRS Disk", "Premium SSD Managed Disks",
                                 "1/Month", "Consumption", "") ","
        ITEM("USD", "6.8e-06", "r1", "Premium LRS Provisioned IOPS", "Azure Premium SSD v2",
             "1/Hour", "Consumption", "") "]";
    assert_int_equal(tw_price_page_parse(seven, strlen(seven), &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "price item 1: \"retailPrice\" \"6.8e-06\" has 7 decimal"));
    assert_non_null(strstr(err.msg, "never rounded"));
    assert_int_equal(items.n, 0);
    const char *huge = "[" ITEM("USD", "1e20", "r1", "P10 LRS Disk", "Premium SSD Managed Disks",
                                "1/Month", "Consumption", "") "]";
    assert_int_equal(tw_price_page_parse(huge, strlen(huge), &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "beyond the range"));

    /* Books stored before prices were exact: 17 significant digits. */
    const char *old = "[" ITEM("USD", "32.518999999999998", "r1", "P10 LRS Disk",
                               "Premium SSD Managed Disks", "1/Month", "Consumption", "") ","
        ITEM("USD", "3.1000000000000001e-05", "r1", "P10 LRS Disk Mount",
             "Premium SSD Managed Disks", "1/Month", "Consumption", "") ","
        ITEM("USD", "9.5999999999999996", "r1", "E10 LRS Disk", "Standard SSD Managed Disks",
             "1/Month", "Consumption", "") "]";
    if (tw_price_page_parse(old, strlen(old), &items, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(items.v[0].price.micros, 32519000);
    assert_int_equal(items.v[1].price.micros, 31);
    assert_int_equal(items.v[2].price.micros, 9600000);
    tw_price_items_cleanup(&items);
    /* ... but not a longer text, even one with the same double, nor one
     * that is no six-decimal price's double. */
    const char *odd = "[" ITEM("USD", "21.680000000000001234", "r1", "P10 LRS Disk",
                               "Premium SSD Managed Disks", "1/Month", "Consumption", "") "]";
    assert_int_equal(tw_price_page_parse(odd, strlen(odd), &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "18 decimal places"));
    const char *odd2 = "[" ITEM("USD", "21.6812345678901234", "r1", "P10 LRS Disk",
                                "Premium SSD Managed Disks", "1/Month", "Consumption", "") "]";
    assert_int_equal(tw_price_page_parse(odd2, strlen(odd2), &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "decimal places"));
    tw_price_items_cleanup(&items);
}

static void test_bad_pages(void **state)
{
    (void)state;
    static const struct {
        const char *page;
        const char *words;
    } cases[] = {
        {"not json", "not valid JSON"},
        {"{\"Items\": 3}", "no \"Items\" array"},
        {"{\"Items\": [{\"currencyCode\":\"USD\"}]}", "no \"retailPrice\""},
        {"{\"Items\": [" ITEM("USD", "-1", "r", "P10 LRS Disk", "x", "1/Month", "Consumption",
                              "") "]}",
         "at least 0"},
        {"{\"Items\": [" ITEM("USD", "\"12\"", "r", "P10 LRS Disk", "x", "1/Month", "Consumption",
                              "") "]}",
         "must be a number"},
        {"{\"BillingCurrency\":\"EUR\",\"Items\": [" ITEM("USD", "1", "r", "P10 LRS Disk", "x",
                                                          "1/Month", "Consumption", "") "]}",
         "BillingCurrency is EUR"},
        {"{\"Items\": [" ITEM("usd", "1", "r", "P10 LRS Disk", "x", "1/Month", "Consumption",
                              "") "]}",
         "not a currency code"},
        {"{\"Items\": [], \"NextPageLink\": 5}", "NextPageLink must be"},
        {"{\"Items\": [], \"Count\": 2}", "Count 2"},
        {"{\"Items\": [1]}", "not an object"},
        {"{\"Items\": [], \"Items\": []}", "\"Items\" twice"},
        {"{\"Items\": []} x", "follows the end"},
        {"{\"Items\": [{\"a\": \"\\ud800\"}]}", "surrogate"},
        {"{\"Items\": [{\"a\": 01}]}", "not valid JSON"},
        {"{\"Items\": [" ITEM("USD", "1", "r", "P10 LRS Disk", "x", "1/Month", "Consumption",
                              ",\"meterName\":\"y\"") "]}",
         "twice"},
        {"", "empty"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw_price_items items = {0};
        struct tw_error err = {0};
        assert_int_equal(
            tw_price_page_parse(cases[i].page, strlen(cases[i].page), &items, NULL, &err),
            TW_EPARSE);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].words);
        assert_int_equal(items.n, 0);
        tw_price_items_cleanup(&items);
    }
}

static void test_snapshot(void **state)
{
    (void)state;
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    struct tw_price_page pg;
    assert_int_equal(tw_price_page_parse((const char *)tw_builtin_disk_prices_json,
                                         tw_builtin_disk_prices_json_len, &items, &pg, &err),
                     TW_OK);
    assert_true(items.n > 4000);
    assert_string_equal(pg.fetched_at, "2026-07-26T00:00:00Z");
    struct tw_pricebook *b;
    assert_int_equal(
        tw_pricebook_build(&items, NULL, NULL, "snapshot", pg.fetched_at, NOW, &b, &err), TW_OK);
    /* COVERAGE.md's table: westeurope P10 21.68, E10 9.6 with 0.002 per
     * 10,000 operations and 1.183 shared mount, S10 5.888 + 0.0005; eastus
     * P10 19.71; uksouth GBP P10 18.563811. */
    static const struct {
        const char *region, *cur, *tier;
        enum tw_sku_family f;
        enum tw_sku_redundancy r;
        enum tw_pb_kind k;
        double v;
    } rows[] = {
        {"westeurope", "USD", "P10", TW_SKU_PREMIUM_SSD, TW_SKU_LRS, TW_PB_MONTH, 21.68},
        {"westeurope", "USD", "E10", TW_SKU_STANDARD_SSD, TW_SKU_LRS, TW_PB_MONTH, 9.6},
        {"westeurope", "USD", "E10", TW_SKU_STANDARD_SSD, TW_SKU_LRS, TW_PB_OPS_10K, 0.002},
        {"westeurope", "USD", "E10", TW_SKU_STANDARD_SSD, TW_SKU_LRS, TW_PB_MOUNT, 1.183},
        {"westeurope", "USD", "S10", TW_SKU_STANDARD_HDD, TW_SKU_LRS, TW_PB_OPS_10K, 0.0005},
        {"northeurope", "USD", "S10", TW_SKU_STANDARD_HDD, TW_SKU_LRS, TW_PB_MONTH, 5.888},
        {"eastus", "USD", "P10", TW_SKU_PREMIUM_SSD, TW_SKU_LRS, TW_PB_MONTH, 19.71},
        {"eastus", "USD", "P15", TW_SKU_PREMIUM_SSD, TW_SKU_LRS, TW_PB_MONTH, 38.012142},
        {"uksouth", "GBP", "P10", TW_SKU_PREMIUM_SSD, TW_SKU_LRS, TW_PB_MONTH, 18.563811},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        double v;
        if (tw_pricebook_price(b, rows[i].region, rows[i].cur, rows[i].f, rows[i].tier, rows[i].r,
                               rows[i].k, &v, &err) != TW_OK)
            fail_msg("row %zu: %s", i, err.msg);
        if (v != rows[i].v)
            fail_msg("row %zu: %g, want %g", i, v, rows[i].v);
    }
    /* GBP in westeurope: no source has it; missing, not zero. */
    double v;
    assert_int_equal(tw_pricebook_price(b, "westeurope", "GBP", TW_SKU_PREMIUM_SSD, "P10", TW_SKU_LRS,
                                        TW_PB_MONTH, &v, &err),
                     TW_ENOENT);
    /* Every region has its monthly P, E and S prices. */
    size_t regions = 0;
    for (size_t i = 0; i < b->items.n; i++) {
        const struct tw_price_item *it = &b->items.v[i];
        if (strcmp(it->currency, "USD") != 0 || strcmp(it->meter, "P10 LRS Disk") != 0)
            continue;
        regions++;
        assert_non_null(tw_pricebook_find(b, it->region, "USD", TW_SKU_STANDARD_SSD, "E10",
                                          TW_SKU_LRS, TW_PB_MONTH));
    }
    assert_true(regions >= 60);
    tw_pricebook_free(b);
}

static void test_names(void **state)
{
    (void)state;
    struct tw_pricebook *b = book_of("prices/real-s10-eastus-usd.json", "eastus", "USD");
    double v;
    struct tw_error err = {0};
    /* The book's SKU filters take the canonical spelling only. */
    assert_int_equal(tw_pricebook_price_sku(b, "eastus", "USD", "standard_lrs", "S10",
                                            TW_PB_OPS_10K, &v, &err),
                     TW_EINVAL);
    assert_int_equal(tw_pricebook_price_sku(b, "eastus", "USD", "Standard_LRS", "S10",
                                            TW_PB_OPS_10K, &v, &err),
                     TW_OK);
    assert_true(v == 0.0005);
    assert_int_equal(tw_pricebook_price_sku(b, "eastus", "USD", "Standard", "S10", TW_PB_MONTH,
                                            &v, &err),
                     TW_EINVAL);
    tw_pricebook_free(b);
    assert_true(tw_pb_currency_ok("GBP"));
    assert_false(tw_pb_currency_ok("XYZ"));
    assert_true(tw_pb_region_ok("westeurope"));
    assert_false(tw_pb_region_ok("Global"));
    assert_false(tw_pb_region_ok("west europe"));
}

/* An item's span: no dates is all time, a bare date is midnight UTC, the
 * end the second after effectiveEndDate, an offset read as an instant. */
static void test_item_span(void **state)
{
    (void)state;
    struct tw_price_item it;
    memset(&it, 0, sizeof(it));
    int64_t from, to, want;
    tw_price_item_span(&it, &from, &to);
    assert_true(from == INT64_MIN);
    assert_true(to == INT64_MAX);
    strcpy(it.start, "2026-07-01");
    strcpy(it.end, "2026-12-31T23:59:59+01:00");
    tw_price_item_span(&it, &from, &to);
    assert_true(tw_price_date("2026-07-01T00:00:00Z", &want));
    assert_true(from == want);
    assert_true(tw_price_date("2026-12-31T23:00:00Z", &want));
    assert_true(to == want);
    it.start[0] = '\0';
    tw_price_item_span(&it, &from, &to);
    assert_true(from == INT64_MIN);
    assert_true(to == want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p15_mount),
        cmocka_unit_test(test_s10_operations),
        cmocka_unit_test(test_gbp),
        cmocka_unit_test(test_mixed_and_unknown),
        cmocka_unit_test(test_errors_are_refused),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_exact_prices),
        cmocka_unit_test(test_bad_pages),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_item_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
