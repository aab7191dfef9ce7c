/* sys.c - random bytes, wall-clock labels and CPU accounting. */
#include "bench/sys.h"

#include <errno.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/resource.h>

int tw_sys_random(void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = getrandom((char *)buf + done, len - done, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        done += (size_t)r;
    }
    return 0;
}

void tw_sys_rfc3339_now(char *out, size_t outlen)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             ts.tv_nsec / 1000000L);
}

void tw_sys_cpu(double *usr_s, double *sys_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *usr_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}
