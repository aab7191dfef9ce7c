/*
 * target.c - the SKU a disk would move to while its VM is deallocated
 * (savings.h): the same size step of the target family, or the cheapest
 * of the allowed families that the book prices; the disk's redundancy
 * kept; never a step that can't hold the disk.
 */
#include "core/savings.h"

#include <stdio.h>
#include <string.h>

#include "core/textf.h"

/* One candidate: its SKU, tier and price, or why it is none. */
struct cand {
    char sku[32];
    char tier[8];
    struct tw_money per_month;
    bool ok;
    char why[200];
};

static void consider(const struct tw_tier_catalog *cat, const struct tw_pricebook *b,
                     const char *region, const char *currency, enum tw_sku_family fam,
                     enum tw_sku_redundancy red, int64_t size_gib, struct cand *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->sku, sizeof(c->sku), "%s", tw_sku_name(fam, red));
    if (!tw_tier_sku(cat, c->sku, NULL)) {
        snprintf(c->why, sizeof(c->why), "%s is not offered (%s has no %s)", c->sku,
                 tw_sku_family_name(fam), tw_sku_redundancy_name(red));
        return;
    }
    const struct tw_tier *t;
    struct tw_error e = {0};
    if (tw_tier_for_size(cat, c->sku, size_gib, &t, &e) != TW_OK) {
        snprintf(c->why, sizeof(c->why), "no size step of %s holds the disk: %.120s", c->sku,
                 e.msg);
        return;
    }
    snprintf(c->tier, sizeof(c->tier), "%s", t->name);
    if (tw_pricebook_money(b, region, currency, fam, t->name, red, TW_PB_MONTH, &c->per_month,
                           &e) != TW_OK) {
        snprintf(c->why, sizeof(c->why), "no price per month for %s (%s) in %s %s", t->name,
                 c->sku, region, currency);
        return;
    }
    c->ok = true;
}

enum tw_err tw_target_choose(const struct tw_tier_catalog *cat, const struct tw_pricebook *b,
                             const char *region, const char *currency, const char *sku,
                             const char *tier, int64_t size_gib, const char *const *allowed,
                             size_t n_allowed, bool cheapest, struct tw_target *out,
                             struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    struct tw_sku s;
    if (!cat || !region || !currency)
        return tw_error_set(err, TW_EINVAL, "a target needs the catalog, a region and a currency");
    if (!sku || !tw_sku_parse(sku, &s))
        return tw_error_set(err, TW_EINVAL, "\"%.40s\" is not a managed-disk SKU name",
                            sku ? sku : "");
    if (tw_sku_provisioned(s.family))
        return tw_error_set(err, TW_EINVAL,
                            "%s is %s: its performance is provisioned and there is no direct "
                            "way back to it from another type (only a snapshot migration), so "
                            "it is never moved",
                            sku, tw_sku_family_name(s.family));
    const struct tw_tier *own;
    enum tw_err rc = tw_tier_for_disk(cat, sku, size_gib, tier, &own, err);
    if (rc != TW_OK)
        return rc;
    rc = tw_pricebook_money(b, region, currency, s.family, own->name, s.redundancy, TW_PB_MONTH,
                            &out->from_per_month, err);
    if (rc != TW_OK)
        return rc;
    if (!allowed || n_allowed == 0)
        return tw_error_set(err, TW_EINVAL, "no target SKU allowed: name one (StandardSSD_LRS, "
                            "Standard_LRS) or several with cheapest");
    if (!cheapest && n_allowed != 1)
        return tw_error_set(err, TW_EINVAL,
                            "%zu target SKUs given without cheapest: one target, or cheapest "
                            "among several",
                            n_allowed);

    /* The first candidates are named in WHY; the best is kept apart. */
    struct cand cands[6], c, best;
    size_t nc = 0;
    bool have = false;
    char skipped[256] = "";
    for (size_t i = 0; i < n_allowed; i++) {
        struct tw_sku t;
        if (!allowed[i] || !tw_sku_parse(allowed[i], &t))
            return tw_error_set(err, TW_EINVAL, "target \"%.40s\" is not a managed-disk SKU name",
                                allowed[i] ? allowed[i] : "");
        if (tw_sku_provisioned(t.family))
            return tw_error_set(err, TW_EINVAL,
                                "target %s: a disk is only moved to Premium SSD, Standard SSD "
                                "or Standard HDD (%s has no direct way back)",
                                allowed[i], tw_sku_family_name(t.family));
        memset(&c, 0, sizeof(c));
        if (t.family == s.family) {
            snprintf(c.why, sizeof(c.why), "%s is the disk's own type", allowed[i]);
        } else {
            consider(cat, b, region, currency, t.family, s.redundancy, size_gib, &c);
        }
        if (!c.ok) {
            if (!cheapest)
                return tw_error_set(err, TW_ENOENT, "no target for the %s %s disk of %lld GiB: %s",
                                    own->name, sku, (long long)size_gib, c.why);
            tw_textf(skipped, sizeof(skipped), "%s%s", skipped[0] ? "; " : "", c.why);
            continue;
        }
        if (nc < sizeof(cands) / sizeof(cands[0]))
            cands[nc++] = c;
        if (!have || tw_money_cmp(c.per_month, best.per_month) < 0)
            best = c; /* ties: the earlier stays */
        have = true;
    }
    if (!have)
        return tw_error_set(err, TW_ENOENT, "no target for the %s %s disk of %lld GiB: %s",
                            own->name, sku, (long long)size_gib, skipped);
    const struct cand *w = &best;
    _Static_assert(sizeof(out->sku) == sizeof(w->sku) && sizeof(out->tier) == sizeof(w->tier),
                   "a candidate's names are the target's");
    memcpy(out->sku, w->sku, sizeof(out->sku));
    memcpy(out->tier, w->tier, sizeof(out->tier));
    out->to_per_month = w->per_month;
    if (!cheapest) {
        snprintf(out->why, sizeof(out->why), "same size step: %.7s %.31s -> %.7s %.31s (%lld GiB)",
                 own->name, sku, w->tier, w->sku, (long long)size_gib);
    } else {
        snprintf(out->why, sizeof(out->why), "cheapest of");
        for (size_t i = 0; i < nc; i++) {
            char p[TW_MONEY_TEXT_MAX];
            tw_money_text(cands[i].per_month, p, sizeof(p));
            tw_textf(out->why, sizeof(out->why), "%s %s %s %s", i ? "," : "", cands[i].tier,
                     cands[i].sku, p);
        }
        if (skipped[0])
            tw_textf(out->why, sizeof(out->why), " (not: %s)", skipped);
    }
    return TW_OK;
}
