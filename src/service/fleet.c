/*
 * fleet.c - the fleet's distinct regions (see fleet.h), read through the
 * store's VM pages.
 */
#include "service/fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

enum tw_err tw_svc_fleet_places(struct tw_store *st, bool need_subscription,
                                struct tw_svc_place **out, size_t *n, struct tw_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    struct tw_store_page pg = {.limit = TW_STORE_PAGE_MAX};
    for (;;) {
        struct tw_store_vm_row *rows = NULL;
        size_t got = 0;
        bool more = false;
        enum tw_err rc = tw_store_vms_page(st, &pg, &rows, &got, &more, err);
        if (rc != TW_OK) {
            free(*out);
            *out = NULL;
            *n = 0;
            return rc;
        }
        for (size_t i = 0; i < got; i++) {
            const struct tw_store_vm_row *vm = &rows[i];
            if (!vm->location[0] || (need_subscription && !vm->subscription_id[0]))
                continue;
            size_t k = 0;
            while (k < *n && strcasecmp((*out)[k].region, vm->location) != 0)
                k++;
            if (k < *n) {
                if (!(*out)[k].subscription[0])
                    snprintf((*out)[k].subscription, sizeof((*out)[k].subscription), "%s",
                             vm->subscription_id);
                continue;
            }
            if (*n == cap) {
                size_t c2 = cap ? cap * 2 : 16;
                struct tw_svc_place *p = realloc(*out, c2 * sizeof(*p));
                if (!p) {
                    tw_store_vm_rows_free(rows, got);
                    free(*out);
                    *out = NULL;
                    *n = 0;
                    return tw_error_set(err, TW_ENOMEM, "out of memory");
                }
                *out = p;
                cap = c2;
            }
            snprintf((*out)[*n].region, sizeof((*out)[*n].region), "%s", vm->location);
            snprintf((*out)[*n].subscription, sizeof((*out)[*n].subscription), "%s",
                     vm->subscription_id);
            (*n)++;
        }
        tw_store_vm_rows_free(rows, got);
        if (!more || got == 0)
            return TW_OK;
        pg.offset += got;
    }
}
