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

/* What the take phase measured. */
struct take_totals {
  uint64_t takes, rows, reads, bytes;
  double seconds;
  int fail;
};

/* The command line into o (o->cols point into *cols_copy, which the caller frees); 0, or the
 * exit status for a usage error. */
static int parse_bench_opts(int argc, char **argv, struct bench_opts *o, char **cols_copy) {
  *o = (struct bench_opts){.file = argv[0], .batch = 100, .threads = 1, .seconds = 5, .io_mode = LNC_IO_DIRECT, .seed = 42};
  const char *cols_s = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[++i] : NULL;
    if (!v) return fprintf(stderr, "lancectl: %s needs a value\n", a), 1;
    if (!strcmp(a, "--columns"))
      cols_s = v;
    else if (!strcmp(a, "--batch"))
      o->batch = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(a, "--threads"))
      o->threads = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(a, "--seconds"))
      o->seconds = strtod(v, NULL);
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--io") && (!strcmp(v, "direct") || !strcmp(v, "buffered")))
      o->io_mode = !strcmp(v, "direct") ? LNC_IO_DIRECT : LNC_IO_BUFFERED;
    else if (!strcmp(a, "--io"))
      return fprintf(stderr, "lancectl: --io direct|buffered\n"), 1;
    else
      return fprintf(stderr, "lancectl: unknown bench option %s\n", a), 1;
  }
  if (o->batch == 0 || o->batch > 1000000 || o->threads == 0 || o->threads > 256 || !(o->seconds > 0 && o->seconds <= 3600))
    return fprintf(stderr, "lancectl: bench needs 1 <= batch <= 1e6, 1 <= threads <= 256, 0 < seconds <= 3600\n"), 1;
  if (cols_s && (*cols_copy = strdup(cols_s))) {
    size_t n = 1;
    for (char *p = *cols_copy; *p; p++) n += *p == ',';
    if (!(o->cols = calloc(n, sizeof *o->cols))) return fprintf(stderr, "lancectl: out of memory\n"), 2;
    for (char *tok = strtok(*cols_copy, ","); tok; tok = strtok(NULL, ",")) o->cols[o->ncols++] = tok;
  }
  return 0;
}

/* An engine for the file with its search cache loaded (the initialization phase is not part
 * of the figures): 0 with *e and *num_rows, or the exit status. */
static int open_warm(const struct bench_opts *o, lnc_engine **e, uint64_t *num_rows) {
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.io_mode = o->io_mode;
  struct lnc_error err = {0};
  lnc_worker *w = NULL;
  int rc = lnc_engine_new(&cfg, e, &err);
  if (!rc && !(rc = lnc_worker_new(*e, &w, &err)))
    rc = lnc_engine_describe(w, o->file, NULL, NULL, num_rows, NULL, NULL, &err);
  lnc_worker_free(w);
  if (!rc && *num_rows == 0) {
    fprintf(stderr, "lancectl: %s has no rows\n", o->file);
    lnc_engine_free(*e);
    return 1;
  }
  if (!rc) return 0;
  fprintf(stderr, "lancectl: %s\n", err.message);
  lnc_engine_free(*e);
  return rc == LNC_EINVAL || rc == LNC_ERANGE ? 1 : 2;
}

/* The take phase: o->threads threads taking random batches for o->seconds. */
static struct take_totals run_takes(const struct bench_opts *o, lnc_engine *e, uint64_t num_rows) {
  struct take_totals t = {0};
  struct take_thread *tt = calloc(o->threads, sizeof *tt);
  if (!tt) return fprintf(stderr, "lancectl: out of memory\n"), t.fail = LNC_ENOMEM, t;
  double t0 = lnc_now_s();
  for (unsigned i = 0; i < o->threads; i++) {
    tt[i] = (struct take_thread){.o = o, .e = e, .path = o->file, .num_rows = num_rows, .seed = o->seed * 7919 + i + 1, .deadline = t0 + o->seconds};
    pthread_create(&tt[i].tid, NULL, take_main, &tt[i]);
  }
  for (unsigned i = 0; i < o->threads; i++) {
    pthread_join(tt[i].tid, NULL);
    t.takes += tt[i].takes;
    t.rows += tt[i].rows;
    t.reads += tt[i].reads;
    t.bytes += tt[i].bytes;
    if (tt[i].rc && !t.fail) {
      t.fail = tt[i].rc;
      fprintf(stderr, "lancectl: %s\n", tt[i].msg);
    }
  }
  t.seconds = lnc_now_s() - t0;
  free(tt);
  return t;
}

/* The raw phase: the same reads in flight and the same mean read size as the takes made, in
 * whole 4 KiB blocks (the takes' reads are block-aligned spans: a mix of the two block counts
 * around the mean), through lnc_read_probe. Prints its line; 0 with *raw_s, or 2. */
