/*
 * billing.c - what a disk's time and I/O cost: the prorated monthly price
 * and the transaction rules of Standard SSD and Standard HDD (savings.h;
 * ../shared catalog of billing rules, sections 1 and 3).
 */
#include "core/savings.h"

#include <stdio.h>
#include <string.h>

#include "core/textf.h"
#include "core/time.h"

/* ---- cost over time --------------------------------------------------- */

enum tw_err tw_bill_cost(const struct tw_bill_span *spans, size_t n, struct tw_amount *out,
                         struct tw_error *err)
{
    struct tw_amount sum = {0, 1};
    *out = sum;
    if (n && !spans)
        return tw_error_set(err, TW_EINVAL, "no spans to bill (NULL with a count of %zu)", n);
    for (size_t i = 0; i < n; i++) {
        int64_t dur;
        if (spans[i].to_ns < spans[i].from_ns)
            return tw_error_set(err, TW_EINVAL,
                                "billing span %zu ends (%lld ns) before it starts (%lld ns): a "
                                "span runs forward in time",
                                i, (long long)spans[i].to_ns, (long long)spans[i].from_ns);
        if (__builtin_sub_overflow(spans[i].to_ns, spans[i].from_ns, &dur))
            return tw_error_set(err, TW_ERANGE, "billing span %zu is longer than the instant "
                                "range", i);
        struct tw_amount a;
        enum tw_err rc = tw_money_ratio(spans[i].per_month, dur, TW_BILL_MONTH_NS, &a, err);
        if (rc == TW_OK)
            rc = tw_amount_add(sum, a, &sum, err);
        if (rc != TW_OK)
            return rc;
    }
    *out = sum;
    return TW_OK;
}

/* ---- transactions ----------------------------------------------------- */

/* Standard HDD outside eastus and northeurope: the sizes counted in 16 KiB
 * units with an hourly cap (billing rules section 3: [BILL] for the sizes
 * and regions, [HDDBLOG] for the caps and the 16 units an I/O of S70 and
 * S80). */
static const struct {
    const char *tier;
    int64_t hourly_cap;
    int64_t max_units_per_io;
} hdd_units[] = {
    {"S4", 450000, 0},
    {"S6", 858000, 0},
    {"S70", 93000000, 16},
    {"S80", 110000000, 16},
};

/* Standard HDD sizes the billing page lists as one transaction an I/O
 * outside eastus and northeurope ([BILL]).  S15 is in neither list: it is
 * priced by the worse rule (16 KiB units, no cap known) and the rule says
 * so. */
static const char *const hdd_per_io[] = {"S10", "S20", "S30", "S40", "S50", "S60"};

/* Regions where every Standard HDD I/O is one transaction ([BILL]). */
static bool hdd_per_io_region(const char *region)
{
    return strcmp(region, "eastus") == 0 || strcmp(region, "northeurope") == 0;
}

/* What goes before item K (1-based) of N in a list: "", ", " or LAST. */
static const char *list_sep(size_t k, size_t n, const char *last)
{
    return k == 1 ? "" : k == n ? last : ", ";
}

/* One meter that may price a disk's transactions, and its entry if the
 * book has it. */
struct cand {
    char name[48];       /* "E30 LRS Disk Operations" */
    char short_name[16]; /* "E30's", "E4's", "the tier-less" */
    bool four;           /* the family's 4-tier meter, not the disk's own */
    const struct tw_price_entry *e;
};

static void add_meter(struct cand *m, size_t *n, const struct tw_pricebook *b, const char *region,
                      const char *currency, enum tw_sku_family family, const char *tier,
                      const char *own_tier, enum tw_sku_redundancy red, enum tw_pb_kind kind)
{
    struct cand *c = &m[(*n)++];
    const char *rn = tw_sku_redundancy_name(red);
    memset(c, 0, sizeof(*c));
    if (tier[0]) {
        snprintf(c->name, sizeof(c->name), "%.3s %.3s Disk Operations", tier, rn);
        snprintf(c->short_name, sizeof(c->short_name), "%.3s's", tier);
    } else {
        snprintf(c->name, sizeof(c->name), "Disk Transactions %.3s Disk Operations", rn);
        snprintf(c->short_name, sizeof(c->short_name), "the tier-less");
    }
    c->four = tier[0] && strcmp(tier, own_tier) != 0;
    c->e = tw_pricebook_find(b, region, currency, family, tier, red, kind);
}

