/*
 * store_pg_savings.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                     const struct tw_store_disk_attrs *a, const char *observed_at,
                                     int64_t observed_ms, enum tw_obs_source source, bool *applied,
                                     struct tw_error *err)
{
    (void)st;
    (void)disk_id;
    (void)a;
    (void)observed_at;
    (void)observed_ms;
    (void)source;
    (void)applied;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do disk_attrs_observe yet");
}

enum tw_err tw_pg_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                               struct tw_store_sv_cursor **out, struct tw_error *err)
{
    (void)st;
    (void)from_ms;
    (void)to_ms;
    (void)out;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do savings_open yet");
}

enum tw_err tw_pg_savings_next(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm, bool *done,
                               struct tw_error *err)
{
    (void)c;
    (void)vm;
    (void)done;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do savings_next yet");
}

void tw_pg_savings_close(struct tw_store_sv_cursor *c)
{
    (void)c;
}

enum tw_err tw_pg_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max, size_t *n,
                                       struct tw_error *err)
{
    (void)st;
    (void)out;
    (void)max;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do pricebook_currencies yet");
}
