/*
 * test_tz.c - TZif files and POSIX TZ strings: real files of the fuzz
 * corpus, files built here (version 1, slim version 2 with only a footer,
 * broken ones), footers of every kind, and local times in gaps and
 * overlaps.
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "core/tz.h"

/* Instant of a UTC civil time. */
static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
    struct tw_civil c = {y, mo, d, h, mi, s, 0};
    int64_t ns;
    assert_int_equal(tw_civil_to_ns(&c, &ns), TW_OK);
    return ns;
}

static struct tw_tz *posix(const char *s)
{
    struct tw_tz *z;
    struct tw_error err = {0};
    if (tw_tz_from_posix(s, strlen(s), &z, &err) != TW_OK)
        fail_msg("%s: %s", s, err.msg);
    return z;
}

static struct tw_tz *corpus(const char *file)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "../fuzz/corpus/tz/%s", file);
    size_t len;
    char *buf = th_fixture(rel, &len);
    struct tw_tz *z;
    struct tw_error err = {0};
    if (tw_tz_parse(file, buf, len, &z, &err) != TW_OK)
        fail_msg("%s: %s", file, err.msg);
    free(buf);
    return z;
}

static void expect(const struct tw_tz *z, int64_t t, int off, bool dst, const char *abbr)
{
    struct tw_tz_info i;
    tw_tz_at(z, t, &i);
    char when[64];
    tw_rfc3339_format_ns(t, 0, 0, when, sizeof(when));
    if (i.utoff_s != off || i.is_dst != dst || strcmp(i.abbr, abbr) != 0)
        fail_msg("%s at %s: %d %d %s, wanted %d %d %s", tw_tz_name(z), when, (int)i.utoff_s,
                 i.is_dst, i.abbr, off, dst, abbr);
}

/* ---- TZif files built here ---- */

struct tb {
    unsigned char b[4096];
    size_t n;
};

static void put32(struct tb *t, uint32_t v)
{
    for (int i = 3; i >= 0; i--)
        t->b[t->n++] = (unsigned char)(v >> (8 * i));
}

static void put64(struct tb *t, int64_t v)
{
    put32(t, (uint32_t)((uint64_t)v >> 32));
    put32(t, (uint32_t)v);
}

static void header(struct tb *t, char version, uint32_t timecnt, uint32_t typecnt,
                   uint32_t charcnt, uint32_t leapcnt)
{
    memcpy(t->b + t->n, "TZif", 4);
    t->n += 4;
    t->b[t->n++] = (unsigned char)version;
    memset(t->b + t->n, 0, 15);
    t->n += 15;
    put32(t, 0); /* isutcnt */
    put32(t, 0); /* isstdcnt */
    put32(t, leapcnt);
    put32(t, timecnt);
    put32(t, typecnt);
    put32(t, charcnt);
}

/* Europe/London-like: GMT, then BST from 2000-03-26 01:00Z, GMT from
 * 2000-10-29 01:00Z; version V ('\0' for 1) with FOOTER (v2+). */
static void build(struct tb *t, char v, const char *footer)
{
    static const char chars[] = "GMT\0BST";
    int64_t tr[2] = {INT64_C(954032400), INT64_C(972781200)};
    t->n = 0;
    if (v != 0) {
        header(t, v, 0, 1, 1, 0);
        put32(t, 0);          /* one type */
        t->b[t->n++] = 0;
        t->b[t->n++] = 0;
        t->b[t->n++] = 0;     /* one NUL */
    }
    header(t, v, 2, 2, sizeof(chars), 0);
    for (int i = 0; i < 2; i++) {
        if (v != 0)
            put64(t, tr[i]);
        else
            put32(t, (uint32_t)tr[i]);
    }
    t->b[t->n++] = 1;
    t->b[t->n++] = 0;
    put32(t, 0);
    t->b[t->n++] = 0;
    t->b[t->n++] = 0;
    put32(t, 3600);
    t->b[t->n++] = 1;
    t->b[t->n++] = 4;
    memcpy(t->b + t->n, chars, sizeof(chars));
    t->n += sizeof(chars);
    if (v != 0) {
        t->b[t->n++] = '\n';
        memcpy(t->b + t->n, footer, strlen(footer));
        t->n += strlen(footer);
        t->b[t->n++] = '\n';
    }
}

