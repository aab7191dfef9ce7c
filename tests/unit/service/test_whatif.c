/* test_whatif.c - the what-if calculator (service/whatif.c) without the
 * command line: the field example on the constructed GBP page, the
 * period's grammar with the byte of each refusal, the route's body with
 * the field at fault, the SKUs each side gets (ZRS stays ZRS, a SKU given
 * wins, a family mismatch refused), UTC without a zone, and a price file
 * that is not prices. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/whatif.h"

/* The rated catalog, loaded once for every test as the server and the
 * command load it once. */
static struct tw_tier_catalog cat;

static int load_catalog(void **state)
{
    (void)state;
    return tw_tier_catalog_builtin(&cat, NULL) == TW_OK ? 0 : -1;
}

static int free_catalog(void **state)
{
    (void)state;
    tw_tier_catalog_cleanup(&cat);
    return 0;
}

static struct tw_pricebook *gbp_book(void)
{
    size_t len;
    char *doc = th_fixture("prices/constructed-westeurope-gbp.json", &len);
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_whatif_book(doc, len, "gbp.json", "WestEurope", "gbp", "",
                                    "2026-12-01T00:00:00Z", &b, &err),
                     TW_OK);
    free(doc);
    assert_string_equal(b->source, "file gbp.json (a saved Retail Prices API answer)");
    assert_string_equal(b->fetched_at, "");
    return b;
}

static void field_request(struct tw_whatif_req *rq)
{
    tw_whatif_req_init(rq);
    strcpy(rq->region, "westeurope");
    strcpy(rq->currency, "GBP");
    strcpy(rq->from_tier, "P10");
    strcpy(rq->to_tier, "E10");
    strcpy(rq->window[0], "Sat 00:00-Mon 00:00");
    rq->n_windows = 1;
    rq->count = 70;
    const char *p = "2026-01-01..2027-01-01";
    assert_int_equal(tw_whatif_period_parse(p, strlen(p), rq, NULL), TW_OK);
}

static void amount_is(struct tw_amount a, int digits, const char *want)
{
    char s[64];
    assert_true(tw_amount_decimal(a, digits, s, sizeof(s)));
    assert_string_equal(s, want);
}

static void test_field_example(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp_book();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    field_request(&rq);
    /* In UTC (no zone): 52 weekends of 48 hours, no clock change. */
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_string_equal(r.tz, "UTC");
    assert_int_equal(r.downgraded_ns, INT64_C(2496) * 3600 * 1000000000);
    assert_int_equal(r.n_spans, 52);
    amount_is(r.saving, 12, "30.772602739726");
    amount_is(r.saving, 2, "30.77");
    amount_is(r.total_saving, 2, "2154.08");
    amount_is(r.total_saving, 12, "2154.082191780822");
    amount_is(r.baseline, 2, "193.92");
    amount_is(r.with_plan, 12, "163.147397260274");
    assert_string_equal(r.from.sku, "Premium_LRS");
    assert_string_equal(r.to.sku, "StandardSSD_LRS");
    assert_string_equal(r.from.meter, "P10 LRS Disk");
    assert_true(r.tx_priced);
    /* The JSON carries the same figures as strings. */
    json_t *j = NULL;
    assert_int_equal(tw_whatif_json(&r, &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "total"), "saving")),
                        "2154.08");
    assert_int_equal(json_integer_value(json_object_get(j, "seconds_downgraded")), 8985600);
    assert_int_equal(json_integer_value(json_object_get(j, "hours_downgraded")), 2496);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "from"), "per_month")),
                        "16.16");
    json_decref(j);
    tw_pricebook_free(b);
}

