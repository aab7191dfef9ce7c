/* test_actions.c - the actions of schema 5: what an action keeps (its VM,
 * policy, reason, saving, last move), the audit log, the executor's due
 * queue (sent and verified resumed whatever their due time), claims with
 * leases under two handles, the due time moved, and a disk's original SKU
 * (the first downgrade's kept, handed to the savings walk). */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/time.h"
#include "store/store.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
};

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

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_location(f->dir, "tierwise.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* VM 1 sap-db-01 with its disks (disk 2 is its first data disk). */
    struct tw_report *r = load("sap-db-01.json");
    enum tw_put_status status;
    const struct tw_report *reps[1] = {r};
    if (tw_store_put_reports(f->st, reps, NULL, NULL, 1, "2026-11-30T00:00:00Z", &status, NULL,
                             &err) != TW_OK ||
        status != TW_PUT_STORED)
        fail_msg("report: %s", err.msg);
    tw_report_free(r);
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

static int64_t add(struct tw_store *st, const char *key, const char *due, bool dry_run)
{
    struct tw_store_action_new a = {.disk_id = 2, .kind = "downgrade",
                                    .from_sku = "Premium_LRS", .to_sku = "StandardSSD_LRS",
                                    .due_at = due, .idempotency_key = key, .dry_run = dry_run,
                                    .policy = "dev-weekends",
                                    .reason = "window Fri 20:00-Mon 06:00 of dev-weekends",
                                    .saving = "12.34", .currency = "EUR"};
    int64_t id = 0;
    struct tw_error err = {0};
    if (tw_store_action_add(st, &a, &id, &err) != TW_OK)
        fail_msg("add: %s", err.msg);
    return id;
}

static void test_row_and_log(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = add(f->st, "k1", "2026-12-05T20:05:00Z", false);
    struct tw_store_action_row r;
    assert_int_equal(tw_store_action_get(f->st, id, &r, &err), TW_OK);
    assert_int_equal(r.vm_id, 1); /* the disk's VM */
    assert_int_equal(r.disk_id, 2);
    assert_string_equal(r.vm, "sap-db-01");
    assert_string_equal(r.disk, "sap-db-01-data0");
    assert_non_null(strstr(r.vm_resource_id, "/virtualMachines/sap-db-01"));
    assert_non_null(strstr(r.disk_resource_id, "/disks/sap-db-01-data0"));
    assert_string_equal(r.kind, "downgrade");
    assert_string_equal(r.state, "planned");
    assert_string_equal(r.policy, "dev-weekends");
    assert_string_equal(r.reason, "window Fri 20:00-Mon 06:00 of dev-weekends");
    assert_string_equal(r.saving, "12.34");
    assert_string_equal(r.currency, "EUR");
    assert_string_equal(r.due_at, "2026-12-05T20:05:00Z");
    int64_t due;
    assert_true(tw_rfc3339_ms("2026-12-05T20:05:00Z", &due));
    assert_int_equal(r.due_ms, due);
    assert_int_equal(r.attempts, 0);
    assert_false(r.dry_run);
    assert_string_equal(r.operation_url, "");
    assert_true(r.updated_at[0] != '\0');
    char first[40];
    snprintf(first, sizeof(first), "%s", r.updated_at);
    free(r.operation_url);

    /* The first line of the log is the plan itself. */
    struct tw_store_action_move_row *m;
    size_t n;
    assert_int_equal(tw_store_action_moves(f->st, id, &m, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_string_equal(m[0].from_state, "");
    assert_string_equal(m[0].to_state, "planned");
    assert_string_equal(m[0].detail, "window Fri 20:00-Mon 06:00 of dev-weekends");
    free(m);

    usleep(5000);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "exec-a",
                                          "VM deallocated", &err),
                     TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_CHECKED, TW_ACT_SENT, "exec-a", NULL,
                                          &err),
                     TW_OK);
    assert_int_equal(tw_store_action_get(f->st, id, &r, &err), TW_OK);
    assert_string_equal(r.state, "sent");
    assert_int_equal(r.attempts, 1); /* counted with the move to sent */
    assert_true(strcmp(r.updated_at, first) > 0);
    /* The planned reason stays until the action ends otherwise. */
    assert_string_equal(r.reason, "window Fri 20:00-Mon 06:00 of dev-weekends");
    free(r.operation_url);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_SENT, TW_ACT_FAILED, "exec-a",
                                          "ARM answered 409 Conflict", &err),
                     TW_OK);
    assert_int_equal(tw_store_action_get(f->st, id, &r, &err), TW_OK);
    assert_string_equal(r.state, "failed");
    assert_string_equal(r.last_error, "ARM answered 409 Conflict");
    assert_string_equal(r.reason, "ARM answered 409 Conflict");
    free(r.operation_url);
    assert_int_equal(tw_store_action_moves(f->st, id, &m, &n, &err), TW_OK);
    assert_int_equal(n, 4);
    assert_string_equal(m[1].from_state, "planned");
    assert_string_equal(m[1].to_state, "checked");
    assert_string_equal(m[1].owner, "exec-a");
    assert_string_equal(m[1].detail, "VM deallocated");
    assert_string_equal(m[3].to_state, "failed");
    free(m);

    assert_int_equal(tw_store_action_get(f->st, 999, &r, &err), TW_ENOENT);
    assert_int_equal(tw_store_action_moves(f->st, 999, &m, &n, &err), TW_ENOENT);
    /* A disk that is not stored is refused, naming it. */
    struct tw_store_action_new bad = {.disk_id = 77, .kind = "downgrade"};
    assert_int_equal(tw_store_action_add(f->st, &bad, NULL, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "disk 77"));
}

