/* File version 2.0 takes: the ArrayEncoding tree interpreted for a few positions at a time,
 * driven in read rounds. See v20.h for the shape and docs lance-format-v20.md for the bytes.
 *
 * How the rounds work: a job's walk over its rows is a pure function of the bytes it has
 * fetched so far. Each round runs the walk; every range it needs and does not have yet is
 * noted (and the part of the walk that depends on it skipped), and the round's reads are all
 * the notes of all rows. The next round runs the walk again with those bytes present and goes
 * one dependent step further (list offsets -> item positions -> binary ends -> bytes). When a
 * walk completes without a note, the final walk appends the rows. Re-running the walk costs a
 * little CPU per round for a handful of values; it keeps the decoders straight-line code
 * instead of a state machine per encoding. */
#include "v20.h"
#include "../encoding/encoding.h"
#include "../arrow/format.h"
#include "../util/buf.h"
#include "../util/error.h"
#include "../util/mem.h"
#include "../util/assert.h"
#include "lance/encodings20.pb-c.h"
#include "lance/file2.pb-c.h"
#include <stdlib.h>
#include <string.h>

typedef Lance__Encodings__ArrayEncoding enc20;

/* A walk returns 0, an LNC_E* code, or V20_MISS: bytes it needs are not fetched yet. */
#define V20_MISS (-1)
/* Deepest ArrayEncoding nesting accepted (Lance writes at most ~5: Nullable, FSL, Nullable,
 * Flat); bounds the recursion on a damaged file. */
#define V20_MAX_DEPTH 16
/* Items one decode may produce; see dec(). */
#define V20_MAX_ITEMS (UINT64_C(1) << 32)
/* Dictionaries larger than this many items are refused (Lance 2.0 writes u8 indices). */
#define V20_MAX_DICT_ITEMS (1u << 24)

/* ---- per-page state ------------------------------------------------------------------- */

struct v20_dict {
  const enc20 *enc;        /* the Dictionary node this belongs to */
  struct lnc_values items; /* decoded items, owned (data/offsets malloc'd) */
  uint8_t *valid;          /* item validity (owned), NULL = all valid; an all-null page is
                                written as one null item with every index 0 */
};

struct v20_page {
  enc20 *enc;                     /* parsed tree (protobuf-c owned); NULL in a legacy file */
  uint64_t item_base;             /* list pages: column-global index of the page's first item */
  uint64_t num_items;             /* legacy list pages: items the page's lists hold */
  const struct lnc_field *legacy; /* legacy file: the field whose batch this page is */
  struct v20_dict *dicts;         /* search-cache state: decoded dictionaries */
  size_t n_dicts;
};

static struct v20_page *P(const struct lnc_page *pg) { return (struct v20_page *)pg->enc20; }

static void dicts_free(struct v20_page *s) {
  for (size_t i = 0; i < s->n_dicts; i++) {
    free((void *)s->dicts[i].items.data);
    free((void *)s->dicts[i].items.offsets);
    free(s->dicts[i].valid);
  }
  free(s->dicts);
  s->dicts = NULL;
  s->n_dicts = 0;
}

static void v20_free_page(struct lnc_page *pg) {
  struct v20_page *s = P(pg);
  if (!s) return;
  dicts_free(s);
  if (s->enc) lance__encodings__array_encoding__free_unpacked(s->enc, NULL);
  free(s);
  pg->enc20 = NULL;
}

int lnc_v20_parse_page(struct lnc_file *f, uint32_t col, uint32_t page, const uint8_t *data,
                       size_t len, struct lnc_error *err) {
  struct lnc_page *pg = &f->columns[col].pages[page];
  struct v20_page *s = calloc(1, sizeof *s);
  if (!s) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  pg->enc20 = s;
  pg->free_enc20 = v20_free_page;
  pg->kind = LNC_LAYOUT_V20;
  s->enc = lnc_pb_unpack(&lance__encodings__array_encoding__descriptor, data, len);
  if (!s->enc)
    return lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %u: ArrayEncoding does not parse (or nests over %d levels)",
                    f->name, col, page, LNC_PB_MAX_DEPTH);
  return 0;
}

/* ---- walking the field path ----------------------------------------------------------- */

/* Column-global position -> page of column col (binary search over row_start). */
static int find_page(struct lnc_file *f, uint32_t col, uint64_t pos, uint32_t *page) {
  const struct lnc_column *c = &f->columns[col];
  uint32_t lo = 0, hi = c->n_pages;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (c->pages[mid].row_start + c->pages[mid].rows <= pos)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo >= c->n_pages || pos < c->pages[lo].row_start) return LNC_ECORRUPT;
  *page = lo;
  return 0;
}

/* A legacy file's pages carry no encoding: what a page holds follows from its field's type
 * (docs/legacy-format.md), so each gets the state the walk reads, and each list page its
 * items, which are its child's page of the same batch (the format floor checked the counts). */
static int legacy_link(struct lnc_file *f, struct lnc_error *err) {
  for (size_t i = 0; i < f->n_all_fields; i++) {
    const struct lnc_field *fld = f->all_fields[i];
    if (fld->col20 < 0) continue;
    struct lnc_column *c = &f->columns[fld->col20];
    const struct lnc_column *items = lnc_kind_is_list(fld->type) && fld->n_children && fld->children[0]->col20 >= 0
                                         ? &f->columns[fld->children[0]->col20]
                                         : NULL;
    for (uint32_t p = 0; p < c->n_pages; p++) {
      struct lnc_page *pg = &c->pages[p];
      struct v20_page *s = calloc(1, sizeof *s);
      if (!s) return lnc_errf(err, LNC_ENOMEM, "out of memory");
      pg->enc20 = s;
      pg->free_enc20 = v20_free_page;
      s->legacy = fld;
      if (items && p < items->n_pages) {
        s->item_base = items->pages[p].row_start;
        s->num_items = items->pages[p].rows;
      }
    }
  }
  return 0;
}

int lnc_v20_link(struct lnc_file *f, struct lnc_error *err) {
  if (f->legacy) return legacy_link(f, err);
  for (size_t i = 0; i < f->n_all_fields; i++) {
    const struct lnc_field *fld = f->all_fields[i];
    if (fld->col20 < 0 || lnc_schema_unsupported(fld)) continue; /* served by no take */
    struct lnc_column *c = &f->columns[fld->col20];
    bool list = lnc_kind_is_list(fld->type);
    uint64_t items = 0;
    for (uint32_t p = 0; p < c->n_pages; p++) {
      struct v20_page *s = P(&c->pages[p]);
      if (!s) return lnc_errf(err, LNC_ECORRUPT, "%s: column %d page %u has no 2.0 encoding", f->name, fld->col20, p);
      bool is_list = s->enc->array_encoding_case == LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_LIST;
      if (is_list != list)
        return lnc_errf(err, LNC_ECORRUPT, "%s: column %d (%s) page %u: %s encoding for a field of type %s",
                        f->name, fld->col20, fld->name, p, is_list ? "a list" : "a non-list", fld->logical_type);
      if (!list) continue;
      s->item_base = items;
      uint64_t k = s->enc->list->num_items;
      if (k > UINT64_MAX / 2 - items) return lnc_errf(err, LNC_ECORRUPT, "%s: column %d: item count overflows", f->name, fld->col20);
      items += k;
    }
    /* Rows of each column: the top level has the file's rows; below a list, the list's items;
     * below a struct, the struct's rows (every field has its column in 2.0). */
    uint64_t rows = 0;
    for (uint32_t p = 0; p < c->n_pages; p++) rows += c->pages[p].rows;
    uint64_t want = f->num_rows;
    const struct lnc_field *par = fld->parent;
    if (par && par->col20 >= 0) {
      const struct lnc_column *pc = &f->columns[par->col20];
      want = 0;
      for (uint32_t p = 0; p < pc->n_pages; p++)
        want += lnc_kind_is_list(par->type) ? P(&pc->pages[p])->enc->list->num_items
                                            : pc->pages[p].rows;
    }
    if (rows != want)
      return lnc_errf(err, LNC_ECORRUPT, "%s: column %d (%s) holds %llu values, its parent needs %llu", f->name,
                      fld->col20, fld->name, (unsigned long long)rows, (unsigned long long)want);
  }
  return 0;
}

/* ---- fetching bytes: the rounds' memo ------------------------------------------------- */

struct v20_have {
  uint64_t off, len;
  const uint8_t *data;
};
struct v20_dz {
  uint64_t off;
  struct lnc_slice out;
};

struct v20_job {
  struct v20_have *have; /* fetched ranges, sorted by off */
  size_t nhave, cap_have;
  struct lnc_read *want; /* this walk's misses (file offsets) */
  size_t nwant, cap_want;
  struct v20_dz *dz; /* whole compressed buffers, decompressed once per take */
  size_t ndz, cap_dz;
  struct lnc_arena *arena;
  struct lnc_take_ctx *c;
  bool done; /* a walk completed: the rows are in the job's output */
};


