/* Variable-width values (offsets + bytes) in their mini-block chunk form and their block form
 * (both block header variants), and VariablePackedStruct rows split into their fields.
 * Offsets come out as u64 into `data`; every offset is checked against the buffer first. */
#include "internal.h"

static int offset_width(const Lance__Encodings21__Variable *v, unsigned *w, struct lnc_error *err) {
  uint64_t bits;
  int rc = lnc_enc_flat_bits(v->offsets, "Variable offsets", &bits, err);
  if (rc) return rc;
  if (bits != 32 && bits != 64)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Variable offsets of %llu bits (want 32 or 64)",
                    (unsigned long long)bits);
  if (v->values &&
      v->values->scheme != LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_UNSPECIFIED)
    return lnc_errf(err, LNC_EUNSUPPORTED, "Variable with compressed values is not supported");
  *w = (unsigned)bits / 8;
  return 0;
}

/* Reads n+1 offsets of w bytes at p into a fresh u64 array, checking that they never decrease,
 * start at or after `lo` and end at or before `hi`; subtracts `base` from each. */
static int read_offsets(const uint8_t *p, unsigned w, uint64_t n, uint64_t lo, uint64_t hi,
                        uint64_t base, struct lnc_arena *a, uint64_t **out,
                        struct lnc_error *err) {
  uint64_t *o = lnc_arena_alloc(a, (n + 1) * sizeof *o);
  if (!o) return lnc_enc_nomem(err, "offsets");
  uint64_t prev = lo;
  for (uint64_t i = 0; i <= n; i++) {
    uint64_t v = w == 4 ? lnc_rd32(p + 4 * i) : lnc_rd64(p + 8 * i);
    if (v < prev || v > hi)
      return lnc_errf(err, LNC_ECORRUPT, "offset %llu of %llu is %llu, outside [%llu, %llu]",
                      (unsigned long long)i, (unsigned long long)n, (unsigned long long)v,
                      (unsigned long long)prev, (unsigned long long)hi);
    o[i] = v - base;
    prev = v;
  }
  *out = o;
  return 0;
}

int lnc_variable_miniblock(const Lance__Encodings21__Variable *v, struct lnc_slice buf, uint64_t n,
                           struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  unsigned w = 4;
  int rc = offset_width(v, &w, err);
  if (rc) return rc;
  if (n >= buf.len / w)
    return lnc_errf(err, LNC_ECORRUPT, "Variable chunk of %zu bytes cannot hold %llu offsets",
                    buf.len, (unsigned long long)n + 1);
  uint64_t first = w == 4 ? lnc_rd32(buf.p) : lnc_rd64(buf.p);
  /* Offsets are absolute in the chunk: the bytes start after the offset array. */
  if (first < (n + 1) * w || first > buf.len)
    return lnc_errf(err, LNC_ECORRUPT, "Variable chunk: first offset %llu is inside the offsets",
                    (unsigned long long)first);
  uint64_t *offs;
  if ((rc = read_offsets(buf.p, w, n, first, buf.len, first, a, &offs, err))) return rc;
  lnc_values_variable(out, n, buf.p + first, buf.len - first, offs);
  return 0;
}

