/* UTF-8 validation for text written into JSON bodies (RFC 8259 requires UTF-8; RFC 3629 for
 * what is valid): names and messages can carry raw bytes from a damaged file, a request path
 * or a manifest, and every JSON writer replaces what is not UTF-8 with U+FFFD rather than copy
 * it (issue 14). */
#ifndef LNC_UTIL_UTF8_H
#define LNC_UTIL_UTF8_H
#include <stddef.h>
#include <stdint.h>

/* The length (2-4) of the valid multi-byte sequence at s[0..n), or 0 when s[0] (>= 0x80)
 * does not start one: overlong forms, surrogates (U+D800-DFFF) and code points past
 * U+10FFFF are invalid (RFC 3629 §4's table). */
static inline size_t lnc_utf8_seq(const uint8_t *s, size_t n) {
  uint8_t c = s[0];
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c == 0xE0)
    len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    len = 3;
  else if (c == 0xED)
    len = 3, hi = 0x9F;
  else if (c == 0xF0)
    len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    len = 4;
  else if (c == 0xF4)
    len = 4, hi = 0x8F;
  else
    return 0;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* U+FFFD REPLACEMENT CHARACTER, as JSON writes it in place of a byte that is not UTF-8. */
#define LNC_JSON_REPLACEMENT "\\ufffd"

#endif
