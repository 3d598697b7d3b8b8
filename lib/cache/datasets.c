/* Datasets through the take engine: opened dataset versions (manifest, deletion vectors, row
 * map: an lnc_dataset) cached per (directory, version) next to the engine's search cache and
 * counted in its one budget, with takes whose data files are read by lnc_engine_take on
 * "<dir>/data/<file>" — so the search caches of every data file of every dataset share the
 * engine's budget, LRU and descriptor bound.
 *
 * Latest: every request opens the directory beneath the root and fstat()s `_versions/`; the
 * directory is listed again only when its identity or mtime changed since the last listing,
 * or when that listing started less than RACY_NS after the mtime it saw (a manifest added in
 * the same timestamp tick would not change the mtime: "racy" listings are never trusted).
 * So a version committed while the engine runs is served by the next request, at the cost
 * of one directory stat per request.
 *
 * Lifetime: a request resolves one version at its start and holds a reference to it until
 * it is done. A version stays cached while it is the latest its directory has shown; any
 * other version is dropped as soon as no request uses it (superseded versions when the
 * latest moves on, pinned old versions at the end of each request). A directory replaced by
 * another (device/inode) drops all its versions, one found gone drops them too, and when the
 * budget has no idle file left to evict, idle versions go, least recently used first
 * (lnc_dscache_shed).
 *
 * A dataset under an object-store mount (lnc_engine_mount_s3) is a key prefix: its latest
 * version is found by listing `_versions/` again once the mount's revalidate_ms has passed
 * (objects appear whole, so no listing is racy and no manifest half-written); its manifest
 * and deletion files are GETs, its data files the engine's mounted paths.
 *
 * Thread-safety: one mutex guards the table, the per-directory records and every reference
 * count; it is held to find, insert or unlink, never while reading files. Loads of one
 * version are single-flight (others wait on a condition variable). */
#include "../lance.h"
#include "cache.h"
#include "../dataset/dataset.h"
#include "../io/loop.h"
#include "../util/error.h"
#include "../util/hash.h"
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

#define NBUCKETS 256
#define RACY_NS  100000000LL /* 100 ms: well above the kernel's timestamp granularity */

enum { V_LOADING,
       V_READY };

struct dsdir;

struct dsver {
  struct dsver *next; /* in its directory's list */
  struct dsdir *d;    /* valid while linked */
  uint64_t version;
  int state;
  bool linked;
  int refs;              /* under the lock: the directory's (while linked) + each user's */
  lnc_dataset *ds;       /* READY: immutable */
  size_t bytes;          /* charged to the engine while linked and READY */
  size_t rowid_bytes;    /* of which the stable row id index (lnc_ds_rowids_memory) */
  char *dir;             /* the dataset path, for data file paths */
  size_t *file_base;     /* per fragment: index of its first data file in checked */
  atomic_uchar *checked; /* per data file: row count checked against the manifest */
  uint64_t last_used;    /* under the lock: the cache's tick at its last lookup (shedding) */
};

struct dsdir {
  struct dsdir *hnext;
  char *path;
  uint64_t hash;
  bool have_id;
  dev_t dev; /* the dataset directory itself */
  ino_t ino;
  bool have_latest, racy;
  uint64_t latest;
  dev_t vdev; /* _versions/ as last listed */
  ino_t vino;
  struct timespec vmtime;
  int64_t checked_ns; /* when the directory and its latest were last checked on disk */
  struct dsver *versions;
  int busy;                      /* requests between lookups (listing, waiting): keep the record */
  const struct lnc_s3_mount *s3; /* under an object-store mount: checked every s3_ms */
  uint32_t s3_ms;
  bool listing; /* under a mount: a listing of _versions/ is in flight */
};

struct lnc_dscache {
  lnc_engine *e;
  pthread_mutex_t lock;
  pthread_cond_t loaded;
  struct dsdir *table[NBUCKETS];
  uint64_t tick; /* under the lock: lookups so far, for last_used */
  atomic_uint_fast64_t nversions, bytes, listings, opens, rowid_bytes;
};

static uint64_t hash_str(const char *s) { return lnc_fnv1a_str(s); }

int lnc_dscache_new(lnc_engine *e, struct lnc_dscache **out, struct lnc_error *err) {
  struct lnc_dscache *c = calloc(1, sizeof *c);
  if (!c) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  c->e = e;
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->loaded, NULL);
  *out = c;
  return 0;
}

static void ver_free(struct dsver *v) {
  if (!v) return;
  lnc_dataset_close(v->ds);
  free(v->dir);
  free(v->file_base);
  free(v->checked);
  free(v);
}

void lnc_dscache_free(struct lnc_dscache *c) {
  if (!c) return;
  for (size_t b = 0; b < NBUCKETS; b++) {
    struct dsdir *d = c->table[b];
    while (d) {
      struct dsdir *dn = d->hnext;
      for (struct dsver *v = d->versions, *vn; v; v = vn) {
        vn = v->next;
        ver_free(v); /* no request is running: the engine is being freed */
      }
      free(d->path);
      free(d);
      d = dn;
    }
  }
  pthread_mutex_destroy(&c->lock);
  pthread_cond_destroy(&c->loaded);
  free(c);
}

void lnc_dscache_stats(struct lnc_dscache *c, struct lnc_engine_stats *o) {
  o->datasets_cached = atomic_load(&c->nversions);
  o->dataset_bytes = atomic_load(&c->bytes);
  o->dataset_listings = atomic_load(&c->listings);
  o->dataset_opens = atomic_load(&c->opens);
  o->rowid_index_bytes = atomic_load(&c->rowid_bytes);
}

