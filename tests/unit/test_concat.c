/* Unit tests for lib/arrow/concat.c: concat and gather over hand-built C Data arrays of every
 * supported layout (fixed width, bool, var-width, large var-width, fixed binary, list, large
 * list, fixed-size list, struct) with offsets and validity at each level; results are checked
 * through lnc_encode_json so each case is one readable string. */
#include "lance.h"
#include "arrow/concat.h"
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include <string.h>

static void noop_release(struct ArrowArray *a) { a->release = NULL; }

/* A borrowed array over static buffers (release is a no-op). */
static struct ArrowArray arr(int64_t len, int64_t off, int64_t nulls, int nb, const void *b0,
                             const void *b1, const void *b2, int nk, struct ArrowArray **kids) {
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  const void **bufs = calloc(3, sizeof *bufs);
  bufs[0] = b0;
  bufs[1] = b1;
  bufs[2] = b2;
  a.length = len;
  a.offset = off;
  a.null_count = nulls;
  a.n_buffers = nb;
  a.buffers = bufs;
  a.n_children = nk;
  a.children = kids;
  a.release = noop_release;
  return a;
}

static void free_arr(struct ArrowArray *a) { free((void *)a->buffers); }

static struct ArrowSchema sch(const char *fmt, const char *name, int nk, struct ArrowSchema **kids) {
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  s.format = fmt;
  s.name = name;
  s.flags = ARROW_FLAG_NULLABLE;
  s.n_children = nk;
  s.children = kids;
  return s;
}

/* Wraps one column (schema copied, array moved) as {"c": ...} and encodes it as JSON. */
static char *json_of(const struct ArrowSchema *col, struct ArrowArray *out) {
  struct ArrowSchema cs, ts;
  struct ArrowArray ta;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_arrow_schema_copy(col, &cs, &err), 0);
  int64_t len = out->length;
  ck_assert_int_eq(lnc_arrow_struct_wrap(1, &cs, out, len, &ts, &ta, &err), 0);
  char *s = tsup_json(&ts, &ta);
  ta.release(&ta);
  ts.release(&ts);
  /* keep only the rows array for short expectations */
  char *r = strstr(s, "\"rows\":");
  char *o = strdup(r + 7);
  o[strlen(o) - 1] = 0;
  free(s);
  return o;
}

#define EXPECT(col, out, want)                                                                 \
  do {                                                                                         \
    char *got_ = json_of((col), (out));                                                        \
    ck_assert_str_eq(got_, (want));                                                            \
    free(got_);                                                                                \
  } while (0)

START_TEST(test_int_concat_gather) {
  static const int32_t v1[] = {1, 2, 3, 4}, v2[] = {10, 20};
  static const uint8_t val1[] = {0x0b}; /* 1,1,0,1 */
  struct ArrowSchema s = sch("i", "c", 0, NULL);
  struct ArrowArray a = arr(3, 1, 1, 2, val1, v1, NULL, 0, NULL); /* 2, null, 4 */
  struct ArrowArray b = arr(2, 0, 0, 2, NULL, v2, NULL, 0, NULL);
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_arrow_concat(&s, parts, 2, &out, &err), 0);
  ck_assert_int_eq(out.length, 5);
  ck_assert_int_eq(out.null_count, 1);
  EXPECT(&s, &out, "[{\"c\":2},{\"c\":null},{\"c\":4},{\"c\":10},{\"c\":20}]");
  struct lnc_row_ref refs[] = {{1, 1}, {0, 1}, {0, 0}, {1, 1}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 4, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":20},{\"c\":null},{\"c\":2},{\"c\":20}]");
  uint64_t idx[] = {2, 2, 0};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 3, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":4},{\"c\":4},{\"c\":2}]");
  /* bounds */
  struct lnc_row_ref bad[] = {{0, 3}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, bad, 1, &out, &err), LNC_EINVAL);
  struct lnc_row_ref bad2[] = {{2, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, bad2, 1, &out, &err), LNC_EINVAL);
  free_arr(&a);
  free_arr(&b);
}
END_TEST

