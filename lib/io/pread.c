/* Read dispatch: a worker's io_uring ring when the take has one, else pread. The pread path
 * sorts the batch by offset and merges reads that touch or overlap into one system call, so
 * a batch costs one read per contiguous region either way. */
#include "io.h"
#include "ring.h"
#include "loop.h"
#include "s3.h"
#include "../util/assert.h"
#include "../util/error.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <string.h>

int lnc_fd_pread(int fd, const char *name, void *dst, uint64_t len, uint64_t off, struct lnc_error *err) {
  uint8_t *d = dst;
  while (len) {
    /* At most 1 GiB a call: Linux reads at most 0x7ffff000 bytes per pread anyway. */
    ssize_t n = pread(fd, d, len > (1u << 30) ? (1u << 30) : len, (off_t)off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return lnc_errf(err, LNC_EIO, "%s: read failed: %s", name, strerror(errno));
    }
    if (n == 0) return lnc_errf(err, LNC_EIO, "%s: file shrank while reading", name);
    d += n;
    off += (uint64_t)n;
    len -= (uint64_t)n;
  }
  return 0;
}

int lnc_source_pread(const struct lnc_source *s, void *dst, uint64_t len, uint64_t off,
                     struct lnc_error *err) {
  if (off > s->size || len > s->size - off)
    return lnc_errf(err, LNC_ECORRUPT, "%s: read of %llu bytes at %llu is past the end (%llu bytes)",
                    s->name, (unsigned long long)len, (unsigned long long)off,
                    (unsigned long long)s->size);
  if (s->s3) {
    struct lnc_read r = {.off = off, .len = len, .dst = dst};
    return lnc_s3_source_read(s->s3, &r, 1, NULL, err);
  }
  return lnc_fd_pread(s->fd, s->name, dst, len, off, err);
}

/* cachestat(2): Debian 12's headers predate it, so its number and structs are spelled here
 * as the kernel's uapi (include/uapi/linux/mman.h) defines them. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct lnc_cachestat_range {
  uint64_t off, len;
};
struct lnc_cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

bool lnc_fd_resident(int fd, uint64_t off, uint64_t len) {
  if (fd < 0 || !len) return false;
  static long pagesize;
  if (!pagesize) pagesize = sysconf(_SC_PAGESIZE);
  uint64_t page = pagesize > 0 ? (uint64_t)pagesize : 4096, first = off / page, last = (off + len - 1) / page;
  struct lnc_cachestat_range r = {first * page, (last - first + 1) * page};
  struct lnc_cachestat cs;
  if (syscall(__NR_cachestat, fd, &r, &cs, 0) != 0) return false;
  return cs.nr_cache >= last - first + 1;
}

bool lnc_source_resident(const struct lnc_source *s, uint64_t off, uint64_t len) {
  return !s->s3 && lnc_fd_resident(s->fd, off, len);
}

int lnc_read_by_off(const void *a, const void *b) {
  const struct lnc_read *x = *(const struct lnc_read *const *)a, *y = *(const struct lnc_read *const *)b;
  return x->off < y->off ? -1 : x->off > y->off;
}

int lnc_io_read_batch(const struct lnc_source *f, struct lnc_read *reads, size_t n,
                      struct lnc_take_stats *stats, struct lnc_error *err) {
  if (n == 0) return 0;
  struct lnc_read **ord = malloc(n * sizeof *ord);
  if (!ord) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) ord[i] = &reads[i];
  qsort(ord, n, sizeof *ord, lnc_read_by_off);
  int rc = 0;
  for (size_t i = 0; i < n && !rc;) {
    uint64_t start, end; /* reads that touch or overlap: one pread */
    size_t j = lnc_read_span(ord, i, n, 1, 0, UINT64_MAX, &start, &end);
    if (j == i + 1) {
      rc = lnc_source_pread(f, ord[i]->dst, ord[i]->len, start, err);
    } else {
      uint8_t *tmp = malloc(end - start);
      if (!tmp) {
        rc = lnc_errf(err, LNC_ENOMEM, "out of memory");
        break;
      }
      rc = lnc_source_pread(f, tmp, end - start, start, err);
      for (size_t k = i; k < j && !rc; k++)
        memcpy(ord[k]->dst, tmp + (ord[k]->off - start), ord[k]->len);
      free(tmp);
    }
    if (stats) {
      stats->reads++;
      stats->bytes_read += end - start;
    }
    i = j;
  }
  free(ord);
  return rc;
}

