/* Unit tests for lib/layout/stream.c's value buffers: fixed values are copied at the buffer's
 * width (bits x items per value), and a source value narrower than that — a corrupt page whose
 * value width disagrees with the schema — is refused, never read past its end (ASan, in
 * `make asan`, fails the over-read the check prevents; fuzz_file found it in a full-zip page). */
#include "layout/stream.h"
#include "lance.h"
#include <check.h>
#include "support/support.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A fixed source of n values of `bits` x dim items, in a heap block of exactly its bytes. */
static struct lnc_values fixed_src(uint64_t n, uint32_t bits, uint64_t dim, uint8_t **block) {
  size_t len = (size_t)((n * bits * (dim ? dim : 1) + 7) / 8);
  *block = malloc(len ? len : 1);
  for (size_t k = 0; k < len; k++) (*block)[k] = (uint8_t)(k * 7 + 1);
  return (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = n, .bits = bits, .fsl_dim = dim, .data = *block, .data_len = len};
}

START_TEST(test_fixed_width_checked) {
  struct lnc_valbuf v;
  ck_assert_int_eq(lnc_valbuf_init(&v, LNC_VALUES_FIXED, 32, 4), 0); /* fixed_size_list<int32, 4> */
  uint8_t *wide, *narrow;
  struct lnc_values ok = fixed_src(3, 32, 4, &wide), bad = fixed_src(3, 32, 0, &narrow);
  ck_assert_int_eq(lnc_valbuf_append(&v, &ok, 2), 0);
  ck_assert_uint_eq(v.data_len, 16);
  ck_assert_mem_eq(v.data, wide + 32, 16);
  /* Three 4-byte values: value 0 has 4 of the 16 bytes a slot takes. */
  ck_assert_int_eq(lnc_valbuf_append(&v, &bad, 0), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_valbuf_append(&v, &bad, 2), LNC_ECORRUPT);
  ck_assert_uint_eq(v.n, 1); /* nothing appended by the refusals */
  ck_assert_uint_eq(v.data_len, 16);
  /* Past the source's count is refused as before. */
  ck_assert_int_eq(lnc_valbuf_append(&v, &ok, 3), LNC_ECORRUPT);
  free(wide);
  free(narrow);
  lnc_valbuf_free(&v);
}
END_TEST

START_TEST(test_bit_width_checked) {
  struct lnc_valbuf v;
  ck_assert_int_eq(lnc_valbuf_init(&v, LNC_VALUES_FIXED, 1, 16), 0); /* 16 booleans a value */
  uint8_t *ok_b;
  struct lnc_values ok = fixed_src(2, 1, 16, &ok_b); /* 4 bytes */
  struct lnc_values shorter = ok;
  shorter.data_len = 3; /* value 1 needs bits 16..31 */
  ck_assert_int_eq(lnc_valbuf_append(&v, &ok, 1), 0);
  ck_assert_mem_eq(v.data, ok_b + 2, 2);
  ck_assert_int_eq(lnc_valbuf_append(&v, &shorter, 1), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_valbuf_append(&v, &shorter, 0), 0);
  free(ok_b);
  lnc_valbuf_free(&v);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("stream");
  TCase *tc = tcase_create("valbuf");
  tcase_add_test(tc, test_fixed_width_checked);
  tcase_add_test(tc, test_bit_width_checked);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
