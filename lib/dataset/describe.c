/* lnc_dataset_describe_json: the versions present, this version's manifest facts, schema,
 * and per fragment its physical and live rows, data files and deletion file, as one JSON
 * object (printed by `lancectl inspect` on a dataset). */
#include "dataset.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#define P(...)                                             \
  do {                                                     \
    if ((rc = lnc_buf_printf(out, __VA_ARGS__))) goto oom; \
  } while (0)
#define S(s)                                 \
  do {                                       \
    if ((rc = json_str(out, (s)))) goto oom; \
  } while (0)

static int json_str(struct lnc_buf *out, const char *s) {
  if (!s) s = "";
  return lnc_buf_json_str(out, s, strlen(s));
}

int lnc_dataset_describe_json(const lnc_dataset *ds, struct lnc_buf *out, struct lnc_error *err) {
  return lnc_ds_describe_json_at(ds, &ds->loc, out, err);
}

int lnc_ds_describe_json_at(const lnc_dataset *ds, const struct lnc_ds_loc *loc, struct lnc_buf *out,
                            struct lnc_error *err) {
  const Lance__Table__Manifest *m = ds->m;
  int rc;
  struct lnc_ds_version *vs = NULL;
  size_t nv = 0;
  if (loc && (loc->fd >= 0 || loc->s3) && (rc = lnc_ds_loc_versions(loc, ds->name, &vs, &nv, err)))
    return rc;
  P("{\"path\":");
  S(ds->name);
  P(",\"version\":%llu,\"naming\":\"%s\",\"versions\":[", (unsigned long long)ds->version.version,
    ds->version.naming == LNC_DS_NAMING_V2 ? "v2" : "v1");
  for (size_t i = 0; i < nv; i++) P("%s%llu", i ? "," : "", (unsigned long long)vs[i].version);
  P("],\"writer\":");
  S(m->writer_version ? m->writer_version->library : "");
  P(",\"writer_version\":");
  S(m->writer_version ? m->writer_version->version : "");
  P(",\"data_format\":");
  S(m->data_format ? m->data_format->version : "");
  P(",\"timestamp\":%lld,\"reader_feature_flags\":%llu,\"num_rows\":%llu,"
    "\"num_physical_rows\":%llu,\"schema\":[",
    m->timestamp ? (long long)m->timestamp->seconds : 0LL,
    (unsigned long long)m->reader_feature_flags, (unsigned long long)lnc_dataset_num_rows(ds),
    (unsigned long long)ds->physical_rows);
  for (size_t i = 0; i < m->n_fields; i++) {
    const Lance__File__Field *f = m->fields[i];
    P("%s{\"id\":%d,\"parent_id\":%d,\"name\":", i ? "," : "", f->id, f->parent_id);
    S(f->name);
    P(",\"logical_type\":");
    S(f->logical_type);
    P(",\"nullable\":%s}", f->nullable ? "true" : "false");
  }
  /* Row ids: addresses, or stable (flag 2) with the index row-id takes search (rowids.c):
   * its runs and bytes, or why it could not be built. */
  bool stable = m->reader_feature_flags & LNC_DS_FLAG_STABLE_ROW_IDS;
  P("],\"row_ids\":{\"stable\":%s", stable ? "true" : "false");
  if (stable && ds->rowid_err.code) {
    P(",\"error\":");
    S(ds->rowid_err.message);
  } else if (stable) {
    P(",\"index_runs\":%zu,\"index_bytes\":%zu", ds->nidruns, lnc_ds_rowids_memory(ds));
  }
  P("},\"base_paths\":["); /* by id (Lance lists them in no fixed order) */
  for (size_t i = 0; i < ds->nbases; i++) {
    const Lance__Table__BasePath *b = ds->bases[i].pb;
    P("%s{\"id\":%u,\"path\":", i ? "," : "", b->id);
    S(b->path);
    P(",\"name\":");
    S(b->name);
    P(",\"is_dataset_root\":%s}", b->is_dataset_root ? "true" : "false");
  }
  P("],\"fragments\":[");
  for (size_t i = 0; i < ds->nfrag; i++) {
    const struct lnc_ds_fragment *f = &ds->frags[i];
    P("%s{\"id\":%llu,\"physical_rows\":%llu,\"live_rows\":%llu,\"first_offset\":%llu,"
      "\"data_files\":[",
      i ? "," : "", (unsigned long long)f->pb->id,
      (unsigned long long)f->pb->physical_rows,
      (unsigned long long)(f->pb->physical_rows - f->del.n),
      (unsigned long long)ds->map.live_start[i]);
    for (size_t j = 0; j < f->nfiles; j++) {
      const Lance__Table__DataFile *df = f->files[j].pb;
      P("%s{\"path\":", j ? "," : "");
      S(df->path);
      P(",\"file_version\":\"%u.%u\",\"size\":%llu,\"fields\":[", df->file_major_version,
        df->file_minor_version, (unsigned long long)df->file_size_bytes);
      for (size_t k = 0; k < df->n_fields; k++) P("%s%d", k ? "," : "", df->fields[k]);
      P("],\"column_indices\":[");
      for (size_t k = 0; k < df->n_column_indices; k++)
        P("%s%d", k ? "," : "", df->column_indices[k]);
      P("]");
      if (LNC_DS_DF_HAS_BASE(df)) P(",\"base_id\":%u", df->base_id);
      P("}");
    }
    P("],\"deletion_file\":");
    if (f->pb->deletion_file) {
      char path[128];
      lnc_ds_deletion_path(f->pb->id, f->pb->deletion_file, path, sizeof path);
      P("{\"path\":");
      S(path);
      P(",\"type\":\"%s\",\"num_deleted_rows\":%zu",
        f->pb->deletion_file->file_type ? "bitmap" : "arrow_array", f->del.n);
      if (LNC_DS_DEL_HAS_BASE(f->pb->deletion_file))
        P(",\"base_id\":%u", f->pb->deletion_file->base_id);
      P("}");
    } else {
      P("null");
    }
    P("}");
  }
  P("]}");
  free(vs);
  return 0;
oom:
  free(vs);
  return lnc_errf(err, rc, "%s: out of memory describing the dataset", ds->name);
}
