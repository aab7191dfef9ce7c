/*
 * store_arm.c - the fleet as ARM lists it, in the SQLite store: one VM and
 * its disks per call, in one write transaction (store.h "the fleet from
 * ARM"), and the lookups of a VM by resource id or by name.
 *
 * A VM seen by ARM and reported by an agent is one row, whichever came
 * first: ARM's VM is found by its resource id (the row's identity, "id:"
 * and the id in lower case, the identity ingest gives a report that knows
 * it), else by name, resource group and subscription (a report that did
 * not know its id; the row then takes ARM's id as its identity).  Ingest
 * looks the other way (store_ingest.c).  A disk likewise: by its managed
 * disk id, else by its name on the VM.
 *
 * Histories get a row only on a change (a sync every five minutes must
 * not write the fleet's every disk): the SKU history when (SKU, tier,
 * size) differs from the observation before, the power states when the
 * state differs from the VM's current one.  The changes are handed to the
 * caller after the commit, so what it counts is what was stored.
 */
#include "store/store_sqlite.h"
#include "store/store_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STMT(q, s, id, err)                                  \
    sqlite3_stmt *q = tw_sq_stmt((s), (id), (err));          \
    if (!q)                                                  \
        return (err) && (err)->code ? (err)->code : TW_EIO

static enum tw_err run(struct tw_sqlite *s, sqlite3_stmt *q, const char *what,
                       struct tw_error *err)
{
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

static bool col_is(sqlite3_stmt *q, int col, const char *want)
{
    const char *t = (const char *)sqlite3_column_text(q, col);
    return strcmp(t ? t : "", want ? want : "") == 0;
}

/* ---- the changes, kept until the commit ---- */

struct put {
    struct tw_sqlite *s;
    const struct tw_store_arm_vm *v;
    const char *at;
    int64_t ms;
    int64_t vm_id;
    char prev_seen_at[40];      /* when the VM's disks were last seen before this put */
    int64_t prev_seen_ms;
    struct tw_sh_arm_change *ch;
    size_t n_ch, cap_ch;
    bool inv_changed;           /* the VM's disks as compliance reads them changed */
    int64_t moved_from[TW_INV_MAX_DISKS]; /* VMs a disk moved away from */
    size_t n_moved;
};

static enum tw_err note(struct put *p, enum tw_store_arm_what what, int64_t disk_id,
                        const char *disk, const char *from, const char *to, struct tw_error *err)
{
    return tw_sh_arm_note(&p->ch, &p->n_ch, &p->cap_ch, what, p->vm_id, p->v->vm->name, disk_id,
                          disk, from, to, err);
}

/* ---- the VM ---- */

/* Finds the VM (by identity, else by its place), creating it when new, and
 * brings its fields to ARM's when ARM's look is newer than its report. */
static enum tw_err put_vm(struct put *p, struct tw_error *err)
{
    struct tw_sqlite *s = p->s;
    const struct tw_vm *vm = p->v->vm;
    char identity[1024];
    tw_sh_identity_of("id:", vm->resource_id, identity, sizeof(identity));
    char *tags = tw_sh_tags_json(vm);
    if (!tags)
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");

