/* lnc_encode_arrow_ipc: a record batch (Arrow C Data Interface) → an Arrow IPC stream:
 * Schema message, one DictionaryBatch per dictionary-encoded field (real dictionary
 * encoding, nested dictionaries first), one RecordBatch, end-of-stream marker. Metadata V5,
 * little endian, no compression. Sliced input (offset != 0) is written from position 0:
 * bitmaps are shifted, offsets rebased, values copied from the slice start. The metadata is
 * built first from a plan of (source, transform) pairs; the body is then copied straight
 * into the output buffer, or, for lnc_encode_arrow_ipc_refs, every value buffer of at least
 * min_ref bytes is left where it is and named by a ref (a training batch's images and
 * embeddings: megabytes a copy would only move once more on their way to a socket). */
#include "builder.h"
#include "flatbuf.h"
#include "format.h"
#include "../io/io.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

/* Arrow Schema.fbs / Message.fbs enum values */
enum { T_NULL = 1,
       T_INT = 2,
       T_FLOAT = 3,
       T_BINARY = 4,
       T_UTF8 = 5,
       T_BOOL = 6,
       T_DECIMAL = 7,
       T_DATE = 8,
       T_TIME = 9,
       T_TIMESTAMP = 10,
       T_LIST = 12,
       T_STRUCT = 13,
       T_FIXED_BINARY = 15,
       T_FIXED_LIST = 16,
       T_MAP = 17,
       T_DURATION = 18,
       T_LARGE_BINARY = 19,
       T_LARGE_UTF8 = 20,
       T_LARGE_LIST = 21 };
enum { H_SCHEMA = 1,
       H_DICTIONARY_BATCH = 2,
       H_RECORD_BATCH = 3 };
enum { METADATA_V5 = 4 };

enum src_kind { SRC_EMPTY,
                SRC_COPY,
                SRC_BITS,
                SRC_OFF32,
                SRC_OFF64,
                SRC_ZERO,
                SRC_FILE };

struct src {
  enum src_kind kind;
  const uint8_t *ptr;            /* SRC_FILE: the array's offsets buffer */
  const struct lnc_filevals *fv; /* SRC_FILE: values (fixed width: entries) [bit_off, bit_off + count) of the array */
  bool large;                    /* SRC_FILE: 64-bit offsets */
  int64_t bit_off;               /* SRC_BITS: first bit */
  int64_t count;                 /* SRC_BITS: bits; SRC_OFF*: number of offsets */
  int64_t base;                  /* SRC_OFF*: subtracted from every offset */
  int64_t len;                   /* bytes written (unpadded) */
};

struct field_node {
  int64_t length, null_count;
};
struct buffer_desc {
  int64_t offset, length;
};

struct plan {
  struct field_node *nodes;
  size_t nnodes, cap_nodes;
  struct src *srcs;
  size_t nsrcs, cap_srcs;
};

struct dict_entry {
  int64_t id;
  const struct ArrowSchema *schema; /* the dictionary's value schema */
  const struct ArrowArray *array;
};

struct ipc {
  struct lnc_buf *out;
  struct lnc_error *err;
  struct lnc_fb fb;
  struct dict_entry *dicts;
  size_t ndicts, cap_dicts;
  struct plan plan;
  size_t min_ref; /* 0: every byte into out */
  struct lnc_ipc_ref *refs;
  size_t nrefs, cap_refs;
};

static int oom(struct ipc *w) { return lnc_errf(w->err, LNC_ENOMEM, "arrow ipc: out of memory"); }


/* ---- bitmaps ------------------------------------------------------------------------------ */
static int64_t count_unset(const uint8_t *bits, int64_t off, int64_t n) {
  int64_t set = 0, i = off, end = off + n;
  while (i < end && (i & 7)) set += (bits[i >> 3] >> (i & 7)) & 1, i++;
  while (i + 64 <= end) {
    uint64_t w;
    memcpy(&w, bits + (i >> 3), 8);
    set += __builtin_popcountll(w);
    i += 64;
  }
  while (i + 8 <= end) set += __builtin_popcount(bits[i >> 3]), i += 8;
  while (i < end) set += (bits[i >> 3] >> (i & 7)) & 1, i++;
  return n - set;
}

