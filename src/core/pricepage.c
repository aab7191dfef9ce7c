/*
 * pricepage.c - the Retail Prices page parser (tw_price_page_parse).
 *
 * Built on the one-pass JSON reader (core/jsonread.c), which validates
 * the whole document (RFC 8259: strings with their escapes and UTF-8,
 * numbers, nesting up to a depth); this file copies the fields tierwise
 * reads straight into tw_price_item structs, without building a tree.  A region's pages are megabytes and a
 * refresh must be bound by the network, not by parsing: a tree of
 * allocated values (jansson) reads under 30 MB/s, this several times that.
 * Keys it does not know are validated and skipped.  A key repeated inside
 * an item or the envelope is refused, as a JSON library in strict mode
 * would.
 */
#include "core/pricebook.h"
#include "core/jsonread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* A content error: valid JSON that is not a prices page. */
#define wrong(r, ...) tw_jr_fail((r), TW_EPARSE, __VA_ARGS__)

static bool num(struct tw_jr *r, double *out)
{
    struct tw_jr_num n;
    if (!tw_jr_number(r, &n))
        return false;
    *out = n.d;
    return true;
}

/* Significant digits of a number's text (its digits less leading zeros). */
static int significant(const char *s, size_t n)
{
    int sig = 0;
    bool lead = true;
    for (size_t i = 0; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] < '0' || s[i] > '9')
            continue;
        if (lead && s[i] == '0')
            continue;
        lead = false;
        sig++;
    }
    return sig;
}

/*
 * retailPrice, exactly, from the digits of its text (core/money).  One
 * more form is read: books stored by tierwise before prices were exact
 * wrote each price as the 17 significant digits of a double (32.519 as
 * 32.518999999999998, what "%.17g" makes); a text of 16 or 17 significant
 * digits is taken as the price of at most six decimals whose double it
 * is, and only when there is one.  Anything else with a seventh decimal
 * is refused: money is never rounded when it is read.
 */
