/* fuzz_reservations.c - the reservations file (core/reservation.c) on
 * arbitrary bytes: a refusal says where and holds nothing; what parses
 * has distinct entries with counts of at least one, and merged with
 * itself counts each twice. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/reservation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_reservations r, m = {0};
    struct tw_error err = {0};
    if (tw_reservations_parse((const char *)data, size, &r, &err) != TW_OK) {
        if (!err.msg[0] || r.n != 0 || r.v != NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i < r.n; i++) {
        if (r.v[i].count < 1 || !r.v[i].region[0] || r.v[i].tier[0] != 'P')
            abort();
        for (size_t k = 0; k < i; k++)
            if (strcmp(r.v[k].region, r.v[i].region) == 0 &&
                strcmp(r.v[k].tier, r.v[i].tier) == 0 && r.v[k].redundancy == r.v[i].redundancy)
                abort();
    }
    if (tw_reservations_merge(&m, &r, NULL) != TW_OK || tw_reservations_merge(&m, &r, NULL) != TW_OK)
        abort();
    for (size_t i = 0; i < r.n; i++)
        if (tw_reservations_count(&m, r.v[i].region, r.v[i].tier, r.v[i].redundancy) !=
            2 * r.v[i].count)
            abort();
    tw_reservations_cleanup(&r);
    tw_reservations_cleanup(&m);
    return 0;
}
