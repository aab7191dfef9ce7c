/*
 * json_shape.h - the REST API's JSON for the store's rows (store.h): the
 * one place where a VM, a disk, a SKU-history row, a stored result or a
 * token becomes the object /api/v1 answers with.  Each function returns a
 * new reference, NULL when out of memory.
 */
#ifndef TW_SERVER_JSON_SHAPE_H
#define TW_SERVER_JSON_SHAPE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "store/store.h"

/* {"id", "name", "resource_id", "subscription_id", "resource_group",
 *  "location", "vm_size", "tags", "power_state", "power_state_at",
 *  "last_report_at", "disks": the count of attached disks}; unknown text
 * is null. */
json_t *tw_shape_vm(const struct tw_store_vm_row *r);

/* {"id", "vm_id", "vm_name", "name", "role", "lun", "sku", "size_gib",
 *  "tier", "caching", "managed_disk_id", "write_accelerator", "device",
 *  "last_seen_at"} and, when DETACHED_FIELD, "detached_at". */
json_t *tw_shape_disk(const struct tw_store_disk_row *r, bool detached_field);

/* An array of tw_shape_disk objects (without "detached_at"). */
json_t *tw_shape_disks(const struct tw_store_disk_row *rows, size_t n);

/* [{"observed_at", "sku", "tier", "size_gib"}] */
json_t *tw_shape_sku_history(const struct tw_store_sku_hist_row *rows, size_t n);

/* The records (tierwise.bench-result/1) as JSON values; NULL also when a
 * stored record no longer parses. */
json_t *tw_shape_results(const struct tw_store_result_rec *recs, size_t n);

#endif
