/* lnc_file_describe_json: the file as JSON for `lancectl inspect` and the daemon's metadata
 * route — version, rows, schema tree, and per column its pages with layout, encoding trees,
 * buffer sizes and search-cache state. Encodings are named as lnc_enc_describe writes them. */
#include "../format/reader.h"
#include "../encoding/encoding.h"
#include "v20.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <string.h>

static const char *layer_name(int k) {
  switch (k) {
  case 1: return "all_valid_item";
  case 2: return "all_valid_list";
  case 3: return "nullable_item";
  case 4: return "nullable_list";
  case 5: return "emptyable_list";
  case 6: return "null_and_empty_list";
  default: return "unknown";
  }
}

static int put_enc(struct lnc_buf *b, const char *key, const lnc_enc *e) {
  if (!e) return 0;
  struct lnc_buf t = {0};
  int rc = lnc_enc_describe(e, &t);
  if (!rc) {
    rc = lnc_buf_printf(b, ",\"%s\":", key);
    if (!rc) rc = lnc_buf_json_str(b, (const char *)t.data, t.len);
  }
  lnc_buf_free(&t);
  return rc;
}

static int put_layers(struct lnc_buf *b, const Lance__Encodings21__RepDefLayer *l, size_t n) {
  int rc = lnc_buf_puts(b, ",\"layers\":[");
  for (size_t i = 0; i < n && !rc; i++) rc = lnc_buf_printf(b, "%s\"%s\"", i ? "," : "", layer_name((int)l[i]));
  return rc ? rc : lnc_buf_putc(b, ']');
}

static int put_layout(struct lnc_buf *b, const Lance__Encodings21__PageLayout *pl, int depth) {
  int rc = 0;
  if (depth > 4) return lnc_buf_puts(b, "{\"layout\":\"nested too deep\"}");
  switch (pl->layout_case) {
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT: {
    const Lance__Encodings21__MiniBlockLayout *m = pl->mini_block_layout;
    rc = lnc_buf_printf(b, "{\"layout\":\"mini_block\",\"num_items\":%llu,\"num_buffers\":%llu,"
                           "\"repetition_index_depth\":%u,\"large_chunks\":%s",
                        (unsigned long long)m->num_items, (unsigned long long)m->num_buffers,
                        m->repetition_index_depth, m->has_large_chunk ? "true" : "false");
    if (!rc) rc = put_enc(b, "values", m->value_compression);
    if (!rc) rc = put_enc(b, "rep", m->rep_compression);
    if (!rc) rc = put_enc(b, "def", m->def_compression);
    if (!rc && m->dictionary) {
      rc = put_enc(b, "dictionary", m->dictionary);
      if (!rc) rc = lnc_buf_printf(b, ",\"dictionary_items\":%llu", (unsigned long long)m->num_dictionary_items);
    }
    if (!rc) rc = put_layers(b, m->layers, m->n_layers);
    break;
  }
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT: {
    const Lance__Encodings21__FullZipLayout *z = pl->full_zip_layout;
    rc = lnc_buf_printf(b, "{\"layout\":\"full_zip\",\"bits_rep\":%u,\"bits_def\":%u,", z->bits_rep, z->bits_def);
    if (!rc) {
      if (z->details_case == LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE)
        rc = lnc_buf_printf(b, "\"bits_per_value\":%u", z->bits_per_value);
      else
        rc = lnc_buf_printf(b, "\"bits_per_offset\":%u", z->bits_per_offset);
    }
    if (!rc) rc = lnc_buf_printf(b, ",\"num_items\":%u,\"num_visible_items\":%u", z->num_items, z->num_visible_items);
    if (!rc) rc = put_enc(b, "values", z->value_compression);
    if (!rc) rc = put_layers(b, z->layers, z->n_layers);
    break;
  }
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT: {
    const Lance__Encodings21__ConstantLayout *c = pl->constant_layout;
    rc = lnc_buf_printf(b, "{\"layout\":\"constant\",\"inline_value_bytes\":%zu", c->inline_value.len);
    if (!rc) rc = put_enc(b, "rep", c->rep_compression);
    if (!rc) rc = put_enc(b, "def", c->def_compression);
    if (!rc) rc = put_layers(b, c->layers, c->n_layers);
    break;
  }
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT: {
    const Lance__Encodings21__BlobLayout *bl = pl->blob_layout;
    rc = lnc_buf_puts(b, "{\"layout\":\"blob\"");
    if (!rc && bl->inner_layout) {
      rc = lnc_buf_puts(b, ",\"inner\":");
      if (!rc) rc = put_layout(b, bl->inner_layout, depth + 1);
    }
    if (!rc) rc = put_layers(b, bl->layers, bl->n_layers);
    break;
  }
  default:
    rc = lnc_buf_printf(b, "{\"layout\":\"unknown(%d)\"", (int)pl->layout_case);
  }
  return rc ? rc : lnc_buf_putc(b, '}');
}

