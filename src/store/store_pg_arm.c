/*
 * store_pg_arm.c - the fleet as ARM lists it, in the PostgreSQL store: one
 * VM and its disks per call, in one transaction (store.h "the fleet from
 * ARM"), and the lookups of a VM by resource id or by name.  The port of
 * store_arm.c, whose notes hold here: a VM seen by ARM and reported by an
 * agent is one row (found by its identity, else by its place), a disk by
 * its managed disk id, else by its name on the VM; histories get a row
 * only on a change; the changes are handed to the caller after the commit.
 *
 * Several backends at once: the ARM sync runs on one backend at a time
 * (its work lock), but a report ingested on another backend may write the
 * same VM and disks meanwhile.  What makes a put safe against it:
 *  - the VM's row is locked (SELECT ... FOR UPDATE) before anything is
 *    read from it, and the rows of its disks (and of a disk found by its
 *    id on another VM) likewise, so an ingest of that VM waits for this
 *    put to commit (or this put for the ingest), and each reads the rows
 *    as the other left them: no change is lost, no history row doubled;
 *  - a new VM is inserted with ON CONFLICT (identity) DO NOTHING: when an
 *    ingest inserted the same identity first, the put finds that row
 *    (locked) and goes on as for a VM it knew;
 *  - should the two lock their rows in opposite orders, PostgreSQL ends
 *    one for a deadlock, and that put runs again whole (up to 3 times),
 *    its changes noted afresh.
 */
#include "store/store_pg.h"
#include "store/store_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PG(st) ((struct tw_pg *)(st))

#define TRIES 3

/* ---- the statements ---- */

/* A VM and a disk as a put compares them (the columns of store_arm.c's). */
#define ARM_VM                                                                                     \
    "SELECT id, identity, name, resource_id, location, vm_size, tags, last_report_id, "            \
    "last_report_at, last_report_ms, power_state, power_state_ms, arm_seen_at, arm_seen_ms "       \
    "FROM vms"
#define ARM_DISK                                                                                   \
    "SELECT id, identity, vm_id, name, role, lun, sku, tier, size_gib, caching, "                  \
    "managed_disk_id, write_accelerator, detached_ms, max_shares, bursting, disk_state, "          \
    "last_ownership_update FROM disks"

TW_PG_STMT(q_vm_find, ARM_VM " WHERE identity = $1::text FOR UPDATE");
/* A VM's place without regard to case (SQLite's NOCASE: lower() folds
 * ASCII only under "C"). */
TW_PG_STMT(q_vm_find_place,
           ARM_VM " WHERE lower(name) = lower($1::text COLLATE \"C\") AND "
                  "lower(resource_group) = lower($2::text COLLATE \"C\") AND "
                  "lower(subscription_id) = lower($3::text COLLATE \"C\") AND "
                  "(resource_id = '' OR lower(resource_id) = lower($4::text COLLATE \"C\")) "
                  "ORDER BY id LIMIT 1 FOR UPDATE");
TW_PG_STMT(q_vm_insert,
           "INSERT INTO vms(identity, name, resource_id, subscription_id, resource_group, "
           "location, vm_size, tags, last_report_id, last_report_at, last_report_ms, "
           "arm_seen_at, arm_seen_ms) VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, "
           "$6::text, $7::text, $8::text, '', '', 0, $9::text, $10::bigint) "
           "ON CONFLICT (identity) DO NOTHING RETURNING id");
TW_PG_STMT(q_vm_update,
           "UPDATE vms SET identity = $2::text, resource_id = $3::text, name = $4::text, "
           "location = $5::text, vm_size = $6::text, tags = $7::text, arm_seen_at = $8::text, "
           "arm_seen_ms = $9::bigint WHERE id = $1::bigint");
TW_PG_STMT(q_power_obs, "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) "
                        "VALUES ($1::bigint, $2::text, $3::bigint, $4::text, $5::text)");
