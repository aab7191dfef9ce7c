/* cmd_import.c - tierwise-agent import-fio FILE [--job-file F] [--fio-args "..."]
 * [--section NAME] [--json]. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/fio_import.h"
#include "core/result_text.h"

#define IMPORT_MAX (64u << 20) /* fio outputs are kilobytes; 64 MiB is not one */
#define JOB_FILE_MAX (1u << 20) /* a job file is a few lines */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s import-fio FILE [--job-file F] [--fio-args \"...\"] [--section NAME]\n"
            "                            [--json]\n\n"
            "Reads fio's output, JSON (--output-format=json) or the normal text\n"
            "output (also when pasted without its leading spaces), and prints it\n"
            "as a tierwise result record. FILE \"-\" reads standard input.\n\n"
            "  --job-file F       the job file the run used (fio's INI), for what the\n"
            "                     output leaves out: direct=, filename=/directory=,\n"
            "                     rwmixread=\n"
            "  --fio-args \"...\"   the command line the run used (\"--direct=1\n"
            "                     --filename=/dev/sdc ...\"), for the same; it wins over\n"
            "                     the job file, as on fio's command line\n"
            "  --section NAME     import only job section NAME of an output whose\n"
            "                     sections ran differently\n"
            "  --json             print the record as JSON (tierwise.bench-result/1)\n"
            "  -h, --help         this text\n\n"
            "The record says whether I/O was direct and how that was decided\n"
            "(method.direct true, false or null, and method.direct_basis). fio's\n"
            "text output doesn't show direct=: without --job-file or --fio-args a\n"
            "libaio random-read run counts as direct only when its disk statistics\n"
            "show more reads in flight at the disk than buffered I/O can keep there;\n"
            "otherwise direct is unknown and its verdict inconclusive.\n"
            "Several jobs of one method are summed (IOPS, bandwidth) and their\n"
            "latencies combined; sections of different methods or groups are refused\n"
            "(--section picks one). With --status-interval only fio's final report is\n"
            "read. Output cut short is refused.\n"
            "A sync engine (psync, sync) is recorded with effective queue depth 1.\n"
            "Exit status: 0 done, 1 a read error, 2 a missing file or not an fio output.\n",
            TW_AGENT_PROG);
}

int tw_agent_cmd_import_fio(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"job-file", required_argument, NULL, 'f'},
        {"fio-args", required_argument, NULL, 'a'},
        {"section", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    const char *job_file = NULL, *fio_args = NULL, *section = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'f': job_file = optarg; break;
        case 'a': fio_args = optarg; break;
        case 's': section = optarg; break;
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        tw_app_error(TW_AGENT_PROG, "import-fio takes one FILE (fio's output); see --help");
        return TW_EXIT_USAGE;
    }
    if (section && !section[0]) {
        tw_app_error(TW_AGENT_PROG, "--section needs the name of a job section of the output");
        return TW_EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct tw_buf in, jf;
    struct tw_error err = {0};
    tw_buf_init(&in, IMPORT_MAX);
    tw_buf_init(&jf, JOB_FILE_MAX);
    enum tw_err rc = TW_OK;
    if (job_file && (rc = tw_app_read_file(job_file, &jf, &err)) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--job-file %s: %s", job_file, err.msg);
        tw_buf_cleanup(&jf);
        tw_buf_cleanup(&in);
        return rc == TW_EIO ? TW_EXIT_FAIL : TW_EXIT_USAGE;
    }
    rc = tw_app_read_file(path, &in, &err);
    struct tw_result *r = malloc(sizeof(*r));
    if (rc == TW_OK && !r)
        rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
    struct tw_fio_hints h = {.job_file = job_file ? (jf.data ? jf.data : "") : NULL,
                             .job_file_len = jf.len,
                             .fio_args = fio_args,
                             .fio_args_len = fio_args ? strlen(fio_args) : 0,
                             .section = section};
    if (rc == TW_OK)
        rc = tw_fio_import_with(in.data, in.len, &h, r, &err);
    tw_buf_cleanup(&in);
    tw_buf_cleanup(&jf);
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
