/* test_money.c - exact money: reading the API's numbers, arithmetic,
 * rounding once at presentation, text. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/money.h"

static int64_t parse_ok(const char *s)
{
    struct tw_money m;
    struct tw_error err = {0};
    if (tw_money_parse(s, strlen(s), &m, &err) != TW_OK)
        fail_msg("%s: %s", s, err.msg);
    return m.micros;
}

static void test_parse_exact(void **state)
{
    (void)state;
    struct {
        const char *in;
        int64_t want;
    } ok[] = {
        {"0", 0},
        {"0.0", 0},
        {"-0", 0},
        {"0e999999999999", 0},
        {"16.16", 16160000},
        {"21.68", 21680000},
        {"38.012142", 38012142},
        {"0.0005", 500},
        {"0.000001", 1},
        {"1.1e-05", 11},
        {"1.6E-05", 16},
        {"3e-05", 30},
        {"9339.435", 9339435000},
        {"2457.6", 2457600000},
        {"1e3", 1000000000},
        {"1.5e+2", 150000000},
        {"0.50000000000000000000", 500000}, /* trailing zeros are exact */
        {"-2.5", -2500000},
        {"9223372036854.775807", INT64_MAX},
        {"-9223372036854.775807", -INT64_MAX},
        {"0.000000000e10", 0},
        {"12345678901234567890e-7", 1234567890123456789},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(parse_ok(ok[i].in), ok[i].want);
    }
    /* Every price of the bundled snapshot's kinds, read exactly: the
     * micros are the digits, not a double's neighbour. */
    assert_int_equal(parse_ok("0.1"), 100000);
    assert_int_equal(parse_ok("0.3"), 300000);
    assert_int_equal(parse_ok("18.563811"), 18563811);
}

