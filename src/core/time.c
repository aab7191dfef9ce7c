/*
 * time.c - instants, civil dates, RFC 3339 and durations.
 *
 * The day-number conversions are the era-based algorithms (400-year eras
 * of 146,097 days) that need no tables and no floating point, and are
 * exact over the whole range used here.
 */
#include "core/time.h"

#include <stdio.h>
#include <string.h>

int64_t tw_floor_div(int64_t a, int64_t d)
{
    int64_t q = a / d;
    if ((a % d != 0) && ((a < 0) != (d < 0)))
        q--;
    return q;
}

int64_t tw_floor_mod(int64_t a, int64_t d)
{
    /* Not a - floor(a / d) * d, which overflows at INT64_MIN. */
    int64_t r = a % d;
    if (r != 0 && ((r < 0) != (d < 0)))
        r += d;
    return r;
}

bool tw_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int tw_days_in_month(int64_t y, int m)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12)
        return 0;
    return mdays[m - 1] + (m == 2 && tw_is_leap(y));
}

int64_t tw_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = tw_floor_div(y, 400);
    int64_t yoe = y - era * 400;                                  /* 0..399 */
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1; /* 0..365 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* 0..146096 */
    return era * 146097 + doe - 719468;
}

void tw_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = tw_floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int dd = (int)(doy - (153 * mp + 2) / 5 + 1);
    int mm = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (mm <= 2);
    *m = mm;
    *d = dd;
}

int tw_weekday_from_days(int64_t days)
{
    /* 1970-01-01 was a Thursday (3). */
    return (int)tw_floor_mod(days + 3, 7);
}

bool tw_civil_valid(const struct tw_civil *c)
{
    return c->year >= -9999 && c->year <= 9999 && c->month >= 1 && c->month <= 12 &&
           c->day >= 1 && c->day <= tw_days_in_month(c->year, c->month) && c->hour >= 0 &&
           c->hour <= 23 && c->minute >= 0 && c->minute <= 59 && c->second >= 0 &&
           c->second <= 59 && c->nsec >= 0 && c->nsec < 1000000000;
}

/* Seconds since 1970 of a valid civil time (no overflow for |year| <= 9999). */
static int64_t civil_secs(const struct tw_civil *c)
{
    return tw_days_from_civil(c->year, c->month, c->day) * 86400 + c->hour * 3600 +
           c->minute * 60 + c->second;
}

/* SECS seconds plus NSEC (0..999,999,999) nanoseconds as an instant, if it
 * fits.  Below zero the fraction is borrowed from the next second, so that
 * the very first instant of the range is reachable too. */
static bool secs_to_ns(int64_t secs, int32_t nsec, int64_t *ns)
{
    int64_t frac = nsec, v;
    if (secs < 0 && frac > 0) {
        secs += 1;
        frac -= TW_NS_PER_S;
    }
    if (__builtin_mul_overflow(secs, TW_NS_PER_S, &v) || __builtin_add_overflow(v, frac, &v))
        return false;
    *ns = v;
    return true;
}

enum tw_err tw_civil_to_ns(const struct tw_civil *c, int64_t *ns)
{
    if (!tw_civil_valid(c))
        return TW_EINVAL;
    return secs_to_ns(civil_secs(c), c->nsec, ns) ? TW_OK : TW_ERANGE;
}

void tw_civil_from_ns(int64_t ns, struct tw_civil *c)
{
    int64_t secs = tw_floor_div(ns, TW_NS_PER_S);
    int64_t days = tw_floor_div(secs, 86400);
    int64_t sod = secs - days * 86400;
    int64_t y;
    tw_civil_from_days(days, &y, &c->month, &c->day);
    c->year = (int32_t)y;
    c->hour = (int)(sod / 3600);
    c->minute = (int)(sod / 60 % 60);
    c->second = (int)(sod % 60);
    c->nsec = (int32_t)tw_floor_mod(ns, TW_NS_PER_S);
}

bool tw_time_add(int64_t a, int64_t b, int64_t *out)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
    *out = a + b;
    return true;
}

bool tw_ms_to_ns(int64_t ms, int64_t *ns)
{
    if (ms > INT64_MAX / TW_NS_PER_MS || ms < INT64_MIN / TW_NS_PER_MS)
        return false;
    *ns = ms * TW_NS_PER_MS;
    return true;
}

/* ---- RFC 3339 ---- */

