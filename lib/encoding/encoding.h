/* Lance 2.1/2.2 compressive encodings: walks a CompressiveEncoding tree and decodes the buffers
 * of one mini-block chunk, one block buffer, or one full-zip value. Decoders are pure functions
 * over checked slices; output memory comes from the caller's arena or points into the input. */
#ifndef LNC_ENCODING_ENCODING_H
#define LNC_ENCODING_ENCODING_H
#include <stddef.h>
#include <stdint.h>
#include "lance/encodings21.pb-c.h"
#include "../util/arena.h"
#include "../lance.h"

typedef Lance__Encodings21__CompressiveEncoding lnc_enc;
struct lnc_slice {
  const uint8_t *p;
  size_t len;
};
/* Fixed-size lists nested this deep are read (schema.c refuses deeper ones at open): the
 * depth a tensor of a few dimensions needs, and the number of validity layers a value carries. */
#define LNC_FSL_MAX_LEVELS 4
enum { LNC_VALUES_FIXED = 1,
       LNC_VALUES_VARIABLE = 2 };
struct lnc_values {
  int kind;
  uint64_t n;          /* number of values */
  uint32_t bits;       /* FIXED: bits per value: 1 (bitmap, LSB-first) or a multiple of 8 */
  const uint8_t *data; /* FIXED: ceil(n*bits/8) bytes, little-endian values back to back;
                               VARIABLE: the value bytes */
  size_t data_len;
  const uint64_t *offsets;  /* VARIABLE: n+1 non-decreasing offsets into data (value i is
                               data[offsets[i]..offsets[i+1]]); offsets[n] <= data_len */
  uint64_t fsl_dim;         /* FixedSizeList: items per value (product of nested dims), else 0 */
  uint32_t n_item_validity; /* FixedSizeList layers with has_validity, outermost first */
  /* Layer i: n * item_validity_per_value[i] bits, LSB-first, 1 = valid; the validity of the
   * items of nesting level item_validity_level[i] (0 = the outermost list's items), of which a
   * value holds the product of the dimensions down to that level. */
  const uint8_t *item_validity[LNC_FSL_MAX_LEVELS];
  uint8_t item_validity_level[LNC_FSL_MAX_LEVELS];
  uint64_t item_validity_per_value[LNC_FSL_MAX_LEVELS];
};
/* Notes on FIXED output:
 *  - FixedSizeList: `bits` is the width of one item and `data` holds n*fsl_dim items
 *    (ceil(n*fsl_dim*bits/8) bytes).
 *  - bits == 0 means "all null" (a Constant without value, e.g. the all-null items of an FSL):
 *    data is NULL and data_len 0.
 *  - Flat widths 2..7 are returned packed LSB-first as stored (same order as a bitmap).
 *  - `data` may point into the input slices (zero copy) or into the arena; either way it lives
 *    as long as both do. */

/* Mini-block context: decode one chunk's value buffers (bufs[0..nbufs)) holding n values. */
int lnc_enc_miniblock(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                      struct lnc_arena *a, struct lnc_values *out, struct lnc_error *err);
/* The same where the caller will read only the values want[0..nwant) (indices < n): an
 * encoding that can decode single values (InlineBitpacking) decodes only those and leaves the
 * rest of out unwritten; any other decodes them all. Errors are lnc_enc_miniblock's. */
int lnc_enc_miniblock_pick(const lnc_enc *e, const struct lnc_slice *bufs, size_t nbufs, uint64_t n,
                           const uint32_t *want, size_t nwant, struct lnc_arena *a,
                           struct lnc_values *out, struct lnc_error *err);
/* Block context: a whole buffer holding n values (dictionaries, constant scalars). */
int lnc_enc_block(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                  struct lnc_values *out, struct lnc_error *err);
/* Block context for rep/def levels: n 16-bit levels out, in the arena or (16-bit streams)
   pointing into buf or into what the decoder put in the arena: read-only, living as long as
   both do. */
