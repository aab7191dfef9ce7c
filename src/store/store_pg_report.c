/*
 * store_pg_report.c - the monthly report's reads from PostgreSQL, as
 * store_report_sqlite.c reads them from SQLite (store.h "the monthly
 * report's reads"): each disk's SKU in force at the month's start, the
 * SKU history inside the month, the done disk actions with the instant
 * each was verified (the action log), each disk's last done action before
 * the month, every action of the report's week, the currency's books; and
 * the report's fleet walk.
 *
 * One snapshot: tw_pg_report_begin opens a REPEATABLE READ, READ ONLY
 * transaction (or a savepoint in the caller's), so that everything read
 * until tw_pg_report_end sees one state of the database while other
 * backends write; each read and the walk nest in it as savepoints, and
 * outside it take a snapshot of their own (tw_pg_begin_read).
 *
 * Memory as in SQLite: the action log and the fleet walk are read through
 * server-side cursors a batch at a time (struct tw_pg_feed), the walk
 * merging its disks and power states VM by VM.
 *
 * The action log's instants are text ("2026-11-06T20:00:00.000Z"): the
 * queries bound them by text a second wider than asked and the exact
 * instant is parsed and compared here.
 */
#include "store/store_pg.h"
#include "store/store_shared.h"

#include "core/time.h"
#include "store/store_sqlite.h" /* tw_sq_tags_parse: one reader of a VM's stored tags */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_BATCH 1000
#define FETCH_SQL(cursor) "FETCH 1000 FROM " cursor

/* Column COL's text into OUT (LEN bytes, cut to fit byte for byte, as
 * the SQLite store's copies cut). */
