/* test_sim_token.c - managed-identity and client-credentials tokens, and
 * ARM's bearer check with its real 401 bodies. */
#include "simtest.h"

#define DISK ST_DISKS "advisor-vm-01-data0?api-version=2024-03-02"

static const char *arm_code(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
}

static const char *arm_msg(const struct st_resp *r)
{
    return json_string_value(json_object_get(json_object_get(r->json, "error"), "message"));
}

static void test_msi(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_imds(sim, &r,
            "/metadata/identity/oauth2/token?api-version=2018-02-01&"
            "resource=https%3A%2F%2Fmanagement.azure.com%2F");
    assert_int_equal(r.status, 200);
    /* The fields of imds-token-sample.json "constructed_arm", all strings. */
    static const char *const keys[] = {"access_token",   "client_id",  "expires_in", "expires_on",
                                       "ext_expires_in", "not_before", "resource",   "token_type"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (!json_is_string(json_object_get(r.json, keys[i])))
            fail_msg("%s is not a string in %s", keys[i], r.body);
    }
    assert_string_equal(json_string_value(json_object_get(r.json, "resource")), ST_ARM_ID);
    assert_string_equal(json_string_value(json_object_get(r.json, "token_type")), "Bearer");
    assert_string_equal(json_string_value(json_object_get(r.json, "expires_in")), "86399");
    long on = atol(json_string_value(json_object_get(r.json, "expires_on")));
    long nbf = atol(json_string_value(json_object_get(r.json, "not_before")));
    assert_int_equal(on - nbf, 86399);
    /* JWT-shaped: three dot-separated parts. */
    const char *t = json_string_value(json_object_get(r.json, "access_token"));
    assert_non_null(strchr(t, '.'));
    assert_non_null(strchr(strchr(t, '.') + 1, '.'));
    st_free(&r);

    /* The documented refusal without the header. */
    st_request(sim, &r, "GET",
               "/metadata/identity/oauth2/token?api-version=2018-02-01&"
               "resource=https://management.azure.com/",
               NULL, NULL);
    assert_int_equal(r.status, 400);
    json_t *want = json_pack("{s:s, s:s}", "error", "bad_request_102", "error_description",
                             "Required metadata header not specified");
    assert_true(json_equal(r.json, want));
    json_decref(want);
    st_free(&r);
    static const char *const upper[] = {"Metadata: True", NULL};
    st_request(sim, &r, "GET",
               "/metadata/identity/oauth2/token?api-version=2018-02-01&"
               "resource=x",
               upper, NULL);
    assert_int_equal(r.status, 400); /* "true" in lower case only (imds.md 3) */
    st_free(&r);
    st_imds(sim, &r, "/metadata/identity/oauth2/token?api-version=2018-02-01");
    assert_int_equal(r.status, 400);
    assert_string_equal(json_string_value(json_object_get(r.json, "error")), "invalid_request");
    st_free(&r);
    tw_sim_stop(sim);
}

