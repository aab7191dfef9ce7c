/*
 * store_ingest.c - storing reports in the SQLite store.
 *
 * A batch is one write transaction (one fsync of the WAL at COMMIT), each
 * report inside it a savepoint, so a report that fails is rolled back
 * alone.  A report carries the whole VM as the agent saw it at created_at:
 * the current VM and disk rows follow the newest report only (agents spool
 * reports and deliver them late), while results, power states and the SKU
 * history keep every report, late ones put in their place in time.
 */
#include "store/store_shared.h"
#include "store/store_sqlite.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ingest {
    struct tw_sqlite *s;
    const struct tw_report *r;
    const char *body;           /* the raw report, or our own rendering of it */
    size_t body_len;
    const char *received_at;
    const struct tw_store_judged *judged; /* the results' verdicts, or NULL */
    int64_t created_ms;         /* created_at as sent */
    int64_t ms;                 /* created_at bounded by the clock allowance: the order */
    int64_t limit_ms;           /* received_at + TW_STORE_CLOCK_AHEAD_MS */
    int64_t vm_id;
    bool vm_existed, newest;    /* newest: not older than what the VM row shows */
    bool inv_partial;           /* a disk of the report stays with another VM (or detached):
                                 * the VM's stored inventory is not the report's */
    int64_t prev_ms;            /* the VM's newest report before this one */
    char prev_at[32];
    int64_t disk_ids[TW_INV_MAX_DISKS];
    struct tw_span *records;    /* each result's text in BODY, or NULL */
};

#define STMT(q, s, id, err)                                  \
    sqlite3_stmt *q = tw_sq_stmt((s), (id), (err));          \
    if (!q)                                                  \
        return (err) && (err)->code ? (err)->code : TW_EIO

/* Steps Q to its end and resets it. */
static enum tw_err run(struct tw_sqlite *s, sqlite3_stmt *q, const char *what,
                       struct tw_error *err)
{
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, what);
    sqlite3_reset(q);
    return TW_OK;
}

/* ---- the VM ---- */

static enum tw_err bind_vm(sqlite3_stmt *q, const struct ingest *in, const char *tags)
{
    const struct tw_vm *vm = &in->r->inv.vm;
    tw_sq_text(q, 2, vm->name, false);
    tw_sq_text(q, 3, vm->resource_id, false);
    tw_sq_text(q, 4, vm->subscription_id, false);
    tw_sq_text(q, 5, vm->resource_group, false);
    tw_sq_text(q, 6, vm->location, false);
    tw_sq_text(q, 7, vm->vm_size, false);
    tw_sq_text(q, 8, tags, false);
    tw_sq_text(q, 9, in->r->id, false);
    tw_sq_text(q, 10, in->r->created_at, false);
    sqlite3_bind_int64(q, 11, in->ms);
    tw_sq_text(q, 12, in->r->power_state, true);
    return TW_OK;
}

static enum tw_err put_vm(struct ingest *in, struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    char identity[1024];
    tw_sh_vm_identity(&in->r->inv.vm, identity, sizeof(identity));
    STMT(find, s, SQ_VM_FIND, err);
    tw_sq_text(find, 1, identity, false);
    int rc = sqlite3_step(find);
    bool by_place = false;
    if (rc == SQLITE_DONE) {
        /* Not by its identity: a VM stored by ARM (or by a report that knew
         * its id) has the same name, group and subscription, and no other
         * resource id. */
        by_place = true;
        sqlite3_reset(find);
        const struct tw_vm *vm = &in->r->inv.vm;
        find = tw_sq_stmt(s, SQ_VM_FIND_PLACE, err);
        if (!find)
            return err && err->code ? err->code : TW_EIO;
        tw_sq_text(find, 1, vm->name, false);
        tw_sq_text(find, 2, vm->resource_group, false);
        tw_sq_text(find, 3, vm->subscription_id, false);
        tw_sq_text(find, 4, vm->resource_id, false);
        rc = vm->subscription_id[0] && vm->resource_group[0] ? sqlite3_step(find) : SQLITE_DONE;
    }
    if (rc == SQLITE_ROW) {
        in->vm_existed = true;
        in->vm_id = sqlite3_column_int64(find, 0);
        in->prev_ms = sqlite3_column_int64(find, 1);
        snprintf(in->prev_at, sizeof(in->prev_at), "%s",
                 (const char *)sqlite3_column_text(find, 2));
        in->newest = in->ms >= in->prev_ms;
    } else if (rc != SQLITE_DONE) {
        return tw_sq_fail(s, find, err, "finding the report's VM");
    }
    sqlite3_reset(find);
    if (in->vm_existed && by_place && in->r->inv.vm.resource_id[0]) {
        /* Found by its place, and the report knows its id: the id is its
         * identity from now on (what a lookup by resource id finds). */
        STMT(idq, s, SQ_VM_SET_IDENTITY, err);
        sqlite3_bind_int64(idq, 1, in->vm_id);
        tw_sq_text(idq, 2, identity, false);
        enum tw_err ie = run(s, idq, "giving the VM its resource id", err);
        if (ie != TW_OK)
            return ie;
    }
    if (in->vm_existed && !in->newest)
        return TW_OK;
    in->newest = true;

    char *tags = tw_sh_tags_json(&in->r->inv.vm);
    if (!tags)
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
    enum tw_err e;
    if (in->vm_existed) {
        STMT(up, s, SQ_VM_UPDATE, err);
        sqlite3_bind_int64(up, 1, in->vm_id);
        bind_vm(up, in, tags);
        e = run(s, up, "updating the VM", err);
    } else {
        STMT(ins, s, SQ_VM_INSERT, err);
        tw_sq_text(ins, 1, identity, false);
        bind_vm(ins, in, tags);
        e = run(s, ins, "storing a new VM", err);
        in->vm_id = sqlite3_last_insert_rowid(s->db);
    }
    free(tags);
    return e;
}

