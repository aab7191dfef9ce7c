/* test_sim_prices.c - the simulated Retail Prices API: the envelope,
 * paging by NextPageLink, the $filter subset, currencies, api-versions and
 * the API's own 400 bodies. */
#include "simtest.h"

#define PRICES "/api/retail/prices"

static json_t *items(const struct st_resp *r)
{
    return json_object_get(r->json, "Items");
}

static size_t count(struct tw_sim *sim, const char *query)
{
    struct st_resp r;
    char path[2048];
    snprintf(path, sizeof(path), PRICES "%s", query);
    st_request(sim, &r, "GET", path, NULL, NULL);
    if (r.status != 200)
        fail_msg("%s: %ld %s", path, r.status, r.body);
    size_t n = json_array_size(items(&r));
    assert_int_equal(json_integer_value(json_object_get(r.json, "Count")), n);
    st_free(&r);
    return n;
}

static void test_walk(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"prices_page_size\": 4}", NULL);
    char url[4096];
    snprintf(url, sizeof(url), "%s" PRICES "?api-version=2023-01-01-preview&$filter=%s",
             tw_sim_url(sim),
             "serviceName%20eq%20%27Storage%27%20or%20serviceName%20eq%20%27Virtual%20Machines%27");
    size_t total = 0, pages = 0;
    json_t *seen = json_object();
    for (;;) {
        struct st_resp r;
        st_request(sim, &r, "GET", url, NULL, NULL);
        assert_int_equal(r.status, 200);
        /* The envelope of the captures (retail-prices.md 2). */
        assert_string_equal(json_string_value(json_object_get(r.json, "BillingCurrency")), "USD");
        assert_string_equal(json_string_value(json_object_get(r.json, "CustomerEntityId")),
                            "Default");
        assert_string_equal(json_string_value(json_object_get(r.json, "CustomerEntityType")),
                            "Retail");
        size_t n = json_array_size(items(&r));
        assert_int_equal(json_integer_value(json_object_get(r.json, "Count")), n);
        for (size_t i = 0; i < n; i++) {
            char key[512];
            json_t *it = json_array_get(items(&r), i);
            snprintf(key, sizeof(key), "%s|%s|%s",
                     json_string_value(json_object_get(it, "armRegionName")),
                     json_string_value(json_object_get(it, "meterName")),
                     json_string_value(json_object_get(it, "unitOfMeasure")));
            assert_null(json_object_get(seen, key)); /* each item once */
            json_object_set_new(seen, key, json_true());
            assert_null(json_object_get(it, "_source"));
        }
        total += n;
        pages++;
        json_t *next = json_object_get(r.json, "NextPageLink");
        if (json_is_null(next)) {
            st_free(&r);
            break;
        }
        assert_int_equal(n, 4);
        const char *link = json_string_value(next);
        /* The link keeps the query, adds $skip, and stays on the simulator. */
        char prefix[256];
        snprintf(prefix, sizeof(prefix),
                 "%s" PRICES "?api-version=2023-01-01-preview&$filter=", tw_sim_url(sim));
        assert_int_equal(strncmp(link, prefix, strlen(prefix)), 0);
        assert_non_null(strstr(link, "serviceName%20eq%20%27Storage%27"));
        char skip[32];
        snprintf(skip, sizeof(skip), "&$skip=%zu", total);
        assert_non_null(strstr(link, skip));
        snprintf(url, sizeof(url), "%s", link);
        st_free(&r);
        assert_true(pages < 20);
    }
    /* 13 USD items in the example (the 2 GBP ones are not in USD). */
    assert_int_equal(total, 13);
    assert_int_equal(pages, 4);
    json_decref(seen);
    tw_sim_stop(sim);
}

static void test_filters(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    /* The captured P15 query returns the capacity and the Mount meters. */
    struct st_resp r;
    st_request(sim, &r, "GET",
               PRICES "?$filter=armRegionName+eq+%27eastus%27+and+currencyCode+eq+"
                      "%27USD%27+and+priceType+eq+%27Consumption%27+and+productName+eq+"
                      "%27Premium+SSD+Managed+Disks%27+and+serviceName+eq+%27Storage%27+"
                      "and+skuName+eq+%27P15+LRS%27",
               NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(items(&r)), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(items(&r), 0), "meterName")),
        "P15 LRS Disk");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(items(&r), 1), "meterName")),
        "P15 LRS Disk Mount");
    /* Prices print as written. */
    assert_non_null(strstr(r.body, "\"retailPrice\":38.012142,"));
    assert_non_null(strstr(r.body, "\"tierMinimumUnits\":0.0,"));
    st_free(&r);
    assert_int_equal(count(sim, "?$filter=contains(meterName,%27Operations%27)"), 2);
    assert_int_equal(count(sim, "?$filter=armRegionName%20eq%20%27eastus%27%20and%20(skuName%20eq"
                                "%20%27P10%20LRS%27%20or%20skuName%20eq%20%27E10%20LRS%27)"),
                     2);
    assert_int_equal(count(sim, "?$filter=endswith(meterName,%27Disk%20Mount%27)"), 1);
    /* Values ignore case before 2023-01-01-preview and respect it from it. */
    assert_int_equal(count(sim, "?$filter=skuName%20eq%20%27p10%20lrs%27"), 2);
    assert_int_equal(
        count(sim, "?api-version=2021-10-01-preview&$filter=skuName%20eq%20%27p10%20lrs%27"), 2);
    assert_int_equal(
        count(sim, "?api-version=2023-01-01-preview&$filter=skuName%20eq%20%27p10%20lrs%27"), 0);
    assert_int_equal(count(sim, "?$filter=priceType%20eq%20%27SavingsPlan%27"), 0);
    /* meterRegion='primary': the Operations meters are not primary. */
    assert_int_equal(
        count(sim, "?meterRegion=%27primary%27&$filter=contains(meterName,%27Operations%27)"), 0);
    /* $skip past the end: an empty last page. */
    assert_int_equal(count(sim, "?$skip=1000"), 0);
    tw_sim_stop(sim);
}

