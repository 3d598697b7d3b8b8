/* lnc_dataset_take: dataset offsets → (fragment, physical row) → per fragment one take per
 * data file holding requested fields, through a pluggable reader (the handle's own lnc_file
 * handles, or the take engine's shared search cache: lib/cache/datasets.c) → per output
 * column one gather across fragments that also restores request order (duplicates
 * included). Missing fields read as nulls. Columns are named by the manifest and read from
 * the data files by field id, as Lance does: a rename rewrites only the manifest. */
#include "dataset.h"
#include "../take/take.h"
#include "../arrow/builder.h"
#include "../format/reader.h"
#include "../arrow/format.h"
#include "../arrow/concat.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

struct outcol {
  const Lance__File__Field *field; /* top-level field */
  int32_t *req;                    /* field ids asked for under it (itself, or nested ones) */
  size_t nreq;
  const struct ArrowSchema *schema; /* from the first fragment that had it (borrowed), or own */
  struct ArrowSchema own;           /* from the manifest, when no fragment read had it */
  const struct ArrowArray **parts;  /* per touched fragment */
  bool spread;                      /* a struct (or list of structs) some fragment spreads */
};

struct sorted_id {
  size_t frag;
  uint64_t row;
  size_t orig;
};

struct result { /* one lnc_take answer, kept until the gathers are done */
  struct ArrowSchema schema;
  struct ArrowArray array;
};

struct take_state {
  struct outcol *cols;
  size_t ncols;
  struct sorted_id *sid;
  struct lnc_row_ref *refs;
  size_t *touched; /* fragment index per part */
  uint64_t **rows; /* unique physical rows per part */
  size_t *nrows;
  size_t nparts;
  struct result *res;
  size_t nres, capres;
  size_t *res_from;          /* per part: its first result (its last: the next part's first) */
  struct ArrowArray *nulls;  /* ncols * nparts, only some used */
  struct ArrowArray *merged; /* ncols * nparts: spread structs put together (spread.c) */
  uint64_t *addr;            /* per request position: the row's address (frag id << 32 | row) */
};

/* Lance's pseudo-columns: computed from where each row is, never read. */
enum pseudo { P_NONE = 0,
              P_ROWID,
              P_ROWADDR };
static const char *const PSEUDO_NAME[] = {NULL, "_rowid", "_rowaddr"};

static enum pseudo pseudo_of(const char *name) {
  for (int k = P_ROWID; k <= P_ROWADDR; k++)
    if (!strcmp(name, PSEUDO_NAME[k])) return (enum pseudo)k;
  return P_NONE;
}

static int cmp_sid(const void *a, const void *b) {
  const struct sorted_id *x = a, *y = b;
  if (x->frag != y->frag) return x->frag < y->frag ? -1 : 1;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  return 0;
}

/* The manifest's field `name` (len bytes) under parent id `parent` (-1: top level). */
static const Lance__File__Field *child_field(const Lance__Table__Manifest *m, int32_t parent,
                                             const char *name, size_t len) {
  for (size_t i = 0; i < m->n_fields; i++) {
    const Lance__File__Field *f = m->fields[i];
    if (f->parent_id == parent && strlen(f->name) == len && memcmp(f->name, name, len) == 0)
      return f;
  }
  return NULL;
}

/* A column path ("a", "s.x") in the manifest's schema, with lnc_take's reading of dots: each
 * component a child's name, else the whole remainder one name that contains dots. */
static const Lance__File__Field *manifest_find(const Lance__Table__Manifest *m, const char *path) {
  const Lance__File__Field *cur = NULL;
  for (const char *p = path;;) {
    const char *dot = strchr(p, '.');
    int32_t parent = cur ? cur->id : -1;
    const Lance__File__Field *next = child_field(m, parent, p, dot ? (size_t)(dot - p) : strlen(p));
    if (!next) return dot ? child_field(m, parent, p, strlen(p)) : NULL;
    if (!dot) return next;
    cur = next;
    p = dot + 1;
  }
}

