/*
 * server_int.h - what the server's files share: the server's state, the
 * per-request context and the helpers handlers answer with.
 */
#ifndef TW_SERVER_INT_H
#define TW_SERVER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <microhttpd.h>

#include <jansson.h>

#include "core/buf.h"
#include "core/tier.h"
#include "core/vmcap.h"
#include "server/auth.h"
#include "server/ingest.h"
#include "server/metrics.h"
#include "server/operations.h"
#include "server/route.h"
#include "server/server.h"
#include "server/worker.h"
#include "service/exec.h"
#include "service/policies.h"
#include "service/vmsizes.h"
#include "store/store.h"

/* What one request head may be (the gate refuses more, with JSON, before
 * libmicrohttpd sees it); libmicrohttpd's memory per connection holds
 * such a head with room to spare. */
#define TW_SERVER_HEAD_MAX (16u << 10)   /* request line and headers */
#define TW_SERVER_TARGET_MAX (8u << 10)  /* the request target */
#define TW_SERVER_PARAMS_MAX 100         /* query parameters */
#define TW_SERVER_HEADERS_MAX 100        /* header lines */
#define TW_SERVER_CONN_MEMORY (64u << 10)

#define TW_AUTH_CACHE 64          /* tokens remembered ... */
#define TW_AUTH_CACHE_TTL_MS 5000 /* ... for this long (a revocation takes at most this) */

struct auth_entry {
    uint8_t hash[32];
    enum tw_role role;
    int64_t expires_ms; /* 0: empty slot */
};

struct tw_gate;

struct tw_sync_summary; /* service/sync.h: serve --sync's hook */

struct tw_server {
    struct MHD_Daemon **daemons; /* one thread each; the gate hands them connections */
    size_t n_daemons;
    struct tw_gate *gate;
    struct tw_server_limits limits;
    atomic_size_t body_mem; /* bytes of request bodies held (or announced) now */
    /* the store's health (v1_health.c): the last write probe and commit;
     * the probe runs on a thread of its own, /healthz and /metrics read
     * its last outcome */
    pthread_mutex_t health_lock;
    pthread_cond_t health_cond; /* the probe thread's sleep (CLOCK_MONOTONIC) */
    pthread_t health_thread;
    bool health_running, health_stop; /* under health_lock */
    int64_t health_probed_ms; /* 0: never; stamped when a probe ended */
    bool health_ok;
    char health_why[512];
    struct tw_store *health_st; /* the probe thread's own handle; NULL: not open */
    atomic_bool commit_failed; /* the writer's last batch failed */
    unsigned commit_fail_seq;  /* under health_lock: one more at each failed batch */
    atomic_llong commit_ok_ms; /* tw_srv_mono_ms of the writer's last commit that held; 0 none */
    char commit_why[512];      /* under health_lock */
    unsigned port;
    char url[128];
    char db_path[PATH_MAX];
    bool have_web;
    char web_root[PATH_MAX];
    size_t body_max;
    bool log_requests;
    unsigned threads;
    char prices_url[256]; /* for the prices routes; "" when not configured */
    /* the policies of --policies DIR, read at start and read-only after
     * (v1_policies.c; other handlers find one by name with
     * tw_svc_policies_find); n 0 when none */
    struct tw_svc_policies policies;
    /* the executable's zone loader (server.h); NULL: none */
    enum tw_err (*tz_load)(const char *name, struct tw_tz **out, struct tw_error *err);

    const struct tw_route *routes;
    size_t n_routes;
    size_t route_static, route_unmatched; /* metrics rows beyond the table */
    struct tw_metrics *metrics;
    struct tw_ingest *ingest;
    struct tw_worker *worker; /* long operations (a prices refresh); its context is OPS */
    struct tw_ops *ops;       /* the operations table, owned by the worker */

    /* store handles for reads, each used by one thread at a time */
    pthread_mutex_t pool_lock;
    pthread_cond_t pool_cond;
    struct tw_store **pool;
    size_t pool_free, pool_open, pool_max;

    pthread_mutex_t auth_lock;
    struct auth_entry auth[TW_AUTH_CACHE];

