/* io_uring read engine (ring.h): plan a batch (drop empty reads, sort, merge, align for
 * O_DIRECT), then one loop that preps what fits, submits, reaps and resubmits short reads.
 * Without io_uring the same plan and completion handling run through pread. No threads. */
#include "ring.h"
#include "loop.h"
#include "../util/error.h"
#include "../util/assert.h"
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_SUBMIT     (1u << 30) /* bytes per submitted read; the kernel caps a read near 2 GiB */
#define MAX_TRIES      64         /* EAGAIN/EINTR answers for one read before giving up */
#define BUFFERED_ALIGN 64         /* pool alignment when O_DIRECT is off: a cache line */

enum { BUF_DST,
       BUF_POOL,
       BUF_TEMP };

/* One read as submitted: a merged (and, for O_DIRECT, aligned) range of the file covering
 * the sorted reads ord[first..last). */
struct ext {
  uint64_t off;  /* file offset of the range (block-aligned when direct) */
  uint64_t len;  /* bytes asked of the kernel (a multiple of the block when direct) */
  uint64_t need; /* bytes that must arrive: up to the end of the furthest read */
  uint64_t done; /* bytes arrived so far */
  uint8_t *buf;  /* where they land; NULL until assigned */
  size_t first, last;
  struct lnc_ring *owner; /* whose read this is: a completion's user_data is &ext, and a
                             loop routes it back here (lnc_ring_route) */
  uint8_t kind;           /* BUF_*: decided by the plan, buffer assigned at first submission */
  bool issued;            /* counted in stats->reads */
  bool overflow;          /* BUF_TEMP because the pool was full: counted in overflow_used */
  uint16_t tries;
};

struct lnc_ring {
  struct io_uring ring;
  struct io_uring *q; /* where reads go: &ring, or a loop's io_uring for a guest */
  bool uring;         /* false = pread mode */
  bool guest;         /* reads share a loop's io_uring; the task parks while they fly */
  bool fixed;         /* pool registered: read_fixed into it */
  int buf_index;      /* its index in q's registered buffers (0 for a ring of its own) */
  size_t fixed_bytes; /* how much of the pool, from its start, is registered */
  unsigned depth;     /* most reads in flight */
  uint32_t block;
  uint64_t merge_gap, max_merged;
  uint8_t *pool; /* pool_bytes, block-aligned; bump-allocated, reset when nothing is in flight */
  size_t pool_bytes, pool_used;
  size_t overflow_used; /* guests: bytes of pool-sized reads given buffers of their own while
                          the pool is full (at most GUEST_OVERFLOW_BYTES) */
  /* Scratch that only grows, so a batch allocates nothing once the ring has warmed up. */
  struct lnc_read **ord;
  size_t ord_cap;
  struct ext *ext;
  size_t *retry; /* stack of extents to resubmit; same capacity as ext */
  size_t ext_cap;
  /* Guests: completions routed here by the loop while the task is parked, and the task
   * that waits for wake_at of them. Same capacity as ext. */
  size_t *landed_idx;
  int *landed_res;
  size_t nlanded;
  size_t wake_at;
  struct lnc_task *waiter;
};

/* ---- once-per-process notices ------------------------------------------------------ */
static void (*log_fn)(const char *line);
static int logged_direct, logged_uring;

void lnc_ring_set_log(void (*fn)(const char *line)) { __atomic_store_n(&log_fn, fn, __ATOMIC_RELEASE); }

LNC_PRINTF(2, 3)
static void log_once(int *flag, const char *fmt, ...) {
  if (__atomic_exchange_n(flag, 1, __ATOMIC_ACQ_REL)) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  void (*fn)(const char *) = __atomic_load_n(&log_fn, __ATOMIC_ACQUIRE);
  if (fn)
    fn(line);
  else
    fprintf(stderr, "%s\n", line);
}

/* ---- setup ------------------------------------------------------------------------- */
void lnc_ring_config_default(struct lnc_ring_config *cfg) {
  *cfg = (struct lnc_ring_config){.depth = 256, .block = 4096, .merge_gap = 0, .max_merged = 1u << 20, .pool_bytes = 16u << 20, .register_buffers = true, .force_pread = false};
}

static bool env_forces_pread(void) {
  const char *v = getenv("LNC_RING_PREAD");
  return v && *v && strcmp(v, "0") != 0;
}

