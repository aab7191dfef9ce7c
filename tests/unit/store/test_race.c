/* test_race.c - several handles (as several backends) racing on one
 * store, each on its own thread: of those claiming one action, moving it
 * from one state, or adding one idempotency key at once, exactly one wins
 * and the others are refused in words; executors draining one queue run
 * every action exactly once, its audit log complete; an ARM put and the
 * reports of the same VM at once leave one VM and no disk doubled. */
#include "testhelp.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "store/store.h"
#include "th_store.h"

#define HANDLES 5
#define ROUNDS 25

struct fx {
    char *dir;
    char loc[4096];
    struct tw_store *h[HANDLES];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tierwise.db", f->loc, sizeof(f->loc));
    struct tw_error err = {0};
    for (int i = 0; i < HANDLES; i++)
        if (tw_store_open(f->loc, &f->h[i], &err) != TW_OK)
            fail_msg("open %d: %s", i, err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < HANDLES; i++)
        tw_store_close(f->h[i]);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* ---- one call on every handle at once ---- */

enum what { CLAIM, MOVE, ADD_KEY };

struct race {
    struct fx *f;
    pthread_barrier_t start, end;
    enum what what;
    int64_t id;          /* the action raced for */
    int round;
    bool stop;
    enum tw_err rc[HANDLES];
    char msg[HANDLES][512];
};

struct seat {
    struct race *r;
    int me;
};

static void *racer(void *arg)
{
    struct seat *s = arg;
    struct race *r = s->r;
    for (;;) {
        pthread_barrier_wait(&r->start);
        if (r->stop)
            return NULL;
        struct tw_store *st = r->f->h[s->me];
        struct tw_error err = {0};
        char owner[32];
        snprintf(owner, sizeof(owner), "exec-%d", s->me);
        enum tw_err rc = TW_OK;
        if (r->what == CLAIM) {
            rc = tw_store_action_claim(st, r->id, owner, 1000000, 60000, NULL, &err);
        } else if (r->what == MOVE) {
            rc = tw_store_action_move(st, r->id, TW_ACT_PLANNED, TW_ACT_CHECKED, owner, NULL,
                                      &err);
        } else {
            char key[32];
            snprintf(key, sizeof(key), "key-%d", r->round);
            struct tw_store_action_new a = {.kind = "downgrade", .idempotency_key = key};
            rc = tw_store_action_add(st, &a, NULL, &err);
        }
        r->rc[s->me] = rc;
        snprintf(r->msg[s->me], sizeof(r->msg[s->me]), "%s", rc == TW_OK ? "" : err.msg);
        pthread_barrier_wait(&r->end);
    }
}

/* ROUNDS rounds of WHAT on every handle at once, each on a new action;
 * checks that one handle won and the others failed with LOSER. */
static void race_rounds(struct fx *f, enum what what, enum tw_err loser, const char *said)
{
    struct race r = {.f = f, .what = what};
    pthread_barrier_init(&r.start, NULL, HANDLES + 1);
    pthread_barrier_init(&r.end, NULL, HANDLES + 1);
    pthread_t t[HANDLES];
    struct seat seats[HANDLES];
    for (int i = 0; i < HANDLES; i++) {
        seats[i] = (struct seat){.r = &r, .me = i};
        assert_int_equal(pthread_create(&t[i], NULL, racer, &seats[i]), 0);
    }
    /* What went wrong is said after the threads are stopped and joined
     * (a failure inside would leave them waiting on a closed handle). */
    char failed[1024] = "";
    struct tw_error err = {0};
    for (r.round = 0; r.round < ROUNDS && !failed[0]; r.round++) {
        struct tw_store_action_new a = {.kind = "downgrade"};
        if (tw_store_action_add(f->h[0], &a, &r.id, &err) != TW_OK) {
            snprintf(failed, sizeof(failed), "add: %.700s", err.msg);
            break;
        }
        pthread_barrier_wait(&r.start);
        pthread_barrier_wait(&r.end);
        int won = -1, wins = 0;
        for (int i = 0; i < HANDLES && !failed[0]; i++) {
            if (r.rc[i] == TW_OK) {
                wins++;
                won = i;
            } else if (r.rc[i] != loser || !strstr(r.msg[i], said)) {
                snprintf(failed, sizeof(failed), "round %d, handle %d: %.700s (code %d)",
                         r.round, i, r.msg[i], (int)r.rc[i]);
            }
        }
        if (!failed[0] && wins != 1)
            snprintf(failed, sizeof(failed), "round %d: %d handles won", r.round, wins);
        if (failed[0] || what == ADD_KEY)
            continue;
        char owner[32];
        snprintf(owner, sizeof(owner), "exec-%d", won);
        struct tw_store_action_row row;
        size_t n = 0;
        if (tw_store_action_get(f->h[0], r.id, &row, &err) != TW_OK ||
            tw_store_action_log_count(f->h[0], r.id, &n, &err) != TW_OK) {
            snprintf(failed, sizeof(failed), "reading action %lld: %.700s", (long long)r.id,
                     err.msg);
            continue;
        }
        if (strcmp(row.claim_owner, owner) != 0 ||
            strcmp(row.state, what == MOVE ? "checked" : "planned") != 0 ||
            n != (what == MOVE ? 2u : 1u))
            snprintf(failed, sizeof(failed), "round %d: action %lld is %.16s, claimed by %.64s, "
                     "with %zu lines in its log; %s won", r.round, (long long)r.id, row.state,
                     row.claim_owner, n, owner);
        free(row.operation_url);
    }
    r.stop = true;
    pthread_barrier_wait(&r.start);
    for (int i = 0; i < HANDLES; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&r.start);
    pthread_barrier_destroy(&r.end);
    if (failed[0])
        fail_msg("%s", failed);
}

static void test_claim_race(void **state)
{
    race_rounds(*state, CLAIM, TW_EPERM, "is claimed by exec-");
}

static void test_move_race(void **state)
{
    race_rounds(*state, MOVE, TW_EPERM, "another worker moved it");
}

static void test_key_race(void **state)
{
    race_rounds(*state, ADD_KEY, TW_EINVAL, "exists already");
}

/* ---- executors draining one queue ---- */

#define QUEUE 30

struct drain {
    struct fx *f;
    int me;
    int sent[QUEUE + 1]; /* by action id: times this executor moved it to sent */
    int errors;
};

static const enum tw_action_state path[] = {TW_ACT_PLANNED, TW_ACT_CHECKED, TW_ACT_SENT,
                                            TW_ACT_VERIFIED, TW_ACT_DONE};

/* As the executor: what is due, claimed, moved along while held, released;
 * a claim or move refused is another's work, left to it. */
static void *drainer(void *arg)
{
    struct drain *d = arg;
    struct tw_store *st = d->f->h[d->me];
    char owner[32];
    snprintf(owner, sizeof(owner), "exec-%d", d->me);
    for (int pass = 0; pass < 50; pass++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        struct tw_error err = {0};
        int64_t *ids = NULL;
        size_t n = 0;
        if (tw_store_actions_due(st, INT64_MAX / 2, true, 0, &ids, &n, &err) != TW_OK) {
            d->errors++;
            break;
        }
        free(ids);
        if (n == 0)
            break;
        for (int64_t id = 1; id <= QUEUE; id++) {
            enum tw_action_state s;
            if (tw_store_action_state(st, id, &s, NULL, &err) != TW_OK) {
                d->errors++;
                continue;
            }
            if (s == TW_ACT_DONE)
                continue;
            enum tw_err rc = tw_store_action_claim(st, id, owner, now, 60000, NULL, &err);
            if (rc == TW_EPERM)
                continue;
            if (rc != TW_OK) {
                d->errors++;
                continue;
            }
            for (size_t k = 0; k + 1 < sizeof(path) / sizeof(path[0]); k++) {
                rc = tw_store_action_move(st, id, path[k], path[k + 1], owner, NULL, &err);
                if (rc == TW_OK && path[k + 1] == TW_ACT_SENT)
                    d->sent[id]++;
                if (rc != TW_OK && rc != TW_EPERM)
                    d->errors++;
            }
            rc = tw_store_action_release(st, id, owner, &err);
            if (rc != TW_OK && rc != TW_EPERM)
                d->errors++;
        }
    }
    return NULL;
}

static void test_executors_drain(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    for (int i = 0; i < QUEUE; i++) {
        struct tw_store_action_new a = {.kind = "downgrade", .due_at = "2026-12-05T20:00:00Z"};
        int64_t id;
        assert_int_equal(tw_store_action_add(f->h[0], &a, &id, &err), TW_OK);
        assert_int_equal(id, i + 1);
    }
    struct drain d[HANDLES];
    pthread_t t[HANDLES];
    for (int i = 0; i < HANDLES; i++) {
        memset(&d[i], 0, sizeof(d[i]));
        d[i].f = f;
        d[i].me = i;
        assert_int_equal(pthread_create(&t[i], NULL, drainer, &d[i]), 0);
    }
    for (int i = 0; i < HANDLES; i++)
        pthread_join(t[i], NULL);
    for (int64_t id = 1; id <= QUEUE; id++) {
        int sent = 0;
        for (int i = 0; i < HANDLES; i++) {
            assert_int_equal(d[i].errors, 0);
            sent += d[i].sent[id];
        }
        if (sent != 1)
            fail_msg("action %lld was sent %d times", (long long)id, sent);
        enum tw_action_state s;
        int attempts;
        assert_int_equal(tw_store_action_state(f->h[0], id, &s, &attempts, &err), TW_OK);
        assert_int_equal(s, TW_ACT_DONE);
        assert_int_equal(attempts, 1);
        /* The log: planned, then each of the four moves once. */
        struct tw_store_action_move_row *m;
        size_t n;
        assert_int_equal(tw_store_action_moves(f->h[0], id, &m, &n, &err), TW_OK);
        assert_int_equal(n, 5);
        for (size_t k = 1; k < n; k++) {
            assert_string_equal(m[k].from_state, tw_action_state_name(path[k - 1]));
            assert_string_equal(m[k].to_state, tw_action_state_name(path[k]));
            assert_string_equal(m[k].owner, m[1].owner);
        }
        free(m);
    }
}

/* ---- an ARM put and reports of one VM at once ---- */

#define SUB "3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f"
#define PUTS 15

struct arm_side {
    struct tw_store *st;
    struct tw_vm vm;
    struct tw_store_arm_disk disks[3];
    int errors;
};

static void arm_disk(struct tw_store_arm_disk *d, const char *name, enum tw_disk_role role,
                     int lun, int64_t size)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->disk.name, sizeof(d->disk.name), "%s", name);
    d->disk.role = role;
    d->disk.lun = lun;
    snprintf(d->disk.sku, sizeof(d->disk.sku), "Premium_LRS");
    d->disk.size_gib = size;
    d->disk.caching = TW_CACHE_NONE;
    snprintf(d->disk.managed_disk_id, sizeof(d->disk.managed_disk_id),
             "/SUBSCRIPTIONS/" SUB "/RESOURCEGROUPS/RG-SAP/providers/Microsoft.Compute/disks/%s",
             name);
    d->attrs.max_shares = 1;
    d->attrs.bursting = TW_TRI_NO;
    snprintf(d->attrs.disk_state, sizeof(d->attrs.disk_state), "Reserved");
}

