/*
 * store_pg_savings.c - the PostgreSQL store's savings reads, as
 * store_savings_sqlite.c reads them from SQLite: a walk over the fleet's
 * attached disks VM by VM, each VM with its power states and its disks'
 * SKU changes in a span, in one read snapshot; the disk attributes an ARM
 * sync records; the price books' currencies.  And the two helpers the
 * report's reads share (store_pg.h): a read in one snapshot and a
 * server-side cursor's batches.
 *
 * Memory: SQLite steps one statement per VM; here a round trip per VM
 * would cost a fleet of tens of thousands seconds, so the walk reads three
 * server-side cursors side by side, each ordered by VM id (the disks, the
 * power states, the SKU changes), FETCH_BATCH rows at a time, and merges
 * them VM by VM.  What is held is a batch of each cursor and one VM's
 * arrays (reused from VM to VM), whatever the fleet's size.
 */
#include "store/store_pg.h"

#include "store/store_sqlite.h" /* tw_sq_tags_parse: one reader of a VM's stored tags */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_BATCH 1000
#define FETCH_SQL(cursor) "FETCH 1000 FROM " cursor

/* Column COL's text into OUT (LEN bytes, cut to fit byte for byte as the
 * SQLite walk's col_copy; NULL is ""). */
static void col_copy(char *out, size_t len, const PGresult *r, int row, int col)
{
    size_t n = PQgetisnull(r, row, col) ? 0 : (size_t)PQgetlength(r, row, col);
    if (n > len - 1)
        n = len - 1;
    if (n)
        memcpy(out, PQgetvalue(r, row, col), n);
    out[n] = '\0';
}

/* ---- the shared read helpers (store_pg.h) ---- */

enum tw_err tw_pg_begin_read(struct tw_pg *pg, const char *what, struct tw_error *err)
{
    bool own = pg->tx_depth == 0;
    enum tw_err rc = tw_pg_begin(pg, what, err);
    if (rc != TW_OK || !own)
        return rc;
    /* First in the transaction, before any statement takes its snapshot. */
    rc = tw_pg_exec(pg, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", what, err);
    if (rc != TW_OK)
        tw_pg_rollback(pg);
    return rc;
}

enum tw_err tw_pg_feed_peek(struct tw_pg_feed *f, bool *have, struct tw_error *err)
{
    *have = false;
    if (f->res && f->row < f->n) {
        *have = true;
        return TW_OK;
    }
    if (f->res && f->last)
        return TW_OK;
    PQclear(f->res);
    f->res = NULL;
    f->row = f->n = 0;
    enum tw_err rc = tw_pg_run(f->pg, f->fetch, NULL, &f->res, f->what, err);
    if (rc != TW_OK) {
        f->last = true;
        return rc;
    }
    f->n = PQntuples(f->res);
    f->last = f->n < f->batch;
    *have = f->n > 0;
    return TW_OK;
}

void tw_pg_feed_clear(struct tw_pg_feed *f)
{
    PQclear(f->res);
    f->res = NULL;
    f->row = f->n = 0;
}

/* ---- disk attributes ---- */

/* One statement, a compare-and-set on the observation's time: of two
 * backends recording the same disk, the later observation stands. */
TW_PG_STMT(q_attrs_update,
           "UPDATE disks SET max_shares = $2, bursting = $3, disk_state = $4, "
           "attrs_observed_at = $5, attrs_observed_ms = $6, attrs_source = $7 WHERE id = $1 "
           "AND (attrs_observed_ms IS NULL OR attrs_observed_ms <= $6)");
TW_PG_STMT(q_disk_exists, "SELECT 1 FROM disks WHERE id = $1");

enum tw_err tw_pg_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                     const struct tw_store_disk_attrs *a, const char *observed_at,
                                     int64_t observed_ms, enum tw_obs_source source, bool *applied,
                                     struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    if (a->max_shares > 0)
        tw_pg_p_int(&p, a->max_shares);
    else
        tw_pg_p_null(&p);
    if (a->bursting == TW_TRI_UNKNOWN)
        tw_pg_p_null(&p);
    else
        tw_pg_p_bool(&p, a->bursting == TW_TRI_YES);
    tw_pg_p_text0(&p, a->disk_state);
    tw_pg_p_text(&p, observed_at);
    tw_pg_p_int(&p, observed_ms);
    tw_pg_p_text(&p, source == TW_OBS_ARM ? "arm" : "agent");
    int64_t changed = 0;
    enum tw_err rc =
        tw_pg_run_n(pg, &q_attrs_update, &p, &changed, "recording a disk's attributes", err);
    if (rc != TW_OK)
        return rc;
    if (changed > 0) {
        if (applied)
            *applied = true;
        return TW_OK;
    }
    /* Nothing changed: no such disk, or a later observation stands. */
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    PGresult *r;
    rc = tw_pg_run(pg, &q_disk_exists, &p, &r, "looking up a disk", err);
    if (rc != TW_OK)
        return rc;
    bool found = PQntuples(r) > 0;
    PQclear(r);
    if (found)
        return TW_OK;
    return tw_error_set(err, TW_ENOENT, "there is no disk %lld", (long long)disk_id);
}

