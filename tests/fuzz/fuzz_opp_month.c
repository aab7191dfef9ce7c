/* fuzz_opp_month.c - the month of the fleet's savings opportunities
 * (service/opportunities.c, tw_opp_month_parse) on arbitrary bytes: it
 * comes from `--month` and from the route's ?month=.  What it accepts is
 * exactly "YYYY-MM" of a year 1970..2199 and a month 01..12, and reads back
 * to the same text; what it refuses says why and leaves zeros. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/opportunities.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int y = -1, m = -1;
    struct tw_error err = {0};
    enum tw_err rc = tw_opp_month_parse((const char *)data, size, &y, &m, &err);
    if (rc != TW_OK) {
        if ((rc != TW_EPARSE && rc != TW_ERANGE) || y != 0 || m != 0 || !err.msg[0])
            abort();
        return 0;
    }
    if (size != 7 || y < 1970 || y > 2199 || m < 1 || m > 12)
        abort();
    char back[16];
    snprintf(back, sizeof(back), "%04d-%02d", y, m);
    if (memcmp(back, data, 7) != 0)
        abort();
    return 0;
}
