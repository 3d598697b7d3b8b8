/* Fixed-width leaves: Flat (values back to back, optionally buffer-compressed), Constant (one
 * scalar repeated; no value = all null), ByteStreamSplit (w byte streams, re-interleaved) and
 * PackedStruct (row-major fixed-width children, returned as one wide value). */
#include "internal.h"

int lnc_flat_decode(const Lance__Encodings21__Flat *f, struct lnc_slice buf, uint64_t n,
                    struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  uint64_t bits = f->bits_per_value;
  if (bits == 0) return lnc_errf(err, LNC_ECORRUPT, "Flat with 0 bits per value");
  if ((bits > 8 && bits % 8) || bits > UINT32_MAX)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Flat(%llu): width not supported",
                    (unsigned long long)bits);
  int rc = lnc_enc_maybe_decompress(f->data, buf, a, &buf, err);
  if (rc) return rc;
  size_t need;
  if (!lnc_fixed_bytes(n, bits, &need) || buf.len < need)
    return lnc_errf(err, LNC_ECORRUPT, "Flat(%llu): %zu bytes cannot hold %llu values",
                    (unsigned long long)bits, buf.len, (unsigned long long)n);
  lnc_values_fixed(out, n, (uint32_t)bits, buf.p, need);
  return 0;
}

int lnc_constant_decode(const Lance__Encodings21__Constant *c, uint64_t n, struct lnc_arena *a,
                        struct lnc_values *out, struct lnc_error *err) {
  size_t w = c->value.len;
  if (w == 0) { /* no value: every value is null */
    lnc_values_fixed(out, n, 0, NULL, 0);
    return 0;
  }
  if (w > UINT32_MAX / 8)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Constant value of %zu bytes", w);
  if (n == 1) {
    lnc_values_fixed(out, 1, (uint32_t)(w * 8), c->value.data, w);
    return 0;
  }
  uint64_t total;
  if (!lnc_mul(n, w, &total) || total > LNC_ENC_MAX_DECOMPRESSED)
    return lnc_errf(err, LNC_ECORRUPT, "Constant: %llu values of %zu bytes is too many",
                    (unsigned long long)n, w);
  uint8_t *dst = lnc_arena_alloc(a, total);
  if (!dst) return lnc_enc_nomem(err, "constant values");
  for (uint64_t i = 0; i < n; i++) memcpy(dst + i * w, c->value.data, w);
  lnc_values_fixed(out, n, (uint32_t)(w * 8), dst, total);
  return 0;
}

int lnc_bss_miniblock(const Lance__Encodings21__ByteStreamSplit *b, const struct lnc_slice *bufs,
                      size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err) {
  uint64_t bits;
  int rc = lnc_enc_flat_bits(b->values, "ByteStreamSplit values", &bits, err);
  if (rc) return rc;
  if (bits == 0 || bits % 8 || bits > 1024)
    return lnc_errf(err, LNC_EUNSUPPORTED, "ByteStreamSplit of %llu-bit values",
                    (unsigned long long)bits);
  if (nbufs != 1)
    return lnc_errf(err, LNC_ECORRUPT, "ByteStreamSplit chunk has %zu buffers, want 1", nbufs);
  size_t w = bits / 8, total;
  if (!lnc_fixed_bytes(n, bits, &total) || bufs[0].len < total)
    return lnc_errf(err, LNC_ECORRUPT, "ByteStreamSplit: %zu bytes cannot hold %llu values",
                    bufs[0].len, (unsigned long long)n);
  uint8_t *dst = lnc_arena_alloc(a, total);
  if (!dst) return lnc_enc_nomem(err, "ByteStreamSplit output");
  for (size_t j = 0; j < w; j++) {
    const uint8_t *s = bufs[0].p + j * n;
    uint8_t *d = dst + j;
    for (uint64_t i = 0; i < n; i++) d[i * w] = s[i];
  }
  lnc_values_fixed(out, n, (uint32_t)bits, dst, total);
  return 0;
}

int lnc_packed_miniblock(const Lance__Encodings21__PackedStruct *p, const struct lnc_slice *bufs,
                         size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                         struct lnc_error *err, int depth) {
  if (p->n_bits_per_value == 0) return lnc_errf(err, LNC_ECORRUPT, "PackedStruct with no fields");
  uint64_t sum = 0;
  for (size_t i = 0; i < p->n_bits_per_value; i++) {
    uint64_t b = p->bits_per_value[i];
    if (b == 0 || b % 8 || b > UINT32_MAX || sum + b > UINT32_MAX)
      return lnc_errf(err, LNC_EUNSUPPORTED, "PackedStruct field %zu of %llu bits", i,
                      (unsigned long long)b);
    sum += b;
  }
  int rc = lnc_enc_miniblock_d(p->values, bufs, nbufs, n, a, out, err, depth + 1);
  if (rc) return rc;
  if (out->kind != LNC_VALUES_FIXED || out->bits != sum || out->fsl_dim)
    return lnc_errf(err, LNC_ECORRUPT, "PackedStruct of %llu bits holds %u-bit values",
                    (unsigned long long)sum, out->bits);
  return 0;
}
