/*
 * test_window.c - weekly windows: the grammar, Custodian's tag form, the
 * weekly union, and exact elapsed time over clock changes.
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "core/tz.h"
#include "core/window.h"

static int64_t utc(int y, int mo, int d, int h, int mi)
{
    struct tw_civil c = {y, mo, d, h, mi, 0, 0};
    int64_t ns;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    return ns;
}

static struct tw_tz *london(void)
{
    size_t len;
    char *buf = th_fixture("../fuzz/corpus/tz/Europe_London", &len);
    struct tw_tz *z;
    assert_int_equal(tw_tz_parse("Europe/London", buf, len, &z, NULL), TW_OK);
    free(buf);
    return z;
}

static struct tw_windows parse(const char *s)
{
    struct tw_windows w;
    struct tw_error err = {0};
    if (tw_windows_parse(s, strlen(s), &w, &err) != TW_OK)
        fail_msg("%s: %s", s, err.msg);
    return w;
}

static void test_grammar(void **state)
{
    (void)state;
    struct {
        const char *in;
        int start, len;      /* the first window */
        const char *canon;   /* tw_windows_format's text */
    } ok[] = {
        {"Sat 00:00-Mon 00:00", 5 * 1440, 2 * 1440, "Sat 00:00-Mon 00:00"},
        {"sat 00:00 - MON 00:00", 5 * 1440, 2 * 1440, "Sat 00:00-Mon 00:00"},
        /* The end comes round strictly after the start. */
        {"Fri 19:00-Fri 07:00", 4 * 1440 + 19 * 60, 6 * 1440 + 12 * 60, "Fri 19:00-Fri 07:00"},
        {"Mon 00:00-Mon 00:00", 0, TW_WEEK_MIN, "Mon 00:00-Mon 00:00"},
        {"Sun 23:59-Mon 00:00", 6 * 1440 + 23 * 60 + 59, 1, "Sun 23:59-Mon 00:00"},
        {"Mon 7:05-Mon 07:06", 7 * 60 + 5, 1, "Mon 07:05-Mon 07:06"},
        {"Mon 19:00-Tue 07:00, Fri 19:00-Mon 07:00", 19 * 60, 12 * 60,
         "Mon 19:00-Tue 07:00, Fri 19:00-Mon 07:00"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct tw_windows w = parse(ok[i].in);
        assert_int_equal(w.w[0].start_min, ok[i].start);
        assert_int_equal(w.w[0].len_min, ok[i].len);
        char out[256];
        assert_true(tw_windows_format(&w, out, sizeof(out)));
        assert_string_equal(out, ok[i].canon);
        struct tw_windows back = parse(out);
        assert_memory_equal(&back, &w, sizeof(w));
    }
    struct {
        const char *in;
        long col;
        const char *msg;
    } bad[] = {
        {"", 1, "a day"},
        {"Sa 00:00-Mon 00:00", 1, "a day"},
        {"Saturday 00:00-Mon 00:00", 4, "space after"},
        {"Sat00:00-Mon 00:00", 4, "space between"},
        {"Sat 24:00-Mon 00:00", 5, "hour 00..23"},
        {"Sat 00:60-Mon 00:00", 8, "minutes 00..59"},
        {"Sat 00-Mon 00:00", 7, "':'"},
        {"Sat 00:00 Mon 00:00", 11, "'-'"},
        {"Sat 00:00-Mon", 14, "space between"},
        {"Sat 00:00-Mon 00:00;", 20, "','"},
        {"Sat 00:00-Mon 00:00,", 21, "a day"},
        {"Sat 0:0-Mon 00:00", 7, "two digits"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_windows w;
        struct tw_error err = {0};
        assert_int_equal(tw_windows_parse(bad[i].in, strlen(bad[i].in), &w, &err), TW_EPARSE);
        assert_int_equal(w.n, 0);
        if (err.column != bad[i].col || !strstr(err.msg, bad[i].msg))
            fail_msg("\"%s\": column %ld, \"%s\"", bad[i].in, err.column, err.msg);
    }
    /* Only LEN bytes are read. */
    struct tw_windows w;
    assert_int_equal(tw_windows_parse("Sat 00:00-Mon 00:00xyz", 19, &w, NULL), TW_OK);
    /* The ceiling. */
    char many[64 * 24 + 32] = "";
    for (int i = 0; i <= TW_WINDOWS_MAX; i++)
        strcat(many, i ? ", Mon 00:00-Mon 01:00" : "Mon 00:00-Mon 01:00");
    assert_int_equal(tw_windows_parse(many, strlen(many), &w, NULL), TW_ERANGE);
}

static void test_union(void **state)
{
    (void)state;
    struct tw_windows w = parse("Sun 22:00-Mon 02:00, Mon 01:00-Mon 03:00, Mon 03:00-Mon 04:00, "
                                "Fri 19:00-Sat 00:00, Wed 10:00-Wed 11:00");
    tw_windows_union(&w);
    char out[256];
    assert_true(tw_windows_format(&w, out, sizeof(out)));
    assert_string_equal(out, "Wed 10:00-Wed 11:00, Fri 19:00-Sat 00:00, Sun 22:00-Mon 04:00");
    /* Covering the week: one whole-week window. */
    w = parse("Mon 00:00-Thu 00:00, Wed 00:00-Mon 00:00");
    tw_windows_union(&w);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.w[0].len_min, TW_WEEK_MIN);
    /* Idempotent. */
    struct tw_windows again = w;
    tw_windows_union(&again);
    assert_memory_equal(&again, &w, sizeof(w));
}

