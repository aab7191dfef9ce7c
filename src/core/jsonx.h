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
 * ", got V" is added when V is an integer outside the range; anything
 * else (a string, a fraction) is not repeated back.
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

#endif
