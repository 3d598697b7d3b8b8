/* Unit tests for lib/arrow/concat.c: concat and gather over hand-built C Data arrays of every
 * supported layout (fixed width, bool, var-width, large var-width, fixed binary, list, large
 * list, fixed-size list, struct) with offsets and validity at each level; results are checked
 * through lnc_encode_json so each case is one readable string. */
#include "lance.h"
#include "arrow/concat.h"
#include "arrow/format.h"
#include "arrow_build.h"
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include <string.h>

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

#define EXPECT(col, out, want)          \
  do {                                  \
    char *got_ = json_of((col), (out)); \
    ck_assert_str_eq(got_, (want));     \
    free(got_);                         \
  } while (0)

START_TEST(test_int_concat_gather) {
  static const int32_t v1[] = {1, 2, 3, 4}, v2[] = {10, 20};
  static const uint8_t val1[] = {0x0b}; /* 1,1,0,1 */
  struct ArrowSchema s = *tb_schema("i", "c", 0);
  struct ArrowArray a = *tb_array(3, 1, 1, 2, val1, v1, NULL, 0); /* 2, null, 4 */
  struct ArrowArray b = *tb_array(2, 0, 0, 2, NULL, v2, NULL, 0);
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_arrow_concat(&s, parts, 2, &out, &err), 0);
  ck_assert_int_eq(out.length, 5);
  ck_assert_int_eq(out.null_count, 1);
  EXPECT(&s, &out, "[{\"c\":2},{\"c\":null},{\"c\":4},{\"c\":10},{\"c\":20}]");
  struct lnc_row_ref refs[] = {
      {1, 1},
      {0, 1},
      {0, 0},
      {1, 1}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 4, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":20},{\"c\":null},{\"c\":2},{\"c\":20}]");
  uint64_t idx[] = {2, 2, 0};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 3, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":4},{\"c\":4},{\"c\":2}]");
  /* bounds */
  struct lnc_row_ref bad[] = {
      {0, 3}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, bad, 1, &out, &err), LNC_EINVAL);
  struct lnc_row_ref bad2[] = {
      {2, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, bad2, 1, &out, &err), LNC_EINVAL);
}
END_TEST

START_TEST(test_bool_and_fixed) {
  static const uint8_t bits[] = {0x05}; /* t f t f ... */
  struct ArrowSchema s = *tb_schema("b", "c", 0);
  struct ArrowArray a = *tb_array(3, 0, 1, 2, NULL, bits, NULL, 0); /* f t f */
  const struct ArrowArray *parts[] = {&a};
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {1, 0, 2, 1};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 4, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":true},{\"c\":false},{\"c\":false},{\"c\":true}]");
  (void)parts;

  static const double d[] = {1.5, -2, 3};
  struct ArrowSchema sd = *tb_schema("g", "c", 0);
  struct ArrowArray ad = *tb_array(3, 0, 0, 2, NULL, d, NULL, 0);
  uint64_t idx2[] = {2, 0};
  ck_assert_int_eq(lnc_arrow_gather(&sd, &ad, idx2, 2, &out, &err), 0);
  EXPECT(&sd, &out, "[{\"c\":3},{\"c\":1.5}]");

  static const uint8_t fb[] = "abcdefghi";
  struct ArrowSchema sf = *tb_schema("w:3", "c", 0);
  struct ArrowArray af = *tb_array(2, 0, 1, 2, NULL, fb, NULL, 0); /* def, ghi */
  uint64_t idx3[] = {1, 0};
  ck_assert_int_eq(lnc_arrow_gather(&sf, &af, idx3, 2, &out, &err), 0);
  EXPECT(&sf, &out, "[{\"c\":\"Z2hp\"},{\"c\":\"ZGVm\"}]");
}
END_TEST

