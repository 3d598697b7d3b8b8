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

static bool bit_at(const uint8_t *bm, uint64_t i) { return (bm[i >> 3] >> (i & 7)) & 1; }

/* fixed_size_list<fixed_size_list<int8, 3>, 2>: validity of the inner lists (level 0, two a
 * value) and of the items (level 1, six a value) kept apart, each at its own width. */
START_TEST(test_nested_item_validity) {
  struct lnc_valbuf v;
  ck_assert_int_eq(lnc_valbuf_init(&v, LNC_VALUES_FIXED, 8, 6), 0);
  const uint64_t per_value[] = {2, 6};
  ck_assert_int_eq(lnc_valbuf_set_fsl(&v, 2, per_value), 0);
  uint8_t *items;
  struct lnc_values src = fixed_src(2, 8, 6, &items);
  /* value 0: its inner list 1 null; value 1: its last item (source item 11) null */
  const uint8_t lists[] = {0x0d}, vals[] = {0xff, 0x07 | 0x10};
  src.n_item_validity = 2;
  src.item_validity[0] = lists;
  src.item_validity_level[0] = 0;
  src.item_validity_per_value[0] = 2;
  src.item_validity[1] = vals;
  src.item_validity_level[1] = 1;
  src.item_validity_per_value[1] = 6;
  ck_assert_int_eq(lnc_valbuf_append(&v, &src, 1), 0);
  ck_assert_int_eq(lnc_valbuf_append_null(&v), 0);
  ck_assert_int_eq(lnc_valbuf_append(&v, &src, 0), 0);
  ck_assert_uint_eq(v.n, 3);
  ck_assert(lnc_valbuf_has_item_validity(&v));
  /* level 0: value 1's lists (bits 2,3 of the source: valid), the null's, value 0's (1, 0) */
  const bool want0[] = {1, 1, 1, 1, 1, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(bit_at(v.item_valid[0], i), want0[i]);
  /* level 1: value 1's items are source items 6..11 (bits 6, 7 of byte 0, then bits 0..3 of
   * byte 1: 1,1,1,0), then the null's six, valid, then value 0's, valid */
  const bool want1[] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int i = 0; i < 18; i++) ck_assert_msg(bit_at(v.item_valid[1], i) == want1[i], "item %d", i);
  /* the items themselves, at the buffer's width: value 1's six bytes first */
  ck_assert_mem_eq(v.data, items + 6, 6);
  free(items);
  lnc_valbuf_free(&v);
}
END_TEST

/* A page whose lists are not the schema's (a layer of another width or level) is corrupt and
 * appends nothing; a shape that is not nested lists is the caller's error. */
START_TEST(test_nested_shape_checked) {
  struct lnc_valbuf v;
  ck_assert_int_eq(lnc_valbuf_init(&v, LNC_VALUES_FIXED, 8, 6), 0);
  const uint64_t bad_last[] = {2, 4}, shrinking[] = {6, 2}, per_value[] = {2, 6};
  ck_assert_int_eq(lnc_valbuf_set_fsl(&v, 2, bad_last), LNC_EINTERNAL);
  ck_assert_int_eq(lnc_valbuf_set_fsl(&v, 0, per_value), LNC_EINTERNAL);
  ck_assert_int_eq(lnc_valbuf_set_fsl(&v, 2, shrinking), LNC_EINTERNAL);
  ck_assert_int_eq(lnc_valbuf_set_fsl(&v, 2, per_value), 0);
  uint8_t *items;
  struct lnc_values src = fixed_src(1, 8, 6, &items);
  const uint8_t ones[] = {0xff};
  src.n_item_validity = 1;
  src.item_validity[0] = ones;
  src.item_validity_level[0] = 0;
  src.item_validity_per_value[0] = 3; /* level 0 holds 2 a value */
  ck_assert_int_eq(lnc_valbuf_append(&v, &src, 0), LNC_ECORRUPT);
  src.item_validity_level[0] = 2; /* no such level */
  src.item_validity_per_value[0] = 6;
  ck_assert_int_eq(lnc_valbuf_append(&v, &src, 0), LNC_ECORRUPT);
  ck_assert_uint_eq(v.n, 0);
  ck_assert(!lnc_valbuf_has_item_validity(&v));
  free(items);
  lnc_valbuf_free(&v);
}
END_TEST

