/* Struct columns spread over several data files of one fragment. In file version 2.2 Lance
 * can add a child to an existing struct (addColumns of a named_struct into it, or of a Field
 * with no data): the new children are written to a new data file of every fragment, or to none,
 * and the manifest's schema lists the struct once with all its children. Lance reads such a
 * fragment by taking from every data file that holds part of the struct and merging the
 * pieces field by field (lance-arrow's RecordBatch merge); children no data file holds come
 * from a piece of nulls. lanced does the same, so it answers as Lance does:
 *
 *   - open: lnc_ds_spread_find lists the top-level struct fields that are spread (or miss
 *     children) in at least one fragment, so takes of every other column keep their one
 *     read per fragment and pay nothing here;
 *   - take: lnc_ds_spread_merge builds one fragment's struct from its pieces. */
#include "dataset.h"
#include "../arrow/concat.h"
#include "../arrow/format.h"
#include "../arrow/builder.h"
#include "../util/assert.h"
#include "../util/error.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- open: which struct columns are spread ------------------------------------------ */

/* Runs once per dataset version opened, over every data file's field list, with the schema
 * index of fields.c: one lookup per listed field, whatever the shape (a chain of 30,000
 * nested structs, or 1,000 struct columns over 5,000 fragments, must not cost seconds per
 * open). */

/* Top-level fields whose children a data file can lack: structs and lists of structs. */
static bool is_mergeable(const Lance__File__Field *f) {
  static const char *const types[] = {"struct", "list.struct", "large_list.struct"};
  for (size_t i = 0; f->logical_type && i < sizeof types / sizeof types[0]; i++)
    if (strcmp(f->logical_type, types[i]) == 0) return true;
  return false;
}

/* Per top-level mergeable field while one fragment is scanned (reset lazily: `frag` stamps
 * it). */
struct tally {
  int32_t top;
  size_t leaves;  /* manifest leaves beneath it */
  size_t frag;    /* the fragment the counts below are for */
  size_t holders; /* data files of the fragment listing a field of it */
  size_t seen;    /* its leaves those files list */
  bool covered;   /* a file lists it or an inner struct or list of it (2.0 lists parents, a
                      packed struct is one column): its children come whole from that file */
  size_t last_file;
};

static void add_spread(lnc_dataset *ds, int32_t top) {
  for (size_t i = 0; i < ds->nspread; i++)
    if (ds->spread[i] == top) return;
  ds->spread[ds->nspread++] = top;
}

/* One fragment: a struct held by two data files or more, or by one that lacks some of its
 * leaves (a child added without data), is spread. tally_at: per schema index entry, its
 * top's tally or -1; `touched` lists the tallies the fragment counted. */
static void scan_fragment(lnc_dataset *ds, size_t fi, const int32_t *tally_at, struct tally *t, size_t *touched) {
  const Lance__Table__DataFragment *fr = ds->m->fragments[fi];
  size_t nt = 0;
  for (size_t j = 0; j < fr->n_files; j++) {
    const Lance__Table__DataFile *df = fr->files[j];
    for (size_t k = 0; k < df->n_fields; k++) {
      const struct lnc_ds_fref *f = lnc_ds_fref(ds, df->fields[k]);
      if (!f || tally_at[f - ds->fidx] < 0) continue;
      struct tally *s = &t[tally_at[f - ds->fidx]];
      if (s->frag != fi) {
        *s = (struct tally){.top = s->top, .leaves = s->leaves, .frag = fi, .last_file = SIZE_MAX};
        touched[nt++] = (size_t)(s - t);
      }
      if (s->last_file != j) s->holders++, s->last_file = j;
      if (f->leaf)
        s->seen++;
      else
        s->covered = true;
    }
  }
  for (size_t i = 0; i < nt; i++) {
    const struct tally *s = &t[touched[i]];
    if (s->holders > 1 || (s->holders == 1 && !s->covered && s->seen < s->leaves)) add_spread(ds, s->top);
  }
}

