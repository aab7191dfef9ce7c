/*
 * monthly_html.c - the monthly report as one self-contained HTML page for
 * a finance reader: inline CSS and inline SVG, no script, nothing fetched
 * from anywhere, laid out for A4 (print styles: rows never cut, table
 * headers repeated on each page, big sections on a page of their own,
 * colours told apart by lightness too, so a greyscale print still reads).
 *
 * In order: the headline (saved, still possible, disks under-delivering;
 * the disks left unpriced said right there), the saving per group (SVG
 * bars), measured against expected per disk (the 40 worst), the week
 * timeline of power states and switches, the tables (groups, then disks
 * per group), and how the figures are computed with the price books used.
 *
 * Every text that comes from the store (names from agents and ARM, the
 * books' sources, reasons) is escaped, invalid UTF-8, control bytes and
 * Unicode direction controls replaced by U+FFFD, cut past TEXT_CHARS_MAX.
 * Amounts are the model's rounded row figures (tw_money_format), with
 * thousands separators; a total is the model's sum of its rows' rounded
 * figures, and the hours of a total the sum of its rows' hours in
 * hundredths.  The page is written through the sink in chunks of about
 * 64 KiB; past TW_MR_HTML_ROWS_MAX rows the disk tables collapse to the
 * disks not priced, drifting or under-delivering, then the largest-saving
 * rows, under each group with a line adding up the rows not shown (the
 * CSV has them all), which keeps 100,000 disks well under 10 MB.  In a
 * month still running, "possible" says it runs to date, as every figure.
 */
#include "service/monthly.h"
#include "service/monthly_forms.h"

#include "core/buf.h"
#include "core/time.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (64 * 1024)
#define BUF_MAX (1024 * 1024)
#define CHART_GROUPS_MAX 24 /* bars in the saving-per-group chart */
#define VERDICT_ROWS_MAX 40 /* disks in measured against expected */
#define WEEK_VMS_MAX 60     /* VMs in the week timeline */
#define WEEK_MARKS_MAX 64   /* switch marks drawn per VM */
#define LABEL_CHARS 34      /* characters of a label inside a chart */
#define TEXT_CHARS_MAX 8192 /* characters of any one store text shown */

struct hw {
    const struct tw_mr_model *m;
    tw_opp_write_fn write;
    void *arg;
    struct tw_buf b;
    enum tw_err rc; /* the first error; everything after is skipped */
    struct tw_error *err;
    size_t written;
};

/* ---- output --------------------------------------------------------- */

static void flush(struct hw *w)
{
    if (w->rc != TW_OK || w->b.len == 0)
        return;
    enum tw_err rc = w->write(w->arg, w->b.data, w->b.len);
    if (rc != TW_OK) {
        w->rc = rc;
        tw_error_set(w->err, rc,
                     "the HTML report could not be written after %zu bytes: its output refused "
                     "a chunk (%s); check the file or the connection it goes to",
                     w->written, tw_strerror(rc));
    } else {
        w->written += w->b.len;
    }
    w->b.len = 0;
}

static void putn(struct hw *w, const char *s, size_t n)
{
    if (w->rc != TW_OK || n == 0)
        return;
    if (tw_buf_append(&w->b, s, n) != TW_OK) {
        w->rc = tw_error_set(w->err, TW_ENOMEM,
                             "the HTML report ran out of memory for its output buffer");
        return;
    }
    if (w->b.len >= FLUSH_AT)
        flush(w);
}

static void put(struct hw *w, const char *s)
{
    putn(w, s, strlen(s));
}

static void putf(struct hw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct hw *w, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof(tmp)) {
        if (w->rc == TW_OK)
            w->rc = tw_error_set(w->err, TW_EINVAL,
                                 "the HTML report's markup could not be formatted (%.40s...)", fmt);
        return;
    }
    putn(w, tmp, (size_t)k);
}

/* The bytes of a valid UTF-8 sequence at P (LEFT bytes there) that HTML
 * takes as text; 0 for a broken sequence, a control character (tab and
 * line feed aside), a surrogate or a C1 control. */
static size_t text_seq(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    if (c < 0x80)
        return (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' ? 1 : 0;
    size_t n = tw_mr_utf8_seq(p, left);
    /* the C1 controls, U+0080..U+009F, are C2 80..C2 9F */
    if (n == 2 && c == 0xc2 && p[1] <= 0x9f)
        return 0;
    return n;
}

/* Whether the N bytes at P are a Unicode direction or format control
 * (U+061C, U+200E/F, U+202A-E, U+2066-9): text from the store with one
 * would reorder the page's text around it, so it is shown as U+FFFD. */
static bool direction_control(const unsigned char *p, size_t n)
{
    if (n == 2)
        return p[0] == 0xd8 && p[1] == 0x9c;
    if (n != 3 || p[0] != 0xe2)
        return false;
    if (p[1] == 0x80)
        return p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae);
    return p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9;
}

/* S as HTML text (also right for an attribute's value in double quotes),
 * at most MAXCH characters (0: TEXT_CHARS_MAX), an ellipsis when cut: a
 * store text of megabytes is cut, not a page that fails. */
static void esc_max(struct hw *w, const char *s, size_t maxch)
{
    if (!s)
        return;
    if (maxch == 0 || maxch > TEXT_CHARS_MAX)
        maxch = TEXT_CHARS_MAX;
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s), chars = 0;
    const unsigned char *run = p;
    while (left > 0) {
        if (maxch && chars == maxch) {
            putn(w, (const char *)run, (size_t)(p - run));
            put(w, "\xe2\x80\xa6");
            return;
        }
        const char *rep = NULL;
        size_t n = text_seq(p, left);
        if (direction_control(p, n))
            rep = "\xef\xbf\xbd";
        switch (n == 1 ? *p : 0) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: break;
        }
        if (n == 0)
            rep = "\xef\xbf\xbd";
        if (rep) {
            putn(w, (const char *)run, (size_t)(p - run));
            put(w, rep);
            if (n == 0)
                n = 1;
            p += n;
            left -= n;
            run = p;
        } else {
            p += n;
            left -= n;
        }
        chars++;
    }
    putn(w, (const char *)run, (size_t)(p - run));
}

static void esc(struct hw *w, const char *s)
{
    esc_max(w, s, 0);
}

/* ---- figures as text ------------------------------------------------ */