int lnc_ring_new(const struct lnc_ring_config *cfg, struct lnc_ring **out,
                 struct lnc_error *err) {
  struct lnc_ring_config c;
  lnc_ring_config_default(&c);
  if (cfg) {
    c = *cfg;
    if (!c.depth) c.depth = 256;
    if (!c.block) c.block = 4096;
    if (!c.max_merged) c.max_merged = 1u << 20;
    if (!c.pool_bytes) c.pool_bytes = 16u << 20;
  }
  if (c.block < 512 || (c.block & (c.block - 1)))
    return lnc_errf(err, LNC_EINVAL, "ring: block %u is not a power of two >= 512", c.block);
  if (c.depth > 32768) return lnc_errf(err, LNC_EINVAL, "ring: depth %u is over 32768", c.depth);
  if (c.max_merged < c.block) c.max_merged = c.block;
  c.pool_bytes = (c.pool_bytes + c.block - 1) / c.block * c.block;

  struct lnc_ring *r = calloc(1, sizeof *r);
  if (!r) return lnc_errf(err, LNC_ENOMEM, "ring: out of memory");
  r->depth = c.depth;
  r->block = c.block;
  r->merge_gap = c.merge_gap;
  r->max_merged = c.max_merged;
  r->pool_bytes = c.pool_bytes;
  if (posix_memalign((void **)&r->pool, c.block, c.pool_bytes)) {
    free(r);
    return lnc_errf(err, LNC_ENOMEM, "ring: cannot allocate a %zu-byte buffer pool", c.pool_bytes);
  }
  if (!c.force_pread && !env_forces_pread()) {
    int rc = io_uring_queue_init(c.depth, &r->ring, 0);
    if (rc < 0) {
      log_once(&logged_uring, "lanced: io_uring unavailable (%s); using pread", strerror(-rc));
    } else {
      r->uring = true;
      r->q = &r->ring;
      if (r->depth > r->ring.sq.ring_entries) r->depth = r->ring.sq.ring_entries;
      /* One iovec for the whole pool: read_fixed then skips pinning pages per read. Failing
       * (RLIMIT_MEMLOCK, a pool over 1 GiB) only costs that saving. */
      struct iovec iov = {.iov_base = r->pool, .iov_len = r->pool_bytes};
      if (c.register_buffers && io_uring_register_buffers(&r->ring, &iov, 1) == 0) {
        r->fixed = true;
        r->fixed_bytes = r->pool_bytes;
      }
    }
  }
  *out = r;
  return 0;
}

/* A guest's pool only takes a request's small reads (larger ones get a buffer of their own):
 * every parked task holds one, so it is kept small. When a round's reads do not all fit, the
 * rest get buffers of their own too, up to GUEST_OVERFLOW_BYTES in flight (what a take
 * thread's pool holds), rather than waiting for the pool to drain: that wait put a device
 * round trip inside the round (a batch-100 take of lists reads ~0.5 MiB in one round, and
 * ran 15-20 % slower on the loop than on a take thread). */
#define GUEST_POOL_BYTES     (256u << 10)
#define GUEST_OVERFLOW_BYTES (16u << 20)
#define GUEST_DEPTH          64 /* a guest's reads in flight: a loop serves many guests at once */
/* Of a guest's pool only the start is registered (pinned: resident for the loop's life, and
 * counted against RLIMIT_MEMLOCK): a loop keeps up to 4096 tasks, and a single-row take's
 * read (a chunk of ~10 KiB) lands at the pool's start, as the pool restarts whenever nothing
 * is in flight. Reads further in are plain reads. */
#define GUEST_FIXED_BYTES (64u << 10)
_Static_assert(GUEST_FIXED_BYTES <= GUEST_POOL_BYTES, "the registered part is part of the pool");

int lnc_ring_new_guest(struct io_uring *host, int buf_slot, struct lnc_ring **out) {
  struct lnc_ring_config c;
  lnc_ring_config_default(&c);
  c.pool_bytes = GUEST_POOL_BYTES;
  c.depth = GUEST_DEPTH;
  c.register_buffers = false;
  c.force_pread = true; /* no io_uring of its own */
  struct lnc_ring *r;
  int rc = lnc_ring_new(&c, &r, NULL);
  if (rc) return rc;
  if (host) {
    r->uring = true;
    r->guest = true;
    r->q = host;
    /* The pool's start in the host's buffer table: a read into it then pins no pages (that
     * pinning and the unpinning after were ~2 % of a direct single-row request's CPU).
     * Failing (RLIMIT_MEMLOCK without CAP_IPC_LOCK) only costs that saving. */
    struct iovec iov = {.iov_base = r->pool, .iov_len = GUEST_FIXED_BYTES};
    if (buf_slot >= 0 && io_uring_register_buffers_update_tag(host, (unsigned)buf_slot, &iov, NULL, 1) == 1) {
      r->fixed = true;
      r->buf_index = buf_slot;
      r->fixed_bytes = GUEST_FIXED_BYTES;
    }
  }
  *out = r;
  return 0;
}

