/* test_ingest.c - the writer: reports submitted from several threads are
 * all committed, in fewer transactions than reports (group commit), each
 * job told once; a repeated id is a repeat; submissions after the stop
 * are refused; with the writer held, what queued meanwhile is committed in
 * batches of exactly 64 (README: "up to 64 reports"), in order. */
#include "testhelp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/report.h"
#include "server/ingest.h"
#include "server/metrics.h"
#include "store/store.h"

#define N_THREADS 8
#define PER_THREAD 25

static char *fixture;
static size_t fixture_len;
static atomic_int done_calls;

static void on_done(struct tw_ingest_job *job)
{
    atomic_int *flag = job->arg;
    atomic_fetch_add(flag, 1);
    atomic_fetch_add(&done_calls, 1);
}

/* A job for the fixture report with id number N (heap; caller frees). */
static struct tw_ingest_job *make_job(int n, atomic_int *flag)
{
    struct tw_ingest_job *j = calloc(1, sizeof(*j));
    assert_non_null(j);
    j->rep = tw_report_new();
    assert_non_null(j->rep);
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(fixture, fixture_len, j->rep, &err), TW_OK);
    snprintf(j->rep->id, sizeof(j->rep->id), "00000000-0000-4000-8000-%012d", n);
    j->raw = fixture;
    j->raw_len = fixture_len;
    j->done = on_done;
    j->arg = flag;
    return j;
}

static void free_job(struct tw_ingest_job *j)
{
    tw_report_free(j->rep);
    free(j);
}

struct worker {
    struct tw_ingest *in;
    int base;
    struct tw_ingest_job *jobs[PER_THREAD];
    atomic_int flags[PER_THREAD];
};

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        atomic_init(&w->flags[i], 0);
        w->jobs[i] = make_job(w->base + i, &w->flags[i]);
        if (tw_ingest_submit(w->in, w->jobs[i]) != TW_OK)
            return (void *)1;
    }
    return NULL;
}

static void wait_for(atomic_int *flag)
{
    for (int i = 0; i < 10000 && !atomic_load(flag); i++)
        usleep(1000);
}

static void test_group_commit(void **state)
{
    (void)state;
    fixture = th_fixture("reports/web-03.json", &fixture_len);
    char *dir = th_tmpdir();
    char db[4200];
    snprintf(db, sizeof(db), "%s/t.db", dir);
    const char *labels[] = {"x"};
    struct tw_metrics *m = tw_metrics_new(labels, 1);
    struct tw_ingest *in = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_ingest_start(db, m, &in, &err), TW_OK);

    static struct worker w[N_THREADS];
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i].in = in;
        w[i].base = i * 1000 + 1;
        assert_int_equal(pthread_create(&t[i], NULL, run_worker, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        assert_null(rc);
    }
    for (int i = 0; i < N_THREADS; i++)
        for (int k = 0; k < PER_THREAD; k++) {
            wait_for(&w[i].flags[k]);
            assert_int_equal(atomic_load(&w[i].flags[k]), 1); /* told once */
            assert_true(w[i].jobs[k]->committed);
            assert_int_equal(w[i].jobs[k]->status, TW_PUT_STORED);
        }
    assert_int_equal(tw_ingest_depth(in), 0);

    /* The same id again: a repeat, nothing changes. */
    atomic_int again = 0;
    struct tw_ingest_job *rep = make_job(1, &again);
    assert_int_equal(tw_ingest_submit(in, rep), TW_OK);
    wait_for(&again);
    assert_true(rep->committed);
    assert_int_equal(rep->status, TW_PUT_REPEAT);

    /* Group commit: fewer batches than reports, all counted. */
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    unsigned long long batches = 0, stored = 0;
    const char *b = strstr(out.data, "\ntierwise_ingest_batches_total ");
    const char *s = strstr(out.data, "tierwise_ingest_reports_total{outcome=\"stored\"} ");
    assert_non_null(b);
    assert_non_null(s);
    sscanf(b, "\ntierwise_ingest_batches_total %llu", &batches);
    sscanf(s, "tierwise_ingest_reports_total{outcome=\"stored\"} %llu", &stored);
    assert_int_equal(stored, N_THREADS * PER_THREAD);
    /* At most 64 a batch; how the threads interleave decides the rest
     * (test_exact_batching holds the writer to pin it). */
    assert_true(batches >= (N_THREADS * PER_THREAD + 63) / 64 + 1);
    assert_true(batches <= N_THREADS * PER_THREAD + 1);
    tw_buf_cleanup(&out);

    /* After the stop: refused, not queued. */
    tw_ingest_stop(in);
    atomic_int late = 0;
    struct tw_ingest_job *lj = make_job(99999, &late);
    assert_int_equal(tw_ingest_submit(in, lj), TW_EINVAL);
    assert_int_equal(atomic_load(&late), 0);
    tw_ingest_free(in);

    /* Everything is in the database. */
    struct tw_store *st;
    assert_int_equal(tw_store_open(db, &st, &err), TW_OK);
    struct tw_store_stats ss;
    assert_int_equal(tw_store_stats(st, &ss, &err), TW_OK);
    assert_int_equal(ss.reports, N_THREADS * PER_THREAD);
    assert_int_equal(tw_store_check(st, &err), TW_OK);
    tw_store_close(st);

    for (int i = 0; i < N_THREADS; i++)
        for (int k = 0; k < PER_THREAD; k++)
            free_job(w[i].jobs[k]);
    free_job(rep);
    free_job(lj);
    tw_metrics_free(m);
    th_rmtree(dir);
    free(dir);
    free(fixture);
}

