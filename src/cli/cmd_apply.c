/*
 * cmd_apply.c - tierwise apply --db F (--policy FILE | --plan FILE)
 * [--execute] [--json]: one tick of the scheduler by hand (service/exec.h
 * does the work; this file reads options and prints), and the printing
 * that vm stop|start share (exec_cli.h).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/arm_args.h"
#include "cli/cli.h"
#include "cli/exec_cli.h"
#include "core/buf.h"
#include "core/policy.h"
#include "core/tier.h"
#include "core/vmcap.h"
#include "service/exec.h"
#include "service/vmsizes.h"
#include "store/store.h"

#define PLAN_FILE_MAX (64u << 20)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s apply --db FILE (--policy FILE | --plan FILE) [--execute] [--json]\n"
            "                [--currency C] [--parallel N] [--poll-ms MS] [ARM options]\n\n"
            "One tick of the scheduler: plans what the policy needs now (the switches of\n"
            "the last and the next day by its windows), records those due within a minute\n"
            "(a second run records nothing new), then runs the policy's due actions: each\n"
            "disk and its VM read from ARM and checked (VM deallocated or disk unattached,\n"
            "on the expected SKU, no update in progress, not shared, not hibernated, no\n"
            "on-demand bursting, Premium supported by the VM size), the SKU changed, the\n"
            "operation followed and the disk read back. An action interrupted (a crash, a\n"
            "kill) is resumed where it was and never sent twice. With --plan a saved plan\n"
            "(tierwise plan --json) stands for the policy. The time is the system clock's.\n"
            "Without --execute it is a dry run: nothing is written to ARM or the database;\n"
            "it prints what would be sent (method, URL, body) and the checks' outcome.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --policy FILE     a policy (tierwise.policy/1)\n"
            "  --plan FILE       a saved plan (tierwise.plan/1) instead of a policy\n"
            "  --execute         send the changes (else a dry run)\n"
            "  --currency C      the price books' currency for the policy's savings (default:\n"
            "                    the only one the database has)\n"
            "  --json            print {\"dry_run\", \"policy\", \"planned\", \"recorded\",\n"
            "                    \"expired\", \"results\": [...], \"summary\": {...}}\n"
            "  --parallel N      VMs worked at once (default 4; disks of one VM one at a time)\n"
            "  --poll-ms MS      between polls of an ARM operation (default 2000)\n"
            TW_ARM_ARGS_HELP
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done (skipped and waiting actions included: the reason is\n"
            "printed); 1 an action failed or the database or ARM failed; 2 bad usage or\n"
            "input (a policy or plan that does not parse).\n",
            TW_CLI_PROG);
}

/* ---- shared with vm stop|start ---- */

void tw_cli_exec_result(void *arg, const struct tw_exec_result *r)
{
    struct tw_cli_exec_out *o = arg;
    const struct tw_store_action_row *a = r->action;
    if (o->json) {
        json_t *j = tw_exec_result_json(r);
        if (j)
            json_array_append_new(o->results, j);
        return;
    }
    char what[400];
    if (a->disk[0])
        snprintf(what, sizeof what, "%s/%s %s %s -> %s", a->vm, a->disk, a->kind, a->from_sku,
                 a->to_sku);
    else
        snprintf(what, sizeof what, "%s %s", a->vm, a->kind);
    fprintf(o->f, "%s%s: %s", a->id ? "" : "(new) ", what,
            !strcmp(r->outcome, "nothing_to_send") ? "nothing to send" : r->outcome);
    if (r->reason && r->reason[0])
        fprintf(o->f, " (%s)", r->reason);
    fputc('\n', o->f);
    if (r->method && !strcmp(r->outcome, "would_send"))
        fprintf(o->f, "  would send: %s %s%s%s\n", r->method, r->url,
                r->body && r->body[0] ? " " : "", r->body ? r->body : "");
}

void tw_cli_exec_opts(struct tw_exec_opts *o, struct tw_exec_arm_real *real,
                      const struct tw_arm_env *env)
{
    memset(real, 0, sizeof *real);
    real->opts.arm_url = env->ep.url[TW_AZ_EP_ARM];
    real->opts.http = env->http;
    real->opts.poll_ms = o->poll_ms;
    real->cred = env->cred;
    real->pacer = env->pacer;
    o->arm = &tw_exec_arm_real_ops;
    o->arm_arg = real;
    o->arm_url = env->ep.url[TW_AZ_EP_ARM];
}

