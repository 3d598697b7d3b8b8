/* A bounded reader for exactly what Lance writes as ARROW_ARRAY deletion files: an Arrow IPC
 * *file* (ARROW1 magic, footer flatbuffer) holding one non-null uint32 column in one or more
 * record batches, buffers optionally ZSTD- or LZ4-frame-compressed. Nothing else of IPC. */
#include "dataset.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ---- a minimal flatbuffer walk over (b, len), every read bounds-checked ---------------- */
struct fb {
  const uint8_t *b;
  size_t len;
};

static int fb_rd(const struct fb *f, uint64_t pos, size_t n, void *out) {
  if (pos > f->len || n > f->len - pos) return -1;
  memcpy(out, f->b + pos, n);
  return 0;
}

/* Position of field `idx` of the table at `t`, or 0 when absent (-1 on a bad table). */
static int64_t fb_field(const struct fb *f, uint64_t t, int idx) {
  int32_t soff;
  uint16_t vtsize, off;
  if (fb_rd(f, t, 4, &soff)) return -1;
  int64_t vt = (int64_t)t - soff;
  if (vt < 0 || fb_rd(f, (uint64_t)vt, 2, &vtsize)) return -1;
  if ((uint32_t)4 + 2u * (uint32_t)idx + 2u > vtsize) return 0;
  if (fb_rd(f, (uint64_t)vt + 4 + 2 * (uint64_t)idx, 2, &off)) return -1;
  if (off == 0) return 0;
  if (t + off >= f->len) return -1;
  return (int64_t)(t + off);
}

/* Follows the u32 offset stored at pos (tables, vectors). -1 when out of bounds. */
static int64_t fb_deref(const struct fb *f, int64_t pos) {
  uint32_t rel;
  if (pos <= 0 || fb_rd(f, (uint64_t)pos, 4, &rel)) return -1;
  uint64_t to = (uint64_t)pos + rel;
  return to < f->len ? (int64_t)to : -1;
}

/* Table field that is itself a table / vector: its position, 0 when absent, -1 if bad. */
static int64_t fb_child(const struct fb *f, uint64_t t, int idx) {
  int64_t p = fb_field(f, t, idx);
  return p <= 0 ? p : fb_deref(f, p);
}

static int fb_scalar(const struct fb *f, uint64_t t, int idx, size_t size, void *out) {
  int64_t p = fb_field(f, t, idx);
  if (p < 0) return -1;
  if (p == 0) {
    memset(out, 0, size);
    return 0;
  } /* default value */
  return fb_rd(f, (uint64_t)p, size, out);
}

/* A vector at v: element count and where the elements start, each of `elem` bytes. */
static int fb_vector(const struct fb *f, int64_t v, size_t elem, uint32_t *n, uint64_t *start) {
  if (v <= 0) {
    *n = 0;
    *start = 0;
    return v < 0 ? -1 : 0;
  }
  if (fb_rd(f, (uint64_t)v, 4, n)) return -1;
  *start = (uint64_t)v + 4;
  if ((uint64_t)*n * elem > f->len - *start) return -1;
  return 0;
}

/* ---- the IPC file -------------------------------------------------------------------- */
#define MAGIC "ARROW1"
enum { HDR_RECORD_BATCH = 3,
       TYPE_INT = 2,
       CODEC_LZ4_FRAME = 0,
       CODEC_ZSTD = 1 };

static int check_schema(const struct fb *foot, uint64_t root, const char *what,
                        struct lnc_error *err) {
  int64_t schema = fb_child(foot, root, 1);
  if (schema <= 0) return lnc_errf(err, LNC_ECORRUPT, "%s: Arrow file footer has no schema", what);
  uint32_t nf;
  uint64_t fs;
  if (fb_vector(foot, fb_child(foot, (uint64_t)schema, 1), 4, &nf, &fs) || nf != 1)
    return lnc_errf(err, LNC_ECORRUPT, "%s: deletion file schema must have one field", what);
  int64_t field = fb_deref(foot, (int64_t)fs);
  uint8_t type_type;
  if (field < 0 || fb_scalar(foot, (uint64_t)field, 2, 1, &type_type) || type_type != TYPE_INT)
    return lnc_errf(err, LNC_ECORRUPT, "%s: deletion file column is not an integer", what);
  int64_t it = fb_child(foot, (uint64_t)field, 3);
  int32_t bits;
  uint8_t is_signed;
  if (it <= 0 || fb_scalar(foot, (uint64_t)it, 0, 4, &bits) ||
      fb_scalar(foot, (uint64_t)it, 1, 1, &is_signed) || bits != 32 || is_signed)
    return lnc_errf(err, LNC_ECORRUPT, "%s: deletion file column is not uint32", what);
  if (fb_field(foot, (uint64_t)field, 4) != 0)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: dictionary-encoded deletion file", what);
  return 0;
}

