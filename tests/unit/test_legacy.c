/* Legacy files (file version 0.1/0.2), the reader's own layer: the model lnc_file_open builds
 * from a real legacy file (core01, dict01: LanceDB's legacy writer), and damaged copies of it
 * made at test time (the footer, the Metadata message, the embedded schema, the page table,
 * a string page's positions, list offsets, a dictionary's place), each refused with its code
 * and a message naming the problem, at open or by the take that meets it. Rows against Lance's
 * own answers are test_conformance's; damage by mutation is fuzz_legacy's. Runs under
 * ASan+UBSan in `make asan`. Run from the repository root. */
#include "lance.h"
#include "lance/file.pb-c.h"
#include "format/reader.h"
#include "support/support.h"
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint8_t *g_src; /* core01's data file */
static size_t g_len;

static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static int open_mem(const uint8_t *b, size_t len, lnc_file **out, struct lnc_error *err) {
  int fd = memfd_create("legacy", MFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  for (size_t o = 0; o < len;) {
    ssize_t w = write(fd, b + o, len - o);
    ck_assert_int_gt(w, 0);
    o += (size_t)w;
  }
  memset(err, 0, sizeof *err);
  return lnc_file_open_fd(fd, "legacy.lance", out, err);
}

/* The Metadata message of a legacy file (unpacked; the caller frees it) and where it is. */
static Lance__File__Metadata *metadata_of(const uint8_t *b, size_t len, uint64_t *at) {
  *at = rd64(b + len - 16);
  uint32_t n;
  memcpy(&n, b + *at, 4);
  Lance__File__Metadata *md = lance__file__metadata__unpack(NULL, n, b + *at + 4);
  ck_assert_ptr_nonnull(md);
  return md;
}

/* The file with its Metadata replaced by md (and, when schema is given, its embedded schema
 * replaced too, written just before it): src[0, metadata) + [schema] + metadata + footer. */
static uint8_t *rebuild(const Lance__File__Metadata *md0, const Lance__File__Schema *schema, size_t *outlen) {
  uint64_t at;
  Lance__File__Metadata *old = metadata_of(g_src, g_len, &at);
  lance__file__metadata__free_unpacked(old, NULL);
  Lance__File__Metadata md = *md0;
  size_t slen = schema ? lance__file__schema__get_packed_size(schema) : 0;
  uint64_t meta_at = at + (schema ? 4 + slen : 0);
  if (schema) md.manifest_position = at;
  size_t mlen = lance__file__metadata__get_packed_size(&md);
  size_t len = meta_at + 4 + mlen + 16;
  uint8_t *b = malloc(len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, at);
  if (schema) {
    uint32_t n = (uint32_t)slen;
    memcpy(b + at, &n, 4);
    lance__file__schema__pack(schema, b + at + 4);
  }
  uint32_t n = (uint32_t)mlen;
  memcpy(b + meta_at, &n, 4);
  lance__file__metadata__pack(&md, b + meta_at + 4);
  wr64(b + len - 16, meta_at);
  memcpy(b + len - 8, g_src + g_len - 8, 8); /* version 0.2 and the magic */
  *outlen = len;
  return b;
}

static void expect_open_fail(const char *what, const uint8_t *b, size_t len, int code, const char *s1) {
  lnc_file *f = NULL;
  struct lnc_error err;
  int rc = open_mem(b, len, &f, &err);
  if (rc == 0) lnc_file_close(f);
  ck_assert_msg(rc == code, "%s: want %s, got %s (%s)", what, lnc_code_name(code), lnc_code_name(rc), err.message);
  ck_assert_msg(strstr(err.message, s1), "%s: message lacks '%s': %s", what, s1, err.message);
  ck_assert_msg(strstr(err.message, "legacy.lance"), "%s: message does not name the file: %s", what, err.message);
}

/* A take of column col, rows ids, expected to fail with code and a message holding s1. */
static void expect_take_fail(const char *what, const uint8_t *b, size_t len, const char *col, uint64_t id, int code,
                             const char *s1) {
  lnc_file *f = NULL;
  struct lnc_error err;
  ck_assert_msg(open_mem(b, len, &f, &err) == 0, "%s: open: %s", what, err.message);
  struct ArrowSchema s;
  struct ArrowArray a;
  memset(&err, 0, sizeof err);
  int rc = lnc_take(f, &id, 1, &col, 1, &s, &a, NULL, &err);
  if (rc == 0) {
    a.release(&a);
    s.release(&s);
  }
  lnc_file_close(f);
  ck_assert_msg(rc == code, "%s: want %s, got %s (%s)", what, lnc_code_name(code), lnc_code_name(rc), err.message);
  ck_assert_msg(strstr(err.message, s1), "%s: message lacks '%s': %s", what, s1, err.message);
}

static struct lnc_field *field(lnc_file *f, const char *name) {
  struct lnc_field *fld = lnc_schema_find(f, name);
  ck_assert_msg(fld != NULL, "no field %s", name);
  return fld;
}

/* ---- the model of a real file -------------------------------------------------------------- */
START_TEST(test_model) {
  lnc_file *f = NULL;
  struct lnc_error err;
  ck_assert_int_eq(open_mem(g_src, g_len, &f, &err), 0);
  int major, minor;
  lnc_file_version(f, &major, &minor);
  ck_assert_int_eq(major, 0);
  ck_assert_int_eq(minor, 2);
  ck_assert(f->legacy && f->v20);
  ck_assert_uint_eq(lnc_file_num_rows(f), 6011);
  /* a page per batch of 1,024 rows (LanceDB's max_rows_per_group), in every column */
  const struct lnc_column *c = &f->columns[field(f, "i64")->col20];
  ck_assert_uint_eq(c->n_pages, 6);
  ck_assert_uint_eq(c->pages[1].row_start, 1024);
  ck_assert_uint_eq(c->pages[5].rows, 6011 - 5 * 1024);
  ck_assert_uint_eq(c->pages[0].buf_len[0], 1024 * 8);
  /* strings: the positions (rows + 1 of them) and the file before them */
  c = &f->columns[field(f, "s")->col20];
  ck_assert_uint_eq(c->pages[0].n_buffers, 2);
  ck_assert_uint_eq(c->pages[0].buf_len[0], 1025 * 8);
  ck_assert_uint_eq(c->pages[0].buf_len[1], c->pages[0].buf_off[0]);
  /* a list's child holds the list's items; a struct has a column without bytes */
  const struct lnc_field *l = field(f, "l");
  const struct lnc_column *items = &f->columns[l->children[0]->col20];
  uint64_t all = 0;
  for (uint32_t p = 0; p < items->n_pages; p++) all += items->pages[p].rows;
  ck_assert_uint_gt(all, 6011);
  ck_assert_uint_eq(f->columns[field(f, "st")->col20].pages[0].n_buffers, 0);
  ck_assert_uint_eq(f->columns[field(f, "b")->col20].pages[0].buf_len[0], 1024 / 8);
  struct lnc_buf d = {0};
  ck_assert_int_eq(lnc_file_describe_json(f, &d, &err), 0);
  ck_assert_msg(strstr((const char *)d.data, "\"layout\":\"legacy\""), "describe: %.300s", d.data);
  ck_assert(strstr((const char *)d.data, "Legacy(binary: bytes, then i64 positions)"));
  lnc_buf_free(&d);
  lnc_file_close(f);
}
END_TEST

/* A dictionary column's values are read once, into the first page's state (charged). */
START_TEST(test_dictionary_resident) {
  char *path = tsup_fixture_file("dict01");
  ck_assert_ptr_nonnull(path);
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_file_open(path, &f, &err), 0);
  const char *col = "d_i16";
  uint64_t ids[] = {0, 2599, 1500};
  struct ArrowSchema s;
  struct ArrowArray a;
  ck_assert_int_eq(lnc_take(f, ids, 3, &col, 1, &s, &a, NULL, &err), 0);
  a.release(&a);
  s.release(&s);
  const struct lnc_field *fld = field(f, col);
  ck_assert_int_eq(fld->dict_len, 300);
  const struct lnc_column *c = &f->columns[fld->col20];
  ck_assert_ptr_nonnull(c->pages[0].state);
  ck_assert_uint_gt(c->pages[0].state_bytes, 300 * 8); /* the values and their offsets */
  ck_assert_uint_lt(c->pages[1].state_bytes, 300 * 8); /* held once, by the first page */
  lnc_file_close(f);
  free(path);
}
END_TEST

