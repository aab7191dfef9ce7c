/*
 * result.c - the bench result record and its JSON form.
 *
 * Writing builds a jansson tree with the _new setters, so one json_decref of
 * the root frees everything even when a setter fails half way.  Reading
 * checks each required key's presence and type and names the key that is
 * wrong, so a hand-edited or foreign file gets a message a person can act on.
 */
#include "core/result.h"
#include "core/jsonread.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double tw_result_std_pct[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                    80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
const size_t tw_result_std_pct_count =
    sizeof(tw_result_std_pct) / sizeof(tw_result_std_pct[0]);

static const char *const pattern_names[] = {
    [TW_PAT_RANDREAD] = "randread", [TW_PAT_RANDWRITE] = "randwrite",
    [TW_PAT_RANDRW] = "randrw",     [TW_PAT_READ] = "read",
    [TW_PAT_WRITE] = "write",       [TW_PAT_RW] = "rw",
};

static const char *const source_names[] = {
    [TW_SRC_TIERWISE] = "tierwise",
    [TW_SRC_FIO_JSON] = "fio-json",
    [TW_SRC_FIO_TEXT] = "fio-text",
};

static const char *const basis_names[] = {
    [TW_DIRECT_BY_ENGINE] = "tierwise engine",
    [TW_DIRECT_BY_FIO_JSON] = "fio JSON job options",
    [TW_DIRECT_BY_JOB_FILE] = "job file",
    [TW_DIRECT_BY_FIO_ARGS] = "fio arguments",
    [TW_DIRECT_BY_DISK_DEPTH] = "libaio depth at the disk in the text",
    [TW_DIRECT_BY_NONE] = "unknown",
};
#define N_BASIS (sizeof(basis_names) / sizeof(basis_names[0]))

static const char *const lat_kind_names[] = {
    [TW_LAT_TOTAL] = "total",
    [TW_LAT_COMPLETION] = "completion",
};

static const char *const kind_names[] = {
    [TW_TARGET_FILE] = "file",
    [TW_TARGET_BLOCK] = "block",
    [TW_TARGET_UNKNOWN] = "unknown",
};

void tw_result_init(struct tw_result *r)
{
    memset(r, 0, sizeof(*r));
    r->target.size_bytes = -1;
    r->target.kind = TW_TARGET_UNKNOWN;
    r->method.jobs = 1;
    r->method.queue_depth = 1;
    r->method.effective_queue_depth = 1;
    r->method.read_pct = 100;
}

const char *tw_pattern_name(enum tw_pattern p)
{
    if ((unsigned)p < sizeof(pattern_names) / sizeof(pattern_names[0]))
        return pattern_names[p];
    return "unknown";
}

enum tw_err tw_pattern_parse(const char *s, enum tw_pattern *out)
{
    for (size_t i = 0; i < sizeof(pattern_names) / sizeof(pattern_names[0]);
         i++) {
        if (strcmp(s, pattern_names[i]) == 0) {
            *out = (enum tw_pattern)i;
            return TW_OK;
        }
    }
    return TW_EINVAL;
}

bool tw_pattern_is_random(enum tw_pattern p)
{
    return p == TW_PAT_RANDREAD || p == TW_PAT_RANDWRITE || p == TW_PAT_RANDRW;
}

bool tw_pattern_reads(enum tw_pattern p)
{
    return p != TW_PAT_RANDWRITE && p != TW_PAT_WRITE;
}

bool tw_pattern_writes(enum tw_pattern p)
{
    return p != TW_PAT_RANDREAD && p != TW_PAT_READ;
}

const char *tw_source_name(enum tw_source s)
{
    if ((unsigned)s < sizeof(source_names) / sizeof(source_names[0]))
        return source_names[s];
    return "unknown";
}

const char *tw_direct_basis_name(enum tw_direct_basis b)
{
    if ((unsigned)b < N_BASIS)
        return basis_names[b];
    return "unknown";
}

const char *tw_lat_kind_name(enum tw_lat_kind k)
{
    if (k == TW_LAT_TOTAL || k == TW_LAT_COMPLETION)
        return lat_kind_names[k];
    return NULL;
}

void tw_lat_add_pct(struct tw_lat *lat, double pct, double ns)
{
    if (lat->n_pct >= TW_RESULT_MAX_PCT)
        return;
    size_t i = lat->n_pct;
    while (i > 0 && lat->pct[i - 1].pct > pct) {
        lat->pct[i] = lat->pct[i - 1];
        i--;
    }
    lat->pct[i].pct = pct;
    lat->pct[i].ns = ns;
    lat->n_pct++;
}

