/*
 * report.h - what an agent sends to the backend: its VM's inventory and
 * the benchmark results of one run (tierwise.report/1).
 *
 * The agent builds one per run and posts it; the server parses it from
 * the request body (outside input: buffer and length, fuzzed) and stores
 * it once by its id.  Results are heap-allocated because a tw_result is
 * several KiB and a run may carry dozens.
 */
#ifndef TW_CORE_REPORT_H
#define TW_CORE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#include "core/err.h"
#include "core/inventory.h"
#include "core/result.h"
#include "core/time.h"

/* jansson's json_t, declared so this header needs no jansson include. */
struct json_t;

#define TW_REPORT_SCHEMA "tierwise.report/1"
#define TW_REPORT_MAX_RESULTS 256   /* more in one report is refused */
#define TW_REPORT_MAX_DEPTH 10      /* JSON nesting: the schema needs 6 */

struct tw_report {
    char id[40];              /* UUID, canonical lower-case 8-4-4-4-12 */
    char created_at[32];      /* RFC 3339 UTC */
    char agent_version[64];
    char agent_hostname[256];
    char power_state[32];     /* "running", ...; "" when absent or null */
    struct tw_inventory inv;
    size_t n_results;
    struct tw_result *results;  /* n_results entries, owned */
};

/* A new empty report (heap, since the inventory is large); NULL when out
 * of memory.  Free with tw_report_free. */
struct tw_report *tw_report_new(void);
void tw_report_free(struct tw_report *r);

/* Appends a copy of RES; TW_ENOMEM when out of memory, TW_ERANGE past
 * TW_REPORT_MAX_RESULTS. */
enum tw_err tw_report_add_result(struct tw_report *r, const struct tw_result *res);

/*
 * Parses LEN bytes at BUF (need not be NUL-terminated) as a
 * tierwise.report/1 document into R (which is reset first).  Invalid JSON
 * fails with TW_EPARSE and the line/column in ERR; a missing or mistyped
 * field, a wrong schema_version, an id that is not a UUID, or a string too
 * long for its field fails with TW_EPARSE naming the field ("results[3].
 * method.queue_depth: expected an integer").  Nesting deeper than the
 * schema allows and numbers out of range are refused, never clamped.
 */
enum tw_err tw_report_from_json(const char *buf, size_t len, struct tw_report *r,
                                struct tw_error *err);

/* The report as a JSON value (new reference) / compact string (free()). */
struct json_t *tw_report_to_value(const struct tw_report *r);
char *tw_report_to_json(const struct tw_report *r, size_t flags);

/* Whether S is a canonical UUID string (36 chars, hex and dashes). */
bool tw_uuid_valid(const char *s);

/* tw_rfc3339_ms and tw_rfc3339_format, once declared here, are in core/time.h. */

#endif
