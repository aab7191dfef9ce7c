/*
 * cred.c - where ARM's bearer token comes from: a managed identity (IMDS),
 * client credentials against the Entra ID login endpoint, or a token the
 * caller gives; one token cached until shortly before it expires.
 *
 * The secret and the token are never put in a message: the login's error
 * text is the login's own (its error code and the first line of its
 * description; never the answer's raw body, which could echo the request),
 * and every message this file makes is scrubbed of the secret, raw and
 * percent-encoded, before it is returned, so even a login that echoed it
 * back could not get it into a log.
 */
#include "azure/arm.h"
#include "azure/imds.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN_MAX 16384
#define ARM_RESOURCE "https://management.azure.com/"
#define ARM_SCOPE "https://management.azure.com/.default"

struct tw_arm_cred {
    pthread_mutex_t mu;
    enum tw_arm_cred_kind kind;
    char *imds_url, *login_url, *tenant, *client, *secret;
    struct tw_az_http_opts http, imds_http;
    long refresh_before_s;
    char token[TOKEN_MAX];
    int64_t expires_ms; /* CLOCK_MONOTONIC; 0: none cached */
    int64_t margin_ms;  /* renew this long before expires_ms */
    long fetches;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Overwrites N bytes so the compiler can't drop it. */
static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

static void free_secret(char *s)
{
    if (s) {
        wipe(s, strlen(s));
        free(s);
    }
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

enum tw_err tw_arm_cred_from_env(struct tw_arm_cred_opts *o, const char *secret_file,
                                 char *secret_buf, size_t cap, struct tw_error *err)
{
    memset(o, 0, sizeof(*o));
    const char *tenant = env("AZURE_TENANT_ID"), *client = env("AZURE_CLIENT_ID"),
               *secret = env("AZURE_CLIENT_SECRET");
    if (secret_file) {
        FILE *f = fopen(secret_file, "r");
        if (!f)
            return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO,
                                "--client-secret-file %s: %s", secret_file, strerror(errno));
        bool ok = fgets(secret_buf, (int)cap, f) != NULL;
        bool whole = ok && (strchr(secret_buf, '\n') || feof(f) || fgetc(f) == EOF);
        fclose(f);
        if (!ok) {
            wipe(secret_buf, cap);
            return tw_error_set(err, TW_EINVAL,
                                "--client-secret-file %s is empty: its first line must be the "
                                "client secret",
                                secret_file);
        }
        if (!whole) {
            wipe(secret_buf, cap);
            return tw_error_set(err, TW_EINVAL,
                                "--client-secret-file %s: the first line is longer than %zu "
                                "bytes",
                                secret_file, cap - 2);
        }
        secret_buf[strcspn(secret_buf, "\r\n")] = '\0';
        if (!secret_buf[0])
            return tw_error_set(err, TW_EINVAL,
                                "--client-secret-file %s: the first line is empty; it must be "
                                "the client secret",
                                secret_file);
        secret = secret_buf;
    }
    if (!tenant && !client && !secret) {
        o->kind = TW_ARM_CRED_MANAGED_IDENTITY;
        return TW_OK;
    }
    if (!tenant || !client || !secret) {
        char missing[160] = "";
        const char *names[] = {"AZURE_TENANT_ID", "AZURE_CLIENT_ID",
                               "AZURE_CLIENT_SECRET (or --client-secret-file)"};
        const char *vals[] = {tenant, client, secret};
        for (int i = 0; i < 3; i++)
            if (!vals[i])
                snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
                         missing[0] ? " and " : "", names[i]);
        return tw_error_set(err, TW_EINVAL,
                            "client credentials need AZURE_TENANT_ID, AZURE_CLIENT_ID and a "
                            "secret: %s %s not set (unset them all for the managed identity)",
                            missing, strstr(missing, " and ") ? "are" : "is");
    }
    o->kind = TW_ARM_CRED_CLIENT_SECRET;
    o->tenant_id = tenant;
    o->client_id = client;
    o->client_secret = secret;
    return TW_OK;
}

/* A tenant is a GUID or a domain name: nothing that changes the path. */
static bool tenant_ok(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)t[i]) && t[i] != '-' && t[i] != '.' && t[i] != '_')
            return false;
    return true;
}

