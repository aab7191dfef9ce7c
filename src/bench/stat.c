/* stat.c - mergeable running statistics. */
#include "bench/stat.h"

#include <math.h>

void tw_stat_init(struct tw_stat *s)
{
    s->n = 0;
    s->mean = 0;
    s->m2 = 0;
    s->min = 0;
    s->max = 0;
}

void tw_stat_merge(struct tw_stat *dst, const struct tw_stat *src)
{
    if (!src->n)
        return;
    if (!dst->n) {
        *dst = *src;
        return;
    }
    double n = (double)(dst->n + src->n);
    double d = src->mean - dst->mean;
    dst->m2 += src->m2 + d * d * (double)dst->n * (double)src->n / n;
    dst->mean += d * (double)src->n / n;
    dst->n += src->n;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

double tw_stat_stdev(const struct tw_stat *s)
{
    if (s->n < 2)
        return 0;
    return sqrt(s->m2 / (double)(s->n - 1));
}
