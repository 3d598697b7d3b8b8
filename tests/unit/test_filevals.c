/* Unit tests for values left in their file (lnc_take_options.file_values_min, issue 34): a
 * take that names its string and binary values' file ranges, or its vectors' (fixed-size
 * lists of floats), instead of copying them encodes to the very Arrow IPC stream of an
 * ordinary take, flat (the encoder reads the ranges) and with refs (the ranges named in the
 * file's mapping, for the socket), for a data file, a dataset (the fragments' parts
 * gathered) and a gather mixing parts in memory and in the file. */
#include "lance.h"
#include "arrow/builder.h"
#include "arrow/concat.h"
#include "io/io.h"
#include "util/buf.h"
#include <check.h>
#include "support/support.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* The fixture with plain variable-width full-zip columns (fz_s: Variable(Flat(32)), checked
 * with lancectl inspect), and the ids asked for: out of order, repeated. */
#define FIX "tests/fixtures/data/enc21" /* the dataset; its data file: tsup_fixture_file */
static const uint64_t IDS[] = {998, 3, 3, 500, 17, 999, 0, 250, 251, 252, 640, 17, 731, 2, 998, 64};
#define NIDS (sizeof IDS / sizeof IDS[0])
/* The fixture with a full-zip vector column of 500 rows (emb: FixedSizeList(128, Flat(32)),
 * all_valid_item; emb_n beside it is nullable, FixedSizeList(128, nullable, Flat(32)), and
 * stays copied), and its ids. */
#define VFIX "tests/fixtures/data/emb21"
static const uint64_t VIDS[] = {499, 3, 3, 250, 17, 0, 251, 252, 17, 2, 499, 64, 128, 129};
#define NVIDS (sizeof VIDS / sizeof VIDS[0])
/* The ids the take functions below ask for: IDS, or a vector test's VIDS. */
static const uint64_t *ids_now = IDS;
static size_t nids_now = NIDS;

static char *data_file_of(const char *name) {
  char *path = tsup_fixture_file(name); /* tests/fixtures/index.json */
  ck_assert_ptr_nonnull(path);
  /* Read once whole: the page cache holds it, as file values need (lnc_source_resident). */
  size_t len;
  free(tsup_read_file(path, &len));
  return path;
}

static char *data_file(void) { return data_file_of("enc21"); }

/* A fixture's data file, open (asserted). */
static lnc_file *open_fixture_of(const char *name) {
  char *path = data_file_of(name);
  lnc_file *f;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s", err.message);
  free(path);
  return f;
}

static lnc_file *open_fixture(void) { return open_fixture_of("enc21"); }

/* An ordinary take (0) and one with every plain string in the file (1), of the same ids. */
struct two {
  struct ArrowSchema s[2];
  struct ArrowArray a[2];
};
typedef void (*take_fn)(void *src, uint64_t file_min, struct ArrowSchema *s, struct ArrowArray *a);
static void take_two(take_fn take, void *src, struct two *t) {
  take(src, 0, &t->s[0], &t->a[0]);
  take(src, 1, &t->s[1], &t->a[1]);
}
static void free_two(struct two *t) {
  for (int i = 0; i < 2; i++) {
    t->a[i].release(&t->a[i]);
    t->s[i].release(&t->s[i]);
  }
}

/* How many arrays under a hold file values. */
static int count_filevals(const struct ArrowArray *a) {
  int n = lnc_array_filevals(a) != NULL;
  for (int64_t i = 0; i < a->n_children; i++) n += count_filevals(a->children[i]);
  return n;
}

/* The stream refs describe: out's bytes with each ref's inserted at its at (file refs read). */
static uint8_t *rebuild(const struct lnc_buf *out, const struct lnc_ipc_ref *refs, size_t n, size_t *len,
                        size_t *file_refs) {
  size_t total = out->len;
  for (size_t i = 0; i < n; i++) total += refs[i].len;
  uint8_t *s = malloc(total ? total : 1), *w = s;
  size_t at = 0;
  *file_refs = 0;
  for (size_t i = 0; i < n; i++) {
    ck_assert_uint_ge(refs[i].at, at);
    memcpy(w, out->data + at, refs[i].at - at);
    w += refs[i].at - at;
    at = refs[i].at;
    ck_assert_ptr_nonnull(refs[i].ptr);
    if (refs[i].fd < 0) {
      memcpy(w, refs[i].ptr, refs[i].len);
    } else { /* a file's: its descriptor and its mapping hold the same bytes */
      ck_assert_int_eq(pread(refs[i].fd, w, refs[i].len, (off_t)refs[i].off), (ssize_t)refs[i].len);
      ck_assert_mem_eq(w, refs[i].ptr, refs[i].len);
      ++*file_refs;
    }
    w += refs[i].len;
  }
  memcpy(w, out->data + at, out->len - at);
  *len = total;
  return s;
}

