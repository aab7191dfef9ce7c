/*
 * test_policy.c - policy files: the example of the issue, defaults, every
 * kind of problem with its path, line and column, the cap on problems,
 * the canonical JSON read back, which disks a policy covers, names that
 * may not start with a dot, and a byte order mark.
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"

static const char example[] =
    "{ \"schema_version\": \"tierwise.policy/1\", \"name\": \"dev-weekends\",\n"
    "  \"match\": { \"tags\": {\"env\": \"dev\"}, \"skus\": [\"Premium_LRS\"], "
    "\"resource_groups\": [], \"vms\": [],\n"
    "             \"exclude\": { \"vms\": [], \"tags\": {\"tierwise\": \"off\"} } },\n"
    "  \"target\": \"StandardSSD_LRS\",\n"
    "  \"windows\": [\"Fri 20:00-Mon 06:00\"], \"timezone\": \"Europe/London\",\n"
    "  \"margins\": { \"after_deallocate_minutes\": 10, \"before_start_minutes\": 30 },\n"
    "  \"min_saving\": \"0.10\", \"quota\": { \"changes\": 2, \"hours\": 24 },\n"
    "  \"os_disks\": false, \"require_original_before_start\": true }\n";

static void parse_ok(const char *text, struct tw_policy *p)
{
    struct tw_policy_diags d;
    struct tw_error err = {0};
    if (tw_policy_parse(text, strlen(text), p, &d, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(d.n, 0);
}

/* Parses TEXT expecting problems; returns the diags. */
static struct tw_policy_diags parse_bad(const char *text)
{
    struct tw_policy p;
    struct tw_policy_diags d;
    struct tw_error err = {0};
    enum tw_err rc = tw_policy_parse(text, strlen(text), &p, &d, &err);
    tw_policy_cleanup(&p);
    if (rc != TW_EPARSE)
        fail_msg("expected TW_EPARSE, got %d for %s", rc, text);
    assert_true(d.n >= 1);
    assert_true(err.msg[0] != '\0');
    return d;
}

static bool has(const struct tw_policy_diags *d, const char *path, long line, long col,
                const char *words)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->d[i].path, path) == 0 && (line == 0 || d->d[i].line == line) &&
            (col == 0 || d->d[i].column == col) && strstr(d->d[i].msg, words))
            return true;
    for (size_t i = 0; i < d->n; i++)
        print_message("  %s:%ld:%ld %s\n", d->d[i].path, d->d[i].line, d->d[i].column,
                      d->d[i].msg);
    return false;
}

static void test_example(void **state)
{
    (void)state;
    struct tw_policy p;
    parse_ok(example, &p);
    assert_string_equal(p.name, "dev-weekends");
    assert_true(p.switches);
    assert_false(p.cheapest);
    assert_int_equal(p.n_targets, 1);
    assert_string_equal(p.targets[0], "StandardSSD_LRS");
    assert_int_equal(p.windows_kind, TW_PW_LIST);
    assert_int_equal(p.windows.n, 1);
    assert_int_equal(p.windows.w[0].start_min, 4 * 1440 + 20 * 60);
    assert_int_equal(p.windows.w[0].len_min, 2 * 1440 + 10 * 60);
    assert_string_equal(p.timezone, "Europe/London");
    assert_int_equal(p.min_saving.micros, 100000);
    assert_int_equal(p.quota_changes, 2);
    assert_int_equal(p.quota_hours, 24);
    assert_int_equal(p.match.tags.n, 1);
    assert_string_equal(p.match.tags.v[0].key, "env");
    assert_int_equal(p.match.skus.n, 1);
    assert_int_equal(p.match.ex_tags.n, 1);
    assert_true(p.require_original_before_start);
    tw_policy_cleanup(&p);
}

