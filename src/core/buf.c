/* buf.c - capped growable buffer. */
#include "core/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tw_buf_init(struct tw_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    /* The terminator needs a byte past the ceiling: max + 1 must not wrap. */
    b->max = max < SIZE_MAX ? max : SIZE_MAX - 1;
}

enum tw_err tw_buf_append(struct tw_buf *b, const void *p, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return TW_ENOMEM;
    /* len + n <= max < SIZE_MAX, so need neither wraps nor passes max + 1. */
    size_t need = b->len + n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        if (cap > b->max + 1)
            cap = b->max + 1;
        char *d = realloc(b->data, cap);
        if (!d)
            return TW_ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return TW_OK;
}

enum tw_err tw_buf_puts(struct tw_buf *b, const char *s)
{
    return tw_buf_append(b, s, strlen(s));
}

enum tw_err tw_buf_printf(struct tw_buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    enum tw_err rc;
    if (n < 0) {
        rc = TW_EINVAL;
    } else if ((size_t)n < sizeof(line)) {
        rc = tw_buf_append(b, line, (size_t)n);
    } else {
        /* Longer than the line: formatted again, on the heap. */
        char *big = malloc((size_t)n + 1);
        if (!big) {
            rc = TW_ENOMEM;
        } else {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            rc = tw_buf_append(b, big, (size_t)n);
            free(big);
        }
    }
    va_end(again);
    return rc;
}

void tw_buf_cleanup(struct tw_buf *b)
{
    free(b->data);
    tw_buf_init(b, b->max);
}