START_TEST(test_strings) {
  static const int32_t o1[] = {0, 1, 3, 3, 6};
  static const char d1[] = "abbccc";
  static const uint8_t val[] = {0x0b}; /* "a","bb",null,"ccc" */
  static const int64_t o2[] = {0, 2, 2};
  static const char d2[] = "xy";
  struct ArrowSchema s = *tb_schema("u", "c", 0);
  struct ArrowArray a = *tb_array(4, 1, 0, 3, val, o1, d1, 0);
  struct ArrowArray b = *tb_array(3, 0, 1, 3, NULL, o1, d1, 0); /* "bb","","ccc" */
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  struct lnc_row_ref refs[] = {
      {0, 3},
      {1, 1},
      {0, 2},
      {1, 0},
      {0, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 5, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":\"ccc\"},{\"c\":\"\"},{\"c\":null},{\"c\":\"bb\"},{\"c\":\"a\"}]");
  struct ArrowSchema sl = *tb_schema("U", "c", 0);
  struct ArrowArray l = *tb_array(2, 0, 0, 3, NULL, o2, d2, 0);
  const struct ArrowArray *lp[] = {&l, &l};
  ck_assert_int_eq(lnc_arrow_concat(&sl, lp, 2, &out, &err), 0);
  EXPECT(&sl, &out, "[{\"c\":\"xy\"},{\"c\":\"\"},{\"c\":\"xy\"},{\"c\":\"\"}]");
}
END_TEST

START_TEST(test_lists) {
  static const int32_t items[] = {1, 2, 3, 4, 5, 6};
  static const uint8_t ival[] = {0x3d}; /* item 1 (value 2) null */
  static const int32_t offs[] = {0, 2, 2, 3, 6};
  static const int64_t loffs[] = {0, 2, 2, 3, 6};
  static const uint8_t lval[] = {0x0d}; /* list 1 null */
  struct ArrowSchema item = *tb_schema("i", "item", 0);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema s = *tb_schema("+l", "c", 1, ik[0]);
  struct ArrowArray child = *tb_array(6, 1, 0, 2, ival, items, NULL, 0);
  struct ArrowArray *ck[] = {&child};
  struct ArrowArray a = *tb_array(3, 1, 1, 2, lval, offs, NULL, 1, ck[0]); /* null, [3], [4,5,6] */
  struct ArrowArray b = *tb_array(4, 1, 0, 2, lval, offs, NULL, 1, ck[0]); /* [1,null], null, [3], [4,5,6] */
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  struct lnc_row_ref refs[] = {
      {0, 2},
      {1, 0},
      {0, 0},
      {1, 2},
      {1, 0}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 5, &out, &err), 0);
  EXPECT(&s, &out,
         "[{\"c\":[4,5,6]},{\"c\":[1,null]},{\"c\":null},{\"c\":[3]},{\"c\":[1,null]}]");
  struct ArrowSchema sL = *tb_schema("+L", "c", 1, ik[0]);
  struct ArrowArray la = *tb_array(4, 1, 0, 2, lval, loffs, NULL, 1, ck[0]);
  uint64_t idx[] = {3, 1};
  ck_assert_int_eq(lnc_arrow_gather(&sL, &la, idx, 2, &out, &err), 0);
  EXPECT(&sL, &out, "[{\"c\":[4,5,6]},{\"c\":null}]");
  /* fixed-size list of 2: rows [1,null],[3,4],[5,6] */
  struct ArrowSchema sF = *tb_schema("+w:2", "c", 1, ik[0]);
  struct ArrowArray fa = *tb_array(2, 0, 1, 1, NULL, NULL, NULL, 1, ck[0]); /* [3,4],[5,6] */
  uint64_t idx2[] = {1, 0, 1};
  ck_assert_int_eq(lnc_arrow_gather(&sF, &fa, idx2, 3, &out, &err), 0);
  EXPECT(&sF, &out, "[{\"c\":[5,6]},{\"c\":[3,4]},{\"c\":[5,6]}]");
  /* Across parts, a null item carried in its range (a vector row is copied whole), and a null
   * row (its items are copied too; the row's validity hides them). */
  static const uint8_t fval[] = {0x06};                                     /* rows 1, 2 valid */
  struct ArrowArray f0 = *tb_array(3, 0, 0, 1, NULL, NULL, NULL, 1, ck[0]); /* [1,null],[3,4],[5,6] */
  struct ArrowArray f1 = *tb_array(3, 1, 0, 1, fval, NULL, NULL, 1, ck[0]); /* null,[3,4],[5,6] */
  const struct ArrowArray *fparts[] = {&f0, &f1};
  struct lnc_row_ref frefs[] = {{0, 0}, {1, 2}, {1, 0}, {0, 0}, {1, 1}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&sF, fparts, 2, frefs, 5, &out, &err), 0);
  EXPECT(&sF, &out, "[{\"c\":[1,null]},{\"c\":[5,6]},{\"c\":null},{\"c\":[1,null]},{\"c\":[3,4]}]");
  /* a part whose items do not cover its rows is refused, not read past */
  struct ArrowArray short_child = *tb_array(3, 0, 0, 2, NULL, items, NULL, 0);
  struct ArrowArray *sk[] = {&short_child};
  struct ArrowArray f2 = *tb_array(3, 0, 0, 1, NULL, NULL, NULL, 1, sk[0]); /* 3 rows of 2 need 6 items */
  const struct ArrowArray *bad[] = {&f2};
  struct lnc_row_ref one[] = {{0, 2}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&sF, bad, 1, one, 1, &out, &err), LNC_EINVAL);
}
END_TEST

