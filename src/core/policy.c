/*
 * policy.c - tier-switch policies as files (policy.h): the reader, the
 * canonical JSON and which disks a policy covers.
 *
 * Reading is two passes on core/jsonread: the text as JSON first (a syntax
 * error, a duplicate key or a number out of range is one problem with its
 * line and column, and nothing else is said), then the content, where every
 * problem is collected (core/jcheck.h) with its JSON path and position, up
 * to TW_POLICY_DIAG_MAX sorted by position.  Checks between members (a
 * "running_io" without "allow_running", "allowed_targets" without
 * "cheapest") are made after the document, at the member's own position.
 */
#include "core/policy.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/jcheck.h"
#include "core/jsonread.h"
#include "core/observed.h"
#include "core/sku.h"

#define MAX_DEPTH 16
#define PROBLEMS_MAX 1024 /* collected before sorting; more only sets "more" */

static const char *const members[] = {
    "schema_version", "name",       "description",     "match",
    "target",         "allowed_targets", "windows",    "observed",
    "timezone",       "margins",    "min_saving",      "quota",
    "os_disks",       "os_disk_to_hdd", "require_original_before_start",
    "allow_running",  "running_io", "reservations",
};
enum {
    M_SCHEMA, M_NAME, M_DESC, M_MATCH, M_TARGET, M_ALLOWED, M_WINDOWS, M_OBSERVED,
    M_TZ, M_MARGINS, M_MIN_SAVING, M_QUOTA, M_OS_DISKS, M_OS_HDD, M_REQUIRE,
    M_ALLOW_RUNNING, M_RUNNING_IO, M_RESERVATIONS, M_COUNT
};
#define N_MEMBERS (sizeof(members) / sizeof(members[0]))
_Static_assert(N_MEMBERS == M_COUNT, "members and their indexes");

size_t tw_policy_members(const char *const **names)
{
    if (names)
        *names = members;
    return N_MEMBERS;
}

/* ---- problems --------------------------------------------------------- */

struct problem {
    size_t off;
    size_t seq;
    char path[160];
    char msg[320];
};

struct pp {
    const char *buf;
    size_t len;
    struct tw_jr r;
    struct tw_jc c;
    struct tw_policy *p;
    struct problem *pr;
    size_t n_pr, cap_pr;
    bool more, nomem;
    /* Where members were, for the checks between them. */
    size_t off[M_COUNT];
    unsigned seen;
    bool target_ok;      /* "target" was read */
    bool windows_ok;
    bool observed_weeks_set, observed_min_set;
    size_t observed_min_off;
    bool allowed_set;
};

static void on_problem(void *arg, const char *path, size_t off, const char *msg)
{
    struct pp *s = arg;
    if (s->n_pr >= PROBLEMS_MAX) {
        s->more = true;
        return;
    }
    if (s->n_pr == s->cap_pr) {
        size_t cap = s->cap_pr ? s->cap_pr * 2 : 16;
        struct problem *v = realloc(s->pr, cap * sizeof(*v));
        if (!v) {
            s->nomem = true;
            return;
        }
        s->pr = v;
        s->cap_pr = cap;
    }
    struct problem *q = &s->pr[s->n_pr];
    q->off = off;
    q->seq = s->n_pr;
    snprintf(q->path, sizeof(q->path), "%s", path);
    snprintf(q->msg, sizeof(q->msg), "%s", msg);
    s->n_pr++;
}

static int by_position(const void *a, const void *b)
{
    const struct problem *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define FAIL(s, path, off, ...) tw_jc_fail(&(s)->c, (path), (off), __VA_ARGS__)

/* ---- names and lists -------------------------------------------------- */

/* 1..64 of [A-Za-z0-9._-], not starting with '.': a name is a segment of
 * the API's paths (/api/v1/policies/NAME), where "." and ".." mean
 * something else and the router takes no name starting with a dot. */
static bool name_ok(const char *n)
{
    size_t k = strlen(n);
    if (k < 1 || k > TW_POLICY_NAME_MAX - 1 || n[0] == '.')
        return false;
    for (; *n; n++)
        if (!isalnum((unsigned char)*n) && *n != '.' && *n != '_' && *n != '-')
            return false;
    return true;
}

/* An IANA zone name's form: ASCII letters, digits, '_', '-', '+' in
 * components separated by single '/', none empty, none "." or "..".
 * Whether the zone exists is for whoever loads it (app/tzload.h). */
static bool tz_form_ok(const char *n)
{
    size_t k = strlen(n);
    if (k < 1 || k >= TW_TZ_NAME_MAX)
        return false;
    const char *comp = n;
    for (const char *q = n;; q++) {
        if (*q == '/' || *q == '\0') {
            size_t cl = (size_t)(q - comp);
            if (cl == 0 || (cl == 1 && comp[0] == '.') ||
                (cl == 2 && comp[0] == '.' && comp[1] == '.'))
                return false;
            if (*q == '\0')
                return true;
            comp = q + 1;
            continue;
        }
        if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '+' && *q != '.')
            return false;
    }
}

static int names_add(struct pp *s, struct tw_policy_names *l, const char *v)
{
    char *d = strdup(v);
    char **nv = d ? realloc(l->v, (l->n + 1) * sizeof(*nv)) : NULL;
    if (!nv) {
        free(d);
        tw_jr_fail(&s->r, TW_ENOMEM, "out of memory reading the policy");
        return -1;
    }
    l->v = nv;
    l->v[l->n++] = d;
    return 1;
}

