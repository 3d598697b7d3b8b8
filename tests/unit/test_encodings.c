/* lib/encoding end to end: every encoding in every context it appears in (Flat, Variable in all
 * three forms, Constant, Rle, ByteStreamSplit, General with zstd/lz4 compressed here with the real
 * libraries, FixedSizeList, PackedStruct, VariablePackedStruct), describe strings, unsupported
 * encodings named, and truncated or corrupt input returning errors. */
#include <check.h>
#include "support/support.h"
#include <lz4.h>
#include <stdlib.h>
#include <zstd.h>
#include "enc_build.h"

#define LZ4  LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4
#define ZSTD LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD

static struct lnc_values out;
static struct lnc_error err;

static uint64_t u(const struct lnc_values *v, uint64_t i) {
  uint64_t x = 0;
  memcpy(&x, v->data + i * (v->bits / 8), v->bits / 8);
  return x;
}

static void ck_str(const struct lnc_values *v, uint64_t i, const char *s) {
  size_t l = v->offsets[i + 1] - v->offsets[i];
  ck_assert_msg(l == strlen(s) && memcmp(v->data + v->offsets[i], s, l) == 0,
                "value %llu: want '%s' got '%.*s'", (unsigned long long)i, s, (int)l,
                v->data + v->offsets[i]);
}

static void ck_describe(const lnc_enc *e, const char *want) {
  struct lnc_buf b = {0};
  ck_assert_int_eq(lnc_enc_describe(e, &b), 0);
  ck_assert_msg(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0, "want %s got %.*s",
                want, (int)b.len, (const char *)b.data);
  lnc_buf_free(&b);
}

/* Lance framing: zstd = u64 length + frame; lz4 = u32 length + raw block. */
static struct lnc_slice zstd_frame(const void *src, size_t n, int prefixed) {
  size_t cap = ZSTD_compressBound(n) + 8;
  uint8_t *dst = eb_new(cap);
  size_t off = prefixed ? 8 : 0;
  size_t c = ZSTD_compress(dst + off, cap - off, src, n, 3);
  ck_assert(!ZSTD_isError(c));
  uint64_t len = n;
  if (prefixed) memcpy(dst, &len, 8);
  return (struct lnc_slice){dst, c + off};
}
static struct lnc_slice lz4_block(const void *src, size_t n) {
  int cap = LZ4_compressBound((int)n) + 4;
  uint8_t *dst = eb_new(cap);
  int c = LZ4_compress_default(src, (char *)dst + 4, (int)n, cap - 4);
  ck_assert(c > 0);
  uint32_t len = (uint32_t)n;
  memcpy(dst, &len, 4);
  return (struct lnc_slice){dst, (size_t)c + 4};
}

static const char *WORDS[] = {"alpha", "", "beta", "gamma delta", "e"};
#define NW 5

/* Mini-block Variable chunk: offsets absolute in the chunk, padded with 0x48. */
static struct lnc_slice var_chunk(unsigned w) {
  struct eb_w b = {0};
  uint64_t off = (NW + 1) * w;
  eb_put(&b, &off, w);
  for (int i = 0; i < NW; i++) {
    off += strlen(WORDS[i]);
    eb_put(&b, &off, w);
  }
  for (int i = 0; i < NW; i++) eb_put(&b, WORDS[i], strlen(WORDS[i]));
  while (b.len % w) eb_u8(&b, 0x48);
  return eb_slice(&b);
}

/* Block Variable: new form (u32|u64 bits, bytes_start) or old (u8 bits, count, bytes_start). */
static struct lnc_slice var_block(unsigned w, int old) {
  struct eb_w b = {0};
  uint64_t hdr = old ? 1 + 2 * w : 2 * w, start = hdr + (NW + 1) * w, bits = w * 8, n = NW;
  if (old) {
    eb_u8(&b, (uint8_t)bits);
    eb_put(&b, &n, w);
  } else {
    eb_put(&b, &bits, w);
  }
  eb_put(&b, &start, w);
  uint64_t off = 0;
  eb_put(&b, &off, w);
  for (int i = 0; i < NW; i++) {
    off += strlen(WORDS[i]);
    eb_put(&b, &off, w);
  }
  for (int i = 0; i < NW; i++) eb_put(&b, WORDS[i], strlen(WORDS[i]));
  return eb_slice(&b);
}

