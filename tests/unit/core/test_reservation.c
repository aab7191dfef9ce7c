/*
 * test_reservation.c - the reservations file: entries, defaults, merging
 * of equal entries, each refusal with its entry, field, line and column.
 */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>

#include "core/reservation.h"

static enum tw_err parse(const char *s, struct tw_reservations *r, struct tw_error *err)
{
    memset(err, 0, sizeof(*err));
    return tw_reservations_parse(s, strlen(s), r, err);
}

static void test_file(void **state)
{
    (void)state;
    struct tw_reservations r;
    struct tw_error err;
    assert_int_equal(parse("{\"schema_version\": \"tierwise.reservations/1\",\n"
                           " \"reservations\": [\n"
                           "  {\"region\": \"westeurope\", \"tier\": \"P30\", \"count\": 4},\n"
                           "  {\"region\": \"WestEurope\", \"tier\": \"P30\", \"redundancy\": "
                           "\"lrs\", \"count\": 1},\n"
                           "  {\"region\": \"westeurope\", \"tier\": \"P30\", \"redundancy\": "
                           "\"ZRS\", \"count\": 2},\n"
                           "  {\"region\": \"eastus2\", \"tier\": \"P80\", \"count\": 1}]}",
                           &r, &err),
                     TW_OK);
    assert_int_equal(r.n, 3);
    assert_int_equal(tw_reservations_count(&r, "westeurope", "P30", TW_SKU_LRS), 5);
    assert_int_equal(tw_reservations_count(&r, "westeurope", "P30", TW_SKU_ZRS), 2);
    assert_int_equal(tw_reservations_count(&r, "eastus2", "P80", TW_SKU_LRS), 1);
    assert_int_equal(tw_reservations_count(&r, "eastus2", "P70", TW_SKU_LRS), 0);
    assert_int_equal(tw_reservations_count(&r, "northeurope", "P30", TW_SKU_LRS), 0);
    /* The entry itself: its index, whatever the region's case; -1 for none. */
    long i = tw_reservations_find(&r, "WESTEUROPE", "P30", TW_SKU_ZRS);
    assert_true(i >= 0 && i < (long)r.n);
    assert_int_equal(r.v[i].count, 2);
    assert_int_equal(r.v[i].redundancy, TW_SKU_ZRS);
    assert_int_equal(r.v[tw_reservations_find(&r, "eastus2", "P80", TW_SKU_LRS)].count, 1);
    assert_int_equal(tw_reservations_find(&r, "eastus2", "P70", TW_SKU_LRS), -1);
    assert_int_equal(tw_reservations_find(&r, "uksouth", "P30", TW_SKU_LRS), -1);
    assert_int_equal(tw_reservations_find(NULL, "westeurope", "P30", TW_SKU_LRS), -1);

    struct tw_reservations b;
    assert_int_equal(parse("{\"schema_version\": \"tierwise.reservations/1\", \"reservations\":"
                           " [{\"region\": \"eastus2\", \"tier\": \"P80\", \"count\": 6},"
                           " {\"region\": \"uksouth\", \"tier\": \"P40\", \"count\": 1}]}",
                           &b, &err),
                     TW_OK);
    assert_int_equal(tw_reservations_merge(&r, &b, &err), TW_OK);
    assert_int_equal(r.n, 4);
    assert_int_equal(tw_reservations_count(&r, "eastus2", "P80", TW_SKU_LRS), 7);
    assert_int_equal(tw_reservations_count(&r, "uksouth", "P40", TW_SKU_LRS), 1);
    tw_reservations_cleanup(&r);
    tw_reservations_cleanup(&b);

    assert_int_equal(parse("{\"schema_version\": \"tierwise.reservations/1\", \"reservations\":"
                           " []}",
                           &r, &err),
                     TW_OK);
    assert_int_equal(r.n, 0);
    tw_reservations_cleanup(&r);
}

static void test_refused(void **state)
{
    (void)state;
    struct {
        const char *text;
        const char *words;
        long line, column;
    } bad[] = {
        {"{\"schema_version\": \"tierwise.reservations/1\",\n \"reservations\": [\n"
         "  {\"region\": \"westeurope\", \"tier\": \"P10\", \"count\": 4}]}",
         "$.reservations[0].tier (line 3, column 36): must be a Premium SSD tier", 3, 36},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [{\"region\": "
         "\"west europe\", \"tier\": \"P30\", \"count\": 1}]}",
         "$.reservations[0].region", 1, 75},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [{\"region\": "
         "\"westeurope\", \"tier\": \"P30\", \"count\": 0}]}",
         "$.reservations[0].count", 1, 0},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [{\"region\": "
         "\"westeurope\", \"count\": 2}]}",
         "$.reservations[0].tier", 1, 64},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [{\"region\": "
         "\"westeurope\", \"tier\": \"P30\", \"count\": 1, \"term\": \"1y\"}]}",
         "unknown member \"term\"", 1, 0},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [{\"region\": "
         "\"westeurope\", \"tier\": \"P30\", \"redundancy\": \"GRS\", \"count\": 1}]}",
         "\"LRS\" or \"ZRS\"", 1, 0},
        {"{\"schema_version\": \"tierwise.reservations/2\", \"reservations\": []}",
         "$.schema_version", 1, 20},
        {"{\"reservations\": {}}", "must be an array", 1, 18},
        {"{\"schema_version\": \"tierwise.reservations/1\"}", "$.reservations", 1, 1},
        {"{\"schema_version\": \"tierwise.reservations/1\", \"reservations\": [}",
         "not valid JSON at line 1, column 64", 1, 64},
        {"[]", "must be an object", 1, 1},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_reservations r;
        struct tw_error err;
        enum tw_err rc = parse(bad[i].text, &r, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, bad[i].words) || err.line != bad[i].line ||
            (bad[i].column && err.column != bad[i].column))
            fail_msg("%zu: rc %d, %ld:%ld %s", i, rc, err.line, err.column, err.msg);
        assert_int_equal(r.n, 0);
        assert_null(r.v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
