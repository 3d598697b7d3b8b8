/* The CompressiveEncoding tree walker: picks the decoder for each node in each context
 * (mini-block chunk, block buffer, full-zip value), as Lance's DefaultDecompressionStrategy
 * does, and rejects by name what a context does not allow. Also names and describes trees. */
#include "internal.h"
#include "../util/assert.h"
#include "../util/buf.h"

#define CASE(x) LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##x

int lnc_enc_nomem(struct lnc_error *err, const char *what) {
  return lnc_errf(err, LNC_ENOMEM, "out of memory decoding %s", what);
}

int lnc_enc_unsupported(const lnc_enc *e, const char *context, struct lnc_error *err) {
  return lnc_errf(err, LNC_EUNSUPPORTED, "unsupported encoding: %s in %s", lnc_enc_name(e),
                  context);
}

int lnc_enc_check_depth(int depth, struct lnc_error *err) {
  if (depth > LNC_ENC_MAX_DEPTH)
    return lnc_errf(err, LNC_ECORRUPT, "encoding tree nested more than %d deep", LNC_ENC_MAX_DEPTH);
  return 0;
}

int lnc_enc_flat_bits(const lnc_enc *e, const char *what, uint64_t *bits, struct lnc_error *err) {
  if (!e) return lnc_errf(err, LNC_ECORRUPT, "%s: missing encoding", what);
  if (e->compression_case != CASE(FLAT))
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: unsupported encoding: %s (want Flat)", what,
                    lnc_enc_name(e));
  if (!e->flat) return lnc_errf(err, LNC_ECORRUPT, "%s: empty Flat", what);
  *bits = e->flat->bits_per_value;
  return 0;
}

/* Every oneof member is a message pointer; a hand-built or hostile tree may leave it NULL. */
static int present(const lnc_enc *e, struct lnc_error *err) {
  if (!e) return lnc_errf(err, LNC_ECORRUPT, "missing encoding");
  if (e->compression_case != LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION__NOT_SET && !e->flat) /* any member: they share storage */
    return lnc_errf(err, LNC_ECORRUPT, "encoding %s has no body", lnc_enc_name(e));
  return 0;
}

static int general_scheme(const Lance__Encodings21__General *g, int *scheme,
                          struct lnc_error *err) {
  if (!g->compression) return lnc_errf(err, LNC_ECORRUPT, "General without compression");
  *scheme = g->compression->scheme;
  return 0;
}

static int one_buffer(size_t nbufs, const char *what, struct lnc_error *err) {
  if (nbufs == 1) return 0;
  return lnc_errf(err, LNC_ECORRUPT, "%s chunk has %zu buffers, want 1", what, nbufs);
}

int lnc_enc_miniblock_d(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                        struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err,
                        int depth) {
  int rc;
  if ((rc = lnc_enc_check_depth(depth, err)) || (rc = present(e, err))) return rc;
  switch (e->compression_case) {
  case CASE(FLAT):
    if ((rc = one_buffer(nbufs, "Flat", err))) return rc;
    return lnc_flat_decode(e->flat, bufs[0], n, a, out, err);
  case CASE(VARIABLE):
    if ((rc = one_buffer(nbufs, "Variable", err))) return rc;
    return lnc_variable_miniblock(e->variable, bufs[0], n, a, out, err);
  case CASE(INLINE_BITPACKING):
    if ((rc = one_buffer(nbufs, "InlineBitpacking", err))) return rc;
    return lnc_inline_bitpacking(e->inline_bitpacking, bufs[0], n, 1, a, out, err);
  case CASE(FSST): {
    struct lnc_values codes;
    if ((rc = lnc_enc_miniblock_d(e->fsst->values, bufs, nbufs, n, a, &codes, err, depth + 1)))
      return rc;
    return lnc_fsst_values(e->fsst, &codes, a, out, err);
  }
  case CASE(PACKED_STRUCT):
    return lnc_packed_miniblock(e->packed_struct, bufs, nbufs, n, a, out, err, depth);
  case CASE(FIXED_SIZE_LIST):
    return lnc_fsl_miniblock(e->fixed_size_list, bufs, nbufs, n, a, out, err);
  case CASE(RLE):
    return lnc_rle_miniblock(e->rle, bufs, nbufs, n, a, out, err);
  case CASE(BYTE_STREAM_SPLIT):
    return lnc_bss_miniblock(e->byte_stream_split, bufs, nbufs, n, a, out, err);
  case CASE(GENERAL): {
    /* Only the chunk's first buffer is compressed; the others pass through. */
    int scheme = 0;
    if ((rc = general_scheme(e->general, &scheme, err))) return rc;
    if (nbufs == 0) return lnc_errf(err, LNC_ECORRUPT, "General chunk without buffers");
    struct lnc_slice *copy = lnc_arena_alloc(a, nbufs * sizeof *copy);
    if (!copy) return lnc_enc_nomem(err, "buffer list");
    memcpy(copy, bufs, nbufs * sizeof *copy);
    if ((rc = lnc_enc_decompress(scheme, bufs[0], a, &copy[0], err))) return rc;
    return lnc_enc_miniblock_d(e->general->values, copy, nbufs, n, a, out, err, depth + 1);
  }
  default:
    return lnc_enc_unsupported(e, "a mini-block chunk", err);
  }
}

