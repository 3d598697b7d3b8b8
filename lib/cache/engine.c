/* The take engine: a search cache of prepared files shared by all workers, bounded in bytes
 * and open files, plus one I/O ring per worker. Files are keyed by path and checked against
 * the disk (device, inode, size, mtime, ctime) every revalidate_ms; a changed file gets a new entry
 * while requests already holding the old one finish on the old descriptor, so no request
 * ever mixes bytes of two versions. The cache is split into shards, each with its own lock,
 * LRU list and condition variable; a lock is held only to find, insert or unlink an entry,
 * never while reading or decoding. */
#include "../lance.h"
#include "cache.h"
#include "../layout/open.h"
#include "../io/loop.h"
#include "../io/ring.h"
#include "../io/s3.h"
#include "../take/take.h"
#include "../util/clock.h"
#include "../util/error.h"
#include "../util/hash.h"
#include "../util/assert.h"
#include "../util/list.h"
#include "../util/beneath.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define NSHARDS 16

enum { E_LOADING,
       E_READY,
       E_FAILED };

/* What says a file is still the one cached: for a local file its device, inode, size, mtime
 * and ctime (chmod/chown change it: a revoked permission is seen); for an object its size and
 * ETag (the rest zero). */
struct ident {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
  struct timespec ctime;
  char etag[sizeof(((struct lnc_s3_object *)0)->etag)];
};

struct entry {
  struct entry *hnext;       /* hash chain within the shard */
  struct entry *prev, *next; /* shard LRU: head = most recent */
  char *path;
  uint64_t hash;
  struct ident id;
  uint32_t revalidate_ms; /* the engine's, or the object-store mount's */
  int64_t checked_ns;     /* when id was last compared with the disk or the store */
  int state;
  bool linked;       /* in the shard's table (else: dropped, freed at refs 0) */
  bool revalidating; /* an object whose HEAD is in flight (shard lock) */
  atomic_int refs;
  uint64_t last_used;        /* engine tick of the last acquire (shard lock held) */
  struct lnc_file *file;     /* READY: prepared, read-only */
  size_t bytes;              /* counted in resident while linked and READY */
  struct lnc_error load_err; /* FAILED */
};

struct shard {
  pthread_mutex_t lock;
  pthread_cond_t loaded;
  struct entry **table;
  size_t nbuckets;
  struct entry *lru_head, *lru_tail;
};

struct lnc_engine {
  struct lnc_engine_config cfg;
  int root_fd; /* AT_FDCWD when no root */
  /* The root as absolute paths, for shallow clones' base paths (lnc_engine_root_rel): as
   * configured (made absolute lexically) and with symlinks resolved; NULL without a root. */
  char *root_given, *root_real;
  struct shard shards[NSHARDS];
  atomic_uint_fast64_t budget, resident, files, open_fds;
  atomic_uint_fast64_t takes, rows, reads, bytes_read, bytes_decoded;
  atomic_uint_fast64_t hits, misses, loads, evictions;
  atomic_uint_fast64_t tick; /* recency clock for LRU across shards */
  atomic_int workers;
  struct lnc_dscache *datasets; /* opened dataset versions (datasets.c) */
  bool (*shed)(void *ctx);      /* lnc_engine_on_pressure: frees something else, or false */
  void *shed_ctx;
  struct lnc_mounts *mounts; /* object-store roots (mounts.c) */
};

struct lnc_worker {
  struct lnc_engine *e;
  struct lnc_ring *ring;
  struct lnc_io io;
};

void lnc_engine_config_default(struct lnc_engine_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->cache_budget = 1ull << 30;
  cfg->io_mode = LNC_IO_DIRECT;
  cfg->repidx_max = UINT64_MAX;
  cfg->block_size = 4096;
  cfg->ring_depth = 256;
  cfg->object_cache_budget = 256ull << 20;
  cfg->object_cache_block = 16u << 10;
}

static uint64_t hash_path(const char *s) { return lnc_fnv1a_str(s); }

/* root_given and root_real of root (opened already): -1 only when out of memory. A root whose
 * absolute form cannot be worked out keeps NULL there, and base paths are then not below it. */
static int keep_root_paths(struct lnc_engine *e, const char *root) {
  char buf[PATH_MAX], abs[PATH_MAX];
  const char *p = root;
  if (root[0] != '/') {
    if (!getcwd(buf, sizeof buf) || (size_t)snprintf(abs, sizeof abs, "%s/%s", buf, root) >= sizeof abs)
      p = NULL;
    else
      p = abs;
  }
  char norm[PATH_MAX];
  if (p && lnc_abs_path(p, norm, sizeof norm) == 0 && !(e->root_given = strdup(norm))) return -1;
  if (realpath(root, buf) && !(e->root_real = strdup(buf))) return -1;
  return 0;
}

