/*
 * run_opts.c - tierwise-agent run's options: --help, reading them into a
 * struct run_cfg, and the checks of a run that posts to the backend.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/run_int.h"
#include "bench/engine.h"
#include "core/size.h"

#define DEFAULT_MAX_SECONDS_PER_DISK 120
/* The longest --runtime or --ramp: a day. */
#define MAX_PHASE_MS (86400ull * 1000)

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: %s run --server URL --token-file FILE [--once] [options]\n"
        "       %s run --spool-list | --spool-retry-rejected [--spool FILE]\n\n"
        "Reads this VM's inventory, runs benchmark profiles on each data disk, and\n"
        "posts the report (tierwise.report/1) to the backend (tierwise serve). A report\n"
        "the backend can't take now is kept in a local spool and sent later, oldest\n"
        "first, each exactly once.\n\n"
        "Backend:\n"
        "  --server URL           the backend's base URL, e.g. https://tierwise.example:8443\n"
        "                         (reports go to URL" REPORTS_PATH ")\n"
        "  --token-file FILE      the agent token (tierwise token create --role agent);\n"
        "                         the file must be readable by its owner only (chmod 600)\n"
        "Each also comes from the environment (TIERWISE_SERVER, TIERWISE_TOKEN_FILE) or\n"
        "the config file (--config FILE or TIERWISE_CONFIG: a JSON object with \"server\"\n"
        "and \"token_file\", an absolute path); a flag wins over the environment, the\n"
        "environment over the config file.\n\n"
        "What to measure:\n"
        "  --profiles A,B         profiles per data disk (default rated-iops,rated-throughput;\n"
        "                         \"none\": an inventory-only report; bench --list-profiles)\n"
        "  --runtime DURATION     measured time per profile (default: the profile's, 30s;\n"
        "                         at most 1 day)\n"
        "  --ramp DURATION        warm-up per profile (default: the profile's; at most 1 day)\n"
        "  --file-target LUN=PATH measure data disk LUN on a file on its filesystem\n"
        "                         (laid out once, reused; write profiles allowed); without\n"
        "                         it a disk is read on its block device, read-only.\n"
        "                         Repeat for more disks\n"
        "  --file-size SIZE       size of a file target (default 1G)\n"
        "  --engine NAME          libaio, psync or null instead of the profile's (null moves\n"
        "                         no data: for trying the setup)\n"
        "  --buffered             no O_DIRECT (results then say direct=false)\n"
        "  --max-seconds-per-disk N  the most seconds of benchmarks (ramps included) one\n"
        "                         disk may get per cycle (default %d); a plan of more\n"
        "                         is refused before anything runs\n\n"
        "The load on each data disk, by default: rated-iops (random 8 KiB reads, QD\n"
        "256 x 4 jobs, 5 s ramp + 30 s), then rated-throughput (sequential 1 MiB reads,\n"
        "QD 64 x 1 job, 5 s ramp + 30 s): 70 s per disk, one disk after another, read\n"
        "only on block devices (write profiles run only on --file-target files). On a\n"
        "disk with credit bursting (Premium P1-P20, Standard SSD E1-E30) 70 s at the\n"
        "burst rate uses at most 4 %% of a full 30-minute bucket, and a result above\n"
        "the disk's rating is judged \"burst\" by the backend, not \"delivers\".\n"
        "A disk whose device is not known for certain (two disks on one device, a\n"
        "device whose size is not the disk's) is not measured, with a line saying so.\n\n"
        "Inventory (as tierwise-agent inventory):\n"
        "  --imds-url URL, --config FILE, --inventory-file FILE,\n"
        "  --sysfs-root DIR, --dev-root DIR\n\n"
        "Spool:\n"
        "  --spool FILE           default $STATE_DIRECTORY/spool.db when systemd sets it,\n"
        "                         else " TW_SPOOL_DEFAULT_PATH "\n"
        "  --spool-max N          at most N reports kept (default %d)\n"
        "  --spool-max-bytes SIZE at most SIZE of reports kept (default 256M)\n"
        "  --spool-list           print the spool's entries as JSON and exit\n"
        "  --spool-retry-rejected queue the reports the server rejected again, and exit\n\n"
        "Schedule:\n"
        "  --once                 one cycle (drain the spool, measure, post) and exit\n"
        "Output (stderr; stdout stays empty but for --spool-list):\n"
        "  -q, --quiet            only warnings and errors: no progress line, no line\n"
        "                         per result, report or delivery\n"
        "  -v, --verbose          also where the server and token file came from and\n"
        "                         the plan per disk\n"
        "  --version              print the version and exit\n"
        "On a terminal a progress line shows the disk, the profile and its seconds\n"
        "left.\n\n"
        "  --interval DURATION    without --once: a cycle this often (default 24h)\n"
        "  --retry-min DURATION   first wait before retrying the spool (default 1m),\n"
        "  --retry-max DURATION   doubled per failure up to this (default 1h), jittered\n"
        "  -h, --help             this text\n\n"
        "Without --once the agent runs until SIGTERM or SIGINT, then exits 0 (or 2 when\n"
        "the first cycle finds bad usage or input).\n"
        "Exit status (--once, and the spool actions):\n"
        "  0   the report was delivered (stored, or already stored)\n"
        "  1   the work failed: a benchmark, IMDS, the spool file, another agent on it\n"
        "  2   bad usage or input: an option, the URL, the token file, a spool file\n"
        "      that is not a spool\n"
        "  3   IMDS unreachable: not an Azure VM\n"
        "  4   the spool is full: this cycle's report was not kept\n"
        "  5   the server rejected a report as bad: it is set aside in the spool\n"
        "  6   the server refused the token or the URL (401/403/404/405, a redirect,\n"
        "      or a 2xx not confirming the report as stored): the reports stay in\n"
        "      the spool\n"
        "  7   nothing delivered: the backend could not be reached or answered\n"
        "      5xx/429/408, and this cycle's report waits in the spool (the next run\n"
        "      sends it; nothing is lost)\n"
        "  130 interrupted\n"
        "With several, the first of 130 2 6 4 5 3 1 7.\n",
        TW_AGENT_PROG, TW_AGENT_PROG, DEFAULT_MAX_SECONDS_PER_DISK, TW_SPOOL_DEFAULT_MAX_REPORTS);
}