static void col_copy(char *out, size_t len, const PGresult *r, int row, int col)
{
    snprintf(out, len, "%s", tw_pg_text(r, row, col));
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

/* Ends a read begun with tw_pg_begin_read: kept (released) when RC is
 * TW_OK, else undone; RC, or the end's own failure. */
static enum tw_err end_read(struct tw_pg *pg, enum tw_err rc, const char *what,
                            struct tw_error *err)
{
    if (rc != TW_OK) {
        tw_pg_rollback(pg);
        return rc;
    }
    return tw_pg_commit(pg, what, err);
}

/* ---- the read's string table ---- */

/* ---- the month's rows ---- */

/* Each disk's newest row at or before $1; of rows at one instant the
 * first stored (as SQLite's max() keeps the first row reaching it). */
TW_PG_STMT(q_at_start,
           "SELECT DISTINCT ON (disk_id) disk_id, observed_ms, sku, coalesce(tier, ''), "
           "size_gib FROM disk_sku_history WHERE observed_ms <= $1::bigint "
           "ORDER BY disk_id, observed_ms DESC, id");
TW_PG_STMT(q_later, "SELECT disk_id FROM disk_sku_history GROUP BY disk_id "
                    "HAVING min(observed_ms) >= $1::bigint ORDER BY disk_id");
TW_PG_STMT(q_changes,
           "SELECT disk_id, observed_ms, sku, coalesce(tier, ''), size_gib FROM disk_sku_history "
           "WHERE observed_ms > $1::bigint AND observed_ms < $2::bigint "
           "ORDER BY disk_id, observed_ms, id");
/* Every verified move up to the period's end, in the log's order, through
 * a cursor: those in the period, and before it each disk's last. */
TW_PG_STMT(q_actions,
           "DECLARE tw_rp_actions NO SCROLL CURSOR FOR "
           "SELECT a.id, coalesce(a.vm_id, (SELECT d.vm_id FROM disks d WHERE d.id = a.disk_id), "
           "0), coalesce(a.disk_id, 0), a.kind, coalesce(a.from_sku, ''), coalesce(a.to_sku, ''), "
           "coalesce(a.policy, ''), t.at, a.state FROM action_transitions t JOIN actions a ON "
           "a.id = t.action_id WHERE t.to_state = 'verified' AND t.at < $1::text "
           "AND a.dry_run = 0 ORDER BY t.id");
TW_PG_STMT(q_actions_fetch, FETCH_SQL("tw_rp_actions"));
TW_PG_STMT(q_actions_close, "CLOSE tw_rp_actions");
/* The week's actions never verified: due in it, or without a due time
 * last moved in it.  Those verified in it come with the month's. */
#define MARKS_COLS                                                                                 \
    "SELECT a.id, coalesce(a.vm_id, d.vm_id, 0), coalesce(a.disk_id, 0), a.kind, "                 \
    "coalesce(a.to_sku, ''), a.state, a.due_ms, coalesce(a.updated_at, a.requested_at) FROM "      \
    "actions a LEFT JOIN disks d ON d.id = a.disk_id WHERE a.dry_run = 0 AND NOT EXISTS "          \
    "(SELECT 1 FROM action_transitions t WHERE t.action_id = a.id AND t.to_state = "               \
    "'verified') AND "
TW_PG_STMT(q_marks,
           MARKS_COLS "a.state IN ('planned', 'checked', 'sent', 'skipped', 'failed') AND "
                      "a.due_ms >= $1::bigint AND a.due_ms < $2::bigint UNION ALL " MARKS_COLS
                      "a.due_ms IS NULL AND coalesce(a.updated_at, a.requested_at) >= $3::text AND "
                      "coalesce(a.updated_at, a.requested_at) < $4::text");
TW_PG_STMT(q_books, "SELECT id, region, source, fetched_at FROM price_books "
                    "WHERE currency = $1 ORDER BY region, fetched_ms NULLS FIRST, id");

static enum tw_err read_skus(struct tw_pg *pg, struct tw_store_report *r, struct tw_sh_itab *scap,
                             struct tw_pg_stmt *q, int64_t a, int64_t b, bool two,
                             struct tw_store_rp_sku **out, size_t *n, struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, a);
    if (two)
        tw_pg_p_int(&p, b);
    PGresult *res;
    enum tw_err rc = tw_pg_run(pg, q, &p, &res, "reading the SKU history", err);
    if (rc != TW_OK)
        return rc;
    int rows = PQntuples(res);
    size_t cap = 0;
    for (int i = 0; i < rows; i++) {
        struct tw_store_rp_sku *x = tw_sh_grow((void **)out, *n, &cap, sizeof(**out));
        if (!x) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the SKU history");
            break;
        }
        memset(x, 0, sizeof(*x));
        x->disk_id = tw_pg_int(res, i, 0);
        x->at_ms = tw_pg_int(res, i, 1);
        x->size_gib = tw_pg_int(res, i, 4);
        if ((rc = tw_sh_intern(r, scap, tw_pg_text(res, i, 2), &x->sku, err)) ||
            (rc = tw_sh_intern(r, scap, tw_pg_text(res, i, 3), &x->tier, err)))
            break;
        (*n)++;
    }
    PQclear(res);
    return rc;
}

