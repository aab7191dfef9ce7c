/* cmd_import.c - tierwise-agent import-fio FILE [--job-file F] [--fio-args "..."]
 * [--section NAME] [--json]. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
            "                            [--json] [-q|-v]\n\n"
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
            "  -q, --quiet        no note on stderr (such as direct I/O not known);\n"
            "                     errors are still said\n"
            "  -v, --verbose      also say on stderr what was read: the format and fio's\n"
            "                     version, the hints given, the method, whether I/O was\n"
            "                     direct and how that was decided, the target and disks\n"
            "  --version          print the version and exit\n"
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

/* The job file at PATH into OUT.  O_NONBLOCK: a FIFO (or a device) given
 * by mistake must not hang the open waiting for a writer; what is not a
 * regular file is refused. */
static enum tw_err read_job_file(const char *path, struct tw_buf *out, struct tw_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO, "can't open %s: %s", path,
                            strerror(errno));
    struct stat st;
    enum tw_err rc = TW_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = tw_error_set(err, TW_EINVAL,
                          "%s is not a regular file (a FIFO, device or folder): give the job "
                          "file fio ran",
                          path);
    char chunk[65536];
    while (rc == TW_OK) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = tw_error_set(err, TW_EIO, "reading %s failed: %s", path, strerror(errno));
        else if (n == 0)
            break;
        else if (tw_buf_append(out, chunk, (size_t)n) != TW_OK)
            rc = tw_error_set(err, TW_EINVAL, "%s is larger than %zu bytes: is it the job file?",
                              path, out->max);
    }
    close(fd);
    if (rc == TW_OK && !out->data && tw_buf_append(out, "", 0) != TW_OK)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
    return rc;
}

static const char *direct_word(enum tw_direct d)
{
    return d == TW_DIRECT_YES ? "yes" : d == TW_DIRECT_NO ? "no (buffered)" : "not known";
}

/* -v: what the import read and decided; otherwise (unless -q) a note when
 * direct I/O is not known, since the verdict then can't be had. */
static void say_what_was_read(const char *path, size_t len, const char *job_file,
                              const char *fio_args, const struct tw_result *r)
{
    const struct tw_method *m = &r->method;
    tw_app_detail(TW_AGENT_PROG, "read %s (%zu bytes): %s, %s", path, len,
                  r->source == TW_SRC_FIO_JSON ? "fio JSON" : "fio text",
                  r->tool_version[0] ? r->tool_version : "fio's version not given");
    if (job_file || fio_args)
        tw_app_detail(TW_AGENT_PROG, "hints: %s%s%s%s%s", job_file ? "job file " : "",
                      job_file ? job_file : "", job_file && fio_args ? ", " : "",
                      fio_args ? "fio arguments " : "", fio_args ? fio_args : "");
    tw_app_detail(TW_AGENT_PROG,
                  "method: %s, %s, %lld-byte blocks, QD %d x %d job(s) (%d in flight per "
                  "job), %d %% reads, %.1f s measured",
                  m->engine[0] ? m->engine : "engine unknown", tw_pattern_name(m->pattern),
                  (long long)m->block_size_bytes, m->queue_depth, m->jobs,
                  m->effective_queue_depth, m->read_pct, (double)m->runtime_ms / 1000.0);
    tw_app_detail(TW_AGENT_PROG, "direct I/O: %s (how decided: %s)", direct_word(m->direct),
                  tw_direct_basis_name(m->direct_basis));
    char members[TW_RESULT_MAX_MEMBERS * 33 + 1] = "";
    size_t used = 0;
    bool just_itself = r->target.n_members == 1 &&
                       strcmp(r->target.members[0], r->target.device) == 0;
    for (size_t i = 0; !just_itself && i < r->target.n_members && used + 34 < sizeof(members);
         i++)
        used += (size_t)snprintf(members + used, sizeof(members) - used, "%s%s",
                                 i ? " " : "", r->target.members[i]);
    tw_app_detail(TW_AGENT_PROG, "target: %s, device %s%s%s",
                  r->target.path[0] ? r->target.path : "path unknown",
                  r->target.device[0] ? r->target.device : "unknown",
                  used ? " over " : "", members);
    if (m->direct == TW_DIRECT_UNKNOWN)
        tw_app_note(TW_AGENT_PROG,
                    "%s does not show whether its I/O was direct (fio's text never says "
                    "direct=, and its disk statistics don't prove it): give the run's job "
                    "file (--job-file) or command line (--fio-args), or its verdict stays "
                    "inconclusive",
                    path);
}

int tw_agent_cmd_import_fio(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"job-file", required_argument, NULL, 'f'},
        {"fio-args", required_argument, NULL, 'a'},
        {"section", required_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    const char *job_file = NULL, *fio_args = NULL, *section = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;
        case 'v': tw_app_set_verbosity(TW_APP_VERBOSE); break;
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
    if (job_file && (rc = read_job_file(job_file, &jf, &err)) != TW_OK) {
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
    size_t in_len = in.len;
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
    say_what_was_read(path, in_len, job_file, fio_args, r);
    int status = tw_app_print_result(TW_AGENT_PROG, r, json);
    free(r);
    return status;
}
