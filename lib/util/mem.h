/* Little-endian reads from byte buffers (zstd's mem.h idea): one place for what every
 * decoder needs. Lance files are little-endian; so is every host liblance builds for (the
 * build refuses others below), so a read is a memcpy the compiler turns into one load, with
 * no alignment assumption. Callers bound-check before they read. */
#ifndef LNC_UTIL_MEM_H
#define LNC_UTIL_MEM_H
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "liblance reads Lance's little-endian buffers in place: a little-endian host is required"
#endif

static inline uint16_t lnc_rd16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint32_t lnc_rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t lnc_rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
/* An unsigned value of `bytes` (0..8) bytes. */
static inline uint64_t lnc_rdw(const uint8_t *p, unsigned bytes) {
  uint64_t v = 0;
  memcpy(&v, p, bytes);
  return v;
}
/* Its inverse: the low `bytes` (0..8) bytes of v (a decoder writing one value of a column). */
static inline void lnc_wrw(uint8_t *p, uint64_t v, unsigned bytes) { memcpy(p, &v, bytes); }

#endif