/* ---- table (lock held) ------------------------------------------------------------------ */
static struct dsdir *find_dir(struct lnc_dscache *c, const char *path, uint64_t h) {
  struct dsdir *d = c->table[h % NBUCKETS];
  while (d && (d->hash != h || strcmp(d->path, path) != 0)) d = d->hnext;
  return d;
}

static struct dsdir *get_dir(struct lnc_dscache *c, const char *path) {
  uint64_t h = hash_str(path);
  struct dsdir *d = find_dir(c, path, h);
  if (d) return d;
  d = calloc(1, sizeof *d);
  if (!d || !(d->path = strdup(path))) {
    free(d);
    return NULL;
  }
  d->hash = h;
  d->s3 = lnc_engine_remote(c->e, path, NULL, &d->s3_ms);
  d->hnext = c->table[h % NBUCKETS];
  c->table[h % NBUCKETS] = d;
  return d;
}

/* Frees the record once it holds no versions and no request is between lookups. */
static void maybe_free_dir(struct lnc_dscache *c, struct dsdir *d) {
  if (d->versions || d->busy) return;
  struct dsdir **pp = &c->table[d->hash % NBUCKETS];
  while (*pp && *pp != d) pp = &(*pp)->hnext;
  if (*pp) *pp = d->hnext;
  free(d->path);
  free(d);
}

/* Unlinks v from its directory, dropping the directory's reference; returns v when that was
 * the last reference (the caller frees it after unlocking), else NULL. */
static struct dsver *unlink_ver(struct lnc_dscache *c, struct dsver *v) {
  struct dsdir *d = v->d;
  struct dsver **pp = &d->versions;
  while (*pp && *pp != v) pp = &(*pp)->next;
  if (*pp) *pp = v->next;
  v->next = NULL;
  v->linked = false;
  if (v->state == V_READY) {
    lnc_engine_charge(c->e, -(int64_t)v->bytes);
    atomic_fetch_sub(&c->bytes, v->bytes);
    atomic_fetch_sub(&c->rowid_bytes, v->rowid_bytes);
    atomic_fetch_sub(&c->nversions, 1);
  }
  return --v->refs == 0 ? v : NULL;
}

/* Pushes v on a list of versions to free after unlocking (NULL is ignored). */
static void defer(struct dsver **list, struct dsver *v) {
  if (!v) return;
  v->next = *list;
  *list = v;
}

static void free_list(struct dsver *v) {
  while (v) {
    struct dsver *n = v->next;
    ver_free(v);
    v = n;
  }
}

/* Drops the idle versions of d other than `keep` (the new latest). */
static void drop_superseded(struct lnc_dscache *c, struct dsdir *d, uint64_t keep,
                            struct dsver **dead) {
  for (struct dsver *v = d->versions, *n; v; v = n) {
    n = v->next;
    if (v->version != keep && v->state == V_READY && v->refs == 1) defer(dead, unlink_ver(c, v));
  }
}

static void drop_all(struct lnc_dscache *c, struct dsdir *d, struct dsver **dead) {
  while (d->versions) defer(dead, unlink_ver(c, d->versions));
}

static bool is_latest(const struct dsver *v) {
  return v->d->have_latest && v->d->latest == v->version;
}

static void release(struct lnc_dscache *c, struct dsver *v) {
  struct dsver *dead = NULL;
  pthread_mutex_lock(&c->lock);
  if (v->linked && v->refs == 2 && v->state == V_READY && !is_latest(v)) {
    struct dsdir *d = v->d;
    defer(&dead, unlink_ver(c, v)); /* the directory's reference: never the last here */
    maybe_free_dir(c, d);
  }
  if (--v->refs == 0) defer(&dead, v);
  pthread_mutex_unlock(&c->lock);
  free_list(dead);
}

bool lnc_dscache_shed(struct lnc_dscache *c) {
  if (pthread_mutex_trylock(&c->lock) != 0) return false;
  struct dsver *best = NULL;
  for (size_t b = 0; b < NBUCKETS; b++)
    for (struct dsdir *d = c->table[b]; d; d = d->hnext)
      for (struct dsver *v = d->versions; v; v = v->next)
        if (v->state == V_READY && v->refs == 1 && (!best || v->last_used < best->last_used)) best = v;
  struct dsver *dead = NULL;
  if (best) {
    struct dsdir *d = best->d;
    defer(&dead, unlink_ver(c, best)); /* refs was 1: the directory's, so it is freed */
    maybe_free_dir(c, d);
  }
  pthread_mutex_unlock(&c->lock);
  free_list(dead);
  return best != NULL;
}

/* ---- resolving and opening a version ---------------------------------------------------- */
static int64_t ts_ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec; }

static int open_dir(struct lnc_dscache *c, const char *dir, struct lnc_error *err) {
  int fd = lnc_engine_open_beneath(c->e, dir, O_DIRECTORY);
  if (fd >= 0) return fd;
  int en = errno;
  if (en == EXDEV || en == ELOOP)
    return -lnc_errf(err, LNC_EACCES, "%s: path leaves the data root", dir);
  if (en == ENOENT || en == ENOTDIR)
    return -lnc_errf(err, LNC_ENOTFOUND, "%s: no such dataset directory", dir);
  return -lnc_errf(err, lnc_code_from_errno(en), "%s: %s", dir, strerror(en));
}

/* Lists _versions (vfd, or the objects at loc when vfd < 0) and returns the newest version
 * present. */
