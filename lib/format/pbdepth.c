/* Protobuf messages from files are unpacked by protobuf-c, whose unpack recurses once per
 * nesting level with no bound. A page's ArrayEncoding (2.0) or PageLayout (2.1+) is recursive,
 * and 3,000 nested encodings in a 36 KB page description overflowed an 8 MB stack (a loop
 * task's stack is 256 KB). lnc_pb_unpack first walks the wire bytes, without recursing past
 * LNC_PB_MAX_DEPTH, and unpacks only what is shallow enough. */
#include "reader.h"
#include "../util/pbwire.h"
#include <protobuf-c/protobuf-c.h>

/* Whether every message field of d inside p[0, len) nests at most `left` more levels. */
static bool shallow(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, unsigned left) {
  size_t pos = 0;
  struct lnc_pb_field f;
  int rc;
  while ((rc = lnc_pb_next(p, len, &pos, &f)) > 0) {
    if (f.wire != LNC_PB_LEN) continue;
    const ProtobufCFieldDescriptor *fd =
        f.number <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)f.number) : NULL;
    if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE && (left == 0 || !shallow(fd->descriptor, f.data, f.len, left - 1)))
      return false;
  }
  return rc == 0;
}

void *lnc_pb_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len) {
  if (!shallow(d, p, len, LNC_PB_MAX_DEPTH)) return NULL;
  return protobuf_c_message_unpack(d, NULL, len, p);
}
