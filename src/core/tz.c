/*
 * tz.c - TZif files (RFC 8536) and POSIX TZ strings.
 *
 * Everything inside works in whole seconds since 1970 (TZif's unit); the
 * public functions convert from and to nanosecond instants.  A zone is one
 * allocation: the struct, its transition times, their type indices and the
 * types.  The footer's rule is evaluated per year from the rule's dates:
 * the start and end of DST of the year before, the year of and the year
 * after an instant are sorted, and the last one at or before the instant
 * decides; an end and a start at the same instant (DST all year, version
 * 3) cancel out.
 */
#include "core/tz.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OFFSET_S 93599           /* RFC 8536: |utoff| below 26 hours */
#define MAX_TIMECNT 100000           /* far above any real zone (~250) */
#define WINDOW_S (27 * 3600)         /* beyond any offset, for local times */
/* Footer rules are evaluated only within +-2^52 s (142 million years) of
 * 1970, so that a hostile table's last transition can't overflow them. */
#define RULE_BOUND (INT64_C(1) << 52)

struct ttype {
    int32_t utoff;               /* seconds east of UTC */
    bool isdst;
    char abbr[TW_TZ_ABBR_MAX];
};

/* One date of a POSIX rule: Jn, n or Mm.w.d, and the local time of day. */
struct rule {
    char kind;                   /* 'J' (1..365, no Feb 29), 'N' (0..365), 'M' */
    int n;                       /* day for 'J' and 'N' */
    int m, w, d;                 /* month 1..12, week 1..5 (5 = last), day 0..6 (Sunday 0) */
    int32_t time_s;              /* -167 h .. 167 h, local time in force before */
};

struct posix {
    bool set;                    /* a rule is present */
    bool has_dst;
    struct ttype std, dst;
    struct rule start, end;      /* DST starts at START, ends at END */
};

struct tw_tz {
    char name[TW_TZ_NAME_MAX];
    size_t ntrans;
    int64_t *trans;              /* ntrans transition times, ascending, UTC seconds */
    uint8_t *idx;                /* ntrans type indices */
    size_t ntypes;
    struct ttype *types;         /* ntypes >= 1 */
    struct posix footer;         /* after the last transition (or always, if none) */
};

/* ---- POSIX TZ strings ---- */

struct pp {
    const char *s;
    size_t len, i;
    struct tw_error *err;
    size_t base;                 /* offset of the string in the file, for messages */
    const char *where;           /* "footer TZ string" or "TZ string" */
};

static enum tw_err pp_fail(struct pp *p, const char *what)
{
    return tw_error_set_at(p->err, TW_EPARSE, 1, (long)(p->base + p->i + 1),
                           "%s \"%.*s\": at character %zu expected %s", p->where,
                           (int)(p->len > 80 ? 80 : p->len), p->s, p->i + 1, what);
}

