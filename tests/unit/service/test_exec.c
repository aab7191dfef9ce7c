/* test_exec.c - the executor's decisions against a fake ARM (a table of
 * calls over an in-memory VM and its disks) and a real store: the order of
 * a switch and its audit log, every check that skips, the wait of a
 * downgrade whose VM still runs, the resume of an action found "sent"
 * (never sent again when the disk has or is moving to the target), ARM's
 * refusals (retried or failed), claims held by another executor, dry runs
 * that write nothing, and the original SKU kept and cleared. */
#define _POSIX_C_SOURCE 200809L
#include "testhelp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/time.h"
#include "service/exec.h"
#include "th_store.h"

#define SUB "00000000-0000-0000-0000-000000000001"
#define RG "/subscriptions/" SUB "/resourceGroups/rg1/providers/Microsoft.Compute"
#define VM_ID RG "/virtualMachines/vm1"
#define D1_ID RG "/disks/data1"
#define D2_ID RG "/disks/data2"

/* ---- the fake ARM ---- */

struct fdisk {
    const char *id;
    char sku[32];
    char state[16];         /* diskState */
    bool updating;          /* propertyUpdatesInProgress */
    int64_t shares;
    int bursting;
    int patches;            /* PATCHes received */
};

struct fake {
    struct fdisk d[2];
    char power[16];
    char size[32];
    int throttle;           /* the next PATCHes answered 429 */
    int conflict;           /* the next PATCH answered 409 Conflict */
    int polls;              /* polls an operation stays InProgress */
    int polls_left;
    bool lazy;              /* a PATCH only marks the disk updating (the switch lands at
                             * the operation's end) */
    char pending[32];
    struct fdisk *pending_disk;
    struct tw_arm_error last;
    struct tw_store *steal_st;  /* another executor takes STEAL_ID over at the first poll */
    int64_t steal_id;
    bool fail_op;               /* the next operation ends Failed (its poll answers 200) */
    bool vm_stays;              /* a start/deallocate is accepted but the power state stays */
    bool vm_refuse;             /* a start/deallocate is refused (409 OperationNotAllowed) */
    int vm_posts;               /* starts and deallocations received */
    long set_sku_sleep_ms;      /* ARM takes this long to accept a PATCH */
    struct tw_store *probe_st;  /* at a poll, PROBE_LEFT_MS gets PROBE_ID's lease left */
    int64_t probe_id, probe_left_ms;
};

static struct fdisk *find(struct fake *f, const char *id)
{
    for (int i = 0; i < 2; i++)
        if (f->d[i].id && !strcasecmp(f->d[i].id, id))
            return &f->d[i];
    return NULL;
}

static enum tw_err f_open(void *arg, void **ctx, struct tw_error *err)
{
    (void)err;
    *ctx = arg;
    return TW_OK;
}

static void f_close(void *ctx)
{
    (void)ctx;
}

static void ok(struct fake *f)
{
    memset(&f->last, 0, sizeof f->last);
    f->last.status = 200;
}

static enum tw_err f_disk_get(void *ctx, const char *id, struct tw_arm_disk *d,
                              struct tw_error *err)
{
    struct fake *f = ctx;
    struct fdisk *x = find(f, id);
    ok(f);
    if (!x) {
        f->last.status = 404;
        f->last.fault = TW_ARM_FAULT_NOT_FOUND;
        return tw_error_set(err, TW_ENOENT, "no disk %s", id);
    }
    memset(d, 0, sizeof *d);
    snprintf(d->id, sizeof d->id, "%s", x->id);
    snprintf(d->sku, sizeof d->sku, "%s", x->sku);
    snprintf(d->disk_state, sizeof d->disk_state, "%s", x->state);
    snprintf(d->provisioning_state, sizeof d->provisioning_state, "%s",
             x->updating ? "Updating" : "Succeeded");
    d->update_in_progress = x->updating;
    d->max_shares = x->shares;
    d->bursting = x->bursting;
    d->size_gib = 128;
    snprintf(d->tier, sizeof d->tier, "%s", !strncmp(x->sku, "Premium", 7) ? "P10" : "S10");
    if (strcmp(x->state, "Unattached"))
        snprintf(d->managed_by, sizeof d->managed_by, "%s", VM_ID);
    return TW_OK;
}

static enum tw_err f_vm_get(void *ctx, const char *id, struct tw_arm_vm *vm, struct tw_error *err)
{
    struct fake *f = ctx;
    ok(f);
    if (strcasecmp(id, VM_ID)) {
        f->last.status = 404;
        f->last.fault = TW_ARM_FAULT_NOT_FOUND;
        return tw_error_set(err, TW_ENOENT, "no VM %s", id);
    }
    memset(vm, 0, sizeof *vm);
    snprintf(vm->vm.resource_id, sizeof vm->vm.resource_id, "%s", VM_ID);
    snprintf(vm->vm.name, sizeof vm->vm.name, "vm1");
    snprintf(vm->vm.location, sizeof vm->vm.location, "westeurope");
    snprintf(vm->vm.vm_size, sizeof vm->vm.vm_size, "%s", f->size);
    snprintf(vm->power_state, sizeof vm->power_state, "%s", f->power);
    return TW_OK;
}

static enum tw_err f_set_sku(void *ctx, const char *id, const char *sku, struct tw_arm_op *op,
                             struct tw_error *err)
{
    struct fake *f = ctx;
    struct fdisk *x = find(f, id);
    if (f->set_sku_sleep_ms) {
        struct timespec ts = {0, f->set_sku_sleep_ms * 1000000L};
        nanosleep(&ts, NULL);
    }
    ok(f);
    memset(op, 0, sizeof *op);
    if (f->throttle > 0) {
        f->throttle--;
        f->last.status = 429;
        f->last.fault = TW_ARM_FAULT_THROTTLED;
        snprintf(f->last.code, sizeof f->last.code, "TooManyRequests");
        return tw_error_set(err, TW_EIO, "429");
    }
    if (f->conflict > 0) {
        f->conflict--;
        f->last.status = 409;
        f->last.fault = TW_ARM_FAULT_NOT_ALLOWED;
        snprintf(f->last.code, sizeof f->last.code, "OperationNotAllowed");
        snprintf(f->last.message, sizeof f->last.message, "quota of type changes reached");
        return tw_error_set(err, TW_EPERM, "409");
    }
    x->patches++;
    if (f->lazy || f->polls) {
        x->updating = true;
        snprintf(f->pending, sizeof f->pending, "%s", sku);
        f->pending_disk = x;
        snprintf(op->url, sizeof op->url, "http://127.0.0.1:1/asyncoperations/1");
        op->async_operation = true;
        f->polls_left = f->polls;
    } else {
        snprintf(x->sku, sizeof x->sku, "%s", sku);
    }
    return TW_OK;
}

