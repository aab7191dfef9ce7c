/*
 * store_report.c - what the monthly report reads besides the fleet walk
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

#include "core/time.h"

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

/* Grows *V (N used, *CAP room) by one element of SIZE; NULL when out of memory. */
static void *grow(void **v, size_t n, size_t *cap, size_t size)
{
    if (n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        void *p = realloc(*v, ncap * size);
        if (!p)
            return NULL;
        *v = p;
        *cap = ncap;
    }
    return (char *)*v + n * size;
}

/* NS as the action log writes instants, to the millisecond. */
static void text_at(int64_t ns, char *out, size_t cap)
{
    if (!tw_rfc3339_format_ns(ns, 0, 3, out, cap))
        snprintf(out, cap, "%s", ns < 0 ? "0000" : "9999");
}

static int64_t ns_to_ms(int64_t ns)
{
    return tw_floor_div(ns, TW_NS_PER_MS);
}

/* The index of NAME in R's string table, added when new; 0 is "". */
static enum tw_err intern(struct tw_store_report *r, size_t *cap, const char *name,
                          uint16_t *out, struct tw_error *err)
{
    if (!name || !*name) {
        *out = 0;
        return TW_OK;
    }
    for (size_t i = 1; i < r->n_strs; i++)
        if (strcmp(r->strs[i], name) == 0) {
            *out = (uint16_t)i;
            return TW_OK;
        }
    if (r->n_strs >= UINT16_MAX)
        return tw_error_set(err, TW_ERANGE, "more than %u SKU and policy names in the actions",
                            UINT16_MAX);
    if (r->n_strs == 0) {
        char(*z)[65] = grow((void **)&r->strs, 0, cap, sizeof(*r->strs));
        if (!z)
            return tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
        (*z)[0] = '\0';
        r->n_strs = 1;
    }
    char(*p)[65] = grow((void **)&r->strs, r->n_strs, cap, sizeof(*r->strs));
    if (!p)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
    snprintf(*p, sizeof(*p), "%s", name);
    *out = (uint16_t)r->n_strs++;
    return TW_OK;
}

static const char at_start_sql[] =
    "SELECT disk_id, max(observed_ms), sku, coalesce(tier, ''), size_gib FROM disk_sku_history "
    "WHERE observed_ms <= ?1 GROUP BY disk_id ORDER BY disk_id";
static const char changes_sql[] =
    "SELECT disk_id, observed_ms, sku, coalesce(tier, ''), size_gib FROM disk_sku_history "
    "WHERE observed_ms > ?1 AND observed_ms < ?2 ORDER BY disk_id, observed_ms, id";
static const char actions_sql[] =
    "SELECT a.id, coalesce(a.vm_id, 0), a.disk_id, a.kind, coalesce(a.from_sku, ''), "
    "coalesce(a.to_sku, ''), coalesce(a.policy, ''), t.at FROM actions a JOIN "
    "action_transitions t ON t.action_id = a.id AND t.to_state = 'verified' "
    "WHERE a.state = 'done' AND a.disk_id IS NOT NULL AND a.dry_run = 0 AND a.kind IN "
    "('downgrade', 'upgrade') AND t.at >= ?1 AND t.at < ?2 ORDER BY a.disk_id, t.at, a.id";
static const char before_sql[] =
    "SELECT a.id, coalesce(a.vm_id, 0), a.disk_id, a.kind, coalesce(a.from_sku, ''), "
    "coalesce(a.to_sku, ''), coalesce(a.policy, ''), max(t.at) FROM actions a JOIN "
    "action_transitions t ON t.action_id = a.id AND t.to_state = 'verified' "
    "WHERE a.state = 'done' AND a.disk_id IS NOT NULL AND a.dry_run = 0 AND a.kind IN "
    "('downgrade', 'upgrade') AND t.at < ?1 GROUP BY a.disk_id ORDER BY a.disk_id";
