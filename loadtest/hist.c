/* Log-linear latency histogram (see hist.h). Bucket index = exact value below 2048, else
 * (power of two, top 11 bits) so relative error is bounded by 1/1024 at every magnitude,
 * which is what makes p99.9 meaningful across microseconds and seconds alike. */
#include "hist.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

ld_hist *ld_hist_new(void) {
  ld_hist *h = malloc(sizeof *h);
  if (h) ld_hist_reset(h);
  return h;
}

void ld_hist_free(ld_hist *h) { free(h); }

void ld_hist_reset(ld_hist *h) {
  memset(h, 0, sizeof *h);
  h->min = UINT64_MAX;
}

uint32_t ld_hist_index(uint64_t v) {
  if (v > LD_HIST_MAX_VALUE) v = LD_HIST_MAX_VALUE;
  if (v < (1u << LD_HIST_SUB_BITS)) return (uint32_t)v;
  unsigned msb = 63u - (unsigned)__builtin_clzll(v);
  unsigned shift = msb - (LD_HIST_SUB_BITS - 1);
  uint64_t sub = v >> shift; /* in [HALF, 2*HALF) */
  return (1u << LD_HIST_SUB_BITS) + (msb - LD_HIST_SUB_BITS) * LD_HIST_HALF + (uint32_t)(sub - LD_HIST_HALF);
}

uint64_t ld_hist_bucket_high(uint32_t idx) {
  if (idx < (1u << LD_HIST_SUB_BITS)) return idx;
  uint32_t rel = idx - (1u << LD_HIST_SUB_BITS);
  unsigned msb = LD_HIST_SUB_BITS + rel / LD_HIST_HALF;
  unsigned shift = msb - (LD_HIST_SUB_BITS - 1);
  uint64_t sub = LD_HIST_HALF + rel % LD_HIST_HALF;
  return ((sub + 1) << shift) - 1;
}

void ld_hist_record_n(ld_hist *h, uint64_t us, uint64_t n) {
  if (n == 0) return;
  h->counts[ld_hist_index(us)] += n;
  h->total += n;
  if (us < h->min) h->min = us;
  if (us > h->max) h->max = us;
  h->sum += (double)us * (double)n;
  h->sumsq += (double)us * (double)us * (double)n;
}

void ld_hist_record(ld_hist *h, uint64_t us) { ld_hist_record_n(h, us, 1); }

void ld_hist_merge(ld_hist *dst, const ld_hist *src) {
  if (src->total == 0) return;
  for (uint32_t i = 0; i < LD_HIST_NBUCKETS; i++) dst->counts[i] += src->counts[i];
  dst->total += src->total;
  if (src->min < dst->min) dst->min = src->min;
  if (src->max > dst->max) dst->max = src->max;
  dst->sum += src->sum;
  dst->sumsq += src->sumsq;
}

uint64_t ld_hist_percentile(const ld_hist *h, double p) {
  if (h->total == 0) return 0;
  if (p >= 100.0) return h->max;
  if (p < 0) p = 0;
  uint64_t target = (uint64_t)ceil(p / 100.0 * (double)h->total);
  if (target < 1) target = 1;
  uint64_t seen = 0;
  for (uint32_t i = 0; i < LD_HIST_NBUCKETS; i++) {
    seen += h->counts[i];
    if (seen >= target) {
      uint64_t v = ld_hist_bucket_high(i);
      if (v > h->max) v = h->max;
      if (v < h->min) v = h->min;
      return v;
    }
  }
  return h->max;
}

double ld_hist_mean(const ld_hist *h) { return h->total ? h->sum / (double)h->total : 0.0; }

double ld_hist_stddev(const ld_hist *h) {
  if (h->total < 2) return 0.0;
  double m = ld_hist_mean(h);
  double var = h->sumsq / (double)h->total - m * m;
  return var > 0 ? sqrt(var) : 0.0;
}
