/* test_tier.c - the rated catalog: the built-in copy, size -> tier edges,
 * performance tiers, provisioned disks and bad catalogs. */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>

#include "core/tier.h"

static int setup(void **state)
{
    struct tw_tier_catalog *cat = calloc(1, sizeof(*cat));
    struct tw_error err = {0};
    if (!cat || tw_tier_catalog_builtin(cat, &err) != TW_OK) {
        print_error("built-in catalog: %s\n", err.msg);
        free(cat);
        return -1;
    }
    *state = cat;
    return 0;
}

static int teardown(void **state)
{
    tw_tier_catalog_cleanup(*state);
    free(*state);
    return 0;
}

static void test_counts(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    size_t p = 0, e = 0, s = 0;
    for (size_t i = 0; i < cat->n_tiers; i++) {
        p += cat->tiers[i].name[0] == 'P';
        e += cat->tiers[i].name[0] == 'E';
        s += cat->tiers[i].name[0] == 'S';
    }
    /* P1 P2 P3 P4 P6 P10 P15 P20 P30 P40 P50 P60 P70 P80; E likewise; S4 ... S80. */
    assert_int_equal(p, 14);
    assert_int_equal(e, 14);
    assert_int_equal(s, 11);
    assert_int_equal(cat->n_tiers, 39);
    assert_int_equal(cat->n_skus, 5);
    assert_string_equal(cat->premium_v2.sku, "PremiumV2_LRS");
    assert_string_equal(cat->ultra.sku, "UltraSSD_LRS");
}

static void test_figures(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    const struct tw_tier *t = tw_tier_by_name(cat, "P40");
    assert_non_null(t);
    assert_int_equal(t->size_gib, 2048);
    assert_int_equal(t->iops, 7500);
    assert_true(t->mbps == 250);
    assert_int_equal(t->burst, TW_BURST_ON_DEMAND);
    assert_int_equal(t->burst_iops, 30000);
    assert_int_equal(t->plus_iops, 16000);
    assert_false(t->upper_bound);
    t = tw_tier_by_name(cat, "p10"); /* case-insensitive */
    assert_non_null(t);
    assert_int_equal(t->iops, 500);
    assert_true(t->mbps == 100);
    assert_int_equal(t->burst, TW_BURST_CREDIT);
    assert_int_equal(t->burst_iops, 3500);
    assert_true(t->burst_mbps == 170);
    t = tw_tier_by_name(cat, "E30");
    assert_int_equal(t->burst, TW_BURST_CREDIT);
    assert_int_equal(t->burst_iops, 1000);
    assert_int_equal(t->plus_iops, 1500);
    assert_true(t->upper_bound);
    t = tw_tier_by_name(cat, "E40");
    assert_int_equal(t->burst, TW_BURST_NONE);
    assert_int_equal(t->burst_iops, 0);
    t = tw_tier_by_name(cat, "S80");
    assert_int_equal(t->size_gib, 32767);
    assert_int_equal(t->iops, 2000);
    assert_int_equal(t->plus_iops, 0); /* "unverified" in the research: not a figure */
    assert_null(tw_tier_by_name(cat, "P5"));
    assert_string_equal(tw_burst_kind_name(TW_BURST_ON_DEMAND), "on-demand");
}

