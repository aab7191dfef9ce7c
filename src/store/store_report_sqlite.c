/*
 * store_report_sqlite.c - what the monthly report reads besides the fleet walk
 * (store.h "the monthly report's reads"), from SQLite in one read
 * transaction: each disk's SKU in force at the month's start, the SKU
 * history inside the month, the done disk actions with the instant each
 * was verified (the action log), each disk's last done action before the
 * month, every action of the report's week, and the currency's books.
 *
 * The action log's instants are text ("2026-11-06T20:00:00.000Z", the
 * store writes them so): the queries bound them by text a second wider
 * than asked and the exact instant is parsed and compared here.
 */
#include "store/store_sqlite.h"
#include "store/store_shared.h"

#include "core/time.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum tw_err prep(struct tw_sqlite *s, const char *sql, sqlite3_stmt **q, const char *what,
                        struct tw_error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, q, NULL) != SQLITE_OK) {
        *q = NULL;
        return tw_sq_fail(s, NULL, err, what);
    }
    return TW_OK;
}

static const char at_start_sql[] =
    "SELECT disk_id, max(observed_ms), sku, coalesce(tier, ''), size_gib FROM disk_sku_history "
    "WHERE observed_ms <= ?1 GROUP BY disk_id ORDER BY disk_id";
static const char later_sql[] =
    "SELECT disk_id FROM disk_sku_history GROUP BY disk_id HAVING min(observed_ms) >= ?1 "
    "ORDER BY disk_id";
static const char changes_sql[] =
    "SELECT disk_id, observed_ms, sku, coalesce(tier, ''), size_gib FROM disk_sku_history "
    "WHERE observed_ms > ?1 AND observed_ms < ?2 ORDER BY disk_id, observed_ms, id";
/* The log is scanned in its order and each action found by its key (CROSS
 * JOIN keeps that order): the other way round, a month of a large fleet's
 * actions each looks its moves up by index, ten times slower. */
/* Every verified move up to the period's end, in one scan (the log has no
 * index by time): those in the period, and before it each disk's last. */
static const char actions_sql[] =
    "SELECT a.id, coalesce(a.vm_id, (SELECT d.vm_id FROM disks d WHERE d.id = a.disk_id), 0), "
    "coalesce(a.disk_id, 0), a.kind, coalesce(a.from_sku, ''), coalesce(a.to_sku, ''), "
    "coalesce(a.policy, ''), t.at, a.state FROM action_transitions t CROSS JOIN actions a ON "
    "a.id = t.action_id WHERE t.to_state = 'verified' AND t.at < ?1 AND a.dry_run = 0";
/* The week's actions never verified: due in it (by the due index, state by
 * state), or without a due time last moved in it.  Those verified in it
 * come with the month's (actions_sql). */
#define MARKS_COLS                                                                          \
    "SELECT a.id, coalesce(a.vm_id, d.vm_id, 0), coalesce(a.disk_id, 0), a.kind, "           \
    "coalesce(a.to_sku, ''), a.state, a.due_ms, coalesce(a.updated_at, a.requested_at) FROM " \
    "actions a LEFT JOIN disks d ON d.id = a.disk_id WHERE a.dry_run = 0 AND NOT EXISTS "    \
    "(SELECT 1 FROM action_transitions t WHERE t.action_id = a.id AND t.to_state = "         \
    "'verified') AND "
static const char marks_due_sql[] =
    MARKS_COLS "a.state IN ('planned', 'checked', 'sent', 'skipped', 'failed') AND "
    "a.due_ms >= ?1 AND a.due_ms < ?2 UNION ALL " MARKS_COLS "a.due_ms IS NULL AND "
    "coalesce(a.updated_at, a.requested_at) >= ?3 AND coalesce(a.updated_at, "
    "a.requested_at) < ?4";
static const char books_sql[] =
    "SELECT id, region, source, fetched_at FROM price_books WHERE currency = ?1 "
    "ORDER BY region, fetched_ms, id";