/* The reports URL from the base URL the user gave (WHERE names where it
 * came from: "--server", "TIERWISE_SERVER", the config file). */
static bool make_url(const char *in, const char *where, char *out, size_t outlen)
{
    size_t skip = strncasecmp(in, "http://", 7) == 0    ? 7
                  : strncasecmp(in, "https://", 8) == 0 ? 8
                                                        : 0;
    if (!skip) {
        say("%s \"%s\": give an http:// or https:// URL, e.g. https://tierwise.example:8443",
            where, in);
        return false;
    }
    if (!in[skip] || in[skip] == '/' || in[skip] == ':') {
        say("%s \"%s\": the URL has no host", where, in);
        return false;
    }
    for (const char *p = in; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#') {
            say("%s \"%s\": give the base URL only, without spaces, query or fragment", where,
                in);
            return false;
        }
    }
    size_t n = strlen(in);
    while (n > skip && in[n - 1] == '/')
        n--;
    if (n + sizeof(REPORTS_PATH) > outlen) {
        say("%s: the URL is longer than %zu bytes", where, outlen - sizeof(REPORTS_PATH));
        return false;
    }
    snprintf(out, outlen, "%.*s%s", (int)n, in, REPORTS_PATH);
    return true;
}

static bool parse_count(const char *opt, const char *s, long long lo, long long hi,
                        long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        say("%s \"%s\": give a whole number from %lld to %lld", opt, s, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_duration(const char *opt, const char *s, uint64_t min_ms, uint64_t max_ms,
                           uint64_t *out)
{
    struct tw_error err = {0};
    if (tw_duration_parse(s, out, &err) != TW_OK) {
        say("%s: %s", opt, err.msg);
        return false;
    }
    if (*out < min_ms) {
        say("%s %s: give at least %llu ms", opt, s, (unsigned long long)min_ms);
        return false;
    }
    /* A day at most: no benchmark lasts longer, and the plan's sum of
     * such figures can't wrap round past --max-seconds-per-disk. */
    if (max_ms && *out > max_ms) {
        say("%s %s: give at most %llu s", opt, s, (unsigned long long)(max_ms / 1000));
        return false;
    }
    return true;
}

bool run_parse_options(int argc, char **argv, struct run_cfg *c, int *status)
{
    enum { O_SERVER = 256, O_TOKEN, O_PROFILES, O_RUNTIME, O_RAMP, O_FILE_TARGET, O_FILE_SIZE,
           O_ENGINE, O_BUFFERED, O_IMDS, O_CONFIG, O_INV_FILE, O_SYSFS, O_DEV, O_SPOOL,
           O_SPOOL_MAX, O_SPOOL_BYTES, O_SPOOL_LIST, O_SPOOL_RETRY, O_ONCE, O_INTERVAL,
           O_RETRY_MIN, O_RETRY_MAX, O_VERSION, O_MAX_SECONDS };
    static const struct option opts[] = {
        {"server", required_argument, NULL, O_SERVER},
        {"token-file", required_argument, NULL, O_TOKEN},
        {"profiles", required_argument, NULL, O_PROFILES},
        {"runtime", required_argument, NULL, O_RUNTIME},
        {"ramp", required_argument, NULL, O_RAMP},
        {"file-target", required_argument, NULL, O_FILE_TARGET},
        {"file-size", required_argument, NULL, O_FILE_SIZE},
        {"engine", required_argument, NULL, O_ENGINE},
        {"buffered", no_argument, NULL, O_BUFFERED},
        {"imds-url", required_argument, NULL, O_IMDS},
        {"config", required_argument, NULL, O_CONFIG},
        {"inventory-file", required_argument, NULL, O_INV_FILE},
        {"sysfs-root", required_argument, NULL, O_SYSFS},
        {"dev-root", required_argument, NULL, O_DEV},
        {"spool", required_argument, NULL, O_SPOOL},
        {"spool-max", required_argument, NULL, O_SPOOL_MAX},
        {"spool-max-bytes", required_argument, NULL, O_SPOOL_BYTES},
        {"spool-list", no_argument, NULL, O_SPOOL_LIST},
        {"spool-retry-rejected", no_argument, NULL, O_SPOOL_RETRY},
        {"once", no_argument, NULL, O_ONCE},
        {"interval", required_argument, NULL, O_INTERVAL},
        {"retry-min", required_argument, NULL, O_RETRY_MIN},
        {"retry-max", required_argument, NULL, O_RETRY_MAX},
        {"max-seconds-per-disk", required_argument, NULL, O_MAX_SECONDS},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    c->interval_ms = 24ull * 3600 * 1000;
    c->retry_min_ms = 60 * 1000;
    c->retry_max_ms = 3600 * 1000;
    c->profiles = "rated-iops,rated-throughput";
    c->plan.max_ms_per_disk = DEFAULT_MAX_SECONDS_PER_DISK * 1000ull;
    struct tw_error err = {0};
    long long v;
    uint64_t u;
    *status = TW_EXIT_USAGE;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (ch) {
        case O_SERVER: c->server = optarg; break;
        case O_TOKEN: c->token_file = optarg; break;
        case O_PROFILES: c->profiles = optarg; break;
        case O_RUNTIME:
            if (!parse_duration("--runtime", optarg, 1, MAX_PHASE_MS, &c->plan.runtime_ms))
                goto out;
            c->plan.runtime_set = true;
            break;
        case O_RAMP:
            if (!parse_duration("--ramp", optarg, 0, MAX_PHASE_MS, &c->plan.ramp_ms))
                goto out;
            c->plan.ramp_set = true;
            break;
        case O_FILE_TARGET:
            if (tw_agent_plan_file(&c->plan, optarg, &err) != TW_OK) {
                say("%s", err.msg);
                goto out;
            }
            break;
        case O_FILE_SIZE:
            if (tw_size_parse(optarg, &u, &err) != TW_OK) {
                say("--file-size: %s", err.msg);
                goto out;
            }
            if (u < (1u << 20)) {
                say("--file-size %s: give at least 1M", optarg);
                goto out;
            }
            c->plan.file_size = u;
            break;
        case O_ENGINE:
            if (!tw_engine_find(optarg, &err)) {
                say("--engine: %s", err.msg);
                goto out;
            }
            c->plan.engine = optarg;
            break;
        case O_BUFFERED: c->plan.buffered = true; break;
        case O_IMDS: c->imds = optarg; break;
        case O_CONFIG: c->config = optarg; break;
        case O_INV_FILE: c->inventory_file = optarg; break;
        case O_SYSFS: c->dm.sysfs_root = c->plan.sysfs_root = optarg; break;
        case O_DEV: c->dm.dev_root = optarg; break;
        case O_SPOOL: c->spool = optarg; break;
        case O_SPOOL_MAX:
            if (!parse_count("--spool-max", optarg, 1, 100000000, &v))
                goto out;
            c->spool_opts.max_reports = v;
            break;
        case O_SPOOL_BYTES:
            if (tw_size_parse(optarg, &u, &err) != TW_OK) {
                say("--spool-max-bytes: %s", err.msg);
                goto out;
            }
            if (u < 1024 || u > (1ull << 50)) {
                say("--spool-max-bytes %s: give 1K to 1P", optarg);
                goto out;
            }
            c->spool_opts.max_bytes = (int64_t)u;
            break;
        case O_SPOOL_LIST: c->list = true; break;
        case O_SPOOL_RETRY: c->retry = true; break;
        case O_ONCE: c->once = true; break;
        case O_INTERVAL:
            if (!parse_duration("--interval", optarg, 1000, 0, &c->interval_ms))
                goto out;
            break;
        case O_RETRY_MIN:
            if (!parse_duration("--retry-min", optarg, 100, 0, &c->retry_min_ms))
                goto out;
            break;
        case O_RETRY_MAX:
            if (!parse_duration("--retry-max", optarg, 100, 0, &c->retry_max_ms))
                goto out;
            break;
        case O_MAX_SECONDS:
            if (!parse_count("--max-seconds-per-disk", optarg, 1, 86400, &v))
                goto out;
            c->plan.max_ms_per_disk = (uint64_t)v * 1000;
            break;
        case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;
        case 'v': tw_app_set_verbosity(TW_APP_VERBOSE); break;
        case O_VERSION:
            *status = tw_app_print_version(TW_AGENT_PROG);
            goto out;
        case 'h':
            usage(stdout);
            *status = TW_EXIT_OK;
            goto out;
        default:
            say("run: \"%s\" is an unknown option or lacks its value; run --help lists the "
                "options",
                argv[optind - 1]);
            goto out;
        }
    }
    if (optind < argc) {
        say("unexpected argument \"%s\"; see run --help", argv[optind]);
        goto out;
    }
    if (c->inventory_file && c->imds) {
        say("--inventory-file replaces IMDS: leave out --imds-url");
        goto out;
    }
    if (c->retry_max_ms < c->retry_min_ms) {
        say("--retry-max is shorter than --retry-min");
        goto out;
    }
    const char *state_dir = getenv("STATE_DIRECTORY");
    if (c->spool)
        snprintf(c->spool_path, sizeof(c->spool_path), "%s", c->spool);
    else if (state_dir && *state_dir && !strchr(state_dir, ':'))
        snprintf(c->spool_path, sizeof(c->spool_path), "%s/spool.db", state_dir);
    else
        snprintf(c->spool_path, sizeof(c->spool_path), "%s", TW_SPOOL_DEFAULT_PATH);
    return true;
out:
    return false;
}

/* The plan's time on one disk: every profile's ramp and runtime. */
static uint64_t plan_ms_per_disk(const struct tw_agent_bench_plan *p)
{
    /* Saturating: a sum that wrapped round would pass any bound. */
    uint64_t ms = 0;
    for (size_t i = 0; i < p->n_profiles; i++) {
        uint64_t parts[2] = {p->ramp_set ? p->ramp_ms : p->profiles[i]->ramp_ms,
                             p->runtime_set ? p->runtime_ms : p->profiles[i]->runtime_ms};
        for (int k = 0; k < 2; k++)
            ms = parts[k] > UINT64_MAX - ms ? UINT64_MAX : ms + parts[k];
    }
    return ms;
}

/* The plan fits --max-seconds-per-disk, or it is refused with its sum;
 * -v says the load per disk. */
static bool plan_within_bound(const struct tw_agent_bench_plan *p)
{
    uint64_t ms = plan_ms_per_disk(p);
    char what[1024] = "";
    size_t o = 0;
    for (size_t i = 0; i < p->n_profiles && o < sizeof(what) - 1; i++) {
        const struct tw_profile *pr = p->profiles[i];
        o += (size_t)snprintf(what + o, sizeof(what) - o, "%s%s %.0f s + %.0f s ramp, QD %u x %u",
                              i ? "; " : "", pr->name,
                              (double)(p->runtime_set ? p->runtime_ms : pr->runtime_ms) / 1e3,
                              (double)(p->ramp_set ? p->ramp_ms : pr->ramp_ms) / 1e3,
                              pr->queue_depth, pr->jobs);
    }
    if (p->max_ms_per_disk && ms > p->max_ms_per_disk) {
        say("the plan takes %.0f s per disk (%s), more than --max-seconds-per-disk %llu: give "
            "fewer --profiles or a shorter --runtime / --ramp, or raise the bound",
            (double)ms / 1e3, what, (unsigned long long)(p->max_ms_per_disk / 1000));
        return false;
    }
    if (p->n_profiles)
        tw_app_detail(TW_AGENT_PROG, "the load on each data disk: %s (%.0f s; the bound is %llu s)",
                      what, (double)ms / 1e3, (unsigned long long)(p->max_ms_per_disk / 1000));
    return true;
}

/* An environment variable's value, NULL when unset or empty. */
static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The backend's URL and the token file: each from its flag, else its
 * environment variable, else the config file (read only when one of them
 * is still missing).  False with *STATUS when the config file is bad. */
static bool resolve_backend(struct run_cfg *c, int *status)
{
    const char *v;
    if (c->server)
        snprintf(c->server_from, sizeof(c->server_from), "--server");
    else if ((v = env_value("TIERWISE_SERVER"))) {
        c->server = v;
        snprintf(c->server_from, sizeof(c->server_from), "TIERWISE_SERVER");
    }
    if (c->token_file)
        snprintf(c->token_from, sizeof(c->token_from), "--token-file");
    else if ((v = env_value("TIERWISE_TOKEN_FILE"))) {
        c->token_file = v;
        snprintf(c->token_from, sizeof(c->token_from), "TIERWISE_TOKEN_FILE");
    }
    const char *cfg = c->config ? c->config : env_value("TIERWISE_CONFIG");
    if ((c->server && c->token_file) || !cfg)
        return true;
    struct tw_buf b;
    struct tw_error err = {0};
    tw_buf_init(&b, 1u << 20);
    enum tw_err rc = tw_app_read_file(cfg, &b, &err);
    if (rc == TW_OK)
        rc = tw_agent_config_parse(b.data, b.len, cfg, &c->file_cfg, &err);
    tw_buf_cleanup(&b);
    if (rc != TW_OK) {
        say("%s (the config file, from %s)", err.msg, c->config ? "--config" : "TIERWISE_CONFIG");
        *status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
        return false;
    }
    if (!c->server && c->file_cfg.server[0]) {
        c->server = c->file_cfg.server;
        snprintf(c->server_from, sizeof(c->server_from), "\"server\" in %s", cfg);
    }
    if (!c->token_file && c->file_cfg.token_file[0]) {
        c->token_file = c->file_cfg.token_file;
        snprintf(c->token_from, sizeof(c->token_from), "\"token_file\" in %s", cfg);
    }
    return true;
}

bool run_check_backend(struct run_cfg *c, struct tw_az_http_opts *ho, int *status)
{
    struct tw_error err = {0};
    *status = TW_EXIT_USAGE;
    if (!resolve_backend(c, status))
        goto out;
    *status = TW_EXIT_USAGE;
    if (!c->server) {
        say("no backend: give --server URL (where tierwise serve listens), or set "
            "TIERWISE_SERVER, or \"server\" in the config file (--config, TIERWISE_CONFIG)");
        goto out;
    }
    if (!c->token_file) {
        say("no token: give --token-file FILE with an agent token (tierwise token create "
            "--role agent), or set TIERWISE_TOKEN_FILE, or \"token_file\" in the config file");
        goto out;
    }
    if (!make_url(c->server, c->server_from, c->url, sizeof(c->url)))
        goto out;
    tw_app_detail(TW_AGENT_PROG, "backend %s (from %s); token file %s (from %s)", c->server,
                  c->server_from, c->token_file, c->token_from);
    if (tw_agent_plan_profiles(&c->plan, c->profiles, &err) != TW_OK) {
        say("--profiles: %s", err.msg);
        goto out;
    }
    if (!plan_within_bound(&c->plan))
        goto out;
    tw_az_http_opts_default(ho);
    if (ho->loopback_only && !tw_az_url_is_loopback(c->url)) {
        say("%s %s is not on 127.0.0.0/8 or ::1, and TIERWISE_LOOPBACK_ONLY is set",
            c->server_from, c->server);
        goto out;
    }
    {
        char token[TOKEN_MAX];
        *status = run_read_token(c->token_file, c->token_from, token, sizeof(token));
        memset(token, 0, sizeof(token));
        if (*status != TW_EXIT_OK)
            goto out;
    }
    return true;
out:
    return false;
}
