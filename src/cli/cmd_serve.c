/* Placeholder until this command is written (being built in parallel). */
#include <stdio.h>

#include "cli/cli.h"

int tw_cli_cmd_serve(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("not built yet\n", stderr);
    return 1;
}
