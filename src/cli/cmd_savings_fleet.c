/*
 * cmd_savings_fleet.c - tierwise savings --db F --policy FILE --month M:
 * the fleet's savings opportunities under one policy for one month, as a
 * table per disk with the excluded disks and their reasons and the totals,
 * as CSV (one record per disk the policy matches), or as the JSON document
 * GET /api/v1/savings/opportunities answers (service/opportunities.h does
 * the work; this file reads options and prints).
 *
 * The savings command (cmd_savings.c) hands its whole ARGV here when it
 * holds --policy or --month.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "core/buf.h"
#include "core/policy.h"
#include "core/reservation.h"
#include "core/tier.h"
#include "core/time.h"
#include "core/vmcap.h"
#include "service/opportunities.h"
#include "service/vmsizes.h"
#include "store/store.h"

#define MAX_RESERVATIONS_FILE (4u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s savings --db FILE --policy FILE --month YYYY-MM\n"
            "                  [--reservations FILE] [--currency C] [--json | --csv]\n\n"
            "The fleet's savings opportunities under one policy for one month: per disk the\n"
            "policy covers, the windows it gets, the hours on the cheaper SKU, the target\n"
            "and the saving; every disk the policy matches but leaves alone, with its\n"
            "reason; totals per VM, resource group, subscription and fleet. The month is\n"
            "its first day 00:00 to the next month's first day 00:00 in the policy's\n"
            "timezone. Prices are the database's price books (as of the month's start\n"
            "when one was fetched by then, else the latest); a region without a book is\n"
            "named and its disks counted as without a price, never priced as zero.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --policy FILE     a policy (tierwise.policy/1; tierwise policy check FILE)\n"
            "  --month YYYY-MM   the month, e.g. 2026-12\n"
            "  --reservations FILE\n"
            "                    reservations held (tierwise.reservations/1), added to the\n"
            "                    policy's own \"reservations\"\n"
            "  --currency C      the price books' currency (default: the only one the\n"
            "                    database has)\n"
            "  --json            print the JSON document (amounts as decimal strings:\n"
            "                    \"saving\" rounded once, \"saving_unrounded\" to 12 decimals)\n"
            "  --csv             print one record per disk the policy matches (RFC 4180, a\n"
            "                    header row, CRLF): vm,vm_id,resource_group,subscription_id,\n"
            "                    location,disk,disk_id,role,sku,tier,size_gib,status,reason,\n"
            "                    why,target_sku,target_tier,windows_source,windows,\n"
            "                    windows_tz,hours,saving,saving_unrounded\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 the database failed, writing failed, the database has\n"
            "no price book at all, or some disks have no price (all else is printed, and\n"
            "the regions without a book are named on stderr); 2 bad usage or input (a\n"
            "month that is not YYYY-MM, a policy or reservations file that does not\n"
            "parse, a policy timezone that does not load, a currency to choose).\n",
            TW_CLI_PROG);
}

enum out_kind { OUT_TEXT, OUT_JSON, OUT_CSV };

struct printer {
    enum out_kind kind;
    FILE *f;
    const char *currency;      /* the run's, set at the first disk */
    struct tw_opp_result *res;
    struct tw_buf excluded;    /* text: the excluded disks' lines */
    struct tw_buf vms;         /* text: the VMs' totals */
    size_t n_disks;
};

static void amount(struct tw_amount a, const char *cur, char *buf, size_t cap)
{
    struct tw_error e = {0};
    if (tw_amount_format(a, cur, buf, cap, &e) != TW_OK)
        snprintf(buf, cap, "?");
}

static void hours(tw_opp_ns ns, char *buf, size_t cap)
{
    if (!tw_opp_hours_text(ns, buf, cap))
        snprintf(buf, cap, "?");
}