char *tw_pct_key(double pct, char *out, size_t outlen)
{
    /* Shortest form that reads back exactly: p1, p99.9, p99.95. */
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%.6f", pct);
    char *e = tmp + strlen(tmp) - 1;
    while (*e == '0')
        *e-- = '\0';
    if (*e == '.')
        *e = '\0';
    snprintf(out, outlen, "p%s", tmp);
    return out;
}

/* ---- writing ---- */

static json_t *str_or_null(const char *s)
{
    return s[0] ? json_string(s) : json_null();
}

static json_t *dir_to_value(const struct tw_dir *d)
{
    if (!d->present)
        return json_null();
    json_t *o = json_object();
    json_t *lat = json_object();
    json_t *pct = json_object();
    if (!o || !lat || !pct) {
        json_decref(o);
        json_decref(lat);
        json_decref(pct);
        return NULL;
    }
    json_object_set_new(o, "ios", json_integer(d->ios));
    json_object_set_new(o, "bytes", json_integer(d->bytes));
    json_object_set_new(o, "iops", json_real(d->iops));
    json_object_set_new(o, "bw_bytes_per_s", json_real(d->bw_bytes_per_s));
    json_object_set_new(o, "mbps", json_real(d->mbps));
    json_object_set_new(lat, "min", json_real(d->lat.min_ns));
    json_object_set_new(lat, "max", json_real(d->lat.max_ns));
    json_object_set_new(lat, "mean", json_real(d->lat.mean_ns));
    json_object_set_new(lat, "stdev", json_real(d->lat.stdev_ns));
    const char *lk = tw_lat_kind_name(d->lat.kind), *pk = tw_lat_kind_name(d->lat.pct_kind);
    json_object_set_new(lat, "kind", lk ? json_string(lk) : json_null());
    json_object_set_new(lat, "percentiles_kind", pk ? json_string(pk) : json_null());
    for (size_t i = 0; i < d->lat.n_pct; i++) {
        char key[32];
        tw_pct_key(d->lat.pct[i].pct, key, sizeof(key));
        json_object_set_new(pct, key, json_real(d->lat.pct[i].ns));
    }
    json_object_set_new(lat, "percentiles", pct);
    json_object_set_new(o, "lat_ns", lat);
    if (d->iops_per_s.present) {
        json_object_set_new(o, "iops_per_s",
                            json_pack("{s:f,s:f,s:f,s:f,s:I}", "min",
                                      d->iops_per_s.min, "mean",
                                      d->iops_per_s.mean, "max",
                                      d->iops_per_s.max, "stdev",
                                      d->iops_per_s.stdev, "samples",
                                      (json_int_t)d->iops_per_s.samples));
    }
    return o;
}

