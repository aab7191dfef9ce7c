/*
 * store_pg_drift.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                             int64_t since_ms, bool *started, struct tw_error *err)
{
    (void)st;
    (void)d;
    (void)since_ms;
    (void)started;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do drift_open yet");
}

enum tw_err tw_pg_drift_close(struct tw_store *st, int64_t disk_id, const char *at, int64_t at_ms,
                              bool *ended, struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)at;
    (void)at_ms;
    (void)ended;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do drift_close yet");
}

enum tw_err tw_pg_drift_list(struct tw_store *st, bool open_only, struct tw_store_drift_row **rows,
                             size_t *n, struct tw_error *err)
{
    (void)st;
    (void)open_only;
    (void)rows;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do drift_list yet");
}

enum tw_err tw_pg_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms, size_t max,
                                  struct tw_store_sv_power **out, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)vm_id;
    (void)before_ms;
    (void)max;
    (void)out;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_power_before yet");
}

enum tw_err tw_pg_policy_names(struct tw_store *st, char ***names, size_t *n, struct tw_error *err)
{
    (void)st;
    (void)names;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do policy_names yet");
}

enum tw_err tw_pg_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                             const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                             bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                             struct tw_error *err)
{
    (void)st;
    (void)rows;
    (void)since_ms;
    (void)n;
    (void)at;
    (void)at_ms;
    (void)started;
    (void)ended;
    (void)n_ended;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do drift_sync yet");
}