/* ---- disks and their SKU history ---- */

struct sku_obs {
    const char *sku, *tier;
    int64_t size;
};

static bool text_is(sqlite3_stmt *q, int col, const char *want)
{
    const char *t = (const char *)sqlite3_column_text(q, col);
    return strcmp(t ? t : "", want) == 0;
}

/* Whether row Q's (SKU, tier, size) at COL is observation O.  A tier not
 * known on one side is no change: agents before the tier in use was filled
 * in sent none (IMDS gives none), and neither the first report of an
 * upgraded agent nor a late one of the agent before must read as a tier
 * change of every disk of the fleet. */
static bool same_obs(sqlite3_stmt *q, int col, const struct sku_obs *o)
{
    const char *tier = (const char *)sqlite3_column_text(q, col + 1);
    return text_is(q, col, o->sku) &&
           (!tier || !tier[0] || !o->tier[0] || text_is(q, col + 1, o->tier)) &&
           sqlite3_column_int64(q, col + 2) == o->size;
}

static enum tw_err hist_insert(struct ingest *in, int64_t disk_id, const struct sku_obs *o,
                               struct tw_error *err)
{
    STMT(q, in->s, SQ_HIST_INSERT, err);
    sqlite3_bind_int64(q, 1, disk_id);
    tw_sq_text(q, 2, in->r->created_at, false);
    sqlite3_bind_int64(q, 3, in->ms);
    tw_sq_text(q, 4, o->sku, false);
    tw_sq_text(q, 5, o->tier, true);
    sqlite3_bind_int64(q, 6, o->size);
    tw_sq_text(q, 7, in->r->id, false);
    return run(in->s, q, "recording a disk's SKU", err);
}

/*
 * A late report's observation goes where it belongs in time: a row only
 * if it differs from the observation before it, and the row after it
 * removed if that one no longer records a change.
 */
static enum tw_err hist_late(struct ingest *in, int64_t disk_id, const struct sku_obs *o,
                             struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    STMT(prev, s, SQ_HIST_PREV, err);
    sqlite3_bind_int64(prev, 1, disk_id);
    sqlite3_bind_int64(prev, 2, in->ms);
    int rc = sqlite3_step(prev);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, prev, err, "reading a disk's SKU history");
    bool same = rc == SQLITE_ROW && same_obs(prev, 0, o);
    sqlite3_reset(prev);
    if (same)
        return TW_OK;
    enum tw_err e = hist_insert(in, disk_id, o, err);
    if (e != TW_OK)
        return e;
    STMT(next, s, SQ_HIST_NEXT, err);
    sqlite3_bind_int64(next, 1, disk_id);
    sqlite3_bind_int64(next, 2, in->ms);
    rc = sqlite3_step(next);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, next, err, "reading a disk's SKU history");
    int64_t next_id = rc == SQLITE_ROW && same_obs(next, 1, o) ? sqlite3_column_int64(next, 0)
                                                               : 0;
    sqlite3_reset(next);
    if (!next_id)
        return TW_OK;
    STMT(del, s, SQ_HIST_DELETE, err);
    sqlite3_bind_int64(del, 1, next_id);
    return run(s, del, "tidying a disk's SKU history", err);
}

