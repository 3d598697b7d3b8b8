/* lnc_take: validate ids, resolve the projection, sort and deduplicate the ids (keeping the
 * permutation back to request order), read each selected leaf column page by page, then
 * put the rows back in request order and assemble Arrow arrays. */
#include "take.h"
#include "../layout/page.h"
#include "../arrow/builder.h"
#include "../arrow/format.h"
#include "../io/io.h"
#include "../io/s3.h"
#include "../util/error.h"
#include <stdlib.h>
#include <string.h>

int lnc_proj_first_column(const struct lnc_proj *p) {
  if (p->field->column >= 0) return p->field->column;
  for (size_t i = 0; i < p->n_children; i++) {
    int c = lnc_proj_first_column(&p->children[i]);
    if (c >= 0) return c;
  }
  return -1;
}

static void proj_free(struct lnc_proj *p) {
  for (size_t i = 0; i < p->n_children; i++) proj_free(&p->children[i]);
  free(p->children);
}

/* Whole field: every child (columns below a leaf column are not separate projections). */
static int proj_whole(struct lnc_proj *p, const struct lnc_field *f) {
  p->field = f;
  p->n_children = 0;
  p->children = NULL;
  if (f->n_children == 0 || (f->column >= 0 && f->type != LNC_AT_STRUCT)) return 0;
  p->children = calloc(f->n_children, sizeof *p->children);
  if (!p->children) return LNC_ENOMEM;
  p->n_children = f->n_children;
  for (size_t i = 0; i < f->n_children; i++) {
    int rc = proj_whole(&p->children[i], f->children[i]);
    if (rc) return rc;
  }
  return 0;
}

/* Adds the path root..target to the projection tree under p (p->field is an ancestor). */
static int proj_add_path(struct lnc_proj *p, const struct lnc_field *target) {
  if (p->field == target) return proj_whole(p, target);
  /* Child of p->field on the way to target. */
  const struct lnc_field *step = target;
  while (step->parent != p->field) step = step->parent;
  size_t idx = 0;
  while (p->field->children[idx] != step) idx++;
  /* Keep children in schema order: find or insert. */
  size_t at = 0;
  while (at < p->n_children) {
    if (p->children[at].field == step) {
      if (p->children[at].field == target) return 0; /* already whole */
      return proj_add_path(&p->children[at], target);
    }
    size_t cidx = 0;
    while (p->field->children[cidx] != p->children[at].field) cidx++;
    if (cidx > idx) break;
    at++;
  }
  struct lnc_proj *nc = realloc(p->children, (p->n_children + 1) * sizeof *nc);
  if (!nc) return LNC_ENOMEM;
  p->children = nc;
  memmove(&nc[at + 1], &nc[at], (p->n_children - at) * sizeof *nc);
  p->n_children++;
  memset(&nc[at], 0, sizeof nc[at]);
  nc[at].field = step;
  if (step == target) return proj_whole(&nc[at], target);
  return proj_add_path(&nc[at], target);
}

static struct lnc_field blob_data = {.name = (char *)"data", .type = LNC_AT_LARGE_BINARY, .format = (char *)"Z", .nullable = true, .column = -1, .id = -2};
static struct lnc_field blob_uri = {.name = (char *)"uri", .type = LNC_AT_UTF8, .format = (char *)"u", .nullable = true, .column = -1, .id = -2};
const struct lnc_field *const lnc_blob_bytes_fields[2] = {&blob_data, &blob_uri};

/* Schema of a blob column as served: see enum lnc_blob_mode in lance.h. */
static int blob_schema(const struct lnc_field *f, int blobs, struct ArrowSchema *out, struct lnc_error *err) {
  if (f->type != LNC_AT_STRUCT && blobs == LNC_BLOBS_BYTES) return lnc_schema_export(f, out, err);
  if (f->type == LNC_AT_STRUCT && blobs == LNC_BLOBS_DESCRIPTORS) return lnc_schema_export(f, out, err);
  const char *names[2] = {"position", "size"}, *fmts[2] = {"L", "L"};
  if (f->type == LNC_AT_STRUCT) {
    names[0] = "data";
    names[1] = "uri";
    fmts[0] = "Z";
    fmts[1] = "u";
  }
  if (lnc_schema_init(out, "+s", f->name, f->nullable ? ARROW_FLAG_NULLABLE : 0, 2))
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (int i = 0; i < 2; i++)
    if (lnc_schema_init(out->children[i], fmts[i], names[i], ARROW_FLAG_NULLABLE, 0)) {
      out->release(out);
      return lnc_errf(err, LNC_ENOMEM, "out of memory");
    }
  return 0;
}

int lnc_proj_schema(const struct lnc_proj *p, int blobs, struct ArrowSchema *out, struct lnc_error *err) {
  const struct lnc_field *f = p->field;
  if (f->blob && f->column >= 0) return blob_schema(f, blobs, out, err);
  bool leafcol = f->column >= 0 && f->type != LNC_AT_STRUCT;
  if (leafcol) return lnc_schema_export(f, out, err);
  if (lnc_schema_init(out, f->format, f->name, f->nullable ? ARROW_FLAG_NULLABLE : 0,
                      (int64_t)p->n_children))
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < p->n_children; i++) {
    int rc = lnc_proj_schema(&p->children[i], blobs, out->children[i], err);
    if (rc) {
      out->release(out);
      return rc;
    }
  }
  return 0;
}

/* Renames one exported node after its field's id; fields with no id of their own (a blob's
 * descriptor or bytes fields: -1 in the file, -2 where we make them up) keep their names. */
