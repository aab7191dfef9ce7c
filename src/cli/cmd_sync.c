/*
 * cmd_sync.c - tierwise sync --db F [--subscription ID]...
 * [--resource-group RG]... [--json] [ARM options]: the fleet from ARM into
 * the store (service/sync.h does the work; this file reads options and
 * prints).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "cli/arm_args.h"
#include "cli/cli.h"
#include "service/sync.h"
#include "store/store.h"

#define SYNC_MAX_ARGS 64 /* subscriptions, and resource groups, on one command line */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s sync --db FILE [--subscription ID]... [--resource-group RG]...\n"
            "                [--json] [ARM options]\n\n"
            "Reads every VM and managed disk of the subscriptions from Azure Resource\n"
            "Manager, agents or not (a deallocated VM has no agent to report), into the\n"
            "database: each VM's size, tags and power state, each disk's SKU, size, tier,\n"
            "disk state, LastOwnershipUpdateTime, maxShares and bursting, with source arm.\n"
            "A VM an agent reports too is one VM (resource ids compare in any case). A\n"
            "SKU or power state that changed gets a history row; a disk ARM no longer\n"
            "shows on its VM is detached. Disks attached to no VM are counted, not stored.\n"
            "Each VM is written in one transaction. The backend does the same every\n"
            "--sync-interval (tierwise serve --sync).\n\n"
            "  --db FILE         the tierwise database (created when new)\n"
            "  --subscription ID a subscription to read (repeatable; default: the one\n"
            "                    IMDS names for the VM tierwise runs on)\n"
            "  --resource-group RG\n"
            "                    only these resource groups of each subscription\n"
            "                    (repeatable; default: the whole subscriptions)\n"
            "  --json            print {\"vms\", \"vms_new\", \"disks\", \"disks_new\",\n"
            "                    \"sku_changes\", \"power_changes\", \"detached\",\n"
            "                    \"unattached_disks\", \"changes\": [{\"what\", \"vm\", \"disk\",\n"
            "                    \"from\", \"to\"}]}\n"
            TW_ARM_ARGS_HELP
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "ARM needs read access to the VMs and disks: the role of\n"
            "deploy/azure-role.json (README \"ARM access for tier switches\").\n\n"
            "Exit status: 0 synced; 1 ARM refused or could not be reached, or the\n"
            "database failed (the VMs stored before it stay); 2 bad usage (a subscription\n"
            "id that is no GUID, a bad resource group name, a --db that is not a\n"
            "tierwise database).\n",
            TW_CLI_PROG);
}

static void say_change(const struct tw_sync_change *c)
{
    const char *w = c->what;
    if (!strcmp(w, "vm_new"))
        printf("  new VM %s (%s)\n", c->vm, c->to);
    else if (!strcmp(w, "disk_new"))
        printf("  new disk %s/%s (%s)\n", c->vm, c->disk, c->to);
    else if (!strcmp(w, "sku"))
        printf("  %s/%s: %s -> %s\n", c->vm, c->disk, c->from, c->to);
    else if (!strcmp(w, "power"))
        printf("  %s: %s -> %s\n", c->vm, c->from[0] ? c->from : "(unknown)", c->to);
    else if (!strcmp(w, "detached"))
        printf("  %s/%s (%s) detached: ARM no longer shows it on the VM\n", c->vm, c->disk,
               c->from);
    else if (!strcmp(w, "attrs"))
        printf("  %s/%s: disk state %s -> %s\n", c->vm, c->disk,
               c->from[0] ? c->from : "(unknown)", c->to[0] ? c->to : "(unknown)");
    else if (!strcmp(w, "skipped"))
        printf("  %s/%s skipped: %s (the VM's other disks are stored)\n", c->vm, c->disk,
               c->to);
    else /* vm_fields: FROM and TO name the fields ("size A; location B") */
        printf("  %s: %s -> %s\n", c->vm, c->from, c->to);
}

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void say_summary(const struct tw_sync_summary *s)
{
    printf("%zu %s (%zu new), %zu %s (%zu new); %zu SKU %s, %zu power %s, %zu detached; "
           "%zu unattached %s (not stored)\n",
           s->vms, plural(s->vms, "VM", "VMs"), s->vms_new, s->disks,
           plural(s->disks, "disk", "disks"), s->disks_new, s->sku_changes,
           plural(s->sku_changes, "change", "changes"), s->power_changes,
           plural(s->power_changes, "change", "changes"), s->detached, s->unattached_disks,
           plural(s->unattached_disks, "disk", "disks"));
    for (size_t i = 0; i < s->n_changes; i++)
        say_change(&s->changes[i]);
}

