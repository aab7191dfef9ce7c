/* fuzz_server_request.c - what the server reads from a request before any
 * handler: the path against the route table (tw_route_find), the
 * Authorization header (tw_auth_parse_bearer) and a dashboard file path
 * (tw_static_rel_path), on arbitrary bytes.  The input is
 * "METHOD\nPATH\nAUTHORIZATION". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/auth.h"
#include "server/route.h"
#include "server/static.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void h(struct tw_req *rq)
{
    (void)rq;
}

static const struct tw_route routes[] = {
    {"GET", "/healthz", TW_AUTH_PUBLIC, h, false},
    {"POST", "/api/v1/reports", TW_AUTH_AGENT, h, true},
    {"GET", "/api/v1/vms", TW_AUTH_READER, h, false},
    {"GET", "/api/v1/vms/{id}", TW_AUTH_READER, h, false},
    {"GET", "/api/v1/disks/{id}", TW_AUTH_READER, h, false},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    /* NUL-terminated copies, as libmicrohttpd hands them over. */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *method = buf, *path = strchr(buf, '\n'), *auth = NULL;
    if (path) {
        *path++ = '\0';
        auth = strchr(path, '\n');
        if (auth)
            *auth++ = '\0';
    } else {
        path = buf;
    }
    struct tw_route_lookup lk;
    tw_route_find(routes, sizeof(routes) / sizeof(routes[0]), method, path, &lk);
    /* A match has a positive id exactly when its pattern has {id}. */
    if (lk.route && (strstr(lk.route->pattern, "{id}") != NULL) != (lk.id > 0))
        abort();
    if (lk.route && !lk.path_known)
        abort();
    char rel[600];
    if (tw_static_rel_path(path, rel, sizeof(rel))) {
        /* Never a way up or out. */
        if (rel[0] == '/' || strstr(rel, "..") == rel || strstr(rel, "/..") || strstr(rel, "//") ||
            strchr(rel, '\\'))
            abort();
    }
    if (auth) {
        const char *tok;
        size_t len;
        if (tw_auth_parse_bearer(auth, strlen(auth), &tok, &len)) {
            if (len == 0 || len > TW_TOKEN_MAX_LEN || tok < auth || tok + len > auth + strlen(auth))
                abort();
            uint8_t hash[32];
            if (tw_auth_hash(tok, len, hash, NULL) != TW_OK)
                abort();
        }
    }
    free(buf);
    return 0;
}
