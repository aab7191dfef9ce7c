/*
 * whatif.c - the what-if calculator (whatif.h): inputs checked and named,
 * the windows and the period made instants, the model of core/savings.h
 * run with no margins, and the result as JSON.
 */
#include "service/whatif.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/sku.h"
#include "core/tier.h"
#include "core/time.h"
#include "service/prices.h"

void tw_whatif_req_init(struct tw_whatif_req *rq)
{
    memset(rq, 0, sizeof(*rq));
    rq->count = 1;
}

static void set_field(char field[TW_WHATIF_FIELD_MAX], const char *f)
{
    if (field)
        snprintf(field, TW_WHATIF_FIELD_MAX, "%s", f);
}

/* ---- the period ------------------------------------------------------- */

/* A date YYYY-MM-DD at BUF[*I..]; TW_EPARSE naming the byte. */
static enum tw_err parse_date(const char *buf, size_t len, size_t *i, const char *which,
                              int64_t *day, struct tw_error *err)
{
    static const char shape[] = "dddd-dd-dd";
    size_t at = *i;
    int v[3] = {0, 0, 0};
    for (size_t k = 0; k < 10; k++) {
        size_t p = at + k;
        if (p >= len)
            return tw_error_set_at(err, TW_EPARSE, 0, (long)p + 1,
                                   "period: at byte %zu: the %s date ends early; expected "
                                   "YYYY-MM-DD",
                                   p + 1, which);
        unsigned char c = (unsigned char)buf[p];
        if (shape[k] == '-') {
            if (c != '-')
                return tw_error_set_at(err, TW_EPARSE, 0, (long)p + 1,
                                       "period: at byte %zu: expected '-' in the %s date "
                                       "YYYY-MM-DD",
                                       p + 1, which);
            continue;
        }
        if (!isdigit(c))
            return tw_error_set_at(err, TW_EPARSE, 0, (long)p + 1,
                                   "period: at byte %zu: expected a digit of the %s date "
                                   "YYYY-MM-DD",
                                   p + 1, which);
        int f = k < 4 ? 0 : k < 7 ? 1 : 2;
        v[f] = v[f] * 10 + (c - '0');
    }
    *i = at + 10;
    struct tw_civil c = {.year = v[0], .month = v[1], .day = v[2]};
    if (v[0] < 1900 || v[0] > 2199)
        return tw_error_set_at(err, TW_ERANGE, 0, (long)at + 1,
                               "period: the %s date %04d-%02d-%02d is outside the years "
                               "1900..2199 tierwise computes",
                               which, v[0], v[1], v[2]);
    if (!tw_civil_valid(&c))
        return tw_error_set_at(err, TW_EPARSE, 0, (long)at + 1,
                               "period: at byte %zu: %04d-%02d-%02d is not a date", at + 1,
                               v[0], v[1], v[2]);
    *day = tw_days_from_civil(v[0], v[1], v[2]);
    return TW_OK;
}

static void day_text(int64_t day, char out[16])
{
    int64_t y;
    int m, d;
    tw_civil_from_days(day, &y, &m, &d);
    snprintf(out, 16, "%04d-%02d-%02d", (int)y, m, d);
}

enum tw_err tw_whatif_period_parse(const char *buf, size_t len, struct tw_whatif_req *rq,
                                   struct tw_error *err)
{
    size_t i = 0;
    int64_t a, b;
    enum tw_err rc = parse_date(buf, len, &i, "start", &a, err);
    if (rc != TW_OK)
        return rc;
    if (i + 2 > len || buf[i] != '.' || buf[i + 1] != '.')
        return tw_error_set_at(err, TW_EPARSE, 0, (long)i + 1,
                               "period: at byte %zu: expected \"..\" between the dates "
                               "(2026-01-01..2027-01-01)",
                               i + 1);
    i += 2;
    if ((rc = parse_date(buf, len, &i, "end", &b, err)) != TW_OK)
        return rc;
    if (i != len)
        return tw_error_set_at(err, TW_EPARSE, 0, (long)i + 1,
                               "period: at byte %zu: unexpected text after the end date", i + 1);
    char sa[16], sb[16];
    day_text(a, sa);
    day_text(b, sb);
    if (b <= a)
        return tw_error_set(err, TW_EINVAL,
                            "period %s..%s: the end %s, and the end date is excluded; give an "
                            "end after the start (2026-01-01..2027-01-01 is the year 2026)",
                            sa, sb, b == a ? "is the start" : "is before the start");
    if (b - a > TW_WHATIF_PERIOD_MAX_DAYS)
        return tw_error_set(err, TW_ERANGE,
                            "period %s..%s is %lld days; at most %d (about 10 years) are "
                            "computed: ask for less",
                            sa, sb, (long long)(b - a), TW_WHATIF_PERIOD_MAX_DAYS);
    rq->from_day = a;
    rq->to_day = b;
    return TW_OK;
}

/* ---- the request body ------------------------------------------------- */

static enum tw_err jx_fail(char field[TW_WHATIF_FIELD_MAX], const char *f, struct tw_error *err)
{
    set_field(field, f);
    return err && err->code ? err->code : TW_EPARSE;
}