static void *arm_puts(void *arg)
{
    struct arm_side *a = arg;
    for (int i = 0; i < PUTS; i++) {
        snprintf(a->disks[1].disk.sku, sizeof(a->disks[1].disk.sku), "%s",
                 i % 2 ? "StandardSSD_LRS" : "Premium_LRS");
        struct tw_store_arm_vm v = {.vm = &a->vm, .power_state = i % 2 ? "running" : "deallocated",
                                    .n_disks = 3, .disks = a->disks};
        char at[40];
        snprintf(at, sizeof(at), "2026-12-06T10:%02d:00Z", i);
        struct tw_error err = {0};
        if (tw_store_arm_vm_put(a->st, &v, at, NULL, NULL, NULL, &err) != TW_OK) {
            fprintf(stderr, "ARM put %d: %s\n", i, err.msg);
            a->errors++;
        }
    }
    return NULL;
}

struct report_side {
    struct tw_store *st;
    struct tw_report *r;
    int errors;
};

static void *report_puts(void *arg)
{
    struct report_side *s = arg;
    for (int i = 0; i < PUTS; i++) {
        snprintf(s->r->id, sizeof(s->r->id), "00000000-0000-4000-8000-%012d", i);
        snprintf(s->r->created_at, sizeof(s->r->created_at), "2026-12-06T10:%02d:30Z", i);
        enum tw_put_status status;
        struct tw_error err = {0}, one = {0};
        const struct tw_report *reps[1] = {s->r};
        if (tw_store_put_reports(s->st, reps, NULL, NULL, 1, "2026-12-07T00:00:00Z", &status,
                                 &one, &err) != TW_OK ||
            status != TW_PUT_STORED) {
            fprintf(stderr, "report %d: %s%s\n", i, err.msg, one.msg);
            s->errors++;
        }
    }
    return NULL;
}

