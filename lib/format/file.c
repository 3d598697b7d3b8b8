/* Opening a Lance data file: footer, offset tables, the FileDescriptor (schema, rows) and
 * every column's metadata with its pages' layouts. Every offset and size is checked against
 * the file length before it is used; a file that fails any check is refused whole. */
#include "reader.h"
#include "../util/error.h"
#include "../util/mem.h"
#include "../layout/v20.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FOOTER_LEN 40
/* Metadata larger than this is refused rather than read into memory. */
#define MAX_METADATA_BYTES (1ull << 30)


int lnc_file_pread(struct lnc_file *f, void *dst, uint64_t len, uint64_t off,
                   struct lnc_error *err) {
  if (off > f->size || len > f->size - off)
    return lnc_errf(err, LNC_ECORRUPT, "%s: read of %llu bytes at %llu is past the end (%llu bytes)",
                    f->name, (unsigned long long)len, (unsigned long long)off,
                    (unsigned long long)f->size);
  uint8_t *d = dst;
  while (len) {
    ssize_t n = pread(f->fd, d, len > (1u << 30) ? (1u << 30) : len, (off_t)off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return lnc_errf(err, LNC_EIO, "%s: read failed: %s", f->name, strerror(errno));
    }
    if (n == 0) return lnc_errf(err, LNC_EIO, "%s: file shrank while reading", f->name);
    d += n; off += (uint64_t)n; len -= (uint64_t)n;
  }
  return 0;
}

static void free_pages(struct lnc_column *c) {
  for (uint32_t p = 0; p < c->n_pages; p++) {
    struct lnc_page *pg = &c->pages[p];
    if (pg->free_state) pg->free_state(pg->state);
    if (pg->layout) lance__encodings21__page_layout__free_unpacked(pg->layout, NULL);
    lnc_v20_free_page(pg);
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
  if (f->fd >= 0) close(f->fd);
  if (f->fd_direct >= 0) close(f->fd_direct);
  if (f->dir_fd >= 0) close(f->dir_fd);
  free(f->name);
  free(f);
}

/* Unwraps Encoding{direct{Any}} and parses the PageLayout inside. */
static int parse_page_layout(struct lnc_file *f, const Lance__File__V2__Encoding *enc, uint32_t col,
                             uint32_t page, Lance__Encodings21__PageLayout **out,
                             struct lnc_error *err) {
  if (!enc || enc->location_case != LANCE__FILE__V2__ENCODING__LOCATION_DIRECT || !enc->direct)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u page %u: page encoding is not stored directly",
                    f->name, col, page);
  Lance__File__V2__AnyMessage *any = lance__file__v2__any_message__unpack(
      NULL, enc->direct->encoding.len, enc->direct->encoding.data);
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
    else
      rc = lnc_v20_parse_page(f, col, page, any->value.data, any->value.len, err);
  } else if (strcmp(suffix, "lance.encodings21.PageLayout") != 0) {
    rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: column %u page %u: unsupported page encoding type '%s'",
                  f->name, col, page, url);
  } else {
    *out = lance__encodings21__page_layout__unpack(NULL, any->value.len, any->value.data);
    if (!*out)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %u: PageLayout does not parse",
                    f->name, col, page);
  }
  lance__file__v2__any_message__free_unpacked(any, NULL);
  return rc;
}

static int load_column(struct lnc_file *f, uint32_t ci, const uint8_t *bytes, size_t len,
                       struct lnc_error *err) {
  Lance__File__V2__ColumnMetadata *cm = lance__file__v2__column_metadata__unpack(NULL, len, bytes);
  if (!cm) return lnc_errf(err, LNC_ECORRUPT, "%s: column %u: metadata does not parse", f->name, ci);
  struct lnc_column *c = &f->columns[ci];
  int rc = 0;
  c->pages = calloc(cm->n_pages ? cm->n_pages : 1, sizeof *c->pages);
  if (!c->pages) { rc = lnc_errf(err, LNC_ENOMEM, "out of memory"); goto done; }
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
    if (!pg->buf_off) { rc = lnc_errf(err, LNC_ENOMEM, "out of memory"); goto done; }
    pg->buf_len = pg->buf_off + pg->n_buffers;
    for (uint32_t b = 0; b < pg->n_buffers; b++) {
      uint64_t o = mp->buffer_offsets[b], l = mp->buffer_sizes[b];
      if (o > f->size || l > f->size - o) {
        rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u page %zu: buffer %u [%llu, +%llu) is outside the file",
                      f->name, ci, p, b, (unsigned long long)o, (unsigned long long)l);
        goto done;
      }
      pg->buf_off[b] = o;
      pg->buf_len[b] = l;
    }
    /* 2.0: a column below a list counts items, not rows (checked by lnc_v20_link). */
    if (!f->v20 && mp->length > f->num_rows - row) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u: pages hold more rows than the file's %llu",
                    f->name, ci, (unsigned long long)f->num_rows);
      goto done;
    }
    pg->row_start = row;
    pg->rows = mp->length;
    row += mp->length;
    if ((rc = parse_page_layout(f, mp->encoding, ci, (uint32_t)p, &pg->layout, err))) goto done;
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