static const uint8_t *have_find(const struct v20_job *J, uint64_t off, uint64_t len) {
  size_t lo = 0, hi = J->nhave;
  while (lo < hi) { /* first entry with off > off */
    size_t mid = lo + (hi - lo) / 2;
    if (J->have[mid].off <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* Ranges may overlap (merged reads of different rounds): look back a few entries. */
  for (size_t k = lo, tries = 0; k-- > 0 && tries < 8; tries++) {
    const struct v20_have *h = &J->have[k];
    if (h->off <= off && off + len <= h->off + h->len) return h->data + (off - h->off);
  }
  return NULL;
}

/* Bytes [off, off+len) of buffer b of page pg, or NULL with the range noted (V20_MISS). */
static int fetch(struct v20_job *J, const struct lnc_page *pg, uint32_t b, uint64_t off, uint64_t len,
                 const uint8_t **out) {
  struct lnc_take_ctx *c = J->c;
  if (b >= pg->n_buffers)
    return lnc_page_err(c, LNC_ECORRUPT, "encoding names buffer %u of %u", b, pg->n_buffers);
  if (off > pg->buf_len[b] || len > pg->buf_len[b] - off)
    return lnc_page_err(c, LNC_ECORRUPT, "range [%llu, +%llu) is outside buffer %u (%llu bytes)",
                        (unsigned long long)off, (unsigned long long)len, b, (unsigned long long)pg->buf_len[b]);
  uint64_t abs = pg->buf_off[b] + off;
  static const uint8_t empty[1];
  if (len == 0) {
    *out = empty;
    return 0;
  }
  const uint8_t *p = have_find(J, abs, len);
  if (p) {
    *out = p;
    return 0;
  }
  if (lnc_grow_array((void **)&J->want, &J->cap_want, J->nwant + 1, sizeof *J->want))
    return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  J->want[J->nwant++] = (struct lnc_read){.off = abs, .len = len};
  *out = NULL;
  return V20_MISS;
}

static int by_off(const void *a, const void *b) {
  const struct lnc_read *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}
static int have_by_off(const void *a, const void *b) {
  const struct v20_have *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* Reads closer than this are merged into one: a 2.0 value is a few bytes at its own offset,
 * so a batch of rows is many tiny ranges, and one system call (or one io_uring entry) for a
 * page's worth of neighbours costs less than one each. One 4 KiB block, as the device reads. */
#define V20_MERGE_GAP 4096

/* Turns the walk's misses into this round's reads: sorted, close ranges merged. */
static int want_to_reads(struct v20_job *J, struct lnc_read **reads, size_t *nreads) {
  *reads = NULL;
  *nreads = 0;
  if (!J->nwant) return 0;
  qsort(J->want, J->nwant, sizeof *J->want, by_off);
  size_t n = 0;
  for (size_t i = 0; i < J->nwant; i++) {
    struct lnc_read *r = &J->want[i];
    if (n && r->off <= J->want[n - 1].off + J->want[n - 1].len + V20_MERGE_GAP) {
      uint64_t end = r->off + r->len;
      if (end > J->want[n - 1].off + J->want[n - 1].len) J->want[n - 1].len = end - J->want[n - 1].off;
    } else {
      J->want[n++] = *r;
    }
  }
  struct lnc_read *out = lnc_arena_alloc(J->arena, n * sizeof *out);
  if (!out) return LNC_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    out[i] = J->want[i];
    if (!(out[i].dst = lnc_arena_alloc(J->arena, out[i].len))) return LNC_ENOMEM;
  }
  J->nwant = 0;
  *reads = out;
  *nreads = n;
  return 0;
}

static int reads_to_have(struct v20_job *J, const struct lnc_read *r, size_t n) {
  if (lnc_grow_array((void **)&J->have, &J->cap_have, J->nhave + n, sizeof *J->have)) return LNC_ENOMEM;
  for (size_t i = 0; i < n; i++) J->have[J->nhave++] = (struct v20_have){r[i].off, r[i].len, r[i].dst};
  qsort(J->have, J->nhave, sizeof *J->have, have_by_off);
  return 0;
}

/* ---- the ArrayEncoding interpreter ----------------------------------------------------- */

/* count values starting at page-local position start; valid: count bits, NULL = all valid.
 * Values of null slots are unspecified (kind 0 when every slot is null). */
struct v20_out {
  struct lnc_values v;
  const uint8_t *valid;
};

struct v20_at {
  struct v20_job *J;
  const struct lnc_page *pg;
  bool variable; /* the leaf's values are variable-width (strings, binaries) */
};

static int dec(struct v20_at *A, const enc20 *e, uint64_t start, uint64_t count, struct v20_out *o, int depth);

static void *aalloc(struct v20_at *A, size_t n) { return lnc_arena_alloc(A->J->arena, n ? n : 1); }

static int oom(struct v20_at *A) { return lnc_page_err(A->J->c, LNC_ENOMEM, "out of memory"); }

static int bad(struct v20_at *A, const char *what) { return lnc_page_err(A->J->c, LNC_ECORRUPT, "%s", what); }

/* Marks value i of count null in *valid, which is made (every value valid) at the first null;
 * LNC_ENOMEM when it cannot be. */
static int set_null(struct v20_at *A, uint8_t **valid, uint64_t count, uint64_t i) {
  if (!*valid) {
    if (!(*valid = aalloc(A, (size_t)((count + 7) / 8)))) return LNC_ENOMEM;
    memset(*valid, 0xff, (size_t)((count + 7) / 8));
  }
  (*valid)[i >> 3] &= (uint8_t) ~(1u << (i & 7));
  return 0;
}

/* count values, every one null (no value bytes). */
static int all_null(struct v20_at *A, uint64_t count, struct v20_out *o) {
  uint8_t *z = aalloc(A, (size_t)((count + 7) / 8));
  if (!z) return oom(A);
  memset(z, 0, (size_t)((count + 7) / 8));
  o->v = (struct lnc_values){.n = count};
  o->valid = z;
  return 0;
}

static uint32_t page_buffer(const Lance__Encodings__Buffer *b) { return b ? b->buffer_index : 0; }

static int buffer_located(struct v20_at *A, const Lance__Encodings__Buffer *b) {
  if (b && b->buffer_type != LANCE__ENCODINGS__BUFFER__BUFFER_TYPE__page)
    return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "a buffer stored in the %s metadata (Lance writes page buffers only)",
                        b->buffer_type == LANCE__ENCODINGS__BUFFER__BUFFER_TYPE__column ? "column" : "file");
  return 0;
}

/* Copies bits [from, from+n) of src into a fresh bitmap starting at bit 0. */
static uint8_t *bits_copy(struct v20_at *A, const uint8_t *src, uint64_t from, uint64_t n) {
  uint8_t *d = aalloc(A, (size_t)((n + 7) / 8));
  if (!d) return NULL;
  memset(d, 0, (size_t)((n + 7) / 8));
  for (uint64_t i = 0; i < n; i++) {
    uint64_t s = from + i;
    if ((src[s >> 3] >> (s & 7)) & 1) d[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  return d;
}

/* A whole compressed buffer, decompressed once per take (or once at prepare). */
static int whole_buffer(struct v20_at *A, uint32_t b, const char *scheme, struct lnc_slice *out) {
  struct v20_job *J = A->J;
  const struct lnc_page *pg = A->pg;
  if (b >= pg->n_buffers) return bad(A, "compressed buffer index out of range");
  uint64_t abs = pg->buf_off[b];
  for (size_t i = 0; i < J->ndz; i++)
    if (J->dz[i].off == abs) {
      *out = J->dz[i].out;
      return 0;
    }
  int sch = strcmp(scheme, "lz4") == 0 ? 1 : strcmp(scheme, "zstd") == 0 ? 2
                                                                         : 0;
  if (!sch) return lnc_page_err(J->c, LNC_EUNSUPPORTED, "compression scheme '%s'", scheme);
  const uint8_t *p;
  int rc = fetch(J, pg, b, 0, pg->buf_len[b], &p);
  if (rc) return rc;
  struct lnc_slice in = {p, (size_t)pg->buf_len[b]};
  if ((rc = lnc_enc_decompress(sch, in, J->arena, out, J->c->err))) return lnc_page_err(J->c, rc, "%s", J->c->err ? J->c->err->message : "decompression failed");
  if (lnc_grow_array((void **)&J->dz, &J->cap_dz, J->ndz + 1, sizeof *J->dz)) return oom(A);
  J->dz[J->ndz++] = (struct v20_dz){abs, *out};
  return 0;
}

static bool compressed(const Lance__Encodings__Flat *fl) {
  return fl->compression && fl->compression->scheme && fl->compression->scheme[0] &&
         strcmp(fl->compression->scheme, "none") != 0;
}

static int dec_flat(struct v20_at *A, const Lance__Encodings__Flat *fl, uint64_t start, uint64_t count,
                    struct v20_out *o) {
  int rc = buffer_located(A, fl->buffer);
  if (rc) return rc;
  uint64_t bits = fl->bits_per_value;
  if (bits == 0 || (bits != 1 && bits % 8) || bits > 8 * 4096)
    return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "Flat with %llu bits per value", (unsigned long long)bits);
  if (start > UINT64_MAX / bits || count > UINT64_MAX / bits - start) return bad(A, "Flat range overflows");
  uint64_t from = bits == 1 ? start / 8 : start * bits / 8;
  uint64_t to = bits == 1 ? (start + count + 7) / 8 : (start + count) * bits / 8;
  const uint8_t *p;
  uint32_t b = page_buffer(fl->buffer);
  if (compressed(fl)) {
    struct lnc_slice whole;
    if ((rc = whole_buffer(A, b, fl->compression->scheme, &whole))) return rc;
    if (to > whole.len) return bad(A, "Flat range is past the decompressed buffer");
    p = whole.p + from;
  } else if ((rc = fetch(A->J, A->pg, b, from, to - from, &p))) {
    return rc;
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)bits, .data = p, .data_len = (size_t)(to - from)};
  if (bits == 1 && start % 8) {
    uint8_t *d = bits_copy(A, p, start % 8, count);
    if (!d) return oom(A);
    o->v.data = d;
    o->v.data_len = (size_t)((count + 7) / 8);
  }
  return 0;
}

/* Reads value i of fixed values as an unsigned integer (widths 8..64). */
static uint64_t fixed_u64(const struct lnc_values *v, uint64_t i) {
  unsigned w = v->bits / 8;
  return lnc_rdw(v->data + i * w, w > 8 ? 8 : w);
}

static bool int_width(uint32_t bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

static int dec_nullable(struct v20_at *A, const Lance__Encodings__Nullable *nl, uint64_t start, uint64_t count,
                        struct v20_out *o, int depth) {
  switch (nl->nullability_case) {
  case LANCE__ENCODINGS__NULLABLE__NULLABILITY_NO_NULLS:
    if (!nl->no_nulls->values) return bad(A, "Nullable(no_nulls) without values");
    return dec(A, nl->no_nulls->values, start, count, o, depth + 1);
  case LANCE__ENCODINGS__NULLABLE__NULLABILITY_ALL_NULLS:
    return all_null(A, count, o);
  case LANCE__ENCODINGS__NULLABLE__NULLABILITY_SOME_NULLS: {
    const Lance__Encodings__Nullable__SomeNull *sn = nl->some_nulls;
    if (!sn->validity || !sn->values) return bad(A, "Nullable(some_nulls) without validity or values");
    struct v20_out vo = {0};
    /* Both children are tried so their reads land in the same round. */
    int r1 = dec(A, sn->validity, start, count, &vo, depth + 1);
    int r2 = dec(A, sn->values, start, count, o, depth + 1);
    if (r1 > 0) return r1;
    if (r2 > 0) return r2;
    if (r1 || r2) return V20_MISS;
    if (vo.v.kind != LNC_VALUES_FIXED || vo.v.bits != 1) return bad(A, "validity is not a bitmap");
    if (o->valid) { /* values with nulls of their own (a dictionary's index 0): both must hold */
      uint8_t *both = aalloc(A, (size_t)((count + 7) / 8));
      if (!both) return oom(A);
      for (size_t i = 0; i < (size_t)((count + 7) / 8); i++) both[i] = vo.v.data[i] & o->valid[i];
      o->valid = both;
    } else {
      o->valid = vo.v.data;
    }
    return 0;
  }
  default:
    return bad(A, "Nullable without a case");
  }
}

/* Binary: end offsets (null_adjustment marks nulls) and the bytes between them. */
static int dec_binary(struct v20_at *A, const Lance__Encodings__Binary *bn, uint64_t start, uint64_t count,
                      struct v20_out *o, int depth) {
  if (!bn->indices || !bn->bytes) return bad(A, "Binary without indices or bytes");
  struct v20_out io = {0};
  uint64_t first = start ? start - 1 : 0, n = count + (start ? 1 : 0);
  int rc = dec(A, bn->indices, first, n, &io, depth + 1);
  if (rc) return rc;
  if (io.v.kind != LNC_VALUES_FIXED || !int_width(io.v.bits)) return bad(A, "Binary indices are not integers");
  uint64_t adj = bn->null_adjustment;
  uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
  uint8_t *valid = NULL;
  if (!off) return oom(A);
  uint64_t prev = 0;
  if (start) {
    prev = fixed_u64(&io.v, 0);
    if (adj && prev >= adj) prev -= adj;
  }
  uint64_t base = prev;
  off[0] = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t e = fixed_u64(&io.v, i + (start ? 1 : 0));
    bool ok = !(adj && e >= adj);
    if (!ok) {
      e -= adj;
      if (set_null(A, &valid, count, i)) return oom(A);
    }
    if (e < prev) return bad(A, "Binary end offsets decrease");
    off[i + 1] = e - base;
    prev = e;
  }
  struct v20_out bo = {0};
  if ((rc = dec(A, bn->bytes, base, prev - base, &bo, depth + 1))) return rc;
  if (prev > base && (bo.v.kind != LNC_VALUES_FIXED || bo.v.bits != 8)) return bad(A, "Binary bytes are not bytes");
  o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = bo.v.data, .data_len = (size_t)(prev - base), .offsets = off};
  o->valid = valid;
  return 0;
}

