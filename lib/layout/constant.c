/* All-null (2.1) and constant (2.2) pages: no value data per row. Levels, when the page has
 * lists or nulls to describe, are stored for the whole page (raw u16 in 2.1, possibly
 * compressed in 2.2) and kept in the search cache with the index of each row's first level. */
#include "page.h"
#include "../arrow/format.h"
#include "../io/io.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>

struct const_state {
  struct lnc_layers L;
  uint64_t n_levels;
  const uint16_t *rep, *def; /* page values, NULL when absent */
  uint64_t *row_start;       /* rows+1 level indices, when there are levels */
  struct lnc_values value;   /* the constant (n = 1), or n = 0 for all-null */
  struct lnc_arena arena;    /* owns everything above */
};

static void const_free(void *p) {
  struct const_state *s = p;
  if (!s) return;
  lnc_arena_free(&s->arena);
  free(s);
}


/* Reads page buffer b whole into the state's arena. */
static int read_buf(struct lnc_take_ctx *c, struct lnc_page *pg, struct const_state *s, uint32_t b,
                    struct lnc_slice *out) {
  uint64_t len = pg->buf_len[b];
  if (len > (1u << 30)) return lnc_page_err(c, LNC_ECORRUPT, "buffer %u of %llu bytes", b, (unsigned long long)len);
  uint8_t *p = lnc_arena_alloc(&s->arena, len ? len : 1);
  if (!p) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  struct lnc_read r = {pg->buf_off[b], len, p};
  int rc = lnc_io_read(c->io, &c->f->src, &r, 1, c->stats, c->err);
  if (rc) return rc;
  *out = (struct lnc_slice){p, (size_t)len};
  return 0;
}

static int load_levels(struct lnc_take_ctx *c, struct const_state *s, struct lnc_slice raw,
                       const lnc_enc *enc, uint64_t n_values, const uint16_t **out) {
  if (raw.len == 0) {
    *out = NULL;
    return 0;
  }
  if (enc) {
    int rc = lnc_enc_levels(enc, raw, n_values, &s->arena, out, c->err);
    if (rc) return lnc_page_err(c, rc, "levels: %s", c->err->message);
    s->n_levels = n_values;
    return 0;
  }
  if (raw.len % 2) return lnc_page_err(c, LNC_ECORRUPT, "raw level buffer of odd size %zu", raw.len);
  uint16_t *l = lnc_arena_alloc(&s->arena, raw.len);
  if (!l) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  memcpy(l, raw.p, raw.len);
  *out = l;
  s->n_levels = raw.len / 2;
  return 0;
}