TW_PG_STMT(q_vm_power, "UPDATE vms SET power_state = $2::text, power_state_at = $3::text, "
                       "power_state_ms = $4::bigint WHERE id = $1::bigint AND "
                       "(power_state_ms IS NULL OR power_state_ms <= $4::bigint)");
TW_PG_STMT(q_vm_disks, ARM_DISK " WHERE vm_id = $1::bigint ORDER BY id FOR UPDATE");
TW_PG_STMT(q_disk_find, ARM_DISK " WHERE identity = $1::text FOR UPDATE");
TW_PG_STMT(q_disk_insert,
           "INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, tier, caching, "
           "managed_disk_id, write_accelerator, last_seen_at, last_seen_ms, position, "
           "last_ownership_update) VALUES ($1::text, $2::bigint, $3::text, $4::text, "
           "$5::bigint, $6::text, $7::bigint, $8::text, $9::text, $10::text, $11::bigint, "
           "$12::text, $13::bigint, $14::bigint, $15::text) RETURNING id");
/* The position: kept while the disk stays on its VM, ARM's when it moves
 * here (vm_id on the right is the row's before the update). */
TW_PG_STMT(q_disk_update,
           "UPDATE disks SET identity = $2::text, vm_id = $3::bigint, name = $4::text, "
           "role = $5::text, lun = $6::bigint, sku = $7::text, size_gib = $8::bigint, "
           "tier = $9::text, caching = $10::text, managed_disk_id = $11::text, "
           "write_accelerator = $12::bigint, last_ownership_update = $13::text, "
           "last_seen_at = $14::text, last_seen_ms = $15::bigint, position = CASE WHEN "
           "vm_id = $3::bigint THEN coalesce(position, $16::bigint) ELSE $16::bigint END, "
           "detached_at = NULL, detached_ms = NULL WHERE id = $1::bigint");
TW_PG_STMT(q_disk_detach, "UPDATE disks SET detached_at = $2::text, detached_ms = $3::bigint, "
                          "last_seen_at = $4::text, last_seen_ms = $5::bigint "
                          "WHERE id = $1::bigint");
TW_PG_STMT(q_hist_prev, "SELECT sku, tier, size_gib FROM disk_sku_history WHERE disk_id = "
                        "$1::bigint AND observed_ms <= $2::bigint ORDER BY observed_ms DESC, id "
                        "DESC LIMIT 1");
TW_PG_STMT(q_hist_next, "SELECT id, sku, tier, size_gib FROM disk_sku_history WHERE disk_id = "
                        "$1::bigint AND observed_ms > $2::bigint ORDER BY observed_ms, id "
                        "LIMIT 1");
TW_PG_STMT(q_hist_obs, "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, "
                       "tier, size_gib, source) VALUES ($1::bigint, $2::text, $3::bigint, "
                       "$4::text, $5::text, $6::bigint, $7::text)");
TW_PG_STMT(q_latest_unkeep, "UPDATE result_latest SET verdict_report = NULL WHERE vm_id IN "
                            "($1::bigint, $2::bigint)");
TW_PG_STMT(q_vm_by_identity, "SELECT id FROM vms WHERE identity = $1::text");
TW_PG_STMT(q_vm_by_name, "SELECT id, resource_group, subscription_id FROM vms WHERE "
                         "lower(name) = lower($1::text COLLATE \"C\") ORDER BY id");

/* ---- the changes, kept until the commit ---- */

