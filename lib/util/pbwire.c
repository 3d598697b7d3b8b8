#include "pbwire.h"
#include <stdbool.h>

/* Varints carry 7 bits a byte: a uint64 takes at most 10. */
#define VARINT_MAX_SHIFT 64

static bool varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v) {
  *v = 0;
  for (unsigned shift = 0; shift < VARINT_MAX_SHIFT; shift += 7) {
    if (*pos >= len) return false;
    uint8_t b = p[(*pos)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

int lnc_pb_next(const uint8_t *p, size_t len, size_t *pos, struct lnc_pb_field *f) {
  if (*pos >= len) return 0;
  uint64_t tag, n;
  if (!varint(p, len, pos, &tag)) return -1;
  *f = (struct lnc_pb_field){.number = tag >> 3, .wire = (unsigned)(tag & 7)};
  switch (f->wire) {
  case LNC_PB_VARINT: return varint(p, len, pos, &f->varint) ? 1 : -1;
  case LNC_PB_FIXED64: n = 8; break;
  case LNC_PB_FIXED32: n = 4; break;
  case LNC_PB_LEN:
    if (!varint(p, len, pos, &n)) return -1;
    break;
  default: return -1;
  }
  if (n > len - *pos) return -1;
  f->data = p + *pos;
  f->len = (size_t)n;
  *pos += (size_t)n;
  return 1;
}
