/* Micro-benchmark for lib/io/ring.c (not a test; built by hand, see docs/io.md): random 4 KiB
 * O_DIRECT reads/s through lnc_ring_read_batch at batch depths 1/8/32/128, the pool path with and
 * without registered buffers, pread, and a raw liburing loop with and without a registered file.
 *   ring_bench FILE [SECONDS [ONLY]]   (ONLY: a label substring; FILE: 1 GiB, created with random content when missing) */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "io/ring.h"

#define SIZE (1ull << 30)
#define BS 4096u
#define MAXQ 128

static double secs = 3;
static const char *only; /* run only the cases whose label contains this */
static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static uint64_t rnd_block(void) { return (rnd() % (SIZE / BS)) * BS; }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
static double cpu(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void create(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && (uint64_t)st.st_size == SIZE) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || posix_fallocate(fd, 0, SIZE)) { perror(path); exit(1); }
  uint64_t *buf = malloc(1 << 20);
  for (uint64_t off = 0; off < SIZE; off += 1 << 20) {
    for (size_t i = 0; i < (1 << 20) / 8; i++) buf[i] = rnd();
    if (pwrite(fd, buf, 1 << 20, (off_t)off) != 1 << 20) { perror("pwrite"); exit(1); }
  }
  fsync(fd);
  close(fd);
  free(buf);
}

static void report(const char *what, uint64_t ops, double t0, double c0) {
  double dt = now() - t0, dc = cpu() - c0;
  printf("%-46s %8.0f reads/s  %5.1f us CPU/read\n", what, (double)ops / dt, dc * 1e6 / (double)ops);
  fflush(stdout);
}

/* Batches of q random block reads through the engine. misalign: dst off by 8 bytes, so every
 * read bounces through the pool (read_fixed when registered). */
static void engine(int fd, unsigned q, bool force_pread, bool reg, bool misalign, const char *what) {
  if (only && !strstr(what, only)) return;
  struct lnc_ring_config c;
  lnc_ring_config_default(&c);
  c.depth = q < 8 ? 8 : q;
  c.force_pread = force_pread;
  c.register_buffers = reg;
  struct lnc_ring *r;
  struct lnc_error err;
  if (lnc_ring_new(&c, &r, &err)) { fprintf(stderr, "%s\n", err.message); exit(1); }
  uint8_t *mem;
  if (posix_memalign((void **)&mem, BS, (size_t)MAXQ * (BS + BS))) exit(1);
  struct lnc_read reads[MAXQ];
  struct lnc_take_stats s = {0};
  uint64_t ops = 0;
  double t0 = now(), c0 = cpu();
  while (now() - t0 < secs) {
    for (unsigned i = 0; i < q; i++)
      reads[i] = (struct lnc_read){.off = rnd_block(), .len = BS, .dst = mem + (size_t)i * 2 * BS + (misalign ? 8 : 0)};
    if (lnc_ring_read_batch(r, fd, true, SIZE, reads, q, &s, &err)) { fprintf(stderr, "%s\n", err.message); exit(1); }
    ops += q;
  }
  char label[96];
  snprintf(label, sizeof label, "%s%s", what, reg && lnc_ring_uses_uring(r) && !lnc_ring_buffers_registered(r) ? " (registration failed)" : "");
  report(label, ops, t0, c0);
  free(mem);
  lnc_ring_free(r);
}

/* A raw liburing loop that keeps q reads in flight (what fio does), optionally through a
 * registered file: the measurement behind "no registered files" in docs/io.md. */
static void raw(int fd, unsigned q, bool fixed_file, const char *what) {
  if (only && !strstr(what, only)) return;
  struct io_uring ring;
  if (io_uring_queue_init(q, &ring, 0)) exit(1);
  int f = fd;
  if (fixed_file) {
    if (io_uring_register_files(&ring, &fd, 1)) exit(1);
    f = 0;
  }
  uint8_t *mem;
  if (posix_memalign((void **)&mem, BS, (size_t)q * BS)) exit(1);
  uint64_t ops = 0;
  double t0 = now(), c0 = cpu();
  for (unsigned i = 0; i < q; i++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, f, mem + (size_t)i * BS, BS, rnd_block());
    if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, i);
  }
  bool stop = false;
  unsigned inflight = q;
  while (inflight) {
    io_uring_submit_and_wait(&ring, 1);
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&ring, head, cqe) {
      if (cqe->res != (int)BS) { fprintf(stderr, "raw read: %d\n", cqe->res); exit(1); }
      unsigned i = (unsigned)io_uring_cqe_get_data64(cqe);
      seen++;
      ops++;
      if (stop) continue;
      struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
      io_uring_prep_read(sqe, f, mem + (size_t)i * BS, BS, rnd_block());
      if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
      io_uring_sqe_set_data64(sqe, i);
    }
    io_uring_cq_advance(&ring, seen);
    if (stop) inflight -= seen;
    if (!stop && now() - t0 >= secs) stop = true;
  }
  report(what, ops, t0, c0);
  free(mem);
  io_uring_queue_exit(&ring);
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: ring_bench FILE [SECONDS]\n"); return 2; }
  if (argc > 2) secs = atof(argv[2]);
  if (argc > 3) only = argv[3];
  create(argv[1]);
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  if (fd < 0) { perror(argv[1]); return 1; }
  char label[64];
  unsigned qs[] = {1, 8, 32, 128};
  for (int i = 0; i < 4; i++) {
    snprintf(label, sizeof label, "engine, batch of %u, aligned dst", qs[i]);
    engine(fd, qs[i], false, true, false, label);
  }
  engine(fd, 32, false, true, true, "engine, batch of 32, pool, registered");
  engine(fd, 32, false, false, true, "engine, batch of 32, pool, not registered");
  engine(fd, 1, true, true, false, "pread fallback, 1 at a time");
  engine(fd, 32, true, true, false, "pread fallback, batch of 32");
  raw(fd, 32, false, "raw liburing, 32 in flight");
  raw(fd, 32, true, "raw liburing, 32 in flight, registered file");
  close(fd);
  return 0;
}
