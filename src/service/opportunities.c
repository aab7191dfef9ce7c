/*
 * opportunities.c - a policy over the fleet for a month (opportunities.h):
 * which disks it moves, when, to what, for how much, and why the others
 * are left.  The arithmetic is core's (tw_target_choose, tw_savings_windows);
 * this file decides what each disk is, gets its windows and prices, and
 * adds up.
 */
#include "service/opportunities.h"

#include "core/fnv.h"
#include "core/observed.h"
#include "core/sku.h"
#include "core/time.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const reason_names[TW_OPP_REASON_COUNT] = {
    [TW_OPP_COVERED] = "covered",
    [TW_OPP_EXCLUDED_BY_POLICY] = "excluded_by_policy",
    [TW_OPP_OS_DISK] = "os_disk",
    [TW_OPP_NO_SWITCH] = "policy_never_switches",
    [TW_OPP_RESERVATION] = "reservation",
    [TW_OPP_PROVISIONED] = "premium_v2_or_ultra",
    [TW_OPP_UNKNOWN_SKU] = "unknown_sku",
    [TW_OPP_SHARED] = "shared",
    [TW_OPP_BURSTING] = "bursting",
    [TW_OPP_HIBERNATED] = "hibernated",
    [TW_OPP_NO_PREMIUM_VM] = "vm_size_without_premium",
    [TW_OPP_NO_PRICE] = "no_price",
    [TW_OPP_OS_DISK_TO_HDD] = "os_disk_to_hdd",
    [TW_OPP_NO_TARGET] = "no_target",
    [TW_OPP_ALREADY_TARGET] = "already_on_target",
    [TW_OPP_NO_WINDOW] = "no_window",
};

const char *tw_opp_reason_name(enum tw_opp_reason r)
{
    return (unsigned)r < TW_OPP_REASON_COUNT ? reason_names[r] : "unknown";
}

bool tw_opp_hours_text(tw_opp_ns ns, char *buf, size_t cap)
{
    return tw_hours_decimal_wide(ns, buf, cap);
}

enum tw_err tw_opp_month_parse(const char *buf, size_t len, int *year, int *month,
                               struct tw_error *err)
{
    *year = *month = 0;
    bool shape = buf && len == 7 && buf[4] == '-';
    for (size_t i = 0; shape && i < 7; i++)
        if (i != 4 && !isdigit((unsigned char)buf[i]))
            shape = false;
    if (!shape)
        return tw_error_set(err, TW_EPARSE, "the month \"%.*s\" is not YYYY-MM (e.g. 2026-12)",
                            buf ? (int)(len > 40 ? 40 : len) : 0, buf ? buf : "");
    int y = (buf[0] - '0') * 1000 + (buf[1] - '0') * 100 + (buf[2] - '0') * 10 + (buf[3] - '0');
    int m = (buf[5] - '0') * 10 + (buf[6] - '0');
    if (m < 1 || m > 12)
        return tw_error_set(err, TW_EPARSE, "the month \"%.7s\" has no month %02d (01..12)", buf,
                            m);
    if (y < 1970 || y > 2199)
        return tw_error_set(err, TW_ERANGE, "the month \"%.7s\" is outside the years 1970..2199",
                            buf);
    *year = y;
    *month = m;
    return TW_OK;
}

enum tw_err tw_opp_currency(struct tw_store *st, const char *want, char out[4],
                            struct tw_error *err)
{
    out[0] = '\0';
    char have[16][4];
    size_t n = 0;
    enum tw_err rc = tw_store_pricebook_currencies(st, have, 16, &n, err);
    if (rc != TW_OK)
        return rc;
    bool asked = want && *want;
    if (asked) {
        bool ok = strlen(want) == 3;
        for (size_t i = 0; ok && i < 3; i++)
            ok = isalpha((unsigned char)want[i]);
        if (!ok)
            return tw_error_set(err, TW_EINVAL,
                                "the currency \"%.20s\" is not a three-letter code (GBP, USD, "
                                "EUR, ...)",
                                want);
    }
    /* No book at all is said as such, a currency asked for or not: there
     * is nothing to price any disk with. */
    if (n == 0)
        return tw_error_set(err, TW_ENOENT,
                            "the store has no price book; refresh or import one first "
                            "(tierwise prices refresh --db F --region R --currency C)");
    if (asked) {
        for (size_t i = 0; i < 3; i++)
            out[i] = (char)toupper((unsigned char)want[i]);
        out[3] = '\0';
        return TW_OK;
    }
    if (n == 1) {
        memcpy(out, have[0], 4);
        return TW_OK;
    }
    char list[80] = "";
    for (size_t i = 0; i < n && i < 16; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", have[i]);
    }
    return tw_error_set(err, TW_EINVAL,
                        "the store's price books are in %zu currencies (%s%s); choose one with "
                        "--currency (or ?currency=)",
                        n, list, n > 16 ? ", ..." : "");
}

/* ---- the run's state ---- */

struct book_slot {
    char region[48];
    struct tw_pricebook *b;      /* NULL: missing (WHY) */
};

struct zone_slot {
    char name[TW_TZ_NAME_MAX];
    struct tw_tz *z;
};

/* Totals by key, open addressing. */
struct group_map {
    struct tw_opp_group *v;
    uint64_t *hash;              /* 0: empty slot */
    size_t n, cap;
};

#define WCACHE_MAX 2048
#define MEMO_SLOTS 16384 /* a power of two */
/* The windows a memo keeps (with_windows) in all, at most: a year of one
 * disk's windows is some 50 KiB. */
#define MEMO_WINS_BUDGET ((size_t)256 << 20)

/* A disk's saving by its windows (their instants, shared through the
 * window cache or the policy's list) and its two prices, when nothing else
 * of the disk enters (no SKU change made before, no transactions): disks
 * alike save alike, and the exact arithmetic is most of a run's time. */
struct memo_slot {
    const struct tw_interval *iv; /* NULL: empty */
    size_t n;
    int64_t from_micros, to_micros;
    struct tw_disk_saving saving;
    struct tw_window_saving *wins; /* with_windows: the N windows as planned (owned) */
};

/* Windows already worked out, by what they came from: a VM's schedule tag
 * (its text: what it parses to, or why it does not) or learned windows
 * (their text and zone), with their instants over the month.  A fleet has
 * few distinct schedules, and a zone's instants cost most of the time. */
struct wcache_entry {
    uint64_t hash;
    char *key;
    bool ok;
    char why[512];
    char text[TW_OPP_WINDOWS_TEXT_MAX];
    char tz[TW_TZ_NAME_MAX];
    struct tw_interval *iv;
    size_t n;
};

_Static_assert(sizeof(((struct tw_opp_disk *)0)->windows) >= TW_WINDOWS_MAX * 21 + 1,
               "a disk's windows text holds TW_WINDOWS_MAX windows in the grammar");

struct run {
    struct tw_store *st;
    const struct tw_opp_opts *o;
    const struct tw_policy *p;
    struct tw_opp_result *res;
    struct tw_reservations resv;
    int64_t *resv_used;          /* per resv entry: disks counted against it */
    struct book_slot *books;
    size_t n_books;
    /* The zones loaded so far (the policy's, the tags' tz=), as many as
     * the fleet names: the table grows. */
    struct zone_slot *zones;
    size_t n_zones, cap_zones;
    struct tw_tz *policy_zone;   /* owned by ZONES */
    struct group_map rgs, subs;
    int64_t walk_from_ns;
    int64_t model_from_ns;       /* the windows modelled from (a plan's anchor; a month's start) */
    int64_t learn_ref_ns;        /* observed windows learned from the weeks before it */
    int64_t hib_from_ns;         /* hibernation looked for from */
    int64_t walk_from_ms;        /* the walk's start as the store reads it */
    int64_t to_ms;               /* and its end (not included) */
    char month_start[40];        /* RFC 3339 of the month's start, UTC */
    /* The policy's list windows, the same for every VM. */
    struct tw_interval *list_iv;
    size_t n_list_iv;
    /* This VM's. */
    struct tw_power_obs *obs;
    size_t n_obs, cap_obs;
    int64_t *prior;
    size_t cap_prior;
    struct wcache_entry *wc;     /* WCACHE_MAX slots, allocated on first use */
    size_t n_wc;
    struct memo_slot *memo;      /* MEMO_SLOTS, allocated on first use */
    size_t n_memo;
    size_t memo_wins_bytes;      /* the windows the memo keeps */
    /* with_windows: one disk's windows as planned, when not memoised. */
    struct tw_window_saving *wins;
    size_t cap_wins;
};

