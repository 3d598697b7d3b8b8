/* io_uring read engine (lib/io/ring.c): random batches (unaligned, overlapping, duplicate,
 * touching, empty, at EOF) checked byte for byte against a known 8 MiB file, through io_uring
 * and pread, O_DIRECT and buffered; read counts after merging; errors; opening files. */
#include <check.h>
#include "support/support.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <liburing.h>
#include "io/ring.h"
#include "io/loop.h"
#include "lance.h"

#define FILE_SIZE   ((8u << 20) + 1234u) /* not a multiple of the block: the tail comes back short */
#define TMPFS_MAGIC 0x01021994

static char *dir, *path;
static uint8_t *content;

/* ---- fixture: the file lives next to the test binary (<build>/tests/..), i.e. on /work ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return tsup_xorshift64(&rng_state); }

static void make_file(void) {
  dir = tsup_mkdtemp_by_exe("../ring-test."); /* <build>/ring-test.XXXXXX */
  if (!dir) abort();
  struct statfs sf;
  if (statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC)
    fprintf(stderr, "test_ring: note: %s is tmpfs; O_DIRECT may fall back\n", dir);
  path = tsup_path(dir, "data");
  if (!path) abort();
  content = malloc(FILE_SIZE);
  for (size_t i = 0; i < FILE_SIZE; i += 8) {
    uint64_t v = rnd();
    memcpy(content + i, &v, FILE_SIZE - i < 8 ? FILE_SIZE - i : 8);
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, content, FILE_SIZE) != (ssize_t)FILE_SIZE || fsync(fd)) abort();
  close(fd);
}

static void remove_file(void) {
  unlink(path);
  rmdir(dir);
  free(path);
  free(dir);
  free(content);
}

/* Opens the fixture; checks O_DIRECT was granted when asked (ext4 grants it). */
static int open_data(bool direct) {
  int fd;
  bool is_direct;
  struct lnc_error err;
  ck_assert_int_eq(lnc_ring_open(AT_FDCWD, path, direct, &fd, &is_direct, &err), 0);
  ck_assert_int_eq(is_direct, direct);
  return fd;
}

static struct lnc_ring *ring_with(bool force_pread, unsigned depth, uint64_t gap, uint64_t max_merged,
                                  size_t pool, bool reg) {
  struct lnc_ring_config c;
  lnc_ring_config_default(&c);
  c.force_pread = force_pread;
  if (depth) c.depth = depth;
  c.merge_gap = gap;
  if (max_merged) c.max_merged = max_merged;
  if (pool) c.pool_bytes = pool;
  c.register_buffers = reg;
  struct lnc_ring *r;
  struct lnc_error err;
  ck_assert_int_eq(lnc_ring_new(&c, &r, &err), 0);
  ck_assert_int_eq(lnc_ring_uses_uring(r), !force_pread);
  return r;
}

static uint64_t up4k(uint64_t x) { return (x + 4095) / 4096 * 4096; }

/* ---- random batches ----------------------------------------------------------------------- */
struct batch {
  struct lnc_read reads[400];
  size_t n;
};

