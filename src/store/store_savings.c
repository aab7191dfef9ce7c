/*
 * store_savings.c - the public functions of the store's savings reads and
 * of the disk attributes an ARM sync records (store.h, "savings"): argument
 * checks, then the implementation's operation (store_ops.h).
 */
#include "store/store_ops.h"

#include "core/time.h"

#include <string.h>

enum tw_err tw_store_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                        const struct tw_store_disk_attrs *a,
                                        const char *observed_at, enum tw_obs_source source,
                                        bool *applied, struct tw_error *err)
{
    if (applied)
        *applied = false;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    if (!a)
        return tw_error_set(err, TW_EINVAL, "disk attributes to record are missing");
    if (a->max_shares < 0)
        return tw_error_set(err, TW_EINVAL,
                            "a disk's maxShares is 1 or more (0: unknown), got %lld",
                            (long long)a->max_shares);
    if ((unsigned)a->bursting > TW_TRI_YES)
        return tw_error_set(err, TW_EINVAL, "a disk's bursting is unknown, no or yes");
    if (memchr(a->disk_state, '\0', sizeof(a->disk_state)) == NULL)
        return tw_error_set(err, TW_EINVAL, "a disk's state is not a terminated string");
    int64_t ms;
    if (!observed_at || !tw_rfc3339_ms(observed_at, &ms))
        return tw_error_set(err, TW_EPARSE,
                            "the observation time \"%.60s\" is not an RFC 3339 time "
                            "(e.g. 2026-11-14T09:30:00Z)",
                            observed_at ? observed_at : "");
    return st->ops->disk_attrs_observe(st, disk_id, a, observed_at, ms, source, applied, err);
}

enum tw_err tw_store_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                  struct tw_store_sv_cursor **out, struct tw_error *err)
{
    *out = NULL;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    if (to_ms < from_ms)
        return tw_error_set(err, TW_EINVAL, "a span ends before it starts");
    return st->ops->savings_open(st, from_ms, to_ms, out, err);
}

enum tw_err tw_store_savings_next(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm,
                                  bool *done, struct tw_error *err)
{
    *done = true;
    tw_error_clear(err);
    if (!c)
        return tw_error_set(err, TW_EINVAL, "%s: the walk is not open", __func__);
    return c->st->ops->savings_next(c, vm, done, err);
}

void tw_store_savings_close(struct tw_store_sv_cursor *c)
{
    if (c)
        c->st->ops->savings_close(c);
}

enum tw_err tw_store_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max,
                                          size_t *n, struct tw_error *err)
{
    *n = 0;
    tw_error_clear(err);
    if (!st)
        return tw_error_set(err, TW_EINVAL, "%s: the store is not open", __func__);
    return st->ops->pricebook_currencies(st, out, max, n, err);
}
