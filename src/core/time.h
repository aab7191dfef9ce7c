/*
 * time.h - instants, civil dates and times, durations, RFC 3339.
 *
 * An instant is an int64_t count of nanoseconds since 1970-01-01T00:00:00Z
 * on the POSIX time scale (every day has 86,400 seconds; leap seconds do not
 * exist here), named with an `_ns` suffix.  Why one integer of nanoseconds
 * rather than seconds plus a fraction: instants are compared, subtracted,
 * sorted, stored in an SQLite INTEGER column and summed into durations
 * all the time, and with one integer each of those is one machine operation
 * with no carry between two fields to get wrong; nanoseconds hold
 * clock_gettime()'s and RFC 3339's finest fractions (9 digits) exactly.  The
 * price is the range: 1677-09-21T00:12:43Z to 2262-04-11T23:47:16Z, which
 * holds every instant tierwise records or plans.  Functions that take
 * outside text refuse times outside it with TW_ERANGE; none wraps.
 *
 * A duration is an int64_t of nanoseconds too (instant - instant).
 *
 * Civil dates are proleptic Gregorian, years -9999..9999 where a function
 * takes them from outside.  Weekdays are numbered as ISO 8601 minus one:
 * 0 = Monday ... 6 = Sunday.
 *
 * A "local" nanosecond count (tz.h) is a wall-clock civil time read as if
 * it were UTC: tw_civil_to_ns of the civil fields, without any offset.
 */
#ifndef TW_CORE_TIME_H
#define TW_CORE_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define TW_NS_PER_US INT64_C(1000)
#define TW_NS_PER_MS INT64_C(1000000)
#define TW_NS_PER_S INT64_C(1000000000)
#define TW_NS_PER_MIN (60 * TW_NS_PER_S)
#define TW_NS_PER_HOUR (3600 * TW_NS_PER_S)
#define TW_NS_PER_DAY (86400 * TW_NS_PER_S)
#define TW_NS_PER_WEEK (7 * TW_NS_PER_DAY)

/* A civil (calendar and wall-clock) time, with no zone attached. */
struct tw_civil {
    int32_t year;   /* proleptic Gregorian; 1 BC is 0 */
    int month;      /* 1..12 */
    int day;        /* 1..31 */
    int hour;       /* 0..23 */
    int minute;     /* 0..59 */
    int second;     /* 0..59 (a leap second :60 is read as :59) */
    int32_t nsec;   /* 0..999,999,999 */
};

/* Floor division and its remainder (always 0..d-1 for d > 0). */
int64_t tw_floor_div(int64_t a, int64_t d);
int64_t tw_floor_mod(int64_t a, int64_t d);

/* Whether Y is a Gregorian leap year. */
bool tw_is_leap(int64_t y);

/* Days in month M (1..12) of year Y; 0 for a month out of range. */
int tw_days_in_month(int64_t y, int m);

/* Days from 1970-01-01 to Y-M-D (negative before).  M and D are assumed
 * valid; check them with tw_civil_valid first.  Exact for |Y| < 2^40. */
int64_t tw_days_from_civil(int64_t y, int m, int d);

/* The date of day DAYS since 1970-01-01 (the inverse of the above). */
void tw_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

/* Weekday of day DAYS since 1970-01-01: 0 = Monday ... 6 = Sunday. */
int tw_weekday_from_days(int64_t days);

/* Whether every field of C is in range (month lengths and leap years
 * included, year -9999..9999, second 0..59). */
bool tw_civil_valid(const struct tw_civil *c);

/*
 * C read as UTC (or, for tz.h, as a local wall-clock time) in nanoseconds
 * since 1970 into *NS.  TW_EINVAL when a field is out of range, TW_ERANGE
 * when the result is outside the instant range.
 */
enum tw_err tw_civil_to_ns(const struct tw_civil *c, int64_t *ns);

/* The civil UTC fields of NS (the inverse of tw_civil_to_ns). */
void tw_civil_from_ns(int64_t ns, struct tw_civil *c);

/*
 * A + B into *OUT, false (and *OUT unchanged) when the sum would leave the
 * int64_t range: for instants plus durations that are outside input.
 */
bool tw_time_add(int64_t a, int64_t b, int64_t *out);

/*
 * MS, milliseconds since 1970 (the store's instants, from agents' reports),
 * in nanoseconds into *NS; false (and *NS unchanged) when it is outside
 * what int64_t nanoseconds hold (about 1677 to 2262): a report may say
 * 1653, and such an instant is skipped or clamped by the caller, never
 * wrapped.
 */
bool tw_ms_to_ns(int64_t ms, int64_t *ns);

/*
 * Parses an RFC 3339 date-time of LEN bytes at BUF ("2026-11-29T10:00:00Z",
 * "...T10:00:00.123456789+01:00"; 't' and 'z' allowed, up to 9 fraction
 * digits, a leap second :60 read as :59) into an instant.  TW_EPARSE with
 * the byte offset (column) and what was expected, TW_ERANGE outside the
 * instant range.
 */
enum tw_err tw_rfc3339_parse(const char *buf, size_t len, int64_t *ns,
                             struct tw_error *err);

/*
 * Writes NS as RFC 3339 with the UTC offset UTOFF_S (seconds east of UTC; a
 * whole number of minutes, |offset| < 24 h; 0 writes "Z") and FRAC_DIGITS
 * (0..9) fraction digits, truncated: "2026-10-25T01:30:00+01:00".  False
 * when OUT (OUTLEN bytes with the NUL) is too small or the offset can't be
 * written; OUT is then "".
 */
bool tw_rfc3339_format_ns(int64_t ns, int32_t utoff_s, int frac_digits, char *out,
                          size_t outlen);

/*
 * Milliseconds since 1970 of an RFC 3339 time ("2026-11-29T10:00:00Z",
 * fractions and +hh:mm offsets allowed; years 0000..9999, whatever the
 * instant range); false when S is not one.  Reports are ordered by it,
 * since such strings don't sort as text.
 */
bool tw_rfc3339_ms(const char *s, int64_t *ms);

/* Writes UNIX_S (seconds since 1970) as RFC 3339 UTC to the second,
 * "2026-11-30T01:02:03Z", into OUT (21 bytes or more); false when the
 * time can't be represented (a year outside 0000..9999) or OUT is too
 * small. */
bool tw_rfc3339_format(int64_t unix_s, char *out, size_t outlen);

/*
 * Writes a duration as hours, minutes and seconds, largest unit first and
 * zero units left out, with a fraction of a second when there is one:
 * "49h", "47h30m", "1m0.5s", "-2h", "0s".  False when OUT is too small
 * (40 bytes always suffice).
 */
bool tw_duration_format_ns(int64_t ns, char *out, size_t outlen);

#endif
