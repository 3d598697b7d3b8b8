/* Row mapping: a dataset offset counts live (not deleted) rows across fragments in manifest
 * order, as Lance's take does. Offset → fragment by binary search over live-row prefix sums,
 * then live rank → physical row by binary search over the runs of deleted rows. A row
 * address (what Lance's _rowaddr is, and its _rowid without stable row ids) names the
 * fragment by id: found by binary search over the fragments sorted by id (compaction puts
 * a new, higher id where the fragments it replaced were, so manifest order is not id order). */
#include "dataset.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdlib.h>

uint64_t lnc_ds_live_to_physical(const struct lnc_ds_deletions *d, uint64_t k) {
  /* Live rows before run j = start[j] - before[j] (non-decreasing in j). With lo the first run
   * that has more than k live rows before it, the runs before lo lie before the answer: it
   * is k plus the rows they delete. */
  size_t lo = 0, hi = d->nruns;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((uint64_t)d->runs[mid].start - d->runs[mid].before > k)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo ? k + d->runs[lo - 1].before + d->runs[lo - 1].len : k;
}

int lnc_ds_rowmap_lookup(const struct lnc_ds_rowmap *m, uint64_t offset, size_t *frag,
                         uint64_t *row, struct lnc_error *err) {
  uint64_t total = m->live_start[m->nfrag];
  if (offset >= total)
    return lnc_errf(err, LNC_ERANGE, "row %llu out of range: the dataset has %llu rows",
                    (unsigned long long)offset, (unsigned long long)total);
  /* last fragment i with live_start[i] <= offset (and a non-empty live range) */
  size_t lo = 0, hi = m->nfrag;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->live_start[mid] <= offset)
      lo = mid;
    else
      hi = mid;
  }
  while (m->live_start[lo + 1] <= offset) lo++; /* skip fragments with no live rows */
  *frag = lo;
  *row = lnc_ds_live_to_physical(&m->del[lo], offset - m->live_start[lo]);
  return 0;
}

static int cmp_fid(const void *a, const void *b) {
  const struct lnc_ds_fid *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

int lnc_ds_index_fragments(lnc_dataset *ds, struct lnc_error *err) {
  if (ds->nfrag > UINT32_MAX) return lnc_errf(err, LNC_ELIMIT, "%s: too many fragments", ds->name);
  ds->by_id = malloc((ds->nfrag ? ds->nfrag : 1) * sizeof *ds->by_id);
  if (!ds->by_id) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  for (size_t i = 0; i < ds->nfrag; i++) ds->by_id[i] = (struct lnc_ds_fid){ds->frags[i].pb->id, (uint32_t)i};
  qsort(ds->by_id, ds->nfrag, sizeof *ds->by_id, cmp_fid);
  return 0;
}

/* Whether physical row `row` lies in one of d's deleted runs (sorted by start). */
static bool is_deleted(const struct lnc_ds_deletions *d, uint64_t row) {
  size_t lo = 0, hi = d->nruns; /* first run starting after row */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->runs[mid].start > row)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo > 0 && row < (uint64_t)d->runs[lo - 1].start + d->runs[lo - 1].len;
}

int lnc_ds_addr_lookup(const lnc_dataset *ds, uint64_t addr, size_t *frag, uint64_t *row,
                       struct lnc_error *err) {
  uint64_t fid = addr >> 32, r = addr & 0xffffffffu;
  size_t lo = 0, hi = ds->nfrag;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ds->by_id[mid].id < fid)
      lo = mid + 1;
    else
      hi = mid;
  }
  const char *why = NULL;
  const struct lnc_ds_fragment *f = lo < ds->nfrag && ds->by_id[lo].id == fid ? &ds->frags[ds->by_id[lo].frag] : NULL;
  if (!f)
    why = "names no fragment of";
  else if (r >= f->pb->physical_rows)
    why = "is past its fragment's rows in";
  else if (is_deleted(&f->del, r))
    why = "is deleted in";
  if (why)
    return lnc_errf(err, LNC_ENOTFOUND, "row id %llu (fragment %llu, row %llu) %s version %llu",
                    (unsigned long long)addr, (unsigned long long)fid, (unsigned long long)r, why,
                    (unsigned long long)ds->version.version);
  *frag = ds->by_id[lo].frag;
  *row = r;
  return 0;
}