enum tw_err tw_tx_rule_for(const struct tw_pricebook *b, const char *region, const char *currency,
                           enum tw_sku_family family, const char *tier,
                           enum tw_sku_redundancy red, struct tw_tx_rule *out,
                           struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    out->kind = TW_TX_NONE;
    if (!tier)
        tier = "";
    if ((unsigned)family >= TW_SKU_FAMILY_COUNT || (red != TW_SKU_LRS && red != TW_SKU_ZRS))
        return tw_error_set(err, TW_EINVAL, "no transaction rule for an unknown disk family");
    if (tw_sku_provisioned(family)) {
        if (tier[0])
            return tw_error_set(err, TW_EINVAL,
                                "%s has no tiers (its IOPS and MB/s are provisioned), so no tier "
                                "\"%.8s\": ask without one",
                                tw_sku_family_name(family), tier);
        return TW_OK; /* no transaction charge */
    }
    if (family == TW_SKU_PREMIUM_SSD)
        return TW_OK; /* none without on-demand bursting ([BILL]) */
    enum tw_sku_family tf;
    if (!tw_sku_tier_parse(tier, strlen(tier), &tf, NULL) || tf != family)
        return tw_error_set(err, TW_EINVAL,
                            "the transactions of a %s disk depend on its tier (%c1 ... %c80), "
                            "not \"%.8s\"",
                            tw_sku_family_name(family), tw_sku_tier_letter(family),
                            tw_sku_tier_letter(family), tier);
    if (!region || !currency)
        return tw_error_set(err, TW_EINVAL, "a transaction price needs a region and a currency");

    bool hdd_unlisted = false;
    if (family == TW_SKU_STANDARD_SSD) {
        /* Each I/O in 256 KiB units ([TYPES], [BILL]); an hourly cap exists
         * but its value is not published. */
        out->kind = TW_TX_UNITS;
        out->unit_bytes = 262144;
        out->cap_unknown = true;
    } else {
        out->kind = TW_TX_PER_IO;
        if (!hdd_per_io_region(region)) {
            bool listed = false;
            for (size_t i = 0; i < sizeof(hdd_units) / sizeof(hdd_units[0]); i++)
                if (strcmp(tier, hdd_units[i].tier) == 0) {
                    listed = true;
                    out->kind = TW_TX_UNITS;
                    out->unit_bytes = 16384;
                    out->hourly_cap = hdd_units[i].hourly_cap;
                    out->max_units_per_io = hdd_units[i].max_units_per_io;
                }
            for (size_t i = 0; i < sizeof(hdd_per_io) / sizeof(hdd_per_io[0]); i++)
                listed |= strcmp(tier, hdd_per_io[i]) == 0;
            if (!listed) {
                /* In neither list (S15): 16 KiB units count at least as
                 * many transactions as one an I/O, and no cap is known. */
                hdd_unlisted = true;
                out->kind = TW_TX_UNITS;
                out->unit_bytes = 16384;
            }
        }
    }

    /* Up to three meters may price them, and which one Azure bills a disk
     * on is not documented: the tier's own, the family's 4-tier one (the
     * billing page's example bill prices an E30 disk's transactions on
     * "E4 LRS Disk Operations", an S20's on S4's) and the tier-less one.
     * The highest in the book is used, the worse case. */
    const char *rn = tw_sku_redundancy_name(red);
    struct cand meters[3];
    size_t nm = 0, best = 0;
    char four[4];
    snprintf(four, sizeof(four), "%c4", tw_sku_tier_letter(family));
    add_meter(meters, &nm, b, region, currency, family, tier, tier, red, TW_PB_OPS_10K);
    if (strcmp(tier, four) != 0)
        add_meter(meters, &nm, b, region, currency, family, four, tier, red, TW_PB_OPS_10K);
    add_meter(meters, &nm, b, region, currency, family, "", tier, red, TW_PB_TX_10K);
    size_t n_present = 0;
    for (size_t i = 0; i < nm; i++) {
        if (!meters[i].e)
            continue;
        if (!n_present++ || tw_money_cmp(meters[i].e->price, meters[best].e->price) > 0)
            best = i; /* ties: the earlier (the tier's own first) */
    }
    if (!n_present) {
        char names[160] = "";
        for (size_t i = 0; i < nm; i++)
            tw_textf(names, sizeof(names), "%s\"%s\"", list_sep(i + 1, nm, " nor "),
                     meters[i].name);
        memset(out, 0, sizeof(*out));
        return tw_error_set(err, TW_ENOENT,
                            "no transaction price for %s %s (%s) in %s %s in the price book (%s): "
                            "neither %s is there; a missing price is not free: refresh the "
                            "prices (tierwise prices refresh) or use a book that has them",
                            tier, rn, tw_sku_name(family, red), region, currency,
                            b && b->source[0] ? b->source : "empty", names);
    }
    out->per_10k = meters[best].e->price;
    snprintf(out->used, sizeof(out->used), "%s", meters[best].name);
    for (size_t i = 0; i < nm; i++)
        if (meters[i].e && out->n_meters < sizeof(out->meters) / sizeof(out->meters[0])) {
            char *m = out->meters[out->n_meters++];
            snprintf(m, sizeof(out->meters[0]), "%.*s", (int)sizeof(out->meters[0]) - 1,
                     meters[i].name);
        }
    if (n_present == 1) {
        snprintf(out->meter, sizeof(out->meter), "\"%s\"", meters[best].name);
        if (nm > 1) {
            /* The others may be dearer: what is used is then not the
             * worse case, and the reader should know. */
            tw_textf(out->note, sizeof(out->note),
                     "\"%s\" is the only transaction meter of the %s in the book (",
                     meters[best].name, nm == 3 ? "three" : "two");
            size_t k = 0;
            for (size_t i = 0; i < nm; i++) {
                if (i == best)
                    continue;
                k++;
                tw_textf(out->note, sizeof(out->note), "%s\"%s\"", list_sep(k, nm - 1, " and "),
                         meters[i].name);
            }
            tw_textf(out->note, sizeof(out->note),
                     " %s missing): the price may not be the worse case",
                     nm - 1 == 1 ? "is" : "are");
        }
    } else {
        /* The one used first, then the others in order. */
        snprintf(out->meter, sizeof(out->meter), "\"%s\" (the %s)", meters[best].name,
                 n_present == 2 ? "higher" : "highest");
        size_t k = 1;
        for (size_t i = 0; i < nm; i++) {
            if (i == best || !meters[i].e)
                continue;
            k++;
            tw_textf(out->meter, sizeof(out->meter), "%s\"%s\"", list_sep(k, n_present, " and "),
                     meters[i].name);
        }
        tw_textf(out->note, sizeof(out->note), "meters in the book: ");
        bool has_four = false;
        k = 0;
        for (size_t i = 0; i < nm; i++) {
            if (!meters[i].e)
                continue;
            char pt[TW_MONEY_TEXT_MAX];
            tw_money_text(meters[i].e->price, pt, sizeof(pt));
            k++;
            tw_textf(out->note, sizeof(out->note), "%s%s %s", list_sep(k, n_present, " and "),
                     meters[i].short_name, pt);
            has_four |= meters[i].four;
        }
        const char *example = "";
        if (has_four)
            example = family == TW_SKU_STANDARD_SSD ? " (its billing example bills an E30 on E4's)"
                                                    : " (its billing example bills an S20 on S4's)";
        tw_textf(out->note, sizeof(out->note),
                 " per 10,000; the %s, %s, is used (the worse case): which one Azure bills is not "
                 "documented%s",
                 n_present == 2 ? "higher" : "highest", meters[best].short_name, example);
    }
    if (hdd_unlisted) {
        tw_textf(out->note, sizeof(out->note),
                 "%s%s is in neither size list of the billing page: the worse rule, 16 KiB units, "
                 "no cap",
                 out->note[0] ? "; " : "", tier);
    }
    if (out->cap_unknown)
        tw_textf(out->note, sizeof(out->note),
                 "%sStandard SSD's hourly cap is not published: none applied (the worse case)",
                 out->note[0] ? "; " : "");
    return TW_OK;
}