static void gen_batch(struct batch *b) {
  b->n = 1 + rnd() % 400;
  for (size_t i = 0; i < b->n; i++) {
    struct lnc_read *p = i ? &b->reads[i - 1] : NULL, *q = &b->reads[i];
    uint64_t off, len;
    switch (rnd() % 12) {
    case 0:
      if (p) {
        off = p->off;
        len = p->len;
        break;
      } /* duplicate */ /* fallthrough */
    case 1:
      if (p) {
        off = p->off + p->len;
        len = 1 + rnd() % 5000;
        break;
      } /* touching */ /* fallthrough */
    case 2:
      if (p && p->len) {
        off = p->off + rnd() % p->len;
        len = 1 + rnd() % 9000;
        break;
      } /* overlap */ /* fallthrough */
    case 3:
      off = rnd() % FILE_SIZE;
      len = 0;
      break; /* empty */
    case 4:
      len = 1 + rnd() % 20000;
      off = FILE_SIZE - len;
      break; /* at EOF */
    case 5:
      off = FILE_SIZE;
      len = 0;
      break; /* empty at EOF */
    case 6:
      off = (rnd() % (FILE_SIZE / 4096)) * 4096;
      len = 4096 * (1 + rnd() % 4);
      break; /* aligned */
    case 7:
      off = rnd() % FILE_SIZE;
      len = 1 + rnd() % (1u << 20);
      break; /* large */
    case 8:
      off = (rnd() % 64) * 4096 + rnd() % 4096;
      len = 1 + rnd() % 300;
      break; /* clustered */
    default:
      off = rnd() % FILE_SIZE;
      len = 1 + rnd() % 70000;
      break; /* unaligned */
    }
    if (off > FILE_SIZE) off = FILE_SIZE;
    if (len > FILE_SIZE - off) len = FILE_SIZE - off;
    q->off = off;
    q->len = len;
    /* Exact-size heap buffers so ASan sees any overrun; some block-aligned for the straight path. */
    if (rnd() % 3 == 0) {
      void *m = NULL;
      ck_assert_int_eq(posix_memalign(&m, 4096, len ? len : 1), 0);
      q->dst = m;
    } else {
      q->dst = malloc(len ? len : 1);
    }
    memset(q->dst, 0xAA, len);
  }
}

static void check_batch(const struct batch *b) {
  for (size_t i = 0; i < b->n; i++)
    if (memcmp(b->reads[i].dst, content + b->reads[i].off, b->reads[i].len) != 0)
      ck_abort_msg("read %zu (%llu bytes at %llu) differs", i, (unsigned long long)b->reads[i].len,
                   (unsigned long long)b->reads[i].off);
}

static void free_batch(struct batch *b) {
  for (size_t i = 0; i < b->n; i++) free(b->reads[i].dst);
}

/* Runs `rounds` random batches through r (and, when twin is given, the same batches through
 * twin, which must report the same counts). */
static void random_batches(struct lnc_ring *r, struct lnc_ring *twin, bool direct, int rounds) {
  int fd = open_data(direct);
  struct batch *b = malloc(sizeof *b);
  for (int k = 0; k < rounds; k++) {
    gen_batch(b);
    struct lnc_take_stats s1 = {0}, s2 = {0};
    struct lnc_error err = {0};
    int rc = lnc_ring_read_batch(r, fd, direct, FILE_SIZE, b->reads, b->n, &s1, &err);
    ck_assert_msg(rc == 0, "batch %d: %s", k, err.message);
    check_batch(b);
    ck_assert_uint_ge(s1.bytes_read, 1);
    if (twin) {
      for (size_t i = 0; i < b->n; i++) memset(b->reads[i].dst, 0x55, b->reads[i].len);
      rc = lnc_ring_read_batch(twin, fd, direct, FILE_SIZE, b->reads, b->n, &s2, &err);
      ck_assert_msg(rc == 0, "batch %d (twin): %s", k, err.message);
      check_batch(b);
      ck_assert_uint_eq(s1.reads, s2.reads);
      ck_assert_uint_eq(s1.bytes_read, s2.bytes_read);
    }
    free_batch(b);
  }
  free(b);
  close(fd);
}

START_TEST(test_random_uring_vs_pread) {
  bool direct = _i & 1;
  uint64_t gap = (_i & 2) ? 65536 : 0;
  struct lnc_ring *r = ring_with(false, 0, gap, 0, 0, true);
  struct lnc_ring *p = ring_with(true, 0, gap, 0, 0, true);
  if (geteuid() == 0) ck_assert(lnc_ring_buffers_registered(r));
  random_batches(r, p, direct, 60);
  lnc_ring_free(r);
  lnc_ring_free(p);
}
END_TEST

/* Tight corners: a tiny SQ (batches exceed it), a tiny pool (rounds, temporary buffers for reads
 * larger than the pool), no registered buffers, small max_merged. */
START_TEST(test_random_tight) {
  bool direct = _i & 1;
  struct lnc_ring *r = ring_with(false, 4, 4096, 128 << 10, 256 << 10, (_i & 2) != 0);
  struct lnc_ring *p = ring_with(true, 4, 4096, 128 << 10, 256 << 10, false);
  random_batches(r, p, direct, 40);
  lnc_ring_free(r);
  lnc_ring_free(p);
}
END_TEST

