/*
 * fio_import.c - fio's JSON output into a result record; format detection.
 *
 * The meaning of fio's figures lives here once: the text importer
 * (fio_text.c) translates the normal output into the same JSON shape and
 * imports it through tw_fio_import_json, so both formats are judged by one
 * set of rules (which percentiles, how jobs add up, what counts as the
 * runtime).
 *
 * fio quirks handled (fio 3.x, checked against fio-3.33 and fio's stat.c):
 *  - diagnostic lines ("fio: ...", "note: ...") may precede the '{', and
 *    text may follow the document, so parsing starts at the first line
 *    that begins with '{' and stops at the end of the document;
 *  - "job options" hold the user's strings ("8k", "32"); options given
 *    before the first job are under "global options";
 *  - sizes follow fio's default kb_base=1024 compatibility mode, where "8k"
 *    and "8KB" are 8192 bytes but "8KiB" is 8000 (fio-3.33 prints
 *    "bs=(R) 8000B-8000B" for bs=8KiB); kb_base=1000 swaps the two;
 *  - without group_reporting every process is its own entry of "jobs" (the
 *    entries all repeat numjobs); with it, one entry stands for numjobs
 *    processes and its "job_runtime" is the sum of their runtimes;
 *  - percentiles are under clat_ns by default (completion latency, which
 *    leaves out the submission time) and under lat_ns only with
 *    lat_percentiles=1; a latency without samples has "N" : 0 and no list
 *    (fio issue #1478) or, from older versions, a list of zeros: a list is
 *    only taken where N > 0;
 *  - "disk_util" lists the device under the file first; a device-mapper
 *    device carries "aggr_*" fields and its slave devices follow it in the
 *    array (fio's JSON has no nested list; a "slaves" array is accepted
 *    too, should a version add one);
 *  - fio 2.x used "lat"/"clat" in microseconds; those are read as well.
 */
#include "bench/fio_import.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "core/jsonx.h"

#define MAX_JOBS (1 << 16)           /* what a result record can carry */
#define MAX_COUNT 9007199254740992.0 /* 2^53: exact in a double */
#define MAX_NS 1e15                  /* 11 days in ns: no I/O takes longer */

/* One direction summed over the jobs. */
struct dir_acc {
    double ios, bytes, iops, bw, runtime_ms;
    /* latency: count, extremes, mean and m2 = sum of (x - mean)^2 */
    double lat_n, lat_min, lat_max, lat_mean, lat_m2;
    /* percentiles of the job with most I/Os */
    const json_t *pct;
    double pct_n, pct_mult;
    /* per-second IOPS, when any job had samples */
    bool series;
    double s_min, s_max, s_mean, s_var, s_samples;
};

static const char *const dir_names[2] = {"read", "write"};

/* ---- small readers ---- */

/* Copies SRC into DST, cut to fit (names longer than a field are not
 * worth failing an import for). */
