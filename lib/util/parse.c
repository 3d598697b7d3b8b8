#include "parse.h"

/* The longest decimal uint64: UINT64_MAX has 20 digits. */
#define U64_MAX_DIGITS 20

bool lnc_parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > U64_MAX_DIGITS) return false;
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
