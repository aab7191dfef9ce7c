/*
 * fnv.c - FNV-1a, 64 bits (fnv.h).
 */
#include "core/fnv.h"

#include <string.h>

uint64_t tw_fnv_bytes(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t tw_fnv_text(uint64_t h, const char *s)
{
    return tw_fnv_bytes(h, s, strlen(s) + 1);
}

uint64_t tw_fnv_i64(uint64_t h, int64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return tw_fnv_bytes(h, b, sizeof(b));
}