static void bind_disk(sqlite3_stmt *q, const struct ingest *in, const struct tw_disk *d)
{
    sqlite3_bind_int64(q, 2, in->vm_id);
    tw_sq_text(q, 3, d->name, false);
    tw_sq_text(q, 4, d->role == TW_DISK_OS ? "os" : "data", false);
    if (d->lun >= 0)
        sqlite3_bind_int(q, 5, d->lun);
    else
        sqlite3_bind_null(q, 5);
    tw_sq_text(q, 6, d->sku, false);
    sqlite3_bind_int64(q, 7, d->size_gib);
    tw_sq_text(q, 8, d->tier, true);
    tw_sq_text(q, 9, tw_caching_name(d->caching), false);
    tw_sq_text(q, 10, d->managed_disk_id, false);
    sqlite3_bind_int(q, 11, d->write_accelerator);
    tw_sq_text(q, 12, d->device, true);
    tw_sq_text(q, 13, in->r->created_at, false);
    sqlite3_bind_int64(q, 14, in->ms);
    sqlite3_bind_int64(q, 17, (sqlite3_int64)(d - in->r->inv.disks));
}

/* Whether the stored row (SQ_DISK_FIND, columns 4..13, its place in the
 * inventory 15) says what D, disk POS of the report, says. */
static bool disk_same(sqlite3_stmt *q, const struct tw_disk *d, size_t pos)
{
    bool lun_null = sqlite3_column_type(q, 6) == SQLITE_NULL;
    if (sqlite3_column_type(q, 15) == SQLITE_NULL ||
        sqlite3_column_int64(q, 15) != (sqlite3_int64)pos)
        return false;
    return text_is(q, 4, d->name) && text_is(q, 5, d->role == TW_DISK_OS ? "os" : "data") &&
           (d->lun < 0 ? lun_null : !lun_null && sqlite3_column_int(q, 6) == d->lun) &&
           text_is(q, 7, d->sku) && sqlite3_column_int64(q, 8) == d->size_gib &&
           text_is(q, 9, d->tier) && text_is(q, 10, tw_caching_name(d->caching)) &&
           (!d->managed_disk_id[0] || text_is(q, 11, d->managed_disk_id)) &&
           sqlite3_column_int(q, 12) == (int)d->write_accelerator && text_is(q, 13, d->device);
}

/* What the stored row of a report's disk says, against the report. */
struct disk_state {
    bool found;      /* a row with this identity exists */
    int64_t id;
    int64_t vm_id;   /* the VM the row is of */
    bool attached;   /* the row is attached (to VM_ID) */
    bool newer;      /* the report is newer than what the row shows */
    bool same;       /* the row, attached to this VM, says what the report says */
    bool same_sku;   /* (sku, tier, size) as in the row */
    char sku[32], tier[16]; /* the row's */
    int64_t size_gib;
};

/* Judges row Q (SQ_DISK_FIND's columns) against disk D of the report. */
static void judge(const struct ingest *in, sqlite3_stmt *q, const struct tw_disk *d,
                  struct disk_state *ds)
{
    int64_t vm_id = sqlite3_column_int64(q, 1);
    bool attached = sqlite3_column_type(q, 2) == SQLITE_NULL;
    ds->found = true;
    ds->id = sqlite3_column_int64(q, 0);
    ds->vm_id = vm_id;
    ds->attached = attached;
    /* Newer than what the row shows: for a disk of this VM, whether this
     * is the VM's newest report; else the time of the row's own facts
     * (its VM's newest report, or when it was detached). */
    if (attached && vm_id == in->vm_id)
        ds->newer = in->newest;
    else
        ds->newer = in->ms >= sqlite3_column_int64(q, attached ? 3 : 2);
    ds->same = attached && vm_id == in->vm_id && disk_same(q, d, (size_t)(d - in->r->inv.disks));
    /* As same_obs: a tier filled in where the row has none is no change. */
    const char *tier = (const char *)sqlite3_column_text(q, 9);
    const char *rsku = (const char *)sqlite3_column_text(q, 7);
    snprintf(ds->sku, sizeof(ds->sku), "%s", rsku ? rsku : "");
    snprintf(ds->tier, sizeof(ds->tier), "%s", tier ? tier : "");
    ds->size_gib = sqlite3_column_int64(q, 8);
    ds->same_sku = text_is(q, 7, d->sku) &&
                   (!tier || !tier[0] || !d->tier[0] || text_is(q, 9, d->tier)) &&
                   sqlite3_column_int64(q, 8) == d->size_gib;
}

