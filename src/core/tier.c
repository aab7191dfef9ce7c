/*
 * tier.c - the rated catalog: parsing tierwise.disk-tiers/1 and the
 * size -> tier rules.
 *
 * The catalog is outside input when given with --catalog, so every figure
 * is range-checked and each wrong field is named; what passes is a table
 * the lookups can trust (sizes ascending per letter, no duplicate names,
 * every SKU mapped to a letter that has tiers).
 */
#include "core/tier.h"
#include "core/jsonx.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TW_CATALOG_SCHEMA "tierwise.disk-tiers/1"
#define MAX_GIB 1048576      /* 1 PiB: far beyond any managed disk */
#define MAX_IOPS 100000000   /* per disk; Ultra tops out at 400,000 */
#define MAX_MBPS 1000000.0   /* per disk; Ultra tops out at 10,000 */

static const char *const burst_names[] = {
    [TW_BURST_NONE] = "none",
    [TW_BURST_CREDIT] = "credit",
    [TW_BURST_ON_DEMAND] = "on-demand",
};

const char *tw_burst_kind_name(enum tw_burst_kind k)
{
    return (unsigned)k < 3 ? burst_names[k] : "none";
}

void tw_tier_catalog_cleanup(struct tw_tier_catalog *cat)
{
    free(cat->tiers);
    memset(cat, 0, sizeof(*cat));
}

/* ---- typed members: the getters of core/jsonx, with the catalog's rules ---- */

/* A required, non-empty string. */
static bool get_string(const json_t *o, const char *path, const char *key, char *dst,
                       size_t dstlen, struct tw_error *err)
{
    return tw_jx_str(json_object_get(o, key), path, key, TW_JX_REQUIRED | TW_JX_NONEMPTY, dst,
                     dstlen, err);
}

/* An integer in [MIN, MAX]; when NULLABLE, null or absent gives 0. */
static bool get_int(const json_t *o, const char *path, const char *key, int64_t min,
                    int64_t max, bool nullable, int64_t *out, struct tw_error *err)
{
    *out = 0;
    return tw_jx_int(json_object_get(o, key), path, key, min, max,
                     nullable ? TW_JX_NULLABLE : TW_JX_REQUIRED, out, err);
}

/* A number (integer or real) in [MIN, MAX]; null or absent is 0 when NULLABLE. */
static bool get_num(const json_t *o, const char *path, const char *key, double min,
                    double max, bool nullable, double *out, struct tw_error *err)
{
    *out = 0;
    return tw_jx_num(json_object_get(o, key), path, key, min, max,
                     nullable ? TW_JX_NULLABLE : TW_JX_REQUIRED, out, err);
}

