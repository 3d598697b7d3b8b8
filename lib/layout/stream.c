/* Value buffers and per-leaf row streams (see stream.h), and the page-layer table that maps
 * a page's def values to the canonical form. */
#include "stream.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>


void lnc_valbuf_free(struct lnc_valbuf *v) {
  free(v->data);
  free(v->offsets);
  free(v->foff);
  for (int k = 0; k < LNC_FSL_MAX_LEVELS; k++) free(v->item_valid[k]);
  memset(v, 0, sizeof *v);
}

bool lnc_valbuf_has_item_validity(const struct lnc_valbuf *v) {
  for (uint32_t k = 0; k < v->fsl_levels; k++)
    if (v->item_valid[k]) return true;
  return false;
}

/* One level of fixed-size list, items_per_value items per value: the shape of every buffer
 * not given another by lnc_valbuf_set_fsl (a scalar column has one item per value). */
static void vb_flat_shape(struct lnc_valbuf *v) {
  v->fsl_levels = 1;
  v->fsl_per_value[0] = v->items_per_value;
}

/* dst takes src's shape (kind, widths, list levels), no values. */
static int vb_copy_shape(struct lnc_valbuf *dst, const struct lnc_valbuf *src) {
  dst->kind = src->kind;
  dst->bits = src->bits;
  dst->items_per_value = src->items_per_value;
  dst->fsl_levels = src->fsl_levels;
  memcpy(dst->fsl_per_value, src->fsl_per_value, sizeof dst->fsl_per_value);
  dst->in_file = src->in_file;
  if (dst->kind == LNC_VALUES_VARIABLE) {
    if (lnc_grow_array((void **)&dst->offsets, &dst->off_cap, 1, 8)) return LNC_ENOMEM;
    dst->offsets[0] = 0;
  }
  return 0;
}

int lnc_valbuf_init_like(struct lnc_valbuf *v, const struct lnc_valbuf *shape) {
  memset(v, 0, sizeof *v);
  return vb_copy_shape(v, shape);
}

int lnc_valbuf_set_fsl(struct lnc_valbuf *v, uint32_t levels, const uint64_t *per_value) {
  if (v->kind != LNC_VALUES_FIXED || v->n || levels == 0 || levels > LNC_FSL_MAX_LEVELS ||
      per_value[levels - 1] != v->items_per_value)
    return LNC_EINTERNAL;
  for (uint32_t k = 0; k < levels; k++)
    if (per_value[k] == 0 || (k && per_value[k] < per_value[k - 1])) return LNC_EINTERNAL;
  v->fsl_levels = levels;
  memcpy(v->fsl_per_value, per_value, levels * sizeof *per_value);
  return 0;
}

static int vb_setup(struct lnc_valbuf *v, const struct lnc_values *src) {
  if (v->kind) {
    if (v->kind != src->kind || (v->kind == LNC_VALUES_FIXED && src->bits != 0 && v->bits != src->bits))
      return LNC_ECORRUPT;
    if (v->kind == LNC_VALUES_FIXED && v->bits == 0 && src->bits != 0) return LNC_ECORRUPT;
    return 0;
  }
  v->kind = src->kind;
  v->bits = src->bits;
  v->items_per_value = src->fsl_dim ? src->fsl_dim : 1;
  vb_flat_shape(v);
  if (v->kind == LNC_VALUES_VARIABLE) {
    if (lnc_grow_array((void **)&v->offsets, &v->off_cap, 1, 8)) return LNC_ENOMEM;
    v->offsets[0] = 0;
  }
  return 0;
}