int lnc_enc_block_d(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                    struct lnc_values *out, struct lnc_error *err, int depth) {
  int rc;
  if ((rc = lnc_enc_check_depth(depth, err)) || (rc = present(e, err))) return rc;
  switch (e->compression_case) {
  case CASE(FLAT):
    return lnc_flat_decode(e->flat, buf, n, a, out, err);
  case CASE(VARIABLE):
    return lnc_variable_block(buf, n, a, out, err);
  case CASE(CONSTANT):
    return lnc_constant_decode(e->constant, n, a, out, err);
  case CASE(INLINE_BITPACKING):
    return lnc_inline_bitpacking(e->inline_bitpacking, buf, n, 0, a, out, err);
  case CASE(OUT_OF_LINE_BITPACKING):
    return lnc_outofline_bitpacking(e->out_of_line_bitpacking, buf, n, a, out, err);
  case CASE(RLE):
    return lnc_rle_block(e->rle, buf, n, a, out, err);
  case CASE(FIXED_SIZE_LIST):
    return lnc_fsl_block(e->fixed_size_list, buf, n, a, out, err);
  case CASE(FSST): {
    struct lnc_values codes;
    if ((rc = lnc_enc_block_d(e->fsst->values, buf, n, a, &codes, err, depth + 1))) return rc;
    return lnc_fsst_values(e->fsst, &codes, a, out, err);
  }
  case CASE(GENERAL): {
    int scheme = 0;
    struct lnc_slice plain;
    if ((rc = general_scheme(e->general, &scheme, err))) return rc;
    if ((rc = lnc_enc_decompress(scheme, buf, a, &plain, err))) return rc;
    return lnc_enc_block_d(e->general->values, plain, n, a, out, err, depth + 1);
  }
  default:
    return lnc_enc_unsupported(e, "a block buffer", err);
  }
}

int lnc_enc_fixed_pv_d(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                       struct lnc_values *out, struct lnc_error *err, int depth) {
  int rc;
  if ((rc = lnc_enc_check_depth(depth, err)) || (rc = present(e, err))) return rc;
  switch (e->compression_case) {
  case CASE(FLAT):
    return lnc_flat_decode(e->flat, value, 1, a, out, err);
  case CASE(CONSTANT):
    return lnc_constant_decode(e->constant, 1, a, out, err);
  case CASE(FIXED_SIZE_LIST):
    return lnc_fsl_per_value(e->fixed_size_list, value, out, err);
  default:
    return lnc_enc_unsupported(e, "a fixed-width full-zip value", err);
  }
}

int lnc_enc_variable_pv_d(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                          struct lnc_slice *out, struct lnc_error *err, int depth) {
  int rc;
  if ((rc = lnc_enc_check_depth(depth, err)) || (rc = present(e, err))) return rc;
  switch (e->compression_case) {
  case CASE(VARIABLE):
    *out = value;
    return 0;
  case CASE(FSST):
    return lnc_fsst_value(e->fsst, value, a, out, err);
  case CASE(GENERAL): {
    /* Each value is compressed on its own. Lance wraps plain Variable; anything else inside
     * is decoded per value as well. */
    int scheme = 0;
    struct lnc_slice plain;
    if ((rc = general_scheme(e->general, &scheme, err))) return rc;
    if ((rc = lnc_enc_decompress(scheme, value, a, &plain, err))) return rc;
    const lnc_enc *in = e->general->values;
    if (!in || in->compression_case == CASE(VARIABLE)) {
      *out = plain;
      return 0;
    }
    return lnc_enc_variable_pv_d(in, plain, a, out, err, depth + 1);
  }
  case CASE(VARIABLE_PACKED_STRUCT):
    return lnc_errf(err, LNC_EUNSUPPORTED,
                    "VariablePackedStruct values must be split into fields (lnc_enc_vps_split)");
  default:
    return lnc_enc_unsupported(e, "a variable-width full-zip value", err);
  }
}

