/* Opening a legacy Lance data file (file version 0.1/0.2, the only format before 2.0): the
 * 16-byte footer, the Metadata message it points at (batches, page table, embedded schema),
 * and the page table, turned into the same model a 2.0 file has: every field with an id owns
 * a column, and each batch of the file is one page of every column. The layout floor's 2.0
 * walker then reads these pages by the legacy rules (layout/v20.c). Byte layout and sources:
 * docs/legacy-format.md.
 *
 * Every position the file stores is an absolute file offset and nothing is aligned or padded,
 * so every extent is checked against the file's size here, before a take can use it. */
#include "reader.h"
#include "../arrow/format.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>

/* The legacy footer: i64 position of the Metadata message, u16 major, u16 minor, "LANC"
 * (Lance's writer, previous/writer: write_magics). */
#define LEGACY_FOOTER_LEN 16
/* The page table: (i64 position, i64 length) per field id per batch. */
#define LEGACY_PT_ENTRY 16
/* Bounds far above what a real file holds, keeping a damaged one from sizing allocations:
 * messages (Metadata, the embedded Manifest) and the page table are read whole. */
#define LEGACY_MAX_MESSAGE    (1ull << 28)
#define LEGACY_MAX_PAGE_TABLE (1ull << 30)
/* Batches hold a writer's max_rows_per_group rows (1024 by default); rows are i32. */
#define LEGACY_MAX_BATCHES (1u << 22)
/* Field ids a page table spans (max id - min id + 1). */
#define LEGACY_MAX_FIELD_IDS 100000u

uint64_t lnc_legacy_value_bits(const struct lnc_field *fld) {
  if (fld->dict_index[0]) { /* keys, plain at the index type's width */
    switch (fld->dict_index[0]) {
    case 'c':
    case 'C': return 8;
    case 's':
    case 'S': return 16;
    case 'i':
    case 'I': return 32;
    default: return 64;
    }
  }
  switch (fld->type) {
  case LNC_AT_BOOL: return 1;
  case LNC_AT_FIXED_BINARY: return (uint64_t)fld->fixed_size * 8;
  case LNC_AT_FIXED_LIST: {
    /* one page of every item of every row: the items' width times the dimensions (the
     * schema floor bounded both, fsl_servable) */
    uint64_t items = 1;
    const struct lnc_field *x = fld;
    for (; x->type == LNC_AT_FIXED_LIST && x->n_children; x = x->children[0]) items *= (uint64_t)x->fixed_size;
    if (x->type == LNC_AT_FIXED_LIST || x->type == LNC_AT_NULL) return 0;
    return items * (x->type == LNC_AT_BOOL ? 1 : (uint64_t)x->byte_width * 8);
  }
  case LNC_AT_NULL:
  case LNC_AT_STRUCT:
  case LNC_AT_LIST:
  case LNC_AT_LARGE_LIST:
  case LNC_AT_MAP:
  case LNC_AT_UTF8:
  case LNC_AT_LARGE_UTF8:
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_BINARY: return 0;
  default: return (uint64_t)fld->byte_width * 8;
  }
}

/* What the legacy reader learned, for the steps below. */
struct legacy {
  uint64_t meta_at;          /* the Metadata's length prefix */
  Lance__File__Metadata *md; /* unpacked (owned) */
  uint32_t batches;          /* len(batch_offsets) - 1 */
  int32_t min_id, max_id;    /* field ids the page table spans */
  uint8_t *pt;               /* the page table (owned) */
};

/* A u32 length and the message after it, inside [at, end): read into a fresh buffer. */
static int read_framed(struct lnc_file *f, uint64_t at, uint64_t end, const char *what, uint8_t **out, size_t *len,
                       struct lnc_error *err) {
  uint8_t pre[4];
  if (at > end || end - at < 4)
    return lnc_errf(err, LNC_ECORRUPT, "%s: legacy %s at %llu is outside the file's tail (ends at %llu)", f->name,
                    what, (unsigned long long)at, (unsigned long long)end);
  int rc = lnc_source_pread(&f->src, pre, 4, at, err);
  if (rc) return rc;
  uint64_t n = lnc_rd32(pre);
  if (n > end - at - 4 || n > LEGACY_MAX_MESSAGE)
    return lnc_errf(err, LNC_ECORRUPT, "%s: legacy %s of %llu bytes at %llu runs past %llu", f->name, what,
                    (unsigned long long)n, (unsigned long long)at, (unsigned long long)end);
  *out = malloc(n ? n : 1);
  if (!*out) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  *len = (size_t)n;
  return lnc_source_pread(&f->src, *out, n, at + 4, err);
}

