/*
 * fio_text.c - fio's normal (human-readable) output into a result record.
 *
 * The text is read line by line into fio's JSON shape and imported by
 * tw_fio_import_json (fio_import.c), so both formats follow one set of
 * rules.  Lines are recognised by their words, never by their indentation:
 * output pasted into a ticket or chat often loses its leading spaces.
 *
 * What fio's text says and where (fio 3.x, checked against fio-3.33):
 *
 *   NAME: (g=0): rw=randread, bs=(R) 8192B-8192B, (W) ..., ioengine=libaio, iodepth=32
 *   fio-3.33
 *   NAME: (groupid=0, jobs=1): err= 0: pid=3187: Sun Nov 29 22:36:23 2026
 *     read: IOPS=101k, BW=788MiB/s (826MB/s)(2364MiB/3001msec)
 *       clat (usec): min=75, max=1602, avg=314.77, stdev=103.96
 *        lat (usec): min=105, max=1605, avg=317.00, stdev=103.99
 *       clat percentiles (usec):
 *        |  1.00th=[  243],  5.00th=[  253], ...
 *      iops        : min=94148, max=104152, avg=98903.20, stdev=4111.32, samples=5
 *     cpu          : usr=8.07%, sys=22.50%, ctx=9459, majf=0, minf=75
 *        issued rwts: total=302573,0,0,0 short=0,0,0,0 dropped=0,0,0,0
 *   Run status group 0 (all jobs):
 *      READ: bw=788MiB/s (826MB/s), ..., io=2364MiB (2479MB), run=3001-3001msec
 *   Disk stats (read/write):
 *       dm-8: ios=..., aggrios=..., aggrutil=96.61%     (a stripe head)
 *     sdg: ios=15171/0, merge=0/0, ...                  (its members)
 *
 * The summary figures ("IOPS=101k", "2364MiB") are rounded for reading;
 * the exact count is on the "issued rwts" line, and I/O counts, bytes,
 * IOPS and bandwidth are recomputed from it the way fio computes them.
 * The text does not show direct=, filename= or rwmixread=: direct is
 * recorded false (a text import can't prove O_DIRECT), the target path is
 * unknown, and a mixed job's read share is the measured one.
 */
#include "bench/fio_import.h"
#include "bench/fio_int.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#define LINE_CAP 1024 /* fio's lines are far shorter; longer ones are cut */
#define MAX_HDRS 256  /* job sections remembered for their method */
#define MAX_BLOCKS (1 << 16)

struct reader {
    const char *buf;
    size_t len, pos;
    long no;             /* 1-based number of the line in `line` */
    char line[LINE_CAP]; /* the line without leading blanks, NUL-ended */
};

/* Reads the next line, leading blanks and the line end left out. */
static bool read_line(struct reader *rd)
{
    if (rd->pos >= rd->len)
        return false;
    const char *s = rd->buf + rd->pos;
    size_t avail = rd->len - rd->pos;
    const char *nl = memchr(s, '\n', avail);
    size_t n = nl ? (size_t)(nl - s) : avail;
    rd->pos += nl ? n + 1 : n;
    rd->no++;
    /* A terminal capture holds fio's progress line, redrawn after '\r':
     * like the terminal, keep only what follows the last one. */
    while (n > 0 && s[n - 1] == '\r')
        n--;
    size_t i = n;
    while (i > 0 && s[i - 1] != '\r')
        i--;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    size_t k = 0;
    /* fio's words are ASCII; other bytes (a stray NUL, a name in another
     * script, binary junk) become '?', so every name stays valid UTF-8. */
    for (; i < n && k + 1 < sizeof(rd->line); i++) {
        unsigned char c = (unsigned char)s[i];
        rd->line[k++] = c >= 1 && c <= 127 ? (char)c : '?';
    }
    while (k > 0 && (rd->line[k - 1] == '\r' || rd->line[k - 1] == ' ' || rd->line[k - 1] == '\t'))
        k--;
    rd->line[k] = '\0';
    return true;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * A number as fio prints it for reading: "75", "317.00", "101k", "1.2M"
 * (num2str's decimal suffixes).  Returns the end, or NULL when S does not
 * start with a plausible number.
 */
static const char *num(const char *s, double *out)
{
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s))
        return NULL;
    char *end;
    double v = strtod(s, &end);
    static const char suffix[] = "kMGTP";
    const char *p = *end ? strchr(suffix, *end) : NULL;
    if (p) {
        for (const char *q = suffix; q <= p; q++)
            v *= 1000;
        end++;
    }
    if (!isfinite(v) || v < 0 || v > 1e18)
        return NULL;
    *out = v;
    return end;
}