int lnc_ds_spread_find(lnc_dataset *ds, struct lnc_error *err) {
  LNC_ASSERT(ds->fidx || ds->nfidx == 0); /* lnc_ds_index_fields ran */
  size_t nt = 0, n = ds->nfidx;
  for (size_t i = 0; i < n; i++) nt += ds->fidx[i].f->parent_id == -1 && is_mergeable(ds->fidx[i].f);
  if (nt == 0) return 0; /* the common case: nothing to scan */
  struct tally *t = calloc(nt, sizeof *t);
  size_t *touched = calloc(nt, sizeof *touched);
  int32_t *tally_at = malloc(n * sizeof *tally_at);
  ds->spread = calloc(nt, sizeof *ds->spread);
  if (!t || !touched || !tally_at || !ds->spread) {
    free(t);
    free(touched);
    free(tally_at);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  }
  /* A top's own entry first holds its tally (tops are top-level fields, in the index too). */
  for (size_t i = 0, k = 0; i < n; i++) {
    bool top = ds->fidx[i].f->parent_id == -1 && is_mergeable(ds->fidx[i].f);
    tally_at[i] = top ? (int32_t)k : -1;
    if (top) t[k++] = (struct tally){.top = ds->fidx[i].id, .frag = SIZE_MAX};
  }
  for (size_t i = 0; i < n; i++) {
    const struct lnc_ds_fref *top = lnc_ds_fref(ds, ds->fidx[i].top);
    if (top && ds->fidx[i].f->parent_id != -1) tally_at[i] = tally_at[top - ds->fidx];
  }
  for (size_t i = 0; i < n; i++)
    if (ds->fidx[i].leaf && tally_at[i] >= 0 && ds->fidx[i].f->parent_id != -1) t[tally_at[i]].leaves++;
  for (size_t f = 0; f < ds->m->n_fragments && ds->nspread < nt; f++) scan_fragment(ds, f, tally_at, t, touched);
  free(t);
  free(touched);
  free(tally_at);
  return 0;
}

bool lnc_ds_spread_is(const lnc_dataset *ds, int32_t top) {
  for (size_t i = 0; i < ds->nspread; i++)
    if (ds->spread[i] == top) return true;
  return false;
}

/* ---- take: one fragment's struct from its pieces ------------------------------------ */

static bool row_valid(const struct lnc_ds_piece *p, uint64_t r) {
  const uint8_t *v = p->a->buffers[0];
  if (!v || p->a->null_count == 0) return true;
  uint64_t i = (uint64_t)p->a->offset + p->base + r;
  return (v[i >> 3] >> (i & 7)) & 1;
}

/* The struct's validity as Lance's merge makes it: valid where any piece is valid (a piece
 * without a validity buffer is valid everywhere). A piece of nulls for children no file holds
 * changes nothing, so it is not modelled. NULL with *nulls 0 when every row is valid. (The
 * Lance source mirrored for reference, 1.0.0-beta.1, also leaves out pieces null in every row
 * read, so a row's answer would depend on the rows read with it; Lance 10.0.0, in LanceDB
 * 0.37.1, which lanced is checked against, does not.) */
static int merged_validity(const struct lnc_ds_piece *p, size_t np, uint64_t n, uint8_t **out,
                           int64_t *nulls) {
  *out = NULL;
  *nulls = 0;
  for (uint64_t r = 0; r < n; r++) {
    bool v = false;
    for (size_t i = 0; i < np && !v; i++) v = row_valid(&p[i], r);
    if (v) continue;
    if (!*out) {
      if (!(*out = malloc((size_t)(n + 7) / 8))) return LNC_ENOMEM;
      memset(*out, 0xff, (size_t)(n + 7) / 8);
    }
    (*out)[r >> 3] &= (uint8_t) ~(1u << (r & 7));
    (*nulls)++;
  }
  return 0;
}

/* A child that one piece holds: its rows, null where that piece's struct is null (Lance's
 * merge masks a child with its own piece's validity). */
static int masked_child(const struct ArrowSchema *tc, const struct lnc_ds_piece *parent,
                        const struct lnc_ds_piece *child, uint64_t n, struct ArrowArray *out,
                        struct lnc_error *err) {
  struct ArrowArray nullrow = {0};
  struct lnc_row_ref *refs = malloc((n ? n : 1) * sizeof *refs);
  if (!refs) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  int rc = lnc_arrow_make_nulls(tc, 1, &nullrow, err);
  for (uint64_t r = 0; r < n && !rc; r++)
    refs[r] = row_valid(parent, r) ? (struct lnc_row_ref){0, child->base + r} : (struct lnc_row_ref){1, 0};
  const struct ArrowArray *parts[2] = {child->a, &nullrow};
  if (!rc) rc = lnc_arrow_gather_multi(tc, parts, 2, refs, (size_t)n, out, err);
  if (nullrow.release) nullrow.release(&nullrow);
  free(refs);
  return rc;
}

