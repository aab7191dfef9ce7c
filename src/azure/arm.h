/*
 * arm.h - Azure Resource Manager for the tier switches: disks (list, GET,
 * PATCH sku.name), VMs (list, GET with the instance view, instance view,
 * deallocate, start), their long-running operations, credentials and the
 * pacing that keeps tierwise below ARM's limits.
 *
 * Three objects, each with its own job:
 *
 *  - struct tw_arm_cred: where the bearer token comes from (a managed
 *    identity through IMDS, client credentials against the Entra ID login
 *    endpoint, or a fixed token) and the one token cached until shortly
 *    before it expires.  Thread-safe.  The token and the secret are never
 *    written to a message or a log.
 *  - struct tw_arm_pacer: per-region token buckets (reads and writes a
 *    second, below ARM's limits), the per-VM budget of start/deallocate
 *    calls (4 in any 62 s) and per-region holds set by a 429's
 *    Retry-After.  Thread-safe: the executor's VM threads share one.
 *  - struct tw_arm: one HTTP client (azure/http.h) with the base URL, the
 *    api-versions, a credential and a pacer.  Not thread-safe: one per
 *    thread.
 *
 * Every parser of an ARM answer takes a buffer and a length and has a fuzz
 * target.  Resource ids are compared case-insensitively (ARM's are).
 */
#ifndef TW_AZURE_ARM_H
#define TW_AZURE_ARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/http.h"
#include "core/err.h"
#include "core/inventory.h"

#define TW_ARM_DISK_API "2024-03-02"    /* Microsoft.Compute/disks (DiskRP) */
#define TW_ARM_COMPUTE_API "2024-07-01" /* Microsoft.Compute/virtualMachines */
#define TW_ARM_ID_MAX 512               /* a resource id, NUL included */
#define TW_ARM_URL_MAX 4096             /* an operation URL (ARM allows 4 KB) */

/* ---- credentials ------------------------------------------------------ */

enum tw_arm_cred_kind {
    TW_ARM_CRED_MANAGED_IDENTITY, /* IMDS /metadata/identity/oauth2/token (the default) */
    TW_ARM_CRED_CLIENT_SECRET,    /* POST {login}/{tenant}/oauth2/v2.0/token, client_credentials */
    TW_ARM_CRED_BEARER            /* a fixed token given by the caller (tests, scripts) */
};

struct tw_arm_cred_opts {
    enum tw_arm_cred_kind kind;
    const char *imds_url;      /* base URL, managed identity */
    const char *login_url;     /* base URL, client credentials */
    const char *tenant_id, *client_id, *client_secret;
    const char *bearer;        /* TW_ARM_CRED_BEARER */
    long refresh_before_s;     /* renew this long before expiry; 0: 300 */
};

/*
 * Fills O from the environment the usual way: AZURE_TENANT_ID,
 * AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or the first line of
 * SECRET_FILE, NULL: none, read into SECRET_BUF of CAP bytes) give client
 * credentials; none of them set gives the managed identity.  Some set and
 * not others is TW_EINVAL naming what is missing.  URLs are left to the
 * caller (azure/endpoints.h).
 */
enum tw_err tw_arm_cred_from_env(struct tw_arm_cred_opts *o, const char *secret_file,
                                 char *secret_buf, size_t cap, struct tw_error *err);

struct tw_arm_cred;
/* A credential (O's strings copied); HTTP with H (NULL: the defaults). */
enum tw_err tw_arm_cred_new(const struct tw_arm_cred_opts *o, const struct tw_az_http_opts *h,
                            struct tw_arm_cred **out, struct tw_error *err);
void tw_arm_cred_free(struct tw_arm_cred *c); /* NULL allowed; the secret is wiped */
/* The token for https://management.azure.com/ into OUT (CAP bytes): the
 * cached one while it has more than min(refresh_before_s, half its
 * lifetime) to live, else a new one (so even a short-lived token is
 * reused).  TW_EPERM for refused credentials, any 4xx of the login (the
 * login's parsed error and description or IMDS's own text, never the
 * secret, raw or form-encoded, nor the login answer's raw body), TW_EIO
 * when the endpoint can't be reached or answers 5xx. */
enum tw_err tw_arm_cred_token(struct tw_arm_cred *c, char *out, size_t cap,
                              struct tw_error *err);
/* How many tokens were fetched (tests: one per lifetime, not per call). */
long tw_arm_cred_fetches(const struct tw_arm_cred *c);

/* An Entra ID token answer ({"token_type","expires_in","access_token"} or
 * {"error","error_description",...}); *EXPIRES_IN seconds.  Fuzzed. */
enum tw_err tw_arm_login_parse(const char *buf, size_t len, char *token, size_t cap,
                               int64_t *expires_in, struct tw_error *err);