/* The number after KEY ("min=") in S. */
static bool field(const char *s, const char *key, double *out)
{
    const char *p = strstr(s, key);
    return p && num(p + strlen(key), out);
}

/*
 * A size as fio prints it: "8192B", "16.0KiB", "2364MiB" (powers of 1024),
 * "826MB" (powers of 1000), fio 2.x's "4K" (1024).  Returns the end.
 */
static const char *size_at(const char *s, double *out)
{
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s))
        return NULL;
    char *end;
    double v = strtod(s, &end);
    static const char prefixes[] = "KMGTP";
    const char *p = *end ? strchr(prefixes, toupper((unsigned char)*end)) : NULL;
    if (p) {
        end++;
        double base = 1024;
        if (end[0] == 'i' && end[1] == 'B')
            end += 2;
        else if (end[0] == 'B') {
            base = 1000;
            end++;
        }
        for (const char *q = prefixes; q <= p; q++)
            v *= base;
    } else if (*end == 'B') {
        end++;
    }
    if (!isfinite(v) || v < 0 || v > 1e18)
        return NULL;
    *out = v;
    return end;
}

/* "(usec)" after WORD in S: nanoseconds per unit, 0 when not there. */
static double unit_after(const char *s)
{
    const char *p = strchr(s, '(');
    if (!p)
        return 0;
    if (starts(p, "(nsec)"))
        return 1;
    if (starts(p, "(usec)"))
        return 1e3;
    if (starts(p, "(msec)"))
        return 1e6;
    if (starts(p, "(sec)"))
        return 1e9;
    return 0;
}

/* ---- what one job section and one job block say ---- */

struct hdr { /* "NAME: (g=0): rw=..., bs=..., ioengine=..., iodepth=N" */
    char name[128];
    char rw[32];
    char engine[32];
    char iodepth[16];
    double bs[2][2]; /* [read|write][min|max] bytes; 0 when unknown */
};

struct tdir {
    bool seen;
    double iops, io_bytes, runtime_ms;
    bool have[2];     /* [0] clat, [1] lat */
    double lat[2][4]; /* min, max, mean, stdev in ns */
    int pct_kind;     /* 0 none, 1 clat, 2 lat */
    size_t n_pct;
    double pct[TW_RESULT_MAX_PCT][2];
    bool series;
    double s[5]; /* per-second IOPS min, max, avg, stdev, samples */
};

struct tjob {
    char name[128];
    long line;
    long groupid;
    int jobs;
    double err;
    char etext[160];
    double ts; /* the date of the header, epoch seconds; 0 if none */
    struct tdir d[2];
    bool have_cpu, have_issued;
    double usr, sys;
    double issued[2];
};

struct state {
    struct hdr hdrs[MAX_HDRS];
    size_t n_hdrs;
    char version[64];
    struct tjob job; /* the block being read */
    bool in_job;
    int dir;     /* direction lines go to: -1 none, 0 read, 1 write */
    int pct_dir; /* percentile lines go to: -1 none */
    double pct_mult;
    double run_ms[2]; /* "run=a-bmsec" of the group status, fallback */
    long blocks;
    long first_block_line;
    long last_block_line;
    bool status_since_block; /* a "Run status group" line after the last job result */
    int reports;             /* --status-interval: reports before the final one */
    double ts;
    json_t *jobs, *disks;
    long disk_stats_line; /* the "Disk stats (" line of the last report, 0 if none */
    long head_line;       /* the last stripe head's disk line */
    size_t head_at;       /* its index in disks */
};

