/*
 * pricepage.c - the Retail Prices page parser (tw_price_page_parse).
 *
 * A one-pass JSON reader that validates the whole document (RFC 8259:
 * strings with their escapes and UTF-8, numbers, nesting up to a depth)
 * and copies the fields tierwise reads straight into tw_price_item
 * structs, without building a tree.  A region's pages are megabytes and a
 * refresh must be bound by the network, not by parsing: a tree of
 * allocated values (jansson) reads under 30 MB/s, this several times that.
 * Keys it does not know are validated and skipped.  A key repeated inside
 * an item or the envelope is refused, as a JSON library in strict mode
 * would.
 */
#include "core/pricebook.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct rd {
    const char *base, *p, *end;
    struct tw_error *err;
    enum tw_err rc; /* first failure, TW_OK until then */
};

/* Records a syntax error at the current position; returns false. */
static bool bad(struct rd *r, const char *what)
{
    if (r->rc != TW_OK)
        return false;
    long line = 1, col = 1;
    for (const char *q = r->base; q < r->p && q < r->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    r->rc = tw_error_set_at(r->err, TW_EPARSE, line, col,
                            "the prices page is not valid JSON at line %ld, column %ld: %s", line,
                            col, what);
    return false;
}

/* Records a content error (valid JSON, wrong content); returns false. */
static bool wrong(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool wrong(struct rd *r, const char *fmt, ...)
{
    if (r->rc != TW_OK)
        return false;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->rc = tw_error_set(r->err, TW_EPARSE, "%s", msg);
    return false;
}

static void ws(struct rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

static bool lit(struct rd *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return bad(r, "unexpected characters");
    r->p += n;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool hex4(struct rd *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return bad(r, "a \\u escape needs four hex digits");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(r->p[i]);
        if (h < 0)
            return bad(r, "a \\u escape needs four hex digits");
        v = v << 4 | (unsigned)h;
    }
    r->p += 4;
    *out = v;
    return true;
}

/* Appends code point CP as UTF-8 to DST (when DST is not NULL and has room). */
static void put_cp(char *dst, size_t cap, size_t *n, bool *over, unsigned cp)
{
    char b[4];
    size_t k;
    if (cp < 0x80) {
        b[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3f));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        k = 3;
    } else {
        b[0] = (char)(0xf0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        k = 4;
    }
    if (!dst)
        return;
    if (*n + k >= cap) {
        *over = true;
        return;
    }
    memcpy(dst + *n, b, k);
    *n += k;
}

/* Length of the valid UTF-8 sequence at P (at most AVAIL bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t k;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        k = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (avail < k)
        return 0;
    unsigned cp = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k;
}

/*
 * Reads a string (R->p at its opening quote).  With DST, its decoded value
 * goes there (NUL-terminated); *OVER is set when it does not fit in CAP-1
 * bytes or holds a NUL.  Without DST the string is only validated.
 */
static bool str(struct rd *r, char *dst, size_t cap, size_t *len, bool *over)
{
    size_t n = 0;
    bool o = false;
    if (r->p >= r->end || *r->p != '"')
        return bad(r, "a string was expected");
    r->p++;
    for (;;) {
        /* The plain run up to the next quote, backslash or non-ASCII byte. */
        const char *s = r->p;
        while (r->p < r->end) {
            unsigned char c = (unsigned char)*r->p;
            if (c == '"' || c == '\\' || c >= 0x80 || c < 0x20)
                break;
            r->p++;
        }
        size_t run = (size_t)(r->p - s);
        if (dst && run) {
            if (n + run >= cap)
                o = true;
            else {
                memcpy(dst + n, s, run);
                n += run;
            }
        }
        if (r->p >= r->end)
            return bad(r, "a string is not closed");
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20)
            return bad(r, "a control character inside a string");
        if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
            if (!k)
                return bad(r, "a string is not valid UTF-8");
            if (dst) {
                if (n + k >= cap)
                    o = true;
                else {
                    memcpy(dst + n, r->p, k);
                    n += k;
                }
            }
            r->p += k;
            continue;
        }
        /* A backslash escape. */
        r->p++;
        if (r->p >= r->end)
            return bad(r, "a string is not closed");
        char e = *r->p++;
        unsigned cp;
        switch (e) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!hex4(r, &cp))
                return false;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                unsigned lo;
                if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
                    return bad(r, "a lone UTF-16 surrogate in a \\u escape");
                r->p += 2;
                if (!hex4(r, &lo))
                    return false;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return bad(r, "a lone UTF-16 surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return bad(r, "a lone UTF-16 surrogate in a \\u escape");
            }
            if (cp == 0)
                o = true; /* a NUL can't be kept in a C string */
            break;
        default: return bad(r, "an unknown escape in a string");
        }
        put_cp(dst, cap, &n, &o, cp);
    }
    if (dst)
        dst[o ? 0 : n] = '\0';
    if (len)
        *len = n;
    if (over)
        *over = o;
    return true;
}