static void test_list_filter(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t a = add(f->st, "a", "2026-12-05T20:00:00Z", false);
    int64_t b = add(f->st, "b", "2026-12-06T20:00:00Z", false);
    int64_t c = add(f->st, "c", "2026-12-07T20:00:00Z", true);
    assert_int_equal(tw_store_action_move(f->st, b, TW_ACT_PLANNED, TW_ACT_SKIPPED, "exec",
                                          "disk_shared", &err),
                     TW_OK);
    struct tw_store_action_row *rows;
    size_t n;
    bool more;
    struct tw_store_action_filter fl = {.vm = "SAP-DB-01"};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, &more, &err), TW_OK);
    assert_int_equal(n, 3);
    assert_false(more);
    assert_int_equal(rows[0].id, a);
    assert_true(rows[2].dry_run);
    tw_store_action_rows_free(rows, n);
    fl = (struct tw_store_action_filter){.state = "skipped"};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, &more, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, b);
    assert_string_equal(rows[0].reason, "disk_shared");
    tw_store_action_rows_free(rows, n);
    fl = (struct tw_store_action_filter){.limit = 2};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, &more, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_true(more);
    tw_store_action_rows_free(rows, n);
    fl = (struct tw_store_action_filter){.after_id = b, .limit = 2};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, &more, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, c);
    assert_false(more);
    tw_store_action_rows_free(rows, n);
    int64_t from, to;
    assert_true(tw_rfc3339_ms("2026-12-06T00:00:00Z", &from));
    assert_true(tw_rfc3339_ms("2026-12-07T00:00:00Z", &to));
    fl = (struct tw_store_action_filter){.due_from_ms = from, .due_to_ms = to};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, NULL, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, b);
    tw_store_action_rows_free(rows, n);
    fl = (struct tw_store_action_filter){.vm = "another"};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, NULL, &err), TW_OK);
    assert_int_equal(n, 0);
    tw_store_action_rows_free(rows, n);
    fl = (struct tw_store_action_filter){.state = "lost"};
    assert_int_equal(tw_store_actions_list(f->st, &fl, &rows, &n, NULL, &err), TW_EINVAL);
}

