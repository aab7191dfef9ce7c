/*
 * authn.c - a request's bearer token checked against the route's roles:
 * hashed, looked up in a small cache (TW_AUTH_CACHE_TTL_MS) or the store.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <string.h>

/* ---- authentication ---- */

/* The role of the token hashing to HASH: from the cache, or the store.
 * TW_ENOENT when there is no such token (or it was revoked). */
static enum tw_err token_role(struct tw_server *srv, const uint8_t hash[32], enum tw_role *role,
                              struct tw_error *err)
{
    int64_t now = tw_srv_mono_ms();
    bool found = false;
    pthread_mutex_lock(&srv->auth_lock);
    /* Every live entry is compared, in constant time each. */
    for (size_t i = 0; i < TW_AUTH_CACHE; i++) {
        const struct auth_entry *e = &srv->auth[i];
        bool live = e->expires_ms > now;
        if (tw_auth_hash_equal(e->hash, hash) && live && !found) {
            *role = e->role;
            found = true;
        }
    }
    pthread_mutex_unlock(&srv->auth_lock);
    if (found)
        return TW_OK;
    struct tw_store *st = tw_srv_store_get(srv, err);
    if (!st)
        return err->code ? err->code : TW_EIO;
    enum tw_err rc = tw_store_token_lookup(st, hash, role, NULL, 0, err);
    tw_srv_store_put(srv, st);
    if (rc != TW_OK)
        return rc;
    pthread_mutex_lock(&srv->auth_lock);
    size_t slot = 0;
    for (size_t i = 0; i < TW_AUTH_CACHE; i++)
        if (srv->auth[i].expires_ms < srv->auth[slot].expires_ms)
            slot = i; /* the oldest (or an empty) entry */
    memcpy(srv->auth[slot].hash, hash, 32);
    srv->auth[slot].role = *role;
    srv->auth[slot].expires_ms = now + TW_AUTH_CACHE_TTL_MS;
    pthread_mutex_unlock(&srv->auth_lock);
    return TW_OK;
}

/* Checks the request's token against the route's roles; false when an
 * error answer was set. */
bool tw_srv_authenticate(struct tw_req *rq)
{
    const struct tw_route *r = rq->route;
    if (r->roles == TW_AUTH_PUBLIC)
        return true;
    const char *h =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h) {
        tw_req_error(rq, 401, "unauthorized",
                     "%s %s needs an API token: send \"Authorization: Bearer TOKEN\" "
                     "(tierwise token create makes one)",
                     r->method, r->pattern);
        return false;
    }
    const char *tok;
    size_t tok_len;
    if (!tw_auth_parse_bearer(h, strlen(h), &tok, &tok_len)) {
        tw_req_error(rq, 401, "invalid_token",
                     "the Authorization header is not \"Bearer TOKEN\" with a tierwise token");
        return false;
    }
    uint8_t hash[32];
    struct tw_error err = {0};
    enum tw_role role = TW_ROLE_READER;
    enum tw_err rc = tw_auth_hash(tok, tok_len, hash, &err);
    if (rc == TW_OK)
        rc = token_role(rq->srv, hash, &role, &err);
    if (rc == TW_ENOENT) {
        tw_req_error(rq, 401, "invalid_token",
                     "this token is not known or was revoked (tierwise token list shows them)");
        return false;
    }
    if (rc != TW_OK) {
        tw_req_error(rq, 500, "store_failed", "can't check the token: %s",
                     err.msg[0] ? err.msg : tw_strerror(rc));
        return false;
    }
    if (!tw_auth_role_allowed(role, r->roles)) {
        char allowed[64] = "";
        for (int k = TW_ROLE_AGENT; k <= TW_ROLE_ADMIN; k++)
            if (r->roles & (1u << k) || k == TW_ROLE_ADMIN)
                snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
                         allowed[0] ? " or " : "", tw_role_name((enum tw_role)k));
        tw_req_error(rq, 403, "forbidden", "%s %s is for %s tokens; this one is %s %s token",
                     r->method, r->pattern, allowed, role == TW_ROLE_READER ? "a" : "an",
                     tw_role_name(role));
        return false;
    }
    rq->role = role;
    return true;
}