static enum tw_err read_skus(struct tw_sqlite *s, struct tw_store_report *r,
                             struct tw_sh_itab *scap, const char *sql, int64_t a, int64_t b,
                             struct tw_store_rp_sku **out, size_t *n, struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, sql, &q, "preparing to read the SKU history", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, a);
    sqlite3_bind_int64(q, 2, b);
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        struct tw_store_rp_sku *x = tw_sh_grow((void **)out, *n, &cap, sizeof(**out));
        if (!x) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the SKU history");
            break;
        }
        memset(x, 0, sizeof(*x));
        x->disk_id = sqlite3_column_int64(q, 0);
        x->at_ms = sqlite3_column_int64(q, 1);
        x->size_gib = sqlite3_column_int64(q, 4);
        if ((rc = tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, 2), &x->sku, err)) ||
            (rc = tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, 3), &x->tier, err)))
            break;
        (*n)++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the SKU history");
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err mark_add(struct tw_store_report *r, size_t *capm, struct tw_sh_itab *scap,
                            sqlite3_stmt *q, int kind_col, int to_col, int state_col, int64_t at,
                            struct tw_error *err)
{
    struct tw_store_rp_mark *m = tw_sh_grow((void **)&r->marks, r->n_marks, capm, sizeof(*m));
    if (!m)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the week's actions");
    memset(m, 0, sizeof(*m));
    m->id = sqlite3_column_int64(q, 0);
    m->vm_id = sqlite3_column_int64(q, 1);
    m->disk_id = sqlite3_column_int64(q, 2);
    m->at_ns = at;
    tw_sq_copy(q, kind_col, m->kind, sizeof(m->kind));
    tw_sq_copy(q, state_col, m->state, sizeof(m->state));
    enum tw_err rc =
        tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, to_col), &m->to_sku, err);
    if (rc == TW_OK)
        r->n_marks++;
    return rc;
}

static int action_cmp(const void *a, const void *b);

/* Keeps, of the N before-rows V (by disk), each disk's last one. */
static size_t last_per_disk(struct tw_store_rp_action *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof(*v), action_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && v[i + 1].disk_id == v[i].disk_id)
            continue;
        v[k++] = v[i];
    }
    return k;
}

/* The verified moves up to TO_NS (the text B a second later bounds the
 * scan): the done disk switches of [FROM_NS, TO_NS) into R's actions and
 * each disk's last one before FROM_NS (before true), and every action
 * verified in [MARK_FROM, MARK_TO) into R's marks. */
static enum tw_err read_actions(struct tw_sqlite *s, struct tw_store_report *r, size_t *cap,
                                struct tw_sh_itab *scap, const char *b, int64_t from_ns,
                                int64_t to_ns, size_t *capm, int64_t mark_from, int64_t mark_to,
                                struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, actions_sql, &q, "preparing to read the actions", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_text(q, 1, b, -1, SQLITE_STATIC);
    struct tw_store_rp_action *bef = NULL;
    size_t nb = 0, capb = 0, compact_at = (size_t)1 << 18;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        const char *at = (const char *)sqlite3_column_text(q, 7);
        int64_t ns;
        struct tw_error perr = {0};
        if (!at || tw_rfc3339_parse(at, strlen(at), &ns, &perr) != TW_OK) {
            rc = tw_error_set(err, TW_EPARSE,
                              "action %lld's verified time \"%.40s\" in the action log is not "
                              "an RFC 3339 time: the store is damaged (tierwise actions shows it)",
                              (long long)sqlite3_column_int64(q, 0), at ? at : "");
            break;
        }
        if (ns >= to_ns)
            continue;
        bool before = ns < from_ns;
        if (!before && ns >= mark_from && ns < mark_to &&
            (rc = mark_add(r, capm, scap, q, 3, 5, 8, ns, err)) != TW_OK)
            break;
        const char *kind = (const char *)sqlite3_column_text(q, 3);
        const char *state = (const char *)sqlite3_column_text(q, 8);
        if (sqlite3_column_int64(q, 2) <= 0 || !kind || !state || strcmp(state, "done") != 0 ||
            (strcmp(kind, "downgrade") != 0 && strcmp(kind, "upgrade") != 0))
            continue;
        if (before && nb == compact_at) {
            nb = last_per_disk(bef, nb);
            if (nb * 2 > compact_at)
                compact_at *= 2;
        }
        struct tw_store_rp_action *x =
            before ? tw_sh_grow((void **)&bef, nb, &capb, sizeof(*bef))
                   : tw_sh_grow((void **)&r->actions, r->n_actions, cap, sizeof(*r->actions));
        if (!x) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
            break;
        }
        memset(x, 0, sizeof(*x));
        x->id = sqlite3_column_int64(q, 0);
        x->vm_id = sqlite3_column_int64(q, 1);
        x->disk_id = sqlite3_column_int64(q, 2);
        x->downgrade = strcmp(kind, "downgrade") == 0;
        x->verified_ns = ns;
        x->before = before;
        if ((rc = tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, 4), &x->from_sku,
                               err)) ||
            (rc =
                 tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, 5), &x->to_sku, err)) ||
            (rc = tw_sh_intern(r, scap, (const char *)sqlite3_column_text(q, 6), &x->policy, err)))
            break;
        if (before)
            nb++;
        else
            r->n_actions++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the actions");
    sqlite3_finalize(q);
    if (rc == TW_OK && (nb = last_per_disk(bef, nb)) > 0) {
        struct tw_store_rp_action *nv =
            realloc(r->actions, (r->n_actions + nb) * sizeof(*r->actions));
        if (!nv) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
        } else {
            r->actions = nv;
            memcpy(r->actions + r->n_actions, bef, nb * sizeof(*bef));
            r->n_actions += nb;
        }
    }
    free(bef);
    return rc;
}