/* Reads a number; *OUT gets its value. */
static bool num(struct rd *r, double *out)
{
    const char *s = r->p;
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (r->p >= r->end)
        return bad(r, "a number was expected");
    if (*r->p == '0') {
        r->p++;
    } else if (*r->p >= '1' && *r->p <= '9') {
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    } else {
        return bad(r, "a value was expected");
    }
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return bad(r, "a digit must follow the decimal point");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return bad(r, "an exponent needs digits");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    char buf[64];
    size_t n = (size_t)(r->p - s);
    if (n >= sizeof(buf)) {
        /* Longer than any price: still a number, but not one to read. */
        *out = NAN;
        return true;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return true;
}

static bool skip(struct rd *r, int depth);

static bool skip_container(struct rd *r, int depth, char close)
{
    if (depth >= MAX_DEPTH)
        return bad(r, "nested too deeply");
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        ws(r);
        if (close == '}') {
            if (!str(r, NULL, 0, NULL, NULL))
                return false;
            ws(r);
            if (r->p >= r->end || *r->p != ':')
                return bad(r, "a ':' was expected after a key");
            r->p++;
        }
        if (!skip(r, depth + 1))
            return false;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return true;
        }
        return bad(r, close == '}' ? "a ',' or '}' was expected" : "a ',' or ']' was expected");
    }
}

/* Validates and skips any value. */
static bool skip(struct rd *r, int depth)
{
    ws(r);
    if (r->p >= r->end)
        return bad(r, "a value was expected");
    switch (*r->p) {
    case '{': return skip_container(r, depth, '}');
    case '[': return skip_container(r, depth, ']');
    case '"': return str(r, NULL, 0, NULL, NULL);
    case 't': return lit(r, "true");
    case 'f': return lit(r, "false");
    case 'n': return lit(r, "null");
    default: {
        double d;
        return num(r, &d);
    }
    }
}

/* Iterates an object's members: call with R->p at '{' and *FIRST true;
 * returns true with KEY set for each member (R->p at its value), false at
 * the end (R->rc tells an error from the end). */
static bool member(struct rd *r, bool *first, char *key, size_t keycap)
{
    ws(r);
    if (*first) {
        *first = false;
        if (r->p >= r->end || *r->p != '{')
            return bad(r, "an object was expected");
        r->p++;
        ws(r);
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return false;
        }
    } else {
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            ws(r);
        } else if (r->p < r->end && *r->p == '}') {
            r->p++;
            return false;
        } else {
            return bad(r, "a ',' or '}' was expected");
        }
    }
    bool over;
    if (!str(r, key, keycap, NULL, &over))
        return false;
    if (over)
        key[0] = '\0'; /* no key tierwise reads is that long */
    ws(r);
    if (r->p >= r->end || *r->p != ':')
        return bad(r, "a ':' was expected after a key");
    r->p++;
    ws(r);
    return true;
}

static bool is_null(struct rd *r)
{
    if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
        r->p += 4;
        return true;
    }
    return false;
}