/* The Metadata message and its batches: offsets start at 0 and never decrease. */
static int read_legacy_metadata(struct lnc_file *f, struct legacy *L, struct lnc_error *err) {
  uint8_t foot[8];
  int rc = lnc_source_pread(&f->src, foot, 8, f->src.size - LEGACY_FOOTER_LEN, err);
  if (rc) return rc;
  L->meta_at = lnc_rd64(foot);
  uint8_t *buf = NULL;
  size_t len = 0;
  rc = read_framed(f, L->meta_at, f->src.size - LEGACY_FOOTER_LEN, "metadata", &buf, &len, err);
  if (!rc && !(L->md = lnc_pb_unpack(&lance__file__metadata__descriptor, buf, len)))
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: legacy metadata does not parse", f->name);
  free(buf);
  if (rc) return rc;
  const Lance__File__Metadata *md = L->md;
  if (md->n_batch_offsets < 1 || md->n_batch_offsets - 1 > LEGACY_MAX_BATCHES || md->batch_offsets[0] != 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: legacy batch offsets: %zu entries, the first %d (want 1..%u entries from 0)",
                    f->name, md->n_batch_offsets, md->n_batch_offsets ? md->batch_offsets[0] : 0, LEGACY_MAX_BATCHES + 1);
  for (size_t b = 1; b < md->n_batch_offsets; b++)
    if (md->batch_offsets[b] < md->batch_offsets[b - 1])
      return lnc_errf(err, LNC_ECORRUPT, "%s: legacy batch offsets decrease at batch %zu (%d after %d)", f->name, b,
                      md->batch_offsets[b], md->batch_offsets[b - 1]);
  L->batches = (uint32_t)(md->n_batch_offsets - 1);
  f->num_rows = (uint64_t)md->batch_offsets[L->batches];
  return 0;
}

/* The schema, from the Manifest the writer embeds (a legacy data file has no descriptor of
 * its own). Its fields 1 (Field list) and 5 (schema metadata) are those of lance.file.Schema,
 * so the message is read as one; the rest of the Manifest is skipped. */
static int read_legacy_schema(struct lnc_file *f, struct legacy *L, struct lnc_error *err) {
  uint64_t at = L->md->manifest_position;
  if (at == 0)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: legacy file without an embedded schema (Lance writes one in every data "
                                           "file; this one holds only its dataset's)",
                    f->name);
  uint8_t *buf = NULL;
  size_t len = 0;
  int rc = read_framed(f, at, L->meta_at, "schema (embedded manifest)", &buf, &len, err);
  Lance__File__Schema *sc = NULL;
  if (!rc && !(sc = lnc_pb_unpack(&lance__file__schema__descriptor, buf, len)))
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: legacy embedded manifest does not parse", f->name);
  free(buf);
  if (!rc && (rc = lnc_schema_build(f, sc, err))) lnc_err_prefix(err, "%s", f->name);
  if (sc) lance__file__schema__free_unpacked(sc, NULL);
  return rc;
}

