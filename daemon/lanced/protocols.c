/* Protobuf answers built from liblance's Arrow output: TakeResponse (Arrow IPC bytes, or
 * typed per-column values for scalar types) and FileInfo (schema as Field trees). Also the
 * Arrow format string → readable type name used by /files and FileInfo. */
#include "lanced.h"
#include "service.h"
#include "metrics.h"
#include "routes.h"
#include "util/buf.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lanced/v1/lanced.pb-c.h"

/* Everything a response borrows is freed together once it is packed. */
struct pool {
  void **p;
  size_t n, cap;
};

static void *pool_alloc(struct pool *pl, size_t size) {
  if (lnc_grow_array((void **)&pl->p, &pl->cap, pl->n + 1, sizeof *pl->p)) return NULL;
  void *m = calloc(1, size ? size : 1);
  if (m) pl->p[pl->n++] = m;
  return m;
}

static void pool_free(struct pool *pl) {
  for (size_t i = 0; i < pl->n; i++) free(pl->p[i]);
  free(pl->p);
}

/* ---- type names ---------------------------------------------------------------------------- */
static const char *unit_name(char u) {
  return u == 's' ? "s" : u == 'm' ? "ms"
                      : u == 'u'   ? "us"
                      : u == 'n'   ? "ns"
                                   : "?";
}

void ld_arrow_type_name(const struct ArrowSchema *s, struct lnc_buf *o) {
  const char *f = s->format ? s->format : "?";
  if (s->dictionary) {
    ld_buf_puts(o, "dictionary<");
    ld_arrow_type_name(s->dictionary, o);
    ld_buf_puts(o, ">");
    return;
  }
  static const struct { const char *fmt, *name; } simple[] = {
      {"n", "null"},
      {"b", "bool"},
      {"c", "int8"},
      {"C", "uint8"},
      {"s", "int16"},
      {"S", "uint16"},
      {"i", "int32"},
      {"I", "uint32"},
      {"l", "int64"},
      {"L", "uint64"},
      {"e", "float16"},
      {"f", "float32"},
      {"g", "float64"},
      {"z", "binary"},
      {"Z", "large_binary"},
      {"u", "utf8"},
      {"U", "large_utf8"},
      {"tdD", "date32"},
      {"tdm", "date64"}};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (!strcmp(f, simple[i].fmt)) {
      ld_buf_puts(o, simple[i].name);
      return;
    }
  if (!strncmp(f, "w:", 2))
    ld_buf_printf(o, "fixed_size_binary[%s]", f + 2);
  else if (!strncmp(f, "d:", 2))
    ld_buf_printf(o, "decimal(%s)", f + 2);
  else if (!strncmp(f, "tt", 2) && f[2])
    ld_buf_printf(o, "time%s[%s]", f[2] == 's' || f[2] == 'm' ? "32" : "64", unit_name(f[2]));
  else if (!strncmp(f, "ts", 2) && f[2] && f[3] == ':') {
    if (f[4])
      ld_buf_printf(o, "timestamp[%s, tz=%s]", unit_name(f[2]), f + 4);
    else
      ld_buf_printf(o, "timestamp[%s]", unit_name(f[2]));
  } else if (!strncmp(f, "tD", 2) && f[2])
    ld_buf_printf(o, "duration[%s]", unit_name(f[2]));
  else if (!strcmp(f, "+l") || !strcmp(f, "+L") || !strncmp(f, "+w:", 3)) {
    ld_buf_puts(o, f[1] == 'l' ? "list<" : f[1] == 'L' ? "large_list<"
                                                       : "fixed_size_list<");
    if (s->n_children > 0) ld_arrow_type_name(s->children[0], o);
    ld_buf_puts(o, ">");
    if (f[1] == 'w') ld_buf_printf(o, "[%s]", f + 3);
  } else if (!strcmp(f, "+m") && s->n_children == 1 && s->children[0]->n_children == 2) {
    /* Arrow's spelling: map<key, value>, the entries struct left out */
    ld_buf_puts(o, "map<");
    ld_arrow_type_name(s->children[0]->children[0], o);
    ld_buf_puts(o, ", ");
    ld_arrow_type_name(s->children[0]->children[1], o);
    ld_buf_puts(o, ">");
  } else if (!strcmp(f, "+s")) {
    ld_buf_puts(o, "struct<");
    for (int64_t i = 0; i < s->n_children; i++) {
      if (i) ld_buf_puts(o, ", ");
      ld_buf_printf(o, "%s: ", s->children[i]->name ? s->children[i]->name : "");
      ld_arrow_type_name(s->children[i], o);
    }
    ld_buf_puts(o, ">");
  } else
    ld_buf_printf(o, "arrow:%s", f);
}

