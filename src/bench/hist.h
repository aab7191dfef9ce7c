/*
 * hist.h - latency histogram with bounded relative error and fixed memory.
 *
 * Why log-linear: latencies span from microseconds (a cached read) to
 * seconds (a throttled disk), and a percentile needs the same *relative*
 * precision at both ends.  Values are integer nanoseconds.  The range is cut
 * into groups by the position of the highest set bit; each group is split
 * into 2^TW_HIST_SUB_BITS equal sub-buckets.  Values below 2^SUB_BITS get a
 * bucket of their own (exact).  In group g >= 1 a bucket spans
 * 2^(g-1) ns and starts at no less than 2^(SUB_BITS+g-1) ns, so a bucket is at
 * most 1/2^SUB_BITS of its lower bound wide.  Reporting the bucket's
 * midpoint bounds the relative error by 1/2^(SUB_BITS+1):
 *
 *     SUB_BITS = 7:  128 sub-buckets, error <= 1/256 = 0.39 % (< 1 %)
 *
 * Memory: 64 bit values need (64 - SUB_BITS + 1) groups of 128 counters of
 * 8 bytes, 59 KiB per histogram whatever the run length.  Two histograms
 * of the same shape merge by adding counters, so jobs (threads) keep their
 * own and the runner merges them at the end: exact, no locking on the hot
 * path.
 */
#ifndef TW_BENCH_HIST_H
#define TW_BENCH_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TW_HIST_SUB_BITS 7
#define TW_HIST_SUB (1u << TW_HIST_SUB_BITS)
#define TW_HIST_GROUPS (64 - TW_HIST_SUB_BITS + 1)
#define TW_HIST_BUCKETS (TW_HIST_GROUPS * TW_HIST_SUB)

struct tw_hist {
    uint64_t count;                    /* samples recorded */
    uint64_t min_ns, max_ns;           /* exact extremes (min is UINT64_MAX when empty) */
    uint64_t bucket[TW_HIST_BUCKETS];  /* samples per bucket */
};

/* Empties H. */
void tw_hist_init(struct tw_hist *h);

/* Bucket index of a value, and the value that bucket stands for (its
 * midpoint; the value itself for the exact small buckets). */
size_t tw_hist_index(uint64_t ns);
uint64_t tw_hist_value(size_t idx);

/* Records one sample; inline because it runs once per I/O. */
static inline void tw_hist_add(struct tw_hist *h, uint64_t ns)
{
    h->bucket[tw_hist_index(ns)]++;
    h->count++;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

/* Adds SRC's samples to DST. */
void tw_hist_merge(struct tw_hist *dst, const struct tw_hist *src);

/*
 * The PCT-th percentile (0 < PCT <= 100) by nearest rank: the smallest
 * recorded value such that at least PCT % of samples are <= it, to within
 * the histogram's relative error, and never outside [min, max].  0 when
 * the histogram is empty.
 */
uint64_t tw_hist_percentile(const struct tw_hist *h, double pct);

#endif