static enum tw_err f_vm_action(struct fake *f, const char *power, struct tw_arm_op *op)
{
    ok(f);
    memset(op, 0, sizeof *op);
    if (f->vm_refuse) {
        f->last.status = 409;
        f->last.fault = TW_ARM_FAULT_NOT_ALLOWED;
        snprintf(f->last.code, sizeof f->last.code, "OperationNotAllowed");
        snprintf(f->last.message, sizeof f->last.message, "the VM is being deleted");
        return TW_EPERM;
    }
    f->vm_posts++;
    if (f->vm_stays)
        return TW_OK;
    snprintf(f->power, sizeof f->power, "%s", power);
    const char *st = !strcmp(power, "running") ? "Attached" : "Reserved";
    for (int i = 0; i < 2; i++)
        if (f->d[i].id && strcmp(f->d[i].state, "Unattached"))
            snprintf(f->d[i].state, sizeof f->d[i].state, "%s", st);
    return TW_OK;
}

static enum tw_err f_dealloc(void *ctx, const char *id, struct tw_arm_op *op, struct tw_error *e)
{
    (void)id;
    (void)e;
    return f_vm_action(ctx, "deallocated", op);
}

static enum tw_err f_start(void *ctx, const char *id, struct tw_arm_op *op, struct tw_error *e)
{
    (void)id;
    (void)e;
    return f_vm_action(ctx, "running", op);
}

static int64_t now_ms(void);

static enum tw_err f_poll(void *ctx, struct tw_arm_op *op, bool *done, struct tw_error *err)
{
    struct fake *f = ctx;
    (void)op;
    (void)err;
    ok(f);
    if (f->steal_st) {
        struct timespec ts = {0, 150 * 1000000L}; /* past the executor's lease */
        nanosleep(&ts, NULL);
        struct tw_error e = {0};
        if (tw_store_action_claim(f->steal_st, f->steal_id, "thief", now_ms(), 600000, NULL, &e) !=
            TW_OK)
            fail_msg("the thief's claim: %s", e.msg);
        f->steal_st = NULL;
    }
    if (f->probe_st) {
        struct tw_store_action_row row;
        struct tw_error e = {0};
        if (tw_store_action_get(f->probe_st, f->probe_id, &row, &e) == TW_OK) {
            f->probe_left_ms = row.claim_until_ms - now_ms();
            free(row.operation_url);
        }
        f->probe_st = NULL;
    }
    if (f->polls_left > 0) {
        f->polls_left--;
        *done = false;
        return TW_OK;
    }
    *done = true;
    if (f->fail_op) {
        f->fail_op = false;
        if (f->pending_disk)
            f->pending_disk->updating = false;
        f->pending_disk = NULL;
        f->last.status = 200;
        f->last.fault = TW_ARM_FAULT_OTHER;
        snprintf(f->last.code, sizeof f->last.code, "InternalDiskManagementError");
        snprintf(f->last.message, sizeof f->last.message, "the disk could not be updated");
        return tw_error_set(err, TW_EIO, "the operation failed");
    }
    if (f->pending_disk) {
        snprintf(f->pending_disk->sku, sizeof f->pending_disk->sku, "%s", f->pending);
        f->pending_disk->updating = false;
        f->pending_disk = NULL;
    }
    return TW_OK;
}

static enum tw_err f_verify(void *ctx, const char *id, const char *sku, bool *okp,
                            struct tw_arm_disk *d, struct tw_error *err)
{
    struct tw_arm_disk tmp;
    enum tw_err rc = f_disk_get(ctx, id, d ? d : &tmp, err);
    if (rc != TW_OK)
        return rc;
    const struct tw_arm_disk *x = d ? d : &tmp;
    *okp = !strcasecmp(x->sku, sku) && !x->update_in_progress;
    return TW_OK;
}

static const struct tw_arm_error *f_last(void *ctx)
{
    return &((struct fake *)ctx)->last;
}

static const struct tw_exec_arm_ops fake_ops = {f_open,   f_close, f_disk_get, f_vm_get,
                                                f_set_sku, f_dealloc, f_start, f_poll,
                                                f_verify, f_last};

/* ---- the fixture ---- */

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct fake arm;
    int64_t vm_id, d1, d2;
    struct tw_vmcap_table caps;
    struct tw_vmcap cap[2];
    int64_t lease_ms;     /* the runs' lease; 0: the default */
    int64_t tick_ms;      /* the runs' tick; 0: 60 s */
    /* what the sink saw */
    int n_results;
    char outcome[8][16];
    char reason[8][512];
    char url[8][600];
};

