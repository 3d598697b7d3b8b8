/* FastLanes unpacking against an independent bit-by-bit reference packer written from the
 * definition in lance-format-compression.md §5.1 (every T, every W), plus the Inline and
 * OutOfLine bitpacking encodings in mini-block, block and levels contexts, and corrupt input. */
#include <check.h>
#include "support/support.h"
#include <stdlib.h>
#include "enc_build.h"

static const unsigned ORDER[8] = {0, 4, 2, 6, 1, 5, 3, 7};

/* Reference: value (row, lane) is stream bits [row*W, row*W+W) of lane `lane`, whose stream is
 * words packed[LANES*k + lane] (word k = stream bits [k*T, (k+1)*T)), words little-endian. */
static void ref_pack(unsigned T, unsigned W, const uint64_t *vals, uint8_t *packed) {
  unsigned lanes = 1024 / T;
  memset(packed, 0, 128 * W);
  for (unsigned row = 0; row < T; row++)
    for (unsigned lane = 0; lane < lanes; lane++) {
      uint64_t v = vals[ORDER[row / 8] * 16 + (row % 8) * 128 + lane];
      for (unsigned b = 0; b < W; b++) {
        if (!((v >> b) & 1)) continue;
        unsigned pos = row * W + b, k = pos / T, bit = pos % T;
        size_t byte = ((size_t)lanes * k + lane) * (T / 8) + bit / 8;
        packed[byte] |= (uint8_t)(1u << (bit % 8));
      }
    }
}

static uint64_t get_t(const uint8_t *p, unsigned T, size_t i) {
  uint64_t v = 0;
  memcpy(&v, p + i * (T / 8), T / 8);
  return v;
}

START_TEST(test_fl_all_widths) {
  static uint64_t vals[1024];
  static uint8_t packed[8192 + 64];
  static uint8_t out[8192];
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  const unsigned Ts[4] = {8, 16, 32, 64};
  for (int ti = 0; ti < 4; ti++) {
    unsigned T = Ts[ti];
    for (unsigned W = 0; W <= T; W++) {
      uint64_t mask = W == 64 ? ~0ull : ((1ull << W) - 1);
      for (int i = 0; i < 1024; i++) vals[i] = eb_rand(&seed) & mask;
      if (W) vals[5] = mask; /* the extreme value somewhere */
      /* pack at an odd offset: the unpacker must not need alignment */
      ref_pack(T, W, vals, packed + 1);
      lnc_fl_unpack(T, W, packed + 1, out);
      for (unsigned i = 0; i < 1024; i++) {
        ck_assert_msg(get_t(out, T, i) == vals[i], "T=%u W=%u i=%u: %llu != %llu", T, W, i,
                      (unsigned long long)get_t(out, T, i), (unsigned long long)vals[i]);
        ck_assert_msg(lnc_fl_get(T, W, packed + 1, i) == vals[i], "get T=%u W=%u i=%u", T, W, i);
      }
    }
  }
}
END_TEST

/* One inline block: width word then the packed words. */
static void put_inline_block(struct eb_w *w, unsigned T, unsigned W, const uint64_t *vals) {
  uint8_t packed[8192];
  uint64_t wv = W;
  eb_put(w, &wv, T / 8);
  ref_pack(T, W, vals, packed);
  eb_put(w, packed, 128 * W);
}

START_TEST(test_inline_miniblock) {
  uint64_t vals[1024] = {0}, seed = 7;
  for (int i = 0; i < 1000; i++) vals[i] = eb_rand(&seed) % 1000; /* 10 bits */
  struct eb_w w = {0};
  put_inline_block(&w, 32, 10, vals);
  ck_assert_uint_eq(w.len, 4 + 128 * 10);
  struct lnc_slice b = eb_slice(&w);
  struct lnc_values out;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &b, 1, 1000, &eb_arena, &out, &err), 0);
  ck_assert_int_eq(out.kind, LNC_VALUES_FIXED);
  ck_assert_uint_eq(out.bits, 32);
  ck_assert_uint_eq(out.n, 1000);
  ck_assert_uint_eq(out.data_len, 4000);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(get_t(out.data, 32, i), vals[i]);

  /* W = 0: the buffer is just the width word */
  struct eb_w z = {0};
  eb_u32(&z, 0);
  b = eb_slice(&z);
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &b, 1, 1024, &eb_arena, &out, &err), 0);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(get_t(out.data, 32, i), 0);
}
END_TEST

