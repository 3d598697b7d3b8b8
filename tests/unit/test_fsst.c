/* FSST decoding: symbol tables built in the test, strings encoded by a greedy reference encoder,
 * decoded through Fsst(Variable) in mini-block, block and full-zip contexts; the uncompressed
 * (switch off) mode; and corrupt tables and code streams. */
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include "enc_build.h"

#define TABLE_SIZE (8 + 256 * 8 + 256)

static const char *SYMS[] = {"hello", " ", "world", "the ", "lance", "ab", "x", "12345678", "ing"};
#define NSYMS (sizeof SYMS / sizeof SYMS[0])

static uint8_t *make_table(int on, unsigned n) {
  uint8_t *t = eb_new(TABLE_SIZE);
  uint64_t h = (0x46535354ull << 32) | ((uint64_t)on << 24) | n;
  memcpy(t, &h, 8);
  for (unsigned i = 0; i < n; i++) {
    memcpy(t + 8 + 8 * i, SYMS[i], strlen(SYMS[i])); /* rest stays zero */
    t[8 + 8 * n + i] = (uint8_t)strlen(SYMS[i]);
  }
  return t;
}

/* Greedy: longest symbol at each position, else escape + byte. */
static size_t encode(const char *s, size_t len, uint8_t *out) {
  size_t o = 0;
  for (size_t p = 0; p < len;) {
    int best = -1;
    size_t bl = 0;
    for (unsigned i = 0; i < NSYMS; i++) {
      size_t l = strlen(SYMS[i]);
      if (l > bl && l <= len - p && memcmp(s + p, SYMS[i], l) == 0) {
        best = (int)i;
        bl = l;
      }
    }
    if (best >= 0) {
      out[o++] = (uint8_t)best;
      p += bl;
    } else {
      out[o++] = 255;
      out[o++] = (uint8_t)s[p++];
    }
  }
  return o;
}

static const char *STRS[] = {"hello world", "", "the lance is testing", "zzz", "12345678abx",
                             "\xff\xfe binary \x00 ok", "hello"};
#define NSTRS (sizeof STRS / sizeof STRS[0])
static size_t slen(int i) { return i == 5 ? 14 : strlen(STRS[i]); }

/* A Variable(32) mini-block chunk holding the codes of STRS. */
static struct lnc_slice chunk_of_codes(int on) {
  uint8_t codes[NSTRS][128];
  size_t clen[NSTRS];
  for (size_t i = 0; i < NSTRS; i++) {
    if (on) {
      clen[i] = encode(STRS[i], slen(i), codes[i]);
    } else {
      memcpy(codes[i], STRS[i], slen(i));
      clen[i] = slen(i);
    }
  }
  struct eb_w w = {0};
  uint32_t off = (NSTRS + 1) * 4;
  eb_u32(&w, off);
  for (size_t i = 0; i < NSTRS; i++) eb_u32(&w, off += (uint32_t)clen[i]);
  for (size_t i = 0; i < NSTRS; i++) eb_put(&w, codes[i], clen[i]);
  while (w.len % 4) eb_u8(&w, 0x48);
  return eb_slice(&w);
}

static void check_strs(const struct lnc_values *v) {
  ck_assert_int_eq(v->kind, LNC_VALUES_VARIABLE);
  ck_assert_uint_eq(v->n, NSTRS);
  for (size_t i = 0; i < NSTRS; i++) {
    size_t l = v->offsets[i + 1] - v->offsets[i];
    ck_assert_uint_eq(l, slen(i));
    ck_assert(memcmp(v->data + v->offsets[i], STRS[i], l) == 0);
  }
}

START_TEST(test_fsst_miniblock) {
  for (int on = 0; on <= 1; on++) {
    lnc_enc *e = eb_fsst(make_table(on, NSYMS), TABLE_SIZE, eb_variable(32));
    struct lnc_slice b = chunk_of_codes(on);
    struct lnc_values out;
    struct lnc_error err = {0};
    ck_assert_msg(lnc_enc_miniblock(e, &b, 1, NSTRS, &eb_arena, &out, &err) == 0, "%s", err.message);
    check_strs(&out);
  }
}
END_TEST

START_TEST(test_fsst_block_and_per_value) {
  lnc_enc *e = eb_fsst(make_table(1, NSYMS), TABLE_SIZE, eb_variable(32));
  struct lnc_error err = {0};
  /* block form: u32 32, u32 bytes_start, offsets relative to the bytes, bytes */
  uint8_t codes[NSTRS][128];
  size_t clen[NSTRS];
  for (size_t i = 0; i < NSTRS; i++) clen[i] = encode(STRS[i], slen(i), codes[i]);
  struct eb_w w = {0};
  eb_u32(&w, 32);
  eb_u32(&w, 8 + (NSTRS + 1) * 4);
  uint32_t off = 0;
  eb_u32(&w, 0);
  for (size_t i = 0; i < NSTRS; i++) eb_u32(&w, off += (uint32_t)clen[i]);
  for (size_t i = 0; i < NSTRS; i++) eb_put(&w, codes[i], clen[i]);
  struct lnc_values out;
  ck_assert_msg(lnc_enc_block(e, eb_slice(&w), NSTRS, &eb_arena, &out, &err) == 0, "%s", err.message);
  check_strs(&out);
  /* per value */
  for (size_t i = 0; i < NSTRS; i++) {
    struct lnc_slice in = {codes[i], clen[i]}, dec;
    ck_assert_int_eq(lnc_enc_variable_per_value(e, in, &eb_arena, &dec, &err), 0);
    ck_assert_uint_eq(dec.len, slen(i));
    ck_assert(memcmp(dec.p, STRS[i], dec.len) == 0);
  }
}
END_TEST

