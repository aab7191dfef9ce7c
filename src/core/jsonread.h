/*
 * jsonread.h - a one-pass JSON reader for documents from outside.
 *
 * It validates RFC 8259 as it goes (strings with their escapes and UTF-8,
 * numbers, literals, nesting up to a depth) and hands the caller each
 * member or element in document order, so a parser can copy the fields it
 * knows straight into its structs and skip the rest, without building a
 * tree.  The prices page parser (pricepage.c), the report reader
 * (report.c) and the one reader of the inventory and of the result record
 * (tw_inventory_read, tw_result_read, behind tw_inventory_from_json and
 * tw_result_from_json) are built on it.
 *
 * Errors: the first failure is kept in R->rc and the caller's tw_error;
 * every later call returns false at once, so a reader can bail out on any
 * false.  Syntax errors carry the line and column.
 *
 * With TW_JR_STRICT the reader refuses exactly what jansson refuses with
 * JSON_REJECT_DUPLICATES: an integer outside int64, a real number that
 * overflows, "\u0000" in a string, and a key repeated in any object
 * (skipped ones too).  Without it (the prices page) numbers are read as
 * doubles without range checks and a NUL in a string counts as "too long".
 */
#ifndef TW_CORE_JSONREAD_H
#define TW_CORE_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define TW_JR_STRICT 1u
#define TW_JR_MAX_DEPTH 64   /* the deepest limit a reader may ask for */

struct tw_jr_key {
    uint32_t hash;   /* of the decoded key */
    uint32_t len;    /* decoded length */
    size_t off;      /* offset of its opening quote in the document */
};

struct tw_jr {
    const char *base, *p, *end;
    struct tw_error *err;
    enum tw_err rc;        /* first failure, TW_OK until then */
    bool syntax;           /* that failure is in the JSON itself, not its content */
    const char *what;      /* the document in messages: "the report" */
    const char *depth_hint;/* added to the too-deep message, or NULL */
    unsigned flags;
    int max_depth;         /* containers nested deeper are refused */
    int depth;             /* containers open now */
    /* Keys of the objects open now (TW_JR_STRICT), innermost last. */
    struct tw_jr_key *keys;
    size_t n_keys, cap_keys;
    struct tw_jr_key some_keys[64];
    /* Hash index of an object with many keys, one per depth. */
    uint32_t *index[TW_JR_MAX_DEPTH + 1];
    size_t index_cap[TW_JR_MAX_DEPTH + 1];
};

/* An object being iterated: zero it ({0}) before the first tw_jr_member. */
struct tw_jr_obj {
    bool started;
    bool key_over;    /* the last key did not fit the caller's buffer */
    bool indexed;     /* its keys are in R->index[depth] */
    int depth;
    size_t kbase;     /* its first key in R->keys */
    size_t key_len;   /* decoded length of the last key */
    size_t key_off;   /* where the last key's quote is in the document */
};

/* An array being iterated: zero it before the first tw_jr_element. */
struct tw_jr_arr {
    bool started;
    size_t n;         /* elements seen so far */
};

struct tw_jr_num {
    bool is_int;      /* written without fraction or exponent, fits int64 */
    int64_t i;        /* its value when is_int */
    double d;         /* its value as a double (NAN: too long to read,
                         without TW_JR_STRICT) */
    const char *text; /* the number as written in the document, LEN bytes */
    size_t len;       /* (for exact readers: core/money's tw_money_parse) */
};

/* Starts reading LEN bytes at BUF.  WHAT names the document in messages
 * ("the report is not valid JSON ..."); NULL leaves it out ("not valid
 * JSON ...", for a caller that names the file). */
void tw_jr_init(struct tw_jr *r, const char *buf, size_t len, const char *what,
                unsigned flags, int max_depth, struct tw_error *err);
/* Frees what the reader allocated (R->rc stays). */
void tw_jr_done(struct tw_jr *r);

/* A syntax error at the current position: "WHAT is not valid JSON at line
 * L, column C: MSG".  Returns false. */