/* The manifest's field with id `id`, else NULL. */
static const Lance__File__Field *manifest_field(const lnc_dataset *ds, int32_t id) {
  const struct lnc_ds_fref *r = lnc_ds_fref(ds, id);
  return r ? r->f : NULL;
}

/* The manifest's name for field `id` (the output's names), NULL when it has none. */
static const char *manifest_name(void *ctx, int32_t id) {
  const Lance__File__Field *f = manifest_field(ctx, id);
  return f ? f->name : NULL;
}

/* The top-level ancestor of field `id` (itself at top level), or -1. */
static int32_t top_ancestor(const lnc_dataset *ds, int32_t id) {
  const struct lnc_ds_fref *r = lnc_ds_fref(ds, id);
  return r ? r->top : -1;
}

static int resolve_columns(const lnc_dataset *ds, const char *const *columns, size_t ncolumns,
                           struct take_state *st, struct lnc_error *err) {
  const Lance__Table__Manifest *m = ds->m;
  size_t cap = columns && ncolumns ? ncolumns : m->n_fields;
  st->cols = calloc(cap ? cap : 1, sizeof *st->cols);
  if (!st->cols) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  if (!columns || ncolumns == 0) {
    for (size_t i = 0; i < m->n_fields; i++) {
      if (m->fields[i]->parent_id != -1) continue;
      struct outcol *c = &st->cols[st->ncols++];
      c->field = m->fields[i];
      c->spread = lnc_ds_spread_is(ds, c->field->id);
      if (!(c->req = malloc(sizeof *c->req)))
        return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
      c->req[c->nreq++] = c->field->id;
    }
    return 0;
  }
  for (size_t k = 0; k < ncolumns; k++) {
    const char *name = columns[k];
    if (!name) return lnc_errf(err, LNC_EINVAL, "column %zu is NULL", k);
    const Lance__File__Field *want = manifest_find(m, name);
    const Lance__File__Field *f = want ? manifest_field(ds, top_ancestor(ds, want->id)) : NULL;
    if (!f)
      return lnc_errf(err, LNC_EINVAL, "%s: unknown column '%s'", ds->name, name);
    size_t c;
    for (c = 0; c < st->ncols; c++)
      if (st->cols[c].field == f) break;
    if (c == st->ncols) {
      st->ncols++;
      st->cols[c].field = f;
      st->cols[c].spread = lnc_ds_spread_is(ds, f->id);
      if (!(st->cols[c].req = malloc(ncolumns * sizeof *st->cols[c].req)))
        return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
    }
    st->cols[c].req[st->cols[c].nreq++] = want->id;
  }
  return 0;
}

/* Row id → (fragment, physical row): the row address itself, or with stable row ids its
 * entry in the version's index (rowids.c). */
static int rowid_lookup(const lnc_dataset *ds, uint64_t id, size_t *frag, uint64_t *row, struct lnc_error *err) {
  if (!(ds->m->reader_feature_flags & LNC_DS_FLAG_STABLE_ROW_IDS)) return lnc_ds_addr_lookup(ds, id, frag, row, err);
  uint64_t addr;
  int rc = lnc_ds_rowid_lookup(ds, id, &addr, err);
  return rc ? rc : lnc_ds_addr_lookup(ds, addr, frag, row, err);
}

/* Groups the ids by fragment: unique sorted physical rows per touched fragment and, per
 * request position, a reference (part, index in that part). */