/* "P30": one capital letter, then 1 to 5 digits. */
static bool valid_tier_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 2 || n > 6 || !isupper((unsigned char)s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static enum tw_err tier_from_value(const json_t *o, size_t idx, struct tw_tier *t,
                                   struct tw_error *err)
{
    char path[32], kind[16];
    snprintf(path, sizeof(path), "tiers[%zu].", idx);
    memset(t, 0, sizeof(*t));
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "tiers[%zu] must be an object", idx);
    if (!get_string(o, path, "tier", t->name, sizeof(t->name), err) ||
        !get_string(o, path, "sku", t->sku, sizeof(t->sku), err))
        return TW_EPARSE;
    if (!valid_tier_name(t->name))
        return tw_error_set(err, TW_EPARSE,
                            "%stier \"%s\" is not a tier name (a capital letter and a number, "
                            "e.g. P30)", path, t->name);
    if (!get_int(o, path, "size_gib", 1, MAX_GIB, false, &t->size_gib, err) ||
        !get_int(o, path, "iops", 1, MAX_IOPS, false, &t->iops, err) ||
        !get_num(o, path, "mbps", 0.001, MAX_MBPS, false, &t->mbps, err))
        return TW_EPARSE;
    t->upper_bound = false;
    if (!tw_jx_bool(json_object_get(o, "values_are_upper_bound"), path,
                    "values_are_upper_bound", 0, &t->upper_bound, err))
        return TW_EPARSE;
    if (!get_string(o, path, "bursting", kind, sizeof(kind), err))
        return TW_EPARSE;
    if (strcmp(kind, "credit") == 0)
        t->burst = TW_BURST_CREDIT;
    else if (strcmp(kind, "on-demand") == 0)
        t->burst = TW_BURST_ON_DEMAND;
    else if (strcmp(kind, "none") == 0)
        t->burst = TW_BURST_NONE;
    else
        return tw_error_set(err, TW_EPARSE, "%sbursting \"%s\" is not credit, on-demand or none",
                            path, kind);
    bool bursts = t->burst != TW_BURST_NONE;
    if (!get_int(o, path, "burst_iops", 1, MAX_IOPS, !bursts, &t->burst_iops, err) ||
        !get_num(o, path, "burst_mbps", 0.001, MAX_MBPS, !bursts, &t->burst_mbps, err))
        return TW_EPARSE;
    if (!bursts && (t->burst_iops || t->burst_mbps))
        return tw_error_set(err, TW_EPARSE,
                            "%sburst_iops and burst_mbps must be null when bursting is none", path);
    if (bursts && (t->burst_iops < t->iops || t->burst_mbps < t->mbps))
        return tw_error_set(err, TW_EPARSE, "%s%s bursts below its rating (%lld IOPS, %g MB/s)",
                            path, t->name, (long long)t->burst_iops, t->burst_mbps);
    if (!get_int(o, path, "expanded_iops_performance_plus", 1, MAX_IOPS, true, &t->plus_iops,
                 err) ||
        !get_num(o, path, "expanded_mbps_performance_plus", 0.001, MAX_MBPS, true, &t->plus_mbps,
                 err))
        return TW_EPARSE;
    return TW_OK;
}

/* Sizes strictly ascending within each letter, names unique. */
static enum tw_err check_tables(const struct tw_tier_catalog *cat, struct tw_error *err)
{
    for (size_t i = 0; i < cat->n_tiers; i++) {
        const struct tw_tier *a = &cat->tiers[i];
        for (size_t j = i + 1; j < cat->n_tiers; j++) {
            const struct tw_tier *b = &cat->tiers[j];
            if (strcasecmp(a->name, b->name) == 0)
                return tw_error_set(err, TW_EPARSE, "tiers[%zu]: %s is listed twice", j,
                                    b->name);
            if (a->name[0] == b->name[0] && b->size_gib <= a->size_gib)
                return tw_error_set(err, TW_EPARSE,
                                    "tiers[%zu]: %s (%lld GiB) must be larger than %s (%lld "
                                    "GiB) listed before it",
                                    j, b->name, (long long)b->size_gib, a->name,
                                    (long long)a->size_gib);
        }
    }
    return TW_OK;
}

static enum tw_err skus_from_value(const json_t *skus, struct tw_tier_catalog *cat,
                                   struct tw_error *err)
{
    if (!skus || !json_is_object(skus))
        return tw_error_set(err, TW_EPARSE, "skus is %s (an object of SKU name -> tier letter)",
                            skus ? "not an object" : "missing");
    if (json_object_size(skus) == 0 || json_object_size(skus) > TW_TIER_MAX_SKUS)
        return tw_error_set(err, TW_EPARSE, "skus must map 1 to %d SKU names",
                            TW_TIER_MAX_SKUS);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)skus, k, v) {
        if (strlen(k) == 0 || strlen(k) >= sizeof(cat->skus[0].sku))
            return tw_error_set(err, TW_EPARSE, "skus: a SKU name must be 1 to %zu bytes",
                                sizeof(cat->skus[0].sku) - 1);
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        if (!s || strlen(s) != 1 || !isupper((unsigned char)s[0]))
            return tw_error_set(err, TW_EPARSE, "skus.%s must be one capital letter (P, E, S)",
                                k);
        bool has = false;
        for (size_t i = 0; i < cat->n_tiers && !has; i++)
            has = cat->tiers[i].name[0] == s[0];
        if (!has)
            return tw_error_set(err, TW_EPARSE, "skus.%s names table \"%s\", which has no tiers",
                                k, s);
        struct tw_sku sk;
        if (!tw_sku_parse(k, &sk) || tw_sku_tier_letter(sk.family) != s[0])
            return tw_error_set(err, TW_EPARSE,
                                "skus.%s: %s", k,
                                !tw_sku_parse(k, &sk) || tw_sku_provisioned(sk.family)
                                    ? "not the SKU name of a tiered disk (Premium_LRS, "
                                      "StandardSSD_ZRS, Standard_LRS ...)"
                                    : "its tiers are another letter's table");
        memcpy(cat->skus[cat->n_skus].sku, k, strlen(k) + 1);
        cat->skus[cat->n_skus].letter = s[0];
        cat->n_skus++;
    }
    return TW_OK;
}