    enum tw_err e = TW_OK;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_ARM_VM_FIND, err);
    if (!q) {
        free(tags);
        return err && err->code ? err->code : TW_EIO;
    }
    tw_sq_text(q, 1, identity, false);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        q = tw_sq_stmt(s, SQ_ARM_VM_FIND_PLACE, err);
        if (!q) {
            free(tags);
            return err && err->code ? err->code : TW_EIO;
        }
        tw_sq_text(q, 1, vm->name, false);
        tw_sq_text(q, 2, vm->resource_group, false);
        tw_sq_text(q, 3, vm->subscription_id, false);
        tw_sq_text(q, 4, vm->resource_id, false);
        rc = sqlite3_step(q);
    }
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        STMT(ins, s, SQ_ARM_VM_INSERT, err);
        tw_sq_text(ins, 1, identity, false);
        tw_sq_text(ins, 2, vm->name, false);
        tw_sq_text(ins, 3, vm->resource_id, false);
        tw_sq_text(ins, 4, vm->subscription_id, false);
        tw_sq_text(ins, 5, vm->resource_group, false);
        tw_sq_text(ins, 6, vm->location, false);
        tw_sq_text(ins, 7, vm->vm_size, false);
        tw_sq_text(ins, 8, tags, false);
        tw_sq_text(ins, 9, p->at, false);
        sqlite3_bind_int64(ins, 10, p->ms);
        e = run(s, ins, "storing a VM from ARM", err);
        free(tags);
        if (e != TW_OK)
            return e;
        p->vm_id = sqlite3_last_insert_rowid(s->db);
        p->prev_seen_at[0] = '\0';
        p->prev_seen_ms = 0;
        return note(p, TW_ARM_CH_VM_NEW, 0, NULL, "", vm->vm_size, err);
    }
    if (rc != SQLITE_ROW) {
        free(tags);
        return tw_sq_fail(s, q, err, "finding ARM's VM in the store");
    }
    p->vm_id = sqlite3_column_int64(q, 0);
    bool reported = !col_is(q, 7, "");
    int64_t report_ms = sqlite3_column_int64(q, 9);
    /* Where its disks were last seen: its newest report, else the last
     * sync that listed it. */
    if (reported) {
        tw_sq_copy(q, 8, p->prev_seen_at, sizeof(p->prev_seen_at));
        p->prev_seen_ms = report_ms;
    } else {
        tw_sq_copy(q, 12, p->prev_seen_at, sizeof(p->prev_seen_at));
        p->prev_seen_ms = sqlite3_column_int64(q, 13);
    }
    /* A report newer than ARM's look keeps the fields it gave. */
    bool arm_newer = !reported || p->ms >= report_ms;
    char old_size[64], old_name[128], old_loc[64];
    tw_sq_copy(q, 5, old_size, sizeof(old_size));
    tw_sq_copy(q, 2, old_name, sizeof(old_name));
    tw_sq_copy(q, 4, old_loc, sizeof(old_loc));
    const char *old_tags = (const char *)sqlite3_column_text(q, 6);
    bool differs = arm_newer && (strcmp(old_size, vm->vm_size) != 0 ||
                                 strcmp(old_name, vm->name) != 0 ||
                                 strcmp(old_loc, vm->location) != 0 ||
                                 strcmp(old_tags ? old_tags : "{}", tags) != 0);
    char *keep_tags = NULL;
    char *old_tags_copy = differs ? strdup(old_tags ? old_tags : "{}") : NULL;
    if (differs && !old_tags_copy) {
        sqlite3_reset(q);
        free(tags);
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
    }
    if (!arm_newer) {
        keep_tags = strdup(old_tags ? old_tags : "{}");
        if (!keep_tags) {
            sqlite3_reset(q);
            free(tags);
            free(old_tags_copy);
            return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
        }
    }
    sqlite3_reset(q);

    sqlite3_stmt *up = tw_sq_stmt(s, SQ_ARM_VM_UPDATE, err);
    if (!up) {
        free(tags);
        free(keep_tags);
        free(old_tags_copy);
        return err && err->code ? err->code : TW_EIO;
    }
    sqlite3_bind_int64(up, 1, p->vm_id);
    tw_sq_text(up, 2, identity, false);
    tw_sq_text(up, 3, vm->resource_id, false);
    tw_sq_text(up, 4, arm_newer ? vm->name : old_name, false);
    tw_sq_text(up, 5, arm_newer ? vm->location : old_loc, false);
    tw_sq_text(up, 6, arm_newer ? vm->vm_size : old_size, false);
    tw_sq_text(up, 7, arm_newer ? tags : keep_tags, false);
    tw_sq_text(up, 8, p->at, false);
    sqlite3_bind_int64(up, 9, p->ms);
    e = run(s, up, "updating a VM from ARM", err);
    if (e == TW_OK && differs) {
        /* What changed, each field named: "size A; location B; tags {..}". */
        char from[64] = "", to[64] = "";
        tw_sh_fields_said(from, sizeof(from), to, sizeof(to), "size", old_size, vm->vm_size);
        tw_sh_fields_said(from, sizeof(from), to, sizeof(to), "name", old_name, vm->name);
        tw_sh_fields_said(from, sizeof(from), to, sizeof(to), "location", old_loc, vm->location);
        tw_sh_fields_said(from, sizeof(from), to, sizeof(to), "tags", old_tags_copy, tags);
        e = note(p, TW_ARM_CH_VM_FIELDS, 0, NULL, from, to, err);
    }
    free(tags);
    free(keep_tags);
    free(old_tags_copy);
    return e;
}

/* The power state, when ARM gave one: a history row and the VM's current
 * state only when it changed (and nothing newer is known). */