static int dec_fsst(struct v20_at *A, const Lance__Encodings__Fsst *fs, uint64_t start, uint64_t count,
                    struct v20_out *o, int depth) {
  if (!fs->binary) return bad(A, "Fsst without values");
  struct v20_out in = {0};
  int rc = dec(A, fs->binary, start, count, &in, depth + 1);
  if (rc) return rc;
  if (in.v.kind != LNC_VALUES_VARIABLE) return bad(A, "Fsst values are not variable-width");
  struct lnc_fsst t;
  struct lnc_error *err = A->J->c->err;
  if ((rc = lnc_fsst_init(&t, (struct lnc_slice){fs->symbol_table.data, fs->symbol_table.len}, err)))
    return lnc_page_err(A->J->c, rc, "%s", err ? err->message : "bad FSST symbol table");
  uint64_t total = 0;
  size_t *lens = aalloc(A, (size_t)count * sizeof *lens);
  uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
  if (!lens || !off) return oom(A);
  for (uint64_t i = 0; i < count; i++) {
    struct lnc_slice s = {in.v.data + in.v.offsets[i], (size_t)(in.v.offsets[i + 1] - in.v.offsets[i])};
    if ((rc = lnc_fsst_decoded_len(&t, s, &lens[i], err)))
      return lnc_page_err(A->J->c, rc, "%s", err ? err->message : "bad FSST codes");
    total += lens[i];
  }
  if (total > LNC_ENC_MAX_DECOMPRESSED) return bad(A, "FSST values decode to more than 1 GiB");
  uint8_t *d = aalloc(A, (size_t)total + 8);
  if (!d) return oom(A);
  off[0] = 0;
  for (uint64_t i = 0; i < count; i++) {
    struct lnc_slice s = {in.v.data + in.v.offsets[i], (size_t)(in.v.offsets[i + 1] - in.v.offsets[i])};
    lnc_fsst_decode(&t, s, d + off[i]);
    off[i + 1] = off[i] + lens[i];
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = d, .data_len = (size_t)total, .offsets = off};
  o->valid = in.valid;
  return 0;
}

static int dict_map(struct v20_at *A, const struct v20_dict *dict, const struct v20_out *io, uint64_t count,
                    uint64_t shift, struct v20_out *o);

static const struct v20_dict *dict_of(struct v20_at *A, const enc20 *e) {
  struct v20_page *s = P(A->pg);
  for (size_t i = 0; i < s->n_dicts; i++)
    if (s->dicts[i].enc == e) return &s->dicts[i];
  return NULL;
}

/* Dictionary, in two meanings (items decoded once, at prepare): for a string page the writer
 * chose to dictionary-encode, u8 indices where 0 is null and k >= 1 is item k-1; for a field
 * whose Arrow type is a dictionary, the field's own 0-based indices (nulls in the enclosing
 * Nullable), items = its dictionary. The field's logical type tells which. */
static int dec_dictionary(struct v20_at *A, const enc20 *e, uint64_t start, uint64_t count, struct v20_out *o,
                          int depth) {
  const Lance__Encodings__Dictionary *dc = e->dictionary;
  if (!dc->indices || !dc->items) return bad(A, "Dictionary without indices or items");
  const struct v20_dict *dict = dict_of(A, e);
  if (!dict) return lnc_page_err(A->J->c, LNC_EINTERNAL, "dictionary not prepared");
  struct v20_out io = {0};
  int rc = dec(A, dc->indices, start, count, &io, depth + 1);
  if (rc) return rc;
  uint64_t shift = A->J->c->leaf->dict_index[0] ? 1 : 0; /* stored index + shift = 1-based item */
  return dict_map(A, dict, &io, count, shift, o);
}

