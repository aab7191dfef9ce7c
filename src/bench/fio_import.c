/*
 * fio_import.c - fio's JSON output into a result record; format detection.
 *
 * The meaning of fio's figures lives here once: the text importer
 * (fio_text.c) translates the normal output into the same JSON shape and
 * imports it through tw_fio_import_doc, so both formats are judged by one
 * set of rules (which percentiles, how jobs add up, what counts as the
 * runtime, how direct I/O is decided, which sections make one result).
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
 *  - fio 2.x used "lat"/"clat" in microseconds; those are read as well,
 *    and its "io_bytes" counted KiB (fio issue #378; fio 3 writes bytes and
 *    adds "io_kbytes"); fio-2.2.10 printed no job options at all;
 *  - with --status-interval fio writes one whole document per interval,
 *    its final report last; --output-format=json,normal prints the job
 *    header lines before the document and the text after it;
 *  - fio's "IO depths" distribution is fio's own queue, which fills to
 *    iodepth with buffered libaio too: it proves nothing about O_DIRECT
 *    (see disk_depth_direct for what does).
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

#include "bench/fio_int.h"
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
    /* which latency the figures and the percentiles are: 0 none yet, else
     * 1 + enum tw_lat_kind (jobs that disagree make it unknown) */
    int lat_kind, pct_kind;
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

/*
 * Where a job's options come from: the output's own (the job's, then the
 * global ones), then what the user added (fio arguments, then the job
 * file).  A hint fills only what an output leaves out (FILL_KEYS), unless
 * the output carries no options at all (fio 2.x), when it is the method.
 */
struct opt_src {
    const json_t *job, *glob;   /* the output's; NULL when it has none */
    const json_t *args, *file;  /* the hints' options for this job, or NULL */
    bool optionless;            /* the output has no job options at all */
    bool text;                  /* the output is fio's text (never shows direct=) */
};

enum opt_from { FROM_NONE, FROM_OUTPUT, FROM_ARGS, FROM_FILE };

/* How far (percentage points) a hinted rwmixread= may be from a text's
 * measured share of reads. */
#define MIX_SLACK_POINTS 3.0

