/* A bump allocator for per-request scratch: many small allocations, one free. Blocks are
 * chained; nothing is returned to the system until lnc_arena_reset/free. Not thread-safe:
 * an arena belongs to one request on one thread. */
#ifndef LNC_UTIL_ARENA_H
#define LNC_UTIL_ARENA_H
#include <stddef.h>
#include <stdint.h>

struct lnc_arena_block;
struct lnc_arena {
  struct lnc_arena_block *head;
  size_t total; /* bytes obtained from malloc, for accounting */
  size_t limit; /* 0 = unlimited; otherwise allocations past it fail */
};

void lnc_arena_init(struct lnc_arena *a, size_t limit);
/* 16-byte aligned, uninitialised; NULL on failure (size overflow, limit, malloc). */
void *lnc_arena_alloc(struct lnc_arena *a, size_t n);
void *lnc_arena_calloc(struct lnc_arena *a, size_t count, size_t size);
/* Frees every block but the first, keeping it for reuse. */
void lnc_arena_reset(struct lnc_arena *a);
void lnc_arena_free(struct lnc_arena *a);

#endif