/* ---- damage found at open ------------------------------------------------------------------- */
START_TEST(test_footer_and_metadata) {
  uint8_t *b = malloc(g_len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, g_len);
  wr64(b + g_len - 16, g_len); /* the Metadata past the footer */
  expect_open_fail("metadata past the end", b, g_len, LNC_ECORRUPT, "legacy metadata");
  wr64(b + g_len - 16, UINT64_MAX - 2);
  expect_open_fail("metadata at 2^64", b, g_len, LNC_ECORRUPT, "legacy metadata");
  uint64_t at;
  Lance__File__Metadata *md = metadata_of(g_src, g_len, &at);
  memcpy(b, g_src, g_len);
  uint32_t huge = 0x7fffffff;
  memcpy(b + at, &huge, 4); /* its length runs past the footer */
  expect_open_fail("metadata length", b, g_len, LNC_ECORRUPT, "runs past");
  memcpy(b, g_src, g_len);
  memset(b + at + 4, 0xff, 16); /* not a message */
  expect_open_fail("metadata garbage", b, g_len, LNC_ECORRUPT, "legacy metadata does not parse");
  expect_open_fail("16 bytes", g_src + g_len - 16, 16, LNC_ECORRUPT, "legacy metadata");
  free(b);
  lance__file__metadata__free_unpacked(md, NULL);
}
END_TEST