/* nbits bits starting at bit `off` of src → dst from bit 0; trailing bits zeroed. */
static void copy_bits(uint8_t *dst, const uint8_t *src, int64_t off, int64_t nbits) {
  int64_t nbytes = (nbits + 7) / 8;
  if (nbytes == 0) return;
  const uint8_t *s = src + (off >> 3);
  int sh = (int)(off & 7);
  if (sh == 0) {
    memcpy(dst, s, (size_t)nbytes);
  } else {
    int64_t last = (off + nbits - 1) / 8 - (off >> 3); /* last readable index into s */
    for (int64_t k = 0; k < nbytes; k++) {
      unsigned v = s[k] >> sh;
      if (k + 1 <= last) v |= (unsigned)s[k + 1] << (8 - sh);
      dst[k] = (uint8_t)v;
    }
  }
  if (nbits & 7) dst[nbytes - 1] &= (uint8_t)((1u << (nbits & 7)) - 1);
}

/* ---- plan: nodes and buffer sources in IPC order ------------------------------------------ */
static int add_node(struct ipc *w, int64_t length, int64_t nulls) {
  struct plan *p = &w->plan;
  if (lnc_grow_array((void **)&p->nodes, &p->cap_nodes, p->nnodes + 1, sizeof *p->nodes)) return oom(w);
  p->nodes[p->nnodes++] = (struct field_node){length, nulls};
  return 0;
}

static int add_src(struct ipc *w, struct src s) {
  struct plan *p = &w->plan;
  if (lnc_grow_array((void **)&p->srcs, &p->cap_srcs, p->nsrcs + 1, sizeof *p->srcs)) return oom(w);
  p->srcs[p->nsrcs++] = s;
  return 0;
}

static int add_copy(struct ipc *w, const void *ptr, int64_t len) {
  return add_src(w, (struct src){.kind = len ? SRC_COPY : SRC_EMPTY, .ptr = ptr, .len = len});
}

/* Values [j0, j0 + n) of a variable-width array whose bytes (len of them) are in files. */
static int add_file(struct ipc *w, const struct lnc_filevals *fv, const void *offs, bool large, int64_t j0,
                    int64_t n, int64_t len) {
  if (!len) return add_copy(w, NULL, 0);
  return add_src(w, (struct src){.kind = SRC_FILE, .ptr = offs, .fv = fv, .large = large, .bit_off = j0, .count = n, .len = len});
}

/* Items [j0, j0 + n) of a fixed-width array of wd-byte items left in files, whole entries of
 * fv (a fixed-size list's rows: plan_array reaches the items through them). */
static int add_file_items(struct ipc *w, const struct lnc_filevals *fv, int64_t j0, int64_t n, int64_t wd) {
  int64_t per = (int64_t)fv->per;
  if (per <= 0 || j0 % per || n % per || fv->stride != (uint64_t)(per * wd))
    return lnc_errf(w->err, LNC_EINTERNAL, "arrow ipc: items [%lld, +%lld) of %lld-byte file ranges of %lld items",
                    (long long)j0, (long long)n, (long long)fv->stride, (long long)per);
  if (!n) return add_copy(w, NULL, 0);
  return add_src(w, (struct src){.kind = SRC_FILE, .fv = fv, .bit_off = j0 / per, .count = n / per, .len = n * wd});
}

static int add_bits(struct ipc *w, const void *ptr, int64_t off, int64_t n) {
  return add_src(w, (struct src){.kind = n ? SRC_BITS : SRC_EMPTY, .ptr = ptr, .bit_off = off, .count = n, .len = (n + 7) / 8});
}

