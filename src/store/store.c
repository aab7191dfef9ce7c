/*
 * store.c - the store's public functions: argument checks, then the
 * implementation's operation (store_ops.h).  Which implementation opens a
 * given location is decided here, and only here.
 */
#include "store/store_ops.h"

#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[] = {
    [TW_ROLE_AGENT] = "agent",
    [TW_ROLE_READER] = "reader",
    [TW_ROLE_ADMIN] = "admin",
};

const char *tw_role_name(enum tw_role r)
{
    return (unsigned)r < 3 ? role_names[r] : "unknown";
}

enum tw_err tw_role_parse(const char *s, enum tw_role *out)
{
    for (int i = 0; s && i < 3; i++) {
        if (strcmp(s, role_names[i]) == 0) {
            *out = (enum tw_role)i;
            return TW_OK;
        }
    }
    return TW_EINVAL;
}

enum tw_err tw_store_open(const char *path, struct tw_store **out, struct tw_error *err)
{
    return tw_store_open_with(path, NULL, out, err);
}

enum tw_err tw_store_open_with(const char *path, const struct tw_store_open_opts *opts,
                               struct tw_store **out, struct tw_error *err)
{
    static const struct tw_store_open_opts defaults = {0};
    tw_error_clear(err);
    *out = NULL;
    if (!path || !*path)
        return tw_error_set(err, TW_EINVAL, "no database path given");
    if (tw_store_location_is_pg(path, strlen(path)))
        return tw_store_pg_open(path, opts ? opts : &defaults, out, err);
    return tw_store_sqlite_open(path, opts ? opts : &defaults, out, err);
}

/* libpq's connection keywords (PostgreSQL 15's, "Parameter Key Words"):
 * a location whose first word is one of them, followed by '=', is a
 * keyword/value connection string. */
static const char *const pg_keywords[] = {
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "channel_binding",
    "connect_timeout", "client_encoding", "options", "application_name",
    "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
    "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword", "sslrootcert",
    "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
    "ssl_max_protocol_version", "krbsrvname", "gsslib", "service", "target_session_attrs",
};

bool tw_store_location_is_pg(const char *location, size_t len)
{
    if (!location)
        return false;
    static const char *const schemes[] = {"postgresql://", "postgres://"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(schemes[i]);
        if (len >= n && memcmp(location, schemes[i], n) == 0)
            return true;
    }
    size_t i = 0;
    while (i < len && (location[i] == ' ' || location[i] == '\t'))
        i++;
    size_t w = i;
    while (i < len && ((location[i] >= 'a' && location[i] <= 'z') || location[i] == '_'))
        i++;
    size_t wl = i - w;
    while (i < len && (location[i] == ' ' || location[i] == '\t'))
        i++;
    if (wl == 0 || i >= len || location[i] != '=')
        return false;
    for (size_t k = 0; k < sizeof(pg_keywords) / sizeof(pg_keywords[0]); k++)
        if (strlen(pg_keywords[k]) == wl && memcmp(pg_keywords[k], location + w, wl) == 0)
            return true;
    return false;
}

void tw_store_close(struct tw_store *st)
{
    if (st)
        st->ops->close(st);
}

/* Every operation below: a NULL handle is a caller's bug, named as such. */
#define CHECK_ST(st, err)                                                              \
    do {                                                                               \
        tw_error_clear(err);                                                           \
        if (!(st))                                                                     \
            return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__); \
    } while (0)

enum tw_err tw_store_token_add(struct tw_store *st, const char *name, enum tw_role role,
                               const uint8_t sha256[32], int64_t *id_out,
                               struct tw_error *err)
{
    CHECK_ST(st, err);
    if ((unsigned)role > TW_ROLE_ADMIN || !sha256)
        return tw_error_set(err, TW_EINVAL, "a token needs a role and a SHA-256 hash");
    return st->ops->token_add(st, name ? name : "", role, sha256, id_out, err);
}

enum tw_err tw_store_token_lookup(struct tw_store *st, const uint8_t sha256[32],
                                  enum tw_role *role_out, char *name_out, size_t name_len,
                                  struct tw_error *err)
{
    CHECK_ST(st, err);
    if (name_out && name_len)
        name_out[0] = '\0';
    return st->ops->token_lookup(st, sha256, role_out, name_out, name_len, err);
}

