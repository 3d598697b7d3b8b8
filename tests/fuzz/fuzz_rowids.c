/* libFuzzer target: a fragment's stable row id sequence (Lance's RowIdSequence, inline in a
 * manifest: lib/dataset/rowids.c lnc_ds_rowids_decode). Input: two little-endian bytes of
 * row count (the fragment's physical rows, at most 65535 here), then the sequence's bytes.
 * Seeds: the inline sequences of the stable-row-id fixtures and every segment kind
 * (tests/fuzz/corpus/fuzz_rowids/, written by gen_corpus_rowids.py). */
#include <stdint.h>
#include <stdlib.h>
#include "dataset/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  uint64_t rows = (uint64_t)data[0] | (uint64_t)data[1] << 8;
  uint64_t *values = malloc((rows ? rows : 1) * sizeof *values);
  if (!values) return 0;
  struct lnc_error err;
  if (lnc_ds_rowids_decode(data + 2, size - 2, rows, values, &err) == 0) {
    uint64_t sum = 0; /* every value written: MSan/ASan would see an unset or outside one */
    for (uint64_t i = 0; i < rows; i++) sum += values[i];
    (void)sum;
  }
  lnc_ds_rowids_decode(data + 2, size - 2, rows, values, NULL);
  free(values);
  return 0;
}
