/*
 * route.c - matching request paths against the route table.
 */
#include "server/route.h"

#include <stdio.h>
#include <string.h>

/* Reads an id segment of LEN bytes at S: 1..18 digits, no leading zero. */
static bool parse_id(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 18 || s[0] == '0')
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Reads a name segment of LEN bytes at S into OUT. */
static bool parse_name(const char *s, size_t len, char out[TW_ROUTE_NAME_MAX])
{
    if (len == 0 || len >= TW_ROUTE_NAME_MAX || s[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    memcpy(out, s, len);
    out[len] = '\0';
    return true;
}

bool tw_route_match(const char *pattern, const char *path, int64_t *id)
{
    struct tw_route_params p;
    bool ok = tw_route_match_params(pattern, path, &p);
    if (id)
        *id = ok ? p.id : 0;
    return ok;
}

bool tw_route_match_params(const char *pattern, const char *path,
                           struct tw_route_params *params)
{
    int64_t got = 0;
    char name[TW_ROUTE_NAME_MAX] = "";
    if (params) {
        params->id = 0;
        params->name[0] = '\0';
    }
    if (!pattern || !path || path[0] != '/' || pattern[0] != '/')
        return false;
    const char *p = pattern + 1, *s = path + 1;
    for (;;) {
        const char *pe = strchr(p, '/'), *se = strchr(s, '/');
        size_t pl = pe ? (size_t)(pe - p) : strlen(p);
        size_t sl = se ? (size_t)(se - s) : strlen(s);
        if (pl == 4 && memcmp(p, "{id}", 4) == 0) {
            if (!parse_id(s, sl, &got))
                return false;
        } else if (pl == 6 && memcmp(p, "{name}", 6) == 0) {
            if (!parse_name(s, sl, name))
                return false;
        } else if (pl != sl || memcmp(p, s, pl) != 0) {
            return false;
        }
        if (!pe || !se) {
            if (pe || se)
                return false; /* one has more segments than the other */
            break;
        }
        p = pe + 1;
        s = se + 1;
    }
    if (params) {
        params->id = got;
        memcpy(params->name, name, sizeof(name));
    }
    return true;
}

void tw_route_find(const struct tw_route *routes, size_t n, const char *method, const char *path,
                   struct tw_route_lookup *out)
{
    memset(out, 0, sizeof(*out));
    bool head = strcmp(method, "HEAD") == 0;
    size_t alen = 0;
    for (size_t i = 0; i < n; i++) {
        struct tw_route_params prm;
        if (!tw_route_match_params(routes[i].pattern, path, &prm))
            continue;
        out->path_known = true;
        bool get = strcmp(routes[i].method, "GET") == 0;
        /* The Allow list: each method once, GET bringing HEAD. */
        const char *names[2] = {routes[i].method, get ? "HEAD" : NULL};
        for (int k = 0; k < 2 && names[k]; k++) {
            size_t nl = strlen(names[k]);
            bool listed = false;
            for (const char *q = out->allow; (q = strstr(q, names[k])) != NULL; q += nl)
                if ((q == out->allow || q[-1] == ' ') && (q[nl] == ',' || q[nl] == '\0'))
                    listed = true;
            if (!listed && alen + nl + 3 < sizeof(out->allow))
                alen += (size_t)snprintf(out->allow + alen, sizeof(out->allow) - alen, "%s%s",
                                         alen ? ", " : "", names[k]);
        }
        if (!out->route && (strcmp(routes[i].method, method) == 0 || (head && get))) {
            out->route = &routes[i];
            out->index = i;
            out->id = prm.id;
            memcpy(out->name, prm.name, sizeof(out->name));
        }
    }
}
