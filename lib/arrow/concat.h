/* Concatenate Arrow C Data arrays of one schema and gather rows by index, for every type a
 * take can produce (null, bool, fixed width, var-width and large var-width, fixed-size
 * binary, list / large list / map, fixed-size list, struct; validity at every level).
 * Inputs are only read; outputs own all their memory and are freed by their release. */
#ifndef LNC_ARROW_CONCAT_H
#define LNC_ARROW_CONCAT_H
#include <stddef.h>
#include <stdint.h>
#include "../lance.h"

/* One output row: row `row` (logical, before the part's own offset) of part `part`. */
struct lnc_row_ref {
  uint32_t part;
  uint64_t row;
};

/* out[i] = parts[refs[i].part][refs[i].row] for i in [0, n). Every part must match `schema`;
 * refs are bounds-checked (LNC_EINVAL). The result has offset 0. Dictionary-encoded arrays
 * get one dictionary of the values gathered; unions are LNC_EUNSUPPORTED. */
int lnc_arrow_gather_multi(const struct ArrowSchema *schema, const struct ArrowArray *const *parts,
                           size_t nparts, const struct lnc_row_ref *refs, size_t n,
                           struct ArrowArray *out, struct lnc_error *err);

/* A lower bound of the bytes row `row` of a (logical) takes in Arrow's layout once gathered:
 * values, 4-byte offsets, its children's rows; a dictionary row its index only (the dictionary
 * is sent once), a boolean nothing (a list of them a byte per 8), validity nothing. For
 * refusing a gather before it runs (a request naming one large row many times) only when the
 * answer must exceed the limit. Saturates at UINT64_MAX. *items (when not NULL) grows by the
 * row's list and fixed-size-list items, which the gather references one by one. */
uint64_t lnc_arrow_row_bytes(const struct ArrowSchema *schema, const struct ArrowArray *a, uint64_t row,
                             uint64_t *items);

/* All rows of parts[0], then all of parts[1], ... */
int lnc_arrow_concat(const struct ArrowSchema *schema, const struct ArrowArray *const *parts,
                     size_t nparts, struct ArrowArray *out, struct lnc_error *err);

/* out[i] = src[idx[i]]; indices in any order, repeats allowed. */
int lnc_arrow_gather(const struct ArrowSchema *schema, const struct ArrowArray *src,
                     const uint64_t *idx, size_t n, struct ArrowArray *out,
                     struct lnc_error *err);

/* An array of `n` nulls of `schema`'s type (children sized accordingly, all null). */
int lnc_arrow_make_nulls(const struct ArrowSchema *schema, uint64_t n, struct ArrowArray *out,
                         struct lnc_error *err);

/* Deep copy of a schema (format, name, metadata, flags, children, dictionary); the copy owns
 * its memory. */
int lnc_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out,
                          struct lnc_error *err);


/* Builds a struct array (and schema) of `length` rows, no validity, from n moved children:
 * child_schemas[i] / child_arrays[i] are moved in (their release is set to NULL). On
 * failure the children are released. Used to assemble a take's output. */
int lnc_arrow_struct_wrap(size_t n, struct ArrowSchema *child_schemas,
                          struct ArrowArray *child_arrays, int64_t length,
                          struct ArrowSchema *schema, struct ArrowArray *array,
                          struct lnc_error *err);

#endif