enum tw_err tw_whatif_req_parse(const char *buf, size_t len, struct tw_whatif_req *rq,
                                char field[TW_WHATIF_FIELD_MAX], struct tw_error *err)
{
    tw_whatif_req_init(rq);
    set_field(field, "");
    json_t *j = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, "the what-if request", err);
    if (!j)
        return TW_EPARSE;
    enum tw_err rc = TW_OK;
    if (!json_is_object(j)) {
        rc = tw_error_set(err, TW_EPARSE,
                          "the what-if request must be a JSON object {\"region\", \"currency\", "
                          "\"from_tier\", \"to_tier\", \"windows\", \"period\", ...}");
        goto out;
    }
    static const char *const known[] = {"region", "currency", "from_tier", "to_tier",
                                        "from_sku", "to_sku",  "windows",   "tz",
                                        "period", "count",    "io"};
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v)
    {
        bool ok = false;
        for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            ok = ok || strcmp(key, known[k]) == 0;
        if (!ok) {
            set_field(field, key);
            rc = tw_error_set(err, TW_EPARSE,
                              "%.40s is not a field of the what-if request (region, currency, "
                              "from_tier, to_tier, from_sku, to_sku, windows, tz, period, count, "
                              "io)",
                              key);
            goto out;
        }
    }
    struct {
        const char *key;
        char *dst;
        size_t cap;
        unsigned opt;
    } strs[] = {
        {"region", rq->region, sizeof(rq->region), TW_JX_REQUIRED | TW_JX_NONEMPTY},
        {"currency", rq->currency, sizeof(rq->currency), TW_JX_REQUIRED | TW_JX_NONEMPTY},
        {"from_tier", rq->from_tier, sizeof(rq->from_tier), TW_JX_REQUIRED | TW_JX_NONEMPTY},
        {"to_tier", rq->to_tier, sizeof(rq->to_tier), TW_JX_REQUIRED | TW_JX_NONEMPTY},
        {"from_sku", rq->from_sku, sizeof(rq->from_sku), TW_JX_NULLABLE},
        {"to_sku", rq->to_sku, sizeof(rq->to_sku), TW_JX_NULLABLE},
        {"tz", rq->tz, sizeof(rq->tz), TW_JX_NULLABLE | TW_JX_NONEMPTY},
    };
    for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
        if (!tw_jx_str(json_object_get(j, strs[k].key), "", strs[k].key, strs[k].opt, strs[k].dst,
                       strs[k].cap, err)) {
            rc = jx_fail(field, strs[k].key, err);
            goto out;
        }
    bool ok;
    const json_t *w =
        tw_jx_want(json_object_get(j, "windows"), "", "windows", JSON_ARRAY, TW_JX_REQUIRED, &ok,
                   err);
    if (!w) {
        rc = jx_fail(field, "windows", err);
        goto out;
    }
    if (json_array_size(w) == 0 || json_array_size(w) > TW_WINDOWS_MAX) {
        set_field(field, "windows");
        rc = tw_error_set(err, TW_EINVAL,
                          "windows must list 1 to %d windows (\"Sat 00:00-Mon 00:00\"), got %zu",
                          TW_WINDOWS_MAX, json_array_size(w));
        goto out;
    }
    for (size_t k = 0; k < json_array_size(w); k++) {
        char path[32];
        snprintf(path, sizeof(path), "windows[%zu]", k);
        if (!tw_jx_str(json_array_get(w, k), "", path, TW_JX_REQUIRED | TW_JX_NONEMPTY,
                       rq->window[k], sizeof(rq->window[k]), err)) {
            rc = jx_fail(field, path, err);
            goto out;
        }
    }
    rq->n_windows = json_array_size(w);
    const json_t *p = json_object_get(j, "period");
    if (json_is_string(p)) {
        rc = tw_whatif_period_parse(json_string_value(p), json_string_length(p), rq, err);
        if (rc != TW_OK) {
            set_field(field, "period");
            goto out;
        }
    } else if (json_is_object(p)) {
        char a[16], b[16], both[40];
        json_object_foreach((json_t *)p, key, v)
        {
            if (strcmp(key, "from") != 0 && strcmp(key, "to") != 0) {
                set_field(field, "period");
                rc = tw_error_set(err, TW_EPARSE,
                                  "period.%.40s is not a field of the period (from, to)", key);
                goto out;
            }
        }
        if (!tw_jx_str(json_object_get(p, "from"), "period", "from",
                       TW_JX_REQUIRED | TW_JX_NONEMPTY, a, sizeof(a), err)) {
            rc = jx_fail(field, "period.from", err);
            goto out;
        }
        if (!tw_jx_str(json_object_get(p, "to"), "period", "to", TW_JX_REQUIRED | TW_JX_NONEMPTY,
                       b, sizeof(b), err)) {
            rc = jx_fail(field, "period.to", err);
            goto out;
        }
        int n = snprintf(both, sizeof(both), "%s..%s", a, b);
        rc = tw_whatif_period_parse(both, (size_t)n, rq, err);
        if (rc != TW_OK) {
            /* Which date: the byte says; an end not after the start, or
             * too far from it, is the end's fault. */
            set_field(field, !err || err->column <= 0 || err->column > (long)strlen(a) + 2
                                 ? "period.to"
                                 : "period.from");
            goto out;
        }
    } else {
        set_field(field, "period");
        rc = tw_error_set(err, p ? TW_EPARSE : TW_EINVAL,
                          "period %s: give \"2026-01-01..2027-01-01\" or {\"from\": "
                          "\"2026-01-01\", \"to\": \"2027-01-01\"} (the end date excluded)",
                          p ? "must be a string or an object" : "is missing");
        goto out;
    }
    if (!tw_jx_int(json_object_get(j, "count"), "", "count", 1, TW_WHATIF_COUNT_MAX,
                   TW_JX_NULLABLE, &rq->count, err)) {
        rc = jx_fail(field, "count", err);
        goto out;
    }
    const json_t *io =
        tw_jx_want(json_object_get(j, "io"), "", "io", JSON_OBJECT, TW_JX_NULLABLE, &ok, err);
    if (!ok) {
        rc = jx_fail(field, "io", err);
        goto out;
    }
    if (io) {
        json_object_foreach((json_t *)io, key, v)
        {
            if (strcmp(key, "ios_per_hour") != 0 && strcmp(key, "io_bytes") != 0) {
                set_field(field, "io");
                rc = tw_error_set(err, TW_EPARSE,
                                  "io.%.40s is not a field of io (ios_per_hour, io_bytes)", key);
                goto out;
            }
        }
        if (!tw_jx_int(json_object_get(io, "ios_per_hour"), "io", "ios_per_hour", 0,
                       INT64_C(100000000000), TW_JX_REQUIRED, &rq->io.ios_per_hour, err)) {
            rc = jx_fail(field, "io.ios_per_hour", err);
            goto out;
        }
        if (!tw_jx_int(json_object_get(io, "io_bytes"), "io", "io_bytes", 1, INT64_C(1) << 30,
                       TW_JX_REQUIRED, &rq->io.io_bytes, err)) {
            rc = jx_fail(field, "io.io_bytes", err);
            goto out;
        }
        rq->io_set = true;
    }
out:
    json_decref(j);
    return rc;
}

/* ---- the run ------------------------------------------------------------ */

static void note(struct tw_whatif_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct tw_whatif_result *r, const char *fmt, ...)
{
    if (r->n_notes >= TW_WHATIF_NOTES_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->n_notes++], sizeof(r->notes[0]), fmt, ap);
    va_end(ap);
}

/* One side: TIER (and SKU, "" for the default of the tier's letter with
 * redundancy RED) checked against the catalog. */