/* take(file_values_min) → schema and array; asserted. */
static void file_take(void *src, uint64_t file_min, struct ArrowSchema *s, struct ArrowArray *a) {
  struct lnc_take_options o = {.file_values_min = file_min};
  struct lnc_error err = {0};
  ck_assert_msg(lnc_take_ex(src, ids_now, nids_now, NULL, 0, &o, s, a, NULL, &err) == 0, "%s", err.message);
}

static void dataset_take(void *src, uint64_t file_min, struct ArrowSchema *s, struct ArrowArray *a) {
  struct lnc_take_options o = {.file_values_min = file_min};
  struct lnc_error err = {0};
  ck_assert_msg(lnc_dataset_take_ex(src, ids_now, nids_now, NULL, 0, &o, s, a, NULL, &err) == 0, "%s", err.message);
}

/* The three encodings of a file-values take against the flat encoding of an ordinary one. */
static void check_same_stream(take_fn take, void *src) {
  struct two t;
  struct lnc_error err = {0};
  take_two(take, src, &t);
  struct ArrowSchema *s0 = &t.s[0], *s1 = &t.s[1];
  struct ArrowArray *a0 = &t.a[0], *a1 = &t.a[1];
  ck_assert_int_eq(count_filevals(a0), 0);
  ck_assert_int_ge(count_filevals(a1), 1); /* fz_s (and the other plain strings), or emb, in the file */
  struct lnc_buf want = {0}, flat = {0}, out = {0};
  ck_assert(lnc_encode_arrow_ipc(s0, a0, &want, &err) == 0);
  ck_assert_msg(lnc_encode_arrow_ipc(s1, a1, &flat, &err) == 0, "%s", err.message);
  ck_assert_uint_eq(flat.len, want.len);
  ck_assert_mem_eq(flat.data, want.data, want.len);
  for (size_t min_ref = 1; min_ref <= (1u << 20); min_ref <<= 10) {
    struct lnc_ipc_ref *refs = NULL;
    size_t n = 0, len, file_refs;
    out.len = 0;
    ck_assert_msg(lnc_encode_arrow_ipc_refs(s1, a1, min_ref, &out, &refs, &n, &err) == 0, "%s", err.message);
    uint8_t *got = rebuild(&out, refs, n, &len, &file_refs);
    ck_assert_uint_ge(file_refs, 1);
    ck_assert_uint_eq(len, want.len);
    ck_assert_mem_eq(got, want.data, want.len);
    free(got);
    free(refs);
  }
  lnc_buf_free(&want);
  lnc_buf_free(&flat);
  lnc_buf_free(&out);
  free_two(&t);
}

START_TEST(test_file_take_same_stream) {
  lnc_file *f = open_fixture();
  check_same_stream(file_take, f);
  lnc_file_close(f);
}
END_TEST

START_TEST(test_dataset_take_same_stream) {
  free(data_file());
  lnc_dataset *ds;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_dataset_open(FIX, 0, &ds, &err) == 0, "%s", err.message);
  check_same_stream(dataset_take, ds);
  lnc_dataset_close(ds);
}
END_TEST

/* Small values stay copied: a threshold over every row's size leaves no column in the file. */
START_TEST(test_small_values_copied) {
  lnc_file *f = open_fixture();
  struct ArrowSchema s;
  struct ArrowArray a;
  file_take(f, 1u << 30, &s, &a);
  ck_assert_int_eq(count_filevals(&a), 0);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
}
END_TEST

/* A gather of one part in the file and one in memory reads the file's values in: its output
 * is an ordinary array, equal to the gather of two parts in memory. */