static int plan(const lnc_dataset *ds, const uint64_t *ids, size_t n, int kind, struct take_state *st,
                struct lnc_error *err) {
  st->sid = malloc((n ? n : 1) * sizeof *st->sid);
  st->addr = malloc((n ? n : 1) * sizeof *st->addr);
  st->refs = malloc((n ? n : 1) * sizeof *st->refs);
  size_t maxparts = ds->nfrag ? ds->nfrag : 1;
  st->touched = malloc(maxparts * sizeof *st->touched);
  st->rows = calloc(maxparts, sizeof *st->rows);
  st->nrows = calloc(maxparts, sizeof *st->nrows);
  st->res_from = calloc(maxparts, sizeof *st->res_from);
  if (!st->sid || !st->addr || !st->refs || !st->touched || !st->rows || !st->nrows || !st->res_from)
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  for (size_t i = 0; i < n; i++) {
    int rc = kind == LNC_IDS_ROW_IDS ? rowid_lookup(ds, ids[i], &st->sid[i].frag, &st->sid[i].row, err)
                                     : lnc_ds_rowmap_lookup(&ds->map, ids[i], &st->sid[i].frag, &st->sid[i].row, err);
    if (rc) {
      lnc_err_prefix(err, "%s", ds->name);
      return rc;
    }
    st->sid[i].orig = i;
    st->addr[i] = ds->frags[st->sid[i].frag].pb->id << 32 | st->sid[i].row;
  }
  if (n > 1) qsort(st->sid, n, sizeof *st->sid, cmp_sid);
  for (size_t i = 0; i < n;) {
    size_t j = i, k = st->nparts++;
    while (j < n && st->sid[j].frag == st->sid[i].frag) j++;
    st->touched[k] = st->sid[i].frag;
    if (!(st->rows[k] = malloc((j - i) * sizeof **st->rows)))
      return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
    for (size_t q = i; q < j; q++) {
      if (st->nrows[k] == 0 || st->rows[k][st->nrows[k] - 1] != st->sid[q].row)
        st->rows[k][st->nrows[k]++] = st->sid[q].row;
      st->refs[st->sid[q].orig] = (struct lnc_row_ref){(uint32_t)k, st->nrows[k] - 1};
    }
    i = j;
  }
  if (st->nparts == 0 && ds->nfrag > 0) { /* no rows: still read one fragment for the types */
    st->touched[0] = 0;
    st->nparts = 1;
  }
  return 0;
}

/* Whether field `id` is `anc` or beneath it in the manifest's schema (parents are earlier
 * fields, so the walk ends). */
static bool is_below(const lnc_dataset *ds, int32_t id, int32_t anc) {
  for (size_t hops = 0; hops <= ds->nfidx && id != -1; hops++) {
    if (id == anc) return true;
    const Lance__File__Field *f = manifest_field(ds, id);
    if (!f) return false;
    id = f->parent_id;
  }
  return false;
}

/* A data file holds a field when it lists the field, a field beneath it (in 2.1+ files list
 * and struct parents have no column and are not listed), or one above it (a packed struct is
 * one column). A top-level field: a lookup in the file's tops; a nested one (the fields of a
 * spread struct) walks the file's list. */
static int file_holds(const lnc_dataset *ds, const struct lnc_ds_datafile *df, int32_t id) {
  const struct lnc_ds_fref *r = lnc_ds_fref(ds, id);
  if (r && r->top == id) return lnc_ds_file_holds_top(df, id);
  if (r && !lnc_ds_file_holds_top(df, r->top)) return 0;
  for (size_t k = 0; k < df->pb->n_fields; k++)
    if (df->pb->fields[k] >= 0 && (is_below(ds, df->pb->fields[k], id) || (r && is_below(ds, id, df->pb->fields[k]))))
      return 1;
  return 0;
}

/* The default reader: the handle's own lnc_file per data file, opened on first use, one
 * thread at a time per file (its mutex). */
static int own_take(void *ctx, lnc_dataset *ds, size_t frag, size_t file, const uint64_t *rows,
                    size_t n, const struct lnc_colsel *cols, const struct lnc_take_options *opts, struct ArrowSchema *schema,
                    struct ArrowArray *array, struct lnc_take_stats *stats,
                    struct lnc_error *err) {
  (void)ctx;
  struct lnc_ds_datafile *df = &ds->frags[frag].files[file];
  pthread_mutex_lock(&df->lock);
  lnc_file *f;
  int rc = lnc_ds_file_get(ds, frag, file, &f, err);
  if (!rc) rc = lnc_take_env(f, NULL, rows, n, cols, opts, schema, array, stats, err);
  pthread_mutex_unlock(&df->lock);
  return rc;
}

