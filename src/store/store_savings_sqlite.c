/*
 * store_savings_sqlite.c - the SQLite store's savings reads: a walk over
 * the fleet's attached disks VM by VM, each VM with its power states and
 * its disks' SKU changes in a span, in one read snapshot; and the disk
 * attributes (shared, bursting, state) an ARM sync records.
 *
 * Memory: the walk holds one VM's rows at a time (its disks, tags, power
 * observations and SKU changes in arrays reused from VM to VM), so a
 * fleet of 100,000 disks costs what its largest VM costs.  The disks come
 * from one statement ordered by VM; each VM's power states and SKU changes
 * from a statement of their own, bound to the VM and stepped over the
 * indexes power_states(vm_id, observed_ms) and disk_sku_history(disk_id,
 * observed_ms).
 */
#include "store/store_sqlite.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column COL's text into OUT (LEN bytes, cut to fit; NULL is ""): as
 * tw_sq_copy, without a format for each of a fleet's million values. */
static void col_copy(sqlite3_stmt *q, int col, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    size_t n = t ? (size_t)sqlite3_column_bytes(q, col) : 0;
    if (n > len - 1)
        n = len - 1;
    if (n)
        memcpy(out, t, n);
    out[n] = '\0';
}

/* ---- disk attributes ---- */

static const char *const attrs_update_sql =
    "UPDATE disks SET max_shares = ?2, bursting = ?3, disk_state = ?4, attrs_observed_at = ?5, "
    "attrs_observed_ms = ?6, attrs_source = ?7 WHERE id = ?1 AND (attrs_observed_ms IS NULL "
    "OR attrs_observed_ms <= ?6)";

enum tw_err tw_sq_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                     const struct tw_store_disk_attrs *a,
                                     const char *observed_at, int64_t observed_ms,
                                     enum tw_obs_source source, bool *applied,
                                     struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, attrs_update_sql, -1, &q, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "preparing to record a disk's attributes");
    sqlite3_bind_int64(q, 1, disk_id);
    if (a->max_shares > 0)
        sqlite3_bind_int64(q, 2, a->max_shares);
    else
        sqlite3_bind_null(q, 2);
    if (a->bursting == TW_TRI_UNKNOWN)
        sqlite3_bind_null(q, 3);
    else
        sqlite3_bind_int(q, 3, a->bursting == TW_TRI_YES);
    tw_sq_text(q, 4, a->disk_state, true);
    tw_sq_text(q, 5, observed_at, false);
    sqlite3_bind_int64(q, 6, observed_ms);
    tw_sq_text(q, 7, source == TW_OBS_ARM ? "arm" : "agent", false);
    enum tw_err rc = TW_OK;
    if (sqlite3_step(q) != SQLITE_DONE)
        rc = tw_sq_fail(s, q, err, "recording a disk's attributes");
    int changed = sqlite3_changes(s->db);
    sqlite3_finalize(q);
    if (rc != TW_OK)
        return rc;
    if (changed > 0) {
        if (applied)
            *applied = true;
        return TW_OK;
    }
    /* Nothing changed: no such disk, or a later observation stands. */
    sqlite3_stmt *e = tw_sq_stmt(s, SQ_DISK_EXISTS, err);
    if (!e)
        return err && err->code ? err->code : TW_EIO;
    sqlite3_bind_int64(e, 1, disk_id);
    int erc = sqlite3_step(e);
    sqlite3_reset(e);
    sqlite3_clear_bindings(e);
    if (erc == SQLITE_ROW)
        return TW_OK;
    if (erc != SQLITE_DONE)
        return tw_sq_fail(s, e, err, "looking up a disk");
    return tw_error_set(err, TW_ENOENT, "there is no disk %lld", (long long)disk_id);
}

/* ---- the walk ---- */

