/* gzip for request bodies (Connect and POST /rows; zlib, RFC 1952): bodies sent with
 * Content-Encoding: gzip are inflated before decoding, bounded by max_body_bytes so a small compressed body cannot
 * expand without limit; answers are deflated when the client accepts gzip and the body is
 * large enough to gain from it. zlib rather than our own inflate: it is the reference
 * implementation, in every Debian system, and a decompressor is exactly the kind of parser
 * not to write twice. */
#include "lanced.h"
#include "request.h"
#include "routes.h"
#include <limits.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <zlib.h>

#define GZIP_WINDOW   (15 + 16) /* zlib: a 32 KiB window, with the gzip wrapper (RFC 1952) */
#define GZIP_MIN_BODY 1024      /* smaller answers are sent as they are: the header costs more */

int ld_gunzip(const struct lnc_buf *in, uint64_t max, struct lnc_buf *out, struct ld_err *e) {
  z_stream z = {0};
  if (inflateInit2(&z, GZIP_WINDOW) != Z_OK) return ld_errf(e, LD_EXHAUSTED, "zlib: cannot start inflate (out of memory)");
  z.next_in = in->data;
  z.avail_in = (uInt)in->len;
  int rc;
  do {
    if (out->len == out->cap) {
      size_t cap = out->cap ? out->cap * 2 : 4096;
      if (cap > max + 1) cap = (size_t)max + 1;
      if (cap <= out->len) {
        inflateEnd(&z);
        return ld_errf(e, LD_TOO_LARGE, "gzip body inflates past max_body_bytes (%llu)",
                       (unsigned long long)max);
      }
      uint8_t *g = realloc(out->data, cap);
      if (!g) abort(); /* as ld_buf_append */
      out->data = g;
      out->cap = cap;
    }
    z.next_out = out->data + out->len;
    z.avail_out = (uInt)(out->cap - out->len);
    rc = inflate(&z, Z_NO_FLUSH);
    out->len = out->cap - z.avail_out;
    /* More after a member's end: the next member (RFC 1952 2.2: a gzip body is a series of
     * them, and Go's, Node's and Python's readers take them all), or garbage, which its
     * header check refuses. Only the first was inflated, the rest silently dropped. */
    if (rc == Z_STREAM_END && z.avail_in) rc = inflateReset(&z);
  } while (rc == Z_OK && (z.avail_in || !z.avail_out));
  inflateEnd(&z);
  if (rc != Z_STREAM_END)
    return ld_errf(e, LD_INVALID, "body is not valid gzip (%s)", z.msg ? z.msg : "truncated");
  return 0;
}

int ld_body_decode(struct ld_req *r, enum ld_kind other, struct ld_err *e) {
  const char *enc = ld_header(r, "Content-Encoding");
  if (!enc[0] || !strcasecmp(enc, "identity") || r->body_inflated) return 0;
  if (strcasecmp(enc, "gzip"))
    return ld_errf(e, other, "Content-Encoding %.60s is not supported (gzip, identity are)", enc), -1;
  struct lnc_buf plain = {0};
  if (ld_gunzip(&r->body, r->lim.max_body, &plain, e)) {
    lnc_buf_free(&plain);
    return -1;
  }
  lnc_buf_free(&r->body);
  r->body = plain;
  r->body_inflated = true;
  return 0;
}

static const char *skip_ows(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

int ld_qvalue(const char *p) {
  for (;;) {
    p = skip_ows(p);
    if (*p != ';') return 1000;
    p = skip_ows(p + 1);
    if ((*p == 'q' || *p == 'Q') && *(p = skip_ows(p + 1)) == '=') {
      p = skip_ows(p + 1);
      if (*p != '0' && *p != '1') return 1000; /* not a qvalue: as if absent */
      int q = (*p++ - '0') * 1000;
      if (*p == '.')
        for (int scale = 100; *++p >= '0' && *p <= '9' && scale; scale /= 10) q += (*p - '0') * scale;
      return q > 1000 ? 1000 : q;
    }
    while (*p && *p != ';' && *p != ',') p++;
  }
}

bool ld_gzip_wanted(const char *accept_encoding, size_t body_len) {
  if (body_len < GZIP_MIN_BODY || !accept_encoding) return false;
  for (const char *p = accept_encoding; (p = strcasestr(p, "gzip")); p += 4) {
    bool start = p == accept_encoding || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ',';
    char end = p[4];
    if (start && (!end || end == ',' || end == ';' || end == ' ' || end == '\t')) return ld_qvalue(p + 4) > 0;
  }
  return false;
}

int ld_gzip(struct lnc_buf *body) {
  /* One deflate call takes at most UINT_MAX bytes (avail_in is a uInt): a larger answer
   * (max_response_bytes over 4 GiB) would come out cut short, so it goes uncompressed. */
  if (body->len > UINT_MAX - 64) return -1;
  z_stream z = {0};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
  struct lnc_buf out = {0};
  out.cap = deflateBound(&z, (uLong)body->len) + 32;
  out.data = out.cap > UINT_MAX ? NULL : malloc(out.cap);
  if (!out.data) { /* out of memory: the answer goes as it is */
    deflateEnd(&z);
    return -1;
  }
  z.next_in = body->data;
  z.avail_in = (uInt)body->len;
  z.next_out = out.data;
  z.avail_out = (uInt)out.cap;
  int rc = deflate(&z, Z_FINISH);
  out.len = out.cap - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    free(out.data);
    return -1;
  }
  lnc_buf_free(body);
  *body = out;
  return 0;
}