/* ---- public entry points ------------------------------------------------------------- */

int lnc_enc_miniblock(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                      struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err) {
  return lnc_enc_miniblock_d(e, bufs, nbufs, n, a, out, err, 0);
}

int lnc_enc_miniblock_pick(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                           const uint32_t *want, size_t nwant, struct lnc_arena *a,
                           struct lnc_values *out, struct lnc_error *err) {
  if (want && e && e->compression_case == CASE(INLINE_BITPACKING) && e->inline_bitpacking && nbufs == 1)
    return lnc_inline_bitpacking_pick(e->inline_bitpacking, bufs[0], n, 1, want, nwant, a, out, err);
  if (want && e && e->compression_case == CASE(FSST) && e->fsst) {
    /* The codes are cheap to lay out (offsets into the chunk); decoding them is the work, and
     * a training batch's captions asked one or two strings of each 4 KiB chunk. */
    struct lnc_values codes;
    int rc = lnc_enc_miniblock_d(e->fsst->values, bufs, nbufs, n, a, &codes, err, 1);
    return rc ? rc : lnc_fsst_pick(e->fsst, &codes, want, nwant, a, out, err);
  }
  return lnc_enc_miniblock(e, bufs, nbufs, n, a, out, err);
}

int lnc_enc_block(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                  struct lnc_values *out, struct lnc_error *err) {
  return lnc_enc_block_d(e, buf, n, a, out, err, 0);
}

int lnc_enc_fixed_per_value(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                            struct lnc_values *out, struct lnc_error *err) {
  return lnc_enc_fixed_pv_d(e, value, a, out, err, 0);
}

int lnc_enc_variable_per_value(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                               struct lnc_slice *out, struct lnc_error *err) {
  return lnc_enc_variable_pv_d(e, value, a, out, err, 0);
}

int lnc_enc_vps_split(const lnc_enc *e, struct lnc_slice row, struct lnc_arena *a,
                      struct lnc_slice *fields_out, size_t nfields, struct lnc_error *err) {
  int rc;
  if ((rc = present(e, err))) return rc;
  if (e->compression_case != CASE(VARIABLE_PACKED_STRUCT))
    return lnc_errf(err, LNC_EUNSUPPORTED, "unsupported encoding: %s (want VariablePackedStruct)",
                    lnc_enc_name(e));
  return lnc_vps_split_d(e->variable_packed_struct, row, a, fields_out, nfields, err, 1);
}

int lnc_enc_levels_pick(const lnc_enc *e, struct lnc_slice buf, uint64_t n, const uint32_t *want,
                        size_t nwant, struct lnc_arena *a, const uint16_t **out,
                        struct lnc_error *err) {
  /* The 16-bit bitpacked streams (every def stream of a nullable column Lance writes, in
   * the fixtures) unpack just the wanted levels; anything else decodes whole. */
  const Lance__Encodings21__InlineBitpacking *ib = e && e->compression_case == CASE(INLINE_BITPACKING) ? e->inline_bitpacking : NULL;
  const Lance__Encodings21__OutOfLineBitpacking *ob = e && e->compression_case == CASE(OUT_OF_LINE_BITPACKING) ? e->out_of_line_bitpacking : NULL;
  if (want && ((ib && ib->uncompressed_bits_per_value == 16) || (ob && ob->uncompressed_bits_per_value == 16))) {
    struct lnc_values v;
    int rc = ib ? lnc_inline_bitpacking_pick(ib, buf, n, 0, want, nwant, a, &v, err)
                : lnc_outofline_bitpacking_pick(ob, buf, n, want, nwant, a, &v, err);
    if (rc) return rc;
    LNC_ASSERT(v.bits == 16 && ((uintptr_t)v.data & 1) == 0); /* arena memory, 16-byte aligned */
    *out = (const uint16_t *)(const void *)v.data;
    return 0;
  }
  return lnc_enc_levels(e, buf, n, a, out, err);
}

