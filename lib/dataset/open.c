/* The public dataset handle: open a version (pick it, parse its manifest, load deletion
 * vectors, check data files exist, build the row map), version queries, lazily opened data
 * files, close. Everything but the lazily opened lnc_file handles is immutable after open. */
#include "dataset.h"
#include "../util/error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_LIMIT ((size_t)1 << 30)

void lnc_dataset_close(lnc_dataset *ds) {
  if (!ds) return;
  for (size_t i = 0; i < ds->nfrag; i++) {
    struct lnc_ds_fragment *f = &ds->frags[i];
    for (size_t j = 0; j < f->nfiles; j++) {
      if (f->files[j].file) lnc_file_close(f->files[j].file);
      pthread_mutex_destroy(&f->files[j].lock);
      if (!f->files[j].tops_borrowed) free(f->files[j].tops);
    }
    free(f->files);
    free(f->del.runs);
  }
  free(ds->frags);
  free(ds->dels);
  free(ds->map.live_start);
  free(ds->by_id);
  free(ds->idruns);
  free(ds->idruns_addr);
  free(ds->spread);
  free(ds->fidx);
  free(ds->fdense);
  lnc_ds_bases_free(ds);
  if (ds->m) lance__table__manifest__free_unpacked(ds->m, NULL);
  lnc_ds_loc_close(&ds->loc);
  free(ds->name);
  free(ds);
}

void lnc_ds_detach_dir(lnc_dataset *ds) {
  if (ds->loc.fd >= 0) close(ds->loc.fd);
  ds->loc.fd = -1;
  ds->loc.s3 = NULL;
  lnc_ds_bases_detach(ds);
}

static int check_data_file(lnc_dataset *ds, const Lance__Table__DataFragment *fr,
                           const Lance__Table__DataFile *df, struct lnc_error *err) {
  char rel[4096];
  const struct lnc_ds_loc *loc;
  int rc = lnc_ds_file_where(ds, df, &loc, rel, sizeof rel, err);
  if (rc) return rc;
  /* In an object store this would be a HEAD per data file at every open; there the engine
   * finds a missing file at its first take (LNC_ECORRUPT, as here) and checks its rows. */
  if (loc->fd < 0) return 0;
  int fd = lnc_ds_openat(loc->fd, rel, O_RDONLY, ds->name, err);
  if (fd < 0) {
    /* The manifest promises the file: its absence means a damaged dataset. */
    int code = -fd == LNC_ENOTFOUND ? LNC_ECORRUPT : -fd;
    if (err) err->code = code;
    const char *base = lnc_ds_file_base_dir(ds, df);
    if (base) lnc_err_prefix(err, "below base path %u (%s)", df->base_id, base);
    lnc_err_prefix(err, "fragment %llu lists a data file that cannot be opened",
                   (unsigned long long)fr->id);
    return code;
  }
  struct stat st;
  if (fstat(fd, &st) != 0)
    rc = lnc_errf(err, LNC_EIO, "%s: %s: %s", ds->name, rel, strerror(errno));
  else if (df->file_size_bytes != 0 && (uint64_t)st.st_size != df->file_size_bytes)
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: %s is %lld bytes, the manifest says %llu", ds->name,
                  rel, (long long)st.st_size, (unsigned long long)df->file_size_bytes);
  close(fd);
  return rc;
}

