/* test_profile.c - the named profiles match their documented methods. */
#include "testhelp.h"

#include <string.h>

#include "bench/engine.h"
#include "bench/profile.h"

static void test_rated_profiles(void **state)
{
    (void)state;
    struct tw_error err;
    const struct tw_profile *p = tw_profile_find("rated-iops", &err);
    assert_non_null(p);
    assert_int_equal(p->pattern, TW_PAT_RANDREAD);
    assert_int_equal(p->block_size, 8192);
    assert_int_equal(p->queue_depth, 256);
    assert_int_equal(p->jobs, 4);
    p = tw_profile_find("rated-throughput", &err);
    assert_int_equal(p->pattern, TW_PAT_READ);
    assert_int_equal(p->block_size, 1048576);
    assert_int_equal(p->queue_depth, 64);
    p = tw_profile_find("db-scan-16k", &err);
    assert_string_equal(p->engine, "psync");
    assert_int_equal(p->block_size, 16384);
    assert_int_equal(p->queue_depth, 1);
    p = tw_profile_find("db-largeio-128k", &err);
    assert_int_equal(p->block_size, 131072);
    assert_int_equal(p->pattern, TW_PAT_READ);
    p = tw_profile_find("oltp-8k-mixed", &err);
    assert_int_equal(p->pattern, TW_PAT_RANDRW);
    assert_int_equal(p->read_pct, 75);
    assert_int_equal(p->queue_depth, 32);
    assert_true(tw_profile_writes(p));
}

static void test_all_valid(void **state)
{
    (void)state;
    const struct tw_profile *p;
    unsigned n = 0, writes = 0;
    for (unsigned i = 0; (p = tw_profile_at(i)); i++, n++) {
        struct tw_error err;
        assert_non_null(tw_engine_find(p->engine, &err));
        assert_true(p->block_size % 512 == 0);
        assert_true(p->queue_depth >= 1 && p->jobs >= 1 && p->runtime_ms > 0);
        assert_true(strlen(p->summary) > 10);
        assert_ptr_equal(tw_profile_find(p->name, &err), p);
        writes += tw_profile_writes(p);
    }
    assert_true(n >= 8);
    assert_true(writes >= 3); /* write variants for file targets */
}

static void test_unknown(void **state)
{
    (void)state;
    struct tw_error err = {0};
    assert_null(tw_profile_find("fastest", &err));
    assert_non_null(strstr(err.msg, "unknown profile \"fastest\""));
    assert_non_null(strstr(err.msg, "rated-iops"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rated_profiles),
        cmocka_unit_test(test_all_valid),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