static bool pp_is(struct pp *p, char c)
{
    return p->i < p->len && p->s[p->i] == c;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static enum tw_err pp_name(struct pp *p, char *out)
{
    size_t n = 0;
    if (pp_is(p, '<')) {
        p->i++;
        while (p->i < p->len && p->s[p->i] != '>') {
            char c = p->s[p->i];
            if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-')
                return pp_fail(p, "letters, digits, '+' or '-' inside <...>");
            if (n + 1 >= TW_TZ_ABBR_MAX)
                return pp_fail(p, "an abbreviation of at most 15 characters");
            out[n++] = c;
            p->i++;
        }
        if (!pp_is(p, '>'))
            return pp_fail(p, "'>' closing the abbreviation");
        if (n < 3)
            return pp_fail(p, "an abbreviation of at least 3 characters");
        p->i++;
    } else {
        while (p->i < p->len && is_alpha(p->s[p->i])) {
            if (n + 1 >= TW_TZ_ABBR_MAX)
                return pp_fail(p, "an abbreviation of at most 15 letters");
            out[n++] = p->s[p->i++];
        }
        if (n < 3)
            return pp_fail(p, "an abbreviation of at least 3 letters (or <...>)");
    }
    out[n] = '\0';
    return TW_OK;
}

/* [+-]hh[:mm[:ss]] with hh up to MAX_H, into seconds (sign applied). */
static enum tw_err pp_hms(struct pp *p, int max_h, int32_t *out)
{
    int sign = 1;
    if (pp_is(p, '+') || pp_is(p, '-')) {
        sign = pp_is(p, '-') ? -1 : 1;
        p->i++;
    }
    int part[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        if (k > 0) {
            if (!pp_is(p, ':'))
                break;
            p->i++;
        }
        int nd = 0, v = 0;
        size_t start = p->i;
        while (p->i < p->len && is_digit(p->s[p->i]) && nd < 3) {
            v = v * 10 + (p->s[p->i++] - '0');
            nd++;
        }
        if (nd == 0 || (k > 0 && nd != 2))
            return pp_fail(p, k == 0 ? "hours" : "two digits of minutes or seconds");
        if ((k == 0 && v > max_h) || (k > 0 && v > 59)) {
            p->i = start; /* point at the number */
            return pp_fail(p, k == 0 ? (max_h == 24 ? "hours 0..24" : "hours -167..167")
                                     : "minutes or seconds 00..59");
        }
        part[k] = v;
    }
    *out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
    return TW_OK;
}

static enum tw_err pp_num(struct pp *p, int lo, int hi, const char *what, int *out)
{
    int v = 0, nd = 0;
    size_t start = p->i;
    while (p->i < p->len && is_digit(p->s[p->i]) && nd < 4) {
        v = v * 10 + (p->s[p->i++] - '0');
        nd++;
    }
    if (nd == 0 || v < lo || v > hi) {
        p->i = start; /* point at the number */
        return pp_fail(p, what);
    }
    *out = v;
    return TW_OK;
}

static enum tw_err pp_rule(struct pp *p, struct rule *r)
{
    enum tw_err rc;
    memset(r, 0, sizeof(*r));
    if (pp_is(p, 'J')) {
        p->i++;
        r->kind = 'J';
        rc = pp_num(p, 1, 365, "a day 1..365 after 'J'", &r->n);
    } else if (pp_is(p, 'M')) {
        p->i++;
        r->kind = 'M';
        rc = pp_num(p, 1, 12, "a month 1..12 after 'M'", &r->m);
        if (rc == TW_OK && !pp_is(p, '.'))
            rc = pp_fail(p, "'.' in Mm.w.d");
        if (rc == TW_OK) {
            p->i++;
            rc = pp_num(p, 1, 5, "a week 1..5 in Mm.w.d", &r->w);
        }
        if (rc == TW_OK && !pp_is(p, '.'))
            rc = pp_fail(p, "'.' in Mm.w.d");
        if (rc == TW_OK) {
            p->i++;
            rc = pp_num(p, 0, 6, "a weekday 0..6 (Sunday 0) in Mm.w.d", &r->d);
        }
    } else if (p->i < p->len && is_digit(p->s[p->i])) {
        r->kind = 'N';
        rc = pp_num(p, 0, 365, "a day 0..365", &r->n);
    } else {
        rc = pp_fail(p, "a date: Jn, n or Mm.w.d");
    }
    if (rc != TW_OK)
        return rc;
    r->time_s = 2 * 3600;
    if (pp_is(p, '/')) {
        p->i++;
        rc = pp_hms(p, 167, &r->time_s);
    }
    return rc;
}

static enum tw_err posix_parse(struct pp *p, struct posix *out)
{
    memset(out, 0, sizeof(*out));
    enum tw_err rc = pp_name(p, out->std.abbr);
    int32_t off;
    if (rc == TW_OK && !(p->i < p->len && (is_digit(p->s[p->i]) || pp_is(p, '+') ||
                                             pp_is(p, '-'))))
        rc = pp_fail(p, "the standard time's offset from UTC (e.g. 0, 5, -1, -12:45)");
    if (rc == TW_OK)
        rc = pp_hms(p, 24, &off);
    if (rc != TW_OK)
        return rc;
    /* POSIX offsets are west of UTC; ours are east. */
    out->std.utoff = -off;
    out->set = true;
    if (p->i == p->len)
        return TW_OK;
    rc = pp_name(p, out->dst.abbr);
    if (rc != TW_OK)
        return rc;
    out->has_dst = true;
    out->dst.isdst = true;
    out->dst.utoff = out->std.utoff + 3600;
    if (p->i < p->len && (is_digit(p->s[p->i]) || pp_is(p, '+') || pp_is(p, '-'))) {
        rc = pp_hms(p, 24, &off);
        if (rc != TW_OK)
            return rc;
        out->dst.utoff = -off;
    }
    if (!pp_is(p, ','))
        return pp_fail(p, "',' and the rule of daylight saving time (,start[/time],end[/time])");
    p->i++;
    if ((rc = pp_rule(p, &out->start)) != TW_OK)
        return rc;
    if (!pp_is(p, ','))
        return pp_fail(p, "',' before the end of daylight saving time");
    p->i++;
    if ((rc = pp_rule(p, &out->end)) != TW_OK)
        return rc;
    if (p->i != p->len)
        return pp_fail(p, "the end of the TZ string");
    return TW_OK;
}

/* Day number (since 1970) of rule R in year Y. */
static int64_t rule_day(const struct rule *r, int64_t y)
{
    int64_t jan1 = tw_days_from_civil(y, 1, 1);
    if (r->kind == 'J')
        return jan1 + r->n - 1 + (tw_is_leap(y) && r->n >= 60);
    if (r->kind == 'N')
        return jan1 + r->n;
    int64_t first = tw_days_from_civil(y, r->m, 1);
    int wd1 = (tw_weekday_from_days(first) + 1) % 7; /* Sunday 0 */
    int dom = 1 + (r->d - wd1 + 7) % 7 + 7 * (r->w - 1);
    int dim = tw_days_in_month(y, r->m);
    while (dom > dim)
        dom -= 7;
    return first + dom - 1;
}

static int64_t year_of(int64_t t)
{
    int64_t y;
    int m, d;
    tw_civil_from_days(tw_floor_div(t, 86400), &y, &m, &d);
    return y;
}

struct event {
    int64_t at;                  /* UTC seconds */
    bool to_dst;
};

/* The DST starts and ends of years Y0..Y0+NY-1, sorted (an end before a
 * start at the same instant).  Returns the count (2 * NY). */
static size_t posix_events(const struct posix *pz, int64_t y0, int ny, struct event *ev)
{
    size_t n = 0;
    for (int k = 0; k < ny; k++) {
        int64_t y = y0 + k;
        ev[n].at = rule_day(&pz->start, y) * 86400 + pz->start.time_s - pz->std.utoff;
        ev[n++].to_dst = true;
        ev[n].at = rule_day(&pz->end, y) * 86400 + pz->end.time_s - pz->dst.utoff;
        ev[n++].to_dst = false;
    }
    for (size_t i = 1; i < n; i++) {
        struct event e = ev[i];
        size_t j = i;
        while (j > 0 && (ev[j - 1].at > e.at || (ev[j - 1].at == e.at && ev[j - 1].to_dst &&
                                                   !e.to_dst))) {
            ev[j] = ev[j - 1];
            j--;
        }
        ev[j] = e;
    }
    return n;
}

static const struct ttype *posix_at(const struct posix *pz, int64_t t)
{
    if (!pz->has_dst || t > RULE_BOUND || t < -RULE_BOUND)
        return &pz->std;
    struct event ev[6];
    size_t n = posix_events(pz, year_of(t) - 1, 3, ev);
    bool dst = !ev[0].to_dst;
    for (size_t i = 0; i < n && ev[i].at <= t; i++)
        dst = ev[i].to_dst;
    return dst ? &pz->dst : &pz->std;
}

/* ---- lookups ---- */

static const struct ttype *type_at(const struct tw_tz *z, int64_t t)
{
    if (z->ntrans == 0)
        return z->footer.set ? posix_at(&z->footer, t) : &z->types[0];
    if (t < z->trans[0])
        return &z->types[0];
    /* The last transition at or before T. */
    size_t lo = 0, hi = z->ntrans;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    if (lo == z->ntrans - 1 && z->footer.set)
        return posix_at(&z->footer, t);
    return &z->types[z->idx[lo]];
}

static bool same_type(const struct ttype *a, const struct ttype *b)
{
    return a->utoff == b->utoff && a->isdst == b->isdst && strcmp(a->abbr, b->abbr) == 0;
}

static bool changes_at(const struct tw_tz *z, int64_t t)
{
    return !same_type(type_at(z, t - 1), type_at(z, t));
}

/* The first change strictly after T (seconds). */
static bool next_s(const struct tw_tz *z, int64_t t, int64_t *at)
{
    /* In the table: the first transition after T that changes something. */
    size_t lo = 0, hi = z->ntrans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < z->ntrans; i++) {
        if (changes_at(z, z->trans[i])) {
            *at = z->trans[i];
            return true;
        }
    }
    if (!z->footer.set || !z->footer.has_dst)
        return false;
    int64_t from = t;
    if (z->ntrans > 0 && z->trans[z->ntrans - 1] > from)
        from = z->trans[z->ntrans - 1];
    if (from > RULE_BOUND || from < -RULE_BOUND)
        return false;
    struct event ev[8];
    size_t n = posix_events(&z->footer, year_of(from) - 1, 4, ev);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].at > from && changes_at(z, ev[i].at)) {
            *at = ev[i].at;
            return true;
        }
    }
    return false;
}