static void test_real_files(void **state)
{
    (void)state;
    struct tw_tz *z = corpus("Europe_London");
    assert_string_equal(tw_tz_name(z), "Europe_London");
    expect(z, utc(2026, 1, 15, 12, 0, 0), 0, false, "GMT");
    expect(z, utc(2026, 7, 15, 12, 0, 0), 3600, true, "BST");
    /* The change itself, to the second. */
    expect(z, utc(2026, 3, 29, 0, 59, 59), 0, false, "GMT");
    expect(z, utc(2026, 3, 29, 1, 0, 0), 3600, true, "BST");
    expect(z, utc(2026, 10, 25, 0, 59, 59), 3600, true, "BST");
    expect(z, utc(2026, 10, 25, 1, 0, 0), 0, false, "GMT");
    /* Past the table (2037): the footer GMT0BST,M3.5.0/1,M10.5.0. */
    expect(z, utc(2055, 3, 28, 0, 59, 59), 0, false, "GMT");
    expect(z, utc(2055, 3, 28, 1, 0, 0), 3600, true, "BST");
    expect(z, utc(2200, 7, 1, 0, 0, 0), 3600, true, "BST");
    /* Before the first transition: local mean time. */
    expect(z, utc(1800, 1, 1, 0, 0, 0), -75, false, "LMT");
    int64_t at;
    assert_true(tw_tz_next_transition(z, utc(2026, 1, 1, 0, 0, 0), &at));
    assert_true(at == utc(2026, 3, 29, 1, 0, 0));
    assert_true(tw_tz_next_transition(z, at, &at));
    assert_true(at == utc(2026, 10, 25, 1, 0, 0));
    assert_true(tw_tz_next_transition(z, utc(2050, 11, 1, 0, 0, 0), &at));
    assert_true(at == utc(2051, 3, 26, 1, 0, 0));
    tw_tz_free(z);

    /* <+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45: southern, quarter hours. */
    z = corpus("Pacific_Chatham");
    expect(z, utc(2050, 1, 1, 0, 0, 0), 13 * 3600 + 45 * 60, true, "+1345");
    expect(z, utc(2050, 6, 1, 0, 0, 0), 12 * 3600 + 45 * 60, false, "+1245");
    /* 2050-04-03 03:45 local (+1345) is 2050-04-02 14:00Z. */
    expect(z, utc(2050, 4, 2, 13, 59, 59), 13 * 3600 + 45 * 60, true, "+1345");
    expect(z, utc(2050, 4, 2, 14, 0, 0), 12 * 3600 + 45 * 60, false, "+1245");
    tw_tz_free(z);

    /* Casablanca: its table runs to 2087 (Ramadan at +00, flagged DST), the
     * footer <+01>-1 has no rule. */
    z = corpus("Africa_Casablanca");
    expect(z, utc(2029, 12, 1, 0, 0, 0), 3600, false, "+01");
    expect(z, utc(2030, 1, 15, 12, 0, 0), 0, true, "+00");
    expect(z, utc(2030, 3, 1, 0, 0, 0), 3600, false, "+01");
    expect(z, utc(2100, 1, 1, 0, 0, 0), 3600, false, "+01");
    assert_false(tw_tz_next_transition(z, utc(2100, 1, 1, 0, 0, 0), &at));
    tw_tz_free(z);

    /* Nuuk, version 3 footer <-02>2<-01>,M3.5.0/-1,M10.5.0/0: the change is
     * at -1:00, i.e. 23:00 of the Saturday before the last Sunday. */
    z = corpus("America_Nuuk");
    expect(z, utc(2050, 3, 27, 0, 59, 59), -7200, false, "-02");
    expect(z, utc(2050, 3, 27, 1, 0, 0), -3600, true, "-01");
    expect(z, utc(2050, 10, 30, 0, 59, 59), -3600, true, "-01");
    expect(z, utc(2050, 10, 30, 1, 0, 0), -7200, false, "-02");
    tw_tz_free(z);

    z = corpus("UTC");
    expect(z, utc(2026, 6, 1, 0, 0, 0), 0, false, "UTC");
    assert_false(tw_tz_next_transition(z, 0, &at));
    tw_tz_free(z);
}

