/* The one place lanced calls into liblance: file handles cached per path, take, describe
 * and the encoders. A handle is used by one thread at a time (lance.h), so each path keeps
 * a small stack of idle handles; a handle is re-opened when the file's identity changes.
 * Switching to the io_uring engine later means changing this file only. */
#include "lanced.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBUCKETS 256
#define MAX_ENTRIES 1024

/* What identifies one version of a file: replaced in place means a new inode or mtime. */
struct ident {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
};

struct entry {
  struct entry *next;      /* hash chain */
  char *path;              /* owned */
  struct ident id;
  uint64_t gen;            /* bumped when id changes; stale handles are closed on release */
  lnc_file **idle;         /* [max_idle] handles nobody uses, all of generation gen */
  int nidle, in_use;
  double last_used;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static int nentries, max_idle = 4, root_fd = -1;
static uint64_t open_handles;

int ld_service_init(int rootfd, int handles_per_file) {
  root_fd = rootfd;
  max_idle = handles_per_file > 0 ? handles_per_file : 1;
  return 0;
}

uint64_t ld_service_open_handles(void) {
  return __atomic_load_n(&open_handles, __ATOMIC_RELAXED);
}

static void close_handle(lnc_file *f) {
  lnc_file_close(f);
  __atomic_sub_fetch(&open_handles, 1, __ATOMIC_RELAXED);
}

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h % NBUCKETS;
}

static bool same_ident(const struct ident *a, const struct ident *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
         a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Drops unused entries, oldest first, once there are too many paths. Called locked; the
 * handles to close are returned through *out so closing happens outside the lock. */
static void evict_locked(lnc_file ***out, int *nout) {
  while (nentries > MAX_ENTRIES) {
    struct entry **victim = NULL;
    for (int b = 0; b < NBUCKETS; b++)
      for (struct entry **p = &buckets[b]; *p; p = &(*p)->next)
        if (!(*p)->in_use && (!victim || (*p)->last_used < (*victim)->last_used)) victim = p;
    if (!victim) return;
    struct entry *e = *victim;
    *victim = e->next;
    lnc_file **grow = realloc(*out, sizeof **out * (size_t)(*nout + e->nidle));
    if (grow) {
      *out = grow;
      memcpy(*out + *nout, e->idle, sizeof *e->idle * (size_t)e->nidle);
      *nout += e->nidle;
    }
    free(e->idle);
    free(e->path);
    free(e);
    nentries--;
  }
}

struct lease {
  struct entry *e;
  uint64_t gen;
  lnc_file *f;
};

/* Finds or opens a handle for rel. On success the caller holds a lease it must return. */
static int acquire(const char *rel, struct lease *l, struct ld_err *err) {
  int fd = ld_path_open(root_fd, rel, err);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st)) {
    close(fd);
    return ld_errf(err, 500, "internal", "fstat %s failed", rel), -1;
  }
  struct ident id = {st.st_dev, st.st_ino, st.st_size, st.st_mtim};
  lnc_file **stale = NULL;
  int nstale = 0;

  pthread_mutex_lock(&lock);
  unsigned h = hash(rel);
  struct entry *e = buckets[h];
  while (e && strcmp(e->path, rel)) e = e->next;
  if (!e) {
    e = calloc(1, sizeof *e);
    char *p = strdup(rel);
    lnc_file **idle = calloc((size_t)max_idle, sizeof *idle);
    if (!e || !p || !idle) {
      pthread_mutex_unlock(&lock);
      free(e), free(p), free(idle), close(fd);
      return ld_errf(err, 503, "resource_exhausted", "out of memory"), -1;
    }
    e->path = p, e->idle = idle, e->id = id;
    e->next = buckets[h];
    buckets[h] = e;
    nentries++;
  } else if (!same_ident(&e->id, &id)) {
    /* The file was replaced or rewritten: its cached handles describe the old bytes. */
    stale = malloc(sizeof *stale * (size_t)(e->nidle ? e->nidle : 1));
    if (stale) memcpy(stale, e->idle, sizeof *stale * (size_t)e->nidle), nstale = e->nidle;
    e->nidle = 0;
    e->id = id;
    e->gen++;
    ld_log(LD_LOG_INFO, "file %s changed on disk; reopening", rel);
  }
  e->in_use++;
  e->last_used = ld_now();
  l->e = e;
  l->gen = e->gen;
  l->f = e->nidle ? e->idle[--e->nidle] : NULL;
  evict_locked(&stale, &nstale);
  pthread_mutex_unlock(&lock);

  for (int i = 0; i < nstale; i++) close_handle(stale[i]);
  free(stale);
  if (l->f) {
    close(fd);
    return 0;
  }
  struct lnc_error le = {0};
  int rc = lnc_file_open_fd(fd, rel, &l->f, &le); /* fd is liblance's from here on */
  if (rc) {
    pthread_mutex_lock(&lock);
    e->in_use--;
    pthread_mutex_unlock(&lock);
    l->f = NULL;
    ld_err_from_lnc(err, &le);
    return -1;
  }
  __atomic_add_fetch(&open_handles, 1, __ATOMIC_RELAXED);
  return 0;
}

