/* Take engine (lib/cache/engine.c) proofs from its counters, never times: reads per row per
 * layout, one load per cold file (8 workers too), budget/LRU, descriptor bound, replaced,
 * deleted and corrupt files; every result is checked against plain lnc_take. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include "lance.h"
#include "support/support.h"

/* ---- fixtures and helpers ------------------------------------------------------------ */
/* <build>/tests/engtest.XXXXXX: on the repository's disk (not tmpfs); made and removed by
 * main, so the scratch dirs of failed tests (forked children) are removed too. */
static char *g_tmpbase;

/* Checked for presence at startup (a clear message instead of a failed assertion). */
static const char *const k_small[] = {"types21", "types22", "nested21", "nested22",
                                      "enc21", "enc22", "emb21"};
#define N_SMALL (sizeof k_small / sizeof k_small[0])

/* The data file of fixture `name` (tests/fixtures/index.json); looked up once per name. */
static const char *fixture(const char *name) {
  static char *paths[16];
  static const char *names[16];
  for (int i = 0; i < 16; i++) {
    if (names[i] && strcmp(names[i], name) == 0) return paths[i];
    if (!names[i]) {
      paths[i] = tsup_fixture_file(name);
      if (!paths[i] || access(paths[i], R_OK) != 0) {
        fprintf(stderr, "test_engine: fixture %s not found (run from the repository root)\n", name);
        abort();
      }
      names[i] = name;
      return paths[i];
    }
  }
  abort();
}

static uint64_t rng_state;
static uint64_t rnd(void) { return tsup_xorshift64(&rng_state); }

static const char *mode_name(int mode) { return mode == LNC_IO_DIRECT ? "direct" : "buffered"; }

struct eng {
  lnc_engine *e;
  lnc_worker *w;
};

static void eng_open(struct eng *g, int mode, uint64_t budget, uint32_t max_open, uint64_t repidx_max) {
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.io_mode = mode;
  if (budget) cfg.cache_budget = budget;
  cfg.max_open_files = max_open;
  cfg.repidx_max = repidx_max;
  struct lnc_error err = {0};
  int rc = lnc_engine_new(&cfg, &g->e, &err);
  ck_assert_msg(rc == 0, "lnc_engine_new: %s", err.message);
  rc = lnc_worker_new(g->e, &g->w, &err);
  ck_assert_msg(rc == 0, "lnc_worker_new: %s", err.message);
}

static void eng_close(struct eng *g) {
  lnc_worker_free(g->w);
  lnc_engine_free(g->e);
}

/* An engine take; returns its JSON (caller frees) or NULL with *rc and err set. */
static char *etake_rc(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                      const char *const *cols, size_t nc, struct lnc_take_stats *st, int *rc,
                      struct lnc_error *err) {
  struct ArrowSchema s;
  struct ArrowArray a;
  *rc = lnc_engine_take(w, path, ids, n, cols, nc, NULL, &s, &a, st, err);
  if (*rc) return NULL;
  char *j = tsup_json(&s, &a);
  a.release(&a);
  s.release(&s);
  return j;
}

static char *etake(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                   const char *const *cols, size_t nc, struct lnc_take_stats *st) {
  struct lnc_error err = {0};
  int rc;
  char *j = etake_rc(w, path, ids, n, cols, nc, st, &rc, &err);
  ck_assert_msg(j != NULL, "engine take from %s failed (%s): %s", path, lnc_code_name(rc), err.message);
  return j;
}

/* The reference: plain lnc_file_open + lnc_take (pread, no engine). */
static char *ref_take(const char *path, const uint64_t *ids, size_t n, const char *const *cols, size_t nc) {
  struct lnc_error err = {0};
  lnc_file *f;
  int rc = lnc_file_open(path, &f, &err);
  ck_assert_msg(rc == 0, "lnc_file_open %s: %s", path, err.message);
  struct ArrowSchema s;
  struct ArrowArray a;
  rc = lnc_take(f, ids, n, cols, nc, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "lnc_take %s: %s", path, err.message);
  char *j = tsup_json(&s, &a);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
  return j;
}

/* Takes ids through the engine, asserts the result equals the reference, returns the stats. */
static struct lnc_take_stats take_check(lnc_worker *w, const char *path, const char *ref_path,
                                        const uint64_t *ids, size_t n, const char *const *cols,
                                        size_t nc) {
  struct lnc_take_stats st = {0};
  char *got = etake(w, path, ids, n, cols, nc, &st);
  char *want = ref_take(ref_path, ids, n, cols, nc), msg[600];
  ck_assert_msg(tsup_body_eq(want, strlen(want), got, strlen(got), msg, sizeof msg),
                "%s: engine result differs from lnc_take on %s: %s", path, ref_path, msg);
  free(got);
  free(want);
  return st;
}

static void warm(lnc_worker *w, const char *path) {
  struct lnc_error err = {0};
  uint64_t rows = 0;
  int rc = lnc_engine_describe(w, path, NULL, NULL, &rows, NULL, NULL, &err);
  ck_assert_msg(rc == 0, "describe %s: %s", path, err.message);
  ck_assert_uint_gt(rows, 0);
}

static struct lnc_engine_stats estats(lnc_engine *e) {
  struct lnc_engine_stats s;
  lnc_engine_get_stats(e, &s);
  return s;
}

static char *mktmp(void) {
  char *p = tsup_path(g_tmpbase, "t.XXXXXX");
  ck_assert_ptr_nonnull(p);
  ck_assert_msg(mkdtemp(p) != NULL, "mkdtemp %s: %s", p, strerror(errno));
  return p;
}

static void copy_file(const char *src, const char *dst) {
  size_t len;
  uint8_t *d = tsup_read_file(src, &len);
  ck_assert_msg(d != NULL, "read %s", src);
  ck_assert_msg(tsup_write_file(dst, d, len) == 0, "write %s", dst);
  free(d);
}

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (de->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the DIR's own descriptor */
}

