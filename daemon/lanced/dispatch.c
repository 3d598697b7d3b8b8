/* Take threads. A request that reads Lance data waits on its network thread (its
 * connection reads nothing more meanwhile) and is queued here; a take thread — each with its own engine worker
 * and io_uring ring — routes it, keeps the answer in the request, and resumes the
 * connection, whose network thread then sends it. So a request waiting on the disk holds a
 * take thread, never the threads that accept and answer other requests. Requests for paths
 * below an object-store mount that cannot run on the loop (a first load, a description) have
 * threads of their own (object-store threads): a store that answers slowly or not at all holds
 * those, never the take threads local files need. */
#include "lanced.h"
#include "config.h"
#include "service.h"
#include "request.h"
#include "server.h"
#include "routes.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A queue and the threads that serve it. */
struct pool {
  pthread_mutex_t lock;
  pthread_cond_t more;
  struct ld_req *head, *tail;
  pthread_t *threads;
  int nthreads;
  bool stopping;
  int mount;         /* an object-store pool's mount index; -1 for the take threads */
  double max_wait_s; /* an object-store pool: how old a request may be when a thread takes it */
};
/* [0] take threads (LD_BLOCK_DISK), [1 + i] mount i's object-store threads (LD_BLOCK_STORE +
 * i). A pool without threads hands its requests to [0]. */
static struct pool pools[1 + LD_MAX_MOUNTS];
static int npools;
static uint64_t handoffs;
/* Test hook, off unless both variables are set: requests whose URL contains
 * LANCED_TEST_STALL_PATH wait LANCED_TEST_STALL_MS first (on their take thread, or parked
 * on a loop timeout when served by a loop task), standing in for a slow disk so a test can
 * show other requests are answered meanwhile. */
static const char *stall_path;
static long stall_ms;
/* Test hook, off unless set: LANCED_TEST_RESUME_DELAY_MS holds a take thread that long between
 * resuming a connection and waking its network thread, so a test can have that thread send the
 * answer (and free the request) first, as it may at any time under load. */
static long resume_delay_ms;
/* LANCED_TEST_STOP_DELAY_MS holds SIGTERM's stop that long once the drain is over, so a test
 * can send a request in between (ld_test_stop_delay, main.c). */
static long stop_delay_ms;

/* The test hooks' waits (a no-op for 0). */
static void sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* r's answer is the store's 503 e, with a Retry-After (the store may answer again soon). */
static void set_unavailable(struct ld_req *r, const struct ld_err *e) {
  ld_error_for(r, &r->out, e);
  r->out.retry_after = 1;
}

/* r answered: its connection resumed and its network thread woken to send the answer. Once
 * resumed, that thread may send the answer and free r at any moment (it is often awake for
 * other connections): nothing of r is touched after. delay_ms: a test's hold in between. */
static void resume_answered(struct ld_req *r, long delay_ms) {
  LNC_ASSERT(r->stage == LD_STAGE_TAKE_THREAD);
  struct ld_net *net = r->net;
  r->stage = LD_STAGE_ANSWERED;
  ld_req_resume(r); /* its network thread sends the answer */
  sleep_ms(delay_ms);
  ld_net_wake(net);
}

/* Whether r waited too long for a thread of an object-store pool, and then its answer (503).
 * A store that answers slowly or not at all holds each of its mount's threads for up to
 * s3_timeout_ms per call; requests queued behind them would each wait for their turn, the
 * last of n for n / store_threads timeouts (minutes, holding max_inflight slots all along),
 * to meet the same store. Once a request has waited as long as the store may take to answer
 * one call, it is answered at once. */
static bool too_late(const struct pool *p, struct ld_req *r) {
  double waited = lnc_now_s() - r->start;
  if (p->mount < 0 || waited < p->max_wait_s) return false;
  struct ld_err e;
  ld_errf(&e, LD_UNAVAILABLE,
          "%s: waited %.0f ms for a thread of mount '%s' (its %d object-store threads all wait on its "
          "store; s3_timeout_ms %.0f): the store answers slowly or not at all",
          r->url, waited * 1000, ld_service_mount_name(p->mount), p->nthreads, p->max_wait_s * 1000);
  set_unavailable(r, &e);
  return true;
}