static void test_defaults(void **state)
{
    (void)state;
    struct tw_policy p;
    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", \"match\": {},"
             " \"target\": \"cheapest\", \"windows\": [\"Sat 00:00-Mon 00:00\", "
             "\"Sun 12:00-Mon 06:00\"]}",
             &p);
    assert_string_equal(p.timezone, "UTC");
    assert_int_equal(p.after_deallocate_minutes, 10);
    assert_int_equal(p.before_start_minutes, 30);
    assert_int_equal(p.min_saving.micros, 0);
    assert_int_equal(p.quota_changes, 2);
    assert_int_equal(p.quota_hours, 24);
    assert_false(p.os_disks);
    assert_false(p.os_disk_to_hdd);
    assert_true(p.require_original_before_start);
    assert_false(p.allow_running);
    assert_true(p.cheapest);
    assert_int_equal(p.n_targets, 2);
    assert_string_equal(p.targets[0], "StandardSSD_LRS");
    assert_string_equal(p.targets[1], "Standard_LRS");
    /* The two windows united: Sat 00:00 to Mon 06:00. */
    assert_int_equal(p.windows.n, 1);
    assert_int_equal(p.windows.w[0].start_min, 5 * 1440);
    assert_int_equal(p.windows.w[0].len_min, 2 * 1440 + 6 * 60);
    tw_policy_cleanup(&p);

    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"o\", \"match\": {},"
             " \"target\": \"Standard_LRS\", \"windows\": \"observed\"}",
             &p);
    assert_int_equal(p.windows_kind, TW_PW_OBSERVED);
    assert_int_equal(p.observed_weeks, 4);
    assert_int_equal(p.observed_min_weeks, 3);
    tw_policy_cleanup(&p);

    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"t\", \"match\": {},"
             " \"target\": \"standardssd_zrs\", \"windows\": \"tag:offhours\"}",
             &p);
    assert_int_equal(p.windows_kind, TW_PW_TAG);
    assert_string_equal(p.windows_tag, "offhours");
    assert_string_equal(p.targets[0], "StandardSSD_ZRS");
    tw_policy_cleanup(&p);

    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"sap\", \"match\": {},"
             " \"target\": \"none\", \"allow_running\": true,"
             " \"running_io\": {\"iops\": 50, \"io_kib\": 64},"
             " \"reservations\": [{\"region\": \"WestEurope\", \"tier\": \"P30\", \"count\": 2},"
             " {\"region\": \"westeurope\", \"tier\": \"P30\", \"count\": 3}]}",
             &p);
    assert_false(p.switches);
    assert_int_equal(p.running_io.ios_per_hour, 50 * 3600);
    assert_int_equal(p.running_io.io_bytes, 64 * 1024);
    assert_int_equal(p.reservations.n, 1);
    assert_int_equal(tw_reservations_count(&p.reservations, "westeurope", "P30", TW_SKU_LRS), 5);
    tw_policy_cleanup(&p);
}

