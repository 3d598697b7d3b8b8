/* HTTP/1.1 request framing (RFC 9112), parsed strictly: the request head (request line and
 * header fields) and a chunked body's lines. Pure functions over (buf, len): no sockets, no
 * request record, every length checked against the bytes given; h1.c drives them, and
 * tests/fuzz/fuzz_h1.c and tests/unit/test_h1.c feed them directly.
 *
 * Strict, because a proxy in front may read a lenient message differently (request smuggling,
 * RFC 9112 §11.2): every line ends in CRLF (a bare LF is a 400, in the head and in chunk lines
 * alike); whitespace between a field's name and its colon, a line folded onto the one before
 * (obs-fold), a line without a colon, a NUL or another control byte anywhere but a value's tabs
 * are each a 400; Content-Length twice with different values, Content-Length with
 * Transfer-Encoding, a Transfer-Encoding other than exactly `chunked` (or any on HTTP/1.0),
 * two Host fields, or none on HTTP/1.1 (RFC 9112 §3.2) likewise. The caller closes the
 * connection after such an answer, so nothing behind a message whose framing is in doubt is
 * read as a request. */
#include "lanced.h"
#include "server.h"
#include <string.h>
#include <strings.h>

/* RFC 9110 §5.6.2: tchar, the bytes of a method or a field name. */
static bool is_tchar(unsigned char ch) {
  if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) return true;
  return ch && strchr("!#$%&'*+-.^_`|~", ch);
}

/* A field value's bytes (RFC 9110 §5.5): visible ASCII, space, tab and obs-text (0x80-0xff). */
static bool is_value_byte(unsigned char ch) { return ch == '\t' || (ch >= 0x20 && ch != 0x7f); }

long ld_h1_head_end(const char *buf, size_t len, size_t *scan, struct ld_err *e) {
  size_t i = *scan;
  for (;;) {
    const char *lf = i < len ? memchr(buf + i, '\n', len - i) : NULL;
    if (!lf) {
      *scan = i; /* the start of the line not yet complete */
      return 0;
    }
    size_t at = (size_t)(lf - buf);
    if (at == 0 || buf[at - 1] != '\r') return ld_errf(e, LD_INVALID, "a line of the request's head ends in a bare LF (want CRLF)"), -1;
    if (at == i + 1 && i > 0) return (long)(at + 1); /* an empty line after the request line: the end */
    if (at == i + 1) return ld_errf(e, LD_INVALID, "the request starts with an empty line"), -1;
    i = at + 1;
  }
}

/* The request line: method SP request-target SP HTTP-version (RFC 9112 §3), in place: the
 * method and target NUL-terminated. */
static int request_line(char *p, char *end, struct ld_h1_head *h, struct ld_err *e) {
  char *m = p;
  while (p < end && is_tchar((unsigned char)*p)) p++;
  if (p == m || p >= end || *p != ' ') return ld_errf(e, LD_INVALID, "a malformed request line (want METHOD SP TARGET SP HTTP/1.1)"), -1;
  *p++ = 0;
  h->method = m;
  char *t = p;
  for (; p < end && *p != ' '; p++) {
    unsigned char ch = (unsigned char)*p;
    if (!ch) return ld_errf(e, LD_INVALID, "a NUL byte in the request line"), -1;
    if (ch < 0x20 || ch == 0x7f) return ld_errf(e, LD_INVALID, "a control byte (0x%02x) in the request line", ch), -1;
  }
  if (p == t || p >= end) return ld_errf(e, LD_INVALID, "a malformed request line (want METHOD SP TARGET SP HTTP/1.1)"), -1;
  *p++ = 0;
  h->target = t;
  size_t vlen = (size_t)(end - p);
  if (vlen == 8 && !memcmp(p, "HTTP/1.", 7) && (p[7] == '0' || p[7] == '1')) {
    h->minor = p[7] - '0';
    return 0;
  }
  if (vlen == 8 && !memcmp(p, "HTTP/", 5) && p[5] >= '0' && p[5] <= '9' && p[6] == '.' && p[7] >= '0' && p[7] <= '9')
    return ld_errf(e, LD_HTTP_VERSION, "HTTP version %.8s is not served here (HTTP/1.0, HTTP/1.1, or HTTP/2 with prior knowledge)", p), -1;
  for (char *q = p; q < end; q++)
    if (!*q) return ld_errf(e, LD_INVALID, "a NUL byte in the request line"), -1;
  return ld_errf(e, LD_INVALID, "a malformed request line (want METHOD SP TARGET SP HTTP/1.1)"), -1;
}