/*
 * A disk row is written only when something about it changes: most
 * reports repeat what the last one said, and rewriting every disk of every
 * report would cost more than the rest of the report.  Which disks are
 * attached now is what the VM's newest report lists.
 */
static enum tw_err apply_disk(struct ingest *in, size_t i, const char *identity,
                              struct disk_state *ds, struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    const struct tw_disk *d = &in->r->inv.disks[i];
    const struct sku_obs obs = {d->sku, d->tier, d->size_gib};
    if (!ds->found) {
        /* Not one of the VM's disks: a new disk, or one that moved here. */
        STMT(find, s, SQ_DISK_FIND, err);
        tw_sq_text(find, 1, identity, false);
        int rc = sqlite3_step(find);
        if (rc == SQLITE_ROW)
            judge(in, find, d, ds);
        else if (rc != SQLITE_DONE)
            return tw_sq_fail(s, find, err, "finding a disk");
        sqlite3_reset(find);
    }
    if (!ds->found) {
        STMT(ins, s, SQ_DISK_INSERT, err);
        tw_sq_text(ins, 1, identity, false);
        bind_disk(ins, in, d);
        /* First seen in a late report: not in the VM's newest one, so
         * not attached now as far as anyone knows. */
        if (in->newest) {
            sqlite3_bind_null(ins, 15);
            sqlite3_bind_null(ins, 16);
        } else {
            tw_sq_text(ins, 15, in->prev_at, false);
            sqlite3_bind_int64(ins, 16, in->prev_ms);
        }
        enum tw_err e = run(s, ins, "storing a new disk", err);
        if (e != TW_OK)
            return e;
        in->disk_ids[i] = sqlite3_last_insert_rowid(s->db);
        return hist_insert(in, in->disk_ids[i], &obs, err);
    }
    in->disk_ids[i] = ds->id;
    if (!ds->newer) {
        /* The disk stays where newer facts put it: this VM's stored
         * inventory is not this report's (its verdicts are not kept). */
        if (ds->vm_id != in->vm_id || !ds->attached)
            in->inv_partial = true;
        return hist_late(in, ds->id, &obs, err);
    }
    /* The report is the VM's newest, but a later look at the disk's SKU
     * (ARM's, after the report was made) may be known: the SKU, tier and
     * size then stay what that later observation says, and the report's
     * goes into the history where it belongs in time. */
    bool sku_newest = true;
    {
        STMT(next, s, SQ_HIST_NEXT, err);
        sqlite3_bind_int64(next, 1, ds->id);
        sqlite3_bind_int64(next, 2, in->ms);
        int rc = sqlite3_step(next);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return tw_sq_fail(s, next, err, "reading a disk's SKU history");
        sku_newest = rc == SQLITE_DONE;
        sqlite3_reset(next);
    }
    enum tw_err e = TW_OK;
    if (ds->vm_id != in->vm_id && ds->attached) {
        /* The disk moves here from another VM: the inventories both VMs'
         * kept verdicts were judged against are no longer theirs. */
        STMT(inv, s, SQ_LATEST_UNKEEP, err);
        sqlite3_bind_int64(inv, 1, ds->vm_id);
        sqlite3_bind_int64(inv, 2, in->vm_id);
        if ((e = run(s, inv, "setting kept verdicts aside", err)) != TW_OK)
            return e;
    }
    if (!ds->same) {
        STMT(up, s, SQ_DISK_UPDATE, err);
        sqlite3_bind_int64(up, 1, ds->id);
        bind_disk(up, in, d);
        if (!sku_newest) {
            tw_sq_text(up, 6, ds->sku, false);
            sqlite3_bind_int64(up, 7, ds->size_gib);
            tw_sq_text(up, 8, ds->tier, true);
        }
        e = run(s, up, "updating a disk", err);
    }
    if (e == TW_OK && !sku_newest)
        e = hist_late(in, ds->id, &obs, err);
    else if (e == TW_OK && !ds->same_sku)
        e = hist_insert(in, ds->id, &obs, err);
    return e;
}