static enum tw_err put_power(struct put *p, struct tw_error *err)
{
    const char *state = p->v->power_state;
    if (!state || !state[0])
        return TW_OK;
    struct tw_sqlite *s = p->s;
    STMT(q, s, SQ_ARM_VM_FIND, err);
    char identity[1024];
    tw_sh_identity_of("id:", p->v->vm->resource_id, identity, sizeof(identity));
    tw_sq_text(q, 1, identity, false);
    if (sqlite3_step(q) != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading the VM's power state");
    char old[32];
    tw_sq_copy(q, 10, old, sizeof(old));
    bool known = sqlite3_column_type(q, 11) != SQLITE_NULL;
    int64_t old_ms = sqlite3_column_int64(q, 11);
    sqlite3_reset(q);
    if (known && (strcmp(old, state) == 0 || old_ms > p->ms))
        return TW_OK;
    STMT(obs, s, SQ_POWER_OBS, err);
    sqlite3_bind_int64(obs, 1, p->vm_id);
    tw_sq_text(obs, 2, p->at, false);
    sqlite3_bind_int64(obs, 3, p->ms);
    tw_sq_text(obs, 4, state, false);
    tw_sq_text(obs, 5, "arm", false);
    enum tw_err e = run(s, obs, "storing a power state from ARM", err);
    if (e != TW_OK)
        return e;
    STMT(cur, s, SQ_VM_POWER, err);
    sqlite3_bind_int64(cur, 1, p->vm_id);
    tw_sq_text(cur, 2, state, false);
    tw_sq_text(cur, 3, p->at, false);
    sqlite3_bind_int64(cur, 4, p->ms);
    if ((e = run(s, cur, "updating the VM's power state", err)) != TW_OK)
        return e;
    return note(p, TW_ARM_CH_POWER, 0, NULL, old, state, err);
}

/* ---- disks ---- */

static void row_read(sqlite3_stmt *q, struct tw_sh_arm_disk *r)
{
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, r->identity, sizeof(r->identity));
    r->vm_id = sqlite3_column_int64(q, 2);
    tw_sq_copy(q, 3, r->name, sizeof(r->name));
    tw_sq_copy(q, 4, r->role, sizeof(r->role));
    r->lun_null = sqlite3_column_type(q, 5) == SQLITE_NULL;
    r->lun = sqlite3_column_int(q, 5);
    tw_sq_copy(q, 6, r->sku, sizeof(r->sku));
    tw_sq_copy(q, 7, r->tier, sizeof(r->tier));
    r->size_gib = sqlite3_column_int64(q, 8);
    tw_sq_copy(q, 9, r->caching, sizeof(r->caching));
    tw_sq_copy(q, 10, r->managed_disk_id, sizeof(r->managed_disk_id));
    r->wa = sqlite3_column_int(q, 11) != 0;
    r->attached = sqlite3_column_type(q, 12) == SQLITE_NULL;
    r->shares_null = sqlite3_column_type(q, 13) == SQLITE_NULL;
    r->max_shares = sqlite3_column_int64(q, 13);
    r->bursting_null = sqlite3_column_type(q, 14) == SQLITE_NULL;
    r->bursting = sqlite3_column_int(q, 14);
    tw_sq_copy(q, 15, r->disk_state, sizeof(r->disk_state));
    tw_sq_copy(q, 16, r->lou, sizeof(r->lou));
}

/* The SKU history at ARM's look: a row when it differs from the observation
 * before; *NEWEST whether nothing later is known (the disk's current
 * fields may then follow ARM's). */
