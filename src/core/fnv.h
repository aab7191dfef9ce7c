/*
 * fnv.h - FNV-1a, 64 bits: a short fingerprint of data that is compared,
 * never trusted (what a kept verdict was judged under).  Not for secrets.
 */
#ifndef TW_CORE_FNV_H
#define TW_CORE_FNV_H

#include <stddef.h>
#include <stdint.h>

#define TW_FNV_START 0xcbf29ce484222325ULL

/* H with LEN bytes of P folded in. */
uint64_t tw_fnv_bytes(uint64_t h, const void *p, size_t len);
/* H with S and its terminating NUL (so "ab","c" differs from "a","bc"). */
uint64_t tw_fnv_text(uint64_t h, const char *s);
/* H with V's 8 bytes, least significant first (the same on every host). */
uint64_t tw_fnv_i64(uint64_t h, int64_t v);

#endif
