/* fuzz_mr_group_by.c - the monthly report's grouping (service/monthly.c,
 * tw_mr_group_by_parse) on arbitrary bytes: it comes from `tierwise report
 * monthly --group-by` and from the route's ?group_by=.  What it accepts is
 * "resource-group", "subscription" or "tag:NAME" (NAME pointing into the
 * input, within its LEN bytes); what it refuses is TW_EPARSE with a
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
        break;
    default:
        abort();
    }
    free(buf);
    return 0;
}
