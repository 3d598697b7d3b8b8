/* Read-only mappings of whole local files (io.h: struct lnc_filemap): how a take's large
 * values reach a socket from the page cache in one copy, the kernel's, instead of a pread
 * into a buffer, a copy into the answer's order and the socket's copy (issue 34). One
 * mapping per file, made on the first take that wants it and kept while the file is open
 * and while any answer names its bytes, so its pages fault in once, not once per request. */
#include "io.h"
#include "../util/error.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static struct lnc_filemap *map_new(const struct lnc_source *s) {
  if (s->s3 || s->fd < 0 || s->size == 0 || s->size > SIZE_MAX) return NULL;
  struct lnc_filemap *m = malloc(sizeof *m);
  if (!m) return NULL;
  void *p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
  m->fd = p == MAP_FAILED ? -1 : fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
  if (m->fd < 0) {
    if (p != MAP_FAILED) munmap(p, (size_t)s->size);
    free(m);
    return NULL;
  }
  m->base = p;
  m->len = s->size;
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
  free(m);
}

int lnc_filemap_read(const struct lnc_filemap *m, void *dst, uint64_t off, uint64_t len, struct lnc_error *err) {
  if (off > m->len || len > m->len - off)
    return lnc_errf(err, LNC_EINTERNAL, "a value at %llu past its file's end", (unsigned long long)off);
  return lnc_fd_pread(m->fd, "the values' file", dst, len, off, err);
}
