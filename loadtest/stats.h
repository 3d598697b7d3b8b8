/* Counters a worker thread accumulates and the reporter sums: responses by status class,
 * rows and bytes moved, and errors by kind, so a failed run says what failed. */
#ifndef LD_STATS_H
#define LD_STATS_H
#include <stdint.h>

typedef enum {
  LD_ERR_CONNECT, /* connect() refused / failed / timed out */
  LD_ERR_TIMEOUT, /* no complete response within --timeout */
  LD_ERR_HTTP_4XX,
  LD_ERR_HTTP_5XX,
  LD_ERR_PARSE,      /* malformed response, or bytes nobody asked for */
  LD_ERR_SHORT_BODY, /* connection closed before the announced body / headers ended */
  LD_ERR_IO,         /* read/write failure (reset) while a request was outstanding */
  LD_ERR_COUNT
} ld_err_kind;

static const char *const ld_err_names[LD_ERR_COUNT] = {
    "connect", "timeout", "http_4xx", "http_5xx", "parse", "short_body", "io"};

typedef struct ld_stats {
  uint64_t responses;       /* complete HTTP responses, any status */
  uint64_t status_class[6]; /* [1]..[5]: 1xx..5xx */
  uint64_t rows;            /* ids requested by 2xx-answered requests */
  uint64_t bytes_in;        /* response bytes, headers included */
  uint64_t body_bytes;
  uint64_t bytes_out;
  uint64_t posts; /* requests sent as POST */
  uint64_t errors[LD_ERR_COUNT];
  uint64_t connects;     /* successful TCP connects */
  uint64_t retries;      /* requests resent after the server dropped an idle keep-alive */
  uint64_t unsent;       /* open loop: scheduled but never sent by the end */
  uint64_t inflight_end; /* outstanding when the run ended */
} ld_stats;

static inline void ld_stats_add(ld_stats *d, const ld_stats *s) {
  const uint64_t *a = (const uint64_t *)s;
  uint64_t *b = (uint64_t *)d;
  for (unsigned i = 0; i < sizeof *s / sizeof(uint64_t); i++) b[i] += a[i];
}

static inline uint64_t ld_stats_errors(const ld_stats *s) {
  uint64_t n = 0;
  for (int i = 0; i < LD_ERR_COUNT; i++) n += s->errors[i];
  return n;
}

#endif
