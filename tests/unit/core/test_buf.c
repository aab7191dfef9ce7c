/* test_buf.c - the capped buffer. */
#include "testhelp.h"

#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "core/uuid.h"

static void test_cap(void **state)
{
    (void)state;
    struct tw_buf b;
    tw_buf_init(&b, 10);
    assert_int_equal(tw_buf_puts(&b, "hello"), TW_OK);
    assert_int_equal(tw_buf_puts(&b, "world"), TW_OK);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "helloworld");
    /* Past the ceiling: refused, contents unchanged. */
    assert_int_equal(tw_buf_puts(&b, "!"), TW_ENOMEM);
    assert_string_equal(b.data, "helloworld");
    tw_buf_cleanup(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.max, 10);
}

/* Formatted text is appended whole, however long: a 5,000-byte name and
 * its newline, past any line buffer; past the ceiling, refused and the
 * buffer as it was. */
static void test_printf(void **state)
{
    (void)state;
    char name[5001];
    memset(name, 'n', 5000);
    name[5000] = '\0';
    struct tw_buf b;
    tw_buf_init(&b, 1u << 20);
    assert_int_equal(tw_buf_printf(&b, "%d ", 42), TW_OK);
    assert_int_equal(tw_buf_printf(&b, "  %s/%s: %s\n", name, "disk-1", "why"), TW_OK);
    assert_int_equal(b.len, 3 + 2 + 5000 + 1 + 6 + 2 + 3 + 1);
    assert_int_equal(strncmp(b.data, "42   nnn", 8), 0);
    assert_string_equal(b.data + b.len - 13, "/disk-1: why\n");
    tw_buf_cleanup(&b);
    tw_buf_init(&b, 100);
    assert_int_equal(tw_buf_printf(&b, "%s", "short"), TW_OK);
    assert_int_equal(tw_buf_printf(&b, "%s", name), TW_ENOMEM);
    assert_string_equal(b.data, "short");
    tw_buf_cleanup(&b);
}

static void test_growth(void **state)
{
    (void)state;
    struct tw_buf b;
    tw_buf_init(&b, 1 << 20);
    char chunk[1000];
    memset(chunk, 'x', sizeof(chunk));
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tw_buf_append(&b, chunk, sizeof(chunk)), TW_OK);
    assert_int_equal(b.len, 1000000);
    assert_int_equal(b.data[b.len], '\0');
    /* Fill to exactly the ceiling, then one byte more is refused. */
    for (int i = 0; i < 48; i++)
        assert_int_equal(tw_buf_append(&b, chunk, sizeof(chunk)), TW_OK);
    assert_int_equal(tw_buf_append(&b, chunk, 576), TW_OK);
    assert_int_equal(b.len, 1 << 20);
    assert_int_equal(tw_buf_append(&b, chunk, 1), TW_ENOMEM);
    tw_buf_cleanup(&b);
}

/* No ceiling at all (SIZE_MAX): the room for the terminator must not wrap
 * the ceiling to 0 and leave a buffer smaller than what is copied in. */
static void test_no_ceiling(void **state)
{
    (void)state;
    struct tw_buf b;
    tw_buf_init(&b, SIZE_MAX);
    assert_int_equal(tw_buf_puts(&b, "hello"), TW_OK);
    assert_int_equal(b.len, 5);
    assert_true(b.cap >= 6);
    assert_string_equal(b.data, "hello");
    char chunk[4096];
    memset(chunk, 'y', sizeof(chunk));
    assert_int_equal(tw_buf_append(&b, chunk, sizeof(chunk)), TW_OK);
    assert_int_equal(b.len, 5 + sizeof(chunk));
    assert_true(b.cap > b.len);
    assert_int_equal(b.data[b.len], '\0');
    /* A length that would wrap the arithmetic is refused, nothing read. */
    assert_int_equal(tw_buf_append(&b, chunk, SIZE_MAX), TW_ENOMEM);
    assert_int_equal(tw_buf_append(&b, chunk, SIZE_MAX - b.len), TW_ENOMEM);
    assert_int_equal(b.len, 5 + sizeof(chunk));
    tw_buf_cleanup(&b);
    assert_null(b.data);
    /* One below SIZE_MAX is as good as none and just as safe. */
    tw_buf_init(&b, SIZE_MAX - 1);
    assert_int_equal(tw_buf_puts(&b, "x"), TW_OK);
    assert_string_equal(b.data, "x");
    tw_buf_cleanup(&b);
}

static void test_uuid(void **state)
{
    (void)state;
    uint8_t r[16];
    memset(r, 0xff, sizeof(r));
    char s[TW_UUID_STRLEN + 1];
    tw_uuid_format(r, s);
    assert_int_equal(strlen(s), 36);
    assert_int_equal(s[14], '4');           /* version */
    assert_true(strchr("89ab", s[19]) != NULL); /* variant */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_printf),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_no_ceiling),
        cmocka_unit_test(test_uuid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