/* ---- counts ------------------------------------------------------------------------------- */
static struct lnc_take_stats run(struct lnc_ring *r, bool direct, struct lnc_read *reads, size_t n) {
  int fd = open_data(direct);
  struct lnc_take_stats s = {0};
  struct lnc_error err = {0};
  int rc = lnc_ring_read_batch(r, fd, direct, FILE_SIZE, reads, n, &s, &err);
  ck_assert_msg(rc == 0, "%s", err.message);
  for (size_t i = 0; i < n; i++) ck_assert(memcmp(reads[i].dst, content + reads[i].off, reads[i].len) == 0);
  close(fd);
  return s;
}

START_TEST(test_counts_disjoint) {
  bool direct = _i & 1, pread_mode = _i & 2;
  struct lnc_ring *r = ring_with(pread_mode, 0, 0, 0, 0, true);
  static uint8_t bufs[50][100];
  struct lnc_read reads[50];
  for (int i = 0; i < 50; i++) /* 100 bytes every ~160 KiB, given out of order */
    reads[i] = (struct lnc_read){.off = (uint64_t)((i * 37) % 50) * 160000 + 17, .len = 100, .dst = bufs[i]};
  struct lnc_take_stats s = run(r, direct, reads, 50);
  ck_assert_uint_eq(s.reads, 50);
  ck_assert_uint_eq(s.bytes_read, direct ? 50 * 4096 : 50 * 100);
  lnc_ring_free(r);
}
END_TEST

START_TEST(test_counts_one_block) {
  bool pread_mode = _i & 1;
  struct lnc_ring *r = ring_with(pread_mode, 0, 0, 0, 0, true);
  static uint8_t bufs[10][100];
  struct lnc_read reads[10];
  for (int i = 0; i < 10; i++) /* ten separate 100-byte reads inside [8192, 12288) */
    reads[i] = (struct lnc_read){.off = 8192 + (uint64_t)i * 400 + 3, .len = 100, .dst = bufs[i]};
  struct lnc_take_stats s = run(r, true, reads, 10);
  ck_assert_uint_eq(s.reads, 1);
  ck_assert_uint_eq(s.bytes_read, 4096);
  s = run(r, false, reads, 10); /* buffered: gaps of 300 bytes keep them apart */
  ck_assert_uint_eq(s.reads, 10);
  lnc_ring_free(r);
  r = ring_with(pread_mode, 0, 300, 0, 0, true);
  s = run(r, false, reads, 10);
  ck_assert_uint_eq(s.reads, 1);
  ck_assert_uint_eq(s.bytes_read, 9 * 400 + 100);
  lnc_ring_free(r);
}
END_TEST

START_TEST(test_merge_gap) {
  bool pread_mode = _i & 1;
  static uint8_t a[64], b[64], big[10][65536];
  /* buffered: a gap of exactly 1000 bytes */
  struct lnc_read reads[2] = {
      {.off = 5000, .len = 64, .dst = a},
      {.off = 6064, .len = 64, .dst = b}};
  struct lnc_ring *r = ring_with(pread_mode, 0, 999, 0, 0, true);
  ck_assert_uint_eq(run(r, false, reads, 2).reads, 2);
  lnc_ring_free(r);
  r = ring_with(pread_mode, 0, 1000, 0, 0, true);
  ck_assert_uint_eq(run(r, false, reads, 2).reads, 1);
  ck_assert_uint_eq(run(r, false, reads, 2).bytes_read, 1128);
  lnc_ring_free(r);
  /* direct: blocks 1 and 3, one block (4096 bytes) apart after alignment */
  reads[0].off = 4096 + 10;
  reads[1].off = 3 * 4096 + 10;
  r = ring_with(pread_mode, 0, 4095, 0, 0, true);
  ck_assert_uint_eq(run(r, true, reads, 2).reads, 2);
  lnc_ring_free(r);
  r = ring_with(pread_mode, 0, 4096, 0, 0, true);
  struct lnc_take_stats s = run(r, true, reads, 2);
  ck_assert_uint_eq(s.reads, 1);
  ck_assert_uint_eq(s.bytes_read, 3 * 4096);
  lnc_ring_free(r);
  /* max_merged: ten touching 64 KiB reads, at most 128 KiB per read -> 5 reads */
  struct lnc_read t[10];
  for (int i = 0; i < 10; i++)
    t[i] = (struct lnc_read){.off = 1000000 + (uint64_t)i * 65536, .len = 65536, .dst = big[i]};
  r = ring_with(pread_mode, 0, 0, 128 << 10, 0, true);
  ck_assert_uint_eq(run(r, false, t, 10).reads, 5);
  lnc_ring_free(r);
  r = ring_with(pread_mode, 0, 0, 0, 0, true); /* default 1 MiB: one read */
  ck_assert_uint_eq(run(r, false, t, 10).reads, 1);
  lnc_ring_free(r);
}
END_TEST

