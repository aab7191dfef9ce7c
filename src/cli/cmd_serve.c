/*
 * cmd_serve.c - tierwise serve: runs the REST backend until SIGTERM or
 * SIGINT.
 *
 * Options come from the flags and from a JSON --config file with the same
 * keys (flags win).  The port goes to --port-file (atomically) so scripts
 * can start it on port 0.  A stop signal stops gracefully: no new
 * connections, requests in flight finish, the writer commits what is
 * queued, the database is closed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/arm_args.h"
#include "cli/cli.h"
#include "cli/exec_cli.h"
#include "core/jsonx.h"
#include "core/size.h"
#include "azure/endpoints.h"
#include "server/server.h"
#include "service/sync.h"

#define MAX_CONFIG (1u << 20)
#define MAX_PEM (1u << 20)
#define LOG_EVERY_S 60

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s serve --db FILE [--listen HOST:PORT] [--web DIR] [--config FILE]\n"
            "                [--tls-cert FILE --tls-key FILE] [--port-file FILE]\n"
            "                [--threads N] [--body-max BYTES] [--log-requests]\n"
            "                [--prices-url URL] [--prices-refresh D] [--max-connections N]\n"
            "                [--max-connections-per-client N] [--header-timeout S]\n"
            "                [--body-memory-max BYTES] [--db-connections N]\n"
            "                [--policies DIR]\n\n"
            "Runs the backend: the REST API /api/v1 (agents post reports, readers read),\n"
            "/healthz, /metrics (Prometheus) and the dashboard, over one database: a SQLite\n"
            "file, or PostgreSQL, which several backends may serve at once.\n\n"
            "  --db FILE|URL      the SQLite database (created and migrated if needed), or a\n"
            "                     PostgreSQL one: postgresql://HOST/DB or \"host=... dbname=...\"\n"
            "                     (migrated if needed; the password in PGPASSFILE, never here)\n"
            "  --listen HOST:PORT where to listen (default %s; [::1]:PORT for IPv6;\n"
            "                     port 0 picks a free one)\n"
            "  --web DIR          the dashboard's files (default: ../share/tierwise/web next\n"
            "                     to the executable, else the source tree's web/ when run\n"
            "                     from a build directory inside it; none found: no dashboard)\n"
            "  --config FILE      a JSON object with the same keys as these flags (\"db\",\n"
            "                     \"listen\", \"web\", \"tls-cert\", \"tls-key\", \"port-file\",\n"
            "                     \"threads\", \"body-max\", \"log-requests\", \"db-connections\",\n"
            "                     \"vm-sizes-from-arm\", ...); flags win\n"
            "  --tls-cert FILE    serve HTTPS with this PEM certificate (chain) ...\n"
            "  --tls-key FILE     ... and its PEM private key (both or neither)\n"
            "  --port-file FILE   write the port listened on there (atomically)\n"
            "  --threads N        request threads (default: the number of CPUs, at least 2)\n"
            "  --body-max BYTES   the largest request body (default 1MiB; 413 beyond)\n"
            "  --max-connections N  connections open at once in all (default 4096, fewer\n"
            "                     when the open-files limit is lower; it is raised to its\n"
            "                     hard limit at start); past it a new one gets 503\n"
            "  --max-connections-per-client N  ... from one client address (default 1024)\n"
            "  --header-timeout S the seconds a connection has to send its request line and\n"
            "                     headers (default 10, 1..300); 408 past it\n"
            "  --body-memory-max BYTES  request bodies held at once in all (default 64MiB,\n"
            "                     at least --body-max); a body past it gets 503 busy\n"
            "  --db-connections N the store handles requests read through, each a database\n"
            "                     connection on PostgreSQL (default --threads + 2, 1..1000);\n"
            "                     the writer, the health probe, the periodic work and each\n"
            "                     run of the executor use a few more\n"
            "  --log-requests     one line per request on stderr (default: one line a minute)\n"
            "  --prices-url URL   the Retail Prices API for the prices routes (README \"Azure\n"
            "                     endpoints\": also TIERWISE_PRICES_URL, \"prices_url\")\n"
            "  --prices-refresh D fetch the price books of the fleet's regions (in each\n"
            "                     currency the database has books in, else USD) from\n"
            "                     --prices-url again once older than D (1m..30d, e.g. 1d):\n"
            "                     looked at at start and hourly (every D when shorter), on\n"
            "                     one backend of a database at a time; a failure is logged\n"
            "                     and the stored book kept (\"prices-refresh\" in --config)\n"
            "  --policies DIR     the tier-switch policies: every *.json file of DIR\n"
            "                     (tierwise.policy/1; policy.schema.json is skipped), read\n"
            "                     at start (a file with a problem, or a timezone this\n"
            "                     machine can't load, refuses the start with its\n"
            "                     FILE:LINE:COLUMN; check them with tierwise policy check)\n"
            "                     and served at /api/v1/policies\n"
            "  --drift-interval D how often drift is judged when there are --policies\n"
            "                     (default 1m, 1s..24h): a line is logged when a disk's drift\n"
            "                     starts or ends; /metrics' tierwise_drift_disks\n"
            "  --vm-sizes-from-arm  read the VM sizes of the fleet's regions from ARM's\n"
            "                     Resource SKUs at start and daily (token from the managed\n"
            "                     identity through IMDS), cached in the database; verdicts\n"
            "                     use them before the bundled caps table\n"
            "  --arm-url URL, --imds-url URL  where ARM and IMDS are (also TIERWISE_ARM_URL,\n"
            "                     TIERWISE_IMDS_URL, \"arm_url\", \"imds_url\"; default Azure's)\n"
            "  --login-url URL    the Entra ID login, for client credentials (else\n"
            "                     TIERWISE_LOGIN_URL, \"login_url\", https://login.microsoftonline.com)\n"
            "  --client-secret-file FILE  the client secret, the first line of FILE (instead\n"
            "                     of AZURE_CLIENT_SECRET; AZURE_TENANT_ID, AZURE_CLIENT_ID\n"
            "                     give the rest); for --scheduler and --sync\n"
            "  --no-pacing        do not pace the ARM calls of --scheduler and --sync (below\n"
            "                     ARM's limits otherwise)\n"
            "  --scheduler        run the tier switches itself: every --scheduler-interval a\n"
            "                     tick of each policy of --policies (the actions due now\n"
            "                     planned, recorded and run, as tierwise apply --execute\n"
            "                     does), on a worker of its own; ARM's credential is the\n"
            "                     environment's (AZURE_TENANT_ID, AZURE_CLIENT_ID,\n"
            "                     AZURE_CLIENT_SECRET, else the managed identity), also for\n"
            "                     POST /api/v1/actions (without it or --vm-sizes-from-arm that\n"
            "                     route answers 503 no_arm)\n"
            "  --scheduler-interval D  the scheduler's tick (default 1m, 1s..1d)\n"
            "  --scheduler-currency C  the price books' currency of its plans (default: the\n"
            "                     database's only one)\n"
            "  --sync             read the fleet's VMs and disks from ARM into the database at\n"
            "                     start and every --sync-interval, on the operations worker,\n"
            "                     as tierwise sync does (a failure is logged and tried again\n"
            "                     at the next interval; /metrics' tierwise_sync_*); ARM's\n"
            "                     credential as for --scheduler\n"
            "  --sync-interval D  how often (default 5m, 1s..1d); implies --sync\n"
            "  --subscription ID  the subscription --sync reads (repeatable; default: the\n"
            "                     one IMDS names for this VM)\n"
            TW_CLI_SAY_HELP
            "                    (-q: no lines on stderr but errors and warnings, not even\n"
            "                    the minute's counts; -v: a line per request, as\n"
            "                    --log-requests)\n"
            "  -h, --help         this text\n\n"
            "Tokens: tierwise token create --db FILE --role agent|reader|admin.\n"
            "SIGTERM or SIGINT stops it gracefully.\n"
            "Exit status: 0 stopped by a signal, 1 can't open the database or listen,\n"
            "2 bad usage or configuration.\n",
            TW_CLI_PROG, TW_SERVER_DEFAULT_LISTEN);
}

struct serve_opts {
    const char *db, *listen, *web, *tls_cert, *tls_key, *port_file;
    const char *threads, *body_max;
    const char *prices_url;
    const char *policies; /* --policies DIR */
    const char *prices_refresh; /* --prices-refresh D */
    const char *prices_refresh_file; /* the config file that gave it, NULL: the flag */
    int log_requests; /* -1 unset */
    int vm_sizes;     /* --vm-sizes-from-arm; -1 unset */
    /* --max-connections, --max-connections-per-client, --header-timeout,
     * --body-memory-max, --db-connections; numbers from the config file in
     * LIMIT_NUM */
    const char *limit[5];
    char *limit_num[5];
};