static int const_init(struct lnc_take_ctx *c, struct lnc_page *pg, struct const_state **out) {
  const Lance__Encodings21__ConstantLayout *cl = pg->layout->constant_layout;
  if (!cl) return lnc_page_err(c, LNC_ECORRUPT, "constant layout missing");
  struct const_state *s = calloc(1, sizeof *s);
  if (!s) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  lnc_arena_init(&s->arena, 0);
  int rc = lnc_page_layers(c, (const int *)cl->layers, cl->n_layers, &s->L);
  if (rc) goto fail;
  bool inline_v = cl->inline_value.len > 0;
  uint32_t nb = pg->n_buffers, lev_at;
  struct lnc_slice scalar = {0};
  bool has_scalar = false;
  /* Buffer assignment by (inline value?, buffer count): see the format notes. */
  if (inline_v && (nb == 0 || nb == 2))
    lev_at = 0;
  else if (!inline_v && (nb == 1 || nb == 3)) {
    lev_at = 1;
    has_scalar = true;
  } else if (!inline_v && (nb == 0 || nb == 2))
    lev_at = 0;
  else {
    rc = lnc_page_err(c, LNC_ECORRUPT, "constant page with %u buffers", nb);
    goto fail;
  }
  if (has_scalar && (rc = read_buf(c, pg, s, 0, &scalar))) goto fail;
  if (nb >= lev_at + 2) {
    /* The row count is the file's word, and levels index rows (row_start below): bound it
     * like any decoder's output before decoding them (a 268 KB file of 2^28 rows once took
     * 3 GB here). */
    if (pg->rows >= LNC_ENC_MAX_DECOMPRESSED / sizeof *s->row_start) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "constant page of %llu rows with levels", (unsigned long long)pg->rows);
      goto fail;
    }
    struct lnc_slice rep_raw, def_raw;
    if ((rc = read_buf(c, pg, s, lev_at, &rep_raw)) || (rc = read_buf(c, pg, s, lev_at + 1, &def_raw))) goto fail;
    uint64_t nrep = cl->num_rep_values, ndef = cl->num_def_values;
    if ((rc = load_levels(c, s, rep_raw, cl->rep_compression, nrep, &s->rep))) goto fail;
    uint64_t nl_rep = s->rep ? s->n_levels : 0;
    if ((rc = load_levels(c, s, def_raw, cl->def_compression, ndef, &s->def))) goto fail;
    uint64_t nl_def = s->def ? s->n_levels : 0;
    if (s->rep && s->def && nl_rep != nl_def) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "%llu rep levels but %llu def levels", (unsigned long long)nl_rep,
                        (unsigned long long)nl_def);
      goto fail;
    }
    s->n_levels = s->rep ? nl_rep : nl_def;
  }
  if (!s->rep && !s->def) s->n_levels = pg->rows;
  if (s->rep) {
    if (s->L.max_rep == 0) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "rep levels without list layers");
      goto fail;
    }
    if (pg->rows > s->n_levels) { /* each row starts with a level of its own */
      rc = lnc_page_err(c, LNC_ECORRUPT, "%llu rows but %llu levels", (unsigned long long)pg->rows,
                        (unsigned long long)s->n_levels);
      goto fail;
    }
    s->row_start = lnc_arena_alloc(&s->arena, (pg->rows + 1) * sizeof *s->row_start);
    if (!s->row_start) {
      rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
      goto fail;
    }
    uint64_t r = 0;
    for (uint64_t i = 0; i < s->n_levels; i++) {
      if (s->rep[i] == s->L.max_rep) {
        if (r >= pg->rows) {
          rc = lnc_page_err(c, LNC_ECORRUPT, "more row starts than rows");
          goto fail;
        }
        s->row_start[r++] = i;
      } else if (i == 0) {
        rc = lnc_page_err(c, LNC_ECORRUPT, "page does not start with a row");
        goto fail;
      }
    }
    if (r != pg->rows) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "%llu row starts for %llu rows", (unsigned long long)r, (unsigned long long)pg->rows);
      goto fail;
    }
    s->row_start[r] = s->n_levels;
  } else if (s->n_levels != pg->rows) {
    rc = lnc_page_err(c, LNC_ECORRUPT, "%llu levels for %llu rows", (unsigned long long)s->n_levels,
                      (unsigned long long)pg->rows);
    goto fail;
  }
  /* The constant value as a one-value lnc_values. */
  const struct lnc_field *leaf = c->leaf;
  bool var = lnc_kind_is_bytes(leaf->type);
  struct lnc_slice bytes = {0};
  if (inline_v) bytes = (struct lnc_slice){cl->inline_value.data, cl->inline_value.len};
  if (has_scalar) {
    /* u32 n_buffers, n x u32 lengths, then the buffers: the Arrow buffers of one value. */
    if (scalar.len < 4) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "scalar buffer too short");
      goto fail;
    }
    uint32_t n = lnc_rd32(scalar.p);
    if (n == 0 || n > 8 || scalar.len < 4 + 4ull * n) {
      rc = lnc_page_err(c, LNC_ECORRUPT, "scalar buffer with %u buffers", n);
      goto fail;
    }
    size_t at = 4 + 4 * (size_t)n;
    struct lnc_slice parts[8];
    for (uint32_t i = 0; i < n; i++) {
      uint32_t l = lnc_rd32(scalar.p + 4 + 4 * i);
      if (l > scalar.len - at) {
        rc = lnc_page_err(c, LNC_ECORRUPT, "scalar buffer %u overruns", i);
        goto fail;
      }
      parts[i] = (struct lnc_slice){scalar.p + at, l};
      at += l;
    }
    bytes = var ? (n >= 2 ? parts[n - 1] : (struct lnc_slice){0}) : parts[n - 1];
  }
  if (inline_v || has_scalar) {
    s->value.n = 1;
    if (var) {
      uint64_t *offs = lnc_arena_alloc(&s->arena, 2 * sizeof *offs);
      if (!offs) {
        rc = lnc_page_err(c, LNC_ENOMEM, "out of memory");
        goto fail;
      }
      offs[0] = 0;
      offs[1] = bytes.len;
      s->value.kind = LNC_VALUES_VARIABLE;
      s->value.offsets = offs;
    } else {
      s->value.kind = LNC_VALUES_FIXED;
      s->value.bits = leaf->type == LNC_AT_BOOL ? 1 : leaf->byte_width * 8;
      if (leaf->type == LNC_AT_FIXED_LIST) {
        rc = lnc_page_err(c, LNC_EUNSUPPORTED, "constant fixed-size-list page");
        goto fail;
      }
      if (s->value.bits == 0 || (uint64_t)bytes.len * 8 < s->value.bits) {
        rc = lnc_page_err(c, LNC_ECORRUPT, "constant of %zu bytes for a %u-bit type", bytes.len, s->value.bits);
        goto fail;
      }
    }
    s->value.data = bytes.p;
    s->value.data_len = bytes.len;
  }
  pg->state_bytes = sizeof *s + s->arena.total;
  *out = s;
  return 0;
fail:
  const_free(s);
  return rc;
}

int lnc_constpage_plan(struct lnc_page_job *j) {
  int rc;
  if (!j->pg->state) {
    struct const_state *s = NULL;
    if ((rc = const_init(&j->c, j->pg, &s))) return rc;
    j->pg->state = s;
    j->pg->free_state = const_free;
  }
  return 0; /* no reads: levels and value are in the search cache */
}

int lnc_constpage_decode(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct const_state *s = j->pg->state;
  const struct lnc_values *v = s->value.n ? &s->value : NULL;
  int rc;
  /* Without stored def levels: every row is the constant, or null at the innermost layer
   * that can be null when there is no constant. */
  uint16_t plain_def = 0;
  if (!v) {
    plain_def = 1;
    if (s->L.max_def == 0) return lnc_page_err(c, LNC_ECORRUPT, "all-null page of a field that cannot be null");
  }
  for (size_t i = 0; i < j->n; i++) {
    uint64_t r = j->rows[i], a = r, b = r + 1;
    if (s->row_start) {
      a = s->row_start[r];
      b = s->row_start[r + 1];
    }
    for (uint64_t l = a; l < b; l++) {
      uint16_t rep = s->rep ? s->rep[l] : 0, def = s->def ? s->def[l] : plain_def;
      if ((rc = lnc_emit_level(c, &s->L, j->out, rep, def, v, 0))) return rc;
    }
    if ((rc = lnc_leafrows_end_row(j->out))) return lnc_page_err(c, rc, "out of memory");
  }
  return 0;
}
