/* test_page.c - paging and filters of the list routes, on a server started
 * in process over a copy of tests/fixtures/store/v1.db (3 VMs, 16 disks,
 * 7 results): ?limit= and the next_cursor walk every row once, filters
 * narrow, bad values are a 400 that says why. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "core/buf.h"
#include "server/server.h"

static char token[128];

static size_t sink(char *p, size_t size, size_t n, void *arg)
{
    struct tw_buf *b = arg;
    return tw_buf_append(b, p, size * n) == TW_OK ? size * n : 0;
}

/* GET BASE PATH with the reader token: the status, *OUT the JSON body. */
static long get(const char *base, const char *path, json_t **out)
{
    char url[512], auth[200];
    snprintf(url, sizeof(url), "%s%s", base, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    struct tw_buf body;
    tw_buf_init(&body, 4 << 20);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, auth);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    *out = body.data ? json_loadb(body.data, body.len, 0, NULL) : NULL;
    tw_buf_cleanup(&body);
    return status;
}

/* Walks ROUTE's pages of LIMIT rows (KEY the array), counting the rows. */
static size_t walk(const char *base, const char *route, const char *key, int limit,
                   size_t *pages)
{
    char path[256], cursor[64] = "";
    size_t rows = 0;
    *pages = 0;
    for (;;) {
        snprintf(path, sizeof(path), "%s%slimit=%d%s%s", route, strchr(route, '?') ? "&" : "?",
                 limit, cursor[0] ? "&cursor=" : "", cursor);
        json_t *j;
        assert_int_equal(get(base, path, &j), 200);
        size_t n = json_array_size(json_object_get(j, key));
        /* Every list pages its rows; /compliance's are verdicts, and its
         * "vms" counts the VMs they are of. */
        assert_true(n <= (size_t)limit);
        if (strcmp(key, "verdicts") == 0)
            assert_true(json_integer_value(json_object_get(j, "vms")) <= limit);
        rows += n;
        (*pages)++;
        json_t *next = json_object_get(j, "next_cursor");
        assert_non_null(next);
        if (json_is_null(next)) {
            json_decref(j);
            return rows;
        }
        snprintf(cursor, sizeof(cursor), "%s", json_string_value(next));
        json_decref(j);
        assert_true(*pages < 100);
    }
}

static void test_pages(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char db[4200];
    snprintf(db, sizeof(db), "%s/v1.db", dir);
    th_fixture_copy("store/v1.db", db);
    size_t len;
    char *tok = th_fixture("store/reader.tok", &len);
    snprintf(token, sizeof(token), "%.*s", (int)strcspn(tok, "\n"), tok);
    free(tok);

    struct tw_server_options o = {.db_path = db, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    const char *base = tw_server_url(srv);

    /* Unpaged callers: everything (below the default 500), next_cursor null. */
    json_t *j;
    assert_int_equal(get(base, "/api/v1/disks", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "disks")), 16);
    assert_true(json_is_null(json_object_get(j, "next_cursor")));
    json_decref(j);

    size_t pages;
    assert_int_equal(walk(base, "/api/v1/disks", "disks", 3, &pages), 16);
    assert_int_equal(pages, 6);
    assert_int_equal(walk(base, "/api/v1/vms", "vms", 2, &pages), 3);
    assert_int_equal(pages, 2);
    assert_int_equal(walk(base, "/api/v1/compliance", "verdicts", 1, &pages), 7);
    assert_int_equal(pages, 7);
    assert_int_equal(walk(base, "/api/v1/compliance", "verdicts", 3, &pages), 7);
    assert_int_equal(pages, 3);

    /* Filters. */
    assert_int_equal(get(base, "/api/v1/disks?vm=SAP-DB-01", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "disks")), 7);
    json_decref(j);
    assert_int_equal(get(base, "/api/v1/disks?sku=E40", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "disks")), 1);
    json_decref(j);
    assert_int_equal(get(base, "/api/v1/vms?resource_group=rg-web", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "vms")), 1);
    json_decref(j);
    assert_int_equal(get(base, "/api/v1/compliance?verdict=delivers", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "verdicts")), 1);
    assert_int_equal(json_integer_value(json_object_get(j, "vms")), 3);
    json_decref(j);
    assert_int_equal(get(base, "/api/v1/compliance?vm=web-03&verdict=inconclusive", &j), 200);
    assert_int_equal(json_array_size(json_object_get(j, "verdicts")), 1);
    json_decref(j);

    /* Bad values say what is wrong. */
    static const char *const bad[] = {
        "/api/v1/vms?limit=0",         "/api/v1/vms?limit=5001", "/api/v1/disks?limit=x",
        "/api/v1/disks?limit=-1",      "/api/v1/vms?cursor=42",  "/api/v1/vms?cursor=o-1",
        "/api/v1/compliance?verdict=ok", "/api/v1/compliance?cursor=o!",
        /* One spelling per value: no spaces, signs, capitals or leading zeros. */
        "/api/v1/vms?limit=%205",      "/api/v1/vms?limit=+5",   "/api/v1/vms?limit=05",
        "/api/v1/vms?cursor=o%205",    "/api/v1/vms?cursor=oZZ", "/api/v1/vms?cursor=o05",
        "/api/v1/vms?cursor=o",        "/api/v1/vms?cursor=ozzzzzzzzzzzzzzzz"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (get(base, bad[i], &j) != 400)
            fail_msg("%s: not a 400", bad[i]);
        const char *msg =
            json_string_value(json_object_get(json_object_get(j, "error"), "message"));
        assert_non_null(msg);
        assert_true(strstr(msg, "limit") || strstr(msg, "cursor") || strstr(msg, "verdict"));
        json_decref(j);
    }
    assert_int_equal(get(base, "/api/v1/vms?limit=5000", &j), 200);
    json_decref(j);

    tw_server_stop(srv, 2000);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