/* ---- pacing ----------------------------------------------------------- */

struct tw_arm_pace_opts {
    bool off;                  /* no pacing at all (the benchmark's reference) */
    /* The defaults keep headroom below ARM's 25 reads/s, 10 writes/s and 4
     * start/deallocate per VM a minute: 20, 8, and 4 in any 62 s. */
    double reads_per_s;        /* per region; 0: 20 */
    double writes_per_s;       /* per region; 0: 8 */
    double burst;              /* bucket depth in seconds of rate; 0: 1 */
    int vm_actions_per_min;    /* start/deallocate per VM in any 62 s; 0: 4 */
    /* The pacer's clock in ms, an interval clock (NULL: CLOCK_MONOTONIC).
     * Tests inject one that their injected sleep advances. */
    int64_t (*now_ms)(void *arg);
    void *now_arg;
};

struct tw_arm_pacer;
enum tw_err tw_arm_pacer_new(const struct tw_arm_pace_opts *o, struct tw_arm_pacer **out,
                             struct tw_error *err);
void tw_arm_pacer_free(struct tw_arm_pacer *p); /* NULL allowed */
/* How long (ms) the pacer made callers wait in all, for figures. */
int64_t tw_arm_pacer_waited_ms(const struct tw_arm_pacer *p);
/* How many tokens were taken in all (reads, writes, VM actions), for
 * figures and tests. */
int64_t tw_arm_pacer_taken(const struct tw_arm_pacer *p);
/* The wait (ms, 0: none) before one more request of REGION ("" or NULL:
 * a region the caller can't tell, which takes a token of every region's
 * bucket), WRITE or a read, may go, its token taken now; VM_ID
 * non-NULL also takes one of that VM's start/deallocate budget.  The
 * caller sleeps the wait (tw_arm does, through its http.sleep_ms) and the
 * pacer counts it in tw_arm_pacer_waited_ms.  0 when the pacer is off. */
long tw_arm_pacer_take(struct tw_arm_pacer *p, const char *region, bool write, const char *vm_id);
/* The pacer's clock now (ms), the clock tw_arm_pacer_hold's UNTIL_MS is on. */
int64_t tw_arm_pacer_now_ms(const struct tw_arm_pacer *p);
/* Puts REGION ("" or NULL: unknown, so every region) on hold until UNTIL_MS on the
 * pacer's clock: every later take of it, by any thread, waits at least
 * until then, and the ones queued behind go one interval apart after it.
 * tw_arm calls it with each 429's Retry-After.  A hold never shortens one
 * already set; nothing when the pacer is off or P is NULL. */
void tw_arm_pacer_hold(struct tw_arm_pacer *p, const char *region, int64_t until_ms);
/* How many holds were set (tests, figures). */
int64_t tw_arm_pacer_holds(const struct tw_arm_pacer *p);

/* ---- resources -------------------------------------------------------- */

/* A managed disk as ARM shows it. */
struct tw_arm_disk {
    char id[TW_ARM_ID_MAX];
    char name[128];
    char subscription_id[64];
    char resource_group[128];
    char location[64];
    char sku[32];                  /* sku.name */
    char tier[16];                 /* properties.tier ("P10"); "" none */
    int64_t size_gib;              /* properties.diskSizeGB */
    int64_t iops, mbps;            /* diskIOPSReadWrite, diskMBpsReadWrite; 0 absent */
    char managed_by[TW_ARM_ID_MAX];/* the VM's id; "" unattached */
    char disk_state[32];           /* "Attached", "Reserved", "Unattached", "Frozen", ... */
    char provisioning_state[32];   /* "Succeeded", "Updating", ... */
    bool update_in_progress;       /* propertyUpdatesInProgress present */
    char target_tier[16];          /* propertyUpdatesInProgress.targetTier; "" none */
    int64_t max_shares;            /* maxShares; 0 absent */
    int bursting;                  /* burstingEnabled: -1 absent, 0, 1 */
    char last_ownership_update[40];/* LastOwnershipUpdateTime, RFC 3339; "" absent */
    size_t n_tags;
    struct tw_tag tags[TW_INV_MAX_TAGS];
};

/* A VM: its fields as the inventory names them, its disks' ids and its
 * power state from the instance view ("" when the answer had none). */
struct tw_arm_vm {
    struct tw_vm vm;               /* name, resource_id, subscription, group, location, size, tags */
    char power_state[32];          /* "running", "deallocated", ... (PowerState/ stripped) */
    char provisioning_state[32];
    char os_disk_id[TW_ARM_ID_MAX];
    char os_disk_name[128];
    char os_disk_caching[16];      /* "None", "ReadOnly", "ReadWrite"; "" absent */
    bool hibernated;               /* instance view status HibernationState/Hibernated */
    size_t n_data;
    struct {
        char id[TW_ARM_ID_MAX];
        char name[128];
        char caching[16];          /* as os_disk_caching */
        int lun;
    } data[64];
};