/* ---- values ---------------------------------------------------------------------------------- */
enum kind { K_NONE,
            K_BOOL,
            K_I64,
            K_U64,
            K_F64,
            K_STR,
            K_BIN,
            K_DEC };

/* How a column's values are read: the protobuf value kind, from lance.h's one type
 * vocabulary, parsed once per column (a dictionary column by its values, the index type
 * kept for reading indices). Kinds the protocol has no field for are K_NONE. */
struct vtype {
  enum kind k;
  struct lnc_atype_info t;  /* the values' type */
  struct lnc_atype_info it; /* dictionary columns: the index type */
  bool dict;
};

static enum kind kind_of_info(const struct lnc_atype_info *t) {
  switch (t->kind) {
  case LNC_AT_BOOL: return K_BOOL;
  case LNC_AT_INT: return t->is_signed ? K_I64 : K_U64;
  case LNC_AT_FLOAT: return K_F64;
  case LNC_AT_UTF8:
  case LNC_AT_LARGE_UTF8: return K_STR;
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_BINARY:
  case LNC_AT_FIXED_BINARY: return K_BIN;
  case LNC_AT_DECIMAL: return t->bits == 128 ? K_DEC : K_NONE;
  case LNC_AT_DATE32:
  case LNC_AT_DATE64:
  case LNC_AT_TIME:
  case LNC_AT_TIMESTAMP:
  case LNC_AT_DURATION:
    return K_I64;
  default: return K_NONE;
  }
}

static void vtype_of(const struct ArrowSchema *s, struct vtype *vt) {
  memset(vt, 0, sizeof *vt);
  vt->dict = s->dictionary != NULL;
  const struct ArrowSchema *vs = vt->dict ? s->dictionary : s;
  if (vt->dict && (lnc_arrow_parse_format(s->format, &vt->it, NULL) || vt->it.kind != LNC_AT_INT)) return;
  if (lnc_arrow_parse_format(vs->format, &vt->t, NULL) == 0) vt->k = kind_of_info(&vt->t);
}

struct val {
  bool valid;
  int64_t i;
  uint64_t u;
  double d;
  const uint8_t *p;
  size_t len;
  unsigned __int128 dec;
};

