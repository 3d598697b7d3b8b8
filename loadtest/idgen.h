/* Row-id generators for the load test: a seeded xoshiro256** RNG and the three access
 * patterns (uniform, zipf:s, sequential). Each thread owns one generator, seeded from
 * (seed, thread) so runs are reproducible and threads draw independent streams. */
#ifndef LD_IDGEN_H
#define LD_IDGEN_H
#include <stddef.h>
#include <stdint.h>

typedef struct ld_rng {
  uint64_t s[4];
} ld_rng;
void ld_rng_seed(ld_rng *r, uint64_t seed);
uint64_t ld_rng_next(ld_rng *r);
uint64_t ld_rng_below(ld_rng *r, uint64_t n); /* uniform in [0, n), n > 0, unbiased */
double ld_rng_double(ld_rng *r);              /* uniform in [0, 1) */

typedef enum { LD_IDS_UNIFORM,
               LD_IDS_ZIPF,
               LD_IDS_SEQUENTIAL } ld_ids_kind;
typedef struct ld_ids_spec {
  ld_ids_kind kind;
  double s;
} ld_ids_spec;
/* "uniform", "sequential", "zipf" (s = 1.1) or "zipf:S" with 0 < S <= 10. 0 ok, -1 bad. */
int ld_ids_spec_parse(const char *str, ld_ids_spec *out);
/* Writes "uniform" / "zipf:1.1" / "sequential" into buf. */
void ld_ids_spec_format(const ld_ids_spec *spec, char *buf, size_t cap);

/* Zipf over ranks 1..n with exponent s by rejection-inversion (Hoermann & Derflinger
 * 1996): O(1) memory and time for any n, unlike a CDF table over millions of rows. */
typedef struct ld_zipf {
  uint64_t n;
  double s, h_x1, h_n, s_val;
} ld_zipf;
void ld_zipf_init(ld_zipf *z, uint64_t n, double s);
uint64_t ld_zipf_sample(const ld_zipf *z, ld_rng *r); /* rank in [1, n] */

/* Keyed bijection on [0, n) (Feistel network + cycle walking): maps zipf ranks to row ids
 * so the hot rows are spread over the file instead of packed into its first pages. */
typedef struct ld_perm {
  uint64_t n;
  unsigned half_bits;
  uint64_t keys[4];
} ld_perm;
void ld_perm_init(ld_perm *p, uint64_t n, uint64_t seed);
uint64_t ld_perm_apply(const ld_perm *p, uint64_t x);

typedef struct ld_idgen {
  ld_ids_spec spec;
  uint64_t n;
  ld_rng rng;
  ld_zipf zipf;
  ld_perm perm;
  uint64_t cursor; /* sequential: next id */
} ld_idgen;
/* stream/nstreams: this thread's index; sequential streams start at evenly spaced offsets.
 * The rank->id permutation depends on seed only, so all threads share the same hot rows. */
void ld_idgen_init(ld_idgen *g, const ld_ids_spec *spec, uint64_t n, uint64_t seed,
                   unsigned stream, unsigned nstreams);
void ld_idgen_fill(ld_idgen *g, uint64_t *ids, size_t count);

#endif
