/*
 * buf.h - a growable byte buffer with a ceiling.
 *
 * Every buffer that grows from outside input (a file being imported, an
 * HTTP body, a libcurl response) is a tw_buf with a maximum size: appending
 * past it fails with TW_ENOMEM and leaves the buffer as it was.  The data is
 * always NUL-terminated so text parsers can use it directly; the terminator
 * is not counted in len.
 */
#ifndef TW_CORE_BUF_H
#define TW_CORE_BUF_H

#include <stddef.h>

#include "core/err.h"

struct tw_buf {
    char *data;    /* NUL-terminated contents, NULL until the first append */
    size_t len;    /* bytes held, not counting the terminator */
    size_t cap;    /* bytes allocated */
    size_t max;    /* the ceiling on len */
};

/* Prepares an empty buffer that will hold at most MAX bytes. */
void tw_buf_init(struct tw_buf *b, size_t max);

/* Appends N bytes; TW_ENOMEM when allocation fails or MAX would be passed. */
enum tw_err tw_buf_append(struct tw_buf *b, const void *p, size_t n);

/* Appends a NUL-terminated string. */
enum tw_err tw_buf_puts(struct tw_buf *b, const char *s);

/* Appends FMT's text, whole however long it is (no line buffer of a fixed
 * size cuts it); TW_ENOMEM as tw_buf_append (the buffer as it was),
 * TW_EINVAL when FMT can't be formatted. */
enum tw_err tw_buf_printf(struct tw_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Frees the contents and leaves an empty buffer with the same ceiling. */
void tw_buf_cleanup(struct tw_buf *b);

#endif