static void test_custodian(void **state)
{
    (void)state;
    struct {
        const char *in;
        const char *want;
        const char *tz;
    } ok[] = {
        {"off=(M-F,19);on=(M-F,7);tz=Europe/London",
         "Mon 19:00-Tue 07:00, Tue 19:00-Wed 07:00, Wed 19:00-Thu 07:00, Thu 19:00-Fri 07:00, "
         "Fri 19:00-Mon 07:00",
         "Europe/London"},
        {"off=[(M-F,21),(U,18)];on=[(M-F,6),(U,10)];tz=pt",
         "Mon 21:00-Tue 06:00, Tue 21:00-Wed 06:00, Wed 21:00-Thu 06:00, Thu 21:00-Fri 06:00, "
         "Fri 21:00-Sun 10:00, Sun 18:00-Mon 06:00",
         "America/Los_Angeles"},
        /* Case, quotes, a trailing ';', a wrapping range, no tz. */
        {"'OFF=(f-m,1);ON=(T,0);'", "Fri 01:00-Tue 00:00", ""},
        {"off=(S,0);on=(M,0);tz=Asia/Kolkata", "Sat 00:00-Mon 00:00", "Asia/Kolkata"},
        {"off=(h,23);on=(h,22)", "Thu 23:00-Thu 22:00", ""},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct tw_windows w;
        struct tw_error err = {0};
        if (tw_windows_parse_custodian(ok[i].in, strlen(ok[i].in), &w, &err) != TW_OK)
            fail_msg("%s: %s", ok[i].in, err.msg);
        char out[512];
        assert_true(tw_windows_format(&w, out, sizeof(out)));
        if (strcmp(out, ok[i].want) != 0)
            fail_msg("%s: got \"%s\"", ok[i].in, out);
        assert_string_equal(w.tz, ok[i].tz);
    }
    struct {
        const char *in;
        const char *msg;
    } bad[] = {
        {"off=(M-F,19)", "needs both"},
        {"on", "policy's defaults"},
        {"off=(M-F,24);on=(M-F,7)", "hour 0..23"},
        {"off=(X,19);on=(M,7)", "day letter"},
        {"off=(M-,19);on=(M,7)", "ending the range"},
        {"off=M-F,19;on=(M,7)", "'('"},
        {"off=[(M,19)(T,19)];on=(M,7)", "']'"},
        {"off=(M,19);on=(M,19)", "same time"},
        {"off=(M,19);on=(M,7);when=now", "off=, on= or tz="},
        {"off=(M,19);on=(M,7);tz=../etc", "time zone name"},
        {"off=(M,19);off=(T,19);on=(M,7)", "one off="},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_windows w;
        struct tw_error err = {0};
        assert_int_equal(tw_windows_parse_custodian(bad[i].in, strlen(bad[i].in), &w, &err),
                         TW_EPARSE);
        assert_int_equal(w.n, 0);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("\"%s\": \"%s\"", bad[i].in, err.msg);
    }
}

/* The figures: a London weekend is 49 h over the October change
 * and 47 h over the March one. */
