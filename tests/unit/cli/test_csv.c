/* test_csv.c - RFC 4180 fields and records (cli/csv.h): what is quoted and
 * how, numbers and absent values, CRLF record ends. */
#include "testhelp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/csv.h"

/* What F wrote since it was opened, NUL-terminated (the caller frees). */
static char *written(FILE *f, char **buf)
{
    fflush(f);
    fclose(f);
    return *buf;
}

static void test_fields(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"plain", "plain,"},
        {"", ","},
        {NULL, ","},
        {"16,300 IOPS", "\"16,300 IOPS\","},
        {"say \"hi\"", "\"say \"\"hi\"\"\","},
        {"\"", "\"\"\"\","},
        {"two\nlines", "\"two\nlines\","},
        {"cr\rhere", "\"cr\rhere\","},
        {" spaces kept ", " spaces kept ,"},
        {"3 × P40", "3 × P40,"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        tw_cli_csv_field(f, rows[i].in, 0);
        char *got = written(f, &buf);
        if (strcmp(got, rows[i].out) != 0)
            fail_msg("row %zu: got [%s], want [%s]", i, got, rows[i].out);
        free(got);
    }
}

static void test_records(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    const char *head[] = {"a", "b", "c"};
    tw_cli_csv_row(f, head, 3);
    tw_cli_csv_num(f, 16300, 0);
    tw_cli_csv_num(f, 0.724, 0);
    tw_cli_csv_num(f, NAN, 1);
    tw_cli_csv_num(f, 184.3, 0);
    tw_cli_csv_field(f, "x,y", 0);
    tw_cli_csv_field(f, "last", 1);
    char *got = written(f, &buf);
    assert_string_equal(got, "a,b,c\r\n16300,0.724,\r\n184.3,\"x,y\",last\r\n");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
