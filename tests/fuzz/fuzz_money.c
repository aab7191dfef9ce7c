/* fuzz_money.c - the money parser (core/money.c) on arbitrary bytes: every
 * price of a Retail Prices page goes through it.  What it accepts must
 * read back from its own text to the same value, be the number strtod
 * reads from the same bytes, and round and format without overflow
 * surprises. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/money.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_money m, back;
    struct tw_error err = {0};
    enum tw_err rc = tw_money_parse((const char *)data, size, &m, &err);
    if (rc != TW_OK) {
        if ((rc != TW_EPARSE && rc != TW_ERANGE) || m.micros != 0 || !err.msg[0])
            abort();
        return 0;
    }
    /* Text and parse are inverses. */
    char text[TW_MONEY_TEXT_MAX];
    tw_money_text(m, text, sizeof(text));
    if (tw_money_parse(text, strlen(text), &back, NULL) != TW_OK || back.micros != m.micros)
        abort();
    /* The same number strtod reads (exactly so below 2^53 millionths). */
    if (m.micros > -(INT64_C(1) << 53) && m.micros < (INT64_C(1) << 53)) {
        char *s = malloc(size + 1);
        if (!s)
            return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        double d = strtod(s, NULL);
        free(s);
        if (d != tw_money_to_double(m))
            abort();
    }
    /* Rounding to each place is within half a place, away from zero on a
     * half, and formatting never fails for a value that rounds in range. */
    int64_t unit = TW_MONEY_SCALE;
    for (int dec = 0; dec <= TW_MONEY_DECIMALS; dec++, unit /= 10) {
        struct tw_money r;
        if (tw_money_round(m, dec, &r, NULL) != TW_OK)
            continue;
        __int128 diff = (__int128)r.micros - m.micros;
        if (diff < 0)
            diff = -diff;
        if (2 * diff > unit || r.micros % unit != 0)
            abort();
    }
    char out[TW_MONEY_TEXT_MAX];
    struct tw_money r0;
    if (tw_money_round(m, 2, &r0, NULL) == TW_OK &&
        tw_money_format(m, "USD", out, sizeof(out), NULL) != TW_OK)
        abort();
    /* An exact ratio and back is the value again. */
    struct tw_amount a, b;
    if (tw_money_ratio(m, 1, 730, &a, NULL) == TW_OK &&
        tw_amount_scale(a, 730, 1, &b, NULL) == TW_OK &&
        (b.den != 1 || b.num != m.micros))
        abort();
    return 0;
}