/* One page of a list: its items' JSON array stays in the answer; NEXT the
 * nextLink ("" on the last page). */
enum tw_err tw_arm_disk_parse(const char *buf, size_t len, struct tw_arm_disk *d,
                              struct tw_error *err);
enum tw_err tw_arm_vm_parse(const char *buf, size_t len, struct tw_arm_vm *vm,
                            struct tw_error *err);
/* An instance view alone ({"statuses": [...]}): the PowerState/ code
 * ("" when it has none). */
enum tw_err tw_arm_instance_view_parse(const char *buf, size_t len, char *power, size_t cap,
                                       struct tw_error *err);
/* The same with the other statuses: *HIBERNATED (may be NULL) for
 * HibernationState/Hibernated, PROV (may be NULL) the ProvisioningState/
 * code. */
enum tw_err tw_arm_instance_view_parse2(const char *buf, size_t len, char *power, size_t cap,
                                        bool *hibernated, char *prov, size_t prov_cap,
                                        struct tw_error *err);
/* A disks list page: each item to FN (an error from FN stops), NEXT gets
 * nextLink or "".  Items that don't parse are an error naming the index. */
enum tw_err tw_arm_disk_page_parse(const char *buf, size_t len,
                                   enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                                   void *arg, char *next, size_t next_cap,
                                   struct tw_error *err);
enum tw_err tw_arm_vm_page_parse(const char *buf, size_t len,
                                 enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm),
                                 void *arg, char *next, size_t next_cap,
                                 struct tw_error *err);

/* What an error answer means to the executor. */
enum tw_arm_fault {
    TW_ARM_FAULT_NONE = 0,
    TW_ARM_FAULT_THROTTLED,        /* 429, or OperationNotAllowed with TooManyRequests */
    TW_ARM_FAULT_BUSY,             /* "being used by another operation", RetryableError...: retry later */
    TW_ARM_FAULT_CONFLICT,         /* Conflict: the resource's state forbids it (e.g. VM running) */
    TW_ARM_FAULT_NOT_ALLOWED,      /* OperationNotAllowed otherwise (quota of type changes, ...) */
    TW_ARM_FAULT_TYPE_REFUSED,     /* the type change itself is refused (InvalidParameter on sku, ...) */
    TW_ARM_FAULT_NOT_FOUND,
    TW_ARM_FAULT_AUTH,             /* 401/403 */
    TW_ARM_FAULT_SERVER,           /* 5xx left after retries */
    TW_ARM_FAULT_NETWORK,          /* no answer */
    TW_ARM_FAULT_OTHER
};
const char *tw_arm_fault_name(enum tw_arm_fault f); /* "throttled", "busy", ... */

/* ARM's error body ({"error": {"code","message","target","details"}});
 * CODE and MESSAGE may be "" when the body is not one.  Fuzzed. */
struct tw_arm_error {
    long status;
    char code[64];
    char message[512];
    char detail_code[64];          /* details[0].code */
    enum tw_arm_fault fault;
};
void tw_arm_error_classify(long status, const char *buf, size_t len, struct tw_arm_error *out);

/* A long-running operation: where to poll and how long to wait. */
struct tw_arm_op {
    char url[TW_ARM_URL_MAX];      /* Azure-AsyncOperation, else Location; "" done at once */
    bool async_operation;          /* URL is an Azure-AsyncOperation (status body) */
    long retry_after_ms;           /* from Retry-After (seconds or an HTTP date); 0 none */
};
/* The Azure-AsyncOperation body: "InProgress", "Succeeded", "Failed",
 * "Canceled" (other values: still running), with the error when failed. */
enum tw_err tw_arm_op_status_parse(const char *buf, size_t len, char *status, size_t cap,
                                   struct tw_arm_error *fail, struct tw_error *err);
/* Retry-After as seconds or an HTTP date (RFC 9110), against NOW_S (the
 * system clock's seconds); ms into *OUT, false when it is neither. */
bool tw_arm_retry_after_parse(const char *value, int64_t now_s, long *out);

/* ---- the client ------------------------------------------------------- */

struct tw_arm_opts {
    const char *arm_url;           /* base URL (azure/endpoints.h) */
    /* The pacer's bucket of a call whose region the client can't tell
     * (NULL: ""): each call's bucket is the region segment of its URL
     * (.../locations/{region}/...), else the location of the resource as
     * this client last read it (a GET or a list), else this; a list of a
     * subscription or group is "". */
    const char *region;
    struct tw_az_http_opts http;   /* tw_az_http_opts_default's, usually */
    const char *disk_api;          /* NULL: TW_ARM_DISK_API */
    const char *compute_api;       /* NULL: TW_ARM_COMPUTE_API */
    long poll_ms;                  /* between operation polls when no Retry-After; 0: 2000 */
    long op_timeout_ms;            /* one operation at most; 0: 10 min */
};

