/* test_operations.c - the table of long operations: a new one is queued
 * with a UUID and its request; an unfinished one of the same kind and key
 * is joined; the states and times as they happen; a wait ends when the
 * operation finishes, or at its instant, or when told the server stops; a
 * full table evicts the oldest finished and refuses when none is. */
#include "testhelp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/time.h"
#include "server/operations.h"
#include "server/worker.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_lifecycle(void **state)
{
    (void)state;
    struct tw_ops *ops = tw_ops_new(0);
    assert_non_null(ops);
    char id[TW_UUID_STRLEN + 1], id2[TW_UUID_STRLEN + 1], id3[TW_UUID_STRLEN + 1];
    bool joined = true;
    struct tw_error err = {0};
    assert_int_equal(tw_ops_create(ops, "prices.refresh", "westeurope USD",
                                   json_pack("{s:s}", "region", "westeurope"), id, &joined, &err),
                     TW_OK);
    assert_false(joined);
    assert_int_equal(strlen(id), TW_UUID_STRLEN);
    assert_int_equal(id[14], '4');
    json_t *v = tw_ops_get(ops, id, 0, NULL);
    assert_non_null(v);
    assert_string_equal(str(v, "state"), "queued");
    assert_string_equal(str(v, "kind"), "prices.refresh");
    assert_string_equal(str(json_object_get(v, "request"), "region"), "westeurope");
    assert_non_null(str(v, "created_at"));
    assert_true(json_is_null(json_object_get(v, "started_at")));
    assert_true(json_is_null(json_object_get(v, "result")));
    assert_true(json_is_null(json_object_get(v, "error")));
    json_decref(v);

    /* The same key while unfinished: joined; another key: a new one. */
    assert_int_equal(
        tw_ops_create(ops, "prices.refresh", "westeurope USD", json_object(), id2, &joined, &err),
        TW_OK);
    assert_true(joined);
    assert_string_equal(id2, id);
    assert_int_equal(
        tw_ops_create(ops, "prices.refresh", "eastus USD", json_object(), id3, &joined, &err),
        TW_OK);
    assert_false(joined);
    assert_string_not_equal(id3, id);

    tw_ops_start(ops, id);
    v = tw_ops_get(ops, id, 0, NULL);
    assert_string_equal(str(v, "state"), "running");
    assert_non_null(str(v, "started_at"));
    json_decref(v);
    tw_ops_succeed(ops, id, json_pack("{s:i}", "items", 7));
    v = tw_ops_get(ops, id, 0, NULL);
    assert_string_equal(str(v, "state"), "succeeded");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "result"), "items")), 7);
    assert_non_null(str(v, "finished_at"));
    json_decref(v);
    /* Finished: the same key makes a new one. */
    assert_int_equal(
        tw_ops_create(ops, "prices.refresh", "westeurope USD", json_object(), id2, &joined, &err),
        TW_OK);
    assert_false(joined);
    assert_string_not_equal(id2, id);

    tw_ops_fail(ops, id3, "upstream_failed", "the API failed");
    v = tw_ops_get(ops, id3, 0, NULL);
    assert_string_equal(str(v, "state"), "failed");
    assert_string_equal(str(json_object_get(v, "error"), "code"), "upstream_failed");
    assert_string_equal(str(json_object_get(v, "error"), "message"), "the API failed");
    json_decref(v);
    assert_null(tw_ops_get(ops, "00000000-0000-4000-8000-000000000000", 0, NULL));
    tw_ops_free(ops);
}

struct finisher {
    struct tw_ops *ops;
    const char *id;
};

static void *finish_later(void *arg)
{
    struct finisher *f = arg;
    usleep(200 * 1000);
    tw_ops_fail(f->ops, f->id, "x", "y");
    return NULL;
}

static void test_wait(void **state)
{
    (void)state;
    struct tw_ops *ops = tw_ops_new(4);
    char id[TW_UUID_STRLEN + 1];
    bool joined;
    struct tw_error err = {0};
    assert_int_equal(tw_ops_create(ops, "k", "a", NULL, id, &joined, &err), TW_OK);
    /* Until the instant: about 300 ms. */
    int64_t t0 = tw_worker_now_ns();
    json_t *v = tw_ops_get(ops, id, t0 + 300 * TW_NS_PER_MS, NULL);
    int64_t ms = (tw_worker_now_ns() - t0) / TW_NS_PER_MS;
    assert_string_equal(str(v, "state"), "queued");
    assert_true(ms >= 290 && ms < 2000);
    json_decref(v);
    /* Told to stop: at once. */
    atomic_bool stopping = true;
    t0 = tw_worker_now_ns();
    v = tw_ops_get(ops, id, t0 + 10 * TW_NS_PER_S, &stopping);
    assert_true((tw_worker_now_ns() - t0) / TW_NS_PER_MS < 1000);
    json_decref(v);
    /* Finished by another thread after 200 ms: the wait ends then. */
    struct finisher f = {ops, id};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, finish_later, &f), 0);
    t0 = tw_worker_now_ns();
    v = tw_ops_get(ops, id, t0 + 10 * TW_NS_PER_S, NULL);
    ms = (tw_worker_now_ns() - t0) / TW_NS_PER_MS;
    pthread_join(t, NULL);
    assert_string_equal(str(v, "state"), "failed");
    assert_true(ms >= 150 && ms < 5000);
    json_decref(v);
    /* Waiters are counted. */
    assert_true(tw_ops_wait_claim(ops, 1));
    assert_false(tw_ops_wait_claim(ops, 1));
    tw_ops_wait_release(ops);
    assert_true(tw_ops_wait_claim(ops, 1));
    tw_ops_wait_release(ops);
    tw_ops_free(ops);
}

static void test_eviction(void **state)
{
    (void)state;
    struct tw_ops *ops = tw_ops_new(3);
    char id[4][TW_UUID_STRLEN + 1];
    bool joined;
    struct tw_error err = {0};
    const char *keys[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_ops_create(ops, "k", keys[i], NULL, id[i], &joined, &err), TW_OK);
    /* Full of unfinished: refused. */
    assert_int_equal(tw_ops_create(ops, "k", "d", NULL, id[3], &joined, &err), TW_ENOMEM);
    /* The oldest finished goes first: b and c finish, c before b; b is
     * older (created earlier) and is evicted. */
    tw_ops_fail(ops, id[2], "x", "y");
    tw_ops_fail(ops, id[1], "x", "y");
    assert_int_equal(tw_ops_create(ops, "k", "d", NULL, id[3], &joined, &err), TW_OK);
    json_t *v;
    assert_null(tw_ops_get(ops, id[1], 0, NULL));
    assert_non_null(v = tw_ops_get(ops, id[0], 0, NULL));
    json_decref(v);
    assert_non_null(v = tw_ops_get(ops, id[2], 0, NULL));
    json_decref(v);
    assert_non_null(v = tw_ops_get(ops, id[3], 0, NULL));
    json_decref(v);
    tw_ops_free(ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_wait),
        cmocka_unit_test(test_eviction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