#define N_LIMITS 5
static const char *const limit_keys[N_LIMITS] = {"max-connections", "max-connections-per-client",
                                                 "header-timeout", "body-memory-max",
                                                 "db-connections"};

/* Copies the config file's keys into O where the flags left them unset.
 * The strings point into CFG (kept alive by the caller). */
static enum tw_err apply_config(const char *path, json_t *cfg, struct serve_opts *o,
                                char *num_buf[2], struct tw_error *err)
{
    static const char *const keys[] = {"db",        "listen",  "web",      "tls-cert",    "tls-key",
                                       "port-file", "threads", "body-max", "log-requests"};
    if (!json_is_object(cfg))
        return tw_error_set(err, TW_EINVAL, "%s: the configuration must be a JSON object", path);
    const char *key;
    json_t *v;
    json_object_foreach(cfg, key, v)
    {
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[k], key) != 0)
            k++;
        /* The Azure endpoints' keys ("prices_url", ...) are read by
         * tw_az_endpoints_resolve from the same file. */
        bool endpoint = false;
        for (int e = 0; e < TW_AZ_EP_COUNT; e++)
            if (strcmp(key, tw_az_ep_key((enum tw_az_ep)e)) == 0)
                endpoint = true;
        if (endpoint)
            continue;
        if (strcmp(key, "vm-sizes-from-arm") == 0) {
            if (!json_is_boolean(v))
                return tw_error_set(err, TW_EINVAL,
                                    "%s: \"vm-sizes-from-arm\" must be true or false", path);
            if (o->vm_sizes < 0)
                o->vm_sizes = json_is_true(v);
            continue;
        }
        if (strcmp(key, "prices-refresh") == 0) {
            if (!json_is_string(v))
                return tw_error_set(err, TW_EINVAL,
                                    "%s: \"prices-refresh\" must be a duration (e.g. \"1d\")",
                                    path);
            if (!o->prices_refresh) {
                o->prices_refresh = json_string_value(v);
                o->prices_refresh_file = path;
            }
            continue;
        }
        if (strcmp(key, "policies") == 0) {
            if (!json_is_string(v))
                return tw_error_set(err, TW_EINVAL, "%s: \"policies\" must be a folder's path",
                                    path);
            if (!o->policies)
                o->policies = json_string_value(v);
            continue;
        }
        size_t lk = 0;
        while (lk < N_LIMITS && strcmp(limit_keys[lk], key) != 0)
            lk++;
        if (lk < N_LIMITS) {
            if (!json_is_string(v) && !(json_is_integer(v) && json_integer_value(v) >= 0))
                return tw_error_set(err, TW_EINVAL, "%s: \"%s\" must be a number or a string",
                                    path, key);
            if (o->limit[lk])
                continue;
            if (json_is_string(v)) {
                o->limit[lk] = json_string_value(v);
            } else {
                if (asprintf(&o->limit_num[lk], "%lld", (long long)json_integer_value(v)) < 0)
                    return tw_error_set(err, TW_ENOMEM, "out of memory");
                o->limit[lk] = o->limit_num[lk];
            }
            continue;
        }
        if (k == sizeof(keys) / sizeof(keys[0]))
            return tw_error_set(err, TW_EINVAL,
                                "%s: unknown key \"%s\"; the keys are the serve flags (db, "
                                "listen, web, tls-cert, tls-key, port-file, threads, body-max, "
                                "log-requests, max-connections, max-connections-per-client, "
                                "header-timeout, body-memory-max, db-connections, "
                                "vm-sizes-from-arm, policies, prices-refresh) and the "
                                "Azure endpoints "
                                "(prices_url, ...)",
                                path, key);
        if (k == 8) {
            if (!json_is_boolean(v))
                return tw_error_set(err, TW_EINVAL, "%s: \"log-requests\" must be true or false",
                                    path);
            if (o->log_requests < 0)
                o->log_requests = json_is_true(v);
            continue;
        }
        const char *s = NULL;
        if (json_is_string(v)) {
            s = json_string_value(v);
        } else if ((k == 6 || k == 7) && json_is_integer(v) && json_integer_value(v) >= 0) {
            int n = asprintf(&num_buf[k - 6], "%lld", (long long)json_integer_value(v));
            if (n < 0)
                return tw_error_set(err, TW_ENOMEM, "out of memory");
            s = num_buf[k - 6];
        } else {
            return tw_error_set(err, TW_EINVAL, "%s: \"%s\" must be a %s", path, key,
                                k == 6 || k == 7 ? "number or a string" : "string");
        }
        const char **slot[] = {&o->db,      &o->listen,    &o->web,     &o->tls_cert,
                               &o->tls_key, &o->port_file, &o->threads, &o->body_max};
        if (!*slot[k])
            *slot[k] = s;
    }
    return TW_OK;
}

