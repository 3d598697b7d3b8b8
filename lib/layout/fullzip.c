/* Full-zip pages: every level's control word zipped with its value bytes. Fixed-width pages
 * without repetition address row r directly (r * stride); otherwise the page's repetition
 * index (kept in the search cache) gives each row's byte range, so a row is one read. */
#include "page.h"
#include "../io/io.h"
#include "../util/assert.h"
#include "../util/error.h"
#include "../util/clock.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A full-zip page's buffers: the zipped values, then the repetition index when it has one. */
enum { FZ_BUF_DATA = 0,
       FZ_BUF_REPIDX = 1 };

struct fz_state {
  const Lance__Encodings21__FullZipLayout *fz;
  struct lnc_layers L;
  uint32_t cw_bytes;    /* control word size: 0, 1, 2 or 4 */
  bool fixed;           /* fixed-width values (bits_per_value), else length-prefixed ones */
  uint32_t value_bytes; /* fixed: bytes per visible value (0: a Constant supplies it) */
  uint32_t len_bytes;   /* variable: length prefix size (4 or 8) */
  uint8_t *repidx;      /* rows+1 entries of repidx_w bytes, or NULL */
  uint32_t repidx_w;
  bool repidx_on_disk; /* the index exists but is read per take (cache policy) */
  /* Whether the page cache held all the page's values when last looked (cachestat of the
   * whole buffer: a walk of its pages, a tenth of a training batch's time when it was done
   * per take), and until when that answer stands (monotonic ns). Shared by the takes of
   * every thread: relaxed atomics, a stale answer only costs a copy or a wait. Asked first,
   * not instead of the rows' own pages (fz_rows_resident): the file mapping's regions span
   * bytes of other columns too, and one of them evicted (proactive reclaim takes cold pages)
   * must not turn this page's values away from the file while they are all cached. */
  uint64_t resident_until;
  bool resident;
};

static bool fz_resident(const struct lnc_take_ctx *c, const struct lnc_page *pg, struct fz_state *s) {
  uint64_t now = lnc_coarse_ns();
  if (now < __atomic_load_n(&s->resident_until, __ATOMIC_RELAXED)) return __atomic_load_n(&s->resident, __ATOMIC_RELAXED);
  bool r = lnc_source_resident(&c->f->src, pg->buf_off[FZ_BUF_DATA], pg->buf_len[FZ_BUF_DATA]);
  __atomic_store_n(&s->resident, r, __ATOMIC_RELAXED);
  __atomic_store_n(&s->resident_until, now + LNC_RESIDENT_TTL_NS, __ATOMIC_RELAXED);
  return r;
}

unsigned lnc_fullzip_init_bufs(const struct lnc_page *pg, uint32_t *bufs) {
  /* fz_init reads the index when the page has one (unless repidx_max keeps it on disk). */
  if (pg->n_buffers <= FZ_BUF_REPIDX) return 0;
  bufs[0] = FZ_BUF_REPIDX;
  return 1;
}

static void fz_free(void *p) {
  struct fz_state *s = p;
  if (!s) return;
  free(s->repidx);
  free(s);
}