struct put {
    struct tw_pg *pg;
    const struct tw_store_arm_vm *v;
    const char *at;
    int64_t ms;
    int64_t vm_id;
    char prev_seen_at[40]; /* when the VM's disks were last seen before this put */
    int64_t prev_seen_ms;
    struct tw_sh_arm_change *ch;
    size_t n_ch, cap_ch;
    bool inv_changed;                     /* the VM's disks as compliance reads them changed */
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

/* The VM's row found by its identity, else by its place, locked (*R
 * holds it, NULL when there is none). */
static enum tw_err vm_find(struct put *p, const char *identity, PGresult **r, struct tw_error *err)
{
    const struct tw_vm *vm = p->v->vm;
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, identity);
    /* An agent's first report of this VM on another backend, stored under
     * an identity of its own, is looked up by place too: one waits for
     * the other (tw_pg_lock_place), so the VM gets one row. */
    enum tw_err e = tw_pg_lock_place(p->pg, vm->name, vm->resource_group, vm->subscription_id, err);
    if (e == TW_OK)
        e = tw_pg_run(p->pg, &q_vm_find, &q, r, "finding ARM's VM in the store", err);
    if (e != TW_OK || PQntuples(*r) > 0)
        return e;
    PQclear(*r);
    *r = NULL;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, vm->name);
    tw_pg_p_text(&q, vm->resource_group);
    tw_pg_p_text(&q, vm->subscription_id);
    tw_pg_p_text(&q, vm->resource_id);
    e = tw_pg_run(p->pg, &q_vm_find_place, &q, r, "finding ARM's VM in the store", err);
    if (e == TW_OK && PQntuples(*r) == 0) {
        PQclear(*r);
        *r = NULL;
    }
    return e;
}

/* Finds the VM (by identity, else by its place), creating it when new, and
 * brings its fields to ARM's when ARM's look is newer than its report. */
static enum tw_err put_vm(struct put *p, struct tw_error *err)
{
    struct tw_pg *pg = p->pg;
    const struct tw_vm *vm = p->v->vm;
    char identity[1024];
    tw_sh_identity_of("id:", vm->resource_id, identity, sizeof(identity));
    char *tags = tw_sh_tags_json(vm);
    if (!tags)
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");

