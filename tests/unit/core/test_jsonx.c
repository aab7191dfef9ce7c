/* test_jsonx.c - the jansson typed getters: one wording for every
 * document read as a tree (jsonx.h). */
#include "testhelp.h"

#include <math.h>
#include <string.h>

#include "core/jsonx.h"

static json_t *doc;

/* Member "v" of the object S. */
static const json_t *val(const char *s)
{
    json_decref(doc);
    doc = json_loads(s, JSON_ALLOW_NUL, NULL);
    assert_non_null(doc);
    return json_object_get(doc, "v");
}

static struct tw_error err;

static const char *msg(bool ok)
{
    return ok ? "" : err.msg;
}

static void test_strings(void **state)
{
    (void)state;
    char s[4] = "def";
    assert_string_equal(msg(tw_jx_str(val("{}"), "a", "v", 0, s, sizeof(s), &err)), "");
    assert_string_equal(s, "def"); /* absent: left as it was */
    assert_string_equal(msg(tw_jx_str(val("{}"), "a[1]", "v", TW_JX_REQUIRED, s, sizeof(s),
                                      &err)),
                        "a[1].v is missing");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":null}"), "", "v",
                                      TW_JX_REQUIRED | TW_JX_NULLABLE, s, sizeof(s), &err)),
                        "v is missing");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":1}"), "a.", "v", TW_JX_NULLABLE, s, sizeof(s),
                                      &err)),
                        "a.v must be a string or null");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":\"abcd\"}"), "a", "v", 0, s, sizeof(s), &err)),
                        "a.v is too long (4 bytes, at most 3)");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":\"a\\u0000\"}"), "a", "v", 0, s, sizeof(s),
                                      &err)),
                        "a.v holds a NUL");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":\"\"}"), "a", "v", TW_JX_NONEMPTY, s,
                                      sizeof(s), &err)),
                        "a.v must not be empty");
    assert_string_equal(msg(tw_jx_str(val("{\"v\":\"abc\"}"), "a", "v", 0, s, sizeof(s), &err)),
                        "");
    assert_string_equal(s, "abc");
}

static void test_numbers(void **state)
{
    (void)state;
    int64_t i = 7;
    assert_string_equal(msg(tw_jx_int(val("{\"v\":null}"), "a", "v", 1, 10, TW_JX_NULLABLE, &i,
                                      &err)),
                        "");
    assert_int_equal(i, 7);
    assert_string_equal(msg(tw_jx_int(val("{\"v\":11}"), "a", "v", 1, 10, 0, &i, &err)),
                        "a.v must be an integer from 1 to 10, got 11");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":2.5}"), "a", "v", 1, 10, TW_JX_NULLABLE, &i,
                                      &err)),
                        "a.v must be an integer from 1 to 10 or null");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":\"12\"}"), "a", "v", 1, 10, 0, &i, &err)),
                        "a.v must be an integer from 1 to 10");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":\"12\"}"), "a", "v", 1, 10, TW_JX_DECIMAL, &i,
                                      &err)),
                        "a.v must be an integer from 1 to 10, got 12");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":\"9x\"}"), "a", "v", 1, 10, TW_JX_DECIMAL, &i,
                                      &err)),
                        "a.v must be an integer from 1 to 10, got \"9x\"");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":\"\"}"), "a", "v", 1, 10,
                                      TW_JX_DECIMAL | TW_JX_REQUIRED, &i, &err)),
                        "a.v is missing");
    assert_string_equal(msg(tw_jx_int(val("{\"v\":\"9\"}"), "a", "v", 1, 10, TW_JX_DECIMAL, &i,
                                      &err)),
                        "");
    assert_int_equal(i, 9);
    double d = 0;
    assert_string_equal(msg(tw_jx_num(val("{\"v\":3}"), "a", "v", 0, 1, 0, &d, &err)),
                        "a.v must be a number from 0 to 1");
    assert_string_equal(msg(tw_jx_num(val("{\"v\":-1}"), "a", "v", 0, INFINITY, 0, &d, &err)),
                        "a.v must be a finite number >= 0");
    assert_string_equal(msg(tw_jx_num(val("{\"v\":1}"), "a", "v", 0, 1, 0, &d, &err)), "");
    assert_true(d == 1.0);
}

static void test_bools_and_containers(void **state)
{
    (void)state;
    bool b = false;
    assert_string_equal(msg(tw_jx_bool(val("{\"v\":1}"), "a", "v", 0, &b, &err)),
                        "a.v must be a boolean");
    assert_string_equal(msg(tw_jx_bool(val("{\"v\":\"maybe\"}"), "a", "v", TW_JX_TEXT_BOOL, &b,
                                       &err)),
                        "a.v must be \"true\" or \"false\"");
    assert_string_equal(msg(tw_jx_bool(val("{\"v\":\"TRUE\"}"), "a", "v", TW_JX_TEXT_BOOL, &b,
                                       &err)),
                        "");
    assert_true(b);
    bool ok;
    assert_null(tw_jx_want(val("{\"v\":[]}"), "a", "v", JSON_OBJECT, 0, &ok, &err));
    assert_false(ok);
    assert_string_equal(err.msg, "a.v must be an object");
    assert_null(tw_jx_want(val("{}"), "a", "v", JSON_ARRAY, TW_JX_REQUIRED, &ok, &err));
    assert_false(ok);
    assert_string_equal(err.msg, "a.v is missing");
    assert_null(tw_jx_want(val("{}"), "a", "v", JSON_ARRAY, 0, &ok, &err));
    assert_true(ok);
    assert_non_null(tw_jx_want(val("{\"v\":[]}"), "a", "v", JSON_ARRAY, 0, &ok, &err));
    assert_true(ok);
    json_decref(doc);
    doc = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_bools_and_containers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
