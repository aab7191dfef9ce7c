/*
 * test_savings.c - the savings model's arithmetic: the field
 * example, windows over the clock changes, clipped by the period,
 * overlapping, 167 hours long, the margins, min_saving and the quota; the
 * prorated bill; overflow; the decimal text of amounts and hours.
 * (Target choice and transactions: test_savings_target.c.)
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/savings.h"
#include "core/time.h"
#include "core/tz.h"

#define NOW "2026-11-30T00:00:00Z"
#define MIN_NS (INT64_C(60) * 1000000000)
#define HOUR_NS (60 * MIN_NS)
#define DAY_NS (24 * HOUR_NS)

static int64_t utc(int y, int mo, int d, int h, int mi)
{
    struct tw_civil c = {y, mo, d, h, mi, 0, 0};
    int64_t ns;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    return ns;
}

static struct tw_tz *london(void)
{
    size_t len;
    char *buf = th_fixture("../fuzz/corpus/tz/Europe_London", &len);
    struct tw_tz *z;
    assert_int_equal(tw_tz_parse("Europe/London", buf, len, &z, NULL), TW_OK);
    free(buf);
    return z;
}

/* A London wall-clock time as an instant. */
static int64_t local(const struct tw_tz *z, int y, int mo, int d, int h, int mi)
{
    struct tw_civil c = {y, mo, d, h, mi, 0, 0};
    int64_t ns;
    assert_int_equal(tw_tz_civil_to_ns(z, &c, &ns, NULL), TW_OK);
    return ns;
}

/* The instants of windows TEXT in Z over [FROM - 8 days, TO + 8 days): the
 * schedule reaching past the period, as the callers give it. */
static struct tw_interval *instants(const char *text, const struct tw_tz *z, int64_t from,
                                    int64_t to, size_t *n)
{
    struct tw_windows w;
    struct tw_error err = {0};
    if (tw_windows_parse(text, strlen(text), &w, &err) != TW_OK)
        fail_msg("%s: %s", text, err.msg);
    struct tw_interval *iv = NULL;
    if (tw_windows_instants(&w, z, from - 8 * DAY_NS, to + 8 * DAY_NS, &iv, n, &err) != TW_OK)
        fail_msg("%s: %s", text, err.msg);
    return iv;
}

static struct tw_pricebook *book_file(const char *rel)
{
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_price_items items = {0};
    struct tw_error err = {0};
    if (tw_price_page_parse(buf, len, &items, NULL, &err) != TW_OK)
        fail_msg("%s: %s", rel, err.msg);
    free(buf);
    struct tw_pricebook *b;
    if (tw_pricebook_build(&items, NULL, NULL, rel, NOW, NOW, &b, &err) != TW_OK)
        fail_msg("%s: %s", rel, err.msg);
    return b;
}

static void dec(struct tw_amount a, int digits, const char *want)
{
    char buf[64];
    assert_true(tw_amount_decimal(a, digits, buf, sizeof(buf)));
    assert_string_equal(buf, want);
}

static void money(struct tw_amount a, const char *want)
{
    char buf[64];
    struct tw_error err = {0};
    assert_int_equal(tw_amount_format(a, "GBP", buf, sizeof(buf), &err), TW_OK);
    assert_string_equal(buf, want);
}

static void hours(int64_t ns, const char *want)
{
    char buf[48];
    assert_true(tw_hours_decimal(ns, buf, sizeof(buf)));
    assert_string_equal(buf, want);
}

static const struct tw_money P10 = {16160000}, E10 = {7160000};

/* The field example: West Europe, P10 16.16 and E10 7.16 GBP a
 * month, every weekend of 2026 in Europe/London: 2,496 hours, 30.77 a disk,
 * 2,154.08 for 70 disks (the unrounded amount times 70, rounded once; the
 * rounded 30.77 times 70 would be 2,153.90). */
