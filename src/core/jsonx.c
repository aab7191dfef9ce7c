/* jsonx.c - shared jansson helpers. */
#include "core/jsonx.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/jsonread.h"

json_t *tw_json_load(const char *buf, size_t len, size_t flags, const char *what,
                     struct tw_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, flags, &je);
    if (!root)
        tw_error_set_at(err, TW_EPARSE, je.line, je.column,
                        "%s%snot valid JSON at line %d, column %d: %s", what ? what : "",
                        what ? " is " : "", je.line, je.column, je.text);
    return root;
}

bool tw_json_decimal(const json_t *v, int64_t *out)
{
    *out = 0;
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return false;
        *out = json_integer_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || n > 18 || strlen(s) != n)
        return false;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (s[i] - '0');
    }
    *out = x;
    return true;
}

/* ---- typed getters ---- */

#define FIELD(f, path, key)                                                                   \
    char f[600];                                                                              \
    tw_jr_field(f, sizeof(f), path, key)

bool tw_jx_absent(const json_t *v, unsigned opt)
{
    if (!v || ((opt & TW_JX_NULLABLE) && json_is_null(v)))
        return true;
    return (opt & (TW_JX_DECIMAL | TW_JX_TEXT_BOOL)) && json_is_string(v) &&
           json_string_length(v) == 0;
}

/* The absent case: fine, or "is missing". */
static bool absent(const char *path, const char *key, unsigned opt, struct tw_error *err)
{
    if (!(opt & TW_JX_REQUIRED))
        return true;
    FIELD(f, path, key);
    tw_error_set(err, TW_EPARSE, "%s is missing", f);
    return false;
}

static const char *or_null(unsigned opt)
{
    /* A required member that is null is "missing": null is no choice. */
    return (opt & TW_JX_NULLABLE) && !(opt & TW_JX_REQUIRED) ? " or null" : "";
}

bool tw_jx_str(const json_t *v, const char *path, const char *key, unsigned opt, char *dst,
               size_t cap, struct tw_error *err)
{
    if (tw_jx_absent(v, opt))
        return absent(path, key, opt, err);
    FIELD(f, path, key);
    if (!json_is_string(v)) {
        tw_error_set(err, TW_EPARSE, "%s must be a string%s", f, or_null(opt));
        return false;
    }
    size_t n = json_string_length(v);
    if (n >= cap) {
        tw_error_set(err, TW_EPARSE, "%s is too long (%zu bytes, at most %zu)", f, n, cap - 1);
        return false;
    }
    if (strlen(json_string_value(v)) != n) {
        tw_error_set(err, TW_EPARSE, "%s holds a NUL", f);
        return false;
    }
    if (n == 0 && (opt & TW_JX_NONEMPTY)) {
        tw_error_set(err, TW_EPARSE, "%s must not be empty", f);
        return false;
    }
    memcpy(dst, json_string_value(v), n + 1);
    return true;
}

bool tw_jx_int(const json_t *v, const char *path, const char *key, int64_t lo, int64_t hi,
               unsigned opt, int64_t *out, struct tw_error *err)
{
    if (tw_jx_absent(v, opt))
        return absent(path, key, opt, err);
    int64_t x = 0;
    bool is_int = json_is_integer(v);
    if (is_int)
        x = json_integer_value(v);
    else if ((opt & TW_JX_DECIMAL) && json_is_string(v))
        is_int = tw_json_decimal(v, &x);
    if (is_int && x >= lo && x <= hi) {
        *out = x;
        return true;
    }
    FIELD(f, path, key);
    char got[64] = "";
    if (is_int)
        snprintf(got, sizeof(got), ", got %lld", (long long)x);
    else if ((opt & TW_JX_DECIMAL) && json_is_string(v))
        snprintf(got, sizeof(got), ", got \"%.40s\"", json_string_value(v));
    tw_error_set(err, TW_EPARSE, "%s must be an integer from %lld to %lld%s%s", f,
                 (long long)lo, (long long)hi, or_null(opt), got);
    return false;
}

bool tw_jx_num(const json_t *v, const char *path, const char *key, double lo, double hi,
               unsigned opt, double *out, struct tw_error *err)
{
    if (tw_jx_absent(v, opt))
        return absent(path, key, opt, err);
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (isfinite(d) && d >= lo && d <= hi) {
        *out = d;
        return true;
    }
    FIELD(f, path, key);
    if (isfinite(hi))
        tw_error_set(err, TW_EPARSE, "%s must be a number from %g to %g%s", f, lo, hi,
                     or_null(opt));
    else
        tw_error_set(err, TW_EPARSE, "%s must be a finite number >= %g%s", f, lo, or_null(opt));
    return false;
}

bool tw_jx_bool(const json_t *v, const char *path, const char *key, unsigned opt, bool *out,
                struct tw_error *err)
{
    if (tw_jx_absent(v, opt))
        return absent(path, key, opt, err);
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    if ((opt & TW_JX_TEXT_BOOL) && json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
            *out = strcasecmp(s, "true") == 0;
            return true;
        }
    }
    FIELD(f, path, key);
    if (opt & TW_JX_TEXT_BOOL)
        tw_error_set(err, TW_EPARSE, "%s must be \"true\" or \"false\"", f);
    else
        tw_error_set(err, TW_EPARSE, "%s must be a boolean%s", f, or_null(opt));
    return false;
}

const json_t *tw_jx_want(const json_t *v, const char *path, const char *key, json_type type,
                         unsigned opt, bool *ok, struct tw_error *err)
{
    *ok = true;
    if (tw_jx_absent(v, opt)) {
        *ok = absent(path, key, opt, err);
        return NULL;
    }
    if (json_typeof(v) == type)
        return v;
    FIELD(f, path, key);
    tw_error_set(err, TW_EPARSE, "%s must be %s%s", f,
                 type == JSON_ARRAY ? "an array" : "an object", or_null(opt));
    *ok = false;
    return NULL;
}
