/* err.c - error codes and the error detail record. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *tw_strerror(enum tw_err code)
{
    switch (code) {
    case TW_OK: return "success";
    case TW_EINVAL: return "invalid argument";
    case TW_EPARSE: return "parse error";
    case TW_ENOMEM: return "out of memory";
    case TW_EIO: return "input/output error";
    case TW_ENOENT: return "not found";
    case TW_EUNSUPPORTED: return "not supported";
    case TW_EPERM: return "refused";
    case TW_ERANGE: return "out of range";
    }
    return "unknown error";
}

static enum tw_err vset(struct tw_error *err, enum tw_err code, long line,
                        long column, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->line = line;
    err->column = column;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return code;
}

enum tw_err tw_error_set(struct tw_error *err, enum tw_err code,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

enum tw_err tw_error_set_at(struct tw_error *err, enum tw_err code, long line,
                            long column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, line, column, fmt, ap);
    va_end(ap);
    return code;
}

void tw_error_clear(struct tw_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}
