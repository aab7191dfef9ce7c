/*
 * monthly_csv.c - the monthly report as CSV (monthly.h, tw_mr_write_csv):
 * a header row, then one record per disk, FOCUS-aligned (the FOCUS 1.2
 * column names where the meaning is the same, every tierwise figure in an
 * x_ column; it is not a FOCUS dataset):
 *
 *   BillingCurrency      the report's currency
 *   ChargePeriodStart    the month's first instant (inclusive), RFC 3339 UTC
 *   ChargePeriodEnd      the month's end, or the build's now when the month
 *                        still runs (exclusive)
 *   ResourceId           the disk's ARM id
 *   ResourceName         the disk's name
 *   RegionId             the VM's location
 *   SubAccountId         the subscription
 *   SkuMeter             the SKU at the period's end and its tier,
 *                        "Premium_LRS P10" (the SKU alone when the tier is
 *                        not known)
 *   ListCost, EffectiveCost  the actual cost, rounded (tierwise prices are
 *                        the Retail Prices list prices: the two are equal)
 *   x_...                see README "tierwise report monthly"
 *
 * Amounts are plain decimals with the currency's minor unit; a disk not
 * priced has its amounts empty, never 0, and x_SavingsPossible is empty as
 * well when no policy given covers the disk.  Hours as tw_hours_decimal;
 * x_HoursBySku is "SKU=HOURS" joined by ";", longest first.  RFC 4180:
 * fields holding a comma, a quote, CR or LF are quoted with their quotes
 * doubled, records end with CRLF.  Text is UTF-8: a byte from the store
 * that starts no valid sequence is written as U+FFFD.  Measured and
 * expected IOPS and MB/s are plain decimals (15 significant digits, never
 * an exponent).
 */
#include "service/monthly.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/time.h"
#include "service/monthly_forms.h"

#define FLUSH_AT ((size_t)64 << 10)
#define ROW_MAX ((size_t)16 << 20)

static const char *const columns[] = {
    "BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd", "ResourceId", "ResourceName",
    "RegionId", "SubAccountId", "SkuMeter", "ListCost", "EffectiveCost", "x_VmName", "x_VmId",
    "x_DiskId", "x_ResourceGroup", "x_Group", "x_Role", "x_OriginalSku", "x_OriginalTier",
    "x_Sku", "x_Tier", "x_HoursBySku", "x_DowngradedHours", "x_Switches", "x_CostBaseline",
    "x_SavingsRealised", "x_Transactions", "x_SavingsPossible", "x_Policy", "x_Priced",
    "x_Unpriced", "x_UnpricedWhy", "x_Excluded", "x_ExcludedWhy", "x_Verdict",
    "x_VerdictReason", "x_MeasuredIops", "x_ExpectedIops", "x_MeasuredMBps", "x_ExpectedMBps",
    "x_DriftHours", "x_VmSize", "x_MeteredRunningHours", "x_JudgedAt",
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

struct cw {
    const struct tw_mr_model *m;
    struct tw_buf b;
    size_t col;            /* fields of the record so far */
    struct tw_error *err;
};

/* S with every byte that starts no valid UTF-8 sequence as U+FFFD
 * (monthly_forms.h) into FIX; false when S is valid as it is. */
static bool utf8_fixed(const char *s, struct tw_buf *fix, enum tw_err *rc)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    const unsigned char *run = p;
    bool bad = false;
    *rc = TW_OK;
    while (p < end && *rc == TW_OK) {
        size_t n = *p < 0x80 ? 1 : tw_mr_utf8_seq(p, (size_t)(end - p));
        if (n) {
            p += n;
            continue;
        }
        bad = true;
        *rc = tw_buf_append(fix, (const char *)run, (size_t)(p - run));
        if (*rc == TW_OK)
            *rc = tw_buf_puts(fix, TW_MR_FFFD);
        run = ++p;
    }
    if (bad && *rc == TW_OK)
        *rc = tw_buf_append(fix, (const char *)run, (size_t)(end - run));
    return bad;
}

static enum tw_err field_valid(struct cw *w, const char *s);

/* One field, quoted when it must be, invalid UTF-8 as U+FFFD. */
static enum tw_err field(struct cw *w, const char *s)
{
    if (!s)
        s = "";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80)
            continue;
        struct tw_buf fix;
        tw_buf_init(&fix, ROW_MAX * 3);
        enum tw_err rc;
        if (utf8_fixed(s, &fix, &rc) || rc != TW_OK)
            rc = rc == TW_OK ? field_valid(w, fix.data ? fix.data : "") : rc;
        else
            rc = field_valid(w, s);
        tw_buf_cleanup(&fix);
        return rc;
    }
    return field_valid(w, s);
}