START_TEST(test_mixed_gather_reads_in) {
  lnc_file *f = open_fixture();
  struct lnc_error err = {0};
  struct two t;
  take_two(file_take, f, &t);
  struct ArrowSchema *s0 = &t.s[0];
  struct ArrowArray *a0 = &t.a[0], *a1 = &t.a[1];
  int col = -1;
  for (int64_t i = 0; i < a1->n_children && col < 0; i++)
    if (lnc_array_filevals(a1->children[i])) col = (int)i;
  ck_assert_int_ge(col, 0);
  const struct ArrowArray *mixed[2] = {a1->children[col], a0->children[col]}, *plain[2] = {a0->children[col], a0->children[col]};
  struct lnc_row_ref refs[2 * NIDS];
  for (size_t i = 0; i < NIDS; i++) {
    refs[2 * i] = (struct lnc_row_ref){0, (NIDS - 1 - i)};
    refs[2 * i + 1] = (struct lnc_row_ref){1, i};
  }
  struct ArrowArray got, want;
  ck_assert_msg(lnc_arrow_gather_multi(s0->children[col], mixed, 2, refs, 2 * NIDS, &got, &err) == 0, "%s", err.message);
  ck_assert_int_eq(lnc_arrow_gather_multi(s0->children[col], plain, 2, refs, 2 * NIDS, &want, &err), 0);
  ck_assert_ptr_null(lnc_array_filevals(&got));
  const int32_t *go = got.buffers[1], *wo = want.buffers[1];
  ck_assert_mem_eq(go, wo, (2 * NIDS + 1) * 4);
  ck_assert_mem_eq(got.buffers[2], want.buffers[2], (size_t)wo[2 * NIDS]);
  /* Both parts in the file: the output stays there too, with the parts' ranges. */
  const struct ArrowArray *files[2] = {a1->children[col], a1->children[col]};
  struct ArrowArray inf;
  ck_assert_int_eq(lnc_arrow_gather_multi(s0->children[col], files, 2, refs, 2 * NIDS, &inf, &err), 0);
  const struct lnc_filevals *fv = lnc_array_filevals(&inf);
  ck_assert_ptr_nonnull(fv);
  ck_assert_ptr_null(inf.buffers[2]);
  ck_assert_mem_eq(inf.buffers[1], wo, (2 * NIDS + 1) * 4);
  for (size_t i = 0; i < 2 * NIDS; i++) {
    size_t l = (size_t)(wo[i + 1] - wo[i]);
    uint8_t buf[4096];
    ck_assert_uint_le(l, sizeof buf);
    int fd = lnc_filevals_map(fv, i)->fd;
    ck_assert_int_eq(pread(fd, buf, l, (off_t)fv->off[i]), (ssize_t)l);
    ck_assert_mem_eq(buf, (const uint8_t *)want.buffers[2] + wo[i], l);
  }
  inf.release(&inf);
  got.release(&got);
  want.release(&want);
  free_two(&t);
  lnc_file_close(f);
}
END_TEST

/* ---- vectors: fixed-size lists of floats left in the file ---------------------------------- */

/* The child index of the top-level column named name. */
static int column_index(const struct ArrowSchema *s, const char *name) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (!strcmp(s->children[i]->name, name)) return (int)i;
  ck_abort_msg("no column %s", name);
  return -1;
}

/* A vector column's rows are one file range each: its items array holds no value buffer but
 * lnc_filevals of 128 float items (512 bytes) an entry; the nullable one beside it stays
 * copied. The three encodings equal an ordinary take's stream. */
START_TEST(test_vector_take_same_stream) {
  ids_now = VIDS, nids_now = NVIDS;
  lnc_file *f = open_fixture_of("emb21");
  struct two t;
  take_two(file_take, f, &t);
  int emb = column_index(&t.s[1], "emb"), emb_n = column_index(&t.s[1], "emb_n");
  const struct ArrowArray *items = t.a[1].children[emb]->children[0];
  const struct lnc_filevals *fv = lnc_array_filevals(items);
  ck_assert_ptr_nonnull(fv);
  ck_assert_ptr_null(items->buffers[1]);
  ck_assert_uint_eq(fv->per, 128);
  ck_assert_uint_eq(fv->stride, 512);
  ck_assert_int_eq(items->length, (int64_t)NVIDS * 128);
  ck_assert_int_eq(count_filevals(t.a[1].children[emb_n]), 0);
  /* Each entry is that row's 512 bytes in the file: the ordinary take's items. */
  const uint8_t *want = t.a[0].children[emb]->children[0]->buffers[1];
  for (size_t i = 0; i < NVIDS; i++) {
    uint8_t buf[512];
    ck_assert_int_eq(pread(fv->maps[0]->fd, buf, sizeof buf, (off_t)fv->off[i]), 512);
    ck_assert_mem_eq(buf, want + i * 512, 512);
  }
  free_two(&t);
  check_same_stream(file_take, f);
  lnc_file_close(f);
  ids_now = IDS, nids_now = NIDS;
}
END_TEST

/* At a threshold of one vector (512 bytes), a lone row stays copied and four go to the file:
 * a column's rows read (each once, however often asked for) must also hold four times the
 * threshold together. */