json_t *tw_result_to_value(const struct tw_result *r)
{
    json_t *root = json_object();
    json_t *target = json_object();
    json_t *members = json_array();
    json_t *method = json_object();
    if (!root || !target || !members || !method) {
        json_decref(root);
        json_decref(target);
        json_decref(members);
        json_decref(method);
        return NULL;
    }
    json_object_set_new(root, "schema_version", json_string(TW_RESULT_SCHEMA));
    json_object_set_new(root, "id", json_string(r->id));
    json_object_set_new(root, "started_at", json_string(r->started_at));
    json_object_set_new(root, "source", json_string(tw_source_name(r->source)));
    json_object_set_new(root, "tool_version", json_string(r->tool_version));
    json_object_set_new(root, "profile", str_or_null(r->profile));

    json_object_set_new(target, "path", json_string(r->target.path));
    json_object_set_new(target, "kind", json_string(kind_names[r->target.kind]));
    if (r->target.size_bytes >= 0)
        json_object_set_new(target, "size_bytes",
                            json_integer(r->target.size_bytes));
    json_object_set_new(target, "device", str_or_null(r->target.device));
    for (size_t i = 0; i < r->target.n_members; i++)
        json_array_append_new(members, json_string(r->target.members[i]));
    json_object_set_new(target, "members", members);
    json_object_set_new(root, "target", target);

    json_object_set_new(method, "engine", json_string(r->method.engine));
    /* Unknown is null, and its basis then can only be "unknown". */
    bool unknown = r->method.direct != TW_DIRECT_NO && r->method.direct != TW_DIRECT_YES;
    json_object_set_new(method, "direct",
                        unknown ? json_null() : json_boolean(r->method.direct == TW_DIRECT_YES));
    json_object_set_new(method, "direct_basis",
                        json_string(tw_direct_basis_name(unknown ? TW_DIRECT_BY_NONE
                                                                 : r->method.direct_basis)));
    json_object_set_new(method, "pattern",
                        json_string(tw_pattern_name(r->method.pattern)));
    json_object_set_new(method, "block_size_bytes",
                        json_integer(r->method.block_size_bytes));
    json_object_set_new(method, "queue_depth",
                        json_integer(r->method.queue_depth));
    json_object_set_new(method, "effective_queue_depth",
                        json_integer(r->method.effective_queue_depth));
    json_object_set_new(method, "jobs", json_integer(r->method.jobs));
    json_object_set_new(method, "read_pct", json_integer(r->method.read_pct));
    json_object_set_new(method, "runtime_ms", json_integer(r->method.runtime_ms));
    json_object_set_new(method, "ramp_ms", json_integer(r->method.ramp_ms));
    json_object_set_new(root, "method", method);

    json_object_set_new(root, "read", dir_to_value(&r->read));
    json_object_set_new(root, "write", dir_to_value(&r->write));
    json_object_set_new(root, "cpu", json_pack("{s:f,s:f}", "usr_s", r->cpu.usr_s,
                                               "sys_s", r->cpu.sys_s));
    json_object_set_new(root, "errors",
                        json_pack("{s:I,s:o}", "count", (json_int_t)r->errors.count,
                                  "first", str_or_null(r->errors.first)));
    /* A setter that failed for lack of memory leaves a key out: detect it. */
    if (json_object_size(root) != 12 || !json_is_object(json_object_get(root, "cpu")) ||
        !json_is_object(json_object_get(root, "errors"))) {
        json_decref(root);
        return NULL;
    }
    return root;
}

char *tw_result_to_json(const struct tw_result *r, size_t flags)
{
    json_t *v = tw_result_to_value(r);
    if (!v)
        return NULL;
    char *s = json_dumps(v, flags | JSON_REAL_PRECISION(17));
    json_decref(v);
    return s;
}

/* ---- reading: one pass over the document (core/jsonread) ----
 *
 * Each required key's presence and type is checked as the members come,
 * and the message names the field from the document's root, so a
 * hand-edited or foreign file gets a message a person can act on.  PATH
 * names the object being read ("results[2].method", "method"). */

static bool parse_pct_key(const char *key, double *pct)
{
    if (key[0] != 'p' || !key[1])
        return false;
    char *end;
    *pct = strtod(key + 1, &end);
    return *end == '\0' && *pct > 0 && *pct <= 100;
}

static bool is_num_start(char c)
{
    return c == '-' || (c >= '0' && c <= '9');
}

/* A string member; anything else is skipped (optional text fields). */
static bool rd_copy_if_string(struct tw_jr *r, const char *path, const char *key, char *dst,
                              size_t cap)
{
    if (tw_jr_peek(r) != '"')
        return tw_jr_skip(r);
    return tw_jr_get_str(r, path, key, 0, dst, cap);
}

static bool rd_copy(struct tw_jr *r, const char *path, const char *key, char *dst, size_t cap)
{
    return tw_jr_get_str(r, path, key, 0, dst, cap);
}

static bool rd_int(struct tw_jr *r, const char *path, const char *key, int64_t lo, int64_t hi,
                   int64_t *out)
{
    return tw_jr_get_int(r, path, key, lo, hi, 0, out);
}

static bool rd_num(struct tw_jr *r, const char *path, const char *key, double *out)
{
    return tw_jr_get_num(r, path, key, 0, INFINITY, out);
}

static bool need_object(struct tw_jr *r, const char *path, const char *key)
{
    return tw_jr_want(r, path, key, '{');
}

static bool need_all(struct tw_jr *r, const char *path, unsigned seen,
                     const char *const *names, int n)
{
    return tw_jr_need_all(r, path, seen, names, n);
}

static int key_index(const char *key, const char *const *names, int n)
{
    return tw_jr_key_index(key, names, n);
}