void lnc_ring_route(uint64_t ud, int res) {
  struct ext *e = (struct ext *)(uintptr_t)ud;
  struct lnc_ring *r = e->owner;
  LNC_ASSERT(r && r->guest && r->nlanded < r->ext_cap);
  r->landed_idx[r->nlanded] = (size_t)(e - r->ext);
  r->landed_res[r->nlanded++] = res;
  if (r->waiter && r->nlanded >= r->wake_at) {
    lnc_task_wake(r->waiter);
    r->waiter = NULL;
  }
}

void lnc_ring_free(struct lnc_ring *r) {
  if (!r) return;
  if (r->uring && !r->guest) io_uring_queue_exit(&r->ring); /* also unregisters the pool */
  free(r->pool);
  free(r->ord);
  free(r->ext);
  free(r->retry);
  free(r->landed_idx);
  free(r->landed_res);
  free(r);
}

bool lnc_ring_uses_uring(const struct lnc_ring *r) { return r->uring; }
bool lnc_ring_buffers_registered(const struct lnc_ring *r) { return r->fixed; }

/* ---- the calling thread's ring -------------------------------------------------------- */
static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static __thread struct lnc_ring *thread_ring;

static void thread_ring_free(void *p) { lnc_ring_free(p); }
static void thread_key_make(void) {
  if (pthread_key_create(&thread_key, thread_ring_free)) abort();
}

int lnc_ring_for_thread(const struct lnc_ring_config *cfg, struct lnc_ring **out,
                        struct lnc_error *err) {
  if (!thread_ring) {
    pthread_once(&thread_once, thread_key_make);
    int rc = lnc_ring_new(cfg, &thread_ring, err);
    if (rc) return rc;
    pthread_setspecific(thread_key, thread_ring);
  }
  *out = thread_ring;
  return 0;
}

/* ---- opening files ------------------------------------------------------------------ */
int lnc_ring_open(int dirfd, const char *path, bool want_direct, int *fd_out, bool *is_direct,
                  struct lnc_error *err) {
  int fd = -1;
  bool direct = false;
  if (want_direct) {
    fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (fd >= 0)
      direct = true;
    else if (errno == EINVAL)
      log_once(&logged_direct, "lanced: O_DIRECT not supported on %s's filesystem; using buffered reads", path);
  }
  if (fd < 0 && (!want_direct || errno == EINVAL)) fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return lnc_errf(err, e == ENOENT || e == ENOTDIR ? LNC_ENOTFOUND : LNC_EIO, "%s: cannot open: %s",
                    path, strerror(e));
  }
  *fd_out = fd;
  if (is_direct) *is_direct = direct;
  return 0;
}

/* ---- planning --------------------------------------------------------------------------- */
static uint64_t up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static int reserve(struct lnc_ring *r, size_t n, struct lnc_error *err) {
  if (n > r->ord_cap) {
    size_t cap = n < 64 ? 64 : n + n / 2;
    struct lnc_read **o = realloc(r->ord, cap * sizeof *o);
    if (!o) return lnc_errf(err, LNC_ENOMEM, "ring: out of memory for %zu reads", n);
    r->ord = o;
    struct ext *e = realloc(r->ext, cap * sizeof *e);
    if (!e) return lnc_errf(err, LNC_ENOMEM, "ring: out of memory for %zu reads", n);
    r->ext = e;
    size_t *s = realloc(r->retry, cap * sizeof *s);
    if (!s) return lnc_errf(err, LNC_ENOMEM, "ring: out of memory for %zu reads", n);
    r->retry = s;
    if (r->guest) {
      size_t *li = realloc(r->landed_idx, cap * sizeof *li);
      if (li) r->landed_idx = li;
      int *lr = li ? realloc(r->landed_res, cap * sizeof *lr) : NULL;
      if (!lr) return lnc_errf(err, LNC_ENOMEM, "ring: out of memory for %zu reads", n);
      r->landed_res = lr;
    }
    /* Only now that every array holds cap: after a failure above the next call must grow
     * them again, not plan n reads into the ones left short. */
    r->ord_cap = r->ext_cap = cap;
  }
  return 0;
}