/* Bits of one value and the byte-aligned copy helper for fixed values. */
static int fixed_append(struct lnc_valbuf *v, const uint8_t *data, uint64_t i, bool null_value) {
  uint64_t ipv = v->items_per_value;
  if (v->bits % 8 == 0) {
    size_t w = (size_t)(v->bits / 8 * ipv);
    if (w == 0) return 0; /* null items (0 bits): slots only, and no buffer to write into */
    if (lnc_grow_array((void **)&v->data, &v->data_cap, v->data_len + w, 1)) return LNC_ENOMEM;
    if (null_value || !data)
      memset(v->data + v->data_len, 0, w);
    else
      memcpy(v->data + v->data_len, data + i * w, w);
    v->data_len += w;
  } else {
    uint64_t nbits = (uint64_t)v->bits * ipv, at = v->n * nbits;
    size_t need = (size_t)((at + nbits + 7) / 8);
    if (lnc_grow_array((void **)&v->data, &v->data_cap, need, 1)) return LNC_ENOMEM;
    if (need > v->data_len) {
      memset(v->data + v->data_len, 0, need - v->data_len);
      v->data_len = need;
    }
    if (!null_value && data) {
      uint64_t from = i * nbits;
      for (uint64_t b = 0; b < nbits; b++) {
        uint64_t s = from + b, d = at + b;
        if ((data[s >> 3] >> (s & 7)) & 1) v->data[d >> 3] |= (uint8_t)(1u << (d & 7));
      }
    }
  }
  return 0;
}

/* Room for `bits` bits in level k's item validity; bits not yet written read valid (the
 * bitmap is made on the first layer that has any, all valid for the values before). */
static int item_validity_grow(struct lnc_valbuf *v, uint32_t k, uint64_t bits) {
  size_t bytes = (size_t)((bits + 7) / 8), old = v->item_valid[k] ? v->iv_cap[k] : 0;
  if (lnc_grow_array((void **)&v->item_valid[k], &v->iv_cap[k], bytes, 1)) return LNC_ENOMEM;
  if (v->iv_cap[k] > old) memset(v->item_valid[k] + old, 0xff, v->iv_cap[k] - old);
  return 0;
}

/* Appends value i's item validity at every level: src's layer of that level, or all valid;
 * all_invalid marks the innermost items null (a Constant without value). A layer whose width
 * is not this buffer's (a page whose dimensions are not the schema's) is corrupt: reading it
 * at this buffer's width would run past its end. */
static int item_validity_append(struct lnc_valbuf *v, const struct lnc_values *src, uint64_t i,
                                bool all_invalid) {
  /* the common case, a value of a column without item validity: nothing to write */
  if (!all_invalid && !(src && src->n_item_validity) && !lnc_valbuf_has_item_validity(v)) return 0;
  const uint8_t *sv[LNC_FSL_MAX_LEVELS] = {0};
  for (uint32_t j = 0; src && j < src->n_item_validity && j < LNC_FSL_MAX_LEVELS; j++) {
    uint32_t k = src->item_validity_level[j];
    if (k >= v->fsl_levels || src->item_validity_per_value[j] != v->fsl_per_value[k]) return LNC_ECORRUPT;
    sv[k] = src->item_validity[j];
  }
  for (uint32_t k = 0; k < v->fsl_levels; k++) {
    bool none = all_invalid && k == v->fsl_levels - 1;
    if (!v->item_valid[k] && !none && !sv[k]) continue;
    uint64_t pv = v->fsl_per_value[k];
    int rc = item_validity_grow(v, k, (v->n + 1) * pv);
    if (rc) return rc;
    for (uint64_t b = 0; b < pv; b++) {
      uint64_t d = v->n * pv + b, s = i * pv + b;
      bool ok = !none && (!sv[k] || ((sv[k][s >> 3] >> (s & 7)) & 1));
      if (ok)
        v->item_valid[k][d >> 3] |= (uint8_t)(1u << (d & 7));
      else
        v->item_valid[k][d >> 3] &= (uint8_t) ~(1u << (d & 7));
    }
  }
  return 0;
}