static int open_fd(int fd, const char *name, struct lnc_file **out, struct lnc_error *err) {
  *out = NULL;
  struct lnc_file *f = calloc(1, sizeof *f);
  if (!f) { close(fd); return lnc_errf(err, LNC_ENOMEM, "out of memory"); }
  f->fd = fd;
  f->fd_direct = -1;
  f->dir_fd = -1;
  f->name = strdup(name ? name : "(fd)");
  if (!f->name) { lnc_file_close(f); return lnc_errf(err, LNC_ENOMEM, "out of memory"); }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int rc = lnc_errf(err, LNC_EIO, "%s: stat failed: %s", name, strerror(errno));
    lnc_file_close(f);
    return rc;
  }
  if (!S_ISREG(st.st_mode)) {
    lnc_file_close(f);
    return lnc_errf(err, LNC_EINVAL, "%s: not a regular file", name);
  }
  f->size = (uint64_t)st.st_size;
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;

  int rc = 0;
  uint8_t *meta = NULL;
  Lance__File__FileDescriptor *fdsc = NULL;
  uint8_t foot[FOOTER_LEN];
  if (f->size < FOOTER_LEN) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: file is %llu bytes, too short for a Lance footer",
                  name, (unsigned long long)f->size);
    goto fail;
  }
  if ((rc = lnc_file_pread(f, foot, FOOTER_LEN, f->size - FOOTER_LEN, err))) goto fail;
  if (memcmp(foot + 36, "LANC", 4) != 0) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: bad magic: not a Lance file", name);
    goto fail;
  }
  uint64_t cm_start = lnc_rd64(foot), cmo_start = lnc_rd64(foot + 8), gbo_start = lnc_rd64(foot + 16);
  uint32_t n_gb = lnc_rd32(foot + 24), n_cols = lnc_rd32(foot + 28);
  f->major = lnc_rd16(foot + 32);
  f->minor = lnc_rd16(foot + 34);
  /* 2.0 is written with footer version 0.3 (Lance's readers accept 2.0 too); we call it 2.0. */
  if ((f->major == 0 && f->minor == 3) || (f->major == 2 && f->minor == 0)) {
    f->v20 = true;
    f->major = 2;
    f->minor = 0;
  } else if (!(f->major == 2 && (f->minor == 1 || f->minor == 2))) {
    rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: unknown Lance file version %u.%u (supported: 2.0, 2.1, 2.2)",
                  name, f->major, f->minor);
    goto fail;
  }
  uint64_t foot_at = f->size - FOOTER_LEN;
  if (n_gb == 0 || n_gb > 1000000 || n_cols > 10000000 ||
      gbo_start > foot_at || (foot_at - gbo_start) != 16ull * n_gb ||
      cmo_start > gbo_start || (gbo_start - cmo_start) != 16ull * n_cols || cm_start > cmo_start) {
    rc = lnc_errf(err, LNC_ECORRUPT,
                  "%s: footer offsets are inconsistent (columns %u at %llu, table %llu, %u global buffers at %llu, file %llu bytes)",
                  name, n_cols, (unsigned long long)cm_start, (unsigned long long)cmo_start, n_gb,
                  (unsigned long long)gbo_start, (unsigned long long)f->size);
    goto fail;
  }
  /* One read covers the column metadata, both offset tables and the footer. */
  uint64_t meta_len = f->size - cm_start;
  if (meta_len > MAX_METADATA_BYTES) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: metadata section of %llu bytes is too large", name,
                  (unsigned long long)meta_len);
    goto fail;
  }
  f->meta_bytes = meta_len;
  meta = malloc(meta_len ? meta_len : 1);
  if (!meta) { rc = lnc_errf(err, LNC_ENOMEM, "out of memory"); goto fail; }
  if ((rc = lnc_file_pread(f, meta, meta_len, cm_start, err))) goto fail;
  const uint8_t *gbo = meta + (gbo_start - cm_start);
  uint64_t gb0_off = lnc_rd64(gbo), gb0_len = lnc_rd64(gbo + 8);
  for (uint32_t g = 0; g < n_gb; g++) {
    uint64_t o = lnc_rd64(gbo + 16ull * g), l = lnc_rd64(gbo + 16ull * g + 8);
    if (o > f->size || l > f->size - o) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: global buffer %u [%llu, +%llu) is outside the file", name, g,
                    (unsigned long long)o, (unsigned long long)l);
      goto fail;
    }
  }
  if (gb0_len > MAX_METADATA_BYTES) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: schema buffer of %llu bytes is too large", name,
                  (unsigned long long)gb0_len);
    goto fail;
  }
  {
    uint8_t *gb0 = malloc(gb0_len ? gb0_len : 1);
    if (!gb0) { rc = lnc_errf(err, LNC_ENOMEM, "out of memory"); goto fail; }
    rc = lnc_file_pread(f, gb0, gb0_len, gb0_off, err);
    if (!rc) {
      fdsc = lance__file__file_descriptor__unpack(NULL, gb0_len, gb0);
      if (!fdsc) rc = lnc_errf(err, LNC_ECORRUPT, "%s: the file descriptor (global buffer 0) does not parse", name);
    }
    free(gb0);
    if (rc) goto fail;
  }
  if (!fdsc->schema) { rc = lnc_errf(err, LNC_ECORRUPT, "%s: file descriptor has no schema", name); goto fail; }
  f->num_rows = fdsc->length;
  if ((rc = lnc_schema_build(f, fdsc->schema, err))) { lnc_err_prefix(err, "%s", name); goto fail; }
  f->n_columns = n_cols;
  f->columns = calloc(n_cols ? n_cols : 1, sizeof *f->columns);
  if (!f->columns) { rc = lnc_errf(err, LNC_ENOMEM, "out of memory"); goto fail; }
  const uint8_t *cmo = meta + (cmo_start - cm_start);
  for (uint32_t c = 0; c < n_cols; c++) {
    uint64_t o = lnc_rd64(cmo + 16ull * c), l = lnc_rd64(cmo + 16ull * c + 8);
    if (o < cm_start || o > cmo_start || l > cmo_start - o) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u metadata [%llu, +%llu) is outside the metadata section",
                    name, c, (unsigned long long)o, (unsigned long long)l);
      goto fail;
    }
    if ((rc = load_column_or_mark(f, c, meta + (o - cm_start), (size_t)l, err))) goto fail;
  }
  bind_columns(&f->root, f);
  if ((rc = mark_unsupported_columns(f, err))) goto fail;
  for (uint32_t c = 0; c < n_cols; c++) {
    if (!f->columns[c].leaf) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: column %u is not read by any field of the schema", name, c);
      goto fail;
    }
  }
  for (size_t i = 0; i < f->n_all_fields; i++) {
    struct lnc_field *fld = f->all_fields[i];
    if (fld->column >= (int)n_cols || fld->col20 >= (int)n_cols) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' needs column %d but the file has %u columns",
                    name, fld->name, fld->column, n_cols);
      goto fail;
    }
  }
  if (f->v20 && (rc = lnc_v20_link(f, err))) goto fail;
  lance__file__file_descriptor__free_unpacked(fdsc, NULL);
  free(meta);
  *out = f;
  return 0;
fail:
  if (fdsc) lance__file__file_descriptor__free_unpacked(fdsc, NULL);
  free(meta);
  lnc_file_close(f);
  return rc;
}

int lnc_file_open_fd(int fd, const char *name, lnc_file **out, struct lnc_error *err) {
  return open_fd(fd, name, out, err);
}

int lnc_file_open(const char *path, lnc_file **out, struct lnc_error *err) {
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
      if (slash) { *slash = 0; if (!*dir) strcpy(dir, "/"); }
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
