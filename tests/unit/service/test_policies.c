/*
 * test_policies.c - a backend's policy folder: files read in name order and
 * kept sorted by policy name, found by name, stored; a bad file refuses the
 * whole folder with FILE:LINE:COLUMN and every problem; two files of one
 * name; an empty folder and one that does not exist; a policy whose
 * timezone does not load, at its place, before anything is stored.
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "service/policies.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *policy_text(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap,
             "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"%s\", \"match\": {},\n"
             " \"target\": \"StandardSSD_LRS\", \"windows\": [\"Sat 00:00-Mon 00:00\"]}\n",
             name);
    return buf;
}

static void test_load(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char t[512];
    put(dir, "a.json", policy_text(t, sizeof(t), "zeta"));
    put(dir, "b.json", policy_text(t, sizeof(t), "alpha"));
    put(dir, "notes.txt", "not a policy");
    put(dir, "policy.schema.json", "{\"$schema\": \"x\"}");
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/sub.json", dir);
    assert_int_equal(mkdir(sub, 0700), 0); /* a folder named .json is not read */

    char db[4096];
    snprintf(db, sizeof(db), "%s/t.db", dir);
    struct tw_store *st;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(db, &st, &err), TW_OK);
    struct tw_svc_policies ps;
    if (tw_svc_policies_load(dir, st, &ps, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(ps.n, 2);
    assert_string_equal(ps.v[0].policy.name, "alpha");
    assert_string_equal(ps.v[1].policy.name, "zeta");
    assert_non_null(strstr(ps.v[0].path, "/b.json"));
    assert_non_null(strstr(ps.v[0].text, "\"alpha\""));
    assert_int_equal(ps.v[0].len, strlen(ps.v[0].text));
    assert_ptr_equal(tw_svc_policies_find(&ps, "zeta"), &ps.v[1]);
    assert_ptr_equal(tw_svc_policies_find(&ps, "alpha"), &ps.v[0]);
    assert_null(tw_svc_policies_find(&ps, "beta"));
    assert_null(tw_svc_policies_find(&ps, "Alpha"));
    char *body = NULL;
    assert_int_equal(tw_store_policy_get(st, "zeta", &body, &err), TW_OK);
    assert_non_null(strstr(body, "\"before_start_minutes\": 30")); /* canonical, defaults in */
    free(body);
    tw_svc_policies_cleanup(&ps);
    tw_store_close(st);

    /* A bad file: the folder is refused, naming the file and position. */
    put(dir, "c.json",
        "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"c\", \"match\": {},\n"
        " \"target\": \"StandardSSD_LRS\", \"windows\": [\"Sat 00:00-Mon 00:00\"],\n"
        "  \"quota\": {\"changes\": 0, \"hour\": 1}}\n");
    struct tw_policy_diags d;
    assert_int_equal(tw_svc_policies_load(dir, NULL, &ps, &d, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "/c.json:3:24: $.quota.changes: must be an integer from 2"));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 24);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.d[1].path, "$.quota.hour");
    assert_int_equal(ps.n, 0);
    assert_null(ps.v);

    /* Two of one name. */
    put(dir, "c.json", policy_text(t, sizeof(t), "zeta"));
    assert_int_equal(tw_svc_policies_load(dir, NULL, &ps, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "two policies are named \"zeta\""));
    assert_non_null(strstr(err.msg, "/a.json"));
    assert_non_null(strstr(err.msg, "/c.json"));
    assert_int_equal(ps.n, 0);
    th_rmtree(dir);
    free(dir);
}

/* The schema is known by its base name alone, a bare name or a path. */
static void test_is_schema(void **state)
{
    (void)state;
    assert_true(tw_svc_policy_is_schema("policy.schema.json"));
    assert_true(tw_svc_policy_is_schema("policies/policy.schema.json"));
    assert_true(tw_svc_policy_is_schema("/etc/tierwise/policies/policy.schema.json"));
    assert_false(tw_svc_policy_is_schema("policy.schema.json/dev.json"));
    assert_false(tw_svc_policy_is_schema("my-policy.schema.json"));
    assert_false(tw_svc_policy_is_schema("Policy.schema.json"));
    assert_false(tw_svc_policy_is_schema("policies/dev-weekends.json"));
    assert_false(tw_svc_policy_is_schema(""));
}

static void test_empty_and_missing(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    struct tw_svc_policies ps;
    struct tw_error err = {0};
    assert_int_equal(tw_svc_policies_load(dir, NULL, &ps, NULL, &err), TW_OK);
    assert_int_equal(ps.n, 0);
    assert_null(tw_svc_policies_find(&ps, "x"));
    tw_svc_policies_cleanup(&ps);
    char none[4096];
    snprintf(none, sizeof(none), "%s/none", dir);
    assert_int_equal(tw_svc_policies_load(none, NULL, &ps, NULL, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "/none"));
    th_rmtree(dir);
    free(dir);
}