static void test_field_example(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_pricebook *b = book_file("prices/constructed-westeurope-gbp.json");
    struct tw_tier_catalog cat = {0};
    struct tw_error err = {0};
    assert_int_equal(tw_tier_catalog_builtin(&cat, &err), TW_OK);
    const char *allowed[] = {"StandardSSD_LRS"};
    struct tw_target t;
    assert_int_equal(tw_target_choose(&cat, b, "westeurope", "GBP", "Premium_LRS", "P10", 128,
                                      allowed, 1, false, &t, &err),
                     TW_OK);
    assert_string_equal(t.sku, "StandardSSD_LRS");
    assert_string_equal(t.tier, "E10");
    assert_int_equal(t.from_per_month.micros, P10.micros);
    assert_int_equal(t.to_per_month.micros, E10.micros);
    /* Deallocated: transactions priced, but no I/O. */
    struct tw_tx_rule tx;
    assert_int_equal(tw_tx_rule_for(b, "westeurope", "GBP", TW_SKU_STANDARD_SSD, "E10",
                                    TW_SKU_LRS, &tx, &err),
                     TW_OK);
    assert_int_equal(tx.per_10k.micros, 1000);

    int64_t from = local(z, 2026, 1, 1, 0, 0), to = local(z, 2027, 1, 1, 0, 0);
    size_t n;
    struct tw_interval *iv = instants("Sat 00:00-Mon 00:00", z, from, to, &n);
    struct tw_window_saving *ws = calloc(n, sizeof(*ws));
    struct tw_disk_saving d;
    struct tw_switch_opts o = {0};
    assert_int_equal(tw_savings_windows(iv, n, from, to, t.from_per_month, t.to_per_month, &tx, &o,
                                        ws, &d, &err),
                     TW_OK);
    assert_int_equal(d.n_taken, 52);
    assert_int_equal(d.n_skipped, 0);
    assert_int_equal(d.downgraded_ns, 2496 * HOUR_NS);
    hours(d.downgraded_ns, "2496");
    money(d.saving, "30.77");
    dec(d.saving, 12, "30.772602739726");
    assert_int_equal(d.tx_cost.num, 0);
    money(d.baseline, "193.92"); /* 16.16 * 8760 / 730: twelve months */
    struct tw_amount fleet;
    assert_int_equal(tw_amount_scale(d.saving, 70, 1, &fleet, &err), TW_OK);
    money(fleet, "2154.08");
    /* The windows outside the year are there, and don't count. */
    size_t outside = 0;
    for (size_t i = 0; i < n; i++)
        outside += ws[i].skip == TW_WINDOW_OUTSIDE;
    assert_int_equal(outside, n - 52);
    assert_true(n > 52);
    free(ws);
    free(iv);
    tw_tier_catalog_cleanup(&cat);
    tw_pricebook_free(b);
    tw_tz_free(z);
}

/* A London weekend is 47 hours over the March change and 49 over the
 * October one: exact amounts. */
static void test_dst_weekends(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    struct {
        int month, sat;
        int64_t hours;
        const char *unrounded, *rounded;
    } cases[] = {
        {3, 28, 47, "0.579452054795", "0.58"},  /* 9 * 47 / 730 */
        {10, 24, 49, "0.604109589041", "0.60"}, /* 9 * 49 / 730 */
        {1, 10, 48, "0.591780821918", "0.59"},  /* an ordinary one */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        int64_t from = local(z, 2026, cases[c].month, cases[c].sat - 1, 0, 0);
        int64_t to = local(z, 2026, cases[c].month, cases[c].sat + 3, 0, 0);
        size_t n;
        struct tw_interval *iv = instants("Sat 00:00-Mon 00:00", z, from, to, &n);
        struct tw_disk_saving d;
        assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, NULL, NULL, &d, &err),
                         TW_OK);
        assert_int_equal(d.n_taken, 1);
        assert_int_equal(d.downgraded_ns, cases[c].hours * HOUR_NS);
        dec(d.saving, 12, cases[c].unrounded);
        money(d.saving, cases[c].rounded);
        free(iv);
    }
    tw_tz_free(z);
}

/* A window clipped by the period counts in part, and the margins stay at
 * the window's real edges: the switches are placed first, then clipped. */