static int fz_init(struct lnc_take_ctx *c, struct lnc_page *pg, struct fz_state **out) {
  const Lance__Encodings21__FullZipLayout *fz = pg->layout->full_zip_layout;
  if (!fz || !fz->value_compression) return lnc_page_err(c, LNC_ECORRUPT, "full-zip layout without a value encoding");
  struct fz_state *s = calloc(1, sizeof *s);
  if (!s) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  s->fz = fz;
  int rc = lnc_page_layers(c, (const int *)fz->layers, fz->n_layers, &s->L);
  if (rc) goto fail;
  uint32_t bits = fz->bits_rep + fz->bits_def;
  if (fz->bits_rep > 16 || fz->bits_def > 16) {
    rc = lnc_page_err(c, LNC_ECORRUPT, "control word of %u+%u bits", fz->bits_rep, fz->bits_def);
    goto fail;
  }
  s->cw_bytes = bits == 0 ? 0 : bits <= 8 ? 1
                            : bits <= 16  ? 2
                                          : 4;
  if (fz->details_case == LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE) {
    /* 0 bits: no value bytes, the values are a Constant (all null: Lance writes an all-null
     * fixed-size list so); a valid level takes its value from the encoding alone. */
    bool constant = fz->value_compression->compression_case == LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_CONSTANT;
    if ((fz->bits_per_value == 0 && !constant) || fz->bits_per_value % 8) {
      rc = lnc_page_err(c, LNC_EUNSUPPORTED, "full-zip values of %u bits", fz->bits_per_value);
      goto fail;
    }
    s->value_bytes = fz->bits_per_value / 8;
    s->fixed = true;
  } else if (fz->details_case == LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET) {
    if (fz->bits_per_offset != 32 && fz->bits_per_offset != 64) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "full-zip length prefix of %u bits", fz->bits_per_offset);
      goto fail;
    }
    s->len_bytes = fz->bits_per_offset / 8;
  } else {
    rc = lnc_page_err(c, LNC_ECORRUPT, "full-zip layout says neither value nor offset width");
    goto fail;
  }
  if (pg->n_buffers <= FZ_BUF_DATA) {
    rc = lnc_page_err(c, LNC_ECORRUPT, "full-zip page has no buffers");
    goto fail;
  }
  bool need_index = s->len_bytes || s->L.max_rep;
  if (need_index) {
    if (pg->n_buffers <= FZ_BUF_REPIDX) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "full-zip page has no repetition index");
      goto fail;
    }
    uint64_t len = pg->buf_len[FZ_BUF_REPIDX], entries = pg->rows + 1;
    if (len % entries || (len / entries != 1 && len / entries != 2 && len / entries != 4 && len / entries != 8)) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "repetition index of %llu bytes for %llu rows",
                        (unsigned long long)len, (unsigned long long)pg->rows);
      goto fail;
    }
    s->repidx_w = (uint32_t)(len / entries);
    if (len > c->repidx_max) {
      /* Policy: too large to keep; each take reads the two entries it needs first. */
      s->repidx_on_disk = true;
      pg->state_bytes = sizeof *s;
      *out = s;
      return 0;
    }
    s->repidx = malloc(len);
    if (!s->repidx) {
      rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
      goto fail;
    }
    struct lnc_read r = {pg->buf_off[FZ_BUF_REPIDX], len, s->repidx};
    if ((rc = lnc_io_read(c->io, &c->f->src, &r, 1, c->stats, c->err))) goto fail;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < entries; i++) {
      uint64_t v = lnc_rdw(s->repidx + i * s->repidx_w, s->repidx_w);
      if (v < prev || v > pg->buf_len[0]) {
        rc = lnc_page_err(c, LNC_ECORRUPT, "repetition index entry %llu (%llu) is out of order or range",
                          (unsigned long long)i, (unsigned long long)v);
        goto fail;
      }
      prev = v;
    }
    pg->state_bytes = sizeof *s + len;
  } else {
    uint64_t stride = (uint64_t)s->cw_bytes + s->value_bytes, need;
    if (__builtin_mul_overflow(stride, pg->rows, &need) || pg->buf_len[0] < need) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "data buffer of %llu bytes is too small for %llu rows",
                        (unsigned long long)pg->buf_len[0], (unsigned long long)pg->rows);
      goto fail;
    }
    pg->state_bytes = sizeof *s;
  }
  *out = s;
  return 0;
fail:
  fz_free(s);
  return rc;
}

/* A variable packed struct row, split into its fields and re-laid as the packed-row form the
 * assembler reads: for each field, u32 length then its (decoded) bytes. */