START_TEST(test_bool_and_fixed) {
  static const uint8_t bits[] = {0x05}; /* t f t f ... */
  struct ArrowSchema s = sch("b", "c", 0, NULL);
  struct ArrowArray a = arr(3, 1, 0, 2, NULL, bits, NULL, 0, NULL); /* f t f */
  const struct ArrowArray *parts[] = {&a};
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {1, 0, 2, 1};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 4, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":true},{\"c\":false},{\"c\":false},{\"c\":true}]");
  (void)parts;
  free_arr(&a);

  static const double d[] = {1.5, -2, 3};
  struct ArrowSchema sd = sch("g", "c", 0, NULL);
  struct ArrowArray ad = arr(3, 0, 0, 2, NULL, d, NULL, 0, NULL);
  uint64_t idx2[] = {2, 0};
  ck_assert_int_eq(lnc_arrow_gather(&sd, &ad, idx2, 2, &out, &err), 0);
  EXPECT(&sd, &out, "[{\"c\":3},{\"c\":1.5}]");
  free_arr(&ad);

  static const uint8_t fb[] = "abcdefghi";
  struct ArrowSchema sf = sch("w:3", "c", 0, NULL);
  struct ArrowArray af = arr(2, 1, 0, 2, NULL, fb, NULL, 0, NULL); /* def, ghi */
  uint64_t idx3[] = {1, 0};
  ck_assert_int_eq(lnc_arrow_gather(&sf, &af, idx3, 2, &out, &err), 0);
  EXPECT(&sf, &out, "[{\"c\":\"Z2hp\"},{\"c\":\"ZGVm\"}]");
  free_arr(&af);
}
END_TEST

START_TEST(test_strings) {
  static const int32_t o1[] = {0, 1, 3, 3, 6};
  static const char d1[] = "abbccc";
  static const uint8_t val[] = {0x0b}; /* "a","bb",null,"ccc" */
  static const int64_t o2[] = {0, 2, 2};
  static const char d2[] = "xy";
  struct ArrowSchema s = sch("u", "c", 0, NULL);
  struct ArrowArray a = arr(4, 0, 1, 3, val, o1, d1, 0, NULL);
  struct ArrowArray b = arr(3, 1, 0, 3, NULL, o1, d1, 0, NULL); /* "bb","","ccc" */
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  struct lnc_row_ref refs[] = {{0, 3}, {1, 1}, {0, 2}, {1, 0}, {0, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 5, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":\"ccc\"},{\"c\":\"\"},{\"c\":null},{\"c\":\"bb\"},{\"c\":\"a\"}]");
  struct ArrowSchema sl = sch("U", "c", 0, NULL);
  struct ArrowArray l = arr(2, 0, 0, 3, NULL, o2, d2, 0, NULL);
  const struct ArrowArray *lp[] = {&l, &l};
  ck_assert_int_eq(lnc_arrow_concat(&sl, lp, 2, &out, &err), 0);
  EXPECT(&sl, &out, "[{\"c\":\"xy\"},{\"c\":\"\"},{\"c\":\"xy\"},{\"c\":\"\"}]");
  free_arr(&a);
  free_arr(&b);
  free_arr(&l);
}
END_TEST

START_TEST(test_lists) {
  static const int32_t items[] = {1, 2, 3, 4, 5, 6};
  static const uint8_t ival[] = {0x3d}; /* item 1 (value 2) null */
  static const int32_t offs[] = {0, 2, 2, 3, 6};
  static const int64_t loffs[] = {0, 2, 2, 3, 6};
  static const uint8_t lval[] = {0x0d}; /* list 1 null */
  struct ArrowSchema item = sch("i", "item", 0, NULL);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema s = sch("+l", "c", 1, ik);
  struct ArrowArray child = arr(6, 0, 1, 2, ival, items, NULL, 0, NULL);
  struct ArrowArray *ck[] = {&child};
  struct ArrowArray a = arr(3, 1, 1, 2, lval, offs, NULL, 1, ck); /* null, [3], [4,5,6] */
  struct ArrowArray b = arr(4, 0, 1, 2, lval, offs, NULL, 1, ck); /* [1,null], null, [3], [4,5,6] */
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  struct lnc_row_ref refs[] = {{0, 2}, {1, 0}, {0, 0}, {1, 2}, {1, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 5, &out, &err), 0);
  EXPECT(&s, &out,
         "[{\"c\":[4,5,6]},{\"c\":[1,null]},{\"c\":null},{\"c\":[3]},{\"c\":[1,null]}]");
  struct ArrowSchema sL = sch("+L", "c", 1, ik);
  struct ArrowArray la = arr(4, 0, 1, 2, lval, loffs, NULL, 1, ck);
  uint64_t idx[] = {3, 1};
  ck_assert_int_eq(lnc_arrow_gather(&sL, &la, idx, 2, &out, &err), 0);
  EXPECT(&sL, &out, "[{\"c\":[4,5,6]},{\"c\":null}]");
  /* fixed-size list of 2: rows [1,null],[3,4],[5,6] */
  struct ArrowSchema sF = sch("+w:2", "c", 1, ik);
  struct ArrowArray fa = arr(2, 1, 0, 1, NULL, NULL, NULL, 1, ck); /* [3,4],[5,6] */
  uint64_t idx2[] = {1, 0, 1};
  ck_assert_int_eq(lnc_arrow_gather(&sF, &fa, idx2, 3, &out, &err), 0);
  EXPECT(&sF, &out, "[{\"c\":[5,6]},{\"c\":[3,4]},{\"c\":[5,6]}]");
  free_arr(&child);
  free_arr(&a);
  free_arr(&b);
  free_arr(&la);
  free_arr(&fa);
}
END_TEST

START_TEST(test_struct_and_nulls) {
  static const int64_t x[] = {7, 8, 9};
  static const int32_t o[] = {0, 1, 2, 3};
  static const char d[] = "pqr";
  static const uint8_t sval[] = {0x05}; /* struct row 1 null */
  struct ArrowSchema fx = sch("l", "x", 0, NULL), fy = sch("u", "y", 0, NULL);
  struct ArrowSchema *fk[] = {&fx, &fy};
  struct ArrowSchema s = sch("+s", "c", 2, fk);
  struct ArrowArray cx = arr(3, 0, 0, 2, NULL, x, NULL, 0, NULL);
  struct ArrowArray cy = arr(3, 0, 0, 3, NULL, o, d, 0, NULL);
  struct ArrowArray *ck[] = {&cx, &cy};
  struct ArrowArray a = arr(2, 1, 1, 1, sval, NULL, NULL, 2, ck); /* null, {9,"r"} */
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {1, 0, 1};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 3, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":{\"x\":9,\"y\":\"r\"}},{\"c\":null},{\"c\":{\"x\":9,\"y\":\"r\"}}]");
  ck_assert_int_eq(lnc_arrow_make_nulls(&s, 2, &out, &err), 0);
  ck_assert_int_eq(out.null_count, 2);
  EXPECT(&s, &out, "[{\"c\":null},{\"c\":null}]");
  struct ArrowSchema item = sch("i", "item", 0, NULL);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema sl = sch("+l", "c", 1, ik);
  ck_assert_int_eq(lnc_arrow_make_nulls(&sl, 1, &out, &err), 0);
  EXPECT(&sl, &out, "[{\"c\":null}]");
  ck_assert_int_eq(lnc_arrow_make_nulls(&fy, 0, &out, &err), 0);
  ck_assert_int_eq(out.length, 0);
  out.release(&out);
  /* empty gathers keep the type */
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, NULL, 0, &out, &err), 0);
  ck_assert_int_eq(out.length, 0);
  ck_assert_int_eq(out.n_children, 2);
  out.release(&out);
  free_arr(&cx);
  free_arr(&cy);
  free_arr(&a);
}
END_TEST

