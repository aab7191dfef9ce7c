/* fuzz_imds.c - the IMDS instance parser on arbitrary bytes. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/imds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_inventory inv, back;
    struct tw_error err = {0};
    if (tw_az_imds_parse((const char *)data, size, &inv, &err) != TW_OK) {
        /* A refusal always says why, and leaves nothing half-filled. */
        if (!err.msg[0] || inv.n_disks != 0)
            abort();
        return 0;
    }
    /* What IMDS gave must make a valid inventory: write it out, read it
     * back, same disks. */
    json_t *v = tw_inventory_to_value(&inv);
    if (!v)
        abort();
    char *s = json_dumps(v, 0);
    json_decref(v);
    if (!s || tw_inventory_from_json(s, strlen(s), &back, &err) != TW_OK ||
        back.n_disks != inv.n_disks || back.vm.n_tags != inv.vm.n_tags)
        abort();
    for (size_t i = 0; i < inv.n_disks; i++)
        if (back.disks[i].lun != inv.disks[i].lun ||
            back.disks[i].size_gib != inv.disks[i].size_gib ||
            strcmp(back.disks[i].name, inv.disks[i].name) != 0)
            abort();
    free(s);
    return 0;
}
