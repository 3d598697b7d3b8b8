/* FastLanes bit unpacking (1024-value blocks in the "transposed" order, see
 * lance-format-compression.md §5.1) and the two Lance bitpacking encodings built on it:
 * InlineBitpacking (width word before each block) and OutOfLineBitpacking (width in the tree). */
#include "internal.h"

static const uint8_t FL_ORDER[8] = {0, 4, 2, 6, 1, 5, 3, 7};

/* Row `row` of every lane lands in out[FL_ORDER[row/8]*16 + (row%8)*128 + lane]: a contiguous
 * run of LANES values. Each lane is its own little-endian bit stream over the words
 * in[LANES*k + lane], so one row of all lanes reads one or two contiguous rows of words —
 * the inner loop is a plain shift/or/mask over arrays that compilers vectorise. */
#define FL_UNPACK(T, TY)                                                     \
  static void fl_unpack_##T(unsigned W, const TY *in, TY *out) {             \
    enum { LANES = 1024 / T };                                               \
    if (W == 0) {                                                            \
      memset(out, 0, 1024 * sizeof(TY));                                     \
      return;                                                                \
    }                                                                        \
    const TY mask = W == T ? (TY) ~(TY)0 : (TY)(((TY)1 << W) - 1);           \
    for (unsigned row = 0; row < T; row++) {                                 \
      TY *o = out + FL_ORDER[row / 8] * 16 + (row % 8) * 128;                \
      unsigned bit = row * W, sh = bit % T;                                  \
      const TY *p = in + LANES * (bit / T);                                  \
      if (sh + W <= T) {                                                     \
        for (unsigned l = 0; l < LANES; l++) o[l] = (TY)(p[l] >> sh) & mask; \
      } else {                                                               \
        const TY *q = p + LANES;                                             \
        for (unsigned l = 0; l < LANES; l++)                                 \
          o[l] = (TY)((TY)(p[l] >> sh) | (TY)(q[l] << (T - sh))) & mask;     \
      }                                                                      \
    }                                                                        \
  }
FL_UNPACK(32, uint32_t)
FL_UNPACK(64, uint64_t)

/* For T = 8 and 16 the loop above runs in 32-bit lanes (C promotes the narrow words), and
 * widening and narrowing cost more than the shifts. A row of every lane is 1024 bits = 16
 * u64 words whatever T is, so these treat each word as 64/T lanes at once: a shift moves
 * bits across lane borders, and per-lane masks drop exactly those. 2.5x (T=16) to 7x (T=8)
 * faster here; every rep/def level stream is T=16. */
typedef uint64_t lnc_u64_alias __attribute__((may_alias)); /* out is read as T-bit values */

static inline uint64_t lanes_of(unsigned T, uint64_t m) {
  for (unsigned s = T; s < 64; s *= 2) m |= m << s;
  return m;
}

#define FL_UNPACK_SWAR(T)                                                                         \
  static void fl_unpack_##T(unsigned W, const uint64_t *in, void *outv) {                         \
    lnc_u64_alias *out = outv;                                                                    \
    if (W == 0) {                                                                                 \
      memset(outv, 0, 1024 * (T / 8));                                                            \
      return;                                                                                     \
    }                                                                                             \
    const uint64_t wm = W == T ? ((uint64_t)1 << T) - 1 : ((uint64_t)1 << W) - 1;                 \
    for (unsigned row = 0; row < T; row++) {                                                      \
      lnc_u64_alias *o = out + (FL_ORDER[row / 8] * 16 + (row % 8) * 128) * T / 64;               \
      unsigned bit = row * W, sh = bit % T;                                                       \
      const uint64_t *p = in + 16 * (bit / T);                                                    \
      if (sh + W <= T) {                                                                          \
        const uint64_t m = lanes_of(T, wm);                                                       \
        for (unsigned l = 0; l < 16; l++) o[l] = (p[l] >> sh) & m;                                \
      } else { /* low T-sh bits from this word, the rest from the next one */                     \
        const uint64_t *q = p + 16, lo = ((uint64_t)1 << (T - sh)) - 1;                           \
        const uint64_t ml = lanes_of(T, lo), mh = lanes_of(T, wm & ~lo);                          \
        for (unsigned l = 0; l < 16; l++) o[l] = ((p[l] >> sh) & ml) | ((q[l] << (T - sh)) & mh); \
      }                                                                                           \
    }                                                                                             \
  }
FL_UNPACK_SWAR(8)
FL_UNPACK_SWAR(16)

