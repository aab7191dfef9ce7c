/* test_spool.c - the agent's spool: order, the bound, persistence across a
 * reopen, files that are not a spool, rejected entries set aside, and the
 * backoff schedule. */
#include "testhelp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "agent/spool.h"

struct fx {
    char *dir;
    char path[4096];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->path, sizeof(f->path), "%s/spool.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void id_of(int i, char *out, size_t n)
{
    snprintf(out, n, "00000000-0000-4000-8000-%012d", i);
}

static struct tw_spool *open_ok(const char *path, int64_t max_reports, int64_t max_bytes)
{
    struct tw_spool_opts o = {max_reports, max_bytes};
    struct tw_spool *sp = NULL;
    struct tw_error err = {0};
    enum tw_err rc = tw_spool_open(path, &o, &sp, &err);
    if (rc != TW_OK)
        fail_msg("open %s: %s", path, err.msg);
    return sp;
}

static void put_n(struct tw_spool *sp, int from, int to)
{
    for (int i = from; i < to; i++) {
        char id[40], body[64];
        id_of(i, id, sizeof(id));
        snprintf(body, sizeof(body), "{\"n\":%d}", i);
        struct tw_error err = {0};
        assert_int_equal(tw_spool_put(sp, id, body, strlen(body), 1000 + i, &err), TW_OK);
    }
}

/* Oldest first; a delivered entry leaves; a repeated id is stored once. */
static void test_order(void **state)
{
    struct fx *f = *state;
    struct tw_spool *sp = open_ok(f->path, 0, 0);
    struct tw_error err = {0};
    struct tw_spool_entry e;
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_ENOENT);
    put_n(sp, 0, 5);
    put_n(sp, 2, 3); /* again: no second copy */
    struct tw_spool_stats s;
    assert_int_equal(tw_spool_stats(sp, &s, &err), TW_OK);
    assert_int_equal(s.pending, 5);
    assert_int_equal(s.oldest_ms, 1000);
    for (int i = 0; i < 5; i++) {
        char id[40], body[64];
        id_of(i, id, sizeof(id));
        snprintf(body, sizeof(body), "{\"n\":%d}", i);
        assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
        assert_string_equal(e.id, id);
        assert_string_equal(e.body, body);
        assert_int_equal(e.len, strlen(body));
        assert_int_equal(e.queued_ms, 1000 + i);
        if (i == 1) { /* a failure keeps it first in line */
            assert_int_equal(tw_spool_failed(sp, e.seq, 503, "HTTP 503", &err), TW_OK);
            tw_spool_entry_cleanup(&e);
            assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
            assert_string_equal(e.id, id);
            assert_int_equal(e.attempts, 1);
            assert_int_equal(e.http_status, 503);
            assert_string_equal(e.last_error, "HTTP 503");
        }
        assert_int_equal(tw_spool_delivered(sp, e.seq, &err), TW_OK);
        tw_spool_entry_cleanup(&e);
    }
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_ENOENT);
    tw_spool_close(sp);
}

/* The bound on reports and on bytes: the new report is refused, with a
 * message, and nothing already there is lost. */
static void test_bound(void **state)
{
    struct fx *f = *state;
    struct tw_spool *sp = open_ok(f->path, 3, 0);
    struct tw_error err = {0};
    put_n(sp, 0, 3);
    char id[40];
    id_of(9, id, sizeof(id));
    assert_int_equal(tw_spool_put(sp, id, "{}", 2, 5, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "is full"));
    assert_non_null(strstr(err.msg, id));
    assert_non_null(strstr(err.msg, "3 reports"));
    struct tw_spool_stats s;
    assert_int_equal(tw_spool_stats(sp, &s, &err), TW_OK);
    assert_int_equal(s.pending, 3);
    /* A repeated id still answers OK (it is already kept). */
    id_of(1, id, sizeof(id));
    assert_int_equal(tw_spool_put(sp, id, "{\"n\":1}", 7, 5, &err), TW_OK);
    tw_spool_close(sp);

    /* Bytes: 21 held, 30 allowed: one more of 8 fits, a second does not. */
    sp = open_ok(f->path, 100, 30);
    id_of(10, id, sizeof(id));
    assert_int_equal(tw_spool_put(sp, id, "12345678", 8, 5, &err), TW_OK);
    id_of(11, id, sizeof(id));
    assert_int_equal(tw_spool_put(sp, id, "12345678", 8, 5, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "30 bytes"));
    tw_spool_close(sp);
}

/* What was spooled survives closing and reopening (a restart). */
static void test_persistence(void **state)
{
    struct fx *f = *state;
    struct tw_spool *sp = open_ok(f->path, 0, 0);
    put_n(sp, 0, 3);
    struct tw_error err = {0};
    struct tw_spool_entry e;
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    assert_int_equal(tw_spool_delivered(sp, e.seq, &err), TW_OK);
    tw_spool_entry_cleanup(&e);
    tw_spool_close(sp);

    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 077, 0); /* private */

    sp = open_ok(f->path, 0, 0);
    char id[40];
    id_of(1, id, sizeof(id));
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    assert_string_equal(e.id, id);
    tw_spool_entry_cleanup(&e);
    struct tw_spool_stats s;
    assert_int_equal(tw_spool_stats(sp, &s, &err), TW_OK);
    assert_int_equal(s.pending, 2);
    tw_spool_close(sp);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    fclose(fp);
}

/* Text, another program's database, a damaged spool, a newer spool, a
 * directory: each refused with a message naming the file. */
