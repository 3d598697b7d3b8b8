/* Bump allocator: chained blocks that double in size, each allocation 16-byte aligned. */
#include "arena.h"
#include <stdlib.h>
#include <string.h>

#define FIRST_BLOCK (64 * 1024) /* the first malloc'd block; each next one doubles */

struct lnc_arena_block {
  struct lnc_arena_block *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

void lnc_arena_init(struct lnc_arena *a, size_t limit) {
  a->head = a->lent = NULL;
  a->total = 0;
  a->limit = limit;
}

void lnc_arena_init_buf(struct lnc_arena *a, size_t limit, void *buf, size_t size) {
  lnc_arena_init(a, limit);
  uintptr_t at = ((uintptr_t)buf + LNC_ARENA_BUF_ALIGN - 1) & ~(uintptr_t)(LNC_ARENA_BUF_ALIGN - 1);
  size_t skip = (size_t)(at - (uintptr_t)buf);
  if (!buf || size < skip + sizeof(struct lnc_arena_block) + 16) return;
  struct lnc_arena_block *b = (struct lnc_arena_block *)at;
  b->next = NULL;
  b->size = size - skip - sizeof *b;
  b->used = 0;
  a->head = a->lent = b;
}

void *lnc_arena_alloc(struct lnc_arena *a, size_t n) {
  /* A size from a wrapped product must fail, not round to a small block. */
  if (n > SIZE_MAX / 2) return NULL;
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  struct lnc_arena_block *b = a->head;
  if (b && b->size - b->used >= n) {
    void *p = b->data + b->used;
    b->used += n;
    return p;
  }
  size_t size = b && b != a->lent ? b->size * 2 : FIRST_BLOCK;
  if (size > 64 * 1024 * 1024) size = 64 * 1024 * 1024;
  if (size < n) size = n;
  if (a->limit && a->total + size > a->limit) return NULL;
  b = malloc(sizeof *b + size);
  if (!b) return NULL;
  b->size = size;
  b->used = n;
  b->next = a->head;
  a->head = b;
  a->total += sizeof *b + size;
  return b->data;
}

void *lnc_arena_calloc(struct lnc_arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = lnc_arena_alloc(a, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

/* Keeps the newest (largest) block, or the lent one when it is in the chain: the chain is
 * newest first, so the lent block, always the first made, is its tail. */
void lnc_arena_reset(struct lnc_arena *a) {
  struct lnc_arena_block *b = a->head;
  if (!b) return;
  if (a->lent && b != a->lent) {
    lnc_arena_free(a);
    a->head = a->lent;
    a->head->used = 0;
    return;
  }
  while (b->next) {
    struct lnc_arena_block *n = b->next;
    b->next = n->next;
    a->total -= sizeof *n + n->size;
    free(n);
  }
  b->used = 0;
}

void lnc_arena_free(struct lnc_arena *a) {
  struct lnc_arena_block *b = a->head;
  while (b) {
    struct lnc_arena_block *n = b->next;
    if (b != a->lent) free(b);
    b = n;
  }
  a->head = NULL;
  a->total = 0;
  if (a->lent) a->lent->next = NULL;
}