static void copy(char *dst, size_t dstlen, const char *src)
{
    size_t n = strnlen(src, dstlen - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/*
 * Drops a UTF-8 sequence cut short at the end of S.  jansson hands out
 * valid UTF-8 and refuses anything else when the record is written, so
 * strings cut to fit a field must not end inside a character.
 */
static void utf8_cut(char *s)
{
    size_t n = strlen(s), i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0 || (unsigned char)s[i - 1] < 0xC0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (n - (i - 1) < want)
        s[i - 1] = '\0';
}

static void utf8_cut_all(struct tw_result *r)
{
    utf8_cut(r->tool_version);
    utf8_cut(r->method.engine);
    utf8_cut(r->target.path);
    utf8_cut(r->target.device);
    for (size_t i = 0; i < r->target.n_members; i++)
        utf8_cut(r->target.members[i]);
    utf8_cut(r->errors.first);
}

/*
 * Reads number KEY of O into *OUT when present (core/jsonx's getter).
 * Returns false with a message when it is there but not a number in
 * [0, hi]; *FOUND (if given) says whether it was there.
 */
static bool get_num(const json_t *o, const char *path, const char *key, double hi, double *out,
                    bool *found, struct tw_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (found)
        *found = v != NULL;
    if (tw_jx_num(v, path, key, 0, hi, 0, out, err))
        return true;
    if (err) {
        /* fio writes these itself: a wrong one means an edited file. */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof(err->msg) - n,
                 ": the file is not a valid fio output; give fio's unedited output");
    }
    return false;
}

/*
 * Looks an option up in the job's options, then the global ones; copies it
 * (fio writes them as strings) into OUT.  Returns false when absent.
 */
static bool get_opt(const json_t *job, const json_t *glob, const char *key, char *out,
                    size_t outlen)
{
    const json_t *v = json_object_get(job, key);
    if (!v)
        v = json_object_get(glob, key);
    if (json_is_string(v))
        snprintf(out, outlen, "%s", json_string_value(v));
    else if (json_is_number(v))
        snprintf(out, outlen, "%.17g", json_number_value(v));
    else if (json_is_boolean(v))
        snprintf(out, outlen, "%d", json_is_true(v) ? 1 : 0);
    else
        return false;
    return true;
}

/*
 * Parses a fio size ("8k", "4096", "1M", "128KiB", "1.5g"); stops at the
 * end or at ',', '-', ':' (fio's separators).  KB1000 is kb_base=1000.
 */
static bool fio_size(const char *s, bool kb1000, double *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!(*s >= '0' && *s <= '9'))
        return false;
    char *end;
    double v = strtod(s, &end);
    if (!isfinite(v) || v < 0)
        return false;
    char unit[8] = "";
    size_t n = 0;
    while (*end && *end != ',' && *end != '-' && *end != ':' && *end != ' ') {
        if (n + 1 >= sizeof(unit))
            return false;
        unit[n++] = *end++;
    }
    unit[n] = '\0';
    static const char prefixes[] = "kmgtp";
    double mult = 1;
    if (n > 0 && strcasecmp(unit, "b") != 0) {
        const char *p = strchr(prefixes, unit[0] | 0x20);
        if (!p || unit[0] == '\0')
            return false;
        bool iec = strcasecmp(unit + 1, "ib") == 0;
        if (!iec && unit[1] && strcasecmp(unit + 1, "b") != 0)
            return false;
        /* fio's compatibility mode: SI letters mean powers of 2 and IEC
         * ones powers of 10; kb_base=1000 means what the letters say. */
        double base = (iec != kb1000) ? 1000 : 1024;
        for (const char *q = prefixes; q <= p; q++)
            mult *= base;
    }
    *out = v * mult;
    return isfinite(*out);
}

/* Parses a fio duration (seconds by default: "10", "10s", "500ms", "2m"). */
static bool fio_time_ms(const char *s, double *out)
{
    if (!(*s >= '0' && *s <= '9'))
        return false;
    char *end;
    double v = strtod(s, &end);
    static const struct {
        const char *name;
        double ms;
    } units[] = {{"", 1000},     {"s", 1000},    {"sec", 1000},   {"ms", 1},
                 {"msec", 1},    {"us", 0.001},  {"usec", 0.001}, {"m", 60000},
                 {"min", 60000}, {"h", 3600000}, {"d", 86400000}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].name) == 0) {
            *out = v * units[i].ms;
            return isfinite(*out) && *out >= 0 && *out < 1e15;
        }
    }
    return false;
}