static char *dup_or_null(const char *s, bool *ok)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *ok = false;
    return d;
}

void tw_arm_cred_free(struct tw_arm_cred *c)
{
    if (!c)
        return;
    free(c->imds_url);
    free(c->login_url);
    free(c->tenant);
    free(c->client);
    free_secret(c->secret);
    wipe(c->token, sizeof(c->token));
    pthread_mutex_destroy(&c->mu);
    free(c);
}

enum tw_err tw_arm_cred_new(const struct tw_arm_cred_opts *o, const struct tw_az_http_opts *h,
                            struct tw_arm_cred **out, struct tw_error *err)
{
    *out = NULL;
    switch (o->kind) {
    case TW_ARM_CRED_MANAGED_IDENTITY:
        if (!o->imds_url || !*o->imds_url)
            return tw_error_set(err, TW_EINVAL, "the managed identity needs the IMDS URL");
        break;
    case TW_ARM_CRED_CLIENT_SECRET:
        if (!o->login_url || !*o->login_url)
            return tw_error_set(err, TW_EINVAL, "client credentials need the login URL");
        if (!o->tenant_id || !tenant_ok(o->tenant_id))
            return tw_error_set(err, TW_EINVAL,
                                "AZURE_TENANT_ID must be a tenant id (a GUID) or a domain name");
        if (!o->client_id || !*o->client_id || strlen(o->client_id) > 256)
            return tw_error_set(err, TW_EINVAL, "AZURE_CLIENT_ID must be 1 to 256 bytes");
        if (!o->client_secret || !*o->client_secret || strlen(o->client_secret) > 4096)
            return tw_error_set(err, TW_EINVAL, "the client secret must be 1 to 4096 bytes");
        break;
    case TW_ARM_CRED_BEARER:
        if (!o->bearer || !*o->bearer || strlen(o->bearer) >= TOKEN_MAX ||
            strpbrk(o->bearer, "\r\n "))
            return tw_error_set(err, TW_EINVAL,
                                "the bearer token must be 1 to %d bytes without spaces or line "
                                "breaks",
                                TOKEN_MAX - 1);
        break;
    default: return tw_error_set(err, TW_EINVAL, "unknown credential kind %d", (int)o->kind);
    }
    if (o->refresh_before_s < 0)
        return tw_error_set(err, TW_EINVAL, "refresh_before_s must not be negative");
    struct tw_arm_cred *c = calloc(1, sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory for a credential");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return tw_error_set(err, TW_ENOMEM, "a credential's lock can't be made");
    }
    bool ok = true;
    c->kind = o->kind;
    c->imds_url = dup_or_null(o->imds_url, &ok);
    c->login_url = dup_or_null(o->login_url, &ok);
    c->tenant = dup_or_null(o->tenant_id, &ok);
    c->client = dup_or_null(o->client_id, &ok);
    c->secret = dup_or_null(o->client_secret, &ok);
    if (!ok) {
        tw_arm_cred_free(c);
        return tw_error_set(err, TW_ENOMEM, "out of memory for a credential");
    }
    if (h)
        c->http = *h;
    else
        tw_az_http_opts_default(&c->http);
    /* The login is an ordinary endpoint; IMDS keeps its short timeouts and
     * no proxy, with the caller's sleep and loopback choice. */
    c->http.before_attempt = NULL;
    tw_az_http_opts_imds(&c->imds_http);
    c->imds_http.sleep_ms = c->http.sleep_ms;
    c->imds_http.sleep_arg = c->http.sleep_arg;
    c->imds_http.loopback_only = c->imds_http.loopback_only || c->http.loopback_only;
    c->refresh_before_s = o->refresh_before_s ? o->refresh_before_s : 300;
    if (o->kind == TW_ARM_CRED_BEARER)
        memcpy(c->token, o->bearer, strlen(o->bearer) + 1);
    *out = c;
    return TW_OK;
}

long tw_arm_cred_fetches(const struct tw_arm_cred *c)
{
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    long n = c->fetches;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
    return n;
}

/* Percent-encodes S (form rules: unreserved kept, the rest %XX). */
static bool form_encode(struct tw_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char e[3];
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            if (tw_buf_append(b, s, 1) != TW_OK)
                return false;
            continue;
        }
        e[0] = '%';
        e[1] = hex[ch >> 4];
        e[2] = hex[ch & 15];
        if (tw_buf_append(b, e, 3) != TW_OK)
            return false;
    }
    return true;
}