static void test_skus(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp_book();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    /* ZRS stays ZRS: the target's price is asked in ZRS, which the page lacks. */
    field_request(&rq);
    strcpy(rq.from_sku, "premium_zrs");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10 ZRS"));
    assert_string_equal(field, "");
    /* A target SKU given wins over the default redundancy (and the price
     * of the disk's own ZRS tier is still missing). */
    strcpy(rq.to_sku, "StandardSSD_LRS");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10 ZRS"));
    /* A SKU of another family than its tier. */
    field_request(&rq);
    strcpy(rq.to_sku, "Standard_LRS");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_sku");
    /* Standard HDD has no ZRS. */
    field_request(&rq);
    strcpy(rq.from_sku, "Premium_ZRS");
    strcpy(rq.to_tier, "S10");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    assert_non_null(strstr(err.msg, "LRS only"));
    /* Tiers: lower case is read, an unknown one and a too small one refused. */
    field_request(&rq);
    strcpy(rq.from_tier, "p10");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    strcpy(rq.to_tier, "E6");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    strcpy(rq.to_tier, "Q10");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    /* No catalog to check the tiers against: refused, not a crash. */
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, NULL, b, NULL, &r, field, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "catalog"));
    /* A window that does not parse names itself and its byte. */
    field_request(&rq);
    strcpy(rq.window[1], "Sat 00:00-Mon 24:00");
    rq.n_windows = 2;
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EPARSE);
    assert_string_equal(field, "windows[1]");
    assert_true(err.column > 0);
    tw_pricebook_free(b);
}

static void test_period(void **state)
{
    (void)state;
    static struct tw_whatif_req rq;
    struct tw_error err = {0};
    struct {
        const char *text;
        enum tw_err rc;
        long column;
        const char *words;
    } cases[] = {
        {"2026-01-01..2027-01-01", TW_OK, 0, NULL},
        {"2024-02-29..2024-03-01", TW_OK, 0, NULL},
        {"2026-01-01", TW_EPARSE, 11, "expected \"..\""},
        {"2026-01-01..", TW_EPARSE, 13, "ends early"},
        {"2026-1-01..2027-01-01", TW_EPARSE, 7, "expected a digit"},
        {"2026x01-01..2027-01-01", TW_EPARSE, 5, "expected '-'"},
        {"2026-01-01..2027-01-01x", TW_EPARSE, 23, "unexpected text"},
        {"2026-02-29..2027-01-01", TW_EPARSE, 1, "is not a date"},
        {"2026-01-01..2026-01-01", TW_EINVAL, 0, "the end is the start"},
        {"2026-01-02..2026-01-01", TW_EINVAL, 0, "before the start"},
        {"2026-01-01..2036-01-01", TW_ERANGE, 0, "at most 3644"},
        {"1899-12-31..1900-01-02", TW_ERANGE, 1, "1900..2199"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&err, 0, sizeof(err));
        tw_whatif_req_init(&rq);
        enum tw_err rc = tw_whatif_period_parse(cases[i].text, strlen(cases[i].text), &rq, &err);
        if (rc != cases[i].rc)
            fail_msg("%s: %d, want %d (%s)", cases[i].text, rc, cases[i].rc, err.msg);
        if (cases[i].column)
            assert_int_equal(err.column, cases[i].column);
        if (cases[i].words && !strstr(err.msg, cases[i].words))
            fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].text, err.msg, cases[i].words);
    }
    tw_whatif_req_init(&rq);
    assert_int_equal(tw_whatif_period_parse("2026-03-28..2026-03-30", 22, &rq, NULL), TW_OK);
    assert_int_equal(rq.to_day - rq.from_day, 2);
}