static void test_clipped(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    /* Sat 3 Jan 06:00 to Sat 10 Jan 06:00 (GMT: UTC). */
    int64_t from = utc(2026, 1, 3, 6, 0), to = utc(2026, 1, 10, 6, 0);
    size_t n;
    struct tw_interval *iv = instants("Sat 00:00-Mon 00:00", z, from, to, &n);
    struct tw_window_saving *ws = calloc(n, sizeof(*ws));
    struct tw_switch_opts o = {.after_deallocate_ns = 10 * MIN_NS, .before_start_ns = 30 * MIN_NS};
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    size_t a = 0;
    while (a < n && ws[a].skip != TW_WINDOW_TAKEN)
        a++;
    assert_true(a + 1 < n);
    /* The first: its downgrade (00:10) before the period, so from 06:00;
     * its upgrade at Sun 23:30, the margin kept. */
    assert_int_equal(ws[a].open_ns, utc(2026, 1, 3, 0, 0));
    assert_int_equal(ws[a].down_ns, utc(2026, 1, 3, 0, 10));
    assert_int_equal(ws[a].from_ns, from);
    assert_int_equal(ws[a].to_ns, utc(2026, 1, 4, 23, 30));
    assert_int_equal(ws[a].downgraded_ns, 41 * HOUR_NS + 30 * MIN_NS);
    /* The second: down at 00:10 (not 06:10 or 00:00), cut at 06:00. */
    assert_int_equal(ws[a + 1].skip, TW_WINDOW_TAKEN);
    assert_int_equal(ws[a + 1].from_ns, utc(2026, 1, 10, 0, 10));
    assert_int_equal(ws[a + 1].to_ns, to);
    assert_int_equal(ws[a + 1].downgraded_ns, 5 * HOUR_NS + 50 * MIN_NS);
    /* Its whole saving is the unclipped span's, Sat 00:10 to Sun 23:30:
     * 47 h 20 min (as it happens, the same as the two clipped spans). */
    struct tw_amount whole;
    assert_int_equal(tw_money_ratio(tw_money_micros(9000000), 47 * HOUR_NS + 20 * MIN_NS,
                                    TW_BILL_MONTH_NS, &whole, &err),
                     TW_OK);
    assert_true(ws[a + 1].whole_saving.num == whole.num && ws[a + 1].whole_saving.den == whole.den);
    assert_int_equal(d.n_taken, 2);
    assert_int_equal(d.downgraded_ns, 47 * HOUR_NS + 20 * MIN_NS);
    hours(d.downgraded_ns, "47.333333");
    dec(d.saving, 12, "0.583561643836"); /* 9 * (142/3) / 730 */
    /* Every other window is outside the period. */
    for (size_t i = 0; i < n; i++)
        if (i != a && i != a + 1)
            assert_int_equal(ws[i].skip, TW_WINDOW_OUTSIDE);
    free(ws);
    free(iv);
    tw_tz_free(z);
}

/* Overlapping windows count once (tw_windows_instants unites them): a
 * weekend and a Sunday-to-Monday window are 54 hours, not 66. */
static void test_overlapping(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    int64_t from = utc(2026, 1, 5, 0, 0), to = utc(2026, 1, 12, 0, 0);
    size_t n;
    struct tw_interval *iv =
        instants("Sat 00:00-Mon 00:00, Sun 12:00-Mon 06:00", z, from, to, &n);
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, NULL, NULL, &d, &err),
                     TW_OK);
    /* Sat 10 Jan 00:00 to the period's end, Mon 12 Jan 00:00: 48 h; the
     * week before ends Mon 5 Jan 06:00: 6 h in the period. */
    assert_int_equal(d.n_taken, 2);
    assert_int_equal(d.downgraded_ns, 54 * HOUR_NS);
    free(iv);
    /* Whole weeks: 54 h each. */
    from = utc(2026, 1, 6, 0, 0), to = utc(2026, 1, 13, 0, 0);
    iv = instants("Sun 12:00-Mon 06:00, Sat 00:00-Mon 00:00", z, from, to, &n);
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, NULL, NULL, &d, &err),
                     TW_OK);
    assert_int_equal(d.n_taken, 1);
    assert_int_equal(d.downgraded_ns, 54 * HOUR_NS);
    free(iv);
    /* Overlapping intervals given directly are refused, not counted twice. */
    struct tw_interval bad[] = {{0, 10 * HOUR_NS}, {5 * HOUR_NS, 20 * HOUR_NS}};
    assert_int_equal(
        tw_savings_windows(bad, 2, 0, DAY_NS, P10, E10, NULL, NULL, NULL, &d, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "sorted and disjoint"));
    tw_tz_free(z);
}

