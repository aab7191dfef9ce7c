/*
 * report.c - the agent's report (tierwise.report/1) and its JSON form.
 *
 * The body of POST /api/v1/reports comes from the network, so reading is
 * strict: the one-pass reader (core/jsonread.c) validates the JSON as
 * jansson with JSON_REJECT_DUPLICATES would (a key repeated in any object
 * is refused), nesting is limited to TW_REPORT_MAX_DEPTH, and every field
 * is checked for presence, type and length as it is copied into the
 * struct, with no tree in between.  An error names the field as a path
 * from the root ("results[2].method.queue_depth ...").  The inventory and
 * each result are read by tw_inventory_read and tw_result_read, the one
 * reader of each (tw_inventory_from_json and tw_result_from_json are built
 * on them too).  tests/fuzz/fuzz_report_diff.c holds the reader's JSON to
 * jansson's: what jansson refuses is refused as broken JSON.
 */
#include "core/report.h"
#include "core/jsonread.h"

#include <ctype.h>
#include <jansson.h>
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

/* ---- reading ---- */

/* Reads a string member of the report's root or agent (PATH names it from
 * the root) into DST, with jsonread's getter. */
static bool rd_str(struct tw_jr *j, const char *path, bool nullable, char *dst, size_t cap)
{
    return tw_jr_get_str(j, "", path, nullable ? TW_JR_NULLABLE : 0, dst, cap);
}

static bool agent_read(struct tw_jr *j, struct tw_report *r)
{
    bool have_version = false, have_host = false;
    struct tw_jr_obj o = {0};
    char key[16];
    while (tw_jr_member(j, &o, key, sizeof(key))) {
        bool ok;
        if (strcmp(key, "version") == 0) {
            have_version = true;
            ok = rd_str(j, "agent.version", false, r->agent_version, sizeof(r->agent_version));
        } else if (strcmp(key, "hostname") == 0) {
            have_host = true;
            ok = rd_str(j, "agent.hostname", false, r->agent_hostname,
                        sizeof(r->agent_hostname));
        } else {
            ok = tw_jr_skip(j);
        }
        if (!ok)
            return false;
    }
    if (j->rc != TW_OK)
        return false;
    if (!have_version)
        return tw_jr_fail(j, TW_EPARSE, "agent.version is missing");
    if (!have_host)
        return tw_jr_fail(j, TW_EPARSE, "agent.hostname is missing");
    return true;
}

/* Reads one entry of "results" (the N-th) into the array, growing it by
 * the rule of capacity(). */
