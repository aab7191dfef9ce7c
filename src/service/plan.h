/*
 * plan.h - the planner: for each disk a policy covers, the tier switches
 * its windows call for over [from, to): a downgrade after_deallocate
 * minutes after the VM is (or, by the windows, will be) deallocated and an
 * upgrade back to the disk's original SKU before_start minutes before the
 * VM is due to start.
 *
 * It runs the savings model of the opportunities (service/opportunities.h)
 * over the period, so it covers, excludes and prices disks exactly as
 * `tierwise savings` does: a window saving less than min_saving is
 * skipped, and a downgrade is planned only when the upgrade back fits the
 * quota too (changes by anyone, from the SKU history, count).  A disk
 * tierwise has downgraded already (an original SKU is recorded) is matched
 * and planned by its original SKU.
 *
 * `tierwise plan`, GET /api/v1/plan and /plan.ics, and `tierwise apply`
 * (which records the actions due) all run this.
 */
#ifndef TW_SERVICE_PLAN_H
#define TW_SERVICE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/money.h"
#include "service/opportunities.h"
#include "store/store.h"

/* The dates a plan takes: the years 1970..2199 (as a month of `tierwise
 * savings`), instants from 1970-01-01T00:00:00Z to before
 * 2200-01-01T00:00:00Z (TW_PLAN_END_NS), so that no sum of the walk
 * (a week or a quota span either side) leaves int64_t nanoseconds. */
#define TW_PLAN_YEAR_MIN 1970
#define TW_PLAN_YEAR_MAX 2199
#define TW_PLAN_END_NS INT64_C(7258118400000000000) /* 2200-01-01T00:00:00Z */
/* The longest period: TW_PLAN_MAX_DAYS for a run (tw_svc_plan_run refuses
 * a longer one with TW_ERANGE naming `to`): the windows' instants are
 * placed over at most TW_WINDOW_PERIOD_MAX_DAYS (3660), and the walk
 * places them from its anchor (the local Monday of the week holding the
 * start less the quota's span: up to 7 + 7 days before it) less a week's
 * lead to a week after the period's end, so 3660 - 29 days (a day to
 * spare).  TW_PLAN_ROUTE_MAX_DAYS for GET /api/v1/plan and /plan.ics (the
 * document is buffered whole). */
#define TW_PLAN_MAX_DAYS 3631
#define TW_PLAN_ROUTE_MAX_DAYS 366

struct tw_plan_opts {
    const struct tw_policy *policy;
    int64_t from_ns, to_ns;          /* the period, [from, to) */
    const char *currency;            /* NULL or "": the store's only currency */
    const struct tw_reservations *reservations; /* added to the policy's; NULL none */
    const struct tw_tier_catalog *cat;
    const struct tw_vmcap_table *caps;
    struct tw_svc_vmsizes *arm_sizes;
    tw_opp_zone_fn zone;
    void *zone_arg;
    /* Added by the planner's owner: */
    int64_t now_ns;                  /* the ICS's DTSTAMP; 0: the system clock */
    /* The installation the ICS's UIDs name ("<key>@<hash>.tierwise"): the
     * database's absolute path and the host ("/var/lib/tierwise/db@host"),
     * hashed; NULL: "<key>@tierwise" alone. */
    const char *installation;
};

enum tw_plan_kind { TW_PLAN_DOWNGRADE, TW_PLAN_UPGRADE };
const char *tw_plan_kind_name(enum tw_plan_kind k); /* "downgrade", "upgrade" */

/* One planned action; the names are the audit log's (tw_store_action_row). */
struct tw_plan_action {
    enum tw_plan_kind kind;
    int64_t vm_id, disk_id;
    const char *vm, *disk;           /* names */
    const char *resource_group, *subscription_id;
    char from_sku[32], to_sku[32];
    int64_t due_ns;
    char due_at[40];                 /* RFC 3339 UTC, "2026-12-04T20:10:00Z" */
    char due_local[48];              /* in the policy's zone with its offset */
    int64_t window_open_ns, window_close_ns; /* the window it belongs to */
    int64_t pair_due_ns;             /* the other switch of the window (upgrade's for a
                                      * downgrade, and back) */
    struct tw_amount saving;         /* the window's expected saving (downgrade; 0 upgrade) */
    char reason[256];                /* "window Fri 20:00-Mon 06:00 (Europe/London) of
                                      * dev-weekends" */
    char idempotency_key[160];       /* policy, disk, kind and due: a second plan of the
                                      * same switch records nothing new */
};

struct tw_plan_sink {
    enum tw_err (*action)(void *arg, const struct tw_plan_action *a);
    void *arg;
};

