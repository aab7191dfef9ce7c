/*
 * opportunities.h - the fleet's savings opportunities under one policy for
 * one month: per disk the policy covers, the windows it gets, the hours it
 * would spend on the cheaper SKU, the target SKU and the saving; every disk
 * the policy matches but can't move, with a reason code and a sentence;
 * totals per VM, resource group, subscription and fleet.
 *
 * `tierwise savings --db F --policy FILE --month M` and GET
 * /api/v1/savings/opportunities?policy=&month= both run this, so they
 * answer the same figures (and the same JSON: tw_svc_opp_json).
 *
 * The month is [its first day 00:00, the next month's first day 00:00) in
 * the policy's timezone (UTC by default): "2026-12" in Europe/London is
 * 2026-12-01T00:00:00Z to 2027-01-01T00:00:00Z, in America/New_York
 * 05:00Z to 05:00Z.
 *
 * Prices are the store's books (tw_store_pricebook_get_at as of the
 * month's start when one was fetched by then, else the latest), never the
 * bundled snapshot; one currency for the whole run (OPTS->currency, else
 * the only currency the store's books have; several: an error listing
 * them).  A disk in a region without a book in that currency is listed
 * with the reason "no_price" naming the region and counted in
 * disks_without_price, never priced as zero.
 *
 * Memory: the store hands the fleet over VM by VM (tw_store_savings_open);
 * what is kept is the totals per resource group and subscription, one
 * price book per region, the zones loaded, and bounded caches of what
 * disks alike share (a schedule tag's windows and instants, a learned
 * schedule's instants, a disk's saving by its windows and prices when no
 * earlier SKU change or transaction enters), which change no figure.
 */
#ifndef TW_SERVICE_OPPORTUNITIES_H
#define TW_SERVICE_OPPORTUNITIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/money.h"
#include "core/observed.h"
#include "core/policy.h"
#include "core/reservation.h"
#include "core/savings.h"
#include "core/tier.h"
#include "core/tz.h"
#include "core/vmcap.h"
#include "core/window.h"
#include "service/vmsizes.h"
#include "store/store.h"

/* Why a disk the policy matches is not moved. */
enum tw_opp_reason {
    TW_OPP_COVERED = 0,       /* not excluded */
    TW_OPP_EXCLUDED_BY_POLICY, /* "exclude": a VM, resource group or tag */
    TW_OPP_OS_DISK,           /* an OS disk, the policy's os_disks false */
    TW_OPP_NO_SWITCH,         /* the policy's target is "none" */
    TW_OPP_RESERVATION,       /* covered by a reservation: paid anyway */
    TW_OPP_PROVISIONED,       /* Premium SSD v2 or Ultra: no direct way back */
    TW_OPP_UNKNOWN_SKU,       /* a SKU tierwise does not know */
    TW_OPP_SHARED,            /* max_shares > 1 */
    TW_OPP_BURSTING,          /* on-demand bursting enabled */
    TW_OPP_HIBERNATED,        /* the VM was hibernated */
    TW_OPP_NO_PREMIUM_VM,     /* the VM's size can't attach Premium storage */
    TW_OPP_NO_PRICE,          /* no price book for the region (or no price in it) */
    TW_OPP_OS_DISK_TO_HDD,    /* an OS disk whose only target is Standard HDD */
    TW_OPP_NO_TARGET,         /* no target SKU holds the disk */
    TW_OPP_ALREADY_TARGET,    /* already on the target, or the target is not cheaper */
    TW_OPP_NO_WINDOW,         /* no window: the tag is missing or does not parse, nothing recurs */
    TW_OPP_REASON_COUNT
};

/* "excluded_by_policy", "os_disk", ... (README lists them all). */
const char *tw_opp_reason_name(enum tw_opp_reason r);

/* Loads zone NAME (an IANA name) into *OUT (free with tw_tz_free): the
 * executables pass app's tw_tz_load. */
typedef enum tw_err (*tw_opp_zone_fn)(void *arg, const char *name, struct tw_tz **out,
                                      struct tw_error *err);

struct tw_opp_opts {
    const struct tw_policy *policy;
    int year, month;                 /* the month, 1..12 */
    const char *currency;            /* NULL or "": the store's only currency */
    const struct tw_reservations *reservations; /* added to the policy's; NULL: none */
    const struct tw_tier_catalog *cat;
    const struct tw_vmcap_table *caps;   /* the bundled VM sizes (Premium support); NULL none */
    struct tw_svc_vmsizes *arm_sizes;    /* ARM's, NULL: none */
    tw_opp_zone_fn zone;
    void *zone_arg;
    /* The planner's: with YEAR 0 the period is [FROM_NS, TO_NS) instead of
     * a month (result.month is then ""). */
    int64_t from_ns, to_ns;
    /* Hand each covered disk's windows, as planned, to the sink
     * (tw_opp_disk.wins); false: the sink gets none (savings needs only
     * the sums). */
    bool with_windows;
};

/* A VM as the result names it. */
struct tw_opp_vm {
    int64_t id;
    const char *name, *resource_group, *subscription_id, *location, *vm_size;
};

