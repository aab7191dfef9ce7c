/*
 * fuzz_arm_disk.c - ARM's disk answers: one disk (a GET) when the first
 * byte is even, a list page when it is odd; the rest is the answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/arm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static bool disk_ok(const struct tw_arm_disk *d)
{
    return terminated(d->id, sizeof(d->id)) && terminated(d->name, sizeof(d->name)) &&
           terminated(d->sku, sizeof(d->sku)) && d->name[0] && d->sku[0] && d->size_gib >= 0 &&
           d->iops >= 0 && d->mbps >= 0 && d->n_tags <= TW_INV_MAX_TAGS &&
           (d->bursting >= -1 && d->bursting <= 1) &&
           (!d->id[0] || tw_arm_id_split(d->id, NULL, 0, NULL, 0, NULL, 0));
}

static enum tw_err each(void *arg, const struct tw_arm_disk *d)
{
    if (!disk_ok(d))
        abort();
    ++*(size_t *)arg;
    return TW_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    struct tw_error err = {0};
    if (data[0] & 1) {
        char next[512];
        size_t n = 0;
        enum tw_err rc = tw_arm_disk_page_parse(buf, len, each, &n, next, sizeof(next), &err);
        if (rc != TW_OK && (!err.msg[0] || next[0]))
            abort(); /* a refusal says why and hands no next page */
        if (!terminated(next, sizeof(next)))
            abort();
    } else {
        static struct tw_arm_disk d;
        enum tw_err rc = tw_arm_disk_parse(buf, len, &d, &err);
        if (rc != TW_OK && (!err.msg[0] || d.name[0]))
            abort();
        if (rc == TW_OK && !disk_ok(&d))
            abort();
    }
    return 0;
}