START_TEST(test_errors) {
  static const int32_t v[] = {1, 2};
  struct ArrowSchema s = sch("i", "c", 0, NULL);
  struct ArrowArray a = arr(2, 0, 0, 3, NULL, v, NULL, 0, NULL); /* wrong buffer count */
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {0};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 1, &out, &err), LNC_EINVAL);
  ck_assert_msg(strstr(err.message, "buffers"), "%s", err.message);
  free_arr(&a);
  struct ArrowSchema dict = sch("u", NULL, 0, NULL);
  struct ArrowSchema sd = sch("i", "c", 0, NULL);
  sd.dictionary = &dict;
  struct ArrowArray b = arr(2, 0, 0, 2, NULL, v, NULL, 0, NULL);
  ck_assert_int_eq(lnc_arrow_gather(&sd, &b, idx, 1, &out, &err), LNC_EUNSUPPORTED);
  struct ArrowSchema su = sch("+ud:0,1", "c", 0, NULL);
  ck_assert_int_eq(lnc_arrow_gather(&su, &b, idx, 1, &out, &err), LNC_EUNSUPPORTED);
  free_arr(&b);
}
END_TEST

START_TEST(test_schema_copy_metadata) {
  /* metadata: 1 pair "k" -> "vv" */
  static const char md[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', 'v'};
  struct ArrowSchema item = sch("i", "item", 0, NULL);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema s = sch("+l", "c", 1, ik);
  s.metadata = md;
  struct ArrowSchema c;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_arrow_schema_copy(&s, &c, &err), 0);
  ck_assert_str_eq(c.format, "+l");
  ck_assert_str_eq(c.children[0]->name, "item");
  ck_assert_int_eq(memcmp(c.metadata, md, sizeof md), 0);
  ck_assert_int_eq(c.flags, ARROW_FLAG_NULLABLE);
  c.release(&c);
  ck_assert_ptr_null(c.release);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("concat");
  TCase *tc = tcase_create("gather");
  tcase_add_test(tc, test_int_concat_gather);
  tcase_add_test(tc, test_bool_and_fixed);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_lists);
  tcase_add_test(tc, test_struct_and_nulls);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_schema_copy_metadata);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