/* Replaces every copy of NEEDLE in ERR's message. */
static void scrub_one(struct tw_error *err, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return;
    size_t keep = n < 3 ? n : 3;
    char *p;
    while ((p = strcasestr(err->msg, needle)) != NULL) {
        memset(p, '*', keep);
        memmove(p + keep, p + n, strlen(p + n) + 1);
    }
}

/* Replaces every copy of the secret in ERR's message: as it is and as the
 * login request's body carries it (percent-encoded, %XX in either case),
 * since a login or a proxy that echoes the request would hand back the
 * encoded form. */
static void scrub(struct tw_error *err, const char *secret)
{
    if (!err || !secret || !*secret)
        return;
    scrub_one(err, secret);
    struct tw_buf enc;
    tw_buf_init(&enc, 3 * strlen(secret) + 1);
    if (form_encode(&enc, secret) && tw_buf_append(&enc, "", 1) == TW_OK && enc.data) {
        /* The case of the hex digits is the echo's: strcasestr covers it;
         * the secret's own letters are compared without case too, which
         * only ever scrubs more. */
        scrub_one(err, enc.data);
        wipe(enc.data, enc.len);
    }
    tw_buf_cleanup(&enc);
}

static enum tw_err fetch_login(struct tw_arm_cred *c, int64_t *life_s, struct tw_error *err)
{
    char url[1024];
    if ((size_t)snprintf(url, sizeof(url), "%s/%s/oauth2/v2.0/token", c->login_url, c->tenant) >=
        sizeof(url))
        return tw_error_set(err, TW_EINVAL, "the login URL %.200s is too long", c->login_url);
    struct tw_buf body;
    tw_buf_init(&body, 64u << 10);
    bool ok = tw_buf_append(&body, "grant_type=client_credentials&client_id=", 40) == TW_OK &&
              form_encode(&body, c->client) &&
              tw_buf_append(&body, "&client_secret=", 15) == TW_OK &&
              form_encode(&body, c->secret) && tw_buf_append(&body, "&scope=", 7) == TW_OK &&
              form_encode(&body, ARM_SCOPE);
    if (!ok) {
        wipe(body.data, body.len);
        tw_buf_cleanup(&body);
        return tw_error_set(err, TW_ENOMEM, "out of memory for the login request");
    }
    struct tw_az_http *h = tw_az_http_new(&c->http, err);
    if (!h) {
        wipe(body.data, body.len);
        tw_buf_cleanup(&body);
        return TW_ENOMEM;
    }
    static const char *const hdrs[] = {"Content-Type: application/x-www-form-urlencoded",
                                       "Accept: application/json", NULL};
    struct tw_az_http_resp resp;
    struct tw_error herr = {0};
    enum tw_err rc = tw_az_http_request(h, "POST", url, hdrs, body.data, body.len, &resp, &herr);
    wipe(body.data, body.len);
    tw_buf_cleanup(&body);
    const char *rb = resp.body.data ? resp.body.data : "";
    /* The login answer's raw body never goes into a message (it may echo
     * the request, secret included): only its parsed error and
     * description, or what kind of answer it was. */
    if (rc == TW_OK) {
        rc = tw_arm_login_parse(rb, resp.body.len, c->token, sizeof(c->token), life_s, err);
        if (rc != TW_OK && err) {
            char m[sizeof(err->msg)];
            snprintf(m, sizeof(m), "POST %.200s: %.300s", url, err->msg);
            memcpy(err->msg, m, sizeof(m));
        }
    } else if (resp.status >= 400 && resp.status <= 499) {
        /* Entra answers a refused client with 400/401 and
         * {"error": "invalid_client", "error_description": "AADSTS..."}.
         * Any 4xx is a refusal of these credentials or this request:
         * TW_EPERM (ARM's client calls it auth), never "network". */
        struct tw_error perr = {0};
        int64_t ignored;
        char scratch[64];
        if (tw_arm_login_parse(rb, resp.body.len, scratch, sizeof(scratch), &ignored, &perr) ==
            TW_EPERM)
            rc = tw_error_set(err, TW_EPERM,
                              "POST %s: HTTP %ld: %s (client %.80s in tenant %.80s; check "
                              "AZURE_CLIENT_ID, the secret and its expiry)",
                              url, resp.status, perr.msg, c->client, c->tenant);
        else
            rc = tw_error_set(err, TW_EPERM,
                              "POST %s: HTTP %ld: the login refused the request without an "
                              "OAuth error (%zu bytes, not shown) (client %.80s in tenant "
                              "%.80s; check the login URL, AZURE_TENANT_ID and "
                              "AZURE_CLIENT_ID)",
                              url, resp.status, resp.body.len, c->client, c->tenant);
        wipe(scratch, sizeof(scratch));
        wipe(&perr, sizeof(perr));
    } else if (resp.status != 0) {
        rc = tw_error_set(err, TW_EIO,
                          "POST %s: HTTP %ld%s from the login (%zu bytes of answer, not shown); "
                          "try again later",
                          url, resp.status, resp.attempts > 1 ? " after retries" : "",
                          resp.body.len);
    } else {
        /* No answer: the http client's words hold no body. */
        rc = tw_error_set(err, rc, "%s", herr.msg);
    }
    wipe(&herr, sizeof(herr));
    if (resp.body.data)
        wipe(resp.body.data, resp.body.len);
    tw_az_http_resp_cleanup(&resp);
    tw_az_http_free(h);
    return rc;
}

