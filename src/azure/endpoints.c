/* endpoints.c - base URLs by flag > environment > config file > default. */
#include "azure/endpoints.h"
#include "core/jsonx.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "core/buf.h"

static const struct {
    const char *name, *flag, *env, *key, *def;
} eps[TW_AZ_EP_COUNT] = {
    {"IMDS", "--imds-url", "TIERWISE_IMDS_URL", "imds_url", "http://169.254.169.254"},
    {"ARM", "--arm-url", "TIERWISE_ARM_URL", "arm_url", "https://management.azure.com"},
    {"login", "--login-url", "TIERWISE_LOGIN_URL", "login_url",
     "https://login.microsoftonline.com"},
    {"Retail Prices", "--prices-url", "TIERWISE_PRICES_URL", "prices_url",
     "https://prices.azure.com"},
};

const char *tw_az_ep_name(enum tw_az_ep ep)
{
    return eps[ep].name;
}
const char *tw_az_ep_flag(enum tw_az_ep ep)
{
    return eps[ep].flag;
}
const char *tw_az_ep_env(enum tw_az_ep ep)
{
    return eps[ep].env;
}
const char *tw_az_ep_key(enum tw_az_ep ep)
{
    return eps[ep].key;
}
const char *tw_az_ep_default(enum tw_az_ep ep)
{
    return eps[ep].def;
}

const char *tw_az_ep_source_name(const struct tw_az_endpoints *e, enum tw_az_ep ep)
{
    switch (e->from[ep]) {
    case TW_AZ_FROM_FLAG: return eps[ep].flag;
    case TW_AZ_FROM_ENV: return eps[ep].env;
    case TW_AZ_FROM_CONFIG: return "the config file";
    case TW_AZ_FROM_DEFAULT: break;
    }
    return "the default";
}

/* ---- validation ---- */

static bool host_name_ok(const char *h, size_t n)
{
    if (n == 0 || n > 253)
        return false;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (c == '.') {
            if (label == 0 || h[i - 1] == '-')
                return false;
            label = 0;
            continue;
        }
        if (!isalnum((unsigned char)c) && c != '-')
            return false;
        if (c == '-' && label == 0)
            return false;
        if (++label > 63)
            return false;
    }
    return h[n - 1] != '-';
}

static bool all_digits_dots(const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)h[i]) && h[i] != '.')
            return false;
    return true;
}

