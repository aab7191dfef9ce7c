/*
 * sys.h - the clock and the random source, in one place.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds (vDSO, no system call);
 * wall-clock time is only used to label results.  Keeping these here gives
 * tests one seam to replace.
 */
#ifndef TW_BENCH_SYS_H
#define TW_BENCH_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t tw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Fills BUF with LEN bytes from the kernel's random source; 0 or -errno. */
int tw_sys_random(void *buf, size_t len);

/* Formats the current UTC time as RFC 3339 with milliseconds. */
void tw_sys_rfc3339_now(char *out, size_t outlen);

/* CPU seconds (user, system) this process has used so far. */
void tw_sys_cpu(double *usr_s, double *sys_s);

#endif