static bool is_sync_engine(const char *e)
{
    static const char *const sync[] = {"psync", "sync", "pvsync", "pvsync2", "vsync", "mmap"};
    for (size_t i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
        if (strcmp(e, sync[i]) == 0)
            return true;
    return false;
}

/* fio's rw names into ours; trim workloads have no counterpart. */
static enum tw_err parse_rw(const char *rw, enum tw_pattern *p, struct tw_error *err)
{
    char name[32];
    copy(name, sizeof(name), rw);
    name[strcspn(name, ":")] = '\0'; /* "randread:8" adds an offset step */
    if (strcmp(name, "readwrite") == 0)
        snprintf(name, sizeof(name), "rw");
    if (tw_pattern_parse(name, p) == TW_OK)
        return TW_OK;
    if (strstr(name, "trim"))
        return tw_error_set(err, TW_EPARSE,
                            "the job runs rw=%s: trim workloads can't be "
                            "compared with a disk's rating; import a read or "
                            "write job instead",
                            name);
    return tw_error_set(err, TW_EPARSE,
                        "the job's rw=%s is not a fio pattern tierwise knows "
                        "(read, write, randread, randwrite, rw, randrw)",
                        name);
}

/* ---- method and target, from the first job ---- */

static enum tw_err read_method(const json_t *opts, const json_t *glob, struct tw_result *r,
                               struct tw_error *err)
{
    struct tw_method *m = &r->method;
    char v[4096];
    enum tw_err rc;

    /* fio's defaults: rw=read, bs=4k, iodepth=1, ioengine=psync. */
    if (!get_opt(opts, glob, "rw", v, sizeof(v)) && !get_opt(opts, glob, "readwrite", v, sizeof(v)))
        snprintf(v, sizeof(v), "read");
    if ((rc = parse_rw(v, &m->pattern, err)) != TW_OK)
        return rc;

    bool kb1000 = get_opt(opts, glob, "kb_base", v, sizeof(v)) && strcmp(v, "1000") == 0;
    double bs = 4096;
    if (get_opt(opts, glob, "bs", v, sizeof(v)) || get_opt(opts, glob, "blocksize", v, sizeof(v))) {
        /* bs=read,write[,trim]: a write-only job uses the second. */
        const char *s = v;
        const char *comma = strchr(v, ',');
        if (comma && !tw_pattern_reads(m->pattern) && comma[1])
            s = comma + 1;
        if (!fio_size(s, kb1000, &bs) || bs < 1 || bs > (double)(1LL << 40))
            return tw_error_set(err, TW_EPARSE,
                                "the job's bs=%s is not a block size fio "
                                "could have used",
                                v);
    }
    m->block_size_bytes = (int64_t)bs;

    double qd = 1;
    if (get_opt(opts, glob, "iodepth", v, sizeof(v)) &&
        (!fio_size(v, false, &qd) || qd < 1 || qd > (1 << 20) || qd != floor(qd)))
        return tw_error_set(err, TW_EPARSE,
                            "the job's iodepth=%s is not a queue depth "
                            "between 1 and %d",
                            v, 1 << 20);
    m->queue_depth = (int)qd;

    if (!get_opt(opts, glob, "ioengine", v, sizeof(v)) || !v[0])
        snprintf(v, sizeof(v), "psync");
    copy(m->engine, sizeof(m->engine), v);
    /* A sync engine waits for each I/O: whatever iodepth says, one I/O per
     * job is in flight (fio warns and caps it too). */
    m->effective_queue_depth = is_sync_engine(m->engine) ? 1 : m->queue_depth;

    m->direct = false;
    if (get_opt(opts, glob, "direct", v, sizeof(v)))
        m->direct = strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0;
    else if (get_opt(opts, glob, "buffered", v, sizeof(v)))
        m->direct = strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0;

    double pct = -1;
    if (get_opt(opts, glob, "rwmixread", v, sizeof(v)) && fio_size(v, false, &pct) && pct <= 100)
        ;
    else if (get_opt(opts, glob, "rwmixwrite", v, sizeof(v)) && fio_size(v, false, &pct) &&
             pct <= 100)
        pct = 100 - pct;
    else
        pct = 50; /* fio's default mix */
    if (m->pattern == TW_PAT_RW || m->pattern == TW_PAT_RANDRW)
        m->read_pct = (int)floor(pct + 0.5);
    else
        m->read_pct = tw_pattern_reads(m->pattern) ? 100 : 0;

    double ramp = 0;
    if (get_opt(opts, glob, "ramp_time", v, sizeof(v)) && !fio_time_ms(v, &ramp))
        return tw_error_set(err, TW_EPARSE, "the job's ramp_time=%s is not a fio duration", v);
    m->ramp_ms = (int64_t)ramp;

    if (get_opt(opts, glob, "filename", v, sizeof(v)) && v[0]) {
        snprintf(r->target.path, sizeof(r->target.path), "%s", v);
        r->target.kind = strncmp(v, "/dev/", 5) == 0 ? TW_TARGET_BLOCK : TW_TARGET_FILE;
        /* For one file, size= is the file's size; on a device it is only
         * the region used, so the device's size stays unknown. */
        char sz[64];
        double size;
        if (r->target.kind == TW_TARGET_FILE && !strchr(v, ':') &&
            (get_opt(opts, glob, "filesize", sz, sizeof(sz)) ||
             get_opt(opts, glob, "size", sz, sizeof(sz))) &&
            !strchr(sz, '%') && fio_size(sz, kb1000, &size) && size >= 1 && size < MAX_COUNT)
            r->target.size_bytes = (int64_t)size;
    }
    return TW_OK;
}

/* How many processes one "jobs" entry stands for (see the top comment).
 * fio 3.33 leaves group_reporting out of "job options" when it was given
 * on the command line, so a job whose numjobs processes were reported as
 * fewer entries of its name than numjobs was grouped too. */
static int entry_jobs(const json_t *opts, const json_t *glob, size_t same_name)
{
    char v[64];
    double n = 1;
    if (!get_opt(opts, glob, "numjobs", v, sizeof(v)) || !fio_size(v, false, &n) || n < 1 ||
        n > MAX_JOBS)
        return 1;
    bool grouped = get_opt(opts, glob, "group_reporting", v, sizeof(v)) && strcmp(v, "0") != 0;
    if (grouped || (same_name > 0 && same_name < (size_t)n))
        return (int)n / (int)(same_name ? same_name : 1);
    return 1;
}

/* Entries of JOBS whose jobname is NAME. */
static size_t entries_named(const json_t *jobs, const char *name)
{
    size_t k, count = 0;
    const json_t *j;
    json_array_foreach(jobs, k, j) {
        const char *jn = json_string_value(json_object_get(j, "jobname"));
        if (jn && strcmp(jn, name) == 0)
            count++;
    }
    return count;
}

/* ---- figures ---- */

/* Adds one job's direction DIR (an object of fio's JSON) into A. */
static bool dir_add(const json_t *d, const char *path, struct dir_acc *a, struct tw_error *err)
{
    double ios = 0, bytes = 0, iops = 0, bw = 0, bw_kib = 0, runtime = 0;
    bool have_bw;
    if (!json_is_object(d))
        return true; /* fio leaves out directions a job can't do */
    if (!get_num(d, path, "total_ios", MAX_COUNT, &ios, NULL, err) ||
        !get_num(d, path, "io_bytes", MAX_COUNT, &bytes, NULL, err) ||
        !get_num(d, path, "iops", 1e12, &iops, NULL, err) ||
        !get_num(d, path, "bw_bytes", 1e15, &bw, &have_bw, err) ||
        !get_num(d, path, "bw", 1e12, &bw_kib, NULL, err) ||
        !get_num(d, path, "runtime", 1e12, &runtime, NULL, err))
        return false;
    if (ios <= 0)
        return true;
    if (!have_bw) /* fio 2.x: "bw" in KiB/s only */
        bw = bw_kib * 1024;
    a->ios += ios;
    a->bytes += bytes;
    a->iops += iops;
    a->bw += bw;
    a->runtime_ms = fmax(a->runtime_ms, runtime);

    /* Total latency, submission to completion; clat (completion only) when
     * a job has no total; fio 2.x gave microseconds. */
    static const struct {
        const char *key;
        double mult;
    } lat_keys[] = {{"lat_ns", 1}, {"lat", 1000}, {"clat_ns", 1}, {"clat", 1000}};
    char sub[128];
    for (size_t k = 0; k < 4; k++) {
        const json_t *l = json_object_get(d, lat_keys[k].key);
        double n = ios, mn = 0, mx = 0, mean = 0, sd = 0; /* 2.x has no N */
        if (!json_is_object(l))
            continue;
        snprintf(sub, sizeof(sub), "%s%s.", path, lat_keys[k].key);
        if (!get_num(l, sub, "N", MAX_COUNT, &n, NULL, err) ||
            !get_num(l, sub, "min", MAX_NS, &mn, NULL, err) ||
            !get_num(l, sub, "max", MAX_NS, &mx, NULL, err) ||
            !get_num(l, sub, "mean", MAX_NS, &mean, NULL, err) ||
            !get_num(l, sub, "stddev", MAX_NS, &sd, NULL, err))
            return false;
        if (n <= 0)
            continue;
        double mult = lat_keys[k].mult;
        mn *= mult;
        mx *= mult;
        mean *= mult;
        sd *= mult;
        /* Pooled variance, merged job by job (Chan et al.): the sums of
         * squared deviations add, plus the shift between the two means,
         * delta^2 n_a n_b / (n_a + n_b).  fio's stddev divides by n - 1. */
        double tot = a->lat_n + n;
        double delta = mean - a->lat_mean;
        a->lat_min = a->lat_n > 0 ? fmin(a->lat_min, mn) : mn;
        a->lat_max = fmax(a->lat_max, mx);
        a->lat_m2 += (n - 1) * sd * sd + delta * delta * a->lat_n * n / tot;
        a->lat_mean += delta * n / tot;
        a->lat_n = tot;
        break;
    }

    /* Percentiles can't be merged from fio's summary: take those of the
     * job with most I/Os.  Total latency when fio was asked for it, else
     * completion latency (fio's default, without the submission time). */
    static const struct {
        const char *key;
        double mult;
    } pct_keys[] = {{"lat_ns", 1}, {"clat_ns", 1}, {"lat", 1000}, {"clat", 1000}};
    for (size_t k = 0; k < 4; k++) {
        const json_t *l = json_object_get(d, pct_keys[k].key);
        const json_t *p = json_object_get(l, "percentile");
        const json_t *nv = json_object_get(l, "N");
        double n = json_is_number(nv) ? json_number_value(nv) : ios;
        if (!json_is_object(p) || !(n > 0))
            continue;
        if (n > a->pct_n) {
            a->pct = p;
            a->pct_n = n;
            a->pct_mult = pct_keys[k].mult;
        }
        break;
    }

    double s_samples = 0, s_min = 0, s_max = 0, s_mean = 0, s_sd = 0;
    if (!get_num(d, path, "iops_samples", MAX_COUNT, &s_samples, NULL, err) ||
        !get_num(d, path, "iops_min", 1e12, &s_min, NULL, err) ||
        !get_num(d, path, "iops_max", 1e12, &s_max, NULL, err) ||
        !get_num(d, path, "iops_mean", 1e12, &s_mean, NULL, err) ||
        !get_num(d, path, "iops_stddev", 1e12, &s_sd, NULL, err))
        return false;
    if (s_samples > 0) {
        /* Jobs run side by side: per-second IOPS add up.  The sum's mean
         * is the sum of means and, treating jobs as independent, its
         * variance the sum of variances; min and max are bounds. */
        a->series = true;
        a->s_min += s_min;
        a->s_max += s_max;
        a->s_mean += s_mean;
        a->s_var += s_sd * s_sd;
        a->s_samples = fmax(a->s_samples, s_samples);
    }
    return true;
}

static bool dir_finish(const struct dir_acc *a, const char *name, struct tw_dir *d,
                       struct tw_error *err)
{
    memset(d, 0, sizeof(*d));
    if (a->ios <= 0)
        return true;
    if (a->ios > (double)INT64_MAX / 2 || a->bytes > (double)INT64_MAX / 2) {
        tw_error_set(err, TW_EPARSE,
                     "the %s I/O counts add up past what tierwise can hold: "
                     "the file is not a plausible fio output",
                     name);
        return false;
    }
    d->present = true;
    d->ios = (int64_t)a->ios;
    d->bytes = (int64_t)a->bytes;
    d->iops = a->iops;
    d->bw_bytes_per_s = a->bw;
    d->mbps = a->bw / 1e6;
    if (a->lat_n > 0) {
        d->lat.min_ns = a->lat_min;
        d->lat.max_ns = a->lat_max;
        d->lat.mean_ns = a->lat_mean;
        d->lat.stdev_ns = a->lat_n > 1 ? sqrt(fmax(a->lat_m2, 0) / (a->lat_n - 1)) : 0;
    }
    if (a->pct) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)a->pct, k, v)
        {
            char *end;
            double p = strtod(k, &end);
            if (*end || !(p > 0 && p <= 100) || !json_is_number(v))
                continue;
            double ns = json_number_value(v) * a->pct_mult;
            if (isfinite(ns) && ns >= 0 && ns <= MAX_NS)
                tw_lat_add_pct(&d->lat, p, ns);
        }
    }
    if (a->series) {
        d->iops_per_s.present = true;
        d->iops_per_s.min = a->s_min;
        d->iops_per_s.max = a->s_max;
        d->iops_per_s.mean = a->s_mean;
        d->iops_per_s.stdev = sqrt(a->s_var);
        d->iops_per_s.samples = (int64_t)a->s_samples;
    }
    return true;
}

