/* test_prices.c - the Retail Prices client: the query, paging by
 * NextPageLink, the $skip fallback, the link guards (another host, a
 * loop), retries on 429, the API's error bodies, a currency that changes
 * between pages, the deadline.  Against a scripted server on 127.0.0.1. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure/prices.h"
#include "fakesrv.h"

/* The real S10 Operations item (tests/fixtures/prices/real-s10-eastus-usd.json),
 * repeated to fill pages: paging is about counts, not about prices. */
#define S10_OPS                                                                                    \
    "{\"currencyCode\": \"USD\", \"tierMinimumUnits\": 0.0, \"retailPrice\": 0.0005, "             \
    "\"unitPrice\": 0.0005, \"armRegionName\": \"eastus\", \"location\": \"US East\", "            \
    "\"effectiveStartDate\": \"2017-10-01T00:00:00Z\", \"meterId\": "                              \
    "\"82cd70ab-1aee-4b30-bc04-8b71e1204dbc\", \"meterName\": \"S10 LRS Disk Operations\", "       \
    "\"productId\": \"DZH318Z0BP0L\", \"skuId\": \"DZH318Z0BP0L/00C4\", \"productName\": "         \
    "\"Standard HDD Managed Disks\", \"skuName\": \"S10 LRS\", \"serviceName\": \"Storage\", "     \
    "\"serviceId\": \"DZH317F1HKN0\", \"serviceFamily\": \"Storage\", \"unitOfMeasure\": "         \
    "\"10K\", \"type\": \"Consumption\", \"isPrimaryMeterRegion\": false, \"armSkuName\": \"\"}"

/* A page of N items in CURRENCY with NEXT (NULL: null). */
static char *page(int n, const char *currency, const char *next)
{
    size_t cap = (size_t)n * (sizeof(S10_OPS) + 2) + 1024;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t o = (size_t)snprintf(s, cap,
                                "{\"BillingCurrency\": \"%s\", \"CustomerEntityId\": \"Default\", "
                                "\"CustomerEntityType\": \"Retail\", \"Items\": [",
                                currency);
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o, "%s%s", i ? "," : "", S10_OPS);
    if (next)
        o += (size_t)snprintf(s + o, cap - o, "], \"NextPageLink\": \"%s\", \"Count\": %d}", next,
                              n);
    else
        o += (size_t)snprintf(s + o, cap - o, "], \"NextPageLink\": null, \"Count\": %d}", n);
    return s;
}

struct logs {
    int n;
    char last[600];
};

static void logger(void *arg, const char *line)
{
    struct logs *l = arg;
    l->n++;
    snprintf(l->last, sizeof(l->last), "%s", line);
}

static struct fs_sleeps sleeps;
static struct tw_az_http_opts opts;

static struct tw_az_prices_req req(const char *base, struct logs *l)
{
    tw_az_http_opts_default(&opts);
    opts.loopback_only = true;
    opts.sleep_ms = fs_sleep;
    memset(&sleeps, 0, sizeof(sleeps));
    opts.sleep_arg = &sleeps;
    struct tw_az_prices_req rq = {.base = base,
                                  .region = "eastus",
                                  .currency = "USD",
                                  .http = &opts,
                                  .log = logger,
                                  .log_arg = l};
    return rq;
}

static void test_url(void **state)
{
    (void)state;
    char url[TW_PRICES_LINK_MAX];
    struct tw_error err = {0};
    assert_int_equal(
        tw_az_prices_url("https://prices.azure.com", "westeurope", "EUR", url, sizeof(url), &err),
        TW_OK);
    /* The documented form: currencyCode='EUR', quotes as %27, spaces as %20. */
    const char *want = "https://prices.azure.com/api/retail/prices?currencyCode=%27EUR%27&$filter="
                       "serviceName%20eq%20%27Storage%27%20and%20armRegionName%20eq%20%27westeurope"
                       "%27%20and%20%28productName%20eq%20%27Premium%20SSD%20Managed%20Disks%27"
                       "%20or%20productName%20eq%20%27Standard%20SSD%20Managed%20Disks%27";
    assert_memory_equal(url, want, strlen(want));
    assert_non_null(strstr(url, "%27Ultra%20Disks%27%29%20and%20%28priceType%20eq%20%27"
                                "Consumption%27%20or%20priceType%20eq%20%27Reservation%27%29"));
    assert_int_equal(tw_az_prices_url("https://p", "West Europe", "EUR", url, sizeof(url), &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "West Europe"));
    assert_int_equal(tw_az_prices_url("https://p", "westeurope", "EURO", url, sizeof(url), &err),
                     TW_EINVAL);
    assert_int_equal(tw_az_prices_url("https://p", "westeurope'", "EUR", url, sizeof(url), &err),
                     TW_EINVAL);
    assert_int_equal(tw_az_prices_url("https://p", "westeurope", "EUR", url, 64, &err), TW_EINVAL);
}

