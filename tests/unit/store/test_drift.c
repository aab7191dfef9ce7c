/* test_drift.c - the store's drift rows (open, keep, close, list), the one
 * open drift per disk the schema holds to, the stored policies' names, and
 * a VM's power states read back newest first, on a copy of a real
 * version-4 database migrated to this binary's schema (for PostgreSQL, its
 * rows loaded into a new database).
 *
 * tw_store_drift_sync does a whole update in one transaction.
 *
 * The fixture: VM 1 sap-db-01 (disks 1-7), VM 2 sap-app-02 (8-12), VM 3
 * web-03 (13-16). */
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
    th_store_fixture(f->dir, "store/v4.db", "v4.db", f->path, sizeof(f->path));
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

static struct tw_store_drift_row row(int64_t disk, int64_t vm, const char *sku, const char *since)
{
    struct tw_store_drift_row r = {.disk_id = disk, .vm_id = vm};
    snprintf(r.sku, sizeof(r.sku), "%s", sku);
    snprintf(r.required_sku, sizeof(r.required_sku), "Premium_LRS");
    snprintf(r.policy, sizeof(r.policy), "dev-weekends");
    snprintf(r.since, sizeof(r.since), "%s", since);
    return r;
}

static void test_open_keeps_first_since(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_drift_row r = row(3, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z");
    bool started = false;
    assert_int_equal(tw_store_drift_open(f->st, &r, &started, &err), TW_OK);
    assert_true(started);
    /* Seen again later, on another SKU: the same drift, its since kept. */
    r = row(3, 1, "Standard_LRS", "2026-12-05T09:00:00Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, &started, &err), TW_OK);
    assert_false(started);
    struct tw_store_drift_row *rows;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, true, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].disk_id, 3);
    assert_int_equal(rows[0].vm_id, 1);
    assert_string_equal(rows[0].vm, "sap-db-01");
    assert_string_equal(rows[0].disk, "sap-db-01-data1");
    assert_string_equal(rows[0].sku, "Standard_LRS");
    assert_string_equal(rows[0].required_sku, "Premium_LRS");
    assert_string_equal(rows[0].policy, "dev-weekends");
    assert_string_equal(rows[0].since, "2026-12-05T08:02:11Z");
    assert_string_equal(rows[0].ended_at, "");
    free(rows);
}

