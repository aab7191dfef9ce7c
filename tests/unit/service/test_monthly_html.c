/*
 * test_monthly_html.c - the monthly report's HTML page (tw_mr_write_html)
 * over models built by hand: escaping of the store's text, the headline's
 * figures, the unpriced sentence, the collapse of the disk tables past
 * TW_MR_HTML_ROWS_MAX rows (the disks to look at kept, a line of the rows
 * not shown), the tables' sums parsed back (amounts and hours), a month
 * still running, direction controls, a text of megabytes, chart labels
 * alike, the figures in every state, the size of 100,000 disks, an empty
 * month, an output that fails.
 *
 * `test_service_monthly_html --sample [full|empty|collapsed|partial] FILE`
 * writes a sample page (the ctest tools/monthly-html-markup checks them
 * with a strict parser, tests/tools/html-check.py).
 */
#include "testhelp.h"

#include "service/monthly.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"

/* ---- a model by hand ------------------------------------------------ */

struct fx {
    struct tw_mr_model m;
    char *pool; /* the names */
    size_t pool_used, pool_cap;
    struct tw_mr_sku_time *skus;
    struct tw_mr_span *spans;
    struct tw_mr_mark *marks;
};

static char *fx_str(struct fx *f, const char *s)
{
    size_t n = strlen(s) + 1;
    assert_true(f->pool_used + n <= f->pool_cap);
    char *p = f->pool + f->pool_used;
    memcpy(p, s, n);
    f->pool_used += n;
    return p;
}

static int64_t ns_of(int y, int mo, int d, int h)
{
    struct tw_civil c = {.year = y, .month = mo, .day = d, .hour = h};
    int64_t ns = 0;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    return ns;
}

static void add_total(struct tw_mr_total *t, const struct tw_mr_disk *d)
{
    t->disks++;
    if (!d->priced)
        t->unpriced++;
    if (!strcmp(d->verdict, "under"))
        t->under++;
    t->switches += d->switches;
    t->downgraded_seconds += d->downgraded_seconds;
    t->drift_seconds += d->drift_seconds;
    t->cost_r.micros += d->cost_r.micros;
    t->baseline_r.micros += d->baseline_r.micros;
    t->realised_r.micros += d->realised_r.micros;
    t->transactions_r.micros += d->transactions_r.micros;
    t->possible_r.micros += d->possible_r.micros;
}

/* N disks, two per VM, in G groups (by resource group), priced in eastus,
 * every third one "under", the even ones downgraded for 220 h.  The
 * realised saving of disk I is 35.17 + I cents (so the last is the
 * largest). Totals are the sums of the rounded rows. */
