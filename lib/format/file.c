/* Opening a Lance data file: footer, offset tables, the FileDescriptor (schema, rows) and
 * every column's metadata with its pages' layouts. Every offset and size is checked against
 * the file length before it is used; a file that fails any check is refused whole. */
#include "reader.h"
#include "../util/error.h"
#include "../util/mem.h"
#include "../io/s3.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The footer, the file's last 40 bytes (Lance file format, "Footer"; little-endian): where
 * the column metadata, its offset table and the global buffers' offset table start, how
 * many global buffers and columns there are, the format version, and the magic. */
#define FOOTER_LEN 40
enum {
  FOOT_CM_START = 0,   /* u64 */
  FOOT_CMO_START = 8,  /* u64 */
  FOOT_GBO_START = 16, /* u64 */
  FOOT_N_GB = 24,      /* u32 */
  FOOT_N_COLS = 28,    /* u32 */
  FOOT_MAJOR = 32,     /* u16 */
  FOOT_MINOR = 34,     /* u16 */
  FOOT_MAGIC = 36,     /* "LANC" */
};
/* An entry of either offset table: (u64 position, u64 size). */
#define OFFSET_ENTRY 16
/* Metadata larger than this is refused rather than read into memory. */
#define MAX_METADATA_BYTES (1ull << 30)
/* Sanity bounds on footer counts (far above any real file; they keep a damaged footer from
 * sizing allocations): global buffers and columns. */
#define MAX_GLOBAL_BUFFERS 1000000u
#define MAX_COLUMNS        10000000u
/* Rows in a file, and rows or items in a page: a Lance row address keeps the row's offset in
 * its fragment in 32 bits, so no real data file holds more. Bounding the counts here keeps
 * every page's arithmetic on them ((rows + 1) * entry width, rows * stride) far from
 * wrapping; unbounded, a descriptor's length of 2^61 made a level table of 8 bytes. */
#define MAX_ROWS UINT32_MAX


static void free_pages(struct lnc_column *c) {
  for (uint32_t p = 0; p < c->n_pages; p++) {
    struct lnc_page *pg = &c->pages[p];
    if (pg->free_state) pg->free_state(pg->state);
    if (pg->layout) lance__encodings21__page_layout__free_unpacked(pg->layout, NULL);
    if (pg->enc20_any) lance__file__v2__any_message__free_unpacked(pg->enc20_any, NULL);
    if (pg->free_enc20) pg->free_enc20(pg);
    free(pg->buf_off);
  }
  free(c->pages);
  free(c->prep_msg);
}

void lnc_file_close(struct lnc_file *f) {
  if (!f) return;
  for (uint32_t i = 0; f->columns && i < f->n_columns; i++) free_pages(&f->columns[i]);
  free(f->columns);
  lnc_schema_free(f);
  lnc_filemap_unref(f->src.map); /* arrays naming its bytes keep theirs */
  if (f->src.fd >= 0) close(f->src.fd);
  if (f->src.fd_direct >= 0) close(f->src.fd_direct);
  if (f->dir_fd >= 0) close(f->dir_fd);
  lnc_s3_source_free(f->src.s3);
  free(f->name);
  free(f);
}

/* Unwraps Encoding{direct{Any}} and parses the PageLayout inside (2.1/2.2); a 2.0 page's
 * ArrayEncoding is kept in its Any for the layout floor, which parses it (layout/open.c). */
