/* test_time.c - instants, civil dates, RFC 3339 and durations. */
#include "testhelp.h"

#include <string.h>

#include "core/time.h"

static void test_days_round_trip(void **state)
{
    (void)state;
    struct {
        int64_t y;
        int m, d;
        int64_t days;
        int wday;
    } rows[] = {
        {1970, 1, 1, 0, 3},        {1969, 12, 31, -1, 2},     {2000, 2, 29, 11016, 1},
        {2026, 10, 25, 20751, 6},  {2026, 3, 29, 20541, 6},   {1600, 1, 1, -135140, 5},
        {0, 3, 1, -719468, 2},     {-1, 12, 31, -719529, 4},  {9999, 12, 31, 2932896, 4},
        {2100, 3, 1, 47541, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(tw_days_from_civil(rows[i].y, rows[i].m, rows[i].d), rows[i].days);
        int64_t y;
        int m, d;
        tw_civil_from_days(rows[i].days, &y, &m, &d);
        assert_int_equal(y, rows[i].y);
        assert_int_equal(m, rows[i].m);
        assert_int_equal(d, rows[i].d);
        assert_int_equal(tw_weekday_from_days(rows[i].days), rows[i].wday);
    }
    /* Every day of 800 years round-trips, and consecutive days are one apart. */
    int64_t prev = tw_days_from_civil(1599, 12, 31);
    for (int64_t y = 1600; y < 2400; y++) {
        for (int m = 1; m <= 12; m++) {
            for (int d = 1; d <= tw_days_in_month(y, m); d++) {
                int64_t n = tw_days_from_civil(y, m, d);
                assert_int_equal(n, prev + 1);
                prev = n;
            }
        }
    }
    assert_true(tw_is_leap(2000));
    assert_false(tw_is_leap(1900));
    assert_true(tw_is_leap(2024));
    assert_int_equal(tw_days_in_month(2026, 2), 28);
    assert_int_equal(tw_days_in_month(2028, 2), 29);
    assert_int_equal(tw_days_in_month(2028, 13), 0);
    assert_int_equal(tw_floor_div(-1, 7), -1);
    assert_int_equal(tw_floor_mod(-1, 7), 6);
    assert_int_equal(tw_floor_div(14, 7), 2);
}

static void test_civil_ns(void **state)
{
    (void)state;
    struct tw_civil c = {2026, 10, 25, 1, 30, 0, 5};
    int64_t ns;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    assert_int_equal(ns, INT64_C(1792891800) * TW_NS_PER_S + 5);
    struct tw_civil back;
    tw_civil_from_ns(ns, &back);
    assert_memory_equal(&back, &c, sizeof(c));
    /* Before 1970 the fraction still counts upwards. */
    tw_civil_from_ns(-1, &back);
    assert_int_equal(back.year, 1969);
    assert_int_equal(back.second, 59);
    assert_int_equal(back.nsec, 999999999);
    struct tw_civil bad = {2026, 2, 29, 0, 0, 0, 0};
    assert_int_equal(tw_civil_to_ns(&bad, &ns), TW_EINVAL);
    struct tw_civil far = {2263, 1, 1, 0, 0, 0, 0};
    assert_int_equal(tw_civil_to_ns(&far, &ns), TW_ERANGE);
    /* The two ends of the range. */
    struct tw_civil lo = {1677, 9, 21, 0, 12, 43, 145224192};
    assert_int_equal(tw_civil_to_ns(&lo, &ns), TW_OK);
    assert_true(ns == INT64_MIN);
    struct tw_civil hi = {2262, 4, 11, 23, 47, 16, 854775807};
    assert_int_equal(tw_civil_to_ns(&hi, &ns), TW_OK);
    assert_true(ns == INT64_MAX);
    hi.nsec++;
    assert_int_equal(tw_civil_to_ns(&hi, &ns), TW_ERANGE);
    int64_t out = 7;
    assert_false(tw_time_add(INT64_MAX, 1, &out));
    assert_false(tw_time_add(INT64_MIN, -1, &out));
    assert_int_equal(out, 7);
    assert_true(tw_time_add(5, -7, &out));
    assert_int_equal(out, -2);
    /* Milliseconds of the store: the ends of the range hold, past them is
     * refused and *NS left alone (1653 is before 1677). */
    int64_t msns = 7;
    assert_true(tw_ms_to_ns(INT64_MAX / TW_NS_PER_MS, &msns));
    assert_true(msns == INT64_MAX / TW_NS_PER_MS * TW_NS_PER_MS);
    assert_true(tw_ms_to_ns(INT64_MIN / TW_NS_PER_MS, &msns));
    assert_true(msns == INT64_MIN / TW_NS_PER_MS * TW_NS_PER_MS);
    msns = 7;
    assert_false(tw_ms_to_ns(INT64_MAX / TW_NS_PER_MS + 1, &msns));
    assert_false(tw_ms_to_ns(INT64_MIN / TW_NS_PER_MS - 1, &msns));
    assert_false(tw_ms_to_ns(-10035100800000, &msns)); /* 1652-01-01 */
    assert_int_equal(msns, 7);
    assert_true(tw_ms_to_ns(-1, &msns));
    assert_true(msns == -TW_NS_PER_MS);
}

static void test_rfc3339_parse(void **state)
{
    (void)state;
    struct {
        const char *in;
        int64_t ns;
    } ok[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"2026-11-29T10:00:00.5Z", INT64_C(1795946400500000000)},
        {"2026-11-29t11:00:00+01:00", INT64_C(1795946400) * TW_NS_PER_S},
        {"2026-11-29T09:30:00.123456789-00:30", INT64_C(1795946400123456789)},
        {"1969-12-31T23:59:59.999999999Z", -1},
        {"2016-12-31T23:59:60Z", INT64_C(1483228799) * TW_NS_PER_S},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t ns = 0;
        struct tw_error err = {0};
        if (tw_rfc3339_parse(ok[i].in, strlen(ok[i].in), &ns, &err) != TW_OK)
            fail_msg("%s: %s", ok[i].in, err.msg);
        assert_true(ns == ok[i].ns);
    }
    struct {
        const char *in;
        long col;
    } bad[] = {
        {"2026-11-29 10:00:00Z", 11}, {"2026-11-29T10:00:00", 20},
        {"2026-11-29T10:00:00+01", 20}, {"2026-11-29T10:00:00.Z", 21},
        {"2026-13-29T10:00:00Z", 6},  {"2026-02-29T10:00:00Z", 9},
        {"2026-11-29T24:00:00Z", 12}, {"2026-11-29T10:00:00Zjunk", 21},
        {"", 1},                      {"2026-11-29T10:00:00.1234567890Z", 31},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ns;
        struct tw_error err = {0};
        assert_int_equal(tw_rfc3339_parse(bad[i].in, strlen(bad[i].in), &ns, &err), TW_EPARSE);
        if (err.column != bad[i].col)
            fail_msg("%s: column %ld, wanted %ld (%s)", bad[i].in, err.column, bad[i].col,
                     err.msg);
        assert_non_null(strstr(err.msg, "expected"));
    }
    int64_t ns;
    struct tw_error err = {0};
    assert_int_equal(tw_rfc3339_parse("2300-01-01T00:00:00Z", 20, &ns, &err), TW_ERANGE);
    /* Not NUL-terminated: only LEN bytes are read. */
    assert_int_equal(tw_rfc3339_parse("1970-01-01T00:00:00Zxyz", 20, &ns, &err), TW_OK);
    assert_true(ns == 0);
    /* The millisecond form keeps its wider year range. */
    int64_t ms;
    assert_true(tw_rfc3339_ms("9999-12-31T23:59:59.999Z", &ms));
    assert_true(ms == INT64_C(253402300799999));
    assert_true(tw_rfc3339_ms("1969-12-31T23:59:59.5Z", &ms));
    assert_true(ms == -500);
    assert_false(tw_rfc3339_ms(NULL, &ms));
}

