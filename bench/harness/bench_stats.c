/*
 * bench_stats.c - what `ksched bench` measures besides wall time: a log-linear latency
 * histogram and the process's CPU time and resident memory.
 *
 * The histogram layout is HdrHistogram's with 2^KS_HIST_SUB_BITS sub-buckets: values
 * below 2^(SUB_BITS+1) have a bucket each; above, each power of two [2^e, 2^(e+1)) is
 * split into 2^SUB_BITS equal buckets, so a bucket is at most 1/32 of its value wide.
 * Recording is a count-leading-zeros and an increment.
 */
#include "bench.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint32_t bucket_of(uint64_t v)
{
    const uint64_t sub = 1u << KS_HIST_SUB_BITS;
    if (v < 2 * sub)
        return (uint32_t)v;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(v); /* e > SUB_BITS */
    uint32_t shift = e - KS_HIST_SUB_BITS;
    return ((shift + 1) << KS_HIST_SUB_BITS) + (uint32_t)((v >> shift) & (sub - 1));
}

/* The smallest value of bucket @b and its width. */
static void bucket_range(uint32_t b, uint64_t *lo, uint64_t *width)
{
    const uint32_t sub = 1u << KS_HIST_SUB_BITS;
    if (b < 2 * sub) {
        *lo = b;
        *width = 1;
        return;
    }
    uint32_t shift = (b >> KS_HIST_SUB_BITS) - 1;
    *lo = ((uint64_t)sub + (b & (sub - 1))) << shift;
    *width = 1ull << shift;
}

void ks_hist_record(struct ks_hist *h, uint64_t ns)
{
    uint32_t b = bucket_of(ns);
    if (b >= KS_HIST_BUCKETS)
        b = KS_HIST_BUCKETS - 1;
    h->buckets[b]++;
    h->count++;
    h->sum += ns;
    if (ns > h->max)
        h->max = ns;
}

uint64_t ks_hist_quantile(const struct ks_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)h->count + 0.5), seen = 0;
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    for (uint32_t b = 0; b < KS_HIST_BUCKETS; b++) {
        seen += h->buckets[b];
        if (seen >= rank) {
            uint64_t lo, width;
            bucket_range(b, &lo, &width);
            uint64_t mid = lo + width / 2;
            return mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}

int64_t ks_bench_cpu_ns(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

uint64_t ks_bench_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024; /* kilobytes on Linux */
}

uint64_t ks_bench_rss(void)
{
    unsigned long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}