static int parse_page_layout(struct lnc_file *f, const Lance__File__V2__Encoding *enc, uint32_t col,
                             uint32_t page, struct lnc_page *pg, struct lnc_error *err) {
  if (!enc || enc->location_case != LANCE__FILE__V2__ENCODING__LOCATION_DIRECT || !enc->direct)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u page %u: page encoding is not stored directly",
                    f->name, col, page);
  Lance__File__V2__AnyMessage *any =
      lnc_pb_unpack(&lance__file__v2__any_message__descriptor, enc->direct->encoding.data, enc->direct->encoding.len);
  if (!any)
    return lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %u: page encoding does not parse",
                    f->name, col, page);
  int rc = 0;
  const char *url = any->type_url ? any->type_url : "";
  const char *suffix = strrchr(url, '/');
  suffix = suffix ? suffix + 1 : url;
  if (f->v20) {
    /* A page layout of another file version contradicts the footer: the file is damaged. */
    if (strcmp(suffix, "lance.encodings21.PageLayout") == 0)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %u: a 2.1 page layout '%s' in a 2.0 file",
                    f->name, col, page, url);
    else if (strcmp(suffix, "lance.encodings.ArrayEncoding") != 0)
      rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u page %u: unsupported page encoding type '%s' in a 2.0 file",
                    f->name, col, page, url);
    else {
      pg->enc20_any = any;
      pg->kind = LNC_LAYOUT_V20;
      return 0;
    }
  } else if (strcmp(suffix, "lance.encodings21.PageLayout") != 0) {
    rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u page %u: unsupported page encoding type '%s'",
                  f->name, col, page, url);
  } else {
    pg->layout = lnc_pb_unpack(&lance__encodings21__page_layout__descriptor, any->value.data, any->value.len);
    if (!pg->layout)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %u: PageLayout does not parse (or nests over %d levels)",
                    f->name, col, page, LNC_PB_MAX_DEPTH);
  }
  lance__file__v2__any_message__free_unpacked(any, NULL);
  return rc;
}

/* The refused field above (or at) the field that reads column ci, if any. */
static const struct lnc_field *column_field_unsupported(const struct lnc_file *f, uint32_t ci) {
  for (size_t i = 0; i < f->n_all_fields; i++) {
    const struct lnc_field *fld = f->all_fields[i];
    if (fld->column == (int)ci && fld->parent) {
      for (const struct lnc_field *a = fld; a; a = a->parent)
        if (a->unsupported) return a;
      return NULL;
    }
  }
  return NULL;
}

static int load_column(struct lnc_file *f, uint32_t ci, const uint8_t *bytes, size_t len,
                       struct lnc_error *err) {
  Lance__File__V2__ColumnMetadata *cm = lnc_pb_unpack(&lance__file__v2__column_metadata__descriptor, bytes, len);
  if (!cm) return lnc_errf(err, LNC_ECORRUPT, "%s: column %u: metadata does not parse", f->name, ci);
  struct lnc_column *c = &f->columns[ci];
  int rc = 0;
  c->pages = calloc(cm->n_pages ? cm->n_pages : 1, sizeof *c->pages);
  if (!c->pages) {
    rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    goto done;
  }
  c->n_pages = (uint32_t)cm->n_pages;
  uint64_t row = 0;
  for (size_t p = 0; p < cm->n_pages; p++) {
    Lance__File__V2__ColumnMetadata__Page *mp = cm->pages[p];
    struct lnc_page *pg = &c->pages[p];
    if (mp->n_buffer_offsets != mp->n_buffer_sizes || mp->n_buffer_offsets > 64) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %zu: %zu buffer offsets but %zu sizes",
                    f->name, ci, p, mp->n_buffer_offsets, mp->n_buffer_sizes);
      goto done;
    }
    pg->n_buffers = (uint32_t)mp->n_buffer_offsets;
    pg->buf_off = calloc(2 * (pg->n_buffers ? pg->n_buffers : 1), sizeof(uint64_t));
    if (!pg->buf_off) {
      rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
      goto done;
    }
    pg->buf_len = pg->buf_off + pg->n_buffers;
    for (uint32_t b = 0; b < pg->n_buffers; b++) {
      uint64_t o = mp->buffer_offsets[b], l = mp->buffer_sizes[b];
      if (o > f->src.size || l > f->src.size - o) {
        rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %zu: buffer %u [%llu, +%llu) is outside the file",
                      f->name, ci, p, b, (unsigned long long)o, (unsigned long long)l);
        goto done;
      }
      pg->buf_off[b] = o;
      pg->buf_len[b] = l;
    }
    /* 2.0: a column below a list counts items, not rows (checked by the layout floor's
     * lnc_v20_link when the file is opened). */
    if (mp->length > MAX_ROWS) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %zu claims %llu rows; at most %llu per page are supported",
                    f->name, ci, p, (unsigned long long)mp->length, (unsigned long long)MAX_ROWS);
      goto done;
    }
    if (!f->v20 && mp->length > f->num_rows - row) {
      /* A column of a field the schema refused (the items of a fixed-size list of structs
       * count its rows times its size) is never read: unsupported, not corrupt. */
      const struct lnc_field *u = column_field_unsupported(f, ci);
      if (u)
        rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u of field '%s' (%s)", f->name, ci, u->name, u->unsupported);
      else
        rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u: pages hold more rows than the file's %llu", f->name, ci,
                      (unsigned long long)f->num_rows);
      goto done;
    }
    pg->row_start = row;
    pg->rows = mp->length;
    row += mp->length;
    if ((rc = parse_page_layout(f, mp->encoding, ci, (uint32_t)p, pg, err))) goto done;
    if (f->v20) continue;
    switch (pg->layout->layout_case) {
    case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT: pg->kind = LNC_LAYOUT_MINIBLOCK; break;
    case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT: pg->kind = LNC_LAYOUT_CONSTANT; break;
    case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT: pg->kind = LNC_LAYOUT_FULLZIP; break;
    case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT: pg->kind = LNC_LAYOUT_BLOB; break;
    case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_SPARSE_LAYOUT:
      rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: unsupported layout: sparse (file version 2.3) in column %u page %zu",
                    f->name, ci, p);
      goto done;
    default:
      rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: unsupported layout: unknown page layout %d in column %u page %zu",
                    f->name, (int)pg->layout->layout_case, ci, p);
      goto done;
    }
  }
  if (!f->v20 && row != f->num_rows) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u: pages hold %llu rows, the file has %llu",
                  f->name, ci, (unsigned long long)row, (unsigned long long)f->num_rows);
    goto done;
  }
