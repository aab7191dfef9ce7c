/*
 * savings.h - what a disk costs over time, and what moving it to a cheaper
 * SKU for a while saves.  Pure: no store, no clock, no I/O.
 *
 * The rules (../shared catalog of billing facts; README "Savings"):
 *
 *   - A disk is billed at its SKU's monthly price prorated by the hour,
 *     TW_BILL_HOURS_PER_MONTH (730) hours to a month, time counted exactly
 *     (nanoseconds, fractions of an hour included):
 *         cost = sum over spans of per_month * duration / 730 h.
 *   - The saving of a plan over a span = cost at the original SKU - cost
 *     under the plan - the cheaper SKU's transaction charges in the hours
 *     it is used.  While the VM is deallocated it does no I/O, so the
 *     transaction charge is zero; a policy that lets a running VM's disk
 *     stay on the cheaper SKU prices the observed I/O rate.
 *   - Transactions (struct tw_tx_rule): Premium SSD none (without on-demand
 *     bursting); Standard SSD each I/O in 256 KiB units; Standard HDD by
 *     size and region (16 KiB units with an hourly cap for S4, S6, S70 and
 *     S80 outside eastus and northeurope, at most 16 units an I/O for S70
 *     and S80; one unit an I/O for S10, S20 ... S60 and everywhere in
 *     eastus and northeurope; S15, in neither of the billing page's lists,
 *     by the worse rule, 16 KiB units with no cap, said in the note);
 *     billed per 10,000.  Three meters may price them: the tier's own
 *     "<tier> LRS Disk Operations", the family's 4-tier one ("E4 LRS Disk
 *     Operations", "S4 ...", same redundancy: the billing page's example
 *     bill prices an E30 disk's transactions on E4's and an S20's on S4's,
 *     and no E1, E2 or E3 operations meter exists) and the newer tier-less
 *     "Disk Transactions LRS Disk Operations".  Which one Azure bills a
 *     given disk on is not documented, so the highest of those in the book
 *     is used (the worse case; equal prices: the tier's own, then E4's),
 *     tw_tx_rule.meter names every one present and tw_tx_rule.note says
 *     which was taken and why.
 *
 * Every amount is exact (struct tw_amount, core/money.h) until presented.
 */
#ifndef TW_CORE_SAVINGS_H
#define TW_CORE_SAVINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/money.h"
#include "core/pricebook.h"
#include "core/sku.h"
#include "core/tier.h"
#include "core/window.h"

#define TW_BILL_HOURS_PER_MONTH 730
#define TW_BILL_MONTH_NS (INT64_C(730) * 3600 * 1000000000) /* 730 h in ns */

/* ---- cost over time --------------------------------------------------- */

/* A span [from_ns, to_ns) billed at one SKU's monthly price. */
struct tw_bill_span {
    int64_t from_ns, to_ns;
    struct tw_money per_month;
};

/* The exact cost of N spans: sum of per_month * (to - from) / 730 h.
 * TW_EINVAL for a span that ends before it starts, TW_ERANGE on overflow. */
enum tw_err tw_bill_cost(const struct tw_bill_span *spans, size_t n, struct tw_amount *out,
                         struct tw_error *err);

/* ---- transactions ----------------------------------------------------- */

enum tw_tx_kind {
    TW_TX_NONE,        /* no transaction charge (Premium SSD, v2, Ultra) */
    TW_TX_UNITS,       /* each I/O counts ceil(size / unit_bytes) units, capped per I/O */
    TW_TX_PER_IO       /* each I/O counts one unit whatever its size */
};

/* How a disk's I/O becomes a transaction charge. */
struct tw_tx_rule {
    enum tw_tx_kind kind;
    int64_t unit_bytes;        /* TW_TX_UNITS: 262144 (Standard SSD), 16384 (HDD) */
    int64_t max_units_per_io;  /* 0: no cap per I/O; 16 for S70, S80 */
    int64_t hourly_cap;        /* billable units an hour at most; 0: no cap known */
    bool cap_unknown;          /* a cap exists but its value is not published: none applied */
    struct tw_money per_10k;   /* price per 10,000 units (TW_TX_NONE: 0) */
    char meter[160];           /* the meter(s) in the book that may price it, in words:
                                * "\"E10 LRS Disk Operations\"", or all present with the
                                * one used first: "\"A\" (the higher) and \"B\"", "\"A\"
                                * (the highest), \"B\" and \"C\"" */
    char note[320];            /* what was assumed ("meters in the book: E10's 0.002, E4's
                                * 0.002 and the tier-less 0.0026 per 10,000; the highest,
                                * the tier-less, is used (the worse case): ..."; the S15
                                * rule; Standard SSD's unpublished cap), "" when nothing */
    char used[64];             /* the bare name of the meter used, "E10 LRS Disk Operations";
                                * "" when none is (TW_TX_NONE) */
    size_t n_meters;           /* meters of the (up to three) that the book holds */
    char meters[3][64];        /* their bare names, in the order tier's own, the family's
                                * 4-tier one, the tier-less one */
};