static bool bit(const void *buf, int64_t i) {
  return (((const uint8_t *)buf)[i >> 3] >> (i & 7)) & 1;
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 31 && m) {
    /* A NaN keeps its payload in the top mantissa bits, where converting the double back
     * to float16 (numpy's astype, IEEE narrowing) finds it again. */
    uint64_t bits = (uint64_t)(h & 0x8000) << 48 | 0x7ffULL << 52 | (uint64_t)m << 42;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? INFINITY
                                              : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* An integer of `bits` bits at index i; signed unless it is an unsigned INT (temporal
 * values are signed). */
static int64_t int_at(const struct lnc_atype_info *t, const void *buf, int64_t i) {
  bool sign = t->kind != LNC_AT_INT || t->is_signed;
  switch (t->bits) {
  case 8: return sign ? (int64_t)((const int8_t *)buf)[i] : (int64_t)((const uint8_t *)buf)[i];
  case 16: return sign ? (int64_t)((const int16_t *)buf)[i] : (int64_t)((const uint16_t *)buf)[i];
  case 32: return sign ? (int64_t)((const int32_t *)buf)[i] : (int64_t)((const uint32_t *)buf)[i];
  default: return ((const int64_t *)buf)[i];
  }
}

/* Row i (logical, before the array's own offset) of a scalar column; a dictionary column's
 * value is the dictionary's row its index names. */
static void value_at(const struct vtype *vt, const struct ArrowArray *a, int64_t i, struct val *v) {
  int64_t j = a->offset + i;
  memset(v, 0, sizeof *v);
  v->valid = a->null_count == 0 || !a->buffers[0] || bit(a->buffers[0], j);
  if (!v->valid) return;
  if (vt->dict) {
    struct vtype values = *vt;
    values.dict = false;
    value_at(&values, a->dictionary, int_at(&vt->it, a->buffers[1], j), v);
    return;
  }
  const struct lnc_atype_info *t = &vt->t;
  const void *data = a->buffers[1];
  switch (vt->k) {
  case K_BOOL: v->u = bit(data, j); break;
  case K_I64: v->i = int_at(t, data, j); break;
  case K_U64: v->u = t->bits == 64 ? ((const uint64_t *)data)[j] : (uint64_t)int_at(t, data, j); break;
  case K_F64:
    v->d = t->bits == 64   ? ((const double *)data)[j]
           : t->bits == 32 ? (double)((const float *)data)[j]
                           : half_to_double(((const uint16_t *)data)[j]);
    break;
  case K_STR:
  case K_BIN:
    if (t->kind == LNC_AT_FIXED_BINARY) {
      size_t w = (size_t)t->width;
      v->p = (const uint8_t *)data + (size_t)j * w, v->len = w;
    } else if (t->kind == LNC_AT_LARGE_UTF8 || t->kind == LNC_AT_LARGE_BINARY) {
      const int64_t *off = data;
      v->p = (const uint8_t *)a->buffers[2] + off[j], v->len = (size_t)(off[j + 1] - off[j]);
    } else {
      const int32_t *off = data;
      v->p = (const uint8_t *)a->buffers[2] + off[j], v->len = (size_t)(off[j + 1] - off[j]);
    }
    break;
  case K_DEC: memcpy(&v->dec, (const uint8_t *)data + 16 * j, 16); break;
  default: break;
  }
}

/* The value's text (lnc_decimal_format, as the JSON answer writes it), copied into the pool. */
static char *decimal_string(struct pool *pl, unsigned __int128 raw, int scale) {
  char text[LNC_DECIMAL_STR_MAX];
  int n = lnc_decimal_format(&raw, 128, scale, text, sizeof text);
  if (n < 0) return NULL;
  char *o = pool_alloc(pl, (size_t)n + 1);
  if (o) memcpy(o, text, (size_t)n + 1);
  return o;
}

/* ---- tensors ---------------------------------------------------------------------------------
 * Numeric fixed-size lists (nested too) and lists of them, copied as packed values so a client
 * reads a column with one frombuffer. The wire is little-endian; so is every host lanced builds
 * for (the Arrow buffers are in host order and are copied as they are). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor encoding copies host-order Arrow buffers as little-endian"
#endif

/* Nesting below the item level; Arrow's own limit is far lower in practice. */
#define TENSOR_MAX_DIMS 8

struct tensor_chain {
  const struct ArrowSchema *s[TENSOR_MAX_DIMS + 1]; /* item level .. leaf */
  const struct ArrowArray *a[TENSOR_MAX_DIMS + 1];
  uint64_t dims[TENSOR_MAX_DIMS];
  int ndims;
  size_t per_item; /* leaf values per item: the product of dims */
  size_t width;    /* bytes per leaf value */
};

static size_t numeric_width(const struct ArrowSchema *s) {
  const char *f = s->format;
  if (s->dictionary || !f[0] || f[1]) return 0;
  return strchr("cC", f[0]) ? 1 : strchr("sSe", f[0]) ? 2
                              : strchr("iIf", f[0])   ? 4
                              : strchr("lLg", f[0])   ? 8
                                                      : 0;
}

/* Walks fixed-size lists from the item level (s, a) down to a numeric leaf; false when the
 * column is not a tensor of numbers. */
static bool tensor_chain(const struct ArrowSchema *s, const struct ArrowArray *a,
                         struct tensor_chain *c) {
  memset(c, 0, sizeof *c);
  c->per_item = 1;
  while (!strncmp(s->format, "+w:", 3)) {
    if (c->ndims == TENSOR_MAX_DIMS || s->n_children != 1 || a->n_children != 1) return false;
    long long d = atoll(s->format + 3);
    if (d <= 0) return false;
    c->s[c->ndims] = s, c->a[c->ndims] = a;
    c->dims[c->ndims++] = (uint64_t)d;
    c->per_item *= (size_t)d;
    s = s->children[0], a = a->children[0];
  }
  c->s[c->ndims] = s, c->a[c->ndims] = a;
  return (c->width = numeric_width(s)) != 0;
}

/* Copies items [p, p + cnt) (logical slots of the item level) to data at value position pos
 * and marks null values in valid (allocated on the first null; *valid NULL until then). Nulls
 * of the item level itself are marked only when mark_items (a list's items, not a column's
 * rows). Tight loop over the levels; each level's slots are contiguous. */
static int tensor_copy(struct pool *pl, const struct tensor_chain *c, int64_t p, size_t cnt,
                       bool mark_items, uint8_t *data, size_t pos, size_t total, uint8_t **valid) {
  size_t per_slot = c->per_item;
  for (int l = 0; l <= c->ndims; l++) {
    const struct ArrowArray *a = c->a[l];
    if ((l > 0 || mark_items) && a->null_count != 0 && a->buffers[0])
      for (size_t k = 0; k < cnt; k++) {
        if (bit(a->buffers[0], a->offset + p + (int64_t)k)) continue;
        if (!*valid) {
          if (!(*valid = pool_alloc(pl, total))) return -1;
          memset(*valid, 1, total);
        }
        memset(*valid + pos + k * per_slot, 0, per_slot);
      }
    if (l == c->ndims) break;
    /* logical slot p of this fixed-size list starts at the child's logical slot
     * (offset + p) * d; the child's own offset is added where it is read */
    p = (a->offset + p) * (int64_t)c->dims[l];
    cnt *= c->dims[l];
    per_slot /= c->dims[l];
  }
  const struct ArrowArray *leaf = c->a[c->ndims];
  if (cnt) memcpy(data + pos * c->width, (const uint8_t *)leaf->buffers[1] + (leaf->offset + p) * (int64_t)c->width, cnt * c->width);
  return 0;
}

/* Fills col->tensor for a numeric tensor column; 1 when the column is not one. */
static int fill_tensor(struct pool *pl, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int64_t parent_off, int64_t n, Lanced__V1__Column *col, struct ld_err *e) {
  bool list = !strcmp(s->format, "+l") || !strcmp(s->format, "+L");
  struct tensor_chain c;
  if (list ? s->n_children != 1 || a->n_children != 1 ||
                 !tensor_chain(s->children[0], a->children[0], &c)
           : strncmp(s->format, "+w:", 3) || !tensor_chain(s, a, &c))
    return 1;
  Lanced__V1__Tensor *t = pool_alloc(pl, sizeof *t);
  uint64_t *offsets = list ? pool_alloc(pl, ((size_t)n + 1) * sizeof *offsets) : NULL;
  if (!t || (list && !offsets)) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  lanced__v1__tensor__init(t);
  int64_t row0 = a->offset + parent_off;
  size_t items = (size_t)n;
  const struct tensor_chain *ch = &c;
  if (list) { /* item offsets of each row; a null row is empty */
    offsets[0] = 0;
    for (int64_t r = 0; r < n; r++) {
      int64_t j = row0 + r, lo, hi;
      if (s->format[1] == 'L')
        lo = ((const int64_t *)a->buffers[1])[j], hi = ((const int64_t *)a->buffers[1])[j + 1];
      else
        lo = ((const int32_t *)a->buffers[1])[j], hi = ((const int32_t *)a->buffers[1])[j + 1];
      bool valid = a->null_count == 0 || !a->buffers[0] || bit(a->buffers[0], j);
      offsets[r + 1] = offsets[r] + (valid && hi > lo ? (uint64_t)(hi - lo) : 0);
    }
    items = offsets[n];
  } /* else the column itself is the first fixed-size list: its dims are the row's shape */
  size_t total = items * ch->per_item;
  uint8_t *data = pool_alloc(pl, total * ch->width), *valid = NULL;
  if (!data) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  if (!list) {
    if (tensor_copy(pl, ch, row0 - a->offset, items, false, data, 0, total, &valid))
      return ld_errf(e, LD_EXHAUSTED, "out of memory");
  } else {
    for (int64_t r = 0; r < n; r++) {
      size_t cnt = (size_t)(offsets[r + 1] - offsets[r]);
      if (!cnt) continue;
      int64_t j = row0 + r;
      int64_t lo = s->format[1] == 'L' ? ((const int64_t *)a->buffers[1])[j]
                                       : ((const int32_t *)a->buffers[1])[j];
      if (tensor_copy(pl, ch, lo, cnt, true, data, (size_t)offsets[r] * ch->per_item, total, &valid))
        return ld_errf(e, LD_EXHAUSTED, "out of memory");
    }
    t->n_offsets = (size_t)n + 1, t->offsets = offsets;
  }
  struct lnc_buf tn = {0};
  ld_arrow_type_name(ch->s[ch->ndims], &tn);
  ld_buf_append(&tn, "", 1);
  if (!(t->dtype = pool_alloc(pl, tn.len))) {
    lnc_buf_free(&tn);
    return ld_errf(e, LD_EXHAUSTED, "out of memory");
  }
  memcpy(t->dtype, tn.data, tn.len);
  lnc_buf_free(&tn);
  t->n_shape = (size_t)ch->ndims;
  if (!(t->shape = pool_alloc(pl, (size_t)ch->ndims * sizeof *t->shape + 1)))
    return ld_errf(e, LD_EXHAUSTED, "out of memory");
  memcpy(t->shape, ch->dims, (size_t)ch->ndims * sizeof *t->shape);
  t->data.data = data, t->data.len = total * ch->width;
  if (valid) t->item_validity.data = valid, t->item_validity.len = total;
  col->values_case = LANCED__V1__COLUMN__VALUES_TENSOR;
  col->tensor = t;
  return 0;
}

static int fill_column(struct pool *pl, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int64_t parent_off, int64_t n, Lanced__V1__Column *col, struct ld_err *e) {
  lanced__v1__column__init(col);
  col->name = (char *)(s->name ? s->name : "");
  struct lnc_buf tn = {0};
  ld_arrow_type_name(s, &tn);
  ld_buf_append(&tn, "", 1);
  col->type = pool_alloc(pl, tn.len);
  if (!col->type) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  memcpy(col->type, tn.data, tn.len);
  lnc_buf_free(&tn);
  struct vtype vt;
  vtype_of(s, &vt);
  enum kind k = vt.k;
  int tr = k == K_NONE ? fill_tensor(pl, s, a, parent_off, n, col, e) : 1;
  if (tr != 1 && tr != 0) return tr;
  if (k == K_NONE && strcmp(s->format, "n") && tr == 1)
    return ld_errf(e, LD_UNIMPLEMENTED,
                   "column %s has type %s, which the protobuf format does not carry; use Arrow",
                   col->name, col->type);
  size_t un = (size_t)n;
  protobuf_c_boolean *validity = pool_alloc(pl, un * sizeof *validity);
  if (!validity) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  bool any_null = false;
  /* Per-kind value arrays; exactly one is used. */
  protobuf_c_boolean *bools = NULL;
  int64_t *i64 = NULL;
  uint64_t *u64 = NULL;
  double *f64 = NULL;
  char **strs = NULL;
  ProtobufCBinaryData *bins = NULL;
  void *vals = NULL;
  switch (k) {
  case K_BOOL: vals = bools = pool_alloc(pl, un * sizeof *bools); break;
  case K_I64: vals = i64 = pool_alloc(pl, un * sizeof *i64); break;
  case K_U64: vals = u64 = pool_alloc(pl, un * sizeof *u64); break;
  case K_F64: vals = f64 = pool_alloc(pl, un * sizeof *f64); break;
  case K_STR:
  case K_DEC: vals = strs = pool_alloc(pl, un * sizeof *strs); break;
  case K_BIN: vals = bins = pool_alloc(pl, un * sizeof *bins); break;
  default: vals = validity; break;
  }
  if (!vals) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  int scale = k == K_DEC ? vt.t.scale : 0;
  for (int64_t r = 0; r < n; r++) {
    struct val v;
    if (tr == 0)
      v.valid = a->null_count == 0 || !a->buffers[0] || bit(a->buffers[0], a->offset + parent_off + r);
    else if (k == K_NONE)
      v.valid = false;
    else
      value_at(&vt, a, parent_off + r, &v);
    validity[r] = v.valid;
    any_null |= !v.valid;
    switch (k) {
    case K_BOOL: bools[r] = v.valid && v.u; break;
    case K_I64: i64[r] = v.i; break;
    case K_U64: u64[r] = v.u; break;
    case K_F64: f64[r] = v.d; break;
    case K_STR:
      /* protobuf-c packs a string field by strlen (and pbjson.c measures it so): a U+0000,
       * valid in utf8, would silently cut the value. Such columns are served as Arrow only. */
      if (v.len && memchr(v.p, 0, v.len))
        return ld_errf(e, LD_UNIMPLEMENTED,
                       "column %s holds a string with a NUL character (row %lld), which the protobuf format "
                       "cannot carry here; use Arrow",
                       col->name, (long long)r);
      if (!(strs[r] = pool_alloc(pl, v.len + 1))) return ld_errf(e, LD_EXHAUSTED, "out of memory");
      if (v.len) memcpy(strs[r], v.p, v.len);
      break;
    case K_DEC:
      strs[r] = v.valid ? decimal_string(pl, v.dec, scale) : (char *)"";
      if (!strs[r]) return ld_errf(e, LD_EXHAUSTED, "out of memory");
      break;
    case K_BIN: bins[r].data = (uint8_t *)v.p, bins[r].len = v.len; break;
    default: break;
    }
  }
  if (any_null) col->n_validity = un, col->validity = validity;
#define SET(CASE, field, Type, init, arr)                     \
  do {                                                        \
    Type *m = pool_alloc(pl, sizeof *m);                      \
    if (!m) return ld_errf(e, LD_EXHAUSTED, "out of memory"); \
    init(m);                                                  \
    m->n_values = un, m->values = arr;                        \
    col->values_case = CASE, col->field = m;                  \
  } while (0)
  switch (k) {
  case K_BOOL: SET(LANCED__V1__COLUMN__VALUES_BOOLS, bools, Lanced__V1__BoolValues, lanced__v1__bool_values__init, bools); break;
  case K_I64: SET(LANCED__V1__COLUMN__VALUES_INT64S, int64s, Lanced__V1__Int64Values, lanced__v1__int64_values__init, i64); break;
  case K_U64: SET(LANCED__V1__COLUMN__VALUES_UINT64S, uint64s, Lanced__V1__UInt64Values, lanced__v1__uint64_values__init, u64); break;
  case K_F64: SET(LANCED__V1__COLUMN__VALUES_DOUBLES, doubles, Lanced__V1__DoubleValues, lanced__v1__double_values__init, f64); break;
  case K_STR:
  case K_DEC: SET(LANCED__V1__COLUMN__VALUES_STRINGS, strings, Lanced__V1__StringValues, lanced__v1__string_values__init, strs); break;
  case K_BIN: SET(LANCED__V1__COLUMN__VALUES_BINARIES, binaries, Lanced__V1__BytesValues, lanced__v1__bytes_values__init, bins); break;
  default: break;
  }
#undef SET
  return 0;
}

static void pack(const ProtobufCMessage *m, bool json, struct lnc_buf *out) {
  if (json) {
    ld_pbjson_write(m, out);
    return;
  }
  /* Packed straight into out: a scratch buffer copied over was a second copy of a whole
   * answer (6 MB for a training batch of 256). */
  size_t n = protobuf_c_message_get_packed_size(m);
  if (lnc_buf_reserve(out, n)) { /* the daemon's policy for a buffer it cannot grow (lanced.h) */
    ld_log(LD_LOG_ERROR, "out of memory for a %zu-byte protobuf answer", n);
    abort();
  }
  out->len += protobuf_c_message_pack(m, out->data + out->len);
}

/* The TakeResponse of t in resp (its parts in pl, an Arrow IPC body in ipc). */
static int build_take_response(struct pool *pl, const struct ld_take_result *t, int format,
                               Lanced__V1__TakeResponse *resp, Lanced__V1__ReadStats *st, struct lnc_buf *ipc,
                               struct ld_err *e) {
  int64_t ncols = t->schema.n_children;
  resp->num_rows = (uint64_t)t->array.length;
  resp->n_column_names = (size_t)ncols;
  resp->column_names = pool_alloc(pl, (size_t)ncols * sizeof(char *));
  if (!resp->column_names) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < ncols; i++)
    resp->column_names[i] = (char *)(t->schema.children[i]->name ? t->schema.children[i]->name : "");
  if (format == LANCED__V1__FORMAT__FORMAT_PROTO) {
    resp->n_columns = (size_t)ncols;
    resp->columns = pool_alloc(pl, (size_t)ncols * sizeof *resp->columns);
    if (!resp->columns) return ld_errf(e, LD_EXHAUSTED, "out of memory");
    for (int64_t i = 0; i < ncols; i++) {
      Lanced__V1__Column *col = pool_alloc(pl, sizeof *col);
      if (!col) return ld_errf(e, LD_EXHAUSTED, "out of memory");
      resp->columns[i] = col;
      int rc = fill_column(pl, t->schema.children[i], t->array.children[i], t->array.offset, t->array.length, col, e);
      if (rc) return rc;
    }
  } else {
    int rc = ld_service_encode(LD_F_ARROW, &t->schema, &t->array, 0, ipc, e) ? e->http : 0;
    if (rc) return rc;
    resp->arrow_ipc.data = ipc->data;
    resp->arrow_ipc.len = ipc->len;
  }
  st->reads = t->stats.reads;
  st->bytes_read = t->stats.bytes_read;
  st->bytes_decoded = t->stats.bytes_decoded;
  st->cache_hits = t->stats.cache_hits;
  st->cache_misses = t->stats.cache_misses;
  resp->stats = st;
  return 0;
}

