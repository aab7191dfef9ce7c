/* cmd_result.c - tierwise result FILE...: check result records, print them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/app.h"
#include "cli/cli.h"
#include "core/result.h"
#include "core/result_text.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s result FILE... [--json] [-q] [-v]\n\n"
            "Reads bench result records (tierwise.bench-result/1, as written by\n"
            "tierwise-agent bench --json or import-fio --json), checks each against\n"
            "the record's contract and prints it for people. FILE \"-\" is stdin.\n\n"
            "  --json            print the checked records as JSON\n"
            TW_CLI_SAY_HELP
            "                    (-v: each file's size and record id)\n"
            "  -h, --help        this text\n\n"
            "Exit status: 0 all files valid, 1 a read error, 2 a missing file or one that\n"
            "is not a valid record (the message names the file and the field).\n",
            TW_CLI_PROG);
}

int tw_cli_cmd_result(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        tw_app_error(TW_CLI_PROG, "result needs at least one FILE; see result --help");
        return TW_EXIT_USAGE;
    }
    struct tw_result *r = malloc(sizeof(*r));
    if (!r) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    int status = TW_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct tw_buf in;
        struct tw_error err = {0};
        tw_buf_init(&in, 16u << 20);
        enum tw_err rc = tw_app_read_file(argv[i], &in, &err);
        size_t bytes = in.len;
        if (rc == TW_OK)
            rc = tw_result_from_json(in.data, in.len, r, &err);
        if (rc == TW_OK)
            tw_app_detail(TW_CLI_PROG, "result %s: %zu bytes, record %s", argv[i], bytes, r->id);
        tw_buf_cleanup(&in);
        if (rc != TW_OK) {
            tw_app_error(TW_CLI_PROG, "%s: %s", argv[i], err.msg);
            if (status == TW_EXIT_OK || tw_app_exit_code(rc) == TW_EXIT_FAIL)
                status = tw_app_exit_code(rc);
            continue;
        }
        if (tw_app_print_result(TW_CLI_PROG, r, json) != TW_EXIT_OK)
            status = TW_EXIT_FAIL;
    }
    free(r);
    return status;
}
