/*
 * monthly.h - the monthly cost-saving report: its model, built from the
 * store, and its three forms (JSON, CSV, HTML).
 *
 * The model is built once (tw_mr_build) and written by each form
 * (monthly_json.c, monthly_csv.c, monthly_html.c).  `tierwise report
 * monthly` (src/cli/cmd_report.c) and GET /api/v1/reports/monthly
 * (src/server/v1_monthly.c) both call tw_mr_build then one writer.
 *
 * What a disk's figures mean (README "The monthly report" says it for
 * readers):
 *   - the month is [first day 00:00 UTC, next month's first day 00:00 UTC);
 *     a month still running ends at the build's NOW (the system clock), and
 *     the report says so (model.partial);
 *   - the SKU timeline of a disk over the month is its SKU history merged
 *     with the verified (done) actions' to_sku at the instant they were
 *     verified, every instant floored to the second;
 *   - a "tierwise interval" runs from a verified downgrade until the disk's
 *     next SKU change (whatever its source); the baseline is the timeline
 *     with each tierwise interval put back on the downgrade's from_sku, so
 *     out-of-band changes cost the same in both and save nothing;
 *   - cost = sum over parts of per_month x seconds / (730 x 3600), the
 *     part's price being the one in effect then: the region's book fetched
 *     last at or before the part's start (else the first one fetched
 *     after, which the notes say), its items in effect at that instant;
 *   - realised = baseline - cost; possible = max(0, the modelled saving
 *     under the disk's policy over the report's own period [from_ns, to_ns)
 *     (UTC, ending at NOW when partial; the planner's period mode of
 *     tw_opp_run, not the month in the policy's zone) - realised), so a disk
 *     that took every window has possible 0; totals count the disks no
 *     policy covers in possible_unknown;
 *   - every amount exact (struct tw_amount) until shown; a row's cost,
 *     baseline, transactions and possible are rounded once to the
 *     currency's minor unit, and its rounded realised saving is the rounded
 *     baseline - cost - transactions beside it (what a reader gets on
 *     paper; realised_unrounded stays exact); a total's rounded
 *     figure is the sum of its rows' rounded figures (the page adds up),
 *     its unrounded one the exact sum.
 */
#ifndef TW_SERVICE_MONTHLY_H
#define TW_SERVICE_MONTHLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/money.h"
#include "core/policy.h"
#include "core/tier.h"
#include "core/vmcap.h"
#include "service/opportunities.h"
#include "service/vmsizes.h"
#include "store/store.h"

#define TW_MR_SCHEMA "tierwise.monthly-report/1"

enum tw_mr_group_by { TW_MR_BY_RESOURCE_GROUP = 0, TW_MR_BY_SUBSCRIPTION, TW_MR_BY_TAG };

struct tw_mr_opts {
    int year, month;                       /* 1..12 */
    const char *currency;                  /* NULL or "": the store's only currency */
    enum tw_mr_group_by group_by;          /* default: resource group */
    const char *group_tag;                 /* TW_MR_BY_TAG: the tag's name */
    const struct tw_policy *const *policies; /* for `possible`; N 0: none given */
    size_t n_policies;
    const struct tw_tier_catalog *cat;
    const struct tw_vmcap_table *caps;
    struct tw_svc_vmsizes *arm_sizes;      /* NULL: none */
    tw_opp_zone_fn zone;                   /* loads a policy's zone */
    void *zone_arg;
    int64_t now_ns;                        /* 0: the system clock (tw_now_ns) */
    int64_t disk_id;                       /* > 0: that disk's row alone (the dashboard's
                                            * disk page); the totals are its own; a
                                            * disk stored but not in the fleet that
                                            * month: no rows, a note */
    const char *db_path;                   /* set: the policies' run (possible) goes on a
                                            * second thread on its own handle
                                            * (tw_store_open of it) beside the report's
                                            * walk; NULL: after it, on ST */
};