static void test_problems(void **state)
{
    (void)state;
    struct tw_policy_diags d;
    /* Several problems, each with its position, in document order. */
    d = parse_bad("{\"schema_version\": \"tierwise.policy/2\",\n"
                  " \"name\": \"bad name\",\n"
                  " \"match\": {\"skus\": [\"Premium\"], \"colour\": 1},\n"
                  " \"target\": \"PremiumV2_LRS\",\n"
                  " \"windows\": [\"Fri 20:00-Mon 6\"],\n"
                  " \"quota\": {\"changes\": 11},\n"
                  " \"margins\": {\"before_start_minutes\": \"30\"},\n"
                  " \"min_saving\": 0.10,\n"
                  " \"timezone\": \"../etc/passwd\",\n"
                  " \"os_disk\": true}\n");
    assert_true(has(&d, "$.schema_version", 1, 20, "tierwise.policy/1"));
    assert_true(has(&d, "$.name", 2, 10, "A-Z a-z 0-9"));
    assert_true(has(&d, "$.match.skus[0]", 3, 21, "not a disk SKU"));
    assert_true(has(&d, "$.match.colour", 3, 33, "unknown member"));
    assert_true(has(&d, "$.target", 4, 12, "v2 or Ultra"));
    /* At the byte of the window where its grammar stopped. */
    assert_true(has(&d, "$.windows[0]", 5, 30, "at byte 16 expected ':'"));
    assert_true(has(&d, "$.quota.changes", 6, 23, "from 2 to 10"));
    assert_true(has(&d, "$.margins.before_start_minutes", 7, 38, "must be an integer"));
    assert_true(has(&d, "$.min_saving", 8, 16, "decimal string"));
    assert_true(has(&d, "$.timezone", 9, 14, "IANA"));
    assert_true(has(&d, "$.os_disk", 10, 2, "unknown member"));
    assert_int_equal(d.n, 11);
    for (size_t i = 1; i < d.n; i++)
        assert_true(d.d[i].line > d.d[i - 1].line ||
                    (d.d[i].line == d.d[i - 1].line && d.d[i].column >= d.d[i - 1].column));

    /* Missing members at the object's position. */
    d = parse_bad("  {\"name\": \"x\"}");
    assert_true(has(&d, "$.schema_version", 1, 3, "is missing"));
    assert_true(has(&d, "$.match", 1, 3, "is missing"));
    assert_true(has(&d, "$.target", 1, 3, "is missing"));

    /* Checks between members. */
    const char *head = "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", "
                       "\"match\": {}, ";
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s\"target\": \"Standard_LRS\"}", head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.windows", 1, 1, "is missing"));
    snprintf(buf, sizeof(buf), "%s\"target\": \"none\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}",
             head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.windows", 0, 0, "never switches"));
    snprintf(buf, sizeof(buf),
             "%s\"target\": \"Standard_LRS\", \"allowed_targets\": [\"Standard_LRS\"], "
             "\"windows\": \"observed\", \"observed\": {\"weeks\": 2}}",
             head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.allowed_targets", 0, 0, "only for \"target\": \"cheapest\""));
    assert_true(has(&d, "$.observed.min_weeks", 0, 0, "must not exceed weeks"));
    snprintf(buf, sizeof(buf),
             "%s\"target\": \"Standard_LRS\", \"windows\": [\"Sat 00:00-Mon 00:00\"], "
             "\"observed\": {\"weeks\": 4}, \"allow_running\": true}",
             head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.observed", 0, 0, "only for \"windows\": \"observed\""));
    assert_true(has(&d, "$.running_io", 0, 0, "is missing"));
    snprintf(buf, sizeof(buf),
             "%s\"target\": \"cheapest\", \"windows\": [], \"allowed_targets\": "
             "[\"UltraSSD_LRS\", \"Standard_LRS\", \"Standard_LRS\"], "
             "\"running_io\": {\"iops\": 1, \"io_kib\": 4}, "
             "\"reservations\": [{\"region\": \"westeurope\", \"tier\": \"P10\", \"count\": 0}]}",
             head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.windows", 0, 0, "lists no window"));
    assert_true(has(&d, "$.allowed_targets[0]", 0, 0, "v2 or Ultra"));
    assert_true(has(&d, "$.allowed_targets[2]", 0, 0, "listed twice"));
    assert_true(has(&d, "$.running_io", 0, 0, "only for \"allow_running\": true"));
    assert_true(has(&d, "$.reservations[0].tier", 0, 0, "P30, P40"));
    assert_true(has(&d, "$.reservations[0].count", 0, 0, "from 1 to"));

    /* A window written with an escape: at the string itself. */
    snprintf(buf, sizeof(buf), "%s\"target\": \"Standard_LRS\", \"windows\": [\"Sat 2\\u0035:00-Sun 01:00\"]}",
             head);
    d = parse_bad(buf);
    assert_true(has(&d, "$.windows[0]", 1, 105, "at byte 5 expected an hour"));

    /* Broken JSON is one problem, with its position. */
    d = parse_bad("{\"schema_version\": \"tierwise.policy/1\",\n \"name\": }");
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].line, 2);
    assert_int_equal(d.d[0].column, 10);
    d = parse_bad("{\"name\": \"a\", \"name\": \"b\"}");
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.d[0].msg, "duplicate"));
    assert_string_equal(d.d[0].path, "$.name");
    /* A key repeated in a nested object: the member's own path. */
    d = parse_bad("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\",\n"
                  " \"match\": {\"exclude\": {\"tags\": {\"env\": \"a\",\n   \"env\": \"b\"}}}}");
    assert_int_equal(d.n, 1);
    assert_true(has(&d, "$.match.exclude.tags.env", 3, 4, "duplicate key \"env\""));
    d = parse_bad("{\"windows\": [\"Sat 00:00-Mon 00:00\", {\"a\": 1, \"a\": 2}]}");
    assert_true(has(&d, "$.windows[1].a", 1, 46, "duplicate"));
    /* Other breaks: the value being read, or the object or array whose
     * punctuation is wrong. */
    d = parse_bad("{\"schema_version\": \"tierwise.policy/1\",\n \"name\": }");
    assert_string_equal(d.d[0].path, "$.name");
    d = parse_bad("{\"match\": {\"vms\": [\"a\" \"b\"]}}");
    assert_true(has(&d, "$.match.vms", 1, 24, "','"));
    d = parse_bad("{\"match\": {\"vms\": [] \"skus\": []}}");
    assert_true(has(&d, "$.match", 1, 22, "','"));
    d = parse_bad("{\"quota\": {\"hours\": 99999999999999999999}}");
    assert_true(has(&d, "$.quota.hours", 0, 0, ""));
    d = parse_bad("{} x");
    assert_true(has(&d, "$", 1, 4, ""));
    d = parse_bad("[]");
    assert_true(has(&d, "$", 1, 1, "must be an object"));
    d = parse_bad("");
    assert_int_equal(d.n, 1);
}

