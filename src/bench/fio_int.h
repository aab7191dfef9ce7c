/*
 * fio_int.h - what fio_import.c and fio_text.c share inside bench.
 *
 * The text importer translates fio's normal output into fio's JSON shape
 * and imports that through the JSON importer, saying that it did: a text
 * never shows direct= (so its absence is not fio's buffered default) and
 * its read share is measured, not an option.
 */
#ifndef TW_BENCH_FIO_INT_H
#define TW_BENCH_FIO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/fio_import.h"

/* The translation's key for the measured share of reads (a percentage). */
#define TW_FIO_TEXT_MIX_KEY "tierwise measured rwmixread"

/* Imports one fio JSON document (or the text's translation, TEXT true). */
enum tw_err tw_fio_import_doc(const char *buf, size_t len, const struct tw_fio_hints *h,
                              bool text, struct tw_result *r, struct tw_error *err);

/* tw_fio_import_text with hints H (NULL for none). */
enum tw_err tw_fio_import_text_with(const char *buf, size_t len, const struct tw_fio_hints *h,
                                    struct tw_result *r, struct tw_error *err);

#endif
