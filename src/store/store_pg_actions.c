/*
 * store_pg_actions.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_action_add(struct tw_store *st, const struct tw_store_action_new *a, int64_t *id,
                             struct tw_error *err)
{
    (void)st;
    (void)a;
    (void)id;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_add yet");
}

enum tw_err tw_pg_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                              enum tw_action_state to, const char *owner, const char *detail,
                              struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)from;
    (void)to;
    (void)owner;
    (void)detail;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_move yet");
}

enum tw_err tw_pg_action_claim(struct tw_store *st, int64_t id, const char *owner, int64_t now_ms,
                               int64_t lease_ms, int64_t *until_ms, struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)owner;
    (void)now_ms;
    (void)lease_ms;
    (void)until_ms;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_claim yet");
}

enum tw_err tw_pg_action_release(struct tw_store *st, int64_t id, const char *owner,
                                 struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)owner;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_release yet");
}

enum tw_err tw_pg_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                               int *attempts, struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)state;
    (void)attempts;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_state yet");
}

enum tw_err tw_pg_action_log_count(struct tw_store *st, int64_t id, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_log_count yet");
}

enum tw_err tw_pg_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                const char *observed_at, int64_t observed_ms,
                                enum tw_obs_source source, struct tw_error *err)
{
    (void)st;
    (void)vm_id;
    (void)state;
    (void)observed_at;
    (void)observed_ms;
    (void)source;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do power_observe yet");
}

enum tw_err tw_pg_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                              const char *tier, int64_t size_gib, const char *observed_at,
                              int64_t observed_ms, enum tw_obs_source source, bool *added,
                              struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)sku;
    (void)tier;
    (void)size_gib;
    (void)observed_at;
    (void)observed_ms;
    (void)source;
    (void)added;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do sku_observe yet");
}

enum tw_err tw_pg_policy_put(struct tw_store *st, const char *name, const char *body,
                             struct tw_error *err)
{
    (void)st;
    (void)name;
    (void)body;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do policy_put yet");
}

enum tw_err tw_pg_policy_get(struct tw_store *st, const char *name, char **body,
                             struct tw_error *err)
{
    (void)st;
    (void)name;
    (void)body;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do policy_get yet");
}

enum tw_err tw_pg_plan_add(struct tw_store *st, const char *policy, const char *from,
                           const char *to, const char *body, int64_t *id, struct tw_error *err)
{
    (void)st;
    (void)policy;
    (void)from;
    (void)to;
    (void)body;
    (void)id;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do plan_add yet");
}

enum tw_err tw_pg_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                               struct tw_store_action_row **rows, size_t *n, bool *more,
                               struct tw_error *err)
{
    (void)st;
    (void)f;
    (void)rows;
    (void)n;
    (void)more;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do actions_list yet");
}

enum tw_err tw_pg_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                             struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)row;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_get yet");
}

enum tw_err tw_pg_action_moves(struct tw_store *st, int64_t id,
                               struct tw_store_action_move_row **rows, size_t *n,
                               struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_moves yet");
}

enum tw_err tw_pg_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                              int64_t **ids, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)now_ms;
    (void)dry_run;
    (void)max;
    (void)ids;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do actions_due yet");
}

enum tw_err tw_pg_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                       const char *url, struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)owner;
    (void)url;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do action_set_operation yet");
}

enum tw_err tw_pg_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                       struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)owner;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do action_count_attempt yet");
}

enum tw_err tw_pg_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                 struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)due_at;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do action_set_due yet");
}

enum tw_err tw_pg_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                    const char *tier, int64_t action_id, const char *at, bool *kept,
                                    struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)sku;
    (void)tier;
    (void)action_id;
    (void)at;
    (void)kept;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do disk_original_set yet");
}

enum tw_err tw_pg_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku, char *tier,
                                    bool *found, struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)sku;
    (void)tier;
    (void)found;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do disk_original_get yet");
}

enum tw_err tw_pg_disk_original_clear(struct tw_store *st, int64_t disk_id, struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do disk_original_clear yet");
}