/*
 * Premium SSD v2 and Ultra: the "rules" object under KEY, absent allowed
 * (then the type stays unknown to the catalog).  V2 has a free baseline and
 * grows per GiB above a size; Ultra has a minimum and grows per GiB.
 */
static enum tw_err prov_from_value(const json_t *root, const char *key, bool v2,
                                   struct tw_prov_rules *p, struct tw_error *err)
{
    const json_t *o = json_object_get(root, key);
    memset(p, 0, sizeof(*p));
    if (!o || json_is_null(o))
        return TW_OK;
    char path[48];
    snprintf(path, sizeof(path), "%s.", key);
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "%s must be an object", key);
    if (!get_string(o, path, "sku", p->sku, sizeof(p->sku), err))
        return TW_EPARSE;
    const json_t *r = json_object_get(o, "rules");
    snprintf(path, sizeof(path), "%s.rules.", key);
    if (!r || !json_is_object(r))
        return tw_error_set(err, TW_EPARSE, "%s.rules is %s", key,
                            r ? "not an object" : "missing");
    if (!get_int(r, path, "min_gib", 1, MAX_GIB, false, &p->min_gib, err) ||
        !get_int(r, path, "max_gib", 1, MAX_GIB, false, &p->max_gib, err) ||
        !get_int(r, path, v2 ? "baseline_iops" : "min_iops", 1, MAX_IOPS, false, &p->min_iops,
                 err) ||
        !get_num(r, path, v2 ? "baseline_mbps" : "min_mbps", 0.001, MAX_MBPS, false,
                 &p->min_mbps, err) ||
        !get_int(r, path, "iops_per_gib", 1, 1000000, false, &p->iops_per_gib, err) ||
        (v2 && !get_int(r, path, "iops_per_gib_above_gib", 0, MAX_GIB, false, &p->iops_above_gib,
                        err)) ||
        !get_int(r, path, "max_iops", 1, MAX_IOPS, false, &p->max_iops, err) ||
        !get_num(r, path, "mbps_per_iops", 0.000001, 1000.0, false, &p->mbps_per_iops, err) ||
        !get_num(r, path, "max_mbps", 0.001, MAX_MBPS, false, &p->max_mbps, err))
        return TW_EPARSE;
    if (p->min_gib > p->max_gib || p->min_iops > p->max_iops || p->min_mbps > p->max_mbps)
        return tw_error_set(err, TW_EPARSE, "%s: a minimum is above its maximum", key);
    struct tw_sku sk;
    if (!tw_sku_parse(p->sku, &sk) || sk.family != (v2 ? TW_SKU_PREMIUM_V2 : TW_SKU_ULTRA))
        return tw_error_set(err, TW_EPARSE, "%s.sku \"%s\" is not a%s SKU name (%s)", key,
                            p->sku, v2 ? " Premium SSD v2" : "n Ultra",
                            v2 ? "PremiumV2_LRS" : "UltraSSD_LRS");
    return TW_OK;
}

