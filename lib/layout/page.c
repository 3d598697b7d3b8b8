/* Page dispatch and the helpers every layout shares: layer validation, level emission and
 * error messages that name the file, column and page. */
#include "page.h"
#include "v20.h"
#include "../util/error.h"
#include <stdarg.h>
#include <stdio.h>

int lnc_page_err(struct lnc_take_ctx *c, int code, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lnc_errf(c->err, code, "%s: column %u (%s) page %u: %s", c->f->name, c->column,
                  c->leaf->name, c->page, msg);
}

int lnc_page_layers(struct lnc_take_ctx *c, const int *kinds, size_t n, struct lnc_layers *L) {
  int rc = lnc_layers_init(L, kinds, n, c->err);
  if (rc) return lnc_page_err(c, rc, "%s", c->err->message);
  if (L->n != c->depth)
    return lnc_page_err(c, LNC_ECORRUPT, "page has %u rep/def layers but the field nests %u deep",
                        L->n, c->depth);
  return 0;
}

int lnc_emit_level(struct lnc_take_ctx *c, const struct lnc_layers *L, struct lnc_leafrows *out,
                   uint16_t rep, uint16_t page_def, const struct lnc_values *vals, uint64_t i) {
  if (page_def > L->max_def || rep > L->max_rep)
    return lnc_page_err(c, LNC_ECORRUPT, "level (rep %u, def %u) out of range (max %u, %u)", rep,
                        page_def, L->max_rep, L->max_def);
  uint16_t canon = L->def_map[page_def];
  int rc;
  if (c->levels && (rc = lnc_leafrows_push_level(out, rep, canon)))
    return lnc_page_err(c, rc, "out of memory");
  if (!lnc_def_visible(L, canon)) return 0;
  if (canon == 0 && vals)
    rc = lnc_valbuf_append(&out->values, vals, i);
  else
    rc = lnc_valbuf_append_null(&out->values);
  if (rc) return lnc_page_err(c, rc, rc == LNC_ENOMEM ? "out of memory" : "value %llu is malformed",
                              (unsigned long long)i);
  return 0;
}

int lnc_page_plan(struct lnc_page_job *j) {
  j->reads = NULL;
  j->nreads = 0;
  j->round = 0;
  switch (j->pg->kind) {
  case LNC_LAYOUT_MINIBLOCK: return lnc_miniblock_plan(j);
  case LNC_LAYOUT_FULLZIP: return lnc_fullzip_plan(j);
  case LNC_LAYOUT_CONSTANT: return lnc_constpage_plan(j);
  case LNC_LAYOUT_BLOB: return lnc_blob_plan(j);
  case LNC_LAYOUT_V20: return lnc_v20_plan(j);
  }
  return lnc_page_err(&j->c, LNC_EUNSUPPORTED, "unsupported layout %d", (int)j->pg->kind);
}

int lnc_page_advance(struct lnc_page_job *j) {
  j->round++;
  switch (j->pg->kind) {
  case LNC_LAYOUT_FULLZIP: return lnc_fullzip_advance(j);
  case LNC_LAYOUT_BLOB: return lnc_blob_advance(j);
  case LNC_LAYOUT_V20: return lnc_v20_advance(j);
  default: j->nreads = 0; return 0;
  }
}

int lnc_page_decode(struct lnc_page_job *j) {
  switch (j->pg->kind) {
  case LNC_LAYOUT_MINIBLOCK: return lnc_miniblock_decode(j);
  case LNC_LAYOUT_FULLZIP: return lnc_fullzip_decode(j);
  case LNC_LAYOUT_CONSTANT: return lnc_constpage_decode(j);
  case LNC_LAYOUT_BLOB: return lnc_blob_decode(j);
  case LNC_LAYOUT_V20: return lnc_v20_decode(j);
  }
  return lnc_page_err(&j->c, LNC_EUNSUPPORTED, "unsupported layout %d", (int)j->pg->kind);
}

void lnc_page_release(struct lnc_page_job *j) {
  if (j->pg->kind == LNC_LAYOUT_BLOB) lnc_blob_release(j);
  if (j->pg->kind == LNC_LAYOUT_V20) lnc_v20_release(j);
}

int lnc_page_take(struct lnc_take_ctx *c, struct lnc_page *pg, const uint64_t *rows, size_t n,
                  struct lnc_leafrows *out) {
  struct lnc_page_job j = {.c = *c, .pg = pg, .rows = rows, .n = n, .out = out};
  int rc = lnc_page_plan(&j);
  while (!rc && j.nreads) {
    if ((rc = lnc_io_read(c->io, &c->f->src, j.reads, j.nreads, c->stats, c->err))) break;
    rc = lnc_page_advance(&j);
  }
  if (!rc) rc = lnc_page_decode(&j);
  lnc_page_release(&j);
  return rc;
}

size_t lnc_page_init_ranges(const struct lnc_page *pg, struct lnc_read *out, size_t max) {
  uint32_t bufs[4];
  unsigned n = 0;
  if (pg->state || !pg->layout) return 0;
  if (pg->kind == LNC_LAYOUT_MINIBLOCK)
    n = lnc_miniblock_init_bufs(pg, bufs);
  else if (pg->kind == LNC_LAYOUT_FULLZIP)
    n = lnc_fullzip_init_bufs(pg, bufs);
  else if (pg->kind == LNC_LAYOUT_CONSTANT) /* constant.c reads whichever buffers it has */
    for (uint32_t b = 0; b < pg->n_buffers && n < 4; b++) bufs[n++] = b;
  size_t k = 0;
  for (uint32_t i = 0; i < n && k < max; i++)
    if (bufs[i] < pg->n_buffers && pg->buf_len[bufs[i]])
      out[k++] = (struct lnc_read){pg->buf_off[bufs[i]], pg->buf_len[bufs[i]], NULL};
  return k;
}

int lnc_page_prepare(struct lnc_take_ctx *c, struct lnc_page *pg) {
  if (pg->state) return 0;
  if (pg->kind == LNC_LAYOUT_V20) return lnc_v20_prepare(c, pg);
  /* A take of no rows runs exactly the layout's initialisation and nothing else. */
  struct lnc_leafrows none = {0};
  int rc = lnc_page_take(c, pg, NULL, 0, &none);
  lnc_leafrows_free(&none);
  return rc;
}