void lnc_fl_unpack(unsigned T, unsigned W, const uint8_t *packed, void *out) {
  /* Copy the words to aligned storage: chunk buffers carry no alignment promise. */
  uint64_t words[1024];
  size_t bytes = (size_t)128 * W;
  if (bytes) memcpy(words, packed, bytes);
  switch (T) {
  case 8: fl_unpack_8(W, words, out); break;
  case 16: fl_unpack_16(W, words, out); break;
  case 32: fl_unpack_32(W, (const uint32_t *)words, out); break;
  default: fl_unpack_64(W, (const uint64_t *)words, out); break;
  }
}

uint64_t lnc_fl_get(unsigned T, unsigned W, const uint8_t *packed, unsigned i) {
  if (W == 0) return 0;
  unsigned lanes = 1024 / T, wb = T / 8;
  unsigned lane = i % lanes;
  unsigned row = 8 * FL_ORDER[((i % 128) / 16) & ~(lanes / 16 - 1)] + i / 128;
  unsigned bit = row * W, k = bit / T, sh = bit % T;
  uint64_t v = lnc_rdw(packed + ((size_t)lanes * k + lane) * wb, wb) >> sh;
  if (sh + W > T) v |= lnc_rdw(packed + ((size_t)lanes * (k + 1) + lane) * wb, wb) << (T - sh);
  return W == 64 ? v : v & ((UINT64_C(1) << W) - 1);
}

static int check_t(uint64_t t, const char *what, struct lnc_error *err) {
  if (t == 8 || t == 16 || t == 32 || t == 64) return 0;
  return lnc_errf(err, LNC_EUNSUPPORTED, "%s: uncompressed width %llu is not 8/16/32/64", what,
                  (unsigned long long)t);
}

int lnc_inline_bitpacking(const Lance__Encodings21__InlineBitpacking *ib, struct lnc_slice buf,
                          uint64_t n, int single_block, struct lnc_arena *a,
                          struct lnc_values *out, struct lnc_error *err) {
  return lnc_inline_bitpacking_pick(ib, buf, n, single_block, NULL, 0, a, out, err);
}

/* Unpacks the values want[0..nwant) that fall in block b (values b*1024 ..) of a packed
 * block at `packed` into dst (T/8 bytes a value, indexed like the whole output). */
static int pick_block(unsigned T, unsigned W, const uint8_t *packed, uint64_t b, uint64_t n,
                      const uint32_t *want, size_t nwant, uint8_t *dst, const char *what,
                      struct lnc_error *err) {
  unsigned wb = T / 8;
  for (size_t k = 0; k < nwant; k++) {
    if (want[k] >= n)
      return lnc_errf(err, LNC_EINTERNAL, "%s: value %u of %llu wanted", what, want[k], (unsigned long long)n);
    if (want[k] / 1024 != b) continue;
    lnc_wrw(dst + (size_t)want[k] * wb, lnc_fl_get(T, W, packed, want[k] % 1024), wb);
  }
  return 0;
}

/* want: when not NULL, the value indices (< n) the caller will read; only those are
 * unpacked, each in a few shifts (lnc_fl_get), where a whole block is 1024: a take of one
 * row per chunk reads one value of the chunk. The rest of out stays unwritten. The checks
 * are the same either way, so a corrupt chunk fails the same. */
int lnc_inline_bitpacking_pick(const Lance__Encodings21__InlineBitpacking *ib, struct lnc_slice buf,
                               uint64_t n, int single_block, const uint32_t *want, size_t nwant,
                               struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  uint64_t T = ib->uncompressed_bits_per_value;
  int rc = check_t(T, "InlineBitpacking", err);
  if (rc) return rc;
  if ((rc = lnc_enc_maybe_decompress(ib->values, buf, a, &buf, err))) return rc;
  if (single_block && n > 1024)
    return lnc_errf(err, LNC_ECORRUPT, "InlineBitpacking chunk of %llu values (max 1024)",
                    (unsigned long long)n);
  unsigned wb = (unsigned)T / 8;
  uint64_t nblocks = n / 1024 + (n % 1024 != 0);
  /* Every block is at least its width word: bounds the allocation by the input size. */
  if (nblocks > buf.len / wb || nblocks > LNC_ENC_MAX_DECOMPRESSED / (1024 * wb))
    return lnc_errf(err, LNC_ECORRUPT, "InlineBitpacking: %zu bytes cannot hold %llu blocks",
                    buf.len, (unsigned long long)nblocks);
  uint8_t *dst = lnc_arena_alloc(a, nblocks * 1024 * wb);
  if (!dst) return lnc_enc_nomem(err, "bitpacking output");
  size_t pos = 0;
  for (uint64_t b = 0; b < nblocks; b++) {
    if (buf.len - pos < wb)
      return lnc_errf(err, LNC_ECORRUPT, "InlineBitpacking block %llu truncated",
                      (unsigned long long)b);
    uint64_t W = lnc_rdw(buf.p + pos, wb);
    pos += wb;
    if (W > T)
      return lnc_errf(err, LNC_ECORRUPT, "InlineBitpacking block width %llu > %llu",
                      (unsigned long long)W, (unsigned long long)T);
    size_t need = 128 * (size_t)W;
    if (buf.len - pos < need)
      return lnc_errf(err, LNC_ECORRUPT, "InlineBitpacking block %llu needs %zu bytes, has %zu",
                      (unsigned long long)b, need, buf.len - pos);
    if (want) {
      if ((rc = pick_block((unsigned)T, (unsigned)W, buf.p + pos, b, n, want, nwant, dst, "InlineBitpacking", err))) return rc;
    } else {
      lnc_fl_unpack((unsigned)T, (unsigned)W, buf.p + pos, dst + b * 1024 * wb);
    }
    pos += need;
  }
  lnc_values_fixed(out, n, (uint32_t)T, dst, (size_t)n * wb);
  return 0;
}