/* ---- the walk ---- */

/* The attached disks by VM, then as SQLite orders them (its NULLs first). */
TW_PG_STMT(q_walk_disks,
           "DECLARE tw_sv_disks NO SCROLL CURSOR FOR "
           "SELECT v.id, v.name, v.resource_group, v.subscription_id, v.location, v.vm_size, "
           "v.tags, v.power_state, v.power_state_ms, d.id, d.name, d.role, d.lun, d.sku, d.tier, "
           "d.size_gib, d.max_shares, d.bursting, d.disk_state, o.sku, oa.policy FROM disks d "
           "JOIN vms v ON v.id = d.vm_id LEFT JOIN disk_originals o ON o.disk_id = d.id "
           "LEFT JOIN actions oa ON oa.id = o.action_id WHERE d.detached_ms IS NULL "
           "ORDER BY d.vm_id, d.position NULLS FIRST, d.lun NULLS FIRST, d.name, d.id");
TW_PG_STMT(q_walk_disks_fetch, FETCH_SQL("tw_sv_disks"));

/* Each VM's observations in [$1, $2) and the one in force at $1 (the
 * latest at or before it), for the VMs with attached disks, by VM. */
TW_PG_STMT(q_walk_power,
           "DECLARE tw_sv_power NO SCROLL CURSOR FOR "
           "SELECT p.vm_id, p.observed_ms, p.state FROM vms v CROSS JOIN LATERAL "
           "(SELECT coalesce(max(q.observed_ms), $1::bigint) AS lo FROM power_states q "
           "WHERE q.vm_id = v.id AND q.observed_ms <= $1::bigint) b "
           "JOIN power_states p ON p.vm_id = v.id AND p.observed_ms >= b.lo "
           "AND p.observed_ms < $2::bigint "
           "WHERE EXISTS (SELECT 1 FROM disks d WHERE d.vm_id = v.id AND d.detached_ms IS NULL) "
           "ORDER BY p.vm_id, p.observed_ms, p.id");
TW_PG_STMT(q_walk_power_fetch, FETCH_SQL("tw_sv_power"));

/* A history row is a change when the row before it (of that disk, by
 * observed_ms then id) has another SKU (ASCII case folded, as SQLite's
 * NOCASE: lower() under "C") or another tier (NULL is ""); a disk's first
 * row ever is none.  The span's rows of the attached disks with, before
 * them, the rows of each disk's last instant before the span (the last of
 * which is the first span row's predecessor), compared by lag(). */
