/*
 * billing.c - what a disk's time and I/O cost: the prorated monthly price
 * and the transaction rules of Standard SSD and Standard HDD (savings.h;
 * ../shared catalog of billing rules, sections 1 and 3).
 */
#include "core/savings.h"

#include <stdio.h>
#include <string.h>

#define HOUR_NS (INT64_C(3600) * 1000000000)

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

/* Regions where every Standard HDD I/O is one transaction ([BILL]). */
static bool hdd_per_io_region(const char *region)
{
    return strcmp(region, "eastus") == 0 || strcmp(region, "northeurope") == 0;
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

    if (family == TW_SKU_STANDARD_SSD) {
        /* Each I/O in 256 KiB units ([TYPES], [BILL]); an hourly cap exists
         * but its value is not published. */
        out->kind = TW_TX_UNITS;
        out->unit_bytes = 262144;
        out->cap_unknown = true;
    } else {
        out->kind = TW_TX_PER_IO;
        if (!hdd_per_io_region(region))
            for (size_t i = 0; i < sizeof(hdd_units) / sizeof(hdd_units[0]); i++)
                if (strcmp(tier, hdd_units[i].tier) == 0) {
                    out->kind = TW_TX_UNITS;
                    out->unit_bytes = 16384;
                    out->hourly_cap = hdd_units[i].hourly_cap;
                    out->max_units_per_io = hdd_units[i].max_units_per_io;
                }
    }

    /* Two meters may price them; the book names neither as the one. */
    const char *rn = tw_sku_redundancy_name(red);
    char tier_meter[32], tx_meter[40]; /* the tier parsed: 2-3 characters */
    snprintf(tier_meter, sizeof(tier_meter), "%.3s %.3s Disk Operations", tier, rn);
    snprintf(tx_meter, sizeof(tx_meter), "Disk Transactions %.3s Disk Operations", rn);
    const struct tw_price_entry *et =
        tw_pricebook_find(b, region, currency, family, tier, red, TW_PB_OPS_10K);
    const struct tw_price_entry *ex =
        tw_pricebook_find(b, region, currency, family, "", red, TW_PB_TX_10K);
    if (!et && !ex) {
        memset(out, 0, sizeof(*out));
        return tw_error_set(err, TW_ENOENT,
                            "no transaction price for %s %s (%s) in %s %s in the price book (%s): "
                            "neither \"%s\" nor \"%s\" is there; a missing price is not free: "
                            "refresh the prices (tierwise prices refresh) or use a book that has "
                            "them",
                            tier, rn, tw_sku_name(family, red), region, currency,
                            b && b->source[0] ? b->source : "empty", tier_meter, tx_meter);
    }
    if (et && ex) {
        bool tier_higher = tw_money_cmp(et->price, ex->price) >= 0;
        out->per_10k = tier_higher ? et->price : ex->price;
        char pt[TW_MONEY_TEXT_MAX], px[TW_MONEY_TEXT_MAX];
        tw_money_text(et->price, pt, sizeof(pt));
        tw_money_text(ex->price, px, sizeof(px));
        snprintf(out->meter, sizeof(out->meter), "\"%s\" (the higher) and \"%s\"",
                 tier_higher ? tier_meter : tx_meter, tier_higher ? tx_meter : tier_meter);
        snprintf(out->note, sizeof(out->note),
                 "both meters are in the book (%s and %s per 10,000); which one Azure bills this "
                 "disk on is not documented, so the higher is used",
                 pt, px);
    } else {
        out->per_10k = et ? et->price : ex->price;
        snprintf(out->meter, sizeof(out->meter), "\"%s\"", et ? tier_meter : tx_meter);
    }
    if (out->cap_unknown) {
        size_t used = strlen(out->note);
        snprintf(out->note + used, sizeof(out->note) - used,
                 "%sStandard SSD's hourly cap on billable transactions is not published: none "
                 "applied (the worse case)",
                 used ? "; " : "");
    }
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
        rc = tw_amount_scale(a, dur_ns, HOUR_NS, &a, err);
    if (rc != TW_OK)
        return rc;
    *out = a;
    return TW_OK;
}