/* The digits of TEXT ("-12345.60") with a comma between thousands. */
static void group_digits(const char *text, char *out, size_t cap)
{
    size_t o = 0;
    const char *p = text;
    if (*p == '-' && o + 1 < cap)
        out[o++] = *p++;
    size_t digits = strcspn(p, ".");
    for (size_t i = 0; i < digits && o + 2 < cap; i++) {
        if (i > 0 && (digits - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = p[i];
    }
    for (const char *q = p + digits; *q && o + 1 < cap; q++)
        out[o++] = *q;
    out[o] = '\0';
}

/* M in the model's currency, rounded to its minor unit, grouped. */
static const char *money(struct hw *w, struct tw_money m, char *buf, size_t cap)
{
    char raw[TW_MONEY_TEXT_MAX];
    struct tw_error e;
    tw_error_clear(&e);
    if (tw_money_format(m, w->m->currency, raw, sizeof(raw), &e) != TW_OK) {
        if (w->rc == TW_OK)
            w->rc =
                tw_error_set(w->err, e.code, "the HTML report can't write an amount: %s", e.msg);
        snprintf(buf, cap, "?");
        return buf;
    }
    group_digits(raw, buf, cap);
    return buf;
}

static const char *count(int64_t n, char *buf, size_t cap)
{
    char raw[32];
    snprintf(raw, sizeof(raw), "%lld", (long long)n);
    group_digits(raw, buf, cap);
    return buf;
}

/* SECONDS as hours to 2 decimals (half away from zero), grouped: "805.03";
 * TRIM drops zero decimals ("720", "266.2").  The CSV and the JSON have
 * them exact. */
/* SECONDS in hundredths of an hour, half away from zero: a row's hours
 * as shown, which a total adds up. */
static int64_t centi_hours(int64_t seconds)
{
    int64_t mag = seconds < 0 ? -seconds : seconds;
    int64_t c = (mag + 18) / 36; /* 36 s is a hundredth of an hour */
    return seconds < 0 ? -c : c;
}

/* CENTI hundredths of an hour as text (see hours()). */
static const char *hours_centi(int64_t centi_signed, bool trim, char *buf, size_t cap)
{
    char raw[64];
    int64_t centi = centi_signed < 0 ? -centi_signed : centi_signed;
    int k = snprintf(raw, sizeof(raw), "%s%lld.%02lld", centi_signed < 0 ? "-" : "",
                     (long long)(centi / 100), (long long)(centi % 100));
    if (trim && k > 0) {
        while (k > 0 && raw[k - 1] == '0')
            raw[--k] = '\0';
        if (k > 0 && raw[k - 1] == '.')
            raw[--k] = '\0';
    }
    group_digits(raw, buf, cap);
    return buf;
}

static const char *hours(int64_t seconds, bool trim, char *buf, size_t cap)
{
    return hours_centi(centi_hours(seconds), trim, buf, cap);
}

static const char *number(double v, int decimals, char *buf, size_t cap)
{
    if (isnan(v) || isinf(v)) {
        snprintf(buf, cap, "n/a");
        return buf;
    }
    char raw[64];
    snprintf(raw, sizeof(raw), "%.*f", decimals, v);
    group_digits(raw, buf, cap);
    return buf;
}

static const char *const MONTHS[12] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};
static const char *const DAYS[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

/* "23 Nov 2026 19:05 UTC" */
static const char *when(int64_t ns, char *buf, size_t cap)
{
    struct tw_civil c;
    tw_civil_from_ns(ns, &c);
    snprintf(buf, cap, "%d %.3s %04d %02d:%02d UTC", c.day % 100, MONTHS[(c.month + 11) % 12],
             (int)c.year % 10000, c.hour % 100, c.minute % 100);
    return buf;
}

/* "November 2026" of the model's "2026-11" (the text itself otherwise). */
static void month_name(const char *month, char *buf, size_t cap)
{
    int y = 0, mo = 0;
    if (sscanf(month, "%4d-%2d", &y, &mo) == 2 && mo >= 1 && mo <= 12)
        snprintf(buf, cap, "%s %04d", MONTHS[mo - 1], y);
    else
        snprintf(buf, cap, "%s", month);
}

/* "1 Dec 2026" */
static const char *day_text(int64_t ns, char *buf, size_t cap)
{
    struct tw_civil c;
    tw_civil_from_ns(ns, &c);
    snprintf(buf, cap, "%d&nbsp;%.3s&nbsp;%04d", c.day % 100, MONTHS[(c.month + 11) % 12],
             (int)c.year % 10000);
    return buf;
}

/* What "possible" runs over: in a month still running, the model's
 * possible saving is modelled over the month to date, as the realised
 * saving is, so it says " to date (to 18 Nov 2026)"; OTHERWISE when not. */
static void possible_span(struct hw *w, const char *otherwise)
{
    char a[48];
    if (w->m->partial)
        putf(w, " to date (to %s)", day_text(w->m->to_ns, a, sizeof(a)));
    else
        put(w, otherwise);
}

/* The "Possible" column's head. */
static void possible_th(struct hw *w)
{
    put(w, "<th class=\"num\">Possible");
    if (w->m->partial) {
        put(w, "<br><span class=\"sub\">");
        possible_span(w, "");
        put(w, "</span>");
    }
    put(w, "</th>");
}

/* ---- the style sheet ------------------------------------------------ */

static const char STYLE[] =
    "@page{size:A4;margin:16mm 14mm 18mm 14mm}\n"
    ":root{--ink:#1b2430;--muted:#5b6675;--rule:#c9d1db;--soft:#eef2f6;"
    "--saved:#1f3a5f;--possible:#a9bdd3;--under:#8e1b1b;--delivers:#7fbf8e;"
    "--other:#c8c8c8;--off:#d5dbe3}\n"
    "*{box-sizing:border-box}\n"
    "html{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
    "body{margin:0 auto;max-width:190mm;padding:10mm 0;color:var(--ink);"
    "font:10pt/1.45 \"Helvetica Neue\",Helvetica,Arial,\"Liberation Sans\",\"DejaVu Sans\","
    "sans-serif}\n"
    "h1{font-size:20pt;font-weight:600;margin:2mm 0 1mm;letter-spacing:-.01em}\n"
    "h2{font-size:13pt;font-weight:600;margin:9mm 0 2mm;padding-bottom:1mm;"
    "border-bottom:1.5px solid var(--ink)}\n"
    "h3{font-size:10.5pt;font-weight:600;margin:6mm 0 1.5mm}\n"
    "p{margin:1.5mm 0}\n"
    ".kicker{text-transform:uppercase;letter-spacing:.08em;font-size:8pt;color:var(--muted);"
    "margin:0}\n"
    ".meta{color:var(--muted);font-size:9pt}\n"
    ".partial{display:inline-block;border:1px solid var(--ink);padding:.3mm 2mm;"
    "font-size:8.5pt;font-weight:600;text-transform:uppercase;letter-spacing:.06em}\n"
    ".figures{display:flex;gap:4mm;margin:5mm 0 3mm}\n"
    ".fig{flex:1;border:1px solid var(--rule);border-top:4px solid var(--saved);"
    "padding:3mm 4mm}\n"
    ".fig.possible{border-top-color:var(--possible)}\n"
    ".fig.under{border-top-color:var(--under)}\n"
    ".fig .label{font-size:8.5pt;text-transform:uppercase;letter-spacing:.06em;"
    "color:var(--muted)}\n"
    ".fig .value{font-size:22pt;font-weight:600;font-variant-numeric:tabular-nums;"
    "white-space:nowrap;margin:1mm 0}\n"
    ".fig .value .cur{font-size:10pt;font-weight:400;color:var(--muted)}\n"
    ".fig .sub{font-size:8.5pt;color:var(--muted)}\n"
    ".unpriced{border-left:4px solid var(--under);background:var(--soft);padding:2mm 3mm;"
    "font-weight:600}\n"
    ".empty{color:var(--muted);font-style:italic}\n"
    ".note{color:var(--muted);font-size:8.5pt}\n"
    "svg{display:block;max-width:100%;height:auto}\n"
    "svg text{font-family:inherit}\n"
    "table{border-collapse:collapse;width:100%;font-size:8pt;margin:1mm 0 3mm}\n"
    "thead{display:table-header-group}\n"
    "tr{break-inside:avoid;page-break-inside:avoid}\n"
    "th{text-align:left;font-weight:600;color:var(--muted);font-size:7.5pt;"
    "text-transform:uppercase;letter-spacing:.03em;border-bottom:1px solid var(--ink);"
    "padding:1.2mm 1.5mm;vertical-align:bottom}\n"
    "td{padding:1.2mm 1.5mm;border-bottom:.5px solid var(--rule);vertical-align:top}\n"
    ".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".key{overflow-wrap:anywhere}\n"
    "#groups-table td.key{min-width:28mm}\n"
    "#groups-table td,#groups-table th{padding:1mm .8mm;font-size:7.5pt}"
    "#groups-table th{font-size:6.5pt}\n"
    "table.disks{table-layout:fixed}"
    "table.disks col.c-vm{width:15%}table.disks col.c-sku{width:14%}"
    "table.disks col.c-h{width:16%}table.disks col.c-a{width:7.5%}"
    "table.disks col.c-p{width:11%}table.disks col.c-n{width:14%}\n"
    "table.disks td{overflow-wrap:anywhere}table.disks .num{padding-left:.5mm}\n"
    "th.num{white-space:normal}table.disks th{font-size:6.5pt;letter-spacing:0}\n"
    "table.disks td.sku{overflow-wrap:normal;word-break:normal}"
    "table.disks td.sku,table.disks td.sku .sub{font-size:7pt}\n"
    "tr.rest td{font-style:italic;color:var(--muted);border-top:1px dashed var(--rule)}\n"
    "tr.total td{font-weight:600;border-top:1px solid var(--ink);"
    "border-bottom:1.5px solid var(--ink);background:var(--soft)}\n"
    "td .sub,.sub{color:var(--muted);font-size:7.5pt}\n"
    ".sku{overflow-wrap:break-word}\n"
    ".hs{display:flex;flex-wrap:wrap;justify-content:space-between;column-gap:1.5mm}\n"
    ".v{display:inline-block;white-space:nowrap;padding:0 "
    "1.5mm;border-radius:2px;font-size:7.5pt;font-weight:600}\n"
    ".v-under{background:var(--under);color:#fff}\n"
    ".v-delivers{background:var(--delivers);color:var(--ink)}\n"
    ".v-other{background:var(--other);color:var(--ink)}\n"
    ".why{color:var(--muted);font-size:7.5pt}\n"
    ".legend{display:flex;gap:5mm;flex-wrap:wrap;font-size:8pt;color:var(--muted);margin:1mm 0}\n"
    ".legend svg{display:inline-block;vertical-align:middle;margin-right:1mm}\n"
    ".timeline td,.timeline th{padding:.6mm 1.5mm}\n"
    "table.timeline{table-layout:fixed}.timeline col.t-vm{width:22%}"
    ".timeline td.vm{overflow-wrap:anywhere}\n"
    ".timeline svg{width:100%;height:auto}\n"
    ".bars td{padding:.8mm 1.5mm;overflow-wrap:anywhere}\n"
    "table.bars{table-layout:fixed}.bars col.b-vm{width:22%}.bars col.b-v{width:20%}"
    ".bars col.b-bar{width:11%}.bars col.b-n{width:18%}.bars svg{width:100%;height:auto}\n"
    ".method{font-size:9pt}\n"
    ".method li{margin:1mm 0}\n"
    "footer{margin-top:8mm;color:var(--muted);font-size:8pt;border-top:.5px solid var(--rule);"
    "padding-top:2mm}\n"
    "@media print{body{padding:0;max-width:none}"
    "section.break{break-before:page;page-break-before:always}"
    "h2,h3{break-after:avoid;page-break-after:avoid}"
    ".figures,.chart{break-inside:avoid}}\n";

/* ---- the header and the headline ------------------------------------ */

static int64_t priced_disks(const struct tw_mr_total *t)
{
    return t->disks - t->unpriced;
}

static void header(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    char mn[32], a[48], b[48];
    month_name(m->month, mn, sizeof(mn));
    put(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
           "<meta name=\"generator\" content=\"tierwise\">\n"
           /* an empty icon, inline: a browser showing the page from a server
            * asks for none (no 404 in its console) */
           "<link rel=\"icon\" href=\"data:,\">\n<title>Disk savings, ");
    esc(w, mn);
    put(w, " (");
    esc(w, m->currency);
    put(w, ")</title>\n<style>\n");
    put(w, STYLE);
    put(w, "</style>\n</head>\n<body>\n<header>\n"
           "<p class=\"kicker\">tierwise &middot; monthly cost-saving report</p>\n<h1>Azure disk "
           "savings &mdash; ");
    esc(w, mn);
    put(w, "</h1>\n<p class=\"meta\">");
    esc(w, m->currency);
    putf(w, " &middot; %s to %s", when(m->from_ns, a, sizeof(a)), when(m->to_ns, b, sizeof(b)));
    put(w, " &middot; grouped by ");
    switch (m->group_by) {
    case TW_MR_BY_SUBSCRIPTION: put(w, "subscription"); break;
    case TW_MR_BY_TAG:
        put(w, "tag <b>");
        esc(w, m->group_tag);
        put(w, "</b>");
        break;
    default: put(w, "resource group"); break;
    }
    put(w, " &middot; generated ");
    esc(w, m->generated_at);
    put(w, "</p>\n");
    if (m->partial) {
        put(w, "<p><span class=\"partial\" data-figure=\"partial\">Month to date</span> The month "
               "is still running: the figures run to ");
        put(w, when(m->to_ns, a, sizeof(a)));
        put(w, "; the month ends ");
        put(w, when(m->month_end_ns, b, sizeof(b)));
        put(w, ".</p>\n");
    }
    put(w, "</header>\n");
}

/* The unpriced disks in words: "3 disks are not priced (regions westeurope
 * (2 disks), brazilsouth (1 disk))", with the ones a book lacks the SKU of. */
static void unpriced_sentence(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    const struct tw_mr_total *t = &m->fleet;
    if (t->unpriced <= 0)
        return;
    char n[32];
    int64_t by_sku = 0;
    for (size_t i = 0; i < m->n_disks; i++) {
        const struct tw_mr_disk *d = &m->disks[i];
        if (!d->priced && d->unpriced &&
            (!strcmp(d->unpriced, "no_price") || !strcmp(d->unpriced, "unknown_sku")))
            by_sku++;
    }
    putf(w,
         "<p class=\"unpriced\" role=\"note\" id=\"unpriced\"><span data-figure=\"unpriced\">%s"
         "</span> %s not priced",
         count(t->unpriced, n, sizeof(n)), t->unpriced == 1 ? "disk is" : "disks are");
    if (m->n_missing > 0 || by_sku > 0) {
        put(w, " (");
        if (m->n_missing > 0) {
            put(w, m->n_missing == 1 ? "region " : "regions ");
            for (size_t i = 0; i < m->n_missing; i++) {
                if (i)
                    put(w, ", ");
                esc(w, m->missing[i].region);
                putf(w, " (%s %s)", count(m->missing[i].disks, n, sizeof(n)),
                     m->missing[i].disks == 1 ? "disk" : "disks");
            }
        }
        if (by_sku > 0) {
            if (m->n_missing > 0)
                put(w, "; ");
            putf(w, "%s on a SKU the price book lacks", count(by_sku, n, sizeof(n)));
        }
        put(w, ")");
    }
    if (t->unpriced > TW_MR_HTML_ROWS_MAX && m->n_disks > TW_MR_HTML_ROWS_MAX) {
        putf(w,
             ": their amounts are left out of every figure and total of this report, not "
             "counted as zero; the tables list %s of them with the reason (the page's "
             "limit), the CSV form all.</p>\n",
             count(TW_MR_HTML_ROWS_MAX, n, sizeof(n)));
        return;
    }
    put(w, t->unpriced == 1
               ? ": its amounts are left out of every figure and total of this report, not "
                 "counted as zero; the tables list it with the reason.</p>\n"
               : ": their amounts are left out of every figure and total of this report, not "
                 "counted as zero; the tables list them with the reason.</p>\n");
}

static void headline(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    const struct tw_mr_total *t = &m->fleet;
    char a[48], b[48], c[48];
    const char *cur = m->currency;
    bool none_priced = t->disks > 0 && priced_disks(t) <= 0;
    put(w, "<section id=\"headline\" class=\"headline\">\n<div class=\"figures\">\n");
    /* saved */
    put(w, "<div class=\"fig saved\"><div class=\"label\">Saved this month");
    if (m->partial)
        put(w, " (to date)");
    put(w, "</div><div class=\"value\">");
    if (none_priced) {
        put(w, "<span data-figure=\"realised\">not priced</span>");
    } else {
        putf(w, "<span data-figure=\"realised\">%s</span> <span class=\"cur\">",
             money(w, t->realised_r, a, sizeof(a)));
        esc(w, cur);
        put(w, "</span>");
    }
    put(w, "</div><div class=\"sub\">");
    if (!none_priced) {
        putf(w, "cost <span data-figure=\"cost\">%s</span> ", money(w, t->cost_r, b, sizeof(b)));
        esc(w, cur);
        putf(w, " against %s ", money(w, t->baseline_r, c, sizeof(c)));
        esc(w, cur);
        put(w, " had every disk stayed on its original SKU");
    } else {
        put(w, "cost <span data-figure=\"cost\">n/a</span>: no disk is priced");
    }
    put(w, "</div></div>\n");
    /* still possible */
    put(w, "<div class=\"fig possible\"><div class=\"label\">Still possible");
    possible_span(w, "");
    put(w, "</div><div class=\"value\">");
    if (m->n_policies == 0 || none_priced) {
        put(w, "<span data-figure=\"possible\">n/a</span></div><div class=\"sub\">");
        put(w, m->n_policies == 0 ? "no policy was given: the report was asked for no "
                                    "further saving"
                                  : "no disk is priced");
    } else {
        putf(w, "<span data-figure=\"possible\">%s</span> <span class=\"cur\">",
             money(w, t->possible_r, a, sizeof(a)));
        esc(w, cur);
        put(w, m->partial ? "</span></div><div class=\"sub\">modelled over the month to date, "
                            "beyond what is realised, under "
                          : "</span></div><div class=\"sub\">more this month under ");
        put(w, m->n_policies == 1 ? "the policy " : "the policies ");
        for (size_t i = 0; i < m->n_policies; i++) {
            if (i)
                put(w, ", ");
            esc(w, m->policies[i]);
        }
    }
    put(w, "</div></div>\n");
    /* under */
    putf(w,
         "<div class=\"fig under\"><div class=\"label\">Disks under-delivering</div>"
         "<div class=\"value\"><span data-figure=\"under\">%s</span> "
         "<span class=\"cur\">of <span data-figure=\"disks\">%s</span></span></div>"
         "<div class=\"sub\">",
         count(t->under, a, sizeof(a)), count(t->disks, b, sizeof(b)));
    int64_t judged = 0;
    for (size_t i = 0; i < m->n_disks; i++)
        if (m->disks[i].verdict[0])
            judged++;
    if (judged == 0 && t->disks > 0)
        put(w, "no disk has been measured yet (<span data-figure=\"judged\">0</span> "
               "measured): nothing is known to under-deliver");
    else
        putf(w,
             "latest measurement below the rated IOPS or MB/s; <span data-figure=\"judged\">"
             "%s</span> of the disks measured",
             count(judged, c, sizeof(c)));
    put(w, "</div></div>\n");
    put(w, "</div>\n");
    unpriced_sentence(w);
    if (t->disks == 0)
        put(w, "<p class=\"empty\">The store holds no disk for this month: there is nothing to "
               "report.</p>\n");
    put(w, "</section>\n");
}

/* A group's key for a table cell or a heading: by resource group, the
 * group's name first and its subscription after it, smaller (the key is
 * "subscription/resource group"). */
static void group_key(struct hw *w, const char *key, bool cell)
{
    const char *slash = w->m->group_by == TW_MR_BY_RESOURCE_GROUP ? strchr(key, '/') : NULL;
    if (!slash || !slash[1]) {
        esc(w, key);
        return;
    }
    esc(w, slash + 1);
    put(w, cell ? "<br><span class=\"sub\">" : " <span class=\"sub\">");
    char sub[256];
    size_t n = (size_t)(slash - key) < sizeof(sub) - 1 ? (size_t)(slash - key) : sizeof(sub) - 1;
    memcpy(sub, key, n);
    sub[n] = '\0';
    esc(w, sub);
    put(w, "</span>");
}

/* The short label of a group inside a chart. */
static const char *group_label(const struct hw *w, const char *key)
{
    const char *slash = w->m->group_by == TW_MR_BY_RESOURCE_GROUP ? strchr(key, '/') : NULL;
    return slash && slash[1] ? slash + 1 : key;
}

/* The characters (UTF-8 lead bytes) of S. */
static size_t utf8_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

/* The byte offset of character K of S (N bytes). */
static size_t utf8_at(const char *s, size_t n, size_t k)
{
    size_t i = 0, c = 0;
    for (; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) {
            if (c == k)
                return i;
            c++;
        }
    }
    return n;
}

/* KEY as a chart label of at most LABEL_CHARS characters into OUT (raw,
 * escaped when written): a longer one cut in the middle, so keys that
 * differ only at their end ("...-prod-017", "...-prod-018") stay apart. */
static void cut_label(const char *key, char *out, size_t cap)
{
    size_t n = strlen(key), chars = utf8_chars(key, n);
    if (chars <= LABEL_CHARS || cap < 64) {
        snprintf(out, cap, "%s", key);
        return;
    }
    size_t head = utf8_at(key, n, 15), tail = utf8_at(key, n, chars - 18);
    if (head > cap / 2 - 4)
        head = 0;
    if (n - tail > cap / 2 - 4)
        tail = n;
    snprintf(out, cap, "%.*s\xe2\x80\xa6%s", (int)head, key, key + tail);
}

/* ---- saving per group ----------------------------------------------- */

struct rank {
    int64_t key, key2;
    size_t i;
};

static int by_rank_desc(const void *pa, const void *pb)
{
    const struct rank *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? 1 : -1;
    if (a->key2 != b->key2)
        return a->key2 < b->key2 ? 1 : -1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int by_rank_asc(const void *pa, const void *pb)
{
    const struct rank *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int64_t pos(int64_t v)
{
    return v > 0 ? v : 0;
}

/* The groups by realised saving, then possible, largest first: N of
 * them into a fresh array (NULL when there are none or memory lacks). */
static struct rank *rank_groups(struct hw *w, size_t *n)
{
    const struct tw_mr_model *m = w->m;
    *n = 0;
    if (m->n_groups == 0)
        return NULL;
    struct rank *r = calloc(m->n_groups, sizeof(*r));
    if (!r) {
        w->rc = tw_error_set(w->err, TW_ENOMEM, "the HTML report ran out of memory");
        return NULL;
    }
    for (size_t i = 0; i < m->n_groups; i++) {
        r[i].key = m->groups[i].t.realised_r.micros;
        r[i].key2 = m->groups[i].t.possible_r.micros;
        r[i].i = i;
    }
    qsort(r, m->n_groups, sizeof(*r), by_rank_desc);
    *n = m->n_groups;
    return r;
}

static void group_chart(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    char a[48], b[48];
    put(w, "<section id=\"saving-per-group\" class=\"chart\">\n<h2>Saving per group</h2>\n");
    size_t n = 0;
    struct rank *r = rank_groups(w, &n);
    size_t shown = n < CHART_GROUPS_MAX ? n : CHART_GROUPS_MAX;
    int64_t top = 0;
    for (size_t k = 0; k < shown; k++) {
        const struct tw_mr_total *t = &m->groups[r[k].i].t;
        int64_t s = pos(t->realised_r.micros) + pos(t->possible_r.micros);
        if (s > top)
            top = s;
    }
    if (top <= 0) {
        put(w, "<p class=\"empty\" id=\"saving-chart-empty\">Nothing to chart: no group saved "
               "or could still save anything this month.</p>\n</section>\n");
        free(r);
        return;
    }
    /* the labels, cut in the middle; two still alike are numbered */
    char(*labels)[256] = calloc(shown ? shown : 1, sizeof(*labels));
    if (!labels) {
        w->rc = tw_error_set(w->err, TW_ENOMEM, "the HTML report ran out of memory");
        free(r);
        return;
    }
    for (size_t k = 0; k < shown; k++)
        cut_label(group_label(w, m->groups[r[k].i].key), labels[k], sizeof(labels[k]));
    const int W = 720, LX = 210, BX = 216, BW = 330, VX = 716, ROW = 22, TOP = 26;
    int h = TOP + (int)shown * ROW + 8;
    putf(w,
         "<svg id=\"saving-chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
         "role=\"img\" aria-label=\"Realised and possible saving per group\" "
         "xmlns=\"http://www.w3.org/2000/svg\">\n",
         W, h, W, h);
    putf(w,
         "<rect x=\"%d\" y=\"6\" width=\"10\" height=\"10\" fill=\"#1f3a5f\"/>"
         "<text x=\"%d\" y=\"15\" font-size=\"10\" fill=\"#1b2430\">realised</text>"
         "<rect x=\"%d\" y=\"6\" width=\"10\" height=\"10\" fill=\"#a9bdd3\"/>"
         "<text x=\"%d\" y=\"15\" font-size=\"10\" fill=\"#1b2430\">still possible",
         BX, BX + 14, BX + 80, BX + 94);
    possible_span(w, "");
    putf(w,
         "</text><text x=\"%d\" y=\"15\" font-size=\"9\" fill=\"#5b6675\" "
         "text-anchor=\"end\">realised / possible (",
         VX);
    esc(w, m->currency);
    put(w, ")</text>\n");
    for (size_t k = 0; k < shown; k++) {
        const struct tw_mr_group *g = &m->groups[r[k].i];
        int y = TOP + (int)k * ROW;
        double rw = (double)pos(g->t.realised_r.micros) / (double)top * BW;
        double pw = (double)pos(g->t.possible_r.micros) / (double)top * BW;
        put(w, "<g><title>");
        esc(w, g->key);
        putf(w, ": realised %s, still possible %s</title>", money(w, g->t.realised_r, a, sizeof(a)),
             money(w, g->t.possible_r, b, sizeof(b)));
        putf(w,
             "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#1b2430\" "
             "text-anchor=\"end\">",
             LX, y + 14);
        bool alike = false;
        for (size_t j = 0; j < shown && !alike; j++)
            alike = j != k && !strcmp(labels[j], labels[k]);
        if (alike)
            putf(w, "%zu. ", k + 1);
        esc_max(w, labels[k], LABEL_CHARS + 1);
        put(w, "</text>");
        putf(w, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"1\" fill=\"#c9d1db\"/>", BX,
             y + ROW - 2, BW);
        if (rw > 0)
            putf(w, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"#1f3a5f\"/>", BX,
                 y + 3, rw);
        if (pw > 0)
            putf(w, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"#a9bdd3\"/>",
                 BX + rw, y + 3, pw);
        putf(w,
             "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" fill=\"#1b2430\">"
             "<tspan font-weight=\"600\">%s</tspan><tspan fill=\"#5b6675\"> / %s</tspan>"
             "</text></g>\n",
             VX, y + 14, money(w, g->t.realised_r, a, sizeof(a)),
             money(w, g->t.possible_r, b, sizeof(b)));
    }
    put(w, "</svg>\n");
    if (n > shown)
        putf(w,
             "<p class=\"note\">The %zu groups with the largest saving; the other %zu are in "
             "the table of groups.</p>\n",
             shown, n - shown);
    put(w, "</section>\n");
    free(labels);
    free(r);
}

/* ---- measured against expected ------------------------------------- */

static const char *verdict_class(const char *v)
{
    if (!strcmp(v, "under"))
        return "v-under";
    if (!strcmp(v, "delivers"))
        return "v-delivers";
    return "v-other";
}

static const char *verdict_fill(const char *v)
{
    if (!strcmp(v, "under"))
        return "#8e1b1b";
    if (!strcmp(v, "delivers"))
        return "#7fbf8e";
    return "#c8c8c8";
}

static double ratio(double measured, double expected)
{
    if (isnan(measured) || isnan(expected) || isinf(measured) || isinf(expected) || expected <= 0)
        return NAN;
    return measured / expected;
}

/* One bar: MEASURED as a share of EXPECTED, 0..150 % drawn, 100 % marked. */
static void pct_bar(struct hw *w, double measured, double expected, const char *fill)
{
    const int W = 150, H = 12;
    double q = ratio(measured, expected);
    putf(w,
         "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
         "xmlns=\"http://www.w3.org/2000/svg\" aria-hidden=\"true\">"
         "<rect x=\"0\" y=\"2\" width=\"%d\" height=\"8\" fill=\"#eef2f6\"/>",
         W, H, W, H, W);
    if (!isnan(q)) {
        double len = q * 100.0;
        if (len > W)
            len = W;
        if (len < 0)
            len = 0;
        putf(w, "<rect x=\"0\" y=\"2\" width=\"%.1f\" height=\"8\" fill=\"%s\"/>", len, fill);
    }
    put(w, "<rect x=\"100\" y=\"0\" width=\"1\" height=\"12\" fill=\"#1b2430\"/></svg>");
}

static void measure_cell(struct hw *w, double measured, double expected, int decimals,
                         const char *fill)
{
    char a[48], b[48];
    double q = ratio(measured, expected);
    put(w, "<td>");
    pct_bar(w, measured, expected, fill);
    putf(w, "</td><td class=\"num\">%s / %s", number(measured, decimals, a, sizeof(a)),
         number(expected, decimals, b, sizeof(b)));
    if (!isnan(q))
        putf(w, " <span class=\"sub\">(%.0f%%)</span>", q * 100.0);
    put(w, "</td>");
}

static void verdicts(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    put(w, "<section id=\"measured\">\n<h2>Measured against expected</h2>\n");
    size_t n = 0;
    for (size_t i = 0; i < m->n_disks; i++)
        if (m->disks[i].verdict[0])
            n++;
    if (n == 0) {
        put(w, "<p class=\"empty\" id=\"measured-empty\">No disk has a compliance verdict yet: no "
               "agent has measured one, so there is nothing to compare.</p>\n</section>\n");
        return;
    }
    struct rank *r = calloc(n, sizeof(*r));
    if (!r) {
        w->rc = tw_error_set(w->err, TW_ENOMEM, "the HTML report ran out of memory");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < m->n_disks; i++) {
        const struct tw_mr_disk *d = &m->disks[i];
        if (!d->verdict[0])
            continue;
        double qi = ratio(d->measured_iops, d->expected_iops);
        double qm = ratio(d->measured_mbps, d->expected_mbps);
        double q = isnan(qi) ? qm : isnan(qm) ? qi : fmin(qi, qm);
        /* the worst first: an "under" verdict, then the lowest share */
        int64_t key = isnan(q) ? INT64_C(1) << 40 : (int64_t)llround(fmin(q, 1e6) * 1e6);
        if (strcmp(d->verdict, "under") != 0)
            key += INT64_C(1) << 50;
        r[k].key = key;
        r[k].i = i;
        k++;
    }
    qsort(r, n, sizeof(*r), by_rank_asc);
    size_t shown = n < VERDICT_ROWS_MAX ? n : VERDICT_ROWS_MAX;
    put(w, "<p>The latest verdict of each measured disk: its measured IOPS and MB/s as a share "
           "of what its SKU and VM size should give (the line is 100&nbsp;%; bars stop at "
           "150&nbsp;%). Worst first.</p>\n");
    put(w, "<table class=\"bars\" id=\"measured-table\"><colgroup><col class=\"b-vm\">"
           "<col class=\"b-v\"><col class=\"b-bar\"><col class=\"b-n\"><col class=\"b-bar\">"
           "<col class=\"b-n\"></colgroup><thead><tr><th>VM / disk</th>"
           "<th>Verdict</th><th>IOPS</th><th class=\"num\">measured /<br>expected</th>"
           "<th>MB/s</th><th class=\"num\">measured /<br>expected</th></tr></thead><tbody>\n");
    for (size_t j = 0; j < shown; j++) {
        const struct tw_mr_disk *d = &m->disks[r[j].i];
        const char *fill = verdict_fill(d->verdict);
        putf(w, "<tr data-id=\"%lld\"><td>", (long long)d->disk_id);
        esc(w, d->vm);
        put(w, " / ");
        esc(w, d->disk);
        putf(w, "</td><td><span class=\"v %s\">", verdict_class(d->verdict));
        esc(w, d->verdict);
        put(w, "</span>");
        if (d->verdict_reason[0]) {
            put(w, "<br><span class=\"why\">");
            esc(w, d->verdict_reason);
            put(w, "</span>");
        }
        if (d->judged_at[0]) {
            put(w, "<br><span class=\"why\">measured ");
            esc(w, d->judged_at);
            put(w, "</span>");
        }
        put(w, "</td>");
        measure_cell(w, d->measured_iops, d->expected_iops, 0, fill);
        measure_cell(w, d->measured_mbps, d->expected_mbps, 1, fill);
        put(w, "</tr>\n");
    }
    put(w, "</tbody></table>\n");
    if (n > shown)
        putf(w,
             "<p class=\"note\">The %zu worst of %zu disks with a verdict; the others are in "
             "the disk tables.</p>\n",
             shown, n);
    put(w, "<div class=\"legend\"><span><span class=\"v v-under\">under</span> below what it "
           "should give</span><span><span class=\"v v-delivers\">delivers</span> what it "
           "should</span><span><span class=\"v v-other\">other</span> not judged either way "
           "(see the disk's reason)</span></div>\n</section>\n");
    free(r);
}

/* ---- the week timeline ---------------------------------------------- */

static const int TL_W = 520, TL_H = 22;

static double tl_x(const struct tw_mr_model *m, int64_t ns)
{
    int64_t span = m->week_to_ns - m->week_from_ns;
    if (span <= 0)
        return 0;
    if (ns < m->week_from_ns)
        ns = m->week_from_ns;
    if (ns > m->week_to_ns)
        ns = m->week_to_ns;
    return (double)(ns - m->week_from_ns) / (double)span * TL_W;
}

static void day_grid(struct hw *w, int h)
{
    for (int d = 1; d < 7; d++)
        putf(w, "<rect x=\"%.1f\" y=\"0\" width=\"0.6\" height=\"%d\" fill=\"#c9d1db\"/>",
             (double)TL_W * d / 7.0, h);
}

static void mark_shape(struct hw *w, const char *kind, bool failed, double x, double y)
{
    const char *fill = failed                       ? "#ffffff"
                       : !strcmp(kind, "downgrade") ? "#1f3a5f"
                       : !strcmp(kind, "upgrade")   ? "#d08a2e"
                                                    : "#5b6675";
    const char *stroke = failed ? "#8e1b1b" : "#1b2430";
    if (!strcmp(kind, "downgrade"))
        putf(w,
             "<path d=\"M%.1f %.1f l-5 -8 h10 z\" fill=\"%s\" stroke=\"%s\" "
             "stroke-width=\"0.8\"/>",
             x, y + 4, fill, stroke);
    else if (!strcmp(kind, "upgrade"))
        putf(w,
             "<path d=\"M%.1f %.1f l-5 8 h10 z\" fill=\"%s\" stroke=\"%s\" "
             "stroke-width=\"0.8\"/>",
             x, y - 4, fill, stroke);
    else
        putf(w,
             "<rect x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"12\" fill=\"%s\" "
             "stroke=\"%s\" stroke-width=\"0.5\"/>",
             x - 1, y - 6, fill, stroke);
}

static bool off_state(const char *state)
{
    return state[0] && strcmp(state, "running") != 0;
}

static void week(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    char a[48], b[48];
    put(w, "<section id=\"week\">\n<h2>A week of switches</h2>\n");
    if (m->week_to_ns > m->week_from_ns) {
        putf(w, "<p>From %s to %s: ", when(m->week_from_ns, a, sizeof(a)),
             when(m->week_to_ns, b, sizeof(b)));
        put(w, "each VM with a switch that week, its deallocated time shaded, each tier switch "
               "marked at its instant. Times in UTC.</p>\n");
    }
    if (m->n_week == 0 || m->week_to_ns <= m->week_from_ns) {
        put(w, "<p class=\"empty\" id=\"week-empty\">No switch that week: no disk of the fleet "
               "was downgraded or upgraded in it.</p>\n</section>\n");
        return;
    }
    size_t shown = m->n_week < WEEK_VMS_MAX ? m->n_week : WEEK_VMS_MAX;
    /* the axis, in the table's head so it repeats on each printed page */
    put(w, "<table class=\"timeline\" id=\"week-table\"><colgroup><col class=\"t-vm\"><col>"
           "</colgroup><thead><tr><th>VM</th><th>");
    putf(w,
         "<svg viewBox=\"0 0 %d 14\" width=\"%d\" height=\"14\" "
         "xmlns=\"http://www.w3.org/2000/svg\" aria-label=\"days of the week\">",
         TL_W, TL_W);
    for (int d = 0; d < 7; d++) {
        int64_t day_ns = m->week_from_ns + (int64_t)d * TW_NS_PER_DAY;
        struct tw_civil c;
        tw_civil_from_ns(day_ns, &c);
        int64_t days = tw_floor_div(day_ns, TW_NS_PER_DAY);
        putf(w,
             "<text x=\"%.1f\" y=\"11\" font-size=\"9\" fill=\"#5b6675\" "
             "text-anchor=\"middle\">%s %d</text>",
             (double)TL_W * (d + 0.5) / 7.0, DAYS[tw_weekday_from_days(days) % 7], c.day);
    }
    put(w, "</svg></th></tr></thead><tbody>\n");
    for (size_t v = 0; v < shown; v++) {
        const struct tw_mr_week_vm *vm = &m->week[v];
        putf(w, "<tr data-id=\"%lld\"><td class=\"vm\">", (long long)vm->vm_id);
        esc(w, vm->vm);
        put(w, "</td><td>");
        putf(w,
             "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
             "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"",
             TL_W, TL_H, TL_W, TL_H);
        esc(w, vm->vm);
        putf(w, ": %zu switches\">", vm->n_marks);
        putf(w, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"1\" fill=\"#5b6675\"/>", TL_H / 2,
             TL_W);
        for (size_t s = 0; s < vm->n_spans; s++) {
            const struct tw_mr_span *sp = &vm->spans[s];
            if (!off_state(sp->state) || sp->to_ns <= sp->from_ns)
                continue;
            double x0 = tl_x(m, sp->from_ns), x1 = tl_x(m, sp->to_ns);
            if (x1 <= x0)
                continue;
            bool dealloc = strstr(sp->state, "dealloc") != NULL;
            putf(w,
                 "<rect x=\"%.1f\" y=\"3\" width=\"%.1f\" height=\"16\" fill=\"%s\">"
                 "<title>",
                 x0, x1 - x0, dealloc ? "#b9c4d1" : "#e3e3e3");
            esc(w, sp->state);
            putf(w, " from %s to %s</title></rect>", when(sp->from_ns, a, sizeof(a)),
                 when(sp->to_ns, b, sizeof(b)));
        }
        day_grid(w, TL_H);
        size_t nm = vm->n_marks < WEEK_MARKS_MAX ? vm->n_marks : WEEK_MARKS_MAX;
        for (size_t k = 0; k < nm; k++) {
            const struct tw_mr_mark *mk = &vm->marks[k];
            if (mk->at_ns < m->week_from_ns || mk->at_ns > m->week_to_ns)
                continue;
            bool failed = mk->state[0] && strcmp(mk->state, "done") != 0 &&
                          strcmp(mk->state, "verified") != 0;
            put(w, "<g><title>");
            esc(w, mk->kind);
            if (mk->disk[0]) {
                put(w, " of ");
                esc(w, mk->disk);
            }
            if (mk->to_sku[0]) {
                put(w, " to ");
                esc(w, mk->to_sku);
            }
            putf(w, " at %s", when(mk->at_ns, a, sizeof(a)));
            if (mk->state[0]) {
                put(w, " (");
                esc(w, mk->state);
                put(w, ")");
            }
            put(w, "</title>");
            mark_shape(w, mk->kind, failed, tl_x(m, mk->at_ns), TL_H / 2.0);
            put(w, "</g>");
        }
        put(w, "</svg>");
        if (vm->n_marks > nm)
            putf(w, "<span class=\"sub\">%zu of %zu actions drawn</span>", nm, vm->n_marks);
        put(w, "</td></tr>\n");
    }
    put(w, "</tbody></table>\n");
    if (m->n_week > shown)
        putf(w,
             "<p class=\"note\">%zu of %zu VMs with a switch that week are drawn; the JSON form "
             "lists them all.</p>\n",
             shown, m->n_week);
    put(w, "<div class=\"legend\">"
           "<span><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\">"
           "<path d=\"M6 10 l-5 -8 h10 z\" fill=\"#1f3a5f\" stroke=\"#1b2430\" "
           "stroke-width=\"0.8\"/></svg>downgrade</span>"
           "<span><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\">"
           "<path d=\"M6 2 l-5 8 h10 z\" fill=\"#d08a2e\" stroke=\"#1b2430\" "
           "stroke-width=\"0.8\"/></svg>upgrade</span>"
           "<span><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\">"
           "<path d=\"M6 10 l-5 -8 h10 z\" fill=\"#ffffff\" stroke=\"#8e1b1b\" "
           "stroke-width=\"0.8\"/></svg>not completed (hollow)</span>"
           "<span><svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\">"
           "<rect x=\"5\" y=\"0\" width=\"2\" height=\"12\" fill=\"#5b6675\"/></svg>VM stop or "
           "start</span>"
           "<span><svg width=\"18\" height=\"12\" viewBox=\"0 0 18 12\" aria-hidden=\"true\">"
           "<rect x=\"0\" y=\"0\" width=\"18\" height=\"12\" fill=\"#b9c4d1\"/></svg>"
           "deallocated</span>"
           "<span><svg width=\"18\" height=\"12\" viewBox=\"0 0 18 12\" aria-hidden=\"true\">"
           "<rect x=\"0\" y=\"0\" width=\"18\" height=\"12\" fill=\"#e3e3e3\"/></svg>"
           "stopped, or not known</span>"
           "<span><svg width=\"18\" height=\"12\" viewBox=\"0 0 18 12\" aria-hidden=\"true\">"
           "<rect x=\"0\" y=\"5\" width=\"18\" height=\"1\" fill=\"#5b6675\"/></svg>"
           "running</span></div>\n</section>\n");
}

/* ---- the tables ----------------------------------------------------- */

static void total_cells(struct hw *w, const struct tw_mr_total *t, bool possible)
{
    char a[48], b[48], c[48], d[48], e[48];
    putf(w,
         "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
         "<td class=\"num\">%s</td>",
         money(w, t->cost_r, a, sizeof(a)), money(w, t->transactions_r, b, sizeof(b)),
         money(w, t->baseline_r, c, sizeof(c)), money(w, t->realised_r, d, sizeof(d)));
    if (possible)
        putf(w, "<td class=\"num\">%s</td>", money(w, t->possible_r, e, sizeof(e)));
    else
        put(w, "<td class=\"num\">n/a</td>");
}

/* The hours of a table's rows as shown, in hundredths: a group's are the
 * sum of its disks' rounded rows, the fleet's the sum of the groups'. */
struct row_hours {
    int64_t downgraded, drift;
};

static struct row_hours group_hours(const struct tw_mr_model *m, const struct tw_mr_group *g)
{
    struct row_hours h = {0, 0};
    for (size_t k = 0; k < g->n && g->first + k < m->n_disks; k++) {
        const struct tw_mr_disk *d = &m->disks[g->first + k];
        h.downgraded += centi_hours(d->downgraded_seconds);
        h.drift += centi_hours(d->drift_seconds);
    }
    return h;
}

static void group_row(struct hw *w, const char *label, const struct tw_mr_total *t,
                      struct row_hours h, bool total)
{
    char a[32], b[32], c[32], d[32], e[32], f[48], g[48];
    put(w, total ? "<tr class=\"total\"><td class=\"key\">" : "<tr><td class=\"key\">");
    if (total)
        esc(w, label);
    else
        group_key(w, label, true);
    putf(w,
         "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
         "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
         "<td class=\"num\">%s</td>",
         count(t->vms, a, sizeof(a)), count(t->disks, b, sizeof(b)),
         count(t->unpriced, c, sizeof(c)), count(t->under, d, sizeof(d)),
         count(t->switches, e, sizeof(e)), hours_centi(h.downgraded, false, f, sizeof(f)),
         hours_centi(h.drift, false, g, sizeof(g)));
    total_cells(w, t, w->m->n_policies > 0);
    put(w, "</tr>\n");
}

static const char GROUP_HEAD[] =
    "<thead><tr><th>Group</th><th class=\"num\">VMs</th><th class=\"num\">Disks</th>"
    "<th class=\"num\">Not priced</th><th class=\"num\">Under</th>"
    "<th class=\"num\">Switches</th><th class=\"num\">Downgraded h</th>"
    "<th class=\"num\">Drift h</th><th class=\"num\">Cost</th>"
    "<th class=\"num\">of it trans&shy;actions</th><th class=\"num\">Baseline</th>"
    "<th class=\"num\">Realised</th>";

static void groups_table(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    put(w, "<section id=\"tables\" class=\"break\">\n<h2>Groups</h2>\n");
    if (m->n_groups == 0) {
        put(w, "<p class=\"empty\" id=\"groups-empty\">No group: the month has no disk.</p>\n");
        return;
    }
    put(w, "<p>Amounts in ");
    esc(w, m->currency);
    put(w, ". Each row is the sum of its disks' rounded rows; the fleet's line is the sum of "
           "the groups'. Hours are disk-hours.</p>\n");
    size_t n = m->n_groups, shown = n;
    struct rank *r = NULL;
    if (n > TW_MR_HTML_ROWS_MAX) {
        r = rank_groups(w, &n);
        if (!r)
            return;
        shown = TW_MR_HTML_ROWS_MAX;
    }
    put(w, "<table id=\"groups-table\">");
    put(w, GROUP_HEAD);
    possible_th(w);
    put(w, "</tr></thead>\n");
    put(w, "<tbody>\n");
    struct row_hours fleet = {0, 0};
    for (size_t k = 0; k < n; k++) {
        struct row_hours h = group_hours(m, &m->groups[k]);
        fleet.downgraded += h.downgraded;
        fleet.drift += h.drift;
    }
    for (size_t k = 0; k < shown; k++) {
        const struct tw_mr_group *g = &m->groups[r ? r[k].i : k];
        group_row(w, g->key, &g->t, group_hours(m, g), false);
    }
    group_row(w, "Fleet", &m->fleet, fleet, true);
    put(w, "</tbody></table>\n");
    if (shown < n)
        putf(w,
             "<p class=\"note\" id=\"groups-left-out\">The %zu groups with the largest "
             "realised saving are listed; %zu groups are left out here. The fleet's line "
             "counts them all, and the CSV form has every row.</p>\n",
             shown, n - shown);
    free(r);
}

static void sku_tier(struct hw *w, const char *sku, const char *tier)
{
    esc(w, sku[0] ? sku : "?");
    if (tier[0]) {
        put(w, " <span class=\"sub\">");
        esc(w, tier);
        put(w, "</span>");
    }
}

static void disk_row(struct hw *w, const struct tw_mr_disk *d)
{
    char a[48], b[48], c[48];
    putf(w, "<tr class=\"disk\" data-id=\"%lld\"><td><b><bdi>", (long long)d->disk_id);
    esc(w, d->vm);
    put(w, "</bdi></b><br><bdi>");
    esc(w, d->disk);
    putf(w, "</bdi> <span class=\"sub\">%s", d->role == TW_DISK_OS ? "OS" : "data");
    if (d->location && d->location[0]) {
        put(w, " &middot; ");
        esc(w, d->location);
    }
    put(w, "</span></td><td class=\"sku\">");
    sku_tier(w, d->original_sku, d->original_tier);
    if (strcmp(d->original_sku, d->sku) != 0 || strcmp(d->original_tier, d->tier) != 0) {
        put(w, "<br>&rarr; ");
        sku_tier(w, d->sku, d->tier);
    }
    put(w, "</td><td class=\"sku\">");
    for (size_t k = 0; k < d->n_skus; k++) {
        put(w, "<span class=\"hs\"><span>");
        esc(w, d->skus[k].sku);
        putf(w, "</span> <span class=\"sub\">%s&nbsp;h</span></span>",
             hours(d->skus[k].seconds, true, a, sizeof(a)));
    }
    put(w, "</td>");
    if (d->priced) {
        putf(w, "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
             money(w, d->cost_r, a, sizeof(a)), money(w, d->baseline_r, b, sizeof(b)),
             money(w, d->realised_r, c, sizeof(c)));
        if (d->possible_known)
            putf(w, "<td class=\"num\">%s</td>", money(w, d->possible_r, a, sizeof(a)));
        else
            put(w, "<td class=\"num\">&mdash;</td>");
    } else {
        put(w, "<td class=\"num\" colspan=\"4\">not priced</td>");
    }
    /* the policy and the verdict */
    put(w, "<td>");
    if (d->policy[0]) {
        esc(w, d->policy);
    } else {
        put(w, "<span class=\"sub\">no policy</span>");
    }
    if (d->verdict[0]) {
        putf(w, "<br><span class=\"v %s\">", verdict_class(d->verdict));
        esc(w, d->verdict);
        putf(w, "</span><br><span class=\"sub\">IOPS %s/%s",
             number(d->measured_iops, 0, a, sizeof(a)), number(d->expected_iops, 0, b, sizeof(b)));
        putf(w, "<br>MB/s %s/%s</span>", number(d->measured_mbps, 1, a, sizeof(a)),
             number(d->expected_mbps, 1, b, sizeof(b)));
    }
    put(w, "</td><td class=\"why\">");
    bool any = false;
    if (d->switches > 0 || d->downgraded_seconds > 0) {
        putf(w, "%s %s, %s&nbsp;h downgraded", count(d->switches, a, sizeof(a)),
             d->switches == 1 ? "switch" : "switches",
             hours(d->downgraded_seconds, true, b, sizeof(b)));
        any = true;
    }
    if (d->priced && d->transactions_r.micros != 0) {
        putf(w, "%sof the cost, transactions %s", any ? "<br>" : "",
             money(w, d->transactions_r, a, sizeof(a)));
        any = true;
    }
    if (d->drift_seconds > 0) {
        putf(w, "%s<b>drift %s&nbsp;h</b>", any ? "<br>" : "",
             hours(d->drift_seconds, true, a, sizeof(a)));
        any = true;
    }
    if (!d->priced) {
        put(w, any ? "<br>" : "");
        put(w, "<b>not priced</b>");
        if (d->unpriced_why[0]) {
            put(w, ": ");
            esc(w, d->unpriced_why);
        } else if (d->unpriced) {
            put(w, ": ");
            esc(w, d->unpriced);
        }
        any = true;
    }
    if (d->excluded) {
        put(w, any ? "<br>" : "");
        put(w, "excluded (");
        esc(w, d->excluded);
        put(w, ")");
        if (d->excluded_why[0]) {
            put(w, ": ");
            esc(w, d->excluded_why);
        }
        any = true;
    } else if (d->priced && !d->possible_known) {
        put(w, any ? "<br>" : "");
        put(w, "no policy given covers it");
        any = true;
    }
    if (d->running_metered_seconds > 0) {
        putf(w,
             "%s%s&nbsp;h on a SKU charged per transaction while its VM ran: the number "
             "of transactions is not known, so their charge is not counted",
             any ? "<br>" : "", hours(d->running_metered_seconds, true, a, sizeof(a)));
    }
    put(w, "</td></tr>\n");
}

static void disk_head(struct hw *w)
{
    put(w, "<thead><tr><th>VM / disk</th><th>SKU original &rarr; now</th><th>Hours by SKU</th>"
           "<th class=\"num\">Cost</th><th class=\"num\">Baseline</th>"
           "<th class=\"num\">Realised</th>");
    possible_th(w);
    put(w, "<th>Policy, verdict</th><th>Notes</th></tr></thead>\n");
}

static const char DISK_COLS[] =
    "<colgroup><col class=\"c-vm\"><col class=\"c-sku\"><col class=\"c-h\"><col class=\"c-a\">"
    "<col class=\"c-a\"><col class=\"c-a\"><col class=\"c-a\"><col class=\"c-p\">"
    "<col class=\"c-n\"></colgroup>";

static void disk_total_row(struct hw *w, const char *label, const struct tw_mr_total *t,
                           const char *cls)
{
    char a[48], b[48], c[48], d[48];
    putf(w, "<tr class=\"%s\"><td colspan=\"3\">", cls);
    esc(w, label);
    putf(w, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
         money(w, t->cost_r, a, sizeof(a)), money(w, t->baseline_r, b, sizeof(b)),
         money(w, t->realised_r, c, sizeof(c)));
    if (w->m->n_policies > 0)
        putf(w, "<td class=\"num\">%s</td>", money(w, t->possible_r, d, sizeof(d)));
    else
        put(w, "<td class=\"num\">n/a</td>");
    put(w, "<td colspan=\"2\" class=\"why\">");
    if (t->unpriced > 0)
        putf(w, "%s not priced, left out", count(t->unpriced, a, sizeof(a)));
    put(w, "</td></tr>\n");
}

static void group_heading(struct hw *w, const struct tw_mr_group *g)
{
    char a[32];
    put(w, "<h3>");
    group_key(w, g->key, false);
    putf(w, " <span class=\"sub\">&middot; %s %s</span></h3>\n", count(g->t.disks, a, sizeof(a)),
         g->t.disks == 1 ? "disk" : "disks");
}

static void disk_tables(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    put(w, "<h2>Disks</h2>\n");
    if (m->n_disks == 0) {
        put(w, "<p class=\"empty\" id=\"disks-empty\">No disk to list.</p>\n</section>\n");
        return;
    }
    bool collapse = m->n_disks > TW_MR_HTML_ROWS_MAX;
    bool *pick = NULL;
    if (collapse) {
        struct rank *r = calloc(m->n_disks, sizeof(*r));
        pick = calloc(m->n_disks, sizeof(*pick));
        if (!r || !pick) {
            free(r);
            free(pick);
            w->rc = tw_error_set(w->err, TW_ENOMEM, "the HTML report ran out of memory");
            return;
        }
        /* the disks to look at first, whatever they save: unpriced, then
         * drifting, then under-delivering; then the largest saving */
        int64_t flagged = 0, flagged_out = 0;
        for (size_t i = 0; i < m->n_disks; i++) {
            const struct tw_mr_disk *d = &m->disks[i];
            int64_t cls = !d->priced                     ? 3
                          : d->drift_seconds > 0         ? 2
                          : !strcmp(d->verdict, "under") ? 1
                                                         : 0;
            flagged += cls > 0;
            r[i].key = cls;
            r[i].key2 = d->priced ? d->realised_r.micros : 0;
            r[i].i = i;
        }
        qsort(r, m->n_disks, sizeof(*r), by_rank_desc);
        for (size_t k = 0; k < TW_MR_HTML_ROWS_MAX; k++)
            pick[r[k].i] = true;
        for (size_t k = TW_MR_HTML_ROWS_MAX; k < m->n_disks; k++)
            flagged_out += r[k].key > 0;
        free(r);
        char a[32], b[32], c[32];
        putf(w,
             "<p class=\"note\" id=\"disks-left-out\"><b>The report has %s disk rows: this page "
             "shows %s of them under their groups and leaves out the other %s.</b> It shows "
             "first every disk not priced, then every disk that drifted, then every disk "
             "under-delivering, then those with the largest realised saving",
             count((int64_t)m->n_disks, a, sizeof(a)), count(TW_MR_HTML_ROWS_MAX, b, sizeof(b)),
             count((int64_t)(m->n_disks - TW_MR_HTML_ROWS_MAX), c, sizeof(c)));
        if (flagged_out > 0)
            putf(w,
                 "; <b>%s of the %s disks not priced, drifting or under-delivering do not fit "
                 "and are left out too</b>",
                 count(flagged_out, a, sizeof(a)), count(flagged, b, sizeof(b)));
        put(w, ". Under each group, a line adds up the rows not shown, so the group's total "
               "is still the sum of the lines above it. The CSV form (<code>--format "
               "csv</code>) has every row.</p>\n");
    }
    put(w, "<p>Amounts in ");
    esc(w, m->currency);
    put(w, collapse ? ", each rounded once; a group's total is the sum of its rows shown and "
                      "of the line of its rows not shown. "
                    : ", each rounded once; a group's total is the sum of its rows. ");
    put(w, "Baseline: the cost had the disk stayed on its original SKU. Realised: baseline "
           "minus cost. Possible: what its policy would still save");
    possible_span(w, " this month");
    put(w, ".</p>\n");
    for (size_t gi = 0; gi < m->n_groups && w->rc == TW_OK; gi++) {
        const struct tw_mr_group *g = &m->groups[gi];
        size_t shown = 0;
        if (collapse) {
            for (size_t k = 0; k < g->n; k++)
                if (g->first + k < m->n_disks && pick[g->first + k])
                    shown++;
            if (shown == 0)
                continue;
        }
        group_heading(w, g);
        put(w, "<table class=\"disks\">");
        put(w, DISK_COLS);
        disk_head(w);
        put(w, "<tbody>\n");
        for (size_t k = 0; k < g->n && g->first + k < m->n_disks; k++)
            if (!collapse || pick[g->first + k])
                disk_row(w, &m->disks[g->first + k]);
        char label[160];
        if (collapse && shown < g->n) {
            struct tw_mr_total rest;
            memset(&rest, 0, sizeof(rest));
            for (size_t k = 0; k < g->n && g->first + k < m->n_disks; k++) {
                const struct tw_mr_disk *d = &m->disks[g->first + k];
                if (pick[g->first + k])
                    continue;
                rest.disks++;
                if (!d->priced) {
                    rest.unpriced++;
                    continue;
                }
                rest.cost_r.micros += d->cost_r.micros;
                rest.baseline_r.micros += d->baseline_r.micros;
                rest.realised_r.micros += d->realised_r.micros;
                rest.possible_r.micros += d->possible_r.micros;
            }
            snprintf(label, sizeof(label), "%zu %s not shown (the sum of their rows)", g->n - shown,
                     g->n - shown == 1 ? "row" : "rows");
            disk_total_row(w, label, &rest, "rest");
            snprintf(label, sizeof(label), "Total of the group's %zu disks", g->n);
        } else {
            snprintf(label, sizeof(label), "Total of the group");
        }
        disk_total_row(w, label, &g->t, "total");
        put(w, "</tbody></table>\n");
    }
    if (collapse && w->rc == TW_OK) {
        size_t none = 0;
        for (size_t gi = 0; gi < m->n_groups; gi++) {
            const struct tw_mr_group *g = &m->groups[gi];
            bool any = false;
            for (size_t k = 0; k < g->n && !any; k++)
                any = g->first + k < m->n_disks && pick[g->first + k];
            none += !any;
        }
        if (none > 0)
            putf(w,
                 "<p class=\"note\" id=\"groups-without-rows\">%zu %s none of the rows "
                 "shown; %s in the table of groups.</p>\n",
                 none, none == 1 ? "group has" : "groups have",
                 none == 1 ? "its total is" : "their totals are");
    }
    put(w, "<table class=\"disks\" id=\"fleet-total\">");
    put(w, DISK_COLS);
    put(w, "<tbody>\n");
    disk_total_row(w, "Fleet total", &m->fleet, "total");
    put(w, "</tbody></table>\n</section>\n");
    free(pick);
}

/* ---- how the figures are computed ----------------------------------- */

static void method(struct hw *w)
{
    const struct tw_mr_model *m = w->m;
    char a[48], b[48], c[32];
    put(w, "<section id=\"method\" class=\"break method\">\n<h2>How these figures are "
           "computed</h2>\n<ul>\n"
           "<li><b>Hours.</b> Each disk's month is cut at every change of its SKU: the SKU "
           "history the fleet's sync observed, and the tier switches tierwise made and verified, "
           "at the second they were verified. A month still running ends now. Hours are shown "
           "to two decimals; the CSV and JSON forms have them to the second.</li>\n"
           "<li><b>Prices.</b> Each part of the month is priced with the region's price book "
           "in effect then: the one fetched last at or before it (the first one fetched after "
           "when none was, which the list below says). A month is 730 hours: a part costs its "
           "monthly price &times; its hours / 730. Transaction charges are counted where the "
           "book prices them and the count is known.</li>\n"
           "<li><b>Baseline and saving.</b> The baseline is the same month with every interval "
           "tierwise downgraded put back on the SKU it came from; changes made outside tierwise "
           "cost the same in both, so they save nothing. Realised = baseline &minus; cost. "
           "Possible = what the disk's policy would save this month, less what it realised "
           "(never below zero).</li>\n"
           "<li><b>Rounding.</b> Amounts are exact until shown, then each row is rounded once "
           "to the currency's minor unit (half away from zero); every total is the sum of its "
           "rows as printed, so the page adds up. The JSON form also carries the unrounded "
           "figures.</li>\n"
           "<li><b>Unpriced disks</b> (no price book for their region in ");
    esc(w, m->currency);
    put(w, ", or a SKU the book lacks) are listed with the reason and left out of every "
           "amount, never counted as zero.</li>\n</ul>\n");
    put(w, "<h3>Price books used</h3>\n");
    if (m->n_books == 0) {
        put(w, "<p class=\"empty\" id=\"books-empty\">No price book priced any part of this "
               "month.</p>\n");
    } else {
        put(w, "<table id=\"books-table\"><thead><tr><th>Region</th><th>Source</th>"
               "<th>Fetched</th><th>Prices the part</th><th class=\"num\">Disks</th></tr>"
               "</thead><tbody>\n");
        for (size_t i = 0; i < m->n_books; i++) {
            const struct tw_mr_book *bk = &m->books[i];
            put(w, "<tr><td>");
            esc(w, bk->region);
            put(w, "</td><td class=\"key\">");
            esc(w, bk->source);
            put(w, "</td><td>");
            esc(w, bk->fetched_at);
            if (bk->after)
                put(w, "<br><span class=\"sub\">fetched after the part it prices: no book was "
                       "fetched by then</span>");
            putf(w, "</td><td>%s to %s</td><td class=\"num\">%s</td></tr>\n",
                 when(bk->from_ns, a, sizeof(a)), when(bk->to_ns, b, sizeof(b)),
                 count(bk->disks, c, sizeof(c)));
        }
        put(w, "</tbody></table>\n");
    }
    if (m->n_missing > 0) {
        put(w, "<h3>Regions not priced</h3>\n<table id=\"missing-table\"><thead><tr>"
               "<th>Region</th><th class=\"num\">Disks</th><th>Why</th></tr></thead><tbody>\n");
        for (size_t i = 0; i < m->n_missing; i++) {
            put(w, "<tr><td>");
            esc(w, m->missing[i].region);
            putf(w, "</td><td class=\"num\">%s</td><td>", count(m->missing[i].disks, c, sizeof(c)));
            esc(w, m->missing[i].why);
            put(w, "</td></tr>\n");
        }
        put(w, "</tbody></table>\n");
    }
    if (m->n_notes > 0) {
        put(w, "<h3>Notes</h3>\n<ul id=\"notes\">\n");
        for (size_t i = 0; i < m->n_notes; i++) {
            put(w, "<li>");
            esc(w, m->notes[i]);
            put(w, "</li>\n");
        }
        put(w, "</ul>\n");
    }
    put(w, "</section>\n<footer>Written by tierwise from its store at ");
    esc(w, m->generated_at);
    put(w, ". This page needs no network and no script; the CSV and JSON forms of the same "
           "report hold every row.</footer>\n</body>\n</html>\n");
}

enum tw_err tw_mr_write_html(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                             struct tw_error *err)
{
    if (!m || !write)
        return tw_error_set(err, TW_EINVAL, "the HTML report needs a model and an output");
    struct hw w = {.m = m, .write = write, .arg = arg, .err = err};
    tw_buf_init(&w.b, BUF_MAX);
    header(&w);
    headline(&w);
    group_chart(&w);
    verdicts(&w);
    week(&w);
    groups_table(&w);
    if (m->n_groups > 0)
        disk_tables(&w);
    else
        put(&w, "</section>\n");
    method(&w);
    flush(&w);
    tw_buf_cleanup(&w.b);
    return w.rc;
}