/* N decimal digits at S (known to be in the buffer), or -1. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/*
 * The one RFC 3339 reader: LEN bytes at S into seconds since 1970 (UTC) and
 * nanoseconds.  On failure returns false with *AT the byte offset of the
 * trouble and *WHAT what was expected there.
 */
static bool rfc3339_read(const char *s, size_t len, int64_t *secs, int32_t *nsec,
                         size_t *at, const char **what)
{
    /* Shape: YYYY-MM-DDTHH:MM:SS, fixed positions. */
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < 19; i++) {
        bool ok;
        if (i >= len) {
            *at = i;
            *what = "the rest of YYYY-MM-DDTHH:MM:SS";
            return false;
        }
        if (shape[i] == 'd')
            ok = s[i] >= '0' && s[i] <= '9';
        else if (shape[i] == 'T')
            ok = s[i] == 'T' || s[i] == 't';
        else
            ok = s[i] == shape[i];
        if (!ok) {
            *at = i;
            *what = shape[i] == 'd' ? "a digit (YYYY-MM-DDTHH:MM:SS)"
                    : shape[i] == 'T' ? "'T' between the date and the time"
                                      : shape[i] == '-' ? "'-' in the date" : "':' in the time";
            return false;
        }
    }
    struct tw_civil c = {.year = digits(s, 4), .month = digits(s + 5, 2),
                         .day = digits(s + 8, 2), .hour = digits(s + 11, 2),
                         .minute = digits(s + 14, 2), .second = digits(s + 17, 2)};
    if (c.month < 1 || c.month > 12) {
        *at = 5;
        *what = "a month 01..12";
        return false;
    }
    if (c.day < 1 || c.day > tw_days_in_month(c.year, c.month)) {
        *at = 8;
        *what = "a day that exists in that month";
        return false;
    }
    if (c.hour > 23) {
        *at = 11;
        *what = "an hour 00..23";
        return false;
    }
    if (c.minute > 59) {
        *at = 14;
        *what = "a minute 00..59";
        return false;
    }
    if (c.second > 60) {
        *at = 17;
        *what = "a second 00..60";
        return false;
    }
    if (c.second == 60)
        c.second = 59;
    size_t p = 19;
    int32_t frac = 0;
    if (p < len && s[p] == '.') {
        p++;
        int n = 0;
        for (; p < len && s[p] >= '0' && s[p] <= '9'; p++, n++) {
            if (n < 9)
                frac = frac * 10 + (s[p] - '0');
        }
        if (n == 0 || n > 9) {
            *at = p;
            *what = n == 0 ? "a digit after '.'" : "at most 9 fraction digits";
            return false;
        }
        for (; n < 9; n++)
            frac *= 10;
    }
    int64_t off_s = 0;
    if (p < len && (s[p] == 'Z' || s[p] == 'z')) {
        p++;
    } else if (p < len && (s[p] == '+' || s[p] == '-')) {
        int oh = len - p == 6 && s[p + 3] == ':' ? digits(s + p + 1, 2) : -1;
        int om = oh >= 0 ? digits(s + p + 4, 2) : -1;
        if (oh < 0 || oh > 23 || om < 0 || om > 59) {
            *at = p;
            *what = "an offset +hh:mm (hh 00..23, mm 00..59) at the end";
            return false;
        }
        off_s = (int64_t)(oh * 3600 + om * 60) * (s[p] == '-' ? -1 : 1);
        p += 6;
    } else {
        *at = p;
        *what = "'Z' or an offset +hh:mm";
        return false;
    }
    if (p != len) {
        *at = p;
        *what = "the end of the time";
        return false;
    }
    *secs = civil_secs(&c) - off_s;
    *nsec = frac;
    return true;
}

enum tw_err tw_rfc3339_parse(const char *buf, size_t len, int64_t *ns, struct tw_error *err)
{
    int64_t secs;
    int32_t nsec;
    size_t at = 0;
    const char *what = "";
    if (!rfc3339_read(buf, len, &secs, &nsec, &at, &what))
        return tw_error_set_at(err, TW_EPARSE, 1, (long)at + 1,
                               "not an RFC 3339 time: at byte %zu expected %s "
                               "(e.g. 2026-11-29T10:00:00Z)",
                               at + 1, what);
    if (!secs_to_ns(secs, nsec, ns))
        return tw_error_set(err, TW_ERANGE,
                            "%.*s is outside the instants tierwise handles "
                            "(1677-09-21 to 2262-04-11)",
                            (int)(len > 64 ? 64 : len), buf);
    return TW_OK;
}

