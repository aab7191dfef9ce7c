/* test_arm.c - the fleet from ARM in the store (tw_store_arm_vm_put): a VM
 * no agent reported, created and read like any other; a second look that
 * changes nothing writes nothing; a SKU change and a power change each one
 * history row with source arm; a disk ARM no longer lists detached; ARM's
 * VM and an agent's report joined into one VM whichever came first, by
 * resource id in any case or by subscription, group and name, and their
 * disks by id or by name; the lookups by resource id and by name. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_vm vm;
    struct tw_store_arm_disk disks[3];
    struct tw_store_arm_vm v;
    /* What the last put said changed. */
    int n[8];
    char last_from[64], last_to[64];
};

#define SUB "3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f"
#define RID "/subscriptions/" SUB "/resourceGroups/rg-sap/providers/Microsoft.Compute/"

static void arm_disk(struct tw_store_arm_disk *d, const char *name, enum tw_disk_role role,
                     int lun, const char *sku, const char *tier, int64_t size)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->disk.name, sizeof(d->disk.name), "%s", name);
    d->disk.role = role;
    d->disk.lun = lun;
    snprintf(d->disk.sku, sizeof(d->disk.sku), "%s", sku);
    snprintf(d->disk.tier, sizeof(d->disk.tier), "%s", tier);
    d->disk.size_gib = size;
    d->disk.caching = TW_CACHE_NONE;
    /* ARM's ids come in ARM's case, which need not be the agent's. */
    snprintf(d->disk.managed_disk_id, sizeof(d->disk.managed_disk_id),
             "/SUBSCRIPTIONS/" SUB "/RESOURCEGROUPS/RG-SAP/providers/Microsoft.Compute/disks/%s",
             name);
    d->attrs.max_shares = 1;
    d->attrs.bursting = TW_TRI_NO;
    snprintf(d->attrs.disk_state, sizeof(d->attrs.disk_state), "Reserved");
    d->last_ownership_update = "2026-12-05T20:01:00Z";
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tierwise.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* sap-db-01 as ARM lists it: three of its disks, deallocated. */
    snprintf(f->vm.name, sizeof(f->vm.name), "sap-db-01");
    snprintf(f->vm.resource_id, sizeof(f->vm.resource_id),
             "/subscriptions/" SUB "/resourceGroups/RG-SAP/providers/Microsoft.Compute/"
             "virtualMachines/SAP-DB-01");
    snprintf(f->vm.subscription_id, sizeof(f->vm.subscription_id), SUB);
    snprintf(f->vm.resource_group, sizeof(f->vm.resource_group), "RG-SAP");
    snprintf(f->vm.location, sizeof(f->vm.location), "westeurope");
    snprintf(f->vm.vm_size, sizeof(f->vm.vm_size), "Standard_E16ds_v5");
    f->vm.n_tags = 1;
    snprintf(f->vm.tags[0].key, sizeof(f->vm.tags[0].key), "env");
    snprintf(f->vm.tags[0].value, sizeof(f->vm.tags[0].value), "prod");
    arm_disk(&f->disks[0], "sap-db-01-os", TW_DISK_OS, -1, "Premium_LRS", "P10", 128);
    arm_disk(&f->disks[1], "sap-db-01-data0", TW_DISK_DATA, 0, "Premium_LRS", "P40", 2048);
    arm_disk(&f->disks[2], "sap-db-01-data1", TW_DISK_DATA, 1, "Premium_LRS", "P40", 2048);
    f->v = (struct tw_store_arm_vm){.vm = &f->vm, .power_state = "deallocated", .n_disks = 3,
                                    .disks = f->disks};
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

static long long count(const struct fx *f, const char *sql)
{
    return th_sql_int(f->path, sql);
}

static void seen(void *arg, const struct tw_store_arm_change *c)
{
    struct fx *f = arg;
    f->n[c->what]++;
    snprintf(f->last_from, sizeof(f->last_from), "%s", c->from);
    snprintf(f->last_to, sizeof(f->last_to), "%s", c->to);
    assert_string_equal(c->vm, "sap-db-01");
}

static int64_t put(struct fx *f, const char *at)
{
    memset(f->n, 0, sizeof(f->n));
    struct tw_error err = {0};
    int64_t id = 0;
    if (tw_store_arm_vm_put(f->st, &f->v, at, seen, f, &id, &err) != TW_OK)
        fail_msg("arm put: %s", err.msg);
    return id;
}

