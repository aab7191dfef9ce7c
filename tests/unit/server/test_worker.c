/* test_worker.c - the background worker: jobs due now run in submission
 * order; timed jobs run at their instant by the real clock (CLOCK_REALTIME),
 * earliest first, never before it; a full queue refuses with TW_ENOMEM
 * (not a periodic job's own tw_worker_again_at);
 * a draining stop runs what is due and cancels what is due later; a
 * cancelling stop cancels what has not started; a stop whose job outlives
 * the timeout returns false and leaves the job to end on its own; a batch
 * worker gets whatever is queued up to its batch size. */
#include "testhelp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/time.h"
#include "server/worker.h"

struct rec {
    pthread_mutex_t lock;
    int order[64];  /* job numbers in the order they ran */
    int64_t at[64]; /* when each ran (CLOCK_REALTIME ns) */
    int n;
    int cancelled[64];
    int n_cancelled;
};

struct tjob {
    struct tw_worker_job wj;
    struct rec *rec;
    int num;
    /* a job that blocks until released */
    atomic_bool *gate;
    atomic_bool *entered;
};

static void run_job(struct tw_worker_job *wj)
{
    struct tjob *j = wj->arg;
    if (j->entered)
        atomic_store(j->entered, true);
    while (j->gate && !atomic_load(j->gate))
        usleep(1000);
    pthread_mutex_lock(&j->rec->lock);
    j->rec->at[j->rec->n] = tw_worker_now_ns();
    j->rec->order[j->rec->n++] = j->num;
    pthread_mutex_unlock(&j->rec->lock);
}

static void cancel_job(struct tw_worker_job *wj)
{
    struct tjob *j = wj->arg;
    pthread_mutex_lock(&j->rec->lock);
    j->rec->cancelled[j->rec->n_cancelled++] = j->num;
    pthread_mutex_unlock(&j->rec->lock);
}

static void init_job(struct tjob *j, struct rec *r, int num)
{
    memset(j, 0, sizeof(*j));
    j->wj.run = run_job;
    j->wj.cancel = cancel_job;
    j->wj.arg = j;
    j->rec = r;
    j->num = num;
}