START_TEST(test_lone_vector_copied) {
  lnc_file *f = open_fixture_of("emb21");
  struct lnc_take_options o = {.file_values_min = 512};
  const char *cols[] = {"emb"};
  for (size_t n = 1; n <= 5; n += 2) { /* VIDS[..n): 1, 2 (3 repeats) and 4 rows read */
    struct ArrowSchema s;
    struct ArrowArray a;
    struct lnc_error err = {0};
    ck_assert_msg(lnc_take_ex(f, VIDS, n, cols, 1, &o, &s, &a, NULL, &err) == 0, "%s", err.message);
    ck_assert_int_eq(count_filevals(&a), n == 5);
    a.release(&a);
    s.release(&s);
  }
  lnc_file_close(f);
}
END_TEST

START_TEST(test_vector_dataset_take_same_stream) {
  ids_now = VIDS, nids_now = NVIDS;
  free(data_file_of("emb21"));
  lnc_dataset *ds;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_dataset_open(VFIX, 0, &ds, &err) == 0, "%s", err.message);
  check_same_stream(dataset_take, ds);
  lnc_dataset_close(ds);
  ids_now = IDS, nids_now = NIDS;
}
END_TEST

/* The gathers of a dataset's fragments: vector parts all in the file stay there (each output
 * row its part's range); one part in memory and one in the file read the file's in. Both
 * equal the gather of parts in memory. */
START_TEST(test_vector_gathers) {
  ids_now = VIDS, nids_now = NVIDS;
  lnc_file *f = open_fixture_of("emb21");
  struct lnc_error err = {0};
  struct two t;
  take_two(file_take, f, &t);
  int col = column_index(&t.s[0], "emb");
  const struct ArrowSchema *cs = t.s[0].children[col];
  const struct ArrowArray *inf = t.a[1].children[col], *mem = t.a[0].children[col];
  const struct ArrowArray *files[2] = {inf, inf}, *mixed[2] = {inf, mem}, *plain[2] = {mem, mem};
  struct lnc_row_ref refs[2 * NVIDS];
  for (size_t i = 0; i < NVIDS; i++) {
    refs[2 * i] = (struct lnc_row_ref){0, (NVIDS - 1 - i)};
    refs[2 * i + 1] = (struct lnc_row_ref){1, i};
  }
  struct ArrowArray want, got, kept;
  ck_assert_int_eq(lnc_arrow_gather_multi(cs, plain, 2, refs, 2 * NVIDS, &want, &err), 0);
  const uint8_t *w = want.children[0]->buffers[1];
  ck_assert_msg(lnc_arrow_gather_multi(cs, mixed, 2, refs, 2 * NVIDS, &got, &err) == 0, "%s", err.message);
  ck_assert_ptr_null(lnc_array_filevals(got.children[0]));
  ck_assert_mem_eq(got.children[0]->buffers[1], w, 2 * NVIDS * 512);
  ck_assert_msg(lnc_arrow_gather_multi(cs, files, 2, refs, 2 * NVIDS, &kept, &err) == 0, "%s", err.message);
  const struct lnc_filevals *fv = lnc_array_filevals(kept.children[0]);
  ck_assert_ptr_nonnull(fv);
  ck_assert_ptr_null(kept.children[0]->buffers[1]);
  ck_assert_uint_eq(fv->per, 128);
  ck_assert_uint_eq(fv->stride, 512);
  for (size_t i = 0; i < 2 * NVIDS; i++) {
    uint8_t buf[512];
    int fd = lnc_filevals_map(fv, i)->fd;
    ck_assert_int_eq(pread(fd, buf, sizeof buf, (off_t)fv->off[i]), 512);
    ck_assert_mem_eq(buf, w + i * 512, 512);
  }
  /* The kept gather, encoded (flat: the ranges read), is the plain gather's stream (each
   * wrapped as a batch's one column, moved in: released with it). */
  struct ArrowSchema ws[2];
  struct ArrowArray wa[2] = {want, kept};
  struct lnc_buf enc[2] = {{0}};
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(lnc_arrow_schema_copy(cs, &ws[k], &err), 0);
    struct ArrowSchema one;
    struct ArrowArray batch;
    ck_assert_int_eq(lnc_arrow_struct_wrap(1, &ws[k], &wa[k], 2 * NVIDS, &one, &batch, &err), 0);
    ck_assert_msg(lnc_encode_arrow_ipc(&one, &batch, &enc[k], &err) == 0, "%s", err.message);
    batch.release(&batch);
    one.release(&one);
  }
  ck_assert_uint_eq(enc[0].len, enc[1].len);
  ck_assert_mem_eq(enc[0].data, enc[1].data, enc[0].len);
  lnc_buf_free(&enc[0]);
  lnc_buf_free(&enc[1]);
  got.release(&got);
  free_two(&t);
  lnc_file_close(f);
  ids_now = IDS, nids_now = NIDS;
}
END_TEST