static enum tw_err mark_add(struct tw_store_report *r, size_t *capm, struct tw_sh_itab *scap,
                            const PGresult *res, int i, int kind_col, int to_col, int state_col,
                            int64_t at, struct tw_error *err)
{
    struct tw_store_rp_mark *m = tw_sh_grow((void **)&r->marks, r->n_marks, capm, sizeof(*m));
    if (!m)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the week's actions");
    memset(m, 0, sizeof(*m));
    m->id = tw_pg_int(res, i, 0);
    m->vm_id = tw_pg_int(res, i, 1);
    m->disk_id = tw_pg_int(res, i, 2);
    m->at_ns = at;
    col_copy(m->kind, sizeof(m->kind), res, i, kind_col);
    col_copy(m->state, sizeof(m->state), res, i, state_col);
    enum tw_err rc = tw_sh_intern(r, scap, tw_pg_text(res, i, to_col), &m->to_sku, err);
    if (rc == TW_OK)
        r->n_marks++;
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

/* The action log's row I of RES: the done disk switches of [FROM_NS,
 * TO_NS) into R's actions and the ones before FROM_NS into *BEF, and
 * every action verified in [MARK_FROM, MARK_TO) into R's marks. */
struct acts {
    struct tw_store_report *r;
    size_t *cap, *capm;
    struct tw_sh_itab *scap;
    int64_t from_ns, to_ns, mark_from, mark_to;
    struct tw_store_rp_action *bef;
    size_t nb, capb, compact_at;
};

static enum tw_err action_row(struct acts *s, const PGresult *res, int i, struct tw_error *err)
{
    struct tw_store_report *r = s->r;
    const char *at = tw_pg_text(res, i, 7);
    int64_t ns;
    struct tw_error perr = {0};
    if (tw_rfc3339_parse(at, strlen(at), &ns, &perr) != TW_OK)
        return tw_error_set(err, TW_EPARSE,
                            "action %lld's verified time \"%.40s\" in the action log is not an "
                            "RFC 3339 time: the store is damaged (tierwise actions shows it)",
                            (long long)tw_pg_int(res, i, 0), at);
    if (ns >= s->to_ns)
        return TW_OK;
    bool before = ns < s->from_ns;
    enum tw_err rc;
    if (!before && ns >= s->mark_from && ns < s->mark_to &&
        (rc = mark_add(r, s->capm, s->scap, res, i, 3, 5, 8, ns, err)) != TW_OK)
        return rc;
    const char *kind = tw_pg_text(res, i, 3);
    const char *state = tw_pg_text(res, i, 8);
    if (tw_pg_int(res, i, 2) <= 0 || strcmp(state, "done") != 0 ||
        (strcmp(kind, "downgrade") != 0 && strcmp(kind, "upgrade") != 0))
        return TW_OK;
    if (before && s->nb == s->compact_at) {
        s->nb = last_per_disk(s->bef, s->nb);
        if (s->nb * 2 > s->compact_at)
            s->compact_at *= 2;
    }
    struct tw_store_rp_action *x =
        before ? tw_sh_grow((void **)&s->bef, s->nb, &s->capb, sizeof(*s->bef))
               : tw_sh_grow((void **)&r->actions, r->n_actions, s->cap, sizeof(*r->actions));
    if (!x)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
    memset(x, 0, sizeof(*x));
    x->id = tw_pg_int(res, i, 0);
    x->vm_id = tw_pg_int(res, i, 1);
    x->disk_id = tw_pg_int(res, i, 2);
    x->downgrade = strcmp(kind, "downgrade") == 0;
    x->verified_ns = ns;
    x->before = before;
    if ((rc = tw_sh_intern(r, s->scap, tw_pg_text(res, i, 4), &x->from_sku, err)) ||
        (rc = tw_sh_intern(r, s->scap, tw_pg_text(res, i, 5), &x->to_sku, err)) ||
        (rc = tw_sh_intern(r, s->scap, tw_pg_text(res, i, 6), &x->policy, err)))
        return rc;
    if (before)
        s->nb++;
    else
        r->n_actions++;
    return TW_OK;
}

/* The verified moves up to TO_NS (the text B a second later bounds the
 * scan), through a cursor (the log may be long). */
static enum tw_err read_actions(struct tw_pg *pg, struct acts *s, const char *b,
                                struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, b);
    enum tw_err rc = tw_pg_run(pg, &q_actions, &p, NULL, "opening the action log", err);
    if (rc != TW_OK)
        return rc;
    struct tw_pg_feed f;
    feed_init(&f, pg, &q_actions_fetch, "reading the actions");
    bool have;
    while (rc == TW_OK && (rc = tw_pg_feed_peek(&f, &have, err)) == TW_OK && have) {
        rc = action_row(s, f.res, f.row, err);
        f.row++;
    }
    tw_pg_feed_clear(&f);
    if (rc == TW_OK)
        rc = tw_pg_run(pg, &q_actions_close, NULL, NULL, "closing the action log", err);
    struct tw_store_report *r = s->r;
    if (rc == TW_OK && (s->nb = last_per_disk(s->bef, s->nb)) > 0) {
        struct tw_store_rp_action *nv =
            realloc(r->actions, (r->n_actions + s->nb) * sizeof(*r->actions));
        if (!nv) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
        } else {
            r->actions = nv;
            memcpy(r->actions + r->n_actions, s->bef, s->nb * sizeof(*s->bef));
            r->n_actions += s->nb;
        }
    }
    return rc;
}