bool tw_jr_syntax(struct tw_jr *r, const char *msg);
/* A content error (valid JSON, wrong content) with CODE.  Returns false. */
bool tw_jr_fail(struct tw_jr *r, enum tw_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Skips whitespace; the next byte, or 0 at the end. */
char tw_jr_peek(struct tw_jr *r);
/* Consumes a null literal if one is next. */
bool tw_jr_null(struct tw_jr *r);
/* Reads true or false. */
bool tw_jr_bool(struct tw_jr *r, bool *out);

/*
 * Reads a string.  With DST its decoded value goes there, NUL-terminated;
 * *OVER (if not NULL) tells it did not fit in CAP-1 bytes (DST is then "")
 * or held a NUL.  *LEN (if not NULL) gets the decoded length.  Without DST
 * the string is only validated.
 */
bool tw_jr_string(struct tw_jr *r, char *dst, size_t cap, size_t *len, bool *over);

/* Reads a number (R->p at its first byte). */
bool tw_jr_number(struct tw_jr *r, struct tw_jr_num *out);

/* Validates and skips one value of any kind. */
bool tw_jr_skip(struct tw_jr *r);

/*
 * Iterates an object's members: R->p (after whitespace) at '{' on the
 * first call.  Returns true for each member with its key in KEY (cut to ""
 * and O->key_over set when it does not fit KEYCAP) and R->p at its value,
 * which the caller must read or skip; false at the end or on an error
 * (R->rc tells which).  With TW_JR_STRICT a repeated key is an error.
 */
bool tw_jr_member(struct tw_jr *r, struct tw_jr_obj *o, char *key, size_t keycap);

/* The last key of O, whole, as a new string (free()); NULL when out of
 * memory.  For keys that did not fit the caller's buffer. */
char *tw_jr_key_dup(struct tw_jr *r, const struct tw_jr_obj *o);

/* Iterates an array's elements the same way (R->p at each element). */
bool tw_jr_element(struct tw_jr *r, struct tw_jr_arr *a);

/* Checks that nothing but whitespace follows. */
bool tw_jr_finish(struct tw_jr *r);

/*
 * Field paths for messages, built without printf (a report names a few
 * dozen objects): A then B into DST, cut to fit CAP; the _at form adds
 * "[I]".  "inventory" ".disks" 2 gives "inventory.disks[2]"; an empty A
 * (the document root) drops B's dot: "" ".disks" 2 gives "disks[2]".
 * Return DST.
 */
char *tw_jr_path(char *dst, size_t cap, const char *a, const char *b);
char *tw_jr_path_at(char *dst, size_t cap, const char *a, const char *b, size_t i);

/*
 * ---- typed members, with the messages of core/jsonx.h ----
 *
 * Each reads the value at R->p of member KEY of the object PATH names
 * ("" for the document root, "inventory.disks[2]") and, when it is not
 * what was asked for, fails with a message naming the field as
 * PATH.KEY.  With TW_JR_NULLABLE a null is accepted: a string gives "",
 * an integer leaves *OUT as it was.
 */
#define TW_JR_NULLABLE 1u
#define TW_JR_NONEMPTY 2u   /* strings: "" is refused */

/* PATH.KEY (KEY alone when PATH is "", no second dot when PATH ends in
 * one) into DST, cut to CAP; returns DST. */
char *tw_jr_field(char *dst, size_t cap, const char *path, const char *key);
/* A string into DST (CAP bytes with the NUL); never truncated. */
bool tw_jr_get_str(struct tw_jr *r, const char *path, const char *key, unsigned opt, char *dst,
                   size_t cap);
/* An integer written without fraction or exponent, in LO..HI. */
bool tw_jr_get_int(struct tw_jr *r, const char *path, const char *key, int64_t lo, int64_t hi,
                   unsigned opt, int64_t *out);
/* A finite number in LO..HI (HI may be INFINITY). */
bool tw_jr_get_num(struct tw_jr *r, const char *path, const char *key, double lo, double hi,
                   double *out);
bool tw_jr_get_bool(struct tw_jr *r, const char *path, const char *key, bool *out);
/* Whether the value is an object (OPEN '{') or an array ('['); fails
 * with "must be an object" / "must be an array" when not. */
bool tw_jr_want(struct tw_jr *r, const char *path, const char *key, char open);
/* After an object's end: "PATH.NAME is missing" for the first of the N
 * NAMES whose bit (1 << i) is not in SEEN. */
bool tw_jr_need_all(struct tw_jr *r, const char *path, unsigned seen, const char *const *names,
                    int n);
/* The index of KEY in the N NAMES, -1 when none. */
int tw_jr_key_index(const char *key, const char *const *names, int n);

/*
 * Reads a whole document of LEN bytes at BUF, strictly: READ(R, ARG)
 * reads the value at the root, then nothing may follow.  When READ
 * refuses a field before the end, the rest is still checked as JSON, so
 * broken JSON anywhere is reported as broken JSON.  WHAT as for
 * tw_jr_init.
 */
enum tw_err tw_jr_read_doc(const char *buf, size_t len, const char *what, int max_depth,
                           bool (*read)(struct tw_jr *r, void *arg), void *arg,
                           struct tw_error *err);

/* ---- tierwise records read on this reader (inventory.c, result.c) ---- */

struct tw_inventory;
struct tw_result;

/*
 * Reads an inventory object at R->p into INV: the one reader of the
 * inventory (tw_inventory_from_json is built on it).  Messages name fields
 * under ROOT, the inventory's path in the document: "inventory" in a
 * report ("inventory.disks[2].lun ..."), "" for a bare inventory
 * ("disks[2].lun ...").  Only what it fills is written: entries past
 * n_disks and n_tags keep what they held.
 */
bool tw_inventory_read(struct tw_jr *r, struct tw_inventory *inv, const char *root);

/*
 * Reads a bench result object at R->p into RES (the one reader of the
 * result record; tw_result_from_json is built on it).  Messages name
 * fields under ROOT: "results[2]" in a report
 * ("results[2].method.queue_depth ..."), "" for a result on its own.
 */
bool tw_result_read(struct tw_jr *r, struct tw_result *res, const char *root);

#endif