static int rename_node(const struct lnc_field *f, const struct lnc_colsel *sel, struct ArrowSchema *out,
                       struct lnc_error *err) {
  if (f->id < 0) return 0;
  const char *name = sel->rename(sel->ctx, f->id);
  if (!name)
    return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s' (id %d) is in the data file but not in the dataset's schema "
                                           "(a nested field dropped): not served",
                    f->name, (int)f->id);
  if (out->name && strcmp(out->name, name) == 0) return 0;
  return lnc_schema_set_name(out, name) ? lnc_errf(err, LNC_ENOMEM, "out of memory") : 0;
}

/* A field exported whole (lnc_schema_export): its children are the field's, in order. */
static int rename_whole(const struct lnc_field *f, const struct lnc_colsel *sel, struct ArrowSchema *out,
                        struct lnc_error *err) {
  int rc = rename_node(f, sel, out, err);
  if (rc || f->blob || f->dict_index[0] || f->unsupported || out->n_children != (int64_t)f->n_children) return rc;
  for (size_t i = 0; i < f->n_children && !rc; i++) rc = rename_whole(f->children[i], sel, out->children[i], err);
  return rc;
}

int lnc_proj_rename(const struct lnc_proj *p, const struct lnc_colsel *sel, struct ArrowSchema *out,
                    struct lnc_error *err) {
  if (!sel || !sel->rename) return 0;
  const struct lnc_field *f = p->field;
  /* The same three shapes as lnc_proj_schema: blob, leaf column (whole), pruned struct. */
  if (f->blob && f->column >= 0) return rename_node(f, sel, out, err);
  if (f->column >= 0 && f->type != LNC_AT_STRUCT) return rename_whole(f, sel, out, err);
  int rc = rename_node(f, sel, out, err);
  for (size_t i = 0; i < p->n_children && !rc; i++) rc = lnc_proj_rename(&p->children[i], sel, out->children[i], err);
  return rc;
}

/* A field we cannot serve (unsupported type, layout or encoding) fails only the takes that
 * select it, naming it and why; the file's other fields are served as usual. A take of no
 * rows (how a schema is asked for, e.g. a dataset's description) gets it as a null column. */
static int check_servable(const struct lnc_file *f, struct lnc_proj *p, size_t n, struct lnc_error *err) {
  const struct lnc_field *u = p->field->unsupported ? p->field
                              : p->n_children == 0  ? lnc_schema_unsupported_below(p->field)
                                                    : NULL;
  if (u && n)
    return lnc_errf(err, LNC_EUNSUPPORTED, "%s: column '%s' cannot be served (%s); name the other columns to read them",
                    f->name, u->name, u->unsupported);
  if (p->field->unsupported) { /* no rows: a null stand-in, read from no column */
    proj_free(p);
    p->children = NULL;
    p->n_children = 0;
    return 0;
  }
  for (size_t i = 0; i < p->n_children; i++) {
    int rc = check_servable(f, &p->children[i], n, err);
    if (rc) return rc;
  }
  return 0;
}

static void collect_columns(const struct lnc_proj *p, uint8_t *need) {
  if (p->field->unsupported) return;
  if (p->field->column >= 0) {
    need[p->field->column] = 1;
    return;
  }
  for (size_t i = 0; i < p->n_children; i++) collect_columns(&p->children[i], need);
}

struct id_ord {
  uint64_t id;
  uint32_t pos;
};