static void copy_until(char *dst, size_t dstlen, const char *s, const char *stop)
{
    size_t n = strcspn(s, stop);
    if (n >= dstlen)
        n = dstlen - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* "(R) 8192B-8192B" or fio 2.x's "4K-4K": a min-max pair of sizes. */
static const char *bs_range(const char *s, double out[2])
{
    const char *e = size_at(s, &out[0]);
    if (!e)
        return NULL;
    out[1] = out[0];
    if (*e == '-') {
        const char *e2 = size_at(e + 1, &out[1]);
        if (e2)
            e = e2;
    }
    return e;
}

static void parse_header(struct state *st, const char *l)
{
    if (st->n_hdrs >= MAX_HDRS)
        return;
    struct hdr *h = &st->hdrs[st->n_hdrs++];
    memset(h, 0, sizeof(*h));
    const char *g = strstr(l, ": (g=");
    size_t n = (size_t)(g - l);
    if (n >= sizeof(h->name))
        n = sizeof(h->name) - 1;
    memcpy(h->name, l, n);
    const char *p;
    if ((p = strstr(g, "rw=")))
        copy_until(h->rw, sizeof(h->rw), p + 3, ", ");
    if ((p = strstr(g, "ioengine=")))
        copy_until(h->engine, sizeof(h->engine), p + 9, ", ");
    if ((p = strstr(g, "iodepth=")))
        copy_until(h->iodepth, sizeof(h->iodepth), p + 8, ", ");
    if ((p = strstr(g, "bs="))) {
        const char *r = strstr(p, "(R)");
        const char *w = strstr(p, "(W)");
        if (r) {
            bs_range(r + 3, h->bs[0]);
            if (w)
                bs_range(w + 3, h->bs[1]);
        } else if ((r = bs_range(p + 3, h->bs[0])) && *r == '/') {
            bs_range(r + 1, h->bs[1]); /* fio 2.x: read/write/trim */
        }
    }
}

/* Reads an unsigned decimal of at most 9 digits. */
static bool uint_at(const char **s, long *out)
{
    const char *p = *s;
    long v = 0;
    int n = 0;
    while (isdigit((unsigned char)*p) && n < 9) {
        v = v * 10 + (*p++ - '0');
        n++;
    }
    if (n == 0)
        return false;
    *out = v;
    *s = p;
    return true;
}

/* "Sun Nov 29 22:36:23 2026" into epoch seconds; 0 when it isn't one. */
static double parse_date(const char *s)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    while (isalpha((unsigned char)*s)) /* weekday */
        s++;
    while (*s == ' ')
        s++;
    const char *m = NULL;
    for (size_t i = 0; i < 12 && !m; i++)
        if (strncmp(s, months + 3 * i, 3) == 0)
            m = months + 3 * i;
    if (!m)
        return 0;
    s += 3;
    while (*s == ' ')
        s++;
    long day, hh, mm, ss, year;
    if (!uint_at(&s, &day) || *s++ != ' ' || !uint_at(&s, &hh) || *s++ != ':' ||
        !uint_at(&s, &mm) || *s++ != ':' || !uint_at(&s, &ss) || *s++ != ' ' || !uint_at(&s, &year))
        return 0;
    if (day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 || year < 1970 || year > 9999)
        return 0;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = (int)year - 1900;
    tm.tm_mon = (int)((m - months) / 3);
    tm.tm_mday = (int)day;
    tm.tm_hour = (int)hh;
    tm.tm_min = (int)mm;
    tm.tm_sec = (int)ss;
    /* fio prints the local time of the machine it ran on without its zone;
     * it is taken as UTC, which is right on the usual cloud VM. */
    time_t t = timegm(&tm);
    return t > 0 ? (double)t : 0;
}

/* "NAME: (groupid=0, jobs=1): err= 0: pid=3187: Sun Nov 29 22:36:23 2026" */
static void parse_block_start(struct state *st, const char *l, long line)
{
    struct tjob *j = &st->job;
    memset(j, 0, sizeof(*j));
    st->in_job = true;
    st->dir = st->pct_dir = -1;
    j->line = line;
    const char *g = strstr(l, ": (groupid=");
    size_t n = (size_t)(g - l);
    if (n >= sizeof(j->name))
        n = sizeof(j->name) - 1;
    memcpy(j->name, l, n);
    double v;
    j->jobs = field(g, "jobs=", &v) && v >= 1 && v <= MAX_BLOCKS ? (int)v : 1;
    j->groupid = field(g, "groupid=", &v) && v <= 1e6 ? (long)v : 0;
    const char *e = strstr(g, "err=");
    if (e && num(e + 4, &j->err)) {
        /* "err= 5 (file:io_u.c:1756, func=io_u error, error=...): pid=" */
        const char *open = strchr(e, '(');
        const char *close = strstr(e, "): pid=");
        if (j->err != 0 && open && close && open < close) {
            size_t k = (size_t)(close - open - 1);
            if (k >= sizeof(j->etext))
                k = sizeof(j->etext) - 1;
            memcpy(j->etext, open + 1, k);
            j->etext[k] = '\0';
        }
    }
    const char *p = strstr(g, " pid="); /* not the "pid=" of "groupid=" */
    if (p && (p = strchr(p, ':')))
        j->ts = parse_date(p + 1 + strspn(p + 1, " "));
}