static void fill_info(const struct ttype *ty, struct tw_tz_info *out)
{
    out->utoff_s = ty->utoff;
    out->is_dst = ty->isdst;
    memcpy(out->abbr, ty->abbr, sizeof(out->abbr));
}

void tw_tz_at(const struct tw_tz *z, int64_t t_ns, struct tw_tz_info *out)
{
    fill_info(type_at(z, tw_floor_div(t_ns, TW_NS_PER_S)), out);
}

/* SECS + FRAC (0..1e9-1) as nanoseconds, if it fits. */
static bool to_ns(int64_t secs, int64_t frac, int64_t *ns)
{
    if (secs < 0 && frac > 0) {
        secs += 1;
        frac -= TW_NS_PER_S;
    }
    int64_t v;
    if (__builtin_mul_overflow(secs, TW_NS_PER_S, &v) || __builtin_add_overflow(v, frac, &v))
        return false;
    *ns = v;
    return true;
}

bool tw_tz_next_transition(const struct tw_tz *z, int64_t t_ns, int64_t *at_ns)
{
    int64_t at;
    if (!next_s(z, tw_floor_div(t_ns, TW_NS_PER_S), &at))
        return false;
    return to_ns(at, 0, at_ns);
}

enum tw_err tw_tz_local_to_ns(const struct tw_tz *z, int64_t local_ns, int64_t *t_ns,
                              enum tw_tz_local *kind)
{
    int64_t l = tw_floor_div(local_ns, TW_NS_PER_S);
    int64_t frac = tw_floor_mod(local_ns, TW_NS_PER_S);
    /*
     * Walk the intervals of constant offset around L in order: [lo, hi)
     * with offset off, from "long before" to "long after".  Only those
     * within a day and a bit of L can hold it.  The first interval that
     * holds L - off is the earliest instant; if none does, the first change
     * that L falls across (after the old interval read in its offset,
     * before the new one read in its own) is the gap.
     */
    int64_t lo = INT64_MIN, hi, t = l - WINDOW_S;
    int32_t off = type_at(z, t)->utoff;
    bool found = false, gap = false, second = false;
    int64_t best = 0, gap_t = 0;
    for (;;) {
        int64_t at;
        bool more = next_s(z, t, &at) && at <= l + WINDOW_S;
        hi = more ? at : INT64_MAX;
        int64_t c = l - off;
        if (c >= lo && c < hi) {
            if (found)
                second = true;
            else
                best = c;
            found = true;
        }
        if (!more)
            break;
        int32_t next_off = type_at(z, at)->utoff;
        if (!gap && c >= hi && l - next_off < hi) {
            gap = true;
            gap_t = c;
        }
        lo = hi;
        off = next_off;
        t = at;
    }
    enum tw_tz_local k = TW_TZ_LOCAL_UNIQUE;
    if (found) {
        k = second ? TW_TZ_LOCAL_OVERLAP : TW_TZ_LOCAL_UNIQUE;
    } else {
        /* A gap: read with the offset before the change, which moves it
         * forward by the gap.  (Without one, which a valid zone can't
         * have, the offset at L read as UTC.) */
        k = TW_TZ_LOCAL_GAP;
        best = gap ? gap_t : l - type_at(z, l)->utoff;
    }
    if (kind)
        *kind = k;
    return to_ns(best, frac, t_ns) ? TW_OK : TW_ERANGE;
}