static int by_id(const void *a, const void *b) {
  const struct id_ord *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The context for reading column col; returns whether the leaf sits under a list. */
static bool ctx_init(struct lnc_take_ctx *tc, struct lnc_file *f, uint32_t col, struct lnc_arena *arena,
                     const struct lnc_take_env *env, struct lnc_take_stats *stats, struct lnc_error *err) {
  const struct lnc_field *leaf = f->columns[col].leaf;
  *tc = (struct lnc_take_ctx){.f = f, .column = col, .leaf = leaf, .arena = arena, .stats = stats, .err = err, .io = env ? env->io : NULL, .repidx_max = env ? env->repidx_max : UINT64_MAX};
  bool has_list = false, nullable = false;
  for (const struct lnc_field *x = leaf; x && x->parent; x = x->parent) {
    tc->depth++;
    if (lnc_kind_is_list(x->type)) has_list = true;
    if (x->nullable) nullable = true;
  }
  tc->levels = has_list || nullable;
  return has_list;
}

/* Ranges larger than this are left for their page to read: the page cache keeps none of them. */
#define PREFETCH_MAX_RANGE (1u << 20)
/* At most this much is prefetched for one file (beyond it the pages read for themselves). */
#define PREFETCH_MAX_BYTES (64u << 20)

/* For a file in an object store with a page cache: every page's initialisation reads fetched
 * in one batch (merged GETs in parallel) before the pages prepare one by one, which then find
 * their bytes in the page cache. Without it each page paid a round trip of its own: ~150
 * sequential GETs, 3.5 s at 20 ms each, for a 35-column file. Best effort: what fails or does
 * not fit, a page reads for itself. */
static void prefetch_init_reads(struct lnc_file *f, const struct lnc_take_env *env, struct lnc_take_stats *stats) {
  if (!f->src.s3 || !lnc_s3_source_caches(f->src.s3)) return;
  size_t cap = 0, n = 0;
  uint64_t bytes = 0;
  for (uint32_t col = 0; col < f->n_columns; col++) cap += 4 * (size_t)f->columns[col].n_pages;
  struct lnc_read *reads = cap ? malloc(cap * sizeof *reads) : NULL;
  if (!reads) return;
  for (uint32_t col = 0; col < f->n_columns; col++)
    for (uint32_t p = 0; p < f->columns[col].n_pages; p++) {
      size_t from = n, k = lnc_page_init_ranges(&f->columns[col].pages[p], reads + n, cap - n);
      for (size_t i = from; i < from + k; i++) /* kept ones move down over skipped ones */
        if (reads[i].len <= PREFETCH_MAX_RANGE && bytes + reads[i].len <= PREFETCH_MAX_BYTES) {
          bytes += reads[i].len;
          reads[n++] = reads[i];
        }
    }
  uint8_t *scratch = n ? malloc(bytes) : NULL;
  if (scratch) {
    uint8_t *p = scratch;
    for (size_t i = 0; i < n; i++) {
      reads[i].dst = p;
      p += reads[i].len;
    }
    struct lnc_error ignored = {0};
    lnc_io_read(env ? env->io : NULL, &f->src, reads, n, stats, &ignored);
  }
  free(scratch);
  free(reads);
}

int lnc_file_prepare(struct lnc_file *f, const struct lnc_take_env *env, struct lnc_take_stats *stats,
                     size_t *bytes) {
  prefetch_init_reads(f, env, stats);
  size_t total = sizeof *f + f->meta_bytes + f->n_all_fields * sizeof(struct lnc_field);
  struct lnc_arena arena;
  lnc_arena_init(&arena, 0);
  for (uint32_t col = 0; col < f->n_columns; col++) {
    struct lnc_column *c = &f->columns[col];
    struct lnc_error err = {0};
    struct lnc_take_ctx tc;
    ctx_init(&tc, f, col, &arena, env, stats, &err);
    for (uint32_t p = 0; p < c->n_pages && !c->prep_code; p++) {
      tc.page = p;
      int rc = lnc_page_prepare(&tc, &c->pages[p]);
      if (rc == LNC_EIO || rc == LNC_ENOMEM) {
        lnc_arena_free(&arena);
        return rc;
      }
      if (rc) {
        /* This column stays unreadable (named in every take that needs it); others serve. */
        c->prep_code = rc;
        c->prep_msg = strdup(err.message);
      }
      total += sizeof(struct lnc_page) + c->pages[p].state_bytes;
    }
    lnc_arena_reset(&arena);
  }
  lnc_arena_free(&arena);
  *bytes = total;
  return 0;
}

/* The request's page jobs, in its arena (what a grown list leaves behind is freed with it). */
struct job_list {
  struct lnc_page_job *v;
  size_t n, cap;
  struct lnc_arena *arena;
};

static int jobs_grow(struct job_list *jobs, struct lnc_error *err) {
  if (jobs->n < jobs->cap) return 0;
  size_t cap = jobs->cap ? jobs->cap * 2 : 4;
  struct lnc_page_job *nj = cap <= SIZE_MAX / sizeof *nj ? lnc_arena_alloc(jobs->arena, cap * sizeof *nj) : NULL;
  if (!nj) return lnc_errf(err, LNC_ENOMEM, "out of memory for %zu page jobs", cap);
  if (jobs->n) memcpy(nj, jobs->v, jobs->n * sizeof *nj);
  jobs->v = nj;
  jobs->cap = cap;
  return 0;
}

/* File version 2.0: one job walks the leaf and its ancestors' columns for every row (their
 * pages split differently, so a job per page of the leaf would not know its rows). */
static int plan_column20(struct lnc_file *f, uint32_t col, const uint64_t *uniq, size_t nu,
                         struct lnc_leafrows *out, const struct lnc_take_ctx *tc, struct job_list *jobs,
                         struct lnc_error *err) {
  if (!nu) return 0;
  if (!f->columns[col].n_pages)
    return lnc_errf(err, LNC_ECORRUPT, "%s: column %u has no pages", f->name, col);
  int rc = jobs_grow(jobs, err);
  if (rc) return rc;
  struct lnc_page_job *job = &jobs->v[jobs->n];
  *job = (struct lnc_page_job){.c = *tc, .pg = &f->columns[col].pages[0], .rows = uniq, .n = nu, .out = out};
  if ((rc = lnc_page_plan(job))) {
    lnc_page_release(job);
    return rc;
  }
  jobs->n++;
  return 0;
}

/* Whether column col may leave its values in the file (lnc_take_options.file_values_min):
 * binaries and strings, and fixed-size lists of byte-wide items (vectors), with no blob,
 * dictionary or list above them, of a local 2.1+ file. A string's bytes are served as the
 * file holds them in any case: Arrow answers pass them on; so are a vector's, little-endian
 * in the file as in the answer. */
static bool file_values_column(const struct lnc_file *f, const struct lnc_field *leaf, bool has_list,
                               uint64_t file_min) {
  bool var = leaf->type == LNC_AT_BINARY || leaf->type == LNC_AT_LARGE_BINARY || leaf->type == LNC_AT_UTF8 ||
             leaf->type == LNC_AT_LARGE_UTF8;
  bool vec = leaf->type == LNC_AT_FIXED_LIST && leaf->n_children == 1 && leaf->children[0]->byte_width &&
             !leaf->children[0]->n_children;
  return file_min && (var || vec) && !f->v20 && !f->src.s3 && f->src.fd >= 0 && !has_list && !leaf->blob &&
         !leaf->dict_index[0];
}

/* A single 3 KiB vector from the file cost lanced 5-10 % more CPU than copied (14 alternated
 * pairs, docs/performance.md "Vectors from the file"); two or more, and single values of
 * 4 KiB and up (an image), cost less from the file. */
#define FILE_VALUES_SHARE 4

/* The column's jobs [from, jobs->n) were planned with file values allowed: they go to the
 * file when all of them can, their rows average file_min bytes or more and hold
 * FILE_VALUES_SHARE times that together (each value is an iovec of its own to send: small
 * ones, and a lone row of a few KiB, are cheaper copied), and the page cache holds their
 * pages (sending from the file then waits for no device), and the file maps (io.h:
 * lnc_filemap). Otherwise they read as usual. */
static int commit_file_values(struct lnc_file *f, struct job_list *jobs, size_t from, uint64_t file_min,
                              struct lnc_leafrows *out) {
  uint64_t bytes = 0, rows = 0;
  bool all = jobs->n > from;
  for (size_t k = from; k < jobs->n && all; k++) {
    uint64_t b;
    bool resident;
    all = lnc_fullzip_file_pending(&jobs->v[k], &b, &resident) && resident;
    bytes += b;
    rows += jobs->v[k].n;
  }
  bool in_file = all && rows && bytes / rows >= file_min && bytes / FILE_VALUES_SHARE >= file_min &&
                 lnc_source_map(&f->src);
  out->values.in_file = in_file;
  for (size_t k = from; k < jobs->n; k++) {
    int rc = lnc_fullzip_commit(&jobs->v[k], in_file);
    if (rc) return rc;
  }
  return 0;
}

/* Sets up column col's stream and plans one job per page holding requested rows. */
static int plan_column(struct lnc_file *f, uint32_t col, const uint64_t *uniq, size_t nu,
                       struct lnc_leafrows *out, struct lnc_arena *arena,
                       const struct lnc_take_env *env, uint64_t max_bytes, uint64_t file_min,
                       struct lnc_take_stats *stats, struct job_list *jobs, struct lnc_error *err) {
  struct lnc_column *c = &f->columns[col];
  const struct lnc_field *leaf = c->leaf;
  if (c->prep_code) return lnc_errf(err, c->prep_code, "%s", c->prep_msg ? c->prep_msg : "column unreadable");
  struct lnc_take_ctx tc;
  bool has_list = ctx_init(&tc, f, col, arena, env, stats, err);
  tc.max_items = max_bytes ? lnc_take_max_items(max_bytes) : 0;
  tc.file_values = file_values_column(f, leaf, has_list, file_min);
  out->has_rep = has_list;
  out->has_def = tc.levels;
  /* Shape of the leaf's values. */
  int rc;
  switch (leaf->type) {
  case LNC_AT_UTF8:
  case LNC_AT_LARGE_UTF8:
  case LNC_AT_BINARY:
  case LNC_AT_LARGE_BINARY:
    /* A legacy blob column reads 16-byte descriptors (u64 position, u64 size). */
    if (leaf->blob)
      rc = lnc_valbuf_init(&out->values, LNC_VALUES_FIXED, 128, 1);
    else
      rc = lnc_valbuf_init(&out->values, LNC_VALUES_VARIABLE, 0, 1);
    break;
  case LNC_AT_FIXED_LIST: {
    /* Nested lists are one column of their innermost items (schema.c bounds the levels and
     * the product of the dimensions) */
    const struct lnc_field *item = leaf;
    uint64_t per_value[LNC_FSL_MAX_LEVELS], ipv = 1;
    uint32_t levels = 0;
    for (; item->type == LNC_AT_FIXED_LIST; item = item->children[0]) {
      if (levels == LNC_FSL_MAX_LEVELS || item->n_children != 1)
        return lnc_errf(err, LNC_EUNSUPPORTED, "column '%s': fixed-size lists nested too deep", leaf->name);
      ipv *= (uint64_t)item->fixed_size;
      per_value[levels++] = ipv;
    }
    /* null items have no bits: every page holds them as a Constant without value */
    uint32_t bits = item->type == LNC_AT_BOOL ? 1 : item->byte_width * 8;
    if (!bits && item->type != LNC_AT_NULL)
      return lnc_errf(err, LNC_EUNSUPPORTED, "column '%s': fixed-size list of %s", leaf->name, item->format);
    rc = lnc_valbuf_init(&out->values, LNC_VALUES_FIXED, bits, ipv);
    if (!rc) rc = lnc_valbuf_set_fsl(&out->values, levels, per_value);
    break;
  }
  case LNC_AT_STRUCT: { /* packed struct: fixed rows, or length-prefixed fields if any is variable */
    uint32_t bits = 0;
    bool var = false;
    for (size_t i = 0; i < leaf->n_children; i++) {
      const struct lnc_field *ch = leaf->children[i];
      if (ch->type == LNC_AT_BOOL || ch->n_children || ch->byte_width == 0) var = true;
      bits += ch->byte_width * 8;
    }
    rc = lnc_valbuf_init(&out->values, var ? LNC_VALUES_VARIABLE : LNC_VALUES_FIXED, var ? 0 : bits, 1);
    break;
  }
  case LNC_AT_NULL:
    rc = lnc_valbuf_init(&out->values, LNC_VALUES_FIXED, 8, 1);
    break;
  default:
    rc = lnc_valbuf_init(&out->values, LNC_VALUES_FIXED, leaf->type == LNC_AT_BOOL ? 1 : leaf->byte_width * 8, 1);
  }
  if (rc) return lnc_errf(err, rc, "out of memory");
  if (f->v20) return plan_column20(f, col, uniq, nu, out, &tc, jobs, err);
  /* One job per page holding requested rows, planned now, read with all other columns. */
  size_t i = 0, first_job = jobs->n;
  for (uint32_t p = 0; p < c->n_pages && i < nu; p++) {
    struct lnc_page *pg = &c->pages[p];
    if (uniq[i] >= pg->row_start + pg->rows) continue;
    size_t j = i;
    while (j < nu && uniq[j] < pg->row_start + pg->rows) j++;
    uint64_t *local = lnc_arena_alloc(arena, (j - i) * sizeof *local);
    if (!local) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    for (size_t k = i; k < j; k++) local[k - i] = uniq[k] - pg->row_start;
    if ((rc = jobs_grow(jobs, err))) return rc;
    tc.page = p;
    struct lnc_page_job *job = &jobs->v[jobs->n];
    *job = (struct lnc_page_job){.c = tc, .pg = pg, .rows = local, .n = j - i, .out = out};
    if ((rc = lnc_page_plan(job))) return rc;
    jobs->n++;
    i = j;
  }
  if (i != nu)
    return lnc_errf(err, LNC_ECORRUPT, "%s: column %u: pages do not cover the requested rows", f->name, col);
  return tc.file_values ? commit_file_values(f, jobs, first_job, file_min, out) : 0;
}

/* A lower bound of the bytes of rows [from, to) of a column (through perm when given: rows in
 * request order), in Arrow's own layout, the smallest answer lanced writes (so a refusal is
 * never wrong): each row's values and 4-byte offsets as many times as it is asked for,
 * booleans as bits, a dictionary column as a byte of index per value (its dictionary, sent
 * once, not counted). Saturates rather than wraps. */
static uint64_t rows_bytes(const struct lnc_field *leaf, const struct lnc_leafrows *r, const uint32_t *perm, size_t from,
                           size_t to, uint64_t *items) {
  const struct lnc_valbuf *v = &r->values;
  bool dict = leaf->dict_index[0] != 0;
  /* A packed struct is one leaf for all its fields, of which a take may project a few: its
   * rows are not a lower bound of the answer, so they count nothing. */
  bool sized = !(leaf->type == LNC_AT_STRUCT && leaf->packed);
  uint64_t total = 0, bits = 0, item_bits;
  if (__builtin_mul_overflow((uint64_t)v->bits, v->items_per_value ? v->items_per_value : 1, &item_bits)) return UINT64_MAX;
  for (size_t i = from; i < to; i++) {
    uint64_t k = perm ? perm[i] : i;
    uint64_t a = r->row_val ? r->row_val[k] : k, b = r->row_val ? r->row_val[k + 1] : k + 1, row;
    if (b > v->n) b = v->n;
    if (a > b) a = b;
    if (items && r->has_rep) { /* list items: levels or values, whichever the row has more of. A
                                 * fixed-size list's items are one value, copied as one range. */
      uint64_t lv = r->row_lev ? r->row_lev[k + 1] - r->row_lev[k] : 0, vi = b - a;
      uint64_t mine = lv > vi ? lv : vi;
      *items = *items + mine < *items ? UINT64_MAX : *items + mine;
    }
    if (!sized) continue;
    if (dict || v->kind == LNC_VALUES_VARIABLE) {
      row = dict ? b - a : (v->offsets ? v->offsets[b] - v->offsets[a] : 0) + 4 * (b - a);
      if (__builtin_add_overflow(total, row, &total)) return UINT64_MAX;
    } else if (__builtin_mul_overflow(b - a, item_bits, &row) || __builtin_add_overflow(bits, row, &bits)) {
      return UINT64_MAX;
    }
  }
  return __builtin_add_overflow(total, bits / 8, &total) ? UINT64_MAX : total;
}

int lnc_take_refuse(struct lnc_error *err, const char *name, size_t n, uint64_t limit, const char *unit) {
  return lnc_errf(err, LNC_ELIMIT, "%s: the %zu rows asked for hold over %llu %s, " LNC_TAKE_LIMIT_TEXT, name, n,
                  (unsigned long long)limit, unit);
}

/* Runs the jobs' read rounds, each round one batch for every page of every column, then
 * decodes the pages in order (pages of a column append to one stream). Every distinct row
 * is in the answer at least once, so the rows decoded so far bound the answer from below: a
 * take over max_bytes (0 = none) of n ids stops at the page that crosses it instead of
 * decoding everything first (10,000 distinct 1 MB strings were 10 GB before the refusal).
 * Blob descriptors are not what is served; lnc_blobs_to_bytes bounds the bytes. */
static int run_jobs(struct lnc_file *f, struct job_list *jobs, struct lnc_arena *arena,
                    const struct lnc_take_env *env, size_t n, uint64_t max_bytes, struct lnc_take_stats *stats,
                    struct lnc_error *err) {
  int rc = 0;
  for (int round = 0; round < LNC_PAGE_MAX_ROUNDS && !rc; round++) {
    size_t total = 0;
    for (size_t k = 0; k < jobs->n; k++) total += jobs->v[k].nreads;
    if (!total) break;
    struct lnc_read *batch = lnc_arena_alloc(arena, total * sizeof *batch);
    if (!batch) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    size_t at = 0;
    for (size_t k = 0; k < jobs->n; k++) {
      if (jobs->v[k].nreads) memcpy(batch + at, jobs->v[k].reads, jobs->v[k].nreads * sizeof *batch);
      at += jobs->v[k].nreads;
    }
    if ((rc = lnc_io_read(env ? env->io : NULL, &f->src, batch, total, stats, err))) break;
    for (size_t k = 0; k < jobs->n && !rc; k++)
      if (jobs->v[k].nreads) rc = lnc_page_advance(&jobs->v[k]);
  }
  /* A column's jobs are consecutive and append to one stream; 2.0 jobs fill it during their
   * read rounds already, so what is counted is the stream's rows since the last count. */
  uint64_t decoded = 0, counted = 0;
  const struct lnc_leafrows *stream = NULL;
  for (size_t k = 0; k < jobs->n && !rc; k++) {
    struct lnc_page_job *j = &jobs->v[k];
    if (j->nreads)
      rc = lnc_errf(err, LNC_EINTERNAL, "%s: page reads did not settle", f->name);
    else
      rc = lnc_page_decode(j);
    if (j->out != stream) stream = j->out, counted = 0;
    if (rc || !max_bytes || j->c.leaf->blob) continue;
    uint64_t more = rows_bytes(j->c.leaf, j->out, NULL, counted, j->out->n_rows, NULL);
    counted = j->out->n_rows;
    if (__builtin_add_overflow(decoded, more, &decoded) || decoded > max_bytes) rc = lnc_take_refuse(err, f->name, n, max_bytes, "bytes");
  }
  for (size_t k = 0; k < jobs->n; k++) lnc_page_release(&jobs->v[k]);
  return rc;
}

int lnc_take(lnc_file *f, const uint64_t *ids, size_t n, const char *const *columns,
             size_t ncolumns, struct ArrowSchema *schema, struct ArrowArray *array,
             struct lnc_take_stats *stats, struct lnc_error *err) {
  return lnc_take_ex(f, ids, n, columns, ncolumns, NULL, schema, array, stats, err);
}

int lnc_take_ex(lnc_file *f, const uint64_t *ids, size_t n, const char *const *columns,
                size_t ncolumns, const struct lnc_take_options *opts, struct ArrowSchema *schema,
                struct ArrowArray *array, struct lnc_take_stats *stats, struct lnc_error *err) {
  const struct lnc_colsel sel = {.names = columns, .n = columns ? ncolumns : 0};
  return lnc_take_env(f, NULL, ids, n, &sel, opts, schema, array, stats, err);
}

/* The field entry i of the selection names, or NULL (and LNC_EINVAL in err). */
static struct lnc_field *selected_field(lnc_file *f, const struct lnc_colsel *sel, size_t i,
                                        struct lnc_error *err) {
  struct lnc_field *fld;
  if (sel->ids) {
    fld = lnc_schema_find_id(f, sel->ids[i]);
    if (!fld) lnc_errf(err, LNC_EINVAL, "no field has id %d", (int)sel->ids[i]);
    return fld;
  }
  fld = lnc_schema_find(f, sel->names[i]);
  if (fld && fld->id != -2) return fld;
  lnc_errf(err, LNC_EINVAL, "unknown column '%s'", sel->names[i]);
  return NULL;
}

/* A nested field dropped from a dataset (dropColumns(["st.b"])) leaves the manifest but not
 * the data files written before: fields the selection has no name for are left out, as Lance
 * leaves them out, and their columns are not read. */
static void prune_unnamed(struct lnc_proj *p, const struct lnc_colsel *sel) {
  size_t kept = 0;
  for (size_t i = 0; i < p->n_children; i++) {
    struct lnc_proj *c = &p->children[i];
    if (c->field->id >= 0 && !sel->rename(sel->ctx, c->field->id)) {
      proj_free(c);
      continue;
    }
    prune_unnamed(c, sel);
    p->children[kept++] = *c;
  }
  p->n_children = kept;
}

/* Step 1 of a take: the projection tree for the selection (all fields when none are named):
 * top-level fields in request order, nested names pruning inside their top-level field. */
/* A map is read whole: a path into one (m.entries.key) selects the map, since entries without
 * both key and value are not a map. The outermost map above fld, else fld. */
static struct lnc_field *widen_to_map(struct lnc_field *fld, const struct lnc_field *root) {
  struct lnc_field *w = fld;
  for (struct lnc_field *a = fld->parent; a && a != root; a = a->parent)
    if (a->type == LNC_AT_MAP) w = a;
  return w;
}

static int build_projection(lnc_file *f, const struct lnc_colsel *sel, struct lnc_proj *root,
                            struct lnc_error *err) {
  *root = (struct lnc_proj){.field = &f->root};
  int rc = 0;
  if (sel->n == 0) {
    rc = proj_whole(root, &f->root);
    return rc ? lnc_errf(err, rc, "out of memory") : 0;
  }
  root->children = calloc(sel->n, sizeof *root->children);
  if (!root->children) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < sel->n; i++) {
    struct lnc_field *fld = selected_field(f, sel, i, err);
    if (!fld) return LNC_EINVAL;
    fld = widen_to_map(fld, &f->root);
    const struct lnc_field *top = fld;
    while (top->parent != &f->root) top = top->parent;
    size_t k = 0;
    while (k < root->n_children && root->children[k].field != top) k++;
    if (k == root->n_children) {
      root->n_children++;
      root->children[k].field = top;
      rc = fld == top ? proj_whole(&root->children[k], top) : proj_add_path(&root->children[k], fld);
    } else if (fld == top) {
      proj_free(&root->children[k]);
      rc = proj_whole(&root->children[k], top);
    } else if (root->children[k].n_children || root->children[k].field->column < 0) {
      rc = proj_add_path(&root->children[k], fld);
    }
    if (rc) return lnc_errf(err, rc, "out of memory");
  }
  if (sel->ids && sel->rename)
    for (size_t i = 0; i < root->n_children; i++) prune_unnamed(&root->children[i], sel);
  return 0;
}

