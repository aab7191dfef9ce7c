/* money.c - exact prices and amounts (see money.h for the scale and the
 * rule), and their decimal text: rounded to a currency, to N decimals,
 * and the hours an amount is for. */
#include "core/money.h"

#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

/* Up to 40 bytes of TEXT for a message, anything but printable ASCII as
 * '?', so a message stays valid UTF-8 whatever was read. */
static const char *shown(const char *s, size_t n, char out[48])
{
    size_t k = n > 40 ? 40 : n;
    for (size_t i = 0; i < k; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' ? s[i] : '?';
    if (n > k) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return out;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

enum tw_err tw_money_parse(const char *buf, size_t len, struct tw_money *out,
                           struct tw_error *err)
{
    out->micros = 0;
    char show[48];
    size_t i = 0;
    bool neg = false;
    if (i < len && buf[i] == '-') {
        neg = true;
        i++;
    }
    size_t int_start = i;
    if (i < len && buf[i] == '0')
        i++;
    else if (i < len && buf[i] >= '1' && buf[i] <= '9')
        while (i < len && is_digit(buf[i]))
            i++;
    else
        goto syntax;
    size_t int_end = i, frac_start = i, frac_end = i;
    if (i < len && buf[i] == '.') {
        frac_start = ++i;
        while (i < len && is_digit(buf[i]))
            i++;
        frac_end = i;
        if (frac_end == frac_start)
            goto syntax;
    }
    int64_t exp = 0;
    if (i < len && (buf[i] == 'e' || buf[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (buf[i] == '+' || buf[i] == '-'))
            eneg = buf[i++] == '-';
        if (i >= len || !is_digit(buf[i]))
            goto syntax;
        while (i < len && is_digit(buf[i])) {
            if (exp < 1000000000) /* saturates: far past any digit count that matters */
                exp = exp * 10 + (buf[i] - '0');
            i++;
        }
        if (eneg)
            exp = -exp;
    }
    if (i != len)
        goto syntax;

    /* Digit k of the integer and fraction digits together stands for
     * 10^(nint - 1 - k + exp) units, 10^(nint - 1 - k + exp + 6) millionths. */
    size_t nint = int_end - int_start, nfrac = frac_end - frac_start, nd = nint + nfrac;
#define DIGIT(k) ((k) < nint ? buf[int_start + (k)] : buf[frac_start + (k) - nint])
    size_t first = 0, last = nd;
    while (first < nd && DIGIT(first) == '0')
        first++;
    if (first == nd)
        return TW_OK; /* zero, however written */
    while (DIGIT(last - 1) == '0')
        last--;
    int64_t p_first = (int64_t)nint - 1 - (int64_t)first + exp + TW_MONEY_DECIMALS;
    int64_t p_last = (int64_t)nint - (int64_t)last + exp + TW_MONEY_DECIMALS;
    if (p_last < 0)
        return tw_error_set(err, TW_ERANGE,
                            "\"%s\" has %lld decimal places; money is held exactly to %d "
                            "(millionths) and is never rounded when read",
                            shown(buf, len, show), (long long)(TW_MONEY_DECIMALS - p_last),
                            TW_MONEY_DECIMALS);
    if (p_first > 18)
        goto range;
    uint64_t v = 0;
    for (size_t k = first; k < last; k++)
        v = v * 10 + (uint64_t)(DIGIT(k) - '0'); /* at most 19 digits: fits */
#undef DIGIT
    for (int64_t k = 0; k < p_last; k++) {
        if (v > UINT64_MAX / 10)
            goto range;
        v *= 10;
    }
    if (v > (uint64_t)INT64_MAX)
        goto range;
    out->micros = neg ? -(int64_t)v : (int64_t)v;
    return TW_OK;
syntax:
    return tw_error_set(err, TW_EPARSE, "\"%s\" is not a decimal number", shown(buf, len, show));
range:
    return tw_error_set(err, TW_ERANGE,
                        "\"%s\" is beyond the range of money (+-9223372036854.775807)",
                        shown(buf, len, show));
}

static enum tw_err overflow(struct tw_error *err, const char *what)
{
    return tw_error_set(err, TW_ERANGE, "%s overflows the range of money (+-9223372036854.775807)",
                        what);
}

enum tw_err tw_money_add(struct tw_money a, struct tw_money b, struct tw_money *out,
                         struct tw_error *err)
{
    int64_t r;
    if (__builtin_add_overflow(a.micros, b.micros, &r))
        return overflow(err, "a sum");
    out->micros = r;
    return TW_OK;
}

enum tw_err tw_money_sub(struct tw_money a, struct tw_money b, struct tw_money *out,
                         struct tw_error *err)
{
    int64_t r;
    if (__builtin_sub_overflow(a.micros, b.micros, &r))
        return overflow(err, "a difference");
    out->micros = r;
    return TW_OK;
}

enum tw_err tw_money_mul(struct tw_money a, int64_t k, struct tw_money *out, struct tw_error *err)
{
    int64_t r;
    if (__builtin_mul_overflow(a.micros, k, &r))
        return overflow(err, "a product");
    out->micros = r;
    return TW_OK;
}

int tw_money_cmp(struct tw_money a, struct tw_money b)
{
    return (a.micros > b.micros) - (a.micros < b.micros);
}

double tw_money_to_double(struct tw_money m)
{
    /* Both operands exact below 2^53, so IEEE division gives the double
     * nearest the decimal: the one strtod makes of the same text. */
    return (double)m.micros / (double)TW_MONEY_SCALE;
}

static u128 uabs128(tw_i128 x)
{
    return x < 0 ? (u128)0 - (u128)x : (u128)x;
}

/* Writes the decimal digits of V into the end of BUF; returns the first. */
static char *udigits(u128 v, char *end)
{
    do {
        *--end = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    return end;
}

/* "[-]INT[.FRAC]" of MICROS with exactly DECIMALS (0-6) decimals, or the
 * fewest that show it exactly when DECIMALS is -1. */
static char *write_micros(int64_t micros, int decimals, char *buf, size_t cap)
{
    u128 u = uabs128(micros);
    uint64_t whole = (uint64_t)(u / TW_MONEY_SCALE), frac = (uint64_t)(u % TW_MONEY_SCALE);
    char tmp[TW_MONEY_TEXT_MAX], *end = tmp + sizeof(tmp);
    *--end = '\0';
    int places = decimals;
    if (places < 0) {
        places = TW_MONEY_DECIMALS;
        while (places > 0 && frac % 10 == 0) {
            frac /= 10;
            places--;
        }
    } else {
        for (int k = places; k < TW_MONEY_DECIMALS; k++)
            frac /= 10; /* the caller rounded: these digits are zero */
    }
    for (int k = 0; k < places; k++) {
        *--end = (char)('0' + (int)(frac % 10));
        frac /= 10;
    }
    if (places > 0)
        *--end = '.';
    end = udigits(whole, end);
    if (micros < 0)
        *--end = '-';
    if (cap)
        snprintf(buf, cap, "%s", end);
    return buf;
}

char *tw_money_text(struct tw_money m, char *buf, size_t cap)
{
    return write_micros(m.micros, -1, buf, cap);
}

/* ---- unrounded amounts ------------------------------------------------ */

static u128 gcd128(u128 a, u128 b)
{
    while (b) {
        u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void reduce(struct tw_amount *a)
{
    u128 g = gcd128(uabs128(a->num), (u128)a->den);
    if (g > 1) {
        a->num /= (tw_i128)g;
        a->den = (int64_t)((u128)a->den / g);
    }
}

struct tw_amount tw_amount_of(struct tw_money m)
{
    struct tw_amount a = {m.micros, 1};
    return a;
}

enum tw_err tw_amount_scale(struct tw_amount a, int64_t num, int64_t den, struct tw_amount *out,
                            struct tw_error *err)
{
    if (den <= 0 || a.den <= 0)
        return tw_error_set(err, TW_EINVAL, "a ratio needs a denominator above 0, not %lld",
                            (long long)den);
    /* Cross-reduce first so the products stay as small as they can. */
    u128 g1 = gcd128(uabs128(a.num), (u128)den), g2 = gcd128(uabs128(num), (u128)a.den);
    if (!g1)
        g1 = 1;
    if (!g2)
        g2 = 1;
    tw_i128 n1 = a.num / (tw_i128)g1, n2 = (tw_i128)num / (tw_i128)g2;
    int64_t d1 = (int64_t)((u128)a.den / g2), d2 = (int64_t)((u128)den / g1);
    struct tw_amount r;
    if (__builtin_mul_overflow(n1, n2, &r.num) || __builtin_mul_overflow(d1, d2, &r.den))
        return overflow(err, "a share of an amount");
    reduce(&r);
    *out = r;
    return TW_OK;
}

enum tw_err tw_money_ratio(struct tw_money m, int64_t num, int64_t den, struct tw_amount *out,
                           struct tw_error *err)
{
    return tw_amount_scale(tw_amount_of(m), num, den, out, err);
}

/* A + B, or A - B when SUB, over their least common denominator. */
static enum tw_err amount_add_sub(struct tw_amount a, struct tw_amount b, bool sub,
                                  struct tw_amount *out, struct tw_error *err)
{
    if (a.den <= 0 || b.den <= 0)
        return tw_error_set(err, TW_EINVAL, "an amount needs a denominator above 0");
    int64_t g = (int64_t)gcd128((u128)a.den, (u128)b.den);
    int64_t l;
    tw_i128 x, y;
    struct tw_amount r;
    if (__builtin_mul_overflow(a.den / g, b.den, &l) ||
        __builtin_mul_overflow(a.num, (tw_i128)(l / a.den), &x) ||
        __builtin_mul_overflow(b.num, (tw_i128)(l / b.den), &y) ||
        (sub ? __builtin_sub_overflow(x, y, &r.num) : __builtin_add_overflow(x, y, &r.num)))
        return overflow(err, sub ? "a difference" : "a sum");
    r.den = l;
    reduce(&r);
    *out = r;
    return TW_OK;
}

enum tw_err tw_amount_add(struct tw_amount a, struct tw_amount b, struct tw_amount *out,
                          struct tw_error *err)
{
    return amount_add_sub(a, b, false, out, err);
}

enum tw_err tw_amount_sub(struct tw_amount a, struct tw_amount b, struct tw_amount *out,
                          struct tw_error *err)
{
    return amount_add_sub(a, b, true, out, err);
}

/* ---- presentation ------------------------------------------------------ */

int tw_currency_decimals(const char *currency)
{
    /* ISO 4217 minor units of the Retail Prices API's currencies. */
    static const struct {
        char code[4];
        int decimals;
    } t[] = {{"USD", 2}, {"AUD", 2}, {"BRL", 2}, {"CAD", 2}, {"CHF", 2}, {"CNY", 2},
             {"DKK", 2}, {"EUR", 2}, {"GBP", 2}, {"INR", 2}, {"JPY", 0}, {"KRW", 0},
             {"NOK", 2}, {"NZD", 2}, {"RUB", 2}, {"SEK", 2}, {"TWD", 2}};
    for (size_t i = 0; currency && i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(currency, t[i].code) == 0)
            return t[i].decimals;
    return -1;
}

enum tw_err tw_amount_round(struct tw_amount a, int decimals, struct tw_money *out,
                            struct tw_error *err)
{
    if (decimals < 0 || decimals > TW_MONEY_DECIMALS)
        return tw_error_set(err, TW_EINVAL, "money rounds to 0-%d decimals, not %d",
                            TW_MONEY_DECIMALS, decimals);
    if (a.den <= 0)
        return tw_error_set(err, TW_EINVAL, "an amount needs a denominator above 0");
    int64_t unit = 1;
    for (int k = decimals; k < TW_MONEY_DECIMALS; k++)
        unit *= 10;
    u128 d = (u128)a.den * (u128)unit; /* < 2^63 * 10^6: fits */
    u128 n = uabs128(a.num);
    u128 q = n / d, r = n % d;
    if (r >= d - r) /* r >= d/2: a half goes away from zero */
        q++;
    if (q > (u128)INT64_MAX / (u128)unit)
        return overflow(err, "a rounded amount");
    int64_t v = (int64_t)q * unit;
    out->micros = a.num < 0 ? -v : v;
    return TW_OK;
}

enum tw_err tw_money_round(struct tw_money m, int decimals, struct tw_money *out,
                           struct tw_error *err)
{
    return tw_amount_round(tw_amount_of(m), decimals, out, err);
}

enum tw_err tw_amount_format(struct tw_amount a, const char *currency, char *buf, size_t cap,
                             struct tw_error *err)
{
    if (cap)
        buf[0] = '\0';
    int d = tw_currency_decimals(currency);
    if (d < 0)
        return tw_error_set(err, TW_EINVAL, "\"%.8s\" is not a currency of the Retail Prices API",
                            currency ? currency : "");
    struct tw_money m;
    enum tw_err rc = tw_amount_round(a, d, &m, err);
    if (rc != TW_OK)
        return rc;
    write_micros(m.micros, d, buf, cap);
    return TW_OK;
}

enum tw_err tw_money_format(struct tw_money m, const char *currency, char *buf, size_t cap,
                            struct tw_error *err)
{
    return tw_amount_format(tw_amount_of(m), currency, buf, cap, err);
}

bool tw_amount_decimal(struct tw_amount a, int digits, char *buf, size_t cap)
{
    if (!buf)
        return false;
    if (cap)
        buf[0] = '\0';
    if (digits < 0 || digits > 18 || a.den <= 0)
        return false;
    /* |num| / (den * 10^6) units: the whole part, then each decimal by
     * long division (the remainder stays below the divisor, < 2^83), then
     * the next remainder decides the rounding. */
    u128 n = uabs128(a.num);
    u128 d = (u128)a.den * TW_MONEY_SCALE;
    u128 whole = n / d, r = n % d;
    char frac[19];
    for (int k = 0; k < digits; k++) {
        r *= 10;
        frac[k] = (char)('0' + (int)(r / d));
        r %= d;
    }
    if (r >= d - r) { /* at least half: away from zero */
        int k = digits - 1;
        for (; k >= 0 && frac[k] == '9'; k--)
            frac[k] = '0';
        if (k >= 0)
            frac[k]++;
        else
            whole++;
    }
    bool nonzero = whole != 0;
    for (int k = 0; k < digits; k++)
        nonzero |= frac[k] != '0';
    char tmp[64];
    char *p = udigits(whole, tmp + 40);
    if (a.num < 0 && nonzero)
        *--p = '-';
    size_t len = (size_t)(tmp + 40 - p);
    size_t need = len + (digits ? 1 + (size_t)digits : 0) + 1;
    if (need > cap)
        return false;
    memcpy(buf, p, len);
    if (digits) {
        buf[len] = '.';
        memcpy(buf + len + 1, frac, (size_t)digits);
    }
    buf[need - 1] = '\0';
    return true;
}

bool tw_hours_decimal(int64_t ns, char *buf, size_t cap)
{
    return tw_hours_decimal_wide(ns, buf, cap);
}

bool tw_hours_decimal_wide(tw_i128 ns, char *buf, size_t cap)
{
    if (!buf)
        return false;
    if (cap)
        buf[0] = '\0';
    /* Micro-hours, rounded half away from zero: 1 micro-hour is 3.6 ms. */
    u128 n = uabs128(ns);
    const u128 d = 3600000; /* ns in a micro-hour */
    u128 q = n / d, r = n % d;
    if (r >= d - r)
        q++;
    u128 whole = q / 1000000;
    unsigned frac = (unsigned)(q % 1000000);
    char tmp[48], fr[8];
    char *p = udigits(whole, tmp + 40);
    if (ns < 0 && q)
        *--p = '-';
    size_t len = (size_t)(tmp + 40 - p);
    int nf = 0;
    if (frac) {
        snprintf(fr, sizeof(fr), "%06u", frac);
        nf = 6;
        while (fr[nf - 1] == '0')
            nf--;
    }
    size_t need = len + (nf ? 1 + (size_t)nf : 0) + 1;
    if (need > cap)
        return false;
    memcpy(buf, p, len);
    if (nf) {
        buf[len] = '.';
        memcpy(buf + len + 1, fr, (size_t)nf);
    }
    buf[need - 1] = '\0';
    return true;
}
