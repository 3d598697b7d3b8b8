/* Base paths (reader feature flag 16): a manifest may list data and deletion files that live
 * below another directory than the dataset's own. LanceDB's shallow clone (`cloneTable`)
 * writes one: the clone's manifest names the source dataset by absolute path (a base path
 * with is_dataset_root set) and the source's files by that base's id, while files written
 * after the clone sit in the clone itself (no base id). A clone of a clone names two bases.
 *
 * Base paths are absolute (a local path, file://, or s3://): the opener says where each may
 * be read from (struct lnc_ds_resolver). The engine confines them to its data root or its
 * mounts; a dataset opened on its own (lnc_dataset_open) opens local ones as named, as Lance
 * does. Everything is resolved at open, so a take never resolves a path. */
#include "dataset.h"
#include "../util/assert.h"
#include "../util/beneath.h"
#include "../util/error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* More base paths than this is refused: LanceDB adds one per clone level (and per directory
 * of imported files), so a real manifest lists a handful. Each base a file names holds a
 * directory descriptor while the dataset opens, outside the engine's bound on open files. */
#define MAX_BASES 64

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* A base path's id and kind, sorted by id for the manifest check. */
struct idkind {
  uint32_t id;
  bool root;
};

/* The listed base with id, or NULL (ids: the n listed, sorted; cmp_u32 reads the id first). */
static const struct idkind *find_id(const struct idkind *ids, size_t n, uint32_t id) {
  struct idkind key = {.id = id};
  return bsearch(&key, ids, n, sizeof *ids, cmp_u32);
}

static int check_refs(const Lance__Table__Manifest *m, const struct idkind *ids, const char *what,
                      struct lnc_error *err) {
  size_t n = m->n_base_paths;
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *fr = m->fragments[i];
    for (size_t j = 0; j < fr->n_files; j++) {
      const Lance__Table__DataFile *df = fr->files[j];
      if (LNC_DS_DF_HAS_BASE(df) && !find_id(ids, n, df->base_id))
        return lnc_errf(err, LNC_ECORRUPT, "%s: data file %s names base path %u, which the manifest does not list",
                        what, df->path, df->base_id);
    }
    const Lance__Table__DeletionFile *del = fr->deletion_file;
    if (!del || !LNC_DS_DEL_HAS_BASE(del)) continue;
    const struct idkind *b = find_id(ids, n, del->base_id);
    if (!b)
      return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu's deletion file names base path %u, which the manifest does not list",
                      what, (unsigned long long)fr->id, del->base_id);
    /* Deletion files live in <dataset>/_deletions/: only a dataset root has one. */
    if (!b->root)
      return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu's deletion file is below base path %u, which is not a dataset",
                      what, (unsigned long long)fr->id, del->base_id);
  }
  return 0;
}

int lnc_ds_bases_check(const Lance__Table__Manifest *m, const char *what, struct lnc_error *err) {
  size_t n = m->n_base_paths;
  if (n > MAX_BASES)
    return lnc_errf(err, LNC_ELIMIT, "%s: manifest lists %zu base paths, more than the %d lanced reads", what, n,
                    MAX_BASES);
  struct idkind *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!ids) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", what);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const Lance__Table__BasePath *b = m->base_paths[i];
    ids[i] = (struct idkind){b->id, b->is_dataset_root};
    if (!b->path || !b->path[0]) rc = lnc_errf(err, LNC_ECORRUPT, "%s: base path %u has no path", what, b->id);
  }
  if (!rc) qsort(ids, n, sizeof *ids, cmp_u32);
  for (size_t i = 1; i < n && !rc; i++)
    if (ids[i].id == ids[i - 1].id) rc = lnc_errf(err, LNC_ECORRUPT, "%s: base path id %u is listed twice", what, ids[i].id);
  if (!rc) rc = check_refs(m, ids, what, err);
  free(ids);
  return rc;
}

/* ---- resolving at open ------------------------------------------------------------------- */

int lnc_ds_base_local(const char *uri, char *abs, size_t cap, struct lnc_error *err) {
  size_t n = strlen(uri);
  if (n >= cap) return lnc_errf(err, LNC_ECORRUPT, "a base path of %zu bytes (at most %zu read)", n, cap - 1);
  if (!lnc_abs_path(uri, abs, cap)) return 0;
  bool store = strstr(uri, "://") && strncmp(uri, "file://", 7);
  return lnc_errf(err, store ? LNC_EUNSUPPORTED : LNC_ECORRUPT, "'%.300s' is %s", uri,
                  store ? "in a store lanced does not read (s3:// is read through a mount)"
                        : "not an absolute path or file:// URL");
}

/* Without an engine: a local base path is opened as the manifest names it; an object store
 * needs a mount, which only an engine has. */
static int resolve_as_named(void *ctx, const char *uri, struct lnc_ds_loc *loc, char **dir,
                            struct lnc_error *err) {
  (void)ctx;
  char abs[4096];
  if (!strncmp(uri, "s3://", 5))
    return lnc_errf(err, LNC_EUNSUPPORTED, "'%.300s' is in an object store: read the dataset through lanced and a mount", uri);
  int rc = lnc_ds_base_local(uri, abs, sizeof abs, err);
  if (rc) return rc;
  int fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return lnc_errf(err, e == ENOENT || e == ENOTDIR ? LNC_ECORRUPT : lnc_code_from_errno(e), "%s: %s",
                    abs, strerror(e));
  }
  if (!(*dir = strdup(abs))) {
    close(fd);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  *loc = (struct lnc_ds_loc){.fd = fd};
  return 0;
}

static int cmp_base(const void *a, const void *b) {
  return cmp_u32(&((const struct lnc_ds_base *)a)->id, &((const struct lnc_ds_base *)b)->id);
}