/* Reads served only from the page cache: any read that would go to the device makes the
 * whole batch LNC_EAGAIN, to be redone where waiting is fine. Where the page cache was seen
 * holding a read's bytes, they are copied from the file's mapping (made here on first use);
 * the others go through preadv2 RWF_NOWAIT. Why the mapping: a training batch of 100 rows
 * made about 340 reads of 4 bytes to 3 KiB, and each preadv2 cost ~1 us of page-cache walk,
 * atime and descriptor work on top of its copy: a quarter of the daemon's time per request,
 * where copying the same bytes from a mapping whose page tables are filled costs a tenth of
 * that (docs/performance.md, "Reads from the mapping"). */
static int read_nowait(const struct lnc_source *f, struct lnc_read *reads, size_t n,
                       struct lnc_take_stats *stats, struct lnc_error *err) {
  /* The mapping is made once per source and kept with it; s->map is set atomically, the
   * rest of the source is not touched (lnc_source_map). */
  struct lnc_filemap *map = lnc_source_map((struct lnc_source *)f);
  LNC_ASSERT(!map || map->len == f->size);
  for (size_t i = 0; i < n; i++) {
    if (reads[i].off > f->size || reads[i].len > f->size - reads[i].off)
      return lnc_errf(err, LNC_ECORRUPT, "%s: read of %llu bytes at %llu is past the end", f->name,
                      (unsigned long long)reads[i].len, (unsigned long long)reads[i].off);
    uint64_t done = 0;
    /* A copy cut short by a SIGBUS (the file truncated) is read again below, which then
     * finds the file's real end. */
    if (map && reads[i].len && lnc_filemap_resident(map, reads[i].off, reads[i].len) &&
        lnc_filemap_copy(map, reads[i].dst, reads[i].off, reads[i].len))
      done = reads[i].len;
    while (done < reads[i].len) {
      struct iovec iov = {reads[i].dst + done, reads[i].len - done};
      ssize_t r = preadv2(f->fd, &iov, 1, (off_t)(reads[i].off + done), RWF_NOWAIT);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return lnc_errf(err, LNC_EAGAIN, "%s: data not in the page cache", f->name);
      done += (uint64_t)r;
    }
    if (stats) {
      stats->reads++;
      stats->bytes_read += reads[i].len;
    }
  }
  return 0;
}

int lnc_io_read(const struct lnc_io *io, const struct lnc_source *f, struct lnc_read *reads, size_t n,
                struct lnc_take_stats *stats, struct lnc_error *err) {
  if (f->s3) {
    /* An object's reads wait for the network: inside a loop's task the task parks meanwhile
     * (s3.c waits on the loop's io_uring); where nothing may wait or park (a nowait attempt
     * outside a task, a loop without io_uring) the take is redone on a thread. */
    if (!lnc_task_can_park() && ((io && io->nowait) || lnc_task_ring()))
      return lnc_errf(err, LNC_EAGAIN, "%s: object-store reads wait for the network", f->name);
    int rc = lnc_s3_source_read(f->s3, reads, n, stats, err);
    if (rc) lnc_err_prefix(err, "%s", f->name);
    return rc;
  }
  if (io && io->nowait == LNC_NOWAIT_NEVER) {
    if (f->fd_direct >= 0) return lnc_errf(err, LNC_EAGAIN, "%s: direct reads wait for the device", f->name);
    return read_nowait(f, reads, n, stats, err);
  }
  /* Inside a loop's task the reads go through the task's guest ring and the task parks
   * while they fly; elsewhere through the worker's own ring, waiting. */
  struct lnc_ring *ring = lnc_task_ring();
  if (!ring && io) ring = io->ring;
  if (!ring) return lnc_io_read_batch(f, reads, n, stats, err);
  bool direct = f->fd_direct >= 0;
  int rc = lnc_ring_read_batch(ring, direct ? f->fd_direct : f->fd, direct, f->size, reads, n,
                               stats, err);
  if (rc) lnc_err_prefix(err, "%s", f->name);
  return rc;
}
