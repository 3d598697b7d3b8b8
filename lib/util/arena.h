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
  size_t total;                 /* bytes obtained from malloc, for accounting */
  size_t limit;                 /* 0 = unlimited; otherwise allocations past it fail */
  struct lnc_arena_block *lent; /* the caller's first block (lnc_arena_init_buf): never freed */
};

void lnc_arena_init(struct lnc_arena *a, size_t limit);
/* The same, with the caller's buffer (on its stack, say) as the first block, so that a
 * request whose scratch fits there allocates nothing: a single-row take uses a few hundred
 * bytes, and a 64 KiB malloc and free per take was ~1-2 % of a direct request's CPU. The
 * buffer must outlive the arena; it counts towards neither total nor limit. A buffer too
 * small to hold a block header is ignored. */
#define LNC_ARENA_BUF_ALIGN 16
void lnc_arena_init_buf(struct lnc_arena *a, size_t limit, void *buf, size_t size);
/* 16-byte aligned, uninitialised; NULL on failure (size overflow, limit, malloc). */
void *lnc_arena_alloc(struct lnc_arena *a, size_t n);
void *lnc_arena_calloc(struct lnc_arena *a, size_t count, size_t size);
/* Frees every block but the first, keeping it for reuse. */
void lnc_arena_reset(struct lnc_arena *a);
void lnc_arena_free(struct lnc_arena *a);

#endif
