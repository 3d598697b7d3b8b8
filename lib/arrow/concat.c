/* Gather rows from several Arrow C Data arrays of one schema into a new array (concat and
 * gather by index are both special cases), plus all-null arrays and deep schema copies.
 * Works recursively on the C Data layout: validity bitmaps, offsets, children. */
#include "concat.h"
#include "builder.h"
#include "dict.h"
#include "../io/io.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_NULL,
            K_BOOL,
            K_FIXED,
            K_VAR32,
            K_VAR64,
            K_LIST32,
            K_LIST64,
            K_FSL,
            K_STRUCT };

struct ktype {
  enum kind kind;
  int64_t width; /* K_FIXED: bytes per value; K_FSL: items per row */
};

/* The layout class of an array, from lance.h's one type vocabulary: what gather needs to
 * know is only how values are laid out (fixed width, 32/64-bit offsets, children). */
static int classify(const struct ArrowSchema *s, struct ktype *t, struct lnc_error *err) {
  t->width = 0;
  if (!s->format) return lnc_errf(err, LNC_EINVAL, "arrow: schema without a format string");
  struct lnc_atype_info a;
  if (lnc_arrow_parse_format(s->format, &a, NULL) == 0) {
    switch (a.kind) {
    case LNC_AT_NULL: t->kind = K_NULL; return 0;
    case LNC_AT_BOOL: t->kind = K_BOOL; return 0;
    case LNC_AT_BINARY:
    case LNC_AT_UTF8: t->kind = K_VAR32; return 0;
    case LNC_AT_LARGE_BINARY:
    case LNC_AT_LARGE_UTF8: t->kind = K_VAR64; return 0;
    case LNC_AT_LIST:
    case LNC_AT_MAP: t->kind = K_LIST32; return 0;
    case LNC_AT_LARGE_LIST: t->kind = K_LIST64; return 0;
    case LNC_AT_STRUCT: t->kind = K_STRUCT; return 0;
    case LNC_AT_FIXED_LIST:
      t->kind = K_FSL;
      t->width = a.width;
      return 0;
    default: /* every other kind is fixed-width values */
      t->kind = K_FIXED;
      t->width = a.bits / 8;
      if (t->width > 0) return 0;
    }
  }
  return lnc_errf(err, LNC_EUNSUPPORTED, "arrow: cannot concatenate arrays of format '%s'", s->format);
}

static int n_buffers_of(enum kind k) {
  switch (k) {
  case K_NULL: return 0;
  case K_VAR32:
  case K_VAR64: return 3;
  case K_LIST32:
  case K_LIST64:
  case K_BOOL:
  case K_FIXED: return 2;
  case K_FSL:
  case K_STRUCT: return 1;
  }
  return 0;
}

/* ---- owned arrays: lib/arrow/builder.c makes them; buffers are zeroed ---------------- */
static void *arr_buf(struct ArrowArray *a, int i, size_t bytes) {
  void *m = calloc(1, bytes ? bytes : 1);
  if (m) lnc_array_set_buffer(a, i, m);
  return m;
}

/* A buffer the caller writes every byte of: not zeroed first (calloc's memset of a
 * training batch's 2 MB of images was 3 % of the daemon's time). */
static void *arr_buf_raw(struct ArrowArray *a, int i, size_t bytes) {
  void *m = malloc(bytes ? bytes : 1);
  if (m) lnc_array_set_buffer(a, i, m);
  return m;
}