/* The default web directory: installed share/, or the source tree's web/
 * when the executable is in a build directory inside it. */
static bool default_web(char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    char dir[PATH_MAX + 64], probe[PATH_MAX + 64];
    struct stat sb;
    int w = snprintf(dir, sizeof(dir), "%s/../share/tierwise/web", exe);
    int w2 = snprintf(probe, sizeof(probe), "%s/../share/tierwise/web/index.html", exe);
    if (w < 0 || w2 < 0 || (size_t)w2 >= sizeof(probe) || stat(probe, &sb) != 0) {
        /* Up to five levels: build/<dir>/src/tierwise is three below. */
        dir[0] = '\0';
        for (int up = 0; up < 5 && !dir[0]; up++) {
            char src[PATH_MAX + 64];
            int a = snprintf(probe, sizeof(probe), "%s/web/index.html", exe);
            int b = snprintf(src, sizeof(src), "%s/src/server/server.h", exe);
            if (a > 0 && b > 0 && (size_t)a < sizeof(probe) && (size_t)b < sizeof(src) &&
                stat(probe, &sb) == 0 && stat(src, &sb) == 0)
                snprintf(dir, sizeof(dir), "%s/web", exe);
            slash = strrchr(exe, '/');
            if (!slash || slash == exe)
                break;
            *slash = '\0';
        }
    }
    if (!dir[0] || strlen(dir) >= outlen)
        return false;
    memcpy(out, dir, strlen(dir) + 1);
    return true;
}