enum tw_err tw_tz_civil_to_ns(const struct tw_tz *z, const struct tw_civil *c, int64_t *t_ns,
                              enum tw_tz_local *kind)
{
    if (!tw_civil_valid(c))
        return TW_EINVAL;
    /* Read in seconds first: a local time near the range's ends may still
     * be an instant inside it. */
    int64_t secs = tw_days_from_civil(c->year, c->month, c->day) * 86400 + c->hour * 3600 +
                   c->minute * 60 + c->second;
    int64_t local_ns;
    if (!to_ns(secs, c->nsec, &local_ns))
        return TW_ERANGE;
    return tw_tz_local_to_ns(z, local_ns, t_ns, kind);
}

void tw_tz_ns_to_civil(const struct tw_tz *z, int64_t t_ns, struct tw_civil *c,
                       struct tw_tz_info *info)
{
    int64_t secs = tw_floor_div(t_ns, TW_NS_PER_S);
    const struct ttype *ty = type_at(z, secs);
    if (info)
        fill_info(ty, info);
    secs += ty->utoff;
    int64_t days = tw_floor_div(secs, 86400), sod = secs - days * 86400, y;
    tw_civil_from_days(days, &y, &c->month, &c->day);
    c->year = (int32_t)y;
    c->hour = (int)(sod / 3600);
    c->minute = (int)(sod / 60 % 60);
    c->second = (int)(sod % 60);
    c->nsec = (int32_t)tw_floor_mod(t_ns, TW_NS_PER_S);
}