int lnc_files_new(const struct lnc_engine_config *cfg, lnc_engine **out, struct lnc_error *err) {
  *out = NULL;
  struct lnc_engine *e = calloc(1, sizeof *e);
  if (!e) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  if (cfg)
    e->cfg = *cfg;
  else
    lnc_engine_config_default(&e->cfg);
  if (!e->cfg.cache_budget) e->cfg.cache_budget = 1ull << 30;
  if (!e->cfg.block_size) e->cfg.block_size = 4096;
  if (!e->cfg.ring_depth) e->cfg.ring_depth = 256;
  if (!e->cfg.max_open_files) {
    struct rlimit rl;
    uint64_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 4096;
    /* Up to three descriptors per file (buffered, O_DIRECT, its directory for blob
     * sidecars); keep half the limit for sockets. */
    lim /= 6;
    if (lim < 4) lim = 4;
    if (lim > 65536) lim = 65536;
    e->cfg.max_open_files = (uint32_t)lim;
  }
  atomic_store(&e->budget, e->cfg.cache_budget);
  e->root_fd = AT_FDCWD;
  if (cfg && cfg->root) {
    e->root_fd = open(cfg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e->root_fd < 0) {
      int rc = lnc_errf(err, errno == ENOENT ? LNC_ENOTFOUND : LNC_EIO, "data root %s: %s", cfg->root,
                        strerror(errno));
      free(e);
      return rc;
    }
  }
  if (e->root_fd != AT_FDCWD && keep_root_paths(e, cfg->root)) {
    close(e->root_fd);
    free(e->root_given);
    free(e);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  e->cfg.root = NULL; /* not kept: the descriptor is what counts (and root_given for clones) */
  if (!(e->mounts = lnc_mounts_new())) {
    lnc_files_free(e);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  for (int i = 0; i < NSHARDS; i++) {
    struct shard *s = &e->shards[i];
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->loaded, NULL);
    s->nbuckets = 256;
    s->table = calloc(s->nbuckets, sizeof *s->table);
    if (!s->table) {
      lnc_files_free(e);
      return lnc_errf(err, LNC_ENOMEM, "out of memory");
    }
  }
  *out = e;
  return 0;
}

static void entry_free(struct lnc_engine *e, struct entry *en) {
  if (en->file) {
    lnc_file_close(en->file);
    atomic_fetch_sub(&e->open_fds, 1);
  }
  free(en->path);
  free(en);
}

static void unref(struct lnc_engine *e, struct entry *en) {
  if (atomic_fetch_sub(&en->refs, 1) == 1) entry_free(e, en);
}

/* Removes en from its shard (lock held). The table's reference is dropped by the caller. */
static void unlink_locked(struct lnc_engine *e, struct shard *s, struct entry *en) {
  LNC_ASSERT_LOCKED(&s->lock);
  struct entry **pp = &s->table[en->hash % s->nbuckets];
  while (*pp && *pp != en) pp = &(*pp)->hnext;
  if (*pp) *pp = en->hnext;
  en->hnext = NULL;
  LNC_LIST_UNLINK(s->lru_head, s->lru_tail, en);
  if (en->linked && en->state == E_READY) {
    atomic_fetch_sub(&e->resident, en->bytes);
    atomic_fetch_sub(&e->files, 1);
  }
  en->linked = false;
}

void lnc_files_free(lnc_engine *e) {
  if (!e) return;
  for (int i = 0; i < NSHARDS; i++) {
    struct shard *s = &e->shards[i];
    if (s->table) {
      for (size_t b = 0; b < s->nbuckets; b++) {
        struct entry *en = s->table[b];
        while (en) {
          struct entry *n = en->hnext;
          en->linked = false;
          unref(e, en);
          en = n;
        }
      }
      free(s->table);
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->loaded);
  }
  if (e->root_fd >= 0) close(e->root_fd);
  free(e->root_given);
  free(e->root_real);
  lnc_mounts_free(e->mounts); /* after the files: their sources borrow the mounts' settings */
  free(e);
}

/* The least recently used idle entry of shard s (lock held), or NULL. Each shard's list is
 * in recency order, so the first idle entry from the tail is the shard's oldest. */
static struct entry *oldest_idle_locked(struct shard *s) {
  LNC_ASSERT_LOCKED(&s->lock);
  for (struct entry *en = s->lru_tail; en; en = en->prev)
    if (en->state == E_READY && atomic_load(&en->refs) == 1) return en; /* only the table holds it */
  return NULL;
}

static bool over_budget(struct lnc_engine *e, uint64_t need_bytes) {
  return atomic_load(&e->resident) + need_bytes > atomic_load(&e->budget);
}

static bool over_limits(struct lnc_engine *e, uint64_t need_bytes, uint64_t need_fds) {
  return over_budget(e, need_bytes) || atomic_load(&e->open_fds) + need_fds > e->cfg.max_open_files;
}

/* Evicts idle entries, least recently used first across all shards, until `need_bytes` more
 * bytes and `need_fds` more open files fit. Takes one shard lock at a time. */
static void make_room(struct lnc_engine *e, uint64_t need_bytes, uint64_t need_fds) {
  while (over_limits(e, need_bytes, need_fds)) {
    int best = -1;
    uint64_t best_tick = UINT64_MAX;
    for (int i = 0; i < NSHARDS; i++) {
      struct shard *s = &e->shards[i];
      pthread_mutex_lock(&s->lock);
      struct entry *en = oldest_idle_locked(s);
      if (en && en->last_used < best_tick) {
        best_tick = en->last_used;
        best = i;
      }
      pthread_mutex_unlock(&s->lock);
    }
    if (best < 0) {
      /* No idle file left: idle dataset versions go next (bytes only: they hold no
       * descriptor), else they could hold the budget while every file is loaded again. */
      if (over_budget(e, need_bytes) && e->shed && e->shed(e->shed_ctx))
        continue;
      return; /* everything left is in use */
    }
    struct shard *s = &e->shards[best];
    pthread_mutex_lock(&s->lock);
    struct entry *en = oldest_idle_locked(s);
    if (en) {
      unlink_locked(e, s, en);
      atomic_fetch_add(&e->evictions, 1);
    }
    pthread_mutex_unlock(&s->lock);
    if (en) unref(e, en);
  }
}

void lnc_engine_set_budget(lnc_engine *e, uint64_t bytes) {
  atomic_store(&e->budget, bytes ? bytes : 1);
  make_room(e, 0, 0);
}

void lnc_files_stats(lnc_engine *e, struct lnc_engine_stats *o) {
  o->takes = atomic_load(&e->takes);
  o->rows = atomic_load(&e->rows);
  o->reads = atomic_load(&e->reads);
  o->bytes_read = atomic_load(&e->bytes_read);
  o->bytes_decoded = atomic_load(&e->bytes_decoded);
  o->cache_hits = atomic_load(&e->hits);
  o->cache_misses = atomic_load(&e->misses);
  o->cache_loads = atomic_load(&e->loads);
  o->cache_evictions = atomic_load(&e->evictions);
  o->resident_bytes = atomic_load(&e->resident);
  o->budget_bytes = atomic_load(&e->budget);
  o->files_cached = atomic_load(&e->files);
  o->open_files = atomic_load(&e->open_fds);
  lnc_mounts_stats(e->mounts, o);
}

void lnc_engine_charge(lnc_engine *e, int64_t delta) {
  if (delta >= 0) {
    atomic_fetch_add(&e->resident, (uint64_t)delta);
    make_room(e, 0, 0);
  } else {
    atomic_fetch_sub(&e->resident, (uint64_t)-delta);
  }
}

lnc_engine *lnc_worker_engine(lnc_worker *w) { return w->e; }
struct lnc_dscache *lnc_engine_dscache(lnc_engine *e) {
  return e->datasets;
}
void lnc_engine_attach_dscache(lnc_engine *e, struct lnc_dscache *c) { e->datasets = c; }

void lnc_engine_on_pressure(lnc_engine *e, bool (*shed)(void *ctx), void *ctx) {
  e->shed = shed;
  e->shed_ctx = ctx;
}
bool lnc_engine_direct(lnc_engine *e) { return e->cfg.io_mode == LNC_IO_DIRECT; }

int64_t lnc_engine_now_ns(void) { return (int64_t)lnc_coarse_ns(); }

bool lnc_fresh_within(int64_t checked_ns, uint32_t ms) {
  return ms && checked_ns && lnc_engine_now_ns() - checked_ns < (int64_t)ms * 1000000LL;
}

bool lnc_engine_fresh(lnc_engine *e, int64_t checked_ns) {
  return lnc_fresh_within(checked_ns, e->cfg.revalidate_ms);
}

const struct lnc_s3_mount *lnc_engine_remote(lnc_engine *e, const char *path, const char **rel,
                                             uint32_t *revalidate_ms) {
  return lnc_mounts_find(e->mounts, path, rel, revalidate_ms);
}

/* abs below root (both normalised): the part after it, or NULL. */
static const char *below(const char *root, const char *abs) {
  if (!root) return NULL;
  size_t n = strcmp(root, "/") ? strlen(root) : 0;
  return !strncmp(abs, root, n) && abs[n] == '/' && abs[n + 1] ? abs + n + 1 : NULL;
}

int lnc_engine_root_rel(lnc_engine *e, const char *abs, const char **rel) {
  if (e->root_fd == AT_FDCWD) {
    *rel = abs;
    return 1;
  }
  /* The root as configured first: a writer that reached the data through the same symlinked
   * path wrote that; then with symlinks resolved. Either way the open beneath the root that
   * follows is what confines it. */
  *rel = below(e->root_given, abs);
  if (!*rel) *rel = below(e->root_real, abs);
  return *rel != NULL;
}

int lnc_engine_mount_path_of(lnc_engine *e, const char *uri, char *out, size_t cap) {
  return lnc_mounts_path_of(e->mounts, uri, out, cap);
}

int lnc_engine_mount_s3(lnc_engine *e, const char *name, const char *url,
                        const struct lnc_s3_options *opt, struct lnc_error *err) {
  if (!e || !name || !url) return lnc_errf(err, LNC_EINVAL, "lnc_engine_mount_s3: NULL argument");
  /* The table is read without a lock by every take: it is complete before any runs. */
  if (atomic_load(&e->workers))
    return lnc_errf(err, LNC_EINVAL, "mount %.80s: mounts are added before the first worker", name);
  return lnc_mounts_add(e->mounts, name, url, opt, e->cfg.revalidate_ms, e->cfg.object_cache_budget,
                        e->cfg.object_cache_block ? e->cfg.object_cache_block : 16u << 10, err);
}

int lnc_worker_new(lnc_engine *e, lnc_worker **out, struct lnc_error *err) {
  *out = NULL;
  struct lnc_worker *w = calloc(1, sizeof *w);
  if (!w) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  struct lnc_ring_config rc;
  lnc_ring_config_default(&rc);
  rc.depth = e->cfg.ring_depth;
  rc.block = e->cfg.block_size;
  rc.merge_gap = e->cfg.merge_gap;
  /* 4 MiB of aligned bounce buffers per worker: a 1,000-row take of a few columns fits in one
   * round, and a daemon with many take threads does not pin much memory. */
  rc.pool_bytes = 4u << 20;
  int r = lnc_ring_new(&rc, &w->ring, err);
  if (r) {
    free(w);
    return r;
  }
  w->e = e;
  w->io.ring = w->ring;
  atomic_fetch_add(&e->workers, 1);
  *out = w;
  return 0;
}

void lnc_worker_free(lnc_worker *w) {
  if (!w) return;
  lnc_ring_free(w->ring);
  atomic_fetch_sub(&w->e->workers, 1);
  free(w);
}

/* Opens path under the root without leaving it (lnc_open_beneath, the one helper) when there is a
 * root; "/" is the root itself. */
static int open_beneath(struct lnc_engine *e, const char *path, int flags) {
  if (e->root_fd == AT_FDCWD) return open(path, flags | O_RDONLY | O_CLOEXEC);
  if (!strcmp(path, "/")) return openat(e->root_fd, ".", flags | O_RDONLY | O_CLOEXEC); /* the root */
  return lnc_open_beneath(e->root_fd, path, flags);
}

int lnc_engine_open_beneath(lnc_engine *e, const char *path, int flags) {
  return open_beneath(e, path, flags);
}

/* Whether path, beneath the root, reaches outside it (a symlink out, resolved beneath). */
static bool leaves_root(struct lnc_engine *e, const char *path) {
  if (e->root_fd == AT_FDCWD) return false;
  int fd = open_beneath(e, path, O_PATH);
  if (fd >= 0) {
    close(fd);
    return false;
  }
  return errno == EXDEV || errno == ELOOP;
}

/* *is_dir (may be NULL) tells a directory apart from the other failures, so a take can serve
 * it as a dataset without a second system call to ask what the path is. */
static int stat_path(struct lnc_engine *e, const char *path, struct stat *st, bool *is_dir,
                     struct lnc_error *err) {
  if (fstatat(e->root_fd, path, st, 0) == 0) {
    if (S_ISDIR(st->st_mode)) {
      /* fstatat followed any symlink: a directory found outside the root is refused as every
       * other escape is (403), so an outsider cannot tell what is there from "a directory". */
      if (leaves_root(e, path)) return lnc_errf(err, LNC_EACCES, "%s: path leaves the data root", path);
      if (is_dir) *is_dir = true;
      return lnc_errf(err, LNC_ENOTFOUND, "%s: is a directory, not a Lance data file", path);
    }
    if (!S_ISREG(st->st_mode)) return lnc_errf(err, LNC_EINVAL, "%s: not a regular file", path);
    return 0;
  }
  /* fstatat follows symlinks out of the root, where the open that follows a success does not:
   * a missing path is asked again beneath the root, so that one outside answers "leaves the
   * data root" whether or not something is there (else 404 against 403 would probe it). */
  int en = errno;
  if (leaves_root(e, path)) return lnc_errf(err, LNC_EACCES, "%s: path leaves the data root", path);
  return lnc_errf(err, lnc_code_from_errno(en), "%s: %s", path, strerror(en));
}

/* The search cache read into f; f is closed (and *out's caller must not use it) on failure. */
static int prepare_file(struct lnc_worker *w, const char *path, struct lnc_file *f, size_t *bytes,
                        struct lnc_take_stats *ts, struct lnc_error *err) {
  struct lnc_take_env env = {.io = &w->io, .repidx_max = w->e->cfg.repidx_max};
  int rc = lnc_file_prepare(f, &env, ts, bytes);
  if (rc) {
    /* The store's own message (naming the object and the status) says more than ours. */
    if (!err || err->code != rc || !err->message[0]) lnc_errf(err, rc, "%s: reading the search cache failed", path);
    lnc_file_close(f);
  }
  return rc;
}

static void ident_of_stat(struct ident *id, const struct stat *st) {
  memset(id, 0, sizeof *id);
  id->dev = st->st_dev;
  id->ino = st->st_ino;
  id->size = st->st_size;
  id->mtime = st->st_mtim;
  id->ctime = st->st_ctim;
}

/* An object's identity: its size (an off_t, as a file's) and ETag. */
static int ident_of_object(struct ident *id, const struct lnc_s3_object *obj, const char *path,
                           struct lnc_error *err) {
  if (obj->size > (uint64_t)INT64_MAX) return lnc_errf(err, LNC_ECORRUPT, "%s: object size out of range", path);
  memset(id, 0, sizeof *id);
  id->size = (off_t)obj->size;
  memcpy(id->etag, obj->etag, sizeof id->etag);
  return 0;
}

/* An object's identity by HEAD. Not an object but a dataset's prefix: *is_dir, as stat_path. */
static int probe_object(const struct lnc_s3_mount *m, const char *path, const char *rel,
                        struct ident *id, bool *is_dir, struct lnc_error *err) {
  memset(id, 0, sizeof *id);
  struct lnc_s3_object obj;
  int rc = *rel ? lnc_s3_mount_head(m, rel, &obj, err)
                : lnc_errf(err, LNC_ENOTFOUND, "%s: the mount itself is not a data file", path);
  if (rc == LNC_ENOTFOUND && is_dir && lnc_remote_is_dataset(m, rel)) *is_dir = true;
  return rc ? rc : ident_of_object(id, &obj, path, err);
}

/* The identity of what path names now: a stat, or for a mounted path a HEAD. */
static int probe(struct lnc_engine *e, const char *path, struct ident *id, bool *is_dir,
                 struct lnc_error *err) {
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(e, path, &rel, NULL);
  if (m) return probe_object(m, path, rel, id, is_dir, err);
  struct stat st;
  int rc = stat_path(e, path, &st, is_dir, err);
  if (!rc) ident_of_stat(id, &st);
  return rc;
}

/* An object's file, from its tail (one suffix-range GET: footer and metadata). With the
 * identity a probe found (id->etag set) the GET must be of that version; without one (a first
 * load) the GET's answer is the identity, stored into *id. */
static int open_object(const struct lnc_s3_mount *m, const char *path, const char *rel,
                       struct ident *id, struct lnc_file **out, struct lnc_error *err) {
  struct lnc_s3_object obj = {.size = (uint64_t)id->size};
  memcpy(obj.etag, id->etag, sizeof obj.etag);
  struct lnc_s3_source *src;
  int rc = lnc_s3_mount_source(m, rel, id->etag[0] ? &obj : NULL, &src, err);
  if (rc) return rc;
  if ((rc = ident_of_object(id, lnc_s3_source_object(src), path, err))) {
    lnc_s3_source_free(src);
    return rc;
  }
  return lnc_file_open_source(src, path, out, err);
}

/* Opens, validates and prepares the file: the initialization phase. *id: the identity of
 * what was opened (a local file's from its descriptor; an object's is the probe's). */
static int load_file(struct lnc_worker *w, const char *path, struct lnc_file **out, size_t *bytes,
                     struct ident *id, struct lnc_take_stats *ts, struct lnc_error *err) {
  struct lnc_engine *e = w->e;
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(e, path, &rel, NULL);
  if (m) {
    int rc = open_object(m, path, rel, id, out, err);
    return rc ? rc : prepare_file(w, path, *out, bytes, ts, err);
  }
  int fd = open_beneath(e, path, 0);
  if (fd < 0) {
    int en = errno;
    if (en == EXDEV || en == ELOOP) return lnc_errf(err, LNC_EACCES, "%s: path leaves the data root", path);
    return lnc_errf(err, lnc_code_from_errno(en), "%s: %s", path, strerror(en));
  }
  struct stat stbuf, *st = &stbuf;
  if (fstat(fd, st) != 0) {
    close(fd);
    return lnc_errf(err, LNC_EIO, "%s: %s", path, strerror(errno));
  }
  ident_of_stat(id, st);
  struct lnc_file *f;
  int rc = lnc_file_open_fd(fd, path, &f, err);
  if (rc) return rc;
  if (e->cfg.io_mode == LNC_IO_DIRECT) {
    int dfd = open_beneath(e, path, O_DIRECT);
    if (dfd >= 0) {
      struct stat dst;
      /* The name might have been swapped between the two opens: only keep the same inode. */
      if (fstat(dfd, &dst) == 0 && dst.st_ino == st->st_ino && dst.st_dev == st->st_dev)
        f->src.fd_direct = dfd;
      else
        close(dfd);
    } else if (errno == EINVAL) {
      static atomic_int warned;
      if (!atomic_exchange(&warned, 1))
        fprintf(stderr, "lanced: O_DIRECT not supported on %s's filesystem; using buffered reads\n", path);
    }
  }
  {
    /* The file's directory, for blob sidecar files next to it (beneath the root too). */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof dir) {
      memcpy(dir, path, (size_t)(slash - path));
      dir[slash - path] = 0;
      f->dir_fd = open_beneath(e, dir[0] ? dir : "/", O_PATH | O_DIRECTORY);
    } else if (!slash) {
      f->dir_fd = e->root_fd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) : dup(e->root_fd);
    }
  }
  *out = f;
  return prepare_file(w, path, f, bytes, ts, err);
}

