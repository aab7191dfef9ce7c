/* test_prices.c - price books without the network: an import stored and
 * shown back, the bundled snapshot when nothing is stored, the time of a
 * saved page's import, bad parameters. (Refreshes from a fake Retail
 * Prices endpoint are tested in tests/unit/server/test_prices.c, where
 * an HTTP server can be linked.) */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/prices.h"
#include "th_store.h"

static void test_import_show_load(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    th_store_location(dir, "p.db", path, sizeof(path));
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(path, &st, &err), TW_OK);

    /* Nothing stored: the snapshot, and it says so. */
    struct tw_pricebook *b = NULL;
    assert_int_equal(tw_svc_prices_load(st, "WestEurope", "usd", &b, &err), TW_OK);
    assert_non_null(strstr(b->source, "snapshot"));
    tw_pricebook_free(b);

    size_t len;
    char *doc = th_fixture("prices/real-p10-uksouth-gbp.json", &len);
    struct tw_svc_refresh_result res;
    assert_int_equal(tw_svc_prices_import(st, doc, len, "p10.json", &res, &err), TW_OK);
    free(doc);
    assert_int_equal(res.books, 1);
    assert_string_equal(res.source, "import p10.json");
    /* A saved page has no time of its own: the import's stands for it. */
    assert_int_equal(strlen(res.fetched_at), 20);

    json_t *j = NULL;
    assert_int_equal(tw_svc_prices_show(st, "uksouth", "GBP", "P10", &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "source")), "import p10.json");
    assert_string_equal(json_string_value(json_object_get(j, "fetched_at")), res.fetched_at);
    json_decref(j);
    assert_int_equal(tw_svc_prices_show(st, "uksouth", "GBP", "E80", &j, &err), TW_ENOENT);
    assert_int_equal(tw_svc_prices_show(st, "uk south", "GBP", NULL, &j, &err), TW_EINVAL);
    assert_int_equal(tw_svc_prices_import(st, "[1]", 3, "bad.json", &res, &err), TW_EPARSE);

    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
}

/* FIXTURE with its "NextPageLink": null replaced by LINK (malloc'd). */
static char *with_link(const char *fixture, const char *link, size_t *len)
{
    size_t n;
    char *doc = th_fixture(fixture, &n);
    const char *at = strstr(doc, "\"NextPageLink\": null");
    assert_non_null(at);
    size_t head = (size_t)(at - doc), cap = n + strlen(link) + 64;
    char *out = malloc(cap);
    assert_non_null(out);
    *len = (size_t)snprintf(out, cap, "%.*s\"NextPageLink\": \"%s\"%s", (int)head, doc, link,
                            at + strlen("\"NextPageLink\": null"));
    free(doc);
    return out;
}

/* One saved page of a multi-page answer would replace a whole book with a
 * part: refused unless asked for, and then marked partial. */
static void test_import_one_page_of_many(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    th_store_location(dir, "p.db", path, sizeof(path));
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(path, &st, &err), TW_OK);
    size_t len;
    char *doc = th_fixture("prices/real-p10-uksouth-gbp.json", &len);
    struct tw_svc_refresh_result res;
    assert_int_equal(tw_svc_prices_import(st, doc, len, "whole.json", &res, &err), TW_OK);
    assert_false(res.partial);
    free(doc);

    doc = with_link("prices/real-p6-uksouth-gbp.json",
                    "https://prices.azure.com:443/api/retail/prices?$skip=1000", &len);
    enum tw_err rc = tw_svc_prices_import(st, doc, len, "page1.json", &res, &err);
    assert_int_equal(rc, TW_EINVAL);
    if (!strstr(err.msg, "page1.json is one page of a multi-page answer") ||
        !strstr(err.msg, "NextPageLink") || !strstr(err.msg, "--partial") ||
        !strstr(err.msg, "nothing imported"))
        fail_msg("%s", err.msg);
    /* The stored book is the whole one still. */
    json_t *j = NULL;
    assert_int_equal(tw_svc_prices_show(st, "uksouth", "GBP", NULL, &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "source")), "import whole.json");
    json_decref(j);

    /* Asked for: stored, and the book says it is partial. */
    rc = tw_svc_prices_import_opt(st, doc, len, "page1.json", true, &res, &err);
    assert_int_equal(rc, TW_OK);
    assert_true(res.partial);
    assert_string_equal(res.source, "import page1.json (partial)");
    assert_int_equal(tw_svc_prices_show(st, "uksouth", "GBP", NULL, &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "source")),
                        "import page1.json (partial)");
    json_decref(j);
    free(doc);
    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
}

/* A region typo is said to be the region's fault, not the tier's. */
static void test_region_without_book(void **state)
{
    (void)state;
    struct tw_error err = {0};
    json_t *j = NULL;
    enum tw_err rc = tw_svc_prices_show(NULL, "westeurpe", "USD", "P10", &j, &err);
    assert_int_equal(rc, TW_ENOENT);
    assert_null(j);
    if (!strstr(err.msg, "no price book for westeurpe USD") ||
        !strstr(err.msg, "westeurpe is not a known Azure region") ||
        !strstr(err.msg, "did you mean westeurope?") || strstr(err.msg, "P10"))
        fail_msg("%s", err.msg);
    /* Nothing near: no suggestion. */
    rc = tw_svc_prices_show(NULL, "marsnorth", "USD", "P10", &j, &err);
    assert_int_equal(rc, TW_ENOENT);
    if (!strstr(err.msg, "marsnorth is not a known Azure region") || strstr(err.msg, "mean"))
        fail_msg("%s", err.msg);
    /* A known region in a currency the snapshot lacks. */
    rc = tw_svc_prices_show(NULL, "westeurope", "EUR", "P10", &j, &err);
    assert_int_equal(rc, TW_ENOENT);
    if (!strstr(err.msg, "no price book for westeurope EUR") ||
        !strstr(err.msg, "snapshot has westeurope in USD") ||
        !strstr(err.msg, "prices refresh --region westeurope --currency EUR"))
        fail_msg("%s", err.msg);
    /* A tier the book of a known region lacks is still the tier's. */
    rc = tw_svc_prices_show(NULL, "westeurope", "USD", "Q99", &j, &err);
    assert_int_equal(rc, TW_ENOENT);
    assert_non_null(strstr(err.msg, "Q99"));
    /* Without a SKU an empty book is still a document (the dashboard
     * shows what each region has). */
    assert_int_equal(tw_svc_prices_show(NULL, "westeurpe", "USD", NULL, &j, &err), TW_OK);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_show_load),
        cmocka_unit_test(test_import_one_page_of_many),
        cmocka_unit_test(test_region_without_book),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
