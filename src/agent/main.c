/*
 * main.c - tierwise-agent: the part of tierwise that runs on each VM.
 *
 * It reads the VM's inventory (IMDS and the device map), benchmarks the
 * VM's disks and imports fio runs into the same result record; later it
 * also reports to the backend.
 */
#include <stdio.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/sys.h"
#include "core/uuid.h"

static const struct tw_app_cmd cmds[] = {
    {"bench", tw_agent_cmd_bench, "benchmark a disk, a file or a device with a named profile"},
    {"import-fio", tw_agent_cmd_import_fio, "turn fio output (JSON or text) into a result record"},
    {"inventory", tw_agent_cmd_inventory, "this VM's managed disks (IMDS) and their Linux devices"},
    {"run", tw_agent_cmd_run, "inventory + benchmarks of the data disks, reported to the backend"},
};

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
    return tw_app_main(TW_AGENT_PROG,
                       "Measures what Azure managed disks deliver, the way their ratings are "
                       "measured.",
                       "Every command takes --version; -q/--quiet and -v/--verbose where its\n"
                       "--help lists them.\n"
                       "Exit status: 0 done, 1 the work failed, 2 bad input or usage, 3 not on "
                       "Azure\n(IMDS unreachable; inventory), 130 interrupted; run adds 4 to 7 "
                       "(run --help).",
                       cmds, sizeof(cmds) / sizeof(cmds[0]), argc, argv);
}
