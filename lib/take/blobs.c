/* Blob columns served as bytes: descriptors read from the page (position and size of bytes
 * stored elsewhere) are replaced by those bytes. Legacy blobs live in the same data file;
 * blob v2 values live inline in the data file (kind 0) or in a sidecar file next to it
 * (kind 1: data/<data file stem>/<blob id, 32 binary digits LSB first>.blob). */
#include "take.h"
#include "../io/io.h"
#include "../io/s3.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One blob at most; 2^31 bytes × 2^32 rows < 2^64, so sums of sizes cannot wrap. */
#define MAX_BLOB_BYTES ((uint64_t)1 << 31)


/* Reads [pos, pos+size) of the sidecar file for blob_id: <data file stem>/<id>.blob in the
 * data file's directory, opened beneath that directory only; for a data file in an object
 * store, the object of that name next to it, through the same mount's client. */
static int read_sidecar(struct lnc_file *f, uint32_t blob_id, uint64_t pos, uint64_t size, uint8_t *dst,
                        struct lnc_take_stats *st, struct lnc_error *err) {
  char rel[600], bits[33];
  for (int i = 0; i < 32; i++) bits[i] = (char)('0' + ((blob_id >> i) & 1));
  bits[32] = 0;
  const char *base = strrchr(f->name, '/');
  base = base ? base + 1 : f->name;
  size_t bl = strlen(base);
  if ((f->dir_fd < 0 && !f->src.s3) || bl < 7 || strcmp(base + bl - 6, ".lance") != 0 || bl > 500)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: blob sidecar files need a data file named *.lance", f->name);
  snprintf(rel, sizeof rel, "%.*s/%s.blob", (int)(bl - 6), base, bits);
  if (f->src.s3) {
    int rc = lnc_s3_source_read_sibling(f->src.s3, rel, pos, size, dst, st, err);
    if (rc) lnc_err_prefix(err, "%s: blob file %s", f->name, rel);
    return rc;
  }
  int fd = lnc_open_beneath(f->dir_fd, rel, 0);
  if (fd < 0) return lnc_errf(err, errno == ENOENT ? LNC_ECORRUPT : LNC_EIO, "%s: blob file %s: %s", f->name, rel, strerror(errno));
  struct stat sb;
  int rc = 0;
  if (fstat(fd, &sb) != 0 || pos > (uint64_t)sb.st_size || size > (uint64_t)sb.st_size - pos) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: blob file %s: [%llu, +%llu) is outside the file", f->name, rel,
                  (unsigned long long)pos, (unsigned long long)size);
  } else {
    uint64_t done = 0;
    while (done < size) {
      ssize_t r = pread(fd, dst + done, size - done, (off_t)(pos + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        rc = lnc_errf(err, LNC_EIO, "%s: blob file %s: read failed", f->name, rel);
        break;
      }
      done += (uint64_t)r;
    }
    if (st) {
      st->reads++;
      st->bytes_read += size;
    }
  }
  close(fd);
  return rc;
}

/* Appends one canonical packed row of two variable fields. */
static int put_pair(struct lnc_valbuf *v, const uint8_t *a, uint32_t al, const uint8_t *b, uint32_t bl) {
  size_t tot = 8 + (size_t)al + bl;
  uint8_t *row = malloc(tot ? tot : 1);
  if (!row) return LNC_ENOMEM;
  memcpy(row, &al, 4);
  if (al) memcpy(row + 4, a, al);
  memcpy(row + 4 + al, &bl, 4);
  if (bl) memcpy(row + 8 + al, b, bl);
  int rc = lnc_valbuf_append_bytes(v, row, tot);
  free(row);
  return rc;
}

/* A legacy blob descriptor that stands for a null: size 0 at a position other than 0. Lance's
 * 2.0 writer stores a null value so (position 1), and its reader answers null; an empty value
 * is (0, 0). (2.1's blob layout folds such descriptors into levels itself, layout/blob.c.) */
static bool legacy_null(uint64_t pos, uint64_t size) { return size == 0 && pos != 0; }

/* Makes the values whose descriptor stood for a null (null_at, by value index) null at the
 * leaf: canonical def 1. A null leaf keeps its value slot (a null appended in its place), so
 * with no list above the blob (legacy blobs are top-level fields) value i is level i. */
static int nulls_to_levels(struct lnc_leafrows *rows, const bool *null_at, uint64_t n_values) {
  if (!rows->has_def || rows->has_rep || rows->n_levels != n_values) return LNC_ECORRUPT;
  for (uint64_t i = 0; i < n_values; i++)
    if (null_at[i] && rows->def[i] == 0) rows->def[i] = 1;
  return 0;
}