int tw_cli_cmd_sync(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"subscription", required_argument, NULL, 's'},
        {"resource-group", required_argument, NULL, 'g'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        TW_ARM_ARGS_OPTS,
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL;
    const char *subs[SYNC_MAX_ARGS], *groups[SYNC_MAX_ARGS];
    size_t n_subs = 0, n_groups = 0;
    bool json = false;
    struct tw_arm_args aa;
    memset(&aa, 0, sizeof aa);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        if (tw_arm_args_take(&aa, c, optarg))
            continue;
        switch (c) {
        case 'd': db = optarg; break;
        case 's':
            if (!tw_sync_subscription_valid(optarg)) {
                tw_app_error(TW_CLI_PROG, "sync: --subscription %s: not a subscription id; give "
                             "its GUID (az account show --query id)", optarg);
                return TW_EXIT_USAGE;
            }
            if (n_subs == SYNC_MAX_ARGS) {
                tw_app_error(TW_CLI_PROG, "sync: at most %d --subscription", SYNC_MAX_ARGS);
                return TW_EXIT_USAGE;
            }
            subs[n_subs++] = optarg;
            break;
        case 'g':
            if (!tw_sync_resource_group_valid(optarg)) {
                tw_app_error(TW_CLI_PROG, "sync: --resource-group \"%.100s\" is not a resource "
                             "group name (1 to 90 letters, digits, _ - . ( ), not ending in .)",
                             optarg);
                return TW_EXIT_USAGE;
            }
            if (n_groups == SYNC_MAX_ARGS) {
                tw_app_error(TW_CLI_PROG, "sync: at most %d --resource-group", SYNC_MAX_ARGS);
                return TW_EXIT_USAGE;
            }
            groups[n_groups++] = optarg;
            break;
        case 'j': json = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "sync: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db) {
        tw_app_error(TW_CLI_PROG, "sync: give --db FILE (the backend's database)");
        return TW_EXIT_USAGE;
    }
    if (n_subs == 0)
        aa.also |= 1u << TW_AZ_EP_IMDS;

    struct tw_error err = {0};
    struct tw_arm_env env;
    memset(&env, 0, sizeof env);
    struct tw_arm *arm = NULL;
    struct tw_store *st = NULL;
    struct tw_sync_summary sum;
    memset(&sum, 0, sizeof sum);
    int status = TW_EXIT_OK;
    char imds_sub[64];
    enum tw_err rc = tw_arm_args_open(&aa, &env, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "sync: %s", err.msg);
        status = rc == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
        goto out;
    }
    if (n_subs == 0) {
        rc = tw_sync_default_subscription(&env.http, env.ep.url[TW_AZ_EP_IMDS], imds_sub,
                                          sizeof imds_sub, &err);
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "sync: %s", err.msg);
            status = TW_EXIT_FAIL;
            goto out;
        }
        tw_app_detail(TW_CLI_PROG, "sync: subscription %s, as IMDS names it", imds_sub);
        subs[n_subs++] = imds_sub;
    }
    if ((rc = tw_arm_env_client(&env, NULL, &arm, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "sync: %s", err.msg);
        status = TW_EXIT_FAIL;
        goto out;
    }
    if ((rc = tw_store_open(db, &st, &err)) != TW_OK) {
        /* A file that is no tierwise database is the command line's. */
        tw_app_error(TW_CLI_PROG, "sync: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    char words[512];
    tw_app_detail(TW_CLI_PROG, "sync: ARM %s with %s", env.ep.url[TW_AZ_EP_ARM],
                  tw_arm_env_cred_words(&env, words, sizeof words));
    struct tw_sync_opts so = {.st = st, .arm = tw_sync_arm_real(arm), .subscriptions = subs,
                              .n_subscriptions = n_subs, .resource_groups = groups,
                              .n_resource_groups = n_groups};
    rc = tw_sync_run(&so, &sum, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "sync: %s", err.msg);
        /* A name refused before anything was sent is the command line's. */
        status = rc == TW_EINVAL && sum.vms == 0 ? TW_EXIT_USAGE : TW_EXIT_FAIL;
        if (sum.vms)
            tw_app_note(TW_CLI_PROG, "sync: %zu VMs were stored before it", sum.vms);
        goto out;
    }
    if (json) {
        json_t *j = tw_sync_summary_json(&sum);
        char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
        json_decref(j);
        if (!text) {
            tw_app_error(TW_CLI_PROG, "sync: out of memory writing the summary");
            status = TW_EXIT_FAIL;
            goto out;
        }
        printf("%s\n", text);
        free(text);
    } else {
        say_summary(&sum);
    }
    if (fflush(stdout) != 0) {
        tw_app_error(TW_CLI_PROG, "sync: writing the summary failed");
        status = TW_EXIT_FAIL;
    }
out:
    tw_sync_summary_free(&sum);
    tw_store_close(st);
    tw_arm_free(arm);
    tw_arm_env_close(&env);
    return status;
}