static void test_built_files(void **state)
{
    (void)state;
    struct tb t;
    struct tw_tz *z;
    struct tw_error err = {0};
    /* Version 1: the table only; after it, the last type. */
    build(&t, 0, "");
    assert_int_equal(tw_tz_parse("v1", t.b, t.n, &z, &err), TW_OK);
    expect(z, utc(2000, 7, 1, 0, 0, 0), 3600, true, "BST");
    expect(z, utc(2030, 7, 1, 0, 0, 0), 0, false, "GMT");
    tw_tz_free(z);
    /* Versions 2, 3, 4 with a footer answer after the table. */
    for (char v = '2'; v <= '4'; v++) {
        build(&t, v, "GMT0BST,M3.5.0/1,M10.5.0");
        if (tw_tz_parse("v2+", t.b, t.n, &z, &err) != TW_OK)
            fail_msg("version %c: %s", v, err.msg);
        expect(z, utc(2000, 7, 1, 0, 0, 0), 3600, true, "BST");
        expect(z, utc(2030, 7, 1, 0, 0, 0), 3600, true, "BST");
        expect(z, utc(2030, 12, 1, 0, 0, 0), 0, false, "GMT");
        tw_tz_free(z);
    }
    /* An empty footer: the last type, as version 1. */
    build(&t, '2', "");
    assert_int_equal(tw_tz_parse("empty", t.b, t.n, &z, &err), TW_OK);
    expect(z, utc(2030, 7, 1, 0, 0, 0), 0, false, "GMT");
    tw_tz_free(z);
}

/* Each broken file is refused with the code, a message naming the trouble
 * and (for TW_EPARSE) its byte. */
