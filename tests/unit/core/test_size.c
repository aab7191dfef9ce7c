/* test_size.c - sizes and durations as people write them. */
#include "testhelp.h"

#include <string.h>

#include "core/size.h"

static void test_sizes(void **state)
{
    (void)state;
    struct {
        const char *in;
        uint64_t want;
    } ok[] = {
        {"512", 512},         {"8k", 8192},          {"8K", 8192},
        {"8KiB", 8192},       {"1M", 1048576},       {"1MiB", 1048576},
        {"1.5G", 1610612736}, {"2t", 2199023255552ULL}, {"4KB", 4000},
        {"1MB", 1000000},     {"100b", 100},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 0;
        struct tw_error err = {0};
        if (tw_size_parse(ok[i].in, &v, &err) != TW_OK)
            fail_msg("%s: %s", ok[i].in, err.msg);
        assert_int_equal(v, ok[i].want);
    }
    const char *bad[] = {"", "k", "-1", "8x", "1e400", "99999999999T"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v;
        struct tw_error err = {0};
        assert_int_not_equal(tw_size_parse(bad[i], &v, &err), TW_OK);
        assert_true(strlen(err.msg) > 0);
    }
}

static void test_durations(void **state)
{
    (void)state;
    uint64_t ms;
    struct tw_error err;
    assert_int_equal(tw_duration_parse("30", &ms, &err), TW_OK);
    assert_int_equal(ms, 30000);
    assert_int_equal(tw_duration_parse("500ms", &ms, &err), TW_OK);
    assert_int_equal(ms, 500);
    assert_int_equal(tw_duration_parse("2m", &ms, &err), TW_OK);
    assert_int_equal(ms, 120000);
    assert_int_equal(tw_duration_parse("1d", &ms, &err), TW_OK);
    assert_int_equal(ms, 86400000);
    assert_int_equal(tw_duration_parse("1.5h", &ms, &err), TW_OK);
    assert_int_equal(ms, 5400000);
    assert_int_equal(tw_duration_parse("0.5s", &ms, &err), TW_OK);
    assert_int_equal(ms, 500);
    assert_int_equal(tw_duration_parse("soon", &ms, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "30s"));
}

static void test_format(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(tw_size_format(8192, b, sizeof(b)), "8 KiB");
    assert_string_equal(tw_size_format(1536, b, sizeof(b)), "1.5 KiB");
    assert_string_equal(tw_size_format(100, b, sizeof(b)), "100 B");
    assert_string_equal(tw_size_format(1ULL << 30, b, sizeof(b)), "1 GiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
