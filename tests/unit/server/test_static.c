/* test_static.c - dashboard files: path checks, links out of the web
 * directory, content types. */
#include "testhelp.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/static.h"

static void test_rel_path(void **state)
{
    (void)state;
    char rel[256];
    assert_true(tw_static_rel_path("/", rel, sizeof(rel)));
    assert_string_equal(rel, "index.html");
    assert_true(tw_static_rel_path("/app.js", rel, sizeof(rel)));
    assert_string_equal(rel, "app.js");
    assert_true(tw_static_rel_path("/img/logo.svg", rel, sizeof(rel)));
    assert_string_equal(rel, "img/logo.svg");
    static const char *const bad[] = {
        "",          "app.js", "/..",    "/../etc/passwd", "/a/../../b",
        "/./app.js", "/a//b",  "/a/",    "/.hidden",       "/a/.git/config",
        "/a\\..\\b", "/C:/x",  "/a\x01", "//etc/passwd",   "/a/..",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(tw_static_rel_path(bad[i], rel, sizeof(rel)));
    assert_false(tw_static_rel_path(NULL, rel, sizeof(rel)));
    assert_false(tw_static_rel_path("/abcdef", rel, 4)); /* too long for REL */
}

static void test_types(void **state)
{
    (void)state;
    assert_string_equal(tw_static_content_type("index.html"), "text/html; charset=utf-8");
    assert_string_equal(tw_static_content_type("a/app.JS"), "text/javascript; charset=utf-8");
    assert_string_equal(tw_static_content_type("style.css"), "text/css; charset=utf-8");
    assert_string_equal(tw_static_content_type("x.svg"), "image/svg+xml");
    assert_string_equal(tw_static_content_type("README"), "application/octet-stream");
    assert_string_equal(tw_static_content_type(".css"), "application/octet-stream");
    assert_string_equal(tw_static_content_type("a.css/b"), "application/octet-stream");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_open(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char web[PATH_MAX], p[PATH_MAX + 64], q[PATH_MAX + 64], root[PATH_MAX];
    snprintf(web, sizeof(web), "%s/web", dir);
    assert_int_equal(mkdir(web, 0755), 0);
    snprintf(p, sizeof(p), "%s/index.html", web);
    write_file(p, "<html></html>");
    snprintf(p, sizeof(p), "%s/sub", web);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/sub/a.css", web);
    write_file(p, "body{}");
    snprintf(p, sizeof(p), "%s/secret.txt", dir);
    write_file(p, "outside");
    /* A link out of the web directory, and one that stays inside. */
    snprintf(q, sizeof(q), "%s/out.txt", web);
    assert_int_equal(symlink(p, q), 0);
    snprintf(q, sizeof(q), "%s/in.css", web);
    assert_int_equal(symlink("sub/a.css", q), 0);
    snprintf(q, sizeof(q), "%s/up", web);
    assert_int_equal(symlink("..", q), 0);
    /* A FIFO: refused at once (opening it for reading would wait for a
     * writer forever). */
    snprintf(q, sizeof(q), "%s/pipe.js", web);
    assert_int_equal(mkfifo(q, 0644), 0);

    struct tw_error err = {0};
    assert_int_equal(tw_static_root(web, root, sizeof(root), &err), TW_OK);
    int fd;
    size_t size;
    const char *type;
    assert_int_equal(tw_static_open(root, "/", &fd, &size, &type, &err), TW_OK);
    assert_int_equal(size, 13);
    assert_string_equal(type, "text/html; charset=utf-8");
    close(fd);
    assert_int_equal(tw_static_open(root, "/sub/a.css", &fd, &size, &type, &err), TW_OK);
    assert_string_equal(type, "text/css; charset=utf-8");
    close(fd);
    assert_int_equal(tw_static_open(root, "/in.css", &fd, &size, &type, &err), TW_OK);
    close(fd);
    static const char *const refused[] = {"/out.txt",    "/up/secret.txt", "/../secret.txt", "/sub",
                                          "/missing.js", "/sub/",          "/pipe.js"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        fd = -1;
        assert_int_equal(tw_static_open(root, refused[i], &fd, &size, &type, &err), TW_ENOENT);
        assert_int_equal(fd, -1);
    }
    snprintf(p, sizeof(p), "%s/nothing", dir);
    assert_int_equal(tw_static_root(p, root, sizeof(root), &err), TW_ENOENT);
    snprintf(p, sizeof(p), "%s/secret.txt", dir);
    assert_int_equal(tw_static_root(p, root, sizeof(root), &err), TW_ENOENT);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rel_path),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
