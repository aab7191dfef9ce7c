/*
 * json_shape.c - the store's rows as the REST API's JSON (json_shape.h).
 * Built with the _new setters, which take their value even on failure:
 * one json_decref of the object on any failure is the whole cleanup.
 */
#include "server/json_shape.h"

/* S as a JSON string; null when NULLABLE and S is "". */
static json_t *text(const char *s, bool nullable)
{
    return nullable && !s[0] ? json_null() : json_string(s);
}

/* Sets KEY of O to V (stolen); clears *OK when V or the set failed. */
static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

static json_t *done(json_t *o, bool ok)
{
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tw_shape_vm(const struct tw_store_vm_row *r)
{
    json_t *o = json_object(), *tags = json_object();
    bool ok = o && tags;
    for (size_t i = 0; ok && i < r->n_tags; i++)
        put(tags, r->tags[i].key, json_string(r->tags[i].value), &ok);
    if (!o) {
        json_decref(tags);
        return NULL;
    }
    put(o, "id", json_integer(r->id), &ok);
    put(o, "name", text(r->name, false), &ok);
    put(o, "resource_id", text(r->resource_id, true), &ok);
    put(o, "subscription_id", text(r->subscription_id, true), &ok);
    put(o, "resource_group", text(r->resource_group, true), &ok);
    put(o, "location", text(r->location, false), &ok);
    put(o, "vm_size", text(r->vm_size, false), &ok);
    put(o, "tags", tags, &ok);
    put(o, "power_state", text(r->power_state, true), &ok);
    put(o, "power_state_at", text(r->power_state_at, true), &ok);
    /* null: no agent reported it (a VM the sync from ARM stored) */
    put(o, "last_report_at", text(r->last_report_at, true), &ok);
    put(o, "disks", json_integer(r->n_disks), &ok);
    return done(o, ok);
}

json_t *tw_shape_disk(const struct tw_store_disk_row *r, bool detached_field)
{
    const struct tw_disk *d = &r->disk;
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = true;
    put(o, "id", json_integer(r->id), &ok);
    put(o, "vm_id", json_integer(r->vm_id), &ok);
    put(o, "vm_name", text(r->vm_name, false), &ok);
    put(o, "name", text(d->name, false), &ok);
    put(o, "role", json_string(d->role == TW_DISK_OS ? "os" : "data"), &ok);
    put(o, "lun", d->lun < 0 ? json_null() : json_integer(d->lun), &ok);
    put(o, "sku", text(d->sku, false), &ok);
    put(o, "size_gib", json_integer(d->size_gib), &ok);
    put(o, "tier", text(d->tier, true), &ok);
    put(o, "caching", json_string(tw_caching_name(d->caching)), &ok);
    put(o, "managed_disk_id", text(d->managed_disk_id, true), &ok);
    put(o, "write_accelerator", json_boolean(d->write_accelerator), &ok);
    put(o, "device", text(d->device, true), &ok);
    put(o, "last_seen_at", text(r->last_seen_at, false), &ok);
    if (detached_field)
        put(o, "detached_at", text(r->detached_at, true), &ok);
    return done(o, ok);
}

json_t *tw_shape_disks(const struct tw_store_disk_row *rows, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, tw_shape_disk(&rows[i], false)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *tw_shape_sku_history(const struct tw_store_sku_hist_row *rows, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        bool ok = o != NULL;
        if (o) {
            put(o, "observed_at", text(rows[i].observed_at, false), &ok);
            put(o, "sku", text(rows[i].sku, false), &ok);
            put(o, "tier", text(rows[i].tier, true), &ok);
            put(o, "size_gib", json_integer(rows[i].size_gib), &ok);
        }
        if (json_array_append_new(a, done(o, ok)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *tw_shape_results(const struct tw_store_result_rec *recs, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *v = json_loadb(recs[i].record, recs[i].record_len, 0, NULL);
        if (json_array_append_new(a, v) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
