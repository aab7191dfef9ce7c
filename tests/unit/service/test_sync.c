/* test_sync.c - the fleet from ARM (service/sync.c) against a fake ARM:
 * VMs and their disks grouped by managedBy or by the storage profile, the
 * OS disk's role and the LUNs from the profile, an unattached disk counted
 * and not stored, a disk of a VM out of scope left alone, the counts and
 * the JSON, a second sync that changes nothing, a SKU changed, and ARM's
 * refusals told apart. */
#include "testhelp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/sync.h"
#include "store/store.h"
#include "th_store.h"

#define SUB "3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f"
#define RG "/subscriptions/" SUB "/resourceGroups/rg-dev/providers/Microsoft.Compute/"

struct fake {
    struct tw_arm_disk disks[8];
    size_t n_disks;
    struct tw_arm_vm vms[3];
    size_t n_vms;
    struct tw_arm_error last;
    enum tw_err fail;          /* answer the lists with this (and LAST) */
    int lists;
    int vm_lists;
    int stop_on_list;          /* the VM list of this call sees dev-01 stopped (0: never) */
    int repeat;                /* the disk list gives its first disk this many times more */
    int disks_given;
    const char *hide;          /* a disk the list of a resource group omits (another group's) */
    enum tw_err get_fail;      /* disk_get answers this (0: the disk) */
    int gets;
};

static struct fake *fk;       /* the fixture's, large: on the heap */

static enum tw_err f_disks(void *ctx, const char *sub, const char *rg,
                           enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d), void *arg,
                           struct tw_error *err)
{
    struct fake *f = ctx;
    (void)rg;
    f->lists++;
    assert_string_equal(sub, SUB);
    if (f->fail)
        return tw_error_set(err, f->fail, "ARM answered %ld", f->last.status);
    for (size_t i = 0; i < f->n_disks + (size_t)f->repeat; i++) {
        if (rg && f->hide && strcmp(f->disks[i < f->n_disks ? i : 0].name, f->hide) == 0)
            continue;
        f->disks_given++;
        enum tw_err rc = fn(arg, &f->disks[i < f->n_disks ? i : 0]);
        if (rc != TW_OK)
            return rc;
    }
    return TW_OK;
}

static enum tw_err f_vms(void *ctx, const char *sub, const char *rg,
                         enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm), void *arg,
                         struct tw_error *err)
{
    struct fake *f = ctx;
    (void)sub;
    (void)rg;
    (void)err;
    if (++f->vm_lists == f->stop_on_list)
        snprintf(f->vms[0].power_state, sizeof(f->vms[0].power_state), "deallocated");
    for (size_t i = 0; i < f->n_vms; i++) {
        enum tw_err rc = fn(arg, &f->vms[i]);
        if (rc != TW_OK)
            return rc;
    }
    return TW_OK;
}

static enum tw_err f_disk_get(void *ctx, const char *id, struct tw_arm_disk *d,
                              struct tw_error *err)
{
    struct fake *f = ctx;
    f->gets++;
    if (f->get_fail)
        return tw_error_set(err, f->get_fail, "ARM answered %s",
                            f->get_fail == TW_ENOENT ? "404" : "503");
    for (size_t i = 0; i < f->n_disks; i++) {
        if (tw_arm_id_equal(f->disks[i].id, id)) {
            *d = f->disks[i];
            return TW_OK;
        }
    }
    return tw_error_set(err, TW_ENOENT, "no disk %s", id);
}

static const struct tw_arm_error *f_last(void *ctx)
{
    return &((struct fake *)ctx)->last;
}

