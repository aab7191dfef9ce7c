/* test_vmsizes.c - ARM's VM sizes in the store and in memory, without the
 * network: rows put as a refresh would and read back, the caps a verdict
 * applies (ARM's before the bundled table's, and why when neither), the
 * stamp a refresh changes, the fleet's regions, and refreshes that fail
 * before any byte leaves (they keep what was cached).  Refreshes from a
 * fake ARM are tested in tests/unit/server/test_vmsizes.c. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/compliance.h"
#include "service/vmsizes.h"
#include "th_store.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_vmcap_table bundled;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    /* Three VMs: two in westeurope, one in northeurope. */
    th_store_fixture(f->dir, "store/v1.db", "v1.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK ||
        tw_vmcap_table_builtin(&f->bundled, &err) != TW_OK)
        fail_msg("%s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_vmcap_table_cleanup(&f->bundled);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Stores REGION's sizes as a refresh would: N caps with the given IOPS. */
static void put(struct fx *f, const char *region, const char *at, const struct tw_vmcap *caps,
                size_t n)
{
    struct tw_store_vm_size rows[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        snprintf(rows[i].name, sizeof(rows[i].name), "%.63s", caps[i].vm_size);
        rows[i].caps = tw_vmcap_to_json(&caps[i]);
        assert_non_null(rows[i].caps);
    }
    struct tw_error err = {0};
    if (tw_store_vm_sizes_put(f->st, region, TW_SVC_VMSIZES_SOURCE " (subscription s)", at, rows,
                              n, &err) != TW_OK)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < n; i++)
        free(rows[i].caps);
}

static struct tw_vmcap arm_cap(const char *size, int64_t iops, int64_t mbps)
{
    struct tw_vmcap c;
    memset(&c, 0, sizeof(c));
    snprintf(c.vm_size, sizeof(c.vm_size), "%s", size);
    c.iops = iops;
    c.bytes_per_s = mbps * 1000000;
    c.premium = TW_VMCAP_PREMIUM_YES;
    snprintf(c.source, sizeof(c.source), "arm");
    return c;
}

static void expect_why(const char *why, const char *words)
{
    if (!strstr(why, words))
        fail_msg("why \"%s\" lacks \"%s\"", why, words);
}