static bool price(struct tw_jr *r, size_t idx, struct tw_money *out)
{
    struct tw_jr_num n;
    if (!tw_jr_number(r, &n))
        return false;
    struct tw_error merr = {0};
    enum tw_err rc = tw_money_parse(n.text, n.len, out, &merr);
    int sig = significant(n.text, n.len);
    if (rc == TW_ERANGE && (sig == 16 || sig == 17) && isfinite(n.d) && fabs(n.d) < 9e9) {
        double m = nearbyint(n.d * TW_MONEY_SCALE);
        for (int k = -1; k <= 1; k++) {
            struct tw_money c = tw_money_micros((int64_t)m + k);
            if (tw_money_to_double(c) == n.d) {
                *out = c;
                rc = TW_OK;
                break;
            }
        }
    }
    if (rc != TW_OK)
        return wrong(r, "price item %zu: \"retailPrice\" %s", idx, merr.msg);
    if (out->micros < 0) {
        char t[TW_MONEY_TEXT_MAX];
        return wrong(r, "price item %zu: \"retailPrice\" is %s; a price is a number of at least 0",
                     idx, tw_money_text(*out, t, sizeof(t)));
    }
    return true;
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

static bool item(struct tw_jr *r, size_t idx, struct tw_price_item *it)
{
    memset(it, 0, sizeof(*it));
    tw_jr_peek(r);
    if (r->p >= r->end || *r->p != '{') {
        if (r->p < r->end && *r->p && strchr("[\"tfn-0123456789", *r->p))
            return wrong(r, "price item %zu is not an object", idx);
        return tw_jr_syntax(r, "an object was expected");
    }
    unsigned seen = 0;
    struct tw_jr_obj first = {0};
    char key[32];
    while (tw_jr_member(r, &first, key, sizeof(key))) {
        int f = field_of(key);
        if (f < 0) {
            if (!tw_jr_skip(r))
                return false;
            continue;
        }
        if (seen & (1u << f))
            return wrong(r, "price item %zu has \"%s\" twice", idx, key);
        seen |= 1u << f;
        if (f == F_PRICE || f == F_TIER_MIN) {
            if (f == F_TIER_MIN && tw_jr_null(r))
                continue;
            if (r->p >= r->end || !(*r->p == '-' || (*r->p >= '0' && *r->p <= '9')))
                return wrong(r, "price item %zu: \"%s\" must be a number", idx, key);
            if (f == F_PRICE) {
                if (!price(r, idx, &it->price))
                    return false;
                continue;
            }
            double *dst = &it->tier_min;
            if (!num(r, dst))
                return false;
            if (!isfinite(*dst) || *dst < 0)
                return wrong(r, "price item %zu: \"%s\" is %g; a price is a number of at least 0",
                             idx, key, *dst);
            continue;
        }
        if (tw_jr_null(r)) {
            seen &= ~(1u << f); /* null counts as absent */
            continue;
        }
        size_t cap;
        char *dst = field_buf(it, f, &cap);
        if (r->p >= r->end || *r->p != '"')
            return wrong(r, "price item %zu: \"%s\" must be a string of at most %zu bytes", idx,
                         key, cap - 1);
        bool over;
        if (!tw_jr_string(r, dst, cap, NULL, &over))
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

static bool items_array(struct tw_jr *r, struct tw_price_items *out, size_t *count)
{
    tw_jr_peek(r);
    if (r->p >= r->end || *r->p != '[')
        return wrong(r, "the prices page has no \"Items\" array: not a Retail Prices answer or "
                        "snapshot");
    struct tw_jr_arr a = {0};
    while (tw_jr_element(r, &a)) {
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
    }
    return r->rc == TW_OK;
}

/* The API's own error body: {"Error": {"Code": ..., "Message": ...}}. */
static bool error_body(struct tw_jr *r)
{
    char code[64] = "?", msg[320] = "?", key[16];
    struct tw_jr_obj first = {0};
    if (r->p >= r->end || *r->p != '{')
        return tw_jr_skip(r);
    while (tw_jr_member(r, &first, key, sizeof(key))) {
        char *dst = strcmp(key, "Code") == 0 ? code : strcmp(key, "Message") == 0 ? msg : NULL;
        if (dst && r->p < r->end && *r->p == '"') {
            bool over;
            if (!tw_jr_string(r, dst, dst == code ? sizeof(code) : sizeof(msg), NULL, &over))
                return false;
            if (over)
                snprintf(dst, 4, "...");
        } else if (!tw_jr_skip(r)) {
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
    struct tw_jr r;
    tw_jr_init(&r, buf, len, "the prices page", 0, MAX_DEPTH, err);
    size_t had = out->n, count = 0;
    bool have_items = false, have_error = false;
    unsigned seen = 0;
    tw_jr_peek(&r);
    if (r.p < r.end && *r.p == '[') {
        have_items = items_array(&r, out, &count);
    } else if (r.p < r.end && *r.p == '{') {
        struct tw_jr_obj first = {0};
        char key[32];
        while (tw_jr_member(&r, &first, key, sizeof(key))) {
            static const char *const keys[] = {"Items",        "items", "BillingCurrency",
                                               "NextPageLink", "Count", "_fetched_at",
                                               "Error"};
            int k = -1;
            for (int i = 0; i < 7; i++)
                if (strcmp(key, keys[i]) == 0)
                    k = i;
            if (k < 0) {
                if (!tw_jr_skip(&r))
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
                if (tw_jr_null(&r))
                    break;
                if (r.p >= r.end || *r.p != '"') {
                    ok = wrong(&r, "the prices page: BillingCurrency must be a currency code");
                    break;
                }
                ok = tw_jr_string(&r, page->currency, sizeof(page->currency), NULL, &over);
                if (ok && (over || strlen(page->currency) != 3))
                    ok = wrong(&r, "the prices page: BillingCurrency must be a currency code");
                break;
            case 3:
                if (tw_jr_null(&r))
                    break;
                if (r.p >= r.end || *r.p != '"') {
                    ok = wrong(&r,
                               "the prices page: NextPageLink must be null or a URL under "
                               "%d bytes",
                               TW_PRICES_LINK_MAX);
                    break;
                }
                ok = tw_jr_string(&r, page->next, sizeof(page->next), NULL, &over);
                if (ok && over)
                    ok = wrong(&r,
                               "the prices page: NextPageLink must be null or a URL under "
                               "%d bytes",
                               TW_PRICES_LINK_MAX);
                break;
            case 4: {
                if (tw_jr_null(&r))
                    break;
                double d = -1;
                if (r.p < r.end && (*r.p == '-' || (*r.p >= '0' && *r.p <= '9')))
                    ok = num(&r, &d);
                else
                    ok = tw_jr_skip(&r);
                if (ok && (!(d >= 0 && d <= 1e9) || d != floor(d)))
                    ok = wrong(&r, "the prices page: Count must be a whole number >= 0");
                if (ok) /* (long) of an infinite or huge Count is undefined */
                    page->count = (long)d;
                break;
            }
            case 5:
                if (r.p < r.end && *r.p == '"') {
                    ok = tw_jr_string(&r, page->fetched_at, sizeof(page->fetched_at), NULL, &over);
                    if (over)
                        page->fetched_at[0] = '\0';
                } else {
                    ok = tw_jr_skip(&r);
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
        tw_jr_syntax(&r, r.p < r.end ? "an object or array was expected" : "the page is empty");
    }
    if (r.rc == TW_OK)
        tw_jr_finish(&r);
    tw_jr_done(&r);
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