/* Offsets for `len` values from physical index j0; *s and *e receive the referenced range. */
static int add_offsets(struct ipc *w, const void *buf, bool large, int64_t j0, int64_t len,
                       int64_t *s, int64_t *e) {
  int64_t w8 = large ? 8 : 4;
  if (!buf) { /* empty array without an offsets buffer: one zero offset */
    *s = *e = 0;
    return add_src(w, (struct src){.kind = SRC_ZERO, .len = w8});
  }
  if (large) {
    *s = ((const int64_t *)buf)[j0];
    *e = ((const int64_t *)buf)[j0 + len];
  } else {
    *s = ((const int32_t *)buf)[j0];
    *e = ((const int32_t *)buf)[j0 + len];
  }
  if (*s < 0 || *e < *s)
    return lnc_errf(w->err, LNC_EINVAL, "arrow ipc: bad offsets (%lld, %lld)", (long long)*s,
                    (long long)*e);
  if (*s == 0) return add_copy(w, (const uint8_t *)buf + j0 * w8, (len + 1) * w8);
  return add_src(w, (struct src){.kind = large ? SRC_OFF64 : SRC_OFF32,
                                 .ptr = (const uint8_t *)buf + j0 * w8,
                                 .count = len + 1,
                                 .base = *s,
                                 .len = (len + 1) * w8});
}

/* Logical values [start, start+len) of array a (start before a->offset). */
static int plan_array(struct ipc *w, const struct ArrowSchema *s, const struct ArrowArray *a,
                      int64_t start, int64_t len) {
  struct lnc_atype_info t;
  int rc = lnc_arrow_parse_format(s->format, &t, w->err);
  if (rc) return rc;
  int64_t j0 = a->offset + start;
  if (t.kind == LNC_AT_NULL) return add_node(w, len, len);
  int64_t nulls = 0;
  if (a->null_count != 0 && a->buffers[0] && len) nulls = count_unset(a->buffers[0], j0, len);
  if ((rc = add_node(w, len, nulls))) return rc;
  if ((rc = nulls ? add_bits(w, a->buffers[0], j0, len) : add_copy(w, NULL, 0))) return rc;
  if (s->dictionary) /* indices only; the values go into a DictionaryBatch */
    return add_copy(w, len ? (const uint8_t *)a->buffers[1] + j0 * (t.bits / 8) : NULL,
                    len * (t.bits / 8));
  const void *b1 = a->n_buffers > 1 ? a->buffers[1] : NULL;
  int64_t rs, re;
  switch (t.kind) {
  case LNC_AT_BOOL:
    return add_bits(w, b1, j0, len);
  case LNC_AT_INT:
  case LNC_AT_FLOAT:
  case LNC_AT_DECIMAL:
  case LNC_AT_DATE32:
  case LNC_AT_DATE64:
  case LNC_AT_TIME:
  case LNC_AT_TIMESTAMP:
  case LNC_AT_DURATION:
  case LNC_AT_FIXED_BINARY: {
    int64_t wd = t.bits / 8;
    const struct lnc_filevals *fv = lnc_array_filevals(a);
    if (fv && fv->stride) return add_file_items(w, fv, j0, len, wd);
    return add_copy(w, len ? (const uint8_t *)b1 + j0 * wd : NULL, len * wd);
  }
  case LNC_AT_BINARY:
  case LNC_AT_UTF8:
  case LNC_AT_LARGE_BINARY:
  case LNC_AT_LARGE_UTF8: {
    bool large = t.kind == LNC_AT_LARGE_BINARY || t.kind == LNC_AT_LARGE_UTF8;
    if ((rc = add_offsets(w, b1, large, j0, len, &rs, &re))) return rc;
    const struct lnc_filevals *fv = lnc_array_filevals(a);
    if (fv) return add_file(w, fv, b1, large, j0, len, re - rs);
    return add_copy(w, re > rs ? (const uint8_t *)a->buffers[2] + rs : NULL, re - rs);
  }
  case LNC_AT_LIST:
  case LNC_AT_LARGE_LIST:
  case LNC_AT_MAP:
    if ((rc = add_offsets(w, b1, t.kind == LNC_AT_LARGE_LIST, j0, len, &rs, &re))) return rc;
    if (re > a->children[0]->length)
      return lnc_errf(w->err, LNC_EINVAL, "arrow ipc: list offset %lld past child length %lld",
                      (long long)re, (long long)a->children[0]->length);
    return plan_array(w, s->children[0], a->children[0], rs, re - rs);
  case LNC_AT_FIXED_LIST:
    return plan_array(w, s->children[0], a->children[0], j0 * t.width, len * t.width);
  case LNC_AT_STRUCT:
    for (int64_t i = 0; i < s->n_children; i++)
      if ((rc = plan_array(w, s->children[i], a->children[i], j0, len))) return rc;
    return 0;
  default:
    return lnc_errf(w->err, LNC_EINTERNAL, "arrow ipc: unhandled type %d", (int)t.kind);
  }
}

