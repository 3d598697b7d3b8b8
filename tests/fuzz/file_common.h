/* What the whole-file fuzz targets do with their input (fuzz_file.c, fuzz_legacy.c): it is
 * written to a memfd and opened with lnc_file_open_fd; when it opens, the file is described
 * (JSON) and rows 0, last and middle of all columns (together, then each top-level column
 * alone) are taken and encoded as JSON rows and as an Arrow IPC stream, and taken again with
 * plain strings left in the file, which must encode to the same stream. Everything is
 * released, so leaks show up too. */
#ifndef LNC_FUZZ_FILE_COMMON_H
#define LNC_FUZZ_FILE_COMMON_H
#include "lance.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { MAX_COLUMNS = 64 };

/* The stream lnc_encode_arrow_ipc_refs describes (out with each ref's bytes inserted; a file
 * ref's read with pread, as lance.h asks), or NULL when a read fails. malloc'd, *len set. */
static uint8_t *refs_stream(const struct lnc_buf *out, const struct lnc_ipc_ref *refs, size_t n, size_t *len) {
  size_t total = out->len, at = 0;
  for (size_t i = 0; i < n; i++) total += refs[i].len;
  uint8_t *s = malloc(total ? total : 1), *w = s;
  for (size_t i = 0; s && i < n; i++) {
    memcpy(w, out->data + at, refs[i].at - at);
    w += refs[i].at - at;
    at = refs[i].at;
    if (refs[i].fd < 0)
      memcpy(w, refs[i].ptr, refs[i].len);
    else if (pread(refs[i].fd, w, refs[i].len, (off_t)refs[i].off) != (ssize_t)refs[i].len) {
      free(s);
      return NULL;
    }
    w += refs[i].len;
  }
  if (s) memcpy(w, out->data + at, out->len - at);
  *len = total;
  return s;
}

/* A take that leaves plain strings and vectors in the file (file_values_min) must encode to the bytes of
 * the ordinary take want[0..wn), flat and through refs, whenever both takes succeed (a damaged
 * row may fail only the one that checks its length prefix against its range). */
static void check_file_values(lnc_file *f, const uint64_t *ids, size_t n, const char *const *cols, size_t ncols,
                              const uint8_t *want, size_t wn) {
  struct lnc_take_options o = {.file_values_min = 1};
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct lnc_error err;
  if (lnc_take_ex(f, ids, n, cols, ncols, &o, &schema, &array, NULL, &err) != 0) return;
  struct lnc_buf flat = {0}, out = {0};
  struct lnc_ipc_ref *refs = NULL;
  size_t nrefs = 0, len = 0;
  if (lnc_encode_arrow_ipc(&schema, &array, &flat, &err) == 0 && (flat.len != wn || memcmp(flat.data, want, wn)))
    abort(); /* the file's values read back differently */
  if (lnc_encode_arrow_ipc_refs(&schema, &array, 1, &out, &refs, &nrefs, &err) == 0) {
    uint8_t *got = refs_stream(&out, refs, nrefs, &len);
    if (got && (len != wn || memcmp(got, want, wn))) abort();
    free(got);
  }
  free(refs);
  lnc_buf_free(&flat);
  lnc_buf_free(&out);
  array.release(&array);
  schema.release(&schema);
}

static void take_and_encode(lnc_file *f, const uint64_t *ids, size_t n, const char *const *cols,
                            size_t ncols) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct lnc_error err;
  struct lnc_take_stats st = {0};
  /* The same take with no error struct at all first (lance.h allows NULL; a damaged file's
   * error must not be written through it), then with one. */
  if (lnc_take(f, ids, n, cols, ncols, &schema, &array, NULL, NULL) == 0) {
    array.release(&array);
    schema.release(&schema);
  }
  if (lnc_take(f, ids, n, cols, ncols, &schema, &array, &st, &err) != 0) return;
  struct lnc_buf out = {0};
  lnc_encode_json(&schema, &array, &out, &err);
  lnc_buf_free(&out);
  out = (struct lnc_buf){0};
  if (lnc_encode_arrow_ipc(&schema, &array, &out, &err) == 0) check_file_values(f, ids, n, cols, ncols, out.data, out.len);
  lnc_buf_free(&out);
  array.release(&array);
  schema.release(&schema);
}

static int fuzz_open_and_take(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz_file", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t off = 0;
  while (off < size) {
    ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) {
      close(fd);
      return 0;
    }
    off += (size_t)w;
  }
  lnc_file *f = NULL;
  struct lnc_error err;
  if (lnc_file_open_fd(fd, "fuzz.lance", &f, &err) != 0) return 0; /* fd is liblance's now */

  struct lnc_buf desc = {0};
  lnc_file_describe_json(f, &desc, &err);
  lnc_buf_free(&desc);
  int major = 0, minor = 0;
  lnc_file_version(f, &major, &minor);

  uint64_t rows = lnc_file_num_rows(f);
  if (rows > 0) {
    uint64_t ids[] = {0, rows - 1, rows / 2, rows - 1, 0};
    take_and_encode(f, ids, 5, NULL, 0);
    struct ArrowSchema schema;
    if (lnc_file_schema(f, &schema, &err) == 0) {
      for (int64_t i = 0; i < schema.n_children && i < MAX_COLUMNS; i++) {
        const char *name = schema.children[i]->name;
        if (name) take_and_encode(f, ids, 3, &name, 1);
      }
      schema.release(&schema);
    }
  }
  lnc_file_close(f);
  return 0;
}

#endif