static bool pct_read(struct tw_jr *r, const char *path, struct tw_lat *lat)
{
    struct tw_jr_obj o = {0};
    char key[32];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        char *whole = NULL;
        const char *k = key;
        if (o.key_over) {
            if (!(whole = tw_jr_key_dup(r, &o)))
                return tw_jr_fail(r, TW_ENOMEM, "out of memory reading a percentile key");
            k = whole;
        }
        double p = 0;
        bool good = parse_pct_key(k, &p) && is_num_start(tw_jr_peek(r));
        struct tw_jr_num n = {.d = -1};
        if (good && !tw_jr_number(r, &n)) {
            free(whole);
            return false;
        }
        if (!good || n.d < 0) {
            tw_jr_fail(r, TW_EPARSE, "%s.percentiles.%s: want a key like p99.9 and a number >= 0",
                       path, k);
            free(whole);
            return false;
        }
        free(whole);
        tw_lat_add_pct(lat, p, n.d);
    }
    return r->rc == TW_OK;
}

/* "total", "completion" or null into *K; KEY of PATH. */
static bool lat_kind_read(struct tw_jr *r, const char *path, const char *key,
                          enum tw_lat_kind *k)
{
    char word[16];
    if (tw_jr_null(r)) {
        *k = TW_LAT_UNKNOWN;
        return true;
    }
    if (!tw_jr_get_str(r, path, key, 0, word, sizeof(word)))
        return false;
    int i = key_index(word, lat_kind_names, 2);
    if (i < 0)
        return tw_jr_fail(r, TW_EPARSE, "%s.%s \"%s\" is not total, completion or null", path,
                          key, word);
    *k = (enum tw_lat_kind)i;
    return true;
}

/* Records before the kinds were written leave them out: *KINDS gets a
 * bit for each that was there (1 kind, 2 percentiles_kind). */
static bool lat_read(struct tw_jr *r, const char *path, struct tw_lat *lat, unsigned *kinds)
{
    static const char *const names[] = {"min",  "max",  "mean",
                                        "stdev", "percentiles", "kind", "percentiles_kind"};
    double *dst[] = {&lat->min_ns, &lat->max_ns, &lat->mean_ns, &lat->stdev_ns};
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    char key[24];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 7);
        bool ok;
        if (f < 0)
            ok = tw_jr_skip(r);
        else if (f < 4)
            ok = rd_num(r, path, key, dst[f]);
        else if (f == 5)
            ok = lat_kind_read(r, path, key, &lat->kind);
        else if (f == 6)
            ok = lat_kind_read(r, path, key, &lat->pct_kind);
        else
            ok = need_object(r, path, key) && pct_read(r, path, lat);
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    *kinds = (seen >> 5) & 3u;
    return need_all(r, path, seen, names, 5);
}

static bool series_read(struct tw_jr *r, const char *path, struct tw_iops_series *s)
{
    static const char *const names[] = {"min", "mean", "max", "stdev", "samples"};
    double *dst[] = {&s->min, &s->mean, &s->max, &s->stdev};
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    char key[16];
    s->present = true;
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 5);
        bool ok;
        if (f < 0)
            ok = tw_jr_skip(r);
        else if (f < 4)
            ok = rd_num(r, path, key, dst[f]);
        else
            ok = rd_int(r, path, key, 0, INT64_MAX, &s->samples);
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    return need_all(r, path, seen, names, 5);
}

/* NAME: ".read" or ".write". */
static bool dir_read(struct tw_jr *r, const char *where, const char *name, struct tw_dir *d,
                     unsigned *kinds)
{
    static const char *const names[] = {"ios",    "bytes",  "iops",      "bw_bytes_per_s",
                                        "mbps",   "lat_ns", "iops_per_s"};
    char path[64], sub[80];
    tw_jr_path(path, sizeof(path), where, name);
    if (tw_jr_null(r))
        return true;
    if (tw_jr_peek(r) != '{')
        return tw_jr_fail(r, TW_EPARSE, "%s must be an object or null", path);
    d->present = true;
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    char key[16];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 7);
        bool ok;
        switch (f) {
        case 0: ok = rd_int(r, path, key, 0, INT64_MAX, &d->ios); break;
        case 1: ok = rd_int(r, path, key, 0, INT64_MAX, &d->bytes); break;
        case 2: ok = rd_num(r, path, key, &d->iops); break;
        case 3: ok = rd_num(r, path, key, &d->bw_bytes_per_s); break;
        case 4: ok = rd_num(r, path, key, &d->mbps); break;
        case 5:
            tw_jr_path(sub, sizeof(sub), path, ".lat_ns");
            ok = need_object(r, path, key) && lat_read(r, sub, &d->lat, kinds);
            break;
        case 6:
            /* Anything but an object means no per-second figures. */
            if (tw_jr_peek(r) != '{') {
                ok = tw_jr_skip(r);
                break;
            }
            tw_jr_path(sub, sizeof(sub), path, ".iops_per_s");
            ok = series_read(r, sub, &d->iops_per_s);
            break;
        default: ok = tw_jr_skip(r); break;
        }
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    return need_all(r, path, seen, names, 6);
}

