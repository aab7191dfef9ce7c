/*
 * monthly.c - the monthly cost-saving report's model (monthly.h): each
 * disk's SKU timeline over the month, priced by the price history, its
 * baseline and realised saving, the policies' further saving, its latest
 * verdict and drift, grouped and totalled.
 *
 * The rules (README "The monthly report's model" says them for readers):
 *
 *   - The month is [first day 00:00 UTC, next month's first day 00:00 UTC).
 *     When NOW (opts.now_ns, else the system clock, CLOCK_REALTIME) is
 *     inside it, the model ends at NOW floored to the second and is
 *     partial; a month that has not started is TW_EINVAL.
 *   - Rows: every disk attached to a VM during the month: attached now, or
 *     detached after the month's start (counted until it was detached, the
 *     instant floored to the second); a disk first seen during the month
 *     starts at its first SKU row, one first seen after it is left out.
 *   - The SKU at the month's start is the newest SKU-history row at or
 *     before it.  The timeline is the history rows inside the month merged
 *     with the instants the done disk actions were verified (the action
 *     log's move to verified) and their to_sku, each instant floored to the
 *     second, equal consecutive SKUs merged; a history row in the same
 *     second as a done action wins over its to_sku (what ARM read back).
 *   - A tierwise interval runs from a verified downgrade to the disk's next
 *     SKU change whatever its source; a downgrade is in force at the start
 *     when the disk's last done action before the month is a downgrade and
 *     the disk is on its to_sku then.  The baseline is the timeline with
 *     those intervals on the downgrade's from_sku (a downgrade made inside
 *     a tierwise interval keeps the first one's); original_sku is the
 *     baseline's SKU at the end (for a disk never switched, its SKU).
 *   - Prices: one currency (tw_opp_currency).  Per region the month is cut
 *     at every stored book's fetch time inside it; each part is priced by
 *     the book fetched last at or before its start (else the first one
 *     fetched after it: `after`, and a note), and cut again at the
 *     effective start and end of that book's items inside it, each piece
 *     priced by the book built as of the piece's start.  Books are built
 *     once per piece of a region, whatever the fleet's size.
 *   - cost = sum over pieces of per_month x seconds / 730 h, exact (summed
 *     as micros x ns, divided once).  realised = baseline - cost -
 *     transactions.  Transactions are zero while the VM is deallocated; a
 *     tierwise interval on a Standard SSD/HDD SKU while the VM ran counts
 *     its seconds in running_metered_seconds: its I/O is not known, so its
 *     transactions are not counted (a note says so).
 *   - A region without a book in the currency: priced false, "no_book"; a
 *     price the book lacks "no_price"; no region "no_region"; a SKU not
 *     known "unknown_sku".  Never a zero price; the report is still built.
 *   - possible: the policies given, run in one walk (tw_opp_run_many) over
 *     the report's own period [from_ns, to_ns) (the planner's mode), not
 *     the month in the policy's zone; beside the report's walk on a second
 *     thread and handle when opts.db_path is set, else after it; their
 *     sinks collect (disk, policy, saving, reason, why) merged after both;
 *     the disk's policy is the one that planned its actions in the month
 *     when given, else the given policy saving most on it; possible =
 *     max(0, that saving - realised); totals count possible_unknown.
 *   - Verdicts: each disk's latest verdict (by the result's start), from
 *     tw_svc_compliance_fleet, matched by VM and disk name.
 *   - Drift: the drift rows clipped to the month.
 *   - Rows by group key, VM name, disk position; totals: rounded = the sum
 *     of the rows' rounded figures, unrounded = the exact sum; a row's
 *     hours_by_sku cost_r its cost_r split by largest remainder.
 *   - The week: the last whole Monday-to-Monday week (UTC) inside the
 *     period, else its first seven days; the VMs with an action in it (at
 *     most TW_MR_WEEK_VMS, those with most actions first).
 */
#include "service/monthly.h"

#include "core/sku.h"
#include "core/time.h"
#include "service/compliance.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define TW_MR_WEEK_VMS 50
#define TW_MR_NOTES_MAX 32

/* ---- the model's arena ---- */

struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

struct arena {
    struct chunk *head;
};

