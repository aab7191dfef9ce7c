/* test_config.c - the agent's keys of the config file: "server" and
 * "token_file", and each refusal naming the file and the key. */
#include "testhelp.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_config.h"

static enum tw_err parse(const char *text, struct tw_agent_config *c, struct tw_error *err)
{
    return tw_agent_config_parse(text, strlen(text), "agent.json", c, err);
}

static void test_keys(void **state)
{
    (void)state;
    struct tw_agent_config c;
    struct tw_error err = {0};
    assert_int_equal(parse("{\"imds_url\": \"http://127.0.0.1:8080\", \"server\": "
                           "\"https://tw.example:8443\", \"token_file\": \"/etc/tierwise/agent.token\"}",
                           &c, &err),
                     TW_OK);
    assert_string_equal(c.server, "https://tw.example:8443");
    assert_string_equal(c.token_file, "/etc/tierwise/agent.token");
    /* Absent keys are "": the file may hold only the endpoints. */
    assert_int_equal(parse("{\"arm_url\": \"http://127.0.0.1:1\"}", &c, &err), TW_OK);
    assert_string_equal(c.server, "");
    assert_string_equal(c.token_file, "");
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *words;
        enum tw_err code;
    } cases[] = {
        {"{\"server\": 5}", "agent.json: \"server\" must be a string", TW_EINVAL},
        {"{\"server\": \"\"}", "\"server\" is empty", TW_EINVAL},
        {"{\"token_file\": \"agent.token\"}", "is not an absolute path", TW_EINVAL},
        {"{\"token_file\": [\"/x\"]}", "\"token_file\" must be a string", TW_EINVAL},
        {"{\"server\": \"http://a\\nb\"}", "control character", TW_EINVAL},
        {"{\"server\": \"a\", \"server\": \"b\"}", "agent.json is not valid JSON", TW_EPARSE},
        {"[\"server\"]", "must be a JSON object", TW_EPARSE},
        {"{\"server\": \"http://x\"", "agent.json is not valid JSON", TW_EPARSE},
        {"", "agent.json is not valid JSON", TW_EPARSE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw_agent_config c;
        struct tw_error err = {0};
        assert_int_equal(parse(cases[i].text, &c, &err), cases[i].code);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].text, err.msg, cases[i].words);
        /* Nothing half-taken after a refusal. */
        assert_string_equal(c.server, "");
        assert_string_equal(c.token_file, "");
    }
    /* Too long for a URL. */
    char big[3000];
    memset(big, 'a', sizeof(big));
    snprintf(big, sizeof(big), "{\"server\": \"http://");
    size_t n = strlen(big);
    memset(big + n, 'a', 2500);
    snprintf(big + n + 2500, sizeof(big) - n - 2500, "\"}");
    struct tw_agent_config c;
    struct tw_error err = {0};
    assert_int_equal(tw_agent_config_parse(big, strlen(big), "agent.json", &c, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