/* Fields of an item, in the order of the bit that marks them seen. */
enum {
    F_CURRENCY,
    F_PRICE,
    F_REGION,
    F_METER,
    F_PRODUCT,
    F_UNIT,
    F_TYPE,
    F_SKU,
    F_TERM,
    F_METER_ID,
    F_START,
    F_END,
    F_SEEN,
    F_TIER_MIN,
    F_COUNT
};
#define REQUIRED                                                                                   \
    ((1u << F_CURRENCY) | (1u << F_PRICE) | (1u << F_REGION) | (1u << F_METER) |                   \
     (1u << F_PRODUCT) | (1u << F_UNIT) | (1u << F_TYPE))

static const char *const field_names[F_COUNT] = {"currencyCode",
                                                 "retailPrice",
                                                 "armRegionName",
                                                 "meterName",
                                                 "productName",
                                                 "unitOfMeasure",
                                                 "type",
                                                 "skuName",
                                                 "reservationTerm",
                                                 "meterId",
                                                 "effectiveStartDate",
                                                 "effectiveEndDate",
                                                 "_date_seen",
                                                 "tierMinimumUnits"};

static int field_of(const char *key)
{
    /* The common keys first; a short switch on the first letter keeps
     * the comparisons few. */
    for (int i = 0; i < F_COUNT; i++)
        if (key[0] == field_names[i][0] && strcmp(key, field_names[i]) == 0)
            return i;
    return -1;
}

static char *field_buf(struct tw_price_item *it, int f, size_t *cap)
{
    switch (f) {
    case F_CURRENCY: *cap = sizeof(it->currency); return it->currency;
    case F_REGION: *cap = sizeof(it->region); return it->region;
    case F_METER: *cap = sizeof(it->meter); return it->meter;
    case F_PRODUCT: *cap = sizeof(it->product); return it->product;
    case F_UNIT: *cap = sizeof(it->unit); return it->unit;
    case F_TYPE: *cap = sizeof(it->type); return it->type;
    case F_SKU: *cap = sizeof(it->sku_name); return it->sku_name;
    case F_TERM: *cap = sizeof(it->term); return it->term;
    case F_METER_ID: *cap = sizeof(it->meter_id); return it->meter_id;
    case F_START: *cap = sizeof(it->start); return it->start;
    case F_END: *cap = sizeof(it->end); return it->end;
    case F_SEEN: *cap = sizeof(it->seen); return it->seen;
    default: *cap = 0; return NULL;
    }
}

static bool item(struct rd *r, size_t idx, struct tw_price_item *it)
{
    memset(it, 0, sizeof(*it));
    ws(r);
    if (r->p >= r->end || *r->p != '{') {
        if (r->p < r->end && *r->p && strchr("[\"tfn-0123456789", *r->p))
            return wrong(r, "price item %zu is not an object", idx);
        return bad(r, "an object was expected");
    }
    unsigned seen = 0;
    bool first = true;
    char key[32];
    while (member(r, &first, key, sizeof(key))) {
        int f = field_of(key);
        if (f < 0) {
            if (!skip(r, 2))
                return false;
            continue;
        }
        if (seen & (1u << f))
            return wrong(r, "price item %zu has \"%s\" twice", idx, key);
        seen |= 1u << f;
        if (f == F_PRICE || f == F_TIER_MIN) {
            double *dst = f == F_PRICE ? &it->price : &it->tier_min;
            if (f == F_TIER_MIN && is_null(r))
                continue;
            if (r->p >= r->end || !(*r->p == '-' || (*r->p >= '0' && *r->p <= '9')))
                return wrong(r, "price item %zu: \"%s\" must be a number", idx, key);
            if (!num(r, dst))
                return false;
            if (!isfinite(*dst) || *dst < 0)
                return wrong(r, "price item %zu: \"%s\" is %g; a price is a number of at least 0",
                             idx, key, *dst);
            continue;
        }
        if (is_null(r)) {
            seen &= ~(1u << f); /* null counts as absent */
            continue;
        }
        size_t cap;
        char *dst = field_buf(it, f, &cap);
        if (r->p >= r->end || *r->p != '"')
            return wrong(r, "price item %zu: \"%s\" must be a string of at most %zu bytes", idx,
                         key, cap - 1);
        bool over;
        if (!str(r, dst, cap, NULL, &over))
            return false;
        if (over)
            return wrong(r, "price item %zu: \"%s\" must be a string of at most %zu bytes", idx,
                         key, cap - 1);
    }
    if (r->rc != TW_OK)
        return false;
    if ((seen & REQUIRED) != REQUIRED) {
        for (int f = 0; f < F_COUNT; f++)
            if ((REQUIRED & (1u << f)) && !(seen & (1u << f)))
                return wrong(r, "price item %zu has no \"%s\": not a Retail Prices item", idx,
                             field_names[f]);
    }
    for (int i = 0; i < 3; i++)
        if (it->currency[i] < 'A' || it->currency[i] > 'Z' || it->currency[3])
            return wrong(r, "price item %zu: currencyCode \"%s\" is not a currency code", idx,
                         it->currency);
    return true;
}