/* ---- 1. a single row of a mini-block column is one read -------------------------------- */
START_TEST(test_miniblock_one_row_one_read) {
  int mode = _i;
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  const char *core = fixture("core21");
  warm(g.w, core);
  /* Fixed width (bitpacked, Flat), nullable (def levels), dictionary strings, FSST strings,
   * plain variable binary, bool, struct fields. */
  static const char *const cols[] = {"i64", "i8", "f64", "i32_n", "s", "s_n", "bin_n", "b", "st", "u32"};
  static const uint64_t rows[] = {0, 1, 1023, 1024, 20999, 21000, 33333, 50001, 89999, 99999, 100036};
  for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
      /* "st" is two leaf columns (st.a, st.b): one read each; under O_DIRECT the two chunks
       * can fall in the same or neighbouring 4 KiB blocks and merge into one. */
      uint64_t want = strcmp(cols[c], "st") == 0 ? 2 : 1;
      struct lnc_take_stats st = take_check(g.w, core, core, &rows[r], 1, &cols[c], 1);
      if (want == 2 && mode == LNC_IO_DIRECT && st.reads == 1) want = 1;
      ck_assert_msg(st.reads == want, "[%s] %s row %llu: %llu reads, want %llu", mode_name(mode), cols[c],
                    (unsigned long long)rows[r], (unsigned long long)st.reads, (unsigned long long)want);
      ck_assert_uint_eq(st.cache_hits, 1);
      ck_assert_uint_eq(st.cache_loads, 0);
    }
  /* List columns: a row that continues into later chunks needs those chunks too, but they
   * follow the first one directly in the file, so the reads merge: one read for every row.
   * Every 37th row of the file (2,704 takes) covers rows that span chunk boundaries. */
  static const char *const lcols[] = {"l", "l_n"};
  for (size_t c = 0; c < 2; c++)
    for (uint64_t r = 0; r < 100037; r += 37) {
      struct lnc_take_stats st = {0};
      char *j = etake(g.w, core, &r, 1, &lcols[c], 1, &st);
      free(j);
      ck_assert_msg(st.reads == 1, "[%s] %s row %llu: %llu reads", mode_name(mode), lcols[c],
                    (unsigned long long)r, (unsigned long long)st.reads);
    }
  /* ...and the list results are right (a sample, against lnc_take). */
  uint64_t ids[64];
  rng_state = 0x1234567ull;
  for (int i = 0; i < 64; i++) ids[i] = rnd() % 100037;
  take_check(g.w, core, core, ids, 64, lcols, 2);
  eng_close(&g);
}
END_TEST

/* ---- 2. random rows: at most one read per distinct chunk -------------------------------- */
struct page_chunks {
  uint64_t row_start, rows, vpc; /* values per chunk (all but the page's last chunk) */
};

/* Pages of column `field` from the engine's describe JSON; checks the chunk count implied by
 * the values encoding (InlineBitpacking: 1024 values a chunk, Flat(64): 512) against the
 * chunk-metadata buffer (2-byte words without large chunks). */
static size_t column_pages(lnc_worker *w, const char *path, const char *field, struct page_chunks *out,
                           size_t cap) {
  struct lnc_buf b = {0};
  struct lnc_error err = {0};
  int rc = lnc_engine_describe(w, path, &b, NULL, NULL, NULL, NULL, &err);
  ck_assert_msg(rc == 0, "describe: %s", err.message);
  json_error_t je;
  json_t *root = json_loadb((const char *)b.data, b.len, 0, &je);
  ck_assert_msg(root != NULL, "describe JSON: %s", je.text);
  lnc_buf_free(&b);
  json_t *cols = json_object_get(root, "columns"), *col = NULL;
  for (size_t i = 0; i < json_array_size(cols); i++)
    if (strcmp(json_string_value(json_object_get(json_array_get(cols, i), "field")), field) == 0)
      col = json_array_get(cols, i);
  ck_assert_msg(col != NULL, "no column %s", field);
  json_t *pages = json_object_get(col, "pages");
  size_t np = json_array_size(pages);
  ck_assert_uint_le(np, cap);
  for (size_t p = 0; p < np; p++) {
    json_t *pg = json_array_get(pages, p);
    json_t *enc = json_object_get(pg, "encoding");
    ck_assert_str_eq(json_string_value(json_object_get(enc, "layout")), "mini_block");
    ck_assert(json_is_false(json_object_get(enc, "large_chunks")));
    ck_assert_uint_eq(json_integer_value(json_object_get(enc, "repetition_index_depth")), 0);
    ck_assert(json_is_true(json_object_get(pg, "cached")));
    const char *values = json_string_value(json_object_get(enc, "values"));
    uint64_t vpc = strncmp(values, "InlineBitpacking(", 17) == 0 ? 1024
                   : strcmp(values, "Flat(64)") == 0             ? 512
                   : strcmp(values, "Flat(32)") == 0             ? 1024
                                                                 : 0;
    ck_assert_msg(vpc, "%s page %zu: values %s has no known chunk size", field, p, values);
    out[p].row_start = (uint64_t)json_integer_value(json_object_get(pg, "row_start"));
    out[p].rows = (uint64_t)json_integer_value(json_object_get(pg, "rows"));
    out[p].vpc = vpc;
    uint64_t meta = (uint64_t)json_integer_value(json_array_get(json_object_get(pg, "buffers"), 0));
    ck_assert_msg(meta / 2 == (out[p].rows + vpc - 1) / vpc, "%s page %zu: %llu chunks for %llu rows at %llu a chunk",
                  field, p, (unsigned long long)(meta / 2), (unsigned long long)out[p].rows,
                  (unsigned long long)vpc);
  }
  json_decref(root);
  return np;
}

static void random_rows_case(struct eng *g, int mode, const char *field, size_t n, uint64_t seed) {
  const char *core = fixture("core21");
  struct page_chunks pages[16];
  size_t np = column_pages(g->w, core, field, pages, 16);
  uint64_t total = pages[np - 1].row_start + pages[np - 1].rows;
  uint64_t *ids = malloc(n * sizeof *ids);
  /* touched[p][k] */
  uint8_t *touched = calloc(np * 128, 1);
  ck_assert(ids && touched);
  rng_state = seed;
  for (size_t i = 0; i < n; i++) {
    ids[i] = rnd() % total;
    size_t p = 0;
    while (ids[i] >= pages[p].row_start + pages[p].rows) p++;
    uint64_t k = (ids[i] - pages[p].row_start) / pages[p].vpc;
    ck_assert_uint_lt(k, 128);
    touched[p * 128 + k] = 1;
  }
  uint64_t distinct = 0, runs = 0;
  for (size_t p = 0; p < np; p++)
    for (size_t k = 0; k < 128; k++) {
      distinct += touched[p * 128 + k];
      if (touched[p * 128 + k] && (k == 0 || !touched[p * 128 + k - 1])) runs++;
    }
  const char *cols[1] = {field};
  struct lnc_take_stats st = take_check(g->w, core, core, ids, n, cols, 1);
  ck_assert_msg(st.reads >= 1 && st.reads <= distinct, "[%s] %s, %zu rows: %llu reads for %llu distinct chunks",
                mode_name(mode), field, n, (unsigned long long)st.reads, (unsigned long long)distinct);
  if (mode == LNC_IO_BUFFERED) {
    /* Buffered reads merge only when they touch: chunks next to each other in a page are one
     * read, anything else is not; a page's last and the next page's first chunk may touch. */
    ck_assert_msg(st.reads <= runs && st.reads + (np - 1) >= runs,
                  "[buffered] %s, %zu rows: %llu reads for %llu runs of adjacent chunks in %zu pages", field, n,
                  (unsigned long long)st.reads, (unsigned long long)runs, np);
  }
  free(ids);
  free(touched);
}