static int list_latest(struct lnc_dscache *c, int vfd, const struct lnc_ds_loc *loc, const char *dir,
                       uint64_t *out, struct lnc_error *err) {
  struct lnc_ds_version *vs, v;
  size_t n;
  atomic_fetch_add(&c->listings, 1);
  int rc = vfd >= 0 ? lnc_ds_list_versions(vfd, dir, &vs, &n, err) : lnc_ds_loc_versions(loc, dir, &vs, &n, err);
  if (rc) return rc;
  rc = lnc_ds_pick_version(vs, n, 0, dir, &v, err);
  free(vs);
  if (!rc) *out = v.version;
  return rc;
}

static int make_ready(struct dsver *v, lnc_dataset *ds, struct lnc_error *err) {
  v->ds = ds;
  /* A cached version holds no descriptor: its data files are opened through the engine,
   * within its bound and LRU, and its deletions are loaded. Without this every dataset ever
   * served kept its directory open, outside any bound (a root of 400 datasets exhausted a
   * 256-descriptor limit). */
  lnc_ds_detach_dir(ds);
  size_t nfiles = lnc_ds_num_files(ds);
  v->file_base = calloc(ds->nfrag + 1, sizeof *v->file_base);
  v->checked = calloc(nfiles + 1, sizeof *v->checked);
  if (!v->file_base || !v->checked) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", v->dir);
  for (size_t i = 0, k = 0; i < ds->nfrag; i++) {
    v->file_base[i] = k;
    k += ds->frags[i].nfiles;
  }
  v->bytes = lnc_ds_memory(ds) + strlen(v->dir) + (ds->nfrag + 1) * sizeof *v->file_base + nfiles;
  v->rowid_bytes = lnc_ds_rowids_memory(ds);
  return 0;
}

static int acquire_once(struct lnc_dscache *c, const char *dir, uint64_t want, bool nowait,
                        struct dsver **out, struct lnc_error *err);

/* Whether d's latest version was checked recently enough to be trusted without asking. */
static bool dir_fresh(struct lnc_dscache *c, const struct dsdir *d) {
  return d->have_latest && (d->s3 ? lnc_fresh_within(d->checked_ns, d->s3_ms) : lnc_engine_fresh(c->e, d->checked_ns));
}

/* The location of a dataset under a mount: rel below it as a key prefix ending in '/'. */
static int remote_loc(const struct lnc_s3_mount *m, const char *rel, struct lnc_ds_loc *loc,
                      struct lnc_error *err) {
  size_t n = strlen(rel);
  *loc = (struct lnc_ds_loc){.fd = -1, .s3 = m, .prefix = malloc(n + 2)};
  if (!loc->prefix) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  snprintf(loc->prefix, n + 2, "%s%s", rel, n ? "/" : "");
  return 0;
}

/* A manifest that cannot be read is taken for one being written (a writer that does not
 * rename into place, a copy in progress) while it is younger than this; after it, for damage,
 * and the latest version answers as corrupt again. */
#define MANIFEST_SETTLE_NS (10 * 1000000000LL)

/* A manifest file ends with the magic "LANC" once it is completely written (what the parser
 * checks first); a missing tail is what a write in progress looks like. */
