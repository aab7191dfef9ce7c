/*
 * store_power.c - one VM's power-state history (store.h, "power states of
 * one VM"), read through the savings walk (store_savings.c), so it needs no
 * operation of its own in each implementation: the walk goes by VM id and
 * stops at the VM asked for.  For one VM of a CLI command; the fleet's
 * readers walk the fleet themselves.
 */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

enum tw_err tw_store_vm_power_states(struct tw_store *st, int64_t vm_id, int64_t from_ms,
                                     int64_t to_ms, struct tw_store_sv_power **out, size_t *n,
                                     struct tw_error *err)
{
    *out = NULL;
    *n = 0;
    struct tw_store_sv_cursor *c;
    enum tw_err rc = tw_store_savings_open(st, from_ms, to_ms, &c, err);
    for (bool done = false; rc == TW_OK;) {
        struct tw_store_sv_vm vm;
        rc = tw_store_savings_next(c, &vm, &done, err);
        if (rc != TW_OK || done || vm.id > vm_id)
            break;
        if (vm.id != vm_id)
            continue;
        if (vm.n_power) {
            *out = malloc(vm.n_power * sizeof(**out));
            if (!*out) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory reading power states");
                break;
            }
            memcpy(*out, vm.power, vm.n_power * sizeof(**out));
            *n = vm.n_power;
        }
        break;
    }
    tw_store_savings_close(c);
    return rc;
}