/* "read: IOPS=101k, BW=788MiB/s (826MB/s)(2364MiB/3001msec)" */
static void parse_dir_line(struct tdir *d, const char *l)
{
    d->seen = true;
    field(l, "IOPS=", &d->iops);
    const char *ms = strstr(l, "msec)");
    const char *slash = NULL, *open = NULL;
    for (const char *p = l; ms && p < ms; p++) {
        if (*p == '(')
            open = p;
        else if (*p == '/')
            slash = p;
    }
    if (ms && open && slash && open < slash) {
        size_at(open + 1, &d->io_bytes);
        num(slash + 1, &d->runtime_ms);
    }
}

/* "lat (usec): min=105, max=1605, avg=317.00, stdev=103.99" */
static void parse_lat_line(struct tdir *d, int kind, const char *l)
{
    double mult = unit_after(l);
    double v[4];
    if (mult == 0 || !field(l, "min=", &v[0]) || !field(l, "max=", &v[1]) ||
        !field(l, "avg=", &v[2]) || !field(l, "stdev=", &v[3]))
        return;
    d->have[kind] = true;
    for (int i = 0; i < 4; i++)
        d->lat[kind][i] = v[i] * mult;
}

/* "|  1.00th=[  243],  5.00th=[  253], ..." in the block's unit */
static void parse_pct_line(struct tdir *d, double mult, const char *line)
{
    const char *s = line;
    const char *t;
    while ((t = strstr(s, "th=[")) && d->n_pct < TW_RESULT_MAX_PCT) {
        const char *b = t;
        while (b > line && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
            b--;
        double p, v;
        if (num(b, &p) && p > 0 && p <= 100 && num(t + 4, &v)) {
            d->pct[d->n_pct][0] = p;
            d->pct[d->n_pct][1] = v * mult;
            d->n_pct++;
        }
        s = t + 4;
    }
}

/* "issued rwts: total=302573,0,0,0 short=..." (fio 3.0: "issued rwt:") */
static void parse_issued(struct tjob *j, const char *l)
{
    const char *p = strstr(l, "total=");
    if (!p)
        return;
    const char *e = num(p + 6, &j->issued[0]);
    if (e && *e == ',' && num(e + 1, &j->issued[1]))
        j->have_issued = true;
}

/* "READ: bw=..., io=..., run=3001-3001msec" */
static void parse_run_status(struct state *st, int d, const char *l)
{
    const char *p = strstr(l, "run=");
    double a, b;
    const char *e = p ? num(p + 4, &a) : NULL;
    if (e && *e == '-' && num(e + 1, &b))
        st->run_ms[d] = fmax(st->run_ms[d], fmax(a, b));
}

/* "a/b" after KEY in L into V[2]. */
static bool pair(const char *l, const char *key, double v[2])
{
    const char *p = strstr(l, key);
    const char *e = p ? num(p + strlen(key), &v[0]) : NULL;
    return e && *e == '/' && num(e + 1, &v[1]);
}

/* "dm-8: ios=45512/0, merge=0/0, ticks=95318/0, ..., util=97.12%, aggrios=..."
 * fio ends every disk line with util= (a device's own figures) or its
 * aggr* fields; a line without util= was cut. */
static enum tw_err parse_disk(struct state *st, const char *l, long no, struct tw_error *err)
{
    if (!strstr(l, "util="))
        return tw_error_set_at(err, TW_EPARSE, no, 0,
                               "the disk line at line %ld ends before its util= figure: the "
                               "output was cut short; give fio's whole output",
                               no);
    char name[64];
    copy_until(name, sizeof(name), l, ":");
    json_t *o = json_pack("{s:s}", "name", name);
    if (!o)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
    double v, io[2], ticks[2];
    if (pair(l, " ios=", io) || pair(l, ":ios=", io)) {
        json_object_set_new(o, "read_ios", json_real(io[0]));
        json_object_set_new(o, "write_ios", json_real(io[1]));
    }
    if (pair(l, " ticks=", ticks)) {
        json_object_set_new(o, "read_ticks", json_real(ticks[0]));
        json_object_set_new(o, "write_ticks", json_real(ticks[1]));
    }
    if (strstr(l, "aggr") && !strstr(l, "aggrutil=")) {
        json_decref(o);
        return tw_error_set_at(err, TW_EPARSE, no, 0,
                               "the stripe line at line %ld ends before its aggrutil= figure: "
                               "the output was cut short; give fio's whole output",
                               no);
    }
    if (field(l, "aggrios=", &v)) {
        json_object_set_new(o, "aggr_read_ios", json_real(v));
        st->head_line = no;
        st->head_at = json_array_size(st->disks);
    }
    if (json_array_append_new(st->disks, o) != 0)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
    return TW_OK;
}

/* A stripe's member lines must make up its figures; fewer ios than this
 * share of the head's is a list cut short, not merges. */
#define MEMBER_IOS_SHARE 0.9

static double disk_ios(const json_t *d)
{
    return json_number_value(json_object_get(d, "read_ios")) +
           json_number_value(json_object_get(d, "write_ios"));
}

/*
 * The disk statistics of the final report, which fio prints last, so that
 * a text cut at a line end there shows here: a "Disk stats" line with no
 * disk after it, a stripe head (the last: an intermediate layer's is
 * followed by its own members) with no member lines, or members whose ios
 * fall clearly short of the head's.
 */
static enum tw_err check_disks(const struct state *st, struct tw_error *err)
{
    size_t n = json_array_size(st->disks);
    if (st->disk_stats_line && n == 0)
        return tw_error_set_at(err, TW_EPARSE, st->disk_stats_line, 0,
                               "the output's \"Disk stats\" at line %ld has no disk line "
                               "after it: it was cut short; give fio's whole output",
                               st->disk_stats_line);
    if (!st->head_line || st->head_at >= n)
        return TW_OK;
    const json_t *head = json_array_get(st->disks, st->head_at);
    double members = 0;
    size_t count = 0;
    for (size_t i = st->head_at + 1; i < n; i++) {
        const json_t *d = json_array_get(st->disks, i);
        if (!json_object_get(d, "aggr_read_ios")) {
            members += disk_ios(d);
            count++;
        }
    }
    const char *name = json_string_value(json_object_get(head, "name"));
    if (count == 0)
        return tw_error_set_at(err, TW_EPARSE, st->head_line, 0,
                               "the stripe %s at line %ld has no member disk lines after it: "
                               "the output was cut short; give fio's whole output",
                               name ? name : "?", st->head_line);
    if (members < MEMBER_IOS_SHARE * disk_ios(head))
        return tw_error_set_at(err, TW_EPARSE, st->head_line, 0,
                               "the %zu member disk lines after the stripe %s at line %ld "
                               "count %.0f ios, far fewer than its %.0f: the list was cut "
                               "short; give fio's whole output",
                               count, name ? name : "?", st->head_line, members, disk_ios(head));
    return TW_OK;
}

static const struct hdr *find_hdr(const struct state *st, const char *name)
{
    for (size_t i = 0; i < st->n_hdrs; i++)
        if (strcmp(st->hdrs[i].name, name) == 0)
            return &st->hdrs[i];
    return st->n_hdrs ? &st->hdrs[0] : NULL;
}

/* ---- one block into fio's JSON shape ---- */

static json_t *lat_obj(const double v[4], double n)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f}", "min", v[0], "max", v[1], "mean", v[2], "stddev",
                     v[3], "N", n);
}