/* A name is a segment of /api/v1/policies/{name}: none may start with a
 * dot ("." and ".." mean something else there, and the router refuses a
 * leading dot). */
static void test_names(void **state)
{
    (void)state;
    static const char *const bad[] = {".dot", "..", ".", ".hidden-policy"};
    static const char *const good[] = {"a.b", "-x", "_x", "x.", "v1.2..3", "0"};
    char buf[512];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(buf, sizeof(buf),
                 "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"%s\", \"match\": {}, "
                 "\"target\": \"none\"}",
                 bad[i]);
        struct tw_policy_diags d = parse_bad(buf);
        assert_int_equal(d.n, 1);
        assert_true(has(&d, "$.name", 1, 49, "the first not a dot"));
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        snprintf(buf, sizeof(buf),
                 "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"%s\", \"match\": {}, "
                 "\"target\": \"none\"}",
                 good[i]);
        struct tw_policy p;
        parse_ok(buf, &p);
        assert_string_equal(p.name, good[i]);
        tw_policy_cleanup(&p);
    }
}

/* A UTF-8 byte order mark at the start: said as such, at 1:1. */
static void test_bom(void **state)
{
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof(buf), "\xEF\xBB\xBF%s", example);
    struct tw_policy_diags d = parse_bad(buf);
    assert_int_equal(d.n, 1);
    assert_true(has(&d, "$", 1, 1,
                    "a byte order mark (BOM) is not allowed: save the file as UTF-8 without BOM"));
    struct tw_policy p;
    struct tw_error err = {0};
    assert_int_equal(tw_policy_parse(buf, strlen(buf), &p, NULL, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "byte order mark"));
    tw_policy_cleanup(&p);
    /* The same bytes elsewhere are a string's UTF-8 like any other. */
    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", \"match\": {}, "
             "\"target\": \"none\", \"description\": \"\xEF\xBB\xBF\"}",
             &p);
    tw_policy_cleanup(&p);
}

static void test_cap(void **state)
{
    (void)state;
    /* 40 unknown members: 32 reported, "more" set. */
    char buf[4096];
    size_t k = (size_t)snprintf(buf, sizeof(buf), "{");
    for (int i = 0; i < 40; i++)
        k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s\"x%d\": 1", i ? ", " : "", i);
    snprintf(buf + k, sizeof(buf) - k, "}");
    struct tw_policy_diags d = parse_bad(buf);
    assert_int_equal(d.n, TW_POLICY_DIAG_MAX);
    assert_true(d.more);
    /* The members missing are said at the object, first; then the
     * unknown ones in order. */
    assert_string_equal(d.d[0].path, "$.schema_version");
    assert_string_equal(d.d[4].path, "$.x0");
    assert_string_equal(d.d[31].path, "$.x27");
}