static int total(const struct fx *f)
{
    int t = 0;
    for (int i = 0; i < 8; i++)
        t += f->n[i];
    return t;
}

static struct tw_report *load(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "reports/%s", name);
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_report *r = tw_report_new();
    struct tw_error err = {0};
    if (tw_report_from_json(buf, len, r, &err) != TW_OK)
        fail_msg("%s: %s", name, err.msg);
    free(buf);
    return r;
}

static void put_report(struct fx *f, const struct tw_report *r)
{
    enum tw_put_status status;
    struct tw_error err = {0}, one = {0};
    const struct tw_report *reps[1] = {r};
    if (tw_store_put_reports(f->st, reps, NULL, NULL, 1, "2026-12-07T00:00:00Z", &status, &one,
                             &err) != TW_OK)
        fail_msg("batch: %s", err.msg);
    if (status != TW_PUT_STORED)
        fail_msg("report: %s", one.msg);
}

static void test_vm_without_agent(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = put(f, "2026-12-05T20:10:00Z");
    assert_true(id > 0);
    assert_int_equal(f->n[TW_ARM_CH_VM_NEW], 1);
    assert_int_equal(f->n[TW_ARM_CH_DISK_NEW], 3);
    assert_int_equal(f->n[TW_ARM_CH_POWER], 1);
    assert_string_equal(tw_store_arm_what_name(TW_ARM_CH_SKU), "sku");
    assert_string_equal(tw_store_arm_what_name(TW_ARM_CH_VM_NEW), "vm_new");

    struct tw_store_vm_row vm;
    assert_int_equal(tw_store_vm(f->st, id, &vm, &err), TW_OK);
    assert_string_equal(vm.name, "sap-db-01");
    assert_string_equal(vm.last_report_at, ""); /* never reported */
    assert_string_equal(vm.power_state, "deallocated");
    assert_string_equal(vm.power_state_at, "2026-12-05T20:10:00Z");
    assert_int_equal(vm.n_disks, 3);
    assert_int_equal(vm.n_tags, 1);
    free(vm.tags);
    struct tw_store_disk_row *d;
    size_t n;
    assert_int_equal(tw_store_vm_disks(f->st, id, &d, &n, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_string_equal(d[0].last_seen_at, "2026-12-05T20:10:00Z");
    free(d);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history WHERE source = 'arm' AND "
                              "report_id IS NULL"),
                     3);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE disk_state = 'Reserved' AND "
                              "max_shares = 1 AND bursting = 0 AND attrs_source = 'arm' AND "
                              "last_ownership_update = '2026-12-05T20:01:00Z'"),
                     3);
    /* Its compliance inventory reads from the rows, without results. */
    struct tw_inventory inv;
    struct tw_result *res;
    size_t nres;
    assert_int_equal(tw_store_vm_latest(f->st, id, &inv, &res, &nres, &err), TW_OK);
    assert_int_equal(inv.n_disks, 3);
    assert_int_equal(nres, 0);
    free(res);
    /* The fleet's pages and the savings walk have it. */
    struct tw_store_page pg = {.limit = 10};
    struct tw_store_vm_row *rows;
    bool more;
    assert_int_equal(tw_store_vms_page(f->st, &pg, &rows, &n, &more, &err), TW_OK);
    assert_int_equal(n, 1);
    tw_store_vm_rows_free(rows, n);
    struct tw_store_sv_cursor *c;
    assert_int_equal(tw_store_savings_open(f->st, 0, INT64_MAX, &c, &err), TW_OK);
    struct tw_store_sv_vm sv;
    bool done;
    assert_int_equal(tw_store_savings_next(c, &sv, &done, &err), TW_OK);
    assert_false(done);
    assert_int_equal(sv.n_disks, 3);
    assert_string_equal(sv.disks[0].attrs.disk_state, "Reserved");
    tw_store_savings_close(c);
    /* Found by its id in any case, and by name. */
    int64_t got;
    assert_int_equal(tw_store_vm_by_resource_id(f->st, RID "virtualmachines/sap-db-01", &got,
                                                &err),
                     TW_OK);
    assert_int_equal(got, id);
    assert_int_equal(tw_store_vm_by_name(f->st, "SAP-db-01", &got, &err), TW_OK);
    assert_int_equal(got, id);
    assert_int_equal(tw_store_vm_by_name(f->st, "nope", &got, &err), TW_ENOENT);
    assert_int_equal(tw_store_vm_by_resource_id(f->st, RID "virtualMachines/nope", &got, &err),
                     TW_ENOENT);

    /* The same look again: nothing changes, nothing is written. */
    long long hist = count(f, "SELECT count(*) FROM disk_sku_history");
    long long power = count(f, "SELECT count(*) FROM power_states");
    assert_int_equal(put(f, "2026-12-05T20:15:00Z"), id);
    assert_int_equal(total(f), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history"), hist);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states"), power);
    assert_int_equal(count(f, "SELECT count(*) FROM vms WHERE arm_seen_at = "
                              "'2026-12-05T20:15:00Z'"),
                     1);
}

