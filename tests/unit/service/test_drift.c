/* test_drift.c - drift judged over a real store (a copy of the version-4
 * fixture migrated to this schema): a running VM on a disk tierwise
 * downgraded, with the right since (the VM's start, or the disk's change,
 * whichever is later); none for a deallocated VM, for a policy that does
 * not require the original SKU, or once the disk is restored (the open
 * drift then ended, with a line logged once each way); the store's own
 * policies when none are given; and the pure rules.
 *
 * The fixture: VM 1 sap-db-01 (deallocated 2026-12-01T09:00, disk 3
 * sap-db-01-data1 went Premium_LRS -> StandardSSD_LRS then), VM 3 web-03
 * (running since 2026-11-29T12:05, disk 14 web-03-data0 Premium_LRS). */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "core/time.h"
#include "service/drift.h"
#include "store/store.h"
#include "th_store.h"

static const char policy_text[] =
    "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"dev-weekends\","
    " \"match\": {\"skus\": [\"Premium_LRS\"]}, \"target\": \"StandardSSD_LRS\","
    " \"windows\": [\"Fri 20:00-Mon 06:00\"], \"require_original_before_start\": %s}";

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_policy pol;
    const struct tw_policy *pols[1];
    char log[8][1024];
    size_t n_log;
};

static void parse_policy(struct tw_policy *p, bool require)
{
    char text[1024];
    snprintf(text, sizeof(text), policy_text, require ? "true" : "false");
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    th_store_fixture(f->dir, "store/v4.db", "v4.db", f->path, sizeof(f->path));
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    parse_policy(&f->pol, true);
    f->pols[0] = &f->pol;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_policy_cleanup(&f->pol);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static int64_t ms(const char *t)
{
    int64_t v;
    assert_true(tw_rfc3339_ms(t, &v));
    return v;
}

/* Disk DISK's original SKU, as tierwise's first downgrade records it. */
static void original(struct fx *f, int64_t disk, const char *sku)
{
    struct tw_error err = {0};
    bool kept;
    assert_int_equal(tw_store_disk_original_set(f->st, disk, sku, "", 0, "2026-12-01T08:50:00Z",
                                                &kept, &err),
                     TW_OK);
}

struct got {
    struct tw_drift d[8];
    size_t n;
};

static enum tw_err collect(void *arg, const struct tw_drift *d)
{
    struct got *g = arg;
    if (g->n < 8)
        g->d[g->n] = *d;
    g->n++;
    return TW_OK;
}

static struct got list(struct fx *f, const struct tw_policy *const *p, size_t n, const char *now)
{
    struct got g = {0};
    struct tw_drift_sink sink = {collect, &g};
    struct tw_error err = {0};
    size_t count = 99;
    if (tw_svc_drift_list(f->st, p, n, ms(now), &sink, &count, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(count, g.n);
    return g;
}

static void logged(void *arg, const char *line)
{
    struct fx *f = arg;
    if (f->n_log < 8)
        snprintf(f->log[f->n_log], sizeof(f->log[0]), "%s", line);
    f->n_log++;
}

static void observe(struct fx *f, int64_t vm, const char *state, const char *at)
{
    struct tw_error err = {0};
    assert_int_equal(tw_store_power_observe(f->st, vm, state, at, TW_OBS_ARM, &err), TW_OK);
}

static void test_started_in_portal(void **state)
{
    struct fx *f = *state;
    original(f, 3, "Premium_LRS");
    /* Deallocated: no drift, whatever the disk is on. */
    struct got g = list(f, f->pols, 1, "2026-12-05T07:00:00Z");
    assert_int_equal(g.n, 0);
    /* Started in the portal: its disk is still on Standard SSD. */
    observe(f, 1, "starting", "2026-12-05T08:02:11Z");
    observe(f, 1, "running", "2026-12-05T08:03:40Z");
    g = list(f, f->pols, 1, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 1);
    assert_int_equal(g.d[0].vm_id, 1);
    assert_int_equal(g.d[0].disk_id, 3);
    assert_string_equal(g.d[0].vm, "sap-db-01");
    assert_string_equal(g.d[0].disk, "sap-db-01-data1");
    assert_string_equal(g.d[0].sku, "StandardSSD_LRS");
    assert_string_equal(g.d[0].required_sku, "Premium_LRS");
    assert_string_equal(g.d[0].policy, "dev-weekends");
    assert_string_equal(g.d[0].since, "2026-12-05T08:02:11Z"); /* the start, after the change */
    assert_int_equal(g.d[0].since_ms, ms("2026-12-05T08:02:11Z"));
    /* Judged as of an instant before the start: none. */
    g = list(f, f->pols, 1, "2026-12-05T08:00:00Z");
    assert_int_equal(g.n, 0);
    /* Deallocated again: gone. */
    observe(f, 1, "deallocated", "2026-12-05T13:00:00Z");
    g = list(f, f->pols, 1, "2026-12-05T14:00:00Z");
    assert_int_equal(g.n, 0);
}

static void test_since_the_change(void **state)
{
    struct fx *f = *state;
    /* web-03 has run since 11-29; ARM sees its disk downgraded on 12-02
     * (the disk's own row still says Premium: its report is older). */
    original(f, 14, "Premium_LRS");
    struct tw_error err = {0};
    assert_int_equal(tw_store_sku_observe(f->st, 14, "StandardSSD_LRS", "E10", 128,
                                          "2026-12-02T10:00:00Z", TW_OBS_ARM, NULL, &err),
                     TW_OK);
    struct got g = list(f, f->pols, 1, "2026-12-03T00:00:00Z");
    assert_int_equal(g.n, 1);
    assert_int_equal(g.d[0].disk_id, 14);
    assert_string_equal(g.d[0].sku, "StandardSSD_LRS");
    assert_string_equal(g.d[0].since, "2026-12-02T10:00:00Z");
    /* A tier change on the same SKU later does not move the since. */
    assert_int_equal(tw_store_sku_observe(f->st, 14, "StandardSSD_LRS", "E15", 256,
                                          "2026-12-02T11:00:00Z", TW_OBS_ARM, NULL, &err),
                     TW_OK);
    g = list(f, f->pols, 1, "2026-12-03T00:00:00Z");
    assert_int_equal(g.n, 1);
    assert_string_equal(g.d[0].since, "2026-12-02T10:00:00Z");
}

static void test_not_required(void **state)
{
    struct fx *f = *state;
    original(f, 3, "Premium_LRS");
    observe(f, 1, "running", "2026-12-05T08:02:11Z");
    struct tw_policy lax;
    parse_policy(&lax, false);
    const struct tw_policy *p[1] = {&lax};
    struct got g = list(f, p, 1, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 0);
    /* The same disk under a policy that requires it: drift (and only that
     * disk of the VM: its others have no original recorded). */
    g = list(f, f->pols, 1, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 1);
    assert_int_equal(g.d[0].disk_id, 3);
    tw_policy_cleanup(&lax);
}

/* Policy NAME (matching Premium_LRS), requiring the original or not. */
static void named_policy(struct tw_policy *p, const char *name, bool require)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"%s\","
             " \"match\": {\"skus\": [\"Premium_LRS\"]}, \"target\": \"StandardSSD_LRS\","
             " \"windows\": [\"Fri 20:00-Mon 06:00\"], \"require_original_before_start\": %s}",
             name, require ? "true" : "false");
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
}

/* Disk DISK's original recorded by a downgrade of policy POLICY. */
static void original_by(struct fx *f, int64_t disk, const char *sku, const char *policy)
{
    struct tw_error err = {0};
    struct tw_store_action_new a = {.disk_id = disk, .kind = "downgrade", .from_sku = sku,
                                    .to_sku = "StandardSSD_LRS",
                                    .due_at = "2026-12-01T08:50:00Z", .policy = policy};
    int64_t id;
    assert_int_equal(tw_store_action_add(f->st, &a, &id, &err), TW_OK);
    bool kept;
    assert_int_equal(tw_store_disk_original_set(f->st, disk, sku, "", id, "2026-12-01T08:50:00Z",
                                                &kept, &err),
                     TW_OK);
}

/* Two policies cover the disk: the one whose downgrade recorded its
 * original decides (as vm start does), not the first covering one; a
 * policy not among those given falls back to the first covering one. */
static void test_policy_of_the_original(void **state)
{
    struct fx *f = *state;
    struct tw_policy strict, lax;
    named_policy(&strict, "strict", true);
    named_policy(&lax, "lax", false);
    const struct tw_policy *both[2] = {&strict, &lax};
    original_by(f, 3, "Premium_LRS", "lax");
    observe(f, 1, "running", "2026-12-05T08:02:11Z");
    /* lax recorded it and allows a start without it: no drift, although
     * strict (first) covers the disk too. */
    struct got g = list(f, both, 2, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 0);
    /* lax not among those given: the first covering one, strict. */
    const struct tw_policy *only[1] = {&strict};
    g = list(f, only, 1, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 1);
    assert_string_equal(g.d[0].policy, "strict");
    /* The other way round: strict recorded it, lax is first. */
    struct tw_error err = {0};
    assert_int_equal(tw_store_disk_original_clear(f->st, 3, &err), TW_OK);
    original_by(f, 3, "Premium_LRS", "strict");
    const struct tw_policy *rev[2] = {&lax, &strict};
    g = list(f, rev, 2, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 1);
    assert_string_equal(g.d[0].policy, "strict");
    tw_policy_cleanup(&strict);
    tw_policy_cleanup(&lax);
}

static void test_restored_closes(void **state)
{
    struct fx *f = *state;
    original(f, 3, "Premium_LRS");
    observe(f, 1, "running", "2026-12-05T08:02:11Z");
    struct tw_error err = {0};
    struct tw_drift_update u;
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T12:00:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(u.open, 1);
    assert_int_equal(u.started, 1);
    assert_int_equal(f->n_log, 1);
    assert_string_equal(f->log[0], "drift started: VM sap-db-01 disk sap-db-01-data1 runs on "
                                   "StandardSSD_LRS, its policy dev-weekends requires "
                                   "Premium_LRS (since 2026-12-05T08:02:11Z)");
    /* Again a minute later: the same drift, nothing logged. */
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T12:01:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(u.open, 1);
    assert_int_equal(u.started, 0);
    assert_int_equal(f->n_log, 1);
    /* Restored (an upgrade that went through late): ended, logged once. */
    assert_int_equal(tw_store_sku_observe(f->st, 3, "Premium_LRS", "P40", 2048,
                                          "2026-12-05T12:30:00Z", TW_OBS_ARM, NULL, &err),
                     TW_OK);
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T13:00:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(u.open, 0);
    assert_int_equal(u.ended, 1);
    assert_int_equal(f->n_log, 2);
    assert_string_equal(f->log[1], "drift ended: VM sap-db-01 disk sap-db-01-data1 is back on "
                                   "the required SKU Premium_LRS (drift since "
                                   "2026-12-05T08:02:11Z, ended 2026-12-05T13:00:00Z)");
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T13:01:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(f->n_log, 2);
    struct tw_store_drift_row *rows;
    size_t n;
    assert_int_equal(tw_store_drift_list(f->st, false, &rows, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].ended_at, "2026-12-05T13:00:00Z");
    free(rows);
    /* Down again while running (a new drift), then the VM deallocated:
     * the end says the VM stopped, not that the disk came back. */
    assert_int_equal(tw_store_sku_observe(f->st, 3, "StandardSSD_LRS", "E40", 2048,
                                          "2026-12-05T13:10:00Z", TW_OBS_ARM, NULL, &err),
                     TW_OK);
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T13:15:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(u.started, 1);
    assert_int_equal(f->n_log, 3);
    observe(f, 1, "deallocated", "2026-12-05T13:20:00Z");
    assert_int_equal(tw_svc_drift_update(f->st, f->pols, 1, ms("2026-12-05T13:30:00Z"), logged,
                                         f, &u, &err),
                     TW_OK);
    assert_int_equal(u.ended, 1);
    assert_int_equal(f->n_log, 4);
    assert_string_equal(f->log[3], "drift ended: VM sap-db-01 is no longer running (it is "
                                   "deallocated), so disk sap-db-01-data1 need not be on "
                                   "Premium_LRS (drift since 2026-12-05T13:10:00Z, ended "
                                   "2026-12-05T13:30:00Z)");
}

static void test_store_policies(void **state)
{
    struct fx *f = *state;
    original(f, 3, "Premium_LRS");
    observe(f, 1, "running", "2026-12-05T08:02:11Z");
    /* None given, none stored: nothing requires anything. */
    struct got g = list(f, NULL, 0, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 0);
    char text[1024];
    snprintf(text, sizeof(text), policy_text, "true");
    struct tw_error err = {0};
    assert_int_equal(tw_store_policy_put(f->st, "dev-weekends", text, &err), TW_OK);
    g = list(f, NULL, 0, "2026-12-05T12:00:00Z");
    assert_int_equal(g.n, 1);
    assert_string_equal(g.d[0].policy, "dev-weekends");
    /* A stored policy that no longer reads is said, by name. */
    assert_int_equal(tw_store_policy_put(f->st, "broken", "{\"name\": 1}", &err), TW_OK);
    struct tw_drift_sink sink = {collect, &g};
    assert_int_not_equal(tw_svc_drift_list(f->st, NULL, 0, ms("2026-12-05T12:00:00Z"), &sink,
                                           NULL, &err),
                         TW_OK);
    assert_non_null(strstr(err.msg, "broken"));
}

static void test_rules(void **state)
{
    (void)state;
    assert_true(tw_drift_sku_below("StandardSSD_LRS", "Premium_LRS"));
    assert_true(tw_drift_sku_below("Standard_LRS", "StandardSSD_LRS"));
    assert_true(tw_drift_sku_below("Mystery_LRS", "Premium_LRS"));
    assert_false(tw_drift_sku_below("premium_lrs", "Premium_LRS"));
    assert_false(tw_drift_sku_below("Premium_ZRS", "Premium_LRS"));
    assert_false(tw_drift_sku_below("Premium_LRS", "StandardSSD_LRS"));
    assert_true(tw_drift_running("running"));
    assert_true(tw_drift_running("PowerState/starting"));
    assert_false(tw_drift_running("deallocated"));
    assert_false(tw_drift_running("stopped"));
    /* The start over pages: running, running | running, deallocated. */
    struct tw_store_sv_power p1[] = {{300, "running"}, {200, "running"}};
    struct tw_store_sv_power p2[] = {{150, "running"}, {100, "deallocated"}};
    struct tw_drift_start s = {0};
    assert_true(tw_drift_start_feed(&s, p1, 2, false));
    assert_false(tw_drift_start_feed(&s, p2, 2, false));
    assert_true(s.found && s.running);
    assert_int_equal(s.start_ms, 150);
    /* Its first observation was a running one: that is its start. */
    struct tw_drift_start s2 = {0};
    assert_false(tw_drift_start_feed(&s2, p1, 2, true));
    assert_true(s2.found && s2.running);
    assert_int_equal(s2.start_ms, 200);
    /* Not running now. */
    struct tw_drift_start s3 = {0};
    assert_false(tw_drift_start_feed(&s3, p2 + 1, 1, false));
    assert_false(s3.running);
    /* The change to the SKU now: the first row of its last run. */
    struct tw_store_sku_hist_row h[] = {
        {"2026-12-01T00:00:00Z", "Premium_LRS", "P10", 128},
        {"2026-12-02T00:00:00Z", "StandardSSD_LRS", "E10", 128},
        {"2026-12-03T00:00:00Z", "standardssd_lrs", "E15", 256},
    };
    char sku[32];
    int64_t since;
    assert_true(tw_drift_sku_since(h, 3, sku, &since));
    assert_string_equal(sku, "standardssd_lrs");
    assert_int_equal(since, ms("2026-12-02T00:00:00Z"));
    assert_true(tw_drift_sku_since(h, 1, sku, &since));
    assert_int_equal(since, ms("2026-12-01T00:00:00Z"));
    assert_false(tw_drift_sku_since(h, 0, sku, &since));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_started_in_portal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_since_the_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_required, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restored_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_of_the_original, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_policies, setup, teardown),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