static void put_fleet(struct fx *f)
{
    struct tw_vm vm;
    memset(&vm, 0, sizeof vm);
    snprintf(vm.name, sizeof vm.name, "vm1");
    snprintf(vm.resource_id, sizeof vm.resource_id, "%s", VM_ID);
    snprintf(vm.subscription_id, sizeof vm.subscription_id, SUB);
    snprintf(vm.resource_group, sizeof vm.resource_group, "rg1");
    snprintf(vm.location, sizeof vm.location, "westeurope");
    snprintf(vm.vm_size, sizeof vm.vm_size, "Standard_D4s_v3");
    struct tw_store_arm_disk disks[2];
    memset(disks, 0, sizeof disks);
    const char *names[2] = {"data1", "data2"}, *ids[2] = {D1_ID, D2_ID};
    for (int i = 0; i < 2; i++) {
        snprintf(disks[i].disk.name, sizeof disks[i].disk.name, "%s", names[i]);
        disks[i].disk.role = TW_DISK_DATA;
        disks[i].disk.lun = i;
        snprintf(disks[i].disk.sku, sizeof disks[i].disk.sku, "Premium_LRS");
        disks[i].disk.size_gib = 128;
        snprintf(disks[i].disk.tier, sizeof disks[i].disk.tier, "P10");
        snprintf(disks[i].disk.managed_disk_id, sizeof disks[i].disk.managed_disk_id, "%s",
                 ids[i]);
    }
    struct tw_store_arm_vm v;
    memset(&v, 0, sizeof v);
    v.vm = &vm;
    v.power_state = "deallocated";
    v.n_disks = 2;
    v.disks = disks;
    struct tw_error err = {0};
    if (tw_store_arm_vm_put(f->st, &v, "2026-12-01T00:00:00Z", NULL, NULL, &f->vm_id, &err) !=
        TW_OK)
        fail_msg("%s", err.msg);
    struct tw_store_disk_row *rows = NULL;
    size_t n = 0;
    if (tw_store_vm_disks(f->st, f->vm_id, &rows, &n, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    f->d1 = rows[0].id;
    f->d2 = rows[1].id;
    free(rows);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    f->dir = th_tmpdir();
    th_store_location(f->dir, "exec.db", f->path, sizeof f->path);
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    put_fleet(f);
    f->arm.d[0] = (struct fdisk){D1_ID, "Premium_LRS", "Reserved", false, 0, -1, 0};
    f->arm.d[1] = (struct fdisk){D2_ID, "Premium_LRS", "Reserved", false, 0, -1, 0};
    snprintf(f->arm.power, sizeof f->arm.power, "deallocated");
    snprintf(f->arm.size, sizeof f->arm.size, "Standard_D4s_v3");
    /* caps: D4s_v3 takes Premium, D4_v3 does not */
    f->cap[0] = (struct tw_vmcap){.vm_size = "Standard_D4_v3", .iops = 6400,
                                  .bytes_per_s = 96000000, .premium = TW_VMCAP_PREMIUM_NO};
    f->cap[1] = (struct tw_vmcap){.vm_size = "Standard_D4s_v3", .iops = 6400,
                                  .bytes_per_s = 96000000, .premium = TW_VMCAP_PREMIUM_YES};
    f->caps.n = 2;
    f->caps.caps = f->cap;
    f->caps.sorted = true;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void sink(void *arg, const struct tw_exec_result *r)
{
    struct fx *f = arg;
    if (f->n_results >= 8)
        return;
    snprintf(f->outcome[f->n_results], 16, "%s", r->outcome);
    snprintf(f->reason[f->n_results], 512, "%s", r->reason);
    snprintf(f->url[f->n_results], 600, "%s", r->url ? r->url : "");
    f->n_results++;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An action due at NOW + DUE_S seconds. */
static int64_t add(struct fx *f, int64_t disk, const char *kind, const char *from, const char *to,
                   int64_t due_s)
{
    char due[40];
    assert_true(tw_rfc3339_format(now_ms() / 1000 + due_s, due, sizeof due));
    struct tw_store_action_new a;
    memset(&a, 0, sizeof a);
    a.disk_id = disk;
    a.kind = kind;
    a.from_sku = from;
    a.to_sku = to;
    a.due_at = due;
    a.policy = "dev";
    a.reason = "test";
    int64_t id = 0;
    struct tw_error err = {0};
    if (tw_store_action_add(f->st, &a, &id, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return id;
}

/* Runs the actions IDS (read from the store) with the fake. */
static struct tw_exec_summary run(struct fx *f, const int64_t *ids, size_t n, bool dry)
{
    struct tw_store_action_row rows[4];
    struct tw_error err = {0};
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++)
        if (tw_store_action_get(f->st, ids[i], &rows[i], &err) != TW_OK)
            fail_msg("%s", err.msg);
    struct tw_exec_sink s = {sink, f};
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = f->path;
    o.arm = &fake_ops;
    o.arm_arg = &f->arm;
    o.arm_url = "http://127.0.0.1:9";
    o.owner = "test";
    o.parallel = 1;
    o.poll_ms = 1;
    o.op_timeout_ms = 2000;
    o.tick_ms = f->tick_ms ? f->tick_ms : 60000;
    o.lease_ms = f->lease_ms;
    o.dry_run = dry;
    o.caps = &f->caps;
    o.sink = &s;
    f->n_results = 0;
    struct tw_exec_summary sum;
    if (tw_exec_run(&o, rows, n, &sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < n; i++)
        free(rows[i].operation_url);
    return sum;
}

static void assert_state(struct fx *f, int64_t id, const char *want, int attempts)
{
    enum tw_action_state s;
    int a = -1;
    struct tw_error err = {0};
    if (tw_store_action_state(f->st, id, &s, &a, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(tw_action_state_name(s), want);
    if (attempts >= 0)
        assert_int_equal(a, attempts);
}

/* ---- the tests ---- */

static void test_downgrade_order(void **state)
{
    struct fx *f = *state;
    f->arm.polls = 2; /* the operation runs two polls */
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 1);
    assert_string_equal(f->arm.d[0].sku, "Standard_LRS");
    assert_state(f, id, "done", 1);
    /* the audit log: planned, checked, sent, verified, done */
    struct tw_store_action_move_row *mv = NULL;
    size_t n = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_moves(f->st, id, &mv, &n, &err), TW_OK);
    const char *want[] = {"planned", "checked", "sent", "verified", "done"};
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(mv[i].to_state, want[i]);
    assert_non_null(strstr(mv[2].detail, "PATCH http://127.0.0.1:9" D1_ID "?api-version="));
    assert_non_null(strstr(mv[2].detail, "{\"sku\":{\"name\":\"Standard_LRS\"}}"));
    free(mv);
    /* the operation URL kept, the original SKU recorded */
    struct tw_store_action_row row;
    assert_int_equal(tw_store_action_get(f->st, id, &row, &err), TW_OK);
    assert_string_equal(row.operation_url, "http://127.0.0.1:1/asyncoperations/1");
    free(row.operation_url);
    char sku[32], tier[16];
    bool found = false;
    assert_int_equal(tw_store_disk_original_get(f->st, f->d1, sku, tier, &found, &err), TW_OK);
    assert_true(found);
    assert_string_equal(sku, "Premium_LRS");
    /* a second run of a finished action sends nothing */
    run(f, &id, 1, false);
    assert_int_equal(f->arm.d[0].patches, 1);
    /* the upgrade back restores it and forgets the original */
    int64_t up = add(f, f->d1, "upgrade", "Standard_LRS", "Premium_LRS", -1);
    s = run(f, &up, 1, false);
    assert_int_equal(s.done, 1);
    assert_string_equal(f->arm.d[0].sku, "Premium_LRS");
    assert_int_equal(tw_store_disk_original_get(f->st, f->d1, sku, tier, &found, &err), TW_OK);
    assert_false(found);
}

static void test_already(void **state)
{
    struct fx *f = *state;
    snprintf(f->arm.d[0].sku, 32, "Standard_LRS");
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_state(f, id, "done", -1);
    assert_non_null(strstr(f->reason[0], "already on the target"));
}

/* An upgrade whose window's downgrade never ran (no original recorded,
 * the disk on the upgrade's SKU): skipped, nothing to restore. */
static void test_upgrade_nothing_to_restore(void **state)
{
    struct fx *f = *state;
    int64_t id = add(f, f->d1, "upgrade", "Standard_LRS", "Premium_LRS", -5);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.skipped, 1);
    assert_int_equal(s.done, 0);
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_state(f, id, "skipped", -1);
    assert_non_null(strstr(f->reason[0], "nothing_to_restore"));
}

/* Each check that skips, with its reason's code. */
static void test_checks_skip(void **state)
{
    struct fx *f = *state;
    int64_t id;
    /* shared */
    f->arm.d[0].shares = 2;
    id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "shared_disk"));
    f->arm.d[0].shares = 0;
    /* hibernated */
    snprintf(f->arm.d[0].state, 16, "Frozen");
    id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -4);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "hibernated"));
    snprintf(f->arm.d[0].state, 16, "Reserved");
    /* bursting */
    f->arm.d[0].bursting = 1;
    id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -3);
    run(f, &id, 1, false);
    assert_non_null(strstr(f->reason[0], "bursting"));
    f->arm.d[0].bursting = 0;
    /* an update in progress */
    f->arm.d[0].updating = true;
    id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -2);
    run(f, &id, 1, false);
    assert_non_null(strstr(f->reason[0], "update_in_progress"));
    f->arm.d[0].updating = false;
    /* not the SKU expected */
    snprintf(f->arm.d[0].sku, 32, "StandardSSD_LRS");
    id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -1);
    run(f, &id, 1, false);
    assert_non_null(strstr(f->reason[0], "sku_changed"));
    assert_state(f, id, "skipped", 0);
    /* an upgrade to Premium on a VM size without Premium storage */
    snprintf(f->arm.size, 32, "Standard_D4_v3");
    id = add(f, f->d1, "upgrade", "StandardSSD_LRS", "Premium_LRS", -1);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "no_premium"));
    /* an upgrade whose VM runs (started out of band) */
    snprintf(f->arm.size, 32, "Standard_D4s_v3");
    snprintf(f->arm.d[0].state, 16, "Attached");
    id = add(f, f->d1, "upgrade", "StandardSSD_LRS", "Premium_LRS", -1);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "vm_running"));
    assert_int_equal(f->arm.d[0].patches, 0);
}