    PGresult *r = NULL;
    enum tw_err e = TW_OK;
    /* Twice at most: a VM an ingest inserted between our look and our
     * insert is found the second time. */
    for (int round = 0; round < 2 && !r; round++) {
        if ((e = vm_find(p, identity, &r, err)) != TW_OK) {
            free(tags);
            return e;
        }
        if (r)
            break;
        struct tw_pg_params q;
        tw_pg_p_init(&q);
        tw_pg_p_text(&q, identity);
        tw_pg_p_text(&q, vm->name);
        tw_pg_p_text(&q, vm->resource_id);
        tw_pg_p_text(&q, vm->subscription_id);
        tw_pg_p_text(&q, vm->resource_group);
        tw_pg_p_text(&q, vm->location);
        tw_pg_p_text(&q, vm->vm_size);
        tw_pg_p_text(&q, tags);
        tw_pg_p_text(&q, p->at);
        tw_pg_p_int(&q, p->ms);
        PGresult *ins = NULL;
        if ((e = tw_pg_run(pg, &q_vm_insert, &q, &ins, "storing a VM from ARM", err)) != TW_OK) {
            free(tags);
            return e;
        }
        if (PQntuples(ins) == 1) {
            p->vm_id = tw_pg_int(ins, 0, 0);
            PQclear(ins);
            free(tags);
            p->prev_seen_at[0] = '\0';
            p->prev_seen_ms = 0;
            return note(p, TW_ARM_CH_VM_NEW, 0, NULL, "", vm->vm_size, err);
        }
        PQclear(ins);
    }
    if (!r) {
        free(tags);
        return tw_error_set(err, TW_EIO,
                            "%s: a VM with identity %.300s was neither found nor "
                            "stored; run the sync again",
                            pg->label, identity);
    }
    p->vm_id = tw_pg_int(r, 0, 0);
    bool reported = tw_pg_text(r, 0, 7)[0] != '\0';
    int64_t report_ms = tw_pg_int(r, 0, 9);
    /* Where its disks were last seen: its newest report, else the last
     * sync that listed it. */
    if (reported) {
        tw_pg_copy(p->prev_seen_at, sizeof(p->prev_seen_at), r, 0, 8);
        p->prev_seen_ms = report_ms;
    } else {
        tw_pg_copy(p->prev_seen_at, sizeof(p->prev_seen_at), r, 0, 12);
        p->prev_seen_ms = tw_pg_int(r, 0, 13);
    }
    /* A report newer than ARM's look keeps the fields it gave. */
    bool arm_newer = !reported || p->ms >= report_ms;
    char old_size[64], old_name[128], old_loc[64];
    tw_pg_copy(old_size, sizeof(old_size), r, 0, 5);
    tw_pg_copy(old_name, sizeof(old_name), r, 0, 2);
    tw_pg_copy(old_loc, sizeof(old_loc), r, 0, 4);
    const char *old_tags = tw_pg_null(r, 0, 6) ? "{}" : tw_pg_text(r, 0, 6);
    bool differs =
        arm_newer && (strcmp(old_size, vm->vm_size) != 0 || strcmp(old_name, vm->name) != 0 ||
                      strcmp(old_loc, vm->location) != 0 || strcmp(old_tags, tags) != 0);
    char *old_tags_copy = strdup(old_tags);
    PQclear(r);
    if (!old_tags_copy) {
        free(tags);
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
    }

    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, p->vm_id);
    tw_pg_p_text(&q, identity);
    tw_pg_p_text(&q, vm->resource_id);
    tw_pg_p_text(&q, arm_newer ? vm->name : old_name);
    tw_pg_p_text(&q, arm_newer ? vm->location : old_loc);
    tw_pg_p_text(&q, arm_newer ? vm->vm_size : old_size);
    tw_pg_p_text(&q, arm_newer ? tags : old_tags_copy);
    tw_pg_p_text(&q, p->at);
    tw_pg_p_int(&q, p->ms);
    e = tw_pg_run(pg, &q_vm_update, &q, NULL, "updating a VM from ARM", err);
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
    struct tw_pg *pg = p->pg;
    char identity[1024];
    tw_sh_identity_of("id:", p->v->vm->resource_id, identity, sizeof(identity));
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, identity);
    PGresult *r = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vm_find, &q, &r, "reading the VM's power state", err);
    if (e != TW_OK)
        return e;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return tw_error_set(err, TW_EIO,
                            "%s: reading the VM's power state: the VM %.300s is "
                            "not stored",
                            pg->label, identity);
    }
    char old[32];
    tw_pg_copy(old, sizeof(old), r, 0, 10);
    bool known = !tw_pg_null(r, 0, 11);
    int64_t old_ms = tw_pg_int(r, 0, 11);
    PQclear(r);
    if (known && (strcmp(old, state) == 0 || old_ms > p->ms))
        return TW_OK;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, p->vm_id);
    tw_pg_p_text(&q, p->at);
    tw_pg_p_int(&q, p->ms);
    tw_pg_p_text(&q, state);
    tw_pg_p_text(&q, "arm");
    if ((e = tw_pg_run(pg, &q_power_obs, &q, NULL, "storing a power state from ARM", err)) != TW_OK)
        return e;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, p->vm_id);
    tw_pg_p_text(&q, state);
    tw_pg_p_text(&q, p->at);
    tw_pg_p_int(&q, p->ms);
    if ((e = tw_pg_run(pg, &q_vm_power, &q, NULL, "updating the VM's power state", err)) != TW_OK)
        return e;
    return note(p, TW_ARM_CH_POWER, 0, NULL, old, state, err);
}

/* ---- disks ---- */