/* The items the indices io name (index + shift = 1-based item; 0 is null), copied out. */
static int dict_map(struct v20_at *A, const struct v20_dict *dict, const struct v20_out *iop, uint64_t count,
                    uint64_t shift, struct v20_out *o) {
  const struct lnc_values *items = &dict->items;
  const uint8_t *iv = dict->valid;
  struct v20_out io = *iop;
  if (io.v.kind != LNC_VALUES_FIXED || !int_width(io.v.bits)) return bad(A, "dictionary indices are not integers");
  uint8_t *valid = NULL;
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t raw = fixed_u64(&io.v, i), k = raw + shift;
    /* raw first: a stored 2^64 - 1 plus the shift wraps to 0, which reads as null */
    if (raw > items->n || k > items->n) return bad(A, "dictionary index past the dictionary");
    if (k == 0 || (io.valid && !((io.valid[i >> 3] >> (i & 7)) & 1)) ||
        (iv && !((iv[(k - 1) >> 3] >> ((k - 1) & 7)) & 1))) {
      if (set_null(A, &valid, count, i)) return oom(A);
    } else if (items->kind == LNC_VALUES_VARIABLE) {
      total += items->offsets[k] - items->offsets[k - 1];
    }
  }
  if (items->kind == LNC_VALUES_VARIABLE) {
    uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
    uint8_t *d = aalloc(A, (size_t)total);
    if (!off || !d) return oom(A);
    off[0] = 0;
    for (uint64_t i = 0; i < count; i++) {
      uint64_t k = fixed_u64(&io.v, i) + shift, len = 0;
      if (k && !(valid && !((valid[i >> 3] >> (i & 7)) & 1))) {
        len = items->offsets[k] - items->offsets[k - 1];
        memcpy(d + off[i], items->data + items->offsets[k - 1], (size_t)len);
      }
      off[i + 1] = off[i] + len;
    }
    o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = d, .data_len = (size_t)total, .offsets = off};
  } else {
    if (items->bits % 8) return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "dictionary of %u-bit items", items->bits);
    size_t w = items->bits / 8;
    uint8_t *d = aalloc(A, (size_t)count * w);
    if (!d) return oom(A);
    memset(d, 0, (size_t)count * w);
    for (uint64_t i = 0; i < count; i++) {
      uint64_t k = fixed_u64(&io.v, i) + shift;
      if (k && !(valid && !((valid[i >> 3] >> (i & 7)) & 1)))
        memcpy(d + i * w, items->data + (k - 1) * w, w);
    }
    o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = items->bits, .data = d, .data_len = (size_t)count * w};
  }
  o->valid = valid;
  return 0;
}

/* Legacy Bitpacked: value i at bit i*cbits, LSB-first, optionally sign-extended. */
static int dec_bitpacked(struct v20_at *A, const Lance__Encodings__Bitpacked *bp, uint64_t start, uint64_t count,
                         struct v20_out *o) {
  int rc = buffer_located(A, bp->buffer);
  if (rc) return rc;
  uint64_t cb = bp->compressed_bits_per_value, ub = bp->uncompressed_bits_per_value;
  /* ub is a uint64 in the proto: bounded before it is narrowed (2^32 + 64 passed as 64) */
  if (ub > 64 || !int_width((uint32_t)ub) || cb == 0 || cb > ub) return bad(A, "Bitpacked widths are invalid");
  if (start > UINT64_MAX / 64 || count > UINT64_MAX / 64 - start) return bad(A, "Bitpacked range overflows");
  uint32_t b = page_buffer(bp->buffer);
  uint64_t from = start * cb / 8, to = ((start + count) * cb + 7) / 8;
  const uint8_t *p;
  if ((rc = fetch(A->J, A->pg, b, from, to - from, &p))) return rc;
  size_t w = (size_t)(ub / 8);
  uint8_t *d = aalloc(A, (size_t)count * w);
  if (!d) return oom(A);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t bit = (start + i) * cb - from * 8, x = 0;
    for (uint64_t k = 0; k < cb; k++) {
      uint64_t s = bit + k;
      x |= (uint64_t)((p[s >> 3] >> (s & 7)) & 1) << k;
    }
    if (bp->signed_ && cb < 64 && ((x >> (cb - 1)) & 1)) x |= ~0ull << cb;
    memcpy(d + i * w, &x, w);
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)ub, .data = d, .data_len = (size_t)count * w};
  return 0;
}

/* FastLanes blocks of 1024 values at a fixed width (same block layout as 2.1). */
#define FL_BLOCK_VALUES 1024
static int dec_bfnn(struct v20_at *A, const Lance__Encodings__BitpackedForNonNeg *bp, uint64_t start, uint64_t count,
                    struct v20_out *o) {
  int rc = buffer_located(A, bp->buffer);
  if (rc) return rc;
  uint64_t W = bp->compressed_bits_per_value, T = bp->uncompressed_bits_per_value;
  if (T > 64 || !int_width((uint32_t)T) || W > T) return bad(A, "BitpackedForNonNeg widths are invalid");
  uint64_t block_bytes = FL_BLOCK_VALUES * W / 8;
  uint64_t b0 = start / FL_BLOCK_VALUES, b1 = count ? (start + count - 1) / FL_BLOCK_VALUES : b0;
  if (b1 > UINT64_MAX / (block_bytes ? block_bytes : 1) - 1) return bad(A, "BitpackedForNonNeg range overflows");
  const uint8_t *p = NULL;
  if (W && (rc = fetch(A->J, A->pg, page_buffer(bp->buffer), b0 * block_bytes, (b1 - b0 + 1) * block_bytes, &p)))
    return rc;
  size_t w = (size_t)(T / 8);
  if (count > LNC_ENC_MAX_DECOMPRESSED / w) return bad(A, "BitpackedForNonNeg: too many values"); /* 0 bits read nothing */
  uint8_t *d = aalloc(A, (size_t)count * w);
  if (!d) return oom(A);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t r = start + i, x = 0;
    if (W) x = lnc_fl_get((unsigned)T, (unsigned)W, p + (r / FL_BLOCK_VALUES - b0) * block_bytes, (unsigned)(r % FL_BLOCK_VALUES));
    memcpy(d + i * w, &x, w);
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)T, .data = d, .data_len = (size_t)count * w};
  return 0;
}

static int dec_constant(struct v20_at *A, const Lance__Encodings__Constant *k, uint64_t count, struct v20_out *o) {
  size_t len = k->value.len;
  /* A few bytes of file may stand for billions of values: count against the same bound as
   * every other decoder's output, offsets included. */
  uint64_t per = len + (A->variable ? sizeof(uint64_t) : 0); /* bytes per value, offsets included */
  if (per && count > LNC_ENC_MAX_DECOMPRESSED / per) return bad(A, "Constant values too large");
  if (A->variable) {
    uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
    uint8_t *d = aalloc(A, len ? (size_t)count * len : 1);
    if (!off || !d) return oom(A);
    for (uint64_t i = 0; i <= count; i++) off[i] = i * len;
    for (uint64_t i = 0; len && i < count; i++) memcpy(d + i * len, k->value.data, len);
    o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = d, .data_len = (size_t)count * len, .offsets = off};
    return 0;
  }
  if (len == 0 || len > 4096) return bad(A, "Constant value of unexpected size");
  uint8_t *d = aalloc(A, (size_t)count * len);
  if (!d) return oom(A);
  for (uint64_t i = 0; i < count; i++) memcpy(d + i * len, k->value.data, len);
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)(len * 8), .data = d, .data_len = (size_t)count * len};
  return 0;
}

static int dec_fsl(struct v20_at *A, const Lance__Encodings__FixedSizeList *fl, uint64_t start, uint64_t count,
                   struct v20_out *o, int depth) {
  uint64_t dim = fl->dimension;
  if (!fl->items || dim == 0 || dim > (1u << 20)) return bad(A, "FixedSizeList without items or with a bad dimension");
  if (start > UINT64_MAX / dim / 2 || count > UINT64_MAX / dim / 2) return bad(A, "FixedSizeList range overflows");
  struct v20_out io = {0};
  bool var = A->variable;
  A->variable = false;
  int rc = dec(A, fl->items, start * dim, count * dim, &io, depth + 1);
  A->variable = var;
  if (rc) return rc;
  if (io.v.kind == 0) { /* every item null: zero items of the leaf's width */
    io.v.kind = LNC_VALUES_FIXED;
    io.v.bits = 0;
  }
  if (io.v.kind != LNC_VALUES_FIXED) return bad(A, "FixedSizeList of variable-width items");
  /* This list's items are level 0: their validity (io.valid, a bit per item) comes first;
   * an inner list's layers move one level down, each item now holding dim of its values. */
  uint32_t inner = io.v.fsl_dim ? io.v.n_item_validity : 0;
  if (inner + (io.valid != NULL) > LNC_FSL_MAX_LEVELS) return bad(A, "FixedSizeList nested too deep");
  o->v = io.v;
  o->v.n = count;
  o->v.fsl_dim = dim * (io.v.fsl_dim ? io.v.fsl_dim : 1);
  o->v.n_item_validity = 0;
  if (io.valid) {
    o->v.item_validity[0] = io.valid;
    o->v.item_validity_level[0] = 0;
    o->v.item_validity_per_value[0] = dim;
    o->v.n_item_validity = 1;
  }
  for (uint32_t j = 0; j < inner; j++) {
    uint32_t t = o->v.n_item_validity++;
    o->v.item_validity[t] = io.v.item_validity[j];
    o->v.item_validity_level[t] = (uint8_t)(io.v.item_validity_level[j] + 1);
    o->v.item_validity_per_value[t] = dim * io.v.item_validity_per_value[j];
  }
  return 0;
}

static int dec_fsb(struct v20_at *A, const Lance__Encodings__FixedSizeBinary *fb, uint64_t start, uint64_t count,
                   struct v20_out *o, int depth) {
  uint64_t w = fb->byte_width;
  if (!fb->bytes || w > (1u << 24)) return bad(A, "FixedSizeBinary without bytes or with a bad width");
  if (w && (start > UINT64_MAX / w / 2 || count > UINT64_MAX / w / 2)) return bad(A, "FixedSizeBinary range overflows");
  struct v20_out bo = {0};
  int rc = dec(A, fb->bytes, start * w, count * w, &bo, depth + 1);
  if (rc) return rc;
  if (count && w && (bo.v.kind != LNC_VALUES_FIXED || bo.v.bits != 8)) return bad(A, "FixedSizeBinary bytes are not bytes");
  uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
  if (!off) return oom(A);
  for (uint64_t i = 0; i <= count; i++) off[i] = i * w;
  o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = bo.v.data, .data_len = (size_t)(count * w), .offsets = off};
  return 0;
}

