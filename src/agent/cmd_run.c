/*
 * cmd_run.c - tierwise-agent run: inventory, benchmarks, and the report
 * posted to the backend, through a spool that never loses one.
 *
 * A cycle: drain what the spool still holds (oldest first), read the
 * inventory, run the configured profiles on each data disk, write the new
 * report into the spool, and drain again, which posts it.  A report leaves
 * the spool only when the server says it is stored (or was stored before:
 * the server knows reports by their UUID, so sending one twice after a
 * lost answer is harmless).  With --once that is all; otherwise a cycle
 * runs every --interval and, in between, the spool is retried with
 * exponential backoff and jitter until it is empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/devmap.h"
#include "agent/report_build.h"
#include "agent/spool.h"
#include "app/app.h"
#include "azure/http.h"
#include "bench/engine.h"
#include "bench/sys.h"
#include "core/report.h"
#include "core/size.h"

/* Exit statuses of run beyond the shared 0, 1, 2, 3 and 130. */
#define EXIT_SPOOL_FULL 4 /* this cycle's report could not be kept */
#define EXIT_REJECTED 5   /* the server refused a report as bad: set aside */
#define EXIT_REFUSED 6    /* the server refused the token or the URL: kept */

#define TOKEN_MAX 4096
#define REPORTS_PATH "/api/v1/reports"

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
        "                         the file must be readable by its owner only (chmod 600)\n\n"
        "What to measure:\n"
        "  --profiles A,B         profiles per data disk (default rated-iops,rated-throughput;\n"
        "                         \"none\": an inventory-only report; bench --list-profiles)\n"
        "  --runtime DURATION     measured time per profile (default: the profile's, 30s)\n"
        "  --ramp DURATION        warm-up per profile (default: the profile's)\n"
        "  --file-target LUN=PATH measure data disk LUN on a file on its filesystem\n"
        "                         (laid out once, reused; write profiles allowed); without\n"
        "                         it a disk is read on its block device, read-only.\n"
        "                         Repeat for more disks\n"
        "  --file-size SIZE       size of a file target (default 1G)\n"
        "  --engine NAME          libaio, psync or null instead of the profile's (null moves\n"
        "                         no data: for trying the setup)\n"
        "  --buffered             no O_DIRECT (results then say direct=false)\n\n"
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
        "  --interval DURATION    without --once: a cycle this often (default 24h)\n"
        "  --retry-min DURATION   first wait before retrying the spool (default 1m),\n"
        "  --retry-max DURATION   doubled per failure up to this (default 1h), jittered\n"
        "  -h, --help             this text\n\n"
        "Without --once the agent runs until SIGTERM or SIGINT, then exits 0 (or 2 when\n"
        "the first cycle finds bad usage or input).\n"
        "Exit status (--once, and the spool actions):\n"
        "  0   the report was delivered, or spooled because the backend could not be\n"
        "      reached or answered 5xx/429 (the next run sends it)\n"
        "  1   the work failed: a benchmark, IMDS, the spool file, another agent on it\n"
        "  2   bad usage or input: an option, the URL, the token file, a spool file\n"
        "      that is not a spool\n"
        "  3   IMDS unreachable: not an Azure VM\n"
        "  4   the spool is full: this cycle's report was not kept\n"
        "  5   the server rejected a report as bad: it is set aside in the spool\n"
        "  6   the server refused the token or the URL (401/403/404/405, a redirect,\n"
        "      or a 2xx not confirming the report as stored): the reports stay in\n"
        "      the spool\n"
        "  130 interrupted\n"
        "With several, the first of 130 2 6 4 5 3 1.\n",
        TW_AGENT_PROG, TW_AGENT_PROG, TW_SPOOL_DEFAULT_MAX_REPORTS);
}