TW_PG_STMT(q_walk_changes,
           "DECLARE tw_sv_changes NO SCROLL CURSOR FOR "
           "SELECT x.vm_id, x.disk_id, x.observed_ms, x.sku, x.tier FROM (SELECT d.vm_id, "
           "h.disk_id, h.observed_ms, h.id, h.sku, h.tier, lag(h.id) OVER w AS pid, "
           "lag(h.sku) OVER w AS psku, lag(coalesce(h.tier, '')) OVER w AS ptier "
           "FROM disks d CROSS JOIN LATERAL (SELECT max(q.observed_ms) AS lo "
           "FROM disk_sku_history q WHERE q.disk_id = d.id AND q.observed_ms < $1::bigint) b "
           "JOIN disk_sku_history h ON h.disk_id = d.id "
           "AND h.observed_ms >= coalesce(b.lo, $1::bigint) AND h.observed_ms < $2::bigint "
           "WHERE d.detached_ms IS NULL "
           "WINDOW w AS (PARTITION BY h.disk_id ORDER BY h.observed_ms, h.id)) x "
           "WHERE x.observed_ms >= $1::bigint AND x.pid IS NOT NULL "
           "AND (lower(x.sku) <> lower(x.psku) OR coalesce(x.tier, '') <> x.ptier) "
           "ORDER BY x.vm_id, x.disk_id, x.observed_ms, x.id");
TW_PG_STMT(q_walk_changes_fetch, FETCH_SQL("tw_sv_changes"));

TW_PG_STMT(q_close_disks, "CLOSE tw_sv_disks");
TW_PG_STMT(q_close_power, "CLOSE tw_sv_power");
TW_PG_STMT(q_close_changes, "CLOSE tw_sv_changes");

struct pg_sv_cursor {
    struct tw_store_sv_cursor base;
    struct tw_pg *pg;
    bool open_tx; /* the snapshot's transaction (or savepoint) is open */
    int declared; /* how many of the three cursors are declared */
    bool failed;  /* a statement failed: the transaction is undone */
    bool finished;
    struct tw_pg_feed disks, power, changes;
    struct tw_tag tags[TW_INV_MAX_TAGS];
    struct tw_store_sv_disk *d;
    size_t capd;
    struct tw_store_sv_power *p;
    size_t capp;
    struct tw_store_sv_change *c;
    size_t capc;
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

void tw_pg_savings_close(struct tw_store_sv_cursor *base)
{
    struct pg_sv_cursor *c = (struct pg_sv_cursor *)base;
    if (!c)
        return;
    tw_pg_feed_clear(&c->disks);
    tw_pg_feed_clear(&c->power);
    tw_pg_feed_clear(&c->changes);
    if (c->open_tx) {
        /* The cursors closed and the snapshot let go; after a failure the
         * transaction (or savepoint) is undone, which closes them too. */
        struct tw_pg_stmt *closes[] = {&q_close_disks, &q_close_power, &q_close_changes};
        for (int i = 0; !c->failed && i < c->declared; i++)
            if (tw_pg_run(c->pg, closes[i], NULL, NULL, "closing the fleet's walk", NULL) != TW_OK)
                c->failed = true;
        if (c->failed || tw_pg_commit(c->pg, "ending the fleet's walk", NULL) != TW_OK)
            tw_pg_rollback(c->pg);
    }
    free(c->d);
    free(c->p);
    free(c->c);
    free(c);
}

static void feed_init(struct tw_pg_feed *f, struct tw_pg *pg, struct tw_pg_stmt *fetch,
                      const char *what)
{
    memset(f, 0, sizeof(*f));
    f->pg = pg;
    f->fetch = fetch;
    f->batch = FETCH_BATCH;
    f->what = what;
}

enum tw_err tw_pg_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                               struct tw_store_sv_cursor **out, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct pg_sv_cursor *c = calloc(1, sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the fleet's disks");
    c->base.st = st;
    c->pg = pg;
    feed_init(&c->disks, pg, &q_walk_disks_fetch, "reading the fleet's disks");
    feed_init(&c->power, pg, &q_walk_power_fetch, "reading the fleet's power states");
    feed_init(&c->changes, pg, &q_walk_changes_fetch, "reading the fleet's SKU changes");
    /* One snapshot for the three cursors: REPEATABLE READ, but not READ
     * ONLY, since a caller may write on the handle while the walk is open
     * (an action recorded between two VMs), as SQLite's savepoint lets it:
     * the write goes with the walk's transaction, committed at its close. */
    bool own = pg->tx_depth == 0;
    enum tw_err rc = tw_pg_begin(pg, "starting to read the fleet", err);
    if (rc == TW_OK && own &&
        (rc = tw_pg_exec(pg, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                         "starting to read the fleet", err)) != TW_OK)
        tw_pg_rollback(pg);
    if (rc == TW_OK) {
        c->open_tx = true;
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, from_ms);
        tw_pg_p_int(&p, to_ms);
        rc = tw_pg_run(pg, &q_walk_disks, NULL, NULL, "opening the fleet's disks", err);
        if (rc != TW_OK && strcmp(pg->sqlstate, "42P03") == 0) {
            /* The cursors' names are fixed: one walk per handle at a time. */
            tw_error_clear(err);
            rc = tw_error_set(err, TW_EINVAL,
                              "%s: a savings walk is already open on this store handle; close "
                              "it before opening another",
                              pg->label);
        }
        if (rc == TW_OK) {
            c->declared = 1;
            rc = tw_pg_run(pg, &q_walk_power, &p, NULL, "opening the fleet's power states", err);
        }
        if (rc == TW_OK) {
            c->declared = 2;
            rc = tw_pg_run(pg, &q_walk_changes, &p, NULL, "opening the fleet's SKU changes", err);
        }
        if (rc == TW_OK)
            c->declared = 3;
        else
            c->failed = true;
    }
    if (rc != TW_OK) {
        tw_pg_savings_close(&c->base);
        return rc;
    }
    *out = &c->base;
    return TW_OK;
}