static void test_request(void **state)
{
    (void)state;
    static struct tw_whatif_req rq;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    const char *ok = "{\"region\": \"westeurope\", \"currency\": \"GBP\", \"from_tier\": \"P10\","
                     " \"to_tier\": \"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\", \"Wed "
                     "01:00-Wed 02:00\"], \"tz\": \"Europe/London\", \"period\": {\"from\": "
                     "\"2026-01-01\", \"to\": \"2027-01-01\"}, \"count\": 70, \"io\": "
                     "{\"ios_per_hour\": 3600, \"io_bytes\": 262144}}";
    assert_int_equal(tw_whatif_req_parse(ok, strlen(ok), &rq, field, &err), TW_OK);
    assert_int_equal(rq.n_windows, 2);
    assert_string_equal(rq.window[1], "Wed 01:00-Wed 02:00");
    assert_string_equal(rq.tz, "Europe/London");
    assert_int_equal(rq.count, 70);
    assert_int_equal(rq.to_day - rq.from_day, 365);
    assert_true(rq.io_set);
    assert_int_equal(rq.io.io_bytes, 262144);
    struct {
        const char *body, *field, *words;
    } bad[] = {
        {"[1]", "", "must be a JSON object"},
        {"{\"region\": 1}", "region", "must be a string"},
        {"{\"currency\": \"GBP\"}", "region", "region is missing"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\", 2], \"period\": \"2026-01-01..2027-"
         "01-01\"}",
         "windows[1]", "windows[1] must be a string"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}",
         "period", "period is missing"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": {\"from\": \"2026-01-01\","
         " \"to\": \"2026-02-30\"}}",
         "period.to", "not a date"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": {\"from\": \"2026-1-01\","
         " \"to\": \"2026-02-01\"}}",
         "period.from", "expected a digit"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": \"2026-01-01..2027-01-"
         "01\", \"count\": 1.5}",
         "count", "count must be"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": \"2026-01-01..2027-01-"
         "01\", \"io\": {\"ios_per_hour\": 1}}",
         "io.io_bytes", "io.io_bytes is missing"},
        /* The end before the start: the end is at fault. */
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": {\"from\": \"2026-02-01\","
         " \"to\": \"2026-01-01\"}}",
         "period.to", "is before the start"},
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"period\": {\"from\": \"2026-01-01\","
         " \"to\": \"2040-01-01\"}}",
         "period.to", "at most"},
        /* A zone of no name is not UTC. */
        {"{\"region\": \"r\", \"currency\": \"GBP\", \"from_tier\": \"P10\", \"to_tier\": "
         "\"E10\", \"windows\": [\"Sat 00:00-Mon 00:00\"], \"tz\": \"\", \"period\": "
         "\"2026-01-01..2027-01-01\"}",
         "tz", "tz"},
        {"{\"region\": \"r\", \"colour\": 1}", "colour", "not a field of the what-if request"},
        {"{\"region\": \"r\", \"region\": \"s\"}", "", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        if (tw_whatif_req_parse(bad[i].body, strlen(bad[i].body), &rq, field, &err) == TW_OK)
            fail_msg("%s: accepted", bad[i].body);
        if (strcmp(field, bad[i].field) != 0)
            fail_msg("%s: field \"%s\", want \"%s\"", bad[i].body, field, bad[i].field);
        if (!strstr(err.msg, bad[i].words))
            fail_msg("%s: \"%s\" lacks \"%s\"", bad[i].body, err.msg, bad[i].words);
    }
}

static void test_book(void **state)
{
    (void)state;
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    const char *notprices = "{\"Items\": 3}";
    assert_int_equal(tw_whatif_book(notprices, strlen(notprices), "x.json", "westeurope", "GBP",
                                    "", "2026-12-01T00:00:00Z", &b, &err),
                     TW_EPARSE);
    assert_null(b);
    assert_non_null(strstr(err.msg, "x.json is not a Retail Prices answer or a pricing/ snapshot"));
    /* The file's time is said beside the source, never as fetched_at. */
    size_t len;
    char *doc = th_fixture("prices/constructed-westeurope-gbp.json", &len);
    assert_int_equal(tw_whatif_book(doc, len, "g.json", "westeurope", "GBP",
                                    "2026-11-30T10:00:00Z", "2026-12-01T00:00:00Z", &b, &err),
                     TW_OK);
    free(doc);
    assert_string_equal(b->source,
                        "file g.json (a saved Retail Prices API answer, modified "
                        "2026-11-30T10:00:00Z)");
    assert_string_equal(b->fetched_at, "");
    tw_pricebook_free(b);
}

/* P10 16.16 until 2026-06-30T23:59:59Z and 17.16 from 2026-07-01, E10
 * 7.16 and 7.00 from 2026-10-01: 2026 in three parts. */
