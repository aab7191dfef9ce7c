/*
 * store_report.c - the public functions of the monthly report's reads
 * (store.h, "the monthly report's reads"): argument checks, then the
 * implementation's operation (store_ops.h).  SQLite's reads are in
 * store_report_sqlite.c, PostgreSQL's in store_pg_report.c.
 */
#include "store/store_ops.h"

#include <stdlib.h>
#include <string.h>

#define CHECK_ST(st, err)                                                              \
    do {                                                                               \
        tw_error_clear(err);                                                           \
        if (!(st))                                                                     \
            return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__); \
    } while (0)

enum tw_err tw_store_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                                 int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                                 struct tw_store_report *out, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    CHECK_ST(st, err);
    if (to_ns < from_ns || mark_to_ns < mark_from_ns)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    return st->ops->report_read(st, from_ns, to_ns, mark_from_ns, mark_to_ns,
                                currency ? currency : "", out, err);
}

void tw_store_report_free(struct tw_store_report *r)
{
    if (!r)
        return;
    free(r->at_start);
    free(r->changes);
    free(r->actions);
    free(r->marks);
    free(r->books);
    free(r->later);
    free(r->strs);
    memset(r, 0, sizeof(*r));
}

enum tw_err tw_store_report_book_items(struct tw_store *st, int64_t id, char **items,
                                       size_t *len, struct tw_error *err)
{
    *items = NULL;
    if (len)
        *len = 0;
    CHECK_ST(st, err);
    return st->ops->report_book_items(st, id, items, len, err);
}

enum tw_err tw_store_report_begin(struct tw_store *st, struct tw_error *err)
{
    CHECK_ST(st, err);
    return st->ops->report_begin(st, err);
}

void tw_store_report_end(struct tw_store *st)
{
    if (st)
        st->ops->report_end(st);
}

enum tw_err tw_store_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                       int64_t vm_id, struct tw_store_rp_cursor **out,
                                       struct tw_error *err)
{
    *out = NULL;
    CHECK_ST(st, err);
    if (to_ms < from_ms)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    return st->ops->report_fleet_open(st, from_ms, to_ms, vm_id, out, err);
}

enum tw_err tw_store_report_fleet_next(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                       bool *done, struct tw_error *err)
{
    *done = true;
    tw_error_clear(err);
    if (!c)
        return tw_error_set(err, TW_EINVAL, "%s: the walk is not open", __func__);
    return c->st->ops->report_fleet_next(c, vm, done, err);
}

void tw_store_report_fleet_close(struct tw_store_rp_cursor *c)
{
    if (c)
        c->st->ops->report_fleet_close(c);
}

enum tw_err tw_store_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                     struct tw_error *err)
{
    *n = 0;
    CHECK_ST(st, err);
    return st->ops->report_attached(st, from_ms, n, err);
}