int ld_proto_take_response(const struct ld_take_result *t, int format, bool json,
                           struct lnc_buf *out, struct ld_err *e) {
  struct pool pl = {0};
  struct lnc_buf ipc = {0};
  Lanced__V1__TakeResponse resp = LANCED__V1__TAKE_RESPONSE__INIT;
  Lanced__V1__ReadStats st = LANCED__V1__READ_STATS__INIT;
  int rc = build_take_response(&pl, t, format, &resp, &st, &ipc, e);
  if (!rc) pack(&resp.base, json, out);
  lnc_buf_free(&ipc);
  pool_free(&pl);
  return rc;
}

/* protobuf-c packs through a ProtobufCBuffer, handing it each bytes field's own pointer:
 * runs of ref_min bytes or more (a column's binaries, its tensor) become refs to where they
 * lie instead of copies; everything else is appended to out. Tags, lengths and packed
 * varints come from protobuf-c's scratch on its stack (at most a few bytes each): never a
 * ref, whatever ref_min says (PB_SCRATCH_MAX). */
#define PB_SCRATCH_MAX 64
struct ref_buffer {
  ProtobufCBuffer base;
  struct lnc_buf *out;
  struct lnc_ipc_ref *v;
  size_t n, cap, min;
  bool oom;
};

static void ref_append(ProtobufCBuffer *b, size_t len, const uint8_t *data) {
  struct ref_buffer *rb = (struct ref_buffer *)b;
  if (len < rb->min) {
    ld_buf_append(rb->out, data, len);
    return;
  }
  if (lnc_grow_array((void **)&rb->v, &rb->cap, rb->n + 1, sizeof *rb->v)) {
    rb->oom = true;
    return;
  }
  rb->v[rb->n++] = (struct lnc_ipc_ref){.at = rb->out->len, .ptr = data, .len = len, .fd = -1};
}