static int build(lnc_dataset *ds, const struct lnc_ds_resolver *res, struct lnc_error *err) {
  const Lance__Table__Manifest *m = ds->m;
  int brc = lnc_ds_bases_open(ds, res, err);
  if (brc) return brc;
  ds->nfrag = m->n_fragments;
  ds->frags = calloc(ds->nfrag ? ds->nfrag : 1, sizeof *ds->frags);
  ds->dels = calloc(ds->nfrag ? ds->nfrag : 1, sizeof *ds->dels);
  ds->map.live_start = calloc(ds->nfrag + 1, sizeof *ds->map.live_start);
  if (!ds->frags || !ds->dels || !ds->map.live_start)
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  uint64_t live = 0;
  for (size_t i = 0; i < ds->nfrag; i++) {
    const Lance__Table__DataFragment *fr = m->fragments[i];
    struct lnc_ds_fragment *f = &ds->frags[i];
    f->pb = fr;
    f->files = calloc(fr->n_files, sizeof *f->files);
    if (!f->files) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
    for (size_t j = 0; j < fr->n_files; j++) {
      f->files[j].pb = fr->files[j];
      pthread_mutex_init(&f->files[j].lock, NULL);
      f->nfiles = j + 1;
      int rc = check_data_file(ds, fr, fr->files[j], err);
      if (rc) return rc;
    }
    int rc = lnc_ds_load_deletions(lnc_ds_deletion_loc(ds, fr->deletion_file), ds->name, fr->id,
                                   fr->physical_rows, fr->deletion_file, &f->del, err);
    if (rc) return rc;
    ds->dels[i] = f->del;
    ds->map.live_start[i] = live;
    live += fr->physical_rows - f->del.n;
    ds->physical_rows += fr->physical_rows;
  }
  ds->map.live_start[ds->nfrag] = live;
  ds->map.nfrag = ds->nfrag;
  ds->map.del = ds->dels;
  int rc = lnc_ds_index_fragments(ds, err);
  if (!rc && lnc_ds_rowids_build(ds)) rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  if (!rc) rc = lnc_ds_index_fields(ds, err);
  return rc ? rc : lnc_ds_spread_find(ds, err);
}

int lnc_ds_open_at(struct lnc_ds_loc loc, const char *name, uint64_t version, const struct lnc_ds_resolver *res,
                   lnc_dataset **out, struct lnc_error *err) {
  *out = NULL;
  lnc_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) {
    lnc_ds_loc_close(&loc);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", name);
  }
  ds->loc = loc;
  ds->name = strdup(name);
  if (!ds->name) {
    lnc_dataset_close(ds);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", name);
  }
  struct lnc_ds_version *vs;
  size_t nv;
  int rc = lnc_ds_loc_versions(&ds->loc, name, &vs, &nv, err);
  if (!rc) rc = lnc_ds_pick_version(vs, nv, version, name, &ds->version, err);
  free(vs);
  if (rc) {
    lnc_dataset_close(ds);
    return rc;
  }
  char rel[64], what[600];
  memcpy(rel, "_versions/", 10);
  lnc_ds_manifest_name(&ds->version, rel + 10, sizeof rel - 10);
  snprintf(what, sizeof what, "%s: %s", name, rel);
  uint8_t *data;
  size_t len;
  rc = lnc_ds_loc_read(&ds->loc, rel, MANIFEST_LIMIT, name, &data, &len, err);
  if (!rc) {
    ds->manifest_bytes = len;
    rc = lnc_ds_manifest_parse(data, len, what, &ds->m, err);
    free(data);
  }
  if (!rc && ds->m->version != ds->version.version)
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: manifest says version %llu", what,
                  (unsigned long long)ds->m->version);
  if (!rc) rc = build(ds, res, err);
  if (rc) {
    lnc_dataset_close(ds);
    return rc;
  }
  *out = ds;
  return 0;
}

/* The dataset directory `name` relative to dirfd: its descriptor, or -code with err filled. */
static int open_dataset_dir(int dirfd, const char *name, struct lnc_error *err) {
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) return fd;
  int e = errno;
  return -lnc_errf(err, e == ENOENT || e == ENOTDIR ? LNC_ENOTFOUND : LNC_EIO, "%s: cannot open dataset directory: %s",
                   name, strerror(e));
}

int lnc_dataset_open_fd(int dirfd, const char *name, uint64_t version, lnc_dataset **out,
                        struct lnc_error *err) {
  if (!name || !out) return lnc_errf(err, LNC_EINVAL, "lnc_dataset_open_fd: NULL argument");
  int fd = open_dataset_dir(dirfd, name, err);
  if (fd < 0) return -fd;
  return lnc_ds_open_at((struct lnc_ds_loc){.fd = fd}, name, version, NULL, out, err);
}

int lnc_dataset_open(const char *dir, uint64_t version, lnc_dataset **out,
                     struct lnc_error *err) {
  return lnc_dataset_open_fd(AT_FDCWD, dir, version, out, err);
}