struct cfg {
    const char *server;
    char url[2048]; /* where reports are posted */
    const char *token_file;
    char spool_path[4096];
    struct tw_spool_opts spool_opts;
    struct tw_agent_bench_plan plan;
    const char *imds, *config, *inventory_file;
    struct tw_devmap_opts dm;
    bool once;
    uint64_t interval_ms, retry_min_ms, retry_max_ms;
};

static volatile sig_atomic_t stop;

#define say(...) tw_app_error(TW_AGENT_PROG, __VA_ARGS__)

/* ---- statuses ---- */

/* Keeps the more important of two exit statuses (see usage). */
static int worse(int a, int b)
{
    static const int order[] = {TW_EXIT_INTERRUPTED, TW_EXIT_USAGE, EXIT_REFUSED,
                                EXIT_SPOOL_FULL, EXIT_REJECTED, TW_AGENT_EXIT_OFF_AZURE,
                                TW_EXIT_FAIL};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (a == order[i] || b == order[i])
            return order[i];
    return a ? a : b;
}

/* ---- inputs ---- */

/* The reports URL from the base URL the user gave. */
static bool make_url(const char *in, char *out, size_t outlen)
{
    size_t skip = strncasecmp(in, "http://", 7) == 0    ? 7
                  : strncasecmp(in, "https://", 8) == 0 ? 8
                                                        : 0;
    if (!skip) {
        say("--server \"%s\": give an http:// or https:// URL, e.g. https://tierwise.example:8443",
            in);
        return false;
    }
    if (!in[skip] || in[skip] == '/' || in[skip] == ':') {
        say("--server \"%s\": the URL has no host", in);
        return false;
    }
    for (const char *p = in; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#') {
            say("--server \"%s\": give the base URL only, without spaces, query or fragment", in);
            return false;
        }
    }
    size_t n = strlen(in);
    while (n > skip && in[n - 1] == '/')
        n--;
    if (n + sizeof(REPORTS_PATH) > outlen) {
        say("--server: the URL is longer than %zu bytes", outlen - sizeof(REPORTS_PATH));
        return false;
    }
    snprintf(out, outlen, "%.*s%s", (int)n, in, REPORTS_PATH);
    return true;
}

/* Reads the token (tw_app_read_token: a file only its owner may read, like
 * ssh's private keys, since the token lets anyone post in this VM's name). */
static int read_token(const char *path, char *tok, size_t toklen)
{
    struct tw_error err = {0};
    enum tw_err rc = tw_app_read_token(path, tok, toklen, &err);
    if (rc == TW_OK)
        return TW_EXIT_OK;
    say("%s", err.msg);
    return rc == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
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

static bool parse_duration(const char *opt, const char *s, uint64_t min_ms, uint64_t *out)
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
    return true;
}

/* ---- delivery ---- */

enum drain_end {
    DRAIN_EMPTY,   /* everything pending was delivered (or set aside) */
    DRAIN_DOWN,    /* the backend could not be reached, or 5xx/429/408 */
    DRAIN_REFUSED, /* 3xx/401/403/404/405, or a URL refused locally */
    DRAIN_FAILED,  /* the spool itself failed */
    DRAIN_STOPPED, /* a signal came */
    DRAIN_REJECTED /* (one report) the server called it bad */
};

struct drain_sum {
    int delivered, repeated, rejected;
    char last_error[512];
};