static struct memo_slot *memo_slot(struct run *r, const struct tw_interval *iv, size_t n,
                                   struct tw_money from, struct tw_money to, bool *found)
{
    *found = false;
    if (!r->memo && !(r->memo = calloc(MEMO_SLOTS, sizeof(*r->memo))))
        return NULL;
    uint64_t h = tw_fnv_i64(tw_fnv_i64(tw_fnv_i64(TW_FNV_START, (int64_t)(uintptr_t)iv),
                                       from.micros),
                            to.micros);
    for (size_t k = 0, j = h & (MEMO_SLOTS - 1); k < MEMO_SLOTS; k++, j = (j + 1) & (MEMO_SLOTS - 1)) {
        struct memo_slot *m = &r->memo[j];
        if (!m->iv) {
            if (r->n_memo * 2 >= MEMO_SLOTS)
                return NULL; /* full enough: computed, not kept */
            return m;
        }
        if (m->iv == iv && m->n == n && m->from_micros == from.micros &&
            m->to_micros == to.micros) {
            *found = true;
            return m;
        }
    }
    return NULL;
}

static uint64_t text_hash(const char *a, const char *b)
{
    uint64_t h = tw_fnv_text(TW_FNV_START, a);
    h = tw_fnv_bytes(h, "\x1f", 1);
    h = tw_fnv_text(h, b);
    return h ? h : 1;
}

static struct wcache_entry *wc_find(struct run *r, const char *a, const char *b)
{
    uint64_t h = text_hash(a, b);
    size_t la = strlen(a);
    for (size_t i = 0; i < r->n_wc; i++) {
        struct wcache_entry *e = &r->wc[i];
        if (e->hash == h && strncmp(e->key, a, la) == 0 && e->key[la] == '\x1f' &&
            strcmp(e->key + la + 1, b) == 0)
            return e;
    }
    return NULL;
}

/* A new entry for (A, B), or NULL when the cache is full or out of memory
 * (the caller then keeps what it worked out to itself). */
static struct wcache_entry *wc_add(struct run *r, const char *a, const char *b)
{
    if (!r->wc && !(r->wc = calloc(WCACHE_MAX, sizeof(*r->wc))))
        return NULL;
    if (r->n_wc == WCACHE_MAX)
        return NULL;
    size_t la = strlen(a), lb = strlen(b);
    char *key = malloc(la + lb + 2);
    if (!key)
        return NULL;
    memcpy(key, a, la);
    key[la] = '\x1f';
    memcpy(key + la + 1, b, lb + 1);
    struct wcache_entry *e = &r->wc[r->n_wc++];
    memset(e, 0, sizeof(*e));
    e->hash = text_hash(a, b);
    e->key = key;
    return e;
}

static void wc_free(struct run *r)
{
    for (size_t i = 0; i < r->n_wc; i++) {
        free(r->wc[i].key);
        free(r->wc[i].iv);
    }
    free(r->wc);
}

static enum tw_err zone_get(struct run *r, const char *name, struct tw_tz **out,
                            struct tw_error *err)
{
    for (size_t i = 0; i < r->n_zones; i++)
        if (strcmp(r->zones[i].name, name) == 0) {
            *out = r->zones[i].z;
            return TW_OK;
        }
    if (r->n_zones == r->cap_zones) {
        size_t cap = r->cap_zones ? r->cap_zones * 2 : 16;
        struct zone_slot *nv = realloc(r->zones, cap * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        r->zones = nv;
        r->cap_zones = cap;
    }
    if (!r->o->zone)
        return tw_error_set(err, TW_EINVAL, "no way to load the time zone %s", name);
    struct tw_tz *z = NULL;
    enum tw_err rc = r->o->zone(r->o->zone_arg, name, &z, err);
    if (rc != TW_OK)
        return rc;
    snprintf(r->zones[r->n_zones].name, sizeof(r->zones[0].name), "%s", name);
    r->zones[r->n_zones++].z = z;
    *out = z;
    return TW_OK;
}

static int book_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tw_opp_book *)a)->region,
                  ((const struct tw_opp_book *)b)->region);
}

/* The book of REGION (lower-cased), loaded on first use; *B NULL when the
 * store has none in the run's currency (the result's book says why). */
static enum tw_err book_get(struct run *r, const char *region, const struct tw_pricebook **b,
                            struct tw_opp_book **info, struct tw_error *err)
{
    char reg[48];
    size_t i;
    for (i = 0; region[i] && i < sizeof(reg) - 1; i++)
        reg[i] = (char)tolower((unsigned char)region[i]);
    reg[i] = '\0';
    for (i = 0; i < r->n_books; i++)
        if (strcmp(r->books[i].region, reg) == 0) {
            *b = r->books[i].b;
            *info = &r->res->books[i];
            return TW_OK;
        }
    struct book_slot *nb = realloc(r->books, (r->n_books + 1) * sizeof(*nb));
    if (!nb)
        return tw_error_set(err, TW_ENOMEM, "out of memory loading price books");
    r->books = nb;
    struct tw_opp_book *ni = realloc(r->res->books, (r->n_books + 1) * sizeof(*ni));
    if (!ni)
        return tw_error_set(err, TW_ENOMEM, "out of memory loading price books");
    r->res->books = ni;
    struct book_slot *s = &r->books[r->n_books];
    struct tw_opp_book *in = &r->res->books[r->n_books];
    memset(s, 0, sizeof(*s));
    memset(in, 0, sizeof(*in));
    snprintf(s->region, sizeof(s->region), "%s", reg);
    snprintf(in->region, sizeof(in->region), "%s", reg);
    r->n_books++;
    r->res->n_books = r->n_books;
    const char *cur = r->res->currency;
    char *text = NULL;
    size_t len = 0;
    struct tw_error gerr = {0};
    enum tw_err rc = tw_store_pricebook_get_at(r->st, reg, cur, r->month_start, &text, &len,
                                               in->source, sizeof(in->source), in->fetched_at,
                                               sizeof(in->fetched_at), &gerr);
    if (rc == TW_ENOENT)
        rc = tw_store_pricebook_get(r->st, reg, cur, &text, &len, in->source,
                                    sizeof(in->source), in->fetched_at, sizeof(in->fetched_at),
                                    &gerr);
    if (rc == TW_ENOENT) {
        in->missing = true;
        snprintf(in->why, sizeof(in->why),
                 "no price book for region %s in %s in the store: refresh it (tierwise prices "
                 "refresh --region %s --currency %s) or import one",
                 reg, cur, reg, cur);
        *b = NULL;
        *info = in;
        return TW_OK;
    }
    if (rc != TW_OK) {
        *err = gerr;
        return rc;
    }
    struct tw_price_items items = {0};
    struct tw_error perr = {0};
    rc = tw_price_page_parse(text, len, &items, NULL, &perr);
    free(text);
    if (rc != TW_OK) {
        tw_price_items_cleanup(&items);
        return tw_error_set(err, rc,
                            "the stored price book of %s %s does not parse (%s); refresh or "
                            "import it again",
                            reg, cur, perr.msg);
    }
    rc = tw_pricebook_build(&items, reg, cur, in->source, in->fetched_at, r->month_start, &s->b,
                            err);
    if (rc != TW_OK)
        return rc;
    *b = s->b;
    *info = in;
    return TW_OK;
}

