/*
 * pricebook.c - Retail Prices pages into items, items into a price book
 * (see pricebook.h for the meter rules).
 */
#include "core/pricebook.h"
#include "core/buf.h"
#include "core/time.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- items ------------------------------------------------------------ */

void tw_price_items_cleanup(struct tw_price_items *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static const char *const currencies[] = {"USD", "AUD", "BRL", "CAD", "CHF", "CNY",
                                         "DKK", "EUR", "GBP", "INR", "JPY", "KRW",
                                         "NOK", "NZD", "RUB", "SEK", "TWD"};

bool tw_pb_currency_ok(const char *s)
{
    for (size_t i = 0; i < sizeof(currencies) / sizeof(currencies[0]); i++)
        if (strcmp(s, currencies[i]) == 0)
            return true;
    return false;
}

bool tw_pb_region_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 2 || n > 47)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* Appends S as a JSON string.  Item strings were read as valid UTF-8
 * without NULs, so only quotes, backslashes and controls need escapes. */
static enum tw_err put_str(struct tw_buf *b, const char *s)
{
    enum tw_err rc = tw_buf_append(b, "\"", 1);
    const char *run = s;
    for (; rc == TW_OK && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        char esc[8];
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof(esc), "\\%c", c);
        else
            snprintf(esc, sizeof(esc), "\\u%04x", c);
        rc = tw_buf_append(b, run, (size_t)(s - run));
        if (rc == TW_OK)
            rc = tw_buf_puts(b, esc);
        run = s + 1;
    }
    if (rc == TW_OK)
        rc = tw_buf_append(b, run, (size_t)(s - run));
    if (rc == TW_OK)
        rc = tw_buf_append(b, "\"", 1);
    return rc;
}

/* ,"KEY":"VALUE" (FIRST: without the comma). */
static enum tw_err put_member(struct tw_buf *b, const char *key, const char *val, bool first)
{
    enum tw_err rc = first ? TW_OK : tw_buf_append(b, ",", 1);
    if (rc == TW_OK)
        rc = put_str(b, key);
    if (rc == TW_OK)
        rc = tw_buf_append(b, ":", 1);
    return rc == TW_OK ? put_str(b, val) : rc;
}

char *tw_price_items_dump(const struct tw_price_item *items, size_t n, size_t *len)
{
    /* Written by hand rather than through jansson, whose reals are
     * doubles: the price goes out as its exact decimal text. */
    struct tw_buf b;
    tw_buf_init(&b, (size_t)1 << 40); /* no ceiling but memory */
    enum tw_err rc = tw_buf_append(&b, "[", 1);
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        const struct tw_price_item *it = &items[i];
        char price[TW_MONEY_TEXT_MAX], tmin[40];
        tw_money_text(it->price, price, sizeof(price));
        /* As jansson writes a real: 17 significant digits, always with a
         * point or an exponent. */
        snprintf(tmin, sizeof(tmin), "%.17g", it->tier_min);
        if (!strpbrk(tmin, ".eE"))
            strcat(tmin, ".0");
        /* The API's own key order (retail-prices.md 3). */
        rc = tw_buf_puts(&b, i ? ",{" : "{");
        if (rc == TW_OK)
            rc = put_member(&b, "currencyCode", it->currency, true);
        if (rc == TW_OK)
            rc = tw_buf_puts(&b, ",\"tierMinimumUnits\":");
        if (rc == TW_OK)
            rc = tw_buf_puts(&b, tmin);
        if (rc == TW_OK && it->term[0])
            rc = put_member(&b, "reservationTerm", it->term, false);
        if (rc == TW_OK)
            rc = tw_buf_puts(&b, ",\"retailPrice\":");
        if (rc == TW_OK)
            rc = tw_buf_puts(&b, price);
        if (rc == TW_OK)
            rc = put_member(&b, "armRegionName", it->region, false);
        if (rc == TW_OK && it->start[0])
            rc = put_member(&b, "effectiveStartDate", it->start, false);
        if (rc == TW_OK && it->end[0])
            rc = put_member(&b, "effectiveEndDate", it->end, false);
        if (rc == TW_OK && it->meter_id[0])
            rc = put_member(&b, "meterId", it->meter_id, false);
        if (rc == TW_OK)
            rc = put_member(&b, "meterName", it->meter, false);
        if (rc == TW_OK)
            rc = put_member(&b, "productName", it->product, false);
        if (rc == TW_OK && it->sku_name[0])
            rc = put_member(&b, "skuName", it->sku_name, false);
        if (rc == TW_OK)
            rc = put_member(&b, "unitOfMeasure", it->unit, false);
        if (rc == TW_OK)
            rc = put_member(&b, "type", it->type, false);
        if (rc == TW_OK && it->seen[0])
            rc = put_member(&b, "_date_seen", it->seen, false);
        if (rc == TW_OK)
            rc = tw_buf_append(&b, "}", 1);
    }
    if (rc == TW_OK)
        rc = tw_buf_append(&b, "]", 1);
    if (rc != TW_OK) {
        tw_buf_cleanup(&b);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.data;
}

