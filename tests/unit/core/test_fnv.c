/* test_fnv.c - FNV-1a 64 against the published test vectors, and the
 * helpers built on it. */
#include "testhelp.h"

#include <string.h>

#include "core/fnv.h"

static void test_vectors(void **state)
{
    (void)state;
    assert_true(tw_fnv_bytes(TW_FNV_START, "", 0) == 0xcbf29ce484222325ULL);
    assert_true(tw_fnv_bytes(TW_FNV_START, "a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(tw_fnv_bytes(TW_FNV_START, "foobar", 6) == 0x85944171f73967e8ULL);
    /* Text with its NUL: "ab" then "c" is not "a" then "bc". */
    assert_true(tw_fnv_text(tw_fnv_text(TW_FNV_START, "ab"), "c") !=
                tw_fnv_text(tw_fnv_text(TW_FNV_START, "a"), "bc"));
    assert_true(tw_fnv_text(TW_FNV_START, "a") == tw_fnv_bytes(TW_FNV_START, "a", 2));
    /* Integers least significant byte first, whatever the host. */
    const unsigned char le[8] = {0x01, 0x02, 0, 0, 0, 0, 0, 0};
    assert_true(tw_fnv_i64(TW_FNV_START, 0x0201) == tw_fnv_bytes(TW_FNV_START, le, 8));
    assert_true(tw_fnv_i64(TW_FNV_START, -1) != tw_fnv_i64(TW_FNV_START, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_vectors)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