/* The last bytes of a file whose size is not a multiple of the block; a read larger than the
 * pool (temporary buffer); a block-aligned read straight into an aligned dst. */
START_TEST(test_eof_and_big) {
  bool direct = _i & 1, pread_mode = _i & 2;
  struct lnc_ring *r = ring_with(pread_mode, 0, 0, 0, 64 << 10, true);
  uint8_t tail[1];
  uint8_t *big = malloc(3u << 20), *al = NULL;
  ck_assert_int_eq(posix_memalign((void **)&al, 4096, 8192), 0);
  struct lnc_read reads[3] = {
      {.off = FILE_SIZE - 1, .len = 1, .dst = tail},
      {.off = 12345, .len = 3u << 20, .dst = big},
      {.off = 4u << 20, .len = 8192, .dst = al}};
  struct lnc_take_stats s = run(r, direct, reads, 3);
  ck_assert_uint_eq(s.reads, 3);
  if (direct)
    ck_assert_uint_eq(s.bytes_read, 1234 + (up4k(12345 + (3u << 20)) - 12288) + 8192);
  else
    ck_assert_uint_eq(s.bytes_read, 1 + (3u << 20) + 8192);
  free(big);
  free(al);
  lnc_ring_free(r);
}
END_TEST

/* ---- errors -------------------------------------------------------------------------------- */
START_TEST(test_past_eof) {
  bool direct = _i & 1, pread_mode = _i & 2;
  struct lnc_ring *r = ring_with(pread_mode, 0, 0, 0, 0, true);
  int fd = open_data(direct);
  uint8_t buf[200];
  memset(buf, 0x11, sizeof buf);
  struct lnc_read reads[2] = {
      {.off = 0, .len = 10, .dst = buf},
      {.off = FILE_SIZE - 100, .len = 101, .dst = buf + 10}};
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ring_read_batch(r, fd, direct, FILE_SIZE, reads, 2, NULL, &err), LNC_ECORRUPT);
  ck_assert_int_eq(err.code, LNC_ECORRUPT);
  ck_assert_ptr_nonnull(strstr(err.message, "past the end"));
  ck_assert_int_eq(buf[0], 0x11); /* refused before any I/O */
  /* offset overflow */
  reads[1] = (struct lnc_read){.off = UINT64_MAX - 5, .len = 10, .dst = buf};
  ck_assert_int_eq(lnc_ring_read_batch(r, fd, direct, FILE_SIZE, reads, 2, NULL, &err), LNC_ECORRUPT);
  /* the caller believes the file is longer than it is: the kernel's 0 is an I/O error */
  reads[1] = (struct lnc_read){.off = FILE_SIZE + 5000, .len = 100, .dst = buf};
  ck_assert_int_eq(lnc_ring_read_batch(r, fd, direct, FILE_SIZE + 100000, reads, 2, NULL, &err), LNC_EIO);
  ck_assert_ptr_nonnull(strstr(err.message, "file ends"));
  /* ... and one that starts before the real end: a short read, resubmitted, then the end */
  uint8_t ok[300];
  struct lnc_read span[2] = {
      {.off = FILE_SIZE - 100, .len = 150, .dst = buf},
      {.off = 1 << 20, .len = 300, .dst = ok}};
  struct lnc_take_stats s = {0};
  ck_assert_int_eq(lnc_ring_read_batch(r, fd, direct, FILE_SIZE + 100000, span, 2, &s, &err), LNC_EIO);
  ck_assert_msg(strstr(err.message, "file ends at 8389842") != NULL, "%s", err.message);
  ck_assert_uint_eq(s.reads, 2);
  close(fd);
  lnc_ring_free(r);
}
END_TEST

