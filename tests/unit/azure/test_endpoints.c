/* test_endpoints.c - base URLs: flag > environment > config file > default,
 * and what a base URL may look like.  Nothing here sends a request. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure/endpoints.h"

static void clear_env(void)
{
    for (int i = 0; i < TW_AZ_EP_COUNT; i++)
        unsetenv(tw_az_ep_env((enum tw_az_ep)i));
    unsetenv("TIERWISE_CONFIG");
}

static char *write_config(const char *dir, const char *name, const char *text)
{
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int setup(void **state)
{
    clear_env();
    *state = th_tmpdir();
    return 0;
}

static int teardown(void **state)
{
    clear_env();
    th_rmtree(*state);
    free(*state);
    return 0;
}

static void test_defaults(void **state)
{
    (void)state;
    struct tw_az_endpoints e;
    struct tw_error err = {0};
    assert_int_equal(tw_az_endpoints_resolve(NULL, &e, &err), TW_OK);
    assert_string_equal(e.url[TW_AZ_EP_IMDS], "http://169.254.169.254");
    assert_string_equal(e.url[TW_AZ_EP_ARM], "https://management.azure.com");
    assert_string_equal(e.url[TW_AZ_EP_LOGIN], "https://login.microsoftonline.com");
    assert_string_equal(e.url[TW_AZ_EP_PRICES], "https://prices.azure.com");
    for (int i = 0; i < TW_AZ_EP_COUNT; i++)
        assert_int_equal(e.from[i], TW_AZ_FROM_DEFAULT);
    assert_string_equal(tw_az_ep_source_name(&e, TW_AZ_EP_IMDS), "the default");
    assert_string_equal(e.config_path, "");
}

static void test_precedence(void **state)
{
    const char *dir = *state;
    struct tw_az_endpoints e;
    struct tw_error err = {0};
    char *cfg = write_config(dir, "tw.json",
                             "{\"imds_url\": \"http://127.0.0.1:1001\", "
                             "\"arm_url\": \"http://127.0.0.1:1002\", "
                             "\"login_url\": \"http://127.0.0.1:1003\", "
                             "\"server\": {\"other\": \"keys are someone else's\"}}");
    char *cfg2 = write_config(dir, "tw2.json", "{\"imds_url\": \"http://127.0.0.2:2001\"}");
    setenv("TIERWISE_CONFIG", cfg, 1);
    setenv("TIERWISE_IMDS_URL", "http://127.0.0.1:3001", 1);
    setenv("TIERWISE_ARM_URL", "http://127.0.0.1:3002", 1);
    setenv("TIERWISE_LOGIN_URL", "", 1); /* empty = unset */
    struct tw_az_ep_args a = {0};
    a.url[TW_AZ_EP_IMDS] = "http://127.0.0.1:4001/";
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_OK);
    /* flag > env > config > default, one endpoint at each level. */
    assert_string_equal(e.url[TW_AZ_EP_IMDS], "http://127.0.0.1:4001");
    assert_int_equal(e.from[TW_AZ_EP_IMDS], TW_AZ_FROM_FLAG);
    assert_string_equal(tw_az_ep_source_name(&e, TW_AZ_EP_IMDS), "--imds-url");
    assert_string_equal(e.url[TW_AZ_EP_ARM], "http://127.0.0.1:3002");
    assert_int_equal(e.from[TW_AZ_EP_ARM], TW_AZ_FROM_ENV);
    assert_string_equal(tw_az_ep_source_name(&e, TW_AZ_EP_ARM), "TIERWISE_ARM_URL");
    assert_string_equal(e.url[TW_AZ_EP_LOGIN], "http://127.0.0.1:1003");
    assert_int_equal(e.from[TW_AZ_EP_LOGIN], TW_AZ_FROM_CONFIG);
    assert_string_equal(e.url[TW_AZ_EP_PRICES], "https://prices.azure.com");
    assert_int_equal(e.from[TW_AZ_EP_PRICES], TW_AZ_FROM_DEFAULT);
    assert_string_equal(e.config_path, cfg);

    /* --config wins over TIERWISE_CONFIG. */
    unsetenv("TIERWISE_IMDS_URL");
    a.url[TW_AZ_EP_IMDS] = NULL;
    a.config_path = cfg2;
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_OK);
    assert_string_equal(e.url[TW_AZ_EP_IMDS], "http://127.0.0.2:2001");
    assert_string_equal(e.url[TW_AZ_EP_LOGIN], "https://login.microsoftonline.com");
    assert_string_equal(e.config_path, cfg2);
    free(cfg);
    free(cfg2);
}

static void test_only_what_is_needed(void **state)
{
    (void)state;
    struct tw_az_endpoints e;
    struct tw_error err = {0};
    /* A broken prices URL does not stop a command that only needs IMDS. */
    setenv("TIERWISE_PRICES_URL", "prices.example", 1);
    setenv("TIERWISE_IMDS_URL", "http://127.0.0.1:5000", 1);
    struct tw_az_ep_args a = {.only = 1u << TW_AZ_EP_IMDS};
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_OK);
    assert_string_equal(e.url[TW_AZ_EP_IMDS], "http://127.0.0.1:5000");
    assert_string_equal(e.url[TW_AZ_EP_PRICES], "");
    /* ... but one that does need it is told where the bad value came from. */
    assert_int_equal(tw_az_endpoints_resolve(NULL, &e, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "TIERWISE_PRICES_URL \"prices.example\" must start with "
                                    "http:// or https://"));
}