static enum tw_err read_marks(struct tw_pg *pg, struct tw_store_report *r, size_t *capm,
                              struct tw_sh_itab *scap, int64_t from_ns, int64_t to_ns,
                              struct tw_error *err)
{
    char a[40], b[40];
    tw_sh_text_at(from_ns - TW_NS_PER_S, a, sizeof(a));
    tw_sh_text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, tw_sh_ns_to_ms(from_ns));
    tw_pg_p_int(&p, tw_sh_ns_to_ms(to_ns) + 1);
    tw_pg_p_text(&p, a);
    tw_pg_p_text(&p, b);
    PGresult *res;
    enum tw_err rc = tw_pg_run(pg, &q_marks, &p, &res, "reading the week's actions", err);
    if (rc != TW_OK)
        return rc;
    int rows = PQntuples(res);
    for (int i = 0; rc == TW_OK && i < rows; i++) {
        int64_t at = INT64_MIN;
        if (!tw_pg_null(res, i, 6) && !tw_ms_to_ns(tw_pg_int(res, i, 6), &at))
            at = INT64_MIN;
        const char *u = tw_pg_null(res, i, 7) ? NULL : tw_pg_text(res, i, 7);
        if (at == INT64_MIN && u && tw_rfc3339_parse(u, strlen(u), &at, NULL) != TW_OK)
            at = INT64_MIN;
        if (at < from_ns || at >= to_ns)
            continue;
        rc = mark_add(r, capm, scap, res, i, 3, 4, 5, at, err);
    }
    PQclear(res);
    return rc;
}

static enum tw_err read_later(struct tw_pg *pg, struct tw_store_report *r, int64_t to_ms,
                              struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, to_ms);
    PGresult *res;
    enum tw_err rc = tw_pg_run(pg, &q_later, &p, &res, "reading the disks first seen later", err);
    if (rc != TW_OK)
        return rc;
    int rows = PQntuples(res);
    if (rows > 0 && !(r->later = malloc((size_t)rows * sizeof(*r->later))))
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the disks first seen later");
    for (int i = 0; rc == TW_OK && i < rows; i++)
        r->later[r->n_later++] = tw_pg_int(res, i, 0);
    PQclear(res);
    return rc;
}

static enum tw_err read_books(struct tw_pg *pg, struct tw_store_report *r, const char *currency,
                              struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, currency);
    PGresult *res;
    enum tw_err rc = tw_pg_run(pg, &q_books, &p, &res, "reading the price books", err);
    if (rc != TW_OK)
        return rc;
    int rows = PQntuples(res);
    if (rows > 0 && !(r->books = calloc((size_t)rows, sizeof(*r->books))))
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the price books");
    for (int i = 0; rc == TW_OK && i < rows; i++) {
        struct tw_store_rp_book *b = &r->books[r->n_books++];
        b->id = tw_pg_int(res, i, 0);
        col_copy(b->region, sizeof(b->region), res, i, 1);
        col_copy(b->source, sizeof(b->source), res, i, 2);
        col_copy(b->fetched_at, sizeof(b->fetched_at), res, i, 3);
        if (tw_rfc3339_parse(b->fetched_at, strlen(b->fetched_at), &b->fetched_ns, NULL) != TW_OK)
            b->fetched_ns = INT64_MIN;
    }
    PQclear(res);
    return rc;
}