size_t lnc_ds_num_files(const lnc_dataset *ds) {
  size_t n = 0;
  for (size_t i = 0; i < ds->nfrag; i++) n += ds->frags[i].nfiles;
  return n;
}

size_t lnc_ds_memory(const lnc_dataset *ds) {
  /* The unpacked protobuf is a few times its wire size (pointers, strings, arrays). */
  size_t b = sizeof *ds + 4 * ds->manifest_bytes + (ds->nfrag + 1) * sizeof(uint64_t) +
             ds->nfrag * sizeof *ds->by_id;
  for (size_t i = 0; i < ds->nfrag; i++)
    b += sizeof ds->frags[i] + sizeof ds->dels[i] + ds->frags[i].del.nruns * sizeof(struct lnc_ds_delrun) +
         ds->frags[i].nfiles * sizeof(struct lnc_ds_datafile);
  return b + ds->nspread * sizeof *ds->spread + lnc_ds_fields_memory(ds) + lnc_ds_bases_memory(ds) +
         lnc_ds_rowids_memory(ds);
}

uint64_t lnc_dataset_num_rows(const lnc_dataset *ds) { return ds->map.live_start[ds->nfrag]; }
uint64_t lnc_dataset_version(const lnc_dataset *ds) { return ds->version.version; }

void lnc_dataset_data_format(const lnc_dataset *ds, int *major, int *minor) {
  const Lance__Table__Manifest *m = ds->m;
  int a = 0, b = 0;
  const char *v = m->data_format && m->data_format->version ? m->data_format->version : "";
  if (sscanf(v, "%d.%d", &a, &b) != 2 || a < 0 || b < 0) a = b = 0;
  if (major) *major = a;
  if (minor) *minor = b;
}

int lnc_dataset_latest_version(const lnc_dataset *ds, uint64_t *latest, struct lnc_error *err) {
  struct lnc_ds_version *vs, v;
  size_t n;
  int rc = lnc_ds_loc_versions(&ds->loc, ds->name, &vs, &n, err);
  if (rc) return rc;
  rc = lnc_ds_pick_version(vs, n, 0, ds->name, &v, err);
  free(vs);
  if (!rc) *latest = v.version;
  return rc;
}

int lnc_dataset_tag(const char *dir, const char *tag, uint64_t *version, struct lnc_error *err) {
  if (!dir || !tag || !version) return lnc_errf(err, LNC_EINVAL, "lnc_dataset_tag: NULL argument");
  struct lnc_ds_loc loc = {.fd = open_dataset_dir(AT_FDCWD, dir, err)};
  if (loc.fd < 0) return -loc.fd;
  int rc = lnc_ds_read_tag(&loc, dir, tag, version, err);
  lnc_ds_loc_close(&loc);
  return rc;
}

int lnc_ds_file_get(lnc_dataset *ds, size_t i, size_t j, lnc_file **out, struct lnc_error *err) {
  struct lnc_ds_datafile *df = &ds->frags[i].files[j];
  if (!df->file) {
    char rel[4096];
    const struct lnc_ds_loc *loc;
    int wrc = lnc_ds_file_where(ds, df->pb, &loc, rel, sizeof rel, err);
    if (wrc) return wrc;
    int fd = lnc_ds_openat(loc->fd, rel, O_RDONLY, ds->name, err);
    if (fd < 0) return -fd;
    int rc = lnc_file_open_fd(fd, df->pb->path, &df->file, err);
    if (rc) {
      df->file = NULL;
      lnc_err_prefix(err, "%s: fragment %llu", ds->name, (unsigned long long)ds->frags[i].pb->id);
      return rc;
    }
    uint64_t rows = lnc_file_num_rows(df->file);
    if (rows != ds->frags[i].pb->physical_rows) {
      lnc_file_close(df->file);
      df->file = NULL;
      return lnc_errf(err, LNC_ECORRUPT, "%s: data file %s has %llu rows, fragment %llu has "
                                         "%llu",
                      ds->name, df->pb->path, (unsigned long long)rows,
                      (unsigned long long)ds->frags[i].pb->id,
                      (unsigned long long)ds->frags[i].pb->physical_rows);
    }
  }
  *out = df->file;
  return 0;
}
