/* hist.c - log-linear latency histogram (see hist.h for the error bound). */
#include "bench/hist.h"

#include <math.h>
#include <string.h>

void tw_hist_init(struct tw_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

size_t tw_hist_index(uint64_t ns)
{
    if (ns < TW_HIST_SUB)
        return (size_t)ns;
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
    unsigned shift = msb - TW_HIST_SUB_BITS;    /* bucket width is 2^shift */
    size_t group = shift + 1;
    size_t sub = (size_t)(ns >> shift) - TW_HIST_SUB;
    return group * TW_HIST_SUB + sub;
}

uint64_t tw_hist_value(size_t idx)
{
    if (idx < TW_HIST_SUB)
        return idx;
    size_t group = idx / TW_HIST_SUB;
    uint64_t sub = idx % TW_HIST_SUB;
    unsigned shift = (unsigned)group - 1;
    uint64_t lower = (TW_HIST_SUB + sub) << shift;
    uint64_t half = shift ? (1ULL << (shift - 1)) : 0;
    return lower + half;
}

void tw_hist_merge(struct tw_hist *dst, const struct tw_hist *src)
{
    if (!src->count)
        return;
    for (size_t i = 0; i < TW_HIST_BUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

uint64_t tw_hist_percentile(const struct tw_hist *h, double pct)
{
    if (!h->count)
        return 0;
    if (pct <= 0)
        return h->min_ns;
    if (pct >= 100)
        return h->max_ns;
    /* Nearest rank; the small epsilon keeps 50 % of 10 at rank 5, not 6,
     * when pct/100 * n lands a hair above an integer in floating point. */
    double r = ceil(pct / 100.0 * (double)h->count - 1e-9);
    uint64_t rank = r < 1 ? 1 : (uint64_t)r;
    uint64_t seen = 0;
    for (size_t i = 0; i < TW_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = tw_hist_value(i);
            if (v < h->min_ns)
                v = h->min_ns;
            if (v > h->max_ns)
                v = h->max_ns;
            return v;
        }
    }
    return h->max_ns;
}