#define TW_OPP_CAVEATS_MAX 4

/* The longest windows text: TW_WINDOWS_MAX windows of 19 bytes ("Sat
 * 00:00-Mon 00:00") with ", " between them and the NUL, so any windows a
 * policy, a tag or the history give are always written in the grammar. */
#define TW_OPP_WINDOWS_TEXT_MAX (TW_WINDOWS_MAX * 21 + 1)

/* One disk the policy matches. */
struct tw_opp_disk {
    int64_t id;
    const char *name;
    enum tw_disk_role role;
    const char *sku;                 /* the SKU it has now */
    const char *original_sku;        /* NULL: none recorded; else tierwise downgraded it
                                      * from this SKU (the store's disk_originals), and it
                                      * is matched, priced and planned by it (with the
                                      * tier its size gives; the upgrade goes back to it) */
    char tier[16];                   /* billed tier ("P10", the original's when one is
                                      * recorded); "" unknown */
    int64_t size_gib;
    enum tw_opp_reason reason;       /* TW_OPP_COVERED: moved */
    char why[512];                   /* excluded: one sentence */
    /* covered: */
    struct tw_target target;
    const char *windows_source;      /* "list", "tag:NAME", "observed" */
    char windows[TW_OPP_WINDOWS_TEXT_MAX]; /* the weekly windows in the grammar */
    char windows_tz[TW_TZ_NAME_MAX];
    struct tw_disk_saving saving;    /* hours (downgraded_ns), saving, windows taken */
    /* with_windows: every window planned (taken, skipped, outside the
     * period), by time, from the first still open at the period's start;
     * valid during the sink's call only.  NULL and 0 otherwise. */
    const struct tw_window_saving *wins;
    size_t n_wins;
    bool wins_kept;                  /* WINS is the run's memo: until the run ends, the
                                      * same address holds the same windows (disks alike
                                      * share it) */
    const void *windows_key;         /* non-NULL: the instants WINS were planned from are
                                      * the run's own (the list's, a schedule's, learned
                                      * ones it keeps): until the run ends, disks with the
                                      * same key and N_WINS have windows that open, close
                                      * and switch at the same instants (what each takes
                                      * may differ) */
    size_t n_caveats;
    char caveats[TW_OPP_CAVEATS_MAX][330];
};

/* Time summed over many disks, in nanoseconds: 128 bits, since int64_t
 * holds only 2.56 million hours and 100,000 disks downgraded for a month
 * are some 70 million (tw_opp_hours_text writes it). */
__extension__ typedef __int128 tw_opp_ns;

/* Sums of a VM, resource group, subscription or the fleet. */
struct tw_opp_total {
    int64_t vms;                     /* VMs with a disk the policy matches */
    int64_t disks;                   /* disks covered (moved) */
    int64_t excluded;                /* disks matched and excluded (no_price included) */
    int64_t no_price;                /* disks without a price */
    tw_opp_ns downgraded_ns;         /* the covered disks' hours on the cheaper SKU */
    struct tw_amount saving;         /* exact */
};

/* NS as hours, a decimal with up to 6 decimals rounded half away from
 * zero ("192", "0.5", "2976000"), as tw_hours_decimal writes an int64_t;
 * false when CAP is too small (48 bytes always suffice). */
bool tw_opp_hours_text(tw_opp_ns ns, char *buf, size_t cap);

struct tw_opp_group {
    char subscription_id[64];
    char resource_group[128];        /* "" for a subscription's total */
    struct tw_opp_total t;
};

/* What the store's books gave: one per region priced. */
struct tw_opp_book {
    char region[48];
    char source[256];
    char fetched_at[40];
    bool missing;                    /* no book in the currency: DISKS disks unpriced */
    char why[320];
    int64_t disks;                   /* disks of the region that needed its prices (not
                                      * those left alone before: os_disk_to_hdd,
                                      * already_on_target by family, ...) */
};

/* What stopped a run that returned an error, so that the command and the
 * route say it rightly (tw_opp_result.fail; TW_OPP_FAIL_NONE when the run
 * went through). */
enum tw_opp_fail {
    TW_OPP_FAIL_NONE = 0,
    TW_OPP_FAIL_NO_BOOK,             /* the store has no price book at all (TW_ENOENT) */
    TW_OPP_FAIL_CURRENCY,            /* a currency to choose, or not a currency code */
    TW_OPP_FAIL_POLICY_ZONE,         /* the policy's timezone does not load (timezone names it) */
    TW_OPP_FAIL_OTHER                /* bad options, the store, memory, writing */
};

struct tw_opp_result {
    char policy[TW_POLICY_NAME_MAX];
    char month[8];                   /* "2026-12" */
    char currency[4];
    char timezone[TW_TZ_NAME_MAX];
    int64_t from_ns, to_ns;          /* the month in the policy's zone */
    size_t n_rgs, n_subs, n_books;
    struct tw_opp_group *rgs;        /* by subscription, resource group (case-insensitive) */
    struct tw_opp_group *subs;       /* by subscription */
    struct tw_opp_book *books;       /* by region */
    struct tw_opp_total fleet;
    enum tw_opp_fail fail;           /* why the run stopped, when it returned an error */
};

