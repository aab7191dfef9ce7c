/*
 * main.c - tierwise: the admin command line.
 *
 * This version checks bench result records and judges them against the
 * disks' rated tiers; the backend's commands (serve, prices, savings,
 * plan, apply, report) come with the backend.
 */
#include <stdio.h>

#include "app/app.h"
#include "cli/cli.h"

static const struct tw_app_cmd cmds[] = {
    {"result", tw_cli_cmd_result, "check bench result files and print them for people"},
    {"compliance", tw_cli_cmd_compliance, "judge results against the disks' rated tiers"},
    {"serve", tw_cli_cmd_serve, "run the REST backend (SQLite store, /api/v1, dashboard)"},
    {"token", tw_cli_cmd_token, "create, list and revoke the backend's API tokens"},
    {"prices", tw_cli_cmd_prices, "refresh, import and show disk prices (Azure Retail Prices)"},
    {"savings", tw_cli_cmd_savings, "what moving disks to a cheaper SKU while deallocated saves"},
    {"policy", tw_cli_cmd_policy, "check policy files and show the windows they give a VM"},
    {"plan", tw_cli_cmd_plan, "the tier switches a policy calls for over a period (or as a calendar)"},
    {"apply", tw_cli_cmd_apply, "one tick of the scheduler: plan what is due, switch the disks"},
    {"vm", tw_cli_cmd_vm, "vm stop|start: deallocate and downgrade, restore and start"},
    {"actions", tw_cli_cmd_actions, "the audit log of tier switches and VM actions"},
    {"drift", tw_cli_cmd_drift, "disks below the SKU their policy requires while the VM runs"},
    {"sync", tw_cli_cmd_sync, "read the fleet's VMs and disks from Azure Resource Manager"},
    {"report", tw_cli_cmd_report, "the monthly cost-saving report as HTML, CSV or JSON (report monthly)"},
    {"store", tw_cli_cmd_store, "store copy: a database copied into another, verified (SQLite, PostgreSQL)"},
};

int main(int argc, char **argv)
{
    return tw_app_main(TW_CLI_PROG,
                       "Makes Azure managed disks cheaper and proves they deliver their tier.",
                       "Every command takes -q/--quiet (no notes on stderr), -v/--verbose (also\n"
                       "what is read and from where), --version and --help.\n"
                       "Exit status: 0 done, 1 the work failed, 2 bad input or usage.", cmds,
                       sizeof(cmds) / sizeof(cmds[0]), argc, argv);
}
