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
#define MAX_POLICIES 16 /* --policy given at most this many times */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s plan --db FILE --policy FILE [--policy FILE]... --from DATE --to DATE\n"
            "               [--json | --ics | --totals] [--currency C] [--reservations FILE]\n\n"
            "The tier switches a policy calls for from DATE to DATE: for each disk it\n"
            "covers and each window taken, a downgrade after_deallocate minutes after the\n"
            "window opens and an upgrade back to the disk's original SKU before_start\n"
            "minutes before it closes, each listed when it is due in [--from, --to). A\n"
            "window saving less than min_saving, one whose two changes would break the\n"
            "quota (the SKU history's changes by anyone count), and one the margins leave\n"
            "nothing of plan nothing and are counted. Disks, targets and prices are\n"
            "those of tierwise savings for the same policy.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --policy FILE     a policy (tierwise.policy/1; tierwise policy check FILE);\n"
            "                    repeatable (up to %d): the plans of all over one read of\n"
            "                    the database, each action naming its policy, totals per\n"
            "                    policy and together; --json prints {\"plans\": [...]}, one\n"
            "                    tierwise.plan/1 document per policy, --ics one calendar\n"
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
            TW_CLI_PROG, MAX_POLICIES, TW_PLAN_MAX_DAYS);
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
    size_t *shared_n;            /* several policies: the rows printed by all (one header) */
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
    if (p->shared_n) {
        /* Several policies: a policy column, one header for all. */
        if ((*p->shared_n)++ == 0)
            fprintf(p->f, "%-16s  %-20s  %-25s  %-24s  %-24s  %-9s  %-35s  %10s  %s\n",
                    "policy", "due (UTC)", "due (local)", "VM", "disk", "kind", "from -> to",
                    "saving", "reason");
        p->n++;
        char ps[64] = "";
        if (a->kind == TW_PLAN_DOWNGRADE)
            amount(a->saving, p->live->currency, ps, sizeof(ps));
        char psw[80];
        snprintf(psw, sizeof(psw), "%s -> %s", a->from_sku, a->to_sku);
        fprintf(p->f, "%-16s  %-20s  %-25s  %-24s  %-24s  %-9s  %-35s  %10s  %s\n",
                p->live->policy, a->due_at, a->due_local, a->vm, a->disk,
                tw_plan_kind_name(a->kind), psw, ps, a->reason);
        return ferror(p->f) ? TW_EIO : TW_OK;
    }
    if (p->n++ == 0)
        fprintf(p->f, "%-20s  %-25s  %-24s  %-24s  %-9s  %-35s  %10s  %s\n", "due (UTC)",
                "due (local)", "VM", "disk", "kind", "from -> to", "saving", "reason");
    char s[64] = "";
    if (a->kind == TW_PLAN_DOWNGRADE)
        amount(a->saving, p->live->currency, s, sizeof(s));
    char sw[80];
    snprintf(sw, sizeof(sw), "%s -> %s", a->from_sku, a->to_sku);
    fprintf(p->f, "%-20s  %-25s  %-24s  %-24s  %-9s  %-35s  %10s  %s\n", a->due_at, a->due_local,
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

static enum tw_err write_buf(void *arg, const char *buf, size_t len)
{
    return tw_buf_append((struct tw_buf *)arg, buf, len);
}

/* Several policies: the totals of all together, after each one's. */
static void totals_together(FILE *f, const struct tw_plan_summary *sums, size_t n, bool listed)
{
    struct tw_plan_summary t = {.saving = tw_amount_of(tw_money_micros(0))};
    for (size_t i = 0; i < n; i++) {
        struct tw_error e = {0};
        t.actions += sums[i].actions;
        t.downgrades += sums[i].downgrades;
        t.upgrades += sums[i].upgrades;
        t.disks += sums[i].disks;
        t.windows_skipped += sums[i].windows_skipped;
        if (tw_amount_add(t.saving, sums[i].saving, &t.saving, &e) != TW_OK)
            t.saving = tw_amount_of(tw_money_micros(0));
    }
    char saving[64];
    amount(t.saving, sums[0].currency, saving, sizeof(saving));
    fprintf(f,
            "together (%zu policies): %lld %s (%lld %s, %lld %s) on %lld %s (a disk counted "
            "once per policy); %lld %s skipped; expected saving %s %s\n",
            n, (long long)t.actions, t.actions == 1 ? "action" : "actions",
            (long long)t.downgrades, t.downgrades == 1 ? "downgrade" : "downgrades",
            (long long)t.upgrades, t.upgrades == 1 ? "upgrade" : "upgrades", (long long)t.disks,
            t.disks == 1 ? "disk" : "disks", (long long)t.windows_skipped,
            t.windows_skipped == 1 ? "window" : "windows", saving, sums[0].currency);
    if (listed && t.downgrades > 1)
        fprintf(f,
                "\nAmounts are exact until shown: each is rounded once, to the %s minor unit, so a\n"
                "total (rounded from the exact sum) may differ by a minor unit or so from the sum of\n"
                "the rounded rows above it.\n",
                sums[0].currency);
}

/* Several calendars as one: the first one's head, every one's events,
 * one end. */
static enum tw_err ics_merge(const struct tw_buf *cals, size_t n, FILE *f)
{
    static const char end[] = "END:VCALENDAR\r\n";
    for (size_t i = 0; i < n; i++) {
        const char *d = cals[i].data ? cals[i].data : "";
        const char *stop = strstr(d, end);
        const char *ev = strstr(d, "BEGIN:VEVENT\r\n");
        if (!stop)
            return TW_EINVAL;
        const char *from = i == 0 ? d : ev && ev < stop ? ev : stop;
        if (fwrite(from, 1, (size_t)(stop - from), f) != (size_t)(stop - from))
            return TW_EIO;
    }
    return fwrite(end, 1, sizeof(end) - 1, f) == sizeof(end) - 1 ? TW_OK : TW_EIO;
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
    const char *db = NULL, *policy_paths[MAX_POLICIES], *from = NULL, *to = NULL,
               *resv_path = NULL;
    size_t np = 0;
    const char *currency = NULL;
    bool json = false, ics = false, only_totals = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'p':
            if (np == MAX_POLICIES) {
                tw_app_error(TW_CLI_PROG, "plan: --policy given more than %d times: plan the "
                                          "others in another run", MAX_POLICIES);
                return TW_EXIT_USAGE;
            }
            policy_paths[np++] = optarg;
            break;
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
    if (!db || !np || !from || !to) {
        tw_app_error(TW_CLI_PROG, "plan: a plan needs --db FILE, --policy FILE, --from DATE and "
                                  "--to DATE (e.g. --from 2026-12-01 --to 2026-12-08)");
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "plan: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    enum tw_err rc = TW_OK;
    struct tw_error err = {0};
    struct tw_policy pol[MAX_POLICIES];
    memset(pol, 0, sizeof(pol));
    struct tw_reservations resv = {0};
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_svc_vmsizes *arm = NULL;
    struct tw_store *st = NULL;
    struct tw_tz *z[MAX_POLICIES] = {NULL};
    struct tw_plan_summary sum[MAX_POLICIES];
    memset(sum, 0, sizeof(sum));
    struct tw_plan_opts o[MAX_POLICIES];
    struct tw_error errs[MAX_POLICIES];
    memset(errs, 0, sizeof(errs));
    size_t failed = 0; /* the plan whose error is said (several) */
    for (size_t i = 0; i < MAX_POLICIES; i++)
        o[i] = (struct tw_plan_opts){.zone = load_zone};
    struct tw_buf text;
    tw_buf_init(&text, TW_POLICY_FILE_MAX);
    for (size_t i = 0; i < np; i++) {
        const char *policy_path = policy_paths[i];
        tw_buf_cleanup(&text);
        tw_buf_init(&text, TW_POLICY_FILE_MAX);
        if ((rc = tw_app_read_file(policy_path, &text, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "plan: --policy: %s", err.msg);
            status = tw_app_exit_code(rc);
            goto out;
        }
        if (tw_policy_parse(text.data ? text.data : "", text.len, &pol[i], NULL, &err) !=
            TW_OK) {
            tw_app_error(TW_CLI_PROG,
                         "plan: %s: %s (tierwise policy check %s lists every problem)",
                         policy_path, err.msg, policy_path);
            status = TW_EXIT_USAGE;
            goto out;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(pol[k].name, pol[i].name) == 0) {
                tw_app_error(TW_CLI_PROG, "plan: %s and %s are both the policy \"%s\": give "
                                          "each policy once", policy_paths[k], policy_path,
                             pol[i].name);
                status = TW_EXIT_USAGE;
                goto out;
            }
        o[i].policy = &pol[i];
        const char *zone_name = pol[i].timezone[0] ? pol[i].timezone : "UTC";
        if (tw_tz_load(zone_name, &z[i], &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG,
                         "plan: the policy %s's timezone \"%s\" does not load (%s): give an "
                         "IANA zone name this machine has, e.g. Europe/London",
                         pol[i].name, zone_name, err.msg);
            status = TW_EXIT_USAGE;
            goto out;
        }
        /* Each policy's dates in its own zone (a day is its midnight). */
        if ((status = read_date("--from", from, z[i], &o[i].from_ns)) != TW_EXIT_OK ||
            (status = read_date("--to", to, z[i], &o[i].to_ns)) != TW_EXIT_OK)
            goto out;
        if (o[i].to_ns <= o[i].from_ns) {
            tw_app_error(TW_CLI_PROG, "plan: --to %s is not after --from %s: the period is "
                                      "[from, to)", to, from);
            status = TW_EXIT_USAGE;
            goto out;
        }
        if (tw_svc_plan_period(o[i].from_ns, o[i].to_ns, TW_PLAN_MAX_DAYS, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "plan: --%s", err.msg);
            status = TW_EXIT_USAGE;
            goto out;
        }
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
        for (size_t i = 0; i < np; i++)
            o[i].reservations = &resv;
    }
    if ((rc = tw_tier_catalog_builtin(&cat, &err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&caps, &err)) != TW_OK)
        goto fail;
    for (size_t i = 0; i < np; i++) {
        o[i].cat = &cat;
        o[i].caps = &caps;
    }
    if ((rc = tw_store_open(db, &st, &err)) != TW_OK)
        goto fail;
    if ((arm = tw_svc_vmsizes_new()) != NULL) {
        struct tw_error aerr = {0};
        if (tw_svc_vmsizes_load_fleet(arm, st, &aerr) != TW_OK)
            tw_app_detail(TW_CLI_PROG, "plan: ARM's VM sizes not read: %s", aerr.msg);
        for (size_t i = 0; i < np; i++)
            o[i].arm_sizes = arm;
    }
    if ((rc = tw_opp_currency(st, currency, (char[4]){0}, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "plan: %s", err.msg);
        status = rc == TW_EIO || rc == TW_ENOMEM || rc == TW_ENOENT ? TW_EXIT_FAIL
                                                                     : TW_EXIT_USAGE;
        goto out;
    }
    /* The installation the calendar's UIDs name: this database on this
     * host (plan.h). */
    char inst[PATH_MAX + 300], real[PATH_MAX], host[256] = "";
    if (!realpath(db, real))
        snprintf(real, sizeof(real), "%s", db);
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    host[sizeof(host) - 1] = '\0';
    snprintf(inst, sizeof(inst), "%s@%s", real, host);
    for (size_t i = 0; i < np; i++) {
        o[i].currency = currency;
        o[i].installation = inst;
    }
    if (np == 1 && json) {
        rc = tw_svc_plan_json_sum(st, &o[0], write_out, stdout, &sum[0], &err);
    } else if (np == 1 && ics) {
        rc = tw_svc_plan_ics_sum(st, &o[0], write_out, stdout, &sum[0], &err);
    } else if (np == 1) {
        struct printer pr = {.f = stdout, .live = &sum[0], .list = !only_totals};
        struct tw_plan_sink sink = {on_action, &pr};
        rc = tw_svc_plan_run(st, &o[0], &sink, &sum[0], &err);
        if (rc == TW_OK)
            totals(stdout, &sum[0], !only_totals);
    } else if (json || ics) {
        /* The documents are written whole, one plan after the other (each
         * its own read of the database). */
        struct tw_buf cals[MAX_POLICIES];
        for (size_t i = 0; i < np; i++)
            tw_buf_init(&cals[i], (size_t)1 << 34);
        if (json && fputs("{\"plans\":[", stdout) == EOF)
            rc = TW_EIO;
        for (size_t i = 0; rc == TW_OK && i < np; i++) {
            failed = i;
            if (json && i && fputs(",", stdout) == EOF)
                rc = TW_EIO;
            if (rc == TW_OK)
                rc = json ? tw_svc_plan_json_sum(st, &o[i], write_out, stdout, &sum[i], &err)
                          : tw_svc_plan_ics_sum(st, &o[i], write_buf,
                                                &cals[i], &sum[i], &err);
        }
        if (rc == TW_OK && json && fputs("]}\n", stdout) == EOF)
            rc = TW_EIO;
        if (rc == TW_OK && ics && (rc = ics_merge(cals, np, stdout)) != TW_OK)
            tw_error_set(&err, rc, "putting the calendars together failed");
        for (size_t i = 0; i < np; i++)
            tw_buf_cleanup(&cals[i]);
        if (rc != TW_OK) {
            sum[0] = sum[failed];
            goto fail;
        }
    } else {
        /* Several: one read of the database for all the plans. */
        size_t shared = 0;
        struct printer pr[MAX_POLICIES];
        struct tw_plan_sink sinks[MAX_POLICIES];
        for (size_t i = 0; i < np; i++) {
            pr[i] = (struct printer){.f = stdout, .shared_n = &shared, .live = &sum[i],
                                     .list = !only_totals};
            sinks[i] = (struct tw_plan_sink){on_action, &pr[i]};
        }
        rc = tw_svc_plan_run_many(st, np, o, sinks, sum, errs);
        if (rc != TW_OK) {
            for (failed = 0; failed + 1 < np && sum[failed].fail == TW_OPP_FAIL_NONE; failed++)
                ;
            err = errs[failed];
            sum[0] = sum[failed];
            goto fail;
        }
        if (!only_totals && shared)
            fputs("\n", stdout);
        for (size_t i = 0; i < np; i++)
            totals(stdout, &sum[i], false);
        totals_together(stdout, sum, np, !only_totals);
    }
    if (rc != TW_OK)
        goto fail;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "plan: writing the output failed");
        status = TW_EXIT_FAIL;
    }
    for (size_t i = 0; i < np; i++)
        no_price_warning(&sum[i], db);
    goto out;
fail:
    if (np > 1)
        tw_app_error(TW_CLI_PROG, "plan: %s: %s", policy_paths[failed],
                     err.msg[0] ? err.msg : tw_strerror(rc));
    else
        tw_app_error(TW_CLI_PROG, "plan: %s", err.msg[0] ? err.msg : tw_strerror(rc));
    status = sum[0].fail == TW_OPP_FAIL_POLICY_ZONE || sum[0].fail == TW_OPP_FAIL_CURRENCY
                 ? TW_EXIT_USAGE
             : sum[0].fail == TW_OPP_FAIL_NO_BOOK ? TW_EXIT_FAIL
                                                  : tw_app_exit_code(rc);
out:
    for (size_t i = 0; i < np; i++) {
        tw_tz_free(z[i]);
        tw_policy_cleanup(&pol[i]);
    }
    tw_svc_vmsizes_unref(arm);
    tw_store_close(st);
    tw_vmcap_table_cleanup(&caps);
    tw_tier_catalog_cleanup(&cat);
    tw_reservations_cleanup(&resv);
    tw_buf_cleanup(&text);
    return status;
}