/* ---- totals ---- */

static bool key_eq(const struct tw_opp_group *g, const char *sub, const char *rg)
{
    return strcasecmp(g->subscription_id, sub) == 0 && strcasecmp(g->resource_group, rg) == 0;
}

static uint64_t key_hash(const char *sub, const char *rg)
{
    uint64_t h = TW_FNV_START;
    for (const char *s = sub; *s; s++) {
        char c = (char)tolower((unsigned char)*s);
        h = tw_fnv_bytes(h, &c, 1);
    }
    h = tw_fnv_bytes(h, "/", 1);
    for (const char *s = rg; *s; s++) {
        char c = (char)tolower((unsigned char)*s);
        h = tw_fnv_bytes(h, &c, 1);
    }
    return h ? h : 1;
}

/* The group of (SUB, RG), made on first use; NULL when out of memory. */
static struct tw_opp_group *group_get(struct group_map *m, const char *sub, const char *rg)
{
    if (m->n * 2 >= m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        uint64_t *nh = calloc(ncap, sizeof(*nh));
        struct tw_opp_group *nv = calloc(ncap, sizeof(*nv));
        if (!nh || !nv) {
            free(nh);
            free(nv);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->hash[i])
                continue;
            size_t j = m->hash[i] & (ncap - 1);
            while (nh[j])
                j = (j + 1) & (ncap - 1);
            nh[j] = m->hash[i];
            nv[j] = m->v[i];
        }
        free(m->hash);
        free(m->v);
        m->hash = nh;
        m->v = nv;
        m->cap = ncap;
    }
    uint64_t h = key_hash(sub, rg);
    size_t j = h & (m->cap - 1);
    while (m->hash[j]) {
        if (m->hash[j] == h && key_eq(&m->v[j], sub, rg))
            return &m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    m->hash[j] = h;
    memset(&m->v[j], 0, sizeof(m->v[j]));
    snprintf(m->v[j].subscription_id, sizeof(m->v[j].subscription_id), "%s", sub);
    snprintf(m->v[j].resource_group, sizeof(m->v[j].resource_group), "%s", rg);
    m->v[j].t.saving = tw_amount_of(tw_money_micros(0));
    m->n++;
    return &m->v[j];
}

static int group_cmp(const void *a, const void *b)
{
    const struct tw_opp_group *x = a, *y = b;
    int c = strcasecmp(x->subscription_id, y->subscription_id);
    return c ? c : strcasecmp(x->resource_group, y->resource_group);
}

/* M's groups as a sorted array (M emptied). */
static struct tw_opp_group *group_take(struct group_map *m, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->hash[i])
            m->v[k++] = m->v[i];
    struct tw_opp_group *v = m->v;
    free(m->hash);
    memset(m, 0, sizeof(*m));
    if (k)
        qsort(v, k, sizeof(*v), group_cmp);
    *n = k;
    return v;
}

static enum tw_err total_add(struct tw_opp_total *t, const struct tw_opp_total *d,
                             struct tw_error *err)
{
    t->vms += d->vms;
    t->disks += d->disks;
    t->excluded += d->excluded;
    t->no_price += d->no_price;
    t->downgraded_ns += d->downgraded_ns;
    return tw_amount_add(t->saving, d->saving, &t->saving, err);
}

/* ---- one VM's windows ---- */

struct vm_windows {
    bool ok;
    char why[512];               /* !ok: why there is none */
    const char *source;
    char source_buf[600];
    char text[TW_OPP_WINDOWS_TEXT_MAX];
    char tz[TW_TZ_NAME_MAX];
    struct tw_interval *iv;      /* owned unless it is the run's list */
    size_t n;
    bool owned;
};

static const char *tag_value(const struct tw_store_sv_vm *vm, const char *key)
{
    const struct tw_tag *t = tw_tag_find(vm->tags, vm->n_tags, key);
    return t ? t->value : NULL;
}

/* How far before the month a schedule's windows are placed: one week.
 * Only the windows still open at the month's start are modelled (judge
 * drops those that closed before it), and a window is at most a week of
 * the wall clock, so one open at the start opened in the week before it
 * and keeps its real margins (a window longer in instants, over an autumn
 * change, or windows that join into one span, are cut at this lead: the
 * switch is then placed at the lead, before the month all the same).  The
 * SKU changes that count against the quota before the first modelled
 * window are the SKU history's only, never modelled windows: the walk
 * reads the quota's span before this lead (tw_opp_run). */
#define SCHEDULE_LEAD_NS TW_NS_PER_WEEK

/* W's text in the grammar into OUT (CAP bytes, TW_OPP_WINDOWS_TEXT_MAX
 * holds any windows): never a placeholder for it. */
static enum tw_err windows_text(const struct tw_windows *ws, char *out, size_t cap,
                                struct tw_error *err)
{
    if (tw_windows_format(ws, out, cap))
        return TW_OK;
    return tw_error_set(err, TW_ERANGE, "%zu windows do not fit the %zu bytes of their text",
                        ws->n, cap);
}

/* The local Monday 00:00 (zone Z) of the week holding NS (a midnight the
 * clocks skip: the first instant after it). */
static int64_t week_start(const struct tw_tz *z, int64_t ns)
{
    struct tw_civil c;
    tw_tz_ns_to_civil(z, ns, &c, NULL);
    int64_t days = tw_days_from_civil(c.year, c.month, c.day);
    days -= tw_weekday_from_days(days); /* 0 Monday */
    struct tw_civil m = {0};
    int64_t y = 0;
    tw_civil_from_days(days, &y, &m.month, &m.day);
    m.year = (int32_t)y;
    int64_t out;
    if (tw_tz_civil_to_ns(z, &m, &out, NULL) != TW_OK || out > ns)
        return ns - (int64_t)7 * TW_NS_PER_DAY; /* never after NS */
    return out;
}