/* The array keeps the file's mapping and a descriptor of it: the file closed (a cache evicting it) before the
 * answer is encoded still gives the same bytes. */
START_TEST(test_array_outlives_file) {
  lnc_file *f = open_fixture();
  struct lnc_error err = {0};
  struct two t;
  take_two(file_take, f, &t);
  lnc_file_close(f);
  struct lnc_buf want = {0}, got = {0};
  ck_assert(lnc_encode_arrow_ipc(&t.s[0], &t.a[0], &want, &err) == 0);
  ck_assert_msg(lnc_encode_arrow_ipc(&t.s[1], &t.a[1], &got, &err) == 0, "%s", err.message);
  ck_assert_uint_eq(got.len, want.len);
  ck_assert_mem_eq(got.data, want.data, want.len);
  lnc_buf_free(&want);
  lnc_buf_free(&got);
  free_two(&t);
}
END_TEST

/* A file truncated under an answer that names its bytes (someone rewriting a data file in
 * place, which Lance never does) fails that answer, never the process: the flat encoder's
 * read comes up short (LNC_EIO), a socket write from the mapping fails with EFAULT where a
 * load from it would have been a SIGBUS. */
START_TEST(test_truncated_file_fails_the_answer) {
  char *src = data_file(), *dir = tsup_mkdtemp("filevals"), *copy = tsup_path(dir, "f.lance");
  tsup_sh("cp %s %s", src, copy);
  size_t len;
  free(tsup_read_file(copy, &len)); /* in the page cache */
  lnc_file *f;
  struct lnc_error err = {0};
  ck_assert(lnc_file_open(copy, &f, &err) == 0);
  struct ArrowSchema s;
  struct ArrowArray a;
  file_take(f, 1, &s, &a);
  ck_assert_int_ge(count_filevals(&a), 1);
  struct lnc_buf out = {0};
  struct lnc_ipc_ref *refs = NULL;
  size_t n = 0;
  ck_assert(lnc_encode_arrow_ipc_refs(&s, &a, 1, &out, &refs, &n, &err) == 0);
  ck_assert_int_eq(truncate(copy, 0), 0);
  struct lnc_buf flat = {0};
  ck_assert_int_eq(lnc_encode_arrow_ipc(&s, &a, &flat, &err), LNC_EIO);
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int faulted = 0;
  for (size_t i = 0; i < n; i++) {
    if (refs[i].fd < 0) continue;
    struct iovec v = {(void *)refs[i].ptr, refs[i].len < 4096 ? refs[i].len : 4096};
    ssize_t w = writev(sv[0], &v, 1);
    faulted += w < 0 && errno == EFAULT;
    char sink[4096];
    while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
  }
  ck_assert_int_ge(faulted, 1);
  close(sv[0]);
  close(sv[1]);
  free(refs);
  lnc_buf_free(&out);
  lnc_buf_free(&flat);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
  tsup_rmtree(dir);
  free(copy);
  free(dir);
  free(src);
}
END_TEST

/* fz_s's values of rows ids from f, file values asked for, encoded to ipc when given, and the
 * file offset and length of each row's value when left in the file; returns whether they were. */
static bool fz_s_take(lnc_file *f, const uint64_t *ids, size_t n, uint64_t *off, uint32_t *len,
                      struct lnc_buf *ipc) {
  struct lnc_error err = {0};
  const char *col[] = {"fz_s"};
  struct lnc_take_options o = {.file_values_min = 1};
  struct ArrowSchema s;
  struct ArrowArray a;
  ck_assert_msg(lnc_take_ex(f, ids, n, col, 1, &o, &s, &a, NULL, &err) == 0, "%s", err.message);
  const struct lnc_filevals *fv = lnc_array_filevals(a.children[0]);
  const int32_t *offs = a.children[0]->buffers[1];
  for (size_t i = 0; fv && off && i < n; i++) {
    off[i] = fv->off[i];
    len[i] = (uint32_t)(offs[i + 1] - offs[i]);
  }
  if (ipc) ck_assert_msg(lnc_encode_arrow_ipc(&s, &a, ipc, &err) == 0, "%s", err.message);
  a.release(&a);
  s.release(&s);
  return fv != NULL;
}

/* A copy of src at dst written a page at a time and synced: its page cache holds it in
 * single pages, clean, so that one of them can be dropped (a larger write makes large folios,
 * which a one-page POSIX_FADV_DONTNEED leaves alone, and a dirty page is not dropped). */