/* lnc_arrow_row_bytes, the take's bound on an answer: a row's bytes in Arrow's layout and the
 * list items the gather references one by one. Lists of fixed-width items are counted without
 * walking them; the walk and the count must agree, for nested lists, strings and bools too. */
START_TEST(test_row_bytes) {
  static const int32_t items[] = {1, 2, 3, 4, 5, 6};
  static const int64_t items64[] = {1, 2, 3, 4, 5, 6};
  static const uint8_t ival[] = {0x3d}; /* item 1 null: still 4 bytes in the layout */
  static const int32_t offs[] = {0, 2, 2, 3, 6};
  static const uint8_t lval[] = {0x0d}; /* list 1 null */
  struct ArrowSchema item = *tb_schema("i", "item", 0), item64 = *tb_schema("l", "item", 0);
  struct ArrowSchema s = *tb_schema("+l", "c", 1, &item), s64 = *tb_schema("+l", "c", 1, &item64);
  struct ArrowArray child = *tb_array(6, 1, 0, 2, ival, items, NULL, 0);
  struct ArrowArray child64 = *tb_array(6, 0, 0, 2, NULL, items64, NULL, 0);
  struct ArrowArray a = *tb_array(3, 1, 1, 2, lval, offs, NULL, 1, &child); /* null, [3], [4,5,6] */
  struct ArrowArray a64 = *tb_array(4, 1, 0, 2, lval, offs, NULL, 1, &child64);
  uint64_t n = 0;
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s, &a, 0, &n), 4); /* an offset, no items */
  ck_assert_uint_eq(n, 0);
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s, &a, 1, &n), 4 + 4);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s, &a, 2, &n), 4 + 12); /* items add up */
  ck_assert_uint_eq(n, 4);
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s, &a, 3, NULL), 0); /* past the end */
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s64, &a64, 0, NULL), 4 + 16);
  ck_assert_uint_eq(lnc_arrow_row_bytes(&s64, &a64, 3, NULL), 4 + 24);
  /* list<list<int32>>: [[1,null]], [], [[],[3],[4,5,6]] (the inner rows walked, their items counted) */
  static const int32_t outer[] = {0, 1, 1, 4}, inner[] = {0, 2, 2, 3, 6};
  struct ArrowSchema ls = *tb_schema("+l", "item", 1, &item);
  struct ArrowSchema lls = *tb_schema("+l", "c", 1, &ls);
  struct ArrowArray in = *tb_array(4, 0, 0, 2, NULL, inner, NULL, 1, &child);
  struct ArrowArray out = *tb_array(3, 0, 0, 2, NULL, outer, NULL, 1, &in);
  n = 0;
  ck_assert_uint_eq(lnc_arrow_row_bytes(&lls, &out, 0, &n), 4 + 4 + 8);
  ck_assert_uint_eq(n, 1 + 2);
  n = 0;
  ck_assert_uint_eq(lnc_arrow_row_bytes(&lls, &out, 2, &n), 4 + 3 * 4 + 4 * 4);
  ck_assert_uint_eq(n, 3 + 4);
  /* list<utf8> and list<bool> keep their own sizing: strings each with an offset, bits a byte per 8 */
  static const int32_t soffs[] = {0, 1, 3, 6};
  struct ArrowSchema us = *tb_schema("u", "item", 0);
  struct ArrowSchema lus = *tb_schema("+l", "c", 1, &us);
  struct ArrowArray strs = *tb_array(3, 0, 0, 3, NULL, soffs, "abbccc", 0);
  static const int32_t loffs[] = {0, 3};
  struct ArrowArray lu = *tb_array(1, 0, 0, 2, NULL, loffs, NULL, 1, &strs);
  ck_assert_uint_eq(lnc_arrow_row_bytes(&lus, &lu, 0, NULL), 4 + (1 + 4) + (2 + 4) + (3 + 4));
  static const uint8_t bits[] = {0xff, 0xff};
  static const int32_t boffs[] = {0, 16};
  struct ArrowSchema bs = *tb_schema("b", "item", 0);
  struct ArrowSchema lbs = *tb_schema("+l", "c", 1, &bs);
  struct ArrowArray bv = *tb_array(16, 0, 0, 2, NULL, bits, NULL, 0);
  struct ArrowArray lb = *tb_array(1, 0, 0, 2, NULL, boffs, NULL, 1, &bv);
  n = 0;
  ck_assert_uint_eq(lnc_arrow_row_bytes(&lbs, &lb, 0, &n), 4 + 2);
  ck_assert_uint_eq(n, 16);
  /* a fixed-size list of 3 int32: one range, no items referenced */
  struct ArrowSchema fs = *tb_schema("+w:3", "c", 1, &item);
  struct ArrowArray fa = *tb_array(2, 0, 0, 1, NULL, NULL, NULL, 1, &child);
  n = 0;
  ck_assert_uint_eq(lnc_arrow_row_bytes(&fs, &fa, 1, &n), 12);
  ck_assert_uint_eq(n, 0);
  tb_free_all();
}
END_TEST

