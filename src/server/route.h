/*
 * route.h - the REST API's route table: method, path pattern, the roles
 * allowed, and the handler; and matching a request path against it.
 *
 * A pattern is a path whose segments are literal, "{id}", which matches
 * a store id (a decimal integer from 1 to 10^18 - 1, no sign, no leading
 * zero), or "{name}", which matches a name: 1 to TW_ROUTE_NAME_MAX - 1
 * letters, digits, '.', '_' and '-', not starting with '.' (a policy's
 * name: /api/v1/policies/{name}).  A pattern has at most one of each.
 * Matching is exact otherwise (no trailing slash, no empty segment).
 * Paths come decoded from libmicrohttpd.
 */
#ifndef TW_SERVER_ROUTE_H
#define TW_SERVER_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tw_req;

/* A handler answers one request (server_int.h has struct tw_req). */
typedef void (*tw_route_fn)(struct tw_req *rq);

struct tw_route {
    const char *method;  /* "GET", "POST"; GET routes answer HEAD too */
    const char *pattern; /* "/api/v1/vms/{id}" */
    unsigned roles;      /* TW_AUTH_* bits; TW_AUTH_PUBLIC: no token */
    tw_route_fn handler;
    bool body; /* takes a JSON body (application/json) */
};

#define TW_ROUTE_NAME_MAX 128

/* The values of a matched path's "{id}" and "{name}" segments. */
struct tw_route_params {
    int64_t id;                   /* 0 when the pattern has no {id} */
    char name[TW_ROUTE_NAME_MAX]; /* "" when the pattern has no {name} */
};

/* Whether PATH matches PATTERN; the segments' values go to *PARAMS (may
 * be NULL). */
bool tw_route_match_params(const char *pattern, const char *path,
                           struct tw_route_params *params);
/* The same, with only the "{id}" to *ID (0 when none; ID may be NULL). */
bool tw_route_match(const char *pattern, const char *path, int64_t *id);

/* The outcome of looking a request up in a table. */
struct tw_route_lookup {
    const struct tw_route *route; /* the match, NULL when none */
    size_t index;                 /* its index in the table */
    int64_t id;                   /* the {id}, 0 when none */
    char name[TW_ROUTE_NAME_MAX]; /* the {name}, "" when none */
    bool path_known;              /* some route has this path (405 if no route) */
    char allow[64];               /* the methods that path answers: "GET, HEAD" */
};

/* Looks METHOD PATH up in ROUTES (N entries). */
void tw_route_find(const struct tw_route *routes, size_t n, const char *method, const char *path,
                   struct tw_route_lookup *out);

#endif