static void copy_by_pages(const char *src, const char *dst) {
  size_t n;
  uint8_t *b = tsup_read_file(src, &n);
  ck_assert_ptr_nonnull(b);
  int fd = open(dst, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  ck_assert_int_ge(fd, 0);
  for (size_t at = 0; at < n; at += 4096) {
    size_t k = n - at < 4096 ? n - at : 4096;
    ck_assert_int_eq(pwrite(fd, b + at, k, (off_t)at), (ssize_t)k);
  }
  ck_assert_int_eq(fsync(fd), 0);
  close(fd);
  free(b);
}

/* Drops the OS page of path holding byte off from the page cache (asserted: a test of
 * residency needs it gone; the copy lives on the build's file system, not a tmpfs). */
static void evict_page(const char *path, uint64_t off) {
  int fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  uint64_t page = off & ~(uint64_t)4095;
  ck_assert_int_eq(posix_fadvise(fd, (off_t)page, 4096, POSIX_FADV_DONTNEED), 0);
  ck_assert_msg(!lnc_fd_resident(fd, page, 4096), "page at %llu still cached", (unsigned long long)page);
  close(fd);
}

/* fz_s's values of rows ids from a newly opened path (so no answer about residency is
 * remembered), as fz_s_take. */
static bool fz_s_take_fresh(const char *path, const uint64_t *ids, size_t n, struct lnc_buf *ipc) {
  lnc_file *f;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(path, &f, &err) == 0, "%s", err.message);
  bool in_file = fz_s_take(f, ids, n, NULL, NULL, ipc);
  lnc_file_close(f);
  return in_file;
}

/* Residency is judged by the rows a take reads, not by the whole page of values: a large page
 * (a training table's images, 100 MB pages) nearly always has a few OS pages taken by
 * proactive reclaim, and judged whole it read every row of it in. fz_s's values (10 KB) span
 * three OS pages or more: the first evicted, rows of the second still go out from the file;
 * the second evicted too, they are read in, the same bytes. (Neither page is read when the
 * file opens: its repetition index follows the values, on the last page.) */
START_TEST(test_residency_by_the_rows_read) {
  char *src = data_file(), *dir = tsup_mkdtemp_by_exe("filevals."), *copy = tsup_path(dir, "f.lance");
  struct statfs fs;
  ck_assert_int_eq(statfs(dir, &fs), 0);
  if (fs.f_type == TMPFS_MAGIC) { /* its pages are the file: POSIX_FADV_DONTNEED drops none */
    fprintf(stderr, "test_residency_by_the_rows_read: skipped, the build is on a tmpfs\n");
    tsup_rmtree(dir);
    free(copy);
    free(dir);
    free(src);
    return;
  }
  copy_by_pages(src, copy);
  lnc_file *f;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_file_open(copy, &f, &err) == 0, "%s", err.message);
  enum { ROWS = 1000,
         PICK = 8 };
  uint64_t all[ROWS], off[ROWS];
  uint32_t len[ROWS];
  for (size_t i = 0; i < ROWS; i++) all[i] = i;
  ck_assert(fz_s_take(f, all, ROWS, off, len, NULL)); /* every page cached: in the file */
  lnc_file_close(f);
  uint64_t first = UINT64_MAX, end = 0;
  for (size_t i = 0; i < ROWS; i++)
    if (len[i]) {
      first = off[i] < first ? off[i] : first;
      end = off[i] + len[i] > end ? off[i] + len[i] : end;
    }
  uint64_t second = (first | 4095) + 1; /* the OS page after the first value's */
  ck_assert_msg(second + 4096 <= ((end - 1) & ~4095ull), "fz_s's values span fewer than three OS pages");
  uint64_t ids[PICK];
  size_t k = 0;
  for (size_t i = 0; i < ROWS && k < PICK; i++)
    if (len[i] && off[i] >= second && off[i] + len[i] <= second + 4096) ids[k++] = i;
  ck_assert_uint_eq(k, PICK);
  evict_page(copy, first);
  struct lnc_buf in_file = {0}, read_in = {0};
  ck_assert_msg(fz_s_take_fresh(copy, ids, PICK, &in_file),
                "rows whose pages are cached were read in: the page of values was judged whole");
  evict_page(copy, second);
  ck_assert(!fz_s_take_fresh(copy, ids, PICK, &read_in));
  ck_assert_uint_eq(read_in.len, in_file.len);
  ck_assert_mem_eq(read_in.data, in_file.data, in_file.len);
  lnc_buf_free(&in_file);
  lnc_buf_free(&read_in);
  tsup_rmtree(dir);
  free(copy);
  free(dir);
  free(src);
}
END_TEST

