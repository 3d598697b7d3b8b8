/* Test helpers for lib/encoding: build CompressiveEncoding trees in C (protobuf-c INIT macros,
 * memory from one arena freed by the fixture) and small byte-buffer writers. Header-only so each
 * Check binary that needs it just includes it. */
#ifndef TESTS_UNIT_ENC_BUILD_H
#define TESTS_UNIT_ENC_BUILD_H
#include <stdint.h>
#include <string.h>
#include "encoding/encoding.h"

static struct lnc_arena eb_arena; /* encodings and scratch of one test */

static inline void eb_setup(void) { lnc_arena_init(&eb_arena, 0); }
static inline void eb_teardown(void) { lnc_arena_free(&eb_arena); }

static inline void *eb_new(size_t n) {
  void *p = lnc_arena_calloc(&eb_arena, 1, n);
  return p;
}

#define EB_MSG(T, INIT)          ({ T *m_ = eb_new(sizeof(T)); T t_ = INIT; *m_ = t_; m_; })
#define EB_ENC(field, CASE, val) ({                                                        \
  lnc_enc *e_ = EB_MSG(lnc_enc, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__INIT);           \
  e_->compression_case = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##CASE;     \
  e_->field = (val);                                                                        \
  e_; })

static inline Lance__Encodings21__BufferCompression *eb_comp(int scheme) {
  Lance__Encodings21__BufferCompression *c =
      EB_MSG(Lance__Encodings21__BufferCompression, LANCE__ENCODINGS21__BUFFER_COMPRESSION__INIT);
  c->scheme = scheme;
  return c;
}