static enum tw_err side(const struct tw_tier_catalog *cat, const char *which, const char *tier_in,
                        const char *sku_in, enum tw_sku_redundancy red, struct tw_sku *out,
                        int64_t *size_gib, struct tw_whatif_price *p,
                        char field[TW_WHATIF_FIELD_MAX], struct tw_error *err)
{
    char tier[8];
    size_t n = strlen(tier_in);
    char tf[16], sf[16];
    snprintf(tf, sizeof(tf), "%s_tier", which);
    snprintf(sf, sizeof(sf), "%s_sku", which);
    for (size_t i = 0; i < n && i < sizeof(tier) - 1; i++)
        tier[i] = (char)toupper((unsigned char)tier_in[i]);
    tier[n < sizeof(tier) - 1 ? n : sizeof(tier) - 1] = '\0';
    enum tw_sku_family fam;
    if (n >= sizeof(tier) || !tw_sku_tier_parse(tier, strlen(tier), &fam, NULL)) {
        set_field(field, tf);
        return tw_error_set(err, TW_EINVAL,
                            "%s \"%.20s\" is not a disk tier: a letter P (Premium SSD), E "
                            "(Standard SSD) or S (Standard HDD) and its number, such as P10, "
                            "E10, S10",
                            tf, tier_in);
    }
    const struct tw_tier *t = tw_tier_by_name(cat, tier);
    if (!t) {
        set_field(field, tf);
        return tw_error_set(err, TW_EINVAL,
                            "%s %s is not a tier Azure offers for %s (pricing/azure-disk-tiers."
                            "json lists them: P1..P80, E1..E80, S4..S80)",
                            tf, tier, tw_sku_family_name(fam));
    }
    struct tw_sku sku = {fam, red};
    if (sku_in && sku_in[0]) {
        if (!tw_sku_parse(sku_in, &sku)) {
            set_field(field, sf);
            return tw_error_set(err, TW_EINVAL,
                                "%s \"%.40s\" is not a disk SKU (Premium_LRS, Premium_ZRS, "
                                "StandardSSD_LRS, StandardSSD_ZRS, Standard_LRS)",
                                sf, sku_in);
        }
        if (sku.family != fam) {
            set_field(field, sf);
            return tw_error_set(err, TW_EINVAL,
                                "%s %s is %s, but %s %s is a %s tier: give a tier of the SKU's "
                                "family or leave %s out",
                                sf, tw_sku_name(sku.family, sku.redundancy),
                                tw_sku_family_name(sku.family), tf, tier,
                                tw_sku_family_name(fam), sf);
        }
    }
    const char *name = tw_sku_name(sku.family, sku.redundancy);
    if (!tw_tier_sku(cat, name, NULL)) {
        const char *hdd = sku.family == TW_SKU_STANDARD_HDD ? "; Standard HDD is LRS only" : "";
        if (sku_in && sku_in[0]) {
            set_field(field, sf);
            return tw_error_set(err, TW_EINVAL, "%s %s: Azure offers no %s (%s with %s "
                                "redundancy)%s",
                                sf, name, name, tw_sku_family_name(sku.family),
                                tw_sku_redundancy_name(sku.redundancy), hdd);
        }
        /* The target's redundancy is the disk's (from_sku's) when to_sku
         * is left out: say so, since the tier alone is not the fault. */
        set_field(field, tf);
        return tw_error_set(err, TW_EINVAL,
                            "%s %s: Azure offers no %s (%s with %s redundancy, kept from "
                            "from_sku: ZRS stays ZRS)%s; give a target that has it, or to_sku",
                            tf, tier, name, tw_sku_family_name(sku.family),
                            tw_sku_redundancy_name(sku.redundancy), hdd);
    }
    *out = sku;
    *size_gib = t->size_gib;
    snprintf(p->tier, sizeof(p->tier), "%s", tier);
    snprintf(p->sku, sizeof(p->sku), "%s", name);
    return TW_OK;
}

static enum tw_err price(const struct tw_pricebook *b, const char *region, const char *currency,
                         struct tw_sku s, struct tw_whatif_price *p, struct tw_error *err)
{
    enum tw_err rc = tw_pricebook_money(b, region, currency, s.family, p->tier, s.redundancy,
                                        TW_PB_MONTH, &p->per_month, err);
    if (rc != TW_OK)
        return rc;
    const struct tw_price_entry *e =
        tw_pricebook_find(b, region, currency, s.family, p->tier, s.redundancy, TW_PB_MONTH);
    if (e && e->item < b->items.n) {
        snprintf(p->meter, sizeof(p->meter), "%s", b->items.v[e->item].meter);
        snprintf(p->effective_from, sizeof(p->effective_from), "%s", b->items.v[e->item].start);
    }
    return TW_OK;
}

static enum tw_err windows(const struct tw_whatif_req *rq, struct tw_windows *w,
                           char field[TW_WHATIF_FIELD_MAX], struct tw_error *err)
{
    memset(w, 0, sizeof(*w));
    if (rq->n_windows == 0) {
        set_field(field, "windows");
        return tw_error_set(err, TW_EINVAL,
                            "no window given: name at least one, such as \"Sat 00:00-Mon 00:00\"");
    }
    for (size_t i = 0; i < rq->n_windows; i++) {
        struct tw_windows one;
        struct tw_error e = {0};
        const char *text = rq->window[i];
        enum tw_err rc = tw_windows_parse(text, strlen(text), &one, &e);
        if (rc != TW_OK) {
            char f[32];
            snprintf(f, sizeof(f), "windows[%zu]", i);
            set_field(field, f);
            return tw_error_set_at(err, rc, 0, e.column, "%s", e.msg);
        }
        if (w->n + one.n > TW_WINDOWS_MAX) {
            set_field(field, "windows");
            return tw_error_set(err, TW_ERANGE, "more than %d windows in all: give fewer",
                                TW_WINDOWS_MAX);
        }
        memcpy(&w->w[w->n], one.w, one.n * sizeof(one.w[0]));
        w->n += one.n;
    }
    return TW_OK;
}

/* Whether item IT may price tier FROM or TO or the target's transactions
 * (its meter names one of them, the family's 4-tier one or the tier-less
 * transactions). */
static bool item_concerns(const struct tw_price_item *it, const char *from, const char *to,
                          char letter)
{
    char four[4];
    snprintf(four, sizeof(four), "%c4", letter);
    const char *names[] = {from, to, four};
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(names[k]);
        if (n && strncmp(it->meter, names[k], n) == 0 && it->meter[n] == ' ')
            return true;
    }
    return strncmp(it->meter, "Disk Transactions ", 18) == 0;
}

/* Whether B holds an item of TIER's monthly meter in S's redundancy
 * ("P10 LRS Disk"), in effect at some time or not. */