static enum tw_err put_history(struct put *p, const struct tw_sh_arm_disk *r,
                               const struct tw_disk *d, bool *newest, struct tw_error *err)
{
    struct tw_sqlite *s = p->s;
    STMT(prev, s, SQ_HIST_PREV, err);
    sqlite3_bind_int64(prev, 1, r->id);
    sqlite3_bind_int64(prev, 2, p->ms);
    int rc = sqlite3_step(prev);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, prev, err, "reading a disk's SKU history");
    char psku[32] = "", ptier[16] = "";
    int64_t psize = 0;
    bool had = rc == SQLITE_ROW;
    if (had) {
        tw_sq_copy(prev, 0, psku, sizeof(psku));
        tw_sq_copy(prev, 1, ptier, sizeof(ptier));
        psize = sqlite3_column_int64(prev, 2);
    }
    sqlite3_reset(prev);
    STMT(next, s, SQ_HIST_NEXT, err);
    sqlite3_bind_int64(next, 1, r->id);
    sqlite3_bind_int64(next, 2, p->ms);
    rc = sqlite3_step(next);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, next, err, "reading a disk's SKU history");
    *newest = rc == SQLITE_DONE;
    sqlite3_reset(next);
    if (had && tw_sh_same_sku(psku, ptier, psize, d->sku, d->tier, d->size_gib))
        return TW_OK;
    STMT(ins, s, SQ_HIST_OBS, err);
    sqlite3_bind_int64(ins, 1, r->id);
    tw_sq_text(ins, 2, p->at, false);
    sqlite3_bind_int64(ins, 3, p->ms);
    tw_sq_text(ins, 4, d->sku, false);
    tw_sq_text(ins, 5, d->tier, true);
    sqlite3_bind_int64(ins, 6, d->size_gib);
    tw_sq_text(ins, 7, "arm", false);
    enum tw_err e = run(s, ins, "recording a disk's SKU from ARM", err);
    if (e != TW_OK || !had)
        return e;
    bool sku_moved = strcmp(psku, d->sku) != 0;
    char from[64], to[64];
    if (sku_moved || !ptier[0] || !d->tier[0] || strcmp(ptier, d->tier) == 0) {
        snprintf(from, sizeof(from), "%s", psku);
        snprintf(to, sizeof(to), "%s", d->sku);
    } else {
        snprintf(from, sizeof(from), "%s", ptier);
        snprintf(to, sizeof(to), "%s", d->tier);
    }
    if (!sku_moved && strcmp(from, to) == 0) {
        /* The size alone: said as sizes. */
        snprintf(from, sizeof(from), "%lld GiB", (long long)psize);
        snprintf(to, sizeof(to), "%lld GiB", (long long)d->size_gib);
    }
    return note(p, TW_ARM_CH_SKU, r->id, d->name, from, to, err);
}

static void bind_lun(sqlite3_stmt *q, int i, int lun)
{
    if (lun >= 0)
        sqlite3_bind_int(q, i, lun);
    else
        sqlite3_bind_null(q, i);
}

