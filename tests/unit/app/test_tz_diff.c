/*
 * test_tz_diff.c - core/tz against Python's zoneinfo, 2020 to 2060.
 *
 * For each zone below, loaded through tw_tz_load from the system's tzdata
 * (Debian's files: their tables stop in 2037, the footer answers after),
 * this writes tierwise's answers to a file: the offset, DST flag and
 * abbreviation at instants every 7 h 41 min and at, just before and just
 * after every transition; and the instant of local times every 9 h 13 min
 * and around every transition on both sides of it (the gap and overlap
 * cases, by the rule in core/tz.h).  tz_diff.py computes the same with
 * zoneinfo and reports every difference.  Skipped (77) without python3, its
 * zoneinfo module, or the zone files.
 */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/tzload.h"
#include "core/time.h"
#include "core/tz.h"

static const char *const zones[] = {
    /* The eight. */
    "Europe/London", "America/New_York", "Australia/Sydney", "Asia/Kolkata",
    "Pacific/Chatham", "Asia/Tokyo", "America/Sao_Paulo", "Africa/Casablanca",
    /* Footers with version 3 times (-1, 25 h, 26 h), negative DST, 30 min and
     * 2 h DST, southern rules, no DST. */
    "America/Nuuk", "Asia/Jerusalem", "Europe/Dublin", "Australia/Lord_Howe",
    "Antarctica/Troll", "America/Santiago", "America/St_Johns", "Asia/Tehran",
    "Pacific/Apia", "America/Asuncion", "Asia/Gaza", "UTC",
};

static long n_utc, n_local;

static void put_utc(FILE *f, const struct tw_tz *z, int64_t t_s)
{
    struct tw_tz_info i;
    tw_tz_at(z, t_s * TW_NS_PER_S, &i);
    fprintf(f, "U %lld %d %d %s\n", (long long)t_s, (int)i.utoff_s, i.is_dst ? 1 : 0, i.abbr);
    n_utc++;
}

static void put_local(FILE *f, const struct tw_tz *z, int64_t local_s)
{
    struct tw_civil c;
    tw_civil_from_ns(local_s * TW_NS_PER_S, &c);
    int64_t t;
    enum tw_tz_local kind;
    assert_int_equal(tw_tz_civil_to_ns(z, &c, &t, &kind), TW_OK);
    assert_int_equal(t % TW_NS_PER_S, 0);
    fprintf(f, "L %d %d %d %d %d %d %lld %s\n", (int)c.year, c.month, c.day, c.hour, c.minute,
            c.second, (long long)(t / TW_NS_PER_S),
            kind == TW_TZ_LOCAL_GAP ? "gap" : kind == TW_TZ_LOCAL_OVERLAP ? "overlap" : "unique");
    n_local++;
}

static void test_against_zoneinfo(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/tz-answers.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const int64_t from = INT64_C(1577836800); /* 2020-01-01T00:00:00Z */
    const int64_t to = INT64_C(2871763200);   /* 2061-01-01T00:00:00Z */
    long transitions = 0;
    for (size_t k = 0; k < sizeof(zones) / sizeof(zones[0]); k++) {
        struct tw_tz *z;
        struct tw_error err = {0};
        if (tw_tz_load(zones[k], &z, &err) != TW_OK)
            fail_msg("%s", err.msg);
        fprintf(f, "Z %s\n", zones[k]);
        for (int64_t t = from; t < to; t += 7 * 3600 + 41 * 60)
            put_utc(f, z, t);
        for (int64_t l = from; l < to; l += 9 * 3600 + 13 * 60)
            put_local(f, z, l);
        int64_t at = (from - 86400) * TW_NS_PER_S;
        while (tw_tz_next_transition(z, at, &at) && at < to * TW_NS_PER_S) {
            int64_t s = at / TW_NS_PER_S;
            struct tw_tz_info before, after;
            tw_tz_at(z, at - TW_NS_PER_S, &before);
            tw_tz_at(z, at, &after);
            transitions++;
            static const int d[] = {-3600, -1, 0, 1, 3600};
            for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
                put_utc(f, z, s + d[i]);
            /* Local times on both sides of the change, read in either offset,
             * and in the middle of the gap or overlap. */
            static const int ld[] = {-1800, -1, 0, 1, 1799, 1800};
            for (size_t i = 0; i < sizeof(ld) / sizeof(ld[0]); i++) {
                put_local(f, z, s + before.utoff_s + ld[i]);
                put_local(f, z, s + after.utoff_s + ld[i]);
            }
            put_local(f, z, s + (before.utoff_s + after.utoff_s) / 2);
        }
        tw_tz_free(z);
    }
    assert_int_equal(fclose(f), 0);
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "python3 '%s/../unit/app/tz_diff.py' '%s' 2>&1", TW_FIXTURES, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[1024];
    while (fgets(line, sizeof(line), p))
        fputs(line, stdout);
    int status = pclose(p);
    printf("tierwise side: %zu zones, %ld transitions in 2020-2060, %ld UTC instants, "
           "%ld local times\n",
           sizeof(zones) / sizeof(zones[0]), transitions, n_utc, n_local);
    th_rmtree(dir);
    free(dir);
    assert_true(transitions > 600);
    assert_int_equal(status, 0);
}

int main(void)
{
    const char *tzdir = getenv("TZDIR");
    char probe[4096];
    struct stat st;
    snprintf(probe, sizeof(probe), "%s/Europe/London",
             tzdir && tzdir[0] ? tzdir : TW_TZDIR_DEFAULT);
    if (stat(probe, &st) != 0) {
        printf("skipped: no zone files (%s); install tzdata\n", probe);
        return 77;
    }
    if (system("python3 -c 'import zoneinfo; zoneinfo.ZoneInfo(\"Europe/London\")' "
               ">/dev/null 2>&1") != 0) {
        printf("skipped: python3 with zoneinfo is not here\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_zoneinfo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