static int take_part(lnc_dataset *ds, const struct lnc_ds_reader *rd,
                     const struct lnc_take_options *opts, size_t k, struct take_state *st,
                     struct lnc_take_stats *stats, struct lnc_error *err) {
  size_t fi = st->touched[k];
  const struct lnc_ds_fragment *fr = &ds->frags[fi];
  int32_t *fids = malloc((st->ncols ? st->ncols : 1) * 8 * sizeof *fids);
  size_t fidcap = (st->ncols ? st->ncols : 1) * 8;
  if (!fids) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  int rc = 0;
  st->res_from[k] = st->nres;
  for (size_t j = 0; j < fr->nfiles && !rc; j++) {
    const Lance__Table__DataFile *df = fr->files[j].pb;
    size_t nn = 0;
    for (size_t c = 0; c < st->ncols; c++) {
      if (!file_holds(ds, &fr->files[j], st->cols[c].field->id) || st->cols[c].parts[k]) continue;
      for (size_t q = 0; q < st->cols[c].nreq; q++) {
        /* A spread struct is read from every data file holding part of it, each asked for
         * the fields it has; the pieces are merged afterwards (merge_spread). */
        if (st->cols[c].spread && !file_holds(ds, &fr->files[j], st->cols[c].req[q])) continue;
        if (lnc_grow_array((void **)&fids, &fidcap, nn + 1, sizeof *fids)) {
          free(fids);
          return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
        }
        fids[nn++] = st->cols[c].req[q];
      }
    }
    if (nn == 0) continue;
    if (lnc_grow_array((void **)&st->res, &st->capres, st->nres + 1, sizeof *st->res)) {
      rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
      break;
    }
    struct result *r = &st->res[st->nres];
    memset(r, 0, sizeof *r);
    const struct lnc_colsel sel = {.ids = fids, .n = nn, .rename = manifest_name, .ctx = (void *)ds};
    rc = rd->take(rd->ctx, ds, fi, j, st->rows[k], st->nrows[k], &sel, opts, &r->schema, &r->array, stats, err);
    if (rc) {
      /* The columns were checked against the manifest's schema: a data file refusing one
       * (a field id the manifest lists for it missing from the file) is the dataset's fault,
       * not the caller's. */
      if (rc == LNC_EINVAL) {
        rc = LNC_ECORRUPT;
        if (err) err->code = rc;
        lnc_err_prefix(err, "the data file does not match the manifest's schema");
      }
      lnc_err_prefix(err, "%s: fragment %llu, data file %s", ds->name,
                     (unsigned long long)fr->pb->id, df->path);
      break;
    }
    st->nres++;
    if (r->array.length != (int64_t)st->nrows[k] || r->schema.n_children != r->array.n_children) {
      rc = lnc_errf(err, LNC_EINTERNAL, "%s: take from %s returned %lld rows, %zu asked",
                    ds->name, df->path, (long long)r->array.length, st->nrows[k]);
      break;
    }
    for (int64_t ch = 0; ch < r->schema.n_children && !rc; ch++) {
      const struct ArrowSchema *cs = r->schema.children[ch];
      for (size_t c = 0; c < st->ncols; c++) {
        if (st->cols[c].spread || !cs->name || strcmp(cs->name, st->cols[c].field->name) != 0) continue;
        /* The whole type, not only its top: the parts are gathered with the first part's
         * schema, and list<int32> gathered as list<double> reads past its values. */
        if (st->cols[c].schema && !lnc_arrow_same_type(st->cols[c].schema, cs)) {
          char here[128], before[128];
          rc = lnc_errf(err, LNC_ECORRUPT, "%s: column '%s' is '%s' in fragment %llu but '%s' elsewhere",
                        ds->name, cs->name, lnc_arrow_type_str(cs, here, sizeof here),
                        (unsigned long long)fr->pb->id, lnc_arrow_type_str(st->cols[c].schema, before, sizeof before));
          break;
        }
        if (!st->cols[c].schema) st->cols[c].schema = cs;
        st->cols[c].parts[k] = r->array.children[ch];
      }
    }
  }
  free(fids);
  return rc;
}