int lnc_valbuf_append(struct lnc_valbuf *v, const struct lnc_values *src, uint64_t i) {
  int rc = vb_setup(v, src);
  if (rc) return rc;
  if (i >= src->n) return LNC_ECORRUPT;
  if (v->in_file) return LNC_EINTERNAL; /* the column was planned to stay in the file */
  if (v->kind == LNC_VALUES_VARIABLE) {
    uint64_t a = src->offsets[i], b = src->offsets[i + 1];
    if (a > b || b > src->data_len) return LNC_ECORRUPT;
    if (lnc_grow_array((void **)&v->data, &v->data_cap, v->data_len + (b - a), 1) ||
        lnc_grow_array((void **)&v->offsets, &v->off_cap, v->n + 2, 8))
      return LNC_ENOMEM;
    if (b > a) memcpy(v->data + v->data_len, src->data + a, b - a);
    v->data_len += b - a;
    v->offsets[++v->n] = v->data_len;
    return 0;
  }
  /* The copy takes the buffer's width (bits x items per value, fixed by its first value or
   * the schema); a value decoded narrower from a corrupt page must not be read past its end
   * (a full-zip row of one 4-byte value into a 3216-byte list slot did, found by fuzz_file). */
  if (src->bits != 0 && src->data) {
    uint64_t nbits = (uint64_t)v->bits * v->items_per_value;
    if (nbits && (i + 1 > UINT64_MAX / nbits || (i + 1) * nbits > (uint64_t)src->data_len * 8)) return LNC_ECORRUPT;
  }
  if ((rc = item_validity_append(v, src, i, src->bits == 0))) return rc;
  if ((rc = fixed_append(v, src->data, i, src->bits == 0))) return rc;
  v->n++;
  return 0;
}

int lnc_valbuf_init(struct lnc_valbuf *v, int kind, uint32_t bits, uint64_t items_per_value) {
  memset(v, 0, sizeof *v);
  v->kind = kind;
  v->bits = bits;
  v->items_per_value = items_per_value ? items_per_value : 1;
  vb_flat_shape(v);
  if (kind == LNC_VALUES_VARIABLE) {
    if (lnc_grow_array((void **)&v->offsets, &v->off_cap, 1, 8)) return LNC_ENOMEM;
    v->offsets[0] = 0;
  }
  return 0;
}

int lnc_valbuf_append_null(struct lnc_valbuf *v) {
  if (!v->kind) return LNC_EINTERNAL; /* lnc_valbuf_init first */
  if (v->kind == LNC_VALUES_VARIABLE) {
    if (lnc_grow_array((void **)&v->offsets, &v->off_cap, v->n + 2, 8) ||
        (v->in_file && lnc_grow_array((void **)&v->foff, &v->foff_cap, v->n + 1, 8)))
      return LNC_ENOMEM;
    if (v->in_file) v->foff[v->n] = 0; /* no bytes: any offset */
    v->offsets[++v->n] = v->data_len;
    return 0;
  }
  if (v->in_file) return LNC_EINTERNAL; /* fixed values stay in the file only where none is null (fullzip.c) */
  int rc = fixed_append(v, NULL, 0, true);
  if (rc) return rc;
  if (lnc_valbuf_has_item_validity(v) && (rc = item_validity_append(v, NULL, 0, false))) return rc;
  v->n++;
  return 0;
}

int lnc_valbuf_append_fixed(struct lnc_valbuf *v, const uint8_t *data, uint64_t count) {
  if (v->kind != LNC_VALUES_FIXED || v->bits == 0 || v->bits % 8 || v->items_per_value != 1 ||
      lnc_valbuf_has_item_validity(v))
    return LNC_EINTERNAL;
  size_t bytes = (size_t)count * (v->bits / 8);
  if (lnc_grow_array((void **)&v->data, &v->data_cap, v->data_len + bytes, 1)) return LNC_ENOMEM;
  if (bytes) memcpy(v->data + v->data_len, data, bytes);
  v->data_len += bytes;
  v->n += count;
  return 0;
}