static void test_size_to_tier(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    struct {
        const char *sku;
        int64_t gib;
        const char *want;
    } rows[] = {
        /* exact sizes, one GiB over, the smallest and the largest */
        {"Premium_LRS", 1, "P1"},       {"Premium_LRS", 4, "P1"},
        {"Premium_LRS", 5, "P2"},       {"Premium_LRS", 32, "P4"},
        {"Premium_LRS", 33, "P6"},      {"Premium_LRS", 128, "P10"},
        {"Premium_LRS", 129, "P15"},    {"Premium_LRS", 512, "P20"},
        {"Premium_LRS", 513, "P30"},    {"Premium_LRS", 2048, "P40"},
        {"Premium_LRS", 4096, "P50"},   {"Premium_LRS", 4097, "P60"},
        {"Premium_LRS", 32767, "P80"},  {"Premium_ZRS", 128, "P10"},
        {"premium_lrs", 1000, "P30"},   {"StandardSSD_LRS", 200, "E15"},
        {"StandardSSD_LRS", 4, "E1"},   {"StandardSSD_LRS", 256, "E15"},
        {"StandardSSD_LRS", 257, "E20"}, {"StandardSSD_ZRS", 1024, "E30"},
        {"StandardSSD_LRS", 32767, "E80"}, {"Standard_LRS", 1, "S4"},
        {"Standard_LRS", 32, "S4"},     {"Standard_LRS", 33, "S6"},
        {"Standard_LRS", 8192, "S60"},  {"Standard_LRS", 32767, "S80"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct tw_tier *t = NULL;
        struct tw_error err = {0};
        if (tw_tier_for_size(cat, rows[i].sku, rows[i].gib, &t, &err) != TW_OK)
            fail_msg("%s %lld GiB: %s", rows[i].sku, (long long)rows[i].gib, err.msg);
        if (strcmp(t->name, rows[i].want) != 0)
            fail_msg("%s %lld GiB: %s, want %s", rows[i].sku, (long long)rows[i].gib, t->name,
                     rows[i].want);
    }
}

static void test_size_errors(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    const struct tw_tier *t = (const struct tw_tier *)1;
    struct tw_error err = {0};
    assert_int_equal(tw_tier_for_size(cat, "Premium_LRS", 32768, &t, &err), TW_EINVAL);
    assert_null(t);
    assert_non_null(strstr(err.msg, "beyond the largest tier (P80, 32767 GiB)"));
    assert_int_equal(tw_tier_for_size(cat, "Standard_LRS", 40000, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "S80"));
    assert_int_equal(tw_tier_for_size(cat, "Premium_XRS", 128, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "unknown disk SKU \"Premium_XRS\""));
    assert_non_null(strstr(err.msg, "StandardSSD_LRS"));
    assert_int_equal(tw_tier_for_size(cat, "", 128, &t, &err), TW_EINVAL);
    assert_int_equal(tw_tier_for_size(cat, "Premium_LRS", 0, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "0 GiB"));
    assert_int_equal(tw_tier_for_size(cat, "Premium_LRS", -5, &t, &err), TW_EINVAL);
    assert_int_equal(tw_tier_for_size(cat, "UltraSSD_LRS", 128, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "provisioned per disk"));
    struct tw_sku sk;
    assert_true(tw_tier_sku(cat, "UltraSSD_LRS", &sk));
    assert_int_equal(sk.family, TW_SKU_ULTRA);
    assert_true(tw_tier_sku(cat, "PremiumV2_LRS", &sk));
    assert_int_equal(sk.family, TW_SKU_PREMIUM_V2);
    assert_true(tw_tier_sku(cat, "standard_lrs", &sk));
    assert_int_equal(sk.family, TW_SKU_STANDARD_HDD);
    assert_true(tw_tier_sku(cat, "StandardSSD_ZRS", &sk));
    assert_int_equal(sk.redundancy, TW_SKU_ZRS);
    /* In the vocabulary but not rated by the catalog (Standard HDD has no ZRS). */
    assert_false(tw_tier_sku(cat, "Standard_ZRS", &sk));
    assert_false(tw_tier_sku(cat, "Nope", &sk));
    assert_false(tw_tier_sku(cat, NULL, NULL));
}

static void test_perf_tier(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    const struct tw_tier *t;
    struct tw_error err = {0};
    /* A 128 GiB Premium disk set to P30 is rated P30. */
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, "P30", &t, &err), TW_OK);
    assert_string_equal(t->name, "P30");
    assert_int_equal(t->iops, 5000);
    assert_int_equal(tw_tier_for_disk(cat, "Premium_ZRS", 100, "P50", &t, &err), TW_OK);
    assert_string_equal(t->name, "P50");
    /* Unset or the size's own tier: the size tier. */
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, "", &t, &err), TW_OK);
    assert_string_equal(t->name, "P10");
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, NULL, &t, &err), TW_OK);
    assert_string_equal(t->name, "P10");
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, "P10", &t, &err), TW_OK);
    assert_string_equal(t->name, "P10");
    /* Below the baseline can't be set: a stale record leaves the size tier. */
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 1024, "P10", &t, &err), TW_OK);
    assert_string_equal(t->name, "P30");
    /* Standard disks have no performance tiers: their tier is not consulted. */
    assert_int_equal(tw_tier_for_disk(cat, "StandardSSD_LRS", 200, "E10", &t, &err), TW_OK);
    assert_string_equal(t->name, "E15");
    assert_int_equal(tw_tier_for_disk(cat, "Standard_LRS", 128, "P30", &t, &err), TW_OK);
    assert_string_equal(t->name, "S10");
    /* Not a Premium tier. */
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, "E30", &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "\"E30\""));
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 128, "P99", &t, &err), TW_EINVAL);
    /* The size still has to fit. */
    assert_int_equal(tw_tier_for_disk(cat, "Premium_LRS", 40000, "P80", &t, &err), TW_EINVAL);
}