static void test_due_resumes_in_flight(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t past = add(f->st, "past", "2026-12-05T20:00:00Z", false);
    int64_t later = add(f->st, "later", "2026-12-09T20:00:00Z", false);
    int64_t dry = add(f->st, "dry", "2026-12-04T20:00:00Z", true);
    int64_t sent = add(f->st, "sent", "2026-12-10T20:00:00Z", false);
    int64_t verified = add(f->st, "verified", "2026-12-11T20:00:00Z", false);
    int64_t done = add(f->st, "done", "2026-12-01T20:00:00Z", false);
    const enum tw_action_state path[] = {TW_ACT_PLANNED, TW_ACT_CHECKED, TW_ACT_SENT,
                                         TW_ACT_VERIFIED, TW_ACT_DONE};
    for (int k = 0; k < 4; k++) {
        if (k < 2)
            assert_int_equal(tw_store_action_move(f->st, sent, path[k], path[k + 1], "x", NULL,
                                                  &err),
                             TW_OK);
        if (k < 3)
            assert_int_equal(tw_store_action_move(f->st, verified, path[k], path[k + 1], "x",
                                                  NULL, &err),
                             TW_OK);
        assert_int_equal(tw_store_action_move(f->st, done, path[k], path[k + 1], "x", NULL,
                                              &err),
                         TW_OK);
    }
    int64_t now;
    assert_true(tw_rfc3339_ms("2026-12-06T00:00:00Z", &now));
    int64_t *ids;
    size_t n;
    assert_int_equal(tw_store_actions_due(f->st, now, false, 0, &ids, &n, &err), TW_OK);
    /* By due time: the one due, then the in-flight ones though not due. */
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], past);
    assert_int_equal(ids[1], sent);
    assert_int_equal(ids[2], verified);
    free(ids);
    assert_int_equal(tw_store_actions_due(f->st, now, true, 0, &ids, &n, &err), TW_OK);
    assert_int_equal(n, 4);
    assert_int_equal(ids[0], dry);
    free(ids);
    assert_int_equal(tw_store_actions_due(f->st, now, true, 2, &ids, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    free(ids);
    (void)later;
}

static void test_claims_two_handles(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = add(f->st, "c", "2026-12-05T20:00:00Z", false);
    struct tw_store *other;
    assert_int_equal(tw_store_open(f->path, &other, &err), TW_OK);
    const int64_t t0 = 1000000, lease = 60000;
    int64_t until;
    assert_int_equal(tw_store_action_claim(f->st, id, "exec-a", t0, lease, &until, &err), TW_OK);
    assert_int_equal(until, t0 + lease);
    assert_int_equal(tw_store_action_claim(other, id, "exec-b", t0 + 1, lease, NULL, &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, "exec-a"));
    /* Only the holder keeps the operation and counts sends. */
    assert_int_equal(tw_store_action_set_operation(other, id, "exec-b",
                                                   "https://127.0.0.1/op/1", &err),
                     TW_EPERM);
    assert_int_equal(tw_store_action_set_operation(f->st, id, "exec-a", "https://127.0.0.1/op/1",
                                                   &err),
                     TW_OK);
    assert_int_equal(tw_store_action_count_attempt(other, id, "exec-b", &err), TW_EPERM);
    assert_int_equal(tw_store_action_count_attempt(f->st, id, "exec-a", &err), TW_OK);
    struct tw_store_action_row r;
    assert_int_equal(tw_store_action_get(other, id, &r, &err), TW_OK);
    assert_string_equal(r.operation_url, "https://127.0.0.1/op/1");
    assert_int_equal(r.attempts, 1);
    assert_string_equal(r.claim_owner, "exec-a");
    assert_int_equal(r.claim_until_ms, t0 + lease);
    free(r.operation_url);
    /* The lease ends: the other takes it over, and the first can't write. */
    assert_int_equal(tw_store_action_claim(other, id, "exec-b", t0 + lease, lease, NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_set_operation(f->st, id, "exec-a", "https://x/op/2", &err),
                     TW_EPERM);
    assert_int_equal(tw_store_action_set_operation(f->st, 999, "exec-a", "u", &err), TW_ENOENT);
    tw_store_close(other);
}

/* A move needs the mover's claim, or none live: another owner's lease
 * (by the system clock) refuses it and names the holder. */
static void test_move_needs_the_claim(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = add(f->st, "m", "2026-12-05T20:00:00Z", false);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    assert_int_equal(tw_store_action_claim(f->st, id, "exec-b", now, 600000, NULL, &err), TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "exec-a",
                                          NULL, &err),
                     TW_EPERM);
    assert_non_null(strstr(err.msg, "claimed by exec-b"));
    struct tw_store_action_row r;
    assert_int_equal(tw_store_action_get(f->st, id, &r, &err), TW_OK);
    assert_string_equal(r.state, "planned");
    assert_string_equal(r.claim_owner, "exec-b");
    free(r.operation_url);
    /* The holder moves it; its claim stays its own. */
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "exec-b",
                                          NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_set_operation(f->st, id, "exec-b", "https://127.0.0.1/o",
                                                   &err),
                     TW_OK);
    /* A lease that ended lets another move it (and take it over). */
    assert_int_equal(tw_store_action_claim(f->st, id, "exec-b", now - 20000, 10000, NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_CHECKED, TW_ACT_SENT, "exec-a",
                                          NULL, &err),
                     TW_OK);
    /* An unclaimed action moves for anyone. */
    int64_t id2 = add(f->st, "m2", "2026-12-05T20:00:00Z", false);
    assert_int_equal(tw_store_action_move(f->st, id2, TW_ACT_PLANNED, TW_ACT_CHECKED, "exec-c",
                                          NULL, &err),
                     TW_OK);
}