static int merge(const struct ArrowSchema *target, const struct lnc_ds_piece *p, size_t np,
                 uint64_t n, unsigned depth, struct ArrowArray *out, struct lnc_error *err);

static bool is_list_of_struct(const struct ArrowSchema *s) {
  return (strcmp(s->format, "+l") == 0 || strcmp(s->format, "+L") == 0) && s->n_children == 1 &&
         strcmp(s->children[0]->format, "+s") == 0;
}

/* Offset of row r of list piece p (logical, before the list's own offset). */
static int64_t list_off(const struct lnc_ds_piece *p, bool large, uint64_t r) {
  uint64_t i = (uint64_t)p->a->offset + p->base + r;
  return large ? ((const int64_t *)p->a->buffers[1])[i] : ((const int32_t *)p->a->buffers[1])[i];
}

static bool all_null(const struct lnc_ds_piece *p, uint64_t n) {
  for (uint64_t r = 0; r < n; r++)
    if (row_valid(p, r)) return false;
  return true;
}

/* A list of structs held by several pieces (or by one that lacks some of the item's children),
 * as Lance merges one: the lists of the pieces that are not null in every row read must have
 * the same offsets; the first of them gives the offsets and the list validity, and the items
 * are those pieces' item structs merged. Pieces null in every row read add nothing. */