static int vps_row(struct lnc_take_ctx *c, const lnc_enc *e, struct lnc_slice row, struct lnc_slice *out) {
  size_t nf = e->variable_packed_struct ? e->variable_packed_struct->n_fields : 0;
  if (nf == 0 || nf > 64 || nf != c->leaf->n_children)
    return lnc_errf(c->err, LNC_ECORRUPT, "variable packed struct with %zu fields for %zu children", nf,
                    c->leaf->n_children);
  struct lnc_slice fields[64];
  int rc = lnc_enc_vps_split(e, row, c->arena, fields, nf, c->err);
  if (rc) return rc;
  size_t total = 0;
  for (size_t i = 0; i < nf; i++) total += 4 + fields[i].len;
  uint8_t *buf = lnc_arena_alloc(c->arena, total ? total : 1), *w = buf;
  if (!buf) return lnc_errf(c->err, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < nf; i++) {
    uint32_t l = (uint32_t)fields[i].len;
    memcpy(w, &l, 4);
    if (l) memcpy(w + 4, fields[i].p, l);
    w += 4 + l;
  }
  *out = (struct lnc_slice){buf, total};
  return 0;
}

/* Decodes one row's zipped bytes [p, p+len). */
static int decode_row(struct lnc_take_ctx *c, struct fz_state *s, const uint8_t *p, size_t len,
                      struct lnc_leafrows *out) {
  const Lance__Encodings21__FullZipLayout *fz = s->fz;
  size_t pos = 0;
  uint32_t def_mask = (1u << fz->bits_def) - 1;
  /* Without repetition a row is exactly one level; with it, levels run to the row's end. */
  do {
    uint16_t rep = 0, def = 0;
    if (s->cw_bytes) {
      if (s->cw_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "truncated control word");
      uint32_t cw = (uint32_t)lnc_rdw(p + pos, s->cw_bytes);
      def = (uint16_t)(cw & def_mask);
      rep = (uint16_t)(cw >> fz->bits_def);
      if (pos > 0 && s->L.max_rep && rep == s->L.max_rep)
        return lnc_page_err(c, LNC_ECORRUPT, "row range holds more than one row");
      pos += s->cw_bytes;
    }
    if (def > s->L.max_def) return lnc_page_err(c, LNC_ECORRUPT, "def level %u > %u", def, s->L.max_def);
    uint16_t canon = s->L.def_map[def];
    bool visible = lnc_def_visible(&s->L, canon);
    struct lnc_values v = {0};
    const struct lnc_values *vp = NULL;
    uint64_t offs[2];
    int rc;
    if (visible && s->fixed) {
      /* Fixed width: every visible level carries value bytes, meaningless when null. */
      if (s->value_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "truncated value");
      if (canon == 0) {
        rc = lnc_enc_fixed_per_value(fz->value_compression, (struct lnc_slice){p + pos, s->value_bytes},
                                     c->arena, &v, c->err);
        if (rc) return lnc_page_err(c, rc, "value: %s", c->err->message);
        /* A full-zip value is whole bytes: Lance zips a boolean as one byte, 0 or 1. */
        if (c->leaf->type == LNC_AT_BOOL && v.bits == 8 && v.n == 1 && v.data) {
          static const uint8_t bit[2] = {0, 1};
          v.data = &bit[v.data[0] != 0];
          v.bits = 1;
          v.data_len = 1;
        }
        vp = &v;
      }
      pos += s->value_bytes;
    } else if (visible && canon == 0) {
      /* Variable width: only valid levels carry a length prefix and bytes. */
      if (s->len_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "truncated length prefix");
      uint64_t vl = lnc_rdw(p + pos, s->len_bytes);
      pos += s->len_bytes;
      if (vl > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "value of %llu bytes overruns its row", (unsigned long long)vl);
      struct lnc_slice dec;
      if (fz->value_compression->compression_case ==
          LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT)
        rc = vps_row(c, fz->value_compression, (struct lnc_slice){p + pos, (size_t)vl}, &dec);
      else
        rc = lnc_enc_variable_per_value(fz->value_compression, (struct lnc_slice){p + pos, (size_t)vl},
                                        c->arena, &dec, c->err);
      if (rc) return lnc_page_err(c, rc, "value: %s", c->err->message);
      pos += vl;
      offs[0] = 0;
      offs[1] = dec.len;
      v = (struct lnc_values){.kind = LNC_VALUES_VARIABLE, .n = 1, .data = dec.p, .data_len = dec.len, .offsets = offs};
      vp = &v;
    }
    if ((rc = lnc_emit_level(c, &s->L, out, rep, def, vp, 0))) return rc;
  } while (s->L.max_rep && pos < len);
  if (pos != len && s->L.max_rep) return lnc_page_err(c, LNC_ECORRUPT, "row has %zu trailing bytes", len - pos);
  return 0;
}

