/* Fuzz target for lib/encoding: feeds arbitrary bytes to every decoding context under a fixed
 * set of encoding trees and touches every output byte, so a decoder that trusts a length from
 * the input shows up as a sanitizer report. Input layout:
 *   u8 encoding index, u16 value count, u8 buffer count-1, [u16 len of buf0, u16 len of buf1],
 *   then for the encodings holding FSST (10, 24, 27): u16 table length and the symbol table,
 *   then the data (the buffers back to back; the whole of it for the single-buffer contexts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "encoding/encoding.h"

#define LZ4  LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4
#define ZSTD LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD

static struct lnc_arena tree_arena; /* the encoding trees, built once and kept */

static void *znew(size_t n) { return lnc_arena_calloc(&tree_arena, 1, n); }
#define NEW(T, INIT)          ({ T *m_ = znew(sizeof(T)); T t_ = INIT; *m_ = t_; m_; })
#define ENC(field, CASE, val) ({                                                          \
  lnc_enc *e_ = NEW(lnc_enc, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__INIT);             \
  e_->compression_case = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##CASE;    \
  e_->field = (val);                                                                       \
  e_; })

static Lance__Encodings21__BufferCompression *comp(int scheme) {
  Lance__Encodings21__BufferCompression *c =
      NEW(Lance__Encodings21__BufferCompression, LANCE__ENCODINGS21__BUFFER_COMPRESSION__INIT);
  c->scheme = scheme;
  return c;
}
static lnc_enc *flat(uint64_t bits, int scheme) {
  Lance__Encodings21__Flat *f = NEW(Lance__Encodings21__Flat, LANCE__ENCODINGS21__FLAT__INIT);
  f->bits_per_value = bits;
  if (scheme) f->data = comp(scheme);
  return ENC(flat, FLAT, f);
}
static lnc_enc *variable(uint64_t bits) {
  Lance__Encodings21__Variable *v = NEW(Lance__Encodings21__Variable, LANCE__ENCODINGS21__VARIABLE__INIT);
  v->offsets = flat(bits, 0);
  return ENC(variable, VARIABLE, v);
}
static lnc_enc *inl(uint64_t t) {
  Lance__Encodings21__InlineBitpacking *b =
      NEW(Lance__Encodings21__InlineBitpacking, LANCE__ENCODINGS21__INLINE_BITPACKING__INIT);
  b->uncompressed_bits_per_value = t;
  return ENC(inline_bitpacking, INLINE_BITPACKING, b);
}
static lnc_enc *ool(uint64_t t, uint64_t w) {
  Lance__Encodings21__OutOfLineBitpacking *b =
      NEW(Lance__Encodings21__OutOfLineBitpacking, LANCE__ENCODINGS21__OUT_OF_LINE_BITPACKING__INIT);
  b->uncompressed_bits_per_value = t;
  b->values = flat(w, 0);
  return ENC(out_of_line_bitpacking, OUT_OF_LINE_BITPACKING, b);
}
static lnc_enc *fsst(lnc_enc *inner) {
  Lance__Encodings21__Fsst *f = NEW(Lance__Encodings21__Fsst, LANCE__ENCODINGS21__FSST__INIT);
  f->values = inner; /* symbol table filled per input */
  return ENC(fsst, FSST, f);
}
static lnc_enc *rle(uint64_t vb, uint64_t rb) {
  Lance__Encodings21__Rle *r = NEW(Lance__Encodings21__Rle, LANCE__ENCODINGS21__RLE__INIT);
  r->values = flat(vb, 0);
  r->run_lengths = flat(rb, 0);
  return ENC(rle, RLE, r);
}
static lnc_enc *bss(uint64_t bits) {
  Lance__Encodings21__ByteStreamSplit *b =
      NEW(Lance__Encodings21__ByteStreamSplit, LANCE__ENCODINGS21__BYTE_STREAM_SPLIT__INIT);
  b->values = flat(bits, 0);
  return ENC(byte_stream_split, BYTE_STREAM_SPLIT, b);
}
static lnc_enc *general(int scheme, lnc_enc *inner) {
  Lance__Encodings21__General *g = NEW(Lance__Encodings21__General, LANCE__ENCODINGS21__GENERAL__INIT);
  g->compression = comp(scheme);
  g->values = inner;
  return ENC(general, GENERAL, g);
}
static lnc_enc *fsl(uint64_t dim, int validity, lnc_enc *inner) {
  Lance__Encodings21__FixedSizeList *f =
      NEW(Lance__Encodings21__FixedSizeList, LANCE__ENCODINGS21__FIXED_SIZE_LIST__INIT);
  f->items_per_value = dim;
  f->has_validity = validity;
  f->values = inner;
  return ENC(fixed_size_list, FIXED_SIZE_LIST, f);
}
static lnc_enc *constant(const char *v, size_t len) {
  Lance__Encodings21__Constant *c = NEW(Lance__Encodings21__Constant, LANCE__ENCODINGS21__CONSTANT__INIT);
  c->value.data = (uint8_t *)v;
  c->value.len = len;
  return ENC(constant, CONSTANT, c);
}
static lnc_enc *packed(void) {
  static uint64_t bits[3] = {32, 64, 8};
  Lance__Encodings21__PackedStruct *p =
      NEW(Lance__Encodings21__PackedStruct, LANCE__ENCODINGS21__PACKED_STRUCT__INIT);
  p->bits_per_value = bits;
  p->n_bits_per_value = 3;
  p->values = flat(104, 0);
  return ENC(packed_struct, PACKED_STRUCT, p);
}
static lnc_enc *vps(lnc_enc *fsst_field) {
  Lance__Encodings21__VariablePackedStruct *v =
      NEW(Lance__Encodings21__VariablePackedStruct, LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__INIT);
  v->n_fields = 3;
  v->fields = znew(3 * sizeof *v->fields);
  lnc_enc *vals[3] = {flat(32, 0), fsst_field, general(ZSTD, variable(64))};
  for (int i = 0; i < 3; i++) {
    Lance__Encodings21__VariablePackedStruct__FieldEncoding *f =
        NEW(Lance__Encodings21__VariablePackedStruct__FieldEncoding,
            LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__INIT);
    f->value = vals[i];
    if (i == 0) {
      f->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
      f->bits_per_value = 32;
    } else {
      f->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
      f->bits_per_length = i == 1 ? 32 : 64;
    }
    v->fields[i] = f;
  }
  return ENC(variable_packed_struct, VARIABLE_PACKED_STRUCT, v);
}