done:
  lance__file__v2__column_metadata__free_unpacked(cm, NULL);
  return rc;
}

/* A column whose page layout or encoding we do not read is kept with the reason (its field is
 * marked when the columns are bound): one such column must not make the file unreadable. */
static int load_column_or_mark(struct lnc_file *f, uint32_t ci, const uint8_t *bytes, size_t len,
                               struct lnc_error *err) {
  struct lnc_error cerr = {0};
  int rc = load_column(f, ci, bytes, len, &cerr);
  if (rc != LNC_EUNSUPPORTED) return rc ? lnc_errf(err, rc, "%s", cerr.message) : 0;
  struct lnc_column *c = &f->columns[ci];
  free_pages(c); /* also frees prep_msg */
  *c = (struct lnc_column){.prep_code = LNC_EUNSUPPORTED, .prep_msg = strdup(cerr.message)};
  return c->prep_msg ? 0 : lnc_errf(err, LNC_ENOMEM, "out of memory");
}

static int mark_unsupported_columns(struct lnc_file *f, struct lnc_error *err) {
  for (uint32_t c = 0; c < f->n_columns; c++) {
    struct lnc_field *leaf = f->columns[c].leaf;
    if (f->columns[c].prep_code != LNC_EUNSUPPORTED || !leaf || leaf->unsupported) continue;
    if (!(leaf->unsupported = strdup(f->columns[c].prep_msg))) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  return 0;
}

static void bind_columns(struct lnc_field *fld, struct lnc_file *f) {
  int col = f->v20 ? fld->col20 : fld->column;
  if (col >= 0 && (uint32_t)col < f->n_columns) f->columns[col].leaf = fld;
  for (size_t i = 0; i < fld->n_children; i++) bind_columns(fld->children[i], f);
}

/* The footer as read (see the FOOT_* offsets). */
struct footer {
  uint64_t cm_start;  /* column metadata section */
  uint64_t cmo_start; /* column metadata offset table */
  uint64_t gbo_start; /* global buffer offset table */
  uint32_t n_gb, n_cols;
};

/* A new lnc_file owning fd (closed on failure too). */
static int file_new(int fd, const char *name, struct lnc_file **out, struct lnc_error *err) {
  struct lnc_file *f = calloc(1, sizeof *f);
  if (!f) {
    close(fd);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  f->src.fd = fd;
  f->src.fd_direct = -1;
  f->dir_fd = -1;
  f->name = strdup(name ? name : "(fd)");
  if (!f->name) {
    lnc_file_close(f);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  f->src.name = f->name;
  *out = f;
  return 0;
}

/* Size and identity (device, inode, mtime) of a regular file; an object's size from its HEAD
 * (its version, the ETag, is held by the source and checked on every read). */
static int stat_file(struct lnc_file *f, struct lnc_error *err) {
  if (f->src.s3) {
    f->src.size = lnc_s3_source_object(f->src.s3)->size;
    return 0;
  }
  struct stat st;
  if (fstat(f->src.fd, &st) != 0)
    return lnc_errf(err, LNC_EIO, "%s: stat failed: %s", f->name, strerror(errno));
  if (!S_ISREG(st.st_mode)) return lnc_errf(err, LNC_EINVAL, "%s: not a regular file", f->name);
  f->src.size = (uint64_t)st.st_size;
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
  return 0;
}

/* The file's version from the footer: 2.0 is written as footer version 0.3 (Lance's readers
 * accept 2.0 too), and is called 2.0 here. */
static int set_version(struct lnc_file *f, const uint8_t *foot, struct lnc_error *err) {
  f->major = lnc_rd16(foot + FOOT_MAJOR);
  f->minor = lnc_rd16(foot + FOOT_MINOR);
  if ((f->major == 0 && f->minor == 3) || (f->major == 2 && f->minor == 0)) {
    f->v20 = true;
    f->major = 2;
    f->minor = 0;
    return 0;
  }
  if (f->major == 2 && (f->minor == 1 || f->minor == 2)) return 0;
  /* Legacy (0.1 before March 2024, 0.2 since; the same layout): read as 2.0 is, a column per
   * field (format/legacy.c). Lance also reads 0.0 as legacy; no writer ever wrote it. */
  if (f->major == 0 && f->minor < 3) {
    f->legacy = f->v20 = true;
    return 0;
  }
  return lnc_errf(err, LNC_EUNSUPPORTED, "%s: unknown Lance file version %u.%u (supported: legacy 0.1/0.2, 2.0, 2.1, 2.2)",
                  f->name, f->major, f->minor);
}

/* The legacy footer's length: the smallest file that can carry a version. */
#define LEGACY_FOOTER_LEN 16

/* Reads the footer and checks that its sections lie in order inside the file: column
 * metadata, then its offset table, then the global buffers' table, then the footer. */
static int read_footer(struct lnc_file *f, struct footer *ft, struct lnc_error *err) {
  uint8_t foot[FOOTER_LEN] = {0};
  int rc;
  if (f->src.size < LEGACY_FOOTER_LEN)
    return lnc_errf(err, LNC_ECORRUPT, "%s: file is %llu bytes, too short for a Lance footer",
                    f->name, (unsigned long long)f->src.size);
  /* Both footers end with the version and the magic; a legacy file may be shorter than 40. */
  uint64_t n = f->src.size < FOOTER_LEN ? f->src.size : FOOTER_LEN;
  if ((rc = lnc_source_pread(&f->src, foot + (FOOTER_LEN - n), n, f->src.size - n, err))) return rc;
  if (memcmp(foot + FOOT_MAGIC, "LANC", 4) != 0 && n < FOOTER_LEN)
    return lnc_errf(err, LNC_ECORRUPT, "%s: file is %llu bytes, too short for a Lance footer (and does not end with one)",
                    f->name, (unsigned long long)f->src.size);
  if (memcmp(foot + FOOT_MAGIC, "LANC", 4) != 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: bad magic: not a Lance file", f->name);
  if ((rc = set_version(f, foot, err)) || f->legacy) return rc;
  if (f->src.size < FOOTER_LEN)
    return lnc_errf(err, LNC_ECORRUPT, "%s: file is %llu bytes, too short for a Lance footer",
                    f->name, (unsigned long long)f->src.size);
  *ft = (struct footer){.cm_start = lnc_rd64(foot + FOOT_CM_START), .cmo_start = lnc_rd64(foot + FOOT_CMO_START), .gbo_start = lnc_rd64(foot + FOOT_GBO_START), .n_gb = lnc_rd32(foot + FOOT_N_GB), .n_cols = lnc_rd32(foot + FOOT_N_COLS)};
  uint64_t foot_at = f->src.size - FOOTER_LEN;
  if (ft->n_gb == 0 || ft->n_gb > MAX_GLOBAL_BUFFERS || ft->n_cols > MAX_COLUMNS ||
      ft->gbo_start > foot_at || (foot_at - ft->gbo_start) != (uint64_t)OFFSET_ENTRY * ft->n_gb ||
      ft->cmo_start > ft->gbo_start || (ft->gbo_start - ft->cmo_start) != (uint64_t)OFFSET_ENTRY * ft->n_cols ||
      ft->cm_start > ft->cmo_start)
    return lnc_errf(err, LNC_ECORRUPT,
                    "%s: footer offsets are inconsistent (columns %u at %llu, table %llu, %u global buffers at %llu, file %llu bytes)",
                    f->name, ft->n_cols, (unsigned long long)ft->cm_start, (unsigned long long)ft->cmo_start, ft->n_gb,
                    (unsigned long long)ft->gbo_start, (unsigned long long)f->src.size);
  return 0;
}

/* One read covers the column metadata, both offset tables and the footer; every global
 * buffer the table names must lie inside the file. The caller frees *meta. */
static int read_metadata(struct lnc_file *f, const struct footer *ft, uint8_t **meta, struct lnc_error *err) {
  uint64_t meta_len = f->src.size - ft->cm_start;
  if (meta_len > MAX_METADATA_BYTES)
    return lnc_errf(err, LNC_ECORRUPT, "%s: metadata section of %llu bytes is too large", f->name,
                    (unsigned long long)meta_len);
  f->meta_bytes = meta_len;
  *meta = malloc(meta_len ? meta_len : 1);
  if (!*meta) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  int rc = lnc_source_pread(&f->src, *meta, meta_len, ft->cm_start, err);
  if (rc) return rc;
  const uint8_t *gbo = *meta + (ft->gbo_start - ft->cm_start);
  for (uint32_t g = 0; g < ft->n_gb; g++) {
    uint64_t o = lnc_rd64(gbo + (uint64_t)OFFSET_ENTRY * g), l = lnc_rd64(gbo + (uint64_t)OFFSET_ENTRY * g + 8);
    if (o > f->src.size || l > f->src.size - o)
      return lnc_errf(err, LNC_ECORRUPT, "%s: global buffer %u [%llu, +%llu) is outside the file", f->name, g,
                      (unsigned long long)o, (unsigned long long)l);
  }
  return 0;
}

/* The FileDescriptor (schema and row count) is global buffer 0. */
static int read_descriptor(struct lnc_file *f, const struct footer *ft, const uint8_t *meta,
                           Lance__File__FileDescriptor **fdsc, struct lnc_error *err) {
  const uint8_t *gbo = meta + (ft->gbo_start - ft->cm_start);
  uint64_t gb0_off = lnc_rd64(gbo), gb0_len = lnc_rd64(gbo + 8);
  if (gb0_len > MAX_METADATA_BYTES)
    return lnc_errf(err, LNC_ECORRUPT, "%s: schema buffer of %llu bytes is too large", f->name,
                    (unsigned long long)gb0_len);
  uint8_t *gb0 = malloc(gb0_len ? gb0_len : 1);
  if (!gb0) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  int rc = lnc_source_pread(&f->src, gb0, gb0_len, gb0_off, err);
  if (!rc) {
    *fdsc = lnc_pb_unpack(&lance__file__file_descriptor__descriptor, gb0, gb0_len);
    if (!*fdsc) rc = lnc_errf(err, LNC_ECORRUPT, "%s: the file descriptor (global buffer 0) does not parse", f->name);
  }
  free(gb0);
  if (!rc && !(*fdsc)->schema) rc = lnc_errf(err, LNC_ECORRUPT, "%s: file descriptor has no schema", f->name);
  return rc;
}

/* Every column's metadata, each entry of the offset table checked to lie in the section. */
static int load_columns(struct lnc_file *f, const struct footer *ft, const uint8_t *meta, struct lnc_error *err) {
  f->n_columns = ft->n_cols;
  f->columns = calloc(ft->n_cols ? ft->n_cols : 1, sizeof *f->columns);
  if (!f->columns) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  const uint8_t *cmo = meta + (ft->cmo_start - ft->cm_start);
  for (uint32_t c = 0; c < ft->n_cols; c++) {
    uint64_t o = lnc_rd64(cmo + (uint64_t)OFFSET_ENTRY * c), l = lnc_rd64(cmo + (uint64_t)OFFSET_ENTRY * c + 8);
    if (o < ft->cm_start || o > ft->cmo_start || l > ft->cmo_start - o)
      return lnc_errf(err, LNC_ECORRUPT, "%s: column %u metadata [%llu, +%llu) is outside the metadata section",
                      f->name, c, (unsigned long long)o, (unsigned long long)l);
    int rc = load_column_or_mark(f, c, meta + (o - ft->cm_start), (size_t)l, err);
    if (rc) return rc;
  }
  return 0;
}

/* Schema and columns agree: every column is read by a field, every field's column exists. */
static int bind_schema(struct lnc_file *f, struct lnc_error *err) {
  bind_columns(&f->root, f);
  int rc = mark_unsupported_columns(f, err);
  if (rc) return rc;
  for (uint32_t c = 0; c < f->n_columns; c++)
    if (!f->columns[c].leaf)
      return lnc_errf(err, LNC_ECORRUPT, "%s: column %u is not read by any field of the schema", f->name, c);
  for (size_t i = 0; i < f->n_all_fields; i++) {
    struct lnc_field *fld = f->all_fields[i];
    if (fld->column >= (int)f->n_columns || fld->col20 >= (int)f->n_columns)
      return lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' needs column %d but the file has %u columns",
                      f->name, fld->name, fld->column, f->n_columns);
  }
  return 0;
}

/* The steps after file_new: what the file is, checked; closes f on failure. */
static int open_steps(struct lnc_file *f, struct lnc_file **out, struct lnc_error *err) {
  int rc;
  struct footer ft = {0};
  uint8_t *meta = NULL;
  Lance__File__FileDescriptor *fdsc = NULL;
  if (!(rc = stat_file(f, err)) && !(rc = read_footer(f, &ft, err)) && f->legacy) {
    if (!(rc = lnc_legacy_open(f, err))) rc = bind_schema(f, err);
  } else if (!rc && !(rc = read_metadata(f, &ft, &meta, err)) && !(rc = read_descriptor(f, &ft, meta, &fdsc, err))) {
    f->num_rows = fdsc->length;
    if (f->num_rows > MAX_ROWS)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: the file claims %llu rows; at most %llu per file are supported (a Lance "
                                       "row address holds the offset in its fragment in 32 bits)",
                    f->name, (unsigned long long)f->num_rows, (unsigned long long)MAX_ROWS);
    else if ((rc = lnc_schema_build(f, fdsc->schema, err)))
      lnc_err_prefix(err, "%s", f->name);
    else if (!(rc = load_columns(f, &ft, meta, err)))
      rc = bind_schema(f, err);
  }
  if (fdsc) lance__file__file_descriptor__free_unpacked(fdsc, NULL);
  free(meta);
  if (rc) {
    lnc_file_close(f);
    return rc;
  }
  *out = f;
  return 0;
}

static int open_fd(int fd, const char *name, struct lnc_file **out, struct lnc_error *err) {
  *out = NULL;
  struct lnc_file *f = NULL;
  int rc = file_new(fd, name, &f, err);
  return rc ? rc : open_steps(f, out, err);
}

int lnc_format_open_source(struct lnc_s3_source *src, const char *name, lnc_file **out,
                           struct lnc_error *err) {
  *out = NULL;
  struct lnc_file *f = NULL;
  int rc = file_new(-1, name, &f, err);
  if (rc) {
    lnc_s3_source_free(src);
    return rc;
  }
  f->src.s3 = src;
  return open_steps(f, out, err);
}

int lnc_format_open_fd(int fd, const char *name, lnc_file **out, struct lnc_error *err) {
  return open_fd(fd, name, out, err);
}

int lnc_format_open_path(const char *path, lnc_file **out, struct lnc_error *err) {
  *out = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return lnc_errf(err, e == ENOENT ? LNC_ENOTFOUND : LNC_EIO, "%s: cannot open: %s", path, strerror(e));
  }
  int rc = open_fd(fd, path, out, err);
  if (!rc) {
    /* Keep the directory for blob sidecar files, which live next to the data file. */
    char *dir = strdup(path);
    if (dir) {
      char *slash = strrchr(dir, '/');
      if (slash) {
        *slash = 0;
        if (!*dir) strcpy(dir, "/");
      }
      (*out)->dir_fd = open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      free(dir);
    }
  }
  return rc;
}

uint64_t lnc_file_num_rows(const lnc_file *f) { return f->num_rows; }

void lnc_file_version(const lnc_file *f, int *major, int *minor) {
  if (major) *major = f->major;
  if (minor) *minor = f->minor;
}

int lnc_file_schema(const lnc_file *f, struct ArrowSchema *out, struct lnc_error *err) {
  return lnc_schema_export(&f->root, out, err);
}
