/*
 * rows_json.h - the store's rows (store.h) as JSON objects with the keys
 * the REST API gives them (src/server/json_shape.c), so that the store's
 * tests can compare and inspect whole states.  Test-only: the store
 * itself answers rows, never JSON.
 */
#ifndef TW_TEST_ROWS_JSON_H
#define TW_TEST_ROWS_JSON_H

#include <jansson.h>
#include <stdlib.h>

#include "store/store.h"

static inline json_t *rj_text(const char *s, int nullable)
{
    return nullable && !s[0] ? json_null() : json_string(s);
}

static inline json_t *rj_vm_row(const struct tw_store_vm_row *r)
{
    json_t *tags = json_object();
    for (size_t i = 0; i < r->n_tags; i++)
        json_object_set_new(tags, r->tags[i].key, json_string(r->tags[i].value));
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "id",
                     (json_int_t)r->id, "name", rj_text(r->name, 0), "resource_id",
                     rj_text(r->resource_id, 1), "subscription_id", rj_text(r->subscription_id, 1),
                     "resource_group", rj_text(r->resource_group, 1), "location",
                     rj_text(r->location, 0), "vm_size", rj_text(r->vm_size, 0), "tags", tags,
                     "power_state", rj_text(r->power_state, 1), "power_state_at",
                     rj_text(r->power_state_at, 1), "last_report_at",
                     rj_text(r->last_report_at, 0), "disks", (json_int_t)r->n_disks);
}

static inline json_t *rj_disk_row(const struct tw_store_disk_row *r, int detached_field)
{
    const struct tw_disk *d = &r->disk;
    json_t *o = json_pack(
        "{s:I, s:I, s:o, s:o, s:s, s:o, s:o, s:I, s:o, s:s, s:o, s:b, s:o, s:o}", "id",
        (json_int_t)r->id, "vm_id", (json_int_t)r->vm_id, "vm_name", rj_text(r->vm_name, 0),
        "name", rj_text(d->name, 0), "role", d->role == TW_DISK_OS ? "os" : "data", "lun",
        d->lun < 0 ? json_null() : json_integer(d->lun), "sku", rj_text(d->sku, 0), "size_gib",
        (json_int_t)d->size_gib, "tier", rj_text(d->tier, 1), "caching",
        tw_caching_name(d->caching), "managed_disk_id", rj_text(d->managed_disk_id, 1),
        "write_accelerator", (int)d->write_accelerator, "device", rj_text(d->device, 1),
        "last_seen_at", rj_text(r->last_seen_at, 0));
    if (o && detached_field)
        json_object_set_new(o, "detached_at", rj_text(r->detached_at, 1));
    return o;
}

static inline json_t *rj_disk_rows(const struct tw_store_disk_row *rows, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, rj_disk_row(&rows[i], 0));
    return a;
}

/* tw_store_vms as an array. */
static inline enum tw_err rj_vms(struct tw_store *st, json_t **out, struct tw_error *err)
{
    struct tw_store_vm_row *rows;
    size_t n;
    *out = NULL;
    enum tw_err rc = tw_store_vms(st, &rows, &n, err);
    if (rc != TW_OK)
        return rc;
    *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(*out, rj_vm_row(&rows[i]));
    tw_store_vm_rows_free(rows, n);
    return TW_OK;
}

/* tw_store_vm with "disks" the VM's disk list (as GET /vms/{id}). */
static inline enum tw_err rj_vm(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
{
    struct tw_store_vm_row row;
    struct tw_store_disk_row *disks;
    size_t n;
    *out = NULL;
    enum tw_err rc = tw_store_vm(st, id, &row, err);
    if (rc != TW_OK)
        return rc;
    rc = tw_store_vm_disks(st, id, &disks, &n, err);
    if (rc == TW_OK) {
        *out = rj_vm_row(&row);
        json_object_set_new(*out, "disks", rj_disk_rows(disks, n));
        free(disks);
    }
    free(row.tags);
    return rc;
}

static inline enum tw_err rj_disks(struct tw_store *st, json_t **out, struct tw_error *err)
{
    struct tw_store_disk_row *rows;
    size_t n;
    *out = NULL;
    enum tw_err rc = tw_store_disks(st, &rows, &n, err);
    if (rc != TW_OK)
        return rc;
    *out = rj_disk_rows(rows, n);
    free(rows);
    return TW_OK;
}

/* tw_store_disk with "sku_history" and "results" (as GET /disks/{id}). */
static inline enum tw_err rj_disk(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
{
    struct tw_store_disk_row row;
    struct tw_store_sku_hist_row *h;
    struct tw_store_result_rec *recs;
    size_t nh, nr;
    *out = NULL;
    enum tw_err rc = tw_store_disk(st, id, &row, err);
    if (rc == TW_OK)
        rc = tw_store_disk_history(st, id, &h, &nh, err);
    if (rc != TW_OK)
        return rc;
    rc = tw_store_disk_results(st, id, &recs, &nr, err);
    if (rc != TW_OK) {
        free(h);
        return rc;
    }
    json_t *o = rj_disk_row(&row, 1), *ha = json_array(), *ra = json_array();
    for (size_t i = 0; i < nh; i++)
        json_array_append_new(ha, json_pack("{s:s, s:s, s:o, s:I}", "observed_at",
                                            h[i].observed_at, "sku", h[i].sku, "tier",
                                            rj_text(h[i].tier, 1), "size_gib",
                                            (json_int_t)h[i].size_gib));
    for (size_t i = 0; i < nr; i++)
        json_array_append_new(ra, json_loadb(recs[i].record, recs[i].record_len, 0, NULL));
    json_object_set_new(o, "sku_history", ha);
    json_object_set_new(o, "results", ra);
    free(h);
    tw_store_result_recs_free(recs, nr);
    *out = o;
    return TW_OK;
}

#endif