/* What a protobuf answer's refs may point into besides the take's array: its pool (tensors,
 * converted columns) and the take's schema (column names, whatever their length). */
struct pb_keep {
  struct pool pool;
  struct ArrowSchema schema;
};

static void keep_free(void *p) {
  struct pb_keep *k = p;
  pool_free(&k->pool);
  if (k->schema.release) k->schema.release(&k->schema);
  free(k);
}

int ld_proto_take_response_refs(struct ld_take_result *t, struct lnc_buf *out, struct ld_refs **refs,
                                struct ld_err *e) {
  *refs = NULL;
  struct pb_keep *keep = calloc(1, sizeof *keep);
  if (!keep) return ld_errf(e, LD_EXHAUSTED, "out of memory");
  struct pool *pl = &keep->pool;
  Lanced__V1__TakeResponse resp = LANCED__V1__TAKE_RESPONSE__INIT;
  Lanced__V1__ReadStats st = LANCED__V1__READ_STATS__INIT;
  int rc = build_take_response(pl, t, LANCED__V1__FORMAT__FORMAT_PROTO, &resp, &st, NULL, e);
  size_t min = ld_service_ref_min();
  struct ref_buffer rb = {.base = {.append = ref_append}, .out = out, .min = min > PB_SCRATCH_MAX ? min : PB_SCRATCH_MAX};
  if (!rc) protobuf_c_message_pack_to_buffer(&resp.base, &rb.base);
  if (!rc && rb.oom) rc = ld_errf(e, LD_EXHAUSTED, "out of memory for an answer's pieces");
  if (rc || !rb.n) { /* nothing left in place: the parts are not needed any more */
    free(rb.v);
    keep_free(keep);
    return rc;
  }
  /* The refs point into the take's array (binaries), the pool (tensors) and the schema (long
   * names): all three move in. */
  keep->schema = t->schema;
  t->schema.release = NULL;
  return ld_refs_make(rb.v, rb.n, &t->array, keep, keep_free, out, refs, e) ? e->http : 0;
}