struct tw_plan_summary {
    char policy[TW_POLICY_NAME_MAX];
    char currency[4];
    char timezone[TW_TZ_NAME_MAX];
    int64_t from_ns, to_ns;
    int64_t actions, downgrades, upgrades;
    int64_t disks;                   /* disks with at least one action */
    int64_t windows_skipped;         /* by min_saving, quota or margins */
    struct tw_amount saving;         /* the downgrades' sum, exact */
    enum tw_opp_fail fail;
    /* Added by the planner's owner: the disks left out (not planned) */
    int64_t disks_without_price;     /* covered by the policy, no price (TW_OPP_NO_PRICE) */
    int64_t missing_books;           /* regions needed with no price book */
    int64_t needed_books;            /* regions needed (with a book or not) */
    char missing_regions[512];       /* "westeurope (3 disks), ..." (tw_opp_missing_regions) */
    /* sums whose rows are rounded: the total of the rows may differ (as
     * `tierwise savings` says under its table) */
    bool rounded;
};

/* Every action of the period to SINK in due order per disk (disks in VM
 * id order); the sums into *OUT.  Errors as tw_opp_run. */
enum tw_err tw_svc_plan_run(struct tw_store *st, const struct tw_plan_opts *o,
                            const struct tw_plan_sink *sink, struct tw_plan_summary *out,
                            struct tw_error *err);

/* Several plans (OPTS[i] each, to SINKS[i] (NULL: none), sums into
 * OUTS[i], errors into ERRS[i]) over one walk of the store
 * (tw_opp_run_many): each plan's actions and sums are those of its own
 * tw_svc_plan_run; a plan that fails stops alone.  Returns TW_OK when
 * every plan went through, else the first failed plan's error.
 * tw_svc_plan_run is this with N 1. */
enum tw_err tw_svc_plan_run_many(struct tw_store *st, size_t n, const struct tw_plan_opts *opts,
                                 const struct tw_plan_sink *sinks,
                                 struct tw_plan_summary *outs, struct tw_error *errs);

/* The plan as JSON ({"schema_version": "tierwise.plan/1", "policy", "from",
 * "to", "currency", "timezone", "actions": [...], "totals"}) or as an
 * iCalendar file (RFC 5545: one VEVENT per action, times in UTC, CRLF,
 * lines folded at 75 octets), through WRITE. */
enum tw_err tw_svc_plan_json(struct tw_store *st, const struct tw_plan_opts *o,
                             tw_opp_write_fn write, void *arg, struct tw_error *err);
enum tw_err tw_svc_plan_ics(struct tw_store *st, const struct tw_plan_opts *o,
                            tw_opp_write_fn write, void *arg, struct tw_error *err);
/* The same, with the run's summary into *SUM (disks without a price,
 * books missing: what the caller warns of or refuses). */
enum tw_err tw_svc_plan_json_sum(struct tw_store *st, const struct tw_plan_opts *o,
                                 tw_opp_write_fn write, void *arg, struct tw_plan_summary *sum,
                                 struct tw_error *err);
enum tw_err tw_svc_plan_ics_sum(struct tw_store *st, const struct tw_plan_opts *o,
                                tw_opp_write_fn write, void *arg, struct tw_plan_summary *sum,
                                struct tw_error *err);

/* A date of the command line or the query, LEN bytes at BUF: RFC 3339
 * ("2026-12-04T20:00:00Z", an offset or Z required) or YYYY-MM-DD, which is
 * that day's midnight in zone Z (the policy's; a midnight the clocks skip
 * is the first instant after it).  TW_EPARSE saying what is expected and
 * where, TW_ERANGE for a date outside the years 1970..2199 or an instant
 * before 1970-01-01T00:00:00Z (a day's midnight too: 1970-01-01 in
 * Europe/London is 1969-12-31T23:00:00Z, refused). */
enum tw_err tw_svc_plan_date(const char *buf, size_t len, const struct tw_tz *z, int64_t *ns,
                             struct tw_error *err);

/* [FROM, TO) checked: inside the dates a plan takes (TW_ERANGE naming
 * `from` or `to`), TO after FROM (TW_EINVAL), at most MAX_DAYS long
 * (TW_ERANGE naming `to` and the maximum; MAX_DAYS <= 0: no cap). */
enum tw_err tw_svc_plan_period(int64_t from_ns, int64_t to_ns, int max_days,
                               struct tw_error *err);

/* A saved plan (tierwise.plan/1 JSON, LEN bytes) back into its actions
 * for `tierwise apply --plan FILE`: each to SINK (names, SKUs, due,
 * reason, key; ids resolved by the caller).  Fuzzed. */
enum tw_err tw_svc_plan_parse(const char *buf, size_t len, const struct tw_plan_sink *sink,
                              struct tw_error *err);

/* Records A in the store as a planned action (policy POLICY, idempotency
 * key A->idempotency_key): *ADDED false when it was recorded before.  Not
 * from inside a run's sink on the same store handle (the run holds a read
 * transaction): keep the actions, record them after. */
enum tw_err tw_svc_plan_record(struct tw_store *st, const char *policy,
                               const struct tw_plan_action *a, const char *currency,
                               bool dry_run, bool *added, int64_t *id, struct tw_error *err);

#endif
