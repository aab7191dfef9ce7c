/*
 * prices.c - the Retail Prices client (see prices.h): the query, paging by
 * NextPageLink with its guards, the $skip fallback, the deadline.
 */
#include "azure/prices.h"

#include "azure/endpoints.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The five managed-disk products, by their names in the API. */
static const char *const products[] = {"Premium SSD Managed Disks", "Standard SSD Managed Disks",
                                       "Standard HDD Managed Disks", "Azure Premium SSD v2",
                                       "Ultra Disks"};

/* The page sizes the API has used: a page of exactly one of them with no
 * NextPageLink may not be the last. */
static bool full_page(size_t n, size_t largest)
{
    return n > 0 && (n == 100 || n == 1000 || (n >= 100 && n == largest));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Appends S to OUT at *O, percent-encoding all but RFC 3986's unreserved
 * characters.  False when OUT is full. */
static bool put_enc(char *out, size_t outlen, size_t *o, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '-' || c == '.' || c == '_' || c == '~';
        if (*o + (plain ? 1 : 3) >= outlen)
            return false;
        if (plain) {
            out[(*o)++] = (char)c;
        } else {
            out[(*o)++] = '%';
            out[(*o)++] = hex[c >> 4];
            out[(*o)++] = hex[c & 15];
        }
    }
    out[*o] = '\0';
    return true;
}

/* An OData string literal: quoted, a quote inside doubled. */
static bool put_literal(char *out, size_t outlen, size_t *o, const char *v)
{
    char q[256];
    size_t n = 0;
    q[n++] = '\'';
    for (; *v; v++) {
        if (n + 3 >= sizeof(q))
            return false;
        if (*v == '\'')
            q[n++] = '\'';
        q[n++] = *v;
    }
    q[n++] = '\'';
    q[n] = '\0';
    return put_enc(out, outlen, o, q);
}

enum tw_err tw_az_prices_url(const char *base, const char *region, const char *currency, char *out,
                             size_t outlen, struct tw_error *err)
{
    if (!region || !tw_pb_region_ok(region))
        return tw_error_set(err, TW_EINVAL,
                            "region \"%.60s\" is not an Azure region name (lower-case letters "
                            "and digits, e.g. westeurope)",
                            region ? region : "");
    if (!currency || !tw_pb_currency_ok(currency))
        return tw_error_set(err, TW_EINVAL,
                            "currency \"%.20s\" is not one the Retail Prices API offers (USD, "
                            "EUR, GBP, ...)",
                            currency ? currency : "");
    size_t o = 0;
    int n = snprintf(out, outlen, "%s%s?currencyCode=", base, TW_AZ_PRICES_PATH);
    bool ok = n > 0 && (size_t)n < outlen;
    o = ok ? (size_t)n : 0;
    ok = ok && put_literal(out, outlen, &o, currency);
    ok = ok && put_enc(out, outlen, &o, "") && o + 9 < outlen;
    if (ok) {
        memcpy(out + o, "&$filter=", 10);
        o += 9;
    }
    ok = ok && put_enc(out, outlen, &o, "serviceName eq ") &&
         put_literal(out, outlen, &o, "Storage") &&
         put_enc(out, outlen, &o, " and armRegionName eq ") &&
         put_literal(out, outlen, &o, region) && put_enc(out, outlen, &o, " and (");
    for (size_t i = 0; ok && i < sizeof(products) / sizeof(products[0]); i++)
        ok = put_enc(out, outlen, &o, i ? " or productName eq " : "productName eq ") &&
             put_literal(out, outlen, &o, products[i]);
    ok = ok && put_enc(out, outlen, &o, ") and (priceType eq ") &&
         put_literal(out, outlen, &o, "Consumption") &&
         put_enc(out, outlen, &o, " or priceType eq ") &&
         put_literal(out, outlen, &o, "Reservation") && put_enc(out, outlen, &o, ")");
    if (!ok)
        return tw_error_set(err, TW_EINVAL, "the Retail Prices URL under %.200s is too long", base);
    return TW_OK;
}

/* Splits URL into scheme, host and port (the default one when absent) and
 * the rest (path and query).  False when it is not http(s)://host... */
