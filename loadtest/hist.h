/* Log-linear latency histogram in microseconds, HdrHistogram style: exact below 2048 us,
 * then 1024 linear sub-buckets per power of two (error <= 0.1 %) up to 2^36 us (~19 h).
 * Fixed size and allocation-free while recording, so each thread keeps its own and merges. */
#ifndef LD_HIST_H
#define LD_HIST_H
#include <stdint.h>

#define LD_HIST_SUB_BITS  11 /* 2048 exact values below the log part */
#define LD_HIST_HALF      (1u << (LD_HIST_SUB_BITS - 1))
#define LD_HIST_MAX_BIT   35 /* highest bit of the largest value kept */
#define LD_HIST_NBUCKETS  ((1u << LD_HIST_SUB_BITS) + (LD_HIST_MAX_BIT - LD_HIST_SUB_BITS + 1) * LD_HIST_HALF)
#define LD_HIST_MAX_VALUE ((UINT64_C(1) << (LD_HIST_MAX_BIT + 1)) - 1)

typedef struct ld_hist {
  uint64_t total;    /* number of recorded values */
  uint64_t min, max; /* exact extremes (min is UINT64_MAX while empty) */
  double sum, sumsq; /* for mean and standard deviation */
  uint64_t counts[LD_HIST_NBUCKETS];
} ld_hist;

ld_hist *ld_hist_new(void);
void ld_hist_free(ld_hist *h);
void ld_hist_reset(ld_hist *h);
void ld_hist_record(ld_hist *h, uint64_t us);
void ld_hist_record_n(ld_hist *h, uint64_t us, uint64_t n);
void ld_hist_merge(ld_hist *dst, const ld_hist *src);
/* Value at percentile p (0..100): the highest value of the bucket that holds the
 * ceil(p% * total)-th smallest sample, capped at the exact max. 0 when empty. */
uint64_t ld_hist_percentile(const ld_hist *h, double p);
double ld_hist_mean(const ld_hist *h);
double ld_hist_stddev(const ld_hist *h);
/* Bucket mapping, exposed for tests. */
uint32_t ld_hist_index(uint64_t us);
uint64_t ld_hist_bucket_high(uint32_t idx);

#endif