static bool members_read(struct tw_jr *r, const char *path, struct tw_result *res)
{
    if (tw_jr_peek(r) != '[')
        return tw_jr_fail(r, TW_EPARSE, "%s.members must be an array", path);
    struct tw_jr_arr a = {0};
    while (tw_jr_element(r, &a)) {
        size_t k = res->target.n_members;
        if (k >= TW_RESULT_MAX_MEMBERS)
            return tw_jr_fail(r, TW_EPARSE, "%s.members has more than %d entries", path,
                              TW_RESULT_MAX_MEMBERS);
        char key[32];
        snprintf(key, sizeof(key), "members[%zu]", k);
        if (!tw_jr_get_str(r, path, key, 0, res->target.members[k],
                           sizeof(res->target.members[k])))
            return false;
        res->target.n_members++;
    }
    return r->rc == TW_OK;
}

static bool target_read(struct tw_jr *r, const char *where, struct tw_result *res)
{
    static const char *const names[] = {"path", "kind", "size_bytes", "device", "members"};
    char path[48], key[16], kind[32];
    tw_jr_path(path, sizeof(path), where, ".target");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 5);
        bool ok;
        switch (f) {
        case 0: ok = rd_copy(r, path, key, res->target.path, sizeof(res->target.path)); break;
        case 1: {
            ok = tw_jr_get_str(r, path, key, 0, kind, sizeof(kind));
            int k = key_index(kind, kind_names, 3);
            if (ok && k < 0)
                ok = tw_jr_fail(r, TW_EPARSE, "%s.kind \"%s\" is not file, block or unknown",
                                path, kind);
            if (ok)
                res->target.kind = (enum tw_target_kind)k;
            break;
        }
        case 2: ok = rd_int(r, path, key, 0, INT64_MAX, &res->target.size_bytes); break;
        case 3:
            ok = rd_copy_if_string(r, path, key, res->target.device, sizeof(res->target.device));
            break;
        case 4: ok = members_read(r, path, res); break;
        default: ok = tw_jr_skip(r); break;
        }
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    return need_all(r, path, seen, names, 2);
}

/* "direct": true, false or null (unknown). */
static bool direct_read(struct tw_jr *r, const char *path, const char *key, enum tw_direct *d)
{
    if (tw_jr_null(r)) {
        *d = TW_DIRECT_UNKNOWN;
        return true;
    }
    bool b = false;
    if (!tw_jr_get_bool(r, path, key, &b))
        return false;
    *d = b ? TW_DIRECT_YES : TW_DIRECT_NO;
    return true;
}

static bool basis_read(struct tw_jr *r, const char *path, const char *key,
                       enum tw_direct_basis *b)
{
    char word[48];
    if (!tw_jr_get_str(r, path, key, 0, word, sizeof(word)))
        return false;
    int i = key_index(word, basis_names, (int)N_BASIS);
    if (i < 0)
        return tw_jr_fail(r, TW_EPARSE,
                          "%s.%s \"%s\" is not one of \"tierwise engine\", \"fio JSON job "
                          "options\", \"job file\", \"fio arguments\", \"libaio depth at the "
                          "disk in the text\", \"unknown\"",
                          path, key, word);
    *b = (enum tw_direct_basis)i;
    return true;
}