START_TEST(test_bad_fd) {
  bool direct = _i & 1, pread_mode = _i & 2;
  struct lnc_ring *r = ring_with(pread_mode, 0, 0, 0, 0, true);
  uint8_t buf[3][100];
  struct lnc_read reads[3] = {
      {.off = 0, .len = 100, .dst = buf[0]},
      {.off = 1 << 20, .len = 100, .dst = buf[1]},
      {.off = 2 << 20, .len = 100, .dst = buf[2]}};
  struct lnc_error err = {0};
  struct lnc_take_stats s = {0};
  ck_assert_int_eq(lnc_ring_read_batch(r, -1, direct, FILE_SIZE, reads, 3, &s, &err), LNC_EIO);
  ck_assert_ptr_nonnull(strstr(err.message, strerror(EBADF)));
  int fd = open_data(direct);
  close(fd); /* now a closed descriptor */
  ck_assert_int_eq(lnc_ring_read_batch(r, fd, direct, FILE_SIZE, reads, 3, &s, &err), LNC_EIO);
  int pipefd[2]; /* not seekable */
  ck_assert_int_eq(pipe(pipefd), 0);
  close(pipefd[1]); /* io_uring ignores the offset on a pipe: with no writer it reads 0, never blocks */
  ck_assert_int_eq(lnc_ring_read_batch(r, pipefd[0], direct, FILE_SIZE, reads, 3, &s, &err), LNC_EIO);
  close(pipefd[0]);
  /* the ring still works afterwards */
  run(r, direct, reads, 3);
  ck_assert_int_eq(lnc_ring_read_batch(r, -1, direct, FILE_SIZE, reads, 0, NULL, &err), 0);
  lnc_ring_free(r);
}
END_TEST

/* The ring's once-per-process notices, captured (and checked) instead of printed. */
static char logged[8][512];
static int nlogged;
static void capture(const char *line) {
  if (nlogged < 8) snprintf(logged[nlogged++], sizeof logged[0], "%s", line);
}

/* ---- io_uring_enter failing for good ----------------------------------------------------- */
/* This binary is linked with -Wl,--wrap=io_uring_submit_and_wait (Makefile), so ring.c's calls
 * come here. While enters_to_fail is positive, a call answers -ENOMEM without waiting, having
 * first handed the kernel what is queued when fail_after_submit is set: a kernel that took the
 * reads and then stopped answering, or one that never took them. */
int __real_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
static int enters_to_fail;
static bool fail_after_submit;

int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr) {
  if (enters_to_fail <= 0) return __real_io_uring_submit_and_wait(ring, wait_nr);
  enters_to_fail--;
  if (fail_after_submit) io_uring_submit(ring);
  return -ENOMEM;
}

struct late_writer {
  int fd;
  atomic_int written;
};

static void *write_late(void *arg) {
  struct late_writer *w = arg;
  usleep(200 * 1000);
  atomic_store(&w->written, 1);
  if (write(w->fd, "sixteen bytes ok", 16) != 16) abort();
  return NULL;
}

/* _i = 0: the kernel took the read (a pipe read: it flies until the writer writes, 200 ms
 * later), then every io_uring_enter fails. The ring gives io_uring up, but returns only once
 * that read has landed: the caller may free its buffer the moment we return.
 * _i = 1: the kernel never took it: nothing is in flight, the ring gives up at once.
 * Either way the batch fails with the enter's error and the ring reads on through pread. */