static bool items_array(struct rd *r, struct tw_price_items *out, size_t *count)
{
    ws(r);
    if (r->p >= r->end || *r->p != '[')
        return wrong(r, "the prices page has no \"Items\" array: not a Retail Prices answer or "
                        "snapshot");
    r->p++;
    ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return true;
    }
    for (;;) {
        if (out->n == out->cap) {
            if (out->n >= TW_PRICES_MAX_ITEMS) {
                r->rc = tw_error_set(r->err, TW_ENOMEM,
                                     "more than %d price items: more than any region's disk "
                                     "prices",
                                     TW_PRICES_MAX_ITEMS);
                return false;
            }
            size_t cap = out->cap ? out->cap * 2 : 256;
            struct tw_price_item *v = realloc(out->v, cap * sizeof(*v));
            if (!v) {
                r->rc = tw_error_set(r->err, TW_ENOMEM, "out of memory for %zu price items", cap);
                return false;
            }
            out->v = v;
            out->cap = cap;
        }
        if (!item(r, *count, &out->v[out->n]))
            return false;
        out->n++;
        (*count)++;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return true;
        }
        return bad(r, "a ',' or ']' was expected");
    }
}

/* The API's own error body: {"Error": {"Code": ..., "Message": ...}}. */
static bool error_body(struct rd *r)
{
    char code[64] = "?", msg[320] = "?", key[16];
    bool first = true;
    if (r->p >= r->end || *r->p != '{')
        return skip(r, 1);
    while (member(r, &first, key, sizeof(key))) {
        char *dst = strcmp(key, "Code") == 0 ? code : strcmp(key, "Message") == 0 ? msg : NULL;
        if (dst && r->p < r->end && *r->p == '"') {
            bool over;
            if (!str(r, dst, dst == code ? sizeof(code) : sizeof(msg), NULL, &over))
                return false;
            if (over)
                snprintf(dst, 4, "...");
        } else if (!skip(r, 2)) {
            return false;
        }
    }
    if (r->rc != TW_OK)
        return false;
    r->rc = tw_error_set(r->err, TW_EINVAL, "the Retail Prices API answered an error: %s: %s", code,
                         msg);
    return false;
}