static void *ar_alloc(struct arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
        struct chunk *c = malloc(sizeof(*c) + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static const char *ar_str(struct arena *a, const char *s)
{
    size_t n = strlen(s);
    char *p = ar_alloc(a, n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

static void ar_free(struct arena *a)
{
    if (!a)
        return;
    for (struct chunk *c = a->head, *nx; c; c = nx) {
        nx = c->next;
        free(c);
    }
    free(a);
}

/* ---- group_by ---- */

enum tw_err tw_mr_group_by_parse(const char *buf, size_t len, struct tw_mr_opts *o,
                                 struct tw_error *err)
{
    if (buf && len == 14 && memcmp(buf, "resource-group", 14) == 0) {
        o->group_by = TW_MR_BY_RESOURCE_GROUP;
        o->group_tag = NULL;
        return TW_OK;
    }
    if (buf && len == 12 && memcmp(buf, "subscription", 12) == 0) {
        o->group_by = TW_MR_BY_SUBSCRIPTION;
        o->group_tag = NULL;
        return TW_OK;
    }
    if (buf && len > 4 && memcmp(buf, "tag:", 4) == 0 && len - 4 <= 512) {
        bool ok = memchr(buf + 4, '\0', len - 4) == NULL;
        for (size_t i = 4; ok && i < len; i++)
            if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
                ok = false;
        if (ok) {
            o->group_by = TW_MR_BY_TAG;
            o->group_tag = buf + 4;
            return TW_OK;
        }
    }
    /* Say what was given, printable and short. */
    char shown[68];
    size_t k = 0;
    for (size_t i = 0; buf && i < len && k < 60; i++)
        shown[k++] = (unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f ? '?' : buf[i];
    shown[k] = '\0';
    if (buf && len > 60)
        snprintf(shown + k, sizeof(shown) - k, "...");
    const char *why = buf && len >= 4 && memcmp(buf, "tag:", 4) == 0
                          ? (len == 4 ? " (the tag's name is missing)"
                                      : len - 4 > 512 ? " (a tag's name is at most 512 bytes)"
                                                      : " (a tag's name has no control characters)")
                          : "";
    return tw_error_set(err, TW_EPARSE,
                        "--group-by: expected resource-group, subscription or tag:NAME, got "
                        "\"%s\"%s",
                        shown, why);
}

/* ---- the build's state ---- */

/* One piece of a region's month with the prices in effect then. */
struct piece {
    int64_t from_ns, to_ns;
    struct tw_pricebook *pb;     /* owned */
    size_t book;                 /* index into the model's books */
};

/* A price found, kept: a fleet has few SKU, tier and piece keys. */
#define PRICE_MEMO 256
struct price_memo {
    const struct piece *p;
    char sku[32], tier[16];
    int64_t micros;
};

struct region {
    struct price_memo memo[PRICE_MEMO];
    size_t n_memo;
    char name[48];
    bool missing;
    char why[320];
    struct piece *pieces;
    size_t n_pieces;
    int64_t missing_disks;
};

/* A stored book's items, parsed once. */
struct items_slot {
    int64_t id;
    struct tw_price_items items;
};

/* A verdict kept for a disk of a VM. */
struct vd {
    int64_t vm_id;
    char name[128];              /* the disk's name, lower case */
    int64_t started_ns;
    char kind[16];
    char reason[256];
    double m_iops, m_mbps, e_iops, e_mbps;
    char judged_at[40];
};

/* A row's working state, beside the row. */
struct rowx {
    int64_t disk_id;
    size_t row;
    uint16_t act_policy;         /* the actions' policy in the month (strs); 0 none */
    int matched, excluded;       /* policies matching it, of them leaving it alone */
    bool have, forced;
    struct tw_amount best;
    int best_pol;
    int64_t pos;                 /* its place on its VM */
    const char *group, *vm;      /* the order's keys */
    int64_t vm_id;
};

/* A timeline segment. */
struct seg {
    int64_t from_ns, to_ns;
    char sku[32], tier[16];
    bool tw;                     /* in a tierwise interval */
    char base_sku[32], base_tier[16];
};

struct build {
    struct tw_store *st;
    const struct tw_mr_opts *o;
    struct tw_mr_model *m;
    struct arena *ar;
    struct tw_store_report rp;
    struct region *regions;
    size_t n_regions;
    struct items_slot *items;
    size_t n_items;
    size_t cap_books, cap_missing, cap_disks;
    struct rowx *x;              /* one per row */
    struct vd *vds;              /* verdicts, by (vm_id, name) once sorted */
    size_t n_vds, cap_vds;
    struct tw_store_drift_row *drift;
    size_t n_drift;
    struct seg *segs;
    size_t cap_segs;
    int64_t now_ns;
    int64_t metered_total;       /* running_metered seconds of the fleet */
    int64_t only_vm;             /* disk_id given: its VM */
    int64_t vms;                 /* distinct VMs with rows */
    bool after_note;
    /* the week's VMs being filled */
    size_t cap_week;
};

static enum tw_err note(struct build *b, struct tw_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum tw_err note(struct build *b, struct tw_error *err, const char *fmt, ...)
{
    struct tw_mr_model *m = b->m;
    if (m->n_notes >= TW_MR_NOTES_MAX)
        return TW_OK;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < m->n_notes; i++)
        if (strcmp(m->notes[i], buf) == 0)
            return TW_OK;
    char **nv = realloc(m->notes, (m->n_notes + 1) * sizeof(*nv));
    if (!nv)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    m->notes = nv;
    const char *s = ar_str(b->ar, buf);
    if (!s)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    m->notes[m->n_notes++] = (char *)s;
    return TW_OK;
}

/* SRC into DST (CAP bytes), cut to fit: snprintf's "%s" without its cost. */
static inline void cpy(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void fmt_at(int64_t ns, char *out, size_t cap)
{
    int digits = tw_floor_mod(ns, TW_NS_PER_S) ? 9 : 0;
    if (!tw_rfc3339_format_ns(ns, 0, digits, out, cap))
        snprintf(out, cap, "?");
}

static int64_t floor_s(int64_t ns)
{
    return ns - tw_floor_mod(ns, TW_NS_PER_S);
}

/* The tier SKU of SIZE_GIB is billed at (HINT the stored tier, may be ""). */
static void tier_of(const struct tw_tier_catalog *cat, const char *sku, int64_t size_gib,
                    const char *hint, char out[16])
{
    const struct tw_tier *t = NULL;
    if (cat && size_gib > 0 && tw_tier_for_disk(cat, sku, size_gib, hint && *hint ? hint : NULL,
                                                &t, NULL) == TW_OK && t) {
        cpy(out, 16, t->name);
        return;
    }
    cpy(out, 16, hint ? hint : "");
}

/* ---- prices ---- */

static enum tw_err items_of(struct build *b, int64_t id, const struct tw_price_items **out,
                            struct tw_error *err)
{
    for (size_t i = 0; i < b->n_items; i++)
        if (b->items[i].id == id) {
            *out = &b->items[i].items;
            return TW_OK;
        }
    struct items_slot *nv = realloc(b->items, (b->n_items + 1) * sizeof(*nv));
    if (!nv)
        return tw_error_set(err, TW_ENOMEM, "out of memory loading price books");
    b->items = nv;
    struct items_slot *s = &b->items[b->n_items];
    memset(s, 0, sizeof(*s));
    s->id = id;
    char *text = NULL;
    size_t len = 0;
    enum tw_err rc = tw_store_report_book_items(b->st, id, &text, &len, err);
    if (rc != TW_OK)
        return rc;
    struct tw_error perr = {0};
    rc = tw_price_page_parse(text, len, &s->items, NULL, &perr);
    free(text);
    if (rc != TW_OK) {
        tw_price_items_cleanup(&s->items);
        return tw_error_set(err, rc,
                            "the stored price book %lld does not parse (%s); refresh or import "
                            "it again",
                            (long long)id, perr.msg);
    }
    b->n_items++;
    *out = &s->items;
    return TW_OK;
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The model's book entry of stored book K for REGION (added when new). */
static enum tw_err book_entry(struct build *b, const struct tw_store_rp_book *k, bool after,
                              int64_t from_ns, int64_t to_ns, size_t *out, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    for (size_t i = 0; i < m->n_books; i++) {
        struct tw_mr_book *e = &m->books[i];
        if (strcmp(e->region, k->region) == 0 && strcmp(e->fetched_at, k->fetched_at) == 0 &&
            strcmp(e->source, k->source) == 0) {
            if (from_ns < e->from_ns)
                e->from_ns = from_ns;
            if (to_ns > e->to_ns)
                e->to_ns = to_ns;
            e->after = e->after || after;
            *out = i;
            return TW_OK;
        }
    }
    if (m->n_books == b->cap_books) {
        size_t nc = b->cap_books ? b->cap_books * 2 : 8;
        struct tw_mr_book *nv = realloc(m->books, nc * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        m->books = nv;
        b->cap_books = nc;
    }
    struct tw_mr_book *e = &m->books[m->n_books];
    memset(e, 0, sizeof(*e));
    cpy(e->region, sizeof(e->region), k->region);
    cpy(e->source, sizeof(e->source), k->source);
    cpy(e->fetched_at, sizeof(e->fetched_at), k->fetched_at);
    e->from_ns = from_ns;
    e->to_ns = to_ns;
    e->after = after;
    *out = m->n_books++;
    return TW_OK;
}

/* Region NAME's pieces of the month, set up on first use. */
static enum tw_err region_get(struct build *b, const char *name, struct region **out,
                              struct tw_error *err)
{
    char reg[48];
    size_t i;
    for (i = 0; name[i] && i < sizeof(reg) - 1; i++)
        reg[i] = (char)tolower((unsigned char)name[i]);
    reg[i] = '\0';
    for (i = 0; i < b->n_regions; i++)
        if (strcmp(b->regions[i].name, reg) == 0) {
            *out = &b->regions[i];
            return TW_OK;
        }
    struct region *nv = realloc(b->regions, (b->n_regions + 1) * sizeof(*nv));
    if (!nv)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    b->regions = nv;
    struct region *r = &b->regions[b->n_regions++];
    memset(r, 0, sizeof(*r));
    cpy(r->name, sizeof(r->name), reg);
    *out = r;
    struct tw_mr_model *m = b->m;
    /* The region's books, by fetch time (the read's order). */
    size_t first = 0, n = 0;
    for (i = 0; i < b->rp.n_books; i++)
        if (strcmp(b->rp.books[i].region, reg) == 0 && b->rp.books[i].fetched_ns != INT64_MIN) {
            if (!n)
                first = i;
            n++;
        }
    if (!n) {
        r->missing = true;
        snprintf(r->why, sizeof(r->why),
                 "no price book for region %s in %s in the store: refresh it (tierwise prices "
                 "refresh --region %s --currency %s, or POST /api/v1/prices/refresh) or import "
                 "one",
                 reg, m->currency, reg, m->currency);
        return TW_OK;
    }
    const struct tw_store_rp_book *bk = &b->rp.books[first];
    /* Cut at the fetch times inside the period. */
    int64_t *cuts = malloc((n + 2) * sizeof(*cuts));
    if (!cuts)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    size_t nc = 0;
    cuts[nc++] = m->from_ns;
    for (i = 0; i < n; i++)
        if (bk[i].fetched_ns > m->from_ns && bk[i].fetched_ns < m->to_ns)
            cuts[nc++] = bk[i].fetched_ns;
    cuts[nc++] = m->to_ns;
    qsort(cuts, nc, sizeof(*cuts), i64_cmp);
    enum tw_err rc = TW_OK;
    for (size_t c = 0; c + 1 < nc && rc == TW_OK; c++) {
        int64_t pf = cuts[c], pt = cuts[c + 1];
        if (pt <= pf)
            continue;
        /* The book fetched last at or before PF, else the first after. */
        size_t k = n;
        for (i = 0; i < n; i++)
            if (bk[i].fetched_ns <= pf)
                k = i;
        bool after = k == n;
        if (after)
            k = 0;
        const struct tw_price_items *its = NULL;
        if ((rc = items_of(b, bk[k].id, &its, err)) != TW_OK)
            break;
        /* Cut again where this book's items of the region start or end. */
        size_t ns = 0, cap = its->n * 2 + 2;
        int64_t *sub = malloc(cap * sizeof(*sub));
        if (!sub) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory");
            break;
        }
        sub[ns++] = pf;
        for (size_t t = 0; t < its->n; t++) {
            const struct tw_price_item *it = &its->v[t];
            if (strcasecmp(it->region, reg) != 0 || strcmp(it->currency, m->currency) != 0)
                continue;
            int64_t f, e;
            tw_price_item_span(it, &f, &e);
            if (f > pf && f < pt)
                sub[ns++] = f;
            if (e > pf && e < pt)
                sub[ns++] = e;
        }
        sub[ns++] = pt;
        qsort(sub, ns, sizeof(*sub), i64_cmp);
        size_t be = 0;
        rc = book_entry(b, &bk[k], after, pf, pt, &be, err);
        if (rc == TW_OK && after)
            b->after_note = true;
        for (size_t s = 0; s + 1 < ns && rc == TW_OK; s++) {
            if (sub[s + 1] <= sub[s])
                continue;
            struct piece *np = realloc(r->pieces, (r->n_pieces + 1) * sizeof(*np));
            if (!np) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory");
                break;
            }
            r->pieces = np;
            struct piece *p = &r->pieces[r->n_pieces];
            memset(p, 0, sizeof(*p));
            p->from_ns = sub[s];
            p->to_ns = sub[s + 1];
            p->book = be;
            struct tw_price_items copy = {0};
            copy.v = malloc((its->n ? its->n : 1) * sizeof(*copy.v));
            if (!copy.v) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory");
                break;
            }
            if (its->n)
                memcpy(copy.v, its->v, its->n * sizeof(*copy.v));
            copy.n = copy.cap = its->n;
            char now[48];
            fmt_at(p->from_ns, now, sizeof(now));
            rc = tw_pricebook_build(&copy, reg, m->currency, bk[k].source, bk[k].fetched_at, now,
                                    &p->pb, err);
            tw_price_items_cleanup(&copy);
            if (rc != TW_OK)
                break;
            r->n_pieces++;
        }
        free(sub);
    }
    free(cuts);
    if (rc == TW_OK && r->n_pieces > 1) {
        /* Prices that change within the month are worth a note. */
        bool changed = false;
        for (size_t p = 1; p < r->n_pieces; p++)
            if (r->pieces[p].book != r->pieces[0].book || r->pieces[p].pb != r->pieces[0].pb)
                changed = true;
        if (changed)
            rc = note(b, err,
                      "The prices of %s may change within the month (a book fetched or an "
                      "item taking effect during it): each part of it is priced by the book and "
                      "items in effect then (see books).",
                      reg);
    }
    return rc;
}

/* ---- timelines ---- */

static const struct tw_store_rp_sku *sku_at_start(const struct build *b, int64_t disk_id)
{
    size_t lo = 0, hi = b->rp.n_at_start;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.at_start[mid].disk_id < disk_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->rp.n_at_start && b->rp.at_start[lo].disk_id == disk_id ? &b->rp.at_start[lo]
                                                                            : NULL;
}

static size_t changes_from(const struct build *b, int64_t disk_id)
{
    size_t lo = 0, hi = b->rp.n_changes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.changes[mid].disk_id < disk_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t actions_from(const struct build *b, int64_t disk_id)
{
    size_t lo = 0, hi = b->rp.n_actions;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.actions[mid].disk_id < disk_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static enum tw_err seg_add(struct build *b, size_t *n, int64_t from, int64_t to, const char *sku,
                           const char *tier, bool tw, const char *bsku, const char *btier,
                           struct tw_error *err)
{
    if (to <= from)
        return TW_OK;
    if (*n) {
        struct seg *l = &b->segs[*n - 1];
        if (l->to_ns == from && l->tw == tw && strcmp(l->sku, sku) == 0 &&
            strcmp(l->tier, tier) == 0 &&
            (!tw || (strcmp(l->base_sku, bsku) == 0 && strcmp(l->base_tier, btier) == 0))) {
            l->to_ns = to;
            return TW_OK;
        }
    }
    if (*n == b->cap_segs) {
        size_t nc = b->cap_segs ? b->cap_segs * 2 : 64;
        struct seg *nv = realloc(b->segs, nc * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        b->segs = nv;
        b->cap_segs = nc;
    }
    struct seg *s = &b->segs[(*n)++];
    s->from_ns = from;
    s->to_ns = to;
    cpy(s->sku, sizeof(s->sku), sku);
    cpy(s->tier, sizeof(s->tier), tier);
    s->tw = tw;
    cpy(s->base_sku, sizeof(s->base_sku), tw ? bsku : "");
    cpy(s->base_tier, sizeof(s->base_tier), tw ? btier : "");
    return TW_OK;
}

#define S(i) (b->rp.strs[(i)])

/* Disk D's timeline over the period into B->segs (*N of them); *SWITCHES
 * the verified actions in it, *POLICY the policy of the last of them. */
static enum tw_err timeline(struct build *b, const struct tw_store_sv_disk *d, size_t *n,
                            int64_t end, int64_t *switches, uint16_t *policy,
                            struct tw_error *err)
{
    const struct tw_mr_model *m = b->m;
    const struct tw_tier_catalog *cat = b->o->cat;
    *n = 0;
    *switches = 0;
    *policy = 0;
    char cur[32], cur_tier[16], bsku[32] = "", btier[16] = "";
    int64_t size = d->size_gib;
    int64_t t = m->from_ns;
    const struct tw_store_rp_sku *s0 = sku_at_start(b, d->id);
    size_t ci = changes_from(b, d->id), ai = actions_from(b, d->id);
    if (s0) {
        cpy(cur, sizeof(cur), S(s0->sku));
        tier_of(cat, S(s0->sku), s0->size_gib ? s0->size_gib : size, S(s0->tier), cur_tier);
    } else if (ci < b->rp.n_changes && b->rp.changes[ci].disk_id == d->id) {
        /* First seen inside the month: its timeline starts there. */
        const struct tw_store_rp_sku *c = &b->rp.changes[ci];
        int64_t at;
        if (!tw_ms_to_ns(c->at_ms, &at))
            at = m->from_ns;
        at = floor_s(at);
        if (at > t)
            t = at;
        cpy(cur, sizeof(cur), S(c->sku));
        tier_of(cat, S(c->sku), c->size_gib ? c->size_gib : size, S(c->tier), cur_tier);
        ci++;
    } else {
        cpy(cur, sizeof(cur), d->sku);
        tier_of(cat, d->sku, size, d->tier, cur_tier);
    }
    bool tw = false;
    /* A history row that ended a tierwise interval: its second, the SKU
     * before it and the interval's baseline, for a downgrade verified in
     * the same second (the history row is what ARM read back then). */
    int64_t last_tc = INT64_MIN;
    char lost_from[32] = "", lost_bsku[32] = "", lost_btier[16] = "";
    /* A downgrade in force at the start. */
    if (ai < b->rp.n_actions && b->rp.actions[ai].disk_id == d->id && b->rp.actions[ai].before) {
        const struct tw_store_rp_action *a = &b->rp.actions[ai];
        if (a->downgrade && strcasecmp(b->rp.strs[a->to_sku], cur) == 0 && a->from_sku) {
            tw = true;
            cpy(bsku, sizeof(bsku), b->rp.strs[a->from_sku]);
            tier_of(cat, bsku, size, "", btier);
        }
        ai++;
    }
    for (;;) {
        bool hc = ci < b->rp.n_changes && b->rp.changes[ci].disk_id == d->id;
        bool ha = ai < b->rp.n_actions && b->rp.actions[ai].disk_id == d->id;
        if (!hc && !ha)
            break;
        int64_t tc = INT64_MAX, ta = INT64_MAX;
        if (hc && !tw_ms_to_ns(b->rp.changes[ci].at_ms, &tc))
            tc = INT64_MAX - 1;
        if (ha)
            ta = b->rp.actions[ai].verified_ns;
        tc = hc ? floor_s(tc) : INT64_MAX;
        ta = ha ? floor_s(ta) : INT64_MAX;
        bool take_change = hc && tc <= ta; /* at the same second the history comes first */
        int64_t at = take_change ? tc : ta;
        if (at >= end) {
            if (take_change)
                ci++;
            else
                ai++;
            continue;
        }
        if (at > t) {
            enum tw_err rc = seg_add(b, n, t, at, cur, cur_tier, tw, bsku, btier, err);
            if (rc != TW_OK)
                return rc;
            t = at;
        }
        if (take_change) {
            const struct tw_store_rp_sku *c = &b->rp.changes[ci++];
            char ct[16];
            tier_of(cat, S(c->sku), c->size_gib ? c->size_gib : size, S(c->tier), ct);
            last_tc = at;
            lost_from[0] = '\0';
            if (strcasecmp(S(c->sku), cur) != 0) {
                if (tw) {
                    cpy(lost_from, sizeof(lost_from), cur);
                    cpy(lost_bsku, sizeof(lost_bsku), bsku);
                    cpy(lost_btier, sizeof(lost_btier), btier);
                }
                tw = false;
            }
            cpy(cur, sizeof(cur), S(c->sku));
            cpy(cur_tier, sizeof(cur_tier), ct);
        } else {
            const struct tw_store_rp_action *a = &b->rp.actions[ai++];
            const char *to = b->rp.strs[a->to_sku];
            (*switches)++;
            if (a->policy)
                *policy = a->policy;
            char prev[32], prev_tier[16];
            cpy(prev, sizeof(prev), cur);
            cpy(prev_tier, sizeof(prev_tier), cur_tier);
            bool was_tw = tw;
            /* A history row in the same second wins over the action's
             * to_sku (an upgrade the executor sent to the disk's recorded
             * original, say): it is what ARM read back. */
            bool hist_same = last_tc == at;
            if (*to && strcasecmp(to, cur) != 0 && !hist_same) {
                tw = false;
                cpy(cur, sizeof(cur), to);
                tier_of(cat, to, size, "", cur_tier);
            }
            if (a->downgrade && a->from_sku) {
                const char *from = b->rp.strs[a->from_sku];
                tw = true;
                if (was_tw && strcasecmp(from, prev) == 0) {
                    /* a downgrade on from a tierwise interval: the baseline
                     * stays the first downgrade's SKU */
                } else if (hist_same && lost_from[0] && strcasecmp(from, lost_from) == 0) {
                    cpy(bsku, sizeof(bsku), lost_bsku);
                    cpy(btier, sizeof(btier), lost_btier);
                } else {
                    cpy(bsku, sizeof(bsku), from);
                    if (strcasecmp(from, prev) == 0)
                        cpy(btier, sizeof(btier), prev_tier);
                    else
                        tier_of(cat, from, size, "", btier);
                }
            }
        }
    }
    return seg_add(b, n, t, end, cur, cur_tier, tw, bsku, btier, err);
}

/* ---- pricing a row ---- */

static bool not_running(const char *state)
{
    return strcmp(state, "deallocated") == 0 || strcmp(state, "deallocating") == 0 ||
           strcmp(state, "stopped") == 0 || strcmp(state, "stopping") == 0;
}

/* The VM's power spans over the period: state by time. */
struct pspan {
    int64_t from_ns, to_ns;
    const char *state;
};

static size_t power_spans(const struct tw_mr_model *m, const struct tw_store_sv_vm *vm,
                          struct pspan *out)
{
    size_t n = 0;
    for (size_t i = 0; i < vm->n_power; i++) {
        int64_t at;
        if (!tw_ms_to_ns(vm->power[i].at_ms, &at))
            continue;
        if (at < m->from_ns)
            at = m->from_ns;
        if (at >= m->to_ns)
            break;
        if (n && out[n - 1].from_ns == at) {
            out[n - 1].state = vm->power[i].state;
            continue;
        }
        if (n)
            out[n - 1].to_ns = at;
        out[n].from_ns = at;
        out[n].to_ns = m->to_ns;
        out[n].state = vm->power[i].state;
        n++;
    }
    return n;
}

/* The seconds of [F, T) the VM ran (or its state is not known). */
static int64_t running_in(const struct pspan *ps, size_t n, int64_t f, int64_t t)
{
    int64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t a = ps[i].from_ns > f ? ps[i].from_ns : f;
        int64_t z = ps[i].to_ns < t ? ps[i].to_ns : t;
        if (z <= a)
            continue;
        if (not_running(ps[i].state))
            off += z - a;
    }
    return (t - f - off) / TW_NS_PER_S;
}

struct price_fail {
    const char *code;
    char why[320];
};

/* The price per month of SKU TIER in piece P of region R, in micros. */
static bool price_in(const struct build *b, struct region *r, const struct piece *p,
                     const char *sku, const char *tier, int64_t *micros, struct price_fail *f)
{
    for (size_t i = 0; i < r->n_memo; i++)
        if (r->memo[i].p == p && strcmp(r->memo[i].sku, sku) == 0 &&
            strcmp(r->memo[i].tier, tier) == 0) {
            *micros = r->memo[i].micros;
            return true;
        }
    struct tw_sku s;
    if (!tw_sku_parse(sku, &s)) {
        f->code = "unknown_sku";
        snprintf(f->why, sizeof(f->why), "the SKU %s is not one tierwise knows", sku);
        return false;
    }
    if (tw_sku_provisioned(s.family)) {
        f->code = "no_price";
        snprintf(f->why, sizeof(f->why),
                 "%s is billed by provisioned capacity, IOPS and MB/s, which the monthly "
                 "report does not price",
                 tw_sku_family_name(s.family));
        return false;
    }
    if (!tier[0]) {
        f->code = "no_price";
        snprintf(f->why, sizeof(f->why), "the tier of the %s disk is not known", sku);
        return false;
    }
    struct tw_money mny;
    struct tw_error e = {0};
    if (tw_pricebook_money_sku(p->pb, r->name, b->m->currency, sku, tier, TW_PB_MONTH, &mny,
                               &e) != TW_OK) {
        f->code = "no_price";
        snprintf(f->why, sizeof(f->why), "%.319s", e.msg);
        return false;
    }
    *micros = mny.micros;
    if (r->n_memo < PRICE_MEMO) {
        struct price_memo *pm = &r->memo[r->n_memo++];
        pm->p = p;
        cpy(pm->sku, sizeof(pm->sku), sku);
        cpy(pm->tier, sizeof(pm->tier), tier);
        pm->micros = mny.micros;
    }
    return true;
}

static enum tw_err amount_of_sum(tw_i128 sum, struct tw_amount *out, struct tw_error *err)
{
    struct tw_amount a = {sum, 1};
    return tw_amount_scale(a, 1, TW_BILL_MONTH_NS, out, err);
}

/* The row's rounded cost split over its SKUs by largest remainder: each
 * part floored to the minor unit, the units left given one each to the
 * parts with the largest remainders (ties: the earlier part), so that the
 * parts add up to the row's cost_r exactly. */
static void split_cost(struct tw_mr_disk *d, int decimals)
{
    size_t n = d->n_skus;
    if (!n)
        return;
    int64_t unit = 1;
    for (int i = decimals; i < TW_MONEY_DECIMALS; i++)
        unit *= 10;
    if (!d->priced) {
        for (size_t k = 0; k < n; k++)
            d->skus[k].cost_r = tw_money_micros(0);
        return;
    }
    int64_t left = d->cost_r.micros / unit;
    long double rem[n];
    int64_t q[n];
    for (size_t k = 0; k < n; k++) {
        struct tw_amount a = d->skus[k].cost;
        tw_i128 dd = (tw_i128)a.den * unit;
        tw_i128 qq = a.num / dd, r = a.num % dd;
        if (r < 0) {
            qq--;
            r += dd;
        }
        q[k] = (int64_t)qq;
        rem[k] = (long double)r / (long double)dd;
        left -= q[k];
    }
    while (left != 0) {
        size_t best = 0;
        for (size_t k = 1; k < n; k++)
            if (left > 0 ? rem[k] > rem[best] : rem[k] < rem[best])
                best = k;
        if (left > 0) {
            q[best]++;
            left--;
            rem[best] = -1.0L; /* taken */
        } else {
            q[best]--;
            left++;
            rem[best] = 2.0L;
        }
        bool all = true; /* more units than parts: a new round */
        for (size_t k = 0; k < n; k++)
            if (left > 0 ? rem[k] >= 0 : rem[k] <= 1.0L)
                all = false;
        if (all)
            for (size_t k = 0; k < n; k++)
                rem[k] = 0.5L;
    }
    for (size_t k = 0; k < n; k++)
        d->skus[k].cost_r = tw_money_micros(q[k] * unit);
}

static enum tw_err round_row(struct tw_mr_disk *d, int decimals, struct tw_error *err)
{
    enum tw_err rc;
    /* cost, baseline, transactions and possible are rounded once each; the
     * row's realised saving is then what the reader gets on paper from the
     * rounded figures beside it, baseline - cost - transactions (the exact
     * difference, rounded on its own, could be a minor unit apart from
     * it); realised_unrounded keeps the exact figure */
    if ((rc = tw_amount_round(d->cost, decimals, &d->cost_r, err)) ||
        (rc = tw_amount_round(d->baseline, decimals, &d->baseline_r, err)) ||
        (rc = tw_amount_round(d->transactions, decimals, &d->transactions_r, err)) ||
        (rc = tw_amount_round(d->possible, decimals, &d->possible_r, err)) ||
        (rc = tw_money_sub(d->baseline_r, d->cost_r, &d->realised_r, err)) ||
        (rc = tw_money_sub(d->realised_r, d->transactions_r, &d->realised_r, err)))
        return rc;
    split_cost(d, decimals);
    return TW_OK;
}

static const struct tw_amount zero_amount = {0, 1};

/* Prices row D from its segments (N of them) in region R (NULL: none). */
static enum tw_err price_row(struct build *b, struct tw_mr_disk *d, struct region *r, size_t n,
                             const struct pspan *ps, size_t nps, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    d->cost = d->baseline = d->realised = d->transactions = d->possible = zero_amount;
    /* hours by SKU and tier */
    struct tw_mr_sku_time *st = ar_alloc(b->ar, (n ? n : 1) * sizeof(*st));
    tw_i128 *sc = calloc(n ? n : 1, sizeof(*sc));
    if (!st || !sc) {
        free(sc);
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    size_t nst = 0;
    tw_i128 cost = 0, base = 0;
    struct price_fail pf = {0};
    bool priced = r && !r->missing;
    for (size_t i = 0; i < n; i++) {
        const struct seg *s = &b->segs[i];
        size_t k;
        for (k = 0; k < nst; k++)
            if (strcmp(st[k].sku, s->sku) == 0 && strcmp(st[k].tier, s->tier) == 0)
                break;
        if (k == nst) {
            memset(&st[k], 0, sizeof(st[k]));
            cpy(st[k].sku, sizeof(st[k].sku), s->sku);
            cpy(st[k].tier, sizeof(st[k].tier), s->tier);
            nst++;
        }
        int64_t secs = (s->to_ns - s->from_ns) / TW_NS_PER_S;
        st[k].seconds += secs;
        if (s->tw) {
            d->downgraded_seconds += secs;
            struct tw_sku sk;
            if (tw_sku_parse(s->sku, &sk) &&
                (sk.family == TW_SKU_STANDARD_SSD || sk.family == TW_SKU_STANDARD_HDD))
                d->running_metered_seconds += running_in(ps, nps, s->from_ns, s->to_ns);
        }
        if (!priced)
            continue;
        for (size_t p = 0; p < r->n_pieces && priced; p++) {
            const struct piece *pc = &r->pieces[p];
            int64_t a = pc->from_ns > s->from_ns ? pc->from_ns : s->from_ns;
            int64_t z = pc->to_ns < s->to_ns ? pc->to_ns : s->to_ns;
            if (z <= a)
                continue;
            int64_t pm, pb;
            const char *bs = s->tw ? s->base_sku : s->sku, *bt = s->tw ? s->base_tier : s->tier;
            if (!price_in(b, r, pc, s->sku, s->tier, &pm, &pf) ||
                !price_in(b, r, pc, bs, bt, &pb, &pf)) {
                priced = false;
                break;
            }
            tw_i128 c = (tw_i128)pm * (z - a);
            cost += c;
            sc[k] += c;
            base += (tw_i128)pb * (z - a);
        }
    }
    enum tw_err rc = TW_OK;
    if (!r) {
        d->unpriced = "no_region";
        snprintf(d->unpriced_why, sizeof(d->unpriced_why),
                 "the VM's region is not known (its reports carry no location), so no price "
                 "book applies; a sync from ARM (tierwise sync) records it");
    } else if (r->missing) {
        d->unpriced = "no_book";
        cpy(d->unpriced_why, sizeof(d->unpriced_why), r->why);
        r->missing_disks++;
    } else if (!priced) {
        d->unpriced = pf.code;
        cpy(d->unpriced_why, sizeof(d->unpriced_why), pf.why);
    }
    d->priced = d->unpriced == NULL;
    if (d->priced) {
        if ((rc = amount_of_sum(cost, &d->cost, err)) ||
            (rc = amount_of_sum(base, &d->baseline, err)) ||
            (rc = tw_amount_sub(d->baseline, d->cost, &d->realised, err)) ||
            (rc = tw_amount_sub(d->realised, d->transactions, &d->realised, err))) {
            free(sc);
            return rc;
        }
        for (size_t k = 0; k < nst && rc == TW_OK; k++)
            rc = amount_of_sum(sc[k], &st[k].cost, err);
        /* Each book that priced some of its time counts it once. */
        for (size_t p = 0; p < r->n_pieces; p++) {
            const struct piece *pc = &r->pieces[p];
            bool seen = false;
            for (size_t q = 0; q < p; q++)
                if (r->pieces[q].book == pc->book)
                    seen = true;
            if (seen)
                continue;
            for (size_t i = 0; i < n; i++)
                if (b->segs[i].from_ns < pc->to_ns && b->segs[i].to_ns > pc->from_ns) {
                    m->books[pc->book].disks++;
                    break;
                }
        }
    } else {
        for (size_t k = 0; k < nst; k++)
            st[k].cost = zero_amount;
    }
    free(sc);
    /* longest first */
    for (size_t i = 1; i < nst; i++)
        for (size_t j = i; j > 0 && st[j].seconds > st[j - 1].seconds; j--) {
            struct tw_mr_sku_time t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
        }
    d->skus = st;
    d->n_skus = nst;
    return rc;
}

/* ---- verdicts ---- */

static enum tw_err on_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                              const struct tw_result *r, const struct tw_verdict *v)
{
    (void)inv;
    struct build *b = arg;
    int64_t started = INT64_MIN;
    if (r && r->started_at[0] &&
        tw_rfc3339_parse(r->started_at, strlen(r->started_at), &started, NULL) != TW_OK)
        started = INT64_MIN;
    for (size_t k = 0; k < v->n_disks; k++) {
        char name[128];
        size_t i;
        for (i = 0; v->disks[k].name[i] && i < sizeof(name) - 1; i++)
            name[i] = (char)tolower((unsigned char)v->disks[k].name[i]);
        name[i] = '\0';
        struct vd *x = NULL;
        /* The same VM's verdicts come together: look back over them. */
        for (size_t j = b->n_vds; j > 0 && b->vds[j - 1].vm_id == vm_id; j--)
            if (strcmp(b->vds[j - 1].name, name) == 0) {
                x = &b->vds[j - 1];
                break;
            }
        if (x && x->started_ns > started)
            continue;
        if (!x) {
            if (b->n_vds == b->cap_vds) {
                size_t nc = b->cap_vds ? b->cap_vds * 2 : 256;
                struct vd *nv = realloc(b->vds, nc * sizeof(*nv));
                if (!nv)
                    return TW_ENOMEM;
                b->vds = nv;
                b->cap_vds = nc;
            }
            x = &b->vds[b->n_vds++];
            memset(x, 0, sizeof(*x));
            x->vm_id = vm_id;
            cpy(x->name, sizeof(x->name), name);
        }
        x->started_ns = started;
        cpy(x->kind, sizeof(x->kind), tw_verdict_name(v->kind));
        snprintf(x->reason, sizeof(x->reason), "%.255s", v->reason);
        x->m_iops = v->measured_iops;
        x->m_mbps = v->measured_mbps;
        x->e_iops = v->expected_known ? v->expected_iops : NAN;
        x->e_mbps = v->expected_known ? v->expected_mbps : NAN;
        cpy(x->judged_at, sizeof(x->judged_at), r ? r->started_at : "");
    }
    return TW_OK;
}

static enum tw_err on_verdict_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)arg;
    (void)e;
    return TW_OK; /* a result that can't be judged leaves its disks without a verdict */
}

static int vd_cmp(const void *a, const void *b)
{
    const struct vd *x = a, *y = b;
    if (x->vm_id != y->vm_id)
        return x->vm_id < y->vm_id ? -1 : 1;
    return strcmp(x->name, y->name);
}

static const struct vd *vd_find(const struct build *b, int64_t vm_id, const char *disk)
{
    struct vd key;
    key.vm_id = vm_id;
    size_t i;
    for (i = 0; disk[i] && i < sizeof(key.name) - 1; i++)
        key.name[i] = (char)tolower((unsigned char)disk[i]);
    key.name[i] = '\0';
    return b->n_vds ? bsearch(&key, b->vds, b->n_vds, sizeof(*b->vds), vd_cmp) : NULL;
}

/* ---- drift ---- */

static int drift_cmp(const void *a, const void *b)
{
    const struct tw_store_drift_row *x = a, *y = b;
    return x->disk_id < y->disk_id ? -1 : x->disk_id > y->disk_id;
}

static int64_t drift_seconds(const struct build *b, int64_t disk_id)
{
    const struct tw_mr_model *m = b->m;
    size_t lo = 0, hi = b->n_drift;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->drift[mid].disk_id < disk_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t total = 0;
    for (size_t i = lo; i < b->n_drift && b->drift[i].disk_id == disk_id; i++) {
        const struct tw_store_drift_row *d = &b->drift[i];
        int64_t f, t = m->to_ns;
        if (tw_rfc3339_parse(d->since, strlen(d->since), &f, NULL) != TW_OK)
            continue;
        if (d->ended_at[0] && tw_rfc3339_parse(d->ended_at, strlen(d->ended_at), &t, NULL) != TW_OK)
            continue;
        f = floor_s(f < m->from_ns ? m->from_ns : f);
        t = floor_s(t > m->to_ns ? m->to_ns : t);
        if (t > f)
            total += (t - f) / TW_NS_PER_S;
    }
    return total;
}

/* ---- the walk ---- */

static const char *group_key(struct build *b, const struct tw_store_sv_vm *vm)
{
    char key[1024];
    switch (b->o->group_by) {
    case TW_MR_BY_SUBSCRIPTION:
        cpy(key, sizeof(key), vm->subscription_id);
        break;
    case TW_MR_BY_TAG: {
        const char *v = NULL;
        for (size_t i = 0; i < vm->n_tags; i++)
            if (strcasecmp(vm->tags[i].key, b->m->group_tag) == 0)
                v = vm->tags[i].value;
        cpy(key, sizeof(key), v ? v : "(no tag)");
        break;
    }
    default:
        snprintf(key, sizeof(key), "%s/%s", vm->subscription_id, vm->resource_group);
        break;
    }
    return ar_str(b->ar, key);
}

/* Whether disk ID was first seen after the period (no row then). */
static bool seen_later(const struct build *b, int64_t id)
{
    size_t lo = 0, hi = b->rp.n_later;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.later[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->rp.n_later && b->rp.later[lo] == id;
}

static bool week_vm(const struct build *b, int64_t vm_id)
{
    size_t lo = 0, hi = b->rp.n_marks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.marks[mid].vm_id < vm_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->rp.n_marks && b->rp.marks[lo].vm_id == vm_id;
}

static enum tw_err week_add(struct build *b, const struct tw_store_sv_vm *vm, const char *name,
                            const struct pspan *ps, size_t nps, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    if (m->n_week == b->cap_week) {
        size_t nc = b->cap_week ? b->cap_week * 2 : 16;
        struct tw_mr_week_vm *nv = realloc(m->week, nc * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        m->week = nv;
        b->cap_week = nc;
    }
    struct tw_mr_week_vm *w = &m->week[m->n_week];
    memset(w, 0, sizeof(*w));
    w->vm = name;
    w->vm_id = vm->id;
    w->spans = ar_alloc(b->ar, (nps + 1) * sizeof(*w->spans));
    if (!w->spans)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    int64_t wf = m->week_from_ns, wt = m->week_to_ns;
    if (nps == 0 || ps[0].from_ns > wf) {
        /* before the first observation: not known */
        int64_t z = nps ? (ps[0].from_ns < wt ? ps[0].from_ns : wt) : wt;
        if (z > wf) {
            w->spans[w->n_spans].from_ns = wf;
            w->spans[w->n_spans].to_ns = z;
            snprintf(w->spans[w->n_spans].state, sizeof(w->spans[0].state), "unknown");
            w->n_spans++;
        }
    }
    for (size_t i = 0; i < nps; i++) {
        int64_t a = ps[i].from_ns > wf ? ps[i].from_ns : wf;
        int64_t z = ps[i].to_ns < wt ? ps[i].to_ns : wt;
        /* to the second, as every instant of the report: a state held for
         * less than a second (two observations in one) is no span */
        a -= tw_floor_mod(a, 1000000000);
        z -= tw_floor_mod(z, 1000000000);
        if (z <= a)
            continue;
        if (w->n_spans && w->spans[w->n_spans - 1].to_ns == a &&
            !strcmp(w->spans[w->n_spans - 1].state, ps[i].state)) {
            w->spans[w->n_spans - 1].to_ns = z;
            continue;
        }
        struct tw_mr_span *s = &w->spans[w->n_spans++];
        s->from_ns = a;
        s->to_ns = z;
        cpy(s->state, sizeof(s->state), ps[i].state);
    }
    size_t lo = 0, hi = b->rp.n_marks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->rp.marks[mid].vm_id < vm->id)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = lo;
    while (k < b->rp.n_marks && b->rp.marks[k].vm_id == vm->id)
        k++;
    w->marks = ar_alloc(b->ar, (k - lo + 1) * sizeof(*w->marks));
    if (!w->marks)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    for (size_t i = lo; i < k; i++) {
        const struct tw_store_rp_mark *x = &b->rp.marks[i];
        struct tw_mr_mark *mk = &w->marks[w->n_marks++];
        memset(mk, 0, sizeof(*mk));
        mk->at_ns = x->at_ns;
        snprintf(mk->kind, sizeof(mk->kind), "%s",
                 strcmp(x->kind, "deallocate") == 0 ? "stop" : x->kind);
        for (size_t j = 0; j < vm->n_disks; j++)
            if (vm->disks[j].id == x->disk_id)
                cpy(mk->disk, sizeof(mk->disk), vm->disks[j].name);
        cpy(mk->to_sku, sizeof(mk->to_sku), S(x->to_sku));
        cpy(mk->state, sizeof(mk->state), x->state);
    }
    m->n_week++;
    return TW_OK;
}

static enum tw_err row_add(struct build *b, struct tw_mr_disk **out, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    if (m->n_disks == b->cap_disks) {
        size_t nc = b->cap_disks ? b->cap_disks * 2 : 64;
        struct tw_mr_disk *nv = realloc(m->disks, nc * sizeof(*nv));
        struct rowx *nx = realloc(b->x, nc * sizeof(*nx));
        if (nv)
            m->disks = nv;
        if (nx)
            b->x = nx;
        if (!nv || !nx)
            return tw_error_set(err, TW_ENOMEM, "out of memory: the report's rows");
        b->cap_disks = nc;
    }
    *out = &m->disks[m->n_disks];
    memset(*out, 0, sizeof(**out));
    memset(&b->x[m->n_disks], 0, sizeof(b->x[0]));
    b->x[m->n_disks].row = m->n_disks;
    m->n_disks++;
    return TW_OK;
}

static enum tw_err walk(struct build *b, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    struct tw_store_rp_cursor *cur = NULL;
    int64_t from_ms = tw_floor_div(m->from_ns, TW_NS_PER_MS);
    int64_t to_ms = tw_floor_div(m->to_ns, TW_NS_PER_MS) + 1;
    enum tw_err rc = tw_store_report_fleet_open(b->st, from_ms, to_ms, b->only_vm, &cur, err);
    struct pspan *ps = NULL;
    size_t cap_ps = 0;
    while (rc == TW_OK) {
        struct tw_store_rp_vm rv;
        bool done;
        rc = tw_store_report_fleet_next(cur, &rv, &done, err);
        if (rc != TW_OK || done)
            break;
        const struct tw_store_sv_vm vm = rv.vm;
        bool any = false;
        if (b->o->disk_id > 0) {
            for (size_t i = 0; i < vm.n_disks; i++)
                if (vm.disks[i].id == b->o->disk_id)
                    any = true;
            if (!any)
                continue;
        }
        if (vm.n_power + 1 > cap_ps) {
            struct pspan *nv = realloc(ps, (vm.n_power + 1) * sizeof(*nv));
            if (!nv) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory");
                break;
            }
            ps = nv;
            cap_ps = vm.n_power + 1;
        }
        size_t nps = power_spans(m, &vm, ps);
        const char *name = ar_str(b->ar, vm.name), *sub = ar_str(b->ar, vm.subscription_id),
                   *rg = ar_str(b->ar, vm.resource_group), *loc = ar_str(b->ar, vm.location),
                   *size = ar_str(b->ar, vm.vm_size), *key = group_key(b, &vm);
        if (!name || !sub || !rg || !loc || !size || !key) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory");
            break;
        }
        struct region *r = NULL;
        if (vm.location[0] && (rc = region_get(b, vm.location, &r, err)) != TW_OK)
            break;
        if (b->o->disk_id <= 0 && week_vm(b, vm.id) && (rc = week_add(b, &vm, name, ps, nps, err)))
            break;
        bool counted = false;
        for (size_t i = 0; i < vm.n_disks && rc == TW_OK; i++) {
            const struct tw_store_sv_disk *sd = &vm.disks[i];
            if ((b->o->disk_id > 0 && sd->id != b->o->disk_id) || seen_later(b, sd->id))
                continue;
            struct tw_mr_disk *d = NULL;
            if ((rc = row_add(b, &d, err)) != TW_OK)
                break;
            struct rowx *x = &b->x[m->n_disks - 1];
            x->disk_id = sd->id;
            x->pos = (int64_t)i;
            x->group = key;
            x->vm = name;
            x->vm_id = vm.id;
            d->vm_id = vm.id;
            d->disk_id = sd->id;
            d->vm = name;
            d->disk = ar_str(b->ar, sd->name);
            d->subscription_id = sub;
            d->resource_group = rg;
            d->location = loc;
            d->vm_size = size;
            d->resource_id = ar_str(b->ar, rv.resource_ids[i]);
            d->group = key;
            d->role = sd->role;
            d->measured_iops = d->measured_mbps = d->expected_iops = d->expected_mbps = NAN;
            if (!d->disk || !d->resource_id) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory");
                break;
            }
            if (!counted) {
                b->vms++;
                counted = true;
            }
            /* A disk detached during the period counts until then. */
            int64_t end = m->to_ns, det;
            if (rv.detached_ms[i] > 0 && tw_ms_to_ns(rv.detached_ms[i], &det) &&
                floor_s(det) < end)
                end = floor_s(det) > m->from_ns ? floor_s(det) : m->from_ns;
            size_t n;
            if ((rc = timeline(b, sd, &n, end, &d->switches, &x->act_policy, err)) != TW_OK)
                break;
            if (n) {
                const struct seg *l = &b->segs[n - 1];
                cpy(d->sku, sizeof(d->sku), l->sku);
                cpy(d->tier, sizeof(d->tier), l->tier);
                snprintf(d->original_sku, sizeof(d->original_sku), "%s",
                         l->tw ? l->base_sku : l->sku);
                snprintf(d->original_tier, sizeof(d->original_tier), "%s",
                         l->tw ? l->base_tier : l->tier);
            } else {
                cpy(d->sku, sizeof(d->sku), sd->sku);
                cpy(d->original_sku, sizeof(d->original_sku), sd->sku);
                tier_of(b->o->cat, sd->sku, sd->size_gib, sd->tier, d->tier);
                cpy(d->original_tier, sizeof(d->original_tier), d->tier);
            }
            if ((rc = price_row(b, d, r, n, ps, nps, err)) != TW_OK)
                break;
            b->metered_total += d->running_metered_seconds;
            d->drift_seconds = drift_seconds(b, sd->id);
            const struct vd *v = vd_find(b, vm.id, sd->name);
            if (v) {
                cpy(d->verdict, sizeof(d->verdict), v->kind);
                cpy(d->verdict_reason, sizeof(d->verdict_reason), v->reason);
                d->measured_iops = v->m_iops;
                d->measured_mbps = v->m_mbps;
                d->expected_iops = v->e_iops;
                d->expected_mbps = v->e_mbps;
                cpy(d->judged_at, sizeof(d->judged_at), v->judged_at);
            }
        }
    }
    free(ps);
    tw_store_report_fleet_close(cur);
    return rc;
}

/* ---- possible savings ---- */

/* What the policies' runs said of a disk, collected by their sinks (on
 * the runs' thread) and merged into the rows after both the walk and the
 * runs are done, in the order the sinks were called. */
struct opp_rec {
    int64_t disk_id;
    size_t pol;
    enum tw_opp_reason reason;
    struct tw_amount saving;
    char *why;                   /* excluded: the sentence; NULL otherwise */
};

struct opp_coll {
    struct opp_rec *v;
    size_t n, cap;
    int64_t only_disk;           /* > 0: that disk's records alone */
};

struct opp_arg {
    struct opp_coll *c;
    size_t pol;
};

static enum tw_err on_opp_disk(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *od)
{
    (void)vm;
    struct opp_arg *a = arg;
    struct opp_coll *c = a->c;
    if (c->only_disk > 0 && od->id != c->only_disk)
        return TW_OK;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 1024;
        struct opp_rec *nv = realloc(c->v, nc * sizeof(*nv));
        if (!nv)
            return TW_ENOMEM;
        c->v = nv;
        c->cap = nc;
    }
    struct opp_rec *r = &c->v[c->n];
    r->disk_id = od->id;
    r->pol = a->pol;
    r->reason = od->reason;
    r->saving = od->saving.saving;
    r->why = NULL;
    if (od->reason != TW_OPP_COVERED && !(r->why = strdup(od->why)))
        return TW_ENOMEM;
    c->n++;
    return TW_OK;
}

/* The policies' runs: set up before the walk, run beside it on a second
 * handle (opts.db_path) or after it on the report's. */
struct opp_job {
    size_t np;
    struct tw_opp_opts *opts;
    struct tw_opp_sink *sinks;
    struct tw_opp_result *outs;
    struct tw_error *errs;
    struct opp_arg *args;
    struct opp_coll coll;
    struct tw_store *st2;        /* the second handle; NULL: sequential */
    pthread_t th;
    bool started;
    enum tw_err rc;
};

static void *opp_thread(void *arg)
{
    struct opp_job *j = arg;
    j->rc = tw_opp_run_many(j->st2, j->opts, j->np, j->sinks, j->outs, j->errs);
    return NULL;
}

static void opp_job_free(struct opp_job *j)
{
    for (size_t i = 0; j->outs && i < j->np; i++)
        tw_opp_result_cleanup(&j->outs[i]);
    for (size_t i = 0; i < j->coll.n; i++)
        free(j->coll.v[i].why);
    free(j->coll.v);
    free(j->opts);
    free(j->sinks);
    free(j->outs);
    free(j->errs);
    free(j->args);
    if (j->st2)
        tw_store_close(j->st2);
    memset(j, 0, sizeof(*j));
}

static enum tw_err possible_start(struct build *b, struct opp_job *j, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    size_t np = b->o->n_policies;
    memset(j, 0, sizeof(*j));
    if (np == 0)
        return TW_OK;
    j->np = np;
    j->opts = calloc(np, sizeof(*j->opts));
    j->sinks = calloc(np, sizeof(*j->sinks));
    j->outs = calloc(np, sizeof(*j->outs));
    j->errs = calloc(np, sizeof(*j->errs));
    j->args = calloc(np, sizeof(*j->args));
    if (!j->opts || !j->sinks || !j->outs || !j->errs || !j->args)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    j->coll.only_disk = b->o->disk_id;
    for (size_t i = 0; i < np; i++) {
        j->opts[i].policy = b->o->policies[i];
        /* the report's own period (the planner's mode), not the month in
         * the policy's zone: possible and realised cover the same time */
        j->opts[i].year = 0;
        j->opts[i].from_ns = m->from_ns;
        j->opts[i].to_ns = m->to_ns;
        j->opts[i].currency = m->currency;
        j->opts[i].cat = b->o->cat;
        j->opts[i].caps = b->o->caps;
        j->opts[i].arm_sizes = b->o->arm_sizes;
        j->opts[i].zone = b->o->zone;
        j->opts[i].zone_arg = b->o->zone_arg;
        j->args[i] = (struct opp_arg){&j->coll, i};
        j->sinks[i].disk = on_opp_disk;
        j->sinks[i].arg = &j->args[i];
    }
    if (!b->o->db_path || !b->o->db_path[0] || strcmp(b->o->db_path, ":memory:") == 0)
        return TW_OK; /* a database in memory has no second handle */
    enum tw_err rc = tw_store_open(b->o->db_path, &j->st2, err);
    if (rc != TW_OK)
        return rc;
    if (pthread_create(&j->th, NULL, opp_thread, j) != 0)
        return tw_error_set(err, TW_ENOMEM, "the policies' run: no thread");
    j->started = true;
    return TW_OK;
}

static void possible_join(struct opp_job *j)
{
    if (j->started) {
        pthread_join(j->th, NULL);
        j->started = false;
    }
}

static struct rowx *row_by_disk(struct rowx **idx, size_t n, int64_t disk_id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (idx[mid]->disk_id < disk_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && idx[lo]->disk_id == disk_id ? idx[lo] : NULL;
}

/* One record of a policy's run merged into its row. */
static void opp_merge(struct build *b, struct rowx *x, const struct opp_rec *r)
{
    struct tw_mr_disk *d = &b->m->disks[x->row];
    const struct tw_policy *p = b->o->policies[r->pol];
    x->matched++;
    if (r->reason != TW_OPP_COVERED) {
        x->excluded++;
        if (x->excluded == 1) {
            d->excluded = tw_opp_reason_name(r->reason);
            snprintf(d->excluded_why, sizeof(d->excluded_why), "%.400s (policy %.64s)",
                     r->why ? r->why : "", p->name);
        }
        return;
    }
    bool mine = x->act_policy && strcmp(b->rp.strs[x->act_policy], p->name) == 0;
    if (x->forced && !mine)
        return;
    if (mine || !x->have) {
        x->have = true;
        x->forced = mine;
        x->best = r->saving;
        x->best_pol = (int)r->pol;
        return;
    }
    /* the larger saving: compare A - B's sign */
    struct tw_amount diff;
    if (tw_amount_sub(r->saving, x->best, &diff, NULL) == TW_OK && diff.num > 0) {
        x->best = r->saving;
        x->best_pol = (int)r->pol;
    }
}

static int rowx_disk_cmp(const void *a, const void *b)
{
    const struct rowx *x = *(struct rowx *const *)a, *y = *(struct rowx *const *)b;
    return x->disk_id < y->disk_id ? -1 : x->disk_id > y->disk_id;
}

static enum tw_err possible_finish(struct build *b, struct opp_job *j, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    size_t np = j->np;
    if (np == 0) {
        for (size_t i = 0; i < m->n_disks; i++)
            m->disks[i].possible_known = false;
        return TW_OK;
    }
    enum tw_err rc;
    if (j->st2) {
        possible_join(j);
        rc = j->rc;
    } else {
        rc = tw_opp_run_many(b->st, j->opts, np, j->sinks, j->outs, j->errs);
    }
    if (rc != TW_OK) {
        for (size_t i = 0; i < np; i++)
            if (j->outs[i].fail != TW_OPP_FAIL_NONE) {
                if (j->errs[i].code != TW_OK)
                    *err = j->errs[i];
                else
                    tw_error_set(err, rc, "the policy %s's run failed%s",
                                 b->o->policies[i]->name,
                                 rc == TW_ENOMEM ? ": out of memory" : "");
                return err->code;
            }
        return err->code ? err->code : tw_error_set(err, rc, "the policies' run failed");
    }
    struct rowx **idx = malloc((m->n_disks ? m->n_disks : 1) * sizeof(*idx));
    if (!idx)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n_disks; i++)
        idx[i] = &b->x[i];
    qsort(idx, m->n_disks, sizeof(*idx), rowx_disk_cmp);
    for (size_t i = 0; i < j->coll.n; i++) {
        struct rowx *x = row_by_disk(idx, m->n_disks, j->coll.v[i].disk_id);
        if (x)
            opp_merge(b, x, &j->coll.v[i]);
    }
    free(idx);
    for (size_t i = 0; i < m->n_disks && rc == TW_OK; i++) {
        struct tw_mr_disk *d = &m->disks[i];
        struct rowx *x = &b->x[i];
        if (!x->have) {
            d->possible_known = false;
            if (x->matched == 0 || x->excluded < x->matched) {
                d->excluded = NULL;
                d->excluded_why[0] = '\0';
            }
            continue;
        }
        d->excluded = NULL;
        d->excluded_why[0] = '\0';
        d->possible_known = true;
        cpy(d->policy, sizeof(d->policy), b->o->policies[x->best_pol]->name);
        if (!d->priced)
            continue;
        struct tw_amount p;
        if ((rc = tw_amount_sub(x->best, d->realised, &p, err)) != TW_OK)
            break;
        d->possible = p.num > 0 ? p : zero_amount;
    }
    return rc;
}

/* ---- order, groups, totals ---- */

static int row_cmp(const void *pa, const void *pb)
{
    const struct rowx *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);
    if (c)
        return c;
    if ((c = strcmp(a->vm, b->vm)))
        return c;
    if (a->vm_id != b->vm_id)
        return a->vm_id < b->vm_id ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static enum tw_err total_add(struct tw_mr_total *t, const struct tw_mr_disk *d,
                             struct tw_error *err)
{
    enum tw_err rc;
    t->disks++;
    if (!d->priced)
        t->unpriced++;
    if (!d->possible_known)
        t->possible_unknown++;
    if (strcmp(d->verdict, "under") == 0)
        t->under++;
    t->switches += d->switches;
    t->downgraded_seconds += d->downgraded_seconds;
    t->drift_seconds += d->drift_seconds;
    if ((rc = tw_amount_add(t->cost, d->cost, &t->cost, err)) ||
        (rc = tw_amount_add(t->baseline, d->baseline, &t->baseline, err)) ||
        (rc = tw_amount_add(t->realised, d->realised, &t->realised, err)) ||
        (rc = tw_amount_add(t->transactions, d->transactions, &t->transactions, err)) ||
        (rc = tw_amount_add(t->possible, d->possible, &t->possible, err)) ||
        (rc = tw_money_add(t->cost_r, d->cost_r, &t->cost_r, err)) ||
        (rc = tw_money_add(t->baseline_r, d->baseline_r, &t->baseline_r, err)) ||
        (rc = tw_money_add(t->realised_r, d->realised_r, &t->realised_r, err)) ||
        (rc = tw_money_add(t->transactions_r, d->transactions_r, &t->transactions_r, err)) ||
        (rc = tw_money_add(t->possible_r, d->possible_r, &t->possible_r, err)))
        return rc;
    return TW_OK;
}

static void total_init(struct tw_mr_total *t)
{
    memset(t, 0, sizeof(*t));
    t->cost = t->baseline = t->realised = t->transactions = t->possible = zero_amount;
}

static enum tw_err order_and_total(struct build *b, struct tw_error *err)
{
    struct tw_mr_model *m = b->m;
    enum tw_err rc = TW_OK;
    for (size_t i = 0; i < m->n_disks && rc == TW_OK; i++)
        rc = round_row(&m->disks[i], m->decimals, err);
    if (rc != TW_OK)
        return rc;
    /* Sort the small working rows, then put the rows in that order, one
     * cycle at a time (a fleet's rows are too large to copy twice). */
    if (m->n_disks)
        qsort(b->x, m->n_disks, sizeof(*b->x), row_cmp);
    size_t *dest = malloc((m->n_disks ? m->n_disks : 1) * sizeof(*dest));
    if (!dest)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n_disks; i++)
        dest[i] = b->x[i].row; /* row i of the result is the old row dest[i] */
    for (size_t i = 0; i < m->n_disks; i++) {
        if (dest[i] == i || dest[i] == SIZE_MAX)
            continue;
        struct tw_mr_disk tmp = m->disks[i];
        size_t j = i;
        while (dest[j] != i) {
            size_t k = dest[j];
            m->disks[j] = m->disks[k];
            dest[j] = SIZE_MAX;
            j = k;
        }
        m->disks[j] = tmp;
        dest[j] = SIZE_MAX;
    }
    free(dest);
    for (size_t i = 0; i < m->n_disks; i++)
        b->x[i].row = i;
    total_init(&m->fleet);
    m->fleet.vms = b->vms;
    for (size_t i = 0; i < m->n_disks && rc == TW_OK; i++) {
        const struct tw_mr_disk *d = &m->disks[i];
        if (!m->n_groups || strcmp(m->groups[m->n_groups - 1].key, d->group) != 0) {
            struct tw_mr_group *nv = realloc(m->groups, (m->n_groups + 1) * sizeof(*nv));
            if (!nv)
                return tw_error_set(err, TW_ENOMEM, "out of memory");
            m->groups = nv;
            struct tw_mr_group *g = &m->groups[m->n_groups++];
            memset(g, 0, sizeof(*g));
            g->key = d->group;
            g->first = i;
            total_init(&g->t);
        }
        struct tw_mr_group *g = &m->groups[m->n_groups - 1];
        g->n++;
        if (i == g->first || m->disks[i - 1].vm_id != d->vm_id)
            g->t.vms++;
        if ((rc = total_add(&g->t, d, err)) == TW_OK)
            rc = total_add(&m->fleet, d, err);
    }
    return rc;
}

/* ---- the week ---- */

static void week_span(struct tw_mr_model *m)
{
    int64_t to_day = tw_floor_div(m->to_ns, TW_NS_PER_DAY);
    /* Mondays are days 4 + 7k (1970-01-05 was one). */
    int64_t mon = tw_floor_div(to_day - 7 - 4, 7) * 7 + 4;
    int64_t wf = mon * TW_NS_PER_DAY;
    if (wf >= m->from_ns && wf + TW_NS_PER_WEEK <= m->to_ns) {
        m->week_from_ns = wf;
        m->week_to_ns = wf + TW_NS_PER_WEEK;
        return;
    }
    m->week_from_ns = m->from_ns;
    m->week_to_ns = m->from_ns + TW_NS_PER_WEEK < m->to_ns ? m->from_ns + TW_NS_PER_WEEK : m->to_ns;
}

static int week_marks_cmp(const void *a, const void *b)
{
    const struct tw_mr_week_vm *x = a, *y = b;
    if (x->n_marks != y->n_marks)
        return x->n_marks > y->n_marks ? -1 : 1;
    return x->vm_id < y->vm_id ? -1 : x->vm_id > y->vm_id;
}

static int week_name_cmp(const void *a, const void *b)
{
    const struct tw_mr_week_vm *x = a, *y = b;
    int c = strcmp(x->vm, y->vm);
    return c ? c : (x->vm_id < y->vm_id ? -1 : x->vm_id > y->vm_id);
}

static int book_cmp(const void *a, const void *b)
{
    const struct tw_mr_book *x = a, *y = b;
    int c = strcmp(x->region, y->region);
    return c ? c : (x->from_ns < y->from_ns ? -1 : x->from_ns > y->from_ns);
}

/* ---- the build ---- */

static int pol_name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static enum tw_err check_opts(const struct tw_mr_opts *o, struct tw_error *err)
{
    if (!o)
        return tw_error_set(err, TW_EINVAL, "the report's options are missing");
    if (o->month < 1 || o->month > 12)
        return tw_error_set(err, TW_EINVAL, "the month %d is not 1..12", o->month);
    if (o->year < 1970 || o->year > 2199)
        return tw_error_set(err, TW_EINVAL, "the year %d is outside 1970..2199", o->year);
    if (!o->cat)
        return tw_error_set(err, TW_EINVAL, "the report needs the tier catalog");
    if (o->group_by == TW_MR_BY_TAG && (!o->group_tag || !*o->group_tag))
        return tw_error_set(err, TW_EINVAL, "--group-by tag: needs the tag's name (tag:NAME)");
    if (o->group_by == TW_MR_BY_TAG && strnlen(o->group_tag, 513) > 512)
        return tw_error_set(err, TW_EINVAL, "--group-by tag: a tag's name is at most 512 bytes");
    if (o->n_policies && !o->policies)
        return tw_error_set(err, TW_EINVAL, "the policies are missing");
    return TW_OK;
}

static enum tw_err build(struct build *b, struct tw_error *err)
{
    const struct tw_mr_opts *o = b->o;
    struct tw_mr_model *m = b->m;
    enum tw_err rc;
    struct tw_civil c = {.year = o->year, .month = o->month, .day = 1};
    struct tw_civil e = {.year = o->month == 12 ? o->year + 1 : o->year,
                         .month = o->month == 12 ? 1 : o->month + 1,
                         .day = 1};
    int64_t from, end;
    if (tw_civil_to_ns(&c, &from) != TW_OK || tw_civil_to_ns(&e, &end) != TW_OK)
        return tw_error_set(err, TW_ERANGE, "the month %04d-%02d is out of range", o->year,
                            o->month);
    snprintf(m->month, sizeof(m->month), "%04d-%02d", o->year, o->month);
    char nowt[48];
    fmt_at(floor_s(b->now_ns), nowt, sizeof(nowt));
    if (b->now_ns < from)
        return tw_error_set(err, TW_EINVAL,
                            "the month %s has not started (it starts %04d-%02d-01T00:00:00Z; now "
                            "is %s): a report is of a month begun or past",
                            m->month, o->year, o->month, nowt);
    m->from_ns = from;
    m->month_end_ns = end;
    m->partial = b->now_ns < end;
    m->to_ns = m->partial ? floor_s(b->now_ns) : end;
    snprintf(m->generated_at, sizeof(m->generated_at), "%.39s", nowt);
    m->group_by = o->group_by;
    if (o->group_by == TW_MR_BY_TAG)
        cpy(m->group_tag, sizeof(m->group_tag), o->group_tag);
    if ((rc = tw_opp_currency(b->st, o->currency, m->currency, err)) != TW_OK)
        return rc;
    m->decimals = tw_currency_decimals(m->currency);
    if (m->decimals < 0)
        return tw_error_set(err, TW_EINVAL,
                            "the currency %s is not one the Retail Prices API documents", m->currency);
    if (o->n_policies) {
        m->policies = calloc(o->n_policies, sizeof(*m->policies));
        if (!m->policies)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->n_policies; i++)
            cpy(m->policies[i], sizeof(m->policies[i]), o->policies[i]->name);
        m->n_policies = o->n_policies;
        qsort(m->policies, m->n_policies, sizeof(*m->policies), pol_name_cmp);
    }
    week_span(m);
    if ((rc = tw_store_report_read(b->st, m->from_ns, m->to_ns, m->week_from_ns, m->week_to_ns,
                                   m->currency, &b->rp, err)) != TW_OK)
        return rc;
    if ((rc = tw_store_drift_list(b->st, false, &b->drift, &b->n_drift, err)) != TW_OK)
        return rc;
    if (b->n_drift)
        qsort(b->drift, b->n_drift, sizeof(*b->drift), drift_cmp);
    /* The verdicts first, kept by VM and disk name. */
    struct tw_svc_compliance_ctx cctx = {.cat = o->cat, .caps = o->caps, .arm = o->arm_sizes};
    struct tw_svc_compliance_sink sink = {on_verdict, on_verdict_error, b};
    if (o->disk_id > 0) {
        struct tw_store_disk_row dr;
        if ((rc = tw_store_disk(b->st, o->disk_id, &dr, err)) != TW_OK) {
            if (rc == TW_ENOENT)
                tw_error_set(err, TW_ENOENT, "no disk %lld in the store", (long long)o->disk_id);
            return rc;
        }
        b->only_vm = dr.vm_id > 0 ? dr.vm_id : -1;
    }
    if (o->caps) {
        if (o->disk_id > 0) {
            rc = b->only_vm > 0 ? tw_svc_compliance_vm(b->st, &cctx, b->only_vm, &sink, err)
                                : TW_OK;
            if (rc == TW_ENOENT)
                rc = TW_OK;
        } else {
            rc = tw_svc_compliance_fleet(b->st, &cctx, &sink, NULL, err);
        }
        if (rc != TW_OK)
            return rc;
        if (b->n_vds)
            qsort(b->vds, b->n_vds, sizeof(*b->vds), vd_cmp);
    }
    /* The rows in one allocation (a fleet's are most of the model). */
    int64_t attached = 1;
    if (o->disk_id <= 0 &&
        (rc = tw_store_report_attached(b->st, tw_floor_div(m->from_ns, TW_NS_PER_MS), &attached,
                                       err)) != TW_OK)
        return rc;
    if (attached > 0) {
        m->disks = malloc((size_t)attached * sizeof(*m->disks));
        b->x = malloc((size_t)attached * sizeof(*b->x));
        if (!m->disks || !b->x)
            return tw_error_set(err, TW_ENOMEM, "out of memory: the report's %lld rows",
                                (long long)attached);
        b->cap_disks = (size_t)attached;
    }
    /* The policies' runs beside the walk (a second handle), else after it. */
    struct opp_job job;
    rc = possible_start(b, &job, err);
    if (rc == TW_OK)
        rc = walk(b, err);
    else
        possible_join(&job);
    if (rc != TW_OK) {
        possible_join(&job);
        opp_job_free(&job);
        return rc;
    }
    rc = possible_finish(b, &job, err);
    possible_join(&job);
    opp_job_free(&job);
    if (rc != TW_OK)
        return rc;
    if (o->disk_id > 0 && m->n_disks == 0 &&
        (rc = note(b, err, "disk %lld was not in the fleet in %s (not attached to a VM during "
                           "it): the report has no row for it.",
                   (long long)o->disk_id, m->month)) != TW_OK)
        return rc;
    if ((rc = order_and_total(b, err)) != TW_OK)
        return rc;
    /* missing regions */
    for (size_t i = 0; i < b->n_regions; i++) {
        const struct region *r = &b->regions[i];
        if (!r->missing || !r->missing_disks)
            continue;
        struct tw_mr_missing *nv = realloc(m->missing, (m->n_missing + 1) * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        m->missing = nv;
        struct tw_mr_missing *x = &m->missing[m->n_missing++];
        memset(x, 0, sizeof(*x));
        cpy(x->region, sizeof(x->region), r->name);
        cpy(x->why, sizeof(x->why), r->why);
        x->disks = r->missing_disks;
    }
    for (size_t i = 1; i < m->n_missing; i++)
        for (size_t j = i; j > 0 && strcmp(m->missing[j].region, m->missing[j - 1].region) < 0;
             j--) {
            struct tw_mr_missing t = m->missing[j];
            m->missing[j] = m->missing[j - 1];
            m->missing[j - 1] = t;
        }
    if (m->n_books)
        qsort(m->books, m->n_books, sizeof(*m->books), book_cmp);
    /* the week: most marks first when capped, then by name */
    size_t all_week = m->n_week;
    if (m->n_week > TW_MR_WEEK_VMS) {
        qsort(m->week, m->n_week, sizeof(*m->week), week_marks_cmp);
        m->n_week = TW_MR_WEEK_VMS;
    }
    if (m->n_week)
        qsort(m->week, m->n_week, sizeof(*m->week), week_name_cmp);
    /* notes */
    if (m->partial && (rc = note(b, err,
                                 "The month is not over: the figures run from %04d-%02d-01 to "
                                 "%s, when the report was made.",
                                 o->year, o->month, m->generated_at)))
        return rc;
    if (m->fleet.unpriced &&
        (rc = note(b, err,
                   "%lld disk%s could not be priced (see each one's unpriced_why and missing): "
                   "their figures are left out of the totals, never counted as zero.",
                   (long long)m->fleet.unpriced, m->fleet.unpriced == 1 ? "" : "s")))
        return rc;
    if (b->after_note &&
        (rc = note(b, err,
                   "A part of the month before any book of its region was fetched is priced by "
                   "the first book fetched after it (books[].after).")))
        return rc;
    if (b->metered_total &&
        (rc = note(b, err,
                   "%lld second%s on a Standard SSD/HDD SKU after a downgrade fell while the VM "
                   "ran (running_metered_seconds): their transactions are not known and not "
                   "counted, so the realised saving of those disks may be smaller.",
                   (long long)b->metered_total, b->metered_total == 1 ? "" : "s")))
        return rc;
    if (all_week > TW_MR_WEEK_VMS &&
        (rc = note(b, err,
                   "The week's timeline shows %d of the %zu VMs with actions that week, those "
                   "with the most.",
                   TW_MR_WEEK_VMS, all_week)))
        return rc;
    if ((rc = note(b, err,
                   "A disk detached from its VM during the month counts until then, one "
                   "detached before it is not in the report; a disk first seen during the "
                   "month counts from then.")))
        return rc;
    return note(b, err,
                "Each row's amounts are rounded once to the currency's minor unit (half away "
                "from zero); a total's rounded figure is the sum of its rows' rounded figures, "
                "and the _unrounded figures are exact.");
}

enum tw_err tw_mr_build(struct tw_store *st, const struct tw_mr_opts *o, struct tw_mr_model *out,
                        struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    enum tw_err rc = check_opts(o, err);
    if (rc != TW_OK)
        return rc;
    struct build b = {.st = st, .o = o, .m = out};
    b.ar = calloc(1, sizeof(*b.ar));
    if (!b.ar)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    out->arena = b.ar;
    out->fleet.cost = out->fleet.baseline = out->fleet.realised = out->fleet.transactions =
        out->fleet.possible = zero_amount;
    if (o->now_ns) {
        b.now_ns = o->now_ns;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        b.now_ns = (int64_t)ts.tv_sec * TW_NS_PER_S + ts.tv_nsec;
    }
    /* One read snapshot for all the build reads. */
    rc = tw_store_report_begin(st, err);
    if (rc == TW_OK)
        rc = build(&b, err);
    tw_store_report_end(st);
    tw_store_report_free(&b.rp);
    for (size_t i = 0; i < b.n_regions; i++) {
        for (size_t p = 0; p < b.regions[i].n_pieces; p++)
            tw_pricebook_free(b.regions[i].pieces[p].pb);
        free(b.regions[i].pieces);
    }
    free(b.regions);
    for (size_t i = 0; i < b.n_items; i++)
        tw_price_items_cleanup(&b.items[i].items);
    free(b.items);
    free(b.x);
    free(b.vds);
    free(b.drift);
    free(b.segs);
    return rc;
}

void tw_mr_model_cleanup(struct tw_mr_model *m)
{
    if (!m)
        return;
    free(m->disks);
    free(m->groups);
    free(m->books);
    free(m->missing);
    free(m->notes);
    free(m->policies);
    free(m->week);
    ar_free(m->arena);
    memset(m, 0, sizeof(*m));
}
