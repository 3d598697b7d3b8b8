/* The manifest's schema by field id, built once per dataset version at open: every field with
 * its top-level ancestor, and per data file the top-level fields it holds. A take resolves
 * field ids many times per data file (which file holds a column, the output's names, a spread
 * struct's pieces); scanning the manifest for each made a take of a 300-column dataset spend
 * 80 % of its CPU, tens of milliseconds per fragment, finding fields. */
#include "dataset.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

static int cmp_fref(const void *a, const void *b) {
  const struct lnc_ds_fref *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

const struct lnc_ds_fref *lnc_ds_fref(const lnc_dataset *ds, int32_t id) {
  if (id < 0) return NULL;
  if (ds->fdense) return (size_t)id < ds->nfdense ? ds->fdense[id] : NULL;
  struct lnc_ds_fref key = {.id = id};
  return bsearch(&key, ds->fidx, ds->nfidx, sizeof key, cmp_fref);
}

/* Sorted by id, then the tops in manifest order: the manifest check made every parent an
 * earlier field and every id unique, so a field's parent has its top already. Lance numbers
 * fields 0, 1, 2, ...: when the ids are that dense, a table by id makes lookups one load. */
static int index_schema(lnc_dataset *ds) {
  const Lance__Table__Manifest *m = ds->m;
  size_t n = m->n_fields;
  if (!(ds->fidx = calloc(n ? n : 1, sizeof *ds->fidx))) return LNC_ENOMEM;
  ds->nfidx = n;
  int32_t maxid = -1;
  for (size_t i = 0; i < n; i++) {
    ds->fidx[i] = (struct lnc_ds_fref){.id = m->fields[i]->id, .top = -1, .leaf = true, .f = m->fields[i]};
    if (m->fields[i]->id > maxid) maxid = m->fields[i]->id;
  }
  qsort(ds->fidx, n, sizeof *ds->fidx, cmp_fref);
  if (maxid >= 0 && (size_t)maxid < 4 * n + 1024 && (ds->fdense = calloc((size_t)maxid + 1, sizeof *ds->fdense))) {
    ds->nfdense = (size_t)maxid + 1;
    for (size_t i = 0; i < n; i++) ds->fdense[ds->fidx[i].id] = &ds->fidx[i];
  }
  for (size_t i = 0; i < n; i++) {
    const Lance__File__Field *f = m->fields[i];
    struct lnc_ds_fref *me = (struct lnc_ds_fref *)lnc_ds_fref(ds, f->id);
    if (f->parent_id == -1) {
      me->top = f->id;
      continue;
    }
    struct lnc_ds_fref *up = (struct lnc_ds_fref *)lnc_ds_fref(ds, f->parent_id);
    if (!up) continue;
    up->leaf = false;
    me->top = up->top;
  }
  return 0;
}

/* The sorted, distinct top-level fields a data file lists a field of. A file of top-level
 * columns listed in ascending order (every flat table) is its own answer: its list is
 * borrowed, so a manifest of 5,000 fragments of 1,000 columns costs no copy. */
static int file_tops(const lnc_dataset *ds, struct lnc_ds_datafile *df) {
  size_t n = df->pb->n_fields, k = 0;
  const int32_t *fl = df->pb->fields;
  if (n == 0) return 0;
  bool own = true, sorted = true;
  for (size_t i = 0; i < n && own; i++) {
    const struct lnc_ds_fref *r = lnc_ds_fref(ds, fl[i]);
    own = r && r->top == fl[i] && (i == 0 || fl[i] > fl[i - 1]);
  }
  if (own) {
    df->tops = (int32_t *)fl, df->ntops = n, df->tops_borrowed = true;
    return 0;
  }
  int32_t *t = malloc(n * sizeof *t);
  if (!t) return LNC_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const struct lnc_ds_fref *r = lnc_ds_fref(ds, fl[i]);
    if (r && r->top >= 0) {
      sorted = sorted && (k == 0 || r->top >= t[k - 1]);
      t[k++] = r->top;
    }
  }
  if (!sorted) qsort(t, k, sizeof *t, cmp_i32);
  size_t u = 0;
  for (size_t i = 0; i < k; i++)
    if (u == 0 || t[u - 1] != t[i]) t[u++] = t[i];
  if (u == 0) {
    free(t);
    return 0;
  }
  int32_t *fit = realloc(t, u * sizeof *t); /* shrinking: a failure keeps the larger block */
  df->tops = fit ? fit : t, df->ntops = u;
  return 0;
}

/* Whether two data files list the same fields in the same order. */
static bool same_fields(const Lance__Table__DataFile *a, const Lance__Table__DataFile *b) {
  return a->n_fields == b->n_fields && (a->n_fields == 0 || memcmp(a->fields, b->fields, a->n_fields * sizeof *a->fields) == 0);
}

int lnc_ds_index_fields(lnc_dataset *ds, struct lnc_error *err) {
  int rc = index_schema(ds);
  for (size_t i = 0; i < ds->nfrag && !rc; i++)
    for (size_t j = 0; j < ds->frags[i].nfiles && !rc; j++) {
      struct lnc_ds_datafile *df = &ds->frags[i].files[j];
      /* Appends write every fragment's files with the same fields: the file in the same place
       * of the fragment before usually lists exactly these, and its tops serve (borrowed; the
       * owner lives as long as the handle). */
      const struct lnc_ds_datafile *prev = i > 0 && j < ds->frags[i - 1].nfiles ? &ds->frags[i - 1].files[j] : NULL;
      if (prev && same_fields(prev->pb, df->pb))
        df->tops = prev->tops, df->ntops = prev->ntops, df->tops_borrowed = true;
      else
        rc = file_tops(ds, df);
    }
  return rc ? lnc_errf(err, rc, "%s: out of memory", ds->name) : 0;
}

bool lnc_ds_file_holds_top(const struct lnc_ds_datafile *df, int32_t top) {
  return df->ntops && bsearch(&top, df->tops, df->ntops, sizeof top, cmp_i32);
}

size_t lnc_ds_fields_memory(const lnc_dataset *ds) {
  size_t b = ds->nfidx * sizeof *ds->fidx + ds->nfdense * sizeof *ds->fdense;
  for (size_t i = 0; i < ds->nfrag; i++)
    for (size_t j = 0; j < ds->frags[i].nfiles; j++)
      if (!ds->frags[i].files[j].tops_borrowed) b += ds->frags[i].files[j].ntops * sizeof(int32_t);
  return b;
}
