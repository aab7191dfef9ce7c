/*
 * cmd_actions.c - tierwise actions --db F [--vm NAME] [--state S] [--json]:
 * the audit log of tier switches and VM actions, each with its moves.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "cli/cli.h"
#include "service/exec.h"
#include "store/store.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s actions --db FILE [--vm NAME] [--state S] [--json]\n\n"
            "The audit log of the actions tierwise planned or ran (tier switches of disks,\n"
            "deallocations and starts of VMs): per action its VM, disk, kind, SKUs, due\n"
            "time, state, reason, attempts and every move of its state machine (planned,\n"
            "checked, sent, verified, done | skipped | failed) with when, by whom and why.\n\n"
            "  --db DB           the tierwise database: a SQLite file (it must exist) or a\n"
            "                    PostgreSQL connection string (postgresql://...)\n"
            "  --vm NAME         only the actions of VM NAME (any case; a VM not stored is\n"
            "                    refused with exit 2)\n"
            "  --state S         only the actions in state S (planned, checked, sent,\n"
            "                    verified, done, skipped, failed)\n"
            "  --json            print a JSON array, one object per action with id, vm, disk,\n"
            "                    kind, from_sku, to_sku, due_at, state, reason, attempts,\n"
            "                    updated_at and transitions [{from, to, at, owner, detail}]\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 the database failed; 2 bad usage (an unknown state, no\n"
            "such database, no VM of that name stored).\n",
            TW_CLI_PROG);
}

static bool state_ok(const char *s)
{
    for (int i = TW_ACT_PLANNED; i <= TW_ACT_FAILED; i++)
        if (!strcmp(s, tw_action_state_name((enum tw_action_state)i)))
            return true;
    return false;
}

int tw_cli_cmd_actions(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"vm", required_argument, NULL, 'm'},
        {"state", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *db = NULL, *vm = NULL, *state = NULL;
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'm': vm = optarg; break;
        case 's': state = optarg; break;
        case 'j': json = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "actions: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!db) {
        tw_app_error(TW_CLI_PROG, "actions: give --db FILE (the backend's database)");
        return TW_EXIT_USAGE;
    }
    if (state && !state_ok(state)) {
        tw_app_error(TW_CLI_PROG, "actions: --state %s: not a state; give planned, checked, "
                                  "sent, verified, done, skipped or failed", state);
        return TW_EXIT_USAGE;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0) {
        tw_app_error(TW_CLI_PROG, "actions: --db %s: no such database; give the backend's "
                                  "database (tierwise serve --db)", db);
        return TW_EXIT_USAGE;
    }
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    int status = TW_EXIT_OK;
    enum tw_err rc = tw_store_open(db, &st, &err);
    if (rc == TW_OK && vm) {
        /* an unknown VM is a mistake, not a VM without actions; several
         * VMs of that name are fine here (all their actions are listed) */
        int64_t vid = 0;
        struct tw_error ve = {0};
        if (tw_store_vm_by_name(st, vm, &vid, &ve) == TW_ENOENT) {
            tw_app_error(TW_CLI_PROG, "actions: %s", ve.msg);
            status = TW_EXIT_USAGE;
            goto out;
        }
    }
    if (rc == TW_OK) {
        struct tw_store_action_filter f = {0};
        f.vm = vm;
        f.state = state;
        rc = tw_store_actions_list(st, &f, &rows, &n, NULL, &err);
    }
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "actions: %s", err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-6s %-20s %-24s %-10s %-16s %-16s %-20s %-9s %3s  %s\n", "ID", "VM", "DISK",
               "KIND", "FROM", "TO", "DUE", "STATE", "TRY", "REASON");
    for (size_t i = 0; i < n; i++) {
        struct tw_store_action_move_row *mv = NULL;
        size_t nm = 0;
        if ((rc = tw_store_action_moves(st, rows[i].id, &mv, &nm, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "actions: %s", err.msg);
            status = tw_app_exit_code(rc);
            json_decref(arr);
            goto out;
        }
        if (json) {
            json_t *o = tw_exec_action_json(&rows[i], mv, nm);
            if (!o || json_array_append_new(arr, o)) {
                free(mv);
                json_decref(arr);
                tw_app_error(TW_CLI_PROG, "actions: out of memory");
                status = TW_EXIT_FAIL;
                goto out;
            }
        } else {
            printf("%-6lld %-20s %-24s %-10s %-16s %-16s %-20s %-9s %3d  %s\n",
                   (long long)rows[i].id, rows[i].vm[0] ? rows[i].vm : "-",
                   rows[i].disk[0] ? rows[i].disk : "-", rows[i].kind,
                   rows[i].from_sku[0] ? rows[i].from_sku : "-",
                   rows[i].to_sku[0] ? rows[i].to_sku : "-",
                   rows[i].due_at[0] ? rows[i].due_at : "-", rows[i].state, rows[i].attempts,
                   rows[i].reason);
            if (tw_app_get_verbosity() >= TW_APP_VERBOSE)
                for (size_t k = 0; k < nm; k++)
                    printf("       %s %s -> %s by %s: %s\n", mv[k].at,
                           mv[k].from_state[0] ? mv[k].from_state : "(new)", mv[k].to_state,
                           mv[k].owner[0] ? mv[k].owner : "-", mv[k].detail);
        }
        free(mv);
    }
    if (json) {
        if (json_dumpf(arr, stdout, JSON_INDENT(2)) != 0)
            status = TW_EXIT_FAIL;
        fputc('\n', stdout);
        json_decref(arr);
    } else if (n == 0) {
        printf("(no action)\n");
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        tw_app_error(TW_CLI_PROG, "actions: writing the output failed");
        status = TW_EXIT_FAIL;
    }
out:
    tw_store_action_rows_free(rows, n);
    tw_store_close(st);
    return status;
}