START_TEST(test_struct_and_nulls) {
  static const int64_t x[] = {7, 8, 9};
  static const int32_t o[] = {0, 1, 2, 3};
  static const char d[] = "pqr";
  static const uint8_t sval[] = {0x05}; /* struct row 1 null */
  struct ArrowSchema fx = *tb_schema("l", "x", 0), fy = *tb_schema("u", "y", 0);
  struct ArrowSchema *fk[] = {&fx, &fy};
  struct ArrowSchema s = *tb_schema("+s", "c", 2, fk[0], fk[1]);
  struct ArrowArray cx = *tb_array(3, 0, 0, 2, NULL, x, NULL, 0);
  struct ArrowArray cy = *tb_array(3, 0, 0, 3, NULL, o, d, 0);
  struct ArrowArray *ck[] = {&cx, &cy};
  struct ArrowArray a = *tb_array(2, 1, 1, 1, sval, NULL, NULL, 2, ck[0], ck[1]); /* null, {9,"r"} */
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {1, 0, 1};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 3, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":{\"x\":9,\"y\":\"r\"}},{\"c\":null},{\"c\":{\"x\":9,\"y\":\"r\"}}]");
  ck_assert_int_eq(lnc_arrow_make_nulls(&s, 2, &out, &err), 0);
  ck_assert_int_eq(out.null_count, 2);
  EXPECT(&s, &out, "[{\"c\":null},{\"c\":null}]");
  struct ArrowSchema item = *tb_schema("i", "item", 0);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema sl = *tb_schema("+l", "c", 1, ik[0]);
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
}
END_TEST

START_TEST(test_errors) {
  static const int32_t v[] = {1, 2};
  struct ArrowSchema s = *tb_schema("i", "c", 0);
  struct ArrowArray a = *tb_array(2, 0, 0, 3, NULL, v, NULL, 0); /* wrong buffer count */
  struct ArrowArray out;
  struct lnc_error err = {0};
  uint64_t idx[] = {0};
  ck_assert_int_eq(lnc_arrow_gather(&s, &a, idx, 1, &out, &err), LNC_EINVAL);
  ck_assert_msg(strstr(err.message, "buffers"), "%s", err.message);
  struct ArrowSchema dict = *tb_schema("u", NULL, 0);
  struct ArrowSchema sd = *tb_schema("i", "c", 0);
  sd.dictionary = &dict;
  struct ArrowArray b = *tb_array(2, 0, 0, 2, NULL, v, NULL, 0); /* indices without a dictionary */
  ck_assert_int_eq(lnc_arrow_gather(&sd, &b, idx, 1, &out, &err), LNC_EINVAL);
  ck_assert_msg(strstr(err.message, "no dictionary"), "%s", err.message);
  struct ArrowSchema su = *tb_schema("+ud:0,1", "c", 0);
  ck_assert_int_eq(lnc_arrow_gather(&su, &b, idx, 1, &out, &err), LNC_EUNSUPPORTED);
}
END_TEST

/* Dictionary-encoded parts with different dictionaries (a dataset's fragments): the result
 * holds the values asked for, nulls kept, under one dictionary of those values. */