static void disk(const char *name, const char *owner, const char *sku, const char *tier,
                 int64_t size, const char *state)
{
    struct tw_arm_disk *d = &fk->disks[fk->n_disks++];
    memset(d, 0, sizeof(*d));
    snprintf(d->id, sizeof(d->id), RG "disks/%s", name);
    snprintf(d->name, sizeof(d->name), "%s", name);
    snprintf(d->sku, sizeof(d->sku), "%s", sku);
    snprintf(d->tier, sizeof(d->tier), "%s", tier);
    d->size_gib = size;
    if (owner)
        snprintf(d->managed_by, sizeof(d->managed_by), RG "virtualMachines/%s", owner);
    snprintf(d->disk_state, sizeof(d->disk_state), "%s", state);
    d->max_shares = 1;
    d->bursting = -1;
    snprintf(d->last_ownership_update, sizeof(d->last_ownership_update),
             "2026-12-04T19:00:00Z");
}

static struct tw_arm_vm *vm(const char *name, const char *power)
{
    struct tw_arm_vm *v = &fk->vms[fk->n_vms++];
    memset(v, 0, sizeof(*v));
    snprintf(v->vm.name, sizeof(v->vm.name), "%s", name);
    snprintf(v->vm.resource_id, sizeof(v->vm.resource_id), RG "virtualMachines/%s", name);
    snprintf(v->vm.subscription_id, sizeof(v->vm.subscription_id), SUB);
    snprintf(v->vm.resource_group, sizeof(v->vm.resource_group), "rg-dev");
    snprintf(v->vm.location, sizeof(v->vm.location), "westeurope");
    snprintf(v->vm.vm_size, sizeof(v->vm.vm_size), "Standard_D8s_v3");
    snprintf(v->power_state, sizeof(v->power_state), "%s", power);
    snprintf(v->os_disk_id, sizeof(v->os_disk_id), RG "disks/%s-os", name);
    snprintf(v->os_disk_name, sizeof(v->os_disk_name), "%s-os", name);
    snprintf(v->os_disk_caching, sizeof(v->os_disk_caching), "ReadWrite");
    return v;
}

static void data(struct tw_arm_vm *v, const char *name, int lun)
{
    size_t k = v->n_data++;
    snprintf(v->data[k].id, sizeof(v->data[k].id), RG "disks/%s", name);
    snprintf(v->data[k].name, sizeof(v->data[k].name), "%s", name);
    snprintf(v->data[k].caching, sizeof(v->data[k].caching), "ReadOnly");
    v->data[k].lun = lun;
}

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tierwise.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    fk = calloc(1, sizeof(*fk));
    /* dev-01 running (OS + two data disks), dev-02 deallocated (OS + one
     * data disk the list shows without managedBy, its profile names it),
     * an unattached disk, and a disk of a VM the scope does not list. */
    struct tw_arm_vm *a = vm("dev-01", "running");
    data(a, "dev-01-data0", 0);
    data(a, "dev-01-data1", 1);
    struct tw_arm_vm *b = vm("dev-02", "deallocated");
    data(b, "dev-02-data0", 3);
    disk("dev-01-os", "dev-01", "Premium_LRS", "P10", 128, "Attached");
    disk("dev-01-data0", "DEV-01", "Premium_LRS", "P30", 1024, "Attached");
    disk("dev-01-data1", "dev-01", "Premium_LRS", "P20", 512, "Attached");
    disk("dev-02-os", "dev-02", "Premium_LRS", "P10", 128, "Reserved");
    disk("dev-02-data0", NULL, "Premium_LRS", "P30", 1024, "Reserved");
    disk("spare-01", NULL, "Standard_LRS", "S10", 128, "Unattached");
    disk("elsewhere-data0", "elsewhere", "Premium_LRS", "P10", 128, "Attached");
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
    free(fk);
    fk = NULL;
    return 0;
}

static enum tw_err run(struct fx *f, const char *at, struct tw_sync_summary *s,
                       struct tw_error *err)
{
    static const char *const subs[] = {SUB};
    struct tw_sync_opts o = {.st = f->st,
                             .arm = {.disks_list = f_disks, .vms_list = f_vms,
                                     .last_error = f_last, .ctx = fk},
                             .subscriptions = subs, .n_subscriptions = 1, .observed_at = at};
    return tw_sync_run(&o, s, err);
}