/*
 * The rule for a disk of FAMILY, TIER (its billed tier, "E10") and RED in
 * REGION, priced from book B in CURRENCY.  TW_ENOENT naming the meters
 * when the book has none of the (up to three) transaction prices for a
 * family that is charged (never a zero); TW_EINVAL for a provisioned
 * family asked with a tier.
 */
enum tw_err tw_tx_rule_for(const struct tw_pricebook *b, const char *region, const char *currency,
                           enum tw_sku_family family, const char *tier,
                           enum tw_sku_redundancy red, struct tw_tx_rule *out,
                           struct tw_error *err);

/* An I/O rate: IOS_PER_HOUR I/Os of IO_BYTES each on average.  Zero: no
 * I/O (a deallocated VM). */
struct tw_io_rate {
    int64_t ios_per_hour;
    int64_t io_bytes;
};

/* The exact transaction charge of RATE over DUR_NS under rule R: units an
 * hour (capped by R's hourly cap) * DUR_NS / 1 h * per_10k / 10,000.
 * RATE is an average: its I/O size is rounded up to whole units as if
 * every I/O had that size (a mix of small and large I/Os may really count
 * more units, or fewer), and the hourly cap is applied to the average
 * rate and prorated over DUR_NS, not hour by hour (a busy hour above the
 * cap and a quiet one below count as two average hours). */
enum tw_err tw_tx_cost(const struct tw_tx_rule *r, const struct tw_io_rate *rate, int64_t dur_ns,
                       struct tw_amount *out, struct tw_error *err);

/* ---- the target SKU -------------------------------------------------- */

/* What a disk would move to, and both prices. */
struct tw_target {
    char sku[32];              /* "StandardSSD_LRS": the target family, the disk's redundancy */
    char tier[8];              /* the target family's size step holding the disk: "E10" */
    struct tw_money from_per_month; /* the disk's own SKU and billed tier */
    struct tw_money to_per_month;
    char why[256];             /* how it was chosen ("same size step", "cheapest of ...") */
};

/*
 * The target for a disk of SKU, billed TIER ("P10"; a performance tier
 * above the size step counts: that is what it is billed at) and SIZE_GIB,
 * given the allowed target families (SKU names whose redundancy is ignored:
 * the disk's own redundancy is kept, ZRS stays ZRS).  With CHEAPEST false,
 * ALLOWED has one entry; with CHEAPEST true the cheapest of ALLOWED that the
 * book prices wins (ties: the earlier in ALLOWED).  The target tier is the
 * smallest tier of the target family's table that holds SIZE_GIB (S starts
 * at S4: a 4 GiB P1 goes to S4), never one that can't hold the disk.
 * Prices per month from B in REGION and CURRENCY.  TIER "" or NULL: the
 * size's own step.  An allowed family that is the disk's own is no target
 * (skipped under CHEAPEST, TW_ENOENT alone); a provisioned one is TW_EINVAL.
 * TW_ENOENT with the reason when there is no target: no such family in the
 * disk's redundancy (Standard HDD has no ZRS), no size step large enough,
 * no price for the disk's own tier or any target's; TW_EINVAL for a
 * provisioned SKU or an unknown one.
 *
 * A target dearer than the disk (or as dear) is not refused: both prices
 * are returned, and the callers must compare them (to_per_month <
 * from_per_month) and say why when there is nothing to save.
 */
enum tw_err tw_target_choose(const struct tw_tier_catalog *cat, const struct tw_pricebook *b,
                             const char *region, const char *currency, const char *sku,
                             const char *tier, int64_t size_gib, const char *const *allowed,
                             size_t n_allowed, bool cheapest, struct tw_target *out,
                             struct tw_error *err);

/* ---- a disk's windows ------------------------------------------------ */

