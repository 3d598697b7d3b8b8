/* libFuzzer target: a dataset manifest file image (lib/dataset/manifest.c
 * lnc_ds_manifest_parse): the 16-byte tail, the length-prefixed protobuf, the checks a reader
 * relies on (base paths included), then the spread-struct scan open runs on it and the base
 * paths' normalisation; and the same bytes as a tag file (lnc_ds_tag_parse). Seeds: the fixture datasets' manifests, shallow clones' too
 * (tests/fuzz/corpus/fuzz_manifest/). Built
 * with the replay driver for `make fuzz-replay`, with libFuzzer by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include "dataset/dataset.h"
#include "util/beneath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Lance__Table__Manifest *m = NULL;
  if (lnc_ds_manifest_parse(data, size, "fuzz", &m, NULL) == 0) {
    /* What open does next with the schema and the fragments' field lists alone: the schema
     * index (lib/dataset/fields.c) and which struct columns are spread over data files
     * (spread.c). No fragment is set up here, so no data file's tops. */
    lnc_dataset ds = {.name = "fuzz", .m = m};
    if (lnc_ds_index_fields(&ds, NULL) == 0) (void)lnc_ds_spread_find(&ds, NULL);
    /* A shallow clone's base paths as the resolvers read them (no file is opened here). */
    for (size_t i = 0; i < m->n_base_paths; i++) {
      char abs[4096];
      (void)lnc_abs_path(m->base_paths[i]->path, abs, sizeof abs);
    }
    free(ds.spread);
    free(ds.fidx);
    free(ds.fdense);
    lance__table__manifest__free_unpacked(m, NULL);
  }
  struct lnc_error err;
  if (lnc_ds_manifest_parse(data, size, "fuzz", &m, &err) == 0) lance__table__manifest__free_unpacked(m, NULL);
  /* The same bytes as a tag file (_refs/tags/<name>.json), the other JSON-ish metadata a
   * dataset holds. */
  uint64_t version;
  (void)lnc_ds_tag_parse(data, size, "fuzz", &version, &err);
  return 0;
}