START_TEST(test_miniblock_random_rows) {
  int mode = _i;
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  warm(g.w, fixture("core21"));
  random_rows_case(&g, mode, "i64", 1000, 0xC0FFEEull);
  random_rows_case(&g, mode, "f64", 1000, 0xBEEFull);
  random_rows_case(&g, mode, "i64", 30, 0x5EEDull);
  random_rows_case(&g, mode, "f64", 30, 0xFACEull);
  random_rows_case(&g, mode, "i32_n", 200, 0xABCDull);
  eng_close(&g);
}
END_TEST

/* Row i of a take is the row of ids[i], whatever the order and repeats: each row of a batch
 * of 1000 ids (repeats, runs, descending stretches, the first and last row) equals a take of
 * that id alone. Independent of the batch's sort (which both sides would share otherwise);
 * below 64 ids the sort is another one, so both sizes are checked. */
static void request_order_case(lnc_worker *w, const char *core, size_t n, uint64_t seed) {
  const char *cols[3] = {"i64", "s_n", "st"};
  struct lnc_error err = {0};
  uint64_t total = 0;
  ck_assert_int_eq(lnc_engine_describe(w, core, NULL, NULL, &total, NULL, NULL, &err), 0);
  uint64_t *ids = malloc(n * sizeof *ids);
  ck_assert_ptr_nonnull(ids);
  rng_state = seed;
  for (size_t i = 0; i < n; i++) {
    switch (rnd() % 4) {
    case 0: ids[i] = rnd() % 40; break;                                /* many repeats */
    case 1: ids[i] = i ? ids[i - 1] : total - 1; break;                /* a run of one id */
    case 2: ids[i] = i ? (ids[i - 1] ? ids[i - 1] - 1 : 0) : 0; break; /* descending */
    default: ids[i] = rnd() % total;
    }
  }
  char *batch = etake(w, core, ids, n, cols, 3, NULL);
  json_t *b = json_loads(batch, 0, NULL), *rows = json_object_get(b, "rows");
  ck_assert_uint_eq(json_array_size(rows), n);
  for (size_t i = 0; i < n; i++) {
    char *one = etake(w, core, &ids[i], 1, cols, 3, NULL);
    json_t *o = json_loads(one, 0, NULL);
    ck_assert_msg(json_equal(json_array_get(rows, i), json_array_get(json_object_get(o, "rows"), 0)),
                  "row %zu (id %llu) differs from a take of that id alone", i, (unsigned long long)ids[i]);
    json_decref(o);
    free(one);
  }
  json_decref(b);
  free(batch);
  free(ids);
}

START_TEST(test_request_order_kept) {
  struct eng g;
  eng_open(&g, LNC_IO_BUFFERED, 0, 0, UINT64_MAX);
  const char *core = fixture("core21");
  warm(g.w, core);
  request_order_case(g.w, core, 1000, 0x0DDBA11ull);
  request_order_case(g.w, core, 50, 0xD1CEull);
  eng_close(&g);
}
END_TEST

/* ---- 3. full-zip fixed width: an embedding row is one read ------------------------------ */
START_TEST(test_fullzip_fixed) {
  int mode = _i;
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  const char *emb = fixture("emb21");
  warm(g.w, emb);
  static const char *const cols[] = {"emb", "emb_n"};
  for (size_t c = 0; c < 2; c++) {
    for (uint64_t r = 0; r < 500; r += 7) {
      struct lnc_take_stats st = take_check(g.w, emb, emb, &r, 1, &cols[c], 1);
      ck_assert_msg(st.reads == 1, "[%s] %s row %llu: %llu reads", mode_name(mode), cols[c],
                    (unsigned long long)r, (unsigned long long)st.reads);
      ck_assert_uint_ge(st.bytes_read, 512);
    }
    /* Rows 50 apart are >= 25 KB apart: no merging even at 4 KiB alignment. */
    uint64_t far[10];
    for (int i = 0; i < 10; i++) far[i] = (uint64_t)(9 - i) * 50 + 3;
    struct lnc_take_stats st = take_check(g.w, emb, emb, far, 10, &cols[c], 1);
    ck_assert_msg(st.reads == 10, "[%s] %s, 10 far rows: %llu reads", mode_name(mode), cols[c],
                  (unsigned long long)st.reads);
    /* Ten neighbouring rows touch: one read. */
    uint64_t near[10];
    for (int i = 0; i < 10; i++) near[i] = 200 + (uint64_t)i;
    st = take_check(g.w, emb, emb, near, 10, &cols[c], 1);
    ck_assert_msg(st.reads == 1, "[%s] %s, 10 adjacent rows: %llu reads", mode_name(mode), cols[c],
                  (unsigned long long)st.reads);
  }
  eng_close(&g);
}
END_TEST