START_TEST(test_enter_fails_for_good) {
  bool submitted = _i == 0;
  struct lnc_ring *r = ring_with(false, 0, 0, 0, 0, true);
  int pipefd[2];
  ck_assert_int_eq(pipe(pipefd), 0);
  struct late_writer w = {.fd = pipefd[1]};
  pthread_t t;
  if (submitted) ck_assert_int_eq(pthread_create(&t, NULL, write_late, &w), 0);
  uint8_t buf[16] = {0};
  struct lnc_read rd = {.off = 0, .len = sizeof buf, .dst = buf};
  struct lnc_error err = {0};
  enters_to_fail = 1000;
  fail_after_submit = submitted;
  nlogged = 0;
  lnc_ring_set_log(capture); /* the notice is expected here: checked, not printed */
  int rc = lnc_ring_read_batch(r, pipefd[0], false, FILE_SIZE, &rd, 1, NULL, &err);
  lnc_ring_set_log(NULL);
  enters_to_fail = 0;
  ck_assert_int_eq(nlogged, 1);
  ck_assert_msg(strstr(logged[0], "io_uring failed (Cannot allocate memory); using pread"), "%s", logged[0]);
  ck_assert_int_eq(rc, LNC_EIO);
  ck_assert_msg(strstr(err.message, "io_uring_enter failed") != NULL, "%s", err.message);
  ck_assert(!lnc_ring_uses_uring(r));
  if (submitted) {
    ck_assert_msg(atomic_load(&w.written), "returned while the read was still in flight");
    ck_assert(memcmp(buf, "sixteen bytes ok", 16) == 0);
    pthread_join(t, NULL);
  }
  close(pipefd[0]);
  close(pipefd[1]);
  uint8_t a[100], b[5000];
  struct lnc_read reads[2] = {{.off = 7, .len = sizeof a, .dst = a}, {.off = 1 << 20, .len = sizeof b, .dst = b}};
  run(r, false, reads, 2);
  run(r, true, reads, 2);
  lnc_ring_free(r);
}
END_TEST

/* ---- setup and opening ------------------------------------------------------------------- */
START_TEST(test_open) {
  int fd;
  bool d;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_ring_open(AT_FDCWD, "/nonexistent/ring/x", true, &fd, &d, &err), LNC_ENOTFOUND);
  ck_assert_int_eq(lnc_ring_open(AT_FDCWD, "/nonexistent/ring/x", false, &fd, &d, &err), LNC_ENOTFOUND);
  /* relative to a directory descriptor */
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  ck_assert_int_eq(lnc_ring_open(dfd, "data", true, &fd, &d, &err), 0);
  ck_assert(d);
  ck_assert_int_ne(fcntl(fd, F_GETFL) & O_DIRECT, 0);
  close(fd);
  ck_assert_int_eq(lnc_ring_open(dfd, "data", false, &fd, &d, &err), 0);
  ck_assert(!d);
  close(fd);
  close(dfd);
  /* procfs refuses O_DIRECT: buffered, and one notice for the whole process */
  lnc_ring_set_log(capture);
  ck_assert_int_eq(lnc_ring_open(AT_FDCWD, "/proc/self/status", true, &fd, &d, &err), 0);
  ck_assert(!d);
  close(fd);
  ck_assert_int_eq(lnc_ring_open(AT_FDCWD, "/proc/self/stat", true, &fd, &d, &err), 0);
  close(fd);
  lnc_ring_set_log(NULL);
  ck_assert_int_eq(nlogged, 1);
  ck_assert_str_eq(logged[0], "lanced: O_DIRECT not supported on /proc/self/status's filesystem; using buffered reads");
}
END_TEST

START_TEST(test_config) {
  struct lnc_ring *r;
  struct lnc_error err = {0};
  struct lnc_ring_config c;
  lnc_ring_config_default(&c);
  c.block = 3000;
  ck_assert_int_eq(lnc_ring_new(&c, &r, &err), LNC_EINVAL);
  ck_assert_int_eq(lnc_ring_new(NULL, &r, &err), 0); /* defaults */
  ck_assert(lnc_ring_uses_uring(r));
  lnc_ring_free(r);
  lnc_ring_free(NULL);
  setenv("LNC_RING_PREAD", "1", 1); /* operators can force the fallback */
  ck_assert_int_eq(lnc_ring_new(NULL, &r, &err), 0);
  ck_assert(!lnc_ring_uses_uring(r));
  ck_assert(!lnc_ring_buffers_registered(r));
  unsetenv("LNC_RING_PREAD");
  run(r, true, &(struct lnc_read){.off = 77, .len = 5000, .dst = (uint8_t[5000]){0}}, 1);
  lnc_ring_free(r);
  /* 512-byte blocks: still correct, fewer bytes read */
  c.block = 512;
  ck_assert_int_eq(lnc_ring_new(&c, &r, &err), 0);
  uint8_t buf[10];
  struct lnc_take_stats s = run(r, true, &(struct lnc_read){.off = 1000, .len = 10, .dst = buf}, 1);
  ck_assert_uint_eq(s.bytes_read, 512);
  lnc_ring_free(r);
}
END_TEST