START_TEST(test_inline_block_levels) {
  /* 2500 16-bit levels as three blocks of different widths */
  uint64_t vals[3][1024] = {{0}}, seed = 11;
  unsigned widths[3] = {1, 3, 0};
  struct eb_w w = {0};
  for (int b = 0; b < 3; b++) {
    for (int i = 0; i < 1024; i++)
      vals[b][i] = widths[b] ? eb_rand(&seed) & ((1u << widths[b]) - 1) : 0;
    if (b == 2)
      for (int i = 452; i < 1024; i++) vals[b][i] = 0;
    put_inline_block(&w, 16, widths[b], vals[b]);
  }
  const uint16_t *lv;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_enc_levels(eb_inline(16), eb_slice(&w), 2500, &eb_arena, &lv, &err), 0);
  for (int i = 0; i < 2500; i++) ck_assert_uint_eq(lv[i], vals[i / 1024][i % 1024]);
  /* Picked: levels in each of the three blocks (the block walk skips by width words). */
  const uint32_t want[6] = {2499, 0, 1023, 1024, 2047, 2048};
  const uint16_t *pk;
  ck_assert_int_eq(lnc_enc_levels_pick(eb_inline(16), eb_slice(&w), 2500, want, 6, &eb_arena, &pk, &err), 0);
  ck_assert_ptr_ne(pk, lv);
  for (int k = 0; k < 6; k++) ck_assert_msg(pk[want[k]] == vals[want[k] / 1024][want[k] % 1024], "level %u", want[k]);
}
END_TEST

static void ool_case(unsigned T, unsigned W, uint64_t n, int packed_tail) {
  uint64_t seed = 1234 + n + W;
  uint64_t *vals = eb_new(((n + 1023) / 1024 * 1024) * 8);
  uint64_t mask = W == 64 ? ~0ull : ((1ull << W) - 1);
  for (uint64_t i = 0; i < n; i++) vals[i] = eb_rand(&seed) & mask;
  struct eb_w w = {0};
  uint8_t packed[8192];
  uint64_t full = n / 1024, tail = n % 1024;
  for (uint64_t b = 0; b < full; b++) {
    ref_pack(T, W, vals + b * 1024, packed);
    eb_put(&w, packed, 128 * W);
  }
  if (tail) {
    if (packed_tail) {
      ref_pack(T, W, vals + full * 1024, packed); /* zero padded by eb_new */
      eb_put(&w, packed, 128 * W);
    } else {
      for (uint64_t i = 0; i < tail; i++) eb_put(&w, &vals[full * 1024 + i], T / 8);
    }
  }
  struct lnc_values out;
  struct lnc_error err = {0};
  int rc = lnc_enc_block(eb_ool(T, W), eb_slice(&w), n, &eb_arena, &out, &err);
  ck_assert_msg(rc == 0, "T=%u W=%u n=%llu: %s", T, W, (unsigned long long)n, err.message);
  ck_assert_uint_eq(out.bits, T);
  for (uint64_t i = 0; i < n; i++)
    ck_assert_msg(get_t(out.data, T, i) == vals[i], "T=%u W=%u i=%llu", T, W,
                  (unsigned long long)i);
  if (T != 16) return;
  /* Levels picked one by one: first and last of every block, the tail (packed or stored
   * raw), and a few at random, equal the full decode's. */
  uint32_t want[32];
  size_t nw = 0;
  for (uint64_t b = 0; b * 1024 < n && nw + 2 <= 24; b++) {
    want[nw++] = (uint32_t)(b * 1024);
    want[nw++] = (uint32_t)((b + 1) * 1024 <= n ? (b + 1) * 1024 - 1 : n - 1);
  }
  while (nw < 32) want[nw++] = (uint32_t)(eb_rand(&seed) % n);
  const uint16_t *pk;
  rc = lnc_enc_levels_pick(eb_ool(T, W), eb_slice(&w), n, want, nw, &eb_arena, &pk, &err);
  ck_assert_msg(rc == 0, "pick W=%u n=%llu: %s", W, (unsigned long long)n, err.message);
  for (size_t k = 0; k < nw; k++)
    ck_assert_msg(pk[want[k]] == vals[want[k]], "pick W=%u n=%llu level %u", W, (unsigned long long)n, want[k]);
  /* One byte short: the same error as the full decode. */
  struct lnc_slice cut = eb_slice(&w);
  cut.len--;
  struct lnc_error e1 = {0}, e2 = {0};
  const uint16_t *lv;
  int r1 = lnc_enc_levels(eb_ool(T, W), cut, n, &eb_arena, &lv, &e1);
  int r2 = lnc_enc_levels_pick(eb_ool(T, W), cut, n, want, nw, &eb_arena, &pk, &e2);
  ck_assert_int_eq(r2, r1);
  if (r1) ck_assert_str_eq(e2.message, e1.message);
}