void lnc_valbuf_zero_fixed(struct lnc_valbuf *v, uint64_t i) {
  size_t w = v->bits / 8;
  if (v->data && i < v->n && (i + 1) * w <= v->data_len) memset(v->data + i * w, 0, w);
}

int lnc_valbuf_append_bytes(struct lnc_valbuf *v, const uint8_t *p, size_t len) {
  struct lnc_values one = {0};
  uint64_t offs[2] = {0, len};
  one.kind = v->kind;
  one.n = 1;
  one.bits = v->bits;
  one.data = p;
  one.data_len = len;
  one.offsets = offs;
  one.fsl_dim = v->items_per_value > 1 ? v->items_per_value : 0;
  if (v->kind == LNC_VALUES_FIXED && (uint64_t)len * 8 < (uint64_t)v->bits * v->items_per_value)
    return LNC_ECORRUPT;
  return lnc_valbuf_append(v, &one, 0);
}

/* A fixed-width in_file buffer's bytes per value; 0 when its shape cannot stay in the file. */
static uint64_t in_file_width(const struct lnc_valbuf *v) {
  if (v->kind != LNC_VALUES_FIXED || v->bits == 0 || v->bits % 8 || v->fsl_levels != 1 ||
      lnc_valbuf_has_item_validity(v) || v->items_per_value > UINT64_MAX / (v->bits / 8))
    return 0;
  return v->items_per_value * (v->bits / 8);
}

/* A fixed-width value left in the file: its offset, and its bytes counted. */
static int append_file_fixed(struct lnc_valbuf *v, uint64_t off, uint64_t len) {
  uint64_t w = in_file_width(v);
  if (!w || len != w) return LNC_EINTERNAL;
  if (len > SIZE_MAX - v->data_len) return LNC_ENOMEM;
  if (lnc_grow_array((void **)&v->foff, &v->foff_cap, v->n + 1, 8)) return LNC_ENOMEM;
  v->foff[v->n++] = off;
  v->data_len += (size_t)len;
  return 0;
}

int lnc_valbuf_append_file(struct lnc_valbuf *v, uint64_t off, uint64_t len) {
  if (!v->in_file || v->data) return LNC_EINTERNAL;
  if (v->kind == LNC_VALUES_FIXED) return append_file_fixed(v, off, len);
  if (v->kind != LNC_VALUES_VARIABLE) return LNC_EINTERNAL;
  if (len > SIZE_MAX - v->data_len) return LNC_ENOMEM;
  if (lnc_grow_array((void **)&v->offsets, &v->off_cap, v->n + 2, 8) ||
      lnc_grow_array((void **)&v->foff, &v->foff_cap, v->n + 1, 8))
    return LNC_ENOMEM;
  v->foff[v->n] = off;
  v->data_len += (size_t)len;
  v->offsets[++v->n] = v->data_len;
  return 0;
}

/* An in_file range: the values' file offsets move, their bytes stay where they are. */
static int append_range_in_file(struct lnc_valbuf *dst, const struct lnc_valbuf *src, uint64_t from,
                                uint64_t count) {
  if (dst->data || (dst->n && !dst->in_file)) return LNC_EINTERNAL;
  if (src->kind == LNC_VALUES_FIXED) { /* every value the same width */
    uint64_t w = in_file_width(src);
    if (!w || dst->kind != LNC_VALUES_FIXED) return LNC_EINTERNAL;
    if (count > (SIZE_MAX - dst->data_len) / w) return LNC_ENOMEM;
    if (lnc_grow_array((void **)&dst->foff, &dst->foff_cap, dst->n + count, 8)) return LNC_ENOMEM;
    dst->in_file = true;
    memcpy(dst->foff + dst->n, src->foff + from, count * sizeof *dst->foff);
    dst->data_len += (size_t)(count * w);
    dst->n += count;
    return 0;
  }
  uint64_t a = src->offsets[from], b = src->offsets[from + count];
  if (lnc_grow_array((void **)&dst->offsets, &dst->off_cap, dst->n + count + 1, 8) ||
      lnc_grow_array((void **)&dst->foff, &dst->foff_cap, dst->n + count, 8))
    return LNC_ENOMEM;
  dst->in_file = true;
  memcpy(dst->foff + dst->n, src->foff + from, count * sizeof *dst->foff);
  for (uint64_t k = 1; k <= count; k++) dst->offsets[dst->n + k] = dst->data_len + (src->offsets[from + k] - a);
  dst->data_len += b - a;
  dst->n += count;
  return 0;
}