    /* /metrics' cached store counts (api.c) */
    pthread_mutex_t stats_lock;
    bool stats_valid;
    uint64_t stats_commits;
    time_t stats_at;
    struct tw_store_stats stats;

    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
    uint64_t basis_fixed;     /* tw_svc_compliance_fixed_hash of CAT and CAPS */
    struct tw_svc_vmsizes *vmsizes; /* ARM's VM sizes (vmsizes_job.c); NULL: not read */
    struct tw_srv_leader *leader; /* which periodic work is this backend's (leader.c) */
    struct tw_srv_drift_gauge *drift; /* the drifting disks for /metrics (drift_job.c); NULL:
                                       * no drift job */

    /* the executor (scheduler_job.c, v1_actions.c): ARM's client settings
     * (cred NULL: no executing runs), the scheduler's own worker, and the
     * flag that stops runs in flight at a stop */
    struct tw_exec_arm_real exec_arm;
    char exec_arm_url[256];
    bool scheduler;
    unsigned scheduler_interval_s;
    char scheduler_currency[4];     /* "" the store's only one */
    struct tw_worker *sched_worker;
    volatile sig_atomic_t exec_stop;
    /* executor runs reading the server now (tw_srv_exec_enter) */
    atomic_int exec_running;
    /* serve --sync (sync_job.c): its counters for /metrics (NULL: no sync
     * job), and a hook run on the worker after each sync that succeeded
     * (NULL: none; set it before tw_srv_sync_start, which copies it). */
    struct tw_srv_sync_counts *sync;
    void (*sync_hook)(void *arg, const struct tw_sync_summary *s);
    void *sync_hook_arg;
    /* Holds (true) or lets go of (false) the hook's argument: the sync
     * job holds it while it keeps the hook (NULL: the argument outlives
     * the jobs).  drift_job.c sets the three. */
    void (*sync_hook_hold)(void *arg, bool hold);

    atomic_bool stopping;
    atomic_long active;             /* requests with a context */
    atomic_uint_fast64_t errors5xx; /* for the log line */
    pthread_mutex_t log_lock;
};

enum req_phase { REQ_NEW, REQ_BODY, REQ_SUSPENDED, REQ_RESUMED, REQ_ANSWERED };

struct tw_req {
    struct tw_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    struct timespec start;
    enum req_phase phase;

    const struct tw_route *route;
    size_t metric_row;
    int64_t id;        /* the {id} of the path */
    char name[TW_ROUTE_NAME_MAX]; /* the {name} of the path, "" when none */
    enum tw_role role; /* when the route needs a token */

    struct tw_buf body;
    bool too_big;
    size_t body_reserved; /* of srv->body_mem, given back at completion */
    bool body_refused;    /* past the bound of bodies in flight: 503 */
    bool stray_body; /* a body came on a route that takes none (dropped) */

    struct tw_ingest_job job; /* POST /reports */

    /* the answer, queued by server.c after the handler returns */
    struct MHD_Response *resp;
    unsigned status;
};

/* ---- the daemon's parts (server.c, authn.c, request.c) ---- */

/* CLOCK_MONOTONIC in milliseconds. */
int64_t tw_srv_mono_ms(void);
/* Checks the request's token against its route's roles; false when an
 * error answer was set (authn.c). */
bool tw_srv_authenticate(struct tw_req *rq);
/* libmicrohttpd's access handler and completion callback (request.c). */
enum MHD_Result tw_srv_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls);
void tw_srv_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe);
/* libmicrohttpd's connection callback: a closed connection leaves the
 * gate's counts (request.c). */
void tw_srv_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);

/* Periodic work on one backend at a time (leader.c): before each run a
 * job asks whether its KIND ("sync", "vmsizes", "drift", "scheduler",
 * "rejudge") is this backend's, through tw_store_work_lock on one handle
 * the leader keeps (reopened when lost), and skips the run when not.  A
 * line is logged when this backend takes a kind over or loses it (none on
 * SQLite, where every kind is always held).  Start: before the jobs (a
 * failed first open is tried again at the first ask; TW_ENOMEM only).
 * The leader is counted: jobs hold a reference (tw_srv_leader_ref) and
 * let go of it when freed; the server's goes in server_free.  _mine with
 * NULL: true. */
