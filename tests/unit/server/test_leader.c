/* test_leader.c - several backends on one database: which one runs each
 * kind of periodic work (leader.c), and /healthz over the store's probe.
 *
 * SQLite: every kind is always this backend's (one process per file),
 * even when its handle can't be opened.
 * PostgreSQL (part "pg", on the server TW_TEST_PG names; 77 without):
 * of two backends' leaders on one database, one holds a kind and the
 * other not; the second takes
 * it over when the first lets go (closed) or when the first's connection
 * dies (pg_terminate_backend), and the first, connected again, finds it
 * another's.  A server whose database stops taking connections answers
 * /healthz 503 with the reason, then 200 again once it takes them.
 * ctest-parts: pg */
#include "testhelp.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "server/server_int.h"
#include "th_store.h"

/* A server as leader.c sees one: its database only. */
static struct tw_server *fake_server(const char *loc)
{
    struct tw_server *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    snprintf(s->db_path, sizeof(s->db_path), "%s", loc);
    struct tw_error err = {0};
    assert_int_equal(tw_srv_leader_start(s, &err), TW_OK);
    assert_non_null(s->leader);
    return s;
}

static void fake_free(struct tw_server *s)
{
    tw_srv_leader_unref(s->leader);
    free(s);
}

static void test_sqlite_always_held(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char db[4200];
    snprintf(db, sizeof(db), "%s/tw.db", dir);
    struct tw_server *a = fake_server(db), *b = fake_server(db);
    const char *kinds[] = {"sync", "vmsizes", "drift", "scheduler", "rejudge"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        assert_true(tw_srv_work_mine(a, kinds[i]));
        assert_true(tw_srv_work_mine(b, kinds[i]));
        assert_true(tw_srv_work_mine(a, kinds[i])); /* asked again: still */
    }
    /* /metrics: each kind asked for, held */
    struct tw_metrics_store ms;
    memset(&ms, 0, sizeof(ms));
    tw_srv_leader_held(a->leader, &ms);
    assert_int_equal(ms.n_work, 5);
    assert_string_equal(ms.work[3].kind, "scheduler");
    assert_true(ms.work[3].held);
    const char *labels[] = {"GET /healthz"};
    struct tw_metrics *m = tw_metrics_new(labels, 1);
    assert_non_null(m);
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, &ms, &out), TW_OK);
    assert_non_null(strstr(out.data, "# TYPE tierwise_periodic_work_held gauge\n"));
    assert_non_null(strstr(out.data, "tierwise_periodic_work_held{kind=\"sync\"} 1\n"));
    assert_non_null(strstr(out.data, "tierwise_periodic_work_held{kind=\"rejudge\"} 1\n"));
    tw_buf_cleanup(&out);
    tw_metrics_free(m);
    /* a job holding the leader past the server's end still asks it */
    struct tw_srv_leader *kept = tw_srv_leader_ref(a->leader);
    fake_free(a);
    assert_true(tw_srv_leader_mine(kept, "sync"));
    tw_srv_leader_unref(kept);
    fake_free(b);
    assert_true(tw_srv_leader_mine(NULL, "sync")); /* no leader: alone */
    /* A SQLite file that can't be opened leaves the work this backend's
     * (the job's own open says what fails). */
    char gone[4300];
    snprintf(gone, sizeof(gone), "%s/no-such-folder/tw.db", dir);
    struct tw_server *g = fake_server(gone);
    assert_true(tw_srv_work_mine(g, "sync"));
    fake_free(g);
    th_rmtree(dir);
    free(dir);
}

/* A PostgreSQL location for this test, or the test skipped. */
static bool pg_location(const char *dir, const char *name, char *out, size_t len)
{
    if (!getenv("TW_TEST_PG") || !getenv("TW_TEST_PG")[0])
        return false;
    setenv("TW_TEST_STORE", "pg", 1);
    th_store_location(dir, name, out, len);
    return true;
}

static void test_pg_one_holder(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char loc[4200];
    if (!pg_location(dir, "leader", loc, sizeof(loc))) {
        th_rmtree(dir);
        free(dir);
        skip();
    }
    struct tw_server *a = fake_server(loc), *b = fake_server(loc);
    assert_true(tw_srv_work_mine(a, "sync"));
    assert_false(tw_srv_work_mine(b, "sync"));
    assert_true(tw_srv_work_mine(b, "drift"));
    assert_false(tw_srv_work_mine(a, "drift"));
    assert_true(tw_srv_work_mine(a, "sync")); /* held since: still */
    assert_false(tw_srv_work_mine(b, "sync"));

    /* A stops: B's next ask takes its work over. */
    fake_free(a);
    assert_true(tw_srv_work_mine(b, "sync"));
    assert_true(tw_srv_work_mine(b, "drift"));

    /* B's connection dies (a machine lost, a failover): a new backend C
     * takes the work; B, connected again at its next ask, finds it C's. */
    assert_true(th_pg_exec(loc, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND pid <> "
                                "pg_backend_pid()"));
    struct tw_server *c = fake_server(loc);
    bool c_sync = false;
    for (int i = 0; i < 100 && !(c_sync = tw_srv_work_mine(c, "sync")); i++)
        usleep(20 * 1000); /* the server ends the session, then its locks */
    assert_true(c_sync);
    assert_true(tw_srv_work_mine(c, "drift"));
    assert_false(tw_srv_work_mine(b, "sync"));
    assert_false(tw_srv_work_mine(b, "drift"));
    assert_true(tw_srv_work_mine(b, "rejudge")); /* B works again on what is free */
    assert_false(tw_srv_work_mine(c, "rejudge"));
    struct tw_metrics_store ms;
    memset(&ms, 0, sizeof(ms));
    tw_srv_leader_held(b->leader, &ms); /* B: sync, drift another's; rejudge its own */
    assert_int_equal(ms.n_work, 3);
    for (size_t i = 0; i < ms.n_work; i++)
        assert_int_equal(ms.work[i].held, !strcmp(ms.work[i].kind, "rejudge"));
    fake_free(b);
    fake_free(c);
    th_rmtree(dir);
    free(dir);
}

