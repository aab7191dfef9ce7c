/*
 * test_policy_files.c - the policies shipped in policies/: every example
 * parses, names match their files, and policies/policy.schema.json is JSON
 * whose top-level members (and required ones) are the reader's.
 */
#include "testhelp.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"

static void test_examples(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/../../policies", TW_FIXTURES);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        if (k < 5 || strcmp(e->d_name + k - 5, ".json") != 0 ||
            strcmp(e->d_name, "policy.schema.json") == 0)
            continue;
        char rel[512];
        snprintf(rel, sizeof(rel), "../../policies/%s", e->d_name);
        size_t len;
        char *text = th_fixture(rel, &len);
        struct tw_policy p;
        struct tw_policy_diags dg;
        struct tw_error err = {0};
        if (tw_policy_parse(text, len, &p, &dg, &err) != TW_OK)
            fail_msg("policies/%s: %s", e->d_name, err.msg);
        /* The file is named after the policy. */
        assert_int_equal(strncmp(e->d_name, p.name, k - 5), 0);
        assert_int_equal(strlen(p.name), k - 5);
        assert_true(p.description[0] != '\0');
        tw_policy_cleanup(&p);
        free(text);
        n++;
    }
    closedir(d);
    assert_true(n >= 3);
}

static void test_schema(void **state)
{
    (void)state;
    size_t len;
    char *text = th_fixture("../../policies/policy.schema.json", &len);
    json_error_t je;
    json_t *s = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!s)
        fail_msg("policy.schema.json line %d: %s", je.line, je.text);
    assert_string_equal(json_string_value(json_object_get(s, "$schema")),
                        "https://json-schema.org/draft/2020-12/schema");
    assert_true(json_is_false(json_object_get(s, "additionalProperties")));
    json_t *props = json_object_get(s, "properties");
    assert_true(json_is_object(props));
    const char *const *names;
    size_t n = tw_policy_members(&names);
    assert_int_equal(json_object_size(props), n);
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(props, names[i]))
            fail_msg("the schema does not list \"%s\"", names[i]);
    /* What the reader requires (a policy with nothing but these parses;
     * without any one of them it does not). */
    json_t *req = json_object_get(s, "required");
    assert_int_equal(json_array_size(req), 4);
    const char *full = "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", "
                       "\"match\": {}, \"target\": \"none\"}";
    struct tw_policy p;
    assert_int_equal(tw_policy_parse(full, strlen(full), &p, NULL, NULL), TW_OK);
    tw_policy_cleanup(&p);
    size_t i;
    json_t *r;
    json_array_foreach(req, i, r) {
        const char *name = json_string_value(r);
        assert_non_null(name);
        json_t *doc = json_loads(full, 0, NULL);
        assert_int_equal(json_object_del(doc, name), 0);
        char *t = json_dumps(doc, 0);
        struct tw_policy_diags dg;
        assert_int_equal(tw_policy_parse(t, strlen(t), &p, &dg, NULL), TW_EPARSE);
        char want[64];
        snprintf(want, sizeof(want), "$.%s", name);
        assert_string_equal(dg.d[0].path, want);
        tw_policy_cleanup(&p);
        free(t);
        json_decref(doc);
    }
    json_decref(s);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