/* ---- schema ------------------------------------------------------------------------------ */
/* Builds the type table for t (flags: the field's C Data flags, for a map's keysSorted);
 * returns the union tag in *tag. */
static lnc_fb_ref type_table(struct lnc_fb *fb, const struct lnc_atype_info *t, int64_t flags, uint8_t *tag) {
  lnc_fb_ref tz = 0;
  if (t->kind == LNC_AT_TIMESTAMP && t->tz && *t->tz) tz = lnc_fb_string(fb, t->tz, strlen(t->tz));
  lnc_fb_table_start(fb);
  switch (t->kind) {
  case LNC_AT_NULL: *tag = T_NULL; break;
  case LNC_AT_BOOL: *tag = T_BOOL; break;
  case LNC_AT_INT:
    *tag = T_INT;
    lnc_fb_add_i32(fb, 0, t->bits);
    lnc_fb_add_u8(fb, 1, t->is_signed);
    break;
  case LNC_AT_FLOAT:
    *tag = T_FLOAT;
    lnc_fb_add_i16(fb, 0, t->bits == 16 ? 0 : t->bits == 32 ? 1
                                                            : 2);
    break;
  case LNC_AT_BINARY: *tag = T_BINARY; break;
  case LNC_AT_LARGE_BINARY: *tag = T_LARGE_BINARY; break;
  case LNC_AT_UTF8: *tag = T_UTF8; break;
  case LNC_AT_LARGE_UTF8: *tag = T_LARGE_UTF8; break;
  case LNC_AT_FIXED_BINARY:
    *tag = T_FIXED_BINARY;
    lnc_fb_add_i32(fb, 0, t->width);
    break;
  case LNC_AT_DECIMAL:
    *tag = T_DECIMAL;
    lnc_fb_add_i32(fb, 0, t->precision);
    lnc_fb_add_i32(fb, 1, t->scale);
    lnc_fb_add_i32(fb, 2, t->bits);
    break;
  case LNC_AT_DATE32:
    *tag = T_DATE;
    lnc_fb_add_i16(fb, 0, 0);
    break;
  case LNC_AT_DATE64:
    *tag = T_DATE;
    lnc_fb_add_i16(fb, 0, 1);
    break;
  case LNC_AT_TIME:
    *tag = T_TIME;
    lnc_fb_add_i16(fb, 0, (int16_t)t->unit);
    lnc_fb_add_i32(fb, 1, t->bits);
    break;
  case LNC_AT_TIMESTAMP:
    *tag = T_TIMESTAMP;
    lnc_fb_add_i16(fb, 0, (int16_t)t->unit);
    if (tz) lnc_fb_add_ref(fb, 1, tz);
    break;
  case LNC_AT_DURATION:
    *tag = T_DURATION;
    lnc_fb_add_i16(fb, 0, (int16_t)t->unit);
    break;
  case LNC_AT_LIST: *tag = T_LIST; break;
  case LNC_AT_LARGE_LIST: *tag = T_LARGE_LIST; break;
  case LNC_AT_FIXED_LIST:
    *tag = T_FIXED_LIST;
    lnc_fb_add_i32(fb, 0, t->width);
    break;
  case LNC_AT_STRUCT: *tag = T_STRUCT; break;
  case LNC_AT_MAP:
    *tag = T_MAP;
    lnc_fb_add_u8(fb, 0, (flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0);
    break;
  }
  return lnc_fb_table_end(fb);
}

static int build_field(struct ipc *w, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int depth, lnc_fb_ref *out);

/* A vector of Field tables for the children of s/a. */
static int build_children(struct ipc *w, const struct ArrowSchema *s, const struct ArrowArray *a,
                          int depth, lnc_fb_ref *out) {
  lnc_fb_ref stack[16], *refs = stack;
  if (s->n_children > 16 && !(refs = malloc((size_t)s->n_children * sizeof *refs))) return oom(w);
  int rc = 0;
  for (int64_t i = 0; i < s->n_children && !rc; i++)
    rc = build_field(w, s->children[i], a->children[i], depth + 1, &refs[i]);
  if (!rc) *out = lnc_fb_vec_refs(&w->fb, refs, (size_t)s->n_children);
  if (refs != stack) free(refs);
  return rc;
}

/* Field.custom_metadata: a vector of KeyValue tables from the Arrow C metadata blob (int32 n,
 * then n times int32 length + key bytes, int32 length + value bytes); 0 when there is none. */
static int build_metadata(struct ipc *w, const char *m, lnc_fb_ref *out) {
  *out = 0;
  if (!m) return 0;
  int32_t n, len;
  memcpy(&n, m, 4);
  if (n <= 0) return 0;
  if (n > 4096) return lnc_errf(w->err, LNC_ELIMIT, "arrow ipc: %d metadata entries", n);
  lnc_fb_ref stack[16], *refs = stack;
  if (n > 16 && !(refs = malloc((size_t)n * sizeof *refs))) return oom(w);
  size_t pos = 4;
  for (int32_t i = 0; i < n; i++) {
    memcpy(&len, m + pos, 4);
    lnc_fb_ref k = lnc_fb_string(&w->fb, m + pos + 4, (size_t)len);
    pos += 4 + (size_t)len;
    memcpy(&len, m + pos, 4);
    lnc_fb_ref v = lnc_fb_string(&w->fb, m + pos + 4, (size_t)len);
    pos += 4 + (size_t)len;
    lnc_fb_table_start(&w->fb);
    lnc_fb_add_ref(&w->fb, 0, k);
    lnc_fb_add_ref(&w->fb, 1, v);
    refs[i] = lnc_fb_table_end(&w->fb);
  }
  *out = lnc_fb_vec_refs(&w->fb, refs, (size_t)n);
  if (refs != stack) free(refs);
  return 0;
}

static int build_field(struct ipc *w, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int depth, lnc_fb_ref *out) {
  struct lnc_atype_info t, vt;
  int rc = lnc_arrow_parse_format(s->format, &t, w->err);
  if (rc) return rc;
  const struct ArrowSchema *vs = s; /* the schema giving the field's (value) type */
  const struct ArrowArray *va = a;
  if (s->dictionary) {
    vs = s->dictionary;
    va = a->dictionary;
    if (vs->dictionary)
      return lnc_errf(w->err, LNC_EUNSUPPORTED,
                      "arrow ipc: field \"%s\": dictionary of dictionary", s->name ? s->name : "");
    if ((rc = lnc_arrow_parse_format(vs->format, &vt, w->err))) return rc;
  } else {
    vt = t;
  }
  lnc_fb_ref children;
  if ((rc = build_children(w, vs, va, depth, &children))) return rc;
  lnc_fb_ref dict = 0;
  if (s->dictionary) {
    if (lnc_grow_array((void **)&w->dicts, &w->cap_dicts, w->ndicts + 1, sizeof *w->dicts)) return oom(w);
    int64_t id = (int64_t)w->ndicts;
    w->dicts[w->ndicts++] = (struct dict_entry){id, vs, va};
    lnc_fb_table_start(&w->fb);
    lnc_fb_add_i32(&w->fb, 0, t.bits);
    lnc_fb_add_u8(&w->fb, 1, t.is_signed);
    lnc_fb_ref index_type = lnc_fb_table_end(&w->fb);
    lnc_fb_table_start(&w->fb);
    lnc_fb_add_i64(&w->fb, 0, id);
    lnc_fb_add_ref(&w->fb, 1, index_type);
    lnc_fb_add_u8(&w->fb, 2, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? 1 : 0);
    lnc_fb_add_i16(&w->fb, 3, 0);
    dict = lnc_fb_table_end(&w->fb);
  }
  uint8_t tag = 0;
  lnc_fb_ref type = type_table(&w->fb, &vt, s->flags, &tag);
  const char *name = s->name ? s->name : "";
  lnc_fb_ref nm = lnc_fb_string(&w->fb, name, strlen(name));
  lnc_fb_ref md;
  if ((rc = build_metadata(w, s->metadata, &md))) return rc;
  lnc_fb_table_start(&w->fb);
  lnc_fb_add_ref(&w->fb, 0, nm);
  lnc_fb_add_u8(&w->fb, 1, (s->flags & ARROW_FLAG_NULLABLE) ? 1 : 0);
  lnc_fb_add_u8(&w->fb, 2, tag);
  lnc_fb_add_ref(&w->fb, 3, type);
  if (dict) lnc_fb_add_ref(&w->fb, 4, dict);
  lnc_fb_add_ref(&w->fb, 5, children);
  if (md) lnc_fb_add_ref(&w->fb, 6, md); /* custom_metadata */
  *out = lnc_fb_table_end(&w->fb);
  return 0;
}

/* ---- messages ---------------------------------------------------------------------------- */
static int64_t pad8(int64_t n) { return (n + 7) & ~(int64_t)7; }

/* Wraps header (a table of type htype) in a Message and writes the encapsulated metadata;
 * body_len bytes of body must follow. */
static int write_message(struct ipc *w, uint8_t htype, lnc_fb_ref header, int64_t body_len) {
  lnc_fb_table_start(&w->fb);
  lnc_fb_add_i16(&w->fb, 0, METADATA_V5);
  lnc_fb_add_u8(&w->fb, 1, htype);
  lnc_fb_add_ref(&w->fb, 2, header);
  lnc_fb_add_i64(&w->fb, 3, body_len);
  lnc_fb_ref msg = lnc_fb_table_end(&w->fb);
  const uint8_t *meta;
  size_t mlen;
  if (lnc_fb_finish(&w->fb, msg, &meta, &mlen)) return oom(w);
  size_t padded = (size_t)pad8((int64_t)mlen);
  if (padded > INT32_MAX) return lnc_errf(w->err, LNC_ELIMIT, "arrow ipc: metadata too large");
  if (lnc_buf_reserve(w->out, 8 + padded + (size_t)body_len)) return oom(w);
  uint8_t *p = w->out->data + w->out->len;
  uint32_t cont = 0xFFFFFFFFu;
  int32_t ml = (int32_t)padded;
  memcpy(p, &cont, 4);
  memcpy(p + 4, &ml, 4);
  memcpy(p + 8, meta, mlen);
  memset(p + 8 + mlen, 0, padded - mlen);
  w->out->len += 8 + padded;
  lnc_fb_reset(&w->fb);
  return 0;
}

/* A value buffer left in place: its bytes come after out's first `at` bytes. */
static int add_ref(struct ipc *w, size_t at, const void *ptr, size_t len) {
  if (w->nrefs == w->cap_refs) {
    size_t cap = w->cap_refs ? 2 * w->cap_refs : 8;
    struct lnc_ipc_ref *v = realloc(w->refs, cap * sizeof *v);
    if (!v) return oom(w);
    w->refs = v, w->cap_refs = cap;
  }
  w->refs[w->nrefs++] = (struct lnc_ipc_ref){.at = at, .ptr = ptr, .len = len, .fd = -1};
  return 0;
}

/* Value (fixed width: entry) k's mapped file, offset and length of a SRC_FILE source (the
 * offset checked to lie in the mapping: take.c put it there from the file's own index, the
 * mapping is the file). */
static int file_value(struct ipc *w, const struct src *s, int64_t k, const struct lnc_filemap **map, uint64_t *off,
                      uint64_t *len) {
  int64_t j = s->bit_off + k;
  *map = lnc_filevals_map(s->fv, (uint64_t)j);
  *off = s->fv->off[j];
  if (s->fv->stride) {
    *len = s->fv->stride;
  } else {
    int64_t a = s->large ? ((const int64_t *)(const void *)s->ptr)[j] : ((const int32_t *)(const void *)s->ptr)[j];
    int64_t b = s->large ? ((const int64_t *)(const void *)s->ptr)[j + 1] : ((const int32_t *)(const void *)s->ptr)[j + 1];
    *len = b > a ? (uint64_t)(b - a) : 0;
  }
  if (*off > (*map)->len || *len > (*map)->len - *off)
    return lnc_errf(w->err, LNC_EINTERNAL, "arrow ipc: a value at %llu past its file's end", (unsigned long long)*off);
  return 0;
}

/* A SRC_FILE source as refs into the files' mappings: one per value, or per run of values
 * back to back in one file. */
static int file_refs(struct ipc *w, size_t at, const struct src *s) {
  for (int64_t k = 0; k < s->count; k++) {
    const struct lnc_filemap *m;
    uint64_t off, len;
    int rc = file_value(w, s, k, &m, &off, &len);
    if (rc) return rc;
    if (!len) continue;
    struct lnc_ipc_ref *last = w->nrefs ? &w->refs[w->nrefs - 1] : NULL;
    if (last && last->fd == m->fd && last->at == at && last->off + last->len == off) {
      last->len += (size_t)len;
      continue;
    }
    if ((rc = add_ref(w, at, m->base + off, (size_t)len))) return rc;
    w->refs[w->nrefs - 1].fd = m->fd;
    w->refs[w->nrefs - 1].off = off;
  }
  return 0;
}

/* A SRC_FILE source read into dst (the flat encoder): pread, not the mapping (a load from a
 * mapping of a file truncated meanwhile is a SIGBUS, a read is an error). */
static int file_read(struct ipc *w, uint8_t *dst, const struct src *s) {
  for (int64_t k = 0; k < s->count; k++) {
    const struct lnc_filemap *m;
    uint64_t off, len;
    int rc = file_value(w, s, k, &m, &off, &len);
    if (rc || (rc = lnc_filemap_read(m, dst, off, len, w->err))) return rc;
    dst += len;
  }
  return 0;
}

static void write_src(uint8_t *dst, const struct src *s) {
  switch (s->kind) {
  case SRC_FILE: /* file_refs or file_read */
  case SRC_EMPTY: break;
  case SRC_ZERO: memset(dst, 0, (size_t)s->len); break;
  case SRC_COPY: memcpy(dst, s->ptr, (size_t)s->len); break;
  case SRC_BITS: copy_bits(dst, s->ptr, s->bit_off, s->count); break;
  case SRC_OFF32: {
    const int32_t *in = (const int32_t *)s->ptr;
    int32_t base = (int32_t)s->base;
    for (int64_t i = 0; i < s->count; i++) {
      int32_t v = in[i] - base;
      memcpy(dst + 4 * i, &v, 4);
    }
    break;
  }
  case SRC_OFF64: {
    const int64_t *in = (const int64_t *)s->ptr;
    for (int64_t i = 0; i < s->count; i++) {
      int64_t v = in[i] - s->base;
      memcpy(dst + 8 * i, &v, 8);
    }
    break;
  }
  }
}

/* Writes a RecordBatch message (or a DictionaryBatch around one when dict_id >= 0) for the
 * plan in w->plan, then its body. */
static int write_batch(struct ipc *w, int64_t length, int64_t dict_id) {
  struct plan *pl = &w->plan;
  struct buffer_desc *bufs = malloc((pl->nsrcs ? pl->nsrcs : 1) * sizeof *bufs);
  if (!bufs) return oom(w);
  int64_t body = 0;
  for (size_t i = 0; i < pl->nsrcs; i++) {
    bufs[i] = (struct buffer_desc){body, pl->srcs[i].len};
    body += pad8(pl->srcs[i].len);
  }
  lnc_fb_ref nodes = lnc_fb_vec_structs(&w->fb, pl->nodes, pl->nnodes, sizeof *pl->nodes, 8);
  lnc_fb_ref buffers = lnc_fb_vec_structs(&w->fb, bufs, pl->nsrcs, sizeof *bufs, 8);
  free(bufs);
  lnc_fb_table_start(&w->fb);
  lnc_fb_add_i64(&w->fb, 0, length);
  lnc_fb_add_ref(&w->fb, 1, nodes);
  lnc_fb_add_ref(&w->fb, 2, buffers);
  lnc_fb_ref rb = lnc_fb_table_end(&w->fb);
  int rc;
  if (dict_id >= 0) {
    lnc_fb_table_start(&w->fb);
    lnc_fb_add_i64(&w->fb, 0, dict_id);
    lnc_fb_add_ref(&w->fb, 1, rb);
    lnc_fb_add_u8(&w->fb, 2, 0);
    lnc_fb_ref db = lnc_fb_table_end(&w->fb);
    rc = write_message(w, H_DICTIONARY_BATCH, db, body);
  } else {
    rc = write_message(w, H_RECORD_BATCH, rb, body);
  }
  if (rc) return rc;
  uint8_t *p = w->out->data + w->out->len; /* space reserved by write_message */
  for (size_t i = 0; i < pl->nsrcs; i++) {
    const struct src *s = &pl->srcs[i];
    int64_t padded = pad8(s->len);
    if (s->kind == SRC_COPY && w->min_ref && (uint64_t)s->len >= w->min_ref) {
      /* Its bytes stay where they are; only the padding behind them is ours. */
      int rc = add_ref(w, (size_t)(p - w->out->data), s->ptr, (size_t)s->len);
      if (rc) return rc;
    } else if (s->kind == SRC_FILE) { /* named as file ranges, or read in without refs */
      int rc = w->min_ref ? file_refs(w, (size_t)(p - w->out->data), s) : file_read(w, p, s);
      if (rc) return rc;
      if (!w->min_ref) p += s->len;
    } else {
      write_src(p, s);
      p += s->len;
    }
    memset(p, 0, (size_t)(padded - s->len));
    p += padded - s->len;
  }
  w->out->len = (size_t)(p - w->out->data);
  pl->nnodes = pl->nsrcs = 0;
  return 0;
}

static int encode(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t min_ref,
                  struct lnc_buf *out, struct lnc_ipc_ref **refs, size_t *nrefs, struct lnc_error *err) {
  int rc = lnc_arrow_validate(schema, array, err);
  if (rc) return rc;
  if (strcmp(schema->format, "+s") != 0 || schema->dictionary)
    return lnc_errf(err, LNC_EINVAL, "arrow ipc: record batch must be a struct array, got \"%s\"",
                    schema->format);
  struct ipc w = {.out = out, .err = err, .min_ref = min_ref};
  lnc_fb_init(&w.fb);
  size_t start = out->len;

  /* Schema message (also numbers the dictionaries, innermost first) */
  lnc_fb_ref fields;
  if ((rc = build_children(&w, schema, array, 0, &fields))) goto done;
  lnc_fb_table_start(&w.fb);
  lnc_fb_add_i16(&w.fb, 0, 0); /* little endian */
  lnc_fb_add_ref(&w.fb, 1, fields);
  lnc_fb_ref sch = lnc_fb_table_end(&w.fb);
  if ((rc = write_message(&w, H_SCHEMA, sch, 0))) goto done;

  for (size_t i = 0; i < w.ndicts; i++) {
    const struct dict_entry *d = &w.dicts[i];
    if ((rc = plan_array(&w, d->schema, d->array, 0, d->array->length))) goto done;
    if ((rc = write_batch(&w, d->array->length, d->id))) goto done;
  }

  for (int64_t i = 0; i < schema->n_children; i++)
    if ((rc = plan_array(&w, schema->children[i], array->children[i], array->offset,
                         array->length)))
      goto done;
  if ((rc = write_batch(&w, array->length, -1))) goto done;

  static const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  if (lnc_buf_append(out, eos, sizeof eos)) rc = oom(&w);
done:
  if (rc) {
    out->len = start;
    free(w.refs);
  } else if (refs) {
    *refs = w.refs;
    *nrefs = w.nrefs;
  }
  lnc_fb_free(&w.fb);
  free(w.dicts);
  free(w.plan.nodes);
  free(w.plan.srcs);
  return rc;
}

int lnc_encode_arrow_ipc(const struct ArrowSchema *schema, const struct ArrowArray *array,
                         struct lnc_buf *out, struct lnc_error *err) {
  if (!schema || !array || !out) return lnc_errf(err, LNC_EINVAL, "arrow ipc: NULL argument");
  return encode(schema, array, 0, out, NULL, NULL, err);
}

int lnc_encode_arrow_ipc_refs(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t min_ref,
                              struct lnc_buf *out, struct lnc_ipc_ref **refs, size_t *nrefs,
                              struct lnc_error *err) {
  if (!schema || !array || !out || !refs || !nrefs) return lnc_errf(err, LNC_EINVAL, "arrow ipc: NULL argument");
  *refs = NULL;
  *nrefs = 0;
  return encode(schema, array, min_ref ? min_ref : 1, out, refs, nrefs, err);
}
