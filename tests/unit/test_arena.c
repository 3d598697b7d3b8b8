/* Unit tests for lib/util/arena.c: alignment, growth past a block, the limit, reset, and a
 * lent first block (lnc_arena_init_buf): used in place, never freed, kept by reset, and a
 * request that outgrows it continues in malloc'd blocks. Run under ASan by `make asan`, where
 * freeing the lent (stack) block or writing past a block fails the run. */
#include "util/arena.h"
#include <check.h>
#include "support/support.h"
#include <stdint.h>
#include <string.h>

static bool inside(const void *p, const void *buf, size_t size) {
  return (const unsigned char *)p >= (const unsigned char *)buf &&
         (const unsigned char *)p < (const unsigned char *)buf + size;
}

START_TEST(test_plain) {
  struct lnc_arena a;
  lnc_arena_init(&a, 0);
  unsigned char *p = lnc_arena_alloc(&a, 3), *q = lnc_arena_alloc(&a, 1);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq((uintptr_t)p % 16, 0);
  ck_assert_uint_eq((uintptr_t)q % 16, 0);
  ck_assert_ptr_eq(q, p + 16);
  unsigned char *big = lnc_arena_alloc(&a, 200000); /* past the 64 KiB first block */
  ck_assert_ptr_nonnull(big);
  memset(big, 0xab, 200000);
  ck_assert_uint_ge(a.total, 200000);
  lnc_arena_reset(&a);
  ck_assert_ptr_nonnull(a.head);
  ck_assert_ptr_eq(lnc_arena_alloc(&a, 8), big); /* the newest block is kept and reused */
  lnc_arena_free(&a);
  ck_assert_ptr_null(a.head);
  ck_assert_uint_eq(a.total, 0);
}
END_TEST

START_TEST(test_limit) {
  struct lnc_arena a;
  lnc_arena_init(&a, 100000);
  ck_assert_ptr_nonnull(lnc_arena_alloc(&a, 1000));
  ck_assert_ptr_null(lnc_arena_alloc(&a, 200000));
  ck_assert_ptr_null(lnc_arena_calloc(&a, SIZE_MAX / 2, 4)); /* count * size overflows */
  lnc_arena_free(&a);
}
END_TEST

/* A size that is a wrapped product fails: rounding it up to 16 wrapped to a 16-byte block,
 * which a decoder then wrote its whole output into. */
START_TEST(test_wrapped_size) {
  _Alignas(16) unsigned char buf[4096];
  struct lnc_arena a;
  lnc_arena_init_buf(&a, 0, buf, sizeof buf);
  ck_assert_ptr_null(lnc_arena_alloc(&a, SIZE_MAX));
  ck_assert_ptr_null(lnc_arena_alloc(&a, SIZE_MAX - 14));
  ck_assert_ptr_nonnull(lnc_arena_alloc(&a, 16));
  lnc_arena_free(&a);
}
END_TEST

START_TEST(test_lent_block) {
  _Alignas(16) unsigned char buf[1024 + 8];
  struct lnc_arena a;
  /* Misaligned on purpose: the block starts at the next 16-byte boundary. */
  lnc_arena_init_buf(&a, 0, buf + 8, 1024);
  unsigned char *p = lnc_arena_alloc(&a, 100), *q = lnc_arena_alloc(&a, 100);
  ck_assert(inside(p, buf, sizeof buf) && inside(q, buf, sizeof buf));
  ck_assert_uint_eq((uintptr_t)p % 16, 0);
  ck_assert_uint_eq(a.total, 0);                /* lent bytes are not counted */
  unsigned char *r = lnc_arena_alloc(&a, 2000); /* does not fit: a malloc'd block */
  ck_assert_ptr_nonnull(r);
  ck_assert(!inside(r, buf, sizeof buf));
  memset(r, 1, 2000);
  ck_assert_uint_ge(a.total, 64 * 1024); /* the first malloc'd block is full size, not 2 KiB */
  /* Reset keeps only the lent block: the next allocation is back on the stack. */
  lnc_arena_reset(&a);
  ck_assert_uint_eq(a.total, 0);
  unsigned char *s = lnc_arena_alloc(&a, 16);
  ck_assert(inside(s, buf, sizeof buf));
  /* Free must not free the lent block (ASan would report it); the arena is empty after. */
  lnc_arena_alloc(&a, 5000);
  lnc_arena_free(&a);
  ck_assert_ptr_null(a.head);
  ck_assert_uint_eq(a.total, 0);
}
END_TEST

START_TEST(test_lent_too_small) {
  unsigned char buf[24];
  struct lnc_arena a;
  lnc_arena_init_buf(&a, 0, buf, sizeof buf); /* no room for a header and an allocation */
  ck_assert_ptr_null(a.head);
  unsigned char *p = lnc_arena_alloc(&a, 8);
  ck_assert_ptr_nonnull(p);
  ck_assert(!inside(p, buf, sizeof buf));
  lnc_arena_free(&a);
  lnc_arena_init_buf(&a, 0, NULL, 4096);
  ck_assert_ptr_null(a.head);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("arena");
  TCase *tc = tcase_create("arena");
  tcase_add_test(tc, test_plain);
  tcase_add_test(tc, test_limit);
  tcase_add_test(tc, test_lent_block);
  tcase_add_test(tc, test_wrapped_size);
  tcase_add_test(tc, test_lent_too_small);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