/*
 * The report's disks against the VM's stored ones, read in one query:
 * each is matched by identity and judged, the VM's attached disks that the
 * (newest) report lacks are detached, last seen in the VM's previous
 * newest report.
 */
static enum tw_err put_disks(struct ingest *in, struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    const struct tw_inventory *inv = &in->r->inv;
    enum { IDLEN = 600 };
    char *idents = malloc(inv->n_disks ? inv->n_disks * IDLEN : 1);
    if (!idents)
        return tw_error_set(err, TW_ENOMEM, "out of memory storing disks");
    struct disk_state ds[TW_INV_MAX_DISKS];
    memset(ds, 0, sizeof(ds));
    for (size_t i = 0; i < inv->n_disks; i++)
        tw_sh_disk_identity(&inv->disks[i], in->vm_id, idents + i * IDLEN, IDLEN);

    int64_t gone[TW_INV_MAX_DISKS];
    size_t n_gone = 0;
    enum tw_err e = TW_OK;
    if (in->vm_existed) {
        sqlite3_stmt *q = tw_sq_stmt(s, SQ_VM_DISKS_ALL, err);
        if (!q) {
            free(idents);
            return err && err->code ? err->code : TW_EIO;
        }
        sqlite3_bind_int64(q, 1, in->vm_id);
        int rc;
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            const char *ident = (const char *)sqlite3_column_text(q, 14);
            size_t j = 0;
            while (j < inv->n_disks && (ds[j].found || strcmp(idents + j * IDLEN, ident) != 0))
                j++;
            /* A disk ARM stored by its id, reported without it: its name. */
            const char *rid = (const char *)sqlite3_column_text(q, 11);
            const char *rname = (const char *)sqlite3_column_text(q, 4);
            if (j == inv->n_disks && rid && rid[0] && rname)
                for (j = 0; j < inv->n_disks; j++)
                    if (!ds[j].found && !inv->disks[j].managed_disk_id[0] &&
                        strcasecmp(inv->disks[j].name, rname) == 0)
                        break;
            if (j < inv->n_disks)
                judge(in, q, &inv->disks[j], &ds[j]);
            else if (in->newest && sqlite3_column_type(q, 2) == SQLITE_NULL &&
                     n_gone < TW_INV_MAX_DISKS)
                gone[n_gone++] = sqlite3_column_int64(q, 0);
        }
        if (rc != SQLITE_DONE)
            e = tw_sq_fail(s, q, err, "reading the VM's disks");
        else
            sqlite3_reset(q);
    }
    for (size_t i = 0; i < inv->n_disks && e == TW_OK; i++)
        e = apply_disk(in, i, idents + i * IDLEN, &ds[i], err);
    free(idents);
    for (size_t k = 0; k < n_gone && e == TW_OK; k++) {
        STMT(det, s, SQ_DISK_DETACH, err);
        sqlite3_bind_int64(det, 1, gone[k]);
        tw_sq_text(det, 2, in->r->created_at, false);
        sqlite3_bind_int64(det, 3, in->ms);
        tw_sq_text(det, 4, in->prev_at, false);
        sqlite3_bind_int64(det, 5, in->prev_ms);
        e = run(s, det, "marking a detached disk", err);
    }
    return e;
}

/* ---- results ---- */

