/* test_token.c - managed-identity tokens: the documented answers and the
 * fetch against a loopback server. */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>

#include "azure/imds.h"
#include "fakesrv.h"

static struct tw_az_token tok;

static void test_samples(void **state)
{
    (void)state;
    struct tw_error err = {0};
    size_t len;
    char *doc = th_fixture("imds/real-docs-token.json", &len);
    assert_int_equal(tw_az_token_parse(doc, len, &tok, &err), TW_OK);
    free(doc);
    assert_string_equal(tok.access_token, "eyJ0eXAi...");
    assert_string_equal(tok.token_type, "Bearer");
    assert_string_equal(tok.resource, "https://management.azure.com/");
    assert_int_equal(tok.expires_in, 3599);
    assert_int_equal(tok.expires_on, 1506484173);

    /* The 2023 spec example has no token_type: a bearer token all the same. */
    doc = th_fixture("imds/real-spec-token-2023-07-01.json", &len);
    assert_int_equal(tw_az_token_parse(doc, len, &tok, &err), TW_OK);
    free(doc);
    assert_string_equal(tok.access_token, "dummytoken");
    assert_string_equal(tok.token_type, "Bearer");
    assert_int_equal(tok.expires_on, 1541705014);

    doc = th_fixture("imds/constructed-token-arm.json", &len);
    assert_int_equal(tw_az_token_parse(doc, len, &tok, &err), TW_OK);
    free(doc);
    assert_int_equal(tok.expires_in, 86399);

    doc = th_fixture("imds/constructed-token-error.json", &len);
    assert_int_equal(tw_az_token_parse(doc, len, &tok, &err), TW_EPERM);
    free(doc);
    assert_non_null(strstr(err.msg, "bad_request_102: Required metadata header not specified"));
    assert_string_equal(tok.access_token, "");
}

static void test_bad(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *words;
    } cases[] = {
        {"", "not valid JSON"},
        {"[]", "not a JSON object"},
        {"{\"expires_in\": \"1\"}", "access_token is missing"},
        {"{\"access_token\": \"\"}", "access_token must be a string"},
        {"{\"access_token\": 5}", "access_token must be a string"},
        {"{\"access_token\": \"t\", \"expires_in\": \"soon\"}", "whole numbers"},
        {"{\"access_token\": \"t\", \"expires_on\": -5}", "whole numbers"},
        {"{\"access_token\": \"t\", \"token_type\": []}", "token_type"},
    };
    struct tw_error err = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum tw_err rc = tw_az_token_parse(cases[i].doc, strlen(cases[i].doc), &tok, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, cases[i].words))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, cases[i].words);
    }
}

static void test_fetch(void **state)
{
    (void)state;
    size_t len;
    char *doc = th_fixture("imds/constructed-token-arm.json", &len);
    /* 404 while IMDS updates, which Azure says to retry, then the token. */
    struct fakesrv *s = fs_start((struct fs_reply[]){{404, "", NULL, 0}, {200, doc, NULL, 0}, {0}});
    free(doc);
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    tw_az_http_opts_imds(&o);
    o.loopback_only = true;
    o.sleep_ms = fs_sleep;
    o.sleep_arg = &z;
    struct tw_error err = {0};
    if (tw_az_token_fetch(&o, s->base, "https://management.azure.com/", NULL, &tok, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(fs_requests(s), 2);
    assert_string_equal(s->path, "/metadata/identity/oauth2/token");
    assert_string_equal(s->api_version, "2018-02-01");
    assert_string_equal(s->resource, "https://management.azure.com/");
    assert_string_equal(s->metadata, "true");
    assert_string_equal(tok.access_token,
                        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.constructed.signature");

    fs_script(
        s,
        (struct fs_reply[]){
            {400, "{\"error\": \"invalid_resource\", \"error_description\": \"AADSTS50001: no\"}",
             NULL, 0},
            {0}});
    assert_int_equal(tw_az_token_fetch(&o, s->base, "https://x/", "cid", &tok, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "invalid_resource: AADSTS50001"));
    fs_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_fetch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
