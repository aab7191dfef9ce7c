/*
 * reservation.c - reserved disk capacity held (reservation.h): the file,
 * a policy's "reservations" array, merging and counting.
 *
 * An entry is {"region", "tier", "redundancy" (default "LRS"), "count"}.
 * Azure sells disk reservations for Premium SSD P30 to P80, so a tier
 * outside those is refused rather than taken as covering nothing.
 */
#include "core/reservation.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/jcheck.h"
#include "core/jsonread.h"

static const char *const reservable[] = {"P30", "P40", "P50", "P60", "P70", "P80"};
#define N_RESERVABLE (sizeof(reservable) / sizeof(reservable[0]))

void tw_reservations_cleanup(struct tw_reservations *r)
{
    if (!r)
        return;
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

static bool same(const struct tw_reservation *a, const char *region, const char *tier,
                 enum tw_sku_redundancy red)
{
    return a->redundancy == red && strcasecmp(a->region, region) == 0 &&
           strcmp(a->tier, tier) == 0;
}

/* Adds one entry (or its count to an equal one).  TW_ERANGE past the cap
 * or on a count overflow. */
static enum tw_err add(struct tw_reservations *a, const struct tw_reservation *e,
                       struct tw_error *err)
{
    for (size_t i = 0; i < a->n; i++) {
        if (same(&a->v[i], e->region, e->tier, e->redundancy)) {
            if (a->v[i].count > INT64_MAX - e->count)
                return tw_error_set(err, TW_ERANGE,
                                    "reservations of %s %s %s add up past the largest count",
                                    e->region, e->tier, tw_sku_redundancy_name(e->redundancy));
            a->v[i].count += e->count;
            return TW_OK;
        }
    }
    if (a->n >= TW_RESERVATIONS_MAX)
        return tw_error_set(err, TW_ERANGE,
                            "more than %d different reservations (region, tier, redundancy); "
                            "merge entries of the same tier and region",
                            TW_RESERVATIONS_MAX);
    struct tw_reservation *v = realloc(a->v, (a->n + 1) * sizeof(*v));
    if (!v)
        return tw_error_set(err, TW_ENOMEM, "out of memory adding a reservation");
    a->v = v;
    a->v[a->n++] = *e;
    return TW_OK;
}

enum tw_err tw_reservations_merge(struct tw_reservations *a, const struct tw_reservations *b,
                                  struct tw_error *err)
{
    for (size_t i = 0; b && i < b->n; i++) {
        enum tw_err rc = add(a, &b->v[i], err);
        if (rc != TW_OK)
            return rc;
    }
    return TW_OK;
}

int64_t tw_reservations_count(const struct tw_reservations *r, const char *region,
                              const char *tier, enum tw_sku_redundancy red)
{
    if (!r || !region || !tier)
        return 0;
    int64_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        if (same(&r->v[i], region, tier, red))
            n += r->v[i].count; /* merged: at most one matches */
    return n;
}

long tw_reservations_find(const struct tw_reservations *r, const char *region, const char *tier,
                          enum tw_sku_redundancy red)
{
    for (size_t i = 0; r && region && tier && i < r->n; i++)
        if (same(&r->v[i], region, tier, red))
            return (long)i;
    return -1;
}

/* ---- reading ---------------------------------------------------------- */

static int read_entry(struct tw_jc *c, const char *path, struct tw_reservations *out)
{
    static const char *const names[] = {"region", "tier", "redundancy", "count"};
    size_t open_off = tw_jc_off(c);
    int w = tw_jc_want(c, path, '{');
    if (w <= 0)
        return w;
    struct tw_reservation e = {.redundancy = TW_SKU_LRS};
    unsigned seen = 0;
    size_t before = c->n;
    struct tw_jr_obj o = {0};
    char key[64], fp[200];
    while (tw_jr_member(c->r, &o, key, sizeof(key))) {
        int i = o.key_over ? -1 : tw_jr_key_index(key, names, 4);
        int rc;
        if (i < 0) {
            tw_jc_fail(c, path, o.key_off,
                       "unknown member \"%.40s\"; an entry has region, tier, redundancy and "
                       "count",
                       o.key_over ? "(a long key)" : key);
            if (tw_jc_skip(c) < 0)
                return -1;
            continue;
        }
        seen |= 1u << i;
        tw_jc_path(fp, sizeof(fp), path, key);
        size_t off = tw_jc_off(c);
        switch (i) {
        case 0:
            rc = tw_jc_str(c, fp, e.region, sizeof(e.region), true);
            if (rc > 0) {
                for (char *q = e.region; *q; q++) {
                    *q = (char)tolower((unsigned char)*q);
                    if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))) {
                        tw_jc_fail(c, fp, off,
                                   "must be an Azure region's armRegionName (letters and "
                                   "digits: \"westeurope\")");
                        break;
                    }
                }
            }
            break;
        case 1: {
            char t[16];
            rc = tw_jc_str(c, fp, t, sizeof(t), true);
            if (rc > 0) {
                const char *hit = NULL;
                for (size_t k = 0; k < N_RESERVABLE; k++)
                    if (strcmp(t, reservable[k]) == 0)
                        hit = reservable[k];
                if (hit)
                    memcpy(e.tier, hit, 4);
                else
                    tw_jc_fail(c, fp, off,
                               "must be a Premium SSD tier Azure reserves: P30, P40, P50, P60, "
                               "P70 or P80, got \"%.16s\"",
                               t);
            }
            break;
        }
        case 2: {
            char t[8];
            rc = tw_jc_str(c, fp, t, sizeof(t), true);
            if (rc > 0) {
                if (strcasecmp(t, "LRS") == 0)
                    e.redundancy = TW_SKU_LRS;
                else if (strcasecmp(t, "ZRS") == 0)
                    e.redundancy = TW_SKU_ZRS;
                else
                    tw_jc_fail(c, fp, off, "must be \"LRS\" or \"ZRS\"");
            }
            break;
        }
        default:
            rc = tw_jc_int(c, fp, 1, INT64_C(1000000000), &e.count);
            break;
        }
        if (rc < 0)
            return -1;
    }
    if (c->r->rc != TW_OK)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (i == 2 || (seen & (1u << i)))
            continue;
        tw_jc_path(fp, sizeof(fp), path, names[i]);
        tw_jc_fail(c, fp, open_off, "is missing (an entry needs region, tier and count)");
    }
    if (c->n != before)
        return 1;
    struct tw_error aerr = {0};
    enum tw_err arc = add(out, &e, &aerr);
    if (arc == TW_ENOMEM) {
        tw_jr_fail(c->r, TW_ENOMEM, "%s", aerr.msg);
        return -1;
    }
    if (arc != TW_OK)
        tw_jc_fail(c, path, open_off, "%s", aerr.msg);
    return 1;
}