/* Whether a comma-separated list (Connection's) holds token, case-insensitively. */
static bool list_has(const char *v, const char *token) {
  size_t n = strlen(token);
  for (const char *p = v; *p;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    const char *s = p;
    while (*p && *p != ',') p++;
    const char *t = p;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t')) t--;
    if ((size_t)(t - s) == n && !strncasecmp(s, token, n)) return true;
  }
  return false;
}

/* The framing fields, read as each comes (RFC 9112 §6): Content-Length, Transfer-Encoding,
 * Host, Connection, Expect. */
static int note_field(struct ld_h1_head *h, const char *name, const char *value, struct ld_err *e) {
  if (!strcasecmp(name, "Content-Length")) {
    uint64_t v;
    size_t n = strlen(value);
    if (!n || strspn(value, "0123456789") != n || !lnc_parse_u64(value, n, &v))
      return ld_errf(e, LD_INVALID, "a malformed Content-Length '%.40s'", value), -1;
    if (h->has_length && v != h->length) return ld_errf(e, LD_INVALID, "conflicting Content-Length headers"), -1;
    h->has_length = true;
    h->length = v;
  } else if (!strcasecmp(name, "Transfer-Encoding")) {
    if (h->chunked || strcasecmp(value, "chunked"))
      return ld_errf(e, LD_INVALID, "unsupported Transfer-Encoding '%.40s' (a body is framed by Content-Length or by Transfer-Encoding: chunked alone)", value), -1;
    h->chunked = true;
  } else if (!strcasecmp(name, "Host")) {
    if (h->hosts++) return ld_errf(e, LD_INVALID, "more than one Host header"), -1;
  } else if (!strcasecmp(name, "Connection")) {
    if (list_has(value, "close")) h->close = true;
    if (list_has(value, "keep-alive")) h->keep_alive = true;
  } else if (!strcasecmp(name, "Expect")) {
    if (!strcasecmp(value, "100-continue")) h->expect_continue = true;
  }
  return 0;
}

/* One field line "name: value" in place (RFC 9112 §5): name and value NUL-terminated, the
 * value's surrounding whitespace dropped. */
static int field_line(char *p, char *end, struct ld_h1_head *h, struct ld_err *e) {
  if (*p == ' ' || *p == '\t') return ld_errf(e, LD_INVALID, "a header line folded onto the one before (obs-fold)"), -1;
  char *name = p;
  while (p < end && is_tchar((unsigned char)*p)) p++;
  if (p >= end) return ld_errf(e, LD_INVALID, "a header line without a colon"), -1;
  if (*p != ':') {
    if (*p == ' ' || *p == '\t') return ld_errf(e, LD_INVALID, "whitespace between a header's name and its colon"), -1;
    if (!*p) return ld_errf(e, LD_INVALID, "a NUL byte in a header's name"), -1;
    if (!memchr(p, ':', (size_t)(end - p))) return ld_errf(e, LD_INVALID, "a header line without a colon"), -1;
    return ld_errf(e, LD_INVALID, "a byte (0x%02x) not allowed in a header's name", (unsigned char)*p), -1;
  }
  if (p == name) return ld_errf(e, LD_INVALID, "a header line with an empty name"), -1;
  *p++ = 0;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  char *value = p, *last = p;
  for (; p < end; p++) {
    unsigned char ch = (unsigned char)*p;
    if (!is_value_byte(ch))
      return ch ? ld_errf(e, LD_INVALID, "a control byte (0x%02x) in header %.64s", ch, name)
                : ld_errf(e, LD_INVALID, "a NUL byte in header %.64s", name),
             -1;
    if (ch != ' ' && ch != '\t') last = p + 1;
  }
  *last = 0;
  if (h->nfields == LD_H1_MAX_FIELDS)
    return ld_errf(e, LD_HEADERS_TOO_LARGE, "more than %d header fields", LD_H1_MAX_FIELDS), -1;
  h->fields[h->nfields].name = name;
  h->fields[h->nfields++].value = value;
  return note_field(h, name, value, e);
}

/* What the fields say together: RFC 9112 §6.1 and §6.3 (framing) and §3.2 (Host). */
static int framing(struct ld_h1_head *h, struct ld_err *e) {
  if (h->has_length && h->chunked) return ld_errf(e, LD_INVALID, "both Content-Length and Transfer-Encoding given"), -1;
  if (h->chunked && h->minor == 0) return ld_errf(e, LD_INVALID, "Transfer-Encoding in an HTTP/1.0 request"), -1;
  if (!h->hosts && h->minor == 1) return ld_errf(e, LD_INVALID, "an HTTP/1.1 request without a Host header"), -1;
  return 0;
}

