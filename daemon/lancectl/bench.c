/* `lancectl bench`: random takes through the engine (warm search cache, O_DIRECT by default)
 * for a fixed time, then a raw random-read run on the same file with the same read size and
 * queue depth the takes produced, so the two can be compared in one command:
 * device-limit ratio = rows/s / (raw reads/s / reads per row). */
#include "lance.h"
#include "util/clock.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct bench_opts {
  const char *file;
  char **cols;
  size_t ncols;
  unsigned batch, threads;
  double seconds;
  int io_mode;
  uint64_t seed;
};

struct take_thread {
  pthread_t tid;
  const struct bench_opts *o;
  lnc_engine *e;
  const char *path;
  uint64_t num_rows, seed;
  double deadline;
  uint64_t takes, rows, reads, bytes;
  int rc;
  char msg[512];
};

static void *take_main(void *arg) {
  struct take_thread *t = arg;
  struct lnc_error err = {0};
  lnc_worker *w;
  if ((t->rc = lnc_worker_new(t->e, &w, &err))) {
    snprintf(t->msg, sizeof t->msg, "%s", err.message);
    return NULL;
  }
  uint64_t *ids = malloc(t->o->batch * sizeof *ids), s = t->seed;
  struct lnc_take_options opts = {.blobs = LNC_BLOBS_DESCRIPTORS};
  while (ids && lnc_now_s() < t->deadline) {
    for (unsigned i = 0; i < t->o->batch; i++) ids[i] = lnc_xorshift64(&s) % t->num_rows;
    struct ArrowSchema sc;
    struct ArrowArray ar;
    struct lnc_take_stats st = {0};
    t->rc = lnc_engine_take(w, t->path, ids, t->o->batch, (const char *const *)t->o->cols, t->o->ncols, &opts,
                            &sc, &ar, &st, &err);
    if (t->rc) {
      snprintf(t->msg, sizeof t->msg, "%s", err.message);
      break;
    }
    ar.release(&ar);
    sc.release(&sc);
    t->takes++;
    t->rows += t->o->batch;
    t->reads += st.reads;
    t->bytes += st.bytes_read;
  }
  free(ids);
  lnc_worker_free(w);
  return NULL;
}

struct raw_thread {
  pthread_t tid;
  struct lnc_probe probe;
  uint64_t reads;
  int rc;
  char msg[512];
};

static void *raw_main(void *arg) {
  struct raw_thread *t = arg;
  struct lnc_error err = {0};
  if ((t->rc = lnc_read_probe(&t->probe, &t->reads, &err))) snprintf(t->msg, sizeof t->msg, "%s", err.message);
  return NULL;
}