enum tw_err tw_store_token_list(struct tw_store *st, struct tw_store_token_row **rows, size_t *n,
                                struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->token_list(st, rows, n, err);
}

enum tw_err tw_store_token_revoke(struct tw_store *st, int64_t id, struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->token_revoke(st, id, err);
}

enum tw_err tw_store_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                                 const char *const *raw, const size_t *raw_len, size_t n,
                                 const char *received_at, enum tw_put_status *status,
                                 struct tw_error *errs, struct tw_error *err)
{
    return tw_store_put_reports_judged(st, reps, raw, raw_len, NULL, n, received_at, status,
                                       errs, err);
}

enum tw_err tw_store_put_reports_judged(struct tw_store *st, const struct tw_report *const *reps,
                                        const char *const *raw, const size_t *raw_len,
                                        const struct tw_store_judged *const *judged, size_t n,
                                        const char *received_at, enum tw_put_status *status,
                                        struct tw_error *errs, struct tw_error *err)
{
    CHECK_ST(st, err);
    if (n == 0)
        return TW_OK;
    if (!reps || !status || !received_at)
        return tw_error_set(err, TW_EINVAL, "storing reports needs the reports, a status "
                                            "array and the time they were received");
    for (size_t i = 0; i < n; i++) {
        status[i] = TW_PUT_FAILED;
        if (errs)
            tw_error_clear(&errs[i]);
    }
    for (size_t i = 0; judged && i < n; i++)
        if (judged[i] && reps[i] && judged[i]->n != reps[i]->n_results)
            return tw_error_set(err, TW_EINVAL,
                                "report %zu of the batch has %zu results but %zu verdicts", i,
                                reps[i]->n_results, judged[i]->n);
    return st->ops->put_reports(st, reps, raw, raw_len, judged, n, received_at, status, errs,
                                err);
}

void tw_store_vm_rows_free(struct tw_store_vm_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free(rows[i].tags);
    free(rows);
}

void tw_store_result_recs_free(struct tw_store_result_rec *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++)
        free(recs[i].record);
    free(recs);
}

/* The list operations: *ROWS NULL and *N 0 until the operation fills them. */
#define LIST_OP(name, rowtype)                                                          \
    enum tw_err tw_store_##name(struct tw_store *st, rowtype **rows, size_t *n,        \
                                struct tw_error *err)                                   \
    {                                                                                   \
        *rows = NULL;                                                                   \
        *n = 0;                                                                         \
        CHECK_ST(st, err);                                                              \
        return st->ops->name(st, rows, n, err);                                         \
    }
#define KEYED_LIST_OP(name, rowtype)                                                    \
    enum tw_err tw_store_##name(struct tw_store *st, int64_t key, rowtype **rows,      \
                                size_t *n, struct tw_error *err)                        \
    {                                                                                   \
        *rows = NULL;                                                                   \
        *n = 0;                                                                         \
        CHECK_ST(st, err);                                                              \
        return st->ops->name(st, key, rows, n, err);                                    \
    }

LIST_OP(vms, struct tw_store_vm_row)
LIST_OP(disks, struct tw_store_disk_row)
KEYED_LIST_OP(vm_disks, struct tw_store_disk_row)
KEYED_LIST_OP(disk_history, struct tw_store_sku_hist_row)
KEYED_LIST_OP(disk_results, struct tw_store_result_rec)

enum tw_err tw_store_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                        struct tw_error *err)
{
    memset(row, 0, sizeof(*row));
    CHECK_ST(st, err);
    return st->ops->vm(st, id, row, err);
}

enum tw_err tw_store_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                          struct tw_error *err)
{
    memset(row, 0, sizeof(*row));
    CHECK_ST(st, err);
    return st->ops->disk(st, id, row, err);
}

enum tw_err tw_store_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                               struct tw_result **results, size_t *n_results,
                               struct tw_error *err)
{
    *results = NULL;
    *n_results = 0;
    CHECK_ST(st, err);
    return st->ops->vm_latest(st, vm_id, inv, results, n_results, err);
}

enum tw_err tw_store_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                                  struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->fleet_latest(st, fn, arg, err);
}

enum tw_err tw_store_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err)
{
    *ids = NULL;
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->vm_ids(st, ids, n, err);
}

enum tw_err tw_store_stats(struct tw_store *st, struct tw_store_stats *out,
                           struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    CHECK_ST(st, err);
    return st->ops->stats(st, out, err);
}

