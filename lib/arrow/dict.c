/* Dictionary-encoding an array liblance built: a field whose Lance logical type is
 * `dict:<value>:<index>:<ordered>` is stored as its values (the writer unpacks the Arrow
 * dictionary), and Lance's reader hands it back as Dictionary<index, value>; so does lanced.
 * The dictionary holds the distinct values of the rows taken, in first-seen order (Lance's
 * own answer may carry a larger dictionary; the values of every row are the same). */
#include "dict.h"
#include "builder.h"
#include "format.h"
#include "../util/error.h"
#include "../util/hash.h"
#include <stdlib.h>
#include <string.h>


struct vals { /* the value array, read-only */
  const uint8_t *valid;
  const uint8_t *data;
  const int32_t *off32;
  const int64_t *off64;
  size_t width; /* fixed-width values: bytes each; 0 = variable */
};

static void value_at(const struct vals *v, int64_t i, const uint8_t **p, size_t *n) {
  if (v->width) {
    *p = v->data + (size_t)i * v->width;
    *n = v->width;
    return;
  }
  int64_t a = v->off32 ? v->off32[i] : v->off64[i], b = v->off32 ? v->off32[i + 1] : v->off64[i + 1];
  *p = v->data + a;
  *n = (size_t)(b - a);
}

static bool valid_at(const struct vals *v, int64_t i) {
  return !v->valid || ((v->valid[i >> 3] >> (i & 7)) & 1);
}

/* Largest index the Arrow index type can hold. */
static int64_t index_max(const struct lnc_atype_info *t) {
  if (t->bits == 64) return t->is_signed ? INT64_MAX : INT64_MAX; /* lengths are int64 anyway */
  return t->is_signed ? ((int64_t)1 << (t->bits - 1)) - 1 : ((int64_t)1 << t->bits) - 1;
}

/* Builds the dictionary array from the distinct values (first rows holding them). */
static int build_dictionary(const struct vals *v, const int64_t *first, int64_t nd, bool large,
                            struct ArrowArray *d) {
  size_t bytes = 0;
  for (int64_t k = 0; k < nd; k++) {
    const uint8_t *p;
    size_t n;
    value_at(v, first[k], &p, &n);
    bytes += n;
  }
  if (lnc_array_init(d, nd, 0, v->width ? 2 : 3, 0)) return LNC_ENOMEM;
  uint8_t *data = malloc(bytes ? bytes : 1);
  void *offs = v->width ? NULL : malloc((size_t)(nd + 1) * (large ? 8 : 4));
  if (!data || (!v->width && !offs)) {
    free(data);
    free(offs);
    return LNC_ENOMEM;
  }
  size_t at = 0;
  for (int64_t k = 0; k < nd; k++) {
    const uint8_t *p;
    size_t n;
    value_at(v, first[k], &p, &n);
    if (offs) {
      if (large)
        ((int64_t *)offs)[k] = (int64_t)at;
      else
        ((int32_t *)offs)[k] = (int32_t)at;
    }
    if (n) memcpy(data + at, p, n);
    at += n;
  }
  if (offs) {
    if (large)
      ((int64_t *)offs)[nd] = (int64_t)at;
    else
      ((int32_t *)offs)[nd] = (int32_t)at;
    lnc_array_set_buffer(d, 1, offs);
    lnc_array_set_buffer(d, 2, data);
  } else {
    lnc_array_set_buffer(d, 1, data);
  }
  return 0;
}

int lnc_dict_encode(struct ArrowArray *arr, const char *value_format, const char *index_format,
                    struct lnc_error *err) {
  struct lnc_atype_info vt, it;
  int rc = lnc_arrow_parse_format(value_format, &vt, err);
  if (!rc) rc = lnc_arrow_parse_format(index_format, &it, err);
  if (rc) return rc;
  if (it.kind != LNC_AT_INT) return lnc_errf(err, LNC_EUNSUPPORTED, "dictionary index type '%s' is not an integer", index_format);
  bool large = vt.kind == LNC_AT_LARGE_BINARY || vt.kind == LNC_AT_LARGE_UTF8;
  struct vals v = {.valid = arr->buffers[0]};
  if (vt.kind == LNC_AT_BINARY || vt.kind == LNC_AT_UTF8 || large) {
    v.data = arr->buffers[2];
    if (large)
      v.off64 = arr->buffers[1];
    else
      v.off32 = arr->buffers[1];
  } else if (vt.kind != LNC_AT_BOOL && vt.kind != LNC_AT_NULL && vt.kind < LNC_AT_LIST && vt.bits > 0 && vt.bits % 8 == 0) {
    v.data = arr->buffers[1];
    v.width = (size_t)vt.bits / 8;
  } else {
    return lnc_errf(err, LNC_EUNSUPPORTED, "dictionary of '%s' values", value_format);
  }
  if (arr->offset != 0) return lnc_errf(err, LNC_EINTERNAL, "dictionary-encoding a sliced array");
  int64_t n = arr->length;
  size_t cap = 16;
  while (cap < (size_t)n * 2) cap *= 2;
  int64_t *slot = malloc(cap * sizeof *slot);                   /* unique id + 1, 0 = empty */
  int64_t *first = malloc((size_t)(n ? n : 1) * sizeof *first); /* row of each unique value */
  int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
  if (!slot || !first || !idx) {
    rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    goto done;
  }
  memset(slot, 0, cap * sizeof *slot);
  int64_t nd = 0;
  for (int64_t i = 0; i < n; i++) {
    idx[i] = 0;
    if (!valid_at(&v, i)) continue;
    const uint8_t *p;
    size_t len;
    value_at(&v, i, &p, &len);
    size_t h = (size_t)lnc_fnv1a(p, len) & (cap - 1);
    for (;; h = (h + 1) & (cap - 1)) {
      if (!slot[h]) {
        first[nd] = i;
        slot[h] = ++nd;
        break;
      }
      const uint8_t *q;
      size_t ql;
      value_at(&v, first[slot[h] - 1], &q, &ql);
      if (ql == len && memcmp(p, q, len) == 0) break;
    }
    idx[i] = slot[h] - 1;
  }
  if (nd - 1 > index_max(&it)) {
    rc = lnc_errf(err, LNC_EUNSUPPORTED, "%lld distinct values do not fit dictionary index type '%s'",
                  (long long)nd, index_format);
    goto done;
  }
  struct ArrowArray *d = calloc(1, sizeof *d);
  struct ArrowArray ia;
  if (!d || build_dictionary(&v, first, nd, large, d)) {
    free(d);
    rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    goto done;
  }
  if (lnc_array_init(&ia, n, arr->null_count, 2, 0)) {
    d->release(d);
    free(d);
    rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    goto done;
  }
  ia.dictionary = d;
  size_t w = (size_t)it.bits / 8;
  uint8_t *ib = calloc((size_t)(n ? n : 1), w);
  uint8_t *vb = NULL;
  if (v.valid) {
    vb = malloc((size_t)(n + 7) / 8 + 1);
    if (vb) memcpy(vb, v.valid, (size_t)(n + 7) / 8);
  }
  if (!ib || (v.valid && !vb)) {
    free(ib);
    free(vb);
    ia.release(&ia);
    rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    goto done;
  }
  for (int64_t i = 0; i < n; i++) memcpy(ib + (size_t)i * w, &idx[i], w); /* little-endian host */
  lnc_array_set_buffer(&ia, 0, vb);
  lnc_array_set_buffer(&ia, 1, ib);
  arr->release(arr);
  *arr = ia;
done:
  free(slot);
  free(first);
  free(idx);
  return rc;
}