static void state_free(struct take_state *st) {
  for (size_t c = 0; c < st->ncols; c++) {
    if (st->cols[c].own.release) st->cols[c].own.release(&st->cols[c].own);
    free(st->cols[c].req);
    free(st->cols[c].parts);
  }
  if (st->nulls)
    for (size_t i = 0; i < st->ncols * st->nparts; i++)
      if (st->nulls[i].release) st->nulls[i].release(&st->nulls[i]);
  free(st->nulls);
  if (st->merged)
    for (size_t i = 0; i < st->ncols * st->nparts; i++)
      if (st->merged[i].release) st->merged[i].release(&st->merged[i]);
  free(st->merged);
  free(st->res_from);
  free(st->addr);
  for (size_t i = 0; i < st->nres; i++) {
    if (st->res[i].array.release) st->res[i].array.release(&st->res[i].array);
    if (st->res[i].schema.release) st->res[i].schema.release(&st->res[i].schema);
  }
  free(st->res);
  free(st->cols);
  free(st->sid);
  free(st->refs);
  free(st->touched);
  if (st->rows)
    for (size_t k = 0; k < st->nparts; k++) free(st->rows[k]);
  free(st->rows);
  free(st->nrows);
}

static bool asked(const struct outcol *c, int32_t id) {
  for (size_t q = 0; q < c->nreq; q++)
    if (c->req[q] == id) return true;
  return false;
}

static bool asked_below(const struct outcol *c, const struct lnc_field *f) {
  if (asked(c, f->id)) return true;
  for (size_t i = 0; i < f->n_children; i++)
    if (asked_below(c, f->children[i])) return true;
  return false;
}

/* f as a data file's take would project it for c: whole when asked for (or not a struct),
 * else a struct of the children on the way to what was asked. */
static int export_projected(const struct outcol *c, const struct lnc_field *f, struct ArrowSchema *out,
                            struct lnc_error *err) {
  if (asked(c, f->id) || f->type != LNC_AT_STRUCT || f->packed || f->blob) return lnc_schema_export(f, out, err);
  size_t k = 0;
  for (size_t i = 0; i < f->n_children; i++) k += asked_below(c, f->children[i]);
  if (lnc_schema_init(out, f->format, f->name, f->nullable ? ARROW_FLAG_NULLABLE : 0, (int64_t)k))
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0, j = 0; i < f->n_children && !rc; i++)
    if (asked_below(c, f->children[i])) rc = export_projected(c, f->children[i], out->children[j++], err);
  if (rc) out->release(out);
  return rc;
}

/* A column no fragment read has data for (added with addColumns and never written, or
 * written only in fragments this take does not touch) reads as nulls, as Lance reads it: its
 * type comes from the manifest's schema, built the way a data file's is. */
static int manifest_schema(const lnc_dataset *ds, struct outcol *c, struct lnc_error *err) {
  struct lnc_file *tmp = calloc(1, sizeof *tmp);
  if (!tmp) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  tmp->name = ds->name;
  Lance__File__Schema sch = LANCE__FILE__SCHEMA__INIT;
  sch.n_fields = ds->m->n_fields;
  sch.fields = ds->m->fields;
  int rc = lnc_schema_build(tmp, &sch, err);
  const struct lnc_field *top = rc ? NULL : lnc_schema_find_id(tmp, c->field->id);
  if (!rc && !top) rc = lnc_errf(err, LNC_EINTERNAL, "%s: field %d is not in the manifest's schema", ds->name, (int)c->field->id);
  if (!rc) rc = export_projected(c, top, &c->own, err);
  if (!rc) c->schema = &c->own;
  lnc_schema_free(tmp);
  free(tmp);
  return rc;
}

/* Part k of each spread struct column from the pieces its data files returned (spread.c), of
 * the manifest's type; a lone piece of that type is used as it is. No piece: the column reads
 * as nulls like any column without data. */