int ld_h1_parse_head(char *buf, size_t len, struct ld_h1_head *h, struct ld_err *e) {
  memset(h, 0, sizeof *h);
  char *end = buf + len;
  LNC_ASSERT(len >= 4 && !memcmp(end - 4, "\r\n\r\n", 4)); /* ld_h1_head_end's head */
  char *eol = memchr(buf, '\n', len);
  if (request_line(buf, eol - 1, h, e)) return -1;
  for (char *p = eol + 1; p < end - 2; p = eol + 1) {
    eol = memchr(p, '\n', (size_t)(end - p));
    if (field_line(p, eol - 1, h, e)) return -1;
  }
  return framing(h, e);
}

const char *ld_h1_field(const struct ld_h1_head *h, const char *name) {
  for (int i = 0; i < h->nfields; i++)
    if (!strcasecmp(h->fields[i].name, name)) return h->fields[i].value;
  return NULL;
}

int ld_h1_chunk_size(const char *p, size_t len, uint64_t *size, size_t *used, struct ld_err *e) {
  const char *lf = memchr(p, '\n', len < LD_H1_CHUNK_LINE_MAX ? len : LD_H1_CHUNK_LINE_MAX);
  if (!lf) return len >= LD_H1_CHUNK_LINE_MAX ? ld_errf(e, LD_INVALID, "a chunk-size line over %d bytes", LD_H1_CHUNK_LINE_MAX), -1 : 0;
  size_t at = (size_t)(lf - p);
  if (!at || p[at - 1] != '\r') return ld_errf(e, LD_INVALID, "a chunk-size line ends in a bare LF (want CRLF)"), -1;
  uint64_t v = 0;
  size_t i = 0, digits = 0;
  for (; i < at - 1; i++) {
    char ch = p[i];
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                            : ch >= 'A' && ch <= 'F'   ? ch - 'A' + 10
                                                                       : -1;
    if (d < 0) break;
    if (v >> 60) return ld_errf(e, LD_INVALID, "a chunk size over 2^64 - 1"), -1;
    v = v << 4 | (uint64_t)d;
    digits++;
  }
  if (!digits) return ld_errf(e, LD_INVALID, "a malformed chunk size (want hexadecimal digits)"), -1;
  /* chunk-ext (RFC 9112 §7.1.1): BWS ";" ... up to the CRLF, ignored; nothing else may follow. */
  while (i < at - 1 && (p[i] == ' ' || p[i] == '\t')) i++;
  if (i < at - 1 && p[i] != ';') return ld_errf(e, LD_INVALID, "a malformed chunk size (want hexadecimal digits)"), -1;
  for (; i < at - 1; i++)
    if (!is_value_byte((unsigned char)p[i])) return ld_errf(e, LD_INVALID, "a control byte in a chunk extension"), -1;
  *size = v;
  *used = at + 1;
  return 1;
}

int ld_h1_trailer_line(const char *p, size_t len, size_t *used, struct ld_err *e) {
  const char *lf = memchr(p, '\n', len < LD_H1_CHUNK_LINE_MAX ? len : LD_H1_CHUNK_LINE_MAX);
  if (!lf) return len >= LD_H1_CHUNK_LINE_MAX ? ld_errf(e, LD_INVALID, "a trailer line over %d bytes", LD_H1_CHUNK_LINE_MAX), -1 : 0;
  size_t at = (size_t)(lf - p);
  if (!at || p[at - 1] != '\r') return ld_errf(e, LD_INVALID, "a trailer line ends in a bare LF (want CRLF)"), -1;
  *used = at + 1;
  if (at == 1) return 2; /* the empty line: the message ends */
  const char *colon = memchr(p, ':', at - 1);
  if (!colon || colon == p) return ld_errf(e, LD_INVALID, "a trailer line without a field name and colon"), -1;
  for (const char *q = p; q < colon; q++)
    if (!is_tchar((unsigned char)*q)) return ld_errf(e, LD_INVALID, "a byte not allowed in a trailer field's name"), -1;
  for (const char *q = colon + 1; q < p + at - 1; q++)
    if (!is_value_byte((unsigned char)*q)) return ld_errf(e, LD_INVALID, "a control byte in a trailer field"), -1;
  return 1;
}