static void row_read(const PGresult *q, int k, struct tw_sh_arm_disk *r)
{
    memset(r, 0, sizeof(*r));
    r->id = tw_pg_int(q, k, 0);
    tw_pg_copy(r->identity, sizeof(r->identity), q, k, 1);
    r->vm_id = tw_pg_int(q, k, 2);
    tw_pg_copy(r->name, sizeof(r->name), q, k, 3);
    tw_pg_copy(r->role, sizeof(r->role), q, k, 4);
    r->lun_null = tw_pg_null(q, k, 5);
    r->lun = (int)tw_pg_int(q, k, 5);
    tw_pg_copy(r->sku, sizeof(r->sku), q, k, 6);
    tw_pg_copy(r->tier, sizeof(r->tier), q, k, 7);
    r->size_gib = tw_pg_int(q, k, 8);
    tw_pg_copy(r->caching, sizeof(r->caching), q, k, 9);
    tw_pg_copy(r->managed_disk_id, sizeof(r->managed_disk_id), q, k, 10);
    r->wa = tw_pg_int(q, k, 11) != 0;
    r->attached = tw_pg_null(q, k, 12);
    r->shares_null = tw_pg_null(q, k, 13);
    r->max_shares = tw_pg_int(q, k, 13);
    r->bursting_null = tw_pg_null(q, k, 14);
    r->bursting = (int)tw_pg_int(q, k, 14);
    tw_pg_copy(r->disk_state, sizeof(r->disk_state), q, k, 15);
    tw_pg_copy(r->lou, sizeof(r->lou), q, k, 16);
}

/* The SKU history at ARM's look: a row when it differs from the observation
 * before; *NEWEST whether nothing later is known (the disk's current
 * fields may then follow ARM's). */
static enum tw_err put_history(struct put *p, const struct tw_sh_arm_disk *r,
                               const struct tw_disk *d, bool *newest, struct tw_error *err)
{
    struct tw_pg *pg = p->pg;
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, r->id);
    tw_pg_p_int(&q, p->ms);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_hist_prev, &q, &res, "reading a disk's SKU history", err);
    if (e != TW_OK)
        return e;
    char psku[32] = "", ptier[16] = "";
    int64_t psize = 0;
    bool had = PQntuples(res) == 1;
    if (had) {
        tw_pg_copy(psku, sizeof(psku), res, 0, 0);
        tw_pg_copy(ptier, sizeof(ptier), res, 0, 1);
        psize = tw_pg_int(res, 0, 2);
    }
    PQclear(res);
    if ((e = tw_pg_run(pg, &q_hist_next, &q, &res, "reading a disk's SKU history", err)) != TW_OK)
        return e;
    *newest = PQntuples(res) == 0;
    PQclear(res);
    if (had && tw_sh_same_sku(psku, ptier, psize, d->sku, d->tier, d->size_gib))
        return TW_OK;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, r->id);
    tw_pg_p_text(&q, p->at);
    tw_pg_p_int(&q, p->ms);
    tw_pg_p_text(&q, d->sku);
    tw_pg_p_text0(&q, d->tier);
    tw_pg_p_int(&q, d->size_gib);
    tw_pg_p_text(&q, "arm");
    e = tw_pg_run(pg, &q_hist_obs, &q, NULL, "recording a disk's SKU from ARM", err);
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

static void p_lun(struct tw_pg_params *q, int lun)
{
    if (lun >= 0)
        tw_pg_p_int(q, lun);
    else
        tw_pg_p_null(q);
}