/* Appends the values of one buffer (raw or compressed) to vals. */
static int append_values(const uint8_t *p, uint64_t blen, int compressed, int8_t codec,
                         uint64_t count, const char *what, uint32_t *dst,
                         struct lnc_error *err) {
  uint64_t need = count * 4;
  if (!compressed) {
    if (blen < need) return lnc_errf(err, LNC_ECORRUPT, "%s: data buffer too short", what);
    memcpy(dst, p, (size_t)need);
    return 0;
  }
  if (count == 0) return 0;
  if (blen < 8) return lnc_errf(err, LNC_ECORRUPT, "%s: compressed buffer too short", what);
  int64_t ulen = (int64_t)lnc_rd64(p);
  p += 8;
  blen -= 8;
  if (ulen == -1) {
    if (blen < need) return lnc_errf(err, LNC_ECORRUPT, "%s: data buffer too short", what);
    memcpy(dst, p, (size_t)need);
    return 0;
  }
  if (ulen < 0 || (uint64_t)ulen < need || (uint64_t)ulen > need + 64)
    return lnc_errf(err, LNC_ECORRUPT, "%s: buffer holds %lld bytes, %llu needed", what,
                    (long long)ulen, (unsigned long long)need);
  uint8_t *tmp = malloc((size_t)ulen ? (size_t)ulen : 1);
  if (!tmp) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", what);
  size_t got = 0;
  if (codec == CODEC_ZSTD) {
    size_t r = ZSTD_decompress(tmp, (size_t)ulen, p, (size_t)blen);
    if (ZSTD_isError(r)) {
      free(tmp);
      return lnc_errf(err, LNC_ECORRUPT, "%s: zstd: %s", what, ZSTD_getErrorName(r));
    }
    got = r;
  } else {
    LZ4F_dctx *dctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
      free(tmp);
      return lnc_errf(err, LNC_ENOMEM, "%s: lz4 context", what);
    }
    size_t srcpos = 0;
    while (srcpos < blen && got < (size_t)ulen) {
      size_t dn = (size_t)ulen - got, sn = (size_t)blen - srcpos;
      size_t r = LZ4F_decompress(dctx, tmp + got, &dn, p + srcpos, &sn, NULL);
      if (LZ4F_isError(r)) {
        LZ4F_freeDecompressionContext(dctx);
        free(tmp);
        return lnc_errf(err, LNC_ECORRUPT, "%s: lz4: %s", what, LZ4F_getErrorName(r));
      }
      if (dn == 0 && sn == 0) break;
      got += dn;
      srcpos += sn;
      if (r == 0) break;
    }
    LZ4F_freeDecompressionContext(dctx);
  }
  if (got != (size_t)ulen) {
    free(tmp);
    return lnc_errf(err, LNC_ECORRUPT, "%s: buffer decompressed to %zu bytes, expected %lld",
                    what, got, (long long)ulen);
  }
  memcpy(dst, tmp, (size_t)need);
  free(tmp);
  return 0;
}