static enum tw_err parse_root(const json_t *root, struct tw_tier_catalog *cat,
                              struct tw_error *err)
{
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE, "the catalog must be a JSON object");
    const json_t *sv = json_object_get(root, "schema_version");
    if (!json_is_string(sv) || strcmp(json_string_value(sv), TW_CATALOG_SCHEMA) != 0)
        return tw_error_set(err, TW_EPARSE,
                            "not a tier catalog: schema_version must be \"%s\" (as in "
                            "pricing/azure-disk-tiers.json)", TW_CATALOG_SCHEMA);
    const json_t *tiers = json_object_get(root, "tiers");
    if (!json_is_array(tiers) || json_array_size(tiers) == 0)
        return tw_error_set(err, TW_EPARSE, "tiers is %s",
                            tiers ? "not a non-empty array" : "missing");
    if (json_array_size(tiers) > TW_TIER_MAX)
        return tw_error_set(err, TW_EPARSE, "tiers has %zu entries, at most %d",
                            json_array_size(tiers), TW_TIER_MAX);
    cat->tiers = calloc(json_array_size(tiers), sizeof(*cat->tiers));
    if (!cat->tiers)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the catalog");
    size_t i;
    const json_t *t;
    json_array_foreach(tiers, i, t) {
        enum tw_err rc = tier_from_value(t, i, &cat->tiers[i], err);
        if (rc != TW_OK)
            return rc;
        cat->n_tiers++;
    }
    enum tw_err rc = check_tables(cat, err);
    if (rc == TW_OK)
        rc = skus_from_value(json_object_get(root, "skus"), cat, err);
    if (rc == TW_OK)
        rc = prov_from_value(root, "premium_ssd_v2", true, &cat->premium_v2, err);
    if (rc == TW_OK)
        rc = prov_from_value(root, "ultra_disk", false, &cat->ultra, err);
    return rc;
}

enum tw_err tw_tier_catalog_parse(const char *buf, size_t len, struct tw_tier_catalog *cat,
                                  struct tw_error *err)
{
    memset(cat, 0, sizeof(*cat));
    json_t *root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, NULL, err);
    if (!root)
        return TW_EPARSE;
    enum tw_err rc = parse_root(root, cat, err);
    json_decref(root);
    if (rc != TW_OK)
        tw_tier_catalog_cleanup(cat);
    return rc;
}

enum tw_err tw_tier_catalog_builtin(struct tw_tier_catalog *cat, struct tw_error *err)
{
    return tw_tier_catalog_parse((const char *)tw_builtin_disk_tiers_json,
                                 tw_builtin_disk_tiers_json_len, cat, err);
}

/* ---- lookups ---- */

static char letter_of(const struct tw_tier_catalog *cat, const char *sku)
{
    for (size_t i = 0; i < cat->n_skus; i++)
        if (strcasecmp(cat->skus[i].sku, sku) == 0)
            return cat->skus[i].letter;
    return '\0';
}

bool tw_tier_sku(const struct tw_tier_catalog *cat, const char *sku, struct tw_sku *out)
{
    struct tw_sku s;
    if (!tw_sku_parse(sku, &s))
        return false;
    bool rated;
    if (s.family == TW_SKU_PREMIUM_V2)
        rated = cat->premium_v2.sku[0] && strcasecmp(cat->premium_v2.sku, sku) == 0;
    else if (s.family == TW_SKU_ULTRA)
        rated = cat->ultra.sku[0] && strcasecmp(cat->ultra.sku, sku) == 0;
    else
        rated = letter_of(cat, sku) != 0;
    if (rated && out)
        *out = s;
    return rated;
}

const struct tw_tier *tw_tier_by_name(const struct tw_tier_catalog *cat, const char *name)
{
    for (size_t i = 0; name && i < cat->n_tiers; i++)
        if (strcasecmp(cat->tiers[i].name, name) == 0)
            return &cat->tiers[i];
    return NULL;
}

/* "Premium_LRS, Premium_ZRS, ..." for messages. */
static void known_skus(const struct tw_tier_catalog *cat, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < cat->n_skus + 2; i++) {
        const char *s = i < cat->n_skus       ? cat->skus[i].sku
                        : i == cat->n_skus    ? cat->premium_v2.sku
                                              : cat->ultra.sku;
        if (!s[0])
            continue;
        int n = snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", s);
        if (n < 0 || (size_t)n >= outlen - used)
            break;
        used += (size_t)n;
    }
}

static enum tw_err unknown_sku(const struct tw_tier_catalog *cat, const char *sku,
                               struct tw_error *err)
{
    char known[320];
    known_skus(cat, known, sizeof(known));
    return tw_error_set(err, TW_EINVAL, "unknown disk SKU \"%s\": the catalog knows %s", sku,
                        known);
}