static enum tw_err fetch_msi(struct tw_arm_cred *c, int64_t *life_s, struct tw_error *err)
{
    struct tw_az_token *t = malloc(sizeof(*t));
    if (!t)
        return tw_error_set(err, TW_ENOMEM, "out of memory for a token");
    enum tw_err rc = tw_az_token_fetch(&c->imds_http, c->imds_url, ARM_RESOURCE, NULL, t, err);
    if (rc == TW_OK) {
        if (strpbrk(t->access_token, "\r\n ")) {
            rc = tw_error_set(err, TW_EPARSE, "IMDS token answer: the token holds a space or a "
                                              "line break");
        } else {
            memcpy(c->token, t->access_token, strlen(t->access_token) + 1);
            *life_s = t->expires_in;
            if (*life_s <= 0 && t->expires_on > 0)
                *life_s = t->expires_on - (int64_t)time(NULL);
        }
    }
    wipe(t, sizeof(*t));
    free(t);
    return rc;
}

enum tw_err tw_arm_cred_token(struct tw_arm_cred *c, char *out, size_t cap,
                              struct tw_error *err)
{
    if (cap)
        out[0] = '\0';
    pthread_mutex_lock(&c->mu);
    enum tw_err rc = TW_OK;
    int64_t now = mono_ms();
    bool fresh = c->token[0] && (c->kind == TW_ARM_CRED_BEARER ||
                                 (c->expires_ms && now < c->expires_ms - c->margin_ms));
    if (!fresh) {
        int64_t life = 0;
        c->token[0] = '\0';
        c->expires_ms = 0;
        c->fetches++;
        rc = c->kind == TW_ARM_CRED_CLIENT_SECRET ? fetch_login(c, &life, err)
                                                  : fetch_msi(c, &life, err);
        if (rc == TW_OK) {
            /* A token without a lifetime is used once and not kept. */
            c->expires_ms = life > 0 ? now + life * 1000 : 0;
            /* Renewed refresh_before_s before it expires, or at half its
             * life when that is shorter: a token of 5 minutes or less is
             * still reused, not fetched again on every call. */
            c->margin_ms = c->refresh_before_s * 1000;
            if (life > 0 && c->margin_ms > life * 500)
                c->margin_ms = life * 500;
        } else {
            wipe(c->token, sizeof(c->token));
        }
    }
    if (rc == TW_OK) {
        size_t n = strlen(c->token);
        if (n >= cap)
            rc = tw_error_set(err, TW_ENOMEM, "the access token (%zu bytes) does not fit", n);
        else
            memcpy(out, c->token, n + 1);
        if (!c->expires_ms && c->kind != TW_ARM_CRED_BEARER)
            wipe(c->token, sizeof(c->token));
    }
    if (rc != TW_OK)
        scrub(err, c->secret);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