static int read_batch(const struct fb *file, uint64_t off, int32_t meta_len, int64_t body_len,
                      const char *what, uint64_t max_values, uint32_t **vals, size_t *n,
                      struct lnc_error *err) {
  if (meta_len < 8 || body_len < 0 || off > file->len ||
      (uint64_t)meta_len + (uint64_t)body_len > file->len - off)
    return lnc_errf(err, LNC_ECORRUPT, "%s: record batch block outside the file", what);
  const uint8_t *p = file->b + off;
  uint32_t cont = lnc_rd32(p);
  uint64_t fbstart = cont == 0xFFFFFFFFu ? 8 : 4;
  struct fb msg = {p + fbstart, (size_t)meta_len - fbstart};
  uint32_t root;
  int64_t rb = -1;
  uint8_t htype;
  if (fb_rd(&msg, 0, 4, &root) || root >= msg.len ||
      fb_scalar(&msg, root, 1, 1, &htype) || htype != HDR_RECORD_BATCH ||
      (rb = fb_child(&msg, root, 2)) <= 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: block is not a record batch message", what);
  int64_t length;
  uint32_t nnodes, nbufs;
  uint64_t nodes, bufs;
  if (fb_scalar(&msg, (uint64_t)rb, 0, 8, &length) || length < 0 ||
      fb_vector(&msg, fb_child(&msg, (uint64_t)rb, 1), 16, &nnodes, &nodes) || nnodes != 1 ||
      fb_vector(&msg, fb_child(&msg, (uint64_t)rb, 2), 16, &nbufs, &bufs) || nbufs != 2)
    return lnc_errf(err, LNC_ECORRUPT, "%s: record batch must have 1 column and 2 buffers",
                    what);
  int64_t node[2] = {0, 0}, buf[2] = {0, 0};
  fb_rd(&msg, nodes, 16, node);
  if (node[0] != length || node[1] != 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: column has %lld rows (%lld null) in a batch of %lld",
                    what, (long long)node[0], (long long)node[1], (long long)length);
  fb_rd(&msg, bufs + 16, 16, buf); /* buffer 1: the values; buffer 0 (validity) is unused */
  if (buf[0] < 0 || buf[1] < 0 || buf[0] > body_len || buf[1] > body_len - buf[0])
    return lnc_errf(err, LNC_ECORRUPT, "%s: data buffer outside the batch body", what);
  int compressed = 0;
  int8_t codec = 0;
  int64_t comp = fb_child(&msg, (uint64_t)rb, 3);
  if (comp < 0) return lnc_errf(err, LNC_ECORRUPT, "%s: bad compression table", what);
  if (comp > 0) {
    int8_t method;
    if (fb_scalar(&msg, (uint64_t)comp, 0, 1, &codec) ||
        fb_scalar(&msg, (uint64_t)comp, 1, 1, &method) || method != 0 ||
        (codec != CODEC_ZSTD && codec != CODEC_LZ4_FRAME))
      return lnc_errf(err, LNC_EUNSUPPORTED, "%s: unknown IPC compression %d", what, codec);
    compressed = 1;
  }
  if ((uint64_t)length + *n > max_values)
    return lnc_errf(err, LNC_ECORRUPT, "%s: more deleted rows than the %llu rows", what,
                    (unsigned long long)max_values);
  uint32_t *nv = realloc(*vals, ((size_t)length + *n + 1) * sizeof *nv);
  if (!nv) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", what);
  *vals = nv;
  const uint8_t *body = p + meta_len;
  int rc = append_values(body + buf[0], (uint64_t)buf[1], compressed, codec, (uint64_t)length,
                         what, nv + *n, err);
  if (rc) return rc;
  *n += (size_t)length;
  return 0;
}

int lnc_ds_read_arrow_u32(const uint8_t *src, size_t len, const char *what, uint64_t max_values,
                          uint32_t **out, size_t *n, struct lnc_error *err) {
  *out = NULL;
  *n = 0;
  if (len < 8 + 10 || memcmp(src, MAGIC, 6) != 0 || memcmp(src + len - 6, MAGIC, 6) != 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: not an Arrow IPC file (ARROW1 magic missing)", what);
  int32_t flen = (int32_t)lnc_rd32(src + len - 10);
  if (flen <= 0 || (size_t)flen > len - 18)
    return lnc_errf(err, LNC_ECORRUPT, "%s: Arrow footer length %d is invalid", what, flen);
  struct fb foot = {src + len - 10 - flen, (size_t)flen};
  struct fb file = {src, len};
  uint32_t root;
  if (fb_rd(&foot, 0, 4, &root) || root >= foot.len)
    return lnc_errf(err, LNC_ECORRUPT, "%s: Arrow footer root is invalid", what);
  int rc = check_schema(&foot, root, what, err);
  if (rc) return rc;
  uint32_t nblocks;
  uint64_t blocks;
  if (fb_vector(&foot, fb_child(&foot, root, 3), 24, &nblocks, &blocks))
    return lnc_errf(err, LNC_ECORRUPT, "%s: Arrow footer record batch list is invalid", what);
  uint32_t *vals = NULL;
  for (uint32_t i = 0; i < nblocks; i++) {
    int64_t off = 0, body = 0;
    int32_t meta = 0;
    fb_rd(&foot, blocks + 24 * (uint64_t)i, 8, &off);
    fb_rd(&foot, blocks + 24 * (uint64_t)i + 8, 4, &meta);
    fb_rd(&foot, blocks + 24 * (uint64_t)i + 16, 8, &body);
    if (off < 0) {
      free(vals);
      return lnc_errf(err, LNC_ECORRUPT, "%s: record batch %u at offset %lld", what, i,
                      (long long)off);
    }
    rc = read_batch(&file, (uint64_t)off, meta, body, what, max_values, &vals, n, err);
    if (rc) {
      free(vals);
      *n = 0;
      {
        lnc_err_prefix(err, "record batch %u", i);
        return rc;
      }
    }
  }
  *out = vals;
  return 0;
}
