/* Small helpers every module uses: appends to struct lnc_buf (the buffer type lance.h
 * hands out, so a body built here and one from liblance's encoders are the same thing),
 * a monotonic clock and strict unsigned parsing. */
#include "lanced.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void reserve(struct lnc_buf *b, size_t extra) {
  size_t need = b->len + extra;
  if (need <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) {
    ld_log(LD_LOG_ERROR, "out of memory growing a buffer to %zu bytes", cap);
    abort();
  }
  b->data = p;
  b->cap = cap;
}

void ld_buf_append(struct lnc_buf *b, const void *p, size_t n) {
  if (!n) return;
  reserve(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

void ld_buf_puts(struct lnc_buf *b, const char *s) { ld_buf_append(b, s, strlen(s)); }

void ld_buf_printf(struct lnc_buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if ((size_t)n < sizeof tmp) {
    ld_buf_append(b, tmp, (size_t)n);
    return;
  }
  reserve(b, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* liblance's one JSON string writer (escapes, and U+FFFD for bytes that are not UTF-8). */
void ld_buf_json_str(struct lnc_buf *b, const char *s, size_t n) {
  if (lnc_json_str(b, s, n)) abort(); /* out of memory: see ld_buf_append */
}

double ld_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool ld_parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}