static enum tw_err windows_for(struct run *r, const struct tw_store_sv_vm *vm,
                               struct vm_windows *w, struct tw_error *err)
{
    const struct tw_policy *p = r->p;
    memset(w, 0, sizeof(*w));
    int64_t from = r->model_from_ns - SCHEDULE_LEAD_NS, to = r->res->to_ns + TW_NS_PER_WEEK;
    struct tw_windows ws;
    struct tw_tz *z = r->policy_zone;
    if (p->windows_kind == TW_PW_LIST) {
        w->source = "list";
        snprintf(w->tz, sizeof(w->tz), "%s", r->res->timezone);
        enum tw_err rc = windows_text(&p->windows, w->text, sizeof(w->text), err);
        if (rc != TW_OK)
            return rc;
        w->iv = r->list_iv;
        w->n = r->n_list_iv;
        w->ok = true;
        return TW_OK;
    }
    if (p->windows_kind == TW_PW_TAG) {
        snprintf(w->source_buf, sizeof(w->source_buf), "tag:%.500s", p->windows_tag);
        w->source = w->source_buf;
        const char *v = tag_value(vm, p->windows_tag);
        const struct wcache_entry *hit = v ? wc_find(r, "tag", v) : NULL;
        if (hit) {
            w->ok = hit->ok;
            memcpy(w->why, hit->why, sizeof(w->why));
            memcpy(w->text, hit->text, sizeof(w->text));
            memcpy(w->tz, hit->tz, sizeof(w->tz));
            w->iv = hit->iv;
            w->n = hit->n;
            return TW_OK;
        }
        if (!v) {
            snprintf(w->why, sizeof(w->why),
                     "the VM has no tag %.200s, where this policy reads its schedule (e.g. "
                     "off=(M-F,19);on=(M-F,7);tz=Europe/London)",
                     p->windows_tag);
            return TW_OK;
        }
        struct tw_error perr = {0};
        if (tw_windows_parse_custodian(v, strlen(v), &ws, &perr) != TW_OK) {
            snprintf(w->why, sizeof(w->why), "the VM's tag %.100s \"%.120s\" does not parse: %.200s",
                     p->windows_tag, v, perr.msg);
            struct wcache_entry *e = wc_add(r, "tag", v);
            if (e)
                memcpy(e->why, w->why, sizeof(e->why));
            return TW_OK;
        }
        if (ws.tz[0]) {
            struct tw_error zerr = {0};
            if (zone_get(r, ws.tz, &z, &zerr) != TW_OK) {
                if (zerr.code == TW_ENOMEM)
                    return tw_error_set(err, TW_ENOMEM, "%s", zerr.msg);
                snprintf(w->why, sizeof(w->why),
                         "the VM's tag %.100s \"%.120s\" names the zone %.60s, which does not "
                         "load: %.160s",
                         p->windows_tag, v, ws.tz, zerr.msg);
                struct wcache_entry *e = wc_add(r, "tag", v);
                if (e)
                    memcpy(e->why, w->why, sizeof(e->why));
                return TW_OK;
            }
        }
        snprintf(w->tz, sizeof(w->tz), "%s", ws.tz[0] ? ws.tz : r->res->timezone);
    } else {
        w->source = "observed";
        snprintf(w->tz, sizeof(w->tz), "%s", r->res->timezone);
        struct tw_error oerr = {0};
        enum tw_err rc = tw_observed_windows(r->obs, r->n_obs, r->learn_ref_ns,
                                             p->observed_weeks, p->observed_min_weeks, z, &ws,
                                             &oerr);
        if (rc == TW_ENOMEM)
            return tw_error_set(err, rc, "%s", oerr.msg);
        if (rc != TW_OK) {
            /* The VM's own history: its disks have no window, the run goes on. */
            snprintf(w->why, sizeof(w->why),
                     "the windows of VM %.120s can't be learned from its power-state history "
                     "(%zu observations): %.300s",
                     vm->name, r->n_obs, oerr.msg);
            return TW_OK;
        }
        if (ws.n == 0) {
            snprintf(w->why, sizeof(w->why),
                     "no deallocated quarter-hour recurs in at least %d of the %d weeks "
                     "before the month (%zu power-state observations)",
                     p->observed_min_weeks, p->observed_weeks, r->n_obs);
            return TW_OK;
        }
    }
    enum tw_err rc = windows_text(&ws, w->text, sizeof(w->text), err);
    if (rc != TW_OK)
        return rc;
    /* Learned windows already seen (the same text in the same zone) have
     * their instants already. */
    char okey[TW_TZ_NAME_MAX + 8];
    snprintf(okey, sizeof(okey), "obs %s", w->tz);
    if (p->windows_kind == TW_PW_OBSERVED) {
        const struct wcache_entry *hit = wc_find(r, okey, w->text);
        if (hit) {
            w->iv = hit->iv;
            w->n = hit->n;
            w->ok = true;
            return TW_OK;
        }
    }
    struct tw_error ierr = {0};
    rc = tw_windows_instants(&ws, z, from, to, &w->iv, &w->n, &ierr);
    if (rc == TW_ENOMEM)
        return tw_error_set(err, rc, "%s", ierr.msg);
    if (rc != TW_OK) {
        snprintf(w->why, sizeof(w->why),
                 "the windows of VM %.80s (%.200s) can't be placed in the month: %.160s",
                 vm->name, w->text, ierr.msg);
        w->iv = NULL;
        w->n = 0;
        return TW_OK;
    }
    w->ok = true;
    struct wcache_entry *e = NULL;
    if (p->windows_kind == TW_PW_TAG)
        e = wc_add(r, "tag", tag_value(vm, p->windows_tag));
    else
        e = wc_add(r, okey, w->text);
    if (!e) {
        w->owned = true;
        return TW_OK;
    }
    e->ok = true;
    memcpy(e->text, w->text, sizeof(e->text));
    memcpy(e->tz, w->tz, sizeof(e->tz));
    e->iv = w->iv;
    e->n = w->n;
    return TW_OK;
}

/* ---- one disk ---- */

static void exclude(struct tw_opp_disk *d, enum tw_opp_reason why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void exclude(struct tw_opp_disk *d, enum tw_opp_reason why, const char *fmt, ...)
{
    d->reason = why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, sizeof(d->why), fmt, ap);
    va_end(ap);
}

static void caveat(struct tw_opp_disk *d, const char *text)
{
    if (d->n_caveats < TW_OPP_CAVEATS_MAX)
        snprintf(d->caveats[d->n_caveats++], sizeof(d->caveats[0]), "%.329s", text);
}

/* Whether VM_SIZE can attach Premium storage, from ARM's sizes of REGION,
 * else the bundled table. */
static enum tw_vmcap_premium premium_of(struct run *r, const char *region, const char *size)
{
    struct tw_vmcap buf;
    char why[256];
    const struct tw_vmcap *c =
        tw_svc_vmcap_pick(r->o->arm_sizes, r->o->caps, region, size, &buf, why, sizeof(why));
    if (c && c->premium != TW_VMCAP_PREMIUM_UNKNOWN)
        return c->premium;
    const struct tw_vmcap *b = r->o->caps ? tw_vmcap_find(r->o->caps, size) : NULL;
    return b ? b->premium : TW_VMCAP_PREMIUM_UNKNOWN;
}

struct vm_ctx {
    const struct tw_store_sv_vm *vm;
    struct vm_windows win;
    bool win_done;
    bool hibernated;
    int premium;                 /* -1 not asked yet, else enum tw_vmcap_premium */
};

static enum tw_err judge(struct run *r, struct vm_ctx *x, const struct tw_store_sv_disk *sd,
                         struct tw_opp_disk *d, bool *matched, struct tw_error *err)
{
    const struct tw_policy *p = r->p;
    const struct tw_store_sv_vm *vm = x->vm;
    memset(d, 0, sizeof(*d));
    d->id = sd->id;
    d->name = sd->name;
    d->role = sd->role;
    d->sku = sd->sku;
    d->size_gib = sd->size_gib;
    *matched = false;
    /* A disk tierwise downgraded is what it was before: matched, priced and
     * planned by its original SKU (and that SKU's tier for its size). */
    const char *osku = sd->original_sku[0] ? sd->original_sku : NULL;
    d->original_sku = osku;
    const char *own_sku = osku ? osku : sd->sku;
    const char *own_tier = osku ? "" : sd->tier;
    snprintf(d->tier, sizeof(d->tier), "%s", own_tier);