/* PackedStruct: rows of the children's fixed-width values back to back. */
static int dec_packed(struct v20_at *A, const Lance__Encodings__PackedStruct *ps, uint64_t start, uint64_t count,
                      struct v20_out *o) {
  int rc = buffer_located(A, ps->buffer);
  if (rc) return rc;
  uint64_t bits = 0;
  for (size_t i = 0; i < ps->n_inner; i++) {
    const enc20 *in = ps->inner[i];
    while (in && in->array_encoding_case == LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE &&
           in->nullable->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_NO_NULLS)
      in = in->nullable->no_nulls->values;
    if (!in || in->array_encoding_case != LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FLAT ||
        in->flat->bits_per_value % 8 || in->flat->bits_per_value > 8 * 1024)
      return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "PackedStruct child %zu is not a byte-aligned Flat", i);
    bits += in->flat->bits_per_value;
  }
  uint64_t stride = bits / 8;
  if (!stride || start > UINT64_MAX / stride / 2 || count > UINT64_MAX / stride / 2) return bad(A, "PackedStruct has no bytes per row");
  const uint8_t *p;
  if ((rc = fetch(A->J, A->pg, page_buffer(ps->buffer), start * stride, count * stride, &p))) return rc;
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)bits, .data = p, .data_len = (size_t)(count * stride)};
  return 0;
}

static int dec(struct v20_at *A, const enc20 *e, uint64_t start, uint64_t count, struct v20_out *o, int depth) {
  memset(o, 0, sizeof *o);
  if (!e) return bad(A, "missing encoding");
  if (depth > V20_MAX_DEPTH) return bad(A, "encoding tree nests too deep");
  /* Every decoder sizes its output as count times a width of at most 2^24 bytes: with count
   * bounded here those products cannot wrap. Nested fixed-size lists multiply the count by
   * each dimension; three of 2^20 made 2^60 items and a product of 2^64, allocated as 0. */
  if (count > V20_MAX_ITEMS || start > UINT64_MAX / 2)
    return bad(A, "an encoding is asked for more than 2^32 items (nested fixed-size lists too large?)");
  switch (e->array_encoding_case) {
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FLAT: return dec_flat(A, e->flat, start, count, o);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE: return dec_nullable(A, e->nullable, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BINARY: return dec_binary(A, e->binary, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FSST: return dec_fsst(A, e->fsst, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY: return dec_dictionary(A, e, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED: return dec_bitpacked(A, e->bitpacked, start, count, o);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG: return dec_bfnn(A, e->bitpacked_for_non_neg, start, count, o);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT: return dec_constant(A, e->constant, count, o);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST: return dec_fsl(A, e->fixed_size_list, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY: return dec_fsb(A, e->fixed_size_binary, start, count, o, depth);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT: return dec_packed(A, e->packed_struct, start, count, o);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_LIST:
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT:
    return bad(A, "a list or struct encoding where values were expected");
  default:
    return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "2.0 array encoding %d", (int)e->array_encoding_case);
  }
}


/* ---- legacy pages (file version 0.1/0.2): the field's type says what a page holds ------- */

static bool legacy_bytes(const struct lnc_field *fld) {
  return !fld->dict_index[0] && lnc_kind_is_bytes(fld->type);
}

/* Strings and binaries: rows + 1 absolute i64 positions (buffer 0), the bytes between them
 * (buffer 1: the file before the positions). There is no validity: in a nullable field Lance
 * reads a value of no bytes as null, and so do we. */
static int legacy_binary(struct v20_at *A, const struct lnc_field *fld, uint64_t start, uint64_t count,
                         struct v20_out *o) {
  const uint8_t *p;
  int rc = fetch(A->J, A->pg, 0, start * 8, (count + 1) * 8, &p);
  if (rc) return rc;
  uint64_t lo = lnc_rd64(p), hi = lnc_rd64(p + count * 8);
  if (lo > hi) return bad(A, "legacy string positions decrease");
  const uint8_t *bytes;
  if ((rc = fetch(A->J, A->pg, 1, lo, hi - lo, &bytes))) return rc;
  uint64_t *off = aalloc(A, (size_t)(count + 1) * sizeof *off);
  uint8_t *valid = NULL;
  if (!off) return oom(A);
  off[0] = 0;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t a = lnc_rd64(p + i * 8), b = lnc_rd64(p + i * 8 + 8);
    if (b < a || b > hi) return bad(A, "legacy string positions decrease");
    off[i + 1] = b - lo;
    if (a == b && fld->nullable && set_null(A, &valid, count, i)) return oom(A);
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = count, .data = bytes, .data_len = (size_t)(hi - lo), .offsets = off};
  o->valid = valid;
  return 0;
}

/* The column's dictionary, held by its first page (lnc_v20_prepare). */
static const struct v20_dict *legacy_dict(struct v20_at *A) {
  const struct lnc_take_ctx *c = A->J->c;
  const struct lnc_column *col = &c->f->columns[c->leaf->col20];
  const struct v20_page *s0 = col->n_pages ? P(&col->pages[0]) : NULL;
  return s0 && s0->n_dicts ? &s0->dicts[0] : NULL;
}

/* Values [start, start+count) of a legacy leaf page. Fixed-width values, booleans, keys,
 * fixed-size binaries and lists are plain: value i is bits [i*w, (i+1)*w) of buffer 0. Nothing
 * but strings has validity (null slots hold what the writer's buffer held, as Lance reads). */
static int dec_legacy(struct v20_at *A, const struct lnc_field *fld, uint64_t start, uint64_t count,
                      struct v20_out *o) {
  memset(o, 0, sizeof *o);
  if (count > V20_MAX_ITEMS || start > UINT32_MAX) return bad(A, "legacy page range too large");
  if (fld->type == LNC_AT_NULL) return all_null(A, count, o);
  if (legacy_bytes(fld)) return legacy_binary(A, fld, start, count, o);
  uint64_t bits = lnc_legacy_value_bits(fld);
  if (!bits || bits > 8 * (UINT64_C(1) << 24)) return lnc_page_err(A->J->c, LNC_EUNSUPPORTED, "a legacy page of %s", fld->logical_type);
  uint64_t from = start * bits / 8, to = ((start + count) * bits + 7) / 8;
  const uint8_t *p;
  int rc = fetch(A->J, A->pg, 0, from, to - from, &p);
  if (rc) return rc;
  uint64_t skip = start * bits % 8; /* bits before the first value (booleans) */
  if (fld->dict_index[0]) {
    const struct v20_dict *d = legacy_dict(A);
    if (!d) return lnc_page_err(A->J->c, LNC_EINTERNAL, "dictionary not prepared");
    struct v20_out io = {.v = {.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)bits, .data = p, .data_len = (size_t)(to - from)}};
    return dict_map(A, d, &io, count, 1, o); /* keys are 0-based */
  }
  uint64_t dim = 1, item_bits = bits;
  if (fld->type == LNC_AT_FIXED_LIST) { /* every item of every row: the items' own width */
    const struct lnc_field *x = fld;
    while (x->type == LNC_AT_FIXED_LIST && x->n_children) x = x->children[0];
    item_bits = x->type == LNC_AT_BOOL ? 1 : (uint64_t)x->byte_width * 8;
    dim = bits / item_bits;
  }
  if (skip) {
    uint8_t *d = bits_copy(A, p, skip, count * dim);
    if (!d) return oom(A);
    p = d;
  }
  o->v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = count, .bits = (uint32_t)item_bits, .data = p, .data_len = (size_t)((count * bits + 7) / 8)};
  if (fld->type == LNC_AT_FIXED_LIST) o->v.fsl_dim = dim;
  return 0;
}

/* A legacy dictionary's values, where Field.dictionary says (in this file for the schema a
 * data file embeds): plain fixed-width values, or strings laid out as a page is (the
 * position is that of the i64 positions, the bytes precede them). Lance reads string items
 * as nullable: an empty item is null. Read once, at prepare, with blocking reads. */
static int legacy_dict_load(struct lnc_take_ctx *c, const struct lnc_field *fld, struct v20_dict *d, size_t *bytes) {
  uint64_t n = (uint64_t)fld->dict_len, at = (uint64_t)fld->dict_off, size = c->f->src.size;
  if (fld->dict_len < 0 || fld->dict_off < 0 || n > V20_MAX_DICT_ITEMS)
    return lnc_page_err(c, LNC_ECORRUPT, "legacy dictionary of %lld items at %lld", (long long)fld->dict_len,
                        (long long)fld->dict_off);
  bool var = lnc_kind_is_bytes(fld->type);
  uint64_t w = var ? 8 : fld->byte_width, len = var ? (n + 1) * 8 : n * w;
  if (!w) return lnc_page_err(c, LNC_EUNSUPPORTED, "a legacy dictionary of %s values", fld->logical_type);
  if (at > size || len > size - at) return lnc_page_err(c, LNC_ECORRUPT, "legacy dictionary runs past the file");
  struct lnc_read r = {.off = at, .len = len, .dst = lnc_arena_alloc(c->arena, len ? len : 1)};
  if (!r.dst) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  int rc = lnc_io_read(c->io, &c->f->src, &r, 1, c->stats, c->err);
  if (rc) return rc;
  struct lnc_values *v = &d->items;
  if (!var) {
    *v = (struct lnc_values){.kind = LNC_VALUES_FIXED, .n = n, .bits = (uint32_t)(w * 8), .data_len = (size_t)len};
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    memcpy(copy, r.dst, len);
    v->data = copy;
    *bytes = len;
    return 0;
  }
  uint64_t lo = lnc_rd64(r.dst), hi = lnc_rd64(r.dst + n * 8);
  if (lo > hi || hi > at) return lnc_page_err(c, LNC_ECORRUPT, "legacy dictionary positions are out of order");
  uint64_t *off = malloc((size_t)(n + 1) * sizeof *off);
  uint8_t *data = malloc(hi - lo ? hi - lo : 1), *valid = calloc(1, (size_t)((n + 7) / 8) + 1);
  *v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = n, .data = data, .data_len = (size_t)(hi - lo), .offsets = off};
  d->valid = valid;
  if (!off || !data || !valid) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  for (uint64_t i = 0; i <= n; i++) {
    uint64_t q = lnc_rd64(r.dst + i * 8);
    if (q < lo || q > hi || (i && q < lo + off[i - 1])) return lnc_page_err(c, LNC_ECORRUPT, "legacy dictionary positions are out of order");
    off[i] = q - lo;
    if (i && off[i] > off[i - 1]) valid[(i - 1) >> 3] |= (uint8_t)(1u << ((i - 1) & 7));
  }
  struct lnc_read rb = {.off = lo, .len = hi - lo, .dst = data};
  if (hi > lo && (rc = lnc_io_read(c->io, &c->f->src, &rb, 1, c->stats, c->err))) return rc;
  *bytes = (size_t)(hi - lo) + (size_t)(n + 1) * 8;
  return 0;
}

