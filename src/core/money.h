/*
 * money.h - exact prices and amounts.
 *
 * A struct tw_money is a whole number of millionths of a currency unit in
 * an int64_t: 21.68 USD is 21680000.  Six decimals, because that is the
 * most any Retail Prices item has (the bundled snapshot's 4,213 items: at
 * most 6, e.g. 38.012142 a month, 0.0005 per 10,000 transactions,
 * 1.1e-05; the API's own captures likewise).  The range is
 * +-9,223,372,036,854.775807 units: a fleet's yearly disk bill even in KRW
 * or JPY is a small part of it.
 *
 * Reading never goes through binary floating point: tw_money_parse reads
 * the digits of a JSON number's text (what the API sends: "16.16",
 * "0.0005", "1.1e-05", "0.0") and refuses, with a message saying why,
 * what it cannot hold exactly: a seventh decimal that is not zero, or a
 * value beyond the range.  Nothing is rounded on the way in.
 *
 * Arithmetic is exact and overflow-checked (TW_ERANGE, never a wrapped
 * value).  Products by a ratio (hours / 730, a month's share) are kept
 * unrounded as a struct tw_amount, a fraction of millionths, which can be
 * added and scaled again; a figure is rounded ONCE, when it is presented.
 *
 * The rounding rule, everywhere: to the nearest, half away from zero
 * (2.345 -> 2.35, -2.345 -> -2.35).  It is what invoices, spreadsheets
 * (ROUND) and people do, so a figure tierwise prints is the one a reader
 * gets by hand; half-even's advantage, no drift when many rounded figures
 * are summed, does not arise because sums are made unrounded.
 *
 * The minor unit of a currency is ISO 4217's (JPY and KRW 0 decimals, the
 * API's other 15 currencies 2): tw_currency_decimals.
 */
#ifndef TW_CORE_MONEY_H
#define TW_CORE_MONEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define TW_MONEY_DECIMALS 6
#define TW_MONEY_SCALE 1000000 /* millionths in a unit */
#define TW_MONEY_TEXT_MAX 32   /* room for any tw_money_text / _format, NUL included */

/* MICROS millionths of a currency unit. */
struct tw_money {
    int64_t micros;
};

__extension__ typedef __int128 tw_i128;

/* An exact amount not yet rounded: NUM / DEN millionths, DEN > 0, the
 * fraction in lowest terms. */
struct tw_amount {
    tw_i128 num;
    int64_t den;
};

static inline struct tw_money tw_money_micros(int64_t micros)
{
    struct tw_money m = {micros};
    return m;
}

/*
 * Parses LEN bytes at BUF, a JSON number (RFC 8259: -?int[.frac][e[+-]exp],
 * nothing before or after).  TW_EPARSE for text that is not one; TW_ERANGE
 * for a value with a non-zero digit past the sixth decimal or beyond the
 * range.  *OUT is zero on failure.
 */
enum tw_err tw_money_parse(const char *buf, size_t len, struct tw_money *out,
                           struct tw_error *err);

/* Overflow-checked arithmetic: TW_ERANGE (and *OUT unchanged) when the
 * result is out of range. */
enum tw_err tw_money_add(struct tw_money a, struct tw_money b, struct tw_money *out,
                         struct tw_error *err);
enum tw_err tw_money_sub(struct tw_money a, struct tw_money b, struct tw_money *out,
                         struct tw_error *err);
enum tw_err tw_money_mul(struct tw_money a, int64_t k, struct tw_money *out, struct tw_error *err);

int tw_money_cmp(struct tw_money a, struct tw_money b);

/* The nearest double (exact for |M| below 2^53 millionths, 9e9 units):
 * for JSON numbers and for printing with %g, where a price prints as the
 * text it was read from. */
double tw_money_to_double(struct tw_money m);

/*
 * M's exact value as the shortest decimal text: "21.68", "0.0005", "-3",
 * "0".  Writes at most CAP bytes (TW_MONEY_TEXT_MAX always suffices) and
 * returns BUF.
 */
char *tw_money_text(struct tw_money m, char *buf, size_t cap);

/* ---- unrounded amounts ------------------------------------------------ */

struct tw_amount tw_amount_of(struct tw_money m);
/* A * NUM / DEN exactly (DEN > 0; TW_EINVAL otherwise). */
enum tw_err tw_amount_scale(struct tw_amount a, int64_t num, int64_t den, struct tw_amount *out,
                            struct tw_error *err);
enum tw_err tw_amount_add(struct tw_amount a, struct tw_amount b, struct tw_amount *out,
                          struct tw_error *err);
/* A - B exactly (TW_ERANGE on overflow, TW_EINVAL for a denominator not
 * above 0). */
enum tw_err tw_amount_sub(struct tw_amount a, struct tw_amount b, struct tw_amount *out,
                          struct tw_error *err);
/* M * NUM / DEN, unrounded: a price for a share of a month (hours/730). */
enum tw_err tw_money_ratio(struct tw_money m, int64_t num, int64_t den, struct tw_amount *out,
                           struct tw_error *err);

/* ---- presentation ------------------------------------------------------ */

/* ISO 4217 decimals of CURRENCY (one of the API's 17); -1 if unknown. */
int tw_currency_decimals(const char *currency);

/* A rounded to DECIMALS (0-6) places, half away from zero; TW_ERANGE if
 * that leaves the range, TW_EINVAL for DECIMALS outside 0-6. */
enum tw_err tw_amount_round(struct tw_amount a, int decimals, struct tw_money *out,
                            struct tw_error *err);
enum tw_err tw_money_round(struct tw_money m, int decimals, struct tw_money *out,
                           struct tw_error *err);

/*
 * A rounded once to CURRENCY's minor unit and written with exactly that
 * many decimals: "21.68", "9.60", "1235" (JPY).  TW_EINVAL for an unknown
 * currency, TW_ERANGE as tw_amount_round.
 */
enum tw_err tw_amount_format(struct tw_amount a, const char *currency, char *buf, size_t cap,
                             struct tw_error *err);
enum tw_err tw_money_format(struct tw_money m, const char *currency, char *buf, size_t cap,
                            struct tw_error *err);

/*
 * A as a decimal string with DIGITS (0..18) decimals, rounded half away
 * from zero at the last one: the "_unrounded" figures of the JSON use 12
 * (an exact fraction of 1/730 h need not end).  False when CAP is too
 * small (64 bytes always suffice).
 */
bool tw_amount_decimal(struct tw_amount a, int digits, char *buf, size_t cap);

/* Hours of NS as a decimal string with up to 6 decimals, trailing zeros
 * dropped ("2496", "47.5", "0.166667"): the hours an amount is for, written
 * by the same digits. */
bool tw_hours_decimal(int64_t ns, char *buf, size_t cap);
/* The same for a sum of durations too long for an int64_t (a fleet's
 * hours: 100,000 disks of 730 h are some 2.6e20 ns). */
bool tw_hours_decimal_wide(tw_i128 ns, char *buf, size_t cap);

#endif