static int run_raw(const struct bench_opts *o, const struct take_totals *t, double *raw_s) {
  uint64_t avg = t->bytes / t->reads, len = avg & ~(uint64_t)4095;
  if (len == 0) len = 4096;
  double p_long = avg > len ? (double)(avg - len) / 4096.0 : 0.0;
  uint64_t depth = (t->reads + t->takes - 1) / t->takes;
  if (depth == 0) depth = 1;
  bool direct = o->io_mode == LNC_IO_DIRECT;
  int fd = open(o->file, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0 && direct && errno == EINVAL) { /* a filesystem without O_DIRECT */
    fd = open(o->file, O_RDONLY | O_CLOEXEC);
    direct = false;
  }
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) return fprintf(stderr, "lancectl: %s: %s\n", o->file, strerror(errno)), 2;
  struct raw_thread *rt = calloc(o->threads, sizeof *rt);
  int fail = rt ? 0 : LNC_ENOMEM;
  double t0 = lnc_now_s();
  for (unsigned i = 0; rt && i < o->threads; i++) {
    rt[i].probe = (struct lnc_probe){.fd = fd, .direct = direct, .size = (uint64_t)sb.st_size, .len = len, .depth = (unsigned)depth, .seed = o->seed * 104729 + i + 1, .seconds = o->seconds, .p_long = p_long};
    pthread_create(&rt[i].tid, NULL, raw_main, &rt[i]);
  }
  uint64_t raw = 0;
  for (unsigned i = 0; rt && i < o->threads; i++) {
    pthread_join(rt[i].tid, NULL);
    raw += rt[i].reads;
    if (rt[i].rc && !fail) fail = rt[i].rc, fprintf(stderr, "lancectl: raw reads: %s\n", rt[i].msg);
  }
  double el = lnc_now_s() - t0;
  close(fd);
  free(rt);
  if (fail) return 2;
  *raw_s = (double)raw / el;
  printf("raw reads/s: %.0f (random reads of %llu or %llu bytes, mean %llu, %llu in flight per thread, %s)\n",
         *raw_s, (unsigned long long)len, (unsigned long long)len + 4096, (unsigned long long)avg,
         (unsigned long long)depth, direct ? "O_DIRECT" : "buffered");
  return 0;
}

static void print_takes(const struct bench_opts *o, const struct take_totals *t, const struct lnc_engine_stats *st0,
                        const struct lnc_engine_stats *st1) {
  printf("takes: %llu in %.2f s (batch %u, %u thread%s, io %s)\n", (unsigned long long)t->takes, t->seconds, o->batch,
         o->threads, o->threads == 1 ? "" : "s", o->io_mode == LNC_IO_DIRECT ? "direct" : "buffered");
  printf("rows/s: %.0f\n", (double)t->rows / t->seconds);
  printf("reads/row: %.3f\n", (double)t->reads / (double)t->rows);
  printf("bytes read/row: %.1f\n", (double)t->bytes / (double)t->rows);
  printf("search cache: %llu bytes resident, %llu loads during the run\n", (unsigned long long)st1->resident_bytes,
         (unsigned long long)(st1->cache_loads - st0->cache_loads));
}

int lnc_cli_bench(int argc, char **argv) {
  struct bench_opts o;
  char *cols_copy = NULL;
  lnc_engine *e = NULL;
  uint64_t num_rows = 0;
  int rc = parse_bench_opts(argc, argv, &o, &cols_copy);
  if (!rc) rc = open_warm(&o, &e, &num_rows);
  if (rc) {
    free(cols_copy);
    free(o.cols);
    return rc;
  }
  struct lnc_engine_stats st0, st1;
  lnc_engine_get_stats(e, &st0);
  struct take_totals t = run_takes(&o, e, num_rows);
  lnc_engine_get_stats(e, &st1);
  lnc_engine_free(e);
  free(cols_copy);
  free(o.cols);
  if (t.fail) return t.fail == LNC_EINVAL || t.fail == LNC_ERANGE ? 1 : 2;
  if (!t.rows) return fprintf(stderr, "lancectl: no takes completed\n"), 2;
  print_takes(&o, &t, &st0, &st1);
  if (t.reads == 0) {
    printf("raw reads/s: n/a (takes needed no reads)\ndevice-limit ratio: n/a\n");
    return 0;
  }
  double raw_s = 0, rows_s = (double)t.rows / t.seconds, reads_row = (double)t.reads / (double)t.rows;
  if ((rc = run_raw(&o, &t, &raw_s))) return rc;
  printf("device-limit ratio: %.3f\n", rows_s / (raw_s / reads_row));
  return 0;
}
