/* test_stats.c - the fleet's counts for /metrics (store_stats.c): VMs by
 * size, attached disks by SKU and tier, VMs not heard from since an
 * instant, and the "other" group past the cap; read from the fixture
 * database (three VMs, sixteen disks). */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "store/store.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_fixture(f->dir, "store/v1.db", "tierwise.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
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

static void sql_exec(const char *path, const char *sql)
{
    th_sql_exec(path, sql);
}

static int64_t count_of(const struct tw_store_count *rows, size_t n, const char *key,
                        const char *tier)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, key) == 0 && strcmp(rows[i].tier, tier) == 0)
            return rows[i].n;
    return -1;
}

/* The fixture's reports were all received at this instant. */
static int64_t received_ms(void)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms("2026-12-01T10:21:08Z", &ms));
    return ms;
}

static void test_counts(void **state)
{
    struct fx *f = *state;
    struct tw_store_fleet_counts c;
    struct tw_error err = {0};
    assert_int_equal(tw_store_fleet_counts(f->st, received_ms(), &c, &err), TW_OK);
    assert_int_equal(c.vms, 3);
    assert_int_equal(c.n_vm_sizes, 3);
    assert_string_equal(c.vm_sizes[0].key, "Standard_D4ds_v5"); /* by size, ascending */
    assert_int_equal(count_of(c.vm_sizes, c.n_vm_sizes, "Standard_E16ds_v5", ""), 1);
    assert_int_equal(c.n_disk_skus, 9);
    assert_int_equal(count_of(c.disk_skus, c.n_disk_skus, "Premium_LRS", "P10"), 5);
    assert_int_equal(count_of(c.disk_skus, c.n_disk_skus, "Premium_LRS", "P40"), 2);
    assert_int_equal(count_of(c.disk_skus, c.n_disk_skus, "PremiumV2_LRS", ""), 1);
    assert_int_equal(count_of(c.disk_skus, c.n_disk_skus, "StandardSSD_LRS", ""), 1);
    int64_t disks = 0;
    for (size_t i = 0; i < c.n_disk_skus; i++)
        disks += c.disk_skus[i].n;
    assert_int_equal(disks, 16);
    /* Received exactly at the instant: heard from. */
    assert_int_equal(c.vms_silent, 0);
    tw_store_fleet_counts_free(&c);

    /* A millisecond later, all three are silent. */
    assert_int_equal(tw_store_fleet_counts(f->st, received_ms() + 1, &c, &err), TW_OK);
    assert_int_equal(c.vms_silent, 3);
    tw_store_fleet_counts_free(&c);

    /* One VM heard from later; a detached disk no longer counts. */
    sql_exec(f->path, "UPDATE reports SET received_at = '2026-12-05T00:00:00Z' WHERE id = "
                      "(SELECT last_report_id FROM vms WHERE name = 'web-03');"
                      "UPDATE disks SET detached_at = '2026-12-02T00:00:00Z', "
                      "detached_ms = 1 WHERE name = 'web-03-data2';");
    assert_int_equal(tw_store_fleet_counts(f->st, received_ms() + 1, &c, &err), TW_OK);
    assert_int_equal(c.vms_silent, 2);
    assert_int_equal(count_of(c.disk_skus, c.n_disk_skus, "StandardSSD_LRS", "E20"), -1);
    tw_store_fleet_counts_free(&c);

    /* A received time that does not read counts as silent. */
    sql_exec(f->path, "UPDATE reports SET received_at = 'yesterday' WHERE id = "
                      "(SELECT last_report_id FROM vms WHERE name = 'web-03')");
    assert_int_equal(tw_store_fleet_counts(f->st, 0, &c, &err), TW_OK);
    assert_int_equal(c.vms_silent, 1);
    tw_store_fleet_counts_free(&c);
}

/* Past TW_STORE_COUNTS_MAX groups, the last one is "other" and counts the
 * rest: nothing is dropped, and the groups stay bounded. */
static void test_other(void **state)
{
    struct fx *f = *state;
    /* (PostgreSQL's to_char where SQLite has printf) */
    sql_exec(f->path,
             th_store_pg()
                 ? "INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, caching, "
                   "last_seen_at, last_seen_ms) SELECT 'x:' || i, (SELECT min(id) FROM vms), "
                   "'extra' || i, 'data', 100 + i, 'Z' || to_char(i, 'FM000') || '_LRS', 1, "
                   "'None', '2026-12-01T10:21:08Z', 0 FROM generate_series(1, 300) AS n(i)"
                 : "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                   "300) INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, "
                   "caching, last_seen_at, last_seen_ms) SELECT 'x:' || i, (SELECT min(id) "
                   "FROM vms), 'extra' || i, 'data', 100 + i, printf('Z%03d_LRS', i), 1, "
                   "'None', '2026-12-01T10:21:08Z', 0 FROM n");
    struct tw_store_fleet_counts c;
    struct tw_error err = {0};
    assert_int_equal(tw_store_fleet_counts(f->st, 0, &c, &err), TW_OK);
    assert_int_equal(c.n_disk_skus, TW_STORE_COUNTS_MAX);
    const struct tw_store_count *last = &c.disk_skus[c.n_disk_skus - 1];
    assert_string_equal(last->key, "other");
    assert_string_equal(last->tier, "");
    int64_t disks = 0;
    for (size_t i = 0; i < c.n_disk_skus; i++)
        disks += c.disk_skus[i].n;
    assert_int_equal(disks, 316);
    /* 9 fixture groups + 300 new = 309; the first 255 named, 54 in "other". */
    assert_int_equal(last->n, 309 - (TW_STORE_COUNTS_MAX - 1));
    tw_store_fleet_counts_free(&c);
}

static void test_closed(void **state)
{
    (void)state;
    struct tw_store_fleet_counts c;
    struct tw_error err = {0};
    assert_int_equal(tw_store_fleet_counts(NULL, 0, &c, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "not open"));
    assert_null(c.vm_sizes);
    tw_store_fleet_counts_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other, setup, teardown),
        cmocka_unit_test(test_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