static json_t *dir_json(const struct state *st, const struct tjob *j, int k, const double bs[2])
{
    const struct tdir *d = &j->d[k];
    double rt = d->runtime_ms > 0 ? d->runtime_ms : st->run_ms[k];
    double ios, bytes;
    /* The exact count when fio printed it, then bytes from a fixed block
     * size; else the rounded summary figures. */
    if (j->have_issued)
        ios = j->issued[k];
    else if (bs[0] > 0 && d->io_bytes > 0)
        ios = floor(d->io_bytes / ((bs[0] + bs[1]) / 2) + 0.5);
    else
        ios = floor(d->iops * rt / 1000 + 0.5);
    bytes = bs[0] > 0 && bs[0] == bs[1] ? ios * bs[0] : d->io_bytes;
    double iops = rt > 0 ? ios * 1000 / rt : d->iops;
    double bw = rt > 0 ? bytes * 1000 / rt : 0;
    json_t *o = json_pack("{s:f,s:f,s:f,s:f,s:f}", "total_ios", ios, "io_bytes", bytes, "iops",
                          iops, "bw_bytes", bw, "runtime", rt);
    if (!o)
        return NULL;
    static const char *const lat_keys[2] = {"clat_ns", "lat_ns"};
    for (int kind = 0; kind < 2; kind++) {
        json_t *l = NULL;
        if (d->have[kind])
            l = lat_obj(d->lat[kind], ios);
        else if (d->pct_kind == kind + 1)
            l = json_pack("{s:f}", "N", ios);
        if (l && d->pct_kind == kind + 1) {
            json_t *p = json_object();
            for (size_t i = 0; p && i < d->n_pct; i++) {
                char key[32];
                snprintf(key, sizeof(key), "%f", d->pct[i][0]);
                json_object_set_new(p, key, json_real(d->pct[i][1]));
            }
            json_object_set_new(l, "percentile", p);
        }
        if (l)
            json_object_set_new(o, lat_keys[kind], l);
    }
    if (d->series) {
        json_object_set_new(o, "iops_min", json_real(d->s[0]));
        json_object_set_new(o, "iops_max", json_real(d->s[1]));
        json_object_set_new(o, "iops_mean", json_real(d->s[2]));
        json_object_set_new(o, "iops_stddev", json_real(d->s[3]));
        json_object_set_new(o, "iops_samples", json_real(d->s[4]));
    }
    return o;
}