    struct tw_policy_subject subj = {
        .vm_name = vm->name,
        .resource_group = vm->resource_group,
        .subscription_id = vm->subscription_id,
        .tags = vm->tags,
        .n_tags = vm->n_tags,
        .sku = own_sku,
        .role = sd->role,
    };
    char why[320] = "";
    enum tw_policy_cover cov = tw_policy_covers(p, &subj, why, sizeof(why));
    if (cov == TW_COVER_NO)
        return TW_OK;
    *matched = true;
    if (cov == TW_COVER_EXCLUDED) {
        if (sd->role == TW_DISK_OS && !p->os_disks)
            exclude(d, TW_OPP_OS_DISK,
                    "an OS disk, and the policy moves data disks only (\"os_disks\": false)");
        else
            exclude(d, TW_OPP_EXCLUDED_BY_POLICY, "%s", why[0] ? why : "excluded by the policy");
        return TW_OK;
    }
    if (!p->switches) {
        exclude(d, TW_OPP_NO_SWITCH,
                "the policy's target is \"none\": it never switches a disk, it only states "
                "what the disks must be while the VMs run");
        return TW_OK;
    }
    struct tw_sku sku;
    if (!tw_sku_parse(own_sku, &sku)) {
        exclude(d, TW_OPP_UNKNOWN_SKU, "the SKU %s is not one tierwise knows", own_sku);
        return TW_OK;
    }
    if (tw_sku_provisioned(sku.family)) {
        exclude(d, TW_OPP_PROVISIONED,
                "%s: a provisioned disk has no direct way back from a cheaper SKU (a "
                "snapshot and a new disk), so it is never switched",
                tw_sku_family_name(sku.family));
        return TW_OK;
    }
    const struct tw_tier *billed = NULL;
    struct tw_error terr = {0};
    if (tw_tier_for_disk(r->o->cat, own_sku, sd->size_gib, own_tier, &billed, &terr) != TW_OK) {
        exclude(d, TW_OPP_NO_TARGET, "its tier is not known: %s", terr.msg);
        return TW_OK;
    }
    snprintf(d->tier, sizeof(d->tier), "%s", billed->name);
    /* Reservations: the first COUNT disks of the region, tier and
     * redundancy that the policy covers, in VM id order then the disk's
     * place on its VM, are the ones held by it. */
    long ri = r->resv.n ? tw_reservations_find(&r->resv, vm->location, d->tier, sku.redundancy) : -1;
    if (ri >= 0 && r->resv_used[ri] < r->resv.v[ri].count) {
        r->resv_used[ri]++;
        exclude(d, TW_OPP_RESERVATION,
                "covered by a reservation of %lld %s %s disks in %s (disk %lld of them): the "
                "reservation is paid whether the disk moves or not",
                (long long)r->resv.v[ri].count, d->tier,
                tw_sku_redundancy_name(sku.redundancy), r->resv.v[ri].region,
                (long long)r->resv_used[ri]);
        return TW_OK;
    }
    if (sd->attrs.max_shares > 1) {
        exclude(d, TW_OPP_SHARED,
                "a shared disk (maxShares %lld): it can't change SKU while attached to several "
                "VMs, and their schedules differ",
                (long long)sd->attrs.max_shares);
        return TW_OK;
    }
    if (sd->attrs.bursting == TW_TRI_YES) {
        exclude(d, TW_OPP_BURSTING,
                "on-demand bursting is enabled: its monthly fee runs anyway, and a SKU change "
                "turns it off");
        return TW_OK;
    }
    if (x->hibernated) {
        exclude(d, TW_OPP_HIBERNATED,
                "the VM was hibernated in the weeks looked at: a hibernated VM's disks can't "
                "change SKU");
        return TW_OK;
    }
    if (sku.family == TW_SKU_PREMIUM_SSD) {
        if (x->premium < 0)
            x->premium = (int)premium_of(r, vm->location, vm->vm_size);
        if (x->premium == TW_VMCAP_PREMIUM_NO) {
            exclude(d, TW_OPP_NO_PREMIUM_VM,
                    "the VM size %s has no Premium storage support: the way back to %s would "
                    "fail",
                    vm->vm_size, own_sku);
            return TW_OK;
        }
    }
    /* The targets allowed: an OS disk never to Standard HDD unless the
     * policy says so.  This and a disk already on a target need no price,
     * so they come before the book (a Standard disk in a region without a
     * book is already_on_target, not no_price). */
    const char *allowed[TW_POLICY_TARGETS_MAX];
    size_t n_allowed = 0;
    for (size_t i = 0; i < p->n_targets; i++) {
        struct tw_sku t;
        if (sd->role == TW_DISK_OS && !p->os_disk_to_hdd && tw_sku_parse(p->targets[i], &t) &&
            t.family == TW_SKU_STANDARD_HDD) {
            continue;
        }
        allowed[n_allowed++] = p->targets[i];
    }
    if (n_allowed == 0) {
        exclude(d, TW_OPP_OS_DISK_TO_HDD,
                "an OS disk, and the policy's only target is Standard HDD (an OS disk goes "
                "there only with \"os_disk_to_hdd\": true)");
        return TW_OK;
    }
    for (size_t i = 0; i < n_allowed; i++) {
        struct tw_sku t;
        if (tw_sku_parse(allowed[i], &t) && t.family == sku.family) {
            exclude(d, TW_OPP_ALREADY_TARGET, "already on %s, a target of the policy",
                    tw_sku_family_name(sku.family));
            return TW_OK;
        }
    }
    if (!vm->location[0]) {
        exclude(d, TW_OPP_NO_PRICE,
                "the VM's region is not known (its reports carry no location), so no price "
                "book applies");
        return TW_OK;
    }
    const struct tw_pricebook *book = NULL;
    struct tw_opp_book *info = NULL;
    enum tw_err rc = book_get(r, vm->location, &book, &info, err);
    if (rc != TW_OK)
        return rc;
    info->disks++;
    if (!book) {
        exclude(d, TW_OPP_NO_PRICE, "%s", info->why);
        return TW_OK;
    }
    struct tw_money own;
    struct tw_error perr = {0};
    if (tw_pricebook_money_sku(book, vm->location, r->res->currency, own_sku, d->tier,
                               TW_PB_MONTH, &own, &perr) != TW_OK) {
        exclude(d, TW_OPP_NO_PRICE, "%s", perr.msg);
        return TW_OK;
    }
    perr = (struct tw_error){0};
    if (tw_target_choose(r->o->cat, book, vm->location, r->res->currency, own_sku, d->tier,
                         sd->size_gib, allowed, n_allowed, p->cheapest, &d->target,
                         &perr) != TW_OK) {
        if (perr.code == TW_ENOMEM)
            return tw_error_set(err, TW_ENOMEM, "%s", perr.msg);
        if (strstr(perr.msg, "no price"))
            exclude(d, TW_OPP_NO_PRICE, "%s", perr.msg);
        else
            exclude(d, TW_OPP_NO_TARGET, "%s", perr.msg);
        return TW_OK;
    }
    struct tw_sku tsku;
    bool same_family = tw_sku_parse(d->target.sku, &tsku) && tsku.family == sku.family;
    if (same_family || tw_money_cmp(d->target.to_per_month, d->target.from_per_month) >= 0) {
        char a[TW_MONEY_TEXT_MAX], b[TW_MONEY_TEXT_MAX];
        exclude(d, TW_OPP_ALREADY_TARGET,
                "already on %s or cheaper: %s %s costs %s a month, %s %s %s",
                d->target.sku, own_sku, d->tier,
                tw_money_text(d->target.from_per_month, a, sizeof(a)), d->target.sku,
                d->target.tier, tw_money_text(d->target.to_per_month, b, sizeof(b)));
        return TW_OK;
    }
    if (!x->win_done) {
        if ((rc = windows_for(r, vm, &x->win, err)) != TW_OK)
            return rc;
        x->win_done = true;
    }
    if (!x->win.ok) {
        exclude(d, TW_OPP_NO_WINDOW, "%s", x->win.why);
        return TW_OK;
    }
    struct tw_tx_rule tx;
    const struct tw_tx_rule *txp = NULL;
    struct tw_switch_opts so = {
        .after_deallocate_ns = (int64_t)p->after_deallocate_minutes * TW_NS_PER_MIN,
        .before_start_ns = (int64_t)p->before_start_minutes * TW_NS_PER_MIN,
        .min_saving = p->min_saving,
        .quota_changes = p->quota_changes,
        .quota_ns = (int64_t)p->quota_hours * TW_NS_PER_HOUR,
    };
    if (p->allow_running) {
        perr = (struct tw_error){0};
        if (tw_tx_rule_for(book, vm->location, r->res->currency, tsku.family, d->target.tier,
                           tsku.redundancy, &tx, &perr) != TW_OK) {
            exclude(d, TW_OPP_NO_PRICE, "%s", perr.msg);
            return TW_OK;
        }
        txp = &tx;
        so.io = p->running_io;
        if (tx.note[0])
            caveat(d, tx.note);
    }
    /* Prior changes: this disk's SKU changes in the span read. */
    size_t np = 0;
    for (size_t i = 0; i < vm->n_changes; i++)
        if (vm->changes[i].disk_id == sd->id)
            np++;
    if (np > r->cap_prior) {
        int64_t *nv = realloc(r->prior, np * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        r->prior = nv;
        r->cap_prior = np;
    }
    /* The windows from the first that is still open at the month's start
     * (one opened before it keeps its real margins); the windows before it
     * are not modelled, and the changes before it that count against the
     * quota are those the SKU history saw.  Changes in the history from
     * that window on are not counted again: they are the switches being
     * modelled, or ones the model places itself. */
    const struct tw_interval *iv = x->win.iv;
    size_t niv = x->win.n;
    while (niv && iv->to_ns <= r->model_from_ns) {
        iv++;
        niv--;
    }
    /* A plan (a period): every real change the history holds counts, at
     * its real time (by anyone, a switch executed late where it was
     * made), and the history is what happened up to the later of the
     * period's start and the disk's last change: the model's switches due
     * before that are not counted again (tw_switch_opts.real_until), those
     * after it are.  The changes of a month of `tierwise savings` are
     * counted as before (up to the first window open at its start). */
    bool plan_period = r->o->year == 0;
    int64_t prior_before = plan_period ? INT64_MAX : niv ? iv->from_ns : r->res->from_ns;
    int64_t last_real = INT64_MIN;
    np = 0;
    for (size_t i = 0; i < vm->n_changes; i++) {
        int64_t at;
        /* The walk reads changes within its span only: an instant past
         * int64_t nanoseconds is none of them (skipped, never wrapped). */
        if (vm->changes[i].disk_id == sd->id && tw_ms_to_ns(vm->changes[i].at_ms, &at) &&
            at < prior_before) {
            r->prior[np++] = at;
            if (at > last_real)
                last_real = at;
        }
    }
    if (plan_period) {
        so.real_until = true;
        so.real_until_ns = last_real != INT64_MIN ? last_real + 1 : INT64_MIN;
    }
    so.prior_changes = np ? r->prior : NULL;
    so.n_prior = np;
    bool found = false;
    struct memo_slot *m = NULL;
    if (np == 0 && !txp && !x->win.owned && iv && niv)
        m = memo_slot(r, iv, niv, d->target.from_per_month, d->target.to_per_month, &found);
    if (found) {
        d->saving = m->saving;
        d->wins = m->wins;
        d->wins_kept = m->wins != NULL;
    } else {
        struct tw_window_saving *wins = NULL;
        if (r->o->with_windows && niv) {
            if (niv > r->cap_wins) {
                struct tw_window_saving *nv = realloc(r->wins, niv * sizeof(*nv));
                if (!nv)
                    return tw_error_set(err, TW_ENOMEM, "out of memory");
                r->wins = nv;
                r->cap_wins = niv;
            }
            wins = r->wins;
        }
        rc = tw_savings_windows(iv, niv, r->res->from_ns, r->res->to_ns,
                                d->target.from_per_month, d->target.to_per_month, txp, &so, wins,
                                &d->saving, err);
        if (rc != TW_OK)
            return rc;
        d->wins = wins;
        /* A memo keeps the windows too when they are asked for (a copy:
         * the buffer is the next disk's); out of memory, it keeps none. */
        struct tw_window_saving *kept = NULL;
        if (m && wins && r->memo_wins_bytes + niv * sizeof(*kept) <= MEMO_WINS_BUDGET &&
            (kept = malloc(niv * sizeof(*kept)))) {
            memcpy(kept, wins, niv * sizeof(*kept));
            r->memo_wins_bytes += niv * sizeof(*kept);
        }
        if (m && (!wins || kept)) {
            m->iv = iv;
            m->n = niv;
            m->from_micros = d->target.from_per_month.micros;
            m->to_micros = d->target.to_per_month.micros;
            m->saving = d->saving;
            m->wins = kept;
            r->n_memo++;
            if (kept) {
                d->wins = kept;
                d->wins_kept = true;
            }
        }
    }
    d->n_wins = d->wins ? niv : 0;
    d->windows_key = d->wins && !x->win.owned ? (const void *)iv : NULL;
    d->windows_source = x->win.source;
    snprintf(d->windows, sizeof(d->windows), "%s", x->win.text);
    snprintf(d->windows_tz, sizeof(d->windows_tz), "%s", x->win.tz);
    if (sd->attrs.max_shares == 0)
        caveat(d, "whether the disk is shared is not known yet (no ARM sync): the executor "
                  "checks it before a switch");
    if (sd->attrs.bursting == TW_TRI_UNKNOWN && sku.family == TW_SKU_PREMIUM_SSD &&
        sd->size_gib > 512)
        caveat(d, "whether on-demand bursting is enabled is not known yet (no ARM sync): the "
                  "executor checks it before a switch");
    if (sku.family == TW_SKU_PREMIUM_SSD && x->premium == TW_VMCAP_PREMIUM_UNKNOWN)
        caveat(d, "the VM size's Premium storage support is not known: the executor checks "
                  "the way back before a switch");
    d->reason = TW_OPP_COVERED;
    return TW_OK;
}

static enum tw_err vm_obs(struct run *r, const struct tw_store_sv_vm *vm, struct tw_error *err)
{
    if (vm->n_power > r->cap_obs) {
        struct tw_power_obs *nv = realloc(r->obs, vm->n_power * sizeof(*nv));
        if (!nv)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
        r->obs = nv;
        r->cap_obs = vm->n_power;
    }
    /* (An instant skipped is past the walk: it ends at the month's end.) */
    r->n_obs = tw_opp_power_obs(vm->power, vm->n_power, r->walk_from_ns, r->obs);
    return TW_OK;
}

static enum tw_err one_vm(struct run *r, const struct tw_store_sv_vm *vm,
                          const struct tw_opp_sink *sink, struct tw_opp_disk *d,
                          struct tw_error *err)
{
    struct vm_ctx x = {.vm = vm, .premium = -1};
    enum tw_err rc = vm_obs(r, vm, err);
    if (rc != TW_OK)
        return rc;
    x.hibernated = tw_power_hibernated_in(r->obs, r->n_obs, r->hib_from_ns, r->res->to_ns) ||
                   tw_power_parse(vm->power_state) == TW_POWER_HIBERNATED;
    struct tw_opp_vm ov = {vm->id, vm->name, vm->resource_group, vm->subscription_id,
                           vm->location, vm->vm_size};
    struct tw_opp_total t = {.saving = tw_amount_of(tw_money_micros(0))};
    for (size_t i = 0; rc == TW_OK && i < vm->n_disks; i++) {
        bool matched;
        rc = judge(r, &x, &vm->disks[i], d, &matched, err);
        if (rc != TW_OK || !matched)
            continue;
        if (d->reason == TW_OPP_COVERED) {
            t.disks++;
            t.downgraded_ns += d->saving.downgraded_ns;
            rc = tw_amount_add(t.saving, d->saving.saving, &t.saving, err);
        } else {
            t.excluded++;
            if (d->reason == TW_OPP_NO_PRICE)
                t.no_price++;
        }
        if (rc == TW_OK && sink && sink->disk)
            rc = sink->disk(sink->arg, &ov, d);
    }
    if (x.win.owned)
        free(x.win.iv);
    if (rc != TW_OK || t.disks + t.excluded == 0)
        return rc;
    t.vms = 1;
    if (sink && sink->vm_total && (rc = sink->vm_total(sink->arg, &ov, &t)) != TW_OK)
        return rc;
    struct tw_opp_group *g = group_get(&r->rgs, vm->subscription_id, vm->resource_group);
    struct tw_opp_group *s = group_get(&r->subs, vm->subscription_id, "");
    if (!g || !s)
        return tw_error_set(err, TW_ENOMEM, "out of memory adding up");
    if ((rc = total_add(&g->t, &t, err)) != TW_OK || (rc = total_add(&s->t, &t, err)) != TW_OK)
        return rc;
    return total_add(&r->res->fleet, &t, err);
}

void tw_opp_result_cleanup(struct tw_opp_result *r)
{
    if (!r)
        return;
    free(r->rgs);
    free(r->subs);
    free(r->books);
    memset(r, 0, sizeof(*r));
}

size_t tw_opp_power_obs(const struct tw_store_sv_power *sp, size_t n, int64_t from_ns,
                        struct tw_power_obs *out)
{
    int64_t from_ms = tw_floor_div(from_ns, TW_NS_PER_MS);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t at;
        if (sp[i].at_ms < from_ms)
            at = from_ns;
        else if (!tw_ms_to_ns(sp[i].at_ms, &at))
            continue;
        if (at < from_ns)
            at = from_ns;
        out[k].at_ns = at;
        out[k++].state = tw_power_parse(sp[i].state);
    }
    return k;
}

