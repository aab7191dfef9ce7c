/*
 * auth.c - API tokens: random, base64url, hashed with SHA-256 (GnuTLS),
 * compared in constant time.
 */
#include "server/auth.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void tw_auth_token_format(const uint8_t random[TW_TOKEN_RANDOM_BYTES], char out[TW_TOKEN_LEN + 1])
{
    char *p = out;
    memcpy(p, TW_TOKEN_PREFIX, sizeof(TW_TOKEN_PREFIX) - 1);
    p += sizeof(TW_TOKEN_PREFIX) - 1;
    size_t i = 0;
    for (; i + 3 <= TW_TOKEN_RANDOM_BYTES; i += 3) {
        uint32_t v = (uint32_t)random[i] << 16 | (uint32_t)random[i + 1] << 8 | random[i + 2];
        *p++ = b64url[v >> 18 & 63];
        *p++ = b64url[v >> 12 & 63];
        *p++ = b64url[v >> 6 & 63];
        *p++ = b64url[v & 63];
    }
    /* 32 = 30 + 2: the last two bytes give three characters. */
    uint32_t v = (uint32_t)random[i] << 16 | (uint32_t)random[i + 1] << 8;
    *p++ = b64url[v >> 18 & 63];
    *p++ = b64url[v >> 12 & 63];
    *p++ = b64url[v >> 6 & 63];
    *p = '\0';
}

enum tw_err tw_auth_token_new(char out[TW_TOKEN_LEN + 1], struct tw_error *err)
{
    uint8_t r[TW_TOKEN_RANDOM_BYTES];
    size_t got = 0;
    while (got < sizeof(r)) {
        ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return tw_error_set(err, TW_EIO, "can't read random bytes for a token: %s",
                                strerror(errno));
        }
        got += (size_t)n;
    }
    tw_auth_token_format(r, out);
    memset(r, 0, sizeof(r));
    return TW_OK;
}

enum tw_err tw_auth_hash(const char *token, size_t len, uint8_t out[32], struct tw_error *err)
{
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token, len, out) != 0)
        return tw_error_set(err, TW_EIO, "GnuTLS could not compute a SHA-256");
    return TW_OK;
}

bool tw_auth_hash_equal(const uint8_t a[32], const uint8_t b[32])
{
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < 32; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static bool token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

bool tw_auth_parse_bearer(const char *value, size_t len, const char **token, size_t *token_len)
{
    *token = NULL;
    *token_len = 0;
    if (!value || len < 7 || strncasecmp(value, "Bearer", 6) != 0 || value[6] != ' ')
        return false;
    size_t i = 6;
    while (i < len && value[i] == ' ')
        i++;
    size_t end = len;
    while (end > i && (value[end - 1] == ' ' || value[end - 1] == '\t'))
        end--;
    if (end == i || end - i > TW_TOKEN_MAX_LEN)
        return false;
    for (size_t k = i; k < end; k++)
        if (!token_char(value[k]))
            return false;
    *token = value + i;
    *token_len = end - i;
    return true;
}

bool tw_auth_role_allowed(enum tw_role role, unsigned allowed)
{
    if (allowed == TW_AUTH_PUBLIC)
        return true;
    if (role == TW_ROLE_ADMIN)
        return true; /* admins may do everything */
    return (allowed & (1u << role)) != 0;
}