/* Marks pg prepared: its state pointer is the v20_page itself (freed with it), holding bytes
 * of search-cache state besides itself. */
static int prepared(struct lnc_page *pg, struct v20_page *s, size_t bytes) {
  pg->state = s;
  pg->free_state = NULL;
  pg->state_bytes = bytes + sizeof *s;
  return 0;
}

/* A legacy page's prepare: the first page of a dictionary column loads the dictionary. */
static int legacy_prepare(struct lnc_take_ctx *c, struct lnc_page *pg, struct v20_page *s) {
  const struct lnc_field *fld = s->legacy;
  size_t bytes = 0;
  const struct lnc_column *col = &c->f->columns[fld->col20];
  if (fld->dict_index[0] && fld == c->leaf && col->n_pages && pg == &col->pages[0]) {
    if (!(s->dicts = calloc(1, sizeof *s->dicts))) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    s->n_dicts = 1;
    int rc = legacy_dict_load(c, fld, &s->dicts[0], &bytes);
    if (rc) {
      dicts_free(s);
      return rc;
    }
  }
  return prepared(pg, s, bytes);
}

/* ---- dictionaries: decoded once into the page's search-cache state --------------------- */

static int copy_values(const struct lnc_values *src, struct lnc_values *dst) {
  *dst = *src;
  dst->data = NULL;
  dst->offsets = NULL;
  uint8_t *d = malloc(src->data_len ? src->data_len : 1);
  if (!d) return LNC_ENOMEM;
  if (src->data_len) memcpy(d, src->data, src->data_len);
  dst->data = d;
  if (src->kind == LNC_VALUES_VARIABLE) {
    uint64_t *o = malloc((size_t)(src->n + 1) * sizeof *o);
    if (!o) return LNC_ENOMEM;
    memcpy(o, src->offsets, (size_t)(src->n + 1) * sizeof *o);
    dst->offsets = o;
  }
  dst->n_item_validity = 0;
  return 0;
}

static void find_dicts(const enc20 *e, const enc20 **out, size_t *n, size_t cap, int depth) {
  if (!e || depth > V20_MAX_DEPTH || *n >= cap) return;
  switch (e->array_encoding_case) {
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY: out[(*n)++] = e; return;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE:
    if (e->nullable->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_NO_NULLS)
      find_dicts(e->nullable->no_nulls->values, out, n, cap, depth + 1);
    else if (e->nullable->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_SOME_NULLS)
      find_dicts(e->nullable->some_nulls->values, out, n, cap, depth + 1);
    return;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST: find_dicts(e->fixed_size_list->items, out, n, cap, depth + 1); return;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FSST: find_dicts(e->fsst->binary, out, n, cap, depth + 1); return;
  default: return;
  }
}

static void job_free(struct v20_job *J) {
  free(J->have);
  free(J->want);
  free(J->dz);
  memset(J, 0, sizeof *J);
}

/* Runs dec() to completion with blocking reads (prepare time only). */
static int dec_sync(struct v20_at *A, const enc20 *e, uint64_t start, uint64_t count, struct v20_out *o) {
  for (int round = 0; round < LNC_PAGE_MAX_ROUNDS; round++) {
    int rc = dec(A, e, start, count, o, 0);
    if (rc != V20_MISS) return rc;
    struct lnc_read *reads;
    size_t n;
    if ((rc = want_to_reads(A->J, &reads, &n))) return oom(A);
    struct lnc_take_ctx *c = A->J->c;
    if ((rc = lnc_io_read(c->io, &c->f->src, reads, n, c->stats, c->err))) return rc;
    if ((rc = reads_to_have(A->J, reads, n))) return oom(A);
  }
  return lnc_page_err(A->J->c, LNC_EINTERNAL, "dictionary reads did not settle");
}

int lnc_v20_prepare(struct lnc_take_ctx *c, struct lnc_page *pg) {
  struct v20_page *s = P(pg);
  if (!s || pg->state) return 0;
  if (s->legacy) return legacy_prepare(c, pg, s);
  const enc20 *found[4];
  size_t n = 0;
  find_dicts(s->enc, found, &n, 4, 0);
  struct v20_job J = {.arena = c->arena, .c = c};
  struct v20_at A = {.J = &J, .pg = pg};
  int rc = 0;
  size_t bytes = 0;
  if (n && !(s->dicts = calloc(n, sizeof *s->dicts))) rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    const Lance__Encodings__Dictionary *dc = found[i]->dictionary;
    if (dc->num_dictionary_items > V20_MAX_DICT_ITEMS) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "dictionary of %u items", dc->num_dictionary_items);
      break;
    }
    A.variable = lnc_kind_is_bytes(c->leaf->type);
    struct v20_out o;
    if ((rc = dec_sync(&A, dc->items, 0, dc->num_dictionary_items, &o))) break;
    if (o.v.kind == 0) { /* every item null: an empty item of the leaf's shape */
      static const uint64_t zero_off[2] = {0, 0};
      o.v = (struct lnc_values){.kind = A.variable ? LNC_VALUES_VARIABLE : LNC_VALUES_FIXED, .n = o.v.n, .bits = 8, .offsets = zero_off};
      if (o.v.n > 1) {
        rc = lnc_page_err(c, LNC_EUNSUPPORTED, "dictionary of %llu null items", (unsigned long long)o.v.n);
        break;
      }
    }
    if (copy_values(&o.v, &s->dicts[i].items)) {
      rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
      break;
    }
    if (o.valid) {
      size_t vb = (size_t)((o.v.n + 7) / 8);
      if (!(s->dicts[i].valid = malloc(vb ? vb : 1))) {
        rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
        break;
      }
      memcpy(s->dicts[i].valid, o.valid, vb);
    }
    s->dicts[i].enc = found[i];
    s->n_dicts = i + 1;
    bytes += o.v.data_len + (o.v.kind == LNC_VALUES_VARIABLE ? (size_t)(o.v.n + 1) * 8 : 0);
  }
  job_free(&J);
  if (rc) {
    dicts_free(s);
    return rc;
  }
  return prepared(pg, s, bytes);
}

/* ---- the walk: rows -> levels and values -------------------------------------------------- */

struct v20_walk {
  struct v20_job *J;
  const struct lnc_field *path[64]; /* top-level field .. leaf */
  uint32_t D;                       /* fields on the path */
  uint32_t lists;                   /* list fields on the path */
  uint32_t first_list;              /* layer (innermost = 0) of the innermost list, or D */
  struct lnc_leafrows *out;         /* NULL: a dry run that only notes reads */
  bool variable;
  uint64_t visits; /* list slots and items walked, against V20_MAX_WALK */
};

/* List slots and items one take may walk in a column. List offsets may be a Constant, so a
 * few bytes of file can claim billions of items per row (a 1 MB file: 16 minutes and 85 GB to
 * walk). Walking costs about 20 bytes and 100 ns a slot here. The take's own bound on items
 * (lnc_take_max_items, from max_bytes: 2^24 = ~330 MB and ~1.5 s under lanced's default)
 * applies; a take without one stops at V20_MAX_WALK (~1.3 GB). */
#define V20_MAX_WALK ((uint64_t)1 << 26)
static int walked(struct v20_walk *W, uint64_t n) {
  uint64_t cap = W->J->c->max_items ? W->J->c->max_items : V20_MAX_WALK;
  if (W->visits <= cap && n <= cap - W->visits) {
    W->visits += n;
    return 0;
  }
  return lnc_page_err(W->J->c, LNC_ELIMIT, "the rows asked for hold more than %llu " LNC_TAKE_ITEMS_TEXT ", " LNC_TAKE_LIMIT_TEXT,
                      (unsigned long long)cap);
}

