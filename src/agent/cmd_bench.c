/*
 * cmd_bench.c - tierwise-agent bench: run a profile against a target.
 *
 * Diagnostics and the progress line go to stderr (the progress line only
 * when stdout is a terminal); the result goes to stdout, as text or, with
 * --json, as one JSON document and nothing else.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/job.h"
#include "bench/profile.h"
#include "bench/target.h"
#include "core/result_text.h"
#include "core/size.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s bench --target PATH --profile NAME [options]\n"
            "       %s bench --target PATH --rw PATTERN --bs SIZE [--qd N] [--jobs N] ...\n"
            "       %s bench --list-profiles\n\n"
            "Benchmarks a file or a block device with direct I/O and prints what it\n"
            "delivered: IOPS, MB/s (10^6 bytes/s, Azure's unit), latency percentiles.\n\n"
            "Target:\n"
            "  --target PATH        a file on the disk under test (laid out with random\n"
            "                       data first, reused when already laid out) or a block\n"
            "                       device such as /dev/sdc (read-only by default)\n"
            "  --size SIZE          bytes of the target to use; a new file defaults to 1G\n"
            "  --allow-destructive  allow write profiles on a block device (never on one\n"
            "                       that is mounted or part of LVM/MD), and laying out\n"
            "                       random data over an existing file that isn't fully\n"
            "                       written (sparse, or shorter than --size)\n"
            "  --buffered           no O_DIRECT (the page cache is measured too; the\n"
            "                       result says direct=false)\n\n"
            "Method:\n"
            "  --profile NAME       a named method; --list-profiles shows them\n"
            "  --runtime DURATION   measured time (default: the profile's, 30s)\n"
            "  --ramp DURATION      warm-up excluded from the figures (default: profile's)\n"
            "  --io-size SIZE       stop each job after SIZE bytes (size-based run;\n"
            "                       with --runtime 0 this is the only end)\n"
            "  --rw PATTERN         randread, randwrite, randrw, read, write or rw\n"
            "  --bs SIZE            bytes per I/O, e.g. 8k, 1M\n"
            "  --qd N               I/Os in flight per job\n"
            "  --jobs N             parallel jobs (threads)\n"
            "  --read-pct N         share of reads in randrw/rw (default 75 for custom)\n"
            "  --engine NAME        libaio, psync or null (null moves no data)\n"
            "  --seed N             offsets generator seed (default random)\n"
            "Any of --rw --bs --qd --jobs --read-pct --engine changes the method, so the\n"
            "result is recorded as profile \"custom\".\n\n"
            "Output:\n"
            "  --json               the result as JSON (tierwise.bench-result/1) on stdout;\n"
            "                       with --list-profiles, the profiles as a JSON array\n"
            "  -q, --quiet          no progress line and no notes on stderr (errors and\n"
            "                       I/O error counts are still said)\n"
            "  -v, --verbose        also say the method, the target (device, direct I/O,\n"
            "                       bytes used) and the engine before the run, on a\n"
            "                       terminal or not\n"
            "  --version            print the version and exit\n"
            "  -h, --help           this text\n\n"
            "Exit status: 0 done, 1 the run failed (also when every I/O failed), 2 bad\n"
            "input (the message says what to change), 130 interrupted.\n",
            TW_AGENT_PROG, TW_AGENT_PROG, TW_AGENT_PROG);
}

/* The profiles as a JSON array on stdout: name, what for, the method and
 * the default times. */