static void test_parse_refused(void **state)
{
    (void)state;
    struct {
        const char *in;
        enum tw_err code;
        const char *says;
    } bad[] = {
        {"", TW_EPARSE, "not a decimal number"},
        {"-", TW_EPARSE, "not a decimal number"},
        {"+1", TW_EPARSE, "not a decimal number"},
        {"01", TW_EPARSE, "not a decimal number"},
        {"1.", TW_EPARSE, "not a decimal number"},
        {".5", TW_EPARSE, "not a decimal number"},
        {"1e", TW_EPARSE, "not a decimal number"},
        {"1e+", TW_EPARSE, "not a decimal number"},
        {"1 ", TW_EPARSE, "not a decimal number"},
        {"0x10", TW_EPARSE, "not a decimal number"},
        {"NaN", TW_EPARSE, "not a decimal number"},
        {"\"1\"", TW_EPARSE, "not a decimal number"},
        {"0.0000001", TW_ERANGE, "7 decimal places"},
        {"6.8e-06", TW_ERANGE, "7 decimal places"},
        {"9.5999999999999996", TW_ERANGE, "16 decimal places"},
        {"1e-7", TW_ERANGE, "7 decimal places"},
        {"9223372036854.775808", TW_ERANGE, "beyond the range"},
        {"-9223372036854.775808", TW_ERANGE, "beyond the range"},
        {"1e13", TW_ERANGE, "beyond the range"},
        {"1e999999999999999", TW_ERANGE, "beyond the range"},
        {"100000000000000000000000", TW_ERANGE, "beyond the range"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_money m = {42};
        struct tw_error err = {0};
        enum tw_err rc = tw_money_parse(bad[i].in, strlen(bad[i].in), &m, &err);
        if (rc != bad[i].code || !strstr(err.msg, bad[i].says))
            fail_msg("%s: %d %s", bad[i].in, rc, err.msg);
        assert_int_equal(m.micros, 0);
    }
    /* The length is the token's: bytes past it are not read. */
    struct tw_money m;
    assert_int_equal(tw_money_parse("21.68,", 5, &m, NULL), TW_OK);
    assert_int_equal(m.micros, 21680000);
    /* A message never carries raw bytes. */
    struct tw_error err = {0};
    assert_int_equal(tw_money_parse("1\xff\n", 3, &m, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "\"1??\""));
}

static void test_arithmetic(void **state)
{
    (void)state;
    struct tw_money r;
    struct tw_error err = {0};
    /* 0.1 + 0.2 is 0.3, exactly (as a double it is 0.30000000000000004). */
    assert_int_equal(tw_money_add(tw_money_micros(100000), tw_money_micros(200000), &r, &err),
                     TW_OK);
    assert_int_equal(r.micros, 300000);
    assert_int_equal(tw_money_sub(tw_money_micros(5), tw_money_micros(7), &r, &err), TW_OK);
    assert_int_equal(r.micros, -2);
    assert_int_equal(tw_money_mul(tw_money_micros(21680000), 10000, &r, &err), TW_OK);
    assert_int_equal(r.micros, 216800000000);
    /* Overflow is an error, and the result is left as it was. */
    r.micros = 7;
    assert_int_equal(tw_money_add(tw_money_micros(INT64_MAX), tw_money_micros(1), &r, &err),
                     TW_ERANGE);
    assert_int_equal(r.micros, 7);
    assert_non_null(strstr(err.msg, "overflows"));
    assert_int_equal(tw_money_sub(tw_money_micros(INT64_MIN), tw_money_micros(1), &r, &err),
                     TW_ERANGE);
    assert_int_equal(tw_money_mul(tw_money_micros(INT64_MAX / 2 + 1), 2, &r, &err), TW_ERANGE);
    assert_int_equal(tw_money_mul(tw_money_micros(-1), INT64_MIN, &r, &err), TW_ERANGE);
    assert_int_equal(tw_money_cmp(tw_money_micros(1), tw_money_micros(2)), -1);
    assert_int_equal(tw_money_cmp(tw_money_micros(2), tw_money_micros(2)), 0);
    assert_int_equal(tw_money_cmp(tw_money_micros(INT64_MAX), tw_money_micros(INT64_MIN)), 1);
}

static void test_ratio_unrounded(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_amount a, b, s;
    struct tw_money m;
    /* 100 hours of a 21.68 month: 21.68 * 100 / 730 = 2.969863..., kept
     * as a fraction. */
    assert_int_equal(tw_money_ratio(tw_money_micros(21680000), 100, 730, &a, &err), TW_OK);
    assert_true(a.num == 216800000 && a.den == 73);
    /* Seven such shares of 1/7 each, summed unrounded, are the whole:
     * rounding each first would lose the cents. */
    assert_int_equal(tw_money_ratio(tw_money_micros(10000000), 1, 3, &a, &err), TW_OK);
    s = a;
    assert_int_equal(tw_amount_add(s, a, &s, &err), TW_OK);
    assert_int_equal(tw_amount_add(s, a, &s, &err), TW_OK);
    assert_true(s.num == 10000000 && s.den == 1);
    assert_int_equal(tw_amount_round(s, 2, &m, &err), TW_OK);
    assert_int_equal(m.micros, 10000000);
    /* Different denominators: 1/730 + 1/8760 of a unit. */
    assert_int_equal(tw_money_ratio(tw_money_micros(1000000), 1, 730, &a, &err), TW_OK);
    assert_int_equal(tw_money_ratio(tw_money_micros(1000000), 1, 8760, &b, &err), TW_OK);
    assert_int_equal(tw_amount_add(a, b, &s, &err), TW_OK);
    assert_true(s.num == 325000 && s.den == 219); /* 13,000,000 / 8760 */
    /* Scaling back undoes the ratio exactly. */
    assert_int_equal(tw_amount_scale(a, 730, 1, &b, &err), TW_OK);
    assert_true(b.num == 1000000 && b.den == 1);
    assert_int_equal(tw_amount_scale(a, 1, 0, &b, &err), TW_EINVAL);
    assert_int_equal(tw_amount_scale(a, 1, -5, &b, &err), TW_EINVAL);
    /* Far past int64 in the middle is fine when it comes back. */
    assert_int_equal(tw_money_ratio(tw_money_micros(INT64_MAX), INT64_MAX, 1, &a, &err), TW_OK);
    assert_int_equal(tw_amount_scale(a, 1, INT64_MAX, &b, &err), TW_OK);
    assert_true(b.num == INT64_MAX && b.den == 1);
    assert_int_equal(tw_amount_round(a, 2, &m, &err), TW_ERANGE);
    /* ... and an error past __int128. */
    assert_int_equal(tw_amount_scale(a, INT64_MAX, 1, &b, &err), TW_ERANGE);
    assert_int_equal(tw_amount_scale(a, INT64_MAX, 1, &b, &err), TW_ERANGE);
    assert_int_equal(tw_money_ratio(tw_money_micros(1), 1, INT64_MAX, &a, &err), TW_OK);
    assert_int_equal(tw_money_ratio(tw_money_micros(1), 1, INT64_MAX - 1, &b, &err), TW_OK);
    assert_int_equal(tw_amount_add(a, b, &s, &err), TW_ERANGE);
}

static void test_amount_sub(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_amount a, b, d;
    /* 1/730 - 1/8760 of a unit, over the least common denominator and
     * reduced: 11,000,000 / 8760. */
    assert_int_equal(tw_money_ratio(tw_money_micros(1000000), 1, 730, &a, &err), TW_OK);
    assert_int_equal(tw_money_ratio(tw_money_micros(1000000), 1, 8760, &b, &err), TW_OK);
    assert_int_equal(tw_amount_sub(a, b, &d, &err), TW_OK);
    assert_true(d.num == 275000 && d.den == 219);
    /* The other way round is the negative; an amount less itself zero. */
    assert_int_equal(tw_amount_sub(b, a, &d, &err), TW_OK);
    assert_true(d.num == -275000 && d.den == 219);
    assert_int_equal(tw_amount_sub(a, a, &d, &err), TW_OK);
    assert_true(d.num == 0 && d.den == 1);
    /* Subtracting a sum's part gives the other part back exactly. */
    struct tw_amount s;
    assert_int_equal(tw_amount_add(a, b, &s, &err), TW_OK);
    assert_int_equal(tw_amount_sub(s, b, &d, &err), TW_OK);
    assert_true(d.num == a.num && d.den == a.den);
    /* Past __int128 is refused, not wrapped; a bad denominator too. */
    tw_i128 big = (tw_i128)1 << 126; /* 2 x big is one past the largest */
    struct tw_amount hi = {big, 1}, lo = {-big, 1};
    assert_int_equal(tw_amount_sub(hi, lo, &d, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "difference"));
    assert_int_equal(tw_amount_sub(a, (struct tw_amount){1, 0}, &d, &err), TW_EINVAL);
}

static int64_t round_to(int64_t micros, int decimals)
{
    struct tw_money m;
    struct tw_error err = {0};
    if (tw_money_round(tw_money_micros(micros), decimals, &m, &err) != TW_OK)
        fail_msg("%lld to %d: %s", (long long)micros, decimals, err.msg);
    return m.micros;
}

static void test_rounding_edges(void **state)
{
    (void)state;
    /* Half away from zero, on both sides. */
    assert_int_equal(round_to(2345000, 2), 2350000);
    assert_int_equal(round_to(-2345000, 2), -2350000);
    assert_int_equal(round_to(2344999, 2), 2340000);
    assert_int_equal(round_to(-2344999, 2), -2340000);
    assert_int_equal(round_to(2355000, 2), 2360000); /* not to even */
    assert_int_equal(round_to(2500000, 0), 3000000);
    assert_int_equal(round_to(-2500000, 0), -3000000);
    assert_int_equal(round_to(1500000, 0), 2000000);
    assert_int_equal(round_to(499999, 0), 0);
    assert_int_equal(round_to(-499999, 0), 0);
    assert_int_equal(round_to(5, 5), 10);
    assert_int_equal(round_to(123456, 6), 123456);
    assert_int_equal(round_to(INT64_MAX, 6), INT64_MAX);
    struct tw_money m;
    struct tw_error err = {0};
    assert_int_equal(tw_money_round(tw_money_micros(INT64_MAX), 0, &m, &err), TW_ERANGE);
    assert_int_equal(tw_money_round(tw_money_micros(1), 7, &m, &err), TW_EINVAL);
    assert_int_equal(tw_money_round(tw_money_micros(1), -1, &m, &err), TW_EINVAL);
    /* An exact third rounds once: 1/3 of 0.01 is 0.00 at 2 decimals,
     * 2/3 of 0.015 (0.01) stays. */
    struct tw_amount a;
    assert_int_equal(tw_money_ratio(tw_money_micros(15000), 2, 3, &a, &err), TW_OK);
    assert_int_equal(tw_amount_round(a, 2, &m, &err), TW_OK);
    assert_int_equal(m.micros, 10000);
    /* A fraction a hair under the half goes down, a hair over goes up. */
    assert_int_equal(tw_money_ratio(tw_money_micros(4999999), 1, 1000000, &a, &err), TW_OK);
    assert_int_equal(tw_amount_round(a, 6, &m, &err), TW_OK);
    assert_int_equal(m.micros, 5);
    assert_int_equal(tw_money_ratio(tw_money_micros(1), 1, 2, &a, &err), TW_OK);
    assert_int_equal(tw_amount_round(a, 6, &m, &err), TW_OK);
    assert_int_equal(m.micros, 1);
    assert_int_equal(tw_money_ratio(tw_money_micros(-1), 1, 2, &a, &err), TW_OK);
    assert_int_equal(tw_amount_round(a, 6, &m, &err), TW_OK);
    assert_int_equal(m.micros, -1);
    assert_int_equal(tw_money_ratio(tw_money_micros(1), 1, 3, &a, &err), TW_OK);
    assert_int_equal(tw_amount_round(a, 6, &m, &err), TW_OK);
    assert_int_equal(m.micros, 0);
}

static void test_currency(void **state)
{
    (void)state;
    assert_int_equal(tw_currency_decimals("USD"), 2);
    assert_int_equal(tw_currency_decimals("GBP"), 2);
    assert_int_equal(tw_currency_decimals("JPY"), 0);
    assert_int_equal(tw_currency_decimals("KRW"), 0);
    assert_int_equal(tw_currency_decimals("TWD"), 2);
    assert_int_equal(tw_currency_decimals("XXX"), -1);
    assert_int_equal(tw_currency_decimals("usd"), -1);
    assert_int_equal(tw_currency_decimals(NULL), -1);
    char b[TW_MONEY_TEXT_MAX];
    struct tw_error err = {0};
    assert_int_equal(tw_money_format(tw_money_micros(21680000), "USD", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "21.68");
    assert_int_equal(tw_money_format(tw_money_micros(9600000), "EUR", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "9.60");
    assert_int_equal(tw_money_format(tw_money_micros(38012142), "USD", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "38.01");
    assert_int_equal(tw_money_format(tw_money_micros(1234500000), "JPY", b, sizeof(b), &err),
                     TW_OK);
    assert_string_equal(b, "1235");
    assert_int_equal(tw_money_format(tw_money_micros(-5000), "USD", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "-0.01");
    assert_int_equal(tw_money_format(tw_money_micros(-4999), "USD", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "0.00");
    assert_int_equal(tw_money_format(tw_money_micros(INT64_MIN), "USD", b, sizeof(b), &err),
                     TW_ERANGE);
    assert_int_equal(tw_money_format(tw_money_micros(1), "XYZ", b, sizeof(b), &err), TW_EINVAL);
    assert_string_equal(b, "");
    struct tw_amount a;
    assert_int_equal(tw_money_ratio(tw_money_micros(21680000), 100, 730, &a, &err), TW_OK);
    assert_int_equal(tw_amount_format(a, "USD", b, sizeof(b), &err), TW_OK);
    assert_string_equal(b, "2.97");
}

static void test_text(void **state)
{
    (void)state;
    char b[TW_MONEY_TEXT_MAX];
    struct {
        int64_t micros;
        const char *want;
    } t[] = {
        {0, "0"},
        {21680000, "21.68"},
        {500, "0.0005"},
        {11, "0.000011"},
        {-2500000, "-2.5"},
        {1000000, "1"},
        {INT64_MAX, "9223372036854.775807"},
        {INT64_MIN, "-9223372036854.775808"},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        assert_string_equal(tw_money_text(tw_money_micros(t[i].micros), b, sizeof(b)), t[i].want);
    /* Text and parse are inverses. */
    for (int64_t v = -3000; v <= 3000; v += 7) {
        struct tw_money m;
        tw_money_text(tw_money_micros(v * 1237), b, sizeof(b));
        assert_int_equal(tw_money_parse(b, strlen(b), &m, NULL), TW_OK);
        assert_int_equal(m.micros, v * 1237);
    }
    /* A small buffer is cut, never overrun. */
    char s[4];
    assert_string_equal(tw_money_text(tw_money_micros(21680000), s, sizeof(s)), "21.");
    /* As a double: the one strtod makes of the same text, so %g and JSON
     * print what was read. */
    const char *texts[] = {"9.6", "21.68", "0.0005", "1.1e-05", "38.012142", "2457.6", "0.002"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct tw_money m;
        assert_int_equal(tw_money_parse(texts[i], strlen(texts[i]), &m, NULL), TW_OK);
        assert_true(tw_money_to_double(m) == strtod(texts[i], NULL));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_exact),   cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_arithmetic),    cmocka_unit_test(test_ratio_unrounded),
        cmocka_unit_test(test_rounding_edges), cmocka_unit_test(test_currency),
        cmocka_unit_test(test_text),          cmocka_unit_test(test_amount_sub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