static void fx_build(struct fx *f, size_t n, size_t g, size_t n_policies)
{
    memset(f, 0, sizeof(*f));
    struct tw_mr_model *m = &f->m;
    f->pool_cap = (n + g) * 96 + 4096;
    f->pool = malloc(f->pool_cap);
    assert_non_null(f->pool);
    snprintf(m->month, sizeof(m->month), "2026-11");
    snprintf(m->currency, sizeof(m->currency), "USD");
    m->decimals = 2;
    m->from_ns = ns_of(2026, 11, 1, 0);
    m->to_ns = m->month_end_ns = ns_of(2026, 12, 1, 0);
    snprintf(m->generated_at, sizeof(m->generated_at), "2026-12-01T06:00:00Z");
    m->group_by = TW_MR_BY_RESOURCE_GROUP;
    m->n_disks = n;
    m->disks = n ? calloc(n, sizeof(*m->disks)) : NULL;
    f->skus = n ? calloc(n * 2, sizeof(*f->skus)) : NULL;
    m->n_groups = n ? g : 0;
    m->groups = m->n_groups ? calloc(g, sizeof(*m->groups)) : NULL;
    assert_true(n == 0 || (m->disks && f->skus && m->groups));
    char name[128];
    for (size_t k = 0; k < m->n_groups; k++) {
        snprintf(name, sizeof(name), "00000000-0000-0000-0000-000000000001/rg-%03zu", k);
        m->groups[k].key = fx_str(f, name);
        m->groups[k].first = k * n / g;
        m->groups[k].n = (k + 1) * n / g - k * n / g;
    }
    const char *eastus = fx_str(f, "eastus");
    for (size_t i = 0; i < n; i++) {
        struct tw_mr_disk *d = &m->disks[i];
        size_t gi = i * g / n;
        while (gi + 1 < g && i >= m->groups[gi + 1].first)
            gi++;
        while (i < m->groups[gi].first)
            gi--;
        d->vm_id = (int64_t)(i / 2) + 1;
        d->disk_id = (int64_t)i + 1;
        snprintf(name, sizeof(name), "vm-%05zu", i / 2);
        d->vm = fx_str(f, name);
        snprintf(name, sizeof(name), "vm-%05zu-data%zu", i / 2, i % 2);
        d->disk = fx_str(f, name);
        d->subscription_id = "00000000-0000-0000-0000-000000000001";
        d->resource_group = "rg";
        d->location = eastus;
        d->vm_size = "Standard_D4s_v5";
        d->resource_id = "";
        d->group = m->groups[gi].key;
        d->role = TW_DISK_DATA;
        snprintf(d->original_sku, sizeof(d->original_sku), "Premium_LRS");
        snprintf(d->original_tier, sizeof(d->original_tier), "P30");
        snprintf(d->sku, sizeof(d->sku), "Premium_LRS");
        snprintf(d->tier, sizeof(d->tier), "P30");
        d->skus = &f->skus[2 * i];
        bool down = i % 2 == 0;
        d->n_skus = down ? 2 : 1;
        snprintf(d->skus[0].sku, sizeof(d->skus[0].sku), "Premium_LRS");
        snprintf(d->skus[0].tier, sizeof(d->skus[0].tier), "P30");
        d->skus[0].seconds = down ? 510 * 3600 : 730 * 3600;
        if (down) {
            snprintf(d->skus[1].sku, sizeof(d->skus[1].sku), "StandardSSD_LRS");
            snprintf(d->skus[1].tier, sizeof(d->skus[1].tier), "E30");
            d->skus[1].seconds = 220 * 3600;
            d->downgraded_seconds = 220 * 3600;
            d->switches = 2;
        }
        d->priced = true;
        d->baseline_r = tw_money_micros(135170000);
        d->realised_r = tw_money_micros(down ? 35170000 + (int64_t)i * 10000 : 0);
        d->cost_r = tw_money_micros(d->baseline_r.micros - d->realised_r.micros);
        d->possible_r = tw_money_micros(n_policies ? 12340000 : 0);
        d->possible_known = n_policies > 0;
        if (n_policies)
            snprintf(d->policy, sizeof(d->policy), "nightly");
        d->measured_iops = d->measured_mbps = d->expected_iops = d->expected_mbps = NAN;
        if (i % 3 == 0) {
            snprintf(d->verdict, sizeof(d->verdict), "under");
            snprintf(d->verdict_reason, sizeof(d->verdict_reason),
                     "IOPS 2400 is 48%% of the 5000 the disk should give");
            snprintf(d->judged_at, sizeof(d->judged_at), "2026-11-20T02:13:00Z");
            d->measured_iops = 2400;
            d->expected_iops = 5000;
            d->measured_mbps = 90.5;
            d->expected_mbps = 200;
        } else if (i % 3 == 1) {
            snprintf(d->verdict, sizeof(d->verdict), "delivers");
            d->measured_iops = 5100;
            d->expected_iops = 5000;
            d->measured_mbps = 201;
            d->expected_mbps = 200;
        }
        add_total(&m->groups[gi].t, d);
        add_total(&m->fleet, d);
    }
    for (size_t k = 0; k < m->n_groups; k++)
        m->groups[k].t.vms = (int64_t)(m->groups[k].n + 1) / 2;
    m->fleet.vms = 0; /* a VM is in one group: the fleet's are the groups' */
    for (size_t k = 0; k < m->n_groups; k++)
        m->fleet.vms += m->groups[k].t.vms;
    m->n_policies = n_policies;
    if (n_policies) {
        m->policies = calloc(n_policies, sizeof(*m->policies));
        assert_non_null(m->policies);
        snprintf(m->policies[0], sizeof(m->policies[0]), "nightly");
    }
    if (n > 0) {
        m->n_books = 1;
        m->books = calloc(1, sizeof(*m->books));
        assert_non_null(m->books);
        snprintf(m->books[0].region, sizeof(m->books[0].region), "eastus");
        snprintf(m->books[0].source, sizeof(m->books[0].source),
                 "https://prices.azure.com/api/retail/prices");
        snprintf(m->books[0].fetched_at, sizeof(m->books[0].fetched_at), "2026-10-30T02:00:00Z");
        m->books[0].from_ns = m->from_ns;
        m->books[0].to_ns = m->to_ns;
        m->books[0].disks = (int64_t)n;
    }
    /* the week: Monday 23 to Monday 30 November, two VMs */
    m->week_from_ns = ns_of(2026, 11, 23, 0);
    m->week_to_ns = ns_of(2026, 11, 30, 0);
    if (n >= 4) {
        m->n_week = 2;
        m->week = calloc(2, sizeof(*m->week));
        f->spans = calloc(4, sizeof(*f->spans));
        f->marks = calloc(6, sizeof(*f->marks));
        assert_true(m->week && f->spans && f->marks);
        for (size_t v = 0; v < 2; v++) {
            struct tw_mr_week_vm *wv = &m->week[v];
            wv->vm = m->disks[2 * v].vm;
            wv->vm_id = m->disks[2 * v].vm_id;
            wv->spans = &f->spans[2 * v];
            wv->marks = &f->marks[3 * v];
            wv->n_spans = 2;
            wv->n_marks = 3;
            for (int s = 0; s < 2; s++) {
                wv->spans[s].from_ns = ns_of(2026, 11, 24 + 2 * s, 19);
                wv->spans[s].to_ns = ns_of(2026, 11, 25 + 2 * s, 7);
                snprintf(wv->spans[s].state, sizeof(wv->spans[s].state), "deallocated");
            }
            const char *kinds[3] = {"downgrade", "upgrade", "downgrade"};
            for (int k = 0; k < 3; k++) {
                struct tw_mr_mark *mk = &wv->marks[k];
                mk->at_ns = ns_of(2026, 11, 24 + k, k == 1 ? 7 : 19);
                snprintf(mk->kind, sizeof(mk->kind), "%s", kinds[k]);
                snprintf(mk->disk, sizeof(mk->disk), "%s", m->disks[2 * v].disk);
                snprintf(mk->to_sku, sizeof(mk->to_sku), "%s",
                         k == 1 ? "Premium_LRS" : "StandardSSD_LRS");
                snprintf(mk->state, sizeof(mk->state), "%s", v == 1 && k == 2 ? "failed" : "done");
            }
        }
    }
}

static void fx_free(struct fx *f)
{
    free(f->m.disks);
    free(f->m.groups);
    free(f->m.books);
    free(f->m.missing);
    free(f->m.policies);
    free(f->m.week);
    free(f->m.notes);
    free(f->skus);
    free(f->spans);
    free(f->marks);
    free(f->pool);
}

static void fx_retotal(struct fx *f);

/* Makes disks I of F unpriced (no book for their region westeurope). */
static void fx_unprice(struct fx *f, const size_t *idx, size_t n)
{
    struct tw_mr_model *m = &f->m;
    m->missing = calloc(1, sizeof(*m->missing));
    assert_non_null(m->missing);
    m->n_missing = 1;
    snprintf(m->missing[0].region, sizeof(m->missing[0].region), "westeurope");
    snprintf(m->missing[0].why, sizeof(m->missing[0].why),
             "no price book in USD for westeurope: run tierwise prices refresh --region "
             "westeurope");
    m->missing[0].disks = (int64_t)n;
    for (size_t k = 0; k < n; k++) {
        struct tw_mr_disk *d = &m->disks[idx[k]];
        d->location = "westeurope";
        d->priced = false;
        d->unpriced = "no_book";
        snprintf(d->unpriced_why, sizeof(d->unpriced_why), "no price book for westeurope");
        d->cost_r = d->baseline_r = d->realised_r = d->possible_r = tw_money_micros(0);
    }
    fx_retotal(f);
}

/* The totals of F again, from its rows. */
static void fx_retotal(struct fx *f)
{
    struct tw_mr_model *m = &f->m;
    for (size_t k = 0; k < m->n_groups; k++) {
        int64_t vms = m->groups[k].t.vms;
        memset(&m->groups[k].t, 0, sizeof(m->groups[k].t));
        m->groups[k].t.vms = vms;
        for (size_t i = 0; i < m->groups[k].n; i++)
            add_total(&m->groups[k].t, &m->disks[m->groups[k].first + i]);
    }
    int64_t vms = m->fleet.vms;
    memset(&m->fleet, 0, sizeof(m->fleet));
    m->fleet.vms = vms;
    for (size_t i = 0; i < m->n_disks; i++)
        add_total(&m->fleet, &m->disks[i]);
}

