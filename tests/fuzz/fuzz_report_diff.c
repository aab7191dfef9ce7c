/*
 * fuzz_report_diff.c - the one-pass report reader (core/report.c) against
 * the jansson reader it replaced, kept here as the reference: jansson
 * (JSON_REJECT_DUPLICATES) builds a tree and tw_inventory_from_value /
 * tw_result_from_value read it.  Both must accept and refuse the same
 * documents, refuse broken JSON as broken JSON (and a wrong field as a
 * wrong field), and what both accept must be the same report: compared by
 * its JSON form, written with 17 significant digits, so every field and
 * every bit of every double counts.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the reference: the jansson reader as it was ---- */

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

/* ---- reading ---- */

/* Copies string KEY of O (PATH names O) into DST; missing is an error when
 * REQUIRED, null allowed when NULLABLE (DST ""). */
static bool get_str(const json_t *o, const char *path, const char *key, bool required,
                    bool nullable, char *dst, size_t dstlen, struct tw_error *err)
{
    const json_t *v = json_object_get(o, key);
    dst[0] = '\0';
    if (!v) {
        if (required)
            tw_error_set(err, TW_EPARSE, "%s%s is missing", path, key);
        return !required;
    }
    if (nullable && json_is_null(v))
        return true;
    if (!json_is_string(v)) {
        tw_error_set(err, TW_EPARSE, "%s%s must be a string%s", path, key,
                     nullable ? " or null" : "");
        return false;
    }
    size_t n = json_string_length(v);
    if (n >= dstlen || strlen(json_string_value(v)) != n) {
        tw_error_set(err, TW_EPARSE, "%s%s is too long (%zu bytes, at most %zu) or holds NUL",
                     path, key, n, dstlen - 1);
        return false;
    }
    memcpy(dst, json_string_value(v), n + 1);
    return true;
}

/*
 * Puts PREFIX in front of the message another reader left in ERR, so it
 * names the field from the report's root: "method.jobs is 0 ..." becomes
 * "results[2].method.jobs is 0 ...", a sentence becomes "results[2]: ...".
 */
static void prefix_error(struct tw_error *err, const char *prefix)
{
    if (!err)
        return;
    char msg[sizeof(err->msg)];
    const char *m = err->msg;
    size_t word = strcspn(m, " ");
    bool field = word > 0 && strncmp(m, "a ", 2) != 0 && strncmp(m, "the ", 4) != 0 &&
                 strncmp(m, "not ", 4) != 0;
    for (size_t i = 0; field && i < word; i++) {
        char c = m[i];
        if (!(isalnum((unsigned char)c) || c == '_' || c == '.' || c == '[' || c == ']'))
            field = false;
    }
    if (strncmp(m, prefix, strlen(prefix)) == 0 && m[strlen(prefix)] == '.')
        return;   /* already named from here */
    size_t k = (size_t)snprintf(msg, sizeof(msg), "%s%s", prefix, field ? "." : ": ");
    if (k < sizeof(msg))
        snprintf(msg + k, sizeof(msg) - k, "%.*s", (int)(sizeof(msg) - k - 1), m);
    memcpy(err->msg, msg, sizeof(msg));
}


