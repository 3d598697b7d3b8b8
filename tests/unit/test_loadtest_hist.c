/* lanced-load's latency histogram: bucket mapping bounds the relative error, percentiles
 * match exact order statistics within that error, merging equals recording everything in
 * one histogram. Includes the source so the internals are tested without a library. */
#include <check.h>
#include "support/support.h"
#include <stdbool.h>
#include <stdlib.h>
#include "../../loadtest/hist.c"

START_TEST(test_bucket_mapping) {
  uint32_t prev = 0;
  uint64_t bad = 0, first_bad = 0;
  /* Hot loops count and assert once: every ck_assert reports to the parent process. */
  for (uint64_t v = 0; v < (UINT64_C(1) << 36); v = v < 5000 ? v + 1 : v + v / 997 + 1) {
    uint32_t i = ld_hist_index(v);
    uint64_t hi = ld_hist_bucket_high(i);
    bool ok = i < LD_HIST_NBUCKETS && i >= prev /* monotonic */ && hi >= v &&
              hi - v <= v / 1024 /* relative error bound */ && (v >= 2048 || hi == v) /* exact below 2048 us */;
    if (!ok && !bad++) first_bad = v;
    prev = i;
  }
  ck_assert_msg(bad == 0, "%llu bad values, first %llu", (unsigned long long)bad, (unsigned long long)first_bad);
  ck_assert_uint_eq(ld_hist_index(LD_HIST_MAX_VALUE), LD_HIST_NBUCKETS - 1);
  ck_assert_uint_eq(ld_hist_index(UINT64_MAX), LD_HIST_NBUCKETS - 1); /* clamped */
  /* Bucket high values are contiguous: high(i) + 1 starts bucket i + 1. */
  bad = 0;
  for (uint32_t i = 0; i + 1 < LD_HIST_NBUCKETS; i++) bad += ld_hist_index(ld_hist_bucket_high(i) + 1) != i + 1;
  ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_percentiles_uniform) {
  ld_hist *h = ld_hist_new();
  for (uint64_t v = 1; v <= 100000; v++) ld_hist_record(h, v);
  ck_assert_uint_eq(h->total, 100000);
  ck_assert_uint_eq(h->min, 1);
  ck_assert_uint_eq(ld_hist_percentile(h, 100), 100000);
  const double ps[] = {50, 90, 99, 99.9};
  for (int i = 0; i < 4; i++) {
    double exact = ps[i] * 1000;
    double got = (double)ld_hist_percentile(h, ps[i]);
    ck_assert_msg(got >= exact && got <= exact * (1 + 1.0 / 1024) + 1, "p%g: %g vs %g", ps[i], got, exact);
  }
  ck_assert_uint_eq(ld_hist_percentile(h, 0), 1);
  ck_assert(ld_hist_mean(h) > 50000 && ld_hist_mean(h) < 50001);
  ck_assert(ld_hist_stddev(h) > 28860 && ld_hist_stddev(h) < 28870);
  ld_hist_free(h);
}
END_TEST

START_TEST(test_percentiles_small_and_skewed) {
  ld_hist *h = ld_hist_new();
  ck_assert_uint_eq(ld_hist_percentile(h, 99), 0); /* empty */
  ld_hist_record_n(h, 100, 990);
  ld_hist_record_n(h, 5000000, 10); /* 1 % stalls of 5 s */
  ck_assert_uint_eq(ld_hist_percentile(h, 50), 100);
  ck_assert_uint_eq(ld_hist_percentile(h, 99), 100);       /* the 990th sample */
  ck_assert_uint_eq(ld_hist_percentile(h, 99.1), 5000000); /* capped at the exact max */
  ck_assert_uint_eq(ld_hist_percentile(h, 100), 5000000);
  ld_hist_reset(h);
  ld_hist_record(h, 7);
  ck_assert_uint_eq(ld_hist_percentile(h, 1), 7);
  ck_assert_uint_eq(ld_hist_percentile(h, 99.9), 7);
  ld_hist_free(h);
}
END_TEST

START_TEST(test_merge) {
  ld_hist *a = ld_hist_new(), *b = ld_hist_new(), *all = ld_hist_new();
  uint64_t x = 12345;
  for (int i = 0; i < 50000; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t v = (x >> 33) % 3000000;
    ld_hist_record(i & 1 ? a : b, v);
    ld_hist_record(all, v);
  }
  ld_hist_merge(a, b);
  ck_assert_uint_eq(a->total, all->total);
  ck_assert_uint_eq(a->min, all->min);
  ck_assert_uint_eq(a->max, all->max);
  ck_assert_int_eq(memcmp(a->counts, all->counts, sizeof a->counts), 0);
  ck_assert_uint_eq(ld_hist_percentile(a, 99.9), ld_hist_percentile(all, 99.9));
  ld_hist_free(a);
  ld_hist_free(b);
  ld_hist_free(all);
}
END_TEST

int main(void) {
  Suite *s = suite_create("loadtest_hist");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_bucket_mapping);
  tcase_add_test(tc, test_percentiles_uniform);
  tcase_add_test(tc, test_percentiles_small_and_skewed);
  tcase_add_test(tc, test_merge);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