bool tw_rfc3339_ms(const char *s, int64_t *ms)
{
    int64_t secs;
    int32_t nsec;
    size_t at;
    const char *what;
    if (!s || !rfc3339_read(s, strlen(s), &secs, &nsec, &at, &what))
        return false;
    *ms = secs * 1000 + nsec / 1000000;
    return true;
}

/* Writes the civil fields of SECS as YYYY-MM-DDTHH:MM:SS; false outside
 * years 0000..9999 or when OUT is short. */
static bool format_secs(int64_t secs, char *out, size_t outlen, size_t *n)
{
    /* Year 0000 to 9999, so that the text is RFC 3339's four digits. */
    if (secs < INT64_C(-62167219200) || secs > INT64_C(253402300799))
        return false;
    int64_t days = tw_floor_div(secs, 86400), sod = secs - days * 86400, y;
    int m, d;
    tw_civil_from_days(days, &y, &m, &d);
    int w = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m, d,
                     (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
    if (w < 0 || (size_t)w >= outlen)
        return false;
    *n = (size_t)w;
    return true;
}

bool tw_rfc3339_format(int64_t unix_s, char *out, size_t outlen)
{
    size_t n;
    if (!out || outlen < 21 || !format_secs(unix_s, out, outlen, &n)) {
        if (out && outlen)
            out[0] = '\0';
        return false;
    }
    out[n] = 'Z';
    out[n + 1] = '\0';
    return true;
}

bool tw_rfc3339_format_ns(int64_t ns, int32_t utoff_s, int frac_digits, char *out,
                          size_t outlen)
{
    if (!out || outlen == 0)
        return false;
    out[0] = '\0';
    if (frac_digits < 0 || frac_digits > 9 || utoff_s % 60 != 0 || utoff_s <= -86400 ||
        utoff_s >= 86400)
        return false;
    int64_t secs = tw_floor_div(ns, TW_NS_PER_S) + utoff_s;
    int64_t frac = tw_floor_mod(ns, TW_NS_PER_S);
    size_t n;
    if (!format_secs(secs, out, outlen, &n))
        goto short_out;
    if (frac_digits > 0) {
        int64_t f = frac;
        for (int i = frac_digits; i < 9; i++)
            f /= 10;
        int w = snprintf(out + n, outlen - n, ".%0*lld", frac_digits, (long long)f);
        if (w < 0 || (size_t)w >= outlen - n)
            goto short_out;
        n += (size_t)w;
    }
    int w;
    if (utoff_s == 0)
        w = snprintf(out + n, outlen - n, "Z");
    else
        w = snprintf(out + n, outlen - n, "%c%02d:%02d", utoff_s < 0 ? '-' : '+',
                     (int)((utoff_s < 0 ? -utoff_s : utoff_s) / 3600),
                     (int)((utoff_s < 0 ? -utoff_s : utoff_s) / 60 % 60));
    if (w < 0 || (size_t)w >= outlen - n)
        goto short_out;
    return true;
short_out:
    out[0] = '\0';
    return false;
}

bool tw_duration_format_ns(int64_t ns, char *out, size_t outlen)
{
    if (!out || outlen == 0)
        return false;
    /* Magnitude as unsigned, so INT64_MIN has one too. */
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t h = mag / 3600000000000u, rest = mag % 3600000000000u;
    uint64_t m = rest / 60000000000u;
    rest %= 60000000000u;
    uint64_t s = rest / 1000000000u, frac = rest % 1000000000u;
    char tmp[64];
    size_t n = 0;
    if (ns < 0)
        tmp[n++] = '-';
    if (h)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%lluh", (unsigned long long)h);
    if (m)
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%llum", (unsigned long long)m);
    if (s || frac || mag == 0) {
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%llu", (unsigned long long)s);
        if (frac) {
            char f[16];
            snprintf(f, sizeof(f), "%09llu", (unsigned long long)frac);
            size_t fl = 9;
            while (fl > 0 && f[fl - 1] == '0')
                fl--;
            f[fl] = '\0';
            n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, ".%s", f);
        }
        tmp[n++] = 's';
        tmp[n] = '\0';
    }
    if (n + 1 > outlen) {
        out[0] = '\0';
        return false;
    }
    memcpy(out, tmp, n + 1);
    return true;
}
