/* fuzz_store_location.c - which --db locations are PostgreSQL's
 * (tw_store_location_is_pg) on arbitrary bytes: only LEN bytes are read
 * (no terminator is looked for), the answer is the same every time, a
 * PostgreSQL location has the shape of one (a postgresql:// or
 * postgres:// URI, or a lower-case word and '=' after optional blanks),
 * and a location that is PostgreSQL's stays so whatever follows it. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_prefix(const char *s, size_t n, const char *p)
{
    size_t pl = strlen(p);
    return n >= pl && memcmp(s, p, pl) == 0;
}

/* The shape a PostgreSQL location must have, found independently. */
static bool pg_shaped(const char *s, size_t n)
{
    if (has_prefix(s, n, "postgresql://") || has_prefix(s, n, "postgres://"))
        return true;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    size_t w = i;
    while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
        i++;
    if (i == w)
        return false;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i < n && s[i] == '=';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: a read past SIZE is the sanitizer's to see. */
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    if (size)
        memcpy(s, data, size);
    bool pg = tw_store_location_is_pg(s, size);
    if (pg != tw_store_location_is_pg(s, size))
        abort();
    if (pg && !pg_shaped(s, size))
        abort();
    /* A shorter prefix that is PostgreSQL's makes the whole so. */
    for (size_t k = 0; k <= size && k <= 96; k++)
        if (tw_store_location_is_pg(s, k) && !pg)
            abort();
    free(s);
    return 0;
}