static void test_foreign(void **state)
{
    struct fx *f = *state;
    struct tw_spool *sp = NULL;
    struct tw_error err = {0};
    char p[4200];

    snprintf(p, sizeof(p), "%s/text", f->dir);
    const char junk[] = "this is not a database, just some text that is long enough to "
                        "look like a header of a file of a hundred bytes or more .....";
    write_file(p, junk, sizeof(junk) - 1);
    assert_int_equal(tw_spool_open(p, NULL, &sp, &err), TW_EINVAL);
    assert_null(sp);
    assert_non_null(strstr(err.msg, "not a tierwise spool"));
    assert_non_null(strstr(err.msg, p));

    snprintf(p, sizeof(p), "%s/other.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL,
                                  NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(tw_spool_open(p, NULL, &sp, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "another program"));

    /* A newer spool version. */
    snprintf(p, sizeof(p), "%s/newer.db", f->dir);
    sp = open_ok(p, 0, 0);
    tw_spool_close(sp);
    sp = NULL;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(tw_spool_open(p, NULL, &sp, &err), TW_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "newer"));

    /* A damaged spool: the right header, garbage in its pages. */
    snprintf(p, sizeof(p), "%s/damaged.db", f->dir);
    sp = open_ok(p, 0, 0);
    put_n(sp, 0, 50);
    tw_spool_close(sp);
    sp = NULL;
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    char garbage[4096];
    memset(garbage, 0xa5, sizeof(garbage));
    for (off_t off = 4096; off < st.st_size; off += (off_t)sizeof(garbage))
        assert_int_equal(pwrite(fd, garbage, sizeof(garbage), off), (ssize_t)sizeof(garbage));
    close(fd);
    assert_int_equal(tw_spool_open(p, NULL, &sp, &err), TW_EINVAL);
    assert_null(sp);
    assert_non_null(strstr(err.msg, "damaged"));

    assert_int_equal(tw_spool_open(f->dir, NULL, &sp, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "directory"));
    snprintf(p, sizeof(p), "%s/no/such/dir/spool.db", f->dir);
    assert_int_equal(tw_spool_open(p, NULL, &sp, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "--spool"));
}

/* A rejected entry is set aside: not handed out again, still counted and
 * listed with the server's words, and can be queued again. */
static void test_rejected(void **state)
{
    struct fx *f = *state;
    struct tw_spool *sp = open_ok(f->path, 3, 0);
    put_n(sp, 0, 2);
    struct tw_error err = {0};
    struct tw_spool_entry e;
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    assert_int_equal(tw_spool_reject(sp, e.seq, 400, "bad_report: results[0]: expected an object",
                                     &err),
                     TW_OK);
    tw_spool_entry_cleanup(&e);
    char id1[40];
    id_of(1, id1, sizeof(id1));
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    assert_string_equal(e.id, id1);
    tw_spool_entry_cleanup(&e);

    struct tw_spool_stats s;
    assert_int_equal(tw_spool_stats(sp, &s, &err), TW_OK);
    assert_int_equal(s.pending, 1);
    assert_int_equal(s.rejected, 1);

    json_t *list = NULL;
    assert_int_equal(tw_spool_list(sp, &list, &err), TW_OK);
    assert_int_equal(json_array_size(list), 2);
    json_t *first = json_array_get(list, 0);
    assert_string_equal(json_string_value(json_object_get(first, "state")), "rejected");
    assert_int_equal(json_integer_value(json_object_get(first, "http_status")), 400);
    assert_non_null(strstr(json_string_value(json_object_get(first, "last_error")), "results[0]"));
    assert_string_equal(json_string_value(json_object_get(first, "queued_at")),
                        "1970-01-01T00:00:01Z");
    json_decref(list);

    /* Rejected entries count against the bound. */
    put_n(sp, 2, 3);
    char id[40];
    id_of(3, id, sizeof(id));
    assert_int_equal(tw_spool_put(sp, id, "{}", 2, 1, &err), TW_ERANGE);
    assert_non_null(strstr(err.msg, "1 of them rejected"));

    int64_t n = 0;
    assert_int_equal(tw_spool_retry_rejected(sp, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    char id0[40];
    id_of(0, id0, sizeof(id0));
    assert_int_equal(tw_spool_oldest(sp, &e, &err), TW_OK);
    assert_string_equal(e.id, id0); /* back in its place: oldest */
    tw_spool_entry_cleanup(&e);
    tw_spool_close(sp);
}

/* Doubling from the base to the ceiling; jitter within [step/2, step]. */
static void test_backoff(void **state)
{
    (void)state;
    uint64_t rng = 12345;
    const int64_t base = 1000, max = 60000;
    for (int failures = 1; failures <= 40; failures++) {
        int64_t step = base;
        for (int i = 1; i < failures && step < max; i++)
            step *= 2;
        if (step > max)
            step = max;
        int64_t lo = INT64_MAX, hi = 0;
        for (int k = 0; k < 500; k++) {
            int64_t w = tw_spool_backoff_ms(failures, base, max, &rng);
            assert_true(w >= step / 2);
            assert_true(w <= step);
            if (w < lo)
                lo = w;
            if (w > hi)
                hi = w;
        }
        /* The jitter really spreads the waits over the range. */
        assert_true(hi - lo > step / 4);
    }
    /* Huge failure counts don't overflow; odd arguments are made sane. */
    assert_true(tw_spool_backoff_ms(1000000, base, max, &rng) <= max);
    assert_true(tw_spool_backoff_ms(1, 0, 0, &rng) <= 1);
    rng = 0;
    assert_true(tw_spool_backoff_ms(3, base, max, &rng) <= 4000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected, setup, teardown),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
