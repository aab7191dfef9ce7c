/* fuzz_catalog.c - the tier catalog reader (outside input with --catalog)
 * on arbitrary bytes, then every lookup on what it accepted; the same bytes
 * also go to the VM caps readers (--vm-caps, Resource SKUs responses, the
 * store's text of one size). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/tier.h"
#include "core/vmcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void lookups(const struct tw_tier_catalog *cat)
{
    static const int64_t sizes[] = {-1, 0, 1, 4, 5, 128, 200, 4096, 32767, 32768, 1048577};
    const struct tw_tier *t;
    for (size_t i = 0; i < cat->n_skus; i++) {
        for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
            struct tw_error err;
            if (tw_tier_for_size(cat, cat->skus[i].sku, sizes[j], &t, &err) == TW_OK &&
                (t->size_gib < sizes[j] || t->name[0] != cat->skus[i].letter))
                abort(); /* a tier must hold the size, from the SKU's table */
            for (size_t k = 0; k < cat->n_tiers; k += 7)
                tw_tier_for_disk(cat, cat->skus[i].sku, sizes[j], cat->tiers[k].name, &t, &err);
        }
    }
    for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
        int64_t lo, hi;
        double lo_m, hi_m;
        const char *prov[] = {cat->premium_v2.sku, cat->ultra.sku};
        for (int k = 0; k < 2; k++)
            if (tw_tier_prov_range(cat, prov[k], sizes[j], &lo, &hi, &lo_m, &hi_m, NULL) ==
                    TW_OK &&
                (hi < lo || hi_m < lo_m))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_tier_catalog cat;
    struct tw_error err;
    if (tw_tier_catalog_parse((const char *)data, size, &cat, &err) == TW_OK)
        lookups(&cat);
    tw_tier_catalog_cleanup(&cat);

    struct tw_vmcap_table caps;
    if (tw_vmcap_table_parse((const char *)data, size, &caps, &err) == TW_OK)
        for (size_t i = 0; i < caps.n; i++) /* sorted: bisection finds every row */
            if (tw_vmcap_find(&caps, caps.caps[i].vm_size) != &caps.caps[i])
                abort();
    tw_vmcap_table_cleanup(&caps);

    struct tw_vmcap one, two;
    tw_vmcap_from_resource_skus((const char *)data, size, "Standard_B2s", &one, &err);

    /* The store's text of one cap: what reads writes back the same. */
    if (tw_vmcap_from_json((const char *)data, size, &one, &err) == TW_OK) {
        char *text = tw_vmcap_to_json(&one);
        if (text && (tw_vmcap_from_json(text, strlen(text), &two, &err) != TW_OK ||
                     strcmp(one.vm_size, two.vm_size) != 0 || one.iops != two.iops ||
                     one.bytes_per_s != two.bytes_per_s || one.premium != two.premium ||
                     one.cached_bytes_per_s != two.cached_bytes_per_s ||
                     strcmp(one.source, two.source) != 0))
            abort();
        free(text);
    }
    return 0;
}