size_t tw_opp_missing_regions(const struct tw_opp_result *res, char *buf, size_t cap)
{
    size_t n = 0, l = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < res->n_books; i++) {
        const struct tw_opp_book *b = &res->books[i];
        if (!b->missing)
            continue;
        if (l < cap) {
            int k = snprintf(buf + l, cap - l, "%s%s (%lld %s)", n ? ", " : "", b->region,
                             (long long)b->disks, b->disks == 1 ? "disk" : "disks");
            l = k < 0 ? cap : l + (size_t)k;
        }
        n++;
    }
    return n;
}

/* One run's setup: the options checked, the currency, zones, period,
 * reservations, the list windows and the span its walk reads ([walk_from_ms,
 * to_ms)) into *R; its error into ERR (the run is then not walked). */
static enum tw_err run_setup(struct run *r, struct tw_store *st, const struct tw_opp_opts *o,
                             struct tw_opp_result *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    tw_error_clear(err);
    out->fleet.saving = tw_amount_of(tw_money_micros(0));
    bool period = o && o->year == 0;
    if (!st || !o || !o->policy || !o->cat ||
        (period ? o->to_ns <= o->from_ns : o->month < 1 || o->month > 12))
        return tw_error_set(err, TW_EINVAL, "savings opportunities need a store, a policy, "
                                            "the tier catalog and a month (or a period that "
                                            "ends after it starts)");
    const struct tw_policy *p = o->policy;
    *r = (struct run){.st = st, .o = o, .p = p, .res = out};
    snprintf(out->policy, sizeof(out->policy), "%s", p->name);
    if (!period)
        snprintf(out->month, sizeof(out->month), "%04u-%02u", (unsigned)o->year % 10000u,
                 (unsigned)o->month % 100u);
    snprintf(out->timezone, sizeof(out->timezone), "%s", p->timezone[0] ? p->timezone : "UTC");
    enum tw_err rc = tw_opp_currency(st, o->currency, out->currency, err);
    if (rc != TW_OK)
        out->fail = rc == TW_ENOENT   ? TW_OPP_FAIL_NO_BOOK
                    : rc == TW_EINVAL ? TW_OPP_FAIL_CURRENCY
                                      : TW_OPP_FAIL_OTHER;
    if (rc == TW_OK) {
        struct tw_error zerr = {0};
        rc = zone_get(r, out->timezone, &r->policy_zone, &zerr);
        if (rc == TW_ENOMEM) {
            tw_error_set(err, rc, "%s", zerr.msg);
        } else if (rc != TW_OK) {
            out->fail = TW_OPP_FAIL_POLICY_ZONE;
            tw_error_set(err, rc,
                         "the policy %s's timezone \"%s\" does not load (%s): give an IANA "
                         "zone name this machine has, e.g. Europe/London (tierwise policy "
                         "check FILE)",
                         p->name, out->timezone, zerr.msg);
        }
    }
    /* A period within the years 1970..2199 (a month's as tw_opp_month_parse
     * takes; a plan's starts a nanosecond early), so that the walk's sums
     * below (weeks and the quota's span either side) stay in int64_t. */
    if (rc == TW_OK && period &&
        (o->from_ns < -TW_NS_PER_S || o->to_ns > INT64_C(7258118400000000000))) {
        out->fail = TW_OPP_FAIL_OTHER;
        rc = tw_error_set(err, TW_ERANGE, "the period must lie in the years 1970..2199");
    }
    if (rc == TW_OK && period) {
        out->from_ns = o->from_ns;
        out->to_ns = o->to_ns;
    } else if (rc == TW_OK) {
        struct tw_civil c0 = {.year = o->year, .month = o->month, .day = 1};
        struct tw_civil c1 = {.year = o->month == 12 ? o->year + 1 : o->year,
                              .month = o->month == 12 ? 1 : o->month + 1,
                              .day = 1};
        if (tw_tz_civil_to_ns(r->policy_zone, &c0, &out->from_ns, NULL) != TW_OK ||
            tw_tz_civil_to_ns(r->policy_zone, &c1, &out->to_ns, NULL) != TW_OK)
            rc = tw_error_set(err, TW_ERANGE, "the month %s can't be placed in %s", out->month,
                              out->timezone);
    }
    if (rc == TW_OK && !tw_rfc3339_format_ns(out->from_ns, 0, 0, r->month_start,
                                             sizeof(r->month_start)))
        rc = tw_error_set(err, TW_ERANGE, "the month %s can't be written", out->month);
    /* Reservations: the policy's and the file's. */
    if (rc == TW_OK)
        rc = tw_reservations_merge(&r->resv, &p->reservations, err);
    if (rc == TW_OK && o->reservations)
        rc = tw_reservations_merge(&r->resv, o->reservations, err);
    if (rc == TW_OK && r->resv.n && !(r->resv_used = calloc(r->resv.n, sizeof(int64_t))))
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
    /* Where the windows are modelled from.  A month: its start.  A plan:
     * a fixed anchor, the local Monday 00:00 of the week holding the
     * period's start less the quota's span, so that plans of overlapping
     * periods model the same windows from the same instant and take the
     * same ones (the quota's choices depend on the switches before);
     * observed windows are learned from the weeks before the local Monday
     * of the period's start, so that they do not move with it inside a
     * week. */
    r->model_from_ns = r->learn_ref_ns = out->from_ns;
    if (rc == TW_OK && period) {
        int64_t a = out->from_ns - (int64_t)p->quota_hours * TW_NS_PER_HOUR;
        r->model_from_ns = week_start(r->policy_zone, a);
        r->learn_ref_ns = week_start(r->policy_zone, out->from_ns);
    }
    int64_t list_from = 0, list_to = 0;
    if (rc == TW_OK && p->windows_kind == TW_PW_LIST &&
        (!tw_time_add(r->model_from_ns, -SCHEDULE_LEAD_NS, &list_from) ||
         !tw_time_add(out->to_ns, TW_NS_PER_WEEK, &list_to)))
        rc = tw_error_set(err, TW_ERANGE, "the period is too far in time");
    if (rc == TW_OK && p->windows_kind == TW_PW_LIST)
        rc = tw_windows_instants(&p->windows, r->policy_zone, list_from, list_to, &r->list_iv,
                                 &r->n_list_iv, err);
    /* What the walk reads before the month: the observed weeks (and one
     * more, for the local Monday before the start), the quota's span. */
    int weeks = p->windows_kind == TW_PW_OBSERVED ? p->observed_weeks + 1 : 1;
    r->hib_from_ns = out->from_ns - (int64_t)weeks * TW_NS_PER_WEEK -
                    (int64_t)p->quota_hours * TW_NS_PER_HOUR;
    {
        int64_t lo = r->model_from_ns < r->learn_ref_ns ? r->model_from_ns : r->learn_ref_ns;
        r->walk_from_ns = lo - (int64_t)weeks * TW_NS_PER_WEEK -
                         (int64_t)p->quota_hours * TW_NS_PER_HOUR;
        if (r->walk_from_ns > r->hib_from_ns)
            r->walk_from_ns = r->hib_from_ns;
    }
    r->walk_from_ms = tw_floor_div(r->walk_from_ns, TW_NS_PER_MS);
    r->to_ms = tw_floor_div(out->to_ns, TW_NS_PER_MS);
    return rc;
}

