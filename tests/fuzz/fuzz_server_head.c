/* fuzz_server_head.c - the gate's reading of a request head on arbitrary
 * bytes: where the head ends (tw_gate_head_end, searched from every
 * offset an arriving byte can leave it at) and the checks of the head up
 * to there (tw_gate_check_head): a verdict, never a read past the bytes
 * given.  The head is copied into a buffer of exactly its size, so that
 * AddressSanitizer sees any read beyond it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 20000)
        return 0;
    const struct tw_gate_opts o = {.head_max = 16384,
                                   .target_max = 64,
                                   .params_max = 4,
                                   .headers_max = 8};
    const char *b = (const char *)data;
    size_t end = tw_gate_head_end(b, size, 0);
    /* Searching again from a later offset finds the same end. */
    for (size_t from = 0; end && from + 3 < end; from += 7)
        if (tw_gate_head_end(b, size, from) != end)
            abort();
    if (!end)
        return 0;
    char *head = malloc(end);
    if (!head)
        return 0;
    memcpy(head, b, end);
    struct tw_gate_verdict v;
    tw_gate_check_head(head, end, &o, &v);
    if (v.status && (!v.code || !v.reason || !v.msg[0]))
        abort();
    free(head);
    return 0;
}