/* Receives the disks as they are judged (VM by VM, in VM id order) and
 * each VM's total after its disks.  An error returned stops the run. */
struct tw_opp_sink {
    enum tw_err (*disk)(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *d);
    enum tw_err (*vm_total)(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_total *t);
    void *arg;
};

/* "YYYY-MM" (LEN bytes) into *YEAR and *MONTH; TW_EPARSE saying what is
 * expected, TW_ERANGE for a year outside 1970..2199. */
enum tw_err tw_opp_month_parse(const char *buf, size_t len, int *year, int *month,
                               struct tw_error *err);

/* The currency the run will use: WANT (upper-cased, checked) or the only
 * one the store's books have.  TW_ENOENT when the store has no price book
 * at all, WANT given or not (say to import or refresh one); TW_EINVAL for
 * a WANT that is not three letters, or listing the currencies when there
 * are several and WANT is NULL. */
enum tw_err tw_opp_currency(struct tw_store *st, const char *want, char out[4],
                            struct tw_error *err);

/*
 * Runs the policy over the fleet for the month: every disk the policy
 * matches to SINK (NULL: totals only), and the totals, books and header
 * into *OUT (free with tw_opp_result_cleanup, also on an error).  TW_EINVAL
 * for bad options, TW_ENOENT / TW_EINVAL from the currency's choice, the
 * policy's zone's error when it does not load, the store's errors; OUT's
 * fail says which (enum tw_opp_fail).  Disks without a price are no error
 * here: they are in OUT (fleet.no_price, books[].missing).  Nor is a VM's
 * own data: windows that can't be learned from its history (more than
 * TW_WINDOWS_MAX a week, say) or read from its tag make its disks
 * no_window, naming the VM and why.
 */
enum tw_err tw_opp_run(struct tw_store *st, const struct tw_opp_opts *o,
                       const struct tw_opp_sink *sink, struct tw_opp_result *out,
                       struct tw_error *err);

/*
 * N runs (OPTS[i], SINKS[i] (SINKS NULL: totals only), OUTS[i], ERRS[i])
 * over ONE walk of the store: each is set up as tw_opp_run sets it up, the
 * walk reads the union of their spans, and each VM is handed to each run
 * with the power states and SKU changes its own walk would have read, so
 * every run's figures and sink calls are those of its own tw_opp_run.  A
 * run that fails (setup, its sink, memory) stops alone (OUTS[i].fail,
 * ERRS[i]); the store's error stops all.  Returns TW_OK when every run
 * went through, else the first failed run's error; run i failed when
 * OUTS[i].fail is not TW_OPP_FAIL_NONE (ERRS[i] says why, unless its sink
 * gave a code alone: ERRS[i].code is then TW_OK).  Free every OUTS[i]
 * with tw_opp_result_cleanup.  tw_opp_run is this with N 1.
 */
enum tw_err tw_opp_run_many(struct tw_store *st, const struct tw_opp_opts *opts, size_t n,
                            const struct tw_opp_sink *sinks, struct tw_opp_result *outs,
                            struct tw_error *errs);

void tw_opp_result_cleanup(struct tw_opp_result *r);

/* A VM's N stored power states SP (by time, the state in force at FROM_NS
 * first, as the store hands them over) as observations from FROM_NS on,
 * into OUT (room for N); returns how many.  The state in force at FROM_NS,
 * however long before it was observed (a report may say 1653), is placed
 * at FROM_NS; an instant past what int64_t nanoseconds hold is skipped,
 * never wrapped.  The savings run and policy show both read them so. */
size_t tw_opp_power_obs(const struct tw_store_sv_power *sp, size_t n, int64_t from_ns,
                        struct tw_power_obs *out);

/* The regions of RES's books that were missing, as the command and the
 * route say them: "westeurope (2 disks), eastus (1 disk)", in the books'
 * order, into BUF (CAP bytes, NUL-terminated, cut at CAP like snprintf;
 * "" when none is missing).  Returns how many regions are missing. */
size_t tw_opp_missing_regions(const struct tw_opp_result *res, char *buf, size_t cap);

/* ---- the JSON document (CLI --json, the REST route) ---- */

typedef enum tw_err (*tw_opp_write_fn)(void *arg, const char *buf, size_t len);

/*
 * Runs tw_opp_run and writes its JSON document through WRITE as it goes
 * (the covered disks streamed; the excluded ones and the VMs' totals held
 * as text until the end).  Amounts are decimal strings: "saving" rounded
 * once to the currency's minor unit, "saving_unrounded" with 12 decimals;
 * hours a decimal string with up to 6 decimals.  *RES (may be NULL) gets
 * the result (free it with tw_opp_result_cleanup).
 */
enum tw_err tw_opp_json(struct tw_store *st, const struct tw_opp_opts *o, tw_opp_write_fn write,
                        void *arg, struct tw_opp_result *res, struct tw_error *err);

#endif