static inline bool get_bit(const uint8_t *b, uint64_t i) { return (b[i >> 3] >> (i & 7)) & 1; }
static inline void set_bit(uint8_t *b, uint64_t i) { b[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* ---- gather --------------------------------------------------------------------------- */
#define MAX_DEPTH 64

static int gather(const struct ArrowSchema *s, const struct ArrowArray *const *parts,
                  size_t nparts, const struct lnc_row_ref *refs, size_t n,
                  struct ArrowArray *out, struct lnc_error *err, int depth);

/* Checks the parts' shape against the type and every ref's bounds. */
static int check_parts(const struct ArrowSchema *s, const struct ktype *t,
                       const struct ArrowArray *const *parts, size_t nparts,
                       const struct lnc_row_ref *refs, size_t n, struct lnc_error *err) {
  int nb = n_buffers_of(t->kind);
  int64_t nk = t->kind == K_STRUCT                                                ? s->n_children
               : (t->kind == K_LIST32 || t->kind == K_LIST64 || t->kind == K_FSL) ? 1
                                                                                  : 0;
  if (nk != s->n_children)
    return lnc_errf(err, LNC_EINVAL, "arrow: schema '%s' has %lld children, expected %lld",
                    s->format, (long long)s->n_children, (long long)nk);
  for (size_t i = 0; i < nparts; i++) {
    const struct ArrowArray *a = parts[i];
    if (!a || !a->release)
      return lnc_errf(err, LNC_EINVAL, "arrow: part %zu is missing or released", i);
    if (a->n_buffers != nb || a->n_children != nk || a->length < 0 || a->offset < 0)
      return lnc_errf(err, LNC_EINVAL,
                      "arrow: part %zu (format '%s') has %lld buffers and %lld children, "
                      "expected %d and %lld",
                      i, s->format, (long long)a->n_buffers,
                      (long long)a->n_children, nb, (long long)nk);
    if (a->length > 0)
      for (int b = 1; b < nb; b++)
        if (!a->buffers[b] && !(b == 2 && (t->kind == K_VAR32 || t->kind == K_VAR64)))
          return lnc_errf(err, LNC_EINVAL, "arrow: part %zu (format '%s') buffer %d is NULL",
                          i, s->format, b);
  }
  for (size_t i = 0; i < n; i++) {
    if (refs[i].part >= nparts || refs[i].row >= (uint64_t)parts[refs[i].part]->length)
      return lnc_errf(err, LNC_EINVAL, "arrow: row reference %zu (part %u, row %llu) out of "
                                       "bounds",
                      i, refs[i].part, (unsigned long long)refs[i].row);
  }
  return 0;
}

/* Nested rows for lists: the child refs of every selected row, and output offsets. */
static int list_child_refs(const struct ktype *t, const struct ArrowArray *const *parts,
                           const struct lnc_row_ref *refs, size_t n, void *offsets_out,
                           struct lnc_row_ref **child_refs, size_t *nchild,
                           struct lnc_error *err) {
  uint64_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    uint64_t pos = 0;
    for (size_t i = 0; i < n; i++) {
      const struct ArrowArray *a = parts[refs[i].part];
      uint64_t r = (uint64_t)a->offset + refs[i].row;
      int64_t st, en;
      if (t->kind == K_LIST32) {
        const int32_t *o = a->buffers[1];
        st = o[r];
        en = o[r + 1];
      } else if (t->kind == K_LIST64) {
        const int64_t *o = a->buffers[1];
        st = o[r];
        en = o[r + 1];
      } else {
        st = (int64_t)r * t->width;
        en = st + t->width;
      }
      if (st < 0 || en < st)
        return lnc_errf(err, LNC_EINVAL, "arrow: list offsets decrease at row %llu",
                        (unsigned long long)r);
      if (pass == 1) {
        for (int64_t k = st; k < en; k++) {
          (*child_refs)[pos].part = refs[i].part;
          (*child_refs)[pos].row = (uint64_t)k;
          pos++;
        }
        if (t->kind == K_LIST32)
          ((int32_t *)offsets_out)[i + 1] = (int32_t)pos;
        else if (t->kind == K_LIST64)
          ((int64_t *)offsets_out)[i + 1] = (int64_t)pos;
      } else {
        total += (uint64_t)(en - st);
      }
    }
    if (pass == 0) {
      if (t->kind == K_LIST32 && total > INT32_MAX)
        return lnc_errf(err, LNC_ELIMIT, "arrow: list items exceed the int32 offset range");
      if (total > ((uint64_t)1 << 40))
        return lnc_errf(err, LNC_ELIMIT, "arrow: too many list items (%llu)",
                        (unsigned long long)total);
      *child_refs = malloc((size_t)(total ? total : 1) * sizeof **child_refs);
      if (!*child_refs) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
      *nchild = (size_t)total;
    }
  }
  return 0;
}

static int gather_children_of(const struct ArrowSchema *s, int64_t ci,
                              const struct ArrowArray *const *parts, size_t nparts,
                              const struct lnc_row_ref *refs, size_t n,
                              struct ArrowArray *out, struct lnc_error *err, int depth) {
  const struct ArrowArray **kp = malloc((nparts ? nparts : 1) * sizeof *kp);
  if (!kp) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  for (size_t i = 0; i < nparts; i++) kp[i] = parts[i]->children[ci];
  int rc = gather(s->children[ci], kp, nparts, refs, n, out, err, depth + 1);
  free(kp);
  if (rc) lnc_err_prefix(err, "child '%s'", s->children[ci]->name ? s->children[ci]->name : "");
  return rc;
}

/* Start and end of row r's bytes in a utf8/binary (32-bit) or large (64-bit) array. */
static inline void var_range(const struct ArrowArray *a, uint64_t r, bool big, int64_t *st,
                             int64_t *en) {
  if (big) {
    *st = ((const int64_t *)a->buffers[1])[r];
    *en = ((const int64_t *)a->buffers[1])[r + 1];
  } else {
    *st = ((const int32_t *)a->buffers[1])[r];
    *en = ((const int32_t *)a->buffers[1])[r + 1];
  }
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* Bytes of a fixed-width row of a fixed-size list's items, 0 when they are not that simple
 * (then each item is sized on its own). */
static uint64_t fsl_fixed_item(const struct ArrowSchema *child) {
  struct ktype ct;
  return !child->dictionary && !classify(child, &ct, NULL) && ct.kind == K_FIXED ? (uint64_t)ct.width : 0;
}

/* Adds n to *items (saturating). */
static void add_items(uint64_t *items, uint64_t n) { *items = sat_add(*items, n); }

static bool is_plain_bool(const struct ArrowSchema *s) {
  struct ktype t;
  return !s->dictionary && !classify(s, &t, NULL) && t.kind == K_BOOL;
}

static uint64_t row_bytes(const struct ArrowSchema *s, const struct ArrowArray *a, uint64_t row, int depth,
                          uint64_t *items) {
  struct ktype t;
  if (depth > MAX_DEPTH || classify(s, &t, NULL)) return 0;                        /* the gather reports it */
  if (a->n_children != s->n_children || (s->n_children && !a->children)) return 0; /* likewise */
  if (s->dictionary) return (uint64_t)t.width;                                     /* the index; the dictionary goes once */
  uint64_t r = (uint64_t)a->offset + row, total = 0, w;
  int64_t st, en;
  switch (t.kind) {
  case K_NULL:
  case K_BOOL: return 0; /* a bit: under a byte (lists of them count theirs below) */
  case K_FIXED: return (uint64_t)t.width;
  case K_VAR32:
  case K_VAR64:
    var_range(a, r, t.kind == K_VAR64, &st, &en);
    return en > st ? (uint64_t)(en - st) + 4 : 4;
  case K_LIST32:
  case K_LIST64:
  case K_FSL:
    if (t.kind == K_FSL) {
      st = (int64_t)r * t.width, en = st + t.width;
    } else {
      var_range(a, r, t.kind == K_LIST64, &st, &en);
      total = 4;
    }
    if (en <= st) return total;
    w = fsl_fixed_item(s->children[0]);
    if (t.kind == K_FSL && w) /* a vector: one range, no items */
      return (uint64_t)t.width * w;
    add_items(items, (uint64_t)(en - st));
    /* Items of one fixed width (a token list): each would size itself as w, so they are
     * counted, not walked; walking them parsed the child's format once per item, 18,000
     * times for a training batch of 256 token lists (docs/performance.md). */
    if (w) return sat_add(total, (uint64_t)(en - st) > UINT64_MAX / w ? UINT64_MAX : (uint64_t)(en - st) * w);
    if (is_plain_bool(s->children[0])) /* bits: a byte per 8 items, no per-item walk */
      return total + (uint64_t)(en - st) / 8;
    for (int64_t k = st; k < en && total != UINT64_MAX; k++)
      total = sat_add(total, row_bytes(s->children[0], a->children[0], (uint64_t)k, depth + 1, items));
    return total;
  case K_STRUCT:
    for (int64_t c = 0; c < s->n_children; c++)
      total = sat_add(total, row_bytes(s->children[c], a->children[c], r, depth + 1, items));
    return total;
  }
  return 0;
}

uint64_t lnc_arrow_row_bytes(const struct ArrowSchema *schema, const struct ArrowArray *a, uint64_t row,
                             uint64_t *items) {
  uint64_t scratch = 0;
  return schema && a && row < (uint64_t)a->length ? row_bytes(schema, a, row, 0, items ? items : &scratch) : 0;
}

/* Dictionary-encoded parts (each with its own dictionary): the rows' values are gathered from
 * the parts' dictionaries (a null index becomes the one row of an all-null array) and
 * dictionary-encoded again, so the result has one dictionary of the values it holds. */
static int gather_dict(const struct ArrowSchema *s, const struct ArrowArray *const *parts,
                       size_t nparts, const struct lnc_row_ref *refs, size_t n,
                       struct ArrowArray *out, struct lnc_error *err, int depth) {
  struct ktype it;
  int rc = classify(&(struct ArrowSchema){.format = s->format}, &it, err);
  if (rc) return rc;
  if (it.kind != K_FIXED || (it.width != 1 && it.width != 2 && it.width != 4 && it.width != 8))
    return lnc_errf(err, LNC_EINVAL, "arrow: dictionary index format '%s' is not an integer", s->format);
  const struct ArrowArray **dparts = calloc(nparts + 1, sizeof *dparts);
  struct lnc_row_ref *vrefs = malloc((n ? n : 1) * sizeof *vrefs);
  struct ArrowArray nullrow = {0};
  if (!dparts || !vrefs) {
    rc = lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
    goto done;
  }
  for (size_t p = 0; p < nparts; p++) {
    if (!parts[p]->dictionary || parts[p]->n_buffers < 2) {
      rc = lnc_errf(err, LNC_EINVAL, "arrow: dictionary-encoded part %zu has no dictionary", p);
      goto done;
    }
    dparts[p] = parts[p]->dictionary;
  }
  if ((rc = lnc_arrow_make_nulls(s->dictionary, 1, &nullrow, err))) goto done;
  dparts[nparts] = &nullrow;
  for (size_t i = 0; i < n; i++) {
    if (refs[i].part >= nparts || refs[i].row >= (uint64_t)parts[refs[i].part]->length) {
      rc = lnc_errf(err, LNC_EINVAL, "arrow: row reference out of range");
      goto done;
    }
    const struct ArrowArray *a = parts[refs[i].part];
    uint64_t r = (uint64_t)a->offset + refs[i].row;
    if (a->buffers[0] && !get_bit(a->buffers[0], r)) {
      vrefs[i] = (struct lnc_row_ref){(uint32_t)nparts, 0};
      continue;
    }
    const uint8_t *ib = a->buffers[1];
    int64_t k = 0;
    switch (it.width) { /* little-endian, signedness per format: negative indices are refused below */
    case 1: k = s->format[0] == 'c' ? (int8_t)ib[r] : (int64_t)ib[r]; break;
    case 2: {
      int16_t x;
      memcpy(&x, ib + r * 2, 2);
      k = s->format[0] == 's' ? (int64_t)x : (int64_t)(uint16_t)x;
      break;
    }
    case 4: {
      int32_t x;
      memcpy(&x, ib + r * 4, 4);
      k = s->format[0] == 'i' ? (int64_t)x : (int64_t)(uint32_t)x;
      break;
    }
    default: memcpy(&k, ib + r * 8, 8);
    }
    if (k < 0 || k >= a->dictionary->length) {
      rc = lnc_errf(err, LNC_EINVAL, "arrow: dictionary index %lld out of range", (long long)k);
      goto done;
    }
    vrefs[i] = (struct lnc_row_ref){refs[i].part, (uint64_t)k};
  }
  if ((rc = gather(s->dictionary, dparts, nparts + 1, vrefs, n, out, err, depth + 1))) goto done;
  if ((rc = lnc_dict_encode(out, s->dictionary->format, s->format, err))) out->release(out);
done:
  if (nullrow.release) nullrow.release(&nullrow);
  free(dparts);
  free(vrefs);
  return rc;
}

static int oom(const struct ArrowSchema *s, size_t n, struct lnc_error *err) {
  return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory gathering %zu rows of '%s'", n, s->format);
}

/* The validity bitmap and null count: no bitmap at all when no gathered row is null. */
static int gather_validity(const struct ArrowSchema *s, const struct ktype *t, const struct ArrowArray *const *parts,
                           const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out,
                           struct lnc_error *err) {
  int64_t nulls = 0;
  if (t->kind == K_NULL) {
    out->null_count = (int64_t)n;
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    if (a->buffers[0] && !get_bit(a->buffers[0], (uint64_t)a->offset + refs[i].row)) nulls++;
  }
  out->null_count = nulls;
  if (nulls == 0) return 0;
  uint8_t *v = arr_buf(out, 0, (n + 7) / 8);
  if (!v) return oom(s, n, err);
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    if (!a->buffers[0] || get_bit(a->buffers[0], (uint64_t)a->offset + refs[i].row)) set_bit(v, i);
  }
  return 0;
}

static int gather_bool(const struct ArrowSchema *s, const struct ArrowArray *const *parts,
                       const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out, struct lnc_error *err) {
  uint8_t *d = arr_buf(out, 1, (n + 7) / 8);
  if (!d) return oom(s, n, err);
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    if (get_bit(a->buffers[1], (uint64_t)a->offset + refs[i].row)) set_bit(d, i);
  }
  return 0;
}

