/* cli.h - the subcommands of tierwise. */
#ifndef TW_CLI_H
#define TW_CLI_H

#define TW_CLI_PROG "tierwise"

/* Options every command takes (README "Output for people and programs"):
 * -q/--quiet (no notes on stderr; errors are always said), -v/--verbose
 * (also what was read, from where, and how long it took), --version
 * (tw_app_main answers it before the command runs; listed so that getopt
 * takes its abbreviations too).  TW_CLI_SAY_HELP is their --help text. */
#define TW_CLI_OPT_VERSION 0x7601
#define TW_CLI_SAY_OPTS                                                                            \
    {"quiet", no_argument, NULL, 'q'}, {"verbose", no_argument, NULL, 'v'},                        \
        {"version", no_argument, NULL, TW_CLI_OPT_VERSION}
#define TW_CLI_SAY_HELP                                                                            \
    "  -q, --quiet       no notes on stderr (errors are always said)\n"                             \
    "  -v, --verbose     also say on stderr what is read, from where, and how long it\n"           \
    "                    took\n"                                                                    \
    "      --version     print the version and exit\n"

/* The switch cases of -q and -v (TW_CLI_OPT_VERSION is the command's to
 * answer with tw_app_print_version, after freeing what it holds). */
#define TW_CLI_SAY_CASES                                                                           \
    case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;                                           \
    case 'v': tw_app_set_verbosity(TW_APP_VERBOSE); break

int tw_cli_cmd_result(int argc, char **argv);
int tw_cli_cmd_compliance(int argc, char **argv);
int tw_cli_cmd_serve(int argc, char **argv);
int tw_cli_cmd_token(int argc, char **argv);
int tw_cli_cmd_prices(int argc, char **argv);
int tw_cli_cmd_policy(int argc, char **argv);
/* savings: the what-if calculator (cmd_savings.c); with --policy or
 * --month it hands the whole ARGV to the fleet's opportunities. */
int tw_cli_cmd_savings(int argc, char **argv);
/* savings --db F --policy FILE --month M: the fleet's opportunities
 * (cmd_savings_fleet.c); ARGV is the savings command's whole. */
int tw_cli_savings_fleet(int argc, char **argv);
/* plan: the switches a policy calls for over a period (cmd_plan.c). */
int tw_cli_cmd_plan(int argc, char **argv);
/* apply, vm stop|start, actions: the executor's commands (cmd_apply.c,
 * cmd_vm.c, cmd_actions.c). */
int tw_cli_cmd_apply(int argc, char **argv);
int tw_cli_cmd_vm(int argc, char **argv);
int tw_cli_cmd_actions(int argc, char **argv);
/* drift: running VMs on disks below what their policy requires (cmd_drift.c). */
int tw_cli_cmd_drift(int argc, char **argv);
/* sync: the fleet's VMs and disks from ARM into the store (cmd_sync.c). */
int tw_cli_cmd_sync(int argc, char **argv);
/* report monthly: the monthly cost-saving report (cmd_report.c). */
int tw_cli_cmd_report(int argc, char **argv);
/* store copy: a database copied into another, empty one (cmd_store.c). */
int tw_cli_cmd_store(int argc, char **argv);

#endif
