/*
 * cmd_report.c - tierwise report monthly --db F --month YYYY-MM --format
 * html|csv|json [--out F] [--currency C] [--group-by ...] [--policy
 * FILE]...: the monthly cost-saving report of a month, built once from the
 * database (service/monthly.h, tw_mr_build) and written in one of its three
 * forms, the same document GET /api/v1/reports/monthly answers.
 *
 * --out F is written to a temporary file of F's folder made by mkstemp
 * (F.tmp.XXXXXX: created exclusively, so two runs for the same F never
 * share it and a symlink planted there is never followed), given the mode
 * of the F it replaces (a new F: 0640 less the umask, a finance report is
 * not for every account), flushed, synced and renamed over F: F is never a
 * half-written report.  A failure, SIGINT or SIGTERM removes the temporary.
 *
 * SIGPIPE is ignored: a reader that goes away (| head) is a write error
 * said once with errno's text ("writing the report to stdout failed:
 * Broken pipe"), exit 1, not a death by signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/cli.h"
#include "core/buf.h"
#include "core/policy.h"
#include "core/tier.h"
#include "core/vmcap.h"
#include "service/monthly.h"
#include "service/monthly_forms.h"
#include "service/opportunities.h"
#include "service/vmsizes.h"
#include "store/store.h"

#define MAX_POLICIES 64

static void usage_group(FILE *f)
{
    fprintf(f,
            "usage: %s report monthly --db FILE --month YYYY-MM --format html|csv|json\n"
            "                  [--out FILE] [--currency C]\n"
            "                  [--group-by subscription|resource-group|tag:NAME]\n"
            "                  [--policy FILE]...\n\n"
            "Reports of what tierwise saved.\n\n"
            "  monthly   the monthly cost-saving report: per disk its hours on each SKU,\n"
            "            the actual cost, the cost had it stayed on its original SKU, the\n"
            "            realised saving, the saving still possible, its verdict and drift;\n"
            "            totals per group and for the fleet (tierwise report monthly\n"
            "            --help says more)\n\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done, 1 the work failed, 2 bad input or usage.\n",
            TW_CLI_PROG);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s report monthly --db FILE --month YYYY-MM --format html|csv|json\n"
            "                  [--out FILE] [--currency C]\n"
            "                  [--group-by subscription|resource-group|tag:NAME]\n"
            "                  [--policy FILE]...\n\n"
            "The monthly cost-saving report of one month: per disk its VM, subscription,\n"
            "resource group, original and current SKU and tier, hours on each SKU (from\n"
            "the verified actions and the observed SKU history, to the second), the\n"
            "actual cost, the baseline (the cost had tierwise not switched it), the\n"
            "realised saving, transaction charges, the saving its policy would still\n"
            "bring, its exclusion reason, its latest verdict (measured against expected\n"
            "IOPS and MB/s) and drift hours; totals per group and for the fleet. The\n"
            "month is UTC: its first day 00:00 to the next month's; a month still\n"
            "running ends now and the report says it is partial. Prices are the\n"
            "database's price books as of each part of the month, every book named.\n"
            "Rows are rounded to the currency's minor unit and totals are the sums of\n"
            "the rounded rows; the JSON also carries every amount unrounded.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --month YYYY-MM   the month, e.g. 2026-11\n"
            "  --format F        html (one self-contained page that prints on A4), csv\n"
            "                    (one FOCUS-aligned record per disk: RFC 4180, a header\n"
            "                    row, CRLF) or json (tierwise.monthly-report/1); required\n"
            "  --out FILE        write the report to FILE (through a new FILE.tmp.XXXXXX\n"
            "                    beside it, renamed when complete; FILE's mode kept, a\n"
            "                    new FILE 0640 less the umask); - or none: stdout\n"
            "  --currency C      the price books' currency (default: the only one the\n"
            "                    database has)\n"
            "  --group-by G      resource-group (default), subscription, or tag:NAME (the\n"
            "                    VM's tag NAME; VMs without it are \"(no tag)\")\n"
            "  --policy FILE     a policy (tierwise.policy/1) the saving still possible is\n"
            "                    judged by; repeatable (up to %d). None: the policies the\n"
            "                    database holds (stored by tierwise serve --policies)\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 written; 1 the database or the write failed, the database has\n"
            "no price book at all, or some disks have no price (the report is still\n"
            "written complete, those disks listed with the reason; stderr says how many\n"
            "and which regions); 2 bad usage or input (a month that is not YYYY-MM, a\n"
            "--format or --group-by that is not one of those, a policy file that does\n"
            "not parse or whose timezone does not load, a currency to choose or one no\n"
            "price book is in). A reader that goes away (| head) is a write error: 1.\n",
            TW_CLI_PROG, MAX_POLICIES);
}

enum form { FORM_NONE, FORM_HTML, FORM_CSV, FORM_JSON };

/* Where the report goes, and the errno of the first write that failed. */
struct sink {
    FILE *f;
    int err;
};

