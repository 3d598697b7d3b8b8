/* The object-store page cache: fixed-size blocks of objects fetched from the store, kept in
 * memory under their own byte budget (LRU), so a take that needs bytes already fetched costs
 * no round trip. An object version is named by the id its source drew at open (a new ETag is a
 * new source, so a new id): a block can never be served for another object or another version,
 * with no key strings or hashes of them to compare. Blocks of a source that is gone are simply
 * never asked for again and age out.
 *
 * One mutex guards the table and the LRU; it is held while copying out a hit (a few KiB: the
 * copy is cheaper than reference counting every block). */
#include "s3.h"
#include "../util/assert.h"
#include "../util/list.h"
#include "../util/error.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct block {
  struct block *hnext;
  struct block *prev, *next; /* LRU: head = most recent */
  uint64_t id, index;
  uint32_t len;
  uint8_t data[];
};

struct lnc_s3_cache {
  pthread_mutex_t lock;
  struct block **table;
  size_t nbuckets;
  struct block *head, *tail;
  uint64_t budget, bytes;
  uint32_t block;
  atomic_uint_fast64_t next_id, hits, misses, inserts, evictions;
};

/* Blocks per bucket on average at a full budget: short chains, a small table. */
#define CACHE_LOAD 2

int lnc_s3_cache_new(uint64_t budget, uint32_t block, struct lnc_s3_cache **out, struct lnc_error *err) {
  *out = NULL;
  if (block < 4096 || block > (4u << 20) || (block & (block - 1)))
    return lnc_errf(err, LNC_EINVAL, "object cache block %u: a power of two from 4 KiB to 4 MiB", block);
  struct lnc_s3_cache *c = calloc(1, sizeof *c);
  if (!c) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  uint64_t blocks = budget / block + 1;
  c->nbuckets = 64;
  while (c->nbuckets * CACHE_LOAD < blocks && c->nbuckets < (1u << 24)) c->nbuckets *= 2;
  if (!(c->table = calloc(c->nbuckets, sizeof *c->table))) {
    free(c);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  pthread_mutex_init(&c->lock, NULL);
  c->budget = budget;
  c->block = block;
  atomic_store(&c->next_id, 1);
  *out = c;
  return 0;
}

void lnc_s3_cache_free(struct lnc_s3_cache *c) {
  if (!c) return;
  for (struct block *b = c->head, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  pthread_mutex_destroy(&c->lock);
  free(c->table);
  free(c);
}

uint32_t lnc_s3_cache_block(const struct lnc_s3_cache *c) { return c->block; }
uint64_t lnc_s3_cache_new_id(struct lnc_s3_cache *c) { return atomic_fetch_add(&c->next_id, 1); }

void lnc_s3_cache_stats(struct lnc_s3_cache *c, struct lnc_s3_cache_stats *st) {
  memset(st, 0, sizeof *st);
  if (!c) return;
  st->hits = atomic_load(&c->hits);
  st->misses = atomic_load(&c->misses);
  st->inserts = atomic_load(&c->inserts);
  st->evictions = atomic_load(&c->evictions);
  pthread_mutex_lock(&c->lock);
  st->bytes = c->bytes;
  pthread_mutex_unlock(&c->lock);
  st->budget = c->budget;
}

static size_t bucket(const struct lnc_s3_cache *c, uint64_t id, uint64_t index) {
  /* Fibonacci hashing of the pair: ids and indexes are small consecutive numbers. */
  return (size_t)(((id * 0x9e3779b97f4a7c15ull) ^ (index * 0xc2b2ae3d27d4eb4full)) >> 17) & (c->nbuckets - 1);
}

static struct block *find_locked(struct lnc_s3_cache *c, uint64_t id, uint64_t index) {
  LNC_ASSERT_LOCKED(&c->lock);
  struct block *b = c->table[bucket(c, id, index)];
  while (b && (b->id != id || b->index != index)) b = b->hnext;
  return b;
}

static void lru_unlink_locked(struct lnc_s3_cache *c, struct block *b) { LNC_LIST_UNLINK(c->head, c->tail, b); }

static void lru_front_locked(struct lnc_s3_cache *c, struct block *b) { LNC_LIST_PUSH_FRONT(c->head, c->tail, b); }

bool lnc_s3_cache_read(struct lnc_s3_cache *c, uint64_t id, uint64_t off, uint64_t len, uint8_t *dst) {
  if (!len) return true;
  uint64_t first = off / c->block, last = (off + len - 1) / c->block;
  pthread_mutex_lock(&c->lock);
  /* All blocks first, so a partial hit copies nothing and moves nothing. */
  for (uint64_t i = first; i <= last; i++) {
    struct block *b = find_locked(c, id, i);
    if (!b || (uint64_t)b->len < (i == last ? (off + len) - i * c->block : c->block)) {
      pthread_mutex_unlock(&c->lock);
      atomic_fetch_add(&c->misses, 1);
      return false;
    }
  }
  for (uint64_t i = first; i <= last; i++) {
    struct block *b = find_locked(c, id, i);
    uint64_t from = i == first ? off - i * c->block : 0;
    uint64_t to = i == last ? off + len - i * c->block : b->len;
    memcpy(dst, b->data + from, to - from);
    dst += to - from;
    lru_unlink_locked(c, b);
    lru_front_locked(c, b);
  }
  pthread_mutex_unlock(&c->lock);
  atomic_fetch_add(&c->hits, 1);
  return true;
}

static void evict_locked(struct lnc_s3_cache *c, uint64_t need) {
  while (c->tail && c->bytes + need > c->budget) {
    struct block *b = c->tail;
    lru_unlink_locked(c, b);
    struct block **pp = &c->table[bucket(c, b->id, b->index)];
    while (*pp != b) pp = &(*pp)->hnext;
    *pp = b->hnext;
    c->bytes -= b->len;
    atomic_fetch_add(&c->evictions, 1);
    free(b);
  }
}

void lnc_s3_cache_insert(struct lnc_s3_cache *c, uint64_t id, uint64_t index, const uint8_t *data,
                         uint32_t len) {
  LNC_ASSERT(len <= c->block);
  if (!len || len > c->budget) return;
  struct block *b = malloc(sizeof *b + len);
  if (!b) return; /* a cache: nothing is lost but a later hit */
  b->id = id;
  b->index = index;
  b->len = len;
  b->prev = b->next = NULL;
  memcpy(b->data, data, len);
  pthread_mutex_lock(&c->lock);
  struct block *old = find_locked(c, id, index);
  if (old) { /* fetched twice by concurrent takes: same bytes (same version), keep one */
    pthread_mutex_unlock(&c->lock);
    free(b);
    return;
  }
  evict_locked(c, len);
  size_t k = bucket(c, id, index);
  b->hnext = c->table[k];
  c->table[k] = b;
  lru_front_locked(c, b);
  c->bytes += len;
  pthread_mutex_unlock(&c->lock);
  atomic_fetch_add(&c->inserts, 1);
}