/* One run's end: what it holds freed, its groups and books into its
 * result. */
static void run_teardown(struct run *r, enum tw_err rc)
{
    struct tw_opp_result *out = r->res;
    if (!out)
        return; /* refused before it held anything */
    free(r->list_iv);
    free(r->obs);
    free(r->prior);
    free(r->resv_used);
    wc_free(r);
    for (size_t i = 0; r->memo && i < MEMO_SLOTS; i++)
        free(r->memo[i].wins);
    free(r->memo);
    free(r->wins);
    tw_reservations_cleanup(&r->resv);
    for (size_t i = 0; i < r->n_books; i++)
        tw_pricebook_free(r->books[i].b);
    free(r->books);
    for (size_t i = 0; i < r->n_zones; i++)
        tw_tz_free(r->zones[i].z);
    free(r->zones);
    out->rgs = group_take(&r->rgs, &out->n_rgs);
    out->subs = group_take(&r->subs, &out->n_subs);
    if (out->n_books)
        qsort(out->books, out->n_books, sizeof(*out->books), book_cmp);
    if (rc != TW_OK && out->fail == TW_OPP_FAIL_NONE)
        out->fail = TW_OPP_FAIL_OTHER;
}

/* VM as the run R's own walk would have given it: the power states and
 * SKU changes of [R->walk_from_ms, R->to_ms) out of the wider span
 * [FROM_MS, TO_MS) the shared walk read (into *OUT, its changes in
 * CHANGES, room for VM->n_changes).  The power states are by time, the
 * one in force at the span's start first: the run's are those from the
 * last observed at or before its start (all of that instant's, as the
 * store reads them), else from its start, to before its end. */