/* Posts one report; fills HOW ("stored", "already stored") on 2xx. */
static enum drain_end post(struct tw_az_http *http, const char *url, const char *token,
                           const struct tw_spool_entry *e, long *status, char *msg,
                           size_t msglen, char *how, size_t howlen)
{
    char auth[TOKEN_MAX + 32];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    const char *headers[] = {auth, "Content-Type: application/json",
                             "Accept: application/json", NULL};
    struct tw_az_http_resp resp;
    struct tw_error err = {0};
    enum tw_err rc = tw_az_http_request(http, "POST", url, headers, e->body, e->len, &resp, &err);
    memset(auth, 0, sizeof(auth));
    *status = resp.status;
    snprintf(msg, msglen, "%s", err.msg);
    enum drain_end end = DRAIN_EMPTY;
    if (rc == TW_OK || (resp.status >= 200 && resp.status <= 299)) {
        /* Delivered only when the backend says so: 201 "stored" or 200
         * "already stored".  Any other 2xx (a proxy's page, another
         * service at that URL) did not store anything: the report stays,
         * as for a wrong URL. */
        json_t *j = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, NULL);
        const char *s = json_string_value(json_object_get(j, "status"));
        if (s && ((resp.status == 201 && strcmp(s, "stored") == 0) ||
                  (resp.status == 200 && strcmp(s, "already stored") == 0))) {
            snprintf(how, howlen, "%s", s);
        } else {
            snprintf(msg, msglen,
                     "POST %.300s answered %ld without confirming that report %.40s is stored "
                     "(not a tierwise backend?)",
                     url, resp.status, e->id);
            end = DRAIN_REFUSED;
        }
        json_decref(j);
    } else if (resp.net == TW_AZ_NET_BLOCKED) {
        end = DRAIN_REFUSED;
    } else if (resp.status == 0 || resp.status == 408 || resp.status == 429 ||
               resp.status >= 500) {
        end = DRAIN_DOWN;
    } else if ((resp.status >= 300 && resp.status <= 399) || resp.status == 401 ||
               resp.status == 403 || resp.status == 404 || resp.status == 405) {
        /* A redirect (http to https, say), a wrong path or token: the
         * configuration is wrong, not the report. */
        end = DRAIN_REFUSED;
    } else {
        end = DRAIN_REJECTED;
    }
    tw_az_http_resp_cleanup(&resp);
    return end;
}

/* Sends the spool's pending reports, oldest first, until it is empty or
 * the backend fails; a report the server calls bad is set aside. */
static enum drain_end drain(const struct cfg *c, struct tw_spool *sp, struct tw_az_http *http,
                            struct drain_sum *sum)
{
    char token[TOKEN_MAX];
    /* Read each time, so a new token is taken without a restart. */
    if (read_token(c->token_file, token, sizeof(token)) != TW_EXIT_OK)
        return DRAIN_REFUSED;
    enum drain_end end = DRAIN_EMPTY;
    for (;;) {
        if (stop) {
            end = DRAIN_STOPPED;
            break;
        }
        struct tw_spool_entry e;
        struct tw_error err = {0};
        enum tw_err rc = tw_spool_oldest(sp, &e, &err);
        if (rc == TW_ENOENT)
            break;
        if (rc != TW_OK) {
            say("%s", err.msg);
            end = DRAIN_FAILED;
            break;
        }
        long status = 0;
        char msg[512], how[64] = "";
        enum drain_end one =
            post(http, c->url, token, &e, &status, msg, sizeof(msg), how, sizeof(how));
        if (one == DRAIN_EMPTY) {
            rc = tw_spool_delivered(sp, e.seq, &err);
            if (strcmp(how, "already stored") == 0)
                sum->repeated++;
            else
                sum->delivered++;
            fprintf(stderr, "%s: report %s delivered (%s)\n", TW_AGENT_PROG, e.id, how);
        } else if (one == DRAIN_REJECTED) {
            rc = tw_spool_reject(sp, e.seq, status, msg, &err);
            sum->rejected++;
            say("the server rejected report %s as bad (%s); it is set aside in the spool %s "
                "(--spool-list shows it, --spool-retry-rejected queues it again)",
                e.id, msg, c->spool_path);
        } else {
            rc = tw_spool_failed(sp, e.seq, status, msg, &err);
            snprintf(sum->last_error, sizeof(sum->last_error), "%s", msg);
            end = one;
        }
        tw_spool_entry_cleanup(&e);
        if (rc != TW_OK) {
            say("%s", err.msg);
            end = DRAIN_FAILED;
        }
        if (end != DRAIN_EMPTY)
            break;
    }
    memset(token, 0, sizeof(token));
    return end;
}