static void *thread_body(void *arg) {
  struct lnc_ring *a, *b;
  struct lnc_error err;
  if (lnc_ring_for_thread(NULL, &a, &err) || lnc_ring_for_thread(NULL, &b, &err) || a != b) return NULL;
  int fd = open(path, O_RDONLY | O_DIRECT);
  uint8_t buf[300];
  struct lnc_read rd = {.off = 999, .len = 300, .dst = buf};
  int rc = lnc_ring_read_batch(a, fd, true, FILE_SIZE, &rd, 1, NULL, &err);
  close(fd);
  *(void **)arg = a;
  return rc == 0 && memcmp(buf, content + 999, 300) == 0 ? arg : NULL;
}

START_TEST(test_thread_ring) {
  pthread_t t[2];
  void *rings[2], *ok[2];
  for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, thread_body, &rings[i]), 0);
  for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_join(t[i], &ok[i]), 0);
  ck_assert_ptr_nonnull(ok[0]);
  ck_assert_ptr_nonnull(ok[1]); /* each thread had its own, freed at exit (ASan would say otherwise) */
}
END_TEST

/* ---- a loop task's reads (guest ring) ------------------------------------------------------ */
struct guest_job {
  int fd;
  struct lnc_read *reads;
  size_t n;
  int rc;
  bool done;
  bool fixed; /* the task's ring reads into a registered pool */
};

/* An engine in io_mode direct and a loop on it (the caller frees both). */
static void direct_loop(lnc_engine **e, lnc_loop **l) {
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.io_mode = LNC_IO_DIRECT;
  ck_assert_int_eq(lnc_engine_new(&cfg, e, NULL), 0);
  ck_assert_int_eq(lnc_loop_new(0, l, NULL), 0);
}

static void guest_read(void *arg) {
  struct guest_job *j = arg;
  struct lnc_error err = {0};
  j->fixed = lnc_ring_buffers_registered(lnc_task_ring());
  j->rc = lnc_ring_read_batch(lnc_task_ring(), j->fd, true, FILE_SIZE, j->reads, j->n, NULL, &err);
  j->done = true;
}

/* Tasks parked at once each read into their own registered pool (a slot of the loop's
 * buffer table per task): were two pools given one slot, one task's bytes would land in the
 * other's pool and the comparison below would fail. Two rounds: the second reuses the tasks
 * (and slots) of the first. Unaligned reads, so they go through the pool, not in place. */
