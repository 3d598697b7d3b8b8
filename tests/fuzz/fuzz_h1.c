/* libFuzzer target: lanced's HTTP/1.1 request framing (daemon/lanced/h1parse.c), as h1.c
 * drives it. The input is a request as it arrives: its head is found (resumed at every 7th
 * byte, as reads arrive in pieces, which must agree with one pass), parsed in place, and the
 * bytes behind it read as a chunked body. Each result is checked: a head's end within the
 * input and after a CRLF CRLF, every parsed string NUL-terminated inside the head, at most
 * LD_H1_MAX_FIELDS fields, an error always with a message and a 4xx/5xx status, chunk lines
 * consumed within the bytes given. Links h1parse.c and errors.c as tests/unit/test_h1.c does.
 * Seeds: tests/fuzz/corpus/fuzz_h1/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../daemon/lanced/errors.c"
#include "../../daemon/lanced/h1parse.c"

static void check_err(const struct ld_err *e) {
  if (e->http < 400 || e->http > 599 || !e->message[0]) abort();
}

static bool inside(const char *s, const char *buf, size_t len) {
  return s >= buf && s < buf + len && memchr(s, 0, (size_t)(buf + len - s));
}

static void body(const char *p, size_t len) {
  int state = 0; /* 0 size line, 1 data, 2 trailers */
  uint64_t left = 0;
  while (len) {
    struct ld_err e = {0};
    size_t used = 0;
    int rc;
    if (state == 1) {
      size_t n = left < len ? (size_t)left : len;
      p += n, len -= n, left -= n;
      if (left) return;
      if (len < 2 || memcmp(p, "\r\n", 2)) return;
      p += 2, len -= 2;
      state = 0;
      continue;
    }
    rc = state == 0 ? ld_h1_chunk_size(p, len, &left, &used, &e) : ld_h1_trailer_line(p, len, &used, &e);
    if (rc < 0) return check_err(&e);
    if (rc == 0) return;
    if (used == 0 || used > len) abort();
    p += used, len -= used;
    if (state == 0)
      state = left ? 1 : 2;
    else if (rc == 2)
      return;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 16)) return 0;
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = 0;
  struct ld_err e = {0};
  size_t scan = 0, scan2 = 0;
  long end = ld_h1_head_end(buf, size, &scan, &e);
  long pieces = 0;
  for (size_t cut = 7; pieces == 0 && cut < size + 7; cut += 7) {
    struct ld_err e2 = {0};
    pieces = ld_h1_head_end(buf, cut < size ? cut : size, &scan2, &e2);
    if (pieces < 0) check_err(&e2);
  }
  if (end != pieces && !(end < 0 && pieces < 0)) abort(); /* pieces agree with one pass */
  if (end < 0) check_err(&e);
  if (end > 0) {
    if ((size_t)end > size || end < 4 || memcmp(buf + end - 4, "\r\n\r\n", 4)) abort();
    struct ld_h1_head *h = malloc(sizeof *h);
    if (h && ld_h1_parse_head(buf, (size_t)end, h, &e) == 0) {
      if (!inside(h->method, buf, (size_t)end) || !inside(h->target, buf, (size_t)end) || h->nfields > LD_H1_MAX_FIELDS) abort();
      for (int i = 0; i < h->nfields; i++)
        if (!inside(h->fields[i].name, buf, (size_t)end) || !inside(h->fields[i].value, buf, (size_t)end)) abort();
      if (h->chunked && h->has_length) abort();
      body(buf + end, size - (size_t)end);
    } else if (h) {
      check_err(&e);
    }
    free(h);
  }
  free(buf);
  return 0;
}
