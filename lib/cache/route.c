/* The take engine's front door: what a path is, then straight down.
 *
 * A path names a Lance data file or a dataset directory. Which one is resolved once and then
 * known from the caches: a dataset directory checked within revalidate_ms is in the dataset
 * cache (lnc_dscache_known_dir), a data file is an entry of the file cache; only a path in
 * neither asks the disk, and the file cache's stat of it tells a directory apart at no extra
 * cost. From there each kind goes down its own way, never back up:
 *   data file -> engine.c (search cache, planned reads, decode);
 *   dataset   -> datasets.c (version resolved, offsets mapped to fragment rows by
 *                dataset/rowmap.c, per-file takes through engine.c, results assembled).
 * This file is the only one that imports both caches; engine.c imports neither (under budget
 * pressure it calls the hook this file gives it, lnc_engine_on_pressure). */
#include "../lance.h"
#include "cache.h"
#include "../take/take.h"
#include "../util/error.h"
#include <string.h>

/* The file cache's make_room, once no idle file is left: an idle dataset version goes. */
static bool shed_dataset(void *dscache) { return lnc_dscache_shed(dscache); }

int lnc_engine_new(const struct lnc_engine_config *cfg, lnc_engine **out, struct lnc_error *err) {
  if (!out) return lnc_errf(err, LNC_EINVAL, "lnc_engine_new: NULL argument");
  *out = NULL;
  lnc_engine *e;
  int rc = lnc_files_new(cfg, &e, err);
  if (rc) return rc;
  struct lnc_dscache *c;
  if ((rc = lnc_dscache_new(e, &c, err))) {
    lnc_files_free(e);
    return rc;
  }
  lnc_engine_attach_dscache(e, c);
  lnc_engine_on_pressure(e, shed_dataset, c);
  *out = e;
  return 0;
}

void lnc_engine_free(lnc_engine *e) {
  if (!e) return;
  lnc_dscache_free(lnc_engine_dscache(e)); /* first: its versions read through the files */
  lnc_files_free(e);
}

void lnc_engine_get_stats(lnc_engine *e, struct lnc_engine_stats *o) {
  memset(o, 0, sizeof *o);
  if (!e) return;
  lnc_files_stats(e, o);
  if (lnc_engine_dscache(e)) lnc_dscache_stats(lnc_engine_dscache(e), o);
}

int lnc_engine_take(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                    const char *const *columns, size_t ncolumns,
                    const struct lnc_take_options *opts, struct ArrowSchema *schema,
                    struct ArrowArray *array, struct lnc_take_stats *stats,
                    struct lnc_error *err) {
  if (!w || !path) return lnc_errf(err, LNC_EINVAL, "lnc_engine_take: NULL argument");
  bool is_dir = lnc_dscache_known_dir(lnc_engine_dscache(lnc_worker_engine(w)), path);
  const struct lnc_colsel sel = {.names = columns, .n = columns ? ncolumns : 0};
  int rc = is_dir ? LNC_ENOTFOUND
                  : lnc_engine_take_file(w, path, ids, n, &sel, opts, schema, array, stats, &is_dir, err);
  if (rc && is_dir)
    rc = lnc_engine_dataset_take(w, path, 0, ids, n, columns, ncolumns, opts, schema, array,
                                 stats, err);
  else if (rc == LNC_ENOTFOUND) /* a dataset removed since it was served is not kept for ever */
    lnc_dscache_forget(lnc_engine_dscache(lnc_worker_engine(w)), path);
  return rc;
}
