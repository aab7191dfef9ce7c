/* fuzz_window.c - the window grammar and Custodian's tag form
 * (core/window.c) on arbitrary bytes: what parses writes out and reads
 * back the same, its union is idempotent, and its instants in a zone with
 * clock changes are sorted, disjoint and inside the period. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct tw_windows *w)
{
    static struct tw_tz *z;
    if (!z) {
        const char *rule = "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45";
        if (tw_tz_from_posix(rule, strlen(rule), &z, NULL) != TW_OK)
            abort();
    }
    if (w->n == 0 || w->n > TW_WINDOWS_MAX)
        abort();
    for (size_t i = 0; i < w->n; i++)
        if (w->w[i].start_min >= TW_WEEK_MIN || w->w[i].len_min < 1 ||
            w->w[i].len_min > TW_WEEK_MIN)
            abort();
    char text[TW_WINDOWS_MAX * 24];
    struct tw_windows back, u = *w, uu;
    if (!tw_windows_format(w, text, sizeof(text)) ||
        tw_windows_parse(text, strlen(text), &back, NULL) != TW_OK || back.n != w->n ||
        memcmp(back.w, w->w, w->n * sizeof(w->w[0])) != 0)
        abort();
    tw_windows_union(&u);
    uu = u;
    tw_windows_union(&uu);
    if (uu.n != u.n || memcmp(uu.w, u.w, u.n * sizeof(u.w[0])) != 0)
        abort();
    /* Two months over Chatham's April change. */
    const int64_t from = INT64_C(2405548800) * TW_NS_PER_S, to = from + 61 * TW_NS_PER_DAY;
    struct tw_interval *iv;
    size_t n;
    if (tw_windows_instants(w, z, from, to, &iv, &n, NULL) != TW_OK)
        abort();
    for (size_t i = 0; i < n; i++)
        if (iv[i].from_ns < from || iv[i].to_ns > to || iv[i].to_ns <= iv[i].from_ns ||
            (i > 0 && iv[i].from_ns <= iv[i - 1].to_ns))
            abort();
    free(iv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_windows w;
    struct tw_error err = {0};
    if (tw_windows_parse((const char *)data, size, &w, &err) == TW_OK)
        check(&w);
    else if (!err.msg[0] || w.n != 0)
        abort();
    memset(&err, 0, sizeof(err));
    if (tw_windows_parse_custodian((const char *)data, size, &w, &err) == TW_OK)
        check(&w);
    else if (!err.msg[0] || w.n != 0 || w.tz[0])
        abort();
    return 0;
}
