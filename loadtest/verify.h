/* --verify: a pool of sampled requests whose response bodies are kept during the run and,
 * afterwards, compared byte for byte with `lancectl take` on the same file and ids, which
 * prints exactly the body the daemon must serve. */
#ifndef LD_VERIFY_H
#define LD_VERIFY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ld_verify_sample {
  uint64_t *ids;
  size_t n;
  bool completed; /* a response arrived */
  int status;
  char *body; /* owned */
  size_t body_len;
} ld_verify_sample;

typedef struct ld_verify_pool {
  size_t cap;
  unsigned claimed; /* atomically incremented by worker threads */
  ld_verify_sample *samples;
} ld_verify_pool;

typedef struct ld_verify_result {
  size_t sampled, compared, matched, mismatched, skipped; /* skipped: no 2xx response */
  size_t tool_failures;                                   /* lancectl could not be run or failed */
} ld_verify_result;

int ld_verify_pool_init(ld_verify_pool *p, size_t cap);
void ld_verify_pool_free(ld_verify_pool *p);
/* Claims a slot for a request with these ids; -1 when the pool is full. Thread-safe. */
int ld_verify_claim(ld_verify_pool *p, const uint64_t *ids, size_t n);
/* Records the answer (takes ownership of body, which may be NULL). */
void ld_verify_complete(ld_verify_pool *p, int slot, int status, char *body, size_t len);
/* Runs `lancectl take FILE --ids ... --format F [--columns C]` for each completed sample and
 * compares; prints each mismatch on stderr. */
void ld_verify_run(const ld_verify_pool *p, const char *lancectl, const char *file,
                   const char *format, const char *columns, ld_verify_result *out);

#endif
