/* lanced-load's id generators: the zipf sampler against the exact distribution, the rank
 * permutation is a bijection, uniform and sequential stay in range, and everything is
 * reproducible from the seed. Includes the source to reach the internals. */
#include <check.h>
#include "support/support.h"
#include <math.h>
#include <stdlib.h>
#include "../../loadtest/idgen.c"

static double harmonic(uint64_t n, double s) {
  double h = 0;
  for (uint64_t k = n; k >= 1; k--) h += pow((double)k, -s);
  return h;
}

/* Observed frequency of the first ranks vs the exact pmf, for several exponents. */
START_TEST(test_zipf_distribution) {
  const double exps[] = {0.5, 1.0, 1.1, 2.0};
  const uint64_t n = 1000, draws = 400000;
  for (int e = 0; e < 4; e++) {
    double s = exps[e];
    ld_zipf z;
    ld_zipf_init(&z, n, s);
    ld_rng r;
    ld_rng_seed(&r, 42 + (uint64_t)e);
    uint64_t *cnt = calloc(n + 1, sizeof *cnt), out_of_range = 0;
    /* Hot loops count and assert once: every ck_assert reports to the parent process. */
    for (uint64_t i = 0; i < draws; i++) {
      uint64_t k = ld_zipf_sample(&z, &r);
      if (k < 1 || k > n) {
        out_of_range++;
        continue;
      }
      cnt[k]++;
    }
    ck_assert_uint_eq(out_of_range, 0);
    double H = harmonic(n, s);
    for (uint64_t k = 1; k <= 5; k++) {
      double expect = draws * pow((double)k, -s) / H;
      double sd = sqrt(expect);
      ck_assert_msg(fabs((double)cnt[k] - expect) < 5 * sd + 1, "s=%g rank %llu: %llu vs %.0f", s,
                    (unsigned long long)k, (unsigned long long)cnt[k], expect);
    }
    /* The tail mass (ranks 101..n) too, which a broken inversion tends to get wrong. */
    double tail_p = (H - harmonic(100, s)) / H;
    uint64_t tail = 0;
    for (uint64_t k = 101; k <= n; k++) tail += cnt[k];
    double expect = draws * tail_p;
    ck_assert_msg(fabs((double)tail - expect) < 5 * sqrt(expect) + 1, "s=%g tail %llu vs %.0f", s,
                  (unsigned long long)tail, expect);
    free(cnt);
  }
}
END_TEST

START_TEST(test_zipf_edges) {
  ld_rng r;
  ld_rng_seed(&r, 7);
  ld_zipf z;
  ld_zipf_init(&z, 1, 1.1);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(ld_zipf_sample(&z, &r), 1);
  ld_zipf_init(&z, UINT64_C(1) << 40, 1.1); /* huge n: no table, still in range */
  uint64_t bad = 0;
  for (int i = 0; i < 100000; i++) {
    uint64_t k = ld_zipf_sample(&z, &r);
    bad += k < 1 || k > (UINT64_C(1) << 40);
  }
  ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_perm_bijective) {
  const uint64_t ns[] = {1, 2, 3, 17, 1000, 4096, 4097, 65537};
  for (int t = 0; t < 8; t++) {
    uint64_t n = ns[t];
    ld_perm p;
    ld_perm_init(&p, n, 99);
    unsigned char *seen = calloc(n, 1);
    uint64_t bad = 0;
    for (uint64_t x = 0; x < n; x++) {
      uint64_t y = ld_perm_apply(&p, x);
      if (y >= n || seen[y]) {
        bad++;
        continue;
      }
      seen[y] = 1;
    }
    ck_assert_msg(bad == 0, "n=%llu: %llu ids out of range or hit twice", (unsigned long long)n, (unsigned long long)bad);
    free(seen);
  }
  /* It actually scrambles: rank 0..9 do not map to ids 0..9. */
  ld_perm p;
  ld_perm_init(&p, 1000000, 1);
  int identity = 0;
  for (uint64_t x = 0; x < 10; x++) identity += ld_perm_apply(&p, x) == x;
  ck_assert_int_lt(identity, 3);
}
END_TEST

START_TEST(test_uniform_and_sequential) {
  ld_ids_spec spec;
  ck_assert_int_eq(ld_ids_spec_parse("uniform", &spec), 0);
  ld_idgen g;
  ld_idgen_init(&g, &spec, 10, 5, 0, 1);
  uint64_t ids[10000], cnt[10] = {0};
  ld_idgen_fill(&g, ids, 10000);
  uint64_t bad = 0;
  for (int i = 0; i < 10000; i++) {
    if (ids[i] >= 10) {
      bad++;
      continue;
    }
    cnt[ids[i]]++;
  }
  ck_assert_uint_eq(bad, 0);
  for (int i = 0; i < 10; i++) ck_assert(cnt[i] > 850 && cnt[i] < 1150);

  ck_assert_int_eq(ld_ids_spec_parse("sequential", &spec), 0);
  ld_idgen_init(&g, &spec, 10, 5, 1, 2); /* second of two streams starts half-way */
  ld_idgen_fill(&g, ids, 12);
  for (int i = 0; i < 12; i++) ck_assert_uint_eq(ids[i], (uint64_t)(5 + i) % 10);
}
END_TEST

START_TEST(test_reproducible) {
  ld_ids_spec spec;
  ck_assert_int_eq(ld_ids_spec_parse("zipf:1.3", &spec), 0);
  ck_assert_int_eq(spec.kind, LD_IDS_ZIPF);
  ck_assert(spec.s == 1.3);
  ld_idgen a, b, c;
  ld_idgen_init(&a, &spec, 100000, 7, 0, 2);
  ld_idgen_init(&b, &spec, 100000, 7, 0, 2);
  ld_idgen_init(&c, &spec, 100000, 7, 1, 2);
  uint64_t x[256], y[256], z[256];
  ld_idgen_fill(&a, x, 256);
  ld_idgen_fill(&b, y, 256);
  ld_idgen_fill(&c, z, 256);
  ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
  ck_assert_int_ne(memcmp(x, z, sizeof x), 0); /* other thread, other stream */
  /* Same hot row across threads: the most frequent id agrees. */
  ck_assert_uint_eq(ld_perm_apply(&a.perm, 0), ld_perm_apply(&c.perm, 0));
  ck_assert_int_eq(ld_ids_spec_parse("zipf", &spec), 0);
  ck_assert(spec.s == 1.1);
  ck_assert_int_eq(ld_ids_spec_parse("zipf:0", &spec), -1);
  ck_assert_int_eq(ld_ids_spec_parse("zipf:x", &spec), -1);
  ck_assert_int_eq(ld_ids_spec_parse("random", &spec), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("loadtest_idgen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_zipf_distribution);
  tcase_add_test(tc, test_zipf_edges);
  tcase_add_test(tc, test_perm_bijective);
  tcase_add_test(tc, test_uniform_and_sequential);
  tcase_add_test(tc, test_reproducible);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
