/* fuzz_report.c - the report reader (core/report.c) on arbitrary bytes:
 * what every POST /api/v1/reports body goes through. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_report *r, *back;
    if (!r) {
        r = tw_report_new();
        back = tw_report_new();
        if (!r || !back)
            abort();
    }
    struct tw_error err = {0};
    if (tw_report_from_json((const char *)data, size, r, &err) != TW_OK) {
        /* A refusal says why and leaves nothing half-read. */
        if (!err.msg[0] || r->n_results != 0 || r->results || r->inv.n_disks != 0 || r->id[0])
            abort();
        return 0;
    }
    if (!tw_uuid_valid(r->id) || r->n_results > TW_REPORT_MAX_RESULTS)
        abort();
    /* What was accepted writes out and reads back the same. */
    char *s = tw_report_to_json(r, JSON_COMPACT);
    if (!s || tw_report_from_json(s, strlen(s), back, &err) != TW_OK)
        abort();
    char *s2 = tw_report_to_json(back, JSON_COMPACT);
    if (!s2 || strcmp(s, s2) != 0)
        abort();
    free(s);
    free(s2);
    return 0;
}
