/* Small helpers every module uses: appends to struct lnc_buf (the buffer type lance.h
 * hands out, so a body built here and one from liblance's encoders are the same thing),
 * a monotonic clock and strict unsigned parsing. */
#include "lanced.h"
#include "util/buf.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The daemon's policy over liblance's buffer (util/buf.c): an append that cannot get memory
 * ends the process (see lanced.h), so no call site checks. */
static void out_of_memory(const struct lnc_buf *b) {
  ld_log(LD_LOG_ERROR, "out of memory growing a buffer of %zu bytes", b->len);
  abort();
}

void ld_buf_append(struct lnc_buf *b, const void *p, size_t n) {
  if (lnc_buf_append(b, p, n)) out_of_memory(b);
}

void ld_buf_puts(struct lnc_buf *b, const char *s) { ld_buf_append(b, s, strlen(s)); }

void ld_buf_printf(struct lnc_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = lnc_buf_vprintf(b, fmt, ap);
  va_end(ap);
  if (rc) out_of_memory(b);
}

/* liblance's one JSON string writer (escapes, and U+FFFD for bytes that are not UTF-8). */
void ld_buf_json_str(struct lnc_buf *b, const char *s, size_t n) {
  if (lnc_json_str(b, s, n)) out_of_memory(b);
}
