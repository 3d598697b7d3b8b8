/* Run-length encoding: run values (Flat w) plus run lengths (Flat 8, or wider in newer
 * writers). Mini-block chunks keep the two streams in two buffers; the block form (2.2 levels)
 * is `u64 values_len, values, lengths`. Runs are expanded until n values are produced. */
#include "internal.h"

static int rle_widths(const Lance__Encodings21__Rle *r, size_t *vw, size_t *rw,
                      struct lnc_error *err) {
  uint64_t vb, rb;
  int rc = lnc_enc_flat_bits(r->values, "Rle values", &vb, err);
  if (rc) return rc;
  if ((rc = lnc_enc_flat_bits(r->run_lengths, "Rle run lengths", &rb, err))) return rc;
  if (vb == 0 || vb % 8 || vb > 1024)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Rle of %llu-bit values", (unsigned long long)vb);
  if (rb != 8 && rb != 16 && rb != 32 && rb != 64)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Rle with %llu-bit run lengths", (unsigned long long)rb);
  *vw = vb / 8;
  *rw = rb / 8;
  return 0;
}

static int expand(const uint8_t *vals, const uint8_t *lens, size_t k, size_t w, size_t rw,
                  uint64_t n, struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  /* A run holds at most 2^(8*rw)-1 values: refuse counts the runs cannot reach before
   * allocating for them. */
  uint64_t max_run = rw == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * rw)) - 1, reach;
  if (lnc_mul(k, max_run, &reach) && n > reach)
    return lnc_errf(err, LNC_ECORRUPT, "Rle: %zu runs cannot hold %llu values", k,
                    (unsigned long long)n);
  uint64_t total;
  if (!lnc_mul(n, w, &total) || total > LNC_ENC_MAX_DECOMPRESSED)
    return lnc_errf(err, LNC_ECORRUPT, "Rle: %llu values is too many", (unsigned long long)n);
  uint8_t *dst = lnc_arena_alloc(a, total);
  if (!dst) return lnc_enc_nomem(err, "Rle output");
  uint64_t done = 0;
  for (size_t r = 0; r < k && done < n; r++) {
    uint64_t len = lnc_rdw(lens + r * rw, (unsigned)rw);
    if (len > n - done) len = n - done;
    const uint8_t *v = vals + r * w;
    uint8_t *d = dst + done * w;
    switch (w) {
    case 1: memset(d, v[0], len); break;
    case 2: {
      uint16_t x = lnc_rd16(v);
      for (uint64_t i = 0; i < len; i++) memcpy(d + 2 * i, &x, 2);
    } break;
    case 4: {
      uint32_t x = lnc_rd32(v);
      for (uint64_t i = 0; i < len; i++) memcpy(d + 4 * i, &x, 4);
    } break;
    case 8: {
      uint64_t x = lnc_rd64(v);
      for (uint64_t i = 0; i < len; i++) memcpy(d + 8 * i, &x, 8);
    } break;
    default:
      for (uint64_t i = 0; i < len; i++) memcpy(d + w * i, v, w);
      break;
    }
    done += len;
  }
  if (done != n)
    return lnc_errf(err, LNC_ECORRUPT, "Rle runs hold %llu values, %llu expected",
                    (unsigned long long)done, (unsigned long long)n);
  lnc_values_fixed(out, n, (uint32_t)(w * 8), dst, total);
  return 0;
}

int lnc_rle_miniblock(const Lance__Encodings21__Rle *r, const struct lnc_slice *bufs, size_t nbufs,
                      uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err) {
  size_t w, rw;
  int rc = rle_widths(r, &w, &rw, err);
  if (rc) return rc;
  if (nbufs != 2) return lnc_errf(err, LNC_ECORRUPT, "Rle chunk has %zu buffers, want 2", nbufs);
  size_t k = bufs[0].len / w;
  if (bufs[1].len / rw < k) k = bufs[1].len / rw;
  return expand(bufs[0].p, bufs[1].p, k, w, rw, n, a, out, err);
}

int lnc_rle_block(const Lance__Encodings21__Rle *r, struct lnc_slice buf, uint64_t n,
                  struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  size_t w, rw;
  int rc = rle_widths(r, &w, &rw, err);
  if (rc) return rc;
  if (buf.len < 8) return lnc_errf(err, LNC_ECORRUPT, "Rle block of %zu bytes", buf.len);
  uint64_t vlen = lnc_rd64(buf.p);
  if (vlen > buf.len - 8 || vlen % w)
    return lnc_errf(err, LNC_ECORRUPT, "Rle block: %llu bytes of run values in %zu",
                    (unsigned long long)vlen, buf.len);
  size_t k = vlen / w;
  if ((buf.len - 8 - vlen) / rw < k)
    return lnc_errf(err, LNC_ECORRUPT, "Rle block: run lengths truncated");
  return expand(buf.p + 8, buf.p + 8 + vlen, k, w, rw, n, a, out, err);
}
