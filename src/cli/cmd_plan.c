/*
 * cmd_plan.c - tierwise plan --db F --policy FILE --from DATE --to DATE
 * [--json | --ics | --totals]: the tier switches a policy calls for over a
 * period, as a table with totals, the tierwise.plan/1 document (what
 * GET /api/v1/plan answers and `tierwise apply --plan` reads) or an
 * iCalendar file (service/plan.h does the work; this file reads options
 * and prints).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/cli.h"
#include "core/buf.h"
#include "core/policy.h"
#include "core/reservation.h"
#include "core/tier.h"
#include "core/time.h"
#include "core/vmcap.h"
#include "service/plan.h"
#include "service/vmsizes.h"
#include "store/store.h"

#define MAX_RESERVATIONS_FILE (4u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s plan --db FILE --policy FILE --from DATE --to DATE\n"
            "               [--json | --ics | --totals] [--currency C] [--reservations FILE]\n\n"
            "The tier switches a policy calls for from DATE to DATE: for each disk it\n"
            "covers and each window taken, a downgrade after_deallocate minutes after the\n"
            "window opens and an upgrade back to the disk's original SKU before_start\n"
            "minutes before it closes, each listed when it is due in [--from, --to). A\n"
            "window saving less than min_saving, one whose two changes would break the\n"
            "quota (the SKU history's changes by anyone count), and one the margins leave\n"
            "nothing of plan nothing and are counted. Disks, targets and prices are\n"
            "those of tierwise savings for the same policy.\n\n"
            "  --db FILE         the tierwise database (SQLite; must exist)\n"
            "  --policy FILE     a policy (tierwise.policy/1; tierwise policy check FILE)\n"
            "  --from DATE       the period's start: RFC 3339 (2026-12-04T20:00:00Z) or\n"
            "                    YYYY-MM-DD, which is that day's midnight in the policy's\n"
            "                    timezone\n"
            "  --to DATE         the period's end (not included), the same way\n"
            "  --json            print the tierwise.plan/1 document (one object per action:\n"
            "                    vm, disk, kind, from_sku, to_sku, due_at (UTC), due_local,\n"
            "                    saving, currency, reason, policy, resource_group,\n"
            "                    subscription_id, idempotency_key, vm_id, disk_id; totals)\n"
            "  --ics             print an iCalendar file (RFC 5545): one event per action,\n"
            "                    times in UTC, to subscribe to\n"
            "  --totals          print the totals only (the actions are planned, not listed)\n"
            "  --currency C      the price books' currency (default: the only one the\n"
            "                    database has)\n"
            "  --reservations FILE\n"
            "                    reservations held (tierwise.reservations/1), added to the\n"
            "                    policy's own \"reservations\"\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 the database failed, writing failed or the database\n"
            "has no price book; 2 bad usage or input (a date that does not read or is\n"
            "outside the years 1970..2199, --to not after --from, a period longer than\n"
            "%d days, a policy or reservations file that does not parse, a policy\n"
            "timezone that does not load, a currency to choose). Disks without a price\n"
            "are left out of the plan and said on stderr.\n",
            TW_CLI_PROG, TW_PLAN_MAX_DAYS);
}

static enum tw_err write_out(void *arg, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, (FILE *)arg) == len ? TW_OK : TW_EIO;
}

static enum tw_err load_zone(void *arg, const char *name, struct tw_tz **out,
                             struct tw_error *err)
{
    (void)arg;
    return tw_tz_load(name, out, err);
}

struct printer {
    FILE *f;
    const char *currency;        /* the run's (the summary's, set before the first action) */
    const struct tw_plan_summary *live;
    bool list;                   /* print the actions */
    size_t n;
};

static void amount(struct tw_amount a, const char *cur, char *buf, size_t cap)
{
    struct tw_error e = {0};
    if (tw_amount_format(a, cur, buf, cap, &e) != TW_OK)
        snprintf(buf, cap, "?");
}

static enum tw_err on_action(void *arg, const struct tw_plan_action *a)
{
    struct printer *p = arg;
    if (!p->list)
        return TW_OK;
    if (p->n++ == 0)
        fprintf(p->f, "%-20s  %-25s  %-16s  %-16s  %-9s  %-35s  %10s  %s\n", "due (UTC)",
                "due (local)", "VM", "disk", "kind", "from -> to", "saving", "reason");
    char s[64] = "";
    if (a->kind == TW_PLAN_DOWNGRADE)
        amount(a->saving, p->live->currency, s, sizeof(s));
    char sw[80];
    snprintf(sw, sizeof(sw), "%s -> %s", a->from_sku, a->to_sku);
    fprintf(p->f, "%-20s  %-25s  %-16s  %-16s  %-9s  %-35s  %10s  %s\n", a->due_at, a->due_local,
            a->vm, a->disk, tw_plan_kind_name(a->kind), sw, s, a->reason);
    return ferror(p->f) ? TW_EIO : TW_OK;
}