/* Moves en to the front of its shard's LRU and takes a reference (shard lock held). */
static void touch_locked(struct lnc_engine *e, struct shard *s, struct entry *en) {
  LNC_ASSERT_LOCKED(&s->lock);
  atomic_fetch_add(&en->refs, 1);
  en->last_used = atomic_fetch_add(&e->tick, 1);
  if (s->lru_head == en) return;
  LNC_LIST_UNLINK(s->lru_head, s->lru_tail, en);
  LNC_LIST_PUSH_FRONT(s->lru_head, s->lru_tail, en);
}

/* A ready entry for path checked against the disk within revalidate_ms, referenced; NULL
 * when there is none (then the caller stats the path). No system call. An object's check is a
 * HEAD, a round trip: one take sends it (*checking: the entry, referenced, for end_check)
 * while the others meanwhile are served the version being checked, instead of every take in
 * flight sending its own. */
static struct entry *fresh_entry(struct lnc_engine *e, struct shard *s, uint64_t h, const char *path,
                                 struct entry **checking) {
  *checking = NULL;
  pthread_mutex_lock(&s->lock);
  struct entry *en = s->table[h % s->nbuckets];
  while (en && (en->hash != h || strcmp(en->path, path) != 0)) en = en->hnext;
  if (en && en->state == E_READY && !lnc_fresh_within(en->checked_ns, en->revalidate_ms) &&
      !(en->id.etag[0] && en->revalidating)) {
    if (en->id.etag[0]) {
      en->revalidating = true;
      atomic_fetch_add(&en->refs, 1);
      *checking = en;
    }
    en = NULL;
  }
  if (en && en->state != E_READY) en = NULL;
  if (en) touch_locked(e, s, en);
  pthread_mutex_unlock(&s->lock);
  return en;
}