static enum tw_err finish_block(struct state *st, struct tw_error *err)
{
    if (!st->in_job)
        return TW_OK;
    st->in_job = false;
    struct tjob *j = &st->job;
    const struct hdr *h = find_hdr(st, j->name);
    if (!h)
        return tw_error_set_at(err, TW_EPARSE, j->line, 0,
                               "the result of job %s at line %ld has no job header line before "
                               "it (\"%s: (g=0): rw=..., bs=..., ioengine=..., iodepth=...\"), "
                               "so its method is unknown: give fio's output from its first line",
                               j->name, j->line, j->name);
    char bs[64], n[16];
    snprintf(bs, sizeof(bs), "%.0f,%.0f", h->bs[0][0], h->bs[1][0] > 0 ? h->bs[1][0] : h->bs[0][0]);
    snprintf(n, sizeof(n), "%d", j->jobs);
    json_t *opts = json_pack("{s:s,s:s,s:s,s:s,s:s}", "rw", h->rw, "ioengine", h->engine, "iodepth",
                             h->iodepth, "bs", bs, "numjobs", n);
    json_t *o = json_pack("{s:s,s:f,s:o,s:I}", "jobname", j->name, "error", j->err,
                          "job options", opts, "groupid", (json_int_t)j->groupid);
    if (!o)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
    if (h->bs[0][0] <= 0)
        json_object_del(opts, "bs"); /* unknown: fio's default applies */
    if (!h->iodepth[0])
        json_object_del(opts, "iodepth");
    if (j->jobs > 1) /* one block for several processes */
        json_object_set_new(opts, "group_reporting", json_string("1"));
    if (j->have_issued && j->issued[0] + j->issued[1] > 0) {
        char mix[16];
        snprintf(mix, sizeof(mix), "%.0f",
                 floor(100 * j->issued[0] / (j->issued[0] + j->issued[1]) + 0.5));
        json_object_set_new(opts, TW_FIO_TEXT_MIX_KEY, json_string(mix));
    }
    if (j->etext[0])
        json_object_set_new(o, "error_text", json_string(j->etext));
    double rt = 0;
    for (int k = 0; k < 2; k++) {
        if (!j->d[k].seen)
            continue;
        json_t *d = dir_json(st, j, k, h->bs[k]);
        rt = fmax(rt, json_number_value(json_object_get(d, "runtime")));
        json_object_set_new(o, k ? "write" : "read", d);
    }
    /* As in fio's JSON: CPU in percent of the job runtime, which for a
     * group is the sum over its processes (taken as equally long). */
    json_object_set_new(o, "job_runtime", json_real(rt * j->jobs));
    json_object_set_new(o, "usr_cpu", json_real(j->usr));
    json_object_set_new(o, "sys_cpu", json_real(j->sys));
    if (json_array_append_new(st->jobs, o) != 0)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
    if (st->ts == 0)
        st->ts = j->ts;
    return TW_OK;
}

