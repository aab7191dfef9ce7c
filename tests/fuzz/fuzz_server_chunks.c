/* fuzz_server_chunks.c - the gate's reading of a chunked body
 * (tw_gate_chunks_feed) on arbitrary bytes: fed whole and fed in pieces
 * (the first byte sets their size, as the network would cut them), it
 * comes to the same end: the same bytes of body, the same verdict. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t feed(const char *b, size_t n, size_t piece, bool *done, unsigned *status)
{
    struct tw_gate_chunks ck;
    memset(&ck, 0, sizeof(ck));
    char msg[256];
    size_t used = 0;
    *done = false;
    *status = 0;
    while (used < n && !*done && !*status) {
        size_t len = n - used < piece ? n - used : piece;
        /* Each piece in a buffer of its own size, for AddressSanitizer. */
        char *p = malloc(len);
        if (!p)
            abort();
        memcpy(p, b + used, len);
        size_t got = tw_gate_chunks_feed(&ck, p, len, 1u << 20, done, status, msg);
        free(p);
        if (got > len || (got < len && !*done && !*status))
            abort();
        if (*status && !msg[0])
            abort();
        used += got;
    }
    return used;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    size_t piece = (size_t)data[0] % 17 + 1;
    const char *b = (const char *)data + 1;
    size_t n = size - 1;
    bool d1, d2;
    unsigned s1, s2;
    size_t u1 = feed(b, n, n ? n : 1, &d1, &s1);
    size_t u2 = feed(b, n, piece, &d2, &s2);
    if (u1 != u2 || d1 != d2 || s1 != s2)
        abort();
    return 0;
}