static enum tw_err read_marks(struct tw_sqlite *s, struct tw_store_report *r, const char *sql,
                              size_t *capm, struct tw_sh_itab *scap, int64_t from_ns, int64_t to_ns,
                              struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, sql, &q, "preparing to read the week's actions", err);
    if (rc != TW_OK)
        return rc;
    char a[40], b[40];
    tw_sh_text_at(from_ns - TW_NS_PER_S, a, sizeof(a));
    tw_sh_text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
    sqlite3_bind_int64(q, 1, tw_sh_ns_to_ms(from_ns));
    sqlite3_bind_int64(q, 2, tw_sh_ns_to_ms(to_ns) + 1);
    sqlite3_bind_text(q, 3, a, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, b, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t at = INT64_MIN;
        if (sqlite3_column_type(q, 6) != SQLITE_NULL &&
            !tw_ms_to_ns(sqlite3_column_int64(q, 6), &at))
            at = INT64_MIN;
        const char *u = (const char *)sqlite3_column_text(q, 7);
        if (at == INT64_MIN && u && tw_rfc3339_parse(u, strlen(u), &at, NULL) != TW_OK)
            at = INT64_MIN;
        if (at < from_ns || at >= to_ns)
            continue;
        if ((rc = mark_add(r, capm, scap, q, 3, 4, 5, at, err)) != TW_OK)
            break;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the week's actions");
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err read_later(struct tw_sqlite *s, struct tw_store_report *r, int64_t to_ms,
                              struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, later_sql, &q, "preparing to read the disks first seen later", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, to_ms);
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t *x = tw_sh_grow((void **)&r->later, r->n_later, &cap, sizeof(*r->later));
        if (!x) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the disks first seen later");
            break;
        }
        *x = sqlite3_column_int64(q, 0);
        r->n_later++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the disks first seen later");
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err read_books(struct tw_sqlite *s, struct tw_store_report *r,
                              const char *currency, struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, books_sql, &q, "preparing to read the price books", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_text(q, 1, currency, -1, SQLITE_STATIC);
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        struct tw_store_rp_book *b = tw_sh_grow((void **)&r->books, r->n_books, &cap, sizeof(*b));
        if (!b) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the price books");
            break;
        }
        memset(b, 0, sizeof(*b));
        b->id = sqlite3_column_int64(q, 0);
        tw_sq_copy(q, 1, b->region, sizeof(b->region));
        tw_sq_copy(q, 2, b->source, sizeof(b->source));
        tw_sq_copy(q, 3, b->fetched_at, sizeof(b->fetched_at));
        if (tw_rfc3339_parse(b->fetched_at, strlen(b->fetched_at), &b->fetched_ns, NULL) != TW_OK)
            b->fetched_ns = INT64_MIN;
        r->n_books++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the price books");
    sqlite3_finalize(q);
    return rc;
}