/* ---- copies from the mapping (lnc_filemap_copy: buffered nowait reads) -------------------- */

/* A scratch file of n bytes (byte i = i * 7 + 1), written, so the page cache holds it; its
 * source open on fd. */
static void scratch_source(char **dir, char **path, struct lnc_source *src, size_t n) {
  *dir = tsup_mkdtemp("filemap");
  *path = tsup_path(*dir, "f.bin");
  uint8_t *b = malloc(n);
  for (size_t i = 0; i < n; i++) b[i] = (uint8_t)(i * 7 + 1);
  int fd = open(*path, O_CREAT | O_TRUNC | O_RDWR, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
  free(b);
  *src = (struct lnc_source){.name = *path, .fd = fd, .fd_direct = -1, .size = n};
}

static void scratch_close(char *dir, char *path, struct lnc_source *src) {
  lnc_filemap_unref(src->map);
  close(src->fd);
  tsup_rmtree(dir);
  free(path);
  free(dir);
}

/* A guarded copy reads what pread reads; residency is told by region and remembered. */
START_TEST(test_mapped_copy_reads_the_file) {
  char *dir, *path;
  struct lnc_source src;
  scratch_source(&dir, &path, &src, 3 << 20); /* three 1 MiB regions */
  struct lnc_filemap *m = lnc_source_map(&src);
  ck_assert_ptr_nonnull(m);
  ck_assert_ptr_eq(lnc_source_map(&src), m); /* one mapping per source */
  ck_assert_uint_eq(m->n_regions, 3);
  const uint64_t offs[] = {0, 5, 4093, (1 << 20) - 3, (3 << 20) - 100};
  for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
    uint8_t got[100], want[100];
    ck_assert(lnc_filemap_resident(m, offs[k], sizeof got));
    ck_assert(lnc_filemap_copy(m, got, offs[k], sizeof got));
    ck_assert_int_eq(pread(src.fd, want, sizeof want, (off_t)offs[k]), (ssize_t)sizeof want);
    ck_assert_mem_eq(got, want, sizeof got);
  }
  ck_assert_uint_gt(m->resident_until[0], 0);
  ck_assert_uint_gt(m->resident_until[2], 0);
  scratch_close(dir, path, &src);
}
END_TEST

/* A region the page cache holds only part of is not resident (its reads take preadv2, which
 * fails a miss with LNC_EAGAIN), and its neighbours' answers are their own. The part missing
 * is a hole never written, so never in the page cache. */
START_TEST(test_mapped_region_partly_cached) {
  char *dir = tsup_mkdtemp("filemap"), *path = tsup_path(dir, "sparse.bin");
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, 3 << 20), 0);
  uint8_t *b = calloc(1, 1 << 20);
  ck_assert_int_eq(pwrite(fd, b, 1 << 20, 0), 1 << 20);       /* region 0 */
  ck_assert_int_eq(pwrite(fd, b, 4096, 1 << 20), 4096);       /* the first page of region 1 */
  ck_assert_int_eq(pwrite(fd, b, 1 << 20, 2 << 20), 1 << 20); /* region 2 */
  free(b);
  struct lnc_source src = {.name = path, .fd = fd, .fd_direct = -1, .size = 3 << 20};
  struct lnc_filemap *m = lnc_source_map(&src);
  ck_assert_ptr_nonnull(m);
  ck_assert(lnc_fd_resident(fd, 1 << 20, 4096));
  ck_assert(!lnc_fd_resident(fd, (1 << 20) + 8192, 4096));
  ck_assert(lnc_filemap_resident(m, 0, 4096));
  ck_assert(!lnc_filemap_resident(m, (1 << 20) + 100, 16)); /* a resident page of that region */
  ck_assert(!lnc_filemap_resident(m, (1 << 20) + 100, 16)); /* the answer remembered */
  ck_assert(lnc_filemap_resident(m, 2 << 20, 4096));
  ck_assert(!lnc_filemap_resident(m, (1 << 20) - 8, 16)); /* straddles regions 0 and 1 */
  ck_assert_uint_eq(m->resident_until[1] & 1, 0);
  ck_assert_uint_eq(m->resident_until[2] & 1, 1);
  scratch_close(dir, path, &src);
}
END_TEST

/* A file truncated under its mapping (which Lance never does, but a bad file must fail its
 * own requests): the guarded copy returns false where a plain load would have killed the
 * process with SIGBUS, and copies after it still work. */