int lnc_outofline_bitpacking(const Lance__Encodings21__OutOfLineBitpacking *ob,
                             struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                             struct lnc_values *out, struct lnc_error *err) {
  return lnc_outofline_bitpacking_pick(ob, buf, n, NULL, 0, a, out, err);
}

/* want: as lnc_inline_bitpacking_pick's. A tail stored unpacked is read in place. */
int lnc_outofline_bitpacking_pick(const Lance__Encodings21__OutOfLineBitpacking *ob,
                                  struct lnc_slice buf, uint64_t n, const uint32_t *want,
                                  size_t nwant, struct lnc_arena *a, struct lnc_values *out,
                                  struct lnc_error *err) {
  uint64_t T = ob->uncompressed_bits_per_value, W;
  int rc = check_t(T, "OutOfLineBitpacking", err);
  if (rc) return rc;
  if ((rc = lnc_enc_flat_bits(ob->values, "OutOfLineBitpacking values", &W, err))) return rc;
  if (W > T)
    return lnc_errf(err, LNC_ECORRUPT, "OutOfLineBitpacking width %llu > %llu",
                    (unsigned long long)W, (unsigned long long)T);
  unsigned wb = (unsigned)T / 8;
  /* W = 0 allows huge n from a tiny buffer; cap n before any arithmetic on it. */
  if (n > LNC_ENC_MAX_DECOMPRESSED / wb)
    return lnc_errf(err, LNC_ECORRUPT, "OutOfLineBitpacking: %llu values is too many",
                    (unsigned long long)n);
  uint64_t wpb = 1024 * W / T; /* exact: T divides 1024 */
  uint64_t words = buf.len / wb, full = n / 1024, tail = n % 1024;
  int raw_tail = tail > 0 && words == full * wpb + tail;
  uint64_t need = full * wpb + (tail && !raw_tail ? wpb : 0);
  if (words < need)
    return lnc_errf(err, LNC_ECORRUPT,
                    "OutOfLineBitpacking: %zu bytes too short for %llu values of width %llu",
                    buf.len, (unsigned long long)n, (unsigned long long)W);
  uint64_t nblocks = full + (tail != 0);
  uint8_t *dst = lnc_arena_alloc(a, nblocks * 1024 * wb);
  if (!dst) return lnc_enc_nomem(err, "bitpacking output");
  size_t block_bytes = wpb * wb;
  if (want) {
    for (uint64_t b = 0; b < full + (tail && !raw_tail); b++)
      if ((rc = pick_block((unsigned)T, (unsigned)W, buf.p + b * block_bytes, b, n, want, nwant, dst, "OutOfLineBitpacking", err))) return rc;
    for (size_t k = 0; raw_tail && k < nwant; k++)
      if (want[k] / 1024 == full && want[k] < n)
        memcpy(dst + (size_t)want[k] * wb, buf.p + full * block_bytes + (size_t)(want[k] % 1024) * wb, wb);
  } else {
    for (uint64_t b = 0; b < full; b++)
      lnc_fl_unpack((unsigned)T, (unsigned)W, buf.p + b * block_bytes, dst + b * 1024 * wb);
    if (tail) {
      const uint8_t *src = buf.p + full * block_bytes;
      if (raw_tail)
        memcpy(dst + full * 1024 * wb, src, tail * wb);
      else
        lnc_fl_unpack((unsigned)T, (unsigned)W, src, dst + full * 1024 * wb);
    }
  }
  lnc_values_fixed(out, n, (uint32_t)T, dst, (size_t)n * wb);
  return 0;
}