static void test_link_ok(void **state)
{
    (void)state;
    static const struct {
        const char *link, *base;
        bool ok;
    } rows[] = {
        /* Real links carry the explicit :443 of the same https host. */
        {"https://prices.azure.com:443/api/retail/prices?$filter=priceType%20eq%20%27Reservation"
         "%27&$skip=1000",
         "https://prices.azure.com", true},
        {"https://prices.azure.com/api/retail/prices?$skip=100", "https://prices.azure.com", true},
        {"https://PRICES.azure.com:443/api/retail/prices", "https://prices.azure.com:443", true},
        {"http://prices.azure.com/api/retail/prices?$skip=1", "https://prices.azure.com", false},
        {"https://prices.azure.com:8443/api/retail/prices", "https://prices.azure.com", false},
        {"https://prices.azure.com.evil.example/api/retail/prices", "https://prices.azure.com",
         false},
        {"https://prices.azure.com@evil.example/api/retail/prices", "https://prices.azure.com",
         false},
        {"https://evil.example/api/retail/prices?https://prices.azure.com",
         "https://prices.azure.com", false},
        {"https://prices.azure.com/api/retail/pricesX", "https://prices.azure.com", false},
        {"https://prices.azure.com/other", "https://prices.azure.com", false},
        {"https://prices.azure.com/api/retail/prices?a b", "https://prices.azure.com", false},
        {"http://127.0.0.1:5000/api/retail/prices?$skip=100", "http://127.0.0.1:5000", true},
        {"http://127.0.0.1:5001/api/retail/prices?$skip=100", "http://127.0.0.1:5000", false},
        {"http://127.0.0.2:5000/api/retail/prices?$skip=100", "http://127.0.0.1:5000", false},
        {"http://127.0.0.1:80/api/retail/prices", "http://127.0.0.1", true},
        {"ftp://prices.azure.com/api/retail/prices", "https://prices.azure.com", false},
        {"/api/retail/prices?$skip=100", "https://prices.azure.com", false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (tw_az_prices_link_ok(rows[i].link, rows[i].base) != rows[i].ok)
            fail_msg("row %zu: %s against %s", i, rows[i].link, rows[i].base);
}

static void test_paging(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "{}", NULL, 0}, {0}});
    assert_non_null(s);
    char l2[256], l3[256];
    /* Links as the API writes them: the query kept, $skip appended. */
    snprintf(l2, sizeof(l2), "%s/api/retail/prices?currencyCode=USD&$skip=100", s->base);
    snprintf(l3, sizeof(l3), "%s/api/retail/prices?currencyCode=USD&$skip=1100", s->base);
    char *p1 = page(100, "USD", l2), *p2 = page(1000, "USD", l3), *p3 = page(7, "USD", NULL);
    fs_script(s,
              (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {200, p3, NULL, 0}, {0}});
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_az_prices_stats st;
    struct tw_error err = {0};
    if (tw_az_prices_fetch(&rq, &items, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(items.n, 1107);
    assert_int_equal(st.pages, 3);
    assert_int_equal(st.skip_fallbacks, 0);
    assert_int_equal(l.n, 0);
    assert_true(st.bytes > 1000);
    assert_string_equal(s->path, "/api/retail/prices");
    tw_price_items_cleanup(&items);

    /* The first request's filter. */
    fs_script(s, (struct fs_reply[]){{200, p3, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, &st, &err), TW_OK);
    assert_memory_equal(s->filter,
                        "serviceName eq 'Storage' and armRegionName eq 'eastus' and "
                        "(productName eq 'Premium SSD Managed Disks' or ",
                        100);
    tw_price_items_cleanup(&items);
    free(p1);
    free(p2);
    free(p3);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_skip_fallback(void **state)
{
    (void)state;
    /* A full page without a NextPageLink (the API did this in 2023): go on
     * with $skip, and say so. */
    /* Page 1's link is null, page 2's an empty string: both mean none. */
    char *p1 = page(100, "USD", NULL), *p2 = page(100, "USD", ""), *p3 = page(0, "USD", NULL);
    struct fakesrv *s = fs_start(
        (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {200, p3, NULL, 0}, {0}});
    assert_non_null(s);
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_az_prices_stats st;
    struct tw_error err = {0};
    if (tw_az_prices_fetch(&rq, &items, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(items.n, 200);
    assert_int_equal(st.pages, 3);
    assert_int_equal(st.skip_fallbacks, 2);
    assert_int_equal(l.n, 2);
    assert_non_null(strstr(l.last, "no NextPageLink"));
    assert_non_null(strstr(l.last, "$skip=200"));
    tw_price_items_cleanup(&items);

    /* A short page without a link is the last. */
    char *p4 = page(42, "USD", NULL);
    fs_script(s, (struct fs_reply[]){{200, p4, NULL, 0}, {0}});
    l.n = 0;
    assert_int_equal(tw_az_prices_fetch(&rq, &items, &st, &err), TW_OK);
    assert_int_equal(items.n, 42);
    assert_int_equal(fs_requests(s), 1);
    assert_int_equal(l.n, 0);
    tw_price_items_cleanup(&items);
    free(p1);
    free(p2);
    free(p3);
    free(p4);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_throttled_then_ok(void **state)
{
    (void)state;
    char *p1 = page(3, "USD", NULL);
    struct fakesrv *s = fs_start((struct fs_reply[]){
        {429, "{\"Error\": {\"Code\": \"TooManyRequests\", \"Message\": \"Too many requests.\"}}",
         "2", 0},
        {503, "", NULL, 0},
        {200, p1, NULL, 0},
        {0}});
    assert_non_null(s);
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_az_prices_stats st;
    struct tw_error err = {0};
    if (tw_az_prices_fetch(&rq, &items, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(items.n, 3);
    assert_int_equal(st.attempts, 3);
    assert_int_equal(sleeps.n, 2);
    assert_true(sleeps.ms[0] >= 2000); /* Retry-After: 2 */
    assert_true(sleeps.ms[1] > 0);
    tw_price_items_cleanup(&items);

    /* Always throttled: the API's own words end up in the message. */
    fs_script(s, (struct fs_reply[]){
                     {429,
                      "{\"Error\": {\"Code\": \"TooManyRequests\", \"Message\": \"Too many "
                      "requests.\"}}",
                      "1", 0},
                     {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, &st, &err), TW_EIO);
    if (!strstr(err.msg, "TooManyRequests: Too many requests."))
        fail_msg("%s", err.msg);
    assert_int_equal(items.n, 0);
    free(p1);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_api_errors(void **state)
{
    (void)state;
    size_t len;
    char *e1 = th_fixture("prices/real-error-odata.json", &len);
    char *e2 = th_fixture("prices/real-error-api-version.json", &len);
    struct fakesrv *s = fs_start((struct fs_reply[]){{400, e1, NULL, 0}, {0}});
    assert_non_null(s);
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EINVAL);
    if (!strstr(err.msg, "BadRequest: Invalid OData parameters supplied"))
        fail_msg("%s", err.msg);
    assert_int_equal(fs_requests(s), 1); /* a 400 is not retried */
    fs_script(s, (struct fs_reply[]){{400, e2, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "Unsupported API version"));
    /* The same body with a 200 is still an error. */
    fs_script(s, (struct fs_reply[]){{200, e2, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "Unsupported API version"));
    /* Not JSON. */
    fs_script(s, (struct fs_reply[]){{200, "<html>gateway</html>", NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "page 1"));
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_int_equal(items.n, 0);
    free(e1);
    free(e2);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_refused_links(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "{}", NULL, 0}, {0}});
    assert_non_null(s);
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    char link[512];

    /* Another host (another loopback address): refused, nothing kept. */
    snprintf(link, sizeof(link), "http://127.0.0.2:%u/api/retail/prices?$skip=100",
             (unsigned)s->port);
    char *p1 = page(100, "USD", link);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "not the configured endpoint"));
    assert_int_equal(fs_requests(s), 1);
    assert_int_equal(items.n, 0);
    free(p1);

    /* The real API's host, from a simulator: refused as well. */
    p1 = page(100, "USD", "https://prices.azure.com:443/api/retail/prices?$skip=100");
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPERM);
    assert_int_equal(fs_requests(s), 1);
    free(p1);

    /* A loop: page 2 links back to page 1 (the first URL). */
    char first[TW_PRICES_LINK_MAX];
    assert_int_equal(tw_az_prices_url(s->base, "eastus", "USD", first, sizeof(first), &err), TW_OK);
    snprintf(link, sizeof(link), "%s/api/retail/prices?$skip=100", s->base);
    p1 = page(100, "USD", link);
    char *p2 = page(100, "USD", first);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "loop"));
    assert_int_equal(fs_requests(s), 2);
    assert_int_equal(items.n, 0);
    free(p2);

    /* A page that links to itself, spelled with the explicit port. */
    snprintf(link, sizeof(link), "%s/api/retail/prices?$skip=100", s->base);
    p2 = page(100, "USD", link);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "loop"));
    free(p1);
    free(p2);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_currency_mismatch(void **state)
{
    (void)state;
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "{}", NULL, 0}, {0}});
    assert_non_null(s);
    char link[256];
    snprintf(link, sizeof(link), "%s/api/retail/prices?$skip=100", s->base);
    char *p1 = page(100, "USD", link);
    /* Page 2 in EUR: the S10 item says USD, so the envelope disagrees
     * with it; make a consistent EUR page instead. */
    char *p2 = page(0, "EUR", NULL);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, p2, NULL, 0}, {0}});
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "page 2 is in EUR but USD was asked for"));
    assert_int_equal(items.n, 0);
    free(p1);
    free(p2);
    /* Items in another currency than the one asked for, in a page
     * without BillingCurrency. */
    fs_script(s, (struct fs_reply[]){{200,
                                      "{\"Items\": [{\"currencyCode\": \"GBP\", \"retailPrice\": "
                                      "9.613436, \"armRegionName\": \"uksouth\", \"meterName\": "
                                      "\"P6 LRS Disk\", \"productName\": \"Premium SSD Managed "
                                      "Disks\", \"unitOfMeasure\": \"1/Month\", \"type\": "
                                      "\"Consumption\"}], \"NextPageLink\": null}",
                                      NULL, 0},
                                     {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "in GBP but USD was asked for"));
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

static void test_deadline(void **state)
{
    (void)state;
    char *p1 = page(1, "USD", NULL);
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, p1, NULL, 3000}, {0}});
    assert_non_null(s);
    struct logs l = {0};
    struct tw_az_prices_req rq = req(s->base, &l);
    rq.deadline_ms = 400;
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EIO);
    assert_int_equal(items.n, 0);
    free(p1);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