/* ---- target device ---- */

static bool is_stripe_head(const json_t *du)
{
    return json_object_get(du, "aggr_read_ios") || json_object_get(du, "aggr_util") ||
           json_is_array(json_object_get(du, "slaves"));
}

static void add_member(struct tw_result *r, const char *name)
{
    if (!name || !name[0] || r->target.n_members >= TW_RESULT_MAX_MEMBERS)
        return;
    snprintf(r->target.members[r->target.n_members++], sizeof(r->target.members[0]), "%s", name);
}

/*
 * The first disk_util entry is the device under the job's file.  A stripe
 * head (dm, md) is followed by the devices below it; the leaves, which
 * carry no aggr_* fields themselves, are the member disks (an intermediate
 * dm layer, such as dm-crypt over LVM, is skipped).  fio can't tell where
 * one device's slaves end when a job used files on several devices, so
 * everything after the head is taken: jobs over one target are the norm.
 */
static void read_disk_util(const json_t *root, struct tw_result *r)
{
    const json_t *arr = json_object_get(root, "disk_util");
    const json_t *head = json_array_get(arr, 0);
    const char *name = json_string_value(json_object_get(head, "name"));
    if (!name || !name[0])
        return;
    snprintf(r->target.device, sizeof(r->target.device), "%s", name);
    if (!is_stripe_head(head)) {
        add_member(r, name);
        return;
    }
    const json_t *slaves = json_object_get(head, "slaves");
    size_t i;
    const json_t *v;
    if (json_is_array(slaves)) {
        json_array_foreach(slaves, i, v)
        {
            add_member(r, json_is_string(v) ? json_string_value(v)
                                            : json_string_value(json_object_get(v, "name")));
        }
        return;
    }
    json_array_foreach(arr, i, v)
    {
        if (i > 0 && !is_stripe_head(v))
            add_member(r, json_string_value(json_object_get(v, "name")));
    }
}