/* "Fri 20:00-Fri 19:00" is 167 hours, from Friday evening to the next
 * Friday; with 10 and 30 minute margins 166 h 20 min, and the one-hour
 * gap's two changes fit 2 changes in 24 h. */
static void test_167_hours(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    int64_t from = utc(2026, 1, 2, 0, 0), to = utc(2026, 1, 30, 0, 0);
    size_t n;
    struct tw_interval *iv = instants("Fri 20:00-Fri 19:00", z, from, to, &n);
    for (size_t i = 1; i + 1 < n; i++) /* the first and last cut by the span asked */
        assert_int_equal(iv[i].to_ns - iv[i].from_ns, 167 * HOUR_NS);
    struct tw_window_saving *ws = calloc(n, sizeof(*ws));
    struct tw_switch_opts o = {.after_deallocate_ns = 10 * MIN_NS,
                               .before_start_ns = 30 * MIN_NS,
                               .quota_changes = 2,
                               .quota_ns = DAY_NS};
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    /* 26 Dec's window from the period's start to its upgrade at 2 Jan
     * 18:30 (18 h 30 min), 2, 9 and 16 Jan whole, 23 Jan's cut at the 30th
     * 00:00 (147 h 50 min). */
    assert_int_equal(d.n_taken, 5);
    assert_int_equal(d.n_skipped, 0);
    assert_int_equal(d.downgraded_ns, 18 * HOUR_NS + 30 * MIN_NS +
                                          3 * (166 * HOUR_NS + 20 * MIN_NS) + 147 * HOUR_NS +
                                          50 * MIN_NS);
    hours(d.downgraded_ns, "665.333333");
    dec(d.saving, 12, "8.202739726027"); /* 9 * (665 + 1/3) / 730 */
    /* One change in 24 h: each window's own two changes are days apart,
     * but a downgrade comes 1 h 40 min after the previous upgrade, so
     * every other window is skipped. */
    o.quota_changes = 1;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    size_t taken = 0, quota = 0;
    for (size_t i = 0; i < n; i++) {
        taken += ws[i].skip == TW_WINDOW_TAKEN;
        quota += ws[i].skip == TW_WINDOW_QUOTA;
    }
    /* In the period: 26 Dec's, 9 Jan's and 23 Jan's skipped, 2 and 16
     * Jan's taken. */
    assert_int_equal(taken, 2);
    assert_int_equal(quota, 3);
    assert_int_equal(d.n_taken, 2);
    assert_int_equal(d.n_skipped, 3);
    free(ws);
    free(iv);
    tw_tz_free(z);
}

/* The margins can leave nothing: a 30-minute window, and one of exactly
 * the margins' 40 minutes, are too short; 41 minutes leave one. */
static void test_too_short(void **state)
{
    (void)state;
    struct tw_error err = {0};
    int64_t t0 = utc(2026, 1, 5, 10, 0);
    struct tw_interval win[] = {{t0, t0 + 30 * MIN_NS},
                                {t0 + HOUR_NS, t0 + HOUR_NS + 40 * MIN_NS},
                                {t0 + 2 * HOUR_NS, t0 + 2 * HOUR_NS + 41 * MIN_NS}};
    struct tw_window_saving ws[3];
    struct tw_switch_opts o = {.after_deallocate_ns = 10 * MIN_NS, .before_start_ns = 30 * MIN_NS};
    struct tw_disk_saving d;
    assert_int_equal(
        tw_savings_windows(win, 3, t0 - DAY_NS, t0 + DAY_NS, P10, E10, NULL, &o, ws, &d, &err),
        TW_OK);
    assert_int_equal(ws[0].skip, TW_WINDOW_TOO_SHORT);
    assert_int_equal(ws[1].skip, TW_WINDOW_TOO_SHORT);
    assert_int_equal(ws[2].skip, TW_WINDOW_TAKEN);
    assert_int_equal(ws[0].downgraded_ns, 0);
    assert_int_equal(ws[0].saving.num, 0);
    assert_int_equal(ws[2].downgraded_ns, MIN_NS);
    assert_int_equal(d.n_taken, 1);
    assert_int_equal(d.n_skipped, 2);
    assert_int_equal(d.downgraded_ns, MIN_NS);
    assert_string_equal(tw_window_skip_name(ws[0].skip), "too_short");
    assert_string_equal(tw_window_skip_name(TW_WINDOW_TAKEN), "taken");
    assert_string_equal(tw_window_skip_name(TW_WINDOW_MIN_SAVING), "min_saving");
    assert_string_equal(tw_window_skip_name(TW_WINDOW_QUOTA), "quota");
    assert_string_equal(tw_window_skip_name(TW_WINDOW_OUTSIDE), "outside");
}

