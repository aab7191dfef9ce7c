/*
 * store_pg_ingest.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                              const char *const *raw, const size_t *raw_len,
                              const struct tw_store_judged *const *judged, size_t n,
                              const char *received_at, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err)
{
    (void)st;
    (void)reps;
    (void)raw;
    (void)raw_len;
    (void)judged;
    (void)n;
    (void)received_at;
    (void)status;
    (void)errs;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do put_reports yet");
}