/* One field of valid UTF-8, quoted when it must be. */
static enum tw_err field_valid(struct cw *w, const char *s)
{
    enum tw_err rc = w->col++ ? tw_buf_append(&w->b, ",", 1) : TW_OK;
    if (rc != TW_OK || !strpbrk(s, ",\"\r\n"))
        return rc == TW_OK ? tw_buf_puts(&w->b, s) : rc;
    rc = tw_buf_append(&w->b, "\"", 1);
    for (const char *p = s; rc == TW_OK && *p;) {
        const char *q = strchr(p, '"');
        size_t n = q ? (size_t)(q - p) + 1 : strlen(p);
        rc = tw_buf_append(&w->b, p, n);
        if (rc == TW_OK && q)
            rc = tw_buf_append(&w->b, "\"", 1);
        p += n;
    }
    return rc == TW_OK ? tw_buf_append(&w->b, "\"", 1) : rc;
}

static enum tw_err end_record(struct cw *w)
{
    if (w->col != N_COLUMNS)
        return tw_error_set(w->err, TW_EINVAL, "monthly report: a CSV record of %zu fields, "
                            "not %zu", w->col, N_COLUMNS);
    w->col = 0;
    return tw_buf_append(&w->b, "\r\n", 2);
}

/* V in decimal (by hand: printf's machinery is slow for 100,000 rows). */
static enum tw_err field_int(struct cw *w, int64_t v)
{
    char s[24];
    size_t at = sizeof(s) - 1;
    s[at] = '\0';
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        s[--at] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        s[--at] = '-';
    return field(w, s + at);
}

/* V with 15 significant digits as a plain decimal (never an exponent,
 * which %g gives past 1e15 and below 1e-4), trailing zeros dropped; ""
 * when not finite. */
static enum tw_err field_num(struct cw *w, double v)
{
    char s[400] = "";
    if (isfinite(v)) {
        int mag = v == 0 ? 0 : (int)floor(log10(fabs(v)));
        int dec = 14 - mag;
        if (dec < 0)
            dec = 0;
        if (dec > 340)
            dec = 340;
        snprintf(s, sizeof(s), "%.*f", dec, v);
        if (strchr(s, '.')) {
            size_t n = strlen(s);
            while (n > 0 && s[n - 1] == '0')
                s[--n] = '\0';
            if (n > 0 && s[n - 1] == '.')
                s[--n] = '\0';
        }
        if (strcmp(s, "-0") == 0)
            snprintf(s, sizeof(s), "0");
    }
    return field(w, s);
}

static enum tw_err field_hours(struct cw *w, int64_t seconds)
{
    char h[64];
    if (!tw_hours_decimal_wide((tw_i128)seconds * 1000000000, h, sizeof(h)))
        return tw_error_set(w->err, TW_ERANGE, "monthly report: %lld s can't be written as "
                            "hours", (long long)seconds);
    return field(w, h);
}

/* The rounded R, or "" when EMPTY. */
static enum tw_err field_money(struct cw *w, struct tw_money r, bool empty)
{
    char s[64] = "";
    enum tw_err rc = empty ? TW_OK : tw_money_format(r, w->m->currency, s, sizeof(s), w->err);
    return rc == TW_OK ? field(w, s) : rc;
}

static enum tw_err field_time(struct cw *w, int64_t ns)
{
    char t[40];
    if (!tw_rfc3339_format_ns(ns, 0, 0, t, sizeof(t)))
        return tw_error_set(w->err, TW_ERANGE, "monthly report: the instant %lld ns can't be "
                            "written as RFC 3339", (long long)ns);
    return field(w, t);
}

