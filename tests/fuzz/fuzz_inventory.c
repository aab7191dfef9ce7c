/* fuzz_inventory.c - the inventory reader (core/inventory.c) on arbitrary
 * bytes: what --inventory-file and the report body go through. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_inventory inv, back;
    struct tw_error err = {0};
    if (tw_inventory_from_json((const char *)data, size, &inv, &err) != TW_OK) {
        /* A refusal says why and leaves nothing half-read. */
        if (!err.msg[0] || inv.n_disks != 0 || inv.vm.name[0])
            abort();
        return 0;
    }
    /* What was accepted must write out and read back the same. */
    json_t *v = tw_inventory_to_value(&inv);
    if (!v)
        abort();
    char *s = json_dumps(v, JSON_SORT_KEYS);
    json_decref(v);
    if (!s || tw_inventory_from_json(s, strlen(s), &back, &err) != TW_OK)
        abort();
    json_t *v2 = tw_inventory_to_value(&back);
    char *s2 = v2 ? json_dumps(v2, JSON_SORT_KEYS) : NULL;
    json_decref(v2);
    if (!s2 || strcmp(s, s2) != 0)
        abort();
    free(s);
    free(s2);
    return 0;
}