struct fz_plan {
  uint8_t *entries;      /* uncached index: entries r and r+1 of each row */
  struct lnc_read *data; /* one read per row */
  uint64_t *row_len;     /* file values: each row's whole length (data[i].len may be its head) */
  bool pending, in_file; /* file values: ranges known, reads not listed yet / heads only */
};

/* Whether fixed-width values are their plain bytes: Flat without a buffer compression, or a
 * fixed-size list of such items without item validity (a vector column). */
static bool fz_raw_fixed(const lnc_enc *e) {
  if (e && e->compression_case == LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST) {
    if (!e->fixed_size_list || e->fixed_size_list->has_validity) return false;
    e = e->fixed_size_list->values;
  }
  return e && e->compression_case == LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT && e->flat &&
         !e->flat->data && e->flat->bits_per_value % 8 == 0;
}

/* Whether a page's values can stay in the file: plain bytes (no compression to undo), one
 * level per row (no repetition). Variable width: ranges from the cached index (no round for
 * it). Fixed width: rows without a control word (no value can be null: a null row's bytes
 * are whatever the writer left, where an answer's are zeros), each row its value. */
static bool fz_file_ok(const struct fz_state *s) {
  if (s->L.max_rep) return false;
  if (s->fixed) return s->cw_bytes == 0 && s->value_bytes && fz_raw_fixed(s->fz->value_compression);
  return s->repidx && !s->repidx_on_disk &&
         s->fz->value_compression->compression_case == LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE;
}

/* Lists one data read per row once the row's byte range is known. */
static int data_reads(struct lnc_page_job *j, struct fz_state *s, struct fz_plan *pl) {
  struct lnc_take_ctx *c = &j->c;
  struct lnc_page *pg = j->pg;
  for (size_t i = 0; i < j->n; i++) {
    uint64_t a, b, r = j->rows[i];
    if (pl->entries) {
      a = lnc_rdw(pl->entries + i * 2 * s->repidx_w, s->repidx_w);
      b = lnc_rdw(pl->entries + i * 2 * s->repidx_w + s->repidx_w, s->repidx_w);
      if (a > b || b > pg->buf_len[0])
        return lnc_page_err(c, LNC_ECORRUPT, "repetition index entry %llu is out of order or range",
                            (unsigned long long)r);
    } else if (s->repidx) {
      a = lnc_rdw(s->repidx + r * s->repidx_w, s->repidx_w);
      b = lnc_rdw(s->repidx + (r + 1) * s->repidx_w, s->repidx_w);
    } else {
      uint64_t stride = (uint64_t)s->cw_bytes + s->value_bytes;
      a = r * stride;
      b = a + stride;
    }
    pl->data[i] = (struct lnc_read){pg->buf_off[0] + a, b - a, NULL};
    if (pl->pending) continue; /* lnc_fullzip_commit lists the reads */
    uint8_t *dst = lnc_arena_alloc(c->arena, b - a ? b - a : 1);
    if (!dst) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    pl->data[i].dst = dst;
  }
  if (pl->pending) return 0;
  j->reads = pl->data;
  j->nreads = j->n;
  return 0;
}