/* ---- names ------------------------------------------------------------ */

/* SKU as the vocabulary parses it, spelt as the book writes it: the
 * prices' --sku and sku= filters take the canonical names only. */
static bool canonical_sku(const char *sku, struct tw_sku *out)
{
    return tw_sku_parse(sku, out) && strcmp(sku, tw_sku_name(out->family, out->redundancy)) == 0;
}

const char *tw_pb_kind_name(enum tw_pb_kind k)
{
    static const char *const n[TW_PB_KIND_COUNT] = {"per month",
                                                    "per VM mount per month (shared disk)",
                                                    "per 10,000 transactions",
                                                    "per GiB per hour",
                                                    "per IOPS per hour",
                                                    "per MB/s per hour",
                                                    "for a 1-year reservation",
                                                    "for a 3-year reservation",
                                                    "per 10,000 transactions (any tier)"};
    return k < TW_PB_KIND_COUNT ? n[k] : "?";
}

/* ---- meter mapping ---------------------------------------------------- */

/* The products, by their exact names in the API. */
static const struct {
    const char *product;
    enum tw_sku_family family;
} products[] = {
    {"Premium SSD Managed Disks", TW_SKU_PREMIUM_SSD},
    {"Standard SSD Managed Disks", TW_SKU_STANDARD_SSD},
    {"Standard HDD Managed Disks", TW_SKU_STANDARD_HDD},
    {"Azure Premium SSD v2", TW_SKU_PREMIUM_V2},
    {"Ultra Disks", TW_SKU_ULTRA},
};

/* "P10", "E1", "S80" of the product's family. */
static bool tier_word(const char *s, size_t n, enum tw_sku_family want)
{
    enum tw_sku_family f;
    return tw_sku_tier_parse(s, n, &f, NULL) && f == want;
}