static bool result_read(struct tw_jr *j, struct tw_report *r, size_t n)
{
    char where[32];
    tw_jr_path_at(where, sizeof(where), "results", "", n);
    if (tw_jr_peek(j) != '{')
        return tw_jr_fail(j, TW_EPARSE, "%s must be an object", where);
    if (n == capacity(n)) {
        /* Not zeroed: tw_result_read initialises each entry once. */
        struct tw_result *p = realloc(r->results, capacity(n + 1) * sizeof(*p));
        if (!p)
            return tw_jr_fail(j, TW_ENOMEM, "out of memory reading %zu results", n + 1);
        r->results = p;
    }
    struct tw_result *x = &r->results[n];
    if (!tw_result_read(j, x, where))
        return false;
    r->n_results++;
    if (!tw_uuid_valid(x->id))
        return tw_jr_fail(j, TW_EPARSE, "%s.id \"%s\" is not a UUID", where, x->id);
    for (char *p = x->id; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    int64_t ms;
    if (x->started_at[0] && !tw_rfc3339_ms(x->started_at, &ms))
        return tw_jr_fail(j, TW_EPARSE, "%s.started_at \"%s\" is not an RFC 3339 time", where,
                          x->started_at);
    return true;
}

/* Counts the entries of the "results" array of the document, which is
 * valid JSON; 0 when there is none. */
static size_t count_results(const char *buf, size_t len)
{
    struct tw_jr j;
    tw_jr_init(&j, buf, len, "the report", 0, TW_REPORT_MAX_DEPTH, NULL);
    struct tw_jr_obj o = {0};
    char key[16];
    size_t n = 0;
    while (tw_jr_member(&j, &o, key, sizeof(key))) {
        if (strcmp(key, "results") == 0 && tw_jr_peek(&j) == '[') {
            struct tw_jr_arr a = {0};
            while (tw_jr_element(&j, &a) && tw_jr_skip(&j))
                ;
            n = a.n;
            break;
        }
        if (!tw_jr_skip(&j))
            break;
    }
    tw_jr_done(&j);
    return n;
}

enum { F_SCHEMA, F_ID, F_CREATED, F_AGENT, F_INVENTORY, F_RESULTS, F_POWER, F_COUNT };

/*
 * The root object, member by member.  *IN_RESULTS tells whether a refusal
 * came from inside "results" (where a count over the limit is the better
 * message).
 */
static bool root_read(struct tw_jr *j, struct tw_report *r, bool *in_results)
{
    static const char *const names[F_COUNT] = {"schema_version", "id",      "created_at",
                                               "agent",          "inventory", "results",
                                               "power_state"};
    char c = tw_jr_peek(j);
    if (c != '{' && c != '[') /* a bare value is not a document here */
        return tw_jr_syntax(j, c ? "a report must be a JSON object" : "the body is empty");
    if (c != '{')
        return tw_jr_fail(j, TW_EPARSE, "a report must be a JSON object");
    unsigned seen = 0;
    struct tw_jr_obj o = {0};
    char key[16], schema[32];
    int64_t ms;
    while (tw_jr_member(j, &o, key, sizeof(key))) {
        int f = -1;
        for (int i = 0; i < F_COUNT && f < 0; i++)
            if (key[0] == names[i][0] && strcmp(key, names[i]) == 0)
                f = i;
        bool ok;
        switch (f) {
        case F_SCHEMA:
            ok = rd_str(j, "schema_version", false, schema, sizeof(schema));
            if (ok && strcmp(schema, TW_REPORT_SCHEMA) != 0)
                ok = tw_jr_fail(j, TW_EPARSE,
                                "schema_version is \"%s\"; this tierwise reads \"%s\"", schema,
                                TW_REPORT_SCHEMA);
            break;
        case F_ID:
            ok = rd_str(j, "id", false, r->id, sizeof(r->id));
            if (ok && !tw_uuid_valid(r->id))
                ok = tw_jr_fail(j, TW_EPARSE,
                                "id \"%s\" is not a UUID (8-4-4-4-12 hexadecimal digits)", r->id);
            for (char *p = r->id; ok && *p; p++)
                *p = (char)tolower((unsigned char)*p);
            break;
        case F_CREATED:
            ok = rd_str(j, "created_at", false, r->created_at, sizeof(r->created_at));
            if (ok && !tw_rfc3339_ms(r->created_at, &ms))
                ok = tw_jr_fail(j, TW_EPARSE,
                                "created_at \"%s\" is not an RFC 3339 time like "
                                "2026-11-29T10:00:00Z",
                                r->created_at);
            break;
        case F_AGENT:
            ok = tw_jr_peek(j) == '{' ? agent_read(j, r)
                                      : tw_jr_fail(j, TW_EPARSE, "agent is not an object");
            break;
        case F_POWER:
            ok = rd_str(j, "power_state", true, r->power_state, sizeof(r->power_state));
            break;
        case F_INVENTORY:
            ok = tw_jr_peek(j) == '{' ? tw_inventory_read(j, &r->inv, "inventory")
                                      : tw_jr_fail(j, TW_EPARSE, "inventory is not an object");
            break;
        case F_RESULTS:
            if (tw_jr_peek(j) != '[') {
                ok = tw_jr_fail(j, TW_EPARSE, "results is not an array");
                break;
            }
            *in_results = true;
            struct tw_jr_arr a = {0};
            ok = true;
            while (ok && tw_jr_element(j, &a)) {
                if (r->n_results >= TW_REPORT_MAX_RESULTS)
                    ok = tw_jr_fail(j, TW_EPARSE, "results has more than %d entries",
                                    TW_REPORT_MAX_RESULTS);
                else
                    ok = result_read(j, r, r->n_results);
            }
            ok = ok && j->rc == TW_OK;
            if (ok)
                *in_results = false;
            break;
        default: ok = tw_jr_skip(j); break;
        }
        if (!ok)
            return false;
        if (f >= 0)
            seen |= 1u << f;
    }
    if (j->rc != TW_OK)
        return false;
    for (int i = 0; i < F_POWER; i++)
        if (!(seen & (1u << i)))
            return tw_jr_fail(j, TW_EPARSE, "%s is missing", names[i]);
    return tw_jr_finish(j);
}

/*
 * One pass over the body fills R directly.  A refusal for the content
 * (a wrong field) may come before the end of the body has been read; the
 * body is then checked as JSON once more, so that broken JSON, nesting too
 * deep and repeated keys are reported as such wherever they are, as they
 * were when a JSON library read the whole body first.
 */
enum tw_err tw_report_from_json(const char *buf, size_t len, struct tw_report *r,
                                struct tw_error *err)
{
    /* Everything but the inventory, whose reader clears the parts it
     * fills: the whole is 100 KiB, and clearing it per report shows in
     * the ingest rate.  A refusal clears it all. */
    free(r->results);
    memset(r, 0, offsetof(struct tw_report, inv));
    r->inv.n_disks = 0;
    r->inv.vm.n_tags = 0;
    r->n_results = 0;
    r->results = NULL;

    struct tw_jr j;
    tw_jr_init(&j, buf, len, "the report", TW_JR_STRICT, TW_REPORT_MAX_DEPTH, err);
    j.depth_hint = "tierwise.report/1 needs at most 6";
    bool in_results = false;
    root_read(&j, r, &in_results);
    tw_jr_done(&j);
    enum tw_err rc = j.rc;
    if (rc == TW_EPARSE && !j.syntax) {
        struct tw_error verr = {0};
        struct tw_jr v;
        tw_jr_init(&v, buf, len, "the report", TW_JR_STRICT, TW_REPORT_MAX_DEPTH, &verr);
        v.depth_hint = j.depth_hint;
        if (tw_jr_skip(&v))
            tw_jr_finish(&v);
        tw_jr_done(&v);
        size_t n;
        if (v.rc != TW_OK) {
            rc = v.rc;
            if (err)
                *err = verr;
        } else if (in_results && (n = count_results(buf, len)) > TW_REPORT_MAX_RESULTS) {
            rc = tw_error_set(err, TW_EPARSE,
                              "results has %zu entries, at most %d: split the run into "
                              "several reports",
                              n, TW_REPORT_MAX_RESULTS);
        }
    }
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
