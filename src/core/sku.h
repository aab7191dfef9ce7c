/*
 * sku.h - the one vocabulary of managed-disk SKUs.
 *
 * A SKU name (what ARM and IMDS report for a disk: "Premium_LRS",
 * "StandardSSD_ZRS", "PremiumV2_LRS" ...) is a family and a redundancy.
 * This is the only parser of those names and of tier names ("P10",
 * "E1", "S80"); the rated catalog (tier.c), the price book (pricebook.c)
 * and everything that reads an inventory's `sku` go through it.
 *
 *   family          SKU names                          tiers
 *   Premium SSD     Premium_LRS, Premium_ZRS           P1 ... P80
 *   Standard SSD    StandardSSD_LRS, StandardSSD_ZRS   E1 ... E80
 *   Standard HDD    Standard_LRS, Standard_ZRS         S4 ... S80
 *   Premium SSD v2  PremiumV2_LRS, PremiumV2_ZRS       none: provisioned
 *   Ultra           UltraSSD_LRS, UltraSSD_ZRS         none: provisioned
 *
 * Names are compared case-insensitively, as Azure compares them; the
 * names written out are the canonical ones above.  (Standard_ZRS,
 * PremiumV2_ZRS and UltraSSD_ZRS are not offered today; the vocabulary
 * holds them so a price or a disk naming one is recognised, not guessed.)
 */
#ifndef TW_CORE_SKU_H
#define TW_CORE_SKU_H

#include <stdbool.h>
#include <stddef.h>

enum tw_sku_family {
    TW_SKU_PREMIUM_SSD,
    TW_SKU_STANDARD_SSD,
    TW_SKU_STANDARD_HDD,
    TW_SKU_PREMIUM_V2,
    TW_SKU_ULTRA,
    TW_SKU_FAMILY_COUNT
};

enum tw_sku_redundancy { TW_SKU_LRS, TW_SKU_ZRS };

struct tw_sku {
    enum tw_sku_family family;
    enum tw_sku_redundancy redundancy;
};

/* Parses a SKU name ("Premium_LRS", case-insensitive); false if unknown
 * (NULL and "" included). */
bool tw_sku_parse(const char *name, struct tw_sku *out);

/* The canonical SKU name of F and R ("StandardSSD_ZRS"); "?" out of range. */
const char *tw_sku_name(enum tw_sku_family f, enum tw_sku_redundancy r);
/* "Premium SSD", "Standard SSD", "Standard HDD", "Premium SSD v2", "Ultra". */
const char *tw_sku_family_name(enum tw_sku_family f);
/* "LRS", "ZRS". */
const char *tw_sku_redundancy_name(enum tw_sku_redundancy r);

/* The letter of F's tiers ('P', 'E', 'S'); 0 for the provisioned families. */
char tw_sku_tier_letter(enum tw_sku_family f);
/* Whether F has no tiers, its IOPS and MB/s set per disk (v2, Ultra). */
bool tw_sku_provisioned(enum tw_sku_family f);

/*
 * Parses the N bytes at S as a tier name: a tier letter and 1-2 digits
 * without a leading zero ("P10", "E1", "S80"; upper case only, as the
 * Retail Prices meters write them).  *FAMILY (may be NULL) gets the
 * letter's family, *NUMBER (may be NULL) the number.  Which numbers exist
 * is the catalog's business, not the vocabulary's.
 */
bool tw_sku_tier_parse(const char *s, size_t n, enum tw_sku_family *family, int *number);

#endif