static void test_changes(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = put(f, "2026-12-05T20:10:00Z");
    /* Someone switched data0 to Standard SSD and started the VM. */
    snprintf(f->disks[1].disk.sku, sizeof(f->disks[1].disk.sku), "StandardSSD_LRS");
    snprintf(f->disks[1].disk.tier, sizeof(f->disks[1].disk.tier), "E40");
    snprintf(f->disks[1].attrs.disk_state, sizeof(f->disks[1].attrs.disk_state), "Attached");
    f->v.power_state = "running";
    put(f, "2026-12-06T08:00:00Z");
    assert_int_equal(f->n[TW_ARM_CH_SKU], 1);
    assert_int_equal(f->n[TW_ARM_CH_POWER], 1);
    assert_int_equal(f->n[TW_ARM_CH_ATTRS], 1);
    assert_int_equal(total(f), 3);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history h JOIN disks d ON d.id = "
                              "h.disk_id WHERE d.name = 'sap-db-01-data0' AND h.source = 'arm'"),
                     2);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data0' AND "
                              "sku = 'StandardSSD_LRS' AND tier = 'E40'"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM power_states WHERE source = 'arm'"), 2);
    struct tw_store_vm_row vm;
    assert_int_equal(tw_store_vm(f->st, id, &vm, &err), TW_OK);
    assert_string_equal(vm.power_state, "running");
    free(vm.tags);
    /* data1 is gone from the VM: detached, the others stay. */
    f->v.n_disks = 2;
    put(f, "2026-12-06T09:00:00Z");
    assert_int_equal(f->n[TW_ARM_CH_DETACHED], 1);
    assert_int_equal(total(f), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data1' AND "
                              "detached_at = '2026-12-06T09:00:00Z' AND last_seen_at = "
                              "'2026-12-06T08:00:00Z'"),
                     1);
    struct tw_store_disk_row *d;
    size_t n;
    assert_int_equal(tw_store_vm_disks(f->st, id, &d, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    free(d);
    /* And a new size for the VM. */
    snprintf(f->vm.vm_size, sizeof(f->vm.vm_size), "Standard_E32ds_v5");
    put(f, "2026-12-06T10:00:00Z");
    assert_int_equal(f->n[TW_ARM_CH_VM_FIELDS], 1);
    assert_string_equal(f->last_from, "size Standard_E16ds_v5");
    assert_string_equal(f->last_to, "size Standard_E32ds_v5");
    /* A change of location (or tags) alone names what changed. */
    snprintf(f->vm.location, sizeof(f->vm.location), "northeurope");
    put(f, "2026-12-06T10:30:00Z");
    assert_int_equal(f->n[TW_ARM_CH_VM_FIELDS], 1);
    assert_non_null(strstr(f->last_from, "location "));
    assert_string_equal(f->last_to, "location northeurope");
    assert_null(strstr(f->last_to, "size"));
    /* Bad input is refused before anything is written. */
    f->disks[0].disk.managed_disk_id[0] = '\0';
    assert_int_equal(tw_store_arm_vm_put(f->st, &f->v, "2026-12-06T11:00:00Z", NULL, NULL, NULL,
                                         &err),
                     TW_EINVAL);
    assert_int_equal(tw_store_arm_vm_put(f->st, &f->v, "yesterday", NULL, NULL, NULL, &err),
                     TW_EPARSE);
}

/* ARM first, then the agent's report (which knows its ids, in its own
 * case): one VM, the same disks. */
static void test_report_after_arm(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = put(f, "2026-11-29T09:00:00Z");
    struct tw_report *r = load("sap-db-01.json");
    put_report(f, r);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE vm_id <> 1"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM disks"), r->inv.n_disks);
    struct tw_store_vm_row vm;
    assert_int_equal(tw_store_vm(f->st, id, &vm, &err), TW_OK);
    assert_string_equal(vm.last_report_at, r->created_at);
    assert_int_equal(vm.n_disks, (int64_t)r->inv.n_disks);
    free(vm.tags);
    tw_report_free(r);
}