/* A downgrade whose VM runs waits (due moved) until its upgrade is due. */
static void test_wait_then_skip(void **state)
{
    struct fx *f = *state;
    snprintf(f->arm.d[0].state, 16, "Attached");
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    int64_t up = add(f, f->d1, "upgrade", "Standard_LRS", "Premium_LRS", 3600);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.waiting, 1);
    assert_state(f, id, "planned", 0);
    struct tw_store_action_row row;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_get(f->st, id, &row, &err), TW_OK);
    assert_true(row.due_ms > now_ms() + 30000); /* moved a tick later */
    free(row.operation_url);
    (void)up;
    /* the upgrade is due within the tick: skipped */
    int64_t id2 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    add(f, f->d2, "upgrade", "Standard_LRS", "Premium_LRS", 30);
    snprintf(f->arm.d[1].state, 16, "Attached");
    s = run(f, &id2, 1, false);
    assert_int_equal(s.skipped, 1);
    assert_state(f, id2, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "vm_not_deallocated"));
    assert_int_equal(f->arm.d[0].patches + f->arm.d[1].patches, 0);
}

/* Moves ID to sent as a crashed executor would have left it. */
static void leave_sent(struct fx *f, int64_t id)
{
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_claim(f->st, id, "dead", now_ms() - 600000, 1000, NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "dead", "",
                                          &err), TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_CHECKED, TW_ACT_SENT, "dead", "",
                                          &err), TW_OK);
}

static void test_resume_sent(void **state)
{
    struct fx *f = *state;
    /* the PATCH went and the disk is moving: not sent again */
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    leave_sent(f, id);
    f->arm.d[0].updating = true;
    f->arm.pending_disk = &f->arm.d[0];
    snprintf(f->arm.pending, 32, "Standard_LRS");
    f->arm.polls_left = 0;
    /* the disk lands on the target once read back a while */
    struct tw_exec_summary s;
    f->arm.d[0].updating = false;
    snprintf(f->arm.d[0].sku, 32, "Standard_LRS");
    f->arm.pending_disk = NULL;
    s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_state(f, id, "done", 1);
    /* the crash came before the PATCH left: sent once, counted (once the
     * backoff has passed: at once with a tick of 1 ms) */
    int64_t id2 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    leave_sent(f, id2);
    f->tick_ms = 1;
    s = run(f, &id2, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[1].patches, 1);
    assert_state(f, id2, "done", 2);
}

