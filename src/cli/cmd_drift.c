/*
 * cmd_drift.c - tierwise drift --db F [--policy FILE]... [--json]
 * [--fail-on-drift]: the disks whose VM runs while they are below the SKU
 * their policy requires while running (service/drift.h judges; this file
 * reads options and prints a table or the document GET /api/v1/drift
 * answers).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "cli/cli.h"
#include "core/buf.h"
#include "core/policy.h"
#include "service/drift.h"
#include "store/store.h"

#define MAX_POLICIES 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s drift --db FILE [--policy FILE]... [--json] [--fail-on-drift]\n\n"
            "The disks drifting now: a VM running (its newest power state, from an agent's\n"
            "report or ARM's instance view, is running or starting) on a disk below the SKU\n"
            "its policy requires while running, the disk's original SKU that tierwise's\n"
            "first downgrade recorded, when a policy covering the disk by that SKU has\n"
            "require_original_before_start (a failed or skipped upgrade, a VM started in\n"
            "the portal mid-window). Since is the later of the VM's start and the disk's\n"
            "change to the SKU it is on.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --policy FILE     a policy (tierwise.policy/1); repeat for several (at most\n"
            "                    %d); none: the policies the database holds (serve\n"
            "                    --policies stores them)\n"
            "  --json            print {\"drift\": [{\"vm\", \"disk\", \"sku\", \"required_sku\",\n"
            "                    \"since\", \"policy\", \"vm_id\", \"disk_id\"}], \"count\": N},\n"
            "                    as GET /api/v1/drift answers\n"
            "  --fail-on-drift   exit 1 when any disk drifts (for scripts and checks)\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done, drift found or not (1 with --fail-on-drift when any disk\n"
            "drifts); 1 the database failed or writing failed; 2 bad usage or input (a\n"
            "policy file that does not parse, a database that does not exist, a stored\n"
            "policy that no longer reads).\n",
            TW_CLI_PROG, MAX_POLICIES);
}

struct table {
    size_t n;
};

static enum tw_err row(void *arg, const struct tw_drift *d)
{
    struct table *t = arg;
    if (t->n++ == 0)
        printf("%-20s %-24s %-16s %-16s %-20s %s\n", "VM", "DISK", "SKU", "REQUIRED", "POLICY",
               "SINCE");
    printf("%-20s %-24s %-16s %-16s %-20s %s\n", d->vm, d->disk, d->sku, d->required_sku,
           d->policy, d->since);
    return TW_OK;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tw_cli_cmd_drift(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"policy", required_argument, NULL, 'p'},
        {"json", no_argument, NULL, 'j'},
        {"fail-on-drift", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *paths[MAX_POLICIES];
    size_t n_paths = 0;
    bool json = false, fail_on = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'p':
            if (n_paths == MAX_POLICIES) {
                tw_app_error(TW_CLI_PROG, "drift: at most %d --policy files; give fewer, or "
                                          "store them (serve --policies DIR) and give none",
                             MAX_POLICIES);
                return TW_EXIT_USAGE;
            }
            paths[n_paths++] = optarg;
            break;
        case 'j': json = true; break;
        case 'f': fail_on = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "drift: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db) {
        tw_app_error(TW_CLI_PROG, "drift: give the database with --db FILE (tierwise serve "
                                  "--db)");
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "drift: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    int status = TW_EXIT_OK;
    struct tw_error err = {0};
    struct tw_policy pols[MAX_POLICIES];
    const struct tw_policy *ptrs[MAX_POLICIES];
    size_t n_pols = 0;
    struct tw_store *st = NULL;
    char *doc = NULL;
    for (size_t i = 0; i < n_paths; i++) {
        struct tw_buf text;
        tw_buf_init(&text, TW_POLICY_FILE_MAX);
        enum tw_err rc = tw_app_read_file(paths[i], &text, &err);
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "drift: --policy: %s", err.msg);
            tw_buf_cleanup(&text);
            status = tw_app_exit_code(rc);
            goto out;
        }
        rc = tw_policy_parse(text.data ? text.data : "", text.len, &pols[n_pols], NULL, &err);
        tw_buf_cleanup(&text);
        ptrs[n_pols] = &pols[n_pols];
        n_pols++;
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "drift: %s: %s (tierwise policy check %s lists every "
                                      "problem)", paths[i], err.msg, paths[i]);
            status = TW_EXIT_USAGE;
            goto out;
        }
    }
    enum tw_err rc = tw_store_open(db, &st, &err);
    size_t found = 0;
    if (rc == TW_OK && n_pols == 0) {
        /* No policy at all requires anything: say so rather than let "no
         * drift" pass for a judgement. */
        char **names = NULL;
        size_t n_names = 0;
        rc = tw_store_policy_names(st, &names, &n_names, &err);
        for (size_t i = 0; i < n_names; i++)
            free(names[i]);
        free(names);
        if (rc == TW_OK && n_names == 0)
            tw_app_note(TW_CLI_PROG, "drift: no --policy given and the database holds no "
                                     "policies, so no disk is required to be on any SKU; give "
                                     "--policy FILE (or start the backend with --policies DIR, "
                                     "which stores them)");
    }
    if (rc == TW_OK && json) {
        rc = tw_svc_drift_json(st, ptrs, n_pols, now_ms(), JSON_INDENT(2), &doc, &found, &err);
        if (rc == TW_OK)
            printf("%s\n", doc);
    } else if (rc == TW_OK) {
        struct table t = {0};
        struct tw_drift_sink sink = {row, &t};
        rc = tw_svc_drift_list(st, ptrs, n_pols, now_ms(), &sink, &found, &err);
        if (rc == TW_OK && found == 0)
            printf("No disk drifts: every running VM's disks are on the SKU their policies "
                   "require.\n");
    }
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "drift: %s", err.msg[0] ? err.msg : tw_strerror(rc));
        status = rc == TW_EPARSE ? TW_EXIT_USAGE : tw_app_exit_code(rc);
        goto out;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "drift: writing the output failed");
        status = TW_EXIT_FAIL;
        goto out;
    }
    tw_app_detail(TW_CLI_PROG, "drift: %zu %s drifting, judged by %s", found,
                  found == 1 ? "disk" : "disks",
                  n_pols ? "the policies given" : "the policies the database holds");
    if (found && fail_on) {
        tw_app_error(TW_CLI_PROG, "drift: %zu %s below the SKU %s policy requires while %s VM "
                                  "runs", found, found == 1 ? "disk is" : "disks are",
                     found == 1 ? "its" : "their", found == 1 ? "its" : "their");
        status = TW_EXIT_FAIL;
    }
out:
    free(doc);
    tw_store_close(st);
    for (size_t i = 0; i < n_pols; i++)
        tw_policy_cleanup(&pols[i]);
    return status;
}
