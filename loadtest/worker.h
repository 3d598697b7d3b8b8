/* One load-generating thread: an epoll loop over its share of the connections, issuing
 * requests closed-loop (next request when the answer arrives) or open-loop at a fixed
 * rate, recording latency from the intended send time so stalls are not hidden. */
#ifndef LD_WORKER_H
#define LD_WORKER_H
#include "conn.h"
#include "hist.h"
#include "idgen.h"
#include "request.h"
#include "stats.h"
#include "verify.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct ld_worker_cfg {
  const struct sockaddr *addr;
  socklen_t addrlen;
  const ld_req_tmpl *tmpl;
  bool raw; /* --raw-path: fixed request, no ids */
  ld_ids_spec ids;
  uint64_t num_rows;
  size_t batch;
  uint64_t seed;
  unsigned index, nthreads;
  unsigned nconns;
  double rate;               /* this thread's requests/s; 0 = closed loop */
  uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
  uint64_t timeout_ns;
  uint64_t busy_poll_ns;  /* see wait_events() in worker.c */
  ld_verify_pool *verify; /* NULL unless --verify */
} ld_worker_cfg;

typedef struct ld_worker {
  ld_worker_cfg cfg;
  pthread_t tid;
  bool started;
  int setup_errno; /* non-zero when the thread could not start its loop */
  /* Guarded by mu: read by the progress reporter while the run goes on. */
  pthread_mutex_t mu;
  ld_stats stats;
  ld_hist *interval; /* latencies since the last progress tick */
  /* Owned by the thread until it is joined. */
  ld_hist *hist;  /* all latencies */
  int last_errno; /* last socket error, for the unreachable-server message */
} ld_worker;

int ld_worker_init(ld_worker *w, const ld_worker_cfg *cfg);
int ld_worker_start(ld_worker *w);
void ld_worker_join(ld_worker *w);
void ld_worker_destroy(ld_worker *w);
/* Copies the counters and moves the interval latencies into into (then clears them). */
void ld_worker_snapshot(ld_worker *w, ld_stats *stats, ld_hist *into);
uint64_t ld_now_ns(void);

#endif