static void test_arm_401s(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    struct st_resp r;
    st_request(sim, &r, "GET", DISK, NULL, NULL);
    assert_int_equal(r.status, 401);
    assert_string_equal(arm_code(&r), "AuthenticationFailed");
    assert_string_equal(arm_msg(&r),
                        "Authentication failed. The 'Authorization' header is missing.");
    assert_non_null(strstr(st_hdr(&r, "WWW-Authenticate"), "Bearer"));
    st_free(&r);
    static const char *const basic[] = {"Authorization: Basic dXNlcjpwYXNz", NULL};
    st_request(sim, &r, "GET", DISK, basic, NULL);
    assert_int_equal(r.status, 401);
    assert_string_equal(arm_code(&r), "AuthenticationFailedInvalidHeader");
    st_free(&r);
    st_arm(sim, &r, "eyJ0eXAiOiJKV1QifQ.e30.forged", "GET", DISK, NULL);
    assert_int_equal(r.status, 401);
    assert_string_equal(arm_code(&r), "InvalidAuthenticationToken");
    assert_string_equal(arm_msg(&r), "The access token is invalid.");
    st_free(&r);
    /* A token for another resource. */
    st_imds(sim, &r,
            "/metadata/identity/oauth2/token?api-version=2018-02-01&"
            "resource=https://vault.azure.net");
    char *vault = strdup(json_string_value(json_object_get(r.json, "access_token")));
    st_free(&r);
    st_arm(sim, &r, vault, "GET", DISK, NULL);
    assert_int_equal(r.status, 401);
    assert_string_equal(arm_code(&r), "InvalidAuthenticationTokenAudience");
    assert_non_null(strstr(arm_msg(&r), "'https://vault.azure.net'"));
    st_free(&r);
    free(vault);
    /* A good token works, then expires when the clock passes it. */
    char *tok = st_token(sim);
    st_arm(sim, &r, tok, "GET", DISK, NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    st_request(sim, &r, "POST", "/_sim/clock", NULL, "{\"advance_s\": 86400}");
    st_free(&r);
    st_arm(sim, &r, tok, "GET", DISK, NULL);
    assert_int_equal(r.status, 401);
    assert_string_equal(arm_code(&r), "ExpiredAuthenticationToken");
    assert_non_null(strstr(arm_msg(&r), "The access token expiry UTC time '"));
    assert_non_null(strstr(arm_msg(&r), "' is earlier than current UTC time '"));
    st_free(&r);
    free(tok);
    tw_sim_stop(sim);
}

#define LOGIN "/99999999-8888-7777-6666-555555555555/oauth2/v2.0/token"
#define CREDS "client_id=11111111-2222-3333-4444-555555555555&client_secret=constructed-test-secret"
#define SCOPE "scope=https%3A%2F%2Fmanagement.azure.com%2F.default"

static void test_login(void **state)
{
    (void)state;
    struct tw_sim *sim = st_start(NULL, NULL);
    static const char *const form[] = {"Content-Type: application/x-www-form-urlencoded", NULL};
    struct st_resp r;
    st_request(sim, &r, "POST", LOGIN, form, "grant_type=client_credentials&" CREDS "&" SCOPE);
    assert_int_equal(r.status, 200);
    assert_string_equal(json_string_value(json_object_get(r.json, "token_type")), "Bearer");
    assert_true(json_is_integer(json_object_get(r.json, "expires_in")));
    char *tok = strdup(json_string_value(json_object_get(r.json, "access_token")));
    st_free(&r);
    st_arm(sim, &r, tok, "GET", DISK, NULL);
    assert_int_equal(r.status, 200);
    st_free(&r);
    free(tok);

    static const struct {
        const char *body;
        long status;
        const char *error;
        const char *words;
    } bad[] = {
        {CREDS "&" SCOPE, 400, "invalid_request",
         "AADSTS900144: The request body must contain "
         "the following parameter: 'grant_type'."},
        {"grant_type=password&" CREDS "&" SCOPE, 400, "unsupported_grant_type", "AADSTS70003"},
        {"grant_type=client_credentials&" CREDS "&scope=https%3A%2F%2Fmanagement.azure.com%2F", 400,
         "invalid_scope", "AADSTS70011"},
        {"grant_type=client_credentials&client_id=nobody&client_secret=x&" SCOPE, 400,
         "unauthorized_client", "AADSTS700016: Application with identifier 'nobody'"},
        {"grant_type=client_credentials&client_id=11111111-2222-3333-4444-555555555555&"
         "client_secret=wrong&" SCOPE,
         401, "invalid_client", "AADSTS7000215: Invalid client secret"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        st_request(sim, &r, "POST", LOGIN, form, bad[i].body);
        const char *e = json_string_value(json_object_get(r.json, "error")),
                   *d = json_string_value(json_object_get(r.json, "error_description"));
        if (r.status != bad[i].status || !e || strcmp(e, bad[i].error) != 0 || !d ||
            !strstr(d, bad[i].words) || !json_is_array(json_object_get(r.json, "error_codes")))
            fail_msg("%s: %ld %s", bad[i].body, r.status, r.body);
        st_free(&r);
    }
    tw_sim_stop(sim);
}

static void anyone(json_t *root)
{
    json_object_del(root, "service_principals");
}

static void test_login_open(void **state)
{
    (void)state;
    /* With no service principals in the scenario any client gets a token. */
    struct tw_sim *sim = st_start(NULL, anyone);
    struct st_resp r;
    st_request(sim, &r, "POST", "/common/oauth2/v2.0/token", NULL,
               "grant_type=client_credentials&client_id=a&client_secret=b&" SCOPE);
    assert_int_equal(r.status, 200);
    st_free(&r);
    tw_sim_stop(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msi),
        cmocka_unit_test(test_arm_401s),
        cmocka_unit_test(test_login),
        cmocka_unit_test(test_login_open),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