START_TEST(test_out_of_line) {
  ool_case(16, 2, 2500, 0);
  ool_case(16, 2, 2500, 1);
  ool_case(16, 1, 1024, 0);
  ool_case(16, 3, 100, 0);
  ool_case(16, 3, 1000, 1);
  ool_case(32, 17, 3000, 0);
  ool_case(64, 33, 1500, 1);
  ool_case(8, 5, 2049, 0);
  /* levels context on out-of-line */
  uint64_t vals[1024] = {0};
  for (int i = 0; i < 1024; i++) vals[i] = i % 4;
  uint8_t packed[256];
  ref_pack(16, 2, vals, packed);
  struct lnc_slice s = {packed, 256};
  const uint16_t *lv;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_enc_levels(eb_ool(16, 2), s, 1024, &eb_arena, &lv, &err), 0);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(lv[i], i % 4);
}
END_TEST

START_TEST(test_bitpack_corrupt) {
  struct lnc_values out;
  struct lnc_error err = {0};
  uint8_t buf[64] = {0};
  /* width word larger than T */
  buf[0] = 33;
  struct lnc_slice s = {buf, sizeof buf};
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &s, 1, 10, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* truncated block */
  buf[0] = 5;
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &s, 1, 10, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* too many values for one chunk */
  buf[0] = 0;
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &s, 1, 2000, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* empty buffer */
  s.len = 0;
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(32), &s, 1, 1, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* unsupported T */
  s.len = sizeof buf;
  ck_assert_int_eq(lnc_enc_miniblock(eb_inline(12), &s, 1, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  /* out-of-line: too short, width > T, huge n */
  ck_assert_int_eq(lnc_enc_block(eb_ool(16, 3), s, 5000, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_block(eb_ool(16, 17), s, 5, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_block(eb_ool(16, 0), s, UINT64_MAX, &eb_arena, &out, &err), LNC_ECORRUPT);
  lnc_enc *bad = eb_ool(16, 2);
  bad->out_of_line_bitpacking->values = eb_variable(32);
  ck_assert_int_eq(lnc_enc_block(bad, s, 5, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
}
END_TEST

/* lnc_enc_miniblock_pick: the wanted values of an inline block equal the full decode's, for
 * every T and a spread of widths and value counts; a corrupt chunk fails with the same code
 * and message as the full decode; other encodings are decoded whole. */
START_TEST(test_inline_pick) {
  uint64_t seed = 99;
  const unsigned Ts[4] = {8, 16, 32, 64};
  for (int ti = 0; ti < 4; ti++) {
    unsigned T = Ts[ti];
    for (unsigned W = 0; W <= T; W += (T / 8 > 1 ? T / 8 - 1 : 1)) {
      uint64_t vals[1024] = {0}, mask = W == 64 ? ~0ull : ((1ull << W) - 1);
      uint64_t n = 1 + eb_rand(&seed) % 1024;
      for (uint64_t i = 0; i < n; i++) vals[i] = eb_rand(&seed) & mask;
      struct eb_w w = {0};
      put_inline_block(&w, T, W, vals);
      struct lnc_slice b = eb_slice(&w);
      uint32_t want[7] = {0, (uint32_t)(n - 1)};
      for (int k = 2; k < 7; k++) want[k] = (uint32_t)(eb_rand(&seed) % n);
      struct lnc_values full, pick;
      struct lnc_error err = {0};
      ck_assert_int_eq(lnc_enc_miniblock(eb_inline(T), &b, 1, n, &eb_arena, &full, &err), 0);
      ck_assert_int_eq(lnc_enc_miniblock_pick(eb_inline(T), &b, 1, n, want, 7, &eb_arena, &pick, &err), 0);
      ck_assert_uint_eq(pick.n, n);
      ck_assert_uint_eq(pick.bits, T);
      ck_assert_uint_eq(pick.data_len, full.data_len);
      for (int k = 0; k < 7; k++)
        ck_assert_msg(get_t(pick.data, T, want[k]) == vals[want[k]] && get_t(full.data, T, want[k]) == vals[want[k]],
                      "T=%u W=%u n=%llu value %u", T, W, (unsigned long long)n, want[k]);
    }
  }
  /* corrupt chunks: same answer both ways */
  uint8_t buf[64] = {0};
  struct lnc_slice s = {buf, sizeof buf};
  uint32_t want[1] = {3};
  const struct {
    uint8_t width;
    size_t len;
    uint64_t n;
  } bad[] = {{33, 64, 10}, {5, 64, 10}, {0, 64, 2000}, {0, 0, 1}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    buf[0] = bad[i].width;
    s.len = bad[i].len;
    struct lnc_values out;
    struct lnc_error e1 = {0}, e2 = {0};
    int r1 = lnc_enc_miniblock(eb_inline(32), &s, 1, bad[i].n, &eb_arena, &out, &e1);
    int r2 = lnc_enc_miniblock_pick(eb_inline(32), &s, 1, bad[i].n, want, 1, &eb_arena, &out, &e2);
    ck_assert_int_eq(r1, LNC_ECORRUPT);
    ck_assert_int_eq(r2, r1);
    ck_assert_str_eq(e2.message, e1.message);
  }
  /* not bitpacked: decoded whole (Flat points into the buffer) */
  s.len = sizeof buf;
  struct lnc_values out;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_enc_miniblock_pick(eb_flat(64), &s, 1, 8, want, 1, &eb_arena, &out, &err), 0);
  ck_assert_ptr_eq(out.data, buf);
}
END_TEST

START_TEST(test_fl_speed) {
  /* sanity: unpacking 64 MiB worth of values stays fast (catches accidental bit loops) */
  static uint64_t vals[1024];
  static uint8_t packed[8192], out[8192];
  uint64_t seed = 3;
  for (int i = 0; i < 1024; i++) vals[i] = eb_rand(&seed) & 0x1FFF;
  ref_pack(32, 13, vals, packed);
  uint64_t sum = 0;
  for (int r = 0; r < 16384; r++) {
    lnc_fl_unpack(32, 13, packed, out);
    sum += out[r % 4096];
  }
  ck_assert(sum != 1); /* keep the loop */
}
END_TEST

int main(void) {
  Suite *s = suite_create("bitpack");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, eb_setup, eb_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fl_all_widths);
  tcase_add_test(tc, test_inline_miniblock);
  tcase_add_test(tc, test_inline_block_levels);
  tcase_add_test(tc, test_out_of_line);
  tcase_add_test(tc, test_bitpack_corrupt);
  tcase_add_test(tc, test_inline_pick);
  tcase_add_test(tc, test_fl_speed);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