enum tw_err tw_tier_for_size(const struct tw_tier_catalog *cat, const char *sku,
                             int64_t size_gib, const struct tw_tier **out,
                             struct tw_error *err)
{
    *out = NULL;
    struct tw_sku sk;
    if (!tw_tier_sku(cat, sku, &sk))
        return unknown_sku(cat, sku ? sku : "", err);
    if (tw_sku_provisioned(sk.family))
        return tw_error_set(err, TW_EINVAL,
                            "%s has no tiers: its IOPS and MB/s are provisioned per disk", sku);
    if (size_gib < 1)
        return tw_error_set(err, TW_EINVAL, "a %s disk of %lld GiB has no tier: sizes start at "
                            "1 GiB", sku, (long long)size_gib);
    char letter = letter_of(cat, sku);
    const struct tw_tier *best = NULL, *largest = NULL;
    for (size_t i = 0; i < cat->n_tiers; i++) {
        const struct tw_tier *t = &cat->tiers[i];
        if (t->name[0] != letter)
            continue;
        if (!largest || t->size_gib > largest->size_gib)
            largest = t;
        if (t->size_gib >= size_gib && (!best || t->size_gib < best->size_gib))
            best = t;
    }
    if (!largest) /* the parser lets no SKU name an empty table */
        return tw_error_set(err, TW_EINVAL, "%s has no tiers in the catalog", sku);
    if (!best)
        return tw_error_set(err, TW_EINVAL,
                            "a %s disk of %lld GiB is beyond the largest tier (%s, %lld GiB)",
                            sku, (long long)size_gib, largest->name,
                            (long long)largest->size_gib);
    *out = best;
    return TW_OK;
}

enum tw_err tw_tier_for_disk(const struct tw_tier_catalog *cat, const char *sku,
                             int64_t size_gib, const char *perf_tier,
                             const struct tw_tier **out, struct tw_error *err)
{
    const struct tw_tier *size_tier;
    enum tw_err rc = tw_tier_for_size(cat, sku, size_gib, &size_tier, err);
    *out = NULL;
    if (rc != TW_OK || !size_tier)
        return rc;
    *out = size_tier;
    /* Only Premium SSD (table P) has performance tiers (disks-performance-tiers.md). */
    if (!perf_tier || !*perf_tier || size_tier->name[0] != 'P')
        return TW_OK;
    const struct tw_tier *pt = tw_tier_by_name(cat, perf_tier);
    if (!pt || pt->name[0] != 'P')
        return tw_error_set(err, TW_EINVAL,
                            "performance tier \"%s\" of a %s disk is not a Premium SSD tier of "
                            "the catalog (P1 ... P80)", perf_tier, sku);
    if (pt->size_gib > size_tier->size_gib)
        *out = pt;
    return TW_OK;
}

enum tw_err tw_tier_prov_range(const struct tw_tier_catalog *cat, const char *sku,
                               int64_t size_gib, int64_t *min_iops, int64_t *max_iops,
                               double *min_mbps, double *max_mbps, struct tw_error *err)
{
    struct tw_sku sk;
    if (!tw_tier_sku(cat, sku, &sk) || !tw_sku_provisioned(sk.family))
        return tw_error_set(err, TW_EINVAL, "%s is not provisioned per disk", sku ? sku : "");
    bool v2 = sk.family == TW_SKU_PREMIUM_V2;
    const struct tw_prov_rules *p = v2 ? &cat->premium_v2 : &cat->ultra;
    if (size_gib < p->min_gib || size_gib > p->max_gib)
        return tw_error_set(err, TW_EINVAL, "a %s disk of %lld GiB is outside its sizes "
                            "(%lld to %lld GiB)", p->sku, (long long)size_gib,
                            (long long)p->min_gib, (long long)p->max_gib);
    int64_t hi;
    double hi_mbps;
    if (v2 && size_gib <= p->iops_above_gib) {
        /* At the smallest sizes only the baseline is on offer. */
        hi = p->min_iops;
        hi_mbps = p->min_mbps;
    } else {
        hi = v2
                 ? p->min_iops + p->iops_per_gib * (size_gib - p->iops_above_gib)
                 : p->iops_per_gib * size_gib;
        if (hi > p->max_iops)
            hi = p->max_iops;
        if (hi < p->min_iops)
            hi = p->min_iops;
        hi_mbps = fmin(p->max_mbps, p->mbps_per_iops * (double)hi);
        if (hi_mbps < p->min_mbps)
            hi_mbps = p->min_mbps;
    }
    *min_iops = p->min_iops;
    *max_iops = hi;
    *min_mbps = p->min_mbps;
    *max_mbps = hi_mbps;
    return TW_OK;
}

