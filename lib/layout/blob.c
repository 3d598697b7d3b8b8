/* Legacy blob pages (2.1, `lance-encoding:blob`): an inner layout stores one 16-byte
 * description per row (u64 position, u64 size of the bytes elsewhere in the file). A
 * description with size 0 and a non-zero position is a null, and the position then holds
 * the row's levels under the blob layout's own layers: definition << 16 | repetition. Rows come out as descriptors;
 * the take path turns them into bytes when the caller asks for bytes. */
#include "page.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

struct blob_state {
  struct lnc_page inner; /* the inner layout over the same page buffers */
  struct lnc_layers L;   /* the blob layout's layers */
};

static void blob_free(void *p) {
  struct blob_state *s = p;
  if (!s) return;
  if (s->inner.free_state) s->inner.free_state(s->inner.state);
  free(s);
}

struct blob_plan {
  struct lnc_page_job inner;
  struct lnc_leafrows desc; /* the descriptions, one per row */
};

int lnc_blob_plan(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct lnc_page *pg = j->pg;
  const Lance__Encodings21__BlobLayout *bl = pg->layout->blob_layout;
  int rc;
  if (!pg->state) {
    if (!bl || !bl->inner_layout ||
        bl->inner_layout->layout_case != LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT)
      return lnc_page_err(c, LNC_EUNSUPPORTED, "blob layout whose descriptions are not mini-block");
    struct blob_state *s = calloc(1, sizeof *s);
    if (!s) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    if ((rc = lnc_page_layers(c, (const int *)bl->layers, bl->n_layers, &s->L))) {
      free(s);
      return rc;
    }
    if (s->L.max_rep) {
      free(s);
      return lnc_page_err(c, LNC_EUNSUPPORTED, "blob column inside a list");
    }
    s->inner = *pg;
    s->inner.layout = bl->inner_layout;
    s->inner.kind = LNC_LAYOUT_MINIBLOCK;
    s->inner.state = NULL;
    s->inner.free_state = NULL;
    pg->state = s;
    pg->free_state = blob_free;
  }
  struct blob_state *s = pg->state;
  struct blob_plan *pl = lnc_arena_calloc(c->arena, 1, sizeof *pl);
  if (!pl) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  pl->inner = (struct lnc_page_job){.c = *c, .pg = &s->inner, .rows = j->rows, .n = j->n, .out = &pl->desc};
  pl->inner.c.depth = (uint32_t)bl->inner_layout->mini_block_layout->n_layers;
  pl->inner.c.levels = false;
  if ((rc = lnc_valbuf_init(&pl->desc.values, LNC_VALUES_FIXED, 128, 1))) return lnc_page_err(c, rc, "out of memory");
  j->plan = pl;
  bool fresh = s->inner.state == NULL;
  rc = lnc_page_plan(&pl->inner);
  if (fresh && !rc) pg->state_bytes = sizeof *s + s->inner.state_bytes;
  j->reads = pl->inner.reads;
  j->nreads = pl->inner.nreads;
  return rc;
}

int lnc_blob_advance(struct lnc_page_job *j) {
  struct blob_plan *pl = j->plan;
  int rc = lnc_page_advance(&pl->inner);
  j->reads = pl->inner.reads;
  j->nreads = pl->inner.nreads;
  return rc;
}

int lnc_blob_decode(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct blob_state *s = j->pg->state;
  struct blob_plan *pl = j->plan;
  int rc = lnc_page_decode(&pl->inner);
  if (!rc && pl->desc.values.n != j->n)
    rc = lnc_page_err(c, LNC_ECORRUPT, "blob descriptions: %llu for %zu rows",
                      (unsigned long long)pl->desc.values.n, j->n);
  struct lnc_values v = {.kind = LNC_VALUES_FIXED, .n = j->n, .bits = 128, .data = pl->desc.values.data, .data_len = pl->desc.values.data_len};
  for (size_t i = 0; i < j->n && !rc; i++) {
    uint64_t pos, size;
    memcpy(&pos, v.data + 16 * i, 8);
    memcpy(&size, v.data + 16 * i + 8, 8);
    if (size == 0 && pos != 0) {
      uint64_t def = pos >> 16, rep = pos & 0xffff;
      if (def == 0 || def > s->L.max_def || rep > s->L.max_rep)
        rc = lnc_page_err(c, LNC_ECORRUPT, "blob null with levels %#llx", (unsigned long long)pos);
      else
        rc = lnc_emit_level(c, &s->L, j->out, (uint16_t)rep, (uint16_t)def, NULL, 0);
    } else {
      if (pos > c->f->src.size || size > c->f->src.size - pos)
        rc = lnc_page_err(c, LNC_ECORRUPT, "blob at %llu of %llu bytes is outside the file",
                          (unsigned long long)pos, (unsigned long long)size);
      else
        rc = lnc_emit_level(c, &s->L, j->out, 0, 0, &v, i);
    }
    if (!rc && (rc = lnc_leafrows_end_row(j->out))) rc = lnc_page_err(c, rc, "out of memory");
  }
  return rc;
}

void lnc_blob_release(struct lnc_page_job *j) {
  struct blob_plan *pl = j->plan;
  if (pl) lnc_leafrows_free(&pl->desc);
  j->plan = NULL;
}
