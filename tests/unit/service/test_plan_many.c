/* test_plan_many.c - several plans over one walk of the store
 * (tw_svc_plan_run_many): an observed policy (4 weeks learned) and a list
 * policy of another period read different spans of the store, and each
 * plan of the shared walk is action by action and total by total the plan
 * its own run gives: the power states and SKU changes outside a plan's
 * own span (a real change after the observed plan's end, a hibernation
 * before the list plan's span) never reach it. */
#include "testhelp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "core/time.h"
#include "service/plan.h"

#include "plan_fixture.h"

static void power(struct fx *f, int vm_id, const char *at, const char *state)
{
    int64_t ms;
    assert_true(tw_rfc3339_ms(at, &ms));
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) VALUES "
             "(%d, '%s', %lld, '%s', 'arm'); UPDATE vms SET power_state = '%s', "
             "power_state_at = '%s', power_state_ms = %lld WHERE id = %d AND "
             "(power_state_ms IS NULL OR power_state_ms <= %lld)",
             vm_id, at, (long long)ms, state, state, at, (long long)ms, vm_id, (long long)ms);
    sql(f, q);
}

static void policy_text(struct tw_policy *p, const char *text)
{
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static void same_actions(const struct acts *a, const struct acts *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->a[i].kind, b->a[i].kind);
        assert_int_equal(a->a[i].disk_id, b->a[i].disk_id);
        assert_int_equal(a->a[i].vm_id, b->a[i].vm_id);
        assert_int_equal(a->a[i].due_ns, b->a[i].due_ns);
        assert_int_equal(a->a[i].pair_ns, b->a[i].pair_ns);
        assert_string_equal(a->a[i].vm, b->a[i].vm);
        assert_string_equal(a->a[i].disk, b->a[i].disk);
        assert_string_equal(a->a[i].from, b->a[i].from);
        assert_string_equal(a->a[i].to, b->a[i].to);
        assert_string_equal(a->a[i].at, b->a[i].at);
        assert_string_equal(a->a[i].local, b->a[i].local);
        assert_string_equal(a->a[i].reason, b->a[i].reason);
        assert_string_equal(a->a[i].key, b->a[i].key);
        assert_string_equal(a->a[i].saving, b->a[i].saving);
    }
}

static void same_sums(const struct tw_plan_summary *a, const struct tw_plan_summary *b)
{
    assert_string_equal(a->policy, b->policy);
    assert_string_equal(a->currency, b->currency);
    assert_int_equal(a->from_ns, b->from_ns);
    assert_int_equal(a->to_ns, b->to_ns);
    assert_int_equal(a->actions, b->actions);
    assert_int_equal(a->downgrades, b->downgrades);
    assert_int_equal(a->upgrades, b->upgrades);
    assert_int_equal(a->disks, b->disks);
    assert_int_equal(a->windows_skipped, b->windows_skipped);
    assert_int_equal(a->disks_without_price, b->disks_without_price);
    assert_int_equal(a->fail, b->fail);
    char x[64], y[64];
    assert_true(tw_amount_decimal(a->saving, 12, x, sizeof(x)));
    assert_true(tw_amount_decimal(b->saving, 12, y, sizeof(y)));
    assert_string_equal(x, y);
}

/* Two VMs, both under both policies: "learned" (observed, 4 weeks) over
 * 2026-12-01..06 and "weekends" (a list) over 2026-12-06..21. */