static void totals(FILE *f, const struct tw_plan_summary *s, bool listed)
{
    char from[40] = "?", to[40] = "?", saving[64];
    tw_rfc3339_format_ns(s->from_ns, 0, 0, from, sizeof(from));
    tw_rfc3339_format_ns(s->to_ns, 0, 0, to, sizeof(to));
    amount(s->saving, s->currency, saving, sizeof(saving));
    fprintf(f,
            "%splan of %s from %s to %s (%s): %lld %s (%lld %s, %lld %s) on %lld %s; %lld "
            "%s skipped (min_saving, quota or margins); expected saving %s %s\n",
            listed && s->actions ? "\n" : "", s->policy, from, to, s->timezone, (long long)s->actions,
            s->actions == 1 ? "action" : "actions", (long long)s->downgrades,
            s->downgrades == 1 ? "downgrade" : "downgrades", (long long)s->upgrades,
            s->upgrades == 1 ? "upgrade" : "upgrades", (long long)s->disks,
            s->disks == 1 ? "disk" : "disks", (long long)s->windows_skipped,
            s->windows_skipped == 1 ? "window" : "windows", saving, s->currency);
    if (listed && s->downgrades > 1)
        fprintf(f,
                "\nAmounts are exact until shown: each is rounded once, to the %s minor unit, so a\n"
                "total (rounded from the exact sum) may differ by a minor unit or so from the sum of\n"
                "the rounded rows above it.\n",
                s->currency);
}

/* The disks left out for want of a price, as tierwise savings says it
 * (the plan is still printed: it holds what could be priced). */
static void no_price_warning(const struct tw_plan_summary *s, const char *db)
{
    if (!s->disks_without_price)
        return;
    bool one = s->disks_without_price == 1;
    if (s->missing_books)
        tw_app_error(TW_CLI_PROG,
                     "plan: %lld %s no price, so the plan leaves %s out: no %s price book for "
                     "%s; refresh %s (tierwise prices refresh --db %s --region R --currency %s)",
                     (long long)s->disks_without_price, one ? "disk has" : "disks have",
                     one ? "it" : "them", s->currency, s->missing_regions,
                     s->missing_books > 1 ? "them" : "it", db, s->currency);
    else
        tw_app_error(TW_CLI_PROG,
                     "plan: %lld %s no price, so the plan leaves %s out (tierwise savings "
                     "--policy FILE --json: %s reason no_price says why)",
                     (long long)s->disks_without_price, one ? "disk has" : "disks have",
                     one ? "it" : "them", one ? "its" : "each one's");
}

