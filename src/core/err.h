/*
 * err.h - the one error vocabulary of tierwise.
 *
 * Library functions return an enum tw_err (TW_OK is 0).  Callers that want
 * words pass a struct tw_error, which the failing function fills with a
 * message saying what went wrong, where, and what to do about it; parsers
 * also fill the position.  Only the executables map codes to exit statuses
 * (src/cli, src/agent) and only the server maps them to HTTP statuses.
 */
#ifndef TW_CORE_ERR_H
#define TW_CORE_ERR_H

#include <stddef.h>

enum tw_err {
    TW_OK = 0,
    TW_EINVAL,      /* bad argument or bad input from the user */
    TW_EPARSE,      /* input that does not parse (position in tw_error) */
    TW_ENOMEM,      /* allocation failed or a capped buffer is full */
    TW_EIO,         /* a system call on a file or device failed */
    TW_ENOENT,      /* a named thing does not exist */
    TW_EUNSUPPORTED,/* the machine or filesystem can't do what was asked */
    TW_EPERM,       /* refused for safety (destructive write, mounted device) */
    TW_ERANGE       /* a number out of its allowed range */
};

struct tw_error {
    enum tw_err code; /* what kind of failure; TW_OK when nothing happened */
    long line;        /* 1-based input line for parse errors, 0 if none */
    long column;      /* 1-based column or byte offset, 0 if none */
    char msg[512];    /* one sentence: what, where, what to do */
};

/* Names a code ("invalid argument", ...); never NULL. */
const char *tw_strerror(enum tw_err code);

/*
 * Records CODE and a printf-style message in ERR (which may be NULL) and
 * returns CODE, so a failing path can end with `return tw_error_set(...)`.
 */
enum tw_err tw_error_set(struct tw_error *err, enum tw_err code,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As tw_error_set, also recording the input position. */
enum tw_err tw_error_set_at(struct tw_error *err, enum tw_err code, long line,
                            long column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Clears ERR (NULL allowed). */
void tw_error_clear(struct tw_error *err);

#endif