static void test_first_and_second(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_sync_summary s;
    assert_int_equal(run(f, "2026-12-05T20:00:00Z", &s, &err), TW_OK);
    assert_int_equal(s.vms, 2);
    assert_int_equal(s.vms_new, 2);
    assert_int_equal(s.disks, 5);
    assert_int_equal(s.disks_new, 5);
    assert_int_equal(s.power_changes, 2);
    assert_int_equal(s.sku_changes, 0);
    assert_int_equal(s.detached, 0);
    assert_int_equal(s.unattached_disks, 1); /* spare-01; elsewhere-data0 is not ours */
    json_t *j = tw_sync_summary_json(&s);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "unattached_disks")), 1);
    assert_int_equal(json_array_size(json_object_get(j, "changes")), s.n_changes);
    json_t *first = json_array_get(json_object_get(j, "changes"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "what")), "vm_new");
    assert_string_equal(json_string_value(json_object_get(first, "vm")), "dev-01");
    assert_true(json_is_null(json_object_get(first, "disk")));
    json_decref(j);
    tw_sync_summary_free(&s);

    /* The store's rows: roles, LUNs and caching from the profiles. */
    int64_t id;
    assert_int_equal(tw_store_vm_by_name(f->st, "dev-02", &id, &err), TW_OK);
    struct tw_store_vm_row row;
    assert_int_equal(tw_store_vm(f->st, id, &row, &err), TW_OK);
    assert_string_equal(row.power_state, "deallocated");
    assert_string_equal(row.last_report_at, "");
    assert_int_equal(row.n_disks, 2);
    free(row.tags);
    struct tw_store_disk_row *d;
    size_t n;
    assert_int_equal(tw_store_vm_disks(f->st, id, &d, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    /* By LUN: the OS disk (no LUN) first. */
    assert_string_equal(d[0].disk.name, "dev-02-os");
    assert_int_equal(d[0].disk.role, TW_DISK_OS);
    assert_int_equal(d[0].disk.caching, TW_CACHE_READWRITE);
    assert_string_equal(d[1].disk.name, "dev-02-data0");
    assert_int_equal(d[1].disk.role, TW_DISK_DATA);
    assert_int_equal(d[1].disk.lun, 3);
    assert_int_equal(d[1].disk.caching, TW_CACHE_READONLY);
    free(d);

    /* Again, nothing changed in ARM: nothing changes in the store. */
    assert_int_equal(run(f, "2026-12-05T20:05:00Z", &s, &err), TW_OK);
    assert_int_equal(s.vms, 2);
    assert_int_equal(s.disks, 5);
    assert_int_equal(s.n_changes, 0);
    tw_sync_summary_free(&s);

    /* Someone switched dev-01-data1 to Standard SSD and detached data0. */
    snprintf(fk->disks[2].sku, sizeof(fk->disks[2].sku), "StandardSSD_LRS");
    snprintf(fk->disks[2].tier, sizeof(fk->disks[2].tier), "E20");
    fk->disks[1].managed_by[0] = '\0';
    fk->vms[0].n_data = 1;
    memmove(&fk->vms[0].data[0], &fk->vms[0].data[1], sizeof(fk->vms[0].data[0]));
    assert_int_equal(run(f, "2026-12-05T20:10:00Z", &s, &err), TW_OK);
    assert_int_equal(s.sku_changes, 1);
    assert_int_equal(s.detached, 1);
    assert_int_equal(s.unattached_disks, 2);
    bool saw = false;
    for (size_t i = 0; i < s.n_changes; i++)
        if (strcmp(s.changes[i].what, "sku") == 0) {
            assert_string_equal(s.changes[i].disk, "dev-01-data1");
            assert_string_equal(s.changes[i].from, "Premium_LRS");
            assert_string_equal(s.changes[i].to, "StandardSSD_LRS");
            saw = true;
        }
    assert_true(saw);
    tw_sync_summary_free(&s);
}

static void test_refusals(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_sync_summary s;
    fk->fail = TW_EIO;
    fk->last = (struct tw_arm_error){.status = 403, .fault = TW_ARM_FAULT_AUTH};
    snprintf(fk->last.code, sizeof(fk->last.code), "AuthorizationFailed");
    assert_int_equal(run(f, NULL, &s, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "deploy/azure-role.json"));
    assert_non_null(strstr(err.msg, "403 AuthorizationFailed"));
    tw_sync_summary_free(&s);
    fk->last = (struct tw_arm_error){.status = 404, .fault = TW_ARM_FAULT_NOT_FOUND};
    assert_int_equal(run(f, NULL, &s, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, SUB));
    tw_sync_summary_free(&s);
    fk->last = (struct tw_arm_error){.status = 0, .fault = TW_ARM_FAULT_NETWORK};
    assert_int_equal(run(f, NULL, &s, &err), TW_EIO);
    tw_sync_summary_free(&s);
    /* A subscription that is no GUID: refused before anything is sent. */
    fk->lists = 0;
    static const char *const bad[] = {"my-subscription"};
    struct tw_sync_opts o = {.st = f->st,
                             .arm = {.disks_list = f_disks, .vms_list = f_vms,
                                     .last_error = f_last, .ctx = fk},
                             .subscriptions = bad, .n_subscriptions = 1};
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "my-subscription"));
    static const char *const subs[] = {SUB}, *const groups[] = {"rg dev"};
    o.subscriptions = subs;
    o.resource_groups = groups;
    o.n_resource_groups = 1;
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_EINVAL);
    assert_int_equal(fk->lists, 0);
    assert_true(tw_sync_subscription_valid("3F2B8C1E-7D4A-4E5B-9C6D-0A1B2C3D4E5F"));
    assert_false(tw_sync_subscription_valid("3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5"));
    /* The store stayed empty. */
    struct tw_store_vm_row *rows;
    size_t n;
    assert_int_equal(tw_store_vms(f->st, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    tw_store_vm_rows_free(rows, n);
}

/* Two resource groups (the fake lists the same VMs for each): the second
 * scope's change lands in the same summary after the first's. */
static void test_two_scopes(void **state)
{
    struct fx *f = *state;
    static const char *const subs[] = {SUB}, *const groups[] = {"rg-a", "rg-b"};
    fk->stop_on_list = 2;
    struct tw_sync_opts o = {.st = f->st,
                             .arm = {.disks_list = f_disks, .vms_list = f_vms,
                                     .last_error = f_last, .ctx = fk},
                             .subscriptions = subs, .n_subscriptions = 1,
                             .resource_groups = groups, .n_resource_groups = 2,
                             .observed_at = "2026-12-05T20:00:00Z"};
    struct tw_sync_summary s;
    struct tw_error err = {0};
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_OK);
    assert_int_equal(fk->lists, 2);
    assert_int_equal(s.vms, 4);
    assert_int_equal(s.vms_new, 2);
    assert_int_equal(s.power_changes, 3);
    const struct tw_sync_change *last = &s.changes[s.n_changes - 1];
    assert_string_equal(last->what, "power");
    assert_string_equal(last->vm, "dev-01");
    assert_string_equal(last->from, "running");
    assert_string_equal(last->to, "deallocated");
    tw_sync_summary_free(&s);
}

