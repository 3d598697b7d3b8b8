/* Taking rows from one page: each layout (mini-block, full-zip, constant/all-null) turns a
 * sorted list of page-local rows into levels and values appended to a struct lnc_leafrows.
 * A page's search-cache state (chunk tables, dictionary, repetition index) is built on
 * first use and kept on the page. */
#ifndef LNC_LAYOUT_PAGE_H
#define LNC_LAYOUT_PAGE_H
#include "stream.h"
#include "../util/arena.h"
#include "../io/io.h"

struct lnc_take_ctx {
  struct lnc_file *f;
  uint32_t column, page;
  const struct lnc_field *leaf;
  uint32_t depth; /* layers the leaf's path must have */
  bool levels;    /* emit rep/def levels (path has a list or a nullable field) */
  struct lnc_arena *arena;
  struct lnc_take_stats *stats;
  struct lnc_error *err;
  const struct lnc_io *io; /* NULL = pread */
  uint64_t repidx_max;     /* keep full-zip repetition indices up to this size (bytes) */
  uint64_t max_items;      /* list slots a take may walk (lnc_take_max_items); 0: the layout's default */
  bool file_values;        /* the take may leave this column's values in the file (take.c decides) */
};

/* Builds the page's search-cache state (chunk tables, dictionary, repetition index) now
 * rather than on first take; a file whose pages are all prepared is read-only to takes. */
int lnc_page_prepare(struct lnc_take_ctx *c, struct lnc_page *pg);
/* The byte ranges lnc_page_prepare reads (mini-block chunk tables, dictionaries, repetition
 * indices; full-zip repetition indices; constant pages' buffers), up to max of them into out
 * (dst left NULL); 2.0 and blob pages name none. How a file in an object store fetches them
 * all in one batch before preparing its pages one by one. */
size_t lnc_page_init_ranges(const struct lnc_page *pg, struct lnc_read *out, size_t max);

/* Taking rows from a page is a job in three steps, so a request can gather the reads of all
 * its pages and columns into one batch per round:
 *   plan    - builds the search-cache state if missing, lists the reads of round 0;
 *   advance - called once the round's reads are done: lists the next round's reads (a
 *             full-zip page whose repetition index is not cached needs two) or none;
 *   decode  - appends the rows, in order, to out (called for every job, in job order, after
 *             all rounds, because pages of one column append to the same stream).
 * Memory for reads and plans comes from c.arena and lives until the take ends. */
struct lnc_page_job {
  struct lnc_take_ctx c;
  struct lnc_page *pg;
  const uint64_t *rows; /* sorted, unique, page-local */
  size_t n;
  struct lnc_leafrows *out;
  struct lnc_read *reads; /* this round's reads */
  size_t nreads;
  int round;
  void *plan; /* layout-specific */
};

/* Read rounds a page job may take. A 2.0 leaf under k lists needs a dependent read per list
 * level (each level's offsets locate the next one's), two more for strings (offsets, then
 * bytes) and one for a dictionary; schemas nest at most 64 deep (format/schema.c). A page
 * still asking for reads after this many is damaged. (It was 8: list^7<utf8> written by Lance
 * failed with "page reads did not settle".) */
#define LNC_PAGE_MAX_ROUNDS (64 + 8)

int lnc_page_plan(struct lnc_page_job *j);
int lnc_page_advance(struct lnc_page_job *j);
int lnc_page_decode(struct lnc_page_job *j);
/* Frees what a planned job holds outside the arena (decoded or not). */
void lnc_page_release(struct lnc_page_job *j);
/* All three steps for one page, reading each round at once. */
int lnc_page_take(struct lnc_take_ctx *c, struct lnc_page *pg, const uint64_t *rows, size_t n,
                  struct lnc_leafrows *out);

/* The buffers each layout's initialisation reads (for lnc_page_init_ranges): at most 3 indexes
 * into bufs. */
unsigned lnc_miniblock_init_bufs(const struct lnc_page *pg, uint32_t *bufs);
unsigned lnc_fullzip_init_bufs(const struct lnc_page *pg, uint32_t *bufs);
int lnc_miniblock_plan(struct lnc_page_job *j);
int lnc_miniblock_decode(struct lnc_page_job *j);
int lnc_fullzip_plan(struct lnc_page_job *j);
int lnc_fullzip_advance(struct lnc_page_job *j);
int lnc_fullzip_decode(struct lnc_page_job *j);
/* A full-zip job planned with c.file_values whose values could stay in the file (plain
 * variable-width bytes, no repetition, its index cached) has its row ranges but no reads
 * yet: true, with their bytes and whether the page cache holds the page's values (looked at
 * once a second at most). false: planned as usual. */
bool lnc_fullzip_file_pending(const struct lnc_page_job *j, uint64_t *bytes, bool *resident);
/* Lists a pending job's reads: the rows' heads only (control word, length prefix) when
 * in_file (the column's values go to the file), else whole rows. Any other job: nothing. */
int lnc_fullzip_commit(struct lnc_page_job *j, bool in_file);
int lnc_constpage_plan(struct lnc_page_job *j);
int lnc_constpage_decode(struct lnc_page_job *j);
int lnc_blob_plan(struct lnc_page_job *j);
int lnc_blob_advance(struct lnc_page_job *j);
int lnc_blob_decode(struct lnc_page_job *j);
void lnc_blob_release(struct lnc_page_job *j);

/* Shared helpers. */
int lnc_page_layers(struct lnc_take_ctx *c, const int *kinds, size_t n, struct lnc_layers *L);
/* Appends a level (when levels are on) and, for visible levels, a value (from vals[i]) or a
 * null placeholder when the level is not valid. */
int lnc_emit_level(struct lnc_take_ctx *c, const struct lnc_layers *L, struct lnc_leafrows *out,
                   uint16_t rep, uint16_t page_def, const struct lnc_values *vals, uint64_t i);
/* Error with the column/page context. */
int lnc_page_err(struct lnc_take_ctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
