/* Read-only mappings of whole local files (io.h: struct lnc_filemap): how a take's large
 * values reach a socket from the page cache in one copy, the kernel's, instead of a pread
 * into a buffer, a copy into the answer's order and the socket's copy (issue 34). One
 * mapping per file, made on the first take that wants it and kept while the file is open
 * and while any answer names its bytes, so its pages fault in once, not once per request. */
#include "io.h"
#include "../util/assert.h"
#include "../util/clock.h"
#include "../util/error.h"
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Residency is kept per region of at least 1 MiB (256 pages: one cachestat walks them in a
 * few microseconds), larger for large files so the table stays within 64K entries (512 KiB
 * for a file of 64 GiB and more). */
#define REGION_SHIFT_MIN 20
#define REGIONS_MAX      (1u << 16)

static bool regions_init(struct lnc_filemap *m) {
  m->region_shift = REGION_SHIFT_MIN;
  while ((m->len >> m->region_shift) >= REGIONS_MAX) m->region_shift++;
  m->n_regions = ((m->len - 1) >> m->region_shift) + 1;
  m->resident_until = calloc(m->n_regions, sizeof *m->resident_until);
  return m->resident_until != NULL;
}

static struct lnc_filemap *map_new(const struct lnc_source *s) {
  if (s->s3 || s->fd < 0 || s->size == 0 || s->size > SIZE_MAX) return NULL;
  struct lnc_filemap *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->len = s->size;
  void *p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
  m->fd = p == MAP_FAILED ? -1 : fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
  if (m->fd < 0 || !regions_init(m)) {
    if (m->fd >= 0) close(m->fd);
    if (p != MAP_FAILED) munmap(p, (size_t)s->size);
    free(m->resident_until);
    free(m);
    return NULL;
  }
  m->base = p;
  m->refs = 1; /* the source's */
  return m;
}

struct lnc_filemap *lnc_source_map(struct lnc_source *s) {
  struct lnc_filemap *m = __atomic_load_n(&s->map, __ATOMIC_ACQUIRE);
  if (m) return m;
  struct lnc_filemap *mine = map_new(s), *none = NULL;
  if (!mine) return NULL;
  /* Two threads may map at once (the engine's files are shared): one mapping is kept. */
  if (__atomic_compare_exchange_n(&s->map, &none, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return mine;
  lnc_filemap_unref(mine);
  return none;
}

struct lnc_filemap *lnc_filemap_ref(struct lnc_filemap *m) {
  __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
  return m;
}

void lnc_filemap_unref(struct lnc_filemap *m) {
  if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  munmap((void *)m->base, (size_t)m->len);
  close(m->fd);
  free(m->resident_until);
  free(m);
}

int lnc_filemap_read(const struct lnc_filemap *m, void *dst, uint64_t off, uint64_t len, struct lnc_error *err) {
  if (off > m->len || len > m->len - off)
    return lnc_errf(err, LNC_EINTERNAL, "a value at %llu past its file's end", (unsigned long long)off);
  return lnc_fd_pread(m->fd, "the values' file", dst, len, off, err);
}

/* A region's entry: until when (coarse monotonic ns, its low bit cleared) the answer stands,
 * and in the low bit the answer, so a region seen partly out of the page cache is not asked
 * again for a second either (a file larger than the page cache, read at random, would
 * otherwise cost a cachestat per read on top of its preadv2). */
bool lnc_filemap_resident(struct lnc_filemap *m, uint64_t off, uint64_t len) {
  LNC_ASSERT(len && off <= m->len && len <= m->len - off);
  uint64_t now = lnc_coarse_ns();
  for (uint64_t r = off >> m->region_shift, last = (off + len - 1) >> m->region_shift; r <= last; r++) {
    uint64_t seen = __atomic_load_n(&m->resident_until[r], __ATOMIC_RELAXED);
    if (now >= (seen & ~1ull)) {
      uint64_t start = r << m->region_shift, end = start + (1ull << m->region_shift);
      if (end > m->len) end = m->len;
      seen = ((now + LNC_RESIDENT_TTL_NS) & ~1ull) | lnc_fd_resident(m->fd, start, end - start);
      __atomic_store_n(&m->resident_until[r], seen, __ATOMIC_RELAXED);
    }
    if (!(seen & 1)) return false;
  }
  return true;
}

/* ---- copies that survive a truncated file ---------------------------------------------
 * A load from a shared mapping past the file's current end raises SIGBUS. Files are
 * immutable in Lance, but one bad file (truncated by hand, a full disk's partial copy
 * replaced in place) must fail its own requests, not end the daemon. So a guarded copy
 * arms this thread's recovery point and the range it reads; the handler jumps back to it
 * when the fault is that copy's, and otherwise hands the signal to whatever handled SIGBUS
 * before (the default: the process ends as it would have). SA_NODEFER keeps SIGBUS unblocked
 * after the jump, so the copy arms with sigsetjmp(..., 0): no sigprocmask call per copy. */
struct copy_guard {
  sigjmp_buf *jump; /* set only while a guarded copy runs on this thread */
  const uint8_t *lo, *hi;
};
static _Thread_local struct copy_guard guard;
static struct sigaction bus_before;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static bool bus_ready;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  sigjmp_buf *j = guard.jump;
  if (j && si->si_code > 0 && (const uint8_t *)si->si_addr >= guard.lo && (const uint8_t *)si->si_addr < guard.hi) {
    guard.jump = NULL;
    siglongjmp(*j, 1);
  }
  if (bus_before.sa_flags & SA_SIGINFO) {
    bus_before.sa_sigaction(sig, si, uc);
  } else if (bus_before.sa_handler != SIG_DFL && bus_before.sa_handler != SIG_IGN) {
    bus_before.sa_handler(sig);
  } else if (bus_before.sa_handler == SIG_IGN && si->si_code <= 0) {
    /* Sent by kill() or the like (si_code <= 0), and ignored before: ignored still. */
  } else {
    /* The default action. For a fault, returning re-runs the load, which then meets it (a
     * fault's SIGBUS cannot be ignored: the load would fault for ever); a sent signal is
     * not repeated by returning, so it is raised again (SA_NODEFER: not blocked here). */
    signal(SIGBUS, SIG_DFL);
    if (si->si_code <= 0) raise(SIGBUS);
  }
}

static void bus_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  bus_ready = sigaction(SIGBUS, &sa, &bus_before) == 0;
}

bool lnc_filemap_copy(const struct lnc_filemap *m, void *dst, uint64_t off, uint64_t len) {
  LNC_ASSERT(off <= m->len && len <= m->len - off);
  pthread_once(&bus_once, bus_install);
  if (!bus_ready) return false;
  sigjmp_buf jump;
  if (sigsetjmp(jump, 0)) return false; /* the handler disarmed the guard */
  guard.lo = m->base + off;
  guard.hi = m->base + off + len;
  /* The compiler keeps the arming before the copy and the disarming after it: the handler
   * runs on this thread, so a signal fence is the ordering needed. */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  guard.jump = &jump;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  memcpy(dst, m->base + off, (size_t)len);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  guard.jump = NULL;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return true;
}
