/* Lance file version 2.0 (footer 0.3): pages hold an ArrayEncoding tree, and every field,
 * parents included, has its own column (a struct's pages carry nothing, a list's pages carry
 * its offsets, the items live in the child's column). A take of one leaf column therefore
 * walks the leaf's ancestors: the list offsets of each list on the path locate the items one
 * layer down, and the leaf's own encoding gives the values. The walk produces the same
 * levels and values (struct lnc_leafrows, canonical def) as a 2.1 page, so assembly and
 * every output format are shared with 2.1/2.2.
 *
 * What a row costs (see docs/format-coverage.md): one read per dependent step — list offsets,
 * then binary end offsets, then the bytes — with every read of one step, for every row and
 * column of the request, in one batch. What a row needs to be located and is the same for
 * every request (each list page's first item, dictionaries) is prepared once into the
 * search cache. */
#ifndef LNC_LAYOUT_V20_H
#define LNC_LAYOUT_V20_H
#include "page.h"

/* Parses a 2.0 page's ArrayEncoding (the Any inside the page's DirectEncoding). */
int lnc_v20_parse_page(struct lnc_file *f, uint32_t col, uint32_t page, const uint8_t *data,
                       size_t len, struct lnc_error *err);
/* After every column is loaded and bound: the first item of each list page, and checks that
 * a list's items and its child column agree. */
int lnc_v20_link(struct lnc_file *f, struct lnc_error *err);

/* Page jobs (see page.h): one job per leaf column covers every page of the leaf and of its
 * ancestors; j->rows are the take's sorted top-level rows. */
int lnc_v20_plan(struct lnc_page_job *j);
int lnc_v20_advance(struct lnc_page_job *j);
int lnc_v20_decode(struct lnc_page_job *j);
void lnc_v20_release(struct lnc_page_job *j);
/* Builds the page's search-cache state (dictionary items) now. */
int lnc_v20_prepare(struct lnc_take_ctx *c, struct lnc_page *pg);

/* Human-readable tree for `lancectl inspect`, e.g. "Nullable(some, Flat(1), Flat(32))". */
int lnc_v20_describe(const struct lnc_page *pg, struct lnc_buf *out);
/* Reads a row of the leaf costs in the common case, for reports ("1", "2", "list+2"). */
const char *lnc_v20_reads_per_row(const struct lnc_page *pg);

#endif