/* Maps one item; false when no rule matches.  Out: family, tier, red, kind. */
static bool map_item(const struct tw_price_item *it, enum tw_sku_family *fam, char tier[8],
                     enum tw_sku_redundancy *red, enum tw_pb_kind *kind)
{
    size_t p;
    for (p = 0; p < sizeof(products) / sizeof(products[0]); p++)
        if (strcmp(it->product, products[p].product) == 0)
            break;
    if (p == sizeof(products) / sizeof(products[0]))
        return false;
    *fam = products[p].family;
    const char *m = it->meter;
    tier[0] = '\0';
    bool reservation = strcmp(it->type, "Reservation") == 0;
    if (!reservation && strcmp(it->type, "Consumption") != 0)
        return false;
    if (!tw_sku_provisioned(*fam)) {
        /* The newer tier-less transactions meter of Standard SSD and HDD:
         * "Disk Transactions <LRS|ZRS> Disk Operations", 10K. */
        static const char tx_word[] = "Disk Transactions ";
        if (strncmp(m, tx_word, sizeof(tx_word) - 1) == 0) {
            const char *r = m + sizeof(tx_word) - 1;
            if (reservation || *fam == TW_SKU_PREMIUM_SSD || strcmp(it->unit, "10K") != 0)
                return false;
            if (strcmp(r, "LRS Disk Operations") == 0)
                *red = TW_SKU_LRS;
            else if (strcmp(r, "ZRS Disk Operations") == 0)
                *red = TW_SKU_ZRS;
            else
                return false;
            *kind = TW_PB_TX_10K;
            return true;
        }
        /* "<tier> <LRS|ZRS> Disk[ Mount| Operations]" */
        const char *sp = strchr(m, ' ');
        if (!sp || !tier_word(m, (size_t)(sp - m), *fam))
            return false;
        memcpy(tier, m, (size_t)(sp - m));
        tier[sp - m] = '\0';
        const char *r = sp + 1;
        if (strncmp(r, "LRS ", 4) == 0)
            *red = TW_SKU_LRS;
        else if (strncmp(r, "ZRS ", 4) == 0)
            *red = TW_SKU_ZRS;
        else
            return false;
        const char *rest = r + 4;
        if (strcmp(rest, "Disk") == 0 && strcmp(it->unit, "1/Month") == 0) {
            if (!reservation) {
                *kind = TW_PB_MONTH;
                return true;
            }
            if (strcmp(it->term, "1 Year") == 0) {
                *kind = TW_PB_RESERVED_1Y;
                return true;
            }
            if (strcmp(it->term, "3 Years") == 0) {
                *kind = TW_PB_RESERVED_3Y;
                return true;
            }
            return false;
        }
        if (reservation)
            return false;
        if (strcmp(rest, "Disk Mount") == 0 && strcmp(it->unit, "1/Month") == 0) {
            *kind = TW_PB_MOUNT;
            return true;
        }
        if (strcmp(rest, "Disk Operations") == 0 && strcmp(it->unit, "10K") == 0 &&
            *fam != TW_SKU_PREMIUM_SSD) {
            *kind = TW_PB_OPS_10K;
            return true;
        }
        return false;
    }
    if (reservation)
        return false;
    /* "<Premium|Ultra> <LRS|ZRS> Provisioned <Capacity|IOPS|Throughput (MBps)>" */
    const char *word = *fam == TW_SKU_PREMIUM_V2 ? "Premium " : "Ultra ";
    size_t wl = strlen(word);
    if (strncmp(m, word, wl) != 0)
        return false;
    m += wl;
    if (strncmp(m, "LRS ", 4) == 0)
        *red = TW_SKU_LRS;
    else if (strncmp(m, "ZRS ", 4) == 0)
        *red = TW_SKU_ZRS;
    else
        return false;
    m += 4;
    if (strcmp(m, "Provisioned Capacity") == 0 && strcmp(it->unit, "1 GiB/Hour") == 0)
        *kind = TW_PB_GIB_HOUR;
    else if (strcmp(m, "Provisioned IOPS") == 0 && strcmp(it->unit, "1/Hour") == 0)
        *kind = TW_PB_IOPS_HOUR;
    else if (strcmp(m, "Provisioned Throughput (MBps)") == 0 && strcmp(it->unit, "1/Hour") == 0)
        *kind = TW_PB_MBPS_HOUR;
    else
        return false;
    return true;
}

/* ---- the hash table --------------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= 0xff; /* a separator, so "ab"+"c" and "a"+"bc" differ */
    h *= 1099511628211ULL;
    return h;
}

static uint64_t key_hash(const char *region, const char *currency, unsigned family,
                         const char *tier, unsigned red, unsigned kind)
{
    uint64_t h = 14695981039346656037ULL;
    h = fnv(h, region);
    h = fnv(h, currency);
    h = fnv(h, tier);
    h ^= (uint64_t)(family | red << 4 | kind << 8);
    h *= 1099511628211ULL;
    h ^= h >> 29;
    return h ? h : 1;
}

static bool entry_is(const struct tw_price_entry *e, uint64_t h, const char *region,
                     const char *currency, unsigned family, const char *tier, unsigned red,
                     unsigned kind)
{
    return e->hash == h && e->family == family && e->redundancy == red && e->kind == kind &&
           strcmp(e->tier, tier) == 0 && strcmp(e->region, region) == 0 &&
           strcmp(e->currency, currency) == 0;
}