enum tw_err tw_price_page_parse(const char *buf, size_t len, struct tw_price_items *out,
                                struct tw_price_page *page, struct tw_error *err)
{
    struct tw_price_page local;
    if (!page)
        page = &local;
    memset(page, 0, sizeof(*page));
    page->count = -1;
    struct rd r = {.base = buf, .p = buf, .end = buf + len, .err = err, .rc = TW_OK};
    size_t had = out->n, count = 0;
    bool have_items = false, have_error = false;
    unsigned seen = 0;
    ws(&r);
    if (r.p < r.end && *r.p == '[') {
        have_items = items_array(&r, out, &count);
    } else if (r.p < r.end && *r.p == '{') {
        bool first = true;
        char key[32];
        while (member(&r, &first, key, sizeof(key))) {
            static const char *const keys[] = {"Items",        "items", "BillingCurrency",
                                               "NextPageLink", "Count", "_fetched_at",
                                               "Error"};
            int k = -1;
            for (int i = 0; i < 7; i++)
                if (strcmp(key, keys[i]) == 0)
                    k = i;
            if (k < 0) {
                if (!skip(&r, 1))
                    break;
                continue;
            }
            if (seen & (1u << k) || (k <= 1 && have_items)) {
                wrong(&r, "the prices page has \"%s\" twice", key);
                break;
            }
            seen |= 1u << k;
            bool ok = true, over = false;
            switch (k) {
            case 0:
            case 1:
                ok = items_array(&r, out, &count);
                have_items = ok;
                break;
            case 2:
                if (is_null(&r))
                    break;
                if (r.p >= r.end || *r.p != '"') {
                    ok = wrong(&r, "the prices page: BillingCurrency must be a currency code");
                    break;
                }
                ok = str(&r, page->currency, sizeof(page->currency), NULL, &over);
                if (ok && (over || strlen(page->currency) != 3))
                    ok = wrong(&r, "the prices page: BillingCurrency must be a currency code");
                break;
            case 3:
                if (is_null(&r))
                    break;
                if (r.p >= r.end || *r.p != '"') {
                    ok = wrong(&r,
                               "the prices page: NextPageLink must be null or a URL under "
                               "%d bytes",
                               TW_PRICES_LINK_MAX);
                    break;
                }
                ok = str(&r, page->next, sizeof(page->next), NULL, &over);
                if (ok && over)
                    ok = wrong(&r,
                               "the prices page: NextPageLink must be null or a URL under "
                               "%d bytes",
                               TW_PRICES_LINK_MAX);
                break;
            case 4: {
                if (is_null(&r))
                    break;
                double d = -1;
                if (r.p < r.end && (*r.p == '-' || (*r.p >= '0' && *r.p <= '9')))
                    ok = num(&r, &d);
                else
                    ok = skip(&r, 1);
                if (ok && (!(d >= 0 && d <= 1e9) || d != floor(d)))
                    ok = wrong(&r, "the prices page: Count must be a whole number >= 0");
                page->count = (long)d;
                break;
            }
            case 5:
                if (r.p < r.end && *r.p == '"') {
                    ok = str(&r, page->fetched_at, sizeof(page->fetched_at), NULL, &over);
                    if (over)
                        page->fetched_at[0] = '\0';
                } else {
                    ok = skip(&r, 1);
                }
                break;
            default:
                have_error = true;
                ok = error_body(&r);
                break;
            }
            if (!ok)
                break;
        }
    } else {
        bad(&r, r.p < r.end ? "an object or array was expected" : "the page is empty");
    }
    if (r.rc == TW_OK) {
        ws(&r);
        if (r.p != r.end)
            bad(&r, "something follows the end of the document");
    }
    if (r.rc == TW_OK && !have_items) {
        if (have_error)
            error_body(&r); /* not reached: error_body always fails */
        wrong(&r, "the prices page has no \"Items\" array: not a Retail Prices answer or "
                  "snapshot");
    }
    if (r.rc == TW_OK && page->count >= 0 && (size_t)page->count != count)
        wrong(&r, "the prices page says Count %ld but holds %zu items", page->count, count);
    for (size_t i = had; r.rc == TW_OK && page->currency[0] && i < out->n; i++)
        if (strcmp(out->v[i].currency, page->currency) != 0)
            wrong(&r, "price item %zu is in %s but the page's BillingCurrency is %s", i - had,
                  out->v[i].currency, page->currency);
    if (r.rc != TW_OK) {
        out->n = had;
        page->next[0] = '\0';
        return r.rc;
    }
    page->items = count;
    return TW_OK;
}
