/*
 * v1_openapi.c - GET /api/v1/openapi.json: the OpenAPI 3.1 document of the
 * API (src/server/openapi.json, compiled in by src/CMakeLists.txt), so the
 * document served is the one this binary was built with.  No token: it
 * describes the routes and carries no figures of the fleet.
 */
#include "server/server_int.h"

#include <stdlib.h>
#include <string.h>

/* The generated openapi_data.c. */
extern const unsigned char tw_builtin_openapi_json[];
extern const size_t tw_builtin_openapi_json_len;

void tw_v1_openapi(struct tw_req *rq)
{
    char *body = malloc(tw_builtin_openapi_json_len + 1);
    if (!body) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    memcpy(body, tw_builtin_openapi_json, tw_builtin_openapi_json_len);
    tw_req_body(rq, 200, "application/json", body, tw_builtin_openapi_json_len);
}
