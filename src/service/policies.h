/*
 * policies.h - the policies a backend serves: every *.json file of a
 * folder (`tierwise serve --policies DIR`), parsed once at start, kept in
 * memory read-only (safe to share between request threads) and recorded
 * in the store's policies table by name.
 */
#ifndef TW_SERVICE_POLICIES_H
#define TW_SERVICE_POLICIES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/policy.h"
#include "core/tz.h"
#include "store/store.h"

struct tw_svc_policy {
    struct tw_policy policy;
    char path[4096];   /* the file it was read from */
    char *text;        /* the file's bytes (malloc'd, NUL-terminated) */
    size_t len;
};

struct tw_svc_policies {
    size_t n;
    struct tw_svc_policy *v;   /* sorted by name */
    char dir[4096];
};

/*
 * Reads every regular file ending in ".json" in DIR (sorted by name) into
 * *OUT.  A file that does not parse fails the whole load with TW_EPARSE
 * naming the file and the first problem (DIAGS, may be NULL, gets all of
 * that file's); two files with the same policy name fail with TW_EINVAL
 * naming both.  TW_ENOENT / TW_EIO for a folder that can't be read.  An
 * empty folder is fine (no policies).  When ST is not NULL each policy is
 * also stored (tw_store_policy_put).
 */
enum tw_err tw_svc_policies_load(const char *dir, struct tw_store *st,
                                 struct tw_svc_policies *out, struct tw_policy_diags *diags,
                                 struct tw_error *err);

/* Loads a time zone by its IANA name (the executable's tw_tz_load of
 * app/tzload.h; service reads no zone file itself). */
typedef enum tw_err (*tw_svc_tz_load_fn)(const char *name, struct tw_tz **out,
                                         struct tw_error *err);

/*
 * Whether the "timezone" of P (parsed from TEXT, LEN bytes) loads with
 * LOAD: TW_OK when it does.  When it does not, *D gets the problem at
 * "$.timezone" with the line and column of the value in TEXT (of the
 * document's object when the member is absent and the zone is the
 * default "UTC") and the loader's reason, ERR the same as one sentence,
 * and the result is TW_EPARSE (no such zone here, or a file that is no
 * zone: the policy or the machine's tzdata to fix), or the loader's
 * TW_EIO / TW_ENOMEM (it could not be read).  What `policy check` and
 * `serve --policies` say of a zone that does not exist.
 */
enum tw_err tw_svc_policy_zone_check(const struct tw_policy *p, const char *text, size_t len,
                                     tw_svc_tz_load_fn load, struct tw_policy_diag *d,
                                     struct tw_error *err);

/*
 * tw_svc_policies_load, each policy's timezone also loaded with LOAD
 * (tw_svc_policy_zone_check) before any is stored: the first that does not
 * load fails the whole load as "FILE:LINE:COLUMN: $.timezone: ..."
 * (DIAGS gets that problem).  LOAD NULL checks no zone, as
 * tw_svc_policies_load.  What `serve --policies` calls, so a policy whose
 * zone the server lacks refuses the start instead of failing each request.
 */
enum tw_err tw_svc_policies_load_zones(const char *dir, struct tw_store *st,
                                       tw_svc_tz_load_fn load, struct tw_svc_policies *out,
                                       struct tw_policy_diags *diags, struct tw_error *err);

/* The policy called NAME, or NULL. */
const struct tw_svc_policy *tw_svc_policies_find(const struct tw_svc_policies *ps,
                                                 const char *name);

void tw_svc_policies_cleanup(struct tw_svc_policies *ps);

/* Whether FILE (a path or a bare name) is the policies' JSON Schema shipped
 * beside the examples (policies/policy.schema.json), not a policy: a folder
 * load skips it, and so does policy check (a glob of policies/ names it). */
bool tw_svc_policy_is_schema(const char *file);

#endif