static int gather_fixed(const struct ArrowSchema *s, const struct ktype *t, const struct ArrowArray *const *parts,
                        const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out, struct lnc_error *err) {
  size_t w = (size_t)t->width;
  if (n > SIZE_MAX / w) return oom(s, n, err);
  uint8_t *d = arr_buf_raw(out, 1, n * w);
  if (!d) return oom(s, n, err);
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    memcpy(d + i * w, (const uint8_t *)a->buffers[1] + ((uint64_t)a->offset + refs[i].row) * w, w);
  }
  return 0;
}

/* The array of part a holding the values: a itself, or a fixed-size list's items (dim > 0). */
static const struct ArrowArray *values_of(const struct ArrowArray *a, size_t dim) {
  return dim ? a->children[0] : a;
}

/* Row r of part a (r counted from a's buffers) as its values' lnc_filevals entry: the row
 * itself, or for a fixed-size list of dim items (dim > 0) its items' range, whose first item
 * the items array's offset moves (fsl_filevals checked it lands on an entry). */
static uint64_t filevals_entry(const struct ArrowArray *a, uint64_t r, size_t dim) {
  return dim ? (uint64_t)a->children[0]->offset / dim + r : r;
}

/* Values left in files (lnc_filevals) gathered as such: each row's file and offset, with a
 * reference of the output's own to every one of the parts' mappings. dim > 0: the parts are
 * fixed-size lists of dim items of w bytes, their items in the files, and out their items. */