/* What a drain's end means for the exit status, said once. */
static int drain_status(const struct cfg *c, struct tw_spool *sp, enum drain_end end,
                        const struct drain_sum *sum)
{
    struct tw_spool_stats st = {0};
    struct tw_error err = {0};
    (void)tw_spool_stats(sp, &st, &err);
    int status = sum->rejected ? EXIT_REJECTED : TW_EXIT_OK;
    switch (end) {
    case DRAIN_EMPTY: break;
    case DRAIN_DOWN:
        fprintf(stderr,
                "%s: the backend can't take reports now (%s); %lld report(s) kept in the "
                "spool %s for later\n",
                TW_AGENT_PROG, sum->last_error, (long long)st.pending, c->spool_path);
        break;
    case DRAIN_REFUSED:
        if (sum->last_error[0])
            say("the server refused the agent (%s): check --server and the token in %s "
                "(tierwise token create --role agent); %lld report(s) stay in the spool %s",
                sum->last_error, c->token_file, (long long)st.pending, c->spool_path);
        status = worse(status, EXIT_REFUSED);
        break;
    case DRAIN_FAILED: status = worse(status, TW_EXIT_FAIL); break;
    case DRAIN_STOPPED: status = worse(status, TW_EXIT_INTERRUPTED); break;
    case DRAIN_REJECTED: break;
    }
    return status;
}

/* ---- one cycle ---- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Inventory + benchmarks into a new report in *OUT; an exit status. */
static int make_report(struct cfg *c, struct tw_report **out)
{
    *out = NULL;
    struct tw_report *r = tw_report_new();
    if (!r) {
        say("out of memory for a report");
        return TW_EXIT_FAIL;
    }
    tw_inventory_init(&r->inv);
    int status = c->inventory_file ? tw_agent_inventory_file(c->inventory_file, &r->inv)
                                   : tw_agent_inventory_imds(c->imds, c->config, &r->inv);
    struct tw_error err = {0};
    if (status == TW_EXIT_OK && tw_devmap_apply(&r->inv, &c->dm, NULL, &err) != TW_OK) {
        say("%s", err.msg);
        status = err.code == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
    }
    if (status == TW_EXIT_OK && tw_agent_plan_check(&c->plan, &r->inv, &err) != TW_OK) {
        say("%s", err.msg);
        status = TW_EXIT_USAGE;
    }
    if (status != TW_EXIT_OK) {
        tw_report_free(r);
        return status;
    }
    tw_agent_report_identity(r);
    int failed = 0;
    enum tw_err rc = tw_agent_bench_disks(&c->plan, r, stderr, &failed, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        tw_report_free(r);
        return stop ? TW_EXIT_INTERRUPTED : TW_EXIT_FAIL;
    }
    if (failed)
        say("%d benchmark run(s) failed; the report carries the others", failed);
    *out = r;
    return failed ? TW_EXIT_FAIL : TW_EXIT_OK;
}

static int cycle(struct cfg *c, struct tw_spool *sp, struct tw_az_http *http,
                 enum drain_end *end_out)
{
    struct drain_sum sum = {0};
    enum drain_end end = drain(c, sp, http, &sum);
    int status = TW_EXIT_OK;
    *end_out = end;
    if (end == DRAIN_STOPPED)
        return TW_EXIT_INTERRUPTED;
    if (end == DRAIN_FAILED)
        return TW_EXIT_FAIL;

    /* A full spool that could not be drained can't take this cycle's
     * report: say so now rather than after the benchmarks. */
    struct tw_spool_stats st;
    struct tw_error err = {0};
    if (tw_spool_stats(sp, &st, &err) != TW_OK) {
        say("%s", err.msg);
        return TW_EXIT_FAIL;
    }
    if (st.pending + st.rejected >= st.max_reports || st.bytes >= st.max_bytes) {
        int ds = drain_status(c, sp, end, &sum);
        say("the spool %s is full (%lld pending, %lld rejected, %lld bytes; the bound is %lld "
            "reports or %lld bytes) and the backend does not take them: no new report is made "
            "this time; get the backend reachable, or raise --spool-max / --spool-max-bytes",
            c->spool_path, (long long)st.pending, (long long)st.rejected, (long long)st.bytes,
            (long long)st.max_reports, (long long)st.max_bytes);
        return worse(ds, EXIT_SPOOL_FULL);
    }