int lnc_cli_bench(int argc, char **argv) {
  struct bench_opts o = {.file = argv[0], .batch = 100, .threads = 1, .seconds = 5, .io_mode = LNC_IO_DIRECT, .seed = 42};
  char *cols_s = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "lancectl: %s needs a value\n", a);
      return 1;
    }
    if (!strcmp(a, "--columns"))
      cols_s = argv[++i];
    else if (!strcmp(a, "--batch"))
      o.batch = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--threads"))
      o.threads = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--seconds"))
      o.seconds = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--seed"))
      o.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--io")) {
      const char *m = argv[++i];
      if (!strcmp(m, "direct"))
        o.io_mode = LNC_IO_DIRECT;
      else if (!strcmp(m, "buffered"))
        o.io_mode = LNC_IO_BUFFERED;
      else {
        fprintf(stderr, "lancectl: --io direct|buffered\n");
        return 1;
      }
    } else {
      fprintf(stderr, "lancectl: unknown bench option %s\n", a);
      return 1;
    }
  }
  if (o.batch == 0 || o.batch > 1000000 || o.threads == 0 || o.threads > 256 || !(o.seconds > 0 && o.seconds <= 3600)) {
    fprintf(stderr, "lancectl: bench needs 1 <= batch <= 1e6, 1 <= threads <= 256, 0 < seconds <= 3600\n");
    return 1;
  }
  char *cols_copy = cols_s ? strdup(cols_s) : NULL;
  if (cols_copy) {
    size_t n = 1;
    for (char *p = cols_copy; *p; p++) n += *p == ',';
    o.cols = calloc(n, sizeof *o.cols);
    for (char *tok = strtok(cols_copy, ","); tok; tok = strtok(NULL, ",")) o.cols[o.ncols++] = tok;
  }
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.io_mode = o.io_mode;
  struct lnc_error err = {0};
  lnc_engine *e;
  int rc = lnc_engine_new(&cfg, &e, &err);
  if (rc) {
    fprintf(stderr, "lancectl: %s\n", err.message);
    free(cols_copy);
    free(o.cols);
    return 2;
  }
  /* Warm the search cache (the initialization phase is not part of the figures). */
  lnc_worker *w;
  uint64_t num_rows = 0;
  if ((rc = lnc_worker_new(e, &w, &err)) ||
      (rc = lnc_engine_describe(w, o.file, NULL, NULL, &num_rows, NULL, NULL, &err))) {
    fprintf(stderr, "lancectl: %s\n", err.message);
    if (w) lnc_worker_free(w);
    lnc_engine_free(e);
    free(cols_copy);
    free(o.cols);
    return rc == LNC_EINVAL || rc == LNC_ERANGE ? 1 : 2;
  }
  lnc_worker_free(w);
  if (num_rows == 0) {
    fprintf(stderr, "lancectl: %s has no rows\n", o.file);
    lnc_engine_free(e);
    return 1;
  }
  struct lnc_engine_stats st0;
  lnc_engine_get_stats(e, &st0);

  struct take_thread *tt = calloc(o.threads, sizeof *tt);
  double t0 = lnc_now_s();
  for (unsigned i = 0; i < o.threads; i++) {
    tt[i] = (struct take_thread){.o = &o, .e = e, .path = o.file, .num_rows = num_rows, .seed = o.seed * 7919 + i + 1, .deadline = t0 + o.seconds};
    pthread_create(&tt[i].tid, NULL, take_main, &tt[i]);
  }
  uint64_t takes = 0, rows = 0, reads = 0, bytes = 0;
  int fail = 0;
  for (unsigned i = 0; i < o.threads; i++) {
    pthread_join(tt[i].tid, NULL);
    takes += tt[i].takes;
    rows += tt[i].rows;
    reads += tt[i].reads;
    bytes += tt[i].bytes;
    if (tt[i].rc && !fail) {
      fail = tt[i].rc;
      fprintf(stderr, "lancectl: %s\n", tt[i].msg);
    }
  }
  double el = lnc_now_s() - t0;
  struct lnc_engine_stats st1;
  lnc_engine_get_stats(e, &st1);
  lnc_engine_free(e);
  free(tt);
  free(cols_copy);
  free(o.cols);
  if (fail) return fail == LNC_EINVAL || fail == LNC_ERANGE ? 1 : 2;
  if (!rows) {
    fprintf(stderr, "lancectl: no takes completed\n");
    return 2;
  }
  double rows_s = (double)rows / el, reads_row = (double)reads / (double)rows;
  printf("takes: %llu in %.2f s (batch %u, %u thread%s, io %s)\n", (unsigned long long)takes, el, o.batch,
         o.threads, o.threads == 1 ? "" : "s", o.io_mode == LNC_IO_DIRECT ? "direct" : "buffered");
  printf("rows/s: %.0f\n", rows_s);
  printf("reads/row: %.3f\n", reads_row);
  printf("bytes read/row: %.1f\n", (double)bytes / (double)rows);
  printf("search cache: %llu bytes resident, %llu loads during the run\n",
         (unsigned long long)st1.resident_bytes, (unsigned long long)(st1.cache_loads - st0.cache_loads));
  if (reads == 0) {
    printf("raw reads/s: n/a (takes needed no reads)\ndevice-limit ratio: n/a\n");
    return 0;
  }

  /* Raw run: the same reads in flight and the same mean read size, made of whole 4 KiB blocks
   * (the takes' reads are block-aligned spans): a mix of the two block counts around it. */
  uint64_t avg = bytes / reads;
  uint64_t len = avg & ~(uint64_t)4095;
  if (len == 0) len = 4096;
  double p_long = avg > len ? (double)(avg - len) / 4096.0 : 0.0;
  uint64_t depth = (reads + takes - 1) / takes;
  if (depth == 0) depth = 1;
  int fd = open(o.file, O_RDONLY | O_CLOEXEC | (o.io_mode == LNC_IO_DIRECT ? O_DIRECT : 0));
  bool direct = o.io_mode == LNC_IO_DIRECT;
  if (fd < 0 && direct && errno == EINVAL) {
    fd = open(o.file, O_RDONLY | O_CLOEXEC);
    direct = false;
  }
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    fprintf(stderr, "lancectl: %s: %s\n", o.file, strerror(errno));
    return 2;
  }
  struct raw_thread *rt = calloc(o.threads, sizeof *rt);
  t0 = lnc_now_s();
  for (unsigned i = 0; i < o.threads; i++) {
    rt[i].probe = (struct lnc_probe){.fd = fd, .direct = direct, .size = (uint64_t)sb.st_size, .len = len, .depth = (unsigned)depth, .seed = o.seed * 104729 + i + 1, .seconds = o.seconds, .p_long = p_long};
    pthread_create(&rt[i].tid, NULL, raw_main, &rt[i]);
  }
  uint64_t raw = 0;
  for (unsigned i = 0; i < o.threads; i++) {
    pthread_join(rt[i].tid, NULL);
    raw += rt[i].reads;
    if (rt[i].rc && !fail) {
      fail = rt[i].rc;
      fprintf(stderr, "lancectl: raw reads: %s\n", rt[i].msg);
    }
  }
  el = lnc_now_s() - t0;
  close(fd);
  free(rt);
  if (fail) return 2;
  double raw_s = (double)raw / el;
  printf("raw reads/s: %.0f (random reads of %llu or %llu bytes, mean %llu, %llu in flight per thread, %s)\n",
         raw_s, (unsigned long long)len, (unsigned long long)len + 4096, (unsigned long long)avg,
         (unsigned long long)depth, direct ? "O_DIRECT" : "buffered");
  printf("device-limit ratio: %.3f\n", rows_s / (raw_s / reads_row));
  return 0;
}
