/* Row-id generators (see idgen.h). Everything is deterministic given the seed so a run
 * that exposed a problem can be repeated exactly, including the --verify samples. */
#include "idgen.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void ld_rng_seed(ld_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

uint64_t ld_rng_next(ld_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Lemire's multiply-shift with rejection: no modulo bias, usually one multiplication. */
uint64_t ld_rng_below(ld_rng *r, uint64_t n) {
  unsigned __int128 m = (unsigned __int128)ld_rng_next(r) * n;
  uint64_t lo = (uint64_t)m;
  if (lo < n) {
    uint64_t threshold = -n % n;
    while (lo < threshold) {
      m = (unsigned __int128)ld_rng_next(r) * n;
      lo = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

double ld_rng_double(ld_rng *r) { return (double)(ld_rng_next(r) >> 11) * 0x1.0p-53; }

int ld_ids_spec_parse(const char *str, ld_ids_spec *out) {
  if (strcmp(str, "uniform") == 0) {
    *out = (ld_ids_spec){LD_IDS_UNIFORM, 0};
    return 0;
  }
  if (strcmp(str, "sequential") == 0) {
    *out = (ld_ids_spec){LD_IDS_SEQUENTIAL, 0};
    return 0;
  }
  if (strcmp(str, "zipf") == 0) {
    *out = (ld_ids_spec){LD_IDS_ZIPF, 1.1};
    return 0;
  }
  if (strncmp(str, "zipf:", 5) == 0) {
    char *end;
    double s = strtod(str + 5, &end);
    if (end == str + 5 || *end || !(s > 0 && s <= 10)) return -1;
    *out = (ld_ids_spec){LD_IDS_ZIPF, s};
    return 0;
  }
  return -1;
}

void ld_ids_spec_format(const ld_ids_spec *spec, char *buf, size_t cap) {
  switch (spec->kind) {
  case LD_IDS_UNIFORM: snprintf(buf, cap, "uniform"); break;
  case LD_IDS_SEQUENTIAL: snprintf(buf, cap, "sequential"); break;
  case LD_IDS_ZIPF: snprintf(buf, cap, "zipf:%g", spec->s); break;
  }
}

/* ---- zipf: rejection-inversion, as in Apache Commons RNG's RejectionInversionZipfSampler */

/* log1p(x)/x and expm1(x)/x, with series near 0 where the quotients lose precision. */
static double helper1(double x) {
  return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}
static double helper2(double x) {
  return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}
static double zh(const ld_zipf *z, double x) { return exp(-z->s * log(x)); }
/* Integral of h: (x^(1-s) - 1)/(1-s), or log(x) at s = 1, evaluated without a branch. */
static double zH(const ld_zipf *z, double x) {
  double lx = log(x);
  return helper2((1 - z->s) * lx) * lx;
}
static double zHinv(const ld_zipf *z, double x) {
  double t = x * (1 - z->s);
  if (t < -1) t = -1; /* guards rounding at the upper end */
  return exp(helper1(t) * x);
}

void ld_zipf_init(ld_zipf *z, uint64_t n, double s) {
  z->n = n ? n : 1;
  z->s = s;
  z->h_x1 = zH(z, 1.5) - 1;
  z->h_n = zH(z, (double)z->n + 0.5);
  z->s_val = 2 - zHinv(z, zH(z, 2.5) - zh(z, 2));
}

uint64_t ld_zipf_sample(const ld_zipf *z, ld_rng *r) {
  /* Acceptance rate is above 90 % for all s, so the bound only guards against NaN inputs. */
  for (int tries = 0; tries < 1000; tries++) {
    double u = z->h_n + ld_rng_double(r) * (z->h_x1 - z->h_n);
    double x = zHinv(z, u);
    double kd = floor(x + 0.5);
    uint64_t k = kd < 1 ? 1 : kd > (double)z->n ? z->n
                                                : (uint64_t)kd;
    if ((double)k - x <= z->s_val || u >= zH(z, (double)k + 0.5) - zh(z, (double)k)) return k;
  }
  return 1;
}

/* ---- permutation: balanced 4-round Feistel over 2*half_bits bits, cycle-walked into [0,n) */

void ld_perm_init(ld_perm *p, uint64_t n, uint64_t seed) {
  p->n = n ? n : 1;
  unsigned bits = 1;
  while (bits < 64 && (UINT64_C(1) << bits) < p->n) bits++;
  p->half_bits = (bits + 1) / 2;
  if (p->half_bits < 1) p->half_bits = 1;
  uint64_t x = seed ^ 0x5eed5eed5eed5eedULL;
  for (int i = 0; i < 4; i++) p->keys[i] = splitmix64(&x);
}

static uint64_t feistel_round(uint64_t v, uint64_t key) {
  uint64_t z = v ^ key;
  z = (z ^ (z >> 31)) * 0x7fb5d329728ea185ULL;
  z = (z ^ (z >> 27)) * 0x81dadef4bc2dd44dULL;
  return z ^ (z >> 33);
}

uint64_t ld_perm_apply(const ld_perm *p, uint64_t x) {
  unsigned hb = p->half_bits;
  uint64_t mask = hb >= 32 ? 0xffffffffULL : (UINT64_C(1) << hb) - 1;
  /* The domain is at most 4n, so the expected walk is under 4 steps; x < n always ends it. */
  do {
    uint64_t l = (x >> hb) & mask, r = x & mask;
    for (int i = 0; i < 4; i++) {
      uint64_t t = l ^ (feistel_round(r, p->keys[i]) & mask);
      l = r;
      r = t;
    }
    x = (l << hb) | r;
  } while (x >= p->n);
  return x;
}

void ld_idgen_init(ld_idgen *g, const ld_ids_spec *spec, uint64_t n, uint64_t seed,
                   unsigned stream, unsigned nstreams) {
  memset(g, 0, sizeof *g);
  g->spec = *spec;
  g->n = n ? n : 1;
  uint64_t x = seed;
  uint64_t base = splitmix64(&x);
  ld_rng_seed(&g->rng, base + 0x9e3779b97f4a7c15ULL * (stream + 1));
  if (spec->kind == LD_IDS_ZIPF) {
    ld_zipf_init(&g->zipf, g->n, spec->s);
    ld_perm_init(&g->perm, g->n, seed);
  }
  if (nstreams == 0) nstreams = 1;
  g->cursor = (uint64_t)((unsigned __int128)g->n * stream / nstreams);
}

void ld_idgen_fill(ld_idgen *g, uint64_t *ids, size_t count) {
  switch (g->spec.kind) {
  case LD_IDS_UNIFORM:
    for (size_t i = 0; i < count; i++) ids[i] = ld_rng_below(&g->rng, g->n);
    break;
  case LD_IDS_ZIPF:
    for (size_t i = 0; i < count; i++) ids[i] = ld_perm_apply(&g->perm, ld_zipf_sample(&g->zipf, &g->rng) - 1);
    break;
  case LD_IDS_SEQUENTIAL:
    for (size_t i = 0; i < count; i++) {
      ids[i] = g->cursor;
      if (++g->cursor >= g->n) g->cursor = 0;
    }
    break;
  }
}