/* ARM's look at 11:05 (data0 downgraded), then the agent's report made at
 * 10:05 delivered late (the VM's first and so newest report): data0 keeps
 * ARM's newer SKU; the report's goes into the history before it. */
static void test_late_report_after_newer_arm(void **state)
{
    struct fx *f = *state;
    snprintf(f->disks[1].disk.sku, sizeof(f->disks[1].disk.sku), "StandardSSD_LRS");
    snprintf(f->disks[1].disk.tier, sizeof(f->disks[1].disk.tier), "E40");
    put(f, "2026-11-29T11:05:00Z");
    struct tw_report *r = load("sap-db-01.json");
    put_report(f, r);
    tw_report_free(r);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data0' AND "
                              "sku = 'StandardSSD_LRS' AND tier = 'E40' AND size_gib = 2048"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history h JOIN disks d ON d.id = "
                              "h.disk_id WHERE d.name = 'sap-db-01-data0'"),
                     2);
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history h JOIN disks d ON d.id = "
                              "h.disk_id WHERE d.name = 'sap-db-01-data0' AND h.sku = "
                              "'Premium_LRS' AND h.observed_at = '2026-11-29T10:05:00.000Z'"),
                     1);
    /* A disk ARM had not seen changed takes the report's SKU as before. */
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data1' AND "
                              "sku = 'Premium_LRS'"),
                     1);
}

static void exec_sql(const struct fx *f, const char *sql)
{
    th_sql_exec(f->path, sql);
}

/* A disk ARM stored by its id on another VM, and on this VM an agent's row
 * of the same name without an id: ARM's disk is matched by its id first
 * (the row moves back here), never by the name into the identity the other
 * row holds (a unique constraint that stopped the whole sync). */
static void test_id_before_name(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    put(f, "2026-12-05T08:00:00Z");
    /* data1 moves to another VM, as ARM lists it. */
    struct tw_vm other = f->vm;
    snprintf(other.name, sizeof(other.name), "sap-app-01");
    snprintf(other.resource_id, sizeof(other.resource_id),
             "/subscriptions/" SUB "/resourceGroups/RG-SAP/providers/Microsoft.Compute/"
             "virtualMachines/SAP-APP-01");
    struct tw_store_arm_vm ov = {.vm = &other, .power_state = "running", .n_disks = 1,
                                 .disks = &f->disks[2]};
    assert_int_equal(tw_store_arm_vm_put(f->st, &ov, "2026-12-05T09:00:00Z", NULL, NULL, NULL,
                                         &err),
                     TW_OK);
    /* An agent's row of that name on sap-db-01, without an id. */
    exec_sql(f, "INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, caching, "
                "managed_disk_id, last_seen_at, last_seen_ms) SELECT 'vm:1:name:sap-db-01-data1', "
                "id, 'sap-db-01-data1', 'data', 1, 'Premium_LRS', 2048, 'None', '', "
                "'2026-12-05T09:30:00Z', 0 FROM vms WHERE name = 'sap-db-01'");
    /* ARM lists data1 on sap-db-01 again. */
    assert_int_equal(tw_store_arm_vm_put(f->st, &f->v, "2026-12-05T10:00:00Z", NULL, NULL, NULL,
                                         &err),
                     TW_OK);
    assert_int_equal(count(f, "SELECT count(*) FROM disks d JOIN vms v ON v.id = d.vm_id WHERE "
                              "d.name = 'sap-db-01-data1' AND d.identity LIKE 'id:%' AND "
                              "v.name = 'sap-db-01' AND d.detached_at IS NULL"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE identity = "
                              "'vm:1:name:sap-db-01-data1' AND detached_at IS NOT NULL"),
                     1);
}

/* A disk whose row the database refuses (a constraint, here a trigger's):
 * said as "skipped" and left as it was, not detached; the VM's other disks
 * are stored and the put goes on. */
