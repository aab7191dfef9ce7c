/*
 * sim_int.h - what the simulator's files share and nothing else sees: the
 * simulator's state, the request and response records handlers work on,
 * the handlers themselves, and response helpers.
 *
 * Concurrency: libmicrohttpd runs each connection in its own thread; every
 * handler runs with sim->lock held (handlers are short and never block), so
 * the state needs no finer locking.  Latency faults sleep outside the lock.
 */
#ifndef TW_SIM_INT_H
#define TW_SIM_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "sim/sim.h"
#include "sim/sim_scenario.h"

#define SIM_MAX_BODY (1u << 20) /* request body ceiling (bytes); 413 beyond */
#define SIM_MAX_HEADERS 8       /* response headers a handler may add */
#define SIM_MAX_PARAMS 4        /* {placeholders} in one route */
#define SIM_LOG_SIZE 256        /* requests kept for GET /_sim/requests */
#define SIM_MAX_TOKENS 4096     /* issued tokens remembered (oldest forgotten) */
#define SIM_MAX_OPS 65536       /* long-running operations kept */

/* The surfaces, told apart by path; each has its own error body shape. */
enum sim_surface { SIM_IMDS, SIM_ARM, SIM_PRICES, SIM_LOGIN, SIM_ADMIN };

struct sim_header {
    char name[48];
    char value[1024]; /* async-operation URLs (ARM allows 4 KB; ours are short) */
};

struct sim_resp {
    unsigned status;
    char *body; /* malloc'd, may be NULL for an empty body */
    size_t len;
    size_t n_headers;
    struct sim_header headers[SIM_MAX_HEADERS];
};

struct sim_req {
    struct MHD_Connection *conn;
    const char *method;
    const char *path; /* without the query */
    const char *body; /* NUL-terminated request body ("" when none) */
    size_t body_len;
    size_t n_params;
    char params[SIM_MAX_PARAMS][128]; /* the route's {placeholders}, in order */
    bool no_next_link;                /* a no-next-link fault fired for this request */
    bool fail_op;                     /* a fail-operation fault fired for this request */
};

struct tw_sim;
typedef void (*sim_handler)(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);

enum sim_op_kind { SIM_OP_DISK_UPDATE, SIM_OP_VM_START, SIM_OP_VM_DEALLOCATE, SIM_OP_VM_POWEROFF };

/* A long-running operation: InProgress until end_ms, then applied once. */
struct sim_op {
    char id[37]; /* also the x-ms-request-id of the request that made it */
    enum sim_op_kind kind;
    long target;  /* disk or VM index */
    char sku[24]; /* DISK_UPDATE: the disk afterwards */
    char tier[8];
    int64_t size_gib;
    enum tw_sim_power power;  /* VM operations: the state afterwards */
    int64_t start_ms, end_ms; /* sim clock */
    bool done;
    bool hibernate;           /* VM_DEALLOCATE with hibernate=true */
    bool fail;                /* ends Failed, nothing applied (a fail-operation fault) */
    enum tw_sim_power before; /* VM operations: the state it returns to when it fails */
    char subscription_id[64]; /* for the operation URL */
    char location[64];
};

struct sim_disk_rt {
    long op;       /* pending operation, -1 when none */
    int n_changes; /* SKU changes recorded in changes_ms (a ring) */
    int64_t changes_ms[TW_SIM_MAX_DAILY_CHANGES];
    char unique_id[37]; /* properties.uniqueId */
    int64_t owner_ms;   /* LastOwnershipUpdateTime (sim clock); 0: never changed */
    long patches;       /* PATCH requests that reached the disk (counters) */
};

#define SIM_MAX_VM_ACTIONS TW_SIM_MAX_VM_ACTIONS

struct sim_vm_rt {
    long op;      /* pending operation, -1 when none */
    long actions; /* start/deallocate/powerOff requests that reached the VM (counters) */
    int n_recent; /* accepted actions in recent_ms (a ring), for vm_actions_per_min */
    int64_t recent_ms[SIM_MAX_VM_ACTIONS];
};

/* One region's token buckets (settings.arm_limits). */
struct sim_bucket {
    char region[128]; /* as long as a path segment (region_of) */
    double reads, writes; /* tokens left */
    int64_t at_ms;        /* when they were last refilled */
};

struct sim_token {
    char value[640];    /* the bearer token as issued */
    char resource[256]; /* its audience */
    int64_t expires_ms; /* sim clock */
};

struct sim_log {
    char method[8];
    char path[256];
    unsigned status; /* 0: the connection was dropped */
    char fault[16];  /* the fault that shaped the answer, "" if none */
    int64_t at_ms;
};