/* ---- 4. full-zip variable width: one read per row with the rep index cached, two without -- */
START_TEST(test_fullzip_variable) {
  int mode = _i;
  /* long_s: ~38 bytes a row (FSST); rows 333 apart are >= 8 KiB apart, so their data reads
   * never share or touch a 4 KiB block. Their index entries (2 bytes each, 666 bytes apart in a
   * 2,002-byte index) do touch under O_DIRECT alignment. */
  static const uint64_t rows[] = {999, 0, 666, 333};
  const size_t k = 4;
  static const char *const fixtures[] = {"enc21", "enc22"};
  for (int fx = 0; fx < 2; fx++) {
    const char *path = fixture(fixtures[fx]);
    static const char *const cols[] = {"long_s", "fz_s", "huge_s"};
    for (size_t c = 0; c < 3; c++) {
      struct eng cached, uncached;
      eng_open(&cached, mode, 0, 0, UINT64_MAX);
      eng_open(&uncached, mode, 0, 0, 0);
      warm(cached.w, path);
      warm(uncached.w, path);
      /* One row: 1 read vs 2 (entry pair, then the row). */
      for (size_t i = 0; i < k; i++) {
        struct lnc_take_stats a = take_check(cached.w, path, path, &rows[i], 1, &cols[c], 1);
        struct lnc_take_stats b = take_check(uncached.w, path, path, &rows[i], 1, &cols[c], 1);
        ck_assert_msg(a.reads == 1 && b.reads == 2, "[%s] %s %s row %llu: %llu reads cached, %llu uncached",
                      mode_name(mode), fixtures[fx], cols[c], (unsigned long long)rows[i],
                      (unsigned long long)a.reads, (unsigned long long)b.reads);
      }
      /* k rows at once. */
      struct lnc_take_stats a = take_check(cached.w, path, path, rows, k, &cols[c], 1);
      struct lnc_take_stats b = take_check(uncached.w, path, path, rows, k, &cols[c], 1);
      if (mode == LNC_IO_BUFFERED) {
        ck_assert_msg(a.reads == k && b.reads == 2 * k, "[buffered] %s %s: %llu reads cached, %llu uncached for %zu rows",
                      fixtures[fx], cols[c], (unsigned long long)a.reads, (unsigned long long)b.reads, k);
      } else {
        /* Direct: rows in distinct blocks (long_s) are k reads; fz_s/huge_s rows may share
         * blocks. Uncached adds one index round, whose entries merge into 1-2 reads. */
        if (strcmp(cols[c], "long_s") == 0) ck_assert_uint_eq(a.reads, k);
        ck_assert_msg(a.reads >= 1 && a.reads <= k && b.reads >= a.reads + 1 && b.reads <= a.reads + k,
                      "[direct] %s %s: %llu reads cached, %llu uncached for %zu rows", fixtures[fx], cols[c],
                      (unsigned long long)a.reads, (unsigned long long)b.reads, k);
      }
      /* The uncached engine keeps no index: its search cache is smaller. */
      struct lnc_engine_stats sa = estats(cached.e), sb = estats(uncached.e);
      ck_assert_uint_lt(sb.resident_bytes, sa.resident_bytes);
      eng_close(&cached);
      eng_close(&uncached);
    }
  }
}
END_TEST

/* ---- 5. a cold file's initialization reads happen once ---------------------------------- */
START_TEST(test_cold_then_warm) {
  int mode = _i;
  static const char *const names[] = {"core21", "enc21", "nested22", "emb21"};
  for (size_t f = 0; f < 4; f++) {
    const char *path = fixture(names[f]);
    struct eng g;
    eng_open(&g, mode, 0, 0, UINT64_MAX);
    uint64_t ids[] = {5, 400, 17, 499};
    struct lnc_take_stats s1 = take_check(g.w, path, path, ids, 4, NULL, 0);
    ck_assert_uint_eq(s1.cache_loads, 1);
    ck_assert_uint_eq(s1.cache_misses, 1);
    ck_assert_uint_eq(s1.cache_hits, 0);
    ck_assert_uint_gt(s1.reads, 0);
    struct lnc_take_stats s2 = take_check(g.w, path, path, ids, 4, NULL, 0);
    struct lnc_take_stats s3 = take_check(g.w, path, path, ids, 4, NULL, 0);
    ck_assert_uint_eq(s2.cache_loads, 0);
    ck_assert_uint_eq(s2.cache_misses, 0);
    ck_assert_uint_eq(s2.cache_hits, 1);
    ck_assert_uint_eq(s3.cache_hits, 1);
    ck_assert_msg(s2.reads == s3.reads && s2.bytes_read == s3.bytes_read,
                  "[%s] %s: warm takes differ: %llu vs %llu reads", mode_name(mode), names[f],
                  (unsigned long long)s2.reads, (unsigned long long)s3.reads);
    ck_assert_msg(s2.reads < s1.reads, "[%s] %s: warm %llu reads, cold %llu", mode_name(mode), names[f],
                  (unsigned long long)s2.reads, (unsigned long long)s1.reads);
    ck_assert_uint_eq(s2.bytes_decoded, s1.bytes_decoded);
    struct lnc_engine_stats es = estats(g.e);
    ck_assert_uint_eq(es.cache_loads, 1);
    ck_assert_uint_eq(es.cache_misses, 1);
    ck_assert_uint_eq(es.cache_hits, 2);
    ck_assert_uint_eq(es.takes, 3);
    ck_assert_uint_eq(es.rows, 12);
    ck_assert_uint_eq(es.reads, s1.reads + s2.reads + s3.reads);
    ck_assert_uint_eq(es.files_cached, 1);
    ck_assert_uint_eq(es.open_files, 1);
    ck_assert_uint_gt(es.resident_bytes, 0);
    eng_close(&g);
  }
}
END_TEST

/* ---- 6. eight workers on one cold file: one load --------------------------------------- */
#define NTHREADS 8
struct conc {
  lnc_engine *e;
  const char *path;
  pthread_barrier_t *bar;
  const uint64_t *ids;
  size_t n;
  char *json;
  struct lnc_take_stats st;
  int rc;
  char msg[512];
};

static void *conc_main(void *arg) {
  struct conc *c = arg;
  struct lnc_error err = {0};
  lnc_worker *w;
  c->rc = lnc_worker_new(c->e, &w, &err);
  pthread_barrier_wait(c->bar);
  if (c->rc) {
    snprintf(c->msg, sizeof c->msg, "%s", err.message);
    return NULL;
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  c->rc = lnc_engine_take(w, c->path, c->ids, c->n, NULL, 0, NULL, &s, &a, &c->st, &err);
  if (c->rc)
    snprintf(c->msg, sizeof c->msg, "%s", err.message);
  else {
    c->json = tsup_json_try(&s, &a, &err);
    a.release(&a);
    s.release(&s);
  }
  lnc_worker_free(w);
  return NULL;
}

START_TEST(test_concurrent_single_load) {
  int mode = _i;
  const char *path = fixture("core21");
  uint64_t ids[100];
  rng_state = 0x77ull;
  for (int i = 0; i < 100; i++) ids[i] = rnd() % 100037;
  char *want = ref_take(path, ids, 100, NULL, 0);
  for (int round = 0; round < 3; round++) {
    struct eng g;
    eng_open(&g, mode, 0, 0, UINT64_MAX);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, NTHREADS);
    struct conc c[NTHREADS];
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
      c[i] = (struct conc){.e = g.e, .path = path, .bar = &bar, .ids = ids, .n = 100};
      ck_assert_int_eq(pthread_create(&t[i], NULL, conc_main, &c[i]), 0);
    }
    uint64_t loads = 0, hits = 0, misses = 0;
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
      ck_assert_msg(c[i].rc == 0, "thread %d: %s", i, c[i].msg);
      ck_assert_ptr_nonnull(c[i].json);
      ck_assert_msg(strcmp(c[i].json, want) == 0, "thread %d: result differs", i);
      loads += c[i].st.cache_loads;
      hits += c[i].st.cache_hits;
      misses += c[i].st.cache_misses;
      free(c[i].json);
    }
    pthread_barrier_destroy(&bar);
    struct lnc_engine_stats es = estats(g.e);
    ck_assert_uint_eq(es.cache_loads, 1);
    ck_assert_uint_eq(es.cache_misses, 1);
    ck_assert_uint_eq(es.cache_hits, NTHREADS - 1);
    ck_assert_uint_eq(loads, 1);
    ck_assert_uint_eq(misses, 1);
    ck_assert_uint_eq(hits, NTHREADS - 1);
    ck_assert_uint_eq(es.takes, NTHREADS);
    ck_assert_uint_eq(es.files_cached, 1);
    ck_assert_uint_eq(es.open_files, 1);
    eng_close(&g);
  }
  free(want);
}
END_TEST

