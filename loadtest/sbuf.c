/* Growable byte string (see sbuf.h). Always NUL-terminated after each append so the
 * contents can be handed to printf-style code without copying. */
#include "sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ld_sbuf_reserve(ld_sbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    fprintf(stderr, "lanced-load: out of memory\n");
    exit(2);
  }
  b->p = p;
  b->cap = cap;
}

void ld_sbuf_append(ld_sbuf *b, const void *d, size_t n) {
  ld_sbuf_reserve(b, n);
  if (n) memcpy(b->p + b->len, d, n);
  b->len += n;
  b->p[b->len] = 0;
}

void ld_sbuf_puts(ld_sbuf *b, const char *s) { ld_sbuf_append(b, s, strlen(s)); }

void ld_sbuf_putc(ld_sbuf *b, char c) { ld_sbuf_append(b, &c, 1); }

unsigned ld_u64_digits(uint64_t v) {
  unsigned d = 1;
  while (v >= 10) {
    v /= 10;
    d++;
  }
  return d;
}

void ld_sbuf_u64(ld_sbuf *b, uint64_t v) {
  char tmp[20];
  int n = 0;
  do {
    tmp[19 - n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  ld_sbuf_append(b, tmp + 20 - n, (size_t)n);
}

void ld_sbuf_clear(ld_sbuf *b) {
  b->len = 0;
  if (b->p) b->p[0] = 0;
}

void ld_sbuf_free(ld_sbuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}