static const char two_dates[] =
    "{\"Items\": ["
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 16.16, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"P10 LRS Disk\", \"productName\": \"Premium SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\","
    " \"effectiveStartDate\": \"2018-05-01T00:00:00Z\", \"effectiveEndDate\": "
    "\"2026-06-30T23:59:59Z\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 17.16, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"P10 LRS Disk\", \"productName\": \"Premium SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\","
    " \"effectiveStartDate\": \"2026-07-01T00:00:00Z\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 7.16, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"E10 LRS Disk\", \"productName\": \"Standard SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\","
    " \"effectiveStartDate\": \"2018-11-01T00:00:00Z\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 7.00, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"E10 LRS Disk\", \"productName\": \"Standard SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\","
    " \"effectiveStartDate\": \"2026-10-01T00:00:00Z\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 0.001, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"E10 LRS Disk Operations\", \"productName\": \"Standard SSD Managed "
    "Disks\", \"unitOfMeasure\": \"10K\", \"type\": \"Consumption\"}]}";

static void test_prices_by_time(void **state)
{
    (void)state;
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    /* Built as of a day when the later prices are in effect: the run
     * still prices each part by what was in effect then. */
    assert_int_equal(tw_whatif_book(two_dates, sizeof(two_dates) - 1, "t.json", "westeurope",
                                    "GBP", "", "2026-12-01T00:00:00Z", &b, &err),
                     TW_OK);
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    field_request(&rq);
    char field[TW_WHATIF_FIELD_MAX];
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_int_equal(r.n_pieces, 3);
    assert_int_equal(r.downgraded_ns, INT64_C(2496) * 3600 * 1000000000);
    assert_int_equal(r.pieces[0].downgraded_ns, INT64_C(1248) * 3600 * 1000000000);
    assert_int_equal(r.pieces[1].from_per_month.micros, 17160000);
    assert_int_equal(r.pieces[2].to_per_month.micros, 7000000);
    /* Python's fractions: 1248 x 9/730 + 624 x 10/730 + 624 x 10.16/730. */
    amount_is(r.saving, 12, "32.618958904110");
    amount_is(r.baseline, 12, "199.969315068493");
    amount_is(r.total_saving, 2, "2283.33");
    assert_string_equal(r.from.effective_from, "2018-05-01T00:00:00Z");
    assert_int_equal(r.from.per_month.micros, 16160000);
    bool said = false;
    for (size_t i = 0; i < r.n_notes; i++)
        said |= strstr(r.notes[i], "the prices change within the period") != NULL;
    assert_true(said);
    json_t *j = NULL;
    assert_int_equal(tw_whatif_json(&r, &j, &err), TW_OK);
    json_t *pr = json_object_get(j, "prices");
    assert_int_equal(json_array_size(pr), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(pr, 1), "from")),
                        "2026-07-01T00:00:00Z");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(pr, 1), "from_per_month")), "17.16");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(pr, 2), "to_effective_from")),
        "2026-10-01T00:00:00Z");
    json_decref(j);
    /* A period inside one price: one part, no note. */
    const char *p = "2026-07-01..2026-10-01";
    assert_int_equal(tw_whatif_period_parse(p, strlen(p), &rq, NULL), TW_OK);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_int_equal(r.n_pieces, 1);
    assert_int_equal(r.from.per_month.micros, 17160000);
    /* Before any P10 item: no price then, never a zero. */
    p = "2017-01-01..2019-01-01";
    assert_int_equal(tw_whatif_period_parse(p, strlen(p), &rq, NULL), TW_OK);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10"));
    tw_pricebook_free(b);
}

static void test_out_of_range(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp_book();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    field_request(&rq);
    strcpy(rq.window[0], "Mon 00:00-Sun 23:59");
    rq.count = TW_WHATIF_COUNT_MAX;
    rq.io_set = true;
    rq.io.ios_per_hour = INT64_C(1000000000);
    rq.io.io_bytes = INT64_C(1) << 30;
    /* Per disk writable, the total not: count. */
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ERANGE);
    assert_string_equal(field, "count");
    assert_non_null(strstr(err.msg, "fewer disks"));
    /* (Too large per disk, "io", needs a dearer meter: the command's
     * test prices it on the bundled snapshot.) */
    tw_pricebook_free(b);
}