/* ---- 7. the memory budget --------------------------------------------------------------- */
#define NBUDGET 30
/* types21 and types22: different files (2.1 / 2.2) of nearly the same resident size (~73 KB;
 * the other small fixtures range from 2 KB to 1.5 MB), so "3 files" is a meaningful budget. */
static const char *const k_budget_src[] = {"types21", "types22"};
#define N_BSRC 2
struct budget_dir {
  char *dir;
  char *names[NBUDGET];     /* <dir>/fNN.lance */
  const char *src[NBUDGET]; /* the fixture each is a copy of */
  uint64_t resident[N_BSRC];
  uint64_t max_resident, min_resident;
};

static void budget_dir_make(struct budget_dir *b, int mode) {
  b->dir = mktmp();
  for (int i = 0; i < NBUDGET; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "f%02d.lance", i);
    b->names[i] = tsup_path(b->dir, nm);
    b->src[i] = fixture(k_budget_src[i % N_BSRC]);
    copy_file(b->src[i], b->names[i]);
  }
  /* One file's resident size, measured alone. */
  b->max_resident = 0;
  b->min_resident = UINT64_MAX;
  for (size_t f = 0; f < N_BSRC; f++) {
    struct eng g;
    eng_open(&g, mode, 0, 0, UINT64_MAX);
    warm(g.w, b->names[f]);
    b->resident[f] = estats(g.e).resident_bytes;
    ck_assert_uint_gt(b->resident[f], 0);
    if (b->resident[f] > b->max_resident) b->max_resident = b->resident[f];
    if (b->resident[f] < b->min_resident) b->min_resident = b->resident[f];
    eng_close(&g);
  }
}

static void budget_dir_free(struct budget_dir *b) {
  for (int i = 0; i < NBUDGET; i++) free(b->names[i]);
  tsup_rmtree(b->dir);
  free(b->dir);
}

static const uint64_t k_ids[] = {0, 123, 499, 7, 7};

START_TEST(test_budget) {
  int mode = _i;
  struct budget_dir b;
  budget_dir_make(&b, mode);
  uint64_t budget = 3 * b.max_resident;
  ck_assert_uint_gt(NBUDGET * b.min_resident, budget); /* the files cannot all fit */
  struct eng g;
  eng_open(&g, mode, budget, 0, UINT64_MAX);
  uint64_t sum_resident_by_hand = 0;
  for (int i = 0; i < NBUDGET; i++) {
    struct lnc_take_stats st = take_check(g.w, b.names[i], b.src[i], k_ids, 5, NULL, 0);
    ck_assert_uint_eq(st.cache_loads, 1);
    struct lnc_engine_stats es = estats(g.e);
    ck_assert_msg(es.resident_bytes <= budget, "after f%02d: %llu resident > budget %llu", i,
                  (unsigned long long)es.resident_bytes, (unsigned long long)budget);
    ck_assert_uint_eq(es.budget_bytes, budget);
    ck_assert_uint_eq(es.open_files, es.files_cached); /* nothing in flight */
    ck_assert_uint_ge(es.files_cached, 1);             /* the file just loaded fits */
    sum_resident_by_hand += b.resident[i % N_BSRC];
  }
  struct lnc_engine_stats es = estats(g.e);
  ck_assert_uint_gt(es.cache_evictions, 0);
  ck_assert_uint_eq(es.cache_loads, NBUDGET);
  ck_assert_uint_eq(es.cache_evictions + es.files_cached, NBUDGET);
  ck_assert_uint_lt(es.resident_bytes, sum_resident_by_hand);
  /* The first files were evicted: taking from them again reloads them transparently, with
   * the right rows. Of f00..f09 at most the files cached now can be hits (which ones is the
   * LRU's business, checked in test_budget_lru_keeps_hot_file). */
  uint64_t cached_before = es.files_cached;
  for (int i = 0; i < 10; i++) {
    take_check(g.w, b.names[i], b.src[i], k_ids, 5, NULL, 0);
    ck_assert_uint_le(estats(g.e).resident_bytes, budget);
  }
  ck_assert_uint_ge(estats(g.e).cache_loads, NBUDGET + 10 - cached_before);
  /* Shrinking the budget evicts down to it. */
  uint64_t ev0 = estats(g.e).cache_evictions;
  lnc_engine_set_budget(g.e, b.max_resident);
  es = estats(g.e);
  ck_assert_uint_le(es.resident_bytes, b.max_resident);
  ck_assert_uint_gt(es.cache_evictions, ev0);
  ck_assert_uint_eq(es.budget_bytes, b.max_resident);
  ck_assert_uint_eq(es.open_files, es.files_cached);
  lnc_engine_set_budget(g.e, 1);
  es = estats(g.e);
  ck_assert_uint_eq(es.resident_bytes, 0);
  ck_assert_uint_eq(es.files_cached, 0);
  ck_assert_uint_eq(es.open_files, 0);
  /* A budget smaller than any file: every take loads, serves and drops the file. */
  for (int i = 0; i < 4; i++) {
    struct lnc_take_stats st = take_check(g.w, b.names[0], b.src[0], k_ids, 5, NULL, 0);
    ck_assert_uint_eq(st.cache_loads, 1);
    es = estats(g.e);
    ck_assert_uint_eq(es.resident_bytes, 0);
    ck_assert_uint_eq(es.open_files, 0);
  }
  /* Growing it back caches again. */
  lnc_engine_set_budget(g.e, budget);
  take_check(g.w, b.names[1], b.src[1], k_ids, 5, NULL, 0);
  struct lnc_take_stats st = take_check(g.w, b.names[1], b.src[1], k_ids, 5, NULL, 0);
  ck_assert_uint_eq(st.cache_hits, 1);
  eng_close(&g);
  budget_dir_free(&b);
}
END_TEST

/* LRU by file: a file used before every load of another file is always the most recently used
 * one and must never be the one evicted while the budget holds two files or more. */