static void test_bad_files(void **state)
{
    (void)state;
    struct tb t;
    struct tw_tz *z = (struct tw_tz *)&t; /* must come back NULL */
    struct tw_error err = {0};
    build(&t, '2', "GMT0BST,M3.5.0/1,M10.5.0");
    struct tb good = t;
    struct {
        const char *what;
        size_t at, len;     /* replace LEN bytes at AT ... */
        const char *with;   /* ... with these (NULL: cut the file at AT) */
        enum tw_err code;
        const char *msg;
    } rows[] = {
        {"empty", 0, 0, NULL, TW_EPARSE, "too short"},
        {"magic", 0, 4, "TZig", TW_EPARSE, "magic"},
        {"version 5", 4, 1, "5", TW_EUNSUPPORTED, "version 5"},
        {"cut in the header", 30, 0, NULL, TW_EPARSE, "header is cut short"},
        {"cut in the data", good.n - 40, 0, NULL, TW_EPARSE, "cut short"},
        {"no footer", good.n - 25, 0, NULL, TW_EPARSE, "footer"},
        {"footer without newline", good.n - 1, 0, NULL, TW_EPARSE, "closing newline"},
        {"footer without a rule", good.n - 18, 17, "", TW_EPARSE, "rule"},
        {"footer bad week", good.n - 14, 1, "9", TW_EPARSE, "week 1..5"},
        {"leap seconds", 51 + 28 + 3, 1, "\x01", TW_EUNSUPPORTED, "leap seconds"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        t = good;
        if (!rows[i].with) {
            t.n = rows[i].at;
        } else {
            size_t wl = strlen(rows[i].with);
            memmove(t.b + rows[i].at + wl, t.b + rows[i].at + rows[i].len,
                    t.n - rows[i].at - rows[i].len);
            memcpy(t.b + rows[i].at, rows[i].with, wl);
            t.n = t.n - rows[i].len + wl;
        }
        memset(&err, 0, sizeof(err));
        enum tw_err rc = tw_tz_parse("Bad/Zone", t.b, t.n, &z, &err);
        if (rc != rows[i].code || z || !strstr(err.msg, rows[i].msg) ||
            !strstr(err.msg, "Bad/Zone"))
            fail_msg("%s: code %d, message \"%s\"", rows[i].what, rc, err.msg);
        if (rc == TW_EPARSE)
            assert_true(err.column > 0);
    }
    /* Transitions out of order, a type index past the types. */
    t = good;
    size_t tr = 44 + 7 + 44; /* the 64-bit transitions */
    memcpy(t.b + tr + 8, t.b + tr, 8);
    assert_int_equal(tw_tz_parse("x", t.b, t.n, &z, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "ascending"));
    assert_int_equal(err.column, (long)(tr + 8 + 1));
    t = good;
    t.b[tr + 16] = 7;
    assert_int_equal(tw_tz_parse("x", t.b, t.n, &z, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "time type that does not exist"));
    /* The corpus's truncated London. */
    size_t len;
    char *buf = th_fixture("../fuzz/corpus/tz/truncated_London", &len);
    assert_int_equal(tw_tz_parse("Europe/London", buf, len, &z, &err), TW_EPARSE);
    assert_null(z);
    assert_non_null(strstr(err.msg, "cut short"));
    free(buf);
}

static void test_posix_strings(void **state)
{
    (void)state;
    struct tw_tz *z = posix("EST5EDT,M3.2.0,M11.1.0");
    expect(z, utc(2026, 3, 8, 6, 59, 59), -5 * 3600, false, "EST");
    expect(z, utc(2026, 3, 8, 7, 0, 0), -4 * 3600, true, "EDT");
    expect(z, utc(2026, 11, 1, 5, 59, 59), -4 * 3600, true, "EDT");
    expect(z, utc(2026, 11, 1, 6, 0, 0), -5 * 3600, false, "EST");
    tw_tz_free(z);
    /* Jerusalem's version 3 footer: 26:00 of the Thursday before the last
     * Friday of March (02:00 Friday). */
    z = posix("IST-2IDT,M3.4.4/26,M10.5.0");
    expect(z, utc(2050, 3, 24, 23, 59, 59), 7200, false, "IST");
    expect(z, utc(2050, 3, 25, 0, 0, 0), 10800, true, "IDT");
    tw_tz_free(z);
    /* DST all year (version 3): never a change. */
    z = posix("EST5EDT,0/0,J365/25");
    expect(z, utc(2026, 1, 1, 0, 0, 0), -4 * 3600, true, "EDT");
    expect(z, utc(2026, 12, 31, 23, 59, 59), -4 * 3600, true, "EDT");
    expect(z, utc(2027, 1, 1, 5, 0, 0), -4 * 3600, true, "EDT");
    int64_t at;
    assert_false(tw_tz_next_transition(z, utc(2026, 6, 1, 0, 0, 0), &at));
    tw_tz_free(z);
    /* Jn never counts February 29; n does. */
    z = posix("AAA0BBB,J60/0,300/0");
    expect(z, utc(2028, 2, 29, 23, 59, 59), 0, false, "AAA");
    expect(z, utc(2028, 3, 1, 0, 0, 0), 3600, true, "BBB");
    /* Day 300 of 2028 (counting from 0, with Feb 29) is October 27. */
    expect(z, utc(2028, 10, 26, 22, 59, 59), 3600, true, "BBB");
    expect(z, utc(2028, 10, 26, 23, 0, 0), 0, false, "AAA");
    tw_tz_free(z);
    /* Negative DST (Dublin): winter is the "daylight" time. */
    z = posix("IST-1GMT0,M10.5.0,M3.5.0/1");
    expect(z, utc(2050, 1, 1, 0, 0, 0), 0, true, "GMT");
    expect(z, utc(2050, 7, 1, 0, 0, 0), 3600, false, "IST");
    tw_tz_free(z);
    z = posix("<-0330>3:30");
    expect(z, utc(2026, 7, 1, 0, 0, 0), -(3 * 3600 + 30 * 60), false, "-0330");
    tw_tz_free(z);
    z = posix("<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45");
    expect(z, utc(2050, 9, 24, 14, 0, 0), 13 * 3600 + 45 * 60, true, "+1345");
    tw_tz_free(z);

    struct {
        const char *s;
        long col;
        const char *msg;
    } bad[] = {
        {"", 1, "abbreviation"},
        {"UT0", 3, "at least 3"},
        {"UTC", 4, "offset"},
        {"EST5EDT", 8, "rule"},
        {"EST5EDT,M3.2.0", 15, "end of daylight"},
        {"EST5EDT,M13.2.0,M11.1.0", 10, "month 1..12"},
        {"EST5EDT,M3.2.7,M11.1.0", 14, "weekday 0..6"},
        {"EST5EDT,M3.2.0/168,M11.1.0", 16, "-167..167"},
        {"EST25", 4, "0..24"},
        {"<+01-1", 7, "'>'"},
        {"EST5EDT,J0,J365", 10, "1..365"},
        {"UTC0 ", 5, "EXPECT-NAME"},
        {"EST5EDT,M3.2.0,M11.1.0x", 23, "end of the TZ string"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tw_error err = {0};
        assert_int_equal(tw_tz_from_posix(bad[i].s, strlen(bad[i].s), &z, &err), TW_EPARSE);
        assert_null(z);
        const char *want = strcmp(bad[i].msg, "EXPECT-NAME") == 0 ? "abbreviation" : bad[i].msg;
        if (err.column != bad[i].col || !strstr(err.msg, want))
            fail_msg("\"%s\": column %ld, message \"%s\"", bad[i].s, err.column, err.msg);
    }
}

static void test_local_times(void **state)
{
    (void)state;
    struct tw_tz *z = corpus("Europe_London");
    struct {
        struct tw_civil local;
        int64_t want;
        enum tw_tz_local kind;
    } rows[] = {
        /* Spring forward 2026-03-29 01:00 GMT -> 02:00 BST. */
        {{2026, 3, 29, 0, 59, 59, 0}, utc(2026, 3, 29, 0, 59, 59), TW_TZ_LOCAL_UNIQUE},
        {{2026, 3, 29, 1, 0, 0, 0}, utc(2026, 3, 29, 1, 0, 0), TW_TZ_LOCAL_GAP},
        {{2026, 3, 29, 1, 30, 0, 0}, utc(2026, 3, 29, 1, 30, 0), TW_TZ_LOCAL_GAP},
        {{2026, 3, 29, 2, 0, 0, 0}, utc(2026, 3, 29, 1, 0, 0), TW_TZ_LOCAL_UNIQUE},
        /* Fall back 2026-10-25 02:00 BST -> 01:00 GMT: 01:xx twice. */
        {{2026, 10, 25, 0, 59, 59, 0}, utc(2026, 10, 24, 23, 59, 59), TW_TZ_LOCAL_UNIQUE},
        {{2026, 10, 25, 1, 0, 0, 0}, utc(2026, 10, 25, 0, 0, 0), TW_TZ_LOCAL_OVERLAP},
        {{2026, 10, 25, 1, 30, 0, 0}, utc(2026, 10, 25, 0, 30, 0), TW_TZ_LOCAL_OVERLAP},
        {{2026, 10, 25, 2, 0, 0, 0}, utc(2026, 10, 25, 2, 0, 0), TW_TZ_LOCAL_UNIQUE},
        /* The same past the table, from the footer. */
        {{2055, 3, 28, 1, 30, 0, 0}, utc(2055, 3, 28, 1, 30, 0), TW_TZ_LOCAL_GAP},
        {{2055, 10, 31, 1, 30, 0, 0}, utc(2055, 10, 31, 0, 30, 0), TW_TZ_LOCAL_OVERLAP},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int64_t t;
        enum tw_tz_local kind;
        assert_int_equal(tw_tz_civil_to_ns(z, &rows[i].local, &t, &kind), TW_OK);
        if (t != rows[i].want || kind != rows[i].kind)
            fail_msg("row %zu: %lld kind %d, wanted %lld kind %d", i, (long long)t, kind,
                     (long long)rows[i].want, rows[i].kind);
    }
    /* Fractions are kept. */
    struct tw_civil c = {2026, 10, 25, 1, 30, 0, 250};
    int64_t t;
    assert_int_equal(tw_tz_civil_to_ns(z, &c, &t, NULL), TW_OK);
    assert_true(t == utc(2026, 10, 25, 0, 30, 0) + 250);
    struct tw_civil back;
    struct tw_tz_info info;
    tw_tz_ns_to_civil(z, t, &back, &info);
    assert_memory_equal(&back, &c, sizeof(c));
    assert_string_equal(info.abbr, "BST");
    struct tw_civil bad = {2026, 2, 30, 0, 0, 0, 0};
    assert_int_equal(tw_tz_civil_to_ns(z, &bad, &t, NULL), TW_EINVAL);
    struct tw_civil far = {2262, 12, 31, 0, 0, 0, 0};
    assert_int_equal(tw_tz_civil_to_ns(z, &far, &t, NULL), TW_ERANGE);
    tw_tz_free(z);

    /* Chatham's 45-minute offsets and a southern autumn overlap. */
    z = corpus("Pacific_Chatham");
    struct tw_civil ov = {2050, 4, 3, 3, 0, 0, 0};
    enum tw_tz_local kind;
    assert_int_equal(tw_tz_civil_to_ns(z, &ov, &t, &kind), TW_OK);
    assert_int_equal(kind, TW_TZ_LOCAL_OVERLAP);
    assert_true(t == utc(2050, 4, 2, 13, 15, 0));
    struct tw_civil gap = {2050, 9, 25, 3, 0, 0, 0};
    assert_int_equal(tw_tz_civil_to_ns(z, &gap, &t, &kind), TW_OK);
    assert_int_equal(kind, TW_TZ_LOCAL_GAP);
    assert_true(t == utc(2050, 9, 24, 14, 15, 0));
    tw_tz_free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_files),   cmocka_unit_test(test_built_files),
        cmocka_unit_test(test_bad_files),    cmocka_unit_test(test_posix_strings),
        cmocka_unit_test(test_local_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