static const char marks_sql[] =
    "SELECT a.id, coalesce(a.vm_id, d.vm_id, 0), coalesce(a.disk_id, 0), a.kind, "
    "coalesce(d.name, ''), coalesce(a.to_sku, ''), a.state, (SELECT t.at FROM "
    "action_transitions t WHERE t.action_id = a.id AND t.to_state = 'verified' ORDER BY t.id "
    "LIMIT 1), a.due_ms, coalesce(a.updated_at, a.requested_at) FROM actions a LEFT JOIN disks d "
    "ON d.id = a.disk_id WHERE a.dry_run = 0 AND ((a.due_ms >= ?1 AND a.due_ms < ?2) OR "
    "EXISTS (SELECT 1 FROM action_transitions t WHERE t.action_id = a.id AND t.to_state = "
    "'verified' AND t.at >= ?3 AND t.at < ?4)) ORDER BY 2, a.id";
static const char books_sql[] =
    "SELECT id, region, source, fetched_at FROM price_books WHERE currency = ?1 "
    "ORDER BY region, fetched_ms, id";

static enum tw_err read_skus(struct tw_sqlite *s, const char *sql, int64_t a, int64_t b,
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
        struct tw_store_rp_sku *r = grow((void **)out, *n, &cap, sizeof(**out));
        if (!r) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the SKU history");
            break;
        }
        memset(r, 0, sizeof(*r));
        r->disk_id = sqlite3_column_int64(q, 0);
        r->at_ms = sqlite3_column_int64(q, 1);
        tw_sq_copy(q, 2, r->sku, sizeof(r->sku));
        tw_sq_copy(q, 3, r->tier, sizeof(r->tier));
        r->size_gib = sqlite3_column_int64(q, 4);
        (*n)++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the SKU history");
    sqlite3_finalize(q);
    return rc;
}

/* The actions of SQL (bound to the texts A and, when non-NULL, B) whose
 * verified instant is in [FROM_NS, TO_NS). */
static enum tw_err read_actions(struct tw_sqlite *s, struct tw_store_report *r, size_t *cap,
                                size_t *scap, const char *sql, const char *a, const char *b,
                                int64_t from_ns, int64_t to_ns, bool before,
                                struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, sql, &q, "preparing to read the actions", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_text(q, 1, a, -1, SQLITE_STATIC);
    if (b)
        sqlite3_bind_text(q, 2, b, -1, SQLITE_STATIC);
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
        if (ns < from_ns || ns >= to_ns)
            continue;
        struct tw_store_rp_action *x = grow((void **)&r->actions, r->n_actions, cap,
                                            sizeof(*r->actions));
        if (!x) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the actions");
            break;
        }
        memset(x, 0, sizeof(*x));
        x->id = sqlite3_column_int64(q, 0);
        x->vm_id = sqlite3_column_int64(q, 1);
        x->disk_id = sqlite3_column_int64(q, 2);
        const char *kind = (const char *)sqlite3_column_text(q, 3);
        x->downgrade = kind && strcmp(kind, "downgrade") == 0;
        x->verified_ns = ns;
        x->before = before;
        if ((rc = intern(r, scap, (const char *)sqlite3_column_text(q, 4), &x->from_sku, err)) ||
            (rc = intern(r, scap, (const char *)sqlite3_column_text(q, 5), &x->to_sku, err)) ||
            (rc = intern(r, scap, (const char *)sqlite3_column_text(q, 6), &x->policy, err)))
            break;
        r->n_actions++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the actions");
    sqlite3_finalize(q);
    return rc;
}

