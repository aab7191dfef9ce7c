/*
 * fleet.h - the fleet's places as the periodic jobs walk them: the
 * distinct Azure regions of the stored VMs, for the VM sizes' refresh
 * (service/vmsizes.h: ARM's Resource SKUs per region and subscription)
 * and the price books' (service/prices.h: one book per region and
 * currency).
 */
#ifndef TW_SERVICE_FLEET_H
#define TW_SERVICE_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "store/store.h"

struct tw_svc_place {
    char region[64];       /* as the VM's location says it ("westeurope") */
    char subscription[64]; /* the first one the region's VMs name ("" for none) */
};

/*
 * The distinct regions (compared without case) of the stored VMs that
 * name a location, and a subscription when NEED_SUBSCRIPTION (ARM's SKUs
 * are read per subscription; a region's prices are the same for all), in
 * the order first met, into *OUT (malloc'd, free(); NULL and *N 0 for
 * none); SUBSCRIPTION is the first one the region's VMs name ("" when
 * none does).  Errors: the store's, TW_ENOMEM.
 */
enum tw_err tw_svc_fleet_places(struct tw_store *st, bool need_subscription,
                                struct tw_svc_place **out, size_t *n, struct tw_error *err);

#endif