static int list_profiles_json(void)
{
    json_t *arr = json_array();
    const struct tw_profile *p;
    for (unsigned i = 0; arr && (p = tw_profile_at(i)); i++) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:b}",
                              "name", p->name, "summary", p->summary, "engine", p->engine,
                              "pattern", tw_pattern_name(p->pattern), "block_size",
                              (json_int_t)p->block_size, "queue_depth",
                              (json_int_t)p->queue_depth, "jobs", (json_int_t)p->jobs,
                              "read_pct", (json_int_t)p->read_pct, "runtime_s",
                              (double)p->runtime_ms / 1e3, "ramp_s", (double)p->ramp_ms / 1e3,
                              "writes", tw_profile_writes(p));
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    char *text = arr ? json_dumps(arr, JSON_INDENT(2)) : NULL;
    json_decref(arr);
    if (!text) {
        tw_app_error(TW_AGENT_PROG, "out of memory listing the profiles");
        return TW_EXIT_FAIL;
    }
    puts(text);
    free(text);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_AGENT_PROG, "writing the profiles to standard output failed: %s",
                     strerror(errno));
        return TW_EXIT_FAIL;
    }
    return TW_EXIT_OK;
}

static void list_profiles(void)
{
    char bs[32];
    printf("%-24s %-8s %-10s %-8s %-5s %-5s %s\n", "PROFILE", "ENGINE", "PATTERN", "BS", "QD",
           "JOBS", "WHAT FOR");
    const struct tw_profile *p;
    for (unsigned i = 0; (p = tw_profile_at(i)); i++)
        printf("%-24s %-8s %-10s %-8s %-5u %-5u %s%s\n", p->name, p->engine,
               tw_pattern_name(p->pattern), tw_size_format(p->block_size, bs, sizeof(bs)),
               p->queue_depth, p->jobs, p->summary,
               tw_profile_writes(p) ? " [writes: files, or --allow-destructive]" : "");
}

static void progress(const struct tw_progress *p, void *arg)
{
    (void)arg;
    if (p->ramping)
        fprintf(stderr, "\r  %5.0f s  ramping up ...                                   ",
                p->elapsed_s);
    else if (p->total_s > 0)
        fprintf(stderr, "\r  %5.0f s  %10.0f IOPS  %9.2f MB/s  ETA %4.0f s   ", p->elapsed_s,
                p->iops, p->mbps, p->total_s > p->elapsed_s ? p->total_s - p->elapsed_s : 0);
    else
        fprintf(stderr, "\r  %5.0f s  %10.0f IOPS  %9.2f MB/s            ", p->elapsed_s,
                p->iops, p->mbps);
    fflush(stderr);
}

static void layout_progress(uint64_t done, uint64_t total, void *arg)
{
    (void)arg;
    if (done == total || done % (256u << 20) == 0) {
        fprintf(stderr, "\r  laying out: %3.0f %%", 100.0 * (double)done / (double)total);
        if (done == total)
            fputc('\n', stderr);
        fflush(stderr);
    }
}

/* Reads a whole non-negative number (digits only) into *OUT; false for
 * anything else, or past ULONG_MAX. */
static bool read_uint(const char *s, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] < '0' || s[0] > '9')
        return false;
    *out = v;
    return true;
}

