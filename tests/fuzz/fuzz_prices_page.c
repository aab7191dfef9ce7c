/* fuzz_prices_page.c - the Retail Prices page parser (core/pricepage.c) on
 * arbitrary bytes: every page a refresh reads and every file `prices
 * import` loads goes through it.  What it accepts must build a book, dump
 * and read back to the same items. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pricebook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_price_items items = {0}, back = {0};
    struct tw_price_page page;
    struct tw_error err = {0};
    if (tw_price_page_parse((const char *)data, size, &items, &page, &err) != TW_OK) {
        /* A refusal says why and keeps nothing. */
        if (!err.msg[0] || items.n != 0)
            abort();
        tw_price_items_cleanup(&items);
        return 0;
    }
    if (page.items != items.n || (page.count >= 0 && (size_t)page.count != items.n))
        abort();
    size_t len;
    char *s = tw_price_items_dump(items.v, items.n, &len);
    if (!s || tw_price_page_parse(s, len, &back, NULL, &err) != TW_OK || back.n != items.n)
        abort();
    free(s);
    for (size_t i = 0; i < items.n; i++) {
        const struct tw_price_item *a = &items.v[i], *b = &back.v[i];
        if (strcmp(a->meter, b->meter) != 0 || strcmp(a->region, b->region) != 0 ||
            strcmp(a->currency, b->currency) != 0 || strcmp(a->product, b->product) != 0 ||
            a->price.micros != b->price.micros)
            abort();
    }
    tw_price_items_cleanup(&back);
    struct tw_pricebook *book;
    if (tw_pricebook_build(&items, NULL, NULL, "fuzz", "", "2026-01-01T00:00:00Z", &book, &err) !=
        TW_OK)
        return 0;
    for (size_t i = 0; i < book->nslots; i++) {
        const struct tw_price_entry *e = &book->slots[i];
        if (!e->hash)
            continue;
        /* Every stored price is found again, and is never zero. */
        const struct tw_price_entry *f =
            tw_pricebook_find(book, e->region, e->currency, (enum tw_sku_family)e->family, e->tier,
                              (enum tw_sku_redundancy)e->redundancy, (enum tw_pb_kind)e->kind);
        if (f != e || !(e->price.micros > 0))
            abort();
    }
    json_t *j = NULL;
    if (book->items.n && tw_pricebook_json(book, book->items.v[0].region, book->items.v[0].currency,
                                           NULL, &j, &err) == TW_OK)
        json_decref(j);
    tw_pricebook_free(book);
    return 0;
}
