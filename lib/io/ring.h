/* The io_uring read engine: one ring per worker thread executes a batch of struct lnc_read
 * (sorted, merged, aligned for O_DIRECT, submitted at once, completions reaped). Where
 * io_uring is unavailable the same plan runs through pread, so callers never care. */
#ifndef LNC_IO_RING_H
#define LNC_IO_RING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io.h"

struct lnc_ring; /* one per thread; not thread-safe (see lnc_ring_for_thread) */

struct lnc_ring_config {
  unsigned depth;        /* SQ entries and most reads in flight (0 = 256) */
  uint32_t block;        /* O_DIRECT alignment: device logical block size (0 = 4096; power of 2 >= 512) */
  uint64_t merge_gap;    /* merge reads whose gap is <= this many bytes (0 = only touching/overlapping) */
  uint64_t max_merged;   /* don't grow a merged read beyond this (0 = 1 MiB); one read alone may exceed it */
  size_t pool_bytes;     /* aligned bounce-buffer pool of this ring (0 = 16 MiB) */
  bool register_buffers; /* io_uring_register_buffers on the pool and read_fixed into it */
  bool force_pread;      /* never set up io_uring; also forced by env LNC_RING_PREAD=1 */
};

/* Fills *cfg with the defaults above (register_buffers on). */
void lnc_ring_config_default(struct lnc_ring_config *cfg);

/* Creates a ring (cfg NULL = defaults). Succeeds in pread mode when io_uring_queue_init fails
 * (seccomp, old kernel, ...), logging that once per process. The caller owns *out. */
int lnc_ring_new(const struct lnc_ring_config *cfg, struct lnc_ring **out, struct lnc_error *err);
void lnc_ring_free(struct lnc_ring *r); /* NULL is fine */

/* The calling thread's ring, created on first use from cfg (NULL = defaults; later calls
 * ignore cfg) and freed when the thread exits. Owned by the thread: don't free it. */
int lnc_ring_for_thread(const struct lnc_ring_config *cfg, struct lnc_ring **out,
                        struct lnc_error *err);

/* Executes every read of the batch against fd; returns once all are done (on error too: no
 * read is left in flight, so dst buffers may be freed). direct = fd was opened with O_DIRECT:
 * then every submitted read is aligned to cfg.block (offset down, end up; the file's tail
 * block comes back short) into pool buffers and the requested bytes copied into dst (a lone
 * read already aligned in offset, length and dst goes straight to dst). Reads are sorted,
 * merged (touching/overlapping or within merge_gap, up to max_merged), submitted at once
 * (io_uring_submit once per batch; more only when the batch exceeds the SQ or the pool),
 * short reads resubmitted for the remainder, -EAGAIN/-EINTR retried.
 * Errors: a read past file_size -> LNC_ECORRUPT before any I/O; the kernel refusing a read,
 * or the file ending early -> LNC_EIO with strerror. Messages don't name the file: the caller
 * prefixes them (lnc_err_prefix). Zero-length reads are skipped. reads[] is not modified.
 * stats (may be NULL): reads += reads issued after merging (resubmissions not counted),
 * bytes_read += bytes the kernel returned. */
int lnc_ring_read_batch(struct lnc_ring *r, int fd, bool direct, uint64_t file_size,
                        struct lnc_read *reads, size_t n, struct lnc_take_stats *stats,
                        struct lnc_error *err);

/* Opens path (relative to dirfd, or AT_FDCWD) read-only, close-on-exec: with O_DIRECT when
 * want_direct and the filesystem accepts it, else buffered, logging once per process
 * "lanced: O_DIRECT not supported on <path>'s filesystem; using buffered reads".
 * *is_direct says which. ENOENT -> LNC_ENOTFOUND, other failures LNC_EIO. */
int lnc_ring_open(int dirfd, const char *path, bool want_direct, int *fd_out, bool *is_direct,
                  struct lnc_error *err);

/* Where the once-per-process notices go (default: a line on stderr). fn NULL restores that. */
void lnc_ring_set_log(void (*fn)(const char *line));

/* Introspection for tests, benchmarks and the daemon's startup log. */
bool lnc_ring_uses_uring(const struct lnc_ring *r);         /* false = pread mode */
bool lnc_ring_buffers_registered(const struct lnc_ring *r); /* pool registered, read_fixed used */

#endif
