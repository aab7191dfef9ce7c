/*
 * server.h - tierwise's REST backend: /api/v1 over libmicrohttpd, the
 * store behind it (a SQLite file, or PostgreSQL shared by several
 * backends), the dashboard's files.
 *
 * Requests run on libmicrohttpd's internal thread pool (epoll).  Reads use
 * store handles from a small pool, one thread per handle at a time.
 * Reports go to one writer thread that commits whatever is queued in one
 * transaction; the posting request is suspended meanwhile and answered
 * after the commit, so a 2xx always means stored.  README "tierwise serve:
 * the backend" lists the routes, roles and statuses.
 */
#ifndef TW_SERVER_SERVER_H
#define TW_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/tz.h"

#define TW_SERVER_DEFAULT_LISTEN "127.0.0.1:8080"
#define TW_SERVER_DEFAULT_BODY_MAX (1u << 20)
#define TW_SERVER_MAX_THREADS 256
#define TW_SERVER_MAX_DB_CONNECTIONS 1000
#define TW_SERVER_DEFAULT_MAX_CONNECTIONS 4096
/* Per client address: a quarter of the default in all, so one address
 * can't hold the server, yet a fleet's agents behind one NAT (or a
 * client reconnecting after every POST, whose closed connections the gate
 * may not have counted out yet) are not refused. */
#define TW_SERVER_DEFAULT_PER_CLIENT 1024
#define TW_SERVER_DEFAULT_HEADER_TIMEOUT_MS 10000
#define TW_SERVER_DEFAULT_BODY_MEMORY (64u << 20)

struct tw_arm_cred;
struct tw_arm_pacer;

struct tw_server_options {
    const char *db_path;      /* required: a SQLite file or a PostgreSQL location (store.h) */
    const char *listen;       /* "HOST:PORT" (IPv4, [IPv6]); NULL: 127.0.0.1:8080 */
    const char *web_dir;      /* the dashboard's files; NULL: none served */
    const char *tls_cert_pem; /* PEM text of the certificate (chain) and key: */
    const char *tls_key_pem;  /* both for HTTPS, or neither */
    unsigned threads;         /* request threads; 0: the number of CPUs, at least 2 */
    size_t body_max;          /* the largest request body; 0: 1 MiB */
    bool log_requests;        /* one line per request on stderr */
    const char *prices_url;   /* the Retail Prices API's base URL (prices routes); NULL: none */
    /* serve --prices-refresh: the fleet's price books fetched again from
     * PRICES_URL once older than this many seconds (prices_job.c); 0: only
     * when asked (POST /api/v1/prices/refresh, tierwise prices refresh). */
    long prices_refresh_s;
    /* The policies folder (service/policies.h), read at start: a file that
     * does not parse refuses the start with its FILE:LINE:COLUMN; NULL:
     * no policies. */
    const char *policies_dir;
    /* Loads a time zone by its IANA name (the executable's tw_tz_load,
     * app/tzload.h: the server reads no zone file itself); NULL: only
     * requests without a zone (UTC) are answered. */
    enum tw_err (*tz_load)(const char *name, struct tw_tz **out, struct tw_error *err);
    /* ARM's VM sizes for the verdicts, refreshed daily: ARM's base URL and
     * IMDS's (its managed identity's token); NULL: not read. */
    const char *arm_url;
    const char *imds_url;
    /* The drift job's period in seconds (drift_job.c; it runs when the
     * server has policies); 0: 60. */
    unsigned drift_interval_s;
    /* The executor (POST /api/v1/actions, --scheduler): ARM's credential
     * and pacer, shared by every run and borrowed (the caller frees them
     * after tw_server_stop); NULL cred: executing runs are refused with 503
     * no_arm.  EXEC_ARM_URL is ARM's base URL for it (NULL: ARM_URL). */
    struct tw_arm_cred *arm_cred;
    struct tw_arm_pacer *arm_pacer;
    const char *exec_arm_url;
    /* serve --scheduler: a tick of every policy of POLICIES_DIR (the due
     * actions planned, recorded and run) every SCHEDULER_INTERVAL_S (0: 60)
     * on a worker of its own. */
    bool scheduler;
    unsigned scheduler_interval_s;
    /* the price books' currency of the scheduler's plans (3 letters); NULL: the
     * store's only one */
    const char *scheduler_currency;
    /* serve --sync: the fleet from ARM into the store (service/sync.h) at
     * the start and every SYNC_INTERVAL_S (0: 300) on the operations
     * worker, with ARM_CRED and ARM_PACER at SYNC_ARM_URL (NULL:
     * EXEC_ARM_URL, else ARM_URL); of SYNC_SUBSCRIPTIONS (none: the one
     * IMDS at SYNC_IMDS_URL names) and, when given, only their
     * SYNC_RESOURCE_GROUPS.  Copied at the start. */
    bool sync;
    unsigned sync_interval_s;
    const char *sync_arm_url;
    const char *sync_imds_url;
    const char *const *sync_subscriptions;
    size_t n_sync_subscriptions;
    const char *const *sync_resource_groups;
    size_t n_sync_resource_groups;
    /* Connections: 0 takes the default of each. */
    unsigned max_connections;            /* open at once in all; default 4096, within the fd limit */
    unsigned max_connections_per_client; /* open at once from one address; default 1024 */
    unsigned header_timeout_ms;          /* the request head's deadline; default 10 s */
    size_t body_memory_max;              /* request bodies held at once in all; default 64 MiB */
    /* The pool of store handles requests read through (each one database
     * connection on PostgreSQL), 1..TW_SERVER_MAX_DB_CONNECTIONS; 0: the
     * request threads + 2.  The writer, the health probe, the periodic
     * work's lock and each job or executor run open handles of their own. */
    unsigned db_connections;
};