static void test_set_due(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t id = add(f->st, "d", "2026-12-05T20:00:00Z", false);
    assert_int_equal(tw_store_action_set_due(f->st, id, "2026-12-05T21:00:00Z", &err), TW_OK);
    struct tw_store_action_row r;
    assert_int_equal(tw_store_action_get(f->st, id, &r, &err), TW_OK);
    assert_string_equal(r.due_at, "2026-12-05T21:00:00Z");
    int64_t ms;
    assert_true(tw_rfc3339_ms("2026-12-05T21:00:00Z", &ms));
    assert_int_equal(r.due_ms, ms);
    free(r.operation_url);
    assert_int_equal(tw_store_action_set_due(f->st, id, "tomorrow", &err), TW_EPARSE);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_PLANNED, TW_ACT_CHECKED, "x", NULL,
                                          &err),
                     TW_OK);
    assert_int_equal(tw_store_action_move(f->st, id, TW_ACT_CHECKED, TW_ACT_SENT, "x", NULL, &err),
                     TW_OK);
    assert_int_equal(tw_store_action_set_due(f->st, id, "2026-12-05T22:00:00Z", &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "sent"));
    assert_int_equal(tw_store_action_set_due(f->st, 999, "2026-12-05T22:00:00Z", &err),
                     TW_ENOENT);
}

static void test_originals(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    int64_t a1 = add(f->st, "o1", "2026-12-05T20:00:00Z", false);
    int64_t a2 = add(f->st, "o2", "2026-12-12T20:00:00Z", false);
    bool kept = true, found = false;
    char sku[32], tier[16];
    assert_int_equal(tw_store_disk_original_get(f->st, 2, sku, tier, &found, &err), TW_OK);
    assert_false(found);
    assert_int_equal(tw_store_disk_original_set(f->st, 2, "Premium_LRS", "P40", a1,
                                                "2026-12-05T20:05:00Z", &kept, &err),
                     TW_OK);
    assert_false(kept);
    /* A second downgrade (from what the first left) does not replace it. */
    assert_int_equal(tw_store_disk_original_set(f->st, 2, "StandardSSD_LRS", "E40", a2,
                                                "2026-12-12T20:05:00Z", &kept, &err),
                     TW_OK);
    assert_true(kept);
    assert_int_equal(tw_store_disk_original_get(f->st, 2, sku, tier, &found, &err), TW_OK);
    assert_true(found);
    assert_string_equal(sku, "Premium_LRS");
    assert_string_equal(tier, "P40");
    /* The savings walk hands it with the disk, without a query per disk. */
    struct tw_store_sv_cursor *c;
    assert_int_equal(tw_store_savings_open(f->st, 0, INT64_MAX, &c, &err), TW_OK);
    struct tw_store_sv_vm vm;
    bool done = false;
    assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
    assert_false(done);
    size_t with = 0;
    for (size_t k = 0; k < vm.n_disks; k++) {
        if (vm.disks[k].id == 2)
            assert_string_equal(vm.disks[k].original_sku, "Premium_LRS");
        else
            assert_string_equal(vm.disks[k].original_sku, "");
        with += vm.disks[k].original_sku[0] != '\0';
    }
    assert_int_equal(with, 1);
    tw_store_savings_close(c);
    assert_int_equal(tw_store_disk_original_clear(f->st, 2, &err), TW_OK);
    assert_int_equal(tw_store_disk_original_get(f->st, 2, sku, tier, &found, &err), TW_OK);
    assert_false(found);
    assert_int_equal(tw_store_disk_original_set(f->st, 99, "Premium_LRS", "", 0,
                                                "2026-12-05T20:05:00Z", NULL, &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_disk_original_set(f->st, 2, "Premium_LRS", "", 0, "soon", NULL,
                                                &err),
                     TW_EPARSE);
    assert_int_equal(tw_store_disk_original_set(f->st, 2, "", "", 0, "2026-12-05T20:05:00Z",
                                                NULL, &err),
                     TW_EINVAL);
}

/* An action added while the handle reads (a plan recorded during its
 * savings walk) is a savepoint of that transaction, not a second one. */
static void test_add_during_a_read(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_sv_cursor *c;
    assert_int_equal(tw_store_savings_open(f->st, 0, INT64_MAX, &c, &err), TW_OK);
    struct tw_store_sv_vm vm;
    bool done = false;
    assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
    int64_t id = add(f->st, "inside", "2026-12-05T20:00:00Z", false);
    struct tw_store_action_new again = {.disk_id = 2, .kind = "downgrade",
                                        .idempotency_key = "inside"};
    assert_int_equal(tw_store_action_add(f->st, &again, NULL, &err), TW_EINVAL);
    assert_int_equal(tw_store_savings_next(c, &vm, &done, &err), TW_OK);
    tw_store_savings_close(c);
    size_t n;
    assert_int_equal(tw_store_action_log_count(f->st, id, &n, &err), TW_OK);
    assert_int_equal(n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_row_and_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_due_resumes_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claims_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_move_needs_the_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_originals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_during_a_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