/* A 2.0 page: its ArrayEncoding tree and what one row of it costs to read (a legacy file's
 * pages are read by the same walker: what its field's type says the page holds). */
static int put_v20(struct lnc_buf *b, const struct lnc_page *pg, bool legacy) {
  struct lnc_buf t = {0};
  int rc = lnc_v20_describe(pg, &t);
  if (!rc) rc = lnc_buf_printf(b, "{\"layout\":\"%s\",\"tree\":", legacy ? "legacy" : "v2.0");
  if (!rc) rc = lnc_buf_json_str(b, (const char *)t.data, t.len);
  if (!rc) rc = lnc_buf_printf(b, ",\"reads_per_row\":\"%s\"}", lnc_v20_reads_per_row(pg));
  lnc_buf_free(&t);
  return rc;
}

static int put_field(struct lnc_buf *b, const struct lnc_field *f) {
  int rc = lnc_buf_puts(b, "{\"name\":");
  if (!rc) rc = lnc_buf_json_str(b, f->name, strlen(f->name));
  if (!rc) rc = lnc_buf_puts(b, ",\"type\":");
  if (!rc) rc = lnc_buf_json_str(b, f->logical_type ? f->logical_type : f->format,
                                 strlen(f->logical_type ? f->logical_type : f->format));
  if (!rc) rc = lnc_buf_puts(b, ",\"arrow_format\":");
  if (!rc) rc = lnc_buf_json_str(b, f->format, strlen(f->format));
  if (!rc) rc = lnc_buf_printf(b, ",\"nullable\":%s", f->nullable ? "true" : "false");
  if (!rc && f->id != -2) rc = lnc_buf_printf(b, ",\"id\":%d", f->id);
  if (!rc && f->column >= 0)
    rc = lnc_buf_printf(b, ",\"column\":%d", f->column);
  else if (!rc && f->col20 >= 0)
    rc = lnc_buf_printf(b, ",\"column\":%d", f->col20);
  if (!rc && f->packed) rc = lnc_buf_puts(b, ",\"packed\":true");
  if (!rc && f->unsupported) {
    rc = lnc_buf_puts(b, ",\"unsupported\":");
    if (!rc) rc = lnc_buf_json_str(b, f->unsupported, strlen(f->unsupported));
  }
  if (!rc && f->blob) rc = lnc_buf_puts(b, ",\"blob\":true");
  if (!rc && f->n_children) {
    rc = lnc_buf_puts(b, ",\"children\":[");
    for (size_t i = 0; i < f->n_children && !rc; i++) {
      if (i) rc = lnc_buf_putc(b, ',');
      if (!rc) rc = put_field(b, f->children[i]);
    }
    if (!rc) rc = lnc_buf_putc(b, ']');
  }
  return rc ? rc : lnc_buf_putc(b, '}');
}