static bool tier_in_items(const struct tw_pricebook *b, const char *tier, struct tw_sku s)
{
    char meter[32];
    snprintf(meter, sizeof(meter), "%s %s Disk", tier, tw_sku_redundancy_name(s.redundancy));
    for (size_t i = 0; i < b->items.n; i++)
        if (strcmp(b->items.v[i].meter, meter) == 0)
            return true;
    return false;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The instants cutting [P0, P1) where a price of B may change: P0, each
 * effectiveStartDate and the second after each effectiveEndDate (the book
 * counts the end's second in) of the items that concern the move, inside
 * the period, and P1; sorted, each once.  *OUT is malloc'd. */
static enum tw_err price_cuts(const struct tw_pricebook *b, const char *from, const char *to,
                              char letter, int64_t p0, int64_t p1, int64_t **out, size_t *n_out,
                              char field[TW_WHATIF_FIELD_MAX], struct tw_error *err)
{
    enum { CUTS_MAX = 64 };
    int64_t *c = malloc((2 * b->items.n + 2) * sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the period's prices");
    size_t n = 0;
    c[n++] = p0;
    c[n++] = p1;
    for (size_t i = 0; i < b->items.n; i++) {
        const struct tw_price_item *it = &b->items.v[i];
        if (!item_concerns(it, from, to, letter))
            continue;
        /* Every item of a book has dates it reads (tw_pricebook_build
         * refuses the others), so no cut is lost; an item without a start
         * or an end starts or ends outside any period. */
        int64_t from_ns, to_ns;
        tw_price_item_span(it, &from_ns, &to_ns);
        if (from_ns > p0 && from_ns < p1)
            c[n++] = from_ns;
        if (to_ns > p0 && to_ns < p1)
            c[n++] = to_ns;
    }
    qsort(c, n, sizeof(*c), cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || c[i] != c[k - 1])
            c[k++] = c[i];
    if (k > CUTS_MAX) {
        free(c);
        set_field(field, "period");
        return tw_error_set(err, TW_ERANGE,
                            "the prices may change %zu times within the period (more than %d): "
                            "ask for a shorter period",
                            k - 2, CUTS_MAX - 2);
    }
    *out = c;
    *n_out = k;
    return TW_OK;
}

/* B rebuilt from its items as they stood at WHEN (RFC 3339). */
static enum tw_err book_at(const struct tw_pricebook *b, const char *when,
                           struct tw_pricebook **out, struct tw_error *err)
{
    struct tw_price_items copy = {0};
    if (b->items.n) {
        copy.v = malloc(b->items.n * sizeof(*copy.v));
        if (!copy.v)
            return tw_error_set(err, TW_ENOMEM, "out of memory for a price book");
        memcpy(copy.v, b->items.v, b->items.n * sizeof(*copy.v));
        copy.n = copy.cap = b->items.n;
    }
    return tw_pricebook_build(&copy, NULL, NULL, b->source, b->fetched_at, when, out, err);
}

/* TW_ERANGE naming F when A can't be written rounded to R's currency or
 * with 12 decimals. */
static enum tw_err writable(struct tw_amount a, const struct tw_whatif_result *r, const char *f,
                            const char *what, char field[TW_WHATIF_FIELD_MAX],
                            struct tw_error *err)
{
    char s[64];
    struct tw_error e = {0};
    if (tw_amount_format(a, r->currency, s, sizeof(s), &e) == TW_OK &&
        tw_amount_decimal(a, 12, s, sizeof(s)))
        return TW_OK;
    set_field(field, f);
    if (strcmp(f, "count") == 0)
        return tw_error_set(err, TW_ERANGE,
                            "%s for %lld disks is beyond the amounts tierwise writes (about 9.2 "
                            "trillion %s): ask for fewer disks (count)",
                            what, (long long)r->count, r->currency);
    if (strcmp(f, "io") == 0)
        return tw_error_set(err, TW_ERANGE,
                            "%s of %lld I/Os an hour of %lld bytes are beyond the amounts "
                            "tierwise writes (about 9.2 trillion %s a disk): give a smaller I/O "
                            "rate or size (io: --io-per-hour, --io-size)",
                            what, (long long)r->io.ios_per_hour, (long long)r->io.io_bytes,
                            r->currency);
    return tw_error_set(err, TW_ERANGE,
                        "%s is beyond the amounts tierwise writes (about 9.2 trillion %s): ask "
                        "for a shorter period",
                        what, r->currency);
}

enum tw_err tw_whatif_run(const struct tw_whatif_req *rq, const struct tw_tier_catalog *cat,
                          const struct tw_pricebook *b, const struct tw_tz *z,
                          struct tw_whatif_result *out, char field[TW_WHATIF_FIELD_MAX],
                          struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    set_field(field, "");
    struct tw_tz *utc = NULL;
    struct tw_interval *iv = NULL;
    struct tw_window_saving *ws = NULL;
    unsigned char *seen = NULL; /* windows counted as a span */
    int64_t *cuts = NULL;
    struct tw_tx_rule rules[TW_WHATIF_PIECES_MAX];
    enum tw_err rc = tw_svc_prices_key(rq->region, rq->currency, out->region, out->currency, err);
    if (rc != TW_OK) {
        set_field(field, err && strstr(err->msg, "currency") ? "currency" : "region");
        return rc;
    }
    if (rq->to_day <= rq->from_day) {
        set_field(field, "period");
        return tw_error_set(err, TW_EINVAL,
                            "no period given: give one such as 2026-01-01..2027-01-01 (the end "
                            "date excluded)");
    }
    if (rq->count < 1 || rq->count > TW_WHATIF_COUNT_MAX) {
        set_field(field, "count");
        return tw_error_set(err, TW_ERANGE, "count must be a number of disks from 1 to %d",
                            TW_WHATIF_COUNT_MAX);
    }
    if (!cat)
        return tw_error_set(err, TW_EINVAL, "a what-if needs the tier catalog to check its tiers");
    struct tw_sku from, to;
    int64_t from_gib, to_gib;
    if ((rc = side(cat, "from", rq->from_tier, rq->from_sku, TW_SKU_LRS, &from, &from_gib,
                   &out->from, field, err)) != TW_OK ||
        (rc = side(cat, "to", rq->to_tier, rq->to_sku, from.redundancy, &to, &to_gib, &out->to,
                   field, err)) != TW_OK)
        goto done;
    /* A change of type keeps the disk's size: the target's step must hold it. */
    if (to_gib < from_gib) {
        set_field(field, "to_tier");
        rc = tw_error_set(err, TW_EINVAL,
                          "to_tier %s (%lld GiB) can't hold %s %s disk (%lld GiB): a change of "
                          "type keeps the size, so the target is a tier of %lld GiB or more",
                          out->to.tier, (long long)to_gib, out->from.tier[0] == 'E' ? "an" : "a",
                          out->from.tier, (long long)from_gib,
                          (long long)from_gib);
        goto done;
    }
    /* ... and Azure bills it as the target family's step that holds the
     * size, not a larger one: a larger to_tier would price the wrong step. */
    {
        const struct tw_tier *step = NULL;
        struct tw_error se = {0};
        if (tw_tier_for_size(cat, out->to.sku, from_gib, &step, &se) == TW_OK && step &&
            strcmp(step->name, out->to.tier) != 0) {
            set_field(field, "to_tier");
            rc = tw_error_set(err, TW_EINVAL,
                              "to_tier %s (%lld GiB) is not what %s %s disk (%lld GiB) becomes: "
                              "a change of type keeps the size, so Azure bills it as %s, the "
                              "%s step that holds %lld GiB; give to_tier %s",
                              out->to.tier, (long long)to_gib,
                              out->from.tier[0] == 'E' ? "an" : "a", out->from.tier,
                              (long long)from_gib, step->name, out->to.sku, (long long)from_gib,
                              step->name);
            goto done;
        }
    }
    if ((rc = windows(rq, &out->windows, field, err)) != TW_OK)
        goto done;
    if (!z) {
        if ((rc = tw_tz_from_posix("UTC0", 4, &utc, err)) != TW_OK)
            goto done;
        z = utc;
    }
    snprintf(out->tz, sizeof(out->tz), "%s", rq->tz[0] ? rq->tz : "UTC");
    out->from_day = rq->from_day;
    out->to_day = rq->to_day;
    out->count = rq->count;
    out->io_set = rq->io_set;
    out->io = rq->io;
    snprintf(out->source, sizeof(out->source), "%s", b->source);
    snprintf(out->fetched_at, sizeof(out->fetched_at), "%s", b->fetched_at);
    if ((rc = tw_tz_local_to_ns(z, rq->from_day * TW_NS_PER_DAY, &out->period_from_ns, NULL)) !=
            TW_OK ||
        (rc = tw_tz_local_to_ns(z, rq->to_day * TW_NS_PER_DAY, &out->period_to_ns, NULL)) !=
            TW_OK) {
        set_field(field, "period");
        rc = tw_error_set(err, TW_ERANGE, "the period is outside the instants tierwise handles");
        goto done;
    }
    /* Prices: the book's, named when missing (in effect at some time:
     * each piece's lookup says which has none then). */
    if (!tw_whatif_book_has_prices(b)) {
        rc = tw_error_set(err, TW_ENOENT,
                          "the price book (%s) holds no disk price for %s %s: refresh or import "
                          "that region's prices in that currency",
                          b->source, out->region, out->currency);
        goto done;
    }
    /* The windows over the period and a week on each side. */
    size_t n = 0;
    if ((rc = tw_windows_instants(&out->windows, z, out->period_from_ns - TW_NS_PER_WEEK,
                                  out->period_to_ns + TW_NS_PER_WEEK, &iv, &n, err)) != TW_OK) {
        set_field(field, "period");
        goto done;
    }
    ws = calloc(n ? n : 1, sizeof(*ws));
    seen = calloc(n ? n : 1, 1);
    if (!ws || !seen) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory for %zu windows", n);
        goto done;
    }
    /* The period cut where the prices may change, each piece priced by
     * the book as it stood at its start. */
    size_t n_cuts = 0;
    if ((rc = price_cuts(b, out->from.tier, out->to.tier, tw_sku_tier_letter(to.family),
                         out->period_from_ns, out->period_to_ns, &cuts, &n_cuts, field, err)) !=
        TW_OK)
        goto done;
    struct tw_error te = {0};
    for (size_t k = 0; k + 1 < n_cuts; k++) {
        struct tw_whatif_piece pc;
        memset(&pc, 0, sizeof(pc));
        pc.from_ns = cuts[k];
        pc.to_ns = cuts[k + 1];
        struct tw_pricebook *pb = NULL;
        /* The book as of the piece's start to the nanosecond (an item
         * starting at a fraction of a second is in effect then); the
         * messages show the fraction only when there is one. */
        char asof[48], when[48];
        if (!tw_rfc3339_format_ns(pc.from_ns, 0, 9, asof, sizeof(asof)) ||
            !tw_rfc3339_format_ns(pc.from_ns, 0, pc.from_ns % TW_NS_PER_S ? 9 : 0, when,
                                  sizeof(when))) {
            set_field(field, "period");
            rc = tw_error_set(err, TW_ERANGE, "the period is outside the instants tierwise handles");
            goto done;
        }
        if ((rc = book_at(b, asof, &pb, err)) != TW_OK)
            goto done;
        struct tw_whatif_price pf = out->from, pt = out->to;
        struct tw_error pe = {0};
        const struct tw_whatif_price *missing = &pf;
        rc = price(pb, out->region, out->currency, from, &pf, &pe);
        if (rc == TW_OK) {
            missing = &pt;
            rc = price(pb, out->region, out->currency, to, &pt, &pe);
        }
        if (rc != TW_OK) {
            tw_pricebook_free(pb);
            /* The items in effect then: the book may have it at another
             * time, so the date is said; a price the book has at no time,
             * in a period of one part, is simply missing. */
            if (n_cuts == 2 && !tier_in_items(b, missing->tier, missing == &pf ? from : to))
                rc = tw_error_set(err, rc, "%s", pe.msg);
            else
                rc = tw_error_set(err, rc, "at %s (%s, priced by the items in effect then): %s",
                                  when, k == 0 ? "the period's start" : "where the prices change",
                                  pe.msg);
            goto done;
        }
        struct tw_tx_rule rule;
        struct tw_error tre = {0};
        enum tw_err trc = tw_tx_rule_for(pb, out->region, out->currency, to.family, out->to.tier,
                                         to.redundancy, &rule, &tre);
        tw_pricebook_free(pb);
        if (trc != TW_OK && (rq->io_set || trc != TW_ENOENT)) {
            if (rq->io_set) {
                rc = tw_error_set(err, trc, "%s: a running VM's transactions on %s %s can't be "
                                  "priced%s%s", tre.msg, out->to.tier, out->to.sku,
                                  n_cuts > 2 ? " from " : "", n_cuts > 2 ? when : "");
                set_field(field, "io");
            } else {
                rc = tw_error_set(err, trc, "%s", tre.msg);
            }
            goto done;
        }
        pc.from_per_month = pf.per_month;
        pc.to_per_month = pt.per_month;
        snprintf(pc.from_effective, sizeof(pc.from_effective), "%s", pf.effective_from);
        snprintf(pc.to_effective, sizeof(pc.to_effective), "%s", pt.effective_from);
        pc.tx_priced = trc == TW_OK;
        pc.tx_per_10k = rule.per_10k;
        if (pc.tx_priced)
            snprintf(pc.tx_meter, sizeof(pc.tx_meter), "%s", rule.used);
        if (k == 0) {
            out->from = pf;
            out->to = pt;
            out->tx = rule;
            out->tx_priced = pc.tx_priced;
            te = tre;
        }
        struct tw_whatif_piece *last = out->n_pieces ? &out->pieces[out->n_pieces - 1] : NULL;
        if (last && last->from_per_month.micros == pc.from_per_month.micros &&
            last->to_per_month.micros == pc.to_per_month.micros &&
            last->tx_priced == pc.tx_priced && last->tx_per_10k.micros == pc.tx_per_10k.micros &&
            strcmp(last->tx_meter, pc.tx_meter) == 0) {
            last->to_ns = pc.to_ns; /* the same prices: one piece */
            continue;
        }
        if (out->n_pieces == TW_WHATIF_PIECES_MAX) {
            set_field(field, "period");
            rc = tw_error_set(err, TW_ERANGE,
                              "the prices change more than %d times within the period: ask for "
                              "a shorter period",
                              TW_WHATIF_PIECES_MAX - 1);
            goto done;
        }
        out->pieces[out->n_pieces++] = pc;
        rules[out->n_pieces - 1] = rule;
    }
    struct tw_switch_opts o;
    memset(&o, 0, sizeof(o));
    if (rq->io_set)
        o.io = rq->io;
    struct tw_amount zero = {0, 1};
    out->saving = out->tx_cost = zero;
    struct tw_bill_span base[TW_WHATIF_PIECES_MAX];
    for (size_t k = 0; k < out->n_pieces; k++) {
        struct tw_whatif_piece *pc = &out->pieces[k];
        struct tw_disk_saving total;
        memset(&total, 0, sizeof(total));
        rc = tw_savings_windows(iv, n, pc->from_ns, pc->to_ns, pc->from_per_month,
                                pc->to_per_month, pc->tx_priced ? &rules[k] : NULL, &o, ws, &total,
                                err);
        if (rc == TW_OK)
            rc = tw_amount_add(out->saving, total.saving, &out->saving, err);
        if (rc == TW_OK)
            rc = tw_amount_add(out->tx_cost, total.tx_cost, &out->tx_cost, err);
        if (rc != TW_OK) {
            set_field(field, rq->io_set ? "io" : "period");
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            if (ws[i].skip == TW_WINDOW_TAKEN && ws[i].downgraded_ns > 0 && !seen[i]) {
                seen[i] = 1;
                out->n_spans++;
            }
        pc->downgraded_ns = total.downgraded_ns;
        pc->saving = total.saving;
        pc->tx_cost = total.tx_cost;
        out->downgraded_ns += total.downgraded_ns;
        base[k] = (struct tw_bill_span){pc->from_ns, pc->to_ns, pc->from_per_month};
    }
    if ((rc = tw_bill_cost(base, out->n_pieces, &out->baseline, err)) != TW_OK ||
        (rc = tw_amount_sub(out->baseline, out->saving, &out->with_plan, err)) != TW_OK) {
        set_field(field, rq->io_set ? "io" : "period");
        goto done;
    }
    if ((rc = tw_amount_scale(out->saving, rq->count, 1, &out->total_saving, err)) != TW_OK ||
        (rc = tw_amount_scale(out->baseline, rq->count, 1, &out->total_baseline, err)) != TW_OK) {
        set_field(field, "count");
        goto done;
    }
    /* Every figure must be writable, rounded and unrounded: what can't be
     * is refused here, naming the input that made it so large. */
    if ((rc = writable(out->tx_cost, out, rq->io_set ? "io" : "period", "the transactions",
                       field, err)) != TW_OK ||
        (rc = writable(out->saving, out, rq->io_set ? "io" : "period", "the saving per disk",
                       field, err)) != TW_OK ||
        (rc = writable(out->baseline, out, "period", "the period's cost per disk", field, err)) !=
            TW_OK ||
        (rc = writable(out->with_plan, out, rq->io_set ? "io" : "period",
                       "the period's cost per disk with the move", field, err)) != TW_OK ||
        (rc = writable(out->total_saving, out, "count", "the total saving", field, err)) !=
            TW_OK ||
        (rc = writable(out->total_baseline, out, "count", "the total cost", field, err)) != TW_OK)
        goto done;
    for (size_t k = 0; k < out->n_pieces; k++)
        if ((rc = writable(out->pieces[k].saving, out, rq->io_set ? "io" : "period",
                           "the saving of a part of the period", field, err)) != TW_OK)
            goto done;
    /* What a reader should know. */
    char pt[TW_MONEY_TEXT_MAX];
    if (!rq->io_set) {
        if (out->tx_priced && out->tx.kind != TW_TX_NONE)
            note(out,
                 "transactions: none are charged, since a deallocated VM does no I/O (%s %s "
                 "bills %s %s per 10,000 while in use: %s)",
                 out->to.tier, out->to.sku, tw_money_text(out->tx.per_10k, pt, sizeof(pt)),
                 out->currency, out->tx.meter);
        else if (!out->tx_priced)
            note(out,
                 "transactions: none are charged, since a deallocated VM does no I/O (the book "
                 "has no transaction price for %s %s: %s)",
                 out->to.tier, out->to.sku, te.msg);
    } else if (out->tx.kind == TW_TX_NONE) {
        note(out,
             "the VM keeps running on %s %s during the windows with %lld I/Os an hour of %lld "
             "bytes: %s bills no transactions, so none are charged, and the disk performs at "
             "%s's rating meanwhile",
             out->to.tier, out->to.sku, (long long)rq->io.ios_per_hour,
             (long long)rq->io.io_bytes, tw_sku_family_name(to.family), out->to.tier);
    } else {
        note(out,
             "the VM keeps running on %s %s during the windows with %lld I/Os an hour of %lld "
             "bytes: their transactions are charged (%s %s per 10,000, %s) and the disk "
             "performs at %s's rating meanwhile",
             out->to.tier, out->to.sku, (long long)rq->io.ios_per_hour,
             (long long)rq->io.io_bytes, tw_money_text(out->tx.per_10k, pt, sizeof(pt)),
             out->currency, out->tx.meter, out->to.tier);
    }
    if (out->n_pieces > 1)
        note(out,
             "the prices change within the period: it is priced in %zu parts, each by the items "
             "in effect at its start (\"prices\" lists them; from and to show the first)",
             out->n_pieces);
    bool tx_changes = false;
    for (size_t k = 1; k < out->n_pieces; k++)
        tx_changes |= out->pieces[k].tx_priced != out->pieces[0].tx_priced ||
                      out->pieces[k].tx_per_10k.micros != out->pieces[0].tx_per_10k.micros ||
                      strcmp(out->pieces[k].tx_meter, out->pieces[0].tx_meter) != 0;
    if (tx_changes)
        note(out,
             "the transaction price of %s %s changes within the period: each part is priced by "
             "its own (\"prices\" lists tx_per_10k, tx_meter and transactions_unrounded a part; "
             "calculation.transactions is the first part's)",
             out->to.tier, out->to.sku);
    if (out->tx_priced && out->tx.note[0])
        note(out, "%s", out->tx.note);
    bool dearer = false;
    for (size_t k = 0; k < out->n_pieces; k++)
        dearer |= tw_money_cmp(out->pieces[k].to_per_month, out->pieces[k].from_per_month) >= 0;
    char sv[96];
    if (!tw_amount_decimal(out->saving, 12, sv, sizeof(sv)))
        sv[0] = '\0';
    if (dearer)
        note(out, "%s %s costs as much as %s %s or more here: the move saves nothing, and the "
                  "saving is not positive",
             out->to.tier, out->to.sku, out->from.tier, out->from.sku);
    else if (out->saving.num <= 0 && out->downgraded_ns == 0)
        note(out, "the saving is not positive (%s %s): the windows hold no time within the "
                  "period",
             sv, out->currency);
    else if (out->saving.num <= 0)
        note(out, "the saving is not positive (%s %s a disk): the transactions on %s %s in the "
                  "windows cost as much as the lower monthly price saves, or more",
             sv, out->currency, out->to.tier, out->to.sku);
    /* A book whose items carry no effective date (the bundled snapshot)
     * gives its prices for any period: say what date they are of. */
    if (!out->from.effective_from[0] || !out->to.effective_from[0]) {
        int64_t asof;
        if (out->fetched_at[0] && tw_price_date(out->fetched_at, &asof) &&
            out->period_from_ns < asof)
            note(out,
                 "the prices of %s carry no effective date: they are the book's of %s (its "
                 "fetched_at), and the period starts before that, so it is priced as if they "
                 "held then; Azure may have charged otherwise",
                 !out->from.effective_from[0] && !out->to.effective_from[0] ? "both tiers"
                 : !out->from.effective_from[0] ? out->from.tier
                                                 : out->to.tier,
                 out->fetched_at);
    }
    if (!out->fetched_at[0])
        note(out, "the price source gives no fetch time: check that its prices are current");
    note(out, "the switches are taken at the windows' edges, with no margins and no limit on "
              "type changes (a policy adds both; Azure allows a disk's type to change only a few "
              "times a day)");
done:
    free(cuts);
    free(seen);
    free(ws);
    free(iv);
    tw_tz_free(utc);
    return rc;
}

/* ---- JSON ------------------------------------------------------------- */

struct jb {
    enum tw_err rc;
    struct tw_error *err;
    const char *currency;
};

static json_t *amount_round(struct jb *jb, struct tw_amount a)
{
    char s[64];
    if (jb->rc != TW_OK)
        return NULL;
    jb->rc = tw_amount_format(a, jb->currency, s, sizeof(s), jb->err);
    return jb->rc == TW_OK ? json_string(s) : NULL;
}

static json_t *amount_exact(struct jb *jb, struct tw_amount a)
{
    char s[64];
    if (jb->rc != TW_OK)
        return NULL;
    if (!tw_amount_decimal(a, 12, s, sizeof(s))) {
        jb->rc = tw_error_set(jb->err, TW_ERANGE, "an amount too large to write");
        return NULL;
    }
    return json_string(s);
}

static json_t *money_text(struct tw_money m)
{
    char s[TW_MONEY_TEXT_MAX];
    return json_string(tw_money_text(m, s, sizeof(s)));
}

static json_t *side_json(const struct tw_whatif_result *r, const struct tw_whatif_price *p)
{
    return json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s}", "tier", p->tier, "sku", p->sku,
                     "per_month", money_text(p->per_month), "meter", p->meter, "effective_from",
                     p->effective_from, "source", r->source, "fetched_at", r->fetched_at);
}

static json_t *instant(int64_t ns)
{
    char s[48];
    if (!tw_rfc3339_format_ns(ns, 0, ns % TW_NS_PER_S ? 9 : 0, s, sizeof(s)))
        return json_null();
    return json_string(s);
}

enum tw_err tw_whatif_json(const struct tw_whatif_result *r, json_t **out, struct tw_error *err)
{
    *out = NULL;
    struct jb jb = {TW_OK, err, r->currency};
    char fromd[16], tod[16], hours[48];
    day_text(r->from_day, fromd);
    day_text(r->to_day, tod);
    if (!tw_hours_decimal(r->downgraded_ns, hours, sizeof(hours)))
        return tw_error_set(err, TW_ERANGE, "hours downgraded too large to write");
    json_t *wins = json_array();
    for (size_t i = 0; wins && i < r->windows.n; i++) {
        struct tw_windows one = {.n = 1};
        one.w[0] = r->windows.w[i];
        char t[64];
        if (tw_windows_format(&one, t, sizeof(t)))
            json_array_append_new(wins, json_string(t));
    }
    json_t *notes = json_array();
    for (size_t i = 0; notes && i < r->n_notes; i++)
        json_array_append_new(notes, json_string(r->notes[i]));
    /* The number is the string's micro-hours: the same digits whatever
     * precision an encoder gives reals (the server's and the command's
     * differ), since 6 decimals of at most 5 whole digits are 11 digits. */
    json_t *hours_num = r->downgraded_ns % TW_NS_PER_HOUR == 0
                            ? json_integer(r->downgraded_ns / TW_NS_PER_HOUR)
                            : json_real(strtod(hours, NULL));
    struct tw_money diff;
    if (tw_money_sub(r->from.per_month, r->to.per_month, &diff, err) != TW_OK)
        jb.rc = TW_ERANGE;
    char rounding[512];
    int dec = tw_currency_decimals(r->currency);
    snprintf(rounding, sizeof(rounding),
             "each figure rounded once, when shown, from its exact value to %d decimal%s (%s's "
             "minor unit), half away from zero; sums and the total are made unrounded, so the "
             "rounded figures need not add up (baseline - saving may differ from with_plan by a "
             "minor unit); each _unrounded value is the exact one rounded to 12 decimals on its "
             "own, so the parts' saving_unrounded may differ from per_disk.saving_unrounded in "
             "the 12th decimal",
             dec, dec == 1 ? "" : "s", r->currency);
    json_t *tx = json_object();
    if (tx) {
        json_object_set_new(tx, "charged", json_boolean(r->io_set));
        json_object_set_new(tx, "per_10k", r->tx_priced ? money_text(r->tx.per_10k) : json_null());
        json_object_set_new(tx, "meter", json_string(r->tx_priced ? r->tx.used : ""));
        json_t *in_book = json_array();
        for (size_t i = 0; in_book && r->tx_priced && i < r->tx.n_meters && i < 3; i++)
            json_array_append_new(in_book, json_string(r->tx.meters[i]));
        json_object_set_new(tx, "meters_in_book", in_book);
        if (r->io_set)
            json_object_set_new(tx, "io", json_pack("{s:I, s:I}", "ios_per_hour",
                                                    (json_int_t)r->io.ios_per_hour, "io_bytes",
                                                    (json_int_t)r->io.io_bytes));
    }
    json_t *per_disk = json_object(), *total = json_object();
    if (per_disk) {
        json_object_set_new(per_disk, "saving", amount_round(&jb, r->saving));
        json_object_set_new(per_disk, "saving_unrounded", amount_exact(&jb, r->saving));
        json_object_set_new(per_disk, "baseline", amount_round(&jb, r->baseline));
        json_object_set_new(per_disk, "baseline_unrounded", amount_exact(&jb, r->baseline));
        json_object_set_new(per_disk, "with_plan", amount_round(&jb, r->with_plan));
        json_object_set_new(per_disk, "with_plan_unrounded", amount_exact(&jb, r->with_plan));
        json_object_set_new(per_disk, "transactions", amount_round(&jb, r->tx_cost));
        json_object_set_new(per_disk, "transactions_unrounded", amount_exact(&jb, r->tx_cost));
    }
    if (total) {
        json_object_set_new(total, "disks", json_integer(r->count));
        json_object_set_new(total, "saving", amount_round(&jb, r->total_saving));
        json_object_set_new(total, "saving_unrounded", amount_exact(&jb, r->total_saving));
        json_object_set_new(total, "baseline", amount_round(&jb, r->total_baseline));
        json_object_set_new(total, "baseline_unrounded", amount_exact(&jb, r->total_baseline));
    }
    json_t *calc = json_pack(
        "{s:s, s:i, s:o, s:s, s:I, s:o, s:s}", "formula",
        "saving = (from.per_month - to.per_month) x hours_downgraded / 730 - transactions; "
        "total.saving = per_disk.saving_unrounded x disks",
        "hours_per_month", TW_BILL_HOURS_PER_MONTH, "price_difference_per_month", money_text(diff),
        "hours_downgraded", hours, "spans", (json_int_t)r->n_spans, "transactions", tx ? tx : json_null(),
        "rounding", rounding);
    json_t *period = json_pack("{s:s, s:s, s:s, s:o, s:o}", "from", fromd, "to", tod, "tz", r->tz,
                               "from_utc", instant(r->period_from_ns), "to_utc",
                               instant(r->period_to_ns));
    json_t *prices = json_array();
    for (size_t k = 0; prices && k < r->n_pieces; k++) {
        const struct tw_whatif_piece *pc = &r->pieces[k];
        char ph[48];
        if (!tw_hours_decimal(pc->downgraded_ns, ph, sizeof(ph)))
            ph[0] = '\0';
        json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:s, s:s, s:s}", "from", instant(pc->from_ns),
                              "to", instant(pc->to_ns), "from_per_month",
                              money_text(pc->from_per_month), "to_per_month",
                              money_text(pc->to_per_month), "from_effective_from",
                              pc->from_effective, "to_effective_from", pc->to_effective,
                              "hours_downgraded", ph);
        if (o) {
            json_object_set_new(o, "saving_unrounded", amount_exact(&jb, pc->saving));
            json_object_set_new(o, "tx_per_10k",
                                pc->tx_priced ? money_text(pc->tx_per_10k) : json_null());
            json_object_set_new(o, "tx_meter", json_string(pc->tx_meter));
            json_object_set_new(o, "transactions_unrounded", amount_exact(&jb, pc->tx_cost));
        }
        if (!o || json_array_append_new(prices, o) != 0) {
            json_decref(prices);
            prices = NULL;
        }
    }
    json_t *j = NULL;
    if (jb.rc == TW_OK && wins && notes && hours_num && per_disk && total && calc && period &&
        prices)
        j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:O, s:O, s:I, s:O, s:O, s:O, s:O, s:O}",
                      "currency", r->currency, "region", r->region, "from",
                      side_json(r, &r->from), "to", side_json(r, &r->to), "period", period,
                      "windows", wins, "hours_downgraded", hours_num, "seconds_downgraded",
                      (json_int_t)(r->downgraded_ns / TW_NS_PER_S), "per_disk", per_disk,
                      "total", total, "prices", prices, "calculation", calc, "notes", notes);
    else
        json_decref(period);
    json_decref(prices);
    json_decref(wins);
    json_decref(notes);
    json_decref(hours_num);
    json_decref(per_disk);
    json_decref(total);
    json_decref(calc);
    if (!j) {
        if (jb.rc != TW_OK)
            return jb.rc;
        return tw_error_set(err, TW_ENOMEM, "out of memory for the what-if's JSON");
    }
    *out = j;
    return TW_OK;
}