START_TEST(test_dictionary_parts) {
  static const int32_t o1[] = {0, 1, 3}, o2[] = {0, 3, 4};
  static const char d1[] = "abb", d2[] = "ccca";
  static const int8_t i1[] = {1, 0, 1}, i2[] = {0, 1};
  static const uint8_t v1[] = {0x03}; /* row 2 null */
  struct ArrowSchema dv = *tb_schema("u", "", 0);
  struct ArrowSchema s = *tb_schema("c", "c", 0);
  s.dictionary = &dv;
  struct ArrowArray da = *tb_array(2, 0, 0, 3, NULL, o1, d1, 0), db = *tb_array(2, 0, 0, 3, NULL, o2, d2, 0);
  struct ArrowArray a = *tb_array(3, 1, 0, 2, v1, i1, NULL, 0), b = *tb_array(2, 0, 0, 2, NULL, i2, NULL, 0);
  a.dictionary = &da;
  b.dictionary = &db;
  const struct ArrowArray *parts[] = {&a, &b};
  struct ArrowArray out;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_arrow_concat(&s, parts, 2, &out, &err), 0);
  ck_assert_int_eq(out.dictionary->length, 3); /* bb, a, ccc: "a" once */
  EXPECT(&s, &out, "[{\"c\":\"bb\"},{\"c\":\"a\"},{\"c\":null},{\"c\":\"ccc\"},{\"c\":\"a\"}]");
  struct lnc_row_ref refs[] = {
      {1, 1},
      {0, 2}};
  ck_assert_int_eq(lnc_arrow_gather_multi(&s, parts, 2, refs, 2, &out, &err), 0);
  EXPECT(&s, &out, "[{\"c\":\"a\"},{\"c\":null}]");
  /* An index past its dictionary is refused, not read. */
  static const int8_t bad[] = {2};
  struct ArrowArray c = *tb_array(1, 0, 0, 2, NULL, bad, NULL, 0);
  c.dictionary = &da;
  ck_assert_int_eq(lnc_arrow_gather(&s, &c, (uint64_t[]){0}, 1, &out, &err), LNC_EINVAL);
}
END_TEST

/* Parts are gathered with the first part's schema, so a dataset take compares the whole type
 * of every part (lnc_arrow_same_type): list<int32> is not list<double>, a dictionary column
 * not its plain twin. */
START_TEST(test_same_type) {
  struct ArrowSchema *li = tb_schema("+l", "c", 1, tb_schema("i", "item", 0));
  struct ArrowSchema *lg = tb_schema("+l", "c", 1, tb_schema("g", "item", 0));
  struct ArrowSchema *li2 = tb_schema("+l", "other", 1, tb_schema("i", "element", 0));
  struct ArrowSchema *st = tb_schema("+s", "c", 2, tb_schema("i", "a", 0), li);
  struct ArrowSchema *st2 = tb_schema("+s", "c", 2, tb_schema("i", "a", 0), lg);
  struct ArrowSchema *st1 = tb_schema("+s", "c", 1, tb_schema("i", "a", 0));
  struct ArrowSchema *dict = tb_schema("c", "c", 0), *plain = tb_schema("c", "c", 0), *dv = tb_schema("u", "", 0);
  dict->dictionary = dv;
  ck_assert(lnc_arrow_same_type(li, li2)); /* names aside */
  ck_assert(!lnc_arrow_same_type(li, lg));
  ck_assert(!lnc_arrow_same_type(st, st2));
  ck_assert(!lnc_arrow_same_type(st, st1));
  ck_assert(!lnc_arrow_same_type(dict, plain));
  ck_assert(!lnc_arrow_same_type(plain, dict));
  ck_assert(lnc_arrow_same_type(dict, dict));
  char buf[64];
  ck_assert_str_eq(lnc_arrow_type_str(st2, buf, sizeof buf), "+s<i,+l<g>>");
  ck_assert_str_eq(lnc_arrow_type_str(dict, buf, sizeof buf), "c[u]");
  ck_assert_str_eq(lnc_arrow_type_str(st2, buf, 8), "+s<i...");
  tb_free_all();
}
END_TEST

START_TEST(test_schema_copy_metadata) {
  /* metadata: 1 pair "k" -> "vv" */
  static const char md[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', 'v'};
  struct ArrowSchema item = *tb_schema("i", "item", 0);
  struct ArrowSchema *ik[] = {&item};
  struct ArrowSchema s = *tb_schema("+l", "c", 1, ik[0]);
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
  tcase_add_checked_fixture(tc, NULL, tb_free_all);
  tcase_add_test(tc, test_int_concat_gather);
  tcase_add_test(tc, test_bool_and_fixed);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_lists);
  tcase_add_test(tc, test_row_bytes);
  tcase_add_test(tc, test_struct_and_nulls);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_dictionary_parts);
  tcase_add_test(tc, test_schema_copy_metadata);
  tcase_add_test(tc, test_same_type);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