static int action_cmp(const void *a, const void *b)
{
    const struct tw_store_rp_action *x = a, *y = b;
    if (x->disk_id != y->disk_id)
        return x->disk_id < y->disk_id ? -1 : 1;
    if (x->before != y->before)
        return x->before ? -1 : 1;
    if (x->verified_ns != y->verified_ns)
        return x->verified_ns < y->verified_ns ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

enum tw_err tw_sq_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                                 int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                                 struct tw_store_report *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    if (to_ns < from_ns || mark_to_ns < mark_from_ns)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    if (!currency)
        currency = "";
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    /* A savepoint: a read transaction of its own, or a part of the
     * caller's (tw_store_report_begin). */
    if (sqlite3_exec(s->db, "SAVEPOINT report_read", NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "starting to read the month");
    int64_t from_ms = tw_sh_ns_to_ms(from_ns), to_ms = tw_sh_ns_to_ms(to_ns) + 1;
    char b[40];
    size_t acap = 0, mcap = 0;
    struct tw_sh_itab *scap = calloc(1, sizeof(*scap));
    if (!scap || !(out->strs = calloc(16, sizeof(*out->strs)))) {
        free(scap);
        sqlite3_exec(s->db, "RELEASE report_read", NULL, NULL, NULL);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the month");
    }
    scap->cap = 16;
    out->n_strs = 1; /* "" */
    enum tw_err rc = read_skus(s, out, scap, at_start_sql, from_ms, 0, &out->at_start,
                               &out->n_at_start, err);
    if (rc == TW_OK)
        rc = read_skus(s, out, scap, changes_sql, from_ms, to_ms, &out->changes,
                       &out->n_changes, err);
    if (rc == TW_OK) {
        tw_sh_text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
        rc = read_actions(s, out, &acap, scap, b, from_ns, to_ns, &mcap, mark_from_ns,
                          mark_to_ns, err);
    }
    if (rc == TW_OK)
        rc = read_marks(s, out, marks_due_sql, &mcap, scap, mark_from_ns, mark_to_ns, err);
    if (rc == TW_OK)
        rc = read_books(s, out, currency, err);
    if (rc == TW_OK)
        rc = read_later(s, out, tw_sh_ns_to_ms(to_ns) + (tw_floor_mod(to_ns, TW_NS_PER_MS) != 0),
                        err);
    sqlite3_exec(s->db, "RELEASE report_read", NULL, NULL, NULL);
    free(scap);
    if (rc != TW_OK) {
        tw_store_report_free(out);
        return rc;
    }
    if (out->n_actions)
        qsort(out->actions, out->n_actions, sizeof(*out->actions), action_cmp);
    if (out->n_marks)
        qsort(out->marks, out->n_marks, sizeof(*out->marks), tw_sh_mark_cmp);
    return TW_OK;
}

enum tw_err tw_sq_report_book_items(struct tw_store *st, int64_t id, char **items,
                                       size_t *len, struct tw_error *err)
{
    *items = NULL;
    *len = 0;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, "SELECT items FROM price_books WHERE id = ?1", &q,
                          "preparing to read a price book", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, id);
    int step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
        const void *t = sqlite3_column_text(q, 0);
        size_t n = (size_t)sqlite3_column_bytes(q, 0);
        char *p = malloc(n + 1);
        if (!p) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading a price book");
        } else {
            if (n)
                memcpy(p, t, n);
            p[n] = '\0';
            *items = p;
            *len = n;
        }
    } else if (step == SQLITE_DONE) {
        rc = tw_error_set(err, TW_ENOENT, "no stored price book %lld", (long long)id);
    } else {
        rc = tw_sq_fail(s, NULL, err, "reading a price book");
    }
    sqlite3_finalize(q);
    return rc;
}

/* ---- one snapshot ---- */

enum tw_err tw_sq_report_begin(struct tw_store *st, struct tw_error *err)
{
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    if (sqlite3_exec(s->db, "SAVEPOINT monthly_report", NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "starting to read the month");
    return TW_OK;
}

void tw_sq_report_end(struct tw_store *st)
{
    if (!st)
        return;
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    /* Only when the savepoint is open (a failed begin left none). */
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "RELEASE monthly_report", NULL, NULL, NULL);
}

enum tw_err tw_sq_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                     struct tw_error *err)
{
    *n = 0;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, "SELECT count(*) FROM disks WHERE detached_ms IS NULL OR "
                          "detached_ms > ?1", &q, "counting the attached disks", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_int64(q, 1, from_ms);
    if (sqlite3_step(q) == SQLITE_ROW)
        *n = sqlite3_column_int64(q, 0);
    else
        rc = tw_sq_fail(s, NULL, err, "counting the attached disks");
    sqlite3_finalize(q);
    return rc;
}

/* ---- the fleet walk ---- */