static const char *const walk_disks_sql =
    "SELECT v.id, v.name, v.resource_group, v.subscription_id, v.location, v.vm_size, v.tags, "
    "v.power_state, v.power_state_ms, d.id, d.name, d.role, d.lun, d.sku, d.tier, d.size_gib, "
    "d.max_shares, d.bursting, d.disk_state, o.sku, oa.policy FROM disks d JOIN vms v ON "
    "v.id = d.vm_id LEFT JOIN disk_originals o ON o.disk_id = d.id LEFT JOIN actions oa ON "
    "oa.id = o.action_id WHERE d.detached_ms IS NULL "
    "ORDER BY d.vm_id, d.position, d.lun, d.name, d.id";

/* The observations in [?2, ?3) and the one in force at ?2. */
static const char *const walk_power_sql =
    "SELECT observed_ms, state FROM power_states WHERE vm_id = ?1 AND observed_ms < ?3 AND "
    "observed_ms >= coalesce((SELECT max(observed_ms) FROM power_states WHERE vm_id = ?1 AND "
    "observed_ms <= ?2), ?2) ORDER BY observed_ms, id";

/* A history row is a change when the row before it (of that disk, by
 * observed_ms then id) has another SKU (case-insensitive) or tier; a
 * disk's first row is its first observation.  Read in one pass: the span's
 * rows of the VM's attached disks by disk, time and id, each compared in C
 * with the row before it (changes_step), which for a disk's first row in
 * the span is the disk's last row before the span (walk_prior_sql, one
 * lookup).  Both step over disk_sku_history(disk_id, observed_ms), whose
 * entries end with the rowid: the id's order too, without a sort. */
static const char *const walk_changes_sql =
    "SELECT h.disk_id, h.observed_ms, h.sku, h.tier FROM disks d JOIN disk_sku_history h ON "
    "h.disk_id = d.id WHERE d.vm_id = ?1 AND d.detached_ms IS NULL AND h.observed_ms >= ?2 AND "
    "h.observed_ms < ?3 ORDER BY h.disk_id, h.observed_ms, h.id";

static const char *const walk_prior_sql =
    "SELECT sku, tier FROM disk_sku_history WHERE disk_id = ?1 AND observed_ms < ?2 "
    "ORDER BY observed_ms DESC, id DESC LIMIT 1";

struct sq_cursor {
    struct tw_store_sv_cursor base;
    struct tw_sqlite *s;
    sqlite3_stmt *disks, *power, *changes, *prior;
    int64_t from_ms, to_ms;
    bool open_tx;      /* the savepoint holding the snapshot is open */
    bool pending;      /* DISKS is on a row not yet handed out */
    bool finished;
    struct tw_tag tags[TW_INV_MAX_TAGS];
    struct tw_store_sv_disk *d;
    size_t nd, capd;
    struct tw_store_sv_power *p;
    size_t np, capp;
    struct tw_store_sv_change *c;
    size_t nc, capc;
    /* The row before the one read: its disk, SKU and tier (whole, not cut
     * to a change's fields, so that the comparison is the database's). */
    int64_t prev_disk;
    bool have_prev;
    char *prev_sku, *prev_tier;
    size_t prev_nsku, prev_ntier, cap_sku, cap_tier;
};

static bool grow(void **v, size_t *cap, size_t n, size_t each)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*v, ncap * each);
    if (!p)
        return false;
    *v = p;
    *cap = ncap;
    return true;
}

/* A VM's stored tags (a JSON object of strings) into OUT, at most
 * TW_INV_MAX_TAGS; anything else is no tag. */
size_t tw_sq_tags_parse(const char *text, struct tw_tag *out)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    size_t n = 0;
    if (json_is_object(o)) {
        const char *k;
        json_t *v;
        json_object_foreach(o, k, v)
        {
            if (n == TW_INV_MAX_TAGS)
                break;
            if (!json_is_string(v))
                continue;
            snprintf(out[n].key, sizeof(out[n].key), "%s", k);
            snprintf(out[n].value, sizeof(out[n].value), "%s", json_string_value(v));
            n++;
        }
    }
    json_decref(o);
    return n;
}

static enum tw_err walk_exec(struct tw_sqlite *s, const char *sql, const char *what,
                             struct tw_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    return TW_OK;
}

