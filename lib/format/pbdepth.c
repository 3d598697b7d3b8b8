/* Protobuf messages from files are unpacked by protobuf-c, whose unpack recurses once per
 * nesting level with no bound. A page's ArrayEncoding (2.0) or PageLayout (2.1+) is recursive,
 * and 3,000 nested encodings in a 36 KB page description overflowed an 8 MB stack (a loop
 * task's stack is 256 KB). lnc_pb_unpack first walks the wire bytes, without recursing past
 * LNC_PB_MAX_DEPTH, and unpacks only what is shallow enough. */
#include "reader.h"
#include <protobuf-c/protobuf-c.h>

static bool varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v) {
  *v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*pos >= len) return false;
    uint8_t b = p[(*pos)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

/* Whether every message field of d inside p[0, len) nests at most `left` more levels. Wire
 * types as in the protobuf encoding spec: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32;
 * groups (3, 4) are refused, as protobuf-c refuses them. */
static bool shallow(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, unsigned left) {
  size_t pos = 0;
  while (pos < len) {
    uint64_t tag, n;
    if (!varint(p, len, &pos, &tag)) return false;
    switch (tag & 7) {
    case 0:
      if (!varint(p, len, &pos, &n)) return false;
      break;
    case 1:
      if (len - pos < 8) return false;
      pos += 8;
      break;
    case 5:
      if (len - pos < 4) return false;
      pos += 4;
      break;
    case 2: {
      if (!varint(p, len, &pos, &n) || n > len - pos) return false;
      const ProtobufCFieldDescriptor *fd =
          tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3)) : NULL;
      if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE && (left == 0 || !shallow(fd->descriptor, p + pos, (size_t)n, left - 1)))
        return false;
      pos += (size_t)n;
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

void *lnc_pb_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len) {
  if (!shallow(d, p, len, LNC_PB_MAX_DEPTH)) return NULL;
  return protobuf_c_message_unpack(d, NULL, len, p);
}