static void test_pick(void **state)
{
    struct fx *f = *state;
    struct tw_svc_vmsizes *vs = tw_svc_vmsizes_new();
    assert_non_null(vs);
    struct tw_vmcap buf;
    char why[512];
    struct tw_error err = {0};

    /* Nothing from ARM yet: the bundled table, or why not. */
    assert_int_equal(tw_svc_vmsizes_stamp(vs), 0);
    const struct tw_vmcap *c =
        tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "Standard_E16ds_v5", &buf, why, 512);
    assert_ptr_equal(c, &buf);
    assert_int_equal(c->iops, 25600);
    assert_string_equal(c->source, "bundled table");
    assert_null(tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "Standard_Nope9", &buf, why,
                                  sizeof(why)));
    expect_why(why, "Standard_Nope9 is not in the bundled caps table (1112 sizes)");
    expect_why(why, "ARM's sizes of westeurope are not cached yet");
    assert_null(tw_svc_vmcap_pick(NULL, &f->bundled, "westeurope", "Standard_Nope9", &buf, why,
                                  sizeof(why)));
    expect_why(why, "ARM's Resource SKUs are not read");
    assert_null(tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "", &buf, why, sizeof(why)));
    assert_string_equal(why, "the inventory names no VM size");
    assert_null(tw_svc_vmcap_pick(vs, &f->bundled, "", "Standard_Nope9", &buf, why, sizeof(why)));
    expect_why(why, "no region");

    /* Not cached in the store: TW_ENOENT, and VS unchanged. */
    assert_int_equal(tw_svc_vmsizes_load(vs, f->st, "westeurope", &err), TW_ENOENT);
    assert_int_equal(tw_svc_vmsizes_regions(vs), 0);

    /* ARM's westeurope: its figures win over the bundled ones; a size only
     * ARM knows gets a cap; one ARM lists without figures falls back. */
    struct tw_vmcap caps[3] = {arm_cap("Standard_E16ds_v5", 30000, 700),
                               arm_cap("Standard_Nope9", 1000, 50),
                               arm_cap("Standard_D8s_v3", 0, 0)};
    caps[2].premium = TW_VMCAP_PREMIUM_NO;
    put(f, "westeurope", "2026-12-01T02:00:00Z", caps, 3);
    if (tw_svc_vmsizes_load(vs, f->st, "westeurope", &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(tw_svc_vmsizes_regions(vs), 1);
    assert_int_equal(tw_svc_vmsizes_count(vs, "WestEurope"), 3);
    uint64_t stamp = tw_svc_vmsizes_stamp(vs);
    assert_true(stamp != 0);
    c = tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "standard_e16ds_v5", &buf, why, 512);
    assert_non_null(c);
    assert_int_equal(c->iops, 30000);
    assert_int_equal(c->bytes_per_s, 700000000);
    assert_string_equal(c->source, "arm westeurope 2026-12-01T02:00:00Z");
    c = tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "Standard_Nope9", &buf, why, 512);
    assert_non_null(c);
    assert_int_equal(c->iops, 1000);
    c = tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "Standard_D8s_v3", &buf, why, 512);
    assert_non_null(c);
    assert_string_equal(c->source, "bundled table");
    assert_null(tw_svc_vmcap_pick(vs, &f->bundled, "westeurope", "Standard_Zz1", &buf, why, 512));
    expect_why(why, "ARM's Resource SKUs of westeurope (fetched 2026-12-01T02:00:00Z) do not "
                    "list it either");
    /* Another region is not westeurope's. */
    c = tw_svc_vmcap_pick(vs, &f->bundled, "northeurope", "Standard_Nope9", &buf, why, 512);
    assert_null(c);
    expect_why(why, "ARM's sizes of northeurope are not cached yet");

    /* A failed refresh says so in the why, and keeps what is held. */
    tw_svc_vmsizes_note(vs, "northeurope", "the refresh at X failed: ARM said 403");
    assert_null(tw_svc_vmcap_pick(vs, &f->bundled, "northeurope", "Standard_Nope9", &buf, why,
                                  512));
    expect_why(why, "not cached yet: the refresh at X failed: ARM said 403");
    assert_int_equal(tw_svc_vmsizes_regions(vs), 1);
    assert_int_equal(tw_svc_vmsizes_stamp(vs), stamp);

    /* A refresh replaces the region's rows and changes the stamp. */
    put(f, "westeurope", "2026-12-02T02:00:00Z", caps, 1);
    assert_int_equal(tw_svc_vmsizes_load(vs, f->st, "westeurope", &err), TW_OK);
    assert_int_equal(tw_svc_vmsizes_count(vs, "westeurope"), 1);
    assert_true(tw_svc_vmsizes_stamp(vs) != stamp);
    /* The next day's refresh brings the same figures: the stamp (and so
     * every kept verdict) stands. */
    stamp = tw_svc_vmsizes_stamp(vs);
    put(f, "westeurope", "2026-12-03T02:00:00Z", caps, 1);
    assert_int_equal(tw_svc_vmsizes_load(vs, f->st, "westeurope", &err), TW_OK);
    assert_int_equal(tw_svc_vmsizes_stamp(vs), stamp);

    /* A second reference keeps it alive. */
    struct tw_svc_vmsizes *two = tw_svc_vmsizes_ref(vs);
    tw_svc_vmsizes_unref(vs);
    assert_int_equal(tw_svc_vmsizes_count(two, "westeurope"), 1);
    tw_svc_vmsizes_unref(two);
    tw_svc_vmsizes_unref(NULL);
}

static bool always(void *arg)
{
    (void)arg;
    return true;
}

static void test_fleet(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_vmcap caps[1] = {arm_cap("Standard_D4ds_v5", 6400, 145)};
    put(f, "northeurope", "2026-12-01T03:00:00Z", caps, 1);
    struct tw_svc_vmsizes *vs = tw_svc_vmsizes_new();
    /* At start: every region of the fleet that has cached sizes. */
    if (tw_svc_vmsizes_load_fleet(vs, f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(tw_svc_vmsizes_regions(vs), 1);
    assert_int_equal(tw_svc_vmsizes_count(vs, "northeurope"), 1);

    /* A refresh that can't reach ARM (nothing listens on port 1, and no
     * retries) fails for both regions, notes it, and keeps what was held. */
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    o.loopback_only = true;
    o.max_attempts = 1;
    o.connect_timeout_ms = 500;
    struct tw_svc_arm arm = {.arm_url = "http://127.0.0.1:1", .bearer = "t", .http = &o};
    struct tw_svc_vmsizes_report rep;
    assert_int_not_equal(tw_svc_vmsizes_refresh_fleet(f->st, &arm, vs, NULL, NULL, &rep, &err),
                         TW_OK);
    assert_int_equal(rep.regions, 2);
    assert_int_equal(rep.refreshed, 0);
    assert_int_equal(rep.failed, 2);
    assert_true(rep.first_error[0] != '\0');
    assert_int_equal(tw_svc_vmsizes_count(vs, "northeurope"), 1);
    struct tw_vmcap buf;
    char why[512];
    assert_non_null(tw_svc_vmcap_pick(vs, NULL, "northeurope", "Standard_D4ds_v5", &buf, why,
                                      512));
    assert_null(tw_svc_vmcap_pick(vs, NULL, "westeurope", "Standard_D4ds_v5", &buf, why, 512));
    expect_why(why, "the refresh at ");

    /* A stop asked before the first region ends the walk at once. */
    assert_int_equal(tw_svc_vmsizes_refresh_fleet(f->st, &arm, vs, always,
                                                  NULL, &rep, &err),
                     TW_OK);
    assert_int_equal(rep.refreshed + rep.failed, 0);

    /* Arguments ARM would need escaped never leave. */
    assert_int_equal(
        tw_svc_vmsizes_refresh(f->st, &arm, "sub/../x", "westeurope", "t", NULL, &err),
        TW_EINVAL);
    struct tw_svc_arm none = {0};
    assert_int_equal(tw_svc_vmsizes_refresh(f->st, &none, "s", "westeurope", "t", NULL, &err),
                     TW_EINVAL);
    tw_svc_vmsizes_unref(vs);
}

/* A stored text this build can't read is an error naming the size, and
 * the region held before is kept. */
static void test_damaged_row(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    struct tw_store_vm_size row = {.name = "Standard_Bad", .caps = "{\"vm_size\": 5}"};
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm", "2026-12-01T00:00:00Z",
                                           &row, 1, &err),
                     TW_OK);
    struct tw_svc_vmsizes *vs = tw_svc_vmsizes_new();
    assert_int_equal(tw_svc_vmsizes_load(vs, f->st, "westeurope", &err), TW_EPARSE);
    expect_why(err.msg, "Standard_Bad");
    assert_int_equal(tw_svc_vmsizes_regions(vs), 0);
    tw_svc_vmsizes_unref(vs);
}