START_TEST(test_budget_lru_keeps_hot_file) {
  int mode = _i;
  struct budget_dir b;
  budget_dir_make(&b, mode);
  uint64_t budget = 3 * b.max_resident;
  struct eng g;
  eng_open(&g, mode, budget, 0, UINT64_MAX);
  /* Each of several hot files in turn (different names land in different cache shards). */
  for (int hot = 0; hot < 6; hot++) {
    lnc_engine_set_budget(g.e, 1); /* start empty */
    lnc_engine_set_budget(g.e, budget);
    take_check(g.w, b.names[hot], b.src[hot], k_ids, 5, NULL, 0);
    for (int i = 6; i < NBUDGET; i++) {
      take_check(g.w, b.names[i], b.src[i], k_ids, 5, NULL, 0);
      struct lnc_take_stats st = take_check(g.w, b.names[hot], b.src[hot], k_ids, 5, NULL, 0);
      ck_assert_msg(st.cache_hits == 1,
                    "hot file f%02d (used before every other take) was evicted when f%02d was loaded", hot, i);
    }
  }
  eng_close(&g);
  budget_dir_free(&b);
}
END_TEST

/* Workers taking from 30 files under a 3-file budget at once: every result right, the budget
 * held afterwards, every file accounted for (evictions racing with readers). */
struct stress {
  lnc_engine *e;
  struct budget_dir *b;
  char **want;
  uint64_t seed;
  int failures;
  char msg[600];
};

static void *stress_main(void *arg) {
  struct stress *s = arg;
  struct lnc_error err = {0};
  lnc_worker *w;
  if (lnc_worker_new(s->e, &w, &err)) {
    s->failures++;
    snprintf(s->msg, sizeof s->msg, "%s", err.message);
    return NULL;
  }
  uint64_t x = s->seed;
  for (int it = 0; it < 150; it++) {
    int i = (int)(tsup_xorshift64(&x) % NBUDGET);
    struct ArrowSchema sc;
    struct ArrowArray a;
    int rc = lnc_engine_take(w, s->b->names[i], k_ids, 5, NULL, 0, NULL, &sc, &a, NULL, &err);
    if (rc) {
      s->failures++;
      snprintf(s->msg, sizeof s->msg, "%s", err.message);
      continue;
    }
    char *got = tsup_json_try(&sc, &a, &err);
    if (!got || strcmp(got, s->want[i]) != 0) {
      s->failures++;
      snprintf(s->msg, sizeof s->msg, "f%02d: wrong result", i);
    }
    free(got);
    a.release(&a);
    sc.release(&sc);
  }
  lnc_worker_free(w);
  return NULL;
}

