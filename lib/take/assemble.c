/* Assembly: rep/def levels and values of each leaf column -> nested Arrow arrays. A node at
 * depth k gets one slot per level that starts an element at that depth (Dremel-style, with
 * Lance's numbering converted); struct nodes share their parent's slots, list nodes turn
 * the slots one level down into offsets, and a leaf's slots are its visible levels, which
 * line up one-to-one with its values. */
#include "take.h"
#include "../arrow/builder.h"
#include "../arrow/format.h"
#include "../arrow/dict.h"
#include "../io/io.h"
#include "../util/assert.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

enum { SLOT_VALID = 0,
       SLOT_NULL = 1,
       SLOT_EMPTY = 2 };

struct slots {
  uint64_t n;
  uint64_t *level; /* first level of each slot (when the leaf has levels) */
  uint8_t *status;
};

/* Facts of a level relative to depth k of a leaf with D layers. */
static inline int null_layer(uint16_t canon) { return canon ? (canon - 1) / 2 : -1; }

/* Parquet-style repetition: how many enclosing lists continue at this level. */
static inline uint32_t rep_depth(uint16_t rep, uint32_t max_rep) {
  return rep == 0 ? max_rep : max_rep - rep;
}

struct ctx_node {
  uint32_t k;      /* depth of the node */
  uint32_t lists;  /* list nodes above it */
  uint32_t region; /* depth of the shallowest node sharing its slots (below the nearest list) */
};

static bool reaches(const struct lnc_leafrows *S, uint32_t D, uint64_t j, uint32_t m) {
  uint16_t d = S->def[j];
  return d == 0 || (uint32_t)null_layer(d) <= D - 1 - m;
}

static int compute_slots(struct lnc_asm *a, const struct lnc_leafrows *S, uint32_t D,
                         uint32_t max_rep, struct ctx_node nd, struct slots *out) {
  memset(out, 0, sizeof *out);
  if (!S->def) { /* no levels: one valid slot per row at every depth above a list */
    out->n = S->n_rows;
    return 0;
  }
  out->level = malloc((S->n_levels ? S->n_levels : 1) * sizeof *out->level);
  out->status = malloc(S->n_levels ? S->n_levels : 1);
  if (!out->level || !out->status) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  uint32_t layer = D - 1 - nd.k;
  for (uint64_t j = 0; j < S->n_levels; j++) {
    if (!reaches(S, D, j, nd.region)) continue;
    if (max_rep && rep_depth(S->rep[j], max_rep) > nd.lists) continue;
    uint16_t d = S->def[j];
    uint8_t st = SLOT_VALID;
    if (d) {
      int nl = null_layer(d);
      if ((uint32_t)nl == layer)
        st = ((d - 1) & 1) ? SLOT_EMPTY : SLOT_NULL;
      else if ((uint32_t)nl > layer)
        st = SLOT_NULL;
    }
    out->level[out->n] = j;
    out->status[out->n] = st;
    out->n++;
  }
  return 0;
}

static void slots_free(struct slots *s) {
  free(s->level);
  free(s->status);
}

/* Validity bitmap from slot status; NULL (and *nulls = 0) when every slot is valid. */
static int make_validity(struct lnc_asm *a, const struct slots *s, uint8_t **out, int64_t *nulls) {
  *out = NULL;
  *nulls = 0;
  if (!s->status) return 0;
  uint64_t n = 0;
  for (uint64_t i = 0; i < s->n; i++) n += s->status[i] == SLOT_NULL;
  if (!n) return 0;
  uint8_t *bm = calloc((s->n + 7) / 8 + 1, 1);
  if (!bm) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < s->n; i++)
    if (s->status[i] != SLOT_NULL) bm[i >> 3] |= (uint8_t)(1u << (i & 7));
  *out = bm;
  *nulls = (int64_t)n;
  return 0;
}

static void *take_buf(uint8_t **p, size_t min) {
  void *b = *p;
  *p = NULL;
  if (!b) b = calloc(min ? min : 8, 1);
  return b;
}

static int leaf_array(struct lnc_asm *a, const struct lnc_proj *p, struct lnc_leafrows *S,
                      const struct slots *sl, struct ArrowArray *out);