static void test_errors(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    static const struct {
        const char *query;
        const char *message;
    } bad[] = {
        {"?api-version=2023-01-01", "Unsupported API version"},
        {"?$filter=armRegionName%20eq%20%27eastus%27%20and%20armSkuName%20eq%20%27Standard_D2s_v3"
         "%27%20and%20priceType%20eq%20%27OnDemand%27",
         "Invalid OData parameters supplied"},
        {"?api-version=2023-01-01-preview&$filter=savingsPlan/any(t:%20t/"
         "term%20eq%20%271%20Year%27)",
         "Invalid OData parameters supplied"},
        {"?$filter=serviceName%20ne%20%27Storage%27", "Invalid OData parameters supplied"},
        {"?$skip=ten", "Invalid OData parameters supplied"},
        {"?currencyCode=%27XYZ%27", "Invalid OData parameters supplied"},
        {"?meterRegion=%27secondary%27", "Invalid OData parameters supplied"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct st_resp r;
        char path[1024];
        snprintf(path, sizeof(path), PRICES "%s", bad[i].query);
        st_request(sim, &r, "GET", path, NULL, NULL);
        /* The real bodies: PascalCase, not ARM's shape. */
        json_t *want =
            json_pack("{s:{s:s, s:s}}", "Error", "Code", "BadRequest", "Message", bad[i].message);
        if (r.status != 400 || !json_equal(r.json, want))
            fail_msg("%s: %ld %s", bad[i].query, r.status, r.body);
        json_decref(want);
        st_free(&r);
    }
    tw_sim_stop(sim);
}

static void test_currency(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_request(sim, &r, "GET", PRICES "?currencyCode=%27GBP%27", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(r.json, "BillingCurrency")), "GBP");
    assert_int_equal(json_array_size(items(&r)), 2);
    assert_non_null(strstr(r.body, "\"retailPrice\":9.613436,"));
    st_free(&r);
    /* No EUR items in the scenario: an empty answer, never a conversion. */
    st_request(sim, &r, "GET", PRICES "?currencyCode=EUR", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "BillingCurrency")), "EUR");
    assert_int_equal(json_array_size(items(&r)), 0);
    assert_int_equal(json_integer_value(json_object_get(r.json, "Count")), 0);
    assert_true(json_is_null(json_object_get(r.json, "NextPageLink")));
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_savings_plan(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_request(sim, &r, "GET", PRICES "?$filter=armSkuName%20eq%20%27Standard_B16als_v2%27", NULL,
               NULL);
    assert_int_equal(json_array_size(items(&r)), 1);
    assert_null(json_object_get(json_array_get(items(&r), 0), "savingsPlan"));
    st_free(&r);
    st_request(sim, &r, "GET",
               PRICES "?api-version=2023-01-01-preview&$filter=armSkuName%20eq%20"
                      "%27Standard_B16als_v2%27",
               NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(json_array_get(items(&r), 0), "savingsPlan")),
                     2);
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_no_next_link(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"prices_page_size\": 4}", NULL);
    struct st_resp r;
    st_request(sim, &r, "POST", "/_sim/faults", NULL,
               "{\"kind\": \"no-next-link\", \"path\": \"/api/retail/prices\", \"count\": 1}");
    st_free(&r);
    /* A full page without a link (the 2023-03-10 incident): a client must
     * go on with $skip itself. */
    st_request(sim, &r, "GET", PRICES, NULL, NULL);
    assert_int_equal(json_array_size(items(&r)), 4);
    assert_true(json_is_null(json_object_get(r.json, "NextPageLink")));
    st_free(&r);
    st_request(sim, &r, "GET", PRICES "?$skip=4", NULL, NULL);
    assert_int_equal(json_array_size(items(&r)), 4);
    assert_true(json_is_string(json_object_get(r.json, "NextPageLink")));
    st_free(&r);
    tw_sim_stop(sim);
}

/* Every item served carries isPrimaryMeterRegion and armSkuName, those of
 * the example scenario that lack them filled the live API's way. */
static void test_primary_and_arm_sku(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start("{\"prices_page_size\": 1000}", NULL);
    struct st_resp r;
    st_request(sim, &r, "GET", PRICES, NULL, NULL);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(items(&r)), p10 = 0;
    assert_int_equal(n, 13); /* the USD ones */
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_array_get(items(&r), i);
        assert_true(json_is_boolean(json_object_get(it, "isPrimaryMeterRegion")));
        assert_true(json_is_string(json_object_get(it, "armSkuName")));
        if (strcmp(json_string_value(json_object_get(it, "skuName")), "P10 LRS") == 0) {
            assert_string_equal(json_string_value(json_object_get(it, "armSkuName")),
                                "Premium_SSD_Managed_Disk_P10");
            p10++;
        }
    }
    assert_true(p10 >= 2);
    st_free(&r);
    /* meterRegion='primary' keeps the filled ones too, but no Operations
     * meter. */
    size_t primary = count(sim, "?meterRegion=%27primary%27");
    assert_true(primary > 0 && primary < n);
    assert_int_equal(
        count(sim, "?meterRegion=%27primary%27&$filter=contains(meterName,%27Operations%27)"), 0);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_currency),
        cmocka_unit_test(test_savings_plan),
        cmocka_unit_test(test_no_next_link),
        cmocka_unit_test(test_primary_and_arm_sku),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
