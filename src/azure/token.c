/* token.c - managed-identity access tokens from IMDS. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "azure/imds.h"
#include "core/jsonx.h"

/* A decimal string (IMDS) or a number; "" or absent leaves *OUT 0. */
static bool num(const json_t *o, const char *key, int64_t *out)
{
    const json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0))
        return true;
    return tw_json_decimal(v, out);
}

static bool copy(const json_t *v, char *dst, size_t dstlen)
{
    size_t n = json_string_length(v);
    if (!json_is_string(v) || n >= dstlen || strlen(json_string_value(v)) != n)
        return false;
    memcpy(dst, json_string_value(v), n + 1);
    return true;
}

enum tw_err tw_az_token_parse(const char *buf, size_t len, struct tw_az_token *t,
                              struct tw_error *err)
{
    memset(t, 0, sizeof(*t));
    json_t *root = tw_json_load(buf, len, 0, "IMDS token answer", err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    const json_t *e = json_object_get(root, "error"), *v;
    if (!json_is_object(root)) {
        rc = tw_error_set(err, TW_EPARSE, "IMDS token answer: not a JSON object");
    } else if (json_is_string(e)) {
        const json_t *d = json_object_get(root, "error_description");
        rc = tw_error_set(err, TW_EPERM, "IMDS refused a token: %.100s%s%.300s",
                          json_string_value(e), json_is_string(d) ? ": " : "",
                          json_is_string(d) ? json_string_value(d) : "");
    } else if (!(v = json_object_get(root, "access_token"))) {
        rc = tw_error_set(err, TW_EPARSE, "IMDS token answer: access_token is missing");
    } else if (!copy(v, t->access_token, sizeof(t->access_token)) || !t->access_token[0]) {
        rc = tw_error_set(err, TW_EPARSE,
                          "IMDS token answer: access_token must be a string of "
                          "1 to %zu bytes",
                          sizeof(t->access_token) - 1);
    } else if (!num(root, "expires_in", &t->expires_in) ||
               !num(root, "expires_on", &t->expires_on)) {
        rc = tw_error_set(err, TW_EPARSE,
                          "IMDS token answer: expires_in and expires_on must be "
                          "whole numbers of seconds");
    } else {
        v = json_object_get(root, "token_type");
        if (v && !json_is_null(v) && !copy(v, t->token_type, sizeof(t->token_type)))
            rc = tw_error_set(err, TW_EPARSE,
                              "IMDS token answer: token_type must be a short "
                              "string");
        v = json_object_get(root, "resource");
        if (rc == TW_OK && v && !json_is_null(v) && !copy(v, t->resource, sizeof(t->resource)))
            rc = tw_error_set(err, TW_EPARSE,
                              "IMDS token answer: resource must be a string "
                              "under %zu bytes",
                              sizeof(t->resource));
        /* The 2023 spec example leaves token_type out; it is a bearer token. */
        if (rc == TW_OK && !t->token_type[0])
            memcpy(t->token_type, "Bearer", sizeof("Bearer"));
    }
    json_decref(root);
    if (rc != TW_OK)
        memset(t, 0, sizeof(*t));
    return rc;
}

/* Percent-encodes S into OUT (query-component rules). */
static bool encode(const char *s, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
        if (o + (plain ? 1 : 3) >= outlen)
            return false;
        if (plain) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return true;
}

enum tw_err tw_az_token_fetch(const struct tw_az_http_opts *o, const char *imds_base,
                              const char *resource, const char *client_id, struct tw_az_token *t,
                              struct tw_error *err)
{
    memset(t, 0, sizeof(*t));
    struct tw_az_http_opts opts;
    if (o)
        opts = *o;
    else
        tw_az_http_opts_imds(&opts);
    opts.retry_not_found = true;
    char res[768], cid[256], url[2048];
    if (!encode(resource, res, sizeof(res)) ||
        !encode(client_id ? client_id : "", cid, sizeof(cid)))
        return tw_error_set(err, TW_EINVAL, "the token resource or client id is too long");
    if ((size_t)snprintf(url, sizeof(url),
                         "%s/metadata/identity/oauth2/token?api-version=%s&resource=%s%s%s",
                         imds_base, TW_AZ_IMDS_TOKEN_API_VERSION, res, cid[0] ? "&client_id=" : "",
                         cid) >= sizeof(url))
        return tw_error_set(err, TW_EINVAL, "the IMDS URL %s is too long", imds_base);
    struct tw_az_http *h = tw_az_http_new(&opts, err);
    if (!h)
        return TW_ENOMEM;
    static const char *const hdrs[] = {"Metadata: true", "Accept: application/json", NULL};
    struct tw_az_http_resp resp;
    enum tw_err rc = tw_az_http_request(h, "GET", url, hdrs, NULL, 0, &resp, err);
    if (rc == TW_OK)
        rc = tw_az_token_parse(resp.body.data ? resp.body.data : "", resp.body.len, t, err);
    tw_az_http_resp_cleanup(&resp);
    tw_az_http_free(h);
    return rc;
}