const char *tw_tz_name(const struct tw_tz *z)
{
    return z->name;
}

void tw_tz_free(struct tw_tz *z)
{
    free(z);
}

/* ---- TZif ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct hdr {
    char version;                /* 0, '2', '3', '4' */
    uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static enum tw_err bad(struct tw_error *err, const char *name, size_t at, const char *what)
{
    return tw_error_set_at(err, TW_EPARSE, 1, (long)at + 1,
                           "%s: not a valid TZif file: %s (byte %zu); is it a zone file "
                           "from tzdata?",
                           name, what, at);
}

static enum tw_err read_hdr(const unsigned char *b, size_t len, size_t at, const char *name,
                            struct hdr *h, struct tw_error *err)
{
    if (len - at < 44)
        return bad(err, name, at, len - at < 4 ? "too short for a header" : "the header is cut short");
    if (memcmp(b + at, "TZif", 4) != 0)
        return bad(err, name, at, "no \"TZif\" magic");
    h->version = (char)b[at + 4];
    if (h->version != 0 && h->version != '2' && h->version != '3' && h->version != '4') {
        if (h->version > '4' && h->version <= '9')
            return tw_error_set_at(err, TW_EUNSUPPORTED, 1, (long)at + 5,
                                   "%s: TZif version %c is newer than tierwise reads (1 to 4)",
                                   name, h->version);
        return bad(err, name, at + 4, "unknown version byte");
    }
    const unsigned char *c = b + at + 20;
    h->isutcnt = be32(c);
    h->isstdcnt = be32(c + 4);
    h->leapcnt = be32(c + 8);
    h->timecnt = be32(c + 12);
    h->typecnt = be32(c + 16);
    h->charcnt = be32(c + 20);
    return TW_OK;
}

