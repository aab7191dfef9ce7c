/* size.c - parsing and formatting of sizes and durations. */
#include "core/size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
    const char *name;
    uint64_t mult;
};

static const struct unit size_units[] = {
    {"", 1},
    {"b", 1},
    {"k", 1ULL << 10},  {"ki", 1ULL << 10}, {"kib", 1ULL << 10}, {"kb", 1000ULL},
    {"m", 1ULL << 20},  {"mi", 1ULL << 20}, {"mib", 1ULL << 20}, {"mb", 1000000ULL},
    {"g", 1ULL << 30},  {"gi", 1ULL << 30}, {"gib", 1ULL << 30},
    {"gb", 1000000000ULL},
    {"t", 1ULL << 40},  {"ti", 1ULL << 40}, {"tib", 1ULL << 40},
    {"tb", 1000000000000ULL},
};

static const struct unit time_units[] = {
    {"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60000}, {"min", 60000}, {"h", 3600000},
    {"d", 86400000},
};

static enum tw_err parse_with(const char *s, const struct unit *units, size_t n,
                              const char *what, const char *example,
                              uint64_t *out, struct tw_error *err)
{
    if (!s || !*s)
        return tw_error_set(err, TW_EINVAL, "empty %s; write it like %s", what,
                            example);
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return tw_error_set(err, TW_EINVAL,
                            "%s \"%s\" does not start with a number; write it like %s",
                            what, s, example);
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (errno || v < 0)
        return tw_error_set(err, TW_ERANGE, "%s \"%s\" is out of range", what, s);
    while (isspace((unsigned char)*end))
        end++;
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(end, units[i].name) == 0) {
            double b = v * (double)units[i].mult;
            if (b >= 18446744073709551615.0)
                return tw_error_set(err, TW_ERANGE, "%s \"%s\" is too large", what, s);
            *out = (uint64_t)(b + 0.5);
            return TW_OK;
        }
    }
    return tw_error_set(err, TW_EINVAL, "%s \"%s\" has an unknown unit \"%s\"; write it like %s",
                        what, s, end, example);
}

enum tw_err tw_size_parse(const char *s, uint64_t *out, struct tw_error *err)
{
    return parse_with(s, size_units, sizeof(size_units) / sizeof(size_units[0]),
                      "size", "8k, 1M or 10G", out, err);
}

enum tw_err tw_duration_parse(const char *s, uint64_t *out_ms, struct tw_error *err)
{
    return parse_with(s, time_units, sizeof(time_units) / sizeof(time_units[0]),
                      "duration", "30, 30s, 500ms, 2m, 1h or 1d", out_ms, err);
}

char *tw_size_format(uint64_t bytes, char *out, size_t outlen)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double v = (double)bytes;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0 || v == (double)(uint64_t)v)
        snprintf(out, outlen, "%.0f %s", v, names[u]);
    else
        snprintf(out, outlen, "%.1f %s", v, names[u]);
    return out;
}
