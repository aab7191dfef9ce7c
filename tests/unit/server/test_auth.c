/* test_auth.c - token format, SHA-256, constant-time compare, bearer
 * parsing and the role rules. */
#include "testhelp.h"

#include <stdio.h>
#include <string.h>

#include "server/auth.h"

static void test_format(void **state)
{
    (void)state;
    uint8_t r[TW_TOKEN_RANDOM_BYTES];
    char tok[TW_TOKEN_LEN + 1];
    memset(r, 0, sizeof(r));
    tw_auth_token_format(r, tok);
    assert_int_equal(strlen(tok), TW_TOKEN_LEN);
    assert_string_equal(tok, "tw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    memset(r, 0xff, sizeof(r));
    tw_auth_token_format(r, tok);
    /* All ones: 42 "_" (six one bits each), then "111100" is '8'. */
    assert_int_equal(tok[TW_TOKEN_LEN - 1], '8');
    for (size_t i = 3; i < TW_TOKEN_LEN - 1; i++)
        assert_int_equal(tok[i], '_');
    /* Two new tokens differ and carry the prefix. */
    char a[TW_TOKEN_LEN + 1], b[TW_TOKEN_LEN + 1];
    struct tw_error err = {0};
    assert_int_equal(tw_auth_token_new(a, &err), TW_OK);
    assert_int_equal(tw_auth_token_new(b, &err), TW_OK);
    assert_int_equal(strncmp(a, TW_TOKEN_PREFIX, 3), 0);
    assert_int_equal(strlen(a), TW_TOKEN_LEN);
    assert_string_not_equal(a, b);
    const char *tk;
    size_t tl;
    char hdr[80];
    snprintf(hdr, sizeof(hdr), "Bearer %s", a);
    assert_true(tw_auth_parse_bearer(hdr, strlen(hdr), &tk, &tl));
    assert_int_equal(tl, TW_TOKEN_LEN);
}

static void test_hash(void **state)
{
    (void)state;
    uint8_t h[32], g[32];
    struct tw_error err = {0};
    /* SHA-256("abc") */
    static const uint8_t abc[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                    0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                    0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                    0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    assert_int_equal(tw_auth_hash("abc", 3, h, &err), TW_OK);
    assert_memory_equal(h, abc, 32);
    assert_true(tw_auth_hash_equal(h, abc));
    /* A difference anywhere, first byte or last, is seen. */
    memcpy(g, h, 32);
    g[0] ^= 1;
    assert_false(tw_auth_hash_equal(h, g));
    memcpy(g, h, 32);
    g[31] ^= 0x80;
    assert_false(tw_auth_hash_equal(h, g));
    memcpy(g, h, 32);
    assert_true(tw_auth_hash_equal(h, g));
}

static void test_bearer(void **state)
{
    (void)state;
    const char *t;
    size_t n;
    assert_true(tw_auth_parse_bearer("Bearer tw_abc", 13, &t, &n));
    assert_int_equal(n, 6);
    assert_memory_equal(t, "tw_abc", 6);
    assert_true(tw_auth_parse_bearer("bearer   tw_abc  ", 17, &t, &n));
    assert_int_equal(n, 6);
    /* Only the first LEN bytes count. */
    assert_true(tw_auth_parse_bearer("Bearer tw_abcdef", 13, &t, &n));
    assert_int_equal(n, 6);
    static const char *const bad[] = {"",
                                      "Bearer",
                                      "Bearer ",
                                      "Bearer    ",
                                      "Basic dXNlcjpw",
                                      "Bearertw_abc",
                                      "Bearer tw abc",
                                      "Bearer tw_\"x",
                                      "Bearer tw_\x01",
                                      "Token tw_abc"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(tw_auth_parse_bearer(bad[i], strlen(bad[i]), &t, &n));
    assert_false(tw_auth_parse_bearer(NULL, 0, &t, &n));
    char longer[TW_TOKEN_MAX_LEN + 20];
    memcpy(longer, "Bearer ", 7);
    memset(longer + 7, 'a', TW_TOKEN_MAX_LEN + 1);
    assert_false(tw_auth_parse_bearer(longer, 7 + TW_TOKEN_MAX_LEN + 1, &t, &n));
    assert_true(tw_auth_parse_bearer(longer, 7 + TW_TOKEN_MAX_LEN, &t, &n));
}

static void test_roles(void **state)
{
    (void)state;
    assert_true(tw_auth_role_allowed(TW_ROLE_AGENT, TW_AUTH_AGENT));
    assert_false(tw_auth_role_allowed(TW_ROLE_AGENT, TW_AUTH_READER));
    assert_false(tw_auth_role_allowed(TW_ROLE_READER, TW_AUTH_AGENT));
    assert_true(tw_auth_role_allowed(TW_ROLE_READER, TW_AUTH_READER));
    assert_true(tw_auth_role_allowed(TW_ROLE_ADMIN, TW_AUTH_AGENT));
    assert_true(tw_auth_role_allowed(TW_ROLE_ADMIN, TW_AUTH_READER));
    assert_true(tw_auth_role_allowed(TW_ROLE_ADMIN, TW_AUTH_ADMIN));
    assert_false(tw_auth_role_allowed(TW_ROLE_READER, TW_AUTH_ADMIN));
    assert_false(tw_auth_role_allowed(TW_ROLE_AGENT, TW_AUTH_ADMIN));
    assert_true(tw_auth_role_allowed(TW_ROLE_AGENT, TW_AUTH_PUBLIC));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