/* A disk still updating when the run resumes: no PATCH, verified once it lands. */
static void test_resume_updating(void **state)
{
    struct fx *f = *state;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    leave_sent(f, id);
    f->arm.d[0].updating = true; /* stays so: the run gives up for now */
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.retry, 1);
    assert_state(f, id, "sent", 1);
    assert_int_equal(f->arm.d[0].patches, 0);
    f->arm.d[0].updating = false;
    snprintf(f->arm.d[0].sku, 32, "Standard_LRS");
    s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 0);
}

static void test_refusals(void **state)
{
    struct fx *f = *state;
    /* throttled: stays sent, sent again next run */
    f->arm.throttle = 1;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.retry, 1);
    assert_state(f, id, "sent", 1);
    /* within the backoff (half a tick after one attempt): not yet */
    s = run(f, &id, 1, false);
    assert_int_equal(s.retry, 1);
    assert_non_null(strstr(f->reason[0], "backing off after 1 attempts"));
    assert_int_equal(f->arm.d[0].patches, 0);
    f->tick_ms = 1;
    s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 1);
    assert_state(f, id, "done", 2);
    /* not allowed (the quota): failed with ARM's code and message */
    f->arm.conflict = 1;
    int64_t id2 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    s = run(f, &id2, 1, false);
    assert_int_equal(s.failed, 1);
    assert_state(f, id2, "failed", 1);
    assert_non_null(strstr(f->reason[0], "OperationNotAllowed: quota of type changes reached"));
    struct tw_store_action_row row;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_get(f->st, id2, &row, &err), TW_OK);
    assert_non_null(strstr(row.reason, "OperationNotAllowed"));
    free(row.operation_url);
}

static void test_held(void **state)
{
    struct fx *f = *state;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_claim(f->st, id, "other", now_ms(), 600000, NULL, &err),
                     TW_OK);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.held, 1);
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_state(f, id, "planned", 0);
}

static void test_dry_run(void **state)
{
    struct fx *f = *state;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    size_t before = 0, after = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_log_count(f->st, id, &before, &err), TW_OK);
    struct tw_exec_summary s = run(f, &id, 1, true);
    assert_int_equal(s.would_send, 1);
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_string_equal(f->arm.d[0].sku, "Premium_LRS");
    assert_state(f, id, "planned", 0);
    assert_int_equal(tw_store_action_log_count(f->st, id, &after, &err), TW_OK);
    assert_int_equal(before, after);
    assert_string_equal(f->url[0], "http://127.0.0.1:9" D1_ID "?api-version=" TW_ARM_DISK_API);
    char sku[32], tier[16];
    bool found = true;
    assert_int_equal(tw_store_disk_original_get(f->st, f->d1, sku, tier, &found, &err), TW_OK);
    assert_false(found);
}

/* vm stop then vm start: deallocate, downgrade; restore, start (last). */
static void test_vm_stop_start(void **state)
{
    struct fx *f = *state;
    snprintf(f->arm.power, 16, "running");
    snprintf(f->arm.d[0].state, 16, "Attached");
    snprintf(f->arm.d[1].state, 16, "Attached");
    struct tw_exec_sink s = {sink, f};
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = f->path;
    o.arm = &fake_ops;
    o.arm_arg = &f->arm;
    o.owner = "test";
    o.poll_ms = 1;
    o.op_timeout_ms = 2000;
    o.caps = &f->caps;
    o.sink = &s;
    struct tw_exec_stop_disk t[2] = {{f->d1, "Standard_LRS", NULL}, {f->d2, NULL, NULL}};
    struct tw_exec_summary sum;
    struct tw_error err = {0};
    if (tw_exec_vm_stop(&o, f->vm_id, t, 2, &sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(f->arm.power, "deallocated");
    assert_string_equal(f->arm.d[0].sku, "Standard_LRS");
    assert_string_equal(f->arm.d[1].sku, "Premium_LRS");
    assert_int_equal(sum.done, 2);
    /* a start refused: the restore fails, the VM stays deallocated */
    f->arm.conflict = 1;
    assert_int_equal(tw_exec_vm_start(&o, f->vm_id, true, &sum, NULL, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "data1"));
    assert_string_equal(f->arm.power, "deallocated");
    /* then the start that works */
    if (tw_exec_vm_start(&o, f->vm_id, true, &sum, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(f->arm.d[0].sku, "Premium_LRS");
    assert_string_equal(f->arm.power, "running");
    /* the audit log: deallocate, downgrade, upgrade (failed), upgrade, start */
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    struct tw_store_action_filter fl = {0};
    fl.vm = "VM1";
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, NULL, &err), TW_OK);
    assert_int_equal(n, 5);
    const char *kinds[] = {"deallocate", "downgrade", "upgrade", "upgrade", "start"};
    const char *states[] = {"done", "done", "failed", "done", "done"};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].kind, kinds[i]);
        assert_string_equal(rows[i].state, states[i]);
    }
    tw_store_action_rows_free(rows, n);
}

/* ARM's quota (2 type changes in any 24 h, anyone's, from the SKU history):
 * a downgrade that would be the third is skipped, an upgrade waits. */