static void disk_from_row(const PGresult *r, int i, struct tw_store_sv_disk *d)
{
    memset(d, 0, sizeof(*d));
    d->id = tw_pg_int(r, i, 9);
    col_copy(d->name, sizeof(d->name), r, i, 10);
    d->role = strcmp(tw_pg_text(r, i, 11), "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = tw_pg_null(r, i, 12) ? -1 : (int)tw_pg_int(r, i, 12);
    col_copy(d->sku, sizeof(d->sku), r, i, 13);
    col_copy(d->tier, sizeof(d->tier), r, i, 14);
    d->size_gib = tw_pg_int(r, i, 15);
    d->attrs.max_shares = tw_pg_null(r, i, 16) ? 0 : tw_pg_int(r, i, 16);
    if (tw_pg_null(r, i, 17))
        d->attrs.bursting = TW_TRI_UNKNOWN;
    else
        d->attrs.bursting = tw_pg_int(r, i, 17) ? TW_TRI_YES : TW_TRI_NO;
    col_copy(d->attrs.disk_state, sizeof(d->attrs.disk_state), r, i, 18);
    col_copy(d->original_sku, sizeof(d->original_sku), r, i, 19);
    col_copy(d->original_policy, sizeof(d->original_policy), r, i, 20);
}

/* Moves feed F past the rows of VMs before VM_ID; *HAVE whether it is on
 * a row of VM_ID (its first column). */
static enum tw_err feed_to_vm(struct tw_pg_feed *f, int64_t vm_id, bool *have, struct tw_error *err)
{
    for (;;) {
        enum tw_err rc = tw_pg_feed_peek(f, have, err);
        if (rc != TW_OK || !*have)
            return rc;
        int64_t v = tw_pg_int(f->res, f->row, 0);
        if (v == vm_id)
            return TW_OK;
        if (v > vm_id) {
            *have = false;
            return TW_OK;
        }
        f->row++;
    }
}

static enum tw_err vm_history(struct pg_sv_cursor *c, int64_t vm_id, size_t *np, size_t *nc,
                              struct tw_error *err)
{
    *np = *nc = 0;
    bool have;
    enum tw_err rc;
    while ((rc = feed_to_vm(&c->power, vm_id, &have, err)) == TW_OK && have) {
        if (!grow((void **)&c->p, &c->capp, *np, sizeof(*c->p)))
            return tw_error_set(err, TW_ENOMEM, "out of memory reading power states");
        struct tw_store_sv_power *p = &c->p[(*np)++];
        p->at_ms = tw_pg_int(c->power.res, c->power.row, 1);
        col_copy(p->state, sizeof(p->state), c->power.res, c->power.row, 2);
        c->power.row++;
    }
    if (rc != TW_OK)
        return rc;
    while ((rc = feed_to_vm(&c->changes, vm_id, &have, err)) == TW_OK && have) {
        if (!grow((void **)&c->c, &c->capc, *nc, sizeof(*c->c)))
            return tw_error_set(err, TW_ENOMEM, "out of memory reading SKU changes");
        struct tw_store_sv_change *h = &c->c[(*nc)++];
        const PGresult *r = c->changes.res;
        int i = c->changes.row;
        h->disk_id = tw_pg_int(r, i, 1);
        h->at_ms = tw_pg_int(r, i, 2);
        col_copy(h->sku, sizeof(h->sku), r, i, 3);
        col_copy(h->tier, sizeof(h->tier), r, i, 4);
        c->changes.row++;
    }
    return rc;
}

enum tw_err tw_pg_savings_next(struct tw_store_sv_cursor *base, struct tw_store_sv_vm *vm,
                               bool *done, struct tw_error *err)
{
    struct pg_sv_cursor *c = (struct pg_sv_cursor *)base;
    *done = true;
    if (c->finished)
        return TW_OK;
    bool have;
    enum tw_err rc = tw_pg_feed_peek(&c->disks, &have, err);
    if (rc != TW_OK || !have) {
        c->finished = true;
        c->failed = c->failed || rc != TW_OK;
        return rc;
    }
    struct tw_store_sv_vm v;
    memset(&v, 0, sizeof(v));
    const PGresult *r = c->disks.res;
    int i = c->disks.row;
    v.id = tw_pg_int(r, i, 0);
    col_copy(v.name, sizeof(v.name), r, i, 1);
    col_copy(v.resource_group, sizeof(v.resource_group), r, i, 2);
    col_copy(v.subscription_id, sizeof(v.subscription_id), r, i, 3);
    col_copy(v.location, sizeof(v.location), r, i, 4);
    col_copy(v.vm_size, sizeof(v.vm_size), r, i, 5);
    v.n_tags = tw_sq_tags_parse(tw_pg_null(r, i, 6) ? NULL : tw_pg_text(r, i, 6), c->tags);
    col_copy(v.power_state, sizeof(v.power_state), r, i, 7);
    v.power_state_ms = tw_pg_null(r, i, 8) ? 0 : tw_pg_int(r, i, 8);
    size_t nd = 0;
    for (;;) {
        if (!grow((void **)&c->d, &c->capd, nd, sizeof(*c->d))) {
            c->finished = true;
            return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
        }
        disk_from_row(c->disks.res, c->disks.row, &c->d[nd++]);
        c->disks.row++;
        rc = tw_pg_feed_peek(&c->disks, &have, err);
        if (rc != TW_OK) {
            c->finished = c->failed = true;
            return rc;
        }
        if (!have || tw_pg_int(c->disks.res, c->disks.row, 0) != v.id)
            break;
    }
    size_t np, nc;
    rc = vm_history(c, v.id, &np, &nc, err);
    if (rc != TW_OK) {
        c->finished = true;
        c->failed = c->failed || rc != TW_ENOMEM;
        return rc;
    }
    v.tags = c->tags;
    v.disks = c->d;
    v.n_disks = nd;
    v.power = c->p;
    v.n_power = np;
    v.changes = c->c;
    v.n_changes = nc;
    *vm = v;
    *done = false;
    return TW_OK;
}

TW_PG_STMT(q_currencies, "SELECT DISTINCT currency FROM price_books ORDER BY currency");

enum tw_err tw_pg_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max, size_t *n,
                                       struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    PGresult *r;
    enum tw_err rc =
        tw_pg_run(pg, &q_currencies, NULL, &r, "listing the price books' currencies", err);
    if (rc != TW_OK)
        return rc;
    size_t k = (size_t)PQntuples(r);
    for (size_t i = 0; i < k && i < max; i++)
        snprintf(out[i], sizeof(out[i]), "%s", tw_pg_text(r, (int)i, 0));
    PQclear(r);
    *n = k;
    return TW_OK;
}