static void test_arm_and_ingest(void **state)
{
    struct fx *f = *state;
    struct arm_side a = {.st = f->h[0]};
    snprintf(a.vm.name, sizeof(a.vm.name), "sap-db-01");
    snprintf(a.vm.resource_id, sizeof(a.vm.resource_id),
             "/subscriptions/" SUB "/resourceGroups/RG-SAP/providers/Microsoft.Compute/"
             "virtualMachines/SAP-DB-01");
    snprintf(a.vm.subscription_id, sizeof(a.vm.subscription_id), SUB);
    snprintf(a.vm.resource_group, sizeof(a.vm.resource_group), "RG-SAP");
    snprintf(a.vm.location, sizeof(a.vm.location), "westeurope");
    snprintf(a.vm.vm_size, sizeof(a.vm.vm_size), "Standard_E16ds_v5");
    arm_disk(&a.disks[0], "sap-db-01-os", TW_DISK_OS, -1, 128);
    arm_disk(&a.disks[1], "sap-db-01-data0", TW_DISK_DATA, 0, 2048);
    arm_disk(&a.disks[2], "sap-db-01-data1", TW_DISK_DATA, 1, 2048);
    size_t len;
    char *buf = th_fixture("reports/sap-db-01.json", &len);
    struct report_side r = {.st = f->h[1], .r = tw_report_new()};
    struct tw_error err = {0};
    if (tw_report_from_json(buf, len, r.r, &err) != TW_OK)
        fail_msg("sap-db-01.json: %s", err.msg);
    free(buf);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, arm_puts, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, report_puts, &r), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    tw_report_free(r.r);
    assert_int_equal(a.errors + r.errors, 0);
    struct tw_store_vm_row *vms;
    size_t n;
    assert_int_equal(tw_store_vms(f->h[2], &vms, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    tw_store_vm_rows_free(vms, n);
    /* Each disk one row, whichever side stored it first (names compared
     * without regard to case, as both sides match them), attached. */
    assert_int_equal(th_sql_int(f->loc, "SELECT count(*) FROM disks"),
                     th_sql_int(f->loc, "SELECT count(DISTINCT lower(name)) FROM disks"));
    assert_int_equal(th_sql_int(f->loc, "SELECT count(*) FROM disks WHERE detached_ms IS NULL "
                                        "AND lower(name) IN ('sap-db-01-os', 'sap-db-01-data0', "
                                        "'sap-db-01-data1')"),
                     3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_claim_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_executors_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arm_and_ingest, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
