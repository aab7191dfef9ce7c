/*
 * jsonx.h - small jansson helpers every parser of outside input shares.
 *
 * The typed getters here (for the documents read as a jansson tree: the
 * tier catalog, the simulator's scenario, IMDS answers, fio's JSON) and
 * their one-pass twins in core/jsonread.h (the inventory, the result
 * record, the report) word their refusals one way.  FIELD is the path
 * from the document's root, dots and brackets ("disks[0].lun",
 * "inventory.disks[0].lun"); a caller may put the document's name in
 * front ("IMDS answer: ").
 *
 *   FIELD is missing
 *   FIELD must be a string | an object | an array | a boolean  [" or null"]
 *   FIELD must not be empty
 *   FIELD is too long (N bytes, at most M)
 *   FIELD holds a NUL
 *   FIELD must be an integer from LO to HI  [" or null"]  [", got V"]
 *   FIELD must be a number from LO to HI   (no upper bound: "a finite
 *                                            number >= LO")
 *
 * ", got V" is added when V is an integer outside the range, or (with
 * TW_JX_DECIMAL) a string that is not one: ", got \"12GB\"".  A boolean
 * that may be text (TW_JX_TEXT_BOOL) "must be \"true\" or \"false\"".
 */
#ifndef TW_CORE_JSONX_H
#define TW_CORE_JSONX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"

/*
 * Parses LEN bytes at BUF with jansson FLAGS.  Returns a new reference, or
 * NULL with TW_EPARSE, the line and column in ERR, and the message
 * "WHAT is not valid JSON at line L, column C: ..." (WHAT NULL: the
 * message starts at "not valid JSON").
 */
json_t *tw_json_load(const char *buf, size_t len, size_t flags, const char *what,
                     struct tw_error *err);

/*
 * A whole number >= 0 given as a JSON integer or as a string of decimal
 * digits (IMDS and ARM send numbers as strings), at most 18 digits.  False
 * for anything else ("", "12a", "-1", 1.5, null); *OUT is then 0.
 */
bool tw_json_decimal(const json_t *v, int64_t *out);

/*
 * ---- typed getters ----
 *
 * Each reads V, the value of member KEY of the object PATH names (V NULL:
 * the member is absent; PATH "" at the root, a trailing dot allowed:
 * "tiers[2]" and "tiers[2]." both give "tiers[2].name").  Absent is fine
 * unless TW_JX_REQUIRED ("FIELD is missing"); the output is then left as
 * it was.  Anything else wrong fails with TW_EPARSE and the message above.
 * Most callers pass json_object_get(O, KEY) as V; IMDS passes a
 * case-insensitive lookup of its own.
 */
#define TW_JX_REQUIRED 1u   /* absent is an error */
#define TW_JX_NULLABLE 2u   /* null counts as absent */
#define TW_JX_NONEMPTY 4u   /* strings: "" is refused */
#define TW_JX_DECIMAL 8u    /* integers: a string of decimal digits counts too, ""
                               as absent (IMDS and ARM send numbers as strings) */
#define TW_JX_TEXT_BOOL 16u /* booleans: "true" and "false" in any case count too,
                               "" as absent (IMDS) */

/* Whether V counts as absent under OPT. */
bool tw_jx_absent(const json_t *v, unsigned opt);
/* A string into DST (CAP bytes with the NUL); never truncated. */
bool tw_jx_str(const json_t *v, const char *path, const char *key, unsigned opt, char *dst,
               size_t cap, struct tw_error *err);
/* A JSON integer (or, with TW_JX_DECIMAL, a decimal string) in LO..HI. */
bool tw_jx_int(const json_t *v, const char *path, const char *key, int64_t lo, int64_t hi,
               unsigned opt, int64_t *out, struct tw_error *err);
/* A finite number, integer or real, in LO..HI (HI may be INFINITY). */
bool tw_jx_num(const json_t *v, const char *path, const char *key, double lo, double hi,
               unsigned opt, double *out, struct tw_error *err);
bool tw_jx_bool(const json_t *v, const char *path, const char *key, unsigned opt, bool *out,
                struct tw_error *err);
/* V when it is of TYPE (JSON_OBJECT or JSON_ARRAY); NULL when absent (an
 * error if TW_JX_REQUIRED) or, with the error, of another type.  *OK
 * tells the two NULLs apart. */
const json_t *tw_jx_want(const json_t *v, const char *path, const char *key, json_type type,
                         unsigned opt, bool *ok, struct tw_error *err);

#endif
