/* FNV-1a, 64-bit: the one hash liblance uses for its tables (search-cache paths, dataset
 * directories, dictionary values). Keys are short and trusted to be few; nothing here needs
 * resistance to chosen collisions. Constants: the FNV 64-bit offset basis and prime. */
#ifndef LNC_UTIL_HASH_H
#define LNC_UTIL_HASH_H
#include <stddef.h>
#include <stdint.h>

#define LNC_FNV64_OFFSET 1469598103934665603ull
#define LNC_FNV64_PRIME  1099511628211ull

static inline uint64_t lnc_fnv1a(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = LNC_FNV64_OFFSET;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * LNC_FNV64_PRIME;
  return h;
}

static inline uint64_t lnc_fnv1a_str(const char *s) {
  uint64_t h = LNC_FNV64_OFFSET;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * LNC_FNV64_PRIME;
  return h;
}

#endif