/* Zones as a machine's files would give them: UTC and London load,
 * "Test/Unreadable" can't be read, anything else does not exist. */
static enum tw_err zone(const char *name, struct tw_tz **out, struct tw_error *err)
{
    *out = NULL;
    if (strcmp(name, "Test/Unreadable") == 0)
        return tw_error_set(err, TW_EIO, "time zone %s: can't read: Permission denied", name);
    const char *posix = strcmp(name, "UTC") == 0             ? "UTC0"
                        : strcmp(name, "Europe/London") == 0 ? "GMT0BST,M3.5.0/1,M10.5.0"
                                                             : NULL;
    if (!posix)
        return tw_error_set(err, TW_ENOENT, "no time zone %s here", name);
    return tw_tz_from_posix(posix, strlen(posix), out, err);
}

static void test_zones(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char t[512];
    put(dir, "a.json", policy_text(t, sizeof(t), "alpha")); /* no timezone: UTC */
    put(dir, "b.json",
        "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"b\", \"match\": {},\n"
        " \"target\": \"none\",\n"
        "   \"timezone\" :  \"Europe/London\"}\n");
    char db[4096];
    snprintf(db, sizeof(db), "%s/t.db", dir);
    struct tw_store *st;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(db, &st, &err), TW_OK);
    struct tw_svc_policies ps;
    if (tw_svc_policies_load_zones(dir, st, zone, &ps, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(ps.n, 2);
    tw_svc_policies_cleanup(&ps);

    /* A zone that does not exist: the folder is refused at its value. */
    put(dir, "b.json",
        "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"b\", \"match\": {},\n"
        " \"target\": \"none\",\n"
        "   \"timezone\" :  \"Europe/Lndon\"}\n");
    struct tw_policy_diags d;
    struct tw_store *st2;
    snprintf(db, sizeof(db), "%s/t2.db", dir);
    assert_int_equal(tw_store_open(db, &st2, &err), TW_OK);
    assert_int_equal(tw_svc_policies_load_zones(dir, st2, zone, &ps, &d, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "/b.json:3:18: $.timezone: the zone \"Europe/Lndon\" does "
                                    "not load here: no time zone Europe/Lndon here"));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 18);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.d[0].path, "$.timezone");
    assert_int_equal(ps.n, 0);
    /* Nothing of the folder was stored (alpha, read first, included). */
    char *body = NULL;
    assert_int_equal(tw_store_policy_get(st2, "alpha", &body, &err), TW_ENOENT);
    free(body);
    tw_store_close(st2);
    /* Without a loader no zone is checked (tw_svc_policies_load). */
    assert_int_equal(tw_svc_policies_load(dir, NULL, &ps, NULL, &err), TW_OK);
    assert_int_equal(ps.n, 2);
    tw_svc_policies_cleanup(&ps);

    /* A zone that can't be read is the loader's TW_EIO, at its place too. */
    struct tw_policy p;
    struct tw_policy_diag one;
    const char *text = "{\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", "
                       "\"match\": {}, \"target\": \"none\", \"timezone\": \"Test/Unreadable\"}";
    assert_int_equal(tw_policy_parse(text, strlen(text), &p, NULL, &err), TW_OK);
    assert_int_equal(tw_svc_policy_zone_check(&p, text, strlen(text), zone, &one, &err), TW_EIO);
    assert_int_equal(one.line, 1);
    assert_int_equal(one.column, 97);
    assert_non_null(strstr(one.msg, "Permission denied"));
    assert_int_equal(tw_svc_policy_zone_check(&p, text, strlen(text), NULL, &one, &err), TW_OK);
    tw_policy_cleanup(&p);
    /* No "timezone": UTC, and where it does not load, the object's place. */
    const char *bare = "\n\n  {\"schema_version\": \"tierwise.policy/1\", \"name\": \"x\", "
                       "\"match\": {}, \"target\": \"none\"}";
    assert_int_equal(tw_policy_parse(bare, strlen(bare), &p, NULL, &err), TW_OK);
    strcpy(p.timezone, "Test/Missing");
    assert_int_equal(tw_svc_policy_zone_check(&p, bare, strlen(bare), zone, &one, &err),
                     TW_EPARSE);
    assert_int_equal(one.line, 3);
    assert_int_equal(one.column, 3);
    tw_policy_cleanup(&p);
    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_is_schema),
        cmocka_unit_test(test_empty_and_missing),
        cmocka_unit_test(test_zones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