enum tw_err tw_store_pricebook_put(struct tw_store *st, const char *region, const char *currency,
                                   const char *source, const char *fetched_at,
                                   const char *items, size_t items_len, struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!region || !*region || !currency || !*currency || !items)
        return tw_error_set(err, TW_EINVAL, "a price book needs a region, a currency and items");
    return st->ops->pricebook_put(st, region, currency, source ? source : "",
                                  fetched_at ? fetched_at : "", items, items_len, err);
}

enum tw_err tw_store_pricebook_get(struct tw_store *st, const char *region, const char *currency,
                                   char **items, size_t *items_len, char *source,
                                   size_t source_len, char *fetched_at, size_t fetched_len,
                                   struct tw_error *err)
{
    *items = NULL;
    if (items_len)
        *items_len = 0;
    if (source && source_len)
        source[0] = '\0';
    if (fetched_at && fetched_len)
        fetched_at[0] = '\0';
    CHECK_ST(st, err);
    if (!region || !currency)
        return tw_error_set(err, TW_EINVAL, "a price book is found by region and currency");
    return st->ops->pricebook_get(st, region, currency, items, items_len, source, source_len,
                                  fetched_at, fetched_len, err);
}

enum tw_err tw_store_check(struct tw_store *st, struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->check(st, err);
}

enum tw_err tw_store_pricebook_get_at(struct tw_store *st, const char *region,
                                      const char *currency, const char *at, char **items,
                                      size_t *items_len, char *source, size_t source_len,
                                      char *fetched_at, size_t fetched_len,
                                      struct tw_error *err)
{
    *items = NULL;
    if (items_len)
        *items_len = 0;
    if (source && source_len)
        source[0] = '\0';
    if (fetched_at && fetched_len)
        fetched_at[0] = '\0';
    CHECK_ST(st, err);
    if (!region || !currency || !at || !*at)
        return tw_error_set(err, TW_EINVAL,
                            "a price book as of an instant is found by region, currency and "
                            "the instant");
    return st->ops->pricebook_get_at(st, region, currency, at, items, items_len, source,
                                     source_len, fetched_at, fetched_len, err);
}

static const char *const action_names[] = {
    [TW_ACT_PLANNED] = "planned", [TW_ACT_CHECKED] = "checked", [TW_ACT_SENT] = "sent",
    [TW_ACT_VERIFIED] = "verified", [TW_ACT_DONE] = "done", [TW_ACT_SKIPPED] = "skipped",
    [TW_ACT_FAILED] = "failed",
};

const char *tw_action_state_name(enum tw_action_state s)
{
    return (unsigned)s <= TW_ACT_FAILED ? action_names[s] : "unknown";
}

bool tw_action_move_allowed(enum tw_action_state from, enum tw_action_state to)
{
    switch (from) {
    case TW_ACT_PLANNED:
        return to == TW_ACT_CHECKED || to == TW_ACT_SKIPPED || to == TW_ACT_FAILED;
    case TW_ACT_CHECKED:
        return to == TW_ACT_SENT || to == TW_ACT_SKIPPED || to == TW_ACT_FAILED;
    case TW_ACT_SENT:
        return to == TW_ACT_VERIFIED || to == TW_ACT_FAILED;
    case TW_ACT_VERIFIED:
        return to == TW_ACT_DONE || to == TW_ACT_FAILED;
    default:
        return false; /* done, skipped and failed are final */
    }
}

enum tw_err tw_store_action_add(struct tw_store *st, const struct tw_store_action_new *a,
                                int64_t *id, struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!a || !a->kind || !*a->kind)
        return tw_error_set(err, TW_EINVAL, "an action needs a kind");
    return st->ops->action_add(st, a, id, err);
}

enum tw_err tw_store_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                                 enum tw_action_state to, const char *owner, const char *detail,
                                 struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!tw_action_move_allowed(from, to))
        return tw_error_set(err, TW_EPERM, "an action can't go from %s to %s",
                            tw_action_state_name(from), tw_action_state_name(to));
    return st->ops->action_move(st, id, from, to, owner ? owner : "", detail ? detail : "", err);
}

