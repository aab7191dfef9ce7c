/* test_pricebook_meters.c - README's "How meters become prices", row by
 * row: each item alone becomes exactly the price its product, meter name,
 * unit, type and term say, or none (an unknown meter), never a near match.
 * The items are made up for the test; their numbers are not prices. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pricebook.h"

#define NOW "2026-11-30T00:00:00Z"
#define UNKNOWN (-1)

#define PREMIUM "Premium SSD Managed Disks"
#define SSD "Standard SSD Managed Disks"
#define HDD "Standard HDD Managed Disks"
#define V2 "Azure Premium SSD v2"
#define ULTRA "Ultra Disks"

struct row {
    const char *product, *meter, *unit, *type, *term;
    int kind; /* enum tw_pb_kind, or UNKNOWN: no price */
    enum tw_sku_family family;
    const char *tier;
    enum tw_sku_redundancy red;
};

static const struct row rows[] = {
    /* The tier's monthly price: "<tier> LRS|ZRS Disk", 1/Month. */
    {PREMIUM, "P10 LRS Disk", "1/Month", "Consumption", "", TW_PB_MONTH, TW_SKU_PREMIUM_SSD, "P10",
     TW_SKU_LRS},
    {PREMIUM, "P10 ZRS Disk", "1/Month", "Consumption", "", TW_PB_MONTH, TW_SKU_PREMIUM_SSD, "P10",
     TW_SKU_ZRS},
    {SSD, "E80 LRS Disk", "1/Month", "Consumption", "", TW_PB_MONTH, TW_SKU_STANDARD_SSD, "E80",
     TW_SKU_LRS},
    {HDD, "S4 LRS Disk", "1/Month", "Consumption", "", TW_PB_MONTH, TW_SKU_STANDARD_HDD, "S4",
     TW_SKU_LRS},
    /* Exactly "Disk": a meter that only starts or ends like it is not it. */
    {PREMIUM, "P10 LRS Disks", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P10 LRS Disk Something", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P10 LRS", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P10 LRS Disk", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P10 GRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    /* The tier's letter is the product's, one or two digits, no leading 0. */
    {PREMIUM, "E10 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {SSD, "P10 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P01 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P100 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    /* The shared disk's fee per VM: its own kind, never the tier's price. */
    {PREMIUM, "P15 LRS Disk Mount", "1/Month", "Consumption", "", TW_PB_MOUNT, TW_SKU_PREMIUM_SSD,
     "P15", TW_SKU_LRS},
    {SSD, "E15 ZRS Disk Mount", "1/Month", "Consumption", "", TW_PB_MOUNT, TW_SKU_STANDARD_SSD,
     "E15", TW_SKU_ZRS},
    {PREMIUM, "P15 LRS Disk Mount", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P15 LRS Disk Mounts", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    /* Transactions, per 10,000: Standard SSD and HDD only.  Premium SSD has
     * no transaction charge, whatever an item calls itself. */
    {SSD, "E10 LRS Disk Operations", "10K", "Consumption", "", TW_PB_OPS_10K, TW_SKU_STANDARD_SSD,
     "E10", TW_SKU_LRS},
    {SSD, "E10 ZRS Disk Operations", "10K", "Consumption", "", TW_PB_OPS_10K, TW_SKU_STANDARD_SSD,
     "E10", TW_SKU_ZRS},
    {HDD, "S10 LRS Disk Operations", "10K", "Consumption", "", TW_PB_OPS_10K, TW_SKU_STANDARD_HDD,
     "S10", TW_SKU_LRS},
    {PREMIUM, "P10 LRS Disk Operations", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P10 ZRS Disk Operations", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {SSD, "E10 LRS Disk Operations", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    /* The newer tier-less meter of the same: a price of its own kind,
     * tier "" (savings.h takes the higher of the two when both exist). */
    {SSD, "Disk Transactions LRS Disk Operations", "10K", "Consumption", "", TW_PB_TX_10K,
     TW_SKU_STANDARD_SSD, "", TW_SKU_LRS},
    {SSD, "Disk Transactions ZRS Disk Operations", "10K", "Consumption", "", TW_PB_TX_10K,
     TW_SKU_STANDARD_SSD, "", TW_SKU_ZRS},
    {HDD, "Disk Transactions LRS Disk Operations", "10K", "Consumption", "", TW_PB_TX_10K,
     TW_SKU_STANDARD_HDD, "", TW_SKU_LRS},
    {PREMIUM, "Disk Transactions LRS Disk Operations", "10K", "Consumption", "", UNKNOWN, 0, "",
     0},
    {SSD, "Disk Transactions LRS Disk Operations", "1/Month", "Consumption", "", UNKNOWN, 0, "",
     0},
    {SSD, "Disk Transactions GRS Disk Operations", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {SSD, "Disk Transactions LRS Disk Operation", "10K", "Consumption", "", UNKNOWN, 0, "", 0},
    {SSD, "Disk Transactions LRS Disk Operations", "10K", "Reservation", "1 Year", UNKNOWN, 0,
     "", 0},
    /* Premium SSD's burst transactions are not priced (yet). */
    {PREMIUM, "LRS Burst Transactions", "10K/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    /* Reservations: the term's total, apart from the monthly price. */
    {PREMIUM, "P30 LRS Disk", "1/Month", "Reservation", "1 Year", TW_PB_RESERVED_1Y,
     TW_SKU_PREMIUM_SSD, "P30", TW_SKU_LRS},
    {PREMIUM, "P30 LRS Disk", "1/Month", "Reservation", "3 Years", TW_PB_RESERVED_3Y,
     TW_SKU_PREMIUM_SSD, "P30", TW_SKU_LRS},
    {PREMIUM, "P30 LRS Disk", "1/Month", "Reservation", "5 Years", UNKNOWN, 0, "", 0},
    {PREMIUM, "P30 LRS Disk", "1/Month", "Reservation", "", UNKNOWN, 0, "", 0},
    {PREMIUM, "P30 LRS Disk Mount", "1/Month", "Reservation", "1 Year", UNKNOWN, 0, "", 0},
    {PREMIUM, "P30 LRS Disk", "1/Month", "DevTestConsumption", "", UNKNOWN, 0, "", 0},
    /* Premium SSD v2 and Ultra: per GiB, IOPS and MB/s, per hour. */
    {V2, "Premium LRS Provisioned Capacity", "1 GiB/Hour", "Consumption", "", TW_PB_GIB_HOUR,
     TW_SKU_PREMIUM_V2, "", TW_SKU_LRS},
    {V2, "Premium LRS Provisioned IOPS", "1/Hour", "Consumption", "", TW_PB_IOPS_HOUR,
     TW_SKU_PREMIUM_V2, "", TW_SKU_LRS},
    {V2, "Premium ZRS Provisioned Throughput (MBps)", "1/Hour", "Consumption", "",
     TW_PB_MBPS_HOUR, TW_SKU_PREMIUM_V2, "", TW_SKU_ZRS},
    {ULTRA, "Ultra LRS Provisioned Capacity", "1 GiB/Hour", "Consumption", "", TW_PB_GIB_HOUR,
     TW_SKU_ULTRA, "", TW_SKU_LRS},
    {ULTRA, "Ultra LRS Provisioned IOPS", "1/Hour", "Consumption", "", TW_PB_IOPS_HOUR,
     TW_SKU_ULTRA, "", TW_SKU_LRS},
    {V2, "Premium LRS Provisioned Capacity", "1/Hour", "Consumption", "", UNKNOWN, 0, "", 0},
    {V2, "Ultra LRS Provisioned IOPS", "1/Hour", "Consumption", "", UNKNOWN, 0, "", 0},
    {ULTRA, "Premium LRS Provisioned IOPS", "1/Hour", "Consumption", "", UNKNOWN, 0, "", 0},
    {V2, "Premium LRS Provisioned IOPS", "1/Hour", "Reservation", "1 Year", UNKNOWN, 0, "", 0},
    /* The product's name is matched whole too. */
    {"Premium SSD Managed Disk", "P10 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
    {"Storage", "P10 LRS Disk", "1/Month", "Consumption", "", UNKNOWN, 0, "", 0},
};

/* The book of one item; the test fails if it can't be built. */
static struct tw_pricebook *book_of_one(const struct row *r)
{
    char page[1024];
    char term[64] = "";
    if (r->term[0])
        snprintf(term, sizeof(term), ",\"reservationTerm\":\"%s\"", r->term);
    snprintf(page, sizeof(page),
             "{\"Items\":[{\"currencyCode\":\"USD\",\"retailPrice\":2.5,\"armRegionName\":\"r1\","
             "\"meterName\":\"%s\",\"productName\":\"%s\",\"unitOfMeasure\":\"%s\","
             "\"type\":\"%s\"%s}]}",
             r->meter, r->product, r->unit, r->type, term);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    if (tw_price_page_parse(page, strlen(page), &items, NULL, &err) != TW_OK)
        fail_msg("%s / %s: %s", r->product, r->meter, err.msg);
    struct tw_pricebook *b = NULL;
    if (tw_pricebook_build(&items, NULL, NULL, "test", NOW, NOW, &b, &err) != TW_OK)
        fail_msg("%s / %s: %s", r->product, r->meter, err.msg);
    return b;
}

static void test_each_meter(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        struct tw_pricebook *b = book_of_one(r);
        if (r->kind == UNKNOWN) {
            if (b->n != 0 || b->n_unused != 1 || b->unused_why[0] != TW_PB_UNUSED_UNKNOWN)
                fail_msg("row %zu: %s / \"%s\" / %s / %s %s: expected an unknown meter, got %zu "
                         "price(s)",
                         i, r->product, r->meter, r->unit, r->type, r->term, b->n);
        } else {
            if (b->n != 1 || b->n_unused != 0)
                fail_msg("row %zu: %s / \"%s\": expected one price, got %zu (%zu unused)", i,
                         r->product, r->meter, b->n, b->n_unused);
            const struct tw_price_entry *e = tw_pricebook_find(
                b, "r1", "USD", r->family, r->tier, r->red, (enum tw_pb_kind)r->kind);
            if (!e)
                fail_msg("row %zu: %s / \"%s\": not a %s %s %s price", i, r->product, r->meter,
                         r->tier, tw_sku_redundancy_name(r->red),
                         tw_pb_kind_name((enum tw_pb_kind)r->kind));
        }
        tw_pricebook_free(b);
    }
}

/* A tier's three meters side by side keep apart: the Mount fee and the
 * operations charge never become the tier's monthly price. */
static void test_side_by_side(void **state)
{
    (void)state;
    const char *page =
        "{\"Items\":["
        "{\"currencyCode\":\"USD\",\"retailPrice\":9.6,\"armRegionName\":\"r1\",\"meterName\":"
        "\"E10 LRS Disk\",\"productName\":\"" SSD "\",\"unitOfMeasure\":\"1/Month\",\"type\":"
        "\"Consumption\"},"
        "{\"currencyCode\":\"USD\",\"retailPrice\":1.5,\"armRegionName\":\"r1\",\"meterName\":"
        "\"E10 LRS Disk Mount\",\"productName\":\"" SSD "\",\"unitOfMeasure\":\"1/Month\",\"type\":"
        "\"Consumption\"},"
        "{\"currencyCode\":\"USD\",\"retailPrice\":0.5,\"armRegionName\":\"r1\",\"meterName\":"
        "\"E10 LRS Disk Operations\",\"productName\":\"" SSD "\",\"unitOfMeasure\":\"10K\","
        "\"type\":\"Consumption\"}]}";
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_price_page_parse(page, strlen(page), &items, NULL, &err), TW_OK);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, NULL, "test", NOW, NOW, &b, &err), TW_OK);
    assert_int_equal(b->n, 3);
    const char *meters[] = {"E10 LRS Disk", "E10 LRS Disk Mount", "E10 LRS Disk Operations"};
    const enum tw_pb_kind kinds[] = {TW_PB_MONTH, TW_PB_MOUNT, TW_PB_OPS_10K};
    for (int k = 0; k < 3; k++) {
        const struct tw_price_entry *e = tw_pricebook_find(b, "r1", "USD", TW_SKU_STANDARD_SSD,
                                                           "E10", TW_SKU_LRS, kinds[k]);
        assert_non_null(e);
        assert_string_equal(b->items.v[e->item].meter, meters[k]);
    }
    tw_pricebook_free(b);
}

/* The tier-less transactions meter is a price now, not an unknown meter:
 * the prices JSON shows it on each row of its family and redundancy
 * (disk_transactions_per_10k) beside the tier's own per_10k_transactions. */
static void test_tierless_json(void **state)
{
    (void)state;
    const char *page =
        "{\"Items\":["
        "{\"currencyCode\":\"USD\",\"retailPrice\":9.6,\"armRegionName\":\"r1\",\"meterName\":"
        "\"E10 LRS Disk\",\"productName\":\"" SSD "\",\"unitOfMeasure\":\"1/Month\",\"type\":"
        "\"Consumption\"},"
        "{\"currencyCode\":\"USD\",\"retailPrice\":0.002,\"armRegionName\":\"r1\",\"meterName\":"
        "\"E10 LRS Disk Operations\",\"productName\":\"" SSD "\",\"unitOfMeasure\":\"10K\","
        "\"type\":\"Consumption\"},"
        "{\"currencyCode\":\"USD\",\"retailPrice\":0.0026,\"armRegionName\":\"r1\",\"meterName\":"
        "\"Disk Transactions LRS Disk Operations\",\"productName\":\"" SSD "\",\"unitOfMeasure\":"
        "\"10K\",\"type\":\"Consumption\"},"
        "{\"currencyCode\":\"USD\",\"retailPrice\":21.68,\"armRegionName\":\"r1\",\"meterName\":"
        "\"P10 LRS Disk\",\"productName\":\"" PREMIUM "\",\"unitOfMeasure\":\"1/Month\",\"type\":"
        "\"Consumption\"}]}";
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_price_page_parse(page, strlen(page), &items, NULL, &err), TW_OK);
    struct tw_pricebook *b;
    assert_int_equal(tw_pricebook_build(&items, NULL, NULL, "test", NOW, NOW, &b, &err), TW_OK);
    assert_int_equal(b->n, 4);
    assert_int_equal(b->n_unused, 0);
    json_t *j;
    assert_int_equal(tw_pricebook_json(b, "r1", "USD", NULL, &j, &err), TW_OK);
    assert_int_equal(json_array_size(json_object_get(j, "unknown_meters")), 0);
    json_t *prices = json_object_get(j, "prices");
    assert_int_equal(json_array_size(prices), 2);
    json_t *p10 = json_array_get(prices, 0), *e10 = json_array_get(prices, 1);
    assert_string_equal(json_string_value(json_object_get(e10, "tier")), "E10");
    assert_true(json_real_value(json_object_get(e10, "per_10k_transactions")) == 0.002);
    assert_true(json_real_value(json_object_get(e10, "disk_transactions_per_10k")) == 0.0026);
    assert_true(json_is_null(json_object_get(p10, "disk_transactions_per_10k")));
    json_decref(j);
    tw_pricebook_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_meter),
        cmocka_unit_test(test_side_by_side),
        cmocka_unit_test(test_tierless_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