struct tw_srv_leader;
enum tw_err tw_srv_leader_start(struct tw_server *srv, struct tw_error *err);
struct tw_srv_leader *tw_srv_leader_ref(struct tw_srv_leader *ld);
void tw_srv_leader_unref(struct tw_srv_leader *ld);
bool tw_srv_leader_mine(struct tw_srv_leader *ld, const char *kind);
bool tw_srv_work_mine(struct tw_server *srv, const char *kind);
/* The kinds asked for so far and whether each is held, for /metrics'
 * tierwise_periodic_work_held (NULL LD: none). */
void tw_srv_leader_held(struct tw_srv_leader *ld, struct tw_metrics_store *ms);

/* Loads ARM's VM sizes cached in the store into SRV->vmsizes and queues
 * their refresh on the worker, now and daily (vmsizes_job.c); nothing when
 * ARM_URL is NULL or "". */
enum tw_err tw_srv_vmsizes_start(struct tw_server *srv, const char *arm_url, const char *imds_url,
                                 struct tw_error *err);

/* serve --prices-refresh (prices_job.c): the price books of the fleet's
 * regions, in the currencies the store has, fetched again on the
 * operations worker once older than MAX_AGE_S seconds (looked at hourly,
 * and at the start), on one backend at a time (the periodic work
 * "prices"); nothing when MAX_AGE_S is 0.  TW_EINVAL without a prices
 * URL. */
enum tw_err tw_srv_prices_start(struct tw_server *srv, long max_age_s, struct tw_error *err);

/* What the server's verdicts are judged against: its catalog, caps, ARM's
 * sizes and their basis (v1_compliance.c). */
void tw_srv_compliance_ctx(const struct tw_server *srv, struct tw_svc_compliance_ctx *ctx);

/* Queues the judging again of kept verdicts that no longer stand on the
 * worker, now and every minute (rejudge.c). */
enum tw_err tw_srv_rejudge_start(struct tw_server *srv, struct tw_error *err);

/* Drift (drift_job.c): the store's drift rows brought up to date on the
 * worker, now and every EVERY_S seconds (0: TW_SRV_DRIFT_EVERY_S), a line
 * logged when a drift starts or ends; nothing when the server has no
 * policies.  tw_srv_drift_disks: the disks drifting at the last run, -1
 * before one (or with no drift job); tw_srv_drift_release: the server
 * lets go of the gauge (server_free). */
#define TW_SRV_DRIFT_EVERY_S 60
enum tw_err tw_srv_drift_start(struct tw_server *srv, unsigned every_s, struct tw_error *err);
int64_t tw_srv_drift_disks(const struct tw_server *srv);
/* When the last drift run succeeded (Unix s, 0 none yet) and how many
 * failed; false without a drift job. */
bool tw_srv_drift_stats(const struct tw_server *srv, int64_t *last_success_s, int64_t *errors);
void tw_srv_drift_release(struct tw_server *srv);

/* The fleet from ARM (sync_job.c): OPT's sync queued on the worker, now
 * and every sync_interval_s (0: TW_SRV_SYNC_EVERY_S); nothing without
 * opt->sync.  tw_srv_sync_stats: when the last sync succeeded (Unix s, 0
 * none yet) and how many failed; false without a sync job.
 * tw_srv_sync_release: the server lets go of the counters (server_free). */
#define TW_SRV_SYNC_EVERY_S 300
enum tw_err tw_srv_sync_start(struct tw_server *srv, const struct tw_server_options *opt,
                              struct tw_error *err);
bool tw_srv_sync_stats(const struct tw_server *srv, int64_t *last_success_s, int64_t *errors);
void tw_srv_sync_release(struct tw_server *srv);

/* ---- answers (answer.c) ---- */

/* Copies MSG into OUT with every byte that is not valid UTF-8 (or is a
 * control character) replaced by '?'. */
void tw_srv_clean_text(const char *msg, char *out, size_t outlen);


