/* fuzz_mr_group_by.c - the monthly report's grouping (service/monthly.c,
 * tw_mr_group_by_parse) on arbitrary bytes: it comes from `tierwise report
 * monthly --group-by` and from the route's ?group_by=.  What it accepts is
 * "resource-group", "subscription" or "tag:NAME" (NAME pointing into the
 * input, within its LEN bytes, also read as a C string from a
 * NUL-terminated copy of them, as its callers give it); what it refuses is TW_EPARSE with a
 * message, the options' grouping as it was. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/monthly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly SIZE bytes, so that a read past them is caught. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    struct tw_mr_opts o;
    memset(&o, 0, sizeof(o));
    o.group_by = TW_MR_BY_SUBSCRIPTION;
    struct tw_error err = {0};
    enum tw_err rc = tw_mr_group_by_parse(buf, size, &o, &err);
    if (rc != TW_OK) {
        if (rc != TW_EPARSE || !err.msg[0] || o.group_by != TW_MR_BY_SUBSCRIPTION)
            abort();
        free(buf);
        return 0;
    }
    switch (o.group_by) {
    case TW_MR_BY_RESOURCE_GROUP:
        if (size != 14 || memcmp(buf, "resource-group", 14) != 0)
            abort();
        break;
    case TW_MR_BY_SUBSCRIPTION:
        if (size != 12 || memcmp(buf, "subscription", 12) != 0)
            abort();
        break;
    case TW_MR_BY_TAG:
        if (size <= 4 || memcmp(buf, "tag:", 4) != 0 || !o.group_tag ||
            o.group_tag < buf + 4 || o.group_tag >= buf + size)
            abort();
        {
            /* The name lies within the LEN bytes: its callers (the command,
             * the route) give a NUL-terminated copy of them and the build
             * reads the name as a C string, which must end at or before the
             * copy's NUL. */
            char *z = malloc(size + 1);
            if (!z)
                abort();
            memcpy(z, data, size);
            z[size] = '\0';
            struct tw_mr_opts oz;
            memset(&oz, 0, sizeof(oz));
            struct tw_error zerr = {0};
            if (tw_mr_group_by_parse(z, size, &oz, &zerr) != TW_OK || oz.group_by != TW_MR_BY_TAG ||
                !oz.group_tag || oz.group_tag < z + 4 || oz.group_tag >= z + size ||
                oz.group_tag + strlen(oz.group_tag) > z + size)
                abort();
            free(z);
        }
        break;
    default:
        abort();
    }
    free(buf);
    return 0;
}