void tw_cli_exec_summary_text(FILE *f, const struct tw_exec_summary *s, bool dry_run)
{
    fprintf(f, "%lld %s: %lld done, %lld skipped, %lld failed, %lld waiting, %lld to retry",
            (long long)s->actions, s->actions == 1 ? "action" : "actions", (long long)s->done,
            (long long)s->skipped, (long long)s->failed, (long long)s->waiting,
            (long long)s->retry);
    if (s->held)
        fprintf(f, ", %lld held by another executor", (long long)s->held);
    if (dry_run)
        fprintf(f, ", %lld nothing to send, %lld would be sent (dry run: nothing written; "
                "--execute to send)", (long long)s->nothing_to_send, (long long)s->would_send);
    fputc('\n', f);
}

enum tw_err tw_cli_serve_exec_arm(const struct tw_az_endpoints *ep, struct tw_arm_cred **cred,
                                  struct tw_arm_pacer **pacer, struct tw_error *err)
{
    static char secret[1024];
    struct tw_arm_cred_opts co;
    memset(&co, 0, sizeof co);
    *cred = NULL;
    *pacer = NULL;
    enum tw_err rc = tw_arm_cred_from_env(&co, NULL, secret, sizeof secret, err);
    if (rc != TW_OK)
        return rc;
    co.imds_url = ep->url[TW_AZ_EP_IMDS];
    co.login_url = ep->url[TW_AZ_EP_LOGIN];
    if ((rc = tw_arm_cred_new(&co, NULL, cred, err)) != TW_OK)
        return rc;
    struct tw_arm_pace_opts po;
    memset(&po, 0, sizeof po);
    if ((rc = tw_arm_pacer_new(&po, pacer, err)) != TW_OK) {
        tw_arm_cred_free(*cred);
        *cred = NULL;
    }
    return rc;
}