enum tw_err tw_store_action_claim(struct tw_store *st, int64_t id, const char *owner,
                                  int64_t now_ms, int64_t lease_ms, int64_t *until_ms,
                                  struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!owner || !owner[0])
        return tw_error_set(err, TW_EINVAL, "a claim needs an owner's name");
    if (lease_ms <= 0 || now_ms < 0 || now_ms > INT64_MAX - lease_ms)
        return tw_error_set(err, TW_EINVAL, "a claim's lease must be a positive time, got %lld ms",
                            (long long)lease_ms);
    return st->ops->action_claim(st, id, owner, now_ms, lease_ms, until_ms, err);
}

enum tw_err tw_store_action_release(struct tw_store *st, int64_t id, const char *owner,
                                    struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!owner || !owner[0])
        return tw_error_set(err, TW_EINVAL, "a release needs the owner's name");
    return st->ops->action_release(st, id, owner, err);
}

enum tw_err tw_store_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                                  int *attempts, struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->action_state(st, id, state, attempts, err);
}

enum tw_err tw_store_action_log_count(struct tw_store *st, int64_t id, size_t *n,
                                      struct tw_error *err)
{
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->action_log_count(st, id, n, err);
}

/* ---- schema 5: the audit log, the executor's queue, originals ---- */

void tw_store_action_rows_free(struct tw_store_action_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free(rows[i].operation_url);
    free(rows);
}

enum tw_err tw_store_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                                  struct tw_store_action_row **rows, size_t *n, bool *more,
                                  struct tw_error *err)
{
    static const struct tw_store_action_filter any = {0};
    *rows = NULL;
    *n = 0;
    if (more)
        *more = false;
    CHECK_ST(st, err);
    f = f ? f : &any;
    if (f->due_from_ms < 0 || f->due_to_ms < 0 || f->after_id < 0 ||
        f->limit > (size_t)INT32_MAX)
        return tw_error_set(err, TW_ERANGE, "an action filter's times, id and limit can't be "
                                            "negative or that large");
    if (f->state) {
        bool known = false;
        for (int k = TW_ACT_PLANNED; k <= TW_ACT_FAILED; k++)
            known |= strcmp(f->state, tw_action_state_name((enum tw_action_state)k)) == 0;
        if (!known)
            return tw_error_set(err, TW_EINVAL, "\"%.32s\" is no action state (planned, checked, "
                                "sent, verified, done, skipped, failed)", f->state);
    }
    return st->ops->actions_list(st, f, rows, n, more, err);
}

enum tw_err tw_store_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                                struct tw_error *err)
{
    memset(row, 0, sizeof(*row));
    CHECK_ST(st, err);
    return st->ops->action_get(st, id, row, err);
}

enum tw_err tw_store_action_moves(struct tw_store *st, int64_t id,
                                  struct tw_store_action_move_row **rows, size_t *n,
                                  struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->action_moves(st, id, rows, n, err);
}

enum tw_err tw_store_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                                 int64_t **ids, size_t *n, struct tw_error *err)
{
    *ids = NULL;
    *n = 0;
    CHECK_ST(st, err);
    if (max > (size_t)INT32_MAX)
        return tw_error_set(err, TW_ERANGE, "at most %d due actions at a time", INT32_MAX);
    return st->ops->actions_due(st, now_ms, dry_run, max, ids, n, err);
}

enum tw_err tw_store_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                          const char *url, struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!owner || !owner[0])
        return tw_error_set(err, TW_EINVAL, "keeping an operation needs the claim's owner");
    return st->ops->action_set_operation(st, id, owner, url ? url : "", err);
}

enum tw_err tw_store_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                          struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!owner || !owner[0])
        return tw_error_set(err, TW_EINVAL, "counting a send needs the claim's owner");
    return st->ops->action_count_attempt(st, id, owner, err);
}

enum tw_err tw_store_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                    struct tw_error *err)
{
    CHECK_ST(st, err);
    int64_t ms;
    if (!due_at || !tw_rfc3339_ms(due_at, &ms))
        return tw_error_set(err, TW_EPARSE, "an action's due time \"%.60s\" is not an RFC 3339 "
                            "time (e.g. 2026-11-14T09:30:00Z)", due_at ? due_at : "");
    return st->ops->action_set_due(st, id, due_at, err);
}