/* The attached disk NAME's SKU ("" when it is not attached). */
static void attached_sku(struct fx *f, const char *name, char *out, size_t cap)
{
    struct tw_store_disk_row *rows;
    size_t n;
    struct tw_error err = {0};
    assert_int_equal(tw_store_disks(f->st, &rows, &n, &err), TW_OK);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].disk.name, name) == 0)
            snprintf(out, cap, "%s", rows[i].disk.sku);
    free(rows);
}

/* A resource group sync of a VM whose data disk lives in another group:
 * the disk is read by its id (the store gets its SKU), not detached; when
 * the read fails or there is no reader it stays as stored; only a 404
 * detaches it. */
static void test_group_scope_keeps_other_groups_disks(void **state)
{
    struct fx *f = *state;
    static const char *const subs[] = {SUB}, *const groups[] = {"rg-dev"};
    struct tw_sync_summary s;
    struct tw_error err = {0};
    assert_int_equal(run(f, "2026-12-05T20:00:00Z", &s, &err), TW_OK);
    tw_sync_summary_free(&s);
    fk->hide = "dev-01-data1";
    snprintf(fk->disks[2].sku, sizeof(fk->disks[2].sku), "StandardSSD_LRS");
    snprintf(fk->disks[2].tier, sizeof(fk->disks[2].tier), "E20");
    struct tw_sync_opts o = {.st = f->st,
                             .arm = {.disks_list = f_disks, .vms_list = f_vms,
                                     .last_error = f_last, .disk_get = f_disk_get, .ctx = fk},
                             .subscriptions = subs, .n_subscriptions = 1,
                             .resource_groups = groups, .n_resource_groups = 1,
                             .observed_at = "2026-12-05T20:05:00Z"};
    char sku[32];
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_OK);
    assert_int_equal(s.detached, 0);
    assert_int_equal(s.sku_changes, 1);
    assert_int_equal(fk->gets, 1);
    tw_sync_summary_free(&s);
    attached_sku(f, "dev-01-data1", sku, sizeof sku);
    assert_string_equal(sku, "StandardSSD_LRS");
    /* The read fails: the disk stays as stored. */
    fk->get_fail = TW_EIO;
    o.observed_at = "2026-12-05T20:10:00Z";
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_OK);
    assert_int_equal(s.detached, 0);
    tw_sync_summary_free(&s);
    /* No reader at all: the same. */
    o.arm.disk_get = NULL;
    o.observed_at = "2026-12-05T20:15:00Z";
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_OK);
    assert_int_equal(s.detached, 0);
    tw_sync_summary_free(&s);
    attached_sku(f, "dev-01-data1", sku, sizeof sku);
    assert_string_equal(sku, "StandardSSD_LRS");
    /* ARM says it is gone: detached. */
    o.arm.disk_get = f_disk_get;
    fk->get_fail = TW_ENOENT;
    o.observed_at = "2026-12-05T20:20:00Z";
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_OK);
    assert_int_equal(s.detached, 1);
    tw_sync_summary_free(&s);
    attached_sku(f, "dev-01-data1", sku, sizeof sku);
    assert_string_equal(sku, "");
}

static bool always(void *arg)
{
    (void)arg;
    return true;
}

/* A stop asked for (a server stopping): no VM is stored, and a long disk
 * list is left early. */
static void test_stop(void **state)
{
    struct fx *f = *state;
    static const char *const subs[] = {SUB};
    struct tw_sync_opts o = {.st = f->st,
                             .arm = {.disks_list = f_disks, .vms_list = f_vms,
                                     .last_error = f_last, .ctx = fk},
                             .subscriptions = subs, .n_subscriptions = 1, .stopping = always};
    struct tw_sync_summary s;
    struct tw_error err = {0};
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "stopped"));
    assert_int_equal(s.vms, 0);
    tw_sync_summary_free(&s);
    fk->repeat = 1000;
    fk->disks_given = 0;
    assert_int_equal(tw_sync_run(&o, &s, &err), TW_EIO);
    assert_int_equal(fk->disks_given, 256);
    tw_sync_summary_free(&s);
    struct tw_store_vm_row *rows;
    size_t n;
    assert_int_equal(tw_store_vms(f->st, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    tw_store_vm_rows_free(rows, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_and_second, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_scopes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_scope_keeps_other_groups_disks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
