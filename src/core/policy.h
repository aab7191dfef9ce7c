/*
 * policy.h - tier-switch policies as files (tierwise.policy/1) and which
 * disks they cover.  Pure: the text comes in as a buffer and a length.
 *
 *   { "schema_version": "tierwise.policy/1", "name": "dev-weekends",
 *     "match": { "tags": {"env": "dev"}, "skus": ["Premium_LRS"],
 *                "resource_groups": [], "subscriptions": [], "vms": [],
 *                "exclude": { "vms": [], "resource_groups": [],
 *                             "tags": {"tierwise": "off"} } },
 *     "target": "StandardSSD_LRS",
 *     "windows": ["Fri 20:00-Mon 06:00"], "timezone": "Europe/London",
 *     "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 },
 *     "min_saving": "0.10", "quota": { "changes": 2, "hours": 24 },
 *     "os_disks": false, "require_original_before_start": true }
 *
 * The full grammar, defaults and meaning of every field are in README
 * "Policies" and policies/policy.schema.json; this parser is the one that
 * decides (the schema is documentation and editor help).
 */
#ifndef TW_CORE_POLICY_H
#define TW_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/inventory.h"
#include "core/money.h"
#include "core/reservation.h"
#include "core/savings.h"
#include "core/window.h"

#define TW_POLICY_SCHEMA "tierwise.policy/1"
#define TW_POLICY_NAME_MAX 65      /* 1..64 of [A-Za-z0-9._-], NUL included */
#define TW_POLICY_FILE_MAX (1024 * 1024)
#define TW_POLICY_TARGETS_MAX 4
#define TW_POLICY_DIAG_MAX 32      /* problems one check reports at most */

/* Where a policy's windows come from. */
enum tw_policy_windows_kind {
    TW_PW_LIST,       /* "windows": ["Fri 20:00-Mon 06:00", ...] in "timezone" */
    TW_PW_TAG,        /* "windows": "tag:NAME": each VM's tag in Custodian's form */
    TW_PW_OBSERVED    /* "windows": "observed": learned from the power-state history */
};

/* A list of names (VMs, resource groups, subscriptions, SKUs). */
struct tw_policy_names {
    size_t n;
    char **v;          /* malloc'd strings */
};

/* Tags that must all be present with these values ("*": any value). */
struct tw_policy_tags {
    size_t n;
    struct tw_tag *v;  /* malloc'd */
};

struct tw_policy_match {
    struct tw_policy_tags tags;
    struct tw_policy_names skus;            /* empty: any SKU */
    struct tw_policy_names resource_groups; /* empty: any; case-insensitive */
    struct tw_policy_names subscriptions;   /* empty: any; case-insensitive */
    struct tw_policy_names vms;             /* empty: any; case-insensitive */
    /* Any one of these excludes (listed with the reason). */
    struct tw_policy_names ex_vms, ex_resource_groups;
    struct tw_policy_tags ex_tags;
};

struct tw_policy {
    char name[TW_POLICY_NAME_MAX];
    char description[256];
    struct tw_policy_match match;
    /* "target": a SKU name, or "cheapest" (of allowed_targets), or "none":
     * the policy never switches (it only states what the disks must be
     * while the VMs run: require_original_before_start). */
    bool switches;                 /* false for "none" */
    bool cheapest;
    size_t n_targets;
    char targets[TW_POLICY_TARGETS_MAX][32];
    enum tw_policy_windows_kind windows_kind;
    struct tw_windows windows;     /* TW_PW_LIST: the union of the list */
    char windows_tag[512];         /* TW_PW_TAG: the tag's name */
    int observed_weeks;            /* TW_PW_OBSERVED: weeks looked back (default 4) */
    int observed_min_weeks;        /* ... a quarter-hour recurs in at least this many (3) */
    char timezone[TW_TZ_NAME_MAX]; /* IANA name; default "UTC" */
    int after_deallocate_minutes;  /* default 10 */
    int before_start_minutes;      /* default 30 */
    struct tw_money min_saving;    /* per window, in the book's currency; default 0 */
    int quota_changes;             /* default 2 */
    int quota_hours;               /* default 24 */
    bool os_disks;                 /* default false: data disks only */
    bool os_disk_to_hdd;           /* default false: an OS disk never goes to Standard HDD */
    bool require_original_before_start; /* default true */
    bool allow_running;            /* default false: only while the VM is deallocated */
    struct tw_io_rate running_io;  /* required with allow_running: "running_io":
                                    * {"iops": N, "io_kib": K} */
    struct tw_reservations reservations; /* "reservations": [...] (core/reservation.h) */
};

/* One problem in a policy file. */
struct tw_policy_diag {
    char path[160];    /* JSON path: "$.margins.before_start_minutes" */
    long line, column; /* 1-based, of the value (or of the object missing a member) */
    char msg[320];     /* what is wrong and what is allowed */
};

struct tw_policy_diags {
    size_t n;          /* problems found (all of them up to TW_POLICY_DIAG_MAX) */
    bool more;         /* there were more than TW_POLICY_DIAG_MAX */
    struct tw_policy_diag d[TW_POLICY_DIAG_MAX];
};

/*
 * Parses LEN bytes at BUF into *OUT (cleaned first; free with
 * tw_policy_cleanup even on failure).  Every problem found goes to DIAGS
 * (may be NULL) with its path, line and column; ERR gets the first one as
 * one sentence ("$.quota.changes (line 9, column 27): must be an integer
 * 1..10").  TW_EPARSE when there is any problem, TW_ENOMEM.  Unknown
 * members are problems (a typo must not silently mean a default).
 */
enum tw_err tw_policy_parse(const char *buf, size_t len, struct tw_policy *out,
                            struct tw_policy_diags *diags, struct tw_error *err);

void tw_policy_cleanup(struct tw_policy *p);

/* A policy's canonical JSON (every field, defaults filled in), a new
 * NUL-terminated string (free()); what GET /api/v1/policies/{name} and
 * `policy show --json` print.  NULL when out of memory. */
char *tw_policy_to_json(const struct tw_policy *p);

/* What a policy is asked about: one disk of one VM. */
struct tw_policy_subject {
    const char *vm_name;
    const char *resource_group;
    const char *subscription_id;
    const struct tw_tag *tags;     /* the VM's tags */
    size_t n_tags;
    const char *sku;               /* the disk's SKU now */
    enum tw_disk_role role;
};

enum tw_policy_cover {
    TW_COVER_NO = 0,    /* the policy does not match the disk */
    TW_COVER_YES,       /* covered */
    TW_COVER_EXCLUDED   /* matched, then excluded by "exclude" or "os_disks" (WHY says which) */
};

/* Whether P covers the disk S; for TW_COVER_EXCLUDED a sentence in WHY
 * ("excluded by exclude.tags tierwise=off"). */
enum tw_policy_cover tw_policy_covers(const struct tw_policy *p,
                                      const struct tw_policy_subject *s, char *why,
                                      size_t why_cap);

/* The top-level members a policy may have, in the order of the canonical
 * JSON (*NAMES, may be NULL), and how many (policies/policy.schema.json
 * lists the same: a test checks it). */
size_t tw_policy_members(const char *const **names);

#endif
