/*
 * main.c - tierwise-agent: the part of tierwise that runs on each VM.
 *
 * It benchmarks the VM's disks and imports fio runs into the same result
 * record; later it also reads the VM's inventory and reports to the
 * backend.
 */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/sys.h"
#include "core/uuid.h"

struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct cmd cmds[] = {
    {"bench", tw_agent_cmd_bench, "benchmark a disk, a file or a device with a named profile"},
    {"import-fio", tw_agent_cmd_import_fio, "turn fio output (JSON or text) into a result record"},
    {"inventory", tw_agent_cmd_inventory, "this VM's managed disks (IMDS) and their Linux devices"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: %s COMMAND [OPTIONS]\n\n"
               "Measures what Azure managed disks deliver, the way their ratings are measured.\n\n"
               "Commands:\n", TW_AGENT_PROG);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n%s COMMAND --help describes a command's options.\n"
               "Exit status: 0 done, 1 the work failed, 2 bad input or usage, 3 not on Azure\n"
               "(IMDS unreachable; inventory), 130 interrupted.\n",
            TW_AGENT_PROG);
}

void tw_agent_new_id(char *id, unsigned long idlen)
{
    unsigned char rnd[16];
    char uuid[TW_UUID_STRLEN + 1];
    if (tw_sys_random(rnd, sizeof(rnd)) != 0) {
        /* No kernel randomness: a time-derived id is still unique enough
         * to tell results apart. */
        unsigned long long t = tw_now_ns();
        for (int i = 0; i < 16; i++)
            rnd[i] = (unsigned char)(t >> ((i % 8) * 8)) ^ (unsigned char)(i * 37);
    }
    tw_uuid_format(rnd, uuid);
    snprintf(id, idlen, "%s", uuid);
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
        printf("%s %s\n", TW_AGENT_PROG, TW_VERSION);
        return TW_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].run(argc - 1, argv + 1);
    }
    tw_app_error(TW_AGENT_PROG, "unknown command \"%s\"; %s --help lists the commands",
                 argv[1], TW_AGENT_PROG);
    return TW_EXIT_USAGE;
}