static bool fill_key(const char *key)
{
    static const char *const keys[] = {"direct",    "buffered",  "filename",
                                       "directory", "rwmixread", "rwmixwrite"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* Keys whose absence from fio's JSON job options is fio's default
 * (buffered I/O, a 50 % mix), not a gap a hint may fill: only a text,
 * which never shows them, or an option-less output takes them from hints
 * (and a text's measured share of reads wins over a hint, read_method). */
static bool default_key(const char *key)
{
    return strcmp(key, "direct") == 0 || strcmp(key, "buffered") == 0 ||
           strcmp(key, "rwmixread") == 0 || strcmp(key, "rwmixwrite") == 0;
}

/* Whether the hints may answer KEY for O. */
static bool hint_fills(const struct opt_src *o, const char *key)
{
    if (o->optionless)
        return true;
    return fill_key(key) && (o->text || !default_key(key));
}

/* get_opt over all the sources; *FROM (if given) says which answered. */
static bool opt(const struct opt_src *o, const char *key, char *out, size_t outlen,
                enum opt_from *from)
{
    enum opt_from f = FROM_NONE;
    if (get_opt(o->job, o->glob, key, out, outlen))
        f = FROM_OUTPUT;
    else if (hint_fills(o, key) && get_opt(o->args, NULL, key, out, outlen))
        f = FROM_ARGS;
    else if (hint_fills(o, key) && get_opt(o->file, NULL, key, out, outlen))
        f = FROM_FILE;
    if (from)
        *from = f;
    return f != FROM_NONE;
}

/* "readwrite" is "rw", "randread:8" is "randread". */
static void rw_norm(const char *v, char *out, size_t n)
{
    copy(out, n, v);
    out[strcspn(out, ":")] = '\0';
    if (strcmp(out, "readwrite") == 0)
        snprintf(out, n, "rw");
}

/* "1", "true" ... as fio reads a boolean option. */
static bool truthy(const char *v)
{
    return strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "no") != 0 &&
           strcasecmp(v, "off") != 0;
}

/* The share of reads a hint's rwmixread= (rwmixwrite=) gives. */
static bool hint_share(const json_t *hint, double *pct)
{
    char v[64];
    if (get_opt(hint, NULL, "rwmixread", v, sizeof(v)) && fio_size(v, false, pct) && *pct <= 100)
        return true;
    if (get_opt(hint, NULL, "rwmixwrite", v, sizeof(v)) && fio_size(v, false, pct) && *pct <= 100) {
        *pct = 100 - *pct;
        return true;
    }
    return false;
}

/* A hint that says another rw= or ioengine= than the output is another
 * run's: refused, rather than its direct= taken for this one.  So is one
 * whose direct= (buffered=) contradicts the output's. */
static enum tw_err check_hints(const struct opt_src *o, const char *job, struct tw_error *err)
{
    /* direct=1 is buffered=0: compare what each says about O_DIRECT. */
    const json_t *hint_of[2] = {o->args, o->file};
    static const char *const hint_what[2] = {"the fio arguments", "the job file"};
    char dout[64], dhv[64];
    const char *okey = "direct", *hkey = "direct";
    bool have_out = !o->optionless && (get_opt(o->job, o->glob, "direct", dout, sizeof(dout)) ||
                                       get_opt(o->job, o->glob, (okey = "buffered"), dout,
                                               sizeof(dout)));
    if (!have_out && !o->optionless && !o->text) {
        /* fio's JSON lists the options a job was given: no direct= is
         * fio's default, buffered I/O, which a hint can't turn direct. */
        okey = "direct";
        snprintf(dout, sizeof(dout), "0 (fio's default, as it lists no direct=)");
        have_out = true;
    }
    for (int h = 0; h < 2 && have_out; h++) {
        hkey = "direct";
        if (!get_opt(hint_of[h], NULL, "direct", dhv, sizeof(dhv)) &&
            !get_opt(hint_of[h], NULL, (hkey = "buffered"), dhv, sizeof(dhv)))
            continue;
        bool out_direct = (dout[0] != '0' && truthy(dout)) == (strcmp(okey, "direct") == 0);
        bool hint_direct = truthy(dhv) == (strcmp(hkey, "direct") == 0);
        if (out_direct != hint_direct)
            return tw_error_set(err, TW_EPARSE,
                                "%s say %s=%s for job %s, but fio's output says %s=%s: they "
                                "are not those of this run; give the job file or command line "
                                "the run used",
                                hint_what[h], hkey, dhv, job, okey, dout);
    }
    /* The mix of a mixed job: the JSON's (fio's default 50 when it lists
     * none) against a hint's. */
    char orw[64], ov[64];
    if (!o->optionless && !o->text &&
        (get_opt(o->job, o->glob, "rw", orw, sizeof(orw)) ||
         get_opt(o->job, o->glob, "readwrite", orw, sizeof(orw)))) {
        char nrw[64];
        rw_norm(orw, nrw, sizeof(nrw));
        if (strcmp(nrw, "rw") == 0 || strcmp(nrw, "randrw") == 0) {
            double out_pct = 50, hp;
            if (get_opt(o->job, o->glob, "rwmixread", ov, sizeof(ov)) &&
                fio_size(ov, false, &out_pct))
                ;
            else if (get_opt(o->job, o->glob, "rwmixwrite", ov, sizeof(ov)) &&
                     fio_size(ov, false, &out_pct))
                out_pct = 100 - out_pct;
            else
                out_pct = 50;
            for (int h = 0; h < 2; h++) {
                if (hint_share(hint_of[h], &hp) && hp != out_pct)
                    return tw_error_set(
                        err, TW_EPARSE,
                        "%s say %.0f %% reads for job %s, but fio's output "
                        "says rwmixread=%.0f%s: they are not those of this "
                        "run; give the job file or command line the run used",
                        hint_what[h], hp, job, out_pct,
                        get_opt(o->job, o->glob, "rwmixread", ov, sizeof(ov)) ||
                                get_opt(o->job, o->glob, "rwmixwrite", ov, sizeof(ov))
                            ? ""
                            : " (fio's default, as it lists no rwmixread=)");
            }
        }
    }
    static const char *const keys[] = {"rw", "ioengine"};
    const json_t *hints[2] = {o->args, o->file};
    static const char *const what[2] = {"the fio arguments", "the job file"};
    for (size_t k = 0; k < 2 && !o->optionless; k++) {
        char out[64], hv[64], a[64], b[64];
        if (!get_opt(o->job, o->glob, keys[k], out, sizeof(out)))
            continue;
        for (int h = 0; h < 2; h++) {
            if (!get_opt(hints[h], NULL, keys[k], hv, sizeof(hv)))
                continue;
            rw_norm(out, a, sizeof(a));
            rw_norm(hv, b, sizeof(b));
            if (strcmp(a, b) != 0)
                return tw_error_set(err, TW_EPARSE,
                                    "%s say %s=%s for job %s, but fio's output says %s=%s: "
                                    "they are not those of this run; give the job file or "
                                    "command line the run used",
                                    what[h], keys[k], b, job, keys[k], a);
        }
    }
    return TW_OK;
}

static enum tw_err read_method(const struct opt_src *o, struct tw_result *r,
                               struct tw_error *err)
{
    struct tw_method *m = &r->method;
    char v[4096];
    enum tw_err rc;

    /* fio's defaults: rw=read, bs=4k, iodepth=1, ioengine=psync. */
    if (!opt(o, "rw", v, sizeof(v), NULL) && !opt(o, "readwrite", v, sizeof(v), NULL))
        snprintf(v, sizeof(v), "read");
    if ((rc = parse_rw(v, &m->pattern, err)) != TW_OK)
        return rc;

    bool kb1000 = opt(o, "kb_base", v, sizeof(v), NULL) && strcmp(v, "1000") == 0;
    double bs = 4096;
    if (opt(o, "bs", v, sizeof(v), NULL) || opt(o, "blocksize", v, sizeof(v), NULL)) {
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
    if (opt(o, "iodepth", v, sizeof(v), NULL) &&
        (!fio_size(v, false, &qd) || qd < 1 || qd > (1 << 20) || qd != floor(qd)))
        return tw_error_set(err, TW_EPARSE,
                            "the job's iodepth=%s is not a queue depth "
                            "between 1 and %d",
                            v, 1 << 20);
    m->queue_depth = (int)qd;

    if (!opt(o, "ioengine", v, sizeof(v), NULL) || !v[0])
        snprintf(v, sizeof(v), "psync");
    copy(m->engine, sizeof(m->engine), v);
    /* A sync engine waits for each I/O: whatever iodepth says, one I/O per
     * job is in flight (fio warns and caps it too). */
    m->effective_queue_depth = is_sync_engine(m->engine) ? 1 : m->queue_depth;

    /* direct=: decided with the figures (decide_direct). */

    double pct = -1, hp;
    if (o->text && get_opt(o->job, NULL, TW_FIO_TEXT_MIX_KEY, v, sizeof(v)) &&
        fio_size(v, false, &pct) && pct <= 100) {
        /* A text's measured share is what ran; a hint far from it (more
         * than a few points, which a short run's draw can't explain) is
         * another run's. */
        const json_t *hint_of[2] = {o->args, o->file};
        static const char *const what[2] = {"the fio arguments", "the job file"};
        for (int h = 0; h < 2; h++)
            if (hint_share(hint_of[h], &hp) && fabs(hp - pct) > MIX_SLACK_POINTS)
                return tw_error_set(err, TW_EPARSE,
                                    "%s say %.0f %% reads, but fio's output measured %.0f %% "
                                    "(its issued reads and writes): they are not those of this "
                                    "run; give the job file or command line the run used",
                                    what[h], hp, pct);
    } else if (opt(o, "rwmixread", v, sizeof(v), NULL) && fio_size(v, false, &pct) && pct <= 100)
        ;
    else if (opt(o, "rwmixwrite", v, sizeof(v), NULL) && fio_size(v, false, &pct) &&
             pct <= 100)
        pct = 100 - pct;
    else if (get_opt(o->job, NULL, TW_FIO_TEXT_MIX_KEY, v, sizeof(v)) &&
             fio_size(v, false, &pct) && pct <= 100)
        ; /* a text's measured share, when nothing says the option */
    else
        pct = 50; /* fio's default mix */
    if (m->pattern == TW_PAT_RW || m->pattern == TW_PAT_RANDRW)
        m->read_pct = (int)floor(pct + 0.5);
    else
        m->read_pct = tw_pattern_reads(m->pattern) ? 100 : 0;

    double ramp = 0;
    if (opt(o, "ramp_time", v, sizeof(v), NULL) && !fio_time_ms(v, &ramp))
        return tw_error_set(err, TW_EPARSE, "the job's ramp_time=%s is not a fio duration", v);
    m->ramp_ms = (int64_t)ramp;

    if (!(opt(o, "filename", v, sizeof(v), NULL) && v[0]) &&
        opt(o, "directory", v, sizeof(v), NULL) && v[0]) {
        /* fio names its files in the directory itself: record the folder */
        snprintf(r->target.path, sizeof(r->target.path), "%s", v);
        r->target.kind = TW_TARGET_FILE;
    } else if (opt(o, "filename", v, sizeof(v), NULL) && v[0]) {
        snprintf(r->target.path, sizeof(r->target.path), "%s", v);
        r->target.kind = strncmp(v, "/dev/", 5) == 0 ? TW_TARGET_BLOCK : TW_TARGET_FILE;
        /* For one file, size= is the file's size; on a device it is only
         * the region used, so the device's size stays unknown. */
        char sz[64];
        double size;
        if (r->target.kind == TW_TARGET_FILE && !strchr(v, ':') &&
            (opt(o, "filesize", sz, sizeof(sz), NULL) ||
             opt(o, "size", sz, sizeof(sz), NULL)) &&
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
    if (grouped || (same_name > 0 && same_name < (size_t)n)) {
        int per = (int)n / (int)(same_name ? same_name : 1);
        return per > 0 ? per : 1; /* more entries than processes: each is one */
    }
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

/* Notes kind K (an enum tw_lat_kind) for one job in *ACC (see dir_acc). */
static void note_kind(int *acc, enum tw_lat_kind k)
{
    int v = 1 + (int)k;
    *acc = *acc == 0 || *acc == v ? v : 1 + (int)TW_LAT_UNKNOWN;
}

/* Adds one job's direction DIR (an object of fio's JSON) into A.  KIB:
 * the document is fio 2.x's, whose "io_bytes" counts KiB. */
static bool dir_add(const json_t *d, const char *path, struct dir_acc *a, bool kib,
                    struct tw_error *err)
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
    /* I/O counts are whole: a fraction (an edited file) is cut, and a
     * direction with less than one I/O moved nothing. */
    ios = floor(ios);
    if (ios < 1)
        return true;
    /* fio before 3.0 wrote bytes >> 10 under "io_bytes" (fio issue #378);
     * fio 3 writes bytes and adds "io_kbytes". */
    if (kib && !json_object_get(d, "io_kbytes"))
        bytes *= 1024;
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
        note_kind(&a->lat_kind, k < 2 ? TW_LAT_TOTAL : TW_LAT_COMPLETION);
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
        note_kind(&a->pct_kind, k == 0 || k == 2 ? TW_LAT_TOTAL : TW_LAT_COMPLETION);
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
    d->lat.kind = a->lat_kind ? (enum tw_lat_kind)(a->lat_kind - 1) : TW_LAT_UNKNOWN;
    d->lat.pct_kind = a->pct_kind ? (enum tw_lat_kind)(a->pct_kind - 1) : TW_LAT_UNKNOWN;
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

/* Adds member NAME; false when the record is full (the caller refuses). */
static bool add_member(struct tw_result *r, const char *name)
{
    if (!name || !name[0])
        return true;
    if (r->target.n_members >= TW_RESULT_MAX_MEMBERS)
        return false;
    snprintf(r->target.members[r->target.n_members++], sizeof(r->target.members[0]), "%s", name);
    return true;
}

static enum tw_err too_many_members(const char *head, size_t n, struct tw_error *err)
{
    return tw_error_set(err, TW_EPARSE,
                        "the stripe %s has %zu member disks in fio's disk statistics, more "
                        "than the %d a result records (an Azure VM attaches at most 64 data "
                        "disks): benchmark the stripe of one VM's disks",
                        head, n, TW_RESULT_MAX_MEMBERS);
}

/*
 * The first disk_util entry is the device under the job's file.  A stripe
 * head (dm, md) is followed by the devices below it; the leaves, which
 * carry no aggr_* fields themselves, are the member disks (an intermediate
 * dm layer, such as dm-crypt over LVM, is skipped).  fio can't tell where
 * one device's slaves end when a job used files on several devices, so
 * everything after the head is taken: jobs over one target are the norm.
 * More members than a result holds are refused, never dropped: a stripe
 * judged on part of its disks gets a wrong expected figure.
 */
static enum tw_err read_disk_util(const json_t *root, struct tw_result *r, struct tw_error *err)
{
    const json_t *arr = json_object_get(root, "disk_util");
    const json_t *head = json_array_get(arr, 0);
    const char *name = json_string_value(json_object_get(head, "name"));
    if (!name || !name[0])
        return TW_OK;
    snprintf(r->target.device, sizeof(r->target.device), "%s", name);
    if (!is_stripe_head(head)) {
        /* Several devices and no stripe head: the jobs ran on several
         * disks, whose figures can't be one disk's result. */
        if (json_array_size(arr) > 1) {
            char names[256] = "";
            size_t i, u = 0;
            const json_t *v;
            json_array_foreach(arr, i, v)
            {
                const char *nm = json_string_value(json_object_get(v, "name"));
                if (u + 1 < sizeof(names))
                    u += (size_t)snprintf(names + u, sizeof(names) - u, "%s%s", i ? ", " : "",
                                          nm ? nm : "?");
            }
            utf8_cut(names);
            return tw_error_set(err, TW_EPARSE,
                                "fio's disk statistics list %zu devices (%s) and none is a "
                                "stripe over the others: the jobs ran on several disks, and one "
                                "result is one disk's; run fio on one disk (or import the "
                                "sections of each disk's run on their own)",
                                json_array_size(arr), names);
        }
        add_member(r, name);
        return TW_OK;
    }
    const json_t *slaves = json_object_get(head, "slaves");
    size_t i, want = 0;
    const json_t *v;
    if (json_is_array(slaves)) {
        json_array_foreach(slaves, i, v)
        {
            if (!add_member(r, json_is_string(v) ? json_string_value(v)
                                                 : json_string_value(json_object_get(v, "name"))))
                return too_many_members(name, json_array_size(slaves), err);
        }
        return TW_OK;
    }
    json_array_foreach(arr, i, v)
    {
        if (i > 0 && !is_stripe_head(v))
            want++;
    }
    json_array_foreach(arr, i, v)
    {
        if (i > 0 && !is_stripe_head(v) &&
            !add_member(r, json_string_value(json_object_get(v, "name"))))
            return too_many_members(name, want, err);
    }
    return TW_OK;
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

/* ---- job sections ---- */

/* What makes two entries of "jobs" one method: rw, bs, iodepth, ioengine,
 * direct, the mix and the file (filename=, directory=: sections on
 * different disks are not one disk's result), as the output states them,
 * and the group. */
static void entry_method(const json_t *job, const json_t *glob, const json_t *hint, char *out,
                         size_t n)
{
    static const char *const keys[] = {"rw",        "readwrite",  "bs",       "blocksize",
                                       "iodepth",   "ioengine",   "direct",   "buffered",
                                       "rwmixread", "rwmixwrite", "filename", "directory"};
    /* An output with no options (fio 2.x): the method its hints give. */
    const json_t *opts = hint ? hint : json_object_get(job, "job options");
    if (hint)
        glob = NULL;
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && used + 1 < n; k++) {
        char v[128];
        if (!get_opt(opts, glob, keys[k], v, sizeof(v)))
            continue;
        if (k <= 1)
            rw_norm(v, v, sizeof(v));
        int w = snprintf(out + used, n - used, "%s%s=%s", used ? ", " : "", keys[k], v);
        used = w < 0 ? n : used + (size_t)w;
    }
    const json_t *g = json_object_get(job, "groupid");
    if (json_is_number(g) && used + 1 < n)
        snprintf(out + used, n - used, "%sgroup %.0f", used ? ", " : "", json_number_value(g));
}

static const char *entry_name(const json_t *job)
{
    const char *name = json_string_value(json_object_get(job, "jobname"));
    return name ? name : "?";
}

/* fio --client's sum of the others is not a job. */
static bool is_client_sum(const json_t *job)
{
    return strcmp(entry_name(job), "All clients") == 0;
}

/*
 * Decides which entries of JOBS form the result: those of section WANT
 * when given (an error naming the sections when none is), else all of
 * them when they share one method and group; entries with different
 * methods or groups are refused, naming them, since one record holds one
 * method and groups run one after another.  KEEP[i] marks the entries.
 */
/* For an option-less output, the options the hints give job NAME (the
 * fio arguments over the job file), new, or NULL. */
static json_t *hinted_method(const json_t *file, const json_t *args, const char *name)
{
    char secs[512];
    json_t *f = file ? tw_fio_hint_options(file, name, secs, sizeof(secs)) : NULL;
    json_t *a = args ? tw_fio_hint_options(args, name, secs, sizeof(secs)) : NULL;
    if (!f)
        return a;
    if (a)
        json_object_update(f, a);
    json_decref(a);
    return f;
}

static enum tw_err pick_sections(const json_t *jobs, const json_t *glob, const char *want,
                                 const json_t *hfile, const json_t *hargs, bool optionless,
                                 bool *keep, struct tw_error *err)
{
    size_t i, kept = 0;
    const json_t *job;
    char first[512] = "", m[512], names[512] = "";
    const char *first_name = NULL;
    json_array_foreach(jobs, i, job)
    {
        keep[i] = false;
        if (!json_is_object(job) || is_client_sum(job))
            continue;
        const char *name = entry_name(job);
        if (!strstr(names, name) && strlen(names) + strlen(name) + 4 < sizeof(names)) {
            size_t u = strlen(names);
            snprintf(names + u, sizeof(names) - u, "%s%s", u ? ", " : "", name);
        }
        if (want && strcmp(name, want) != 0)
            continue;
        json_t *hint = optionless ? hinted_method(hfile, hargs, name) : NULL;
        entry_method(job, glob, hint, m, sizeof(m));
        json_decref(hint);
        if (!first_name) {
            first_name = name;
            snprintf(first, sizeof(first), "%s", m);
        } else if (strcmp(m, first) != 0) {
            return tw_error_set(err, TW_EPARSE,
                                "fio's output holds job sections that ran differently: %s "
                                "(%s) and %s (%s); one result records one method, so it can't "
                                "be both: import one section with --section NAME (import-fio "
                                "--section %s)",
                                first_name, first[0] ? first : "fio's defaults", name,
                                m[0] ? m : "fio's defaults", first_name);
        }
        keep[i] = true;
        kept++;
    }
    if (want && kept == 0)
        return tw_error_set(err, TW_EPARSE,
                            "fio's output has no job section named %s: its sections are %s",
                            want, names[0] ? names : "none");
    return TW_OK;
}

/* ---- direct I/O ---- */

/*
 * Whether the disk statistics of a libaio random-read run show I/O in
 * flight that buffered I/O can't keep there.  With buffered reads libaio's
 * io_submit does each read before it returns, so each job has at most one
 * read at the disk, however deep fio's own queue (fio's "IO depths" line
 * shows iodepth either way, which is why it proves nothing).  The disk's
 * read ticks over the run's time are its mean reads in flight (Little's
 * law): more than twice the jobs, with the disk having seen at least 80 %
 * of fio's reads (not a page cache serving them), can only be direct I/O.
 * Random reads only: buffered writes are written back later at any depth,
 * and sequential reads are read ahead.
 */
static bool disk_depth_direct(const json_t *root, const struct tw_result *r)
{
    const struct tw_method *m = &r->method;
    if (strcmp(m->engine, "libaio") != 0 || m->pattern != TW_PAT_RANDREAD || !r->read.present ||
        m->runtime_ms <= 0 || r->read.ios <= 0)
        return false;
    const json_t *head = json_array_get(json_object_get(root, "disk_util"), 0);
    const json_t *ios = json_object_get(head, "read_ios");
    const json_t *ticks = json_object_get(head, "read_ticks");
    if (!json_is_number(ios) || !json_is_number(ticks))
        return false;
    /* The disk's figures cover the whole run, ramp_time included, fio's
     * only the measured part: the ticks count for fio's share of the
     * disk's reads, or a ramp's reads would be taken for depth. */
    double disk_ios = json_number_value(ios);
    double share = disk_ios > 0 ? fmin(1.0, (double)r->read.ios / disk_ios) : 0;
    double in_flight = json_number_value(ticks) / (double)m->runtime_ms * share;
    return disk_ios >= 0.8 * (double)r->read.ios && in_flight > 2.0 * (m->jobs > 0 ? m->jobs : 1);
}

/* method.direct and its basis, once the figures are in (see fio_import.h). */
static enum tw_err decide_direct(const struct opt_src *o, const json_t *root, struct tw_result *r,
                                 struct tw_error *err)
{
    struct tw_method *m = &r->method;
    static const char *const keys[] = {"direct", "buffered"};
    static const enum tw_direct_basis basis[] = {
        [FROM_OUTPUT] = TW_DIRECT_BY_FIO_JSON,
        [FROM_ARGS] = TW_DIRECT_BY_FIO_ARGS,
        [FROM_FILE] = TW_DIRECT_BY_JOB_FILE,
    };
    for (int k = 0; k < 2; k++) {
        char v[64];
        enum opt_from from;
        if (opt(o, keys[k], v, sizeof(v), &from)) {
            bool on = truthy(v) == (k == 0);
            if (!on && from != FROM_OUTPUT && disk_depth_direct(root, r))
                return tw_error_set(err, TW_EPARSE,
                                    "%s say %s=%s (buffered I/O), but the disk statistics of "
                                    "fio's output show more reads in flight than buffered I/O "
                                    "keeps there, so the run was direct: give the job file or "
                                    "command line the run used",
                                    from == FROM_ARGS ? "the fio arguments" : "the job file",
                                    keys[k], v);
            m->direct = on ? TW_DIRECT_YES : TW_DIRECT_NO;
            m->direct_basis = basis[from];
            return TW_OK;
        }
    }
    if (!o->text && !o->optionless) {
        /* fio's JSON lists every option the job was given: none is
         * fio's default, buffered I/O. */
        m->direct = TW_DIRECT_NO;
        m->direct_basis = TW_DIRECT_BY_FIO_JSON;
    } else if (disk_depth_direct(root, r)) {
        m->direct = TW_DIRECT_YES;
        m->direct_basis = TW_DIRECT_BY_DISK_DEPTH;
    } else {
        m->direct = TW_DIRECT_UNKNOWN;
        m->direct_basis = TW_DIRECT_BY_NONE;
    }
    return TW_OK;
}

/* ---- the document ---- */

/* The hints' options for job NAME into O (new references the caller drops);
 * an error when a job file or command line has sections and none is NAME. */
static enum tw_err hint_options(const json_t *file, const json_t *args, const char *name,
                                struct opt_src *o, struct tw_error *err)
{
    const json_t *src[2] = {file, args};
    json_t *out[2] = {NULL, NULL};
    static const char *const what[2] = {"the job file", "the fio arguments"};
    for (int i = 0; i < 2; i++) {
        if (!src[i])
            continue;
        char secs[512];
        out[i] = tw_fio_hint_options(src[i], name, secs, sizeof(secs));
        if (!out[i]) {
            json_decref(out[0]);
            return tw_error_set(err, TW_EPARSE,
                                "%s has no section [%s], the job in fio's output (its "
                                "sections: %s): give the job file or command line of this run",
                                what[i], name, secs[0] ? secs : "none");
        }
    }
    o->file = out[0];
    o->args = out[1];
    return TW_OK;
}

struct hints {
    const struct tw_fio_hints *h;
    json_t *file, *args; /* parsed, or NULL */
    bool text;
};

static enum tw_err import_value(const json_t *root, const struct hints *hs, struct tw_result *r,
                                struct tw_error *err)
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
    /* fio 1.x and 2.x counted io_bytes in KiB; fio 3 wrote nanosecond keys. */
    bool fio2 = ver ? strncmp(ver, "fio-1.", 6) == 0 || strncmp(ver, "fio-2.", 6) == 0 : false;
    bool optionless = !json_is_object(glob);

    size_t i;
    const json_t *job;
    json_array_foreach(jobs, i, job)
    {
        if (!json_is_object(job))
            return tw_error_set(err, TW_EPARSE,
                                "jobs[%zu] is not an object: the file is not a "
                                "valid fio output",
                                i);
        if (json_is_object(json_object_get(job, "job options")))
            optionless = false;
        if (!ver) {
            const json_t *rd = json_object_get(job, "read");
            if (json_object_get(rd, "clat") && !json_object_get(rd, "clat_ns"))
                fio2 = true;
        }
    }
    size_t n_jobs = json_array_size(jobs);
    bool *keep = calloc(n_jobs ? n_jobs : 1, sizeof(*keep));
    if (!keep)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
    enum tw_err rc = pick_sections(jobs, glob, hs->h ? hs->h->section : NULL, hs->file, hs->args,
                                   optionless, keep, err);

    struct opt_src o = {.glob = glob, .optionless = optionless, .text = hs->text};
    struct dir_acc acc[2];
    memset(acc, 0, sizeof(acc));
    long total_jobs = 0;
    double max_job_runtime = 0;
    bool first = true;
    json_array_foreach(jobs, i, job)
    {
        if (rc != TW_OK)
            break;
        char path[96];
        if (!keep[i])
            continue;
        const char *name = entry_name(job);
        const json_t *opts = json_object_get(job, "job options");
        if (!first) {
            /* Each entry's hints must fit its own options too. */
            struct opt_src oi = {
                .glob = glob, .optionless = optionless, .text = hs->text, .job = opts};
            if ((rc = hint_options(hs->file, hs->args, name, &oi, err)) == TW_OK)
                rc = check_hints(&oi, name, err);
            json_decref((json_t *)oi.file);
            json_decref((json_t *)oi.args);
            if (rc != TW_OK)
                break;
        }
        if (first) {
            first = false;
            o.job = opts;
            if ((rc = hint_options(hs->file, hs->args, name, &o, err)) != TW_OK)
                break;
            if (optionless && !o.file && !o.args) {
                rc = tw_error_set(err, TW_EPARSE,
                                  "this %s JSON output carries no job options, so how the run "
                                  "went (rw=, bs=, iodepth=, ioengine=, direct=) is unknown: "
                                  "give its job file (--job-file FILE) or command line "
                                  "(--fio-args \"...\")",
                                  ver && ver[0] ? ver : "fio");
                break;
            }
            if ((rc = check_hints(&o, name, err)) != TW_OK ||
                (rc = read_method(&o, r, err)) != TW_OK)
                break;
        }
        int n = entry_jobs(opts, glob, entries_named(jobs, name));
        if (optionless && total_jobs == 0 && n == 1) {
            char v[64];
            double nj = 1;
            if (opt(&o, "numjobs", v, sizeof(v), NULL) && fio_size(v, false, &nj) && nj >= 1 &&
                nj <= MAX_JOBS && (opt(&o, "group_reporting", v, sizeof(v), NULL)))
                n = (int)nj;
        }
        total_jobs += n;
        if (total_jobs > MAX_JOBS) {
            rc = tw_error_set(err, TW_EPARSE,
                              "the output lists more than %d jobs, more than "
                              "a result can hold",
                              MAX_JOBS);
            break;
        }
        for (int d = 0; d < 2 && rc == TW_OK; d++) {
            snprintf(path, sizeof(path), "jobs[%zu].%s.", i, dir_names[d]);
            if (!dir_add(json_object_get(job, dir_names[d]), path, &acc[d], fio2, err))
                rc = TW_EPARSE;
        }
        if (rc != TW_OK)
            break;

        /* CPU: fio gives percentages of the job's runtime, which for a
         * group report is the sum of its processes' runtimes. */
        double usr = 0, sys = 0, jr = -1;
        bool have_jr;
        snprintf(path, sizeof(path), "jobs[%zu].", i);
        if (!get_num(job, path, "usr_cpu", 1e6, &usr, NULL, err) ||
            !get_num(job, path, "sys_cpu", 1e6, &sys, NULL, err) ||
            !get_num(job, path, "job_runtime", 1e12, &jr, &have_jr, err)) {
            rc = TW_EPARSE;
            break;
        }
        if (!have_jr) {
            for (int d = 0; d < 2; d++) {
                double rt = 0;
                const json_t *dj = json_object_get(job, dir_names[d]);
                if (json_is_object(dj) && !get_num(dj, path, "runtime", 1e12, &rt, NULL, err))
                    rc = TW_EPARSE;
                jr = fmax(jr, rt * n);
            }
            if (rc != TW_OK)
                break;
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
    free(keep);
    if (rc == TW_OK && total_jobs == 0)
        rc = tw_error_set(err, TW_EPARSE,
                          "fio's output lists no jobs: give the output of a "
                          "run that completed");
    if (rc != TW_OK) {
        json_decref((json_t *)o.file);
        json_decref((json_t *)o.args);
        return rc;
    }
    r->method.jobs = (int)total_jobs;

    for (int d = 0; d < 2 && rc == TW_OK; d++)
        if (!dir_finish(&acc[d], dir_names[d], d == 0 ? &r->read : &r->write, err))
            rc = TW_EPARSE;
    /* A run that failed is worth recording for its error; one that simply
     * moved nothing has no figures to judge. */
    if (rc == TW_OK && !r->read.present && !r->write.present && r->errors.count == 0)
        rc = tw_error_set(err, TW_EPARSE,
                          "no job of this fio output read or wrote "
                          "anything: import the output of a run that "
                          "measured the disk");
    if (rc == TW_OK) {
        /* The measured phase: the longest direction runtime (what fio
         * divides by for IOPS), else the job runtime. */
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

        rc = read_disk_util(root, r, err);
    }
    if (rc == TW_OK && (rc = decide_direct(&o, root, r, err)) == TW_OK)
        utf8_cut_all(r);
    json_decref((json_t *)o.file);
    json_decref((json_t *)o.args);
    return rc;
}

/* The most JSON documents (fio's --status-interval reports) one output
 * may hold. */
#ifndef MAX_DOCS
#define MAX_DOCS 100000
#endif

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

/* Offset of the first line from P that begins with '{' (LEN if none);
 * *SKIPPED counts the lines passed. */
static size_t next_doc(const char *buf, size_t len, size_t p, long *skipped)
{
    while (p < len) {
        size_t q = skip_blank(buf, len, p);
        if (q < len && buf[q] == '{')
            return q;
        p = next_line(buf, len, p);
        (*skipped)++;
    }
    return len;
}

static enum tw_err parse_hints(const struct tw_fio_hints *h, struct hints *hs,
                               struct tw_error *err)
{
    enum tw_err rc = TW_OK;
    if (h && h->job_file) {
        struct tw_error e = {0};
        if ((rc = tw_fio_jobfile_parse(h->job_file, h->job_file_len, &hs->file, &e)) != TW_OK)
            return tw_error_set(err, rc, "%s", e.msg);
    }
    if (h && h->fio_args) {
        struct tw_error e = {0};
        if ((rc = tw_fio_args_parse(h->fio_args, h->fio_args_len, &hs->args, &e)) != TW_OK)
            return tw_error_set(err, rc, "%s", e.msg);
    }
    return rc;
}

enum tw_err tw_fio_import_doc(const char *buf, size_t len, const struct tw_fio_hints *h,
                              bool text, struct tw_result *r, struct tw_error *err)
{
    tw_result_init(r);
    r->source = text ? TW_SRC_FIO_TEXT : TW_SRC_FIO_JSON;
    if (!buf)
        len = 0;

    /* fio may print diagnostics (and, with --output-format=json,normal, its
     * job header lines) before the document: start at the first line that
     * begins with '{'. */
    long skipped = 0;
    size_t p = next_doc(buf, len, 0, &skipped);
    if (p >= len)
        return tw_error_set(err, TW_EPARSE,
                            len ? "no line starts with '{', so this is not "
                                  "fio's JSON output: run fio with "
                                  "--output-format=json or give its normal "
                                  "output"
                                : "the file is empty: give the output of fio "
                                  "--output-format=json or fio's normal "
                                  "output");

    /* With --status-interval fio writes a whole document per interval and
     * its final report last: read them all and keep the last. */
    json_t *root = NULL;
    long line0 = skipped;
    int docs = 0;
    while (p < len) {
        json_error_t je;
        json_t *doc =
            json_loadb(buf + p, len - p, JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL, &je);
        if (!doc) {
            json_decref(root);
            long line = je.line > 0 ? je.line + line0 : line0 + 1;
            if (json_error_code(&je) == json_error_premature_end_of_input)
                return tw_error_set_at(err, TW_EPARSE, line, je.column,
                                       "the file ends inside the JSON document at line %ld: was "
                                       "it cut short? Re-run fio with --output-format=json or "
                                       "give its normal output",
                                       line);
            return tw_error_set_at(err, TW_EPARSE, line, je.column,
                                   "not valid JSON at line %ld, column %d (%s): "
                                   "give fio's --output-format=json output "
                                   "unedited, or its normal output",
                                   line, je.column, je.text);
        }
        docs++;
        json_decref(root);
        root = doc;
        /* Lines of the document just read, to number the next one's. */
        size_t end = p + je.position;
        for (size_t k = p; k < end && k < len; k++)
            line0 += buf[k] == '\n';
        if (end >= len)
            break;
        /* Text after the document (fio's normal output with json,normal)
         * is not another document unless a line opens one. */
        size_t after = next_line(buf, len, end - 1);
        if (after > 0 && buf[after - 1] == '\n')
            line0++; /* the line the document ended on */
        p = next_doc(buf, len, after, &line0);
        if (p < len && docs >= MAX_DOCS) {
            /* Keeping this one would record an interim report as the run. */
            json_decref(root);
            return tw_error_set_at(err, TW_EPARSE, line0 + 1, 0,
                                   "the output holds more than %d JSON documents (fio's "
                                   "--status-interval reports), so its final report is past "
                                   "what tierwise reads: give the last document alone",
                                   MAX_DOCS);
        }
    }
    struct hints hs = {.h = h, .text = text};
    enum tw_err rc = parse_hints(h, &hs, err);
    if (rc == TW_OK)
        rc = import_value(root, &hs, r, err);
    json_decref(hs.file);
    json_decref(hs.args);
    json_decref(root);
    return rc;
}

enum tw_err tw_fio_import_json(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err)
{
    return tw_fio_import_doc(buf, len, NULL, false, r, err);
}

enum tw_err tw_fio_import_with(const char *buf, size_t len, const struct tw_fio_hints *h,
                               struct tw_result *r, struct tw_error *err)
{
    if (!buf)
        len = 0;
    /* '{' opens fio's JSON; a job result ("(groupid=") is the normal
     * output.  Job header lines and fio's version line come before either
     * (--output-format=json,normal prints them, then the JSON, then the
     * text): a '{' before the first job result is JSON.  Lines that are
     * neither ("fio: ...", "note: ...") are diagnostics. */
    for (size_t p = 0; p < len; p = next_line(buf, len, p)) {
        size_t q = skip_blank(buf, len, p);
        if (q < len && buf[q] == '{')
            return tw_fio_import_doc(buf, len, h, false, r, err);
        size_t n = next_line(buf, len, q) - q;
        if (memmem(buf + q, n, ": (groupid=", 11))
            return tw_fio_import_text_with(buf, len, h, r, err);
    }
    /* No job result and no '{': the text importer says what a normal
     * output looks like. */
    return tw_fio_import_text_with(buf, len, h, r, err);
}

enum tw_err tw_fio_import(const char *buf, size_t len, struct tw_result *r, struct tw_error *err)
{
    return tw_fio_import_with(buf, len, NULL, r, err);
}