/* ---- sinks ---------------------------------------------------------- */

struct sink {
    char *data;
    size_t len, cap;
    size_t calls, max_chunk;
    size_t fail_at; /* > 0: that call fails with TW_EIO */
    bool keep;      /* false: only count */
};

static enum tw_err sink_write(void *arg, const char *buf, size_t len)
{
    struct sink *s = arg;
    s->calls++;
    if (s->fail_at && s->calls >= s->fail_at)
        return TW_EIO;
    if (len > s->max_chunk)
        s->max_chunk = len;
    if (s->keep) {
        if (s->len + len + 1 > s->cap) {
            size_t cap = (s->len + len + 1) * 2;
            char *p = realloc(s->data, cap);
            if (!p)
                return TW_ENOMEM;
            s->data = p;
            s->cap = cap;
        }
        memcpy(s->data + s->len, buf, len);
        s->data[s->len + len] = '\0';
    }
    s->len += len;
    return TW_OK;
}

static char *render(const struct tw_mr_model *m)
{
    struct sink s = {.keep = true};
    struct tw_error err;
    tw_error_clear(&err);
    enum tw_err rc = tw_mr_write_html(m, sink_write, &s, &err);
    if (rc != TW_OK)
        print_error("tw_mr_write_html: %s\n", err.msg);
    assert_int_equal(rc, TW_OK);
    assert_non_null(s.data);
    return s.data;
}

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The text of the element after `data-figure="NAME">`. */
static void figure(const char *page, const char *name, char *out, size_t cap)
{
    char key[64];
    snprintf(key, sizeof(key), "data-figure=\"%s\">", name);
    const char *p = strstr(page, key);
    assert_non_null(p);
    p += strlen(key);
    const char *e = strchr(p, '<');
    assert_non_null(e);
    snprintf(out, cap, "%.*s", (int)(e - p), p);
}

/* ---- the tables' sums ----------------------------------------------- */

/* TEXT (tags stripped) as hundredths: "-1,234.56", "720", "0.5"; false
 * when it is not a plain number ("n/a", "&mdash;", words). */
static bool cell_number(const char *text, int64_t *out)
{
    const char *p = text;
    while (*p == ' ' || *p == '\n')
        p++;
    bool neg = *p == '-';
    if (neg)
        p++;
    int64_t v = 0;
    int digits = 0, decimals = -1;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            if (decimals >= 0) {
                if (++decimals > 2)
                    return false;
            }
            v = v * 10 + (*p - '0');
            digits++;
        } else if (*p == ',' && decimals < 0 && digits > 0) {
            continue;
        } else if (*p == '.' && decimals < 0 && digits > 0) {
            decimals = 0;
        } else {
            break;
        }
    }
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p || digits == 0)
        return false;
    for (int d = decimals < 0 ? 0 : decimals; d < 2; d++)
        v *= 10;
    *out = neg ? -v : v;
    return true;
}

#define COLS_MAX 16

/* The cells of the row ROW .. END into V (by column, colspans counted):
 * OK says which are numbers. */
static void row_cells(const char *row, const char *end, int64_t *v, bool *ok)
{
    memset(ok, 0, COLS_MAX * sizeof(*ok));
    size_t col = 0;
    for (const char *p = strstr(row, "<td"); p && p < end && col < COLS_MAX; p = strstr(p, "<td")) {
        const char *gt = strchr(p, '>');
        const char *close = strstr(p, "</td>");
        assert_true(gt && close && close <= end);
        size_t span = 1;
        const char *cs = strstr(p, "colspan=\"");
        if (cs && cs < gt)
            span = (size_t)strtoul(cs + 9, NULL, 10);
        char text[512];
        size_t n = 0;
        bool in_tag = false;
        for (const char *q = gt + 1; q < close && n + 1 < sizeof(text); q++) {
            if (*q == '<')
                in_tag = true;
            else if (*q == '>')
                in_tag = false;
            else if (!in_tag)
                text[n++] = *q;
        }
        text[n] = '\0';
        if (col < COLS_MAX)
            ok[col] = cell_number(text, &v[col]);
        col += span;
        p = close;
    }
}

/* Every <table> of PAGE starting with START: the rows above each row of
 * class "total" add up to it, column by column (a row "rest", the rows
 * not shown, among them); returns the totals checked. */
static size_t check_sums(const char *page, const char *start)
{
    size_t totals = 0;
    for (const char *t = strstr(page, start); t; t = strstr(t + 1, start)) {
        const char *tend = strstr(t, "</table>");
        assert_non_null(tend);
        int64_t acc[COLS_MAX] = {0}, v[COLS_MAX];
        bool ok[COLS_MAX];
        size_t rows = 0;
        for (const char *r = strstr(t, "<tr"); r && r < tend; r = strstr(r + 1, "<tr")) {
            const char *rend = strstr(r, "</tr>");
            assert_true(rend && rend < tend);
            if (strstr(r, "<th") && strstr(r, "<th") < rend)
                continue;
            row_cells(r, rend, v, ok);
            if (!strncmp(r, "<tr class=\"total\"", 17)) {
                for (size_t c = 0; c < COLS_MAX && rows > 0; c++)
                    if (ok[c]) {
                        if (acc[c] != v[c])
                            print_error("column %zu: the rows add up to %lld, the total says "
                                        "%lld\n",
                                        c, (long long)acc[c], (long long)v[c]);
                        assert_int_equal(acc[c], v[c]);
                    }
                totals += rows > 0;
                memset(acc, 0, sizeof(acc));
                rows = 0;
            } else {
                for (size_t c = 0; c < COLS_MAX; c++)
                    if (ok[c])
                        acc[c] += v[c];
                rows++;
            }
        }
    }
    return totals;
}

/* ---- tests ---------------------------------------------------------- */