static int merge_spread(const lnc_dataset *ds, struct take_state *st, size_t k, struct lnc_error *err) {
  if (ds->nspread == 0) return 0;
  size_t from = st->res_from[k], np_max = st->nres - from;
  struct lnc_ds_piece *pc = calloc(np_max ? np_max : 1, sizeof *pc);
  if (!pc) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  int rc = 0;
  for (size_t c = 0; c < st->ncols && !rc; c++) {
    struct outcol *col = &st->cols[c];
    if (!col->spread) continue;
    size_t np = 0;
    for (size_t i = from; i < st->nres; i++)
      for (int64_t ch = 0; ch < st->res[i].schema.n_children; ch++) {
        const struct ArrowSchema *cs = st->res[i].schema.children[ch];
        if (np < np_max && cs->name && strcmp(cs->name, col->field->name) == 0)
          pc[np++] = (struct lnc_ds_piece){cs, st->res[i].array.children[ch], 0};
      }
    if (np == 0) continue;
    if (!col->schema && (rc = manifest_schema(ds, col, err))) break;
    if (np == 1 && lnc_arrow_same_type(pc[0].s, col->schema)) {
      col->parts[k] = pc[0].a;
      continue;
    }
    if (!st->merged && !(st->merged = calloc(st->ncols * st->nparts, sizeof *st->merged))) {
      rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
      break;
    }
    struct ArrowArray *out = &st->merged[c * st->nparts + k];
    rc = lnc_ds_spread_merge(col->schema, pc, np, st->nrows[k], out, err);
    if (rc)
      lnc_err_prefix(err, "%s: fragment %llu, column '%s'", ds->name,
                     (unsigned long long)ds->frags[st->touched[k]].pb->id, col->field->name);
    else
      col->parts[k] = out;
  }
  free(pc);
  return rc;
}

int lnc_dataset_take(lnc_dataset *ds, const uint64_t *ids, size_t n, const char *const *columns,
                     size_t ncolumns, struct ArrowSchema *schema, struct ArrowArray *array,
                     struct lnc_take_stats *stats, struct lnc_error *err) {
  return lnc_ds_take(ds, NULL, ids, n, columns, ncolumns, NULL, schema, array, stats, err);
}

int lnc_dataset_take_ex(lnc_dataset *ds, const uint64_t *ids, size_t n,
                        const char *const *columns, size_t ncolumns,
                        const struct lnc_take_options *opts, struct ArrowSchema *schema,
                        struct ArrowArray *array, struct lnc_take_stats *stats,
                        struct lnc_error *err) {
  return lnc_ds_take(ds, NULL, ids, n, columns, ncolumns, opts, schema, array, stats, err);
}

/* The lower bound of part k's distinct rows in Arrow's layout (lnc_arrow_row_bytes). */
static uint64_t part_bytes(const struct take_state *st, size_t k) {
  uint64_t total = 0;
  for (size_t c = 0; c < st->ncols; c++) {
    if (!st->cols[c].parts[k]) continue;
    for (size_t r = 0; r < st->nrows[k]; r++) {
      uint64_t b = lnc_arrow_row_bytes(st->cols[c].schema, st->cols[c].parts[k], r, NULL);
      total = total + b < total ? UINT64_MAX : total + b;
    }
  }
  return total;
}

/* The answer in request order against opts->max_bytes, before the gathers build it: each
 * part's rows are sized once (lnc_arrow_row_bytes: bytes, and list items, which the gather
 * references one by one: lnc_take_max_items), then counted as often as they are asked for.
 * The parts themselves were bounded by their own takes; their copies were not. */