/* Validates, sorts and merges reads into r->ext[0..*ne). a = alignment (block or 1). */
static int plan(struct lnc_ring *r, bool direct, uint64_t file_size, struct lnc_read *reads,
                size_t n, size_t *ne_out, struct lnc_error *err) {
  size_t m = 0, ne = 0;
  for (size_t i = 0; i < n; i++) {
    if (reads[i].off > file_size || reads[i].len > file_size - reads[i].off)
      return lnc_errf(err, LNC_ECORRUPT, "read of %llu bytes at %llu is past the end (%llu bytes)",
                      (unsigned long long)reads[i].len, (unsigned long long)reads[i].off,
                      (unsigned long long)file_size);
    if (reads[i].len) r->ord[m++] = &reads[i];
  }
  qsort(r->ord, m, sizeof *r->ord, lnc_read_by_off);
  const uint64_t a = direct ? r->block : 1;
  for (size_t i = 0; i < m;) {
    uint64_t start, end;
    size_t j = lnc_read_span(r->ord, i, m, a, r->merge_gap, r->max_merged, &start, &end);
    const struct lnc_read *rd = r->ord[i];
    bool straight = j == i + 1 && (!direct || (rd->off % a == 0 && rd->len % a == 0 &&
                                               (uintptr_t)rd->dst % a == 0));
    uint64_t len = up(end, a) - start;
    r->ext[ne++] = (struct ext){.off = start, .len = len, .need = end - start, .first = i, .last = j, .owner = r, .kind = straight ? BUF_DST : len > r->pool_bytes ? BUF_TEMP
                                                                                                                                                                   : BUF_POOL};
    i = j;
  }
  *ne_out = ne;
  return 0;
}

/* ---- execution -------------------------------------------------------------------------- */
/* Gives e its buffer. false = the pool is full while reads are in flight: wait, then retry. */
static bool assign(struct lnc_ring *r, struct ext *e, bool idle, bool direct) {
  if (e->kind == BUF_DST) {
    e->buf = r->ord[e->first]->dst;
  } else if (e->kind == BUF_TEMP) {
    void *p = NULL;
    if (posix_memalign(&p, r->block, e->len)) return false; /* reported by the caller */
    e->buf = p;
  } else {
    size_t at = (size_t)up(r->pool_used, direct ? r->block : BUFFERED_ALIGN);
    if (at > r->pool_bytes || e->len > r->pool_bytes - at) {
      if (!idle && r->guest && e->len <= GUEST_OVERFLOW_BYTES - r->overflow_used) {
        void *p = NULL;
        if (posix_memalign(&p, r->block, e->len)) return false; /* wait for the pool instead */
        e->kind = BUF_TEMP;
        e->overflow = true;
        e->buf = p;
        r->overflow_used += e->len;
        return true;
      }
      if (!idle) return false;
      at = 0; /* nothing in flight and everything earlier copied out: start over */
    }
    e->buf = r->pool + at;
    r->pool_used = at + e->len;
  }
  return true;
}

static void copy_out(struct lnc_ring *r, struct ext *e) {
  if (e->kind != BUF_DST)
    for (size_t k = e->first; k < e->last; k++) {
      struct lnc_read *rd = r->ord[k];
      memcpy(rd->dst, e->buf + (rd->off - e->off), rd->len);
    }
  if (e->kind == BUF_TEMP) {
    free(e->buf);
    e->buf = NULL;
    if (e->overflow) r->overflow_used -= e->len;
  }
}