static enum tw_err record(struct cw *w, const struct tw_mr_disk *d)
{
    const struct tw_mr_model *m = w->m;
    bool unp = !d->priced;
    char meter[64];
    snprintf(meter, sizeof(meter), "%s%s%s", d->sku, d->tier[0] ? " " : "", d->tier);
    struct tw_buf hs;
    tw_buf_init(&hs, ROW_MAX);
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < d->n_skus; i++) {
        char h[64];
        if (!tw_hours_decimal_wide((tw_i128)d->skus[i].seconds * 1000000000, h, sizeof(h)))
            rc = tw_error_set(w->err, TW_ERANGE, "monthly report: %lld s can't be written as "
                              "hours", (long long)d->skus[i].seconds);
        else
            rc = tw_buf_printf(&hs, "%s%s=%s", i ? ";" : "", d->skus[i].sku, h);
    }
    if (rc == TW_OK) rc = field(w, m->currency);
    if (rc == TW_OK) rc = field_time(w, m->from_ns);
    if (rc == TW_OK) rc = field_time(w, m->to_ns);
    if (rc == TW_OK) rc = field(w, d->resource_id);
    if (rc == TW_OK) rc = field(w, d->disk);
    if (rc == TW_OK) rc = field(w, d->location);
    if (rc == TW_OK) rc = field(w, d->subscription_id);
    if (rc == TW_OK) rc = field(w, meter);
    if (rc == TW_OK) rc = field_money(w, d->cost_r, unp);
    if (rc == TW_OK) rc = field_money(w, d->cost_r, unp);
    if (rc == TW_OK) rc = field(w, d->vm);
    if (rc == TW_OK) rc = field_int(w, d->vm_id);
    if (rc == TW_OK) rc = field_int(w, d->disk_id);
    if (rc == TW_OK) rc = field(w, d->resource_group);
    if (rc == TW_OK) rc = field(w, d->group);
    if (rc == TW_OK) rc = field(w, d->role == TW_DISK_OS ? "os" : "data");
    if (rc == TW_OK) rc = field(w, d->original_sku);
    if (rc == TW_OK) rc = field(w, d->original_tier);
    if (rc == TW_OK) rc = field(w, d->sku);
    if (rc == TW_OK) rc = field(w, d->tier);
    if (rc == TW_OK) rc = field(w, hs.data);
    if (rc == TW_OK) rc = field_hours(w, d->downgraded_seconds);
    if (rc == TW_OK) rc = field_int(w, d->switches);
    if (rc == TW_OK) rc = field_money(w, d->baseline_r, unp);
    if (rc == TW_OK) rc = field_money(w, d->realised_r, unp);
    if (rc == TW_OK) rc = field_money(w, d->transactions_r, unp);
    if (rc == TW_OK) rc = field_money(w, d->possible_r, unp || !d->possible_known);
    if (rc == TW_OK) rc = field(w, d->policy);
    if (rc == TW_OK) rc = field(w, d->priced ? "true" : "false");
    if (rc == TW_OK) rc = field(w, d->priced ? "" : d->unpriced);
    if (rc == TW_OK) rc = field(w, d->priced ? "" : d->unpriced_why);
    if (rc == TW_OK) rc = field(w, d->excluded);
    if (rc == TW_OK) rc = field(w, d->excluded ? d->excluded_why : "");
    if (rc == TW_OK) rc = field(w, d->verdict);
    if (rc == TW_OK) rc = field(w, d->verdict[0] ? d->verdict_reason : "");
    if (rc == TW_OK) rc = field_num(w, d->verdict[0] ? d->measured_iops : NAN);
    if (rc == TW_OK) rc = field_num(w, d->verdict[0] ? d->expected_iops : NAN);
    if (rc == TW_OK) rc = field_num(w, d->verdict[0] ? d->measured_mbps : NAN);
    if (rc == TW_OK) rc = field_num(w, d->verdict[0] ? d->expected_mbps : NAN);
    if (rc == TW_OK) rc = field_hours(w, d->drift_seconds);
    if (rc == TW_OK) rc = field(w, d->vm_size);
    if (rc == TW_OK) rc = field_hours(w, d->running_metered_seconds);
    if (rc == TW_OK) rc = field(w, d->judged_at);
    if (rc == TW_OK) rc = end_record(w);
    tw_buf_cleanup(&hs);
    return rc;
}

static enum tw_err flush(struct cw *w, tw_opp_write_fn write, void *arg, bool always)
{
    if (!w->b.len || (!always && w->b.len < FLUSH_AT))
        return TW_OK;
    enum tw_err rc = write(arg, w->b.data, w->b.len);
    w->b.len = 0;
    w->b.data[0] = '\0';
    if (rc != TW_OK)
        tw_error_set(w->err, rc, "monthly report: writing the CSV failed (%s)", tw_strerror(rc));
    return rc;
}

enum tw_err tw_mr_write_csv(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                            struct tw_error *err)
{
    struct tw_error local = {0};
    struct cw w = {.m = m, .err = err ? err : &local};
    tw_buf_init(&w.b, ROW_MAX);
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < N_COLUMNS; i++)
        rc = field(&w, columns[i]);
    if (rc == TW_OK)
        rc = end_record(&w);
    for (size_t i = 0; rc == TW_OK && i < m->n_disks; i++) {
        rc = record(&w, &m->disks[i]);
        if (rc == TW_OK)
            rc = flush(&w, write, arg, false);
    }
    if (rc == TW_OK)
        rc = flush(&w, write, arg, true);
    else if (!w.err->msg[0])
        tw_error_set(w.err, rc, "monthly report: the CSV could not be formatted (%s)",
                     tw_strerror(rc));
    tw_buf_cleanup(&w.b);
    return rc;
}