/* A failure's message keeps its cause whole and puts the URL last, cut
 * short with "..." when the two do not fit in a message. */
static void test_messages_url_last(void **state)
{
    (void)state;
    struct logs l = {0};
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    /* Refused by loopback-only mode before anything is sent: the first
     * URL (some 600 characters) used to fill the message before the cause. */
    struct tw_az_prices_req rq = req("http://10.0.0.1:1", &l);
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPERM);
    const char *get = strstr(err.msg, "; GET http://10.0.0.1:1/api/retail/prices?currencyCode=");
    if (!strstr(err.msg, "Retail Prices page 1: refused by loopback-only mode") || !get ||
        !strstr(err.msg, "TIERWISE_LOOPBACK_ONLY"))
        fail_msg("%s", err.msg);
    assert_true(strstr(err.msg, "TIERWISE_LOOPBACK_ONLY") < get);
    size_t n = strlen(err.msg);
    assert_true(n < sizeof(err.msg));
    assert_string_equal(err.msg + n - 3, "...");

    /* Page 2, behind a long link, does not parse: the parser's words come
     * before the URL, and the message ends in the link's cut end. */
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, "{}", NULL, 0}, {0}});
    assert_non_null(s);
    rq = req(s->base, &l);
    char link[880]; /* page() leaves about 900 bytes for the envelope */
    int o = snprintf(link, sizeof(link), "%s/api/retail/prices?$skip=100&pad=", s->base);
    memset(link + o, 'x', sizeof(link) - (size_t)o - 1);
    link[sizeof(link) - 1] = '\0';
    char *p1 = page(100, "USD", link);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, "<html>gateway</html>", NULL, 0},
                                     {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPARSE);
    const char *cause = strstr(err.msg, "not valid JSON");
    get = strstr(err.msg, "; GET http://127.0.0.1:");
    if (!strstr(err.msg, "Retail Prices page 2: ") || !cause || !get || cause > get)
        fail_msg("%s", err.msg);
    n = strlen(err.msg);
    assert_string_equal(err.msg + n - 6, "xxx...");

    /* A link off the endpoint: the cause, then the link, last. */
    snprintf(link, sizeof(link), "http://127.0.0.2:%u/api/retail/prices?$skip=100&pad=%0700d",
             (unsigned)s->port, 0);
    free(p1);
    p1 = page(100, "USD", link);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {0}});
    assert_int_equal(tw_az_prices_fetch(&rq, &items, NULL, &err), TW_EPERM);
    cause = strstr(err.msg, "not the configured endpoint");
    get = strstr(err.msg, "; NextPageLink http://127.0.0.2:");
    if (!cause || !get || cause > get || !strstr(err.msg, "a refresh never leaves it"))
        fail_msg("%s", err.msg);
    n = strlen(err.msg);
    assert_string_equal(err.msg + n - 3, "...");
    free(p1);
    tw_price_items_cleanup(&items);
    fs_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_link_ok),
        cmocka_unit_test(test_paging),
        cmocka_unit_test(test_skip_fallback),
        cmocka_unit_test(test_throttled_then_ok),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_refused_links),
        cmocka_unit_test(test_currency_mismatch),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_messages_url_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
