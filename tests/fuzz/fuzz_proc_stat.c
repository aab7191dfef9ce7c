/* fuzz_proc_stat.c - the /proc readers under the process_* metrics
 * (server/metrics.c) on arbitrary bytes: /proc/self/stat, whose command
 * field is the program's name (any bytes, spaces and parentheses
 * included), and /proc/stat's btime line.  Neither may read past LEN; a
 * refusal always says why, and an accepted line reads the same again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that a read past SIZE is caught. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    struct tw_proc_stat ps, again;
    struct tw_error err = {0};
    enum tw_err rc = tw_proc_stat_parse(buf, size, &ps, &err);
    if (rc != TW_OK && (rc != TW_EPARSE || !err.msg[0]))
        abort();
    if (rc == TW_OK &&
        (tw_proc_stat_parse(buf, size, &again, NULL) != TW_OK || memcmp(&ps, &again, sizeof(ps))))
        abort();
    int64_t btime = -1;
    struct tw_error err2 = {0};
    rc = tw_proc_btime_parse(buf, size, &btime, &err2);
    if (rc != TW_OK && (rc != TW_EPARSE || !err2.msg[0] || btime != 0))
        abort();
    if (rc == TW_OK && btime < 0)
        abort();
    free(buf);
    return 0;
}
