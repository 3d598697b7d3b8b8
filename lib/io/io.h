/* The I/O seam of the reader: a batch of reads into caller-provided buffers. The take path
 * plans every read of a step first and submits them together, so the backend can coalesce
 * neighbours and issue them at once (pread here; the io_uring engine plugs in behind it). */
#ifndef LNC_IO_IO_H
#define LNC_IO_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lance.h"

/* What the I/O floor reads from: a local file (its buffered descriptor, and an O_DIRECT one
 * where the engine opened it so) or an object in a store. format/ fills one for each data
 * file it opens and owns what it points to; nothing on this floor knows what the bytes mean.
 * Every read is checked against size before it is issued. */
struct lnc_s3_source;
struct lnc_filemap;
struct lnc_source {
  const char *name;         /* for messages */
  int fd;                   /* buffered reads (metadata, the pread path), or -1 for an object */
  int fd_direct;            /* O_DIRECT reads through the engine's rings, or -1 */
  uint64_t size;            /* bytes in the file or object */
  struct lnc_s3_source *s3; /* an object in a store instead of fd (fd and fd_direct are -1) */
  struct lnc_filemap *map;  /* the file mapped read-only, once a take left values in it */
};

/* A read-only shared mapping of a whole local file (filemap.c), counted: the source holds a
 * reference, and so does every array naming bytes in it (lnc_filevals), which may outlive the
 * source (a cache evicting the file while its answer is sent). Its bytes are read two ways:
 * by the kernel (a socket write copies straight from the page cache; a file truncated under
 * the mapping then fails that write with EFAULT), and by lnc_filemap_copy, a copy that a
 * SIGBUS (the same truncation, seen by a load of ours) fails instead of killing the process.
 * Nothing else of ours loads from it. */
struct lnc_filemap {
  int fd;
  const uint8_t *base;
  uint64_t len;
  int refs; /* atomic */
  /* Residency by region of 2^region_shift bytes (lnc_filemap_resident): until when (coarse
   * monotonic ns, low bit cleared) what was last seen of region r stands, and in the low bit
   * whether the page cache held all of it; 0 = not looked at. */
  unsigned region_shift;
  uint64_t n_regions;
  uint64_t *resident_until; /* n_regions entries, relaxed atomics */
};
/* How long a look at the page cache stands (cachestat walks every page it asks about: done
 * per take it was a tenth of a training batch's time). An answer gone stale costs a wait on
 * the device in the thread that trusted it, never a wrong byte. */
#define LNC_RESIDENT_TTL_NS 1000000000ull
/* The source's mapping (made on first use, shared by threads), or NULL where there is none
 * to make: an object, an empty file, mmap refused (the caller reads instead). No reference
 * is taken: the source's lives as long as it does. */
struct lnc_filemap *lnc_source_map(struct lnc_source *s);
/* Another reference (for an array naming its bytes). */
struct lnc_filemap *lnc_filemap_ref(struct lnc_filemap *m);
/* Drops a reference; the last unmaps and closes. NULL is fine. */
void lnc_filemap_unref(struct lnc_filemap *m);
/* Reads its bytes [off, off+len) into dst with pread on m->fd: LNC_EINTERNAL past the
 * mapping's end, LNC_EIO when the file came up short. */
int lnc_filemap_read(const struct lnc_filemap *m, void *dst, uint64_t off, uint64_t len, struct lnc_error *err);
/* Whether the page cache holds all of [off, off+len) (in range), as last seen within
 * LNC_RESIDENT_TTL_NS: one cachestat per region of the mapping per TTL, shared by threads. */
bool lnc_filemap_resident(struct lnc_filemap *m, uint64_t off, uint64_t len);
/* Copies [off, off+len) (in range) of the mapping into dst with loads of ours, guarded: a
 * SIGBUS on the way (the file truncated under the mapping) makes it return false, with dst
 * partly written, instead of killing the process. true when every byte was copied. Faults
 * in pages the page cache lacks (a wait on the device): callers ask lnc_filemap_resident
 * first where they must not wait. Installs the process's SIGBUS handler on first use; a
 * SIGBUS that is not a guarded copy's goes on to the handler that was there before. */
bool lnc_filemap_copy(const struct lnc_filemap *m, void *dst, uint64_t off, uint64_t len);

/* Whether the page cache holds every page of [off, off+len) of fd (cachestat(2), Linux 6.5);
 * false where that cannot be told (an older kernel). */
bool lnc_fd_resident(int fd, uint64_t off, uint64_t len);

/* Reads exactly len bytes at off of fd into dst (a pread loop; LNC_EIO, naming name, when a
 * read fails or the file ends first). */
int lnc_fd_pread(int fd, const char *name, void *dst, uint64_t len, uint64_t off, struct lnc_error *err);
/* Reads exactly len bytes at off into dst: lnc_fd_pread, or the object's ranged GET.
 * LNC_ECORRUPT for a range past the end, LNC_EIO when the read fails or comes up short. */
int lnc_source_pread(const struct lnc_source *s, void *dst, uint64_t len, uint64_t off,
                     struct lnc_error *err);

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

/* Whether the page cache holds all of [off, off+len) of a local file (cachestat(2), Linux
 * 6.5), so that sending it from the file will not wait for the device. false where that
 * cannot be told (an older kernel, an object store). */
bool lnc_source_resident(const struct lnc_source *s, uint64_t off, uint64_t len);
/* Performs every read (any order) with lnc_source_pread, merging touching reads. Adds to
 * stats->reads/bytes_read when stats is given. */
int lnc_io_read_batch(const struct lnc_source *s, struct lnc_read *reads, size_t n,
                      struct lnc_take_stats *stats, struct lnc_error *err);

struct lnc_ring;
/* How a take reads: through a worker's io_uring ring (O_DIRECT on s->fd_direct when the
 * source has one), or with pread when io is NULL or has no ring. */
struct lnc_io {
  struct lnc_ring *ring;
  int nowait; /* enum lnc_nowait: NEVER = buffered reads that would wait for the device
                    fail with LNC_EAGAIN; RING = blocking calls other than the ring's reads
                    (blob bytes) fail with LNC_EAGAIN */
};
int lnc_io_read(const struct lnc_io *io, const struct lnc_source *s, struct lnc_read *reads, size_t n,
                struct lnc_take_stats *stats, struct lnc_error *err);

#endif
