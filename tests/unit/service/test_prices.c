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

static void test_import_show_load(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/p.db", dir);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_show_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