struct tw_arm;
/* CRED and PACER (NULL: no pacing) are borrowed: they outlive the client. */
enum tw_err tw_arm_new(const struct tw_arm_opts *o, struct tw_arm_cred *cred,
                       struct tw_arm_pacer *pacer, struct tw_arm **out, struct tw_error *err);
void tw_arm_free(struct tw_arm *a); /* NULL allowed */

/* The last call's error as ARM said it (status, code, fault). */
const struct tw_arm_error *tw_arm_last_error(const struct tw_arm *a);

/* Every disk of SUB (RG NULL: the subscription's; else the group's),
 * following nextLink, to FN. */
enum tw_err tw_arm_disks_list(struct tw_arm *a, const char *sub, const char *rg,
                              enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                              void *arg, struct tw_error *err);
/* Every VM of SUB (RG as above), each with its power state
 * ($expand=instanceView per VM when the list lacks it), to FN. */
enum tw_err tw_arm_vms_list(struct tw_arm *a, const char *sub, const char *rg,
                            enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm),
                            void *arg, struct tw_error *err);
/* One disk / VM by resource id. TW_ENOENT when ARM says 404. */
enum tw_err tw_arm_disk_get(struct tw_arm *a, const char *disk_id, struct tw_arm_disk *d,
                            struct tw_error *err);
enum tw_err tw_arm_vm_get(struct tw_arm *a, const char *vm_id, struct tw_arm_vm *vm,
                          struct tw_error *err);
enum tw_err tw_arm_vm_power(struct tw_arm *a, const char *vm_id, char *power, size_t cap,
                            struct tw_error *err);
/* The same, with *HIBERNATED (may be NULL) from HibernationState/Hibernated. */
enum tw_err tw_arm_vm_instance_view(struct tw_arm *a, const char *vm_id, char *power, size_t cap,
                                    bool *hibernated, struct tw_error *err);

/* PATCH {"sku":{"name":SKU}} on DISK_ID: *OP where to poll (OP->url ""
 * when ARM answered 200 at once).  The fault of a refusal is in
 * tw_arm_last_error. */
enum tw_err tw_arm_disk_set_sku(struct tw_arm *a, const char *disk_id, const char *sku,
                                struct tw_arm_op *op, struct tw_error *err);
/* POST .../deallocate or .../start (paced per VM). */
enum tw_err tw_arm_vm_deallocate(struct tw_arm *a, const char *vm_id, struct tw_arm_op *op,
                                 struct tw_error *err);
enum tw_err tw_arm_vm_start(struct tw_arm *a, const char *vm_id, struct tw_arm_op *op,
                            struct tw_error *err);
/* One poll of OP: *DONE true when the operation ended; TW_OK with *DONE
 * for success, an error (and tw_arm_last_error) for Failed/Canceled.
 * OP->retry_after_ms is updated from the answer. */
enum tw_err tw_arm_op_poll(struct tw_arm *a, struct tw_arm_op *op, bool *done,
                           struct tw_error *err);
/* Polls until done (sleeping Retry-After, else poll_ms; at most
 * op_timeout_ms: TW_ETIMEDOUT-like TW_EIO naming the URL). */
enum tw_err tw_arm_op_wait(struct tw_arm *a, struct tw_arm_op *op, struct tw_error *err);
/*
 * Whether the disk reads back switched: SKU is SKU, provisioningState
 * Succeeded and no propertyUpdatesInProgress (*OK; D, may be NULL, gets
 * the disk as read).  The one test of "done" the executor trusts.
 */
enum tw_err tw_arm_disk_verify(struct tw_arm *a, const char *disk_id, const char *sku, bool *ok,
                               struct tw_arm_disk *d, struct tw_error *err);

/* Splits a resource id "/subscriptions/S/resourceGroups/G/providers/
 * Microsoft.Compute/{disks|virtualMachines}/N" into its parts (any case);
 * false when it is not one. */
bool tw_arm_id_split(const char *id, char *sub, size_t sub_cap, char *rg, size_t rg_cap,
                     char *name, size_t name_cap);
/* Whether two resource ids name one resource (case-insensitive). */
bool tw_arm_id_equal(const char *a, const char *b);
/* Whether LINK (a nextLink, an operation URL) is on BASE's origin: scheme,
 * host (any case) and port the same, a default port written or not
 * ("https://management.azure.com:443/..." is ARM's own), no user name.
 * Only such links are followed with the token. */
bool tw_arm_url_same_origin(const char *link, const char *base);

#endif