static void observe(struct fx *f, int64_t disk, const char *sku, int64_t ago_s)
{
    char at[40];
    assert_true(tw_rfc3339_format(now_ms() / 1000 - ago_s, at, sizeof at));
    struct tw_error err = {0};
    if (tw_store_sku_observe(f->st, disk, sku, "", 128, at, TW_OBS_ARM, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void test_quota(void **state)
{
    struct fx *f = *state;
    /* someone changed data1 twice this morning */
    observe(f, f->d1, "StandardSSD_LRS", 7200);
    observe(f, f->d1, "Premium_LRS", 3600);
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "quota"));
    /* on Standard (another change), an upgrade back waits for the quota */
    observe(f, f->d2, "StandardSSD_LRS", 7200);
    observe(f, f->d2, "Standard_LRS", 3600);
    snprintf(f->arm.d[1].sku, 32, "Standard_LRS");
    int64_t up = add(f, f->d2, "upgrade", "Standard_LRS", "Premium_LRS", -5);
    struct tw_exec_summary s = run(f, &up, 1, false);
    assert_int_equal(s.waiting, 1);
    assert_state(f, up, "planned", 0);
    assert_non_null(strstr(f->reason[0], "the next change is allowed after"));
    assert_int_equal(f->arm.d[0].patches + f->arm.d[1].patches, 0);
}

/* Changes older than a day and the margin do not count. */
static void test_quota_old(void **state)
{
    struct fx *f = *state;
    observe(f, f->d1, "StandardSSD_LRS", 2 * 86400);
    observe(f, f->d1, "Premium_LRS", 86400 + 600);
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_int_equal(f->arm.d[0].patches, 1);
}

/* A claim lost while an operation is waited on (the lease ran out and
 * another executor took the action): the run stops touching it. */
static void test_lost_claim(void **state)
{
    struct fx *f = *state;
    f->arm.polls = 50;
    f->lease_ms = 100;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    f->arm.steal_st = f->st;
    f->arm.steal_id = id;
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.retry, 1);
    assert_non_null(strstr(f->reason[0], "claim could not be renewed"));
    assert_state(f, id, "sent", 1);
    struct tw_store_action_row row;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_get(f->st, id, &row, &err), TW_OK);
    assert_string_equal(row.claim_owner, "thief");
    free(row.operation_url);
}


/* ---- round 12 ---- */

/* An action moved to sent without an operation (a crash after the POST). */
static int64_t add_sent(struct fx *f, int64_t disk, const char *kind, const char *from,
                        const char *to)
{
    char due[40];
    assert_true(tw_rfc3339_format(now_ms() / 1000 - 60, due, sizeof due));
    struct tw_store_action_new an;
    memset(&an, 0, sizeof an);
    an.disk_id = disk;
    an.vm_id = f->vm_id;
    an.kind = kind;
    an.from_sku = from;
    an.to_sku = to;
    an.due_at = due;
    an.policy = "dev";
    an.reason = "test";
    int64_t id = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_add(f->st, &an, &id, &err), TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "dead",
                                          "checks passed", &err), TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_CHECKED, TW_ACT_SENT, "dead",
                                          "POST ...", &err), TW_OK);
    return id;
}

/* A resumed start or deallocation whose VM is on its way (starting,
 * deallocating, stopping) is verified, never POSTed again; a refusal of a
 * resend fails the action instead of retrying forever. */
static void test_resume_vm_moving(void **state)
{
    struct fx *f = *state;
    f->arm.vm_stays = true;
    int64_t id = add_sent(f, 0, "start", NULL, NULL);
    int64_t dl[2] = {add_sent(f, 0, "deallocate", NULL, NULL),
                     add_sent(f, 0, "deallocate", NULL, NULL)};
    int64_t st2 = add_sent(f, 0, "start", NULL, NULL);
    f->tick_ms = 2; /* no backoff in the way of a resend */
    struct timespec ts = {1, 100 * 1000000L};
    nanosleep(&ts, NULL);
    snprintf(f->arm.power, 16, "starting");
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(f->arm.vm_posts, 0);
    assert_int_equal(s.retry, 1); /* still starting after the run's wait */
    assert_state(f, id, "sent", 1); /* the crashed send only */
    snprintf(f->arm.power, 16, "running");
    s = run(f, &id, 1, false);
    assert_int_equal(f->arm.vm_posts, 0);
    assert_int_equal(s.done, 1);
    for (int k = 0; k < 2; k++) {
        snprintf(f->arm.power, 16, "%s", k ? "stopping" : "deallocating");
        s = run(f, &dl[k], 1, false);
        assert_int_equal(f->arm.vm_posts, 0);
        assert_int_equal(s.retry, 1);
        assert_state(f, dl[k], "sent", 1);
    }
    /* the VM never went: resent, and a refusal fails it */
    snprintf(f->arm.power, 16, "deallocated");
    f->arm.vm_refuse = true;
    s = run(f, &st2, 1, false);
    assert_int_equal(s.failed, 1);
    assert_state(f, st2, "failed", -1);
    assert_non_null(strstr(f->reason[0], "OperationNotAllowed"));
}

/* Two runs of one process with the same owner prefix (the scheduler and
 * POST /api/v1/actions) resuming one sent downgrade: one PATCH. */
static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static enum tw_err m_disk_get(void *ctx, const char *id, struct tw_arm_disk *d, struct tw_error *e)
{
    pthread_mutex_lock(&fake_mu);
    enum tw_err rc = f_disk_get(ctx, id, d, e);
    pthread_mutex_unlock(&fake_mu);
    return rc;
}
static enum tw_err m_vm_get(void *ctx, const char *id, struct tw_arm_vm *vm, struct tw_error *e)
{
    pthread_mutex_lock(&fake_mu);
    enum tw_err rc = f_vm_get(ctx, id, vm, e);
    pthread_mutex_unlock(&fake_mu);
    return rc;
}
static enum tw_err m_set_sku(void *ctx, const char *id, const char *sku, struct tw_arm_op *op,
                             struct tw_error *e)
{
    struct timespec ts = {0, 300 * 1000000L}; /* ARM takes its time to accept */
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&fake_mu);
    enum tw_err rc = f_set_sku(ctx, id, sku, op, e);
    pthread_mutex_unlock(&fake_mu);
    return rc;
}
static enum tw_err m_verify(void *ctx, const char *id, const char *sku, bool *okp,
                            struct tw_arm_disk *d, struct tw_error *e)
{
    pthread_mutex_lock(&fake_mu);
    enum tw_err rc = f_verify(ctx, id, sku, okp, d, e);
    pthread_mutex_unlock(&fake_mu);
    return rc;
}
static const struct tw_exec_arm_ops locked_ops = {f_open,   f_close,  m_disk_get, m_vm_get,
                                                  m_set_sku, f_dealloc, f_start,   f_poll,
                                                  m_verify, f_last};