/* The page table: field-major over ids min..max, a run of one entry per batch each. */
static int read_page_table(struct lnc_file *f, struct legacy *L, struct lnc_error *err) {
  L->min_id = INT32_MAX;
  L->max_id = -1;
  for (size_t i = 0; i < f->n_all_fields; i++) {
    int32_t id = f->all_fields[i]->id;
    if (id < 0) continue;
    if (id < L->min_id) L->min_id = id;
    if (id > L->max_id) L->max_id = id;
  }
  if (L->max_id < 0) return lnc_errf(err, LNC_ECORRUPT, "%s: legacy schema has no field ids", f->name);
  uint64_t ids = (uint64_t)L->max_id - (uint64_t)L->min_id + 1;
  if (ids > LEGACY_MAX_FIELD_IDS)
    return lnc_errf(err, LNC_ECORRUPT, "%s: legacy field ids span %llu", f->name, (unsigned long long)ids);
  uint64_t bytes = ids * L->batches * LEGACY_PT_ENTRY, at = L->md->page_table_position;
  if (bytes > LEGACY_MAX_PAGE_TABLE || at > L->meta_at || bytes > L->meta_at - at)
    return lnc_errf(err, LNC_ECORRUPT, "%s: legacy page table of %llu ids x %u batches at %llu runs past the metadata at %llu",
                    f->name, (unsigned long long)ids, L->batches, (unsigned long long)at, (unsigned long long)L->meta_at);
  L->pt = malloc(bytes ? bytes : 1);
  if (!L->pt) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  f->meta_bytes = bytes;
  return lnc_source_pread(&f->src, L->pt, bytes, at, err);
}

/* Values of fld stored in batch b, by what its page counts: a list's page holds rows + 1
 * offsets, a struct stores nothing and has its first child's count. */
static uint64_t stored_count(const struct lnc_file *f, const struct lnc_field *fld, uint32_t b) {
  while (fld->type == LNC_AT_STRUCT && fld->n_children) fld = fld->children[0];
  if (fld->col20 < 0) return UINT64_MAX; /* no column to count: never what a place needs */
  const struct lnc_page *pg = &f->columns[fld->col20].pages[b];
  if (lnc_kind_is_list(fld->type)) return pg->leg_len ? pg->leg_len - 1 : 0;
  return pg->leg_len;
}

/* The page's byte extents as buffers (checked inside the file): fixed-width values, booleans,
 * keys: buffer 0 = the values; strings/binaries: buffer 0 = the rows + 1 absolute i64
 * positions, buffer 1 = the file before them (where the values' bytes are); lists: buffer 0
 * = the offsets; structs and nulls: none. */
static int set_buffers(struct lnc_file *f, const struct lnc_field *fld, struct lnc_page *pg, uint32_t b,
                       struct lnc_error *err) {
  uint64_t n = pg->rows, bits = lnc_legacy_value_bits(fld), bytes = 0;
  bool list = lnc_kind_is_list(fld->type), var = lnc_kind_is_bytes(fld->type) && !fld->dict_index[0];
  if (fld->type == LNC_AT_STRUCT || (fld->type == LNC_AT_NULL)) return 0;
  if (!list && !var && !bits)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: field '%s' (%s): a legacy page of this type", f->name, fld->name,
                    fld->logical_type);
  if (list)
    bytes = (n + 1) * (fld->type == LNC_AT_LARGE_LIST ? 8 : 4);
  else if (var)
    bytes = (n + 1) * 8;
  else if (n > UINT64_MAX / (bits ? bits : 1) - 8)
    bytes = UINT64_MAX;
  else
    bytes = (n * bits + 7) / 8;
  uint64_t at = pg->leg_pos;
  if (at > f->src.size || bytes > f->src.size - at)
    return lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' batch %u: %llu values at %llu run past the file (%llu bytes)",
                    f->name, fld->name, b, (unsigned long long)n, (unsigned long long)at,
                    (unsigned long long)f->src.size);
  pg->n_buffers = var ? 2 : 1;
  if (!(pg->buf_off = calloc(2 * pg->n_buffers, sizeof(uint64_t)))) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  pg->buf_len = pg->buf_off + pg->n_buffers;
  pg->buf_off[0] = at;
  pg->buf_len[0] = bytes;
  if (var) pg->buf_len[1] = at; /* bytes before the positions: buf_off[1] = 0 */
  return 0;
}