/* The fleet's verdicts apply ARM's caps before the bundled table's, and a
 * VM whose size neither knows says so with why; the basis of kept
 * verdicts moves with a refresh. */
struct seen {
    int n;
    char vm[8][1024];
};

static enum tw_err on_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                              const struct tw_result *r, const struct tw_verdict *v)
{
    struct seen *s = arg;
    (void)vm_id;
    (void)r;
    if (s->n < 8)
        snprintf(s->vm[s->n], sizeof(s->vm[0]), "%s %s %.0f %s|%s", inv->vm.name, v->vm_size,
                 v->vm_iops, v->vm_source, v->vm_why);
    s->n++;
    return TW_OK;
}

static enum tw_err on_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)arg;
    fail_msg("not judged: %s", e->message);
    return TW_OK;
}

static void test_compliance(void **state)
{
    struct fx *f = *state;
    struct tw_tier_catalog cat;
    struct tw_error err = {0};
    assert_int_equal(tw_tier_catalog_builtin(&cat, &err), TW_OK);
    /* sap-db-01 (Standard_E16ds_v5) and sap-app-02 (Standard_E8ds_v5) in
     * westeurope: ARM knows the first with other figures and not the
     * second; the bundled table knows both.  A table without either shows
     * the why. */
    struct tw_vmcap caps[1] = {arm_cap("Standard_E16ds_v5", 12345, 321)};
    put(f, "westeurope", "2026-12-01T02:00:00Z", caps, 1);
    struct tw_svc_vmsizes *vs = tw_svc_vmsizes_new();
    assert_int_equal(tw_svc_vmsizes_load(vs, f->st, "westeurope", &err), TW_OK);
    struct tw_svc_compliance_ctx ctx = {&cat, &f->bundled, vs, NULL};
    struct seen s = {0};
    struct tw_svc_compliance_sink sink = {on_verdict, on_error, &s};
    assert_int_equal(tw_svc_compliance_fleet(f->st, &ctx, &sink, NULL, &err), TW_OK);
    assert_int_equal(s.n, 7);
    bool arm_db = false, bundled_app = false;
    for (int i = 0; i < 7 && i < 8; i++) {
        if (strstr(s.vm[i], "sap-db-01 Standard_E16ds_v5 12345 arm westeurope "))
            arm_db = true;
        if (strstr(s.vm[i], "sap-app-02 Standard_E8ds_v5 ") && strstr(s.vm[i], "bundled table"))
            bundled_app = true;
    }
    if (!arm_db || !bundled_app)
        fail_msg("ARM's cap for sap-db-01, the bundled one for sap-app-02: %s / %s", s.vm[0],
                 s.vm[3]);
    char with_arm[TW_SVC_BASIS_LEN], without[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(&ctx, with_arm);
    struct tw_svc_compliance_ctx plain = {&cat, &f->bundled, NULL, NULL};
    tw_svc_compliance_basis(&plain, without);
    assert_string_not_equal(with_arm, without);

    /* No caps table at all and no ARM: every verdict says why. */
    struct tw_vmcap_table empty = {0};
    struct tw_svc_compliance_ctx none = {&cat, &empty, NULL, NULL};
    memset(&s, 0, sizeof(s));
    assert_int_equal(tw_svc_compliance_fleet(f->st, &none, &sink, NULL, &err), TW_OK);
    assert_int_equal(s.n, 7);
    for (int i = 0; i < 7; i++)
        if (!strstr(s.vm[i], "is not in the bundled caps table (0 sizes); ARM's Resource SKUs "
                             "are not read"))
            fail_msg("no why: %s", s.vm[i]);
    tw_svc_vmsizes_unref(vs);
    tw_tier_catalog_cleanup(&cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pick, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fleet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compliance, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