int lnc_valbuf_append_range(struct lnc_valbuf *dst, const struct lnc_valbuf *src, uint64_t from,
                            uint64_t count) {
  if (count == 0) return 0;
  if (from + count > src->n) return LNC_EINTERNAL;
  if (!dst->kind && vb_copy_shape(dst, src)) return LNC_ENOMEM;
  if (src->in_file) return append_range_in_file(dst, src, from, count);
  if (dst->in_file) return LNC_EINTERNAL;
  if (src->kind == LNC_VALUES_VARIABLE) {
    uint64_t a = src->offsets[from], b = src->offsets[from + count];
    if (lnc_grow_array((void **)&dst->data, &dst->data_cap, dst->data_len + (b - a), 1) ||
        lnc_grow_array((void **)&dst->offsets, &dst->off_cap, dst->n + count + 1, 8))
      return LNC_ENOMEM;
    if (b > a) memcpy(dst->data + dst->data_len, src->data + a, b - a);
    for (uint64_t k = 1; k <= count; k++)
      dst->offsets[dst->n + k] = dst->data_len + (src->offsets[from + k] - a);
    dst->data_len += b - a;
    dst->n += count;
    return 0;
  }
  /* Fixed: reuse the single-value path (it handles bit widths and item validity). */
  struct lnc_values view = {0};
  view.kind = LNC_VALUES_FIXED;
  view.n = src->n;
  view.bits = src->bits;
  view.data = src->data;
  view.data_len = src->data_len;
  view.fsl_dim = src->items_per_value > 1 ? src->items_per_value : 0;
  for (uint32_t k = 0; k < src->fsl_levels; k++)
    if (src->item_valid[k]) {
      uint32_t j = view.n_item_validity++;
      view.item_validity[j] = src->item_valid[k];
      view.item_validity_level[j] = (uint8_t)k;
      view.item_validity_per_value[j] = src->fsl_per_value[k];
    }
  if (src->kind == LNC_VALUES_FIXED && src->bits % 8 == 0 && !view.n_item_validity &&
      !lnc_valbuf_has_item_validity(dst)) {
    size_t w = (size_t)(src->bits / 8 * src->items_per_value);
    if (lnc_grow_array((void **)&dst->data, &dst->data_cap, dst->data_len + w * count, 1)) return LNC_ENOMEM;
    memcpy(dst->data + dst->data_len, src->data + from * w, w * count);
    dst->data_len += w * count;
    dst->n += count;
    return 0;
  }
  for (uint64_t k = 0; k < count; k++) {
    int rc = lnc_valbuf_append(dst, &view, from + k);
    if (rc) return rc;
  }
  return 0;
}

void lnc_leafrows_free(struct lnc_leafrows *r) {
  free(r->rep);
  free(r->def);
  free(r->row_lev);
  free(r->row_val);
  lnc_valbuf_free(&r->values);
  memset(r, 0, sizeof *r);
}

/* Room for `need` levels in both rep and def. */
static int grow_levels(struct lnc_leafrows *r, uint64_t need) {
  if (need <= r->lev_cap) return 0;
  size_t cap = r->lev_cap, cap2 = r->lev_cap;
  if (lnc_grow_array((void **)&r->rep, &cap, need, 2) || lnc_grow_array((void **)&r->def, &cap2, need, 2)) return LNC_ENOMEM;
  r->lev_cap = cap < cap2 ? cap : cap2;
  return 0;
}