static void end_check(struct lnc_engine *e, struct shard *s, struct entry *checked) {
  pthread_mutex_lock(&s->lock);
  checked->revalidating = false;
  pthread_mutex_unlock(&s->lock);
  unref(e, checked);
}

/* The entry for path, or NULL (shard lock held). */
static struct entry *lookup_locked(struct shard *s, uint64_t h, const char *path) {
  LNC_ASSERT_LOCKED(&s->lock);
  struct entry *en = s->table[h % s->nbuckets];
  while (en && (en->hash != h || strcmp(en->path, path) != 0)) en = en->hnext;
  return en;
}

/* Whether a ready entry still describes the file on disk: replaced, rewritten, or its
 * permissions changed (ctime) make it stale, so a permission revoked on a cached file takes
 * effect within revalidate_ms. */
static bool stale(const struct entry *en, const struct ident *id) {
  const struct ident *a = &en->id;
  return a->dev != id->dev || a->ino != id->ino || a->size != id->size ||
         a->mtime.tv_sec != id->mtime.tv_sec || a->mtime.tv_nsec != id->mtime.tv_nsec ||
         a->ctime.tv_sec != id->ctime.tv_sec || a->ctime.tv_nsec != id->ctime.tv_nsec ||
         strcmp(a->etag, id->etag) != 0;
}