/* ARM's disk I (found as R, or new when R is NULL) onto the VM. */
static enum tw_err put_disk(struct put *p, size_t i, struct tw_sh_arm_disk *r, struct tw_error *err)
{
    struct tw_pg *pg = p->pg;
    const struct tw_store_arm_disk *ad = &p->v->disks[i];
    const struct tw_disk *d = &ad->disk;
    const char *role = d->role == TW_DISK_OS ? "os" : "data";
    const char *lou = ad->last_ownership_update ? ad->last_ownership_update : "";
    char identity[600];
    tw_sh_identity_of("id:", d->managed_disk_id, identity, sizeof(identity));
    enum tw_err e;
    bool applied = false;
    struct tw_pg_params q;
    if (!r) {
        tw_pg_p_init(&q);
        tw_pg_p_text(&q, identity);
        tw_pg_p_int(&q, p->vm_id);
        tw_pg_p_text(&q, d->name);
        tw_pg_p_text(&q, role);
        p_lun(&q, d->lun);
        tw_pg_p_text(&q, d->sku);
        tw_pg_p_int(&q, d->size_gib);
        tw_pg_p_text0(&q, d->tier);
        tw_pg_p_text(&q, tw_caching_name(d->caching));
        tw_pg_p_text(&q, d->managed_disk_id);
        tw_pg_p_int(&q, d->write_accelerator ? 1 : 0);
        tw_pg_p_text(&q, p->at);
        tw_pg_p_int(&q, p->ms);
        tw_pg_p_int(&q, (int64_t)i);
        tw_pg_p_text0(&q, lou);
        PGresult *res = NULL;
        if ((e = tw_pg_run(pg, &q_disk_insert, &q, &res, "storing a disk from ARM", err)) != TW_OK)
            return e;
        struct tw_sh_arm_disk fresh = {.id = PQntuples(res) == 1 ? tw_pg_int(res, 0, 0) : 0,
                                       .vm_id = p->vm_id};
        PQclear(res);
        p->inv_changed = true;
        bool newest;
        if ((e = put_history(p, &fresh, d, &newest, err)) != TW_OK)
            return e;
        if ((e = tw_pg_disk_attrs_observe(&pg->base, fresh.id, &ad->attrs, p->at, p->ms, TW_OBS_ARM,
                                          &applied, err)) != TW_OK)
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
                    strcmp(r->sku, sku) == 0 && strcmp(r->tier, tier) == 0 && r->size_gib == size &&
                    strcmp(r->caching, tw_caching_name(d->caching)) == 0 &&
                    r->wa == d->write_accelerator;
    bool same = inv_same && strcmp(r->identity, identity) == 0 &&
                strcmp(r->managed_disk_id, d->managed_disk_id) == 0 && strcmp(r->lou, lou) == 0;
    if (!same) {
        if (!inv_same)
            p->inv_changed = true;
        if (r->vm_id != p->vm_id && r->attached && p->n_moved < TW_INV_MAX_DISKS)
            p->moved_from[p->n_moved++] = r->vm_id;
        tw_pg_p_init(&q);
        tw_pg_p_int(&q, r->id);
        tw_pg_p_text(&q, identity);
        tw_pg_p_int(&q, p->vm_id);
        tw_pg_p_text(&q, d->name);
        tw_pg_p_text(&q, role);
        p_lun(&q, d->lun);
        tw_pg_p_text(&q, sku);
        tw_pg_p_int(&q, size);
        tw_pg_p_text0(&q, tier);
        tw_pg_p_text(&q, tw_caching_name(d->caching));
        tw_pg_p_text(&q, d->managed_disk_id);
        tw_pg_p_int(&q, d->write_accelerator ? 1 : 0);
        tw_pg_p_text0(&q, lou);
        tw_pg_p_text(&q, p->at);
        tw_pg_p_int(&q, p->ms);
        tw_pg_p_int(&q, (int64_t)i);
        if ((e = tw_pg_run(pg, &q_disk_update, &q, NULL, "updating a disk from ARM", err)) != TW_OK)
            return e;
    }
    bool attrs_same = tw_sh_arm_same_attrs(r, &ad->attrs);
    if ((e = tw_pg_disk_attrs_observe(&pg->base, r->id, &ad->attrs, p->at, p->ms, TW_OBS_ARM,
                                      &applied, err)) != TW_OK)
        return e;
    if (applied && !attrs_same)
        return note(p, TW_ARM_CH_ATTRS, r->id, d->name, r->disk_state, ad->attrs.disk_state, err);
    return TW_OK;
}

/* The disk whose identity is IDENTITY anywhere, locked, into *OUT
 * (*FOUND whether there is one). */
static enum tw_err disk_find(struct put *p, const char *identity, struct tw_sh_arm_disk *out,
                             bool *found, struct tw_error *err)
{
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, identity);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(p->pg, &q_disk_find, &q, &res, "finding a disk from ARM", err);
    if (e != TW_OK)
        return e;
    *found = PQntuples(res) == 1;
    if (*found)
        row_read(res, 0, out);
    PQclear(res);
    return TW_OK;
}