/* ---- a disk's rating, for the inventory ---- */

static const char *const rating_names[] = {
    [TW_RATING_UNSET] = "",
    [TW_RATING_TIER] = "tier",
    [TW_RATING_PROVISIONED] = "provisioned",
    [TW_RATING_NONE] = "none",
};

const char *tw_rating_kind_name(enum tw_rating_kind k)
{
    return (unsigned)k < 4 ? rating_names[k] : "";
}

bool tw_rating_kind_parse(const char *name, enum tw_rating_kind *out)
{
    for (int k = TW_RATING_TIER; k <= TW_RATING_NONE; k++) {
        if (name && strcmp(name, rating_names[k]) == 0) {
            *out = (enum tw_rating_kind)k;
            return true;
        }
    }
    return false;
}

/* OUT->why, cut to its size if need be (messages quote outside names). */
__attribute__((format(printf, 2, 3))) static void why_set(struct tw_disk_rating *out,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof(out->why), fmt, ap);
    va_end(ap);
}

static void rate_provisioned(const struct tw_tier_catalog *cat, const char *sku,
                             const struct tw_sku *sk, int64_t size_gib,
                             struct tw_disk_rating *out)
{
    int64_t lo, hi;
    double lo_m, hi_m;
    struct tw_error err = {0};
    out->kind = TW_RATING_PROVISIONED;
    const char *family = tw_sku_family_name(sk->family);
    if (tw_tier_prov_range(cat, sku, size_gib, &lo, &hi, &lo_m, &hi_m, &err) == TW_OK)
        why_set(out, "%s disks have no size tiers: their IOPS and MB/s are provisioned per disk "
                     "(%lld to %lld IOPS, %g to %g MB/s at %lld GiB); the inventory does not "
                     "say what is set",
                family, (long long)lo, (long long)hi, lo_m, hi_m, (long long)size_gib);
    else
        why_set(out, "%s disks have no size tiers: their IOPS and MB/s are provisioned per "
                     "disk (%s)", family, err.msg);
}

void tw_tier_rate(const struct tw_tier_catalog *cat, const char *sku, int64_t size_gib,
                  const char *perf_tier, struct tw_disk_rating *out)
{
    memset(out, 0, sizeof(*out));
    struct tw_error err = {0};
    struct tw_sku sk;
    if (tw_tier_sku(cat, sku, &sk) && tw_sku_provisioned(sk.family)) {
        rate_provisioned(cat, sku, &sk, size_gib, out);
        return;
    }
    out->kind = TW_RATING_NONE;
    if (!sku || !*sku) {
        why_set(out, "no SKU is given (an unmanaged or ephemeral disk has none), so no tier");
        return;
    }
    if (tw_tier_for_size(cat, sku, size_gib, &out->size_tier, &err) != TW_OK) {
        why_set(out, "%s", err.msg);
        return;
    }
    const struct tw_tier *t = NULL;
    if (tw_tier_for_disk(cat, sku, size_gib, perf_tier, &t, &err) != TW_OK) {
        why_set(out, "%s: its rating is unknown", err.msg);
        return;
    }
    out->kind = TW_RATING_TIER;
    out->tier = t;
    /* A performance tier that is not the one in use is kept, and said. */
    if (!perf_tier || !*perf_tier || strcasecmp(perf_tier, t->name) == 0)
        return;
    if (out->size_tier->name[0] != 'P')
        why_set(out, "%s disks have no performance tiers: \"%s\" is not in effect, the size tier "
                 "%s is", tw_sku_family_name(sk.family), perf_tier, t->name);
    else
        why_set(out, "performance tier %s is below the size's own tier %s, which is in effect",
                 perf_tier, t->name);
}
