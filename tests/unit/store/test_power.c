/* test_power.c - one VM's power-state history (tw_store_vm_power_states)
 * on a copy of a real version-3 database: the states in a span by time,
 * the one in force at its start first, another VM's not mixed in, and
 * none for a VM that does not exist. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "store/store.h"
#include "th_store.h"

static int64_t ms(const char *t)
{
    int64_t v;
    assert_true(tw_rfc3339_ms(t, &v));
    return v;
}

static void test_history(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    th_store_fixture(dir, "store/v3.db", "v3.db", path, sizeof(path));
    struct tw_store *st;
    struct tw_error err = {0};
    if (tw_store_open(path, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* VM 1 (sap-db-01): running 2026-11-29T10:05, deallocated 12-01T09:00. */
    const char *const at[] = {"2026-12-04T18:00:00Z", "2026-12-05T20:00:00Z",
                              "2026-12-07T06:00:00Z"};
    const char *const what[] = {"running", "deallocated", "running"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_store_power_observe(st, 1, what[i], at[i], TW_OBS_ARM, &err), TW_OK);
    assert_int_equal(tw_store_power_observe(st, 3, "deallocated", "2026-12-05T00:00:00Z",
                                            TW_OBS_ARM, &err),
                     TW_OK);
    struct tw_store_sv_power *p;
    size_t n;
    assert_int_equal(tw_store_vm_power_states(st, 1, ms("2026-12-02T00:00:00Z"),
                                              ms("2026-12-07T00:00:00Z"), &p, &n, &err),
                     TW_OK);
    assert_int_equal(n, 3);
    assert_string_equal(p[0].state, "deallocated"); /* in force at the start */
    assert_int_equal(p[0].at_ms, ms("2026-12-01T09:00:00Z"));
    assert_string_equal(p[1].state, "running");
    assert_string_equal(p[2].state, "deallocated");
    assert_int_equal(p[2].at_ms, ms("2026-12-05T20:00:00Z"));
    free(p);
    assert_int_equal(tw_store_vm_power_states(st, 3, ms("2026-12-02T00:00:00Z"),
                                              ms("2026-12-07T00:00:00Z"), &p, &n, &err),
                     TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(p[1].state, "deallocated");
    free(p);
    assert_int_equal(tw_store_vm_power_states(st, 99, 0, ms("2026-12-07T00:00:00Z"), &p, &n, &err),
                     TW_OK);
    assert_int_equal(n, 0);
    assert_null(p);
    assert_int_equal(tw_store_vm_power_states(st, 1, 10, 5, &p, &n, &err), TW_EINVAL);
    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