static void test_escaping(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 6, 2, 1);
    f.m.disks[0].vm = "<script>&\"";
    f.m.week[0].vm = f.m.disks[0].vm;
    f.m.disks[1].disk = "data'1 \xff\x01 <b>";
    f.m.groups[0].key = "sub/<i>rg</i>";
    char note[] = "a book's source <img src=x onerror=alert(1)>";
    char *notes[1] = {note};
    f.m.notes = malloc(sizeof(notes));
    assert_non_null(f.m.notes);
    memcpy(f.m.notes, notes, sizeof(notes));
    f.m.n_notes = 1;
    snprintf(f.m.books[0].source, sizeof(f.m.books[0].source), "file:\"x\"&y");
    char *page = render(&f.m);
    assert_null(strstr(page, "<script"));
    assert_null(strstr(page, "<img"));
    assert_null(strstr(page, "<i>rg"));
    assert_null(strstr(page, "\xff"));
    assert_null(strstr(page, "\x01"));
    assert_non_null(strstr(page, "&lt;script&gt;&amp;&quot;"));
    assert_non_null(strstr(page, "data&#39;1 \xef\xbf\xbd\xef\xbf\xbd &lt;b&gt;"));
    assert_non_null(strstr(page, "sub/&lt;i&gt;rg&lt;/i&gt;"));
    assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"));
    assert_non_null(strstr(page, "file:&quot;x&quot;&amp;y"));
    /* nothing that loads from elsewhere */
    assert_null(strstr(page, "src=\""));
    assert_null(strstr(page, "href=\"http"));
    assert_null(strstr(page, "url("));
    assert_null(strstr(page, "@import"));
    assert_int_equal(occurrences(page, "<link"), 1); /* the inline icon alone */
    assert_non_null(strstr(page, "<link rel=\"icon\" href=\"data:,\">"));
    free(page);
    fx_free(&f);
}

static void test_headline(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 60, 3, 1);
    f.m.disks[0].skus[1].seconds = 958229; /* 266.174722 h */
    char *page = render(&f.m);
    char v[64];
    figure(page, "judged", v, sizeof(v));
    assert_string_equal(v, "40");
    /* hours to two decimals: in a row trimmed, in the groups' table fixed */
    assert_non_null(
        strstr(page, "StandardSSD_LRS</span> <span class=\"sub\">266.17&nbsp;h</span>"));
    assert_non_null(strstr(page, "Premium_LRS</span> <span class=\"sub\">510&nbsp;h</span>"));
    assert_non_null(strstr(page, "<td class=\"num\">2,200.00</td>"));
    assert_null(strstr(page, "266.174722"));
    /* realised: 30 downgraded disks, 35.17 + i cents each, i = 0, 2, .., 58 */
    int64_t cents = 0;
    for (int i = 0; i < 60; i += 2)
        cents += 3517 + i;
    assert_int_equal(f.m.fleet.realised_r.micros, cents * 10000);
    figure(page, "realised", v, sizeof(v));
    assert_string_equal(v, "1,063.80");
    figure(page, "possible", v, sizeof(v));
    assert_string_equal(v, "740.40");
    figure(page, "under", v, sizeof(v));
    assert_string_equal(v, "20");
    figure(page, "disks", v, sizeof(v));
    assert_string_equal(v, "60");
    figure(page, "cost", v, sizeof(v));
    assert_string_equal(v, "7,046.40");
    assert_non_null(strstr(page, "November 2026"));
    assert_non_null(strstr(page, "USD"));
    assert_null(strstr(page, "data-figure=\"partial\""));
    assert_null(strstr(page, "not priced ("));
    /* the headline comes first, then the chart */
    assert_true(strstr(page, "id=\"headline\"") < strstr(page, "id=\"saving-chart\""));
    /* the chart labels its bars with the amounts; a bar per group */
    assert_int_equal(occurrences(page, "<g><title>00000000-0000-0000-0000-000000000001/rg-"), 3);
    /* the week: two VMs, six marks, one of them hollow (failed) */
    assert_non_null(strstr(page, "id=\"week-table\""));
    assert_int_equal(occurrences(page, "downgrade of vm-"), 4);
    assert_int_equal(occurrences(page, "(failed)"), 1);
    assert_non_null(strstr(page, "Mon 23"));
    assert_non_null(strstr(page, "Sun 29"));
    /* measured against expected: 40 rows of the 40 with a verdict, under first */
    const char *mt = strstr(page, "id=\"measured-table\"");
    assert_non_null(mt);
    const char *first = strstr(mt, "<span class=\"v ");
    assert_non_null(first);
    assert_true(strncmp(first, "<span class=\"v v-under\">", 24) == 0);
    assert_non_null(strstr(page, "2,400 / 5,000 <span class=\"sub\">(48%)</span>"));
    /* the totals row of a group is the sum of its rounded rows, the fleet's too */
    assert_non_null(strstr(page, "<td class=\"num\">1,063.80</td>"));
    free(page);

    /* a partial month says so; no policy: possible is n/a, not 0 */
    fx_free(&f);
    fx_build(&f, 10, 1, 0);
    f.m.partial = true;
    f.m.to_ns = ns_of(2026, 11, 18, 14);
    for (size_t i = 0; i < f.m.n_disks; i++)
        f.m.disks[i].verdict[0] = '\0';
    f.m.fleet.under = 0;
    page = render(&f.m);
    assert_non_null(strstr(
        page, "no disk has been measured yet (<span data-figure=\"judged\">0</span> measured): "
              "nothing is known to under-deliver"));
    figure(page, "partial", v, sizeof(v));
    assert_string_equal(v, "Month to date");
    assert_non_null(strstr(page, "Saved this month (to date)"));
    assert_non_null(strstr(page, "18 Nov 2026 14:00 UTC"));
    figure(page, "possible", v, sizeof(v));
    assert_string_equal(v, "n/a");
    free(page);
    fx_free(&f);
}

static void test_unpriced(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 10, 2, 1);
    size_t idx[2] = {2, 7};
    fx_unprice(&f, idx, 2);
    char *page = render(&f.m);
    const char *s = strstr(page, "<span data-figure=\"unpriced\">2</span> disks are not priced "
                                 "(region westeurope (2 disks))");
    assert_non_null(s);
    /* right there: in the headline, before the chart */
    assert_true(s > strstr(page, "id=\"headline\""));
    assert_true(s < strstr(page, "id=\"saving-per-group\""));
    /* the rows say "not priced", with the reason, never an amount of zero */
    assert_int_equal(occurrences(page, "<td class=\"num\" colspan=\"4\">not priced</td>"), 2);
    assert_int_equal(occurrences(page, "no price book for westeurope"), 2);
    for (size_t k = 0; k < 2; k++) {
        char id[64];
        snprintf(id, sizeof(id), "<tr class=\"disk\" data-id=\"%zu\"", idx[k] + 1);
        const char *row = strstr(page, id);
        assert_non_null(row);
        const char *end = strstr(row, "</tr>");
        assert_non_null(end);
        const char *zero = strstr(row, "0.00");
        assert_true(zero == NULL || zero > end);
    }
    /* the regions not priced, with why */
    assert_non_null(strstr(page, "id=\"missing-table\""));
    assert_non_null(strstr(page, "run tierwise prices refresh --region westeurope"));
    free(page);

    /* a SKU the book lacks is said too; every disk unpriced: no figure at all */
    for (size_t i = 0; i < f.m.n_disks; i++)
        if (f.m.disks[i].priced) {
            f.m.disks[i].priced = false;
            f.m.disks[i].unpriced = "unknown_sku";
        }
    f.m.fleet.unpriced = f.m.fleet.disks;
    page = render(&f.m);
    assert_non_null(strstr(page, "10</span> disks are not priced (region westeurope (2 disks); "
                                 "8 on a SKU the price book lacks)"));
    char v[64];
    figure(page, "realised", v, sizeof(v));
    assert_string_equal(v, "not priced");
    free(page);
    fx_free(&f);
}