static int push(struct v20_walk *W, uint16_t rep, uint16_t def) {
  if (!W->out || !W->J->c->levels) return 0;
  return lnc_leafrows_push_level(W->out, rep, def) ? lnc_page_err(W->J->c, LNC_ENOMEM, "out of memory") : 0;
}

/* A legacy list page: rows + 1 offsets (i32, or i64 for a large list) from 0 into the items
 * of the child's page of the same batch. A list has no validity (a null list was written as
 * its offsets, normally empty, and reads back so in Lance). */
static int legacy_list_range(struct v20_walk *W, const struct lnc_page *pg, const struct v20_page *st, uint64_t i,
                             uint64_t *s, uint64_t *e, bool *valid) {
  unsigned w = st->legacy->type == LNC_AT_LARGE_LIST ? 8 : 4;
  const uint8_t *q;
  int rc = fetch(W->J, pg, 0, i * w, 2 * (uint64_t)w, &q);
  if (rc) return rc;
  uint64_t a = lnc_rdw(q, w), b = lnc_rdw(q + w, w);
  if (b < a || b > st->num_items)
    return lnc_page_err(W->J->c, LNC_ECORRUPT, "legacy list %llu has items [%llu, %llu) of %llu", (unsigned long long)i,
                        (unsigned long long)a, (unsigned long long)b, (unsigned long long)st->num_items);
  *s = st->item_base + a;
  *e = st->item_base + b;
  *valid = true;
  return 0;
}

/* Lists [pos, pos+1) of a list column: items [*s, *e) of the child column, and whether valid. */
static int list_range(struct v20_walk *W, const struct lnc_field *f, uint64_t pos, uint64_t *s, uint64_t *e, bool *valid) {
  struct lnc_file *file = W->J->c->f;
  uint32_t p;
  if (find_page(file, (uint32_t)f->col20, pos, &p))
    return lnc_page_err(W->J->c, LNC_ECORRUPT, "list position %llu is past column %d", (unsigned long long)pos, f->col20);
  const struct lnc_page *pg = &file->columns[f->col20].pages[p];
  const struct v20_page *st = P(pg);
  if (st->legacy) return legacy_list_range(W, pg, st, pos - pg->row_start, s, e, valid);
  const Lance__Encodings__List *ls = st->enc->list;
  struct v20_at A = {.J = W->J, .pg = pg};
  uint64_t i = pos - pg->row_start;
  struct v20_out o;
  int rc = dec(&A, ls->offsets, i ? i - 1 : 0, i ? 2 : 1, &o, 0);
  if (rc) return rc;
  if (o.v.kind != LNC_VALUES_FIXED || !int_width(o.v.bits)) return lnc_page_err(W->J->c, LNC_ECORRUPT, "list offsets are not integers");
  uint64_t adj = ls->null_offset_adjustment;
  uint64_t a = i ? fixed_u64(&o.v, 0) : 0, b = fixed_u64(&o.v, i ? 1 : 0);
  if (adj && a >= adj) a -= adj;
  *valid = !(adj && b >= adj);
  if (!*valid) b -= adj;
  if (b < a || b > ls->num_items)
    return lnc_page_err(W->J->c, LNC_ECORRUPT, "list %llu has items [%llu, %llu) of %llu", (unsigned long long)i,
                        (unsigned long long)a, (unsigned long long)b, (unsigned long long)ls->num_items);
  *s = st->item_base + a;
  *e = st->item_base + b;
  return 0;
}

/* The leaf's values [pos, pos+count) (within one page) appended, each with its level. */
static int leaf_values(struct v20_walk *W, uint64_t pos, uint64_t count, uint16_t rep_first, uint16_t rep_next) {
  struct lnc_file *file = W->J->c->f;
  const struct lnc_field *leaf = W->path[W->D - 1];
  int miss = 0;
  while (count) {
    uint32_t p;
    if (find_page(file, (uint32_t)leaf->col20, pos, &p))
      return lnc_page_err(W->J->c, LNC_ECORRUPT, "position %llu is past column %d", (unsigned long long)pos, leaf->col20);
    const struct lnc_page *pg = &file->columns[leaf->col20].pages[p];
    uint64_t local = pos - pg->row_start, k = pg->rows - local < count ? pg->rows - local : count;
    struct v20_at A = {.J = W->J, .pg = pg, .variable = W->variable};
    struct v20_out o;
    int rc = P(pg)->legacy ? dec_legacy(&A, leaf, local, k, &o) : dec(&A, P(pg)->enc, local, k, &o, 0);
    if (rc > 0) return rc;
    if (rc) {
      miss = 1;
      pos += k;
      count -= k;
      continue;
    }
    if (W->out) {
      for (uint64_t i = 0; i < k; i++) {
        bool ok = !o.valid || ((o.valid[i >> 3] >> (i & 7)) & 1);
        if ((rc = push(W, rep_first, ok ? 0 : 1))) return rc;
        rep_first = rep_next;
        rc = ok ? lnc_valbuf_append(&W->out->values, &o.v, i) : lnc_valbuf_append_null(&W->out->values);
        if (rc) return lnc_page_err(W->J->c, rc, rc == LNC_ENOMEM ? "out of memory" : "value %llu is malformed",
                                    (unsigned long long)(local + i));
      }
    }
    pos += k;
    count -= k;
  }
  return miss ? V20_MISS : 0;
}

/* Field path[k] at column position pos, its first level carrying repetition rep. */
static int walk(struct v20_walk *W, uint32_t k, uint64_t pos, uint16_t rep) {
  const struct lnc_field *f = W->path[k];
  int rc = W->lists ? walked(W, 1) : 0; /* a path without lists walks one slot per row asked for */
  if (rc) return rc;
  if (k == W->D - 1) return leaf_values(W, pos, 1, rep, rep);
  if (f->type == LNC_AT_STRUCT) return walk(W, k + 1, pos, rep); /* 2.0 stores no struct validity */
  uint32_t layer = W->D - 1 - k, m = 0;
  for (uint32_t x = 0; x <= k; x++) m += lnc_kind_is_list(W->path[x]->type);
  uint64_t s = 0, e = 0;
  bool valid = false;
  if ((rc = list_range(W, f, pos, &s, &e, &valid))) return rc;
  if (!valid) return push(W, rep, (uint16_t)(1 + 2 * layer));
  if (s == e) return push(W, rep, (uint16_t)(2 + 2 * layer));
  uint16_t inner = (uint16_t)(W->lists - m);
  if (k + 1 == W->D - 1) { /* items of a leaf: one range */
    if ((rc = walked(W, e - s))) return rc;
    return leaf_values(W, s, e - s, rep, inner);
  }
  int miss = 0;
  for (uint64_t q = s; q < e; q++) {
    rc = walk(W, k + 1, q, q == s ? rep : inner);
    if (rc > 0) return rc;
    if (rc) miss = 1;
  }
  return miss ? V20_MISS : 0;
}

static int walk_rows(struct v20_walk *W, const uint64_t *rows, size_t n) {
  int miss = 0;
  for (size_t i = 0; i < n; i++) {
    int rc = walk(W, 0, rows[i], (uint16_t)W->lists);
    if (rc > 0) return rc;
    if (rc) miss = 1;
    if (W->out && lnc_leafrows_end_row(W->out)) return lnc_page_err(W->J->c, LNC_ENOMEM, "out of memory");
  }
  return miss ? V20_MISS : 0;
}

static int walk_init(struct v20_walk *W, struct lnc_page_job *j, struct v20_job *J) {
  memset(W, 0, sizeof *W);
  W->J = J;
  const struct lnc_field *leaf = j->c.leaf;
  uint32_t D = 0;
  for (const struct lnc_field *x = leaf; x && x->parent; x = x->parent) D++;
  if (D > 64) return lnc_page_err(&j->c, LNC_EUNSUPPORTED, "field nests %u deep", D);
  W->D = D;
  uint32_t k = D;
  W->first_list = D;
  for (const struct lnc_field *x = leaf; x && x->parent; x = x->parent) {
    W->path[--k] = x;
    if (x->col20 < 0) return lnc_page_err(&j->c, LNC_ECORRUPT, "field '%s' has no column", x->name);
    if (lnc_kind_is_list(x->type)) {
      W->lists++;
      if (W->first_list == D) W->first_list = D - 1 - k;
    }
  }
  W->variable = j->out->values.kind == LNC_VALUES_VARIABLE;
  return 0;
}

/* ---- jobs ----------------------------------------------------------------------------- */

/* Empties a column stream a walk that missed bytes had half filled (its shape kept). */
static int reset_out(struct lnc_leafrows *r) {
  bool has_rep = r->has_rep, has_def = r->has_def;
  struct lnc_valbuf shape = r->values; /* its shape fields only: the buffers are freed below */
  lnc_leafrows_free(r);
  r->has_rep = has_rep;
  r->has_def = has_def;
  return lnc_valbuf_init_like(&r->values, &shape);
}

/* One round: the walk writes the job's output directly; when it missed bytes, that output is
 * dropped and the misses become the round's reads. The walk that completes is therefore the
 * last one (a take of one dependent step walks twice, not three times). */
