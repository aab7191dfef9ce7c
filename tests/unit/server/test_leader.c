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
 * /healthz 503 with the reason, then 200 again once it takes them; one
 * whose batch of reports failed is 200 again once the store takes writes,
 * with no report since (its probe says so).
 * ctest-parts: pg */
#include "testhelp.h"

#include <curl/curl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "server/auth.h"
#include "server/server_int.h"
#include "store/store.h"
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

/* An agent token in the store at LOC, its text in TOKEN. */
static void add_agent(const char *loc, char token[TW_TOKEN_LEN + 1])
{
    struct tw_store *st = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(loc, &st, &err), TW_OK);
    assert_int_equal(tw_auth_token_new(token, &err), TW_OK);
    uint8_t h[32];
    assert_int_equal(tw_auth_hash(token, strlen(token), h, &err), TW_OK);
    int64_t id;
    assert_int_equal(tw_store_token_add(st, "agent", TW_ROLE_AGENT, h, &id, &err), TW_OK);
    tw_store_close(st);
}

/* POST /api/v1/reports of a fixture's report under a new id N: the status. */
static long post_report(struct tw_server *srv, const char *token, int n)
{
    size_t len = 0;
    char *tmpl = th_fixture("reports/web-03.json", &len);
    json_error_t je;
    json_t *rep = json_loadb(tmpl, len, 0, &je);
    assert_non_null(rep);
    free(tmpl);
    char id[64];
    snprintf(id, sizeof(id), "6a1f3c55-0000-4000-8000-%012d", n);
    json_object_set_new(rep, "id", json_string(id));
    char *body = json_dumps(rep, JSON_COMPACT);
    json_decref(rep);
    char url[256], auth[128];
    snprintf(url, sizeof(url), "%s/api/v1/reports", tw_server_url(srv));
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    struct curl_slist *hs = curl_slist_append(NULL, auth);
    hs = curl_slist_append(hs, "Content-Type: application/json");
    struct body b = {.len = 0};
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(hs);
    free(body);
    return code;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A batch of reports that failed leaves /healthz 503 only until the store
 * takes writes again: the probe says so, with no other report (haproxy
 * sends none to a backend whose checks fail). */
static void test_pg_commit_failed(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char loc[4200];
    if (!pg_location(dir, "commitfail", loc, sizeof(loc))) {
        th_rmtree(dir);
        free(dir);
        skip();
    }
    char token[TW_TOKEN_LEN + 1];
    add_agent(loc, token);
    struct tw_server_options o = {.db_path = loc, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    struct body b;
    assert_int_equal(post_report(srv, token, 1), 201); /* the token now cached */
    assert_int_equal(healthz(srv, &b), 200);

    /* Every connection cut, then a report: whether its batch held or not
     * (its connection was lost), /healthz is 200 within a few seconds. */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'",
             db_name(loc));
    admin_exec(sql);
    long code = post_report(srv, token, 2);
    assert_true(code == 201 || code == 503 || code == 500);
    double t0 = now_s();
    assert_int_equal(healthz_until(srv, 200, &b), 200);
    if (now_s() - t0 > 5)
        fail_msg("/healthz was 200 again only after %.1f s", now_s() - t0);

    /* A batch that surely failed (the database took no connection): 503;
     * the database back, 200 again with no report since. */
    close_db(loc, true);
    code = post_report(srv, token, 3);
    if (code == 201)
        fail_msg("a report was stored in a database that takes no connections");
    assert_int_equal(healthz(srv, &b), 503);
    close_db(loc, false);
    t0 = now_s();
    assert_int_equal(healthz_until(srv, 200, &b), 200);
    if (now_s() - t0 > 5)
        fail_msg("/healthz was 200 again only after %.1f s", now_s() - t0);
    assert_int_equal(post_report(srv, token, 4), 201);
    tw_server_stop(srv, 1000);
    th_rmtree(dir);
    free(dir);
}

/* ---- a database server that stops answering ---- */

/* A relay on a Unix socket in front of the database server's one: while
 * frozen it moves no byte (a server that stopped answering; the probe
 * then waits inside libpq). */
struct relay {
    int lfd;
    struct sockaddr_un to; /* the database server's socket */
    atomic_bool frozen, stop;
    pthread_t thread;
};

struct pipe_pair {
    struct relay *r;
    int a, b;
};

static void *relay_pipe(void *arg)
{
    struct pipe_pair *p = arg;
    char buf[8192];
    while (!atomic_load(&p->r->stop)) {
        if (atomic_load(&p->r->frozen)) {
            usleep(20 * 1000);
            continue;
        }
        struct pollfd pf[2] = {{p->a, POLLIN, 0}, {p->b, POLLIN, 0}};
        if (poll(pf, 2, 50) <= 0)
            continue;
        bool done = false;
        for (int i = 0; i < 2 && !done; i++) {
            if (!pf[i].revents)
                continue;
            ssize_t n = read(pf[i].fd, buf, sizeof(buf));
            if (n <= 0 || write(pf[1 - i].fd, buf, (size_t)n) != n)
                done = true;
        }
        if (done)
            break;
    }
    close(p->a);
    close(p->b);
    free(p);
    return NULL;
}

static void *relay_main(void *arg)
{
    struct relay *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd pf = {r->lfd, POLLIN, 0};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int a = accept(r->lfd, NULL, NULL);
        if (a < 0)
            continue;
        int b = socket(AF_UNIX, SOCK_STREAM, 0);
        if (b < 0 || connect(b, (struct sockaddr *)&r->to, sizeof(r->to)) != 0) {
            close(a);
            if (b >= 0)
                close(b);
            continue;
        }
        struct pipe_pair *p = malloc(sizeof(*p));
        assert_non_null(p);
        *p = (struct pipe_pair){r, a, b};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, relay_pipe, p), 0);
        pthread_detach(t);
    }
    return NULL;
}