static void test_close(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    bool ended = true;
    /* Nothing open: nothing to end, no error. */
    assert_int_equal(tw_store_drift_close(f->st, 4, "2026-12-05T10:00:00Z", &ended, &err), TW_OK);
    assert_false(ended);
    assert_int_equal(tw_store_drift_close(f->st, 999, "2026-12-05T10:00:00Z", &ended, &err),
                     TW_OK);
    assert_false(ended);
    struct tw_store_drift_row r = row(3, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z");
    struct tw_store_drift_row r2 = row(14, 3, "StandardSSD_LRS", "2026-12-04T08:00:00Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, NULL, &err), TW_OK);
    assert_int_equal(tw_store_drift_open(f->st, &r2, NULL, &err), TW_OK);
    assert_int_equal(tw_store_drift_close(f->st, 3, "2026-12-05T10:00:00Z", &ended, &err), TW_OK);
    assert_true(ended);
    assert_int_equal(tw_store_drift_close(f->st, 3, "2026-12-05T11:00:00Z", &ended, &err), TW_OK);
    assert_false(ended);
    struct tw_store_drift_row *rows;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, true, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].disk_id, 14);
    free(rows);
    /* Drifting again is a new drift, with its own since. */
    r = row(3, 1, "StandardSSD_LRS", "2026-12-06T08:00:00Z");
    bool started = false;
    assert_int_equal(tw_store_drift_open(f->st, &r, &started, &err), TW_OK);
    assert_true(started);
    assert_int_equal(tw_store_drift_list(f->st, false, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 3); /* by since */
    assert_int_equal(rows[0].disk_id, 14);
    assert_string_equal(rows[0].ended_at, "");
    assert_int_equal(rows[1].disk_id, 3);
    assert_string_equal(rows[1].since, "2026-12-05T08:02:11Z");
    assert_string_equal(rows[1].ended_at, "2026-12-05T10:00:00Z");
    assert_int_equal(rows[2].disk_id, 3);
    assert_string_equal(rows[2].since, "2026-12-06T08:00:00Z");
    assert_string_equal(rows[2].ended_at, "");
    free(rows);
}

static void test_unique_open(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_drift_row r = row(3, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, NULL, &err), TW_OK);
    /* A second open row for the disk, written past the store: refused. */
    const char *ins = "INSERT INTO drift(disk_id, vm_id, sku, required_sku, since, since_ms, "
                      "seen_at) VALUES (3, 1, 'Standard_LRS', 'Premium_LRS', "
                      "'2026-12-05T09:00:00Z', 0, '2026-12-05T09:00:00Z')";
    assert_int_equal(th_sql_try(f->path, ins), TH_SQL_CONSTRAINT);
    /* An ended one beside the open one is fine. */
    const char *ended = "INSERT INTO drift(disk_id, vm_id, sku, required_sku, since, since_ms, "
                        "seen_at, ended_at, ended_ms) VALUES (3, 1, 'Standard_LRS', "
                        "'Premium_LRS', '2026-12-01T09:00:00Z', 0, '2026-12-01T09:00:00Z', "
                        "'2026-12-01T10:00:00Z', 0)";
    assert_int_equal(th_sql_try(f->path, ended), TH_SQL_OK);
    struct tw_store_drift_row *rows;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, true, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    free(rows);
}

static void test_refusals(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_drift_row r = row(3, 1, "StandardSSD_LRS", "yesterday");
    bool started = true;
    assert_int_equal(tw_store_drift_open(f->st, &r, &started, &err), TW_EPARSE);
    assert_false(started);
    assert_non_null(strstr(err.msg, "yesterday"));
    r = row(0, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, NULL, &err), TW_EINVAL);
    r = row(3, 1, "", "2026-12-05T08:02:11Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, NULL, &err), TW_EINVAL);
    r = row(999, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z");
    assert_int_equal(tw_store_drift_open(f->st, &r, NULL, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "999"));
    assert_int_equal(tw_store_drift_close(f->st, 3, "soon", NULL, &err), TW_EPARSE);
    struct tw_store_drift_row *rows;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, false, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 0); /* nothing half-written */
    free(rows);
}

