/* Deletion files of a fragment: their path under _deletions/, reading either kind (Arrow
 * array or Roaring bitmap) and normalising to a sorted, unique list of deleted physical rows
 * checked against the fragment's row count and the manifest's num_deleted_rows. */
#include "dataset.h"
#include "../util/error.h"
#include <stdio.h>
#include <stdlib.h>

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

int lnc_ds_load_deletions(const struct lnc_ds_loc *loc, const char *what, uint64_t fragment_id,
                          uint64_t physical_rows, const Lance__Table__DeletionFile *df,
                          struct lnc_ds_deletions *out, struct lnc_error *err) {
  out->rows = NULL;
  out->n = 0;
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
  uint32_t *rows = NULL;
  size_t n = 0;
  if (df->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP)
    rc = lnc_ds_read_roaring(data, len, ctx, physical_rows, &rows, &n, err);
  else
    rc = lnc_ds_read_arrow_u32(data, len, ctx, physical_rows, &rows, &n, err);
  free(data);
  if (rc) return rc;
  if (n > 1) qsort(rows, n, sizeof *rows, cmp_u32);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || rows[u - 1] != rows[i]) rows[u++] = rows[i];
  n = u;
  if (n > 0 && rows[n - 1] >= physical_rows) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: deletes row %u of a fragment with %llu rows", ctx,
                  rows[n - 1], (unsigned long long)physical_rows);
    free(rows);
    return rc;
  }
  if (df->num_deleted_rows != 0 && df->num_deleted_rows != n) {
    rc = lnc_errf(err, LNC_ECORRUPT, "%s: holds %zu deleted rows, the manifest says %llu", ctx,
                  n, (unsigned long long)df->num_deleted_rows);
    free(rows);
    return rc;
  }
  out->rows = rows;
  out->n = n;
  return 0;
}
