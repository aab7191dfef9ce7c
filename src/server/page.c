/*
 * page.c - the paging and filter parameters of the list routes
 * (?limit=, ?cursor=, ?vm=, ?sku=, ?resource_group=, ?verdict=).
 *
 * A cursor is opaque to callers: "o" and the offset of the next page in
 * base 36.  (Pages are offsets into the list's order; a row stored between
 * two requests may shift a row by one across a page boundary.)
 */
#include "server/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verdict.h"

static const char *arg(struct tw_req *rq, const char *name)
{
    const char *v = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && v[0] ? v : NULL;
}

bool tw_req_page(struct tw_req *rq, struct tw_store_page *pg, int *verdict)
{
    memset(pg, 0, sizeof(*pg));
    pg->limit = TW_PAGE_DEFAULT;
    const char *limit = arg(rq, "limit");
    if (limit) {
        char *end;
        errno = 0;
        long long v = strtoll(limit, &end, 10);
        if (*end || errno || v < 1 || v > TW_STORE_PAGE_MAX || limit[0] == '+') {
            tw_req_error(rq, 400, "bad_request",
                         "limit \"%.40s\" is not a number of rows from 1 to %d (default %d)",
                         limit, TW_STORE_PAGE_MAX, TW_PAGE_DEFAULT);
            return false;
        }
        pg->limit = (size_t)v;
    }
    const char *cursor = arg(rq, "cursor");
    if (cursor) {
        char *end;
        errno = 0;
        unsigned long long off = cursor[0] == 'o' && cursor[1] && cursor[1] != '-' &&
                                         cursor[1] != '+'
                                     ? strtoull(cursor + 1, &end, 36)
                                     : 0;
        if (cursor[0] != 'o' || !cursor[1] || cursor[1] == '-' || cursor[1] == '+' || *end ||
            errno || off > (unsigned long long)INT64_MAX / 2) {
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