static void release(struct lease *l) {
  lnc_file *to_close = NULL;
  pthread_mutex_lock(&lock);
  struct entry *e = l->e;
  e->in_use--;
  if (l->gen == e->gen && e->nidle < max_idle) e->idle[e->nidle++] = l->f;
  else to_close = l->f;
  pthread_mutex_unlock(&lock);
  if (to_close) close_handle(to_close);
}

int ld_service_take(const char *rel, const uint64_t *ids, size_t n, const char *const *cols,
                    size_t ncols, struct ArrowSchema *schema, struct ArrowArray *array,
                    struct lnc_take_stats *stats, struct ld_err *e) {
  struct lease l;
  if (acquire(rel, &l, e)) return -1;
  int rc = 0;
  uint64_t num_rows = lnc_file_num_rows(l.f);
  for (size_t i = 0; i < n; i++)
    if (ids[i] >= num_rows) {
      ld_errf(e, 400, "out_of_range",
              "row id %llu is out of range: %s has %llu rows (ids 0..%lld)",
              (unsigned long long)ids[i], rel, (unsigned long long)num_rows,
              (long long)num_rows - 1);
      rc = -1;
      break;
    }
  if (!rc) {
    struct lnc_error le = {0};
    if (lnc_take(l.f, ids, n, cols, ncols, schema, array, stats, &le)) {
      ld_err_from_lnc(e, &le);
      rc = -1;
    }
  }
  release(&l);
  return rc;
}

int ld_service_describe(const char *rel, struct ld_file_info *out, struct ld_err *e) {
  struct lease l;
  memset(out, 0, sizeof *out);
  if (acquire(rel, &l, e)) return -1;
  struct lnc_error le = {0};
  int rc = 0;
  out->num_rows = lnc_file_num_rows(l.f);
  lnc_file_version(l.f, &out->major, &out->minor);
  if (lnc_file_schema(l.f, &out->schema, &le) ||
      lnc_file_describe_json(l.f, &out->describe, &le)) {
    ld_err_from_lnc(e, &le);
    if (out->schema.release) out->schema.release(&out->schema);
    lnc_buf_free(&out->describe);
    rc = -1;
  }
  release(&l);
  return rc;
}

int ld_service_encode(int format, const struct ArrowSchema *s, const struct ArrowArray *a,
                      struct lnc_buf *out, struct ld_err *e) {
  struct lnc_error le = {0};
  int rc = format == LD_F_ARROW ? lnc_encode_arrow_ipc(s, a, out, &le)
                                : lnc_encode_json(s, a, out, &le);
  if (rc) {
    ld_err_from_lnc(e, &le);
    return -1;
  }
  return 0;
}

void ld_service_shutdown(void) {
  pthread_mutex_lock(&lock);
  for (int b = 0; b < NBUCKETS; b++) {
    struct entry *e = buckets[b];
    while (e) {
      struct entry *next = e->next;
      for (int i = 0; i < e->nidle; i++) close_handle(e->idle[i]);
      free(e->idle);
      free(e->path);
      free(e);
      e = next;
    }
    buckets[b] = NULL;
  }
  nentries = 0;
  pthread_mutex_unlock(&lock);
}