/* Whether the page cache holds the bytes of every row the job reads. The page's whole buffer
 * seen resident says so without looking at rows. Otherwise each row is looked up in the file
 * mapping's regions (one cachestat per region per TTL, shared), and a row in a region seen
 * partly evicted is asked about on its own: a large page (a training table's images: 100 MB
 * pages of a 4.7 GB file) nearly always has a few pages taken by proactive reclaim somewhere,
 * and judging it whole sent every row of it through a read and a copy. Stops at the first
 * row not held: one is enough to read the column in. */
static bool fz_rows_resident(const struct lnc_page_job *j, const struct fz_plan *pl) {
  if (fz_resident(&j->c, j->pg, j->pg->state)) return true;
  struct lnc_source *src = &j->c.f->src;
  struct lnc_filemap *m = lnc_source_map(src);
  if (!m) return false;
  for (size_t i = 0; i < j->n; i++) {
    const struct lnc_read *r = &pl->data[i];
    if (r->len && !lnc_filemap_resident(m, r->off, r->len) && !lnc_source_resident(src, r->off, r->len))
      return false;
  }
  return true;
}

bool lnc_fullzip_file_pending(const struct lnc_page_job *j, uint64_t *bytes, bool *resident) {
  const struct fz_plan *pl = j->pg->kind == LNC_LAYOUT_FULLZIP ? j->plan : NULL;
  if (!pl || !pl->pending) return false;
  *bytes = 0;
  for (size_t i = 0; i < j->n; i++) *bytes += pl->data[i].len;
  *resident = fz_rows_resident(j, pl);
  return true;
}

int lnc_fullzip_commit(struct lnc_page_job *j, bool in_file) {
  struct lnc_take_ctx *c = &j->c;
  struct fz_plan *pl = j->pg->kind == LNC_LAYOUT_FULLZIP ? j->plan : NULL;
  if (!pl || !pl->pending) return 0; /* planned as usual: its reads are listed */
  const struct fz_state *s = j->pg->state;
  uint64_t head = (uint64_t)s->cw_bytes + s->len_bytes;
  if (in_file && !(pl->row_len = lnc_arena_alloc(c->arena, j->n * sizeof *pl->row_len)))
    return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < j->n; i++) {
    struct lnc_read *r = &pl->data[i];
    if (in_file) {
      pl->row_len[i] = r->len;
      if (r->len > head) r->len = head;
      if (!head) continue; /* a fixed row without a control word: nothing to read (no dst) */
    }
    if (!(r->dst = lnc_arena_alloc(c->arena, r->len ? r->len : 1))) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  }
  pl->pending = false;
  pl->in_file = in_file;
  j->reads = pl->data;
  j->nreads = in_file && !head ? 0 : j->n; /* fixed rows without a control word: nothing to read */
  return 0;
}

int lnc_fullzip_plan(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct lnc_page *pg = j->pg;
  int rc;
  if (!pg->state) {
    struct fz_state *s = NULL;
    if ((rc = fz_init(c, pg, &s))) return rc;
    pg->state = s;
    pg->free_state = fz_free;
  }
  struct fz_state *s = pg->state;
  struct fz_plan *pl = lnc_arena_alloc(c->arena, sizeof *pl);
  if (!pl) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  *pl = (struct fz_plan){0};
  pl->data = lnc_arena_alloc(c->arena, (j->n ? j->n : 1) * sizeof *pl->data);
  if (!pl->data) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  j->plan = pl;
  pl->pending = c->file_values && j->n && fz_file_ok(s);
  if (!s->repidx_on_disk || !j->n) return data_reads(j, s, pl);
  /* Uncached index: round 0 fetches entries r and r+1 of every row, round 1 the rows. */
  uint32_t w = s->repidx_w;
  pl->entries = lnc_arena_alloc(c->arena, j->n * 2 * w);
  struct lnc_read *idx = lnc_arena_alloc(c->arena, j->n * sizeof *idx);
  if (!pl->entries || !idx) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < j->n; i++)
    idx[i] = (struct lnc_read){pg->buf_off[1] + j->rows[i] * w, 2 * (uint64_t)w, pl->entries + i * 2 * w};
  j->reads = idx;
  j->nreads = j->n;
  return 0;
}