/* The listed base with id (sorted ds->bases), or NULL. */
static struct lnc_ds_base *base_find(const lnc_dataset *ds, uint32_t id) {
  struct lnc_ds_base key = {.id = id};
  return bsearch(&key, ds->bases, ds->nbases, sizeof key, cmp_base);
}

/* Marks the bases some data or deletion file names: only those are resolved. A clone that
 * was compacted names its source no more, and reads as Lance reads it when the source is
 * gone, outside the root, or under no mount. */
static void mark_used(lnc_dataset *ds) {
  const Lance__Table__Manifest *m = ds->m;
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *fr = m->fragments[i];
    for (size_t j = 0; j < fr->n_files; j++)
      if (LNC_DS_DF_HAS_BASE(fr->files[j])) base_find(ds, fr->files[j]->base_id)->used = true;
    if (fr->deletion_file && LNC_DS_DEL_HAS_BASE(fr->deletion_file))
      base_find(ds, fr->deletion_file->base_id)->used = true;
  }
}

int lnc_ds_bases_open(lnc_dataset *ds, const struct lnc_ds_resolver *res, struct lnc_error *err) {
  const Lance__Table__Manifest *m = ds->m;
  if (!m->n_base_paths) return 0;
  ds->bases = calloc(m->n_base_paths, sizeof *ds->bases);
  if (!ds->bases) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  for (size_t i = 0; i < m->n_base_paths; i++) {
    const Lance__Table__BasePath *b = m->base_paths[i];
    ds->bases[i] = (struct lnc_ds_base){.id = b->id, .loc = {.fd = -1}, .pb = b};
  }
  ds->nbases = m->n_base_paths;
  qsort(ds->bases, ds->nbases, sizeof *ds->bases, cmp_base);
  mark_used(ds);
  for (size_t i = 0; i < ds->nbases; i++) {
    struct lnc_ds_base *x = &ds->bases[i];
    if (!x->used) continue;
    int rc = res ? res->resolve(res->ctx, x->pb->path, &x->loc, &x->dir, err)
                 : resolve_as_named(NULL, x->pb->path, &x->loc, &x->dir, err);
    if (rc) {
      lnc_err_prefix(err, "%s: base path %u (a shallow clone's source)", ds->name, x->id);
      return rc;
    }
  }
  return 0;
}

void lnc_ds_bases_detach(lnc_dataset *ds) {
  for (size_t i = 0; i < ds->nbases; i++) {
    if (ds->bases[i].loc.fd >= 0) close(ds->bases[i].loc.fd);
    ds->bases[i].loc.fd = -1;
    ds->bases[i].loc.s3 = NULL;
  }
}

void lnc_ds_bases_free(lnc_dataset *ds) {
  for (size_t i = 0; i < ds->nbases; i++) {
    lnc_ds_loc_close(&ds->bases[i].loc);
    free(ds->bases[i].dir);
  }
  free(ds->bases);
  ds->bases = NULL;
  ds->nbases = 0;
}

size_t lnc_ds_bases_memory(const lnc_dataset *ds) {
  size_t b = ds->nbases * sizeof *ds->bases;
  for (size_t i = 0; i < ds->nbases; i++)
    b += (ds->bases[i].dir ? strlen(ds->bases[i].dir) + 1 : 0) +
         (ds->bases[i].loc.prefix ? strlen(ds->bases[i].loc.prefix) + 1 : 0);
  return b;
}

/* ---- where a file is ---------------------------------------------------------------------- */

/* The base data file df is below (NULL: the dataset's own directory) and the directory of it
 * that holds it: "data/" but for a base that is not a dataset root. */
static const struct lnc_ds_base *file_base(const lnc_dataset *ds, const Lance__Table__DataFile *df,
                                           const char **sub) {
  const struct lnc_ds_base *b = LNC_DS_DF_HAS_BASE(df) ? base_find(ds, df->base_id) : NULL;
  LNC_ASSERT(!LNC_DS_DF_HAS_BASE(df) || (b && b->used)); /* checked at parse, resolved at open */
  *sub = !b || b->pb->is_dataset_root ? "data/" : "";
  return b;
}

int lnc_ds_file_where(const lnc_dataset *ds, const Lance__Table__DataFile *df, const struct lnc_ds_loc **loc,
                      char *rel, size_t cap, struct lnc_error *err) {
  const char *sub;
  const struct lnc_ds_base *b = file_base(ds, df, &sub);
  *loc = b ? &b->loc : &ds->loc;
  if ((size_t)snprintf(rel, cap, "%s%s", sub, df->path) >= cap)
    return lnc_errf(err, LNC_ECORRUPT, "%s: data file path too long", ds->name);
  return 0;
}

const struct lnc_ds_loc *lnc_ds_deletion_loc(const lnc_dataset *ds, const Lance__Table__DeletionFile *df) {
  return df && LNC_DS_DEL_HAS_BASE(df) ? &base_find(ds, df->base_id)->loc : &ds->loc;
}

int lnc_ds_file_engine_path(const lnc_dataset *ds, const char *dir, const Lance__Table__DataFile *df, char *buf,
                            size_t cap, struct lnc_error *err) {
  const char *sub;
  const struct lnc_ds_base *b = file_base(ds, df, &sub);
  if ((size_t)snprintf(buf, cap, "%s/%s%s", b ? b->dir : dir, sub, df->path) >= cap)
    return lnc_errf(err, LNC_EINVAL, "%s: data file path too long", ds->name);
  return 0;
}

const char *lnc_ds_file_base_dir(const lnc_dataset *ds, const Lance__Table__DataFile *df) {
  const char *sub;
  const struct lnc_ds_base *b = file_base(ds, df, &sub);
  return b ? b->dir : NULL;
}