/* Time on one SKU in the month. */
struct tw_mr_sku_time {
    char sku[32];
    char tier[16];                         /* "" unknown */
    int64_t seconds;
    struct tw_amount cost;                 /* exact; zero when not priced */
    struct tw_money cost_r;                /* the row's cost_r split over its SKUs by
                                            * largest remainder: the parts add up to it */
};

/* One disk's row. */
struct tw_mr_disk {
    int64_t vm_id, disk_id;
    const char *vm, *disk;                 /* names (the model's strings) */
    const char *subscription_id, *resource_group, *location, *vm_size;
    const char *resource_id;               /* the disk's ARM id; "" unknown */
    const char *group;                     /* the group key it is totalled under */
    enum tw_disk_role role;
    char original_sku[32], original_tier[16]; /* what the baseline bills */
    char sku[32], tier[16];                /* at the month's end (or now) */
    size_t n_skus;
    struct tw_mr_sku_time *skus;           /* by seconds, longest first */
    int64_t downgraded_seconds;            /* inside tierwise intervals */
    int64_t switches;                      /* verified actions of the disk in the month */
    int64_t drift_seconds;                 /* drift rows clipped to the month */
    int64_t running_metered_seconds;       /* in a tierwise interval on a SKU billed per
                                            * transaction while the VM ran: transactions
                                            * not known, not counted (notes say so) */
    /* money: exact and rounded once */
    struct tw_amount cost, baseline, realised, transactions, possible;
    struct tw_money cost_r, baseline_r, realised_r, transactions_r, possible_r;
    bool priced;                           /* false: not priced, the amounts are zero and
                                            * unpriced/unpriced_why say why */
    const char *unpriced;                  /* "no_book", "no_price", "no_region",
                                            * "unknown_sku"; NULL when priced */
    char unpriced_why[320];
    /* the policy's view */
    char policy[TW_POLICY_NAME_MAX];       /* the policy `possible` comes from; "" none */
    bool possible_known;                   /* false: no policy given covers it */
    const char *excluded;                  /* tw_opp_reason_name when every policy given
                                            * matching it leaves it alone; NULL otherwise */
    char excluded_why[512];
    /* the latest compliance verdict of the disk (or its stripe) */
    char verdict[16];                      /* "delivers", "under", ...; "" none */
    char verdict_reason[256];
    double measured_iops, measured_mbps;   /* NAN unknown */
    double expected_iops, expected_mbps;
    char judged_at[40];                    /* the result's started_at; "" none */
};

/* Totals of a group or of the fleet: the rounded figures are the sums of
 * the rows' rounded figures; the unrounded ones the exact sums. */
struct tw_mr_total {
    int64_t vms, disks;                    /* disks listed, priced or not */
    int64_t unpriced;                      /* disks whose figures are left out */
    int64_t possible_unknown;              /* disks no policy given covers (possible_known
                                            * false): their possible is not known, not 0 */
    int64_t under;                         /* disks whose latest verdict is "under" */
    int64_t switches;
    int64_t downgraded_seconds, drift_seconds;
    struct tw_amount cost, baseline, realised, transactions, possible;
    struct tw_money cost_r, baseline_r, realised_r, transactions_r, possible_r;
};

struct tw_mr_group {
    const char *key;                       /* "sub/rg", the subscription, or the tag's
                                            * value ("(no tag)" when a VM lacks it) */
    size_t first, n;                       /* its rows: disks[first .. first + n) */
    struct tw_mr_total t;
};

/* A book that priced part of the month. */
struct tw_mr_book {
    char region[48];
    char source[256];
    char fetched_at[40];
    int64_t from_ns, to_ns;                /* the part of the month it priced */
    bool after;                            /* fetched after the part it priced (no book was
                                            * fetched by then) */
    int64_t disks;
};

/* A region the month can't be priced in (no book in the currency). */
struct tw_mr_missing {
    char region[48];
    char why[320];
    int64_t disks;
};

/* The week timeline: one week of the month (the last whole Monday-to-Monday
 * one, else the month's first seven days), per VM with a switch in it. */