static int gather_filevals(const struct ArrowSchema *s, const struct ArrowArray *const *parts, size_t nparts,
                           const struct lnc_row_ref *refs, size_t n, size_t dim, size_t w, struct ArrowArray *out,
                           struct lnc_error *err) {
  struct lnc_filevals *fv = calloc(1, sizeof *fv);
  size_t *base = calloc(nparts ? nparts : 1, sizeof *base), nmaps = 0;
  for (size_t p = 0; p < nparts; p++) {
    const struct lnc_filevals *pf = lnc_array_filevals(values_of(parts[p], dim));
    base[p] = nmaps;
    nmaps += pf ? pf->n_maps : 0;
  }
  if (fv) {
    fv->maps = malloc((nmaps ? nmaps : 1) * sizeof *fv->maps);
    fv->off = malloc((n ? n : 1) * sizeof *fv->off);
    fv->file = nmaps > 1 ? malloc((n ? n : 1) * sizeof *fv->file) : NULL;
  }
  if (!fv || !base || !fv->maps || !fv->off || (nmaps > 1 && !fv->file)) {
    lnc_filevals_free(fv);
    free(base);
    return oom(s, n, err);
  }
  for (size_t p = 0; p < nparts; p++) {
    const struct lnc_filevals *pf = lnc_array_filevals(values_of(parts[p], dim));
    for (size_t k = 0; pf && k < pf->n_maps; k++) fv->maps[fv->n_maps++] = lnc_filemap_ref(pf->maps[k]);
  }
  if (dim) fv->per = dim, fv->stride = dim * w;
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    const struct lnc_filevals *pf = lnc_array_filevals(values_of(a, dim));
    uint64_t r = filevals_entry(a, (uint64_t)a->offset + refs[i].row, dim);
    fv->off[i] = pf ? pf->off[r] : 0; /* a part without: its rows here hold no bytes */
    if (fv->file) fv->file[i] = (uint32_t)(base[refs[i].part] + (pf && pf->file ? pf->file[r] : 0));
  }
  free(base);
  lnc_array_set_filevals(out, fv);
  return 0;
}

