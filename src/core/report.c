/*
 * report.c - the agent's report (tierwise.report/1) and its JSON form.
 *
 * The body of POST /api/v1/reports comes from the network, so reading is
 * strict: nesting is checked on the raw bytes before jansson builds a tree,
 * every field is checked for presence, type and length, and an error names
 * the field as a path from the root ("results[2].method.queue_depth ...").
 * The inventory and each result are read by their own modules' readers;
 * their messages get the path prefix here.
 */
#include "core/report.h"
#include "core/jsonx.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tw_report *tw_report_new(void)
{
    return calloc(1, sizeof(struct tw_report));
}

void tw_report_free(struct tw_report *r)
{
    if (!r)
        return;
    free(r->results);
    free(r);
}

static void report_reset(struct tw_report *r)
{
    free(r->results);
    memset(r, 0, sizeof(*r));
}

/* The array holds 4 results, then the next power of two: most reports
 * carry one to five.  The reader allocates by the same rule, so a parsed
 * report can be added to. */
static size_t capacity(size_t n)
{
    if (n == 0)
        return 0;
    size_t cap = 4;
    while (cap < n)
        cap *= 2;
    return cap;
}

enum tw_err tw_report_add_result(struct tw_report *r, const struct tw_result *res)
{
    if (r->n_results >= TW_REPORT_MAX_RESULTS)
        return TW_ERANGE;
    size_t n = r->n_results;
    if (n == capacity(n)) {
        struct tw_result *p = realloc(r->results, capacity(n + 1) * sizeof(*p));
        if (!p)
            return TW_ENOMEM;
        r->results = p;
    }
    r->results[n] = *res;
    r->n_results++;
    return TW_OK;
}

/* ---- small validators ---- */

bool tw_uuid_valid(const char *s)
{
    if (!s)
        return false;
    for (int i = 0; i < 36; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (!isxdigit((unsigned char)c)) {
            return false;
        }
    }
    return s[36] == '\0';
}

static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Days from 1970-01-01 to Y-M-D in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool tw_rfc3339_ms(const char *s, int64_t *ms)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!s || strlen(s) < 20)
        return false;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    int h = digits(s + 11, 2), mi = digits(s + 14, 2), se = digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h < 0 || h > 23 ||
        mi < 0 || mi > 59 || se < 0 || se > 60 || s[4] != '-' || s[7] != '-' ||
        (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo == 2 && d == 29 && !leap)
        return false;
    const char *p = s + 19;
    int64_t frac_ms = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++) {
            if (n < 3)
                frac_ms = frac_ms * 10 + (*p - '0');
        }
        if (n == 0 || n > 9)
            return false;
        for (; n < 3; n++)
            frac_ms *= 10;
    }
    int64_t off_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        if (strlen(p) != 6 || p[3] != ':')
            return false;
        int oh = digits(p + 1, 2), om = digits(p + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return false;
        off_min = (int64_t)(oh * 60 + om) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return false;
    }
    if (*p)
        return false;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + (se > 59 ? 59 : se);
    *ms = (secs - off_min * 60) * 1000 + frac_ms;
    return true;
}

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
        r->results = calloc(capacity(n), sizeof(*r->results));
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

enum tw_err tw_report_from_json(const char *buf, size_t len, struct tw_report *r,
                                struct tw_error *err)
{
    /* Everything but the inventory, which its reader empties first (it is
     * 100 KiB: clearing it twice per report shows in the ingest rate); a
     * refusal clears it all. */
    free(r->results);
    memset(r, 0, offsetof(struct tw_report, inv));
    r->inv.n_disks = 0;
    r->inv.vm.n_tags = 0;
    r->n_results = 0;
    r->results = NULL;
    enum tw_err rc = TW_EPARSE;
    long line = 0, col = 0;
    json_t *root = NULL;
    if (!depth_ok(buf, len, TW_REPORT_MAX_DEPTH, &line, &col))
        tw_error_set_at(err, TW_EPARSE, line, col,
                        "the report nests deeper than %d levels at line %ld, column %ld; "
                        "tierwise.report/1 needs at most 6",
                        TW_REPORT_MAX_DEPTH, line, col);
    else if ((root = tw_json_load(buf, len, JSON_REJECT_DUPLICATES, "the report", err)))
        rc = from_value(root, r, err);
    json_decref(root);
    /* Nothing half-read survives a refusal. */
    if (rc != TW_OK)
        report_reset(r);
    return rc;
}

/* ---- writing ---- */

json_t *tw_report_to_value(const struct tw_report *r)
{
    json_t *root = json_object();
    json_t *results = json_array();
    json_t *inv = tw_inventory_to_value(&r->inv);
    json_t *agent = json_pack("{s:s,s:s}", "version", r->agent_version, "hostname",
                              r->agent_hostname);
    if (!root || !results || !inv || !agent) {
        json_decref(root);
        json_decref(results);
        json_decref(inv);
        json_decref(agent);
        return NULL;
    }
    json_object_set_new(root, "schema_version", json_string(TW_REPORT_SCHEMA));
    json_object_set_new(root, "id", json_string(r->id));
    json_object_set_new(root, "created_at", json_string(r->created_at));
    json_object_set_new(root, "agent", agent);
    json_object_set_new(root, "power_state",
                        r->power_state[0] ? json_string(r->power_state) : json_null());
    json_object_set_new(root, "inventory", inv);
    for (size_t i = 0; i < r->n_results; i++) {
        if (json_array_append_new(results, tw_result_to_value(&r->results[i])) != 0)
            break;
    }
    json_object_set_new(root, "results", results);
    /* A setter that failed for lack of memory leaves something out. */
    if (json_object_size(root) != 7 || json_array_size(results) != r->n_results ||
        !json_is_string(json_object_get(root, "id"))) {
        json_decref(root);
        return NULL;
    }
    return root;
}

char *tw_report_to_json(const struct tw_report *r, size_t flags)
{
    json_t *v = tw_report_to_value(r);
    if (!v)
        return NULL;
    char *s = json_dumps(v, flags | JSON_REAL_PRECISION(17));
    json_decref(v);
    return s;
}