#define NENC 28
static lnc_enc *encs[NENC];
static lnc_enc *fsst_a, *fsst_b; /* whose symbol tables come from the input */

static void build(void) {
  lnc_arena_init(&tree_arena, 0);
  fsst_a = fsst(variable(32));
  fsst_b = fsst(variable(32));
  lnc_enc *list[NENC] = {
      flat(32, 0), flat(1, 0), flat(64, ZSTD), variable(32), variable(64), inl(16), inl(32),
      inl(64), ool(16, 3), ool(8, 5), fsst_a, rle(32, 8), rle(16, 8), rle(64, 16), bss(32),
      bss(64), general(ZSTD, variable(32)), general(LZ4, variable(32)), general(LZ4, bss(32)),
      fsl(3, 1, flat(32, 0)), fsl(2, 1, fsl(2, 1, flat(8, 0))), fsl(4, 1, constant(NULL, 0)),
      packed(), constant("abcd", 4), vps(fsst_b), general(ZSTD, rle(32, 8)), flat(8, 0),
      general(LZ4, fsst_b)};
  memcpy(encs, list, sizeof list);
}

static volatile uint64_t sink;

static void touch(const uint8_t *p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++) s += p[i];
  sink += s;
}

static void touch_values(const struct lnc_values *v) {
  if (v->data_len) touch(v->data, v->data_len);
  if (v->kind == LNC_VALUES_VARIABLE) {
    for (uint64_t i = 0; i < v->n; i++)
      if (v->offsets[i] > v->offsets[i + 1] || v->offsets[i + 1] > v->data_len) __builtin_trap();
  }
  for (uint32_t i = 0; i < v->n_item_validity && i < 4; i++)
    if (v->n && v->fsl_dim) touch(v->item_validity[i], 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int built;
  if (!built) {
    build();
    built = 1;
  }
  if (size < 4) return 0;
  unsigned idx = data[0] % NENC;
  lnc_enc *e = encs[idx];
  uint64_t n = (uint64_t)(data[1] | data[2] << 8) % 5000;
  unsigned nbufs = 1 + data[3] % 3;
  data += 4;
  size -= 4;
  struct lnc_slice bufs[3];
  size_t lens[2] = {0, 0};
  for (unsigned i = 0; i + 1 < nbufs; i++) {
    if (size < 2) return 0;
    lens[i] = (size_t)(data[0] | data[1] << 8);
    data += 2;
    size -= 2;
  }
  if (idx == 10 || idx == 24 || idx == 27) {
    if (size < 2) return 0;
    size_t st = (size_t)(data[0] | data[1] << 8);
    data += 2;
    size -= 2;
    if (st > size) st = size;
    fsst_a->fsst->symbol_table.data = (uint8_t *)data;
    fsst_a->fsst->symbol_table.len = st;
    fsst_b->fsst->symbol_table = fsst_a->fsst->symbol_table;
    data += st;
    size -= st;
  }
  size_t pos = 0;
  for (unsigned i = 0; i < nbufs; i++) {
    size_t l = i + 1 < nbufs ? lens[i] : size - pos;
    if (l > size - pos) l = size - pos;
    bufs[i].p = data + pos;
    bufs[i].len = l;
    pos += l;
  }
  struct lnc_slice whole = {data, size};

  struct lnc_arena a;
  lnc_arena_init(&a, 64u << 20); /* bounded like a request arena */
  struct lnc_error err;
  struct lnc_values v;
  struct lnc_slice s;
  const uint16_t *lv;
  int rm = lnc_enc_miniblock(e, bufs, nbufs, n, &a, &v, &err);
  if (rm == 0) touch_values(&v);
  lnc_arena_reset(&a);
  int rb = lnc_enc_block(e, whole, n, &a, &v, &err);
  if (rb == 0) touch_values(&v);
#ifdef FUZZ_ENC_VERBOSE /* seed check: which contexts accept the input */
  fprintf(stderr, "enc %u n %llu: miniblock %d block %d (%s)\n", idx, (unsigned long long)n, rm, rb,
          err.message);
#endif
  lnc_arena_reset(&a);
  /* Levels whole, then only a few of them: both must accept the same inputs and agree. */
  uint32_t want[4] = {0, (uint32_t)(n - 1), (uint32_t)(n / 2), (uint32_t)(n / 3)};
  uint16_t seen[4] = {0};
  int rl = lnc_enc_levels(e, whole, n, &a, &lv, &err);
  if (rl == 0) {
    touch((const uint8_t *)lv, n * 2);
    for (int k = 0; n && k < 4; k++) seen[k] = lv[want[k]];
  }
  lnc_arena_reset(&a);
  if (n && n <= UINT32_MAX) {
    int rp = lnc_enc_levels_pick(e, whole, n, want, 4, &a, &lv, &err);
    if ((rp == 0) != (rl == 0) && rp != LNC_ENOMEM && rl != LNC_ENOMEM) abort();
    for (int k = 0; rp == 0 && rl == 0 && k < 4; k++)
      if (lv[want[k]] != seen[k]) abort();
  }
  lnc_arena_reset(&a);
  if (lnc_enc_fixed_per_value(e, whole, &a, &v, &err) == 0) touch_values(&v);
  lnc_arena_reset(&a);
  if (lnc_enc_variable_per_value(e, whole, &a, &s, &err) == 0) touch(s.p, s.len);
  lnc_arena_reset(&a);
  struct lnc_slice fields[3];
  if (lnc_enc_vps_split(e, whole, &a, fields, 3, &err) == 0)
    for (int i = 0; i < 3; i++) touch(fields[i].p, fields[i].len);
  lnc_arena_free(&a);
  struct lnc_buf d = {0};
  lnc_enc_describe(e, &d);
  lnc_buf_free(&d);
  return 0;
}
