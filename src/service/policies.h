/*
 * policies.h - the policies a backend serves: every *.json file of a
 * folder (`tierwise serve --policies DIR`), parsed once at start, kept in
 * memory read-only (safe to share between request threads) and recorded
 * in the store's policies table by name.
 */
#ifndef TW_SERVICE_POLICIES_H
#define TW_SERVICE_POLICIES_H

#include <stddef.h>

#include "core/err.h"
#include "core/policy.h"
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

/* The policy called NAME, or NULL. */
const struct tw_svc_policy *tw_svc_policies_find(const struct tw_svc_policies *ps,
                                                 const char *name);

void tw_svc_policies_cleanup(struct tw_svc_policies *ps);

#endif