/* A line of a job block: figures of a direction or of the job. */
static void job_line(struct state *st, const char *l)
{
    struct tjob *j = &st->job;
    struct tdir *d = st->dir >= 0 ? &j->d[st->dir] : NULL;
    double v;
    if (l[0] == '|') {
        if (st->pct_dir >= 0)
            parse_pct_line(&j->d[st->pct_dir], st->pct_mult, l);
        return;
    }
    st->pct_dir = -1;
    if (starts(l, "read: ") || starts(l, "write: ")) {
        st->dir = l[0] == 'w';
        parse_dir_line(&j->d[st->dir], l);
    } else if (starts(l, "trim: ") || starts(l, "fsync/")) {
        st->dir = -1; /* not a direction tierwise reports */
    } else if (d && (starts(l, "clat (") || starts(l, "lat ("))) {
        parse_lat_line(d, l[0] == 'l', l);
    } else if (strstr(l, "percentiles (")) {
        /* Total latency percentiles (lat_percentiles=1) win over the
         * default completion ones; slat, sync and prio ones are skipped. */
        int kind = starts(l, "lat percentiles (") ? 2 : starts(l, "clat percentiles (") ? 1 : 0;
        if (d && kind && kind >= d->pct_kind) {
            d->pct_kind = kind;
            d->n_pct = 0;
            st->pct_dir = st->dir;
            st->pct_mult = unit_after(l);
            if (st->pct_mult == 0)
                st->pct_dir = -1;
        }
    } else if (d && starts(l, "iops") && l[4 + strspn(l + 4, " ")] == ':') {
        d->series = field(l, "min=", &d->s[0]) && field(l, "max=", &d->s[1]) &&
                    field(l, "avg=", &d->s[2]) && field(l, "stdev=", &d->s[3]) &&
                    field(l, "samples=", &d->s[4]);
    } else if (starts(l, "cpu") && l[3 + strspn(l + 3, " ")] == ':') {
        j->have_cpu = field(l, "usr=", &j->usr) && field(l, "sys=", &v);
        j->sys = j->have_cpu ? v : 0;
        st->dir = -1;
    } else if (starts(l, "issued")) {
        parse_issued(j, l);
    }
}

static enum tw_err parse_lines(struct state *st, const char *buf, size_t len, struct tw_error *err)
{
    struct reader rd = {.buf = buf, .len = len};
    bool in_disks = false, any = false;
    enum tw_err rc;
    while (read_line(&rd)) {
        const char *l = rd.line;
        if (!l[0]) {
            in_disks = false;
            continue;
        }
        if (!any && isdigit((unsigned char)l[0]) && strstr(l, ";fio-"))
            return tw_error_set_at(err, TW_EPARSE, rd.no, 1,
                                   "this is fio's terse (--minimal) output, "
                                   "which tierwise does not read: re-run fio "
                                   "with --output-format=json");
        any = true;
        if (in_disks && strstr(l, ": ios=")) {
            if ((rc = parse_disk(st, l, rd.no, err)) != TW_OK)
                return rc;
            continue;
        }
        if (in_disks && rd.pos >= rd.len && !strchr(l, ' '))
            return tw_error_set_at(err, TW_EPARSE, rd.no, 0,
                                   "the output ends inside its disk statistics at line %ld "
                                   "(\"%s\" is no disk line): it was cut short; give fio's "
                                   "whole output",
                                   rd.no, l);
        in_disks = false;
        if (strstr(l, ": (groupid=")) {
            if ((rc = finish_block(st, err)) != TW_OK)
                return rc;
            if (st->status_since_block && st->blocks > 0) {
                /* A job result after a summary: fio's --status-interval
                 * wrote a whole report, and this begins the next one.  Only
                 * the last (fio's final report) counts. */
                json_array_clear(st->jobs);
                json_array_clear(st->disks);
                st->disk_stats_line = st->head_line = 0;
                st->blocks = 0;
                st->first_block_line = 0;
                st->run_ms[0] = st->run_ms[1] = 0;
                st->ts = 0;
                st->reports++;
            }
            st->status_since_block = false;
            st->last_block_line = rd.no;
            if (++st->blocks > MAX_BLOCKS)
                return tw_error_set_at(err, TW_EPARSE, rd.no, 0,
                                       "the output has more than %d job "
                                       "results, more than a result can hold",
                                       MAX_BLOCKS);
            if (!st->first_block_line)
                st->first_block_line = rd.no;
            parse_block_start(st, l, rd.no);
        } else if (strstr(l, ": (g=")) {
            parse_header(st, l);
        } else if (starts(l, "fio-") && isdigit((unsigned char)l[4]) && !strchr(l, ' ') &&
                   !st->version[0]) {
            copy_until(st->version, sizeof(st->version), l, "");
        } else if (starts(l, "Run status group")) {
            if ((rc = finish_block(st, err)) != TW_OK)
                return rc;
            st->status_since_block = true;
        } else if (starts(l, "Disk stats (")) {
            if ((rc = finish_block(st, err)) != TW_OK)
                return rc;
            in_disks = true;
            st->disk_stats_line = rd.no;
        } else if (starts(l, "READ: ") || starts(l, "WRITE: ")) {
            parse_run_status(st, l[0] == 'W', l);
        } else if (st->in_job) {
            job_line(st, l);
        }
    }
    if ((rc = finish_block(st, err)) != TW_OK)
        return rc;
    if (!any)
        return tw_error_set(err, TW_EPARSE,
                            "the file is empty: give fio's normal output or "
                            "its --output-format=json output");
    if (st->blocks == 0)
        return tw_error_set(err, TW_EPARSE,
                            "no job result (a line like \"NAME: (groupid=0, "
                            "jobs=1): err= 0: ...\") was found, so this is not "
                            "fio's output: give fio's whole normal output, or "
                            "run it with --output-format=json");
    /* fio ends its report with each group's summary ("Run status group
     * 0 (all jobs):"); without it the text was cut, and what it lacks
     * (the disks, other jobs) can't be told. */
    if (!st->status_since_block)
        return tw_error_set_at(err, TW_EPARSE, st->last_block_line, 0,
                               "the output ends after the job result at line %ld without "
                               "fio's summary (\"Run status group 0 (all jobs):\"): it was cut "
                               "short; give fio's whole output",
                               st->last_block_line);
    return check_disks(st, err);
}