static void bind_real_or_null(sqlite3_stmt *q, int i, bool present, double v)
{
    if (present)
        sqlite3_bind_double(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

static enum tw_err link_disk(struct ingest *in, int64_t result_id, const char *dev,
                             struct tw_error *err)
{
    const struct tw_disk *d = tw_inventory_disk_by_device(&in->r->inv, dev);
    if (!d)
        return TW_OK;   /* a device the inventory doesn't map: kept, unlinked */
    STMT(q, in->s, SQ_RESULT_DISK, err);
    sqlite3_bind_int64(q, 1, in->disk_ids[d - in->r->inv.disks]);
    sqlite3_bind_int64(q, 2, result_id);
    return run(in->s, q, "linking a result to its disk", err);
}

/* Result I (row RESULT_ID, ordered at ORDER_MS) as its VM's latest of its
 * target and profile unless a newer one is stored, with its verdict. */
static enum tw_err put_latest(struct ingest *in, size_t i, int64_t result_id, int64_t order_ms,
                              struct tw_error *err)
{
    const struct tw_result *x = &in->r->results[i];
    const struct tw_store_verdict *v =
        in->judged && i < in->judged->n && in->judged->v ? &in->judged->v[i] : NULL;
    STMT(q, in->s, SQ_LATEST_UPSERT, err);
    sqlite3_bind_int64(q, 1, in->vm_id);
    tw_sq_text(q, 2, x->target.device[0] ? x->target.device : x->target.path, false);
    tw_sq_text(q, 3, x->profile, false);
    sqlite3_bind_int64(q, 4, result_id);
    sqlite3_bind_int64(q, 5, order_ms);
    tw_sq_text(q, 6, in->r->id, false);
    /* Judged: the basis is kept, with the kind when there is one (none:
     * the result could not be judged under that basis). */
    bool judged = v && in->judged->basis;
    bool kept = judged && v->kind;
    tw_sq_text(q, 7, kept ? v->kind : NULL, true);
    tw_sq_text(q, 8, kept ? (v->skus ? v->skus : "") : NULL, true);
    tw_sq_text(q, 9, judged ? in->judged->basis : NULL, true);
    /* Judged against the report's inventory: it stands while that is the
     * VM's stored one (not when a disk of it stays with another VM). */
    tw_sq_text(q, 10, in->inv_partial ? NULL : in->r->id, true);
    return run(in->s, q, "keeping the latest result", err);
}

static enum tw_err put_result(struct ingest *in, size_t i, struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    const struct tw_result *x = &in->r->results[i];
    int64_t started_ms;
    if (!x->started_at[0] || !tw_rfc3339_ms(x->started_at, &started_ms))
        started_ms = in->ms;
    if (started_ms > in->limit_ms) /* the text keeps what was sent */
        started_ms = in->limit_ms;
    char *record = NULL;
    if (!in->records) {
        record = tw_result_to_json(x, JSON_COMPACT);
        if (!record)
            return tw_error_set(err, TW_ENOMEM, "out of memory storing result %s", x->id);
    }
    STMT(q, s, SQ_RESULT_INSERT, err);
    tw_sq_text(q, 1, in->r->id, false);
    sqlite3_bind_int64(q, 2, in->vm_id);
    tw_sq_text(q, 3, x->id, false);
    tw_sq_text(q, 4, x->profile, false);
    tw_sq_text(q, 5, x->target.device[0] ? x->target.device : x->target.path, false);
    tw_sq_text(q, 6, x->target.path, false);
    tw_sq_text(q, 7, x->target.device, true);
    tw_sq_text(q, 8, x->started_at, false);
    sqlite3_bind_int64(q, 9, started_ms);
    tw_sq_text(q, 10, tw_source_name(x->source), false);
    tw_sq_text(q, 11, x->method.engine, false);
    tw_sq_text(q, 12, tw_pattern_name(x->method.pattern), false);
    sqlite3_bind_int64(q, 13, x->method.block_size_bytes);
    sqlite3_bind_int(q, 14, x->method.queue_depth);
    sqlite3_bind_int(q, 15, x->method.jobs);
    sqlite3_bind_int(q, 16, x->method.direct);
    sqlite3_bind_int64(q, 17, x->method.runtime_ms);
    bind_real_or_null(q, 18, x->read.present, x->read.iops);
    bind_real_or_null(q, 19, x->read.present, x->read.mbps);
    bind_real_or_null(q, 20, x->read.present, x->read.lat.mean_ns);
    bind_real_or_null(q, 21, x->write.present, x->write.iops);
    bind_real_or_null(q, 22, x->write.present, x->write.mbps);
    bind_real_or_null(q, 23, x->write.present, x->write.lat.mean_ns);
    sqlite3_bind_int64(q, 24, x->errors.count);
    /* A record is stored as its own text (schema 2): cut from the body
     * as the agent sent it when it could be found there, else rendered.
     * (Version 1 stored a place in the body instead; reading a result
     * then needed the whole report.) */
    if (record)
        sqlite3_bind_text(q, 25, record, -1, SQLITE_STATIC);
    else
        sqlite3_bind_text(q, 25, in->records[i].p, (int)in->records[i].n, SQLITE_STATIC);
    sqlite3_bind_null(q, 26);
    sqlite3_bind_null(q, 27);
    enum tw_err e = run(s, q, "storing a result", err);
    free(record);
    if (e != TW_OK)
        return e;
    int64_t result_id = sqlite3_last_insert_rowid(s->db);
    if ((e = put_latest(in, i, result_id, started_ms, err)) != TW_OK)
        return e;
    /* The disks it covered: the members of a stripe, else the device. */
    if (x->target.n_members) {
        for (size_t k = 0; k < x->target.n_members && e == TW_OK; k++)
            e = link_disk(in, result_id, x->target.members[k], err);
        return e;
    }
    return link_disk(in, result_id, x->target.device, err);
}

/* ---- one report ---- */

static enum tw_err put_one(struct ingest *in, enum tw_put_status *status, struct tw_error *err)
{
    struct tw_sqlite *s = in->s;
    const struct tw_report *r = in->r;
    if (!tw_uuid_valid(r->id))
        return tw_error_set(err, TW_EINVAL, "report id \"%s\" is not a UUID", r->id);
    if (!tw_rfc3339_ms(r->created_at, &in->created_ms))
        return tw_error_set(err, TW_EINVAL, "report %s: created_at \"%s\" is not an RFC 3339 "
                            "time", r->id, r->created_at);
    /* An agent's clock ahead of ours by more than the allowance does not
     * make its report the newest for good: it is ordered at the bound. */
    int64_t received_ms;
    if (!tw_rfc3339_ms(in->received_at, &received_ms))
        return tw_error_set(err, TW_EINVAL, "report %s: the time it was received, \"%s\", is "
                            "not an RFC 3339 time", r->id, in->received_at);
    in->limit_ms = received_ms + TW_STORE_CLOCK_AHEAD_MS;
    in->ms = in->created_ms < in->limit_ms ? in->created_ms : in->limit_ms;
    if (r->inv.n_disks > TW_INV_MAX_DISKS)
        return tw_error_set(err, TW_EINVAL, "report %s has too many disks", r->id);

    STMT(ex, s, SQ_REPORT_EXISTS, err);
    tw_sq_text(ex, 1, r->id, false);
    int rc = sqlite3_step(ex);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return tw_sq_fail(s, ex, err, "looking for an earlier copy of the report");
    sqlite3_reset(ex);
    if (rc == SQLITE_ROW) {
        *status = TW_PUT_REPEAT;
        return TW_OK;
    }

    enum tw_err e = put_vm(in, err);
    if (e != TW_OK)
        return e;

    STMT(rep, s, SQ_REPORT_INSERT, err);
    tw_sq_text(rep, 1, r->id, false);
    tw_sq_text(rep, 2, r->created_at, false);
    sqlite3_bind_int64(rep, 3, in->created_ms);
    tw_sq_text(rep, 4, in->received_at, false);
    sqlite3_bind_int64(rep, 5, in->vm_id);
    tw_sq_text(rep, 6, r->agent_version, false);
    tw_sq_text(rep, 7, r->agent_hostname, false);
    tw_sq_text(rep, 8, r->power_state, true);
    sqlite3_bind_text(rep, 9, in->body, (int)in->body_len, SQLITE_STATIC);
    if (in->created_ms > in->limit_ms)
        sqlite3_bind_int64(rep, 10, in->created_ms - (in->limit_ms - TW_STORE_CLOCK_AHEAD_MS));
    else
        sqlite3_bind_null(rep, 10);
    if ((e = run(s, rep, "storing the report", err)) != TW_OK)
        return e;

    if ((e = put_disks(in, err)) != TW_OK)
        return e;
    for (size_t i = 0; i < r->n_results; i++) {
        if ((e = put_result(in, i, err)) != TW_OK)
            return e;
    }
    if (r->power_state[0]) {
        STMT(ps, s, SQ_POWER_INSERT, err);
        sqlite3_bind_int64(ps, 1, in->vm_id);
        tw_sq_text(ps, 2, r->created_at, false);
        sqlite3_bind_int64(ps, 3, in->ms);
        tw_sq_text(ps, 4, r->power_state, false);
        tw_sq_text(ps, 5, r->id, false);
        if ((e = run(s, ps, "storing the power state", err)) != TW_OK)
            return e;
    }
    if (r->power_state[0] && !in->newest) {
        /* The VM row took the newest report's state with its other fields;
         * a late report's state counts only if no later one is known. */
        STMT(vp, s, SQ_VM_POWER, err);
        sqlite3_bind_int64(vp, 1, in->vm_id);
        tw_sq_text(vp, 2, r->power_state, false);
        tw_sq_text(vp, 3, r->created_at, false);
        sqlite3_bind_int64(vp, 4, in->ms);
        if ((e = run(s, vp, "updating the VM's power state", err)) != TW_OK)
            return e;
    }
    *status = TW_PUT_STORED;
    return TW_OK;
}

static enum tw_err step_simple(struct tw_sqlite *s, enum tw_sq_id id, const char *what,
                               struct tw_error *err)
{
    STMT(q, s, id, err);
    return run(s, q, what, err);
}

/* The batch failed as a whole: nothing of it is stored. */
static enum tw_err fail_batch(struct tw_sqlite *s, size_t n, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        status[i] = TW_PUT_FAILED;
        if (errs && err)
            errs[i] = *err;
    }
    return err && err->code ? err->code : TW_EIO;
}

/* The largest body a report row can hold: SQLite's length limit (on a
 * value and on the whole row, 1,000,000,000 bytes by default) less room
 * for the row's other columns.  A body past it is refused as too large
 * (400 report_rejected), never handed to a bind that would fail and turn
 * into a store failure that the agent retries for ever. */
static size_t body_max(struct tw_sqlite *s)
{
    int lim = sqlite3_limit(s->db, SQLITE_LIMIT_LENGTH, -1);
    return lim > (1 << 20) ? (size_t)lim - (1 << 20) : 0;
}

enum tw_err tw_sq_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                              const char *const *raw, const size_t *raw_len,
                              const struct tw_store_judged *const *judged, size_t n,
                              const char *received_at, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    struct tw_error local;
    if (!err)
        err = &local;
    if (step_simple(s, SQ_BEGIN, "starting to store reports", err) != TW_OK)
        return fail_batch(s, n, status, errs, err);
    for (size_t i = 0; i < n; i++) {
        struct tw_error one = {0};
        const struct tw_report *r = reps[i];
        status[i] = TW_PUT_FAILED;
        if (!r) {
            tw_error_set(&one, TW_EINVAL, "report %zu of the batch is missing", i);
            if (errs)
                errs[i] = one;
            continue;
        }
        if (step_simple(s, SQ_SAVEPOINT, "starting a report", err) != TW_OK)
            return fail_batch(s, n, status, errs, err);
        struct ingest in = {.s = s, .r = r, .received_at = received_at,
                            .judged = judged ? judged[i] : NULL};
        char *own = NULL;
        if (raw && raw[i]) {
            in.body = raw[i];
            in.body_len = raw_len ? raw_len[i] : strlen(raw[i]);
        } else {
            own = tw_report_to_json(r, JSON_COMPACT);
            in.body = own;
            in.body_len = own ? strlen(own) : 0;
        }
        /* The records as sent when the body is the report's own text. */
        struct tw_span spans[16];
        struct tw_span *many = NULL;
        if (own == NULL && in.body && r->n_results) {
            struct tw_span *sp = spans;
            if (r->n_results > 16)
                sp = many = malloc(r->n_results * sizeof(*many));
            if (sp && tw_sh_find_records(in.body, in.body_len, sp, r->n_results))
                in.records = sp;
        }
        enum tw_err e;
        if (!in.body)
            e = tw_error_set(&one, TW_ENOMEM, "out of memory rendering report %s", r->id);
        else if (in.body_len > body_max(s))
            e = tw_error_set(&one, TW_ERANGE,
                             "report %s is too large to store: %zu bytes, past the %zu that "
                             "one row holds; send a smaller report",
                             r->id, in.body_len, body_max(s));
        else
            e = put_one(&in, &status[i], &one);
        free(own);
        free(many);
        if (e == TW_OK) {
            if (step_simple(s, SQ_RELEASE, "finishing a report", err) != TW_OK)
                return fail_batch(s, n, status, errs, err);
            continue;
        }
        status[i] = TW_PUT_FAILED;
        if (errs)
            errs[i] = one;
        /* Some failures (a full disk, an I/O error) end the transaction
         * itself: then the whole batch is lost and says so. */
        if (sqlite3_get_autocommit(s->db)) {
            *err = one;
            return fail_batch(s, n, status, errs, err);
        }
        if (step_simple(s, SQ_ROLLBACK_TO, "undoing a failed report", err) != TW_OK ||
            step_simple(s, SQ_RELEASE, "undoing a failed report", err) != TW_OK)
            return fail_batch(s, n, status, errs, err);
    }
    if (step_simple(s, SQ_COMMIT, "committing the reports", err) != TW_OK)
        return fail_batch(s, n, status, errs, err);
    return TW_OK;
}