static void test_elapsed_over_clock_changes(void **state)
{
    (void)state;
    struct tw_tz *z = london();
    struct tw_windows w = parse("Sat 00:00-Mon 00:00");
    int64_t ns;
    struct tw_error err = {0};
    /* 2026-10-24/25: clocks go back on Sunday the 25th. */
    assert_int_equal(tw_windows_elapsed(&w, z, utc(2026, 10, 21, 0, 0), utc(2026, 10, 28, 0, 0),
                                        &ns, &err),
                     TW_OK);
    assert_true(ns == 49 * TW_NS_PER_HOUR);
    /* 2026-03-28/29: clocks go forward on Sunday the 29th. */
    assert_int_equal(tw_windows_elapsed(&w, z, utc(2026, 3, 25, 0, 0), utc(2026, 4, 1, 0, 0),
                                        &ns, &err),
                     TW_OK);
    assert_true(ns == 47 * TW_NS_PER_HOUR);
    /* A quiet weekend: 48 h, and its instants exactly. */
    struct tw_interval *iv;
    size_t n;
    assert_int_equal(tw_windows_instants(&w, z, utc(2026, 6, 1, 0, 0), utc(2026, 6, 8, 0, 0), &iv,
                                         &n, &err),
                     TW_OK);
    assert_int_equal(n, 1);
    assert_true(iv[0].from_ns == utc(2026, 6, 5, 23, 0)); /* Sat 00:00 BST */
    assert_true(iv[0].to_ns == utc(2026, 6, 7, 23, 0));
    free(iv);
    /* Clipped to the period, which may start inside a window. */
    assert_int_equal(tw_windows_instants(&w, z, utc(2026, 6, 6, 12, 0), utc(2026, 6, 7, 0, 0), &iv,
                                         &n, &err),
                     TW_OK);
    assert_int_equal(n, 1);
    assert_true(iv[0].from_ns == utc(2026, 6, 6, 12, 0));
    assert_true(iv[0].to_ns == utc(2026, 6, 7, 0, 0));
    free(iv);
    /* A year of weekends: 52 or 53 of them, two changes, 48 h each else. */
    assert_int_equal(tw_windows_elapsed(&w, z, utc(2026, 1, 5, 0, 0), utc(2027, 1, 4, 0, 0), &ns,
                                        &err),
                     TW_OK);
    assert_true(ns == 52 * 48 * TW_NS_PER_HOUR);
    /* Overlapping windows are counted once; touching ones join. */
    struct tw_windows two = parse("Sat 00:00-Mon 00:00, Sun 12:00-Mon 06:00, Mon 06:00-Mon 07:00");
    assert_int_equal(tw_windows_instants(&two, z, utc(2026, 6, 2, 0, 0), utc(2026, 6, 16, 0, 0),
                                         &iv, &n, &err),
                     TW_OK);
    assert_int_equal(n, 2);
    assert_true(iv[0].to_ns - iv[0].from_ns == 55 * TW_NS_PER_HOUR);
    assert_true(iv[1].from_ns == iv[0].from_ns + TW_NS_PER_WEEK);
    free(iv);
    /* A window inside the missing hour is empty that week; one that ends
     * in it ends when the clocks have gone forward. */
    struct tw_windows gap = parse("Sun 01:15-Sun 01:45");
    assert_int_equal(tw_windows_elapsed(&gap, z, utc(2026, 3, 28, 0, 0), utc(2026, 3, 30, 0, 0),
                                        &ns, &err),
                     TW_OK);
    assert_true(ns == 30 * TW_NS_PER_MIN); /* 01:15-01:45 UTC, read before the change */
    struct tw_windows gap2 = parse("Sun 01:30-Sun 02:00");
    assert_int_equal(tw_windows_elapsed(&gap2, z, utc(2026, 3, 28, 0, 0), utc(2026, 3, 30, 0, 0),
                                        &ns, &err),
                     TW_OK);
    assert_true(ns == 0);
    /* Errors. */
    assert_int_equal(tw_windows_instants(&w, z, 10, 5, &iv, &n, &err), TW_EINVAL);
    assert_int_equal(tw_windows_instants(&w, z, 0, 4000 * TW_NS_PER_DAY, &iv, &n, &err),
                     TW_ERANGE);
    assert_int_equal(tw_windows_instants(&w, z, INT64_MIN, INT64_MAX, &iv, &n, &err), TW_ERANGE);
    assert_int_equal(tw_windows_instants(&w, z, INT64_MAX - TW_NS_PER_DAY, INT64_MAX, &iv, &n,
                                         &err),
                     TW_ERANGE);
    assert_null(iv);
    tw_tz_free(z);
}

/* Custodian's weekday schedule in Sydney over its April change. */
static void test_custodian_in_time(void **state)
{
    (void)state;
    const char *tag = "off=(M-F,19);on=(M-F,7);tz=Australia/Sydney";
    struct tw_windows w;
    assert_int_equal(tw_windows_parse_custodian(tag, strlen(tag), &w, NULL), TW_OK);
    struct tw_tz *z;
    const char *rule = "AEST-10AEDT,M10.1.0,M4.1.0/3";
    assert_int_equal(tw_tz_from_posix(rule, strlen(rule), &z, NULL), TW_OK);
    int64_t ns;
    /* Mon 2026-03-30 00:00 AEDT to Mon 2026-04-06 00:00 AEST: the last 7 h
     * of the weekend before, four 12 h nights, and Fri 19:00 to Mon 00:00,
     * 53 h on the clock plus the hour the clocks go back on Sunday. */
    assert_int_equal(tw_windows_elapsed(&w, z, utc(2026, 3, 29, 13, 0), utc(2026, 4, 5, 14, 0),
                                        &ns, NULL),
                     TW_OK);
    assert_true(ns == (7 + 4 * 12 + 54) * TW_NS_PER_HOUR);
    tw_tz_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_union),
        cmocka_unit_test(test_custodian),
        cmocka_unit_test(test_elapsed_over_clock_changes),
        cmocka_unit_test(test_custodian_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
