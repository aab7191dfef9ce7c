/* test_app.c - input files with a ceiling, atomic writes, exit statuses. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"

static void test_exit_codes(void **state)
{
    (void)state;
    assert_int_equal(tw_app_exit_code(TW_OK), 0);
    assert_int_equal(tw_app_exit_code(TW_EIO), 1);
    assert_int_equal(tw_app_exit_code(TW_ENOMEM), 1);
    assert_int_equal(tw_app_exit_code(TW_EINVAL), 2);
    assert_int_equal(tw_app_exit_code(TW_EPARSE), 2);
    assert_int_equal(tw_app_exit_code(TW_EPERM), 2);
    assert_int_equal(tw_app_exit_code(TW_EUNSUPPORTED), 2);
}

static void test_write_then_read(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/out.json", dir);
    struct tw_error err = {0};
    assert_int_equal(tw_app_write_file(path, "{\"a\":1}\n", 8, &err), TW_OK);
    /* Replacing keeps one file, no temporaries left beside it. */
    assert_int_equal(tw_app_write_file(path, "{}\n", 3, &err), TW_OK);
    struct tw_buf b;
    tw_buf_init(&b, 100);
    assert_int_equal(tw_app_read_file(path, &b, &err), TW_OK);
    assert_string_equal(b.data, "{}\n");
    tw_buf_cleanup(&b);
    /* Over the ceiling: refused with a message naming the file. */
    tw_buf_init(&b, 2);
    assert_int_equal(tw_app_read_file(path, &b, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "larger than 2 bytes"));
    tw_buf_cleanup(&b);
    /* Missing file. */
    char missing[4300];
    snprintf(missing, sizeof(missing), "%s/none", dir);
    tw_buf_init(&b, 100);
    assert_int_equal(tw_app_read_file(missing, &b, &err), TW_ENOENT);
    tw_buf_cleanup(&b);
    /* An empty file reads as an empty, terminated buffer. */
    char empty[4300];
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    fclose(fopen(empty, "w"));
    tw_buf_init(&b, 100);
    assert_int_equal(tw_app_read_file(empty, &b, &err), TW_OK);
    assert_non_null(b.data);
    assert_int_equal(b.len, 0);
    tw_buf_cleanup(&b);
    /* A folder that doesn't exist can't be written to. */
    snprintf(missing, sizeof(missing), "%s/no/such/x", dir);
    assert_int_equal(tw_app_write_file(missing, "x", 1, &err), TW_EIO);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_write_then_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