const struct tw_price_entry *tw_pricebook_find(const struct tw_pricebook *b, const char *region,
                                               const char *currency, enum tw_sku_family family,
                                               const char *tier, enum tw_sku_redundancy red,
                                               enum tw_pb_kind kind)
{
    if (!b || !b->nslots)
        return NULL;
    uint64_t h = key_hash(region, currency, family, tier, red, kind);
    size_t mask = b->nslots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const struct tw_price_entry *e = &b->slots[i];
        if (!e->hash)
            return NULL;
        if (entry_is(e, h, region, currency, family, tier, red, kind))
            return e;
    }
}

enum tw_err tw_pricebook_money(const struct tw_pricebook *b, const char *region,
                               const char *currency, enum tw_sku_family family, const char *tier,
                               enum tw_sku_redundancy red, enum tw_pb_kind kind,
                               struct tw_money *out, struct tw_error *err)
{
    const struct tw_price_entry *e =
        tw_pricebook_find(b, region, currency, family, tier, red, kind);
    if (e) {
        *out = e->price;
        return TW_OK;
    }
    *out = tw_money_micros(0);
    return tw_error_set(err, TW_ENOENT,
                        "no price %s for %s%s%s (%s) in %s %s in the price book (%s); refresh "
                        "the prices (tierwise prices refresh) or choose another region or "
                        "currency",
                        tw_pb_kind_name(kind), tier, tier[0] ? " " : "", tw_sku_redundancy_name(red),
                        tw_sku_name(family, red), region, currency,
                        b && b->source[0] ? b->source : "empty");
}

enum tw_err tw_pricebook_price(const struct tw_pricebook *b, const char *region,
                               const char *currency, enum tw_sku_family family, const char *tier,
                               enum tw_sku_redundancy red, enum tw_pb_kind kind, double *out,
                               struct tw_error *err)
{
    struct tw_money m;
    enum tw_err rc = tw_pricebook_money(b, region, currency, family, tier, red, kind, &m, err);
    *out = rc == TW_OK ? tw_money_to_double(m) : NAN;
    return rc;
}

enum tw_err tw_pricebook_money_sku(const struct tw_pricebook *b, const char *region,
                                   const char *currency, const char *sku, const char *tier,
                                   enum tw_pb_kind kind, struct tw_money *out,
                                   struct tw_error *err)
{
    struct tw_sku s;
    if (!canonical_sku(sku, &s)) {
        *out = tw_money_micros(0);
        return tw_error_set(err, TW_EINVAL, "\"%.40s\" is not a managed-disk SKU name", sku);
    }
    return tw_pricebook_money(b, region, currency, s.family, tier, s.redundancy, kind, out, err);
}

enum tw_err tw_pricebook_price_sku(const struct tw_pricebook *b, const char *region,
                                   const char *currency, const char *sku, const char *tier,
                                   enum tw_pb_kind kind, double *out, struct tw_error *err)
{
    struct tw_money m;
    enum tw_err rc = tw_pricebook_money_sku(b, region, currency, sku, tier, kind, &m, err);
    *out = rc == TW_OK ? tw_money_to_double(m) : NAN;
    return rc;
}

static void add_unused(struct tw_pricebook *b, size_t idx, enum tw_pb_unused why)
{
    b->unused[b->n_unused] = idx;
    b->unused_why[b->n_unused++] = (uint8_t)why;
}

/* (pricebook.h) A bare date is midnight UTC, a time without offset UTC. */
bool tw_price_date(const char *s, int64_t *ns)
{
    char buf[48];
    size_t n = strlen(s);
    if (n == 10) {
        snprintf(buf, sizeof(buf), "%sT00:00:00Z", s);
    } else if (n >= 19 && n < sizeof(buf) - 1) {
        size_t i = 19;
        if (i < n && s[i] == '.')
            for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
                ;
        snprintf(buf, sizeof(buf), "%s%s", s, i == n ? "Z" : "");
    } else {
        return false;
    }
    return tw_rfc3339_parse(buf, strlen(buf), ns, NULL) == TW_OK;
}

/* (pricebook.h) */
void tw_price_item_span(const struct tw_price_item *it, int64_t *from, int64_t *to)
{
    *from = INT64_MIN;
    *to = INT64_MAX;
    int64_t t;
    if (it->start[0] && tw_price_date(it->start, &t))
        *from = t;
    if (it->end[0] && tw_price_date(it->end, &t))
        *to = t < INT64_MAX - TW_NS_PER_S ? t + TW_NS_PER_S : INT64_MAX;
}