/* Answers V (stolen) as JSON with STATUS. */
void tw_req_json(struct tw_req *rq, unsigned status, json_t *v);
/* Answers {"error":{"code":CODE,"message":...}} with STATUS. */
void tw_req_error(struct tw_req *rq, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* As tw_req_error, with "line" and "column" of a parse error (when > 0). */
void tw_req_error_at(struct tw_req *rq, unsigned status, const char *code, long line, long column,
                     const char *msg);
/* Answers LEN bytes of BODY (malloc'd, stolen) with TYPE and STATUS. */
void tw_req_body(struct tw_req *rq, unsigned status, const char *type, char *body, size_t len);
/* A store failure: 404 for TW_ENOENT, else 500 with the message. */
void tw_req_store_error(struct tw_req *rq, enum tw_err rc, const struct tw_error *err);

/* A read handle from the pool (pool.c; NULL with ERR set when none can be
 * opened); give it back with tw_srv_store_put. */
struct tw_store *tw_srv_store_get(struct tw_server *srv, struct tw_error *err);
void tw_srv_store_put(struct tw_server *srv, struct tw_store *st);

/* In a handler: declares ERR and ST, a pooled store handle, or answers the
 * store's error and returns.  Give ST back with tw_srv_store_put. */
#define WITH_STORE(rq, st, err)                                                                    \
    struct tw_error err = {0};                                                                     \
    struct tw_store *st = tw_srv_store_get((rq)->srv, &err);                                       \
    if (!st) {                                                                                     \
        tw_req_store_error((rq), err.code ? err.code : TW_EIO, &err);                              \
        return;                                                                                    \
    }

/* Suspends RQ until its job is committed (POST /reports; request.c). */
void tw_req_submit_report(struct tw_req *rq);

/* ---- paging (page.c) ---- */

#define TW_PAGE_DEFAULT 500
/* Reads ?limit= (default TW_PAGE_DEFAULT, at most TW_STORE_PAGE_MAX),
 * ?cursor= and the filters ?vm=, ?sku=, ?resource_group= into PG (its
 * strings borrowed from the request) and, when VERDICT is not NULL,
 * ?verdict= (-1: any, else an enum tw_verdict_kind); false when a 400 was
 * answered. */
bool tw_req_page(struct tw_req *rq, struct tw_store_page *pg, int *verdict);
/* The next_cursor of an answer: the page after PG, or null when no rows
 * follow (MORE false). */
json_t *tw_page_next_cursor(const struct tw_store_page *pg, bool more);

/* ---- the route table and the dashboard's files (api.c) ---- */

extern const struct tw_route tw_api_routes[];
extern const size_t tw_api_n_routes;

/* GET of a dashboard file (anything outside /api/ with no route). */
void tw_api_static(struct tw_req *rq);

/* ---- the server's policies in a route (policy_args.c) ---- */

/* The zone loader a route's run is given (ARG the server): the server's
 * own (tz_load), else UTC only. */
enum tw_err tw_srv_zone(void *arg, const char *name, struct tw_tz **out, struct tw_error *err);
/* The server's policy NAME, or NULL with the 404 unknown_policy answered
 * (saying which there are). */
const struct tw_svc_policy *tw_srv_policy_find(struct tw_req *rq, const char *name);
/* P's timezone loads on this server; false with the 409 policy_zone
 * answered (naming it). */
bool tw_srv_policy_zone_ok(struct tw_req *rq, const struct tw_policy *p);

/* ---- handlers, one file per resource (v1_*.c) ---- */

void tw_v1_healthz(struct tw_req *rq);         /* v1_health.c */
/* The store's probe (tw_store_probe on a handle of its own): one at once,
 * then every 2 s on its own thread until stopped (v1_health.c; stop:
 * NULL-safe, no thread allowed; it closes the handle). */
enum tw_err tw_srv_health_start(struct tw_server *srv, struct tw_error *err);
void tw_srv_health_stop(struct tw_server *srv);
void tw_v1_metrics(struct tw_req *rq);
void tw_v1_post_report(struct tw_req *rq);     /* v1_reports.c */
/* The answer of a resumed POST /reports, from its job. */
void tw_api_report_done(struct tw_req *rq);
void tw_v1_vms(struct tw_req *rq);             /* v1_vms.c */
void tw_v1_vm(struct tw_req *rq);
void tw_v1_disks(struct tw_req *rq);           /* v1_disks.c */
void tw_v1_disk(struct tw_req *rq);
void tw_v1_compliance(struct tw_req *rq);      /* v1_compliance.c */
void tw_v1_compliance_summary(struct tw_req *rq);
void tw_v1_prices(struct tw_req *rq);          /* v1_prices.c */
void tw_v1_prices_refresh(struct tw_req *rq);
void tw_v1_operation(struct tw_req *rq);       /* v1_operations.c */
void tw_v1_policies(struct tw_req *rq);        /* v1_policies.c */
void tw_v1_policy(struct tw_req *rq);
void tw_v1_savings_whatif(struct tw_req *rq); /* v1_whatif.c */
void tw_v1_savings_opportunities(struct tw_req *rq); /* v1_opportunities.c */
void tw_v1_drift(struct tw_req *rq);            /* v1_drift.c */
void tw_v1_plan(struct tw_req *rq);     /* v1_plan.c: GET /api/v1/plan */
void tw_v1_plan_ics(struct tw_req *rq); /* v1_plan.c: GET /api/v1/plan.ics */
void tw_v1_actions(struct tw_req *rq);      /* v1_actions.c: GET /api/v1/actions */
void tw_v1_actions_post(struct tw_req *rq); /* v1_actions.c: POST /api/v1/actions */
void tw_v1_action(struct tw_req *rq);       /* v1_actions.c: GET /api/v1/actions/{id} */
void tw_v1_reports_monthly(struct tw_req *rq); /* v1_monthly.c: GET /api/v1/reports/monthly */
void tw_v1_openapi(struct tw_req *rq);         /* v1_openapi.c */

/* The executor in the server (scheduler_job.c): its options over the
 * server's ARM, a tick of policy P with them, serve --scheduler's start and
 * its stop (which also stops runs in flight between two steps). */
void tw_srv_exec_arm_init(struct tw_server *srv, const char *arm_url, struct tw_arm_cred *cred,
                          struct tw_arm_pacer *pacer);
void tw_srv_exec_opts(struct tw_server *srv, struct tw_exec_opts *o, bool dry_run);
void tw_srv_exec_tick(struct tw_server *srv, struct tw_exec_tick *t, const struct tw_policy *p,
                      const struct tw_exec_opts *o);
enum tw_err tw_srv_scheduler_start(struct tw_server *srv, struct tw_error *err);
void tw_srv_scheduler_stop(struct tw_server *srv, long timeout_ms);
/* An executor run (a scheduler tick, an executing POST /api/v1/actions)
 * reads the server's catalog, caps, policies and ARM client, which the
 * stop frees (the credential and pacer go with the caller after it): it
 * enters before it reads any (false when the server is stopping: the run
 * must not start) and leaves when it is done with them.  The stop waits
 * for every run entered to leave (tw_srv_exec_drain: after exec_stop each
 * ends at its next step, usually one ARM call), however long its workers'
 * timeouts were, so a run outliving them never reads freed memory. */
bool tw_srv_exec_enter(struct tw_server *srv);
void tw_srv_exec_leave(struct tw_server *srv);
/* True when every run left; false after TW_SRV_EXEC_DRAIN_S seconds (a
 * run still waiting in ARM's pacing or retries: the server must then not
 * be freed, and is left to the process's exit). */
#define TW_SRV_EXEC_DRAIN_S 30
bool tw_srv_exec_drain(struct tw_server *srv);

/* Verdicts as the API shows them (v1_compliance.c): a verdict object per
 * latest result of VM VM_ID into VERDICTS, one object per result or VM that can't be judged into ERRORS.
 * TW_ENOENT when there is no such VM. */
enum tw_err tw_v1_vm_verdicts(struct tw_server *srv, struct tw_store *st, int64_t vm_id,
                              json_t *verdicts, json_t *errors, struct tw_error *err);
/* One page of VMs' verdicts (VERDICT: only that kind, -1 any). */
enum tw_err tw_v1_page_verdicts(struct tw_server *srv, struct tw_store *st,
                                const struct tw_store_page *pg, int verdict, json_t *verdicts,
                                json_t *errors, size_t *n_vms, bool *more, struct tw_error *err);
/* Sets "verdicts" on each disk object of DISKS: those of ALL covering it. */
void tw_v1_attach_disk_verdicts(json_t *disks, const json_t *all);

#endif