/* Strings and binaries: the total size first (offsets checked, 32-bit range kept), then
 * offsets and bytes in one pass. Values some part left in its file stay there when every
 * row with bytes comes from such a part (gather_filevals), and are read in otherwise. */
static int gather_var(const struct ArrowSchema *s, const struct ktype *t, const struct ArrowArray *const *parts,
                      size_t nparts, const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out,
                      struct lnc_error *err) {
  bool big = t->kind == K_VAR64, in_files = true, any_file = false;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    uint64_t r = (uint64_t)a->offset + refs[i].row;
    int64_t st, en;
    var_range(a, r, big, &st, &en);
    if (st < 0 || en < st)
      return lnc_errf(err, LNC_EINVAL, "arrow: '%s' offsets decrease at row %llu", s->format, (unsigned long long)r);
    total += (uint64_t)(en - st);
    bool f = lnc_array_filevals(a) != NULL;
    any_file |= f;
    if (en > st && !f) in_files = false;
  }
  if (!big && total > INT32_MAX)
    return lnc_errf(err, LNC_ELIMIT, "arrow: '%s' data exceeds the int32 offset range", s->format);
  in_files &= any_file;
  void *offs = arr_buf(out, 1, (n + 1) * (big ? 8 : 4));
  uint8_t *d = in_files ? NULL : arr_buf_raw(out, 2, (size_t)total);
  if (!offs || (!in_files && !d)) return oom(s, n, err);
  if (in_files) {
    int rc = gather_filevals(s, parts, nparts, refs, n, 0, 0, out, err);
    if (rc) return rc;
  }
  uint64_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part];
    int64_t st, en;
    uint64_t r = (uint64_t)a->offset + refs[i].row;
    var_range(a, r, big, &st, &en);
    const struct lnc_filevals *pf = in_files || en <= st ? NULL : lnc_array_filevals(a);
    if (pf) {
      /* a part's values left in its file, read in */
      int rc = lnc_filemap_read(lnc_filevals_map(pf, r), d + pos, pf->off[r], (uint64_t)(en - st), err);
      if (rc) return rc;
    } else if (en > st && !in_files) {
      if (!a->buffers[2]) return lnc_errf(err, LNC_EINVAL, "arrow: '%s' data buffer is NULL", s->format);
      memcpy(d + pos, (const uint8_t *)a->buffers[2] + st, (size_t)(en - st));
    }
    pos += (uint64_t)(en - st);
    if (big)
      ((int64_t *)offs)[i + 1] = (int64_t)pos;
    else
      ((int32_t *)offs)[i + 1] = (int32_t)pos;
  }
  return 0;
}

/* The items of fixed-size list part a (dim items of w bytes a row) left in files, if they are:
 * one file range a row, none of them null (lib/take leaves only such items there). */
static const struct lnc_filevals *fsl_filevals(const struct ArrowArray *a, size_t dim, size_t w) {
  const struct ArrowArray *c = a->children[0];
  const struct lnc_filevals *fv = lnc_array_filevals(c);
  return fv && fv->per == dim && fv->stride == dim * w && !c->buffers[1] && !c->null_count &&
                 (uint64_t)c->offset % dim == 0
             ? fv
             : NULL;
}

/* A fixed-size list of fixed-width items (a vector column): each row's items are one range,
 * copied as such with their validity, instead of one row reference per item (16 bytes each:
 * 17,000 rows of 1,024 uint8 were 280 MB of references for a 17 MB answer). */