int lnc_leafrows_push_level(struct lnc_leafrows *r, uint16_t rep, uint16_t def) {
  if (grow_levels(r, r->n_levels + 1)) return LNC_ENOMEM;
  r->rep[r->n_levels] = rep;
  r->def[r->n_levels] = def;
  r->n_levels++;
  return 0;
}

int lnc_leafrows_push_levels(struct lnc_leafrows *r, const uint16_t *rep, const uint16_t *def,
                             const uint16_t *def_map, uint64_t n) {
  if (n == 0) return 0;
  if (grow_levels(r, r->n_levels + n)) return LNC_ENOMEM;
  uint16_t *ro = r->rep + r->n_levels, *dout = r->def + r->n_levels;
  if (rep)
    memcpy(ro, rep, n * sizeof *ro);
  else
    memset(ro, 0, n * sizeof *ro);
  if (def)
    for (uint64_t i = 0; i < n; i++) dout[i] = def_map[def[i]];
  else
    for (uint64_t i = 0; i < n; i++) dout[i] = def_map[0];
  r->n_levels += n;
  return 0;
}

int lnc_leafrows_end_row(struct lnc_leafrows *r) {
  if (r->n_rows + 2 > r->rows_cap) {
    size_t c1 = r->rows_cap, c2 = r->rows_cap;
    if (lnc_grow_array((void **)&r->row_lev, &c1, r->n_rows + 2, 8) ||
        lnc_grow_array((void **)&r->row_val, &c2, r->n_rows + 2, 8))
      return LNC_ENOMEM;
    r->rows_cap = c1 < c2 ? c1 : c2;
  }
  if (r->n_rows == 0) {
    r->row_lev[0] = 0;
    r->row_val[0] = 0;
  }
  r->n_rows++;
  r->row_lev[r->n_rows] = r->n_levels;
  r->row_val[r->n_rows] = r->values.n;
  return 0;
}

/* Room for all of perm's rows in dst at once. Grown by doubling as rows were appended, the
 * values were copied again at every doubling: for a training batch's image column (2 MB) a
 * fifth of the permute's time went to realloc's copies. */
static int permute_reserve(const struct lnc_leafrows *src, const uint32_t *perm, uint64_t n,
                           struct lnc_leafrows *dst) {
  const struct lnc_valbuf *sv = &src->values;
  uint64_t levels = 0, values = 0, bytes = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint32_t u = perm[k];
    if (u >= src->n_rows) return LNC_EINTERNAL;
    uint64_t v0 = src->row_val[u], v1 = src->row_val[u + 1];
    if (v1 < v0 || v1 > sv->n) return LNC_EINTERNAL;
    if (__builtin_add_overflow(levels, src->row_lev[u + 1] - src->row_lev[u], &levels) ||
        __builtin_add_overflow(values, v1 - v0, &values))
      return LNC_ENOMEM;
    if (sv->kind == LNC_VALUES_VARIABLE && __builtin_add_overflow(bytes, sv->offsets[v1] - sv->offsets[v0], &bytes))
      return LNC_ENOMEM;
  }
  if (sv->kind == LNC_VALUES_FIXED && sv->bits % 8 == 0 &&
      __builtin_mul_overflow(values, (uint64_t)(sv->bits / 8) * sv->items_per_value, &bytes))
    return LNC_ENOMEM;
  struct lnc_valbuf *dv = &dst->values;
  size_t rc1 = dst->rows_cap, rc2 = dst->rows_cap;
  if (sv->in_file) { /* no bytes to hold: a file offset per value */
    if (values && lnc_grow_array((void **)&dv->foff, &dv->foff_cap, values, 8)) return LNC_ENOMEM;
    bytes = 0;
  }
  if ((levels && grow_levels(dst, levels)) || (bytes && lnc_grow_array((void **)&dv->data, &dv->data_cap, bytes, 1)) ||
      (sv->kind == LNC_VALUES_VARIABLE && lnc_grow_array((void **)&dv->offsets, &dv->off_cap, values + 1, 8)) ||
      lnc_grow_array((void **)&dst->row_lev, &rc1, n + 2, 8) || lnc_grow_array((void **)&dst->row_val, &rc2, n + 2, 8))
    return LNC_ENOMEM;
  dst->rows_cap = rc1 < rc2 ? rc1 : rc2;
  return 0;
}

