/* agent_config.c - the agent's keys of the config file ("server",
 * "token_file"); see agent_config.h. */
#include "agent/agent_config.h"

#include <stdbool.h>
#include <string.h>

#include <jansson.h>

/* Copies KEY's string value of ROOT into OUT; false with a message. */
static bool take(json_t *root, const char *key, const char *name, bool path, char *out,
                 size_t outlen, struct tw_error *err)
{
    json_t *v = json_object_get(root, key);
    if (!v)
        return true;
    if (!json_is_string(v)) {
        tw_error_set(err, TW_EINVAL, "%s: \"%s\" must be a string", name, key);
        return false;
    }
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0) {
        tw_error_set(err, TW_EINVAL, "%s: \"%s\" is empty; leave it out or give a value",
                     name, key);
        return false;
    }
    if (n >= outlen) {
        tw_error_set(err, TW_EINVAL, "%s: \"%s\" is longer than %zu bytes", name, key,
                     outlen - 1);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            tw_error_set(err, TW_EINVAL, "%s: \"%s\" holds a control character", name, key);
            return false;
        }
    }
    if (path && s[0] != '/') {
        tw_error_set(err, TW_EINVAL,
                     "%s: \"%s\" \"%.200s\" is not an absolute path; give the whole path "
                     "(the config file is read from any folder)",
                     name, key, s);
        return false;
    }
    memcpy(out, s, n + 1);
    return true;
}

enum tw_err tw_agent_config_parse(const char *buf, size_t len, const char *name,
                                  struct tw_agent_config *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tw_error_set(err, TW_EPARSE, "%s is not valid JSON: %s (line %d, column %d)",
                            name, je.text, je.line, je.column);
    enum tw_err rc = TW_OK;
    if (!json_is_object(root))
        rc = tw_error_set(err, TW_EPARSE, "%s: the config file must be a JSON object", name);
    else if (!take(root, "server", name, false, out->server, sizeof(out->server), err) ||
             !take(root, "token_file", name, true, out->token_file, sizeof(out->token_file),
                   err))
        rc = TW_EINVAL;
    json_decref(root);
    if (rc != TW_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}
