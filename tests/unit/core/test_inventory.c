/* test_inventory.c - the inventory's one reader: a bare inventory and a
 * report holding one, field paths from the root, and what a refusal
 * leaves behind. */
#include "testhelp.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/inventory.h"

static struct tw_inventory inv; /* ~110 KiB: not on the stack */

#define VM "\"vm\": {\"name\": \"v\", \"location\": \"l\", \"vm_size\": \"S\", " \
           "\"tags\": {\"env\": \"prod\"}}"
#define DISK(lun) "{\"name\": \"d\", \"role\": \"data\", \"lun\": " lun \
                  ", \"sku\": \"Premium_LRS\", \"size_gib\": 128, \"tier\": null}"

static enum tw_err read_doc(const char *s, struct tw_error *err)
{
    memset(err, 0, sizeof(*err));
    return tw_inventory_from_json(s, strlen(s), &inv, err);
}

static void test_bare_and_in_report(void **state)
{
    (void)state;
    struct tw_error err;
    assert_int_equal(read_doc("{" VM ", \"disks\": [" DISK("3") "]}", &err), TW_OK);
    assert_int_equal(inv.n_disks, 1);
    assert_int_equal(inv.disks[0].lun, 3);
    assert_string_equal(inv.vm.tags[0].value, "prod");
    /* A report: its other members are not the inventory's, even when one
     * is named like an inventory member. */
    assert_int_equal(read_doc("{\"schema_version\": \"tierwise.report/1\", \"vm\": 5, "
                              "\"inventory\": {" VM ", \"disks\": [" DISK("null") "]}, "
                              "\"results\": []}",
                              &err),
                     TW_OK);
    assert_int_equal(inv.n_disks, 1);
    assert_int_equal(inv.disks[0].lun, -1);
}

static void test_messages(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *msg;
    } cases[] = {
        {"{" VM ", \"disks\": [" DISK("300") "]}",
         "disks[0].lun must be an integer from 0 to 255 or null, got 300"},
        {"{\"inventory\": {" VM ", \"disks\": [" DISK("\"0\"") "]}}",
         "inventory.disks[0].lun must be an integer from 0 to 255 or null"},
        {"{\"vm\": {\"name\": \"v\", \"location\": \"l\"}, \"disks\": []}",
         "vm.vm_size is missing"},
        {"{\"inventory\": {\"vm\": {\"name\": \"v\", \"location\": \"l\"}, \"disks\": []}}",
         "inventory.vm.vm_size is missing"},
        {"{" VM "}", "disks is missing"},
        {"{" VM ", \"disks\": {}}", "disks must be an array"},
        {"{\"inventory\": [], \"results\": []}", "inventory must be an object"},
        {"[]", "the inventory must be a JSON object"},
        {"\"x\"", "not valid JSON at line 1, column 1: an inventory must be a JSON object"},
        {"{\"vm\": {\"name\": 1}, \"disks\": []}", "vm.name must be a string"},
        {"{\"vm\": {\"name\": \"v\", \"tags\": {\"k\": 2}}}", "vm.tags.k must be a string"},
        {"{" VM ", \"disks\": [{\"name\": \"d\", \"role\": \"temp\", \"sku\": \"P\", "
         "\"size_gib\": 1}]}",
         "disks[0].role \"temp\" is neither os nor data"},
        /* The JSON itself: named as JSON, with the place, wherever the
         * first wrong field is. */
        {"{\"vm\": ", "not valid JSON at line 1"},
        {"{\"vm\": 5, \"disks\": [}", "not valid JSON at line 1, column 21"},
        {"{" VM ", \"disks\": [], \"disks\": []}", "has a duplicate key \"disks\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw_error err;
        assert_int_equal(read_doc(cases[i].doc, &err), TW_EPARSE);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu: \"%s\" does not start with \"%s\"", i, err.msg, cases[i].msg);
        /* Nothing half-read survives. */
        assert_int_equal(inv.n_disks, 0);
        assert_int_equal(inv.vm.n_tags, 0);
        assert_string_equal(inv.vm.name, "");
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    struct tw_error err;
    assert_int_equal(read_doc("{" VM ", \"disks\": [" DISK("3") ", " DISK("4") "]}", &err),
                     TW_OK);
    json_t *v = tw_inventory_to_value(&inv);
    char *s = json_dumps(v, 0);
    json_decref(v);
    assert_non_null(s);
    static struct tw_inventory back;
    assert_int_equal(tw_inventory_from_json(s, strlen(s), &back, &err), TW_OK);
    assert_memory_equal(&back, &inv, sizeof(inv));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bare_and_in_report),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
