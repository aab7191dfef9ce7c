/* fuzz_result_json.c - the bench result reader on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_result r;
    struct tw_error err;
    if (tw_result_from_json((const char *)data, size, &r, &err) == TW_OK) {
        /* What was accepted must write out and read back the same. */
        char *s = tw_result_to_json(&r, 0);
        if (s) {
            static struct tw_result back;
            if (tw_result_from_json(s, strlen(s), &back, &err) != TW_OK)
                abort();
            free(s);
        }
    }
    return 0;
}
