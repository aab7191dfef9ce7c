/*
 * fio_import.h - fio's output, JSON or normal text, into a result record.
 *
 * Users often have fio runs already (their own, or the one a support case
 * asked for).  Importing them gives the same record as tierwise's own
 * engine, so they can be judged against the disk's tier the same way.
 *
 * The parsers take a buffer and a length (they are fuzzed); they never read
 * files.  Several jobs (or group reports) are summed: IOPS and bandwidth
 * add up, latencies are combined (count-weighted mean, pooled variance,
 * min of mins, max of maxes; percentiles of the job with most I/Os when
 * they can't be merged exactly).
 */
#ifndef TW_BENCH_FIO_IMPORT_H
#define TW_BENCH_FIO_IMPORT_H

#include <stddef.h>

#include "core/err.h"
#include "core/result.h"

/*
 * Detects the format (JSON when the first non-blank byte, after any
 * diagnostic lines fio may print before it, is '{'; text otherwise) and
 * parses it into R.  R->id is left empty for the caller to fill; source,
 * tool_version, method, target, figures, cpu and errors come from the
 * input.  Input that is neither gets TW_EPARSE with a message naming what
 * was expected.
 */
enum tw_err tw_fio_import(const char *buf, size_t len, struct tw_result *r,
                          struct tw_error *err);

/*
 * What the user can add to an output that leaves things out (import-fio's
 * --job-file, --fio-args and --section).  Every member may be NULL.
 */
struct tw_fio_hints {
    const char *job_file;   /* the job file's contents (--job-file), JOB_FILE_LEN bytes */
    size_t job_file_len;
    const char *fio_args;   /* fio's command line (--fio-args), FIO_ARGS_LEN bytes */
    size_t fio_args_len;
    const char *section;    /* import only this job section (--section), NUL-ended */
};

/*
 * tw_fio_import with hints H (NULL for none).  The output wins where it
 * says something (fio's JSON job options); the hints fill what it leaves
 * out: direct (buffered), filename or directory, rwmixread (rwmixwrite), and
 * for a fio 2.x JSON without job options the whole method.  fio arguments
 * win over the job file, as on fio's command line.  A hint that contradicts
 * the output (another rw= or ioengine= for the same job) is refused: it is
 * not this run's job file.
 *
 * method.direct is YES or NO with method.direct_basis saying how it was
 * decided, or UNKNOWN (a text output whose libaio run's disk statistics
 * don't show I/Os in flight beyond what buffered I/O keeps there, with no
 * hint saying direct=).
 *
 * An output of several job sections is one result only when they share a
 * method and ran side by side: sections with different methods (random
 * 8 KiB reads beside sequential 64 KiB writes) or in different groups
 * (stonewall, new_group) are refused naming them, and H->section picks
 * one.  With --status-interval only fio's final report is read.  Text cut
 * short (no "Run status group" after the last job result, a disk line cut)
 * is refused, and so is a stripe of more than TW_RESULT_MAX_MEMBERS disks.
 */
enum tw_err tw_fio_import_with(const char *buf, size_t len, const struct tw_fio_hints *h,
                               struct tw_result *r, struct tw_error *err);

/* jansson's json_t, declared so this header needs no jansson include. */
struct json_t;

/*
 * A fio job file (INI) of LEN bytes into *OUT: a new array of sections in
 * their order, each {"name": NAME, "options": {KEY: "VALUE"}}; "global"
 * sections hold the options of the jobs after them.  TW_EPARSE with the
 * line for what is no job file (an option before any section, an unclosed
 * '[', no section at all).
 */
enum tw_err tw_fio_jobfile_parse(const char *buf, size_t len, struct json_t **out,
                                 struct tw_error *err);

/*
 * fio's command line ("--direct=1 --name=r --rw=randread ...") into the
 * same shape: options before the first --name go to a "global" section.
 * TW_EPARSE for a quote left open.
 */
enum tw_err tw_fio_args_parse(const char *buf, size_t len, struct json_t **out,
                              struct tw_error *err);

/*
 * The options that apply to job NAME in SECS (from the two parsers): the
 * global sections before its section, then the section.  A new object, or
 * NULL when several job sections exist and none is NAME (SECTIONS, CAP
 * bytes, then lists them as "[a], [b]") or when out of memory.
 */
struct json_t *tw_fio_hint_options(const struct json_t *secs, const char *name, char *sections,
                                   size_t cap);

/*
 * fio --output-format=json (fio 3.x; fio 2.x's microsecond keys are read
 * too).  Lines before the first one starting with '{' (fio's "note: ..."
 * when stderr went to the same file) and text after the document are
 * skipped.  started_at is fio's "timestamp" (the end of the run) minus the
 * runtime.  A document cut short gives TW_EPARSE with its line.
 */
enum tw_err tw_fio_import_json(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err);

/*
 * fio's normal text output, also with its leading spaces lost (pasted into
 * a ticket or chat), with CRLF line ends or with fio's '\r'-redrawn
 * progress line.  The text does not show direct=, filename= or rwmixread=
 * (tw_fio_import_with takes them from a job file or command line): without
 * them the target path is "" and kind unknown, a mixed job's read_pct is
 * the measured share of reads, and direct is inferred only from a libaio
 * random-read run's disk statistics (see fio_import.c), else unknown.
 * started_at takes the date on the job result line, which fio prints in
 * local time without a zone, as UTC.
 */
enum tw_err tw_fio_import_text(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err);

#endif