/* ---- a price file ----------------------------------------------------- */

bool tw_whatif_book_has_prices(const struct tw_pricebook *b)
{
    if (!b)
        return false;
    if (b->n > 0)
        return true;
    for (size_t i = 0; i < b->n_unused; i++)
        if (b->unused_why[i] == TW_PB_UNUSED_EXPIRED || b->unused_why[i] == TW_PB_UNUSED_NOT_YET ||
            b->unused_why[i] == TW_PB_UNUSED_SUPERSEDED)
            return true;
    return false;
}

/* Whether LEN bytes at BUF are a JSON array whose first element is an
 * object with "Items" (saved pages, not items). */
static bool pages_array(const char *buf, size_t len)
{
    json_t *j = json_loadb(buf, len, 0, NULL);
    bool yes = json_is_array(j) && json_is_object(json_array_get(j, 0)) &&
               json_object_get(json_array_get(j, 0), "Items") != NULL;
    json_decref(j);
    return yes;
}

enum tw_err tw_whatif_book(const char *buf, size_t len, const char *name, const char *region,
                           const char *currency, const char *file_time, const char *now,
                           struct tw_pricebook **out, struct tw_error *err)
{
    *out = NULL;
    char reg[48], cur[4];
    enum tw_err rc = tw_svc_prices_key(region, currency, reg, cur, err);
    if (rc != TW_OK)
        return rc;
    struct tw_price_items items = {0};
    struct tw_price_page page;
    struct tw_error perr = {0};
    if ((rc = tw_price_page_parse(buf, len, &items, &page, &perr)) != TW_OK) {
        tw_price_items_cleanup(&items);
        if (pages_array(buf, len))
            return tw_error_set(err, TW_EPARSE,
                                "%s is an array of saved Retail Prices pages: merge their "
                                "\"Items\" into one {\"Items\": [...]} (every page's) and give "
                                "that, or import them with tierwise prices import",
                                name);
        return tw_error_set_at(err, rc, perr.line, perr.column,
                               "%s is not a Retail Prices answer or a pricing/ snapshot: %s", name,
                               perr.msg);
    }
    if (page.next[0]) {
        tw_price_items_cleanup(&items);
        return tw_error_set(err, TW_EINVAL,
                            "%s is one page of a multi-page Retail Prices answer (its "
                            "NextPageLink is set): the prices on the other pages would be left "
                            "out. Save all the pages as one {\"Items\": [...]} (as tierwise "
                            "prices import wants them), or fetch them with tierwise prices "
                            "refresh and give --db",
                            name);
    }
    /* A saved answer has no time of its own: its file's time is shown
     * beside the source, and fetched_at stays unknown. */
    char source[256];
    if (page.fetched_at[0])
        snprintf(source, sizeof(source), "file %.200s (a snapshot)", name);
    else if (file_time && file_time[0])
        snprintf(source, sizeof(source), "file %.180s (a saved Retail Prices API answer, modified %s)",
                 name, file_time);
    else
        snprintf(source, sizeof(source), "file %.200s (a saved Retail Prices API answer)", name);
    return tw_pricebook_build(&items, reg, cur, source, page.fetched_at, now, out, err);
}