static enum tw_err read_text(const char *path, const char *what, char **out, struct tw_error *err)
{
    struct tw_buf b;
    tw_buf_init(&b, MAX_PEM);
    enum tw_err rc = tw_app_read_file(path, &b, err);
    if (rc == TW_OK && b.len == 0)
        rc = tw_error_set(err, TW_EINVAL, "%s %s is empty", what, path);
    if (rc != TW_OK) {
        tw_buf_cleanup(&b);
        return rc;
    }
    *out = b.data;
    return TW_OK;
}

static void wipe_free(char *s)
{
    if (s) {
        memset(s, 0, strlen(s));
        free(s);
    }
}

/* The ARM credential and pacer of a server that ran (see the end of
 * tw_cli_cmd_serve). */
static struct tw_arm_cred *volatile kept_cred;
static struct tw_arm_pacer *volatile kept_pacer;

int tw_cli_cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"listen", required_argument, NULL, 'l'},
        {"web", required_argument, NULL, 'w'},
        {"config", required_argument, NULL, 'C'},
        {"tls-cert", required_argument, NULL, 'c'},
        {"tls-key", required_argument, NULL, 'k'},
        {"port-file", required_argument, NULL, 'p'},
        {"threads", required_argument, NULL, 't'},
        {"body-max", required_argument, NULL, 'b'},
        {"max-connections", required_argument, NULL, 1000},
        {"max-connections-per-client", required_argument, NULL, 1001},
        {"header-timeout", required_argument, NULL, 1002},
        {"body-memory-max", required_argument, NULL, 1003},
        {"db-connections", required_argument, NULL, 1004},
        {"log-requests", no_argument, NULL, 'L'},
        {"prices-url", required_argument, NULL, 'P'},
        {"vm-sizes-from-arm", no_argument, NULL, 1010},
        {"arm-url", required_argument, NULL, 1011},
        {"imds-url", required_argument, NULL, 1012},
        {"login-url", required_argument, NULL, TW_ARM_OPT_LOGIN_URL},
        {"client-secret-file", required_argument, NULL, TW_ARM_OPT_SECRET_FILE},
        {"no-pacing", no_argument, NULL, TW_ARM_OPT_NO_PACING},
        {"policies", required_argument, NULL, 1013},
        {"drift-interval", required_argument, NULL, 1020},
        {"scheduler", no_argument, NULL, 1030},
        {"scheduler-interval", required_argument, NULL, 1031},
        {"scheduler-currency", required_argument, NULL, 1032},
        {"sync", no_argument, NULL, 1040},
        {"sync-interval", required_argument, NULL, 1041},
        {"prices-refresh", required_argument, NULL, 1050},
        {"subscription", required_argument, NULL, 1042},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    struct serve_opts o = {.log_requests = -1, .vm_sizes = -1};
    const char *config = NULL;
    const char *arm_url = NULL, *imds_url = NULL; /* ARM's VM sizes */
    struct tw_arm_args arm_args;                  /* --login-url, --client-secret-file, ... */
    memset(&arm_args, 0, sizeof arm_args);
    const char *drift_interval = NULL;            /* --drift-interval */
    bool scheduler = false;                       /* --scheduler */
    const char *sched_every = NULL;               /* --scheduler-interval */
    const char *sched_currency = NULL;            /* --scheduler-currency */
    struct tw_arm_cred *exec_cred = NULL;         /* the executor's ARM */
    struct tw_arm_pacer *exec_pacer = NULL;
    bool sync = false;                            /* --sync (or --sync-interval) */
    const char *sync_every = NULL;                /* --sync-interval */
    const char *sync_subs[64];                    /* --subscription, repeatable */
    size_t n_sync_subs = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;
        /* -v: every request logged, as --log-requests. */
        case 'v':
            tw_app_set_verbosity(TW_APP_VERBOSE);
            o.log_requests = 1;
            break;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'd': o.db = optarg; break;
        case 'l': o.listen = optarg; break;
        case 'w': o.web = optarg; break;
        case 'C': config = optarg; break;
        case 'c': o.tls_cert = optarg; break;
        case 'k': o.tls_key = optarg; break;
        case 'p': o.port_file = optarg; break;
        case 't': o.threads = optarg; break;
        case 'b': o.body_max = optarg; break;
        case 1000:
        case 1001:
        case 1002:
        case 1003:
        case 1004: o.limit[c - 1000] = optarg; break;
        case 'L': o.log_requests = 1; break;
        case 'P': o.prices_url = optarg; break;
        case 1010: o.vm_sizes = 1; break;
        case 1011: arm_url = optarg; break;
        case 1012: imds_url = optarg; break;
        case TW_ARM_OPT_LOGIN_URL:
        case TW_ARM_OPT_SECRET_FILE:
        case TW_ARM_OPT_NO_PACING: tw_arm_args_take(&arm_args, c, optarg); break;
        case 1013: o.policies = optarg; break;
        case 1020: drift_interval = optarg; break;
        case 1030: scheduler = true; break;
        case 1031: sched_every = optarg; break;
        case 1032: sched_currency = optarg; break;
        case 1040: sync = true; break;
        case 1050: o.prices_refresh = optarg; break;
        case 1041:
            sync = true;
            sync_every = optarg;
            break;
        case 1042:
            if (n_sync_subs == sizeof(sync_subs) / sizeof(sync_subs[0])) {
                tw_app_error(TW_CLI_PROG, "serve: at most 64 --subscription");
                return TW_EXIT_USAGE;
            }
            sync_subs[n_sync_subs++] = optarg;
            break;
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "serve: unexpected argument \"%s\"; see serve --help",
                     argv[optind]);
        return TW_EXIT_USAGE;
    }

    struct tw_error err = {0};
    enum tw_err rc = TW_OK;
    json_t *cfg = NULL;
    char *num_buf[2] = {NULL, NULL};
    char *cert = NULL, *key = NULL;
    char web_buf[PATH_MAX];
    struct tw_server *srv = NULL;
    bool srv_ran = false; /* a server was started (and so stopped) */
    int status = TW_EXIT_OK;
    if (config) {
        struct tw_buf b;
        tw_buf_init(&b, MAX_CONFIG);
        rc = tw_app_read_file(config, &b, &err);
        if (rc == TW_OK) {
            cfg = tw_json_load(b.data ? b.data : "", b.len, 0, config, &err);
            if (!cfg)
                rc = TW_EINVAL;
        }
        tw_buf_cleanup(&b);
        if (rc == TW_OK)
            rc = apply_config(config, cfg, &o, num_buf, &err);
        if (rc != TW_OK) {
            status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
            goto fail_msg;
        }
    }
    if (!o.db) {
        rc = tw_error_set(&err, TW_EINVAL, "serve needs --db FILE or --db postgresql://... (or \"db\" in --config)");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    struct tw_server_options so = {
        .db_path = o.db, .listen = o.listen, .log_requests = o.log_requests > 0};
    if (o.threads) {
        char *end;
        errno = 0;
        long t = strtol(o.threads, &end, 10);
        if (!*o.threads || *end || errno || t < 1 || t > TW_SERVER_MAX_THREADS) {
            rc = tw_error_set(&err, TW_EINVAL, "--threads \"%s\" must be 1..%d", o.threads,
                              TW_SERVER_MAX_THREADS);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.threads = (unsigned)t;
    }
    if (o.body_max) {
        uint64_t b;
        if (tw_size_parse(o.body_max, &b, &err) != TW_OK || b < 1024 || b > (1ull << 30)) {
            rc = tw_error_set(&err, TW_EINVAL,
                              "--body-max \"%s\" must be a size from 1KiB to 1GiB (e.g. 1MiB)",
                              o.body_max);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.body_max = (size_t)b;
    }
    /* The connection limits. */
    for (int i = 0; i < 3; i++) {
        if (!o.limit[i])
            continue;
        static const long hi[3] = {1000000, 1000000, 300};
        char *end;
        errno = 0;
        long n = strtol(o.limit[i], &end, 10);
        if (!*o.limit[i] || *end || errno || n < 1 || n > hi[i]) {
            rc = tw_error_set(&err, TW_EINVAL, "--%s \"%s\" must be a whole number from 1 to %ld%s",
                              limit_keys[i], o.limit[i], hi[i], i == 2 ? " (seconds)" : "");
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        if (i == 0)
            so.max_connections = (unsigned)n;
        else if (i == 1)
            so.max_connections_per_client = (unsigned)n;
        else
            so.header_timeout_ms = (unsigned)n * 1000u;
    }
    if (o.limit[3]) {
        uint64_t b;
        if (tw_size_parse(o.limit[3], &b, &err) != TW_OK || b < 1024 || b > (16ull << 30)) {
            rc = tw_error_set(&err, TW_EINVAL,
                              "--body-memory-max \"%s\" must be a size from 1KiB to 16GiB (e.g. "
                              "64MiB), at least --body-max",
                              o.limit[3]);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.body_memory_max = (size_t)b;
    }
    if (o.limit[4]) {
        char *end;
        errno = 0;
        long n = strtol(o.limit[4], &end, 10);
        if (!*o.limit[4] || *end || errno || n < 1 || n > TW_SERVER_MAX_DB_CONNECTIONS) {
            rc = tw_error_set(&err, TW_EINVAL,
                              "--db-connections \"%s\" must be a whole number from 1 to %d "
                              "(the store handles requests read through)",
                              o.limit[4], TW_SERVER_MAX_DB_CONNECTIONS);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.db_connections = (unsigned)n;
    }
    if (!o.tls_cert != !o.tls_key) {
        rc = tw_error_set(&err, TW_EINVAL,
                          "HTTPS needs both --tls-cert FILE and --tls-key FILE (got only %s)",
                          o.tls_cert ? "--tls-cert" : "--tls-key");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if (o.tls_cert) {
        if ((rc = read_text(o.tls_cert, "certificate", &cert, &err)) != TW_OK ||
            (rc = read_text(o.tls_key, "key", &key, &err)) != TW_OK) {
            status = rc == TW_ENOENT || rc == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
            goto fail_msg;
        }
        so.tls_cert_pem = cert;
        so.tls_key_pem = key;
    }
    /* The Retail Prices API: flag, environment, config file, default. */
    struct tw_az_ep_args ep_args = {.only = 1u << TW_AZ_EP_PRICES, .config_path = config};
    ep_args.url[TW_AZ_EP_PRICES] = o.prices_url;
    /* ARM and IMDS only when the VM sizes are asked for: nothing else of
     * the server reaches them. */
    bool vm_sizes = o.vm_sizes > 0;
    if ((arm_url || imds_url) && !vm_sizes && !scheduler && !sync) {
        rc = tw_error_set(&err, TW_EINVAL, "--arm-url and --imds-url are for --vm-sizes-from-arm, "
                                           "--scheduler and --sync");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if ((arm_args.login_url || arm_args.client_secret_file || arm_args.no_pacing) &&
        !scheduler && !sync) {
        rc = tw_error_set(&err, TW_EINVAL, "--login-url, --client-secret-file and --no-pacing "
                                           "are for --scheduler and --sync");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if (vm_sizes || scheduler || sync)
        ep_args.only |= (1u << TW_AZ_EP_ARM) | (1u << TW_AZ_EP_IMDS);
    if (vm_sizes || scheduler || sync)
        ep_args.only |= 1u << TW_AZ_EP_LOGIN;
    ep_args.url[TW_AZ_EP_ARM] = arm_url;
    ep_args.url[TW_AZ_EP_IMDS] = imds_url;
    ep_args.url[TW_AZ_EP_LOGIN] = arm_args.login_url;
    struct tw_az_endpoints ep;
    if ((rc = tw_az_endpoints_resolve(&ep_args, &ep, &err)) != TW_OK) {
        status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
        goto fail_msg;
    }
    so.prices_url = ep.url[TW_AZ_EP_PRICES];
    so.tz_load = tw_tz_load;
    if (vm_sizes) {
        so.arm_url = ep.url[TW_AZ_EP_ARM];
        so.imds_url = ep.url[TW_AZ_EP_IMDS];
    }
    so.policies_dir = o.policies;
    if (drift_interval) {
        uint64_t every_ms;
        if (tw_duration_parse(drift_interval, &every_ms, &err) != TW_OK || every_ms < 1000 ||
            every_ms > 86400000) {
            rc = tw_error_set(&err, TW_EINVAL, "--drift-interval \"%s\" must be a duration from "
                              "1s to 24h (e.g. 1m)", drift_interval);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.drift_interval_s = (unsigned)(every_ms / 1000);
    }
    if (sched_currency && (!scheduler || strlen(sched_currency) != 3)) {
        rc = tw_error_set(&err, TW_EINVAL, "--scheduler-currency \"%s\" is for --scheduler and a "
                                           "code of 3 letters (e.g. USD)", sched_currency);
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if (sched_every && !scheduler) {
        rc = tw_error_set(&err, TW_EINVAL, "--scheduler-interval is for --scheduler");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if (scheduler && !o.policies) {
        rc = tw_error_set(&err, TW_EINVAL, "--scheduler runs the policies of --policies DIR: "
                                           "give it");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    if (sched_every) {
        uint64_t every_ms;
        if (tw_duration_parse(sched_every, &every_ms, &err) != TW_OK || every_ms < 1000 ||
            every_ms > 86400000) {
            rc = tw_error_set(&err, TW_EINVAL, "--scheduler-interval \"%s\" must be a duration "
                              "from 1s to 1d (e.g. 1m)", sched_every);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.scheduler_interval_s = (unsigned)(every_ms / 1000);
    }
    if (n_sync_subs && !sync) {
        rc = tw_error_set(&err, TW_EINVAL, "--subscription is for --sync");
        status = TW_EXIT_USAGE;
        goto fail_msg;
    }
    for (size_t i = 0; i < n_sync_subs; i++) {
        if (!tw_sync_subscription_valid(sync_subs[i])) {
            rc = tw_error_set(&err, TW_EINVAL, "--subscription %s: not a subscription id; give "
                              "its GUID (az account show --query id)", sync_subs[i]);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
    }
    if (o.prices_refresh) {
        uint64_t age_ms;
        if (tw_duration_parse(o.prices_refresh, &age_ms, &err) != TW_OK || age_ms < 60000 ||
            age_ms > 30ull * 86400000) {
            if (o.prices_refresh_file)
                rc = tw_error_set(&err, TW_EINVAL,
                                  "%s: \"prices-refresh\": \"%s\" must be a duration from 1m "
                                  "to 30d (e.g. \"1d\")",
                                  o.prices_refresh_file, o.prices_refresh);
            else
                rc = tw_error_set(&err, TW_EINVAL, "--prices-refresh \"%s\" must be a duration "
                                  "from 1m to 30d (e.g. 1d)", o.prices_refresh);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.prices_refresh_s = (long)(age_ms / 1000);
    }
    if (sync_every) {
        uint64_t every_ms;
        if (tw_duration_parse(sync_every, &every_ms, &err) != TW_OK || every_ms < 1000 ||
            every_ms > 86400000) {
            rc = tw_error_set(&err, TW_EINVAL, "--sync-interval \"%s\" must be a duration from "
                              "1s to 1d (e.g. 5m)", sync_every);
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        so.sync_interval_s = (unsigned)(every_ms / 1000);
    }
    if (sync) {
        so.sync = true;
        so.sync_arm_url = ep.url[TW_AZ_EP_ARM];
        so.sync_imds_url = ep.url[TW_AZ_EP_IMDS];
        so.sync_subscriptions = sync_subs;
        so.n_sync_subscriptions = n_sync_subs;
    }
    if (vm_sizes || scheduler || sync) {
        /* The shared ARM options (arm_args.h): the credential of the
         * environment or --client-secret-file, against EP's login or IMDS,
         * paced unless --no-pacing; the server owns the two from here. */
        arm_args.arm_url = ep.url[TW_AZ_EP_ARM];
        arm_args.imds_url = ep.url[TW_AZ_EP_IMDS];
        arm_args.login_url = ep.url[TW_AZ_EP_LOGIN];
        arm_args.config = config;
        struct tw_arm_env arm_env;
        if ((rc = tw_arm_args_open(&arm_args, &arm_env, &err)) != TW_OK) {
            status = TW_EXIT_USAGE;
            goto fail_msg;
        }
        exec_cred = arm_env.cred;
        exec_pacer = arm_env.pacer;
        arm_env.cred = NULL;
        arm_env.pacer = NULL;
        tw_arm_env_close(&arm_env);
        so.arm_cred = exec_cred;
        so.arm_pacer = exec_pacer;
        so.exec_arm_url = ep.url[TW_AZ_EP_ARM];
        so.scheduler = scheduler;
        so.scheduler_currency = sched_currency;
    }
    if (o.web)
        so.web_dir = o.web;
    else if (default_web(web_buf, sizeof(web_buf)))
        so.web_dir = web_buf;

    /* Block the stop signals before the server's threads start, so they
     * inherit the mask and only the wait below sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    rc = tw_server_start(&so, &srv, &err);
    wipe_free(key);
    key = NULL;
    srv_ran = rc == TW_OK;
    if (rc != TW_OK) {
        status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : tw_app_exit_code(rc);
        goto fail_msg;
    }
    if (o.port_file) {
        char line[16];
        int n = snprintf(line, sizeof(line), "%u\n", tw_server_port(srv));
        if ((rc = tw_app_write_file(o.port_file, line, (size_t)n, &err)) != TW_OK) {
            /* Nobody would find the port: stop what was started. */
            tw_server_stop(srv, 1000);
            srv = NULL;
            status = TW_EXIT_FAIL;
            goto fail_msg;
        }
    }
    tw_app_note(TW_CLI_PROG, "serve: listening on %s (database %s; dashboard %s%s); SIGTERM stops it",
                tw_server_url(srv), o.db, so.web_dir ? so.web_dir : "not served",
                so.web_dir ? "" : ": give --web DIR");
    struct tw_server_limits lim;
    tw_server_limits(srv, &lim);
    tw_app_note(TW_CLI_PROG,
                "serve: at most %u connections (%u from one address; %lu open files), request "
                "heads within %u s, %zu bytes of request bodies held at once",
                lim.max_connections, lim.max_connections_per_client, lim.fd_limit,
                lim.header_timeout_ms / 1000, lim.body_memory_max);
    if (!cert && o.listen && strncmp(o.listen, "127.", 4) != 0 &&
        strncmp(o.listen, "localhost", 9) != 0 && strncmp(o.listen, "[::1]", 5) != 0)
        fprintf(stderr,
                "%s serve: note: listening beyond loopback without TLS sends tokens "
                "in clear; give --tls-cert and --tls-key\n",
                TW_CLI_PROG);

    struct tw_server_counts last = {0};
    int sig = 0;
    for (;;) {
        struct timespec ts = {LOG_EVERY_S, 0};
        sig = sigtimedwait(&stop, NULL, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        if (sig < 0 && errno == EAGAIN && !so.log_requests) {
            struct tw_server_counts now;
            tw_server_counts(srv, &now);
            if (now.requests != last.requests)
                tw_app_note(TW_CLI_PROG,
                        "serve: last %d s: %llu requests, %llu reports stored, %llu "
                        "repeated, %llu answered 5xx",
                        LOG_EVERY_S,
                        (unsigned long long)(now.requests - last.requests),
                        (unsigned long long)(now.reports_stored - last.reports_stored),
                        (unsigned long long)(now.reports_repeat - last.reports_repeat),
                        (unsigned long long)(now.errors - last.errors));
            last = now;
        }
    }
    tw_app_note(TW_CLI_PROG, "serve: %s: stopping (requests in flight finish)",
                sig == SIGTERM ? "SIGTERM" : "SIGINT");
    tw_server_stop(srv, 10000);
    tw_app_note(TW_CLI_PROG, "serve: stopped by %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    goto out;
fail_msg:
    tw_app_error(TW_CLI_PROG, "serve: %s", err.msg[0] ? err.msg : tw_strerror(rc));
out:
    json_decref(cfg);
    free(num_buf[0]);
    free(num_buf[1]);
    for (int i = 0; i < N_LIMITS; i++)
        free(o.limit_num[i]);
    wipe_free(cert);
    wipe_free(key);
    if (srv_ran) {
        /* A job that a stop's timeout left running on its detached worker
         * (a sync or a tick blocked in the network) may still hold the
         * credential and the pacer: they stay until the process ends,
         * which it does on return (kept reachable for LeakSanitizer). */
        kept_cred = exec_cred;
        kept_pacer = exec_pacer;
    } else {
        tw_arm_pacer_free(exec_pacer);
        tw_arm_cred_free(exec_cred);
    }
    return status;
}