static void column_path(const struct lnc_field *f, char *out, size_t cap) {
  const struct lnc_field *chain[64];
  size_t n = 0;
  for (const struct lnc_field *x = f; x && x->parent && n < 64; x = x->parent) chain[n++] = x;
  size_t at = 0;
  out[0] = 0;
  while (n--) {
    size_t l = strlen(chain[n]->name);
    if (at + l + 2 >= cap) break;
    if (at) out[at++] = '.';
    memcpy(out + at, chain[n]->name, l);
    at += l;
    out[at] = 0;
  }
}

int lnc_file_describe_json(lnc_file *f, struct lnc_buf *out, struct lnc_error *err) {
  struct lnc_buf *b = out;
  int rc = lnc_buf_printf(b, "{\"version\":\"%u.%u\",\"num_rows\":%llu,\"file_bytes\":%llu,\"schema\":[",
                          f->major, f->minor, (unsigned long long)f->num_rows, (unsigned long long)f->src.size);
  for (size_t i = 0; i < f->root.n_children && !rc; i++) {
    if (i) rc = lnc_buf_putc(b, ',');
    if (!rc) rc = put_field(b, f->root.children[i]);
  }
  if (!rc) rc = lnc_buf_puts(b, "],\"columns\":[");
  size_t cache_bytes = 0;
  for (uint32_t c = 0; c < f->n_columns && !rc; c++) {
    struct lnc_column *col = &f->columns[c];
    char path[512];
    column_path(col->leaf, path, sizeof path);
    uint64_t bytes = 0;
    for (uint32_t p = 0; p < col->n_pages; p++)
      for (uint32_t k = 0; k < col->pages[p].n_buffers; k++) bytes += col->pages[p].buf_len[k];
    rc = lnc_buf_printf(b, "%s{\"column\":%u,\"field\":", c ? "," : "", c);
    if (!rc) rc = lnc_buf_json_str(b, path, strlen(path));
    if (!rc && col->prep_msg) {
      rc = lnc_buf_printf(b, ",\"%s\":", col->prep_code == LNC_EUNSUPPORTED ? "unsupported" : "error");
      if (!rc) rc = lnc_buf_json_str(b, col->prep_msg, strlen(col->prep_msg));
    }
    if (!rc) rc = lnc_buf_printf(b, ",\"bytes\":%llu,\"pages\":[", (unsigned long long)bytes);
    for (uint32_t p = 0; p < col->n_pages && !rc; p++) {
      struct lnc_page *pg = &col->pages[p];
      cache_bytes += pg->state_bytes;
      rc = lnc_buf_printf(b, "%s{\"page\":%u,\"row_start\":%llu,\"rows\":%llu,\"buffers\":[", p ? "," : "", p,
                          (unsigned long long)pg->row_start, (unsigned long long)pg->rows);
      for (uint32_t k = 0; k < pg->n_buffers && !rc; k++)
        rc = lnc_buf_printf(b, "%s%llu", k ? "," : "", (unsigned long long)pg->buf_len[k]);
      if (!rc) rc = lnc_buf_printf(b, "],\"cached\":%s,\"cache_bytes\":%zu,", pg->state ? "true" : "false",
                                   pg->state_bytes);
      if (!rc && pg->n_chunks) rc = lnc_buf_printf(b, "\"chunks\":%u,", pg->n_chunks);
      if (!rc) rc = lnc_buf_puts(b, "\"encoding\":");
      if (!rc && pg->kind == LNC_LAYOUT_V20)
        rc = put_v20(b, pg, f->legacy);
      else if (!rc)
        rc = put_layout(b, pg->layout, 0);
      if (!rc) rc = lnc_buf_putc(b, '}');
    }
    if (!rc) rc = lnc_buf_puts(b, "]}");
  }
  if (!rc) rc = lnc_buf_printf(b, "],\"search_cache_bytes\":%zu}", cache_bytes);
  if (rc) return lnc_errf(err, rc, "out of memory");
  return 0;
}