static void test_transactions_meter(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp_book();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_string_equal(r.tx.used, "E10 LRS Disk Operations");
    assert_int_equal(r.tx.n_meters, 1);
    assert_string_equal(r.tx.meters[0], "E10 LRS Disk Operations");
    bool said = false;
    for (size_t i = 0; i < r.n_notes; i++)
        said |= strstr(r.notes[i], "is the only transaction meter of the three in the book") &&
                strstr(r.notes[i], "may not be the worse case");
    assert_true(said);
    json_t *j = NULL;
    assert_int_equal(tw_whatif_json(&r, &j, &err), TW_OK);
    json_t *tx = json_object_get(json_object_get(j, "calculation"), "transactions");
    assert_string_equal(json_string_value(json_object_get(tx, "meter")), "E10 LRS Disk Operations");
    assert_int_equal(json_array_size(json_object_get(tx, "meters_in_book")), 1);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(j, "calculation"),
                                                             "rounding")),
                           "need not add up"));
    json_decref(j);
    /* A Premium target with a running VM: no transactions, said so. */
    strcpy(rq.from_tier, "E10");
    strcpy(rq.to_tier, "P10");
    rq.io_set = true;
    rq.io.ios_per_hour = 3600;
    rq.io.io_bytes = 4096;
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    said = false;
    for (size_t i = 0; i < r.n_notes; i++) {
        assert_null(strstr(r.notes[i], "per 10,000, )"));
        said |= strstr(r.notes[i], "Premium SSD bills no transactions") != NULL;
    }
    assert_true(said);
    tw_pricebook_free(b);
}

static void test_pages(void **state)
{
    (void)state;
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    const char *page = "{\"Items\": [{\"currencyCode\": \"GBP\", \"retailPrice\": 16.16, "
                       "\"armRegionName\": \"westeurope\", \"meterName\": \"P10 LRS Disk\", "
                       "\"productName\": \"Premium SSD Managed Disks\", \"unitOfMeasure\": "
                       "\"1/Month\", \"type\": \"Consumption\"}], \"NextPageLink\": "
                       "\"https://prices.azure.com/api/retail/prices?$skip=100\"}";
    assert_int_equal(tw_whatif_book(page, strlen(page), "p1.json", "westeurope", "GBP", "",
                                    "2026-12-01T00:00:00Z", &b, &err),
                     TW_EINVAL);
    assert_null(b);
    assert_non_null(strstr(err.msg, "p1.json is one page of a multi-page"));
    assert_non_null(strstr(err.msg, "Save all the pages"));
    const char *pages = "[{\"Items\": [], \"NextPageLink\": \"x\"}, {\"Items\": []}]";
    assert_int_equal(tw_whatif_book(pages, strlen(pages), "all.json", "westeurope", "GBP", "",
                                    "2026-12-01T00:00:00Z", &b, &err),
                     TW_EPARSE);
    assert_non_null(strstr(err.msg, "all.json is an array of saved Retail Prices pages"));
    assert_null(strstr(err.msg, "currencyCode"));
}

/* ---- the second review ------------------------------------------------ */

/* An item of the GBP West Europe page: METER, PRICE, START and END ("":
 * absent). */
static void put_item(char *out, size_t cap, const char *meter, const char *price,
                     const char *start, const char *end)
{
    size_t l = strlen(out);
    const char *unit = strstr(meter, "Operations") ? "10K" : "1/Month";
    const char *product = meter[0] == 'P' ? "Premium SSD Managed Disks"
                                          : "Standard SSD Managed Disks";
    snprintf(out + l, cap - l,
             "%s{\"currencyCode\": \"GBP\", \"retailPrice\": %s, \"armRegionName\": "
             "\"westeurope\", \"meterName\": \"%s\", \"productName\": \"%s\", "
             "\"unitOfMeasure\": \"%s\", \"type\": \"Consumption\"%s%s%s%s%s%s}",
             l && out[l - 1] != '[' ? ", " : "", price, meter, product, unit,
             start[0] ? ", \"effectiveStartDate\": \"" : "", start, start[0] ? "\"" : "",
             end[0] ? ", \"effectiveEndDate\": \"" : "", end, end[0] ? "\"" : "");
}