static struct rec *rec_new(void)
{
    struct rec *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

static void rec_free(struct rec *r)
{
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static int ran(struct rec *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->n;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static void wait_ran(struct rec *r, int n)
{
    for (int i = 0; i < 5000 && ran(r) < n; i++)
        usleep(1000);
}

static struct tw_worker *start(size_t queue_max)
{
    struct tw_worker_opts o = {.name = "the test worker", .queue_max = queue_max};
    struct tw_worker *w = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_worker_start(&o, &w, &err), TW_OK);
    return w;
}

static void test_order(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(0);
    static struct tjob jobs[50];
    for (int i = 0; i < 50; i++) {
        init_job(&jobs[i], r, i);
        assert_int_equal(tw_worker_submit(w, &jobs[i].wj), TW_OK);
    }
    wait_ran(r, 50);
    assert_int_equal(ran(r), 50);
    for (int i = 0; i < 50; i++)
        assert_int_equal(r->order[i], i);
    assert_int_equal(tw_worker_depth(w), 0);
    assert_true(tw_worker_stop(w, TW_WORKER_DRAIN, 0));
    tw_worker_free(w);
    rec_free(r);
}

static void test_timed(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(0);
    struct tjob a, b, c, now, past;
    init_job(&a, r, 1);
    init_job(&b, r, 2);
    init_job(&c, r, 3);
    init_job(&now, r, 4);
    init_job(&past, r, 5);
    int64_t t0 = tw_worker_now_ns();
    /* Submitted latest first: they run earliest first. */
    assert_int_equal(tw_worker_submit_at(w, &c.wj, t0 + 300 * TW_NS_PER_MS), TW_OK);
    assert_int_equal(tw_worker_submit_at(w, &b.wj, t0 + 200 * TW_NS_PER_MS), TW_OK);
    assert_int_equal(tw_worker_submit_at(w, &a.wj, t0 + 100 * TW_NS_PER_MS), TW_OK);
    assert_int_equal(tw_worker_submit(w, &now.wj), TW_OK);
    assert_int_equal(tw_worker_submit_at(w, &past.wj, t0 - TW_NS_PER_S), TW_OK); /* due */
    wait_ran(r, 5);
    assert_int_equal(ran(r), 5);
    assert_int_equal(r->order[0], 4);
    assert_int_equal(r->order[1], 5);
    assert_int_equal(r->order[2], 1);
    assert_int_equal(r->order[3], 2);
    assert_int_equal(r->order[4], 3);
    /* Never before the instant, and not long after it (a loaded machine
     * may be late; 250 ms is generous). */
    int64_t want[3] = {100, 200, 300};
    for (int i = 0; i < 3; i++) {
        int64_t late_ms = (r->at[2 + i] - t0) / TW_NS_PER_MS - want[i];
        assert_true(late_ms >= 0);
        assert_true(late_ms < 250);
    }
    tw_worker_free(w);
    rec_free(r);
}

/* A timed job whose instant passed while the worker was busy runs before
 * a job submitted now, after that instant: due order is instant order. */
static void test_due_before_now(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(0);
    atomic_bool gate = false, entered = false;
    struct tjob hold, timed, now;
    init_job(&hold, r, 1);
    hold.gate = &gate;
    hold.entered = &entered;
    init_job(&timed, r, 2);
    init_job(&now, r, 3);
    assert_int_equal(tw_worker_submit(w, &hold.wj), TW_OK);
    for (int i = 0; i < 5000 && !atomic_load(&entered); i++)
        usleep(1000);
    assert_true(atomic_load(&entered));
    int64_t due = tw_worker_now_ns() + 20 * TW_NS_PER_MS;
    assert_int_equal(tw_worker_submit_at(w, &timed.wj, due), TW_OK);
    while (tw_worker_now_ns() <= due + 10 * TW_NS_PER_MS)
        usleep(1000);
    assert_int_equal(tw_worker_submit(w, &now.wj), TW_OK);
    atomic_store(&gate, true);
    wait_ran(r, 3);
    assert_int_equal(ran(r), 3);
    assert_int_equal(r->order[0], 1);
    assert_int_equal(r->order[1], 2);
    assert_int_equal(r->order[2], 3);
    assert_true(tw_worker_stop(w, TW_WORKER_DRAIN, 0));
    tw_worker_free(w);
    rec_free(r);
}

static void test_full_queue(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(3);
    atomic_bool gate = false, entered = false;
    struct tjob blocker, q[4];
    init_job(&blocker, r, 0);
    blocker.gate = &gate;
    blocker.entered = &entered;
    assert_int_equal(tw_worker_submit(w, &blocker.wj), TW_OK);
    for (int i = 0; i < 1000 && !atomic_load(&entered); i++)
        usleep(1000);
    assert_true(atomic_load(&entered)); /* running: not counted in the queue */
    for (int i = 0; i < 3; i++) {
        init_job(&q[i], r, i + 1);
        assert_int_equal(tw_worker_submit(w, &q[i].wj), TW_OK);
    }
    init_job(&q[3], r, 4);
    assert_int_equal(tw_worker_submit(w, &q[3].wj), TW_ENOMEM);
    assert_int_equal(tw_worker_submit_at(w, &q[3].wj, tw_worker_now_ns() + TW_NS_PER_S), TW_ENOMEM);
    assert_int_equal(tw_worker_depth(w), 3);
    /* A periodic job queuing itself again is never refused for a full
     * queue: due at once here, it runs after those queued. */
    struct tjob periodic;
    init_job(&periodic, r, 5);
    assert_int_equal(tw_worker_again_at(w, &periodic.wj, 1), TW_OK);
    assert_int_equal(tw_worker_depth(w), 4);
    atomic_store(&gate, true);
    wait_ran(r, 5);
    assert_int_equal(ran(r), 5);
    assert_int_equal(r->order[4], 5);
    /* Room again. */
    assert_int_equal(tw_worker_submit(w, &q[3].wj), TW_OK);
    wait_ran(r, 6);
    assert_int_equal(r->order[5], 4);
    tw_worker_stop(w, TW_WORKER_DRAIN, 0);
    assert_int_equal(tw_worker_again_at(w, &periodic.wj, 1), TW_EINVAL);
    tw_worker_free(w);
    rec_free(r);
}

static void test_stop_drain(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(0);
    atomic_bool gate = false, entered = false;
    struct tjob blocker, due[3], later[2], refused;
    init_job(&blocker, r, 0);
    blocker.gate = &gate;
    blocker.entered = &entered;
    assert_int_equal(tw_worker_submit(w, &blocker.wj), TW_OK);
    for (int i = 0; i < 1000 && !atomic_load(&entered); i++)
        usleep(1000);
    for (int i = 0; i < 3; i++) {
        init_job(&due[i], r, 10 + i);
        assert_int_equal(tw_worker_submit(w, &due[i].wj), TW_OK);
    }
    for (int i = 0; i < 2; i++) {
        init_job(&later[i], r, 20 + i);
        assert_int_equal(
            tw_worker_submit_at(w, &later[i].wj, tw_worker_now_ns() + 3600 * TW_NS_PER_S), TW_OK);
    }
    atomic_store(&gate, true);
    assert_true(tw_worker_stop(w, TW_WORKER_DRAIN, 5000));
    assert_true(tw_worker_stopping(w));
    /* The due jobs ran, in order; the later ones were cancelled. */
    assert_int_equal(r->n, 4);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r->order[1 + i], 10 + i);
    assert_int_equal(r->n_cancelled, 2);
    assert_int_equal(r->cancelled[0], 20);
    assert_int_equal(r->cancelled[1], 21);
    init_job(&refused, r, 99);
    assert_int_equal(tw_worker_submit(w, &refused.wj), TW_EINVAL);
    assert_true(tw_worker_stop(w, TW_WORKER_DRAIN, 0)); /* again: nothing */
    tw_worker_free(w);
    rec_free(r);
}

static void test_stop_cancel_and_timeout(void **state)
{
    (void)state;
    struct rec *r = rec_new();
    struct tw_worker *w = start(0);
    /* The blocker outlives the stop, so it must outlive this function's
     * frame too: static. */
    static struct tjob blocker, queued[3];
    init_job(&blocker, r, 0);
    static atomic_bool sgate, sentered;
    atomic_store(&sgate, false);
    atomic_store(&sentered, false);
    blocker.gate = &sgate;
    blocker.entered = &sentered;
    assert_int_equal(tw_worker_submit(w, &blocker.wj), TW_OK);
    for (int i = 0; i < 1000 && !atomic_load(&sentered); i++)
        usleep(1000);
    for (int i = 0; i < 3; i++) {
        init_job(&queued[i], r, i + 1);
        assert_int_equal(tw_worker_submit(w, &queued[i].wj), TW_OK);
    }
    int64_t t0 = tw_worker_now_ns();
    /* The blocker still runs at the timeout: false, within about 200 ms. */
    assert_false(tw_worker_stop(w, TW_WORKER_CANCEL, 200));
    int64_t took_ms = (tw_worker_now_ns() - t0) / TW_NS_PER_MS;
    assert_true(took_ms >= 190);
    assert_true(took_ms < 2000);
    /* The queued ones were cancelled at once, in order, and never ran. */
    assert_int_equal(r->n_cancelled, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r->cancelled[i], i + 1);
    assert_int_equal(ran(r), 0);
    tw_worker_free(w); /* the detached thread frees it when the job ends */
    atomic_store(&sgate, true);
    wait_ran(r, 1);
    assert_int_equal(ran(r), 1);
    usleep(50 * 1000); /* let the thread end and free the worker */
    rec_free(r);
}

/* A batch worker: whatever is queued, up to batch_max at once, in order. */
struct batch_ctx {
    pthread_mutex_t lock;
    size_t sizes[64];
    int n_batches;
    int order[256];
    int n;
    atomic_bool *gate;
};

static void run_batch(void *ctx, struct tw_worker_job **jobs, size_t n)
{
    struct batch_ctx *b = ctx;
    while (b->n_batches == 0 && !atomic_load(b->gate))
        usleep(1000); /* the first batch holds the worker */
    pthread_mutex_lock(&b->lock);
    b->sizes[b->n_batches++] = n;
    for (size_t i = 0; i < n; i++)
        b->order[b->n++] = ((struct tjob *)jobs[i]->arg)->num;
    pthread_mutex_unlock(&b->lock);
}

static void test_batch(void **state)
{
    (void)state;
    atomic_bool gate = false;
    struct batch_ctx b = {.gate = &gate};
    pthread_mutex_init(&b.lock, NULL);
    struct tw_worker_opts o = {.batch_max = 8, .batch = run_batch, .ctx = &b};
    struct tw_worker *w = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_worker_start(&o, &w, &err), TW_OK);
    struct rec *r = rec_new();
    static struct tjob jobs[21];
    init_job(&jobs[0], r, 0);
    assert_int_equal(tw_worker_submit(w, &jobs[0].wj), TW_OK);
    while (tw_worker_depth(w) != 0)
        usleep(1000);
    usleep(20 * 1000);
    for (int i = 1; i < 21; i++) {
        init_job(&jobs[i], r, i);
        assert_int_equal(tw_worker_submit(w, &jobs[i].wj), TW_OK);
    }
    atomic_store(&gate, true);
    assert_true(tw_worker_stop(w, TW_WORKER_DRAIN, 0));
    /* 1, then the 20 queued meanwhile as 8 + 8 + 4. */
    assert_int_equal(b.n_batches, 4);
    assert_int_equal(b.sizes[0], 1);
    assert_int_equal(b.sizes[1], 8);
    assert_int_equal(b.sizes[2], 8);
    assert_int_equal(b.sizes[3], 4);
    for (int i = 0; i < 21; i++)
        assert_int_equal(b.order[i], i);
    tw_worker_free(w);
    pthread_mutex_destroy(&b.lock);
    rec_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_timed),
        cmocka_unit_test(test_due_before_now),
        cmocka_unit_test(test_full_queue),
        cmocka_unit_test(test_stop_drain),
        cmocka_unit_test(test_stop_cancel_and_timeout),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