static enum tw_err from_value(const json_t *root, struct tw_report *r, struct tw_error *err)
{
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE, "a report must be a JSON object");
    char schema[32];
    if (!get_str(root, "", "schema_version", true, false, schema, sizeof(schema), err))
        return TW_EPARSE;
    if (strcmp(schema, TW_REPORT_SCHEMA) != 0)
        return tw_error_set(err, TW_EPARSE, "schema_version is \"%s\"; this tierwise reads \"%s\"",
                            schema, TW_REPORT_SCHEMA);
    if (!get_str(root, "", "id", true, false, r->id, sizeof(r->id), err))
        return TW_EPARSE;
    if (!tw_uuid_valid(r->id))
        return tw_error_set(err, TW_EPARSE,
                            "id \"%s\" is not a UUID (8-4-4-4-12 hexadecimal digits)", r->id);
    for (char *p = r->id; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    int64_t ms;
    if (!get_str(root, "", "created_at", true, false, r->created_at, sizeof(r->created_at), err))
        return TW_EPARSE;
    if (!tw_rfc3339_ms(r->created_at, &ms))
        return tw_error_set(err, TW_EPARSE,
                            "created_at \"%s\" is not an RFC 3339 time like 2026-11-29T10:00:00Z",
                            r->created_at);

    const json_t *agent = json_object_get(root, "agent");
    if (!agent || !json_is_object(agent))
        return tw_error_set(err, TW_EPARSE, "agent is %s", agent ? "not an object" : "missing");
    if (!get_str(agent, "agent.", "version", true, false, r->agent_version,
                 sizeof(r->agent_version), err) ||
        !get_str(agent, "agent.", "hostname", true, false, r->agent_hostname,
                 sizeof(r->agent_hostname), err))
        return TW_EPARSE;
    if (!get_str(root, "", "power_state", false, true, r->power_state, sizeof(r->power_state),
                 err))
        return TW_EPARSE;

    const json_t *inv = json_object_get(root, "inventory");
    if (!inv || !json_is_object(inv))
        return tw_error_set(err, TW_EPARSE, "inventory is %s", inv ? "not an object" : "missing");
    if (tw_inventory_from_value(inv, &r->inv, err) != TW_OK) {
        prefix_error(err, "inventory");
        return TW_EPARSE;
    }

    const json_t *res = json_object_get(root, "results");
    if (!res || !json_is_array(res))
        return tw_error_set(err, TW_EPARSE, "results is %s", res ? "not an array" : "missing");
    size_t n = json_array_size(res);
    if (n > TW_REPORT_MAX_RESULTS)
        return tw_error_set(err, TW_EPARSE, "results has %zu entries, at most %d: split the run "
                            "into several reports", n, TW_REPORT_MAX_RESULTS);
    if (n) {
        r->results = calloc(n, sizeof(*r->results));
        if (!r->results)
            return tw_error_set(err, TW_ENOMEM, "out of memory reading %zu results", n);
    }
    for (size_t i = 0; i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "results[%zu]", i);
        const json_t *v = json_array_get(res, i);
        if (!json_is_object(v))
            return tw_error_set(err, TW_EPARSE, "%s must be an object", prefix);
        struct tw_result *x = &r->results[i];
        if (tw_result_from_value(v, x, err) != TW_OK) {
            prefix_error(err, prefix);
            return TW_EPARSE;
        }
        r->n_results++;
        if (!tw_uuid_valid(x->id))
            return tw_error_set(err, TW_EPARSE, "%s.id \"%s\" is not a UUID", prefix, x->id);
        for (char *p = x->id; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (x->started_at[0] && !tw_rfc3339_ms(x->started_at, &ms))
            return tw_error_set(err, TW_EPARSE, "%s.started_at \"%s\" is not an RFC 3339 time",
                                prefix, x->started_at);
    }
    return TW_OK;
}

static enum tw_err ref_from_json(const char *buf, size_t len, struct tw_report *r,
                                 struct tw_error *err)
{
    free(r->results);
    memset(r, 0, sizeof(*r));
    enum tw_err rc = TW_EPARSE;
    long line = 0, col = 0;
    json_t *root = NULL;
    /* jansson 2.14 skips a NUL byte right after a number or a literal
     * ("[1\0]" reads as [1]); no JSON holds a raw NUL, and the one-pass
     * reader refuses it, so the reference does too. */
    if (memchr(buf, '\0', len))
        tw_error_set(err, TW_EPARSE, "the report is not valid JSON: a NUL byte");
    else if (!depth_ok(buf, len, TW_REPORT_MAX_DEPTH, &line, &col))
        tw_error_set_at(err, TW_EPARSE, line, col, "the report nests deeper than %d levels",
                        TW_REPORT_MAX_DEPTH);
    else if ((root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, "the report", err)))
        rc = from_value(root, r, err);
    json_decref(root);
    if (rc != TW_OK) {
        free(r->results);
        memset(r, 0, sizeof(*r));
    }
    return rc;
}

/* ---- the comparison ---- */

/* Whether MSG says the JSON itself is wrong (not valid, too deep,
 * repeated keys) rather than a field: those messages name the document. */
static bool syntax_msg(const char *msg)
{
    return strncmp(msg, "the report ", 11) == 0;
}

static void differ(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_report_diff: %s\n  one-pass: %s\n  jansson:  %s\n", what, a, b);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_report *fast, *ref;
    if (!fast) {
        fast = tw_report_new();
        ref = tw_report_new();
        if (!fast || !ref)
            abort();
    }
    struct tw_error ef = {0}, er = {0};
    enum tw_err rf = tw_report_from_json((const char *)data, size, fast, &ef);
    enum tw_err rr = ref_from_json((const char *)data, size, ref, &er);
    if ((rf == TW_OK) != (rr == TW_OK))
        differ(rf == TW_OK ? "accepted by one-pass only" : "refused by one-pass only",
               rf == TW_OK ? "accepted" : ef.msg, rr == TW_OK ? "accepted" : er.msg);
    if (rf != TW_OK) {
        if (rf != rr)
            differ("different codes", ef.msg, er.msg);
        if (syntax_msg(ef.msg) != syntax_msg(er.msg))
            differ("one says broken JSON, the other a wrong field", ef.msg, er.msg);
        if (fast->results || fast->n_results || fast->inv.n_disks || fast->id[0])
            abort();
        return 0;
    }
    char *a = tw_report_to_json(fast, JSON_COMPACT), *b = tw_report_to_json(ref, JSON_COMPACT);
    if (!a || !b)
        abort();
    if (strcmp(a, b) != 0)
        differ("different reports", a, b);
    if (fast->n_results != ref->n_results || fast->inv.n_disks != ref->inv.n_disks ||
        fast->inv.vm.n_tags != ref->inv.vm.n_tags)
        differ("different counts", a, b);
    free(a);
    free(b);
    return 0;
}
