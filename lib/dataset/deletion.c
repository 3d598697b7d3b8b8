/* Deletion files of a fragment: their path under _deletions/, reading either kind (Arrow
 * array or Roaring bitmap) and normalising to a sorted, unique list of deleted physical rows
 * checked against the fragment's row count and the manifest's num_deleted_rows. */
#include "dataset.h"
#include "../util/error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETION_FILE_LIMIT ((size_t)1 << 30)

void lnc_ds_deletion_path(uint64_t fragment_id, const Lance__Table__DeletionFile *df, char *buf,
                          size_t cap) {
  snprintf(buf, cap, "_deletions/%llu-%llu-%llu.%s", (unsigned long long)fragment_id,
           (unsigned long long)df->read_version, (unsigned long long)df->id,
           df->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP ? "bin"
                                                                                    : "arrow");
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int lnc_ds_del_add(struct lnc_ds_deletions *d, uint32_t start, uint32_t len) {
  if (len == 0) return 0;
  struct lnc_ds_delrun *last = d->nruns ? &d->runs[d->nruns - 1] : NULL;
  uint64_t end = (uint64_t)start + len;
  if (last && start <= (uint64_t)last->start + last->len) { /* overlaps or touches the last run */
    uint64_t last_end = (uint64_t)last->start + last->len;
    if (end <= last_end) return 0;
    if (end - last->start > UINT32_MAX) return LNC_ERANGE;
    last->len = (uint32_t)(end - last->start);
    d->n += end - last_end;
    return 0;
  }
  /* A new run. The count is the only record of the capacity: it doubles at powers of two. */
  if (d->nruns == 0 || (d->nruns >= 8 && (d->nruns & (d->nruns - 1)) == 0)) {
    size_t cap = d->nruns ? 2 * d->nruns : 8;
    struct lnc_ds_delrun *more = realloc(d->runs, cap * sizeof *more);
    if (!more) return LNC_ENOMEM;
    d->runs = more;
  }
  d->runs[d->nruns++] = (struct lnc_ds_delrun){start, len, (uint32_t)d->n};
  d->n += len;
  return 0;
}

/* Arrow deletion files list rows in any order, repeats allowed: sorted, then run-merged. */
static int arrow_runs(const uint8_t *data, size_t len, const char *ctx, uint64_t physical_rows,
                      struct lnc_ds_deletions *out, struct lnc_error *err) {
  uint32_t *rows = NULL;
  size_t n = 0;
  int rc = lnc_ds_read_arrow_u32(data, len, ctx, physical_rows, &rows, &n, err);
  if (rc) return rc;
  if (n > 1) qsort(rows, n, sizeof *rows, cmp_u32);
  for (size_t i = 0; i < n && !rc; i++) rc = lnc_ds_del_add(out, rows[i], 1);
  free(rows);
  return rc ? lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ctx) : 0; /* runs of one row: never ERANGE */
}

int lnc_ds_load_deletions(const struct lnc_ds_loc *loc, const char *what, uint64_t fragment_id,
                          uint64_t physical_rows, const Lance__Table__DeletionFile *df,
                          struct lnc_ds_deletions *out, struct lnc_error *err) {
  memset(out, 0, sizeof *out);
  if (!df) return 0;
  char path[128], ctx[512];
  lnc_ds_deletion_path(fragment_id, df, path, sizeof path);
  snprintf(ctx, sizeof ctx, "%s: fragment %llu deletion file %s", what,
           (unsigned long long)fragment_id, path);
  uint8_t *data;
  size_t len;
  int rc = lnc_ds_loc_read(loc, path, DELETION_FILE_LIMIT, what, &data, &len, err);
  if (rc == LNC_ENOTFOUND) { /* listed in the manifest but absent: a damaged dataset */
    if (err) err->code = LNC_ECORRUPT;
    lnc_err_prefix(err, "fragment %llu lists a deletion file that cannot be opened",
                   (unsigned long long)fragment_id);
    return LNC_ECORRUPT;
  }
  if (rc) return rc;
  if (df->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP)
    rc = lnc_ds_read_roaring(data, len, ctx, physical_rows, out, err);
  else
    rc = arrow_runs(data, len, ctx, physical_rows, out, err);
  free(data);
  const struct lnc_ds_delrun *last = out->nruns ? &out->runs[out->nruns - 1] : NULL;
  if (!rc && last && (uint64_t)last->start + last->len > physical_rows)
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: deletes row %llu of a fragment with %llu rows", ctx,
                  (unsigned long long)last->start + last->len - 1, (unsigned long long)physical_rows);
  if (!rc && df->num_deleted_rows != 0 && df->num_deleted_rows != out->n)
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: holds %llu deleted rows, the manifest says %llu", ctx,
                  (unsigned long long)out->n, (unsigned long long)df->num_deleted_rows);
  if (rc) {
    free(out->runs);
    memset(out, 0, sizeof *out);
  }
  return rc;
}