int lnc_enc_levels(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                   const uint16_t **out, struct lnc_error *err) {
  struct lnc_values v;
  int rc = lnc_enc_block_d(e, buf, n, a, &v, err, 0);
  if (rc) return rc;
  if (v.kind != LNC_VALUES_FIXED || v.fsl_dim || v.n != n ||
      (v.bits != 1 && v.bits != 8 && v.bits != 16 && v.bits != 32 && v.bits != 64))
    return lnc_errf(err, LNC_ECORRUPT, "rep/def levels decode to %u-bit values", v.bits);
  /* Levels are almost always 16-bit (every bitpacked or flat level stream Lance writes is):
   * those are used where they lie, when aligned, instead of copied. */
  if (v.bits == 16 && n && v.data && ((uintptr_t)v.data & 1) == 0) {
    *out = (const uint16_t *)(const void *)v.data;
    return 0;
  }
  uint16_t *d = lnc_arena_alloc(a, (n ? n : 1) * sizeof *d);
  if (!d) return lnc_enc_nomem(err, "levels");
  /* A mini-block chunk holds up to a few thousand levels and a take decodes a whole chunk per
   * row it reads, so this runs once per level of every chunk touched: one loop per width with
   * fixed-size loads (a variable-size memcpy here costs a library call per level). Only
   * widths above 16 bits can hold a level that does not fit, so only they are checked. */
  uint64_t bad = n;
  switch (v.bits) {
  case 1:
    for (uint64_t i = 0; i < n; i++) d[i] = (uint16_t)((v.data[i >> 3] >> (i & 7)) & 1);
    break;
  case 8:
    for (uint64_t i = 0; i < n; i++) d[i] = v.data[i];
    break;
  case 16:
    if (n) memcpy(d, v.data, n * 2);
    break;
  case 32:
    for (uint64_t i = 0; i < n; i++) {
      uint32_t x = lnc_rd32(v.data + 4 * i);
      if (x > UINT16_MAX) {
        bad = i;
        break;
      }
      d[i] = (uint16_t)x;
    }
    break;
  default: /* 64 */
    for (uint64_t i = 0; i < n; i++) {
      uint64_t x = lnc_rd64(v.data + 8 * i);
      if (x > UINT16_MAX) {
        bad = i;
        break;
      }
      d[i] = (uint16_t)x;
    }
    break;
  }
  if (bad < n)
    return lnc_errf(err, LNC_ECORRUPT, "level %llu is %llu", (unsigned long long)bad,
                    (unsigned long long)lnc_rdw(v.data + bad * (v.bits / 8), v.bits / 8));
  *out = d;
  return 0;
}

/* ---- names and descriptions ---------------------------------------------------------- */

const char *lnc_enc_name(const lnc_enc *e) {
  if (!e) return "(none)";
  switch (e->compression_case) {
  case CASE(FLAT): return "Flat";
  case CASE(VARIABLE): return "Variable";
  case CASE(CONSTANT): return "Constant";
  case CASE(OUT_OF_LINE_BITPACKING): return "OutOfLineBitpacking";
  case CASE(INLINE_BITPACKING): return "InlineBitpacking";
  case CASE(FSST): return "Fsst";
  case CASE(DICTIONARY): return "Dictionary";
  case CASE(RLE): return "Rle";
  case CASE(BYTE_STREAM_SPLIT): return "ByteStreamSplit";
  case CASE(GENERAL): return "General";
  case CASE(FIXED_SIZE_LIST): return "FixedSizeList";
  case CASE(PACKED_STRUCT): return "PackedStruct";
  case CASE(VARIABLE_PACKED_STRUCT): return "VariablePackedStruct";
  case CASE(RANGE): return "Range";
  case CASE(DELTA): return "Delta";
  case LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION__NOT_SET: return "(none)";
  default: return "(unknown)";
  }
}

static const char *scheme_name(const lnc_bufcomp *c) {
  if (!c) return "none";
  switch (c->scheme) {
  case LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4: return "lz4";
  case LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD: return "zstd";
  case LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_UNSPECIFIED: return "none";
  default: return "unknown";
  }
}

static int has_scheme(const lnc_bufcomp *c) {
  return c && c->scheme != LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_UNSPECIFIED;
}

