/*
 * exec_arm.c - the executor's ARM calls over the real client (azure/arm.h):
 * one tw_arm per thread over a shared credential and pacer.
 */
#include "service/exec.h"

static enum tw_err real_open(void *arg, void **ctx, struct tw_error *err)
{
    const struct tw_exec_arm_real *r = arg;
    struct tw_arm *a = NULL;
    if (!r)
        return tw_error_set(err, TW_EINVAL, "the executor's ARM client has no options");
    enum tw_err rc = tw_arm_new(&r->opts, r->cred, r->pacer, &a, err);
    *ctx = a;
    return rc;
}

static void real_close(void *ctx)
{
    tw_arm_free(ctx);
}

static enum tw_err real_disk_get(void *ctx, const char *id, struct tw_arm_disk *d,
                                 struct tw_error *err)
{
    return tw_arm_disk_get(ctx, id, d, err);
}

static enum tw_err real_vm_get(void *ctx, const char *id, struct tw_arm_vm *vm,
                               struct tw_error *err)
{
    return tw_arm_vm_get(ctx, id, vm, err);
}

static enum tw_err real_set_sku(void *ctx, const char *id, const char *sku, struct tw_arm_op *op,
                                struct tw_error *err)
{
    return tw_arm_disk_set_sku(ctx, id, sku, op, err);
}

static enum tw_err real_deallocate(void *ctx, const char *id, struct tw_arm_op *op,
                                   struct tw_error *err)
{
    return tw_arm_vm_deallocate(ctx, id, op, err);
}

static enum tw_err real_start(void *ctx, const char *id, struct tw_arm_op *op,
                              struct tw_error *err)
{
    return tw_arm_vm_start(ctx, id, op, err);
}

static enum tw_err real_poll(void *ctx, struct tw_arm_op *op, bool *done, struct tw_error *err)
{
    return tw_arm_op_poll(ctx, op, done, err);
}

static enum tw_err real_verify(void *ctx, const char *id, const char *sku, bool *ok,
                               struct tw_arm_disk *d, struct tw_error *err)
{
    return tw_arm_disk_verify(ctx, id, sku, ok, d, err);
}

static const struct tw_arm_error *real_last_error(void *ctx)
{
    return tw_arm_last_error(ctx);
}

const struct tw_exec_arm_ops tw_exec_arm_real_ops = {
    real_open,   real_close, real_disk_get, real_vm_get,    real_set_sku,
    real_deallocate, real_start, real_poll, real_verify, real_last_error,
};
