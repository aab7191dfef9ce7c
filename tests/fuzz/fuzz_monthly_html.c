/* fuzz_monthly_html.c - the monthly report's HTML page (service/
 * monthly_html.c) with the store's texts taken from arbitrary bytes: the
 * names of a VM, a disk and a group, a verdict, its reason, a book's
 * source, a power state, an action's kind, disk and state, a note (the
 * input's lines, in that order; agents and ARM write them).  Whatever they
 * hold, the page is written whole, is UTF-8 without control bytes and
 * without direction or format controls (U+202A-E, U+2066-9, U+200E/F,
 * U+061C, which would reorder its text), and no text of the input becomes
 * markup: the page with the input's texts has
 * exactly as many '<' as the same page with texts of the same shape made
 * of 'x'. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/monthly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FIELDS 11

struct out {
    size_t len, lt;
    bool bad;
    unsigned char tail[4]; /* a UTF-8 sequence cut between two chunks */
    size_t ntail;
};

/* The bytes of a valid UTF-8 sequence at P (LEFT there), 0 broken, a
 * control byte other than tab and line feed, or a direction control. */
static size_t seq(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    if (c < 0x80)
        return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t';
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    if (n == 0 || left < n)
        return left < n && n ? (size_t)-1 : 0; /* -1: continues in the next chunk */
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* a direction or format control (U+061C, U+200E/F, U+202A-E,
     * U+2066-9) would reorder the page's text: the page has none */
    if (n == 2 && p[0] == 0xd8 && p[1] == 0x9c)
        return 0;
    if (n == 3 && p[0] == 0xe2 &&
        ((p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
         (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
        return 0;
    return n;
}

static enum tw_err sink(void *arg, const char *buf, size_t len)
{
    struct out *o = arg;
    unsigned char b[FIELDS + 65536 + 8];
    size_t n = 0;
    memcpy(b, o->tail, o->ntail);
    n = o->ntail;
    if (len > sizeof(b) - n)
        abort(); /* a chunk far larger than the writer's 64 KiB */
    memcpy(b + n, buf, len);
    n += len;
    o->ntail = 0;
    for (size_t i = 0; i < n;) {
        size_t k = seq(b + i, n - i);
        if (k == (size_t)-1) {
            memcpy(o->tail, b + i, n - i);
            o->ntail = n - i;
            break;
        }
        if (k == 0) {
            o->bad = true;
            k = 1;
        }
        if (b[i] == '<')
            o->lt++;
        i += k;
    }
    o->len += len;
    return TW_OK;
}

/* A model of two disks in one group, a verdict, a book, a missing region,
 * a week with one VM, a note, with the texts F[0..FIELDS). */
static void page(char f[FIELDS][600], struct out *o)
{
    struct tw_mr_disk d[2];
    struct tw_mr_sku_time st[2];
    struct tw_mr_group g;
    struct tw_mr_book bk;
    struct tw_mr_missing ms;
    struct tw_mr_span sp;
    struct tw_mr_mark mk;
    struct tw_mr_week_vm wv;
    char *notes[1] = {f[10]};
    struct tw_mr_model m;
    memset(&m, 0, sizeof(m));
    memset(d, 0, sizeof(d));
    memset(st, 0, sizeof(st));
    memset(&g, 0, sizeof(g));
    memset(&bk, 0, sizeof(bk));
    memset(&ms, 0, sizeof(ms));
    memset(&sp, 0, sizeof(sp));
    memset(&mk, 0, sizeof(mk));
    memset(&wv, 0, sizeof(wv));
    snprintf(m.month, sizeof(m.month), "2026-11");
    snprintf(m.currency, sizeof(m.currency), "EUR");
    m.decimals = 2;
    m.from_ns = INT64_C(1793491200) * 1000000000; /* 2026-11-01 */
    m.to_ns = m.month_end_ns = m.from_ns + INT64_C(30) * 86400 * 1000000000;
    snprintf(m.generated_at, sizeof(m.generated_at), "2026-12-01T06:00:00Z");
    for (int i = 0; i < 2; i++) {
        d[i].vm = f[0];
        d[i].disk = f[1];
        d[i].group = f[2];
        d[i].location = f[1];
        d[i].subscription_id = d[i].resource_group = d[i].vm_size = d[i].resource_id = "";
        snprintf(d[i].original_sku, sizeof(d[i].original_sku), "%.31s", f[3]);
        /* the first disk still on its original SKU, the second moved off it */
        snprintf(d[i].sku, sizeof(d[i].sku), "%s%.30s", i ? "!" : "", f[3]);
        snprintf(st[i].sku, sizeof(st[i].sku), "%.31s", f[3]);
        st[i].seconds = 3600 * 730;
        d[i].skus = &st[i];
        d[i].n_skus = 1;
        d[i].priced = i == 0;
        d[i].unpriced = i == 0 ? NULL : "no_book";
        snprintf(d[i].unpriced_why, sizeof(d[i].unpriced_why), "%s", f[4]);
        d[i].cost_r = tw_money_micros(i == 0 ? 12340000 : 0);
        d[i].baseline_r = tw_money_micros(i == 0 ? 22340000 : 0);
        d[i].realised_r = tw_money_micros(i == 0 ? 10000000 : 0);
        snprintf(d[i].policy, sizeof(d[i].policy), "%.*s", (int)sizeof(d[i].policy) - 1, f[3]);
        d[i].possible_known = true;
        d[i].excluded = i == 1 ? f[4] : NULL;
        snprintf(d[i].excluded_why, sizeof(d[i].excluded_why), "%s", f[4]);
        snprintf(d[i].verdict, sizeof(d[i].verdict), "%.15s", f[5]);
        snprintf(d[i].verdict_reason, sizeof(d[i].verdict_reason), "%s", f[6]);
        snprintf(d[i].judged_at, sizeof(d[i].judged_at), "%.39s", f[6]);
        d[i].measured_iops = 100;
        d[i].expected_iops = i == 0 ? 200 : NAN;
        d[i].measured_mbps = NAN;
        d[i].expected_mbps = 10;
        d[i].drift_seconds = 7200;
        d[i].running_metered_seconds = i * 3600;
    }
    m.n_disks = 2;
    m.disks = d;
    g.key = f[2];
    g.first = 0;
    g.n = 2;
    g.t.disks = 2;
    g.t.unpriced = 1;
    g.t.cost_r = d[0].cost_r;
    g.t.baseline_r = d[0].baseline_r;
    g.t.realised_r = d[0].realised_r;
    m.n_groups = 1;
    m.groups = &g;
    m.fleet = g.t;
    snprintf(bk.region, sizeof(bk.region), "%.47s", f[1]);
    snprintf(bk.source, sizeof(bk.source), "%s", f[7]);
    snprintf(bk.fetched_at, sizeof(bk.fetched_at), "%.39s", f[7]);
    bk.from_ns = m.from_ns;
    bk.to_ns = m.to_ns;
    bk.after = true;
    m.n_books = 1;
    m.books = &bk;
    snprintf(ms.region, sizeof(ms.region), "%.47s", f[2]);
    snprintf(ms.why, sizeof(ms.why), "%s", f[4]);
    ms.disks = 1;
    m.n_missing = 1;
    m.missing = &ms;
    m.n_notes = 1;
    m.notes = notes;
    m.n_policies = 0;
    m.week_from_ns = m.from_ns + INT64_C(22) * 86400 * 1000000000;
    m.week_to_ns = m.week_from_ns + INT64_C(7) * 86400 * 1000000000;
    sp.from_ns = m.week_from_ns - 5;
    sp.to_ns = m.week_from_ns + INT64_C(86400) * 1000000000;
    snprintf(sp.state, sizeof(sp.state), "%.31s", f[8]);
    mk.at_ns = m.week_from_ns + INT64_C(3600) * 1000000000;
    snprintf(mk.kind, sizeof(mk.kind), "%.15s", f[9]);
    snprintf(mk.disk, sizeof(mk.disk), "%.127s", f[1]);
    snprintf(mk.to_sku, sizeof(mk.to_sku), "%.31s", f[3]);
    snprintf(mk.state, sizeof(mk.state), "%.15s", f[8]);
    wv.vm = f[0];
    wv.n_spans = 1;
    wv.spans = &sp;
    wv.n_marks = 1;
    wv.marks = &mk;
    m.n_week = 1;
    m.week = &wv;
    struct tw_error err;
    tw_error_clear(&err);
    if (tw_mr_write_html(&m, sink, o, &err) != TW_OK)
        abort(); /* no text from the store makes the page fail */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char f[FIELDS][600], x[FIELDS][600];
    size_t k = 0, at = 0;
    memset(f, 0, sizeof(f));
    for (size_t i = 0; i < size && k < FIELDS; i++) {
        if (data[i] == '\n') {
            k++;
            at = 0;
        } else if (data[i] != 0 && at < sizeof(f[0]) - 1) {
            f[k][at++] = (char)data[i];
        }
    }
    /* the same page with plain texts of the same shape (each byte an 'x',
     * a '/' kept, which splits a group's key, and a "running" state kept,
     * which draws no span): as many '<' */
    for (size_t i = 0; i < FIELDS; i++) {
        size_t n = strlen(f[i]);
        for (size_t j = 0; j < n; j++)
            x[i][j] = f[i][j] == '/' ? '/' : 'x';
        x[i][n] = '\0';
    }
    char state[32];
    snprintf(state, sizeof(state), "%.31s", f[8]);
    if (!strcmp(state, "running"))
        memcpy(x[8], f[8], sizeof(x[8]));
    struct out a = {0}, b = {0};
    page(f, &a);
    page(x, &b);
    if (a.bad || a.ntail || a.len == 0 || a.lt != b.lt)
        abort();
    return 0;
}
