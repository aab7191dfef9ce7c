/* test_arm_args.c - the ARM options every command shares: each taken by
 * tw_arm_args_take and nothing else, the endpoints each credential needs
 * resolved (and only those), the credential from the environment, the
 * pacer left out with --no-pacing, and the secret in no words. */
#include "testhelp.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/arm_args.h"

static void clear_env(void)
{
    const char *vars[] = {"AZURE_TENANT_ID",   "AZURE_CLIENT_ID",    "AZURE_CLIENT_SECRET",
                          "TIERWISE_ARM_URL",  "TIERWISE_IMDS_URL",  "TIERWISE_LOGIN_URL",
                          "TIERWISE_CONFIG"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

static void test_take(void **state)
{
    (void)state;
    /* A command's table with the shared lines and one of its own. */
    static const struct option opts[] = {TW_ARM_ARGS_OPTS,
                                         {"db", required_argument, NULL, 'd'},
                                         {NULL, 0, NULL, 0}};
    char *argv[] = {"tierwise", "--arm-url", "http://127.0.0.1:1", "--imds-url",
                    "http://127.0.0.1:2", "--login-url", "http://127.0.0.1:3", "--config",
                    "cfg.json", "--client-secret-file", "sec", "--no-pacing", "--db", "x.db",
                    NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    struct tw_arm_args a = {0};
    const char *db = NULL;
    int c, own = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (tw_arm_args_take(&a, c, optarg))
            continue;
        assert_int_equal(c, 'd');
        db = optarg;
        own++;
    }
    assert_string_equal(a.arm_url, "http://127.0.0.1:1");
    assert_string_equal(a.imds_url, "http://127.0.0.1:2");
    assert_string_equal(a.login_url, "http://127.0.0.1:3");
    assert_string_equal(a.config, "cfg.json");
    assert_string_equal(a.client_secret_file, "sec");
    assert_true(a.no_pacing);
    assert_string_equal(db, "x.db");
    assert_int_equal(own, 1);
    assert_false(tw_arm_args_take(&a, 'd', "y"));
    assert_false(tw_arm_args_take(&a, 'h', NULL));
    /* The help lines name every option. */
    const char *names[] = {"--arm-url", "--imds-url", "--login-url", "--config",
                           "--client-secret-file", "--no-pacing"};
    for (size_t i = 0; i < 6; i++)
        assert_non_null(strstr(TW_ARM_ARGS_HELP, names[i]));
}

static void test_open(void **state)
{
    (void)state;
    clear_env();
    struct tw_error err = {0};
    struct tw_arm_env env;
    /* Managed identity: ARM and IMDS resolved, the login not looked at. */
    setenv("TIERWISE_LOGIN_URL", "not a url", 1);
    struct tw_arm_args a = {.arm_url = "http://127.0.0.1:8080/", .imds_url = "http://127.0.0.1:9"};
    assert_int_equal(tw_arm_args_open(&a, &env, &err), TW_OK);
    assert_string_equal(env.ep.url[TW_AZ_EP_ARM], "http://127.0.0.1:8080");
    assert_string_equal(env.ep.url[TW_AZ_EP_IMDS], "http://127.0.0.1:9");
    assert_string_equal(env.ep.url[TW_AZ_EP_LOGIN], "");
    assert_int_equal(env.cred_opts.kind, TW_ARM_CRED_MANAGED_IDENTITY);
    assert_non_null(env.cred);
    assert_non_null(env.pacer);
    char words[256];
    assert_non_null(strstr(tw_arm_env_cred_words(&env, words, sizeof(words)),
                           "managed identity (IMDS http://127.0.0.1:9)"));
    struct tw_arm *c;
    assert_int_equal(tw_arm_env_client(&env, "eastus", &c, &err), TW_OK);
    tw_arm_free(c);
    tw_arm_env_close(&env);
    tw_arm_env_close(&env); /* twice is fine */
    unsetenv("TIERWISE_LOGIN_URL");

    /* Client credentials: the login resolved; IMDS only when asked. */
    setenv("AZURE_TENANT_ID", "tenant-1", 1);
    setenv("AZURE_CLIENT_ID", "client-1", 1);
    setenv("AZURE_CLIENT_SECRET", "the-Secret-42", 1);
    setenv("TIERWISE_IMDS_URL", "bad", 1);
    struct tw_arm_args b = {.arm_url = "http://127.0.0.1:8080",
                            .login_url = "http://127.0.0.1:7",
                            .no_pacing = true};
    assert_int_equal(tw_arm_args_open(&b, &env, &err), TW_OK);
    assert_int_equal(env.cred_opts.kind, TW_ARM_CRED_CLIENT_SECRET);
    assert_string_equal(env.ep.url[TW_AZ_EP_LOGIN], "http://127.0.0.1:7");
    assert_null(env.pacer);
    tw_arm_env_cred_words(&env, words, sizeof(words));
    assert_non_null(strstr(words, "client credentials of client client-1 in tenant tenant-1"));
    assert_null(strstr(words, "the-Secret-42"));
    tw_arm_env_close(&env);
    b.also = 1u << TW_AZ_EP_IMDS; /* e.g. sync's default subscription */
    assert_int_equal(tw_arm_args_open(&b, &env, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "TIERWISE_IMDS_URL"));
    unsetenv("TIERWISE_IMDS_URL");

    /* Half the variables: an error naming what is missing. */
    unsetenv("AZURE_CLIENT_SECRET");
    assert_int_equal(tw_arm_args_open(&b, &env, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "AZURE_CLIENT_SECRET"));
    clear_env();

    /* A bad flag names itself. */
    struct tw_arm_args bad = {.arm_url = "ftp://x"};
    assert_int_equal(tw_arm_args_open(&bad, &env, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "--arm-url"));
    /* A secret file that is not there. */
    setenv("AZURE_TENANT_ID", "tenant-1", 1);
    setenv("AZURE_CLIENT_ID", "client-1", 1);
    struct tw_arm_args nofile = {.client_secret_file = "/nonexistent/tierwise-secret"};
    assert_int_equal(tw_arm_args_open(&nofile, &env, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "--client-secret-file"));
    clear_env();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_take), cmocka_unit_test(test_open)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