static bool split(const char *url, char *scheme, size_t slen, char *host, size_t hlen, long *port,
                  const char **rest)
{
    const char *p = strstr(url, "://");
    if (!p || (size_t)(p - url) >= slen)
        return false;
    memcpy(scheme, url, (size_t)(p - url));
    scheme[p - url] = '\0';
    long dflt;
    if (strcasecmp(scheme, "https") == 0)
        dflt = 443;
    else if (strcasecmp(scheme, "http") == 0)
        dflt = 80;
    else
        return false;
    p += 3;
    const char *end = p + strcspn(p, "/?#");
    const char *hs = p, *he;
    /* No user information: "https://prices.azure.com@evil/" is evil's. */
    if (memchr(p, '@', (size_t)(end - p)))
        return false;
    if (*p == '[') {
        he = memchr(p, ']', (size_t)(end - p));
        if (!he)
            return false;
        he++;
    } else {
        he = memchr(p, ':', (size_t)(end - p));
        if (!he)
            he = end;
    }
    if (he == hs || (size_t)(he - hs) >= hlen)
        return false;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = '\0';
    *port = dflt;
    if (he < end) {
        if (*he != ':' || he + 1 == end)
            return false;
        long v = 0;
        for (const char *q = he + 1; q < end; q++) {
            if (*q < '0' || *q > '9' || v > 65535)
                return false;
            v = v * 10 + (*q - '0');
        }
        if (v < 1 || v > 65535)
            return false;
        *port = v;
    }
    *rest = end;
    return true;
}

