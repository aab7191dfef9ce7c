/*
 * auth.h - the backend's API tokens: making them, hashing them, reading
 * them from an Authorization header, and what each role may do.
 *
 * A token is "tw_" followed by 32 random bytes in base64url (no padding),
 * 46 characters in all.  Only its SHA-256 is stored; a presented token is
 * hashed and the hashes are compared in constant time.  This file does no
 * storage and no HTTP: the server and `tierwise token` call it.
 */
#ifndef TW_SERVER_AUTH_H
#define TW_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "store/store.h"

#define TW_TOKEN_PREFIX "tw_"
#define TW_TOKEN_RANDOM_BYTES 32
#define TW_TOKEN_LEN 46      /* "tw_" + 43 base64url characters */
#define TW_TOKEN_MAX_LEN 256 /* a presented token longer than this is refused */

/* Roles a route accepts, as a bit set (TW_AUTH_PUBLIC: no token needed). */
#define TW_AUTH_PUBLIC 0u
#define TW_AUTH_AGENT (1u << TW_ROLE_AGENT)
#define TW_AUTH_READER (1u << TW_ROLE_READER)
#define TW_AUTH_ADMIN (1u << TW_ROLE_ADMIN)

/* A new token in OUT (TW_TOKEN_LEN + 1 bytes) from the kernel's random
 * source (getrandom); TW_EIO when it can't be read. */
enum tw_err tw_auth_token_new(char out[TW_TOKEN_LEN + 1], struct tw_error *err);

/* The token made of RANDOM (TW_TOKEN_RANDOM_BYTES bytes), for tests. */
void tw_auth_token_format(const uint8_t random[TW_TOKEN_RANDOM_BYTES], char out[TW_TOKEN_LEN + 1]);

/* SHA-256 of the LEN bytes of TOKEN; TW_EIO if GnuTLS fails. */
enum tw_err tw_auth_hash(const char *token, size_t len, uint8_t out[32], struct tw_error *err);

/* Whether the 32-byte hashes A and B are equal, in time independent of
 * where they differ. */
bool tw_auth_hash_equal(const uint8_t a[32], const uint8_t b[32]);

/*
 * The token of an Authorization header value VALUE (LEN bytes, need not be
 * NUL-terminated): "Bearer <token>" (scheme case-insensitive, one or more
 * spaces).  *TOKEN points into VALUE, *TOKEN_LEN is its length.  False
 * when the header is not a bearer token or the token is empty, longer than
 * TW_TOKEN_MAX_LEN or holds characters outside the token alphabet.
 */
bool tw_auth_parse_bearer(const char *value, size_t len, const char **token, size_t *token_len);

/* Whether ROLE may use a route that accepts ALLOWED (TW_AUTH_* bits). */
bool tw_auth_role_allowed(enum tw_role role, unsigned allowed);

#endif
