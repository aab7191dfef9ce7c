/*
 * textf.h - printf-style text appended to a fixed buffer, for the
 * explanations core writes into a struct's char array (a transaction
 * rule's meter and note, a target's why).  What does not fit is cut:
 * those fields are sized for their longest text, and a cut explanation
 * is still one.  Text that must never be cut goes through tw_buf_printf
 * (core/buf.h).
 */
#ifndef TW_CORE_TEXTF_H
#define TW_CORE_TEXTF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Appends FMT's text to the NUL-terminated BUF of CAP bytes, cutting what
 * does not fit; nothing when BUF is already full. */
static inline void tw_textf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void tw_textf(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

#endif