/* Gone (or no longer a file): whatever was cached for the path is dropped now, so its memory
 * and descriptors are not held for a file nobody can ask for. */
static void drop_gone(struct lnc_engine *e, struct shard *s, uint64_t h, const char *path) {
  pthread_mutex_lock(&s->lock);
  struct entry *en = lookup_locked(s, h, path);
  if (en && en->state == E_READY)
    unlink_locked(e, s, en);
  else
    en = NULL;
  pthread_mutex_unlock(&s->lock);
  if (en) unref(e, en);
}

/* With the shard lock held: a ready, current entry referenced (1), or 0 when path must be
 * loaded by the caller (the lock still held), or -LNC_EAGAIN under nowait (lock released).
 * Waits for another thread's load of the same path; drops a stale entry. */
static int find_current_locked(struct lnc_engine *e, struct shard *s, uint64_t h, const char *path,
                               const struct ident *id, int64_t stat_ns, bool nowait, struct entry **out) {
  for (;;) {
    struct entry *en = lookup_locked(s, h, path);
    if (nowait && (!en || en->state != E_READY)) {
      pthread_mutex_unlock(&s->lock);
      return -LNC_EAGAIN;
    }
    if (en && en->state == E_LOADING) { /* someone else is loading it: wait for that load */
      pthread_cond_wait(&s->loaded, &s->lock);
      continue;
    }
    if (en && en->state == E_READY && stale(en, id)) { /* readers keep their reference */
      unlink_locked(e, s, en);
      pthread_mutex_unlock(&s->lock);
      unref(e, en);
      pthread_mutex_lock(&s->lock);
      continue;
    }
    if (en && en->state == E_READY) {
      touch_locked(e, s, en);
      en->checked_ns = stat_ns;
      *out = en;
      return 1;
    }
    return 0;
  }
}

