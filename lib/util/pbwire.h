/* Walking a protobuf message's wire bytes field by field, without unpacking it (the protobuf
 * encoding spec, "Message Structure"): one copy for the library, which bounds how deep a
 * message from a file nests before protobuf-c recurses into it (format/pbdepth.c), and the
 * daemon, which looks for NUL bytes in request strings before protobuf-c cuts them short. */
#ifndef LNC_UTIL_PBWIRE_H
#define LNC_UTIL_PBWIRE_H
#include <stddef.h>
#include <stdint.h>

/* Wire types (the spec's numbering); groups (3, 4) are refused, as protobuf-c refuses them. */
enum { LNC_PB_VARINT = 0,
       LNC_PB_FIXED64 = 1,
       LNC_PB_LEN = 2,
       LNC_PB_FIXED32 = 5 };

struct lnc_pb_field {
  uint64_t number;     /* the field number (what the tag holds above its 3 wire-type bits) */
  unsigned wire;       /* LNC_PB_* */
  uint64_t varint;     /* LNC_PB_VARINT: the value */
  const uint8_t *data; /* LNC_PB_LEN: the payload, len bytes inside the message */
  size_t len;
};

/* The field at p[*pos] of a message of len bytes, and *pos past it: 1 with *f filled, 0 at
 * the message's end, -1 when the bytes are damaged (a varint over 10 bytes or cut short, a
 * payload or fixed value past the end, a group or an unknown wire type). */
int lnc_pb_next(const uint8_t *p, size_t len, size_t *pos, struct lnc_pb_field *f);

#endif