/* The per-take scratch: sorted unique ids and the permutation back to request order, and per
 * column what is read, its depth and list count, and its rows before and after permuting. */
struct take_state {
  struct id_ord *ord;
  uint64_t *uniq;
  uint32_t *perm;
  size_t nu;
  bool identity;
  uint8_t *need;
  struct lnc_leafrows *rows, **final, *permuted;
  uint32_t *depth, *lists;
};

static int state_init(struct take_state *t, const lnc_file *f, size_t n, struct lnc_error *err) {
  size_t nc = f->n_columns ? f->n_columns : 1, ni = n ? n : 1;
  *t = (struct take_state){.ord = malloc(ni * sizeof *t->ord), .uniq = malloc(ni * sizeof *t->uniq), .perm = malloc(ni * sizeof *t->perm), .need = calloc(nc, 1), .rows = calloc(nc, sizeof *t->rows), .final = calloc(nc, sizeof *t->final), .depth = calloc(nc, sizeof *t->depth), .lists = calloc(nc, sizeof *t->lists), .permuted = calloc(nc, sizeof *t->permuted), .identity = true};
  if (!t->ord || !t->uniq || !t->perm || !t->need || !t->rows || !t->final || !t->depth ||
      !t->lists || !t->permuted)
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  return 0;
}

