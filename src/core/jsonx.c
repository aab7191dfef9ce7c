/* jsonx.c - shared jansson helpers. */
#include "core/jsonx.h"

#include <string.h>

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