/* Copying a range (a permutation, a dataset's fragments) keeps every level's validity. */
START_TEST(test_nested_range_copy) {
  struct lnc_valbuf a, b = {0};
  ck_assert_int_eq(lnc_valbuf_init(&a, LNC_VALUES_FIXED, 16, 4), 0);
  const uint64_t per_value[] = {2, 4};
  ck_assert_int_eq(lnc_valbuf_set_fsl(&a, 2, per_value), 0);
  uint8_t *items;
  struct lnc_values src = fixed_src(2, 16, 4, &items);
  const uint8_t lists[] = {0x0b}, vals[] = {0xef}; /* list 2 null; item 4 null */
  src.n_item_validity = 2;
  src.item_validity[0] = lists, src.item_validity_level[0] = 0, src.item_validity_per_value[0] = 2;
  src.item_validity[1] = vals, src.item_validity_level[1] = 1, src.item_validity_per_value[1] = 4;
  ck_assert_int_eq(lnc_valbuf_append(&a, &src, 0), 0);
  ck_assert_int_eq(lnc_valbuf_append(&a, &src, 1), 0);
  ck_assert_int_eq(lnc_valbuf_append_range(&b, &a, 1, 1), 0);
  ck_assert_uint_eq(b.fsl_levels, 2);
  ck_assert_uint_eq(b.n, 1);
  ck_assert(b.item_valid[0] && b.item_valid[1]);
  ck_assert_int_eq(bit_at(b.item_valid[0], 0), 0); /* source list 2 */
  ck_assert_int_eq(bit_at(b.item_valid[0], 1), 1);
  ck_assert_int_eq(bit_at(b.item_valid[1], 0), 0); /* source item 4 */
  for (int i = 1; i < 4; i++) ck_assert_int_eq(bit_at(b.item_valid[1], i), 1);
  ck_assert_mem_eq(b.data, items + 8, 8);
  free(items);
  lnc_valbuf_free(&a);
  lnc_valbuf_free(&b);
}
END_TEST

/* fixed_size_list<null, 3>: values of no bits, only item validity. The copy wrote zero bytes
 * through a buffer never allocated (memset of NULL: UBSan in `make asan`, found by
 * schema-fuzz.mjs). */
START_TEST(test_null_items) {
  struct lnc_valbuf v;
  ck_assert_int_eq(lnc_valbuf_init(&v, LNC_VALUES_FIXED, 0, 3), 0);
  struct lnc_values src = {.kind = LNC_VALUES_FIXED, .n = 2, .bits = 0, .fsl_dim = 3};
  ck_assert_int_eq(lnc_valbuf_append(&v, &src, 1), 0);
  ck_assert_int_eq(lnc_valbuf_append_null(&v), 0);
  ck_assert_uint_eq(v.n, 2);
  ck_assert_uint_eq(v.data_len, 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(bit_at(v.item_valid[0], i), 0); /* the items: null */
  for (int i = 3; i < 6; i++) ck_assert_int_eq(bit_at(v.item_valid[0], i), 1); /* a null row's slots */
  lnc_valbuf_free(&v);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("stream");
  TCase *tc = tcase_create("valbuf");
  tcase_add_test(tc, test_fixed_width_checked);
  tcase_add_test(tc, test_bit_width_checked);
  tcase_add_test(tc, test_nested_item_validity);
  tcase_add_test(tc, test_nested_shape_checked);
  tcase_add_test(tc, test_nested_range_copy);
  tcase_add_test(tc, test_null_items);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