static void test_sync(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_drift_row rows[2] = {row(3, 1, "StandardSSD_LRS", "2026-12-05T08:02:11Z"),
                                         row(14, 3, "StandardSSD_LRS", "2026-12-05T08:10:00Z")};
    bool started[2] = {false, false};
    struct tw_store_drift_row *ended;
    size_t n_ended = 9;
    assert_int_equal(tw_store_drift_sync(f->st, rows, 2, "2026-12-05T09:00:00Z", started, &ended,
                                         &n_ended, &err),
                     TW_OK);
    assert_true(started[0] && started[1]);
    assert_int_equal(n_ended, 0);
    free(ended);
    /* Later: disk 3 still drifts (its since kept), disk 14 no longer. */
    rows[0] = row(3, 1, "Standard_LRS", "2026-12-05T09:30:00Z");
    assert_int_equal(tw_store_drift_sync(f->st, rows, 1, "2026-12-05T10:00:00Z", started, &ended,
                                         &n_ended, &err),
                     TW_OK);
    assert_false(started[0]);
    assert_int_equal(n_ended, 1);
    assert_int_equal(ended[0].disk_id, 14);
    assert_string_equal(ended[0].disk, "web-03-data0");
    assert_string_equal(ended[0].since, "2026-12-05T08:10:00Z");
    assert_string_equal(ended[0].ended_at, "2026-12-05T10:00:00Z");
    free(ended);
    struct tw_store_drift_row *list;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, true, &list, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].since, "2026-12-05T08:02:11Z");
    assert_string_equal(list[0].sku, "Standard_LRS");
    free(list);
    /* Nothing drifts: all end; a bad row writes nothing. */
    rows[1] = row(999, 1, "StandardSSD_LRS", "2026-12-05T11:00:00Z");
    assert_int_equal(tw_store_drift_sync(f->st, rows + 1, 1, "2026-12-05T11:00:00Z", started,
                                         &ended, &n_ended, &err),
                     TW_ENOENT);
    assert_null(ended);
    assert_false(started[0]);
    assert_int_equal(tw_store_drift_list(f->st, true, &list, &n, &err), TW_OK);
    assert_int_equal(n, 1); /* disk 3's, untouched */
    free(list);
    assert_int_equal(tw_store_drift_sync(f->st, NULL, 0, "2026-12-05T12:00:00Z", NULL, &ended,
                                         &n_ended, &err),
                     TW_OK);
    assert_int_equal(n_ended, 1);
    free(ended);
    assert_int_equal(tw_store_drift_list(f->st, true, &list, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    free(list);
    assert_int_equal(tw_store_drift_sync(f->st, NULL, 0, "noon", NULL, &ended, &n_ended, &err),
                     TW_EPARSE);
}

static void test_policy_names(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    char **names;
    size_t n;
    assert_int_equal(tw_store_policy_names(f->st, &names, &n, &err), TW_OK);
    size_t before = n;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    assert_int_equal(tw_store_policy_put(f->st, "zz-last", "{}", &err), TW_OK);
    assert_int_equal(tw_store_policy_put(f->st, "aa-first", "{}", &err), TW_OK);
    assert_int_equal(tw_store_policy_put(f->st, "aa-first", "{\"x\":1}", &err), TW_OK);
    assert_int_equal(tw_store_policy_names(f->st, &names, &n, &err), TW_OK);
    assert_int_equal(n, before + 2);
    assert_string_equal(names[0], "aa-first");
    assert_string_equal(names[n - 1], "zz-last");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int64_t ms(const char *t)
{
    int64_t v;
    assert_true(tw_rfc3339_ms(t, &v));
    return v;
}

static void test_power_before(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    /* VM 1: running 11-29T10:05, deallocated 12-01T09:00 (its reports). */
    const char *const at[] = {"2026-12-05T08:02:11Z", "2026-12-05T09:00:00Z",
                              "2026-12-05T10:00:00Z"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_store_power_observe(f->st, 1, "running", at[i], TW_OBS_ARM, &err),
                         TW_OK);
    struct tw_store_sv_power *p;
    size_t n;
    assert_int_equal(tw_store_vm_power_before(f->st, 1, ms("2026-12-05T09:30:00Z"), 2, &p, &n,
                                              &err),
                     TW_OK);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].at_ms, ms("2026-12-05T09:00:00Z"));
    assert_int_equal(p[1].at_ms, ms("2026-12-05T08:02:11Z"));
    int64_t next = p[1].at_ms - 1;
    free(p);
    assert_int_equal(tw_store_vm_power_before(f->st, 1, next, 2, &p, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].state, "deallocated");
    assert_string_equal(p[1].state, "running");
    assert_int_equal(p[1].at_ms, ms("2026-11-29T10:05:00Z"));
    next = p[1].at_ms - 1;
    free(p);
    assert_int_equal(tw_store_vm_power_before(f->st, 1, next, 2, &p, &n, &err), TW_OK);
    assert_int_equal(n, 0);
    assert_null(p);
    assert_int_equal(tw_store_vm_power_before(f->st, 1, next, 0, &p, &n, &err), TW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_keeps_first_since, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unique_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_power_before, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