struct tw_sim {
    struct MHD_Daemon *daemon;
    unsigned port;
    char url[96];         /* http://127.0.0.1:PORT */
    atomic_bool stopping; /* latency faults stop sleeping when set */
    bool log_requests;
    pthread_mutex_t lock;
    struct tw_sim_scenario *sc;  /* owned; its VMs and disks are the ARM state */
    struct sim_disk_rt *disk_rt; /* parallel to sc->disks */
    struct sim_vm_rt *vm_rt;     /* parallel to sc->vms */
    struct sim_op *ops;
    size_t n_ops, cap_ops;
    struct sim_token *tokens; /* ring of SIM_MAX_TOKENS */
    size_t n_tokens, next_token;
    int64_t clock_offset_ms; /* sim clock = real time + this */
    int64_t started_ms;      /* sim clock at start: the disks' timeCreated */
    size_t n_faults;
    struct tw_sim_fault faults[TW_SIM_MAX_FAULTS];
    struct sim_log log[SIM_LOG_SIZE];
    size_t log_next;
    uint64_t log_total;
    struct sim_bucket *buckets; /* one per region seen, with arm_limits */
    size_t n_buckets, cap_buckets;
    uint64_t n_requests;  /* ARM requests (counters) */
    uint64_t n_throttled; /* ARM answers with 429 */
    uint64_t n_conflicts; /* concurrent-write conflicts answered (409 Conflict) */
    uint64_t n_quota;     /* type changes refused by sku_changes_per_day */
};

/* ---- helpers (sim.c) ---- */

/* The sim clock, Unix milliseconds. */
int64_t sim_now_ms(const struct tw_sim *sim);
/* MS as Azure writes times: "2024-02-01T10:00:00.1234567+00:00". */
void sim_iso_time(int64_t ms, char out[40]);
/* A random version-4 UUID. */
void sim_uuid(char out[37]);

/* IN percent-encoded for a URL query value (RFC 3986 unreserved characters
 * kept) into OUT; truncated to OUTLEN. */
void sim_url_encode(const char *in, char *out, size_t outlen);

/* A query parameter (decoded) or a request header; NULL when absent. */
const char *sim_arg(const struct sim_req *rq, const char *key);
const char *sim_hdr(const struct sim_req *rq, const char *name);

/* Sets the answer to BODY as compact JSON (BODY is consumed; NULL means
 * out of memory and gives a 500). */
void sim_json(struct sim_resp *rs, unsigned status, json_t *body);
/* Adds a response header (printf-style value). */
void sim_header(struct sim_resp *rs, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ARM's error envelope {"error":{"code","message"[,"target"]}}; TARGET may
 * be NULL. */
void sim_arm_error(struct sim_resp *rs, unsigned status, const char *code, const char *target,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The surface's own error shape for STATUS with CODE and MESSAGE. */
void sim_surface_error(struct sim_resp *rs, enum sim_surface s, unsigned status, const char *code,
                       const char *message);
enum sim_surface sim_surface_of(const char *path);

/* ---- IMDS (sim_imds.c) ---- */
void sim_imds_instance(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_imds_versions(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
/* IMDS's own request checks (Metadata header, X-Forwarded-For, duplicate
 * parameters); false when RS has been set to the refusal. */
bool sim_imds_check(const struct sim_req *rq, struct sim_resp *rs, bool identity);

/* ---- tokens (sim_token.c) ---- */
void sim_token_msi(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_token_login(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
/* ARM's bearer check; false when RS has been set to the 401. */
bool sim_token_check(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);

/* ---- ARM limits (sim_limits.c) ---- */
/* Takes RQ's tokens from its region's bucket (and its VM's budget of
 * actions) under settings.arm_limits; false when RS has been set to the
 * 429.  Sets the x-ms-ratelimit-remaining-subscription-* header either way. */
bool sim_limits_take(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_counters_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_counters_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
/* The VM of a start/deallocate/powerOff path, -1 when PATH is not one. */
long sim_vm_action_target(const struct tw_sim *sim, const char *path);

/* ---- ARM (sim_arm.c) ---- */
long sim_find_vm(const struct tw_sim *sim, const char *sub, const char *rg, const char *name);
long sim_find_disk(const struct tw_sim *sim, const char *sub, const char *rg, const char *name);
/* ARM's resource id of a VM or disk into OUT. */
void sim_resource_id(const char *sub, const char *rg, const char *type, const char *name, char *out,
                     size_t n);
/* Stamps LastOwnershipUpdateTime on every disk of VM VI (its VM started or
 * was deallocated). */
void sim_vm_owner_changed(struct tw_sim *sim, long vi, int64_t ms);
/* Applies every operation whose time has come. */
void sim_settle(struct tw_sim *sim);
void sim_arm_disk_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_disk_patch(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_disk_list(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_instance_view(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_list(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_start(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_deallocate(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_vm_power_off(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_operation(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_arm_skus(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
/* A disk's ARM resource body (new reference); for /_sim/state too. */
json_t *sim_disk_json(struct tw_sim *sim, size_t di);
const char *sim_disk_state(const struct tw_sim *sim, size_t di);

/* ---- Retail Prices (sim_prices.c) ---- */
void sim_prices(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);

/* ---- admin (sim_admin.c) ---- */
void sim_admin_state(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_clock(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_faults_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_faults_post(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_faults_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_power(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_requests_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);
void sim_admin_requests_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs);

#endif
