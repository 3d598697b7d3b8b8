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

struct fid {       /* one manifest field, sorted by id for lookups */
  int32_t id, top; /* top: its top-level ancestor's id (itself at top level), -1 if none */
  bool leaf;       /* no field names it as parent */
  bool top_struct; /* top is a struct */
};

static int cmp_fid(const void *a, const void *b) {
  const struct fid *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static struct fid *fid_find(struct fid *ix, size_t n, int32_t id) {
  struct fid key = {.id = id};
  return bsearch(&key, ix, n, sizeof *ix, cmp_fid);
}

static bool is_struct(const Lance__File__Field *f) {
  return f->logical_type && strcmp(f->logical_type, "struct") == 0;
}

/* The manifest's fields by id, with each one's top-level ancestor. Walks parents through the
 * index, so building it is n log n per level. The manifest check makes every parent an
 * earlier field; should two fields share an id, lookups find one of them and every walk still
 * ends within the field count (a wrong answer for a broken manifest, never a loop). */
static struct fid *index_fields(const Lance__Table__Manifest *m) {
  size_t n = m->n_fields;
  struct fid *ix = calloc(n ? n : 1, sizeof *ix);
  int32_t *parent = calloc(n ? n : 1, sizeof *parent);
  if (!ix || !parent) {
    free(ix);
    free(parent);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) ix[i] = (struct fid){.id = m->fields[i]->id, .top = -1, .leaf = true};
  qsort(ix, n, sizeof *ix, cmp_fid);
  for (size_t i = 0; i < n; i++) {
    struct fid *me = fid_find(ix, n, m->fields[i]->id);
    parent[me - ix] = m->fields[i]->parent_id;
    struct fid *up = fid_find(ix, n, m->fields[i]->parent_id);
    if (up) up->leaf = false;
  }
  for (size_t i = 0; i < n; i++) {
    int32_t id = ix[i].id;
    for (size_t hops = 0; hops <= n; hops++) {
      struct fid *f = fid_find(ix, n, id);
      if (!f) break;
      if (parent[f - ix] == -1) {
        ix[i].top = id;
        break;
      }
      id = parent[f - ix];
    }
  }
  for (size_t i = 0; i < n; i++) {
    const Lance__File__Field *f = m->fields[i];
    if (f->parent_id != -1 || !is_struct(f)) continue;
    for (size_t k = 0; k < n; k++)
      if (ix[k].top == f->id) ix[k].top_struct = true;
  }
  free(parent);
  return ix;
}

/* Per top-level struct while one fragment is scanned. */
struct tally {
  int32_t top;
  size_t leaves;  /* manifest leaves beneath it */
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
 * leaves (a child added without data), is spread. */
static void scan_fragment(lnc_dataset *ds, const Lance__Table__DataFragment *fr, struct fid *ix,
                          size_t nix, struct tally *t, size_t nt) {
  for (size_t i = 0; i < nt; i++) t[i].holders = t[i].seen = 0, t[i].covered = false, t[i].last_file = SIZE_MAX;
  for (size_t j = 0; j < fr->n_files; j++) {
    const Lance__Table__DataFile *df = fr->files[j];
    for (size_t k = 0; k < df->n_fields; k++) {
      struct fid *f = df->fields[k] >= 0 ? fid_find(ix, nix, df->fields[k]) : NULL;
      if (!f || !f->top_struct) continue;
      struct tally *s = NULL;
      for (size_t i = 0; i < nt && !s; i++)
        if (t[i].top == f->top) s = &t[i];
      if (!s) continue;
      if (s->last_file != j) s->holders++, s->last_file = j;
      if (f->leaf)
        s->seen++;
      else
        s->covered = true;
    }
  }
  for (size_t i = 0; i < nt; i++)
    if (t[i].holders > 1 || (t[i].holders == 1 && !t[i].covered && t[i].seen < t[i].leaves))
      add_spread(ds, t[i].top);
}

int lnc_ds_spread_find(lnc_dataset *ds, struct lnc_error *err) {
  const Lance__Table__Manifest *m = ds->m;
  size_t nt = 0;
  for (size_t i = 0; i < m->n_fields; i++) nt += m->fields[i]->parent_id == -1 && is_struct(m->fields[i]);
  if (nt == 0) return 0; /* the common case: nothing to scan */
  struct fid *ix = index_fields(m);
  struct tally *t = calloc(nt, sizeof *t);
  ds->spread = calloc(nt, sizeof *ds->spread);
  if (!ix || !t || !ds->spread) {
    free(ix);
    free(t);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  }
  nt = 0;
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->parent_id == -1 && is_struct(m->fields[i])) t[nt++].top = m->fields[i]->id;
  for (size_t k = 0; k < m->n_fields; k++)
    for (size_t i = 0; i < nt; i++)
      if (ix[k].leaf && ix[k].top == t[i].top && ix[k].id != t[i].top) t[i].leaves++;
  for (size_t f = 0; f < m->n_fragments && ds->nspread < nt; f++) scan_fragment(ds, m->fragments[f], ix, m->n_fields, t, nt);
  free(ix);
  free(t);
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

/* The struct's validity as Lance's merge makes it: valid where any piece is valid, leaving
 * out pieces null in every row read (Lance takes those for placeholders); all valid when no
 * piece is left. NULL with *nulls 0 when every row is valid. */
static int merged_validity(const struct lnc_ds_piece *p, size_t np, uint64_t n, uint8_t **out,
                           int64_t *nulls) {
  *out = NULL;
  *nulls = 0;
  bool *keep = calloc(np ? np : 1, sizeof *keep);
  if (!keep) return LNC_ENOMEM;
  size_t kept = 0;
  for (size_t i = 0; i < np; i++) {
    uint64_t valid = 0;
    for (uint64_t r = 0; r < n && !valid; r++) valid += row_valid(&p[i], r);
    keep[i] = valid > 0 || n == 0;
    kept += keep[i];
  }
  for (uint64_t r = 0; r < n && kept; r++) {
    bool v = false;
    for (size_t i = 0; i < np && !v; i++) v = keep[i] && row_valid(&p[i], r);
    if (v) continue;
    if (!*out) {
      if (!(*out = malloc((size_t)(n + 7) / 8))) {
        free(keep);
        return LNC_ENOMEM;
      }
      memset(*out, 0xff, (size_t)(n + 7) / 8);
    }
    (*out)[r >> 3] &= (uint8_t) ~(1u << (r & 7));
    (*nulls)++;
  }
  free(keep);
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
  if (ns == 0) /* no data file holds it: nulls, as Lance's piece of nulls reads */
    rc = lnc_arrow_make_nulls(tc, n, out, err);
  else if (nested && (ns > 1 || !lnc_arrow_same_type(sub[0].s, tc)))
    rc = merge(tc, sub, ns, n, depth + 1, out, err);
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
  LNC_ASSERT(strcmp(target->format, "+s") == 0);
  return merge(target, pieces, np, n, 0, out, err);
}