int lnc_enc_levels(const lnc_enc *e, struct lnc_slice buf, uint64_t n, struct lnc_arena *a,
                   const uint16_t **out, struct lnc_error *err);
/* The same where the caller will read only the levels want[0..nwant) (indices < n): 16-bit
 * bitpacked streams unpack only those and leave the rest unwritten; any other decodes all. */
int lnc_enc_levels_pick(const lnc_enc *e, struct lnc_slice buf, uint64_t n, const uint32_t *want,
                        size_t nwant, struct lnc_arena *a, const uint16_t **out,
                        struct lnc_error *err);
/* Full-zip per-value contexts. Fixed: `value` is bits_per_value/8 bytes; out->n = 1.
   Variable: `value` is the bytes after the length prefix; *out = the decoded bytes. */
int lnc_enc_fixed_per_value(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                            struct lnc_values *out, struct lnc_error *err);
int lnc_enc_variable_per_value(const lnc_enc *e, struct lnc_slice value, struct lnc_arena *a,
                               struct lnc_slice *out, struct lnc_error *err);
/* VariablePackedStruct (2.2, full-zip per-value): split one row into its fields, each decoded
   (fixed fields: their raw bytes; variable fields: decoded bytes). fields_out has nfields slots. */
int lnc_enc_vps_split(const lnc_enc *e, struct lnc_slice row, struct lnc_arena *a,
                      struct lnc_slice *fields_out, size_t nfields, struct lnc_error *err);
/* Human-readable tree for `lancectl inspect`, e.g. "General(zstd, ByteStreamSplit(Flat(32)))",
   "Fsst(Variable(Flat(32)))", "InlineBitpacking(32)", "Rle(Flat(64), Flat(8))". Appends to out. */
int lnc_enc_describe(const lnc_enc *e, struct lnc_buf *out);
/* Name of the oneof case, for "unsupported encoding: X" messages. */
const char *lnc_enc_name(const lnc_enc *e);

/* ---- additional helpers (also usable by the layout layer) ------------------------------ */

/* Largest decompressed buffer a General/BufferCompression frame may declare (1 GiB). */
#define LNC_ENC_MAX_DECOMPRESSED ((size_t)1 << 30)

/* Decompresses one buffer framed as Lance writes it (scheme: 1 = LZ4 with u32 length prefix,
 * 2 = ZSTD with u64 length prefix or a bare frame). Empty input gives empty output. */
int lnc_enc_decompress(int scheme, struct lnc_slice in, struct lnc_arena *a,
                       struct lnc_slice *out, struct lnc_error *err);

/* FastLanes: unpacks one 1024-value block of T-bit words packed at width W (0 <= W <= T,
 * T in 8/16/32/64). `packed` holds 128*W bytes (need not be aligned); `out` receives 1024
 * values of T/8 bytes each, little-endian. */
void lnc_fl_unpack(unsigned T, unsigned W, const uint8_t *packed, void *out);
/* Value i (0..1023) of the same block, without unpacking the rest. */
uint64_t lnc_fl_get(unsigned T, unsigned W, const uint8_t *packed, unsigned i);

/* FSST symbol table, parsed without copying (points into the table bytes). */
struct lnc_fsst {
  const uint8_t *sym;  /* n 8-byte symbols, first byte lowest */
  const uint8_t *lens; /* n lengths, each 1..8 */
  unsigned n;
  int on; /* encoder switch: 0 = codes are the plain bytes */
};
int lnc_fsst_init(struct lnc_fsst *t, struct lnc_slice table, struct lnc_error *err);
/* Decoded length of one string's codes, or an error for a dangling escape. */
int lnc_fsst_decoded_len(const struct lnc_fsst *t, struct lnc_slice codes, size_t *len,
                         struct lnc_error *err);
/* Decodes one string into dst, which must hold decoded_len + 8 bytes; returns bytes written. */
size_t lnc_fsst_decode(const struct lnc_fsst *t, struct lnc_slice codes, uint8_t *dst);

#endif