/*
 * Holding the writer: the first job's DONE (called on the writer thread
 * after its batch commits) waits until the test lets it go, so every job
 * submitted meanwhile is queued, and the writer then takes them 64 at a
 * time.  Each job notes the count of committed batches when it is told,
 * which is the number of its own batch.
 */
#define N_HELD 200
#define BATCH_DOCUMENTED 64 /* README "tierwise serve": "up to 64 reports" */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool held, released;
static struct tw_ingest *held_in;

static void on_done_hold(struct tw_ingest_job *job)
{
    pthread_mutex_lock(&hold_lock);
    held = true;
    pthread_cond_broadcast(&hold_cond);
    while (!released)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    on_done(job);
}

static void on_done_batch(struct tw_ingest_job *job)
{
    /* arg: where to note the batch number (an atomic_int, 0 until told) */
    atomic_store((atomic_int *)job->arg, (int)tw_ingest_commits(held_in));
    atomic_fetch_add(&done_calls, 1);
}

static void test_exact_batching(void **state)
{
    (void)state;
    fixture = th_fixture("reports/web-03.json", &fixture_len);
    char *dir = th_tmpdir();
    char db[4200];
    snprintf(db, sizeof(db), "%s/t.db", dir);
    const char *labels[] = {"x"};
    struct tw_metrics *m = tw_metrics_new(labels, 1);
    struct tw_error err = {0};
    assert_int_equal(tw_ingest_start(db, m, &held_in, &err), TW_OK);

    atomic_int plug_flag = 0;
    struct tw_ingest_job *plug = make_job(1, &plug_flag);
    plug->done = on_done_hold;
    assert_int_equal(tw_ingest_submit(held_in, plug), TW_OK);
    pthread_mutex_lock(&hold_lock);
    while (!held)
        pthread_cond_wait(&hold_cond, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
    assert_int_equal(tw_ingest_commits(held_in), 1);

    static struct tw_ingest_job *jobs[N_HELD];
    static atomic_int batch_of[N_HELD];
    for (int i = 0; i < N_HELD; i++) {
        atomic_init(&batch_of[i], 0);
        jobs[i] = make_job(i + 2, &batch_of[i]);
        jobs[i]->done = on_done_batch;
        assert_int_equal(tw_ingest_submit(held_in, jobs[i]), TW_OK);
    }
    assert_int_equal(tw_ingest_depth(held_in), N_HELD);

    pthread_mutex_lock(&hold_lock);
    released = true;
    pthread_cond_broadcast(&hold_cond);
    pthread_mutex_unlock(&hold_lock);
    for (int i = 0; i < N_HELD; i++) {
        wait_for(&batch_of[i]);
        assert_true(jobs[i]->committed);
        assert_int_equal(jobs[i]->status, TW_PUT_STORED);
    }
    assert_int_equal(atomic_load(&plug_flag), 1);

    /* 200 queued: batches 2-5 of 64, 64, 64 and 8, in submission order. */
    int sizes[N_HELD / BATCH_DOCUMENTED + 3] = {0};
    for (int i = 0; i < N_HELD; i++) {
        int b = atomic_load(&batch_of[i]);
        assert_int_equal(b, 2 + i / BATCH_DOCUMENTED);
        sizes[b]++;
    }
    assert_int_equal(sizes[2], 64);
    assert_int_equal(sizes[3], 64);
    assert_int_equal(sizes[4], 64);
    assert_int_equal(sizes[5], N_HELD - 3 * 64);
    assert_int_equal(tw_ingest_commits(held_in), 1 + (N_HELD + 63) / 64);

    /* The metrics count the same batches. */
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    unsigned long long batches = 0;
    const char *b = strstr(out.data, "\ntierwise_ingest_batches_total ");
    assert_non_null(b);
    sscanf(b, "\ntierwise_ingest_batches_total %llu", &batches);
    assert_int_equal(batches, 5);
    tw_buf_cleanup(&out);

    tw_ingest_free(held_in);
    held_in = NULL;
    for (int i = 0; i < N_HELD; i++)
        free_job(jobs[i]);
    free_job(plug);
    tw_metrics_free(m);
    th_rmtree(dir);
    free(dir);
    free(fixture);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_commit),
        cmocka_unit_test(test_exact_batching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
