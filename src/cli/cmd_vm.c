/*
 * cmd_vm.c - tierwise vm stop|start: the pre-stop and pre-start steps of a
 * runbook (service/exec.h's tw_exec_vm_stop and tw_exec_vm_start).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "app/app.h"
#include "cli/arm_args.h"
#include "cli/cli.h"
#include "cli/exec_cli.h"
#include "core/buf.h"
#include "core/policy.h"
#include "core/pricebook.h"
#include "core/savings.h"
#include "core/sku.h"
#include "core/tier.h"
#include "core/vmcap.h"
#include "service/exec.h"
#include "service/opportunities.h"
#include "service/prices.h"
#include "store/store.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s vm stop --db FILE --vm NAME [--policy FILE | --to SKU] [--os-disk]\n"
            "                  [--execute] [--json] [--poll-ms MS] [ARM options]\n"
            "       %s vm start --db FILE --vm NAME [--execute] [--json] [--poll-ms MS]\n"
            "                  [ARM options]\n\n"
            "The pre-stop and pre-start steps for runbooks. vm stop deallocates the VM (and\n"
            "waits until ARM reads it back deallocated), then moves its data disks (the OS\n"
            "disk too with --os-disk) to the policy's target (chosen as the savings model\n"
            "does: the policy's target family, the disk's redundancy, the size step that\n"
            "holds it) or to --to SKU (checked first: a disk SKU no dearer than the disks),\n"
            "each verified. vm start restores every disk tierwise downgraded to its\n"
            "original SKU, verifies each, then starts the VM; when a disk can't be restored\n"
            "and the policy that downgraded it requires the original SKU before a start\n"
            "(require_original_before_start, the default), the VM is not started. Its last\n"
            "line says which: \"VM NAME started\" or \"VM NAME NOT started: why\". Every\n"
            "step is an action of the audit log (tierwise actions). Without --execute it\n"
            "is a dry run: nothing is written to ARM or the database.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --vm NAME         the VM (its name in the database, any case)\n"
            "  --policy FILE     vm stop: the policy giving each disk's target\n"
            "  --to SKU          vm stop: every disk moved to SKU (e.g. Standard_LRS)\n"
            "  --os-disk         vm stop: the OS disk too\n"
            "  --execute         send the changes (else a dry run)\n"
            "  --json            print {\"dry_run\", \"vm\", \"results\": [...], \"summary\"}\n"
            "                    (vm start --execute: and \"started\", \"why\")\n"
            "  --poll-ms MS      between polls of an ARM operation (default 2000)\n"
            TW_ARM_ARGS_HELP
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 a step failed (vm start: the VM was not started, and\n"
            "why is said); 2 bad usage or input (no such VM, no target).\n",
            TW_CLI_PROG, TW_CLI_PROG);
}

/* How dear a family is, for "a downgrade goes to a cheaper one"; 0 for
 * the families a SKU PATCH does not switch to (v2, Ultra). */
static int family_rank(enum tw_sku_family f)
{
    switch (f) {
    case TW_SKU_PREMIUM_SSD: return 3;
    case TW_SKU_STANDARD_SSD: return 2;
    case TW_SKU_STANDARD_HDD: return 1;
    default: return 0;
    }
}

/* --to SKU checked before anything is sent: a SKU Azure knows, of a family
 * a disk switches to, and no dearer than any disk it would move (a
 * "downgrade" to Premium, or from LRS to ZRS of the same family, is refused).  TW_EINVAL with why. */
