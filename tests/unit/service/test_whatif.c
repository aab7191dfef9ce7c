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
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_OK);
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
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10 ZRS"));
    assert_string_equal(field, "");
    /* A target SKU given wins over the default redundancy (and the price
     * of the disk's own ZRS tier is still missing). */
    strcpy(rq.to_sku, "StandardSSD_LRS");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "P10 ZRS"));
    /* A SKU of another family than its tier. */
    field_request(&rq);
    strcpy(rq.to_sku, "Standard_LRS");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_sku");
    /* Standard HDD has no ZRS. */
    field_request(&rq);
    strcpy(rq.from_sku, "Premium_ZRS");
    strcpy(rq.to_tier, "S10");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    assert_non_null(strstr(err.msg, "LRS only"));
    /* Tiers: lower case is read, an unknown one and a too small one refused. */
    field_request(&rq);
    strcpy(rq.from_tier, "p10");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_OK);
    strcpy(rq.to_tier, "E6");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    strcpy(rq.to_tier, "Q10");
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_EINVAL);
    assert_string_equal(field, "to_tier");
    /* A window that does not parse names itself and its byte. */
    field_request(&rq);
    strcpy(rq.window[1], "Sat 00:00-Mon 24:00");
    rq.n_windows = 2;
    assert_int_equal(tw_whatif_run(&rq, b, NULL, &r, field, &err), TW_EPARSE);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_example), cmocka_unit_test(test_skus),
        cmocka_unit_test(test_period),        cmocka_unit_test(test_request),
        cmocka_unit_test(test_book),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
