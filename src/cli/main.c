/*
 * main.c - tierwise: the admin command line of the backend.
 *
 * This version reads and checks bench result records; the backend
 * commands (serve, compliance, prices, savings, plan, apply, report) come
 * with the backend.
 */
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "cli/cli.h"

struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct cmd cmds[] = {
    {"result", tw_cli_cmd_result, "check bench result files and print them for people"},
    {"compliance", tw_cli_cmd_compliance, "judge results against the disks' rated tiers"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: %s COMMAND [OPTIONS]\n\n"
               "Makes Azure managed disks cheaper and proves they deliver their tier.\n\n"
               "Commands:\n", TW_CLI_PROG);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n%s COMMAND --help describes a command's options.\n"
               "Exit status: 0 done, 1 the work failed, 2 bad input or usage.\n",
            TW_CLI_PROG);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return TW_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return TW_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("%s %s\n", TW_CLI_PROG, TW_VERSION);
        return TW_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].run(argc - 1, argv + 1);
    }
    tw_app_error(TW_CLI_PROG, "unknown command \"%s\"; %s --help lists the commands", argv[1],
                 TW_CLI_PROG);
    return TW_EXIT_USAGE;
}