static enum tw_err write_out(void *arg, const char *buf, size_t len)
{
    struct sink *k = arg;
    errno = 0;
    if (fwrite(buf, 1, len, k->f) == len)
        return TW_OK;
    if (!k->err)
        k->err = errno ? errno : EIO;
    return TW_EIO;
}

/* The temporary --out file while it exists, for the signal handler. */
static char *volatile tmp_path;

static void on_signal(int sig)
{
    char *t = tmp_path;
    if (t)
        unlink(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

static enum tw_err load_zone(void *arg, const char *name, struct tw_tz **out,
                             struct tw_error *err)
{
    (void)arg;
    return tw_tz_load(name, out, err);
}

/* The policies the database holds, parsed into POLS (*N of them, at most
 * MAX_POLICIES). */
static enum tw_err stored_policies(struct tw_store *st, struct tw_policy *pols, size_t *n,
                                   struct tw_error *err)
{
    char **names = NULL;
    size_t nn = 0;
    enum tw_err rc = tw_store_policy_names(st, &names, &nn, err);
    if (rc == TW_OK && nn > MAX_POLICIES)
        rc = tw_error_set(err, TW_EINVAL, "the database holds %zu policies, more than the "
                          "%d a report judges by; name them with --policy", nn, MAX_POLICIES);
    for (size_t i = 0; rc == TW_OK && i < nn; i++) {
        char *body = NULL;
        if ((rc = tw_store_policy_get(st, names[i], &body, err)) != TW_OK)
            break;
        struct tw_error perr = {0};
        rc = tw_policy_parse(body, strlen(body), &pols[i], NULL, &perr);
        free(body);
        *n = i + 1;
        if (rc != TW_OK)
            rc = tw_error_set(err, TW_EPARSE, "the stored policy %s no longer reads: %s (store "
                              "it again with serve --policies, or name the policies with "
                              "--policy)", names[i], perr.msg);
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* Every policy's timezone loads (else the build would fail half way). */
static bool zones_load(const struct tw_policy *pols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *zn = pols[i].timezone[0] ? pols[i].timezone : "UTC";
        struct tw_tz *z = NULL;
        struct tw_error err = {0};
        if (tw_tz_load(zn, &z, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "report monthly: the policy %s's timezone \"%s\" does not load: "
                         "%s", pols[i].name, zn, err.msg);
            return false;
        }
        tw_tz_free(z);
    }
    return true;
}

/* The disks without a price, said on stderr. */
static void say_unpriced(const struct tw_mr_model *m, const char *db)
{
    int64_t n = m->fleet.unpriced;
    bool one = n == 1;
    struct tw_buf regions;
    tw_buf_init(&regions, 1 << 16);
    for (size_t i = 0; i < m->n_missing; i++)
        tw_buf_printf(&regions, "%s%s (%lld %s)", i ? ", " : "", m->missing[i].region,
                      (long long)m->missing[i].disks, m->missing[i].disks == 1 ? "disk" : "disks");
    if (m->n_missing)
        tw_app_error(TW_CLI_PROG,
                     "report monthly: %lld %s no price, so the totals leave %s out (the report lists "
                     "%s with the reason): no %s price book for %s; refresh %s (tierwise "
                     "prices refresh --db %s --region R --currency %s)",
                     (long long)n, one ? "disk has" : "disks have", one ? "it" : "them",
                     one ? "it" : "them", m->currency, regions.data,
                     m->n_missing > 1 ? "them" : "it", db, m->currency);
    else
        tw_app_error(TW_CLI_PROG,
                     "report monthly: %lld %s no price, so the totals leave %s out (the report lists "
                     "%s with the reason: a tier the book lacks, a SKU not known, a VM whose "
                     "region is not known)",
                     (long long)n, one ? "disk has" : "disks have", one ? "it" : "them",
                     one ? "it" : "them");
    tw_buf_cleanup(&regions);
}

/* Opens where the report goes: stdout, or a new OUT.tmp.XXXXXX beside OUT
 * (mkstemp: O_EXCL, never a symlink followed), its name into TMP, its mode
 * that of the OUT it replaces (a new OUT: 0640 less the umask). */
static FILE *open_out(const char *out, char **tmp)
{
    *tmp = NULL;
    if (!out || strcmp(out, "-") == 0)
        return stdout;
    size_t n = strlen(out) + sizeof(".tmp.XXXXXX");
    *tmp = malloc(n);
    if (!*tmp) {
        tw_app_error(TW_CLI_PROG, "report monthly: out of memory");
        return NULL;
    }
    snprintf(*tmp, n, "%s.tmp.XXXXXX", out);
    mode_t um = umask(0);
    umask(um);
    mode_t mode = 0640 & ~um;
    struct stat sb;
    if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode))
        mode = sb.st_mode & 07777;
    int fd = mkstemp(*tmp);
    if (fd >= 0) {
        tmp_path = *tmp;
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
    }
    FILE *f = NULL;
    if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fchmod(fd, mode) == 0)
        f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        tw_app_error(TW_CLI_PROG, "report monthly: --out %s: can't write %s: %s", out,
                     fd >= 0 ? *tmp : "a temporary file beside it", strerror(e));
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
        }
        tmp_path = NULL;
        free(*tmp);
        *tmp = NULL;
    }
    return f;
}