static void test_conflicting_disk_skipped(void **state)
{
    struct fx *f = *state;
    put(f, "2026-12-05T08:00:00Z");
    if (th_store_pg())
        exec_sql(f, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN "
                    "RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END$$; "
                    "CREATE TRIGGER refuse BEFORE UPDATE ON disks FOR EACH ROW WHEN "
                    "(NEW.name = 'sap-db-01-data0') EXECUTE FUNCTION refuse()");
    else
        exec_sql(f, "CREATE TRIGGER refuse BEFORE UPDATE ON disks WHEN NEW.name = "
                    "'sap-db-01-data0' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    snprintf(f->disks[1].disk.sku, sizeof(f->disks[1].disk.sku), "StandardSSD_LRS");
    snprintf(f->disks[1].disk.tier, sizeof(f->disks[1].disk.tier), "E40");
    snprintf(f->disks[2].disk.sku, sizeof(f->disks[2].disk.sku), "StandardSSD_LRS");
    snprintf(f->disks[2].disk.tier, sizeof(f->disks[2].disk.tier), "E40");
    put(f, "2026-12-05T09:00:00Z");
    assert_int_equal(f->n[TW_ARM_CH_SKIPPED], 1);
    assert_int_equal(f->n[TW_ARM_CH_SKU], 1);
    assert_int_equal(f->n[TW_ARM_CH_DETACHED], 0);
    assert_string_equal(tw_store_arm_what_name(TW_ARM_CH_SKIPPED), "skipped");
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data0' AND "
                              "sku = 'Premium_LRS' AND detached_at IS NULL"),
                     1);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE name = 'sap-db-01-data1' AND "
                              "sku = 'StandardSSD_LRS'"),
                     1);
    /* Its history is not written either (rolled back with the row). */
    assert_int_equal(count(f, "SELECT count(*) FROM disk_sku_history h JOIN disks d ON d.id = "
                              "h.disk_id WHERE d.name = 'sap-db-01-data0'"),
                     1);
}

/* ARM first, then a report that knows neither the VM's id nor its disks'
 * ids: it joins by subscription, group and name, its disks by name, and
 * what ARM gave is not blanked. */
static void test_report_without_ids_after_arm(void **state)
{
    struct fx *f = *state;
    int64_t id = put(f, "2026-11-29T09:00:00Z");
    struct tw_report *r = load("sap-db-01.json");
    r->inv.vm.resource_id[0] = '\0';
    snprintf(r->inv.vm.resource_group, sizeof(r->inv.vm.resource_group), "rg-sap");
    for (size_t i = 0; i < r->inv.n_disks; i++)
        r->inv.disks[i].managed_disk_id[0] = '\0';
    put_report(f, r);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM vms WHERE resource_id LIKE "
                              "'%virtualMachines/SAP-DB-01'"),
                     1);
    /* ARM's three disks are the report's by name; the rest are new. */
    assert_int_equal(count(f, "SELECT count(*) FROM disks"), r->inv.n_disks);
    assert_int_equal(count(f, "SELECT count(*) FROM disks WHERE managed_disk_id <> '' AND "
                              "detached_ms IS NULL"),
                     3);
    int64_t got;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm_by_resource_id(f->st, f->vm.resource_id, &got, &err), TW_OK);
    assert_int_equal(got, id);
    tw_report_free(r);
}

/* The agent first, without its VM's id: ARM's look joins it by
 * subscription, group and name (any case), and the VM takes ARM's id. */
static void test_arm_after_report(void **state)
{
    struct fx *f = *state;
    struct tw_report *r = load("sap-db-01.json");
    r->inv.vm.resource_id[0] = '\0';
    put_report(f, r);
    int64_t id = put(f, "2026-12-08T09:00:00Z");
    assert_int_equal(id, 1);
    assert_int_equal(f->n[TW_ARM_CH_VM_NEW], 0);
    assert_int_equal(f->n[TW_ARM_CH_DISK_NEW], 0); /* its disks, by id in any case */
    /* Disks the report had and ARM does not list are detached. */
    assert_int_equal(f->n[TW_ARM_CH_DETACHED], (int)r->inv.n_disks - 3);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    int64_t got;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm_by_resource_id(f->st, RID "virtualMachines/sap-db-01", &got,
                                                &err),
                     TW_OK);
    assert_int_equal(got, 1);
    /* A later report of the agent (still without the id) stays that VM. */
    snprintf(r->id, sizeof(r->id), "6f1c2a3b-0000-4000-8000-0000000000aa");
    snprintf(r->created_at, sizeof(r->created_at), "2026-12-08T10:00:00Z");
    r->n_results = 0;
    put_report(f, r);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE vm_id = 1"), 2);
    tw_report_free(r);
}

/* The agent first, with its VM's id in its own case; ARM's look in ARM's
 * case finds that VM and its disks (ids in any case). */