START_TEST(test_mapped_copy_survives_truncation) {
  char *dir, *path;
  struct lnc_source src;
  scratch_source(&dir, &path, &src, 1 << 20);
  struct lnc_filemap *m = lnc_source_map(&src);
  ck_assert_ptr_nonnull(m);
  uint8_t buf[8192];
  ck_assert(lnc_filemap_copy(m, buf, 65536, sizeof buf));
  ck_assert_int_eq(ftruncate(src.fd, 4096), 0);
  for (int round = 0; round < 3; round++) /* the handler stays installed and unblocked */
    ck_assert(!lnc_filemap_copy(m, buf, 65536, sizeof buf));
  ck_assert(lnc_filemap_copy(m, buf, 0, 4096)); /* what is left still reads */
  ck_assert_int_eq(buf[1], 8);
  scratch_close(dir, path, &src);
}
END_TEST

static volatile sig_atomic_t theirs;
static void their_handler(int sig) { theirs = sig; }

/* A SIGBUS that is not a guarded copy's reaches the handler that was installed before ours. */
START_TEST(test_foreign_sigbus_goes_on) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = their_handler;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGBUS, &sa, NULL), 0);
  char *dir, *path;
  struct lnc_source src;
  scratch_source(&dir, &path, &src, 65536);
  struct lnc_filemap *m = lnc_source_map(&src);
  uint8_t b[16];
  ck_assert(lnc_filemap_copy(m, b, 0, sizeof b)); /* installs ours, in front of theirs */
  struct sigaction now;
  ck_assert_int_eq(sigaction(SIGBUS, NULL, &now), 0);
  ck_assert(now.sa_handler != their_handler);
  raise(SIGBUS);
  ck_assert_int_eq(theirs, SIGBUS);
  scratch_close(dir, path, &src);
}
END_TEST

/* Where nothing handled SIGBUS before, a SIGBUS that is not a guarded copy's still ends the
 * process as it would have: a load from a truncated mapping outside any copy, and one sent
 * by kill(). Each in a child of its own. */
static void die_by_sigbus(struct lnc_source *src, int how) {
  struct lnc_filemap *m = lnc_source_map(src);
  uint8_t b[16];
  ck_assert(lnc_filemap_copy(m, b, 0, sizeof b)); /* installs ours, in front of the default */
  int null = open("/dev/null", O_WRONLY);         /* a sanitizer's report of this death is expected */
  if (null >= 0) dup2(null, STDERR_FILENO);
  if (how == 0) {
    ck_assert_int_eq(ftruncate(src->fd, 0), 0);
    volatile const uint8_t *p = m->base + 8192;
    b[0] = *p; /* SIGBUS, unguarded */
  } else {
    raise(SIGBUS);
  }
  _exit(0); /* not reached */
}

START_TEST(test_unguarded_sigbus_still_kills) {
  for (int how = 0; how < 2; how++) {
    char *dir, *path;
    struct lnc_source src;
    scratch_source(&dir, &path, &src, 65536);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) die_by_sigbus(&src, how);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
#ifdef __SANITIZE_ADDRESS__
    /* ASan's own SIGBUS handler was there before ours: it reports and exits non-zero. */
    ck_assert_msg(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0), "case %d: status %#x", how, st);
#else
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS, "case %d: status %#x", how, st);
#endif
    scratch_close(dir, path, &src);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("filevals");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_file_take_same_stream);
  tcase_add_test(tc, test_dataset_take_same_stream);
  tcase_add_test(tc, test_small_values_copied);
  tcase_add_test(tc, test_mixed_gather_reads_in);
  tcase_add_test(tc, test_vector_take_same_stream);
  tcase_add_test(tc, test_lone_vector_copied);
  tcase_add_test(tc, test_vector_dataset_take_same_stream);
  tcase_add_test(tc, test_vector_gathers);
  tcase_add_test(tc, test_array_outlives_file);
  tcase_add_test(tc, test_truncated_file_fails_the_answer);
  tcase_add_test(tc, test_residency_by_the_rows_read);
  suite_add_tcase(s, tc);
  TCase *mc = tcase_create("mapped copies");
  tcase_set_timeout(mc, 30);
  tcase_add_test(mc, test_mapped_copy_reads_the_file);
  tcase_add_test(mc, test_mapped_region_partly_cached);
  tcase_add_test(mc, test_mapped_copy_survives_truncation);
  tcase_add_test(mc, test_foreign_sigbus_goes_on);
  tcase_add_test(mc, test_unguarded_sigbus_still_kills);
  suite_add_tcase(s, mc);
  return s;
}

int main(void) { return tsup_run(suite()); }