/* min_saving skips a window whose WHOLE saving is under it (an hour saves
 * 9/730 = 0.0123), not one that the period merely cuts short. */
static void test_min_saving(void **state)
{
    (void)state;
    struct tw_error err = {0};
    int64_t t0 = utc(2026, 1, 5, 0, 0);
    struct tw_interval win[] = {{t0, t0 + HOUR_NS},                        /* 0.0123 */
                                {t0 + 2 * HOUR_NS, t0 + 14 * HOUR_NS},      /* 0.1479 */
                                {t0 + 20 * HOUR_NS, t0 + 32 * HOUR_NS}};    /* cut to 1 h */
    struct tw_window_saving ws[3];
    struct tw_switch_opts o = {.min_saving = {100000}}; /* 0.10 */
    struct tw_disk_saving d;
    int64_t to = t0 + 21 * HOUR_NS;
    assert_int_equal(tw_savings_windows(win, 3, t0, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    assert_int_equal(ws[0].skip, TW_WINDOW_MIN_SAVING);
    assert_int_equal(ws[0].saving.num, 0);
    dec(ws[0].whole_saving, 6, "0.012329");
    assert_int_equal(ws[1].skip, TW_WINDOW_TAKEN);
    assert_int_equal(ws[2].skip, TW_WINDOW_TAKEN);
    assert_int_equal(ws[2].downgraded_ns, HOUR_NS);
    assert_int_equal(d.downgraded_ns, 13 * HOUR_NS);
    assert_int_equal(d.n_skipped, 1);
    /* Without a minimum, all three. */
    o.min_saving.micros = 0;
    assert_int_equal(tw_savings_windows(win, 3, t0, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    assert_int_equal(d.n_taken, 3);
    assert_int_equal(d.downgraded_ns, 14 * HOUR_NS);
    /* A negative minimum is a mistake, not "none". */
    o.min_saving.micros = -1;
    assert_int_equal(tw_savings_windows(win, 3, t0, to, P10, E10, NULL, &o, ws, &d, &err),
                     TW_EINVAL);
}

/* Nightly windows with 2 changes in 24 h: each night's downgrade and the
 * morning's upgrade fit (the same wall-clock times, 24 h apart) except
 * across the March change, where Sunday morning's upgrade comes 23 h after
 * Saturday morning's, with Saturday evening's downgrade between: that
 * night is skipped, which frees the next. */
static void test_quota_nightly(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    const char *nightly = "Mon 19:00-Tue 07:00, Tue 19:00-Wed 07:00, Wed 19:00-Thu 07:00, "
                          "Thu 19:00-Fri 07:00, Fri 19:00-Sat 07:00, Sat 19:00-Sun 07:00, "
                          "Sun 19:00-Mon 07:00";
    struct tw_switch_opts o = {.after_deallocate_ns = 10 * MIN_NS,
                               .before_start_ns = 30 * MIN_NS,
                               .quota_changes = 2,
                               .quota_ns = DAY_NS};
    /* January: every night. */
    int64_t from = utc(2026, 1, 5, 0, 0), to = utc(2026, 1, 19, 0, 0);
    size_t n;
    struct tw_interval *iv = instants(nightly, z, from, to, &n);
    struct tw_window_saving *ws = calloc(n, sizeof(*ws));
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_not_equal(ws[i].skip, TW_WINDOW_QUOTA);
    assert_int_equal(d.n_skipped, 0);
    assert_int_equal(d.n_taken, 15); /* 4 Jan's night to 18 Jan's, both cut by the period */
    free(ws);
    free(iv);

    /* The weeks around 29 March: Saturday night's window is the one
     * skipped. */
    from = local(z, 2026, 3, 23, 0, 0), to = local(z, 2026, 4, 6, 0, 0);
    iv = instants(nightly, z, from, to, &n);
    ws = calloc(n, sizeof(*ws));
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    size_t skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (ws[i].skip != TW_WINDOW_QUOTA)
            continue;
        skipped++;
        assert_int_equal(ws[i].open_ns, local(z, 2026, 3, 28, 19, 0));
    }
    assert_int_equal(skipped, 1);
    assert_int_equal(d.n_skipped, 1);
    /* Without the quota, none. */
    o.quota_ns = 0;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    assert_int_equal(d.n_skipped, 0);
    free(ws);
    free(iv);

    /* Changes already made count: two on Monday morning leave no room for
     * Monday night's, and Tuesday night's fits again. */
    o.quota_ns = DAY_NS;
    from = utc(2026, 1, 5, 0, 0), to = utc(2026, 1, 7, 0, 0);
    struct tw_interval win[] = {{utc(2026, 1, 5, 19, 0), utc(2026, 1, 6, 7, 0)},
                                {utc(2026, 1, 6, 19, 0), utc(2026, 1, 7, 7, 0)}};
    struct tw_window_saving w2[2];
    const int64_t prior[] = {utc(2026, 1, 5, 8, 0), utc(2026, 1, 5, 9, 0)};
    o.prior_changes = prior;
    o.n_prior = 2;
    assert_int_equal(tw_savings_windows(win, 2, from, to, P10, E10, NULL, &o, w2, &d, &err),
                     TW_OK);
    assert_int_equal(w2[0].skip, TW_WINDOW_QUOTA);
    assert_int_equal(w2[1].skip, TW_WINDOW_TAKEN);
    /* One prior change still leaves no room (3 in 24 h)... */
    o.n_prior = 1;
    assert_int_equal(tw_savings_windows(win, 2, from, to, P10, E10, NULL, &o, w2, &d, &err),
                     TW_OK);
    assert_int_equal(w2[0].skip, TW_WINDOW_QUOTA);
    /* ... a day before, it does. */
    const int64_t earlier[] = {utc(2026, 1, 4, 19, 9)};
    o.prior_changes = earlier;
    assert_int_equal(tw_savings_windows(win, 2, from, to, P10, E10, NULL, &o, w2, &d, &err),
                     TW_OK);
    assert_int_equal(w2[0].skip, TW_WINDOW_TAKEN);
    assert_int_equal(w2[1].skip, TW_WINDOW_TAKEN);
    /* Unsorted history is refused. */
    const int64_t unsorted[] = {utc(2026, 1, 5, 9, 0), utc(2026, 1, 5, 8, 0)};
    o.prior_changes = unsorted;
    o.n_prior = 2;
    assert_int_equal(tw_savings_windows(win, 2, from, to, P10, E10, NULL, &o, w2, &d, &err),
                     TW_EINVAL);
    tw_tz_free(z);
}

/* Two windows a day with 2 changes in 24 h: the second is skipped. */
static void test_quota_two_a_day(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_error err = {0};
    int64_t from = utc(2026, 1, 5, 0, 0), to = utc(2026, 1, 6, 0, 0);
    size_t n;
    struct tw_interval *iv = instants("Mon 00:00-Mon 06:00, Mon 12:00-Mon 18:00", z, from, to, &n);
    struct tw_window_saving *ws = calloc(n, sizeof(*ws));
    struct tw_switch_opts o = {.quota_changes = 2, .quota_ns = DAY_NS};
    struct tw_disk_saving d;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    size_t a = 0;
    while (ws[a].open_ns != from)
        a++;
    assert_int_equal(ws[a].skip, TW_WINDOW_TAKEN);
    assert_int_equal(ws[a + 1].skip, TW_WINDOW_QUOTA);
    assert_int_equal(ws[a + 1].downgraded_ns, 0);
    assert_int_equal(d.n_taken, 1);
    assert_int_equal(d.n_skipped, 1);
    assert_int_equal(d.downgraded_ns, 6 * HOUR_NS);
    /* Four changes a day allowed: both. */
    o.quota_changes = 4;
    assert_int_equal(tw_savings_windows(iv, n, from, to, P10, E10, NULL, &o, ws, &d, &err), TW_OK);
    assert_int_equal(d.n_taken, 2);
    free(ws);
    free(iv);
    /* A window just before the period is outside it, in neither count,
     * but the plan makes its changes: the next one, in the period, is
     * skipped for the quota. */
    struct tw_interval win[] = {{from - 2 * HOUR_NS, from - HOUR_NS},
                                {from + HOUR_NS, from + 2 * HOUR_NS}};
    struct tw_window_saving w2[2];
    o.quota_changes = 2;
    assert_int_equal(tw_savings_windows(win, 2, from, to, P10, E10, NULL, &o, w2, &d, &err),
                     TW_OK);
    assert_int_equal(w2[0].skip, TW_WINDOW_OUTSIDE);
    assert_int_equal(w2[1].skip, TW_WINDOW_QUOTA);
    assert_int_equal(d.n_taken, 0);
    assert_int_equal(d.n_skipped, 1);
    tw_tz_free(z);
}

/* The prorated bill: a P10 for 20 hours and an E10 for 10 (billing rules
 * section 1's example, in GBP). */
static void test_bill_cost(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_bill_span s[] = {{0, 20 * HOUR_NS, P10}, {20 * HOUR_NS, 30 * HOUR_NS, E10}};
    struct tw_amount a;
    assert_int_equal(tw_bill_cost(s, 2, &a, &err), TW_OK);
    dec(a, 12, "0.540821917808"); /* (16.16 * 20 + 7.16 * 10) / 730 */
    assert_int_equal(tw_bill_cost(s, 0, &a, &err), TW_OK);
    assert_int_equal(a.num, 0);
    /* Exactly a month: the monthly price. */
    struct tw_bill_span m = {0, TW_BILL_MONTH_NS, P10};
    assert_int_equal(tw_bill_cost(&m, 1, &a, &err), TW_OK);
    assert_true(a.num == 16160000 && a.den == 1);
    /* A span backwards is refused. */
    struct tw_bill_span back = {10, 5, P10};
    assert_int_equal(tw_bill_cost(&back, 1, &a, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "before it starts"));
}

/* Overflow is refused, never wrapped. */
static void test_overflow(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_amount a;
    struct tw_bill_span s = {INT64_MIN, INT64_MAX, P10};
    assert_int_equal(tw_bill_cost(&s, 1, &a, &err), TW_ERANGE);
    struct tw_disk_saving d;
    struct tw_interval w = {0, HOUR_NS};
    assert_int_equal(tw_savings_windows(&w, 1, 0, DAY_NS, tw_money_micros(INT64_MAX),
                                        tw_money_micros(-1), NULL, NULL, NULL, &d, &err),
                     TW_ERANGE);
    struct tw_interval edge = {INT64_MAX - HOUR_NS, INT64_MAX};
    struct tw_switch_opts o = {.after_deallocate_ns = 2 * HOUR_NS};
    assert_int_equal(tw_savings_windows(&edge, 1, 0, INT64_MAX, P10, E10, NULL, &o, NULL, &d, &err),
                     TW_ERANGE);
    struct tw_tx_rule r = {.kind = TW_TX_UNITS, .unit_bytes = 262144, .per_10k = {2000}};
    struct tw_io_rate io = {INT64_MAX / 2, 1048576};
    assert_int_equal(tw_tx_cost(&r, &io, HOUR_NS, &a, &err), TW_ERANGE);
    /* Bad periods and margins. */
    assert_int_equal(tw_savings_windows(&w, 1, DAY_NS, 0, P10, E10, NULL, NULL, NULL, &d, &err),
                     TW_EINVAL);
    o.after_deallocate_ns = -1;
    assert_int_equal(tw_savings_windows(&w, 1, 0, DAY_NS, P10, E10, NULL, &o, NULL, &d, &err),
                     TW_EINVAL);
}

static void test_decimals(void **state)
{
    (void)state;
    struct tw_amount a;
    /* Half-way goes away from zero, both signs. */
    dec((struct tw_amount){25, 10}, 6, "0.000003");
    dec((struct tw_amount){-25, 10}, 6, "-0.000003");
    dec((struct tw_amount){24, 10}, 6, "0.000002");
    dec((struct tw_amount){1500000, 1}, 0, "2");
    dec((struct tw_amount){-1500000, 1}, 0, "-2");
    dec((struct tw_amount){-1499999, 1}, 0, "-1");
    dec((struct tw_amount){2345000, 1}, 2, "2.35");
    dec((struct tw_amount){-2345000, 1}, 2, "-2.35");
    dec((struct tw_amount){9999995, 1}, 5, "10.00000"); /* the carry runs through */
    /* No negative zero. */
    dec((struct tw_amount){-4, 1}, 5, "0.00000");
    dec((struct tw_amount){0, 1}, 0, "0");
    /* Eighteen decimals of a third of a millionth. */
    dec((struct tw_amount){1, 3}, 18, "0.000000333333333333");
    dec((struct tw_amount){2, 3}, 18, "0.000000666666666667");
    /* The largest amounts still fit 64 bytes. */
    a.num = ((tw_i128)INT64_MAX << 63);
    a.den = 1;
    char buf[64];
    assert_true(tw_amount_decimal(a, 18, buf, sizeof(buf)));
    assert_string_equal(buf, "85070591730234615856620279821087.277056000000000000");
    a.num = -a.num;
    assert_true(tw_amount_decimal(a, 18, buf, sizeof(buf)));
    assert_string_equal(buf, "-85070591730234615856620279821087.277056000000000000");
    /* Refusals: too small a buffer, digits out of range, a bad fraction. */
    assert_false(tw_amount_decimal((struct tw_amount){16160000, 1}, 2, buf, 5));
    assert_string_equal(buf, "");
    assert_true(tw_amount_decimal((struct tw_amount){16160000, 1}, 2, buf, 6));
    assert_string_equal(buf, "16.16");
    assert_false(tw_amount_decimal((struct tw_amount){1, 1}, 19, buf, sizeof(buf)));
    assert_false(tw_amount_decimal((struct tw_amount){1, 1}, -1, buf, sizeof(buf)));
    assert_false(tw_amount_decimal((struct tw_amount){1, 0}, 2, buf, sizeof(buf)));

    hours(0, "0");
    hours(2496 * HOUR_NS, "2496");
    hours(47 * HOUR_NS + 30 * MIN_NS, "47.5");
    hours(10 * MIN_NS, "0.166667");
    hours(-90 * MIN_NS, "-1.5");
    hours(1800000, "0.000001");  /* half a micro-hour: away from zero */
    hours(-1800000, "-0.000001");
    hours(1799999, "0");
    hours(-1799999, "0");
    hours(INT64_MIN, "-2562047.788015");
    hours(INT64_MAX, "2562047.788015");
    assert_false(tw_hours_decimal(47 * HOUR_NS + 30 * MIN_NS, buf, 4));
    assert_true(tw_hours_decimal(47 * HOUR_NS + 30 * MIN_NS, buf, 5));

    /* No buffer: refused whatever the capacity says, nothing written. */
    char *none = NULL;
    assert_false(tw_amount_decimal((struct tw_amount){16160000, 1}, 2, none, 64));
    assert_false(tw_amount_decimal((struct tw_amount){16160000, 1}, 2, none, 0));
    assert_false(tw_hours_decimal(47 * HOUR_NS, none, 64));
    assert_false(tw_hours_decimal(47 * HOUR_NS, none, 0));
    /* A capacity of 0 leaves the buffer alone. */
    memcpy(buf, "x", 2);
    assert_false(tw_amount_decimal((struct tw_amount){16160000, 1}, 2, buf, 0));
    assert_false(tw_hours_decimal(47 * HOUR_NS, buf, 0));
    assert_string_equal(buf, "x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_example), cmocka_unit_test(test_dst_weekends),
        cmocka_unit_test(test_clipped),       cmocka_unit_test(test_overlapping),
        cmocka_unit_test(test_167_hours),     cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_min_saving),    cmocka_unit_test(test_quota_nightly),
        cmocka_unit_test(test_quota_two_a_day), cmocka_unit_test(test_bill_cost),
        cmocka_unit_test(test_overflow),      cmocka_unit_test(test_decimals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