/* *HAVE_BASIS: whether the record gave direct_basis (older ones don't). */
static bool method_read(struct tw_jr *r, const char *where, struct tw_method *m,
                        bool *have_basis)
{
    static const char *const names[] = {"engine",   "direct",      "pattern",
                                        "block_size_bytes", "queue_depth",
                                        "effective_queue_depth", "jobs", "read_pct",
                                        "runtime_ms", "ramp_ms", "direct_basis"};
    char path[48], key[32], pat[16];
    tw_jr_path(path, sizeof(path), where, ".method");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 11);
        int64_t i = 0;
        bool ok;
        switch (f) {
        case 0: ok = rd_copy(r, path, key, m->engine, sizeof(m->engine)); break;
        case 1: ok = direct_read(r, path, key, &m->direct); break;
        case 10: ok = basis_read(r, path, key, &m->direct_basis); break;
        case 2:
            ok = tw_jr_get_str(r, path, key, 0, pat, sizeof(pat));
            if (ok && tw_pattern_parse(pat, &m->pattern) != TW_OK)
                ok = tw_jr_fail(r, TW_EPARSE,
                                "%s.pattern \"%s\" is not one of randread, randwrite, randrw, "
                                "read, write, rw",
                                path, pat);
            break;
        case 3: ok = rd_int(r, path, key, 1, INT64_MAX, &m->block_size_bytes); break;
        case 4:
            ok = rd_int(r, path, key, 1, 1 << 20, &i);
            m->queue_depth = (int)i;
            break;
        case 5:
            ok = rd_int(r, path, key, 1, 1 << 20, &i);
            m->effective_queue_depth = (int)i;
            break;
        case 6:
            ok = rd_int(r, path, key, 1, 1 << 16, &i);
            m->jobs = (int)i;
            break;
        case 7:
            ok = rd_int(r, path, key, 0, 100, &i);
            m->read_pct = (int)i;
            break;
        case 8: ok = rd_int(r, path, key, 0, INT64_MAX, &m->runtime_ms); break;
        case 9: ok = rd_int(r, path, key, 0, INT64_MAX, &m->ramp_ms); break;
        default: ok = tw_jr_skip(r); break;
        }
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    *have_basis = (seen >> 10) & 1u;
    return need_all(r, path, seen, names, 10);
}

/*
 * What a record written before direct_basis and the latency kinds meant.
 * tierwise's engine opens its target with O_DIRECT itself and times from
 * submission to completion.  fio's JSON showed direct in its job options;
 * fio's text never did, so the old importer's `false` there said nothing
 * and is read as unknown.  Old fio imports don't say which latency they
 * hold.
 */
static void old_record(struct tw_result *res, bool have_basis, const unsigned kinds[2])
{
    struct tw_method *m = &res->method;
    if (!have_basis) {
        if (m->direct == TW_DIRECT_UNKNOWN)
            m->direct_basis = TW_DIRECT_BY_NONE;
        else if (res->source == TW_SRC_TIERWISE)
            m->direct_basis = TW_DIRECT_BY_ENGINE;
        else if (res->source == TW_SRC_FIO_JSON)
            m->direct_basis = TW_DIRECT_BY_FIO_JSON;
        else {
            m->direct = TW_DIRECT_UNKNOWN;
            m->direct_basis = TW_DIRECT_BY_NONE;
        }
    }
    if (m->direct == TW_DIRECT_UNKNOWN)
        m->direct_basis = TW_DIRECT_BY_NONE;
    struct tw_lat *lat[2] = {&res->read.lat, &res->write.lat};
    enum tw_lat_kind old = res->source == TW_SRC_TIERWISE ? TW_LAT_TOTAL : TW_LAT_UNKNOWN;
    for (int i = 0; i < 2; i++) {
        if (!(kinds[i] & 1u))
            lat[i]->kind = old;
        if (!(kinds[i] & 2u))
            lat[i]->pct_kind = old;
    }
}

/* Reads the two numbers of "cpu". */
static bool cpu_read(struct tw_jr *r, const char *where, struct tw_result *res)
{
    static const char *const names[] = {"usr_s", "sys_s"};
    double *dst[] = {&res->cpu.usr_s, &res->cpu.sys_s};
    char path[48], key[16];
    tw_jr_path(path, sizeof(path), where, ".cpu");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, 2);
        if (!(f < 0 ? tw_jr_skip(r) : rd_num(r, path, key, dst[f])))
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    return need_all(r, path, seen, names, 2);
}

static bool errors_read(struct tw_jr *r, const char *where, struct tw_result *res)
{
    char path[48], key[16];
    tw_jr_path(path, sizeof(path), where, ".errors");
    bool have_count = false;
    struct tw_jr_obj o = {0};
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "count") == 0) {
            have_count = true;
            ok = rd_int(r, path, key, 0, INT64_MAX, &res->errors.count);
        } else if (strcmp(key, "first") == 0) {
            ok = rd_copy_if_string(r, path, key, res->errors.first, sizeof(res->errors.first));
        } else {
            ok = tw_jr_skip(r);
        }
        if (!ok)
            return false;
    }
    static const char *const names[] = {"count"};
    return need_all(r, path, have_count ? 1 : 0, names, 1);
}

