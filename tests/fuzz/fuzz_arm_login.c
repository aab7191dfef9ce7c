/*
 * fuzz_arm_login.c - the Entra ID login answer (first byte even) and a
 * Retry-After value (odd; the rest as a string, read against a clock from
 * the next four bytes).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/arm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!(data[0] & 1)) {
        char tok[256];
        int64_t life;
        struct tw_error err = {0};
        enum tw_err rc = tw_arm_login_parse((const char *)data + 1, size - 1, tok, sizeof(tok),
                                            &life, &err);
        if (rc != TW_OK && (!err.msg[0] || tok[0] || life != 0))
            abort();
        /* A token taken is one header's worth: no space, no line break. */
        if (rc == TW_OK && (!tok[0] || strpbrk(tok, " \r\n") || life < 0))
            abort();
        return 0;
    }
    if (size < 5 || size > 200)
        return 0;
    int64_t now = (int64_t)((uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
                            (uint32_t)data[3] << 8 | data[4]);
    char v[200];
    memcpy(v, data + 5, size - 5);
    v[size - 5] = '\0';
    long ms = -1;
    bool ok = tw_arm_retry_after_parse(v, now, &ms);
    if (ms < 0 || ms > 86400000L || (!ok && ms != 0))
        abort();
    return 0;
}