void tw_sq_savings_close(struct tw_store_sv_cursor *base)
{
    struct sq_cursor *c = (struct sq_cursor *)base;
    sqlite3_finalize(c->disks);
    sqlite3_finalize(c->power);
    sqlite3_finalize(c->changes);
    sqlite3_finalize(c->prior);
    if (c->open_tx)
        sqlite3_exec(c->s->db, "RELEASE savings_walk", NULL, NULL, NULL);
    free(c->d);
    free(c->p);
    free(c->c);
    free(c->prev_sku);
    free(c->prev_tier);
    free(c);
}

enum tw_err tw_sq_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                               struct tw_store_sv_cursor **out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    struct sq_cursor *c = calloc(1, sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the fleet's disks");
    c->base.st = st;
    c->s = s;
    c->from_ms = from_ms;
    c->to_ms = to_ms;
    /* One snapshot for the four statements: a savepoint opens a read
     * transaction (or nests in the caller's). */
    enum tw_err rc = walk_exec(s, "SAVEPOINT savings_walk", "starting to read the fleet", err);
    if (rc == TW_OK) {
        c->open_tx = true;
        if (sqlite3_prepare_v2(s->db, walk_disks_sql, -1, &c->disks, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(s->db, walk_power_sql, -1, &c->power, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(s->db, walk_changes_sql, -1, &c->changes, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(s->db, walk_prior_sql, -1, &c->prior, NULL) != SQLITE_OK)
            rc = tw_sq_fail(s, NULL, err, "preparing to read the fleet's disks");
    }
    if (rc != TW_OK) {
        tw_sq_savings_close(&c->base);
        return rc;
    }
    *out = &c->base;
    return TW_OK;
}

static void disk_from_row(sqlite3_stmt *q, struct tw_store_sv_disk *d)
{
    memset(d, 0, sizeof(*d));
    d->id = sqlite3_column_int64(q, 9);
    col_copy(q, 10, d->name, sizeof(d->name));
    const char *role = (const char *)sqlite3_column_text(q, 11);
    d->role = role && strcmp(role, "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = sqlite3_column_type(q, 12) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 12);
    col_copy(q, 13, d->sku, sizeof(d->sku));
    col_copy(q, 14, d->tier, sizeof(d->tier));
    d->size_gib = sqlite3_column_int64(q, 15);
    d->attrs.max_shares = sqlite3_column_type(q, 16) == SQLITE_NULL ? 0 : sqlite3_column_int64(q, 16);
    if (sqlite3_column_type(q, 17) == SQLITE_NULL)
        d->attrs.bursting = TW_TRI_UNKNOWN;
    else
        d->attrs.bursting = sqlite3_column_int(q, 17) ? TW_TRI_YES : TW_TRI_NO;
    col_copy(q, 18, d->attrs.disk_state, sizeof(d->attrs.disk_state));
    col_copy(q, 19, d->original_sku, sizeof(d->original_sku));
    col_copy(q, 20, d->original_policy, sizeof(d->original_policy));
}

/* Column COL's text (NULL is "") kept in *BUF as the row before the next;
 * false when out of memory. */
static bool keep_text(sqlite3_stmt *q, int col, char **buf, size_t *cap, size_t *n)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    size_t len = t ? (size_t)sqlite3_column_bytes(q, col) : 0;
    if (len + 1 > *cap) {
        size_t ncap = len + 1 < 64 ? 64 : len + 1;
        char *p = realloc(*buf, ncap);
        if (!p)
            return false;
        *buf = p;
        *cap = ncap;
    }
    if (len)
        memcpy(*buf, t, len);
    (*buf)[len] = '\0';
    *n = len;
    return true;
}

/* The changes statement's row against the one before it: *CHANGED when
 * the row before it of its disk has another SKU (as COLLATE NOCASE
 * compares: ASCII case folded) or another tier (NULL is ""; byte for
 * byte).  A disk's first row in the span is compared with its last row
 * before the span, looked up here; with none it is the disk's first row
 * ever, no change.  Then the row is the one before the next.  TW_ENOMEM,
 * or TW_EIO when the lookup failed (its statement left for tw_sq_fail). */
static enum tw_err changes_step(struct sq_cursor *c, bool *changed)
{
    sqlite3_stmt *q = c->changes;
    int64_t disk = sqlite3_column_int64(q, 0);
    *changed = false;
    if (!c->have_prev || c->prev_disk != disk) {
        c->have_prev = false;
        sqlite3_bind_int64(c->prior, 1, disk);
        sqlite3_bind_int64(c->prior, 2, c->from_ms);
        int rc = sqlite3_step(c->prior);
        if (rc == SQLITE_ROW) {
            if (!keep_text(c->prior, 0, &c->prev_sku, &c->cap_sku, &c->prev_nsku) ||
                !keep_text(c->prior, 1, &c->prev_tier, &c->cap_tier, &c->prev_ntier)) {
                sqlite3_reset(c->prior);
                return TW_ENOMEM;
            }
            c->have_prev = true;
        } else if (rc != SQLITE_DONE) {
            return TW_EIO;
        }
        sqlite3_reset(c->prior);
    }
    const unsigned char *sku = sqlite3_column_text(q, 2);
    size_t nsku = sku ? (size_t)sqlite3_column_bytes(q, 2) : 0;
    const unsigned char *tier = sqlite3_column_text(q, 3);
    size_t ntier = tier ? (size_t)sqlite3_column_bytes(q, 3) : 0;
    if (c->have_prev) {
        bool same_sku =
            nsku == c->prev_nsku &&
            (nsku == 0 || sqlite3_strnicmp(c->prev_sku, (const char *)sku, (int)nsku) == 0);
        bool same_tier =
            ntier == c->prev_ntier && (ntier == 0 || memcmp(c->prev_tier, tier, ntier) == 0);
        *changed = !same_sku || !same_tier;
    }
    c->have_prev = false;
    if (!keep_text(q, 2, &c->prev_sku, &c->cap_sku, &c->prev_nsku) ||
        !keep_text(q, 3, &c->prev_tier, &c->cap_tier, &c->prev_ntier))
        return TW_ENOMEM;
    c->prev_disk = disk;
    c->have_prev = true;
    return TW_OK;
}

static enum tw_err vm_history(struct sq_cursor *c, int64_t vm_id, struct tw_error *err)
{
    struct tw_sqlite *s = c->s;
    int rc;
    c->np = c->nc = 0;
    sqlite3_bind_int64(c->power, 1, vm_id);
    sqlite3_bind_int64(c->power, 2, c->from_ms);
    sqlite3_bind_int64(c->power, 3, c->to_ms);
    while ((rc = sqlite3_step(c->power)) == SQLITE_ROW) {
        if (!grow((void **)&c->p, &c->capp, c->np, sizeof(*c->p))) {
            sqlite3_reset(c->power);
            return tw_error_set(err, TW_ENOMEM, "out of memory reading power states");
        }
        struct tw_store_sv_power *p = &c->p[c->np++];
        p->at_ms = sqlite3_column_int64(c->power, 0);
        col_copy(c->power, 1, p->state, sizeof(p->state));
    }
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, c->power, err, "reading a VM's power states");
    sqlite3_reset(c->power);
    sqlite3_bind_int64(c->changes, 1, vm_id);
    sqlite3_bind_int64(c->changes, 2, c->from_ms);
    sqlite3_bind_int64(c->changes, 3, c->to_ms);
    c->have_prev = false;
    while ((rc = sqlite3_step(c->changes)) == SQLITE_ROW) {
        bool changed;
        enum tw_err e = changes_step(c, &changed);
        if (e == TW_ENOMEM) {
            sqlite3_reset(c->changes);
            return tw_error_set(err, TW_ENOMEM, "out of memory reading SKU changes");
        }
        if (e != TW_OK) {
            e = tw_sq_fail(s, c->prior, err, "reading a disk's SKU before the span");
            sqlite3_reset(c->changes);
            return e;
        }
        if (!changed)
            continue;
        if (!grow((void **)&c->c, &c->capc, c->nc, sizeof(*c->c))) {
            sqlite3_reset(c->changes);
            return tw_error_set(err, TW_ENOMEM, "out of memory reading SKU changes");
        }
        struct tw_store_sv_change *h = &c->c[c->nc++];
        h->disk_id = sqlite3_column_int64(c->changes, 0);
        h->at_ms = sqlite3_column_int64(c->changes, 1);
        col_copy(c->changes, 2, h->sku, sizeof(h->sku));
        col_copy(c->changes, 3, h->tier, sizeof(h->tier));
    }
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, c->changes, err, "reading a VM's SKU changes");
    sqlite3_reset(c->changes);
    return TW_OK;
}

enum tw_err tw_sq_savings_next(struct tw_store_sv_cursor *base, struct tw_store_sv_vm *vm,
                               bool *done, struct tw_error *err)
{
    struct sq_cursor *c = (struct sq_cursor *)base;
    struct tw_sqlite *s = c->s;
    *done = true;
    if (c->finished)
        return TW_OK;
    int rc = SQLITE_ROW;
    if (!c->pending)
        rc = sqlite3_step(c->disks);
    if (rc == SQLITE_DONE) {
        c->finished = true;
        return TW_OK;
    }
    if (rc != SQLITE_ROW) {
        c->finished = true;
        return tw_sq_fail(s, c->disks, err, "reading the fleet's disks");
    }
    c->pending = false;
    struct tw_store_sv_vm v;
    memset(&v, 0, sizeof(v));
    sqlite3_stmt *q = c->disks;
    v.id = sqlite3_column_int64(q, 0);
    col_copy(q, 1, v.name, sizeof(v.name));
    col_copy(q, 2, v.resource_group, sizeof(v.resource_group));
    col_copy(q, 3, v.subscription_id, sizeof(v.subscription_id));
    col_copy(q, 4, v.location, sizeof(v.location));
    col_copy(q, 5, v.vm_size, sizeof(v.vm_size));
    v.n_tags = tw_sq_tags_parse((const char *)sqlite3_column_text(q, 6), c->tags);
    col_copy(q, 7, v.power_state, sizeof(v.power_state));
    v.power_state_ms = sqlite3_column_type(q, 8) == SQLITE_NULL ? 0 : sqlite3_column_int64(q, 8);
    c->nd = 0;
    for (;;) {
        if (!grow((void **)&c->d, &c->capd, c->nd, sizeof(*c->d))) {
            c->finished = true;
            return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
        }
        disk_from_row(q, &c->d[c->nd++]);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW && sqlite3_column_int64(q, 0) == v.id)
            continue;
        if (rc == SQLITE_ROW) {
            c->pending = true;
        } else if (rc == SQLITE_DONE) {
            c->finished = true;
        } else {
            c->finished = true;
            return tw_sq_fail(s, q, err, "reading the fleet's disks");
        }
        break;
    }
    enum tw_err e = vm_history(c, v.id, err);
    if (e != TW_OK) {
        c->finished = true;
        return e;
    }
    v.tags = c->tags;
    v.disks = c->d;
    v.n_disks = c->nd;
    v.power = c->p;
    v.n_power = c->np;
    v.changes = c->c;
    v.n_changes = c->nc;
    *vm = v;
    *done = false;
    return TW_OK;
}

enum tw_err tw_sq_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max,
                                       size_t *n, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT DISTINCT currency FROM price_books ORDER BY currency",
                           -1, &q, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "listing the price books' currencies");
    int rc;
    size_t k = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (k < max)
            tw_sq_copy(q, 0, out[k], sizeof(out[k]));
        k++;
    }
    enum tw_err e = rc == SQLITE_DONE ? TW_OK
                                      : tw_sq_fail(s, q, err, "listing the price books' currencies");
    sqlite3_finalize(q);
    *n = k;
    return e;
}