static void test_validate(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } good[] = {
        {"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
        {"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
        {"HTTPS://Management.Azure.com", "https://Management.Azure.com"},
        {"http://localhost", "http://localhost"},
        {"http://[::1]:9000", "http://[::1]:9000"},
        {"http://169.254.169.254", "http://169.254.169.254"},
        {"https://my-sim.internal.example:65535", "https://my-sim.internal.example:65535"},
    };
    static const struct {
        const char *in, *words;
    } bad[] = {
        {"", "is empty"},
        {"127.0.0.1:8080", "must start with http:// or https://"},
        {"ftp://host", "must start with http:// or https://"},
        {"http://", "has no host"},
        {"http://:80", "has no host"},
        {"http://host/metadata", "has a path \"/metadata\""},
        {"http://host//", "has a path"},
        {"http://host:0", "port must be a number from 1 to 65535"},
        {"http://host:65536", "port must be"},
        {"http://host:", "port must be"},
        {"http://host:80x", "has a path"},
        {"http://user:pw@host", "'@' has no place"},
        {"http://host?x=1", "'?' has no place"},
        {"http://host#f", "'#' has no place"},
        {"http://ho st", "space"},
        {"http://h%41", "'%' character"},
        {"http://-bad.example", "not a valid host name"},
        {"http://bad-.example", "not a valid host name"},
        {"http://a..b", "not a valid host name"},
        {"http://under_score", "not a valid host name"},
        {"http://999.1.1.1", "not an IPv4 address"},
        {"http://1.2.3", "not an IPv4 address"},
        {"http://[::g]", "not an IPv6 address"},
        {"http://[::1", "no closing ']'"},
    };
    char out[TW_AZ_URL_MAX];
    struct tw_error err = {0};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (tw_az_url_validate(good[i].in, "--x", out, sizeof(out), &err) != TW_OK)
            fail_msg("\"%s\" refused: %s", good[i].in, err.msg);
        assert_string_equal(out, good[i].out);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        enum tw_err rc = tw_az_url_validate(bad[i].in, "--imds-url", out, sizeof(out), &err);
        if (rc != TW_EINVAL || !strstr(err.msg, bad[i].words) ||
            strncmp(err.msg, "--imds-url", 10) != 0)
            fail_msg("\"%s\": rc %d, \"%s\" lacks \"%s\"", bad[i].in, rc, err.msg, bad[i].words);
    }
    char longurl[400] = "http://";
    memset(longurl + 7, 'a', 300);
    longurl[307] = '\0';
    assert_int_equal(tw_az_url_validate(longurl, "--x", out, sizeof(out), &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
}

static void test_config_errors(void **state)
{
    const char *dir = *state;
    struct tw_az_endpoints e;
    struct tw_error err = {0};
    struct tw_az_ep_args a = {0};
    static const struct {
        const char *text, *words;
    } cases[] = {
        {"{\"imds_url\": ", "is not valid JSON at line 1"},
        {"[]", "must hold a JSON object"},
        {"{\"imds_url\": 5}", "imds_url must be a string"},
        {"{\"arm_url\": \"\"}", "arm_url is empty"},
        {"{\"imds_url\": \"a\", \"imds_url\": \"b\"}", "not valid JSON"},
        {"", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *cfg = write_config(dir, "bad.json", cases[i].text);
        a.config_path = cfg;
        enum tw_err rc = tw_az_endpoints_resolve(&a, &e, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, cases[i].words) || !strstr(err.msg, cfg))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, cases[i].words);
        free(cfg);
    }
    /* A bad value in the file is named with its key and the file. */
    char *cfg = write_config(dir, "badurl.json", "{\"prices_url\": \"http://prices/api\"}");
    a.config_path = cfg;
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "prices_url in config file"));
    assert_non_null(strstr(err.msg, "has a path \"/api\""));
    free(cfg);
    /* A missing file, from the flag or the environment. */
    a.config_path = "/nonexistent/tierwise.json";
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "can't open config file /nonexistent/tierwise.json"));
    a.config_path = NULL;
    setenv("TIERWISE_CONFIG", "/nonexistent/env.json", 1);
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_ENOENT);
    setenv("TIERWISE_CONFIG", "", 1); /* empty: no config file */
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_OK);
    a.config_path = "";
    assert_int_equal(tw_az_endpoints_resolve(&a, &e, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "--config is empty"));
}

static void test_parse_config_direct(void **state)
{
    (void)state;
    char vals[TW_AZ_EP_COUNT][TW_AZ_URL_MAX];
    struct tw_error err = {0};
    const char *doc = "{\"prices_url\": \"https://p.example\", \"login_url\": null}";
    /* null is "not a string": the key must be removed to mean the default. */
    assert_int_equal(tw_az_endpoints_parse_config(doc, strlen(doc), "c.json", vals, &err),
                     TW_EPARSE);
    doc = "{\"prices_url\": \"https://p.example\"}";
    assert_int_equal(tw_az_endpoints_parse_config(doc, strlen(doc), "c.json", vals, &err), TW_OK);
    assert_string_equal(vals[TW_AZ_EP_PRICES], "https://p.example");
    assert_string_equal(vals[TW_AZ_EP_IMDS], "");
    assert_string_equal(tw_az_ep_key(TW_AZ_EP_PRICES), "prices_url");
    assert_string_equal(tw_az_ep_flag(TW_AZ_EP_LOGIN), "--login-url");
    assert_string_equal(tw_az_ep_default(TW_AZ_EP_IMDS), "http://169.254.169.254");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_what_is_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_config_direct, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