/* The inventory's lookup: size tier, tier in use, figures, or why none. */
static void test_rate(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    struct tw_disk_rating r;
    struct {
        const char *sku;
        int64_t gib;
        const char *size_tier;
        int64_t iops;
        double mbps;
    } rows[] = {
        {"Premium_LRS", 2048, "P40", 7500, 250},   /* 2 TiB Premium */
        {"Premium_LRS", 128, "P10", 500, 100},     /* exactly a tier's size */
        {"Premium_LRS", 129, "P15", 1100, 125},    /* one GiB over */
        {"Premium_LRS", 32767, "P80", 20000, 900}, /* the largest */
        {"StandardSSD_LRS", 200, "E15", 500, 60},
        {"Standard_LRS", 200, "S15", 500, 60},
        {"Standard_LRS", 32767, "S80", 2000, 500},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tw_tier_rate(cat, rows[i].sku, rows[i].gib, NULL, &r);
        if (r.kind != TW_RATING_TIER || !r.size_tier || r.tier != r.size_tier)
            fail_msg("%s %lld GiB: kind %d, %s", rows[i].sku, (long long)rows[i].gib, r.kind,
                     r.why);
        assert_string_equal(r.size_tier->name, rows[i].size_tier);
        assert_int_equal(r.tier->iops, rows[i].iops);
        assert_true(r.tier->mbps == rows[i].mbps);
        assert_string_equal(r.why, "");
    }
    /* Beyond the largest tier: no tier, and why. */
    tw_tier_rate(cat, "Premium_LRS", 32768, "", &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    assert_null(r.size_tier);
    assert_null(r.tier);
    assert_non_null(strstr(r.why, "beyond the largest tier (P80, 32767 GiB)"));
    /* A performance tier above the size's own is the tier in use. */
    tw_tier_rate(cat, "Premium_LRS", 1024, "p40", &r);
    assert_int_equal(r.kind, TW_RATING_TIER);
    assert_string_equal(r.size_tier->name, "P30");
    assert_string_equal(r.tier->name, "P40");
    assert_int_equal(r.tier->iops, 7500);
    assert_string_equal(r.why, "");
    tw_tier_rate(cat, "Premium_LRS", 1024, "P30", &r); /* the size's own: nothing to say */
    assert_string_equal(r.tier->name, "P30");
    assert_string_equal(r.why, "");
    /* Below it, or on a Standard disk: the size tier, and it is said. */
    tw_tier_rate(cat, "Premium_LRS", 1024, "P10", &r);
    assert_int_equal(r.kind, TW_RATING_TIER);
    assert_string_equal(r.tier->name, "P30");
    assert_non_null(strstr(r.why, "P10 is below the size's own tier P30"));
    tw_tier_rate(cat, "StandardSSD_LRS", 100, "E30", &r);
    assert_string_equal(r.tier->name, "E10");
    assert_non_null(strstr(r.why, "Standard SSD disks have no performance tiers: \"E30\""));
    /* A performance tier the catalog does not know: unknown, not guessed. */
    tw_tier_rate(cat, "Premium_LRS", 128, "P99", &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    assert_string_equal(r.size_tier->name, "P10");
    assert_null(r.tier);
    assert_non_null(strstr(r.why, "\"P99\""));
    /* Provisioned disks have no tiers: said, with what the size allows. */
    tw_tier_rate(cat, "PremiumV2_LRS", 512, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_PROVISIONED);
    assert_null(r.size_tier);
    assert_null(r.tier);
    assert_non_null(strstr(r.why, "Premium SSD v2 disks have no size tiers"));
    assert_non_null(strstr(r.why, "3000 to 80000 IOPS"));
    assert_non_null(strstr(r.why, "does not say what is set"));
    tw_tier_rate(cat, "ultrassd_lrs", 1024, "P30", &r);
    assert_int_equal(r.kind, TW_RATING_PROVISIONED);
    assert_non_null(strstr(r.why, "Ultra disks have no size tiers"));
    tw_tier_rate(cat, "PremiumV2_LRS", 0, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_PROVISIONED);
    assert_non_null(strstr(r.why, "outside its sizes"));
    /* No SKU, an unknown one, no size. */
    tw_tier_rate(cat, "", 128, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    assert_non_null(strstr(r.why, "no SKU is given"));
    tw_tier_rate(cat, NULL, 128, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    tw_tier_rate(cat, "Premium_XRS", 128, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    assert_non_null(strstr(r.why, "unknown disk SKU \"Premium_XRS\""));
    tw_tier_rate(cat, "Premium_LRS", 0, NULL, &r);
    assert_int_equal(r.kind, TW_RATING_NONE);
    assert_non_null(strstr(r.why, "0 GiB"));
    /* The kinds' names, both ways. */
    enum tw_rating_kind k;
    assert_string_equal(tw_rating_kind_name(TW_RATING_PROVISIONED), "provisioned");
    assert_string_equal(tw_rating_kind_name(TW_RATING_UNSET), "");
    assert_true(tw_rating_kind_parse("none", &k));
    assert_int_equal(k, TW_RATING_NONE);
    assert_true(tw_rating_kind_parse("tier", &k));
    assert_int_equal(k, TW_RATING_TIER);
    assert_false(tw_rating_kind_parse("", &k));
    assert_false(tw_rating_kind_parse("Tier", &k));
    assert_false(tw_rating_kind_parse(NULL, &k));
}

static void test_provisioned(void **state)
{
    const struct tw_tier_catalog *cat = *state;
    int64_t lo, hi;
    double lo_m, hi_m;
    struct tw_error err = {0};
    struct {
        const char *sku;
        int64_t gib, lo, hi;
        double lo_m, hi_m;
    } rows[] = {
        {"PremiumV2_LRS", 1, 3000, 3000, 125, 125},
        {"PremiumV2_LRS", 6, 3000, 3000, 125, 125},
        {"PremiumV2_LRS", 8, 3000, 4000, 125, 1000},
        {"PremiumV2_LRS", 10, 3000, 5000, 125, 1250},
        {"PremiumV2_LRS", 160, 3000, 80000, 125, 2000},
        {"PremiumV2_LRS", 65536, 3000, 80000, 125, 2000},
        {"UltraSSD_LRS", 4, 100, 4000, 1, 1000},
        {"UltraSSD_LRS", 64, 100, 64000, 1, 10000},
        {"UltraSSD_LRS", 512, 100, 400000, 1, 10000},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (tw_tier_prov_range(cat, rows[i].sku, rows[i].gib, &lo, &hi, &lo_m, &hi_m, &err) !=
            TW_OK)
            fail_msg("%s %lld: %s", rows[i].sku, (long long)rows[i].gib, err.msg);
        assert_int_equal(lo, rows[i].lo);
        assert_int_equal(hi, rows[i].hi);
        assert_true(lo_m == rows[i].lo_m);
        if (hi_m != rows[i].hi_m)
            fail_msg("%s %lld GiB: max %g MB/s, want %g", rows[i].sku, (long long)rows[i].gib,
                     hi_m, rows[i].hi_m);
    }
    assert_int_equal(tw_tier_prov_range(cat, "UltraSSD_LRS", 2, &lo, &hi, &lo_m, &hi_m, &err),
                     TW_EINVAL);
    assert_non_null(strstr(err.msg, "4 to 65536 GiB"));
    assert_int_equal(tw_tier_prov_range(cat, "Premium_LRS", 128, &lo, &hi, &lo_m, &hi_m, &err),
                     TW_EINVAL);
}

#define TIER(name, sku, gib, iops, extra)                                                   \
    "{\"tier\":\"" name "\",\"sku\":\"" sku "\",\"size_gib\":" #gib ",\"iops\":" #iops     \
    ",\"mbps\":25" extra "}"
#define NOBURST ",\"bursting\":\"none\""
#define HEAD "{\"schema_version\":\"tierwise.disk-tiers/1\","

static void test_minimal_catalog(void **state)
{
    (void)state;
    const char *doc = HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) ","
                           TIER("P2", "Premium_LRS", 8, 240, NOBURST) "],"
                           "\"skus\":{\"Premium_LRS\":\"P\"}}";
    struct tw_tier_catalog cat;
    struct tw_error err = {0};
    assert_int_equal(tw_tier_catalog_parse(doc, strlen(doc), &cat, &err), TW_OK);
    assert_int_equal(cat.n_tiers, 2);
    /* Without premium_ssd_v2 / ultra_disk, those SKUs are unknown. */
    assert_false(tw_tier_sku(&cat, "PremiumV2_LRS", NULL));
    const struct tw_tier *t;
    assert_int_equal(tw_tier_for_size(&cat, "Premium_LRS", 9, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "P2, 8 GiB"));
    tw_tier_catalog_cleanup(&cat);
    tw_tier_catalog_cleanup(&cat); /* twice is harmless */
}

static void test_bad_catalogs(void **state)
{
    (void)state;
    struct {
        const char *doc;
        const char *words;
    } rows[] = {
        {"", "not valid JSON"},
        {"{\"tiers\":[", "not valid JSON"},
        {"[]", "JSON object"},
        {"{\"tiers\":[]}", "schema_version"},
        {HEAD "\"tiers\":[]}", "tiers"},
        {HEAD "\"tiers\":[1]}", "tiers[0] must be an object"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, ",\"bursting\":\"maybe\"") "]}",
         "bursting \"maybe\""},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, "") "]}", "bursting is missing"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, -3, NOBURST) "]}", "tiers[0].iops"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 0, 120, NOBURST) "]}", "size_gib"},
        {HEAD "\"tiers\":[" TIER("Px", "Premium_LRS", 4, 120, NOBURST) "]}", "not a tier name"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, ",\"bursting\":\"credit\"") "]}",
         "burst_iops is missing"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120,
                                 ",\"bursting\":\"credit\",\"burst_iops\":100,\"burst_mbps\":170")
              "]}",
         "bursts below its rating"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST ",\"burst_iops\":900") "]}",
         "must be null"},
        {HEAD "\"tiers\":[" TIER("P2", "Premium_LRS", 8, 120, NOBURST) ","
              TIER("P1", "Premium_LRS", 4, 120, NOBURST) "]}",
         "must be larger"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) ","
              TIER("P1", "Premium_LRS", 8, 120, NOBURST) "]}",
         "listed twice"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) "]}", "skus is missing"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) "],\"skus\":{\"X\":\"E\"}}",
         "has no tiers"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) "],\"skus\":{\"X\":\"PE\"}}",
         "one capital letter"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST)
              "],\"skus\":{\"Premium_LRS\":\"P\"},\"ultra_disk\":{\"sku\":\"U\"}}",
         "ultra_disk.rules is missing"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST)
              "],\"skus\":{\"Premium_LRS\":\"P\"},\"ultra_disk\":{\"sku\":\"U\",\"rules\":{"
              "\"min_gib\":4,\"max_gib\":8,\"min_iops\":100,\"iops_per_gib\":1,\"max_iops\":50,"
              "\"min_mbps\":1,\"mbps_per_iops\":0.25,\"max_mbps\":10}}}",
         "minimum is above its maximum"},
        /* SKU names are the vocabulary's, each on its own letter's table. */
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST)
              "],\"skus\":{\"Premium_GRS\":\"P\"}}",
         "not the SKU name of a tiered disk"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST) ","
              TIER("E1", "StandardSSD_LRS", 4, 120, NOBURST)
              "],\"skus\":{\"StandardSSD_LRS\":\"P\"}}",
         "another letter's table"},
        {HEAD "\"tiers\":[" TIER("P1", "Premium_LRS", 4, 120, NOBURST)
              "],\"skus\":{\"Premium_LRS\":\"P\"},\"ultra_disk\":{\"sku\":\"U\",\"rules\":{"
              "\"min_gib\":4,\"max_gib\":8,\"min_iops\":100,\"iops_per_gib\":1,\"max_iops\":500,"
              "\"min_mbps\":1,\"mbps_per_iops\":0.25,\"max_mbps\":10}}}",
         "ultra_disk.sku \"U\" is not an Ultra SKU name"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct tw_tier_catalog cat;
        struct tw_error err = {0};
        enum tw_err rc = tw_tier_catalog_parse(rows[i].doc, strlen(rows[i].doc), &cat, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, rows[i].words))
            fail_msg("row %zu: rc %d, message \"%s\" lacks \"%s\"", i, rc, err.msg,
                     rows[i].words);
        assert_int_equal(cat.n_tiers, 0);
        assert_null(cat.tiers);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_size_to_tier),
        cmocka_unit_test(test_size_errors),
        cmocka_unit_test(test_perf_tier),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_provisioned),
        cmocka_unit_test(test_minimal_catalog),
        cmocka_unit_test(test_bad_catalogs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
