/*
 * stat.h - running mean and variance that merge across jobs.
 *
 * Welford's update keeps the mean and the sum of squared deviations (M2)
 * without storing samples and without the cancellation of the naive
 * sum-of-squares formula.  Two accumulators combine exactly with the
 * parallel formula (Chan et al.), so each job keeps its own and the runner
 * merges them once at the end.
 */
#ifndef TW_BENCH_STAT_H
#define TW_BENCH_STAT_H

#include <stdint.h>

struct tw_stat {
    uint64_t n;     /* samples */
    double mean;    /* running mean */
    double m2;      /* sum of squared deviations from the mean */
    double min, max;
};

void tw_stat_init(struct tw_stat *s);

static inline void tw_stat_add(struct tw_stat *s, double x)
{
    s->n++;
    double d = x - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (x - s->mean);
    if (s->n == 1 || x < s->min)
        s->min = x;
    if (s->n == 1 || x > s->max)
        s->max = x;
}

/* Adds SRC's samples to DST. */
void tw_stat_merge(struct tw_stat *dst, const struct tw_stat *src);

/* Sample standard deviation (n - 1); 0 for fewer than two samples. */
double tw_stat_stdev(const struct tw_stat *s);

#endif
