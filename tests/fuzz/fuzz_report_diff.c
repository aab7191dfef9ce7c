/*
 * fuzz_report_diff.c - the strict one-pass reader (core/jsonread.c) against
 * jansson with JSON_REJECT_DUPLICATES, on the three documents read on it:
 * the report, a bench result and an inventory.  Each has one reader now,
 * so what is compared is the JSON beneath the fields: a document jansson
 * refuses (broken, a repeated key, nested too deep, a bare value such as
 * "\"x\"" at the root) must be refused as broken JSON, and one jansson accepts must never be (a refusal then names
 * a field).  The field-by-field comparison with the former jansson readers
 * went with them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/inventory.h"
#include "core/jsonread.h"
#include "core/jsonx.h"
#include "core/report.h"
#include "core/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the reference: jansson ---- */

/* Past the string whose opening quote is at BUF[I]: a quote ends it
 * unless an odd run of backslashes comes before it.  LEN if unterminated. */
static size_t past_string(const char *buf, size_t len, size_t i)
{
    size_t from = i + 1;
    while (from < len) {
        const char *q = memchr(buf + from, '"', len - from);
        if (!q)
            return len;
        size_t k = (size_t)(q - buf), bs = 0;
        while (k - bs > from && buf[k - bs - 1] == '\\')
            bs++;
        if (bs % 2 == 0)
            return k + 1;
        from = k + 1;
    }
    return len;
}

/*
 * Whether objects and arrays nest at most MAX deep in the raw bytes,
 * found without building anything; if not, the line and column where they
 * go deeper.  Bytes inside strings don't count.  Broken JSON is left to
 * the parser.
 */
static bool depth_ok(const char *buf, size_t len, int max, long *line, long *col)
{
    int depth = 0;
    for (size_t i = 0; i < len;) {
        char c = buf[i];
        if (c == '"') {
            i = past_string(buf, len, i);
            continue;
        }
        if (c == '{' || c == '[') {
            if (++depth > max) {
                *line = 1;
                *col = 1;
                for (size_t k = 0; k < i; k++) {
                    if (buf[k] == '\n') {
                        ++*line;
                        *col = 1;
                    } else {
                        ++*col;
                    }
                }
                return false;
            }
        } else if (c == '}' || c == ']') {
            depth--;
        }
        i++;
    }
    return true;
}

/* Whether jansson, with the reader's rules on NUL bytes and depth, takes
 * BUF as JSON. */
static bool ref_valid(const char *buf, size_t len, int max_depth)
{
    long line = 0, col = 0;
    /* jansson 2.14 skips a NUL byte right after a number or a literal
     * ("[1\0]" reads as [1]); no JSON holds a raw NUL, and the one-pass
     * reader refuses it, so the reference does too. */
    if (memchr(buf, '\0', len) || !depth_ok(buf, len, max_depth, &line, &col))
        return false;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
    json_decref(root);
    return root != NULL;
}

/* ---- the comparison ---- */

/* Whether MSG says the JSON itself is wrong (not valid, too deep, a
 * repeated key) rather than a field: those name the document (PREFIX) or,
 * for a document the caller names, start with the finding. */
static bool syntax_msg(const char *msg, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(msg, prefix, n) != 0)
        return false;
    msg += n;
    if (n && strncmp(msg, "is ", 3) == 0)
        msg += 3;
    return strncmp(msg, "not valid JSON", 14) == 0 || strncmp(msg, "nests deeper", 12) == 0 ||
           strncmp(msg, "has a duplicate key", 19) == 0;
}

static void check(const char *doc, bool valid, enum tw_err rc, const char *msg,
                  const char *prefix)
{
    if (rc == TW_OK && !valid) {
        fprintf(stderr, "fuzz_report_diff: the %s reader accepts what jansson refuses\n", doc);
        abort();
    }
    if (rc != TW_OK && !msg[0])
        abort();
    if (rc == TW_EPARSE && syntax_msg(msg, prefix) == valid) {
        fprintf(stderr, "fuzz_report_diff: %s: jansson %s, the reader says: %s\n", doc,
                valid ? "accepts" : "refuses", msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_report *rep;
    static struct tw_inventory *inv;
    static struct tw_result *res;
    if (!rep) {
        rep = tw_report_new();
        inv = malloc(sizeof(*inv));
        res = malloc(sizeof(*res));
        if (!rep || !inv || !res)
            abort();
    }
    const char *buf = (const char *)data;
    struct tw_error e = {0};
    enum tw_err rc = tw_report_from_json(buf, size, rep, &e);
    check("report", ref_valid(buf, size, TW_REPORT_MAX_DEPTH), rc, e.msg, "the report ");
    if (rc != TW_OK && (rep->results || rep->n_results || rep->inv.n_disks || rep->id[0]))
        abort();

    bool valid = ref_valid(buf, size, TW_JR_MAX_DEPTH);
    memset(&e, 0, sizeof(e));
    rc = tw_inventory_from_json(buf, size, inv, &e);
    check("inventory", valid, rc, e.msg, "");
    if (rc != TW_OK && (inv->n_disks || inv->vm.n_tags || inv->vm.name[0]))
        abort();
    memset(&e, 0, sizeof(e));
    rc = tw_result_from_json(buf, size, res, &e);
    check("result", valid, rc, e.msg, "");
    return 0;
}