/* Ends the output: true when all of it is where it belongs.  WERR: the
 * errno of a write that failed already (0 none), said here once. */
static bool close_out(FILE *f, const char *out, char *tmp, bool ok, int werr)
{
    if (f == stdout) {
        /* A write that failed before the last flush leaves only the
         * stream's error flag: the flush of what is left may succeed. */
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout) || werr) {
            int e = werr ? werr : errno ? errno : EIO;
            tw_app_error(TW_CLI_PROG, "report monthly: writing the report to stdout failed: %s",
                         strerror(e));
            return false;
        }
        return ok;
    }
    errno = 0;
    bool wrote = !werr && fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
    int e = werr ? werr : errno;
    wrote = (fclose(f) == 0) && wrote;
    if (werr || (ok && !wrote))
        tw_app_error(TW_CLI_PROG, "report monthly: --out %s: writing %s failed: %s", out, tmp,
                     strerror(e ? e : EIO));
    if (ok && wrote && rename(tmp, out) != 0) {
        tw_app_error(TW_CLI_PROG, "report monthly: --out %s: renaming %s failed: %s", out, tmp,
                     strerror(errno));
        wrote = false;
    }
    if (!ok || !wrote)
        unlink(tmp);
    tmp_path = NULL;
    return ok && wrote;
}

