/* A bounded reader for the portable Roaring bitmap serialization (Lance's BITMAP deletion
 * files): cookie 12346 (no run containers) or 12347 (run bitmap), key/cardinality headers,
 * optional offsets, then array, bitmap and run containers. Produces runs of deleted rows
 * (a run container stays one run: never expanded row by row). */
#include "dataset.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>

#define COOKIE_NO_RUN       12346u
#define COOKIE_RUN          12347u
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX           4096u


int lnc_ds_read_roaring(const uint8_t *src, size_t len, const char *what, uint64_t max_values,
                        struct lnc_ds_deletions *out, struct lnc_error *err) {
  memset(out, 0, sizeof *out);
  size_t pos = 0;
  if (len < 4) return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring bitmap truncated", what);
  uint32_t cookie = lnc_rd32(src);
  uint32_t n;
  const uint8_t *runbits = NULL;
  int has_offsets;
  if (cookie == COOKIE_NO_RUN) {
    if (len < 8) return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring bitmap truncated", what);
    n = lnc_rd32(src + 4);
    pos = 8;
    has_offsets = 1;
  } else if ((cookie & 0xFFFF) == COOKIE_RUN) {
    n = (cookie >> 16) + 1;
    pos = 4;
    if ((n + 7) / 8 > len - pos)
      return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring run bitmap truncated", what);
    runbits = src + pos;
    pos += (n + 7) / 8;
    has_offsets = n >= NO_OFFSET_THRESHOLD;
  } else {
    return lnc_errf(err, LNC_ECORRUPT, "%s: not a Roaring bitmap (cookie %u)", what, cookie);
  }
  if (n > 65536) return lnc_errf(err, LNC_ECORRUPT, "%s: %u Roaring containers", what, n);
  if ((uint64_t)n * 4 > len - pos)
    return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring headers truncated", what);
  const uint8_t *hdr = src + pos;
  pos += (size_t)n * 4;
  if (has_offsets) {
    if ((uint64_t)n * 4 > len - pos)
      return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring offsets truncated", what);
    pos += (size_t)n * 4; /* containers are read sequentially; offsets are not needed */
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += (uint64_t)lnc_rd16(hdr + 4 * i + 2) + 1;
  if (total > max_values)
    return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring bitmap holds %llu values, more than the "
                                       "%llu rows",
                    what, (unsigned long long)total, (unsigned long long)max_values);
  /* The headers' cardinalities are checked against the containers below; the runs grow as
   * they are found, so a lying header cannot make us allocate. */
  int prev_key = -1, rc = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t key = lnc_rd16(hdr + 4 * i), card = (uint32_t)lnc_rd16(hdr + 4 * i + 2) + 1;
    if ((int)key <= prev_key) goto bad_order;
    prev_key = (int)key;
    uint64_t got = 0;
    uint32_t prev = 0; /* last value in this container, for the order check */
    if (runbits && (runbits[i / 8] >> (i % 8)) & 1) {
      if (len - pos < 2) goto truncated;
      uint32_t nruns = lnc_rd16(src + pos);
      pos += 2;
      if ((uint64_t)nruns * 4 > len - pos) goto truncated;
      for (uint32_t r = 0; r < nruns; r++) {
        uint32_t start = lnc_rd16(src + pos + 4 * r), l = (uint32_t)lnc_rd16(src + pos + 4 * r + 2) + 1;
        if (start + l > 65536 || got + l > card) goto bad_card;
        if (got > 0 && prev >= start) goto bad_order;
        if ((rc = lnc_ds_del_add(out, (key << 16) | start, l)) != 0) goto add_failed;
        got += l;
        prev = start + l - 1;
      }
      if (got != card) goto bad_card;
      pos += (size_t)nruns * 4;
    } else if (card <= ARRAY_MAX) {
      if ((uint64_t)card * 2 > len - pos) goto truncated;
      for (uint32_t j = 0; j < card; j++) {
        uint32_t lo = lnc_rd16(src + pos + 2 * j);
        if (j > 0 && prev >= lo) goto bad_order;
        if ((rc = lnc_ds_del_add(out, (key << 16) | lo, 1)) != 0) goto add_failed;
        prev = lo;
      }
      pos += (size_t)card * 2;
    } else {
      if (len - pos < 8192) goto truncated;
      /* Set bits, a stretch of ones at a time (ctz of the word and of its complement). */
      for (uint32_t w = 0; w < 1024; w++) {
        uint64_t word = lnc_rd64(src + pos + 8 * w);
        while (word) {
          unsigned b = (unsigned)__builtin_ctzll(word);
          uint64_t rest = ~(word >> b);
          unsigned ones = rest ? (unsigned)__builtin_ctzll(rest) : 64 - b;
          got += ones;
          if (got > card) goto bad_card;
          if ((rc = lnc_ds_del_add(out, (key << 16) | (w * 64 + b), ones)) != 0) goto add_failed;
          word = ones + b >= 64 ? 0 : word & ~(((uint64_t)1 << (b + ones)) - 1);
        }
      }
      if (got != card) goto bad_card;
      pos += 8192;
    }
  }
  if (pos != len) {
    free(out->runs);
    memset(out, 0, sizeof *out);
    return lnc_errf(err, LNC_ECORRUPT, "%s: %zu bytes after the Roaring bitmap", what, len - pos);
  }
  return 0;
add_failed:
  free(out->runs);
  memset(out, 0, sizeof *out);
  return rc == LNC_ENOMEM ? lnc_errf(err, LNC_ENOMEM, "%s: out of memory", what)
                          : lnc_errf(err, LNC_ECORRUPT, "%s: a run of 2^32 rows or more", what);
truncated:
  free(out->runs);
  memset(out, 0, sizeof *out);
  return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring container truncated", what);
bad_order:
  free(out->runs);
  memset(out, 0, sizeof *out);
  return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring keys or values out of order", what);
bad_card:
  free(out->runs);
  memset(out, 0, sizeof *out);
  return lnc_errf(err, LNC_ECORRUPT, "%s: Roaring container cardinality mismatch", what);
}