START_TEST(test_batches) {
  uint64_t at;
  Lance__File__Metadata *md = metadata_of(g_src, g_len, &at);
  size_t n = md->n_batch_offsets, len;
  ck_assert_uint_eq(n, 7);
  int32_t saved[8];
  memcpy(saved, md->batch_offsets, n * sizeof *saved);
  struct {
    const char *what;
    int k;
    int32_t v;
    int code;
    const char *msg;
  } cases[] = {
      {"first offset not 0", 0, 5, LNC_ECORRUPT, "batch offsets"},
      {"offsets decrease", 3, 100, LNC_ECORRUPT, "decrease"},
      {"a batch longer than its pages", 6, 7000, LNC_ECORRUPT, "stores"},
      {"a batch shorter than its pages", 2, 2000, LNC_ECORRUPT, "stores"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memcpy(md->batch_offsets, saved, n * sizeof *saved);
    md->batch_offsets[cases[i].k] = cases[i].v;
    uint8_t *b = rebuild(md, NULL, &len);
    expect_open_fail(cases[i].what, b, len, cases[i].code, cases[i].msg);
    free(b);
  }
  memcpy(md->batch_offsets, saved, n * sizeof *saved);
  md->n_batch_offsets = 0; /* no batches at all */
  uint8_t *b = rebuild(md, NULL, &len);
  expect_open_fail("no batch offsets", b, len, LNC_ECORRUPT, "batch offsets");
  free(b);
  md->n_batch_offsets = n;
  /* rebuilt unchanged, it opens: the cases above fail for what they changed */
  b = rebuild(md, NULL, &len);
  lnc_file *f = NULL;
  struct lnc_error err;
  ck_assert_int_eq(open_mem(b, len, &f, &err), 0);
  lnc_file_close(f);
  free(b);
  lance__file__metadata__free_unpacked(md, NULL);
}
END_TEST

START_TEST(test_schema_and_page_table) {
  uint64_t at;
  size_t len;
  Lance__File__Metadata *md = metadata_of(g_src, g_len, &at);
  uint64_t mp = md->manifest_position, ptp = md->page_table_position;
  md->manifest_position = 0;
  uint8_t *b = rebuild(md, NULL, &len);
  expect_open_fail("no embedded schema", b, len, LNC_EUNSUPPORTED, "without an embedded schema");
  free(b);
  md->manifest_position = at - 2; /* its length prefix runs into the Metadata */
  b = rebuild(md, NULL, &len);
  expect_open_fail("schema at the end", b, len, LNC_ECORRUPT, "schema");
  free(b);
  md->manifest_position = mp;
  md->page_table_position = at - 8;
  b = rebuild(md, NULL, &len);
  expect_open_fail("page table into the metadata", b, len, LNC_ECORRUPT, "page table");
  free(b);
  md->page_table_position = ptp;
  /* page table entries: an i64 page past the file; the list l's offsets counting one row less */
  lnc_file *f = NULL;
  struct lnc_error err;
  ck_assert_int_eq(open_mem(g_src, g_len, &f, &err), 0);
  int32_t min_id = INT32_MAX;
  for (size_t i = 0; i < f->n_all_fields; i++)
    if (f->all_fields[i]->id >= 0 && f->all_fields[i]->id < min_id) min_id = f->all_fields[i]->id;
  uint64_t i64_at = ptp + ((uint64_t)(field(f, "i64")->id - min_id) * 6 + 2) * 16;
  uint64_t l_at = ptp + ((uint64_t)(field(f, "l")->id - min_id) * 6 + 0) * 16;
  lnc_file_close(f);
  b = malloc(g_len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, g_len);
  wr64(b + i64_at, g_len - 100);
  expect_open_fail("an i64 page past the file", b, g_len, LNC_ECORRUPT, "run past the file");
  memcpy(b, g_src, g_len);
  wr64(b + i64_at + 8, UINT64_MAX / 4);
  expect_open_fail("an i64 page of 2^62 values", b, g_len, LNC_ECORRUPT, "stores");
  memcpy(b, g_src, g_len);
  wr64(b + l_at + 8, rd64(g_src + l_at + 8) - 1);
  expect_open_fail("list offsets one short", b, g_len, LNC_ECORRUPT, "stores");
  free(b);
  lance__file__metadata__free_unpacked(md, NULL);
}
END_TEST

/* ---- damage a take meets ---------------------------------------------------------------- */
START_TEST(test_pages_that_lie) {
  lnc_file *f = NULL;
  struct lnc_error err;
  ck_assert_int_eq(open_mem(g_src, g_len, &f, &err), 0);
  const struct lnc_page *sp = &f->columns[field(f, "s")->col20].pages[0];
  const struct lnc_page *lp = &f->columns[field(f, "l")->col20].pages[0];
  uint64_t s_pos = sp->buf_off[0], l_pos = lp->buf_off[0];
  lnc_file_close(f);
  uint8_t *b = malloc(g_len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, g_len);
  wr64(b + s_pos + 8, rd64(b + s_pos) - 1); /* row 0 ends before it starts */
  expect_take_fail("string positions decrease", b, g_len, "s", 0, LNC_ECORRUPT, "positions");
  memcpy(b, g_src, g_len);
  wr64(b + s_pos + 8, s_pos + 4096); /* row 0's bytes run into its positions */
  expect_take_fail("string bytes past their place", b, g_len, "s", 0, LNC_ECORRUPT, "outside buffer");
  memcpy(b, g_src, g_len);
  uint32_t many = 0x7fffffff;
  memcpy(b + l_pos + 4, &many, 4); /* list 0 ends far past the batch's items */
  expect_take_fail("list offsets past the items", b, g_len, "l", 0, LNC_ECORRUPT, "legacy list");
  /* the other columns of the damaged file still serve */
  ck_assert_int_eq(open_mem(b, g_len, &f, &err), 0);
  const char *col = "i64";
  uint64_t id = 0;
  struct ArrowSchema s;
  struct ArrowArray a;
  ck_assert_int_eq(lnc_take(f, &id, 1, &col, 1, &s, &a, NULL, &err), 0);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
  free(b);
}
END_TEST

/* A dictionary whose values the schema places past the end of the file. */
START_TEST(test_dictionary_past_the_file) {
  char *path = tsup_fixture_file("dict01");
  ck_assert_ptr_nonnull(path);
  uint8_t *save_src = g_src;
  size_t save_len = g_len;
  g_src = tsup_read_file(path, &g_len);
  ck_assert_ptr_nonnull(g_src);
  uint64_t at;
  Lance__File__Metadata *md = metadata_of(g_src, g_len, &at);
  uint32_t n;
  memcpy(&n, g_src + md->manifest_position, 4);
  Lance__File__Schema *sc = lance__file__schema__unpack(NULL, n, g_src + md->manifest_position + 4);
  ck_assert_ptr_nonnull(sc);
  ck_assert_ptr_nonnull(sc->fields[0]->dictionary);
  sc->fields[0]->dictionary->offset = (int64_t)g_len * 2;
  size_t len;
  uint8_t *b = rebuild(md, sc, &len);
  expect_take_fail("dictionary past the file", b, len, sc->fields[0]->name, 0, LNC_ECORRUPT, "legacy dictionary");
  sc->fields[0]->dictionary->offset = -8;
  free(b);
  b = rebuild(md, sc, &len);
  expect_take_fail("dictionary at a negative offset", b, len, sc->fields[0]->name, 0, LNC_ECORRUPT, "legacy dictionary");
  free(b);
  lance__file__schema__free_unpacked(sc, NULL);
  lance__file__metadata__free_unpacked(md, NULL);
  free(g_src);
  g_src = save_src;
  g_len = save_len;
  free(path);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("legacy");
  TCase *tc = tcase_create("legacy");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_model);
  tcase_add_test(tc, test_dictionary_resident);
  tcase_add_test(tc, test_footer_and_metadata);
  tcase_add_test(tc, test_batches);
  tcase_add_test(tc, test_schema_and_page_table);
  tcase_add_test(tc, test_pages_that_lie);
  tcase_add_test(tc, test_dictionary_past_the_file);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  char *path = tsup_fixture_file("core01");
  if (!path || !(g_src = tsup_read_file(path, &g_len))) {
    fprintf(stderr, "test_legacy: fixture core01 not found (run from the repository root)\n");
    return 1;
  }
  free(path);
  int rc = tsup_run(suite());
  free(g_src);
  return rc;
}
