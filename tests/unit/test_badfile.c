/* Damaged and hostile Lance files, made at test time from a real fixture (enc21): truncations,
 * bad magic and versions, footer/offset-table lies, metadata that does not parse, page buffers
 * past EOF, garbage inside pages. Each case asserts the error code and that the message names
 * the problem. Runs under ASan+UBSan in `make asan`, so an out-of-bounds read fails the build.
 * Run from the repository root. */
#include "lance.h"
#include "lance/file2.pb-c.h"
#include "lance/file.pb-c.h"
#include "lance/encodings20.pb-c.h"
#include "format/reader.h"
#include "support/support.h"
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint8_t *g_src; /* the enc21 data file */
static size_t g_len;
static char *g_dir; /* scratch directory for the damaged copies */

/* ---- footer access --------------------------------------------------------------------- */
struct footer {
  uint64_t cm_start, cmo_start, gbo_start;
  uint32_t n_gb, n_cols;
  uint16_t major, minor;
};
static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static struct footer footer_of(const uint8_t *b, size_t len) {
  const uint8_t *f = b + len - 40;
  struct footer r;
  r.cm_start = rd64(f);
  r.cmo_start = rd64(f + 8);
  r.gbo_start = rd64(f + 16);
  memcpy(&r.n_gb, f + 24, 4);
  memcpy(&r.n_cols, f + 28, 4);
  memcpy(&r.major, f + 32, 2);
  memcpy(&r.minor, f + 34, 2);
  return r;
}

static uint8_t *copy_src(void) {
  uint8_t *b = malloc(g_len);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, g_len);
  return b;
}

/* Writes the bytes to a file in the scratch dir and opens it. On success *out is the handle. */
static int open_bytes(const char *name, const uint8_t *b, size_t len, lnc_file **out,
                      struct lnc_error *err) {
  char *path = tsup_path(g_dir, name);
  ck_assert_int_eq(tsup_write_file(path, b, len), 0);
  memset(err, 0, sizeof *err);
  int rc = lnc_file_open(path, out, err);
  free(path);
  return rc;
}

/* Opens the bytes from memory (memfd), no file left behind. */
static int open_mem(const uint8_t *b, size_t len, lnc_file **out, struct lnc_error *err) {
  int fd = memfd_create("badfile", MFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  size_t o = 0;
  while (o < len) {
    ssize_t w = write(fd, b + o, len - o);
    ck_assert_int_gt(w, 0);
    o += (size_t)w;
  }
  memset(err, 0, sizeof *err);
  return lnc_file_open_fd(fd, "memfd", out, err);
}

static void expect_open_fail(const char *name, const uint8_t *b, size_t len, int code,
                             const char *s1, const char *s2) {
  lnc_file *f = NULL;
  struct lnc_error err;
  int rc = open_bytes(name, b, len, &f, &err);
  if (rc == 0) lnc_file_close(f);
  ck_assert_msg(rc == code, "%s: want %s, got %s (%s)", name, lnc_code_name(code), lnc_code_name(rc),
                err.message);
  ck_assert_msg(err.code == code, "%s: err.code %d", name, err.code);
  ck_assert_msg(s1 == NULL || strstr(err.message, s1), "%s: message lacks '%s': %s", name, s1,
                err.message);
  ck_assert_msg(s2 == NULL || strstr(err.message, s2), "%s: message lacks '%s': %s", name, s2,
                err.message);
  ck_assert_msg(strstr(err.message, name) != NULL, "%s: message does not name the file: %s", name,
                err.message);
}

/* ---- rewriting column metadata --------------------------------------------------------------
 * Unpacks every column's metadata, lets `mod` change it, packs it again and lays out a new
 * metadata section (column metadata, offset tables, footer) after the unchanged data and
 * global buffers. */
typedef void (*cm_mod)(Lance__File__V2__ColumnMetadata *cm, uint32_t col, void *arg);
/* Changes the file descriptor (global buffer 0: the schema and the row count) before it is
 * packed, and undoes what it allocated when called again with undo set. */
typedef void (*fd_mod)(Lance__File__FileDescriptor *fd, bool undo);

static uint8_t *rebuild_with(cm_mod mod, void *arg, fd_mod fmod, size_t *outlen);
static uint8_t *rebuild(cm_mod mod, void *arg, size_t *outlen) { return rebuild_with(mod, arg, NULL, outlen); }

static uint8_t *rebuild_with(cm_mod mod, void *arg, fd_mod fmod, size_t *outlen) {
  struct footer ft = footer_of(g_src, g_len);
  ck_assert(ft.cm_start <= ft.cmo_start && ft.cmo_start < ft.gbo_start);
  size_t cap = g_len * 2 + 4096, len = ft.cm_start;
  uint8_t *out = malloc(cap);
  uint64_t *table = calloc(2 * (size_t)ft.n_cols, sizeof *table);
  ck_assert(out && table);
  memcpy(out, g_src, ft.cm_start);
  for (uint32_t c = 0; c < ft.n_cols; c++) {
    uint64_t o = rd64(g_src + ft.cmo_start + 16ull * c), l = rd64(g_src + ft.cmo_start + 16ull * c + 8);
    Lance__File__V2__ColumnMetadata *cm =
        lance__file__v2__column_metadata__unpack(NULL, (size_t)l, g_src + o);
    ck_assert_ptr_nonnull(cm);
    if (mod) mod(cm, c, arg);
    size_t n = lance__file__v2__column_metadata__get_packed_size(cm);
    ck_assert(len + n + 16ull * ft.n_cols + 16ull * ft.n_gb + 40 <= cap);
    lance__file__v2__column_metadata__pack(cm, out + len);
    /* mod may have replaced arrays the unpacker allocated; it restores them itself. */
    lance__file__v2__column_metadata__free_unpacked(cm, NULL);
    table[2 * c] = len;
    table[2 * c + 1] = n;
    len += n;
  }
  uint64_t fd_off = 0, fd_len = 0;
  if (fmod) { /* the new descriptor goes after the column metadata; entry 0 points at it */
    ck_assert_uint_ge(ft.n_gb, 1);
    uint64_t o = rd64(g_src + ft.gbo_start), l = rd64(g_src + ft.gbo_start + 8);
    Lance__File__FileDescriptor *fd = lance__file__file_descriptor__unpack(NULL, (size_t)l, g_src + o);
    ck_assert_ptr_nonnull(fd);
    fmod(fd, false);
    fd_len = lance__file__file_descriptor__get_packed_size(fd);
    ck_assert(len + fd_len + 16ull * ft.n_cols + 16ull * ft.n_gb + 40 <= cap);
    lance__file__file_descriptor__pack(fd, out + len);
    fmod(fd, true);
    lance__file__file_descriptor__free_unpacked(fd, NULL);
    fd_off = len;
    len += fd_len;
  }
  uint64_t cmo = len;
  for (uint32_t c = 0; c < ft.n_cols; c++) {
    wr64(out + len, table[2 * c]);
    wr64(out + len + 8, table[2 * c + 1]);
    len += 16;
  }
  uint64_t gbo = len;
  memcpy(out + len, g_src + ft.gbo_start, 16ull * ft.n_gb);
  if (fmod) {
    wr64(out + len, fd_off);
    wr64(out + len + 8, fd_len);
  }
  len += 16ull * ft.n_gb;
  memcpy(out + len, g_src + g_len - 40, 40);
  wr64(out + len + 8, cmo);
  wr64(out + len + 16, gbo);
  len += 40;
  free(table);
  *outlen = len;
  return out;
}

/* ---- opening failures ------------------------------------------------------------------------ */
START_TEST(test_truncated_short) {
  static const size_t lens[] = {0, 1, 8, 39};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    char name[32];
    snprintf(name, sizeof name, "short%zu.lance", lens[i]);
    expect_open_fail(name, g_src, lens[i], LNC_ECORRUPT, "too short", NULL);
  }
}
END_TEST

