/* libFuzzer target: both deletion-file formats — the Arrow IPC file of one uint32 column
 * (lnc_ds_read_arrow_u32) and the portable Roaring bitmap (lnc_ds_read_roaring) — on every
 * input, with a row bound taken from its first byte so the max_values check is exercised too.
 * Seeds: the fixture datasets' _deletions files (tests/fuzz/corpus/fuzz_deletion/). */
#include <stdint.h>
#include <stdlib.h>
#include "dataset/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t max = size ? (data[0] & 1 ? 1u << 20 : (uint64_t)data[0] * 64) : 0;
  uint32_t *vals = NULL;
  size_t n = 0;
  struct lnc_error err;
  if (lnc_ds_read_arrow_u32(data, size, "fuzz", max, &vals, &n, &err) == 0) free(vals);
  struct lnc_ds_deletions d;
  if (lnc_ds_read_roaring(data, size, "fuzz", max, &d, NULL) == 0) free(d.runs);
  return 0;
}