static int describe(const lnc_enc *e, struct lnc_buf *b, int depth) {
  int rc = 0;
  if (depth > LNC_ENC_MAX_DEPTH) return lnc_buf_puts(b, "...");
  if (!e || (e->compression_case != LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION__NOT_SET && !e->flat)) return lnc_buf_puts(b, "(none)");
  const char *name = lnc_enc_name(e);
#define P(...)                                            \
  do {                                                    \
    if ((rc = lnc_buf_printf(b, __VA_ARGS__))) return rc; \
  } while (0)
#define D(x)                                           \
  do {                                                 \
    if ((rc = describe((x), b, depth + 1))) return rc; \
  } while (0)
  switch (e->compression_case) {
  case CASE(FLAT):
    P("Flat(%llu", (unsigned long long)e->flat->bits_per_value);
    if (has_scheme(e->flat->data)) P(", %s", scheme_name(e->flat->data));
    P(")");
    break;
  case CASE(VARIABLE):
    P("Variable(");
    D(e->variable->offsets);
    if (has_scheme(e->variable->values)) P(", %s", scheme_name(e->variable->values));
    P(")");
    break;
  case CASE(CONSTANT):
    if (e->constant->value.len)
      P("Constant(%zu bytes)", e->constant->value.len);
    else
      P("Constant(null)");
    break;
  case CASE(OUT_OF_LINE_BITPACKING):
    P("OutOfLineBitpacking(%llu, ",
      (unsigned long long)e->out_of_line_bitpacking->uncompressed_bits_per_value);
    D(e->out_of_line_bitpacking->values);
    P(")");
    break;
  case CASE(INLINE_BITPACKING):
    P("InlineBitpacking(%llu",
      (unsigned long long)e->inline_bitpacking->uncompressed_bits_per_value);
    if (has_scheme(e->inline_bitpacking->values))
      P(", %s", scheme_name(e->inline_bitpacking->values));
    P(")");
    break;
  case CASE(FSST):
    P("Fsst(");
    D(e->fsst->values);
    P(")");
    break;
  case CASE(DICTIONARY):
    P("Dictionary(");
    D(e->dictionary->indices);
    P(", ");
    D(e->dictionary->items);
    P(")");
    break;
  case CASE(RLE):
    P("Rle(");
    D(e->rle->values);
    P(", ");
    D(e->rle->run_lengths);
    P(")");
    break;
  case CASE(BYTE_STREAM_SPLIT):
    P("ByteStreamSplit(");
    D(e->byte_stream_split->values);
    P(")");
    break;
  case CASE(GENERAL):
    P("General(%s, ", scheme_name(e->general->compression));
    D(e->general->values);
    P(")");
    break;
  case CASE(FIXED_SIZE_LIST):
    P("FixedSizeList(%llu, %s", (unsigned long long)e->fixed_size_list->items_per_value,
      e->fixed_size_list->has_validity ? "nullable, " : "");
    D(e->fixed_size_list->values);
    P(")");
    break;
  case CASE(PACKED_STRUCT):
    P("PackedStruct([");
    for (size_t i = 0; i < e->packed_struct->n_bits_per_value; i++)
      P("%s%llu", i ? ", " : "", (unsigned long long)e->packed_struct->bits_per_value[i]);
    P("], ");
    D(e->packed_struct->values);
    P(")");
    break;
  case CASE(VARIABLE_PACKED_STRUCT):
    P("VariablePackedStruct(");
    for (size_t i = 0; i < e->variable_packed_struct->n_fields; i++) {
      const Lance__Encodings21__VariablePackedStruct__FieldEncoding *f =
          e->variable_packed_struct->fields[i];
      if (i) P(", ");
      D(f ? f->value : NULL);
    }
    P(")");
    break;
  case CASE(RANGE):
    P("Range(%llu)", (unsigned long long)e->range->uncompressed_bits_per_value);
    break;
  case CASE(DELTA):
    P("Delta(%llu, ", (unsigned long long)e->delta->uncompressed_bits_per_value);
    D(e->delta->deltas);
    P(")");
    break;
  default:
    P("%s", name);
    break;
  }
#undef P
#undef D
  return 0;
}

int lnc_enc_describe(const lnc_enc *e, struct lnc_buf *out) { return describe(e, out, 0); }
