/* fuzz_plan.c - what the planner reads from outside, on arbitrary bytes:
 * a saved plan (tierwise.plan/1, `tierwise apply --plan FILE` and POST
 * /api/v1/actions; tw_svc_plan_parse) and a plan's date (--from/--to and
 * ?from=&to=; tw_svc_plan_date).  An accepted plan's actions each have a
 * kind, names, SKUs, a key and a due time that reads back to the same
 * instant; a refusal is TW_EPARSE with a message.  An accepted date is an
 * instant from 1970 on; a refusal says why and leaves 0. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/time.h"
#include "service/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum tw_err on_action(void *arg, const struct tw_plan_action *a)
{
    size_t *n = arg;
    (*n)++;
    if ((a->kind != TW_PLAN_DOWNGRADE && a->kind != TW_PLAN_UPGRADE) || !a->vm || !a->vm[0] ||
        !a->disk || !a->disk[0] || !a->from_sku[0] || !a->to_sku[0] || !a->idempotency_key[0] ||
        a->vm_id < 0 || a->disk_id < 0)
        abort();
    int64_t ns;
    struct tw_error err = {0};
    if (tw_rfc3339_parse(a->due_at, strlen(a->due_at), &ns, &err) != TW_OK || ns != a->due_ns)
        abort();
    return TW_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    struct tw_plan_sink sink = {on_action, &n};
    struct tw_error err = {0};
    enum tw_err rc = tw_svc_plan_parse((const char *)data, size, &sink, &err);
    if (rc != TW_OK && (rc != TW_EPARSE || !err.msg[0]))
        abort();
    if (size <= 64) {
        int64_t ns = -1;
        struct tw_tz *z = NULL;
        struct tw_error zerr = {0};
        if (tw_tz_from_posix("GMT0BST,M3.5.0/1,M10.5.0", 24, &z, &zerr) != TW_OK)
            abort();
        err = (struct tw_error){0};
        rc = tw_svc_plan_date((const char *)data, size, z, &ns, &err);
        tw_tz_free(z);
        if (rc == TW_OK && ns < 0)
            abort();
        if (rc != TW_OK && ((rc != TW_EPARSE && rc != TW_ERANGE) || ns != 0 || !err.msg[0]))
            abort();
    }
    return 0;
}