enum tw_err tw_tx_cost(const struct tw_tx_rule *r, const struct tw_io_rate *rate, int64_t dur_ns,
                       struct tw_amount *out, struct tw_error *err)
{
    struct tw_amount zero = {0, 1};
    *out = zero;
    if (!r)
        return tw_error_set(err, TW_EINVAL, "no transaction rule to price I/O with");
    if (dur_ns < 0)
        return tw_error_set(err, TW_EINVAL, "a duration of %lld ns is negative",
                            (long long)dur_ns);
    if (!rate || r->kind == TW_TX_NONE || rate->ios_per_hour == 0 || dur_ns == 0)
        return TW_OK;
    if (rate->ios_per_hour < 0 || rate->io_bytes < 0)
        return tw_error_set(err, TW_EINVAL,
                            "an I/O rate of %lld I/Os an hour of %lld bytes: neither may be "
                            "negative",
                            (long long)rate->ios_per_hour, (long long)rate->io_bytes);
    int64_t per_io = 1;
    if (r->kind == TW_TX_UNITS) {
        if (r->unit_bytes <= 0)
            return tw_error_set(err, TW_EINVAL, "a transaction unit of %lld bytes",
                                (long long)r->unit_bytes);
        /* An I/O up to one unit is one; larger ones count whole units. */
        per_io = rate->io_bytes / r->unit_bytes + (rate->io_bytes % r->unit_bytes != 0);
        if (per_io < 1)
            per_io = 1;
        if (r->max_units_per_io > 0 && per_io > r->max_units_per_io)
            per_io = r->max_units_per_io;
    } else if (r->kind != TW_TX_PER_IO) {
        return tw_error_set(err, TW_EINVAL, "an unknown transaction rule");
    }
    int64_t units;
    if (__builtin_mul_overflow(rate->ios_per_hour, per_io, &units))
        return tw_error_set(err, TW_ERANGE, "%lld I/Os an hour of %lld units each overflow",
                            (long long)rate->ios_per_hour, (long long)per_io);
    if (r->hourly_cap > 0 && units > r->hourly_cap)
        units = r->hourly_cap;
    /* units/h * dur / 1 h * per_10k / 10,000 */
    struct tw_amount a;
    enum tw_err rc = tw_money_ratio(r->per_10k, units, 10000, &a, err);
    if (rc == TW_OK)
        rc = tw_amount_scale(a, dur_ns, TW_NS_PER_HOUR, &a, err);
    if (rc != TW_OK)
        return rc;
    *out = a;
    return TW_OK;
}
