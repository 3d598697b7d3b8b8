/* Shared pieces of lib/encoding: little-endian readers, size arithmetic with overflow checks,
 * and the per-encoding entry points the tree walker (encoding.c) dispatches to. Every entry
 * point takes the recursion depth so a hostile, deeply nested encoding tree cannot blow the stack. */
#ifndef LNC_ENCODING_INTERNAL_H
#define LNC_ENCODING_INTERNAL_H
#include <string.h>
#include "encoding.h"
#include "../util/error.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "lib/encoding assumes a little-endian host"
#endif

#include "../util/mem.h"

#define LNC_ENC_MAX_DEPTH 24

typedef Lance__Encodings21__BufferCompression lnc_bufcomp;


/* a*b without overflow; 0 on overflow. */
static inline int lnc_mul(uint64_t a, uint64_t b, uint64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}
/* Bytes of n items of `bits` bits, ceil(n*bits/8); 0 on overflow or if > SIZE_MAX. */
static inline int lnc_fixed_bytes(uint64_t n, uint64_t bits, size_t *out) {
  uint64_t nb;
  if (!lnc_mul(n, bits, &nb)) return 0;
  uint64_t by = nb / 8 + (nb % 8 != 0);
  if (by > SIZE_MAX) return 0;
  *out = (size_t)by;
  return 1;
}

static inline void lnc_values_fixed(struct lnc_values *o, uint64_t n, uint32_t bits,
                                    const uint8_t *data, size_t len) {
  memset(o, 0, sizeof *o);
  o->kind = LNC_VALUES_FIXED;
  o->n = n;
  o->bits = bits;
  o->data = data;
  o->data_len = len;
}

static inline void lnc_values_variable(struct lnc_values *o, uint64_t n, const uint8_t *data,
                                       size_t len, const uint64_t *offsets) {
  memset(o, 0, sizeof *o);
  o->kind = LNC_VALUES_VARIABLE;
  o->n = n;
  o->data = data;
  o->data_len = len;
  o->offsets = offsets;
}

int lnc_enc_nomem(struct lnc_error *err, const char *what);
int lnc_enc_unsupported(const lnc_enc *e, const char *context, struct lnc_error *err);
int lnc_enc_check_depth(int depth, struct lnc_error *err);
/* Width of a Flat child (rejects non-Flat), used by Variable offsets, Rle, Bss, bitpacking. */
int lnc_enc_flat_bits(const lnc_enc *e, const char *what, uint64_t *bits, struct lnc_error *err);
/* Applies an optional BufferCompression (NULL or UNSPECIFIED = none). */
int lnc_enc_maybe_decompress(const lnc_bufcomp *c, struct lnc_slice in, struct lnc_arena *a,
                             struct lnc_slice *out, struct lnc_error *err);

/* Depth-aware walkers (encoding.c). */
int lnc_enc_miniblock_d(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                        struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err,
                        int depth);
int lnc_enc_block_d(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                    struct lnc_values *out, struct lnc_error *err, int depth);
int lnc_enc_fixed_pv_d(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                       struct lnc_values *out, struct lnc_error *err, int depth);
int lnc_enc_variable_pv_d(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                          struct lnc_slice *out, struct lnc_error *err, int depth);

/* flat.c: Flat, Constant, ByteStreamSplit, PackedStruct */
int lnc_flat_decode(const Lance__Encodings21__Flat *f, struct lnc_slice buf, uint64_t n,
                    struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_constant_decode(const Lance__Encodings21__Constant *c, uint64_t n, struct lnc_arena *a,
                        struct lnc_values *out, struct lnc_error *err);
int lnc_bss_miniblock(const Lance__Encodings21__ByteStreamSplit *b, const struct lnc_slice *bufs,
                      size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err);
int lnc_packed_miniblock(const Lance__Encodings21__PackedStruct *p, const struct lnc_slice *bufs,
                         size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                         struct lnc_error *err, int depth);

/* variable.c: Variable in its three forms, VariablePackedStruct */
int lnc_variable_miniblock(const Lance__Encodings21__Variable *v, struct lnc_slice buf, uint64_t n,
                           struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_variable_block(struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                       struct lnc_values *out, struct lnc_error *err);
int lnc_vps_split_d(const Lance__Encodings21__VariablePackedStruct *v, struct lnc_slice row,
                    struct lnc_arena *a, struct lnc_slice *fields_out, size_t nfields,
                    struct lnc_error *err, int depth);

/* bitpack.c */
int lnc_inline_bitpacking(const Lance__Encodings21__InlineBitpacking *ib, struct lnc_slice buf,
                          uint64_t n, int single_block, struct lnc_arena *a,
                          struct lnc_values *out, struct lnc_error *err);
int lnc_inline_bitpacking_pick(const Lance__Encodings21__InlineBitpacking *ib, struct lnc_slice buf,
                               uint64_t n, int single_block, const uint32_t *want, size_t nwant,
                               struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_outofline_bitpacking(const Lance__Encodings21__OutOfLineBitpacking *ob,
                             struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                             struct lnc_values *out, struct lnc_error *err);
int lnc_outofline_bitpacking_pick(const Lance__Encodings21__OutOfLineBitpacking *ob,
                                  struct lnc_slice buf, uint64_t n, const uint32_t *want,
                                  size_t nwant, struct lnc_arena *a, struct lnc_values *out,
                                  struct lnc_error *err);

/* fsst.c: decodes every value of a VARIABLE block of FSST codes */
/* As lnc_fsst_values for a reader of values want[0..nwant) only (ascending indices < codes->n):
 * those are decoded, every other value is left empty. Unordered want decodes all. */
int lnc_fsst_pick(const Lance__Encodings21__Fsst *f, const struct lnc_values *codes, const uint32_t *want,
                  size_t nwant, struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_fsst_values(const Lance__Encodings21__Fsst *f, const struct lnc_values *codes,
                    struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_fsst_value(const Lance__Encodings21__Fsst *f, struct lnc_slice codes,
                   struct lnc_arena *a, struct lnc_slice *out, struct lnc_error *err);

/* rle.c */
int lnc_rle_miniblock(const Lance__Encodings21__Rle *r, const struct lnc_slice *bufs, size_t nbufs,
                      uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err);
int lnc_rle_block(const Lance__Encodings21__Rle *r, struct lnc_slice buf, uint64_t n,
                  struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);

/* fsl.c */
int lnc_fsl_miniblock(const Lance__Encodings21__FixedSizeList *f, const struct lnc_slice *bufs,
                      size_t nbufs, uint64_t n, struct lnc_arena *a, struct lnc_values *out,
                      struct lnc_error *err);
int lnc_fsl_block(const Lance__Encodings21__FixedSizeList *f, struct lnc_slice buf, uint64_t n,
                  struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
int lnc_fsl_per_value(const Lance__Encodings21__FixedSizeList *f, struct lnc_slice value,
                      struct lnc_values *out, struct lnc_error *err);

#endif