START_TEST(test_budget_concurrent) {
  int mode = _i;
  struct budget_dir b;
  budget_dir_make(&b, mode);
  uint64_t budget = 3 * b.max_resident;
  char *want[NBUDGET];
  for (int i = 0; i < NBUDGET; i++) want[i] = ref_take(b.src[i], k_ids, 5, NULL, 0);
  struct eng g;
  eng_open(&g, mode, budget, 6, UINT64_MAX);
  struct stress s[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    s[i] = (struct stress){.e = g.e, .b = &b, .want = want, .seed = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)};
    ck_assert_int_eq(pthread_create(&t[i], NULL, stress_main, &s[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++) ck_assert_msg(s[i].failures == 0, "thread %d: %d failures: %s", i, s[i].failures, s[i].msg);
  struct lnc_engine_stats es = estats(g.e);
  ck_assert_uint_le(es.resident_bytes, budget);
  ck_assert_uint_le(es.open_files, 6);
  ck_assert_uint_eq(es.open_files, es.files_cached);
  ck_assert_uint_eq(es.takes, 600);
  ck_assert_uint_eq(es.cache_hits + es.cache_misses, 600);
  ck_assert_uint_gt(es.cache_evictions, 0);
  for (int i = 0; i < NBUDGET; i++) free(want[i]);
  eng_close(&g);
  budget_dir_free(&b);
}
END_TEST

/* ---- 8. the open-file bound --------------------------------------------------------------- */
START_TEST(test_max_open_files) {
  int mode = _i;
  struct budget_dir b;
  budget_dir_make(&b, mode);
  int fds_before = count_fds();
  struct eng g;
  eng_open(&g, mode, 0, 4, UINT64_MAX);
  int fds0 = count_fds();
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < 10; i++) {
      take_check(g.w, b.names[i], b.src[i], k_ids, 5, NULL, 0);
      struct lnc_engine_stats es = estats(g.e);
      /* Single-threaded, a file is loaded only after making room for it: 4 exactly. */
      ck_assert_msg(es.open_files <= 4, "after f%02d: %llu open files", i, (unsigned long long)es.open_files);
      ck_assert_uint_eq(es.open_files, es.files_cached);
      /* And the process really holds no more: a cached file holds its descriptor, its O_DIRECT
       * descriptor (direct mode) and its directory's (O_PATH, for blob sidecars). */
      int fds = count_fds() - fds0;
      ck_assert_msg(fds <= 3 * 4 && fds >= 2 * (int)es.open_files, "after f%02d: %d descriptors for %llu files", i,
                    fds, (unsigned long long)es.open_files);
      ck_assert_int_eq(fds, (mode == LNC_IO_BUFFERED ? 2 : 3) * (int)es.open_files);
    }
  /* The bound is reached, not undercut: 4 files stay open and cached. */
  struct lnc_engine_stats es = estats(g.e);
  ck_assert_msg(es.open_files == 4 && es.files_cached == 4, "[%s] max_open_files 4 keeps %llu files open",
                mode_name(mode), (unsigned long long)es.open_files);
  ck_assert_uint_eq(es.cache_loads + es.cache_hits, 20);
  ck_assert_uint_eq(es.cache_evictions, es.cache_loads - 4); /* every load past the 4th evicts one */
  eng_close(&g);
  ck_assert_int_eq(count_fds(), fds_before); /* engine freed: every descriptor closed */
  /* max_open_files 1: one file, taken again and again, stays cached. */
  eng_open(&g, mode, 0, 1, UINT64_MAX);
  for (int i = 0; i < 3; i++) {
    struct lnc_take_stats st = take_check(g.w, b.names[0], b.src[0], k_ids, 5, NULL, 0);
    ck_assert_msg(st.cache_loads == (i == 0), "[%s] max_open_files 1: take %d of the same file loaded it again",
                  mode_name(mode), i);
    ck_assert_uint_eq(estats(g.e).open_files, 1);
  }
  take_check(g.w, b.names[1], b.src[1], k_ids, 5, NULL, 0);
  es = estats(g.e);
  ck_assert_uint_eq(es.open_files, 1);
  ck_assert_uint_eq(es.cache_evictions, 1);
  eng_close(&g);
  budget_dir_free(&b);
}
END_TEST

/* ---- 9. replaced, rewritten and deleted files -------------------------------------------- */
START_TEST(test_replaced_file) {
  int mode = _i;
  char *dir = mktmp();
  char *x = tsup_path(dir, "x.lance"), *tmp = tsup_path(dir, "x.lance.tmp");
  char *other = tsup_path(dir, "other.lance");
  const char *A = fixture("types21"), *B = fixture("core21");
  copy_file(A, x);
  copy_file(fixture("emb21"), other);
  static const char *const cols[] = {"i32", "s", "i8"};
  uint64_t ids[] = {0, 1, 2, 3, 250, 499, 9};
  char *ja = ref_take(A, ids, 7, cols, 3), *jb = ref_take(B, ids, 7, cols, 3);
  ck_assert_msg(strcmp(ja, jb) != 0, "test setup: A and B must differ in these rows");
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  struct lnc_take_stats st = {0};
  char *got = etake(g.w, x, ids, 7, cols, 3, &st);
  ck_assert_str_eq(got, ja);
  free(got);
  ck_assert_uint_eq(st.cache_loads, 1);
  memset(&st, 0, sizeof st);
  got = etake(g.w, x, ids, 7, cols, 3, &st);
  ck_assert_uint_eq(st.cache_hits, 1);
  free(got);
  /* Atomic replacement: rename(2) a copy of B over x. */
  copy_file(B, tmp);
  ck_assert_int_eq(rename(tmp, x), 0);
  memset(&st, 0, sizeof st);
  got = etake(g.w, x, ids, 7, cols, 3, &st);
  ck_assert_msg(strcmp(got, jb) == 0, "[%s] after rename the engine still serves the old file", mode_name(mode));
  free(got);
  ck_assert_uint_eq(st.cache_loads, 1);
  ck_assert_uint_eq(estats(g.e).cache_loads, 2);
  ck_assert_uint_eq(estats(g.e).files_cached, 1);
  ck_assert_uint_eq(estats(g.e).open_files, 1); /* the old descriptors are closed */
  uint64_t rows = 0;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_engine_describe(g.w, x, NULL, NULL, &rows, NULL, NULL, &err), 0);
  ck_assert_uint_eq(rows, 100037);
  /* In-place rewrite (same inode, other size): the content of A again. */
  size_t alen;
  uint8_t *abytes = tsup_read_file(A, &alen);
  ck_assert_ptr_nonnull(abytes);
  struct stat s0, s1;
  ck_assert_int_eq(stat(x, &s0), 0);
  ck_assert_int_eq(tsup_write_file(x, abytes, alen), 0);
  ck_assert_int_eq(stat(x, &s1), 0);
  ck_assert_uint_eq(s0.st_ino, s1.st_ino);
  free(abytes);
  memset(&st, 0, sizeof st);
  got = etake(g.w, x, ids, 7, cols, 3, &st);
  ck_assert_msg(strcmp(got, ja) == 0, "[%s] after an in-place rewrite the engine serves stale rows", mode_name(mode));
  free(got);
  ck_assert_uint_eq(st.cache_loads, 1);
  ck_assert_uint_eq(estats(g.e).cache_loads, 3);
  /* Deleted: not found, naming the path; other files keep being served. */
  take_check(g.w, other, fixture("emb21"), ids, 3, NULL, 0);
  ck_assert_int_eq(unlink(x), 0);
  int rc;
  memset(&err, 0, sizeof err);
  got = etake_rc(g.w, x, ids, 7, cols, 3, NULL, &rc, &err);
  ck_assert_ptr_null(got);
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  ck_assert_int_eq(err.code, LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, x) != NULL, "message does not name the file: %s", err.message);
  memset(&err, 0, sizeof err);
  rc = lnc_engine_describe(g.w, x, NULL, NULL, NULL, NULL, NULL, &err);
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  st = take_check(g.w, other, fixture("emb21"), ids, 3, NULL, 0);
  ck_assert_uint_eq(st.cache_hits, 1);
  /* Re-created under the same name: served again, freshly loaded. */
  copy_file(B, x);
  st = take_check(g.w, x, B, ids, 7, cols, 3);
  ck_assert_uint_eq(st.cache_loads, 1);
  eng_close(&g);
  free(ja);
  free(jb);
  free(x);
  free(tmp);
  free(other);
  tsup_rmtree(dir);
  free(dir);
}
END_TEST

/* A deleted file's entry must not stay cached: it holds memory and open descriptors that keep
 * the deleted file's blocks allocated on disk until some unrelated eviction. */
START_TEST(test_deleted_file_released) {
  int mode = _i;
  char *dir = mktmp();
  char *x = tsup_path(dir, "gone.lance");
  copy_file(fixture("types21"), x);
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  uint64_t id = 3;
  free(etake(g.w, x, &id, 1, NULL, 0, NULL));
  ck_assert_uint_eq(estats(g.e).open_files, 1);
  ck_assert_int_eq(unlink(x), 0);
  int rc;
  struct lnc_error err = {0};
  ck_assert_ptr_null(etake_rc(g.w, x, &id, 1, NULL, 0, NULL, &rc, &err));
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  struct lnc_engine_stats es = estats(g.e);
  ck_assert_msg(es.open_files == 0 && es.files_cached == 0 && es.resident_bytes == 0,
                "[%s] after a take found %s deleted, its entry is still cached: %llu open files, %llu cached, "
                "%llu bytes resident",
                mode_name(mode), x, (unsigned long long)es.open_files, (unsigned long long)es.files_cached,
                (unsigned long long)es.resident_bytes);
  eng_close(&g);
  free(x);
  tsup_rmtree(dir);
  free(dir);
}
END_TEST

/* ---- 10. corrupt files are isolated -------------------------------------------------------- */
/* nowait takes never load a file or wait for the device: a cold file is LNC_EAGAIN with no
 * load counted; in buffered mode a file whose pages were just read is served; in direct mode
 * every nowait take is LNC_EAGAIN (each read goes to the device). */