static void test_collapse(void **state)
{
    (void)state;
    struct fx f;
    /* at the limit: every row */
    fx_build(&f, TW_MR_HTML_ROWS_MAX, 7, 1);
    char *page = render(&f.m);
    assert_int_equal(occurrences(page, "<tr class=\"disk\""), TW_MR_HTML_ROWS_MAX);
    assert_null(strstr(page, "id=\"disks-left-out\""));
    free(page);
    fx_free(&f);

    /* past it: the 2,000 largest savings, under their groups */
    fx_build(&f, 2500, 7, 1);
    page = render(&f.m);
    assert_int_equal(occurrences(page, "<tr class=\"disk\""), TW_MR_HTML_ROWS_MAX);
    const char *note = strstr(page, "id=\"disks-left-out\"");
    assert_non_null(note);
    assert_non_null(strstr(note, "shows 2,000 of them under their groups"));
    assert_non_null(strstr(note, "leaves out the other 500"));
    assert_non_null(strstr(note, "CSV"));
    /* disk 2498 (id 2499) saves most; every third one (under) is kept
     * whatever it saves; the one saving nothing and not under is left out */
    assert_non_null(strstr(page, "<tr class=\"disk\" data-id=\"2499\""));
    assert_non_null(strstr(page, "<tr class=\"disk\" data-id=\"2500\"")); /* under */
    assert_null(strstr(page, "<tr class=\"disk\" data-id=\"2498\""));
    /* the groups' totals stay whole, and the rows shown plus the line of the
     * rows not shown add up to each of them, column by column */
    assert_int_equal(check_sums(page, "<table class=\"disks\">"), 7);
    assert_int_equal(check_sums(page, "<table id=\"groups-table\">"), 1);
    /* the groups whose rows are not all shown (the last ones show all theirs) */
    assert_true(occurrences(page, "<tr class=\"rest\">") >= 4);
    assert_non_null(strstr(page, "rows not shown (the sum of their rows)"));
    assert_null(strstr(page, "a group's total is the sum of its rows. "));
    char fleet[64];
    char cents[48];
    snprintf(cents, sizeof(cents), "%lld.%02lld",
             (long long)(f.m.fleet.realised_r.micros / 1000000),
             (long long)(f.m.fleet.realised_r.micros / 10000 % 100));
    snprintf(fleet, sizeof(fleet), "Fleet total</td><td class=\"num\">");
    assert_non_null(strstr(page, fleet));
    assert_int_equal(occurrences(page, "<h3>rg-"), 7);
    assert_null(strstr(page, "id=\"groups-without-rows\""));
    free(page);
    fx_free(&f);

    /* groups none of whose rows make the cut are said to be in the groups' table */
    fx_build(&f, 2500, 50, 1);
    for (size_t i = 2000; i < 2500; i++) {
        f.m.disks[i].realised_r = tw_money_micros(0);
        f.m.disks[i].cost_r = f.m.disks[i].baseline_r;
        f.m.disks[i].verdict[0] = '\0';
    }
    fx_retotal(&f);
    page = render(&f.m);
    assert_int_equal(occurrences(page, "<tr class=\"disk\""), TW_MR_HTML_ROWS_MAX);
    assert_int_equal(occurrences(page, "<h3>rg-"), 40);
    assert_non_null(strstr(page, "10 groups have none of the rows shown; their totals are in the "
                                 "table of groups."));
    assert_int_equal(check_sums(page, "<table class=\"disks\">"), 40);
    assert_int_equal(check_sums(page, "<table id=\"groups-table\">"), 1);
    free(page);
    fx_free(&f);
}

/* The groups' table's hours: each group's the sum of its disks' rounded
 * rows, the fleet's the sum of the groups' (220 h 20 s is 220.01 h a
 * disk; 10 of them rounded as one would be 2,200.06, not 2,200.10). */
static void test_hours_total(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 60, 3, 1);
    for (size_t i = 0; i < f.m.n_disks; i += 2) {
        f.m.disks[i].downgraded_seconds = 220 * 3600 + 20;
        f.m.disks[i].drift_seconds = 3600 + 20;
    }
    fx_retotal(&f);
    char *page = render(&f.m);
    assert_int_equal(check_sums(page, "<table id=\"groups-table\">"), 1);
    assert_int_equal(check_sums(page, "<table class=\"disks\">"), 3);
    assert_non_null(strstr(page, "<td class=\"num\">2,200.10</td><td class=\"num\">10.10</td>"));
    assert_non_null(strstr(page, "<td class=\"num\">6,600.30</td><td class=\"num\">30.30</td>"));
    free(page);
    fx_free(&f);
}

/* Past the limit, the disks not priced, drifting or under-delivering are
 * always among the rows shown, whatever they save. */
static void test_collapse_keeps(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, TW_MR_HTML_ROWS_MAX + 1, 7, 1);
    size_t idx[2] = {1, 3}; /* odd: they save nothing */
    fx_unprice(&f, idx, 2);
    f.m.disks[5].drift_seconds = 7200;
    fx_retotal(&f);
    char *page = render(&f.m);
    assert_int_equal(occurrences(page, "<tr class=\"disk\""), TW_MR_HTML_ROWS_MAX);
    for (size_t i = 0; i < f.m.n_disks; i++) {
        const struct tw_mr_disk *d = &f.m.disks[i];
        if (d->priced && d->drift_seconds == 0 && strcmp(d->verdict, "under") != 0)
            continue;
        char id[64];
        snprintf(id, sizeof(id), "<tr class=\"disk\" data-id=\"%lld\"", (long long)d->disk_id);
        if (!strstr(page, id))
            print_error("disk %lld (not priced, drifting or under) is left out\n",
                        (long long)d->disk_id);
        assert_non_null(strstr(page, id));
    }
    /* the one left out saves nothing and is none of those */
    assert_int_equal(occurrences(page, "<tr class=\"rest\">"), 1);
    assert_int_equal(check_sums(page, "<table class=\"disks\">"), 7);
    assert_null(strstr(page, "do not fit"));
    free(page);
    fx_free(&f);
}