static int monthly(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"month", required_argument, NULL, 'm'},
        {"format", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
        {"currency", required_argument, NULL, 'c'},
        {"group-by", required_argument, NULL, 'g'},
        {"policy", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *month = NULL, *format = NULL, *out = NULL, *currency = NULL;
    const char *group_by = NULL;
    const char *paths[MAX_POLICIES];
    size_t n_paths = 0;
    int c;
    signal(SIGPIPE, SIG_IGN);
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'm': month = optarg; break;
        case 'f': format = optarg; break;
        case 'o': out = optarg; break;
        case 'c': currency = optarg; break;
        case 'g': group_by = optarg; break;
        case 'p':
            if (n_paths == MAX_POLICIES) {
                tw_app_error(TW_CLI_PROG, "report monthly: at most %d --policy files", MAX_POLICIES);
                return TW_EXIT_USAGE;
            }
            paths[n_paths++] = optarg;
            break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "report monthly: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db || !month) {
        tw_app_error(TW_CLI_PROG, "report monthly: give --db FILE and --month YYYY-MM (e.g. "
                                  "--month 2026-11)");
        return TW_EXIT_USAGE;
    }
    enum form form = FORM_NONE;
    if (!format) {
        tw_app_error(TW_CLI_PROG, "report monthly: which form? give --format html, --format "
                                  "csv or --format json");
        return TW_EXIT_USAGE;
    }
    if (strcmp(format, "html") == 0)
        form = FORM_HTML;
    else if (strcmp(format, "csv") == 0)
        form = FORM_CSV;
    else if (strcmp(format, "json") == 0)
        form = FORM_JSON;
    else {
        tw_app_error(TW_CLI_PROG, "report monthly: --format \"%s\" is not one: give html, csv "
                                  "or json", format);
        return TW_EXIT_USAGE;
    }
    struct tw_error err = {0};
    struct tw_mr_opts o = {.currency = currency, .zone = load_zone};
    if (tw_opp_month_parse(month, strlen(month), &o.year, &o.month, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "report monthly: --month: %s", err.msg);
        return TW_EXIT_USAGE;
    }
    /* The parser points o.group_tag into what it is given, read later as
     * a C string: a NUL-terminated copy of its LEN bytes, kept to the end. */
    static char group_buf[1024];
    if (group_by) {
        size_t glen = strnlen(group_by, sizeof(group_buf));
        if (glen == sizeof(group_buf)) {
            tw_app_error(TW_CLI_PROG, "report monthly: --group-by: too long (tag:NAME, a tag's "
                                      "name 1 to 512 bytes)");
            return TW_EXIT_USAGE;
        }
        memcpy(group_buf, group_by, glen);
        group_buf[glen] = '\0';
        if (tw_mr_group_by_parse(group_buf, glen, &o, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "report monthly: %s", err.msg);
            return TW_EXIT_USAGE;
        }
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "report monthly: --db %s: no such database; give the "
                                  "backend's database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    enum tw_err rc = TW_OK;
    struct tw_policy pols[MAX_POLICIES];
    const struct tw_policy *ptrs[MAX_POLICIES];
    size_t n_pols = 0;
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_svc_vmsizes *arm = NULL;
    struct tw_store *st = NULL;
    struct tw_mr_model m;
    memset(&m, 0, sizeof(m));
    FILE *f = NULL;
    char *tmp = NULL;
    for (size_t i = 0; i < n_paths; i++) {
        struct tw_buf text;
        tw_buf_init(&text, TW_POLICY_FILE_MAX);
        rc = tw_app_read_file(paths[i], &text, &err);
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "report monthly: --policy: %s", err.msg);
            tw_buf_cleanup(&text);
            status = tw_app_exit_code(rc);
            goto out;
        }
        rc = tw_policy_parse(text.data ? text.data : "", text.len, &pols[n_pols], NULL, &err);
        tw_buf_cleanup(&text);
        n_pols++;
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "report monthly: %s: %s (tierwise policy check %s lists "
                                      "every problem)", paths[i], err.msg, paths[i]);
            status = TW_EXIT_USAGE;
            goto out;
        }
    }
    if ((rc = tw_tier_catalog_builtin(&cat, &err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&caps, &err)) != TW_OK ||
        (rc = tw_store_open(db, &st, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "report monthly: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if ((rc = tw_mr_currency_ok(st, currency, &err)) != TW_OK) {
        /* Books there are, none in that currency: every disk would be
         * unpriced.  A currency to choose again is the usage's (2). */
        tw_app_error(TW_CLI_PROG, "report monthly: --currency: %s", err.msg);
        status = rc == TW_ENOENT ? TW_EXIT_USAGE : tw_app_exit_code(rc);
        goto out;
    }
    if (n_paths == 0 && (rc = stored_policies(st, pols, &n_pols, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "report monthly: %s", err.msg);
        status = rc == TW_EPARSE || rc == TW_EINVAL ? TW_EXIT_USAGE : tw_app_exit_code(rc);
        goto out;
    }
    if (!zones_load(pols, n_pols)) {
        status = TW_EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < n_pols; i++)
        ptrs[i] = &pols[i];
    o.policies = ptrs;
    o.n_policies = n_pols;
    o.cat = &cat;
    o.caps = &caps;
    o.db_path = db; /* the policies' run on a second handle, beside the report's walk */
    /* ARM's VM sizes as the backend cached them (none: the bundled table). */
    if ((arm = tw_svc_vmsizes_new()) != NULL) {
        struct tw_error aerr = {0};
        if (tw_svc_vmsizes_load_fleet(arm, st, &aerr) != TW_OK)
            tw_app_detail(TW_CLI_PROG, "report monthly: ARM's VM sizes not read: %s", aerr.msg);
        o.arm_sizes = arm;
    }
    rc = tw_mr_build(st, &o, &m, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "report monthly: %s", err.msg[0] ? err.msg : tw_strerror(rc));
        /* No book at all is a missing price (1); bad options or a
         * currency to choose are the usage's (2). */
        status = rc == TW_EINVAL || rc == TW_EPARSE ? TW_EXIT_USAGE
                 : rc == TW_ENOENT                  ? TW_EXIT_FAIL
                                                    : tw_app_exit_code(rc);
        goto out;
    }
    if (!(f = open_out(out, &tmp))) {
        status = TW_EXIT_FAIL;
        goto out;
    }
    struct sink sink = {.f = f};
    rc = form == FORM_JSON  ? tw_mr_write_json(&m, write_out, &sink, &err)
         : form == FORM_CSV ? tw_mr_write_csv(&m, write_out, &sink, &err)
                            : tw_mr_write_html(&m, write_out, &sink, &err);
    if (rc != TW_OK && !sink.err) /* a write that failed: close_out says it */
        tw_app_error(TW_CLI_PROG, "report monthly: %s", err.msg[0] ? err.msg : tw_strerror(rc));
    bool done = close_out(f, out, tmp, rc == TW_OK, sink.err);
    f = NULL;
    if (!done) {
        status = TW_EXIT_FAIL;
        goto out;
    }
    tw_app_detail(TW_CLI_PROG, "report monthly: %s, %lld %s on %lld %s%s%s", m.month,
                  (long long)m.fleet.disks, m.fleet.disks == 1 ? "disk" : "disks",
                  (long long)m.fleet.vms, m.fleet.vms == 1 ? "VM" : "VMs",
                  m.partial ? " (partial: the month still runs)" : "",
                  out && strcmp(out, "-") != 0 ? ", written" : "");
    if (n_pols == 0)
        tw_app_note(TW_CLI_PROG, "report monthly: no --policy given and the database holds "
                                 "no policies, so no saving still possible is known (give "
                                 "--policy FILE)");
    if (m.fleet.unpriced) {
        say_unpriced(&m, db);
        status = TW_EXIT_FAIL;
    }
out:
    free(tmp);
    tw_mr_model_cleanup(&m);
    tw_svc_vmsizes_unref(arm);
    tw_store_close(st);
    tw_vmcap_table_cleanup(&caps);
    tw_tier_catalog_cleanup(&cat);
    for (size_t i = 0; i < n_pols; i++)
        tw_policy_cleanup(&pols[i]);
    return status;
}

int tw_cli_cmd_report(int argc, char **argv)
{
    if (argc < 2) {
        tw_app_error(TW_CLI_PROG, "report: which report? the one there is: monthly (tierwise "
                                  "report monthly --help)");
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage_group(stdout);
        return TW_EXIT_OK;
    }
    if (strcmp(sub, "--version") == 0)
        return tw_app_print_version(TW_CLI_PROG);
    if (strcmp(sub, "monthly") != 0) {
        tw_app_error(TW_CLI_PROG, "report monthly: unknown report \"%s\"; the one there is: monthly "
                                  "(tierwise report monthly --help)", sub);
        return TW_EXIT_USAGE;
    }
    return monthly(argc - 1, argv + 1);
}
