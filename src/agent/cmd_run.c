/* Placeholder until this command is written (being built in parallel). */
#include <stdio.h>

#include "agent/agent.h"

int tw_agent_cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("not built yet\n", stderr);
    return 1;
}
