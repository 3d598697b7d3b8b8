/* What the layout decoders produce for one leaf column of a take: the rows' rep/def levels
 * (rep as Lance writes it, def in the canonical form below) and their visible values, with
 * per-row boundaries so rows can be emitted in request order (duplicates included).
 * Canonical def: 0 = valid at every layer; 1 + 2*i = null at layer i; 2 + 2*i = empty list
 * at layer i (layers innermost first). Pages of one column may choose different layer kinds;
 * the canonical form makes their levels comparable. */
#ifndef LNC_LAYOUT_STREAM_H
#define LNC_LAYOUT_STREAM_H
#include <stdbool.h>
#include <stdint.h>
#include "../encoding/encoding.h"
#include "../format/reader.h"

/* Growable value buffer: fixed-width (bits 1 or a multiple of 8, optional per-item validity
 * for fixed-size lists) or variable-width (u64 offsets + bytes). malloc-backed: the final
 * buffers become Arrow buffers. */
struct lnc_valbuf {
  int kind;                 /* LNC_VALUES_FIXED / LNC_VALUES_VARIABLE, 0 = not set yet */
  uint32_t bits;            /* FIXED: bits per item */
  uint64_t items_per_value; /* FIXED: 1, or the fixed-size-list dimension */
  uint64_t n;               /* values appended */
  uint8_t *data;
  size_t data_len, data_cap;
  uint64_t *offsets; /* VARIABLE: n+1 entries */
  size_t off_cap;
  /* FIXED, a fixed-size list nested fsl_levels deep (1 unless lnc_valbuf_set_fsl said more):
   * level k has fsl_per_value[k] items per value (the product of the dimensions down to it,
   * the last one items_per_value), and item_valid[k] their validity, n*fsl_per_value[k] bits,
   * NULL = all valid. Level k's items are the lists of level k + 1. */
  uint32_t fsl_levels;
  uint64_t fsl_per_value[LNC_FSL_MAX_LEVELS];
  uint8_t *item_valid[LNC_FSL_MAX_LEVELS];
  size_t iv_cap[LNC_FSL_MAX_LEVELS];
  /* in_file (lnc_take_options.file_values_min): the values' bytes stay in the file; value k
   * is [foff[k], foff[k] + its length) of it (VARIABLE: offsets[k+1] - offsets[k]; FIXED, a
   * single-level fixed-size list of byte-wide items without item validity: the value's
   * width). data stays NULL and data_len counts the bytes the values would take. */
  bool in_file;
  uint64_t *foff;
  size_t foff_cap;
};

/* Sets the shape up front (from the field's type) so nulls can be appended before values. */
int lnc_valbuf_init(struct lnc_valbuf *v, int kind, uint32_t bits, uint64_t items_per_value);
/* After init, before any value: the values are fixed-size lists nested `levels` deep
 * (1..LNC_FSL_MAX_LEVELS) with per_value[k] items at level k (non-decreasing, the last equal
 * to items_per_value). LNC_EINTERNAL when they are not. */
int lnc_valbuf_set_fsl(struct lnc_valbuf *v, uint32_t levels, const uint64_t *per_value);
/* An empty buffer of shape's kind, widths and list levels (only those fields of shape are read:
 * it may be a copy of a buffer since freed). */
int lnc_valbuf_init_like(struct lnc_valbuf *v, const struct lnc_valbuf *shape);
/* Whether any level has item validity. */
bool lnc_valbuf_has_item_validity(const struct lnc_valbuf *v);
void lnc_valbuf_free(struct lnc_valbuf *v);
/* Appends value i of src (dictionary-mapped by the caller if needed). */
int lnc_valbuf_append(struct lnc_valbuf *v, const struct lnc_values *src, uint64_t i);
/* Appends a placeholder for a null slot (zero bytes / empty string / invalid items). */
int lnc_valbuf_append_null(struct lnc_valbuf *v);
/* Appends one value given as raw bytes (fixed: items_per_value*bits/8 bytes; variable: any). */
int lnc_valbuf_append_bytes(struct lnc_valbuf *v, const uint8_t *p, size_t len);
/* Appends count fixed-width values given as their bytes, back to back (byte-aligned widths,
 * one item per value, no item validity: the caller checks). */
int lnc_valbuf_append_fixed(struct lnc_valbuf *v, const uint8_t *data, uint64_t count);
/* Sets fixed-width value i (< n, byte-aligned width) to zero bytes, as a null slot holds. */
void lnc_valbuf_zero_fixed(struct lnc_valbuf *v, uint64_t i);
/* Appends a value whose len bytes are at file offset off, to an in_file buffer (the planner
 * sets in_file before the first value; LNC_EINTERNAL on any other, and on a fixed-width
 * value of another width). */
int lnc_valbuf_append_file(struct lnc_valbuf *v, uint64_t off, uint64_t len);
/* Appends values [from, from+count) of src to dst (same kind). */
int lnc_valbuf_append_range(struct lnc_valbuf *dst, const struct lnc_valbuf *src, uint64_t from,
                            uint64_t count);

struct lnc_leafrows {
  bool has_rep, has_def;
  uint64_t n_levels, lev_cap;
  uint16_t *rep, *def;
  struct lnc_valbuf values;
  /* Row boundaries: row k spans levels [row_lev[k], row_lev[k+1]) and values
   * [row_val[k], row_val[k+1]). Without levels, row k is value k. */
  uint64_t n_rows, rows_cap;
  uint64_t *row_lev, *row_val;
};

void lnc_leafrows_free(struct lnc_leafrows *r);
int lnc_leafrows_push_level(struct lnc_leafrows *r, uint16_t rep, uint16_t def);
/* Appends n levels: rep[i] (0 without rep) and def_map[def[i]] (def_map[0] without def); the
 * caller has range-checked every def against its map. */
int lnc_leafrows_push_levels(struct lnc_leafrows *r, const uint16_t *rep, const uint16_t *def,
                             const uint16_t *def_map, uint64_t n);
/* Closes the current row: records where the next row starts. Call once per row. */
int lnc_leafrows_end_row(struct lnc_leafrows *r);
/* Builds dst from src rows in the order perm[0..n) (indices into src rows). */
int lnc_leafrows_permute(const struct lnc_leafrows *src, const uint32_t *perm, uint64_t n,
                         struct lnc_leafrows *dst);

/* Layer facts of a page, from its RepDefLayer list. */
struct lnc_layers {
  uint32_t n;           /* layers, innermost first */
  uint16_t max_rep;     /* number of list layers */
  uint16_t max_def;     /* page def values range 0..max_def */
  int first_list;       /* index of the innermost list layer, or n if none */
  uint16_t def_map[64]; /* page def value -> canonical def */
};
int lnc_layers_init(struct lnc_layers *L, const int *kinds, size_t n, struct lnc_error *err);
/* Visible = owns a value slot. */
static inline bool lnc_def_visible(const struct lnc_layers *L, uint16_t canon) {
  return canon == 0 || (int)((canon - 1) / 2) < L->first_list;
}

#endif
