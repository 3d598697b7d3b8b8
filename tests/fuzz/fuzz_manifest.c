/* libFuzzer target: a dataset manifest file image (lib/dataset/manifest.c
 * lnc_ds_manifest_parse): the 16-byte tail, the length-prefixed protobuf, the checks a reader
 * relies on. Seeds: the fixture datasets' manifests (tests/fuzz/corpus/fuzz_manifest/). Built
 * with the replay driver for `make fuzz-replay`, with libFuzzer by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include "dataset/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Lance__Table__Manifest *m = NULL;
  if (lnc_ds_manifest_parse(data, size, "fuzz", &m, NULL) == 0) lance__table__manifest__free_unpacked(m, NULL);
  struct lnc_error err;
  if (lnc_ds_manifest_parse(data, size, "fuzz", &m, &err) == 0) lance__table__manifest__free_unpacked(m, NULL);
  return 0;
}