static enum tw_err check_to(struct tw_store *st, const char *to,
                            const struct tw_store_disk_row *d, size_t n, bool os_disk,
                            struct tw_error *err)
{
    struct tw_sku t;
    if (!tw_sku_parse(to, &t))
        return tw_error_set(err, TW_EINVAL, "--to %s: not a disk SKU; give one of Standard_LRS, "
                            "StandardSSD_LRS, StandardSSD_ZRS, Premium_LRS, Premium_ZRS", to);
    if (!family_rank(t.family))
        return tw_error_set(err, TW_EINVAL, "--to %s: a disk does not switch to %s by its SKU; "
                            "give a Standard HDD, Standard SSD or Premium SSD SKU", to,
                            tw_sku_family_name(t.family));
    for (size_t i = 0; i < n; i++) {
        if (d[i].disk.role == TW_DISK_OS && !os_disk)
            continue;
        /* the disk's SKU as last seen (ARM's observations, the executor's
         * among them, are the SKU history's newest; the row follows reports) */
        char cur[32];
        snprintf(cur, sizeof cur, "%s", d[i].disk.sku);
        struct tw_store_sku_hist_row *h = NULL;
        size_t nh = 0;
        struct tw_error he = {0};
        if (tw_store_disk_history(st, d[i].id, &h, &nh, &he) == TW_OK && nh && h[nh - 1].sku[0])
            snprintf(cur, sizeof cur, "%s", h[nh - 1].sku);
        free(h);
        struct tw_sku f;
        if (!tw_sku_parse(cur, &f) || !family_rank(f.family))
            continue; /* the executor's checks say why it can't move */
        if (family_rank(t.family) > family_rank(f.family))
            return tw_error_set(err, TW_EINVAL, "--to %s: disk %s is on %s, a cheaper family; "
                                "vm stop only moves disks down (vm start restores them)", to,
                                d[i].disk.name, cur);
        /* within a family, ZRS is the dearer redundancy: LRS -> ZRS is no downgrade */
        if (t.family == f.family && t.redundancy == TW_SKU_ZRS && f.redundancy == TW_SKU_LRS)
            return tw_error_set(err, TW_EINVAL, "--to %s: disk %s is on %s, the cheaper "
                                "redundancy of the same family; vm stop only moves disks down "
                                "(vm start restores them)", to, d[i].disk.name, cur);
    }
    return TW_OK;
}

/* Each disk's target under POL (or TO) into T[0..N). */
static enum tw_err targets(struct tw_store *st, const struct tw_store_vm_row *vm,
                           const struct tw_store_disk_row *d, size_t n, const struct tw_policy *pol,
                           const char *to, bool os_disk, struct tw_exec_stop_disk *t,
                           char (*sku)[32], struct tw_error *err)
{
    struct tw_tier_catalog cat = {0};
    struct tw_pricebook *book = NULL;
    char currency[4] = "";
    enum tw_err rc = TW_OK;
    if (to && (rc = check_to(st, to, d, n, os_disk, err)) != TW_OK)
        return rc;
    if (pol) {
        if ((rc = tw_tier_catalog_builtin(&cat, err)) != TW_OK)
            return rc;
        if ((rc = tw_opp_currency(st, NULL, currency, err)) != TW_OK ||
            (rc = tw_svc_prices_load(st, vm->location, currency, &book, err)) != TW_OK) {
            tw_tier_catalog_cleanup(&cat);
            return rc;
        }
    }
    for (size_t i = 0; i < n; i++) {
        t[i].disk_id = d[i].id;
        t[i].to_sku = NULL;
        t[i].policy = pol ? pol->name : NULL;
        bool os = d[i].disk.role == TW_DISK_OS;
        if (os && !os_disk)
            continue;
        if (to) {
            snprintf(sku[i], 32, "%s", to);
            t[i].to_sku = sku[i];
            continue;
        }
        const char *const *allowed = (const char *const *)(const void *)NULL;
        const char *al[TW_POLICY_TARGETS_MAX];
        for (size_t k = 0; k < pol->n_targets; k++)
            al[k] = pol->targets[k];
        allowed = al;
        struct tw_target tg;
        struct tw_error te = {0};
        if (tw_target_choose(&cat, book, vm->location, currency, d[i].disk.sku, d[i].disk.tier,
                             d[i].disk.size_gib, allowed, pol->n_targets, pol->cheapest, &tg,
                             &te) != TW_OK) {
            tw_app_note(TW_CLI_PROG, "vm stop: %s left as it is: %s", d[i].disk.name, te.msg);
            continue;
        }
        if (os && !pol->os_disk_to_hdd && !strncasecmp(tg.sku, "Standard_", 9)) {
            tw_app_note(TW_CLI_PROG, "vm stop: %s left as it is: the policy keeps an OS disk off "
                        "Standard HDD (os_disk_to_hdd)", d[i].disk.name);
            continue;
        }
        snprintf(sku[i], 32, "%s", tg.sku);
        t[i].to_sku = sku[i];
    }
    tw_pricebook_free(book);
    tw_tier_catalog_cleanup(&cat);
    return rc;
}

static bool parse_ms(const char *s, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < 1 || v > 600000)
        return false;
    *out = v;
    return true;
}