static enum tw_err read_all(struct tw_pg *pg, struct tw_store_report *out, struct tw_sh_itab *scap,
                            int64_t from_ns, int64_t to_ns, int64_t mark_from_ns,
                            int64_t mark_to_ns, const char *currency, struct tw_error *err)
{
    int64_t from_ms = tw_sh_ns_to_ms(from_ns), to_ms = tw_sh_ns_to_ms(to_ns) + 1;
    enum tw_err rc = read_skus(pg, out, scap, &q_at_start, from_ms, 0, false, &out->at_start,
                               &out->n_at_start, err);
    if (rc == TW_OK)
        rc = read_skus(pg, out, scap, &q_changes, from_ms, to_ms, true, &out->changes,
                       &out->n_changes, err);
    size_t acap = 0, mcap = 0;
    if (rc == TW_OK) {
        char b[40];
        tw_sh_text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
        struct acts s = {.r = out,
                         .cap = &acap,
                         .capm = &mcap,
                         .scap = scap,
                         .from_ns = from_ns,
                         .to_ns = to_ns,
                         .mark_from = mark_from_ns,
                         .mark_to = mark_to_ns,
                         .compact_at = (size_t)1 << 18};
        rc = read_actions(pg, &s, b, err);
        free(s.bef);
    }
    if (rc == TW_OK)
        rc = read_marks(pg, out, &mcap, scap, mark_from_ns, mark_to_ns, err);
    if (rc == TW_OK)
        rc = read_books(pg, out, currency, err);
    if (rc == TW_OK)
        rc = read_later(pg, out, tw_sh_ns_to_ms(to_ns) + (tw_floor_mod(to_ns, TW_NS_PER_MS) != 0),
                        err);
    return rc;
}

enum tw_err tw_pg_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
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
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_sh_itab *scap = calloc(1, sizeof(*scap));
    if (!scap || !(out->strs = calloc(16, sizeof(*out->strs)))) {
        free(scap);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the month");
    }
    scap->cap = 16;
    out->n_strs = 1; /* "" */
    /* A snapshot of its own, or a part of the caller's (tw_pg_report_begin). */
    enum tw_err rc = tw_pg_begin_read(pg, "starting to read the month", err);
    if (rc == TW_OK)
        rc = end_read(
            pg, read_all(pg, out, scap, from_ns, to_ns, mark_from_ns, mark_to_ns, currency, err),
            "ending the month's read", err);
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

TW_PG_STMT(q_book_items, "SELECT items FROM price_books WHERE id = $1");

enum tw_err tw_pg_report_book_items(struct tw_store *st, int64_t id, char **items, size_t *len,
                                    struct tw_error *err)
{
    *items = NULL;
    *len = 0;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, id);
    PGresult *r;
    enum tw_err rc = tw_pg_run(pg, &q_book_items, &p, &r, "reading a price book", err);
    if (rc != TW_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = tw_error_set(err, TW_ENOENT, "no stored price book %lld", (long long)id);
    } else {
        size_t n = 0;
        char *t = tw_pg_dup(r, 0, 0, &n);
        if (!t) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading a price book");
        } else {
            *items = t;
            *len = n;
        }
    }
    PQclear(r);
    return rc;
}

/* ---- one snapshot ---- */

enum tw_err tw_pg_report_begin(struct tw_store *st, struct tw_error *err)
{
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_pg *pg = (struct tw_pg *)st;
    if (pg->report_tx)
        return tw_error_set(err, TW_EINVAL,
                            "%s: a monthly report's read is already open on this handle",
                            pg->label);
    enum tw_err rc = tw_pg_begin_read(pg, "starting to read the month", err);
    if (rc == TW_OK)
        pg->report_tx = pg->tx_depth;
    return rc;
}

