/*
 * fuzz_arm_answers.c - the parsers of the other Azure answers the agent
 * reads: a Resource SKUs page and a managed-identity token.  The first
 * byte picks the parser; the rest is the answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/imds.h"
#include "azure/skus.h"
#include "core/vmcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    struct tw_error err;
    if (data[0] & 1) {
        struct tw_az_token t;
        enum tw_err rc = tw_az_token_parse(buf, len, &t, &err);
        if (rc != TW_OK && !err.msg[0])
            abort(); /* every failure says why */
    } else {
        struct tw_vmcap_table t = {0};
        char next[2048];
        enum tw_err rc = tw_az_skus_parse_page(buf, len, &t, next, sizeof(next), &err);
        if (rc == TW_OK && strlen(next) >= sizeof(next))
            abort();
        if (rc != TW_OK && !err.msg[0])
            abort();
        for (size_t i = 0; i < t.n; i++)
            if (!tw_vmcap_find(&t, t.caps[i].vm_size))
                abort(); /* what was read can be found */
        tw_vmcap_table_cleanup(&t);
    }
    return 0;
}