/* The VM's disks: ARM's matched to the stored ones (by managed disk id on
 * the VM, else by id anywhere: a disk that moved here, else by name on the
 * VM), then those the VM had attached that ARM no longer lists
 * detached. */
static enum tw_err put_disks(struct put *p, struct tw_error *err)
{
    struct tw_pg *pg = p->pg;
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_int(&q, p->vm_id);
    PGresult *res = NULL;
    enum tw_err e = tw_pg_run(pg, &q_vm_disks, &q, &res, "reading the VM's disks", err);
    if (e != TW_OK)
        return e;
    size_t n = (size_t)PQntuples(res);
    struct tw_sh_arm_disk *rows = n ? calloc(n, sizeof(*rows)) : NULL;
    if (n && !rows) {
        PQclear(res);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the VM's disks");
    }
    for (size_t k = 0; k < n; k++)
        row_read(res, (int)k, &rows[k]);
    PQclear(res);

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
            bool found = false;
            if ((e = disk_find(p, identity, &moved, &found, err)) != TW_OK)
                break;
            if (found)
                hit = &moved;
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
        if ((e = tw_pg_begin(pg, "storing a disk from ARM", err)) != TW_OK)
            break;
        struct tw_error de = {0};
        e = put_disk(p, i, hit, &de);
        if (e == TW_EINVAL) {
            tw_pg_rollback(pg);
            p->n_ch = n_ch;
            p->n_moved = n_moved;
            p->inv_changed = inv_changed;
            if (hit && hit != &moved)
                hit->listed = true; /* neither updated nor detached */
            e = note(p, TW_ARM_CH_SKIPPED, hit ? hit->id : 0, d->name, "",
                     "conflicts with a stored disk", err);
        } else if (e != TW_OK) {
            tw_pg_rollback(pg);
            if (err)
                *err = de;
        } else {
            e = tw_pg_commit(pg, "storing a disk from ARM", err);
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
        tw_pg_p_init(&q);
        tw_pg_p_int(&q, rows[k].id);
        tw_pg_p_text(&q, p->at);
        tw_pg_p_int(&q, p->ms);
        tw_pg_p_text(&q, p->prev_seen_at[0] ? p->prev_seen_at : p->at);
        tw_pg_p_int(&q, p->prev_seen_at[0] ? p->prev_seen_ms : p->ms);
        e = tw_pg_run(pg, &q_disk_detach, &q, NULL, "detaching a disk ARM no longer lists", err);
        p->inv_changed = true;
        if (e == TW_OK)
            e = note(p, TW_ARM_CH_DETACHED, rows[k].id, rows[k].name, rows[k].sku, "", err);
    }
    free(rows);
    return e;
}

/* One put's transaction: the VM, its disks, its power state, and the
 * verdicts set aside; committed by the caller. */
static enum tw_err put_all(struct put *p, struct tw_error *err)
{
    enum tw_err e = put_vm(p, err);
    /* The disks before the power state: the VM's identity is ARM's now. */
    if (e == TW_OK)
        e = put_disks(p, err);
    if (e == TW_OK)
        e = put_power(p, err);
    /* Verdicts kept against the inventory the VM had (and that of a VM a
     * disk moved away from) no longer stand: they are judged again. */
    for (size_t i = 0; e == TW_OK && p->inv_changed && i <= p->n_moved; i++) {
        struct tw_pg_params q;
        tw_pg_p_init(&q);
        tw_pg_p_int(&q, p->vm_id);
        tw_pg_p_int(&q, i < p->n_moved ? p->moved_from[i] : p->vm_id);
        e = tw_pg_run(p->pg, &q_latest_unkeep, &q, NULL, "setting kept verdicts aside", err);
    }
    return e;
}