/* Parses a whole non-negative number into *OUT within [LO, HI]. */
static bool parse_uint(const char *opt, const char *s, unsigned long lo, unsigned long hi,
                       unsigned long *out)
{
    unsigned long v;
    if (!read_uint(s, &v) || v < lo || v > hi) {
        tw_app_error(TW_AGENT_PROG, "%s \"%s\": give a whole number from %lu to %lu", opt, s,
                     lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static volatile sig_atomic_t interrupted;

int tw_agent_cmd_bench(int argc, char **argv)
{
    enum { O_TARGET = 256, O_PROFILE, O_LIST, O_RUNTIME, O_RAMP, O_SIZE, O_IOSIZE, O_RW,
           O_BS, O_QD, O_JOBS, O_READPCT, O_ENGINE, O_SEED, O_DESTRUCTIVE, O_BUFFERED,
           O_JSON, O_FAIL, O_VERSION };
    static const struct option opts[] = {
        {"target", required_argument, NULL, O_TARGET},
        {"profile", required_argument, NULL, O_PROFILE},
        {"list-profiles", no_argument, NULL, O_LIST},
        {"runtime", required_argument, NULL, O_RUNTIME},
        {"ramp", required_argument, NULL, O_RAMP},
        {"size", required_argument, NULL, O_SIZE},
        {"io-size", required_argument, NULL, O_IOSIZE},
        {"rw", required_argument, NULL, O_RW},
        {"bs", required_argument, NULL, O_BS},
        {"qd", required_argument, NULL, O_QD},
        {"jobs", required_argument, NULL, O_JOBS},
        {"read-pct", required_argument, NULL, O_READPCT},
        {"engine", required_argument, NULL, O_ENGINE},
        {"seed", required_argument, NULL, O_SEED},
        {"allow-destructive", no_argument, NULL, O_DESTRUCTIVE},
        {"buffered", no_argument, NULL, O_BUFFERED},
        {"json", no_argument, NULL, O_JSON},
        {"null-fail-every", required_argument, NULL, O_FAIL}, /* tests only */
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *target = NULL, *profile_name = NULL, *rw = NULL, *engine_name = NULL;
    const char *runtime = NULL, *ramp = NULL;
    uint64_t size = 0, io_size = 0, bs = 0, seed = 0;
    unsigned long qd = 0, jobs = 0, read_pct = 101, fail_every = 0, tmp;
    bool json = false, destructive = false, buffered = false, custom = false, list = false;
    struct tw_error err = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case O_TARGET: target = optarg; break;
        case O_PROFILE: profile_name = optarg; break;
        case O_LIST: list = true; break;
        case O_RUNTIME: runtime = optarg; break;
        case O_RAMP: ramp = optarg; break;
        case O_SIZE:
            if (tw_size_parse(optarg, &size, &err) != TW_OK) {
                if (err.code == TW_EINVAL)
                    tw_app_error(TW_AGENT_PROG, "--size \"%s\" is not a size; write it like 8k, "
                                 "1M or 10G (k, M, G are powers of 1024; KB, MB, GB of 1000)",
                                 optarg);
                else
                    tw_app_error(TW_AGENT_PROG, "--size: %s", err.msg);
                return TW_EXIT_USAGE;
            }
            if (size == 0) {
                tw_app_error(TW_AGENT_PROG, "--size %s: give more than 0 bytes", optarg);
                return TW_EXIT_USAGE;
            }
            break;
        case O_IOSIZE:
            if (tw_size_parse(optarg, &io_size, &err) != TW_OK) {
                tw_app_error(TW_AGENT_PROG, "--io-size: %s", err.msg);
                return TW_EXIT_USAGE;
            }
            break;
        case O_RW: rw = optarg; custom = true; break;
        case O_BS:
            if (tw_size_parse(optarg, &bs, &err) != TW_OK) {
                tw_app_error(TW_AGENT_PROG, "--bs: %s", err.msg);
                return TW_EXIT_USAGE;
            }
            if (bs == 0 || bs > (64u << 20)) {
                tw_app_error(TW_AGENT_PROG, "--bs %s: give 512 bytes to 64M", optarg);
                return TW_EXIT_USAGE;
            }
            custom = true;
            break;
        case O_QD:
            if (read_uint(optarg, &qd) && qd == 0) {
                tw_app_error(TW_AGENT_PROG, "--qd 0: the queue depth is the number of I/Os "
                             "in flight; give 1 to 65536 (rated figures need 32 or more)");
                return TW_EXIT_USAGE;
            }
            if (!parse_uint("--qd", optarg, 1, 65536, &qd))
                return TW_EXIT_USAGE;
            custom = true;
            break;
        case O_JOBS:
            if (!parse_uint("--jobs", optarg, 1, 1024, &jobs))
                return TW_EXIT_USAGE;
            custom = true;
            break;
        case O_READPCT:
            if (!parse_uint("--read-pct", optarg, 0, 100, &read_pct))
                return TW_EXIT_USAGE;
            custom = true;
            break;
        case O_ENGINE: engine_name = optarg; custom = true; break;
        case O_SEED:
            if (!parse_uint("--seed", optarg, 1, (unsigned long)-1, &tmp))
                return TW_EXIT_USAGE;
            seed = tmp;
            break;
        case O_DESTRUCTIVE: destructive = true; break;
        case O_BUFFERED: buffered = true; break;
        case O_JSON: json = true; break;
        case O_FAIL:
            if (!parse_uint("--null-fail-every", optarg, 1, 1000000000, &fail_every))
                return TW_EXIT_USAGE;
            break;
        case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;
        case 'v': tw_app_set_verbosity(TW_APP_VERBOSE); break;
        case O_VERSION: return tw_app_print_version(TW_AGENT_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (list && optind == argc) {
        if (json)
            return list_profiles_json();
        list_profiles();
        return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
    }
    if (optind < argc) {
        tw_app_error(TW_AGENT_PROG, "unexpected argument \"%s\"; see bench --help", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!target) {
        tw_app_error(TW_AGENT_PROG, "no target: give --target with a file on the disk to "
                     "test, or a block device like /dev/sdc");
        return TW_EXIT_USAGE;
    }

    /* The method: a profile, possibly changed by custom options. */
    static const struct tw_profile custom_base = {
        "custom", "", "libaio", TW_PAT_RANDREAD, 8192, 32, 1, 75, 30000, 2000};
    const struct tw_profile *prof = &custom_base;
    if (profile_name && !(prof = tw_profile_find(profile_name, &err))) {
        tw_app_error(TW_AGENT_PROG, "%s", err.msg);
        return TW_EXIT_USAGE;
    }
    if (!profile_name && !custom) {
        tw_app_error(TW_AGENT_PROG, "no method: give --profile NAME (--list-profiles shows "
                     "them) or a custom one with --rw and --bs");
        return TW_EXIT_USAGE;
    }
    struct tw_job_params p = {0};
    p.pattern = prof->pattern;
    if (rw && tw_pattern_parse(rw, &p.pattern) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--rw \"%s\": choose randread, randwrite, randrw, read, "
                     "write or rw", rw);
        return TW_EXIT_USAGE;
    }
    if (!(p.engine = tw_engine_find(engine_name ? engine_name : prof->engine, &err))) {
        tw_app_error(TW_AGENT_PROG, "--engine: %s", err.msg);
        return TW_EXIT_USAGE;
    }
    p.block_size = bs ? (uint32_t)bs : prof->block_size;
    p.queue_depth = qd ? (unsigned)qd : prof->queue_depth;
    p.jobs = jobs ? (unsigned)jobs : prof->jobs;
    p.read_pct = read_pct <= 100 ? (unsigned)read_pct : prof->read_pct;
    if (!tw_pattern_writes(p.pattern))
        p.read_pct = 100;
    else if (!tw_pattern_reads(p.pattern))
        p.read_pct = 0;
    p.runtime_ms = prof->runtime_ms;
    p.ramp_ms = prof->ramp_ms;
    if (runtime && tw_duration_parse(runtime, &p.runtime_ms, &err) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--runtime: %s", err.msg);
        return TW_EXIT_USAGE;
    }
    if (ramp && tw_duration_parse(ramp, &p.ramp_ms, &err) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--ramp: %s", err.msg);
        return TW_EXIT_USAGE;
    }
    p.io_limit_bytes = io_size;
    if (p.runtime_ms == 0 && io_size == 0) {
        tw_app_error(TW_AGENT_PROG, "--runtime 0 needs --io-size: the run would have no end");
        return TW_EXIT_USAGE;
    }
    p.seed = seed;
    p.fail_every = fail_every;
    if (p.block_size % 512) {
        tw_app_error(TW_AGENT_PROG, "--bs %u is not a multiple of 512 bytes, the smallest "
                     "sector: direct I/O needs whole sectors", p.block_size);
        return TW_EXIT_USAGE;
    }

    struct tw_target_opts to = {
        .size = size,
        .write = tw_pattern_writes(p.pattern),
        .allow_destructive = destructive,
        .buffered = buffered,
        .sysfs_root = getenv("TW_SYSFS_ROOT"),
        .mounts_path = getenv("TW_MOUNTS_FILE"),
        .layout_progress = isatty(STDERR_FILENO) && tw_app_get_verbosity() != TW_APP_QUIET
                               ? layout_progress
                               : NULL,
    };
    struct tw_target t;
    if (size && size < p.block_size) {
        tw_app_error(TW_AGENT_PROG, "the target (--size %llu bytes) is smaller than one "
                     "block (%u bytes): use a bigger target or a smaller --bs",
                     (unsigned long long)size, p.block_size);
        return TW_EXIT_USAGE;
    }
    enum tw_err rc = tw_target_open(target, &to, &t, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "%s", err.msg);
        return tw_app_exit_code(rc);
    }
    if (t.laid_out)
        tw_app_note(TW_AGENT_PROG, "laid out %s with %llu bytes of random data", target,
                    (unsigned long long)t.size);
    p.fd = t.fd;
    p.direct = t.direct;
    p.region_offset = 0;
    p.region_size = t.size;
    p.align = t.lbs;

    struct tw_result *r = malloc(sizeof(*r));
    if (!r) {
        tw_target_close(&t);
        tw_app_error(TW_AGENT_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    tw_result_init(r);
    bool tty = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) &&
               tw_app_get_verbosity() != TW_APP_QUIET;
    if (tty || tw_app_get_verbosity() == TW_APP_VERBOSE)
        fprintf(stderr, "%s: %s on %s for %.0f s (+%.0f s ramp)\n", TW_AGENT_PROG,
                custom ? "custom" : prof->name, target, (double)p.runtime_ms / 1e3,
                (double)p.ramp_ms / 1e3);
    if (tty)
        p.progress = progress;
    tw_app_detail(TW_AGENT_PROG,
                  "method: %s %s, %u bytes per I/O, QD %u x %u jobs, %u %% reads; target: %s "
                  "(device %s), %llu bytes, %s I/O",
                  p.engine->name, tw_pattern_name(p.pattern), p.block_size, p.queue_depth,
                  p.jobs, p.read_pct, target, t.device[0] ? t.device : "unknown",
                  (unsigned long long)t.size, t.direct ? "direct" : "buffered");
    tw_app_catch_signals(&interrupted);
    p.interrupt = &interrupted;
    rc = tw_job_run(&p, r, &err);
    if (tty)
        fputs("\r\033[K", stderr);
    tw_target_close(&t);
    if (rc != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "%s", err.msg);
        free(r);
        return interrupted ? TW_EXIT_INTERRUPTED : tw_app_exit_code(rc);
    }
    tw_agent_new_id(r->id, sizeof(r->id));
    r->source = TW_SRC_TIERWISE;
    snprintf(r->tool_version, sizeof(r->tool_version), "tierwise %s", TW_VERSION);
    snprintf(r->profile, sizeof(r->profile), "%s", custom ? "custom" : prof->name);
    tw_target_to_result(&t, r);

    int status = tw_app_print_result(TW_AGENT_PROG, r, json);
    if (r->errors.count)
        fprintf(stderr, "%s: %lld I/O errors during the run; the first: %s\n", TW_AGENT_PROG,
                (long long)r->errors.count, r->errors.first);
    /* A run in which no I/O succeeded measured nothing: the record is
     * printed for the errors it holds, but the run failed. */
    if (status == TW_EXIT_OK && r->errors.count && r->read.ios + r->write.ios == 0)
        status = TW_EXIT_FAIL;
    free(r);
    fflush(stdout);
    return status;
}