static bool manifest_complete(int vfd, const char *name, const struct stat *st) {
  if (st->st_size < 4) return false;
  int fd = openat(vfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return true; /* unreadable is not "being written" */
  char tail[4];
  bool done = pread(fd, tail, 4, st->st_size - 4) == 4 && memcmp(tail, "LANC", 4) == 0;
  close(fd);
  return done;
}

/* Whether dir's newest manifest was modified within MANIFEST_SETTLE_NS and is not complete, and so may still be
 * being written; *prev gets the version before it. No version before it: false. */
static bool latest_being_written(struct lnc_dscache *c, const char *dir, uint64_t *prev) {
  struct lnc_error ignored = {0};
  if (lnc_engine_remote(c->e, dir, NULL, NULL)) return false; /* objects appear whole */
  int dfd = open_dir(c, dir, &ignored);
  if (dfd < 0) return false;
  int vfd = lnc_ds_openat(dfd, "_versions", O_RDONLY | O_DIRECTORY, dir, &ignored);
  close(dfd);
  if (vfd < 0) return false;
  struct lnc_ds_version *vs = NULL;
  size_t n = 0;
  bool young = false;
  if (lnc_ds_list_versions(vfd, dir, &vs, &n, &ignored) == 0 && n >= 2) {
    size_t newest = 0, before = n;
    for (size_t i = 1; i < n; i++)
      if (vs[i].version > vs[newest].version) newest = i;
    for (size_t i = 0; i < n; i++)
      if (i != newest && (before == n || vs[i].version > vs[before].version)) before = i;
    char name[64];
    lnc_ds_manifest_name(&vs[newest], name, sizeof name);
    struct stat st;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (fstatat(vfd, name, &st, 0) == 0 && ts_ns(&now) - ts_ns(&st.st_mtim) < MANIFEST_SETTLE_NS &&
        !manifest_complete(vfd, name, &st)) {
      young = true;
      *prev = vs[before].version;
    }
  }
  free(vs);
  close(vfd);
  return young;
}

int lnc_dscache_known_dir(struct lnc_dscache *c, const char *dir) {
  pthread_mutex_lock(&c->lock);
  struct dsdir *d = find_dir(c, dir, hash_str(dir));
  /* Under a mount, a prefix once seen holding a dataset is taken for one until its listing
   * says otherwise: asking the store "is this an object?" first would cost a HEAD and a
   * listing at every revalidation. */
  int known = d && (dir_fresh(c, d) || (d->s3 && d->have_latest));
  pthread_mutex_unlock(&c->lock);
  return known;
}

/* Within revalidate_ms of the last check of dir on disk: the version wanted (0 = the latest
 * then seen), referenced, if it is open — no directory opened, no stat. NULL otherwise. */
static struct dsver *fresh_version(struct lnc_dscache *c, const char *dir, uint64_t want) {
  struct dsver *ver = NULL;
  pthread_mutex_lock(&c->lock);
  struct dsdir *d = find_dir(c, dir, hash_str(dir));
  /* Under a mount, while one request lists _versions/ again (a round trip) the others are
   * served the latest it is checking, rather than each sending a listing of its own. */
  if (d && (dir_fresh(c, d) || (d->s3 && d->listing && d->have_latest))) {
    uint64_t v = want ? want : d->latest;
    for (ver = d->versions; ver && ver->version != v; ver = ver->next) {}
    if (ver && ver->state == V_READY) {
      ver->refs++;
      ver->last_used = ++c->tick;
    } else {
      ver = NULL;
    }
  }
  pthread_mutex_unlock(&c->lock);
  return ver;
}

/* Resolves `want` (0 = latest) for the dataset at dir and returns the version referenced;
 * the caller releases it. The latest version can vanish between listing _versions/ and
 * opening its manifest (a writer rolling back, a cleanup racing us): then the listing is
 * simply done again, a few times, rather than failing a request that asked for "latest". */
static int acquire(struct lnc_dscache *c, const char *dir, uint64_t want, bool nowait,
                   struct dsver **out, bool *unchecked, bool force, struct lnc_error *err) {
  /* Within the revalidation window: no system call (recheck_after_take says when it matters). */
  if (!force && (*out = fresh_version(c, dir, want))) {
    if (unchecked) *unchecked = true;
    return 0;
  }
  if (unchecked) *unchecked = false;
  int rc = acquire_once(c, dir, want, nowait, out, err);
  for (int again = 0; rc == LNC_ENOTFOUND && want == 0 && again < 3; again++) {
    pthread_mutex_lock(&c->lock);
    /* find, not get: a record made here for a path that is no dataset would never be freed */
    struct dsdir *d = find_dir(c, dir, hash_str(dir));
    if (d) d->have_latest = false; /* force a fresh listing */
    pthread_mutex_unlock(&c->lock);
    rc = acquire_once(c, dir, want, nowait, out, err);
  }
  uint64_t prev;
  if (rc == LNC_ECORRUPT && want == 0 && latest_being_written(c, dir, &prev)) {
    /* The newest manifest is still being written: serve the one before it meanwhile. */
    rc = acquire_once(c, dir, prev, nowait, out, err);
  }
  return rc;
}

/* Opens the dataset directory and its _versions/ beneath the root and stats both (the
 * identities and the mtime that decide whether the cached listing still holds). */
static int open_version_dirs(struct lnc_dscache *c, const char *dir, int *dfd, int *vfd,
                             struct stat *dst, struct stat *vst, struct lnc_error *err) {
  *dfd = open_dir(c, dir, err);
  if (*dfd < 0) return -*dfd;
  struct lnc_error e2 = {0};
  *vfd = lnc_ds_openat(*dfd, "_versions", O_RDONLY | O_DIRECTORY, dir, &e2);
  if (*vfd < 0) {
    close(*dfd);
    if (e2.code != LNC_ENOTFOUND) return lnc_errf(err, e2.code, "%s", e2.message);
    return lnc_errf(err, LNC_ENOTFOUND, "%s: a directory without _versions/ (not a Lance "
                                        "dataset)",
                    dir);
  }
  if (fstat(*dfd, dst) != 0 || fstat(*vfd, vst) != 0) {
    int en = errno;
    close(*vfd);
    close(*dfd);
    return lnc_errf(err, LNC_EIO, "%s: %s", dir, strerror(en));
  }
  return 0;
}

/* dir is gone (or no longer a dataset): what is cached of it goes, so that it is neither
 * charged to the budget nor kept for ever. Versions in use are freed by their last user. */
static void forget_locked(struct lnc_dscache *c, struct dsdir *d, struct dsver **dead) {
  drop_all(c, d, dead);
  d->have_latest = d->have_id = false;
}

void lnc_dscache_forget(struct lnc_dscache *c, const char *dir) {
  struct dsver *dead = NULL;
  pthread_mutex_lock(&c->lock);
  struct dsdir *d = find_dir(c, dir, hash_str(dir));
  if (d) {
    forget_locked(c, d, &dead);
    maybe_free_dir(c, d);
  }
  pthread_mutex_unlock(&c->lock);
  free_list(dead);
}

/* First sight of the directory, or it was replaced by another dataset: start over. */
static void note_identity_locked(struct lnc_dscache *c, struct dsdir *d, const struct stat *dst,
                                 struct dsver **dead) {
  if (d->have_id && d->dev == dst->st_dev && d->ino == dst->st_ino) return;
  drop_all(c, d, dead);
  d->have_id = true;
  d->dev = dst->st_dev;
  d->ino = dst->st_ino;
  d->have_latest = false;
}

/* Whether a listing that started at checked_ns may store its answer *v. Listings run with the
 * lock dropped, so one that started earlier can end later: storing it would move the latest
 * back (v6 served, then v5 again) and drop the idle newer version. A later check's answer
 * stands, and goes into *v for this request too. */
static bool newer_answer(struct dsdir *d, int64_t checked_ns, uint64_t *v) {
  if (!d->have_latest || d->checked_ns <= checked_ns) return true;
  *v = d->latest;
  return false;
}

/* The latest version into *v: the cached one while _versions/ is unchanged since a listing
 * that can be trusted (not racy), else a new listing, made with the lock dropped. */
static int resolve_latest_locked(struct lnc_dscache *c, struct dsdir *d, const char *dir, int vfd,
                                 const struct stat *dst, const struct stat *vst, int64_t checked_ns,
                                 uint64_t *v, struct dsver **dead, struct lnc_error *err) {
  if (d->have_latest && !d->racy && d->vdev == vst->st_dev && d->vino == vst->st_ino &&
      ts_ns(&d->vmtime) == ts_ns(&vst->st_mtim)) {
    *v = d->latest;
    d->checked_ns = checked_ns;
    return 0;
  }
  d->busy++;
  pthread_mutex_unlock(&c->lock);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int rc = list_latest(c, vfd, NULL, dir, v, err);
  pthread_mutex_lock(&c->lock);
  d->busy--;
  if (!rc && d->have_id && d->dev == dst->st_dev && d->ino == dst->st_ino && newer_answer(d, checked_ns, v)) {
    if (!d->have_latest || d->latest != *v) drop_superseded(c, d, *v, dead);
    d->have_latest = true;
    d->latest = *v;
    d->vdev = vst->st_dev;
    d->vino = vst->st_ino;
    d->vmtime = vst->st_mtim;
    d->racy = ts_ns(&now) - ts_ns(&vst->st_mtim) < RACY_NS;
    d->checked_ns = checked_ns;
  }
  return rc;
}

/* Version v of d (lock held), waiting while another request loads it. Found READY: *ver is
 * referenced, *claimed false. Missing: a LOADING placeholder is linked so that concurrent
 * requests wait for this one load, *claimed true, and the caller loads it (load_claimed).
 * nowait: a version not open yet (or being opened) is LNC_EAGAIN. */
static int find_or_claim_locked(struct lnc_dscache *c, struct dsdir *d, const char *dir, uint64_t v,
                                bool nowait, struct dsver **ver, bool *claimed, struct lnc_error *err) {
  *claimed = false;
  for (;;) {
    struct dsver *x;
    for (x = d->versions; x && x->version != v; x = x->next) {}
    if (nowait && (!x || x->state == V_LOADING))
      return lnc_errf(err, LNC_EAGAIN, "%s: version %llu is not open yet", dir, (unsigned long long)v);
    if (x && x->state == V_LOADING) {
      d->busy++;
      pthread_cond_wait(&c->loaded, &c->lock);
      d->busy--;
      continue;
    }
    if (x) { /* READY */
      x->refs++;
      x->last_used = ++c->tick;
      *ver = x;
      return 0;
    }
    x = calloc(1, sizeof *x);
    if (!x || !(x->dir = strdup(dir))) {
      free(x);
      return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", dir);
    }
    x->version = v;
    x->last_used = ++c->tick;
    x->state = V_LOADING;
    x->linked = true;
    x->refs = 2; /* the directory's and ours */
    x->d = d;
    x->next = d->versions;
    d->versions = x;
    *ver = x;
    *claimed = true;
    return 0;
  }
}

/* A base path of a dataset read through the engine (a shallow clone's source): below the
 * data root, opened beneath it, or under a mount. Anywhere else is refused as any path
 * outside the root is: a manifest must not make the daemon read what a URL could not. */
static int engine_resolve(void *ctx, const char *uri, struct lnc_ds_loc *loc, char **dir, struct lnc_error *err) {
  struct lnc_dscache *c = ctx;
  char path[4200];
  if (!strncmp(uri, "s3://", 5)) {
    const char *rel;
    const struct lnc_s3_mount *m =
        lnc_engine_mount_path_of(c->e, uri, path, sizeof path) ? NULL : lnc_engine_remote(c->e, path, &rel, NULL);
    if (!m) return lnc_errf(err, LNC_EACCES, "%.300s is under no mount of this daemon", uri);
    int rc = remote_loc(m, rel, loc, err);
    if (!rc && !(*dir = strdup(path))) rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
    return rc;
  }
  const char *rel;
  int rc = lnc_ds_base_local(uri, path, sizeof path, err);
  if (rc) return rc;
  if (!lnc_engine_root_rel(c->e, path, &rel)) return lnc_errf(err, LNC_EACCES, "%.300s is outside the data root", path);
  int fd = open_dir(c, rel, err);
  if (fd == -LNC_ENOTFOUND) { /* listed in the manifest, gone from the disk: a damaged clone */
    if (err) err->code = LNC_ECORRUPT;
    return LNC_ECORRUPT;
  }
  if (fd < 0) return -fd;
  *loc = (struct lnc_ds_loc){.fd = fd};
  if (!(*dir = strdup(rel))) {
    close(fd);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  return 0;
}

/* Opens the claimed placeholder's version (lock not held; dfd consumed) and publishes it
 * READY, charged to the engine, waking the requests that wait for it. On failure the
 * placeholder is unlinked and freed and they wake to find it gone. */
static int load_claimed(struct lnc_dscache *c, struct dsver *ver, struct lnc_ds_loc loc, const char *dir,
                        struct lnc_error *err) {
  atomic_fetch_add(&c->opens, 1);
  lnc_dataset *ds = NULL;
  struct lnc_ds_resolver res = {engine_resolve, c};
  int rc = lnc_ds_open_at(loc, dir, ver->version, &res, &ds, err);
  if (!rc) rc = make_ready(ver, ds, err);
  pthread_mutex_lock(&c->lock);
  if (rc) {
    if (ver->linked) {
      struct dsdir *vd = ver->d;
      unlink_ver(c, ver); /* LOADING: nothing charged; ours stays */
      maybe_free_dir(c, vd);
    }
  } else {
    ver->state = V_READY;
    if (ver->linked) {
      lnc_engine_charge(c->e, (int64_t)ver->bytes);
      atomic_fetch_add(&c->bytes, ver->bytes);
      atomic_fetch_add(&c->rowid_bytes, ver->rowid_bytes);
      atomic_fetch_add(&c->nversions, 1);
    }
  }
  pthread_cond_broadcast(&c->loaded);
  pthread_mutex_unlock(&c->lock);
  if (rc) ver_free(ver);
  return rc;
}

/* The latest version of a dataset under a mount: a listing of its `_versions/`, made with
 * the lock dropped (d->busy keeps the record). */
static int resolve_latest_remote_locked(struct lnc_dscache *c, struct dsdir *d, const char *dir,
                                        const struct lnc_ds_loc *loc, int64_t checked_ns,
                                        uint64_t *v, struct dsver **dead, struct lnc_error *err) {
  d->busy++;
  d->listing = true;
  pthread_mutex_unlock(&c->lock);
  int rc = list_latest(c, -1, loc, dir, v, err);
  pthread_mutex_lock(&c->lock);
  d->busy--;
  d->listing = false;
  if (!rc && newer_answer(d, checked_ns, v)) {
    if (!d->have_latest || d->latest != *v) drop_superseded(c, d, *v, dead);
    d->have_latest = true;
    d->latest = *v;
    d->checked_ns = checked_ns;
  }
  return rc;
}

/* acquire_once for a dataset under a mount: no directory to open or stat, a listing for the
 * latest, the version found or loaded. */
static int acquire_once_remote(struct lnc_dscache *c, const struct lnc_s3_mount *m, const char *dir,
                               const char *rel, uint64_t want, bool nowait, struct dsver **out,
                               struct lnc_error *err) {
  struct lnc_ds_loc loc;
  int rc = remote_loc(m, rel, &loc, err);
  if (rc) return rc;
  int64_t checked_ns = lnc_engine_now_ns();
  struct dsver *dead = NULL, *ver = NULL;
  bool claimed = false;
  pthread_mutex_lock(&c->lock);
  struct dsdir *d = get_dir(c, dir);
  uint64_t v = want;
  if (!d)
    rc = lnc_errf(err, LNC_ENOMEM, "%s: out of memory", dir);
  else if (want == 0)
    rc = resolve_latest_remote_locked(c, d, dir, &loc, checked_ns, &v, &dead, err);
  if (!rc) rc = find_or_claim_locked(c, d, dir, v, nowait, &ver, &claimed, err);
  if (!rc && claimed) {
    pthread_mutex_unlock(&c->lock);
    free_list(dead);
    rc = load_claimed(c, ver, loc, dir, err); /* loc consumed */
    if (!rc) *out = ver;
    return rc;
  }
  /* The listing answered, and holds no dataset (any more): a removed prefix lists no
   * manifests (LNC_ECORRUPT). A store that failed to answer (LNC_EIO) keeps what is cached. */
  if (rc && d && want == 0 && (rc == LNC_ENOTFOUND || rc == LNC_ECORRUPT)) forget_locked(c, d, &dead);
  if (rc && d) maybe_free_dir(c, d);
  pthread_mutex_unlock(&c->lock);
  free_list(dead);
  lnc_ds_loc_close(&loc);
  if (!rc) *out = ver;
  return rc;
}

/* One resolution of `want` (0 = latest) for dir: the directories opened and checked, the
 * latest resolved, the version found or loaded. nowait: see find_or_claim_locked. */
static int acquire_once(struct lnc_dscache *c, const char *dir, uint64_t want, bool nowait,
                        struct dsver **out, struct lnc_error *err) {
  *out = NULL;
  if (!dir || !dir[0]) return lnc_errf(err, LNC_EINVAL, "empty dataset path");
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(c->e, dir, &rel, NULL);
  if (m) return acquire_once_remote(c, m, dir, rel, want, nowait, out, err);
  int dfd, vfd;
  struct stat dst, vst;
  int64_t checked_ns = lnc_engine_now_ns();
  int rc = open_version_dirs(c, dir, &dfd, &vfd, &dst, &vst, err);
  if (rc) {
    if (rc == LNC_ENOTFOUND) lnc_dscache_forget(c, dir);
    return rc;
  }
  struct dsver *dead = NULL, *ver = NULL;
  bool claimed = false;
  pthread_mutex_lock(&c->lock);
  struct dsdir *d = get_dir(c, dir);
  if (!d) {
    pthread_mutex_unlock(&c->lock);
    close(vfd);
    close(dfd);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", dir);
  }
  note_identity_locked(c, d, &dst, &dead);
  uint64_t v = want;
  if (want == 0) {
    rc = resolve_latest_locked(c, d, dir, vfd, &dst, &vst, checked_ns, &v, &dead, err);
  } else if (d->have_latest && d->latest == want) {
    /* The version pinned is the one cached as the latest, which stays cached only while it is
     * the latest: past the revalidation window it must be checked as a request for the latest
     * would check it (a stat compared, a listing only when _versions/ changed). Otherwise a
     * version removed since (LanceDB's optimize prunes old versions) went on being served from
     * the cache to every `version=N` until a request for the latest came by, where Lance
     * answers "not found". Superseded, it is dropped here and looked for on disk below. A
     * listing that fails is left to the open of the version pinned to report. */
    uint64_t latest;
    struct lnc_error ignored = {0};
    (void)resolve_latest_locked(c, d, dir, vfd, &dst, &vst, checked_ns, &latest, &dead, &ignored);
  }
  close(vfd);
  if (!rc) rc = find_or_claim_locked(c, d, dir, v, nowait, &ver, &claimed, err);
  if (!rc && claimed) {
    pthread_mutex_unlock(&c->lock);
    free_list(dead);
    rc = load_claimed(c, ver, (struct lnc_ds_loc){.fd = dfd}, dir, err);
    if (!rc) *out = ver;
    return rc;
  }
  if (rc) maybe_free_dir(c, d);
  pthread_mutex_unlock(&c->lock);
  free_list(dead);
  close(dfd);
  if (!rc) *out = ver;
  return rc;
}

/* ---- reading data files through the engine ---------------------------------------------- */
struct reader_ctx {
  lnc_worker *w;
  struct dsver *v;
};

static int engine_file_take(void *ctx, lnc_dataset *ds, size_t frag, size_t file,
                            const uint64_t *rows, size_t n, const struct lnc_colsel *cols,
                            const struct lnc_take_options *opts,
                            struct ArrowSchema *schema, struct ArrowArray *array,
                            struct lnc_take_stats *stats, struct lnc_error *err) {
  struct reader_ctx *r = ctx;
  const struct lnc_ds_fragment *fr = &ds->frags[frag];
  const Lance__Table__DataFile *df = fr->files[file].pb;
  char path[4200];
  int rc = lnc_ds_file_engine_path(ds, r->v->dir, df, path, sizeof path, err);
  if (rc) return rc;
  size_t idx = r->v->file_base[frag] + file;
  if (!atomic_load(&r->v->checked[idx])) {
    /* Once per opened version and data file: the file must have the fragment's rows. */
    uint64_t nrows = 0;
    rc = lnc_engine_file_rows(r->w, path, opts && opts->nowait, &nrows, err);
    if (rc == LNC_ENOTFOUND) {
      if (err) err->code = LNC_ECORRUPT; /* listed in the manifest, gone from the disk */
      return LNC_ECORRUPT;
    }
    if (rc) return rc;
    if (nrows != fr->pb->physical_rows)
      return lnc_errf(err, LNC_ECORRUPT, "the file has %llu rows, the manifest says %llu",
                      (unsigned long long)nrows, (unsigned long long)fr->pb->physical_rows);
    atomic_store(&r->v->checked[idx], 1);
  }
  rc = lnc_engine_take_file(r->w, path, rows, n, cols, opts, schema, array, stats, NULL, err);
  if (rc == LNC_ENOTFOUND) {
    if (err) err->code = LNC_ECORRUPT;
    return LNC_ECORRUPT;
  }
  return rc;
}

int lnc_engine_is_dataset(lnc_worker *w, const char *path) {
  if (!w || !path || !path[0]) return 0;
  /* A dataset checked within revalidate_ms is one without asking the disk, as
   * lnc_engine_take knows it: every request pinning a version (lanced.torch's, all of them)
   * paid an open and a close here before its take. A directory removed meanwhile fails the
   * take as it would for a request of the latest within the same window. */
  if (lnc_dscache_known_dir(lnc_engine_dscache(lnc_worker_engine(w)), path)) return 1;
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(lnc_worker_engine(w), path, &rel, NULL);
  if (m) return lnc_remote_is_dataset(m, rel);
  int fd = lnc_engine_open_beneath(lnc_worker_engine(w), path, O_PATH | O_DIRECTORY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) lnc_dscache_forget(lnc_engine_dscache(lnc_worker_engine(w)), path);
    return 0;
  }
  close(fd);
  return 1;
}

/* A latest version served within revalidate_ms without a check may be one the dataset no
 * longer has, and two errors say so: a directory dropped and made again under the same name
 * (LanceDB dropTable and createTable, an overwrite followed by a cleanup) leaves its data
 * files gone, so the take finds them missing (LNC_ECORRUPT); a row past its end (LNC_ERANGE)
 * is what a writer asks for right after its append. Rather than answer either from a version
 * that may be stale, the dataset is checked at once (its window ended) and the take runs once
 * more: an error that stands after a check is the dataset's. Only failing takes pay it. A
 * version whose files are gone is also dropped from the cache, pinned or not: its number may
 * name another manifest now (a dataset made again with as many versions; under a mount there
 * is no directory identity to tell), so the retry reads the manifest again. */
static bool recheck_after_take(struct lnc_dscache *c, const char *dir, struct dsver *v, bool unchecked, uint64_t want,
                               int rc) {
  if (rc != LNC_ECORRUPT && rc != LNC_ERANGE) return false;
  pthread_mutex_lock(&c->lock);
  /* Files the cached version lists are gone: the version number may now name another
   * manifest (a dataset made again under the name with as many versions; a mount has no
   * directory identity to tell): the next use reads the manifest again. */
  bool dropped = rc == LNC_ECORRUPT && v->linked;
  if (dropped) unlink_ver(c, v); /* ours stays: never the last reference here */
  struct dsdir *d = find_dir(c, dir, hash_str(dir));
  /* A row past the end is checked at once only where a check is a stat: under a mount it is
   * a listing, which a client asking for such rows could make on every request. There the
   * latest stays s3_revalidate_ms old at most, as documented. */
  bool check = d && want == 0 && unchecked && (rc == LNC_ECORRUPT || !d->s3);
  if (check) d->checked_ns = 0;
  pthread_mutex_unlock(&c->lock);
  return dropped || check;
}

int lnc_engine_dataset_take(lnc_worker *w, const char *dir, uint64_t version,
                            const uint64_t *ids, size_t n, const char *const *columns,
                            size_t ncolumns, const struct lnc_take_options *opts,
                            struct ArrowSchema *schema, struct ArrowArray *array,
                            struct lnc_take_stats *stats, struct lnc_error *err) {
  if (!w || !schema || !array || (n && !ids))
    return lnc_errf(err, LNC_EINVAL, "lnc_engine_dataset_take: NULL argument");
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  lnc_engine *e = lnc_worker_engine(w);
  int nowait = opts ? opts->nowait : LNC_NOWAIT_OFF;
  /* Every data file would refuse it anyway; refusing here skips listing the versions. */
  if (nowait == LNC_NOWAIT_NEVER && lnc_engine_direct(e))
    return lnc_errf(err, LNC_EAGAIN, "%s: direct reads wait for the device", dir);
  if (nowait != LNC_NOWAIT_OFF && !lnc_task_can_park() && lnc_engine_remote(e, dir, NULL, NULL))
    return lnc_errf(err, LNC_EAGAIN, "%s: objects are read where the caller can wait or park", dir);
  struct lnc_dscache *c = lnc_engine_dscache(e);
  for (int attempt = 0;; attempt++) {
    struct dsver *v;
    bool unchecked;
    /* The second attempt checks the dataset itself: not the window another request may be
     * refilling with a listing that started before the write (or, under a mount, is still
     * under way: fresh_version serves the old latest meanwhile). */
    int rc = acquire(c, dir, version, nowait, &v, &unchecked, attempt > 0, err);
    if (rc) return rc;
    struct reader_ctx ctx = {w, v};
    struct lnc_ds_reader rd = {engine_file_take, &ctx};
    rc = lnc_ds_take(v->ds, &rd, ids, n, columns, ncolumns, opts, schema, array, stats, err);
    bool again = attempt == 0 && recheck_after_take(c, dir, v, unchecked, version, rc);
    release(c, v);
    if (!again) return rc;
  }
}

/* The description with the versions listed now: the cached version holds no directory. */
/* Where the dataset at engine path dir is, for a read of a few small files: its key prefix
 * under a mount, or its directory opened beneath the root. lnc_ds_loc_close frees it. */
static int engine_loc(struct lnc_dscache *c, const char *dir, struct lnc_ds_loc *loc, struct lnc_error *err) {
  const char *rel;
  const struct lnc_s3_mount *m = lnc_engine_remote(c->e, dir, &rel, NULL);
  *loc = (struct lnc_ds_loc){.fd = -1};
  if (m) return remote_loc(m, rel, loc, err);
  loc->fd = open_dir(c, dir, err);
  return loc->fd < 0 ? -loc->fd : 0;
}

static int describe_json(struct lnc_dscache *c, struct dsver *v, const char *dir, struct lnc_buf *json,
                         struct lnc_error *err) {
  struct lnc_ds_loc loc;
  int rc = engine_loc(c, dir, &loc, err);
  if (!rc) rc = lnc_ds_describe_json_at(v->ds, &loc, json, err);
  lnc_ds_loc_close(&loc);
  return rc;
}

int lnc_engine_dataset_tag(lnc_worker *w, const char *dir, const char *tag, int nowait, uint64_t *version,
                           struct lnc_error *err) {
  if (!w || !dir || !tag || !version) return lnc_errf(err, LNC_EINVAL, "lnc_engine_dataset_tag: NULL argument");
  struct lnc_dscache *c = lnc_engine_dscache(lnc_worker_engine(w));
  /* Locally a small file read where the versions are listed too: on the caller's thread. */
  if (nowait != LNC_NOWAIT_OFF && !lnc_task_can_park() && lnc_engine_remote(c->e, dir, NULL, NULL))
    return lnc_errf(err, LNC_EAGAIN, "%s: objects are read where the caller can wait or park", dir);
  struct lnc_ds_loc loc;
  int rc = engine_loc(c, dir, &loc, err);
  if (!rc) rc = lnc_ds_read_tag(&loc, dir, tag, version, err);
  lnc_ds_loc_close(&loc);
  return rc;
}

int lnc_engine_dataset_describe(lnc_worker *w, const char *dir, uint64_t version,
                                struct lnc_buf *json, struct ArrowSchema *schema,
                                uint64_t *num_rows, uint64_t *version_out, int *major,
                                int *minor, struct lnc_error *err) {
  if (!w) return lnc_errf(err, LNC_EINVAL, "lnc_engine_dataset_describe: NULL argument");
  if (schema) memset(schema, 0, sizeof *schema);
  struct lnc_dscache *c = lnc_engine_dscache(lnc_worker_engine(w));
  struct dsver *v;
  int rc = acquire(c, dir, version, false, &v, NULL, false, err);
  if (rc) return rc;
  if (num_rows) *num_rows = lnc_dataset_num_rows(v->ds);
  if (version_out) *version_out = lnc_dataset_version(v->ds);
  lnc_dataset_data_format(v->ds, major, minor);
  if (json) rc = describe_json(c, v, dir, json, err);
  if (!rc && schema) {
    /* The types as a take produces them: a zero-row take reads one fragment's schema. */
    struct reader_ctx ctx = {w, v};
    struct lnc_ds_reader rd = {engine_file_take, &ctx};
    struct ArrowArray a;
    rc = lnc_ds_take(v->ds, &rd, NULL, 0, NULL, 0, NULL, schema, &a, NULL, err);
    if (!rc) a.release(&a);
  }
  release(c, v);
  return rc;
}