/* A month still running: "still possible" runs to date (the model
 * models the policies over the report's own period), and says so wherever
 * it is shown. */
static void test_partial_possible(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 10, 2, 1);
    f.m.partial = true;
    f.m.to_ns = ns_of(2026, 11, 18, 14);
    char *page = render(&f.m);
    const char *span = "to date (to 18&nbsp;Nov&nbsp;2026)";
    char want[160];
    snprintf(want, sizeof(want), "Still possible %s</div>", span);
    assert_non_null(strstr(page, want)); /* the headline */
    snprintf(want, sizeof(want), "still possible %s</text>", span);
    assert_non_null(strstr(page, want)); /* the chart's legend */
    snprintf(want, sizeof(want), "Possible<br><span class=\"sub\"> %s</span></th>", span);
    assert_int_equal(occurrences(page, want), 3); /* the groups' table, two disk tables */
    free(page);
    f.m.partial = false;
    page = render(&f.m);
    assert_null(strstr(page, "to date (to"));
    free(page);
    fx_free(&f);
}

/* Direction and format controls from the store become U+FFFD; names sit
 * in <bdi>. */
static void test_bidi(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 6, 2, 1);
    f.m.disks[0].vm = "a\u202eb\u202ac\u2066d\u2069e\u200ff\u200eg\u061ch";
    f.m.disks[1].disk = "x\u2067\u2068\u202b\u202c\u202dy";
    f.m.groups[0].key = "sub/rg\u202e-1";
    f.m.week[0].vm = f.m.disks[0].vm;
    char *page = render(&f.m);
    const char *bad[] = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066",
                         "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
        assert_null(strstr(page, bad[k]));
    assert_non_null(strstr(page, "<bdi>a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\ufffdh</bdi>"));
    assert_non_null(strstr(page, "<bdi>x\ufffd\ufffd\ufffd\ufffd\ufffdy</bdi>"));
    assert_non_null(strstr(page, "rg\ufffd-1"));
    /* the characters around them are kept: an e acute, a zero-width joiner */
    free(page);
    f.m.disks[0].vm = "caf\u00e9\u200d";
    page = render(&f.m);
    assert_non_null(strstr(page, "caf\u00e9\u200d"));
    free(page);
    fx_free(&f);
}

/* A store text of megabytes is cut with an ellipsis; the page is written. */
static void test_long_text(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 6, 2, 1);
    size_t n = 3u << 20;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, '&', n);
    big[n] = '\0';
    f.m.disks[0].vm = big;
    f.m.week[0].vm = big;
    char *note[1] = {big};
    f.m.notes = malloc(sizeof(note));
    assert_non_null(f.m.notes);
    memcpy(f.m.notes, note, sizeof(note));
    f.m.n_notes = 1;
    char *page = render(&f.m);
    assert_true(strlen(page) < 2u << 20);
    assert_non_null(strstr(page, "&amp;&amp;\u2026"));
    free(page);
    free(big);
    fx_free(&f);
}

/* Chart labels of long keys alike at their start stay apart: cut in the
 * middle, numbered when still alike. */
static void test_labels(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 12, 4, 1);
    f.m.groups[0].key = "sub/a-very-long-resource-group-name-for-production-001";
    f.m.groups[1].key = "sub/a-very-long-resource-group-name-for-production-002";
    f.m.groups[2].key = "sub/same-start-of-it-xxxxxxxxxxxxxxxxxxxxxxxxx-and-the-same-end-0001";
    f.m.groups[3].key = "sub/same-start-of-it-yyyyyyyyyyyyyyyyyyyyyyyyy-and-the-same-end-0001";
    char *page = render(&f.m);
    assert_non_null(strstr(page, "a-very-long-res\u2026for-production-001</text>"));
    assert_non_null(strstr(page, "a-very-long-res\u2026for-production-002</text>"));
    /* the two alike after the cut are numbered by their rank */
    const char *chart = strstr(page, "id=\"saving-chart\"");
    const char *end = strstr(chart, "</svg>");
    size_t numbered = 0;
    for (const char *p = strstr(chart, "same-start-of-i\u2026"); p && p < end;
         p = strstr(p + 1, "same-start-of-i\u2026"))
        numbered += p[-2] == '.' && p[-1] == ' ';
    assert_int_equal(numbered, 2);
    free(page);
    fx_free(&f);
}

/* Every data-figure the README lists is there in every state, with "n/a"
 * or "0" when not known; the cost line names the currency. */
static void test_figures_always(void **state)
{
    (void)state;
    const char *names[] = {"realised", "possible", "cost", "under", "disks", "judged"};
    struct fx f;
    fx_build(&f, 10, 2, 1);
    char *page = render(&f.m);
    assert_non_null(strstr(page, "</span> USD against 1,351.70 USD had every disk"));
    free(page);
    /* nothing measured, nothing priced */
    for (size_t i = 0; i < f.m.n_disks; i++) {
        f.m.disks[i].verdict[0] = '\0';
        f.m.disks[i].priced = false;
        f.m.disks[i].unpriced = "unknown_sku";
    }
    fx_retotal(&f);
    page = render(&f.m);
    char v[64];
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        figure(page, names[k], v, sizeof(v));
    figure(page, "cost", v, sizeof(v));
    assert_string_equal(v, "n/a");
    figure(page, "judged", v, sizeof(v));
    assert_string_equal(v, "0");
    free(page);
    fx_free(&f);
    fx_build(&f, 0, 0, 0);
    page = render(&f.m);
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        figure(page, names[k], v, sizeof(v));
    free(page);
    fx_free(&f);
}