static int read_date(const char *opt, const char *v, const struct tw_tz *z, int64_t *ns)
{
    struct tw_error err = {0};
    if (tw_svc_plan_date(v, strlen(v), z, ns, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: %s: %s", opt, err.msg);
        return TW_EXIT_USAGE;
    }
    return TW_EXIT_OK;
}

int tw_cli_cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'p'},
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},
        {"ics", no_argument, NULL, 'i'},
        {"totals", no_argument, NULL, 'T'},
        {"currency", required_argument, NULL, 'c'},
        {"reservations", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *policy_path = NULL, *from = NULL, *to = NULL, *resv_path = NULL;
    const char *currency = NULL;
    bool json = false, ics = false, only_totals = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'p': policy_path = optarg; break;
        case 'f': from = optarg; break;
        case 't': to = optarg; break;
        case 'j': json = true; break;
        case 'i': ics = true; break;
        case 'T': only_totals = true; break;
        case 'c': currency = optarg; break;
        case 'r': resv_path = optarg; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "plan: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if ((int)json + (int)ics + (int)only_totals > 1) {
        tw_app_error(TW_CLI_PROG, "plan: give one of --json, --ics and --totals");
        return TW_EXIT_USAGE;
    }
    if (!db || !policy_path || !from || !to) {
        tw_app_error(TW_CLI_PROG, "plan: a plan needs --db FILE, --policy FILE, --from DATE and "
                                  "--to DATE (e.g. --from 2026-12-01 --to 2026-12-08)");
        return TW_EXIT_USAGE;
    }
    if (access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "plan: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    enum tw_err rc = TW_OK;
    struct tw_error err = {0};
    struct tw_policy pol;
    memset(&pol, 0, sizeof(pol));
    struct tw_reservations resv = {0};
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_svc_vmsizes *arm = NULL;
    struct tw_store *st = NULL;
    struct tw_tz *z = NULL;
    struct tw_plan_summary sum;
    memset(&sum, 0, sizeof(sum));
    struct tw_plan_opts o = {.zone = load_zone};
    struct tw_buf text;
    tw_buf_init(&text, TW_POLICY_FILE_MAX);
    if ((rc = tw_app_read_file(policy_path, &text, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: --policy: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if (tw_policy_parse(text.data ? text.data : "", text.len, &pol, NULL, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: %s: %s (tierwise policy check %s lists every problem)",
                     policy_path, err.msg, policy_path);
        status = TW_EXIT_USAGE;
        goto out;
    }
    o.policy = &pol;
    const char *zone_name = pol.timezone[0] ? pol.timezone : "UTC";
    if (tw_tz_load(zone_name, &z, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG,
                     "plan: the policy %s's timezone \"%s\" does not load (%s): give an IANA "
                     "zone name this machine has, e.g. Europe/London",
                     pol.name, zone_name, err.msg);
        status = TW_EXIT_USAGE;
        goto out;
    }
    if ((status = read_date("--from", from, z, &o.from_ns)) != TW_EXIT_OK ||
        (status = read_date("--to", to, z, &o.to_ns)) != TW_EXIT_OK)
        goto out;
    if (o.to_ns <= o.from_ns) {
        tw_app_error(TW_CLI_PROG, "plan: --to %s is not after --from %s: the period is [from, "
                                  "to)", to, from);
        status = TW_EXIT_USAGE;
        goto out;
    }
    if (tw_svc_plan_period(o.from_ns, o.to_ns, TW_PLAN_MAX_DAYS, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: --%s", err.msg);
        status = TW_EXIT_USAGE;
        goto out;
    }
    if (resv_path) {
        tw_buf_cleanup(&text);
        tw_buf_init(&text, MAX_RESERVATIONS_FILE);
        if ((rc = tw_app_read_file(resv_path, &text, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "plan: --reservations: %s", err.msg);
            status = tw_app_exit_code(rc);
            goto out;
        }
        if (tw_reservations_parse(text.data ? text.data : "", text.len, &resv, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "plan: %s: %s", resv_path, err.msg);
            status = TW_EXIT_USAGE;
            goto out;
        }
        o.reservations = &resv;
    }
    if ((rc = tw_tier_catalog_builtin(&cat, &err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&caps, &err)) != TW_OK)
        goto fail;
    o.cat = &cat;
    o.caps = &caps;
    if ((rc = tw_store_open(db, &st, &err)) != TW_OK)
        goto fail;
    if ((arm = tw_svc_vmsizes_new()) != NULL) {
        struct tw_error aerr = {0};
        if (tw_svc_vmsizes_load_fleet(arm, st, &aerr) != TW_OK)
            tw_app_detail(TW_CLI_PROG, "plan: ARM's VM sizes not read: %s", aerr.msg);
        o.arm_sizes = arm;
    }
    if ((rc = tw_opp_currency(st, currency, (char[4]){0}, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: %s", err.msg);
        status = rc == TW_EIO || rc == TW_ENOMEM || rc == TW_ENOENT ? TW_EXIT_FAIL
                                                                     : TW_EXIT_USAGE;
        goto out;
    }
    o.currency = currency;
    /* The installation the calendar's UIDs name: this database on this
     * host (plan.h). */
    char inst[PATH_MAX + 300], real[PATH_MAX], host[256] = "";
    if (!realpath(db, real))
        snprintf(real, sizeof(real), "%s", db);
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    snprintf(inst, sizeof(inst), "%s@%s", real, host);
    o.installation = inst;
    if (json) {
        rc = tw_svc_plan_json_sum(st, &o, write_out, stdout, &sum, &err);
    } else if (ics) {
        rc = tw_svc_plan_ics_sum(st, &o, write_out, stdout, &sum, &err);
    } else {
        struct printer pr = {.f = stdout, .live = &sum, .list = !only_totals};
        struct tw_plan_sink sink = {on_action, &pr};
        rc = tw_svc_plan_run(st, &o, &sink, &sum, &err);
        if (rc == TW_OK)
            totals(stdout, &sum, !only_totals);
    }
    if (rc != TW_OK)
        goto fail;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "plan: writing the output failed");
        status = TW_EXIT_FAIL;
    }
    no_price_warning(&sum, db);
    goto out;
fail:
    tw_app_error(TW_CLI_PROG, "plan: %s", err.msg[0] ? err.msg : tw_strerror(rc));
    status = sum.fail == TW_OPP_FAIL_POLICY_ZONE || sum.fail == TW_OPP_FAIL_CURRENCY
                 ? TW_EXIT_USAGE
             : sum.fail == TW_OPP_FAIL_NO_BOOK ? TW_EXIT_FAIL
                                               : tw_app_exit_code(rc);
out:
    tw_tz_free(z);
    tw_svc_vmsizes_unref(arm);
    tw_store_close(st);
    tw_vmcap_table_cleanup(&caps);
    tw_tier_catalog_cleanup(&cat);
    tw_reservations_cleanup(&resv);
    tw_policy_cleanup(&pol);
    tw_buf_cleanup(&text);
    return status;
}