static void fleet(struct fx *f)
{
    vm(f, 1, "dev-1");
    disk(f, 11, 1, "data-1", "Premium_LRS", "P10", 128);
    vm(f, 2, "dev-2");
    disk(f, 21, 2, "data-2", "Premium_LRS", "P10", 128);
    history(f, 11, "2026-09-01T00:00:00Z", "Premium_LRS", "P10");
    history(f, 21, "2026-09-01T00:00:00Z", "Premium_LRS", "P10");
    /* Both VMs deallocated every weekend from November on. */
    power(f, 1, "2026-10-20T00:00:00Z", "running");
    power(f, 2, "2026-10-20T00:00:00Z", "running");
    for (int day = 0; day < 56; day += 7) {
        char a[40], b[40];
        int64_t sat = at("2026-10-31T00:00:00Z") + (int64_t)day * 86400 * TW_NS_PER_S;
        int64_t mon = sat + 2 * 86400 * TW_NS_PER_S;
        assert_true(tw_rfc3339_format_ns(sat, 0, 0, a, sizeof(a)));
        assert_true(tw_rfc3339_format_ns(mon, 0, 0, b, sizeof(b)));
        for (int v = 1; v <= 2; v++) {
            power(f, v, a, "deallocated");
            power(f, v, b, "running");
        }
    }
    /* dev-2 hibernated once, in November: inside the learned plan's span
     * (it is excluded there), weeks before the list plan's. */
    power(f, 2, "2026-11-04T10:00:00Z", "hibernated");
    power(f, 2, "2026-11-04T12:00:00Z", "running");
    /* Someone switched data-1 twice on 2026-12-06, after the learned
     * plan's end: only the list plan's span holds it (seen by the learned
     * plan, the weekend's upgrade back would break the quota and its
     * window be skipped). */
    history(f, 11, "2026-12-06T12:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 11, "2026-12-06T13:00:00Z", "Premium_LRS", "P10");
    /* And data-2 before the list plan's span. */
    history(f, 21, "2026-11-05T10:00:00Z", "StandardSSD_LRS", "E10");
    history(f, 21, "2026-11-05T11:00:00Z", "Premium_LRS", "P10");
}

static void test_many_equals_each(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_policy p[2];
    policy_text(&p[0], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"learned\","
                       "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":\"observed\",\"observed\":{\"weeks\":4,\"min_weeks\":3},"
                       "\"margins\":{\"after_deallocate_minutes\":10,\"before_start_minutes\":30},"
                       "\"quota\":{\"changes\":2,\"hours\":24}}");
    policy_text(&p[1], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"weekends\","
                       "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":[\"Sat 00:00-Mon 00:00\"],"
                       "\"margins\":{\"after_deallocate_minutes\":10,\"before_start_minutes\":30},"
                       "\"quota\":{\"changes\":2,\"hours\":24}}");
    struct tw_plan_opts o[2];
    opts(f, &o[0], &p[0], "2026-12-01T00:00:00Z", "2026-12-06T00:00:00Z");
    opts(f, &o[1], &p[1], "2026-12-06T00:00:00Z", "2026-12-21T00:00:00Z");
    static struct acts own[2], many[2];
    struct tw_plan_summary own_sum[2], many_sum[2];
    struct tw_error err = {0};
    for (int i = 0; i < 2; i++) {
        memset(&own[i], 0, sizeof(own[i]));
        struct tw_plan_sink sink = {on_action, &own[i]};
        if (tw_svc_plan_run(f->st, &o[i], &sink, &own_sum[i], &err) != TW_OK)
            fail_msg("%s", err.msg);
    }
    /* Not vacuous: each plan has actions, dev-2 none under "learned". */
    assert_true(own[0].n >= 1);
    assert_int_equal(own[0].a[0].kind, TW_PLAN_DOWNGRADE);
    assert_string_equal(own[0].a[0].at, "2026-12-05T00:10:00Z");
    assert_true(own[1].n >= 4);
    for (size_t i = 0; i < own[0].n; i++)
        assert_int_equal(own[0].a[i].vm_id, 1);
    memset(many, 0, sizeof(many));
    struct tw_plan_sink sinks[2] = {{on_action, &many[0]}, {on_action, &many[1]}};
    struct tw_error errs[2] = {{0}};
    if (tw_svc_plan_run_many(f->st, 2, o, sinks, many_sum, errs) != TW_OK)
        fail_msg("%s / %s", errs[0].msg, errs[1].msg);
    for (int i = 0; i < 2; i++) {
        same_actions(&own[i], &many[i]);
        same_sums(&own_sum[i], &many_sum[i]);
    }
    /* The other order: the same plans. */
    struct tw_plan_opts ro[2] = {o[1], o[0]};
    memset(many, 0, sizeof(many));
    if (tw_svc_plan_run_many(f->st, 2, ro, sinks, many_sum, errs) != TW_OK)
        fail_msg("%s / %s", errs[0].msg, errs[1].msg);
    same_actions(&own[1], &many[0]);
    same_actions(&own[0], &many[1]);
    same_sums(&own_sum[1], &many_sum[0]);
    same_sums(&own_sum[0], &many_sum[1]);
    tw_policy_cleanup(&p[0]);
    tw_policy_cleanup(&p[1]);
}

/* A plan that can't run (its zone does not load) fails alone: the other
 * is planned as by itself. */
static void test_many_one_fails(void **state)
{
    struct fx *f = *state;
    fleet(f);
    struct tw_policy p[2];
    policy_text(&p[0], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"elsewhere\","
                       "\"match\":{},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":[\"Sat 00:00-Mon 00:00\"],\"timezone\":\"Asia/Tokyo\"}");
    policy_text(&p[1], "{\"schema_version\":\"tierwise.policy/1\",\"name\":\"weekends\","
                       "\"match\":{\"skus\":[\"Premium_LRS\"]},\"target\":\"StandardSSD_LRS\","
                       "\"windows\":[\"Sat 00:00-Mon 00:00\"]}");
    struct tw_plan_opts o[2];
    opts(f, &o[0], &p[0], "2026-12-07T00:00:00Z", "2026-12-21T00:00:00Z");
    opts(f, &o[1], &p[1], "2026-12-07T00:00:00Z", "2026-12-21T00:00:00Z");
    static struct acts own, many[2];
    struct tw_plan_summary own_sum, many_sum[2];
    struct tw_error err = {0};
    memset(&own, 0, sizeof(own));
    struct tw_plan_sink sink = {on_action, &own};
    if (tw_svc_plan_run(f->st, &o[1], &sink, &own_sum, &err) != TW_OK)
        fail_msg("%s", err.msg);
    memset(many, 0, sizeof(many));
    struct tw_plan_sink sinks[2] = {{on_action, &many[0]}, {on_action, &many[1]}};
    struct tw_error errs[2] = {{0}};
    assert_int_equal(tw_svc_plan_run_many(f->st, 2, o, sinks, many_sum, errs), TW_ENOENT);
    assert_int_equal(many_sum[0].fail, TW_OPP_FAIL_POLICY_ZONE);
    assert_non_null(strstr(errs[0].msg, "Asia/Tokyo"));
    assert_int_equal(many[0].n, 0);
    assert_int_equal(errs[1].code, TW_OK);
    same_actions(&own, &many[1]);
    same_sums(&own_sum, &many_sum[1]);
    tw_policy_cleanup(&p[0]);
    tw_policy_cleanup(&p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_equals_each, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_one_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