static enum tw_err load_zone(void *arg, const char *name, struct tw_tz **out,
                             struct tw_error *err)
{
    (void)arg;
    return tw_tz_load(name, out, err);
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int tw_cli_cmd_apply(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'p'},
        {"plan", required_argument, NULL, 'P'},
        {"execute", no_argument, NULL, 'x'},
        {"json", no_argument, NULL, 'j'},
        {"parallel", required_argument, NULL, 'n'},
        {"poll-ms", required_argument, NULL, 'o'},
        {"currency", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        TW_ARM_ARGS_OPTS,
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *policy_path = NULL, *plan_path = NULL, *currency = NULL;
    bool execute = false, json = false;
    long parallel = 4, poll_ms = 2000;
    struct tw_arm_args aa;
    memset(&aa, 0, sizeof aa);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        if (tw_arm_args_take(&aa, c, optarg))
            continue;
        switch (c) {
        case 'd': db = optarg; break;
        case 'p': policy_path = optarg; break;
        case 'P': plan_path = optarg; break;
        case 'x': execute = true; break;
        case 'j': json = true; break;
        case 'c': currency = optarg; break;
        case 'n':
            if (!parse_int(optarg, 1, 64, &parallel)) {
                tw_app_error(TW_CLI_PROG, "apply: --parallel %s: give a whole number from 1 to 64",
                             optarg);
                return TW_EXIT_USAGE;
            }
            break;
        case 'o':
            if (!parse_int(optarg, 1, 600000, &poll_ms)) {
                tw_app_error(TW_CLI_PROG, "apply: --poll-ms %s: give milliseconds from 1 to "
                                          "600000", optarg);
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
        tw_app_error(TW_CLI_PROG, "apply: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db || (!policy_path == !plan_path)) {
        tw_app_error(TW_CLI_PROG, "apply: give --db FILE and one of --policy FILE or --plan FILE");
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "apply: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    struct tw_error err = {0};
    int status = TW_EXIT_OK;
    enum tw_err rc;
    struct tw_policy pol;
    memset(&pol, 0, sizeof pol);
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_svc_vmsizes *arm_sizes = NULL;
    struct tw_arm_env env;
    memset(&env, 0, sizeof env);
    struct tw_buf text;
    tw_buf_init(&text, plan_path ? PLAN_FILE_MAX : TW_POLICY_FILE_MAX);
    struct tw_cli_exec_out out = {json, stdout, json ? json_array() : NULL};
    const char *path = plan_path ? plan_path : policy_path;
    if ((rc = tw_app_read_file(path, &text, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s: %s", plan_path ? "--plan" : "--policy", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if (policy_path &&
        tw_policy_parse(text.data ? text.data : "", text.len, &pol, NULL, &err) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s: %s (tierwise policy check %s lists every problem)",
                     policy_path, err.msg, policy_path);
        status = TW_EXIT_USAGE;
        goto out;
    }
    if ((rc = tw_tier_catalog_builtin(&cat, &err)) != TW_OK ||
        (rc = tw_vmcap_table_builtin(&caps, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if ((rc = tw_arm_args_open(&aa, &env, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s", err.msg);
        status = TW_EXIT_USAGE;
        goto out;
    }
    struct tw_store *st = NULL;
    if ((rc = tw_store_open(db, &st, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    if ((arm_sizes = tw_svc_vmsizes_new()) != NULL) {
        struct tw_error aerr = {0};
        if (tw_svc_vmsizes_load_fleet(arm_sizes, st, &aerr) != TW_OK)
            tw_app_detail(TW_CLI_PROG, "apply: ARM's VM sizes not read: %s", aerr.msg);
    }
    tw_store_close(st);

    struct tw_exec_arm_real real;
    struct tw_exec_sink sink = {tw_cli_exec_result, &out};
    struct tw_exec_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.db_path = db;
    eo.parallel = (int)parallel;
    eo.poll_ms = poll_ms;
    eo.dry_run = !execute;
    eo.caps = &caps;
    eo.arm_sizes = arm_sizes;
    eo.sink = &sink;
    static volatile sig_atomic_t stop_flag;
    stop_flag = 0;
    tw_app_catch_signals(&stop_flag);
    eo.stop = &stop_flag;
    tw_cli_exec_opts(&eo, &real, &env);

    struct tw_exec_tick t;
    memset(&t, 0, sizeof t);
    t.exec = &eo;
    if (policy_path) {
        t.plan.policy = &pol;
        t.plan.cat = &cat;
        t.plan.caps = &caps;
        t.plan.arm_sizes = arm_sizes;
        t.plan.zone = load_zone;
        t.plan.currency = currency;
    } else {
        t.plan_json = text.data ? text.data : "";
        t.plan_len = text.len;
    }
    struct tw_exec_tick_summary sum;
    memset(&sum, 0, sizeof sum);
    rc = tw_exec_tick_run(&t, &sum, &err);
    if (json) {
        json_t *doc = json_pack("{s:b, s:s, s:I, s:I, s:O, s:o}", "dry_run", !execute, "policy",
                                sum.policy, "planned", (json_int_t)sum.planned, "recorded",
                                (json_int_t)sum.recorded, "results", out.results, "summary",
                                tw_exec_summary_json(&sum.run));
        if (doc)
            json_object_set_new(doc, "expired", json_integer((json_int_t)sum.expired));
        if (rc != TW_OK && doc)
            json_object_set_new(doc, "error", json_string(err.msg));
        if (!doc || json_dumpf(doc, stdout, JSON_INDENT(2)) != 0)
            status = TW_EXIT_FAIL;
        fputc('\n', stdout);
        json_decref(doc);
    } else if (rc == TW_OK) {
        printf("policy %s: %lld due by now, %lld newly recorded\n", sum.policy,
               (long long)sum.planned, (long long)sum.recorded);
        if (sum.expired)
            printf("%lld %s of the saved plan expired (due more than a day ago): not run; "
                   "make a new plan (tierwise plan)\n", (long long)sum.expired,
                   sum.expired == 1 ? "action" : "actions");
        tw_cli_exec_summary_text(stdout, &sum.run, !execute);
    }
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "apply: %s", err.msg[0] ? err.msg : tw_strerror(rc));
        status = rc == TW_EPARSE || rc == TW_EINVAL ? TW_EXIT_USAGE : tw_app_exit_code(rc);
    } else if (sum.run.failed > 0) {
        tw_app_error(TW_CLI_PROG, "apply: %lld %s failed (tierwise actions --db %s --state "
                                  "failed says why)", (long long)sum.run.failed,
                     sum.run.failed == 1 ? "action" : "actions", db);
        status = TW_EXIT_FAIL;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "apply: writing the output failed");
        status = TW_EXIT_FAIL;
    }
out:
    json_decref(out.results);
    tw_arm_env_close(&env);
    tw_svc_vmsizes_unref(arm_sizes);
    tw_vmcap_table_cleanup(&caps);
    tw_tier_catalog_cleanup(&cat);
    tw_policy_cleanup(&pol);
    tw_buf_cleanup(&text);
    return status;
}