enum tw_err tw_pricebook_build(struct tw_price_items *items, const char *region,
                               const char *currency, const char *source, const char *fetched_at,
                               const char *now, struct tw_pricebook **out, struct tw_error *err)
{
    *out = NULL;
    struct tw_pricebook *b = calloc(1, sizeof(*b));
    if (!b) {
        tw_price_items_cleanup(items);
        return tw_error_set(err, TW_ENOMEM, "out of memory for a price book");
    }
    snprintf(b->source, sizeof(b->source), "%s", source ? source : "");
    snprintf(b->fetched_at, sizeof(b->fetched_at), "%s", fetched_at ? fetched_at : "");
    int64_t now_ns = 0;
    if (now && !tw_price_date(now, &now_ns)) {
        tw_price_items_cleanup(items);
        free(b);
        return tw_error_set(err, TW_EINVAL, "the price book's time \"%.40s\" is not RFC 3339",
                            now);
    }
    /* Keep the wanted region and currency only, their dates readable. */
    size_t k = 0;
    for (size_t i = 0; i < items->n; i++) {
        const struct tw_price_item *it = &items->v[i];
        if ((region && strcmp(it->region, region) != 0) ||
            (currency && strcmp(it->currency, currency) != 0))
            continue;
        int64_t t;
        const char *bad = it->start[0] && !tw_price_date(it->start, &t) ? "effectiveStartDate"
                          : it->end[0] && !tw_price_date(it->end, &t)   ? "effectiveEndDate"
                                                                        : NULL;
        if (bad) {
            enum tw_err rc = tw_error_set(
                err, TW_EPARSE,
                "price item %zu (%.60s): %s \"%.31s\" is not a date: give RFC 3339 "
                "(2026-07-01T00:00:00Z), a date (2026-07-01, midnight UTC) or a time without "
                "offset (2026-07-01T00:00:00, UTC)",
                i, it->meter, bad, strcmp(bad, "effectiveStartDate") == 0 ? it->start : it->end);
            tw_price_items_cleanup(items);
            free(b);
            return rc;
        }
        items->v[k++] = *it;
    }
    items->n = k;
    b->items = *items;
    memset(items, 0, sizeof(*items));
    size_t n = b->items.n;
    b->nslots = 16;
    while (b->nslots < n * 2 + 1)
        b->nslots *= 2;
    b->slots = calloc(b->nslots, sizeof(*b->slots));
    b->unused = malloc((n ? n : 1) * sizeof(*b->unused));
    b->unused_why = malloc(n ? n : 1);
    if (!b->slots || !b->unused || !b->unused_why) {
        tw_pricebook_free(b);
        return tw_error_set(err, TW_ENOMEM, "out of memory for a price book of %zu items", n);
    }
    size_t mask = b->nslots - 1;
    for (size_t i = 0; i < n; i++) {
        const struct tw_price_item *it = &b->items.v[i];
        enum tw_sku_family fam;
        enum tw_sku_redundancy red;
        enum tw_pb_kind kind;
        char tier[8];
        if (!map_item(it, &fam, tier, &red, &kind)) {
            add_unused(b, i, TW_PB_UNUSED_UNKNOWN);
            continue;
        }
        if (it->price.micros == 0) {
            add_unused(b, i, TW_PB_UNUSED_ZERO);
            continue;
        }
        int64_t from_ns, to_ns;
        tw_price_item_span(it, &from_ns, &to_ns);
        if (now && now_ns >= to_ns) {
            add_unused(b, i, TW_PB_UNUSED_EXPIRED);
            continue;
        }
        if (now && from_ns > now_ns) {
            add_unused(b, i, TW_PB_UNUSED_NOT_YET);
            continue;
        }
        uint64_t h = key_hash(it->region, it->currency, fam, tier, red, kind);
        size_t s = (size_t)h & mask;
        while (b->slots[s].hash &&
               !entry_is(&b->slots[s], h, it->region, it->currency, fam, tier, red, kind))
            s = (s + 1) & mask;
        struct tw_price_entry *e = &b->slots[s];
        if (e->hash) {
            /* The same price twice: the later start date is the one in
             * force; on a tie the first one read stays. */
            const struct tw_price_item *old = &b->items.v[e->item];
            int64_t old_from, old_to;
            tw_price_item_span(old, &old_from, &old_to);
            if (from_ns <= old_from) {
                add_unused(b, i, TW_PB_UNUSED_SUPERSEDED);
                continue;
            }
            add_unused(b, e->item, TW_PB_UNUSED_SUPERSEDED);
        } else {
            b->n++;
        }
        e->hash = h;
        memcpy(e->region, it->region, sizeof(e->region));
        memcpy(e->currency, it->currency, sizeof(e->currency));
        memcpy(e->tier, tier, sizeof(e->tier));
        e->family = (uint8_t)fam;
        e->redundancy = (uint8_t)red;
        e->kind = (uint8_t)kind;
        e->price = it->price;
        e->from_units = it->tier_min;
        e->item = i;
    }
    *out = b;
    return TW_OK;
}