/* How the switches of one disk are made. */
struct tw_switch_opts {
    int64_t after_deallocate_ns;  /* downgrade this long after a window opens */
    int64_t before_start_ns;      /* upgrade this long before it closes */
    struct tw_money min_saving;   /* a window saving less (whole window) is skipped; 0: none */
    int quota_changes;            /* at most this many type changes ... */
    int64_t quota_ns;             /* ... in any span this long (2 in 24 h); 0: no quota */
    const int64_t *prior_changes; /* instants of type changes already made, sorted */
    size_t n_prior;
    struct tw_io_rate io;         /* I/O while on the cheaper SKU; zero while deallocated */
    /* Real before REAL_UNTIL_NS (when REAL_UNTIL): the changes before it are
     * prior_changes' alone, at their real times; a window's switch due
     * before it is not counted again (it was made, late or not, or not at
     * all: the SKU history says which), and such a window is checked on
     * its switch after it alone. */
    bool real_until;
    int64_t real_until_ns;
};

enum tw_window_skip {
    TW_WINDOW_TAKEN = 0,
    TW_WINDOW_TOO_SHORT,       /* the margins leave nothing */
    TW_WINDOW_MIN_SAVING,      /* saves less than min_saving */
    TW_WINDOW_QUOTA,           /* the downgrade and the upgrade back don't both fit the quota */
    TW_WINDOW_OUTSIDE          /* the downgraded span falls outside the period */
};

/* One window of one disk. */
struct tw_window_saving {
    int64_t open_ns, close_ns;   /* the window as its schedule gives it (not clipped) */
    int64_t down_ns, up_ns;      /* the switches: open + after, close - before */
    int64_t from_ns, to_ns;      /* the downgraded span clipped to the period */
    int64_t downgraded_ns;       /* to_ns - from_ns; 0 when skipped (a skipped window's
                                  * from_ns/to_ns are the span it would have had) */
    struct tw_amount saving;     /* in the period, net of transactions; 0 when skipped */
    struct tw_amount tx_cost;    /* transactions in the period */
    struct tw_amount whole_saving; /* the whole window's saving (for min_saving) */
    enum tw_window_skip skip;
};

/* What one disk's windows add up to. */
struct tw_disk_saving {
    int64_t downgraded_ns;       /* sum over taken windows */
    struct tw_amount saving;     /* sum over taken windows */
    struct tw_amount tx_cost;
    struct tw_amount baseline;   /* the period at the original SKU */
    size_t n_taken, n_skipped;   /* windows outside the period count in neither */
};

/*
 * Plans the N windows WIN (sorted by open, disjoint, NOT clipped: instants
 * of the schedule over a span reaching past the period so that a window
 * crossing its edge keeps its real margins) of one disk whose prices are
 * FROM_PER_MONTH and TO_PER_MONTH, under O, within the period
 * [PERIOD_FROM, PERIOD_TO).  Each window's switches are placed by the
 * margins; a window is skipped when the margins leave nothing, when its
 * whole saving is under min_saving, or when its two changes would make
 * more than quota_changes changes in some span shorter than quota_ns
 * (counting O's prior changes and the windows taken before it).  The
 * downgraded span is then clipped to the period.  OUT has N entries (may
 * be NULL when only TOTAL is wanted); TOTAL (may be NULL) gets the sums.
 * TX (NULL: no transaction charge) prices O->io.
 *
 * Precisely: the quota is broken when quota_changes + 1 changes (prior,
 * taken, and this window's two, at least one of them this window's) lie
 * less than quota_ns apart, first to last.  A window outside the period
 * that would be taken still counts for the quota of the windows after it
 * (the plan makes its changes).  O NULL: no margins, minimum or quota.
 * TW_EINVAL for windows unsorted or overlapping, negative margins, a
 * negative min_saving, unsorted prior changes; TW_ERANGE on overflow.
 *
 * The quota only sees the changes it is given (prior_changes: those
 * already made) and those of WIN: WIN's first window is expected to open
 * before the period, so that the plan's changes just before it count for
 * the first windows inside it.  Callers take the schedule's instants over
 * a span widened by at least the quota's span (quota_ns) plus a week
 * before the period, and a week after it (a window crossing its end keeps
 * its real margins).  Nothing checks this: a list that starts at the
 * period lets its first window take a change the quota would have refused.
 */
enum tw_err tw_savings_windows(const struct tw_interval *win, size_t n, int64_t period_from,
                               int64_t period_to, struct tw_money from_per_month,
                               struct tw_money to_per_month, const struct tw_tx_rule *tx,
                               const struct tw_switch_opts *o, struct tw_window_saving *out,
                               struct tw_disk_saving *total, struct tw_error *err);

/* "taken", "too_short", "min_saving", "quota", "outside". */
const char *tw_window_skip_name(enum tw_window_skip s);

/* ---- presentation of amounts ----------------------------------------- */

/* The decimal text of amounts and hours (tw_amount_decimal,
 * tw_hours_decimal, tw_hours_decimal_wide) is core/money.h's, included
 * above. */

#endif