static int gather_fsl_fixed(const struct ArrowSchema *s, const struct ktype *t, const struct ArrowArray *const *parts,
                            size_t nparts, const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out,
                            struct lnc_error *err) {
  const struct ArrowSchema *cs = s->children[0];
  size_t dim = (size_t)t->width, w = (size_t)fsl_fixed_item(cs);
  for (size_t p = 0; p < nparts; p++) { /* the items the parts' rows name must be there */
    const struct ArrowArray *a = parts[p], *c = a->children[0];
    uint64_t need = ((uint64_t)a->offset + (uint64_t)a->length) * dim;
    if (!c || !c->release || c->n_buffers != 2 || c->offset < 0 || (uint64_t)c->length < need ||
        (need && !c->buffers[1] && !fsl_filevals(a, dim, w)))
      return lnc_errf(err, LNC_EINVAL, "arrow: part %zu's '%s' items do not cover its rows", p, cs->format);
  }
  if (n > SIZE_MAX / dim / w) return oom(s, n, err);
  size_t items = n * dim;
  struct ArrowArray *child = out->children[0];
  if (lnc_array_init(child, (int64_t)items, 0, 2, 0)) return oom(s, n, err);
  /* Items some part left in its files stay there when every row comes from such a part (a
   * take of one dataset version's fragments), and are read in otherwise. */
  bool in_files = n > 0;
  for (size_t i = 0; i < n && in_files; i++) in_files = fsl_filevals(parts[refs[i].part], dim, w) != NULL;
  if (in_files) return gather_filevals(cs, parts, nparts, refs, n, dim, w, child, err);
  uint8_t *d = arr_buf_raw(child, 1, items * w), *v = NULL;
  if (!d) return oom(s, n, err);
  int64_t nulls = 0;
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = parts[refs[i].part], *c = a->children[0];
    uint64_t first = (uint64_t)c->offset + ((uint64_t)a->offset + refs[i].row) * dim;
    const struct lnc_filevals *pf = c->buffers[1] ? NULL : fsl_filevals(a, dim, w);
    if (pf) { /* a part's items left in its file, read in */
      uint64_t e = filevals_entry(a, (uint64_t)a->offset + refs[i].row, dim);
      int rc = lnc_filemap_read(lnc_filevals_map(pf, e), d + i * dim * w, pf->off[e], dim * w, err);
      if (rc) return rc;
      continue; /* no item of such a part is null */
    }
    memcpy(d + i * dim * w, (const uint8_t *)c->buffers[1] + first * w, dim * w);
    if (!c->buffers[0]) continue;
    for (size_t k = 0; k < dim; k++) {
      if (get_bit(c->buffers[0], first + k)) continue;
      if (!v && !(v = arr_buf(child, 0, (items + 7) / 8))) return oom(s, n, err);
      if (!nulls++) memset(v, 0xff, (items + 7) / 8); /* first null: every item before was valid */
      v[(i * dim + k) >> 3] &= (uint8_t) ~(1u << ((i * dim + k) & 7));
    }
  }
  child->null_count = nulls;
  return 0;
}

/* Lists: the rows' offsets, then their items gathered as one child gather. */
static int gather_list(const struct ArrowSchema *s, const struct ktype *t, const struct ArrowArray *const *parts,
                       size_t nparts, const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out,
                       struct lnc_error *err, int depth) {
  void *offs = NULL;
  if (t->kind != K_FSL && !(offs = arr_buf(out, 1, (n + 1) * (t->kind == K_LIST64 ? 8 : 4)))) return oom(s, n, err);
  struct lnc_row_ref *crefs = NULL;
  size_t nc = 0;
  int rc = list_child_refs(t, parts, refs, n, offs, &crefs, &nc, err);
  if (rc) return rc;
  rc = gather_children_of(s, 0, parts, nparts, crefs, nc, out->children[0], err, depth);
  free(crefs);
  return rc;
}

/* Structs: each child gathered at the same rows (shifted by the parent's offset). */
static int gather_struct(const struct ArrowSchema *s, const struct ArrowArray *const *parts, size_t nparts,
                         const struct lnc_row_ref *refs, size_t n, struct ArrowArray *out,
                         struct lnc_error *err, int depth) {
  struct lnc_row_ref *crefs = malloc((n ? n : 1) * sizeof *crefs);
  if (!crefs) return oom(s, n, err);
  for (size_t i = 0; i < n; i++) {
    crefs[i].part = refs[i].part;
    crefs[i].row = (uint64_t)parts[refs[i].part]->offset + refs[i].row;
  }
  int rc = 0;
  for (int64_t c = 0; c < s->n_children && !rc; c++)
    rc = gather_children_of(s, c, parts, nparts, crefs, n, out->children[c], err, depth);
  free(crefs);
  return rc;
}

static int gather(const struct ArrowSchema *s, const struct ArrowArray *const *parts,
                  size_t nparts, const struct lnc_row_ref *refs, size_t n,
                  struct ArrowArray *out, struct lnc_error *err, int depth) {
  struct ktype t;
  int rc;
  if (depth > MAX_DEPTH) return lnc_errf(err, LNC_EUNSUPPORTED, "arrow: nesting too deep");
  if (s->dictionary) return gather_dict(s, parts, nparts, refs, n, out, err, depth);
  if ((rc = classify(s, &t, err))) return rc;
  if ((rc = check_parts(s, &t, parts, nparts, refs, n, err))) return rc;
  if (lnc_array_init(out, (int64_t)n, 0, n_buffers_of(t.kind), s->n_children))
    return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  rc = gather_validity(s, &t, parts, refs, n, out, err);
  if (!rc) {
    switch (t.kind) {
    case K_NULL: break;
    case K_BOOL: rc = gather_bool(s, parts, refs, n, out, err); break;
    case K_FIXED: rc = gather_fixed(s, &t, parts, refs, n, out, err); break;
    case K_VAR32:
    case K_VAR64: rc = gather_var(s, &t, parts, nparts, refs, n, out, err); break;
    case K_LIST32:
    case K_LIST64: rc = gather_list(s, &t, parts, nparts, refs, n, out, err, depth); break;
    case K_FSL:
      rc = fsl_fixed_item(s->children[0]) ? gather_fsl_fixed(s, &t, parts, nparts, refs, n, out, err)
                                          : gather_list(s, &t, parts, nparts, refs, n, out, err, depth);
      break;
    case K_STRUCT: rc = gather_struct(s, parts, nparts, refs, n, out, err, depth); break;
    }
  }
  if (rc) out->release(out);
  return rc;
}