bool tw_az_prices_link_ok(const char *link, const char *base)
{
    char s1[8], s2[8], h1[256], h2[256];
    long p1, p2;
    const char *r1, *r2;
    for (const char *c = link; *c; c++)
        if ((unsigned char)*c <= 0x20 || *c == 0x7f || *c == '\\')
            return false;
    if (!split(link, s1, sizeof(s1), h1, sizeof(h1), &p1, &r1) ||
        !split(base, s2, sizeof(s2), h2, sizeof(h2), &p2, &r2))
        return false;
    if (strcasecmp(s1, s2) != 0 || strcasecmp(h1, h2) != 0 || p1 != p2)
        return false;
    size_t pl = strlen(TW_AZ_PRICES_PATH);
    return strncmp(r1, TW_AZ_PRICES_PATH, pl) == 0 && (r1[pl] == '?' || r1[pl] == '\0');
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The link with its port spelled out if it was left to the default, so
 * "https://h/x" and "https://h:443/x" are recognised as the same page. */
static uint64_t link_key(const char *link)
{
    char s[8], h[256];
    long port;
    const char *rest;
    if (!split(link, s, sizeof(s), h, sizeof(h), &port, &rest))
        return hash_str(link);
    char buf[TW_PRICES_LINK_MAX + 300];
    for (char *c = s; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    for (char *c = h; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    snprintf(buf, sizeof(buf), "%s://%s:%ld%s", s, h, port, rest);
    return hash_str(buf);
}

static void say(const struct tw_az_prices_req *rq, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct tw_az_prices_req *rq, const char *fmt, ...)
{
    if (!rq->log)
        return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    rq->log(rq->log_arg, line);
}

/*
 * A failure's message with its cause first and the URL last: "CAUSE; GET
 * URL" (or "; NextPageLink URL" for a link not followed).  A Retail Prices query is some 600 characters, longer than a
 * message holds, so when both do not fit the URL is the part cut short
 * (its end replaced by "..."), never the cause.  TW_AZ_PRICES_MIN_URL
 * characters of the URL are kept however long the cause is.
 */
#define TW_AZ_PRICES_MIN_URL 60
static enum tw_err url_last(struct tw_error *err, enum tw_err rc, const char *label,
                            const char *url, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static enum tw_err url_last(struct tw_error *err, enum tw_err rc, const char *label,
                            const char *url, const char *fmt, ...)
{
    if (!err)
        return rc;
    char msg[sizeof(err->msg)], sep[32];
    const size_t cap = sizeof(msg) - 1;
    snprintf(sep, sizeof(sep), "; %s ", label);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n;
    size_t room_for_url = TW_AZ_PRICES_MIN_URL + strlen(sep) + 3;
    if (len + room_for_url > cap) { /* a cause longer than most: trim its end */
        len = cap - room_for_url;
        memcpy(msg + len - 3, "...", 3);
    }
    msg[len] = '\0';
    size_t ul = url ? strlen(url) : 0, sl = strlen(sep);
    if (ul) {
        size_t left = cap - len - sl; /* >= TW_AZ_PRICES_MIN_URL + 3 */
        memcpy(msg + len, sep, sl);
        len += sl;
        if (ul <= left) {
            memcpy(msg + len, url, ul);
            len += ul;
        } else {
            memcpy(msg + len, url, left - 3);
            memcpy(msg + len + left - 3, "...", 3);
            len += left;
        }
        msg[len] = '\0';
    }
    return tw_error_set(err, rc, "%s", msg);
}

/*
 * Rewrites a failed request's message around what matters: the page, the
 * status and the API's own {"Error": {"Code", "Message"}}, with the URL
 * last.  The HTTP client's message starts with the whole URL, and a Retail
 * Prices query is long enough to push the cause out of it.
 */
static void describe(const char *url, int page, const struct tw_az_http_resp *resp, enum tw_err rc,
                     struct tw_error *err)
{
    char tries[32] = "";
    if (resp->attempts > 1)
        snprintf(tries, sizeof(tries), ", %d attempts", resp->attempts);
    if (resp->status == 0) {
        if (resp->net == TW_AZ_NET_BLOCKED) {
            url_last(err, rc, "GET", url,
                                  "Retail Prices page %d: %s: loopback-only mode "
                                  "(TIERWISE_LOOPBACK_ONLY) allows 127.0.0.0/8 and ::1 only",
                                  page, tw_az_net_words(resp->net));
            return;
        }
        if (resp->net == TW_AZ_NET_OK) {
            /* Refused before sending; the client's message is "GET URL:
             * CAUSE", the cause lost when the URL filled it. */
            char cause[sizeof(err->msg)];
            size_t ul = strlen(url);
            const char *m = err->msg;
            if (strncmp(m, "GET ", 4) == 0 && strncmp(m + 4, url, ul) == 0 &&
                strncmp(m + 4 + ul, ": ", 2) == 0)
                snprintf(cause, sizeof(cause), "%s", m + 4 + ul + 2);
            else if (strncmp(m, "GET ", 4) == 0 || !m[0])
                snprintf(cause, sizeof(cause), "%s", tw_strerror(rc));
            else
                snprintf(cause, sizeof(cause), "%s", m);
            url_last(err, rc, "GET", url, "Retail Prices page %d: %s", page, cause);
            return;
        }
        url_last(err, rc, "GET", url, "Retail Prices page %d%s: %s", page, tries,
                              tw_az_net_words(resp->net));
        return;
    }
    struct tw_price_items none = {0};
    struct tw_error api = {0};
    char text[400] = "";
    if (resp->body.len &&
        tw_price_page_parse(resp->body.data, resp->body.len, &none, NULL, &api) == TW_EINVAL) {
        /* "the Retail Prices API answered an error: Code: Message" */
        const char *c = strstr(api.msg, "error: ");
        snprintf(text, sizeof(text), ": %.390s", c ? c + 7 : api.msg);
    } else if (resp->body.len) {
        size_t n = resp->body.len < 120 ? resp->body.len : 120;
        snprintf(text, sizeof(text), ": ");
        for (size_t i = 0; i < n; i++) {
            char ch = resp->body.data[i];
            text[2 + i] = (unsigned char)ch < 0x20 || ch == 0x7f ? ' ' : ch;
        }
        text[2 + n] = '\0';
    }
    tw_price_items_cleanup(&none);
    url_last(err, rc, "GET", url, "Retail Prices page %d%s: HTTP %ld%s", page, tries,
                          resp->status, text);
}

enum tw_err tw_az_prices_fetch(const struct tw_az_prices_req *rq, struct tw_price_items *out,
                               struct tw_az_prices_stats *stats, struct tw_error *err)
{
    struct tw_az_prices_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    double t0 = now_s();
    char base[TW_AZ_URL_MAX];
    snprintf(base, sizeof(base), "%s", rq->base ? rq->base : "");
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/')
        base[--bl] = '\0';
    struct tw_az_http_opts o;
    if (rq->http)
        o = *rq->http;
    else
        tw_az_http_opts_default(&o);
    /* A page of 1,000 items is about 700 KB; leave room. */
    if (o.max_body < (16u << 20))
        o.max_body = 16u << 20;
    long deadline = rq->deadline_ms > 0 ? rq->deadline_ms : TW_AZ_PRICES_DEADLINE_MS;
    char *first = malloc(TW_PRICES_LINK_MAX);
    char *url = malloc(TW_PRICES_LINK_MAX);
    struct tw_price_page *page = malloc(sizeof(*page));
    uint64_t *seen = malloc(TW_AZ_PRICES_MAX_PAGES * sizeof(*seen));
    struct tw_az_http *h = NULL;
    size_t had = out->n, largest = 0;
    enum tw_err rc;
    if (!first || !url || !page || !seen) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = tw_az_prices_url(base, rq->region, rq->currency, first, TW_PRICES_LINK_MAX, err)) !=
        TW_OK)
        goto out;
    memcpy(url, first, strlen(first) + 1);
    /* One handle for all pages keeps the connection; no single request may
     * outlast the whole fetch's deadline. */
    if (o.budget_ms > deadline)
        o.budget_ms = deadline;
    if (!(h = tw_az_http_new(&o, err))) {
        rc = TW_ENOMEM;
        goto out;
    }
    for (;;) {
        long spent = (long)((now_s() - t0) * 1000);
        if (spent >= deadline) {
            rc = tw_error_set(err, TW_EIO,
                              "Retail Prices: %d pages read in %ld ms, the deadline of the whole "
                              "refresh; try again later",
                              stats->pages, deadline);
            goto out;
        }
        if (stats->pages >= TW_AZ_PRICES_MAX_PAGES) {
            rc = tw_error_set(err, TW_EIO,
                              "Retail Prices: still more pages after %d; giving up (a region's "
                              "disk prices fill a few)",
                              stats->pages);
            goto out;
        }
        uint64_t key = link_key(url);
        for (int i = 0; i < stats->pages; i++) {
            if (seen[i] == key) {
                rc = url_last(err, TW_EIO, "GET", url,
                                           "Retail Prices: page %d links back to a page "
                                           "already read: a loop of links; not following it",
                                           stats->pages);
                goto out;
            }
        }
        seen[stats->pages] = key;
        const char *hdrs[] = {"Accept: application/json", NULL};
        struct tw_az_http_resp resp;
        rc = tw_az_http_request(h, "GET", url, hdrs, NULL, 0, &resp, err);
        stats->attempts += resp.attempts;
        stats->waited_ms += resp.waited_ms;
        if (rc != TW_OK && rc != TW_ENOMEM)
            describe(url, stats->pages + 1, &resp, rc, err);
        if (rc == TW_OK) {
            double p0 = now_s();
            stats->bytes += resp.body.len;
            struct tw_error perr = {0};
            rc = tw_price_page_parse(resp.body.data ? resp.body.data : "", resp.body.len, out, page,
                                     &perr);
            stats->parse_s += now_s() - p0;
            if (rc != TW_OK)
                url_last(err, rc, "GET", url, "Retail Prices page %d: %s", stats->pages + 1,
                                      perr.msg);
        }
        tw_az_http_resp_cleanup(&resp);
        if (rc != TW_OK)
            goto out;
        stats->pages++;
        if (page->currency[0] && strcmp(page->currency, rq->currency) != 0) {
            rc = tw_error_set(err, TW_EPARSE,
                              "Retail Prices page %d is in %s but %s was asked for: the pages "
                              "disagree, so none is kept",
                              stats->pages, page->currency, rq->currency);
            goto out;
        }
        for (size_t i = out->n - page->items; i < out->n; i++) {
            if (strcmp(out->v[i].currency, rq->currency) != 0) {
                rc = tw_error_set(err, TW_EPARSE,
                                  "Retail Prices page %d has an item in %s but %s was asked for",
                                  stats->pages, out->v[i].currency, rq->currency);
                goto out;
            }
        }
        if (page->items > largest)
            largest = page->items;
        if (page->next[0]) {
            if (!tw_az_prices_link_ok(page->next, base)) {
                rc = url_last(err, TW_EPERM, "NextPageLink", page->next,
                              "Retail Prices page %d links to a host that is not the "
                              "configured endpoint %.200s: refused, a refresh never leaves it",
                              stats->pages, base);
                goto out;
            }
            memcpy(url, page->next, strlen(page->next) + 1);
            continue;
        }
        if (!full_page(page->items, largest))
            break;
        size_t total = out->n - had;
        int n = snprintf(url, TW_PRICES_LINK_MAX, "%s&$skip=%zu", first, total);
        if (n < 0 || n >= TW_PRICES_LINK_MAX) {
            rc = tw_error_set(err, TW_EINVAL, "the Retail Prices URL is too long");
            goto out;
        }
        stats->skip_fallbacks++;
        say(rq,
            "prices: page %d is full (%zu items) but has no NextPageLink; asking for the next "
            "with $skip=%zu",
            stats->pages, page->items, total);
    }
    rc = TW_OK;
out:
    if (rc != TW_OK)
        out->n = had;
    stats->total_s = now_s() - t0;
    tw_az_http_free(h);
    free(first);
    free(url);
    free(page);
    free(seen);
    return rc;
}
