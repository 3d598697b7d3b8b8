/* Internal pieces of a take: the projection (which fields, pruned to the selected leaves)
 * and the assembly of per-leaf row streams into Arrow arrays. */
#ifndef LNC_TAKE_TAKE_H
#define LNC_TAKE_TAKE_H
#include "../layout/stream.h"
#include "../io/io.h"

/* Where a take reads from and what the search cache keeps (the engine fills this in). */
struct lnc_take_env {
  const struct lnc_io *io; /* NULL = pread */
  uint64_t repidx_max;     /* full-zip repetition indices kept up to this size */
};
/* Builds every page's search-cache state now (the engine's initialization phase), so takes
 * never modify f and many threads can share it. A column that cannot be prepared keeps its
 * error for takes that need it. *bytes = memory the file then holds. LNC_EIO/ENOMEM fail. */
int lnc_file_prepare(struct lnc_file *f, const struct lnc_take_env *env, struct lnc_take_stats *stats,
                     size_t *bytes);
/* The fields a take reads. By name (names): lnc_take's column paths. By Lance field id
 * (ids): how a dataset reads its data files. A rename changes only the manifest, so a data
 * file keeps the names it was written with; Lance matches a file's fields to the manifest's by
 * id, and so do we. rename(ctx, id) then gives each output field its name from the manifest
 * (NULL for a field the manifest no longer has: the take fails rather than return it).
 * n == 0: every field, by the file's names. */
struct lnc_colsel {
  const char *const *names;
  const int32_t *ids;
  size_t n;
  const char *(*rename)(void *ctx, int32_t id);
  void *ctx;
};
/* lnc_take_ex with an environment (NULL = pread, keep every index) and a column selection. */
int lnc_take_env(lnc_file *f, const struct lnc_take_env *env, const uint64_t *ids, size_t n,
                 const struct lnc_colsel *cols, const struct lnc_take_options *opts,
                 struct ArrowSchema *schema, struct ArrowArray *array, struct lnc_take_stats *stats,
                 struct lnc_error *err);

/* List items (levels or values of leaves under lists) an answer may hold under max_bytes.
 * Putting rows in request order costs 13-16 bytes of working memory per item
 * (lnc_leafrows_permute, the dataset gather's row references) whatever the item's own size,
 * so a bound on bytes alone let 4,000 copies of a 100,000-item list<bool> row (50 MB of
 * answer) take 6 GB. Items of 4 bytes or more are bounded by max_bytes / 4 already; smaller
 * ones by 2^24 (about 270 MB of working memory). Fixed-size lists of fixed-width items are
 * copied as one range per row and do not count. */
static inline uint64_t lnc_take_max_items(uint64_t max_bytes) {
  return max_bytes / 4 > ((uint64_t)1 << 24) ? max_bytes / 4 : (uint64_t)1 << 24;
}

/* A take (of file or dataset `name`, n ids) refused by its limit: LNC_ELIMIT, the message
 * "the n rows asked for hold over <limit> <unit>" naming LNC_TAKE_LIMIT_TEXT; unit is
 * "bytes" or LNC_TAKE_ITEMS_TEXT. */
int lnc_take_refuse(struct lnc_error *err, const char *name, size_t n, uint64_t limit, const char *unit);

/* A field in the output: the whole field, or a struct pruned to some children. */
struct lnc_proj {
  const struct lnc_field *field;
  struct lnc_proj *children; /* selected children, schema order */
  size_t n_children;
};

/* Leaf streams indexed by column, all holding the same rows in output order. */
struct lnc_asm {
  struct lnc_leafrows **cols; /* [n_columns]; NULL for columns not read */
  uint32_t *leaf_depth;       /* [n_columns]: layers of the column's leaf */
  uint32_t *leaf_lists;       /* [n_columns]: list fields on the leaf's path (= max rep) */
  uint64_t n_rows;
  int blobs;                    /* enum lnc_blob_mode */
  struct lnc_filemap *file_map; /* the file's mapping, for values left in it (lnc_valbuf.in_file) */
  struct lnc_error *err;
};

int lnc_assemble(struct lnc_asm *a, const struct lnc_proj *p, struct ArrowArray *out);
int lnc_proj_schema(const struct lnc_proj *p, int blobs, struct ArrowSchema *out, struct lnc_error *err);
/* Gives out (exported from p by lnc_proj_schema) the names sel->rename gives its fields'
 * ids; nothing to do without one. */
int lnc_proj_rename(const struct lnc_proj *p, const struct lnc_colsel *sel, struct ArrowSchema *out,
                    struct lnc_error *err);
/* Replaces a blob column's descriptors by the bytes they point to (blobs.c). LNC_ELIMIT,
 * before reading, once the blobs' sizes add up to more than max_bytes (UINT64_MAX: none). */
int lnc_blobs_to_bytes(struct lnc_file *f, const struct lnc_field *leaf, struct lnc_leafrows *rows, uint64_t max_bytes,
                       struct lnc_take_stats *st, struct lnc_error *err);
/* The fields a blob v2 column has when served as bytes: data (large_binary), uri (utf8). */
extern const struct lnc_field *const lnc_blob_bytes_fields[2];
/* The first column under p (the representative whose levels give p's slots). */
int lnc_proj_first_column(const struct lnc_proj *p);

#endif