static void test_canonical(void **state)
{
    (void)state;
    const char *texts[] = {
        example,
        "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"c\", \"description\": \"\\u00e9t\\u00e9\","
        " \"match\": {\"subscriptions\": [\"S1\"], \"exclude\": {\"resource_groups\": [\"prod\"]}},"
        " \"target\": \"cheapest\", \"allowed_targets\": [\"Standard_ZRS\"],"
        " \"windows\": \"observed\", \"observed\": {\"weeks\": 6, \"min_weeks\": 5},"
        " \"os_disks\": true, \"os_disk_to_hdd\": true, \"allow_running\": true,"
        " \"running_io\": {\"iops\": 3, \"io_kib\": 8}, \"min_saving\": \"1.5e-1\"}",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct tw_policy p, q;
        parse_ok(texts[i], &p);
        char *j = tw_policy_to_json(&p);
        assert_non_null(j);
        parse_ok(j, &q);
        char *j2 = tw_policy_to_json(&q);
        assert_non_null(j2);
        assert_string_equal(j, j2);
        if (i == 0) {
            assert_non_null(strstr(j, "\"min_saving\": \"0.1\""));
            assert_non_null(strstr(j, "\"windows\": [\n    \"Fri 20:00-Mon 06:00\"\n  ]"));
            assert_non_null(strstr(j, "\"subscriptions\": []"));
            assert_null(strstr(j, "running_io"));
        } else {
            assert_non_null(strstr(j, "\"allowed_targets\": [\n    \"Standard_ZRS\""));
            assert_non_null(strstr(j, "\"min_weeks\": 5"));
            assert_non_null(strstr(j, "\"io_kib\": 8"));
        }
        free(j);
        free(j2);
        tw_policy_cleanup(&p);
        tw_policy_cleanup(&q);
    }
}

static void test_covers(void **state)
{
    (void)state;
    struct tw_policy p;
    parse_ok(example, &p);
    struct tw_tag dev[] = {{"Env", "dev"}}, off[] = {{"env", "dev"}, {"TierWise", "off"}},
                  prod[] = {{"env", "prod"}};
    struct tw_policy_subject s = {"vm1", "rg", "sub", dev, 1, "premium_lrs", TW_DISK_DATA};
    char why[128];
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_YES);
    s.sku = "StandardSSD_LRS";
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_NO);
    s.sku = "Premium_LRS";
    s.tags = prod;
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_NO);
    s.tags = NULL;
    s.n_tags = 0;
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_NO);
    s.tags = off;
    s.n_tags = 2;
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_EXCLUDED);
    assert_string_equal(why, "excluded by exclude.tags tierwise=off");
    s.tags = dev;
    s.n_tags = 1;
    s.role = TW_DISK_OS;
    assert_int_equal(tw_policy_covers(&p, &s, why, sizeof(why)), TW_COVER_EXCLUDED);
    assert_non_null(strstr(why, "os_disks"));
    tw_policy_cleanup(&p);

    parse_ok("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", \"os_disks\": true,"
             " \"match\": {\"tags\": {\"team\": \"*\"}, \"resource_groups\": [\"RG-A\"],"
             " \"vms\": [\"db1\", \"db2\"], \"exclude\": {\"vms\": [\"DB2\"], "
             "\"resource_groups\": [\"rg-b\"]}},"
             " \"target\": \"Standard_LRS\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}",
             &p);
    struct tw_tag team[] = {{"team", "blue"}};
    struct tw_policy_subject t = {"DB1", "rg-a", "s", team, 1, "Premium_ZRS", TW_DISK_OS};
    assert_int_equal(tw_policy_covers(&p, &t, why, sizeof(why)), TW_COVER_YES);
    t.vm_name = "db3";
    assert_int_equal(tw_policy_covers(&p, &t, why, sizeof(why)), TW_COVER_NO);
    t.vm_name = "db2";
    assert_int_equal(tw_policy_covers(&p, &t, why, sizeof(why)), TW_COVER_EXCLUDED);
    assert_string_equal(why, "excluded by exclude.vms db2");
    t.vm_name = "db1";
    t.resource_group = "rg-c";
    assert_int_equal(tw_policy_covers(&p, &t, why, sizeof(why)), TW_COVER_NO);
    t.n_tags = 0;
    t.resource_group = "rg-a";
    assert_int_equal(tw_policy_covers(&p, &t, why, sizeof(why)), TW_COVER_NO);
    tw_policy_cleanup(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),   cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_problems),  cmocka_unit_test(test_cap),
        cmocka_unit_test(test_canonical), cmocka_unit_test(test_covers),
        cmocka_unit_test(test_names),     cmocka_unit_test(test_bom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
