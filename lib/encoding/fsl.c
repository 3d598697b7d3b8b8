/* FixedSizeList of fixed-width items, possibly nested, with optional item validity per layer.
 * Mini-block: one validity bitmap buffer per layer that has validity, then the items buffer.
 * Per-value (full-zip): each row is its validity bitmaps then its items, zipped together. */
#include "internal.h"

struct fsl_shape {
  int nlayers, nvalid;
  uint64_t valid_cum[LNC_FSL_MAX_LEVELS];  /* cum_dim of each layer with validity, outermost first */
  uint8_t valid_level[LNC_FSL_MAX_LEVELS]; /* and its nesting level (0 = outermost) */
  uint64_t dim;                            /* product of all dimensions */
  uint32_t bits;                           /* item width; 0 = all items null (Constant without value) */
  const Lance__Encodings21__Flat *flat;
};

static int fsl_shape(const Lance__Encodings21__FixedSizeList *f, struct fsl_shape *s,
                     struct lnc_error *err) {
  memset(s, 0, sizeof *s);
  s->dim = 1;
  for (;;) {
    if (++s->nlayers > LNC_FSL_MAX_LEVELS)
      return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList nested more than %d deep",
                      LNC_FSL_MAX_LEVELS);
    if (f->items_per_value == 0)
      return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList of dimension 0");
    if (!lnc_mul(s->dim, f->items_per_value, &s->dim) || s->dim > UINT32_MAX)
      return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList dimension too large");
    if (f->has_validity) { /* at most one per layer: nlayers bounds it */
      s->valid_level[s->nvalid] = (uint8_t)(s->nlayers - 1);
      s->valid_cum[s->nvalid++] = s->dim;
    }
    const lnc_enc *c = f->values;
    if (!c) return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList without values encoding");
    switch (c->compression_case) {
    case LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST:
      if (!(f = c->fixed_size_list)) return lnc_errf(err, LNC_ECORRUPT, "empty FixedSizeList");
      continue;
    case LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT: {
      if (!c->flat) return lnc_errf(err, LNC_ECORRUPT, "empty Flat");
      uint64_t b = c->flat->bits_per_value;
      if (b == 0 || (b > 8 && b % 8) || b > UINT32_MAX)
        return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList of %llu-bit items",
                        (unsigned long long)b);
      s->flat = c->flat;
      s->bits = (uint32_t)b;
      return 0;
    }
    case LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_CONSTANT:
      if (c->constant && c->constant->value.len == 0) return 0; /* all items null */
      return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList of a constant with a value");
    default:
      return lnc_enc_unsupported(c, "FixedSizeList items", err);
    }
  }
}

static void fsl_out(struct lnc_values *out, const struct fsl_shape *s, uint64_t n) {
  out->n = n;
  out->fsl_dim = s->dim;
  out->bits = s->bits;
  out->n_item_validity = (uint32_t)s->nvalid;
  for (int i = 0; i < s->nvalid; i++) {
    out->item_validity_level[i] = s->valid_level[i];
    out->item_validity_per_value[i] = s->valid_cum[i];
  }
}

int lnc_fsl_miniblock(const Lance__Encodings21__FixedSizeList *f, const struct lnc_slice *bufs,
                      size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err) {
  struct fsl_shape s;
  int rc = fsl_shape(f, &s, err);
  if (rc) return rc;
  size_t want = (size_t)s.nvalid + (s.flat != NULL);
  if (nbufs != want && !(s.flat == NULL && nbufs == want + 1))
    return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList chunk has %zu buffers, want %zu", nbufs, want);
  uint64_t items;
  if (!lnc_mul(n, s.dim, &items))
    return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList: %llu rows is too many", (unsigned long long)n);
  if (s.flat) {
    if ((rc = lnc_flat_decode(s.flat, bufs[s.nvalid], items, a, out, err))) return rc;
  } else {
    lnc_values_fixed(out, n, 0, NULL, 0);
  }
  fsl_out(out, &s, n);
  for (int i = 0; i < s.nvalid; i++) {
    size_t need;
    if (!lnc_fixed_bytes(n, s.valid_cum[i], &need) || bufs[i].len < need)
      return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList validity %d: %zu bytes for %llu rows", i,
                      bufs[i].len, (unsigned long long)n);
    out->item_validity[i] = bufs[i].p;
  }
  return 0;
}

int lnc_fsl_block(const Lance__Encodings21__FixedSizeList *f, struct lnc_slice buf, uint64_t n,
                  struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  struct fsl_shape s;
  int rc = fsl_shape(f, &s, err);
  if (rc) return rc;
  if (s.nvalid)
    return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList with item validity in a block buffer");
  return lnc_fsl_miniblock(f, &buf, s.flat ? 1 : 0, n, a, out, err);
}

int lnc_fsl_per_value(const Lance__Encodings21__FixedSizeList *f, struct lnc_slice value,
                      struct lnc_values *out, struct lnc_error *err) {
  struct fsl_shape s;
  int rc = fsl_shape(f, &s, err);
  if (rc) return rc;
  if (s.bits % 8)
    return lnc_errf(err, LNC_EUNSUPPORTED, "FixedSizeList of %u-bit items in a full-zip value", s.bits);
  size_t pos = 0;
  lnc_values_fixed(out, 1, 0, NULL, 0);
  fsl_out(out, &s, 1);
  for (int i = 0; i < s.nvalid; i++) {
    size_t vb = (size_t)((s.valid_cum[i] + 7) / 8);
    if (vb > value.len - pos)
      return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList value of %zu bytes: validity truncated",
                      value.len);
    out->item_validity[i] = value.p + pos;
    pos += vb;
  }
  size_t db = (size_t)(s.dim * (s.bits / 8));
  if (db > value.len - pos)
    return lnc_errf(err, LNC_ECORRUPT, "FixedSizeList value of %zu bytes: items truncated",
                    value.len);
  if (s.bits) {
    out->data = value.p + pos;
    out->data_len = db;
  }
  return 0;
}