void tw_pg_report_end(struct tw_store *st)
{
    if (!st)
        return;
    struct tw_pg *pg = (struct tw_pg *)st;
    int depth = pg->report_tx;
    pg->report_tx = 0;
    /* Nothing when the begin failed, or when the transaction is gone
     * already (a lost connection ends it). */
    if (depth <= 0 || pg->tx_depth < depth)
        return;
    /* Anything left open inside it goes first (a walk not closed). */
    while (pg->tx_depth > depth)
        tw_pg_rollback(pg);
    if (tw_pg_commit(pg, "ending the month's read", NULL) != TW_OK)
        tw_pg_rollback(pg);
}

TW_PG_STMT(q_attached,
           "SELECT count(*) FROM disks WHERE detached_ms IS NULL OR detached_ms > $1::bigint");

enum tw_err tw_pg_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                  struct tw_error *err)
{
    *n = 0;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, from_ms);
    PGresult *r;
    enum tw_err rc = tw_pg_run(pg, &q_attached, &p, &r, "counting the attached disks", err);
    if (rc != TW_OK)
        return rc;
    *n = tw_pg_int(r, 0, 0);
    PQclear(r);
    return TW_OK;
}

/* ---- the fleet walk ---- */

/* The disks attached, or detached after $1, by VM, then as SQLite orders
 * them (its NULLs first); with $2, of that VM alone. */
#define FLEET_DISKS                                                                                \
    "SELECT v.id, v.name, v.resource_group, v.subscription_id, v.location, v.vm_size, v.tags, "    \
    "d.id, d.name, d.role, d.lun, d.sku, d.tier, d.size_gib, d.managed_disk_id, "                  \
    "coalesce(d.detached_ms, 0) FROM disks d JOIN vms v ON v.id = d.vm_id WHERE "                  \
    "(d.detached_ms IS NULL OR d.detached_ms > $1::bigint) "
#define FLEET_ORDER " ORDER BY d.vm_id, d.position NULLS FIRST, d.lun NULLS FIRST, d.name, d.id"
TW_PG_STMT(q_fleet_disks, "DECLARE tw_rp_disks NO SCROLL CURSOR FOR " FLEET_DISKS FLEET_ORDER);
TW_PG_STMT(q_vm_disks, "DECLARE tw_rp_disks NO SCROLL CURSOR FOR " FLEET_DISKS
                       "AND d.vm_id = $2::bigint" FLEET_ORDER);
TW_PG_STMT(q_disks_fetch, FETCH_SQL("tw_rp_disks"));

/* Each VM's observations in [$1, $2) and the one in force at $1, for the
 * VMs the disks' cursor walks (with $3, that VM alone), by VM. */
#define FLEET_POWER                                                                                \
    "DECLARE tw_rp_power NO SCROLL CURSOR FOR "                                                    \
    "SELECT p.vm_id, p.observed_ms, p.state FROM vms v CROSS JOIN LATERAL "                        \
    "(SELECT coalesce(max(q.observed_ms), $1::bigint) AS lo FROM power_states q "                  \
    "WHERE q.vm_id = v.id AND q.observed_ms <= $1::bigint) b "                                     \
    "JOIN power_states p ON p.vm_id = v.id AND p.observed_ms >= b.lo "                             \
    "AND p.observed_ms < $2::bigint WHERE EXISTS (SELECT 1 FROM disks d WHERE d.vm_id = v.id "     \
    "AND (d.detached_ms IS NULL OR d.detached_ms > $1::bigint)) "
#define FLEET_POWER_ORDER " ORDER BY p.vm_id, p.observed_ms, p.id"
TW_PG_STMT(q_fleet_power, FLEET_POWER FLEET_POWER_ORDER);
TW_PG_STMT(q_vm_power, FLEET_POWER "AND v.id = $3::bigint" FLEET_POWER_ORDER);
TW_PG_STMT(q_power_fetch, FETCH_SQL("tw_rp_power"));
TW_PG_STMT(q_close_disks, "CLOSE tw_rp_disks");
TW_PG_STMT(q_close_power, "CLOSE tw_rp_power");

