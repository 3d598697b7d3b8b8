/* struct lnc_buf: a growable byte buffer, doubling capacity. */
#include "buf.h"
#include "utf8.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lnc_buf_free(struct lnc_buf *b) {
  if (!b) return; /* a public function: NULL is fine, as for free() */
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

int lnc_grow_array(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  if (elem == 0 || need > SIZE_MAX / 2 / elem) return LNC_ENOMEM;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *np = realloc(*p, c * elem);
  if (!np) return LNC_ENOMEM;
  *p = np;
  *cap = c;
  return 0;
}

int lnc_buf_reserve(struct lnc_buf *b, size_t extra) {
  if (extra > SIZE_MAX - b->len) return LNC_ENOMEM;
  size_t need = b->len + extra;
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) return LNC_ENOMEM;
  b->data = p;
  b->cap = cap;
  return 0;
}

int lnc_buf_append(struct lnc_buf *b, const void *p, size_t n) {
  if (n == 0) return 0;
  int rc = lnc_buf_reserve(b, n);
  if (rc) return rc;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

int lnc_buf_putc(struct lnc_buf *b, char c) { return lnc_buf_append(b, &c, 1); }
int lnc_buf_puts(struct lnc_buf *b, const char *s) { return lnc_buf_append(b, s, strlen(s)); }

/* Formats straight into the buffer's spare room (at least PRINTF_ROOM bytes of it), and a
 * second time only when the text was longer: one pass for the short pieces of JSON and
 * headers that are nearly every call. */
#define PRINTF_ROOM 128
int lnc_buf_vprintf(struct lnc_buf *b, const char *fmt, va_list ap) {
  int rc = lnc_buf_reserve(b, PRINTF_ROOM);
  if (rc) return rc;
  va_list again;
  va_copy(again, ap);
  size_t room = b->cap - b->len;
  int n = vsnprintf((char *)b->data + b->len, room, fmt, ap);
  if (n >= 0 && (size_t)n >= room && !(rc = lnc_buf_reserve(b, (size_t)n + 1)))
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, again);
  va_end(again);
  if (n < 0) return LNC_EINTERNAL;
  if (!rc) b->len += (size_t)n;
  return rc;
}

int lnc_buf_printf(struct lnc_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = lnc_buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

int lnc_json_str(struct lnc_buf *b, const char *s, size_t n) {
  if (!b || (n && !s)) return LNC_EINVAL;
  return lnc_buf_json_str(b, s, n);
}

int lnc_buf_json_str(struct lnc_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (lnc_buf_reserve(b, n + 2)) return LNC_ENOMEM;
  b->data[b->len++] = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[7];
    size_t elen = 0;
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      elen = 2;
    } else if (c == '\n') {
      esc[0] = '\\';
      esc[1] = 'n';
      elen = 2;
    } else if (c == '\r') {
      esc[0] = '\\';
      esc[1] = 'r';
      elen = 2;
    } else if (c == '\t') {
      esc[0] = '\\';
      esc[1] = 't';
      elen = 2;
    } else if (c == '\b') {
      esc[0] = '\\';
      esc[1] = 'b';
      elen = 2;
    } else if (c == '\f') {
      esc[0] = '\\';
      esc[1] = 'f';
      elen = 2;
    } else if (c < 0x20) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      elen = 6;
    } else if (c >= 0x80) {
      size_t k = lnc_utf8_seq((const uint8_t *)s + i, n - i);
      if (k ? lnc_buf_append(b, s + i, k) : lnc_buf_append(b, LNC_JSON_REPLACEMENT, 6)) return LNC_ENOMEM;
      if (k) i += k - 1;
      continue;
    }
    if (elen) {
      if (lnc_buf_append(b, esc, elen)) return LNC_ENOMEM;
    } else if (lnc_buf_putc(b, (char)c))
      return LNC_ENOMEM;
  }
  return lnc_buf_putc(b, '"');
}