struct tw_server;

/*
 * Parses "HOST:PORT", "[V6]:PORT" or "HOST" (port 8080) into a numeric
 * HOST ("localhost" becomes 127.0.0.1) and PORT (0 picks a free one).
 * TW_EINVAL with a message naming the spec.
 */
enum tw_err tw_server_parse_listen(const char *spec, char *host, size_t hostlen, unsigned *port,
                                   struct tw_error *err);

/* Opens the database (migrating it), starts the writer and listens.
 * TW_EIO when it can't listen (the message says why). */
enum tw_err tw_server_start(const struct tw_server_options *opt, struct tw_server **out,
                            struct tw_error *err);

/* The port listened on (the real one when 0 was asked). */
unsigned tw_server_port(const struct tw_server *srv);
/* "http://127.0.0.1:8080" or "https://..." */
const char *tw_server_url(const struct tw_server *srv);

/* What the server has done so far, for the periodic log line. */
struct tw_server_counts {
    uint64_t requests;       /* answered */
    uint64_t reports_stored; /* committed by the writer, new ids */
    uint64_t reports_repeat; /* repeated ids */
    uint64_t errors;         /* answers with a 5xx status */
};
void tw_server_counts(const struct tw_server *srv, struct tw_server_counts *out);

/* The connection limits in force (the defaults filled in). */
struct tw_server_limits {
    unsigned max_connections, max_connections_per_client, header_timeout_ms;
    size_t body_memory_max;
    unsigned long fd_limit; /* RLIMIT_NOFILE after the start raised it */
};
void tw_server_limits(const struct tw_server *srv, struct tw_server_limits *out);
/* Connections open now (waiting for their head, relayed, or served). */
unsigned tw_server_open_connections(const struct tw_server *srv);

/*
 * Stops gracefully: no new connections, requests in flight finish (for at
 * most GRACE_MS; 0: 10 s), the writer commits what is queued, then the
 * daemon stops and the database is closed.  NULL allowed.
 */
void tw_server_stop(struct tw_server *srv, unsigned grace_ms);

#endif