struct pg_rp_cursor {
    struct tw_store_rp_cursor base;
    struct tw_pg *pg;
    bool open_tx, failed, finished;
    int declared;
    struct tw_pg_feed disks, power;
    struct tw_tag tags[TW_INV_MAX_TAGS];
    struct tw_store_sv_disk *d;
    size_t nd, capd;
    char **ids;   /* per disk, malloc'd */
    int64_t *det; /* per disk (capi of them) */
    size_t capi;
    struct tw_store_sv_power *p;
    size_t np, capp;
};

static void fleet_close(struct pg_rp_cursor *c)
{
    if (!c)
        return;
    tw_pg_feed_clear(&c->disks);
    tw_pg_feed_clear(&c->power);
    if (c->open_tx) {
        struct tw_pg_stmt *closes[] = {&q_close_disks, &q_close_power};
        for (int i = 0; !c->failed && i < c->declared; i++)
            if (tw_pg_run(c->pg, closes[i], NULL, NULL, "closing the fleet's walk", NULL) != TW_OK)
                c->failed = true;
        if (c->failed || tw_pg_commit(c->pg, "ending the fleet's walk", NULL) != TW_OK)
            tw_pg_rollback(c->pg);
    }
    for (size_t i = 0; i < c->capi; i++)
        free(c->ids[i]);
    free(c->ids);
    free(c->det);
    free(c->d);
    free(c->p);
    free(c);
}

enum tw_err tw_pg_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                    int64_t vm_id, struct tw_store_rp_cursor **out,
                                    struct tw_error *err)
{
    *out = NULL;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    if (to_ms < from_ms)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    struct pg_rp_cursor *c = calloc(1, sizeof(*c));
    if (!c)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the fleet's disks");
    struct tw_pg *pg = (struct tw_pg *)st;
    c->base.st = st;
    c->pg = pg;
    feed_init(&c->disks, pg, &q_disks_fetch, "reading the fleet's disks");
    feed_init(&c->power, pg, &q_power_fetch, "reading the fleet's power states");
    enum tw_err rc = tw_pg_begin_read(pg, "starting to read the fleet", err);
    if (rc == TW_OK) {
        c->open_tx = true;
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, from_ms);
        if (vm_id > 0)
            tw_pg_p_int(&p, vm_id);
        rc = tw_pg_run(pg, vm_id > 0 ? &q_vm_disks : &q_fleet_disks, &p, NULL,
                       "opening the fleet's disks", err);
        if (rc != TW_OK && strcmp(pg->sqlstate, "42P03") == 0) {
            /* The cursors' names are fixed: one walk per handle at a time. */
            tw_error_clear(err);
            rc = tw_error_set(err, TW_EINVAL,
                              "%s: a report's fleet walk is already open on this store handle; "
                              "close it before opening another",
                              pg->label);
        }
        if (rc == TW_OK) {
            c->declared = 1;
            tw_pg_p_init(&p);
            tw_pg_p_int(&p, from_ms);
            tw_pg_p_int(&p, to_ms);
            if (vm_id > 0)
                tw_pg_p_int(&p, vm_id);
            rc = tw_pg_run(pg, vm_id > 0 ? &q_vm_power : &q_fleet_power, &p, NULL,
                           "opening the fleet's power states", err);
        }
        if (rc == TW_OK)
            c->declared = 2;
        else
            c->failed = true;
    }
    if (rc != TW_OK) {
        fleet_close(c);
        return rc;
    }
    *out = &c->base;
    return TW_OK;
}