int lnc_blobs_to_bytes(struct lnc_file *f, const struct lnc_field *leaf, struct lnc_leafrows *rows, uint64_t max_bytes,
                       struct lnc_take_stats *st, struct lnc_error *err) {
  uint64_t sizes = 0;
  struct lnc_valbuf *in = &rows->values, out;
  int rc = lnc_valbuf_init(&out, LNC_VALUES_VARIABLE, 0, 1);
  if (rc) return lnc_errf(err, rc, "out of memory");
  bool v2 = leaf->type == LNC_AT_STRUCT;
  /* The blob flag is the schema's word; the descriptors' shape is checked, not assumed: a
   * field of another type marked blob decodes to other values (8-byte integers, a packed
   * struct of fixed fields without offsets). */
  if (v2 ? in->kind != LNC_VALUES_VARIABLE : in->kind != LNC_VALUES_FIXED || in->bits != 128 || in->items_per_value != 1) {
    lnc_valbuf_free(&out);
    return lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' is marked a blob but its values are not blob descriptors",
                    f->name, leaf->name);
  }
  bool *null_at = NULL; /* legacy descriptors that stand for a null, once one is seen */
  for (uint64_t i = 0; i < in->n && !rc; i++) {
    uint64_t kind = 0, pos, size, blob_id = 0;
    const uint8_t *uri = NULL;
    uint32_t uri_len = 0;
    if (!v2) {
      pos = lnc_rd64(in->data + 16 * i);
      size = lnc_rd64(in->data + 16 * i + 8);
      if (legacy_null(pos, size)) {
        if (!null_at && !(null_at = calloc(in->n, sizeof *null_at))) {
          rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
          break;
        }
        null_at[i] = true;
        if ((rc = lnc_valbuf_append_null(&out))) lnc_errf(err, rc, "out of memory");
        continue;
      }
    } else {
      /* Canonical row: (u32 len, bytes) for kind, position, size, blob_id, blob_uri. */
      const uint8_t *p = in->data + in->offsets[i], *end = in->data + in->offsets[i + 1];
      if (p == end) {
        rc = put_pair(&out, NULL, 0, NULL, 0);
        continue;
      } /* null row */
      uint64_t fv[4];
      for (int k = 0; k < 5; k++) {
        if (end - p < 4) {
          rc = lnc_errf(err, LNC_ECORRUPT, "%s: blob descriptor %llu is malformed", f->name, (unsigned long long)i);
          break;
        }
        uint32_t l;
        memcpy(&l, p, 4);
        p += 4;
        if ((uint64_t)(end - p) < l || (k < 4 && l > 8)) {
          rc = lnc_errf(err, LNC_ECORRUPT, "%s: blob descriptor %llu is malformed", f->name, (unsigned long long)i);
          break;
        }
        if (k < 4)
          fv[k] = lnc_rdw(p, (unsigned)l);
        else {
          uri = p;
          uri_len = l;
        }
        p += l;
      }
      if (rc) break;
      kind = fv[0];
      pos = fv[1];
      size = fv[2];
      blob_id = fv[3];
    }
    if (size > MAX_BLOB_BYTES) {
      rc = lnc_errf(err, LNC_ELIMIT, "%s: blob of %llu bytes is too large to serve", f->name, (unsigned long long)size);
      break;
    }
    if (kind != 3) sizes += size; /* external blobs are served as their uri; no wrap: see MAX_BLOB_BYTES */
    if (sizes > max_bytes) {
      rc = lnc_errf(err, LNC_ELIMIT, "%s: the blobs asked for hold over %llu bytes, " LNC_TAKE_LIMIT_TEXT, f->name,
                    (unsigned long long)max_bytes);
      break;
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
      rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
      break;
    }
    if (size && kind == 0) {
      struct lnc_read r = {pos, size, buf};
      rc = lnc_io_read_batch(&f->src, &r, 1, st, err);
    } else if (size && kind == 1) {
      rc = read_sidecar(f, (uint32_t)blob_id, pos, size, buf, st, err);
    } else if (kind == 2) {
      rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: blob v2 kind 2 (dedicated file) is not supported", f->name);
    } else if (kind == 3) {
      size = 0; /* external: the uri is the value */
    } else if (kind > 3) {
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: blob descriptor %llu has unknown kind %llu", f->name,
                    (unsigned long long)i, (unsigned long long)kind);
    }
    if (!rc) rc = v2 ? put_pair(&out, buf, (uint32_t)size, uri, uri_len) : lnc_valbuf_append_bytes(&out, buf, size);
    if (rc == LNC_ENOMEM) lnc_errf(err, rc, "out of memory");
    free(buf);
  }
  if (!rc && null_at && (rc = nulls_to_levels(rows, null_at, in->n)))
    lnc_errf(err, rc, "%s: field '%s': a null blob descriptor where the levels say the value is there", f->name,
             leaf->name);
  free(null_at);
  if (rc) {
    lnc_valbuf_free(&out);
    return rc;
  }
  lnc_valbuf_free(in);
  *in = out;
  return 0;
}