/* Handles the result of one submitted read of extent idx: done, resubmit, or an error. */
static int complete(struct lnc_ring *r, size_t idx, int res, bool direct, size_t *nretry,
                    struct lnc_take_stats *stats, struct lnc_error *err) {
  struct ext *e = &r->ext[idx];
  if (res == -EAGAIN || res == -EINTR) {
    if (++e->tries > MAX_TRIES)
      return lnc_errf(err, LNC_EIO, "read of %llu bytes at %llu failed: %s (%d tries)",
                      (unsigned long long)e->len, (unsigned long long)e->off, strerror(-res), MAX_TRIES);
    r->retry[(*nretry)++] = idx;
    return 0;
  }
  if (res < 0)
    return lnc_errf(err, LNC_EIO, "read of %llu bytes at %llu failed: %s",
                    (unsigned long long)(e->len - e->done), (unsigned long long)(e->off + e->done),
                    strerror(-res));
  if (res == 0)
    return lnc_errf(err, LNC_EIO, "file ends at %llu, before the %llu bytes read at %llu (did it shrink?)",
                    (unsigned long long)(e->off + e->done), (unsigned long long)e->need,
                    (unsigned long long)e->off);
  if (stats) stats->bytes_read += (uint64_t)res;
  uint64_t before = e->done;
  e->done += (uint64_t)res;
  if (e->done >= e->need) {
    copy_out(r, e);
    return 0;
  }
  /* Short: resubmit the rest. O_DIRECT resumes on a block boundary; a partial block that
   * gains nothing after rounding is the end of the file (O_DIRECT only returns one there). */
  uint64_t reached = e->off + e->done;
  if (direct) e->done -= e->done % r->block;
  if (e->done == before)
    return lnc_errf(err, LNC_EIO, "file ends at %llu, before the %llu bytes read at %llu (did it shrink?)",
                    (unsigned long long)reached, (unsigned long long)e->need,
                    (unsigned long long)e->off);
  r->retry[(*nretry)++] = idx;
  return 0;
}

/* Hands the kernel the rest of extent idx (uring: preps an SQE; pread: reads and completes). */
static int issue(struct lnc_ring *r, int fd, size_t idx, bool direct, size_t *nretry,
                 struct lnc_take_stats *stats, struct lnc_error *err) {
  struct ext *e = &r->ext[idx];
  if (!e->issued) {
    e->issued = true;
    if (stats) stats->reads++;
  }
  uint64_t left = e->len - e->done, off = e->off + e->done;
  unsigned len = left > MAX_SUBMIT ? MAX_SUBMIT : (unsigned)left;
  uint8_t *dst = e->buf + e->done;
  if (r->uring) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(r->q);
    /* A guest shares the SQ with every task of its loop: when they have filled it, hand the
     * kernel what is there (the only submission a guest makes itself). */
    if (!sqe && r->guest && io_uring_submit(r->q) >= 0) sqe = io_uring_get_sqe(r->q);
    if (!sqe) return lnc_errf(err, LNC_EINTERNAL, "ring: submission queue unexpectedly full");
    if (r->fixed && e->kind == BUF_POOL && dst + len <= r->pool + r->fixed_bytes)
      io_uring_prep_read_fixed(sqe, fd, dst, len, off, r->buf_index);
    else
      io_uring_prep_read(sqe, fd, dst, len, off);
    /* Own rings find the extent by index; a loop routes a guest's completion by address. */
    if (r->guest)
      io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)e);
    else
      io_uring_sqe_set_data64(sqe, idx);
    return 0;
  }
  ssize_t got = pread(fd, dst, len, (off_t)off);
  return complete(r, idx, got < 0 ? -errno : (int)got, direct, nretry, stats, err);
}

/* A guest's wait: park the task until the loop has routed `want` completions to it, then
 * handle every one that arrived. Returns how many. */
static unsigned wait_guest(struct lnc_ring *r, size_t want, bool direct, size_t *nretry,
                           struct lnc_take_stats *stats, int *rc, struct lnc_error *err) {
  LNC_ASSERT(lnc_task_current() != NULL);
  if (r->nlanded < want) {
    r->wake_at = want;
    r->waiter = lnc_task_current();
    lnc_task_park();
  }
  size_t seen = r->nlanded;
  for (size_t k = 0; k < seen; k++) {
    int c = complete(r, r->landed_idx[k], r->landed_res[k], direct, nretry, stats, *rc ? NULL : err);
    if (c && !*rc) *rc = c;
  }
  r->nlanded = 0;
  return (unsigned)seen;
}

/* Handles every completion in r's CQ (a ring of its own); returns how many. The first error
 * goes into *rc and err (only while *rc is 0). */
static unsigned reap_cq(struct lnc_ring *r, bool direct, size_t *nretry, struct lnc_take_stats *stats, int *rc,
                        struct lnc_error *err) {
  unsigned head, seen = 0;
  struct io_uring_cqe *cqe;
  io_uring_for_each_cqe(&r->ring, head, cqe) {
    int c = complete(r, (size_t)io_uring_cqe_get_data64(cqe), cqe->res, direct, nretry, stats, *rc ? NULL : err);
    if (c && !*rc) *rc = c;
    seen++;
  }
  io_uring_cq_advance(&r->ring, seen);
  return seen;
}