START_TEST(test_guest_pools_fixed) {
  lnc_engine *e;
  lnc_loop *l;
  direct_loop(&e, &l);
  enum { TASKS = 4,
         READS = 3,
         LEN = 5000 };
  int fd = open_data(true);
  for (int round = 0; round < 2; round++) {
    struct lnc_read reads[TASKS][READS];
    uint8_t *dst = malloc((size_t)TASKS * READS * LEN);
    struct guest_job jobs[TASKS];
    for (int t = 0; t < TASKS; t++) {
      for (int k = 0; k < READS; k++)
        reads[t][k] = (struct lnc_read){.off = (uint64_t)(round * 7 + t * 3 + k) * 40000 + 11 + t, .len = LEN, .dst = dst + ((size_t)t * READS + k) * LEN};
      jobs[t] = (struct guest_job){.fd = fd, .reads = reads[t], .n = READS};
      int parked = 0;
      ck_assert_int_eq(lnc_loop_spawn(l, guest_read, &jobs[t], &parked, NULL), 0);
      if (lnc_loop_uses_uring(l)) ck_assert_int_eq(parked, 1); /* all in flight together */
    }
    for (int it = 0; it < 1000; it++) {
      bool all = true;
      for (int t = 0; t < TASKS; t++) all = all && jobs[t].done;
      if (all) break;
      ck_assert_int_eq(lnc_loop_wait(l, NULL, 0, 1000, NULL, NULL), 0);
    }
    for (int t = 0; t < TASKS; t++) {
      ck_assert(jobs[t].done);
      ck_assert_int_eq(jobs[t].rc, 0);
      if (lnc_loop_uses_uring(l) && geteuid() == 0) ck_assert(jobs[t].fixed); /* root: no RLIMIT_MEMLOCK */
      for (int k = 0; k < READS; k++)
        ck_assert_msg(memcmp(reads[t][k].dst, content + reads[t][k].off, LEN) == 0, "round %d task %d read %d", round, t, k);
    }
    free(dst);
  }
  close(fd);
  lnc_loop_free(l);
  lnc_engine_free(e);
}
END_TEST

/* A task's round of reads that overflows its guest pool (256 KiB) still goes to the kernel
 * at once: the task parks once for the whole round, where it used to wait for the pool to
 * drain (one device round trip per pool-full). 48 unaligned reads of ~16 KiB, 64 KiB apart. */
START_TEST(test_guest_round_past_pool) {
  lnc_engine *e;
  lnc_loop *l;
  direct_loop(&e, &l);
  enum { N = 48,
         LEN = 16000,
         STRIDE = 64 << 10 };
  struct lnc_read reads[N];
  uint8_t *dst = malloc((size_t)N * LEN + 1);
  for (size_t i = 0; i < N; i++)
    reads[i] = (struct lnc_read){.off = i * STRIDE + 100, .len = LEN, .dst = dst + 1 + i * LEN};
  struct guest_job j = {.fd = open_data(true), .reads = reads, .n = N};
  struct lnc_loop_stats s0, s1;
  lnc_loop_get_stats(l, &s0);
  int parked = 0;
  ck_assert_int_eq(lnc_loop_spawn(l, guest_read, &j, &parked, NULL), 0);
  for (int it = 0; it < 1000 && !j.done; it++) ck_assert_int_eq(lnc_loop_wait(l, NULL, 0, 1000, NULL, NULL), 0);
  ck_assert(j.done);
  ck_assert_int_eq(j.rc, 0);
  for (size_t i = 0; i < N; i++) ck_assert_msg(memcmp(reads[i].dst, content + reads[i].off, LEN) == 0, "read %zu", i);
  lnc_loop_get_stats(l, &s1);
  if (lnc_loop_uses_uring(l)) {
    ck_assert_int_eq(parked, 1);
    ck_assert_uint_eq(s1.parks - s0.parks, 1);
  }
  close(j.fd);
  free(dst);
  lnc_loop_free(l);
  lnc_engine_free(e);
}
END_TEST

int main(void) {
  make_file();
  Suite *s = suite_create("ring");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_random_uring_vs_pread, 0, 4);
  tcase_add_loop_test(tc, test_random_tight, 0, 4);
  tcase_add_loop_test(tc, test_counts_disjoint, 0, 4);
  tcase_add_loop_test(tc, test_counts_one_block, 0, 2);
  tcase_add_loop_test(tc, test_merge_gap, 0, 2);
  tcase_add_loop_test(tc, test_eof_and_big, 0, 4);
  tcase_add_loop_test(tc, test_past_eof, 0, 4);
  tcase_add_loop_test(tc, test_bad_fd, 0, 4);
  tcase_add_loop_test(tc, test_enter_fails_for_good, 0, 2);
  tcase_add_test(tc, test_open);
  tcase_add_test(tc, test_config);
  tcase_add_test(tc, test_thread_ring);
  tcase_add_test(tc, test_guest_round_past_pool);
  tcase_add_test(tc, test_guest_pools_fixed);
  suite_add_tcase(s, tc);
  int failed = tsup_run(s);
  remove_file();
  return failed;
}
