/*
 * test_policies.c - a backend's policy folder: files read in name order and
 * kept sorted by policy name, found by name, stored; a bad file refuses the
 * whole folder with FILE:LINE:COLUMN and every problem; two files of one
 * name; an empty folder and one that does not exist.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_empty_and_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