/* The caps of the charts and of the groups' table, each said in a note. */
static void test_caps(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 2500, 2500, 1); /* a group per disk */
    size_t nv = 100, nm = 70;
    free(f.m.week);
    free(f.marks);
    f.m.week = calloc(nv, sizeof(*f.m.week));
    f.marks = calloc(nv * nm, sizeof(*f.marks));
    assert_true(f.m.week && f.marks);
    f.m.n_week = nv;
    for (size_t v = 0; v < nv; v++) {
        struct tw_mr_week_vm *wv = &f.m.week[v];
        wv->vm = f.m.disks[v].vm;
        wv->vm_id = (int64_t)v + 1;
        wv->marks = &f.marks[v * nm];
        wv->n_marks = nm;
        for (size_t k = 0; k < nm; k++) {
            wv->marks[k].at_ns = f.m.week_from_ns + (int64_t)(k + 1) * TW_NS_PER_HOUR;
            snprintf(wv->marks[k].kind, sizeof(wv->marks[k].kind), "downgrade");
            snprintf(wv->marks[k].state, sizeof(wv->marks[k].state), "done");
        }
    }
    char *page = render(&f.m);
    /* the chart: the 24 largest groups */
    assert_int_equal(occurrences(page, "<g><title>00000000-"), 24);
    assert_non_null(strstr(page, "The 24 groups with the largest saving; the other 2476 are in "
                                 "the table of groups."));
    /* measured against expected: the 40 worst of 1,667 */
    const char *mt = strstr(page, "id=\"measured-table\"");
    const char *me = mt ? strstr(mt, "</table>") : NULL;
    assert_non_null(me);
    size_t rows = 0;
    for (const char *p = strstr(mt, "<tr data-id="); p && p < me; p = strstr(p + 1, "<tr data-id="))
        rows++;
    assert_int_equal(rows, 40);
    assert_non_null(strstr(page, "The 40 worst of 1667 disks with a verdict"));
    /* the week: 60 of 100 VMs, 64 of 70 marks each */
    const char *wt = strstr(page, "id=\"week-table\"");
    const char *we = wt ? strstr(wt, "</table>") : NULL;
    assert_non_null(we);
    rows = 0;
    for (const char *p = strstr(wt, "<tr data-id="); p && p < we; p = strstr(p + 1, "<tr data-id="))
        rows++;
    assert_int_equal(rows, 60);
    assert_int_equal(occurrences(page, "64 of 70 actions drawn"), 60);
    assert_non_null(strstr(page, "60 of 100 VMs with a switch that week are drawn"));
    /* the groups' table: its 2,000 largest, and the fleet's line */
    const char *gt = strstr(page, "id=\"groups-table\"");
    const char *ge = gt ? strstr(gt, "</table>") : NULL;
    assert_non_null(ge);
    rows = 0;
    const char *row = "<tr><td class=\"key\">";
    for (const char *p = strstr(gt, row); p && p < ge; p = strstr(p + 1, row))
        rows++;
    assert_int_equal(rows, TW_MR_HTML_ROWS_MAX);
    const char *left = strstr(page, "id=\"groups-left-out\"");
    assert_non_null(left);
    assert_non_null(strstr(left, "500 groups are left out here"));
    free(page);
    fx_free(&f);
}

static void test_size_100k(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 100000, 400, 1); /* 50,000 VMs of 2 disks */
    struct sink s = {.keep = false};
    struct tw_error err;
    tw_error_clear(&err);
    assert_int_equal(tw_mr_write_html(&f.m, sink_write, &s, &err), TW_OK);
    print_message("100,000 disks: %zu bytes in %zu chunks (largest %zu)\n", s.len, s.calls,
                  s.max_chunk);
    assert_true(s.len < 10u * 1000 * 1000);
    assert_true(s.calls > 10);              /* streamed ... */
    assert_true(s.max_chunk <= 256 * 1024); /* ... in chunks, not one string */
    fx_free(&f);
}

/* The same with every text as long as the model holds it: names of 120
 * characters, 5,000 groups of 200-character keys, every disk excluded with
 * a reason of 511 characters, drift and metered notes, and a week of
 * 20,000 VMs of 64 switches and 10 spans each. */
static void test_size_worst(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 100000, 5000, 1);
    static char name[121], why[512], key[5000][201];
    memset(name, 'n', sizeof(name) - 1);
    memset(why, 'w', sizeof(why) - 1);
    for (size_t k = 0; k < 5000; k++) {
        memset(key[k], 'k', 200);
        snprintf(key[k] + 180, 21, "/%019zu", k);
        f.m.groups[k].key = key[k];
    }
    for (size_t i = 0; i < f.m.n_disks; i++) {
        struct tw_mr_disk *d = &f.m.disks[i];
        d->vm = d->disk = d->location = name;
        d->excluded = "tag_excluded";
        memcpy(d->excluded_why, why, sizeof(why));
        d->drift_seconds = 3600;
        d->running_metered_seconds = 7200;
        memset(d->policy, 'p', sizeof(d->policy) - 1);
        snprintf(d->verdict_reason, sizeof(d->verdict_reason), "%.255s", why);
    }
    size_t nv = 20000, nm = 64, ns = 10;
    free(f.m.week);
    free(f.spans);
    free(f.marks);
    f.m.week = calloc(nv, sizeof(*f.m.week));
    f.spans = calloc(nv * ns, sizeof(*f.spans));
    f.marks = calloc(nv * nm, sizeof(*f.marks));
    assert_true(f.m.week && f.spans && f.marks);
    f.m.n_week = nv;
    int64_t step = (f.m.week_to_ns - f.m.week_from_ns) / (int64_t)(nm + 1);
    for (size_t v = 0; v < nv; v++) {
        struct tw_mr_week_vm *wv = &f.m.week[v];
        wv->vm = name;
        wv->vm_id = (int64_t)v + 1;
        wv->spans = &f.spans[v * ns];
        wv->marks = &f.marks[v * nm];
        wv->n_spans = ns;
        wv->n_marks = nm;
        for (size_t k = 0; k < ns; k++) {
            wv->spans[k].from_ns = f.m.week_from_ns + (int64_t)(2 * k) * step * 3;
            wv->spans[k].to_ns = wv->spans[k].from_ns + step * 3;
            snprintf(wv->spans[k].state, sizeof(wv->spans[k].state), "deallocated");
        }
        for (size_t k = 0; k < nm; k++) {
            struct tw_mr_mark *mk = &wv->marks[k];
            mk->at_ns = f.m.week_from_ns + (int64_t)(k + 1) * step;
            snprintf(mk->kind, sizeof(mk->kind), k % 2 ? "upgrade" : "downgrade");
            memset(mk->disk, 'd', sizeof(mk->disk) - 1);
            snprintf(mk->to_sku, sizeof(mk->to_sku), "StandardSSD_LRS");
            snprintf(mk->state, sizeof(mk->state), "done");
        }
    }
    struct sink s = {.keep = false};
    struct tw_error err;
    tw_error_clear(&err);
    assert_int_equal(tw_mr_write_html(&f.m, sink_write, &s, &err), TW_OK);
    print_message("100,000 disks, the longest texts: %zu bytes\n", s.len);
    assert_true(s.len < 10u * 1000 * 1000);
    fx_free(&f);
}