static void state_free(struct take_state *t, const lnc_file *f) {
  for (uint32_t c = 0; t->rows && t->need && c < f->n_columns; c++) {
    if (!t->need[c]) continue;
    lnc_leafrows_free(&t->rows[c]);
    if (t->permuted) lnc_leafrows_free(&t->permuted[c]);
  }
  free(t->ord);
  free(t->uniq);
  free(t->perm);
  free(t->need);
  free(t->rows);
  free(t->final);
  free(t->depth);
  free(t->lists);
  free(t->permuted);
}

/* Sorts a[0..n) by id, equal ids in position order (by_id's order), with tmp as scratch.
 * A least-significant-digit radix sort, a byte per pass, over only the bytes the largest id
 * uses (3 for a million rows), skipping a byte all ids share: qsort's comparisons through a
 * function pointer were ~15 % of a 1000-id request's CPU. Each pass is stable and a[] starts
 * in position order, so equal ids stay in it. Short lists take an insertion sort. */
enum { RADIX_MIN_IDS = 64 };
static void sort_id_ord(struct id_ord *a, struct id_ord *tmp, size_t n) {
  if (n < RADIX_MIN_IDS) {
    for (size_t i = 1; i < n; i++) {
      struct id_ord x = a[i];
      size_t j = i;
      for (; j > 0 && by_id(&a[j - 1], &x) > 0; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint64_t max = 0;
  for (size_t i = 0; i < n; i++) max |= a[i].id;
  struct id_ord *src = a, *dst = tmp;
  for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 8) {
    size_t at[257] = {0};
    for (size_t i = 0; i < n; i++) at[((src[i].id >> shift) & 0xFF) + 1]++;
    if (at[((src[0].id >> shift) & 0xFF) + 1] == n) continue; /* one byte value: order unchanged */
    for (unsigned b = 0; b < 256; b++) at[b + 1] += at[b];
    for (size_t i = 0; i < n; i++) dst[at[(src[i].id >> shift) & 0xFF]++] = src[i];
    struct id_ord *swap = src;
    src = dst;
    dst = swap;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
}

/* Step 2: sort and deduplicate the ids; perm maps each request position to its unique id. */
static int sort_ids(struct take_state *t, const uint64_t *ids, size_t n, struct lnc_error *err) {
  for (size_t i = 0; i < n; i++) {
    t->ord[i].id = ids[i];
    t->ord[i].pos = (uint32_t)i;
  }
  struct id_ord *tmp = n >= RADIX_MIN_IDS ? malloc(n * sizeof *tmp) : NULL;
  if (n >= RADIX_MIN_IDS && !tmp) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  sort_id_ord(t->ord, tmp, n);
  free(tmp);
  t->nu = 0;
  for (size_t i = 0; i < n; i++) {
    if (t->nu == 0 || t->uniq[t->nu - 1] != t->ord[i].id) t->uniq[t->nu++] = t->ord[i].id;
    t->perm[t->ord[i].pos] = (uint32_t)(t->nu - 1);
  }
  for (size_t i = 0; i < n; i++)
    if (t->perm[i] != i) t->identity = false;
  return 0;
}

/* Step 3: plan every page of every selected column, then read and decode them together. */
static int read_columns(lnc_file *f, const struct lnc_take_env *env, const struct lnc_proj *root,
                        struct take_state *t, size_t n, uint64_t max_bytes, uint64_t file_min,
                        struct lnc_take_stats *stats, struct lnc_error *err) {
  /* Scratch starts on this stack: a take of a few rows then allocates none (plans, page
   * jobs and read lists of a single-row take use well under this). */
  _Alignas(LNC_ARENA_BUF_ALIGN) unsigned char scratch[8192];
  struct lnc_arena arena;
  lnc_arena_init_buf(&arena, 0, scratch, sizeof scratch);
  struct job_list jobs = {.arena = &arena};
  int rc = 0;
  collect_columns(root, t->need);
  for (uint32_t c = 0; c < f->n_columns && !rc; c++) {
    if (!t->need[c]) continue;
    for (const struct lnc_field *x = f->columns[c].leaf; x && x->parent; x = x->parent) {
      t->depth[c]++;
      if (lnc_kind_is_list(x->type)) t->lists[c]++;
    }
    rc = plan_column(f, c, t->uniq, t->nu, &t->rows[c], &arena, env, max_bytes, file_min, stats, &jobs, err);
  }
  if (!rc)
    rc = run_jobs(f, &jobs, &arena, env, n, max_bytes, stats, err);
  else
    for (size_t k = 0; k < jobs.n; k++) lnc_page_release(&jobs.v[k]);
  lnc_arena_free(&arena);
  return rc;
}

/* Step 4: per column, blob bytes where asked, then the rows back in request order, each
 * column's ordered size checked against max_bytes (0 = none) before it is built. */
static int finish_columns(lnc_file *f, const struct lnc_take_env *env, struct take_state *t,
                          size_t n, int blobs, uint64_t max_bytes, struct lnc_take_stats *stats,
                          struct lnc_error *err) {
  uint64_t total = 0, items = 0;
  for (uint32_t c = 0; c < f->n_columns; c++) {
    if (!t->need[c]) continue;
    const struct lnc_field *leaf = f->columns[c].leaf;
    if (t->rows[c].n_rows != t->nu)
      return lnc_errf(err, LNC_ECORRUPT, "%s: column %u: pages do not cover the requested rows", f->name, c);
    if (leaf->blob && blobs == LNC_BLOBS_BYTES) {
      /* Blob bytes are read with plain blocking reads: not for a take that must not wait. */
      if (env && env->io && env->io->nowait)
        return lnc_errf(err, LNC_EAGAIN, "%s: blob bytes need the disk", f->name);
      /* The bytes of the distinct rows are part of the answer: what the columns before
       * left of max_bytes bounds what is read. */
      uint64_t left = max_bytes ? max_bytes - total : UINT64_MAX;
      int rc = lnc_blobs_to_bytes(f, leaf, &t->rows[c], left, stats, err);
      if (rc) return rc;
    }
    if (max_bytes) {
      uint64_t col = rows_bytes(leaf, &t->rows[c], t->identity ? NULL : t->perm, 0, n, &items);
      if (__builtin_add_overflow(total, col, &total) || total > max_bytes) return lnc_take_refuse(err, f->name, n, max_bytes, "bytes");
      if (items > lnc_take_max_items(max_bytes))
        return lnc_take_refuse(err, f->name, n, lnc_take_max_items(max_bytes), LNC_TAKE_ITEMS_TEXT);
    }
    if (t->identity) {
      t->final[c] = &t->rows[c];
    } else {
      int rc = lnc_leafrows_permute(&t->rows[c], t->perm, n, &t->permuted[c]);
      if (rc) return lnc_errf(err, rc, "out of memory");
      lnc_leafrows_free(&t->rows[c]);
      t->final[c] = &t->permuted[c];
    }
    if (!t->final[c]->has_def) {
      free(t->final[c]->def);
      t->final[c]->def = NULL;
    }
    if (!t->final[c]->has_rep) {
      free(t->final[c]->rep);
      t->final[c]->rep = NULL;
    }
  }
  return 0;
}

/* Step 5: a struct array with one child per output field, and its schema. */
static int assemble_output(lnc_file *f, const struct lnc_proj *root, struct take_state *t, size_t n,
                           int blobs, struct ArrowSchema *schema, struct ArrowArray *array,
                           struct lnc_error *err) {
  struct lnc_asm as = {.cols = t->final, .leaf_depth = t->depth, .leaf_lists = t->lists, .n_rows = n, .blobs = blobs, .file_map = f->src.map, .err = err};
  int rc = lnc_array_init(array, (int64_t)n, 0, 1, (int64_t)root->n_children);
  if (rc) return lnc_errf(err, rc, "out of memory");
  for (size_t i = 0; i < root->n_children && !rc; i++) {
    rc = lnc_assemble(&as, &root->children[i], array->children[i]);
    if (!rc && array->children[i]->length != (int64_t)n)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' produced %lld rows for %zu ids", f->name,
                    root->children[i].field->name, (long long)array->children[i]->length, n);
  }
  if (!rc) rc = lnc_proj_schema(root, blobs, schema, err);
  if (rc) {
    lnc_array_release(array);
    lnc_schema_release(schema);
  }
  return rc;
}

/* A take, as named steps: check the arguments and ids, build the projection, sort the ids,
 * read the columns, put them in request order, assemble. */
int lnc_take_env(lnc_file *f, const struct lnc_take_env *env, const uint64_t *ids, size_t n,
                 const struct lnc_colsel *cols, const struct lnc_take_options *opts,
                 struct ArrowSchema *schema, struct ArrowArray *array, struct lnc_take_stats *stats,
                 struct lnc_error *err) {
  /* Callers may pass no error struct (lance.h); the layouts below wrap an inner error's text
   * into their own, so they always get one (nanoarrow's ArrowErrorSet habit). */
  struct lnc_error local;
  if (!err) err = &local;
  int blobs = opts ? opts->blobs : LNC_BLOBS_BYTES;
  if (blobs != LNC_BLOBS_BYTES && blobs != LNC_BLOBS_DESCRIPTORS)
    return lnc_errf(err, LNC_EINVAL, "unknown blob mode %d", blobs);
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  if (n > UINT32_MAX) return lnc_errf(err, LNC_ELIMIT, "too many ids (%zu)", n);
  for (size_t i = 0; i < n; i++)
    if (ids[i] >= f->num_rows)
      return lnc_errf(err, LNC_ERANGE, "row id %llu is out of range: the file has %llu rows",
                      (unsigned long long)ids[i], (unsigned long long)f->num_rows);
  struct lnc_proj root;
  int rc = build_projection(f, cols, &root, err);
  for (size_t i = 0; i < root.n_children && !rc; i++) rc = check_servable(f, &root.children[i], n, err);
  if (rc) {
    proj_free(&root);
    return rc;
  }
  struct take_state t;
  rc = state_init(&t, f, n, err);
  if (!rc) {
    rc = sort_ids(&t, ids, n, err);
    if (!rc) rc = read_columns(f, env, &root, &t, n, opts ? opts->max_bytes : 0, opts ? opts->file_values_min : 0, stats, err);
  }
  if (!rc) rc = finish_columns(f, env, &t, n, blobs, opts ? opts->max_bytes : 0, stats, err);
  if (!rc) rc = assemble_output(f, &root, &t, n, blobs, schema, array, err);
  for (size_t i = 0; i < root.n_children && !rc; i++)
    rc = lnc_proj_rename(&root.children[i], cols, schema->children[i], err);
  if (rc) {
    lnc_array_release(array);
    lnc_schema_release(schema);
  }
  state_free(&t, f);
  proj_free(&root);
  return rc;
}