enum tw_err tw_store_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                       const char *tier, int64_t action_id, const char *at,
                                       bool *kept, struct tw_error *err)
{
    if (kept)
        *kept = false;
    CHECK_ST(st, err);
    int64_t ms;
    if (!sku || !sku[0])
        return tw_error_set(err, TW_EINVAL, "a disk's original SKU can't be empty");
    if (strlen(sku) >= 32 || (tier && strlen(tier) >= 16))
        return tw_error_set(err, TW_ERANGE, "a disk's original SKU \"%.40s\" is too long", sku);
    if (!at || !tw_rfc3339_ms(at, &ms))
        return tw_error_set(err, TW_EPARSE, "the time an original SKU was recorded, \"%.60s\", "
                            "is not an RFC 3339 time", at ? at : "");
    return st->ops->disk_original_set(st, disk_id, sku, tier ? tier : "", action_id, at, kept,
                                      err);
}

enum tw_err tw_store_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku,
                                       char *tier, bool *found, struct tw_error *err)
{
    *found = false;
    if (sku)
        sku[0] = '\0';
    if (tier)
        tier[0] = '\0';
    CHECK_ST(st, err);
    return st->ops->disk_original_get(st, disk_id, sku, tier, found, err);
}

enum tw_err tw_store_disk_original_clear(struct tw_store *st, int64_t disk_id,
                                         struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->disk_original_clear(st, disk_id, err);
}

/* ---- schema 5: the fleet from ARM ---- */

static const char *const arm_what_names[] = {
    [TW_ARM_CH_VM_NEW] = "vm_new",         [TW_ARM_CH_DISK_NEW] = "disk_new",
    [TW_ARM_CH_SKU] = "sku",               [TW_ARM_CH_POWER] = "power",
    [TW_ARM_CH_ATTRS] = "attrs",           [TW_ARM_CH_DETACHED] = "detached",
    [TW_ARM_CH_VM_FIELDS] = "vm_fields",
    [TW_ARM_CH_SKIPPED] = "skipped",
};

const char *tw_store_arm_what_name(enum tw_store_arm_what w)
{
    return (unsigned)w <= TW_ARM_CH_SKIPPED ? arm_what_names[w] : "unknown";
}

enum tw_err tw_store_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                                const char *observed_at,
                                void (*fn)(void *arg, const struct tw_store_arm_change *c),
                                void *arg, int64_t *vm_id, struct tw_error *err)
{
    if (vm_id)
        *vm_id = 0;
    CHECK_ST(st, err);
    int64_t ms;
    if (!observed_at || !tw_rfc3339_ms(observed_at, &ms))
        return tw_error_set(err, TW_EPARSE, "the time ARM was read, \"%.60s\", is not an RFC "
                            "3339 time", observed_at ? observed_at : "");
    if (!v || !v->vm || !v->vm->resource_id[0] || !v->vm->subscription_id[0] ||
        !v->vm->resource_group[0] || !v->vm->name[0])
        return tw_error_set(err, TW_EINVAL, "a VM from ARM needs its resource id, subscription, "
                                            "resource group and name");
    if (v->n_disks > TW_INV_MAX_DISKS || (v->n_disks && !v->disks))
        return tw_error_set(err, TW_EINVAL, "VM %s: %zu disks from ARM, more than the %d a VM "
                            "holds", v->vm->name, v->n_disks, TW_INV_MAX_DISKS);
    for (size_t i = 0; i < v->n_disks; i++) {
        const struct tw_store_arm_disk *d = &v->disks[i];
        if (!d->disk.managed_disk_id[0] || !d->disk.name[0] || !d->disk.sku[0])
            return tw_error_set(err, TW_EINVAL, "VM %s: disk %zu from ARM has no id, name or SKU",
                                v->vm->name, i);
        if (d->attrs.max_shares < 0)
            return tw_error_set(err, TW_EINVAL, "disk %s: maxShares %lld is negative",
                                d->disk.name, (long long)d->attrs.max_shares);
        int64_t lms;
        if (d->last_ownership_update && d->last_ownership_update[0] &&
            !tw_rfc3339_ms(d->last_ownership_update, &lms))
            return tw_error_set(err, TW_EPARSE, "disk %s: LastOwnershipUpdateTime \"%.60s\" is "
                                "not an RFC 3339 time", d->disk.name, d->last_ownership_update);
    }
    return st->ops->arm_vm_put(st, v, observed_at, ms, fn, arg, vm_id, err);
}