static int run_round(struct lnc_page_job *j) {
  struct v20_job *J = j->plan;
  LNC_ASSERT(J && !J->done && J->nwant == 0);
  struct v20_walk W;
  int rc = walk_init(&W, j, J);
  if (rc) return rc;
  W.out = j->out;
  rc = walk_rows(&W, j->rows, j->n);
  if (rc > 0) return rc;
  if (rc == 0) {
    if (J->nwant) return lnc_page_err(&j->c, LNC_EINTERNAL, "a complete walk noted reads");
    J->done = true;
    return 0;
  }
  if (reset_out(j->out) || want_to_reads(J, &j->reads, &j->nreads))
    return lnc_page_err(&j->c, LNC_ENOMEM, "out of memory");
  return 0;
}

int lnc_v20_plan(struct lnc_page_job *j) {
  /* A file taken without the engine is prepared lazily, as 2.1 pages are: the leaf's pages
   * hold the dictionaries (the engine prepares every page when it loads the file). */
  struct lnc_column *leafcol = &j->c.f->columns[j->c.leaf->col20];
  for (uint32_t p = 0; p < leafcol->n_pages; p++) {
    int rc = lnc_v20_prepare(&j->c, &leafcol->pages[p]);
    if (rc) return rc;
  }
  struct v20_job *J = lnc_arena_alloc(j->c.arena, sizeof *J);
  if (!J) return lnc_page_err(&j->c, LNC_ENOMEM, "out of memory");
  *J = (struct v20_job){.arena = j->c.arena, .c = &j->c};
  j->plan = J;
  return run_round(j);
}

int lnc_v20_advance(struct lnc_page_job *j) {
  struct v20_job *J = j->plan;
  J->c = &j->c;
  if (reads_to_have(J, j->reads, j->nreads)) return lnc_page_err(&j->c, LNC_ENOMEM, "out of memory");
  j->reads = NULL;
  j->nreads = 0;
  return run_round(j);
}

int lnc_v20_decode(struct lnc_page_job *j) {
  struct v20_job *J = j->plan;
  LNC_ASSERT(J && j->nreads == 0); /* run_jobs decodes only after the last round */
  /* The last round's walk already wrote the rows (run_round). */
  return J->done ? 0 : lnc_page_err(&j->c, LNC_EINTERNAL, "bytes missing after the last round");
}

void lnc_v20_release(struct lnc_page_job *j) {
  struct v20_job *J = j->plan;
  if (J) job_free(J);
  j->plan = NULL;
}

/* ---- describing ------------------------------------------------------------------------ */

static int describe(const enc20 *e, struct lnc_buf *b, int depth) {
  if (!e) return lnc_buf_puts(b, "?");
  if (depth > V20_MAX_DEPTH) return lnc_buf_puts(b, "...");
  int rc = 0;
  switch (e->array_encoding_case) {
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FLAT: {
    const Lance__Encodings__Flat *f = e->flat;
    if (compressed(f)) return lnc_buf_printf(b, "Flat(%llu, %s)", (unsigned long long)f->bits_per_value, f->compression->scheme);
    return lnc_buf_printf(b, "Flat(%llu)", (unsigned long long)f->bits_per_value);
  }
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE: {
    const Lance__Encodings__Nullable *n = e->nullable;
    if (n->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_ALL_NULLS) return lnc_buf_puts(b, "Nullable(all)");
    if (n->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_NO_NULLS) {
      rc = lnc_buf_puts(b, "Nullable(none, ");
      if (!rc) rc = describe(n->no_nulls->values, b, depth + 1);
    } else if (n->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_SOME_NULLS) {
      rc = lnc_buf_puts(b, "Nullable(some, ");
      if (!rc) rc = describe(n->some_nulls->validity, b, depth + 1);
      if (!rc) rc = lnc_buf_puts(b, ", ");
      if (!rc) rc = describe(n->some_nulls->values, b, depth + 1);
    } else {
      return lnc_buf_puts(b, "Nullable(?)");
    }
    return rc ? rc : lnc_buf_putc(b, ')');
  }
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BINARY:
    rc = lnc_buf_puts(b, "Binary(");
    if (!rc) rc = describe(e->binary->indices, b, depth + 1);
    if (!rc) rc = lnc_buf_puts(b, ", ");
    if (!rc) rc = describe(e->binary->bytes, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FSST:
    rc = lnc_buf_puts(b, "Fsst(");
    if (!rc) rc = describe(e->fsst->binary, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY:
    rc = lnc_buf_printf(b, "Dictionary(%u items, ", e->dictionary->num_dictionary_items);
    if (!rc) rc = describe(e->dictionary->indices, b, depth + 1);
    if (!rc) rc = lnc_buf_puts(b, ", ");
    if (!rc) rc = describe(e->dictionary->items, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED:
    return lnc_buf_printf(b, "Bitpacked(%llu of %llu%s)", (unsigned long long)e->bitpacked->compressed_bits_per_value,
                          (unsigned long long)e->bitpacked->uncompressed_bits_per_value, e->bitpacked->signed_ ? ", signed" : "");
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG:
    return lnc_buf_printf(b, "BitpackedForNonNeg(%llu of %llu)",
                          (unsigned long long)e->bitpacked_for_non_neg->compressed_bits_per_value,
                          (unsigned long long)e->bitpacked_for_non_neg->uncompressed_bits_per_value);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT:
    return lnc_buf_printf(b, "Constant(%zu bytes)", e->constant->value.len);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST:
    rc = lnc_buf_printf(b, "FixedSizeList(%u, ", e->fixed_size_list->dimension);
    if (!rc) rc = describe(e->fixed_size_list->items, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY:
    rc = lnc_buf_printf(b, "FixedSizeBinary(%u, ", e->fixed_size_binary->byte_width);
    if (!rc) rc = describe(e->fixed_size_binary->bytes, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT:
    rc = lnc_buf_puts(b, "PackedStruct([");
    for (size_t i = 0; i < e->packed_struct->n_inner && !rc; i++) {
      if (i) rc = lnc_buf_puts(b, ", ");
      if (!rc) rc = describe(e->packed_struct->inner[i], b, depth + 1);
    }
    return rc ? rc : lnc_buf_puts(b, "])");
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_LIST:
    rc = lnc_buf_printf(b, "List(%llu items, ", (unsigned long long)e->list->num_items);
    if (!rc) rc = describe(e->list->offsets, b, depth + 1);
    return rc ? rc : lnc_buf_putc(b, ')');
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT:
    return lnc_buf_puts(b, "SimpleStruct");
  default:
    return lnc_buf_printf(b, "Unknown(%d)", (int)e->array_encoding_case);
  }
}

/* A legacy page, from its field's type. */
static int legacy_describe(const struct lnc_field *fld, const struct lnc_page *pg, struct lnc_buf *b) {
  if (fld->type == LNC_AT_STRUCT) return lnc_buf_puts(b, "Legacy(struct, no page)");
  if (fld->type == LNC_AT_NULL) return lnc_buf_puts(b, "Legacy(null, no bytes)");
  if (lnc_kind_is_list(fld->type))
    return lnc_buf_printf(b, "Legacy(list offsets, %s)", fld->type == LNC_AT_LARGE_LIST ? "i64" : "i32");
  if (legacy_bytes(fld)) return lnc_buf_puts(b, "Legacy(binary: bytes, then i64 positions)");
  if (fld->dict_index[0])
    return lnc_buf_printf(b, "Legacy(dictionary keys, %llu-bit, %lld items)", (unsigned long long)lnc_legacy_value_bits(fld),
                          (long long)fld->dict_len);
  return lnc_buf_printf(b, "Legacy(plain, %llu bits per row, %llu bytes)", (unsigned long long)lnc_legacy_value_bits(fld),
                        (unsigned long long)(pg->n_buffers ? pg->buf_len[0] : 0));
}

int lnc_v20_describe(const struct lnc_page *pg, struct lnc_buf *out) {
  const struct v20_page *s = P(pg);
  if (s && s->legacy) return legacy_describe(s->legacy, pg, out);
  return describe(s ? s->enc : NULL, out, 0);
}

/* Dependent reads one row of this page costs (list offsets are one more step each). */
static int reads_of(const enc20 *e, int depth) {
  if (!e || depth > V20_MAX_DEPTH) return 0;
  switch (e->array_encoding_case) {
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE:
    if (e->nullable->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_NO_NULLS) return reads_of(e->nullable->no_nulls->values, depth + 1);
    if (e->nullable->nullability_case == LANCE__ENCODINGS__NULLABLE__NULLABILITY_SOME_NULLS) return reads_of(e->nullable->some_nulls->values, depth + 1);
    return 0;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BINARY: return 2;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FSST: return reads_of(e->fsst->binary, depth + 1);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY: return reads_of(e->dictionary->indices, depth + 1);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST: return reads_of(e->fixed_size_list->items, depth + 1);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY: return reads_of(e->fixed_size_binary->bytes, depth + 1);
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT: return 0;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT: return 0;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_LIST: return 1;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FLAT: return compressed(e->flat) ? 100 : 1;
  default: return 1;
  }
}

const char *lnc_v20_reads_per_row(const struct lnc_page *pg) {
  const struct v20_page *s = P(pg);
  if (s && s->legacy) {
    const struct lnc_field *fld = s->legacy;
    if (fld->type == LNC_AT_STRUCT || fld->type == LNC_AT_NULL) return "0";
    return legacy_bytes(fld) ? "2 dependent" : "1";
  }
  int r = reads_of(s ? s->enc : NULL, 0);
  switch (r) {
  case 0: return "0";
  case 1: return "1";
  case 2: return "2 dependent";
  case 100: return "whole buffer";
  default: return "?";
  }
}
