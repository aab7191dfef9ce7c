/* cmd_import.c - tierwise-agent import-fio FILE [--json]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/fio_import.h"
#include "core/result_text.h"

#define IMPORT_MAX (64u << 20) /* fio outputs are kilobytes; 64 MiB is not one */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s import-fio FILE [--json]\n\n"
            "Reads fio's output, JSON (--output-format=json) or the normal text\n"
            "output (also when pasted without its leading spaces), and prints it\n"
            "as a tierwise result record. FILE \"-\" reads standard input.\n\n"
            "  --json     print the record as JSON (tierwise.bench-result/1)\n"
            "  -h, --help this text\n\n"
            "Several jobs are summed (IOPS, bandwidth) and their latencies combined.\n"
            "A sync engine (psync, sync) is recorded with effective queue depth 1.\n"
            "Exit status: 0 done, 1 a read error, 2 a missing file or not an fio output.\n",
            TW_AGENT_PROG);
}

int tw_agent_cmd_import_fio(int argc, char **argv)
{
    bool json;
    int st = tw_app_json_options(argc, argv, usage, &json);
    if (st >= 0)
        return st;
    if (optind != argc - 1) {
        tw_app_error(TW_AGENT_PROG, "import-fio takes one FILE (fio's output); see --help");
        return TW_EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct tw_buf in;
    struct tw_error err = {0};
    tw_buf_init(&in, IMPORT_MAX);
    enum tw_err rc = tw_app_read_file(path, &in, &err);
    struct tw_result *r = malloc(sizeof(*r));
    if (rc == TW_OK && !r)
        rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
    if (rc == TW_OK)
        rc = tw_fio_import(in.data, in.len, r, &err);
    tw_buf_cleanup(&in);
    if (rc != TW_OK) {
        if (err.line)
            tw_app_error(TW_AGENT_PROG, "%s:%ld: %s", path, err.line, err.msg);
        else
            tw_app_error(TW_AGENT_PROG, "%s: %s", path, err.msg);
        free(r);
        return tw_app_exit_code(rc);
    }
    tw_agent_new_id(r->id, sizeof(r->id));
    int status = tw_app_print_result(TW_AGENT_PROG, r, json);
    free(r);
    return status;
}