#define FLEET_DISKS                                                                          \
    "SELECT v.id, v.name, v.resource_group, v.subscription_id, v.location, v.vm_size, v.tags, "  \
    "d.id, d.name, d.role, d.lun, d.sku, d.tier, d.size_gib, d.managed_disk_id, "                \
    "coalesce(d.detached_ms, 0) FROM disks d JOIN vms v ON v.id = d.vm_id WHERE "                \
    "(d.detached_ms IS NULL OR d.detached_ms > :from) "
#define FLEET_ORDER " ORDER BY d.vm_id, d.position, d.lun, d.name, d.id"
static const char fleet_disks_sql[] = FLEET_DISKS FLEET_ORDER;
static const char vm_disks_sql[] = FLEET_DISKS "AND d.vm_id = :vm" FLEET_ORDER;

/* The observations in [?2, ?3) and the one in force at ?2 (the walk's). */
static const char fleet_power_sql[] =
    "SELECT observed_ms, state FROM power_states WHERE vm_id = ?1 AND observed_ms < ?3 AND "
    "observed_ms >= coalesce((SELECT max(observed_ms) FROM power_states WHERE vm_id = ?1 AND "
    "observed_ms <= ?2), ?2) ORDER BY observed_ms, id";

struct sq_rp_cursor {
    struct tw_store_rp_cursor base;
    struct tw_sqlite *s;
    sqlite3_stmt *disks, *power;
    int64_t from_ms, to_ms;
    bool open_tx, pending, finished;
    struct tw_tag tags[TW_INV_MAX_TAGS];
    struct tw_store_sv_disk *d;
    size_t nd, capd;
    char **ids;                    /* per disk, malloc'd */
    int64_t *det;                  /* per disk (capi of them) */
    size_t capi;
    struct tw_store_sv_power *p;
    size_t np, capp;
};

static void fleet_close(struct sq_rp_cursor *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->disks);
    sqlite3_finalize(c->power);
    if (c->open_tx)
        sqlite3_exec(c->s->db, "RELEASE report_fleet", NULL, NULL, NULL);
    for (size_t i = 0; i < c->capi; i++)
        free(c->ids[i]);
    free(c->ids);
    free(c->det);
    free(c->d);
    free(c->p);
    free(c);
}