enum tw_err tw_fio_import_text(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err)
{
    return tw_fio_import_text_with(buf, len, NULL, r, err);
}

enum tw_err tw_fio_import_text_with(const char *buf, size_t len, const struct tw_fio_hints *h,
                                    struct tw_result *r, struct tw_error *err)
{
    tw_result_init(r);
    r->source = TW_SRC_FIO_TEXT;
    if (!buf)
        len = 0;
    struct state *st = calloc(1, sizeof(*st));
    json_t *root = json_object();
    if (st) {
        st->jobs = json_array();
        st->disks = json_array();
    }
    enum tw_err rc = TW_ENOMEM;
    char *doc = NULL;
    /* Hints that don't parse are refused before the output is read.  Their
     * message names the job file's line itself; err gets no line, which
     * would be taken for one of fio's output. */
    json_t *probe = NULL;
    struct tw_error he = {0};
    if (h && h->job_file &&
        (rc = tw_fio_jobfile_parse(h->job_file, h->job_file_len, &probe, &he)) != TW_OK) {
        tw_error_set(err, rc, "%s", he.msg);
        goto out;
    }
    json_decref(probe);
    probe = NULL;
    if (h && h->fio_args &&
        (rc = tw_fio_args_parse(h->fio_args, h->fio_args_len, &probe, &he)) != TW_OK) {
        tw_error_set(err, rc, "%s", he.msg);
        goto out;
    }
    json_decref(probe);
    rc = TW_ENOMEM;
    if (!st || !root || !st->jobs || !st->disks) {
        tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
        goto out;
    }
    if ((rc = parse_lines(st, buf, len, err)) != TW_OK)
        goto out;
    json_object_set(root, "jobs", st->jobs);
    json_object_set(root, "disk_util", st->disks);
    if (st->version[0])
        json_object_set_new(root, "fio version", json_string(st->version));
    if (st->ts > 0)
        json_object_set_new(root, "timestamp", json_real(st->ts));
    doc = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!doc || json_array_size(st->jobs) != (size_t)st->blocks) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory reading fio's output");
        goto out;
    }
    rc = tw_fio_import_doc(doc, strlen(doc), h, true, r, err);
    r->source = TW_SRC_FIO_TEXT;
    if (rc != TW_OK && err && err->line == 0) {
        /* The translation has no lines of its own: point at the first job
         * result, whose header line gave the method. */
        err->line = st->first_block_line;
        err->column = 0;
    }
out:
    free(doc);
    json_decref(root);
    if (st) {
        json_decref(st->jobs);
        json_decref(st->disks);
    }
    free(st);
    return rc;
}