enum tw_err tw_store_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                       struct tw_error *err)
{
    *vm_id = 0;
    CHECK_ST(st, err);
    if (!id || !id[0])
        return tw_error_set(err, TW_EINVAL, "looking a VM up needs its resource id");
    return st->ops->vm_by_resource_id(st, id, vm_id, err);
}

enum tw_err tw_store_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                                struct tw_error *err)
{
    *vm_id = 0;
    CHECK_ST(st, err);
    if (!name || !name[0])
        return tw_error_set(err, TW_EINVAL, "looking a VM up needs its name");
    return st->ops->vm_by_name(st, name, vm_id, err);
}

/* A page's bounds, checked once for every implementation. */
static enum tw_err page_ok(const struct tw_store_page *pg, struct tw_error *err)
{
    if (!pg || pg->limit < 1 || pg->limit > TW_STORE_PAGE_MAX)
        return tw_error_set(err, TW_ERANGE, "a page holds 1 to %d rows", TW_STORE_PAGE_MAX);
    if (pg->offset > (size_t)INT64_MAX / 2)
        return tw_error_set(err, TW_ERANGE, "a page starts too far in");
    return TW_OK;
}

#define PAGE_OP(name, rowtype)                                                          \
    enum tw_err tw_store_##name(struct tw_store *st, const struct tw_store_page *pg,   \
                                rowtype **rows, size_t *n, bool *more,                  \
                                struct tw_error *err)                                   \
    {                                                                                   \
        *rows = NULL;                                                                   \
        *n = 0;                                                                         \
        *more = false;                                                                  \
        CHECK_ST(st, err);                                                              \
        enum tw_err rc = page_ok(pg, err);                                              \
        return rc != TW_OK ? rc : st->ops->name(st, pg, rows, n, more, err);            \
    }

PAGE_OP(vms_page, struct tw_store_vm_row)
PAGE_OP(disks_page, struct tw_store_disk_row)
PAGE_OP(vm_ids_page, int64_t)

/* OBSERVED_AT as milliseconds, or TW_EPARSE naming it. */
static enum tw_err observed_ms(const char *at, int64_t *ms, struct tw_error *err)
{
    if (!at || !tw_rfc3339_ms(at, ms))
        return tw_error_set(err, TW_EPARSE, "observation time \"%.40s\" is not RFC 3339",
                            at ? at : "");
    return TW_OK;
}

enum tw_err tw_store_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                   const char *observed_at, enum tw_obs_source source,
                                   struct tw_error *err)
{
    CHECK_ST(st, err);
    int64_t ms;
    if (!state || !*state || strlen(state) > 31)
        return tw_error_set(err, TW_EINVAL, "a power state needs a name (running, "
                                            "deallocated, ...)");
    enum tw_err rc = observed_ms(observed_at, &ms, err);
    return rc != TW_OK ? rc
                       : st->ops->power_observe(st, vm_id, state, observed_at, ms, source, err);
}

enum tw_err tw_store_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                                 const char *tier, int64_t size_gib, const char *observed_at,
                                 enum tw_obs_source source, bool *added, struct tw_error *err)
{
    if (added)
        *added = false;
    CHECK_ST(st, err);
    int64_t ms;
    if (!sku || !*sku)
        return tw_error_set(err, TW_EINVAL, "a SKU observation needs the SKU");
    enum tw_err rc = observed_ms(observed_at, &ms, err);
    return rc != TW_OK ? rc
                       : st->ops->sku_observe(st, disk_id, sku, tier ? tier : "", size_gib,
                                              observed_at, ms, source, added, err);
}

enum tw_err tw_store_policy_put(struct tw_store *st, const char *name, const char *body,
                                struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!name || !*name || !body)
        return tw_error_set(err, TW_EINVAL, "a policy needs a name and a body");
    return st->ops->policy_put(st, name, body, err);
}

enum tw_err tw_store_policy_get(struct tw_store *st, const char *name, char **body,
                                struct tw_error *err)
{
    *body = NULL;
    CHECK_ST(st, err);
    if (!name)
        return tw_error_set(err, TW_EINVAL, "a policy is found by its name");
    return st->ops->policy_get(st, name, body, err);
}

