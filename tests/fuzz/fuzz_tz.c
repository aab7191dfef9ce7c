/* fuzz_tz.c - the TZif reader (core/tz.c) on arbitrary bytes, and what a
 * zone that was accepted answers: offsets in range, transitions that move
 * forward, and local times that map back to where they came from. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_info(const struct tw_tz_info *i)
{
    if (i->utoff_s <= -26 * 3600 || i->utoff_s >= 26 * 3600 ||
        !memchr(i->abbr, '\0', sizeof(i->abbr)))
        abort();
}

/* L = T's local time maps back to T, or to an earlier instant with the same
 * local time (an overlap); never to a gap. */
static void check_round_trip(const struct tw_tz *z, int64_t t)
{
    struct tw_tz_info i, j;
    tw_tz_at(z, t, &i);
    check_info(&i);
    int64_t back;
    enum tw_tz_local kind;
    if (tw_tz_local_to_ns(z, t + (int64_t)i.utoff_s * TW_NS_PER_S, &back, &kind) != TW_OK)
        abort();
    tw_tz_at(z, back, &j);
    if (kind == TW_TZ_LOCAL_GAP || back > t ||
        back + (int64_t)j.utoff_s * TW_NS_PER_S != t + (int64_t)i.utoff_s * TW_NS_PER_S ||
        (back < t && kind != TW_TZ_LOCAL_OVERLAP))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_tz *z = NULL;
    struct tw_error err = {0};
    if (tw_tz_parse("fuzz", data, size, &z, &err) != TW_OK) {
        if (z || !err.msg[0])
            abort();
        return 0;
    }
    /* From 1900 to 2200: transitions strictly ascending, each a change. */
    int64_t t = INT64_C(-2208988800) * TW_NS_PER_S, end = INT64_C(7258118400) * TW_NS_PER_S;
    int64_t at;
    for (int n = 0; n < 2000 && tw_tz_next_transition(z, t, &at) && at < end; n++) {
        if (at <= t)
            abort();
        struct tw_tz_info a, b;
        tw_tz_at(z, at - 1, &a);
        tw_tz_at(z, at, &b);
        if (a.utoff_s == b.utoff_s && a.is_dst == b.is_dst && strcmp(a.abbr, b.abbr) == 0)
            abort();
        check_round_trip(z, at);
        check_round_trip(z, at - 1);
        t = at;
    }
    static const int64_t probes[] = {INT64_MIN, -1, 0, INT64_C(1792891800), INT64_MAX};
    for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
        struct tw_tz_info info;
        tw_tz_at(z, probes[i], &info);
        check_info(&info);
        tw_tz_next_transition(z, probes[i], &at);
        int64_t out;
        tw_tz_local_to_ns(z, probes[i], &out, NULL);
    }
    for (int64_t s = INT64_C(-2208988800); s < INT64_C(7258118400); s += INT64_C(86400) * 997)
        check_round_trip(z, s * TW_NS_PER_S);
    tw_tz_free(z);
    return 0;
}