int lnc_arrow_gather_multi(const struct ArrowSchema *schema, const struct ArrowArray *const *parts,
                           size_t nparts, const struct lnc_row_ref *refs, size_t n,
                           struct ArrowArray *out, struct lnc_error *err) {
  if (nparts > UINT32_MAX) return lnc_errf(err, LNC_EINVAL, "arrow: too many parts");
  return gather(schema, parts, nparts, refs, n, out, err, 0);
}

int lnc_arrow_concat(const struct ArrowSchema *schema, const struct ArrowArray *const *parts,
                     size_t nparts, struct ArrowArray *out, struct lnc_error *err) {
  uint64_t total = 0;
  for (size_t i = 0; i < nparts; i++) {
    if (!parts[i] || parts[i]->length < 0)
      return lnc_errf(err, LNC_EINVAL, "arrow: concat part %zu is invalid", i);
    total += (uint64_t)parts[i]->length;
  }
  if (total > SIZE_MAX / sizeof(struct lnc_row_ref))
    return lnc_errf(err, LNC_ELIMIT, "arrow: concat of %llu rows", (unsigned long long)total);
  struct lnc_row_ref *refs = malloc((size_t)(total ? total : 1) * sizeof *refs);
  if (!refs) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  size_t k = 0;
  for (size_t i = 0; i < nparts; i++)
    for (int64_t r = 0; r < parts[i]->length; r++) refs[k++] = (struct lnc_row_ref){(uint32_t)i, (uint64_t)r};
  int rc = lnc_arrow_gather_multi(schema, parts, nparts, refs, k, out, err);
  free(refs);
  return rc;
}

int lnc_arrow_gather(const struct ArrowSchema *schema, const struct ArrowArray *src,
                     const uint64_t *idx, size_t n, struct ArrowArray *out,
                     struct lnc_error *err) {
  struct lnc_row_ref *refs = malloc((n ? n : 1) * sizeof *refs);
  if (!refs) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  for (size_t i = 0; i < n; i++) refs[i] = (struct lnc_row_ref){0, idx[i]};
  int rc = lnc_arrow_gather_multi(schema, &src, 1, refs, n, out, err);
  free(refs);
  return rc;
}

/* ---- all-null arrays ------------------------------------------------------------------ */
static int nulls(const struct ArrowSchema *s, uint64_t n, struct ArrowArray *out,
                 struct lnc_error *err, int depth) {
  struct ktype t;
  int rc;
  if (depth > MAX_DEPTH) return lnc_errf(err, LNC_EUNSUPPORTED, "arrow: nesting too deep");
  if ((rc = classify(s, &t, err))) return rc;
  int64_t nk = t.kind == K_STRUCT                                              ? s->n_children
               : (t.kind == K_LIST32 || t.kind == K_LIST64 || t.kind == K_FSL) ? 1
                                                                               : 0;
  if (nk != s->n_children)
    return lnc_errf(err, LNC_EINVAL, "arrow: schema '%s' has the wrong number of children",
                    s->format);
  if (n > ((uint64_t)1 << 40)) return lnc_errf(err, LNC_ELIMIT, "arrow: too many rows");
  int nb = n_buffers_of(t.kind);
  if (lnc_array_init(out, (int64_t)n, 0, nb, nk)) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  out->null_count = (int64_t)n;
  if (nb > 0 && !arr_buf(out, 0, (size_t)(n + 7) / 8)) goto oom;
  switch (t.kind) {
  case K_NULL:
  case K_STRUCT:
  case K_FSL: break;
  case K_BOOL:
    if (!arr_buf(out, 1, (size_t)(n + 7) / 8)) goto oom;
    break;
  case K_FIXED:
    if (!arr_buf(out, 1, (size_t)(n * (uint64_t)t.width))) goto oom;
    break;
  case K_VAR32:
  case K_VAR64:
    if (!arr_buf(out, 1, (size_t)(n + 1) * (t.kind == K_VAR64 ? 8 : 4)) || !arr_buf(out, 2, 0))
      goto oom;
    break;
  case K_LIST32:
  case K_LIST64:
    if (!arr_buf(out, 1, (size_t)(n + 1) * (t.kind == K_LIST64 ? 8 : 4))) goto oom;
    break;
  }
  for (int64_t c = 0; c < nk; c++) {
    uint64_t cn = t.kind == K_STRUCT ? n : t.kind == K_FSL ? n * (uint64_t)t.width
                                                           : 0;
    if ((rc = nulls(s->children[c], cn, out->children[c], err, depth + 1))) {
      out->release(out);
      return rc;
    }
  }
  if (s->dictionary) { /* null indices into an empty dictionary */
    if (!(out->dictionary = calloc(1, sizeof *out->dictionary))) goto oom;
    if ((rc = nulls(s->dictionary, 0, out->dictionary, err, depth + 1))) {
      out->release(out);
      return rc;
    }
  }
  return 0;
oom:
  out->release(out);
  return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
}