static void ck_words(const struct lnc_values *v) {
  ck_assert_int_eq(v->kind, LNC_VALUES_VARIABLE);
  ck_assert_uint_eq(v->n, NW);
  ck_assert(v->offsets[NW] <= v->data_len);
  for (int i = 0; i < NW; i++) ck_str(v, i, WORDS[i]);
}

START_TEST(test_flat) {
  uint32_t vals[100];
  for (int i = 0; i < 100; i++) vals[i] = i * 7919u;
  struct lnc_slice b = {(const uint8_t *)vals, sizeof vals};
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(32), &b, 1, 100, &eb_arena, &out, &err), 0);
  ck_assert_int_eq(out.kind, LNC_VALUES_FIXED);
  ck_assert_uint_eq(out.bits, 32);
  ck_assert_uint_eq(out.data_len, 400);
  for (int i = 0; i < 100; i++) ck_assert_uint_eq(u(&out, i), vals[i]);
  /* block context, fewer values than the buffer holds */
  ck_assert_int_eq(lnc_enc_block(eb_flat(64), b, 50, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.data_len, 400);
  /* booleans */
  uint8_t bm[2] = {0xA5, 0x01};
  struct lnc_slice bb = {bm, 2};
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(1), &bb, 1, 9, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.bits, 1);
  ck_assert_uint_eq(out.data_len, 2);
  /* per value: a decimal128 */
  uint8_t dec[16] = {1, 2, 3};
  struct lnc_slice dv = {dec, 16};
  ck_assert_int_eq(lnc_enc_fixed_per_value(eb_flat(128), dv, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.n, 1);
  ck_assert_ptr_eq(out.data, dec);
  /* compressed flat buffer */
  struct lnc_slice z = zstd_frame(vals, sizeof vals, 1);
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat_c(32, ZSTD), &z, 1, 100, &eb_arena, &out, &err), 0);
  for (int i = 0; i < 100; i++) ck_assert_uint_eq(u(&out, i), vals[i]);
  /* errors */
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(32), &b, 1, 101, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(12), &b, 1, 10, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(0), &b, 1, 10, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(32), &b, 2, 10, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_flat(64), &b, 1, UINT64_MAX / 4, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_fixed_per_value(eb_flat(128), b, &eb_arena, &out, &err), 0);
  dv.len = 15;
  ck_assert_int_eq(lnc_enc_fixed_per_value(eb_flat(128), dv, &eb_arena, &out, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_variable) {
  for (unsigned w = 4; w <= 8; w += 4) {
    struct lnc_slice c = var_chunk(w);
    ck_assert_msg(lnc_enc_miniblock(eb_variable(w * 8), &c, 1, NW, &eb_arena, &out, &err) == 0,
                  "%s", err.message);
    ck_words(&out);
    ck_assert_uint_eq(out.offsets[0], 0);
    /* the caller may ask for a prefix of the chunk */
    ck_assert_int_eq(lnc_enc_miniblock(eb_variable(w * 8), &c, 1, 3, &eb_arena, &out, &err), 0);
    ck_assert_uint_eq(out.n, 3);
    ck_str(&out, 2, "beta");
    for (int old = 0; old <= 1; old++) {
      struct lnc_slice b = var_block(w, old);
      ck_assert_msg(lnc_enc_block(eb_variable(32), b, NW, &eb_arena, &out, &err) == 0,
                    "w=%u old=%d: %s", w, old, err.message);
      ck_words(&out);
    }
  }
  /* per value is the bytes themselves */
  struct lnc_slice v = {(const uint8_t *)"xyz", 3}, o;
  ck_assert_int_eq(lnc_enc_variable_per_value(eb_variable(32), v, &eb_arena, &o, &err), 0);
  ck_assert(o.p == v.p && o.len == 3);
}
END_TEST

START_TEST(test_variable_corrupt) {
  struct lnc_slice c = var_chunk(4);
  uint8_t *m = eb_new(c.len);
  struct lnc_slice mc = {m, c.len};
  /* decreasing offsets */
  memcpy(m, c.p, c.len);
  uint32_t bad = 26; /* offsets are 24 29 29 33 ...: 26 < 29 */
  memcpy(m + 8, &bad, 4);
  ck_assert_int_eq(lnc_enc_miniblock(eb_variable(32), &mc, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* last offset past the buffer */
  memcpy(m, c.p, c.len);
  bad = 1000;
  memcpy(m + 4 * NW, &bad, 4);
  ck_assert_int_eq(lnc_enc_miniblock(eb_variable(32), &mc, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* first offset inside the offset array */
  memcpy(m, c.p, c.len);
  bad = 4;
  memcpy(m, &bad, 4);
  ck_assert_int_eq(lnc_enc_miniblock(eb_variable(32), &mc, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* more values than offsets */
  ck_assert_int_eq(lnc_enc_miniblock(eb_variable(32), &c, 1, 100, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* truncated chunk */
  for (size_t l = 0; l < 24; l++) {
    struct lnc_slice t = {c.p, l};
    ck_assert_int_eq(lnc_enc_miniblock(eb_variable(32), &t, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  }
  /* non-flat or odd offsets */
  ck_assert_int_eq(lnc_enc_miniblock(eb_variable(16), &c, 1, NW, &eb_arena, &out, &err),
                   LNC_EUNSUPPORTED);
  lnc_enc *v = eb_variable(32);
  v->variable->offsets = eb_inline(32);
  ck_assert_int_eq(lnc_enc_miniblock(v, &c, 1, NW, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  v->variable->offsets = NULL;
  ck_assert_int_eq(lnc_enc_miniblock(v, &c, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* block forms: every truncation fails cleanly */
  for (int old = 0; old <= 1; old++)
    for (unsigned w = 4; w <= 8; w += 4) {
      struct lnc_slice b = var_block(w, old);
      for (size_t l = 0; l < b.len - 10; l++) {
        struct lnc_slice t = {b.p, l};
        ck_assert_int_eq(lnc_enc_block(eb_variable(32), t, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
      }
      ck_assert_int_eq(lnc_enc_block(eb_variable(32), b, NW + 1, &eb_arena, &out, &err), LNC_ECORRUPT);
    }
  uint8_t odd[16] = {16, 0, 0, 0, 8};
  struct lnc_slice os = {odd, 16};
  ck_assert_int_eq(lnc_enc_block(eb_variable(32), os, 1, &eb_arena, &out, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_constant) {
  uint32_t v = 0xDEADBEEF;
  lnc_enc *c = eb_constant(&v, 4);
  ck_assert_int_eq(lnc_enc_block(c, (struct lnc_slice){0}, 10, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.n, 10);
  ck_assert_uint_eq(out.bits, 32);
  for (int i = 0; i < 10; i++) ck_assert_uint_eq(u(&out, i), v);
  ck_assert_int_eq(lnc_enc_fixed_per_value(c, (struct lnc_slice){0}, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.n, 1);
  ck_assert_uint_eq(u(&out, 0), v);
  lnc_enc *null = eb_constant(NULL, 0);
  ck_assert_int_eq(lnc_enc_block(null, (struct lnc_slice){0}, 10, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.bits, 0);
  ck_assert_uint_eq(out.n, 10);
  ck_assert_int_eq(lnc_enc_block(c, (struct lnc_slice){0}, UINT64_MAX, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  /* Constant is not a mini-block encoding */
  struct lnc_slice b = {(const uint8_t *)&v, 4};
  ck_assert_int_eq(lnc_enc_miniblock(c, &b, 1, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  ck_assert(strstr(err.message, "Constant") != NULL);
  ck_describe(c, "Constant(4 bytes)");
  ck_describe(null, "Constant(null)");
}
END_TEST

START_TEST(test_rle) {
  /* mini-block: values u32 {7, 9, 11}, runs {3, 255, 2} → 260 values */
  uint32_t vals[3] = {7, 9, 11};
  uint8_t runs[3] = {3, 255, 2};
  struct lnc_slice bufs[2] = {
      {(const uint8_t *)vals, 12},
      {runs, 3}};
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(32, 8), bufs, 2, 260, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.n, 260);
  ck_assert_uint_eq(u(&out, 0), 7);
  ck_assert_uint_eq(u(&out, 2), 7);
  ck_assert_uint_eq(u(&out, 3), 9);
  ck_assert_uint_eq(u(&out, 257), 9);
  ck_assert_uint_eq(u(&out, 259), 11);
  /* runs beyond n are cut; too few runs is an error */
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(32, 8), bufs, 2, 100, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(u(&out, 99), 9);
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(32, 8), bufs, 2, 261, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(32, 8), bufs, 2, UINT64_MAX, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(32, 8), bufs, 1, 10, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(12, 8), bufs, 2, 10, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  /* 64-bit values with 16-bit run lengths */
  uint64_t v64[2] = {1ull << 40, 5};
  uint16_t r16[2] = {1000, 24};
  struct lnc_slice b64[2] = {
      {(const uint8_t *)v64, 16},
      {(const uint8_t *)r16, 4}};
  ck_assert_int_eq(lnc_enc_miniblock(eb_rle(64, 16), b64, 2, 1024, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(u(&out, 999), 1ull << 40);
  ck_assert_uint_eq(u(&out, 1000), 5);
  /* block form, the example from the notes: level 1 repeated 1024 times */
  static const uint8_t blk[] = {0x0a, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0,
                                0xff, 0xff, 0xff, 0xff, 0x04};
  const uint16_t *lv;
  struct lnc_slice bs = {blk, sizeof blk};
  ck_assert_int_eq(lnc_enc_levels(eb_rle(16, 8), bs, 1024, &eb_arena, &lv, &err), 0);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(lv[i], 1);
  for (size_t l = 0; l < sizeof blk - 1; l++) {
    struct lnc_slice t = {blk, l};
    ck_assert_int_ne(lnc_enc_levels(eb_rle(16, 8), t, 1024, &eb_arena, &lv, &err), 0);
  }
  ck_describe(eb_rle(64, 8), "Rle(Flat(64), Flat(8))");
}
END_TEST

START_TEST(test_bss) {
  float f[300];
  for (int i = 0; i < 300; i++) f[i] = i * 1.5f - 7.25f;
  uint8_t *split = eb_new(1200);
  for (int i = 0; i < 300; i++)
    for (int j = 0; j < 4; j++) split[j * 300 + i] = ((const uint8_t *)&f[i])[j];
  struct lnc_slice b = {split, 1200};
  ck_assert_int_eq(lnc_enc_miniblock(eb_bss(32), &b, 1, 300, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.bits, 32);
  ck_assert(memcmp(out.data, f, 1200) == 0);
  /* General(zstd, BSS(Flat(32))) */
  lnc_enc *g = eb_general(ZSTD, eb_bss(32));
  struct lnc_slice z = zstd_frame(split, 1200, 1);
  ck_assert_int_eq(lnc_enc_miniblock(g, &z, 1, 300, &eb_arena, &out, &err), 0);
  ck_assert(memcmp(out.data, f, 1200) == 0);
  ck_describe(g, "General(zstd, ByteStreamSplit(Flat(32)))");
  b.len = 1199;
  ck_assert_int_eq(lnc_enc_miniblock(eb_bss(32), &b, 1, 300, &eb_arena, &out, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_bss(12), &b, 1, 10, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
}
END_TEST

START_TEST(test_general) {
  /* a 64-bit variable chunk, compressed three ways */
  struct lnc_slice c = var_chunk(8);
  struct lnc_slice forms[3] = {zstd_frame(c.p, c.len, 1), zstd_frame(c.p, c.len, 0),
                               lz4_block(c.p, c.len)};
  int schemes[3] = {ZSTD, ZSTD, LZ4};
  for (int i = 0; i < 3; i++) {
    lnc_enc *g = eb_general(schemes[i], eb_variable(64));
    ck_assert_msg(lnc_enc_miniblock(g, &forms[i], 1, NW, &eb_arena, &out, &err) == 0, "form %d: %s",
                  i, err.message);
    ck_words(&out);
  }
  /* only buffer 0 is compressed: Rle runs pass through */
  uint32_t vals[2] = {4, 5};
  uint8_t runs[2] = {2, 3};
  struct lnc_slice rb[2] = {
      lz4_block(vals, 8), {runs, 2}};
  ck_assert_int_eq(lnc_enc_miniblock(eb_general(LZ4, eb_rle(32, 8)), rb, 2, 5, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(u(&out, 4), 5);
  /* block context: 2.2 dictionary items General(LZ4, Variable) */
  struct lnc_slice vb = var_block(4, 0);
  struct lnc_slice lb = lz4_block(vb.p, vb.len);
  lnc_enc *dict = eb_general(LZ4, eb_variable(32));
  ck_assert_int_eq(lnc_enc_block(dict, lb, NW, &eb_arena, &out, &err), 0);
  ck_words(&out);
  ck_describe(dict, "General(lz4, Variable(Flat(32)))");
  /* per value: zstd-compressed large strings */
  char big[40000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = "abcdefgh"[i % 8] + (i % 1000 == 0);
  struct lnc_slice zv = zstd_frame(big, sizeof big, 1), o;
  lnc_enc *pv = eb_general(ZSTD, eb_variable(32));
  ck_assert_int_eq(lnc_enc_variable_per_value(pv, zv, &eb_arena, &o, &err), 0);
  ck_assert_uint_eq(o.len, sizeof big);
  ck_assert(memcmp(o.p, big, sizeof big) == 0);
  struct lnc_slice empty = {NULL, 0};
  ck_assert_int_eq(lnc_enc_variable_per_value(pv, empty, &eb_arena, &o, &err), 0);
  ck_assert_uint_eq(o.len, 0);
}
END_TEST

START_TEST(test_general_corrupt) {
  struct lnc_slice c = var_chunk(4);
  struct lnc_slice z = zstd_frame(c.p, c.len, 1), l = lz4_block(c.p, c.len), o;
  lnc_enc *gz = eb_general(ZSTD, eb_variable(32)), *gl = eb_general(LZ4, eb_variable(32));
  /* truncations */
  for (size_t n = 1; n < z.len; n++) {
    struct lnc_slice t = {z.p, n};
    ck_assert_int_ne(lnc_enc_miniblock(gz, &t, 1, NW, &eb_arena, &out, &err), 0);
  }
  for (size_t n = 1; n < l.len; n++) {
    struct lnc_slice t = {l.p, n};
    ck_assert_int_ne(lnc_enc_miniblock(gl, &t, 1, NW, &eb_arena, &out, &err), 0);
  }
  /* absurd declared sizes are refused before allocating */
  uint8_t *m = eb_new(z.len);
  memcpy(m, z.p, z.len);
  uint64_t huge = 1ull << 40;
  memcpy(m, &huge, 8);
  struct lnc_slice mz = {m, z.len};
  ck_assert_int_eq(lnc_enc_decompress(ZSTD, mz, &eb_arena, &o, &err), LNC_ECORRUPT);
  uint8_t *ml = eb_new(l.len);
  memcpy(ml, l.p, l.len);
  uint32_t big = 0xFFFFFFF0u;
  memcpy(ml, &big, 4);
  struct lnc_slice mls = {ml, l.len};
  ck_assert_int_eq(lnc_enc_decompress(LZ4, mls, &eb_arena, &o, &err), LNC_ECORRUPT);
  /* declared length disagrees with the frame */
  memcpy(m, z.p, z.len);
  uint64_t less = c.len - 1;
  memcpy(m, &less, 8);
  ck_assert_int_eq(lnc_enc_decompress(ZSTD, mz, &eb_arena, &o, &err), LNC_ECORRUPT);
  /* garbage */
  uint8_t junk[32];
  memset(junk, 0x5A, sizeof junk);
  struct lnc_slice js = {junk, sizeof junk};
  ck_assert_int_ne(lnc_enc_decompress(ZSTD, js, &eb_arena, &o, &err), 0);
  ck_assert_int_ne(lnc_enc_decompress(LZ4, js, &eb_arena, &o, &err), 0);
  ck_assert_int_eq(lnc_enc_decompress(7, js, &eb_arena, &o, &err), LNC_EUNSUPPORTED);
  /* General without compression config */
  lnc_enc *nc = eb_general(ZSTD, eb_variable(32));
  nc->general->compression = NULL;
  ck_assert_int_eq(lnc_enc_miniblock(nc, &z, 1, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* nothing to decompress */
  ck_assert_int_eq(lnc_enc_miniblock(gz, &z, 0, NW, &eb_arena, &out, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_fsl) {
  /* fsl<int32, 3> with item validity, 4 rows: validity bitmap of 12 bits, then 12 items */
  uint8_t valid[2] = {0xFF, 0x0D};
  int32_t items[12];
  for (int i = 0; i < 12; i++) items[i] = i * 10;
  struct lnc_slice bufs[2] = {
      {valid, 2},
      {(const uint8_t *)items, sizeof items}};
  lnc_enc *e = eb_fsl(3, 1, eb_flat(32));
  ck_assert_msg(lnc_enc_miniblock(e, bufs, 2, 4, &eb_arena, &out, &err) == 0, "%s", err.message);
  ck_assert_uint_eq(out.n, 4);
  ck_assert_uint_eq(out.fsl_dim, 3);
  ck_assert_uint_eq(out.bits, 32);
  ck_assert_uint_eq(out.n_item_validity, 1);
  ck_assert_ptr_eq(out.item_validity[0], valid);
  ck_assert_uint_eq(out.data_len, 48);
  ck_assert_uint_eq(u(&out, 11), 110);
  ck_describe(e, "FixedSizeList(3, nullable, Flat(32))");
  /* wrong buffer count, short validity, short data */
  ck_assert_int_eq(lnc_enc_miniblock(e, bufs, 1, 4, &eb_arena, &out, &err), LNC_ECORRUPT);
  struct lnc_slice sv[2] = {
      {valid, 1},
      bufs[1]};
  ck_assert_int_eq(lnc_enc_miniblock(e, sv, 2, 4, &eb_arena, &out, &err), LNC_ECORRUPT);
  struct lnc_slice sd[2] = {
      bufs[0], {(const uint8_t *)items, 40}};
  ck_assert_int_eq(lnc_enc_miniblock(e, sd, 2, 4, &eb_arena, &out, &err), LNC_ECORRUPT);

  /* nested fsl<fsl<float,2>,2> without validity */
  lnc_enc *nested = eb_fsl(2, 0, eb_fsl(2, 0, eb_flat(32)));
  float fl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct lnc_slice fb = {(const uint8_t *)fl, sizeof fl};
  ck_assert_int_eq(lnc_enc_miniblock(nested, &fb, 1, 2, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.fsl_dim, 4);
  ck_assert_uint_eq(out.n_item_validity, 0);
  ck_assert_int_eq(lnc_enc_block(nested, fb, 2, &eb_arena, &out, &err), 0);

  /* per value: one row of fsl<float,64> with item validity = 8 + 256 bytes */
  uint8_t row[264];
  memset(row, 0xFF, 8);
  for (int i = 0; i < 256; i++) row[8 + i] = (uint8_t)i;
  struct lnc_slice rv = {row, sizeof row};
  lnc_enc *pv = eb_fsl(64, 1, eb_flat(32));
  ck_assert_int_eq(lnc_enc_fixed_per_value(pv, rv, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.n, 1);
  ck_assert_uint_eq(out.fsl_dim, 64);
  ck_assert_ptr_eq(out.item_validity[0], row);
  ck_assert_ptr_eq(out.data, row + 8);
  ck_assert_uint_eq(out.data_len, 256);
  rv.len = 263;
  ck_assert_int_eq(lnc_enc_fixed_per_value(pv, rv, &eb_arena, &out, &err), LNC_ECORRUPT);
  rv.len = 5;
  ck_assert_int_eq(lnc_enc_fixed_per_value(pv, rv, &eb_arena, &out, &err), LNC_ECORRUPT);

  /* all-null items: Constant without value, only validity bytes */
  lnc_enc *an = eb_fsl(4, 1, eb_constant(NULL, 0));
  uint8_t zero = 0;
  struct lnc_slice zb = {&zero, 1};
  ck_assert_int_eq(lnc_enc_fixed_per_value(an, zb, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.bits, 0);
  ck_assert_uint_eq(out.n_item_validity, 1);
  ck_assert_int_eq(lnc_enc_miniblock(an, &zb, 1, 2, &eb_arena, &out, &err), 0);

  /* unsupported shapes */
  ck_assert_int_eq(lnc_enc_miniblock(eb_fsl(0, 0, eb_flat(32)), &fb, 1, 1, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_miniblock(eb_fsl(2, 0, eb_variable(32)), &fb, 1, 1, &eb_arena, &out, &err),
                   LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_enc_miniblock(eb_fsl(2, 0, NULL), &fb, 1, 1, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  lnc_enc *deep = eb_flat(32);
  for (int i = 0; i < 5; i++) deep = eb_fsl(1, 1, deep);
  ck_assert_int_eq(lnc_enc_miniblock(deep, &fb, 1, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_enc_miniblock(eb_fsl(1ull << 20, 0, eb_fsl(1ull << 20, 0, eb_flat(8))), &fb,
                                     1, 1, &eb_arena, &out, &err),
                   LNC_EUNSUPPORTED);
}
END_TEST

START_TEST(test_packed_struct) {
  uint64_t bits[3] = {32, 64, 8};
  lnc_enc *e = eb_packed(bits, 3, eb_flat(104));
  uint8_t rows[13 * 3];
  for (int i = 0; i < 39; i++) rows[i] = (uint8_t)i;
  struct lnc_slice b = {rows, sizeof rows};
  ck_assert_int_eq(lnc_enc_miniblock(e, &b, 1, 3, &eb_arena, &out, &err), 0);
  ck_assert_uint_eq(out.bits, 104);
  ck_assert_uint_eq(out.n, 3);
  ck_assert_uint_eq(out.data_len, 39);
  ck_describe(e, "PackedStruct([32, 64, 8], Flat(104))");
  ck_assert_int_eq(lnc_enc_miniblock(eb_packed(bits, 3, eb_flat(96)), &b, 1, 3, &eb_arena, &out, &err),
                   LNC_ECORRUPT);
  uint64_t odd[2] = {32, 3};
  ck_assert_int_eq(lnc_enc_miniblock(eb_packed(odd, 2, eb_flat(35)), &b, 1, 3, &eb_arena, &out, &err),
                   LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_enc_miniblock(e, &b, 1, 4, &eb_arena, &out, &err), LNC_ECORRUPT);
}
END_TEST

START_TEST(test_vps) {
  /* struct<int32, string(FSST off), large_binary(General zstd)>: fixed 32, len32, len64 */
  uint8_t table[8 + 256 * 9] = {0};
  uint64_t h = 0x46535354ull << 32; /* switch off: codes are the bytes */
  memcpy(table, &h, 8);
  lnc_enc *fields[3] = {eb_flat(32), eb_fsst(table, sizeof table, eb_variable(32)),
                        eb_general(ZSTD, eb_variable(64))};
  uint64_t bpv[3] = {32, 0, 0}, bpl[3] = {0, 32, 64};
  lnc_enc *e = eb_vps(3, fields, bpv, bpl);
  struct lnc_slice z = zstd_frame("compressed!", 11, 1);
  struct eb_w w = {0};
  eb_u32(&w, 42);
  eb_u32(&w, 5);
  eb_put(&w, "hello", 5);
  eb_u64(&w, z.len);
  eb_put(&w, z.p, z.len);
  struct lnc_slice parts[3];
  ck_assert_msg(lnc_enc_vps_split(e, eb_slice(&w), &eb_arena, parts, 3, &err) == 0, "%s",
                err.message);
  ck_assert_uint_eq(parts[0].len, 4);
  ck_assert_uint_eq(parts[0].p[0], 42);
  ck_assert(parts[1].len == 5 && memcmp(parts[1].p, "hello", 5) == 0);
  ck_assert(parts[2].len == 11 && memcmp(parts[2].p, "compressed!", 11) == 0);
  ck_describe(e, "VariablePackedStruct(Flat(32), Fsst(Variable(Flat(32))), General(zstd, "
                 "Variable(Flat(64))))");
  /* every truncation fails; trailing bytes fail; wrong field count fails */
  for (size_t l = 0; l < w.len; l++) {
    struct lnc_slice t = {w.p, l};
    ck_assert_int_ne(lnc_enc_vps_split(e, t, &eb_arena, parts, 3, &err), 0);
  }
  eb_u8(&w, 0);
  ck_assert_int_eq(lnc_enc_vps_split(e, eb_slice(&w), &eb_arena, parts, 3, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_vps_split(e, eb_slice(&w), &eb_arena, parts, 2, &err), LNC_ECORRUPT);
  /* rejected elsewhere, by name */
  struct lnc_slice b = eb_slice(&w);
  ck_assert_int_eq(lnc_enc_miniblock(e, &b, 1, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  ck_assert(strstr(err.message, "VariablePackedStruct") != NULL);
  ck_assert_int_eq(lnc_enc_vps_split(eb_flat(32), b, &eb_arena, parts, 1, &err), LNC_EUNSUPPORTED);
}
END_TEST

START_TEST(test_unsupported_and_describe) {
  struct lnc_slice b = {(const uint8_t *)"12345678", 8};
  lnc_enc *range = eb_range(), *delta = eb_delta(eb_flat(8)), *dict = eb_dict(eb_inline(32), eb_variable(32));
  lnc_enc *all[3] = {range, delta, dict};
  const char *names[3] = {"Range", "Delta", "Dictionary"};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(lnc_enc_miniblock(all[i], &b, 1, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
    ck_assert_msg(strstr(err.message, names[i]) != NULL, "%s", err.message);
    ck_assert_int_eq(lnc_enc_block(all[i], b, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
    ck_assert_str_eq(lnc_enc_name(all[i]), names[i]);
  }
  ck_describe(range, "Range(64)");
  ck_describe(delta, "Delta(64, Flat(8))");
  ck_describe(dict, "Dictionary(InlineBitpacking(32), Variable(Flat(32)))");
  ck_describe(eb_inline(32), "InlineBitpacking(32)");
  ck_describe(eb_ool(16, 2), "OutOfLineBitpacking(16, Flat(2))");
  ck_describe(eb_flat_c(64, LZ4), "Flat(64, lz4)");
  ck_describe(eb_fsl(128, 0, eb_flat(32)), "FixedSizeList(128, Flat(32))");
  ck_describe(NULL, "(none)");
  lnc_enc unset = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__INIT;
  ck_describe(&unset, "(none)");
  ck_assert_int_eq(lnc_enc_block(&unset, b, 1, &eb_arena, &out, &err), LNC_EUNSUPPORTED);
  ck_assert_int_eq(lnc_enc_block(NULL, b, 1, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* a case with a NULL body */
  lnc_enc hollow = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__INIT;
  hollow.compression_case = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL;
  ck_assert_int_eq(lnc_enc_block(&hollow, b, 1, &eb_arena, &out, &err), LNC_ECORRUPT);
  /* a hostile, deeply nested tree */
  lnc_enc *deep = eb_flat(8);
  for (int i = 0; i < 10000; i++) deep = eb_general(ZSTD, deep);
  ck_assert_int_eq(lnc_enc_block(deep, b, 1, &eb_arena, &out, &err), LNC_ECORRUPT);
  struct lnc_buf d = {0};
  ck_assert_int_eq(lnc_enc_describe(deep, &d), 0);
  lnc_buf_free(&d);
  /* levels must be integers that fit 16 bits */
  uint32_t big[2] = {70000, 1};
  struct lnc_slice bb = {(const uint8_t *)big, 8};
  const uint16_t *lv;
  ck_assert_int_eq(lnc_enc_levels(eb_flat(32), bb, 2, &eb_arena, &lv, &err), LNC_ECORRUPT);
  ck_assert_int_eq(lnc_enc_levels(eb_variable(32), var_block(4, 0), NW, &eb_arena, &lv, &err),
                   LNC_ECORRUPT);
  uint8_t bm = 0x05;
  struct lnc_slice bms = {&bm, 1};
  ck_assert_int_eq(lnc_enc_levels(eb_flat(1), bms, 3, &eb_arena, &lv, &err), 0);
  ck_assert(lv[0] == 1 && lv[1] == 0 && lv[2] == 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("encodings");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, eb_setup, eb_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_flat);
  tcase_add_test(tc, test_variable);
  tcase_add_test(tc, test_variable_corrupt);
  tcase_add_test(tc, test_constant);
  tcase_add_test(tc, test_rle);
  tcase_add_test(tc, test_bss);
  tcase_add_test(tc, test_general);
  tcase_add_test(tc, test_general_corrupt);
  tcase_add_test(tc, test_fsl);
  tcase_add_test(tc, test_packed_struct);
  tcase_add_test(tc, test_vps);
  tcase_add_test(tc, test_unsupported_and_describe);
  suite_add_tcase(s, tc);
  return tsup_run(s);
}