static inline lnc_enc *eb_flat(uint64_t bits) {
  Lance__Encodings21__Flat *f = EB_MSG(Lance__Encodings21__Flat, LANCE__ENCODINGS21__FLAT__INIT);
  f->bits_per_value = bits;
  return EB_ENC(flat, FLAT, f);
}
static inline lnc_enc *eb_flat_c(uint64_t bits, int scheme) {
  lnc_enc *e = eb_flat(bits);
  e->flat->data = eb_comp(scheme);
  return e;
}
static inline lnc_enc *eb_variable(uint64_t offbits) {
  Lance__Encodings21__Variable *v =
      EB_MSG(Lance__Encodings21__Variable, LANCE__ENCODINGS21__VARIABLE__INIT);
  v->offsets = eb_flat(offbits);
  return EB_ENC(variable, VARIABLE, v);
}
static inline lnc_enc *eb_constant(const void *val, size_t len) {
  Lance__Encodings21__Constant *c =
      EB_MSG(Lance__Encodings21__Constant, LANCE__ENCODINGS21__CONSTANT__INIT);
  if (len) {
    c->value.data = eb_new(len);
    memcpy(c->value.data, val, len);
    c->value.len = len;
  }
  return EB_ENC(constant, CONSTANT, c);
}
static inline lnc_enc *eb_inline(uint64_t t) {
  Lance__Encodings21__InlineBitpacking *b =
      EB_MSG(Lance__Encodings21__InlineBitpacking, LANCE__ENCODINGS21__INLINE_BITPACKING__INIT);
  b->uncompressed_bits_per_value = t;
  return EB_ENC(inline_bitpacking, INLINE_BITPACKING, b);
}
static inline lnc_enc *eb_ool(uint64_t t, uint64_t w) {
  Lance__Encodings21__OutOfLineBitpacking *b = EB_MSG(
      Lance__Encodings21__OutOfLineBitpacking, LANCE__ENCODINGS21__OUT_OF_LINE_BITPACKING__INIT);
  b->uncompressed_bits_per_value = t;
  b->values = eb_flat(w);
  return EB_ENC(out_of_line_bitpacking, OUT_OF_LINE_BITPACKING, b);
}
static inline lnc_enc *eb_fsst(const uint8_t *table, size_t len, lnc_enc *inner) {
  Lance__Encodings21__Fsst *f = EB_MSG(Lance__Encodings21__Fsst, LANCE__ENCODINGS21__FSST__INIT);
  f->symbol_table.data = eb_new(len ? len : 1);
  if (len) memcpy(f->symbol_table.data, table, len);
  f->symbol_table.len = len;
  f->values = inner;
  return EB_ENC(fsst, FSST, f);
}
static inline lnc_enc *eb_rle(uint64_t vbits, uint64_t rbits) {
  Lance__Encodings21__Rle *r = EB_MSG(Lance__Encodings21__Rle, LANCE__ENCODINGS21__RLE__INIT);
  r->values = eb_flat(vbits);
  r->run_lengths = eb_flat(rbits);
  return EB_ENC(rle, RLE, r);
}
static inline lnc_enc *eb_bss(uint64_t bits) {
  Lance__Encodings21__ByteStreamSplit *b =
      EB_MSG(Lance__Encodings21__ByteStreamSplit, LANCE__ENCODINGS21__BYTE_STREAM_SPLIT__INIT);
  b->values = eb_flat(bits);
  return EB_ENC(byte_stream_split, BYTE_STREAM_SPLIT, b);
}
static inline lnc_enc *eb_general(int scheme, lnc_enc *inner) {
  Lance__Encodings21__General *g =
      EB_MSG(Lance__Encodings21__General, LANCE__ENCODINGS21__GENERAL__INIT);
  g->compression = eb_comp(scheme);
  g->values = inner;
  return EB_ENC(general, GENERAL, g);
}
static inline lnc_enc *eb_fsl(uint64_t dim, int validity, lnc_enc *inner) {
  Lance__Encodings21__FixedSizeList *f =
      EB_MSG(Lance__Encodings21__FixedSizeList, LANCE__ENCODINGS21__FIXED_SIZE_LIST__INIT);
  f->items_per_value = dim;
  f->has_validity = validity;
  f->values = inner;
  return EB_ENC(fixed_size_list, FIXED_SIZE_LIST, f);
}
static inline lnc_enc *eb_packed(const uint64_t *bits, size_t n, lnc_enc *inner) {
  Lance__Encodings21__PackedStruct *p =
      EB_MSG(Lance__Encodings21__PackedStruct, LANCE__ENCODINGS21__PACKED_STRUCT__INIT);
  p->bits_per_value = eb_new(n * sizeof(uint64_t));
  memcpy(p->bits_per_value, bits, n * sizeof(uint64_t));
  p->n_bits_per_value = n;
  p->values = inner;
  return EB_ENC(packed_struct, PACKED_STRUCT, p);
}
/* fields: fixed when bits_per_value != 0, else variable with bits_per_length */
static inline lnc_enc *eb_vps(size_t n, lnc_enc **values, const uint64_t *bits_per_value,
                              const uint64_t *bits_per_length) {
  Lance__Encodings21__VariablePackedStruct *v = EB_MSG(
      Lance__Encodings21__VariablePackedStruct, LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__INIT);
  v->fields = eb_new(n * sizeof *v->fields);
  v->n_fields = n;
  for (size_t i = 0; i < n; i++) {
    Lance__Encodings21__VariablePackedStruct__FieldEncoding *f =
        EB_MSG(Lance__Encodings21__VariablePackedStruct__FieldEncoding,
               LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__INIT);
    f->value = values[i];
    if (bits_per_value[i]) {
      f->layout_case =
          LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
      f->bits_per_value = bits_per_value[i];
    } else {
      f->layout_case =
          LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
      f->bits_per_length = bits_per_length[i];
    }
    v->fields[i] = f;
  }
  return EB_ENC(variable_packed_struct, VARIABLE_PACKED_STRUCT, v);
}
static inline lnc_enc *eb_range(void) {
  Lance__Encodings21__Range *r = EB_MSG(Lance__Encodings21__Range, LANCE__ENCODINGS21__RANGE__INIT);
  r->uncompressed_bits_per_value = 64;
  return EB_ENC(range, RANGE, r);
}
static inline lnc_enc *eb_delta(lnc_enc *inner) {
  Lance__Encodings21__Delta *d = EB_MSG(Lance__Encodings21__Delta, LANCE__ENCODINGS21__DELTA__INIT);
  d->uncompressed_bits_per_value = 64;
  d->deltas = inner;
  return EB_ENC(delta, DELTA, d);
}
static inline lnc_enc *eb_dict(lnc_enc *indices, lnc_enc *items) {
  Lance__Encodings21__Dictionary *d =
      EB_MSG(Lance__Encodings21__Dictionary, LANCE__ENCODINGS21__DICTIONARY__INIT);
  d->indices = indices;
  d->items = items;
  return EB_ENC(dictionary, DICTIONARY, d);
}

/* ---- byte writer ------------------------------------------------------------------------ */
struct eb_w {
  uint8_t *p;
  size_t len, cap;
};
static inline void eb_put(struct eb_w *w, const void *src, size_t n) {
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n) cap *= 2;
    uint8_t *np = eb_new(cap);
    if (w->len) memcpy(np, w->p, w->len);
    w->p = np;
    w->cap = cap;
  }
  if (n) memcpy(w->p + w->len, src, n);
  w->len += n;
}
static inline void eb_u8(struct eb_w *w, uint8_t v) { eb_put(w, &v, 1); }
static inline void eb_u16(struct eb_w *w, uint16_t v) { eb_put(w, &v, 2); }
static inline void eb_u32(struct eb_w *w, uint32_t v) { eb_put(w, &v, 4); }
static inline void eb_u64(struct eb_w *w, uint64_t v) { eb_put(w, &v, 8); }
static inline struct lnc_slice eb_slice(const struct eb_w *w) {
  struct lnc_slice s = {w->p, w->len};
  return s;
}

/* Deterministic PRNG for test data. */
static inline uint64_t eb_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#endif