int lnc_variable_block(struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                       struct lnc_values *out, struct lnc_error *err) {
  if (buf.len < 8)
    return lnc_errf(err, LNC_ECORRUPT, "Variable block of %zu bytes", buf.len);
  const uint8_t *p = buf.p;
  unsigned bits;
  uint64_t start, hdr;
  if (p[1] | p[2] | p[3]) {
    /* Older writers: u8 bits, then a u32/u64 value count, then u32/u64 bytes_start. */
    bits = p[0];
    if (bits == 32) {
      hdr = 9;
      if (buf.len < hdr) return lnc_errf(err, LNC_ECORRUPT, "Variable block header truncated");
      start = lnc_rd32(p + 5);
    } else if (bits == 64) {
      hdr = 17;
      if (buf.len < hdr) return lnc_errf(err, LNC_ECORRUPT, "Variable block header truncated");
      start = lnc_rd64(p + 9);
    } else {
      return lnc_errf(err, LNC_ECORRUPT, "Variable block with %u-bit offsets", bits);
    }
  } else {
    bits = lnc_rd32(p);
    if (bits == 32) {
      hdr = 8;
      start = lnc_rd32(p + 4);
    } else if (bits == 64) {
      hdr = 16;
      if (buf.len < hdr) return lnc_errf(err, LNC_ECORRUPT, "Variable block header truncated");
      start = lnc_rd64(p + 8);
    } else {
      return lnc_errf(err, LNC_ECORRUPT, "Variable block with %u-bit offsets", bits);
    }
  }
  unsigned w = bits / 8;
  if (start < hdr || start > buf.len || (start - hdr) / w < n + 1 || n >= buf.len)
    return lnc_errf(err, LNC_ECORRUPT,
                    "Variable block: bytes start %llu leaves no room for %llu offsets",
                    (unsigned long long)start, (unsigned long long)n + 1);
  /* Offsets index the value bytes that follow the offset array. */
  uint64_t *offs;
  int rc = read_offsets(p + hdr, w, n, 0, buf.len - start, 0, a, &offs, err);
  if (rc) return rc;
  lnc_values_variable(out, n, p + start, buf.len - start, offs);
  return 0;
}

int lnc_vps_split_d(const Lance__Encodings21__VariablePackedStruct *v, struct lnc_slice row,
                    struct lnc_arena *a, struct lnc_slice *fields_out, size_t nfields,
                    struct lnc_error *err, int depth) {
  if (nfields != v->n_fields)
    return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct has %zu fields, schema has %zu",
                    v->n_fields, nfields);
  size_t pos = 0;
  for (size_t i = 0; i < v->n_fields; i++) {
    const Lance__Encodings21__VariablePackedStruct__FieldEncoding *f = v->fields[i];
    if (!f || !f->value)
      return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct field %zu has no encoding", i);
    int rc;
    if (f->layout_case ==
        LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE) {
      uint64_t b = f->bits_per_value;
      if (b == 0 || b % 8)
        return lnc_errf(err, LNC_EUNSUPPORTED, "VariablePackedStruct field %zu of %llu bits", i,
                        (unsigned long long)b);
      if (b / 8 > row.len - pos)
        return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct field %zu past the row", i);
      struct lnc_slice val = {row.p + pos, (size_t)(b / 8)};
      struct lnc_values fv;
      if ((rc = lnc_enc_fixed_pv_d(f->value, val, a, &fv, err, depth + 1))) return rc;
      fields_out[i] = val;
      pos += val.len;
    } else if (f->layout_case ==
               LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH) {
      uint64_t lb = f->bits_per_length;
      if (lb != 32 && lb != 64)
        return lnc_errf(err, LNC_EUNSUPPORTED, "VariablePackedStruct field %zu: %llu-bit length",
                        i, (unsigned long long)lb);
      size_t pw = lb / 8;
      if (pw > row.len - pos)
        return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct field %zu length past the row", i);
      uint64_t len = pw == 4 ? lnc_rd32(row.p + pos) : lnc_rd64(row.p + pos);
      pos += pw;
      if (len > row.len - pos)
        return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct field %zu of %llu bytes past the row",
                        i, (unsigned long long)len);
      struct lnc_slice val = {row.p + pos, (size_t)len};
      if ((rc = lnc_enc_variable_pv_d(f->value, val, a, &fields_out[i], err, depth + 1))) return rc;
      pos += len;
    } else {
      return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct field %zu has no layout", i);
    }
  }
  if (pos != row.len)
    return lnc_errf(err, LNC_ECORRUPT, "VariablePackedStruct row has %zu trailing bytes",
                    row.len - pos);
  return 0;
}
