/* test_jsonread.c - the one-pass JSON reader shared by the prices page and
 * report parsers: numbers, strings, repeated keys, depth, positions. */
#include "testhelp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonread.h"

/* Validates the whole of S with FLAGS; the reader's code. */
static enum tw_err check(const char *s, unsigned flags, int depth, struct tw_error *err)
{
    struct tw_jr r;
    tw_jr_init(&r, s, strlen(s), "the test", flags, depth, err);
    if (tw_jr_skip(&r))
        tw_jr_finish(&r);
    tw_jr_done(&r);
    return r.rc;
}

static void test_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool is_int;
        int64_t i;
    } ints[] = {
        {"0", true, 0},
        {"-0", true, 0},
        {"9223372036854775807", true, INT64_MAX},
        {"-9223372036854775808", true, INT64_MIN},
        {"1.0", false, 0},
        {"1e2", false, 0},
    };
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
        struct tw_jr r;
        struct tw_jr_num n;
        tw_jr_init(&r, ints[k].text, strlen(ints[k].text), "x", TW_JR_STRICT, 8, NULL);
        assert_true(tw_jr_number(&r, &n));
        assert_int_equal(n.is_int, ints[k].is_int);
        if (n.is_int)
            assert_true(n.i == ints[k].i);
        tw_jr_done(&r);
    }
    /* Every double equals strtod's, on the fast path and off it. */
    static const char *const reals[] = {
        "0.1",        "-0.0",          "1e22",       "1e-22",          "123456789012345",
        "0.000123",   "3.141592653589793", "1e23",   "2.2250738585072014e-308", "1e-400",
        "512.34567890123456", "9007199254740993", "0.30000000000000004", "1E+5"};
    for (size_t k = 0; k < sizeof(reals) / sizeof(reals[0]); k++) {
        struct tw_jr r;
        struct tw_jr_num n;
        tw_jr_init(&r, reals[k], strlen(reals[k]), "x", TW_JR_STRICT, 8, NULL);
        assert_true(tw_jr_number(&r, &n));
        double want = strtod(reals[k], NULL);
        if (memcmp(&n.d, &want, sizeof(want)) != 0)
            fail_msg("%s: %.17g, strtod %.17g", reals[k], n.d, want);
        tw_jr_done(&r);
    }
    /* Out of range: refused when strict, as jansson does. */
    struct tw_error err = {0};
    assert_int_equal(check("[9223372036854775808]", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "outside"));
    assert_int_equal(check("[-9223372036854775809]", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_int_equal(check("[1e309]", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "too large"));
    assert_int_equal(check("[9223372036854775808, 1e309]", 0, 8, &err), TW_OK);
    static const char *const bad[] = {"[01]", "[-]", "[1.]", "[.5]", "[1e]", "[+1]", "[0x10]"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
        assert_int_equal(check(bad[k], 0, 8, &err), TW_EPARSE);
}

static void test_strings(void **state)
{
    (void)state;
    const char *s = "\"a\\u00e9\\ud83d\\ude00\\n\\/\"";
    struct tw_jr r;
    char out[16];
    size_t len;
    bool over;
    tw_jr_init(&r, s, strlen(s), "x", TW_JR_STRICT, 8, NULL);
    assert_true(tw_jr_string(&r, out, sizeof(out), &len, &over));
    assert_false(over);
    assert_string_equal(out, "a\xc3\xa9\xf0\x9f\x98\x80\n/");
    assert_int_equal(len, 9);
    tw_jr_done(&r);

    /* Too long for the buffer: "" and OVER, the length still told. */
    tw_jr_init(&r, s, strlen(s), "x", TW_JR_STRICT, 8, NULL);
    assert_true(tw_jr_string(&r, out, 9, &len, &over));
    assert_true(over);
    assert_string_equal(out, "");
    assert_int_equal(len, 9);
    tw_jr_done(&r);

    struct tw_error err = {0};
    static const char *const bad[] = {"[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\xc0\xaf\"]",
                                      "[\"\xed\xa0\x80\"]", "[\"a\tb\"]", "[\"\\x\"]",
                                      "[\"abc]"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
        assert_int_equal(check(bad[k], 0, 8, &err), TW_EPARSE);
    /* A NUL: refused when strict, "too long" otherwise. */
    assert_int_equal(check("[\"a\\u0000\"]", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_int_equal(check("[\"a\\u0000\"]", 0, 8, &err), TW_OK);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    struct tw_error err = {0};
    assert_int_equal(check("{\"a\":1,\"b\":{\"a\":2}}", TW_JR_STRICT, 8, &err), TW_OK);
    assert_int_equal(check("{\"a\":1,\"b\":2,\"a\":3}", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "duplicate key \"a\""));
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 14);
    /* Spelled differently, the same key. */
    assert_int_equal(check("{\"x\":{\"a\":1,\"\\u0061\":2}}", TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_int_equal(check("{\"x\":{\"a\":1,\"\\u0061\":2}}", 0, 8, &err), TW_OK);

    /* Objects with many keys (the hash index), nested in each other. */
    char *big = malloc(200000);
    size_t n = (size_t)sprintf(big, "{");
    for (int i = 0; i < 5000; i++)
        n += (size_t)sprintf(big + n, "\"k%d\":%s,", i, i == 100 ? "{\"k1\":1,\"k2\":2}" : "0");
    strcpy(big + n, "\"end\":0}");
    assert_int_equal(check(big, TW_JR_STRICT, 8, &err), TW_OK);
    strcpy(big + n, "\"k4321\":0}");
    assert_int_equal(check(big, TW_JR_STRICT, 8, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "k4321"));
    free(big);
}

static void test_depth_and_positions(void **state)
{
    (void)state;
    struct tw_error err = {0};
    assert_int_equal(check("[[[1]]]", 0, 3, &err), TW_OK);
    assert_int_equal(check("[[[[1]]]]", 0, 3, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "the test nests deeper than 3 levels at line 1, column 4"));
    assert_int_equal(check("{\n  \"a\": [1,\n  2,,]}", 0, 8, &err), TW_EPARSE);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 5);
    assert_non_null(strstr(err.msg, "the test is not valid JSON at line 3, column 5"));
    assert_int_equal(check("{} x", 0, 8, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "follows the end"));
    assert_int_equal(check("", 0, 8, &err), TW_EPARSE);

    /* Members, elements and a long key read whole. */
    const char *s = "{\"short\":[1,2,3],\"a-key-longer-than-the-buffer\":true}";
    struct tw_jr r;
    struct tw_jr_obj o = {0};
    char key[8];
    tw_jr_init(&r, s, strlen(s), "x", TW_JR_STRICT, 8, NULL);
    assert_true(tw_jr_member(&r, &o, key, sizeof(key)));
    assert_string_equal(key, "short");
    struct tw_jr_arr a = {0};
    while (tw_jr_element(&r, &a))
        assert_true(tw_jr_skip(&r));
    assert_int_equal(a.n, 3);
    assert_true(tw_jr_member(&r, &o, key, sizeof(key)));
    assert_true(o.key_over);
    assert_string_equal(key, "");
    char *whole = tw_jr_key_dup(&r, &o);
    assert_string_equal(whole, "a-key-longer-than-the-buffer");
    free(whole);
    bool b = false;
    assert_true(tw_jr_bool(&r, &b));
    assert_true(b);
    assert_false(tw_jr_member(&r, &o, key, sizeof(key)));
    assert_true(tw_jr_finish(&r));
    tw_jr_done(&r);

    char path[24];
    assert_string_equal(tw_jr_path_at(path, sizeof(path), "inventory", ".disks", 12),
                        "inventory.disks[12]");
    assert_string_equal(tw_jr_path(path, 8, "results", ".method"), "results");
    /* At the root a member is named by its key alone. */
    assert_string_equal(tw_jr_path_at(path, sizeof(path), "", ".disks", 0), "disks[0]");
    assert_string_equal(tw_jr_field(path, sizeof(path), "", "lun"), "lun");
    assert_string_equal(tw_jr_field(path, sizeof(path), "disks[0]", "lun"), "disks[0].lun");
}

/* Reads member "v" of S with GET; the message ("" when read). */
enum kind { K_STR, K_INT, K_INT_NULL, K_NUM, K_BOOL, K_OBJ };

static const char *get(const char *s, enum kind k, const char *path)
{
    static struct tw_error err;
    memset(&err, 0, sizeof(err));
    struct tw_jr r;
    tw_jr_init(&r, s, strlen(s), NULL, TW_JR_STRICT, 8, &err);
    struct tw_jr_obj o = {0};
    char key[8], str[4];
    int64_t i;
    double d;
    bool b;
    while (tw_jr_member(&r, &o, key, sizeof(key))) {
        bool ok = false;
        switch (k) {
        case K_STR: ok = tw_jr_get_str(&r, path, key, TW_JR_NONEMPTY, str, sizeof(str)); break;
        case K_INT: ok = tw_jr_get_int(&r, path, key, 1, 10, 0, &i); break;
        case K_INT_NULL: ok = tw_jr_get_int(&r, path, key, 1, 10, TW_JR_NULLABLE, &i); break;
        case K_NUM: ok = tw_jr_get_num(&r, path, key, 0, 1, &d); break;
        case K_BOOL: ok = tw_jr_get_bool(&r, path, key, &b); break;
        case K_OBJ: ok = tw_jr_want(&r, path, key, '{') && tw_jr_skip(&r); break;
        }
        if (!ok)
            break;
    }
    tw_jr_done(&r);
    return err.msg;
}

/* One wording for every typed member (core/jsonx.h). */
static void test_getters(void **state)
{
    (void)state;
    assert_string_equal(get("{\"v\": \"abc\"}", K_STR, "a"), "");
    assert_string_equal(get("{\"v\": \"abcd\"}", K_STR, "a"),
                        "a.v is too long (4 bytes, at most 3)");
    assert_string_equal(get("{\"v\": \"\"}", K_STR, ""), "v must not be empty");
    assert_string_equal(get("{\"v\": 1}", K_STR, "a[2]"), "a[2].v must be a string");
    assert_string_equal(get("{\"v\": 10}", K_INT, "a"), "");
    assert_string_equal(get("{\"v\": 11}", K_INT, "a"),
                        "a.v must be an integer from 1 to 10, got 11");
    assert_string_equal(get("{\"v\": 1.5}", K_INT, "a"), "a.v must be an integer from 1 to 10");
    assert_string_equal(get("{\"v\": \"3\"}", K_INT, ""), "v must be an integer from 1 to 10");
    assert_string_equal(get("{\"v\": null}", K_INT, ""), "v must be an integer from 1 to 10");
    assert_string_equal(get("{\"v\": null}", K_INT_NULL, ""), "");
    assert_string_equal(get("{\"v\": 0}", K_INT_NULL, ""),
                        "v must be an integer from 1 to 10 or null, got 0");
    assert_string_equal(get("{\"v\": 0.5}", K_NUM, "a"), "");
    assert_string_equal(get("{\"v\": 2}", K_NUM, "a"), "a.v must be a number from 0 to 1");
    assert_string_equal(get("{\"v\": false}", K_BOOL, "a"), "");
    assert_string_equal(get("{\"v\": \"true\"}", K_BOOL, "a"), "a.v must be a boolean");
    assert_string_equal(get("{\"v\": []}", K_OBJ, "a"), "a.v must be an object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_depth_and_positions),
        cmocka_unit_test(test_getters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