START_TEST(test_truncated_middle) {
  struct footer ft = footer_of(g_src, g_len);
  /* The first 40 bytes (data, no footer), half the file, cuts inside the column metadata,
   * inside the offset tables and inside the footer: the last 4 bytes are never the magic. */
  size_t lens[] = {40, g_len / 2, ft.cm_start + 7, (ft.cm_start + ft.cmo_start) / 2,
                   ft.cmo_start + 5, ft.gbo_start + 3, g_len - 20, g_len - 1};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    char name[48];
    snprintf(name, sizeof name, "cut%zu.lance", lens[i]);
    expect_open_fail(name, g_src, lens[i], LNC_ECORRUPT, "magic", NULL);
  }
}
END_TEST

/* Data cut out of the middle, metadata and footer kept: every offset now lies. */
START_TEST(test_truncated_keep_footer) {
  struct footer ft = footer_of(g_src, g_len);
  size_t tail = g_len - ft.cm_start, head = ft.cm_start / 3;
  uint8_t *b = malloc(head + tail);
  ck_assert_ptr_nonnull(b);
  memcpy(b, g_src, head);
  memcpy(b + head, g_src + ft.cm_start, tail);
  expect_open_fail("headtail.lance", b, head + tail, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  /* Only the footer itself. */
  expect_open_fail("footeronly.lance", g_src + g_len - 40, 40, LNC_ECORRUPT, "footer offsets", NULL);
  free(b);
}
END_TEST

START_TEST(test_bad_magic) {
  uint8_t *b = copy_src();
  memcpy(b + g_len - 4, "LANX", 4);
  expect_open_fail("magic.lance", b, g_len, LNC_ECORRUPT, "bad magic", NULL);
  memcpy(b + g_len - 4, "lanc", 4);
  expect_open_fail("magic2.lance", b, g_len, LNC_ECORRUPT, "bad magic", NULL);
  free(b);
  /* Not a Lance file at all. */
  static const char text[] = "this is a text file, not a Lance file, and it is long enough for a footer\n";
  expect_open_fail("text.lance", (const uint8_t *)text, sizeof text - 1, LNC_ECORRUPT, "bad magic", NULL);
}
END_TEST

static void expect_version_code(uint16_t major, uint16_t minor, int code, const char *s1, const char *s2) {
  uint8_t *b = copy_src();
  wr16(b + g_len - 8, major);
  wr16(b + g_len - 6, minor);
  char name[32];
  snprintf(name, sizeof name, "v%u_%u.lance", major, minor);
  expect_open_fail(name, b, g_len, code, s1, s2);
  free(b);
}

static void expect_version(uint16_t major, uint16_t minor, const char *s1, const char *s2) {
  expect_version_code(major, minor, LNC_EUNSUPPORTED, s1, s2);
}

/* lance.h lets callers pass no error struct. A damaged page whose layout wraps an inner error
 * (issue 18: byte 66 of the fuzz corpus's real21.lance flipped) used to read that error through
 * the NULL pointer. Every single-byte flip of the first 4 KiB of that file, taken with NULL. */
START_TEST(test_null_error_struct) {
  size_t len;
  uint8_t *src = tsup_read_file("tests/fuzz/corpus/fuzz_file/real21.lance", &len);
  ck_assert_ptr_nonnull(src);
  uint8_t *b = malloc(len);
  size_t failed = 0;
  for (size_t at = 0; at < len && at < 4096; at++) {
    memcpy(b, src, len);
    b[at] ^= 0xff;
    lnc_file *f = NULL;
    struct lnc_error err;
    if (open_mem(b, len, &f, &err) != 0) continue;
    uint64_t ids[] = {0, lnc_file_num_rows(f) - 1};
    struct ArrowSchema s;
    struct ArrowArray a;
    if (lnc_take(f, ids, 2, NULL, 0, &s, &a, NULL, NULL) == 0) {
      a.release(&a);
      s.release(&s);
    } else
      failed++;
    lnc_file_close(f);
  }
  ck_assert_uint_gt(failed, 0); /* some flips must reach a layout's error path */
  free(b);
  free(src);
}
END_TEST

START_TEST(test_versions) {
  expect_version(3, 7, "unknown Lance file version 3.7", NULL);
  /* 0.1/0.2 are legacy files, read by their own 16-byte footer: a 2.1 file restamped so is
   * refused by what that footer would point at. */
  expect_version_code(0, 2, LNC_ECORRUPT, "legacy metadata", "outside the file");
  expect_version_code(0, 1, LNC_ECORRUPT, "legacy metadata", "outside the file");
  expect_version(2, 3, "version 2.3", NULL);
  expect_version(65535, 65535, "version 65535.65535", NULL);
  /* 2.0 is read (the *20 fixtures); a 2.1 file restamped as 2.0 is refused by its pages. */
  expect_version_code(2, 0, LNC_ECORRUPT, "in a 2.0 file", "lance.encodings21.PageLayout");
  expect_version_code(0, 3, LNC_ECORRUPT, "in a 2.0 file", "lance.encodings21.PageLayout"); /* 0.3: 2.0's stamp */
}
END_TEST

START_TEST(test_footer_counts) {
  uint8_t *b = copy_src();
  struct footer ft = footer_of(g_src, g_len);
  wr32(b + g_len - 12, 0xFFFFFFFFu); /* num_columns */
  expect_open_fail("ncols_max.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  wr32(b + g_len - 12, ft.n_cols - 1);
  expect_open_fail("ncols_less.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  wr32(b + g_len - 12, 0);
  expect_open_fail("ncols_zero.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  memcpy(b, g_src, g_len);
  wr32(b + g_len - 16, 0); /* num_global_buffers */
  expect_open_fail("ngb_zero.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  wr32(b + g_len - 16, 0xFFFFFFFFu);
  expect_open_fail("ngb_max.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  memcpy(b, g_src, g_len);
  wr64(b + g_len - 40, g_len + 100); /* column metadata start past the end */
  expect_open_fail("cmstart.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  memcpy(b, g_src, g_len);
  wr64(b + g_len - 32, UINT64_MAX - 8); /* column metadata offsets table */
  expect_open_fail("cmo.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  memcpy(b, g_src, g_len);
  wr64(b + g_len - 24, g_len); /* global buffer offsets table inside the footer */
  expect_open_fail("gbo.lance", b, g_len, LNC_ECORRUPT, "footer offsets are inconsistent", NULL);
  free(b);
}
END_TEST

START_TEST(test_column_metadata_offsets) {
  struct footer ft = footer_of(g_src, g_len);
  uint8_t *b = copy_src();
  uint8_t *e0 = b + ft.cmo_start, *e5 = b + ft.cmo_start + 16 * 5;
  wr64(e0, g_len + 100);
  expect_open_fail("cm_off_eof.lance", b, g_len, LNC_ECORRUPT, "column 0 metadata", "outside");
  memcpy(b, g_src, g_len);
  wr64(e5 + 8, 1ull << 40);
  expect_open_fail("cm_size_huge.lance", b, g_len, LNC_ECORRUPT, "column 5 metadata", "outside");
  memcpy(b, g_src, g_len);
  wr64(e5, UINT64_MAX - 3);
  wr64(e5 + 8, 16);
  expect_open_fail("cm_off_wrap.lance", b, g_len, LNC_ECORRUPT, "column 5 metadata", "outside");
  memcpy(b, g_src, g_len);
  wr64(e0, 0); /* inside the data pages, not the metadata section */
  expect_open_fail("cm_in_data.lance", b, g_len, LNC_ECORRUPT, "column 0 metadata", "outside");
  memcpy(b, g_src, g_len);
  wr64(e5 + 8, ft.cmo_start - rd64(e5) + 1); /* runs into the offsets table by one byte */
  expect_open_fail("cm_overlap.lance", b, g_len, LNC_ECORRUPT, "column 5 metadata", "outside");
  free(b);
}
END_TEST

START_TEST(test_global_buffer) {
  struct footer ft = footer_of(g_src, g_len);
  uint8_t *b = copy_src();
  uint8_t *g0 = b + ft.gbo_start;
  uint64_t off = rd64(g0), len = rd64(g0 + 8);
  wr64(g0, g_len);
  wr64(g0 + 8, 1);
  expect_open_fail("gb_eof.lance", b, g_len, LNC_ECORRUPT, "global buffer 0", "outside the file");
  wr64(g0, off);
  wr64(g0 + 8, UINT64_MAX);
  expect_open_fail("gb_huge.lance", b, g_len, LNC_ECORRUPT, "global buffer 0", "outside the file");
  /* Garbage where the FileDescriptor protobuf is. */
  wr64(g0 + 8, len);
  memset(b + off, 0xFF, len);
  expect_open_fail("gb_garbage.lance", b, g_len, LNC_ECORRUPT, "file descriptor", "does not parse");
  /* A valid-looking prefix then a length that runs past the buffer. */
  memcpy(b, g_src, g_len);
  wr64(g0 + 8, len / 2);
  expect_open_fail("gb_half.lance", b, g_len, LNC_ECORRUPT, NULL, NULL);
  free(b);
}
END_TEST

START_TEST(test_column_metadata_garbage) {
  struct footer ft = footer_of(g_src, g_len);
  uint8_t *b = copy_src();
  uint64_t o = rd64(b + ft.cmo_start + 16 * 3), l = rd64(b + ft.cmo_start + 16 * 3 + 8);
  memset(b + o, 0xFF, l);
  expect_open_fail("cm_garbage.lance", b, g_len, LNC_ECORRUPT, "column 3", "does not parse");
  free(b);
}
END_TEST

/* Rebuilding without changes must give a file that opens and reads (checks rebuild()). */
START_TEST(test_rebuild_identity) {
  size_t len;
  uint8_t *b = rebuild(NULL, NULL, &len);
  lnc_file *f;
  struct lnc_error err;
  int rc = open_bytes("rebuilt.lance", b, len, &f, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  uint64_t ids[] = {0, 999};
  const char *cols[] = {"zstd_i32", "fsst_s"};
  struct ArrowSchema s;
  struct ArrowArray a;
  rc = lnc_take(f, ids, 2, cols, 2, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
  free(b);
}
END_TEST

struct page_mod {
  uint32_t col;
  int what;
};
enum { PM_OFF_EOF,
       PM_SIZE_HUGE,
       PM_SIZE_WRAP,
       PM_ROWS_MORE,
       PM_ROWS_LESS,
       PM_COUNTS,
       PM_ENCODING,
       PM_ROWS_HUGE };

static void page_modifier(Lance__File__V2__ColumnMetadata *cm, uint32_t col, void *arg) {
  struct page_mod *m = arg;
  if (col != m->col) return;
  ck_assert_uint_ge(cm->n_pages, 1);
  Lance__File__V2__ColumnMetadata__Page *p = cm->pages[0];
  ck_assert_uint_ge(p->n_buffer_offsets, 1);
  switch (m->what) {
  case PM_OFF_EOF: p->buffer_offsets[0] = g_len + 4096; break;
  case PM_SIZE_HUGE: p->buffer_sizes[p->n_buffer_sizes - 1] = 1ull << 62; break;
  case PM_SIZE_WRAP:
    p->buffer_offsets[0] = 16;
    p->buffer_sizes[0] = UINT64_MAX - 8;
    break;
  case PM_ROWS_MORE: p->length += 1; break;
  case PM_ROWS_LESS: p->length -= 1; break;
  case PM_COUNTS: p->n_buffer_sizes -= 1; break; /* packs one size less */
  case PM_ROWS_HUGE: p->length = 1ull << 61; break;
  case PM_ENCODING:
    ck_assert(p->encoding && p->encoding->location_case == LANCE__FILE__V2__ENCODING__LOCATION_DIRECT);
    memset(p->encoding->direct->encoding.data, 0xFF, p->encoding->direct->encoding.len);
    break;
  }
}

static void expect_rebuilt_fail(const char *name, uint32_t col, int what, int code, const char *s1,
                                const char *s2) {
  struct page_mod m = {col, what};
  size_t len;
  uint8_t *b = rebuild(page_modifier, &m, &len);
  expect_open_fail(name, b, len, code, s1, s2);
  free(b);
}

START_TEST(test_page_buffers) {
  expect_rebuilt_fail("pg_off_eof.lance", 2, PM_OFF_EOF, LNC_ECORRUPT, "column 2 page 0", "outside the file");
  expect_rebuilt_fail("pg_size_huge.lance", 4, PM_SIZE_HUGE, LNC_ECORRUPT, "column 4 page 0", "outside the file");
  expect_rebuilt_fail("pg_size_wrap.lance", 0, PM_SIZE_WRAP, LNC_ECORRUPT, "column 0 page 0", "outside the file");
  expect_rebuilt_fail("pg_counts.lance", 1, PM_COUNTS, LNC_ECORRUPT, "column 1 page 0", "buffer offsets");
  expect_rebuilt_fail("pg_rows_more.lance", 3, PM_ROWS_MORE, LNC_ECORRUPT, "column 3", "rows");
  expect_rebuilt_fail("pg_rows_less.lance", 3, PM_ROWS_LESS, LNC_ECORRUPT, "column 3", "rows");
  expect_rebuilt_fail("pg_encoding.lance", 6, PM_ENCODING, LNC_ECORRUPT, "column 6 page 0", "does not parse");
  expect_rebuilt_fail("pg_rows_huge.lance", 3, PM_ROWS_HUGE, LNC_ECORRUPT, "column 3 page 0", "at most 4294967295");
}
END_TEST

/* A row count past what a row address holds is refused at open: unbounded, a count of 2^61
 * sized a table of (rows + 1) * 8 bytes that wrapped to 8 (a heap overflow in the constant
 * layout), and 2^64 - 1 rows made a division by zero in the full-zip one. */
static void rows_2_61(Lance__File__FileDescriptor *fd, bool undo) {
  if (!undo) fd->length = 1ull << 61;
}
static void rows_max(Lance__File__FileDescriptor *fd, bool undo) {
  if (!undo) fd->length = UINT64_MAX;
}

START_TEST(test_row_count_bounded) {
  fd_mod mods[] = {rows_2_61, rows_max};
  for (size_t i = 0; i < 2; i++) {
    size_t len;
    uint8_t *b = rebuild_with(NULL, NULL, mods[i], &len);
    expect_open_fail("rows_huge.lance", b, len, LNC_ECORRUPT, "claims", "at most 4294967295 per file");
    free(b);
  }
}
END_TEST

/* A chain of nested structs deeper than 64 levels is refused when the schema is read: the
 * walks over the field tree recurse, and a chain of 99,990 took 104 s of CPU to open (a
 * quadratic shape check) and overflowed a 256 KB stack at 10,000. */
#define CHAIN 70
static Lance__File__Field g_chain[CHAIN], **g_saved_fields, *g_fields[CHAIN + 512];
static size_t g_saved_nfields;

static void deep_chain(Lance__File__FileDescriptor *fd, bool undo) {
  Lance__File__Schema *sc = fd->schema;
  if (undo) {
    sc->fields = g_saved_fields;
    sc->n_fields = g_saved_nfields;
    return;
  }
  ck_assert_uint_lt(sc->n_fields, 512);
  g_saved_fields = sc->fields;
  g_saved_nfields = sc->n_fields;
  for (size_t i = 0; i < sc->n_fields; i++) g_fields[i] = sc->fields[i];
  for (int i = 0; i < CHAIN; i++) {
    g_chain[i] = (Lance__File__Field)LANCE__FILE__FIELD__INIT;
    g_chain[i].name = "deep";
    g_chain[i].id = 100000 + i;
    g_chain[i].parent_id = i ? 100000 + i - 1 : -1;
    g_chain[i].logical_type = i < CHAIN - 1 ? "struct" : "int32";
    g_fields[sc->n_fields + (size_t)i] = &g_chain[i];
  }
  sc->fields = g_fields;
  sc->n_fields += CHAIN;
}

START_TEST(test_schema_depth_bounded) {
  size_t len;
  uint8_t *b = rebuild_with(NULL, NULL, deep_chain, &len);
  expect_open_fail("deep.lance", b, len, LNC_ECORRUPT, "'deep'", "nested more than 64 levels deep");
  free(b);
}
END_TEST

/* The blob flag on a field whose values are not blob descriptors (an int32; a packed struct of
 * fixed fields, which has no offsets): take answers a corrupt-file error. It read 16 bytes per
 * row of an 4-byte array, and followed a NULL offsets array. */
static int take_some(lnc_file *f, const char *col, struct lnc_error *err);

/* For an fd_mod that edits one footer schema field: on the way in, the field named `name`
 * (or, name NULL, with id `id`; asserted to exist), saved whole; on undo the saved copy is put
 * back and NULL returned. */
static Lance__File__Field *g_edit_fld, g_edit_saved;
static Lance__File__Field *fd_field_edit(Lance__File__FileDescriptor *fd, const char *name, int32_t id, bool undo) {
  if (undo) {
    *g_edit_fld = g_edit_saved;
    return NULL;
  }
  for (size_t i = 0; i < fd->schema->n_fields; i++) {
    Lance__File__Field *f = fd->schema->fields[i];
    if (name ? !strcmp(f->name, name) : f->id == id) {
      g_edit_fld = f, g_edit_saved = *f;
      return f;
    }
  }
  ck_abort_msg("no field %s (id %d) in the schema", name ? name : "", id);
  return NULL;
}

static const char *g_blob_field;
static Lance__File__Field__MetadataEntry g_blob_entry = LANCE__FILE__FIELD__METADATA_ENTRY__INIT;
static Lance__File__Field__MetadataEntry *g_meta[64];

static void mark_blob(Lance__File__FileDescriptor *fd, bool undo) {
  Lance__File__Field *f = fd_field_edit(fd, g_blob_field, 0, undo);
  if (!f) return;
  ck_assert_uint_lt(f->n_metadata, 63);
  for (size_t i = 0; i < f->n_metadata; i++) g_meta[i] = f->metadata[i];
  g_blob_entry.key = "lance-encoding:blob";
  g_blob_entry.value = (ProtobufCBinaryData){4, (uint8_t *)"true"};
  g_meta[f->n_metadata++] = &g_blob_entry;
  f->metadata = g_meta;
}

START_TEST(test_blob_flag_on_other_types) {
  const char *fields[] = {"zstd_i32", "packed"};
  for (size_t i = 0; i < 2; i++) {
    g_blob_field = fields[i];
    size_t len;
    uint8_t *b = rebuild_with(NULL, NULL, mark_blob, &len);
    lnc_file *f = NULL;
    struct lnc_error err;
    int rc = open_bytes("blob_flag.lance", b, len, &f, &err);
    ck_assert_msg(rc == 0, "%s", err.message);
    rc = take_some(f, fields[i], &err);
    ck_assert_msg(rc == LNC_ECORRUPT, "%s: got %s (%s)", fields[i], lnc_code_name(rc), err.message);
    ck_assert_msg(strstr(err.message, "is marked a blob but its values are not blob descriptors"), "%s", err.message);
    lnc_file_close(f);
    free(b);
  }
}
END_TEST

/* ---- 2.0 encodings that lie ---------------------------------------------------------------
 * Page 0 of core20's i32 (column 4) given a hand-built 2.0 ArrayEncoding. Each one made a
 * wrapped size and a write or read outside a buffer before its check. */
typedef Lance__Encodings__ArrayEncoding AE20;
static AE20 *ae20(void) {
  AE20 *e = calloc(1, sizeof *e);
  lance__encodings__array_encoding__init(e);
  return e;
}
static Lance__Encodings__Buffer g_page_buf0 = LANCE__ENCODINGS__BUFFER__INIT; /* page buffer 0 */
static AE20 *fsl20(uint32_t dim, AE20 *items) {
  AE20 *e = ae20();
  Lance__Encodings__FixedSizeList *f = calloc(1, sizeof *f);
  lance__encodings__fixed_size_list__init(f);
  f->dimension = dim;
  f->items = items;
  e->array_encoding_case = LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST;
  e->fixed_size_list = f;
  return e;
}
static AE20 *constant20(size_t len) {
  AE20 *e = ae20();
  Lance__Encodings__Constant *c = calloc(1, sizeof *c);
  lance__encodings__constant__init(c);
  c->value.len = len;
  c->value.data = calloc(1, len);
  e->array_encoding_case = LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT;
  e->constant = c;
  return e;
}
static AE20 *bitpacked20(bool fastlanes, uint64_t cb, uint64_t ub) {
  AE20 *e = ae20();
  if (fastlanes) {
    Lance__Encodings__BitpackedForNonNeg *b = calloc(1, sizeof *b);
    lance__encodings__bitpacked_for_non_neg__init(b);
    b->compressed_bits_per_value = cb, b->uncompressed_bits_per_value = ub, b->buffer = &g_page_buf0;
    e->array_encoding_case = LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG;
    e->bitpacked_for_non_neg = b;
  } else {
    Lance__Encodings__Bitpacked *b = calloc(1, sizeof *b);
    lance__encodings__bitpacked__init(b);
    b->compressed_bits_per_value = cb, b->uncompressed_bits_per_value = ub, b->buffer = &g_page_buf0;
    e->array_encoding_case = LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED;
    e->bitpacked = b;
  }
  return e;
}
static void free20(AE20 *e) { /* what the builders above allocated (the cases are a union) */
  if (!e) return;
  switch (e->array_encoding_case) {
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST:
    free20(e->fixed_size_list->items);
    free(e->fixed_size_list);
    break;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT:
    free(e->constant->value.data);
    free(e->constant);
    break;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED: free(e->bitpacked); break;
  case LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG: free(e->bitpacked_for_non_neg); break;
  default: break;
  }
  free(e);
}

static void put_enc20(Lance__File__V2__ColumnMetadata *cm, uint32_t col, void *arg) {
  if (col != 4) return;
  AE20 *e = arg;
  size_t elen = lance__encodings__array_encoding__get_packed_size(e);
  uint8_t *ebuf = malloc(elen);
  lance__encodings__array_encoding__pack(e, ebuf);
  Lance__File__V2__AnyMessage any = LANCE__FILE__V2__ANY_MESSAGE__INIT;
  any.type_url = "/lance.encodings.ArrayEncoding";
  any.value = (ProtobufCBinaryData){elen, ebuf};
  ProtobufCBinaryData *dst = &cm->pages[0]->encoding->direct->encoding;
  size_t alen = lance__file__v2__any_message__get_packed_size(&any);
  uint8_t *abuf = malloc(alen); /* freed with the unpacked message, like the bytes it replaces */
  lance__file__v2__any_message__pack(&any, abuf);
  free(ebuf);
  free(dst->data);
  *dst = (ProtobufCBinaryData){alen, abuf};
}

/* Makes fixture `name`'s data file the one rebuild() works on, until src_restore puts the
 * enc21 file back. */
struct src_swap {
  uint8_t *keep;
  size_t keep_len;
};
static struct src_swap src_use(const char *name) {
  char *path = tsup_fixture_file(name);
  ck_assert_msg(path != NULL, "fixture %s missing", name);
  struct src_swap sw = {g_src, g_len};
  g_src = tsup_read_file(path, &g_len);
  ck_assert_ptr_nonnull(g_src);
  free(path);
  return sw;
}
static void src_restore(struct src_swap sw) {
  free(g_src);
  g_src = sw.keep, g_len = sw.keep_len;
}

START_TEST(test_v20_encodings_that_lie) {
  struct src_swap sw = src_use("core20");
  g_page_buf0.buffer_type = LANCE__ENCODINGS__BUFFER__BUFFER_TYPE__page;
  struct {
    AE20 *e;
    const char *want;
  } cases[] = {
      /* three dimensions of 2^20: 2^60 items of 16 bytes, a product of 2^64 */
      {fsl20(1u << 20, fsl20(1u << 20, fsl20(1u << 20, constant20(16)))), "more than 2^32 items"},
      /* a width of 2^32 + 64 bits passed a check made on its low 32 bits */
      {bitpacked20(false, 8, (1ull << 32) + 64), "Bitpacked widths are invalid"},
      {bitpacked20(true, 0, (1ull << 32) + 64), "BitpackedForNonNeg widths are invalid"},
      /* a 4 KB constant under a list of 2^20: 4 GiB for one row (was allocated, 17 s) */
      {fsl20(1u << 20, constant20(4096)), "Constant values too large"},
      /* 0-bit values read nothing, yet 2^28 of them were allocated 8 bytes each */
      {fsl20(1u << 20, fsl20(256, bitpacked20(true, 0, 64))), "BitpackedForNonNeg: too many values"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    uint8_t *b = rebuild(put_enc20, cases[i].e, &len);
    lnc_file *f = NULL;
    struct lnc_error err;
    ck_assert_int_eq(open_bytes("lie20.lance", b, len, &f, &err), 0);
    int rc = take_some(f, "i32", &err);
    ck_assert_msg(rc == LNC_ECORRUPT && strstr(err.message, cases[i].want), "case %zu: %s (%s)", i, lnc_code_name(rc),
                  err.message);
    lnc_file_close(f);
    free(b);
    free20(cases[i].e);
  }
  src_restore(sw);
}
END_TEST

/* Maps whose shape is not Arrow's (a crafted schema; Lance writes entries and keys non-null
 * and the entries a struct of key and value): refused at open, not served as a map that is
 * not one (nullable keys came out as JSON entries holding null). */
static int32_t g_map_field;
static const char *g_map_set;

static void map_mod(Lance__File__FileDescriptor *fd, bool undo) {
  Lance__File__Field *f = fd_field_edit(fd, NULL, g_map_field, undo);
  if (!f) return;
  if (strcmp(g_map_set, "nullable") == 0)
    f->nullable = 1;
  else
    f->logical_type = (char *)g_map_set;
}

START_TEST(test_map_shapes_checked) {
  struct src_swap sw = src_use("map22");
  /* map22: id 0, then m (id 1) -> entries (2) -> key (3), value (4) */
  struct {
    int32_t field;
    const char *set, *want;
  } cases[] = {
      {2, "nullable", "entries or keys are nullable"},
      {3, "nullable", "entries or keys are nullable"},
      {2, "int32", "entries are not a struct of key and value"},
      {2, "list", "entries are not a struct of key and value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    g_map_field = cases[i].field, g_map_set = cases[i].set;
    size_t len;
    uint8_t *b = rebuild_with(NULL, NULL, map_mod, &len);
    expect_open_fail("map.lance", b, len, LNC_ECORRUPT, "'m'", cases[i].want);
    free(b);
  }
  src_restore(sw);
}
END_TEST

/* ---- take on damaged pages ------------------------------------------------------------------ */
struct buf_ref {
  uint64_t off, len;
};
/* Every page buffer of column col (from the original metadata). */
static size_t column_buffers(uint32_t col, struct buf_ref *out, size_t cap) {
  struct footer ft = footer_of(g_src, g_len);
  ck_assert_uint_lt(col, ft.n_cols);
  uint64_t o = rd64(g_src + ft.cmo_start + 16ull * col), l = rd64(g_src + ft.cmo_start + 16ull * col + 8);
  Lance__File__V2__ColumnMetadata *cm = lance__file__v2__column_metadata__unpack(NULL, (size_t)l, g_src + o);
  ck_assert_ptr_nonnull(cm);
  size_t n = 0;
  for (size_t p = 0; p < cm->n_pages; p++)
    for (size_t b = 0; b < cm->pages[p]->n_buffer_offsets && n < cap; b++)
      out[n++] = (struct buf_ref){cm->pages[p]->buffer_offsets[b], cm->pages[p]->buffer_sizes[b]};
  lance__file__v2__column_metadata__free_unpacked(cm, NULL);
  return n;
}

static uint32_t g_rng = 0x9E3779B9u;
static uint8_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return (uint8_t)g_rng;
}

static void fill(uint8_t *p, size_t n, int pattern) {
  for (size_t i = 0; i < n; i++) p[i] = pattern >= 0 ? (uint8_t)pattern : rnd();
}

static int take_some(lnc_file *f, const char *col, struct lnc_error *err) {
  uint64_t nr = lnc_file_num_rows(f);
  uint64_t ids[] = {0, nr - 1, nr / 2, 1, nr / 2 + 1};
  struct ArrowSchema s;
  struct ArrowArray a;
  const char *cols[] = {col};
  memset(err, 0, sizeof *err);
  int rc = lnc_take(f, ids, 5, col ? cols : NULL, col ? 1 : 0, &s, &a, NULL, err);
  if (rc == 0) {
    struct lnc_buf out = {0};
    struct lnc_error e2;
    /* Garbage that decodes is fine; the encoders must cope with whatever came out. */
    lnc_encode_json(&s, &a, &out, &e2);
    lnc_buf_free(&out);
    lnc_encode_arrow_ipc(&s, &a, &out, &e2);
    lnc_buf_free(&out);
    a.release(&a);
    s.release(&s);
  }
  return rc;
}

/* Garbage in the data of a zstd-compressed mini-block column (enc21 zstd_lvl_s = column 1):
 * take must fail with a corrupt-file error that names the column. */
START_TEST(test_garbage_in_chunk) {
  struct buf_ref bufs[16];
  size_t n = column_buffers(1, bufs, 16);
  ck_assert_uint_ge(n, 2);
  uint8_t *b = copy_src();
  fill(b + bufs[1].off, bufs[1].len, 0xA5);
  lnc_file *f;
  struct lnc_error err;
  int rc = open_mem(b, g_len, &f, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  rc = take_some(f, "zstd_lvl_s", &err);
  ck_assert_msg(rc == LNC_ECORRUPT, "want corrupt_file, got %s: %s", lnc_code_name(rc), err.message);
  ck_assert_msg(strstr(err.message, "zstd_lvl_s") || strstr(err.message, "column 1"),
                "message does not name the column: %s", err.message);
  /* The other columns still read. */
  rc = take_some(f, "zstd_i32", &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  lnc_file_close(f);
  free(b);
}
END_TEST

/* Every column in turn, its page buffers garbled (first half, second half, whole) with a
 * pattern: take of all columns may fail or return garbage, but must not crash or read out of
 * bounds, and a failure must be a file error with a message. */
static void sweep(int pattern) {
  struct footer ft = footer_of(g_src, g_len);
  int failed = 0;
  for (uint32_t c = 0; c < ft.n_cols; c++) {
    struct buf_ref bufs[64];
    size_t n = column_buffers(c, bufs, 64);
    for (int half = 0; half < 3; half++) {
      uint8_t *b = copy_src();
      for (size_t i = 0; i < n; i++) {
        uint64_t from = half == 1 ? bufs[i].len / 2 : 0, to = half == 0 ? bufs[i].len / 2 : bufs[i].len;
        fill(b + bufs[i].off + from, to - from, pattern);
      }
      lnc_file *f;
      struct lnc_error err;
      int rc = open_mem(b, g_len, &f, &err);
      ck_assert_msg(rc == 0, "column %u: metadata untouched but open failed: %s", c, err.message);
      rc = take_some(f, NULL, &err);
      if (rc) {
        failed++;
        ck_assert_msg(err.message[0] != 0, "column %u: error %s without a message", c, lnc_code_name(rc));
        ck_assert_msg(rc == LNC_ECORRUPT || rc == LNC_EUNSUPPORTED || rc == LNC_ENOMEM || rc == LNC_ELIMIT,
                      "column %u: unexpected %s: %s", c, lnc_code_name(rc), err.message);
      }
      lnc_file_close(f);
      free(b);
    }
  }
  printf("badfile sweep pattern %d: %d of %u damaged columns refused\n", pattern, failed, 3 * ft.n_cols);
}

START_TEST(test_garbage_sweep) {
  static const int patterns[] = {0x00, 0xFF, 0xA5, -1};
  sweep(patterns[_i]);
}
END_TEST

/* ---- caller errors -------------------------------------------------------------------------- */
START_TEST(test_id_past_end) {
  lnc_file *f;
  struct lnc_error err;
  int rc = open_mem(g_src, g_len, &f, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  uint64_t nr = lnc_file_num_rows(f);
  ck_assert_uint_eq(nr, 1000);
  uint64_t cases[][3] = {
      {1000, 0, 0},
      {0, 5, 1000},
      {UINT64_MAX, 0, 0},
      {999, 1001, 2}};
  for (size_t i = 0; i < 4; i++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    size_t n = cases[i][1] || cases[i][2] ? 3 : 1;
    memset(&err, 0, sizeof err);
    rc = lnc_take(f, cases[i], n, NULL, 0, &s, &a, NULL, &err);
    if (rc == 0) {
      a.release(&a);
      s.release(&s);
    }
    ck_assert_msg(rc == LNC_ERANGE, "case %zu: want out_of_range, got %s (%s)", i, lnc_code_name(rc),
                  err.message);
    ck_assert_msg(strstr(err.message, "1000 rows"), "case %zu: message lacks the row count: %s", i,
                  err.message);
  }
  lnc_file_close(f);
}
END_TEST

START_TEST(test_unknown_column) {
  lnc_file *f;
  struct lnc_error err;
  int rc = open_mem(g_src, g_len, &f, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  const char *bad[] = {"nope", "packed.zz", "", "zstd_i32.x", "ZSTD_I32"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *cols[] = {"zstd_i32", bad[i]};
    uint64_t id = 3;
    struct ArrowSchema s;
    struct ArrowArray a;
    memset(&err, 0, sizeof err);
    rc = lnc_take(f, &id, 1, cols, 2, &s, &a, NULL, &err);
    if (rc == 0) {
      a.release(&a);
      s.release(&s);
    }
    ck_assert_msg(rc == LNC_EINVAL, "'%s': want invalid_argument, got %s (%s)", bad[i], lnc_code_name(rc),
                  err.message);
    ck_assert_msg(strstr(err.message, "column") && (bad[i][0] == 0 || strstr(err.message, bad[i])),
                  "'%s': message does not name the column: %s", bad[i], err.message);
  }
  lnc_file_close(f);
}
END_TEST

START_TEST(test_not_a_file) {
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  char *missing = tsup_path(g_dir, "does-not-exist.lance");
  int rc = lnc_file_open(missing, &f, &err);
  ck_assert_int_eq(rc, LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "does-not-exist.lance"), "%s", err.message);
  free(missing);
  memset(&err, 0, sizeof err);
  rc = lnc_file_open(g_dir, &f, &err); /* a directory */
  if (rc == 0) lnc_file_close(f);
  ck_assert_msg(rc != 0 && err.message[0], "opening a directory: %s", lnc_code_name(rc));
}
END_TEST

/* A page encoding nested thousands of levels deep (ArrayEncoding → Nullable → NoNull → ...)
 * once overflowed the stack inside protobuf-c's unpack; lnc_pb_unpack refuses it before
 * unpacking, and still unpacks a shallow one. Built inside out from the leaf
 * AE{flat(1): Flat{bits_per_value(1): 32}}, each level AE{nullable(2): Nullable{no_nulls(1):
 * NoNull{values(1): AE}}}. */
static uint8_t *nested_encoding(size_t levels, size_t *len) {
  size_t cap = 16 + levels * 3 * 6, n;
  uint8_t *b = malloc(cap);
  ck_assert_ptr_nonnull(b);
  const uint8_t leaf[] = {0x0a, 0x02, 0x08, 0x20};
  memcpy(b + cap - sizeof leaf, leaf, sizeof leaf);
  n = sizeof leaf;
  for (size_t i = 0; i < 3 * levels; i++) {
    uint8_t hdr[6];
    size_t h = 0, v = n;
    hdr[h++] = i % 3 == 2 ? 0x12 : 0x0a; /* NoNull.values, Nullable.no_nulls, AE.nullable */
    do {
      hdr[h++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v >>= 7;
    } while (v);
    memcpy(b + cap - n - h, hdr, h);
    n += h;
  }
  memmove(b, b + cap - n, n);
  *len = n;
  return b;
}

START_TEST(test_pb_nesting_bounded) {
  size_t len;
  uint8_t *b = nested_encoding(3, &len);
  Lance__Encodings__ArrayEncoding *ae = lnc_pb_unpack(&lance__encodings__array_encoding__descriptor, b, len);
  ck_assert_ptr_nonnull(ae);
  ck_assert_int_eq(ae->array_encoding_case, LANCE__ENCODINGS__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE);
  lance__encodings__array_encoding__free_unpacked(ae, NULL);
  free(b);
  b = nested_encoding(100000, &len); /* 300,000 messages in about 1 MB */
  ck_assert_ptr_null(lnc_pb_unpack(&lance__encodings__array_encoding__descriptor, b, len));
  free(b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("badfile");
  TCase *tc = tcase_create("open");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_truncated_short);
  tcase_add_test(tc, test_pb_nesting_bounded);
  tcase_add_test(tc, test_truncated_middle);
  tcase_add_test(tc, test_truncated_keep_footer);
  tcase_add_test(tc, test_bad_magic);
  tcase_add_test(tc, test_versions);
  tcase_add_test(tc, test_null_error_struct);
  tcase_add_test(tc, test_footer_counts);
  tcase_add_test(tc, test_column_metadata_offsets);
  tcase_add_test(tc, test_global_buffer);
  tcase_add_test(tc, test_column_metadata_garbage);
  tcase_add_test(tc, test_rebuild_identity);
  tcase_add_test(tc, test_page_buffers);
  tcase_add_test(tc, test_row_count_bounded);
  tcase_add_test(tc, test_schema_depth_bounded);
  tcase_add_test(tc, test_blob_flag_on_other_types);
  tcase_add_test(tc, test_v20_encodings_that_lie);
  tcase_add_test(tc, test_map_shapes_checked);
  tcase_add_test(tc, test_not_a_file);
  suite_add_tcase(s, tc);
  tc = tcase_create("take");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_garbage_in_chunk);
  tcase_add_loop_test(tc, test_garbage_sweep, 0, 4);
  tcase_add_test(tc, test_id_past_end);
  tcase_add_test(tc, test_unknown_column);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  char *path = tsup_fixture_file("enc21");
  if (!path || !(g_src = tsup_read_file(path, &g_len)) || g_len < 1024) {
    fprintf(stderr, "test_badfile: cannot read the enc21 fixture (%s); run from the repository root\n",
            path ? path : "not in " TSUP_INDEX);
    return EXIT_FAILURE;
  }
  free(path);
  g_dir = tsup_mkdtemp("lnc-badfile-");
  if (!g_dir) {
    perror("mkdtemp");
    return EXIT_FAILURE;
  }
  int failed = tsup_run(suite());
  tsup_rmtree(g_dir);
  free(g_dir);
  free(g_src);
  return failed;
}
