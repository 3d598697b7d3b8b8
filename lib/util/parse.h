/* Strict text-to-number parsing, one copy for the library and the programs (a dataset's
 * manifest names and tag files, the daemon's query values and headers). */
#ifndef LNC_UTIL_PARSE_H
#define LNC_UTIL_PARSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal uint64 from exactly [s, s+n): digits only (no sign, space or prefix), 1 to 20
 * of them, no overflow. false leaves *out unchanged. */
bool lnc_parse_u64(const char *s, size_t n, uint64_t *out);

#endif