int lnc_fullzip_advance(struct lnc_page_job *j) {
  struct fz_plan *pl = j->plan;
  if (j->round == 1 && pl->entries) return data_reads(j, j->pg->state, pl);
  j->nreads = 0;
  return 0;
}

/* A row of an in-file column from its head (control word, length prefix; the whole row when
 * that is shorter): a null, or a value whose bytes are named where they lie, which must fill
 * the rest of the row exactly (one level per row: fz_file_ok). */
static int decode_row_in_file(struct lnc_take_ctx *c, struct fz_state *s, const struct lnc_read *r, uint64_t row_len,
                              struct lnc_leafrows *out) {
  int rc;
  if (s->fixed) { /* the whole row is the value (fz_file_ok: no control word) */
    LNC_ASSERT(!s->cw_bytes && row_len == s->value_bytes);
    if (c->levels && (rc = lnc_leafrows_push_level(out, 0, 0))) return lnc_page_err(c, rc, "out of memory");
    rc = lnc_valbuf_append_file(&out->values, r->off, row_len);
    if (rc == LNC_ENOMEM) return lnc_page_err(c, rc, "out of memory");
    if (rc) return lnc_page_err(c, LNC_ECORRUPT, "values of %llu bytes for this fixed-size list", (unsigned long long)row_len);
    return 0;
  }
  const uint8_t *p = r->dst;
  size_t len = (size_t)r->len, pos = 0;
  uint16_t def = 0;
  if (s->cw_bytes) {
    if (s->cw_bytes > len) return lnc_page_err(c, LNC_ECORRUPT, "truncated control word");
    def = (uint16_t)((uint32_t)lnc_rdw(p, s->cw_bytes) & ((1u << s->fz->bits_def) - 1));
    pos = s->cw_bytes;
  }
  if (def > s->L.max_def) return lnc_page_err(c, LNC_ECORRUPT, "def level %u > %u", def, s->L.max_def);
  uint16_t canon = s->L.def_map[def];
  if (!lnc_def_visible(&s->L, canon) || canon != 0) return lnc_emit_level(c, &s->L, out, 0, def, NULL, 0);
  if (s->len_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "truncated length prefix");
  uint64_t vl = lnc_rdw(p + pos, s->len_bytes);
  pos += s->len_bytes;
  if (vl != row_len - pos)
    return lnc_page_err(c, LNC_ECORRUPT, "value of %llu bytes in a row of %llu", (unsigned long long)vl,
                        (unsigned long long)row_len);
  if (c->levels && (rc = lnc_leafrows_push_level(out, 0, canon))) return lnc_page_err(c, rc, "out of memory");
  if ((rc = lnc_valbuf_append_file(&out->values, r->off + pos, vl)))
    return lnc_page_err(c, rc, rc == LNC_ENOMEM ? "out of memory" : "values of a column both in memory and in the file");
  return 0;
}

int lnc_fullzip_decode(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct fz_state *s = j->pg->state;
  struct fz_plan *pl = j->plan;
  int rc;
  for (size_t i = 0; i < j->n; i++) {
    if (c->stats) c->stats->bytes_decoded += pl->data[i].len;
    if (pl->in_file)
      rc = decode_row_in_file(c, s, &pl->data[i], pl->row_len[i], j->out);
    else
      rc = decode_row(c, s, pl->data[i].dst, (size_t)pl->data[i].len, j->out);
    if (rc) return rc;
    if ((rc = lnc_leafrows_end_row(j->out))) return lnc_page_err(c, rc, "out of memory");
  }
  return 0;
}