/* RFC 3339 UTC of END_S - RUNTIME_MS, or "" when END_S is implausible. */
static void set_started_at(struct tw_result *r, double end_s, double runtime_ms)
{
    double start = floor(end_s - runtime_ms / 1000);
    if (!(start > 0 && start < 253402300799.0)) /* up to 9999-12-31 */
        return;
    time_t t = (time_t)start;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(r->started_at, sizeof(r->started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the document ---- */

static enum tw_err import_value(const json_t *root, struct tw_result *r, struct tw_error *err)
{
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE,
                            "the JSON document is not an object, so it is not "
                            "fio's output: give the output of fio "
                            "--output-format=json or fio's normal output");
    const json_t *jobs = json_object_get(root, "jobs");
    if (!jobs) /* fio --client reports its jobs here */
        jobs = json_object_get(root, "client_stats");
    if (!json_is_array(jobs))
        return tw_error_set(err, TW_EPARSE,
                            "the JSON document has no \"jobs\" array, so it "
                            "is not fio's output: give the output of fio "
                            "--output-format=json or fio's normal output");
    const json_t *glob = json_object_get(root, "global options");
    const char *ver = json_string_value(json_object_get(root, "fio version"));
    snprintf(r->tool_version, sizeof(r->tool_version), "%s", ver && ver[0] ? ver : "fio");

    struct dir_acc acc[2];
    memset(acc, 0, sizeof(acc));
    long total_jobs = 0;
    double max_job_runtime = 0;
    size_t i;
    const json_t *job;
    json_array_foreach(jobs, i, job)
    {
        char path[96];
        if (!json_is_object(job))
            return tw_error_set(err, TW_EPARSE,
                                "jobs[%zu] is not an object: the file is not a "
                                "valid fio output",
                                i);
        const char *name = json_string_value(json_object_get(job, "jobname"));
        if (!name)
            name = "?";
        if (strcmp(name, "All clients") == 0)
            continue; /* --client's sum of the others */
        const json_t *opts = json_object_get(job, "job options");
        enum tw_err rc;
        if (total_jobs == 0 && (rc = read_method(opts, glob, r, err)) != TW_OK)
            return rc;
        int n = entry_jobs(opts, glob, entries_named(jobs, name));
        total_jobs += n;
        if (total_jobs > MAX_JOBS)
            return tw_error_set(err, TW_EPARSE,
                                "the output lists more than %d jobs, more than "
                                "a result can hold",
                                MAX_JOBS);
        for (int d = 0; d < 2; d++) {
            snprintf(path, sizeof(path), "jobs[%zu].%s.", i, dir_names[d]);
            if (!dir_add(json_object_get(job, dir_names[d]), path, &acc[d], err))
                return TW_EPARSE;
        }

        /* CPU: fio gives percentages of the job's runtime, which for a
         * group report is the sum of its processes' runtimes. */
        double usr = 0, sys = 0, jr = -1;
        bool have_jr;
        snprintf(path, sizeof(path), "jobs[%zu].", i);
        if (!get_num(job, path, "usr_cpu", 1e6, &usr, NULL, err) ||
            !get_num(job, path, "sys_cpu", 1e6, &sys, NULL, err) ||
            !get_num(job, path, "job_runtime", 1e12, &jr, &have_jr, err))
            return TW_EPARSE;
        if (!have_jr) {
            for (int d = 0; d < 2; d++) {
                double rt = 0;
                const json_t *dj = json_object_get(job, dir_names[d]);
                if (json_is_object(dj) && !get_num(dj, path, "runtime", 1e12, &rt, NULL, err))
                    return TW_EPARSE;
                jr = fmax(jr, rt * n);
            }
        }
        r->cpu.usr_s += usr / 100 * jr / 1000;
        r->cpu.sys_s += sys / 100 * jr / 1000;
        max_job_runtime = fmax(max_job_runtime, jr / n);

        /* fio records the first error of a job and stops that job. */
        const json_t *ev = json_object_get(job, "error");
        const char *etext = json_string_value(json_object_get(job, "error_text"));
        if (json_is_number(ev) && json_number_value(ev) != 0) {
            if (r->errors.count++ == 0)
                snprintf(r->errors.first, sizeof(r->errors.first), "fio job %s: error %.0f%s%s%s",
                         name, json_number_value(ev), etext ? " (" : "", etext ? etext : "",
                         etext ? ")" : "");
        } else if (json_is_string(ev) && json_string_length(ev) > 0) {
            if (r->errors.count++ == 0)
                snprintf(r->errors.first, sizeof(r->errors.first), "fio job %s: error %s", name,
                         json_string_value(ev));
        }
    }
    if (total_jobs == 0)
        return tw_error_set(err, TW_EPARSE,
                            "fio's output lists no jobs: give the output of a "
                            "run that completed");
    r->method.jobs = (int)total_jobs;

    for (int d = 0; d < 2; d++)
        if (!dir_finish(&acc[d], dir_names[d], d == 0 ? &r->read : &r->write, err))
            return TW_EPARSE;
    /* A run that failed is worth recording for its error; one that simply
     * moved nothing has no figures to judge. */
    if (!r->read.present && !r->write.present && r->errors.count == 0)
        return tw_error_set(err, TW_EPARSE,
                            "no job of this fio output read or wrote "
                            "anything: import the output of a run that "
                            "measured the disk");

    /* The measured phase: the longest direction runtime (what fio divides
     * by for IOPS), else the job runtime. */
    double runtime = fmax(acc[0].runtime_ms, acc[1].runtime_ms);
    if (runtime <= 0)
        runtime = max_job_runtime;
    r->method.runtime_ms = (int64_t)runtime;

    /* "timestamp" is when fio wrote its report, i.e. the end of the run. */
    double ts = 0;
    const json_t *tv = json_object_get(root, "timestamp_ms");
    if (json_is_number(tv))
        ts = json_number_value(tv) / 1000;
    else if (json_is_number((tv = json_object_get(root, "timestamp"))))
        ts = json_number_value(tv);
    if (isfinite(ts))
        set_started_at(r, ts, runtime);

    read_disk_util(root, r);
    utf8_cut_all(r);
    return TW_OK;
}

/* Start of the line after the one holding byte P, or LEN. */
static size_t next_line(const char *buf, size_t len, size_t p)
{
    const char *nl = memchr(buf + p, '\n', len - p);
    return nl ? (size_t)(nl - buf) + 1 : len;
}

/* Offset of the first non-blank byte of the line at P (may be LEN). */
static size_t skip_blank(const char *buf, size_t len, size_t p)
{
    while (p < len && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\r'))
        p++;
    return p;
}

enum tw_err tw_fio_import_json(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err)
{
    tw_result_init(r);
    r->source = TW_SRC_FIO_JSON;
    if (!buf)
        len = 0;

    /* fio may print diagnostics before the document: start at the first
     * line that begins with '{'. */
    size_t p = 0;
    long skipped = 0;
    while (p < len) {
        size_t q = skip_blank(buf, len, p);
        if (q < len && buf[q] == '{') {
            p = q;
            break;
        }
        p = next_line(buf, len, p);
        skipped++;
    }
    if (p >= len)
        return tw_error_set(err, TW_EPARSE,
                            len ? "no line starts with '{', so this is not "
                                  "fio's JSON output: run fio with "
                                  "--output-format=json or give its normal "
                                  "output"
                                : "the file is empty: give the output of fio "
                                  "--output-format=json or fio's normal "
                                  "output");

    json_error_t je;
    json_t *root =
        json_loadb(buf + p, len - p, JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL, &je);
    if (!root) {
        long line = je.line > 0 ? je.line + skipped : skipped + 1;
        if (json_error_code(&je) == json_error_premature_end_of_input)
            return tw_error_set_at(err, TW_EPARSE, line, je.column,
                                   "the file ends inside the JSON document at line %ld: was it "
                                   "cut short? Re-run fio with --output-format=json or give its "
                                   "normal output",
                                   line);
        return tw_error_set_at(err, TW_EPARSE, line, je.column,
                               "not valid JSON at line %ld, column %d (%s): "
                               "give fio's --output-format=json output "
                               "unedited, or its normal output",
                               line, je.column, je.text);
    }
    enum tw_err rc = import_value(root, r, err);
    json_decref(root);
    return rc;
}

enum tw_err tw_fio_import(const char *buf, size_t len, struct tw_result *r, struct tw_error *err)
{
    if (!buf)
        len = 0;
    /* The first line that tells: '{' opens fio's JSON; a job header, a job
     * result or fio's version line is the normal output.  Lines before it
     * ("fio: ...", "note: ...") are diagnostics. */
    for (size_t p = 0; p < len; p = next_line(buf, len, p)) {
        size_t q = skip_blank(buf, len, p);
        if (q < len && buf[q] == '{')
            return tw_fio_import_json(buf, len, r, err);
        size_t end = next_line(buf, len, q);
        size_t n = end - q;
        if ((n >= 4 && memcmp(buf + q, "fio-", 4) == 0) || memmem(buf + q, n, ": (g=", 5) ||
            memmem(buf + q, n, ": (groupid=", 11))
            return tw_fio_import_text(buf, len, r, err);
    }
    /* Neither: the text importer says what a normal output looks like. */
    return tw_fio_import_text(buf, len, r, err);
}