/* Links a loaded entry into the shard table and LRU when it fits the budget (lock held);
 * returns whether it did. */
static bool link_loaded_locked(struct lnc_engine *e, struct shard *s, struct entry *en) {
  LNC_ASSERT_LOCKED(&s->lock);
  if (over_budget(e, en->bytes)) return false;
  en->hnext = s->table[en->hash % s->nbuckets];
  s->table[en->hash % s->nbuckets] = en;
  LNC_LIST_PUSH_FRONT(s->lru_head, s->lru_tail, en);
  en->linked = true;
  atomic_fetch_add(&e->resident, en->bytes);
  atomic_fetch_add(&e->files, 1);
  return true;
}

/* A miss (shard lock held, released here): a LOADING placeholder so concurrent requests wait
 * for this one load, the load, then the entry made ready (kept if it fits the budget). */
static int load_entry(struct lnc_worker *w, struct shard *s, uint64_t h, const char *path,
                      const struct ident *probed, int64_t stat_ns, struct entry **out,
                      struct lnc_take_stats *ts, struct lnc_error *err) {
  struct lnc_engine *e = w->e;
  struct entry *en = calloc(1, sizeof *en);
  if (!en || !(en->path = strdup(path))) {
    pthread_mutex_unlock(&s->lock);
    free(en);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  en->hash = h;
  en->state = E_LOADING;
  en->linked = true;
  atomic_store(&en->refs, 2); /* the table's and ours */
  en->hnext = s->table[h % s->nbuckets];
  s->table[h % s->nbuckets] = en;
  pthread_mutex_unlock(&s->lock);
  atomic_fetch_add(&e->misses, 1);
  if (ts) {
    ts->cache_misses++;
    ts->cache_loads++;
  }
  atomic_fetch_add(&e->loads, 1);

  make_room(e, 0, 1); /* a slot for this file's descriptors before opening it */
  struct lnc_file *f = NULL;
  size_t bytes = 0;
  struct ident id = *probed;
  int rc = load_file(w, path, &f, &bytes, &id, ts, err);
  if (!rc) {
    atomic_fetch_add(&e->open_fds, 1);
    make_room(e, bytes, 0);
  }
  pthread_mutex_lock(&s->lock);
  unlink_locked(e, s, en); /* re-linked below when it may stay */
  if (rc) {
    en->state = E_FAILED;
    pthread_cond_broadcast(&s->loaded);
    pthread_mutex_unlock(&s->lock);
    unref(e, en); /* the table's */
    unref(e, en); /* ours */
    return rc;
  }
  en->file = f;
  en->bytes = bytes;
  en->id = id;
  en->revalidate_ms = e->cfg.revalidate_ms;
  lnc_engine_remote(e, path, NULL, &en->revalidate_ms);
  en->checked_ns = stat_ns;
  en->state = E_READY;
  en->last_used = atomic_fetch_add(&e->tick, 1);
  bool kept = link_loaded_locked(e, s, en);
  pthread_cond_broadcast(&s->loaded);
  pthread_mutex_unlock(&s->lock);
  /* A file larger than the whole budget is served from this one load and not kept. */
  if (!kept) unref(e, en);
  *out = en;
  return 0;
}

/* A mounted path with nothing cached for it is loaded without a HEAD first: the load's one
 * suffix-range GET says the object's size and ETag, so a first take costs one round trip
 * less. Returns false (nothing done) when the path is local, the mount itself, or already has
 * an entry (then the caller probes, as ever); else true with the load's result in *rc
 * (LNC_EAGAIN under nowait, before any request). */
static bool load_unprobed(struct lnc_worker *w, struct shard *s, uint64_t h, const char *path,
                          bool nowait, struct entry **out, struct lnc_take_stats *ts, bool *is_dir,
                          struct lnc_error *err, int *rc) {
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(w->e, path, &rel, NULL);
  if (!m || !*rel) return false;
  pthread_mutex_lock(&s->lock);
  if (lookup_locked(s, h, path)) {
    pthread_mutex_unlock(&s->lock);
    return false;
  }
  if (nowait) { /* a load is for a thread that may wait: no HEAD that could only be repeated there */
    pthread_mutex_unlock(&s->lock);
    *rc = lnc_errf(err, LNC_EAGAIN, "%s: not in the search cache yet", path);
    return true;
  }
  struct ident unknown = {0};
  *rc = load_entry(w, s, h, path, &unknown, lnc_engine_now_ns(), out, ts, err); /* unlocks */
  if (*rc == LNC_ENOTFOUND && is_dir && lnc_remote_is_dataset(m, rel)) *is_dir = true;
  return true;
}

/* acquire() past a fresh entry: the path probed (stat or HEAD) and the current entry found, or
 * loaded. */
static int acquire_checked(struct lnc_worker *w, struct shard *s, uint64_t h, const char *path,
                           bool nowait, struct entry **out, struct lnc_take_stats *ts, bool *is_dir,
                           struct lnc_error *err) {
  struct lnc_engine *e = w->e;
  struct entry *en = NULL;
  int64_t stat_ns = lnc_engine_now_ns();
  struct ident id;
  int rc = 0;
  if (load_unprobed(w, s, h, path, nowait, out, ts, is_dir, err, &rc)) return rc;
  if ((rc = probe(e, path, &id, is_dir, err))) {
    /* Gone, or no longer readable: drop what was cached. A store that fails to answer (EIO)
     * says nothing about the object, and its cached search cache serves again after. */
    if (rc != LNC_EIO || !lnc_engine_remote(e, path, NULL, NULL)) drop_gone(e, s, h, path);
    return rc;
  }
  pthread_mutex_lock(&s->lock);
  int found = find_current_locked(e, s, h, path, &id, stat_ns, nowait, &en);
  if (found < 0) return lnc_errf(err, -found, "%s: not in the search cache yet", path);
  if (found == 0) return load_entry(w, s, h, path, &id, stat_ns, out, ts, err);
  pthread_mutex_unlock(&s->lock);
  atomic_fetch_add(&e->hits, 1);
  if (ts) ts->cache_hits++;
  *out = en;
  return 0;
}

/* Finds (or loads) the entry for path and returns it referenced: within revalidate_ms of its
 * last check a cached entry without a system call; else a stat (an object: a HEAD, one at a
 * time), then the cached entry if it is current, or a load. */
static int acquire(struct lnc_worker *w, const char *path, bool nowait, struct entry **out,
                   struct lnc_take_stats *ts, bool *is_dir, struct lnc_error *err) {
  struct lnc_engine *e = w->e;
  uint64_t h = hash_path(path);
  struct shard *s = &e->shards[h % NSHARDS];
  struct entry *checking, *en = fresh_entry(e, s, h, path, &checking);
  if (en) {
    atomic_fetch_add(&e->hits, 1);
    if (ts) ts->cache_hits++;
    *out = en;
    return 0;
  }
  int rc = acquire_checked(w, s, h, path, nowait, out, ts, is_dir, err);
  if (checking) end_check(e, s, checking);
  return rc;
}

/* A take of the data file at path; with is_dir set, a directory is reported there instead
 * of being counted as a failed take. */
static int take_file(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                     const struct lnc_colsel *cols,
                     const struct lnc_take_options *opts, struct ArrowSchema *schema,
                     struct ArrowArray *array, struct lnc_take_stats *stats, bool *is_dir,
                     struct lnc_error *err) {
  struct lnc_engine *e = w->e;
  struct lnc_take_stats local = {0};
  struct entry *en;
  int nowait = opts ? opts->nowait : LNC_NOWAIT_OFF;
  /* Refused before any work, and not counted as a take: nothing was done. */
  if (nowait == LNC_NOWAIT_NEVER && lnc_engine_direct(e))
    return lnc_errf(err, LNC_EAGAIN, "%s: direct reads wait for the device", path);
  if (nowait != LNC_NOWAIT_OFF && !lnc_task_can_park() && lnc_engine_remote(e, path, NULL, NULL))
    return lnc_errf(err, LNC_EAGAIN, "%s: objects are read where the caller can wait or park", path);
  int rc = acquire(w, path, nowait != LNC_NOWAIT_OFF, &en, &local, is_dir, err);
  if (rc && is_dir && *is_dir) return rc;
  if (!rc) {
    struct lnc_io io = w->io;
    io.nowait = nowait;
    struct lnc_take_env env = {.io = &io, .repidx_max = e->cfg.repidx_max};
    rc = lnc_take_env(en->file, &env, ids, n, cols, opts, schema, array, &local, err);
    unref(e, en);
  }
  atomic_fetch_add(&e->takes, 1);
  if (!rc) atomic_fetch_add(&e->rows, n);
  atomic_fetch_add(&e->reads, local.reads);
  atomic_fetch_add(&e->bytes_read, local.bytes_read);
  atomic_fetch_add(&e->bytes_decoded, local.bytes_decoded);
  if (stats) {
    stats->reads += local.reads;
    stats->bytes_read += local.bytes_read;
    stats->bytes_decoded += local.bytes_decoded;
    stats->cache_hits += local.cache_hits;
    stats->cache_misses += local.cache_misses;
    stats->cache_loads += local.cache_loads;
  }
  return rc;
}

int lnc_engine_take_file(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                         const struct lnc_colsel *cols,
                         const struct lnc_take_options *opts, struct ArrowSchema *schema,
                         struct ArrowArray *array, struct lnc_take_stats *stats, bool *is_dir,
                         struct lnc_error *err) {
  if (is_dir) *is_dir = false;
  return take_file(w, path, ids, n, cols, opts, schema, array, stats, is_dir, err);
}

int lnc_engine_file_rows(lnc_worker *w, const char *path, bool nowait, uint64_t *rows,
                         struct lnc_error *err) {
  struct entry *en;
  int rc = acquire(w, path, nowait, &en, NULL, NULL, err);
  if (rc) return rc;
  *rows = en->file->num_rows;
  unref(w->e, en);
  return 0;
}

int lnc_engine_describe(lnc_worker *w, const char *path, struct lnc_buf *json,
                        struct ArrowSchema *schema, uint64_t *num_rows, int *major, int *minor,
                        struct lnc_error *err) {
  struct entry *en;
  int rc = acquire(w, path, false, &en, NULL, NULL, err);
  if (rc) return rc;
  if (num_rows) *num_rows = en->file->num_rows;
  if (major) *major = en->file->major;
  if (minor) *minor = en->file->minor;
  if (json) rc = lnc_file_describe_json(en->file, json, err);
  if (!rc && schema) rc = lnc_file_schema(en->file, schema, err);
  unref(w->e, en);
  return rc;
}
