/*
 * jcheck.h - reading a document's content on core/jsonread while
 * collecting every problem instead of stopping at the first.
 *
 * The caller has validated the text as JSON first (a pass of tw_jr_skip),
 * so the second pass meets no syntax error: a member of the wrong kind or
 * out of range is handed to PROBLEM with its path ("$.quota.changes") and
 * the byte offset of the value, the value is skipped, and reading goes on.
 * The policy (policy.c) and the reservations (reservation.c) are read so.
 */
#ifndef TW_CORE_JCHECK_H
#define TW_CORE_JCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jsonread.h"

typedef void (*tw_jc_problem_fn)(void *arg, const char *path, size_t off, const char *msg);

struct tw_jc {
    struct tw_jr *r;
    tw_jc_problem_fn problem;
    void *arg;
    size_t n;          /* problems reported */
};

/* Reports a problem at byte OFF of the document. */
void tw_jc_fail(struct tw_jc *c, const char *path, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The byte offset of the value at R->p (after whitespace). */
size_t tw_jc_off(struct tw_jc *c);

/* The kind of the value next: 's' string, 'n' number, 'o' object,
 * 'a' array, 'b' true/false, 'z' null, 0 nothing. */
char tw_jc_kind(struct tw_jc *c);

/* "a string", "a number", ... for messages. */
const char *tw_jc_kind_name(char kind);

/*
 * Typed values.  Each returns 1 when the value was read, 0 when it was
 * the wrong kind or out of range (reported, skipped, *OUT untouched), -1
 * when the reader itself failed (R->rc; stop).
 */
int tw_jc_str(struct tw_jc *c, const char *path, char *dst, size_t cap, bool nonempty);
int tw_jc_int(struct tw_jc *c, const char *path, int64_t lo, int64_t hi, int64_t *out);
int tw_jc_bool(struct tw_jc *c, const char *path, bool *out);
/* Whether the value is an object ('{') or array ('['); when it is not,
 * reports it, skips it and returns 0. */
int tw_jc_want(struct tw_jc *c, const char *path, char open);
/* Skips a value (after a problem); -1 when the reader failed. */
int tw_jc_skip(struct tw_jc *c);

/* PATH then ".KEY" (or "[I]") into DST (cut to CAP); returns DST. */
char *tw_jc_path(char *dst, size_t cap, const char *path, const char *key);
char *tw_jc_path_at(char *dst, size_t cap, const char *path, size_t i);

/*
 * The first pass: validates the whole document at R (one value, then
 * nothing but whitespace) as tw_jr_skip and tw_jr_finish do, the strict
 * checks included.  On failure (false; R->rc and R's error say what) PATH
 * (CAP bytes) gets the JSON path of the place: the member whose key is
 * repeated ("$.match.tags.env"), else the innermost value being read
 * ("$.name" for `"name": }`) or the object or array whose punctuation is
 * wrong ("$.match" for a missing ','), "$" at the root.  The repeated key
 * is told by R's error position, so R needs an error (tw_jr_init's ERR);
 * without one PATH is the object's.  PATH is "$" on success.
 */
bool tw_jc_validate(struct tw_jr *r, char *path, size_t cap);

/* The 1-based line and column (bytes) of offset OFF in BUF. */
void tw_jc_position(const char *buf, size_t len, size_t off, long *line, long *column);

#endif