enum tw_err tw_az_url_validate(const char *url, const char *where, char *out, size_t outlen,
                               struct tw_error *err)
{
    size_t len = strlen(url);
    if (len == 0)
        return tw_error_set(err, TW_EINVAL,
                            "%s is empty: give a base URL such as "
                            "http://127.0.0.1:8080",
                            where);
    if (len >= TW_AZ_URL_MAX || len >= outlen)
        return tw_error_set(err, TW_EINVAL, "%s is longer than %d bytes", where, TW_AZ_URL_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '%')
            return tw_error_set(err, TW_EINVAL,
                                "%s \"%s\" holds a space, control, non-ASCII, "
                                "'\\\\' or '%%' character at byte %zu",
                                where, url, i + 1);
    }
    const char *sep = strstr(url, "://");
    size_t slen = sep ? (size_t)(sep - url) : 0;
    bool https = slen == 5 && strncasecmp(url, "https", 5) == 0;
    if (!sep || !(https || (slen == 4 && strncasecmp(url, "http", 4) == 0)))
        return tw_error_set(err, TW_EINVAL, "%s \"%s\" must start with http:// or https://", where,
                            url);
    const char *auth = sep + 3;
    const char *bad = strpbrk(auth, "@?#");
    if (bad)
        return tw_error_set(err, TW_EINVAL,
                            "%s \"%s\": '%c' has no place in a base URL: give "
                            "only scheme, host and port",
                            where, url, *bad);
    const char *host = auth, *host_end, *rest;
    if (*auth == '[') {
        host = auth + 1;
        host_end = strchr(host, ']');
        char a6[64];
        struct in6_addr tmp;
        if (!host_end || (size_t)(host_end - host) >= sizeof(a6))
            return tw_error_set(err, TW_EINVAL,
                                "%s \"%s\": the IPv6 address has no closing "
                                "']'",
                                where, url);
        memcpy(a6, host, (size_t)(host_end - host));
        a6[host_end - host] = '\0';
        if (inet_pton(AF_INET6, a6, &tmp) != 1)
            return tw_error_set(err, TW_EINVAL, "%s \"%s\": \"%s\" is not an IPv6 address", where,
                                url, a6);
        rest = host_end + 1;
    } else {
        host_end = auth + strcspn(auth, ":/");
        rest = host_end;
        size_t hn = (size_t)(host_end - host);
        if (hn == 0)
            return tw_error_set(err, TW_EINVAL, "%s \"%s\" has no host", where, url);
        char h4[256];
        struct in_addr tmp;
        if (all_digits_dots(host, hn)) {
            memcpy(h4, host, hn < sizeof(h4) ? hn : sizeof(h4) - 1);
            h4[hn < sizeof(h4) ? hn : sizeof(h4) - 1] = '\0';
            if (inet_pton(AF_INET, h4, &tmp) != 1)
                return tw_error_set(err, TW_EINVAL, "%s \"%s\": \"%s\" is not an IPv4 address",
                                    where, url, h4);
        } else if (!host_name_ok(host, hn)) {
            return tw_error_set(err, TW_EINVAL, "%s \"%s\": \"%.*s\" is not a valid host name",
                                where, url, (int)hn, host);
        }
    }
    if (*rest == ':') {
        const char *p = rest + 1;
        unsigned long port = 0;
        size_t digits = 0;
        while (isdigit((unsigned char)p[digits]) && digits < 6)
            port = port * 10 + (unsigned long)(p[digits++] - '0');
        if (digits == 0 || digits > 5 || port == 0 || port > 65535)
            return tw_error_set(err, TW_EINVAL,
                                "%s \"%s\": the port must be a number from 1 "
                                "to 65535",
                                where, url);
        rest = p + digits;
    }
    if (*rest && strcmp(rest, "/") != 0)
        return tw_error_set(err, TW_EINVAL,
                            "%s \"%s\" has a path \"%s\": give only scheme, "
                            "host and port (tierwise adds the API's paths)",
                            where, url, rest);
    size_t keep = (size_t)(rest - url);
    memcpy(out, url, keep);
    out[keep] = '\0';
    for (size_t i = 0; i < slen; i++)
        out[i] = (char)tolower((unsigned char)out[i]);
    return TW_OK;
}

/* ---- config file ---- */

enum tw_err tw_az_endpoints_parse_config(const char *buf, size_t len, const char *name,
                                         char vals[TW_AZ_EP_COUNT][TW_AZ_URL_MAX],
                                         struct tw_error *err)
{
    for (int i = 0; i < TW_AZ_EP_COUNT; i++)
        vals[i][0] = '\0';
    char what[300];
    snprintf(what, sizeof(what), "config file %.250s", name);
    json_t *root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, what, err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    if (!json_is_object(root)) {
        rc = tw_error_set(err, TW_EPARSE,
                          "config file %s must hold a JSON object such as "
                          "{\"imds_url\": \"http://127.0.0.1:8080\"}",
                          name);
        goto out;
    }
    for (int i = 0; i < TW_AZ_EP_COUNT; i++) {
        const json_t *v = json_object_get(root, eps[i].key);
        if (!v)
            continue;
        if (!json_is_string(v)) {
            rc = tw_error_set(err, TW_EPARSE, "config file %s: %s must be a string (a base URL)",
                              name, eps[i].key);
            goto out;
        }
        size_t n = json_string_length(v);
        if (n >= TW_AZ_URL_MAX || strlen(json_string_value(v)) != n) {
            rc = tw_error_set(err, TW_EPARSE,
                              "config file %s: %s is longer than %d bytes or "
                              "holds a NUL",
                              name, eps[i].key, TW_AZ_URL_MAX - 1);
            goto out;
        }
        if (n == 0) {
            rc = tw_error_set(err, TW_EPARSE,
                              "config file %s: %s is empty; remove the key to "
                              "use the default",
                              name, eps[i].key);
            goto out;
        }
        memcpy(vals[i], json_string_value(v), n + 1);
    }
out:
    json_decref(root);
    return rc;
}