static void *take_thread(void *arg) {
  struct pool *p = arg;
  lnc_worker *worker = NULL; /* this thread's, made for its first request (most stay idle) */
  for (;;) {
    pthread_mutex_lock(&p->lock);
    while (!p->head && !p->stopping) pthread_cond_wait(&p->more, &p->lock);
    struct ld_req *r = p->head;
    if (r) {
      p->head = r->next;
      if (!p->head) p->tail = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    if (!r) break;                    /* stopping and nothing left */
    ld_service_mount_leave(p->mount); /* out of the queue; the route enters again */
    sleep_ms(ld_test_stall_ms(r->url));
    struct ld_err e;
    if (!worker && ld_service_thread_start(NULL, &worker, &e)) {
      ld_log(LD_LOG_ERROR, "take thread: %s", e.message);
      set_unavailable(r, &e);
    } else if (!too_late(p, r)) {
      r->call = (struct ld_call){.worker = worker, .nowait = LNC_NOWAIT_OFF};
      double t0 = lnc_now_s();
      ld_route(r, &r->out);
      r->route_s = lnc_now_s() - t0;
    }
    resume_answered(r, resume_delay_ms);
  }
  ld_service_thread_stop(NULL, worker);
  return NULL;
}

void ld_test_stop_delay(void) { sleep_ms(stop_delay_ms); }

long ld_test_stall_ms(const char *url) {
  return stall_path && url && strstr(url, stall_path) ? stall_ms : 0;
}

static int pool_start(struct pool *p, int n, const char *what, int mount, uint64_t max_wait_ms) {
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->more, NULL);
  p->mount = mount;
  p->max_wait_s = (double)max_wait_ms / 1000.0;
  p->threads = calloc((size_t)(n ? n : 1), sizeof *p->threads);
  if (!p->threads) return -1;
  p->stopping = false;
  for (int i = 0; i < n; i++) {
    if (pthread_create(&p->threads[i], NULL, take_thread, p)) {
      ld_log(LD_LOG_ERROR, "could not start %s thread %d", what, i);
      return -1;
    }
    p->nthreads++;
  }
  return 0;
}

static void pool_stop(struct pool *p) {
  pthread_mutex_lock(&p->lock);
  p->stopping = true;
  pthread_cond_broadcast(&p->more);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
  free(p->threads);
  p->threads = NULL;
  p->nthreads = 0;
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->more);
}

int ld_dispatch_start(int n, int nmounts, int store, uint64_t store_wait_ms) {
  const char *sp = getenv("LANCED_TEST_STALL_PATH"), *sm = getenv("LANCED_TEST_STALL_MS");
  const char *rd = getenv("LANCED_TEST_RESUME_DELAY_MS"), *sd = getenv("LANCED_TEST_STOP_DELAY_MS");
  if (sd && *sd) {
    stop_delay_ms = strtol(sd, NULL, 10);
    ld_log(LD_LOG_WARN, "test hook: SIGTERM's stop waits %ld ms after the drain", stop_delay_ms);
  }
  if (rd && *rd) {
    resume_delay_ms = strtol(rd, NULL, 10);
    ld_log(LD_LOG_WARN, "test hook: take threads wait %ld ms between resuming a connection and waking its thread", resume_delay_ms);
  }
  if (sp && *sp && sm) {
    stall_path = sp;
    stall_ms = strtol(sm, NULL, 10);
    ld_log(LD_LOG_WARN, "test hook: requests for %s stall %ld ms", stall_path, stall_ms);
  }
  for (npools = 0; npools < 1 + nmounts && npools < 1 + LD_MAX_MOUNTS; npools++)
    if (pool_start(&pools[npools], npools ? store : n, npools ? "object-store" : "take", npools - 1, store_wait_ms)) {
      npools++;
      ld_dispatch_stop();
      return -1;
    }
  return 0;
}

uint64_t ld_dispatch_handoffs(void) { return __atomic_load_n(&handoffs, __ATOMIC_SEQ_CST); }

void ld_dispatch(struct ld_req *r, int block) {
  __atomic_add_fetch(&handoffs, 1, __ATOMIC_SEQ_CST);
  int i = block >= LD_BLOCK_STORE ? 1 + block - LD_BLOCK_STORE : 0;
  struct pool *p = &pools[i < npools && pools[i].nthreads ? i : 0];
  /* Queued for a mount's threads, a request counts against the mount's share as it does in
   * the engine: a dead store's first loads must not fill max_inflight waiting in the queue. */
  struct ld_err e;
  if (ld_service_mount_enter(p->mount, &e)) { /* answered here, as a take thread would answer it */
    set_unavailable(r, &e);
    return resume_answered(r, 0);
  }
  r->next = NULL;
  pthread_mutex_lock(&p->lock);
  if (p->tail)
    p->tail->next = r;
  else
    p->head = r;
  p->tail = r;
  pthread_mutex_unlock(&p->lock);
  /* Signalled after unlocking: a take thread woken while the lock is still held would only
   * block on it again, one more sleep and wake-up per request. */
  pthread_cond_signal(&p->more);
}

void ld_dispatch_stop(void) {
  for (int i = 0; i < npools; i++) pool_stop(&pools[i]);
  npools = 0;
}