static int check_answer_size(const lnc_dataset *ds, const struct take_state *st, size_t n, uint64_t max_bytes,
                             struct lnc_error *err) {
  size_t nu = 0;
  for (size_t k = 0; k < st->nparts; k++) nu += st->nrows[k];
  uint64_t *size = malloc((nu ? nu : 1) * sizeof *size), *items = malloc((nu ? nu : 1) * sizeof *items);
  size_t *base = malloc((st->nparts ? st->nparts : 1) * sizeof *base);
  if (!size || !items || !base) {
    free(size);
    free(items);
    free(base);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  }
  uint64_t total = 0, nitems = 0, max_items = lnc_take_max_items(max_bytes);
  for (size_t c = 0; c < st->ncols && total <= max_bytes && nitems <= max_items; c++) {
    for (size_t k = 0, at = 0; k < st->nparts; at += st->nrows[k], k++) {
      base[k] = at;
      for (size_t r = 0; r < st->nrows[k]; r++) {
        items[at + r] = 0;
        size[at + r] = lnc_arrow_row_bytes(st->cols[c].schema, st->cols[c].parts[k], r, &items[at + r]);
      }
    }
    for (size_t i = 0; i < n && total <= max_bytes && nitems <= max_items; i++) {
      size_t at = base[st->refs[i].part] + st->refs[i].row;
      total = total + size[at] < total ? UINT64_MAX : total + size[at];
      nitems = nitems + items[at] < nitems ? UINT64_MAX : nitems + items[at];
    }
  }
  free(size);
  free(items);
  free(base);
  if (total > max_bytes) return lnc_take_refuse(err, ds->name, n, max_bytes, "bytes");
  if (nitems > max_items)
    return lnc_take_refuse(err, ds->name, n, max_items, LNC_TAKE_ITEMS_TEXT);
  return 0;
}

/* The pseudo-columns named in columns, in the order first named, into want[] (at most two);
 * the other names into real[] (*nreal). */
static size_t split_pseudo(const char *const *columns, size_t ncolumns, const char **real, size_t *nreal,
                           enum pseudo *want) {
  size_t np = 0;
  *nreal = 0;
  for (size_t i = 0; i < ncolumns; i++) {
    enum pseudo k = pseudo_of(columns[i]);
    if (k == P_NONE) {
      real[(*nreal)++] = columns[i];
    } else if (!(np == 1 && want[0] == k) && np < 2) {
      want[np++] = k;
    }
  }
  return np;
}

/* A pseudo-column of the take: one uint64 per request position, not null. */
static int pseudo_column(const lnc_dataset *ds, enum pseudo k, const struct take_state *st, size_t n,
                         struct ArrowSchema *s, struct ArrowArray *a, struct lnc_error *err) {
  uint64_t *v = malloc((n ? n : 1) * sizeof *v);
  if (!v || lnc_schema_init(s, "L", PSEUDO_NAME[k], 0, 0) || lnc_array_init(a, (int64_t)n, 0, 2, 0)) {
    free(v);
    if (s->release) s->release(s);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  }
  lnc_array_set_buffer(a, 1, v); /* a owns v from here */
  /* Without stable row ids a row's id is its address. */
  bool stable = k == P_ROWID && (ds->m->reader_feature_flags & LNC_DS_FLAG_STABLE_ROW_IDS);
  if (n && !stable) memcpy(v, st->addr, n * sizeof *v);
  for (size_t i = 0; stable && i < n; i++) {
    int rc = lnc_ds_rowid_of(ds, st->addr[i], &v[i], err);
    if (rc) {
      s->release(s);
      a->release(a);
      return rc;
    }
  }
  return 0;
}