enum tw_err tw_store_plan_add(struct tw_store *st, const char *policy, const char *from,
                              const char *to, const char *body, int64_t *id,
                              struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!policy || !*policy || !body)
        return tw_error_set(err, TW_EINVAL, "a plan needs its policy and a body");
    return st->ops->plan_add(st, policy, from, to, body, id, err);
}

enum tw_err tw_store_fleet_verdicts(struct tw_store *st, const char *basis,
                                    tw_store_verdict_fn fn, void *arg, size_t *n_vms,
                                    struct tw_error *err)
{
    if (n_vms)
        *n_vms = 0;
    CHECK_ST(st, err);
    if (!basis || !fn)
        return tw_error_set(err, TW_EINVAL, "the fleet's verdicts are read under a basis, "
                                            "into a callback");
    return st->ops->fleet_verdicts(st, basis, fn, arg, n_vms, err);
}

enum tw_err tw_store_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                                 struct tw_store_latest_ref **rows, size_t *n, bool *more,
                                 struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    *more = false;
    CHECK_ST(st, err);
    if (!pg || pg->limit < 1 || pg->limit > TW_STORE_PAGE_MAX)
        return tw_error_set(err, TW_EINVAL, "a page holds 1 to %d rows", TW_STORE_PAGE_MAX);
    return st->ops->latest_page(st, pg, rows, n, more, err);
}

enum tw_err tw_store_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                                  const char *fetched_at, const struct tw_store_vm_size *rows,
                                  size_t n, struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!region || !*region || !source || !fetched_at || (n && !rows))
        return tw_error_set(err, TW_EINVAL, "VM sizes are stored by region, with their source "
                                            "and the time they were fetched");
    int64_t ms;
    if (!tw_rfc3339_ms(fetched_at, &ms))
        return tw_error_set(err, TW_EPARSE, "the VM sizes' fetch time \"%.40s\" is not an RFC "
                            "3339 time", fetched_at);
    for (size_t i = 0; i < n; i++)
        if (!rows[i].name[0] || !rows[i].caps)
            return tw_error_set(err, TW_EINVAL, "VM size %zu of region %s has no name or no "
                                                "limits", i, region);
    return st->ops->vm_sizes_put(st, region, source, fetched_at, rows, n, err);
}

enum tw_err tw_store_vm_sizes_get(struct tw_store *st, const char *region,
                                  struct tw_store_vm_size **rows, size_t *n, char *source,
                                  size_t source_len, char *fetched_at, size_t fetched_len,
                                  struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    if (source && source_len)
        source[0] = '\0';
    if (fetched_at && fetched_len)
        fetched_at[0] = '\0';
    CHECK_ST(st, err);
    if (!region)
        return tw_error_set(err, TW_EINVAL, "VM sizes are read by region");
    return st->ops->vm_sizes_get(st, region, rows, n, source, source_len, fetched_at,
                                 fetched_len, err);
}

void tw_store_vm_sizes_free(struct tw_store_vm_size *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free(rows[i].caps);
    free(rows);
}

enum tw_err tw_store_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                    size_t max,
                                    struct tw_store_stale **rows, size_t *n,
                                    struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    CHECK_ST(st, err);
    if (!basis || max < 1 || max > TW_STORE_PAGE_MAX)
        return tw_error_set(err, TW_EINVAL, "VMs to judge again are listed under a basis, 1 "
                                            "to %d at a time", TW_STORE_PAGE_MAX);
    return st->ops->verdicts_stale(st, basis, after, max, rows, n, err);
}

enum tw_err tw_store_verdicts_keep(struct tw_store *st, const char *basis,
                                   const struct tw_store_kept *rows, size_t n,
                                   struct tw_error *err)
{
    CHECK_ST(st, err);
    if (!basis || (n && !rows))
        return tw_error_set(err, TW_EINVAL, "verdicts are kept under a basis");
    for (size_t i = 0; i < n; i++)
        if (!rows[i].last_report_id ||
            (rows[i].target && (!rows[i].profile || !rows[i].result_id)))
            return tw_error_set(err, TW_EINVAL, "kept verdict %zu names no report or no "
                                                "result", i);
    return n ? st->ops->verdicts_keep(st, basis, rows, n, err) : TW_OK;
}

/* ---- drift (store_drift.c) ---- */