    struct tw_report *r = NULL;
    status = make_report(c, &r);
    if (!r)
        return worse(status, drain_status(c, sp, end, &sum));
    char *json = tw_report_to_json(r, 0);
    char id[40];
    snprintf(id, sizeof(id), "%s", r->id);
    size_t n_results = r->n_results;
    tw_report_free(r);
    if (!json) {
        say("out of memory writing the report");
        return TW_EXIT_FAIL;
    }
    enum tw_err rc = tw_spool_put(sp, id, json, strlen(json), wall_ms(), &err);
    free(json);
    if (rc != TW_OK) {
        say("%s", err.msg);
        return worse(status, rc == TW_ERANGE ? EXIT_SPOOL_FULL : TW_EXIT_FAIL);
    }
    fprintf(stderr, "%s: report %s made (%zu results)\n", TW_AGENT_PROG, id, n_results);
    /* Send it now, after any older ones, unless the backend just failed. */
    if (end == DRAIN_EMPTY)
        end = drain(c, sp, http, &sum);
    *end_out = end;
    return worse(status, drain_status(c, sp, end, &sum));
}

/* ---- the loop ---- */

/* Sleeps until DEADLINE (monotonic ms) or a signal. */
static void sleep_until(uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = tw_now_ns() / 1000000u;
        if (stop || now >= deadline_ms)
            return;
        uint64_t left = deadline_ms - now;
        if (left > 200)
            left = 200;
        struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static int serve_forever(struct cfg *c, struct tw_spool *sp, struct tw_az_http *http)
{
    uint64_t rng = (uint64_t)wall_ms() ^ ((uint64_t)getpid() << 32);
    int failures = 0;
    uint64_t now = tw_now_ns() / 1000000u;
    uint64_t next_cycle = now, next_drain = 0;
    bool pending = false, first = true;
    while (!stop) {
        now = tw_now_ns() / 1000000u;
        enum drain_end end = DRAIN_EMPTY;
        bool acted = false;
        if (now >= next_cycle) {
            int st = cycle(c, sp, http, &end);
            /* A setting that is wrong from the start (a --file-target for a
             * LUN the VM lacks) ends the service, so it shows as failed;
             * later it may come from a detached disk, and the loop goes on. */
            if (st == TW_EXIT_USAGE && first)
                return st;
            first = false;
            if (st != TW_EXIT_OK && st != TW_EXIT_INTERRUPTED)
                fprintf(stderr, "%s: this cycle ended with status %d; the next in %llu s\n",
                        TW_AGENT_PROG, st, (unsigned long long)(c->interval_ms / 1000));
            next_cycle = now + c->interval_ms;
            acted = true;
        } else if (pending && now >= next_drain) {
            struct drain_sum sum = {0};
            end = drain(c, sp, http, &sum);
            (void)drain_status(c, sp, end, &sum);
            acted = true;
        }
        if (acted) {
            if (end == DRAIN_EMPTY || end == DRAIN_STOPPED) {
                failures = 0;
                pending = false;
            } else {
                failures++;
                pending = true;
                int64_t wait =
                    tw_spool_backoff_ms(failures, (int64_t)c->retry_min_ms,
                                        (int64_t)c->retry_max_ms, &rng);
                next_drain = tw_now_ns() / 1000000u + (uint64_t)wait;
                fprintf(stderr, "%s: next delivery attempt in %lld s\n", TW_AGENT_PROG,
                        (long long)(wait / 1000));
            }
        }
        sleep_until(pending && next_drain < next_cycle ? next_drain : next_cycle);
    }
    fprintf(stderr, "%s: stopping (signal)\n", TW_AGENT_PROG);
    return TW_EXIT_OK;
}

/* ---- spool actions ---- */

static int spool_action(const struct cfg *c, bool list, bool retry)
{
    struct tw_spool *sp;
    struct tw_error err = {0};
    enum tw_err rc = tw_spool_open(c->spool_path, &c->spool_opts, &sp, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        return rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    if (retry) {
        int64_t n = 0;
        if (tw_spool_retry_rejected(sp, &n, &err) != TW_OK) {
            say("%s", err.msg);
            status = TW_EXIT_FAIL;
        } else {
            fprintf(stderr, "%s: %lld rejected report(s) queued again in %s\n", TW_AGENT_PROG,
                    (long long)n, c->spool_path);
        }
    }
    if (list && status == TW_EXIT_OK) {
        json_t *arr = NULL;
        if (tw_spool_list(sp, &arr, &err) != TW_OK) {
            say("%s", err.msg);
            status = TW_EXIT_FAIL;
        } else {
            char *s = json_dumps(arr, JSON_INDENT(2));
            if (s)
                printf("%s\n", s);
            else
                status = TW_EXIT_FAIL;
            free(s);
            json_decref(arr);
            if (fflush(stdout) != 0)
                status = TW_EXIT_FAIL;
        }
    }
    tw_spool_close(sp);
    return status;
}

/* ---- the command ---- */

int tw_agent_cmd_run(int argc, char **argv)
{
    enum { O_SERVER = 256, O_TOKEN, O_PROFILES, O_RUNTIME, O_RAMP, O_FILE_TARGET, O_FILE_SIZE,
           O_ENGINE, O_BUFFERED, O_IMDS, O_CONFIG, O_INV_FILE, O_SYSFS, O_DEV, O_SPOOL,
           O_SPOOL_MAX, O_SPOOL_BYTES, O_SPOOL_LIST, O_SPOOL_RETRY, O_ONCE, O_INTERVAL,
           O_RETRY_MIN, O_RETRY_MAX };
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cfg *c = calloc(1, sizeof(*c));
    if (!c) {
        say("out of memory");
        return TW_EXIT_FAIL;
    }
    c->interval_ms = 24ull * 3600 * 1000;
    c->retry_min_ms = 60 * 1000;
    c->retry_max_ms = 3600 * 1000;
    const char *spool = NULL, *profiles = "rated-iops,rated-throughput";
    bool list = false, retry = false;
    struct tw_error err = {0};
    long long v;
    uint64_t u;
    int status = TW_EXIT_USAGE;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case O_SERVER: c->server = optarg; break;
        case O_TOKEN: c->token_file = optarg; break;
        case O_PROFILES: profiles = optarg; break;
        case O_RUNTIME:
            if (!parse_duration("--runtime", optarg, 1, &c->plan.runtime_ms))
                goto out;
            c->plan.runtime_set = true;
            break;
        case O_RAMP:
            if (!parse_duration("--ramp", optarg, 0, &c->plan.ramp_ms))
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
        case O_SPOOL: spool = optarg; break;
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
        case O_SPOOL_LIST: list = true; break;
        case O_SPOOL_RETRY: retry = true; break;
        case O_ONCE: c->once = true; break;
        case O_INTERVAL:
            if (!parse_duration("--interval", optarg, 1000, &c->interval_ms))
                goto out;
            break;
        case O_RETRY_MIN:
            if (!parse_duration("--retry-min", optarg, 100, &c->retry_min_ms))
                goto out;
            break;
        case O_RETRY_MAX:
            if (!parse_duration("--retry-max", optarg, 100, &c->retry_max_ms))
                goto out;
            break;
        case 'h':
            usage(stdout);
            status = TW_EXIT_OK;
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
    if (c->inventory_file && (c->imds || c->config)) {
        say("--inventory-file replaces IMDS: leave out --imds-url and --config");
        goto out;
    }
    if (c->retry_max_ms < c->retry_min_ms) {
        say("--retry-max is shorter than --retry-min");
        goto out;
    }
    const char *state_dir = getenv("STATE_DIRECTORY");
    if (spool)
        snprintf(c->spool_path, sizeof(c->spool_path), "%s", spool);
    else if (state_dir && *state_dir && !strchr(state_dir, ':'))
        snprintf(c->spool_path, sizeof(c->spool_path), "%s/spool.db", state_dir);
    else
        snprintf(c->spool_path, sizeof(c->spool_path), "%s", TW_SPOOL_DEFAULT_PATH);

    if (list || retry) {
        status = spool_action(c, list, retry);
        goto out;
    }
    if (!c->server) {
        say("no backend: give --server URL (where tierwise serve listens)");
        goto out;
    }
    if (!c->token_file) {
        say("no token: give --token-file FILE with an agent token (tierwise token create "
            "--role agent)");
        goto out;
    }
    if (!make_url(c->server, c->url, sizeof(c->url)))
        goto out;
    if (tw_agent_plan_profiles(&c->plan, profiles, &err) != TW_OK) {
        say("--profiles: %s", err.msg);
        goto out;
    }
    struct tw_az_http_opts ho;
    tw_az_http_opts_default(&ho);
    if (ho.loopback_only && !tw_az_url_is_loopback(c->url)) {
        say("--server %s is not on 127.0.0.0/8 or ::1, and TIERWISE_LOOPBACK_ONLY is set",
            c->server);
        goto out;
    }
    {
        char token[TOKEN_MAX];
        status = read_token(c->token_file, token, sizeof(token));
        memset(token, 0, sizeof(token));
        if (status != TW_EXIT_OK)
            goto out;
    }
    /* The spool retries over hours; one call only rides out a blip. */
    ho.max_attempts = 3;
    ho.budget_ms = 45000;
    ho.backoff_base_ms = 500;
    ho.backoff_max_ms = 4000;
    ho.max_body = 1u << 20;

    struct tw_spool *sp = NULL;
    enum tw_err rc = tw_spool_open(c->spool_path, &c->spool_opts, &sp, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        status = rc == TW_EIO || rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
        goto out;
    }
    /* One agent at a time per spool: two would measure the same disks at
     * once and each get half.  (flock does not touch SQLite's own locks.) */
    int lock = open(c->spool_path, O_RDONLY | O_CLOEXEC);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) {
        say("another tierwise-agent run is using the spool %s (%s); let it finish, or give "
            "this one --spool another file",
            c->spool_path, lock < 0 ? strerror(errno) : "locked");
        if (lock >= 0)
            close(lock);
        tw_spool_close(sp);
        status = TW_EXIT_FAIL;
        goto out;
    }
    struct tw_az_http *http = tw_az_http_new(&ho, &err);
    if (!http) {
        say("%s", err.msg);
        tw_spool_close(sp);
        close(lock);
        status = TW_EXIT_FAIL;
        goto out;
    }
    stop = 0;
    tw_app_catch_signals(&stop);
    c->plan.interrupt = &stop;
    if (c->once) {
        enum drain_end end;
        status = cycle(c, sp, http, &end);
        struct tw_spool_stats st = {0};
        if (status != TW_EXIT_USAGE && tw_spool_stats(sp, &st, &err) == TW_OK &&
            (st.pending || st.rejected))
            fprintf(stderr, "%s: the spool %s holds %lld pending and %lld rejected report(s)\n",
                    TW_AGENT_PROG, c->spool_path, (long long)st.pending, (long long)st.rejected);
    } else {
        status = serve_forever(c, sp, http);
    }
    tw_az_http_free(http);
    tw_spool_close(sp);
    close(lock); /* after SQLite is done with the file */
out:
    free(c);
    return status;
}
