/*
 * store_pg_arm.c - (being written)
 */
#include "store/store_pg.h"

enum tw_err tw_pg_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                             const char *observed_at, int64_t observed_ms,
                             void (*fn)(void *arg, const struct tw_store_arm_change *c), void *arg,
                             int64_t *vm_id, struct tw_error *err)
{
    (void)st;
    (void)v;
    (void)observed_at;
    (void)observed_ms;
    (void)fn;
    (void)arg;
    (void)vm_id;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do arm_vm_put yet");
}

enum tw_err tw_pg_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                    struct tw_error *err)
{
    (void)st;
    (void)id;
    (void)vm_id;
    return tw_error_set(err, TW_EUNSUPPORTED,
                        "the PostgreSQL store can't do vm_by_resource_id yet");
}

enum tw_err tw_pg_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                             struct tw_error *err)
{
    (void)st;
    (void)name;
    (void)vm_id;
    return tw_error_set(err, TW_EUNSUPPORTED, "the PostgreSQL store can't do vm_by_name yet");
}
