/* fuzz_policy.c - the policy reader (core/policy.c) on arbitrary bytes:
 * a refusal always says where (at least one problem, each with a line and
 * column, the error's message set); what parses writes a canonical JSON
 * that reads back to the same canonical JSON, and is asked about a disk. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_policy p, q;
    struct tw_policy_diags d;
    struct tw_error err = {0};
    enum tw_err rc = tw_policy_parse((const char *)data, size, &p, &d, &err);
    if (rc != TW_OK) {
        if (rc == TW_EPARSE && (d.n == 0 || !err.msg[0]))
            abort();
        for (size_t i = 0; i < d.n; i++)
            if (d.d[i].line < 1 || d.d[i].column < 1 || !d.d[i].path[0] || !d.d[i].msg[0])
                abort();
        tw_policy_cleanup(&p);
        return 0;
    }
    if (d.n != 0 || !p.name[0])
        abort();
    char *j = tw_policy_to_json(&p);
    if (!j)
        abort();
    if (tw_policy_parse(j, strlen(j), &q, NULL, &err) != TW_OK)
        abort();
    char *j2 = tw_policy_to_json(&q);
    if (!j2 || strcmp(j, j2) != 0)
        abort();
    struct tw_tag tags[] = {{"env", "dev"}, {"tierwise", "off"}};
    struct tw_policy_subject s = {"vm1", "rg1", "sub1", tags, 2, "Premium_LRS", TW_DISK_DATA};
    char why[256];
    enum tw_policy_cover c = tw_policy_covers(&p, &s, why, sizeof(why));
    if (c != tw_policy_covers(&q, &s, why, sizeof(why)) || (c == TW_COVER_EXCLUDED && !why[0]))
        abort();
    free(j);
    free(j2);
    tw_policy_cleanup(&p);
    tw_policy_cleanup(&q);
    return 0;
}
