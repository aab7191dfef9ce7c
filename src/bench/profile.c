/* profile.c - the table of named profiles. */
#include "bench/profile.h"

#include <stdio.h>
#include <string.h>

#define S 1000ULL /* ms per second */

static const struct tw_profile profiles[] = {
    {"rated-iops", "random read 8 KiB, QD 256 x 4 jobs: reaches a disk's rated IOPS",
     "libaio", TW_PAT_RANDREAD, 8192, 256, 4, 100, 30 * S, 5 * S},
    {"rated-throughput", "sequential read 1 MiB, QD 64: reaches a disk's rated MB/s",
     "libaio", TW_PAT_READ, 1048576, 64, 1, 100, 30 * S, 5 * S},
    {"db-scan-16k", "sequential read 16 KiB, QD 1 psync: a table scan without read-ahead",
     "psync", TW_PAT_READ, 16384, 1, 1, 100, 30 * S, 2 * S},
    {"db-largeio-128k", "sequential read 128 KiB, QD 32: a database's large reads",
     "libaio", TW_PAT_READ, 131072, 32, 1, 100, 30 * S, 2 * S},
    {"oltp-8k-mixed", "random 8 KiB, 75 % reads, QD 32: an OLTP database (writes)",
     "libaio", TW_PAT_RANDRW, 8192, 32, 1, 75, 30 * S, 2 * S},
    {"rated-iops-write", "random write 8 KiB, QD 256 x 4 jobs: rated IOPS for writes",
     "libaio", TW_PAT_RANDWRITE, 8192, 256, 4, 0, 30 * S, 5 * S},
    {"rated-throughput-write", "sequential write 1 MiB, QD 64: rated MB/s for writes",
     "libaio", TW_PAT_WRITE, 1048576, 64, 1, 0, 30 * S, 5 * S},
    {"db-log-write-64k", "sequential write 64 KiB, QD 1 psync: a database log writer",
     "psync", TW_PAT_WRITE, 65536, 1, 1, 0, 30 * S, 2 * S},
};

#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

const struct tw_profile *tw_profile_at(unsigned i)
{
    return i < NPROFILES ? &profiles[i] : NULL;
}

const struct tw_profile *tw_profile_find(const char *name, struct tw_error *err)
{
    for (unsigned i = 0; i < NPROFILES; i++) {
        if (strcmp(profiles[i].name, name) == 0)
            return &profiles[i];
    }
    char names[512] = "";
    for (unsigned i = 0; i < NPROFILES; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
                 profiles[i].name);
    }
    tw_error_set(err, TW_EINVAL, "unknown profile \"%s\"; choose one of %s "
                 "(--list-profiles describes them)", name, names);
    return NULL;
}

bool tw_profile_writes(const struct tw_profile *p)
{
    return tw_pattern_writes(p->pattern);
}