static enum tw_err csv_disk(struct printer *p, const struct tw_opp_vm *vm,
                            const struct tw_opp_disk *d)
{
    char vm_id[24], disk_id[24], size[24], h[48] = "", s[64] = "", su[64] = "";
    snprintf(vm_id, sizeof(vm_id), "%lld", (long long)vm->id);
    snprintf(disk_id, sizeof(disk_id), "%lld", (long long)d->id);
    snprintf(size, sizeof(size), "%lld", (long long)d->size_gib);
    bool cov = d->reason == TW_OPP_COVERED;
    if (cov) {
        hours(d->saving.downgraded_ns, h, sizeof(h));
        amount(d->saving.saving, p->res->currency, s, sizeof(s));
        if (!tw_amount_decimal(d->saving.saving, 12, su, sizeof(su)))
            snprintf(su, sizeof(su), "?");
    }
    const char *f[] = {vm->name,
                       vm_id,
                       vm->resource_group,
                       vm->subscription_id,
                       vm->location,
                       d->name,
                       disk_id,
                       d->role == TW_DISK_OS ? "os" : "data",
                       d->sku,
                       d->tier,
                       size,
                       cov ? "covered" : "excluded",
                       cov ? "" : tw_opp_reason_name(d->reason),
                       cov ? "" : d->why,
                       cov ? d->target.sku : "",
                       cov ? d->target.tier : "",
                       cov ? d->windows_source : "",
                       cov ? d->windows : "",
                       cov ? d->windows_tz : "",
                       h,
                       s,
                       su};
    tw_cli_csv_row(p->f, f, sizeof(f) / sizeof(f[0]));
    return TW_OK;
}

static void text_head(struct printer *p)
{
    struct tw_opp_result *r = p->res;
    char from[40], to[40];
    tw_rfc3339_format_ns(r->from_ns, 0, 0, from, sizeof(from));
    tw_rfc3339_format_ns(r->to_ns, 0, 0, to, sizeof(to));
    fprintf(p->f, "Savings opportunities of policy %s in %s (%s to %s, %s), %s\n\n", r->policy,
            r->month, from, to, r->timezone, r->currency);
    fprintf(p->f, "%-20s %-24s %-16s %-5s %-16s %-5s %9s %10s  %s\n", "VM", "DISK", "SKU",
            "TIER", "TARGET", "TIER", "HOURS", "SAVING", "WINDOWS");
}

static enum tw_err on_disk(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_disk *d)
{
    struct printer *p = arg;
    if (p->kind == OUT_CSV)
        return csv_disk(p, vm, d);
    if (d->reason != TW_OPP_COVERED)
        return tw_buf_printf(&p->excluded, "  %s/%s (%s %s): %s: %s\n", vm->name, d->name,
                             d->sku, d->tier[0] ? d->tier : "-", tw_opp_reason_name(d->reason),
                             d->why);
    if (p->n_disks++ == 0)
        text_head(p);
    char h[48], s[64];
    hours(d->saving.downgraded_ns, h, sizeof(h));
    amount(d->saving.saving, p->res->currency, s, sizeof(s));
    fprintf(p->f, "%-20s %-24s %-16s %-5s %-16s %-5s %9s %10s  %s (%s, %s)\n", vm->name,
            d->name, d->sku, d->tier, d->target.sku, d->target.tier, h, s, d->windows,
            d->windows_source, d->windows_tz);
    for (size_t i = 0; i < d->n_caveats; i++)
        fprintf(p->f, "%20s   note: %s\n", "", d->caveats[i]);
    return TW_OK;
}

static enum tw_err on_vm(void *arg, const struct tw_opp_vm *vm, const struct tw_opp_total *t)
{
    struct printer *p = arg;
    if (p->kind != OUT_TEXT)
        return TW_OK;
    char h[48], s[64];
    hours(t->downgraded_ns, h, sizeof(h));
    amount(t->saving, p->res->currency, s, sizeof(s));
    return tw_buf_printf(&p->vms, "  %-20s %-20s %4lld moved %4lld left %9s h %12s\n",
                         vm->name, vm->resource_group, (long long)t->disks,
                         (long long)t->excluded, h, s);
}

static void text_total(FILE *f, const char *label, const struct tw_opp_total *t,
                       const char *cur)
{
    char h[48], s[64];
    hours(t->downgraded_ns, h, sizeof(h));
    amount(t->saving, cur, s, sizeof(s));
    fprintf(f, "  %-42s %4lld %-3s %5lld moved %5lld left %9s h %12s %s", label,
            (long long)t->vms, t->vms == 1 ? "VM" : "VMs", (long long)t->disks,
            (long long)t->excluded, h, s, cur);
    if (t->no_price)
        fprintf(f, " (%lld without a price)", (long long)t->no_price);
    fputc('\n', f);
}

