/* test_compliance.c - the fleet's verdicts from a real store (a copy of
 * tests/fixtures/store/v1.db): every latest result judged, in VM order,
 * with a VM that no longer reads reported once and the others judged. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/compliance.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_fixture(f->dir, "store/v1.db", "v1.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK ||
        tw_tier_catalog_builtin(&f->cat, &err) != TW_OK ||
        tw_vmcap_table_builtin(&f->caps, &err) != TW_OK)
        fail_msg("%s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_tier_catalog_cleanup(&f->cat);
    tw_vmcap_table_cleanup(&f->caps);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

struct seen {
    int verdicts, errors, vm_errors;
    char line[16][512];
    char error[256];
};

static enum tw_err on_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                              const struct tw_result *r, const struct tw_verdict *v)
{
    struct seen *s = arg;
    const char *vm_name = inv->vm.name;
    if (s->verdicts < 16)
        snprintf(s->line[s->verdicts], sizeof(s->line[0]), "%lld %s %s %s %s", (long long)vm_id,
                 vm_name, r->profile, v->target, tw_verdict_name(v->kind));
    s->verdicts++;
    return TW_OK;
}

static enum tw_err on_error(void *arg, const struct tw_svc_compliance_error *e)
{
    struct seen *s = arg;
    s->errors++;
    if (!e->vm_name) {
        s->vm_errors++;
        assert_null(e->result_id);
        assert_null(e->profile);
    }
    snprintf(s->error, sizeof(s->error), "%s", e->message);
    return TW_OK;
}

static void test_fleet(void **state)
{
    struct fx *f = *state;
    struct seen s = {0};
    struct tw_svc_compliance_ctx ctx = {&f->cat, &f->caps, NULL, NULL};
    struct tw_svc_compliance_sink sink = {on_verdict, on_error, &s};
    struct tw_error err = {0};
    size_t n_vms = 0;
    assert_int_equal(tw_svc_compliance_fleet(f->st, &ctx, &sink, &n_vms, &err), TW_OK);
    assert_int_equal(n_vms, 3);
    assert_int_equal(s.verdicts, 7);
    assert_int_equal(s.errors, 0);
    /* As that build's GET /api/v1/compliance answered (v1-answers/). */
    assert_string_equal(s.line[0], "1 sap-db-01 rated-iops dm-8 burst");
    assert_string_equal(s.line[1], "1 sap-db-01 rated-iops sdf delivers");
    assert_string_equal(s.line[6], "3 web-03 rated-throughput sde inconclusive");

    memset(&s, 0, sizeof(s));
    assert_int_equal(tw_svc_compliance_vm(f->st, &ctx, 9999, &sink, &err), TW_ENOENT);
    assert_int_equal(s.verdicts + s.errors, 0);
}

static void test_unreadable_vm(void **state)
{
    struct fx *f = *state;
    /* VM 2's result records damaged from outside the store (compliance
     * reads the rows and the records, never a report's body). */
    th_sql_exec(f->path, "UPDATE reports SET body = '{\"broken\": true}';"
                         "UPDATE results SET record = '{\"broken\": true}' WHERE vm_id = 2");
    struct seen s = {0};
    struct tw_svc_compliance_ctx ctx = {&f->cat, &f->caps, NULL, NULL};
    struct tw_svc_compliance_sink sink = {on_verdict, on_error, &s};
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_fleet(f->st, &ctx, &sink, NULL, &err), TW_OK);
    assert_int_equal(s.vm_errors, 1);
    assert_non_null(strstr(s.error, "no longer reads"));
    assert_int_equal(s.verdicts, 7 - 3); /* the other two VMs still judged */
}