enum {
    R_SCHEMA, R_ID, R_STARTED, R_SOURCE, R_TARGET, R_METHOD, R_CPU, R_ERRORS,
    R_TOOL, R_PROFILE, R_READ, R_WRITE, R_COUNT
};

bool tw_result_read(struct tw_jr *r, struct tw_result *res, const char *root)
{
    static const char *const names[R_COUNT] = {
        "schema_version", "id",     "started_at",   "source",  "target", "method",
        "cpu",            "errors", "tool_version", "profile", "read",   "write"};
    const char *where = root;
    tw_result_init(res);
    if (tw_jr_peek(r) != '{')
        return where[0] ? tw_jr_fail(r, TW_EPARSE, "%s: a bench result must be a JSON object",
                                     where)
                        : tw_jr_fail(r, TW_EPARSE, "a bench result must be a JSON object");
    unsigned seen = 0, kinds[2] = {0, 0};
    bool have_basis = false;
    struct tw_jr_obj o = {0};
    char key[32], word[32], field[64];
    while (tw_jr_member(r, &o, key, sizeof(key))) {
        int f = key_index(key, names, R_COUNT);
        bool ok;
        switch (f) {
        case R_SCHEMA:
            ok = tw_jr_get_str(r, where, key, 0, word, sizeof(word));
            if (ok && strcmp(word, TW_RESULT_SCHEMA) != 0)
                ok = tw_jr_fail(r, TW_EPARSE, "%s is \"%s\"; this tierwise reads \"%s\"",
                                tw_jr_field(field, sizeof(field), where, key), word, TW_RESULT_SCHEMA);
            break;
        case R_ID: ok = rd_copy(r, where, key, res->id, sizeof(res->id)); break;
        case R_STARTED:
            ok = rd_copy(r, where, key, res->started_at, sizeof(res->started_at));
            break;
        case R_SOURCE: {
            ok = tw_jr_get_str(r, where, key, 0, word, sizeof(word));
            int k = key_index(word, source_names, 3);
            if (ok && k < 0)
                ok = tw_jr_fail(r, TW_EPARSE, "%s \"%s\" is not tierwise, fio-json or fio-text",
                                tw_jr_field(field, sizeof(field), where, key), word);
            if (ok)
                res->source = (enum tw_source)k;
            break;
        }
        case R_TARGET: ok = need_object(r, where, key) && target_read(r, where, res); break;
        case R_METHOD:
            ok = need_object(r, where, key) && method_read(r, where, &res->method, &have_basis);
            break;
        case R_CPU: ok = need_object(r, where, key) && cpu_read(r, where, res); break;
        case R_ERRORS: ok = need_object(r, where, key) && errors_read(r, where, res); break;
        case R_TOOL:
            ok = rd_copy_if_string(r, where, key, res->tool_version, sizeof(res->tool_version));
            break;
        case R_PROFILE:
            ok = rd_copy_if_string(r, where, key, res->profile, sizeof(res->profile));
            break;
        case R_READ: ok = dir_read(r, where, ".read", &res->read, &kinds[0]); break;
        case R_WRITE: ok = dir_read(r, where, ".write", &res->write, &kinds[1]); break;
        default: ok = tw_jr_skip(r); break;
        }
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    if (!need_all(r, where, seen, names, R_TOOL))
        return false;
    old_record(res, have_basis, kinds);
    return true;
}

static bool result_doc(struct tw_jr *r, void *arg)
{
    char c = tw_jr_peek(r);
    if (c != '{' && c != '[' && c) /* a bare value is no document, as to jansson */
        return tw_jr_syntax(r, "a bench result must be a JSON object");
    return tw_result_read(r, arg, "");
}

enum tw_err tw_result_from_json(const char *buf, size_t len, struct tw_result *r,
                                struct tw_error *err)
{
    enum tw_err rc = tw_jr_read_doc(buf, len, NULL, TW_JR_MAX_DEPTH, result_doc, r, err);
    if (rc != TW_OK)
        tw_result_init(r);
    return rc;
}