static enum tw_err read_marks(struct tw_sqlite *s, struct tw_store_report *r, int64_t from_ns,
                              int64_t to_ns, struct tw_error *err)
{
    sqlite3_stmt *q;
    enum tw_err rc = prep(s, marks_sql, &q, "preparing to read the week's actions", err);
    if (rc != TW_OK)
        return rc;
    char a[40], b[40];
    text_at(from_ns - TW_NS_PER_S, a, sizeof(a));
    text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
    sqlite3_bind_int64(q, 1, ns_to_ms(from_ns));
    sqlite3_bind_int64(q, 2, ns_to_ms(to_ns) + 1);
    sqlite3_bind_text(q, 3, a, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, b, -1, SQLITE_STATIC);
    size_t cap = 0;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t at = INT64_MIN;
        const char *v = (const char *)sqlite3_column_text(q, 7);
        if (v && tw_rfc3339_parse(v, strlen(v), &at, NULL) != TW_OK)
            at = INT64_MIN;
        if (at == INT64_MIN && sqlite3_column_type(q, 8) != SQLITE_NULL &&
            !tw_ms_to_ns(sqlite3_column_int64(q, 8), &at))
            at = INT64_MIN;
        const char *u = (const char *)sqlite3_column_text(q, 9);
        if (at == INT64_MIN && u && tw_rfc3339_parse(u, strlen(u), &at, NULL) != TW_OK)
            at = INT64_MIN;
        if (at < from_ns || at >= to_ns)
            continue;
        struct tw_store_rp_mark *m = grow((void **)&r->marks, r->n_marks, &cap, sizeof(*m));
        if (!m) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading the week's actions");
            break;
        }
        memset(m, 0, sizeof(*m));
        m->id = sqlite3_column_int64(q, 0);
        m->vm_id = sqlite3_column_int64(q, 1);
        m->disk_id = sqlite3_column_int64(q, 2);
        m->at_ns = at;
        tw_sq_copy(q, 3, m->kind, sizeof(m->kind));
        tw_sq_copy(q, 4, m->disk, sizeof(m->disk));
        tw_sq_copy(q, 5, m->to_sku, sizeof(m->to_sku));
        tw_sq_copy(q, 6, m->state, sizeof(m->state));
        r->n_marks++;
    }
    if (rc == TW_OK && step != SQLITE_DONE)
        rc = tw_sq_fail(s, NULL, err, "reading the week's actions");
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
        struct tw_store_rp_book *b = grow((void **)&r->books, r->n_books, &cap, sizeof(*b));
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

static int mark_cmp(const void *a, const void *b)
{
    const struct tw_store_rp_mark *x = a, *y = b;
    if (x->vm_id != y->vm_id)
        return x->vm_id < y->vm_id ? -1 : 1;
    if (x->at_ns != y->at_ns)
        return x->at_ns < y->at_ns ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

enum tw_err tw_store_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
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
    if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "starting to read the month");
    int64_t from_ms = ns_to_ms(from_ns), to_ms = ns_to_ms(to_ns) + 1;
    char a[40], b[40];
    size_t acap = 0, scap = 0;
    enum tw_err rc = read_skus(s, at_start_sql, from_ms, 0, &out->at_start, &out->n_at_start, err);
    if (rc == TW_OK)
        rc = read_skus(s, changes_sql, from_ms, to_ms, &out->changes, &out->n_changes, err);
    if (rc == TW_OK) {
        text_at(from_ns - TW_NS_PER_S, a, sizeof(a));
        text_at(to_ns + TW_NS_PER_S, b, sizeof(b));
        rc = read_actions(s, out, &acap, &scap, actions_sql, a, b, from_ns, to_ns, false, err);
    }
    if (rc == TW_OK) {
        /* The last one before the month: the log's texts (one format)
         * compare as their instants do; the exact check stays. */
        text_at(from_ns, a, sizeof(a));
        rc = read_actions(s, out, &acap, &scap, before_sql, a, NULL, INT64_MIN, from_ns, true,
                          err);
    }
    if (rc == TW_OK)
        rc = read_marks(s, out, mark_from_ns, mark_to_ns, err);
    if (rc == TW_OK)
        rc = read_books(s, out, currency, err);
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (rc != TW_OK) {
        tw_store_report_free(out);
        return rc;
    }
    if (out->n_actions)
        qsort(out->actions, out->n_actions, sizeof(*out->actions), action_cmp);
    if (out->n_marks)
        qsort(out->marks, out->n_marks, sizeof(*out->marks), mark_cmp);
    return TW_OK;
}

void tw_store_report_free(struct tw_store_report *r)
{
    if (!r)
        return;
    free(r->at_start);
    free(r->changes);
    free(r->actions);
    free(r->marks);
    free(r->books);
    free(r->strs);
    memset(r, 0, sizeof(*r));
}

enum tw_err tw_store_report_book_items(struct tw_store *st, int64_t id, char **items,
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
