/*
 * fuzz_arm_error.c - ARM's error and operation answers.  First byte even:
 * an error body classified, with the HTTP status from the next two bytes;
 * odd: an Azure-AsyncOperation status body.  The rest is the answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/arm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct tw_arm_error *e)
{
    if (!memchr(e->code, '\0', sizeof(e->code)) || !memchr(e->message, '\0', sizeof(e->message)) ||
        !memchr(e->detail_code, '\0', sizeof(e->detail_code)) || e->fault < TW_ARM_FAULT_NONE ||
        e->fault > TW_ARM_FAULT_OTHER || !tw_arm_fault_name(e->fault))
        abort();
    /* Message text is safe to log: no control characters. */
    for (const char *p = e->message; *p; p++)
        if ((unsigned char)*p < 0x20)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!(data[0] & 1)) {
        if (size < 3)
            return 0;
        long status = (long)(((unsigned)data[1] << 8 | data[2]) % 600);
        struct tw_arm_error e;
        tw_arm_error_classify(status, (const char *)data + 3, size - 3, &e);
        check(&e);
        if (e.status != status || ((status >= 200 && status <= 299) != (e.fault == TW_ARM_FAULT_NONE)))
            abort();
        return 0;
    }
    char st[32];
    struct tw_arm_error fail;
    struct tw_error err = {0};
    enum tw_err rc = tw_arm_op_status_parse((const char *)data + 1, size - 1, st, sizeof(st), &fail,
                                            &err);
    if (rc != TW_OK && (!err.msg[0] || st[0]))
        abort();
    if (rc == TW_OK && !st[0])
        abort();
    check(&fail);
    return 0;
}