struct two_arg {
    struct fx *f;
    int64_t id;
};
static int held_runs;
static void quiet_sink(void *arg, const struct tw_exec_result *r)
{
    (void)arg;
    if (!strcmp(r->outcome, "held"))
        __atomic_add_fetch(&held_runs, 1, __ATOMIC_RELAXED);
}
static void *two_run(void *p)
{
    struct two_arg *t = p;
    struct tw_store *st = NULL;
    struct tw_error e = {0};
    struct tw_store_action_row row;
    memset(&row, 0, sizeof row);
    pthread_mutex_lock(&fake_mu);
    if (tw_store_open(t->f->path, &st, &e) == TW_OK)
        tw_store_action_get(st, t->id, &row, &e);
    tw_store_close(st);
    pthread_mutex_unlock(&fake_mu);
    struct tw_exec_sink s = {quiet_sink, NULL};
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = t->f->path;
    o.arm = &locked_ops;
    o.arm_arg = &t->f->arm;
    o.owner = "test";
    o.parallel = 1;
    o.poll_ms = 1;
    o.op_timeout_ms = 300;
    o.tick_ms = 2; /* no backoff in the way */
    o.sink = &s;
    struct tw_exec_summary sum;
    tw_exec_run(&o, &row, 1, &sum, &e);
    free(row.operation_url);
    return NULL;
}
static void test_two_runs_one_owner(void **state)
{
    struct fx *f = *state;
    int64_t id = add_sent(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS");
    struct timespec ts = {1, 100 * 1000000L}; /* past the tiny backoff of updated_at */
    nanosleep(&ts, NULL);
    struct two_arg t = {f, id};
    held_runs = 0;
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, two_run, &t), 0);
    assert_int_equal(pthread_create(&b, NULL, two_run, &t), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(f->arm.d[0].patches, 1);
    assert_state(f, id, "done", 2); /* the crashed send and the one resend */
    /* the other run found the action claimed by the first (or finished) */
    assert_int_equal(held_runs, 1);
}

/* vm start judges each disk not restored by the policy of the downgrade
 * that recorded its original: a relaxed policy's disk lets the VM start
 * (and says so); the default's does not (test_vm_stop_start). */
static void test_start_per_disk_policy(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    const char *relaxed =
        "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"relaxed\", \"match\": "
        "{\"resource_groups\": [\"rg1\"]}, \"require_original_before_start\": false, "
        "\"target\": \"Standard_LRS\", \"windows\": [\"Fri 20:00-Mon 06:00\"], "
        "\"timezone\": \"UTC\"}";
    assert_int_equal(tw_store_policy_put(f->st, "relaxed", relaxed, &err), TW_OK);
    /* data1 downgraded under "relaxed", data2 under "dev" (not stored: the default) */
    int64_t a1 = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    int64_t a2 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    struct tw_store_action_new an;
    memset(&an, 0, sizeof an);
    char due[40];
    assert_true(tw_rfc3339_format(now_ms() / 1000 - 5, due, sizeof due));
    an.disk_id = f->d1;
    an.kind = "downgrade";
    an.from_sku = "Premium_LRS";
    an.to_sku = "Standard_LRS";
    an.due_at = due;
    an.policy = "relaxed";
    an.reason = "test";
    /* a1 is skipped by a1r's order: record the relaxed one first */
    int64_t a1r = 0;
    assert_int_equal(tw_store_action_add(f->st, &an, &a1r, &err), TW_OK);
    int64_t ids[2] = {a1r, a2};
    run(f, ids, 2, false);
    assert_state(f, a1r, "done", 1);
    assert_state(f, a2, "done", 1);
    (void)a1; /* a later downgrade of data1 (planned, never sent) does not count */
    struct tw_exec_sink s = {sink, f};
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = f->path;
    o.arm = &fake_ops;
    o.arm_arg = &f->arm;
    o.owner = "test";
    o.poll_ms = 1;
    o.op_timeout_ms = 2000;
    o.caps = &f->caps;
    o.sink = &s;
    struct tw_exec_summary sum;
    struct tw_exec_start_info info;
    f->arm.conflict = 1; /* data1's restore refused */
    if (tw_exec_vm_start(&o, f->vm_id, true, &sum, &info, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_true(info.started);
    assert_non_null(strstr(info.why, "data1"));
    assert_non_null(strstr(info.why, "policy relaxed allows a start without it"));
    assert_string_equal(f->arm.power, "running");
    assert_string_equal(f->arm.d[0].sku, "Standard_LRS");
    assert_string_equal(f->arm.d[1].sku, "Premium_LRS");
}

static bool original_of(struct fx *f, int64_t disk, char *sku)
{
    char tier[16];
    bool found = false;
    struct tw_error err = {0};
    if (tw_store_disk_original_get(f->st, disk, sku, tier, &found, &err) != TW_OK)
        fail_msg("%s", err.msg);
    return found;
}

/* A downgrade that failed before its PATCH took effect leaves no original
 * SKU behind (the disk never moved); a failed operation's reason is its own
 * error, not the poll's "(HTTP 200)". */
static void test_failed_downgrade_no_original(void **state)
{
    struct fx *f = *state;
    char sku[32];
    f->arm.conflict = 1; /* refused at the send */
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id, 1, false);
    assert_state(f, id, "failed", 1);
    assert_false(original_of(f, f->d1, sku));
    /* accepted, then the operation failed: the disk stays on Premium */
    f->arm.lazy = true;
    f->arm.fail_op = true;
    int64_t id2 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id2, 1, false);
    assert_state(f, id2, "failed", 1);
    assert_non_null(strstr(f->reason[0], "operation failed: InternalDiskManagementError: the disk "
                                         "could not be updated"));
    assert_null(strstr(f->reason[0], "HTTP 200"));
    assert_string_equal(f->arm.d[1].sku, "Premium_LRS");
    assert_false(original_of(f, f->d2, sku));
    /* one that switched keeps it */
    f->arm.lazy = false;
    int64_t id3 = add(f, f->d2, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id3, 1, false);
    assert_state(f, id3, "done", 1);
    assert_true(original_of(f, f->d2, sku));
    assert_string_equal(sku, "Premium_LRS");
}