START_TEST(test_fsst_random_roundtrip) {
  uint64_t seed = 99;
  lnc_enc *e = eb_fsst(make_table(1, NSYMS), TABLE_SIZE, eb_variable(64));
  static const char alphabet[] = "helo wrdtha nc12345678bxig";
  for (int r = 0; r < 200; r++) {
    char s[300];
    size_t n = eb_rand(&seed) % sizeof s;
    for (size_t i = 0; i < n; i++) s[i] = alphabet[eb_rand(&seed) % (sizeof alphabet - 1)];
    uint8_t codes[600];
    size_t cl = encode(s, n, codes);
    struct lnc_slice in = {codes, cl}, dec;
    struct lnc_error err = {0};
    ck_assert_int_eq(lnc_enc_variable_per_value(e, in, &eb_arena, &dec, &err), 0);
    ck_assert_uint_eq(dec.len, n);
    ck_assert(n == 0 || memcmp(dec.p, s, n) == 0);
  }
}
END_TEST

START_TEST(test_fsst_corrupt) {
  struct lnc_error err = {0};
  struct lnc_slice dec;
  uint8_t dangling[] = {0, 255};
  struct lnc_slice in = {dangling, 2};
  lnc_enc *e = eb_fsst(make_table(1, NSYMS), TABLE_SIZE, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(e, in, &eb_arena, &dec, &err), LNC_ECORRUPT);
  /* codes past the table decode to nothing (as Lance does) */
  uint8_t high[] = {0, 200, 2};
  struct lnc_slice hi = {high, 3};
  ck_assert_int_eq(lnc_enc_variable_per_value(e, hi, &eb_arena, &dec, &err), 0);
  ck_assert_uint_eq(dec.len, 10);
  ck_assert(memcmp(dec.p, "helloworld", 10) == 0);
  /* bad magic */
  uint8_t *t = make_table(1, NSYMS);
  t[7] ^= 1;
  lnc_enc *bad = eb_fsst(t, TABLE_SIZE, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(bad, hi, &eb_arena, &dec, &err), LNC_ECORRUPT);
  /* table too short for its symbol count */
  bad = eb_fsst(make_table(1, NSYMS), 8 + 9 * NSYMS - 1, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(bad, hi, &eb_arena, &dec, &err), LNC_ECORRUPT);
  bad = eb_fsst(make_table(1, NSYMS), 3, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(bad, hi, &eb_arena, &dec, &err), LNC_ECORRUPT);
  /* symbol of length 9 */
  t = make_table(1, NSYMS);
  t[8 + 8 * NSYMS] = 9;
  bad = eb_fsst(t, TABLE_SIZE, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(bad, hi, &eb_arena, &dec, &err), LNC_ECORRUPT);
  /* a corrupt inner chunk */
  struct lnc_slice b = chunk_of_codes(1);
  uint8_t *copy = eb_new(b.len);
  memcpy(copy, b.p, b.len);
  copy[4] = 0xff; /* offset 1 way past the end */
  struct lnc_slice cb = {copy, b.len};
  struct lnc_values out;
  ck_assert_int_eq(lnc_enc_miniblock(e, &cb, 1, NSTRS, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* Fsst without values */
  lnc_enc *novals = eb_fsst(make_table(1, NSYMS), TABLE_SIZE, NULL);
  ck_assert_int_eq(lnc_enc_miniblock(novals, &b, 1, NSTRS, &eb_arena, &out, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_fsst_describe) {
  struct lnc_buf b = {0};
  lnc_enc *e = eb_fsst(make_table(1, NSYMS), TABLE_SIZE, eb_variable(32));
  ck_assert_int_eq(lnc_enc_describe(e, &b), 0);
  ck_assert_uint_eq(b.len, strlen("Fsst(Variable(Flat(32)))"));
  ck_assert(memcmp(b.data, "Fsst(Variable(Flat(32)))", b.len) == 0);
  lnc_buf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fsst");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, eb_setup, eb_teardown);
  tcase_add_test(tc, test_fsst_miniblock);
  tcase_add_test(tc, test_fsst_block_and_per_value);
  tcase_add_test(tc, test_fsst_random_roundtrip);
  tcase_add_test(tc, test_fsst_corrupt);
  tcase_add_test(tc, test_fsst_describe);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