static void text_tail(struct printer *p)
{
    struct tw_opp_result *r = p->res;
    if (p->n_disks == 0) {
        text_head(p);
        fprintf(p->f, "(no disk to move)\n");
    }
    if (p->excluded.len)
        fprintf(p->f, "\nLeft alone (%lld):\n%s", (long long)r->fleet.excluded, p->excluded.data);
    if (p->vms.len)
        fprintf(p->f, "\nPer VM:\n%s", p->vms.data);
    fprintf(p->f, "\nPer resource group:\n");
    for (size_t i = 0; i < r->n_rgs; i++) {
        char label[200];
        snprintf(label, sizeof(label), "%.60s/%.80s", r->rgs[i].subscription_id,
                 r->rgs[i].resource_group);
        text_total(p->f, label, &r->rgs[i].t, r->currency);
    }
    fprintf(p->f, "\nPer subscription:\n");
    for (size_t i = 0; i < r->n_subs; i++)
        text_total(p->f, r->subs[i].subscription_id, &r->subs[i].t, r->currency);
    fprintf(p->f, "\nFleet:\n");
    text_total(p->f, "all", &r->fleet, r->currency);
    for (size_t i = 0; i < r->n_books; i++)
        if (!r->books[i].missing)
            fprintf(p->f, "  prices of %s: %s, fetched %s\n", r->books[i].region,
                    r->books[i].source, r->books[i].fetched_at);
    fprintf(p->f,
            "\nAmounts are exact until shown: each is rounded once, to the %s minor unit, so a\n"
            "total (rounded from the exact sum) may differ by a minor unit or so from the sum of\n"
            "the rounded rows above it.\n",
            r->currency);
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

int tw_cli_savings_fleet(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'p'},
        {"month", required_argument, NULL, 'm'},
        {"reservations", required_argument, NULL, 'r'},
        {"currency", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *policy_path = NULL, *month = NULL, *resv_path = NULL;
    const char *currency = NULL;
    bool json = false, csv = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'p': policy_path = optarg; break;
        case 'm': month = optarg; break;
        case 'r': resv_path = optarg; break;
        case 'c': currency = optarg; break;
        case 'j': json = true; break;
        case 'x': csv = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "savings: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (json && csv) {
        tw_app_error(TW_CLI_PROG, "savings: give --json or --csv, not both");
        return TW_EXIT_USAGE;
    }
    if (!db || !policy_path || !month) {
        tw_app_error(TW_CLI_PROG, "savings: the fleet's opportunities need --db FILE, --policy "
                                  "FILE and --month YYYY-MM (e.g. --month 2026-12)");
        return TW_EXIT_USAGE;
    }
    struct tw_error err = {0};
    struct tw_opp_opts o = {.zone = load_zone};
    if (tw_opp_month_parse(month, strlen(month), &o.year, &o.month, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "savings: --month: %s", err.msg);
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "savings: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    enum tw_err rc = TW_OK;
    struct tw_policy pol;
    memset(&pol, 0, sizeof(pol));
    struct tw_reservations resv = {0};
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_svc_vmsizes *arm = NULL;
    struct tw_store *st = NULL;
    struct tw_opp_result res = {0};
    struct printer pr = {.kind = json ? OUT_JSON : csv ? OUT_CSV : OUT_TEXT, .f = stdout,
                         .res = &res};
    tw_buf_init(&pr.excluded, (size_t)1 << 30);
    tw_buf_init(&pr.vms, (size_t)1 << 30);
    struct tw_buf text;
    tw_buf_init(&text, TW_POLICY_FILE_MAX);
    if ((rc = tw_app_read_file(policy_path, &text, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "savings: --policy: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if (tw_policy_parse(text.data ? text.data : "", text.len, &pol, NULL, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "savings: %s: %s (tierwise policy check %s lists every "
                                  "problem)", policy_path, err.msg, policy_path);
        status = TW_EXIT_USAGE;
        goto out;
    }
    o.policy = &pol;
    if (resv_path) {
        tw_buf_cleanup(&text);
        tw_buf_init(&text, MAX_RESERVATIONS_FILE);
        if ((rc = tw_app_read_file(resv_path, &text, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "savings: --reservations: %s", err.msg);
            status = tw_app_exit_code(rc);
            goto out;
        }
        if (tw_reservations_parse(text.data ? text.data : "", text.len, &resv, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "savings: %s: %s", resv_path, err.msg);
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
    /* ARM's VM sizes as the backend cached them (none: the bundled table). */
    if ((arm = tw_svc_vmsizes_new()) != NULL) {
        struct tw_error aerr = {0};
        if (tw_svc_vmsizes_load_fleet(arm, st, &aerr) != TW_OK)
            tw_app_detail(TW_CLI_PROG, "savings: ARM's VM sizes not read: %s", aerr.msg);
        o.arm_sizes = arm;
    }
    if ((rc = tw_opp_currency(st, currency, (char[4]){0}, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "savings: %s", err.msg);
        /* No book at all is a missing price like a region's (1); a
         * currency to choose is the usage's (2). */
        status = rc == TW_EIO || rc == TW_ENOMEM || rc == TW_ENOENT ? TW_EXIT_FAIL
                                                                     : TW_EXIT_USAGE;
        goto out;
    }
    o.currency = currency;
    if (pr.kind == OUT_JSON) {
        rc = tw_opp_json(st, &o, write_out, stdout, &res, &err);
    } else {
        if (pr.kind == OUT_CSV) {
            const char *h[] = {"vm", "vm_id", "resource_group", "subscription_id", "location",
                               "disk", "disk_id", "role", "sku", "tier", "size_gib", "status",
                               "reason", "why", "target_sku", "target_tier", "windows_source",
                               "windows", "windows_tz", "hours", "saving", "saving_unrounded"};
            tw_cli_csv_row(stdout, h, sizeof(h) / sizeof(h[0]));
        }
        struct tw_opp_sink sink = {on_disk, on_vm, &pr};
        rc = tw_opp_run(st, &o, &sink, &res, &err);
        if (rc == TW_OK && pr.kind == OUT_TEXT)
            text_tail(&pr);
    }
    if (rc != TW_OK)
        goto fail;
    /* A write that failed before the last flush leaves only the stream's
     * error flag: the flush of what is left may well succeed. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "savings: writing the output failed");
        status = TW_EXIT_FAIL;
        goto out;
    }
    tw_app_detail(TW_CLI_PROG, "savings: %lld %s, %lld %s moved, %lld left alone",
                  (long long)res.fleet.vms, res.fleet.vms == 1 ? "VM" : "VMs",
                  (long long)res.fleet.disks, res.fleet.disks == 1 ? "disk" : "disks",
                  (long long)res.fleet.excluded);
    if (res.fleet.no_price) {
        bool one = res.fleet.no_price == 1;
        char regions[512];
        size_t n_missing = tw_opp_missing_regions(&res, regions, sizeof(regions));
        if (n_missing)
            tw_app_error(TW_CLI_PROG,
                         "savings: %lld %s no price, so the totals leave %s out: no "
                         "%s price book for %s; refresh %s (tierwise prices refresh --db %s "
                         "--region R --currency %s)",
                         (long long)res.fleet.no_price, one ? "disk has" : "disks have",
                         one ? "it" : "them", res.currency, regions,
                         n_missing > 1 ? "them" : "it", db, res.currency);
        else
            tw_app_error(TW_CLI_PROG,
                         "savings: %lld %s no price, so the totals leave %s out "
                         "(%s reason no_price says why: a tier the book lacks, a VM "
                         "whose region is not known)",
                         (long long)res.fleet.no_price, one ? "disk has" : "disks have",
                         one ? "it" : "them", one ? "its" : "each one's");
        status = TW_EXIT_FAIL;
    }
    goto out;
fail:
    tw_app_error(TW_CLI_PROG, "savings: %s", err.msg[0] ? err.msg : tw_strerror(rc));
    status = res.fail == TW_OPP_FAIL_POLICY_ZONE || res.fail == TW_OPP_FAIL_CURRENCY
                 ? TW_EXIT_USAGE
             : res.fail == TW_OPP_FAIL_NO_BOOK ? TW_EXIT_FAIL
                                               : tw_app_exit_code(rc);
out:
    tw_opp_result_cleanup(&res);
    tw_svc_vmsizes_unref(arm);
    tw_store_close(st);
    tw_vmcap_table_cleanup(&caps);
    tw_tier_catalog_cleanup(&cat);
    tw_reservations_cleanup(&resv);
    tw_policy_cleanup(&pol);
    tw_buf_cleanup(&text);
    tw_buf_cleanup(&pr.excluded);
    tw_buf_cleanup(&pr.vms);
    return status;
}