int lnc_arrow_make_nulls(const struct ArrowSchema *schema, uint64_t n, struct ArrowArray *out,
                         struct lnc_error *err) {
  return nulls(schema, n, out, err, 0);
}

/* ---- schema copies -------------------------------------------------------------------- */
struct sch_priv {
  char *format, *name, *metadata;
  struct ArrowSchema *kids;
  struct ArrowSchema *dict;
  struct ArrowSchema *kidptr[];
};

static void sch_release(struct ArrowSchema *s) {
  struct sch_priv *p = s->private_data;
  if (p) {
    for (int64_t i = 0; i < s->n_children; i++)
      if (p->kids[i].release) p->kids[i].release(&p->kids[i]);
    if (p->dict && p->dict->release) p->dict->release(p->dict);
    free(p->dict);
    free(p->kids);
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p);
  }
  s->release = NULL;
}

static size_t metadata_len(const char *m) {
  int32_t n, k;
  size_t pos = 4;
  memcpy(&n, m, 4);
  for (int32_t i = 0; i < n; i++) {
    memcpy(&k, m + pos, 4); /* key */
    pos += 4 + (size_t)k;
    memcpy(&k, m + pos, 4); /* value */
    pos += 4 + (size_t)k;
  }
  return pos;
}

static int schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out,
                       struct lnc_error *err, int depth) {
  memset(out, 0, sizeof *out);
  if (depth > MAX_DEPTH) return lnc_errf(err, LNC_EUNSUPPORTED, "arrow: nesting too deep");
  if (src->n_children < 0 || (src->n_children > 0 && !src->children))
    return lnc_errf(err, LNC_EINVAL, "arrow: schema with bad children");
  struct sch_priv *p = calloc(1, sizeof *p + (size_t)src->n_children * sizeof(struct ArrowSchema *));
  if (!p) return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  out->private_data = p;
  out->release = sch_release;
  out->flags = src->flags;
  p->format = strdup(src->format ? src->format : "");
  p->name = src->name ? strdup(src->name) : NULL;
  if (!p->format || (src->name && !p->name)) goto oom;
  if (src->metadata) {
    size_t ml = metadata_len(src->metadata);
    if (!(p->metadata = malloc(ml))) goto oom;
    memcpy(p->metadata, src->metadata, ml);
  }
  out->format = p->format;
  out->name = p->name;
  out->metadata = p->metadata;
  if (src->n_children > 0) {
    if (!(p->kids = calloc((size_t)src->n_children, sizeof *p->kids))) goto oom;
    out->children = p->kidptr;
  }
  for (int64_t i = 0; i < src->n_children; i++) {
    p->kidptr[i] = &p->kids[i];
    out->n_children = i + 1;
    int rc = schema_copy(src->children[i], &p->kids[i], err, depth + 1);
    if (rc) {
      out->release(out);
      return rc;
    }
  }
  if (src->dictionary) {
    if (!(p->dict = calloc(1, sizeof *p->dict))) goto oom;
    int rc = schema_copy(src->dictionary, p->dict, err, depth + 1);
    if (rc) {
      out->release(out);
      return rc;
    }
    out->dictionary = p->dict;
  }
  return 0;
oom:
  out->release(out);
  return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
}

int lnc_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out,
                          struct lnc_error *err) {
  return schema_copy(src, out, err, 0);
}

int lnc_arrow_struct_wrap(size_t n, struct ArrowSchema *child_schemas,
                          struct ArrowArray *child_arrays, int64_t length,
                          struct ArrowSchema *schema, struct ArrowArray *array,
                          struct lnc_error *err) {
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  struct sch_priv *sp = calloc(1, sizeof *sp + n * sizeof(struct ArrowSchema *));
  struct ArrowSchema *skids = calloc(n ? n : 1, sizeof *skids);
  char *fmt = strdup("+s"), *name = strdup("");
  if (!sp || !skids || !fmt || !name || lnc_array_init(array, length, 0, 1, (int64_t)n)) {
    free(sp);
    free(skids);
    free(fmt);
    free(name);
    for (size_t i = 0; i < n; i++) {
      if (child_schemas[i].release) child_schemas[i].release(&child_schemas[i]);
      if (child_arrays[i].release) child_arrays[i].release(&child_arrays[i]);
    }
    return lnc_errf(err, LNC_ENOMEM, "arrow: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    skids[i] = child_schemas[i];
    child_schemas[i].release = NULL;
    sp->kidptr[i] = &skids[i];
    *array->children[i] = child_arrays[i];
    child_arrays[i].release = NULL;
  }
  sp->kids = skids;
  sp->format = fmt;
  sp->name = name;
  schema->format = fmt;
  schema->name = name;
  schema->n_children = (int64_t)n;
  schema->children = n ? sp->kidptr : NULL;
  schema->private_data = sp;
  schema->release = sch_release;
  return 0;
}