/* Before a ring whose io_uring_enter keeps failing is closed: waits until every read the
 * kernel took has completed. Closing the ring does not wait for them, and they land in the
 * caller's buffers (BUF_DST), which lnc_ring_read_batch's contract lets it free on return, and
 * in the pool, which pread mode goes on using. Their completions need no io_uring_enter: on a
 * ring without DEFER_TASKRUN the kernel posts them as task work run when the thread returns
 * from any system call, so a short sleep between looks at the CQ lets them in. SQEs the kernel
 * never consumed are not in flight (io_uring_sq_ready counts them) and die with the ring.
 * This waits as long as the device takes, like execute's own wait. */
static void reap_without_enter(struct lnc_ring *r, unsigned inflight, bool direct,
                               struct lnc_take_stats *stats) {
  LNC_ASSERT(!r->guest);
  unsigned unsubmitted = io_uring_sq_ready(&r->ring);
  size_t nretry = 0; /* short reads are not resubmitted: the batch has failed already */
  int failed = 1;    /* the batch has failed already: errors of these reads are not reported */
  while (inflight > unsubmitted) {
    unsigned seen = reap_cq(r, direct, &nretry, stats, &failed, NULL);
    inflight -= seen;
    if (inflight > unsubmitted && seen == 0) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  }
}

/* The loop: fill the SQ (retries first, then new extents while the pool, or a guest's
 * overflow allowance, has room), submit,
 * wait (for one when more can go in, else for all in flight), reap. On error nothing new is
 * issued but everything in flight is reaped before returning. */
static int execute(struct lnc_ring *r, int fd, bool direct, size_t ne,
                   struct lnc_take_stats *stats, struct lnc_error *err) {
  size_t next = 0, nretry = 0;
  unsigned inflight = 0, hard_failures = 0;
  int rc = 0;
  r->pool_used = r->overflow_used = 0;
  for (;;) {
    bool stalled = false;
    while (!rc && inflight < r->depth) {
      size_t idx;
      if (nretry) {
        idx = r->retry[--nretry];
      } else if (next < ne) {
        struct ext *e = &r->ext[next];
        if (!assign(r, e, inflight == 0, direct)) {
          if (e->kind == BUF_TEMP)
            rc = lnc_errf(err, LNC_ENOMEM, "ring: cannot allocate %llu bytes for one read",
                          (unsigned long long)e->len);
          stalled = true;
          break;
        }
        idx = next++;
      } else {
        break;
      }
      rc = issue(r, fd, idx, direct, &nretry, stats, err);
      if (!rc && r->uring) inflight++;
    }
    if (inflight == 0) break; /* pread mode always ends here; uring when all is done */

    bool more = !rc && (nretry || next < ne);
    if (r->guest) {
      inflight -= wait_guest(r, more && !stalled ? 1 : inflight, direct, &nretry, stats, &rc, err);
      continue;
    }
    int s = io_uring_submit_and_wait(&r->ring, more && !stalled ? 1 : inflight);
    unsigned seen = reap_cq(r, direct, &nretry, stats, &rc, err);
    inflight -= seen;
    if (s < 0 && s != -EINTR && s != -EAGAIN && s != -EBUSY && s != -ETIME) {
      if (!rc) rc = lnc_errf(err, LNC_EIO, "io_uring_enter failed: %s", strerror(-s));
      if (seen == 0 && ++hard_failures >= 3) {
        /* The kernel takes nothing and returns nothing: leave io_uring for good, but only
         * once no read it took is still in flight (see reap_without_enter). */
        reap_without_enter(r, inflight, direct, stats);
        io_uring_queue_exit(&r->ring);
        r->uring = r->fixed = false;
        r->q = NULL;
        log_once(&logged_uring, "lanced: io_uring failed (%s); using pread", strerror(-s));
        break;
      }
    } else {
      hard_failures = 0;
    }
  }
  for (size_t i = 0; i < ne; i++) /* temporaries of extents that never completed */
    if (r->ext[i].kind == BUF_TEMP && r->ext[i].buf) free(r->ext[i].buf);
  return rc;
}

int lnc_ring_read_batch(struct lnc_ring *r, int fd, bool direct, uint64_t file_size,
                        struct lnc_read *reads, size_t n, struct lnc_take_stats *stats,
                        struct lnc_error *err) {
  if (n == 0) return 0;
  size_t ne = 0;
  int rc = reserve(r, n, err);
  if (!rc) rc = plan(r, direct, file_size, reads, n, &ne, err);
  if (!rc) rc = execute(r, fd, direct, ne, stats, err);
  return rc;
}
