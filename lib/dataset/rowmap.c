/* Row mapping: a dataset offset counts live (not deleted) rows across fragments in manifest
 * order, as Lance's take does. Offset → fragment by binary search over live-row prefix sums,
 * then live rank → physical row by binary search over the runs of deleted rows. */
#include "dataset.h"
#include "../util/error.h"

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