int lnc_ds_take(lnc_dataset *ds, const struct lnc_ds_reader *rd, const uint64_t *ids, size_t n,
                const char *const *columns, size_t ncolumns,
                const struct lnc_take_options *opts, struct ArrowSchema *schema,
                struct ArrowArray *array, struct lnc_take_stats *stats, struct lnc_error *err) {
  static const struct lnc_ds_reader own = {own_take, NULL};
  if (!ds || !schema || !array || (n && !ids))
    return lnc_errf(err, LNC_EINVAL, "lnc_dataset_take: NULL argument");
  if (!rd) rd = &own;
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  struct take_state st;
  memset(&st, 0, sizeof st);
  struct ArrowSchema *osch = NULL;
  struct ArrowArray *oarr = NULL;
  enum pseudo want[2];
  size_t nreal = 0, npseudo = 0;
  const char **real = columns && ncolumns ? malloc(ncolumns * sizeof *real) : NULL;
  int rc = columns && ncolumns && !real ? lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name) : 0;
  if (real) npseudo = split_pseudo(columns, ncolumns, real, &nreal, want);
  if (!rc && npseudo && !nreal) { /* pseudo-columns only: no field is read */
    if (!(st.cols = calloc(1, sizeof *st.cols))) rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  } else if (!rc) {
    rc = resolve_columns(ds, real ? real : columns, real ? nreal : ncolumns, &st, err);
  }
  free(real);
  if (!rc) rc = plan(ds, ids, n, opts ? opts->ids : LNC_IDS_OFFSETS, &st, err);
  for (size_t c = 0; c < st.ncols && !rc; c++)
    if (!(st.cols[c].parts = calloc(st.nparts ? st.nparts : 1, sizeof *st.cols[c].parts)))
      rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  uint64_t used = 0;
  for (size_t k = 0; k < st.nparts && !rc; k++) {
    /* Each fragment's take gets what the fragments before left of max_bytes: their distinct
     * rows are in the answer, so the parts together stay bounded while they are read, not
     * only once they are all built (check_answer_size, which also counts repeats). */
    struct lnc_take_options po;
    const struct lnc_take_options *use = opts;
    if (opts && opts->max_bytes) {
      po = *opts;
      po.max_bytes = used < opts->max_bytes ? opts->max_bytes - used : 1;
      use = &po;
    }
    rc = take_part(ds, rd, use, k, &st, stats, err);
    if (!rc) rc = merge_spread(ds, &st, k, err);
    /* A part refused for its share of the bytes: name the whole take's limit, not the part's
     * (a refusal for list items already names the take's). */
    if (rc == LNC_ELIMIT && use != opts && err && strstr(err->message, LNC_TAKE_LIMIT_TEXT) &&
        !strstr(err->message, LNC_TAKE_ITEMS_TEXT))
      rc = lnc_take_refuse(err, ds->name, n, opts->max_bytes, "bytes");
    if (!rc && use != opts) {
      uint64_t b = part_bytes(&st, k);
      used = used + b < used ? UINT64_MAX : used + b;
    }
  }
  /* Fields a fragment has no data file for (e.g. added as all-null) read as nulls. */
  if (!rc && !(st.nulls = calloc(st.ncols * st.nparts + 1, sizeof *st.nulls)))
    rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  for (size_t c = 0; c < st.ncols && !rc; c++) {
    if (!st.cols[c].schema && st.nparts > 0 && (rc = manifest_schema(ds, &st.cols[c], err))) break;
    for (size_t k = 0; k < st.nparts && !rc; k++) {
      if (st.cols[c].parts[k]) continue;
      struct ArrowArray *na = &st.nulls[c * st.nparts + k];
      rc = lnc_arrow_make_nulls(st.cols[c].schema, st.nrows[k], na, err);
      st.cols[c].parts[k] = na;
    }
  }
  if (!rc) {
    osch = calloc(st.ncols + npseudo + 1, sizeof *osch);
    oarr = calloc(st.ncols + npseudo + 1, sizeof *oarr);
    if (!osch || !oarr) rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", ds->name);
  }
  if (!rc && opts && opts->max_bytes && st.nparts > 0) rc = check_answer_size(ds, &st, n, opts->max_bytes, err);
  for (size_t c = 0; c < st.ncols && !rc && st.nparts > 0; c++) {
    rc = lnc_arrow_schema_copy(st.cols[c].schema, &osch[c], err);
    if (!rc)
      rc = lnc_arrow_gather_multi(st.cols[c].schema, st.cols[c].parts, st.nparts, st.refs, n,
                                  &oarr[c], err);
    if (rc) lnc_err_prefix(err, "%s: column '%s'", ds->name, st.cols[c].field->name);
  }
  size_t nout = st.nparts > 0 ? st.ncols : 0;
  for (size_t k = 0; k < npseudo && !rc; k++, nout++)
    rc = pseudo_column(ds, want[k], &st, n, &osch[nout], &oarr[nout], err);
  if (!rc) {
    rc = lnc_arrow_struct_wrap(nout, osch, oarr, (int64_t)n, schema, array, err);
  } else {
    for (size_t c = 0; osch && oarr && c < st.ncols + npseudo; c++) {
      if (osch[c].release) osch[c].release(&osch[c]);
      if (oarr[c].release) oarr[c].release(&oarr[c]);
    }
  }
  free(osch);
  free(oarr);
  state_free(&st);
  return rc;
}