/* A saving below zero (transactions dearer than the downgrade saved) is
 * written with its sign and grouped, and draws no bar of its own. */
static void test_negative(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 4, 2, 1);
    struct tw_mr_disk *d = &f.m.disks[0];
    d->realised_r = tw_money_micros(-1234500000);
    d->cost_r = tw_money_micros(d->baseline_r.micros + 1234500000);
    f.m.groups[0].t.realised_r = tw_money_micros(-1234500000);
    f.m.fleet.realised_r = tw_money_micros(-1234500000 + f.m.groups[1].t.realised_r.micros);
    char *page = render(&f.m);
    assert_non_null(strstr(page, "<td class=\"num\">-1,234.50</td>"));
    char v[64];
    figure(page, "realised", v, sizeof(v));
    assert_string_equal(v, "-1,199.31"); /* -1,234.50 + 35.19 (disk 2) */
    assert_non_null(strstr(page, "<tspan font-weight=\"600\">-1,234.50</tspan>"));
    free(page);
    fx_free(&f);
}

static void test_empty(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 0, 0, 1);
    char *page = render(&f.m);
    assert_true(strncmp(page, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0);
    size_t len = strlen(page);
    assert_true(len > 8 && !strcmp(page + len - 8, "</html>\n"));
    assert_non_null(strstr(page, "id=\"saving-chart-empty\""));
    assert_non_null(strstr(page, "id=\"measured-empty\""));
    assert_non_null(strstr(page, "id=\"week-empty\""));
    assert_non_null(strstr(page, "id=\"groups-empty\""));
    assert_non_null(strstr(page, "id=\"books-empty\""));
    assert_non_null(strstr(page, "The store holds no disk for this month"));
    char v[64];
    figure(page, "realised", v, sizeof(v));
    assert_string_equal(v, "0.00");
    assert_int_equal(occurrences(page, "<section"), occurrences(page, "</section>"));
    free(page);
    fx_free(&f);
}

static void test_write_error(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 400, 4, 1);
    struct sink s = {.keep = false, .fail_at = 2};
    struct tw_error err;
    tw_error_clear(&err);
    assert_int_equal(tw_mr_write_html(&f.m, sink_write, &s, &err), TW_EIO);
    assert_int_equal(err.code, TW_EIO);
    assert_non_null(strstr(err.msg, "could not be written"));
    assert_int_equal(s.calls, 2); /* nothing written after the failure */

    /* the first call fails */
    struct sink s1 = {.keep = false, .fail_at = 1};
    assert_int_equal(tw_mr_write_html(&f.m, sink_write, &s1, &err), TW_EIO);
    assert_int_equal(s1.calls, 1);
    assert_int_equal(tw_mr_write_html(NULL, sink_write, &s1, &err), TW_EINVAL);
    fx_free(&f);
}

/* A bad currency: the amounts can't be written, an error, not a page of "?". */
static void test_bad_currency(void **state)
{
    (void)state;
    struct fx f;
    fx_build(&f, 4, 1, 1);
    snprintf(f.m.currency, sizeof(f.m.currency), "XYZ");
    struct sink s = {.keep = false};
    struct tw_error err;
    tw_error_clear(&err);
    assert_int_equal(tw_mr_write_html(&f.m, sink_write, &s, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "amount"));
    fx_free(&f);
}

/* ---- the sample page ------------------------------------------------ */

static enum tw_err file_write(void *arg, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, arg) == len ? TW_OK : TW_EIO;
}

/* The sample page (KIND "full"), an empty month ("empty") or 2,500 disks
 * collapsed ("collapsed") written to PATH. */
static char sample_note[] = "Transactions of Standard HDD disks while their VM ran are not "
                            "known and not counted (2 disks).";

/* The full sample's details: an unpriced disk, a drift, an exclusion, a
 * name to escape, a note. */
static int sample_details(struct fx *f)
{
    size_t idx[1] = {35};
    fx_unprice(f, idx, 1);
    f->m.disks[5].drift_seconds = 26 * 3600;
    f->m.disks[5].excluded = "tag_excluded";
    snprintf(f->m.disks[5].excluded_why, sizeof(f->m.disks[5].excluded_why),
             "the VM's tag tierwise=off excludes it");
    f->m.disks[4].transactions_r = tw_money_micros(420000);
    f->m.disks[3].vm = "finance-<db>&\"01\"";
    f->m.notes = malloc(sizeof(char *));
    if (!f->m.notes)
        return 1;
    f->m.notes[0] = sample_note;
    f->m.n_notes = 1;
    return 0;
}

static int write_sample(const char *kind, const char *path)
{
    struct fx f;
    if (!strcmp(kind, "empty")) {
        fx_build(&f, 0, 0, 0);
    } else if (!strcmp(kind, "collapsed")) {
        fx_build(&f, 2500, 7, 1);
    } else if (!strcmp(kind, "partial")) {
        fx_build(&f, 36, 4, 1);
        f.m.partial = true;
        f.m.to_ns = ns_of(2026, 11, 18, 14);
    } else if (!strcmp(kind, "full")) {
        fx_build(&f, 36, 4, 1);
        if (sample_details(&f) != 0) {
            fx_free(&f);
            return 1;
        }
    } else {
        fprintf(stderr, "sample: unknown kind %s (full, empty, collapsed, partial)\n", kind);
        return 2;
    }
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        fx_free(&f);
        return 1;
    }
    struct tw_error err;
    tw_error_clear(&err);
    enum tw_err rc = tw_mr_write_html(&f.m, file_write, fp, &err);
    if (fclose(fp) != 0 && rc == TW_OK)
        rc = TW_EIO;
    fx_free(&f);
    if (rc != TW_OK) {
        fprintf(stderr, "sample: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--sample"))
        return write_sample("full", argv[2]);
    if (argc == 4 && !strcmp(argv[1], "--sample"))
        return write_sample(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),       cmocka_unit_test(test_headline),
        cmocka_unit_test(test_unpriced),       cmocka_unit_test(test_collapse),
        cmocka_unit_test(test_caps),           cmocka_unit_test(test_size_100k),
        cmocka_unit_test(test_size_worst),     cmocka_unit_test(test_negative),
        cmocka_unit_test(test_empty),          cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_bad_currency),   cmocka_unit_test(test_hours_total),
        cmocka_unit_test(test_collapse_keeps), cmocka_unit_test(test_partial_possible),
        cmocka_unit_test(test_bidi),           cmocka_unit_test(test_long_text),
        cmocka_unit_test(test_labels),         cmocka_unit_test(test_figures_always),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