static Lanced__V1__Field *field_of(struct pool *pl, const struct ArrowSchema *s) {
  Lanced__V1__Field *f = pool_alloc(pl, sizeof *f);
  if (!f) return NULL;
  lanced__v1__field__init(f);
  f->name = (char *)(s->name ? s->name : "");
  f->arrow_format = (char *)(s->format ? s->format : "");
  f->nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  struct lnc_buf tn = {0};
  ld_arrow_type_name(s, &tn);
  ld_buf_append(&tn, "", 1);
  if (!(f->type = pool_alloc(pl, tn.len))) return NULL;
  memcpy(f->type, tn.data, tn.len);
  lnc_buf_free(&tn);
  if (s->n_children > 0) {
    f->n_children = (size_t)s->n_children;
    if (!(f->children = pool_alloc(pl, f->n_children * sizeof *f->children))) return NULL;
    for (int64_t i = 0; i < s->n_children; i++)
      if (!(f->children[i] = field_of(pl, s->children[i]))) return NULL;
  }
  return f;
}

/* Columns of the library's description, when it has a "columns" array: each entry's JSON
 * kept as text so FileInfo does not freeze a format liblance may still grow. */
static int columns_of(struct pool *pl, const struct lnc_buf *desc, Lanced__V1__FileInfo *fi) {
  json_t *root = json_loadb((const char *)desc->data, desc->len, 0, NULL);
  json_t *cols = root ? json_object_get(root, "columns") : NULL;
  if (json_is_array(cols)) {
    size_t n = json_array_size(cols);
    fi->columns = pool_alloc(pl, n * sizeof *fi->columns);
    for (size_t i = 0; fi->columns && i < n; i++) {
      json_t *c = json_array_get(cols, i);
      Lanced__V1__ColumnInfo *ci = pool_alloc(pl, sizeof *ci);
      if (!ci) break;
      lanced__v1__column_info__init(ci);
      ci->index = (uint32_t)i;
      json_t *name = json_object_get(c, "name");
      if (json_is_string(name)) {
        char *nm = pool_alloc(pl, json_string_length(name) + 1);
        if (nm) memcpy(nm, json_string_value(name), json_string_length(name)), ci->name = nm;
      }
      char *txt = json_dumps(c, JSON_COMPACT | JSON_ENCODE_ANY);
      if (txt) {
        char *copy = pool_alloc(pl, strlen(txt) + 1);
        if (copy) strcpy(copy, txt), ci->json = copy;
        free(txt);
      }
      fi->columns[fi->n_columns++] = ci;
    }
  }
  json_decref(root);
  return 0;
}

int ld_proto_file_info(const char *rel, const struct ld_file_info *info, bool json,
                       struct lnc_buf *out, struct ld_err *e) {
  struct pool pl = {0};
  Lanced__V1__FileInfo fi = LANCED__V1__FILE_INFO__INIT;
  char version[32], *desc = NULL;
  int rc = 0;
  snprintf(version, sizeof version, "%d.%d", info->major, info->minor);
  fi.path = (char *)rel;
  fi.version = version;
  fi.num_rows = info->num_rows;
  fi.n_fields = (size_t)info->schema.n_children;
  fi.fields = pool_alloc(&pl, fi.n_fields * sizeof *fi.fields);
  if (!fi.fields) {
    rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < fi.n_fields; i++)
    if (!(fi.fields[i] = field_of(&pl, info->schema.children[i]))) {
      rc = ld_errf(e, LD_EXHAUSTED, "out of memory");
      goto out;
    }
  columns_of(&pl, &info->describe, &fi);
  if ((desc = pool_alloc(&pl, info->describe.len + 1))) {
    if (info->describe.len) memcpy(desc, info->describe.data, info->describe.len);
    fi.describe_json = desc;
  }
  pack(&fi.base, json, out);
out:
  pool_free(&pl);
  return rc;
}
