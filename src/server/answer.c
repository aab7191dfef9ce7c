/*
 * answer.c - how handlers answer: JSON bodies, the error envelope
 * {"error":{"code","message"}} with its headers (WWW-Authenticate on 401,
 * Retry-After on 503), and text made safe for JSON and logs.
 */
#include "server/server_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- answers ---- */

static void set_response(struct tw_req *rq, unsigned status, struct MHD_Response *r)
{
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    rq->resp = r;
    rq->status = status;
}

void tw_req_body(struct tw_req *rq, unsigned status, const char *type, char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        set_response(rq, 500, NULL);
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    set_response(rq, status, r);
}

void tw_req_json(struct tw_req *rq, unsigned status, json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    json_decref(v);
    if (!s) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
        s = strdup(oom);
        status = 500;
        if (!s) {
            set_response(rq, 500, NULL);
            return;
        }
    }
    /* A final newline keeps curl's output readable. */
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (t) {
        t[n++] = '\n';
        t[n] = '\0';
        s = t;
    }
    tw_req_body(rq, status, "application/json", s, n);
}

/* Copies MSG into OUT with every byte that is not part of valid UTF-8
 * (or is a control character) replaced by '?': messages quote request
 * paths, headers and query values, and JSON strings must be UTF-8. */
void tw_srv_clean_text(const char *msg, char *out, size_t outlen)
{
    const unsigned char *s = (const unsigned char *)msg;
    size_t o = 0;
    while (*s && o + 5 < outlen) {
        size_t n = 0;
        if (*s >= 0x20 && *s < 0x7f)
            n = 1;
        else if (*s >= 0xc2 && *s <= 0xdf)
            n = 2;
        else if (*s >= 0xe0 && *s <= 0xef)
            n = 3;
        else if (*s >= 0xf0 && *s <= 0xf4)
            n = 4;
        bool good = n > 0;
        for (size_t k = 1; good && k < n; k++)
            good = (s[k] & 0xc0) == 0x80;
        /* No overlong forms, surrogates or code points past U+10FFFF. */
        if (good && n == 3)
            good = !(s[0] == 0xe0 && s[1] < 0xa0) && !(s[0] == 0xed && s[1] >= 0xa0);
        if (good && n == 4)
            good = !(s[0] == 0xf0 && s[1] < 0x90) && !(s[0] == 0xf4 && s[1] >= 0x90);
        if (!good) {
            out[o++] = '?';
            s++;
            continue;
        }
        memcpy(out + o, s, n);
        o += n;
        s += n;
    }
    out[o] = '\0';
}

void tw_req_error_at(struct tw_req *rq, unsigned status, const char *code, long line, long column,
                     const char *msg)
{
    char clean[1024];
    tw_srv_clean_text(msg ? msg : "", clean, sizeof(clean));
    json_t *e = json_pack("{s:s, s:s}", "code", code, "message", clean);
    if (e && line > 0)
        json_object_set_new(e, "line", json_integer(line));
    if (e && column > 0)
        json_object_set_new(e, "column", json_integer(column));
    json_t *v = e ? json_pack("{s:o}", "error", e) : NULL;
    tw_req_json(rq, status, v);
    if (rq->resp && status == 401)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                strcmp(code, "invalid_token") == 0
                                    ? "Bearer realm=\"tierwise\", error=\"invalid_token\""
                                    : "Bearer realm=\"tierwise\"");
    if (rq->resp && status == 503)
        MHD_add_response_header(rq->resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
}

void tw_req_error(struct tw_req *rq, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tw_req_error_at(rq, status, code, 0, 0, msg);
}

void tw_req_store_error(struct tw_req *rq, enum tw_err rc, const struct tw_error *err)
{
    const char *msg = err && err->msg[0] ? err->msg : tw_strerror(rc);
    if (rc == TW_ENOENT)
        tw_req_error(rq, 404, "not_found", "%s", msg);
    else
        tw_req_error(rq, 500, "store_failed", "%s", msg);
}