/* ARM's disk I (found as R, or new when R is NULL) onto the VM. */
static enum tw_err put_disk(struct put *p, size_t i, struct tw_sh_arm_disk *r, struct tw_error *err)
{
    struct tw_sqlite *s = p->s;
    const struct tw_store_arm_disk *ad = &p->v->disks[i];
    const struct tw_disk *d = &ad->disk;
    const char *role = d->role == TW_DISK_OS ? "os" : "data";
    const char *lou = ad->last_ownership_update ? ad->last_ownership_update : "";
    char identity[600];
    tw_sh_identity_of("id:", d->managed_disk_id, identity, sizeof(identity));
    enum tw_err e;
    bool applied = false;
    if (!r) {
        STMT(ins, s, SQ_ARM_DISK_INSERT, err);
        tw_sq_text(ins, 1, identity, false);
        sqlite3_bind_int64(ins, 2, p->vm_id);
        tw_sq_text(ins, 3, d->name, false);
        tw_sq_text(ins, 4, role, false);
        bind_lun(ins, 5, d->lun);
        tw_sq_text(ins, 6, d->sku, false);
        sqlite3_bind_int64(ins, 7, d->size_gib);
        tw_sq_text(ins, 8, d->tier, true);
        tw_sq_text(ins, 9, tw_caching_name(d->caching), false);
        tw_sq_text(ins, 10, d->managed_disk_id, false);
        sqlite3_bind_int(ins, 11, d->write_accelerator);
        tw_sq_text(ins, 12, p->at, false);
        sqlite3_bind_int64(ins, 13, p->ms);
        sqlite3_bind_int64(ins, 14, (sqlite3_int64)i);
        tw_sq_text(ins, 15, lou, true);
        if ((e = run(s, ins, "storing a disk from ARM", err)) != TW_OK)
            return e;
        p->inv_changed = true;
        struct tw_sh_arm_disk fresh = {.id = sqlite3_last_insert_rowid(s->db), .vm_id = p->vm_id};
        bool newest;
        if ((e = put_history(p, &fresh, d, &newest, err)) != TW_OK)
            return e;
        if ((e = tw_sq_disk_attrs_observe(&s->base, fresh.id, &ad->attrs, p->at, p->ms,
                                          TW_OBS_ARM, &applied, err)) != TW_OK)
            return e;
        return note(p, TW_ARM_CH_DISK_NEW, fresh.id, d->name, "", d->sku, err);
    }
    r->listed = true;
    bool newest = true;
    if ((e = put_history(p, r, d, &newest, err)) != TW_OK)
        return e;
    /* The current SKU follows ARM's look when it is the newest; the rest
     * of the row (where it is attached, its place, caching) always. */
    const char *sku = newest ? d->sku : r->sku;
    const char *tier = newest ? (d->tier[0] ? d->tier : r->tier) : r->tier;
    int64_t size = newest ? d->size_gib : r->size_gib;
    /* What compliance reads of the disk (its inventory), then the rest. */
    bool inv_same = r->vm_id == p->vm_id && r->attached && strcmp(r->name, d->name) == 0 &&
                    strcmp(r->role, role) == 0 &&
                    (d->lun < 0 ? r->lun_null : !r->lun_null && r->lun == d->lun) &&
                    strcmp(r->sku, sku) == 0 && strcmp(r->tier, tier) == 0 &&
                    r->size_gib == size &&
                    strcmp(r->caching, tw_caching_name(d->caching)) == 0 &&
                    r->wa == d->write_accelerator;
    bool same = inv_same && strcmp(r->identity, identity) == 0 &&
                strcmp(r->managed_disk_id, d->managed_disk_id) == 0 && strcmp(r->lou, lou) == 0;
    if (!same) {
        if (!inv_same)
            p->inv_changed = true;
        if (r->vm_id != p->vm_id && r->attached && p->n_moved < TW_INV_MAX_DISKS)
            p->moved_from[p->n_moved++] = r->vm_id;
        STMT(up, s, SQ_ARM_DISK_UPDATE, err);
        sqlite3_bind_int64(up, 1, r->id);
        tw_sq_text(up, 2, identity, false);
        sqlite3_bind_int64(up, 3, p->vm_id);
        tw_sq_text(up, 4, d->name, false);
        tw_sq_text(up, 5, role, false);
        bind_lun(up, 6, d->lun);
        tw_sq_text(up, 7, sku, false);
        sqlite3_bind_int64(up, 8, size);
        tw_sq_text(up, 9, tier, true);
        tw_sq_text(up, 10, tw_caching_name(d->caching), false);
        tw_sq_text(up, 11, d->managed_disk_id, false);
        sqlite3_bind_int(up, 12, d->write_accelerator);
        tw_sq_text(up, 13, lou, true);
        tw_sq_text(up, 14, p->at, false);
        sqlite3_bind_int64(up, 15, p->ms);
        sqlite3_bind_int64(up, 16, (sqlite3_int64)i);
        if ((e = run(s, up, "updating a disk from ARM", err)) != TW_OK)
            return e;
    }
    bool attrs_same = tw_sh_arm_same_attrs(r, &ad->attrs);
    if ((e = tw_sq_disk_attrs_observe(&s->base, r->id, &ad->attrs, p->at, p->ms, TW_OBS_ARM,
                                      &applied, err)) != TW_OK)
        return e;
    if (applied && !attrs_same)
        return note(p, TW_ARM_CH_ATTRS, r->id, d->name, r->disk_state, ad->attrs.disk_state, err);
    return TW_OK;
}

/* The VM's disks: ARM's matched to the stored ones (by managed disk id on
 * the VM, else by name on the VM, else by id anywhere: a disk that moved
 * here), then those the VM had attached that ARM no longer lists
 * detached. */