START_TEST(test_nowait) {
  int mode = _i;
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  const char *path = fixture("core21");
  const uint64_t ids[] = {5, 77777};
  const char *cols[] = {"i64", "s"};
  struct lnc_take_options nw = {.nowait = 1};
  struct ArrowSchema sc;
  struct ArrowArray ar;
  struct lnc_error err = {0};
  int rc = lnc_engine_take(g.w, path, ids, 2, cols, 2, &nw, &sc, &ar, NULL, &err);
  ck_assert_msg(rc == LNC_EAGAIN, "cold nowait take: %s (%s)", lnc_code_name(rc), err.message);
  ck_assert_uint_eq(estats(g.e).cache_loads, 0);
  ck_assert_uint_eq(estats(g.e).files_cached, 0);
  char *ref = etake(g.w, path, ids, 2, cols, 2, NULL); /* loads it and reads the rows */
  uint64_t takes = estats(g.e).takes;
  rc = lnc_engine_take(g.w, path, ids, 2, cols, 2, &nw, &sc, &ar, NULL, &err);
  if (mode == LNC_IO_DIRECT) {
    ck_assert_msg(rc == LNC_EAGAIN, "direct nowait take: %s", lnc_code_name(rc));
    /* refused before any work: not counted as a take */
    ck_assert_uint_eq(estats(g.e).takes, takes);
  } else {
    ck_assert_msg(rc == 0, "warm buffered nowait take: %s (%s)", lnc_code_name(rc), err.message);
    tsup_expect_json(&sc, &ar, ref);
  }
  ck_assert_uint_eq(estats(g.e).cache_loads, 1);
  free(ref);
  eng_close(&g);
}
END_TEST

START_TEST(test_corrupt_isolated) {
  int mode = _i;
  char *dir = mktmp();
  char *garbage = tsup_path(dir, "garbage.lance"), *trunc = tsup_path(dir, "truncated.lance");
  char *good = tsup_path(dir, "good.lance"), *empty = tsup_path(dir, "empty.lance");
  const char *src = fixture("enc21");
  copy_file(src, good);
  size_t len;
  uint8_t *bytes = tsup_read_file(src, &len);
  ck_assert_ptr_nonnull(bytes);
  ck_assert_int_eq(tsup_write_file(trunc, bytes, len / 2), 0);
  rng_state = 0xDEADull;
  for (size_t i = 0; i < len; i++) bytes[i] = (uint8_t)rnd();
  ck_assert_int_eq(tsup_write_file(garbage, bytes, 200000), 0);
  ck_assert_int_eq(tsup_write_file(empty, bytes, 0), 0);
  free(bytes);
  struct eng g;
  eng_open(&g, mode, 0, 0, UINT64_MAX);
  uint64_t ids[] = {0, 999, 500};
  take_check(g.w, good, src, ids, 3, NULL, 0);
  int fds0 = count_fds();
  const char *bad[] = {garbage, trunc, empty};
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 3; i++) {
      int rc;
      struct lnc_error err = {0};
      struct lnc_take_stats st = {0};
      ck_assert_ptr_null(etake_rc(g.w, bad[i], ids, 3, NULL, 0, &st, &rc, &err));
      ck_assert_msg(rc == LNC_ECORRUPT, "%s: %s (%s)", bad[i], lnc_code_name(rc), err.message);
      ck_assert_int_eq(err.code, LNC_ECORRUPT);
      ck_assert_msg(strstr(err.message, bad[i]) != NULL, "message does not name the file: %s", err.message);
      memset(&err, 0, sizeof err);
      ck_assert_int_eq(lnc_engine_describe(g.w, bad[i], NULL, NULL, NULL, NULL, NULL, &err), LNC_ECORRUPT);
      ck_assert(strstr(err.message, bad[i]) != NULL);
      /* Nothing of a failed load stays: no entry, no descriptor. */
      struct lnc_engine_stats es = estats(g.e);
      ck_assert_uint_eq(es.files_cached, 1);
      ck_assert_uint_eq(es.open_files, 1);
      ck_assert_int_eq(count_fds(), fds0);
      /* The good file is still served from the cache. */
      struct lnc_take_stats gs = take_check(g.w, good, src, ids, 3, NULL, 0);
      ck_assert_uint_eq(gs.cache_hits, 1);
    }
  /* Errors of the request itself do not disturb the file either. */
  int rc;
  struct lnc_error err = {0};
  uint64_t past = 1000;
  ck_assert_ptr_null(etake_rc(g.w, good, &past, 1, NULL, 0, NULL, &rc, &err));
  ck_assert_int_eq(rc, LNC_ERANGE);
  static const char *const nocol[] = {"no_such_column"};
  ck_assert_ptr_null(etake_rc(g.w, good, ids, 3, nocol, 1, NULL, &rc, &err));
  ck_assert_int_eq(rc, LNC_EINVAL);
  struct lnc_take_stats gs = take_check(g.w, good, src, ids, 3, NULL, 0);
  ck_assert_uint_eq(gs.cache_hits, 1);
  eng_close(&g);
  free(garbage);
  free(trunc);
  free(good);
  free(empty);
  tsup_rmtree(dir);
  free(dir);
}
END_TEST

int main(void) {
  g_tmpbase = tsup_mkdtemp_by_exe("engtest."); /* <build>/tests/engtest.XXXXXX */
  if (!g_tmpbase) {
    perror("engtest.XXXXXX");
    return 2;
  }
  for (size_t i = 0; i < N_SMALL; i++) fixture(k_small[i]);
  fixture("core21");

  Suite *s = suite_create("engine");
  TCase *counts = tcase_create("counts");
  tcase_set_timeout(counts, 300);
  /* _i = enum lnc_io_mode: 0 direct, 1 buffered */
  tcase_add_loop_test(counts, test_miniblock_one_row_one_read, 0, 2);
  tcase_add_loop_test(counts, test_miniblock_random_rows, 0, 2);
  tcase_add_test(counts, test_request_order_kept);
  tcase_add_loop_test(counts, test_fullzip_fixed, 0, 2);
  tcase_add_loop_test(counts, test_fullzip_variable, 0, 2);
  tcase_add_loop_test(counts, test_cold_then_warm, 0, 2);
  tcase_add_loop_test(counts, test_concurrent_single_load, 0, 2);
  suite_add_tcase(s, counts);
  TCase *cache = tcase_create("cache");
  tcase_set_timeout(cache, 300);
  tcase_add_loop_test(cache, test_budget, 0, 2);
  tcase_add_loop_test(cache, test_budget_lru_keeps_hot_file, 0, 2);
  tcase_add_loop_test(cache, test_budget_concurrent, 0, 2);
  tcase_add_loop_test(cache, test_max_open_files, 0, 2);
  tcase_add_loop_test(cache, test_replaced_file, 0, 2);
  tcase_add_loop_test(cache, test_deleted_file_released, 0, 2);
  tcase_add_loop_test(cache, test_corrupt_isolated, 0, 2);
  tcase_add_loop_test(cache, test_nowait, 0, 2);
  suite_add_tcase(s, cache);
  int failed = tsup_run(s);
  tsup_rmtree(g_tmpbase);
  free(g_tmpbase);
  return failed;
}