static void test_summary(void **state)
{
    struct fx *f = *state;
    struct tw_svc_compliance_ctx ctx = {&f->cat, &f->caps, NULL, NULL};
    struct tw_svc_compliance_summary sum;
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &ctx, &sum, &err), TW_OK);
    assert_int_equal(sum.vms, 3);
    assert_int_equal(sum.verdicts, 7);
    assert_int_equal(sum.errors, 0);
    size_t total = 0, premium_burst = 0;
    for (size_t i = 0; i < sum.n_skus; i++) {
        for (int k = 0; k <= TW_VERDICT_INCONCLUSIVE; k++)
            total += sum.skus[i].count[k];
        if (strcmp(sum.skus[i].sku, "Premium_LRS") == 0)
            premium_burst = sum.skus[i].count[TW_VERDICT_BURST];
    }
    /* Per disk covered: sap-db-01's stripe of 3 and its log, sap-app-02's
     * stripe of 2 twice and sde, web-03's sdc and sde. */
    assert_int_equal(total, 3 + 1 + 2 + 2 + 1 + 1 + 1);
    assert_true(premium_burst >= 2);
}

/* A version-2 database migrated (no verdict kept: all judged as read)
 * counts what that build's /api/v1/compliance/summary answered
 * (tests/fixtures/store/v2-answers/compliance-summary.json). */
static void test_summary_from_version_2(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    th_store_fixture(f->dir, "store/v2.db", "v2.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->path, &f->st, &err), TW_OK);
    struct tw_svc_compliance_ctx ctx = {.cat = &f->cat, .caps = &f->caps};
    struct tw_svc_compliance_summary sum;
    assert_int_equal(tw_svc_compliance_summary(f->st, &ctx, &sum, &err), TW_OK);
    assert_int_equal(sum.vms, 3);
    assert_int_equal(sum.verdicts, 7);
    assert_int_equal(sum.errors, 0);
    assert_int_equal(sum.n_skus, 2);
    assert_string_equal(sum.skus[0].sku, "Premium_LRS");
    assert_int_equal(sum.skus[0].count[TW_VERDICT_DELIVERS], 1);
    assert_int_equal(sum.skus[0].count[TW_VERDICT_BURST], 8);
    assert_string_equal(sum.skus[1].sku, "StandardSSD_LRS");
    assert_int_equal(sum.skus[1].count[TW_VERDICT_BURST], 1);
    assert_int_equal(sum.skus[1].count[TW_VERDICT_INCONCLUSIVE], 1);
    size_t total = 0;
    for (size_t i = 0; i < sum.n_skus; i++)
        for (int k = 0; k <= TW_VERDICT_INCONCLUSIVE; k++)
            total += sum.skus[i].count[k];
    assert_int_equal(total, 11);
}

/* Past 31 SKUs the rest are counted as "other", and the named rows keep
 * their own counts (the 32nd SKU never takes over a named row). */
static void test_summary_many_skus(void **state)
{
    (void)state;
    struct tw_svc_compliance_summary sum;
    memset(&sum, 0, sizeof(sum));
    char name[64];
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 40; k++) {
            snprintf(name, sizeof(name), "Sku_%02d", k);
            tw_svc_compliance_summary_add(&sum, name, TW_VERDICT_UNDER);
        }
    assert_int_equal(sum.n_skus, TW_SVC_SUMMARY_SKUS);
    for (int k = 0; k < TW_SVC_SUMMARY_SKUS - 1; k++) {
        snprintf(name, sizeof(name), "Sku_%02d", k);
        assert_string_equal(sum.skus[k].sku, name);
        assert_int_equal(sum.skus[k].count[TW_VERDICT_UNDER], 2);
    }
    assert_string_equal(sum.skus[TW_SVC_SUMMARY_SKUS - 1].sku, "other");
    assert_int_equal(sum.skus[TW_SVC_SUMMARY_SKUS - 1].count[TW_VERDICT_UNDER],
                     2 * (40 - (TW_SVC_SUMMARY_SKUS - 1)));
    /* A name longer than a row holds is one row, not a new one each time. */
    memset(&sum, 0, sizeof(sum));
    for (int i = 0; i < 3; i++)
        tw_svc_compliance_summary_add(&sum, "A_sku_name_far_longer_than_thirty_one_bytes",
                                      TW_VERDICT_DELIVERS);
    assert_int_equal(sum.n_skus, 1);
    assert_int_equal(sum.skus[0].count[TW_VERDICT_DELIVERS], 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fleet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_vm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_from_version_2, setup, teardown),
        cmocka_unit_test(test_summary_many_skus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