void tw_pricebook_free(struct tw_pricebook *b)
{
    if (!b)
        return;
    tw_price_items_cleanup(&b->items);
    free(b->slots);
    free(b->unused);
    free(b->unused_why);
    free(b);
}

/* ---- JSON ------------------------------------------------------------- */

static int tier_num(const char *t)
{
    return atoi(t + 1);
}

static int cmp_entry(const void *pa, const void *pb)
{
    const struct tw_price_entry *a = *(const struct tw_price_entry *const *)pa;
    const struct tw_price_entry *b = *(const struct tw_price_entry *const *)pb;
    if (a->family != b->family)
        return a->family - b->family;
    if (a->redundancy != b->redundancy)
        return a->redundancy - b->redundancy;
    return tier_num(a->tier) - tier_num(b->tier);
}

static json_t *price_or_null(const struct tw_price_entry *e)
{
    return e ? json_real(tw_money_to_double(e->price)) : json_null();
}

static const char *unused_name(uint8_t why)
{
    switch (why) {
    case TW_PB_UNUSED_ZERO: return "zero_price";
    case TW_PB_UNUSED_EXPIRED: return "expired";
    case TW_PB_UNUSED_NOT_YET: return "not_yet_effective";
    case TW_PB_UNUSED_SUPERSEDED: return "superseded";
    default: return "unknown_meter";
    }
}