static enum tw_err put_disks(struct put *p, struct tw_error *err)
{
    struct tw_sqlite *s = p->s;
    struct tw_sh_arm_disk *rows = NULL;
    size_t n = 0, cap = 0;
    enum tw_err e = TW_OK;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_ARM_VM_DISKS, err);
    if (!q)
        return err && err->code ? err->code : TW_EIO;
    sqlite3_bind_int64(q, 1, p->vm_id);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct tw_sh_arm_disk *nr = realloc(rows, ncap * sizeof(*nr));
            if (!nr) {
                sqlite3_reset(q);
                free(rows);
                return tw_error_set(err, TW_ENOMEM, "out of memory reading the VM's disks");
            }
            rows = nr;
            cap = ncap;
        }
        row_read(q, &rows[n++]);
    }
    if (rc != SQLITE_DONE) {
        free(rows);
        return tw_sq_fail(s, q, err, "reading the VM's disks");
    }
    sqlite3_reset(q);

    for (size_t i = 0; i < p->v->n_disks && e == TW_OK; i++) {
        const struct tw_disk *d = &p->v->disks[i].disk;
        char identity[600];
        tw_sh_identity_of("id:", d->managed_disk_id, identity, sizeof(identity));
        struct tw_sh_arm_disk *hit = NULL;
        for (size_t k = 0; k < n && !hit; k++)
            if (!rows[k].listed && strcmp(rows[k].identity, identity) == 0)
                hit = &rows[k];
        /* By its id anywhere (a disk that moved here) before any match by
         * name: the identity a name match would take may be that row's. */
        struct tw_sh_arm_disk moved;
        if (!hit) {
            sqlite3_stmt *f = tw_sq_stmt(s, SQ_ARM_DISK_FIND, err);
            if (!f) {
                e = err && err->code ? err->code : TW_EIO;
                break;
            }
            tw_sq_text(f, 1, identity, false);
            rc = sqlite3_step(f);
            if (rc == SQLITE_ROW) {
                row_read(f, &moved);
                hit = &moved;
            } else if (rc != SQLITE_DONE) {
                e = tw_sq_fail(s, f, err, "finding a disk from ARM");
                break;
            }
            sqlite3_reset(f);
        }
        /* An agent's disk without its id: the same name on the VM. */
        for (size_t k = 0; k < n && !hit; k++)
            if (!rows[k].listed && !rows[k].managed_disk_id[0] &&
                strcasecmp(rows[k].name, d->name) == 0)
                hit = &rows[k];
        /* One disk at a time under a savepoint: a row that conflicts
         * (another's identity) is said and skipped, not the whole VM. */
        size_t n_ch = p->n_ch, n_moved = p->n_moved;
        bool inv_changed = p->inv_changed;
        sqlite3_stmt *sp = tw_sq_stmt(s, SQ_SAVEPOINT_OP, err);
        if (!sp || (e = run(s, sp, "storing a disk from ARM", err)) != TW_OK) {
            e = e != TW_OK ? e : err && err->code ? err->code : TW_EIO;
            break;
        }
        struct tw_error de = {0};
        e = put_disk(p, i, hit, &de);
        if (e == TW_EINVAL) {
            sqlite3_exec(s->db, "ROLLBACK TO op", NULL, NULL, NULL);
            p->n_ch = n_ch;
            p->n_moved = n_moved;
            p->inv_changed = inv_changed;
            if (hit && hit != &moved)
                hit->listed = true; /* neither updated nor detached */
            e = note(p, TW_ARM_CH_SKIPPED, hit ? hit->id : 0, d->name, "",
                     "conflicts with a stored disk", err);
        } else if (e != TW_OK && err) {
            *err = de;
        }
        if (e == TW_OK) {
            sqlite3_stmt *rel = tw_sq_stmt(s, SQ_RELEASE_OP, err);
            e = rel ? run(s, rel, "storing a disk from ARM", err)
                    : err && err->code ? err->code : TW_EIO;
        }
    }
    for (size_t k = 0; k < n && e == TW_OK; k++) {
        if (rows[k].listed || !rows[k].attached)
            continue;
        /* A disk this look did not read (out of the listed scope) stays. */
        bool keep = false;
        for (size_t j = 0; j < p->v->n_keep && !keep; j++) {
            char kid[600];
            tw_sh_identity_of("id:", p->v->keep_ids[j] ? p->v->keep_ids[j] : "", kid, sizeof(kid));
            keep = strcmp(rows[k].identity, kid) == 0 ||
                   (rows[k].managed_disk_id[0] && p->v->keep_ids[j] &&
                    strcasecmp(rows[k].managed_disk_id, p->v->keep_ids[j]) == 0);
        }
        if (keep)
            continue;
        sqlite3_stmt *det = tw_sq_stmt(s, SQ_DISK_DETACH, err);
        if (!det) {
            e = err && err->code ? err->code : TW_EIO;
            break;
        }
        sqlite3_bind_int64(det, 1, rows[k].id);
        tw_sq_text(det, 2, p->at, false);
        sqlite3_bind_int64(det, 3, p->ms);
        tw_sq_text(det, 4, p->prev_seen_at[0] ? p->prev_seen_at : p->at, false);
        sqlite3_bind_int64(det, 5, p->prev_seen_at[0] ? p->prev_seen_ms : p->ms);
        e = run(s, det, "detaching a disk ARM no longer lists", err);
        p->inv_changed = true;
        if (e == TW_OK)
            e = note(p, TW_ARM_CH_DETACHED, rows[k].id, rows[k].name, rows[k].sku, "", err);
    }
    free(rows);
    return e;
}

