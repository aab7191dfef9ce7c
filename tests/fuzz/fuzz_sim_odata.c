/*
 * fuzz_sim_odata.c - the simulator's Retail Prices $filter parser on
 * arbitrary bytes (a $filter arrives straight from a client's query).
 *
 * Compiled in from src/sim, which the fuzz binaries do not link (see
 * fuzz_scenario.c).  Each accepted filter is matched against a fixed item,
 * case-sensitive and not, to walk the tree it built.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sim/sim_odata.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *get(const void *item, const char *key)
{
    (void)item;
    if (strcmp(key, "meterName") == 0)
        return "P10 LRS Disk";
    if (strcmp(key, "type") == 0)
        return "Consumption";
    return strcmp(key, "meterId") == 0 ? NULL : "Storage";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_odata_filter f;
    for (int cs = 0; cs < 2; cs++) {
        struct tw_error err = {0};
        if (tw_odata_parse((const char *)data, size, cs, &f, &err) == TW_OK) {
            if (f.n > TW_ODATA_MAX_NODES || f.root >= (int)f.n)
                abort();
            (void)tw_odata_match(&f, NULL, get);
        } else if (!err.msg[0]) {
            abort();
        }
    }
    return 0;
}
