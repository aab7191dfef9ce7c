/*
 * page.c - the paging and filter parameters of the list routes
 * (?limit=, ?cursor=, ?vm=, ?sku=, ?resource_group=, ?verdict=).
 *
 * A cursor is opaque to callers: "o" and the offset of the next page in
 * base 36.  (Pages are offsets into the list's order; a row stored between
 * two requests may shift a row by one across a page boundary.)
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/verdict.h"

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

/* S as an unsigned number in BASE (10, or 36 with lowercase letters, the
 * form this server writes its cursors in): digits only, no sign, no
 * spaces, no leading zero, so every value has one spelling.  False when
 * S is not such a number or does not fit in 62 bits. */
static bool parse_digits(const char *s, unsigned base, uint64_t *out)
{
    uint64_t v = 0;
    if (!s[0] || (s[0] == '0' && s[1]))
        return false;
    for (const char *p = s; *p; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'z')
            d = (unsigned)(*p - 'a') + 10;
        else
            return false;
        if (d >= base || v > ((UINT64_C(1) << 62) - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

bool tw_req_page(struct tw_req *rq, struct tw_store_page *pg, int *verdict)
{
    memset(pg, 0, sizeof(*pg));
    pg->limit = TW_PAGE_DEFAULT;
    const char *limit = arg(rq, "limit");
    if (limit) {
        uint64_t v;
        if (!parse_digits(limit, 10, &v) || v < 1 || v > TW_STORE_PAGE_MAX) {
            tw_req_error(rq, 400, "bad_request",
                         "limit \"%.40s\" is not a number of rows from 1 to %d (default %d)",
                         limit, TW_STORE_PAGE_MAX, TW_PAGE_DEFAULT);
            return false;
        }
        pg->limit = (size_t)v;
    }
    const char *cursor = arg(rq, "cursor");
    if (cursor) {
        uint64_t off;
        if (cursor[0] != 'o' || !parse_digits(cursor + 1, 36, &off) ||
            off > (uint64_t)INT64_MAX / 2) {
            tw_req_error(rq, 400, "bad_request",
                         "cursor \"%.40s\" is not one this server gave: pass the next_cursor "
                         "of the previous page as it came",
                         cursor);
            return false;
        }
        pg->offset = (size_t)off;
    }
    pg->vm = arg(rq, "vm");
    pg->sku = arg(rq, "sku");
    pg->resource_group = arg(rq, "resource_group");
    if (verdict) {
        *verdict = -1;
        const char *v = arg(rq, "verdict");
        if (v) {
            for (int k = TW_VERDICT_DELIVERS; k <= TW_VERDICT_INCONCLUSIVE; k++)
                if (strcmp(v, tw_verdict_name((enum tw_verdict_kind)k)) == 0)
                    *verdict = k;
            if (*verdict < 0) {
                tw_req_error(rq, 400, "bad_request",
                             "verdict \"%.40s\" is not one of delivers, under, vm-capped, "
                             "burst, cached, inconclusive",
                             v);
                return false;
            }
        }
    }
    return true;
}

json_t *tw_page_next_cursor(const struct tw_store_page *pg, bool more)
{
    if (!more)
        return json_null();
    char buf[32];
    unsigned long long v = (unsigned long long)(pg->offset + pg->limit);
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
        v /= 36;
    } while (v);
    buf[0] = 'o';
    for (size_t i = 0; i < n; i++)
        buf[1 + i] = digits[n - 1 - i];
    buf[1 + n] = '\0';
    return json_string(buf);
}