static void names_free(struct tw_policy_names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* A list of non-empty strings (SKU names when SKUS: canonical). */
static int read_names(struct pp *s, const char *path, struct tw_policy_names *out, bool skus)
{
    int w = tw_jc_want(&s->c, path, '[');
    if (w <= 0)
        return w;
    struct tw_jr_arr a = {0};
    char ep[200], v[512];
    while (tw_jr_element(&s->r, &a)) {
        tw_jc_path_at(ep, sizeof(ep), path, a.n - 1);
        size_t off = tw_jc_off(&s->c);
        int rc = tw_jc_str(&s->c, ep, v, sizeof(v), true);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        if (skus) {
            struct tw_sku k;
            if (!tw_sku_parse(v, &k)) {
                FAIL(s, ep, off,
                     "\"%.60s\" is not a disk SKU; one of Premium_LRS, Premium_ZRS, "
                     "StandardSSD_LRS, StandardSSD_ZRS, Standard_LRS, PremiumV2_LRS, "
                     "UltraSSD_LRS",
                     v);
                continue;
            }
            snprintf(v, sizeof(v), "%s", tw_sku_name(k.family, k.redundancy));
        }
        for (size_t i = 0; i < out->n; i++)
            if (strcasecmp(out->v[i], v) == 0) {
                FAIL(s, ep, off, "\"%.60s\" is listed twice", v);
                rc = 0;
                break;
            }
        if (rc > 0 && names_add(s, out, v) < 0)
            return -1;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

/* An object of tag name -> value ("*": any value). */
static int read_tags(struct pp *s, const char *path, struct tw_policy_tags *out)
{
    int w = tw_jc_want(&s->c, path, '{');
    if (w <= 0)
        return w;
    struct tw_jr_obj o = {0};
    char key[sizeof(((struct tw_tag *)0)->key)], ep[200];
    while (tw_jr_member(&s->r, &o, key, sizeof(key))) {
        if (o.key_over || !key[0]) {
            FAIL(s, path, o.key_off, "a tag name must be 1 to %zu bytes", sizeof(key) - 1);
            if (tw_jc_skip(&s->c) < 0)
                return -1;
            continue;
        }
        tw_jc_path(ep, sizeof(ep), path, key);
        struct tw_tag t;
        snprintf(t.key, sizeof(t.key), "%s", key);
        int rc = tw_jc_str(&s->c, ep, t.value, sizeof(t.value), false);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        for (size_t i = 0; i < out->n; i++)
            if (strcasecmp(out->v[i].key, t.key) == 0) {
                FAIL(s, ep, o.key_off,
                     "tag \"%.60s\" is named twice (Azure tag names ignore case)", key);
                rc = 0;
            }
        if (rc == 0)
            continue;
        struct tw_tag *nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
        if (!nv) {
            tw_jr_fail(&s->r, TW_ENOMEM, "out of memory reading the policy");
            return -1;
        }
        out->v = nv;
        out->v[out->n++] = t;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

static int read_exclude(struct pp *s, const char *path, struct tw_policy_match *m)
{
    static const char *const names[] = {"vms", "resource_groups", "tags"};
    int w = tw_jc_want(&s->c, path, '{');
    if (w <= 0)
        return w;
    struct tw_jr_obj o = {0};
    char key[64], ep[200];
    while (tw_jr_member(&s->r, &o, key, sizeof(key))) {
        int i = o.key_over ? -1 : tw_jr_key_index(key, names, 3);
        int rc;
        tw_jc_path(ep, sizeof(ep), path, o.key_over ? "?" : key);
        if (i < 0) {
            FAIL(s, ep, o.key_off, "unknown member; exclude has vms, resource_groups and tags");
            rc = tw_jc_skip(&s->c);
        } else if (i == 0) {
            rc = read_names(s, ep, &m->ex_vms, false);
        } else if (i == 1) {
            rc = read_names(s, ep, &m->ex_resource_groups, false);
        } else {
            rc = read_tags(s, ep, &m->ex_tags);
        }
        if (rc < 0)
            return -1;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

static int read_match(struct pp *s, const char *path, struct tw_policy_match *m)
{
    static const char *const names[] = {"tags", "skus", "resource_groups", "subscriptions", "vms",
                                        "exclude"};
    int w = tw_jc_want(&s->c, path, '{');
    if (w <= 0)
        return w;
    struct tw_jr_obj o = {0};
    char key[64], ep[200];
    while (tw_jr_member(&s->r, &o, key, sizeof(key))) {
        int i = o.key_over ? -1 : tw_jr_key_index(key, names, 6);
        int rc;
        tw_jc_path(ep, sizeof(ep), path, o.key_over ? "?" : key);
        switch (i) {
        case 0: rc = read_tags(s, ep, &m->tags); break;
        case 1: rc = read_names(s, ep, &m->skus, true); break;
        case 2: rc = read_names(s, ep, &m->resource_groups, false); break;
        case 3: rc = read_names(s, ep, &m->subscriptions, false); break;
        case 4: rc = read_names(s, ep, &m->vms, false); break;
        case 5: rc = read_exclude(s, ep, m); break;
        default:
            FAIL(s, ep, o.key_off,
                 "unknown member; match has tags, skus, resource_groups, subscriptions, vms and "
                 "exclude");
            rc = tw_jc_skip(&s->c);
        }
        if (rc < 0)
            return -1;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

/* A target SKU name (not v2 or Ultra) into DST (canonical). */
static bool target_sku(struct pp *s, const char *path, size_t off, const char *v, char *dst,
                       size_t cap)
{
    struct tw_sku k;
    if (!tw_sku_parse(v, &k)) {
        FAIL(s, path, off,
             "\"%.60s\" is not a disk SKU; a target is StandardSSD_LRS, Standard_LRS, "
             "Premium_LRS (or their _ZRS), \"cheapest\" or \"none\"",
             v);
        return false;
    }
    if (tw_sku_provisioned(k.family)) {
        FAIL(s, path, off,
             "%s can't be a target: a disk can't be switched to Premium SSD v2 or Ultra and "
             "back; use StandardSSD_LRS, Standard_LRS or Premium_LRS",
             tw_sku_name(k.family, k.redundancy));
        return false;
    }
    snprintf(dst, cap, "%s", tw_sku_name(k.family, k.redundancy));
    return true;
}

static int read_allowed(struct pp *s, const char *path)
{
    struct tw_policy *p = s->p;
    int w = tw_jc_want(&s->c, path, '[');
    if (w <= 0)
        return w;
    s->allowed_set = true;
    size_t open = tw_jc_off(&s->c);
    struct tw_jr_arr a = {0};
    char ep[200], v[64], t[32];
    size_t n = 0;
    while (tw_jr_element(&s->r, &a)) {
        tw_jc_path_at(ep, sizeof(ep), path, a.n - 1);
        size_t off = tw_jc_off(&s->c);
        int rc = tw_jc_str(&s->c, ep, v, sizeof(v), true);
        if (rc < 0)
            return -1;
        if (rc == 0 || !target_sku(s, ep, off, v, t, sizeof(t)))
            continue;
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            if (strcmp(p->targets[i], t) == 0)
                dup = true;
        if (dup) {
            FAIL(s, ep, off, "%s is listed twice", t);
        } else if (n >= TW_POLICY_TARGETS_MAX) {
            FAIL(s, ep, off, "at most %d allowed targets", TW_POLICY_TARGETS_MAX);
        } else {
            snprintf(p->targets[n], sizeof(p->targets[n]), "%s", t);
            n++;
        }
    }
    if (s->r.rc != TW_OK)
        return -1;
    if (a.n == 0)
        FAIL(s, path, open, "must list at least one target SKU");
    p->n_targets = n;
    return 1;
}

/* ---- windows ---------------------------------------------------------- */

static void mark(unsigned char *on, const struct tw_windows *w)
{
    for (size_t i = 0; i < w->n; i++)
        for (int k = 0; k < w->w[i].len_min; k++)
            on[(w->w[i].start_min + k) % TW_WEEK_MIN] = 1;
}

/* The runs of ON as windows; false when more than TW_WINDOWS_MAX. */
static bool runs(const unsigned char *on, struct tw_windows *out)
{
    out->n = 0;
    int free_min = -1;
    for (int m = 0; m < TW_WEEK_MIN && free_min < 0; m++)
        if (!on[m])
            free_min = m;
    if (free_min < 0) {
        out->n = 1;
        out->w[0].start_min = 0;
        out->w[0].len_min = TW_WEEK_MIN;
        return true;
    }
    for (int k = 1; k <= TW_WEEK_MIN; k++) {
        int m = (free_min + k) % TW_WEEK_MIN;
        if (!on[m] || on[(m + TW_WEEK_MIN - 1) % TW_WEEK_MIN])
            continue;
        if (out->n >= TW_WINDOWS_MAX)
            return false;
        int len = 0;
        while (on[(m + len) % TW_WEEK_MIN])
            len++;
        out->w[out->n].start_min = (uint16_t)m;
        out->w[out->n].len_min = (uint16_t)len;
        out->n++;
    }
    tw_windows_union(out); /* sorted by start */
    return true;
}

static int read_windows(struct pp *s, const char *path)
{
    struct tw_policy *p = s->p;
    size_t off = tw_jc_off(&s->c);
    char k = tw_jc_kind(&s->c);
    if (k == 's') {
        char v[600];
        int rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc <= 0)
            return rc;
        if (strcmp(v, "observed") == 0) {
            p->windows_kind = TW_PW_OBSERVED;
            s->windows_ok = true;
        } else if (strncmp(v, "tag:", 4) == 0) {
            if (!v[4] || strlen(v + 4) >= sizeof(p->windows_tag)) {
                FAIL(s, path, off, "\"tag:NAME\" needs a tag name of 1 to %zu bytes",
                     sizeof(p->windows_tag) - 1);
                return 0;
            }
            p->windows_kind = TW_PW_TAG;
            snprintf(p->windows_tag, sizeof(p->windows_tag), "%s", v + 4);
            s->windows_ok = true;
        } else {
            FAIL(s, path, off,
                 "must be a list of windows ([\"Fri 20:00-Mon 06:00\"]), \"tag:NAME\" or "
                 "\"observed\", got \"%.60s\"",
                 v);
        }
        return 1;
    }
    if (k != 'a') {
        FAIL(s, path, off,
             "must be a list of windows ([\"Fri 20:00-Mon 06:00\"]), \"tag:NAME\" or "
             "\"observed\", got %s",
             tw_jc_kind_name(k));
        return tw_jc_skip(&s->c);
    }
    unsigned char *bits = calloc(TW_WEEK_MIN, 1);
    if (!bits) {
        tw_jr_fail(&s->r, TW_ENOMEM, "out of memory reading the policy");
        return -1;
    }
    struct tw_jr_arr a = {0};
    char ep[200], v[2048];
    size_t before = s->c.n;
    while (tw_jr_element(&s->r, &a)) {
        tw_jc_path_at(ep, sizeof(ep), path, a.n - 1);
        size_t eoff = tw_jc_off(&s->c);
        int rc = tw_jc_str(&s->c, ep, v, sizeof(v), true);
        if (rc < 0) {
            free(bits);
            return -1;
        }
        if (rc == 0)
            continue;
        struct tw_windows w;
        struct tw_error werr = {0};
        if (tw_windows_parse(v, strlen(v), &w, &werr) != TW_OK) {
            /* At the byte the window's grammar stopped at, when the string
             * is written without escapes (its text is the window's). */
            size_t raw = (size_t)(s->r.p - s->r.base) - eoff;
            size_t at = eoff;
            if (raw == strlen(v) + 2 && werr.column >= 1 && (size_t)werr.column <= strlen(v) + 1)
                at = eoff + (size_t)werr.column;
            FAIL(s, ep, at, "%s", werr.msg);
            continue;
        }
        mark(bits, &w);
    }
    if (s->r.rc != TW_OK) {
        free(bits);
        return -1;
    }
    if (a.n == 0) {
        FAIL(s, path, off,
             "lists no window; write at least one (\"Fri 20:00-Mon 06:00\"), or use "
             "\"target\": \"none\" for a policy that never switches");
    } else if (s->c.n == before) {
        if (!runs(bits, &p->windows))
            FAIL(s, path, off, "the windows make more than %d separate spans a week",
                 TW_WINDOWS_MAX);
        else
            s->windows_ok = true;
    }
    p->windows_kind = TW_PW_LIST;
    free(bits);
    return 1;
}

static int read_observed(struct pp *s, const char *path)
{
    static const char *const names[] = {"weeks", "min_weeks"};
    int w = tw_jc_want(&s->c, path, '{');
    if (w <= 0)
        return w;
    struct tw_jr_obj o = {0};
    char key[32], ep[200];
    while (tw_jr_member(&s->r, &o, key, sizeof(key))) {
        int i = o.key_over ? -1 : tw_jr_key_index(key, names, 2);
        tw_jc_path(ep, sizeof(ep), path, o.key_over ? "?" : key);
        int rc;
        int64_t v = 0;
        if (i < 0) {
            FAIL(s, ep, o.key_off, "unknown member; observed has weeks and min_weeks");
            rc = tw_jc_skip(&s->c);
        } else if (i == 0) {
            rc = tw_jc_int(&s->c, ep, 1, TW_OBSERVED_WEEKS_MAX, &v);
            if (rc > 0) {
                s->p->observed_weeks = (int)v;
                s->observed_weeks_set = true;
            }
        } else {
            s->observed_min_off = tw_jc_off(&s->c);
            rc = tw_jc_int(&s->c, ep, 1, TW_OBSERVED_WEEKS_MAX, &v);
            if (rc > 0) {
                s->p->observed_min_weeks = (int)v;
                s->observed_min_set = true;
            }
        }
        if (rc < 0)
            return -1;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

/* An object of integer members NAMES with ranges, into OUT. */
static int read_ints(struct pp *s, const char *path, const char *what,
                     const char *const *names, int n, const int64_t *lo, const int64_t *hi,
                     int64_t *out, unsigned *seen)
{
    int w = tw_jc_want(&s->c, path, '{');
    if (w <= 0)
        return w;
    struct tw_jr_obj o = {0};
    char key[64], ep[200];
    while (tw_jr_member(&s->r, &o, key, sizeof(key))) {
        int i = o.key_over ? -1 : tw_jr_key_index(key, names, n);
        tw_jc_path(ep, sizeof(ep), path, o.key_over ? "?" : key);
        int rc;
        if (i < 0) {
            FAIL(s, ep, o.key_off, "unknown member; %s", what);
            rc = tw_jc_skip(&s->c);
        } else {
            rc = tw_jc_int(&s->c, ep, lo[i], hi[i], &out[i]);
            if (rc > 0 && seen)
                *seen |= 1u << i;
        }
        if (rc < 0)
            return -1;
    }
    return s->r.rc == TW_OK ? 1 : -1;
}

/* ---- the document ----------------------------------------------------- */

static void defaults(struct tw_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->switches = true;
    p->windows_kind = TW_PW_LIST;
    p->observed_weeks = 4;
    p->observed_min_weeks = 3;
    snprintf(p->timezone, sizeof(p->timezone), "UTC");
    p->after_deallocate_minutes = 10;
    p->before_start_minutes = 30;
    p->quota_changes = 2;
    p->quota_hours = 24;
    p->require_original_before_start = true;
}

static int read_member(struct pp *s, int i, const char *path)
{
    struct tw_policy *p = s->p;
    size_t off = tw_jc_off(&s->c);
    char v[512];
    int rc = 1;
    bool b;
    switch (i) {
    case M_SCHEMA:
        rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc > 0 && strcmp(v, TW_POLICY_SCHEMA) != 0)
            FAIL(s, path, off, "must be \"%s\", got \"%.60s\"", TW_POLICY_SCHEMA, v);
        break;
    case M_NAME:
        rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc > 0) {
            if (name_ok(v))
                memcpy(p->name, v, strlen(v) + 1); /* name_ok: it fits */
            else
                FAIL(s, path, off,
                     "must be 1 to %d of the characters A-Z a-z 0-9 . _ -, the first not a "
                     "dot (it names the policy in the API and the store), got \"%.60s\"",
                     TW_POLICY_NAME_MAX - 1, v);
        }
        break;
    case M_DESC:
        rc = tw_jc_str(&s->c, path, p->description, sizeof(p->description), false);
        break;
    case M_MATCH: rc = read_match(s, path, &p->match); break;
    case M_TARGET:
        rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc <= 0)
            break;
        if (strcmp(v, "none") == 0) {
            p->switches = false;
            s->target_ok = true;
        } else if (strcmp(v, "cheapest") == 0) {
            p->cheapest = true;
            s->target_ok = true;
        } else if (target_sku(s, path, off, v, p->targets[0], sizeof(p->targets[0]))) {
            p->n_targets = 1;
            s->target_ok = true;
        }
        break;
    case M_ALLOWED: rc = read_allowed(s, path); break;
    case M_WINDOWS: rc = read_windows(s, path); break;
    case M_OBSERVED: rc = read_observed(s, path); break;
    case M_TZ:
        rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc > 0) {
            if (tz_form_ok(v))
                memcpy(p->timezone, v, strlen(v) + 1); /* tz_form_ok: it fits */
            else
                FAIL(s, path, off,
                     "must be an IANA time zone name such as \"Europe/London\" or \"UTC\", got "
                     "\"%.60s\"",
                     v);
        }
        break;
    case M_MARGINS: {
        static const char *const names[] = {"after_deallocate_minutes", "before_start_minutes"};
        static const int64_t lo[] = {0, 0}, hi[] = {1440, 1440};
        int64_t out[2] = {p->after_deallocate_minutes, p->before_start_minutes};
        rc = read_ints(s, path, "margins has after_deallocate_minutes and before_start_minutes",
                       names, 2, lo, hi, out, NULL);
        p->after_deallocate_minutes = (int)out[0];
        p->before_start_minutes = (int)out[1];
        break;
    }
    case M_MIN_SAVING: {
        char k = tw_jc_kind(&s->c);
        if (k == 'n') {
            FAIL(s, path, off,
                 "must be a decimal string (\"0.10\"), so the amount is read exactly; write it "
                 "in quotes");
            rc = tw_jc_skip(&s->c);
            break;
        }
        rc = tw_jc_str(&s->c, path, v, sizeof(v), true);
        if (rc <= 0)
            break;
        struct tw_error merr = {0};
        struct tw_money m;
        if (tw_money_parse(v, strlen(v), &m, &merr) != TW_OK)
            FAIL(s, path, off, "must be a decimal amount such as \"0.10\": %s", merr.msg);
        else if (m.micros < 0)
            FAIL(s, path, off, "must not be negative, got \"%.40s\"", v);
        else
            p->min_saving = m;
        break;
    }
    case M_QUOTA: {
        static const char *const names[] = {"changes", "hours"};
        static const int64_t lo[] = {2, 1}, hi[] = {10, 168};
        int64_t out[2] = {p->quota_changes, p->quota_hours};
        rc = read_ints(s, path,
                       "quota has changes (2 to 10: a window takes two, down and back) and hours",
                       names, 2, lo, hi, out, NULL);
        p->quota_changes = (int)out[0];
        p->quota_hours = (int)out[1];
        break;
    }
    case M_OS_DISKS:
        if ((rc = tw_jc_bool(&s->c, path, &b)) > 0)
            p->os_disks = b;
        break;
    case M_OS_HDD:
        if ((rc = tw_jc_bool(&s->c, path, &b)) > 0)
            p->os_disk_to_hdd = b;
        break;
    case M_REQUIRE:
        if ((rc = tw_jc_bool(&s->c, path, &b)) > 0)
            p->require_original_before_start = b;
        break;
    case M_ALLOW_RUNNING:
        if ((rc = tw_jc_bool(&s->c, path, &b)) > 0)
            p->allow_running = b;
        break;
    case M_RUNNING_IO: {
        static const char *const names[] = {"iops", "io_kib"};
        static const int64_t lo[] = {0, 1}, hi[] = {1000000, 65536};
        int64_t out[2] = {0, 0};
        unsigned seen = 0;
        size_t before = s->c.n;
        rc = read_ints(s, path, "running_io has iops and io_kib", names, 2, lo, hi, out, &seen);
        if (rc > 0 && s->c.n == before) {
            for (int k = 0; k < 2; k++)
                if (!(seen & (1u << k))) {
                    char ep[200];
                    FAIL(s, tw_jc_path(ep, sizeof(ep), path, names[k]), off,
                         "is missing (running_io needs iops, the I/Os a second, and io_kib, "
                         "their average size)");
                }
            p->running_io.ios_per_hour = out[0] * 3600;
            p->running_io.io_bytes = out[1] * 1024;
        }
        break;
    }
    case M_RESERVATIONS: rc = tw_reservations_read(&s->c, path, &p->reservations); break;
    default: break;
    }
    return rc;
}

static void after(struct pp *s, size_t root)
{
    struct tw_policy *p = s->p;
    char ep[64];
    static const int required[] = {M_SCHEMA, M_NAME, M_MATCH, M_TARGET};
    static const char *const hint[] = {
        "\"" TW_POLICY_SCHEMA "\"", "the policy's name", "an object; {} matches every disk",
        "a SKU name, \"cheapest\" or \"none\""};
    for (size_t k = 0; k < sizeof(required) / sizeof(required[0]); k++)
        if (!(s->seen & (1u << required[k])))
            FAIL(s, tw_jc_path(ep, sizeof(ep), "$", members[required[k]]), root,
                 "is missing (%s)", hint[k]);
#define HAS(m) ((s->seen & (1u << (m))) != 0)
    if (s->target_ok && !p->switches) {
        if (HAS(M_WINDOWS))
            FAIL(s, "$.windows", s->off[M_WINDOWS],
                 "means nothing with \"target\": \"none\" (the policy never switches); remove "
                 "it or name a target");
    } else if (HAS(M_TARGET) && !HAS(M_WINDOWS)) {
        FAIL(s, "$.windows", root,
             "is missing (a list of windows, \"tag:NAME\" or \"observed\"; a policy that never "
             "switches has \"target\": \"none\")");
    }
    if (s->target_ok && p->cheapest && !s->allowed_set) {
        p->n_targets = 2;
        snprintf(p->targets[0], sizeof(p->targets[0]), "StandardSSD_LRS");
        snprintf(p->targets[1], sizeof(p->targets[1]), "Standard_LRS");
    }
    if (HAS(M_ALLOWED) && s->target_ok && !p->cheapest)
        FAIL(s, "$.allowed_targets", s->off[M_ALLOWED],
             "is only for \"target\": \"cheapest\"; remove it or set the target to \"cheapest\"");
    if (HAS(M_OBSERVED) && s->windows_ok && p->windows_kind != TW_PW_OBSERVED)
        FAIL(s, "$.observed", s->off[M_OBSERVED],
             "is only for \"windows\": \"observed\"; remove it");
    if (p->observed_min_weeks > p->observed_weeks &&
        (s->observed_min_set || s->observed_weeks_set))
        FAIL(s, "$.observed.min_weeks", s->observed_min_set ? s->observed_min_off : s->off[M_OBSERVED],
             "(%d%s) must not exceed weeks (%d)", p->observed_min_weeks,
             s->observed_min_set ? "" : " by default", p->observed_weeks);
    if (HAS(M_ALLOW_RUNNING) && p->allow_running && !HAS(M_RUNNING_IO))
        FAIL(s, "$.running_io", s->off[M_ALLOW_RUNNING],
             "is missing: \"allow_running\": true needs the I/O to price, {\"iops\": N, "
             "\"io_kib\": K}");
    if (HAS(M_RUNNING_IO) && !p->allow_running)
        FAIL(s, "$.running_io", s->off[M_RUNNING_IO],
             "is only for \"allow_running\": true; remove it or allow running VMs");
    if (HAS(M_OS_HDD) && p->os_disk_to_hdd && !p->os_disks)
        FAIL(s, "$.os_disk_to_hdd", s->off[M_OS_HDD],
             "means nothing while \"os_disks\" is false; set os_disks to true or remove it");
#undef HAS
}

enum tw_err tw_policy_parse(const char *buf, size_t len, struct tw_policy *out,
                            struct tw_policy_diags *diags, struct tw_error *err)
{
    defaults(out);
    if (diags) {
        diags->n = 0;
        diags->more = false;
    }
    if (!buf)
        len = 0;
    if (len > TW_POLICY_FILE_MAX) {
        if (diags) {
            diags->n = 1;
            struct tw_policy_diag *d = &diags->d[0];
            snprintf(d->path, sizeof(d->path), "$");
            d->line = d->column = 1;
            snprintf(d->msg, sizeof(d->msg), "the file is larger than %d bytes",
                     TW_POLICY_FILE_MAX);
        }
        return tw_error_set_at(err, TW_EPARSE, 1, 1, "$ (line 1, column 1): the file is larger "
                               "than %d bytes", TW_POLICY_FILE_MAX);
    }
    /* A byte order mark: some editors on Windows save UTF-8 with one, and
     * JSON (RFC 8259 section 8.1) has none; said as such rather than as the
     * "a value was expected" the reader would give at 1:1. */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        static const char bom[] =
            "a byte order mark (BOM) is not allowed: save the file as UTF-8 without BOM";
        if (diags) {
            diags->n = 1;
            struct tw_policy_diag *d = &diags->d[0];
            snprintf(d->path, sizeof(d->path), "$");
            d->line = d->column = 1;
            snprintf(d->msg, sizeof(d->msg), "%s", bom);
        }
        return tw_error_set_at(err, TW_EPARSE, 1, 1, "$ (line 1, column 1): %s", bom);
    }
    struct pp s = {.buf = buf ? buf : "", .len = len, .p = out};
    struct tw_error jerr = {0};
    char where[160];
    tw_jr_init(&s.r, s.buf, len, NULL, TW_JR_STRICT, MAX_DEPTH, &jerr);
    tw_jc_validate(&s.r, where, sizeof(where));
    tw_jr_done(&s.r);
    if (s.r.rc != TW_OK) {
        if (diags) {
            diags->n = 1;
            struct tw_policy_diag *d = &diags->d[0];
            snprintf(d->path, sizeof(d->path), "%s", where);
            d->line = jerr.line ? jerr.line : 1;
            d->column = jerr.column ? jerr.column : 1;
            snprintf(d->msg, sizeof(d->msg), "%.319s", jerr.msg);
        }
        if (err)
            *err = jerr;
        return s.r.rc;
    }

    tw_jr_init(&s.r, s.buf, len, NULL, TW_JR_STRICT, MAX_DEPTH, &jerr);
    s.c = (struct tw_jc){&s.r, on_problem, &s, 0};
    size_t root = tw_jc_off(&s.c);
    if (tw_jc_want(&s.c, "$", '{') > 0) {
        struct tw_jr_obj o = {0};
        char key[64], path[200];
        while (tw_jr_member(&s.r, &o, key, sizeof(key))) {
            int i = o.key_over ? -1 : tw_jr_key_index(key, members, (int)N_MEMBERS);
            int rc;
            if (i < 0) {
                snprintf(path, sizeof(path), "$.%s", o.key_over ? "?" : key);
                FAIL(&s, path, o.key_off,
                     "unknown member; a policy has schema_version, name, description, match, "
                     "target, allowed_targets, windows, observed, timezone, margins, min_saving, "
                     "quota, os_disks, os_disk_to_hdd, require_original_before_start, "
                     "allow_running, running_io and reservations");
                rc = tw_jc_skip(&s.c);
            } else {
                s.seen |= 1u << i;
                s.off[i] = tw_jc_off(&s.c);
                snprintf(path, sizeof(path), "$.%s", key);
                rc = read_member(&s, i, path);
            }
            if (rc < 0)
                break;
        }
        if (s.r.rc == TW_OK)
            after(&s, root);
    }
    tw_jr_done(&s.r);
    enum tw_err rc = TW_OK;
    if (s.r.rc != TW_OK || s.nomem) {
        rc = s.r.rc != TW_OK ? s.r.rc : TW_ENOMEM;
        if (err)
            *err = jerr;
        if (rc == TW_ENOMEM && (!err || !err->msg[0]))
            tw_error_set(err, TW_ENOMEM, "out of memory reading the policy");
    } else if (s.n_pr > 0 || s.more) {
        rc = TW_EPARSE;
        qsort(s.pr, s.n_pr, sizeof(s.pr[0]), by_position);
        long line, col;
        tw_jc_position(s.buf, len, s.pr[0].off, &line, &col);
        tw_error_set_at(err, TW_EPARSE, line, col, "%s (line %ld, column %ld): %s",
                        s.pr[0].path, line, col, s.pr[0].msg);
        if (diags) {
            size_t n = s.n_pr < TW_POLICY_DIAG_MAX ? s.n_pr : TW_POLICY_DIAG_MAX;
            for (size_t i = 0; i < n; i++) {
                struct tw_policy_diag *d = &diags->d[i];
                snprintf(d->path, sizeof(d->path), "%s", s.pr[i].path);
                snprintf(d->msg, sizeof(d->msg), "%s", s.pr[i].msg);
                tw_jc_position(s.buf, len, s.pr[i].off, &d->line, &d->column);
            }
            diags->n = n;
            diags->more = s.more || s.n_pr > TW_POLICY_DIAG_MAX;
        }
    }
    free(s.pr);
    return rc;
}

void tw_policy_cleanup(struct tw_policy *p)
{
    if (!p)
        return;
    struct tw_policy_match *m = &p->match;
    free(m->tags.v);
    free(m->ex_tags.v);
    m->tags.v = m->ex_tags.v = NULL;
    m->tags.n = m->ex_tags.n = 0;
    names_free(&m->skus);
    names_free(&m->resource_groups);
    names_free(&m->subscriptions);
    names_free(&m->vms);
    names_free(&m->ex_vms);
    names_free(&m->ex_resource_groups);
    tw_reservations_cleanup(&p->reservations);
}

/* ---- canonical JSON --------------------------------------------------- */

static bool put(json_t *o, const char *k, json_t *v)
{
    return v && json_object_set_new(o, k, v) == 0;
}

static json_t *names_json(const struct tw_policy_names *l)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < l->n; i++)
        if (json_array_append_new(a, json_string(l->v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *tags_json(const struct tw_policy_tags *t)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < t->n; i++)
        if (!put(o, t->v[i].key, json_string(t->v[i].value))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static json_t *int_pair(const char *a, int64_t va, const char *b, int64_t vb)
{
    json_t *o = json_object();
    if (o && (!put(o, a, json_integer(va)) || !put(o, b, json_integer(vb)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *tw_policy_to_json(const struct tw_policy *p)
{
    json_t *o = json_object(), *m = json_object(), *ex = json_object();
    bool ok = o && m && ex;
    ok = ok && put(o, "schema_version", json_string(TW_POLICY_SCHEMA)) &&
         put(o, "name", json_string(p->name)) && put(o, "description", json_string(p->description));
    ok = ok && put(m, "tags", tags_json(&p->match.tags)) &&
         put(m, "skus", names_json(&p->match.skus)) &&
         put(m, "resource_groups", names_json(&p->match.resource_groups)) &&
         put(m, "subscriptions", names_json(&p->match.subscriptions)) &&
         put(m, "vms", names_json(&p->match.vms));
    ok = ok && put(ex, "vms", names_json(&p->match.ex_vms)) &&
         put(ex, "resource_groups", names_json(&p->match.ex_resource_groups)) &&
         put(ex, "tags", tags_json(&p->match.ex_tags));
    if (ok) {
        ok = put(m, "exclude", ex);
        ex = NULL;
    }
    if (ok) {
        ok = put(o, "match", m);
        m = NULL;
    }
    if (!p->switches) {
        ok = ok && put(o, "target", json_string("none"));
    } else if (p->cheapest) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < p->n_targets; i++)
            if (json_array_append_new(a, json_string(p->targets[i])) != 0) {
                json_decref(a);
                a = NULL;
            }
        ok = ok && put(o, "target", json_string("cheapest")) && put(o, "allowed_targets", a);
    } else {
        ok = ok && put(o, "target", json_string(p->n_targets ? p->targets[0] : ""));
    }
    if (p->switches) {
        if (p->windows_kind == TW_PW_LIST) {
            json_t *a = json_array();
            for (size_t i = 0; a && i < p->windows.n; i++) {
                struct tw_windows one = {.n = 1};
                one.w[0] = p->windows.w[i];
                char t[32];
                if (!tw_windows_format(&one, t, sizeof(t)) ||
                    json_array_append_new(a, json_string(t)) != 0) {
                    json_decref(a);
                    a = NULL;
                }
            }
            ok = ok && put(o, "windows", a);
        } else if (p->windows_kind == TW_PW_TAG) {
            char t[sizeof(p->windows_tag) + 8];
            snprintf(t, sizeof(t), "tag:%s", p->windows_tag);
            ok = ok && put(o, "windows", json_string(t));
        } else {
            ok = ok && put(o, "windows", json_string("observed")) &&
                 put(o, "observed",
                     int_pair("weeks", p->observed_weeks, "min_weeks", p->observed_min_weeks));
        }
    }
    char money[TW_MONEY_TEXT_MAX];
    ok = ok && put(o, "timezone", json_string(p->timezone)) &&
         put(o, "margins", int_pair("after_deallocate_minutes", p->after_deallocate_minutes,
                                    "before_start_minutes", p->before_start_minutes)) &&
         put(o, "min_saving", json_string(tw_money_text(p->min_saving, money, sizeof(money)))) &&
         put(o, "quota", int_pair("changes", p->quota_changes, "hours", p->quota_hours)) &&
         put(o, "os_disks", json_boolean(p->os_disks)) &&
         put(o, "os_disk_to_hdd", json_boolean(p->os_disk_to_hdd)) &&
         put(o, "require_original_before_start", json_boolean(p->require_original_before_start)) &&
         put(o, "allow_running", json_boolean(p->allow_running));
    if (p->allow_running)
        ok = ok && put(o, "running_io", int_pair("iops", p->running_io.ios_per_hour / 3600,
                                                 "io_kib", p->running_io.io_bytes / 1024));
    json_t *ra = json_array();
    for (size_t i = 0; ra && i < p->reservations.n; i++) {
        const struct tw_reservation *r = &p->reservations.v[i];
        json_t *e = json_object();
        if (!e || !put(e, "region", json_string(r->region)) ||
            !put(e, "tier", json_string(r->tier)) ||
            !put(e, "redundancy", json_string(tw_sku_redundancy_name(r->redundancy))) ||
            !put(e, "count", json_integer(r->count)) || json_array_append_new(ra, e) != 0) {
            json_decref(ra);
            ra = NULL;
        }
    }
    ok = ok && put(o, "reservations", ra);
    char *s = ok ? json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
    json_decref(o);
    json_decref(m);
    json_decref(ex);
    return s;
}

/* ---- coverage --------------------------------------------------------- */

static bool in_names(const struct tw_policy_names *l, const char *v)
{
    for (size_t i = 0; i < l->n; i++)
        if (v && strcasecmp(l->v[i], v) == 0)
            return true;
    return false;
}

/* The subject's tag named KEY (Azure tag names ignore case), or NULL. */
static const struct tw_tag *tag_of(const struct tw_policy_subject *s, const char *key)
{
    return tw_tag_find(s->tags, s->n_tags, key);
}

static bool tag_matches(const struct tw_policy_subject *s, const struct tw_tag *want)
{
    const struct tw_tag *t = tag_of(s, want->key);
    return t && (strcmp(want->value, "*") == 0 || strcmp(t->value, want->value) == 0);
}

enum tw_policy_cover tw_policy_covers(const struct tw_policy *p,
                                      const struct tw_policy_subject *s, char *why,
                                      size_t why_cap)
{
    if (why && why_cap)
        why[0] = '\0';
    const struct tw_policy_match *m = &p->match;
    for (size_t i = 0; i < m->tags.n; i++)
        if (!tag_matches(s, &m->tags.v[i]))
            return TW_COVER_NO;
    if (m->skus.n) {
        struct tw_sku k;
        if (!s->sku || !tw_sku_parse(s->sku, &k) ||
            !in_names(&m->skus, tw_sku_name(k.family, k.redundancy)))
            return TW_COVER_NO;
    }
    if ((m->resource_groups.n && !in_names(&m->resource_groups, s->resource_group)) ||
        (m->subscriptions.n && !in_names(&m->subscriptions, s->subscription_id)) ||
        (m->vms.n && !in_names(&m->vms, s->vm_name)))
        return TW_COVER_NO;
    if (in_names(&m->ex_vms, s->vm_name)) {
        if (why)
            snprintf(why, why_cap, "excluded by exclude.vms %s", s->vm_name);
        return TW_COVER_EXCLUDED;
    }
    if (in_names(&m->ex_resource_groups, s->resource_group)) {
        if (why)
            snprintf(why, why_cap, "excluded by exclude.resource_groups %s", s->resource_group);
        return TW_COVER_EXCLUDED;
    }
    for (size_t i = 0; i < m->ex_tags.n; i++)
        if (tag_matches(s, &m->ex_tags.v[i])) {
            if (why)
                snprintf(why, why_cap, "excluded by exclude.tags %.100s=%.100s",
                         m->ex_tags.v[i].key, tag_of(s, m->ex_tags.v[i].key)->value);
            return TW_COVER_EXCLUDED;
        }
    if (s->role == TW_DISK_OS && !p->os_disks) {
        if (why)
            snprintf(why, why_cap, "an OS disk: the policy has \"os_disks\": false");
        return TW_COVER_EXCLUDED;
    }
    return TW_COVER_YES;
}