enum tw_err tw_store_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                                bool *started, struct tw_error *err)
{
    if (started)
        *started = false;
    CHECK_ST(st, err);
    if (!d || d->disk_id <= 0 || d->vm_id <= 0 || !d->sku[0] || !d->required_sku[0])
        return tw_error_set(err, TW_EINVAL, "a drift names its disk, its VM, the disk's SKU and "
                                            "the SKU required");
    int64_t ms;
    if (!tw_rfc3339_ms(d->since, &ms))
        return tw_error_set(err, TW_EPARSE, "the drift's since \"%.40s\" is not an RFC 3339 time",
                            d->since);
    return st->ops->drift_open(st, d, ms, started, err);
}

enum tw_err tw_store_drift_close(struct tw_store *st, int64_t disk_id, const char *at,
                                 bool *ended, struct tw_error *err)
{
    if (ended)
        *ended = false;
    CHECK_ST(st, err);
    int64_t ms;
    if (!at || !tw_rfc3339_ms(at, &ms))
        return tw_error_set(err, TW_EPARSE, "a drift's end \"%.40s\" is not an RFC 3339 time",
                            at ? at : "");
    return st->ops->drift_close(st, disk_id, at, ms, ended, err);
}

enum tw_err tw_store_drift_list(struct tw_store *st, bool open_only,
                                struct tw_store_drift_row **rows, size_t *n,
                                struct tw_error *err)
{
    *rows = NULL;
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->drift_list(st, open_only, rows, n, err);
}

enum tw_err tw_store_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                                size_t n, const char *at, bool *started,
                                struct tw_store_drift_row **ended, size_t *n_ended,
                                struct tw_error *err)
{
    *ended = NULL;
    *n_ended = 0;
    if (started)
        for (size_t i = 0; i < n; i++)
            started[i] = false;
    CHECK_ST(st, err);
    int64_t at_ms;
    if (!at || !tw_rfc3339_ms(at, &at_ms))
        return tw_error_set(err, TW_EPARSE, "a drift's end \"%.40s\" is not an RFC 3339 time",
                            at ? at : "");
    if (n && !rows)
        return tw_error_set(err, TW_EINVAL, "drifts are synced from their rows");
    int64_t *since = malloc((n ? n : 1) * sizeof(*since));
    if (!since)
        return tw_error_set(err, TW_ENOMEM, "out of memory recording drifts");
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < n; i++) {
        const struct tw_store_drift_row *d = &rows[i];
        if (d->disk_id <= 0 || d->vm_id <= 0 || !d->sku[0] || !d->required_sku[0])
            rc = tw_error_set(err, TW_EINVAL, "drift %zu does not name its disk, its VM, the "
                              "disk's SKU and the SKU required", i);
        else if (!tw_rfc3339_ms(d->since, &since[i]))
            rc = tw_error_set(err, TW_EPARSE, "drift %zu's since \"%.40s\" is not an RFC 3339 "
                              "time", i, d->since);
    }
    if (rc == TW_OK)
        rc = st->ops->drift_sync(st, rows, since, n, at, at_ms, started, ended, n_ended, err);
    free(since);
    return rc;
}

enum tw_err tw_store_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                     size_t max, struct tw_store_sv_power **out, size_t *n,
                                     struct tw_error *err)
{
    *out = NULL;
    *n = 0;
    CHECK_ST(st, err);
    if (max < 1 || max > TW_STORE_PAGE_MAX)
        return tw_error_set(err, TW_EINVAL, "a VM's power states are read 1 to %d at a time",
                            TW_STORE_PAGE_MAX);
    return st->ops->vm_power_before(st, vm_id, before_ms, max, out, n, err);
}

enum tw_err tw_store_policy_names(struct tw_store *st, char ***names, size_t *n,
                                  struct tw_error *err)
{
    *names = NULL;
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->policy_names(st, names, n, err);
}

enum tw_err tw_store_probe(struct tw_store *st, struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->probe(st, err);
}

enum tw_err tw_store_work_lock(struct tw_store *st, const char *kind, bool *held,
                               struct tw_error *err)
{
    *held = false;
    CHECK_ST(st, err);
    size_t n = kind ? strlen(kind) : 0;
    if (n == 0 || n > 15 || strspn(kind, "abcdefghijklmnopqrstuvwxyz") != n)
        return tw_error_set(err, TW_EINVAL, "a kind of periodic work is a short lower-case "
                                            "word, not \"%.32s\"", kind ? kind : "");
    return st->ops->work_lock(st, kind, held, err);
}