/* Bytes of the data block after header H with TSIZE-byte times. */
static uint64_t block_size(const struct hdr *h, unsigned tsize)
{
    return (uint64_t)h->timecnt * tsize + h->timecnt + (uint64_t)h->typecnt * 6 + h->charcnt +
           (uint64_t)h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

static enum tw_err new_zone(const char *name, size_t ntrans, size_t ntypes, struct tw_tz **out,
                            struct tw_error *err)
{
    size_t sz = sizeof(struct tw_tz) + ntrans * sizeof(int64_t) + ntypes * sizeof(struct ttype) +
                ntrans;
    struct tw_tz *z = calloc(1, sz);
    if (!z)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading zone %s", name);
    z->trans = (int64_t *)(void *)(z + 1);
    z->types = (struct ttype *)(void *)(z->trans + ntrans);
    z->idx = (uint8_t *)(z->types + ntypes);
    z->ntrans = ntrans;
    z->ntypes = ntypes;
    size_t nl = strlen(name);
    if (nl >= sizeof(z->name))
        nl = sizeof(z->name) - 1;
    memcpy(z->name, name, nl);
    *out = z;
    return TW_OK;
}

enum tw_err tw_tz_parse(const char *name, const void *buf, size_t len, struct tw_tz **out,
                        struct tw_error *err)
{
    const unsigned char *b = buf;
    if (!name || !name[0])
        name = "zone";
    *out = NULL;
    if (!b)
        len = 0;
    if (len > TW_TZ_FILE_MAX)
        return tw_error_set(err, TW_EPARSE, "%s: %zu bytes is too large for a TZif file", name,
                            len);
    struct hdr h;
    enum tw_err rc = read_hdr(b, len, 0, name, &h, err);
    if (rc != TW_OK)
        return rc;
    size_t at = 44;
    unsigned tsize = 4;
    if (h.version != 0) {
        /* Skip the version 1 block to the 64-bit one. */
        uint64_t v1 = block_size(&h, 4);
        if (v1 > len - at)
            return bad(err, name, at, "the version 1 data block is cut short");
        at += (size_t)v1;
        char v = h.version;
        if ((rc = read_hdr(b, len, at, name, &h, err)) != TW_OK)
            return rc;
        if (h.version != v)
            return bad(err, name, at + 4, "the second header's version differs from the first's");
        at += 44;
        tsize = 8;
    }
    if (h.leapcnt != 0)
        return tw_error_set(err, TW_EUNSUPPORTED,
                            "%s has leap seconds (a \"right/\" zone); tierwise counts POSIX "
                            "time: use the zone of the same name without \"right/\"",
                            name);
    if (h.typecnt == 0 || h.typecnt > 256)
        return bad(err, name, at - 44 + 36, "the count of time types must be 1..256");
    if (h.charcnt == 0)
        return bad(err, name, at - 44 + 40, "no abbreviation characters");
    if (h.isstdcnt != 0 && h.isstdcnt != h.typecnt)
        return bad(err, name, at - 44 + 24, "isstdcnt is neither 0 nor typecnt");
    if (h.isutcnt != 0 && h.isutcnt != h.typecnt)
        return bad(err, name, at - 44 + 20, "isutcnt is neither 0 nor typecnt");
    if (h.timecnt > MAX_TIMECNT)
        return bad(err, name, at - 44 + 32, "implausibly many transitions");
    uint64_t need = block_size(&h, tsize);
    if (need > len - at)
        return bad(err, name, at, "the data block is cut short");
    struct tw_tz *z = NULL;
    if ((rc = new_zone(name, h.timecnt, h.typecnt, &z, err)) != TW_OK)
        return rc;
    const unsigned char *p = b + at;
    for (uint32_t i = 0; i < h.timecnt; i++) {
        z->trans[i] = tsize == 8 ? be64(p + 8 * i) : (int32_t)be32(p + 4 * i);
        if (i > 0 && z->trans[i] <= z->trans[i - 1]) {
            tw_tz_free(z);
            return bad(err, name, at + (size_t)tsize * i, "transition times are not ascending");
        }
    }
    size_t idx_at = at + (size_t)h.timecnt * tsize;
    size_t types_at = idx_at + h.timecnt;
    size_t chars_at = types_at + (size_t)h.typecnt * 6;
    size_t std_at = chars_at + h.charcnt + (size_t)h.leapcnt * (tsize + 4);
    size_t ut_at = std_at + h.isstdcnt;
    for (uint32_t i = 0; i < h.timecnt; i++) {
        z->idx[i] = b[idx_at + i];
        if (z->idx[i] >= h.typecnt) {
            tw_tz_free(z);
            return bad(err, name, idx_at + i, "a transition names a time type that does not exist");
        }
    }
    for (uint32_t i = 0; i < h.typecnt; i++) {
        const unsigned char *t = b + types_at + 6 * i;
        int32_t off = (int32_t)be32(t);
        unsigned char isdst = t[4], ai = t[5];
        const char *what = NULL;
        if (off < -MAX_OFFSET_S || off > MAX_OFFSET_S)
            what = "a UTC offset of 26 hours or more";
        else if (isdst > 1)
            what = "an isdst flag other than 0 or 1";
        else if (ai >= h.charcnt)
            what = "an abbreviation index past the characters";
        if (what) {
            tw_tz_free(z);
            return bad(err, name, types_at + 6 * i, what);
        }
        const char *s = (const char *)b + chars_at + ai;
        size_t room = h.charcnt - ai;
        const char *nul = memchr(s, '\0', room);
        if (!nul || (size_t)(nul - s) >= TW_TZ_ABBR_MAX) {
            tw_tz_free(z);
            return bad(err, name, chars_at + ai,
                       nul ? "an abbreviation longer than 15 characters"
                           : "an abbreviation without its NUL");
        }
        z->types[i].utoff = off;
        z->types[i].isdst = isdst;
        memcpy(z->types[i].abbr, s, (size_t)(nul - s) + 1);
    }
    for (uint32_t i = 0; i < h.isstdcnt; i++) {
        if (b[std_at + i] > 1) {
            tw_tz_free(z);
            return bad(err, name, std_at + i, "a standard/wall indicator other than 0 or 1");
        }
    }
    for (uint32_t i = 0; i < h.isutcnt; i++) {
        if (b[ut_at + i] > 1 || (b[ut_at + i] == 1 && (h.isstdcnt == 0 || b[std_at + i] != 1))) {
            tw_tz_free(z);
            return bad(err, name, ut_at + i, "a UT/local indicator that is not 0, or 1 with "
                                             "its standard indicator 1");
        }
    }
    at += (size_t)need;
    if (tsize == 4) {
        /* Version 1: no footer; anything after the data is not TZif. */
        if (at != len) {
            tw_tz_free(z);
            return bad(err, name, at, "bytes after the end of the data");
        }
        *out = z;
        return TW_OK;
    }
    if (at >= len || b[at] != '\n') {
        tw_tz_free(z);
        return bad(err, name, at, "the footer does not start with a newline");
    }
    const unsigned char *nl = memchr(b + at + 1, '\n', len - at - 1);
    if (!nl) {
        tw_tz_free(z);
        return bad(err, name, len, "the footer's TZ string has no closing newline");
    }
    size_t slen = (size_t)(nl - (b + at + 1));
    if ((size_t)(nl - b) + 1 != len) {
        tw_tz_free(z);
        return bad(err, name, (size_t)(nl - b) + 1, "bytes after the footer");
    }
    if (slen > 0) {
        struct pp pp = {(const char *)b + at + 1, slen, 0, err, at + 1, "footer TZ string"};
        if ((rc = posix_parse(&pp, &z->footer)) != TW_OK) {
            /* Say which zone, before the position. */
            char m[sizeof(err->msg)];
            if (err) {
                memcpy(m, err->msg, sizeof(m));
                tw_error_set_at(err, rc, 1, err->column, "%.100s: %.400s", name, m);
            }
            tw_tz_free(z);
            return rc;
        }
    }
    *out = z;
    return TW_OK;
}

enum tw_err tw_tz_from_posix(const char *buf, size_t len, struct tw_tz **out,
                             struct tw_error *err)
{
    *out = NULL;
    if (!buf)
        len = 0;
    struct posix pz;
    struct pp pp = {buf, len, 0, err, 0, "TZ string"};
    enum tw_err rc = posix_parse(&pp, &pz);
    if (rc != TW_OK)
        return rc;
    char name[TW_TZ_NAME_MAX];
    size_t n = len < sizeof(name) - 1 ? len : sizeof(name) - 1;
    memcpy(name, buf, n);
    name[n] = '\0';
    struct tw_tz *z = NULL;
    if ((rc = new_zone(name, 0, 1, &z, err)) != TW_OK)
        return rc;
    z->types[0] = pz.std;
    z->footer = pz;
    *out = z;
    return TW_OK;
}