static enum tw_err book_text(const char *doc, const char *now, struct tw_pricebook **b,
                             struct tw_error *err)
{
    return tw_whatif_book(doc, strlen(doc), "t.json", "westeurope", "GBP", "", now, b, err);
}

static bool has_note(const struct tw_whatif_result *r, const char *a, const char *b)
{
    for (size_t i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], a) && (!b || strstr(r->notes[i], b)))
            return true;
    return false;
}

/* 1: every item expired today (or not yet in effect) still prices the
 * period it covers; a piece outside it is refused with its date. */
static void test_expired_book(void **state)
{
    (void)state;
    static char doc[4096];
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "2018-05-01T00:00:00Z",
             "2026-12-31T23:59:59Z");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "2018-11-01T00:00:00Z",
             "2026-12-31T23:59:59Z");
    strcat(doc, "]}");
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    assert_int_equal(book_text(doc, "2027-06-01T00:00:00Z", &b, &err), TW_OK);
    assert_int_equal(b->n, 0);
    assert_true(tw_whatif_book_has_prices(b));
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    amount_is(r.saving, 12, "30.772602739726");
    /* 2027 is past the items' end: refused naming the date. */
    const char *p = "2026-06-01..2027-06-01";
    assert_int_equal(tw_whatif_period_parse(p, strlen(p), &rq, NULL), TW_OK);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "2027-01-01T00:00:00Z"));
    assert_null(strstr(err.msg, "holds no disk price"));
    tw_pricebook_free(b);
    /* Not yet in effect today: the future period is priced. */
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "2026-01-01T00:00:00Z", "");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "2026-01-01T00:00:00Z", "");
    strcat(doc, "]}");
    assert_int_equal(book_text(doc, "2025-06-01T00:00:00Z", &b, &err), TW_OK);
    assert_int_equal(b->n, 0);
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    amount_is(r.saving, 12, "30.772602739726");
    tw_pricebook_free(b);
    /* No disk price at all: still the book's fault. */
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "Q10 LRS Thing", "1", "", "");
    strcat(doc, "]}");
    assert_int_equal(book_text(doc, "2025-06-01T00:00:00Z", &b, &err), TW_OK);
    assert_false(tw_whatif_book_has_prices(b));
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "holds no disk price"));
    tw_pricebook_free(b);
}

/* 2: dates without Z are instants (a bare date midnight UTC, no offset
 * UTC, an offset honoured) and cut the period; a date that is none is
 * refused naming the item and the field. */