enum tw_err tw_sq_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                             const char *observed_at, int64_t observed_ms,
                             void (*fn)(void *arg, const struct tw_store_arm_change *c),
                             void *arg, int64_t *vm_id, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    struct put p = {.s = s, .v = v, .at = observed_at, .ms = observed_ms};
    STMT(begin, s, SQ_BEGIN, err);
    enum tw_err e = run(s, begin, "starting to store a VM from ARM", err);
    if (e != TW_OK)
        return e;
    e = put_vm(&p, err);
    /* The disks before the power state: the VM's identity is ARM's now. */
    if (e == TW_OK)
        e = put_disks(&p, err);
    if (e == TW_OK)
        e = put_power(&p, err);
    /* Verdicts kept against the inventory the VM had (and that of a VM a
     * disk moved away from) no longer stand: they are judged again. */
    for (size_t i = 0; e == TW_OK && p.inv_changed && i <= p.n_moved; i++) {
        sqlite3_stmt *u = tw_sq_stmt(s, SQ_LATEST_UNKEEP, err);
        if (!u) {
            e = err && err->code ? err->code : TW_EIO;
            break;
        }
        sqlite3_bind_int64(u, 1, p.vm_id);
        sqlite3_bind_int64(u, 2, i < p.n_moved ? p.moved_from[i] : p.vm_id);
        e = run(s, u, "setting kept verdicts aside", err);
    }
    if (e == TW_OK) {
        sqlite3_stmt *c = tw_sq_stmt(s, SQ_COMMIT, err);
        e = c ? run(s, c, "committing a VM from ARM", err) : TW_EIO;
    }
    if (e != TW_OK) {
        if (!sqlite3_get_autocommit(s->db))
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        free(p.ch);
        return e;
    }
    if (vm_id)
        *vm_id = p.vm_id;
    for (size_t i = 0; fn && i < p.n_ch; i++) {
        const struct tw_sh_arm_change *c = &p.ch[i];
        struct tw_store_arm_change out = {.what = c->what, .vm_id = c->vm_id,
                                          .disk_id = c->disk_id, .vm = c->vm, .disk = c->disk,
                                          .from = c->from, .to = c->to};
        fn(arg, &out);
    }
    free(p.ch);
    return TW_OK;
}

/* ---- lookups ---- */

enum tw_err tw_sq_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                    struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    char identity[1024];
    tw_sh_identity_of("id:", id, identity, sizeof(identity));
    STMT(q, s, SQ_VM_BY_IDENTITY, err);
    tw_sq_text(q, 1, identity, false);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        *vm_id = sqlite3_column_int64(q, 0);
    else if (rc != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "finding a VM by its resource id");
    sqlite3_reset(q);
    if (rc == SQLITE_DONE)
        return tw_error_set(err, TW_ENOENT, "no VM with resource id %.300s is stored; run "
                                            "tierwise sync, or wait for its agent's report", id);
    return TW_OK;
}

enum tw_err tw_sq_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                             struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    STMT(q, s, SQ_VM_BY_NAME, err);
    tw_sq_text(q, 1, name, false);
    size_t found = 0;
    char groups[512] = "";
    size_t k = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (found++ == 0)
            *vm_id = sqlite3_column_int64(q, 0);
        const char *rg = (const char *)sqlite3_column_text(q, 1);
        if (k < sizeof(groups))
            k += (size_t)snprintf(groups + k, sizeof(groups) - k, "%s%s", found > 1 ? ", " : "",
                                  rg && rg[0] ? rg : "(no resource group)");
    }
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "finding a VM by its name");
    sqlite3_reset(q);
    if (found == 0)
        return tw_error_set(err, TW_ENOENT, "no VM named %.128s is stored; run tierwise sync, "
                                            "or check the name (tierwise reads names in any "
                                            "case)", name);
    if (found > 1) {
        *vm_id = 0;
        return tw_error_set(err, TW_EINVAL, "%zu VMs are named %.128s (resource groups %s); "
                            "name the VM by its resource id instead", found, name, groups);
    }
    return TW_OK;
}