int lnc_leafrows_permute(const struct lnc_leafrows *src, const uint32_t *perm, uint64_t n,
                         struct lnc_leafrows *dst) {
  memset(dst, 0, sizeof *dst);
  dst->has_rep = src->has_rep;
  dst->has_def = src->has_def;
  if (vb_copy_shape(&dst->values, &src->values)) return LNC_ENOMEM;
  int pr = permute_reserve(src, perm, n, dst);
  if (pr) return pr;
  for (uint64_t k = 0; k < n; k++) {
    uint32_t u = perm[k];
    if (u >= src->n_rows) return LNC_EINTERNAL;
    uint64_t l0 = src->row_lev[u], nl = src->row_lev[u + 1] - l0;
    if (nl) { /* the row's levels, copied as a run */
      if (grow_levels(dst, dst->n_levels + nl)) return LNC_ENOMEM;
      if (src->rep)
        memcpy(dst->rep + dst->n_levels, src->rep + l0, nl * sizeof *dst->rep);
      else
        memset(dst->rep + dst->n_levels, 0, nl * sizeof *dst->rep);
      if (src->def)
        memcpy(dst->def + dst->n_levels, src->def + l0, nl * sizeof *dst->def);
      else
        memset(dst->def + dst->n_levels, 0, nl * sizeof *dst->def);
      dst->n_levels += nl;
    }
    int rc = lnc_valbuf_append_range(&dst->values, &src->values, src->row_val[u],
                                     src->row_val[u + 1] - src->row_val[u]);
    if (rc) return rc;
    if ((rc = lnc_leafrows_end_row(dst))) return rc;
  }
  return 0;
}

int lnc_layers_init(struct lnc_layers *L, const int *kinds, size_t n, struct lnc_error *err) {
  memset(L, 0, sizeof *L);
  if (n == 0 || n > 30) return lnc_errf(err, LNC_ECORRUPT, "page has %zu rep/def layers", n);
  L->n = (uint32_t)n;
  L->first_list = (int)n;
  uint16_t lo = 1;
  L->def_map[0] = 0;
  for (size_t i = 0; i < n; i++) {
    int k = kinds[i];
    bool is_list = k == LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_ALL_VALID_LIST ||
                   k == LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULLABLE_LIST ||
                   k == LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_EMPTYABLE_LIST ||
                   k == LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULL_AND_EMPTY_LIST;
    if (is_list) {
      L->max_rep++;
      if (L->first_list == (int)n) L->first_list = (int)i;
    }
    uint16_t null_code = (uint16_t)(1 + 2 * i), empty_code = (uint16_t)(2 + 2 * i);
    switch (k) {
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_ALL_VALID_ITEM:
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_ALL_VALID_LIST: break;
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULLABLE_ITEM:
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULLABLE_LIST: L->def_map[lo++] = null_code; break;
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_EMPTYABLE_LIST: L->def_map[lo++] = empty_code; break;
    case LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULL_AND_EMPTY_LIST:
      L->def_map[lo++] = null_code;
      L->def_map[lo++] = empty_code;
      break;
    default: return lnc_errf(err, LNC_ECORRUPT, "unknown rep/def layer kind %d", k);
    }
  }
  L->max_def = (uint16_t)(lo - 1);
  return 0;
}
