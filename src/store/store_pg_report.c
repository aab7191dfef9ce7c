/*
 * store_pg_report.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                              int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                              struct tw_store_report *out, struct tw_error *err)
{
    (void)st;
    (void)from_ns;
    (void)to_ns;
    (void)mark_from_ns;
    (void)mark_to_ns;
    (void)currency;
    (void)out;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do report_read yet");
}

enum tw_err tw_pg_report_book_items(struct tw_store *st, int64_t id, char **items, size_t *len,
                                    struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)items;
    (void)len;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do report_book_items yet");
}

enum tw_err tw_pg_report_begin(struct tw_store *st, struct tw_error *err)
{
    (void)st;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do report_begin yet");
}

void tw_pg_report_end(struct tw_store *st)
{
    (void)st;
}

enum tw_err tw_pg_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                    int64_t vm_id, struct tw_store_rp_cursor **out,
                                    struct tw_error *err)
{
    (void)st;
    (void)from_ms;
    (void)to_ms;
    (void)vm_id;
    (void)out;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do report_fleet_open yet");
}

enum tw_err tw_pg_report_fleet_next(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                    bool *done, struct tw_error *err)
{
    (void)c;
    (void)vm;
    (void)done;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do report_fleet_next yet");
}

void tw_pg_report_fleet_close(struct tw_store_rp_cursor *c)
{
    (void)c;
}

enum tw_err tw_pg_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                  struct tw_error *err)
{
    (void)st;
    (void)from_ms;
    (void)n;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do report_attached yet");
}