int tw_reservations_read(struct tw_jc *c, const char *path, struct tw_reservations *out)
{
    int w = tw_jc_want(c, path, '[');
    if (w <= 0)
        return w < 0 ? -1 : 1;
    struct tw_jr_arr a = {0};
    char ep[200];
    while (tw_jr_element(c->r, &a)) {
        tw_jc_path_at(ep, sizeof(ep), path, a.n - 1);
        if (read_entry(c, ep, out) < 0)
            return -1;
    }
    return c->r->rc == TW_OK ? 1 : -1;
}

/* The first problem of a reservations file, in ERR. */
struct first {
    const char *buf;
    size_t len;
    struct tw_error *err;
    bool set;
};

static void first_problem(void *arg, const char *path, size_t off, const char *msg)
{
    struct first *f = arg;
    if (f->set)
        return;
    f->set = true;
    long line, col;
    tw_jc_position(f->buf, f->len, off, &line, &col);
    tw_error_set_at(f->err, TW_EPARSE, line, col, "reservations: %s (line %ld, column %ld): %s",
                    path, line, col, msg);
}

enum tw_err tw_reservations_parse(const char *buf, size_t len, struct tw_reservations *out,
                                  struct tw_error *err)
{
    static const char *const names[] = {"schema_version", "reservations"};
    out->n = 0;
    out->v = NULL;
    if (!buf)
        len = 0;
    struct tw_jr r;
    /* The JSON first, whole: a syntax error is reported as one. */
    tw_jr_init(&r, buf ? buf : "", len, "the reservations file", TW_JR_STRICT, 16, err);
    if (tw_jr_skip(&r))
        tw_jr_finish(&r);
    tw_jr_done(&r);
    if (r.rc != TW_OK)
        return r.rc;

    struct first f = {buf, len, err, false};
    struct tw_jc c = {&r, first_problem, &f, 0};
    tw_jr_init(&r, buf, len, "the reservations file", TW_JR_STRICT, 16, err);
    size_t root = tw_jc_off(&c);
    unsigned seen = 0;
    if (tw_jc_want(&c, "$", '{') > 0) {
        struct tw_jr_obj o = {0};
        char key[32];
        while (tw_jr_member(&r, &o, key, sizeof(key))) {
            int i = o.key_over ? -1 : tw_jr_key_index(key, names, 2);
            int rc;
            if (i < 0) {
                tw_jc_fail(&c, "$", o.key_off,
                           "unknown member \"%.40s\"; the file has schema_version and "
                           "reservations",
                           o.key_over ? "(a long key)" : key);
                rc = tw_jc_skip(&c);
            } else if (i == 0) {
                char v[64];
                size_t off = tw_jc_off(&c);
                rc = tw_jc_str(&c, "$.schema_version", v, sizeof(v), true);
                if (rc > 0 && strcmp(v, TW_RESERVATIONS_SCHEMA) != 0)
                    tw_jc_fail(&c, "$.schema_version", off, "must be \"%s\", got \"%s\"",
                               TW_RESERVATIONS_SCHEMA, v);
            } else {
                rc = tw_reservations_read(&c, "$.reservations", out);
            }
            if (i >= 0)
                seen |= 1u << i;
            if (rc < 0)
                break;
        }
        if (r.rc == TW_OK) {
            if (!(seen & 1u))
                tw_jc_fail(&c, "$.schema_version", root, "is missing (\"%s\")",
                           TW_RESERVATIONS_SCHEMA);
            if (!(seen & 2u))
                tw_jc_fail(&c, "$.reservations", root, "is missing (an array, may be empty)");
        }
    }
    tw_jr_done(&r);
    enum tw_err rc = r.rc != TW_OK ? r.rc : c.n ? TW_EPARSE : TW_OK;
    if (rc != TW_OK)
        tw_reservations_cleanup(out);
    return rc;
}