int tw_cli_cmd_vm(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? TW_EXIT_USAGE : TW_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version"))
        return tw_app_print_version(TW_CLI_PROG);
    bool stop = !strcmp(argv[1], "stop");
    if (!stop && strcmp(argv[1], "start")) {
        tw_app_error(TW_CLI_PROG, "vm: unknown subcommand \"%s\"; give stop or start", argv[1]);
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[1];
    argc--;
    argv++;
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"vm", required_argument, NULL, 'm'},
        {"policy", required_argument, NULL, 'p'},
        {"to", required_argument, NULL, 't'},
        {"os-disk", no_argument, NULL, 'O'},
        {"execute", no_argument, NULL, 'x'},
        {"json", no_argument, NULL, 'j'},
        {"poll-ms", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        TW_ARM_ARGS_OPTS,
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *vm_name = NULL, *policy_path = NULL, *to = NULL;
    bool os_disk = false, execute = false, json = false;
    long poll_ms = 2000;
    struct tw_arm_args aa;
    memset(&aa, 0, sizeof aa);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        if (tw_arm_args_take(&aa, c, optarg))
            continue;
        switch (c) {
        case 'd': db = optarg; break;
        case 'm': vm_name = optarg; break;
        case 'p': policy_path = optarg; break;
        case 't': to = optarg; break;
        case 'O': os_disk = true; break;
        case 'x': execute = true; break;
        case 'j': json = true; break;
        case 'o':
            if (!parse_ms(optarg, &poll_ms)) {
                tw_app_error(TW_CLI_PROG, "vm %s: --poll-ms %s: give milliseconds from 1 to "
                                          "600000", sub, optarg);
                return TW_EXIT_USAGE;
            }
            break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "vm %s: unexpected argument \"%s\"", sub, argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db || !vm_name) {
        tw_app_error(TW_CLI_PROG, "vm %s: give --db FILE and --vm NAME", sub);
        return TW_EXIT_USAGE;
    }
    if (stop && !policy_path == !to) {
        tw_app_error(TW_CLI_PROG, "vm stop: give one of --policy FILE or --to SKU (the disks' "
                                  "target)");
        return TW_EXIT_USAGE;
    }
    if (!stop && (policy_path || to || os_disk)) {
        tw_app_error(TW_CLI_PROG, "vm start: --policy, --to and --os-disk are vm stop's; vm "
                                  "start restores each disk's original SKU");
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "vm %s: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", sub, db);
        return TW_EXIT_USAGE;
    }
    struct tw_error err = {0};
    int status = TW_EXIT_OK;
    enum tw_err rc;
    struct tw_policy pol;
    memset(&pol, 0, sizeof pol);
    struct tw_arm_env env;
    memset(&env, 0, sizeof env);
    struct tw_store *st = NULL;
    struct tw_store_disk_row *drows = NULL;
    size_t nd = 0;
    struct tw_exec_stop_disk *t = NULL;
    char (*skus)[32] = NULL;
    struct tw_vmcap_table caps = {0};
    struct tw_buf text;
    tw_buf_init(&text, TW_POLICY_FILE_MAX);
    struct tw_cli_exec_out out = {json, stdout, json ? json_array() : NULL};
    struct tw_store_vm_row vrow;
    memset(&vrow, 0, sizeof vrow);
    int64_t vm_id = 0;
    if (policy_path) {
        if ((rc = tw_app_read_file(policy_path, &text, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "vm stop: --policy: %s", err.msg);
            status = tw_app_exit_code(rc);
            goto out;
        }
        if (tw_policy_parse(text.data ? text.data : "", text.len, &pol, NULL, &err) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "vm stop: %s: %s (tierwise policy check %s lists every "
                                      "problem)", policy_path, err.msg, policy_path);
            status = TW_EXIT_USAGE;
            goto out;
        }
        if (!pol.switches || !pol.n_targets) {
            tw_app_error(TW_CLI_PROG, "vm stop: %s: policy %s has no target (\"target\": "
                                      "\"none\"); give --to SKU", policy_path, pol.name);
            status = TW_EXIT_USAGE;
            goto out;
        }
    }
    if ((rc = tw_store_open(db, &st, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "vm %s: %s", sub, err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if ((rc = tw_store_vm_by_name(st, vm_name, &vm_id, &err)) != TW_OK ||
        (rc = tw_store_vm(st, vm_id, &vrow, &err)) != TW_OK ||
        (rc = tw_store_vm_disks(st, vm_id, &drows, &nd, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "vm %s: --vm %s: %s", sub, vm_name, err.msg);
        status = rc == TW_ENOENT || rc == TW_EINVAL ? TW_EXIT_USAGE : tw_app_exit_code(rc);
        goto out;
    }
    if (stop) {
        t = calloc(nd ? nd : 1, sizeof *t);
        skus = calloc(nd ? nd : 1, sizeof *skus);
        if (!t || !skus) {
            tw_app_error(TW_CLI_PROG, "vm stop: out of memory");
            status = TW_EXIT_FAIL;
            goto out;
        }
        if ((rc = targets(st, &vrow, drows, nd, policy_path ? &pol : NULL, to, os_disk, t, skus,
                          &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "vm stop: %s", err.msg);
            status = rc == TW_EINVAL ? TW_EXIT_USAGE : tw_app_exit_code(rc);
            goto out;
        }
    }
    tw_store_close(st);
    st = NULL;
    if ((rc = tw_vmcap_table_builtin(&caps, &err)) != TW_OK ||
        (rc = tw_arm_args_open(&aa, &env, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "vm %s: %s", sub, err.msg);
        status = TW_EXIT_USAGE;
        goto out;
    }
    struct tw_exec_arm_real real;
    struct tw_exec_sink sink = {tw_cli_exec_result, &out};
    struct tw_exec_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.db_path = db;
    eo.parallel = 1;
    eo.poll_ms = poll_ms;
    eo.dry_run = !execute;
    eo.caps = &caps;
    eo.sink = &sink;
    static volatile sig_atomic_t stop_flag;
    stop_flag = 0;
    tw_app_catch_signals(&stop_flag);
    eo.stop = &stop_flag;
    tw_cli_exec_opts(&eo, &real, &env);
    struct tw_exec_summary sum;
    memset(&sum, 0, sizeof sum);
    struct tw_exec_start_info si;
    memset(&si, 0, sizeof si);
    /* vm start: each disk not restored is judged by the policy that
     * downgraded it (true when none is stored: the default) */
    rc = stop ? tw_exec_vm_stop(&eo, vm_id, t, nd, &sum, &err)
              : tw_exec_vm_start(&eo, vm_id, true, &sum, &si, &err);
    if (json) {
        json_t *doc = json_pack("{s:b, s:s, s:s, s:O, s:o}", "dry_run", !execute, "vm", vrow.name,
                                "command", sub, "results", out.results, "summary",
                                tw_exec_summary_json(&sum));
        if (rc != TW_OK && doc)
            json_object_set_new(doc, "error", json_string(err.msg));
        if (!stop && execute && doc) {
            json_object_set_new(doc, "started", json_boolean(si.started));
            json_object_set_new(doc, "why", json_string(si.why));
        }
        if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0)
            status = TW_EXIT_FAIL;
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        tw_cli_exec_summary_text(stdout, &sum, !execute);
        /* runbooks read this line: whether the VM runs now, and why not */
        if (!stop && execute && si.started)
            printf("VM %s started%s%s\n", vrow.name, si.why[0] ? ": " : "", si.why);
        else if (!stop && execute)
            printf("VM %s NOT started: %s\n", vrow.name,
                   si.why[0] ? si.why : (rc != TW_OK ? err.msg : "the start did not complete"));
    }
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "vm %s: %s", sub, err.msg);
        status = TW_EXIT_FAIL;
    } else if (sum.failed) {
        tw_app_error(TW_CLI_PROG, "vm %s: %lld %s failed (tierwise actions --db %s --vm %s "
                                  "says why)", sub, (long long)sum.failed,
                     sum.failed == 1 ? "step" : "steps", db, vrow.name);
        status = TW_EXIT_FAIL;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "vm %s: writing the output failed", sub);
        status = TW_EXIT_FAIL;
    }
out:
    json_decref(out.results);
    tw_arm_env_close(&env);
    tw_vmcap_table_cleanup(&caps);
    free(t);
    free(skus);
    free(drows);
    free(vrow.tags);
    tw_store_close(st);
    tw_policy_cleanup(&pol);
    tw_buf_cleanup(&text);
    return status;
}
