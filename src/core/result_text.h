/*
 * result_text.h - a bench result as text for people.
 *
 * The same summary whether the result was just measured or read back from
 * a file: the target, the method, then per direction the rate, the latency
 * and its percentiles, the per-second spread, CPU and errors.
 */
#ifndef TW_CORE_RESULT_TEXT_H
#define TW_CORE_RESULT_TEXT_H

#include "core/buf.h"
#include "core/result.h"

/* Appends R's summary to OUT; TW_ENOMEM when OUT is full. */
enum tw_err tw_result_format_text(const struct tw_result *r, struct tw_buf *out);

#endif
