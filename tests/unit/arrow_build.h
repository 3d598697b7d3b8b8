/* Test helper (header only, for test_json.c, test_ipc.c and test_concat.c): builds
 * ArrowSchema/ArrowArray trees over static buffers with no-op releases; every node comes
 * from one tracked pool that tb_free_all() releases, so tests stay clean under ASan. */
#ifndef TESTS_ARROW_BUILD_H
#define TESTS_ARROW_BUILD_H
#include "arrow/abi.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TB_UNUSED __attribute__((unused))

static void *tb_pool[4096];
static int tb_npool;

static TB_UNUSED void *tb_alloc(size_t n) {
  void *p = calloc(1, n);
  if (!p || tb_npool >= 4096) abort();
  tb_pool[tb_npool++] = p;
  return p;
}

static TB_UNUSED void tb_free_all(void) {
  while (tb_npool > 0) free(tb_pool[--tb_npool]);
}

static void tb_release_schema(struct ArrowSchema *s) { s->release = NULL; }
static void tb_release_array(struct ArrowArray *a) { a->release = NULL; }

/* Nullable field `name` of format `fmt` with n children (struct ArrowSchema *...). */
static TB_UNUSED struct ArrowSchema *tb_schema_f(const char *fmt, const char *name, int64_t flags,
                                                 int n, ...) {
  struct ArrowSchema *s = tb_alloc(sizeof *s);
  s->format = fmt;
  s->name = name;
  s->flags = flags;
  s->n_children = n;
  s->children = tb_alloc(sizeof(void *) * (size_t)(n ? n : 1));
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) s->children[i] = va_arg(ap, struct ArrowSchema *);
  va_end(ap);
  s->release = tb_release_schema;
  return s;
}
#define tb_schema(fmt, name, ...) tb_schema_f(fmt, name, ARROW_FLAG_NULLABLE, __VA_ARGS__)

/* Array: length, null_count, offset, up to three buffers, n children. */
static TB_UNUSED struct ArrowArray *tb_array(int64_t len, int64_t nulls, int64_t off, int nbuf,
                                             const void *b0, const void *b1, const void *b2,
                                             int n, ...) {
  struct ArrowArray *a = tb_alloc(sizeof *a);
  a->length = len;
  a->null_count = nulls;
  a->offset = off;
  a->n_buffers = nbuf;
  a->buffers = tb_alloc(sizeof(void *) * 3);
  a->buffers[0] = b0;
  a->buffers[1] = b1;
  a->buffers[2] = b2;
  a->n_children = n;
  a->children = tb_alloc(sizeof(void *) * (size_t)(n ? n : 1));
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) a->children[i] = va_arg(ap, struct ArrowArray *);
  va_end(ap);
  a->release = tb_release_array;
  return a;
}

/* Fixed-width or bool column without nulls. */
static TB_UNUSED struct ArrowArray *tb_prim(int64_t len, const void *values) {
  return tb_array(len, 0, 0, 2, NULL, values, NULL, 0);
}
static TB_UNUSED struct ArrowArray *tb_primn(int64_t len, int64_t nulls, const void *validity,
                                             const void *values) {
  return tb_array(len, nulls, 0, 2, validity, values, NULL, 0);
}
/* Variable-length column (offsets + data). */
static TB_UNUSED struct ArrowArray *tb_var(int64_t len, int64_t nulls, const void *validity,
                                           const void *offsets, const void *data) {
  return tb_array(len, nulls, 0, 3, validity, offsets, data, 0);
}

/* A record batch: "+s" over the given columns (pairs are passed as parallel arrays). */
static TB_UNUSED void tb_batch(int n, struct ArrowSchema **cols, struct ArrowArray **arrs,
                               int64_t length, struct ArrowSchema **s_out,
                               struct ArrowArray **a_out) {
  struct ArrowSchema *s = tb_schema_f("+s", "", 0, 0);
  struct ArrowArray *a = tb_array(length, 0, 0, 1, NULL, NULL, NULL, 0);
  s->n_children = a->n_children = n;
  s->children = tb_alloc(sizeof(void *) * (size_t)(n ? n : 1));
  a->children = tb_alloc(sizeof(void *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    s->children[i] = cols[i];
    a->children[i] = arrs[i];
  }
  *s_out = s;
  *a_out = a;
}

#endif
