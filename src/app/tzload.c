/*
 * tzload.c - a zone's TZif file from $TZDIR or /usr/share/zoneinfo.
 */
#include "app/tzload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "core/buf.h"

/* Letters, digits and the punctuation of IANA names ("America/Port-au-Prince",
 * "Etc/GMT+5", "America/Argentina/ComodRivadavia"). */
static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= TW_TZ_NAME_MAX || name[0] == '/' || strstr(name, ".."))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+' || c == '.'))
            return false;
    }
    return true;
}

enum tw_err tw_tz_load(const char *name, struct tw_tz **out, struct tw_error *err)
{
    *out = NULL;
    if (!name || !name_ok(name))
        return tw_error_set(err, TW_EINVAL,
                            "\"%.*s\" is not a time zone name: give an IANA name such as "
                            "Europe/London (no leading '/', no \"..\")",
                            name ? 100 : 0, name ? name : "");
    const char *dir = getenv("TZDIR");
    if (!dir || !dir[0])
        dir = TW_TZDIR_DEFAULT;
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return tw_error_set(err, TW_EINVAL, "the zone folder name in TZDIR is too long");
    struct tw_buf b;
    tw_buf_init(&b, TW_TZ_FILE_MAX);
    struct tw_error rerr = {0};
    enum tw_err rc = tw_app_read_file(path, &b, &rerr);
    if (rc == TW_ENOENT)
        rc = tw_error_set(err, TW_ENOENT,
                          "no time zone %s in %s: check the name (e.g. Europe/London), "
                          "or install the package tzdata",
                          name, dir);
    else if (rc != TW_OK)
        rc = tw_error_set(err, rc, "time zone %s: %s", name, rerr.msg);
    else
        rc = tw_tz_parse(name, b.data, b.len, out, err);
    tw_buf_cleanup(&b);
    return rc;
}