static void test_item_dates(void **state)
{
    (void)state;
    int64_t t, want;
    assert_true(tw_price_date("2026-07-01T00:00:00Z", &want));
    assert_true(tw_price_date("2026-07-01", &t));
    assert_int_equal(t, want);
    assert_true(tw_price_date("2026-07-01T00:00:00", &t));
    assert_int_equal(t, want);
    assert_true(tw_price_date("2026-07-01T02:00:00+02:00", &t));
    assert_int_equal(t, want);
    assert_true(tw_price_date("2026-07-01T00:00:00.5", &t));
    assert_int_equal(t, want + 500000000);
    assert_false(tw_price_date("2026-07-01 00:00:00", &t));
    assert_false(tw_price_date("July 1st", &t));
    const char *forms[] = {"2026-07-01T00:00:00", "2026-07-01", "2026-07-01T02:00:00+02:00"};
    for (size_t f = 0; f < 3; f++) {
        static char doc[4096];
        char end[40];
        /* The old item ends the second before the new one starts. */
        snprintf(end, sizeof(end), "%s", f == 1 ? "2026-06-30T23:59:59" : "2026-06-30T23:59:59Z");
        strcpy(doc, "{\"Items\": [");
        put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "2018-05-01", end);
        put_item(doc, sizeof(doc), "P10 LRS Disk", "17.16", forms[f], "");
        put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "2018-11-01T00:00:00Z", "");
        strcat(doc, "]}");
        struct tw_pricebook *b = NULL;
        struct tw_error err = {0};
        assert_int_equal(book_text(doc, "2026-12-01T00:00:00Z", &b, &err), TW_OK);
        static struct tw_whatif_req rq;
        static struct tw_whatif_result r;
        char field[TW_WHATIF_FIELD_MAX];
        field_request(&rq);
        assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
        assert_int_equal(r.n_pieces, 2);
        assert_int_equal(r.pieces[1].from_ns, want);
        assert_int_equal(r.pieces[1].from_per_month.micros, 17160000);
        tw_pricebook_free(b);
    }
    /* The book compares instants, not text: an offset's end before now
     * has ended, and of two starts the later instant wins. */
    {
        static char d2[4096];
        strcpy(d2, "{\"Items\": [");
        put_item(d2, sizeof(d2), "E10 LRS Disk", "7.16", "", "2026-07-01T01:00:00+02:00");
        put_item(d2, sizeof(d2), "P10 LRS Disk", "1", "2026-07-01T01:00:00+02:00", "");
        put_item(d2, sizeof(d2), "P10 LRS Disk", "2", "2026-06-30T23:30:00Z", "");
        strcat(d2, "]}");
        struct tw_pricebook *b = NULL;
        struct tw_error err = {0};
        assert_int_equal(book_text(d2, "2026-06-30T23:30:00Z", &b, &err), TW_OK);
        struct tw_money m;
        assert_int_equal(tw_pricebook_money(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "E10",
                                            TW_SKU_LRS, TW_PB_MONTH, &m, &err),
                         TW_ENOENT);
        assert_int_equal(tw_pricebook_money(b, "westeurope", "GBP", TW_SKU_PREMIUM_SSD, "P10",
                                            TW_SKU_LRS, TW_PB_MONTH, &m, &err),
                         TW_OK);
        assert_int_equal(m.micros, 2000000);
        tw_pricebook_free(b);
    }
    /* Not a date: refused, the item and the field named. */
    static char doc[4096];
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "", "");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "17.16", "", "2026-07-01 00:00");
    strcat(doc, "]}");
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    assert_int_equal(book_text(doc, "2026-12-01T00:00:00Z", &b, &err), TW_EPARSE);
    assert_null(b);
    assert_non_null(strstr(err.msg, "price item 1"));
    assert_non_null(strstr(err.msg, "effectiveEndDate"));
    assert_non_null(strstr(err.msg, "2026-07-01 00:00"));
}

/* 3: the target's transaction price changing within the period: each
 * part carries its own, and a note says so. */
static void test_tx_by_part(void **state)
{
    (void)state;
    static char doc[4096];
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "", "");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "", "");
    put_item(doc, sizeof(doc), "E10 LRS Disk Operations", "0.001", "", "2026-06-30T23:59:59Z");
    put_item(doc, sizeof(doc), "E10 LRS Disk Operations", "0.002", "2026-07-01T00:00:00Z", "");
    strcat(doc, "]}");
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    assert_int_equal(book_text(doc, "2026-12-01T00:00:00Z", &b, &err), TW_OK);
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    field_request(&rq);
    rq.io_set = true;
    rq.io.ios_per_hour = 10000;
    rq.io.io_bytes = 4096;
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_int_equal(r.n_pieces, 2);
    assert_int_equal(r.pieces[0].tx_per_10k.micros, 1000);
    assert_int_equal(r.pieces[1].tx_per_10k.micros, 2000);
    assert_true(has_note(&r, "transaction price of E10 StandardSSD_LRS changes", NULL));
    json_t *j = NULL;
    assert_int_equal(tw_whatif_json(&r, &j, &err), TW_OK);
    json_t *pr = json_object_get(j, "prices");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pr, 0), "tx_per_10k")),
                        "0.001");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pr, 1), "tx_per_10k")),
                        "0.002");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pr, 1), "tx_meter")),
                        "E10 LRS Disk Operations");
    /* 1248 h x 10,000 I/Os of one unit: 1248 x 0.001 and 1248 x 0.002. */
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(pr, 0), "transactions_unrounded")),
        "1.248000000000");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(pr, 1), "transactions_unrounded")),
        "2.496000000000");
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(j, "calculation"),
                                                             "rounding")),
                           "12 decimals on its own"));
    json_decref(j);
    tw_pricebook_free(b);
}

/* 5, 7, 8: ZRS kept from from_sku said so; a saving made not positive by
 * the transactions said so; a target larger than the disk's step refused
 * naming the step. */