static void vm_slice(const struct run *r, const struct tw_store_sv_vm *vm, int64_t from_ms,
                     int64_t to_ms, struct tw_store_sv_change *changes,
                     struct tw_store_sv_vm *out)
{
    *out = *vm;
    if (r->walk_from_ms == from_ms && r->to_ms == to_ms)
        return;
    size_t lo = 0, hi = vm->n_power;
    for (size_t i = 0; i < vm->n_power; i++)
        if (vm->power[i].at_ms <= r->walk_from_ms)
            lo = i; /* the last at or before the run's start */
    if (vm->n_power && vm->power[lo].at_ms <= r->walk_from_ms) {
        while (lo > 0 && vm->power[lo - 1].at_ms == vm->power[lo].at_ms)
            lo--;
    } else {
        lo = 0;
    }
    while (hi > lo && vm->power[hi - 1].at_ms >= r->to_ms)
        hi--;
    out->power = vm->power + lo;
    out->n_power = hi - lo;
    size_t k = 0;
    for (size_t i = 0; i < vm->n_changes; i++)
        if (vm->changes[i].at_ms >= r->walk_from_ms && vm->changes[i].at_ms < r->to_ms)
            changes[k++] = vm->changes[i];
    out->changes = k ? changes : NULL;
    out->n_changes = k;
}

enum tw_err tw_opp_run_many(struct tw_store *st, const struct tw_opp_opts *opts, size_t n,
                            const struct tw_opp_sink *sinks, struct tw_opp_result *outs,
                            struct tw_error *errs)
{
    if (n == 0)
        return TW_OK;
    struct run *runs = calloc(n, sizeof(*runs));
    enum tw_err *rcs = calloc(n, sizeof(*rcs));
    struct tw_opp_disk *d = malloc(sizeof(*d));
    if (!runs || !rcs || !d) {
        for (size_t i = 0; i < n; i++) {
            memset(&outs[i], 0, sizeof(outs[i]));
            outs[i].fail = TW_OPP_FAIL_OTHER;
            tw_error_set(errs ? &errs[i] : NULL, TW_ENOMEM, "out of memory");
        }
        free(runs);
        free(rcs);
        free(d);
        return TW_ENOMEM;
    }
    /* Each run set up on its own; the walk reads the union of their spans. */
    bool any = false;
    int64_t from_ms = INT64_MAX, to_ms = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        rcs[i] = run_setup(&runs[i], st, opts ? &opts[i] : NULL, &outs[i], errs ? &errs[i] : NULL);
        if (rcs[i] != TW_OK && outs[i].fail == TW_OPP_FAIL_NONE)
            outs[i].fail = TW_OPP_FAIL_OTHER; /* bad options (the enum's "other") */
        if (rcs[i] != TW_OK)
            continue;
        any = true;
        if (runs[i].walk_from_ms < from_ms)
            from_ms = runs[i].walk_from_ms;
        if (runs[i].to_ms > to_ms)
            to_ms = runs[i].to_ms;
    }
    struct tw_store_sv_cursor *cur = NULL;
    struct tw_store_sv_change *changes = NULL;
    size_t cap_changes = 0;
    struct tw_error werr = {0};
    enum tw_err wrc = any ? tw_store_savings_open(st, from_ms, to_ms, &cur, &werr) : TW_OK;
    while (any && wrc == TW_OK) {
        struct tw_store_sv_vm vm;
        bool done;
        wrc = tw_store_savings_next(cur, &vm, &done, &werr);
        if (wrc != TW_OK || done)
            break;
        if (vm.n_changes > cap_changes) {
            struct tw_store_sv_change *nv = realloc(changes, vm.n_changes * sizeof(*nv));
            if (!nv) {
                wrc = tw_error_set(&werr, TW_ENOMEM, "out of memory");
                break;
            }
            changes = nv;
            cap_changes = vm.n_changes;
        }
        any = false;
        for (size_t i = 0; i < n; i++) {
            if (rcs[i] != TW_OK)
                continue;
            struct tw_store_sv_vm own;
            vm_slice(&runs[i], &vm, from_ms, to_ms, changes, &own);
            rcs[i] = one_vm(&runs[i], &own, sinks ? &sinks[i] : NULL, d, errs ? &errs[i] : NULL);
            any = any || rcs[i] == TW_OK;
        }
    }
    /* The walk's own error stops every run still going. */
    for (size_t i = 0; wrc != TW_OK && i < n; i++)
        if (rcs[i] == TW_OK) {
            rcs[i] = wrc;
            if (errs)
                errs[i] = werr;
        }
    tw_store_savings_close(cur);
    free(changes);
    free(d);
    enum tw_err rc = TW_OK;
    for (size_t i = 0; i < n; i++) {
        run_teardown(&runs[i], rcs[i]);
        if (rc == TW_OK)
            rc = rcs[i];
    }
    free(runs);
    free(rcs);
    return rc;
}

enum tw_err tw_opp_run(struct tw_store *st, const struct tw_opp_opts *o,
                       const struct tw_opp_sink *sink, struct tw_opp_result *out,
                       struct tw_error *err)
{
    return tw_opp_run_many(st, o, 1, sink, out, err);
}
