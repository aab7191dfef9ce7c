/* sku.c - managed-disk SKU and tier names (see sku.h). */
#include "core/sku.h"

#include <strings.h>

static const char *const names[TW_SKU_FAMILY_COUNT][2] = {{"Premium_LRS", "Premium_ZRS"},
                                                          {"StandardSSD_LRS", "StandardSSD_ZRS"},
                                                          {"Standard_LRS", "Standard_ZRS"},
                                                          {"PremiumV2_LRS", "PremiumV2_ZRS"},
                                                          {"UltraSSD_LRS", "UltraSSD_ZRS"}};

bool tw_sku_parse(const char *name, struct tw_sku *out)
{
    for (int f = 0; name && f < TW_SKU_FAMILY_COUNT; f++)
        for (int r = 0; r < 2; r++)
            if (strcasecmp(name, names[f][r]) == 0) {
                out->family = (enum tw_sku_family)f;
                out->redundancy = r ? TW_SKU_ZRS : TW_SKU_LRS;
                return true;
            }
    return false;
}

const char *tw_sku_name(enum tw_sku_family f, enum tw_sku_redundancy r)
{
    return (unsigned)f < TW_SKU_FAMILY_COUNT ? names[f][r == TW_SKU_ZRS] : "?";
}

const char *tw_sku_family_name(enum tw_sku_family f)
{
    static const char *const n[TW_SKU_FAMILY_COUNT] = {"Premium SSD", "Standard SSD",
                                                       "Standard HDD", "Premium SSD v2", "Ultra"};
    return (unsigned)f < TW_SKU_FAMILY_COUNT ? n[f] : "?";
}

const char *tw_sku_redundancy_name(enum tw_sku_redundancy r)
{
    return r == TW_SKU_ZRS ? "ZRS" : "LRS";
}

char tw_sku_tier_letter(enum tw_sku_family f)
{
    switch (f) {
    case TW_SKU_PREMIUM_SSD: return 'P';
    case TW_SKU_STANDARD_SSD: return 'E';
    case TW_SKU_STANDARD_HDD: return 'S';
    default: return 0;
    }
}

bool tw_sku_provisioned(enum tw_sku_family f)
{
    return f == TW_SKU_PREMIUM_V2 || f == TW_SKU_ULTRA;
}

bool tw_sku_tier_parse(const char *s, size_t n, enum tw_sku_family *family, int *number)
{
    if (n < 2 || n > 3 || s[1] < '1' || s[1] > '9' || (n == 3 && (s[2] < '0' || s[2] > '9')))
        return false;
    enum tw_sku_family f;
    switch (s[0]) {
    case 'P': f = TW_SKU_PREMIUM_SSD; break;
    case 'E': f = TW_SKU_STANDARD_SSD; break;
    case 'S': f = TW_SKU_STANDARD_HDD; break;
    default: return false;
    }
    if (family)
        *family = f;
    if (number)
        *number = n == 2 ? s[1] - '0' : (s[1] - '0') * 10 + (s[2] - '0');
    return true;
}