/* An array whose values stay in the file: validity (and a binary's offsets) as usual, no
 * value buffer; the values' file offsets move into it with a reference to the file's mapping
 * (the file may be closed, evicted from a cache, before the array is sent). A binary has n
 * values; fixed-width items come `per` to a file range (a fixed-size list's row), n / per
 * ranges. Takes validity and offs (NULL for fixed-width items). */
static int in_file_array(struct lnc_asm *a, struct lnc_valbuf *v, int64_t n, int64_t nulls, uint8_t *validity,
                         void *offs, uint64_t per, struct ArrowArray *out) {
  struct lnc_filevals *fv = calloc(1, sizeof *fv);
  struct lnc_filemap **maps = malloc(sizeof *maps);
  LNC_ASSERT(a->file_map); /* planned in the file only with one (take.c) */
  LNC_ASSERT(!per || (!offs && (uint64_t)n == v->n * per));
  if (!fv || !maps || (!per && !offs) || lnc_array_init(out, n, nulls, per ? 2 : 3, 0)) {
    free(fv);
    free(maps);
    free(offs);
    free(validity);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_buffer(out, 0, validity);
  if (offs) lnc_array_set_buffer(out, 1, offs);
  maps[0] = lnc_filemap_ref(a->file_map);
  *fv = (struct lnc_filevals){.maps = maps, .n_maps = 1, .off = v->foff};
  if (per) fv->per = per, fv->stride = per * (v->bits / 8);
  v->foff = NULL;
  if (!fv->off && !(fv->off = calloc(1, sizeof *fv->off))) { /* no values */
    lnc_filevals_free(fv);
    out->release(out);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_filevals(out, fv);
  return 0;
}
static int fixed_array(struct lnc_asm *a, int64_t n, int64_t nulls, uint8_t *validity, uint8_t *data,
                       struct ArrowArray *out);

static int build(struct lnc_asm *a, const struct lnc_proj *p, struct ctx_node nd,
                 struct ArrowArray *out) {
  if (p->field->unsupported) { /* only in a take of no rows (take.c check_servable) */
    if (a->n_rows) return lnc_errf(a->err, LNC_EINTERNAL, "field '%s' cannot be served", p->field->name);
    return lnc_array_init(out, 0, 0, 0, 0) ? lnc_errf(a->err, LNC_ENOMEM, "out of memory") : 0;
  }
  int col = lnc_proj_first_column(p);
  if (col < 0) return lnc_errf(a->err, LNC_EINTERNAL, "field '%s' reads no column", p->field->name);
  struct lnc_leafrows *S = a->cols[col];
  /* A list (or struct) whose first column is an unsupported field's, as in
   * a list of fixed-size lists nested five deep: that column is not read, which only a take of no
   * rows lets through (check_servable), so the parent is built from no levels and the field as
   * its null stand-in. Read only: a parent takes no buffers from its leaf rows. */
  static struct lnc_leafrows no_rows;
  if (!S) {
    if (a->n_rows || p->field->column >= 0)
      return lnc_errf(a->err, LNC_EINTERNAL, "field '%s': column %d not read", p->field->name, col);
    S = &no_rows;
  }
  uint32_t D = a->leaf_depth[col];
  uint32_t max_rep = a->leaf_lists[col];
  struct slots sl;
  int rc = compute_slots(a, S, D, max_rep, nd, &sl);
  if (rc) return rc;
  const struct lnc_field *fld = p->field;
  uint8_t *validity = NULL;
  int64_t nulls = 0;
  if ((rc = make_validity(a, &sl, &validity, &nulls))) goto done;
  if (fld->column >= 0) {
    rc = leaf_array(a, p, S, &sl, out);
    free(validity);
    /* A dictionary field is read as its values; Lance returns Dictionary<index, value>. */
    if (!rc && fld->dict_index[0] && (rc = lnc_dict_encode(out, fld->format, fld->dict_index, a->err)))
      lnc_array_release(out);
    goto done;
  }
  if (fld->type == LNC_AT_STRUCT) {
    if ((rc = lnc_array_init(out, (int64_t)sl.n, nulls, 1, (int64_t)p->n_children))) {
      free(validity);
      rc = lnc_errf(a->err, rc, "out of memory");
      goto done;
    }
    lnc_array_set_buffer(out, 0, validity);
    struct ctx_node cn = {nd.k + 1, nd.lists, nd.region};
    for (size_t i = 0; i < p->n_children; i++) {
      if ((rc = build(a, &p->children[i], cn, out->children[i]))) goto done;
      if (out->children[i]->length != (int64_t)sl.n) {
        rc = lnc_errf(a->err, LNC_ECORRUPT, "struct '%s': child '%s' has %lld rows, the struct %llu",
                      fld->name, p->children[i].field->name, (long long)out->children[i]->length,
                      (unsigned long long)sl.n);
        goto done;
      }
    }
    goto done;
  }
  if (lnc_kind_is_list(fld->type)) {
    bool large = fld->type == LNC_AT_LARGE_LIST;
    struct ctx_node cn = {nd.k + 1, nd.lists + 1, nd.k + 1};
    /* Count child slots per list slot by walking levels once. */
    void *offs = calloc(sl.n + 1, large ? 8 : 4);
    if (!offs) {
      free(validity);
      rc = lnc_errf(a->err, LNC_ENOMEM, "out of memory");
      goto done;
    }
    uint64_t elems = 0, si = 0;
    int64_t cur = -1;
    for (uint64_t j = 0; j < S->n_levels; j++) {
      if (si < sl.n && sl.level[si] == j) {
        /* close the previous list */
        if (cur >= 0) {
          if (large)
            ((int64_t *)offs)[cur + 1] = (int64_t)elems;
          else
            ((int32_t *)offs)[cur + 1] = (int32_t)elems;
        }
        cur = (int64_t)si++;
      }
      if (reaches(S, D, j, cn.region) && rep_depth(S->rep[j], max_rep) <= cn.lists) elems++;
    }
    if (cur >= 0) {
      if (large)
        ((int64_t *)offs)[cur + 1] = (int64_t)elems;
      else
        ((int32_t *)offs)[cur + 1] = (int32_t)elems;
    }
    if (!large && elems > INT32_MAX) {
      free(offs);
      free(validity);
      rc = lnc_errf(a->err, LNC_ELIMIT, "list '%s' has more than 2^31 items in one response", fld->name);
      goto done;
    }
    if ((rc = lnc_array_init(out, (int64_t)sl.n, nulls, 2, 1))) {
      free(offs);
      free(validity);
      rc = lnc_errf(a->err, rc, "out of memory");
      goto done;
    }
    lnc_array_set_buffer(out, 0, validity);
    lnc_array_set_buffer(out, 1, offs);
    if ((rc = build(a, &p->children[0], cn, out->children[0]))) goto done;
    if ((uint64_t)out->children[0]->length != elems)
      rc = lnc_errf(a->err, LNC_ECORRUPT, "list '%s': %llu items expected, child has %lld", fld->name,
                    (unsigned long long)elems, (long long)out->children[0]->length);
    goto done;
  }
  free(validity);
  rc = lnc_errf(a->err, LNC_EUNSUPPORTED, "field '%s': cannot assemble type %s", fld->name, fld->format);
done:
  slots_free(&sl);
  return rc;
}

static uint32_t field_bits(const struct lnc_field *f) {
  return f->type == LNC_AT_BOOL ? 1 : f->byte_width * 8;
}

/* Arrow array for fixed-width values (n values of `bits` each) with optional validity. */
static int fixed_array(struct lnc_asm *a, int64_t n, int64_t nulls, uint8_t *validity, uint8_t *data,
                       struct ArrowArray *out) {
  if (lnc_array_init(out, n, nulls, 2, 0)) {
    free(validity);
    free(data);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_buffer(out, 0, validity);
  lnc_array_set_buffer(out, 1, data);
  return 0;
}

/* The items of n fixed-size lists of field fld, nesting level `level` of the column's values:
 * an inner list's array, built the same way one level down, or the innermost values. Each
 * level takes its item validity from v (n * fixed_size bits, NULL when all valid). */
static int fsl_items(struct lnc_asm *a, const struct lnc_field *fld, struct lnc_valbuf *v, uint32_t level,
                     int64_t n, struct ArrowArray *out) {
  const struct lnc_field *item = fld->children[0];
  int64_t items = n * fld->fixed_size, inulls = 0;
  if (level >= v->fsl_levels || (item->type == LNC_AT_FIXED_LIST) != (level + 1 < v->fsl_levels))
    return lnc_errf(a->err, LNC_EINTERNAL, "column '%s': values nested %u deep for this list", fld->name,
                    v->fsl_levels);
  uint8_t *iv = v->item_valid[level];
  v->item_valid[level] = NULL;
  if (item->type == LNC_AT_NULL) { /* Arrow's null array: no buffers, every slot null */
    free(iv);
    return lnc_array_init(out, items, items, 0, 0) ? lnc_errf(a->err, LNC_ENOMEM, "out of memory") : 0;
  }
  if (iv) {
    for (int64_t i = 0; i < items; i++) inulls += !((iv[i >> 3] >> (i & 7)) & 1);
    if (!inulls) {
      free(iv);
      iv = NULL;
    }
  }
  if (item->type != LNC_AT_FIXED_LIST && v->in_file) /* a vector left in the file (take.c) */
    return in_file_array(a, v, items, inulls, iv, NULL, (uint64_t)fld->fixed_size, out);
  if (item->type != LNC_AT_FIXED_LIST) return fixed_array(a, items, inulls, iv, take_buf(&v->data, 8), out);
  if (lnc_array_init(out, items, inulls, 1, 1)) {
    free(iv);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_buffer(out, 0, iv);
  return fsl_items(a, item, v, level + 1, items, out->children[0]);
}

/* Legacy blob descriptors (16 bytes: u64 position, u64 size) -> struct<position, size>. */
static int blob_descriptors(struct lnc_asm *a, struct lnc_valbuf *v, int64_t n, int64_t nulls,
                            uint8_t *validity, struct ArrowArray *out) {
  if (v->kind != LNC_VALUES_FIXED || v->bits != 128) {
    free(validity);
    return lnc_errf(a->err, LNC_ECORRUPT, "blob descriptors malformed");
  }
  if (lnc_array_init(out, n, nulls, 1, 2)) {
    free(validity);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_buffer(out, 0, validity);
  for (int k = 0; k < 2; k++) {
    uint64_t *col = malloc((size_t)n * 8 + 8);
    if (!col) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) memcpy(&col[i], v->data + 16 * i + 8 * k, 8);
    int rc = fixed_array(a, n, 0, NULL, (uint8_t *)col, out->children[k]);
    if (rc) return rc;
  }
  return 0;
}

/* Packed struct rows laid out as (u32 length, bytes) per field: variable packed structs and
 * blob v2 (as descriptors, or as data/uri when served as bytes). An empty row is a null. */
static int packed_var(struct lnc_asm *a, const struct lnc_proj *p, struct lnc_valbuf *v, int64_t n,
                      int64_t nulls, uint8_t *validity, struct ArrowArray *out) {
  const struct lnc_field *fld = p->field;
  const struct lnc_field *const *fields = (const struct lnc_field *const *)fld->children;
  size_t nf = fld->n_children, nout = p->n_children;
  bool bytes = fld->blob && a->blobs == LNC_BLOBS_BYTES;
  if (bytes) {
    fields = lnc_blob_bytes_fields;
    nf = nout = 2;
  }
  if (lnc_array_init(out, n, nulls, 1, (int64_t)nout)) {
    free(validity);
    return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
  }
  lnc_array_set_buffer(out, 0, validity);
  size_t pc = 0;
  for (size_t fi = 0; fi < nf; fi++) {
    const struct lnc_field *ch = fields[fi];
    if (!bytes && (pc >= p->n_children || p->children[pc].field != ch)) continue;
    bool var = ch->byte_width == 0 || ch->type == LNC_AT_BOOL;
    bool large = ch->type == LNC_AT_LARGE_BINARY || ch->type == LNC_AT_LARGE_UTF8;
    if (var && ch->type != LNC_AT_UTF8 && ch->type != LNC_AT_BINARY && !large)
      return lnc_errf(a->err, LNC_EUNSUPPORTED, "packed struct '%s': child '%s' of type %s", fld->name, ch->name, ch->format);
    size_t w = var ? (large ? 8 : 4) : ch->byte_width;
    uint8_t *data = NULL, *offs = calloc((size_t)n + 1, w);
    size_t dlen = 0, dcap = 0;
    if (!offs) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    if (!var) {
      data = calloc((size_t)n + 1, w);
      if (!data) {
        free(offs);
        return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
      }
    }
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *r = v->data + v->offsets[i], *end = v->data + v->offsets[i + 1];
      const uint8_t *fp = NULL;
      uint32_t fl = 0;
      for (size_t k = 0; r < end && k <= fi; k++) {
        if (end - r < 4) {
          r = end;
          break;
        }
        memcpy(&fl, r, 4);
        if ((uint64_t)(end - r - 4) < fl) {
          r = end;
          fl = 0;
          break;
        }
        fp = r + 4;
        r += 4 + fl;
      }
      if (!fp) fl = 0; /* null row: zero / empty value */
      if (var) {
        if (dlen + fl > dcap) {
          dcap = (dlen + fl) * 2 + 64;
          uint8_t *nd = realloc(data, dcap);
          if (!nd) {
            free(data);
            free(offs);
            return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
          }
          data = nd;
        }
        if (fl) memcpy(data + dlen, fp, fl);
        dlen += fl;
        if (!large && dlen > INT32_MAX) {
          free(data);
          free(offs);
          return lnc_errf(a->err, LNC_ELIMIT, "column '%s': more than 2 GiB in one response", fld->name);
        }
        if (large) {
          int64_t o = (int64_t)dlen;
          memcpy(offs + 8 * (size_t)(i + 1), &o, 8);
        } else {
          int32_t o = (int32_t)dlen;
          memcpy(offs + 4 * (size_t)(i + 1), &o, 4);
        }
      } else if (fp) {
        if (fl != w) {
          free(data);
          free(offs);
          return lnc_errf(a->err, LNC_ECORRUPT, "packed struct '%s': field '%s' has %u bytes, expected %zu", fld->name, ch->name, fl, w);
        }
        memcpy(data + (size_t)i * w, fp, w);
      }
    }
    struct ArrowArray *child = out->children[bytes ? fi : pc];
    if (var) {
      if (!data) data = calloc(1, 8);
      if (!data || lnc_array_init(child, n, 0, 3, 0)) {
        free(data);
        free(offs);
        return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
      }
      lnc_array_set_buffer(child, 1, offs);
      lnc_array_set_buffer(child, 2, data);
    } else {
      free(offs);
      int rc = fixed_array(a, n, 0, NULL, data, child);
      if (rc) return rc;
    }
    pc++;
  }
  return 0;
}

static int leaf_array(struct lnc_asm *a, const struct lnc_proj *p, struct lnc_leafrows *S,
                      const struct slots *sl, struct ArrowArray *out) {
  const struct lnc_field *fld = p->field;
  struct lnc_valbuf *v = &S->values;
  if (v->n != sl->n)
    return lnc_errf(a->err, LNC_ECORRUPT, "column '%s': %llu values for %llu slots", fld->name,
                    (unsigned long long)v->n, (unsigned long long)sl->n);
  uint8_t *validity = NULL;
  int64_t nulls = 0;
  int rc = make_validity(a, sl, &validity, &nulls);
  if (rc) return rc;
  int64_t n = (int64_t)sl->n;
  if (fld->blob && fld->type != LNC_AT_STRUCT && a->blobs == LNC_BLOBS_DESCRIPTORS)
    return blob_descriptors(a, v, n, nulls, validity, out);
  switch (fld->type) {
  case LNC_AT_NULL:
    free(validity);
    if (lnc_array_init(out, n, n, 0, 0)) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    return 0;
  case LNC_AT_UTF8:
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_UTF8:
  case LNC_AT_LARGE_BINARY: {
    if (v->kind != LNC_VALUES_VARIABLE) {
      free(validity);
      return lnc_errf(a->err, LNC_ECORRUPT, "column '%s': fixed-width values for a variable-width type", fld->name);
    }
    bool large = fld->type == LNC_AT_LARGE_UTF8 || fld->type == LNC_AT_LARGE_BINARY;
    void *offs;
    if (large) {
      offs = v->offsets;
      v->offsets = NULL;
      if (!offs) offs = calloc(1, 8);
    } else {
      if (v->data_len > INT32_MAX) {
        free(validity);
        return lnc_errf(a->err, LNC_ELIMIT, "column '%s': more than 2 GiB of strings in one response", fld->name);
      }
      int32_t *o32 = malloc(((size_t)n + 1) * 4);
      if (!o32) {
        free(validity);
        return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
      }
      for (int64_t i = 0; i <= n; i++) o32[i] = v->offsets ? (int32_t)v->offsets[i] : 0;
      offs = o32;
    }
    if (v->in_file) return in_file_array(a, v, n, nulls, validity, offs, 0, out);
    void *data = take_buf(&v->data, 1);
    if (!offs || !data || lnc_array_init(out, n, nulls, 3, 0)) {
      free(offs);
      free(data);
      free(validity);
      return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    }
    lnc_array_set_buffer(out, 0, validity);
    lnc_array_set_buffer(out, 1, offs);
    lnc_array_set_buffer(out, 2, data);
    return 0;
  }
  case LNC_AT_FIXED_LIST: {
    if (v->kind != LNC_VALUES_FIXED) {
      free(validity);
      return lnc_errf(a->err, LNC_EUNSUPPORTED, "column '%s': fixed-size list of %s", fld->name,
                      fld->children[0]->format);
    }
    if (lnc_array_init(out, n, nulls, 1, 1)) {
      free(validity);
      return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    }
    lnc_array_set_buffer(out, 0, validity);
    return fsl_items(a, fld, v, 0, n, out->children[0]);
  }
  case LNC_AT_STRUCT: { /* packed struct: split each row's bytes into the children */
    if (v->kind == LNC_VALUES_VARIABLE) return packed_var(a, p, v, n, nulls, validity, out);
    if (v->kind != LNC_VALUES_FIXED || v->bits % 8) {
      free(validity);
      return lnc_errf(a->err, LNC_ECORRUPT, "column '%s': packed struct values malformed", fld->name);
    }
    size_t row_bytes = v->bits / 8, at = 0;
    if (lnc_array_init(out, n, nulls, 1, (int64_t)p->n_children)) {
      free(validity);
      return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
    }
    lnc_array_set_buffer(out, 0, validity);
    for (size_t c = 0, pc = 0; c < fld->n_children; c++) {
      const struct lnc_field *ch = fld->children[c];
      size_t w = ch->byte_width;
      if (!w || ch->n_children) return lnc_errf(a->err, LNC_EUNSUPPORTED, "packed struct '%s': child '%s' is not fixed-width", fld->name, ch->name);
      if (at + w > row_bytes) return lnc_errf(a->err, LNC_ECORRUPT, "packed struct '%s': rows of %zu bytes are too short", fld->name, row_bytes);
      if (pc < p->n_children && p->children[pc].field == ch) {
        uint8_t *data = malloc((size_t)n * w + 1);
        if (!data) return lnc_errf(a->err, LNC_ENOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++) memcpy(data + (size_t)i * w, v->data + (size_t)i * row_bytes + at, w);
        if ((rc = fixed_array(a, n, 0, NULL, data, out->children[pc]))) return rc;
        pc++;
      }
      at += w;
    }
    return 0;
  }
  default:
    if (v->kind != LNC_VALUES_FIXED || v->bits != field_bits(fld)) {
      free(validity);
      return lnc_errf(a->err, LNC_ECORRUPT, "column '%s': values of %u bits for a %u-bit type", fld->name,
                      v->bits, field_bits(fld));
    }
    return fixed_array(a, n, nulls, validity, take_buf(&v->data, 8), out);
  }
}

int lnc_assemble(struct lnc_asm *a, const struct lnc_proj *p, struct ArrowArray *out) {
  struct ctx_node nd = {0, 0, 0};
  return build(a, p, nd, out);
}