enum tw_err tw_sq_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                    int64_t vm_id, struct tw_store_rp_cursor **out,
                                       struct tw_error *err)
{
    *out = NULL;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    if (to_ms < from_ms)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    struct sq_rp_cursor *c = calloc(1, sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the fleet's disks");
    c->base.st = st;
    c->s = (struct tw_sqlite *)st;
    c->from_ms = from_ms;
    c->to_ms = to_ms;
    enum tw_err rc = TW_OK;
    if (sqlite3_exec(c->s->db, "SAVEPOINT report_fleet", NULL, NULL, NULL) != SQLITE_OK)
        rc = tw_sq_fail(c->s, NULL, err, "starting to read the fleet");
    else
        c->open_tx = true;
    if (rc == TW_OK)
        rc = prep(c->s, vm_id > 0 ? vm_disks_sql : fleet_disks_sql, &c->disks,
                  "preparing to read the fleet's disks", err);
    if (rc == TW_OK && vm_id > 0)
        sqlite3_bind_int64(c->disks, sqlite3_bind_parameter_index(c->disks, ":vm"), vm_id);
    if (rc == TW_OK)
        sqlite3_bind_int64(c->disks, sqlite3_bind_parameter_index(c->disks, ":from"), from_ms);
    if (rc == TW_OK)
        rc = prep(c->s, fleet_power_sql, &c->power, "preparing to read the fleet's disks", err);
    if (rc != TW_OK) {
        fleet_close(c);
        return rc;
    }
    *out = &c->base;
    return TW_OK;
}

static enum tw_err fleet_disk(struct sq_rp_cursor *c, sqlite3_stmt *q, struct tw_error *err)
{
    struct tw_store_sv_disk *d = tw_sh_grow((void **)&c->d, c->nd, &c->capd, sizeof(*c->d));
    if (!d)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
    if (c->nd >= c->capi) {
        size_t nc = c->capd;
        char **ni = realloc(c->ids, nc * sizeof(*ni));
        if (ni)
            c->ids = ni;
        int64_t *nd = realloc(c->det, nc * sizeof(*nd));
        if (nd)
            c->det = nd;
        if (!ni || !nd)
            return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
        for (size_t i = c->capi; i < nc; i++)
            ni[i] = NULL;
        c->capi = nc;
    }
    memset(d, 0, sizeof(*d));
    d->id = sqlite3_column_int64(q, 7);
    tw_sq_copy(q, 8, d->name, sizeof(d->name));
    const char *role = (const char *)sqlite3_column_text(q, 9);
    d->role = role && strcmp(role, "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = sqlite3_column_type(q, 10) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 10);
    tw_sq_copy(q, 11, d->sku, sizeof(d->sku));
    tw_sq_copy(q, 12, d->tier, sizeof(d->tier));
    d->size_gib = sqlite3_column_int64(q, 13);
    const char *rid = (const char *)sqlite3_column_text(q, 14);
    size_t len = rid ? strlen(rid) : 0;
    char *p = realloc(c->ids[c->nd], len + 1);
    if (!p)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
    if (len)
        memcpy(p, rid, len);
    p[len] = '\0';
    c->ids[c->nd] = p;
    c->det[c->nd] = sqlite3_column_int64(q, 15);
    c->nd++;
    return TW_OK;
}

enum tw_err tw_sq_report_fleet_next(struct tw_store_rp_cursor *bc, struct tw_store_rp_vm *out,
                                    bool *done, struct tw_error *err)
{
    struct sq_rp_cursor *c = (struct sq_rp_cursor *)bc;
    *done = true;
    tw_error_clear(err);
    if (!c)
        return tw_error_set(err, TW_EINVAL, "%s: the walk is not open", __func__);
    if (c->finished)
        return TW_OK;
    sqlite3_stmt *q = c->disks;
    int rc = c->pending ? SQLITE_ROW : sqlite3_step(q);
    c->pending = false;
    if (rc == SQLITE_DONE) {
        c->finished = true;
        return TW_OK;
    }
    if (rc != SQLITE_ROW) {
        c->finished = true;
        return tw_sq_fail(c->s, NULL, err, "reading the fleet's disks");
    }
    struct tw_store_rp_vm o;
    memset(&o, 0, sizeof(o));
    struct tw_store_sv_vm *v = &o.vm;
    v->id = sqlite3_column_int64(q, 0);
    tw_sq_copy(q, 1, v->name, sizeof(v->name));
    tw_sq_copy(q, 2, v->resource_group, sizeof(v->resource_group));
    tw_sq_copy(q, 3, v->subscription_id, sizeof(v->subscription_id));
    tw_sq_copy(q, 4, v->location, sizeof(v->location));
    tw_sq_copy(q, 5, v->vm_size, sizeof(v->vm_size));
    v->n_tags = tw_sq_tags_parse((const char *)sqlite3_column_text(q, 6), c->tags);
    c->nd = 0;
    enum tw_err e;
    for (;;) {
        if ((e = fleet_disk(c, q, err)) != TW_OK) {
            c->finished = true;
            return e;
        }
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW && sqlite3_column_int64(q, 0) == v->id)
            continue;
        if (rc == SQLITE_ROW) {
            c->pending = true;
        } else {
            c->finished = true;
            if (rc != SQLITE_DONE)
                return tw_sq_fail(c->s, NULL, err, "reading the fleet's disks");
        }
        break;
    }
    c->np = 0;
    sqlite3_bind_int64(c->power, 1, v->id);
    sqlite3_bind_int64(c->power, 2, c->from_ms);
    sqlite3_bind_int64(c->power, 3, c->to_ms);
    while ((rc = sqlite3_step(c->power)) == SQLITE_ROW) {
        struct tw_store_sv_power *p = tw_sh_grow((void **)&c->p, c->np, &c->capp, sizeof(*c->p));
        if (!p) {
            sqlite3_reset(c->power);
            c->finished = true;
            return tw_error_set(err, TW_ENOMEM, "out of memory reading power states");
        }
        p->at_ms = sqlite3_column_int64(c->power, 0);
        tw_sq_copy(c->power, 1, p->state, sizeof(p->state));
        c->np++;
    }
    sqlite3_reset(c->power);
    if (rc != SQLITE_DONE) {
        c->finished = true;
        return tw_sq_fail(c->s, NULL, err, "reading a VM's power states");
    }
    v->tags = c->tags;
    v->disks = c->d;
    v->n_disks = c->nd;
    v->power = c->p;
    v->n_power = c->np;
    o.resource_ids = (const char *const *)c->ids;
    o.detached_ms = c->det;
    *out = o;
    *done = false;
    return TW_OK;
}

void tw_sq_report_fleet_close(struct tw_store_rp_cursor *c)
{
    fleet_close((struct sq_rp_cursor *)c);
}
