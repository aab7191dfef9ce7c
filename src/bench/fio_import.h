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
 * progress line.  The text does not show direct=, filename= or rwmixread=:
 * method.direct is false (a text import can't prove O_DIRECT), the target
 * path is "" and kind unknown, and a mixed job's read_pct is the measured
 * share of reads.  started_at takes the date on the job result line, which
 * fio prints in local time without a zone, as UTC.
 */
enum tw_err tw_fio_import_text(const char *buf, size_t len, struct tw_result *r,
                               struct tw_error *err);

#endif