/* Every field with an id gets a column of one page per batch, its entries from the table. */
static int make_columns(struct lnc_file *f, struct legacy *L, struct lnc_error *err) {
  uint32_t ncols = 0;
  for (size_t i = 0; i < f->n_all_fields; i++)
    if (f->all_fields[i]->col20 >= 0) ncols++;
  f->n_columns = ncols;
  if (!(f->columns = calloc(ncols ? ncols : 1, sizeof *f->columns))) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < f->n_all_fields; i++) {
    const struct lnc_field *fld = f->all_fields[i];
    if (fld->col20 < 0) continue;
    if ((uint32_t)fld->col20 >= ncols) return lnc_errf(err, LNC_EINTERNAL, "%s: column numbering", f->name);
    if (fld->id < L->min_id) /* a negative id other than the two the schema floor skips */
      return lnc_errf(err, LNC_ECORRUPT, "%s: legacy field '%s' has id %d", f->name, fld->name, fld->id);
    struct lnc_column *c = &f->columns[fld->col20];
    if (!(c->pages = calloc(L->batches ? L->batches : 1, sizeof *c->pages)))
      return lnc_errf(err, LNC_ENOMEM, "out of memory");
    c->n_pages = L->batches;
    const uint8_t *run = L->pt + (uint64_t)(fld->id - L->min_id) * L->batches * LEGACY_PT_ENTRY;
    for (uint32_t b = 0; b < L->batches; b++) {
      struct lnc_page *pg = &c->pages[b];
      pg->kind = LNC_LAYOUT_V20;
      pg->leg_pos = lnc_rd64(run + (uint64_t)b * LEGACY_PT_ENTRY);
      pg->leg_len = lnc_rd64(run + (uint64_t)b * LEGACY_PT_ENTRY + 8);
    }
  }
  return 0;
}

/* Rows of every page, top down: a top-level field has the batch's rows, a struct's child the
 * struct's, a list's child the list's items (what the child's pages hold). Each page must
 * store exactly that many values; then its extents are set. */
static int size_pages(struct lnc_file *f, struct legacy *L, struct lnc_error *err) {
  const int32_t *bo = L->md->batch_offsets;
  for (size_t i = 0; i < f->n_all_fields; i++) { /* pre-order: a parent's rows come first */
    struct lnc_field *fld = f->all_fields[i];
    if (fld->col20 < 0 || lnc_schema_unsupported(fld)) continue;
    struct lnc_column *c = &f->columns[fld->col20];
    const struct lnc_field *par = fld->parent && fld->parent->col20 >= 0 ? fld->parent : NULL;
    uint64_t row = 0;
    for (uint32_t b = 0; b < L->batches; b++) {
      struct lnc_page *pg = &c->pages[b];
      uint64_t want = !par                          ? (uint64_t)(bo[b + 1] - bo[b])
                      : lnc_kind_is_list(par->type) ? stored_count(f, fld, b)
                                                    : f->columns[par->col20].pages[b].rows;
      if (par && lnc_kind_is_list(par->type) && fld->type == LNC_AT_STRUCT) want = stored_count(f, fld, b);
      uint64_t has = fld->type == LNC_AT_STRUCT ? want : stored_count(f, fld, b);
      if (has != want || want > UINT32_MAX)
        return lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' batch %u stores %llu values, its place needs %llu", f->name,
                        fld->name, b, (unsigned long long)has, (unsigned long long)want);
      pg->row_start = row;
      pg->rows = want;
      row += want;
    }
    /* A type no legacy page holds (a fixed-size list of nulls): that field alone is refused. */
    struct lnc_error ferr = {0};
    int rc = 0;
    for (uint32_t b = 0; b < L->batches && !rc; b++) rc = set_buffers(f, fld, &c->pages[b], b, &ferr);
    if (rc == LNC_EUNSUPPORTED) {
      if (!(fld->unsupported = strdup(ferr.message))) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    } else if (rc) {
      return lnc_errf(err, rc, "%s", ferr.message);
    }
  }
  return 0;
}

int lnc_legacy_open(struct lnc_file *f, struct lnc_error *err) {
  struct legacy L = {0};
  int rc;
  if (!(rc = read_legacy_metadata(f, &L, err)) && !(rc = read_legacy_schema(f, &L, err)) &&
      !(rc = read_page_table(f, &L, err)) && !(rc = make_columns(f, &L, err)))
    rc = size_pages(f, &L, err);
  if (L.md) lance__file__metadata__free_unpacked(L.md, NULL);
  free(L.pt);
  return rc;
}
