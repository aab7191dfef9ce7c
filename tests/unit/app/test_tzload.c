/* test_tzload.c - zones by name from $TZDIR: names that could leave the
 * folder are refused, a missing zone says what to install, a zone file
 * too large or not TZif is refused. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/tzload.h"

static void put(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    size_t len;
    char *london = th_fixture("../fuzz/corpus/tz/Europe_London", &len);
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/Europe", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    put(dir, "Europe/London", london, len);
    put(dir, "Junk", "not a zone", 10);
    char *big = calloc(1, TW_TZ_FILE_MAX + 1);
    assert_non_null(big);
    put(dir, "Big", big, TW_TZ_FILE_MAX + 1);
    free(big);
    free(london);
    assert_int_equal(setenv("TZDIR", dir, 1), 0);

    struct tw_tz *z;
    struct tw_error err = {0};
    assert_int_equal(tw_tz_load("Europe/London", &z, &err), TW_OK);
    assert_string_equal(tw_tz_name(z), "Europe/London");
    struct tw_tz_info i;
    tw_tz_at(z, INT64_C(1782864000) * 1000000000, &i); /* 2026-07-01 */
    assert_string_equal(i.abbr, "BST");
    tw_tz_free(z);

    const char *refused[] = {"", "/etc/passwd", "../Europe/London", "Europe/../Junk",
                             "Europe/London\n", "Europe London", "a\\b"};
    for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(tw_tz_load(refused[k], &z, &err), TW_EINVAL);
        assert_null(z);
        assert_non_null(strstr(err.msg, "not a time zone name"));
    }
    assert_int_equal(tw_tz_load(NULL, &z, &err), TW_EINVAL);

    assert_int_equal(tw_tz_load("Mars/Olympus_Mons", &z, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "tzdata"));
    assert_non_null(strstr(err.msg, dir));
    assert_int_equal(tw_tz_load("Junk", &z, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "Junk"));
    assert_int_equal(tw_tz_load("Big", &z, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "larger than"));
    assert_null(z);

    /* Without TZDIR: the system's folder, when it is there. */
    unsetenv("TZDIR");
    enum tw_err rc = tw_tz_load("UTC", &z, &err);
    if (rc == TW_OK)
        tw_tz_free(z);
    else
        assert_int_equal(rc, TW_ENOENT);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