static enum tw_err fleet_disk(struct pg_rp_cursor *c, const PGresult *r, int i,
                              struct tw_error *err)
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
        for (size_t k = c->capi; k < nc; k++)
            ni[k] = NULL;
        c->capi = nc;
    }
    memset(d, 0, sizeof(*d));
    d->id = tw_pg_int(r, i, 7);
    col_copy(d->name, sizeof(d->name), r, i, 8);
    d->role = strcmp(tw_pg_text(r, i, 9), "os") == 0 ? TW_DISK_OS : TW_DISK_DATA;
    d->lun = tw_pg_null(r, i, 10) ? -1 : (int)tw_pg_int(r, i, 10);
    col_copy(d->sku, sizeof(d->sku), r, i, 11);
    col_copy(d->tier, sizeof(d->tier), r, i, 12);
    d->size_gib = tw_pg_int(r, i, 13);
    size_t len = 0;
    char *rid = tw_pg_dup(r, i, 14, &len);
    if (!rid)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the fleet's disks");
    free(c->ids[c->nd]);
    c->ids[c->nd] = rid;
    c->det[c->nd] = tw_pg_int(r, i, 15);
    c->nd++;
    return TW_OK;
}

enum tw_err tw_pg_report_fleet_next(struct tw_store_rp_cursor *bc, struct tw_store_rp_vm *out,
                                    bool *done, struct tw_error *err)
{
    struct pg_rp_cursor *c = (struct pg_rp_cursor *)bc;
    *done = true;
    tw_error_clear(err);
    if (!c)
        return tw_error_set(err, TW_EINVAL, "%s: the walk is not open", __func__);
    if (c->finished)
        return TW_OK;
    bool have;
    enum tw_err rc = tw_pg_feed_peek(&c->disks, &have, err);
    if (rc != TW_OK || !have) {
        c->finished = true;
        c->failed = c->failed || rc != TW_OK;
        return rc;
    }
    struct tw_store_rp_vm o;
    memset(&o, 0, sizeof(o));
    struct tw_store_sv_vm *v = &o.vm;
    const PGresult *r = c->disks.res;
    int i = c->disks.row;
    v->id = tw_pg_int(r, i, 0);
    col_copy(v->name, sizeof(v->name), r, i, 1);
    col_copy(v->resource_group, sizeof(v->resource_group), r, i, 2);
    col_copy(v->subscription_id, sizeof(v->subscription_id), r, i, 3);
    col_copy(v->location, sizeof(v->location), r, i, 4);
    col_copy(v->vm_size, sizeof(v->vm_size), r, i, 5);
    v->n_tags = tw_sq_tags_parse(tw_pg_null(r, i, 6) ? NULL : tw_pg_text(r, i, 6), c->tags);
    c->nd = 0;
    for (;;) {
        if ((rc = fleet_disk(c, c->disks.res, c->disks.row, err)) != TW_OK) {
            c->finished = true;
            return rc;
        }
        c->disks.row++;
        if ((rc = tw_pg_feed_peek(&c->disks, &have, err)) != TW_OK) {
            c->finished = c->failed = true;
            return rc;
        }
        if (!have || tw_pg_int(c->disks.res, c->disks.row, 0) != v->id)
            break;
    }
    /* The power cursor's rows of this VM (those of VMs before it, none in
     * one snapshot, passed over). */
    c->np = 0;
    for (;;) {
        if ((rc = tw_pg_feed_peek(&c->power, &have, err)) != TW_OK) {
            c->finished = c->failed = true;
            return rc;
        }
        if (!have)
            break;
        int64_t pv = tw_pg_int(c->power.res, c->power.row, 0);
        if (pv > v->id)
            break;
        if (pv == v->id) {
            struct tw_store_sv_power *p =
                tw_sh_grow((void **)&c->p, c->np, &c->capp, sizeof(*c->p));
            if (!p) {
                c->finished = true;
                return tw_error_set(err, TW_ENOMEM, "out of memory reading power states");
            }
            p->at_ms = tw_pg_int(c->power.res, c->power.row, 1);
            col_copy(p->state, sizeof(p->state), c->power.res, c->power.row, 2);
            c->np++;
        }
        c->power.row++;
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

void tw_pg_report_fleet_close(struct tw_store_rp_cursor *c)
{
    fleet_close((struct pg_rp_cursor *)c);
}
