/* test_inventory.c - the inventory's one reader: a bare inventory and a
 * report holding one, field paths from the root, and what a refusal
 * leaves behind. */
#include "testhelp.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/inventory.h"
#include "core/tier.h"

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

/* A tag by its key in any case: the first that matches, never a later one. */
static void test_tag_find(void **state)
{
    (void)state;
    static const struct tw_tag tags[] = {
        {"Env", "dev"}, {"SCHEDULE", "first"}, {"schedule", "second"}, {"team", "a"}};
    assert_ptr_equal(tw_tag_find(tags, 4, "schedule"), &tags[1]);
    assert_ptr_equal(tw_tag_find(tags, 4, "Schedule"), &tags[1]);
    assert_string_equal(tw_tag_find(tags, 4, "env")->value, "dev");
    assert_ptr_equal(tw_tag_find(tags, 4, "TEAM"), &tags[3]);
    assert_null(tw_tag_find(tags, 4, "owner"));
    assert_null(tw_tag_find(tags, 4, "sched"));
    assert_null(tw_tag_find(tags, 0, "env"));
    assert_null(tw_tag_find(NULL, 0, "env"));
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

static const struct tw_disk *disk_named(const struct tw_inventory *in, const char *name)
{
    for (size_t i = 0; i < in->n_disks; i++)
        if (strcmp(in->disks[i].name, name) == 0)
            return &in->disks[i];
    fail_msg("no disk %s", name);
    return NULL;
}

/* Rating fills the size tier, the tier in use and the figures; Azure's
 * tier is kept as the performance tier; JSON carries all of it back. */
static void test_rate(void **state)
{
    (void)state;
    struct tw_error err;
    static const char doc[] =
        "{" VM ", \"disks\": ["
        "{\"name\": \"p40\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
        "\"size_gib\": 2048},"
        "{\"name\": \"perf\", \"role\": \"data\", \"lun\": 1, \"sku\": \"Premium_LRS\", "
        "\"size_gib\": 1024, \"tier\": \"P40\"},"
        "{\"name\": \"e15\", \"role\": \"data\", \"lun\": 2, \"sku\": \"StandardSSD_LRS\", "
        "\"size_gib\": 200, \"tier\": null},"
        "{\"name\": \"v2\", \"role\": \"data\", \"lun\": 3, \"sku\": \"PremiumV2_LRS\", "
        "\"size_gib\": 512}]}";
    assert_int_equal(read_doc(doc, &err), TW_OK);
    /* As read: nothing rated, and the JSON says nothing new. */
    assert_int_equal(disk_named(&inv, "perf")->rating, TW_RATING_UNSET);
    json_t *v = tw_inventory_to_value(&inv);
    json_t *d1 = json_array_get(json_object_get(v, "disks"), 1);
    assert_null(json_object_get(d1, "size_tier"));
    assert_null(json_object_get(d1, "rated_iops"));
    assert_string_equal(json_string_value(json_object_get(d1, "tier")), "P40");
    json_decref(v);

    struct tw_tier_catalog cat = {0};
    assert_int_equal(tw_tier_catalog_builtin(&cat, &err), TW_OK);
    tw_inventory_rate(&inv, &cat);
    const struct tw_disk *d = disk_named(&inv, "p40");
    assert_int_equal(d->rating, TW_RATING_TIER);
    assert_string_equal(d->size_tier, "P40");
    assert_string_equal(d->tier, "P40");
    assert_string_equal(d->perf_tier, "");
    assert_int_equal(d->rated_iops, 7500);
    assert_true(d->rated_mbps == 250);
    d = disk_named(&inv, "perf");
    assert_string_equal(d->size_tier, "P30");
    assert_string_equal(d->perf_tier, "P40");
    assert_string_equal(d->tier, "P40");
    assert_int_equal(d->rated_iops, 7500);
    d = disk_named(&inv, "e15");
    assert_string_equal(d->tier, "E15");
    assert_int_equal(d->rated_iops, 500);
    assert_true(d->rated_mbps == 60);
    d = disk_named(&inv, "v2");
    assert_int_equal(d->rating, TW_RATING_PROVISIONED);
    assert_string_equal(d->tier, "");
    assert_string_equal(d->size_tier, "");
    assert_int_equal(d->rated_iops, 0);
    assert_true(d->rated_mbps == 0);
    assert_non_null(strstr(d->rated_why, "provisioned per disk"));

    /* Rating again changes nothing (the performance tier stays Azure's). */
    static struct tw_inventory again;
    memcpy(&again, &inv, sizeof(inv));
    tw_inventory_rate(&again, &cat);
    assert_memory_equal(&again, &inv, sizeof(inv));

    /* The JSON: every field, null where unknown, and it reads back whole. */
    v = tw_inventory_to_value(&inv);
    json_t *disks = json_object_get(v, "disks");
    d1 = json_array_get(disks, 1);
    assert_string_equal(json_string_value(json_object_get(d1, "tier")), "P40");
    assert_string_equal(json_string_value(json_object_get(d1, "size_tier")), "P30");
    assert_string_equal(json_string_value(json_object_get(d1, "performance_tier")), "P40");
    assert_string_equal(json_string_value(json_object_get(d1, "rating")), "tier");
    assert_int_equal(json_integer_value(json_object_get(d1, "rated_iops")), 7500);
    assert_true(json_number_value(json_object_get(d1, "rated_mbps")) == 250);
    assert_true(json_is_null(json_object_get(d1, "rated_why")));
    json_t *d3 = json_array_get(disks, 3);
    assert_true(json_is_null(json_object_get(d3, "tier")));
    assert_true(json_is_null(json_object_get(d3, "size_tier")));
    assert_true(json_is_null(json_object_get(d3, "rated_iops")));
    assert_true(json_is_null(json_object_get(d3, "rated_mbps")));
    assert_string_equal(json_string_value(json_object_get(d3, "rating")), "provisioned");
    assert_true(json_is_string(json_object_get(d3, "rated_why")));
    char *s = json_dumps(v, 0);
    json_decref(v);
    assert_non_null(s);
    static struct tw_inventory back;
    assert_int_equal(tw_inventory_from_json(s, strlen(s), &back, &err), TW_OK);
    free(s);
    assert_memory_equal(&back, &inv, sizeof(inv));
    /* ... and rated again from the JSON, it is the same. */
    tw_inventory_rate(&back, &cat);
    assert_memory_equal(&back, &inv, sizeof(inv));
    tw_tier_catalog_cleanup(&cat);
}

static void test_rating_messages(void **state)
{
    (void)state;
    static const struct {
        const char *field, *msg;
    } cases[] = {
        {"\"rating\": \"great\"", "disks[0].rating \"great\" is not tier, provisioned or none"},
        {"\"rating\": null", "disks[0].rating must be a string"},
        {"\"rated_iops\": 0", "disks[0].rated_iops must be an integer from 1"},
        {"\"rated_iops\": 1.5", "disks[0].rated_iops must be an integer"},
        {"\"rated_mbps\": \"60\"", "disks[0].rated_mbps must be a number"},
        {"\"rated_mbps\": 0", "disks[0].rated_mbps must be a number from 1"},
        {"\"size_tier\": 10", "disks[0].size_tier must be a string"},
        {"\"performance_tier\": \"P40P40P40P40P40P40\"", "disks[0].performance_tier"},
        {"\"rated_why\": []", "disks[0].rated_why must be a string"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "{" VM ", \"disks\": [{\"name\": \"d\", \"role\": \"data\", \"sku\": "
                 "\"Premium_LRS\", \"size_gib\": 128, %s}]}",
                 cases[i].field);
        struct tw_error err;
        assert_int_equal(read_doc(doc, &err), TW_EPARSE);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu: \"%s\" does not start with \"%s\"", i, err.msg, cases[i].msg);
        assert_int_equal(inv.n_disks, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tag_find),
        cmocka_unit_test(test_bare_and_in_report),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_rating_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