struct tw_mr_span {
    int64_t from_ns, to_ns;
    char state[32];                        /* the power state then ("deallocated", ...) */
};
struct tw_mr_mark {
    int64_t at_ns;
    char kind[16];                         /* "downgrade", "upgrade", "stop", "start" */
    char disk[128];
    char to_sku[32];
    char state[16];                        /* the action's state ("done", "failed", ...) */
};
struct tw_mr_week_vm {
    const char *vm;
    int64_t vm_id;
    size_t n_spans, n_marks;
    struct tw_mr_span *spans;              /* power states through the week */
    struct tw_mr_mark *marks;              /* actions in the week */
};

struct tw_mr_model {
    char month[8];                         /* "2026-11" */
    char currency[4];
    int decimals;                          /* the currency's minor unit */
    int64_t from_ns, to_ns;                /* the month (to: NOW when partial) */
    int64_t month_end_ns;                  /* the month's real end */
    bool partial;                          /* the month is still running */
    char generated_at[40];                 /* RFC 3339 UTC */
    enum tw_mr_group_by group_by;
    char group_tag[513];                   /* a tag's name is 1..512 bytes */
    size_t n_disks, n_groups, n_books, n_missing, n_notes;
    struct tw_mr_disk *disks;              /* by group, VM name, disk position */
    struct tw_mr_group *groups;            /* by key */
    struct tw_mr_book *books;              /* by region, from_ns */
    struct tw_mr_missing *missing;         /* by region */
    char **notes;                          /* what a reader should know, sentences */
    struct tw_mr_total fleet;
    /* the policies asked about, by name */
    size_t n_policies;
    char (*policies)[TW_POLICY_NAME_MAX];
    int64_t week_from_ns, week_to_ns;
    size_t n_week;
    struct tw_mr_week_vm *week;            /* VMs with switches that week, by name */
    void *arena;                           /* the model's strings and arrays */
};

/*
 * Builds the model of O's month from ST into *OUT (free with
 * tw_mr_model_cleanup, also after an error).  TW_EINVAL bad options or a
 * currency to choose (the message lists them), TW_ENOENT when the store
 * has no price book at all or no disk O->disk_id (a disk stored but not
 * in the fleet that month is TW_OK, no rows, a note); a region without a
 * book is no error (its disks are rows with priced false, counted in
 * unpriced, the region in missing).  A policy's zone that does not load
 * is its error.
 */
enum tw_err tw_mr_build(struct tw_store *st, const struct tw_mr_opts *o, struct tw_mr_model *out,
                        struct tw_error *err);
void tw_mr_model_cleanup(struct tw_mr_model *m); /* NULL allowed */

/* "resource-group", "subscription", "tag:NAME" (LEN bytes) into O's
 * group_by and group_tag (pointing into BUF); TW_EPARSE saying what is
 * expected.  The parse reads LEN bytes only, but tw_mr_build reads
 * group_tag as a C string: hand it a BUF with a NUL at BUF[LEN] (a copy of
 * an argument or a query parameter, as the command and the route do). */
enum tw_err tw_mr_group_by_parse(const char *buf, size_t len, struct tw_mr_opts *o,
                                 struct tw_error *err);

/* ---- the forms ---- (each streams through WRITE; an error it returns
 * stops the writer and is returned) */

/* The JSON document (schema TW_MR_SCHEMA): see monthly_json.c's header
 * for its members; amounts as decimal strings, each rounded and
 * "..._unrounded" with 12 decimals. */
enum tw_err tw_mr_write_json(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                             struct tw_error *err);
/* One FOCUS-aligned CSV record per disk (RFC 4180, CRLF, a header row). */
enum tw_err tw_mr_write_csv(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                            struct tw_error *err);
/* One self-contained HTML page (inline CSS and SVG, no script, prints on
 * A4); past TW_MR_HTML_ROWS_MAX rows the disk tables collapse per group. */
#define TW_MR_HTML_ROWS_MAX 2000
enum tw_err tw_mr_write_html(const struct tw_mr_model *m, tw_opp_write_fn write, void *arg,
                             struct tw_error *err);

#endif