static enum tw_err read_config(const char *path, struct tw_buf *b, struct tw_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO,
                            "can't open config file %s: %s", path, strerror(errno));
    char chunk[8192];
    enum tw_err rc = TW_OK;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = tw_error_set(err, TW_EIO, "reading config file %s failed: %s", path,
                              strerror(errno));
            break;
        }
        if (n == 0)
            break;
        if (tw_buf_append(b, chunk, (size_t)n) != TW_OK) {
            rc = tw_error_set(err, TW_EINVAL,
                              "config file %s is larger than %u bytes: is it "
                              "the right file?",
                              path, TW_AZ_CONFIG_MAX);
            break;
        }
    }
    close(fd);
    return rc;
}

/* ---- resolution ---- */

enum tw_err tw_az_endpoints_resolve(const struct tw_az_ep_args *args, struct tw_az_endpoints *out,
                                    struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    char cfg[TW_AZ_EP_COUNT][TW_AZ_URL_MAX];
    for (int i = 0; i < TW_AZ_EP_COUNT; i++)
        cfg[i][0] = '\0';

    const char *path = args && args->config_path ? args->config_path : NULL;
    const char *path_from = "--config";
    if (!path) {
        path = getenv("TIERWISE_CONFIG");
        path_from = "TIERWISE_CONFIG";
        if (path && !*path)
            path = NULL; /* set but empty: the same as unset */
    }
    if (path) {
        if (!*path)
            return tw_error_set(err, TW_EINVAL, "%s is empty: give the config file's path",
                                path_from);
        if (strlen(path) >= sizeof(out->config_path))
            return tw_error_set(err, TW_EINVAL, "%s: the path is too long", path_from);
        struct tw_buf b;
        tw_buf_init(&b, TW_AZ_CONFIG_MAX);
        enum tw_err rc = read_config(path, &b, err);
        if (rc == TW_OK)
            rc = tw_az_endpoints_parse_config(b.data ? b.data : "", b.len, path, cfg, err);
        tw_buf_cleanup(&b);
        if (rc != TW_OK)
            return rc;
        memcpy(out->config_path, path, strlen(path) + 1);
    }

    for (int i = 0; i < TW_AZ_EP_COUNT; i++) {
        if (args && args->only && !(args->only & (1u << i)))
            continue;
        const char *v = args ? args->url[i] : NULL;
        char where[4200];
        enum tw_az_ep_source from = TW_AZ_FROM_FLAG;
        snprintf(where, sizeof(where), "%s", eps[i].flag);
        if (!v) {
            v = getenv(eps[i].env);
            from = TW_AZ_FROM_ENV;
            snprintf(where, sizeof(where), "%s", eps[i].env);
            /* An empty variable is treated as unset, as shells make it easy
             * to export one by accident. */
            if (v && !*v)
                v = NULL;
        }
        if (!v && cfg[i][0]) {
            v = cfg[i];
            from = TW_AZ_FROM_CONFIG;
            snprintf(where, sizeof(where), "%s in config file %s", eps[i].key, path);
        }
        if (!v) {
            v = eps[i].def;
            from = TW_AZ_FROM_DEFAULT;
            snprintf(where, sizeof(where), "the default %s URL", eps[i].name);
        }
        enum tw_err rc = tw_az_url_validate(v, where, out->url[i], sizeof(out->url[i]), err);
        if (rc != TW_OK)
            return rc;
        out->from[i] = from;
    }
    return TW_OK;
}