/* An upgrade goes to the recorded original, never to a plan's stale SKU. */
static void test_upgrade_to_original(void **state)
{
    struct fx *f = *state;
    char sku[32];
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id, 1, false);
    assert_true(original_of(f, f->d1, sku));
    /* a saved plan says StandardSSD_LRS: a dry run shows the original */
    int64_t up = add(f, f->d1, "upgrade", "Standard_LRS", "StandardSSD_LRS", -5);
    struct tw_exec_summary s = run(f, &up, 1, true);
    assert_int_equal(s.would_send, 1);
    assert_non_null(strstr(f->url[0], "disks/data1"));
    assert_non_null(strstr(f->reason[0], "to the original SKU Premium_LRS"));
    s = run(f, &up, 1, false);
    assert_int_equal(s.done, 1);
    assert_string_equal(f->arm.d[0].sku, "Premium_LRS");
    assert_false(original_of(f, f->d1, sku));
    struct tw_store_action_move_row *mv = NULL;
    size_t n = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_action_moves(f->st, up, &mv, &n, &err), TW_OK);
    bool said = false;
    for (size_t i = 0; i < n; i++)
        said = said || strstr(mv[i].detail, "not the plan's StandardSSD_LRS") != NULL;
    free(mv);
    assert_true(said);
}

/* A disk on Premium is not downgraded when its VM size can't take Premium
 * (the way back would be refused): skipped before any PATCH. */
static void test_no_way_back(void **state)
{
    struct fx *f = *state;
    char sku[32];
    snprintf(f->arm.size, 32, "Standard_D4_v3");
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    run(f, &id, 1, false);
    assert_state(f, id, "skipped", 0);
    assert_non_null(strstr(f->reason[0], "no_premium"));
    assert_non_null(strstr(f->reason[0], "could not be moved back to Premium_LRS"));
    assert_int_equal(f->arm.d[0].patches, 0);
    assert_false(original_of(f, f->d1, sku));
}

/* After a verified deallocation and start the store has the VM's power
 * state (source arm); after a switch, the disk's state. */
static void test_power_recorded(void **state)
{
    struct fx *f = *state;
    snprintf(f->arm.power, 16, "running");
    snprintf(f->arm.d[0].state, 16, "Attached");
    snprintf(f->arm.d[1].state, 16, "Attached");
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = f->path;
    o.arm = &fake_ops;
    o.arm_arg = &f->arm;
    o.owner = "test";
    o.poll_ms = 1;
    o.op_timeout_ms = 2000;
    o.caps = &f->caps;
    struct tw_exec_stop_disk t[1] = {{f->d1, "Standard_LRS", "dev"}};
    struct tw_exec_summary sum;
    struct tw_error err = {0};
    if (tw_exec_vm_stop(&o, f->vm_id, t, 1, &sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
    struct tw_store_vm_row vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(tw_store_vm(f->st, f->vm_id, &vm, &err), TW_OK);
    assert_string_equal(vm.power_state, "deallocated");
    free(vm.tags);
    /* the actions carry the policy that chose the target */
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    struct tw_store_action_filter fl = {0};
    fl.vm = "vm1";
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, NULL, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].policy, "dev");
    assert_string_equal(rows[1].policy, "dev");
    tw_store_action_rows_free(rows, n);
    if (tw_exec_vm_start(&o, f->vm_id, true, &sum, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    memset(&vm, 0, sizeof vm);
    assert_int_equal(tw_store_vm(f->st, f->vm_id, &vm, &err), TW_OK);
    assert_string_equal(vm.power_state, "running");
    free(vm.tags);
}

/* A dry run of vm stop on a running VM: the disks' PATCHes would follow
 * the deallocation (not "waiting" for it). */
static void test_dry_stop_running(void **state)
{
    struct fx *f = *state;
    snprintf(f->arm.power, 16, "running");
    snprintf(f->arm.d[0].state, 16, "Attached");
    struct tw_exec_sink s = {sink, f};
    struct tw_exec_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = f->path;
    o.arm = &fake_ops;
    o.arm_arg = &f->arm;
    o.owner = "test";
    o.poll_ms = 1;
    o.dry_run = true;
    o.caps = &f->caps;
    o.sink = &s;
    struct tw_exec_stop_disk t[1] = {{f->d1, "Standard_LRS", NULL}};
    struct tw_exec_summary sum;
    struct tw_error err = {0};
    f->n_results = 0;
    if (tw_exec_vm_stop(&o, f->vm_id, t, 1, &sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(sum.would_send, 2);
    assert_int_equal(f->n_results, 2);
    assert_string_equal(f->outcome[1], "would_send");
    assert_non_null(strstr(f->reason[1], "after the deallocation"));
    assert_string_equal(f->arm.power, "running");
}

/* The default lease outlives one ARM call's whole retry budget (90 s)
 * plus a poll's wait (60 s) twice over: 10 minutes. */
static void test_default_lease(void **state)
{
    struct fx *f = *state;
    f->arm.polls = 1;
    int64_t id = add(f, f->d1, "downgrade", "Premium_LRS", "Standard_LRS", -5);
    f->arm.probe_st = f->st;
    f->arm.probe_id = id;
    struct tw_exec_summary s = run(f, &id, 1, false);
    assert_int_equal(s.done, 1);
    assert_true(f->arm.probe_left_ms > 590000);
    assert_true(f->arm.probe_left_ms <= 600000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_downgrade_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_already, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_nothing_to_restore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checks_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_then_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_updating, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vm_stop_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quota_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_vm_moving, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_runs_one_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_per_disk_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_downgrade_no_original, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_to_original, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_way_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_power_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_stop_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_lease, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
