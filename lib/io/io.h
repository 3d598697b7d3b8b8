/* The I/O seam of the reader: a batch of reads into caller-provided buffers. The take path
 * plans every read of a step first and submits them together, so the backend can coalesce
 * neighbours and issue them at once (pread here; the io_uring engine plugs in behind it). */
#ifndef LNC_IO_IO_H
#define LNC_IO_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lance.h"

struct lnc_file;

struct lnc_read {
  uint64_t off, len;
  uint8_t *dst; /* len bytes */
};

/* qsort comparator over struct lnc_read pointers: by offset. The backends sort a batch with
 * it before merging neighbours. */
int lnc_read_by_off(const void *a, const void *b);

/* One merged span of reads sorted by offset: from ord[i], the reads that join it, and the span
 * [*start, *end) they cover (start aligned down to `align`, end not aligned). A read joins
 * when it begins within `gap` bytes of the span's aligned end and the aligned span stays within
 * max_merged (a read inside the span always joins; a lone read may exceed max_merged). Returns
 * the index after the span's last read. The backends that merge (the ring; the object store
 * with align 1) plan with it, so both merge by one rule. */
static inline size_t lnc_read_span(struct lnc_read *const *ord, size_t i, size_t m, uint64_t align,
                                   uint64_t gap, uint64_t max_merged, uint64_t *start, uint64_t *end) {
  uint64_t s = ord[i]->off / align * align, e = ord[i]->off + ord[i]->len;
  size_t j = i + 1;
  for (; j < m; j++) {
    uint64_t top = (e + align - 1) / align * align, ns = ord[j]->off / align * align;
    uint64_t ne = ord[j]->off + ord[j]->len;
    if (ne < e) ne = e;
    uint64_t ntop = (ne + align - 1) / align * align;
    if (ns > top && ns - top > gap) break;
    if (ntop > top && ntop - s > max_merged) break;
    e = ne;
  }
  *start = s;
  *end = e;
  return j;
}

/* Performs every read (any order) with pread on f->fd, merging touching reads. Adds to
 * stats->reads/bytes_read when stats is given. */
int lnc_io_read_batch(struct lnc_file *f, struct lnc_read *reads, size_t n,
                      struct lnc_take_stats *stats, struct lnc_error *err);

struct lnc_ring;
/* How a take reads: through a worker's io_uring ring (O_DIRECT on f->fd_direct when the file
 * has one), or with pread when io is NULL or has no ring. */
struct lnc_io {
  struct lnc_ring *ring;
  int nowait; /* enum lnc_nowait: NEVER = buffered reads that would wait for the device
                    fail with LNC_EAGAIN; RING = blocking calls other than the ring's reads
                    (blob bytes) fail with LNC_EAGAIN */
};
int lnc_io_read(const struct lnc_io *io, struct lnc_file *f, struct lnc_read *reads, size_t n,
                struct lnc_take_stats *stats, struct lnc_error *err);

#endif