/* The relay in DIR for a server on the Unix sockets of directory HOST,
 * port PORT; false when it can't be set up. */
static bool relay_start(struct relay *r, const char *dir, const char *host, const char *port)
{
    memset(r, 0, sizeof(*r));
    r->to.sun_family = AF_UNIX;
    if ((size_t)snprintf(r->to.sun_path, sizeof(r->to.sun_path), "%s/.s.PGSQL.%s", host, port) >=
        sizeof(r->to.sun_path))
        return false;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.%s", dir, port) >=
        sizeof(sa.sun_path))
        return false;
    r->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (r->lfd < 0 || bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(r->lfd, 16) != 0)
        return false;
    return pthread_create(&r->thread, NULL, relay_main, r) == 0;
}

/* The value of KEY in the "key=value ..." string CI, or DEF. */
static void conninfo_get(const char *ci, const char *key, const char *def, char *out, size_t len)
{
    snprintf(out, len, "%s", def);
    size_t k = strlen(key);
    for (const char *p = ci; (p = strstr(p, key)) != NULL; p += k) {
        if ((p == ci || p[-1] == ' ') && p[k] == '=') {
            size_t n = strcspn(p + k + 1, " ");
            snprintf(out, len, "%.*s", (int)n, p + k + 1);
        }
    }
}

/* The database server stops answering (the probe's round trip waits in
 * libpq, no error comes): /healthz says 503 "has not answered" after
 * three probe intervals, and 200 once it answers again. */
static void test_pg_silent(void **state)
{
    (void)state;
    const char *base = getenv("TW_TEST_PG");
    char host[600], port[32];
    conninfo_get(base ? base : "", "host", "", host, sizeof(host));
    conninfo_get(base ? base : "", "port", "5432", port, sizeof(port));
    if (!base || strchr(base, '/') == base || host[0] != '/')
        skip(); /* a relay for a server on Unix sockets only */
    char *dir = th_tmpdir();
    char loc[4200];
    if (!pg_location(dir, "silent", loc, sizeof(loc))) {
        th_rmtree(dir);
        free(dir);
        skip();
    }
    struct relay r;
    if (!relay_start(&r, dir, host, port)) {
        th_rmtree(dir);
        free(dir);
        skip(); /* the relay's socket path too long here */
    }
    char via[4800];
    snprintf(via, sizeof(via), "%s host=%s", loc, dir); /* the last host= is libpq's */
    struct tw_server_options o = {.db_path = via, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    struct body b;
    assert_int_equal(healthz(srv, &b), 200);

    atomic_store(&r.frozen, true);
    double t0 = now_s();
    long code = 0;
    while ((code = healthz(srv, &b)) == 200 && now_s() - t0 < 15)
        usleep(200 * 1000);
    assert_int_equal(code, 503);
    if (!strstr(b.buf, "has not answered for"))
        fail_msg("the reason: %s", b.buf);
    if (now_s() - t0 < 3) /* the last probe ended at most 2 s before the freeze */
        fail_msg("/healthz was 503 after %.1f s only: three probe intervals are 6 s", now_s() - t0);

    atomic_store(&r.frozen, false);
    assert_int_equal(healthz_until(srv, 200, &b), 200);
    tw_server_stop(srv, 1000);
    atomic_store(&r.stop, true);
    pthread_join(r.thread, NULL);
    close(r.lfd);
    usleep(100 * 1000); /* the pipes see stop */
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
        cmocka_unit_test(test_pg_commit_failed),
        cmocka_unit_test(test_pg_silent),
    };
    int rc = pg ? cmocka_run_group_tests(pg_tests, NULL, NULL)
                : cmocka_run_group_tests(sqlite_tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