static void test_rfc3339_format(void **state)
{
    (void)state;
    char out[64];
    assert_true(tw_rfc3339_format(INT64_C(1796259723), out, sizeof(out)));
    assert_string_equal(out, "2026-12-03T01:02:03Z");
    assert_true(tw_rfc3339_format(-1, out, 21));
    assert_string_equal(out, "1969-12-31T23:59:59Z");
    assert_false(tw_rfc3339_format(0, out, 20));
    assert_false(tw_rfc3339_format(INT64_C(253402300800), out, sizeof(out)));
    int64_t t = INT64_C(1792891800) * TW_NS_PER_S + 123456789;
    assert_true(tw_rfc3339_format_ns(t, 3600, 3, out, sizeof(out)));
    assert_string_equal(out, "2026-10-25T02:30:00.123+01:00");
    assert_true(tw_rfc3339_format_ns(t, -12 * 3600 - 45 * 60, 0, out, sizeof(out)));
    assert_string_equal(out, "2026-10-24T12:45:00-12:45");
    assert_true(tw_rfc3339_format_ns(-1, 0, 9, out, sizeof(out)));
    assert_string_equal(out, "1969-12-31T23:59:59.999999999Z");
    assert_false(tw_rfc3339_format_ns(0, 30, 0, out, sizeof(out)));
    assert_false(tw_rfc3339_format_ns(0, 0, 0, out, 20));
    assert_string_equal(out, "");
    /* Formatting and parsing agree. */
    for (int64_t v = -TW_NS_PER_WEEK * 3000; v < TW_NS_PER_WEEK * 3000; v += 7777777777777777) {
        int64_t back;
        assert_true(tw_rfc3339_format_ns(v, 5 * 3600 + 30 * 60, 9, out, sizeof(out)));
        assert_int_equal(tw_rfc3339_parse(out, strlen(out), &back, NULL), TW_OK);
        assert_true(back == v);
    }
}

static void test_durations(void **state)
{
    (void)state;
    struct {
        int64_t ns;
        const char *want;
    } rows[] = {
        {49 * TW_NS_PER_HOUR, "49h"},
        {47 * TW_NS_PER_HOUR + 30 * TW_NS_PER_MIN, "47h30m"},
        {TW_NS_PER_MIN + TW_NS_PER_S / 2, "1m0.5s"},
        {-2 * TW_NS_PER_HOUR, "-2h"},
        {0, "0s"},
        {1, "0.000000001s"},
        {INT64_MIN, "-2562047h47m16.854775808s"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[40];
        assert_true(tw_duration_format_ns(rows[i].ns, out, sizeof(out)));
        assert_string_equal(out, rows[i].want);
    }
    char small[3];
    assert_false(tw_duration_format_ns(49 * TW_NS_PER_HOUR, small, sizeof(small)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_days_round_trip), cmocka_unit_test(test_civil_ns),
        cmocka_unit_test(test_rfc3339_parse),   cmocka_unit_test(test_rfc3339_format),
        cmocka_unit_test(test_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