enum tw_err tw_pg_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                             const char *observed_at, int64_t observed_ms,
                             void (*fn)(void *arg, const struct tw_store_arm_change *c), void *arg,
                             int64_t *vm_id, struct tw_error *err)
{
    struct tw_pg *pg = PG(st);
    struct put p = {.pg = pg, .v = v, .at = observed_at, .ms = observed_ms};
    enum tw_err e = TW_OK;
    for (int attempt = 1;; attempt++) {
        bool outer = pg->tx_depth == 0;
        /* A run again starts afresh: what the first noted was undone. */
        p.vm_id = 0;
        p.prev_seen_at[0] = '\0';
        p.prev_seen_ms = 0;
        p.n_ch = 0;
        p.inv_changed = false;
        p.n_moved = 0;
        e = tw_pg_begin(pg, "starting to store a VM from ARM", err);
        if (e != TW_OK)
            break;
        e = put_all(&p, err);
        if (e == TW_OK)
            e = tw_pg_commit(pg, "committing a VM from ARM", err);
        else
            tw_pg_rollback(pg);
        if (e == TW_OK || !outer || attempt >= TRIES || !tw_pg_retryable(pg))
            break;
        tw_error_clear(err);
    }
    if (e != TW_OK) {
        free(p.ch);
        return e;
    }
    if (vm_id)
        *vm_id = p.vm_id;
    for (size_t i = 0; fn && i < p.n_ch; i++) {
        const struct tw_sh_arm_change *c = &p.ch[i];
        struct tw_store_arm_change out = {.what = c->what,
                                          .vm_id = c->vm_id,
                                          .disk_id = c->disk_id,
                                          .vm = c->vm,
                                          .disk = c->disk,
                                          .from = c->from,
                                          .to = c->to};
        fn(arg, &out);
    }
    free(p.ch);
    return TW_OK;
}

/* ---- lookups ---- */

enum tw_err tw_pg_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                    struct tw_error *err)
{
    char identity[1024];
    tw_sh_identity_of("id:", id, identity, sizeof(identity));
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, identity);
    PGresult *r = NULL;
    enum tw_err e =
        tw_pg_run(PG(st), &q_vm_by_identity, &q, &r, "finding a VM by its resource id", err);
    if (e != TW_OK)
        return e;
    bool found = PQntuples(r) > 0;
    if (found)
        *vm_id = tw_pg_int(r, 0, 0);
    PQclear(r);
    if (!found)
        return tw_error_set(err, TW_ENOENT,
                            "no VM with resource id %.300s is stored; run "
                            "tierwise sync, or wait for its agent's report",
                            id);
    return TW_OK;
}

enum tw_err tw_pg_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                             struct tw_error *err)
{
    struct tw_pg_params q;
    tw_pg_p_init(&q);
    tw_pg_p_text(&q, name);
    PGresult *r = NULL;
    enum tw_err e = tw_pg_run(PG(st), &q_vm_by_name, &q, &r, "finding a VM by its name", err);
    if (e != TW_OK)
        return e;
    size_t found = (size_t)PQntuples(r);
    char groups[512] = "";
    size_t k = 0;
    for (size_t i = 0; i < found; i++) {
        if (i == 0)
            *vm_id = tw_pg_int(r, 0, 0);
        const char *rg = tw_pg_text(r, (int)i, 1);
        if (k < sizeof(groups))
            k += (size_t)snprintf(groups + k, sizeof(groups) - k, "%s%s", i > 0 ? ", " : "",
                                  rg[0] ? rg : "(no resource group)");
    }
    PQclear(r);
    if (found == 0)
        return tw_error_set(err, TW_ENOENT,
                            "no VM named %.128s is stored; run tierwise sync, "
                            "or check the name (tierwise reads names in any "
                            "case)",
                            name);
    if (found > 1) {
        *vm_id = 0;
        return tw_error_set(err, TW_EINVAL,
                            "%zu VMs are named %.128s (resource groups %s); "
                            "name the VM by its resource id instead",
                            found, name, groups);
    }
    return TW_OK;
}