enum tw_err tw_pricebook_json(const struct tw_pricebook *b, const char *region,
                              const char *currency, const char *sku, json_t **out,
                              struct tw_error *err)
{
    *out = NULL;
    struct tw_sku ss = {TW_SKU_PREMIUM_SSD, TW_SKU_LRS};
    bool by_sku = sku && canonical_sku(sku, &ss);
    const struct tw_price_entry **rows = malloc((b->n ? b->n : 1) * sizeof(*rows));
    json_t *o = json_object(), *prices = json_array(), *prov = json_array(),
           *unknown = json_array(), *unused = json_object();
    if (!rows || !o || !prices || !prov || !unknown || !unused)
        goto nomem;
    size_t nr = 0;
    for (size_t i = 0; i < b->nslots; i++) {
        const struct tw_price_entry *e = &b->slots[i];
        if (!e->hash || strcmp(e->region, region) != 0 || strcmp(e->currency, currency) != 0)
            continue;
        if (sku && by_sku && (e->family != ss.family || e->redundancy != ss.redundancy))
            continue;
        if (sku && !by_sku && strcmp(e->tier, sku) != 0)
            continue;
        if (e->kind == TW_PB_MONTH || e->kind == TW_PB_GIB_HOUR)
            rows[nr++] = e;
    }
    qsort(rows, nr, sizeof(*rows), cmp_entry);
    for (size_t i = 0; i < nr; i++) {
        const struct tw_price_entry *e = rows[i];
        enum tw_sku_family f = (enum tw_sku_family)e->family;
        enum tw_sku_redundancy r = (enum tw_sku_redundancy)e->redundancy;
        const struct tw_price_item *it = &b->items.v[e->item];
        json_t *row;
        if (e->kind == TW_PB_MONTH) {
            row = json_pack(
                "{s:s, s:s, s:s, s:f, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:s}", "tier", e->tier, "sku",
                tw_sku_name(f, r), "redundancy", tw_sku_redundancy_name(r), "per_month",
                tw_money_to_double(e->price),
                "per_10k_transactions",
                price_or_null(tw_pricebook_find(b, region, currency, f, e->tier, r, TW_PB_OPS_10K)),
                "disk_transactions_per_10k",
                price_or_null(tw_pricebook_find(b, region, currency, f, "", r, TW_PB_TX_10K)),
                "shared_mount_per_month",
                price_or_null(tw_pricebook_find(b, region, currency, f, e->tier, r, TW_PB_MOUNT)),
                "reserved_1y",
                price_or_null(
                    tw_pricebook_find(b, region, currency, f, e->tier, r, TW_PB_RESERVED_1Y)),
                "reserved_3y",
                price_or_null(
                    tw_pricebook_find(b, region, currency, f, e->tier, r, TW_PB_RESERVED_3Y)),
                "meter_id", it->meter_id, "effective_from", it->start, "seen", it->seen);
            if (!row || json_array_append_new(prices, row) != 0)
                goto nomem;
        } else {
            const struct tw_price_entry *io =
                tw_pricebook_find(b, region, currency, f, "", r, TW_PB_IOPS_HOUR);
            const struct tw_price_entry *mb =
                tw_pricebook_find(b, region, currency, f, "", r, TW_PB_MBPS_HOUR);
            row = json_pack("{s:s, s:s, s:f, s:o, s:o, s:f, s:f}", "sku", tw_sku_name(f, r),
                            "redundancy", tw_sku_redundancy_name(r), "per_gib_hour",
                            tw_money_to_double(e->price),
                            "per_iops_hour", price_or_null(io), "per_mbps_hour", price_or_null(mb),
                            "iops_priced_from", io ? io->from_units : 0.0, "mbps_priced_from",
                            mb ? mb->from_units : 0.0);
            if (!row || json_array_append_new(prov, row) != 0)
                goto nomem;
        }
    }
    free(rows);
    rows = NULL;
    if (sku && nr == 0) {
        json_decref(o);
        json_decref(prices);
        json_decref(prov);
        json_decref(unknown);
        json_decref(unused);
        return tw_error_set(err, TW_ENOENT,
                            "no price for %s in %s %s in the price book (%s); a tier the book "
                            "lacks is missing, not free",
                            sku, region, currency, b->source);
    }
    json_int_t counts[5] = {0};
    for (size_t i = 0; i < b->n_unused; i++) {
        const struct tw_price_item *it = &b->items.v[b->unused[i]];
        if (strcmp(it->region, region) != 0 || strcmp(it->currency, currency) != 0)
            continue;
        counts[b->unused_why[i] < 5 ? b->unused_why[i] : 0]++;
        /* Filtered by a SKU, the answer is about that SKU's prices only. */
        if (b->unused_why[i] != TW_PB_UNUSED_UNKNOWN || sku)
            continue;
        json_t *u = json_pack("{s:s, s:s, s:s, s:s, s:f}", "product", it->product, "meter",
                              it->meter, "unit", it->unit, "type", it->type, "price",
                              tw_money_to_double(it->price));
        if (!u || json_array_append_new(unknown, u) != 0)
            goto nomem;
    }
    for (int i = 0; i < 5; i++)
        json_object_set_new(unused, unused_name((uint8_t)i), json_integer(counts[i]));
    json_object_set_new(o, "region", json_string(region));
    json_object_set_new(o, "currency", json_string(currency));
    json_object_set_new(o, "source", json_string(b->source));
    json_object_set_new(o, "fetched_at", json_string(b->fetched_at));
    json_object_set_new(o, "prices", prices);
    json_object_set_new(o, "provisioned", prov);
    json_object_set_new(o, "unknown_meters", unknown);
    json_object_set_new(o, "unused_items", unused);
    if (json_object_size(o) != 8) {
        json_decref(o);
        return tw_error_set(err, TW_ENOMEM, "out of memory for the prices JSON");
    }
    *out = o;
    return TW_OK;
nomem:
    free(rows);
    json_decref(o);
    json_decref(prices);
    json_decref(prov);
    json_decref(unknown);
    json_decref(unused);
    return tw_error_set(err, TW_ENOMEM, "out of memory for the prices JSON");
}