static void test_review_refusals(void **state)
{
    (void)state;
    struct tw_pricebook *b = gbp_book();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    field_request(&rq);
    strcpy(rq.from_sku, "Premium_ZRS");
    strcpy(rq.to_tier, "S10");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    assert_non_null(strstr(err.msg, "kept from from_sku"));
    strcpy(rq.to_sku, "Standard_ZRS");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_sku");
    assert_non_null(strstr(err.msg, "to_sku Standard_ZRS"));
    assert_null(strstr(err.msg, "to_tier"));
    /* 8 */
    field_request(&rq);
    strcpy(rq.to_tier, "E15");
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    assert_non_null(strstr(err.msg, "give to_tier E10"));
    /* 7: 3 million I/Os an hour at 0.001 per 10,000 is 0.30 an hour,
     * more than (16.16 - 7.16) / 730. */
    field_request(&rq);
    rq.io_set = true;
    rq.io.ios_per_hour = 3000000;
    rq.io.io_bytes = 4096;
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_true(r.saving.num < 0);
    assert_true(has_note(&r, "the saving is not positive", "transactions"));
    rq.io.ios_per_hour = 1;
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_false(has_note(&r, "the saving is not positive", NULL));
    tw_pricebook_free(b);
}

/* 9: an undated book before its date is said; 10: an item starting at a
 * fraction of a second is in effect in the piece that starts then. */
static void test_undated_and_fraction(void **state)
{
    (void)state;
    static char doc[4096];
    strcpy(doc, "{\"_fetched_at\": \"2026-06-01T00:00:00Z\", \"Items\": [");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "", "");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "", "");
    strcat(doc, "]}");
    struct tw_pricebook *b = NULL;
    struct tw_error err = {0};
    assert_int_equal(book_text(doc, "2026-12-01T00:00:00Z", &b, &err), TW_OK);
    static struct tw_whatif_req rq;
    static struct tw_whatif_result r;
    char field[TW_WHATIF_FIELD_MAX];
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_true(has_note(&r, "carry no effective date", "2026-06-01T00:00:00Z"));
    const char *p = "2026-07-01..2027-01-01";
    assert_int_equal(tw_whatif_period_parse(p, strlen(p), &rq, NULL), TW_OK);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_false(has_note(&r, "carry no effective date", NULL));
    tw_pricebook_free(b);
    /* 10 */
    strcpy(doc, "{\"Items\": [");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "16.16", "2018-05-01T00:00:00Z",
             "2026-06-30T23:59:59.5Z");
    put_item(doc, sizeof(doc), "P10 LRS Disk", "17.16", "2026-07-01T00:00:00.5Z", "");
    put_item(doc, sizeof(doc), "E10 LRS Disk", "7.16", "2018-11-01T00:00:00Z", "");
    strcat(doc, "]}");
    assert_int_equal(book_text(doc, "2026-12-01T00:00:00Z", &b, &err), TW_OK);
    field_request(&rq);
    assert_int_equal(tw_whatif_run(&rq, &cat, b, NULL, &r, field, &err), TW_OK);
    assert_int_equal(r.n_pieces, 2);
    assert_int_equal(r.pieces[1].from_per_month.micros, 17160000);
    json_t *j = NULL;
    assert_int_equal(tw_whatif_json(&r, &j, &err), TW_OK);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "prices"), 1), "from")),
        "2026-07-01T00:00:00.500000000Z");
    json_decref(j);
    tw_pricebook_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_example), cmocka_unit_test(test_skus),
        cmocka_unit_test(test_period),        cmocka_unit_test(test_request),
        cmocka_unit_test(test_book),          cmocka_unit_test(test_prices_by_time),
        cmocka_unit_test(test_out_of_range),  cmocka_unit_test(test_transactions_meter),
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_expired_book),  cmocka_unit_test(test_item_dates),
        cmocka_unit_test(test_tx_by_part),    cmocka_unit_test(test_review_refusals),
        cmocka_unit_test(test_undated_and_fraction),
    };
    return cmocka_run_group_tests(tests, load_catalog, free_catalog);
}