static int merge_list(const struct ArrowSchema *tc, const struct lnc_ds_piece *p, size_t np, uint64_t n,
                      unsigned depth, struct ArrowArray *out, struct lnc_error *err) {
  bool large = tc->format[1] == 'L';
  size_t lead = np - 1, nk = 0;
  struct lnc_ds_piece *items = calloc(np, sizeof *items);
  if (!items) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (size_t i = np; i-- > 0;)
    if (!all_null(&p[i], n)) lead = i;
  int64_t o0 = list_off(&p[lead], large, 0), total = list_off(&p[lead], large, n) - o0;
  int rc = 0;
  for (size_t i = 0; i < np && !rc; i++) {
    if (i != lead && all_null(&p[i], n)) continue;
    int64_t b = list_off(&p[i], large, 0);
    for (uint64_t r = 1; r <= n && !rc; r++)
      if (list_off(&p[i], large, r) - b != list_off(&p[lead], large, r) - o0)
        rc = lnc_errf(err, LNC_ECORRUPT, "'%s': the data files' lists have different lengths in a row", tc->name);
    items[nk++] = (struct lnc_ds_piece){p[i].s->children[0], p[i].a->children[0], (uint64_t)b};
  }
  if (!rc && (total < 0 || o0 < 0)) rc = lnc_errf(err, LNC_ECORRUPT, "'%s': bad list offsets", tc->name);
  int64_t nulls = 0;
  for (uint64_t r = 0; r < n; r++) nulls += !row_valid(&p[lead], r);
  void *offs = NULL;
  uint8_t *valid = NULL;
  if (!rc) {
    offs = malloc((size_t)(n + 1) * (large ? 8 : 4));
    valid = nulls ? calloc((size_t)(n + 7) / 8, 1) : NULL;
    if (!offs || (nulls && !valid) || lnc_array_init(out, (int64_t)n, nulls, 2, 1)) {
      free(offs);
      free(valid);
      rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    }
  }
  if (!rc) {
    for (uint64_t r = 0; r <= n; r++) {
      int64_t v = list_off(&p[lead], large, r) - o0;
      if (large)
        ((int64_t *)offs)[r] = v;
      else
        ((int32_t *)offs)[r] = (int32_t)v;
      if (r < n && valid && row_valid(&p[lead], r)) valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    lnc_array_set_buffer(out, 0, valid);
    lnc_array_set_buffer(out, 1, offs);
    rc = merge(tc->children[0], items, nk, (uint64_t)total, depth + 1, out->children[0], err);
    if (rc) out->release(out);
  }
  free(items);
  return rc;
}

/* Child i of the target: from the pieces that have it (by name, as Lance matches them). */
static int merge_child(const struct ArrowSchema *tc, const struct lnc_ds_piece *p, size_t np,
                       uint64_t n, unsigned depth, struct ArrowArray *out, struct lnc_error *err) {
  struct lnc_ds_piece *sub = calloc(np ? np : 1, sizeof *sub);
  size_t *from = calloc(np ? np : 1, sizeof *from);
  if (!sub || !from) {
    free(sub);
    free(from);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  size_t ns = 0;
  for (size_t i = 0; i < np; i++)
    for (int64_t k = 0; k < p[i].s->n_children; k++) {
      const struct ArrowSchema *cs = p[i].s->children[k];
      if (!cs->name || strcmp(cs->name, tc->name ? tc->name : "") != 0) continue;
      sub[ns] = (struct lnc_ds_piece){cs, p[i].a->children[k], (uint64_t)p[i].a->offset + p[i].base};
      from[ns++] = i;
      break;
    }
  int rc;
  bool nested = strcmp(tc->format, "+s") == 0;
  bool split = ns > 1 || (ns == 1 && !lnc_arrow_same_type(sub[0].s, tc));
  if (ns == 0) /* no data file holds it: nulls, as Lance's piece of nulls reads */
    rc = lnc_arrow_make_nulls(tc, n, out, err);
  else if (nested && split)
    rc = merge(tc, sub, ns, n, depth + 1, out, err);
  else if (split && is_list_of_struct(tc) && is_list_of_struct(sub[0].s) && strcmp(sub[0].s->format, tc->format) == 0)
    rc = merge_list(tc, sub, ns, n, depth + 1, out, err);
  else if (!lnc_arrow_same_type(sub[0].s, tc)) {
    char here[128], want[128];
    rc = lnc_errf(err, LNC_ECORRUPT, "'%s' is '%s' in a data file but '%s' in the manifest", tc->name,
                  lnc_arrow_type_str(sub[0].s, here, sizeof here), lnc_arrow_type_str(tc, want, sizeof want));
  } else /* the first piece that has it, as Lance keeps the left one */
    rc = masked_child(tc, &p[from[0]], &sub[0], n, out, err);
  free(sub);
  free(from);
  return rc;
}

static int merge(const struct ArrowSchema *target, const struct lnc_ds_piece *p, size_t np,
                 uint64_t n, unsigned depth, struct ArrowArray *out, struct lnc_error *err) {
  /* The target comes from the manifest's schema, whose depth the schema builder bounds. */
  LNC_ASSERT(depth <= 64);
  uint8_t *valid;
  int64_t nulls;
  if (merged_validity(p, np, n, &valid, &nulls) ||
      lnc_array_init(out, (int64_t)n, nulls, 1, target->n_children)) {
    free(valid);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  if (valid) lnc_array_set_buffer(out, 0, valid);
  int rc = 0;
  for (int64_t i = 0; i < target->n_children && !rc; i++)
    rc = merge_child(target->children[i], p, np, n, depth, out->children[i], err);
  if (rc) out->release(out);
  return rc;
}

int lnc_ds_spread_merge(const struct ArrowSchema *target, const struct lnc_ds_piece *pieces,
                        size_t np, uint64_t n, struct ArrowArray *out, struct lnc_error *err) {
  LNC_ASSERT(np > 0);
  if (strcmp(target->format, "+s") == 0) return merge(target, pieces, np, n, 0, out, err);
  for (size_t i = 0; i < np; i++)
    if (!is_list_of_struct(target) || strcmp(pieces[i].s->format, target->format) != 0 ||
        !is_list_of_struct(pieces[i].s)) {
      char here[128], want[128];
      return lnc_errf(err, LNC_ECORRUPT, "'%s' is '%s' in a data file but '%s' in the manifest", target->name,
                      lnc_arrow_type_str(pieces[i].s, here, sizeof here), lnc_arrow_type_str(target, want, sizeof want));
    }
  return merge_list(target, pieces, np, n, 0, out, err);
}