static void test_arm_after_report_with_id(void **state)
{
    struct fx *f = *state;
    struct tw_report *r = load("sap-db-01.json");
    put_report(f, r);
    assert_int_equal(put(f, "2026-12-08T09:00:00Z"), 1);
    assert_int_equal(f->n[TW_ARM_CH_VM_NEW], 0);
    assert_int_equal(f->n[TW_ARM_CH_DISK_NEW], 0);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM disks"), r->inv.n_disks);
    tw_report_free(r);
}

/* An agent that did not know its VM's id, then does (an upgraded agent):
 * one VM, found by the id from then on. */
static void test_report_learns_its_id(void **state)
{
    struct fx *f = *state;
    struct tw_report *r = load("sap-db-01.json");
    char rid[sizeof(r->inv.vm.resource_id)];
    snprintf(rid, sizeof(rid), "%s", r->inv.vm.resource_id);
    r->inv.vm.resource_id[0] = '\0';
    put_report(f, r);
    snprintf(r->inv.vm.resource_id, sizeof(r->inv.vm.resource_id), "%s", rid);
    snprintf(r->id, sizeof(r->id), "6f1c2a3b-0000-4000-8000-0000000000bb");
    snprintf(r->created_at, sizeof(r->created_at), "2026-12-08T10:00:00Z");
    r->n_results = 0;
    put_report(f, r);
    assert_int_equal(count(f, "SELECT count(*) FROM vms"), 1);
    int64_t got = 0;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm_by_resource_id(f->st, rid, &got, &err), TW_OK);
    assert_int_equal(got, 1);
    tw_report_free(r);
}

/* Verdicts kept against a VM's inventory stand through a sync that
 * changes nothing, and are set aside (judged again) when ARM shows its
 * disks changed. */
static void test_kept_verdicts(void **state)
{
    struct fx *f = *state;
    f->disks[0].disk.caching = TW_CACHE_READWRITE; /* as the agent reports its OS disk */
    put(f, "2026-11-29T09:00:00Z");
    struct tw_report *r = load("sap-db-01.json");
    r->inv.n_disks = 3; /* the three ARM lists */
    put_report(f, r);
    long long kept = count(f, "SELECT count(*) FROM result_latest WHERE verdict_report IS NOT NULL");
    assert_true(kept > 0);
    put(f, "2026-12-08T09:00:00Z");
    /* The report said running; ARM, later, deallocated: that alone. */
    assert_int_equal(f->n[TW_ARM_CH_POWER], 1);
    assert_int_equal(total(f), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict_report IS NOT NULL"),
                     kept);
    snprintf(f->disks[1].disk.sku, sizeof(f->disks[1].disk.sku), "StandardSSD_LRS");
    snprintf(f->disks[1].disk.tier, sizeof(f->disks[1].disk.tier), "E40");
    put(f, "2026-12-08T10:00:00Z");
    assert_int_equal(f->n[TW_ARM_CH_SKU], 1);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict_report IS NOT NULL"),
                     0);
    tw_report_free(r);
}

static void test_same_name_twice(void **state)
{
    struct fx *f = *state;
    put(f, "2026-12-05T20:10:00Z");
    /* Another sap-db-01 in another group: two VMs, and the name is not
     * enough to tell them apart. */
    snprintf(f->vm.resource_group, sizeof(f->vm.resource_group), "rg-other");
    snprintf(f->vm.resource_id, sizeof(f->vm.resource_id),
             "/subscriptions/" SUB "/resourceGroups/rg-other/providers/Microsoft.Compute/"
             "virtualMachines/sap-db-01");
    for (int i = 0; i < 3; i++)
        snprintf(f->disks[i].disk.managed_disk_id, sizeof(f->disks[i].disk.managed_disk_id),
                 "/subscriptions/" SUB "/resourceGroups/rg-other/providers/Microsoft.Compute/"
                 "disks/d%d", i);
    int64_t second = put(f, "2026-12-05T20:10:00Z");
    assert_int_equal(second, 2);
    assert_int_equal(f->n[TW_ARM_CH_VM_NEW], 1);
    int64_t got;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm_by_name(f->st, "sap-db-01", &got, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "RG-SAP"));
    assert_non_null(strstr(err.msg, "rg-other"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vm_without_agent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_after_arm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_before_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflicting_disk_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_report_after_newer_arm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_without_ids_after_arm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arm_after_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_learns_its_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arm_after_report_with_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_name_twice, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