/* ---- /healthz of a real server ---- */

struct body {
    char buf[4096];
    size_t len;
};

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
    struct body *b = arg;
    size_t k = sz * n;
    size_t room = sizeof(b->buf) - 1 - b->len;
    memcpy(b->buf + b->len, p, k < room ? k : room);
    b->len += k < room ? k : room;
    b->buf[b->len] = '\0';
    return k;
}

static long healthz(struct tw_server *srv, struct body *b)
{
    char url[256];
    snprintf(url, sizeof(url), "%s/healthz", tw_server_url(srv));
    memset(b, 0, sizeof(*b));
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

/* /healthz until it answers WANT (the probe runs every 2 s). */
static long healthz_until(struct tw_server *srv, long want, struct body *b)
{
    long code = 0;
    for (int i = 0; i < 80 && (code = healthz(srv, b)) != want; i++)
        usleep(100 * 1000);
    return code;
}

/* The database's name in LOC ("... dbname=NAME"). */
static const char *db_name(const char *loc)
{
    const char *n = th_store_name(loc);
    assert_non_null(n);
    return n;
}

/* SQL on the server's maintenance database (the test's own one may be
 * closed to connections). */
static void admin_exec(const char *sql)
{
    char loc[1024];
    snprintf(loc, sizeof(loc), "%s dbname=postgres", getenv("TW_TEST_PG"));
    assert_true(th_pg_exec(loc, sql));
}

static void close_db(const char *loc, bool closed)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "ALTER DATABASE \"%s\" ALLOW_CONNECTIONS %s", db_name(loc),
             closed ? "false" : "true");
    admin_exec(sql);
    if (closed) {
        snprintf(sql, sizeof(sql),
                 "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'",
                 db_name(loc));
        admin_exec(sql);
    }
}

static void test_pg_healthz(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char loc[4200];
    if (!pg_location(dir, "healthz", loc, sizeof(loc))) {
        th_rmtree(dir);
        free(dir);
        skip();
    }
    struct tw_server_options o = {.db_path = loc, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    struct body b;
    assert_int_equal(healthz(srv, &b), 200);

    /* Every connection cut (a restart of the database's server): the
     * probe connects again, and nothing is said to be wrong for long. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'",
             db_name(loc));
    admin_exec(sql);
    assert_int_equal(healthz_until(srv, 200, &b), 200);

    /* The database refuses connections: 503, saying why. */
    close_db(loc, true);
    assert_int_equal(healthz_until(srv, 503, &b), 503);
    json_error_t jerr;
    json_t *v = json_loads(b.buf, 0, &jerr);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "status")), "degraded");
    const char *why = json_string_value(json_object_get(json_object_get(v, "store"), "reason"));
    assert_non_null(why);
    if (!strstr(why, "can't connect") && !strstr(why, "can't be reached"))
        fail_msg("the reason: %s", why);
    json_decref(v);

    /* Back: 200 again. */
    close_db(loc, false);
    assert_int_equal(healthz_until(srv, 200, &b), 200);
    tw_server_stop(srv, 1000);
    th_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    /* Part "pg": the PostgreSQL cases, on the server TW_TEST_PG names
     * (tests/run.sh starts one); skipped (77) without it. */
    bool pg = argc > 1 && !strcmp(argv[1], "pg");
    if (pg && (!getenv("TW_TEST_PG") || !getenv("TW_TEST_PG")[0])) {
        fprintf(stderr, "SKIP: TW_TEST_PG names no PostgreSQL server\n");
        return 77;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest sqlite_tests[] = {
        cmocka_unit_test(test_sqlite_always_held),
    };
    const struct CMUnitTest pg_tests[] = {
        cmocka_unit_test(test_pg_one_holder),
        cmocka_unit_test(test_pg_healthz),
    };
    int rc = pg ? cmocka_run_group_tests(pg_tests, NULL, NULL)
                : cmocka_run_group_tests(sqlite_tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
