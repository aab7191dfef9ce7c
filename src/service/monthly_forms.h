/*
 * monthly_forms.h - what the monthly report's forms and its two callers
 * share (static inline: no object of its own):
 *
 *   tw_mr_utf8_seq     the length of the valid UTF-8 sequence at P, 0 when
 *                      the byte there starts none (the JSON and CSV writers
 *                      write such a byte as U+FFFD, so a name from the store
 *                      with a stray 0xFF is still valid JSON and CSV)
 *   tw_mr_currency_ok  a --currency / ?currency= the store has no book in
 *                      at all: TW_ENOENT "no price book in EUR: the
 *                      database's books are in GBP, USD" (the command's
 *                      exit 2, the route's 422 no_price_book), where the
 *                      build would price no disk
 */
#ifndef TW_SERVICE_MONTHLY_FORMS_H
#define TW_SERVICE_MONTHLY_FORMS_H

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "store/store.h"

/* The UTF-8 replacement character U+FFFD. */
#define TW_MR_FFFD "\xef\xbf\xbd"

/* 1..4 when the LEFT bytes at P start a well-formed UTF-8 sequence (no
 * overlong form, no surrogate, nothing past U+10FFFF), else 0. */
static inline size_t tw_mr_utf8_seq(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* WANT (a three-letter code; NULL, "" or anything else: TW_OK, the build
 * says what is wrong with it) is a currency some stored book is in, or the
 * store has no book at all (the build's own error).  Else TW_ENOENT naming
 * the currencies there are. */
static inline enum tw_err tw_mr_currency_ok(struct tw_store *st, const char *want,
                                            struct tw_error *err)
{
    if (!want || strlen(want) != 3 || !isalpha((unsigned char)want[0]) ||
        !isalpha((unsigned char)want[1]) || !isalpha((unsigned char)want[2]))
        return TW_OK;
    char have[16][4];
    size_t n = 0;
    enum tw_err rc = tw_store_pricebook_currencies(st, have, 16, &n, err);
    if (rc != TW_OK || n == 0)
        return rc;
    size_t shown = n < 16 ? n : 16;
    for (size_t i = 0; i < shown; i++)
        if (strcasecmp(have[i], want) == 0)
            return TW_OK;
    if (n > 16)
        return TW_OK; /* more than listed: the build decides */
    char list[16 * 5 + 1] = "";
    size_t at = 0;
    for (size_t i = 0; i < shown; i++)
        at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", i ? ", " : "", have[i]);
    char up[4] = {(char)toupper((unsigned char)want[0]), (char)toupper((unsigned char)want[1]),
                  (char)toupper((unsigned char)want[2]), '\0'};
    return tw_error_set(err, TW_ENOENT, "no price book in %s: the database's %s in %s", up,
                        n == 1 ? "book is" : "books are", list);
}

#endif
